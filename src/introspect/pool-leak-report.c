/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The reports at exit. POOL_LEAK_REPORT: the objects still in use at exit, per pool and per
 * allocating site (a call stack), on stderr, from a view of the profile
 * (src/introspect/pool-profile-view.c), and the same as a heap profile in a file, for jeprof and
 * pprof (src/introspect/pool-profile-heap.c). POOL_STATS_ON_EXIT: `pools show` at exit.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/pool-int.h"
#include "debug/pool-symbols.h"
#include "introspect/pool-profile-dump.h"
#include "introspect/pool-profile-heap.h"

/*
 * The objects still in use at exit, per pool and per allocating site, on stderr, as jemalloc's
 * prof_leak and valgrind's leak summary print them: POOL_LEAK_REPORT=1 (text), =json, or =error
 * (text, and the process exits with status 1 when any object is in use, as jemalloc's
 * prof_leak_error does), and with heap:<path> (alone, or after one of those and a comma) a heap
 * profile of what is in use written to <path> ("%p" in it: the process id), which jeprof and
 * pprof read (jemalloc's prof_final writes one the same way). Read once by the constructor of
 * pool-dump.c (the one of
 * POOL_STATS_ON_EXIT, so that the static library links both or neither); the report runs from
 * an atexit() handler registered early, so after the program's own handlers (and so after most
 * of its cleanup), at exit() or a return from main(). Cached objects are free: each pool's
 * count is its exact number of objects handed out (used - cached), and a sampled object is
 * never cached (it lives in the profile's region until its free). Sites are exact under
 * `caller` debugging, estimated from the profile's samples otherwise (POOL_DEBUG=profile), and
 * absent without either.
 */
#define EXIT_WAIT_MS 1000

enum leak_mode { LEAK_OFF = 0, LEAK_TEXT, LEAK_JSON, LEAK_ERROR };
static enum leak_mode leak_mode;
static char *leak_heap_path;            /* heap:<path>, or NULL */

static void leak_text_site(FILE *out, const struct pool_profile_view *v,
                           const struct pool_view_site *s)
{
	const char *t = s->exact ? "" : "~";

	fprintf(out, "libpool:     %s%" PRIu64 " objects (%s%" PRIu64 " bytes): %s", t, s->objects,
	        t, s->bytes, s->sym);
	if (s->row.live)
		fprintf(out, " (%" PRIu64 " live sample%s, age ms %" PRIu64 "/%" PRIu64 "/%" PRIu64
		        ")", s->row.live, s->row.live == 1 ? "" : "s", s->row.age_min_ms,
		        pool__profile_age_avg(s), s->row.age_max_ms);
	else if (!s->row.depth && s->exact)
		fputs(" (callers past the table of caller debugging)", out);
	else if (!s->row.depth && v->sum.gen)
		/* a profile ran: too few bytes for its rate, or a pool it did not choose */
		fprintf(out, " (no live sample at one sample per %zu bytes%s: `pools profile on "
		        "rate 1 pool %s`, or POOL_DEBUG=profile=1 for every pool, samples every "
		        "allocation)", v->sum.rate, v->sum.chosen ? " in the pools chosen" : "",
		        s->row.name);
	else if (!s->row.depth)
		fputs(" (no live sample: POOL_DEBUG=profile or caller names the sites)", out);
	fputc('\n', out);
	pool__profile_site_lines(out, v, s, "libpool:       ", 0);
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
			        p->in_use * p->stride, p->exact || p->sampled_all ? "true" : "false");
			for (j = 0; list && j < n; j++) {
				fputs(j ? ", " : "", out);
				pool__profile_site_json(out, v, list[j]);
			}
			fputs("]}", out);
		} else {
			fprintf(out, "libpool:   pool '%s' (%zu bytes): %" PRIu64 " objects (%" PRIu64
			        " bytes) in use, by site (%s):\n", p->name, p->size, p->in_use,
			        p->in_use * p->stride, p->exact ? "exact, caller debugging" :
			        p->sampled_all ? "exact: every allocation sampled" :
			        "~: estimated from the profile's samples");
			for (j = 0; list && j < n; j++)
				leak_text_site(out, v, list[j]);
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

/* The heap profile of `v` into the file of heap:<path> ("%p" in it: the process id). */
static void leak_write_heap(const struct pool_profile_view *v)
{
	struct pool_view_site **list = malloc((v->nsites ? v->nsites : 1) * sizeof(*list));
	char path[4096];
	const char *p;
	size_t at = 0, i;
	FILE *f;
	int ret;

	for (p = leak_heap_path; *p && at + 24 < sizeof(path); p++) {
		if (p[0] == '%' && p[1] == 'p') {
			at += (size_t)snprintf(path + at, sizeof(path) - at, "%ld", (long)getpid());
			p++;
		} else {
			path[at++] = *p;
		}
	}
	path[at] = 0;
	if (!list) {
		fputs("libpool: POOL_LEAK_REPORT: not enough memory for the heap profile.\n", stderr);
		return;
	}
	for (i = 0; i < v->nsites; i++)
		list[i] = &v->sites[i];
	f = fopen(path, "we");
	if (!f) {
		fprintf(stderr, "libpool: POOL_LEAK_REPORT: cannot write the heap profile to %s: "
		        "%s\n", path, strerror(errno));
		free(list);
		return;
	}
	ret = pool__profile_write_heap(f, v, list, v->nsites);
	if (fclose(f) != 0 || ret < 0)
		fprintf(stderr, "libpool: POOL_LEAK_REPORT: the heap profile %s is incomplete: %s\n",
		        path, strerror(errno));
	else
		fprintf(stderr, "libpool: leak report: heap profile of process %ld in %s (jeprof or "
		        "google-pprof --text <program> %s)\n", (long)getpid(), path, path);
	free(list);
}

static void leak_report(void)
{
	struct pool_profile_view *v;
	uint64_t objs = 0;

	if (pool__exit_wait_list("POOL_LEAK_REPORT", "no report") != 0)
		return;
	/* jeprof and pprof name the heap profile's addresses themselves */
	v = pool__profile_view_make_named(1, leak_mode != LEAK_OFF);
	if (!v) {
		fputs("libpool: POOL_LEAK_REPORT: not enough memory for the report.\n", stderr);
		return;
	}
	/* the text names frames; the JSON gives their addresses too */
	v->addresses = leak_mode == LEAK_JSON;
	if (leak_mode != LEAK_OFF)
		objs = leak_write(stderr, v, leak_mode);
	if (leak_heap_path)
		leak_write_heap(v);
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
	const char *m = getenv("POOL_LEAK_REPORT"), *heap;
	size_t len;

	if (!m || !*m || !strcmp(m, "0"))
		return;
	/* heap:<path> last (a path may hold commas), after a mode and a comma or alone */
	heap = !strncmp(m, "heap:", 5) ? m : strstr(m, ",heap:");
	len = heap ? (size_t)(heap - m) : strlen(m);
	if (heap)
		heap += *heap == ',' ? 6 : 5;
	if (!len && heap)
		leak_mode = LEAK_OFF;
	else if (len == 1 && !strncmp(m, "1", len))
		leak_mode = LEAK_TEXT;
	else if (len == 4 && !strncmp(m, "json", len))
		leak_mode = LEAK_JSON;
	else if (len == 5 && !strncmp(m, "error", len))
		leak_mode = LEAK_ERROR;
	else
		heap = m = NULL;
	if (heap && (!*heap || !(leak_heap_path = strdup(heap))))
		m = NULL;
	if (!m) {
		fprintf(stderr, "libpool: ignoring POOL_LEAK_REPORT='%s' (expected 1, json or error, "
		        "or heap:<path> alone or after one of them and a comma)\n",
		        getenv("POOL_LEAK_REPORT"));
		return;
	}
	if (atexit(leak_report) != 0) {
		fputs("libpool: POOL_LEAK_REPORT: atexit() failed: no report at exit.\n", stderr);
		return;
	}
	if (leak_mode != LEAK_OFF)
		pool__sym_keep();
}

/* ------------------------------------------------------------------------------------------ */
/* POOL_STATS_ON_EXIT                                                                         */
/* ------------------------------------------------------------------------------------------ */

/*
 * `pools show` on stderr when the process exits, as jemalloc's MALLOC_CONF=stats_print:true and
 * MIMALLOC_SHOW_STATS=1 do. The variable is read once, by a constructor; unset, empty or "0":
 * off; "1": `pools show`; anything else: the arguments of `pools show` ("byusage detailed",
 * "json"...). The handler is registered with atexit(), so it runs at exit() or return from
 * main() (not at _exit() or on a signal), before the destructors (a POOL_DECLARE pool still
 * exists) and after the atexit() handlers the program registered itself; in a shared library
 * loaded with dlopen(), at dlclose(). What it prints is whatever exists then: pools destroyed
 * earlier are simply not there, and a forked child that calls exit() prints its own pools under
 * its own pid.
 */
static char stats_on_exit_args[POOL_CLI_LINE_MAX + 1];
static pool_dump_check_fn *stats_check;    /* pool-dump.c's, given at start */
static pool_dump_fn *stats_dump;

static void stats_on_exit(void)
{
	/* exit() from a pool_for_each() callback: the dump runs under the callback's hold */
	if (pool__exit_wait_list("POOL_STATS_ON_EXIT", "no statistics") != 0)
		return;
	fprintf(stderr, "libpool: pools at exit of process %ld (POOL_STATS_ON_EXIT=%s):\n",
	        (long)getpid(), stats_on_exit_args[0] ? stats_on_exit_args : "1");
	stats_dump(stderr, stats_on_exit_args, POOL_CLI_ADMIN);
	fflush(stderr);
}

/*
 * Are the arguments of POOL_STATS_ON_EXIT=`v` (in stats_on_exit_args) refused by `pools show`?
 * Then say so now, naming the variable, rather than at exit: 1. The parser's message, for a
 * CLI session, ends with "Try 'help'.", which an environment variable has no use for.
 */
static int stats_on_exit_refused(const char *v)
{
	char msg[512] = "";
	FILE *m = fmemopen(msg, sizeof(msg) - 1, "w");
	char *tail;
	int bad;

	if (!m)
		return 0;       /* no memory for the check: the dump at exit says what is wrong */
	bad = stats_check(m, stats_on_exit_args) < 0;
	fclose(m);
	if (!bad)
		return 0;
	msg[strcspn(msg, "\n")] = 0;
	tail = strstr(msg, " Try 'help'.");
	if (tail)
		*tail = 0;
	fprintf(stderr, "libpool: ignoring POOL_STATS_ON_EXIT='%s' (expected 1, or the arguments "
	        "of `pools show`): %s No statistics at exit.\n", v, msg);
	return 1;
}

void pool__stats_on_exit_init(pool_dump_check_fn *check, pool_dump_fn *dump)
{
	const char *v = getenv("POOL_STATS_ON_EXIT");

	stats_check = check;
	stats_dump = dump;
	if (!v || !*v || !strcmp(v, "0"))
		return;
	if (strlen(v) >= sizeof(stats_on_exit_args)) {
		fputs("libpool: POOL_STATS_ON_EXIT is longer than a command line (4096 bytes): "
		      "ignored.\n", stderr);
		return;
	}
	strcpy(stats_on_exit_args, strcmp(v, "1") ? v : "");
	if (stats_on_exit_refused(v))
		return;
	if (atexit(stats_on_exit) != 0)
		fputs("libpool: POOL_STATS_ON_EXIT: atexit() failed: no statistics at exit.\n",
		      stderr);
}
