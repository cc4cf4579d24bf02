/*
 * print.c - kubectl-style tables and names for the CLI.
 *
 * How it works: the columns of each kind and their cells come from
 * printcols.h (shared with the API's server-side Tables). Cells are laid
 * out like kubectl's tabwriter: every column but the last is
 * padded to max(10, widest cell + 3).
 *
 * Invariants: output is stable (objects come sorted from the server) and
 * never reads the clock except through `now`, so tests can pin it.
 *
 * What it does not do: colour, sorting flags, custom columns.
 */
#include "print.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flexq/alloc.h"
#include "flexq/engine.h"
#include "flexq/paths.h"
#include "flexq/printcols.h"
#include "flexq/timefmt.h"

int64_t fq_print_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void fq_print_duration(int64_t ms, char *buf, size_t size)
{
    fq_printcols_duration(ms, buf, size);
}

void fq_print_age(const char *ts, int64_t now, char *buf, size_t size)
{
    fq_printcols_age(ts, now, buf, size);
}

void fq_print_name(enum fq_kind kind, const char *name, struct fq_buf *out)
{
    const struct fq_kind_info *ki = fq_kind_info(kind);
    if (*ki->group)
        fq_buf_printf(out, "%s.%s/%s", ki->singular, ki->group, name);
    else
        fq_buf_printf(out, "%s/%s", ki->singular, name);
}

const char *fq_print_condition(const struct fq_value *obj, const char *type)
{
    return fq_printcols_condition(obj, type);
}

/* --- layout --------------------------------------------------------------- */

struct grid {
    char **cells; /* rows * ncols */
    size_t rows, ncols;
};

/* keep (may be NULL): g->ncols widths carried between calls, so rows
 * printed one call at a time (get -w) stay aligned: each column is as
 * wide as the widest cell seen so far. */
static void grid_print_keep(const struct grid *g, const char *indent,
                            size_t *keep, FILE *out)
{
    size_t *w = fq_xcalloc(g->ncols, sizeof(*w));
    for (size_t c = 0; keep && c < g->ncols; c++)
        w[c] = keep[c];
    for (size_t r = 0; r < g->rows; r++)
        for (size_t c = 0; c < g->ncols; c++) {
            size_t l = strlen(g->cells[r * g->ncols + c]);
            if (l > w[c])
                w[c] = l;
        }
    for (size_t r = 0; r < g->rows; r++) {
        fputs(indent, out);
        for (size_t c = 0; c < g->ncols; c++) {
            const char *s = g->cells[r * g->ncols + c];
            if (c + 1 == g->ncols) {
                fputs(s, out);
                break;
            }
            size_t width = w[c] + 3 < 10 ? 10 : w[c] + 3;
            fprintf(out, "%-*s", (int)width, s);
        }
        fputc('\n', out);
    }
    for (size_t c = 0; keep && c < g->ncols; c++)
        keep[c] = w[c];
    free(w);
}

static void grid_print(const struct grid *g, const char *indent, FILE *out)
{
    grid_print_keep(g, indent, NULL, out);
}

static void grid_free(struct grid *g)
{
    for (size_t i = 0; i < g->rows * g->ncols; i++)
        free(g->cells[i]);
    free(g->cells);
}

void fq_print_table(enum fq_kind kind, const struct fq_value *const *objs,
                    size_t n, int flags, const char *ns, int64_t now, FILE *out)
{
    fq_print_table_keep(kind, objs, n, flags, ns, now, NULL, out);
}

void fq_print_table_keep(enum fq_kind kind, const struct fq_value *const *objs,
                         size_t n, int flags, const char *ns, int64_t now,
                         size_t keep[FQ_PRINT_MAX_COLS], FILE *out)
{
    const struct fq_kind_info *ki = fq_kind_info(kind);
    if (n == 0) {
        if (ns && ki->namespaced && !(flags & FQ_PRINT_NAMESPACE))
            fprintf(stderr, "No resources found in %s namespace.\n", ns);
        else
            fprintf(stderr, "No resources found\n");
        return;
    }
    const struct fq_printcol *cols = fq_printcols(kind);
    bool with_ns = (flags & FQ_PRINT_NAMESPACE) && ki->namespaced;
    bool wide = flags & FQ_PRINT_WIDE;
    /* kubectl's event table has no NAME column: OBJECT says what it is. */
    bool name_col = kind != FQ_KIND_EVENT;
    bool labels = flags & FQ_PRINT_LABELS;
    size_t ncols = (size_t)name_col + with_ns + labels;
    for (const struct fq_printcol *c = cols; c->header; c++)
        ncols += !c->wide || wide;
    if (ncols > FQ_PRINT_MAX_COLS)
        keep = NULL;
    struct grid g = {fq_xcalloc((n + 1) * ncols, sizeof(char *)), 0, ncols};
    size_t k = 0;
    bool headers = !(flags & FQ_PRINT_NO_HEADERS);
    if (headers) {
        if (with_ns)
            g.cells[k++] = fq_xstrdup("NAMESPACE");
        if (name_col)
            g.cells[k++] = fq_xstrdup("NAME");
        for (const struct fq_printcol *c = cols; c->header; c++)
            if (!c->wide || wide)
                g.cells[k++] = fq_xstrdup(c->header);
        if (labels)
            g.cells[k++] = fq_xstrdup("LABELS");
        g.rows++;
    }
    struct fq_buf b = FQ_BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        if (with_ns)
            g.cells[k++] = fq_xstrdup(fq_meta_namespace(objs[i]));
        const char *name = fq_meta_name(objs[i]);
        fq_buf_reset(&b);
        if (flags & FQ_PRINT_KIND)
            fq_print_name(kind, name, &b);
        else
            fq_buf_puts(&b, name);
        if (name_col)
            g.cells[k++] = fq_xstrdup(fq_buf_str(&b));
        for (const struct fq_printcol *c = cols; c->header; c++) {
            if (c->wide && !wide)
                continue;
            fq_buf_reset(&b);
            fq_printcol_cell(c, objs[i], now, &b);
            g.cells[k++] = fq_xstrdup(fq_buf_str(&b));
        }
        if (labels) {
            const struct fq_value *l = fq_meta_labels(objs[i]);
            fq_buf_reset(&b);
            for (size_t m = 0; l && l->type == FQ_V_MAP && m < l->u.map.n;
                 m++) {
                const char *v = fq_value_as_str(l->u.map.items[m].val);
                fq_buf_printf(&b, "%s%s=%s", m ? "," : "",
                              l->u.map.items[m].key, v ? v : "");
            }
            g.cells[k++] = fq_xstrdup(b.len ? fq_buf_str(&b) : "<none>");
        }
        g.rows++;
    }
    fq_buf_release(&b);
    grid_print_keep(&g, "", keep, out);
    grid_free(&g);
}

void fq_print_events(const struct fq_value *const *events, size_t n,
                     bool with_object, int64_t now, const char *indent,
                     FILE *out)
{
    size_t ncols = with_object ? 5 : 5;
    struct grid g = {fq_xcalloc((n + 2) * ncols, sizeof(char *)), 0, ncols};
    size_t k = 0;
    const char *h[5] = {"Type", "Reason", "Age", "From", "Message"};
    const char *hl[5] = {"----", "------", "----", "----", "-------"};
    if (with_object) {
        h[3] = "Object";
        hl[3] = "------";
    }
    for (int i = 0; i < 5; i++)
        g.cells[k++] = fq_xstrdup(h[i]);
    for (int i = 0; i < 5; i++)
        g.cells[k++] = fq_xstrdup(hl[i]);
    g.rows = 2;
    struct fq_buf b = FQ_BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        const struct fq_value *e = events[i];
        g.cells[k++] = fq_xstrdup(fq_value_path_str(e, "type", ""));
        g.cells[k++] = fq_xstrdup(fq_value_path_str(e, "reason", ""));
        fq_buf_reset(&b);
        fq_printcols_event_seen(e, now, &b);
        g.cells[k++] = fq_xstrdup(fq_buf_str(&b));
        fq_buf_reset(&b);
        if (with_object)
            fq_printcols_event_object(e, now, &b);
        else
            fq_buf_puts(&b, fq_value_path_str(e, "source.component", ""));
        g.cells[k++] = fq_xstrdup(fq_buf_str(&b));
        g.cells[k++] = fq_xstrdup(fq_value_path_str(e, "message", ""));
        g.rows++;
    }
    fq_buf_release(&b);
    grid_print(&g, indent, out);
    grid_free(&g);
}
