/*
 * pg_host.c — the core's host hooks inside a PostgreSQL backend: memory from
 * CurrentMemoryContext (so an ERROR frees it with the context), errors as
 * ereport with a SQLSTATE per error class, CHECK_FOR_INTERRUPTS for cancel
 * and statement_timeout, and DEBUG logging.
 */
#include "pg/gpudl_run.h"
#include "svc/svc_int.h"

#include <unistd.h>

#include "exec/gdl_engine.h"
#include "miscadmin.h"
#include "utils/memutils.h"

/*
 * Bytes the core holds through these hooks since the last
 * gpudl_memory_reset(): an evaluation that would pass gpudl.host_memory_limit
 * stops with an ERROR (53200) instead of being killed by the kernel's OOM
 * killer, which would restart the whole cluster.
 */
static int64 tracked_bytes = 0;
static int64 peak_bytes = 0;

/*
 * The cluster admission of the running CPU evaluation (svc_admit.c), or
 * NULL: while set, growth past what it was granted asks the cluster's host
 * budget first, and a refusal stops the run with GPUDL_HOST_BUSY_MSG so
 * that pg_run.c can queue it again.
 */
static SvcAdmission *host_admission = NULL;

/* The limit in bytes: the setting, or 3/4 of physical memory when 0. */
static int64
host_limit(void)
{
	static int64 physical = 0;

	if (gpudl_host_memory_limit_mb > 0)
		return (int64) gpudl_host_memory_limit_mb * 1024 * 1024;
	if (physical == 0)
		physical = (int64) sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
	return physical > 0 ? physical / 4 * 3 : INT64_MAX;
}

/* Start counting afresh: each SQL entry point that evaluates calls this. */
void
gpudl_memory_reset(void)
{
	tracked_bytes = 0;
	peak_bytes = 0;
}

/* Most bytes held since the last reset. */
int64
gpudl_memory_peak(void)
{
	return peak_bytes;
}

/* What was held when the running CPU evaluation started (gpudl_memory_room). */
static int64 run_base_bytes = 0;

/*
 * Bytes an evaluation starting now may still take under
 * gpudl.host_memory_limit: what CPU runs give the engine as their memory
 * limit, so that it slices joins instead of failing (exec_mem.c).  Marks
 * the start of the run for gpudl_memory_run_held.
 */
int64
gpudl_memory_room(void)
{
	int64		room = host_limit() - tracked_bytes;

	run_base_bytes = tracked_bytes;
	return room > 0 ? room : 1;
}

/*
 * GdlRunInput.memory_held of a CPU run: the bytes it holds now (all of the
 * core's allocations since gpudl_memory_room), against the room it got.
 */
int64_t
gpudl_memory_run_held(void *arg)
{
	return tracked_bytes - run_base_bytes;
}

/* Bytes held now. */
int64
gpudl_memory_held(void)
{
	return tracked_bytes;
}

/* A failed attempt's memory context was deleted: count what is left. */
void
gpudl_memory_set_held(int64 bytes)
{
	tracked_bytes = bytes;
}

/* Tie host memory growth to a cluster admission (NULL: none). */
void
gpudl_memory_admission(SvcAdmission *adm)
{
	host_admission = adm;
}

/* Add (or with a negative delta, remove) bytes; raise past the limit. */
static void
account(int64 delta)
{
	tracked_bytes += delta;
	if (tracked_bytes > peak_bytes)
		peak_bytes = tracked_bytes;
	if (delta > 0 && host_admission != NULL && !svc_admit_grow(host_admission, tracked_bytes))
	{
		int64		held = tracked_bytes;

		tracked_bytes = 0;		/* the failed call's memory goes with its context */
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg(GPUDL_HOST_BUSY_MSG),
				 errdetail("The run held %lld MB; other runs hold the rest of gpudl.cluster_host_memory (%lld MB).",
						   (long long) (held >> 20), (long long) (svc_budget(SVC_RES_HOST) >> 20))));
	}
	if (delta > 0 && tracked_bytes > host_limit())
	{
		int64		held = tracked_bytes;

		tracked_bytes = 0;		/* the failed call's memory goes with its context */
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("gpudl: the evaluation needs more than %lld MB of host memory",
						(long long) (held / (1024 * 1024))),
				 errhint("Raise gpudl.host_memory_limit, ask for fewer answers (bind goal arguments), or use a GPU.")));
	}
}

/* Zeroed, possibly huge allocation in the current memory context. */
static void *
pg_alloc(size_t size)
{
	void	   *p;

	account((int64) size);		/* before touching the memory */
	p = MemoryContextAllocExtended(CurrentMemoryContext, size,
								   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	account((int64) GetMemoryChunkSpace(p) - (int64) size);
	return p;
}

/* Resize a block (huge sizes allowed). */
static void *
pg_realloc(void *ptr, size_t size)
{
	int64		old = GetMemoryChunkSpace(ptr);
	void	   *p;

	account((int64) size - old);	/* before touching the memory */
	p = repalloc_huge(ptr, size);
	account((int64) GetMemoryChunkSpace(p) - (int64) size);
	return p;
}

static void
pg_free(void *ptr)
{
	account(-(int64) GetMemoryChunkSpace(ptr));
	pfree(ptr);
}

/* The SQLSTATE for each core error class (PRODUCT.md section 6). */
static int
sqlstate_for(GdlErrCode code)
{
	switch (code)
	{
		case GDL_ERR_SYNTAX:
			return ERRCODE_SYNTAX_ERROR;
		case GDL_ERR_UNDEFINED:
			return ERRCODE_UNDEFINED_TABLE;
		case GDL_ERR_DATATYPE:
			return ERRCODE_DATATYPE_MISMATCH;
		case GDL_ERR_UNSAFE:
		case GDL_ERR_STRATIFY:
			return ERRCODE_INVALID_OBJECT_DEFINITION;
		case GDL_ERR_PRIVILEGE:
			return ERRCODE_INSUFFICIENT_PRIVILEGE;
		case GDL_ERR_PARAM:
			return ERRCODE_INVALID_PARAMETER_VALUE;
		case GDL_ERR_LIMIT:
			return ERRCODE_PROGRAM_LIMIT_EXCEEDED;
		case GDL_ERR_DEVICE_MEMORY:
		case GDL_ERR_OUT_OF_MEMORY:
			return ERRCODE_OUT_OF_MEMORY;
		case GDL_ERR_DIVISION_BY_ZERO:
			return ERRCODE_DIVISION_BY_ZERO;
		case GDL_ERR_OVERFLOW:
			return ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE;
		case GDL_ERR_DEVICE:
			return ERRCODE_SYSTEM_ERROR;
		case GDL_ERR_INTERNAL:
			break;
	}
	return ERRCODE_INTERNAL_ERROR;
}

/*
 * A hint in PostgreSQL's style: a sentence with a capital first letter and
 * a final period (the core writes hints as fragments).
 */
static char *
sentence(const char *s)
{
	size_t		n = strlen(s);
	char	   *r = psprintf("%s%s", s, (n > 0 && s[n - 1] != '.') ? "." : "");

	if (r[0] >= 'a' && r[0] <= 'z')
		r[0] = r[0] - 'a' + 'A';
	return r;
}

/* Turn a core error into an ERROR; never returns. */
static void
pg_error(const GdlError *err)
{
	ereport(ERROR,
			(errcode(sqlstate_for(err->code)),
			 errmsg_internal("%s", err->message),
			 err->detail ? errdetail_internal("%s", err->detail) : 0,
			 err->hint ? errhint("%s", sentence(err->hint)) : 0));
	pg_unreachable();
}

static void
pg_check_interrupts(void)
{
	CHECK_FOR_INTERRUPTS();
}

/*
 * Worker threads' poll: a cancel, statement_timeout or termination that the
 * next CHECK_FOR_INTERRUPTS will raise.  Only reads the signal handlers'
 * flags, so any thread may call it.
 */
static bool
pg_interrupt_pending(void)
{
	return (QueryCancelPending || ProcDiePending) &&
		InterruptHoldoffCount == 0 && CritSectionCount == 0 && QueryCancelHoldoffCount == 0;
}

static void
pg_log(const char *msg)
{
	elog(DEBUG1, "gpudl: %s", msg);
}

static const GdlHost pg_host = {
	pg_alloc, pg_realloc, pg_free, pg_error, pg_check_interrupts, pg_log, pg_interrupt_pending
};

/* Install the hooks; cheap, so every entry point may call it. */
void
gpudl_install_host(void)
{
	gdl_set_host(&pg_host);
	gdl_backend_register(GDL_DEVICE_CPU, gdl_cpu_backend());
}
