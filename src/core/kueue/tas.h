/*
 * tas.h - Kueue's topology-aware scheduling (TAS): where in a Topology's
 * domains the pods of one podset go.
 *
 * Pure: the caller (kueue/tas_place.c) turns Nodes, the Topology and the
 * usage of workloads already placed into leaves (the domains of the
 * lowest level, each with how many more pods of this podset it can
 * take); this module only picks domains and counts.
 */
#ifndef FLEXQ_KUEUE_TAS_H
#define FLEXQ_KUEUE_TAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FQ_TAS_MAX_LEVELS 16 /* Kueue's Topology: at most 16 levels */

/* What a podset asks for (its kueue.x-k8s.io/podset-*-topology
 * annotation, or the Workload's podSets[].topologyRequest). */
enum fq_tas_mode {
    FQ_TAS_REQUIRED = 0, /* all pods in one domain of the level, or wait */
    FQ_TAS_PREFERRED,    /* one domain of the level if any fits, else the
                            lowest level above where one does, else spread */
    FQ_TAS_UNCONSTRAINED /* anywhere, in as few domains as it can */
};

/* A domain of the lowest level: one label value per level (borrowed),
 * and how many pods of the podset it can still take. */
struct fq_tas_leaf {
    const char *values[FQ_TAS_MAX_LEVELS];
    int64_t capacity;
};

/*
 * Places `count` pods on `leaves` (nleaves, sorted by their values, level
 * 0 first; no two equal) of a topology of `nlevels` levels, for a request
 * of `mode` at level `level` (0 = the highest; ignored for
 * FQ_TAS_UNCONSTRAINED). On success writes how many pods go to each leaf
 * into out[nleaves] and returns true; otherwise returns false, writes
 * nothing to out, and *most says how many pods the best domain of the
 * level (for a spread: the whole topology) could take.
 */
bool fq_tas_place(const struct fq_tas_leaf *leaves, int nleaves, int nlevels,
                  enum fq_tas_mode mode, int level, int64_t count, int64_t *out,
                  int64_t *most);

#endif
