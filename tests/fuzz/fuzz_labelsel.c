/*
 * fuzz_labelsel.c - libFuzzer target for the API's label and field
 * selectors (src/daemon/api/labelsel.c), which come straight from query
 * strings.
 *
 * The input is parsed as a label selector and as a field selector; what
 * parses is matched against a fixed object. Invariants checked: parsing
 * never crashes or leaks, a parse error always sets FQ_EPARSE or FQ_ELIMIT
 * with a message, and the empty selector matches.
 *
 * labelsel.c lives in the daemon, not the core the fuzz targets link, so
 * it is compiled into this target directly.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/daemon/api/labelsel.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct fq_value *object(void)
{
    static const char js[] =
        "{\"metadata\":{\"name\":\"a\",\"namespace\":\"default\",\"labels\":"
        "{\"team\":\"x\",\"tier\":\"gold\",\"k.io/q\":\"v\"}},"
        "\"involvedObject\":{\"name\":\"wl\"},\"n\":3,\"b\":true}";
    struct fq_value *v = NULL;
    if (fq_json_parse(js, sizeof(js) - 1, "obj", NULL, &v, NULL) < 0)
        abort();
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fq_value *obj;
    if (!obj)
        obj = object();
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    for (int field = 0; field < 2; field++) {
        struct fq_labelsel *s = NULL;
        struct fq_err err = {0};
        int rc = fq_labelsel_parse(text, field, &s, &err);
        if (rc == 0) {
            (void)fq_labelsel_match(s, obj);
            (void)fq_labelsel_equals(s, "metadata.name");
            fq_labelsel_free(s);
        } else if ((rc != FQ_EPARSE && rc != FQ_ELIMIT) || !err.msg[0]) {
            fprintf(stderr, "fuzz_labelsel: bad error %d for \"%s\"\n", rc,
                    text);
            abort();
        }
    }
    free(text);
    return 0;
}
