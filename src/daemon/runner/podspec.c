/*
 * podspec.c - a Pod object turned into the process it runs (struct spec):
 * command and args with $(VAR) expanded, the env (the manifest's, fieldRef
 * ConfigMap and Secret values by key and by envFrom, the rendezvous
 * names rewritten to this host), ConfigMap, Secret (decoded, each file
 * with the volume's mode) and hostPath volumes as mounts, resource limits, the hosts
 * file, and the checks made before anything starts (preflight: the
 * image's command exists, the rendezvous port is free).
 *
 * What it does not do: start the process (spawn.c) or decide where the
 * pod runs (the core's binder).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

#include "flexq/base64.h"
#include "flexq/buf.h"
#include "flexq/names.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"
#include "flexq/quantity.h"
#include "runner/cgroup.h"
#include "runner/pod_init.h"

extern char **environ;
#include "runner/internal.h"

/* ------------------------------------------------------------------ */
/* building a pod's process                                             */

void rn_spec_release(struct spec *s)
{
    rn_strv_release(&s->argv);
    rn_strv_release(&s->env);
    free(s->cwd);
    free(s->hostname);
    rn_strv_release(&s->dns_names);
    for (size_t i = 0; i < s->nmounts; i++) {
        free(s->mounts[i].src);
        free(s->mounts[i].dst);
        if (s->mounts[i].fd >= 0)
            close(s->mounts[i].fd);
    }
    free(s->mounts);
}

/* The files of a tree flexqd wrote are handed to the pod's user; its
 * directories stay flexqd's (root's), so the pod cannot rename, remove
 * or replace an entry with a link for flexqd to follow when it writes
 * the tree again at a restart. */
static void chown_at(const char *path, uid_t uid, gid_t gid, int depth)
{
    if (depth >= 16)
        return;
    DIR *d = opendir(path);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char *sub = fq_xasprintf("%s/%s", path, de->d_name);
        struct stat st;
        if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
            chown_at(sub, uid, gid, depth + 1);
        else
            (void)lchown(sub, uid, gid);
        free(sub);
    }
    if (d)
        closedir(d);
}

void rn_chown_tree(const char *path, uid_t uid, gid_t gid)
{
    chown_at(path, uid, gid, 0);
}

static void add_mount(struct spec *s, const char *src, const char *dst, bool ro)
{
    FQ_GROW(s->mounts, s->mcap, s->nmounts + 1);
    struct mount *m = &s->mounts[s->nmounts++];
    m->src = fq_xstrdup(src);
    m->dst = fq_xstrdup(dst);
    m->ro = ro;
    m->rewrite = false;
    m->empty_dir = false;
    m->secret = false;
    m->fd = -1;
}

/* Whether path lies in a directory each pod gets its own of (mounts.c's
 * private /tmp, /var/tmp, /dev/shm, /run/lock). */
static bool in_private_dir(const char *path)
{
    static const char *const dirs[] = {"/tmp/", "/var/tmp/", "/dev/shm/",
                                       "/run/lock/"};
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
        if (!strncmp(path, dirs[i], strlen(dirs[i])))
            return true;
    return false;
}

/* flexq's own Python helper (the runner's python_path, on every pod's
 * PYTHONPATH) stays readable where it lies in a directory the pod gets
 * its own of, as a checkout under /tmp does: bound read-only at the same
 * path. */
static void add_helper_mounts(const struct fq_runner *r, struct spec *s)
{
    char *pp = fq_xstrdup(r->python_path ? r->python_path : "");
    char *save = NULL;
    for (char *d = strtok_r(pp, ":", &save); d;
         d = strtok_r(NULL, ":", &save)) {
        struct stat st;
        if (d[0] == '/' && in_private_dir(d) && stat(d, &st) == 0 &&
            S_ISDIR(st.st_mode))
            add_mount(s, d, d, true);
    }
    free(pp);
}

static const struct fq_value *find_named(const struct fq_value *seq,
                                         const char *name)
{
    for (size_t i = 0; i < fq_value_len(seq); i++) {
        const struct fq_value *it = fq_seq_at(seq, i);
        if (!strcmp(fq_value_path_str(it, "name", ""), name))
            return it;
    }
    return NULL;
}

/* A file name from a ConfigMap key or item path: no "..", no leading /. */
static bool safe_rel(const char *p)
{
    if (!*p || *p == '/')
        return false;
    for (const char *s = p; *s; s++)
        if (s[0] == '.' && s[1] == '.' && (s == p || s[-1] == '/') &&
            (s[2] == '/' || s[2] == '\0'))
            return false;
    return true;
}

/*
 * A subPath of a volume is walked from the volume's root one name at a
 * time, never through a symbolic link: an emptyDir is the pod's own, so
 * a link it left there at its last run (to another pod's directory, to
 * the host's /etc) would otherwise be bound into it at the next. Missing
 * directories are made in flexqd's own volumes (`create`), as the kubelet
 * does; never on a hostPath. Returns 0, or -1 with why.
 */
static int subpath_check(const char *root, const char *sub, bool create,
                         char *why, size_t size)
{
    int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && create) {
        rn_mkdir_p(root, 0755);
        fd = open(root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    char name[NAME_MAX + 1];
    const char *p = sub;
    while (fd >= 0 && *p) {
        size_t n = strcspn(p, "/");
        if (n == 0 || n > NAME_MAX) {
            p += n + (p[n] == '/');
            continue;
        }
        memcpy(name, p, n);
        name[n] = '\0';
        p += n + (p[n] == '/');
        struct stat st;
        if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 &&
            (errno != ENOENT || !create || mkdirat(fd, name, 0755) != 0 ||
             fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)) {
            int e = errno;
            close(fd);
            fd = -1;
            errno = e;
            break;
        }
        if (S_ISLNK(st.st_mode)) {
            snprintf(why, size,
                     "subPath \"%s\" goes through the symbolic link \"%s\": "
                     "refused",
                     sub, name);
            close(fd);
            return -1;
        }
        int next = openat(fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        close(fd);
        fd = next;
    }
    if (fd < 0 || *p) {
        snprintf(why, size, "subPath \"%s\": %s", sub, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

/*
 * A hostPath's source is opened once its path is checked, and checked
 * again by what was opened (the path a descriptor has cannot be moved by
 * a link another pod puts in a shared directory such as the host's /tmp
 * between the check and the bind); the bind then uses the descriptor.
 * Returns the descriptor, -1 when the source cannot be opened (the bind
 * fails later, as before), or -2 with why when it is refused.
 */
static int pin_host_path(struct fq_runner *r, const char *src,
                         const char *vname, char *why, size_t size)
{
    int fd = open(src, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char link[32], real[PATH_MAX];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, real, sizeof(real) - 1);
    if (n <= 0) {
        snprintf(why, size, "volume \"%s\": hostPath %s: %s", vname, src,
                 strerror(errno));
        close(fd);
        return -2;
    }
    real[n] = '\0';
    if (fq_sandbox_path_refused(real, r->data_dir, (const char *const *)r->hide,
                                vname, why, size)) {
        close(fd);
        return -2;
    }
    return fd;
}

/* Materializes a ConfigMap volume into dir. Returns 0, or -1 when the
 * ConfigMap does not exist (the pod waits). */
static int materialize_configmap(struct fq_runner *r, const char *ns,
                                 const struct fq_value *vol, const char *dir,
                                 struct spec *s)
{
    const char *cm = fq_value_path_str(vol, FQ_VOLUME_CONFIGMAP_NAME, "");
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(r->engine), FQ_KIND_CONFIGMAP, ns, cm);
    if (!o) {
        if (fq_value_path_bool(vol, "configMap.optional", false))
            return rn_mkdir_p(dir, 0755), 0;
        snprintf(s->why, sizeof(s->why),
                 "MountVolume.SetUp failed for volume \"%s\": configmap "
                 "\"%s\" not found",
                 fq_value_path_str(vol, "name", ""), cm);
        return -1;
    }
    rn_mkdir_p(dir, 0755);
    const struct fq_value *data = fq_map_get(o->obj, "data");
    const struct fq_value *items = fq_value_path(vol, "configMap.items");
    if (items && items->type == FQ_V_SEQ && items->u.seq.n) {
        for (size_t i = 0; i < items->u.seq.n; i++) {
            const struct fq_value *it = items->u.seq.items[i];
            const char *key = fq_value_path_str(it, "key", "");
            const char *rel = fq_value_path_str(it, "path", key);
            const char *val = fq_value_as_str(fq_map_get(data, key));
            if (!val || !safe_rel(rel))
                continue;
            char *path = fq_xasprintf("%s/%s", dir, rel);
            char *slash = strrchr(path, '/');
            *slash = '\0';
            rn_mkdir_p(path, 0755);
            *slash = '/';
            rn_write_file(path, val, strlen(val));
            free(path);
        }
        return 0;
    }
    if (data && data->type == FQ_V_MAP)
        for (size_t i = 0; i < data->u.map.n; i++) {
            const struct fq_member *m = &data->u.map.items[i];
            const char *val = fq_value_as_str(m->val);
            if (!val || !safe_rel(m->key) || strchr(m->key, '/'))
                continue;
            char *path = fq_xasprintf("%s/%s", dir, m->key);
            rn_write_file(path, val, strlen(val));
            free(path);
        }
    return 0;
}

/* The value of key in a stored ConfigMap (data, or binaryData decoded)
 * or Secret (data decoded) into b; false when the key is absent. */
static bool source_value(const struct fq_value *obj, enum fq_kind k,
                         const char *key, struct fq_buf *b)
{
    const char *v = fq_value_as_str(fq_map_get(fq_map_get(obj, "data"), key));
    fq_buf_reset(b);
    if (k == FQ_KIND_CONFIGMAP) {
        if (v) {
            fq_buf_puts(b, v);
            return true;
        }
        v = fq_value_as_str(fq_map_get(fq_map_get(obj, "binaryData"), key));
    }
    return v && fq_base64_decode(b, v, NULL) >= 0;
}

/* Writes one projected key as dir/rel with the file mode the volume
 * gives it (its parents made as needed). */
static void write_key(const char *dir, const char *rel, const struct fq_buf *b,
                      int64_t mode)
{
    char *path = fq_xasprintf("%s/%s", dir, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    rn_mkdir_p(path, 0755);
    *slash = '/';
    rn_write_file(path, b->data ? b->data : "", b->len);
    /* the file just written, never what a link there points to */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        (void)fchmod(fd, (mode_t)(mode & 0777));
    if (fd >= 0)
        close(fd);
    free(path);
}

/* Materializes a Secret volume into dir as the kubelet does: every key of
 * data (or the listed items, each at its path and mode) as a file of the
 * decoded bytes, mode defaultMode (0644 when unset). Returns 0, or -1
 * with s->why when the Secret or a listed key is missing and the volume
 * is not optional (the pod waits, ContainerCreating). */
static int materialize_secret(struct fq_runner *r, const char *ns,
                              const struct fq_value *vol, const char *dir,
                              struct spec *s)
{
    const char *vname = fq_value_path_str(vol, "name", "");
    const char *sn = fq_value_path_str(vol, "secret.secretName", "");
    bool optional = fq_value_path_bool(vol, "secret.optional", false);
    int64_t defmode = fq_value_path_int(vol, "secret.defaultMode", 0644);
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(r->engine), FQ_KIND_SECRET, ns, sn);
    s->wait_reason = "ContainerCreating";
    if (!o) {
        if (optional)
            return rn_mkdir_p(dir, 0755), 0;
        snprintf(s->why, sizeof(s->why),
                 "MountVolume.SetUp failed for volume \"%s\" : secret "
                 "\"%s\" not found",
                 vname, sn);
        return -1;
    }
    /* A fresh directory at every start: the files of the last run were
     * the pod user's, and nothing it left there is followed. */
    rn_rm_tree(dir);
    rn_mkdir_p(dir, 0755);
    const struct fq_value *data = fq_map_get(o->obj, "data");
    const struct fq_value *items = fq_value_path(vol, "secret.items");
    struct fq_buf b = FQ_BUF_INIT;
    int rc = 0;
    if (fq_value_len(items) > 0) {
        for (size_t i = 0; i < fq_value_len(items) && rc == 0; i++) {
            const struct fq_value *it = fq_seq_at(items, i);
            const char *key = fq_value_path_str(it, "key", "");
            const char *rel = fq_value_path_str(it, "path", key);
            if (!source_value(o->obj, FQ_KIND_SECRET, key, &b)) {
                if (optional)
                    continue;
                snprintf(s->why, sizeof(s->why),
                         "MountVolume.SetUp failed for volume \"%s\" : "
                         "references non-existent secret key: %s",
                         vname, key);
                rc = -1;
            } else if (safe_rel(rel)) {
                write_key(dir, rel, &b, fq_value_path_int(it, "mode", defmode));
            }
        }
    } else if (data && data->type == FQ_V_MAP) {
        for (size_t i = 0; i < data->u.map.n; i++) {
            const char *key = data->u.map.items[i].key;
            if (safe_rel(key) && !strchr(key, '/') &&
                source_value(o->obj, FQ_KIND_SECRET, key, &b))
                write_key(dir, key, &b, defmode);
        }
    }
    fq_buf_release(&b);
    return rc;
}

/* The ConfigMap or Secret an env reference names, with the kubelet's
 * message in s->why when it is missing. */
static const struct fq_object *env_source(struct fq_runner *r, const char *ns,
                                          enum fq_kind k, const char *name,
                                          struct spec *s)
{
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(r->engine), k, ns, name);
    if (!o)
        snprintf(s->why, sizeof(s->why), "%s \"%s\" not found",
                 k == FQ_KIND_SECRET ? "secret" : "configmap", name);
    return o;
}

/* env[].valueFrom.{configMapKeyRef,secretKeyRef}: the value into *out
 * (owned). Returns 0, 1 when the reference is optional and unresolved
 * (no variable), -1 with s->why when it cannot be resolved. */
static int env_key_ref(struct fq_runner *r, const char *ns,
                       const struct fq_value *ev, struct spec *s, char **out)
{
    enum fq_kind k = FQ_KIND_SECRET;
    const struct fq_value *ref = fq_value_path(ev, FQ_ENV_SECRET_KEY_REF);
    if (!ref) {
        k = FQ_KIND_CONFIGMAP;
        ref = fq_value_path(ev, FQ_ENV_CONFIGMAP_KEY_REF);
    }
    const char *name = fq_value_path_str(ref, "name", "");
    const char *key = fq_value_path_str(ref, "key", "");
    bool optional = fq_value_path_bool(ref, "optional", false);
    const struct fq_object *o = env_source(r, ns, k, name, s);
    if (!o)
        return optional ? (s->why[0] = '\0', 1) : -1;
    struct fq_buf b = FQ_BUF_INIT;
    if (!source_value(o->obj, k, key, &b)) {
        fq_buf_release(&b);
        if (optional)
            return 1;
        snprintf(s->why, sizeof(s->why), "couldn't find key %s in %s %s/%s",
                 key, k == FQ_KIND_SECRET ? "Secret" : "ConfigMap", ns, name);
        return -1;
    }
    *out = fq_xstrdup(b.data ? b.data : "");
    fq_buf_release(&b);
    return 0;
}

/* envFrom[]: every key of each ConfigMap / Secret as a variable, its
 * prefix prepended (a key holding '=' is skipped, as no variable can
 * have it). Returns 0, or -1 with s->why when a source that is not
 * optional is missing. */
static int env_from(struct fq_runner *r, const char *ns,
                    const struct fq_value *ctr, struct spec *s)
{
    const struct fq_value *list = fq_map_get(ctr, "envFrom");
    struct fq_buf b = FQ_BUF_INIT;
    for (size_t i = 0; i < fq_value_len(list); i++) {
        const struct fq_value *it = fq_seq_at(list, i);
        enum fq_kind k = FQ_KIND_SECRET;
        const struct fq_value *ref = fq_map_get(it, "secretRef");
        if (!ref) {
            k = FQ_KIND_CONFIGMAP;
            ref = fq_map_get(it, "configMapRef");
        }
        if (!ref)
            continue;
        const char *prefix = fq_value_path_str(it, "prefix", "");
        const struct fq_object *o =
            env_source(r, ns, k, fq_value_path_str(ref, "name", ""), s);
        if (!o) {
            if (fq_value_path_bool(ref, "optional", false)) {
                s->why[0] = '\0';
                continue;
            }
            fq_buf_release(&b);
            return -1;
        }
        for (int part = 0; part < 2; part++) {
            const struct fq_value *m =
                fq_map_get(o->obj, part ? "binaryData" : "data");
            if (part && k == FQ_KIND_SECRET)
                break;
            for (size_t j = 0; m && m->type == FQ_V_MAP && j < m->u.map.n &&
                               s->env.n < MAX_ENV;
                 j++) {
                const char *key = m->u.map.items[j].key;
                if (strchr(key, '=') || !source_value(o->obj, k, key, &b))
                    continue;
                char *var = fq_xasprintf("%s%s", prefix, key);
                rn_env_set(&s->env, var, b.data ? b.data : "");
                free(var);
            }
        }
    }
    fq_buf_release(&b);
    return 0;
}

/* Volume mounts of `ctr` using the volumes of `podspec`. Returns 0, -1
 * when a ConfigMap is missing (the pod waits), -2 when refused. */
static int add_volume_mounts(struct fq_runner *r, const char *ns,
                             const char *poddir, const struct fq_value *podspec,
                             const struct fq_value *ctr, struct spec *s)
{
    const struct fq_value *vols = fq_map_get(podspec, "volumes");
    const struct fq_value *vms = fq_map_get(ctr, "volumeMounts");
    for (size_t i = 0; i < fq_value_len(vms); i++) {
        const struct fq_value *vm = fq_seq_at(vms, i);
        const char *vname = fq_value_path_str(vm, "name", "");
        const char *mpath = fq_value_path_str(vm, "mountPath", "");
        const char *sub = fq_value_path_str(vm, "subPath", "");
        bool ro = fq_value_path_bool(vm, "readOnly", false);
        const struct fq_value *vol = find_named(vols, vname);
        if (!vol || mpath[0] != '/')
            continue;
        char *src = NULL;
        bool own = false;
        if (fq_map_get(vol, "configMap")) {
            src = fq_xasprintf("%s/volumes/%s", poddir, vname);
            if (materialize_configmap(r, ns, vol, src, s) != 0) {
                free(src);
                return -1;
            }
            ro = true;
        } else if (fq_map_get(vol, "secret")) {
            src = fq_xasprintf("%s/volumes/%s", poddir, vname);
            if (materialize_secret(r, ns, vol, src, s) != 0) {
                free(src);
                return -1;
            }
            ro = true;
        } else if (fq_map_get(vol, "hostPath")) {
            src = fq_xstrdup(fq_value_path_str(vol, "hostPath.path", "/"));
            if (fq_sandbox_path_refused(src, r->data_dir,
                                        (const char *const *)r->hide, vname,
                                        s->why, sizeof(s->why))) {
                free(src);
                return -2;
            }
        } else {
            /* emptyDir and anything flexq does not model: a fresh
             * directory of the pod's own. */
            src = fq_xasprintf("%s/volumes/%s", poddir, vname);
            rn_mkdir_p(src, 0755);
            own = true;
        }
        if (*sub && safe_rel(sub)) {
            bool host = fq_map_get(vol, "hostPath") != NULL;
            if (subpath_check(src, sub, !host, s->why, sizeof(s->why))) {
                snprintf(s->why + strlen(s->why),
                         sizeof(s->why) - strlen(s->why), " (volume \"%s\")",
                         vname);
                free(src);
                return -2;
            }
            char *full = fq_xasprintf("%s/%s", src, sub);
            free(src);
            src = full;
        }
        int pin = -1;
        if (fq_map_get(vol, "hostPath") &&
            (pin = pin_host_path(r, src, vname, s->why, sizeof(s->why))) ==
                -2) {
            free(src);
            return -2;
        }
        add_mount(s, src, mpath, ro);
        s->mounts[s->nmounts - 1].fd = pin;
        s->mounts[s->nmounts - 1].empty_dir = own;
        s->mounts[s->nmounts - 1].secret = fq_map_get(vol, "secret") != NULL;
        free(src);
    }
    return 0;
}

/* The value of a fieldRef such as metadata.name or
 * metadata.labels['ray.io/cluster']; "" when unknown. */
static char *field_ref(const struct fq_value *pod, const char *path)
{
    if (!strcmp(path, "status.podIP") || !strcmp(path, "status.hostIP"))
        return fq_xstrdup(fq_value_path_str(pod, path, "127.0.0.1"));
    const char *br = strchr(path, '[');
    if (br && (!strncmp(path, "metadata.labels", 15) ||
               !strncmp(path, "metadata.annotations", 20))) {
        char *mapname = fq_xstrndup(path, (size_t)(br - path));
        char *key = fq_xstrdup(br + 1);
        size_t kl = strlen(key);
        if (kl >= 2 && key[kl - 1] == ']')
            key[--kl] = '\0';
        if (kl >= 2 && (key[0] == '\'' || key[0] == '"')) {
            memmove(key, key + 1, kl);
            key[kl - 2] = '\0';
        }
        const struct fq_value *m = fq_value_path(pod, mapname);
        char *out = fq_xstrdup(fq_value_as_str(fq_map_get(m, key)) ?
                                   fq_value_as_str(fq_map_get(m, key)) :
                                   "");
        free(mapname);
        free(key);
        return out;
    }
    return fq_xstrdup(fq_value_path_str(pod, path, ""));
}

static bool is_ip_literal(const char *h)
{
    if (!strcmp(h, "localhost"))
        return true;
    for (const char *p = h; *p; p++)
        if (!((*p >= '0' && *p <= '9') || *p == '.' || *p == ':'))
            return false;
    return *h != '\0';
}

/* Names the pod's rendezvous env refers to (owned strings into names). */
static void rendezvous_names(const struct strv *env, struct strv *names)
{
    const char *tw = rn_env_get(env, "TPU_WORKER_HOSTNAMES");
    if (tw) {
        char *cp = fq_xstrdup(tw), *save = NULL;
        for (char *h = strtok_r(cp, ",", &save); h;
             h = strtok_r(NULL, ",", &save))
            if (!is_ip_literal(h))
                rn_strv_pushs(names, h);
        free(cp);
    }
    const char *ma = rn_env_get(env, "MASTER_ADDR");
    if (ma && *ma && !is_ip_literal(ma))
        rn_strv_pushs(names, ma);
    const char *jc = rn_env_get(env, "JAX_COORDINATOR_ADDRESS");
    if (jc && *jc) {
        char *h = fq_xstrdup(jc);
        char *colon = strrchr(h, ':');
        if (colon)
            *colon = '\0';
        if (*h && !is_ip_literal(h))
            rn_strv_push(names, h);
        else
            free(h);
    }
}

/*
 * The names a pod's peers reach it by, all of them on this machine: with
 * spec.subdomain, <hostname>.<subdomain>[.<ns>.svc[.cluster.local]] (the
 * kubelet writes the same FQDN into /etc/hosts), and the comma list of
 * annotation flexq.dev/dns-names, which the job controllers set to the
 * headless-service names of the pod's gang (JobSet, PyTorchJob, MPIJob).
 * At most MAX_DNS_NAMES names of at most 253 characters each.
 */
#define MAX_DNS_NAMES 4096

static void dns_names(const struct fq_value *pod, const char *ns,
                      const char *hostname, struct strv *out)
{
    const char *sub = fq_value_path_str(pod, "spec.subdomain", NULL);
    if (sub && *sub && strlen(sub) < 64) {
        rn_strv_push(out, fq_xasprintf("%s.%s", hostname, sub));
        rn_strv_push(out, fq_xasprintf("%s.%s.%s.svc", hostname, sub, ns));
        rn_strv_push(
            out, fq_xasprintf("%s.%s.%s.svc.cluster.local", hostname, sub, ns));
    }
    const char *list =
        fq_value_as_str(fq_map_get(fq_meta_annotations(pod), FQ_ANN_DNS_NAMES));
    if (!list)
        return;
    char *cp = fq_xstrdup(list), *save = NULL;
    for (char *h = strtok_r(cp, ",", &save); h && out->n < MAX_DNS_NAMES;
         h = strtok_r(NULL, ",", &save)) {
        bool ok = *h && strlen(h) <= 253;
        for (const char *q = h; ok && *q; q++)
            ok = (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') ||
                 *q == '-' || *q == '.';
        if (ok)
            rn_strv_pushs(out, h);
    }
    free(cp);
}

/* Rewrite fallback for names: replaces each rendezvous name in the env by
 * 127.0.0.1, since without a mount namespace no hosts file can make them
 * resolve. */
static void rewrite_names(struct strv *env)
{
    static const char *const keys[] = {
        "TPU_WORKER_HOSTNAMES", "MASTER_ADDR", "JAX_COORDINATOR_ADDRESS",
        "PET_MASTER_ADDR", "MEGASCALE_COORDINATOR_ADDRESS"};
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        const char *v = rn_env_get(env, keys[k]);
        if (!v)
            continue;
        struct fq_buf b = FQ_BUF_INIT;
        fq_buf_puts(&b, "");
        char *cp = fq_xstrdup(v), *save = NULL;
        bool first = true;
        for (char *h = strtok_r(cp, ",", &save); h;
             h = strtok_r(NULL, ",", &save)) {
            char *port = strrchr(h, ':');
            if (port)
                *port = '\0';
            fq_buf_printf(&b, "%s%s%s%s", first ? "" : ",",
                          is_ip_literal(h) ? h : "127.0.0.1", port ? ":" : "",
                          port ? port + 1 : "");
            first = false;
        }
        free(cp);
        rn_env_set(env, keys[k], fq_buf_str(&b));
        fq_buf_release(&b);
    }
}

/* Replaces a leading mount path in s by the mount's host source; returns
 * owned, or NULL when s does not start with any rewritten mount. */
static char *rewrite_path(const struct spec *s, const char *str)
{
    for (size_t i = 0; i < s->nmounts; i++) {
        const struct mount *m = &s->mounts[i];
        if (!m->rewrite)
            continue;
        size_t n = strlen(m->dst);
        if (!strncmp(str, m->dst, n) && (str[n] == '/' || str[n] == '\0'))
            return fq_xasprintf("%s%s", m->src, str + n);
    }
    return NULL;
}

/* Host path of a path seen inside the pod (for preflight); owned. */
static char *host_path(const struct spec *s, const char *p)
{
    for (size_t i = 0; i < s->nmounts; i++) {
        const struct mount *m = &s->mounts[i];
        size_t n = strlen(m->dst);
        if (!strncmp(p, m->dst, n) && (p[n] == '/' || p[n] == '\0'))
            return fq_xasprintf("%s%s", m->src, p + n);
    }
    return fq_xstrdup(p);
}

/*
 * Decides which mounts bubblewrap can serve: a target whose first missing
 * path component lies directly under / (or under a directory bwrap itself
 * creates) can be made in the tmpfs root; a missing target inside an
 * existing host directory cannot without touching the host.
 */
static void plan_mounts(const struct fq_runner *r, struct spec *s)
{
    for (size_t i = 0; i < s->nmounts; i++) {
        struct mount *m = &s->mounts[i];
        if (r->mounts == FQ_MOUNTS_REWRITE) {
            m->rewrite = true;
            continue;
        }
        if (rn_path_exists(m->dst))
            continue;
        /* Find the first missing component. */
        char *p = fq_xstrdup(m->dst);
        bool ok = false;
        for (char *sl = p + 1;; sl++) {
            sl = strchr(sl, '/');
            if (sl)
                *sl = '\0';
            if (!rn_path_exists(p)) {
                char *parent_end = strrchr(p, '/');
                ok = parent_end == p; /* missing part starts at / */
                break;
            }
            if (!sl)
                break;
            *sl = '/';
        }
        free(p);
        if (!ok)
            m->rewrite = true;
    }
}

void rn_bwrap_root_args(struct strv *a, const struct mount *m, size_t nm)
{
    rn_strv_pushs(a, "--die-with-parent");
    rn_strv_pushs(a, "--tmpfs");
    rn_strv_pushs(a, "/");
    DIR *d = opendir("/");
    struct dirent *de;
    while (d && (de = readdir(d))) {
        const char *n = de->d_name;
        if (!strcmp(n, ".") || !strcmp(n, "..") || !strcmp(n, "proc") ||
            !strcmp(n, "dev") || !strcmp(n, "sys"))
            continue;
        char *full = fq_xasprintf("/%s", n);
        struct stat st;
        if (lstat(full, &st) == 0) {
            if (S_ISLNK(st.st_mode)) {
                char target[PATH_MAX];
                ssize_t tl = readlink(full, target, sizeof(target) - 1);
                if (tl > 0) {
                    target[tl] = '\0';
                    rn_strv_pushs(a, "--symlink");
                    rn_strv_pushs(a, target);
                    rn_strv_pushs(a, full);
                }
            } else {
                rn_strv_pushs(a, "--bind");
                rn_strv_pushs(a, full);
                rn_strv_pushs(a, full);
            }
        }
        free(full);
    }
    if (d)
        closedir(d);
    rn_strv_pushs(a, "--proc");
    rn_strv_pushs(a, "/proc");
    rn_strv_pushs(a, "--dev-bind");
    rn_strv_pushs(a, "/dev");
    rn_strv_pushs(a, "/dev");
    if (rn_path_exists("/sys")) {
        rn_strv_pushs(a, "--ro-bind");
        rn_strv_pushs(a, "/sys");
        rn_strv_pushs(a, "/sys");
    }
    /* the pod's own /tmp, /var/tmp, /dev/shm, /run/lock and IPC, as in
     * the unshare mode (mounts.c): all pods run as one user. bwrap binds
     * sources from the old root, so one under the host's /tmp still
     * works. */
    rn_strv_pushs(a, "--unshare-ipc");
    static const char *const own[] = {"/tmp", "/var/tmp", "/dev/shm",
                                      "/run/lock"};
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
        struct stat st;
        if (lstat(own[i], &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        rn_strv_pushs(a, "--perms");
        rn_strv_pushs(a, "1777");
        rn_strv_pushs(a, "--tmpfs");
        rn_strv_pushs(a, own[i]);
    }
    struct stat mq;
    if (lstat("/dev/mqueue", &mq) == 0 && S_ISDIR(mq.st_mode)) {
        rn_strv_pushs(a, "--mqueue");
        rn_strv_pushs(a, "/dev/mqueue");
    }
    for (size_t i = 0; i < nm; i++) {
        if (m[i].rewrite)
            continue;
        rn_strv_pushs(a, m[i].ro ? "--ro-bind" : "--bind");
        rn_strv_pushs(a, m[i].src);
        rn_strv_pushs(a, m[i].dst);
    }
}

static int64_t limit_of(const struct fq_value *ctr, const char *res,
                        enum fq_qscale scale)
{
    const struct fq_value *lim = fq_value_path(ctr, FQ_CTR_LIMITS);
    const struct fq_value *v = fq_map_get(lim, res);
    const char *txt = NULL;
    char num[64];
    if (v && v->type == FQ_V_STR)
        txt = v->u.str.s;
    else if (v && v->type == FQ_V_NUM) {
        snprintf(num, sizeof(num), "%s", v->u.num.raw ? v->u.num.raw : "0");
        txt = num;
    }
    int64_t out = 0;
    if (!txt || fq_quantity_parse(txt, scale, &out, NULL, NULL) != 0)
        return 0;
    return out;
}

/* Builds env, argv, cwd and mounts of a pod. Returns 0, or -1 with
 * s->waiting (ConfigMap missing) or s->why (cannot run) set. */
int rn_build_spec(struct fq_runner *r, const struct fq_value *pod,
                  const char *ns, const char *name, const char *poddir,
                  struct spec *s)
{
    const struct fq_value *podspec = fq_map_get(pod, "spec");
    const struct fq_value *ctr =
        fq_seq_at(fq_map_get(podspec, "containers"), 0);
    if (!ctr) {
        snprintf(s->why, sizeof(s->why), "pod has no containers");
        return -1;
    }

    /* volumes first: a missing ConfigMap or Secret makes the pod wait */
    int vrc = add_volume_mounts(r, ns, poddir, podspec, ctr, s);
    if (vrc != 0) {
        s->waiting = vrc == -1; /* -2: refused, s->why says why */
        return -1;
    }
    add_helper_mounts(r, s);
    const struct fq_value *ann = fq_meta_annotations(pod);
    const char *from =
        fq_value_as_str(fq_map_get(ann, "flexq.dev/volumes-from"));
    if (from && *from) {
        const struct fq_object *other =
            fq_objstore_get(fq_engine_store(r->engine), FQ_KIND_POD, ns, from);
        if (other) {
            char *odir = fq_runner_pod_dir(r->data_dir, ns, from);
            const struct fq_value *ospec = fq_map_get(other->obj, "spec");
            int rc = add_volume_mounts(
                r, ns, odir, ospec,
                fq_seq_at(fq_map_get(ospec, "containers"), 0), s);
            free(odir);
            if (rc != 0) {
                s->waiting = rc == -1;
                return -1;
            }
        }
    }
    plan_mounts(r, s);

    /* env: nothing of flexqd's own (its environment may hold secrets);
     * HOME is the pod's directory, the one place it may write */
    rn_env_set(&s->env, "PATH", DEFAULT_PATH);
    rn_env_set(&s->env, "HOME", poddir);
    rn_env_set(&s->env, "LANG", "C.UTF-8");
    const char *hn = fq_value_path_str(podspec, "hostname", name);
    s->hostname = fq_xstrdup(hn);
    dns_names(pod, ns, hn, &s->dns_names);
    rn_env_set(&s->env, "HOSTNAME", hn);
    /* envFrom, then env (which wins), as the kubelet; a missing source
     * makes the container wait with CreateContainerConfigError */
    if (env_from(r, ns, ctr, s) != 0) {
        s->waiting = true;
        s->wait_reason = "CreateContainerConfigError";
        return -1;
    }
    const struct fq_value *envs = fq_map_get(ctr, "env");
    for (size_t i = 0; i < fq_value_len(envs) && s->env.n < MAX_ENV; i++) {
        const struct fq_value *ev = fq_seq_at(envs, i);
        const char *k = fq_value_path_str(ev, "name", NULL);
        if (!k || !*k || strchr(k, '='))
            continue;
        const struct fq_value *val = fq_map_get(ev, "value");
        char *v;
        if (val && val->type == FQ_V_STR)
            v = rn_expand(val->u.str.s, &s->env);
        else if (val && val->type == FQ_V_NUM)
            v = fq_xstrdup(val->u.num.raw ? val->u.num.raw : "");
        else if (fq_value_path(ev, FQ_ENV_FIELD_PATH))
            v = field_ref(pod, fq_value_path_str(ev, FQ_ENV_FIELD_PATH, ""));
        else if (fq_value_path(ev, FQ_ENV_SECRET_KEY_REF) ||
                 fq_value_path(ev, FQ_ENV_CONFIGMAP_KEY_REF)) {
            int rc = env_key_ref(r, ns, ev, s, &v);
            if (rc < 0) {
                s->waiting = true;
                s->wait_reason = "CreateContainerConfigError";
                return -1;
            }
            if (rc > 0)
                continue;
        } else
            v = fq_xstrdup("");
        rn_env_set(&s->env, k, v);
        free(v);
    }

    char *pdir = fq_xstrdup(poddir);
    rn_env_set(&s->env, "FLEXQ_POD_NAME", name);
    rn_env_set(&s->env, "FLEXQ_NODE_NAME",
               fq_value_path_str(pod, FQ_POD_NODE_NAME, ""));
    rn_env_set(&s->env, "FLEXQ_POD_IP",
               fq_value_path_str(pod, FQ_POD_IP, "127.0.0.1"));
    rn_env_set(&s->env, "FLEXQ_POD_NAMESPACE", ns);
    rn_env_set(&s->env, "FLEXQ_POD_DIR", pdir);
    rn_env_set(&s->env, "FLEXQ_DATA_DIR", r->data_dir);
    char *mf = fq_xasprintf("%s/metrics.jsonl", poddir);
    rn_env_set(&s->env, "FLEXQ_METRICS_FILE", mf);
    free(mf);
    free(pdir);
    const struct fq_value *labels = fq_meta_labels(pod);
    const char *cl = fq_value_as_str(fq_map_get(labels, "ray.io/cluster"));
    if (cl)
        rn_env_set(&s->env, "FLEXQ_RAY_CLUSTER", cl);
    const char *nt = fq_value_as_str(fq_map_get(labels, "ray.io/node-type"));
    if (nt)
        rn_env_set(&s->env, "FLEXQ_RAY_NODE_TYPE", nt);
    if (!rn_env_get(&s->env, "POD_IP"))
        rn_env_set(&s->env, "POD_IP",
                   fq_value_path_str(pod, FQ_POD_IP, "127.0.0.1"));
    const char *pp = rn_env_get(&s->env, "PYTHONPATH");
    char *npp = pp && *pp ? fq_xasprintf("%s:%s", r->python_path, pp) :
                            fq_xstrdup(r->python_path);
    rn_env_set(&s->env, "PYTHONPATH", npp);
    free(npp);
    if (!rn_env_get(&s->env, "PYTHONUNBUFFERED"))
        rn_env_set(&s->env, "PYTHONUNBUFFERED", "1");

    s->mem_bytes = limit_of(ctr, "memory", FQ_Q_UNIT);
    s->cpu_milli = limit_of(ctr, "cpu", FQ_Q_MILLI);
    s->gpus = limit_of(ctr, "nvidia.com/gpu", FQ_Q_UNIT);

    /* argv */
    const struct fq_value *cmd = fq_map_get(ctr, "command");
    const struct fq_value *args = fq_map_get(ctr, "args");
    const struct fq_value *lists[2] = {cmd, args};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < fq_value_len(lists[l]) && s->argv.n < MAX_ARGS;
             i++) {
            const char *w = fq_value_as_str(fq_seq_at(lists[l], i));
            if (w)
                rn_strv_push(&s->argv, rn_expand(w, &s->env));
        }
    if (s->argv.n == 0) {
        rn_strv_pushs(&s->argv, "python3");
        rn_strv_pushs(&s->argv, "-m");
        rn_strv_pushs(&s->argv, "flexq.node");
    }

    const char *wd = fq_value_path_str(ctr, "workingDir", NULL);
    s->cwd = fq_xstrdup(wd && *wd ? wd : poddir);

    /* rewrite fallback for mounts bubblewrap cannot serve */
    bool any_rewrite = false;
    for (size_t i = 0; i < s->nmounts; i++)
        any_rewrite |= s->mounts[i].rewrite;
    if (any_rewrite) {
        struct fq_buf map = FQ_BUF_INIT;
        fq_buf_puts(&map, "");
        for (size_t i = 0; i < s->nmounts; i++)
            if (s->mounts[i].rewrite)
                fq_buf_printf(&map, "%s%s=%s", map.len ? ";" : "",
                              s->mounts[i].dst, s->mounts[i].src);
        rn_env_set(&s->env, "FLEXQ_VOLUME_REWRITE", fq_buf_str(&map));
        fq_buf_release(&map);
        for (size_t i = 0; i < s->argv.n; i++) {
            char *nw = rewrite_path(s, s->argv.v[i]);
            if (nw) {
                free(s->argv.v[i]);
                s->argv.v[i] = nw;
            }
        }
        for (size_t i = 0; i < s->env.n; i++) {
            char *eq = strchr(s->env.v[i], '=');
            char *nw = rewrite_path(s, eq + 1);
            if (nw) {
                char *kv = fq_xasprintf("%.*s=%s", (int)(eq - s->env.v[i]),
                                        s->env.v[i], nw);
                free(nw);
                free(s->env.v[i]);
                s->env.v[i] = kv;
            }
        }
        char *nw = rewrite_path(s, s->cwd);
        if (nw) {
            free(s->cwd);
            s->cwd = nw;
        }
    }
    if (r->mounts == FQ_MOUNTS_REWRITE)
        rewrite_names(&s->env);
    return 0;
}

/*
 * execvp's lookup, done before fork with volume paths mapped to the host,
 * so that a missing command is reported as Kubernetes reports it. Returns
 * the path to exec (owned; the path inside the pod under bwrap) or NULL
 * with s->why set.
 */
char *rn_preflight(struct spec *s)
{
    const char *cmd = s->argv.v[0];
    if (strchr(cmd, '/')) {
        char *hp = host_path(s, cmd);
        struct stat st;
        int rc = stat(hp, &st);
        free(hp);
        if (rc != 0) {
            snprintf(s->why, sizeof(s->why),
                     "exec: \"%s\": stat %s: no such file or directory", cmd,
                     cmd);
            return NULL;
        }
        hp = host_path(s, cmd);
        rc = S_ISREG(st.st_mode) ? access(hp, X_OK) : -1;
        free(hp);
        if (rc != 0) {
            snprintf(s->why, sizeof(s->why), "exec: \"%s\": permission denied",
                     cmd);
            return NULL;
        }
        return fq_xstrdup(cmd);
    }
    /* PATH entries inside the pod, each mapped to the host for the test */
    const char *path = rn_env_get(&s->env, "PATH");
    char *dirs = fq_xstrdup(path ? path : DEFAULT_PATH);
    char *save = NULL;
    int why = ENOENT;
    char *found = NULL;
    for (char *d = strtok_r(dirs, ":", &save); d && !found;
         d = strtok_r(NULL, ":", &save)) {
        char *inside = fq_xasprintf("%s/%s", *d ? d : ".", cmd);
        char *hp = host_path(s, inside);
        struct stat st;
        if (stat(hp, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(hp, X_OK) == 0)
                found = inside, inside = NULL;
            else
                why = EACCES;
        }
        free(hp);
        free(inside);
    }
    free(dirs);
    if (!found)
        snprintf(s->why, sizeof(s->why),
                 why == EACCES ? "exec: \"%s\": permission denied" :
                                 "exec: \"%s\": executable file not found in "
                                 "$PATH",
                 cmd);
    return found;
}

/* Whether `port` can be bound on 127.0.0.1 right now. */
static bool port_free(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return true; /* cannot tell; let the program find out */
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    bool ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return ok;
}

/*
 * The rendezvous ports come from a range the core hands out (pods.c);
 * the core cannot see the machine, so the runner checks them before the
 * coordinator (rank 0) starts and fails the pod clearly when another
 * program holds one, instead of letting JAX time out.
 */
bool rn_rendezvous_port_taken(struct spec *s)
{
    const char *rank = rn_env_get(&s->env, "RANK");
    if (!rank)
        rank = rn_env_get(&s->env, "TPU_WORKER_ID");
    if (!rank || strcmp(rank, "0") != 0)
        return false;
    const char *ports[2] = {NULL, rn_env_get(&s->env, "MASTER_PORT")};
    const char *jc = rn_env_get(&s->env, "JAX_COORDINATOR_ADDRESS");
    if (jc && strrchr(jc, ':'))
        ports[0] = strrchr(jc, ':') + 1;
    for (int i = 0; i < 2; i++) {
        int port = ports[i] ? atoi(ports[i]) : 0;
        if (port > 0 && port < 65536 && !port_free(port)) {
            snprintf(s->why, sizeof(s->why),
                     "rendezvous port %d (%s) is in use on this machine; "
                     "choose a free rendezvous port range for flexqd",
                     port, i == 0 ? "JAX_COORDINATOR_ADDRESS" : "MASTER_PORT");
            return true;
        }
    }
    return false;
}

void rn_write_hosts(const char *poddir, const struct spec *s)
{
    struct strv names = {0};
    rendezvous_names(&s->env, &names);
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_printf(&b, "127.0.0.1\tlocalhost %s", s->hostname);
    for (size_t i = 0; i < names.n; i++)
        fq_buf_printf(&b, " %s", names.v[i]);
    /* one line per name: a long alias list would pass the resolver's
     * line limit */
    for (size_t i = 0; i < s->dns_names.n; i++)
        fq_buf_printf(&b, "\n127.0.0.1\t%s", s->dns_names.v[i]);
    fq_buf_puts(&b, "\n::1\tlocalhost ip6-localhost ip6-loopback\n");
    char *path = fq_xasprintf("%s/hosts", poddir);
    rn_write_file(path, b.data, b.len);
    free(path);
    fq_buf_release(&b);
    rn_strv_release(&names);
}
