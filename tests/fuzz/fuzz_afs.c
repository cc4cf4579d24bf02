/*
 * fuzz_afs.c - libFuzzer target for the reader of Kueue's
 * admissionFairSharing configuration (fq_afs_read: Go durations,
 * resourceWeights).
 *
 * The input is parsed as YAML under the default limits; each document is
 * read into a configuration. An accepted one must hold what Kueue's
 * validation allows (half-life >= 0, interval > 0, weights >= 0, at most
 * FQ_AFS_MAX_WEIGHTS); a refused one must leave the configuration as it
 * was.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/engine.h"
#include "flexq/err.h"
#include "flexq/value.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok, const char *what)
{
    if (ok)
        return;
    fprintf(stderr, "fuzz_afs: %s\n", what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fq_limits lim = fq_limits_default();
    struct fq_docs docs = {0};
    if (fq_yaml_parse((const char *)data, size, "fuzz", &lim, &docs, NULL) != 0)
        return 0;
    for (size_t i = 0; i < docs.n; i++) {
        struct fq_engine_config cfg;
        fq_engine_config_init(&cfg);
        struct fq_afs_config before = cfg.afs;
        struct fq_err err = {0};
        int rc = fq_afs_read(docs.items[i], "fuzz", &cfg.afs, &err);
        if (rc != 0) {
            check(rc == FQ_EINVAL, "an error other than FQ_EINVAL");
            check(!memcmp(&before, &cfg.afs, sizeof(before)),
                  "a refused configuration changed");
            check(err.msg[0] != '\0', "an error without a message");
            continue;
        }
        if (!docs.items[i])
            continue;
        check(cfg.afs.half_life_ms >= 0, "a negative half-life");
        check(cfg.afs.sampling_ms > 0, "a sampling interval <= 0");
        check(cfg.afs.nweights >= 0 && cfg.afs.nweights <= FQ_AFS_MAX_WEIGHTS,
              "too many weights");
        for (int w = 0; w < cfg.afs.nweights; w++)
            check(cfg.afs.weights[w] >= 0, "a negative weight");
    }
    fq_docs_release(&docs);
    return 0;
}
