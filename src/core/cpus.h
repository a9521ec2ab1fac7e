/* dfbuffer core: how many CPUs this process may run on (pure C, no
 * Python): the CPUs its affinity mask allows (sched_getaffinity), capped by
 * a CPU quota of its cgroup (v2 cpu.max, v1 cpu.cfs_quota_us), so that a
 * container limited to 2 CPUs on a 64-core host does not start 64 threads.
 */
#ifndef DFBUFFER_CORE_CPUS_H
#define DFBUFFER_CORE_CPUS_H

/* Parses the text of a cgroup v2 cpu.max file ("max 100000" or
   "<quota> <period>") into *cpus, the quota rounded up to whole CPUs (at
   least 1).  Returns 0 with *cpus set, 1 for no limit ("max"), -1 for
   text it cannot read.  Cannot fail otherwise. */
int
dfb_cpu_max_parse(const char *text, int *cpus);

/* The CPUs this process may use now (>= 1, at most 1024): its affinity
   mask's count where the platform has one (else the online CPUs), capped
   by its cgroup's CPU quota.  Reads /proc and /sys on Linux (no
   allocation beyond a stack buffer); cannot fail. */
int
dfb_usable_cpus(void);

#endif /* DFBUFFER_CORE_CPUS_H */
