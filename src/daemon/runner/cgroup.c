/*
 * cgroup.c - a cgroup per pod for killing its whole process tree (see
 * cgroup.h). What it does not do: limits (process.c writes memory.max and
 * cpu.max, or the v1 files), or anything on a machine without a writable
 * cgroup2 mount (the runner then kills the process group only, and says
 * so at start).
 */
#define _GNU_SOURCE
#include "runner/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flexq/alloc.h"

static char *cgroup2_mount(void)
{
    FILE *f = fopen("/proc/mounts", "re");
    if (!f)
        return NULL;
    char line[1024];
    char *found = NULL;
    while (!found && fgets(line, sizeof(line), f)) {
        char dev[256], dir[512], type[64];
        if (sscanf(line, "%255s %511s %63s", dev, dir, type) == 3 &&
            !strcmp(type, "cgroup2"))
            found = fq_xstrdup(dir);
    }
    fclose(f);
    return found;
}

/* "0::/path" of /proc/self/cgroup, or "/". Owned. */
static char *own_v2_path(void)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    char line[1024];
    char *found = NULL;
    while (f && !found && fgets(line, sizeof(line), f))
        if (!strncmp(line, "0::", 3)) {
            line[strcspn(line, "\n")] = '\0';
            found = fq_xstrdup(line + 3);
        }
    if (f)
        fclose(f);
    return found ? found : fq_xstrdup("/");
}

char *fq_cgroup_v2_root(char **why)
{
    *why = NULL;
    char *mnt = cgroup2_mount();
    if (!mnt) {
        *why = fq_xstrdup("no cgroup2 mount");
        return NULL;
    }
    char *own = own_v2_path();
    char *base = fq_xasprintf("%s%s", mnt, strcmp(own, "/") ? own : "");
    free(own);
    struct stat st;
    if (stat(base, &st) != 0 || !S_ISDIR(st.st_mode)) {
        free(base);
        base = fq_xstrdup(mnt);
    }
    free(mnt);
    fq_cgroup_clean_orphans(base);
    char *dir = fq_xasprintf("%s/flexq-%ld", base, (long)getpid());
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        *why = fq_xasprintf("cannot create %s: %s", dir, strerror(errno));
        free(dir);
        dir = NULL;
    }
    free(base);
    return dir;
}

/* Reads cgroup.procs of `dir` into pids (at most max); -1 if unreadable. */
static int read_procs(const char *dir, pid_t *pids, int max)
{
    char *path = fq_xasprintf("%s/cgroup.procs", dir);
    FILE *f = fopen(path, "re");
    free(path);
    if (!f)
        return -1;
    int n = 0;
    long v;
    while (n < max && fscanf(f, "%ld", &v) == 1)
        pids[n++] = (pid_t)v;
    fclose(f);
    return n;
}

int fq_cgroup_signal(const char *dir, int sig)
{
    if (!dir)
        return 0;
    pid_t *pids = fq_xmalloc(sizeof(pid_t) * 4096);
    int n = read_procs(dir, pids, 4096), sent = 0;
    for (int i = 0; i < n; i++)
        sent += kill(pids[i], sig) == 0;
    free(pids);
    return sent;
}

void fq_cgroup_kill(const char *dir)
{
    if (!dir)
        return;
    char *path = fq_xasprintf("%s/cgroup.kill", dir);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    free(path);
    if (fd >= 0) {
        ssize_t w = write(fd, "1", 1);
        close(fd);
        if (w == 1)
            return;
    }
    /* no cgroup.kill (before 5.14, or a v1 directory): kill what is there
     * until nothing new appears (a fork racing the loop is caught by the
     * next round) */
    for (int round = 0; round < 16; round++)
        if (fq_cgroup_signal(dir, SIGKILL) == 0)
            break;
}

int fq_cgroup_reap(const char *dir)
{
    if (!dir)
        return 0;
    fq_cgroup_kill(dir);
    if (rmdir(dir) == 0 || errno == ENOENT)
        return 0;
    return -1;
}

/* Removes `dir` and the directories below it, deepest first, killing
 * what is in each. */
static void reap_tree(const char *dir, int depth)
{
    if (depth > 8)
        return;
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (de->d_type == DT_DIR && de->d_name[0] != '.') {
            char *sub = fq_xasprintf("%s/%s", dir, de->d_name);
            reap_tree(sub, depth + 1);
            free(sub);
        }
    if (d)
        closedir(d);
    fq_cgroup_kill(dir);
    rmdir(dir);
}

void fq_cgroup_clean_orphans(const char *base)
{
    DIR *d = opendir(base);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (strncmp(de->d_name, "flexq-", 6))
            continue;
        char *end;
        long pid = strtol(de->d_name + 6, &end, 10);
        if (*end || pid <= 0 || pid == (long)getpid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno == EPERM)
            continue; /* that flexqd still runs */
        char *dir = fq_xasprintf("%s/%s", base, de->d_name);
        reap_tree(dir, 0);
        free(dir);
    }
    if (d)
        closedir(d);
}
