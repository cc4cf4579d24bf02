/*
 * mounts.c - a pod's own mount, UTS, IPC and pid namespaces, made by
 * flexqd itself when it runs as root (the unshare mode): the plan is made
 * in the parent (nsplan_init), the child only makes syscalls (ns_setup).
 * Every pod gets its own /tmp, /var/tmp, /dev/shm and /run/lock (empty
 * tmpfs, as a container's own) and System V IPC and message queues: all
 * pods run as one user, so shared ones would let one namespace's pod
 * read, replace or plant another's files and segments.
 *
 * What it does not do: choose the mode (probe.c) or the mounts a pod
 * asks for (podspec.c).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <linux/fs.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "flexq/objstore.h"
#include "flexq/quantity.h"
#include "runner/cgroup.h"
#include "runner/pod_init.h"

extern char **environ;
#include "runner/internal.h"

void rn_nsplan_release(struct nsplan *pl)
{
    for (size_t i = 0; i < pl->ntop; i++) {
        free(pl->top[i].name);
        free(pl->top[i].target);
    }
    free(pl->top);
    free(pl->root);
    free(pl->hosts);
    memset(pl, 0, sizeof(*pl));
}

void rn_nsplan_init(struct nsplan *pl, const char *poddir,
                    const struct mount *m, size_t nm, const char *hostname,
                    bool in_place)
{
    memset(pl, 0, sizeof(*pl));
    pl->m = m;
    pl->nm = nm;
    pl->hostname = hostname;
    pl->in_place = in_place;
    char *hosts = fq_xasprintf("%s/hosts", poddir);
    if (rn_path_exists(hosts) && rn_path_exists("/etc/hosts"))
        pl->hosts = hosts;
    else
        free(hosts);
    if (in_place) /* the host's tree: no root of its own to build */
        return;
    pl->root = fq_xasprintf("%s/root", poddir);
    rn_mkdir_p(pl->root, 0755);
    size_t cap = 0;
    DIR *d = opendir("/");
    struct dirent *de;
    while (d && (de = readdir(d))) {
        const char *n = de->d_name;
        if (!strcmp(n, ".") || !strcmp(n, ".."))
            continue;
        char *full = fq_xasprintf("/%s", n);
        struct stat st;
        if (lstat(full, &st) == 0) {
            FQ_GROW(pl->top, cap, pl->ntop + 1);
            struct topent *t = &pl->top[pl->ntop++];
            t->name = fq_xstrdup(n);
            t->target = NULL;
            t->file = S_ISREG(st.st_mode);
            if (S_ISLNK(st.st_mode)) {
                char target[PATH_MAX];
                ssize_t tl = readlink(full, target, sizeof(target) - 1);
                target[tl > 0 ? tl : 0] = '\0';
                t->target = fq_xstrdup(target);
            }
        }
        free(full);
    }
    if (d)
        closedir(d);
}

/* mkdir -p for the child (no allocation). */
static int mkdirs(const char *path)
{
    char tmp[PATH_MAX];
    size_t n = strlen(path);
    if (n >= sizeof(tmp))
        return -1;
    memcpy(tmp, path, n + 1);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(tmp, 0755);
            *p = '/';
        }
    return mkdir(tmp, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

/* A mount point of the right kind (directory or file) at `dst`. */
static int make_point(const char *dst, bool file)
{
    if (!file)
        return mkdirs(dst);
    char parent[PATH_MAX];
    snprintf(parent, sizeof(parent), "%s", dst);
    char *sl = strrchr(parent, '/');
    if (sl && sl != parent) {
        *sl = '\0';
        if (mkdirs(parent) != 0)
            return -1;
    }
    int fd = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

static int bind_at(const char *src, const char *dst, bool ro)
{
    struct stat st;
    if (stat(src, &st) != 0)
        return -1;
    if (make_point(dst, !S_ISDIR(st.st_mode)) != 0)
        return -1;
    if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) != 0)
        return -1;
    if (ro && mount(NULL, dst, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL))
        return -1;
    return 0;
}

/* The most volume sources held open across the private /tmp mounts; a
 * pod with more binds the rest by path (the host's /tmp then hidden). */
#define NS_MAX_SRC_FDS 64

/* An O_PATH descriptor of `path` (or -1), opened before a private /tmp
 * or the data directory's tmpfs may hide the path itself (the data
 * directory, a volume's source, /etc/hosts' source may be there). */
static int hold(const char *path)
{
    return path ? open(path, O_PATH | O_CLOEXEC) : -1;
}

/* The name to bind a held source by: "/proc/self/fd/N" in buf, or `path`
 * when it could not be held. */
static const char *held(int fd, const char *path, char *buf, size_t size)
{
    if (fd < 0)
        return path;
    snprintf(buf, size, "/proc/self/fd/%d", fd);
    return buf;
}

/* Empty tmpfs over root's world-writable directories, /tmp, /var/tmp,
 * /dev/shm and /run/lock (where each is a directory: a symlink such as
 * /var/lock -> /run/lock is left to its target), and the IPC namespace's
 * own message queues over /dev/mqueue where the host mounts them. */
static int private_tmp(const char *root)
{
    static const char *const dirs[] = {"/tmp", "/var/tmp", "/dev/shm",
                                       "/run/lock", "/dev/mqueue"};
    char p[PATH_MAX];
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        struct stat st;
        snprintf(p, sizeof(p), "%s%s", root, dirs[i]);
        if (lstat(p, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        bool mq = !strcmp(dirs[i], "/dev/mqueue");
        if (mount(mq ? "mqueue" : "tmpfs", p, mq ? "mqueue" : "tmpfs",
                  MS_NOSUID | MS_NODEV | (mq ? MS_NOEXEC : 0),
                  mq ? NULL : "mode=1777"))
            return -1;
    }
    return 0;
}

/* Returns 0, or -1 with errno set and *step naming what failed. */
int rn_ns_setup(const struct nsplan *pl, const char **step)
{
    char p[PATH_MAX];
    *step = "unshare";
    if (unshare(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC) != 0)
        return -1;
    *step = "making / private";
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return -1;
    /* in place: the host's tree as the root (every mount target exists,
     * nothing to create); else a tmpfs root with the host's top-level
     * entries bound in */
    const char *root = pl->in_place ? "" : pl->root;
    *step = "tmpfs root";
    if (!pl->in_place && mount("tmpfs", pl->root, "tmpfs", 0, "mode=0755"))
        return -1;
    *step = "binding the host's top-level directories";
    for (size_t i = 0; !pl->in_place && i < pl->ntop; i++) {
        const struct topent *t = &pl->top[i];
        if (pl->new_proc && !strcmp(t->name, "proc"))
            continue;
        snprintf(p, sizeof(p), "%s/%s", pl->root, t->name);
        char src[PATH_MAX];
        snprintf(src, sizeof(src), "/%s", t->name);
        if (t->target) {
            if (symlink(t->target, p) != 0)
                return -1;
        } else if (bind_at(src, p, false) != 0) {
            return -1;
        }
    }
    if (pl->new_proc) {
        *step = "mounting /proc of the pod's pid namespace";
        snprintf(p, sizeof(p), "%s/proc", root);
        if (mkdirs(p) != 0 ||
            mount("proc", p, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
            return -1;
    }
    /* Everything bound from the host from here on is held by a
     * descriptor first: the private /tmp (and the data directory's
     * tmpfs) may cover its path. */
    int srcfd[NS_MAX_SRC_FDS];
    size_t nsrc = pl->nm < NS_MAX_SRC_FDS ? pl->nm : NS_MAX_SRC_FDS;
    *step = "a hostPath that changed after it was checked";
    for (size_t i = 0; i < nsrc; i++)
        srcfd[i] = -1;
    for (size_t i = 0; i < pl->nm; i++) {
        if (pl->m[i].rewrite)
            continue;
        if (i >= nsrc && pl->m[i].fd >= 0) {
            errno = E2BIG;
            return -1;
        }
        if (i >= nsrc)
            continue;
        srcfd[i] = hold(pl->m[i].src);
        /* A hostPath must still be what flexqd checked (the parent's
         * descriptor: a mount of another namespace cannot be bound from,
         * so the child opens it again and compares). */
        struct stat a, b;
        if (pl->m[i].fd >= 0 &&
            (srcfd[i] < 0 || fstat(srcfd[i], &a) != 0 ||
             fstat(pl->m[i].fd, &b) != 0 || a.st_dev != b.st_dev ||
             a.st_ino != b.st_ino)) {
            if (srcfd[i] >= 0)
                errno = ESTALE;
            return -1;
        }
    }
    int podfd = hold(pl->data_dir ? pl->poddir : NULL);
    int nsfd = hold(pl->data_dir ? pl->nsdir : NULL);
    int hostsfd = hold(pl->hosts);
    char fdname[32];
    *step = "a private /tmp, /var/tmp, /dev/shm and /run/lock";
    if (private_tmp(root) != 0)
        return -1;
    *step = "binding a volume";
    for (size_t i = 0; i < pl->nm; i++) {
        if (pl->m[i].rewrite)
            continue;
        snprintf(p, sizeof(p), "%s%s", root, pl->m[i].dst);
        const char *src = held(i < nsrc ? srcfd[i] : -1, pl->m[i].src, fdname,
                               sizeof(fdname));
        if (bind_at(src, p, pl->m[i].ro) != 0)
            return -1;
    }
    for (size_t i = 0; i < nsrc; i++)
        if (srcfd[i] >= 0)
            close(srcfd[i]);
    if (pl->data_dir) {
        /* flexqd's data directory is an empty tmpfs but for the pod's own
         * directory: no database, no other pod's log or volumes. The
         * tmpfs covers the sources too: they are bound through the
         * descriptors opened above. */
        *step = "hiding the data directory";
        snprintf(p, sizeof(p), "%s%s", root, pl->data_dir);
        if (mkdirs(p) != 0 ||
            mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755"))
            return -1;
        if (pl->nsdir) {
            snprintf(p, sizeof(p), "%s%s", root, pl->nsdir);
            if (bind_at(held(nsfd, pl->nsdir, fdname, sizeof(fdname)), p,
                        true) != 0)
                return -1;
        }
        snprintf(p, sizeof(p), "%s%s", root, pl->poddir);
        if (bind_at(held(podfd, pl->poddir, fdname, sizeof(fdname)), p,
                    false) != 0)
            return -1;
    }
    if (podfd >= 0)
        close(podfd);
    if (nsfd >= 0)
        close(nsfd);
    for (size_t i = 0; pl->hide && pl->hide[i]; i++) {
        *step = "hiding a file";
        struct stat st;
        snprintf(p, sizeof(p), "%s%s", root, pl->hide[i]);
        if (lstat(p, &st) == 0 && S_ISREG(st.st_mode) &&
            mount("/dev/null", p, NULL, MS_BIND, NULL) != 0)
            return -1;
    }
    if (pl->hosts) {
        *step = "binding /etc/hosts";
        snprintf(p, sizeof(p), "%s/etc/hosts", root);
        if (mount(held(hostsfd, pl->hosts, fdname, sizeof(fdname)), p, NULL,
                  MS_BIND, NULL) != 0)
            return -1;
    }
    if (hostsfd >= 0)
        close(hostsfd);
    *step = "pivot_root";
    if (!pl->in_place &&
        (chdir(root) != 0 || syscall(SYS_pivot_root, ".", ".") != 0 ||
         umount2(".", MNT_DETACH) != 0 || chdir("/") != 0))
        return -1;
    *step = "sethostname";
    if (pl->hostname && sethostname(pl->hostname, strlen(pl->hostname)))
        return -1;
    return 0;
}
