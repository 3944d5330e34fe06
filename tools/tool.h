/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * tools/tool.h - what every libpool command-line tool shares: the exit statuses, --version, the
 * -dM option, and the messages for bad options. Every file of a tool may include it: everything
 * here is static inline but tool_name, which the file holding the tool's main() defines. Nothing
 * here is part of the library.
 *
 * Messages follow the GNU coding standards ("program: message"), and a usage error ends with a
 * hint to --help instead of the whole usage text, so the error is the line a user sees:
 *
 *   pool-httpd: bad value '99999' for --port: expected 0..65535
 *   Try 'pool-httpd --help' for more information.
 */
#ifndef POOL_TOOL_H
#define POOL_TOOL_H

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pool/pool.h>

/*
 * Exit statuses, the same in every tool (and documented in each man page):
 *   0  success
 *   1  a failure was found: a command answered an error, a check failed (corruption, objects
 *      still in use at exit, a file that could not be loaded), or an operation failed midway
 *   2  bad usage: an unknown option, a bad value, a missing argument
 *   3  the tool cannot start or connect: socket unreachable, address in use, no memory for the
 *      set-up, a result file that cannot be created
 */
#define TOOL_EXIT_OK          0
#define TOOL_EXIT_FAILURE     1
#define TOOL_EXIT_USAGE       2
#define TOOL_EXIT_UNAVAILABLE 3

/* The tool's name in messages ("pools"), defined by the file that holds the tool's main(). */
extern const char *tool_name;

/* "program: message\n" on stderr. */
static inline void __attribute__((format(printf, 1, 2))) tool_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", tool_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* A usage error: the message, the hint to --help, exit status 2. */
static inline void __attribute__((noreturn, format(printf, 1, 2))) tool_usage_error(const char *fmt,
                                                                                  ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", tool_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help' for more information.\n", tool_name);
	exit(TOOL_EXIT_USAGE);
}

/*
 * --version: the tool's name, the libpool version it was built with and, when it differs, the
 * version of the library it runs with (a shared library upgraded under the tool).
 */
static inline void tool_version(void)
{
	printf("%s (libpool) %s\n", tool_name, POOL_VERSION_STRING);
	if (strcmp(pool_version(), POOL_VERSION_STRING))
		printf("running with libpool %s\n", pool_version());
	printf("License: MIT\n");
}

/*
 * The name of the option getopt_long() returned as `c`, for messages: "--port" when a long
 * option has that value, else "-c". buf holds 64 bytes.
 */
static inline const char *tool_opt_name(const struct option *longopts, int c, char *buf)
{
	for (; longopts && longopts->name; longopts++)
		if (longopts->val == c && !longopts->flag) {
			snprintf(buf, 64, "--%s", longopts->name);
			return buf;
		}
	snprintf(buf, 64, "-%c", c);
	return buf;
}

/*
 * getopt_long() returned '?' (unknown option) or ':' (missing value; the optstring must start
 * with ':' or "+:" for that): say which option, exit 2. Call with opterr = 0.
 */
static inline void __attribute__((noreturn)) tool_getopt_error(int c, const struct option *longopts,
                                                              char **argv)
{
	char name[64];

	if (c == ':')
		tool_usage_error("option '%s' needs a value", optopt ?
		                 tool_opt_name(longopts, optopt, name) : argv[optind - 1]);
	if (optopt && optopt < 128)
		tool_usage_error("unknown option '-%c'", optopt);
	tool_usage_error("unknown option '%s'", argv[optind - 1]);
}

/*
 * A decimal integer value of option `name` in lo..hi; anything else (sign, spaces, suffix,
 * overflow, empty) is a usage error that names the option and the range.
 */
static inline unsigned long tool_parse_ulong(const char *name, const char *val, unsigned long lo,
                                             unsigned long hi)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(val, &end, 10);
	if (*val < '0' || *val > '9' || errno || *end || v < lo || v > hi)
		tool_usage_error("bad value '%s' for %s: expected %lu..%lu", val, name, lo, hi);
	return v;
}

/* A decimal number (fractions allowed) of option `name` in lo..hi, as tool_parse_ulong(). */
static inline double tool_parse_double(const char *name, const char *val, double lo, double hi,
                                       const char *unit)
{
	double v;
	char *end;

	errno = 0;
	v = strtod(val, &end);
	if (end == val || *end || errno || !(v >= lo && v <= hi))
		tool_usage_error("bad value '%s' for %s: expected %g..%g %s", val, name, lo, hi, unit);
	return v;
}

/*
 * -dM<options> (getopt hands "M<options>" as the value of -d) or --debug=<options>: apply them
 * with pool_parse_debugging(). -dMhelp prints the table and exits 0; bad options are a usage
 * error with the parser's message.
 */
static inline void tool_debug_option(int c, const char *val)
{
	char *err = NULL;
	int r;

	if (c == 'd') {
		if (val[0] != 'M')
			tool_usage_error("unknown option '-d%s' (libpool debugging options are -dM...)",
			                 val);
		val++;
	}
	r = pool_parse_debugging(val, &err);
	if (r == 1)
		exit(TOOL_EXIT_OK);
	if (r < 0) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", err ? err : strerror(errno));
		free(err);
		tool_usage_error("%s%s: %s", c == 'd' ? "-dM" : "--debug=", val, msg);
	}
}

/*
 * The options every tool has, for the default case of its getopt_long() switch: -dM<options> and
 * --debug (c is 'd' or 'D'), -h/--help (prints usage(stdout), exits 0), -V/--version (exits 0),
 * and the errors getopt_long() reports (exit 2). Returns only after a debugging option.
 */
static inline void tool_common_option(int c, const struct option *longopts, char **argv,
                                      void (*usage)(FILE *out))
{
	switch (c) {
	case 'd':
	case 'D':
		tool_debug_option(c, optarg);
		return;
	case 'h':
		usage(stdout);
		exit(TOOL_EXIT_OK);
	case 'V':
		tool_version();
		exit(TOOL_EXIT_OK);
	default:
		tool_getopt_error(c, longopts, argv);
	}
}

/* After the options: a tool that takes no operand refuses the first one (exit 2). */
static inline void tool_no_operands(int argc, char **argv)
{
	if (optind < argc)
		tool_usage_error("unexpected argument '%s'", argv[optind]);
}

#endif /* POOL_TOOL_H */
