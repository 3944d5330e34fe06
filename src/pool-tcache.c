/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The thread-cache tier: the thread registry, each thread's context and caches (struct
 * pool_thread, reached by the inline fast path through the TLS pointer pool__tls_cache), the
 * magazines of each (thread, pool) slot, the byte budget and CLOCK eviction, refill from the
 * shared lists and the OS layer, bulk moves, flush at thread exit and on request, and what other
 * threads do to a thread's caches (pool_destroy()'s drain, fork()).
 *
 * A slot, after Bonwick & Adams ("Magazines and Vmem", USENIX 2001, section 3): the loaded
 * magazine, whose pointer array the fast path pops and pushes through the slot's struct
 * pool_tcache entry; the previous magazine; a stack of full magazines and one of empty ones,
 * which are the thread's own small depot. When the loaded magazine runs empty, a full previous
 * one takes its place, else the top of the full stack, else magazines from a shared free list
 * (one exchange), else new objects from the OS layer. When it runs full, an empty previous one
 * takes its place, else the previous one goes onto the full stack and an empty magazine is
 * loaded. Every move is of whole magazines: a pointer swap or a stack operation on magazine
 * headers, never a walk over objects, so the objects' memory is not touched at all.
 *
 * The budget: each slot counts `reserved_objs`, the objects of its previous and full magazines
 * plus the loaded magazine's capacity, and the thread keeps sum(reserved_objs * cache_cost) ==
 * reserved <= budget. What does not fit is evicted: the CLOCK (Corbato 1968: a reference bit,
 * set when a slot's slow path moves a magazine, cleared by the hand) picks the coldest other
 * slot, which gives the bottom half of its full stack (its coldest magazines) or, with none, all
 * it holds; then this slot's own full stack; and a full magazine that still does not fit goes
 * to the shared free lists at once. The fast path itself counts nothing, so a thread holds at
 * most its budget.
 *
 * Sections: a thread changes its slots only inside a section (a busy word set at the start and
 * cleared at the end). fork() and pool_destroy() quiesce: they raise a global flag, wait
 * (bounded) until no registered thread is inside a section, and look at other threads' slots
 * while the flag keeps new sections from starting. So a fork() child never sees a slot cut in
 * the middle of a change, and a drain never races one. The thread's side is a plain store and a
 * load: the quiescer issues membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), which runs a full
 * memory barrier on every thread of the process, so that one of the two sides always sees the
 * other (the asymmetric fence of Linux's membarrier(2)); where membarrier is not available, each
 * section entry uses a full fence instead. The inline fast path is not a section: its changes are
 * single stores (the pointer, then the count), safe to be cut anywhere.
 *
 * Concurrency otherwise: a thread's caches are written by that thread alone. The registry
 * (registry[], ids) is guarded by registry_lock; the pool slot table by the pool list lock of
 * pool.c, whose creation and destruction of pools call pool__tcache_attach()/detach(). Lock
 * order: pool list -> registry_lock -> a pool's pass lock (trylock only) (see the essay in
 * pool.c). A section takes no lock but the uaf table's and the OS layer's.
 */
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pool-assert.h"
#include "pool-bucket.h"
#include "pool-config.h"
#include "pool-fault.h"
#include "pool-os.h"
#include "pool-tcache.h"
#include "pool-util.h"

/* Magazines a refill takes from a shared list with one exchange, when the budget holds them. */
#define REFILL_MAGS 2u

/* A thread's slow paths look at the clock (demand tracking) once every this many calls. */
#define TICK_EVERY 16u

/* Empty magazines a slot keeps when it leaves others in a bucket during a refill. */
#define EMPTY_KEEP 2u

/* A quiescer waits this many yields for a thread to leave its section, then gives up on it. */
#define QUIESCE_TRIES 100000u

/*
 * The fast path's view of a thread: its caches when it is registered, otherwise this array of
 * empty entries (count 0, cap 0), on which pool_alloc() and pool_free() always take the slow
 * path. Never written.
 */
const struct pool_tcache pool__tcache_none[POOL_MAX_CACHED_POOLS];

/*
 * The TLS pointer the inline fast path reads (initial-exec: one load from the thread pointer).
 * It is 8 bytes, so that a program may load the library with dlopen(): glibc keeps a small
 * surplus of static TLS for initial-exec variables of libraries loaded late.
 */
POOL_API __thread struct pool_tcache *pool__tls_cache
	__attribute__((tls_model("initial-exec"))) = (struct pool_tcache *)pool__tcache_none;

/*
 * This thread as the library sees it (the default TLS model: reached only on slow paths). Its
 * caches are allocated: a library with initial-exec TLS has its whole TLS block in static TLS,
 * so the block must stay a few words for dlopen() to find room for it.
 */
static __thread struct pool_thread pool_self;

struct pool_head *pool__slots[POOL_MAX_CACHED_POOLS];
static atomic_uint pool_max_slot = 1;   /* highest slot ever used + 1 */

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pool_thread_caches *registry[POOL_MAX_THREADS];
static pthread_key_t exit_key;
static int exit_key_made;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

/* Sections (see the head of this file). */
static atomic_int quiescing;            /* 1 while fork() or a drain looks at other threads */
static int section_fence;               /* 1: no membarrier, each section entry fences */

/* ------------------------------------------------------------------------------------------ */
/* Pool slots                                                                                 */
/* ------------------------------------------------------------------------------------------ */

void pool__tcache_attach(struct pool_head *pool)
{
	unsigned int s;

	for (s = 1; s < POOL_MAX_CACHED_POOLS; s++) {
		if (!pool__slots[s]) {
			pool__slots[s] = pool;
			pool->ro.index = s;
			pool->ro.cache_off = (uint32_t)(s * sizeof(struct pool_tcache));
			if (s + 1 > atomic_load(&pool_max_slot))
				atomic_store(&pool_max_slot, s + 1);
			return;
		}
	}
}

void pool__tcache_detach(struct pool_head *pool)
{
	if (pool->ro.index)
		pool__slots[pool->ro.index] = NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Sections                                                                                   */
/* ------------------------------------------------------------------------------------------ */

static void section_enter(struct pool_thread_caches *ctx)
{
	for (;;) {
		atomic_store_explicit(&ctx->busy, 1, memory_order_relaxed);
		if (section_fence)
			atomic_thread_fence(memory_order_seq_cst);
		else
			atomic_signal_fence(memory_order_seq_cst);
		if (POOL_LIKELY(!atomic_load_explicit(&quiescing, memory_order_acquire)))
			return;
		/* a fork() or a drain is looking: stay out until it is done */
		atomic_store_explicit(&ctx->busy, 0, memory_order_release);
		while (atomic_load_explicit(&quiescing, memory_order_acquire))
			sched_yield();
	}
}

static void section_exit(struct pool_thread_caches *ctx)
{
	atomic_store_explicit(&ctx->busy, 0, memory_order_release);
}

/*
 * Under the registry lock: keep every registered thread but the caller out of its sections, and
 * wait for those inside to leave (QUIESCE_TRIES yields each, then that thread is left as it is:
 * it is stuck, or died inside one). Returns the number of threads it gave up on.
 */
static unsigned int quiesce_begin(const struct pool_thread_caches *self)
{
	unsigned int i, tries, stuck = 0;

	atomic_store_explicit(&quiescing, 1, memory_order_seq_cst);
	if (section_fence || syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
		atomic_thread_fence(memory_order_seq_cst);
	for (i = 0; i < POOL_MAX_THREADS; i++) {
		struct pool_thread_caches *c = registry[i];

		if (!c || c == self)
			continue;
		for (tries = 0; tries < QUIESCE_TRIES &&
		     atomic_load_explicit(&c->busy, memory_order_acquire); tries++)
			sched_yield();
		stuck += tries == QUIESCE_TRIES;
	}
	return stuck;
}

static void quiesce_end(void)
{
	atomic_store_explicit(&quiescing, 0, memory_order_release);
}

/*
 * Start-up: register for membarrier's private expedited command (Linux 4.14); where that fails
 * (an older kernel, a seccomp filter), sections fence instead.
 */
__attribute__((constructor(102))) static void sections_init(void)
{
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0)
		section_fence = 1;
}

/* ------------------------------------------------------------------------------------------ */
/* One slot: the entry, its magazines and their stacks                                        */
/* ------------------------------------------------------------------------------------------ */

/* Pointers in the loaded magazine of an entry, and how many it can hold. */
static inline uint32_t tc_count(const struct pool_tcache *tc)
{
	return (uint32_t)(tc->top - tc->base);
}

static inline uint32_t tc_cap(const struct pool_tcache *tc)
{
	return (uint32_t)(tc->end - tc->base);
}

/* Other threads read `top` and `held` for statistics: stores are relaxed atomics. */
static inline void tc_set_count(struct pool_tcache *tc, uint32_t count)
{
	__atomic_store_n(&tc->top, tc->base + count, __ATOMIC_RELAXED);
}

static inline void set_held(struct pool_tslot *sl, uint32_t held)
{
	__atomic_store_n(&sl->held, held, __ATOMIC_RELAXED);
}

/* Make `m` the loaded magazine of slot `s` (there was none). */
static void load(struct pool_thread_caches *ctx, unsigned int s, struct pool_mag *m)
{
	struct pool_tcache *tc = &ctx->tc[s];

	POOL_ASSERT(!ctx->slot[s].loaded && m->n <= m->cap);
	ctx->slot[s].loaded = m;
	tc->base = m->obj;
	tc->end = m->obj + m->cap;
	tc_set_count(tc, m->n);
}

/* Take the loaded magazine out of slot `s` (its count written back); NULL if none. */
static struct pool_mag *unload(struct pool_thread_caches *ctx, unsigned int s)
{
	struct pool_tcache *tc = &ctx->tc[s];
	struct pool_mag *m = ctx->slot[s].loaded;

	if (m)
		m->n = tc_count(tc);
	__atomic_store_n(&tc->top, NULL, __ATOMIC_RELAXED);
	tc->base = tc->end = NULL;
	ctx->slot[s].loaded = NULL;
	return m;
}

/* Push `m` on top of slot `s`'s full stack; its objects become `held`. */
static void full_push(struct pool_tslot *sl, struct pool_mag *m)
{
	m->prev = NULL;
	m->next = sl->top;
	if (sl->top)
		sl->top->prev = m;
	else
		sl->bottom = m;
	sl->top = m;
	sl->nfull++;
	set_held(sl, sl->held + m->n);
}

/* Pop the top of slot `s`'s full stack (NULL if empty). */
static struct pool_mag *full_pop(struct pool_tslot *sl)
{
	struct pool_mag *m = sl->top;

	if (!m)
		return NULL;
	sl->top = m->next;
	if (sl->top)
		sl->top->prev = NULL;
	else
		sl->bottom = NULL;
	m->next = m->prev = NULL;
	sl->nfull--;
	set_held(sl, sl->held - m->n);
	return m;
}

/*
 * Cut the `k` (>= 1, <= nfull) bottom magazines off slot `s`'s full stack: returned as a stack
 * linked by `next` from *top to its last one (*bottom), with their objects in *nobjs. Walks k
 * magazine headers up from the bottom.
 */
static void full_cut_bottom(struct pool_tslot *sl, uint32_t k, struct pool_mag **top,
                            struct pool_mag **bottom, uint32_t *nobjs)
{
	struct pool_mag *cut = sl->bottom;
	uint32_t n = cut->n, i;

	POOL_ASSERT(k >= 1 && k <= sl->nfull);
	for (i = 1; i < k; i++) {
		cut = cut->prev;
		n += cut->n;
	}
	*top = cut;
	*bottom = sl->bottom;
	sl->bottom = cut->prev;
	if (sl->bottom)
		sl->bottom->next = NULL;
	else
		sl->top = NULL;
	cut->prev = NULL;
	sl->nfull -= k;
	set_held(sl, sl->held - n);
	*nobjs = n;
}

/* Keep `m`, empty, on slot `s`'s stack of empty magazines. */
static void empty_push(struct pool_tslot *sl, struct pool_mag *m)
{
	POOL_ASSERT(m->n == 0);
	m->prev = NULL;
	m->next = sl->empty;
	sl->empty = m;
	sl->nempty++;
}

/* An empty magazine for slot `s`: one it keeps, else a new one; NULL when out of memory. */
static struct pool_mag *empty_get(struct pool_thread_caches *ctx, unsigned int s)
{
	struct pool_tslot *sl = &ctx->slot[s];
	struct pool_mag *m = sl->empty;

	if (m) {
		sl->empty = m->next;
		sl->nempty--;
		m->next = NULL;
		return m;
	}
	return pool__mag_new(pool__slots[s]);
}

/* Set the prev magazine of slot `s` (the objects of the old and new ones move in `held`). */
static void set_prev(struct pool_tslot *sl, struct pool_mag *m)
{
	uint32_t held = sl->held;

	if (sl->prev)
		held -= sl->prev->n;
	if (m)
		held += m->n;
	sl->prev = m;
	set_held(sl, held);
}

/* ------------------------------------------------------------------------------------------ */
/* Debugging of cached objects                                                                */
/* ------------------------------------------------------------------------------------------ */

/* Do every object of this thread's caches carry the integrity pattern, as `dbg` wants? */
static inline int integrity_on(const struct pool_thread_caches *ctx, unsigned int dbg)
{
	return (dbg & POOL_DBG_INTEGRITY) &&
	       ctx->integrity_epoch == pool__debug_integrity_epoch();
}

int pool__tcache_integrity(const struct pool_thread *self, unsigned int dbg)
{
	return self->caches && integrity_on(self->caches, dbg);
}

/* Do objects entering or leaving this slot's magazines need the debug layer? */
static inline int debug_cached(const struct pool_head *pool, int integrity)
{
	return integrity || pool->backup_off;
}

/* Objects that enter the thread cache: the integrity pattern and the backup copy. */
static void fill_objs(struct pool_head *pool, void *const *objs, uint32_t n, int integrity)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		pool__debug_fill_cached(pool, objs[i], integrity);
}

/* Objects that leave the thread cache for another tier: checked against both. */
static void check_objs(struct pool_head *pool, void *const *objs, uint32_t n, int integrity)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		pool__debug_check_cached(pool, objs[i], NULL, integrity);
}

/* ------------------------------------------------------------------------------------------ */
/* Thread contexts and the registry (step 7 of the essay)                                     */
/* ------------------------------------------------------------------------------------------ */

static void thread_exit(void *arg);
static void flush_all_caches(struct pool_thread_caches *ctx, unsigned int dbg);
static void fill_all_caches(struct pool_thread_caches *ctx);

static void make_exit_key(void)
{
	if (pthread_key_create(&exit_key, thread_exit) != 0) {
		static const char msg[] = "libpool: cannot create the thread-exit key; "
		                          "threads will not flush their caches at exit\n";
		if (write(2, msg, sizeof(msg) - 1) < 0)
			return;
		return;
	}
	exit_key_made = 1;
}

/* An id for a thread without a registry slot: spreads such threads over the buckets. */
static unsigned int hash_thread(const void *p)
{
	return pool__hash_bits((uint64_t)(uintptr_t)p, 24);
}

/* Free a thread's caches, whose slots hold no magazine any more. */
static void free_caches(struct pool_thread_caches *c)
{
	pool__os_meta_free(c, sizeof(*c), POOL_CACHE_LINE);
}

static void thread_init(struct pool_thread *self)
{
	struct pool_thread_caches *c = NULL;
	unsigned int i, id = POOL_MAX_THREADS;

	pthread_once(&exit_key_once, make_exit_key);
	self->rng = 0;
	self->state = POOL_THREAD_UNCACHED;
	self->id = hash_thread(self);
	if (!exit_key_made || pool__fault(POOL_FAULT_THREAD))
		return;
	c = pool__os_meta_alloc(sizeof(*c), POOL_CACHE_LINE);
	if (!c)
		return;
	c->budget = pool__config_get()->cache_bytes;
	c->hand = 1;
	/*
	 * No epoch yet (they start at 1): `integrity` may have been switched on since this slow
	 * path read the flags, so only a sync that sees it on may say the caches are filled.
	 */
	c->integrity_epoch = 0;
	/* the lowest free id: ids stay dense, so per-id tables and hashes stay small */
	pthread_mutex_lock(&registry_lock);
	for (i = 0; i < POOL_MAX_THREADS; i++) {
		if (!registry[i]) {
			id = i;
			registry[i] = c;
			break;
		}
	}
	pthread_mutex_unlock(&registry_lock);
	if (id == POOL_MAX_THREADS) {
		free_caches(c);
		return;
	}
	c->id = id;
	self->id = id;
	self->caches = c;
	self->state = POOL_THREAD_CACHED;
	pthread_setspecific(exit_key, c);
	pool__tls_cache = c->tc;
}

/*
 * The pthread key destructor: flush, leave the registry, free the caches, and work without
 * them from now on (other destructors may still free objects).
 */
static void thread_exit(void *arg)
{
	struct pool_thread_caches *c = arg;
	struct pool_thread *self = &pool_self;

	if (self->state != POOL_THREAD_CACHED || self->caches != c)
		return;
	/* the fast path must not refill what is being flushed: empty entries from now on */
	pool__tls_cache = (struct pool_tcache *)pool__tcache_none;
	flush_all_caches(c, __atomic_load_n(&pool_debugging, __ATOMIC_ACQUIRE));
	pthread_mutex_lock(&registry_lock);
	registry[c->id] = NULL;
	pthread_mutex_unlock(&registry_lock);
	self->state = POOL_THREAD_EXITED;
	self->caches = NULL;
	self->id = hash_thread(self);
	free_caches(c);
}

struct pool_thread *pool__thread_self(unsigned int *dbg_out)
{
	struct pool_thread *self = &pool_self;
	struct pool_thread_caches *ctx;
	unsigned int dbg = __atomic_load_n(&pool_debugging, __ATOMIC_ACQUIRE);
	size_t credit;

	*dbg_out = dbg;
	if (POOL_UNLIKELY(self->state == POOL_THREAD_NEW))
		thread_init(self);
	if (self->state != POOL_THREAD_CACHED)
		return self;
	ctx = self->caches;
	credit = atomic_load_explicit(&ctx->credit, memory_order_relaxed);
	if (credit)
		ctx->reserved -= atomic_exchange(&ctx->credit, 0);
	if (POOL_UNLIKELY(dbg & POOL_DBG_NO_CACHE)) {
		if (ctx->reserved)
			flush_all_caches(ctx, dbg);
	} else if (POOL_UNLIKELY((dbg & POOL_DBG_INTEGRITY) &&
	                         ctx->integrity_epoch != pool__debug_integrity_epoch())) {
		fill_all_caches(ctx);
	}
	return self;
}

unsigned int pool__thread_id(const struct pool_thread *self)
{
	return self->id;
}

uint64_t *pool__thread_rng(struct pool_thread *self)
{
	return &self->rng;
}

int pool__tcache_usable(const struct pool_head *pool, const struct pool_thread *self,
                        unsigned int dbg)
{
	return self->state == POOL_THREAD_CACHED && pool->ro.index &&
	       !(dbg & POOL_DBG_NO_CACHE) && pool->cache_cost * pool->cluster <= self->caches->budget;
}

/* Every `TICK_EVERY` slow-path calls of this thread, give the pool's demand clock a look. */
static inline void tick(struct pool_head *pool)
{
	struct pool_thread *self = &pool_self;

	if (++self->ticks >= TICK_EVERY) {
		self->ticks = 0;
		pool__bucket_tick(pool);
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Giving magazines to the tier below                                                         */
/* ------------------------------------------------------------------------------------------ */

/*
 * A stack of magazines (`top` to `bottom` through `next`, holding `nobjs` objects, counted as
 * used) leaves the thread cache: checked first when debugging wants it, then pushed to the
 * shared lists with one exchange, or given to the OS layer when the shared lists are bypassed
 * (no-global, uaf), the magazines then kept empty by the slot. `want_empty`: take an empty
 * magazine from that bucket in the same exchange, returned (or NULL).
 */
static struct pool_mag *give_mags(struct pool_thread_caches *ctx, unsigned int s,
                                  struct pool_mag *top, struct pool_mag *bottom, uint32_t nmags,
                                  uint32_t nobjs, unsigned int dbg, int want_empty)
{
	struct pool_head *pool = pool__slots[s];
	struct pool_mag *m, *next, *empty = NULL;

	if (!nmags)
		return NULL;
	if (debug_cached(pool, integrity_on(ctx, dbg)))
		for (m = top; m; m = m == bottom ? NULL : m->next)
			check_objs(pool, m->obj, m->n, integrity_on(ctx, dbg));
	if (!(dbg & POOL_DBG_NO_GLOBAL) && !(pool->layout & POOL_DBG_UAF)) {
		if (pool__shared_push(pool, top, bottom, nmags, nobjs, ctx->id, want_empty, &empty))
			return empty;
		/* every head stayed BUSY: to the OS layer (the magazines are kept, empty) */
	}
	bottom->next = NULL;
	for (m = top; m; m = next) {
		next = m->next;
		pool__os_put(pool, m->obj, m->n, ctx->id, NULL);
		m->n = 0;
		if (want_empty && !empty)
			empty = m;
		else
			empty_push(&ctx->slot[s], m);
	}
	return empty;
}

/* ------------------------------------------------------------------------------------------ */
/* The budget and eviction (steps 2 and 3 of the essay)                                       */
/* ------------------------------------------------------------------------------------------ */

/* Slot `s` now counts `objs` objects in the budget. */
static void set_reserved(struct pool_thread_caches *ctx, unsigned int s, uint32_t objs)
{
	struct pool_tslot *sl = &ctx->slot[s];

	ctx->reserved += ((size_t)objs - sl->reserved_objs) * pool__slots[s]->cache_cost;
	sl->reserved_objs = objs;
}

/* What slot `s` holds, in objects counted by the budget. */
static inline uint32_t slot_objs(const struct pool_thread_caches *ctx, unsigned int s)
{
	const struct pool_tslot *sl = &ctx->slot[s];

	return sl->held + (sl->loaded ? sl->loaded->cap : 0);
}

/* Evict the `k` coldest full magazines of slot `s` (the bottom of its stack). */
static void evict_full(struct pool_thread_caches *ctx, unsigned int s, uint32_t k,
                       unsigned int dbg)
{
	struct pool_tslot *sl = &ctx->slot[s];
	struct pool_mag *top, *bottom, *e;
	uint32_t n;

	if (!k)
		return;
	full_cut_bottom(sl, k, &top, &bottom, &n);
	e = give_mags(ctx, s, top, bottom, k, n, dbg, 0);
	POOL_ASSERT(!e);
	(void)e;
	set_reserved(ctx, s, slot_objs(ctx, s));
}

/*
 * Everything slot `s` holds leaves the thread: its full stack, previous and loaded magazines
 * (with objects) to the tier below in one exchange, and its empty magazines are freed. The
 * slot's entry is left empty (the fast path falls to the slow path).
 */
static void evict_slot(struct pool_thread_caches *ctx, unsigned int s, unsigned int dbg)
{
	struct pool_tslot *sl = &ctx->slot[s];
	struct pool_mag *top = NULL, *bottom = NULL, *mags[2];
	uint32_t nm = 0, n = 0, i;

	mags[0] = unload(ctx, s);
	mags[1] = sl->prev;
	set_prev(sl, NULL);
	if (sl->nfull) {
		nm = sl->nfull;
		full_cut_bottom(sl, nm, &top, &bottom, &n);
	}
	/* the loaded and previous magazines go on top of the stack when they hold objects */
	for (i = 0; i < 2; i++) {
		struct pool_mag *m = mags[i];

		if (!m)
			continue;
		if (!m->n) {
			empty_push(sl, m);
			continue;
		}
		m->next = top;
		top = m;
		if (!bottom)
			bottom = m;
		nm++;
		n += m->n;
	}
	give_mags(ctx, s, top, bottom, nm, n, dbg, 0);
	pool__mag_free_stack(pool__slots[s], sl->empty);
	sl->empty = NULL;
	sl->nempty = 0;
	set_reserved(ctx, s, 0);
}

/*
 * The clock hand's next victim other than `keep`: a slot holding something in the budget whose
 * reference bit is clear (the bit is cleared on the way); 0 if none.
 */
static unsigned int clock_victim(struct pool_thread_caches *ctx, unsigned int keep)
{
	unsigned int max = atomic_load_explicit(&pool_max_slot, memory_order_relaxed);
	unsigned int step;

	for (step = 0; step < 2 * max; step++) {
		unsigned int s = ctx->hand;
		struct pool_tslot *sl = &ctx->slot[s];

		ctx->hand = s + 1 < max ? s + 1 : 1;
		if (!s || s == keep || !sl->reserved_objs)
			continue;
		if (sl->referenced) {
			sl->referenced = 0;
			continue;
		}
		return s;
	}
	return 0;
}

/*
 * Make the budget hold `more` objects more for slot `s` (its reserved_objs grows by `more`):
 * colder slots give their full magazines first, then all they hold, then slot `s` gives its own
 * coldest full magazines. Returns 1 (counted), or 0 when even that is not enough (nothing is
 * counted; what was evicted stays evicted).
 */
static int slot_grow(struct pool_thread_caches *ctx, unsigned int s, uint32_t more,
                     unsigned int dbg)
{
	size_t cost = pool__slots[s]->cache_cost;
	unsigned int max = atomic_load_explicit(&pool_max_slot, memory_order_relaxed), rounds;

	for (rounds = 0; ctx->reserved + (size_t)more * cost > ctx->budget; rounds++) {
		unsigned int v = rounds < 4 * max ? clock_victim(ctx, s) : 0;

		if (v) {
			struct pool_tslot *vs = &ctx->slot[v];

			if (vs->nfull)
				evict_full(ctx, v, (vs->nfull + 1) / 2, dbg);
			else
				evict_slot(ctx, v, dbg);
			continue;
		}
		if (!ctx->slot[s].nfull)
			return 0;
		evict_full(ctx, s, (ctx->slot[s].nfull + 1) / 2, dbg);
	}
	set_reserved(ctx, s, ctx->slot[s].reserved_objs + more);
	POOL_ASSERT(ctx->reserved <= ctx->budget);
	return 1;
}

/* Evict everything this thread caches (exit, flush, no-cache). */
static void flush_all_caches(struct pool_thread_caches *ctx, unsigned int dbg)
{
	unsigned int max = atomic_load_explicit(&pool_max_slot, memory_order_relaxed);
	unsigned int s;

	section_enter(ctx);
	for (s = 1; s < max; s++)
		if (ctx->slot[s].reserved_objs || ctx->slot[s].nempty)
			evict_slot(ctx, s, dbg);
	section_exit(ctx);
}

/* Integrity was switched on: fill every object this thread caches with the pattern. */
static void fill_all_caches(struct pool_thread_caches *ctx)
{
	unsigned int max = atomic_load_explicit(&pool_max_slot, memory_order_relaxed);
	unsigned int epoch = pool__debug_integrity_epoch();
	unsigned int s;

	section_enter(ctx);
	for (s = 1; s < max; s++) {
		struct pool_tslot *sl = &ctx->slot[s];
		struct pool_mag *m;

		if (!pool__slots[s])
			continue;
		if (sl->loaded)
			fill_objs(pool__slots[s], ctx->tc[s].base, tc_count(&ctx->tc[s]), 1);
		if (sl->prev)
			fill_objs(pool__slots[s], sl->prev->obj, sl->prev->n, 1);
		for (m = sl->top; m; m = m->next)
			fill_objs(pool__slots[s], m->obj, m->n, 1);
	}
	section_exit(ctx);
	ctx->integrity_epoch = epoch;
}

/* ------------------------------------------------------------------------------------------ */
/* Rotations: what a slot does when its loaded magazine runs empty or full                    */
/* ------------------------------------------------------------------------------------------ */

/*
 * The loaded magazine of slot `s` is empty (or there is none): load the previous one if it holds
 * objects, else the top of the full stack. Returns 1 when the loaded magazine now holds
 * objects, 0 when the slot has none left.
 */
static int reload_local(struct pool_thread_caches *ctx, unsigned int s)
{
	struct pool_tslot *sl = &ctx->slot[s];
	struct pool_mag *m, *old;

	if (!sl->loaded)
		return 0;
	if (sl->prev && sl->prev->n) {
		m = sl->prev;
		old = unload(ctx, s);
		set_prev(sl, old);
	} else if (sl->top) {
		m = full_pop(sl);
		old = unload(ctx, s);
		if (!sl->prev)
			set_prev(sl, old);
		else
			empty_push(sl, old);
	} else {
		return 0;
	}
	load(ctx, s, m);
	sl->referenced = 1;
	set_reserved(ctx, s, slot_objs(ctx, s));
	return 1;
}

/*
 * Give slot `s` a loaded magazine (empty) if it has none, within the budget. Returns 1, or 0
 * when the budget cannot hold one or there is no memory for it.
 */
static int ensure_loaded(struct pool_thread_caches *ctx, unsigned int s, unsigned int dbg)
{
	struct pool_head *pool = pool__slots[s];
	struct pool_mag *m;

	if (ctx->slot[s].loaded)
		return 1;
	if (!slot_grow(ctx, s, pool->cluster, dbg))
		return 0;
	m = empty_get(ctx, s);
	if (!m) {
		set_reserved(ctx, s, ctx->slot[s].reserved_objs - pool->cluster);
		return 0;
	}
	load(ctx, s, m);
	return 1;
}

/*
 * The loaded magazine of slot `s` is empty (and so are the previous one and the full stack):
 * fill it from a shared free list, with up to REFILL_MAGS magazines in one exchange (those
 * beyond the first go onto the full stack when the budget holds them), leaving the slot's
 * surplus empty magazines in that bucket; else `want` new objects from the OS layer (at most a
 * magazine: one for pool_alloc(), what a bulk call still needs for it).
 * Returns 1 when the loaded magazine holds objects, 0 at the limit or out of memory.
 */
static int reload_remote(struct pool_thread_caches *ctx, unsigned int s, unsigned int dbg,
                         uint32_t want)
{
	struct pool_tslot *sl = &ctx->slot[s];
	struct pool_head *pool = pool__slots[s];
	struct pool_tcache *tc = &ctx->tc[s];
	int integrity = integrity_on(ctx, dbg);
	uint32_t n;

	if (!ensure_loaded(ctx, s, dbg))
		return 0;
	sl->referenced = 1;
	if (!(dbg & POOL_DBG_NO_GLOBAL) && !(pool->layout & POOL_DBG_UAF)) {
		size_t room = ctx->budget - ctx->reserved;
		unsigned int extra = (unsigned int)(room / ((size_t)pool->cluster * pool->cache_cost));
		struct pool_mag *deposit = NULL, *top, *m, *next, *old;
		unsigned int nobjs;

		if (extra > REFILL_MAGS - 1)
			extra = REFILL_MAGS - 1;
		/* the empty magazines beyond what the slot keeps are left in the bucket */
		while (sl->nempty > EMPTY_KEEP) {
			m = sl->empty;
			sl->empty = m->next;
			sl->nempty--;
			m->next = deposit;
			deposit = m;
		}
		top = pool__shared_pop(pool, ctx->id, 1 + extra, &deposit, &nobjs);
		pool__mag_free_stack(pool, deposit);
		if (top) {
			old = unload(ctx, s);
			if (!sl->prev)
				set_prev(sl, old);
			else
				empty_push(sl, old);
			next = top->next;
			top->next = NULL;
			if (debug_cached(pool, integrity))
				fill_objs(pool, top->obj, top->n, integrity);
			load(ctx, s, top);
			for (m = next; m; m = next) {
				next = m->next;
				if (debug_cached(pool, integrity))
					fill_objs(pool, m->obj, m->n, integrity);
				full_push(sl, m);
			}
			set_reserved(ctx, s, slot_objs(ctx, s));
			return tc_count(tc) > 0 || reload_local(ctx, s);
		}
	}
	/* growing: what is wanted from the OS layer, so that a pool takes no more than it hands out */
	n = pool__os_get(pool, tc->base, want < tc_cap(tc) ? want : tc_cap(tc), ctx->id);
	if (!n)
		return 0;
	if (debug_cached(pool, integrity))
		fill_objs(pool, tc->base, n, integrity);
	tc_set_count(tc, n);
	return 1;
}

/*
 * The loaded magazine of slot `s` is full (or there is none): make room in it. An empty
 * previous magazine takes its place; else the previous one goes onto the full stack and an empty
 * magazine is loaded, within the budget; when the budget cannot hold the full one, it goes to the
 * shared free lists (taking an empty magazine back in the same exchange). Returns 1 when the
 * loaded magazine has room, 0 when the slot cannot cache (no budget or no memory).
 */
static int make_room(struct pool_thread_caches *ctx, unsigned int s, unsigned int dbg)
{
	struct pool_tslot *sl = &ctx->slot[s];
	struct pool_head *pool = pool__slots[s];
	struct pool_mag *full, *e;

	if (!sl->loaded)
		return ensure_loaded(ctx, s, dbg);
	sl->referenced = 1;
	if (sl->prev && !sl->prev->n) {
		/* Bonwick's exchange: the full one becomes the previous, the empty one is loaded */
		if (slot_grow(ctx, s, pool->cluster, dbg)) {
			e = sl->prev;
			full = unload(ctx, s);
			sl->prev = NULL;
			set_prev(sl, full);
			load(ctx, s, e);
			set_reserved(ctx, s, slot_objs(ctx, s));
			return 1;
		}
		/* no budget for it: the full one leaves, the empty one is loaded */
		e = sl->prev;
		full = unload(ctx, s);
		sl->prev = NULL;
		load(ctx, s, e);
		give_mags(ctx, s, full, full, 1, full->n, dbg, 0);
		set_reserved(ctx, s, slot_objs(ctx, s));
		return 1;
	}
	e = empty_get(ctx, s);
	if (e && slot_grow(ctx, s, pool->cluster, dbg)) {
		full = unload(ctx, s);
		if (sl->prev) {
			struct pool_mag *p = sl->prev;

			set_prev(sl, NULL);
			full_push(sl, p);
		}
		set_prev(sl, full);
		load(ctx, s, e);
		set_reserved(ctx, s, slot_objs(ctx, s));
		return 1;
	}
	/* over budget, or no memory for an empty magazine: the full one goes to the shared lists */
	full = unload(ctx, s);
	if (e) {
		give_mags(ctx, s, full, full, 1, full->n, dbg, 0);
	} else {
		e = give_mags(ctx, s, full, full, 1, full->n, dbg, 1);
		if (!e)
			e = pool__mag_new(pool);
	}
	if (!e) {
		set_reserved(ctx, s, slot_objs(ctx, s));
		return 0;
	}
	e->n = 0;
	load(ctx, s, e);
	set_reserved(ctx, s, slot_objs(ctx, s));
	return 1;
}

/* ------------------------------------------------------------------------------------------ */
/* The slow paths' calls                                                                      */
/* ------------------------------------------------------------------------------------------ */

/*
 * cold-first: the least recently freed object of slot `s`: the first pointer of the bottom of
 * its full stack, else of the previous magazine, else of the loaded one (the others shift down:
 * a memmove of at most POOL_CLUSTER_MAX pointers).
 */
static void *pop_coldest(struct pool_thread_caches *ctx, unsigned int s)
{
	struct pool_tslot *sl = &ctx->slot[s];
	struct pool_tcache *tc = &ctx->tc[s];
	struct pool_mag *m = sl->bottom ? sl->bottom : (sl->prev && sl->prev->n ? sl->prev : NULL);
	void *obj;

	if (m) {
		obj = m->obj[0];
		memmove(m->obj, m->obj + 1, (m->n - 1) * sizeof(void *));
		m->n--;
		set_held(sl, sl->held - 1);
		if (!m->n && m == sl->bottom) {
			struct pool_mag *t, *b;
			uint32_t n;

			full_cut_bottom(sl, 1, &t, &b, &n);
			empty_push(sl, t);
		}
		set_reserved(ctx, s, slot_objs(ctx, s));
		return obj;
	}
	if (!tc_count(tc))
		return NULL;
	obj = tc->base[0];
	memmove(tc->base, tc->base + 1, (tc_count(tc) - 1) * sizeof(void *));
	tc_set_count(tc, tc_count(tc) - 1);
	return obj;
}

void *pool__tcache_pop(struct pool_head *pool, struct pool_thread *self, unsigned int dbg)
{
	struct pool_thread_caches *ctx = self->caches;
	unsigned int s = pool->ro.index;
	struct pool_tcache *tc = &ctx->tc[s];
	void *obj = NULL;

	section_enter(ctx);
	if (dbg & POOL_DBG_COLD_FIRST)
		obj = pop_coldest(ctx, s);
	else if (tc_count(tc) || reload_local(ctx, s))
		obj = tc->base[tc_count(tc) - 1], tc_set_count(tc, tc_count(tc) - 1);
	section_exit(ctx);
	return obj;
}

int pool__tcache_push(struct pool_head *pool, struct pool_thread *self, void *obj,
                      unsigned int dbg)
{
	struct pool_thread_caches *ctx = self->caches;
	unsigned int s = pool->ro.index;
	struct pool_tcache *tc = &ctx->tc[s];
	int ok;

	section_enter(ctx);
	ok = tc_count(tc) < tc_cap(tc) || make_room(ctx, s, dbg);
	if (ok) {
		if (debug_cached(pool, integrity_on(ctx, dbg)))
			pool__debug_fill_cached(pool, obj, integrity_on(ctx, dbg));
		tc->base[tc_count(tc)] = obj;
		tc_set_count(tc, tc_count(tc) + 1);
	}
	section_exit(ctx);
	tick(pool);
	return ok;
}

void *pool__tcache_refill(struct pool_head *pool, struct pool_thread *self, unsigned int dbg)
{
	unsigned int s = pool->ro.index;
	void *obj = NULL;

	if (pool__tcache_usable(pool, self, dbg)) {
		struct pool_thread_caches *ctx = self->caches;
		struct pool_tcache *tc = &ctx->tc[s];
		int loaded;

		section_enter(ctx);
		if (reload_remote(ctx, s, dbg, 1)) {
			obj = tc->base[tc_count(tc) - 1];
			tc_set_count(tc, tc_count(tc) - 1);
		}
		loaded = ctx->slot[s].loaded != NULL;
		section_exit(ctx);
		tick(pool);
		/* with a magazine, a failed refill is the limit or no memory: the answer */
		if (obj || loaded)
			return obj;
		/* the budget could not hold a magazine: as a thread without a cache */
	}
	if (!(dbg & POOL_DBG_NO_GLOBAL) && !(pool->layout & POOL_DBG_UAF))
		obj = pool__shared_get_one(pool, self->id);
	if (!obj && !pool__os_get(pool, &obj, 1, self->id))
		obj = NULL;
	tick(pool);
	return obj;
}

void pool__tcache_put_uncached(struct pool_head *pool, struct pool_thread *self, void *obj,
                               unsigned int dbg, const void *caller)
{
	if ((pool->layout & POOL_DBG_UAF) || (dbg & POOL_DBG_NO_GLOBAL))
		pool__os_put(pool, &obj, 1, self->id, caller);
	else
		pool__shared_put_one(pool, obj, self->id);
	/* threads without caches (no-cache, past the registry) look at the demand clock too */
	tick(pool);
}

size_t pool__tcache_alloc_bulk(struct pool_head *pool, struct pool_thread *self, void **objs,
                               size_t n, unsigned int dbg)
{
	struct pool_thread_caches *ctx = self->caches;
	unsigned int s = pool->ro.index;
	struct pool_tcache *tc = &ctx->tc[s];
	size_t got = 0;

	section_enter(ctx);
	while (got < n) {
		uint32_t c = tc_count(tc), k;

		if (!c && !reload_local(ctx, s) &&
		    !reload_remote(ctx, s, dbg, (uint32_t)(n - got < UINT32_MAX ? n - got : UINT32_MAX)))
			break;
		c = tc_count(tc);
		k = n - got < c ? (uint32_t)(n - got) : c;
		tc_set_count(tc, c - k);
		memcpy(objs + got, tc->base + (c - k), k * sizeof(*objs));
		got += k;
	}
	section_exit(ctx);
	tick(pool);
	if (got == n)
		return n;
	/* all or nothing: what was taken goes back */
	pool__tcache_free_bulk(pool, self, objs, got, dbg);
	return 0;
}

void pool__tcache_free_bulk(struct pool_head *pool, struct pool_thread *self, void **objs,
                            size_t n, unsigned int dbg)
{
	struct pool_thread_caches *ctx = self->caches;
	unsigned int s = pool->ro.index;
	struct pool_tcache *tc = &ctx->tc[s];
	size_t i = 0;

	section_enter(ctx);
	while (i < n) {
		uint32_t c = tc_count(tc), cap;

		if (c == tc_cap(tc) && !make_room(ctx, s, dbg))
			break;
		for (c = tc_count(tc), cap = tc_cap(tc); i < n && c < cap; i++)
			if (objs[i])
				tc->base[c++] = objs[i];
		tc_set_count(tc, c);
	}
	section_exit(ctx);
	tick(pool);
	/* what the budget cannot hold goes to the shared lists */
	for (; i < n; i++)
		if (objs[i])
			pool__tcache_put_uncached(pool, self, objs[i], dbg, NULL);
}

POOL_API void pool_thread_flush(void)
{
	struct pool_thread *self = &pool_self;
	unsigned int dbg;

	if (self->state == POOL_THREAD_CACHED) {
		pool__thread_self(&dbg);
		flush_all_caches(self->caches, dbg);
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Other threads' caches: pool_destroy(), statistics, fork()                                  */
/* ------------------------------------------------------------------------------------------ */

/*
 * Slot `s` of another thread's caches (quiesced, or vanished in a fork() child) is taken back:
 * every magazine with objects goes to the shared lists as it is (no pointer is copied), the
 * empty ones are freed, the entry is left empty. A count the owner's fast path was changing
 * while it was read is clamped to the capacity. Returns the objects the slot counted in the
 * budget, for the owner's books.
 */
static uint32_t take_slot(struct pool_thread_caches *c, unsigned int s, unsigned int start)
{
	struct pool_tslot *sl = &c->slot[s];
	struct pool_tcache *tc = &c->tc[s];
	struct pool_head *pool = pool__slots[s];
	struct pool_mag *top = NULL, *bottom = NULL, *m, *l = sl->loaded, *p = sl->prev;
	uint32_t nm = 0, n = 0, reserved = sl->reserved_objs, i;

	if (l) {
		void **t = __atomic_load_n(&tc->top, __ATOMIC_RELAXED);

		l->n = t >= l->obj && t <= l->obj + l->cap ? (uint32_t)(t - l->obj) : 0;
	}
	__atomic_store_n(&tc->top, NULL, __ATOMIC_RELAXED);
	tc->base = tc->end = NULL;
	/* the full stack, bounded by its count (a stack cut by a stuck owner is not followed) */
	for (m = sl->top, i = 0; m && i < sl->nfull; m = m->next, i++) {
		n += m->n;
		nm++;
		bottom = m;
	}
	if (nm)
		top = sl->top;
	for (i = 0; i < 2; i++) {
		m = i ? l : p;
		if (!m)
			continue;
		if (!m->n) {
			pool__mag_free(pool, m);
			continue;
		}
		m->next = top;
		top = m;
		if (!bottom)
			bottom = m;
		nm++;
		n += m->n;
	}
	pool__push_mags(pool, top, bottom, nm, n, start);
	pool__mag_free_stack(pool, sl->empty);
	memset(sl, 0, sizeof(*sl));
	return reserved;
}

void pool__tcache_drain_pool(struct pool_head *pool)
{
	unsigned int dbg, i, slot = pool->ro.index;
	struct pool_thread *self = pool__thread_self(&dbg);

	if (!slot)
		return;
	pthread_mutex_lock(&registry_lock);
	quiesce_begin(self->caches);
	for (i = 0; i < POOL_MAX_THREADS; i++) {
		struct pool_thread_caches *ctx = registry[i];
		size_t bytes;

		if (!ctx)
			continue;
		bytes = (size_t)take_slot(ctx, slot, self->id) * pool->cache_cost;
		if (ctx == self->caches)
			ctx->reserved -= bytes;
		else
			atomic_fetch_add(&ctx->credit, bytes);
	}
	quiesce_end();
	pthread_mutex_unlock(&registry_lock);
}

/*
 * Another thread's count of pointers in its loaded magazine, read racily: the owner may be
 * swapping magazines, so a reading between two magazines is taken as 0.
 */
static uint32_t entry_count(const struct pool_tcache *tc)
{
	void **base = __atomic_load_n(&tc->base, __ATOMIC_RELAXED);
	void **top = __atomic_load_n(&tc->top, __ATOMIC_RELAXED);
	void **end = __atomic_load_n(&tc->end, __ATOMIC_RELAXED);

	return base && top >= base && top <= end ? (uint32_t)(top - base) : 0;
}

unsigned long pool__sum_cached(const struct pool_head *pool)
{
	unsigned long sum = 0;
	unsigned int i, slot = pool->ro.index;

	if (!slot)
		return 0;
	pthread_mutex_lock(&registry_lock);
	for (i = 0; i < POOL_MAX_THREADS; i++) {
		if (!registry[i])
			continue;
		sum += entry_count(&registry[i]->tc[slot]);
		sum += __atomic_load_n(&registry[i]->slot[slot].held, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&registry_lock);
	return sum;
}

void pool__tcache_fork_prepare(void)
{
	pthread_mutex_lock(&registry_lock);
	quiesce_begin(pool_self.caches);
}

void pool__tcache_fork_parent(void)
{
	quiesce_end();
	pthread_mutex_unlock(&registry_lock);
}

void pool__tcache_fork_child(void)
{
	struct pool_thread *self = &pool_self;
	unsigned int i, s, max;

	max = atomic_load(&pool_max_slot);
	for (i = 0; i < POOL_MAX_THREADS; i++) {
		struct pool_thread_caches *ctx = registry[i];

		if (!ctx || ctx == self->caches)
			continue;
		for (s = 1; s < max; s++) {
			struct pool_tslot *sl = &ctx->slot[s];

			if (!pool__slots[s] || (!sl->reserved_objs && !sl->nempty))
				continue;
			if (atomic_load_explicit(&ctx->busy, memory_order_relaxed)) {
				/* its thread was stuck inside a section: nothing of it can be trusted */
				pool__bucket_count_lost(pool__slots[s],
				                        sl->held + entry_count(&ctx->tc[s]), self->id);
				continue;
			}
			take_slot(ctx, s, self->id);
		}
		registry[i] = NULL;
		/* its thread does not exist here: its caches go */
		free_caches(ctx);
	}
	atomic_store_explicit(&quiescing, 0, memory_order_relaxed);
	/* the forking thread took the lock in fork_prepare(): it owns it in the child too */
	pthread_mutex_unlock(&registry_lock);
}
