/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The crash report: what a failed check prints before the process aborts, and the symbolizer
 * of the library. Private header.
 *
 * The report is built in a fixed buffer and written with write(2); it takes no pool lock and
 * allocates nothing from a pool. How it names callers depends on where it runs:
 *   - a failed check in ordinary context (tag, integrity, backup, double free, a uaf check at
 *     a free) names them as the profile does, with function, file and line (libdw,
 *     pool-symbols.c): a session of the symbolizer, only tried (another report holding it
 *     leaves this one to dladdr(3)), which may load libdw and allocate with malloc(3), never
 *     from a pool; without libdw, the module and an offset in it;
 *   - the fault handler of the use-after-free backend runs in a SIGSEGV handler and allocates
 *     nothing: one dladdr(3) lookup per caller. POSIX does not list dladdr(3) among the
 *     async-signal-safe functions, and glibc's takes the dynamic loader's lock (a recursive
 *     one). The report calls it all the same, because a caller without its name is of little
 *     use, and bounds the harm: (1) before each lookup it writes out everything built so far,
 *     so that if the lookup never returns, the lines naming the check, the pool, the object and
 *     the thread are on stderr already; (2) the handler reports only faults in uaf mappings,
 *     made by the program's own code, never by the loader, so the faulting thread cannot be
 *     the one holding the loader's lock (and, the lock being recursive, would not wait for
 *     itself if it were); another thread in dlopen(3) holds it only for the moment its update
 *     takes.
 */
#ifndef POOL_SRC_POOL_REPORT_H
#define POOL_SRC_POOL_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "base/pool-head-t.h"

/* The bytes a report of a write after free shows around the first changed one. */
#define POOL_REPORT_WINDOW 48u
/* The frames of the caller's stack a report names (from ordinary context). */
#define POOL_REPORT_DEPTH  16u

/* What a failed check knows. Only `what` is required; the rest is printed when known. */
struct pool_report {
	const char *what;                  /* the check that failed, in words */
	const struct pool_head *pool;      /* the pool the object was given to, or NULL */
	const void *obj;                   /* the object, or NULL */
	const void *caller;                /* the code that called libpool (return address; in
	                                      the fault handler, the faulting instruction) */
	uint64_t expected_tag;             /* with found_tag: printed when expected_tag != 0 */
	uint64_t found_tag;
	const void *freed_by;              /* the code that freed the object before, or NULL */
	const struct pool_head *tag_pool;  /* the pool that the found tag names, or NULL */
	int in_handler;                    /* the fault handler reports: dladdr(3) names only */
	/* A write after free (integrity, backup): the object's bytes changed while it was free. */
	int changed;                       /* the fields below are set */
	size_t changed_off;                /* the first byte that changed, from the object's start */
	size_t window_off, window_len;     /* the bytes shown around it, within the object
	                                      (window_len <= POOL_REPORT_WINDOW) */
	unsigned char expected[POOL_REPORT_WINDOW];   /* what they should hold */
	const char *expected_what;         /* where `expected` comes from, in words */
};

/*
 * Write the report to stderr and abort():
 *   libpool: FATAL: <what> in pool '<name>' (<size> bytes) object <address>
 *   libpool:   thread <tid>
 *   libpool:   caller: <function>+<offset> (<file>:<line>)
 * (each frame inlined at the call on a line "libpool:     <- <frame>" of its own; in the fault
 * handler, or without libdw, "<symbol>+<offset> (<module>)" or "<module>+<offset>"), then, when
 * known, the last caller recorded in the object (caller debugging), who freed it, the expected
 * and found tags and the pool the found tag names; then for a write after free the first byte
 * that changed ("first changed byte at offset 80 of 128: found 0x01, expected 0x5c (...)") and
 * the bytes around it, found and expected, wherever it lies in the object; else a hex dump of
 * the start and the end of the object. Objects are read with pool__os_safe_read(): an
 * unreadable one says so.
 */
__attribute__((noreturn)) void pool__report(const struct pool_report *r);

/*
 * What the report of a failed allocation knows (fail-report debugging, pool-fail-report.c
 * gathers it). Counts are objects.
 */
struct pool_prof_row;
struct pool_fail_info {
	const struct pool_head *pool;      /* the pool that failed */
	const void *caller;                /* the allocating code */
	const uintptr_t *stack;            /* its call stack, stack[0] the caller (depth 0: none) */
	unsigned int depth;
	const char *cause;                 /* why, in words */
	size_t limit;                      /* the pool's limit, 0: none */
	size_t allocated, used;            /* its counts when it failed */
	size_t in_use;                     /* used less the objects in thread caches */
	int cached_known;                  /* in_use knows the cached objects (else it is used) */
	int os_failed;                     /* the OS layer gave no memory (not a limit, not -dMfail) */
	int full_names;                    /* name frames with libdw (it allocates), not dladdr */
	uint64_t failed;                   /* its failures so far */
	uint64_t suppressed;               /* reports left out since the last one (any pool) */
	const struct pool_prof_row *sites; /* the sites holding the most, best first */
	const uint64_t *objects;           /* the objects each holds (estimated, or exact) */
	size_t nsites;
	int exact;                         /* sites[] counts are exact (caller debugging), not
	                                      estimated from samples */
	int profiling;                     /* the profile runs (so no sites means none sampled) */
};

/*
 * Write the report of a failed allocation to stderr (it does not abort):
 *   libpool: allocation failed in pool '<name>' (<size> bytes): <cause>
 *   libpool:   limit <n> objects|no limit; <n> allocated (<bytes> bytes), <n> used; <n> failures
 *   libpool:   caller: <frame>, then a line "libpool:     <- <frame>" per frame of its stack
 * then the sites holding the pool, each with its stack, or how to have them named. Like
 * pool__report(): a fixed buffer and write(2), no lock of ours but the symbolizer's, only
 * tried; frames are named with libdw when `full_names` (which allocates), else with dladdr(3).
 */
void pool__report_failure(const struct pool_fail_info *f);

/*
 * What the report of a sampled object's bug knows (`guard` debugging, pool-guard.c gathers it):
 * the fault handler's (a fault in the profile's region) or a refused free's.
 */
struct pool_guard_report {
	const char *what;                  /* the bug, in words */
	const void *pool;                  /* the object's pool (a head, read with care), or NULL */
	const void *free_pool;             /* a refused free: the pool it was freed into */
	const void *obj;                   /* the sampled object and its size in bytes */
	size_t size;
	const void *addr;                  /* the faulting address, or the address freed */
	long offset;                       /* a fault: addr's offset from the object's first byte */
	const void *pc;                    /* the faulting instruction, or the freeing caller */
	int write;                         /* a fault: 1 write, 0 read, -1 unknown */
	int freeing;                       /* 1: a refused free, not a fault */
	int guarded;                       /* a guarded object (else only its region slot) */
	unsigned long alloc_tid, free_tid; /* the threads that allocated and freed it (0: none) */
	const uintptr_t *alloc, *free;     /* their stacks, innermost first */
	unsigned int nalloc, nfree;
	void (*name)(char *buf, size_t len, uintptr_t pc);   /* names a code address */
};

/*
 * Write that report to stderr and abort():
 *   libpool: FATAL: <what> in pool '<name>' (<size> bytes) object <address> (guard pages)
 *   libpool:   access at <address>: <n> bytes past its end|before it|into it, read|write
 *   libpool:   by <frame>
 *   libpool:   thread <tid>
 *   libpool:   allocated by thread <tid>: <frame>, then "libpool:     <- <frame>" per frame
 *   libpool:   freed by thread <tid>: ... (when it was)
 * Like pool__report(): a fixed buffer and write(2), nothing allocated, no lock; frames named by
 * rep->name, which must be async-signal-safe when the handler calls it.
 */
__attribute__((noreturn)) void pool__report_guard(const struct pool_guard_report *rep);

/*
 * Install (once) the SIGSEGV handler that turns a fault inside a use-after-free mapping into a
 * report (use after free, overflow into the guard page) and lets any other fault happen as if it
 * were not there. Thread-safe; 0, or -1 with errno from sigaction().
 */
int pool__report_catch_faults(void);

/* Is `p` the address of a live pool head? (reads its magic word with pool__os_safe_read()) */
int pool__report_is_pool(const void *p);

#endif
