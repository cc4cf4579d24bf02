/*
 * cmdutil.c - flag parsing, manifests and errors shared by the
 * kubectl-style commands (see cmdutil.h).
 *
 * How it works: fq_cmd_parse accepts kubectl's spellings of each flag
 * (`-n X`, `-nX`, `--namespace X`, `--namespace=X`, `-A`, `-oyaml`, ...) and
 * leaves positional arguments in order. Manifests are read with the YAML
 * reader and validated with the objects module, all of them before the
 * first request, so a bad document in a file sends nothing.
 *
 * What it does not do: kubeconfig, contexts, or flags other than those
 * listed in fq_cmd_flags.
 */
#include "cmdutil.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "flexq/alloc.h"
#include "flexq/manifest.h"
#include "flexq/objects.h"
#include "flexq/paths.h"

struct flagdef {
    const char *longname;
    char shortname;
    bool takes_value;
};

static const struct flagdef defs[] = {
    {"namespace", 'n', true},    {"all-namespaces", 'A', false},
    {"selector", 'l', true},     {"output", 'o', true},
    {"filename", 'f', true},     {"for", 0, true},
    {"timeout", 0, true},        {"from-file", 0, true},
    {"from-literal", 0, true},   {"ignore-not-found", 0, false},
    {"watch", 'w', false},       {"no-headers", 0, false},
    {"pending", 0, false},       {"show-labels", 0, false},
    {"field-selector", 0, true},
};

static bool allowed_in(const char *allowed, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = allowed; p && *p;) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        if (l == n && !strncmp(p, name, n))
            return true;
        p = c ? c + 1 : p + l;
    }
    return false;
}

static int set_flag(const char *cmd, const struct flagdef *d, const char *v,
                    struct fq_cmd_flags *f)
{
    const char *n = d->longname;
    if (!strcmp(n, "namespace"))
        f->ns = v;
    else if (!strcmp(n, "all-namespaces"))
        f->all_ns = true;
    else if (!strcmp(n, "selector"))
        f->selector = v;
    else if (!strcmp(n, "output"))
        f->output = v;
    else if (!strcmp(n, "for"))
        f->for_ = v;
    else if (!strcmp(n, "timeout"))
        f->timeout = v;
    else if (!strcmp(n, "ignore-not-found"))
        f->ignore_not_found = true;
    else if (!strcmp(n, "watch"))
        f->watch = true;
    else if (!strcmp(n, "no-headers"))
        f->no_headers = true;
    else if (!strcmp(n, "pending"))
        f->pending = true;
    else if (!strcmp(n, "show-labels"))
        f->show_labels = true;
    else if (!strcmp(n, "field-selector"))
        f->field_selector = v;
    else {
        const char **arr = !strcmp(n, "filename")  ? f->files :
                           !strcmp(n, "from-file") ? f->from_file :
                                                     f->from_literal;
        int *cnt = !strcmp(n, "filename")  ? &f->nfiles :
                   !strcmp(n, "from-file") ? &f->nfrom_file :
                                             &f->nfrom_literal;
        if (*cnt == FQ_CMD_MAX_ARGS)
            return fq_cli_usage_error(cmd, "too many --%s", n) ? -1 : -1;
        arr[(*cnt)++] = v;
    }
    return 0;
}

int fq_cmd_parse(const char *cmd, int argc, char **argv, const char *allowed,
                 struct fq_cmd_flags *f)
{
    memset(f, 0, sizeof(*f));
    bool dashdash = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (dashdash || a[0] != '-' || !strcmp(a, "-")) {
            if (f->nargs == FQ_CMD_MAX_ARGS) {
                fq_cli_usage_error(cmd, "too many arguments");
                return -1;
            }
            f->args[f->nargs++] = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            dashdash = true;
            continue;
        }
        const struct flagdef *d = NULL;
        const char *val = NULL;
        if (a[1] == '-') {
            const char *name = a + 2;
            const char *eq = strchr(name, '=');
            size_t l = eq ? (size_t)(eq - name) : strlen(name);
            for (size_t k = 0; k < sizeof(defs) / sizeof(defs[0]); k++)
                if (strlen(defs[k].longname) == l &&
                    !strncmp(defs[k].longname, name, l))
                    d = &defs[k];
            if (eq)
                val = eq + 1;
        } else {
            for (size_t k = 0; k < sizeof(defs) / sizeof(defs[0]); k++)
                if (defs[k].shortname == a[1])
                    d = &defs[k];
            if (d && a[2])
                val = a[2] == '=' ? a + 3 : a + 2;
        }
        if (!d || !allowed_in(allowed, d->longname)) {
            fq_cli_usage_error(cmd, "unknown flag %s", a);
            return -1;
        }
        if (d->takes_value && !val) {
            if (i + 1 >= argc) {
                fq_cli_usage_error(cmd, "flag %s needs a value", a);
                return -1;
            }
            val = argv[++i];
        }
        if (set_flag(cmd, d, val, f) < 0)
            return -1;
    }
    return 0;
}

const char *fq_cmd_namespace(const struct fq_cmd_flags *f)
{
    if (f->ns && *f->ns)
        return f->ns;
    const char *e = getenv("FLEXQ_NAMESPACE");
    return e && *e ? e : "default";
}

enum fq_kind fq_cmd_kind(const char *cmd, const char *name)
{
    enum fq_kind k = fq_kind_lookup(name);
    if (k == FQ_KIND_NONE)
        fprintf(stderr,
                "error: the server doesn't have a resource type \"%s\"\n",
                name);
    (void)cmd;
    return k;
}

int fq_cmd_fail(int code, const struct fq_err *err)
{
    const char *msg = err && err->msg[0] ? err->msg : fq_strerror(code);
    if (code == FQ_EIO || code == FQ_ETIMEOUT || code == FQ_ELIMIT ||
        !fq_err_reason(code)[0])
        fprintf(stderr, "error: %s\n", msg);
    else
        fprintf(stderr, "Error from server (%s): %s\n", fq_err_reason(code),
                msg);
    return FQ_CLI_FAIL;
}

static void push_doc(struct fq_docs *d, struct fq_value *v)
{
    FQ_GROW(d->items, d->cap, d->n + 1);
    d->items[d->n++] = v;
}

int fq_cmd_read_manifests(const char *const *files, int nfiles, const char *ns,
                          struct fq_docs *docs)
{
    memset(docs, 0, sizeof(*docs));
    struct fq_limits lim = fq_limits_default();
    int bad = 0;
    for (int i = 0; i < nfiles; i++) {
        char *text = NULL;
        size_t len = 0;
        struct fq_err err = {0};
        const char *label = strcmp(files[i], "-") ? files[i] : "<stdin>";
        if (fq_cli_read_file(files[i], lim.max_bytes, &text, &len, &err) < 0) {
            fprintf(stderr, "error: %s\n", err.msg);
            bad++;
            continue;
        }
        struct fq_docs part = {0};
        struct fq_errlist errs;
        fq_errlist_init(&errs);
        if (fq_manifest_read(text, len, label, &part, &errs) < 0) {
            for (size_t e = 0; e < errs.n; e++)
                fprintf(stderr, "error: %s\n", errs.items[e].msg);
            if (errs.n == 0)
                fprintf(stderr, "error: %s: cannot read the manifest\n", label);
            bad++;
        }
        fq_errlist_release(&errs);
        free(text);
        for (size_t j = 0; j < part.n; j++) {
            push_doc(docs, part.items[j]);
            part.items[j] = NULL;
        }
        fq_docs_release(&part);
    }
    for (size_t j = 0; j < docs->n; j++) {
        struct fq_value *doc = docs->items[j];
        enum fq_kind k = FQ_KIND_NONE;
        fq_object_meta(doc, &k, NULL, NULL);
        if (k != FQ_KIND_NONE && fq_kind_info(k)->namespaced &&
            !fq_value_path_str(doc, FQ_META_NAMESPACE, NULL))
            fq_map_set(fq_map_ensure_map(doc, "metadata"), "namespace",
                       fq_value_str(ns));
    }
    if (bad) {
        fq_docs_release(docs);
        return -1;
    }
    return 0;
}

int64_t fq_cmd_duration(const char *s)
{
    if (!s || !*s)
        return -1;
    char *end;
    double plain = strtod(s, &end);
    if (!*end)
        return plain < 0 ? -1 : (int64_t)(plain * 1000);
    int64_t total = 0;
    const char *p = s;
    while (*p) {
        double v = strtod(p, &end);
        if (end == p || v < 0)
            return -1;
        p = end;
        double unit;
        if (!strncmp(p, "ms", 2)) {
            unit = 1;
            p += 2;
        } else if (*p == 'h') {
            unit = 3600000;
            p++;
        } else if (*p == 'm') {
            unit = 60000;
            p++;
        } else if (*p == 's') {
            unit = 1000;
            p++;
        } else if (*p == 'd') {
            unit = 86400000;
            p++;
        } else {
            return -1;
        }
        total += (int64_t)(v * unit);
    }
    return total;
}

int fq_cmd_targets(const char *cmd, const struct fq_cmd_flags *f,
                   struct fq_cmd_target *out)
{
    int n = 0;
    if (f->nargs == 0) {
        fq_cli_usage_error(cmd, "name a resource type, e.g. `workloads`");
        return -1;
    }
    if (strchr(f->args[0], '/')) {
        for (int i = 0; i < f->nargs; i++) {
            const char *slash = strchr(f->args[i], '/');
            if (!slash) {
                fq_cli_usage_error(cmd,
                                   "there is no need to give a resource "
                                   "type when using KIND/NAME (\"%s\")",
                                   f->args[i]);
                return -1;
            }
            char kind[128];
            snprintf(kind, sizeof(kind), "%.*s", (int)(slash - f->args[i]),
                     f->args[i]);
            enum fq_kind k = fq_cmd_kind(cmd, kind);
            if (k == FQ_KIND_NONE)
                return -1;
            out[n].kind = k;
            out[n++].name = slash + 1;
        }
        return n;
    }
    const char *p = f->args[0];
    enum fq_kind kinds[FQ_CMD_MAX_ARGS];
    int nk = 0;
    while (*p && nk < FQ_CMD_MAX_ARGS) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        char kind[128];
        snprintf(kind, sizeof(kind), "%.*s", (int)l, p);
        enum fq_kind k = fq_cmd_kind(cmd, kind);
        if (k == FQ_KIND_NONE)
            return -1;
        kinds[nk++] = k;
        p = c ? c + 1 : p + l;
    }
    for (int i = 0; i < nk; i++) {
        if (f->nargs == 1) {
            out[n].kind = kinds[i];
            out[n++].name = NULL;
            continue;
        }
        for (int j = 1; j < f->nargs && n < FQ_CMD_MAX_ARGS; j++) {
            out[n].kind = kinds[i];
            out[n++].name = f->args[j];
        }
    }
    return n;
}
