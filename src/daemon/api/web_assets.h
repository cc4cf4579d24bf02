/*
 * web_assets.h - the dashboard files of web/, compiled into flexqd.
 *
 * scripts/embed.cmake generates the table at build time; the daemon's HTTP
 * layer serves a path by looking it up here. The table ends with a NULL path.
 */
#ifndef FLEXQ_WEB_ASSETS_H
#define FLEXQ_WEB_ASSETS_H

#include <stddef.h>

struct fq_web_asset {
    const char *path;          /* "/index.html", relative to web/ */
    const unsigned char *data; /* NUL-terminated for convenience */
    size_t len;                /* length without the terminator */
};

extern const struct fq_web_asset fq_web_assets[];

#endif
