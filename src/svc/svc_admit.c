/*
 * svc_admit.c — admission of memory for runs, cluster-wide: a queue per
 * resource (device memory, host memory) in front of a budget.
 *
 * A run asks for what it expects to need (the peak of the last run of the
 * same program and goal, or a small start) and waits in the queue until it
 * fits; a waiter is let in only when it fits after everyone queued before it
 * (no one is overtaken in memory terms, yet a small run behind a large one
 * starts as soon as there is room for both; a small run passes waiters
 * when it fits now).  Running, a run grows its
 * reservation without waiting (svc_admit_grow, svc_reserve_bytes); when the
 * budget is full the growth is refused, the run gives back everything, and
 * it queues again for twice what it held (pg_run.c).  No run ever waits
 * while holding memory, so runs cannot deadlock on each other; needs double,
 * so retries end.  Waiting sleeps on the latch in 5 ms steps and honours
 * cancel and statement_timeout.
 */
#include "svc/svc_int.h"

#include <unistd.h>

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#define GROW_CHUNK_HOST		(INT64CONST(64) << 20)
#define GROW_CHUNK_DEVICE	(INT64CONST(256) << 20)

static bool exit_hook_installed = false;

/* The budget of a resource in bytes. */
int64
svc_budget(int resource)
{
	if (resource == SVC_RES_HOST)
	{
		static int64 physical = 0;

		if (gpudl_cluster_host_memory_mb > 0)
			return (int64) gpudl_cluster_host_memory_mb * 1024 * 1024;
		if (physical == 0)
			physical = (int64) sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
		return physical > 0 ? physical / 2 : INT64_MAX / 4;
	}
	if (gpudl_device_memory_budget_mb > 0)
		return (int64) gpudl_device_memory_budget_mb * 1024 * 1024;
	return svc_shared ? svc_shared->device_budget : 0;
}

/* Key of the history of one (database, program version, goal). */
uint64
svc_history_key(const char *program, int64 version, const char *goal)
{
	uint64		h = 1469598103934665603ULL;
	const char *parts[2] = {program, goal};
	int			i;

	h ^= MyDatabaseId;
	h *= 1099511628211ULL;
	h ^= (uint64) version;
	h *= 1099511628211ULL;
	for (i = 0; i < 2; i++)
	{
		const char *p;

		for (p = parts[i] ? parts[i] : ""; *p; p++)
		{
			h ^= (unsigned char) *p;
			h *= 1099511628211ULL;
		}
		h ^= 0xff;
		h *= 1099511628211ULL;
	}
	return h ? h : 1;
}

/* The remembered peak of a key (0: none). */
int64
svc_history_peak(uint64 key, int resource)
{
	int64		peak = 0;
	int			i;

	if (!svc_active())
		return 0;
	LWLockAcquire(svc_admit_lock(), LW_SHARED);
	for (i = 0; i < SVC_HISTORY; i++)
		if (svc_shared->history[i].key == key)
			peak = svc_shared->history[i].peak[resource];
	LWLockRelease(svc_admit_lock());
	return peak;
}

/* Remember the peak of a successful run (replacing the oldest entry). */
void
svc_history_record(uint64 key, int resource, int64 peak)
{
	SvcHistory *slot = NULL;
	int			i;

	if (!svc_active())
		return;
	LWLockAcquire(svc_admit_lock(), LW_EXCLUSIVE);
	for (i = 0; i < SVC_HISTORY && slot == NULL; i++)
		if (svc_shared->history[i].key == key)
			slot = &svc_shared->history[i];
	for (i = 0; i < SVC_HISTORY && slot == NULL; i++)
		if (svc_shared->history[i].key == 0)
			slot = &svc_shared->history[i];
	if (slot == NULL)
	{
		slot = &svc_shared->history[0];
		for (i = 1; i < SVC_HISTORY; i++)
			if (svc_shared->history[i].stamp < slot->stamp)
				slot = &svc_shared->history[i];
		memset(slot, 0, sizeof(*slot));
	}
	slot->key = key;
	slot->peak[resource] = peak;
	slot->stamp = svc_shared->next_stamp++;
	LWLockRelease(svc_admit_lock());
}

/*
 * Add 'delta' bytes to a resource's committed total if the budget allows;
 * atomic, so admissions and growth of running runs never overshoot it.
 */
static bool
commit_bytes(int resource, int64 delta)
{
	pg_atomic_uint64 *c = &svc_shared->committed[resource];
	int64		budget = svc_budget(resource);
	uint64		cur = pg_atomic_read_u64(c);

	for (;;)
	{
		if ((int64) cur + delta > budget)
			return false;
		if (pg_atomic_compare_exchange_u64(c, &cur, cur + (uint64) delta))
			return true;
	}
}

/* Give back bytes of a resource's committed total. */
static void
uncommit_bytes(int resource, int64 bytes)
{
	if (bytes > 0)
		pg_atomic_fetch_sub_u64(&svc_shared->committed[resource], (uint64) bytes);
}

/* Free a job entry (admission lock held exclusively). */
static void
job_free_locked(SvcJob *j)
{
	if (j->state == SVC_JOB_RUNNING)
		uncommit_bytes(j->resource, (int64) pg_atomic_read_u64(&j->granted));
	pg_atomic_write_u64(&j->granted, 0);
	pg_atomic_write_u64(&j->held, 0);
	j->state = SVC_JOB_FREE;
	j->pid = 0;
}

/* Session exit (FATAL, terminate): drop this backend's admissions. */
static void
release_at_exit(int code, Datum arg)
{
	svc_admit_release_all();
}

/* Drop every admission of this backend (after an error, or at exit). */
void
svc_admit_release_all(void)
{
	int			i;

	if (!svc_active())
		return;
	LWLockAcquire(svc_admit_lock(), LW_EXCLUSIVE);
	for (i = 0; i < SVC_MAX_JOBS; i++)
		if (svc_shared->jobs[i].state != SVC_JOB_FREE && svc_shared->jobs[i].pid == MyProcPid)
			job_free_locked(&svc_shared->jobs[i]);
	LWLockRelease(svc_admit_lock());
}

/*
 * Try to let the job in (admission lock held exclusively): it must fit in
 * the free budget after the needs of everyone queued before it.  A small
 * run (at most 1/32 of the budget) may pass larger waiters when it fits
 * now: it takes little from them and ends soon, and a quick query is not
 * held behind a long one for the whole of that one's run.
 */
static bool
try_admit_locked(SvcJob *me)
{
	int64		ahead = 0;
	int64		budget = svc_budget(me->resource);
	int			i;

	for (i = 0; i < SVC_MAX_JOBS; i++)
	{
		SvcJob	   *j = &svc_shared->jobs[i];

		if (j != me && j->state == SVC_JOB_WAITING && j->resource == me->resource &&
			j->ticket < me->ticket)
			ahead += Min(j->need, budget);
	}
	if ((int64) pg_atomic_read_u64(&svc_shared->committed[me->resource]) + ahead + me->need > budget &&
		me->need > budget / 32)
		return false;
	if (!commit_bytes(me->resource, me->need))
		return false;
	pg_atomic_write_u64(&me->granted, (uint64) me->need);
	me->state = SVC_JOB_RUNNING;
	me->started_at = GetCurrentTimestamp();
	return true;
}

/* Describe who holds a resource, for the message of a run that gave up. */
static void
describe_holders(int resource, char *out, size_t outlen)
{
	size_t		used = 0;
	int			n = 0;
	int			i;

	out[0] = '\0';
	LWLockAcquire(svc_admit_lock(), LW_SHARED);
	for (i = 0; i < SVC_MAX_JOBS && used + 80 < outlen; i++)
	{
		SvcJob	   *j = &svc_shared->jobs[i];

		if (j->state != SVC_JOB_RUNNING || j->resource != resource || j->pid == MyProcPid)
			continue;
		used += snprintf(out + used, outlen - used, "%spid %d (%lld MB%s%s)",
						 n++ ? ", " : "", j->pid,
						 (long long) (pg_atomic_read_u64(&j->granted) >> 20),
						 j->program[0] ? ", program " : "", j->program);
	}
	LWLockRelease(svc_admit_lock());
	if (n == 0)
		snprintf(out, outlen, "no other run holds it (%lld MB committed, budget %lld MB)",
				 (long long) (pg_atomic_read_u64(&svc_shared->committed[resource]) >> 20),
				 (long long) (svc_budget(resource) >> 20));
}

/*
 * Wait until 'need' bytes of a resource are admitted.  A first call takes a
 * new place in the queue; a call for an admission that ran before (a retry)
 * gives back what it held and keeps its place, so that retried runs are
 * not overtaken.  Returns false after timeout_ms (0: no limit) with the
 * holders described in 'busy'; errors (cancel, statement_timeout) leave no
 * admission behind.
 */
bool
svc_admit(SvcAdmission *adm, int resource, int64 need, const char *program,
		  const char *goal, int timeout_ms, char *busy, size_t busylen)
{
	SvcJob	   *volatile me = NULL;
	TimestampTz start = GetCurrentTimestamp();
	int64		budget = svc_budget(resource);
	int			i;
	volatile bool admitted = false;

	if (!exit_hook_installed)
	{
		before_shmem_exit(release_at_exit, (Datum) 0);
		exit_hook_installed = true;
	}
	need = Max(need, 0);
	if (budget > 0)
		need = Min(need, budget);
	LWLockAcquire(svc_admit_lock(), LW_EXCLUSIVE);
	if (adm->job >= 0 && svc_shared->jobs[adm->job].pid == MyProcPid &&
		svc_shared->jobs[adm->job].state != SVC_JOB_FREE)
	{
		me = &svc_shared->jobs[adm->job];
		if (me->state == SVC_JOB_RUNNING)
			uncommit_bytes(me->resource, (int64) pg_atomic_read_u64(&me->granted));
		pg_atomic_write_u64(&me->granted, 0);
		pg_atomic_write_u64(&me->held, 0);
		me->attempts++;
	}
	else
	{
		for (i = 0; i < SVC_MAX_JOBS && me == NULL; i++)
			if (svc_shared->jobs[i].state == SVC_JOB_FREE)
			{
				me = &svc_shared->jobs[i];
				adm->job = i;
			}
		if (me == NULL)
		{
			LWLockRelease(svc_admit_lock());
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("gpudl: too many runs waiting for memory (%d)", SVC_MAX_JOBS)));
		}
		me->ticket = svc_shared->next_ticket++;
		me->pid = MyProcPid;
		me->userid = GetUserId();
		me->dbid = MyDatabaseId;
		me->resource = resource;
		me->waited_us = 0;
		me->attempts = 1;
		strlcpy(me->program, program ? program : "", sizeof(me->program));
		strlcpy(me->goal, goal ? goal : "", sizeof(me->goal));
	}
	me->state = SVC_JOB_WAITING;
	me->need = need;
	me->enqueued_at = start;
	strlcpy(me->phase, "waiting", sizeof(me->phase));
	adm->resource = resource;
	adm->need = need;
	admitted = try_admit_locked(me);
	LWLockRelease(svc_admit_lock());

	PG_TRY();
	{
		while (!admitted)
		{
			long		waited_ms = (long) ((GetCurrentTimestamp() - start) / 1000);

			if (timeout_ms > 0 && waited_ms >= timeout_ms)
				break;
			/* loaded tables no session uses give way to runs */
			if (resource == SVC_RES_DEVICE && svc_resident_make_room(me->need))
			{
				LWLockAcquire(svc_admit_lock(), LW_EXCLUSIVE);
				admitted = try_admit_locked(me);
				LWLockRelease(svc_admit_lock());
				if (admitted)
					break;
			}
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 5L, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
			LWLockAcquire(svc_admit_lock(), LW_EXCLUSIVE);
			admitted = try_admit_locked(me);
			LWLockRelease(svc_admit_lock());
		}
	}
	PG_CATCH();
	{
		LWLockAcquire(svc_admit_lock(), LW_EXCLUSIVE);
		job_free_locked(me);
		LWLockRelease(svc_admit_lock());
		adm->job = -1;
		PG_RE_THROW();
	}
	PG_END_TRY();
	me->waited_us += GetCurrentTimestamp() - start;
	if (admitted)
	{
		strlcpy(me->phase, "admitted", sizeof(me->phase));
		return true;
	}
	describe_holders(resource, busy, busylen);
	LWLockAcquire(svc_admit_lock(), LW_EXCLUSIVE);
	job_free_locked(me);
	LWLockRelease(svc_admit_lock());
	adm->job = -1;
	return false;
}

/*
 * Grow a job's reservation to cover 'bytes_after' without waiting (chunks,
 * so that a run growing steadily takes the atomic path rarely); also records
 * what it holds.  False when the budget is full.
 */
static bool
grow_job(SvcJob *j, int64 bytes_after)
{
	int64		granted = (int64) pg_atomic_read_u64(&j->granted);
	int64		chunk = j->resource == SVC_RES_DEVICE ? GROW_CHUNK_DEVICE : GROW_CHUNK_HOST;
	int64		delta;

	pg_atomic_write_u64(&j->held, (uint64) Max(bytes_after, 0));
	if (bytes_after <= granted)
		return true;
	delta = bytes_after - granted;
	delta = (delta + chunk - 1) / chunk * chunk;
	if (!commit_bytes(j->resource, delta))
	{
		delta = bytes_after - granted;	/* the exact need may still fit */
		if (!commit_bytes(j->resource, delta))
			return false;
	}
	pg_atomic_fetch_add_u64(&j->granted, (uint64) delta);
	return true;
}

/* A session's run grows (host memory, from the host allocator). */
bool
svc_admit_grow(SvcAdmission *adm, int64 bytes_after)
{
	if (adm->job < 0 || !svc_active())
		return true;
	return grow_job(&svc_shared->jobs[adm->job], bytes_after);
}

/*
 * The service's admission hook (any service thread): 0 when the run of job
 * 'job' may hold bytes_after device bytes, -1 when the budget is full.
 */
int64
svc_reserve_bytes(int job, int64 bytes_after)
{
	if (job < 0 || job >= SVC_MAX_JOBS)
		return 0;
	return grow_job(&svc_shared->jobs[job], bytes_after) ? 0 : -1;
}

/* Bytes reserved for an admission now. */
int64
svc_admit_granted(const SvcAdmission *adm)
{
	if (adm->job < 0 || !svc_active())
		return 0;
	return (int64) pg_atomic_read_u64(&svc_shared->jobs[adm->job].granted);
}

/* The run ended (or gave up): its memory goes back to the budget. */
void
svc_admit_release(SvcAdmission *adm)
{
	if (adm->job < 0 || !svc_active())
		return;
	LWLockAcquire(svc_admit_lock(), LW_EXCLUSIVE);
	if (svc_shared->jobs[adm->job].pid == MyProcPid)
		job_free_locked(&svc_shared->jobs[adm->job]);
	LWLockRelease(svc_admit_lock());
	adm->job = -1;
}

/* Show what an admitted run is doing (gpudl_gpu_jobs.phase); no lock. */
void
svc_admit_set_phase(const SvcAdmission *adm, const char *phase)
{
	if (adm->job < 0 || !svc_active())
		return;
	strlcpy(svc_shared->jobs[adm->job].phase, phase, sizeof(svc_shared->jobs[0].phase));
}
