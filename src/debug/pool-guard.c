/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Guard pages in production (`guard` debugging): a share of the profile's samples live on pages
 * of their own between inaccessible pages (the region, src/os/pool-region.c, places them: the
 * object against the page after it, quarantined inaccessible once freed), as GWP-ASan does in
 * tcmalloc, Chromium and scudo. An overflow past such an object, or an access after its free,
 * faults; the handler here names the bug, the pool, the object and both stacks.
 *
 * 1. Records. Per region slot, what the report needs of a guarded object: its pool, address,
 *    size, and the threads and stacks (POOL_GUARD_DEPTH frames) that allocated and freed it,
 *    written when the sampler hands it out and frees it, read by the handler.
 * 2. Names. The handler may not call the symbolizers (libdw allocates and locks; dladdr(3)
 *    locks the loader). So each frame kept is named when it is kept, in ordinary context, with
 *    dladdr(3) (once per distinct address: a bounded table of names, NAMES addresses and
 *    NAME_BYTES of text), and the handler reads the table; an address it misses (the faulting
 *    instruction's) is named by its object file and offset from /proc/self/maps, read with
 *    open(2) and read(2), or printed bare.
 * 3. The handler, for SIGSEGV and SIGBUS: a fault inside the region is reported (pool-report.c,
 *    pool__report_guard()) and the process aborts; any other goes to the handler installed
 *    before (called, or put back for the fault to happen again when it was the default).
 *
 * Concurrency: one lock (a leaf) for the writers of the records and of the names table; the
 * handler reads both without it (names are published with release stores).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/pool-assert.h"
#include "base/pool-lock.h"
#include "base/pool-util.h"
#include "debug/pool-guard.h"
#include "debug/pool-report.h"
#include "debug/pool-symbols.h"
#include "os/pool-os.h"

#define NAMES       4096u           /* distinct addresses named (a power of two) */
#define NAME_BYTES  (256u << 10)    /* their names' text */
#define NAME_MAX_LEN 192u

struct guard_record {
	const struct pool_head *pool;
	uintptr_t obj;
	size_t size;
	unsigned long alloc_tid, free_tid;
	uint32_t nalloc, nfree;
	uintptr_t alloc[POOL_GUARD_DEPTH];
	uintptr_t free[POOL_GUARD_DEPTH];
};

struct guard_name {
	_Atomic uintptr_t pc;           /* 0: empty */
	uint32_t off;                   /* its name: text[off], NUL-terminated */
};

static struct pool_lock guard_lock = POOL_LOCK_INITIALIZER;
static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static struct guard_record *records;    /* [POOL_REGION_SLOTS], NULL: not mapped */
static struct guard_name *names;        /* [NAMES] */
static char *text;                      /* [NAME_BYTES] */
static size_t text_used;
static struct sigaction old_segv, old_bus;
static int handlers_errno;

/* ------------------------------------------------------------------------------------------ */
/* Names                                                                                      */
/* ------------------------------------------------------------------------------------------ */

static unsigned int name_home(uintptr_t pc)
{
	return pool__hash_ptr((const void *)pc, 12) & (NAMES - 1);
}

/* The name of `pc` in the table, or NULL (lock-free: the handler's read). */
static const char *name_of(uintptr_t pc)
{
	unsigned int i, h;

	if (!names || !pc)
		return NULL;
	for (i = 0, h = name_home(pc); i < NAMES; i++, h = (h + 1) & (NAMES - 1)) {
		uintptr_t at = atomic_load_explicit(&names[h].pc, memory_order_acquire);

		if (!at)
			return NULL;
		if (at == pc)
			return text + names[h].off;
	}
	return NULL;
}

/* Name each of frames[0..n) not named yet (dladdr(3) outside the lock, which is a leaf). */
static void name_frames(const uintptr_t *frames, unsigned int n)
{
	char buf[NAME_MAX_LEN];
	unsigned int k, i, h;
	size_t len;

	for (k = 0; k < n && names; k++) {
		if (name_of(frames[k]))
			continue;
		pool__symbolize(buf, sizeof(buf), (const void *)frames[k], 0);
		len = strlen(buf) + 1;
		pool__lock(&guard_lock);
		for (i = 0, h = name_home(frames[k]); i < NAMES / 2; i++, h = (h + 1) & (NAMES - 1)) {
			uintptr_t at = atomic_load_explicit(&names[h].pc, memory_order_relaxed);

			if (at == frames[k])
				break;
			if (at || text_used + len > NAME_BYTES)
				continue;
			memcpy(text + text_used, buf, len);
			names[h].off = (uint32_t)text_used;
			text_used += len;
			atomic_store_explicit(&names[h].pc, frames[k], memory_order_release);
			break;
		}
		pool__unlock(&guard_lock);
	}
}

/* Append `s` to buf[0..len) at *at, NUL-terminated, cut to fit. */
static void put(char *buf, size_t len, size_t *at, const char *s)
{
	while (*s && *at + 1 < len)
		buf[(*at)++] = *s++;
	buf[*at] = 0;
}

static void put_hex(char *buf, size_t len, size_t *at, uint64_t v)
{
	char tmp[20];
	int n = 0;

	put(buf, len, at, "0x");
	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	while (n--) {
		char c[2] = { tmp[n], 0 };

		put(buf, len, at, c);
	}
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A hexadecimal number at *p, which moves past it. */
static uint64_t read_hex(const char **p, const char *end)
{
	uint64_t v = 0;
	int d;

	while (*p < end && (d = hex_digit(**p)) >= 0) {
		v = v << 4 | (uint64_t)d;
		(*p)++;
	}
	return v;
}

/* One line of /proc/self/maps: if it maps `pc`, its file and the offset of pc in it. */
static int maps_line(const char *l, const char *end, uintptr_t pc, char *buf, size_t len)
{
	uint64_t start, stop, off;
	size_t at = 0;
	int field;

	start = read_hex(&l, end);
	if (l == end || *l++ != '-')
		return 0;
	stop = read_hex(&l, end);
	if (pc < start || pc >= stop)
		return 0;
	/* perms, then the file offset */
	while (l < end && *l == ' ')
		l++;
	while (l < end && *l != ' ')
		l++;
	while (l < end && *l == ' ')
		l++;
	off = read_hex(&l, end);
	/* device, inode, then the path */
	for (field = 0; field < 2; field++) {
		while (l < end && *l == ' ')
			l++;
		while (l < end && *l != ' ')
			l++;
	}
	while (l < end && *l == ' ')
		l++;
	while (l < end && at + 1 < len - 24)
		buf[at++] = *l++;
	buf[at] = 0;
	if (!at)
		put(buf, len, &at, "?");
	put(buf, len, &at, "+");
	put_hex(buf, len, &at, pc - start + off);
	return 1;
}

/* `pc` as its object file and offset, from /proc/self/maps: 1, or 0 (not found). */
static int name_from_maps(char *buf, size_t len, uintptr_t pc)
{
	char chunk[4096];
	size_t have = 0;
	ssize_t got;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC), found = 0;

	if (fd < 0)
		return 0;
	while (!found && (got = read(fd, chunk + have, sizeof(chunk) - have)) > 0) {
		const char *l = chunk, *end = chunk + have + got, *nl;

		while (!found && (nl = memchr(l, '\n', (size_t)(end - l)))) {
			found = maps_line(l, nl, pc, buf, len);
			l = nl + 1;
		}
		have = (size_t)(end - l);
		memmove(chunk, l, have);
		if (have == sizeof(chunk))
			have = 0;       /* a line longer than the chunk: dropped */
	}
	close(fd);
	return found;
}

void pool__guard_name(char *buf, size_t len, uintptr_t pc)
{
	const char *n = name_of(pc);
	size_t at = 0;

	if (!len)
		return;
	buf[0] = 0;
	if (n) {
		put(buf, len, &at, n);
		return;
	}
	if (pc && name_from_maps(buf, len, pc))
		return;
	put_hex(buf, len, &at, pc);
}

/* ------------------------------------------------------------------------------------------ */
/* Records                                                                                    */
/* ------------------------------------------------------------------------------------------ */

static unsigned int keep_frames(uintptr_t *dst, const uintptr_t *frames, unsigned int n)
{
	if (n > POOL_GUARD_DEPTH)
		n = POOL_GUARD_DEPTH;
	memcpy(dst, frames, n * sizeof(*dst));
	return n;
}

void pool__guard_alloc(unsigned int slot, const struct pool_head *pool, const void *obj,
                       const uintptr_t *frames, unsigned int n)
{
	struct guard_record *g;

	if (!records || !slot || slot >= POOL_REGION_SLOTS)
		return;
	name_frames(frames, n < POOL_GUARD_DEPTH ? n : POOL_GUARD_DEPTH);
	pool__lock(&guard_lock);
	g = &records[slot];
	g->pool = pool;
	g->obj = (uintptr_t)obj;
	g->size = pool->ro.size;
	g->alloc_tid = pool__os_thread_id();
	g->free_tid = 0;
	g->nfree = 0;
	g->nalloc = keep_frames(g->alloc, frames, n);
	pool__unlock(&guard_lock);
}

void pool__guard_free(unsigned int slot, const uintptr_t *frames, unsigned int n)
{
	struct guard_record *g;

	if (!records || !slot || slot >= POOL_REGION_SLOTS)
		return;
	name_frames(frames, n < POOL_GUARD_DEPTH ? n : POOL_GUARD_DEPTH);
	pool__lock(&guard_lock);
	g = &records[slot];
	g->free_tid = pool__os_thread_id();
	g->nfree = keep_frames(g->free, frames, n);
	pool__unlock(&guard_lock);
}

/* The report's account of slot `hit->slot` (its record, when the slot is a guarded one). */
static void fill_report(struct pool_guard_report *rep, const struct pool_region_hit *hit)
{
	const struct guard_record *g = records && hit->slot && hit->slot < POOL_REGION_SLOTS ?
	                               &records[hit->slot] : NULL;

	rep->obj = hit->obj;
	rep->size = hit->size;
	rep->pool = hit->owner;
	rep->guarded = hit->guard;
	rep->name = pool__guard_name;
	if (g && hit->guard && g->obj == (uintptr_t)hit->obj) {
		rep->alloc_tid = g->alloc_tid;
		rep->alloc = g->alloc;
		rep->nalloc = g->nalloc;
		rep->free_tid = g->free_tid;
		rep->free = g->free;
		rep->nfree = g->nfree;
	}
}

/* A frame named with libdw, in ordinary context (a refused free's report). */
static void name_full(char *buf, size_t len, uintptr_t pc)
{
	pool__sym_name(buf, len, pc, 0);
}

void pool__guard_bad_free(const struct pool_head *pool, const void *ptr, const void *caller,
                          const struct pool_region_hit *hit)
{
	struct pool_guard_report rep;

	memset(&rep, 0, sizeof(rep));
	fill_report(&rep, hit);
	rep.addr = ptr;
	rep.pc = caller;
	rep.freeing = 1;
	rep.name = name_full;
	if (hit->slot && hit->obj == ptr && hit->state != POOL_REGION_LIVE)
		rep.what = "double free of a sampled object";
	else if (hit->slot && hit->obj == ptr)
		rep.what = "free into the wrong pool of a sampled object";
	else if (hit->slot && hit->state == POOL_REGION_LIVE)
		rep.what = "free of an address inside a sampled object, not its start";
	else
		rep.what = "free of an address of the profile's region that is no object (freed "
		           "long ago, or never allocated)";
	rep.free_pool = pool;
	pool__report_guard(&rep);
}

/* ------------------------------------------------------------------------------------------ */
/* The fault handler                                                                          */
/* ------------------------------------------------------------------------------------------ */

/* What a fault at `offset` from a slot's object, in a slot in state `state`, is. */
static const char *fault_kind(const struct pool_region_hit *hit)
{
	if (hit->state != POOL_REGION_LIVE)
		return "use after free of a sampled object";
	if (hit->offset < 0)
		return "underflow before a sampled object";
	if ((size_t)hit->offset >= hit->size)
		return "overflow past the end of a sampled object";
	return "invalid access inside a sampled object";
}

/* The handler found before ours for `sig`: called, or put back for the fault to happen again. */
static void chain(int sig, siginfo_t *si, void *uctx)
{
	const struct sigaction *old = sig == SIGBUS ? &old_bus : &old_segv;

	if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction) {
		old->sa_sigaction(sig, si, uctx);
		return;
	}
	if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
		old->sa_handler(sig);
		return;
	}
	sigaction(sig, old, NULL);
}

static void on_fault(int sig, siginfo_t *si, void *uctx)
{
	struct pool_region_hit hit;
	struct pool_guard_report rep;
	int saved = errno;

	if (!pool__region_find(si->si_addr, &hit)) {
		chain(sig, si, uctx);
		errno = saved;
		return;
	}
	memset(&rep, 0, sizeof(rep));
	fill_report(&rep, &hit);
	rep.what = fault_kind(&hit);
	rep.addr = si->si_addr;
	rep.offset = hit.offset;
	pool__os_fault_context(uctx, &rep.pc, &rep.write);
	pool__report_guard(&rep);
}

static void start(void)
{
	struct sigaction sa;

	records = pool__os_map(pool__round_up(POOL_REGION_SLOTS * sizeof(*records),
	                                      pool__os_page_size()));
	names = pool__os_map(pool__round_up(NAMES * sizeof(*names), pool__os_page_size()));
	text = pool__os_map(NAME_BYTES);
	if (!names || !text)
		names = NULL;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &old_segv) != 0 || sigaction(SIGBUS, &sa, &old_bus) != 0)
		handlers_errno = errno ? errno : EINVAL;
}

void pool__guard_start(void)
{
	pthread_once(&start_once, start);
	if (handlers_errno || !records) {
		static atomic_int warned;

		if (!atomic_exchange_explicit(&warned, 1, memory_order_relaxed))
			fprintf(stderr, "libpool: guard: %s: a fault of a guarded object will kill the "
			        "process without libpool's report\n", !records ? "no memory for the "
			        "records" : "cannot install the SIGSEGV handler (sigaction)");
	}
}

void pool__guard_fork_prepare(void)
{
	pool__lock(&guard_lock);
}

void pool__guard_fork_after(void)
{
	pool__unlock(&guard_lock);
}
