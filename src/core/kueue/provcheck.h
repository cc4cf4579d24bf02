/*
 * provcheck.h - the "provcheck" controller: Kueue's ProvisioningRequest
 * admission check controller (controllerName
 * kueue.x-k8s.io/provisioning-request). See provcheck.c.
 */
#ifndef FLEXQ_PROVCHECK_H
#define FLEXQ_PROVCHECK_H

#include "flexq/engine.h"

extern const struct fq_controller_ops fq_provcheck_controller;

#endif
