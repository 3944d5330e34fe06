/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Introspection internals shared by src/pool-dump.c and src/pool-cli.c. Private header: never
 * installed.
 */
#ifndef POOL_SRC_POOL_DUMP_H
#define POOL_SRC_POOL_DUMP_H

#include <stddef.h>
#include <stdio.h>

/* Longest piece of client input echoed back in an error message, in bytes. */
#define POOL_ECHO_MAX 64u

/*
 * Write `len` bytes of `word` (client input) so that an error answer stays one printable line:
 * bytes outside 0x20..0x7e and the quote are written as \xNN, and at most POOL_ECHO_MAX input
 * bytes are echoed ("..." marks a cut).
 */
void pool__put_word(FILE *out, const char *word, size_t len);

/*
 * Bytes held from the OS layer by every pool: the sum over pools of allocated * stride, read
 * under the pool list lock without stopping any thread (so a snapshot, not an atomic one).
 */
size_t pool__allocated_bytes(void);

#endif
