/*
 * cgroup.h - one cgroup per pod so that a pod's whole process tree can be
 * killed, children that called setsid included (process.c's kill path).
 *
 * The runner keeps memory / cpu limits where it finds them (process.c's
 * probe_cgroups); this module adds the cgroup v2 directory every pod's
 * processes join, on a pure v2 machine the same tree as the limits, on a
 * hybrid one (v1 controllers plus an empty cgroup2 mount, often
 * /sys/fs/cgroup/unified) that mount. Killing writes "1" to cgroup.kill
 * (Linux 5.14+) or SIGKILLs every pid in cgroup.procs until it is empty.
 *
 * Directories are named <base>/flexq-<flexqd pid>/<pod leaf>; at start a
 * runner removes the flexq-<pid> directories of flexqd processes that no
 * longer run (killing what is left in them): a flexqd killed with -9
 * leaves them behind.
 */
#ifndef FLEXQ_CGROUP_H
#define FLEXQ_CGROUP_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * Makes <cgroup2 mount><own cgroup>/flexq-<pid> (removing orphans of
 * earlier flexqd processes beside it first). Returns the directory
 * (owned), or NULL with `why` (owned) saying why not: no cgroup2 mount,
 * not writable.
 */
char *fq_cgroup_v2_root(char **why);

/* Removes flexq-<pid> directories under `base` whose flexqd is gone,
 * after killing every process left in them. */
void fq_cgroup_clean_orphans(const char *base);

/* Sends `sig` to every process in `dir` (cgroup.procs). Returns how many
 * were signalled. */
int fq_cgroup_signal(const char *dir, int sig);

/* Kills everything in `dir` (cgroup.kill, else SIGKILL to each pid). */
void fq_cgroup_kill(const char *dir);

/* Kills and removes `dir`. Returns 0, or -1 when it still has processes
 * that have not finished dying (rmdir says EBUSY): call again later. */
int fq_cgroup_reap(const char *dir);

#endif
