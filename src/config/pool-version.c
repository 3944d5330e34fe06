/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * pool_version(): the version this library was built as. It is compiled from the same
 * POOL_VERSION_STRING that the installed headers carry, so a program compiled against other
 * headers can tell the two apart at run time.
 */
#include <pool/pool.h>

const char *pool_version(void)
{
	return POOL_VERSION_STRING;
}
