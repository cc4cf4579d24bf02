/*
 * value_internal.h - value.c helpers for the core's own readers and
 * writers (json.c, yaml.c), not part of the public value API.
 */
#ifndef FLEXQ_VALUE_INTERNAL_H
#define FLEXQ_VALUE_INTERNAL_H

#include <stddef.h>

#include "flexq/value.h"

/*
 * Appends a member (a copy of the key's klen bytes, then val, owned) to
 * map m without looking for the key: the readers append every member and
 * check duplicates once per map (fq_value_map_find_duplicate), since a
 * lookup per member would be quadratic on hostile input. Returns the new
 * member (valid until m grows).
 */
struct fq_member *fq_value_map_append(struct fq_value *m, const char *key,
                                      size_t klen, struct fq_value *val);

/*
 * Index of the first key of map m (in source order) that repeats an
 * earlier key, or m->u.map.n when all keys differ. Pairwise for small
 * maps, a sort of (key, index) otherwise: O(n log n) on hostile input.
 */
size_t fq_value_map_find_duplicate(const struct fq_value *m);

/*
 * Decodes the UTF-8 character at p (p < end): returns its length (1..4)
 * and sets *cp (when cp is not NULL), or returns 0 for an invalid, overlong,
 * truncated or surrogate sequence. Shared by the JSON and YAML readers.
 */
size_t fq_utf8_decode(const unsigned char *p, const unsigned char *end,
                      unsigned *cp);

#endif
