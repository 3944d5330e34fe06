/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pools - ask a running process that embeds libpool what its pools hold, through the UNIX
 * socket it serves with pool_cli_listen(). See pools(1).
 *
 * Exit status (tools/tool.h): 0 the command succeeded, 1 the server answered an error, 2 bad
 * usage, 3 the socket cannot be reached, the connection failed or the peer does not speak the
 * protocol. One line on stderr says which.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <pool/pool.h>

#include "tool.h"

const char *tool_name = "pools";

#define TIMEOUT_MS_DEF   30000UL
#define TIMEOUT_MS_MAX   3600000UL

/*
 * The commands, from the library's own table: `help` run in this process by
 * pool_cli_exec_level() at each level, each level's new entries under its heading (an entry is
 * its usage line and the lines indented under it). The socket-only part is left out: this tool
 * sends "pools <command>" (or "help") and nothing else.
 */
static void usage_commands(FILE *out)
{
	static const struct {
		enum pool_cli_level level;
		const char *heading;
	} levels[] = {
		{ POOL_CLI_USER, "level user" },
		{ POOL_CLI_OPERATOR, "level operator, also" },
		{ POOL_CLI_ADMIN, "level admin, also" },
	};
	char *prev = NULL;
	size_t i;

	for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		char *buf = NULL, *p, *end, *next;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);

		if (!m || pool_cli_exec_level("help", m, levels[i].level) < 0 || fclose(m) != 0) {
			fputs("  (the list needs memory: see pools(1))\n", out);
			free(buf);
			break;
		}
		end = strstr(buf, "\nOn the socket only:");
		end = end ? end + 1 : buf + len;
		p = strchr(buf, '\n');           /* past "Commands at level ...:" */
		p = p ? p + 1 : end;
		fprintf(out, "Commands at %s (run by the process serving the socket):\n",
		        levels[i].heading);
		for (; p < end; p = next) {
			/* an entry: "  <usage>", then the lines indented more */
			for (next = strchr(p, '\n') + 1; next < end && next[2] == ' '; )
				next = strchr(next, '\n') + 1;
			if (!prev || !memmem(prev, strlen(prev), p, (size_t)(next - p)))
				fwrite(p, 1, (size_t)(next - p), out);
		}
		free(prev);
		prev = buf;
	}
	free(prev);
}

static void usage(FILE *out)
{
	fputs("Usage: pools [-S <socket>] [-t <timeout_ms>] [-dM<options>] <command> [<args>...]\n"
	      "Sends one command to the libpool CLI socket of a running process and prints the\n"
	      "answer. The command is written as the help below lists it (\"pools show json\",\n"
	      "\"pools help\"): its words after \"pools\" go to the socket as they are.\n", out);
	usage_commands(out);
	fprintf(out,
	        "Options:\n"
	        "  -S, --socket <path>   the socket (default: $POOL_CLI_SOCKET)\n"
	        "  -t, --timeout-ms <ms> wait at most this long for the answer, 1..%lu (default %lu)\n"
	        "  -dM<options>, --debug <options>\n"
	        "                        libpool debugging options for this client only "
	        "(-dMhelp lists them)\n"
	        "  -h, --help            this help\n"
	        "  -V, --version         the version\n"
	        "Exit status: 0 success, 1 the server answered an error (or the socket's level\n"
	        "does not allow the command), 2 bad usage, 3 socket unreachable or no answer.\n",
	        TIMEOUT_MS_MAX, TIMEOUT_MS_DEF);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Send all of buf; 0 or -1 with errno (ETIMEDOUT when the deadline passed). */
static int send_all(int fd, const char *buf, size_t len, long long deadline)
{
	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		long long left = deadline - now_ms();
		ssize_t n;

		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return -1;
		n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Read until `answers` answers (each ends with an empty line) have arrived. Returns the
 * malloc()ed text, NUL-terminated, or NULL with errno: ECONNRESET when the server closed the
 * connection first, ETIMEDOUT, ENOMEM, or the errno of recv().
 */
static char *read_answers(int fd, unsigned int answers, long long deadline)
{
	size_t len = 0, cap = 4096, scan = 0;
	char *buf = malloc(cap);
	unsigned int seen = 0;

	if (!buf)
		return NULL;
	while (seen < answers) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		long long left = deadline - now_ms();
		ssize_t n;

		if (left <= 0) {
			errno = ETIMEDOUT;
			goto fail;
		}
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			goto fail;
		if (len + 1 == cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				goto fail;
			buf = nb;
			cap *= 2;
		}
		n = recv(fd, buf + len, cap - len - 1, MSG_DONTWAIT);
		if (n == 0) {
			errno = ECONNRESET;
			goto fail;
		}
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			goto fail;
		}
		len += (size_t)n;
		/* an answer ends at "\n\n"; in status mode no answer starts with "\n" */
		for (; seen < answers && scan + 1 < len; scan++)
			if (buf[scan] == '\n' && buf[scan + 1] == '\n') {
				seen++;
				scan++;
			}
	}
	buf[len] = 0;
	return buf;
fail:
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket",     required_argument, NULL, 'S' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "debug",      required_argument, NULL, 'D' },
		{ "help",       no_argument,       NULL, 'h' },
		{ "version",    no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *path = getenv("POOL_CLI_SOCKET"), *ans, *status;
	unsigned long timeout_ms = TIMEOUT_MS_DEF;
	struct sockaddr_un sa;
	size_t cmdlen, bodylen;
	char *cmd, *reply, *body, *end;
	long long deadline;
	int i, c, fd, ok;

	opterr = 0;
	/* '+': options end at the command; what follows goes to the server as is */
	while ((c = getopt_long(argc, argv, "+:S:t:d:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'S':
			if (!*optarg)
				tool_usage_error("bad value '' for --socket: expected a socket path");
			path = optarg;
			break;
		case 't':
			timeout_ms = tool_parse_ulong("--timeout-ms", optarg, 1, TIMEOUT_MS_MAX);
			break;
		default:
			tool_common_option(c, longopts, argv, usage);
		}
	}
	i = optind;
	if (i >= argc)
		tool_usage_error("no command given");
	if (!path || !*path)
		tool_usage_error("no socket: use -S <path> or set POOL_CLI_SOCKET");
	if (strlen(path) >= sizeof(sa.sun_path))
		tool_usage_error("socket path '%s' is longer than %zu bytes", path,
		                 sizeof(sa.sun_path) - 1);

	/* "help" goes as is; every other command is a "pools" command */
	cmdlen = strcmp(argv[i], "help") ? strlen("pools") : 0;
	for (int k = i; k < argc; k++) {
		if (strpbrk(argv[k], "\r\n") || !*argv[k])
			tool_usage_error("arguments must be non-empty and hold no newline");
		cmdlen += strlen(argv[k]) + 1;
	}
	if (cmdlen > POOL_CLI_LINE_MAX)
		tool_usage_error("command line too long (at most %u bytes)", POOL_CLI_LINE_MAX);
	cmd = malloc(strlen("set status on\n") + cmdlen + 2);
	if (!cmd) {
		tool_error("out of memory");
		return TOOL_EXIT_FAILURE;
	}
	strcpy(cmd, "set status on\n");
	if (strcmp(argv[i], "help"))
		strcat(cmd, "pools ");
	for (int k = i; k < argc; k++) {
		strcat(cmd, argv[k]);
		strcat(cmd, k + 1 < argc ? " " : "\n");
	}

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		tool_error("cannot reach socket '%s': %s", path, strerror(errno));
		free(cmd);
		return TOOL_EXIT_UNAVAILABLE;
	}
	deadline = now_ms() + timeout_ms;
	reply = NULL;
	if (send_all(fd, cmd, strlen(cmd), deadline) == 0)
		reply = read_answers(fd, 2, deadline);
	free(cmd);
	close(fd);
	if (!reply) {
		tool_error("no answer from socket '%s': %s", path,
		           errno == ECONNRESET ? "the server closed the connection" : strerror(errno));
		return TOOL_EXIT_UNAVAILABLE;
	}

	/* reply: "OK\n\n" then "<body lines>OK|ERROR\n\n" */
	ans = strncmp(reply, "OK\n\n", 4) ? NULL : reply + 4;
	end = ans ? strstr(ans, "\n\n") : NULL;
	if (!end) {
		tool_error("socket '%s' does not speak the libpool CLI protocol", path);
		free(reply);
		return TOOL_EXIT_UNAVAILABLE;
	}
	/* the status is the last line of the answer */
	end[1] = 0;
	status = end;
	while (status > ans && status[-1] != '\n')
		status--;
	ok = !strcmp(status, "OK\n");
	if (!ok && strcmp(status, "ERROR\n")) {
		tool_error("socket '%s' does not speak the libpool CLI protocol", path);
		free(reply);
		return TOOL_EXIT_UNAVAILABLE;
	}
	body = (char *)ans;
	bodylen = (size_t)(status - ans);
	if (ok) {
		fwrite(body, 1, bodylen, stdout);
		free(reply);
		if (fflush(stdout) != 0) {
			tool_error("cannot write the answer: %s", strerror(errno));
			return TOOL_EXIT_FAILURE;
		}
		return TOOL_EXIT_OK;
	}
	if (bodylen && body[bodylen - 1] == '\n')
		bodylen--;
	tool_error("command refused by '%s': %.*s", path, (int)bodylen, body);
	free(reply);
	return TOOL_EXIT_FAILURE;
}
