/*
 * fuzz_tokens.c - libFuzzer target for the tokens file (--tokens,
 * src/daemon/api/auth.c).
 *
 * The input is parsed as a tokens file. Invariants checked: nothing
 * crashes or leaks; an error has a message and a known code; a table that
 * loads identifies each of its tokens, and a developer is never allowed a
 * cluster-scoped kind, a list across all namespaces, or a namespace it was
 * not given; an unknown token is 401.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/daemon/api/auth.c"
#include "../../src/daemon/log.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fq_log_set_level(FQ_LOG_ERROR);
    struct fq_auth *a = NULL;
    struct fq_err err = {0};
    int rc = fq_auth_parse((const char *)data, size, "fuzz", &a, &err);
    if (rc < 0) {
        if (a || !err.msg[0] || (rc != FQ_EINVAL && rc != FQ_ELIMIT))
            abort();
        return 0;
    }
    if (!a || a->n == 0)
        abort();
    for (size_t i = 0; i < a->n; i++) {
        const struct token *t = &a->items[i];
        char *hdr = fq_xasprintf("Bearer %s", t->token);
        struct fq_principal who;
        if (fq_auth_identify(a, hdr, &who, &err) < 0)
            abort();
        free(hdr);
        /* Duplicate tokens: the last line wins, as find() scans them all. */
        if (who.admin)
            continue;
        /* A namespace the token was not given: the probe, unless the file
         * (which the fuzzer writes) gave it, as it may. */
        const char *probe = "no-such-namespace-\x01";
        const struct token *granted = who.id;
        bool given = false;
        for (int k = 0; k < granted->nns; k++)
            given |= !strcmp(granted->ns[k], probe);
        if (fq_auth_allow(a, &who, "get", FQ_KIND_CLUSTERQUEUE, "", NULL,
                          &err) != FQ_EFORBIDDEN ||
            fq_auth_allow(a, &who, "list", FQ_KIND_JOB, NULL, NULL, &err) !=
                FQ_EFORBIDDEN ||
            (!given && fq_auth_allow(a, &who, "get", FQ_KIND_JOB, probe, NULL,
                                     &err) != FQ_EFORBIDDEN))
            abort();
    }
    struct fq_principal who;
    if (fq_auth_identify(a, "Bearer \x01not-a-token\x02", &who, &err) !=
        FQ_EUNAUTH)
        abort();
    fq_auth_free(a);
    return 0;
}
