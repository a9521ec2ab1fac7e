/* dfbuffer: UTF-8 + offsets to Python str objects (stub: issue 3). */
#include "dfbuffer/common.h"
#include "dfbuffer/convert.h"
