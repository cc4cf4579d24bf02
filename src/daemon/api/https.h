/*
 * https.h - flexqd's HTTPS listener: the same API as the plain one
 * (fq_api_handle), over TLS with the certificates of tls.h.
 *
 * Where it listens (struct fq_daemon_opts.tls_listen, flexqd --tls-listen):
 *   NULL or "auto"  --listen's host, port + 1 (port 0 stays 0: any free
 *                   port); when that port is taken flexqd logs a warning
 *                   and serves plain HTTP only
 *   "off"           no HTTPS
 *   "HOST:PORT"     there; failing to bind is a start-up error
 *
 * Kubernetes clients (client-go) send bearer tokens only over HTTPS, so
 * kubeconfigs with a token (flexq config kubeconfig, gcloud container
 * clusters get-credentials) point here.
 */
#ifndef FLEXQ_DAEMON_HTTPS_H
#define FLEXQ_DAEMON_HTTPS_H

#include "daemon.h"

/* Sets d->tls and d->https (both stay NULL when off). */
int fq_https_attach(struct fq_daemon *d, struct fq_err *err);
void fq_https_detach(struct fq_daemon *d);

#endif
