/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Helpers of the whole introspection layer (src/introspect/pool-dump.c, src/introspect/pool-cli.c,
 * src/introspect/pool-cli-socket.c), defined in src/introspect/pool-text.c or inline here: its allocations (one
 * fault-injection site), the tokenizer, the word tables and the escaper of client bytes. The
 * JSON string writer of src/introspect/pool-text.c is public (pool_json_write_string() in <pool/pool.h>).
 * Private header: never installed.
 */
#ifndef POOL_SRC_POOL_TEXT_H
#define POOL_SRC_POOL_TEXT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pool/pool.h>

#include "base/pool-head-t.h"
#include "os/pool-fault.h"
#include "base/pool-util.h"

/*
 * The allocations of the introspection layer (snapshots, client buffers, answers, parser
 * copies): malloc(3) and friends, each a fault-injection site (POOL_FAULT_CLI) for the tests'
 * sweep. They fail as the C library does: NULL with errno = ENOMEM.
 */
static inline int pool__cli_fault(void)
{
	if (!pool__fault(POOL_FAULT_CLI))
		return 0;
	errno = ENOMEM;
	return 1;
}

static inline void *pool__cli_malloc(size_t size)
{
	return pool__cli_fault() ? NULL : malloc(size);
}

static inline void *pool__cli_calloc(size_t n, size_t size)
{
	return pool__cli_fault() ? NULL : calloc(n, size);
}

static inline void *pool__cli_realloc(void *ptr, size_t size)
{
	return pool__cli_fault() ? NULL : realloc(ptr, size);
}

static inline char *pool__cli_strndup(const char *s, size_t n)
{
	return pool__cli_fault() ? NULL : strndup(s, n);
}

static inline FILE *pool__cli_memstream(char **buf, size_t *len)
{
	return pool__cli_fault() ? NULL : open_memstream(buf, len);
}

/* Longest piece of client input echoed back in an error message, in bytes. */
#define POOL_ECHO_MAX 64u

/* Separators of the words of a command line: space, tab, CR and LF. */
static inline int pool__is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/*
 * The tokenizer: the next blank-separated word of the NUL-terminated string *p. Returns its
 * start, sets *len to its length and moves *p past it; returns NULL (and leaves *len alone) when
 * only blanks are left.
 */
const char *pool__next_word(const char **p, size_t *len);

/* The rest of the line at `p` without its leading and trailing blanks: start, and *len. */
const char *pool__rest_of_line(const char *p, size_t *len);

/*
 * Does w[0..len) name `pool`: is it the name of any of its creators, the pool_create() calls
 * merged into it (its own name, the first creator's, included)? With `prefix`, does any of those
 * names start with w[0..len)? Every command and filter that takes a pool name asks this, so
 * that each name a creator gave stays valid. The caller holds the pool list lock.
 */
int pool__pool_named(const struct pool_head *pool, const char *w, size_t len, int prefix);

/*
 * A word table: the words a command accepts, each with the group it belongs to (words of one
 * group exclude each other, e.g. the sort orders) and the value it selects in that group.
 */
struct pool_word {
	const char *word;
	unsigned int group;
	int value;
};

/* The entry of table[0..n) whose word is exactly w[0..len) (case-sensitive), or NULL. */
const struct pool_word *pool__word_find(const struct pool_word *table, size_t n, const char *w,
                                        size_t len);

/*
 * A count written in decimal, w[0..len): digits only, no sign, at most SIZE_MAX. Returns 0 and
 * sets *v, or -1 (*v unchanged).
 */
static inline int pool__parse_size(const char *w, size_t len, size_t *v)
{
	unsigned long long n;

	if (pool__parse_decimal(w, len, 0, SIZE_MAX, &n) < 0)
		return -1;
	*v = (size_t)n;
	return 0;
}

/* Does w[0..len) spell the NUL-terminated `lit` exactly? */
int pool__word_is(const char *w, size_t len, const char *lit);

/*
 * The escaper: write s[0..len) so that an answer stays one printable line whatever the client
 * sent: bytes outside 0x20..0x7e are written as \xNN, and with POOL_ESC_QUOTES also the quote
 * and the backslash (so that a word echoed between quotes cannot be confused with them); with
 * POOL_ESC_CUT at most POOL_ECHO_MAX bytes are written, "..." marking a cut.
 */
#define POOL_ESC_QUOTES 0x1u
#define POOL_ESC_CUT    0x2u
void pool__put_escaped(FILE *out, const char *s, size_t len, unsigned int how);

/* A client's word in an error message: pool__put_escaped(QUOTES | CUT). */
static inline void pool__put_word(FILE *out, const char *w, size_t len)
{
	pool__put_escaped(out, w, len, POOL_ESC_QUOTES | POOL_ESC_CUT);
}

/* An error message around a client's word: `pre`, the word (pool__put_word()), `post`. */
void pool__word_error(FILE *out, const char *pre, const char *w, size_t len, const char *post);

/*
 * The Prometheus text exposition format (version 0.0.4): a label value escaped as it requires
 * (backslash, double quote and newline), and the `# HELP` and `# TYPE` lines of a family.
 */
void pool__prom_label(FILE *out, const char *v);
void pool__prom_family(FILE *out, const char *name, const char *type, const char *help);

#endif
