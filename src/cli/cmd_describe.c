/*
 * cmd_describe.c - `flexq describe KIND NAME | KIND/NAME`: one object in
 * words: identity, the kind's key facts, conditions, events and, for a
 * Workload that is not admitted, the reason it waits.
 *
 * How it works: one GET for the object and one for its Events
 * (fieldSelector involvedObject.name/kind). Workloads get a section per
 * Kueue concept (queue, pod sets, admission with flavor assignments,
 * admission checks); other kinds print spec and status as YAML, the way
 * kubectl describes custom resources. "Waiting For" is read from what the
 * controllers wrote: a QuotaReserved=False condition's message (Kueue's
 * "couldn't assign flavors ..." text), pending admission checks, a missing
 * LocalQueue, or an eviction's backoff.
 *
 * Exit status: 1 if an object is missing or a request failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmdutil.h"
#include "flexq/alloc.h"
#include "flexq/paths.h"
#include "print.h"

static void field(const char *label, const char *value)
{
    printf("%-14s%s\n", label, value && *value ? value : "<none>");
}

static void string_map(const char *label, const struct fq_value *m)
{
    if (!m || m->type != FQ_V_MAP || m->u.map.n == 0) {
        field(label, NULL);
        return;
    }
    for (size_t i = 0; i < m->u.map.n; i++) {
        const char *v = fq_value_as_str(m->u.map.items[i].val);
        printf("%-14s%s=%s\n", i == 0 ? label : "", m->u.map.items[i].key,
               v ? v : "");
    }
}

/* Prints a value as YAML, every line indented. */
static void yaml_block(const char *title, const struct fq_value *v,
                       const char *skip)
{
    if (!v || (v->type == FQ_V_MAP && v->u.map.n == 0))
        return;
    struct fq_value *copy = fq_value_clone(v);
    if (skip)
        fq_map_del(copy, skip);
    if (copy->type == FQ_V_MAP && copy->u.map.n == 0) {
        fq_value_free(copy);
        return;
    }
    struct fq_buf b = FQ_BUF_INIT;
    fq_yaml_encode(copy, &b);
    fq_value_free(copy);
    printf("%s:\n", title);
    const char *p = fq_buf_str(&b);
    if (!strncmp(p, "---\n", 4))
        p += 4;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p) : strlen(p);
        printf("  %.*s\n", (int)l, p);
        p += l + (nl ? 1 : 0);
    }
    fq_buf_release(&b);
}

static void conditions(const struct fq_value *obj, int64_t now)
{
    const struct fq_value *cs = fq_value_path(obj, FQ_STATUS_CONDITIONS);
    size_t n = fq_value_len(cs);
    if (n == 0)
        return;
    /* Columns as wide as their longest cell plus two spaces, so a long
     * reason (DeactivatedDueToAdmissionCheck) never runs into the age. */
    int w[4] = {4, 6, 6, 3}; /* Type, Status, Reason, Age */
    char(*ages)[32] = fq_xcalloc(n, sizeof(*ages));
    for (size_t i = 0; i < n; i++) {
        const struct fq_value *c = fq_seq_at(cs, i);
        fq_print_age(fq_value_path_str(c, "lastTransitionTime", NULL), now,
                     ages[i], sizeof(ages[i]));
        const char *v[4] = {fq_value_path_str(c, "type", ""),
                            fq_value_path_str(c, "status", ""),
                            fq_value_path_str(c, "reason", ""), ages[i]};
        for (int k = 0; k < 4; k++)
            if ((int)strlen(v[k]) > w[k])
                w[k] = (int)strlen(v[k]);
    }
    printf("Conditions:\n");
    printf("  %-*s  %-*s  %-*s  %-*s  %s\n", w[0], "Type", w[1], "Status", w[2],
           "Reason", w[3], "Age", "Message");
    printf("  %-*s  %-*s  %-*s  %-*s  %s\n", w[0], "----", w[1], "------", w[2],
           "------", w[3], "---", "-------");
    for (size_t i = 0; i < n; i++) {
        const struct fq_value *c = fq_seq_at(cs, i);
        printf("  %-*s  %-*s  %-*s  %-*s  %s\n", w[0],
               fq_value_path_str(c, "type", ""), w[1],
               fq_value_path_str(c, "status", ""), w[2],
               fq_value_path_str(c, "reason", ""), w[3], ages[i],
               fq_value_path_str(c, "message", ""));
    }
    free(ages);
}

static void map_inline(const struct fq_value *m, struct fq_buf *b)
{
    for (size_t i = 0; m && m->type == FQ_V_MAP && i < m->u.map.n; i++) {
        const struct fq_value *v = m->u.map.items[i].val;
        const char *s = fq_value_as_str(v);
        if (!s && v && v->type == FQ_V_NUM)
            s = v->u.num.raw;
        fq_buf_printf(b, "%s%s=%s", i ? ", " : "", m->u.map.items[i].key,
                      s ? s : "?");
    }
}

/* Sums a pod set's container requests for the "Pod Sets" lines. */
static void podset_requests(const struct fq_value *ps, struct fq_buf *b)
{
    const struct fq_value *cs = fq_value_path(ps, FQ_TEMPLATE_CONTAINERS);
    for (size_t i = 0; i < fq_value_len(cs); i++) {
        const struct fq_value *r =
            fq_value_path(fq_seq_at(cs, i), FQ_CTR_REQUESTS);
        if (b->len && r)
            fq_buf_puts(b, "; ");
        map_inline(r, b);
    }
}

static bool local_queue_exists(struct fq_client *c, const char *ns,
                               const char *lq)
{
    char *path = fq_client_path(FQ_KIND_LOCALQUEUE, ns, lq, NULL, NULL);
    struct fq_err err = {0};
    int r = fq_client_get(c, path, NULL, &err);
    free(path);
    return r != FQ_ENOTFOUND;
}

static void waiting_for(struct fq_client *c, const struct fq_value *wl)
{
    if (!strcmp(fq_print_condition(wl, "Finished"), "True") ||
        !strcmp(fq_print_condition(wl, "Admitted"), "True"))
        return;
    const char *ns = fq_value_path_str(wl, FQ_META_NAMESPACE, "default");
    const char *q = fq_value_path_str(wl, FQ_WL_QUEUE_NAME, NULL);
    struct fq_buf why = FQ_BUF_INIT;
    if (!q)
        fq_buf_puts(&why, "no queue: set spec.queueName (the label "
                          "kueue.x-k8s.io/queue-name on a job)");
    else if (!local_queue_exists(c, ns, q))
        fq_buf_printf(&why, "LocalQueue %s doesn't exist in namespace %s", q,
                      ns);
    const struct fq_value *cs = fq_value_path(wl, FQ_STATUS_CONDITIONS);
    for (size_t i = 0; !why.len && i < fq_value_len(cs); i++) {
        const struct fq_value *cd = fq_seq_at(cs, i);
        const char *t = fq_value_path_str(cd, "type", "");
        const char *st = fq_value_path_str(cd, "status", "");
        if ((!strcmp(t, "QuotaReserved") && !strcmp(st, "False")) ||
            (!strcmp(t, "Evicted") && !strcmp(st, "True")) ||
            (!strcmp(t, "Requeued") && !strcmp(st, "False")))
            fq_buf_printf(&why, "%s: %s", fq_value_path_str(cd, "reason", t),
                          fq_value_path_str(cd, "message", ""));
    }
    const struct fq_value *acs = fq_value_path(wl, FQ_WL_ADMISSION_CHECKS);
    for (size_t i = 0; !why.len && i < fq_value_len(acs); i++) {
        const struct fq_value *a = fq_seq_at(acs, i);
        if (strcmp(fq_value_path_str(a, "state", ""), "Ready") != 0)
            fq_buf_printf(&why, "admission check %s is %s%s%s",
                          fq_value_path_str(a, "name", "?"),
                          fq_value_path_str(a, "state", "Pending"),
                          fq_value_path_str(a, "message", NULL) ? ": " : "",
                          fq_value_path_str(a, "message", ""));
    }
    const char *req = fq_value_path_str(wl, FQ_WL_REQUEUE_AT, NULL);
    if (!why.len && req)
        fq_buf_printf(&why, "backoff until %s", req);
    if (!why.len)
        fq_buf_puts(&why, "quota reservation by the scheduler");
    field("Waiting For:", fq_buf_str(&why));
    fq_buf_release(&why);
}

static void describe_workload(struct fq_client *c, const struct fq_value *wl)
{
    field("Queue:", fq_value_path_str(wl, FQ_WL_QUEUE_NAME, NULL));
    /* The priority admission orders and preempts by: spec.priority (0
     * when unset), and the class it came from. */
    const struct fq_value *pr = fq_value_path(wl, FQ_WL_PRIORITY);
    char prio[400];
    int len =
        snprintf(prio, sizeof(prio), "%lld",
                 (long long)(pr && pr->type == FQ_V_NUM ?
                                 fq_value_path_int(wl, FQ_WL_PRIORITY, 0) :
                                 0));
    const char *pcn = fq_value_path_str(wl, FQ_SPEC_PRIORITY_CLASS, NULL);
    if (pcn && *pcn)
        snprintf(prio + len, sizeof(prio) - (size_t)len, " (%s %.200s)",
                 strstr(fq_value_path_str(wl, "spec.priorityClassSource", ""),
                        "workloadpriorityclass") ?
                     "WorkloadPriorityClass" :
                     "PriorityClass",
                 pcn);
    field("Priority:", prio);
    const struct fq_value *pss = fq_value_path(wl, FQ_WL_PODSETS);
    printf("Pod Sets:\n");
    for (size_t i = 0; i < fq_value_len(pss); i++) {
        const struct fq_value *ps = fq_seq_at(pss, i);
        struct fq_buf b = FQ_BUF_INIT;
        podset_requests(ps, &b);
        printf("  %-12s count %-4lld requests %s\n",
               fq_value_path_str(ps, "name", "?"),
               (long long)fq_value_path_int(ps, "count", 1),
               b.len ? fq_buf_str(&b) : "<none>");
        fq_buf_release(&b);
    }
    const struct fq_value *adm = fq_value_path(wl, FQ_WL_STATUS_ADMISSION);
    if (adm) {
        printf("Admission:\n");
        printf("  Cluster Queue:  %s\n",
               fq_value_path_str(adm, "clusterQueue", ""));
        const struct fq_value *psa = fq_map_get(adm, "podSetAssignments");
        for (size_t i = 0; i < fq_value_len(psa); i++) {
            const struct fq_value *a = fq_seq_at(psa, i);
            struct fq_buf fl = FQ_BUF_INIT, use = FQ_BUF_INIT;
            map_inline(fq_map_get(a, "flavors"), &fl);
            map_inline(fq_map_get(a, "resourceUsage"), &use);
            printf("  Pod Set %s (count %lld):\n",
                   fq_value_path_str(a, "name", "?"),
                   (long long)fq_value_path_int(a, "count", 0));
            printf("    Flavors:        %s\n", fq_buf_str(&fl));
            printf("    Resource Usage: %s\n", fq_buf_str(&use));
            fq_buf_release(&fl);
            fq_buf_release(&use);
        }
    }
    const struct fq_value *acs = fq_value_path(wl, FQ_WL_ADMISSION_CHECKS);
    if (fq_value_len(acs)) {
        printf("Admission Checks:\n");
        printf("  %-20s%-10s%s\n", "Name", "State", "Message");
        for (size_t i = 0; i < fq_value_len(acs); i++) {
            const struct fq_value *a = fq_seq_at(acs, i);
            printf("  %-20s%-10s%s\n", fq_value_path_str(a, "name", ""),
                   fq_value_path_str(a, "state", ""),
                   fq_value_path_str(a, "message", ""));
        }
    }
    waiting_for(c, wl);
}

static void events(struct fq_client *c, enum fq_kind kind,
                   const struct fq_value *obj, int64_t now)
{
    const char *ns = fq_value_path_str(obj, FQ_META_NAMESPACE, NULL);
    const char *name = fq_meta_name(obj);
    char *sel = fq_xasprintf("involvedObject.name=%s,involvedObject.kind=%s",
                             name, fq_kind_info(kind)->name);
    char *esc = fq_client_escape(sel);
    char *q = fq_xasprintf("fieldSelector=%s", esc);
    char *path = fq_client_path(FQ_KIND_EVENT, ns, NULL, NULL, q);
    struct fq_value *list = NULL;
    struct fq_err err = {0};
    int r = fq_client_get(c, path, &list, &err);
    const struct fq_value *items = fq_map_get(list, "items");
    size_t n = fq_value_len(items);
    if (r < 0) {
        printf("Events:       <unable to list: %s>\n", err.msg);
    } else if (n == 0) {
        printf("Events:       <none>\n");
    } else {
        printf("Events:\n");
        const struct fq_value **evs = fq_xcalloc(n, sizeof(*evs));
        for (size_t i = 0; i < n; i++)
            evs[i] = fq_seq_at(items, i);
        /* Oldest first, as kubectl describe shows them. */
        for (size_t i = 1; i < n; i++)
            for (size_t j = i;
                 j > 0 &&
                 strcmp(fq_value_path_str(evs[j - 1], "lastTimestamp", ""),
                        fq_value_path_str(evs[j], "lastTimestamp", "")) > 0;
                 j--) {
                const struct fq_value *t = evs[j];
                evs[j] = evs[j - 1];
                evs[j - 1] = t;
            }
        fq_print_events(evs, n, false, now, "  ", stdout);
        free(evs);
    }
    fq_value_free(list);
    free(path);
    free(q);
    free(esc);
    free(sel);
}

static void describe(struct fq_client *c, enum fq_kind kind,
                     const struct fq_value *obj)
{
    int64_t now = fq_print_now();
    const struct fq_kind_info *ki = fq_kind_info(kind);
    field("Name:", fq_meta_name(obj));
    if (ki->namespaced)
        field("Namespace:", fq_meta_namespace(obj));
    string_map("Labels:", fq_meta_labels(obj));
    string_map("Annotations:", fq_meta_annotations(obj));
    field("API Version:", fq_value_path_str(obj, "apiVersion", ""));
    field("Kind:", fq_value_path_str(obj, "kind", ""));
    const char *ts = fq_value_path_str(obj, FQ_META_CREATED, "");
    char age[32], created[96];
    fq_print_age(ts, now, age, sizeof(age));
    snprintf(created, sizeof(created), "%s (%s ago)", ts, age);
    field("Created:", created);
    if (kind == FQ_KIND_WORKLOAD) {
        describe_workload(c, obj);
    } else {
        yaml_block("Spec", fq_map_get(obj, "spec"), NULL);
        if (kind == FQ_KIND_CONFIGMAP)
            yaml_block("Data", fq_map_get(obj, "data"), NULL);
        yaml_block("Status", fq_map_get(obj, "status"), "conditions");
    }
    fq_cli_estimate_section(c, obj); /* pending jobs: cmd_estimate.c */
    conditions(obj, now);
    events(c, kind, obj, now);
}

static int run(int argc, char **argv)
{
    struct fq_cmd_flags f;
    if (fq_cmd_parse("describe", argc, argv,
                     "namespace,all-namespaces,selector", &f) < 0)
        return FQ_CLI_FAIL;
    struct fq_cmd_target t[FQ_CMD_MAX_ARGS];
    int nt = fq_cmd_targets("describe", &f, t);
    if (nt < 0)
        return FQ_CLI_FAIL;
    const char *ns = f.all_ns ? NULL : fq_cmd_namespace(&f);
    struct fq_client *c = fq_client_new(NULL, NULL);
    int rc = FQ_CLI_OK;
    bool first = true;
    for (int i = 0; i < nt; i++) {
        struct fq_value *got = NULL;
        struct fq_err err = {0};
        char *q = NULL;
        if (!t[i].name && f.selector) {
            char *esc = fq_client_escape(f.selector);
            q = fq_xasprintf("labelSelector=%s", esc);
            free(esc);
        }
        char *path = fq_client_path(
            t[i].kind, t[i].name && !ns ? "default" : ns, t[i].name, NULL, q);
        int r = fq_client_get(c, path, &got, &err);
        free(path);
        free(q);
        if (r < 0) {
            rc = fq_cmd_fail(r, &err);
            if (r == FQ_EIO)
                break;
            continue;
        }
        const struct fq_value *items = fq_map_get(got, "items");
        size_t n = t[i].name ? 1 : fq_value_len(items);
        for (size_t k = 0; k < n; k++) {
            if (!first)
                printf("\n\n");
            first = false;
            describe(c, t[i].kind, t[i].name ? got : fq_seq_at(items, k));
        }
        if (!t[i].name && n == 0)
            fprintf(stderr, "No resources found\n");
        fq_value_free(got);
    }
    fflush(stdout);
    fq_client_free(c);
    return rc;
}

const struct fq_cli_cmd fq_cli_cmd_describe = {
    "describe", run, "Show an object in detail, with its events",
    "Usage: flexq describe KIND [NAME...] [-n NAMESPACE] [-l SELECTOR]\n"
    "       flexq describe KIND/NAME...\n"
    "\n"
    "Prints identity, the key fields of the kind, conditions and events.\n"
    "For a Workload: queue, pod sets, the admission (cluster queue and\n"
    "flavors), admission checks and, when it is not admitted, the reason\n"
    "it waits.\n"
    "\n"
    "  -n, --namespace NS     namespace (default \"default\")\n"
    "  -A, --all-namespaces   every namespace (without NAME)\n"
    "  -l, --selector SEL     objects whose labels match (without NAME)\n"};
