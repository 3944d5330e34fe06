/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The names of code addresses, for every report of the library (the essay at the top of
 * pool-symbols.c). Private header. Two symbolizers:
 *   - pool__symbolize(): one lookup with dladdr(3), no allocation; for the crash report
 *     (pool-report.c), which may run in a signal handler on a corrupted heap, and as the
 *     fallback of the other;
 *   - pool__sym_frames(): elfutils' libdw, with file and line where debugging information
 *     exists, static functions and inlined functions included; for the reports written in
 *     ordinary context (the profile's outputs, the leak report, the failure report when memory
 *     is there). It allocates (libdw's view of the process, kept until pool__sym_release()),
 *     takes a lock, and is never called on the allocation path.
 */
#ifndef POOL_SRC_POOL_SYMBOLS_H
#define POOL_SRC_POOL_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

/*
 * The crash report's symbolizer: `addr` into buf[0..len) (always NUL-terminated, cut to
 * `len`), looked up once with dladdr(3). By default, as the report writes it: "symbol+0xoff
 * (file)", or "path(+0xoff)" for an address without a dynamic symbol (a static function: what
 * backtrace_symbols() writes, for addr2line), or the bare address ("(unknown)" for NULL). With
 * POOL_SYM_SHORT: "symbol+0xoff", or "file+0xoff" (the file's last path component), or the
 * bare address. Not async-signal-safe (dladdr(3): see pool-report.h). Thread-safe; allocates
 * nothing.
 */
#define POOL_SYM_SHORT 0x1u
void pool__symbolize(char *buf, size_t len, const void *addr, unsigned int how);

/* One frame of a stack as the reports name it. */
struct pool_sym {
	char function[128];             /* "" when unknown */
	char file[64];                  /* source file, last path component; "" when unknown */
	char module[64];                /* object file, last path component; "" when unknown */
	uintptr_t offset;               /* from the start of the function (a frame that is not
	                                   inlined), else from the module's load address */
	unsigned int line;              /* 0 when unknown */
	unsigned char inlined;          /* a function inlined where the next frame calls it */
};

/*
 * A session of the libdw symbolizer, around the lookups of one report: takes its lock (with
 * `try_only`, only tries it: -1 when held, the caller then names frames with
 * pool__symbolize()), and makes libdw's view of the process (its mappings, /proc/self/maps)
 * at the first session, or again when objects were loaded or unloaded since (dl_iterate_phdr's
 * counts). Returns 0; when libdw cannot work (no memory, no /proc), the session still opens and
 * pool__sym_frames() answers from dladdr(3).
 */
int pool__sym_begin(int try_only);
void pool__sym_end(void);

/*
 * The end of a report or view, after its last session: libdw's view of the process is freed
 * and libdw unloaded (the next session loads and makes them again). Its callers keep them
 * while a profile runs, whose views come again, and release them when it stops. Waits for a session in progress. Never under a lock of
 * libpool's: it may dlclose(3), which takes the dynamic loader's lock.
 */
void pool__sym_release(void);

/*
 * The frames at `pc`, a return address of a stack (so the call is at pc - 1), innermost
 * first: the functions inlined there (each `inlined`, its file and line those of the code
 * inside it), then the function that contains `pc` (offset from its start, file and line of
 * the call). Frames of libpool's inline functions (include/pool/pool.h) are left out. At most
 * `max` (>= 1) into out[]; returns how many (1 at least: an unknown address is a frame with its
 * module or nothing but its offset). Inside a session.
 */
unsigned int pool__sym_frames(uintptr_t pc, struct pool_sym *out, unsigned int max);

/*
 * For the leaf of a stack that a tool names itself (the heap profile, whose first frame jeprof
 * and pprof name as given, without subtracting one): `pc`, the return address of the call into
 * libpool, when it lies in code of the program's function; when it lies in code of libpool's
 * inline functions (pool_alloc() and what it expands to, inlined there: the tools would name
 * them), an address of the function around them outside their code (just before or just after
 * it), so that the tools name the caller of pool_alloc(). `pc` itself when libdw cannot tell.
 * Inside a session.
 */
uintptr_t pool__sym_leaf_pc(uintptr_t pc);

/*
 * A frame as text into buf[0..len): "function+0xoff (file:line)", "function (file:line,
 * inlined)", "function+0xoff (module)" without line information, "module+0xoff" without a
 * function, or "0xaddr". With POOL_SYM_FUNCTION, the function alone ("module+0xoff" or "0xaddr"
 * when unknown): what folded stacks and labels use.
 */
#define POOL_SYM_FUNCTION 0x2u
void pool__sym_format(char *buf, size_t len, const struct pool_sym *s, unsigned int how);

/* One address as one line: the frames of pc joined by " <- ", in a session of its own. */
void pool__sym_name(char *buf, size_t len, uintptr_t pc, unsigned int how);

/*
 * The soname pool__sym_begin() loads libdw from (dlopen(3)), the first time a report needs
 * names: "libdw.so.1". libpool does not link libdw: a process that writes no such report never
 * loads it, and one where it cannot be loaded names frames with dladdr(3). Internal tests point
 * it at a name that does not exist before the first report, to check that fallback; nothing
 * else writes it.
 */
extern const char *pool__libdw_soname;

/*
 * A report at exit is armed (POOL_LEAK_REPORT): load libdw now, from the library's constructor,
 * and keep it loaded through the library's end, where the report runs and nothing can be
 * loaded any more (sym_unload() in pool-symbols.c). 0.42 MiB resident and 0.5 ms of start-up,
 * only in such a process; when libdw cannot be loaded, the report names frames with dladdr(3).
 */
void pool__sym_keep(void);

/*
 * The fork() child: when a report of another thread held the symbolizer at the fork(), that
 * thread does not exist here; its lock is made anew and libdw's view, perhaps half changed, is
 * dropped (its memory stays, as the parent's copy), to be made again at the next report.
 * fork() does not wait for a report: it may take a while (libdw reading debugging information).
 */
void pool__sym_fork_child(void);

#endif
