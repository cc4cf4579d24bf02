/*
 * space.h - free space of the data directory's filesystem, and a reserve
 * that lets a commit through when the disk fills between two checks (see
 * space.c).
 */
#ifndef FLEXQ_DAEMON_SPACE_H
#define FLEXQ_DAEMON_SPACE_H

#include <stdbool.h>
#include <stdint.h>

/* Client writes are refused (507) below this much free space. */
#define FQ_SPACE_MIN_FREE (4ll << 20)
/* Bytes kept in DIR/flexq.reserve for commits that still find no room. */
#define FQ_SPACE_RESERVE (4ll << 20)

struct fq_space;

/* Watches `dir` (borrowed) and makes its reserve file. Returns owned;
 * never NULL (a reserve that cannot be made is logged and skipped). */
struct fq_space *fq_space_new(const char *dir);
void fq_space_free(struct fq_space *sp);

/*
 * Whether client writes must be refused now: free space under
 * FQ_SPACE_MIN_FREE, or the reserve is spent and not yet back. Checks the
 * filesystem at most every 250 ms (`now_ms`, monotonic); when space has
 * returned it takes the reserve again and says false. `free_bytes` (may
 * be NULL) gets the last figure.
 */
bool fq_space_low(struct fq_space *sp, int64_t now_ms, int64_t *free_bytes);

/* A commit found the disk full: gives the reserve back to the filesystem
 * so the commit can be tried once more. 0 when some was released,
 * -1 when none was left. */
int fq_space_release(struct fq_space *sp);

#endif
