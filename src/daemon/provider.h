/*
 * provider.h - where flexqd's nodes come from, as an ops table.
 *
 *   sim    the core's cloud model makes Nodes itself (engine config
 *          sim_provider; nothing to do here)
 *   local  this machine is the one node of a pool, with its real cpu,
 *          memory and GPUs (nvidia-smi); pods get CUDA_VISIBLE_DEVICES
 *   exec   an administrator's script talks to a real cloud: flexqd runs it
 *          with one JSON request on stdin and reads one JSON answer on
 *          stdout, with a timeout (docs/runtime.md has the protocol;
 *          examples/providers/ has gcloud-based scripts, untested here)
 *
 * A provider reports Nodes by creating / deleting Node objects in the
 * engine's store, as a kubelet registers its node.
 */
#ifndef FLEXQ_PROVIDER_H
#define FLEXQ_PROVIDER_H

#include <stdint.h>

#include "flexq/engine.h"
#include "flexq/err.h"
#include "flexq/value.h"

struct fq_provider;

struct fq_provider_ops {
    const char *name;
    /* Reads its configuration (env, files), registers what it has. */
    int (*start)(struct fq_provider *p, struct fq_err *err);
    /* Called about once a second: mirror the cloud into Node objects. */
    void (*sync)(struct fq_provider *p, int64_t now_ms);
    void (*stop)(struct fq_provider *p);
};

struct fq_provider {
    const struct fq_provider_ops *ops;
    struct fq_engine *engine; /* borrowed */
    void *state;              /* the provider's own */
};

extern const struct fq_provider_ops fq_provider_exec_ops;

/* The ops of "sim", "local" or "exec"; NULL for another name. */
const struct fq_provider_ops *fq_provider_lookup(const char *name);

/* --- local (provider_local.c) ----------------------------------------- */

/* What this machine has. */
struct fq_local_machine {
    int64_t cpu_milli;
    int64_t memory_bytes;
    int gpus;
    char gpu_model[128]; /* "NVIDIA H200" or "" */
    char hostname[256];
};

/* Reads nproc, /proc/meminfo and `nvidia-smi --query-gpu=name
 * --format=csv,noheader` (absent or failing: 0 GPUs). */
void fq_provider_local_probe(struct fq_local_machine *m);
/* GPUs of this machine (probes once). */
int fq_provider_local_gpus(void);
/* The Node object for this machine in pool `pool` (returns owned). */
struct fq_value *fq_provider_local_node(const struct fq_local_machine *m,
                                        const char *pool);

/* --- exec (provider_exec.c) ------------------------------------------- */

/*
 * Runs `script` (by path, no shell) with `request` as JSON on stdin and
 * parses one JSON object from stdout within timeout_ms. Errors name the
 * script and what went wrong: not executable, timed out (the process group
 * is killed), exit status with the last stderr line, output not JSON, or a
 * JSON {"error": "..."} answer. *response is owned by the caller.
 */
int fq_provider_exec_call(const char *script, const struct fq_value *request,
                          int64_t timeout_ms, struct fq_value **response,
                          struct fq_err *err);

#endif
