/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * src/pool-libpool.c - HAProxy's pool API on libpool (USE_LIBPOOL: contrib/haproxy/ of
 * libpool's tree puts this file there, and src/pool.c is left out of such a build).
 *
 * Written from include/haproxy/pool.h and from what the rest of HAProxy calls, not from
 * src/pool.c. The mapping:
 *   create_pool()          libpool_create(): MEM_F_SHARED and MEM_F_EXACT are libpool's
 *                          SHARED and EXACT, and libpool decides merging (same alignment,
 *                          sizes within 1% or 16 bytes); calls merged into one pool share one
 *                          head. A name becomes a libpool name (a character outside
 *                          [A-Za-z0-9_.-] becomes '_', at most 31 bytes).
 *   pool_destroy(),        libpool_destroy() once per call merged into the head;
 *   pool_destroy_all()     a pool with objects still in use stays (EBUSY)
 *   pool_alloc(), _free()  the inline functions of include/haproxy/pool-libpool.h
 *   pool_alloc_nocache()   libpool_alloc(): libpool has no per-call bypass of the caches
 *   limit, minavail        libpool_set_limit() and libpool_set_reserve() (what the releaser
 *                          never takes), given before this file's next allocation, memory
 *                          return or dump: HAProxy sets them on the buffer pool, then
 *                          preallocates through pool_alloc_nocache()
 *   pool_flush(), _gc()    libpool_flush(), libpool_gc(NULL); pool_gc() then trims the C
 *                          library's malloc as HAProxy does, when malloc() is the C
 *                          library's (the trim of libpool's jemalloc is libpool_gc()'s)
 *   pool_total_*()         sums of libpool_get_stats() over the pools
 *   show pools, SIGQUIT    libpool's `pools show` (its arguments: byname, bysize, byusage,
 *                          detailed, match <prefix>, <max>, json, prometheus), at the level
 *                          of the CLI session
 *   -dM<options>           libpool_parse_debugging(): libpool's words, a superset of
 *                          HAProxy 2.6's nine; POOL_DEBUG sets them before main()
 *   -vv                    libpool's versions and OS layer
 *   tune.fail-alloc        the percentage of libpool's `fail` option, set when the first
 *                          thread starts (after the start-up, which must not fail)
 *   no-memory-trimming     no trim of the C library's malloc
 *   memory return          in HAProxy's own threads: libpool runs with release=caller (no
 *                          thread of its own, so the process has nbthread threads and
 *                          cpu-map binds all of them) and a task calls libpool_release_run()
 *                          when it says it next has work; POOL_RELEASE=thread in the
 *                          environment keeps libpool's releaser thread instead
 */

#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <haproxy/api.h>
#include <haproxy/applet.h>
#include <haproxy/cfgparse.h>
#include <haproxy/chunk.h>
#include <haproxy/cli.h>
#include <haproxy/errors.h>
#include <haproxy/global.h>
#include <haproxy/init.h>
#include <haproxy/list.h>
#include <haproxy/pool.h>
#include <haproxy/stconn.h>
#include <haproxy/task.h>
#include <haproxy/thread.h>
#include <haproxy/ticks.h>
#include <haproxy/tools.h>

/* every head, in creation order; created and destroyed while HAProxy starts and stops */
static struct list pools = LIST_HEAD_INIT(pools);
static int fail_percent;           /* tune.fail-alloc, 0: unset */
static int no_malloc_trim;         /* no-memory-trimming */
static struct task *release_task;  /* calls libpool_release_run(), NULL: libpool's thread does */

/* libpool's name for the pool HAProxy calls <name>. */
static void libpool_name_of(char *out, const char *name)
{
	size_t i;

	if (!name || !*name)
		name = "unnamed";
	for (i = 0; name[i] && i < LIBPOOL_NAME_MAX; i++) {
		char c = name[i];

		out[i] = (isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-') ? c : '_';
	}
	out[i] = 0;
}

/* Gives libpool the <limit> and <minavail> HAProxy wrote into <pool>, when they changed. */
static void pool_sync(struct pool_head *pool)
{
	if (pool->limit != pool->lp_limit && libpool_set_limit(pool->lp, pool->limit) == 0)
		pool->lp_limit = pool->limit;
	if (pool->minavail != pool->lp_minavail &&
	    libpool_set_reserve(pool->lp, pool->minavail) == 0)
		pool->lp_minavail = pool->minavail;
}

static void pool_sync_all(void)
{
	struct pool_head *pool;

	list_for_each_entry(pool, &pools, list)
		pool_sync(pool);
}

struct pool_head *create_pool(char *name, unsigned int size, unsigned int flags)
{
	char lname[LIBPOOL_NAME_MAX + 1];
	struct libpool_head *lp;
	struct pool_head *pool;

	libpool_name_of(lname, name);
	lp = libpool_create(lname, size ? size : 1,
	                    ((flags & MEM_F_SHARED) ? LIBPOOL_F_SHARED : 0) |
	                    ((flags & MEM_F_EXACT) ? LIBPOOL_F_EXACT : 0));
	if (!lp)
		return NULL;
	list_for_each_entry(pool, &pools, list) {
		if (pool->lp == lp) {
			/* merged: libpool may have grown its objects to this call's size */
			pool->size = libpool_object_size(lp);
			pool->users++;
			return pool;
		}
	}
	pool = calloc(1, sizeof(*pool));
	if (!pool) {
		libpool_destroy(lp);
		errno = ENOMEM;
		return NULL;
	}
	pool->lp = lp;
	pool->size = libpool_object_size(lp);
	pool->flags = flags;
	pool->users = 1;
#ifdef HAPROXY_LIBPOOL_PLANT_UAF
	pool->planted = strcmp(lname, "buffer") == 0;
#endif
	LIST_APPEND(&pools, &pool->list);
	return pool;
}

void create_pool_callback(struct pool_head **ptr, char *name, unsigned int size)
{
	*ptr = create_pool(name, size, MEM_F_SHARED);
	if (!*ptr) {
		ha_alert("Cannot create pool '%s' of %u bytes on libpool: %s. Aborting.\n",
		         name, size, strerror(errno));
		exit(1);
	}
}

/* One creator of <pool> less: NULL once that is done, <pool> when objects are in use. */
void *pool_destroy(struct pool_head *pool)
{
	if (!pool)
		return NULL;
	if (libpool_destroy(pool->lp) != 0)
		return pool;
	if (--pool->users == 0) {
		LIST_DELETE(&pool->list);
		free(pool);
	}
	return NULL;
}

/* At exit: every pool whose objects all came back goes. */
void pool_destroy_all(void)
{
	struct pool_head *pool, *back;

	list_for_each_entry_safe(pool, back, &pools, list) {
		unsigned int n = pool->users;

		while (n-- && pool_destroy(pool) == NULL)
			;
	}
}

void *pool_alloc_nocache(struct pool_head *pool)
{
	pool_sync(pool);
	return libpool_alloc(pool->lp);
}

void pool_free_nocache(struct pool_head *pool, void *ptr)
{
	libpool_free(pool->lp, ptr);
}

void pool_flush(struct pool_head *pool)
{
	if (!pool)
		return;
	pool_sync(pool);
	libpool_flush(pool->lp);
}

/* 1 when malloc() is the C library's (not a preloaded jemalloc, tcmalloc or mimalloc). */
static int malloc_is_libc(void)
{
	static int known = -1;
	Dl_info dli;

	if (known < 0)
		known = dladdr((void *)malloc, &dli) && dli.dli_fname &&
		        strstr(dli.dli_fname, "/libc.so") != NULL;
	return known;
}

/* Memory return now, of every pool (<pool_ctx> is unused, as in HAProxy). */
void pool_gc(struct pool_head *pool_ctx)
{
	pool_sync_all();
	libpool_gc(NULL);
#if defined(HA_HAVE_MALLOC_TRIM)
	if (!no_malloc_trim && malloc_is_libc()) {
		/* the C library's trim holds its arenas' locks: alone, as HAProxy runs it */
		int isolated = thread_isolated();

		if (!isolated)
			thread_isolate();
		malloc_trim(0);
		if (!isolated)
			thread_release();
	}
#endif
}

struct pool_totals {
	unsigned long long allocated, used;   /* bytes */
	unsigned long long failed;
};

static int pool_add_totals(struct libpool_head *lp, void *arg)
{
	struct pool_totals *t = arg;
	struct libpool_stats st;

	if (libpool_get_stats(lp, &st, sizeof(st)) == 0) {
		t->allocated += (unsigned long long)st.allocated * st.size;
		t->used += (unsigned long long)st.used * st.size;
		t->failed += st.failed;
	}
	return 0;
}

static struct pool_totals pool_totals(void)
{
	struct pool_totals t = { 0, 0, 0 };

	libpool_for_each(pool_add_totals, &t);
	return t;
}

int pool_total_failures(void)
{
	return (int)pool_totals().failed;
}

unsigned long long pool_total_allocated(void)
{
	return pool_totals().allocated;
}

unsigned long long pool_total_used(void)
{
	return pool_totals().used;
}

/* libpool's `pools show` into trash, cut at its size (for callers of HAProxy's API). */
void dump_pools_to_trash(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	chunk_reset(&trash);
	pool_sync_all();
	if (!f)
		return;
	libpool_dump(f, NULL);
	if (fclose(f) == 0 && text)
		chunk_memcpy(&trash, text, len < trash.size ? len : trash.size);
	free(text);
}

void dump_pools(void)
{
	pool_sync_all();
	libpool_dump(stderr, NULL);
}

/*
 * -dM<str>: libpool's options. HAProxy's return values: 1 when applied, -1 with a text to print
 * for help (libpool printed its table on stdout), -2 with the error.
 */
int pool_parse_debugging(const char *str, char **err)
{
	char *lerr = NULL;
	int ret = libpool_parse_debugging(str, &lerr);

	if (ret == 0)
		return 1;
	if (ret == 1) {
		memprintf(err, "(-dM sets libpool's options, above; POOL_DEBUG sets them too)");
		return -1;
	}
	memprintf(err, "%s", lerr ? lerr : "invalid libpool debugging options");
	free(lerr);
	return -2;
}

/* `show pools [<libpool's pools show arguments>]` on the CLI. */

struct show_pools_ctx {
	char *text;       /* libpool's answer */
	size_t len, sent;
};

static int cli_parse_show_pools(char **args, char *payload, struct appctx *appctx, void *private)
{
	struct show_pools_ctx *ctx = applet_reserve_svcctx(appctx, sizeof(*ctx));
	enum libpool_cli_level level;
	char *line = NULL;
	FILE *f;
	int i;

	switch (appctx->cli_level & ACCESS_LVL_MASK) {
	case ACCESS_LVL_ADMIN: level = LIBPOOL_CLI_ADMIN; break;
	case ACCESS_LVL_OPER:  level = LIBPOOL_CLI_OPERATOR; break;
	default:               level = LIBPOOL_CLI_USER; break;
	}
	memprintf(&line, "pools show");
	for (i = 2; *args[i]; i++)
		memprintf(&line, "%s %s", line, args[i]);
	f = open_memstream(&ctx->text, &ctx->len);
	if (!line || !f) {
		if (f)
			fclose(f);
		free(line);
		return cli_err(appctx, "Out of memory.\n");
	}
	pool_sync_all();
	/* an error is one line of the answer */
	libpool_cli_exec_level(line, f, level);
	free(line);
	if (fclose(f) != 0)
		return cli_err(appctx, "Out of memory.\n");
	return 0;
}

static int cli_io_handler_show_pools(struct appctx *appctx)
{
	struct show_pools_ctx *ctx = appctx->svcctx;

	while (ctx->sent < ctx->len) {
		size_t n = ctx->len - ctx->sent;

		if (n > trash.size)
			n = trash.size;
		chunk_reset(&trash);
		chunk_memcpy(&trash, ctx->text + ctx->sent, n);
		if (applet_putchk(appctx, &trash) == -1)
			return 0;
		ctx->sent += n;
	}
	return 1;
}

static void cli_release_show_pools(struct appctx *appctx)
{
	struct show_pools_ctx *ctx = appctx->svcctx;

	free(ctx->text);
	ctx->text = NULL;
}

static struct cli_kw_list cli_kws = {{ },{
	{ { "show", "pools", NULL },
	  "show pools [opts]                       : libpool's pools show (byname|bysize|byusage, "
	  "detailed, match <pfx>, <max>, json|prometheus)",
	  cli_parse_show_pools, cli_io_handler_show_pools, cli_release_show_pools },
	{{},}
}};

INITCALL1(STG_REGISTER, cli_register_kw, &cli_kws);

/* -vv: the libpool built against and the one running, and where its objects come from. */
static void pools_register_build_options(void)
{
	struct libpool_os_stats os;
	char *ptr = NULL;

	memset(&os, 0, sizeof(os));
	libpool_get_os_stats(&os, sizeof(os));
	memprintf(&ptr, "Built with libpool version : %s\nRunning on libpool version : %s "
	          "(pools; their objects from %s)", LIBPOOL_VERSION_STRING, libpool_version(),
	          os.layer ? os.layer : "?");
	hap_register_build_opts(ptr, 1);
#if defined(HA_HAVE_MALLOC_TRIM)
	if (malloc_is_libc())
		hap_register_build_opts("Support for malloc_trim() is enabled.", 0);
#endif
}
INITCALL0(STG_REGISTER, pools_register_build_options);

/* tune.fail-alloc: libpool's `fail` percentage, once the start-up is over. */
static int pools_apply_fail_percent(void)
{
	char opt[32];

	if (tid == 0 && fail_percent && (libpool_debugging & LIBPOOL_DBG_FAIL)) {
		snprintf(opt, sizeof(opt), "fail=%d", fail_percent);
		if (libpool_parse_debugging(opt, NULL) != 0)
			ha_warning("tune.fail-alloc: libpool refused '%s'.\n", opt);
	}
	return 1;
}
REGISTER_PER_THREAD_INIT(pools_apply_fail_percent);

static int mem_parse_global_fail_alloc(char **args, int section_type, struct proxy *curpx,
                                       const struct proxy *defpx, const char *file, int line,
                                       char **err)
{
	if (too_many_args(1, args, err, NULL))
		return -1;
	fail_percent = atoi(args[1]);
	if (fail_percent < 0 || fail_percent > 100) {
		memprintf(err, "'%s' expects a percentage from 0 to 100.", args[0]);
		return -1;
	}
	return 0;
}

static int mem_parse_global_no_mem_trim(char **args, int section_type, struct proxy *curpx,
                                        const struct proxy *defpx, const char *file, int line,
                                        char **err)
{
	if (too_many_args(0, args, err, NULL))
		return -1;
	no_malloc_trim = 1;
	return 0;
}

static struct cfg_kw_list mem_cfg_kws = {ILH, {
	{ CFG_GLOBAL, "tune.fail-alloc", mem_parse_global_fail_alloc },
	{ CFG_GLOBAL, "no-memory-trimming", mem_parse_global_no_mem_trim },
	{ 0, NULL, NULL }
}};

INITCALL1(STG_REGISTER, cfg_register_keywords, &mem_cfg_kws);

/*
 * Memory return from HAProxy's threads. Before the first pool exists (STG_PREPARE), libpool is
 * told that the program runs its releaser's work (release=caller), unless POOL_RELEASE in the
 * environment chose; once the configuration is checked, a task does that work and sleeps as
 * long as libpool_release_run() says it has none (up to a demand window, 10 s by default).
 */
static void pools_release_by_task(void)
{
	struct libpool_config cfg = { .release = LIBPOOL_RELEASE_CALLER };

	if (!getenv("POOL_RELEASE") && libpool_configure(&cfg) != 0)
		ha_warning("libpool: memory return stays on libpool's thread: %s.\n", strerror(errno));
}
INITCALL0(STG_PREPARE, pools_release_by_task);

static struct task *pools_release(struct task *t, void *ctx, unsigned int state)
{
	unsigned int ms = libpool_release_run();

	/* 0: more work now: back in 1 ms, after the tasks that wait meanwhile */
	t->expire = tick_add(now_ms, MS_TO_TICKS(ms ? ms : 1));
	return t;
}

static int pools_start_release_task(void)
{
	struct libpool_config cfg;

	libpool_get_config(&cfg);
	if (cfg.release != LIBPOOL_RELEASE_CALLER)
		return ERR_NONE;
	release_task = task_new_anywhere();
	if (!release_task) {
		ha_alert("libpool: out of memory for the memory return task.\n");
		return ERR_ALERT | ERR_FATAL;
	}
	release_task->process = pools_release;
	task_wakeup(release_task, TASK_WOKEN_INIT);
	return ERR_NONE;
}
REGISTER_POST_CHECK(pools_start_release_task);

static void pools_stop_release_task(void)
{
	task_destroy(release_task);
	release_task = NULL;
}
REGISTER_POST_DEINIT(pools_stop_release_task);
