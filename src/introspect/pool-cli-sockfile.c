/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The socket files of the CLI server (src/introspect/pool-cli-socket.c): made so that no other
 * user can meddle, removed only while they are still ours.
 *
 * The socket file is never created through a name another user can change: bind() happens in
 * a fresh private directory (mkdtemp(3), mode 0700) next to the final path, the mode is set
 * there, and the socket is moved to its final name with renameat2(RENAME_NOREPLACE) (link(2)
 * and unlink(2) where the file system lacks the flag), which replaces nothing and follows no
 * symbolic link. A stale socket in the way (a socket file nobody listens on) is removed and the
 * move tried again.
 *
 * A file is removed (at pool_cli_stop(), at unload) only if the path still names the socket
 * this process bound (same device and inode): a socket another process put there since is left.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "introspect/pool-cli-sockfile.h"

/* Is a process serving `path`? 1: yes, 0: nobody (stale socket), -1: error in errno. */
static int socket_alive(const char *path)
{
	struct sockaddr_un sa;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), ret;

	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	ret = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	if (ret == 0)
		return 1;
	if (errno == ECONNREFUSED || errno == ENOENT)
		return 0;
	return -1;
}

/* Move `from` to `to` unless `to` exists (EEXIST); never follows a symbolic link at `to`. */
static int move_noreplace(const char *from, const char *to)
{
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	/* a file system without RENAME_NOREPLACE: link(2) never replaces either */
	if (link(from, to) < 0)
		return -1;
	unlink(from);
	return 0;
}

int pool__cli_sockfile_open(struct pool_cli_sockfile *l, unsigned int mode, int backlog)
{
	char dir[sizeof(l->path)], tmp[sizeof(l->path) + 2];
	const char *slash = strrchr(l->path, '/');
	struct sockaddr_un sa;
	struct stat st, sock_st;
	int fd, err, tries;

	/* "<dir>/.plXXXXXX" then "<dir>/.plXXXXXX/s" */
	if (snprintf(dir, sizeof(dir), "%.*s.plXXXXXX", slash ? (int)(slash - l->path) + 1 : 0,
	             l->path) >= (int)sizeof(dir) - 2) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (!mkdtemp(dir))
		return -1;
	snprintf(tmp, sizeof(tmp), "%s/s", dir);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail_dir;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, tmp, strlen(tmp) + 1);
	/*
	 * Nobody else can enter the 0700 directory, so chmod() reaches our socket and nothing
	 * else; nobody can connect before listen(), so the mode is right before anyone may use it.
	 */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto fail_fd;
	if (chmod(tmp, mode) < 0 || lstat(tmp, &sock_st) < 0 ||
	    listen(fd, backlog) < 0)
		goto fail_sock;
	for (tries = 0;; tries++) {
		int alive;

		if (move_noreplace(tmp, l->path) == 0)
			break;
		if (errno != EEXIST || tries == 3)
			goto fail_sock;
		/* something is there: a stale socket is replaced, anything else refused */
		if (lstat(l->path, &st) < 0) {
			if (errno == ENOENT)
				continue;
			goto fail_sock;
		}
		if (!S_ISSOCK(st.st_mode)) {
			errno = EEXIST;
			goto fail_sock;
		}
		alive = socket_alive(l->path);
		if (alive != 0) {
			if (alive > 0)
				errno = EADDRINUSE;
			goto fail_sock;
		}
		if (unlink(l->path) < 0 && errno != ENOENT)
			goto fail_sock;
	}
	rmdir(dir);
	l->fd = fd;
	l->dev = sock_st.st_dev;   /* the inode moved with its name */
	l->ino = sock_st.st_ino;
	return 0;

fail_sock:
	err = errno;
	unlink(tmp);
	errno = err;
fail_fd:
	err = errno;
	close(fd);
	errno = err;
fail_dir:
	err = errno;
	rmdir(dir);
	errno = err;
	return -1;
}

void pool__cli_sockfile_unlink(const struct pool_cli_sockfile *l)
{
	struct stat st;

	if (lstat(l->path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == l->dev &&
	    st.st_ino == l->ino)
		unlink(l->path);
}
