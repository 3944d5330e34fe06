/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The crash report: what a failed check prints before the process aborts. Private header.
 * Everything here is async-signal-safe (write(2), no allocation, no lock), so that the fault
 * handler of the use-after-free backend can report from a SIGSEGV.
 */
#ifndef POOL_SRC_POOL_REPORT_H
#define POOL_SRC_POOL_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "pool-head-t.h"

/* What a failed check knows. Only `what` is required; the rest is printed when known. */
struct pool_report {
	const char *what;                  /* the check that failed, in words */
	const struct pool_head *pool;      /* the pool the object was given to, or NULL */
	const void *obj;                   /* the object, or NULL */
	const void *caller;                /* the code that called libpool (return address) */
	uint64_t expected_tag;             /* with found_tag: printed when expected_tag != 0 */
	uint64_t found_tag;
	const void *freed_by;              /* the code that freed the object before, or NULL */
	const struct pool_head *tag_pool;  /* the pool that the found tag names, or NULL */
};

/*
 * Write the report to stderr and abort():
 *   libpool: FATAL: <what> in pool '<name>' (<size> bytes) object <address>
 *   libpool:   thread <tid>
 *   libpool:   caller: <symbol>+<offset> (<file>)
 * then, when known, the last caller recorded in the object (caller debugging), who freed it,
 * the expected and found tags and the pool the found tag names, and a hex dump of the start and
 * the end of the object (read with pool__os_safe_read(): an unreadable object says so).
 */
__attribute__((noreturn)) void pool__report(const struct pool_report *r);

/*
 * Format `addr` as "symbol+0xoff (file)", or "file(+0xoff)" for a static function (as
 * backtrace_symbols() writes it, for addr2line), or the bare address, into buf (always
 * NUL-terminated, cut to `len`). dladdr(3) is the one symbol lookup of the library.
 */
void pool__symbolize(char *buf, size_t len, const void *addr);

/*
 * Install (once) the SIGSEGV handler that turns a fault inside a use-after-free mapping into a
 * report (use after free, overflow into the guard page) and lets any other fault happen as if it
 * were not there. Thread-safe; 0, or -1 with errno from sigaction().
 */
int pool__report_catch_faults(void);

/* Is `p` the address of a live pool head? (reads its magic word with pool__os_safe_read()) */
int pool__report_is_pool(const void *p);

#endif
