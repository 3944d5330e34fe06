/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * POOL_LEAK_REPORT: the objects still in use at exit, per pool and per allocating site, on
 * stderr, from a view of the profile (src/introspect/pool-profile-dump.c).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/pool-int.h"
#include "introspect/pool-profile-dump.h"

/*
 * The objects still in use at exit, per pool and per allocating site, on stderr, as jemalloc's
 * prof_leak and valgrind's leak summary print them: POOL_LEAK_REPORT=1 (text), =json, or =error
 * (text, and the process exits with status 1 when any object is in use, as jemalloc's
 * prof_leak_error does). Read once by the constructor of pool-dump.c (the one of
 * POOL_STATS_ON_EXIT, so that the static library links both or neither); the report runs from
 * an atexit() handler registered early, so after the program's own handlers (and so after most
 * of its cleanup), at exit() or a return from main(). Cached objects are free: each pool's
 * count is its exact number of objects handed out (used - cached), and the audit credits every
 * sampled object lying in a thread cache. Sites are exact under `caller` debugging, estimated
 * from the profile's samples otherwise (POOL_DEBUG=profile), and absent without either.
 */
#define EXIT_WAIT_MS 1000

enum leak_mode { LEAK_OFF = 0, LEAK_TEXT, LEAK_JSON, LEAK_ERROR };
static enum leak_mode leak_mode;

static void leak_text_site(FILE *out, const struct pool_view_site *s)
{
	const char *t = s->exact ? "" : "~";

	fprintf(out, "libpool:     %s%" PRIu64 " objects (%s%" PRIu64 " bytes): %s", t, s->objects,
	        t, s->bytes, s->sym);
	if (s->row.live)
		fprintf(out, " (%" PRIu64 " live sample%s, age ms %" PRIu64 "/%" PRIu64 "/%" PRIu64
		        ")", s->row.live, s->row.live == 1 ? "" : "s", s->row.age_min_ms, pool__profile_age_avg(s),
		        s->row.age_max_ms);
	else if (!s->row.site)
		fputs(s->exact ? " (callers past the table of caller debugging)" :
		      " (no live sample: POOL_DEBUG=profile or caller names the sites)", out);
	fputc('\n', out);
}

/* Write the report of `v` to `out` in `mode`; returns the objects in use. */
static uint64_t leak_write(FILE *out, struct pool_profile_view *v, enum leak_mode mode)
{
	uint64_t objs = 0, bytes = 0;
	size_t i, k, n, pools = 0;

	for (i = 0; i < v->npools; i++) {
		objs += v->pools[i].in_use;
		bytes += v->pools[i].in_use * v->pools[i].stride;
		pools += v->pools[i].in_use != 0;
	}
	if (mode == LEAK_JSON)
		fprintf(out, "{\"format\": 1, \"pid\": %ld, \"in_use\": %" PRIu64 ", \"in_use_bytes\": %"
		        PRIu64 ", \"pools\": [", (long)getpid(), objs, bytes);
	else if (objs)
		fprintf(out, "libpool: leak report at exit of process %ld: %" PRIu64 " objects (%" PRIu64
		        " bytes) in use in %zu pool%s (objects in thread caches are free: not "
		        "counted)\n", (long)getpid(), objs, bytes, pools, pools == 1 ? "" : "s");
	else
		fprintf(out, "libpool: leak report at exit of process %ld: no object in use\n",
		        (long)getpid());
	for (i = 0, k = 0; i < v->npools; i++) {
		const struct pool_view_pool *p = &v->pools[i];
		struct pool_view_site **list;
		size_t j;

		if (!p->in_use)
			continue;
		list = pool__profile_pool_sites(v, p, &n);
		if (mode == LEAK_JSON) {
			fputs(k++ ? ",\n  {\"name\": " : "\n  {\"name\": ", out);
			pool_json_write_string(out, p->name);
			fprintf(out, ", \"size\": %zu, \"in_use\": %" PRIu64 ", \"in_use_bytes\": %" PRIu64
			        ", \"exact\": %s, \"sites\": [", p->size, p->in_use,
			        p->in_use * p->stride, p->exact ? "true" : "false");
			for (j = 0; list && j < n; j++) {
				fputs(j ? ", " : "", out);
				pool__profile_site_json(out, v, list[j]);
			}
			fputs("]}", out);
		} else {
			fprintf(out, "libpool:   pool '%s' (%zu bytes): %" PRIu64 " objects (%" PRIu64
			        " bytes) in use, by site (%s):\n", p->name, p->size, p->in_use,
			        p->in_use * p->stride, p->exact ? "exact, caller debugging" :
			        "~: estimated from the profile's samples");
			for (j = 0; list && j < n; j++)
				leak_text_site(out, list[j]);
		}
		free(list);
	}
	if (mode == LEAK_JSON)
		fprintf(out, "%s]}\n", k ? "\n " : "");
	return objs;
}

int pool__exit_wait_list(const char *what, const char *nothing)
{
	struct timespec pause = { 0, 1000000 };
	int i;

	if (pool__lock_held(&pool__list_lock))
		return 0;
	for (i = 0; pool__lock_try(&pool__list_lock) != 0; i++) {
		if (i == EXIT_WAIT_MS) {
			fprintf(stderr, "libpool: %s: the pool list stayed locked for 1 s at exit: "
			        "%s.\n", what, nothing);
			return -1;
		}
		nanosleep(&pause, NULL);
	}
	pool__unlock(&pool__list_lock);
	return 0;
}

static void leak_report(void)
{
	struct pool_profile_view *v;
	uint64_t objs;

	if (pool__exit_wait_list("POOL_LEAK_REPORT", "no report") != 0)
		return;
	v = pool__profile_view_make(1);
	if (!v) {
		fputs("libpool: POOL_LEAK_REPORT: not enough memory for the report.\n", stderr);
		return;
	}
	objs = leak_write(stderr, v, leak_mode);
	pool__profile_view_free(v);
	fflush(stderr);
	if (leak_mode == LEAK_ERROR && objs) {
		fputs("libpool: POOL_LEAK_REPORT=error: exiting with status 1 (objects in use)\n",
		      stderr);
		fflush(NULL);
		_exit(1);
	}
}

void pool__leak_report_init(void)
{
	const char *m = getenv("POOL_LEAK_REPORT");

	if (!m || !*m || !strcmp(m, "0"))
		return;
	if (!strcmp(m, "1"))
		leak_mode = LEAK_TEXT;
	else if (!strcmp(m, "json"))
		leak_mode = LEAK_JSON;
	else if (!strcmp(m, "error"))
		leak_mode = LEAK_ERROR;
	else {
		fprintf(stderr, "libpool: ignoring POOL_LEAK_REPORT='%s' (expected 1, json or "
		        "error)\n", m);
		return;
	}
	if (atexit(leak_report) != 0)
		fputs("libpool: POOL_LEAK_REPORT: atexit() failed: no report at exit.\n", stderr);
}
