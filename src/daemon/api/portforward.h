/*
 * portforward.h - the pods/portforward subresource: `kubectl port-forward
 * pod/NAME` and `service/NAME` (kubectl resolves a service to a pod and a
 * port itself, then asks for that pod's portforward).
 *
 * Served over SPDY/3.1 (kubectl 1.27-1.30: `Upgrade: SPDY/3.1`) and over
 * SPDY tunnelled in WebSocket binary messages (kubectl 1.31+: subprotocol
 * `SPDY/3.1+portforward.k8s.io`); see portforward.c.
 */
#ifndef FLEXQ_DAEMON_PORTFORWARD_H
#define FLEXQ_DAEMON_PORTFORWARD_H

#include "daemon.h"

/* Registers the subresource; sets d->pf. */
void fq_portforward_attach(struct fq_daemon *d);
/* Closes every session (before the HTTP servers are freed). */
void fq_portforward_detach(struct fq_daemon *d);

#endif
