/*
 * spdy.h - a SPDY/3.1 frame codec: the framing `kubectl port-forward`
 * speaks (portforward.c), directly after an HTTP upgrade or tunnelled in
 * WebSocket messages.
 *
 * A codec (struct fq_spdy) is one side of one connection: it owns the two
 * zlib streams SPDY/3 keeps per direction for header blocks (compressed
 * with SPDY/3's dictionary, one sync flush per block), so every frame of
 * a connection must go through the same codec, in order.
 *
 * It does no I/O: fq_spdy_parse reads one frame from bytes the caller
 * holds, the fq_spdy_put_* append encoded frames to a buffer.
 */
#ifndef FLEXQD_SPDY_H
#define FLEXQD_SPDY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flexq/buf.h"
#include "flexq/err.h"

enum fq_spdy_type {
    FQ_SPDY_DATA = 0,
    FQ_SPDY_SYN_STREAM = 1,
    FQ_SPDY_SYN_REPLY = 2,
    FQ_SPDY_RST_STREAM = 3,
    FQ_SPDY_SETTINGS = 4,
    FQ_SPDY_PING = 6,
    FQ_SPDY_GOAWAY = 7,
    FQ_SPDY_HEADERS = 8,
    FQ_SPDY_WINDOW_UPDATE = 9,
};

#define FQ_SPDY_FLAG_FIN            0x01
#define FQ_SPDY_FLAG_UNIDIRECTIONAL 0x02

/* RST_STREAM status codes used here. */
#define FQ_SPDY_PROTOCOL_ERROR 1
#define FQ_SPDY_INVALID_STREAM 2
#define FQ_SPDY_REFUSED_STREAM 3
#define FQ_SPDY_CANCEL         5
#define FQ_SPDY_STREAM_IN_USE  8

/* Caps on what a peer sends. */
#define FQ_SPDY_MAX_DATA    (1u << 20)  /* a DATA frame's payload */
#define FQ_SPDY_MAX_CONTROL (64u << 10) /* a control frame's payload */
#define FQ_SPDY_MAX_BLOCK   (64u << 10) /* a header block, decompressed */
#define FQ_SPDY_MAX_HEADERS 64          /* name/value pairs in a block */

struct fq_spdy;

struct fq_spdy_header {
    const char *name;  /* lower case, NUL-terminated */
    const char *value; /* NUL-terminated (several values: NUL-separated,
                          value_len covers them all) */
    size_t value_len;
};

/* One frame as read. Pointers are borrowed: data from the caller's input,
 * headers from the codec, both valid until the next fq_spdy_parse. */
struct fq_spdy_frame {
    enum fq_spdy_type type;
    uint8_t flags;
    uint32_t stream_id; /* DATA, SYN_STREAM, SYN_REPLY, RST_STREAM,
                           HEADERS, WINDOW_UPDATE */
    uint32_t assoc_id;  /* SYN_STREAM */
    uint32_t status;    /* RST_STREAM, GOAWAY */
    uint32_t id;        /* PING: its id; GOAWAY: the last good stream */
    uint32_t delta;     /* WINDOW_UPDATE */
    const uint8_t *data;
    size_t len; /* DATA payload */
    const struct fq_spdy_header *headers;
    size_t nheaders;
};

/* A codec for one side of one connection; returns owned. */
struct fq_spdy *fq_spdy_new(void);
void fq_spdy_free(struct fq_spdy *s);

/*
 * How many bytes the frame at the head of buf takes (8 + its length), or
 * 0 while fewer than 8 bytes are there. The caller refuses one over its
 * cap before gathering it: see fq_spdy_parse's limits.
 */
size_t fq_spdy_frame_size(const uint8_t *buf, size_t len);

/*
 * Reads the frame at the head of buf[0..len). Returns the bytes it took
 * (> 0) and fills *f; 0 when buf does not hold the whole frame yet;
 * FQ_ELIMIT when it is over a cap (FQ_SPDY_MAX_*), FQ_EPARSE when it is
 * malformed (bad version, short control frame, a header block that does
 * not inflate or whose pairs do not add up, an upper-case or empty
 * name, a duplicate name), each with a message in err. After an error the
 * connection cannot go on (the header zlib stream is out of step): the
 * caller sends GOAWAY and closes. Unknown control frame types are returned
 * as read (type as sent, nothing decoded), as SPDY asks receivers to
 * ignore them.
 */
long fq_spdy_parse(struct fq_spdy *s, const uint8_t *buf, size_t len,
                   struct fq_spdy_frame *f, struct fq_err *err);

/* The value of header `name` in f, or NULL. */
const char *fq_spdy_header(const struct fq_spdy_frame *f, const char *name);

/* Encoders: each appends one frame to out. Header names must be lower
 * case. */
void fq_spdy_put_syn_stream(struct fq_spdy *s, uint32_t id, uint8_t flags,
                            const struct fq_spdy_header *h, size_t n,
                            struct fq_buf *out);
void fq_spdy_put_syn_reply(struct fq_spdy *s, uint32_t id, uint8_t flags,
                           const struct fq_spdy_header *h, size_t n,
                           struct fq_buf *out);
void fq_spdy_put_data(uint32_t id, uint8_t flags, const void *data, size_t len,
                      struct fq_buf *out);
void fq_spdy_put_rst(uint32_t id, uint32_t status, struct fq_buf *out);
void fq_spdy_put_ping(uint32_t id, struct fq_buf *out);
void fq_spdy_put_goaway(uint32_t last_good, uint32_t status,
                        struct fq_buf *out);

#endif
