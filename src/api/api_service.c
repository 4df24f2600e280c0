/*
 * api_service.c — what runs on the device, from SQL: gpudl_gpu_jobs() (the
 * gpudl_gpu_jobs view: every run waiting for or holding device or host
 * memory, like pg_stat_activity) and gpudl_service_status() (the GPU
 * service's state, budget and use).
 *
 * As in pg_stat_activity, every session sees every job's pid, state and
 * memory; program, goal and phase only of its own role's jobs (or all, for
 * superusers and members of pg_read_all_stats).
 */
#include "pg/gpudl_pg.h"
#include "svc/svc_int.h"

#include "catalog/pg_authid.h"
#include "funcapi.h"
#include "storage/lwlock.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(gpudl_gpu_jobs);
PG_FUNCTION_INFO_V1(gpudl_service_status);

static const char *const state_names[] = {"absent", "starting", "ready", "no gpu", "stopped"};

/* gpudl_gpu_jobs(): one row per admission, queued or running. */
Datum
gpudl_gpu_jobs(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	SvcJob		copy[SVC_MAX_JOBS];
	bool		all = superuser() || has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
	TimestampTz now = GetCurrentTimestamp();
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	if (!svc_active())
		return (Datum) 0;
	LWLockAcquire(svc_admit_lock(), LW_SHARED);
	memcpy(copy, svc_shared->jobs, sizeof(copy));
	LWLockRelease(svc_admit_lock());
	for (i = 0; i < SVC_MAX_JOBS; i++)
	{
		SvcJob	   *j = &copy[i];
		Datum		v[12];
		bool		n[12] = {0};
		bool		mine;
		int64		waited_us;

		if (j->state == SVC_JOB_FREE)
			continue;
		mine = all || has_privs_of_role(GetUserId(), j->userid);
		waited_us = j->waited_us + (j->state == SVC_JOB_WAITING ? now - j->enqueued_at : 0);
		v[0] = Int32GetDatum(j->pid);
		v[1] = ObjectIdGetDatum(j->userid);
		v[2] = CStringGetTextDatum(j->resource == SVC_RES_DEVICE ? "device" : "host");
		v[3] = CStringGetTextDatum(j->state == SVC_JOB_WAITING ? "waiting" : "running");
		v[4] = CStringGetTextDatum(j->program);
		n[4] = !mine;
		v[5] = CStringGetTextDatum(j->goal);
		n[5] = !mine;
		v[6] = CStringGetTextDatum(j->phase);
		n[6] = !mine;
		v[7] = Int64GetDatum(j->need);
		v[8] = Int64GetDatum((int64) pg_atomic_read_u64(&j->granted));
		v[9] = Float8GetDatum(waited_us / 1000.0);
		v[10] = Int32GetDatum(j->attempts);
		v[11] = TimestampTzGetDatum(j->state == SVC_JOB_RUNNING ? j->started_at : j->enqueued_at);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, n);
	}
	return (Datum) 0;
}

/* gpudl_service_status(): one row about the service and the budgets. */
Datum
gpudl_service_status(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		v[11];
	bool		n[11] = {0};
	int			running = 0,
				waiting = 0,
				i;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "gpudl_service_status: return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);
	if (!svc_active())
	{
		v[0] = CStringGetTextDatum(gpudl_shmem_ready() ? "off" : "not preloaded");
		for (i = 1; i < 11; i++)
			n[i] = true;
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, v, n)));
	}
	LWLockAcquire(svc_admit_lock(), LW_SHARED);
	for (i = 0; i < SVC_MAX_JOBS; i++)
	{
		running += svc_shared->jobs[i].state == SVC_JOB_RUNNING;
		waiting += svc_shared->jobs[i].state == SVC_JOB_WAITING;
	}
	LWLockRelease(svc_admit_lock());
	v[0] = CStringGetTextDatum(gpudl_service_enabled ?
							   state_names[Min(Max(svc_shared->state, 0), 4)] : "off");
	v[1] = Int32GetDatum(svc_shared->pid);
	n[1] = svc_shared->pid == 0;
	v[2] = CStringGetTextDatum(svc_shared->state == SVC_NO_GPU ? svc_shared->why : svc_shared->device);
	v[3] = Int64GetDatum(svc_budget(SVC_RES_DEVICE));
	v[4] = Int64GetDatum((int64) pg_atomic_read_u64(&svc_shared->committed[SVC_RES_DEVICE]));
	v[5] = Int64GetDatum(svc_budget(SVC_RES_HOST));
	v[6] = Int64GetDatum((int64) pg_atomic_read_u64(&svc_shared->committed[SVC_RES_HOST]));
	v[7] = Int32GetDatum(running);
	v[8] = Int32GetDatum(waiting);
	v[9] = Int32GetDatum(svc_shared->nslots);
	v[10] = Int64GetDatum((int64) pg_atomic_read_u32(&svc_shared->generation));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, v, n)));
}
