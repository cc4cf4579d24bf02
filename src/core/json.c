/*
 * json.c - JSON reader and writer for struct fq_value (skeleton; the real
 * parser lands shortly).
 */
#include "flexq/value.h"

#include "flexq/alloc.h"

int fq_json_parse(const char *text, size_t len, const char *name,
                  const struct fq_limits *lim, struct fq_value **out,
                  struct fq_err *err)
{
    (void)text, (void)len, (void)name, (void)lim;
    *out = NULL;
    return fq_err_set(err, FQ_EUNSUPPORTED, "JSON parser not built yet");
}

void fq_json_encode(const struct fq_value *v, int flags, struct fq_buf *out)
{
    (void)v, (void)flags;
    fq_buf_puts(out, "null");
}

char *fq_json_dumps(const struct fq_value *v, int flags)
{
    struct fq_buf b = FQ_BUF_INIT;
    fq_json_encode(v, flags, &b);
    return fq_buf_detach(&b);
}
