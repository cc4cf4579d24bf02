/*
 * api_authz.h - "who am I" and "may I" for Kubernetes clients, from the
 * token rules of auth.h:
 *
 *   POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews
 *        (kubectl auth can-i VERB RESOURCE [-n NS])
 *   POST /apis/authentication.k8s.io/{v1,v1beta1}/selfsubjectreviews
 *        (kubectl auth whoami)
 *
 * Without --tokens everyone is "anonymous", an admin, and every review
 * is allowed. An access review of a resource flexq does not serve is
 * allowed for admins (who may do anything) and denied for developers.
 * Nothing is stored.
 */
#ifndef FLEXQ_API_AUTHZ_H
#define FLEXQ_API_AUTHZ_H

#include "daemon.h"

void fq_authz_attach(struct fq_daemon *d);

#endif
