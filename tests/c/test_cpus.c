/* C tests of src/core/cpus.c: cgroup cpu.max text gives whole CPUs
 * (rounded up), "max" no limit, malformed text is refused; the usable CPU
 * count is in [1, 1024]. */
#include "check.h"
#include "cpus.h"

int
main(void)
{
    int n = -7;
    CHECK(dfb_cpu_max_parse("max 100000\n", &n) == 1 && n == -7);
    CHECK(dfb_cpu_max_parse("200000 100000\n", &n) == 0 && n == 2);
    CHECK(dfb_cpu_max_parse("150000 100000", &n) == 0 && n == 2);
    CHECK(dfb_cpu_max_parse("50000 100000", &n) == 0 && n == 1);
    CHECK(dfb_cpu_max_parse("-1 100000", &n) == -1);
    CHECK(dfb_cpu_max_parse("100000", &n) == -1);
    CHECK(dfb_cpu_max_parse("100000 0", &n) == -1);
    CHECK(dfb_cpu_max_parse("", &n) == -1);
    CHECK(dfb_cpu_max_parse(NULL, &n) == -1);
    CHECK(dfb_cpu_max_parse("999999999999 1", &n) == 0 && n == 1024);
    const int cpus = dfb_usable_cpus();
    CHECK(cpus >= 1 && cpus <= 1024);
    return check_report("cpus");
}
