/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The profile's call stacks: captured with libunwind on sampled allocations only, each distinct
 * stack stored once in bounded static tables, named by an id (the essay at the top of
 * pool-stack.c). Private header. A leaf of the debug layer: it calls nothing of libpool; the
 * sampler (pool-sample.c) captures and stores, the profile's tables (pool-profile.c) key their
 * rows by the ids, and the reports (introspection, the failure report) read the frames back.
 */
#ifndef POOL_SRC_POOL_STACK_H
#define POOL_SRC_POOL_STACK_H

#include <stddef.h>
#include <stdint.h>

#define POOL_STACK_DEPTH_DEF 32u    /* frames a stack keeps by default (`pools profile on
                                       depth <n>` changes it), the first the program's frame
                                       that called libpool */
#define POOL_STACK_DEPTH_MAX 64u    /* the most it can keep */
#define POOL_STACK_SLOTS     1024u  /* distinct stacks at once (slot 0 unused: id 0 is none) */
#define POOL_STACK_INDEX     2048u  /* hash slots for them (a power of two: load <= 1/2) */
#define POOL_STACK_FRAMES    16384u /* frames of all stacks together (128 KiB) */

/*
 * The calling thread's call stack, from `caller` (the return address into the program of the
 * call that entered libpool) outwards: at most `max` frames (max <= POOL_STACK_DEPTH_MAX) into
 * frames[], innermost first, each a return address. The frames of libpool itself (those the
 * unwinder finds before `caller`) are left out. When the unwinder does not reach `caller` (no
 * unwind information), the stack is `caller` alone. Returns the number of frames: 1 at least,
 * 0 when `caller` is NULL or max is 0. Any thread, outside a signal handler; allocates nothing
 * but libunwind's own per-thread cache, at the first stack it takes in a thread (mmap(2)).
 */
unsigned int pool__stack_capture(uintptr_t *frames, unsigned int max, const void *caller);

/*
 * The id of the stack frames[0..n) (1 <= n <= POOL_STACK_DEPTH_MAX), stored if it is new: one
 * copy of each distinct stack. 0 when the tables are full (the stack is not stored; the caller
 * counts the sample in its "[other]" row). Takes the stacks' lock, a leaf lock.
 */
uint32_t pool__stack_intern(const uintptr_t *frames, unsigned int n);

/*
 * Ready the unwinders before the first capture, outside the allocation path: glibc loads
 * libgcc_s at its first backtrace(), and this loads libunwind (dlopen(3) both: the loader's
 * lock, and memory). Called when a profile starts and before a report's first stack, with no
 * lock held; any thread, any number of times.
 */
void pool__stack_prepare(void);

/* Has pool__stack_prepare() run? (a stack may then be taken without allocating) */
int pool__stack_ready(void);

/* Is libunwind loaded (pool__stack_prepare(): 1 unless it is missing, or under TSan)? */
int pool__stack_unwinder_loaded(void);

/* The library pool__stack_prepare() dlopen()s for unw_backtrace(); tests point it elsewhere. */
extern const char *pool__libunwind_soname;

/* pool__stack_capture() at the depth in effect, then pool__stack_intern(): 0 when full. */
uint32_t pool__stack_here(const void *caller);

/*
 * Copy the frames of stack `id` into out[0..max): returns how many, 0 for id 0 or for the id of
 * a stack forgotten since (a new profile cleared the tables). Takes the stacks' lock, or with
 * `try_only` only tries it (0 when it is held: the failure report never waits).
 */
unsigned int pool__stack_get(uint32_t id, uintptr_t *out, unsigned int max, int try_only);

/* Forget every stack (a new profile): ids given out before are no longer found. */
void pool__stack_reset(void);

/* Keep `depth` frames (1..POOL_STACK_DEPTH_MAX, clamped) in the stacks captured from now on. */
void pool__stack_set_depth(unsigned int depth);

/* The depth in effect, in frames. */
unsigned int pool__stack_depth(void);

/* What the tables hold: stacks and frames stored, stacks refused since the reset (full). */
struct pool_stack_usage {
	unsigned int stacks, frames;
	uint64_t refused;
};
void pool__stack_usage(struct pool_stack_usage *u);

/* The size of the tables in bytes (static: the bound the documentation states). */
size_t pool__stack_table_bytes(void);

/* fork(): the lock across it, released alike in the parent and in the child. */
void pool__stack_fork_prepare(void);
void pool__stack_fork_after(void);

#endif
