/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pools - ask a running process that embeds libpool what its pools hold, through the UNIX
 * socket it serves with pool_cli_listen(). See doc/pools.1.
 *
 * Exit status: 0 the command succeeded, 1 the server refused it, 2 the socket cannot be reached
 * or the connection failed (or bad usage). One line on stderr says which.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <pool/pool.h>

#define EXIT_REFUSED     1
#define EXIT_UNREACHABLE 2
#define EXIT_USAGE       2
#define TIMEOUT_MS_DEF   30000L

static const char *prog = "pools";

static void usage(FILE *out)
{
	fprintf(out,
	        "Usage: %s [-S <socket>] [-t <timeout_ms>] [-dM<options>] <command> [<args>...]\n"
	        "Commands (run by the process serving the socket):\n"
	        "  show [byname|bysize|byusage] [detailed] [match <prefix>] [<max>] "
	        "[json|prometheus]\n"
	        "  trim                  give memory the pools do not need back to the system\n"
	        "  debug [<options>]     show or change its run-time debugging options\n"
	        "  topology              the machine topology it detected and its defaults\n"
	        "  help                  the commands the server knows\n"
	        "Options:\n"
	        "  -S <socket>           the socket (default: $POOL_CLI_SOCKET)\n"
	        "  -t <timeout_ms>       wait at most this long for the answer (default 30000)\n"
	        "  -dM<options>          libpool debugging options for this client only "
	        "(-dMhelp lists them)\n"
	        "  -h                    this help\n"
	        "Exit status: 0 success, 1 command refused, 2 socket unreachable or bad usage.\n",
	        prog);
}

static int usage_error(const char *msg, const char *arg)
{
	fprintf(stderr, "%s: %s%s%s\n", prog, msg, arg ? ": " : "", arg ? arg : "");
	usage(stderr);
	return EXIT_USAGE;
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
	const char *path = getenv("POOL_CLI_SOCKET"), *ans, *status;
	long timeout_ms = TIMEOUT_MS_DEF;
	struct sockaddr_un sa;
	size_t cmdlen, bodylen;
	char *cmd, *reply, *body, *end;
	long long deadline;
	int i, fd, ok;

	if (argc > 0 && argv[0] && strrchr(argv[0], '/'))
		prog = strrchr(argv[0], '/') + 1;
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			i++;
			break;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strncmp(a, "-S", 2)) {
			path = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
			if (!path || !*path)
				return usage_error("-S needs a socket path", NULL);
		} else if (!strncmp(a, "-t", 2)) {
			const char *v = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
			char *e;

			errno = 0;
			timeout_ms = v ? strtol(v, &e, 10) : 0;
			if (!v || errno || *e || e == v || timeout_ms <= 0 || timeout_ms > 3600000)
				return usage_error("-t needs a timeout of 1..3600000 ms", v);
		} else if (!strncmp(a, "-dM", 3)) {
			char *err = NULL;
			int r = pool_parse_debugging(a + 3, &err);

			if (r < 0) {
				fprintf(stderr, "%s: -dM: %s\n", prog, err ? err : "invalid options");
				free(err);
				usage(stderr);
				return EXIT_USAGE;
			}
			if (r == 1)
				return 0;   /* -dMhelp: the table is printed */
		} else {
			return usage_error("unknown option", a);
		}
	}
	if (i >= argc)
		return usage_error("no command given", NULL);
	if (!path || !*path)
		return usage_error("no socket: use -S <path> or set POOL_CLI_SOCKET", NULL);
	if (strlen(path) >= sizeof(sa.sun_path))
		return usage_error("socket path too long (at most 107 bytes)", path);

	/* "help" goes as is; every other command is a "pools" command */
	cmdlen = strcmp(argv[i], "help") ? strlen("pools") : 0;
	for (int k = i; k < argc; k++) {
		if (strpbrk(argv[k], "\r\n") || !*argv[k])
			return usage_error("arguments must be non-empty and hold no newline", NULL);
		cmdlen += strlen(argv[k]) + 1;
	}
	if (cmdlen > POOL_CLI_LINE_MAX)
		return usage_error("command line too long (at most 4096 bytes)", NULL);
	cmd = malloc(strlen("set status on\n") + cmdlen + 2);
	if (!cmd) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return EXIT_UNREACHABLE;
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
		fprintf(stderr, "%s: cannot reach socket '%s': %s\n", prog, path, strerror(errno));
		free(cmd);
		return EXIT_UNREACHABLE;
	}
	deadline = now_ms() + timeout_ms;
	reply = NULL;
	if (send_all(fd, cmd, strlen(cmd), deadline) == 0)
		reply = read_answers(fd, 2, deadline);
	free(cmd);
	close(fd);
	if (!reply) {
		fprintf(stderr, "%s: no answer from socket '%s': %s\n", prog, path,
		        errno == ECONNRESET ? "the server closed the connection" : strerror(errno));
		return EXIT_UNREACHABLE;
	}

	/* reply: "OK\n\n" then "<body lines>OK|ERROR\n\n" */
	ans = strncmp(reply, "OK\n\n", 4) ? NULL : reply + 4;
	end = ans ? strstr(ans, "\n\n") : NULL;
	if (!end) {
		fprintf(stderr, "%s: socket '%s' does not speak the libpool CLI protocol\n", prog,
		        path);
		free(reply);
		return EXIT_UNREACHABLE;
	}
	/* the status is the last line of the answer */
	end[1] = 0;
	status = end;
	while (status > ans && status[-1] != '\n')
		status--;
	ok = !strcmp(status, "OK\n");
	if (!ok && strcmp(status, "ERROR\n")) {
		fprintf(stderr, "%s: socket '%s' does not speak the libpool CLI protocol\n", prog,
		        path);
		free(reply);
		return EXIT_UNREACHABLE;
	}
	body = (char *)ans;
	bodylen = (size_t)(status - ans);
	if (ok) {
		fwrite(body, 1, bodylen, stdout);
		free(reply);
		return fflush(stdout) == 0 ? 0 : EXIT_UNREACHABLE;
	}
	if (bodylen && body[bodylen - 1] == '\n')
		bodylen--;
	fprintf(stderr, "%s: command refused by '%s': %.*s\n", prog, path, (int)bodylen, body);
	free(reply);
	return EXIT_REFUSED;
}
