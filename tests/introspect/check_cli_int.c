/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The CLI server's loop and allocations (src/introspect/pool-cli-socket.c), where a test needs a knob that the
 * public API does not have: one client too many when every slot is busy, silent clients that
 * cannot lock a newcomer out (the loop must serve it within a few rounds), a line not finished
 * within the line timeout, and a fault-injection sweep that fails every allocation of the CLI
 * in turn (clean answers, nothing leaked under LeakSanitizer).
 *
 * Internal test: it includes "pool-cli.h" for the line timeout (POOL_CLI_READ_TIMEOUT_MS is
 * fixed in the API: the tests set it to 200 ms, or to 10 minutes so that no client counts as
 * stalled) and the server's round counter, and "pool-fault.h" to fail the CLI's allocations.
 * Everything else of the CLI is tested through the public API in check_cli.c.
 *
 * Check forks every test: each test starts with no pool and no server, and leaves the server
 * stopped.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <pool/pool.h>

#include "introspect/pool-cli.h"
#include "os/pool-fault.h"
#include "testcli.h"
#include "testutil.h"

/* ------------------------------------------------------------------------------------------ */
/* Threads: the server's choice of whom to serve and whom to close                            */
/* ------------------------------------------------------------------------------------------ */

/* Connect and have the server answer an empty line: it has accepted the client. */
static struct conn *conn_accepted(void)
{
	struct conn *c = conn_open();
	char *a;

	conn_puts(c, "\n");
	a = conn_answer(c);
	ck_assert_str_eq(a, "\n");
	free(a);
	return c;
}

/* No byte waiting on c (the server sent it nothing). */
static void conn_nothing_pending(struct conn *c)
{
	char b;

	errno = 0;
	ck_assert_int_eq(recv(c->fd, &b, 1, MSG_DONTWAIT), -1);
	ck_assert(errno == EAGAIN || errno == EWOULDBLOCK);
}

START_TEST(test_too_many_clients)
{
	struct conn *c[POOL_CLI_MAX_CLIENTS], *extra;
	unsigned int i;
	char *a;

	/* no client counts as stalled during this test: only the slot count decides */
	atomic_store(&pool__cli_line_timeout_ms, 600000);
	ck_assert_int_eq(pool_cli_set_timeout_ms(600000), 0);
	start_server();
	/*
	 * Every slot busy: each client is accepted, then stops in the middle of a line (sent with
	 * the empty line, so that the server has read it once the empty line is answered).
	 */
	for (i = 0; i < POOL_CLI_MAX_CLIENTS; i++) {
		c[i] = conn_open();
		conn_puts(c[i], "\npools sh");
		a = conn_answer(c[i]);
		ck_assert_str_eq(a, "\n");
		free(a);
	}
	extra = conn_open();
	conn_expect_eof(extra, "Too many clients: try again later.\n\n");
	conn_close(extra);
	/* the others are still served, and none was closed for the newcomer */
	conn_expect_start(c[7], "ow match nothing", "Dumping pools usage.");
	for (i = 0; i < POOL_CLI_MAX_CLIENTS; i++)
		if (i != 7)
			conn_nothing_pending(c[i]);
	/* c[7] is idle now: the next newcomer takes its slot, and c[7] is told why */
	extra = conn_open();
	conn_expect_start(extra, "pools show", "Dumping pools usage.");
	conn_expect_eof(c[7], "Closing this idle connection: the server is full and a new client "
	                 "came.\n\n");
	conn_close(extra);
	for (i = 0; i < POOL_CLI_MAX_CLIENTS; i++)
		conn_close(c[i]);
	pool_cli_stop();
	remove_tmpdir();
}
END_TEST

#define NB_SILENT (POOL_CLI_MAX_CLIENTS + 16)

START_TEST(test_silent_clients_cannot_lock_out)
{
	struct conn *c[NB_SILENT], *active;
	unsigned long before, rounds;
	unsigned int i, evicted = 0;
	char *a;

	/* neither timeout plays a part: only the choice of whom to close does */
	atomic_store(&pool__cli_line_timeout_ms, 600000);
	ck_assert_int_eq(pool_cli_set_timeout_ms(600000), 0);
	start_server();
	/* half never say a word; half asked something once and went quiet */
	for (i = 0; i < NB_SILENT; i++)
		c[i] = i % 2 ? conn_accepted() : conn_open();
	before = atomic_load(&pool__cli_rounds);
	active = conn_open();
	conn_puts(active, "help\n");
	a = conn_answer(active);
	rounds = atomic_load(&pool__cli_rounds) - before;
	ck_assert_int_eq(strncmp(a, HELP_OPERATOR, strlen(HELP_OPERATOR)), 0);
	free(a);
	/*
	 * Served at once: the accept that took it in, its line, its answer, plus the rounds the
	 * server spent taking in the last silent clients. A server that waited for a silent client
	 * to time out would take no round at all for 10 minutes (the hang guard is 60 s).
	 */
	ck_assert_uint_le(rounds, 8);
	/* exactly as many silent clients were closed as came over the limit, plus one */
	for (i = 0; i < NB_SILENT; i++) {
		char b;
		ssize_t n = recv(c[i]->fd, &b, 1, MSG_DONTWAIT);

		if (n == 1) {
			a = conn_until_eof(c[i]);
			ck_assert_str_eq(a, "losing this idle connection: the server is full and a "
			                 "new client came.\n\n");
			free(a);
			evicted++;
		} else {
			ck_assert_int_eq(n, -1);
		}
	}
	ck_assert_uint_eq(evicted, NB_SILENT - POOL_CLI_MAX_CLIENTS + 1);
	/* and the active client goes on being served */
	conn_expect_start(active, "pools show", "Dumping pools usage.");
	conn_close(active);
	for (i = 0; i < NB_SILENT; i++)
		conn_close(c[i]);
	pool_cli_stop();
	remove_tmpdir();
}
END_TEST

START_TEST(test_line_timeout)
{
	struct conn *slow, *active;

	/* a short line timeout, a long idle timeout */
	atomic_store(&pool__cli_line_timeout_ms, 200);
	start_server();
	slow = conn_accepted();
	conn_puts(slow, "pools sh");
	active = conn_open();
	conn_expect_start(active, "help", HELP_OPERATOR);
	/* the unfinished line is refused and the connection closed, long before 10 s */
	conn_expect_eof(slow, "Line not finished within the line timeout: closing.\n\n");
	conn_close(slow);
	/* an idle client (between commands) is not concerned */
	conn_expect_start(active, "pools show match x", "Dumping pools usage.");
	conn_close(active);
	pool_cli_stop();
	remove_tmpdir();
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Faults: every allocation of the CLI failed in turn                                          */
/* ------------------------------------------------------------------------------------------ */

/*
 * The sweep runs in a child of its own (`check_cli --fault-sweep <dir>`, without Check), so
 * that under AddressSanitizer it can run with LeakSanitizer on (tests/run.sh turns it off for
 * the tests that end with objects handed out on purpose): a leak fails its exit status.
 */
#define SWEEP_FAIL(...) do { fprintf(stderr, "fault sweep: " __VA_ARGS__); return -1; } while (0)

static const char *const sweep_cmds[] = {
	"pools show detailed", "show pools json detailed", "pools show prometheus byname",
	"pools debug no-merge", "pools debug merge", "pools debug", "pools flush sweep",
	"pools trim", "help", "pools limit sweep 100", "pools limit sweep 0", "pools topology",
};
#define NB_SWEEP_CMDS (sizeof(sweep_cmds) / sizeof(sweep_cmds[0]))

/* Every command through pool_cli_exec(): it succeeds, or fails cleanly for lack of memory. */
static int sweep_exec_pass(void)
{
	unsigned int i;

	for (i = 0; i < NB_SWEEP_CMDS; i++) {
		unsigned int flags = pool_debugging;
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		int r, e;

		if (!f)
			SWEEP_FAIL("open_memstream\n");
		errno = 0;
		r = pool_cli_exec(sweep_cmds[i], f);
		e = errno;
		fclose(f);
		if (r != 0) {
			/* one line, saying why, errno ENOMEM, nothing changed */
			if (e != ENOMEM || strncmp(buf, "Not enough memory ", 18) != 0 ||
			    strchr(buf, '\n') != buf + len - 1 || pool_debugging != flags) {
				fprintf(stderr, "fault sweep: '%s' failed uncleanly (errno %d): %s",
				        sweep_cmds[i], e, buf);
				free(buf);
				return -1;
			}
		}
		free(buf);
	}
	return 0;
}

/*
 * The same through a socket: every answer is the command's, or says that memory ran out (and
 * then, when not even the answer could be allocated, the connection ends); a client the server
 * cannot allocate is told so. Nothing of the server is left behind when listening fails.
 */
static int sweep_socket_pass(const char *dir)
{
	char path[128], req[1024], *buf, *a, *end;
	size_t n = 0, cap = 1 << 20;
	unsigned int i, answers = 0;
	struct stat st;
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "%s/sweep.sock", dir);
	if (pool_cli_listen_level(path, POOL_CLI_ADMIN, 0600) < 0) {
		DIR *d;
		struct dirent *de;

		if (errno != ENOMEM)
			SWEEP_FAIL("listen: %s\n", strerror(errno));
		if (lstat(path, &st) == 0)
			SWEEP_FAIL("a failed listen left %s behind\n", path);
		d = opendir(dir);
		while (d && (de = readdir(d)))
			if (de->d_name[0] == '.' && de->d_name[1] == 'p')
				SWEEP_FAIL("a failed listen left %s/%s behind\n", dir, de->d_name);
		if (d)
			closedir(d);
		return 0;
	}
	{
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		struct timeval tv = { .tv_sec = 60 };   /* a hang guard, as for the other tests */

		if (strlen(path) >= sizeof(sa.sun_path))
			SWEEP_FAIL("%s: too long\n", path);
		memcpy(sa.sun_path, path, strlen(path) + 1);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
		    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
			SWEEP_FAIL("connect: %s\n", strerror(errno));
	}
	snprintf(req, sizeof(req), "set status on\n");
	for (i = 0; i < NB_SWEEP_CMDS; i++)
		snprintf(req + strlen(req), sizeof(req) - strlen(req), "%s\n", sweep_cmds[i]);
	strcat(req, "quit\n");
	/* a client the server could not allocate may be closed before this: read its answer */
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req) &&
	    errno != EPIPE && errno != ECONNRESET)
		SWEEP_FAIL("send: %s\n", strerror(errno));
	buf = malloc(cap);
	if (!buf)
		SWEEP_FAIL("malloc\n");
	while (n < cap - 1 && (r = recv(fd, buf + n, cap - 1 - n, 0)) > 0)
		n += (size_t)r;
	buf[n] = 0;
	close(fd);
	pool_cli_stop();
	if (lstat(path, &st) == 0)
		SWEEP_FAIL("pool_cli_stop() left %s behind\n", path);
	if (!strcmp(buf, "Not enough memory for a new client: try again later.\n\n")) {
		free(buf);
		return 0;
	}
	for (a = buf; *a; a = end + 2, answers++) {
		const char *last;

		end = strstr(a, "\n\n");
		if (!end) {
			fprintf(stderr, "fault sweep: an answer does not end: %s\n", a);
			free(buf);
			return -1;
		}
		/* its status line: OK, or ERROR after a line saying that memory ran out */
		last = end;
		while (last > a && last[-1] != '\n')
			last--;
		if (!strncmp(last, "OK\n", 3))
			continue;
		if (strncmp(last, "ERROR\n", 6) != 0 || strncmp(a, "Not enough memory ", 18) != 0) {
			fprintf(stderr, "fault sweep: unexpected answer: %.*s\n", (int)(end - a), a);
			free(buf);
			return -1;
		}
		if (!strncmp(a, "Not enough memory to answer: closing.\n", 38) && end[2]) {
			fprintf(stderr, "fault sweep: answers after the closing one: %s\n", end + 2);
			free(buf);
			return -1;
		}
	}
	if (answers > NB_SWEEP_CMDS + 1 || (answers < NB_SWEEP_CMDS + 1 &&
	                                    !strstr(buf, "Not enough memory to answer: closing."))) {
		fprintf(stderr, "fault sweep: %u answers for %u lines: %s\n", answers,
		        (unsigned int)NB_SWEEP_CMDS + 1, buf);
		free(buf);
		return -1;
	}
	free(buf);
	return 0;
}

/* Fail the k-th CLI allocation of `pass` for k = 1..K, K the allocations of a whole pass. */
static int sweep(int (*pass)(const char *), const char *dir, const char *name)
{
	unsigned long k, calls, seen;

	pool__fault_arm(POOL_FAULT_CLI, ULONG_MAX);
	if (pass(dir) < 0)
		return -1;
	calls = pool__fault_arm(POOL_FAULT_CLI, 0);
	if (calls < 5)
		SWEEP_FAIL("%s: only %lu allocations to fail\n", name, calls);
	for (k = 1; k <= calls; k++) {
		pool__fault_arm(POOL_FAULT_CLI, k);
		if (pass(dir) < 0)
			SWEEP_FAIL("%s: with allocation %lu of %lu failing\n", name, k, calls);
		seen = pool__fault_arm(POOL_FAULT_CLI, 0);
		if (seen < k)
			SWEEP_FAIL("%s: allocation %lu never came (%lu calls)\n", name, k, seen);
	}
	/* and everything works again */
	if (pass(dir) < 0)
		SWEEP_FAIL("%s: after the sweep\n", name);
	printf("%s: %lu allocations failed in turn\n", name, calls);
	return 0;
}

static int sweep_exec(const char *dir)
{
	(void)dir;
	return sweep_exec_pass();
}

/* `check_cli_int --fault-sweep <dir>`: both sweeps, 0 when clean; -1 without those arguments. */
static int fault_sweep_main(int argc, char **argv)
{
	const char *dir;
	struct pool_head *p;
	void *o[64];
	unsigned int i;
	int ret;

	if (argc != 3 || strcmp(argv[1], "--fault-sweep") != 0)
		return -1;
	dir = argv[2];
	p = pool_create("sweep", 128, 0);
	if (!p)
		return 2;
	for (i = 0; i < 64; i++)
		o[i] = pool_alloc(p);
	for (i = 0; i < 32; i++)
		pool_free(p, o[i]);
	ret = sweep(sweep_exec, dir, "pool_cli_exec") < 0 ||
	      sweep(sweep_socket_pass, dir, "socket") < 0;
	for (i = 32; i < 64; i++)
		pool_free(p, o[i]);
	pool_thread_flush();
	if (pool_destroy(p) != 0)
		return 3;
	return ret;
}

START_TEST(test_fault_sweep)
{
	char *argv[] = { "check_cli_int", "--fault-sweep", tmpdir, NULL };
	const char *asan = getenv("ASAN_OPTIONS");
	static char out[16384];
	char opts[512];
	int status;

	make_tmpdir();
	/* LeakSanitizer on (where AddressSanitizer runs): a leak fails the child */
	snprintf(opts, sizeof(opts), "%s%sdetect_leaks=1", asan ? asan : "", asan ? ":" : "");
	status = test_run_self(argv, "ASAN_OPTIONS", opts, out, sizeof(out));
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	              "fault sweep: status 0x%x:\n%s", status, out);
	ck_assert_ptr_nonnull(strstr(out, "pool_cli_exec: "));
	ck_assert_ptr_nonnull(strstr(out, "socket: "));
	remove_tmpdir();
}
END_TEST

static Suite *cli_int_suite(void)
{
	Suite *s = suite_create("cli_int");
	TCase *tc;

	tc = tcase_create("Faults");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_fault_sweep);
	suite_add_tcase(s, tc);

	tc = tcase_create("Threads");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_too_many_clients);
	tcase_add_test(tc, test_silent_clients_cannot_lock_out);
	tcase_add_test(tc, test_line_timeout);
	suite_add_tcase(s, tc);
	return s;
}

POOL_TEST_MAIN_ARGS(cli_int_suite, fault_sweep_main)
