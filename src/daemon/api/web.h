/*
 * web.h - what flexqd serves to people and monitoring: the dashboard
 * (web/ assets embedded in the binary, and plain server-rendered tables at
 * /ui/... for browsers without JavaScript), Prometheus /metrics
 * (metrics_http.c) and Kueue's visibility API (pending workload
 * positions). docs/dashboard.md describes the pages.
 */
#ifndef FLEXQ_DAEMON_WEB_H
#define FLEXQ_DAEMON_WEB_H

#include "daemon.h"

struct fq_web;

/* Adds the routes and change listener; returns owned state (never NULL). */
struct fq_web *fq_web_attach(struct fq_daemon *d);
/* Releases it (NULL is fine). */
void fq_web_detach(struct fq_web *w);

/* /metrics (metrics_http.c): routes it; returns owned state. */
struct fq_metrics_http;
struct fq_metrics_http *fq_metrics_http_attach(struct fq_daemon *d);
void fq_metrics_http_detach(struct fq_metrics_http *m);

/* The server-rendered no-JavaScript pages (web_ui.c): answers a GET of
 * /ui/overview, /ui/jobs, /ui/capacity, /ui/events. */
void fq_web_ui_page(struct fq_daemon *d, struct fq_http_req *r,
                    const char *page);

#endif
