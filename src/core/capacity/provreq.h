/*
 * capacity/provreq.h - the ProvisioningRequest lifecycle (provreq.c).
 *
 * What it does not do: scale pools for pending pods (autoscaler.c) or
 * talk to an outside provider itself (provider_demand.h).
 */
#ifndef FLEXQ_CAPACITY_PROVREQ_H
#define FLEXQ_CAPACITY_PROVREQ_H

#include "capacity/state.h"

/* provreq.c: every ProvisioningRequest that needs it one step along its
 * lifecycle. The notes keep its request table: a request changed in the
 * store, the nodes of a request changed, pool sizes changed, everything
 * changed (pools or the cloud model). */
void fq_provreq_reconcile(struct fq_capacity *st, struct fq_engine *e);

/* True when the change is a step's own status write, which the step
 * took into account already (its request and nodes are marked). */
bool fq_provreq_note(struct fq_capacity *st, const struct fq_change *c);

/* True when some request is marked to be stepped at the next run (the
 * table is not seeded yet, or a request is dirty or all are). */
bool fq_provreq_pending(const struct fq_capacity *st);

/* The notices the node table gives through st->hooks (state.h). */
void fq_provreq_nodes_changed(struct fq_capacity *st, const char *key);

void fq_provreq_counts_changed(struct fq_capacity *st);

void fq_provreq_all_changed(struct fq_capacity *st);

void fq_provreq_release(struct fq_capacity *st);

#endif
