/*
 * table.c - server-side printing: meta.k8s.io Tables for clients that ask
 * with `Accept: application/json;as=Table;g=meta.k8s.io;v=v1` (kubectl
 * get, also with -w and -o wide), built from the same printer columns as
 * the CLI's tables (printcols.h).
 *
 * How it works: a Table has columnDefinitions (Name first, then the kind's
 * columns; wide ones at priority 1) and one row per object, whose cells
 * are strings or integers and whose `object` is, per ?includeObject=, the
 * PartialObjectMetadata (default: kubectl reads namespaces and labels
 * from it), the whole object (Object) or nothing (None).
 *
 * What it does not do: Tables for kinds served by other modules' routes,
 * or the v1beta1 Table's differences (the same shape is sent for both).
 */
#include "api/table.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "flexq/alloc.h"
#include "flexq/paths.h"
#include "flexq/printcols.h"

/* True if one media type of Accept (a comma list) names as=Table in
 * meta.k8s.io at version v. */
static bool media_is_table(const char *mt, size_t len, const char *v)
{
    bool as = false, g = false, ver = false;
    const char *end = mt + len;
    const char *p = memchr(mt, ';', len);
    while (p && p < end) {
        p++;
        while (p < end && *p == ' ')
            p++;
        const char *q = memchr(p, ';', (size_t)(end - p));
        size_t n = (size_t)((q ? q : end) - p);
        while (n && p[n - 1] == ' ')
            n--;
        if (n == 8 && !strncmp(p, "as=Table", 8))
            as = true;
        else if (n == 13 && !strncmp(p, "g=meta.k8s.io", 13))
            g = true;
        else if (n == 2 + strlen(v) && !strncmp(p, "v=", 2) &&
                 !strncmp(p + 2, v, n - 2))
            ver = true;
        p = q;
    }
    return as && g && ver;
}

const char *fq_table_accepts(const char *accept)
{
    if (!accept || strlen(accept) > 4096)
        return NULL;
    for (const char *p = accept; *p;) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        if (media_is_table(p, n, "v1"))
            return "v1";
        if (media_is_table(p, n, "v1beta1"))
            return "v1beta1";
        if (!c)
            break;
        p = c + 1;
    }
    return NULL;
}

/* "RESERVED IN" -> "Reserved In": how Kubernetes names its columns
 * (kubectl prints them upper-cased). */
static struct fq_value *col_name(const char *header)
{
    char buf[64];
    size_t i = 0;
    bool start = true;
    for (; header[i] && i < sizeof(buf) - 1; i++) {
        char ch = header[i];
        buf[i] = start ? (char)toupper((unsigned char)ch) :
                         (char)tolower((unsigned char)ch);
        start = ch == ' ';
    }
    buf[i] = '\0';
    return fq_value_str(buf);
}

static struct fq_value *col_def(const char *header, const char *type,
                                const char *format, const char *desc,
                                int priority)
{
    struct fq_value *c = fq_value_map();
    fq_map_set(c, "name", col_name(header));
    fq_map_set(c, "type", fq_value_str(type));
    fq_map_set(c, "format", fq_value_str(format));
    fq_map_set(c, "description", fq_value_str(desc));
    fq_map_set(c, "priority", fq_value_int(priority));
    return c;
}

struct fq_value *fq_table_new(enum fq_kind k, const char *version)
{
    struct fq_value *t = fq_value_map();
    fq_map_set(t, "kind", fq_value_str("Table"));
    fq_map_set(t, "apiVersion",
               fq_value_strf("meta.k8s.io/%s", version ? version : "v1"));
    fq_map_set(t, "metadata", fq_value_map());
    struct fq_value *defs = fq_value_seq();
    if (k != FQ_KIND_EVENT)
        fq_seq_push(defs,
                    col_def("NAME", "string", "name",
                            "Name must be unique within a namespace.", 0));
    for (const struct fq_printcol *c = fq_printcols(k); c->header; c++) {
        bool age = c->type == FQ_COL_AGE;
        fq_seq_push(defs, col_def(c->header, "string", "",
                                  age ? "Time since the object was created." :
                                        c->header,
                                  c->wide ? 1 : 0));
    }
    fq_map_set(t, "columnDefinitions", defs);
    fq_map_set(t, "rows", fq_value_seq());
    return t;
}

enum fq_table_include fq_table_include_of(const char *param)
{
    if (param && !strcmp(param, "None"))
        return FQ_TABLE_NONE;
    if (param && !strcmp(param, "Object"))
        return FQ_TABLE_OBJECT;
    return FQ_TABLE_METADATA;
}

void fq_table_add_row(struct fq_value *table, enum fq_kind k,
                      const struct fq_value *obj, int64_t now,
                      enum fq_table_include inc)
{
    struct fq_value *row = fq_value_map();
    struct fq_value *cells = fq_value_seq();
    if (k != FQ_KIND_EVENT)
        fq_seq_push(cells, fq_value_str(fq_meta_name(obj)));
    struct fq_buf b = FQ_BUF_INIT;
    for (const struct fq_printcol *c = fq_printcols(k); c->header; c++) {
        fq_buf_reset(&b);
        fq_printcol_cell(c, obj, now, &b);
        fq_seq_push(cells, fq_value_str(fq_buf_str(&b)));
    }
    fq_buf_release(&b);
    fq_map_set(row, "cells", cells);
    if (inc == FQ_TABLE_OBJECT) {
        fq_map_set(row, "object", fq_value_clone(obj));
    } else if (inc == FQ_TABLE_METADATA) {
        struct fq_value *pm = fq_value_map();
        fq_map_set(pm, "kind", fq_value_str("PartialObjectMetadata"));
        fq_map_set(pm, "apiVersion", fq_value_str("meta.k8s.io/v1"));
        const struct fq_value *md = fq_map_get(obj, "metadata");
        fq_map_set(pm, "metadata", md ? fq_value_clone(md) : fq_value_map());
        fq_map_set(row, "object", pm);
    }
    fq_seq_push(fq_map_get(table, "rows"), row);
}
