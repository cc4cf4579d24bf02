/*
 * auth.c - bearer tokens and the two roles of flexqd (see auth.h).
 *
 * How it works: the tokens file is read once at start into an array; a
 * request's `Authorization: Bearer T` is looked up by constant-time
 * comparison (so response timing does not leak a prefix), then the verb,
 * kind and namespace are checked against the role:
 *
 *   admin      everything
 *   developer  own namespaces only:
 *                read+write  rayjobs, jobs, workloads, configmaps,
 *                            secrets
 *                read        pods (and their log), events, localqueues,
 *                            rayclusters, services
 *                create      pods/portforward (kubectl port-forward)
 *              nothing cluster-scoped, no list across all namespaces
 *
 * Invariants: a token line with an unknown role, or a developer without
 * namespaces, is a load error, so a typo never grants access; an unknown or
 * missing token is 401, a known token doing what its role may not is 403.
 *
 * What it does not do: TLS, expiry, reloading the file while running.
 */
#include "api/auth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "flexq/alloc.h"
#include "log.h"

#define MAX_NS 32

struct token {
    char *token;
    char *user;
    bool admin;
    char *ns[MAX_NS];
    int nns;
};

struct fq_auth {
    struct token *items;
    size_t n, cap;
};

void fq_auth_free(struct fq_auth *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++) {
        free(a->items[i].token);
        free(a->items[i].user);
        for (int j = 0; j < a->items[i].nns; j++)
            free(a->items[i].ns[j]);
    }
    free(a->items);
    free(a);
}

static int parse_line(struct fq_auth *a, char *line, const char *file,
                      int lineno, struct fq_err *err)
{
    char *save = NULL;
    char *tok = strtok_r(line, " \t\r\n", &save);
    if (!tok || *tok == '#')
        return 0;
    char *role = strtok_r(NULL, " \t\r\n", &save);
    char *user = strtok_r(NULL, " \t\r\n", &save);
    char *nss = strtok_r(NULL, " \t\r\n", &save);
    if (!role || !user)
        return fq_err_set(err, FQ_EINVAL,
                          "%s:%d: expected `TOKEN ROLE USER [NAMESPACES]`",
                          file, lineno);
    bool admin = !strcmp(role, "admin");
    if (!admin && strcmp(role, "developer") != 0)
        return fq_err_set(err, FQ_EINVAL,
                          "%s:%d: role \"%s\" is neither admin nor "
                          "developer",
                          file, lineno, role);
    if (!admin && !nss)
        return fq_err_set(err, FQ_EINVAL,
                          "%s:%d: a developer token needs namespaces "
                          "(comma-separated)",
                          file, lineno);
    if (strlen(tok) < 8)
        return fq_err_set(err, FQ_EINVAL,
                          "%s:%d: token too short (8 characters at least)",
                          file, lineno);
    FQ_GROW(a->items, a->cap, a->n + 1);
    struct token *t = &a->items[a->n++];
    memset(t, 0, sizeof(*t));
    t->token = fq_xstrdup(tok);
    t->user = fq_xstrdup(user);
    t->admin = admin;
    char *s2 = NULL;
    for (char *ns = nss ? strtok_r(nss, ",", &s2) : NULL; ns;
         ns = strtok_r(NULL, ",", &s2)) {
        if (t->nns == MAX_NS)
            return fq_err_set(err, FQ_ELIMIT, "%s:%d: more than %d namespaces",
                              file, lineno, MAX_NS);
        t->ns[t->nns++] = fq_xstrdup(ns);
    }
    return 0;
}

int fq_auth_parse(const char *text, size_t len, const char *file,
                  struct fq_auth **out, struct fq_err *err)
{
    if (len > FQ_AUTH_MAX_FILE)
        return fq_err_set(err, FQ_ELIMIT, "%s: larger than %u bytes", file,
                          FQ_AUTH_MAX_FILE);
    struct fq_auth *a = fq_xcalloc(1, sizeof(*a));
    char line[FQ_AUTH_MAX_LINE + 1];
    int lineno = 0, rc = 0;
    size_t pos = 0;
    while (rc == 0 && pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t l = nl ? (size_t)(nl - (text + pos)) : len - pos;
        lineno++;
        if (l > FQ_AUTH_MAX_LINE) {
            rc = fq_err_set(err, FQ_ELIMIT,
                            "%s:%d: line longer than %d characters", file,
                            lineno, FQ_AUTH_MAX_LINE);
            break;
        }
        if (memchr(text + pos, '\0', l)) {
            rc = fq_err_set(err, FQ_EINVAL, "%s:%d: NUL byte in the line", file,
                            lineno);
            break;
        }
        memcpy(line, text + pos, l);
        line[l] = '\0';
        pos += l + (nl ? 1 : 0);
        rc = parse_line(a, line, file, lineno, err);
    }
    if (rc == 0 && a->n == 0)
        rc = fq_err_set(err, FQ_EINVAL, "%s: no tokens", file);
    if (rc < 0) {
        fq_auth_free(a);
        return rc;
    }
    *out = a;
    return 0;
}

int fq_auth_load(const char *file, struct fq_auth **out, struct fq_err *err)
{
    FILE *f = fopen(file, "re");
    if (!f)
        return fq_err_set(err, FQ_EIO, "--tokens: cannot read %s", file);
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077))
        fq_log(FQ_LOG_WARN, "tokens file readable by others",
               "file=%s mode=%03o hint=\"chmod 600\"", file,
               (unsigned)(st.st_mode & 0777));
    char *text = fq_xmalloc(FQ_AUTH_MAX_FILE + 1);
    size_t len = fread(text, 1, FQ_AUTH_MAX_FILE + 1, f);
    bool bad = ferror(f);
    fclose(f);
    int rc = bad ? fq_err_set(err, FQ_EIO, "--tokens: cannot read %s", file) :
                   fq_auth_parse(text, len, file, out, err);
    free(text);
    return rc;
}

/* Compares without stopping at the first difference. */
static bool same_secret(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned char diff = (unsigned char)(la != lb);
    for (size_t i = 0; i < la; i++)
        diff |= (unsigned char)(a[i] ^ b[i < lb ? i : 0]);
    return diff == 0;
}

static const struct token *find(const struct fq_auth *a, const char *tok)
{
    const struct token *hit = NULL;
    for (size_t i = 0; i < a->n; i++)
        if (same_secret(a->items[i].token, tok))
            hit = &a->items[i];
    return hit;
}

int fq_auth_identify(const struct fq_auth *a, const char *authz,
                     struct fq_principal *who, struct fq_err *err)
{
    who->user = NULL;
    who->admin = false;
    who->id = NULL;
    if (!authz || !*authz)
        return fq_err_set(err, FQ_EUNAUTH,
                          "this server needs a bearer token: pass --token "
                          "or set FLEXQ_TOKEN");
    if (strncmp(authz, "Bearer ", 7) != 0)
        return fq_err_set(err, FQ_EUNAUTH,
                          "the Authorization header must be `Bearer TOKEN`");
    const struct token *t = find(a, authz + 7);
    if (!t)
        return fq_err_set(err, FQ_EUNAUTH, "the token is not valid");
    who->user = t->user;
    who->admin = t->admin;
    who->id = t;
    return 0;
}

void fq_auth_principal(const struct fq_auth *a, const void *id,
                       struct fq_principal *who)
{
    const struct token *t = id;
    if (!a || !t || t < a->items || t >= a->items + a->n) {
        *who = (struct fq_principal){NULL, false, NULL};
        return;
    }
    *who = (struct fq_principal){t->user, t->admin, t};
}

static bool is_read(const char *verb)
{
    return !strcmp(verb, "get") || !strcmp(verb, "list") ||
           !strcmp(verb, "watch");
}

int fq_auth_allow(const struct fq_auth *a, const struct fq_principal *who,
                  const char *verb, enum fq_kind kind, const char *ns,
                  const char *sub, struct fq_err *err)
{
    if (!a || who->admin)
        return 0;
    /* The token the request was identified by, never a lookup by user
     * name: two tokens may name the same user with other namespaces. */
    const struct token *t = who->id;
    const struct fq_kind_info *ki = fq_kind_info(kind);
    if (!t || t < a->items || t >= a->items + a->n)
        return fq_err_set(err, FQ_EFORBIDDEN, "unknown token");
    if (!ki->namespaced)
        return fq_err_set(err, FQ_EFORBIDDEN,
                          "user \"%s\" (developer) cannot %s %s: "
                          "cluster-scoped objects need an admin token",
                          who->user, verb, ki->plural);
    if (!ns)
        return fq_err_set(err, FQ_EFORBIDDEN,
                          "user \"%s\" (developer) cannot %s %s in all "
                          "namespaces; name one with -n",
                          who->user, verb, ki->plural);
    bool mine = false;
    for (int i = 0; i < t->nns; i++)
        mine |= !strcmp(t->ns[i], ns);
    if (!mine)
        return fq_err_set(err, FQ_EFORBIDDEN,
                          "user \"%s\" (developer) cannot %s %s in "
                          "namespace \"%s\"",
                          who->user, verb, ki->plural, ns);
    /* the job kinds a developer submits (docs/integrations.md) */
    bool rw = kind == FQ_KIND_RAYJOB || kind == FQ_KIND_JOB ||
              kind == FQ_KIND_WORKLOAD || kind == FQ_KIND_CONFIGMAP ||
              kind == FQ_KIND_SECRET || kind == FQ_KIND_JOBSET ||
              kind == FQ_KIND_PYTORCHJOB || kind == FQ_KIND_MPIJOB ||
              kind == FQ_KIND_LEADERWORKERSET || kind == FQ_KIND_TRAINJOB;
    bool ro = kind == FQ_KIND_POD || kind == FQ_KIND_EVENT ||
              kind == FQ_KIND_LOCALQUEUE || kind == FQ_KIND_RAYCLUSTER ||
              kind == FQ_KIND_SERVICE;
    /* kubectl port-forward to the developer's own pods, as Kubernetes'
     * `edit` role grants it (create on pods/portforward). */
    bool forward = kind == FQ_KIND_POD && sub && !strcmp(sub, "portforward") &&
                   !strcmp(verb, "create");
    bool reading = is_read(verb);
    if (sub && !strcmp(sub, "status") && !reading)
        return fq_err_set(err, FQ_EFORBIDDEN,
                          "user \"%s\" (developer) cannot change the status "
                          "of %s",
                          who->user, ki->plural);
    if (rw || (ro && reading) || (sub && !strcmp(sub, "log") && reading) ||
        forward)
        return 0;
    return fq_err_set(err, FQ_EFORBIDDEN,
                      "user \"%s\" (developer) cannot %s %s in namespace "
                      "\"%s\"",
                      who->user, verb, ki->plural, ns);
}

int fq_auth_allow_somewhere(const struct fq_auth *a,
                            const struct fq_principal *who, const char *verb,
                            enum fq_kind kind, const char *sub,
                            struct fq_err *err)
{
    if (!a || who->admin)
        return 0;
    const struct token *t = who->id;
    if (!t || t < a->items || t >= a->items + a->n)
        return fq_err_set(err, FQ_EFORBIDDEN, "unknown token");
    int rc = FQ_EFORBIDDEN;
    for (int i = 0; i < t->nns && rc < 0; i++)
        rc = fq_auth_allow(a, who, verb, kind, t->ns[i], sub, err);
    return rc;
}
