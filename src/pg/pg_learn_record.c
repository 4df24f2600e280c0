/*
 * pg_learn_record.c — a failed gpudl_learn call is recorded in
 * gpudl.learn_runs even though its transaction rolls back: the row is
 * written by a short-lived dynamic background worker, in a transaction of
 * its own (an "autonomous" insert, as pg_background does), as the same user
 * in the same database: it logs in as the caller's session user (a role
 * that may log in) and acts as the current user, which may be a role set
 * with SET ROLE or a SECURITY DEFINER function's owner, so the row's run_by
 * (its default, current_user) and the row-level security checks of
 * gpudl.learn_runs are the caller's.  The caller hands the row over in a dynamic shared
 * memory segment and waits for the worker to finish (a few milliseconds), so
 * the row exists when the error reaches the client.
 */
#include "gpudl_learn.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/dsm.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"

PGDLLEXPORT void gpudl_failed_run_worker(Datum main_arg);

/* What the worker writes. */
typedef struct FailedRun
{
	Oid			dbid;
	Oid			sessionid;		/* logs in as the session user ... */
	Oid			userid;			/* ... and records the run as the current user */
	char		program[256];
	char		target[256];
	char		params[4096];
	char		message[2048];
} FailedRun;

/* Copy a string into a fixed buffer, truncating. */
static void
put(char *dst, size_t size, const char *src)
{
	strlcpy(dst, src ? src : "", size);
}

/*
 * Launch the worker that records a failed run.  Called from an error path:
 * it must not raise, so any failure here only logs a WARNING.
 */
void
gpudl_record_failed_run(const char *program, const char *target, const char *params,
						const char *message)
{
	BackgroundWorker bgw;
	BackgroundWorkerHandle *handle;
	dsm_segment *seg = NULL;
	FailedRun  *fr;

	PG_TRY();
	{
		seg = dsm_create(sizeof(FailedRun), 0);
		fr = dsm_segment_address(seg);
		memset(fr, 0, sizeof(*fr));
		fr->dbid = MyDatabaseId;
		fr->sessionid = GetSessionUserId();
		fr->userid = GetUserId();
		put(fr->program, sizeof(fr->program), program);
		put(fr->target, sizeof(fr->target), target);
		put(fr->params, sizeof(fr->params), params);
		put(fr->message, sizeof(fr->message), message);

		memset(&bgw, 0, sizeof(bgw));
		bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
		bgw.bgw_start_time = BgWorkerStart_ConsistentState;
		bgw.bgw_restart_time = BGW_NEVER_RESTART;
		snprintf(bgw.bgw_library_name, BGW_MAXLEN, "gpudl");
		snprintf(bgw.bgw_function_name, BGW_MAXLEN, "gpudl_failed_run_worker");
		snprintf(bgw.bgw_name, BGW_MAXLEN, "gpudl learn-run recorder");
		snprintf(bgw.bgw_type, BGW_MAXLEN, "gpudl learn-run recorder");
		bgw.bgw_main_arg = UInt32GetDatum(dsm_segment_handle(seg));
		bgw.bgw_notify_pid = MyProcPid;
		if (!RegisterDynamicBackgroundWorker(&bgw, &handle))
			elog(WARNING, "gpudl: no background worker slot to record the failed learn run");
		else
			(void) WaitForBackgroundWorkerShutdown(handle);
		dsm_detach(seg);
	}
	PG_CATCH();
	{
		FlushErrorState();
		elog(WARNING, "gpudl: could not record the failed learn run");
	}
	PG_END_TRY();
}

/* Worker: insert the failed run, in a transaction of its own. */
void
gpudl_failed_run_worker(Datum main_arg)
{
	dsm_handle	h = DatumGetUInt32(main_arg);
	dsm_segment *seg;
	FailedRun	fr;
	Oid			types[4] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID};
	Datum		values[4];

	BackgroundWorkerUnblockSignals();
	seg = dsm_attach(h);
	if (seg == NULL)
		return;
	memcpy(&fr, dsm_segment_address(seg), sizeof(fr));
	dsm_detach(seg);

	BackgroundWorkerInitializeConnectionByOid(fr.dbid, fr.sessionid, 0);
	/* a NOLOGIN role reached with SET ROLE cannot log in: switch to it */
	SetUserIdAndSecContext(fr.userid, SECURITY_LOCAL_USERID_CHANGE);
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "recording a failed gpudl_learn run");
	values[0] = CStringGetTextDatum(fr.program);
	values[1] = CStringGetTextDatum(fr.target);
	values[2] = CStringGetTextDatum(fr.params);
	values[3] = CStringGetTextDatum(fr.message);
	/* the extension's schema may not be on the worker's search_path: qualify */
	SPI_execute_with_args("INSERT INTO gpudl.learn_runs(program, target, status, device, params, "
						  "finished_at, message) VALUES ($1, $2, 'failed', 'cpu', "
						  "nullif($3, '')::jsonb, now(), $4)",
						  4, types, values, NULL, false, 0);
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
}
