/*
 * podports.c - whether a pod's own processes listen on a TCP port: what
 * port-forward checks before it connects to 127.0.0.1:PORT.
 *
 * Pods share the host's network (docs/runtime.md), so "the pod's port"
 * is any port of the machine: without this check a developer could
 * port-forward through a pod of its own to another namespace's pod, or to
 * anything else listening on the machine's loopback. A pod's processes
 * are found from its container id ("flexq://BOOT/PID/START"): the PID,
 * when its start time still matches, and every process in its pid
 * namespace (or, for a pod without one, its process group); a port is
 * the pod's when a listening socket on it (/proc/net/tcp and tcp6, the
 * host's network namespace) is one of their open descriptors.
 *
 * What it does not do: UDP, or ports of pods run elsewhere (Slurm
 * executor): those are not the machine's. It reads /proc, a few
 * milliseconds on the loop, once per forwarded connection.
 */
#include "api/podports.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flexq/alloc.h"

#define MAX_INODES 4096

/* Field 22 (start time) and field 5 (process group) of /proc/PID/stat. */
static bool proc_stat(long pid, unsigned long long *start, long *pgrp)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the command may hold spaces */
    if (!p)
        return false;
    /* after ") ": state(3) ppid(4) pgrp(5) ... starttime(22) */
    char state;
    long ppid, pg;
    if (sscanf(p + 2, "%c %ld %ld", &state, &ppid, &pg) != 3)
        return false;
    int field = 3;
    for (char *q = p + 2; *q && field < 22; q++)
        if (*q == ' ')
            field++, p = q;
    if (field != 22 || sscanf(p + 1, "%llu", start) != 1)
        return false;
    *pgrp = pg;
    return true;
}

static bool same_link(const char *a, const char *b)
{
    char x[128], y[128];
    ssize_t n = readlink(a, x, sizeof(x) - 1);
    ssize_t m = readlink(b, y, sizeof(y) - 1);
    return n > 0 && m > 0 && n == m && !memcmp(x, y, (size_t)n);
}

/* Adds the socket inodes among pid's descriptors to set. */
static void add_sockets(long pid, unsigned long *set, size_t *n)
{
    char dir[64];
    snprintf(dir, sizeof(dir), "/proc/%ld/fd", pid);
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)) && *n < MAX_INODES) {
        char path[64 + 256 + 2], target[64];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        ssize_t len = readlink(path, target, sizeof(target) - 1);
        if (len <= 0)
            continue;
        target[len] = '\0';
        unsigned long ino;
        if (sscanf(target, "socket:[%lu]", &ino) == 1)
            set[(*n)++] = ino;
    }
    if (d)
        closedir(d);
}

/* Whether a listening socket on port in table (/proc/net/tcp or tcp6) has
 * an inode of set. */
static bool listens(const char *table, int port, const unsigned long *set,
                    size_t n)
{
    FILE *f = fopen(table, "re");
    char line[512];
    bool hit = false;
    while (f && !hit && fgets(line, sizeof(line), f)) {
        char local[64];
        unsigned st;
        unsigned long ino;
        /* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
        if (sscanf(line, "%*s %63s %*s %x %*s %*s %*s %*s %*s %lu", local, &st,
                   &ino) != 3 ||
            st != 0x0A /* TCP_LISTEN */)
            continue;
        const char *colon = strrchr(local, ':');
        if (!colon || strtol(colon + 1, NULL, 16) != port)
            continue;
        for (size_t i = 0; i < n && !hit; i++)
            hit = set[i] == ino;
    }
    if (f)
        fclose(f);
    return hit;
}

bool fq_podports_listens(const char *container_id, int port)
{
    long pid = 0;
    unsigned long long start = 0;
    if (!container_id || strncmp(container_id, "flexq://", 8) ||
        sscanf(strchr(container_id + 8, '/') ? strchr(container_id + 8, '/') :
                                               "",
               "/%ld/%llu", &pid, &start) != 2 ||
        pid <= 1)
        return false;
    unsigned long long now_start;
    long pgrp;
    if (!proc_stat(pid, &now_start, &pgrp) || now_start != start)
        return false; /* gone, or the pid is another process's now */
    char podns[64], selfns[] = "/proc/self/ns/pid";
    snprintf(podns, sizeof(podns), "/proc/%ld/ns/pid", pid);
    bool own_ns = !same_link(podns, selfns);
    unsigned long *set = fq_xcalloc(MAX_INODES, sizeof(*set));
    size_t n = 0;
    DIR *d = opendir("/proc");
    struct dirent *de;
    while (d && (de = readdir(d))) {
        char *end;
        long p = strtol(de->d_name, &end, 10);
        if (*end || p <= 0)
            continue;
        bool member = p == pid;
        if (!member && own_ns) {
            char ns[64];
            snprintf(ns, sizeof(ns), "/proc/%ld/ns/pid", p);
            member = same_link(ns, podns);
        } else if (!member) {
            unsigned long long s;
            long g;
            member = proc_stat(p, &s, &g) && g == pid;
        }
        if (member)
            add_sockets(p, set, &n);
    }
    if (d)
        closedir(d);
    bool hit = n && (listens("/proc/net/tcp", port, set, n) ||
                     listens("/proc/net/tcp6", port, set, n));
    free(set);
    return hit;
}
