/*
 * podports.h - whether a pod's own processes listen on a TCP port
 * (podports.c says how and why).
 */
#ifndef FLEXQ_API_PODPORTS_H
#define FLEXQ_API_PODPORTS_H

#include <stdbool.h>

/* True when a process of the pod whose container id is container_id
 * ("flexq://BOOT/PID/START", status.containerStatuses[].containerID)
 * holds a socket listening on TCP port `port` of this machine; false for
 * any other id, a pod that is gone, or a port it does not listen on. */
bool fq_podports_listens(const char *container_id, int port);

#endif
