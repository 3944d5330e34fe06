/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Text helpers of the introspection layer, shared by src/introspect/pool-dump.c and src/introspect/pool-cli.c (and,
 * through the public pool_json_write_string(), by the tools):
 *   - the one JSON string writer of the project (RFC 8259 escaping, invalid UTF-8 replaced);
 *   - the tokenizer of command lines and the lookup of words in a word table, and whether a word
 *     names a pool (any of its creators' names);
 *   - the escaper that keeps client bytes echoed in an error answer on one printable line.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "introspect/pool-text.h"

/* ------------------------------------------------------------------------------------------ */
/* JSON strings                                                                               */
/* ------------------------------------------------------------------------------------------ */

/*
 * The bytes at `p` (NUL-terminated) as UTF-8. Returns the length (2..4) of a well-formed
 * sequence (RFC 3629 section 4, the Unicode Standard's table 3-7 "Well-Formed UTF-8 Byte
 * Sequences": no overlong form, no surrogate, nothing above U+10FFFF), or 0 and sets *bad to the
 * length (1..3) of the maximal subpart of an ill-formed one: its longest prefix that could still
 * begin a well-formed sequence, which the Unicode Standard (section 3.9, "U+FFFD Substitution of
 * Maximal Subparts") replaces with one U+FFFD. Python's bytes.decode("utf-8", "replace") and the
 * WHATWG Encoding Standard decode the same way, which the tests use as the oracle.
 */
static size_t utf8_sequence(const unsigned char *p, size_t *bad)
{
	unsigned char lo = 0x80, hi = 0xbf;   /* range of the second byte */
	size_t n, i;

	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		if (p[0] == 0xe0)
			lo = 0xa0;   /* below: overlong */
		else if (p[0] == 0xed)
			hi = 0x9f;   /* above: UTF-16 surrogates */
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		if (p[0] == 0xf0)
			lo = 0x90;   /* below: overlong */
		else if (p[0] == 0xf4)
			hi = 0x8f;   /* above: past U+10FFFF */
	} else {
		*bad = 1;    /* 0x80..0xc1 (continuation, overlong lead) or 0xf5..0xff */
		return 0;
	}
	for (i = 1; i < n; i++) {
		/* the NUL that ends the string is out of every range: the scan stops there */
		if (p[i] < lo || p[i] > hi) {
			*bad = i;
			return 0;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	return n;
}

POOL_API int pool_json_write_string(FILE *out, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s, *run;
	int saved = errno, err = 0;

	if (!out || !s) {
		errno = EINVAL;
		return -1;
	}
	flockfile(out);
	errno = 0;
	if (putc_unlocked('"', out) == EOF)
		goto fail;
	run = p;
	while (*p) {
		unsigned char c = *p;
		char esc[7] = { '\\', 0 };
		size_t n = 1, bad = 0, elen = 2;

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			p++;
			continue;
		}
		if (c >= 0x80) {
			n = utf8_sequence(p, &bad);
			/*
			 * U+2028 and U+2029 are valid in JSON but end a line in JavaScript before
			 * ES2019: escaped, a string stays safe inside a script.
			 */
			if (n == 3 && c == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
				memcpy(esc + 1, p[2] == 0xa8 ? "u2028" : "u2029", 5);
				elen = 6;
			} else if (n) {
				p += n;
				continue;
			} else {
				memcpy(esc + 1, "ufffd", 5);
				elen = 6;
				n = bad;
			}
		} else if (c == '"' || c == '\\') {
			esc[1] = (char)c;
		} else if (c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t') {
			esc[1] = c == '\b' ? 'b' : c == '\f' ? 'f' : c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
		} else {
			/* the other control characters and DEL */
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			elen = 6;
		}
		if (p > run && fwrite_unlocked(run, 1, (size_t)(p - run), out) != (size_t)(p - run))
			goto fail;
		if (fwrite_unlocked(esc, 1, elen, out) != elen)
			goto fail;
		p += n;
		run = p;
	}
	if (p > run && fwrite_unlocked(run, 1, (size_t)(p - run), out) != (size_t)(p - run))
		goto fail;
	if (putc_unlocked('"', out) == EOF)
		goto fail;
	funlockfile(out);
	errno = saved;
	return 0;

fail:
	err = errno ? errno : EIO;
	funlockfile(out);
	errno = err;
	return -1;
}

/* ------------------------------------------------------------------------------------------ */
/* Words                                                                                      */
/* ------------------------------------------------------------------------------------------ */

const char *pool__next_word(const char **p, size_t *len)
{
	const char *s = *p, *w;

	while (*s && pool__is_blank(*s))
		s++;
	if (!*s) {
		*p = s;
		return NULL;
	}
	w = s;
	while (*s && !pool__is_blank(*s))
		s++;
	*len = (size_t)(s - w);
	*p = s;
	return w;
}

const char *pool__rest_of_line(const char *p, size_t *len)
{
	size_t n;

	while (*p && pool__is_blank(*p))
		p++;
	n = strlen(p);
	while (n && pool__is_blank(p[n - 1]))
		n--;
	*len = n;
	return p;
}

int pool__word_is(const char *w, size_t len, const char *lit)
{
	return strlen(lit) == len && memcmp(w, lit, len) == 0;
}

int pool__pool_named(const struct pool_head *pool, const char *w, size_t len, int prefix)
{
	unsigned int i;

	if (prefix ? !strncmp(pool->name, w, len) : pool__word_is(w, len, pool->name))
		return 1;
	for (i = 1; i < pool->creators; i++)
		if (prefix ? !strncmp(pool->creator[i].name, w, len) :
		             pool__word_is(w, len, pool->creator[i].name))
			return 1;
	return 0;
}

const struct pool_word *pool__word_find(const struct pool_word *table, size_t n, const char *w,
                                        size_t len)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pool__word_is(w, len, table[i].word))
			return &table[i];
	return NULL;
}

void pool__put_escaped(FILE *out, const char *s, size_t len, unsigned int how)
{
	size_t i, n = (how & POOL_ESC_CUT) && len > POOL_ECHO_MAX ? POOL_ECHO_MAX : len;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c > 0x7e || ((how & POOL_ESC_QUOTES) && (c == '\'' || c == '\\')))
			fprintf(out, "\\x%02x", c);
		else
			fputc(c, out);
	}
	if (n < len)
		fputs("...", out);
}

void pool__word_error(FILE *out, const char *pre, const char *w, size_t len, const char *post)
{
	fputs(pre, out);
	pool__put_word(out, w, len);
	fputs(post, out);
}

void pool__prom_label(FILE *out, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(out, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", out);
		else
			fputc(*v, out);
	}
}

void pool__prom_family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}
