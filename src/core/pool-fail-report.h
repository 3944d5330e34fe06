/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * The report of a failed allocation (fail-report debugging): when it is made, and what it
 * says. Private header of the pool heads: its caller is pool-alloc.c.
 */
#ifndef POOL_SRC_POOL_FAIL_REPORT_H
#define POOL_SRC_POOL_FAIL_REPORT_H

#include "base/pool-head-t.h"

/*
 * An allocation from `pool` by `caller` failed (the failure is counted already); `injected`:
 * by fault injection (-dMfail). Reports it on stderr when it starts a burst of failures (none
 * in the second before it), or when a minute passed since the last report of a burst that
 * goes on; the others are counted and the next report says how many it left out. The report
 * names the pool, its limit and counts, the caller and the sites holding the most of the pool
 * (the profile's estimates, or exact counts under `caller` debugging). Allocates nothing: a
 * static buffer reserved for it and write(2); when several threads fail at once, one reports
 * and the others count themselves left out. Never blocks: the profile's lock is only tried.
 */
void pool__fail_report(struct pool_head *pool, const void *caller, int injected);

#endif
