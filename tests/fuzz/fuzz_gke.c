/*
 * fuzz_gke.c - libFuzzer target for what gcloud and kubectl send flexqd's
 * GKE and review endpoints: the body as JSON through
 * fq_gke_pool_from_api (GKE NodePool -> flexq NodePool, then validated
 * and converted back), and the same bytes as a protobuf
 * SelfSubjectAccessReview (src/core/objects/ssar_pb.c).
 *
 * Invariants checked: nothing crashes or leaks; a refusal sets an error
 * message and leaves no object; an accepted pool converts back to GKE's
 * shape with the same name.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/gke.h"
#include "flexq/nodepool.h"
#include "flexq/ssar_pb.h"
#include "flexq/value.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fq_err e = {0};
    struct fq_value *v = NULL;
    struct fq_limits lim = fq_limits_default();
    if (fq_json_parse((const char *)data, size, "fuzz", &lim, &v, &e) == 0) {
        struct fq_value *pool = NULL;
        int rc = fq_gke_pool_from_api(v, "c", "z", &pool, &e);
        if (rc < 0 && (pool || !e.msg[0]))
            abort();
        if (rc == 0) {
            fq_nodepool_validate(pool, &e);
            struct fq_value *back = fq_gke_pool_to_api(pool, "http://h");
            if (strcmp(fq_value_path_str(back, "name", "?"),
                       fq_value_path_str(v, "name", "!")))
                abort();
            fq_value_free(back);
            fq_value_free(pool);
        }
        fq_value_free(v);
    }
    v = NULL;
    memset(&e, 0, sizeof(e));
    int rc = fq_ssar_from_protobuf((const char *)data, size, &v, &e);
    if (rc < 0 && (v || !e.msg[0]))
        abort();
    fq_value_free(v);
    return 0;
}
