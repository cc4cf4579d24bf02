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
 * engine's store, as a kubelet registers its node. With a provider other
 * than sim the core's autoscaler writes its decisions on each NodePool's
 * status.providerRequests (src/core/capacity/provider_protocol.h); the provider
 * carries them out and answers with fq_provider_request_answer.
 */
#ifndef FLEXQ_PROVIDER_H
#define FLEXQ_PROVIDER_H

#include <stdbool.h>
#include <stdint.h>

#include "flexq/engine.h"
#include "flexq/err.h"
#include "flexq/value.h"

struct fq_provider;

struct fq_provider_ops {
    const char *name;
    /* Reads its configuration (env, files), registers what it has. */
    int (*start)(struct fq_provider *p, struct fq_err *err);
    /* Called about once a second and on SIGCHLD: carry out Pending
     * requests, read the answers of running calls (never blocking), mirror
     * the cloud into Node objects. */
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

/*
 * The same call without waiting: starts the script (own process group,
 * request written to stdin, stdin closed) and returns the child in *out.
 */
struct fq_provider_child;
int fq_provider_child_start(const char *script, const struct fq_value *request,
                            int64_t timeout_ms, struct fq_provider_child **out,
                            struct fq_err *err);
/*
 * Reads what the child wrote, waiting at most wait_ms (0: not at all);
 * kills its process group past its timeout. Returns false while it runs;
 * true when it is over: then *rc is 0 with *response (owned) or an error
 * as fq_provider_exec_call's.
 */
bool fq_provider_child_poll(struct fq_provider_child *c, int wait_ms,
                            struct fq_value **response, int *rc,
                            struct fq_err *err);
/* Kills (if running), reaps and frees. NULL is fine. */
void fq_provider_child_free(struct fq_provider_child *c);

/* --- answers to the core's requests (provider_exec.c) ------------------ */

/* Sets request `id` of NodePool `pool` to state "Done" or "Failed" (with
 * message). FQ_ENOTFOUND when the request is gone. */
int fq_provider_request_answer(struct fq_engine *e, const char *pool,
                               const char *id, const char *state,
                               const char *message);
/*
 * Creates (or updates, keeping annotations) Node objects for the answered
 * `nodes` ([{"name", "labels", "taints", "allocatable", "ready"}]) of pool
 * `pool`, labelled with the pool and the provider. The nodes flexq does
 * not know yet (no flexq.dev/slice label), in answer order, take the next
 * of `templates` (the core's Node templates: labels, taints, allocatable)
 * and the slice label; so a script may answer a create with the new nodes
 * only or with all of the pool's.
 */
void fq_provider_nodes_put(struct fq_engine *e, const char *pool,
                           const char *provider, const char *slice,
                           const struct fq_value *templates,
                           const struct fq_value *nodes, int64_t now_ms);

#endif
