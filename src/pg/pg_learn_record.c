/*
 * pg_learn_record.c — gpudl.learn_runs rows that outlive the caller's
 * transaction.  A learn run's 'running' row is written at its start, and a
 * failed run's row is closed as 'failed', by a short-lived dynamic
 * background worker in a transaction of its own (an "autonomous" write, as
 * pg_background does), as the same user in the same database: it logs in
 * as the caller's session user (a role that may log in) and acts as the
 * current user (a role set with SET ROLE, or a SECURITY DEFINER function's
 * owner), so the row's run_by and the row-level security checks of
 * gpudl.learn_runs are the caller's.  The caller
 * hands the request over in a dynamic shared memory segment and waits for
 * the worker to finish (a few milliseconds).  So other sessions see a run
 * while it runs, and a failed run's row exists when the error reaches the
 * client.
 *
 * A run whose backend dies (SIGKILL, crash, pg_terminate_backend) or whose
 * transaction rolls back after the run never closes its row.  The row
 * carries the backend's pid, start time and top transaction id; a 'running'
 * row whose transaction is no longer in progress is stale, and a sweep
 * marks it 'failed' — at the start of every gpudl_learn (in the worker,
 * so the caller holds no lock on others' rows) and on demand with
 * gpudl_learn_runs_sweep().
 *
 * Where the worker cannot help — no free worker slot, or a caller under
 * REPEATABLE READ whose snapshot would not see the worker's row — the
 * 'running' row is inserted in the caller's transaction instead, as before:
 * visible only on commit, and gone on rollback.
 */
#include "pg/gpudl_learn.h"

#include "access/transam.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "catalog/namespace.h"
#include "miscadmin.h"
#include "utils/lsyscache.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "postmaster/bgworker.h"
#include "storage/dsm.h"
#include "storage/procarray.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/xid8.h"

PGDLLEXPORT void gpudl_failed_run_worker(Datum main_arg);

PG_FUNCTION_INFO_V1(gpudl_learn_runs_sweep);

/* What the worker does. */
typedef enum RecordOp
{
	RECORD_START,				/* sweep, then insert the 'running' row */
	RECORD_SWEEP,				/* sweep only */
	RECORD_FAIL					/* close row run_id as failed (or insert one) */
} RecordOp;

/* The request, and the worker's answer. */
typedef struct RecordRequest
{
	RecordOp	op;
	Oid			dbid;
	Oid			sessionid;		/* logs in as the session user ... */
	Oid			userid;			/* ... and records the run as the current user */
	int64		run_id;			/* FAIL: the row to close, 0: none */
	int32		pid;			/* the caller, for START */
	TimestampTz backend_start;
	FullTransactionId xid;
	/* the strings, whatever their length (in the segment: after the struct) */
	const char *program;
	const char *target;
	const char *params;
	const char *message;
	Size		len[4];			/* in the segment: each string's length */
	/* answer */
	bool		done;
	int64		result_id;		/* START: the new row */
} RecordRequest;

#define RQ_NSTRINGS 4

/* The request's strings, in order. */
static const char **
rq_string(RecordRequest *rq, int i)
{
	switch (i)
	{
		case 0:
			return &rq->program;
		case 1:
			return &rq->target;
		case 2:
			return &rq->params;
		default:
			return &rq->message;
	}
}

/* The segment size for a request: the struct, then its strings. */
static Size
rq_size(RecordRequest *rq)
{
	Size		n = MAXALIGN(sizeof(RecordRequest));

	for (int i = 0; i < RQ_NSTRINGS; i++)
	{
		const char *s = *rq_string(rq, i);

		rq->len[i] = s ? strlen(s) : 0;
		n = add_size(n, rq->len[i] + 1);
	}
	return n;
}

/* Copy a request and its strings into a segment of rq_size bytes. */
static void
rq_pack(RecordRequest *rq, char *seg)
{
	char	   *p = seg + MAXALIGN(sizeof(RecordRequest));

	memcpy(seg, rq, sizeof(*rq));
	for (int i = 0; i < RQ_NSTRINGS; i++)
	{
		const char *s = *rq_string(rq, i);

		memcpy(p, s ? s : "", rq->len[i]);
		p[rq->len[i]] = '\0';
		p += rq->len[i] + 1;
	}
}

/* A request read from a segment: its strings point into the segment. */
static void
rq_unpack(RecordRequest *rq, char *seg)
{
	char	   *p = seg + MAXALIGN(sizeof(RecordRequest));

	memcpy(rq, seg, sizeof(*rq));
	for (int i = 0; i < RQ_NSTRINGS; i++)
	{
		*rq_string(rq, i) = p;
		p += rq->len[i] + 1;
	}
}

/*
 * Whether the run of a 'running' row may still finish: its transaction is
 * in progress.  A row without a transaction id (written by an older
 * version) counts as running while its pid is connected.
 */
static bool
run_alive(int32 pid, bool xid_null, FullTransactionId fxid)
{
	FullTransactionId next;

	if (xid_null)
		return pid != 0 && BackendPidGetProc(pid) != NULL;
	next = ReadNextFullTransactionId();
	/* from another cluster (restored dump), or too old to ask about */
	if (!FullTransactionIdPrecedes(fxid, next) ||
		U64FromFullTransactionId(next) - U64FromFullTransactionId(fxid) > ((uint64) 1 << 31))
		return false;
	return TransactionIdIsInProgress(XidFromFullTransactionId(fxid));
}

/*
 * Whether gpudl.learn_runs has the 0.2 bookkeeping columns (a 0.1 catalog
 * between CREATE EXTENSION ... VERSION '0.1' and ALTER EXTENSION UPDATE
 * has not: runs are then recorded as 0.1 did, and nothing is swept).
 */
static bool
has_bookkeeping(void)
{
	Oid			nsp = get_namespace_oid("gpudl", true);
	Oid			relid = OidIsValid(nsp) ? get_relname_relid("learn_runs", nsp) : InvalidOid;

	return OidIsValid(relid) && get_attnum(relid, "backend_pid") != InvalidAttrNumber;
}

/*
 * Mark every stale 'running' row 'failed', saying why; returns how many.
 * Rows another session is updating right now are skipped (SKIP LOCKED):
 * their runs are finishing.  Needs an SPI connection.
 */
static int64
sweep_rows(void)
{
	Oid			types[2] = {INT8OID, TEXTOID};
	int64	   *ids;
	char	  **why;
	uint64		n,
				i;
	int64		marked = 0;

	if (!has_bookkeeping())
		return 0;
	if (SPI_execute("SELECT id, backend_pid, backend_xid FROM gpudl.learn_runs "
					"WHERE status = 'running'", true, 0) != SPI_OK_SELECT)
		elog(ERROR, "gpudl: could not read the running learn runs");
	n = SPI_processed;
	ids = palloc(sizeof(int64) * (n + 1));
	why = palloc(sizeof(char *) * (n + 1));
	for (i = 0; i < n; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull,
					xnull;
		int32		pid;
		FullTransactionId fxid = InvalidFullTransactionId;
		Datum		d;

		ids[i] = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
		d = SPI_getbinval(tup, desc, 2, &isnull);
		pid = isnull ? 0 : DatumGetInt32(d);
		d = SPI_getbinval(tup, desc, 3, &xnull);
		if (!xnull)
			fxid = DatumGetFullTransactionId(d);
		if (run_alive(pid, xnull, fxid))
			why[i] = NULL;
		else if (pid != 0 && BackendPidGetProc(pid) != NULL)
			why[i] = psprintf("run ended without finishing: its transaction rolled back "
							  "(backend pid %d is still connected)", pid);
		else
			why[i] = psprintf("backend ended without finishing: pid %d is gone "
							  "(terminated, crashed, or the server restarted)", pid);
	}
	for (i = 0; i < n; i++)
	{
		Datum		v[2];

		if (why[i] == NULL)
			continue;
		v[0] = Int64GetDatum(ids[i]);
		v[1] = CStringGetTextDatum(why[i]);
		if (SPI_execute_with_args("UPDATE gpudl.learn_runs SET status = 'failed', finished_at = now(), "
								  "message = $2 WHERE id IN (SELECT id FROM gpudl.learn_runs "
								  "WHERE id = $1 AND status = 'running' FOR UPDATE SKIP LOCKED)",
								  2, types, v, NULL, false, 0) != SPI_OK_UPDATE)
			elog(ERROR, "gpudl: could not close a stale learn run");
		marked += SPI_processed;
	}
	return marked;
}

/* Insert a learn run's row with the caller's identity; returns its id. */
static int64
insert_run(const RecordRequest *rq, const char *status)
{
	Oid			types[8] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, INT4OID,
	TIMESTAMPTZOID, XID8OID};
	Datum		v[8];
	char		nulls[9] = "        ";
	bool		isnull;

	v[0] = CStringGetTextDatum(rq->program);
	v[1] = CStringGetTextDatum(rq->target);
	v[2] = CStringGetTextDatum(status);
	v[3] = CStringGetTextDatum(rq->params);
	v[4] = CStringGetTextDatum(rq->message);
	v[5] = Int32GetDatum(rq->pid);
	v[6] = TimestampTzGetDatum(rq->backend_start);
	v[7] = FullTransactionIdGetDatum(rq->xid);
	if (!FullTransactionIdIsValid(rq->xid))
		nulls[7] = 'n';
	/*
	 * The extension's schema may not be on the worker's search_path: qualify.
	 * A 0.1 catalog has no bookkeeping columns: the first five values only.
	 */
	bool		full = has_bookkeeping();

	if (SPI_execute_with_args(full ?
							  "INSERT INTO gpudl.learn_runs(program, target, status, device, params, "
							  "finished_at, message, backend_pid, backend_start, backend_xid) "
							  "VALUES ($1, $2, $3, 'cpu', nullif($4, '')::jsonb, "
							  "CASE WHEN $3 = 'failed' THEN now() END, nullif($5, ''), $6, $7, $8) "
							  "RETURNING id" :
							  "INSERT INTO gpudl.learn_runs(program, target, status, device, params, "
							  "finished_at, message) "
							  "VALUES ($1, $2, $3, 'cpu', nullif($4, '')::jsonb, "
							  "CASE WHEN $3 = 'failed' THEN now() END, nullif($5, '')) "
							  "RETURNING id",
							  full ? 8 : 5, types, v, nulls, false, 0) != SPI_OK_INSERT_RETURNING)
		elog(ERROR, "gpudl: could not record the learn run");
	return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/*
 * Hand a request to a worker and wait for it; true when it did the work
 * (rq->done).  Never raises: a failure here only logs at DEBUG1 (the
 * callers fall back or warn).
 */
static bool
run_worker(RecordRequest *rq)
{
	BackgroundWorker bgw;
	BackgroundWorkerHandle *handle;
	dsm_segment *seg = NULL;
	RecordRequest *shared;
	volatile bool done = false;
	MemoryContext cxt = CurrentMemoryContext;

	PG_TRY();
	{
		seg = dsm_create(rq_size(rq), 0);
		shared = dsm_segment_address(seg);
		rq_pack(rq, (char *) shared);
		shared->done = false;

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
			elog(DEBUG1, "gpudl: no background worker slot to record the learn run");
		else
			(void) WaitForBackgroundWorkerShutdown(handle);
		/* the answer only: rq keeps its own strings */
		rq->result_id = shared->result_id;
		rq->done = done = shared->done;
		dsm_detach(seg);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		elog(DEBUG1, "gpudl: could not start the learn-run recorder");
	}
	PG_END_TRY();
	return done;
}

/* A request with the caller's identity. */
static void
request_init(RecordRequest *rq, RecordOp op, const char *program, const char *target,
			 const char *params, const char *message)
{
	memset(rq, 0, sizeof(*rq));
	rq->op = op;
	rq->dbid = MyDatabaseId;
	rq->sessionid = GetSessionUserId();
	rq->userid = GetUserId();
	rq->pid = MyProcPid;
	rq->backend_start = MyStartTimestamp;
	rq->program = program ? program : "";
	rq->target = target ? target : "";
	rq->params = params ? params : "";
	rq->message = message ? message : "";
}

/*
 * Record the start of a learn run: sweep stale rows, then insert the
 * 'running' row — committed at once by the worker where the caller's
 * snapshots will see it (READ COMMITTED), else in the caller's transaction.
 * Returns the row's id; *autonomous says which way it went.
 */
int64
gpudl_learn_run_start(const char *program, const char *target, const char *params,
					  bool *autonomous)
{
	RecordRequest rq;
	int64		id;

	request_init(&rq, RECORD_START, program, target, params, NULL);
	rq.xid = GetTopFullTransactionId();
	if (IsolationUsesXactSnapshot())
		rq.op = RECORD_SWEEP;
	if (run_worker(&rq) && rq.op == RECORD_START)
	{
		*autonomous = true;
		return rq.result_id;
	}
	*autonomous = false;
	SPI_connect();
	id = insert_run(&rq, "running");
	SPI_finish();
	return id;
}

/*
 * Record a failed run from an error path: close its autonomous 'running'
 * row (run_id > 0), else insert a 'failed' row.  Must not raise: a failure
 * here only logs a WARNING.
 */
void
gpudl_record_failed_run(int64 run_id, const char *program, const char *target,
						const char *params, const char *message)
{
	RecordRequest rq;

	request_init(&rq, RECORD_FAIL, program, target, params, message);
	rq.run_id = run_id;
	if (!run_worker(&rq))
		elog(WARNING, "gpudl: could not record the failed learn run");
}

/* Worker: do the request, in a transaction of its own. */
void
gpudl_failed_run_worker(Datum main_arg)
{
	dsm_handle	h = DatumGetUInt32(main_arg);
	dsm_segment *seg;
	RecordRequest *shared;
	RecordRequest rq;

	BackgroundWorkerUnblockSignals();
	seg = dsm_attach(h);
	if (seg == NULL)
		return;
	shared = dsm_segment_address(seg);
	rq_unpack(&rq, (char *) shared);

	BackgroundWorkerInitializeConnectionByOid(rq.dbid, rq.sessionid, 0);
	/* a NOLOGIN role reached with SET ROLE cannot log in: switch to it */
	SetUserIdAndSecContext(rq.userid, SECURITY_LOCAL_USERID_CHANGE);
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "recording a gpudl_learn run");
	/* never wait long behind a lock: the caller is waiting for us */
	SPI_execute("SET LOCAL lock_timeout = '5s'", false, 0);
	if (rq.op == RECORD_START || rq.op == RECORD_SWEEP)
		(void) sweep_rows();
	if (rq.op == RECORD_START)
		rq.result_id = insert_run(&rq, "running");
	else if (rq.op == RECORD_FAIL)
	{
		Oid			types[2] = {INT8OID, TEXTOID};
		Datum		v[2];

		v[0] = Int64GetDatum(rq.run_id);
		v[1] = CStringGetTextDatum(rq.message);
		if (SPI_execute_with_args("UPDATE gpudl.learn_runs SET status = 'failed', finished_at = now(), "
								  "message = $2 WHERE id = $1 AND status = 'running'",
								  2, types, v, NULL, false, 0) != SPI_OK_UPDATE)
			elog(ERROR, "gpudl: could not record the failed learn run");
		if (SPI_processed == 0)
			(void) insert_run(&rq, "failed");
	}
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
	shared->result_id = rq.result_id;
	pg_write_barrier();
	shared->done = true;
	dsm_detach(seg);
}

/*
 * gpudl_learn_runs_sweep(): mark as 'failed' every 'running' learn run
 * whose backend or transaction ended without finishing it; returns how
 * many.  gpudl_learn does this at its start too.
 */
Datum
gpudl_learn_runs_sweep(PG_FUNCTION_ARGS)
{
	int64		n;

	SPI_connect();
	n = sweep_rows();
	SPI_finish();
	PG_RETURN_INT64(n);
}
