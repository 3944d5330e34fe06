/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * Text helpers of the introspection layer (src/pool-text.c): the JSON string writer is public
 * (pool_json_write_string() in <pool/pool.h>); the tokenizer, the word tables and the escaper of
 * client bytes are shared by src/pool-dump.c and src/pool-cli.c. Private header: never
 * installed.
 */
#ifndef POOL_SRC_POOL_TEXT_H
#define POOL_SRC_POOL_TEXT_H

#include <stddef.h>
#include <stdio.h>
#include <pool/pool.h>

#endif
