/* dfbuffer: bit-packed validity and bool unpacking (stub: issue 3). */
#include "dfbuffer/common.h"
#include "dfbuffer/convert.h"
