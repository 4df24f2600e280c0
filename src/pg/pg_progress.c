/*
 * pg_progress.c — progress of running evaluations and learns, visible to
 * every session through the gpudl_progress view (modelled on
 * pg_stat_progress_*).
 *
 * With gpudl in shared_preload_libraries there is one slot per backend in
 * shared memory (indexed by MyBackendId).  Only its owner writes a slot,
 * without a lock: it bumps changecount before and after each update (odd
 * while writing), and a reader copies the slot and retries until it saw the
 * same even count on both sides — PgBackendStatus's st_changecount protocol.
 * Without preloading there is no shared memory: the slot is process-local
 * and the view shows only the calling session's own work.
 *
 * An SQL entry point brackets its work with gpudl_progress_begin/_end
 * (nested calls, e.g. the evaluations inside a learn, keep the outer kind);
 * the engine and the ILP learner report rounds, epochs and phases through
 * the hooks below.  An error clears the slot at (sub)transaction abort, and
 * backend exit clears it too, so a slot never outlives its work.
 */
#include "pg/gpudl_pg.h"

#include <math.h>

#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "commands/dbcommands.h"
#include "exec/gdl_engine.h"
#include "funcapi.h"
#include "ilp/gdl_ilp.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(gpudl_progress_rows);

#define PROGRESS_PROGRAM_LEN 64
#define PROGRESS_GOAL_LEN 256

/* One backend's running work; pid 0 means none. */
typedef struct ProgressSlot
{
	uint32		changecount;	/* odd while the owner writes */
	int			pid;
	Oid			dbid;
	Oid			roleid;
	TimestampTz started;
	char		kind[16];		/* query, count, materialize, learn */
	char		phase[16];
	char		device[8];		/* cpu, gpu, or empty when not chosen yet */
	char		program[PROGRESS_PROGRAM_LEN];
	char		goal[PROGRESS_GOAL_LEN];	/* goal, or the learn's target */
	int32		stratum;		/* -1: unknown */
	int32		epoch;			/* -1: unknown */
	int64		round;			/* -1: unknown */
	int64		tuples;			/* -1: unknown */
	int64		bytes;			/* -1: unknown */
	double		loss;			/* NaN: unknown */
} ProgressSlot;

/* The shared array: one slot per backend (MaxBackends). */
typedef struct ProgressShared
{
	int			nslots;
	ProgressSlot slots[FLEXIBLE_ARRAY_MEMBER];
} ProgressShared;

static ProgressShared *shared = NULL;
static ProgressSlot local_slot;		/* without shared memory */
static int	depth = 0;			/* nesting of begin/end */
static int	begin_level = 0;	/* transaction nest level of the outermost begin */
static bool callbacks_registered = false;

/* Open and close an update of the own slot (the changecount protocol). */
#define BEGIN_WRITE(s) \
	do { START_CRIT_SECTION(); (s)->changecount++; pg_write_barrier(); } while (0)
#define END_WRITE(s) \
	do { pg_write_barrier(); (s)->changecount++; END_CRIT_SECTION(); } while (0)

/* Bytes of the progress slots. */
Size
gpudl_progress_shmem_size(void)
{
	return add_size(offsetof(ProgressShared, slots),
					mul_size(MaxBackends, sizeof(ProgressSlot)));
}

/* Reset the progress slots at postmaster start (and after a crash). */
void
gpudl_progress_shmem_init(void *mem, bool found, union LWLockPadded *locks)
{
	shared = mem;
	if (!found)
	{
		memset(shared, 0, gpudl_progress_shmem_size());
		shared->nslots = MaxBackends;
	}
}

/* This backend's slot: shared when gpudl was preloaded, else local. */
static volatile ProgressSlot *
my_slot(void)
{
	if (gpudl_shmem_ready() && shared != NULL &&
		MyBackendId != InvalidBackendId && MyBackendId <= shared->nslots)
		return &shared->slots[MyBackendId - 1];
	return &local_slot;
}

/* Copy a string into a slot field, cut at a character boundary. */
static void
put_string(volatile char *dst, int size, const char *src)
{
	int			len = src ? strlen(src) : 0;

	if (len >= size)
		len = pg_mbcliplen(src, len, size - 1);
	memcpy((char *) dst, src ? src : "", len);
	dst[len] = '\0';
}

/* Clear the own slot: no work is running. */
static void
progress_clear(void)
{
	volatile ProgressSlot *s = my_slot();

	depth = 0;
	if (s->pid == 0)
		return;
	BEGIN_WRITE(s);
	s->pid = 0;
	END_WRITE(s);
}

/* An aborted transaction ends whatever work it ran. */
static void
progress_xact_callback(XactEvent event, void *arg)
{
	if (depth > 0 &&
		(event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
		 event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT ||
		 event == XACT_EVENT_PREPARE))
		progress_clear();
}

/* An aborted subtransaction (a caught error) ends the work begun in it. */
static void
progress_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						  SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB && depth > 0 &&
		GetCurrentTransactionNestLevel() <= begin_level)
		progress_clear();
}

/* Backend exit: leave no slot behind. */
static void
progress_exit_callback(int code, Datum arg)
{
	progress_clear();
}

/*
 * Start reporting work of the given kind on a program and goal (or learn
 * target).  Returns a token for gpudl_progress_end; a nested call keeps the
 * outer work's kind, program and goal.
 */
int
gpudl_progress_begin(const char *kind, const char *program, const char *goal)
{
	volatile ProgressSlot *s;
	TimestampTz now;

	if (depth++ > 0)
		return depth - 1;
	if (!callbacks_registered)
	{
		RegisterXactCallback(progress_xact_callback, NULL);
		RegisterSubXactCallback(progress_subxact_callback, NULL);
		before_shmem_exit(progress_exit_callback, (Datum) 0);
		callbacks_registered = true;
	}
	begin_level = GetCurrentTransactionNestLevel();
	now = GetCurrentTimestamp();
	s = my_slot();
	BEGIN_WRITE(s);
	s->pid = MyProcPid;
	s->dbid = MyDatabaseId;
	s->roleid = GetUserId();
	s->started = now;
	put_string(s->kind, sizeof(s->kind), kind);
	put_string(s->phase, sizeof(s->phase), "loading");
	put_string(s->device, sizeof(s->device), "");
	put_string(s->program, sizeof(s->program), program);
	put_string(s->goal, sizeof(s->goal), goal);
	s->stratum = -1;
	s->epoch = -1;
	s->round = -1;
	s->tuples = -1;
	s->bytes = -1;
	s->loss = NAN;
	END_WRITE(s);
	return 0;
}

/* End the work begun with the matching gpudl_progress_begin. */
void
gpudl_progress_end(int token)
{
	if (token <= 0)
		progress_clear();
	else
		depth = token;
}

/* Set the phase of the running work (e.g. "writing"). */
void
gpudl_progress_phase(const char *phase)
{
	volatile ProgressSlot *s = my_slot();

	if (depth == 0)
		return;
	BEGIN_WRITE(s);
	put_string(s->phase, sizeof(s->phase), phase);
	END_WRITE(s);
}

/* Set the device of the running work ("cpu" or "gpu"). */
void
gpudl_progress_device(const char *device)
{
	volatile ProgressSlot *s = my_slot();

	if (depth == 0 || device == NULL)
		return;
	BEGIN_WRITE(s);
	put_string(s->device, sizeof(s->device), device);
	END_WRITE(s);
}

/*
 * The engine's progress hook (GdlRunInput.progress): arg, when not NULL,
 * points to the run's device name.
 */
void
gpudl_progress_engine(void *arg, const GdlProgress *p)
{
	volatile ProgressSlot *s = my_slot();
	const char *const *device = arg;

	if (depth == 0)
		return;
	BEGIN_WRITE(s);
	put_string(s->phase, sizeof(s->phase), p->phase);
	if (device && *device)
		put_string(s->device, sizeof(s->device), *device);
	s->stratum = p->stratum;
	s->round = p->round;
	s->tuples = p->tuples;
	s->bytes = p->bytes;
	END_WRITE(s);
}

/* The ILP learner's progress hook (gdl_ilp_set_progress). */
void
gpudl_progress_ilp(void *arg, const GdlIlpProgress *p)
{
	volatile ProgressSlot *s = my_slot();

	if (depth == 0)
		return;
	BEGIN_WRITE(s);
	put_string(s->phase, sizeof(s->phase), p->phase);
	s->stratum = -1;
	s->round = -1;
	s->epoch = p->epoch;
	s->loss = p->loss;
	END_WRITE(s);
}

/* A consistent copy of a slot another backend may be writing. */
static void
read_slot(volatile ProgressSlot *s, ProgressSlot *copy)
{
	for (;;)
	{
		uint32		before = s->changecount;
		uint32		after;

		pg_read_barrier();
		memcpy(copy, (ProgressSlot *) s, sizeof(*copy));
		pg_read_barrier();
		after = s->changecount;
		if (before == after && (before & 1) == 0)
			break;
		CHECK_FOR_INTERRUPTS();
	}
	copy->kind[sizeof(copy->kind) - 1] = '\0';
	copy->phase[sizeof(copy->phase) - 1] = '\0';
	copy->device[sizeof(copy->device) - 1] = '\0';
	copy->program[sizeof(copy->program) - 1] = '\0';
	copy->goal[sizeof(copy->goal) - 1] = '\0';
}

/*
 * Whether the caller may see the details of a role's work: like
 * pg_stat_activity, members of that role and of pg_read_all_stats.
 */
static bool
may_see(Oid roleid)
{
	return has_privs_of_role(GetUserId(), roleid) ||
		has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
}

/* One row of gpudl_progress; details NULL unless the caller may see them. */
static void
put_row(ReturnSetInfo *rsinfo, const ProgressSlot *c, TimestampTz now)
{
	Datum		v[16];
	bool		n[16];
	char	   *role = GetUserNameFromId(c->roleid, true);
	char	   *db = get_database_name(c->dbid);
	Interval   *elapsed;
	int			i;

	memset(n, true, sizeof(n));
	v[0] = Int32GetDatum(c->pid);
	n[0] = false;
	if (role)
	{
		v[1] = DirectFunctionCall1(namein, CStringGetDatum(role));
		n[1] = false;
	}
	if (db)
	{
		v[2] = DirectFunctionCall1(namein, CStringGetDatum(db));
		n[2] = false;
	}
	if (may_see(c->roleid))
	{
		v[3] = CStringGetTextDatum(c->program);
		v[4] = CStringGetTextDatum(c->goal);
		v[5] = CStringGetTextDatum(c->kind);
		v[6] = CStringGetTextDatum(c->phase);
		for (i = 3; i <= 6; i++)
			n[i] = false;
		v[7] = Int32GetDatum(c->stratum);
		n[7] = c->stratum < 0;
		v[8] = Int64GetDatum(c->round);
		n[8] = c->round < 0;
		v[9] = Int64GetDatum(c->tuples);
		n[9] = c->tuples < 0;
		v[10] = CStringGetTextDatum(c->device);
		n[10] = c->device[0] == '\0';
		v[11] = Int64GetDatum(c->bytes);
		n[11] = c->bytes < 0;
		v[12] = Int32GetDatum(c->epoch);
		n[12] = c->epoch < 0;
		v[13] = Float8GetDatum(c->loss);
		n[13] = isnan(c->loss);
		v[14] = TimestampTzGetDatum(c->started);
		n[14] = false;
		elapsed = palloc0(sizeof(Interval));
		elapsed->time = now - c->started;
		v[15] = IntervalPGetDatum(elapsed);
		n[15] = false;
	}
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, n);
}

/*
 * gpudl._progress(): the rows of the gpudl_progress view — every running
 * evaluation and learn of the cluster (with shared memory), else the
 * calling session's own.
 */
Datum
gpudl_progress_rows(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TimestampTz now = GetCurrentTimestamp();
	ProgressSlot copy;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	if (gpudl_shmem_ready() && shared != NULL)
	{
		for (i = 0; i < shared->nslots; i++)
		{
			read_slot(&shared->slots[i], &copy);
			if (copy.pid != 0)
				put_row(rsinfo, &copy, now);
		}
	}
	else
	{
		static bool told = false;

		/* once a session: the view cannot see the others' work */
		if (!told)
			ereport(NOTICE,
					(errmsg("gpudl_progress shows only this session's work"),
					 errdetail("gpudl is not in shared_preload_libraries, so sessions share no progress."),
					 errhint("Add gpudl to shared_preload_libraries and restart the server to see every session's work.")));
		told = true;
		read_slot(&local_slot, &copy);
		if (copy.pid != 0)
			put_row(rsinfo, &copy, now);
	}
	return (Datum) 0;
}
