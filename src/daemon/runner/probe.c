/*
 * probe.c - what this machine allows pods, found once when the runner is
 * made (fq_runner_new): bubblewrap or flexqd's own namespaces or the
 * rewrite fallback, cgroup v1 / v2 limits and a kill cgroup, a pid
 * namespace per pod, the pod user; and the runner freed.
 *
 * What it does not do: start pods (process.c, spawn.c).
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
/* probing                                                              */

/* Runs argv to completion with stdio on /dev/null; returns the exit code
 * or -1. Used only at start-up. */
static int run_quiet(char *const argv[])
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open("/dev/null", O_RDWR);
        if (fd >= 0) {
            dup2(fd, 0);
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

/*
 * What bubblewrap adds for every pod: its own pid namespace (bwrap is pid
 * 1 there; when the outer bwrap dies, --die-with-parent takes the whole
 * namespace with it), the data directory hidden under a tmpfs but for
 * the pod's own directory, the hidden files replaced by /dev/null, and
 * the seccomp filter (fd, or -1 for none).
 */
void rn_bwrap_sandbox_args(const struct fq_runner *r, struct strv *a,
                           const char *mask, const char *poddir,
                           const char *nsdir, int seccomp_fd)
{
    rn_strv_pushs(a, "--unshare-pid");
    rn_strv_pushs(a, "--tmpfs");
    rn_strv_pushs(a, mask);
    /* the directories between, 0755 (bwrap would make them 0700 and
     * root's: the pod user could not reach its own directory) */
    size_t dl = strlen(mask);
    for (const char *sl = poddir + dl;
         under(poddir, mask) && (sl = strchr(sl + 1, '/'));) {
        rn_strv_pushs(a, "--dir");
        rn_strv_push(a, fq_xstrndup(poddir, (size_t)(sl - poddir)));
    }
    if (nsdir) { /* a Ray node follows its peers: read-only */
        rn_strv_pushs(a, "--ro-bind");
        rn_strv_pushs(a, nsdir);
        rn_strv_pushs(a, nsdir);
    }
    rn_strv_pushs(a, "--bind");
    rn_strv_pushs(a, poddir);
    rn_strv_pushs(a, poddir);
    for (size_t i = 0; i < 4 && r->hide[i]; i++) {
        struct stat st;
        if (under(r->hide[i], r->data_dir) || stat(r->hide[i], &st) != 0 ||
            !S_ISREG(st.st_mode))
            continue;
        rn_strv_pushs(a, "--ro-bind");
        rn_strv_pushs(a, "/dev/null");
        rn_strv_pushs(a, r->hide[i]);
    }
    if (seccomp_fd >= 0) {
        rn_strv_pushs(a, "--seccomp");
        rn_strv_push(a, fq_xasprintf("%d", seccomp_fd));
    }
}

/* bubblewrap runs as root (it needs to, to mount without a user
 * namespace); setpriv, inside, becomes the pod's user with no
 * capabilities before it execs the command. Appends nothing when flexqd
 * cannot change users. */
void rn_setpriv_args(const struct fq_runner *r, struct strv *a, uid_t uid,
                     gid_t gid)
{
    if (!r->sb.change_ids || !r->setpriv)
        return;
    rn_strv_pushs(a, r->setpriv);
    rn_strv_push(a, fq_xasprintf("--reuid=%ld", (long)uid));
    rn_strv_push(a, fq_xasprintf("--regid=%ld", (long)gid));
    rn_strv_pushs(a, "--clear-groups");
    rn_strv_pushs(a, "--inh-caps=-all");
    rn_strv_pushs(a, "--bounding-set=-all");
    rn_strv_pushs(a, "--no-new-privs");
    rn_strv_pushs(a, "--");
}

static void probe_bwrap(struct fq_runner *r)
{
    int why;
    char *bw = rn_which("bwrap", getenv("PATH"), &why);
    if (!bw) {
        r->bwrap_note = fq_xstrdup("bwrap not installed; apt-get install "
                                   "bubblewrap for private mounts");
        return;
    }
    /* The probe mounts a directory at a path that does not exist on the
     * host, as the tutorial's /app does, and runs true inside. */
    char *probe_dir = fq_xasprintf("%s/probe", r->data_dir);
    rn_mkdir_p(probe_dir, 0755);
    struct mount m = {
        probe_dir, (char *)"/flexq-probe-mount", true, false, false, false, -1};
    struct strv a = {0};
    rn_strv_pushs(&a, bw);
    rn_bwrap_root_args(&a, &m, 1);
    /* the pods' own setup: pid namespace, data directory hidden, the
     * pod user through setpriv */
    char *mask = fq_sandbox_hide_root(r->data_dir, r->sb.change_ids, r->sb.uid,
                                      r->sb.gid);
    rn_bwrap_sandbox_args(r, &a, mask, probe_dir, NULL, -1);
    free(mask);
    rn_strv_pushs(&a, "--");
    if (r->sb.change_ids && !r->setpriv) {
        r->bwrap_note = fq_xstrdup("no setpriv to become the pod user under "
                                   "bubblewrap (util-linux)");
        rn_strv_release(&a);
        rmdir(probe_dir);
        free(probe_dir);
        free(bw);
        return;
    }
    rn_setpriv_args(r, &a, r->sb.uid, r->sb.gid);
    rn_strv_pushs(&a, "/bin/sh");
    rn_strv_pushs(&a, "-c");
    rn_strv_pushs(&a, "test -d /flexq-probe-mount");
    int rc = run_quiet(a.v);
    rn_strv_release(&a);
    rmdir(probe_dir);
    free(probe_dir);
    if (rc == 0) {
        r->mounts = FQ_MOUNTS_BWRAP;
        r->bwrap = bw;
        r->bwrap_note = fq_xasprintf("%s works here", bw);
    } else {
        r->bwrap_note =
            fq_xasprintf("%s cannot create namespaces here (exit %d): no user "
                         "namespaces or privileges",
                         bw, rc);
        free(bw);
    }
}

/*
 * Finds the mount point of a cgroup hierarchy in /proc/mounts: fstype
 * "cgroup2" (controller NULL) or "cgroup" with `controller` among the
 * options. Returns owned or NULL.
 */
static char *cgroup_mount(const char *controller)
{
    FILE *f = fopen("/proc/mounts", "re");
    if (!f)
        return NULL;
    char line[1024];
    char *found = NULL;
    while (!found && fgets(line, sizeof(line), f)) {
        char dev[256], dir[512], type[64], opts[512];
        if (sscanf(line, "%255s %511s %63s %511s", dev, dir, type, opts) != 4)
            continue;
        if (!controller && !strcmp(type, "cgroup2"))
            found = fq_xstrdup(dir);
        if (controller && !strcmp(type, "cgroup")) {
            char *save = NULL;
            for (char *o = strtok_r(opts, ",", &save); o;
                 o = strtok_r(NULL, ",", &save))
                if (!strcmp(o, controller))
                    found = fq_xstrdup(dir);
        }
    }
    fclose(f);
    return found;
}

/* Our own cgroup path within a hierarchy from /proc/self/cgroup: the line
 * "0::/p" (v2) or "N:...controller...:/p" (v1). Returns owned. */
static char *own_cgroup(const char *controller)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return fq_xstrdup("/");
    char line[1024];
    char *found = NULL;
    while (!found && fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        const char *ctrls = c1 + 1;
        if (!controller && !strcmp(line, "0") && !*ctrls)
            found = fq_xstrdup(c2 + 1);
        if (controller) {
            char *cp = fq_xstrdup(ctrls), *save = NULL;
            for (char *o = strtok_r(cp, ",", &save); o;
                 o = strtok_r(NULL, ",", &save))
                if (!strcmp(o, controller))
                    found = fq_xstrdup(c2 + 1);
            free(cp);
        }
    }
    fclose(f);
    return found ? found : fq_xstrdup("/");
}

/* Makes <mount><own path>/flexq-<pid> (or <mount>/flexq-<pid> when our own
 * path is not visible in this mount namespace). Returns owned or NULL. */
static char *make_root_cgroup(const char *mnt, const char *own)
{
    char *base = fq_xasprintf("%s%s", mnt, own);
    struct stat st;
    if (stat(base, &st) != 0 || !S_ISDIR(st.st_mode)) {
        free(base);
        base = fq_xstrdup(mnt);
    }
    fq_cgroup_clean_orphans(base); /* of flexqd processes killed -9 */
    char *dir = fq_xasprintf("%s/flexq-%ld", base, (long)getpid());
    free(base);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        free(dir);
        return NULL;
    }
    return dir;
}

static bool has_word(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; (p = strstr(p, w)); p += n)
        if ((p == list || p[-1] == ' ') &&
            (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
            return true;
    return false;
}

static void probe_cgroups(struct fq_runner *r)
{
    char buf[512];
    enum fq_runner_cgroups want = r->cfg.cgroups;
    if (want == FQ_CGROUPS_NONE) {
        r->cg_note = fq_xstrdup("disabled by configuration");
        return;
    }
    if (want == FQ_CGROUPS_AUTO || want == FQ_CGROUPS_V2) {
        char *mnt = cgroup_mount(NULL);
        if (mnt) {
            char *ctl = fq_xasprintf("%s/cgroup.controllers", mnt);
            bool ok = rn_read_small(ctl, buf, sizeof(buf)) > 0 &&
                      has_word(buf, "memory") && has_word(buf, "cpu");
            free(ctl);
            if (ok) {
                char *own = own_cgroup(NULL);
                char *root = make_root_cgroup(mnt, own);
                free(own);
                if (root) {
                    char *sub = fq_xasprintf("%s/cgroup.subtree_control", root);
                    ok = rn_write_small(sub, "+memory +cpu") == 0;
                    free(sub);
                    if (ok) {
                        r->cgroups = FQ_CGROUPS_V2;
                        r->cg_mem_root = root;
                        r->cg_cpu_root = fq_xstrdup(root);
                        r->cg_note = fq_xasprintf("memory.max and cpu.max "
                                                  "under %s",
                                                  root);
                        free(mnt);
                        return;
                    }
                    rmdir(root);
                    free(root);
                }
            }
            free(mnt);
        }
    }
    if (want == FQ_CGROUPS_AUTO || want == FQ_CGROUPS_V1) {
        char *mm = cgroup_mount("memory"), *cm = cgroup_mount("cpu");
        if (mm && cm) {
            char *om = own_cgroup("memory"), *oc = own_cgroup("cpu");
            char *rm = make_root_cgroup(mm, om);
            char *rc = rm ? make_root_cgroup(cm, oc) : NULL;
            free(om);
            free(oc);
            if (rm && rc) {
                r->cgroups = FQ_CGROUPS_V1;
                r->cg_mem_root = rm;
                r->cg_cpu_root = rc;
                r->cg_note = fq_xasprintf("memory.limit_in_bytes under %s, "
                                          "cpu.cfs_quota_us under %s",
                                          rm, rc);
                free(mm);
                free(cm);
                return;
            }
            if (rm)
                rmdir(rm);
            free(rm);
            free(rc);
        }
        free(mm);
        free(cm);
    }
    r->cgroups = FQ_CGROUPS_NONE;
    r->cg_note = fq_xstrdup("no writable cgroup v2 or v1 memory+cpu "
                            "hierarchy; limits are recorded, not enforced");
}

/* Tries the unshare mode once: a child sets up a namespace with a volume
 * at a path the host does not have and checks it is there. */
/* A fork, in a new pid namespace when asked (the child is its pid 1). */
pid_t rn_fork_ns(bool pidns)
{
    if (!pidns)
        return fork();
    return (pid_t)syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, NULL, NULL, NULL,
                          NULL);
}

static int probe_unshare_once(struct fq_runner *r, bool pidns, int *e)
{
    char *dir = fq_xasprintf("%s/probe", r->data_dir);
    char *vol = fq_xasprintf("%s/vol", dir);
    rn_mkdir_p(vol, 0755);
    struct mount m = {
        vol, (char *)"/flexq-probe-mount", true, false, false, false, -1};
    struct nsplan pl;
    rn_nsplan_init(&pl, dir, &m, 1, "flexq-probe", false);
    pl.new_proc = pidns;
    int rc = -1;
    pid_t pid = rn_fork_ns(pidns);
    if (pid == 0) {
        const char *step;
        if (rn_ns_setup(&pl, &step) != 0)
            _exit(2);
        if (pidns && getpid() != 1)
            _exit(3);
        _exit(access("/flexq-probe-mount", F_OK) == 0 ? 0 : 1);
    }
    if (pid > 0) {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    } else {
        *e = errno;
    }
    rn_nsplan_release(&pl);
    char *root = fq_xasprintf("%s/root", dir);
    rmdir(root);
    free(root);
    rmdir(vol);
    rmdir(dir);
    free(vol);
    free(dir);
    return rc;
}

/* Tries the unshare mode, with a pid namespace first (pod_init.c is then
 * each pod's pid 1), else without. */
static void probe_unshare(struct fq_runner *r)
{
    int e = 0;
    int rc = r->self_fd >= 0 ? probe_unshare_once(r, true, &e) : -1;
    r->pidns_ok = rc == 0;
    if (rc != 0)
        rc = probe_unshare_once(r, false, &e);
    char *note = fq_xasprintf(
        "%s%sflexqd's own unshare %s%s", r->bwrap_note ? r->bwrap_note : "",
        r->bwrap_note ? "; " : "",
        rc == 0 ? "works here" :
        e       ? "could not fork" :
                  "is not allowed here (needs root / CAP_SYS_ADMIN)",
        r->pidns_ok ? ", with a pid namespace per pod" :
        rc == 0     ? ", without pid namespaces" :
                      "");
    free(r->bwrap_note);
    r->bwrap_note = note;
    if (rc == 0)
        r->mounts = FQ_MOUNTS_UNSHARE;
}

/* An O_PATH descriptor of the pod init to exec: flexq-pod-init in the
 * folder of our own binary (built beside flexqd, only libc to load), or
 * our own binary, whose constructor runs pod_init.c under that name. */
static int open_pod_init(void)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        char path[PATH_MAX + 32];
        if (slash &&
            snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - self), self,
                     FQ_POD_INIT_ARGV0) < (int)sizeof(path)) {
            int fd = open(path, O_PATH | O_CLOEXEC);
            if (fd >= 0)
                return fd;
        }
    }
    return open("/proc/self/exe", O_PATH | O_CLOEXEC);
}

struct fq_runner *fq_runner_new(const struct fq_runner_config *cfg,
                                struct fq_engine *e, struct fq_err *err)
{
    if (!cfg->data_dir) {
        fq_err_set(err, FQ_EINVAL, "runner: no data directory");
        return NULL;
    }
    char *pods = fq_xasprintf("%s/pods", cfg->data_dir);
    if (rn_mkdir_p(pods, 0755) != 0) {
        fq_err_set(err, FQ_EIO, "runner: cannot create %s: %s", pods,
                   strerror(errno));
        free(pods);
        return NULL;
    }
    /* namespaces' directories from an earlier run */
    DIR *pd = opendir(pods);
    struct dirent *de;
    while (pd && (de = readdir(pd)))
        if (de->d_name[0] != '.') {
            char *ns = fq_xasprintf("%s/%s", pods, de->d_name);
            rn_set_topdir(ns);
            free(ns);
        }
    if (pd)
        closedir(pd);
    free(pods);
    struct fq_runner *r = fq_xcalloc(1, sizeof(*r));
    r->pump_ctl = -1; /* started with the first pod */
    r->cfg = *cfg;
    if (!r->cfg.log_max_bytes)
        r->cfg.log_max_bytes = 10u << 20;
    if (r->cfg.gpus > MAX_GPUS)
        r->cfg.gpus = MAX_GPUS;
    /* absolute: it is a mount point inside the pods */
    char real[PATH_MAX];
    r->data_dir =
        fq_xstrdup(realpath(cfg->data_dir, real) ? real : cfg->data_dir);
    for (size_t i = 0, n = 0; i < 4 && cfg->hide[i]; i++)
        if (realpath(cfg->hide[i], real))
            r->hide[n++] = fq_xstrdup(real);
    r->python_path = fq_xstrdup(cfg->python_path ? cfg->python_path :
                                                   FLEXQ_SOURCE_DIR "/python");
    r->node_name = cfg->node_name ? fq_xstrdup(cfg->node_name) : NULL;
    r->engine = e;
    /* who the pods run as, and what they may use */
    r->sb.change_ids = fq_sandbox_default_ids(cfg->pod_user, &r->sb.uid,
                                              &r->sb.gid, &r->sb_note);
    r->sb.max_procs = cfg->pod_max_procs > 0 ? cfg->pod_max_procs : 16384;
    r->sb.max_files = cfg->pod_max_files > 0 ? cfg->pod_max_files : 65536;
    r->sb.seccomp = true;
    fq_sandbox_filter_build(&r->sb);
    fq_boot_id(r->boot);
    int why_sp;
    r->setpriv = rn_which("setpriv", DEFAULT_PATH, &why_sp);
    r->mounts = FQ_MOUNTS_REWRITE;
    /* each pod's pid 1 (pod_init.c): the small flexq-pod-init beside our
     * binary when it is there, else our own binary */
    r->self_fd = fq_pod_init_argv0[0] && geteuid() == 0 ? open_pod_init() : -1;
    /* As root flexqd's own namespaces are preferred: a pod then costs a
     * clone and two execs (pod_init, the command) where bubblewrap costs
     * several processes; bubblewrap serves the machines where flexqd is
     * not root (user namespaces). */
    if (cfg->mounts == FQ_MOUNTS_AUTO && geteuid() == 0)
        probe_unshare(r);
    if (r->mounts == FQ_MOUNTS_REWRITE &&
        (cfg->mounts == FQ_MOUNTS_AUTO || cfg->mounts == FQ_MOUNTS_BWRAP)) {
        char *un = r->bwrap_note; /* why not unshare, kept before bwrap's */
        r->bwrap_note = NULL;
        probe_bwrap(r);
        if (un) {
            char *both =
                fq_xasprintf("%s; %s", un, r->bwrap_note ? r->bwrap_note : "");
            free(r->bwrap_note);
            free(un);
            r->bwrap_note = both;
        }
    }
    if (r->mounts == FQ_MOUNTS_REWRITE && cfg->mounts == FQ_MOUNTS_UNSHARE)
        probe_unshare(r);
    if (cfg->mounts == FQ_MOUNTS_REWRITE)
        r->bwrap_note = fq_xstrdup("rewrite chosen by configuration");
    /* without namespaces the pod user reaches its directory through the
     * data directory: traversable, never listable */
    if (r->mounts == FQ_MOUNTS_REWRITE && r->sb.change_ids)
        fq_sandbox_protect_dir(r->data_dir);
    probe_cgroups(r);
    /* one cgroup v2 directory per pod, for killing its whole tree: the
     * limits' own tree on a v2 machine, else a cgroup2 mount beside v1 */
    if (r->cgroups == FQ_CGROUPS_V2)
        r->cg_kill_root = fq_xstrdup(r->cg_mem_root);
    else
        r->cg_kill_root = fq_cgroup_v2_root(&r->cg_kill_note);
    return r;
}

static void cgroup_remove(const char *dir)
{
    if (dir)
        rmdir(dir);
}

void fq_runner_free(struct fq_runner *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nprocs; i++) {
        struct proc *p = &r->procs[i];
        kill(-p->pid, SIGKILL);
        fq_cgroup_kill(p->cg_kill);
        int st;
        while (waitpid(p->pid, &st, 0) < 0 && errno == EINTR)
            ;
        cgroup_remove(p->cg_mem);
        cgroup_remove(p->cg_cpu);
        fq_cgroup_reap(p->cg_kill);
        rn_proc_release(p);
    }
    free(r->procs);
    for (size_t i = 0; i < r->stale_cg.n; i++)
        fq_cgroup_reap(r->stale_cg.v[i]);
    rn_strv_release(&r->stale_cg);
    for (size_t i = 0; i < r->nlate; i++)
        rn_late_log_release(&r->late[i]);
    free(r->late);
    if (r->cg_kill_root &&
        (!r->cg_mem_root || strcmp(r->cg_kill_root, r->cg_mem_root)))
        rmdir(r->cg_kill_root);
    free(r->cg_kill_root);
    free(r->cg_kill_note);
    free(r->sb_note);
    free(r->setpriv);
    for (size_t i = 0; i < 4; i++)
        free(r->hide[i]);
    for (size_t i = 0; i < r->nexited; i++) {
        free(r->exited[i].ns);
        free(r->exited[i].name);
    }
    free(r->exited);
    cgroup_remove(r->cg_mem_root);
    if (r->cg_cpu_root &&
        (!r->cg_mem_root || strcmp(r->cg_cpu_root, r->cg_mem_root)))
        cgroup_remove(r->cg_cpu_root);
    free(r->cg_mem_root);
    free(r->cg_cpu_root);
    free(r->cg_note);
    free(r->bwrap);
    free(r->bwrap_note);
    free(r->data_dir);
    free(r->python_path);
    free(r->node_name);
    free(r->child_stack);
    if (r->self_fd >= 0)
        close(r->self_fd);
    if (r->pump_ctl >= 0) /* the pump ends once its pods have */
        close(r->pump_ctl);
    free(r);
}
