/* dfbuffer core: the error convention (see core.h). */
#include "core.h"

#include <stdarg.h>
#include <stdio.h>

dfb_code
dfb_error_set(dfb_error *err, dfb_code code, const char *fmt, ...)
{
    if (err != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof(err->message), fmt, ap);
        va_end(ap);
    }
    return code;
}
