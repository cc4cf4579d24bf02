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
 * Shrinks the item array of sequence or map v to its count, for a reader
 * that has appended the last item: appends double the array from 8
 * items, and a stored object's maps hold 1 to 7 members, so a tree kept
 * as parsed held some 200 bytes of empty members per map (at a million
 * stored objects, about a third of flexqd's memory). A later append
 * grows the array again. Nothing for other nodes.
 */
void fq_value_fit(struct fq_value *v);

/*
 * Decodes the UTF-8 character at p (p < end): returns its length (1..4)
 * and sets *cp (when cp is not NULL), or returns 0 for an invalid, overlong,
 * truncated or surrogate sequence. Shared by the JSON and YAML readers.
 */
size_t fq_utf8_decode(const unsigned char *p, const unsigned char *end,
                      unsigned *cp);

#endif
