/*
 * conditions.c - status.conditions lookups shared by the core's
 * controllers and readers (conditions.h).
 *
 * How: a linear scan of the conditions list; objects carry a handful.
 * Invariants: pure reads of the borrowed tree; a missing or malformed list
 * reads as "no such condition".
 * Not done: writing conditions (each controller sets its own, with its own
 * lastTransitionTime rules).
 */
#include "conditions.h"

#include <string.h>

const struct fq_value *fq_cond_find(const struct fq_value *obj,
                                    const char *type)
{
    const struct fq_value *cs = fq_value_path(obj, "status.conditions");
    for (size_t i = 0; i < fq_value_len(cs); i++) {
        const struct fq_value *c = fq_seq_at(cs, i);
        if (!strcmp(fq_value_path_str(c, "type", ""), type))
            return c;
    }
    return NULL;
}

bool fq_cond_true(const struct fq_value *obj, const char *type)
{
    const struct fq_value *c = fq_cond_find(obj, type);
    return c && !strcmp(fq_value_path_str(c, "status", ""), "True");
}
