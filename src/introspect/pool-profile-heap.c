/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The profile in the formats of the tools users already have, so that a heap profile of a
 * program on libpool is read, drawn and compared as one of jemalloc or gperftools would be.
 *
 * 1. The heap profile (`pools profile heap`, pool_profile_dump(out, "heap")): the text format
 *    of gperftools' heap profiler, which gperftools' pprof (Debian's google-pprof) and
 *    jemalloc's jeprof read, and Go's pprof too:
 *
 *        heap profile: <objects>: <bytes> [<alloc. objects>: <alloc. bytes>] @ heapprofile/<rate>
 *        <objects>: <bytes> [<alloc. objects>: <alloc. bytes>] @ 0x<frame> 0x<frame> ...
 *        ...
 *
 *        MAPPED_LIBRARIES:
 *        <the process's /proc/self/maps>
 *
 *    A line per (stack, pool) row: its objects and bytes in use now, then the allocations it
 *    made since the profile started, then its frames, innermost first, return addresses as the
 *    tools expect (they subtract one to find the call, but for the first frame, which they name
 *    as given: so the first is an address of the function that called pool_alloc(), outside
 *    libpool's inline code, pool__sym_leaf_pc()). The figures are the profile's own
 *    estimates, the ones `pools profile` prints (pool-profile-view.c), so the tools and the
 *    library say the same: the type "heapprofile" tells them not to scale the figures again,
 *    as they would scale raw samples of type "heap_v2" (jemalloc's, which carry no exact
 *    count); the number after it is the profile's sampling interval in bytes, for the reader
 *    (the tools read and ignore it). Bytes are objects times the pool's stride, as everywhere
 *    in libpool. The mappings let the tools find each address's object file and name it
 *    (static functions too, with addr2line and nm). The rows without a stack ("[unsampled]",
 *    "[other]") are left out: the tools could not place them.
 * 2. Folded stacks (`pools profile folded`): a line per stack, its functions from the root
 *    (main, or a thread's start) down to the allocating function separated by ';', a space and
 *    the live bytes: the input of Brendan Gregg's flamegraph.pl and of speedscope, and what
 *    pool-httpd's page draws. Inlined functions are frames of their own; identical lines are
 *    summed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "introspect/pool-profile-heap.h"
#include "debug/pool-symbols.h"
#include "introspect/pool-text.h"

/* ------------------------------------------------------------------------------------------ */
/* The heap profile                                                                           */
/* ------------------------------------------------------------------------------------------ */

static uint64_t stride_of(const struct pool_view_site *s)
{
	return s->pool ? s->pool->stride : s->row.size;
}

/* Copy the process's mappings to `out`: 0, or -1 with errno. */
static int write_maps(FILE *out)
{
	FILE *maps = fopen("/proc/self/maps", "re");
	char buf[4096];
	size_t got;
	int err;

	if (!maps)
		return -1;
	while ((got = fread(buf, 1, sizeof(buf), maps)) > 0)
		fwrite(buf, 1, got, out);
	err = ferror(maps) ? (errno ? errno : EIO) : 0;
	fclose(maps);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

int pool__profile_write_heap(FILE *out, const struct pool_profile_view *v,
                             struct pool_view_site *const *list, size_t n)
{
	uint64_t objs = 0, bytes = 0, aobjs = 0, abytes = 0;
	size_t i;
	unsigned int k;

	for (i = 0; i < n; i++) {
		const struct pool_view_site *s = list[i];
		uint64_t a = pool__profile_site_allocated(s);

		if (!s->row.depth)
			continue;
		objs += s->objects;
		bytes += s->bytes;
		aobjs += a;
		abytes += a * stride_of(s);
	}
	fprintf(out, "heap profile: %6" PRIu64 ": %8" PRIu64 " [%6" PRIu64 ": %8" PRIu64
	        "] @ heapprofile/%zu\n", objs, bytes, aobjs, abytes, v->sum.rate);
	/* libdw places each leaf in the caller of pool_alloc() (pool__sym_leaf_pc()) */
	pool__sym_begin(0);
	for (i = 0; i < n; i++) {
		const struct pool_view_site *s = list[i];
		uint64_t a = pool__profile_site_allocated(s);

		if (!s->row.depth || (!s->objects && !a))
			continue;
		fprintf(out, "%6" PRIu64 ": %8" PRIu64 " [%6" PRIu64 ": %8" PRIu64 "] @", s->objects,
		        s->bytes, a, a * stride_of(s));
		for (k = 0; k < s->row.depth; k++)
			fprintf(out, " %#018" PRIxPTR,
			        k ? s->row.frames[k] : pool__sym_leaf_pc(s->row.frames[k]));
		fputc('\n', out);
	}
	pool__sym_end();
	fputs("\nMAPPED_LIBRARIES:\n", out);
	if (write_maps(out) < 0) {
		int err = errno;

		fprintf(out, "Cannot read /proc/self/maps (%s): the heap profile needs the "
		        "process's mappings.\n", strerror(err));
		errno = err;
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Folded stacks                                                                              */
/* ------------------------------------------------------------------------------------------ */

/* Append `s` to buf, the characters that separate frames or lines replaced. */
static void append_frame(char *buf, size_t len, size_t *at, const char *s)
{
	for (; *s && *at + 1 < len; s++)
		buf[(*at)++] = *s == ';' || *s == '\n' ? '_' : *s;
	buf[*at] = 0;
}

size_t pool__profile_folded(char *buf, size_t len, const struct pool_profile_view *v,
                            const struct pool_view_site *s, unsigned int how)
{
	const struct pool_sym *f[POOL_VIEW_FRAMES_MAX];
	size_t n = pool__profile_site_frames(v, s, f, NULL, POOL_VIEW_FRAMES_MAX), at = 0, i;
	char name[320];

	if (!len)
		return 0;
	buf[0] = 0;
	if (!s->row.depth) {
		snprintf(buf, len, "%s%s%s", s->row.pool ? "[unsampled " : "[other",
		         s->row.pool ? s->row.name : "", "]");
		return strlen(buf);
	}
	for (i = n; i-- > 0;) {
		size_t mark = at;

		pool__sym_format(name, sizeof(name), f[i], POOL_SYM_FUNCTION);
		if (i + 1 < n && at + 1 < len) {
			buf[at++] = ';';
			buf[at] = 0;
		}
		append_frame(buf, len, &at, name);
		if ((how & POOL_FOLD_OFFSETS) && !f[i]->inlined && f[i]->function[0]) {
			snprintf(name, sizeof(name), "+%#" PRIxPTR, f[i]->offset);
			append_frame(buf, len, &at, name);
		}
		/* a frame cut short is left out whole: the line stays a stack */
		if (at + 1 == len) {
			buf[mark] = 0;
			return mark;
		}
	}
	return at;
}

struct folded {
	char *stack;
	uint64_t bytes;
	size_t order;
};

static int cmp_folded(const void *a, const void *b)
{
	const struct folded *x = a, *y = b;
	int c = strcmp(x->stack, y->stack);

	return c ? c : (x->order > y->order) - (x->order < y->order);
}

static int cmp_order(const void *a, const void *b)
{
	const struct folded *x = a, *y = b;

	return (x->order > y->order) - (x->order < y->order);
}

int pool__profile_write_folded(FILE *out, const struct pool_profile_view *v,
                               struct pool_view_site *const *list, size_t n)
{
	struct folded *lines = pool__cli_calloc(n ? n : 1, sizeof(*lines));
	char *buf = pool__cli_malloc(POOL_FOLD_MAX);
	size_t i, k = 0, m;
	int ret = -1;

	if (!lines || !buf)
		goto out;
	for (i = 0; i < n; i++) {
		if (!list[i]->bytes)
			continue;
		pool__profile_folded(buf, POOL_FOLD_MAX, v, list[i], 0);
		lines[k].stack = pool__cli_strndup(buf, strlen(buf));
		if (!lines[k].stack)
			goto out;
		lines[k].bytes = list[i]->bytes;
		lines[k].order = k;
		k++;
	}
	/* identical lines (stacks that differ only in lines of the same functions) summed */
	qsort(lines, k, sizeof(*lines), cmp_folded);
	for (i = 0, m = 0; i < k; i++) {
		if (m && !strcmp(lines[m - 1].stack, lines[i].stack)) {
			lines[m - 1].bytes += lines[i].bytes;
			free(lines[i].stack);
			continue;
		}
		lines[m++] = lines[i];
	}
	qsort(lines, m, sizeof(*lines), cmp_order);
	for (i = 0; i < m; i++)
		fprintf(out, "%s %" PRIu64 "\n", lines[i].stack, lines[i].bytes);
	k = m;
	ret = 0;
out:
	for (i = 0; lines && i < k; i++)
		free(lines[i].stack);
	free(lines);
	free(buf);
	if (ret < 0) {
		fputs("Not enough memory for the profile.\n", out);
		errno = ENOMEM;
	}
	return ret;
}
