/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The command handler with its access levels: pool_cli_exec_level(). The socket server that
 * serves it to clients is src/introspect/pool-cli-socket.c.
 *
 * Every command is a row of one table (cli_commands[]): its words, the level it needs, the
 * function that runs it and its lines in `help` (the usage of `pools show` and `pools profile`
 * generated from their argument specs, pool-args.h); the socket's own commands, which
 * pool-cli-socket.c runs, are the rows of socket_commands[]. That is the one list of commands:
 * `help` prints it, the `pools` tool prints it in its --help through pool_cli_exec_level(), and
 * tests/introspect/test_cli_words.sh checks that pools(1) and pool_cli_listen(3) tell each row.
 *
 * HAProxy's three levels: `user` reads (and sees no address), `operator` also gives memory
 * back, `admin` also changes behaviour. The table is the only place a level is decided, except
 * for `pools debug`, whose options need admin while `pools debug` alone is read-only: its
 * function checks that itself.
 *
 * A command reaches the pools through the public API and pool-int.h only (pool_for_each(),
 * pool_gc(), pool_flush(), pool_set_limit()), never through a tier of the core. Its
 * allocations go through pool__cli_*() (pool-text.h), a fault-injection site for the tests: out
 * of memory, a command says so in its answer and changes nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool-assert.h"
#include "introspect/pool-args.h"
#include "introspect/pool-cli.h"
#include "introspect/pool-dump.h"
#include "core/pool-int.h"
#include "introspect/pool-profile-dump.h"
#include "introspect/pool-text.h"

/* ------------------------------------------------------------------------------------------ */
/* Levels                                                                                     */
/* ------------------------------------------------------------------------------------------ */

static const struct pool_word level_words[] = {
	{ "user", 0, POOL_CLI_USER },
	{ "operator", 0, POOL_CLI_OPERATOR },
	{ "admin", 0, POOL_CLI_ADMIN },
};

#define NB_LEVELS (sizeof(level_words) / sizeof(level_words[0]))

int pool__cli_level_valid(int level)
{
	return level >= POOL_CLI_USER && level <= POOL_CLI_ADMIN;
}

const char *pool__cli_level_name(enum pool_cli_level level)
{
	POOL_ASSERT(pool__cli_level_valid((int)level));
	return level_words[level - POOL_CLI_USER].word;
}

int pool__cli_level_find(const char *w, size_t len)
{
	const struct pool_word *lw = pool__word_find(level_words, NB_LEVELS, w, len);

	return lw ? lw->value : 0;
}

/* "Permission denied: '<what>' needs level <need>; this session is <have>." */
static int denied(FILE *out, const char *what, enum pool_cli_level need,
                  enum pool_cli_level have)
{
	fprintf(out, "Permission denied: '%s' needs level %s; this session is %s.\n", what,
	        pool__cli_level_name(need), pool__cli_level_name(have));
	errno = EACCES;
	return -1;
}

/* ------------------------------------------------------------------------------------------ */
/* The command handler                                                                        */
/* ------------------------------------------------------------------------------------------ */

static int unknown_command(FILE *out, const char *w, size_t len)
{
	pool__word_error(out, "Unknown command '", w, len, "'. Try 'help'.\n");
	errno = EINVAL;
	return -1;
}

/* Returns -1 (after the error line) if anything but blanks follows p. */
static int no_more_words(FILE *out, const char *p)
{
	const char *w;
	size_t len;

	w = pool__next_word(&p, &len);
	return w ? unknown_command(out, w, len) : 0;
}

/* What a pool_for_each() walk over the pools named `name` (all when NULL) does and finds. */
struct cli_walk {
	const char *name;
	size_t name_len;
	size_t limit;          /* pools limit: the new limit */
	FILE *out;             /* pools limit: where each pool's line goes */
	unsigned int pools;    /* pools named so */
};

/* Pool list lock held: any creator's name names a merged pool. */
static int walk_matches(const struct cli_walk *wk, const struct pool_head *pool)
{
	return !wk->name || pool__pool_named(pool, wk->name, wk->name_len, 0);
}

/* "No pool named '<name>'. Try 'pools show'." */
static int no_such_pool(FILE *out, const char *name, size_t len)
{
	pool__word_error(out, "No pool named '", name, len, "'. Try 'pools show'.\n");
	errno = ENOENT;
	return -1;
}

/* The first line of trim and flush: what the pools held before and after. */
static void released_line(FILE *out, size_t before, size_t after)
{
	fprintf(out, "Released %zu bytes to the OS layer (the pools held %zu bytes, now %zu).\n",
	        before > after ? before - after : 0, before, after);
}

static int cmd_trim(FILE *out, const char *args, enum pool_cli_level level)
{
	size_t before, after;

	(void)level;
	if (no_more_words(out, args) < 0)
		return -1;
	before = pool__allocated_bytes(NULL, 0);
	pool_gc(NULL);
	after = pool__allocated_bytes(NULL, 0);
	released_line(out, before, after);
	return 0;
}

/* pool_for_each() callback of `pools flush`: runs under the pool list lock. */
static int flush_one(struct pool_head *pool, void *arg)
{
	struct cli_walk *wk = arg;

	POOL_ASSERT(pool__lock_held(&pool__list_lock));
	if (walk_matches(wk, pool)) {
		pool_flush(pool);
		wk->pools++;
	}
	return 0;
}

static int cmd_flush(FILE *out, const char *args, enum pool_cli_level level)
{
	struct cli_walk wk = { 0 };
	size_t before, after;

	(void)level;
	wk.name = pool__next_word(&args, &wk.name_len);
	if (no_more_words(out, args) < 0)
		return -1;
	before = pool__allocated_bytes(wk.name, wk.name_len);
	pool_for_each(flush_one, &wk);
	if (wk.name && !wk.pools)
		return no_such_pool(out, wk.name, wk.name_len);
	/* the OS layer's pages only: pool_trim() would also take the other pools' free objects */
	pool__trim_os_layer();
	after = pool__allocated_bytes(wk.name, wk.name_len);
	released_line(out, before, after);
	return 0;
}

/* pool_for_each() callback of `pools limit`: runs under the pool list lock. */
static int limit_one(struct pool_head *pool, void *arg)
{
	struct cli_walk *wk = arg;
	size_t was = atomic_load_explicit(&pool->limit, memory_order_relaxed);

	POOL_ASSERT(pool__lock_held(&pool__list_lock));
	if (!walk_matches(wk, pool))
		return 0;
	pool_set_limit(pool, wk->limit);
	wk->pools++;
	fprintf(wk->out, "Limit of pool '%s' now ", pool->name);
	if (wk->limit)
		fprintf(wk->out, "%zu objects", wk->limit);
	else
		fputs("none", wk->out);
	if (was)
		fprintf(wk->out, " (was %zu).\n", was);
	else
		fputs(" (was none).\n", wk->out);
	if (pool->creators > 1) {
		unsigned int i;

		/* one pool, one limit: say whose objects it caps together */
		fprintf(wk->out, "  (a merged pool: the limit counts the objects of all its %u "
		        "creators:", pool->creators);
		for (i = 0; i < pool->creators; i++)
			fprintf(wk->out, " %s", pool->creator[i].name);
		fputs(")\n", wk->out);
	}
	return 0;
}

static int cmd_limit(FILE *out, const char *args, enum pool_cli_level level)
{
	static const char usage[] = "Usage: pools limit <pool> <objects> (0: no limit). "
	                            "Try 'help'.\n";
	struct cli_walk wk = { 0 };
	const char *n;
	size_t nlen;

	(void)level;
	wk.out = out;
	wk.name = pool__next_word(&args, &wk.name_len);
	n = pool__next_word(&args, &nlen);
	if (!wk.name || !n) {
		fputs(usage, out);
		errno = EINVAL;
		return -1;
	}
	if (pool__parse_size(n, nlen, &wk.limit) < 0) {
		pool__word_error(out, "Invalid number of objects '", n, nlen, "' in 'pools limit' "
		                 "(expected 0 for no limit, or a decimal count). Try 'help'.\n");
		errno = EINVAL;
		return -1;
	}
	if (no_more_words(out, args) < 0)
		return -1;
	pool_for_each(limit_one, &wk);
	return wk.pools ? 0 : no_such_pool(out, wk.name, wk.name_len);
}

static int cmd_debug(FILE *out, const char *args, enum pool_cli_level level)
{
	char *copy, *err = NULL;
	size_t len;
	int ret;

	args = pool__rest_of_line(args, &len);
	if (!len) {
		pool_debugging_show(out);
		return 0;
	}
	/* the options table changes nothing: any level may read it */
	if (level < POOL_CLI_ADMIN && !pool__word_is(args, len, "help"))
		return denied(out, "pools debug <options>", POOL_CLI_ADMIN, level);
	copy = pool__cli_strndup(args, len);
	if (!copy) {
		fputs("Not enough memory to parse the debugging options.\n", out);
		errno = ENOMEM;
		return -1;
	}
	ret = pool__parse_debugging(copy, &err, out, 1);
	free(copy);
	if (ret < 0) {
		const char *msg = err ? err : "invalid pool debugging options";

		pool__put_escaped(out, msg, strlen(msg), 0);
		fputc('\n', out);
		free(err);
		errno = EINVAL;
		return -1;
	}
	if (ret == 0) {
		fputs("Pool debugging options now: ", out);
		pool_debugging_show(out);
	}
	return 0;
}

static int cmd_show(FILE *out, const char *args, enum pool_cli_level level)
{
	return pool__dump(out, args, level) < 0 ? -1 : 0;
}

static int cmd_profile(FILE *out, const char *args, enum pool_cli_level level)
{
	return pool__profile_cli(out, args, level);
}

static int cmd_topology(FILE *out, const char *args, enum pool_cli_level level)
{
	(void)level;
	if (no_more_words(out, args) < 0)
		return -1;
	pool_topology_show(out);
	return 0;
}

static int cmd_help(FILE *out, const char *args, enum pool_cli_level level);

/*
 * A command: its one or two words, the level it needs, what runs it, and its `help` lines: its
 * usage, written here or generated from the command's argument spec (pool-args.h), and its text.
 * Rows without `run` are help only; rows with neither usage nor spec (aliases) are not listed in
 * help. The first row whose words match runs.
 */
struct cli_command {
	const char *w1, *w2;
	enum pool_cli_level level;
	int (*run)(FILE *out, const char *args, enum pool_cli_level level);
	const char *usage;
	const char *help;    /* "\n" starts a continuation line */
	const struct pool_args_spec *args;
};

static const struct cli_command cli_commands[] = {
	{ "help", NULL, POOL_CLI_USER, cmd_help, "help",
	  "this list: the commands this session's level allows", NULL },
	{ "pools", "show", POOL_CLI_USER, cmd_show, NULL,
	  "the pools and what they hold; byname: by name, bysize: largest objects\n"
	  "first, byusage: most bytes allocated first (hides empty pools); match:\n"
	  "names starting with <prefix>; <max>: the first <max> pools only;\n"
	  "addresses only at level admin; also spelled 'show pools ...'", &pool__show_args },
	{ "show", "pools", POOL_CLI_USER, cmd_show, NULL, NULL, NULL },
	{ "pools", "topology", POOL_CLI_USER, cmd_topology, "pools topology",
	  "the machine topology libpool detected and the defaults it derived", NULL },
	{ "pools", "debug", POOL_CLI_USER, cmd_debug, "pools debug",
	  "the debugging options in effect ('pools debug help': the table)", NULL },
	{ "pools", "profile", POOL_CLI_USER, cmd_profile, NULL,
	  "the bytes each allocating site (a call stack) holds, estimated from\n"
	  "the profile's samples (exact under caller debugging or with every\n"
	  "allocation sampled), most first (bybytes), by site, by pool or oldest\n"
	  "first; <n>: the first <n> sites only; heap: a heap profile for jeprof\n"
	  "and pprof (addresses and mappings: level admin only); folded: folded\n"
	  "stacks for flame graphs; addresses only at level admin", &pool__profile_args },
	{ "pools", "trim", POOL_CLI_OPERATOR, cmd_trim, "pools trim",
	  "give back now what the pools hold beyond what is in use (memory also\n"
	  "comes back by itself once unused through a demand window)", NULL },
	{ "pools", "flush", POOL_CLI_OPERATOR, cmd_flush, "pools flush [<pool>]",
	  "give every object in the shared free lists of every pool (or of the\n"
	  "pools named <pool>) back to the system", NULL },
	{ "pools", "debug", POOL_CLI_ADMIN, NULL, "pools debug <options>",
	  "change the options that may change at run time (pools debug help)", NULL },
	{ "pools", "limit", POOL_CLI_ADMIN, cmd_limit, "pools limit <pool> <objects>",
	  "cap the objects the pools named <pool> may hold (0: no limit)", NULL },
	{ "pools", "profile", POOL_CLI_ADMIN, NULL,
	  "pools profile on [rate <bytes>] [depth <frames>] [pool <name>]...|off",
	  "start a new profile: one sample per about <bytes> allocated per thread\n"
	  "(0: 512k, the default; 1: every allocation), stacks of up to\n"
	  "<frames> (32 by default, 64 at most), of the pools named only; or\n"
	  "stop it, its figures kept", NULL },
};

/* The commands of the socket connection itself (pool-cli-socket.c runs them): `help` only. */
static const struct cli_command socket_commands[] = {
	{ "set", "status", POOL_CLI_USER, NULL, "set status on|off",
	  "end each answer with a line OK or ERROR before the empty line", NULL },
	{ "level", NULL, POOL_CLI_USER, NULL, "level [user|operator]",
	  "this connection's level, or lower it for the rest of the connection", NULL },
	{ "quit", NULL, POOL_CLI_USER, NULL, "quit", "close the connection", NULL },
};

#define NB_COMMANDS (sizeof(cli_commands) / sizeof(cli_commands[0]))
#define NB_SOCKET_COMMANDS (sizeof(socket_commands) / sizeof(socket_commands[0]))
#define HELP_COLUMN 28
#define HELP_USAGE_WRAP 90   /* a generated usage longer than this goes on two lines */

/* One help entry: "  <usage>" padded to HELP_COLUMN (or alone on its line), then its text. */
static void help_entry(FILE *out, const char *usage, const char *text)
{
	int pad = HELP_COLUMN - 2 - (int)strlen(usage);

	if (pad > 0)
		fprintf(out, "  %s%*s", usage, pad, "");
	else
		fprintf(out, "  %s\n%*s", usage, HELP_COLUMN, "");
	for (; *text; text++) {
		fputc(*text, out);
		if (*text == '\n')
			fprintf(out, "%*s", HELP_COLUMN, "");
	}
	fputc('\n', out);
}

/* The usage of a row: its own, or generated from its spec into buf and wrapped for `help`. */
static const char *usage_of(const struct cli_command *c, char *buf)
{
	return c->args ? pool__args_usage(buf, c->args, HELP_USAGE_WRAP) : c->usage;
}

static int cmd_help(FILE *out, const char *args, enum pool_cli_level level)
{
	char usage[POOL_ARGS_USAGE_MAX];
	unsigned int i;

	if (no_more_words(out, args) < 0)
		return -1;
	fprintf(out, "Commands at level %s%s:\n", pool__cli_level_name(level),
	        level < POOL_CLI_ADMIN ? " (higher levels have more)" : "");
	for (i = 0; i < NB_COMMANDS; i++) {
		const struct cli_command *c = &cli_commands[i];

		if ((c->usage || c->args) && c->level <= level)
			help_entry(out, usage_of(c, usage), c->help);
	}
	fputs("On the socket only:\n", out);
	for (i = 0; i < NB_SOCKET_COMMANDS; i++)
		help_entry(out, socket_commands[i].usage, socket_commands[i].help);
	return 0;
}

POOL_API int pool_cli_exec_level(const char *line, FILE *out, enum pool_cli_level level)
{
	const struct cli_command *cmd = NULL;
	const char *p, *w1, *w2 = NULL;
	size_t l1, l2 = 0;
	unsigned int i;
	int family = 0;

	if (!line || !out || !pool__cli_level_valid((int)level)) {
		errno = EINVAL;
		return -1;
	}
	p = line;
	w1 = pool__next_word(&p, &l1);
	if (!w1)
		return 0;
	for (i = 0; i < NB_COMMANDS && !cmd; i++) {
		const struct cli_command *c = &cli_commands[i];

		if (!c->run || !pool__word_is(w1, l1, c->w1))
			continue;
		if (!c->w2) {
			cmd = c;
			break;
		}
		/* a two-word command: its second word, read once */
		if (!family) {
			family = 1;
			w2 = pool__next_word(&p, &l2);
			if (!w2)
				return unknown_command(out, w1, l1);
		}
		if (pool__word_is(w2, l2, c->w2))
			cmd = c;
	}
	if (!cmd)
		return family ? unknown_command(out, w2, l2) : unknown_command(out, w1, l1);
	if (level < cmd->level) {
		char what[32];

		snprintf(what, sizeof(what), "%s%s%s", cmd->w1, cmd->w2 ? " " : "",
		         cmd->w2 ? cmd->w2 : "");
		return denied(out, what, cmd->level, level);
	}
	return cmd->run(out, p, level);
}

POOL_API int pool_cli_exec(const char *line, FILE *out)
{
	return pool_cli_exec_level(line, out, POOL_CLI_ADMIN);
}
