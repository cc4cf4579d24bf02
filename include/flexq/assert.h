/*
 * assert.h - FQ_ASSERT, the always-on check for states that must never
 * happen.
 *
 * Unlike <assert.h> it stays on in release builds: flexq's core is a
 * state machine whose bugs show up far from their cause, and a check that
 * aborts with the condition, file and line at the first wrong state is
 * cheaper than a wrong admission found later. Use it for invariants (a
 * quota cell gone negative, a heap index out of place), never for bad
 * input, which gets an FQ_E* error instead.
 *
 * A primitive of the base layer: it must not grow calls into higher
 * layers.
 */
#ifndef FLEXQ_ASSERT_H
#define FLEXQ_ASSERT_H

/* Prints "flexq: invariant failed: COND (FILE:LINE, FUNC)" to stderr and
 * aborts. Never returns. */
_Noreturn void fq_assert_fail(const char *cond, const char *file, int line,
                              const char *func);

#define FQ_ASSERT(cond) \
 ((cond) ? (void)0 : fq_assert_fail(#cond, __FILE__, __LINE__, __func__))

#endif
