/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The profile's call stacks: which code path made a sampled allocation.
 *
 * 1. Why stacks. The return address of the call into libpool names the function that called
 *    pool_alloc(); a program that allocates through a helper of its own (an obj_alloc() for
 *    every pool, as doc/example-server.md advises) would see one site for all of its callers.
 *    jemalloc's and gperftools' heap profilers record call stacks for that reason, and so does
 *    this profile: the stack is the site's identity in every output (pool-profile-dump.c).
 * 2. Capture, from the unwind tables of each object (.eh_frame), so that it works on code built
 *    without frame pointers, as Debian builds it; for sampled allocations only (a sample and
 *    the candidates of the sampler, pool-sample.c). Two well-kept unwinders, each where it is
 *    cheap (doc/debugging.md, "Cost", has the figures): libunwind's unw_backtrace() (the
 *    libunwind project, Debian's libunwind-dev) costs about 10 ns a frame once it knows the
 *    frame, but learns each frame once per thread, at about 10 us each (its per-thread trace
 *    cache, filled through its locked slow path): a thread's first stack costs it 100-200 us.
 *    glibc's backtrace() (libgcc's unwinder) learns nothing and costs about 500 ns a frame every
 *    time. So a thread's first COLD_CAPTURES stacks are glibc's, and libunwind's from then on:
 *    COLD_CAPTURES glibc stacks cost about what libunwind's warm-up does (the ski-rental
 *    bound: a thread pays at most about twice the cheaper of the two), so a thread that
 *    samples a few dozen times and exits never pays the warm-up, a long-lived one pays it once.
 *    libpool does not link libunwind: pool__stack_prepare(), called when a profile starts or
 *    a report first needs a stack, dlopen()s the library pool__libunwind_soname names,
 *    RTLD_LOCAL. Linked, it would be in every process from its start (libunwind, liblzma:
 *    about 0.16 MiB resident), and its exported backtrace() would come before the C library's
 *    for the whole program, whose own backtrace() calls would then map libunwind's caches
 *    (HAProxy calls it at start: 0.25 MiB more). Until it is loaded, or where it cannot be,
 *    every stack is glibc's backtrace(), called by its other exported name, __backtrace
 *    (GLIBC_2.2.5), the same function, whatever a program that links libunwind itself put
 *    first. glibc loads libgcc_s at its first backtrace(): pool__stack_prepare() calls it too.
 *    Under ThreadSanitizer every stack is glibc's (COLD_CAPTURES) and libunwind is not loaded.
 *    libpool's own frames are left out.
 * 3. Storage. Each distinct stack is stored once: a hash index over the stacks, and one array
 *    of frames that their entries point into, all static (POOL_STACK_SLOTS stacks,
 *    POOL_STACK_FRAMES frames, pool__stack_table_bytes() in all, zero pages until a profile
 *    first runs). A stack that does not fit is refused (id 0), and its sample counts in the
 *    profile's "[other]" row. A new profile forgets them all; an id carries the generation of
 *    the tables it was given in, so an id that outlived a reset (a sampler that took it just
 *    before) is found to be stale instead of naming another stack.
 * 4. Names. Frames are addresses here; they are named when a report is written, never here
 *    (pool-symbols.c).
 *
 * Concurrency: one lock guards the tables, a leaf lock (nothing is locked or called under it).
 * The profile's lock may be held when it is taken (snapshots copy frames), never the reverse.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdatomic.h>
#include <string.h>

#include "base/pool-assert.h"
#include "base/pool-lock.h"
#include "base/pool-util.h"
#include "debug/pool-stack.h"

/* Frames of libpool the unwinder may find before the program's: capture, sampler, slow path. */
#define SKIP_MAX    8u
/*
 * A thread's first stacks taken with glibc's backtrace(), before libunwind's warm-up pays.
 * Under ThreadSanitizer, every one: libunwind's per-thread cache is freed by a thread-specific
 * data destructor that locks a mutex after ThreadSanitizer has let the exiting thread go, and
 * its interceptor crashes there.
 */
#if defined(__SANITIZE_THREAD__)
#define POOL_STACK_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define POOL_STACK_TSAN 1
#endif
#endif
#ifdef POOL_STACK_TSAN
#define COLD_CAPTURES UINT_MAX
#else
/*
 * 48 stacks of about 8 frames at 500 ns: about 200 us, libunwind's warm-up. Measured on
 * pool-bench's server row whose 8 threads take about 18 samples each and exit (short lifetime,
 * 2048 live, the default rate): the profile costs 1.09x the time off at 48, 1.56x at 8, where
 * every such thread paid the warm-up.
 */
#define COLD_CAPTURES 48u
#endif
#define SLOT_BITS   10u                         /* log2(POOL_STACK_SLOTS) */
#define INDEX_BITS  11u                         /* log2(POOL_STACK_INDEX) */
#define GEN_MASK    ((UINT32_C(1) << (32 - SLOT_BITS)) - 1u)

_Static_assert(POOL_STACK_SLOTS == 1u << SLOT_BITS, "stack slots");
_Static_assert(POOL_STACK_INDEX == 1u << INDEX_BITS, "stack index size");
_Static_assert(POOL_STACK_INDEX >= 2 * POOL_STACK_SLOTS, "stack index load");

struct stack_entry {
	uint64_t hash;
	uint32_t first;                 /* its frames: frames[first .. first + depth) */
	uint16_t depth;
};

static struct pool_lock stack_lock = POOL_LOCK_INITIALIZER;
static struct stack_entry stacks[POOL_STACK_SLOTS];
static uint16_t stack_index[POOL_STACK_INDEX];  /* slot, 0: empty */
static uintptr_t frames[POOL_STACK_FRAMES];
static unsigned int nstacks = 1, nframes;       /* slot 0 unused */
static uint32_t gen = 1;                        /* of the tables, in every id */
static uint64_t refused;
static atomic_uint depth = POOL_STACK_DEPTH_DEF;
static __thread unsigned int captures __attribute__((tls_model("initial-exec")));
static atomic_int prepared;

/* libunwind's unw_backtrace(), once pool__stack_prepare() loaded it; NULL before or without. */
typedef int (*unw_backtrace_fn)(void **buffer, int size);
static _Atomic(unw_backtrace_fn) unwinder;

const char *pool__libunwind_soname = "libunwind.so.8";

/* glibc's backtrace(), whichever object's backtrace() the program's link put first. */
int __backtrace(void **buffer, int size);

size_t pool__stack_table_bytes(void)
{
	return sizeof(stacks) + sizeof(stack_index) + sizeof(frames);
}

unsigned int pool__stack_depth(void)
{
	return atomic_load_explicit(&depth, memory_order_relaxed);
}

/* ------------------------------------------------------------------------------------------ */
/* Capture                                                                                    */
/* ------------------------------------------------------------------------------------------ */

unsigned int pool__stack_capture(uintptr_t *out, unsigned int max, const void *caller)
{
	void *buf[POOL_STACK_DEPTH_MAX + SKIP_MAX];
	unw_backtrace_fn unw;
	int n, i, k;

	if (!caller || !max)
		return 0;
	if (max > POOL_STACK_DEPTH_MAX)
		max = POOL_STACK_DEPTH_MAX;
	unw = atomic_load_explicit(&unwinder, memory_order_acquire);
	if (captures < COLD_CAPTURES || !unw) {
		captures += captures < COLD_CAPTURES;
		n = __backtrace(buf, (int)(max + SKIP_MAX));
	} else {
		n = unw(buf, (int)(max + SKIP_MAX));
	}
	for (i = 0; i < n && buf[i] != caller; i++)
		;
	if (i == n) {
		out[0] = (uintptr_t)caller;
		return 1;
	}
	for (k = 0; i < n && k < (int)max; i++, k++)
		out[k] = (uintptr_t)buf[i];
	return (unsigned int)k;
}

/*
 * libunwind, loaded once for the life of the process (never unloaded: a capture may be inside
 * it). A failure (no such library, no unw_backtrace) leaves every stack to glibc.
 */
static void load_libunwind(void)
{
#ifndef POOL_STACK_TSAN
	void *h = dlopen(pool__libunwind_soname, RTLD_NOW | RTLD_LOCAL);
	void *f;

	if (!h)
		return;
	f = dlsym(h, "unw_backtrace");
	if (!f) {
		dlclose(h);
		return;
	}
	atomic_store_explicit(&unwinder, (unw_backtrace_fn)f, memory_order_release);
#endif
}

void pool__stack_prepare(void)
{
	static atomic_int loading;
	void *one[1];

	if (atomic_load_explicit(&prepared, memory_order_acquire))
		return;
	__backtrace(one, 1);
	/* one caller loads it; the others go on meanwhile with glibc's stacks */
	if (!atomic_exchange_explicit(&loading, 1, memory_order_relaxed))
		load_libunwind();
	atomic_store_explicit(&prepared, 1, memory_order_release);
}

int pool__stack_unwinder_loaded(void)
{
	return atomic_load_explicit(&unwinder, memory_order_acquire) != NULL;
}

int pool__stack_ready(void)
{
	return atomic_load_explicit(&prepared, memory_order_acquire);
}

uint32_t pool__stack_here(const void *caller)
{
	uintptr_t f[POOL_STACK_DEPTH_MAX];
	unsigned int n = pool__stack_capture(f, pool__stack_depth(), caller);

	return n ? pool__stack_intern(f, n) : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* The tables                                                                                 */
/* ------------------------------------------------------------------------------------------ */

static uint64_t hash_frames(const uintptr_t *f, unsigned int n)
{
	uint64_t h = n;
	unsigned int i;

	for (i = 0; i < n; i++) {
		h ^= (uint64_t)f[i];
		h *= UINT64_C(0x9E3779B97F4A7C15);
		h ^= h >> 29;
	}
	return h;
}

uint32_t pool__stack_intern(const uintptr_t *f, unsigned int n)
{
	uint64_t h = hash_frames(f, n);
	unsigned int i = pool__hash_bits(h, INDEX_BITS), probes, s;
	uint32_t id = 0;

	POOL_ASSERT(n >= 1 && n <= POOL_STACK_DEPTH_MAX);
	pool__lock(&stack_lock);
	for (probes = 0; probes < POOL_STACK_INDEX; probes++, i = (i + 1) & (POOL_STACK_INDEX - 1)) {
		s = stack_index[i];
		if (!s)
			break;
		if (stacks[s].hash == h && stacks[s].depth == n &&
		    !memcmp(&frames[stacks[s].first], f, n * sizeof(*f))) {
			id = s | (gen << SLOT_BITS);
			goto out;
		}
	}
	if (nstacks == POOL_STACK_SLOTS || nframes + n > POOL_STACK_FRAMES ||
	    probes == POOL_STACK_INDEX) {
		refused++;
		goto out;
	}
	s = nstacks++;
	stacks[s].hash = h;
	stacks[s].first = nframes;
	stacks[s].depth = (uint16_t)n;
	memcpy(&frames[nframes], f, n * sizeof(*f));
	nframes += n;
	stack_index[i] = (uint16_t)s;
	id = s | (gen << SLOT_BITS);
out:
	pool__unlock(&stack_lock);
	return id;
}

unsigned int pool__stack_get(uint32_t id, uintptr_t *out, unsigned int max, int try_only)
{
	unsigned int s = id & (POOL_STACK_SLOTS - 1), n = 0;

	if (!id)
		return 0;
	if (try_only) {
		if (pool__lock_try(&stack_lock) != 0)
			return 0;
	} else {
		pool__lock(&stack_lock);
	}
	if (id >> SLOT_BITS == gen && s && s < nstacks) {
		n = stacks[s].depth < max ? stacks[s].depth : max;
		memcpy(out, &frames[stacks[s].first], n * sizeof(*out));
	}
	pool__unlock(&stack_lock);
	return n;
}

void pool__stack_set_depth(unsigned int d)
{
	if (d < 1)
		d = 1;
	if (d > POOL_STACK_DEPTH_MAX)
		d = POOL_STACK_DEPTH_MAX;
	atomic_store_explicit(&depth, d, memory_order_relaxed);
}

void pool__stack_reset(void)
{
	pool__lock(&stack_lock);
	memset(stack_index, 0, sizeof(stack_index));
	nstacks = 1;
	nframes = 0;
	refused = 0;
	gen = (gen + 1) & GEN_MASK;
	if (!gen)
		gen = 1;
	pool__unlock(&stack_lock);
}

void pool__stack_usage(struct pool_stack_usage *u)
{
	pool__lock(&stack_lock);
	u->stacks = nstacks - 1;
	u->frames = nframes;
	u->refused = refused;
	pool__unlock(&stack_lock);
}

/* ------------------------------------------------------------------------------------------ */
/* fork()                                                                                     */
/* ------------------------------------------------------------------------------------------ */

void pool__stack_fork_prepare(void)
{
	pool__lock(&stack_lock);
}

/* The parent and the child alike: the forking thread holds the lock in both. */
void pool__stack_fork_after(void)
{
	POOL_ASSERT(pool__lock_held(&stack_lock));
	pool__unlock(&stack_lock);
}
