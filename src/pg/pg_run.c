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

/*
 * Run the engine once on the given device.  Any error escaping it first
 * releases what the backend holds outside PostgreSQL's memory (device
 * buffers), then propagates; memory contexts free the rest.
 */
static GdlResult *
run_on(GpudlRun *run, GdlRunInput *in, GdlGoal *goal)
{
	GdlResult  *res = NULL;

	PG_TRY();
	{
		res = gdl_run(run->plan, in, run->dict, goal);
	}
	PG_CATCH();
	{
		gdl_engine_abort_cleanup();
		PG_RE_THROW();
	}
	PG_END_TRY();
	return res;
}

/*
 * Evaluate a program for a goal; everything lives in the caller's context.
 * With gpudl.device = auto, a run that runs out of device memory is retried
 * on the CPU (counted in gpudl_stats as cpu_fallbacks).
 */
GpudlRun *
gpudl_run_goal(const char *program, const char *goal_text, bool want_rows)
{
	GpudlRun   *run = palloc0(sizeof(GpudlRun));
	GdlRunInput in;
	GdlGoal    *goal;
	const struct GdlBackend *gpu;

	gpudl_install_host();
	run->program = program;
	run->plan = gpudl_plan_acquire(program, &run->cache_hit, &run->version);
	run->goal = gpudl_parse_goal(gdl_plan_analysis(run->plan), goal_text);
	run->dict = gdl_dict_create();
	goal = gpudl_encode_goal(run->goal, run->dict);

	memset(&in, 0, sizeof(in));
	in.load_edb = gpudl_load_edb;
	in.load_arg = run;
	in.max_iterations = gpudl_max_iterations;
	in.want_rows = want_rows;
	in.memory_limit = (int64_t) gpudl_device_memory_limit_mb * 1024 * 1024;
	gpu = gpudl_choose_gpu_backend();
	if (gpu == NULL)
	{
		in.device = GDL_DEVICE_CPU;
		run->device = "cpu";
		run->result = run_on(run, &in, goal);
	}
	else
	{
		MemoryContext cxt = CurrentMemoryContext;
		bool		retry = false;

		gdl_backend_register_gpu(gpu);
		in.device = GDL_DEVICE_GPU;
		run->device = "gpu";
		PG_TRY();
		{
			run->result = run_on(run, &in, goal);
		}
		PG_CATCH();
		{
			ErrorData  *edata;

			MemoryContextSwitchTo(cxt);
			edata = CopyErrorData();
			/* only the engine's own device OOM: no SPI or buffer is in use then */
			if (edata->sqlerrcode != ERRCODE_OUT_OF_MEMORY ||
				strncmp(edata->message, "out of device memory", 20) != 0 ||
				gpudl_device_setting != GPUDL_DEVICE_AUTO)
				PG_RE_THROW();
			FlushErrorState();
			elog(DEBUG1, "gpudl: %s; retrying on the CPU", edata->message);
			retry = true;
		}
		PG_END_TRY();
		if (retry)
		{
			gpudl_counters.cpu_fallbacks++;
			in.device = GDL_DEVICE_CPU;
			run->device = "cpu";
			run->dict = gdl_dict_create();
			goal = gpudl_encode_goal(run->goal, run->dict);
			run->result = run_on(run, &in, goal);
		}
		else
			gpudl_counters.gpu_runs++;
	}
	record_stats(run->result);
	return run;
}
