/*
 * fuzz_jsonpath.c - libFuzzer target for the CLI's JSONPath templates and
 * custom-columns specs (src/cli/jsonpath.c), which come from the command
 * line.
 *
 * The input is rendered as a template over a fixed List object and used as
 * a column spec over its items. Invariants checked: no crash or leak, an
 * error is FQ_EINVAL with a message, and output stays bounded (a template
 * can only repeat what the object holds).
 *
 * jsonpath.c lives in the CLI, not the core the fuzz targets link, so it
 * is compiled into this target directly.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/cli/jsonpath.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct fq_value *object(void)
{
    static const char js[] =
        "{\"kind\":\"List\",\"items\":[{\"metadata\":{\"name\":\"a\","
        "\"labels\":{\"team\":\"x\",\"k.io/q\":\"v\"}},\"spec\":{\"n\":3,"
        "\"l\":[1,2,{\"b\":true}]}},{\"metadata\":{\"name\":\"b\"}}]}";
    struct fq_value *v = NULL;
    if (fq_json_parse(js, sizeof(js) - 1, "obj", NULL, &v, NULL) < 0)
        abort();
    return v;
}

static void check(int rc, const struct fq_err *err, const char *text)
{
    if (rc != 0 && (rc != FQ_EINVAL || !err->msg[0])) {
        fprintf(stderr, "fuzz_jsonpath: bad error %d for \"%s\"\n", rc, text);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fq_value *obj;
    if (!obj)
        obj = object();
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    struct fq_buf b = FQ_BUF_INIT;
    struct fq_err err = {0};
    check(fq_jsonpath_render(text, obj, &b, &err), &err, text);
    fq_buf_release(&b);
    const struct fq_value *items = fq_map_get(obj, "items");
    const struct fq_value *objs[2] = {fq_seq_at(items, 0), fq_seq_at(items, 1)};
    struct fq_err err2 = {0};
    check(fq_jsonpath_columns(text, objs, 2, true, &b, &err2), &err2, text);
    fq_buf_release(&b);
    free(text);
    return 0;
}
