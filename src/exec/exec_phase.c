/*
 * exec_phase.c — charging the work of a run to its phases (load, join,
 * dedup, difference, merge): wall time, and on a device the kernels the
 * backend launched, for gpudl_stats and EXPLAIN ANALYZE.  Every backend
 * operation returns after its results' sizes are known (a device syncs), so
 * the host clock around an operation measures the operation.
 */
#include "exec_int.h"

#include <string.h>

/* The kernels the run's backend launched so far (0 without counters). */
static int64_t
launches_so_far(ExecState *es)
{
	GdlBkCounters cnt;

	if (es->bk->counters == NULL || es->ctx == NULL)
		return 0;
	memset(&cnt, 0, sizeof(cnt));
	es->bk->counters(es->ctx, &cnt);
	return cnt.launches;
}

/* Now, in time and in launches: the start of a phase. */
ExecMark
exec_mark(ExecState *es)
{
	ExecMark	m;

	m.ms = gdl_now_ms();
	m.launches = launches_so_far(es);
	return m;
}

/* Charge what happened since mark m to a phase's time and launch count. */
void
exec_charge(ExecState *es, ExecMark m, double *ms, int64_t *launches)
{
	*ms += gdl_now_ms() - m.ms;
	*launches += launches_so_far(es) - m.launches;
}
