/* dfbuffer: interchange columns to NumPy arrays (stub: issue 3). */
#include "dfbuffer/common.h"
#include "dfbuffer/buffer.h"
#include "dfbuffer/convert.h"

PyMethodDef dfb_convert_methods[] = {
    {NULL},
};
