/*
 * exec_mem.c — the engine's memory accounting for slicing: how many rows a
 * join may produce at once so that the backend context stays under its
 * memory limit.
 *
 * The limit is GdlRunInput.memory_limit (gpudl.device_memory_limit on the
 * GPU, the room left under gpudl.host_memory_limit on the CPU), or what the
 * backend says it can hold (GdlBkCounters.bytes_capacity: a device's free
 * memory).  Before each join the engine asks the backend for the exact
 * output row count (join_count) and for the bytes it holds now
 * (bytes_held; or the host, GdlRunInput.memory_held, for a CPU run whose
 * scratch the backend does not count), so sizes are known BEFORE anything
 * is allocated; a join
 * whose output would not fit runs over slices of its left input, each
 * slice's output reduced (dedup, minus full) before the next (exec_rule.c).
 * A slice's output costs about JOIN_ROW_COPIES times its raw size at its
 * peak (the bag, the sorted copy and scratch of its dedup, the difference
 * against full), so the rows allowed are the free room divided by that.
 */
#include "exec_int.h"

#include <string.h>

/* Live copies of a slice's output at the peak of its reduction. */
#define JOIN_ROW_COPIES 4

/* Fraction (in 1/16) of the limit the engine plans to use: slack for the rest. */
#define LIMIT_SIXTEENTHS 14

/* Fewest rows a slice is made to produce: smaller slices cost more than they save. */
#define MIN_SLICE_ROWS 64

/*
 * A device run without a set limit keeps a slice's reduction under
 * 1/LEAN_SHARE of the bytes the run holds (its `full`, delta and inputs),
 * but never below the batch size: the peak then stays near the result
 * (issue 13: bytes per result tuple) while big slices keep the device busy.
 */
#define LEAN_SHARE 2

/*
 * A device backend with a set limit of at least OVERFLOW_MIN_LIMIT bytes
 * puts what passes the limit in host memory (cuda/pool.cu, host overflow)
 * rather than failing, so its slices are never made smaller than
 * 1/OVERFLOW_SLICE_SHARE of the limit: tiny slices when the room left is
 * small cost far more (one join and reduction each) than a transient on
 * the host.  (SG p2p-Gnutella04 at a third of its peak: 204,929 slices.)
 */
#define OVERFLOW_MIN_LIMIT ((int64_t) 16 << 20)
#define OVERFLOW_SLICE_SHARE 16

/* Bytes a backend's join_count may hold per left row (exec_mem_left_rows). */
#define LEFT_ROW_BYTES 32

/* The backend's counters (zeroed when it keeps none). */
static void
mem_counters(ExecState *es, GdlBkCounters *cnt)
{
	memset(cnt, 0, sizeof(*cnt));
	if (es->bk->counters)
		es->bk->counters(es->ctx, cnt);
}

/* The fewest rows of per_row bytes a slice is made of (see OVERFLOW_MIN_LIMIT). */
static int64_t
mem_floor_rows(ExecState *es, int64_t per_row)
{
	int64_t		rows = MIN_SLICE_ROWS;

	if (es->mem_set && es->mem_limit >= OVERFLOW_MIN_LIMIT && !es->mem_held &&
		es->bk->name && strcmp(es->bk->name, "cuda") == 0)
	{
		int64_t		r = es->mem_limit / OVERFLOW_SLICE_SHARE / per_row;

		if (r > rows)
			rows = r;
	}
	return rows;
}

/*
 * Settle the run's memory limit once the backend context exists: the
 * host's limit, else the backend's capacity, else none (0).
 */
void
exec_mem_init(ExecState *es, const GdlRunInput *in)
{
	GdlBkCounters cnt;

	mem_counters(es, &cnt);
	es->mem_limit = in->memory_limit > 0 ? in->memory_limit : cnt.bytes_capacity;
	es->mem_set = in->memory_limit > 0;
	es->mem_held = in->memory_held;
	es->mem_arg = in->memory_arg;
	if (es->mem_limit < 0)
		es->mem_limit = 0;
}

/*
 * The most output rows of 'nout' columns a join may produce now: as many as
 * fit, with their reduction, in the room the backend has left under the
 * limit, never below MIN_SLICE_ROWS (nor, for a device with host overflow,
 * 1/OVERFLOW_SLICE_SHARE of the limit; past the limit, the backend or the
 * host says so).  Under a limit the host set (GdlRunInput.memory_limit:
 * every CPU run, a GPU run with gpudl.device_memory_limit) no more than
 * the engine's batch size either, which keeps a CPU run's peak near its
 * result; a device without a set limit is bounded by its free memory and
 * by LEAN_SHARE (a slice's reduction under half of what the run holds, at
 * least the batch size), so runs that fit are split only in big slices.  Without any known limit, the batch size
 * (gdl_engine_set_batch_rows).  0 = no bound.
 */
int64_t
exec_mem_join_rows(ExecState *es, int nout)
{
	int64_t		rows;
	GdlBkCounters cnt;
	int64_t		room,
				per_row;

	if (es->mem_limit <= 0)
		return es->batch_rows;
	if (es->mem_held)
		cnt.bytes_held = es->mem_held(es->mem_arg);
	else
		mem_counters(es, &cnt);
	room = es->mem_limit / 16 * LIMIT_SIXTEENTHS - cnt.bytes_held;
	/* a packed row takes 8 bytes, a wide one 8 per column: plan for the wide */
	per_row = (int64_t) 8 * (nout > 0 ? nout : 1) * JOIN_ROW_COPIES;
	room = room > 0 ? room / per_row : 0;
	rows = mem_floor_rows(es, per_row);
	if (room > rows)
		rows = room;
	if (es->mem_set && es->batch_rows > 0 && es->batch_rows < rows)
		rows = es->batch_rows;
	if (!es->mem_set && es->batch_rows > 0)
	{
		int64_t		lean = cnt.bytes_held / (per_row * LEAN_SHARE);

		if (lean < es->batch_rows)
			lean = es->batch_rows;
		if (lean < rows)
			rows = lean;
	}
	return rows;
}

/*
 * The most LEFT rows a join may take at once: join_count itself holds
 * about LEFT_ROW_BYTES per left row (the CUDA backend's per-row counts,
 * first match and offsets) before the engine can decide to slice, so
 * under a limit a left input past the room left is sliced first.  0 = no
 * bound (no limit known).
 */
int64_t
exec_mem_left_rows(ExecState *es)
{
	GdlBkCounters cnt;
	int64_t		room;

	if (es->mem_limit <= 0 || !es->mem_set)
		return 0;
	if (es->mem_held)
		cnt.bytes_held = es->mem_held(es->mem_arg);
	else
		mem_counters(es, &cnt);
	room = es->mem_limit / 16 * LIMIT_SIXTEENTHS - cnt.bytes_held;
	room = room > 0 ? room / 2 / LEFT_ROW_BYTES : 0;
	return room < mem_floor_rows(es, LEFT_ROW_BYTES) ? mem_floor_rows(es, LEFT_ROW_BYTES) : room;
}
