/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The allocation-site profile's tables: which objects are sampled, and what each (allocating
 * site, pool) pair holds.
 *
 * How the profile works (the sampler is pool-sample.c; the outputs pool-profile-dump.c)
 *
 * 1. Samples. A thread samples one allocation per about `rate` bytes it allocates, the
 *    intervals drawn at random (a Poisson process over the bytes: jemalloc's prof and
 *    tcmalloc's heap sampler draw exponential intervals the same way), so that big objects are
 *    sampled more often than small ones in proportion to their size. A sampled object is
 *    remembered here, outside the object, in a table keyed by its address: the object layout
 *    never changes, and the profile can start and stop at any moment. Its record holds the
 *    pool, the allocating site and the time. A site is a call stack (pool-stack.c: taken with
 *    libunwind when the sampler picks the allocation, stored once per distinct stack, named
 *    by an id here), its first frame the return address of the pool_alloc(), pool_zalloc() or
 *    bulk call.
 * 2. Rows. Each (stack, pool) pair has a row: objects sampled there, those seen freed (credited
 *    back to that row, whichever thread freed them), and those still live, whose ages the
 *    snapshot reads from their records. One live sample of an s-byte object stands for
 *    1 / (1 - exp(-s / rate)) objects (pool__prof_weight()), the estimate of what the site holds.
 * 3. Frees. A free is credited when the profile sees the object free: freed through a slow
 *    path, found in a magazine of free objects, or handed out again by a slow path. How often a
 *    free is seen, and what that costs, is the sampler's business (pool-sample.c).
 * 4. Bounds. POOL_PROF_RECORDS records (a sample past them counts as dropped), POOL_PROF_SITES
 *    rows (a pair past them, or a stack the stacks' tables refused, counts in the "[other]"
 *    row): static tables, pool__prof_table_bytes() with the stacks'; nothing is allocated.
 * 5. Chosen pools. A profile may sample only the pools chosen when it starts (`pools profile on
 *    rate 1 pool <name>`: every allocation of one pool, the exact mode for small leaks); the
 *    others' samplers draw no interval (pool__prof_wants()).
 *
 * Concurrency: one lock guards the tables (a struct pool_lock, pool-lock.h: the functions that
 * need it held assert it). It is a leaf lock: nothing is locked, allocated or entered (a cache
 * section) under it, so the sampler may take it inside a section, and fork() takes it last.
 * Only a counting filter in front of the record table (a byte per cell: the records whose
 * address hashes there) and the count of records are read without it, with relaxed loads: a
 * check that races an insertion may miss the new record, credited at a later check.
 */
#include <math.h>
#include <stddef.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "base/pool-assert.h"
#include "base/pool-lock.h"
#include "debug/pool-profile.h"
#include "os/pool-region.h"

struct prof_record {
	uintptr_t addr;                 /* 0: an empty slot */
	struct pool_head *pool;
	uint64_t born_ns;               /* CLOCK_MONOTONIC */
	uint32_t row;
};

struct prof_row {
	uint32_t stack;                 /* 0 and pool 0: unused (row 0: "[other]") */
	uintptr_t pool;
	char name[POOL_NAME_MAX + 1];
	size_t size;
	atomic_ulong samples, kept, freed;
	atomic_uint live;
};

static struct pool_lock prof_lock = POOL_LOCK_INITIALIZER;
static struct prof_record records[POOL_PROF_SLOTS];
static struct prof_row rows[POOL_PROF_SITES];
static uint16_t row_index[POOL_PROF_INDEX];     /* row + 1, 0: empty */
static unsigned int nrows = 1;                  /* row 0 is "[other]" */
static uint64_t dropped, forgotten, start_ns;

atomic_uint pool__prof_nlive;
_Atomic unsigned short pool__prof_filter[POOL_PROF_FILTER];
atomic_uint pool__prof_generation;
atomic_uint pool__prof_only;
static atomic_uint choose_tokens;
static atomic_size_t prof_rate = POOL_PROFILE_RATE_DEF;

#define RECORD_BITS 13u                         /* log2(POOL_PROF_SLOTS) */
#define FILTER_BITS 12u                         /* log2(POOL_PROF_FILTER) */
#define INDEX_BITS  10u                         /* log2(POOL_PROF_INDEX) */

_Static_assert(POOL_PROF_SLOTS == 1u << RECORD_BITS, "record table size");
_Static_assert(POOL_PROF_FILTER == 1u << FILTER_BITS, "filter size");
_Static_assert(POOL_PROF_INDEX == 1u << INDEX_BITS, "row index size");
_Static_assert(POOL_PROF_SLOTS >= 2 * POOL_PROF_RECORDS, "record table load");
_Static_assert(POOL_PROF_INDEX >= 2 * POOL_PROF_SITES, "row index load");

size_t pool__prof_table_bytes(void)
{
	return sizeof(records) + sizeof(rows) + sizeof(row_index) + sizeof(pool__prof_filter) +
	       pool__stack_table_bytes();
}

size_t pool__prof_rate(void)
{
	return atomic_load_explicit(&prof_rate, memory_order_relaxed);
}

/* ------------------------------------------------------------------------------------------ */
/* Rows                                                                                       */
/* ------------------------------------------------------------------------------------------ */

static unsigned int row_hash(uint32_t stack, uintptr_t pool)
{
	return pool__hash_bits((uint64_t)stack ^ ((uint64_t)pool * UINT64_C(0xff51afd7ed558ccd)),
	                       INDEX_BITS);
}

/*
 * Lock held: the row of (stack, pool), made if it is new; row 0 ("[other]") when all are taken
 * or the stack was not stored (id 0).
 */
static unsigned int row_of(uint32_t stack, const struct pool_head *pool)
{
	unsigned int h = row_hash(stack, (uintptr_t)pool), i, r;

	POOL_ASSERT(pool__lock_held(&prof_lock));
	if (!stack)
		return 0;
	for (i = 0; i < POOL_PROF_INDEX; i++, h = (h + 1) & (POOL_PROF_INDEX - 1)) {
		if (!row_index[h])
			break;
		r = row_index[h] - 1u;
		if (rows[r].stack == stack && rows[r].pool == (uintptr_t)pool)
			return r;
	}
	if (nrows == POOL_PROF_SITES || i == POOL_PROF_INDEX)
		return 0;
	r = nrows++;
	rows[r].stack = stack;
	rows[r].pool = (uintptr_t)pool;
	memcpy(rows[r].name, pool->name, sizeof(rows[r].name));
	rows[r].size = pool->ro.size;
	row_index[h] = (uint16_t)(r + 1u);
	return r;
}

/* ------------------------------------------------------------------------------------------ */
/* Records: linear probing, deletion by backward shift (Knuth, TAOCP vol. 3, 6.4, Algorithm R) */
/* ------------------------------------------------------------------------------------------ */

static inline unsigned int home_of(uintptr_t addr)
{
	return pool__hash_ptr((const void *)addr, RECORD_BITS);
}

/* Lock held: the slot holding `addr`, or -1. */
static int find(uintptr_t addr)
{
	unsigned int i = home_of(addr), n;

	POOL_ASSERT(pool__lock_held(&prof_lock));
	for (n = 0; n < POOL_PROF_SLOTS && records[i].addr; n++, i = (i + 1) & (POOL_PROF_SLOTS - 1))
		if (records[i].addr == addr)
			return (int)i;
	return -1;
}

static void filter_add(uintptr_t addr, int delta)
{
	_Atomic unsigned short *f = &pool__prof_filter[pool__hash_ptr((const void *)addr,
	                                                              FILTER_BITS)];

	atomic_store_explicit(f, (unsigned short)(atomic_load_explicit(f, memory_order_relaxed) +
	                                          delta), memory_order_relaxed);
}

/* Lock held: empty slot `i` (its record counted already), shifting back what probed past it. */
static void erase(unsigned int i)
{
	unsigned int j = i, k;

	POOL_ASSERT(pool__lock_held(&prof_lock));
	filter_add(records[i].addr, -1);
	atomic_fetch_sub_explicit(&pool__prof_nlive, 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&records[i].pool->prof_live, 1, memory_order_relaxed);
	for (;;) {
		records[i].addr = 0;
		for (;;) {
			j = (j + 1) & (POOL_PROF_SLOTS - 1);
			if (!records[j].addr)
				return;
			k = home_of(records[j].addr);
			/* can the record at j move to i? (its home is not cyclically in (i, j]) */
			if (i <= j ? (i >= k || k > j) : (i >= k && k > j))
				break;
		}
		records[i] = records[j];
		i = j;
	}
}

/* Lock held: credit the record in slot `i` to its row and forget it. */
static void credit_slot(unsigned int i)
{
	struct prof_row *r = &rows[records[i].row];

	POOL_ASSERT(pool__lock_held(&prof_lock));
	atomic_fetch_add_explicit(&r->freed, 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&r->live, 1, memory_order_relaxed);
	erase(i);
}

void pool__prof_dropped(void)
{
	pool__lock(&prof_lock);
	dropped++;
	pool__unlock(&prof_lock);
}

int pool__prof_record(struct pool_head *pool, void *obj, uint32_t stack, uint64_t born_ns)
{
	uintptr_t addr = (uintptr_t)obj;
	unsigned int i, r;
	int slot;

	POOL_ASSERT(pool && obj);
	pool__lock(&prof_lock);
	slot = find(addr);
	if (slot >= 0)
		credit_slot((unsigned int)slot);
	r = row_of(stack, pool);
	atomic_fetch_add_explicit(&rows[r].samples, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&rows[r].kept, 1, memory_order_relaxed);
	if (atomic_load_explicit(&pool__prof_nlive, memory_order_relaxed) >= POOL_PROF_RECORDS) {
		/* counted as sampled and freed at once: the row's figures stay consistent */
		atomic_fetch_add_explicit(&rows[r].freed, 1, memory_order_relaxed);
		dropped++;
		pool__unlock(&prof_lock);
		return -1;
	}
	for (i = home_of(addr); records[i].addr; i = (i + 1) & (POOL_PROF_SLOTS - 1))
		;
	records[i].addr = addr;
	records[i].pool = pool;
	records[i].born_ns = born_ns;
	records[i].row = r;
	atomic_fetch_add_explicit(&rows[r].live, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&pool->prof_live, 1, memory_order_relaxed);
	filter_add(addr, 1);
	atomic_fetch_add_explicit(&pool__prof_nlive, 1, memory_order_release);
	pool__unlock(&prof_lock);
	return 0;
}

int pool__prof_credit(const void *obj)
{
	int slot;

	if (!pool__prof_maybe(obj))
		return 0;
	pool__lock(&prof_lock);
	slot = find((uintptr_t)obj);
	if (slot >= 0)
		credit_slot((unsigned int)slot);
	pool__unlock(&prof_lock);
	return slot >= 0;
}

void pool__prof_pool_gone(const struct pool_head *pool)
{
	unsigned int i;

	if (!atomic_load_explicit(&pool->prof_live, memory_order_relaxed))
		return;
	pool__lock(&prof_lock);
	for (i = 0; i < POOL_PROF_SLOTS; ) {
		/* erase() may shift a record of another slot into i: look at i again */
		if (records[i].addr && records[i].pool == pool) {
			atomic_fetch_sub_explicit(&rows[records[i].row].live, 1, memory_order_relaxed);
			forgotten++;
			erase(i);
			continue;
		}
		i++;
	}
	pool__unlock(&prof_lock);
}

void pool__prof_reset(size_t rate)
{
	unsigned int i;

	pool__stack_prepare();
	/* the region of sampled objects, reserved once (a failure leaves samples dropped) */
	pool__region_reserve();
	pool__lock(&prof_lock);
	for (i = 0; i < POOL_PROF_SLOTS; i++)
		if (records[i].addr)
			atomic_fetch_sub_explicit(&records[i].pool->prof_live, 1, memory_order_relaxed);
	memset(records, 0, sizeof(records));
	for (i = 0; i < POOL_PROF_FILTER; i++)
		atomic_store_explicit(&pool__prof_filter[i], 0, memory_order_relaxed);
	for (i = 0; i < POOL_PROF_SITES; i++) {
		rows[i].stack = 0;
		rows[i].pool = 0;
		rows[i].name[0] = 0;
		rows[i].size = 0;
		atomic_store_explicit(&rows[i].samples, 0, memory_order_relaxed);
		atomic_store_explicit(&rows[i].kept, 0, memory_order_relaxed);
		atomic_store_explicit(&rows[i].freed, 0, memory_order_relaxed);
		atomic_store_explicit(&rows[i].live, 0, memory_order_relaxed);
	}
	memset(row_index, 0, sizeof(row_index));
	pool__stack_reset();
	nrows = 1;
	dropped = forgotten = 0;
	start_ns = pool__clock_ns(CLOCK_MONOTONIC);
	atomic_store_explicit(&pool__prof_nlive, 0, memory_order_relaxed);
	atomic_store_explicit(&prof_rate, rate, memory_order_relaxed);
	atomic_fetch_add_explicit(&pool__prof_generation, 1, memory_order_release);
	pool__unlock(&prof_lock);
}

unsigned int pool__prof_choose_begin(void)
{
	unsigned int t;

	/* never 0, which means every pool */
	while (!(t = atomic_fetch_add_explicit(&choose_tokens, 1, memory_order_relaxed) + 1))
		;
	return t;
}

void pool__prof_choose(struct pool_head *pool, unsigned int token)
{
	atomic_store_explicit(&pool->prof_chosen, token, memory_order_relaxed);
}

void pool__prof_choose_end(unsigned int token)
{
	atomic_store_explicit(&pool__prof_only, token, memory_order_release);
}

/* ------------------------------------------------------------------------------------------ */
/* Intervals and weights                                                                      */
/* ------------------------------------------------------------------------------------------ */

double pool__prof_weight(size_t size, size_t rate)
{
	double p = -expm1(-(double)size / (double)(rate ? rate : 1));

	return p > 0 ? 1.0 / p : 1.0;
}

uint64_t pool__prof_interval(uint64_t *rng, size_t size, size_t rate)
{
	double u, n;

	if (!*rng)
		*rng = (pool__clock_ns(CLOCK_MONOTONIC) ^ (uint64_t)(uintptr_t)rng) | 1;
	/* u uniform in (0, 1]: the high 53 bits of a step of xorshift64* (pool-util.h) */
	u = (double)((pool__xorshift64s(rng) >> 11) + 1) * 0x1.0p-53;
	/* objects until the bytes reach an exponential draw of mean `rate` (at least the next) */
	n = 1.0 + floor(-log(u) * (double)rate / (double)(size ? size : 1));
	return n < 0x1.0p62 ? (uint64_t)n : UINT64_C(1) << 62;
}

/* ------------------------------------------------------------------------------------------ */
/* Snapshots                                                                                  */
/* ------------------------------------------------------------------------------------------ */

/* Lock held: row `r` into *o, with its stack (only tried with `try_only`). */
static void copy_row(struct pool_prof_row *o, unsigned int r, size_t rate, int try_only)
{
	/* all but the frames, which the stack fills as far as it goes */
	memset(o, 0, offsetof(struct pool_prof_row, frames));
	memset(&o->pool, 0, sizeof(*o) - offsetof(struct pool_prof_row, pool));
	o->stack = rows[r].stack;
	o->depth = pool__stack_get(o->stack, o->frames, POOL_STACK_DEPTH_MAX, try_only);
	o->pool = rows[r].pool;
	memcpy(o->name, rows[r].name, sizeof(o->name));
	o->size = rows[r].size;
	o->samples = atomic_load_explicit(&rows[r].samples, memory_order_relaxed);
	o->kept = atomic_load_explicit(&rows[r].kept, memory_order_relaxed);
	o->freed = atomic_load_explicit(&rows[r].freed, memory_order_relaxed);
	o->live = atomic_load_explicit(&rows[r].live, memory_order_relaxed);
	o->weight = r ? pool__prof_weight(o->size, rate) : 0;
}

size_t pool__prof_snapshot(struct pool_prof_row *out, size_t max, struct pool_prof_summary *sum)
{
	size_t rate = pool__prof_rate(), n = 0, k;
	uint16_t where[POOL_PROF_SITES];
	uint64_t now = pool__clock_ns(CLOCK_MONOTONIC);
	unsigned int r, i;

	pool__lock(&prof_lock);
	memset(sum, 0, sizeof(*sum));
	sum->rate = rate;
	sum->gen = pool__prof_gen();
	sum->depth = pool__stack_depth();
	sum->chosen = atomic_load_explicit(&pool__prof_only, memory_order_relaxed) != 0;
	sum->dropped = dropped;
	sum->forgotten = forgotten;
	sum->start_ns = start_ns;
	sum->live = atomic_load_explicit(&pool__prof_nlive, memory_order_relaxed);
	{
		struct pool_stack_usage u;

		pool__stack_usage(&u);
		sum->stacks = u.stacks;
		sum->stacks_refused = u.refused;
	}
	for (r = 0; r < nrows; r++) {
		uint64_t samples = atomic_load_explicit(&rows[r].samples, memory_order_relaxed);

		sum->samples += samples;
		sum->freed += atomic_load_explicit(&rows[r].freed, memory_order_relaxed);
		where[r] = UINT16_MAX;
		if (!samples || n == max)
			continue;
		where[r] = (uint16_t)n;
		copy_row(&out[n++], r, rate, 0);
	}
	for (k = 0; k < n; k++)
		out[k].age_min_ms = UINT64_MAX;
	for (i = 0; i < POOL_PROF_SLOTS; i++) {
		uint64_t age;

		if (!records[i].addr || where[records[i].row] == UINT16_MAX)
			continue;
		k = where[records[i].row];
		age = now > records[i].born_ns ? (now - records[i].born_ns) / 1000000u : 0;
		if (age < out[k].age_min_ms)
			out[k].age_min_ms = age;
		if (age > out[k].age_max_ms)
			out[k].age_max_ms = age;
		out[k].age_sum_ms += age;
	}
	for (k = 0; k < n; k++)
		if (out[k].age_min_ms == UINT64_MAX)
			out[k].age_min_ms = 0;
	pool__unlock(&prof_lock);
	return n;
}

size_t pool__prof_top_of(const struct pool_head *pool, struct pool_prof_row *out, size_t max)
{
	size_t rate = pool__prof_rate(), n = 0, k;
	unsigned int r;

	if (!max || pool__lock_try(&prof_lock) != 0)
		return 0;
	for (r = 1; r < nrows; r++) {
		uint64_t live = atomic_load_explicit(&rows[r].live, memory_order_relaxed);

		if (rows[r].pool != (uintptr_t)pool || !live)
			continue;
		/* an insertion into the best-first list of at most `max` */
		if (n < max)
			k = n++;
		else if (out[max - 1].live < live)
			k = max - 1;
		else
			continue;
		for (; k > 0 && out[k - 1].live < live; k--)
			out[k] = out[k - 1];
		copy_row(&out[k], r, rate, 1);
	}
	pool__unlock(&prof_lock);
	return n;
}

/* ------------------------------------------------------------------------------------------ */
/* fork()                                                                                     */
/* ------------------------------------------------------------------------------------------ */

void pool__prof_fork_prepare(void)
{
	pool__lock(&prof_lock);
	pool__stack_fork_prepare();
}

void pool__prof_fork_after(void)
{
	POOL_ASSERT(pool__lock_held(&prof_lock));
	pool__stack_fork_after();
	pool__unlock(&prof_lock);
}
