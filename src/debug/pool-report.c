/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The crash report and the fault handler of the use-after-free backend.
 *
 * A report is built in a fixed buffer and written to stderr with write(2), then the process
 * aborts: no allocation from a pool, no pool lock, nothing that a corrupted pool could not
 * survive. Memory that may be unreadable (a quarantined object, a guard page, a freed pool head)
 * is read with pool__os_safe_read(). Callers are named as pool-report.h says: with libdw
 * (pool-symbols.c) when a failed check reports from ordinary context, with dladdr(3) alone from
 * the fault handler, which allocates nothing.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/pool-assert.h"
#include "os/pool-os.h"
#include "debug/pool-profile.h"
#include "debug/pool-report.h"
#include "debug/pool-stack.h"
#include "debug/pool-symbols.h"
#include "os/pool-san.h"
#include "os/pool-uaf.h"

struct rbuf {
	char b[1024];
	size_t n;
};

static void r_flush(struct rbuf *r)
{
	size_t off = 0;

	while (off < r->n) {
		ssize_t w = write(2, r->b + off, r->n - off);

		if (w <= 0)
			break;
		off += (size_t)w;
	}
	r->n = 0;
}

static void r_str(struct rbuf *r, const char *s)
{
	while (s && *s) {
		if (r->n == sizeof(r->b))
			r_flush(r);
		r->b[r->n++] = *s++;
	}
}

/* `v` in hexadecimal with at least `digits` digits, into buf[24]. */
static const char *fmt_hex(char *buf, uint64_t v, int digits)
{
	char tmp[20];
	int i, n = 0, k = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v || n < digits);
	buf[k++] = '0';
	buf[k++] = 'x';
	for (i = n - 1; i >= 0; i--)
		buf[k++] = tmp[i];
	buf[k] = 0;
	return buf;
}

static const char *fmt_dec(char *buf, uint64_t v)
{
	char tmp[24];
	int n = sizeof(tmp) - 1, k = 0;

	tmp[n] = 0;
	do {
		tmp[--n] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (tmp[n])
		buf[k++] = tmp[n++];
	buf[k] = 0;
	return buf;
}

static void r_hex(struct rbuf *r, uint64_t v, int digits)
{
	char buf[24];

	r_str(r, fmt_hex(buf, v, digits));
}

static void r_dec(struct rbuf *r, uint64_t v)
{
	char buf[24];

	r_str(r, fmt_dec(buf, v));
}

/*
 * The frames at `pc`, a return address: the first on the line the caller began, each other on a line of its own ("libpool:<indent><-
 * frame"). What the report built so far goes out first: should the lookup never return, the
 * lines naming the check, the pool and the object are on stderr already. With `full` (a session
 * of the libdw symbolizer is open) the frames are libdw's, with file and line, the functions
 * inlined at `pc` first; else one frame from dladdr(3), the one lookup of the report that is
 * not async-signal-safe (see pool-report.h).
 */
static void r_frames(struct rbuf *r, uintptr_t pc, int full, const char *indent)
{
	struct pool_sym syms[8];
	char buf[320];
	unsigned int k, n;

	r_flush(r);
	if (!full) {
		pool__symbolize(buf, sizeof(buf), (const void *)pc, 0);
		r_str(r, buf);
		r_str(r, "\n");
		return;
	}
	n = pool__sym_frames(pc, syms, 8);
	for (k = 0; k < n; k++) {
		if (k) {
			r_str(r, "libpool:");
			r_str(r, indent);
			r_str(r, "<- ");
		}
		pool__sym_format(buf, sizeof(buf), &syms[k], 0);
		r_str(r, buf);
		r_str(r, "\n");
	}
}

int pool__report_is_pool(const void *p)
{
	uint64_t magic;

	if (!p)
		return 0;
	return pool__os_safe_read(&magic, (const char *)p + offsetof(struct pool_head, magic),
	                          sizeof(magic)) == 0 && magic == POOL_HEAD_LIVE;
}

/*
 * The frames of a stack, each on a line of its own ("<first>" after what the caller wrote, then
 * "libpool:<indent><- frame"), named with libdw when `full` (the caller opened a session of
 * the symbolizer), else with dladdr(3).
 */
static void r_stack(struct rbuf *r, const uintptr_t *frames, unsigned int depth, int full,
                    const char *indent)
{
	unsigned int i;

	for (i = 0; i < depth; i++) {
		if (i) {
			r_str(r, "libpool:");
			r_str(r, indent);
			r_str(r, "<- ");
		}
		r_frames(r, frames[i], full, indent);
	}
}

/* Two hexadecimal digits and a blank per byte of buf[0..n). */
static void r_bytes(struct rbuf *r, const unsigned char *buf, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char c[4] = { "0123456789abcdef"[buf[i] >> 4], "0123456789abcdef"[buf[i] & 15],
		              ' ', 0 };

		r_str(r, c);
	}
}

static void r_dump(struct rbuf *r, const char *title, const unsigned char *from, size_t len,
                   const unsigned char *obj)
{
	unsigned char buf[64];
	size_t i;

	if (len > sizeof(buf))
		len = sizeof(buf);
	r_str(r, "libpool:   ");
	r_str(r, title);
	r_str(r, " (offset ");
	r_dec(r, (uint64_t)(from - obj));
	r_str(r, ", ");
	r_dec(r, len);
	r_str(r, " bytes):");
	/* the report reads what the sanitizer would forbid: it is about to abort anyway */
	pool__san_access(from, len);
	if (pool__os_safe_read(buf, from, len) < 0) {
		r_str(r, " (unreadable)\n");
		return;
	}
	for (i = 0; i < len; i += 16) {
		r_str(r, "\nlibpool:     ");
		r_bytes(r, buf + i, len - i < 16 ? len - i : 16);
	}
	r_str(r, "\n");
}

/*
 * A write after free: the first byte that changed, then the window around it a row of 16 bytes
 * at a time, what the object holds ("found") above what it should hold ("expected").
 */
static void r_changed(struct rbuf *r, const struct pool_report *rep, size_t size)
{
	const unsigned char *o = rep->obj;
	unsigned char found[POOL_REPORT_WINDOW];
	size_t at = rep->changed_off - rep->window_off, i, n;

	POOL_ASSERT(rep->window_len <= POOL_REPORT_WINDOW && at < rep->window_len &&
	            rep->window_off + rep->window_len <= size);
	pool__san_access(o + rep->window_off, rep->window_len);
	if (pool__os_safe_read(found, o + rep->window_off, rep->window_len) < 0) {
		r_str(r, "libpool:   first changed byte at offset ");
		r_dec(r, rep->changed_off);
		r_str(r, " (the object is unreadable now)\n");
		return;
	}
	r_str(r, "libpool:   first changed byte at offset ");
	r_dec(r, rep->changed_off);
	r_str(r, " of ");
	r_dec(r, size);
	r_str(r, ": found ");
	r_hex(r, found[at], 2);
	r_str(r, ", expected ");
	r_hex(r, rep->expected[at], 2);
	r_str(r, " (");
	r_str(r, rep->expected_what);
	r_str(r, ")\nlibpool:   bytes ");
	r_dec(r, rep->window_off);
	r_str(r, " to ");
	r_dec(r, rep->window_off + rep->window_len - 1);
	r_str(r, " of the object:\n");
	for (i = 0; i < rep->window_len; i += 16) {
		n = rep->window_len - i < 16 ? rep->window_len - i : 16;
		r_str(r, "libpool:     offset ");
		r_dec(r, rep->window_off + i);
		r_str(r, rep->window_off + i < 10 ? "    " : rep->window_off + i < 100 ? "   " :
		      rep->window_off + i < 1000 ? "  " : " ");
		r_str(r, "found    ");
		r_bytes(r, found + i, n);
		r_str(r, "\nlibpool:                 expected ");
		r_bytes(r, rep->expected + i, n);
		r_str(r, "\n");
	}
}

__attribute__((noreturn)) void pool__report(const struct pool_report *rep)
{
	const struct pool_head *pool = rep->pool;
	uintptr_t stack[POOL_REPORT_DEPTH];
	const char *indent = "     ";
	unsigned int depth;
	struct rbuf r;
	int full;

	r.n = 0;
	r_str(&r, "libpool: FATAL: ");
	r_str(&r, rep->what);
	r_str(&r, " in pool '");
	r_str(&r, pool ? pool->name : "?");
	r_str(&r, "' (");
	r_dec(&r, pool ? pool->ro.size : 0);
	r_str(&r, " bytes) object ");
	r_hex(&r, (uint64_t)(uintptr_t)rep->obj, 1);
	r_str(&r, "\nlibpool:   thread ");
	r_dec(&r, pool__os_thread_id());
	r_str(&r, "\n");
	/* out before the symbolizer loads: it may take a while, or never return */
	r_flush(&r);
	full = !rep->in_handler && pool__sym_begin(1) == 0;
	r_str(&r, "libpool:   caller: ");
	if (full) {
		/* the call stack from the caller out: which of its callers, too */
		pool__stack_prepare();
		depth = pool__stack_capture(stack, POOL_REPORT_DEPTH, rep->caller);
		r_stack(&r, stack, depth, 1, indent);
	} else {
		r_frames(&r, (uintptr_t)rep->caller, 0, indent);
	}
	if (pool && pool->caller_off && rep->obj) {
		const void *last = NULL;

		if (pool__os_safe_read(&last, (const char *)rep->obj + pool->caller_off,
		                       sizeof(last)) == 0) {
			r_str(&r, "libpool:   last caller recorded in the object: ");
			r_frames(&r, (uintptr_t)last, full, indent);
		}
	}
	if (rep->freed_by && !rep->expected_tag) {
		r_str(&r, "libpool:   freed by: ");
		r_frames(&r, (uintptr_t)rep->freed_by, full, indent);
	}
	if (rep->expected_tag) {
		r_str(&r, "libpool:   expected tag ");
		r_hex(&r, rep->expected_tag, 16);
		r_str(&r, ", found ");
		r_hex(&r, rep->found_tag, 16);
		r_str(&r, "\n");
		if (rep->freed_by) {
			r_str(&r, "libpool:   the found tag marks an object already freed by: ");
			r_frames(&r, (uintptr_t)rep->freed_by, full, indent);
		}
	}
	if (full)
		pool__sym_end();
	if (rep->tag_pool) {
		r_str(&r, "libpool:   the found tag is that of pool '");
		r_str(&r, rep->tag_pool->name);
		r_str(&r, "' (");
		r_dec(&r, rep->tag_pool->ro.size);
		r_str(&r, " bytes)\n");
	}
	if (rep->obj && pool && rep->changed) {
		r_changed(&r, rep, pool->ro.size);
	} else if (rep->obj && pool) {
		size_t size = pool->ro.size;
		const unsigned char *o = rep->obj;
		size_t before = size < 16 ? size : 16;

		r_dump(&r, "object start", o, size < 64 ? size : 64, o);
		r_dump(&r, "around the end", o + size - before,
		       before + ((pool->layout & POOL_DBG_UAF) ? 0 : 16), o);
	}
	r_flush(&r);
	abort();
}

/* ------------------------------------------------------------------------------------------ */
/* The report of a failed allocation                                                          */
/* ------------------------------------------------------------------------------------------ */

void pool__report_failure(const struct pool_fail_info *f)
{
	const struct pool_head *pool = f->pool;
	uintptr_t caller = (uintptr_t)f->caller;
	struct rbuf r;
	size_t i;
	int full;

	r.n = 0;
	r_str(&r, "libpool: allocation failed in pool '");
	r_str(&r, pool->name);
	r_str(&r, "' (");
	r_dec(&r, pool->ro.size);
	r_str(&r, " bytes): ");
	r_str(&r, f->cause);
	r_str(&r, "\nlibpool:   ");
	if (f->limit) {
		r_str(&r, "limit ");
		r_dec(&r, f->limit);
		r_str(&r, " objects; ");
	} else {
		r_str(&r, "no limit; ");
	}
	r_dec(&r, f->allocated);
	r_str(&r, " allocated (");
	r_dec(&r, (uint64_t)f->allocated * pool->stride);
	r_str(&r, " bytes), ");
	r_dec(&r, f->used);
	r_str(&r, " used (handed out or cached)");
	if (f->cached_known) {
		r_str(&r, ", ");
		r_dec(&r, f->in_use);
		r_str(&r, " in use");
	}
	r_str(&r, "; ");
	r_dec(&r, f->failed);
	r_str(&r, f->failed == 1 ? " failure\n" : " failures\n");
	if (f->suppressed) {
		r_str(&r, "libpool:   ");
		r_dec(&r, f->suppressed);
		r_str(&r, " more failures since the last report were not reported\n");
	}
	r_flush(&r);
	full = f->full_names && pool__sym_begin(1) == 0;
	r_str(&r, "libpool:   caller: ");
	if (f->depth)
		r_stack(&r, f->stack, f->depth, full, "     ");
	else
		r_stack(&r, &caller, 1, full, "     ");
	if (f->nsites)
		r_str(&r, f->exact ? "libpool:   callers holding the most objects of the pool "
		                     "(exact, caller debugging):\n" :
		      f->cached_known ? "libpool:   sites holding the most objects of the pool (its "
		                        "objects in use shared by the profile's live samples):\n" :
		      "libpool:   sites holding the most objects of the pool (its objects used, "
		      "cached ones included, shared by the profile's live samples):\n");
	else if (f->profiling) {
		r_str(&r, "libpool:   no site of this pool sampled yet: `pools profile on rate 1 pool ");
		r_str(&r, pool->name);
		r_str(&r, "` samples every allocation of the pool\n");
	}
	else
		r_str(&r, "libpool:   for the sites holding it: `pools profile on` (CLI), "
		          "pool_profile_start() or POOL_DEBUG=profile\n");
	for (i = 0; i < f->nsites; i++) {
		const struct pool_prof_row *row = &f->sites[i];
		uint64_t objs = f->objects[i];

		r_str(&r, f->exact ? "libpool:     " : "libpool:     ~");
		r_dec(&r, objs * pool->stride);
		r_str(&r, " bytes, ");
		r_str(&r, f->exact ? "" : "~");
		r_dec(&r, objs);
		r_str(&r, " objects");
		if (!f->exact) {
			r_str(&r, " (");
			r_dec(&r, row->live);
			r_str(&r, row->live == 1 ? " live sample)" : " live samples)");
		}
		r_str(&r, ": ");
		if (row->depth)
			r_stack(&r, row->frames, row->depth, full, "       ");
		else
			r_str(&r, "(its stack was being written: not read)\n");
	}
	if (full)
		pool__sym_end();
	r_flush(&r);
}

/* ------------------------------------------------------------------------------------------ */
/* The fault handler                                                                          */
/* ------------------------------------------------------------------------------------------ */

static struct sigaction old_segv;
static pthread_once_t catch_once = PTHREAD_ONCE_INIT;
static int catch_errno;

static void on_segv(int sig, siginfo_t *si, void *uctx)
{
	struct pool_uaf_hit hit;
	struct pool_report rep;
	const void *pc;
	int write_fault;

	if (pool__uaf_lookup(si->si_addr, &hit)) {
		const char *what;

		pool__os_fault_context(uctx, &pc, &write_fault);
		if (hit.quarantined)
			what = write_fault < 0 ? "use after free: access to a freed object (caught by "
			                         "its PROT_NONE pages)" :
			       write_fault ? "use after free: access to a freed object (caught by its "
			                     "PROT_NONE pages), write" :
			       "use after free: access to a freed object (caught by its PROT_NONE "
			       "pages), read";
		else if (hit.past_end)
			what = write_fault < 0 ? "overflow past the end of the object into its guard "
			                         "page" :
			       write_fault ? "overflow past the end of the object into its guard page, "
			                     "write" :
			       "overflow past the end of the object into its guard page, read";
		else
			what = "invalid access near the object";
		memset(&rep, 0, sizeof(rep));
		rep.in_handler = 1;
		rep.what = what;
		rep.pool = hit.owner;
		rep.obj = hit.obj;
		rep.caller = pc;
		rep.freed_by = pool__uaf_free_caller(hit.obj);
		pool__report(&rep);
	}
	/* not ours: put the previous handler back and let the fault happen again */
	sigaction(sig, &old_segv, NULL);
}

static void install_segv(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &old_segv) != 0)
		catch_errno = errno ? errno : EINVAL;
}

int pool__report_catch_faults(void)
{
	pthread_once(&catch_once, install_segv);
	if (catch_errno) {
		errno = catch_errno;
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* The report of a sampled object's bug (guard pages)                                         */
/* ------------------------------------------------------------------------------------------ */

/* A stack named by `name`, one frame per line after the first. */
static void r_guard_stack(struct rbuf *r, const uintptr_t *frames, unsigned int n,
                          void (*name)(char *, size_t, uintptr_t))
{
	char buf[256];
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (i)
			r_str(r, "libpool:     <- ");
		name(buf, sizeof(buf), frames[i]);
		r_str(r, buf);
		r_str(r, "\n");
	}
	if (!n)
		r_str(r, "(no stack)\n");
}

/* The name of pool head `p` (read with care: it may be gone) into buf[32]. */
static const char *guard_pool_name(const void *p, char *buf, size_t len)
{
	if (!pool__report_is_pool(p) ||
	    pool__os_safe_read(buf, (const char *)p + offsetof(struct pool_head, name), len) < 0)
		return "?";
	buf[len - 1] = 0;
	return buf;
}

void pool__report_guard(const struct pool_guard_report *rep)
{
	char name[POOL_NAME_MAX + 1], pc[256];
	struct rbuf r;

	r.n = 0;
	r_str(&r, "libpool: FATAL: ");
	r_str(&r, rep->what);
	r_str(&r, " in pool '");
	r_str(&r, guard_pool_name(rep->pool, name, sizeof(name)));
	r_str(&r, "' (");
	r_dec(&r, rep->size);
	r_str(&r, " bytes) object ");
	r_hex(&r, (uint64_t)(uintptr_t)rep->obj, 1);
	r_str(&r, rep->guarded ? " (guard pages)\n" : " (the profile's region)\n");
	if (!rep->freeing) {
		r_str(&r, "libpool:   access at ");
		r_hex(&r, (uint64_t)(uintptr_t)rep->addr, 1);
		r_str(&r, ": ");
		if (rep->offset < 0) {
			r_dec(&r, (uint64_t)-rep->offset);
			r_str(&r, " bytes before it");
		} else if ((size_t)rep->offset >= rep->size) {
			r_dec(&r, (uint64_t)rep->offset - rep->size);
			r_str(&r, " bytes past its end");
		} else {
			r_str(&r, "byte ");
			r_dec(&r, (uint64_t)rep->offset);
			r_str(&r, " of it");
		}
		r_str(&r, rep->write < 0 ? "\n" : rep->write ? ", write\n" : ", read\n");
	} else if (rep->free_pool && rep->free_pool != rep->pool) {
		r_str(&r, "libpool:   freed into pool '");
		r_str(&r, guard_pool_name(rep->free_pool, name, sizeof(name)));
		r_str(&r, "' at ");
		r_hex(&r, (uint64_t)(uintptr_t)rep->addr, 1);
		r_str(&r, "\n");
	}
	r_str(&r, rep->freeing ? "libpool:   freed again by: " : "libpool:   by: ");
	rep->name(pc, sizeof(pc), (uintptr_t)rep->pc);
	r_str(&r, pc);
	r_str(&r, "\nlibpool:   thread ");
	r_dec(&r, pool__os_thread_id());
	r_str(&r, "\n");
	if (rep->alloc_tid) {
		r_str(&r, "libpool:   allocated by thread ");
		r_dec(&r, rep->alloc_tid);
		r_str(&r, ": ");
		r_guard_stack(&r, rep->alloc, rep->nalloc, rep->name);
	}
	if (rep->free_tid) {
		r_str(&r, "libpool:   freed by thread ");
		r_dec(&r, rep->free_tid);
		r_str(&r, ": ");
		r_guard_stack(&r, rep->free, rep->nfree, rep->name);
	}
	if (!rep->guarded)
		r_str(&r, "libpool:   (not a guarded object: its stacks were not kept)\n");
	r_flush(&r);
	abort();
}
