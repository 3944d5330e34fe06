/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The names of code addresses: every report of the library names the code that called it.
 *
 * 1. Two symbolizers. The crash report runs in a SIGSEGV handler on what may be a corrupted
 *    heap: it names callers with one dladdr(3) lookup each (pool__symbolize()), which allocates
 *    nothing and reads only the dynamic symbol table, so a static function of the program is a
 *    file and an offset there. Every other report (the profile's outputs, the leak report at
 *    exit, the failure report when memory is there) runs in ordinary context and names frames
 *    with elfutils' libdw (pool__sym_frames()): the ELF symbol table (.symtab: static functions
 *    too, without -rdynamic), file and line from the DWARF line table, and the functions
 *    inlined at an address from its DWARF scopes (what `addr2line -f -i` prints), wherever the
 *    object or its separate debug file (/usr/lib/debug, by build-id) has them.
 * 2. When. Never on the allocation path: a sampled allocation keeps addresses (pool-stack.c),
 *    and names come when a report is written, so that a profile costs the same with or without
 *    debugging information.
 * 3. libdw's view of the process (a Dwfl), made from /proc/self/maps, is made again when
 *    dl_iterate_phdr(3)'s counts of objects loaded and unloaded changed since, so that no
 *    address is named after an object unloaded. Its tables are large (17 MB resident in a
 *    server), so a report or view ends with pool__sym_release(): the view and libdw go, but
 *    while a profile runs, whose views come again (a live page every second: a view that makes
 *    them anew takes about 90 ms of CPU for a small program, 0.5 ms with them).
 * 4. Return addresses. A frame of a stack is the address the call returns to; the call is the
 *    instruction before it, so the lookups use pc - 1 (the return address of a call that ends a
 *    function belongs to the next function), and the offset printed is that of the return
 *    address, as the crash report prints it.
 * 5. Loaded when needed. libpool does not link libdw: a session dlopen()s it (load_libdw()),
 *    so that a process that writes no such report does not carry it and what it loads (0.42
 *    MiB resident, 0.5 ms of start-up), and one where it cannot be loaded names every frame
 *    with dladdr(3); so does a report written while the library is unloaded (sym_unload()),
 *    unless a report at exit armed at start loaded it then and keeps it (pool__sym_keep()).
 *
 * Concurrency: one lock for the view; a session holds it across the lookups of a report (libdw
 * is not thread-safe on one Dwfl). A leaf lock: nothing of libpool is called under it but the
 * OS layer's trim of malloc() (pool__malloc_trim()).
 */
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <link.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/pool-assert.h"
#include "base/pool-lock.h"
#include "base/pool-util.h"
#include "debug/pool-symbols.h"
#include "os/pool-malloc.h"

/* The headers of libpool's inline functions, whose frames are left out of a stack. */
#define OWN_HEADER "/pool/pool.h"
#define OWN_INLINE_HEADER "/pool/pool-inline.h"

/*
 * libdw's functions, looked up in the library that pool__libdw_soname names when the first
 * report needs names (load_libdw()).
 */
#define LIBDW_FUNCTIONS(F, v)                                                                   \
	F(v, dwarf_attr) F(v, dwarf_attr_integrate) F(v, dwarf_decl_file) F(v, dwarf_filesrc)    \
	F(v, dwarf_formstring) F(v, dwarf_formudata) F(v, dwarf_getscopes)                       \
	F(v, dwarf_getscopes_die) F(v, dwarf_getsrc_die) F(v, dwarf_getsrcfiles)                 \
	F(v, dwarf_haspc) F(v, dwarf_lineno) F(v, dwarf_linesrc) F(v, dwarf_lowpc)               \
	F(v, dwarf_highpc) F(v, dwarf_entrypc) F(v, dwarf_dieoffset)                             \
	F(v, dwarf_tag) F(v, dwfl_addrmodule) F(v, dwfl_begin) F(v, dwfl_end)                    \
	F(v, dwfl_lineinfo) F(v, dwfl_linux_proc_report) F(v, dwfl_module_addrdie)              \
	F(v, dwfl_module_addrinfo) F(v, dwfl_module_getsrc) F(v, dwfl_module_info)               \
	F(v, dwfl_module_nextcu) F(v, dwfl_report_begin) F(v, dwfl_report_end)                   \
	F(v, dwfl_linux_proc_find_elf) F(v, dwfl_build_id_find_debuginfo)
POOL_DL_TABLE(dw, LIBDW_FUNCTIONS);

const char *pool__libdw_soname = "libdw.so.1";

static struct pool_lock sym_lock = POOL_LOCK_INITIALIZER;
static void *libdw;                             /* dlopen()'s handle, NULL: not loaded */
static int libdw_tried;                         /* load_libdw() ran (and failed if !libdw) */
static atomic_int unloading;                    /* the library's end began: load nothing */
static int kept;                                /* pool__sym_keep(): libdw outlives the end */
static Dwfl *dwfl;                              /* NULL: not made, or libdw failed */
static unsigned long long dwfl_objects;         /* dlpi_adds + dlpi_subs when it was made */
static int dwfl_failed;                         /* libdw failed for these counts: dladdr */
static char *debuginfo_path;                    /* libdw's default search path */

/*
 * Separate debugging information is looked for by build-id under /usr/lib/debug (Debian's
 * -dbgsym packages), on this machine only: dwfl_standard_find_debuginfo() would also ask the
 * debuginfod servers of DEBUGINFOD_URLS (Debian's login shells set it) over the network, in
 * the middle of a report of a server. Its functions are libdw's: set by load_libdw().
 */
static Dwfl_Callbacks callbacks = {
	.debuginfo_path = &debuginfo_path,
};

/* Append `s` to buf (size len, NUL-terminated), cutting what does not fit. */
static void append(char *buf, size_t len, size_t *at, const char *s)
{
	while (*s && *at + 1 < len)
		buf[(*at)++] = *s++;
	buf[*at] = 0;
}

/* "0x" and `v` in hexadecimal, without stdio (pool__symbolize() may run in a signal handler). */
static const char *hex(char buf[24], uint64_t v)
{
	char tmp[20];
	int n = 0, k = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	buf[k++] = '0';
	buf[k++] = 'x';
	while (n)
		buf[k++] = tmp[--n];
	buf[k] = 0;
	return buf;
}

static const char *dec(char buf[24], uint64_t v)
{
	char tmp[24];
	int n = 0, k = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		buf[k++] = tmp[--n];
	buf[k] = 0;
	return buf;
}

/* The last part of a path: what follows its last '/'. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static void copy(char *dst, size_t len, const char *src)
{
	size_t at = 0;

	dst[0] = 0;
	if (src)
		append(dst, len, &at, src);
}

/* ------------------------------------------------------------------------------------------ */
/* dladdr(3): the crash report's                                                              */
/* ------------------------------------------------------------------------------------------ */

void pool__symbolize(char *buf, size_t len, const void *addr, unsigned int how)
{
	char num[24];
	Dl_info info;
	size_t at = 0;
	int found;

	if (!len)
		return;
	buf[0] = 0;
	if (!addr) {
		append(buf, len, &at, "(unknown)");
		return;
	}
	found = dladdr(addr, &info) != 0;
	if (found && info.dli_sname && info.dli_saddr) {
		append(buf, len, &at, info.dli_sname);
		append(buf, len, &at, "+");
		append(buf, len, &at, hex(num, (uint64_t)((uintptr_t)addr -
		                                          (uintptr_t)info.dli_saddr)));
		if (!(how & POOL_SYM_SHORT)) {
			append(buf, len, &at, " (");
			append(buf, len, &at, base_name(info.dli_fname ? info.dli_fname : "?"));
			append(buf, len, &at, ")");
		}
	} else if (found && info.dli_fname && info.dli_fbase) {
		hex(num, (uint64_t)((uintptr_t)addr - (uintptr_t)info.dli_fbase));
		if (how & POOL_SYM_SHORT) {
			append(buf, len, &at, base_name(info.dli_fname));
			append(buf, len, &at, "+");
			append(buf, len, &at, num);
		} else {
			append(buf, len, &at, info.dli_fname);
			append(buf, len, &at, "(+");
			append(buf, len, &at, num);
			append(buf, len, &at, ")");
		}
	} else {
		append(buf, len, &at, hex(num, (uint64_t)(uintptr_t)addr));
	}
}

/* A frame from dladdr(3) alone: the dynamic symbol, or the module and the offset in it. */
static void frame_from_dladdr(uintptr_t pc, struct pool_sym *s)
{
	Dl_info info;

	memset(s, 0, sizeof(*s));
	s->offset = pc;
	if (!dladdr((const void *)(pc - 1), &info))
		return;
	copy(s->module, sizeof(s->module), info.dli_fname ? base_name(info.dli_fname) : NULL);
	if (info.dli_sname && info.dli_saddr) {
		copy(s->function, sizeof(s->function), info.dli_sname);
		s->offset = pc - (uintptr_t)info.dli_saddr;
	} else if (info.dli_fbase) {
		s->offset = pc - (uintptr_t)info.dli_fbase;
	}
}

/* ------------------------------------------------------------------------------------------ */
/* libdw                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/*
 * Lock held: libdw's functions, from the library pool__libdw_soname names, loaded the first
 * time a report needs names (once: a failure stays, and every report then names frames with
 * dladdr(3)). Returns 1 when they are there. Not at start-up: libdw and what it loads (libelf,
 * libz, libbz2) are 0.42 MiB resident and 0.5 ms of every process's start, for the reports of
 * a profile or a failure that most processes never write.
 */
static int load_libdw(void)
{
	void *h;

	if (libdw_tried || atomic_load_explicit(&unloading, memory_order_relaxed))
		return libdw != NULL;
	libdw_tried = 1;
	h = dlopen(pool__libdw_soname, RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		return 0;
	if (pool__dlsym_all(h, dw_names, dw_slots, POOL_DL_COUNT(dw))) {
		dlclose(h);
		return 0;
	}
	callbacks.find_elf = dw.dwfl_linux_proc_find_elf;
	callbacks.find_debuginfo = dw.dwfl_build_id_find_debuginfo;
	libdw = h;
	return 1;
}

static int count_objects(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(unsigned long long *)arg = info->dlpi_adds + info->dlpi_subs;
	return 1;
}

/* Lock held: libdw's view of the process, made or made again when objects came or went. */
static void refresh_view(void)
{
	unsigned long long objects = 0;

	/* first, since loading libdw adds to the counts */
	if (!load_libdw()) {
		dwfl_failed = 1;
		return;
	}
	dl_iterate_phdr(count_objects, &objects);
	if ((dwfl || dwfl_failed) && objects == dwfl_objects)
		return;
	if (dwfl)
		dw.dwfl_end(dwfl);
	dwfl_objects = objects;
	dwfl_failed = 1;
	dwfl = dw.dwfl_begin(&callbacks);
	if (!dwfl)
		return;
	dw.dwfl_report_begin(dwfl);
	if (dw.dwfl_linux_proc_report(dwfl, getpid()) != 0 ||
	    dw.dwfl_report_end(dwfl, NULL, NULL) != 0) {
		dw.dwfl_end(dwfl);
		dwfl = NULL;
		return;
	}
	dwfl_failed = 0;
}

int pool__sym_begin(int try_only)
{
	if (try_only) {
		if (pool__lock_try(&sym_lock) != 0)
			return -1;
	} else {
		pool__lock(&sym_lock);
	}
	refresh_view();
	return 0;
}

void pool__sym_end(void)
{
	pool__unlock(&sym_lock);
}

/*
 * Lock held: libdw's view and libdw itself go; the next session makes and loads them again.
 * libdw's memory came from the process's malloc(), glibc's in most programs, which keeps the
 * pages of what is freed in the middle of its heap (2.5 of 12 MB here): trimmed.
 */
static void drop_libdw(void)
{
	if (dwfl) {
		dw.dwfl_end(dwfl);
		pool__malloc_trim();
	}
	dwfl = NULL;
	dwfl_failed = 0;
	/* loaded again by the next session; a load that failed is not tried again; one that
	   pool__sym_keep() made stays for the report at exit */
	if (libdw && !kept) {
		dlclose(libdw);
		libdw = NULL;
		libdw_tried = 0;
	}
}

void pool__sym_release(void)
{
	pool__lock(&sym_lock);
	drop_libdw();
	pool__unlock(&sym_lock);
}

/* The name of a DWARF function DIE, following its abstract origin or specification. */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name = dw.dwarf_formstring(dw.dwarf_attr_integrate(die, DW_AT_name, &attr));

	if (name)
		return name;
	return dw.dwarf_formstring(dw.dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
}

/* Does the path `file` (n bytes) end with `tail`? */
static int ends_with(const char *file, size_t n, const char *tail)
{
	size_t k = strlen(tail);

	return n >= k && !strcmp(file + n - k, tail);
}

/*
 * Is the function of `die` one of libpool's inline functions (pool_*() of pool/pool.h, and
 * pool__*() of pool/pool-inline.h, which pool.h's expand to)?
 */
static int own_inline(Dwarf_Die *die)
{
	const char *file = dw.dwarf_decl_file(die), *name = die_name(die);
	size_t n = file ? strlen(file) : 0;

	return name && !strncmp(name, "pool_", 5) && file &&
	       (ends_with(file, n, OWN_HEADER) || ends_with(file, n, OWN_INLINE_HEADER));
}

/*
 * The compilation unit whose code holds `at`, for the objects without .debug_aranges (clang
 * emits none, and libdw 0.188 finds a unit only through them): its units one after the other,
 * each asked whether its ranges hold the address.
 */
static Dwarf_Die *unit_of(Dwfl_Module *mod, Dwarf_Addr at, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = NULL;

	while ((cu = dw.dwfl_module_nextcu(mod, cu, bias)))
		if (dw.dwarf_haspc(cu, at - *bias) > 0)
			return cu;
	return NULL;
}

/* The file and line an inlined subroutine's call is at (in the function it is inlined in). */
static void call_site(Dwarf_Die *cu, Dwarf_Die *inl, struct pool_sym *s)
{
	Dwarf_Files *files;
	Dwarf_Attribute attr;
	Dwarf_Word file, line;
	const char *path;

	s->file[0] = 0;
	s->line = 0;
	if (dw.dwarf_formudata(dw.dwarf_attr(inl, DW_AT_call_file, &attr), &file) == 0 &&
	    dw.dwarf_getsrcfiles(cu, &files, NULL) == 0 &&
	    (path = dw.dwarf_filesrc(files, file, NULL, NULL)))
		copy(s->file, sizeof(s->file), base_name(path));
	if (dw.dwarf_formudata(dw.dwarf_attr(inl, DW_AT_call_line, &attr), &line) == 0)
		s->line = (unsigned int)line;
}

unsigned int pool__sym_frames(uintptr_t pc, struct pool_sym *out, unsigned int max)
{
	Dwarf_Addr at = pc - 1, bias = 0, start;
	Dwfl_Module *mod = dwfl ? dw.dwfl_addrmodule(dwfl, at) : NULL;
	struct pool_sym where;
	Dwarf_Die *cu, *scopes = NULL;
	const char *name, *file;
	unsigned int n = 0;
	GElf_Off off = 0;
	GElf_Sym sym;
	int i, nscopes = 0, line = 0;

	POOL_ASSERT(pool__lock_held(&sym_lock) && max >= 1);
	if (!mod) {
		frame_from_dladdr(pc, &out[0]);
		return 1;
	}
	/* where the call is: the line table's file and line, then each inlined call's site */
	memset(&where, 0, sizeof(where));
	name = dw.dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
	copy(where.module, sizeof(where.module), name ? base_name(name) : NULL);
	file = dw.dwfl_lineinfo(dw.dwfl_module_getsrc(mod, at), NULL, &line, NULL, NULL, NULL);
	cu = dw.dwfl_module_addrdie(mod, at, &bias);
	if (!cu && (cu = unit_of(mod, at, &bias)) && !file) {
		Dwarf_Line *l = dw.dwarf_getsrc_die(cu, at - bias);

		file = l ? dw.dwarf_linesrc(l, NULL, NULL) : NULL;
		if (!file || dw.dwarf_lineno(l, &line) != 0)
			file = NULL;
	}
	if (file && line > 0) {
		copy(where.file, sizeof(where.file), base_name(file));
		where.line = (unsigned int)line;
	}
	if (cu)
		nscopes = dw.dwarf_getscopes(cu, at - bias, &scopes);
	if (nscopes > 0) {
		/*
		 * Past an inlined subroutine, dwarf_getscopes() goes on with the scopes of its
		 * abstract definition; the DIEs that hold the innermost one give the concrete
		 * chain: each inlined call in the function it is inlined in, up to that function
		 * (what eu-addr2line -i does).
		 */
		Dwarf_Die inner = scopes[0];

		free(scopes);
		scopes = NULL;
		nscopes = dw.dwarf_getscopes_die(&inner, &scopes);
	}
	for (i = 0; i < nscopes; i++) {
		int tag = dw.dwarf_tag(&scopes[i]);

		if (tag != DW_TAG_inlined_subroutine)
			continue;
		/* libpool's own inline functions wrap the call into the library: left out */
		if (!own_inline(&scopes[i]) && n + 1 < max) {
			out[n] = where;
			copy(out[n].function, sizeof(out[n].function), die_name(&scopes[i]));
			out[n].inlined = 1;
			out[n].offset = 0;
			n++;
		}
		call_site(cu, &scopes[i], &where);
	}
	/* the function that holds the code: the ELF symbol (static ones too), else DWARF's */
	out[n] = where;
	name = dw.dwfl_module_addrinfo(mod, at, &off, &sym, NULL, NULL, NULL);
	if (name) {
		copy(out[n].function, sizeof(out[n].function), name);
		/* a versioned symbol of the table: "__libc_start_main@@GLIBC_2.34" */
		*strchrnul(out[n].function, '@') = 0;
		out[n].offset = (uintptr_t)off + 1;
	} else {
		for (i = 0; i < nscopes; i++) {
			Dwarf_Addr low;

			if (dw.dwarf_tag(&scopes[i]) != DW_TAG_subprogram)
				continue;
			copy(out[n].function, sizeof(out[n].function), die_name(&scopes[i]));
			if (dw.dwarf_lowpc(&scopes[i], &low) == 0)
				out[n].offset = pc - (uintptr_t)(low + bias);
			break;
		}
		if (!out[n].function[0])
			out[n].offset = pc - (uintptr_t)start;
	}
	free(scopes);
	return n + 1;
}

/*
 * The scopes at `at` (module-relative) of unit `cu`, the concrete chain (pool__sym_frames()),
 * into *scopes (free()d by the caller); how many. The subprogram's DIE offset in *fn (0: none).
 */
static int chain_at(Dwarf_Die *cu, Dwarf_Addr at, Dwarf_Die **scopes, Dwarf_Off *fn)
{
	Dwarf_Die inner;
	int n = dw.dwarf_getscopes(cu, at, scopes), i;

	*fn = 0;
	if (n > 0) {
		inner = (*scopes)[0];
		free(*scopes);
		*scopes = NULL;
		n = dw.dwarf_getscopes_die(&inner, scopes);
	}
	for (i = 0; i < n; i++)
		if (dw.dwarf_tag(&(*scopes)[i]) == DW_TAG_subprogram) {
			*fn = dw.dwarf_dieoffset(&(*scopes)[i]);
			break;
		}
	return n;
}

/*
 * Is `at` (module-relative) code of the function whose DIE is at `fn`, outside libpool's inline
 * functions?
 */
static int outside_own(Dwarf_Die *cu, Dwarf_Addr at, Dwarf_Off fn)
{
	Dwarf_Die *scopes = NULL;
	Dwarf_Off where;
	int n = chain_at(cu, at, &scopes, &where), ok;

	ok = n > 0 && where == fn &&
	     (dw.dwarf_tag(&scopes[0]) != DW_TAG_inlined_subroutine || !own_inline(&scopes[0]));
	free(scopes);
	return ok;
}

uintptr_t pool__sym_leaf_pc(uintptr_t pc)
{
	Dwarf_Addr at = pc - 1, bias = 0, low, cand[3];
	Dwfl_Module *mod;
	Dwarf_Die *cu, *scopes = NULL;
	Dwarf_Off fn;
	uintptr_t leaf = pc;
	int i, n, outer = -1;

	POOL_ASSERT(pool__lock_held(&sym_lock));
	mod = dwfl ? dw.dwfl_addrmodule(dwfl, at) : NULL;
	cu = mod ? dw.dwfl_module_addrdie(mod, at, &bias) : NULL;
	if (mod && !cu)
		cu = unit_of(mod, at, &bias);
	if (!cu)
		return pc;
	n = chain_at(cu, at - bias, &scopes, &fn);
	/* the outermost of libpool's inline functions that the call is in */
	for (i = 0; i < n && dw.dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine &&
	            own_inline(&scopes[i]); i++)
		outer = i;
	if (outer >= 0 && fn) {
		/* the byte before it, its first address past it: code of the function around it */
		cand[0] = dw.dwarf_entrypc(&scopes[outer], &low) == 0 ? low - 1 : 0;
		cand[1] = dw.dwarf_lowpc(&scopes[outer], &low) == 0 ? low - 1 : 0;
		cand[2] = dw.dwarf_highpc(&scopes[outer], &low) == 0 ? low : 0;
		for (i = 0; i < 3; i++)
			if (cand[i] && outside_own(cu, cand[i], fn)) {
				leaf = (uintptr_t)(cand[i] + bias);
				break;
			}
	}
	free(scopes);
	return leaf;
}

/* ------------------------------------------------------------------------------------------ */
/* Text                                                                                       */
/* ------------------------------------------------------------------------------------------ */

void pool__sym_format(char *buf, size_t len, const struct pool_sym *s, unsigned int how)
{
	char num[24];
	size_t at = 0;

	if (!len)
		return;
	buf[0] = 0;
	if (!s->function[0]) {
		if (s->module[0]) {
			append(buf, len, &at, s->module);
			append(buf, len, &at, "+");
		}
		append(buf, len, &at, hex(num, s->offset));
		return;
	}
	append(buf, len, &at, s->function);
	if (how & POOL_SYM_FUNCTION)
		return;
	if (!s->inlined) {
		append(buf, len, &at, "+");
		append(buf, len, &at, hex(num, s->offset));
	}
	if (s->file[0] && s->line) {
		append(buf, len, &at, " (");
		append(buf, len, &at, s->file);
		append(buf, len, &at, ":");
		append(buf, len, &at, dec(num, s->line));
		append(buf, len, &at, s->inlined ? ", inlined)" : ")");
	} else if (s->inlined) {
		append(buf, len, &at, " (inlined)");
	} else if (s->module[0]) {
		append(buf, len, &at, " (");
		append(buf, len, &at, s->module);
		append(buf, len, &at, ")");
	}
}

void pool__sym_name(char *buf, size_t len, uintptr_t pc, unsigned int how)
{
	struct pool_sym f[4];
	unsigned int n, i;
	size_t at;

	if (!len)
		return;
	pool__sym_begin(0);
	n = pool__sym_frames(pc, f, 4);
	pool__sym_end();
	buf[0] = 0;
	for (i = 0; i < n; i++) {
		at = strlen(buf);
		if (i)
			append(buf, len, &at, " <- ");
		pool__sym_format(buf + at, len - at, &f[i], how);
	}
}

void pool__sym_fork_child(void)
{
	if (pool__lock_try(&sym_lock) != 0) {
		pool__lock_init(&sym_lock);
		dwfl = NULL;
		dwfl_failed = 0;
		/* a load that thread had begun is tried again here */
		if (!libdw)
			libdw_tried = 0;
		return;
	}
	pool__unlock(&sym_lock);
}

void pool__sym_keep(void)
{
	pool__lock(&sym_lock);
	if (load_libdw())
		kept = 1;
	pool__unlock(&sym_lock);
}

/*
 * libdw's memory and libdw go with the library (dlclose(), or the end of the process), and no
 * libdw is loaded after: ld.so cannot load an object from inside dlclose() (an assertion in
 * _dl_close_worker kills the process, exit status 127). A destructor of default priority: both
 * at dlclose() and at exit() it runs before the library's atexit() handlers (the reports at
 * exit, which __cxa_finalize() runs from the object's last destructor of default priority),
 * so libdw itself stays when pool__sym_keep() kept it for them.
 */
__attribute__((destructor)) static void sym_unload(void)
{
	atomic_store_explicit(&unloading, 1, memory_order_relaxed);
	/* a thread still in a report at exit keeps it: the process ends with it anyway */
	if (pool__lock_try(&sym_lock) != 0)
		return;
	drop_libdw();
	pool__unlock(&sym_lock);
}
