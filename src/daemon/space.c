/*
 * space.c - what flexqd does when its disk fills.
 *
 * The rule it keeps: an answered write is on disk, and a write that is not
 * on disk changes nothing. A commit that fails halfway cannot be undone in
 * memory (the engine has applied the turn), so the daemon makes such a
 * failure rare and survivable instead:
 *
 *   1. Before a client write is applied, fq_space_low looks at the free
 *      space (statvfs, at most every 250 ms). Under FQ_SPACE_MIN_FREE the
 *      write is answered 507 InsufficientStorage and nothing is applied.
 *      Reads, watches and deletes (which make room) go on.
 *   2. DIR/flexq.reserve holds FQ_SPACE_RESERVE bytes (fallocate). When a
 *      commit still meets a full disk (another process filled it between
 *      two checks; the engine's own writes, which are not refused), the
 *      loop releases the reserve and commits again: the turn lands, and
 *      client writes stay refused until there is room for the reserve
 *      and the minimum again.
 *   3. When free space is back, the reserve is taken again and writes are
 *      accepted: no restart.
 *
 * Worked example, a 64 MiB disk: flexqd holds 4 MiB in the reserve; a
 * filler takes the rest; a create gets 507, a GET 200. A controller's
 * status update then fails to commit: the reserve is released, the update
 * commits into the freed 4 MiB. The filler is deleted: the next check sees
 * 60 MiB free, takes the reserve again, and the create gets 201.
 *
 * Invariant: `spent` is true exactly when the reserve file is (or has
 * been truncated to) empty.
 *
 * What it does not do: survive a commit that fails after the reserve is
 * spent (the daemon then stops as before: a restart reloads what is on
 * disk), or treat EIO: a failed write or fsync may have lost pages the
 * kernel already dropped, so it stays fatal.
 */
#define _GNU_SOURCE /* fallocate */
#include "space.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "flexq/alloc.h"
#include "log.h"

#define CHECK_EVERY_MS 250

struct fq_space {
    char *dir;
    char *reserve; /* path of the reserve file */
    bool spent;    /* the reserve was released */
    bool low;      /* the last check said low */
    int64_t checked_ms;
    int64_t free_bytes;
};

/* Makes the reserve file full size; false if the disk has no room. */
static bool take_reserve(struct fq_space *sp)
{
    int fd =
        open(sp->reserve, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return false;
    int rc = posix_fallocate(fd, 0, (off_t)FQ_SPACE_RESERVE);
    if (rc != 0 && ftruncate(fd, 0) != 0)
        rc = errno;
    close(fd);
    return rc == 0;
}

struct fq_space *fq_space_new(const char *dir)
{
    struct fq_space *sp = fq_xcalloc(1, sizeof(*sp));
    sp->dir = fq_xstrdup(dir);
    sp->reserve = fq_xasprintf("%s/flexq.reserve", dir);
    sp->checked_ms = -1;
    if (!take_reserve(sp)) {
        sp->spent = true;
        fq_log(FQ_LOG_WARN, "no space for the reserve",
               "file=%s bytes=%lld hint=\"client writes are refused until "
               "there is room\"",
               sp->reserve, (long long)FQ_SPACE_RESERVE);
    }
    return sp;
}

void fq_space_free(struct fq_space *sp)
{
    if (!sp)
        return;
    free(sp->dir);
    free(sp->reserve);
    free(sp);
}

bool fq_space_low(struct fq_space *sp, int64_t now_ms, int64_t *free_bytes)
{
    if (sp->checked_ms < 0 || now_ms - sp->checked_ms >= CHECK_EVERY_MS ||
        now_ms < sp->checked_ms) {
        sp->checked_ms = now_ms;
        struct statvfs vfs;
        if (statvfs(sp->dir, &vfs) == 0)
            sp->free_bytes = (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize;
        bool was = sp->low;
        int64_t need = FQ_SPACE_MIN_FREE + (sp->spent ? FQ_SPACE_RESERVE : 0);
        sp->low = sp->free_bytes < need;
        if (!sp->low && sp->spent) {
            sp->spent = !take_reserve(sp);
            sp->low = sp->spent;
        }
        if (sp->low != was)
            fq_log(sp->low ? FQ_LOG_WARN : FQ_LOG_INFO,
                   sp->low ? "disk full: client writes refused (507)" :
                             "disk space back: writes accepted",
                   "dir=%s free_bytes=%lld", sp->dir,
                   (long long)sp->free_bytes);
    }
    if (free_bytes)
        *free_bytes = sp->free_bytes;
    return sp->low;
}

int fq_space_release(struct fq_space *sp)
{
    if (sp->spent)
        return -1;
    sp->spent = true;
    sp->low = true;
    sp->checked_ms = -1;
    if (truncate(sp->reserve, 0) != 0 && unlink(sp->reserve) != 0)
        return -1;
    fq_log(FQ_LOG_WARN, "disk full: reserve released for a commit",
           "file=%s bytes=%lld", sp->reserve, (long long)FQ_SPACE_RESERVE);
    return 0;
}
