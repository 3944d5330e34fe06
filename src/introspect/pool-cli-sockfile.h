/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The socket files of the CLI server (src/introspect/pool-cli-sockfile.c). Private header.
 */
#ifndef POOL_SRC_POOL_CLI_SOCKFILE_H
#define POOL_SRC_POOL_CLI_SOCKFILE_H

#include <sys/types.h>
#include <sys/un.h>

/* A listening UNIX socket and the file that names it. */
struct pool_cli_sockfile {
	int fd;                          /* listening, non-blocking, close-on-exec */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t dev;                       /* identity of our socket file, to unlink only ours */
	ino_t ino;
};

/*
 * Create the listening socket at f->path (set by the caller) with `mode` and a listen backlog
 * of `backlog`: bound in a private directory next to the final path, then moved there without
 * replacing anything but a stale socket (one nobody listens on). 0 with f->fd, f->dev and
 * f->ino set, or -1 with errno set (EEXIST: something that is not a socket is there;
 * EADDRINUSE: a live socket; ENAMETOOLONG; a system call's) and nothing left behind.
 */
int pool__cli_sockfile_open(struct pool_cli_sockfile *f, unsigned int mode, int backlog);

/* Remove f's socket file, unless the path names another file since. Does not close f->fd. */
void pool__cli_sockfile_unlink(const struct pool_cli_sockfile *f);

#endif
