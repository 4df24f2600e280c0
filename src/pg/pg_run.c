/*
 * pg_run.c — one evaluation from SQL: take the compiled plan (cached), parse
 * the goal, pick the device, read the tables the goal needs, run the engine
 * and keep its counters for gpudl_stats().
 */
#include "gpudl_run.h"

#include "miscadmin.h"

/* Copy the engine's counters of a finished run into the session's. */
static void
record_stats(const GdlResult *r)
{
	const GdlRunStats *s = &r->stats;

	gpudl_counters.runs++;
	gpudl_counters.last_iterations = s->iterations;
	gpudl_counters.last_tuples = s->tuples_derived;
	gpudl_counters.last_result_rows = r->count;
	gpudl_counters.last_ms_total = s->ms_total;
	gpudl_counters.last_ms_load = s->ms_load;
	gpudl_counters.last_ms_join = s->ms_join;
	gpudl_counters.last_ms_dedup = s->ms_dedup;
	gpudl_counters.last_ms_difference = s->ms_difference;
	gpudl_counters.last_ms_merge = s->ms_merge;
	gpudl_counters.bytes_to_device += s->bytes_to_device;
	gpudl_counters.bytes_from_device += s->bytes_from_device;
	gpudl_counters.device_transfers += s->transfers;
}

/* Evaluate a program for a goal; everything lives in the caller's context. */
GpudlRun *
gpudl_run_goal(const char *program, const char *goal_text, bool want_rows)
{
	GpudlRun   *run = palloc0(sizeof(GpudlRun));
	GdlRunInput in;
	GdlGoal    *goal;

	gpudl_install_host();
	run->program = program;
	run->plan = gpudl_plan_acquire(program, &run->cache_hit, &run->version);
	run->goal = gpudl_parse_goal(gdl_plan_analysis(run->plan), goal_text);
	run->dict = gdl_dict_create();
	goal = gpudl_encode_goal(run->goal, run->dict);

	memset(&in, 0, sizeof(in));
	in.load_edb = gpudl_load_edb;
	in.load_arg = run;
	in.device = GDL_DEVICE_CPU;
	in.max_iterations = gpudl_max_iterations;
	in.want_rows = want_rows;
	run->device = "cpu";
	run->result = gdl_run(run->plan, &in, run->dict, goal);
	record_stats(run->result);
	return run;
}
