/*
 * pg_run.c — one evaluation from SQL: take the compiled plan (cached), parse
 * the goal, pick the device, read the tables the goal needs, run the engine
 * and keep its counters for gpudl_stats().
 *
 * A goal with bound arguments (constants in its text, or WHERE conditions
 * the GpuDatalog scan pushed down) runs goal-directed: on the program
 * rewritten by magic sets for the goal's binding pattern (cached with the
 * plan), whose seed table holds the goal's constants.  So anc("abe", Y)
 * explores abe's descendants only.  gpudl.enable_magic = off runs the
 * program as is, then filters.
 */
#include "pg/gpudl_run.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "svc/svc_int.h"
#include "pg/pg_part.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"

#define INITIAL_DEVICE_NEED	(INT64CONST(256) << 20)
#define INITIAL_HOST_NEED	(INT64CONST(64) << 20)
#define MAX_ATTEMPTS		12

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
	gpudl_counters.last_launches_load = s->launches_load;
	gpudl_counters.last_launches_join = s->launches_join;
	gpudl_counters.last_launches_dedup = s->launches_dedup;
	gpudl_counters.last_launches_difference = s->launches_difference;
	gpudl_counters.last_launches_merge = s->launches_merge;
	gpudl_counters.last_launches = s->launches;
	gpudl_counters.last_library_calls = s->library_calls;
	gpudl_counters.last_peak_device_bytes = s->backend && strcmp(s->backend, "cpu") != 0 ?
		s->peak_bytes : 0;
	gpudl_counters.last_peak_host_bytes = gpudl_memory_peak();
	gpudl_counters.last_batches = s->batches;
}

/*
 * Run the engine once on the given device.  Any error escaping it first
 * releases what the backend holds outside PostgreSQL's memory (device
 * buffers), then propagates; memory contexts free the rest.
 */
static GdlResult *
run_on(GpudlRun *run, const GdlPlan *plan, GdlRunInput *in, GdlGoal *goal)
{
	GdlResult  *res = NULL;
	int			parts = gpudl_part_run_begin(in);	/* issue 14 (pg_part.c) */

	PG_TRY();
	{
		res = gdl_run(plan, in, run->dict, goal);
	}
	PG_CATCH();
	{
		gdl_engine_abort_cleanup();
		gpudl_part_run_end(parts, NULL);
		PG_RE_THROW();
	}
	PG_END_TRY();
	gpudl_part_run_end(parts, res);
	return res;
}

/*
 * The engine's loader for a run: the seed of a goal-directed plan holds the
 * goal's bound constants (one row); anything else is a table.
 */
static void
run_load_edb(void *arg, const GdlPred *pred, GdlDict *dict, GdlColumns *out)
{
	GpudlRun   *run = arg;

	if (run->magic && pred->id == run->magic->seed_pred)
	{
		const GdlMagic *m = run->magic->magic;
		int			c,
					k;

		out->ncols = m->nseed;
		out->nrows = 1;
		out->cols = gdl_alloc(sizeof(int64_t *) * (m->nseed + 1));
		for (c = 0; c < m->nseed; c++)
		{
			out->cols[c] = gdl_alloc(sizeof(int64_t));
			for (k = 0; k < run->encoded->nbindings; k++)
				if (run->encoded->bindings[k].arg == m->seed_args[c])
					out->cols[c][0] = run->encoded->bindings[k].value;
		}
		return;
	}
	gpudl_load_edb(arg, pred, dict, out);
}

/*
 * The engine's resident loader: tables loaded with gpudl_load come from
 * their copy on the device (never the seed of a goal-directed plan).
 */
static bool
run_load_edb_resident(void *arg, const GdlPred *pred, const struct GdlBackend *bk,
					  GdlDict *dict, GdlResidentRef *out)
{
	GpudlRun   *run = arg;

	if (run->magic && pred->id == run->magic->seed_pred)
		return false;
	return gpudl_cache_resident(pred, bk, dict, out);
}

/* A fresh dictionary and the goal encoded with it, for the run's plan. */
static void
encode_goal(GpudlRun *run)
{
	run->dict = gdl_dict_create();
	run->encoded = gpudl_encode_goal(run->goal, run->dict);
	if (run->magic)
		run->encoded->pred = run->magic->goal_pred;
}

/*
 * Acquire the plan (pinned to CurrentMemoryContext), parse the goal, bind
 * the pushed-down arguments and choose the goal-directed plan.
 */
GpudlRun *
gpudl_run_prepare(const char *program, const char *goal_text, const GpudlRunOptions *opts)
{
	GpudlRun   *run = palloc0(sizeof(GpudlRun));
	const GdlAnalysis *a;
	bool		any = false;
	int			i;

	gpudl_install_host();
	run->program = program;
	run->goal_text = goal_text;
	run->want_rows = opts->want_rows;
	run->plan = gpudl_plan_acquire(program, &run->cache_hit, &run->version);
	gpudl_plan_pin(run->plan);
	a = gdl_plan_analysis(run->plan);
	run->goal = gpudl_parse_goal(a, goal_text);

	for (i = 0; i < opts->npushed; i++)
		if (opts->pushed_values[i] != NULL &&
			!gpudl_goal_bind(run->goal, opts->pushed_args[i], opts->pushed_values[i]))
			run->empty = true;
	run->bound = palloc0(sizeof(bool) * (run->goal->arity + 1));
	gpudl_goal_bound_args(run->goal, opts->pushed_args, opts->npushed, run->bound);
	for (i = 0; i < run->goal->arity; i++)
		any |= run->bound[i];
	if (any && opts->goal_directed && gpudl_enable_magic && !a->preds[run->goal->pred].is_edb)
		run->magic = gpudl_magic_plan_acquire(run->plan, run->goal->pred, run->bound,
											  &run->magic_cache_hit, &run->magic_why);
	return run;
}

/* The analysis a prepared run evaluates, and its goal predicate there. */
const GdlAnalysis *
gpudl_run_analysis(const GpudlRun *run, int *goal_pred)
{
	if (run->magic)
	{
		*goal_pred = run->magic->goal_pred;
		return run->magic->analysis;
	}
	*goal_pred = run->goal->pred;
	return gdl_plan_analysis(run->plan);
}

/*
 * Flag the strata the goal needs (like the engine: the goal predicate and
 * everything it reads, transitively); returns how many.
 */
int
gpudl_run_strata(const GpudlRun *run, bool *needed)
{
	int			goal;
	const GdlAnalysis *a = gpudl_run_analysis(run, &goal);
	bool	   *need = palloc0(sizeof(bool) * (a->npreds + 1));
	int		   *stack = palloc(sizeof(int) * (a->npreds + 1));
	int			sp = 0;
	int			n = 0;
	int			s,
				k;

	need[goal] = true;
	stack[sp++] = goal;
	while (sp > 0)
	{
		const GdlPred *p = &a->preds[stack[--sp]];

		for (k = 0; k < p->nclauses; k++)
		{
			const GdlClauseInfo *info = &a->clauses[p->clauses[k]];
			int			l;

			for (l = 0; l < info->clause->nbody; l++)
			{
				int			q = info->lit_pred[l];

				if (q >= 0 && !need[q])
				{
					need[q] = true;
					stack[sp++] = q;
				}
			}
		}
	}
	for (s = 0; s < a->nstrata; s++)
	{
		needed[s] = false;
		for (k = 0; k < a->strata[s].npreds; k++)
			if (need[a->strata[s].preds[k]])
				needed[s] = true;
		if (needed[s])
			n++;
	}
	return n;
}

/* An answer without a run: no rows (a pushed constant contradicts the goal). */
static GdlResult *
empty_result(GpudlRun *run)
{
	GdlResult  *res = palloc0(sizeof(GdlResult));
	const GdlAnalysis *a = gdl_plan_analysis(run->plan);

	res->types = a->preds[run->goal->pred].types;
	res->rows.ncols = run->goal->arity;
	res->rows.cols = palloc0(sizeof(int64_t *) * (run->goal->arity + 1));
	res->stats.backend = "none";
	return res;
}

/*
 * One attempt at a run, in a subtransaction and a memory context of its
 * own: on success the result stays (in a child of the caller's context);
 * on an error everything the attempt held is given back at once — memory,
 * SPI, buffers, locks, the backend's device context — and the error is
 * returned (copied into the caller's context) for the caller to retry, fall
 * back or rethrow.  Retrying without this would keep every failed
 * attempt's memory until the statement ends.
 */
static ErrorData *
run_attempt(GpudlRun *run, const GdlPlan *plan, GdlRunInput *in)
{
	MemoryContext outer = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	MemoryContext attempt = AllocSetContextCreate(outer, "gpudl run attempt",
												  ALLOCSET_DEFAULT_SIZES);
	int64		held = gpudl_memory_held();
	ErrorData  *volatile edata = NULL;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(attempt);
	PG_TRY();
	{
		run->result = run_on(run, plan, in, run->encoded);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(outer);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(outer);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(outer);
		CurrentResourceOwner = owner;
		MemoryContextDelete(attempt);
		gpudl_memory_set_held(held);	/* what the attempt held is gone */
		run->result = NULL;
	}
	PG_END_TRY();
	return edata;
}

/* Whether an error is the engine's out of device memory. */
static bool
is_device_oom(const ErrorData *e)
{
	return e->sqlerrcode == ERRCODE_OUT_OF_MEMORY &&
		strncmp(e->message, "out of device memory", 20) == 0;
}

/* Whether an error says the GPU service is gone (mid-operation, or before it). */
static bool
is_service_gone(const ErrorData *e)
{
	return e->detail && (strstr(e->detail, "the GPU service ended") != NULL ||
						 strstr(e->detail, "the GPU service is not running") != NULL);
}

/*
 * Run on the GPU through the service, admitted by the cluster's device
 * budget.  Waits for memory that other runs hold (up to
 * gpudl.device_wait_timeout); a run refused memory part-way gives back what
 * it held and queues again for twice as much, so it finishes on the GPU once
 * others are done.  Returns false when the run should go to the CPU instead
 * (gpudl.device = auto and the wait timed out, the device cannot hold it or
 * the service ended); with gpudl.device = gpu those cases raise.
 */
static bool
run_gpu_admitted(GpudlRun *run, const GdlPlan *plan, GdlRunInput *in)
{
	uint64		key = svc_history_key(run->program, run->version, run->goal_text);
	int64		budget = svc_budget(SVC_RES_DEVICE);
	int64		need = svc_history_peak(key, SVC_RES_DEVICE);
	SvcAdmission adm = {-1, SVC_RES_DEVICE, 0};
	bool		auto_mode = gpudl_device_setting == GPUDL_DEVICE_AUTO;
	int			attempt;

	if (need <= 0)
		need = INITIAL_DEVICE_NEED;
	for (attempt = 1;; attempt++)
	{
		char		busy[512];
		TimestampTz wait_start = GetCurrentTimestamp();
		ErrorData  *err;
		int64		granted;

		if (!svc_admit(&adm, SVC_RES_DEVICE, need, run->program, run->goal_text,
					   gpudl_device_wait_timeout_ms, busy, sizeof(busy)))
		{
			long		waited = (long) ((GetCurrentTimestamp() - wait_start) / 1000);

			if (auto_mode)
			{
				elog(DEBUG1, "gpudl: device busy for %ld ms (%s); running on the CPU", waited, busy);
				return false;
			}
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("gpudl: the GPU was busy: waited %ld ms for %lld MB of device memory",
							waited, (long long) (need >> 20)),
					 errdetail("Held by %s.", busy),
					 errhint("Raise gpudl.device_wait_timeout (0 waits without limit), or use gpudl.device = auto to run on the CPU after the wait.")));
		}
		svc_proxy_set_job(adm.job);
		svc_admit_set_phase(&adm, "running");
		err = run_attempt(run, plan, in);
		svc_proxy_set_job(-1);
		granted = svc_admit_granted(&adm);
		if (err == NULL)
		{
			svc_history_record(key, SVC_RES_DEVICE, run->result->stats.peak_bytes);
			svc_admit_release(&adm);
			return true;
		}
		if (is_device_oom(err) &&
			(err->detail == NULL || strncmp(err->detail, "device memory limit exceeded", 28) != 0) &&
			need < budget && attempt < MAX_ATTEMPTS)
		{
			/* refused part-way: queue again for more, on the GPU */
			need = Min(Max(need, granted) * 2, budget);
			elog(DEBUG1, "gpudl: %s; queueing again for %lld MB",
				 err->detail ? err->detail : err->message, (long long) (need >> 20));
			encode_goal(run);	/* a fresh dictionary for the next attempt */
			continue;
		}
		svc_admit_release(&adm);
		if (auto_mode && (is_device_oom(err) || is_service_gone(err)))
		{
			elog(DEBUG1, "gpudl: %s; running on the CPU", err->message);
			encode_goal(run);
			return false;
		}
		ReThrowError(err);
	}
}

/*
 * Run on the CPU.  With the service's shared memory, the run is admitted by
 * the cluster's host budget (gpudl.cluster_host_memory) and, refused memory
 * part-way, queues again for twice what it held: the CPU runs of all
 * sessions together stay under the budget and the kernel's OOM killer never
 * decides.
 */
static void
run_cpu_admitted(GpudlRun *run, const GdlPlan *plan, GdlRunInput *in)
{
	uint64		key;
	int64		budget;
	int64		need;
	SvcAdmission adm = {-1, SVC_RES_HOST, 0};
	int			attempt;

	in->device = GDL_DEVICE_CPU;
	run->device = "cpu";
	/* the engine slices joins to stay under gpudl.host_memory_limit */
	in->memory_limit = gpudl_memory_room();
	in->memory_held = gpudl_memory_run_held;
	if (!svc_active())
	{
		run->result = run_on(run, plan, in, run->encoded);
		return;
	}
	key = svc_history_key(run->program, run->version, run->goal_text);
	budget = svc_budget(SVC_RES_HOST);
	need = svc_history_peak(key, SVC_RES_HOST);
	if (need <= 0)
		need = INITIAL_HOST_NEED;
	need += gpudl_memory_held();
	for (attempt = 1;; attempt++)
	{
		char		busy[512];
		TimestampTz wait_start = GetCurrentTimestamp();
		int64		base,
					granted;
		ErrorData  *err;

		if (!svc_admit(&adm, SVC_RES_HOST, need, run->program, run->goal_text,
					   gpudl_host_wait_timeout_ms, busy, sizeof(busy)))
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("gpudl: waited %ld ms for %lld MB of the cluster's host memory",
							(long) ((GetCurrentTimestamp() - wait_start) / 1000), (long long) (need >> 20)),
					 errdetail("Held by %s.", busy),
					 errhint("Raise gpudl.host_wait_timeout or gpudl.cluster_host_memory.")));
		svc_admit_set_phase(&adm, "running");
		base = gpudl_memory_held();
		in->memory_limit = gpudl_memory_room();
		gpudl_memory_admission(&adm);
		err = run_attempt(run, plan, in);
		gpudl_memory_admission(NULL);
		granted = svc_admit_granted(&adm);
		if (err == NULL)
		{
			svc_history_record(key, SVC_RES_HOST, Max(gpudl_memory_peak() - base, 0));
			svc_admit_release(&adm);
			return;
		}
		if (err->sqlerrcode == ERRCODE_OUT_OF_MEMORY &&
			strcmp(err->message, GPUDL_HOST_BUSY_MSG) == 0 &&
			need < budget && attempt < MAX_ATTEMPTS)
		{
			need = Min(Max(need, granted) * 2, budget);
			encode_goal(run);
			continue;
		}
		svc_admit_release(&adm);
		if (err->sqlerrcode == ERRCODE_OUT_OF_MEMORY && strcmp(err->message, GPUDL_HOST_BUSY_MSG) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("gpudl: the evaluation needs more than the cluster's host memory budget (%lld MB)",
							(long long) (budget >> 20)),
					 errhint("Raise gpudl.cluster_host_memory, ask for fewer answers (bind goal arguments), or use a GPU.")));
		ReThrowError(err);
	}
}

/*
 * Evaluate a prepared run; everything lives in the caller's context.  With
 * gpudl.device = auto, a run that cannot get or hold device memory runs on
 * the CPU (counted in gpudl_stats as cpu_fallbacks).  With the GPU service,
 * runs wait for memory instead of failing (run_gpu_admitted).
 */
void
gpudl_run_execute(GpudlRun *run)
{
	GdlRunInput in;
	const struct GdlBackend *gpu;
	const GdlPlan *plan = run->magic ? run->magic->plan : run->plan;

	if (run->empty)
	{
		run->device = "none";
		run->dict = gdl_dict_create();
		run->result = empty_result(run);
		return;
	}
	gpudl_install_host();
	encode_goal(run);

	memset(&in, 0, sizeof(in));
	in.load_edb = run_load_edb;
	in.load_edb_resident = run_load_edb_resident;
	in.load_arg = run;
	in.max_iterations = gpudl_max_iterations;
	in.want_rows = run->want_rows;
	in.memory_limit = (int64_t) gpudl_device_memory_limit_mb * 1024 * 1024;
	in.progress = gpudl_progress_engine;	/* gpudl_progress: rounds, tuples, device */
	in.progress_arg = &run->device;
	gpu = gpudl_choose_gpu_backend();
	if (gpu == NULL)
		run_cpu_admitted(run, plan, &in);
	else if (svc_active() && gpudl_service_enabled)
	{
		gdl_backend_register(GDL_DEVICE_GPU, gpu);
		in.device = GDL_DEVICE_GPU;
		run->device = "gpu";
		if (run_gpu_admitted(run, plan, &in))
			gpudl_counters.gpu_runs++;
		else
		{
			gpudl_counters.cpu_fallbacks++;
			run_cpu_admitted(run, plan, &in);
		}
	}
	else
	{
		ErrorData  *err;

		gdl_backend_register(GDL_DEVICE_GPU, gpu);
		in.device = GDL_DEVICE_GPU;
		run->device = "gpu";
		err = run_attempt(run, plan, &in);
		if (err == NULL)
			gpudl_counters.gpu_runs++;
		else if (is_device_oom(err) && gpudl_device_setting == GPUDL_DEVICE_AUTO)
		{
			elog(DEBUG1, "gpudl: %s; retrying on the CPU", err->message);
			gpudl_counters.cpu_fallbacks++;
			encode_goal(run);
			run_cpu_admitted(run, plan, &in);
		}
		else
			ReThrowError(err);
	}
	/* a rewritten goal may be typed wider (bigint for int): answer as declared */
	run->result->types = gdl_plan_analysis(run->plan)->preds[run->goal->pred].types;
	record_stats(run->result);
}

/*
 * Evaluate a program for a goal; everything lives in the caller's context.
 * Constants in the goal make the run goal-directed.
 */
GpudlRun *
gpudl_run_goal(const char *program, const char *goal_text, bool want_rows)
{
	GpudlRunOptions opts;
	GpudlRun   *run;

	memset(&opts, 0, sizeof(opts));
	opts.want_rows = want_rows;
	opts.goal_directed = true;
	run = gpudl_run_prepare(program, goal_text, &opts);
	gpudl_run_execute(run);
	return run;
}
