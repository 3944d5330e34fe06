/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The one argument parser of the introspection commands (`pools show`, `pools profile`) and
 * their one format enum, so that a word means the same and an error reads the same in each:
 * a command is a spec (pool-args.h) of its word table, the formats it accepts, what its count
 * counts and which of its words take the next word as a value. The format words belong to the
 * parser, not to a command: `json` and `prometheus` are spelled once.
 *
 * Their writers' one metric row too: a figure's JSON key, Prometheus family, type, help and
 * getter in one row of a table (pool-args.h), printed by the functions at the end of the file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/pool-assert.h"
#include "introspect/pool-args.h"

/* The format words, in the order usage lines list them; text is the default, with no word. */
static const struct pool_word format_words[] = {
	{ "json", POOL_ARGS_FORMAT, POOL_FORMAT_JSON },
	{ "prometheus", POOL_ARGS_FORMAT, POOL_FORMAT_PROMETHEUS },
	{ "heap", POOL_ARGS_FORMAT, POOL_FORMAT_HEAP },
	{ "folded", POOL_ARGS_FORMAT, POOL_FORMAT_FOLDED },
};

#define NB_FORMATS (sizeof(format_words) / sizeof(format_words[0]))

/* The word w[0..len) in the spec's table or, when the command accepts that format, a format. */
static const struct pool_word *find_word(const struct pool_args_spec *spec, const char *w,
                                         size_t len)
{
	const struct pool_word *pw = pool__word_find(spec->words, spec->nwords, w, len);

	if (pw)
		return pw;
	pw = pool__word_find(format_words, NB_FORMATS, w, len);
	return pw && (spec->formats & POOL_FORMAT_BIT(pw->value)) ? pw : NULL;
}

/* "<pre><w><post> in '<command>'. Try 'help'.\n" (the word escaped), errno EINVAL, -1. */
static int args_error(FILE *out, const struct pool_args_spec *spec, const char *pre,
                      const char *w, size_t len, const char *post)
{
	pool__word_error(out, pre, w, len, post);
	fprintf(out, " in '%s'. Try 'help'.\n", spec->command);
	errno = EINVAL;
	return -1;
}

int pool__args_parse(FILE *out, const char *args, const struct pool_args_spec *spec,
                     struct pool_args *a)
{
	const char *p = args ? args : "", *w, *seen[POOL_ARGS_GROUPS] = { NULL };
	size_t len, seen_len[POOL_ARGS_GROUPS] = { 0 };
	int have_max = 0;

	memset(a, 0, sizeof(*a));
	while ((w = pool__next_word(&p, &len))) {
		const struct pool_word *pw = find_word(spec, w, len);

		if (pw) {
			unsigned int g = pw->group;
			const char *prev = seen[g];

			POOL_ASSERT(g < POOL_ARGS_GROUPS);
			if (prev && pool__word_is(prev, seen_len[g], pw->word))
				return args_error(out, spec, "Option '", w, len, "' given twice");
			if (prev) {
				pool__word_error(out, "Option '", w, len, "' conflicts with '");
				return args_error(out, spec, "", prev, seen_len[g], "'");
			}
			seen[g] = w;
			seen_len[g] = len;
			if (g == POOL_ARGS_FORMAT)
				a->format = (enum pool_format)pw->value;
			else
				a->value[g] = pw->value;
			if (g != POOL_ARGS_FORMAT && spec->takes[g]) {
				a->arg[g] = pool__next_word(&p, &a->arg_len[g]);
				if (!a->arg[g]) {
					pool__word_error(out, "Option '", w, len, "' needs ");
					return args_error(out, spec, spec->takes_what[g], "", 0,
					                  "");
				}
			}
		} else if (spec->counted && *w >= '0' && *w <= '9') {
			size_t v;

			if (pool__parse_size(w, len, &v) < 0 || v == 0) {
				pool__word_error(out, "Invalid count '", w, len, "' (expected a ");
				fprintf(out, "number of %s from 1 up)", spec->counted);
				return args_error(out, spec, "", "", 0, "");
			}
			if (have_max)
				return args_error(out, spec, "Invalid count '", w, len,
				                  "' (a count was already given)");
			a->max = v;
			have_max = 1;
		} else {
			char usage[POOL_ARGS_USAGE_MAX];

			pool__word_error(out, "Unknown option '", w, len, "' for '");
			fprintf(out, "%s' (expected %s%s%s). Try 'help'.\n", spec->command,
			        pool__args_usage(usage, spec, 0), spec->also ? ", or " : "",
			        spec->also ? spec->also : "");
			errno = EINVAL;
			return -1;
		}
	}
	return 0;
}

/* Append "<sep>[<group>]" to the usage at buf[*at], wrapping as pool__args_usage() says. */
static void usage_add(char *buf, size_t *at, size_t *col, const char *group, size_t wrap)
{
	size_t len = strlen(group);
	int n;

	if (wrap && *col + 1 + len > wrap)
		n = snprintf(buf + *at, POOL_ARGS_USAGE_MAX - *at, "\n    %s", group);
	else
		n = snprintf(buf + *at, POOL_ARGS_USAGE_MAX - *at, " %s", group);
	POOL_ASSERT(n > 0 && *at + (size_t)n < POOL_ARGS_USAGE_MAX);
	*col = wrap && *col + 1 + len > wrap ? 4 + len : *col + (size_t)n;
	*at += (size_t)n;
}

/* Append `word` to the group being written in group[0..gl): "[word" or "|word". */
static size_t group_word(char *group, size_t gl, const char *word)
{
	int n = snprintf(group + gl, POOL_ARGS_USAGE_MAX - gl, "%s%s", gl ? "|" : "[", word);

	POOL_ASSERT(n > 0 && gl + (size_t)n < POOL_ARGS_USAGE_MAX);
	return gl + (size_t)n;
}

const char *pool__args_usage(char *buf, const struct pool_args_spec *spec, size_t wrap)
{
	char group[POOL_ARGS_USAGE_MAX];
	size_t at, col, i, g, gl;

	at = (size_t)snprintf(buf, POOL_ARGS_USAGE_MAX, "%s", spec->command);
	col = 2 + at;
	for (g = 1; g <= POOL_ARGS_GROUPS; g++) {
		unsigned int grp = g < POOL_ARGS_GROUPS ? (unsigned int)g : POOL_ARGS_FORMAT;

		/* a command's groups, then the count, then the formats */
		if (grp == POOL_ARGS_FORMAT && spec->counted) {
			snprintf(group, sizeof(group), "[%s]", spec->count);
			usage_add(buf, &at, &col, group, wrap);
		}
		gl = 0;
		if (grp == POOL_ARGS_FORMAT) {
			for (i = 0; i < NB_FORMATS; i++)
				if (spec->formats & POOL_FORMAT_BIT(format_words[i].value))
					gl = group_word(group, gl, format_words[i].word);
		} else {
			for (i = 0; i < spec->nwords; i++)
				if (spec->words[i].group == grp)
					gl = group_word(group, gl, spec->words[i].word);
			if (gl && spec->takes[grp])
				gl += (size_t)snprintf(group + gl, POOL_ARGS_USAGE_MAX - gl, " %s",
				                       spec->takes[grp]);
		}
		if (!gl)
			continue;
		POOL_ASSERT(gl + 1 < sizeof(group));
		group[gl++] = ']';
		group[gl] = 0;
		usage_add(buf, &at, &col, group, wrap);
	}
	return buf;
}

/* ------------------------------------------------------------------------------------------ */
/* Metric rows                                                                                */
/* ------------------------------------------------------------------------------------------ */

void pool__metrics_json(FILE *out, const struct pool_metric *table, size_t n, const void *of)
{
	size_t k;

	for (k = 0; k < n; k++) {
		const struct pool_metric *m = &table[k];

		fprintf(out, ", \"%s\": ", m->key);
		switch (m->json) {
		case POOL_JSON_UINT:
			fprintf(out, "%" PRIu64, m->value(of));
			break;
		case POOL_JSON_BOOL:
			fputs(m->value(of) ? "true" : "false", out);
			break;
		case POOL_JSON_TENTHS:
			fprintf(out, "%.1f", m->real(of));
			break;
		}
	}
}

void pool__metric_family(FILE *out, const struct pool_metric *m)
{
	POOL_ASSERT(m->name && m->help && m->json == POOL_JSON_UINT);
	pool__prom_family(out, m->name, m->type == POOL_METRIC_COUNTER ? "counter" : "gauge",
	                  m->help);
}

void pool__metric_value(FILE *out, const struct pool_metric *m, const void *of)
{
	fprintf(out, " %" PRIu64 "\n", m->value(of));
}

void pool__metric_sample(FILE *out, const struct pool_metric *m, const void *of)
{
	fputs(m->name, out);
	pool__metric_value(out, m, of);
}
