/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * libpool: fixed-size object pools with thread-local caches over bucketed, self-locked shared
 * free lists, for event-driven servers on many threads.
 *
 * This header states each function's contract: its arguments, what it returns, its errors and
 * whether it is thread-safe. The manual tells the rest: libpool(7) for the design, one section 3
 * page per family (named after each comment below) for the details, doc/api.md for an overview.
 * Link with `pkg-config --cflags --libs libpool`. Every function is thread-safe unless its
 * comment says otherwise. Sizes are in bytes; a function that fails sets errno.
 *
 * Names. The API owns the pool_ and POOL_ names below; names that begin with pool__ or POOL__
 * are the library's internals (not API, never to be defined by a program). A program that has
 * pool_ names of its own (HAProxy defines pool_gc(), pool_flush(), struct pool_head, POOL_F_*)
 * includes <pool/libpool.h> instead, the same API under libpool_ and LIBPOOL_ names, which the
 * build makes from this header and the shared library exports too (libpool(7), "Programs with
 * their own pool_ names"). Either way, the library's calls to its own functions and the inline
 * functions' reads of its state never reach a program's definitions of the same names.
 */
#ifndef POOL_POOL_H
#define POOL_POOL_H

#include <stdio.h>
#include <string.h>
#include <pool/pool-t.h>
#include <pool/pool-inline.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * pool_debugging - the debugging flags in effect (POOL_DBG_*), an unsigned int that is not an
 * lvalue: change them with pool_parse_debugging(). A relaxed read, as the fast path's.
 */
#define pool_debugging POOL__DEBUGGING()

/*
 * pool_version - the version of the library loaded, "MAJOR.MINOR.PATCH"; compare it with
 * POOL_VERSION_STRING (the headers') to detect a program built against other headers. A static
 * string, never NULL. Cannot fail; async-signal-safe. See pool_version(3).
 */
POOL_API const char *pool_version(void);

/* Creating and destroying pools: pool_create(3) ------------------------------------------------ */

/* pool_create - pool_create_aligned(name, size, 0, flags). */
POOL_API struct pool_head *pool_create(const char *name, size_t size, unsigned int flags);

/*
 * pool_create_aligned - create a pool of `size`-byte objects, or with POOL_F_SHARED join a
 * compatible one (pool_create(3) gives the merge rule).
 *
 * `name`: 1 to POOL_NAME_MAX (31) bytes of [A-Za-z0-9_.-], copied. `size`: 1 to POOL_SIZE_MAX
 * (1 GiB), rounded up to 8 unless POOL_F_EXACT. `align`: 0 (16), or a power of two up to the
 * page size (below 16: 16). `flags`: POOL_F_SHARED, POOL_F_EXACT.
 * Returns the pool, or NULL with errno EINVAL (bad name, size 0, layout over 1 GiB, unknown
 * flags, bad alignment) or ENOMEM (no memory for the head). Serialised by a global lock.
 */
POOL_API struct pool_head *pool_create_aligned(const char *name, size_t size, size_t align,
                                               unsigned int flags);

/*
 * pool_destroy - drop one creator of `pool`; the last one drains every thread's cache of it,
 * gives its free objects back and retires the head. Call it when no other thread uses the pool.
 * Returns 0, or -1 with errno EBUSY (objects still handed out, or a thread stuck in its cache:
 * the pool stays usable) or EINVAL (NULL, or destroyed already). A use of a destroyed pool is
 * reported: see pool_create(3). May be called from a pool_for_each() callback, on any pool.
 */
POOL_API int pool_destroy(struct pool_head *pool);

/*
 * POOL_DECLARE(var, name, size) - declare `struct pool_head *var`, a POOL_F_SHARED pool created
 * before main() (after POOL_DEBUG was read); on failure the program prints why and exits with
 * status 1. At exit only the exiting thread's caches are flushed: the pool is never destroyed
 * then, since other threads may still use it (pool_create(3)).
 */
#define POOL_DECLARE(var, name, size)                                                  \
	struct pool_head *var;                                                          \
	__attribute__((constructor(201))) static void pool_declare_init_##var(void)    \
	{ var = pool__declare_create(name, size); }                                     \
	__attribute__((destructor(201))) static void pool_declare_exit_##var(void)     \
	{ pool__declare_destroy(var); }

/* Allocating and freeing: pool_alloc(3) -------------------------------------------------------- */


/*
 * pool_alloc_flags - one object of pool_object_size() bytes from `pool`. `flags`:
 * POOL_F_MUST_ZERO, POOL_F_NO_POISON, POOL_F_NO_FAIL. Returns the object, or NULL with errno
 * ENOMEM (the pool's limit, no memory, -dMfail), counted in `failed`. Inline: a pop from this
 * thread's cache (a magazine of pointers) and a count down of the profile's interval, no
 * atomic, no lock, no read of the object; debugging that needs the slow path empties the
 * thread's view of its caches instead of being tested here. `pool` is not checked there: NULL
 * faults; a destroyed pool is reported (pool_create(3)).
 */
POOL_INLINE void *pool_alloc_flags(struct pool_head *pool, unsigned int flags)
{
	const struct pool_head_ro *ro = (const struct pool_head_ro *)pool;
	struct pool_tcache *tc;
	void **top;
	void *obj;

	tc = POOL__TCACHE(ro);
	top = tc->top;
	if (POOL_UNLIKELY(top <= tc->base))
		return pool__alloc_call(pool, flags);
	/* the profile's next sample is due: the slow path takes it (counted already) */
	if (POOL_UNLIKELY(--tc->left < 0))
		return pool__alloc_call(pool, flags);
	obj = *--top;
	POOL__TC_TOP_SET(tc, top);
	/* a magazine never holds NULL: the caller's NULL check folds away on this path */
	if (!obj)
		__builtin_unreachable();
	if (flags & POOL_F_MUST_ZERO)
		memset(obj, 0, ro->size);
	return obj;
}

/* pool_alloc - pool_alloc_flags(pool, 0). */
POOL_INLINE void *pool_alloc(struct pool_head *pool)
{
	return pool_alloc_flags(pool, 0);
}

/* pool_zalloc - pool_alloc_flags(pool, POOL_F_MUST_ZERO): a zero-filled object, or NULL. */
POOL_INLINE void *pool_zalloc(struct pool_head *pool)
{
	return pool_alloc_flags(pool, POOL_F_MUST_ZERO);
}

/*
 * pool_free - give `ptr`, obtained from `pool` on any thread, back; NULL is a no-op. Inline: a
 * push onto this thread's cache (the object itself is not written), unless `ptr` lies in the
 * profile's region of sampled objects (a subtraction and a compare), whose free the slow path
 * sees. A free into the wrong pool or a double free is undefined unless `tag` or `uaf`
 * debugging is on, which then aborts with a report (pool_alloc(3)).
 */
POOL_INLINE void pool_free(struct pool_head *pool, void *ptr)
{
	const struct pool_head_ro *ro = (const struct pool_head_ro *)pool;
	struct pool_tcache *tc;
	void **top;

	if (POOL_UNLIKELY(!ptr))
		return;
	tc = POOL__TCACHE(ro);
	top = tc->top;
	if (POOL_UNLIKELY(POOL__SAMPLED(ptr) || top >= tc->end)) {
		pool__free_call(pool, ptr);
		return;
	}
	*top = ptr;
	POOL__TC_TOP_SET(tc, top + 1);
}

/*
 * pool_alloc_bulk - `n` objects into objs[0..n-1], all or nothing. Returns `n`, or 0 with errno
 * ENOMEM (none handed out, objs[] unspecified, one failure counted); 0 with errno unchanged for
 * a NULL pool or objs or n = 0. See pool_alloc(3).
 */
POOL_API size_t pool_alloc_bulk(struct pool_head *pool, void **objs, size_t n);

/*
 * pool_free_bulk - pool_free() for each of objs[0..n-1], NULL entries skipped; nothing for a
 * NULL pool or objs.
 */
POOL_API void pool_free_bulk(struct pool_head *pool, void **objs, size_t n);

/* Memory return: pool_gc(3) -------------------------------------------------------------------- */

/*
 * Memory comes back by itself (pool_gc(3)); these calls are for a program that knows better.
 * pool_flush - give every object of `pool`'s shared free lists back to the OS layer, whatever
 * its need (thread caches and objects in use untouched). NULL or destroyed: no-op.
 */
POOL_API void pool_flush(struct pool_head *pool);

/*
 * pool_gc - give back now every object of `pool`'s shared free lists but its reserve
 * (pool_set_reserve()), keeping no floor: its need becomes what is in use; then trim the OS
 * layer. NULL: every pool, and the profile's freed slots kept for its next samples; destroyed:
 * no-op. May take milliseconds: never on a hot path.
 */
POOL_API void pool_gc(struct pool_head *pool);

/*
 * pool_thread_flush - give the calling thread's cached objects of every pool back to the shared
 * free lists. The thread may go on using pools; threads that exit do it themselves.
 */
POOL_API void pool_thread_flush(void);

/*
 * pool_trim - pool_gc(NULL), whose trim asks the OS layer to give its free memory to the system;
 * with jemalloc also reads RLIMIT_AS again (call it after setrlimit()). Cannot fail.
 */
POOL_API void pool_trim(void);

/*
 * pool_release_run - the releaser thread's work (POOL_RELEASE=caller: from the event loop), one
 * bounded step; returns the ms until it next has work, 0: call again now. Cheap when idle.
 */
POOL_API unsigned int pool_release_run(void);

/* Limits, statistics, iteration: pool_get_stats(3); configuration: pool_configure(3) ----------- */

/*
 * pool_set_limit - cap the objects `pool` holds above its slabs (handed out, cached, shared) at
 * `max_objects` (0: none; any size_t is a cap, SIZE_MAX included). Past it, allocations fail
 * and are counted. Exact whenever it is set, from any thread: it only stores the cap, which the
 * reservations that follow obey; a cap below what the pool holds takes nothing back. A refill
 * takes at most max_objects / 64 from the slab tier (at least 1). Lock-free;
 * may be called from a pool_for_each() callback. Returns 0, or -1 with errno EINVAL (NULL or not
 * a live pool).
 */
POOL_API int pool_set_limit(struct pool_head *pool, size_t max_objects);

/*
 * pool_set_reserve - keep `objects` free objects of `pool` ready in its shared free lists (0:
 * none, the default): memory return (the releaser, pool_gc(), pool_trim()) and pool_flush() never
 * give back one that would leave fewer there; allocations may take them, as any free object.
 * HAProxy's `minavail` (the buffers a server needs to make progress when memory is short). It
 * allocates nothing: objects freed into the pool fill it (thread caches give theirs to the
 * shared lists when unused through a demand window, or at pool_thread_flush()). Under the
 * no-global or no-cache debugging options no object rests in the shared lists, so it keeps none;
 * pool_destroy() ignores it. Lock-free, from any thread; the next release or flush obeys. May be
 * called from a pool_for_each() callback. Returns 0, or -1 with errno EINVAL (NULL or not a live
 * pool).
 */
POOL_API int pool_set_reserve(struct pool_head *pool, size_t objects);

/*
 * pool_get_stats - fill the first `size` bytes at `st` (pass sizeof(*st)) with `pool`'s counters
 * (struct pool_stats), read without stopping any thread: each a value it had, not one atomic
 * snapshot. Nothing past `size` is written; fields this library does not know are 0. Returns 0,
 * or -1 with errno EINVAL (NULL pool or st, size 0, destroyed pool). Takes the thread registry
 * lock, never the hot path's.
 */
POOL_API int pool_get_stats(const struct pool_head *pool, struct pool_stats *st, size_t size);

/*
 * pool_get_os_stats - fill the first `size` bytes at `st` (pass sizeof(*st)) with the figures of
 * the OS layer (struct pool_os_stats), as pool_get_stats() does. Process-wide: asking jemalloc
 * refreshes its statistics, so call it once per report, not once per pool. Returns 0, or -1 with
 * errno EINVAL (NULL st, size 0).
 */
POOL_API int pool_get_os_stats(struct pool_os_stats *st, size_t size);

/* pool_name - the pool's name (its first creator's when merged); NULL for NULL or destroyed. */
POOL_API const char *pool_name(const struct pool_head *pool);

/* pool_object_size - usable bytes per object; 0 for NULL or destroyed. */
POOL_API size_t pool_object_size(const struct pool_head *pool);

/*
 * pool_for_each - call fn(pool, arg) for every pool that exists when it starts, in creation
 * order, until fn returns non-zero. It holds the pool list lock meanwhile (other threads'
 * creations, destructions, dumps, CLI commands and fork() wait): keep fn short. fn may call the
 * library back on its thread, pool_create() and pool_destroy() (of any pool) included; a pool it
 * creates is not visited, one it destroys is not visited afterwards. fn must return, and must
 * not wait for another thread that takes the pool list lock. NULL fn: nothing. See
 * pool_get_stats(3).
 */
POOL_API void pool_for_each(int (*fn)(struct pool_head *pool, void *arg), void *arg);

/*
 * pool_configure - set the process-wide defaults (struct pool_config; a 0 field keeps its value)
 * before the first pool exists. Returns 0, or -1 with errno EINVAL (NULL cfg, a value out of
 * range: nothing changed) or EBUSY (a pool exists).
 */
POOL_API int pool_configure(const struct pool_config *cfg);

/* pool_get_config - fill *cfg with the configuration in effect; NULL: no-op. */
POOL_API void pool_get_config(struct pool_config *cfg);

/* Debugging: pool_parse_debugging(3), doc/debugging.md ----------------------------------------- */

/*
 * pool_parse_debugging - change the debugging flags from a -dM string:
 * "[<poison byte>][,<option>[=<value>]]...", applied left to right, validated whole first.
 * Returns 0 when applied; 1 when it held `help` (the table went to stdout, nothing changed); -1
 * with errno EINVAL, nothing changed, for a bad word or value or a layout option (tag, caller,
 * uaf, backup, malloc) changing while a pool exists. `err`: NULL, or it receives NULL on success and on
 * -1 a malloc()ed message naming the bad word (NULL if that allocation failed).
 */
POOL_API int pool_parse_debugging(const char *str, char **err);

/* pool_debugging_help - print the options table ('*': in effect) and examples; NULL: no-op. */
POOL_API void pool_debugging_help(FILE *out);

/*
 * pool_debugging_show - print the options in effect on one line, as pool_parse_debugging()
 * takes them back; NULL: no-op.
 */
POOL_API void pool_debugging_show(FILE *out);

/* pool_debugging_poison_byte - the byte `poison` fills objects with (0..255). */
POOL_API unsigned int pool_debugging_poison_byte(void);

/* Topology: pool_topology(3), doc/tuning.md ---------------------------------------------------- */

/*
 * pool_topology - the machine as hwloc saw it (or HWLOC_XMLFILE, or sysconf() when hwloc fails)
 * and the defaults derived from it, loaded once. A process-lifetime structure, never NULL.
 */
POOL_API const struct pool_topology *pool_topology(void);

/*
 * pool_topology_bind_thread - bind the calling thread to one PU, round-robin over cores first.
 * Returns 0, or -1 with errno ENOTSUP (an XML topology), EINVAL (a PU outside the allowed CPUs),
 * EPERM (a sandbox) or ENOMEM, the thread left unbound.
 */
POOL_API int pool_topology_bind_thread(unsigned int index);

/* pool_topology_show - print the topology, the defaults and the configuration; NULL: no-op. */
POOL_API void pool_topology_show(FILE *out);

/* Introspection: pool_dump(3), pool_json_write_string(3), doc/pools-show.md -------------------- */

/*
 * pool_dump - write `pools show <args>` for every pool to `out`, as level admin sees it.
 * `args`: [byname|bysize|byusage] [detailed] [match <prefix>] [<max>] [json|prometheus], or
 * NULL. The pools are copied under the pool list lock; `out` is written after it. Returns 0, or
 * -1 with errno EINVAL (NULL out: nothing written; bad args: one error line), ENOMEM, or the
 * errno of a failed write. POOL_STATS_ON_EXIT prints it at exit (pool_dump(3)).
 */
POOL_API int pool_dump(FILE *out, const char *args);

/*
 * pool_json_write_string - write `s` to `out` as a JSON string literal, quotes included (RFC
 * 8259; ill-formed UTF-8 as \ufffd), under the stream's lock. Returns 0, or -1 with errno EINVAL
 * (NULL out or s: nothing written) or the errno of a failed write.
 */
POOL_API int pool_json_write_string(FILE *out, const char *s);

/* Allocation-site profile: pool_profile_start(3), doc/pools-show.md -------------------------- */

/*
 * pool_profile_start - start a new allocation-site profile, the previous one forgotten: each
 * thread samples one allocation per about `rate_bytes` bytes it allocates (0: the default,
 * POOL_PROFILE_RATE_DEF, 512 KiB as jemalloc's), with random intervals, and the profile counts
 * per allocating call stack and pool the sampled objects, those freed and those still live,
 * with their ages. Sampled objects live in a region of their own (reserved at the first start),
 * whose frees the inline pool_free() sends to the library; the inline fast path keeps running
 * (pool_profile_start(3)). Same as the -dM option profile=<rate_bytes>. Returns 0, or -1 with
 * errno EINVAL (rate_bytes over POOL_PROFILE_RATE_MAX, 1 TiB).
 */
POOL_API int pool_profile_start(size_t rate_bytes);

/*
 * pool_profile_stop - stop sampling; the figures stay for pool_profile_dump() until the next
 * pool_profile_start(). No-op when no profile runs. Cannot fail.
 */
POOL_API void pool_profile_stop(void);

/*
 * pool_profile_dump - write `pools profile <args>` to `out`, as level admin sees it: args [bysite|
 * bypool|byage|bybytes] [pool <name>] [<n>] [json|prometheus|heap|folded] (heap: for jeprof and
 * pprof), or NULL. Stops no thread. Returns 0, or -1 with errno EINVAL (NULL out: nothing
 * written; bad args: one error line), ENOENT (no pool of that name), ENOMEM, or the errno of a
 * failed write.
 */
POOL_API int pool_profile_dump(FILE *out, const char *args);

/* Command line: pool_cli_listen(3) ------------------------------------------------------------- */

/*
 * pool_cli_exec_level - run one command line as a session of `level` (enum pool_cli_level) and
 * write its answer to `out`; "help" lists the commands `level` may run (pool_cli_listen(3)).
 * Returns 0; -1 with errno, nothing changed and one error line: EINVAL (NULL line or out or a
 * bad level: nothing written; unknown command, bad arguments), EACCES (needs a higher level),
 * ENOENT (no pool of that name), ENOMEM, or a write's.
 */
POOL_API int pool_cli_exec_level(const char *line, FILE *out, enum pool_cli_level level);

/* pool_cli_exec - pool_cli_exec_level(line, out, POOL_CLI_ADMIN). */
POOL_API int pool_cli_exec(const char *line, FILE *out);

/*
 * pool_cli_listen_level - serve pool_cli_exec_level(..., `level`) on a UNIX stream socket at
 * `unix_path` of mode `mode` (0: 0600) from one background thread, until pool_cli_stop(); up to
 * POOL_CLI_MAX_LISTENERS sockets. Returns 0, or -1 with errno, nothing left behind: EINVAL,
 * ENAMETOOLONG, EBUSY (4 sockets served), EEXIST (not a socket there), EADDRINUSE (served), or
 * a system call's. The protocol and the limits on clients are in pool_cli_listen(3).
 */
POOL_API int pool_cli_listen_level(const char *unix_path, enum pool_cli_level level,
                                   unsigned int mode);

/* pool_cli_listen - pool_cli_listen_level(unix_path, POOL_CLI_OPERATOR, 0600). */
POOL_API int pool_cli_listen(const char *unix_path);

/*
 * pool_cli_stop - stop the server: join its thread, close its clients and sockets, remove the
 * socket files still ours. No-op when none runs; never from a command the server runs.
 */
POOL_API void pool_cli_stop(void);

/*
 * pool_cli_set_timeout_ms - close socket clients silent for `timeout_ms` (default
 * POOL_CLI_TIMEOUT_MS_DEF), at once for a running server too. Returns 0, or -1 with errno
 * EINVAL (0, or over POOL_CLI_TIMEOUT_MS_MAX).
 */
POOL_API int pool_cli_set_timeout_ms(unsigned int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* POOL_POOL_H */
