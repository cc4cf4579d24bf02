/*
 * capacity/capacity.h - the capacity controller (capacity.c), the top of
 * the capacity modules: its API is the controller ops
 * fq_capacity_controller (declared with the other controllers in
 * engine/controllers.h), whose on_change and run call every module below
 * it. The state it keeps is in capacity/state.h; each module has its own
 * header (state.h lists them in order).
 *
 * What it does not do: hold helpers for the modules below it (they are in
 * common.h, nodes.h, watch.h, ...), so that no module below includes it.
 */
#ifndef FLEXQ_CAPACITY_H
#define FLEXQ_CAPACITY_H

#include "capacity/state.h"
#include "engine/controllers.h"

#endif
