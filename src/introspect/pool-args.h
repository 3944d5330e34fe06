/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The arguments and the outputs shared by the introspection commands (`pools show`, `pools
 * profile`), defined in src/introspect/pool-args.c: the one format enum and its words, the one
 * argument parser (a command's words from its word table, a count, and a word that names a
 * following word, such as `match <prefix>` and `pool <name>`), and the one metric row that
 * their JSON and Prometheus writers print. Private header: never installed.
 */
#ifndef POOL_SRC_POOL_ARGS_H
#define POOL_SRC_POOL_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "introspect/pool-text.h"

/* ------------------------------------------------------------------------------------------ */
/* Arguments                                                                                  */
/* ------------------------------------------------------------------------------------------ */

/* The output formats; a command accepts a set of them (struct pool_args_spec.formats). */
enum pool_format {
	POOL_FORMAT_TEXT = 0,           /* the default: no word */
	POOL_FORMAT_JSON,               /* json */
	POOL_FORMAT_PROMETHEUS,         /* prometheus: the text exposition format 0.0.4 */
	POOL_FORMAT_HEAP,               /* heap: a heap profile for jeprof and pprof */
	POOL_FORMAT_FOLDED,             /* folded: folded stacks for flame graphs */
};

#define POOL_FORMAT_BIT(f) (1u << (f))

/*
 * Groups of a command's word table: the words of one group exclude each other (two sort
 * orders), and a word given twice is refused. Group 0 is the formats' (its words are the
 * parser's, not the command's); a command's own groups are 1 up.
 */
#define POOL_ARGS_FORMAT 0u
#define POOL_ARGS_GROUPS 4u

/*
 * A command's arguments: its name, its words, and what it accepts besides. Its usage line is
 * generated from them (pool__args_usage()): the words of each group in table order, then the
 * count, then the formats.
 */
struct pool_args_spec {
	const char *command;            /* "pools show": named in every error message */
	const char *also;               /* the usage of the command's other form, for the
	                                   unknown-word error ("..., or <also>"); NULL: none */
	const struct pool_word *words;  /* its own words, groups 1 .. POOL_ARGS_GROUPS - 1 */
	size_t nwords;
	unsigned int formats;           /* POOL_FORMAT_BIT()s of the formats it accepts */
	const char *counted;            /* what a count counts ("pools"), NULL: no count */
	const char *count;              /* the count in the usage ("<max>") */
	/*
	 * Per group, when its word takes the next word as its value (`match <prefix>`): that word
	 * in the usage ("<prefix>") and in the error "Option 'match' needs <this>" ("a prefix");
	 * NULL: the word stands alone.
	 */
	const char *takes[POOL_ARGS_GROUPS];
	const char *takes_what[POOL_ARGS_GROUPS];
};

/* The longest usage line pool__args_usage() writes, NUL included. */
#define POOL_ARGS_USAGE_MAX 256u

/*
 * The usage line of `spec` into buf[POOL_ARGS_USAGE_MAX]: "<command> [<w>|<w>] [<w> <value>]
 * [<count>] [<format>|<format>]". With `wrap`, the groups that would end past column `wrap`
 * (counted from an indentation of 2) go to a new line indented by 4 (the `help` layout).
 * Returns buf.
 */
const char *pool__args_usage(char *buf, const struct pool_args_spec *spec, size_t wrap);

/* The arguments parsed. */
struct pool_args {
	enum pool_format format;        /* POOL_FORMAT_TEXT when no format word was given */
	int value[POOL_ARGS_GROUPS];    /* per group: the value of its word given, else 0 */
	const char *arg[POOL_ARGS_GROUPS];   /* per group that takes a word: that word, or NULL */
	size_t arg_len[POOL_ARGS_GROUPS];
	size_t max;                     /* the count, 0 when none was given */
};

/*
 * Parse the blank-separated words of `args` (NULL: none) as `spec` says into *a. Returns 0, or
 * -1 with errno EINVAL after one error line "... in '<command>'. Try 'help'." in `out`: an
 * unknown word, a word given twice, two words of one group, a word that takes a value without
 * one, a count that is not a decimal number from 1 up, or two counts.
 */
int pool__args_parse(FILE *out, const char *args, const struct pool_args_spec *spec,
                     struct pool_args *a);

/* ------------------------------------------------------------------------------------------ */
/* Metric rows                                                                                */
/* ------------------------------------------------------------------------------------------ */

/* The Prometheus type of a metric family. */
enum pool_metric_type { POOL_METRIC_GAUGE = 0, POOL_METRIC_COUNTER };

/* How a row's value is written in JSON. */
enum pool_metric_json {
	POOL_JSON_UINT = 0,             /* value(): a decimal integer */
	POOL_JSON_BOOL,                 /* value(): true when not 0, else false */
	POOL_JSON_TENTHS,               /* real(): a number with one decimal ("%.1f") */
};

/*
 * A metric row: one figure of an object (a pool's statistics, a profile's site, the OS
 * layer's), under its JSON key and its Prometheus family, with the family's type and HELP
 * text, and how its value comes from the object. The JSON and Prometheus writers of `pools
 * show` and `pools profile` print their figures from tables of these rows, so that a figure has
 * one name, one help and one getter in every format.
 */
struct pool_metric {
	const char *key;                /* its JSON key */
	const char *name;               /* its Prometheus family; NULL: JSON only */
	enum pool_metric_type type;
	const char *help;               /* the family's HELP text (NULL when name is) */
	uint64_t (*value)(const void *of);
	enum pool_metric_json json;
	double (*real)(const void *of); /* POOL_JSON_TENTHS only */
};

/* A row of a gauge or of a counter, in JSON an integer. */
#define POOL_GAUGE(key, name, help, value) \
	{ (key), (name), POOL_METRIC_GAUGE, (help), (value), POOL_JSON_UINT, NULL }
#define POOL_COUNTER(key, name, help, value) \
	{ (key), (name), POOL_METRIC_COUNTER, (help), (value), POOL_JSON_UINT, NULL }

/* `, "<key>": <value>` for each row of table[0..n): the JSON of object `of`. */
void pool__metrics_json(FILE *out, const struct pool_metric *table, size_t n, const void *of);

/* The `# HELP` and `# TYPE` lines of the row's family (a row with a name). */
void pool__metric_family(FILE *out, const struct pool_metric *m);

/* " <value>\n": the end of a sample line of the row's family, after its name and labels. */
void pool__metric_value(FILE *out, const struct pool_metric *m, const void *of);

/* "<name> <value>\n": a sample line without labels. */
void pool__metric_sample(FILE *out, const struct pool_metric *m, const void *of);

#endif
