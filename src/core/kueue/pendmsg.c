/*
 * pendmsg.c - the pending-message refresh (policy.pendingMessageRefresh
 * Seconds, a flexq switch; 0 is Kueue's behaviour): a pending workload's
 * QuotaReserved=False message whose text changes only in its counts is
 * written at most once per refresh interval, the newest text at the end
 * of it.
 *
 * Why. Kueue writes a head's condition whenever its message text
 * changes, and a NoFit message says how much is missing ("insufficient
 * unused quota for gpu in flavor on-demand, 3 more needed"): every time
 * the quota's usage moves, every waiting head that is looked at again
 * gets a new text. In flexqd each such write is a durable commit and a
 * watch event to every client; in the simulator, on Philly's first
 * 10,000 jobs under flexq's policy, they were half of all stored changes
 * (247,674 of 490,371), a write amplification that grows with the
 * number of workloads waiting.
 *
 * The rule (kq_set_pending, admit.c, asks kq_pendmsg_hold first). A new
 * text is written at once unless all of these hold, and then it is held:
 *
 *   1. the refresh interval is on (k->msg_every > 0);
 *   2. a message is stored, written with the same reason (a reason of
 *      reason_code's table: one read from the store or written by
 *      another controller is not known to be ours, and is replaced);
 *   3. the two texts differ only in counts: equal once every token just
 *      before " more needed" is masked (tokens end at a space, so a
 *      flavor or resource name, digits and all, is never masked; a new
 *      flavor, resource, pod set or reason is written at once);
 *   4. the last write of ours is less than one interval ago.
 *
 * A held text replaces any held before it, and the workload gets a
 * timer in k->held_q at the first whole multiple of the interval (engine
 * time) at least one interval after the last write: the held texts of a
 * deep queue come due together, one wake-up and one batch of writes per
 * interval rather than one per workload. When it fires
 * (kq_pendmsg_flush, from the controller's run) the held text is written
 * if the stored condition is still QuotaReserved=False with the reason
 * it was held under; a write of any kind in between, or the stored text
 * coming back to the held one, drops it (kq_pendmsg_drop). So the
 * workload is written at most once per interval for counts, and its
 * stored message is never more than two intervals behind the newest text
 * the controller computed. Timers fire in key order at a fixed engine time,
 * so a simulation stays deterministic.
 *
 * Worked example (interval 60 s). A head's message "... 4 more needed"
 * is written at t = 0. At t = 10 s a finish makes it "3 more needed":
 * held, timer at 60 s. At t = 20 s "2 more needed": held instead. At
 * 60 s "2 more needed" is written. At 70 s a new flavor appears in the
 * text: written at once (and the count-only texts after it are held
 * until 180 s, the first whole minute at least 60 s after 70 s).
 *
 * What it does not do: hold back anything but QuotaReserved=False
 * messages (Events are written with each write, so they thin out the
 * same way), or look at what a message says beyond the masked counts.
 */
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/conditions.h"
#include "flexq/objstore.h"
#include "kueue/internal.h"

/* A held text: what the next write will say, and when it is due. */
struct pm_held {
    char *msg;   /* owned */
    int64_t due; /* engine time */
    uint8_t rsn; /* reason_code of the stored (and held) reason */
};

static void held_free(void *p)
{
    struct pm_held *h = p;
    if (h) {
        free(h->msg);
        free(h);
    }
}

/* The reasons the controller writes with QuotaReserved=False; 0 is none
 * of them. The order is the codes': add at the end. */
static const char *const reasons[] = {
    NULL,
    "WaitingForQuota",
    "ExceedsMaxQuota",
    "NoMatchingFlavor",
    "Pending",
    "Inadmissible",
    "WaitingForPreemptedWorkloads",
    "TopologyPlacementFailed",
};

uint8_t kq_pendmsg_reason_code(const char *reason)
{
    for (size_t i = 1; reason && i < sizeof(reasons) / sizeof(reasons[0]); i++)
        if (!strcmp(reasons[i], reason))
            return (uint8_t)i;
    return 0;
}

#define MORE_NEEDED " more needed"

/*
 * Whether a and b differ only in the tokens before " more needed" (a
 * token runs back to the space before it). Walks both texts together, a
 * count token at a time: no copy, no allocation.
 */
static bool counts_only(const char *a, const char *b)
{
    for (;;) {
        const char *na = strstr(a, MORE_NEEDED);
        const char *nb = strstr(b, MORE_NEEDED);
        if (!na || !nb)
            return !na && !nb && !strcmp(a, b);
        const char *ta = na, *tb = nb;
        while (ta > a && ta[-1] != ' ')
            ta--;
        while (tb > b && tb[-1] != ' ')
            tb--;
        /* The text before each count must be the same, and a count is
         * never empty. */
        if (ta - a != tb - b || memcmp(a, b, (size_t)(ta - a)) != 0 ||
            ta == na || tb == nb)
            return false;
        a = na + strlen(MORE_NEEDED);
        b = nb + strlen(MORE_NEEDED);
    }
}

/* The first multiple of `every` at least one interval after `at`: the
 * held texts of many workloads come due together, one wake-up (one
 * settle, one batch of commits) per interval, not one per workload. */
static int64_t due_after(int64_t at, int64_t every)
{
    int64_t t = at + every;
    int64_t r = t % every;
    if (r < 0)
        r += every;
    return r ? t - r + every : t;
}

void kq_pendmsg_init(struct kueue *k, int64_t every_ms)
{
    k->msg_every = every_ms > 0 ? every_ms : 0;
    k->held.free_val = held_free;
    fq_keyq_init(&k->held_q);
}

void kq_pendmsg_release(struct kueue *k)
{
    fq_smap_free(&k->held);
    fq_keyq_release(&k->held_q);
}

bool kq_pendmsg_hold(struct kueue *k, struct wl *w, const char *reason,
                     const char *msg, int64_t now)
{
    struct rec *rc = (struct rec *)w;
    if (k->msg_every <= 0 || !w->why_msg || rc->why_rsn == 0 ||
        kq_pendmsg_reason_code(reason) != rc->why_rsn ||
        now - rc->msg_at >= k->msg_every || !counts_only(w->why_msg, msg))
        return false;
    struct pm_held *h = fq_smap_get(&k->held, rc->key);
    size_t n = strlen(msg) + 1;
    if (!h) {
        h = fq_xcalloc(1, sizeof(*h));
        fq_smap_put(&k->held, rc->key, h);
    }
    h->msg = fq_xrealloc(h->msg, n);
    memcpy(h->msg, msg, n);
    h->rsn = rc->why_rsn;
    int64_t due = due_after(rc->msg_at, k->msg_every);
    if (h->due != due) {
        h->due = due;
        fq_keyq_timer(&k->held_q, rc->key, due);
    }
    k->stats.pending_msgs_held++;
    return true;
}

void kq_pendmsg_drop(struct kueue *k, struct wl *w)
{
    if (k->held.n)
        fq_smap_del(&k->held, ((struct rec *)w)->key);
}

int64_t kq_pendmsg_next(const struct kueue *k)
{
    return fq_keyq_next(&k->held_q);
}

void kq_pendmsg_flush(struct kueue *k, struct fq_engine *e, int64_t now)
{
    if (now < fq_keyq_next(&k->held_q))
        return;
    fq_keyq_fire(&k->held_q, now);
    const char *const *keys;
    size_t n = fq_keyq_take(&k->held_q, &keys);
    for (size_t i = 0; i < n; i++) {
        struct pm_held *h = fq_smap_get(&k->held, keys[i]);
        if (!h)
            continue; /* written or dropped since */
        if (h->due > now) {
            /* Held again after a later write: its own time. */
            fq_keyq_timer(&k->held_q, keys[i], h->due);
            continue;
        }
        struct rec *rc = fq_smap_get(&k->recs, keys[i]);
        const struct fq_object *o =
            rc ? fq_objstore_get(fq_engine_store(e), FQ_KIND_WORKLOAD, rc->w.ns,
                                 rc->w.name) :
                 NULL;
        const struct fq_value *qr =
            o ? fq_cond_find(o->obj, "QuotaReserved") : NULL;
        const char *st = qr ? fq_value_path_str(qr, "status", "") : "";
        const char *why = qr ? fq_value_path_str(qr, "reason", "") : "";
        /* Still waiting for the same reason: the newest text goes out. */
        if (!strcmp(st, "False") && kq_pendmsg_reason_code(why) == h->rsn &&
            rc->why_rsn == h->rsn && rc->w.why_msg &&
            strcmp(rc->w.why_msg, h->msg) != 0) {
            char *msg = h->msg;
            h->msg = NULL;
            /* kq_pendmsg_write drops the entry (and h with it). */
            kq_pendmsg_write(k, e, &rc->w, reasons[h->rsn], msg, now);
            free(msg);
            k->stats.pending_msgs_flushed++;
        } else {
            fq_smap_del(&k->held, keys[i]);
        }
    }
    fq_keyq_clear(&k->held_q);
}
