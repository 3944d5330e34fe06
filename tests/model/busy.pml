/*
 * SPDX-License-Identifier: MIT
 * Copyright (c) 2026 libpool developers
 *
 * A Promela model of the BUSY protocol of libpool's shared free lists, checked exhaustively by
 * spin for NT = 3 threads and NB = 2 buckets. doc/internals.md ("The BUSY protocol model") says
 * what it covers and what it leaves out; tests/model/test_busy_model.sh runs it:
 *
 *   spin -a busy.pml && cc -O2 -DCOLLAPSE -o pan pan.c && ./pan -a -m100000
 *
 * Memory is sequentially consistent here. Each load, store, exchange or compare-and-swap of
 * shared memory is one indivisible step, with the thread-local work around it; threads
 * interleave in every possible order between steps.
 *
 * State. A bucket's head is NIL, a magazine (1..NM) or BUSY. A magazine's `down` is the next
 * magazine of the stack that holds it, and it carries its own object count (nobj). A bucket has
 * two stacks: the one its head points to (magazines with objects) and its empties (etop: empty
 * magazines that threads leave and take again), which only the owner of the head reads or
 * writes, with plain loads and stores, like the bucket's counter (cnt: the objects in its
 * stack). Ghost variables, which the modelled code never reads, record who owns a head (owner),
 * what the owner swapped out of it (transit), who holds a magazine (holder), which magazines
 * went back to the OS layer with their objects (released), and the objects threads handed out
 * (used); the assertions are written over them.
 *
 * The threads. Thread 1 does OPS1 operations, threads 2 and 3 OPS2 and OPS3; each operation is
 * chosen among those the thread may do: pop (when it holds no magazine, or an empty one, which
 * the pop leaves in the bucket's empties), push (when it holds one with objects; the push takes
 * an empty magazine back from the bucket when it has one), hand out the objects of the magazine
 * it holds (which leaves it empty), release a magazine to the OS layer, flush every bucket
 * (thread FLUSHER, once), fork (thread FORKER, once). Thread DIER may die once inside a BUSY
 * window. Thread 3 starts holding magazine 4; the stacks start as bucket 0: 1 -> 2 and bucket 1:
 * 3, with the empty magazine 5 in bucket 1's empties.
 *
 * Variants (spin -DNAME), each of which must fail:
 *   NEG_LOCKFREE_POP     pop reads head->down before it owns the head, then swaps `down` in
 *                        with a compare-and-swap: the lock-free pop whose read of a magazine
 *                        freed under it crashed HAProxy with musl (GH #1275)
 *   NEG_CAS_PUSH         push links the magazine and swaps it in with a compare-and-swap without
 *                        owning the head, and counts it with plain stores as an owner does
 *   NEG_LATE_DEPOSIT     pop leaves its empty magazine in the bucket's empties after it gave
 *                        the head back (a plain load and store of the empties outside the
 *                        BUSY window), racing another owner's withdraw
 *   NEG_UNBOUNDED_FORK   fork_prepare waits without bound for a BUSY head (libpool 0.1.0);
 *                        checked under weak fairness, so the owner always gets to run unless it
 *                        died
 */

#define NT		3		/* threads, ids 1..NT (0 is "nobody") */
#define NB		2		/* buckets */
#define NM		5		/* magazines, ids 1..NM */
#define NIL		0
#define BUSY		255
#define PUSH_TRIES	(2 * NB)	/* a push tries each bucket twice */
#define FLUSH_TRIES	2		/* exchanges (a yield between) before a flush skips a head */
#define FORK_TRIES	2		/* exchanges (a yield between) before fork gives a head up */
#ifndef OPS1
#define OPS1		1		/* operations of thread 1 */
#endif
#ifndef OPS2
#define OPS2		2		/* operations of thread 2 */
#endif
#ifndef OPS3
#define OPS3		2		/* operations of thread 3 */
#endif
#define FORKER		1		/* the thread that may fork, once */
#define FLUSHER		2		/* the thread that may flush every bucket, once */
#define DIER		3		/* the thread that may die inside a BUSY window, once */

byte head[NB];			/* bucket heads: NIL, a magazine, or BUSY */
byte cnt[NB];			/* objects in each bucket's stack: plain loads and stores */
byte etop[NB];			/* each bucket's empties: owner only, plain loads and stores */
byte down[NM + 1];		/* next magazine of the stack, read through a magazine */
byte nobj[NM + 1];		/* objects in each magazine (its holder empties it) */
byte os_objects;		/* objects released to the OS layer (atomic counter) */
byte spilled;			/* of which pushes that met BUSY everywhere (atomic counter) */

/* ghost state, never read by the modelled code */
byte owner[NB];			/* thread owning the head (it swapped BUSY in), 0 if none */
byte transit[NB];		/* what that owner swapped out of the head */
byte holder[NM + 1];		/* thread holding a magazine, 0 if none */
bool released[NM + 1];		/* the magazine went back to the OS layer, with its objects */
byte used;			/* objects threads handed out of the magazines they held */
byte dead;			/* a thread that died inside a BUSY window, 0 if none */
byte running;			/* threads not yet finished */
bool finished;			/* every thread finished and the final checks passed */

/* magazine c may be read (its down, its count): it exists and was not released */
#define READABLE(c)	(c != NIL && c != BUSY && !released[c])

/* h = exchange(head[b], BUSY) (acquire). If h is not BUSY the caller owns the head. */
inline xchg_busy(b, h)
{
	d_step {
		h = head[b];
		head[b] = BUSY;
		if
		:: h != BUSY ->
			assert(owner[b] == 0);
			owner[b] = me;
			transit[b] = h
		:: else
		fi
	}
}

/*
 * The owner stores head b (release) and so gives its ownership up. No ABA: right before the
 * store the head is still BUSY and still ours, and this is the only store of a head.
 */
#define STORE_HEAD(b, v)						\
	assert(head[b] == BUSY && owner[b] == me);			\
	head[b] = v;							\
	owner[b] = 0;							\
	transit[b] = 0

/*
 * The owner of head b, inside its BUSY window, adds n to b's counter: a plain load, then a plain
 * store, another thread may run between them. Thread DIER may die there instead, once: the
 * head then stays BUSY for ever.
 */
inline die_or_count(b, n)
{
	if
	:: me == DIER && dead == 0 -> dead = me; goto died
	:: tmp = cnt[b]; cnt[b] = tmp + n; tmp = 0
	fi
}

/* a thread gives a magazine it holds to the OS layer: nobody may read it afterwards */
#define RELEASE(c)							\
	assert(holder[c] == me && !released[c]);			\
	released[c] = true;						\
	holder[c] = 0;							\
	os_objects = os_objects + nobj[c]

/*
 * pop(start, got): visit each bucket once, from start; got is the magazine popped, now held by
 * this thread, or NIL. The empty magazine the thread held (mine, when empty) is left in that
 * bucket's empties inside the same BUSY window; when no pop succeeds, the thread keeps it. A
 * pass that popped nothing but met a BUSY head goes round again, at most POP_ROUNDS more times
 * (libpool: 8 with pauses between, then 2 after a yield; a head BUSY under a dead owner must not
 * hold the pop for ever).
 */
#ifndef POP_ROUNDS
#define POP_ROUNDS	1
#endif
inline pop(start, got)
{
	got = NIL;
	do
	:: i < NB && got == NIL ->
		d_step { b = (start + i) % NB; i++; h = head[b] }
		if
		:: h == NIL
		:: h == BUSY -> sb = true
#ifdef NEG_LOCKFREE_POP
		:: else ->
			/* the bug: read down through a head we do not own, then CAS */
			d_step { assert(READABLE(h)); d = down[h] }
			d_step {
				if
				:: head[b] == h ->
					head[b] = d;
					assert(holder[h] == 0 && !released[h]);
					holder[h] = me;
					got = h
				:: else
				fi
			}
			if
			:: got != NIL -> tmp = cnt[b]; cnt[b] = tmp - nobj[got]; tmp = 0
			:: else
			fi
#else
		:: else ->
			xchg_busy(b, h);
			if
			:: h == BUSY -> sb = true	/* someone else owns it: BUSY over BUSY */
			:: h == NIL ->		/* emptied in between: put NIL back */
				d_step { STORE_HEAD(b, NIL) }
			:: else ->		/* we own the head and h */
				d_step { assert(READABLE(h)); d = down[h] }
				die_or_count(b, -nobj[h]);
#ifndef NEG_LATE_DEPOSIT
				if
				:: mine != NIL ->	/* deposit: plain stores, owner only */
					d_step {
						assert(owner[b] == me && holder[mine] == me);
						assert(nobj[mine] == 0 && READABLE(mine));
						down[mine] = etop[b];
						etop[b] = mine;
						holder[mine] = 0;
						mine = NIL
					}
				:: else
				fi;
#endif
				d_step {
					STORE_HEAD(b, d);
					assert(holder[h] == 0 && !released[h]);
					holder[h] = me;
					got = h
				}
#ifdef NEG_LATE_DEPOSIT
				/* the bug: after the head went back, a load and a store of the empties */
				if
				:: mine != NIL ->
					e = etop[b];
					d_step {
						down[mine] = e;
						etop[b] = mine;
						holder[mine] = 0;
						mine = NIL;
						e = NIL
					}
				:: else
				fi
#endif
			fi
#endif
		fi;
		atomic { h = NIL; d = NIL }
	:: i >= NB && got == NIL && sb && r < POP_ROUNDS ->	/* met BUSY: once more */
		atomic { i = 0; r++; sb = false }
	:: else -> break
	od;
	atomic { i = 0; b = 0; r = 0; sb = false }
}

/*
 * push(c, start): up to two tries per bucket, cycling from start; if every try met BUSY the
 * magazine goes to the OS layer (counted in spilled). Inside a successful BUSY window the
 * thread takes an empty magazine from the bucket's empties when there is one (into `mine`).
 */
inline push(c, start)
{
	do
	:: t < PUSH_TRIES && !ok ->
		d_step { b = (start + t) % NB; t++; h = head[b] }
		if
		:: h == BUSY
#ifdef NEG_CAS_PUSH
		:: else ->
			/* the bug: link and count without owning the head, then CAS */
			d_step { assert(holder[c] == me); down[c] = h }
			tmp = cnt[b]; cnt[b] = tmp + nobj[c]; tmp = 0;
			d_step {
				if
				:: head[b] == h -> head[b] = c; holder[c] = 0; ok = true
				:: else
				fi
			}
			if
			:: !ok -> tmp = cnt[b]; cnt[b] = tmp - nobj[c]; tmp = 0
			:: else
			fi
#else
		:: else ->
			xchg_busy(b, h);
			if
			:: h == BUSY
			:: else ->	/* we own the head: link c above h */
				d_step { assert(holder[c] == me); down[c] = h }
				die_or_count(b, nobj[c]);
				d_step {	/* withdraw an empty magazine: owner only */
					assert(owner[b] == me);
					e = etop[b];
					if
					:: e != NIL ->
						assert(READABLE(e) && holder[e] == 0 && nobj[e] == 0);
						etop[b] = down[e];
						holder[e] = me
					:: else
					fi
				}
				d_step {
					STORE_HEAD(b, c);
					holder[c] = 0;
					ok = true
				}
			fi
#endif
		fi;
		h = NIL
	:: else -> break
	od;
	if
	:: !ok -> d_step { spilled = spilled + nobj[c]; RELEASE(c) }
	:: else
	fi;
	atomic { t = 0; b = 0; ok = false }
}

/*
 * flush (pool_flush, pool_destroy, a trim that takes whole stacks): for each bucket, own the
 * head within FLUSH_TRIES exchanges, zero its counter, store NIL, then walk the stack it took
 * and release every magazine, reading a magazine's down before releasing it. A head still BUSY
 * after the bound is skipped.
 */
inline flush()
{
	do
	:: b < NB ->
		do
		:: t < FLUSH_TRIES && (t == 0 || h == BUSY) -> xchg_busy(b, h); t++
		:: else -> break
		od;
		if
		:: h != BUSY ->
			cnt[b] = 0;
			d_step {	/* the empties go too (freed): owner only */
				assert(owner[b] == me);
				do
				:: etop[b] != NIL ->
					e = etop[b];
					assert(READABLE(e) && holder[e] == 0 && nobj[e] == 0);
					etop[b] = down[e];
					holder[e] = me;
					RELEASE(e)
				:: else -> break
				od;
				e = NIL
			}
			d_step {
				STORE_HEAD(b, NIL);
				/* ghost: the whole stack is ours now */
				c = h;
				do
				:: c != NIL ->
					assert(holder[c] == 0 && !released[c]);
					holder[c] = me;
					c = down[c]
				:: else -> break
				od
			}
			do
			:: h != NIL ->
				d_step {
					assert(READABLE(h));
					d = down[h];
					RELEASE(h);
					h = d;
					d = NIL
				}
			:: else -> break
			od
		:: else
		fi;
		atomic { b++; t = 0; h = NIL; c = NIL }
	:: else -> break
	od;
	b = 0
}

/*
 * The child's view, computed at the instant of fork() from the parent's memory: the child
 * restores the heads the forker saved and resets the others to NIL. Checked: no head is BUSY
 * (the child pops and pushes without waiting for anyone), the stacks it keeps are sound and
 * counted exactly, and every magazine is in one of them, held, released, or lost with a head
 * the forker could not own or a thread that does not exist in the child.
 */
inline check_child()
{
	do
	:: cb < NB ->
		if
		:: saved[cb] != BUSY -> assert(owner[cb] == me); cc = saved[cb]
		:: else -> cc = NIL
		fi;
		assert(cc != BUSY);
		do
		:: cc != NIL ->
			assert(csteps < NM && READABLE(cc) && holder[cc] == 0);
			cwhere[cc]++;
			csum = csum + nobj[cc];
			cc = down[cc];
			csteps++
		:: else -> break
		od;
		assert(saved[cb] == BUSY || csum == cnt[cb]);
		/* the bucket's empties: kept with an owned head, lost with the others */
		cc = etop[cb];
		csteps = 0;
		do
		:: cc != NIL ->
			assert(csteps < NM && READABLE(cc) && holder[cc] == 0 && nobj[cc] == 0);
			cwhere[cc]++;
			cc = down[cc];
			csteps++
		:: else -> break
		od;
		/* lost to the child: the stack under a head the forker could not own */
		if
		:: saved[cb] == BUSY ->
			if
			:: head[cb] == BUSY -> cc = transit[cb]
			:: else -> cc = head[cb]
			fi;
			csteps = 0;
			do
			:: cc != NIL ->
				assert(csteps < NM && READABLE(cc) && holder[cc] == 0);
				cwhere[cc]++;
				cc = down[cc];
				csteps++
			:: else -> break
			od
		:: else
		fi;
		cb++;
		csum = 0;
		csteps = 0
	:: else -> break
	od;
	cc = 1;
	do
	:: cc <= NM ->
		assert(cwhere[cc] + (released[cc] -> 1 : 0) + (holder[cc] != 0 -> 1 : 0) == 1);
		cwhere[cc] = 0;
		cc++
	:: else -> break
	od;
	cb = 0;
	cc = 0
}

/*
 * fork() from thread FORKER: fork_prepare owns every head it can within FORK_TRIES exchanges
 * each and saves it; fork() happens (the child's view is checked); the parent stores back the
 * heads it saved and leaves the others to their owners.
 */
inline do_fork()
{
	do
	:: b < NB ->
		do
#ifdef NEG_UNBOUNDED_FORK
		:: t == 0 || h == BUSY -> xchg_busy(b, h); t = 1
#else
		:: t < FORK_TRIES && (t == 0 || h == BUSY) -> xchg_busy(b, h); t++
#endif
		:: else -> break
		od;
		atomic { saved[b] = h; b++; t = 0; h = NIL }
	:: else ->
		d_step { check_child() };
		break
	od;
	b = 0;
	do
	:: b < NB ->
		if
		:: saved[b] != BUSY -> d_step { STORE_HEAD(b, saved[b]) }
		:: else
		fi;
		atomic { saved[b] = 0; b++ }
	:: else -> break
	od;
	b = 0
}

proctype thread(byte me; byte mine)
{
	byte i, b, h, d, t, c, e, tmp, ops, got, r;
	bool sb;			/* pop's: a BUSY head met in this pass */
	byte saved[NB];			/* do_fork's */
	byte cwhere[NM + 1], cb, cc, csum, csteps;	/* check_child's */
	bool ok, forked, flushed;

	do
	:: ops < (me == 1 -> OPS1 : (me == 2 -> OPS2 : OPS3)) ->
		if
		:: mine == NIL || nobj[mine] == 0 ->			/* refill */
			pop((me - 1) % NB, got);
			if
			:: got != NIL -> mine = got; got = NIL
			:: else
			fi
		:: mine != NIL && nobj[mine] > 0 ->			/* eviction */
			push(mine, (me - 1) % NB); mine = e; e = NIL
		:: mine != NIL && nobj[mine] > 0 ->			/* hand the objects out */
			d_step { used = used + nobj[mine]; nobj[mine] = 0 }
		:: mine != NIL -> d_step { RELEASE(mine); mine = NIL }	/* gc */
		:: me == FLUSHER && !flushed -> flushed = true; flush()
		:: me == FORKER && !forked -> forked = true; do_fork()
		fi;
		ops++
	:: else -> break
	od;
died:
	running--
}

init
{
	byte b, c, n, sum;
	byte where[NM + 1];

	d_step {
		nobj[1] = 1; nobj[2] = 2; nobj[3] = 1; nobj[4] = 3; nobj[5] = 0;
		head[0] = 1; down[1] = 2; down[2] = NIL; cnt[0] = 3;
		head[1] = 3; down[3] = NIL; cnt[1] = 1;
		etop[1] = 5; down[5] = NIL;
		holder[4] = 3;
		running = NT
	}
	atomic {
		run thread(1, NIL);
		run thread(2, NIL);
		run thread(3, 4)
	}
	running == 0;
	d_step {
		/* every stack sound and counted exactly; a head stays BUSY only under a dead owner */
		do
		:: b < NB ->
			if
			:: head[b] == BUSY ->
				assert(dead != 0 && owner[b] == dead);
				c = transit[b]
			:: else ->
				assert(owner[b] == 0);
				c = head[b]
			fi;
			sum = 0;
			n = 0;
			do
			:: c != NIL ->
				assert(n < NM && READABLE(c) && holder[c] == 0);
				where[c]++;
				sum = sum + nobj[c];
				c = down[c];
				n++
			:: else -> break
			od;
			assert(head[b] == BUSY || sum == cnt[b]);
			/* its empties: empty magazines, each in no other place */
			c = etop[b];
			n = 0;
			do
			:: c != NIL ->
				assert(n < NM && READABLE(c) && holder[c] == 0 && nobj[c] == 0);
				where[c]++;
				c = down[c];
				n++
			:: else -> break
			od;
			b++
		:: else -> break
		od;
		/* no magazine lost or duplicated: each is in one stack, held, or released */
		c = 1;
		sum = 0;
		n = 0;
		do
		:: c <= NM ->
			assert(where[c] + (released[c] -> 1 : 0) + (holder[c] != 0 -> 1 : 0) == 1);
			sum = sum + (released[c] -> nobj[c] : 0);
			n = n + (released[c] -> 0 : nobj[c]);
			c++
		:: else -> break
		od;
		/* and no object: handed out, released, or still in a magazine (7 at the start) */
		assert(os_objects == sum && spilled <= os_objects && used + os_objects + n == 7);
		finished = true
	}
}

/* every thread finishes, whatever the scheduling: no operation waits for another thread */
ltl terminates { <> finished }
