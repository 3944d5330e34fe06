/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * memcached's item memory on libpool: an implementation of the interface that memcached
 * 1.6.18 declares in slabs.h, written from that header, the calls items.c, storage.c,
 * proto_text.c and memcached.c make to it, and libpool's public API (it is not derived from
 * memcached's slabs.c). The libpool build of memcached compiles this file in place of slabs.c
 * (contrib/memcached/README.md, mk/memcached.mk).
 *
 * How the mapping works
 *
 * 1. Classes. memcached sorts items into classes by size: class 1 holds sizeof(item) + -n
 *    bytes, each next one -f times more, rounded up to 8 bytes, until slab_chunk_max / -f;
 *    the last class holds slab_chunk_max bytes (or the sizes of -o slab_sizes). The classes
 *    here are computed the same way, so that an item lands in the class and the chunk size
 *    that memcached's own allocator gives it: `stats slabs` and the tests see the same ids.
 *    Each class is one pool (pool_create_aligned(), named mc-slab-<id>), created at start
 *    and never destroyed. slabs_alloc() is pool_alloc() on the class's pool, slabs_free()
 *    is pool_free(): the calling thread's magazine, no lock (memcached's own allocator takes
 *    one global mutex for both). An item larger than slab_chunk_max is a header in a small
 *    class and chunks in the large ones (items.c builds it); slabs_free() gives each chunk
 *    back to the pool of its own class and the header to the class its chunk records.
 *
 * 2. The -m limit, in reservations. memcached's allocator counts memory in pages of
 *    slab_page_size (1 MiB) that it gives to a class for good: a class takes a new page when
 *    its free chunks run out and the pages in all classes stay within -m (a class without a
 *    page gets its first one past the limit), and an allocation that finds neither fails,
 *    which makes memcached evict from that class's LRU and try again. Pools have no pages,
 *    so each class keeps a count of page *reservations* instead: chunks handed out (`used`,
 *    exact) may not exceed pages * (slab_page_size / chunk size); one more takes a new
 *    reservation on the same terms (within -m, or the class's first), or fails, and memcached
 *    evicts exactly where its own allocator would make it. Unlike a page, a reservation goes
 *    back when its class no longer needs it: a class gives one back once two whole ones are
 *    spare (so that an allocation and a free at a boundary do not trade one back and
 *    forth); over -m (after `cache_memlimit` lowered it) it keeps no spare, and each
 *    reservation given back also gives the class's free objects back to the system
 *    (pool_thread_flush(), pool_flush(), pool_trim()): memory above the limit does not stay.
 *    The global sum of reservations is one counter, written only when a class takes or gives
 *    back a reservation (once per slab_page_size of chunk traffic at most, not per item); the
 *    chunk counts are one atomic counter per class, on a cache line of its own.
 *    `total_malloced` in `stats slabs` is that sum, the figure -m bounds, as memcached's own
 *    allocator reports its pages; what the pools really hold from the OS layer is
 *    `total_pool_bytes` beside it, and `pool_*` per class (also in `stats items`).
 *
 * 3. What does not map, turned off (README.md, "Features turned off"): the slab page mover
 *    and its automove (there are no pages to move: the memory a class frees goes back to the
 *    OS layer, from which any class takes memory again; what is lost is the mover's
 *    rebalancing of classes that all evict), restartable memory files (-e: items
 *    are scattered over pool objects, not laid out in one file mapping) and preallocation
 *    (-L). No mover thread starts; `slabs reassign` is answered NOSPARE ("source class has no
 *    spare pages": no class ever holds a page to give); slabs_init() sets slab_automove to 0
 *    (`slabs automove 1` later is harmless: every move it asks for is answered the same way).
 *    slab_reassign stays as memcached set it, so that `stats` keeps its slab_reassign_*
 *    counters (all 0) where memcached's suite expects them. -e is refused at start; -L is
 *    ignored with a notice.
 *
 * 4. The libpool CLI. With MEMCACHED_POOL_CLI=<path>, slabs_init() serves libpool's command
 *    line (pools show, pools profile, pools trim, pools flush, ...) on a UNIX socket at that
 *    path (mode 0600), at the level MEMCACHED_POOL_CLI_LEVEL names (user, operator or admin;
 *    operator by default, as pool_cli_listen()); the `pools` tool talks to it. The debugging
 *    options come from POOL_DEBUG, which libpool reads when it is loaded.
 *
 * Rules memcached relies on, kept here: slabs_alloc() returns an item with it_flags 0 and
 * refcount 1 (items.c seeds nothing else), or NULL; slabs_free() marks the item ITEM_SLABBED
 * before the pool takes it back (a stale pointer that memcached's debug build asserts on
 * sees it). slabs_mlock() protected ITEM_CHUNK flags against the page mover, which does not
 * run here: it takes no lock.
 */
#include "memcached.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pool/pool.h>

/* Relaxed atomics: the counters are statistics and limits, not synchronisation. */
#define MC_LOAD(p)          __atomic_load_n((p), __ATOMIC_RELAXED)
#define MC_STORE(p, v)      __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define MC_ADD(p, v)        __atomic_add_fetch((p), (v), __ATOMIC_RELAXED)
#define MC_SUB(p, v)        __atomic_sub_fetch((p), (v), __ATOMIC_RELAXED)
#define MC_CAS(p, old, new) __atomic_compare_exchange_n((p), (old), (new), false, \
                                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED)

/* exit statuses of sysexits.h, without depending on it */
#define MC_EX_USAGE    64

/* One slab class: its pool and its accounting, alone on its cache line(s). */
struct mc_class {
	struct pool_head *pool;   /* NULL: no class of this id */
	unsigned int size;        /* chunk size in bytes (the pool's object size) */
	unsigned int perslab;     /* chunks one reservation of slab_page_size bytes covers */
	long used;                /* chunks handed out and not freed (atomic) */
	long pages;               /* reservations held (atomic) */
} __attribute__((aligned(64)));

static struct mc_class mc_classes[MAX_NUMBER_OF_SLAB_CLASSES];
static unsigned int mc_largest;           /* the id of the largest class */
static size_t mc_page;                    /* slab_page_size, bytes */

/* The sum of the reservations in bytes (plus T_MEMD_INITIAL_MALLOC), and -m in bytes. */
static struct {
	size_t reserved;
	size_t limit;                     /* 0: none */
} mc_mem __attribute__((aligned(64)));

#ifdef EXTSTORE
static void *mc_storage;                  /* kept for slabs_set_storage(); unused */
#endif

static void mc_die(const char *fmt, const char *arg, int status)
{
	fprintf(stderr, "memcached (libpool): ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(status);
}

/* A class id passed to slabs_free() or found in a chunk that is none: memory is corrupted. */
static void mc_bad_class(unsigned int id, const void *ptr)
{
	fprintf(stderr, "memcached (libpool): slabs_free: object %p names slab class %u, which "
	        "does not exist (classes 1..%u): aborting\n", ptr, id, mc_largest);
	abort();
}

static bool mc_over_limit(void)
{
	size_t limit = MC_LOAD(&mc_mem.limit);

	return limit && MC_LOAD(&mc_mem.reserved) > limit;
}

/*
 * Make the reservations of class `c` cover `used` chunks: take new ones while they do not,
 * each within -m unless it is the class's first. With `no_new` (SLABS_ALLOC_NO_NEWPAGE) none
 * is taken. Returns whether they cover `used`.
 */
static bool mc_reserve(struct mc_class *c, long used, bool no_new)
{
	long pages = MC_LOAD(&c->pages);

	while ((unsigned long)used > (unsigned long)pages * c->perslab) {
		size_t limit = MC_LOAD(&mc_mem.limit);

		if (no_new)
			return false;
		if (pages > 0 && limit && MC_LOAD(&mc_mem.reserved) + mc_page > limit)
			return false;
		if (MC_CAS(&c->pages, &pages, pages + 1)) {
			MC_ADD(&mc_mem.reserved, mc_page);
			pages++;
		}
	}
	return true;
}

/*
 * Memory above -m that just became free: this thread's cached objects go to the shared
 * lists, the class's free objects to the OS layer, and the OS layer's free pages to the
 * system. Only after a lowered limit; milliseconds.
 */
static void mc_give_back(struct mc_class *c)
{
	pool_thread_flush();
	pool_flush(c->pool);
	pool_trim();
}

/*
 * After a free: holding pages * perslab chunks for `used`, class `c` has (pages * perslab -
 * used) / perslab whole spare reservations; it gives one back when that is 2 or more, or 1
 * or more over -m (and then its free memory too). The common case reads only the class's
 * own line.
 */
static void mc_unreserve(struct mc_class *c, long used)
{
	long pages = MC_LOAD(&c->pages);

	for (;;) {
		long spare = pages * (long)c->perslab - used;
		bool over;

		if (spare < (long)c->perslab)
			return;
		over = mc_over_limit();
		if (!over && spare < 2 * (long)c->perslab)
			return;
		if (MC_CAS(&c->pages, &pages, pages - 1)) {
			MC_SUB(&mc_mem.reserved, mc_page);
			if (over)
				mc_give_back(c);
			return;
		}
	}
}

/* One object back to the pool of class `id`, and its chunk out of the class's count. */
static void mc_put(unsigned int id, void *obj)
{
	struct mc_class *c;

	if (id < POWER_SMALLEST || id > mc_largest)
		mc_bad_class(id, obj);
	c = &mc_classes[id];
	((item *)obj)->it_flags = ITEM_SLABBED;
	pool_free(c->pool, obj);
	mc_unreserve(c, MC_SUB(&c->used, 1));
}

#ifdef MC_POOL_PLANT_UAF
/*
 * The test build's planted bug (MC_POOL_PLANT_UAF, contrib/memcached/planted-uaf.sh):
 * freeing the item whose key is "libpool-planted-uaf" writes to it after pool_free(), so
 * that POOL_DEBUG=uaf must report a use after free in pool mc-slab-<id> with slabs_free() as
 * the caller. Never in the binaries that `make memcached` builds.
 */
#define MC_PLANTED_KEY "libpool-planted-uaf"

static bool mc_planted(const item *it)
{
	return !(it->it_flags & (ITEM_CHUNKED | ITEM_CHUNK)) &&
	       it->nkey == sizeof(MC_PLANTED_KEY) - 1 &&
	       memcmp(ITEM_key(it), MC_PLANTED_KEY, sizeof(MC_PLANTED_KEY) - 1) == 0;
}
#endif

/* Class sizes, as memcached computes them (see 1. above); returns the largest class's id. */
static unsigned int mc_size_classes(double factor, const uint32_t *slab_sizes)
{
	unsigned int id = POWER_SMALLEST, size = sizeof(item) + settings.chunk_size;

	for (; id < MAX_NUMBER_OF_SLAB_CLASSES - 1; id++) {
		if (slab_sizes) {
			if (slab_sizes[id - 1] == 0)
				break;
			size = slab_sizes[id - 1];
		} else if (size >= settings.slab_chunk_size_max / factor) {
			break;
		}
		size = (size + CHUNK_ALIGN_BYTES - 1) / CHUNK_ALIGN_BYTES * CHUNK_ALIGN_BYTES;
		mc_classes[id].size = size;
		if (!slab_sizes)
			size = (unsigned int)(size * factor);
	}
	mc_classes[id].size = settings.slab_chunk_size_max;
	return id;
}

static void mc_cli_start(void)
{
	const char *path = getenv("MEMCACHED_POOL_CLI");
	const char *lv = getenv("MEMCACHED_POOL_CLI_LEVEL");
	enum pool_cli_level level = POOL_CLI_OPERATOR;

	if (!path || !*path)
		return;
	if (lv && *lv) {
		if (!strcmp(lv, "user"))
			level = POOL_CLI_USER;
		else if (!strcmp(lv, "operator"))
			level = POOL_CLI_OPERATOR;
		else if (!strcmp(lv, "admin"))
			level = POOL_CLI_ADMIN;
		else
			mc_die("MEMCACHED_POOL_CLI_LEVEL=%s: expected user, operator or admin", lv,
			       MC_EX_USAGE);
	}
	if (pool_cli_listen_level(path, level, 0600) != 0) {
		fprintf(stderr, "memcached (libpool): cannot serve the libpool CLI on "
		        "MEMCACHED_POOL_CLI=%s: %s\n", path, strerror(errno));
		exit(EXIT_FAILURE);
	}
	atexit(pool_cli_stop);
	if (settings.verbose > 0)
		fprintf(stderr, "libpool CLI on %s (level %s)\n", path, lv && *lv ? lv : "operator");
}

void slabs_init(const size_t limit, const double factor, const bool prealloc,
                const uint32_t *slab_sizes, void *mem_base_external, bool reuse_mem)
{
	const char *initial = getenv("T_MEMD_INITIAL_MALLOC");
	unsigned int id;

	(void)reuse_mem;
	if (mem_base_external)
		mc_die("%s", "-e (a restartable memory file) is not available in the libpool build: "
		       "items live in pool objects, not in one file mapping", MC_EX_USAGE);
	if (prealloc)
		fprintf(stderr, "memcached (libpool): -L is ignored: the pools take memory as items "
		        "need it, with no preallocation and no large pages\n");
	/* no pages, nothing to move (README.md, "Features turned off") */
	settings.slab_automove = 0;

	mc_page = (size_t)settings.slab_page_size;
	mc_mem.limit = limit;
	mc_largest = mc_size_classes(factor, slab_sizes);
	for (id = POWER_SMALLEST; id <= mc_largest; id++) {
		struct mc_class *c = &mc_classes[id];
		char name[POOL_NAME_MAX + 1];

		c->perslab = (unsigned int)(mc_page / c->size);
		if (c->perslab == 0)
			c->perslab = 1;
		snprintf(name, sizeof(name), "mc-slab-%02u", id);
		c->pool = pool_create_aligned(name, c->size, CHUNK_ALIGN_BYTES, 0);
		if (!c->pool) {
			fprintf(stderr, "memcached (libpool): pool_create(%s, %u bytes): %s\n", name,
			        c->size, strerror(errno));
			exit(EXIT_FAILURE);
		}
		if (settings.verbose > 1)
			fprintf(stderr, "slab class %3u: chunk size %9u perslab %7u (pool %s)\n", id,
			        c->size, c->perslab, name);
	}
	/* the test suite's way to pretend that memory was taken already (t/64bit.t) */
	if (initial) {
		int64_t v;

		if (safe_strtoll(initial, &v) && v > 0)
			mc_mem.reserved = (size_t)v;
	}
	if (settings.verbose > 0)
		fprintf(stderr, "libpool %s: %u slab classes on pools, -m %zu bytes in reservations "
		        "of %zu; the slab page mover, automove and restartable memory are off\n",
		        pool_version(), mc_largest, limit, mc_page);
	mc_cli_start();
}

/* The global page pool holds memory for a restart or the page mover: neither runs here. */
void slabs_prefill_global(void)
{
}

unsigned int slabs_clsid(const size_t size)
{
	unsigned int lo = POWER_SMALLEST, hi = mc_largest;

	if (size == 0 || size > (size_t)settings.item_size_max)
		return 0;
	/* larger than the largest chunk: the largest class (items.c chunks the item) */
	if (size >= mc_classes[hi].size)
		return hi;
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (mc_classes[mid].size >= size)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

unsigned int slabs_size(const int clsid)
{
	if (clsid < POWER_SMALLEST || (unsigned int)clsid > mc_largest)
		return 0;
	return mc_classes[clsid].size;
}

void *slabs_alloc(const size_t size, unsigned int id, unsigned int flags)
{
	struct mc_class *c;
	item *it;
	long used;

	if (id < POWER_SMALLEST || id > mc_largest || size > mc_classes[id].size)
		return NULL;
	c = &mc_classes[id];
	used = MC_ADD(&c->used, 1);
	if (mc_reserve(c, used, flags & SLABS_ALLOC_NO_NEWPAGE)) {
		it = pool_alloc(c->pool);
		if (it) {
			it->it_flags = 0;
			it->refcount = 1;
			return it;
		}
	}
	mc_unreserve(c, MC_SUB(&c->used, 1));
	return NULL;
}

void slabs_free(void *ptr, size_t size, unsigned int id)
{
	item *it = ptr;
	item_chunk *chunk, *next;
	unsigned int hdr_id;
#ifdef MC_POOL_PLANT_UAF
	bool planted = mc_planted(it);
#endif

	(void)size;
	if (!(it->it_flags & ITEM_CHUNKED)) {
		mc_put(id, it);
#ifdef MC_POOL_PLANT_UAF
		if (planted)
			((volatile item *)it)->refcount = 0;   /* the planted write after free */
#endif
		return;
	}
	/* a large item: the header's class is in its first chunk; each chunk knows its own */
	chunk = (item_chunk *)ITEM_schunk(it);
	hdr_id = chunk->orig_clsid;
	next = chunk->next;
	mc_put(hdr_id, it);
	while (next) {
		chunk = next;
		next = chunk->next;
		mc_put(chunk->slabs_clsid, chunk);
	}
}

bool slabs_adjust_mem_limit(size_t new_mem_limit)
{
	size_t old = MC_LOAD(&mc_mem.limit);
	unsigned int id;

	settings.maxbytes = new_mem_limit;
	MC_STORE(&mc_mem.limit, new_mem_limit);
	if (new_mem_limit && (old == 0 || new_mem_limit < old)) {
		/* a lower limit: what the pools hold free goes back now, the rest as it is freed */
		pool_thread_flush();
		for (id = POWER_SMALLEST; id <= mc_largest; id++)
			pool_flush(mc_classes[id].pool);
		pool_trim();
	}
	return true;
}

/* Free chunks within a class's reservations: what it can take without a new one. */
static unsigned int mc_free_chunks(const struct mc_class *c)
{
	long pages = MC_LOAD(&c->pages), used = MC_LOAD(&c->used);
	unsigned long total = (unsigned long)pages * c->perslab;

	return used < 0 || (unsigned long)used >= total ? 0 : (unsigned int)(total - (unsigned long)used);
}

void fill_slab_stats_automove(slab_stats_automove *am)
{
	unsigned int id;

	memset(am, 0, sizeof(*am) * MAX_NUMBER_OF_SLAB_CLASSES);
	for (id = POWER_SMALLEST; id <= mc_largest; id++) {
		const struct mc_class *c = &mc_classes[id];

		am[id].chunks_per_page = c->perslab;
		am[id].chunk_size = c->size;
		am[id].free_chunks = mc_free_chunks(c);
		am[id].total_pages = MC_LOAD(&c->pages);
	}
}

/* No global page pool: 0 pages; `mem_flag` says whether the reservations reached -m. */
unsigned int global_page_pool_size(bool *mem_flag)
{
	if (mem_flag) {
		size_t limit = MC_LOAD(&mc_mem.limit);

		*mem_flag = limit && MC_LOAD(&mc_mem.reserved) >= limit;
	}
	return 0;
}

unsigned int slabs_available_chunks(const unsigned int id, bool *mem_flag,
                                    unsigned int *chunks_perslab)
{
	global_page_pool_size(mem_flag);
	if (id < POWER_SMALLEST || id > mc_largest) {
		if (chunks_perslab)
			*chunks_perslab = 0;
		return 0;
	}
	if (chunks_perslab)
		*chunks_perslab = mc_classes[id].perslab;
	return mc_free_chunks(&mc_classes[id]);
}

/* What the class's pool holds: objects from the OS layer, their bytes, those not in use. */
struct mc_pool_figures {
	size_t objects, bytes, free;
};

static void mc_pool_figures(const struct mc_class *c, struct mc_pool_figures *f)
{
	struct pool_stats st;
	long used = MC_LOAD(&c->used);

	memset(f, 0, sizeof(*f));
	if (pool_get_stats(c->pool, &st, sizeof(st)) != 0)
		return;
	f->objects = st.allocated;
	f->bytes = st.allocated * st.stride;
	f->free = used >= 0 && st.allocated > (size_t)used ? st.allocated - (size_t)used : 0;
}

void slabs_stats(ADD_STAT add_stats, void *c)
{
	struct thread_stats thread_stats;
	struct pool_os_stats os;
	unsigned int id, active = 0;
	size_t pool_bytes = 0;

	threadlocal_stats_aggregate(&thread_stats);
	for (id = POWER_SMALLEST; id <= mc_largest; id++) {
		const struct mc_class *cl = &mc_classes[id];
		const struct slab_stats *ss = &thread_stats.slab_stats[id];
		long pages = MC_LOAD(&cl->pages), used = MC_LOAD(&cl->used);
		struct mc_pool_figures f;
		char key_str[STAT_KEY_LEN];
		char val_str[STAT_VAL_LEN];
		int klen = 0, vlen = 0;

		mc_pool_figures(cl, &f);
		pool_bytes += f.bytes;
		if (pages == 0 && f.objects == 0)
			continue;
		active++;
		APPEND_NUM_STAT((int)id, "chunk_size", "%u", cl->size);
		APPEND_NUM_STAT((int)id, "chunks_per_page", "%u", cl->perslab);
		APPEND_NUM_STAT((int)id, "total_pages", "%ld", pages);
		APPEND_NUM_STAT((int)id, "total_chunks", "%lu", (unsigned long)pages * cl->perslab);
		APPEND_NUM_STAT((int)id, "used_chunks", "%ld", used);
		APPEND_NUM_STAT((int)id, "free_chunks", "%u", mc_free_chunks(cl));
		APPEND_NUM_STAT((int)id, "free_chunks_end", "%u", 0);
		APPEND_NUM_STAT((int)id, "get_hits", "%llu", (unsigned long long)ss->get_hits);
		APPEND_NUM_STAT((int)id, "cmd_set", "%llu", (unsigned long long)ss->set_cmds);
		APPEND_NUM_STAT((int)id, "delete_hits", "%llu", (unsigned long long)ss->delete_hits);
		APPEND_NUM_STAT((int)id, "incr_hits", "%llu", (unsigned long long)ss->incr_hits);
		APPEND_NUM_STAT((int)id, "decr_hits", "%llu", (unsigned long long)ss->decr_hits);
		APPEND_NUM_STAT((int)id, "cas_hits", "%llu", (unsigned long long)ss->cas_hits);
		APPEND_NUM_STAT((int)id, "cas_badval", "%llu", (unsigned long long)ss->cas_badval);
		APPEND_NUM_STAT((int)id, "touch_hits", "%llu", (unsigned long long)ss->touch_hits);
		APPEND_NUM_STAT((int)id, "pool_objects", "%zu", f.objects);
		APPEND_NUM_STAT((int)id, "pool_bytes", "%zu", f.bytes);
		APPEND_NUM_STAT((int)id, "pool_free", "%zu", f.free);
	}
	APPEND_STAT("active_slabs", "%u", active);
	APPEND_STAT("total_malloced", "%llu", (unsigned long long)MC_LOAD(&mc_mem.reserved));
	APPEND_STAT("total_pool_bytes", "%zu", pool_bytes);
	if (pool_get_os_stats(&os, sizeof(os)) == 0) {
		APPEND_STAT("pool_os_layer", "%s", os.layer ? os.layer : "unknown");
		APPEND_STAT("pool_os_allocated", "%zu", os.allocated_bytes);
		APPEND_STAT("pool_os_resident", "%zu", os.resident_bytes);
	}
	APPEND_STAT("pool_version", "%s", pool_version());
	add_stats(NULL, 0, NULL, 0, c);
}

void slabs_item_stats(const int id, ADD_STAT add_stats, void *c)
{
	struct mc_pool_figures f;
	const char *fmt = "items:%d:%s";
	char key_str[STAT_KEY_LEN];
	char val_str[STAT_VAL_LEN];
	int klen = 0, vlen = 0;

	if (id < POWER_SMALLEST || (unsigned int)id > mc_largest)
		return;
	mc_pool_figures(&mc_classes[id], &f);
	APPEND_NUM_FMT_STAT(fmt, id, "pool_objects", "%zu", f.objects);
	APPEND_NUM_FMT_STAT(fmt, id, "pool_bytes", "%zu", f.bytes);
}

/* The lock kept the page mover off ITEM_CHUNK flags while they change; no mover runs here. */
void slabs_mlock(void)
{
}

void slabs_munlock(void)
{
}

/* The page mover's thread: there are no pages to move (see 3. above), so none starts. */
int start_slab_maintenance_thread(void)
{
	return 0;
}

void stop_slab_maintenance_thread(void)
{
}

/*
 * `slabs reassign <src> <dst>`, and the automover when `slabs automove 1` is set at run time:
 * no class holds a page to give (see 3. above). -1 as `src` means any class.
 */
enum reassign_result_type slabs_reassign(int src, int dst)
{
	if (src == dst)
		return REASSIGN_SRC_DST_SAME;
	if (src < -1 || src > (int)mc_largest || dst < 0 || dst > (int)mc_largest)
		return REASSIGN_BADCLASS;
	return REASSIGN_NOSPARE;
}

/* Pausing the page mover: there is none. */
void slabs_rebalancer_pause(void)
{
}

void slabs_rebalancer_resume(void)
{
}

#ifdef EXTSTORE
void slabs_set_storage(void *arg)
{
	mc_storage = arg;
}
#endif

/* Restart from a memory file: slabs_init() refuses -e, so nothing can call this. */
unsigned int slabs_fixup(char *chunk, const int border)
{
	(void)chunk;
	(void)border;
	fprintf(stderr, "memcached (libpool): slabs_fixup() called, but -e is not available in "
	        "this build: aborting\n");
	abort();
}
