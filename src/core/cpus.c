/* dfbuffer core: the CPUs this process may run on (see cpus.h). */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#endif
#include "cpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(_WIN32)
#include <windows.h>
#else
#include <unistd.h>
#endif
#if defined(__linux__)
#include <sched.h>
#endif

int
dfb_cpu_max_parse(const char *text, int *cpus)
{
    char *end;
    if (text == NULL) {
        return -1;
    }
    while (*text == ' ') {
        text++;
    }
    if (strncmp(text, "max", 3) == 0) {
        return 1;
    }
    const long long quota = strtoll(text, &end, 10);
    if (end == text || quota <= 0) {
        return -1;
    }
    text = end;
    const long long period = strtoll(text, &end, 10);
    if (end == text || period <= 0) {
        return -1;
    }
    const long long n = quota / period + (quota % period != 0);
    *cpus = n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
    return 0;
}

#if defined(__linux__)
/* Reads at most `size` - 1 bytes of file `path` into `buf` (NUL-ended).
   Returns 0, or -1 when it cannot be read. */
static int
read_small(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "re");
    if (f == NULL) {
        return -1;
    }
    const size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    return n > 0 ? 0 : -1;
}

/* The CPU quota of this process's cgroup in whole CPUs (its own and its
   ancestors' cgroup v2 cpu.max, or v1 cpu.cfs_quota_us / period), or 0
   for none found.  Cannot fail. */
static int
cgroup_quota(void)
{
    char line[4096], path[4096 + 64], text[128];
    FILE *f = fopen("/proc/self/cgroup", "re");
    int best = 0;
    if (f == NULL) {
        return 0;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (c2 == NULL) {
            continue;
        }
        const int v2 = c1[1] == ':'; /* "0::/path" */
        *c1 = '\0';
        *c2 = '\0';
        const char *controllers = c1 + 1;
        char *dir = c2 + 1;
        int v1_cpu = 0;
        if (!v2) {
            /* "N:cpu,cpuacct:/path": the cpu controller, alone or listed */
            char list[256];
            snprintf(list, sizeof(list), ",%s,", controllers);
            v1_cpu = strstr(list, ",cpu,") != NULL;
        }
        if (!v2 && !v1_cpu) {
            continue;
        }
        /* this cgroup and each ancestor up to the root: the tightest */
        for (;;) {
            int n = 0;
            if (v2) {
                snprintf(path, sizeof(path), "/sys/fs/cgroup%s/cpu.max",
                         strcmp(dir, "/") == 0 ? "" : dir);
                if (read_small(path, text, sizeof(text)) == 0 &&
                    dfb_cpu_max_parse(text, &n) != 0) {
                    n = 0;
                }
            }
            else {
                char q[64], p[64];
                const char *d = strcmp(dir, "/") == 0 ? "" : dir;
                snprintf(path, sizeof(path),
                         "/sys/fs/cgroup/cpu%s/cpu.cfs_quota_us", d);
                if (read_small(path, q, sizeof(q)) == 0) {
                    snprintf(path, sizeof(path),
                             "/sys/fs/cgroup/cpu%s/cpu.cfs_period_us", d);
                    if (read_small(path, p, sizeof(p)) == 0) {
                        q[strcspn(q, "\n")] = '\0';
                        snprintf(text, sizeof(text), "%s %s", q, p);
                        if (dfb_cpu_max_parse(text, &n) != 0) {
                            n = 0; /* -1: no limit */
                        }
                    }
                }
            }
            if (n > 0 && (best == 0 || n < best)) {
                best = n;
            }
            char *slash = strrchr(dir, '/');
            if (slash == NULL || strcmp(dir, "/") == 0) {
                break;
            }
            if (slash == dir) {
                dir[1] = '\0'; /* the root next */
            }
            else {
                *slash = '\0';
            }
        }
    }
    fclose(f);
    return best;
}
#endif

int
dfb_usable_cpus(void)
{
    int n = 0;
#if defined(_WIN32)
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    n = si.dwNumberOfProcessors > 0 ? (int)si.dwNumberOfProcessors : 1;
#else
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        n = CPU_COUNT(&set);
    }
#endif
    if (n <= 0) {
        const long online = sysconf(_SC_NPROCESSORS_ONLN);
        n = online > 0 ? (online > 1024 ? 1024 : (int)online) : 1;
    }
#if defined(__linux__)
    const int quota = cgroup_quota();
    if (quota > 0 && quota < n) {
        n = quota;
    }
#endif
#endif
    return n < 1 ? 1 : n > 1024 ? 1024 : n;
}
