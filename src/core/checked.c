/* dfbuffer core: checked size arithmetic (see checked.h). */
#include "checked.h"

#if defined(_WIN32)
#include <windows.h>
#elif defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

int
dfb_checked_shape(const int64_t *dims, int64_t n, int64_t *out)
{
    int64_t p = 1;
    for (int64_t i = 0; i < n; i++) {
        if (dims[i] < 0) {
            return -1;
        }
        if (dims[i] == 0) {
            p = 0; /* an empty extent empties the shape, whatever follows */
        }
    }
    for (int64_t i = 0; p != 0 && i < n; i++) {
        if (dfb_checked_mul(p, dims[i], &p) < 0) {
            return -1; /* stop: p is not used once it overflowed */
        }
    }
    *out = p;
    return 0;
}

int64_t
dfb_alloc_limit(void)
{
#if defined(_WIN32)
    MEMORYSTATUSEX m;
    m.dwLength = sizeof(m);
    if (GlobalMemoryStatusEx(&m) && m.ullTotalPhys > 0 &&
        m.ullTotalPhys < (uint64_t)PTRDIFF_MAX) {
        return (int64_t)m.ullTotalPhys;
    }
#elif defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGESIZE);
    int64_t bytes;
    if (pages > 0 && page > 0 && dfb_checked_mul(pages, page, &bytes) == 0) {
        return bytes;
    }
#endif
    return PTRDIFF_MAX;
}
