/*
 * yaml.c - YAML reader and writer for struct fq_value (skeleton; the real
 * parser lands shortly).
 */
#include "flexq/value.h"

#include <stdlib.h>

void fq_docs_release(struct fq_docs *d)
{
    for (size_t i = 0; i < d->n; i++)
        fq_value_free(d->items[i]);
    free(d->items);
    d->items = NULL;
    d->n = d->cap = 0;
}

int fq_yaml_parse(const char *text, size_t len, const char *name,
                  const struct fq_limits *lim, struct fq_docs *out,
                  struct fq_err *err)
{
    (void)text, (void)len, (void)name, (void)lim, (void)out;
    return fq_err_set(err, FQ_EUNSUPPORTED, "YAML parser not built yet");
}

void fq_yaml_encode(const struct fq_value *v, struct fq_buf *out)
{
    (void)v;
    fq_buf_puts(out, "null\n");
}
