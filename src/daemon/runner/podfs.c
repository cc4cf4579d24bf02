/*
 * podfs.c - the runner's small helpers: NULL-terminated string vectors
 * (argv, env), env lists that keep their order when a value is replaced,
 * ${VAR} expansion as the kubelet does it, and the pod's files (its
 * directory, small files written and read with O_NOFOLLOW, PATH lookup).
 *
 * What it does not do: decide what a pod gets (podspec.c) or start it.
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

/* ------------------------------------------------------------------ */
/* small string vectors                                                 */

void rn_strv_push(struct strv *s, char *owned)
{
    FQ_GROW(s->v, s->cap, s->n + 2);
    s->v[s->n++] = owned;
    s->v[s->n] = NULL;
}

void rn_strv_pushs(struct strv *s, const char *str)
{
    rn_strv_push(s, fq_xstrdup(str));
}

void rn_strv_release(struct strv *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

/* env as "K=V" strings; set replaces in place so that order is kept. */
const char *rn_env_get(const struct strv *env, const char *k)
{
    size_t kl = strlen(k);
    for (size_t i = 0; i < env->n; i++)
        if (!strncmp(env->v[i], k, kl) && env->v[i][kl] == '=')
            return env->v[i] + kl + 1;
    return NULL;
}

void rn_env_set(struct strv *env, const char *k, const char *v)
{
    size_t kl = strlen(k), vl = strlen(v);
    char *kv = fq_xmalloc(kl + vl + 2); /* "k=v", about 14 a pod */
    memcpy(kv, k, kl);
    kv[kl] = '=';
    memcpy(kv + kl + 1, v, vl + 1);
    for (size_t i = 0; i < env->n; i++)
        if (!strncmp(env->v[i], k, kl) && env->v[i][kl] == '=') {
            free(env->v[i]);
            env->v[i] = kv;
            return;
        }
    rn_strv_push(env, kv);
}

/*
 * Kubernetes' $(VAR) expansion: $(NAME) is replaced by NAME's value when
 * defined in env, kept literally otherwise; $$ is a literal $. Returns
 * owned.
 */
char *rn_expand(const char *s, const struct strv *env)
{
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_puts(&b, "");
    for (const char *p = s; *p;) {
        if (p[0] == '$' && p[1] == '$') {
            fq_buf_putc(&b, '$');
            p += 2;
            continue;
        }
        if (p[0] == '$' && p[1] == '(') {
            const char *end = strchr(p + 2, ')');
            if (end) {
                char *name = fq_xstrndup(p + 2, (size_t)(end - p - 2));
                const char *v = rn_env_get(env, name);
                free(name);
                if (v) {
                    fq_buf_puts(&b, v);
                    p = end + 1;
                    continue;
                }
            }
        }
        fq_buf_putc(&b, *p++);
    }
    return fq_buf_detach(&b);
}

/* ------------------------------------------------------------------ */
/* files                                                                */

static int rm_entry(const char *path, const struct stat *st, int flag,
                    struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

void rn_rm_tree(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int rn_mkdir_p(const char *path, mode_t mode)
{
    /* the common case: only the last component is new */
    if (mkdir(path, mode) == 0 || errno == EEXIST)
        return 0;
    if (errno != ENOENT)
        return -1;
    char tmp[PATH_MAX];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof(tmp))
        return -1;
    memcpy(tmp, path, n + 1);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, mode) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(tmp, mode) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

/*
 * Marks a namespace's pods directory as the top of a hierarchy for ext4's
 * Orlov allocator (chattr +T), so that each pod directory, and the log
 * inside it, is placed in a block group of its own choosing instead of
 * the parent's. Why it matters: ext4 without a journal skips inodes
 * deleted in the last minutes one by one when it allocates, and the
 * parent's group is where every earlier pod (and every other temporary
 * file under the same parent) was deleted. On the development machines
 * that made a pod's directory and log cost about 1.2 ms; with the flag
 * 0.13 ms. Other file systems refuse the ioctl, which is fine.
 */
void rn_set_topdir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    int flags = 0;
    if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && !(flags & FS_TOPDIR_FL)) {
        flags |= FS_TOPDIR_FL;
        if (ioctl(fd, FS_IOC_SETFLAGS, &flags) != 0) {
            /* not ext2/3/4, or not ours: the default placement */
        }
    }
    close(fd);
}

/* <data>/pods/<ns>/<name>: one mkdir when the namespace's directory
 * exists; otherwise that is made first, marked with set_topdir. */
int rn_make_pod_dir(const char *dir)
{
    if (mkdir(dir, 0755) == 0 || errno == EEXIST)
        return 0;
    if (errno != ENOENT)
        return -1;
    char *parent = fq_xstrdup(dir);
    char *slash = strrchr(parent, '/');
    int rc = -1;
    if (slash && slash != parent) {
        *slash = '\0';
        if (rn_mkdir_p(parent, 0755) == 0) {
            rn_set_topdir(parent);
            rc = mkdir(dir, 0755) == 0 || errno == EEXIST ? 0 : -1;
        }
    }
    free(parent);
    return rc;
}

/*
 * Writes a whole file. Readers of these files (the training helper, the
 * log endpoint) retry what they cannot parse, so the file is written in
 * place: one create instead of a create and a rename per pod, which is
 * what the file system charges most for when jobs are short.
 */
int rn_write_file(const char *path, const char *data, size_t len)
{
    /* never through a link or into a fifo a pod left in its directory */
    int fd =
        open(path,
             O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
             0644);
    int rc = -1;
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
    }
    if (fd < 0)
        goto out;
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            close(fd);
            goto out;
        }
        off += (size_t)w;
    }
    rc = close(fd);
out:
    return rc;
}

int rn_write_small(const char *path, const char *s)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t w = write(fd, s, strlen(s));
    close(fd);
    return w == (ssize_t)strlen(s) ? 0 : -1;
}

/* Reads up to size-1 bytes of a small file into buf; -1 on error. */
ssize_t rn_read_small(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return n;
}

bool rn_path_exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

/* Searches `path` (colon list) for an executable `cmd`; returns owned or
 * NULL with *why set ("not found" or "permission denied"). */
char *rn_which(const char *cmd, const char *path, int *why)
{
    *why = ENOENT;
    char *dirs = fq_xstrdup(path ? path : DEFAULT_PATH);
    char *save = NULL;
    for (char *d = strtok_r(dirs, ":", &save); d;
         d = strtok_r(NULL, ":", &save)) {
        char *full = fq_xasprintf("%s/%s", *d ? d : ".", cmd);
        struct stat st;
        if (stat(full, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(full, X_OK) == 0) {
                free(dirs);
                return full;
            }
            *why = EACCES;
        }
        free(full);
    }
    free(dirs);
    return NULL;
}
