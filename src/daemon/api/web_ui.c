/*
 * web_ui.c - the dashboard's pages as plain server-rendered HTML, for
 * browsers without JavaScript (and for curl): /ui/overview, /ui/jobs,
 * /ui/capacity, /ui/events. The JavaScript dashboard (web/app.js) shows
 * the same facts live; these are its fallback, linked from its
 * <noscript> block.
 *
 * How: each page lists objects from the engine's store and writes one
 * or two <table>s; every string from an object is HTML-escaped. Times are
 * the engine's (fq_daemon_now), durations rounded to seconds.
 *
 * Not done: filtering and paging (the JavaScript page filters); tables
 * are capped at MAX_ROWS rows, newest events first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/status.h"
#include "api/web.h"
#include "flexq/alloc.h"
#include "flexq/conditions.h"
#include "flexq/paths.h"
#include "flexq/timefmt.h"

#define MAX_ROWS 500

/* Leaves in os[] the objects the caller of r may list (all without
 * --tokens); returns how many. */
static size_t visible(struct fq_daemon *d, struct fq_http_req *r,
                      enum fq_kind kind, const struct fq_object **os, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (fq_api_may(d, r, "list", kind, os[i]->ns))
            os[k++] = os[i];
    return k;
}

static void td(struct fq_buf *b, const char *s)
{
    fq_buf_puts(b, "<td>");
    fq_buf_put_xml(b, s);
    fq_buf_puts(b, "</td>");
}

static void th_row(struct fq_buf *b, const char *const *cols)
{
    fq_buf_puts(b, "<table><thead><tr>");
    for (; *cols; cols++)
        fq_buf_printf(b, "<th>%s</th>", *cols);
    fq_buf_puts(b, "</tr></thead><tbody>\n");
}

static const char *true_at(const struct fq_value *obj, const char *type)
{
    const struct fq_value *c = fq_cond_find(obj, type);
    if (!c || strcmp(fq_value_path_str(c, "status", ""), "True"))
        return NULL;
    return fq_value_path_str(c, "lastTransitionTime", "");
}

static int64_t ms_of(const char *ts)
{
    int64_t ms = 0;
    if (!ts || fq_time_parse(ts, &ms) < 0)
        return 0;
    return ms;
}

static void dur(char *buf, size_t n, int64_t ms)
{
    int64_t s = ms < 0 ? 0 : ms / 1000;
    if (s < 120)
        snprintf(buf, n, "%llds", (long long)s);
    else if (s < 7200)
        snprintf(buf, n, "%lldm%02llds", (long long)(s / 60),
                 (long long)(s % 60));
    else
        snprintf(buf, n, "%lldh%02lldm", (long long)(s / 3600),
                 (long long)(s / 60 % 60));
}

static void begin(struct fq_buf *b, const char *title)
{
    fq_buf_puts(b, "<!doctype html><html lang=\"en\"><head><meta "
                   "charset=\"utf-8\"><meta name=\"viewport\" "
                   "content=\"width=device-width\"><title>flexq - ");
    fq_buf_put_xml(b, title);
    fq_buf_puts(b, "</title><link rel=\"stylesheet\" href=\"/style.css\">"
                   "</head><body class=\"plain\"><header><b>flexq</b> <nav>"
                   "<a href=\"/ui/overview\">Overview</a> "
                   "<a href=\"/ui/jobs\">Jobs</a> "
                   "<a href=\"/ui/capacity\">Capacity</a> "
                   "<a href=\"/ui/events\">Events</a> "
                   "<a href=\"/metrics\">Metrics</a></nav></header><main>");
    fq_buf_puts(b, "<h1>");
    fq_buf_put_xml(b, title);
    fq_buf_puts(b, "</h1>\n");
}

/* The flavor a workload's accelerators (or else its first podset) got. */
static void flavors_of(const struct fq_value *wl, char *out, size_t n)
{
    out[0] = '\0';
    const struct fq_value *psa = fq_value_path(wl, FQ_WL_PODSET_ASSIGNMENTS);
    const char *first = NULL;
    for (size_t p = 0; p < fq_value_len(psa); p++) {
        const struct fq_value *fl = fq_map_get(fq_seq_at(psa, p), "flavors");
        for (size_t k = 0; fl && fl->type == FQ_V_MAP && k < fl->u.map.n; k++) {
            const char *res = fl->u.map.items[k].key;
            const char *f = fq_value_as_str(fl->u.map.items[k].val);
            if (!f)
                continue;
            if (!first)
                first = f;
            if (strcmp(res, "cpu") && strcmp(res, "memory")) {
                snprintf(out, n, "%s", f);
                return;
            }
        }
    }
    snprintf(out, n, "%s", first ? first : "");
}

/* A workload's state in a word, and since when it has been waiting or
 * running. */
static const char *state_of(const struct fq_value *wl)
{
    if (true_at(wl, "Finished"))
        return "Finished";
    if (true_at(wl, "Evicted") && fq_value_path(wl, FQ_WL_STATUS_ADMISSION))
        return "Evicting";
    if (true_at(wl, "Admitted"))
        return true_at(wl, "PodsReady") ? "Running" : "Admitted";
    if (true_at(wl, "QuotaReserved"))
        return "WaitingForChecks";
    if (!fq_value_path_bool(wl, FQ_WL_ACTIVE, true))
        return "Deactivated";
    return "Pending";
}

static void page_overview(struct fq_daemon *d, struct fq_buf *b)
{
    struct fq_objstore *s = fq_engine_store(d->engine);
    begin(b, "Overview");
    const struct fq_object **cqs = NULL;
    size_t n = fq_objstore_list(s, FQ_KIND_CLUSTERQUEUE, NULL, &cqs);
    static const char *const cols[] = {
        "ClusterQueue", "Cohort",  "Flavor",  "Resource", "Reserved",
        "Borrowed",     "Nominal", "Pending", "Admitted", NULL};
    th_row(b, cols);
    for (size_t i = 0; i < n; i++) {
        const struct fq_value *cq = cqs[i]->obj;
        const struct fq_value *rgs = fq_value_path(cq, FQ_CQ_RESOURCE_GROUPS);
        const struct fq_value *fr =
            fq_value_path(cq, FQ_WL_FLAVORS_RESERVATION);
        for (size_t g = 0; g < fq_value_len(rgs); g++) {
            const struct fq_value *fl =
                fq_map_get(fq_seq_at(rgs, g), "flavors");
            for (size_t f = 0; f < fq_value_len(fl); f++) {
                const struct fq_value *fv = fq_seq_at(fl, f);
                const char *flv = fq_value_path_str(fv, "name", "");
                const struct fq_value *rs = fq_map_get(fv, "resources");
                for (size_t r = 0; r < fq_value_len(rs); r++) {
                    const struct fq_value *rv = fq_seq_at(rs, r);
                    const char *res = fq_value_path_str(rv, "name", "");
                    const char *tot = "0", *bor = "0";
                    for (size_t k = 0; k < fq_value_len(fr); k++) {
                        const struct fq_value *fe = fq_seq_at(fr, k);
                        if (strcmp(fq_value_path_str(fe, "name", ""), flv))
                            continue;
                        const struct fq_value *rr = fq_map_get(fe, "resources");
                        for (size_t q = 0; q < fq_value_len(rr); q++) {
                            const struct fq_value *x = fq_seq_at(rr, q);
                            if (!strcmp(fq_value_path_str(x, "name", ""),
                                        res)) {
                                tot = fq_value_path_str(x, "total", "0");
                                bor = fq_value_path_str(x, "borrowed", "0");
                            }
                        }
                    }
                    const struct fq_value *nq = fq_map_get(rv, "nominalQuota");
                    char nom[64];
                    if (nq && nq->type == FQ_V_NUM)
                        snprintf(nom, sizeof(nom), "%s", nq->u.num.raw);
                    else
                        snprintf(nom, sizeof(nom), "%s",
                                 nq && fq_value_as_str(nq) ?
                                     fq_value_as_str(nq) :
                                     "0");
                    char pend[24], adm[24];
                    snprintf(pend, sizeof(pend), "%lld",
                             (long long)fq_value_path_int(
                                 cq, "status.pendingWorkloads", 0));
                    snprintf(adm, sizeof(adm), "%lld",
                             (long long)fq_value_path_int(
                                 cq, "status.admittedWorkloads", 0));
                    fq_buf_puts(b, "<tr>");
                    td(b, cqs[i]->name);
                    td(b, fq_value_path_str(cq, FQ_CQ_COHORT, ""));
                    td(b, flv);
                    td(b, res);
                    td(b, tot);
                    td(b, bor);
                    td(b, nom);
                    td(b, pend);
                    td(b, adm);
                    fq_buf_puts(b, "</tr>\n");
                }
            }
        }
    }
    fq_buf_puts(b, "</tbody></table>\n");
    free(cqs);
}

static void page_jobs(struct fq_daemon *d, struct fq_http_req *r,
                      struct fq_buf *b)
{
    struct fq_objstore *s = fq_engine_store(d->engine);
    int64_t now = fq_daemon_now(d);
    begin(b, "Jobs");
    const struct fq_object **ws = NULL;
    size_t n = fq_objstore_list(s, FQ_KIND_WORKLOAD, NULL, &ws);
    n = visible(d, r, FQ_KIND_WORKLOAD, ws, n);
    static const char *const cols[] = {"Name",  "Namespace", "Queue", "Flavor",
                                       "State", "Waited",    "Ran",   "Cost",
                                       "Why",   NULL};
    th_row(b, cols);
    for (size_t i = 0; i < n && i < MAX_ROWS; i++) {
        const struct fq_value *w = ws[i]->obj;
        const char *job = fq_value_path_str(fq_seq_at(fq_meta_owners(w), 0),
                                            "name", ws[i]->name);
        int64_t created = ms_of(fq_value_path_str(w, FQ_META_CREATED, NULL));
        const char *adm = true_at(w, "Admitted");
        const char *fin = true_at(w, "Finished");
        int64_t adm_ms = adm ? ms_of(adm) : 0;
        char waited[32], ran[32] = "", flv[64];
        dur(waited, sizeof(waited), (adm ? adm_ms : now) - created);
        if (adm)
            dur(ran, sizeof(ran), (fin ? ms_of(fin) : now) - adm_ms);
        flavors_of(w, flv, sizeof(flv));
        const char *usd = fq_value_path_str(w, FQ_STATUS_COST_USD, "");
        const struct fq_value *qr = fq_cond_find(w, "QuotaReserved");
        const struct fq_value *ac = fq_cond_find(w, "Admitted");
        const char *why = "";
        if (!adm && !fin)
            why = fq_value_path_str(true_at(w, "QuotaReserved") ? ac : qr,
                                    "message", "");
        fq_buf_puts(b, "<tr>");
        td(b, job);
        td(b, ws[i]->ns);
        td(b, fq_value_path_str(w, FQ_WL_QUEUE_NAME, ""));
        td(b, flv);
        td(b, state_of(w));
        td(b, waited);
        td(b, ran);
        td(b, usd);
        td(b, why);
        fq_buf_puts(b, "</tr>\n");
    }
    fq_buf_puts(b, "</tbody></table>\n");
    free(ws);
}

static void page_capacity(struct fq_daemon *d, struct fq_buf *b)
{
    struct fq_objstore *s = fq_engine_store(d->engine);
    int64_t now = fq_daemon_now(d);
    begin(b, "Capacity");
    const struct fq_object **ps = NULL, **ns = NULL, **rs = NULL;
    size_t np = fq_objstore_list(s, FQ_KIND_NODEPOOL, NULL, &ps);
    size_t nn = fq_objstore_list(s, FQ_KIND_NODE, NULL, &ns);
    size_t nr = fq_objstore_list(s, FQ_KIND_PROVISIONINGREQUEST, NULL, &rs);
    fq_buf_puts(b, "<h2>Node pools</h2>\n");
    static const char *const pc[] = {"Pool",  "Machine",    "Nodes", "Ready",
                                     "Phase", "Cost (USD)", NULL};
    th_row(b, pc);
    for (size_t i = 0; i < np; i++) {
        const struct fq_value *p = ps[i]->obj;
        char c1[24], c2[24];
        snprintf(c1, sizeof(c1), "%lld",
                 (long long)fq_value_path_int(p, FQ_POOL_NODE_COUNT, 0));
        snprintf(c2, sizeof(c2), "%lld",
                 (long long)fq_value_path_int(p, "status.readyNodeCount", 0));
        fq_buf_puts(b, "<tr>");
        td(b, ps[i]->name);
        td(b, fq_value_path_str(p, FQ_POOL_MACHINE_TYPE, ""));
        td(b, c1);
        td(b, c2);
        td(b, fq_value_path_str(p, FQ_POD_PHASE, ""));
        td(b, fq_value_path_str(p, FQ_STATUS_COST_USD, ""));
        fq_buf_puts(b, "</tr>\n");
    }
    fq_buf_puts(b, "</tbody></table>\n<h2>Nodes</h2>\n");
    static const char *const nc[] = {"Node", "Pool", "Ready", "Taints", NULL};
    th_row(b, nc);
    for (size_t i = 0; i < nn && i < MAX_ROWS; i++) {
        const struct fq_value *o = ns[i]->obj;
        struct fq_buf t = FQ_BUF_INIT;
        const struct fq_value *ts = fq_value_path(o, FQ_NODE_TAINTS);
        for (size_t k = 0; k < fq_value_len(ts); k++) {
            const struct fq_value *x = fq_seq_at(ts, k);
            fq_buf_printf(&t, "%s%s=%s:%s", k ? ", " : "",
                          fq_value_path_str(x, "key", ""),
                          fq_value_path_str(x, "value", ""),
                          fq_value_path_str(x, "effect", ""));
        }
        fq_buf_puts(b, "<tr>");
        td(b, ns[i]->name);
        td(b, fq_value_as_str(fq_map_get(fq_meta_labels(o),
                                         "cloud.google.com/gke-nodepool")));
        td(b, true_at(o, "Ready") ? "True" : "False");
        td(b, fq_buf_str(&t));
        fq_buf_puts(b, "</tr>\n");
        fq_buf_release(&t);
    }
    fq_buf_puts(b, "</tbody></table>\n<h2>ProvisioningRequests</h2>\n");
    static const char *const rc[] = {"Namespace", "Name",    "Class", "State",
                                     "Age",       "Message", NULL};
    th_row(b, rc);
    static const char *const states[] = {"CapacityRevoked", "BookingExpired",
                                         "Failed", "Provisioned", "Accepted"};
    for (size_t i = 0; i < nr && i < MAX_ROWS; i++) {
        const struct fq_value *o = rs[i]->obj;
        const char *st = "Pending", *msg = "";
        for (size_t k = 0; k < 5; k++)
            if (true_at(o, states[k])) {
                st = states[k];
                break;
            }
        const struct fq_value *last = NULL;
        const struct fq_value *cs = fq_value_path(o, FQ_STATUS_CONDITIONS);
        if (fq_value_len(cs))
            last = fq_seq_at(cs, fq_value_len(cs) - 1);
        msg = fq_value_path_str(last, "message", "");
        char age[32];
        dur(age, sizeof(age),
            now - ms_of(fq_value_path_str(o, FQ_META_CREATED, NULL)));
        fq_buf_puts(b, "<tr>");
        td(b, rs[i]->ns);
        td(b, rs[i]->name);
        td(b, fq_value_path_str(o, FQ_PR_CLASS, ""));
        td(b, st);
        td(b, age);
        td(b, msg);
        fq_buf_puts(b, "</tr>\n");
    }
    fq_buf_puts(b, "</tbody></table>\n");
    free(ps);
    free(ns);
    free(rs);
}

static int event_cmp(const void *x, const void *y)
{
    const struct fq_object *a = *(const struct fq_object *const *)x;
    const struct fq_object *b = *(const struct fq_object *const *)y;
    return a->rv < b->rv ? 1 : a->rv > b->rv ? -1 : 0;
}

static void page_events(struct fq_daemon *d, struct fq_http_req *r,
                        struct fq_buf *b)
{
    struct fq_objstore *s = fq_engine_store(d->engine);
    begin(b, "Events");
    const struct fq_object **es = NULL;
    size_t n = fq_objstore_list(s, FQ_KIND_EVENT, NULL, &es);
    n = visible(d, r, FQ_KIND_EVENT, es, n);
    qsort(es, n, sizeof(*es), event_cmp);
    static const char *const cols[] = {"Last seen", "Type",    "Reason",
                                       "Object",    "Message", NULL};
    th_row(b, cols);
    for (size_t i = 0; i < n && i < MAX_ROWS; i++) {
        const struct fq_value *e = es[i]->obj;
        char obj[300];
        snprintf(obj, sizeof(obj), "%s/%s",
                 fq_value_path_str(e, FQ_EVENT_OBJECT_KIND, ""),
                 fq_value_path_str(e, FQ_EVENT_OBJECT_NAME, ""));
        fq_buf_puts(b, "<tr>");
        td(b, fq_value_path_str(e, "lastTimestamp", ""));
        td(b, fq_value_path_str(e, "type", ""));
        td(b, fq_value_path_str(e, "reason", ""));
        td(b, obj);
        td(b, fq_value_path_str(e, "message", ""));
        fq_buf_puts(b, "</tr>\n");
    }
    fq_buf_puts(b, "</tbody></table>\n");
    free(es);
}

void fq_web_ui_page(struct fq_daemon *d, struct fq_http_req *r,
                    const char *page)
{
    struct fq_buf b = FQ_BUF_INIT;
    int status = 200;
    /* The overview and capacity pages are cluster-wide (queues, pools,
     * nodes): what a token may list of ClusterQueues decides. */
    bool cluster = !strcmp(page, "overview") || !strcmp(page, "capacity");
    struct fq_err e = {0};
    int rc = cluster ? fq_api_allow(d, r, "list", FQ_KIND_CLUSTERQUEUE, "",
                                    NULL, &e) :
                       0;
    if (rc < 0) {
        fq_buf_release(&b);
        fq_api_error(d, r, rc, &e, NULL, NULL);
        return;
    }
    if (!strcmp(page, "overview"))
        page_overview(d, &b);
    else if (!strcmp(page, "jobs"))
        page_jobs(d, r, &b);
    else if (!strcmp(page, "capacity"))
        page_capacity(d, &b);
    else if (!strcmp(page, "events"))
        page_events(d, r, &b);
    else {
        status = 404;
        begin(&b, "Not found");
    }
    fq_buf_puts(&b, "</main></body></html>\n");
    fq_daemon_defer_reply(d, r, status, "text/html; charset=utf-8", &b);
    fq_buf_release(&b);
}
