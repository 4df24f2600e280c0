/*
 * svc_proxy.c — a session's GPU backend when the GPU service runs: a
 * GdlBackend whose every operation is sent to a slot of the service and
 * answered there (svc_serve.c).  The engine cannot tell it from the CUDA
 * backend: relations are the service's handles, errors come back as
 * statuses with the service's message.
 *
 * A context holds one slot from ctx_create to ctx_destroy (or ctx_abort),
 * so a run has the service's attention while it lasts; a session that finds
 * every slot busy waits for one (cancel and statement_timeout end the wait).
 * Requests with large payloads (uploads, text ranks, remaps) and large
 * replies (downloads) pass through the slot's buffer in pieces.
 *
 * If the service ends during a request, the request fails with
 * GDL_BK_ERR_DEVICE ("the GPU service ended ...").
 */
#include "svc/svc_int.h"

#include <errno.h>
#include <signal.h>
#include <time.h>

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#define SPIN_LOOPS 40000		/* busy-wait for a reply before sleeping */

#define SIZE_MEMO 64			/* relation sizes remembered per context */

/*
 * A session's view of a context in the service.  To spare round trips
 * (a small run is hundreds of operations, and each hop costs more than the
 * operation), three things are answered here: the counters come back with
 * every reply; releases wait in 'pending' and travel with the next
 * request; a relation's size, once asked, is remembered until the
 * relation is released (relations never change).
 */
typedef struct ProxyCtx
{
	SvcSlot    *slot;
	uint32		generation;		/* of the service that holds the context */
	int64		rctx;			/* the service's context */
	bool		has_counters;
	GdlBkCounters counters;		/* as of the last reply */
	int			npending;
	int64		pending[SVC_MAX_RELEASE];	/* released here, not yet there */
	int64		memo_rel[SIZE_MEMO];	/* direct-mapped: handle, 0 = empty */
	int64		memo_rows[SIZE_MEMO];
	char		err[SVC_ERRLEN];
} ProxyCtx;

/* A piece of a request's payload. */
typedef struct Piece
{
	const void *data;
	int64		len;
} Piece;

/*
 * The payload pieces of an upload: each of ncols columns of nrows 8-byte
 * values (no data when there are no rows), for px_upload and the shared
 * resident tables alike.
 */
static void
column_pieces(Piece *pcs, int ncols, int64 nrows, const int64_t *const *cols)
{
	for (int c = 0; c < ncols; c++)
	{
		pcs[c].data = nrows > 0 ? cols[c] : NULL;
		pcs[c].len = nrows * 8;
	}
}

static int	proxy_job = -1;
static int	proxy_priority = 0;
static char create_err[SVC_ERRLEN];

/* The admission the next context belongs to (-1: none). */
void
svc_proxy_set_job(int job)
{
	proxy_job = job;
	proxy_priority = 0;
	/* a small run (by its admitted need) gets the device's high-priority stream */
	if (job >= 0 && svc_shared->jobs[job].need <= svc_budget(SVC_RES_DEVICE) / 32)
		proxy_priority = 1;
}

/*
 * Whether the service that a slot talks to is still the one we met, by
 * its shared state (no system call: this runs before every request).
 */
static bool
service_ready(uint32 generation)
{
	return svc_shared->state == SVC_READY &&
		pg_atomic_read_u32(&svc_shared->generation) == generation &&
		svc_shared->pid > 0;
}

/* service_ready, and its process still exists (checked while waiting). */
static bool
service_alive(uint32 generation)
{
	return service_ready(generation) && kill(svc_shared->pid, 0) == 0;
}

/*
 * Whether an interrupt is pending that the next CHECK_FOR_INTERRUPTS raises
 * (cancel, statement_timeout, termination, fast shutdown).
 */
static bool
interrupt_pending(void)
{
	return (QueryCancelPending || ProcDiePending) && !proc_exit_inprogress &&
		InterruptHoldoffCount == 0 && CritSectionCount == 0 && QueryCancelHoldoffCount == 0;
}

static void note_held(SvcSlot *slot, bool held);

/*
 * Give up a slot whose request still runs: it becomes the service thread's
 * (SVC_SLOT_ORPHAN), which frees it once the request ends and what the slot
 * holds is destroyed.  The session never touches it again.
 */
static void
slot_orphan(SvcSlot *slot)
{
	note_held(slot, false);
	LWLockAcquire(svc_admit_lock(), LW_EXCLUSIVE);
	if (slot->state == SVC_SLOT_BUSY && slot->pid == MyProcPid)
		slot->state = SVC_SLOT_ORPHAN;
	LWLockRelease(svc_admit_lock());
	sem_post(&slot->req_sem);	/* wake the thread if it idles */
}

/*
 * Post the slot's request and wait for its reply: spin first (most
 * operations answer in microseconds), then sleep on the semaphore in 10 ms
 * steps, checking that the service still lives and for interrupts.  On an
 * interrupt the slot's cancel flag asks the service to stop the request
 * (mining and learning jobs stop at their next step); a request that has
 * not ended SVC_CANCEL_GRACE_MS later is abandoned (slot_orphan), so the
 * session never waits for a long operation.  Either way the interrupt is
 * then raised here.  Returns the reply's status.
 */
#define SVC_CANCEL_GRACE_MS 300

int
svc_call(SvcSlot *slot, SvcMsg *m)
{
	uint32		generation = pg_atomic_read_u32(&svc_shared->generation);
	uint64		seq;
	int			i;
	bool		cancelled = false;
	TimestampTz cancel_at = 0;

	/* clean-up requests (often sent while an error unwinds) are short: not interrupted */
	bool		cleanup = m->op == SVC_OP_CTX_DESTROY || m->op == SVC_OP_CTX_ABORT ||
		m->op == SVC_OP_RESET || m->op == SVC_OP_RELEASE || m->op == SVC_OP_RESIDENT_FREE;

	if (slot->state != SVC_SLOT_BUSY || slot->pid != MyProcPid)
	{
		snprintf(m->errmsg, sizeof(m->errmsg), "internal: a request on a slot this session gave up");
		return m->status = GDL_BK_ERR_DEVICE;
	}
	if (!service_ready(generation))
	{
		snprintf(m->errmsg, sizeof(m->errmsg), "the GPU service is not running");
		return m->status = GDL_BK_ERR_DEVICE;
	}
	pg_atomic_write_u32(&slot->cancel, 0);
	seq = pg_atomic_read_u64(&slot->req_seq) + 1;
	pg_write_barrier();
	pg_atomic_write_u64(&slot->req_seq, seq);
	sem_post(&slot->req_sem);
	for (i = 0; i < SPIN_LOOPS; i++)
	{
		if (pg_atomic_read_u64(&slot->rep_seq) == seq)
			break;
		pg_spin_delay();
	}
	while (pg_atomic_read_u64(&slot->rep_seq) != seq)
	{
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 10 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000L)
		{
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (sem_timedwait(&slot->rep_sem, &ts) == 0)
			continue;
		if (pg_atomic_read_u64(&slot->rep_seq) == seq)
			break;
		if (!service_alive(generation))
		{
			snprintf(m->errmsg, sizeof(m->errmsg),
					 "the GPU service ended while it ran this operation");
			return m->status = GDL_BK_ERR_DEVICE;
		}
		if (!cancelled && !cleanup && interrupt_pending())
		{
			cancelled = true;
			cancel_at = GetCurrentTimestamp();
			pg_atomic_write_u32(&slot->cancel, 1);
		}
		if (cancelled &&
			TimestampDifferenceExceeds(cancel_at, GetCurrentTimestamp(), SVC_CANCEL_GRACE_MS))
		{
			slot_orphan(slot);
			CHECK_FOR_INTERRUPTS();
			snprintf(m->errmsg, sizeof(m->errmsg), "the request to the GPU service was cancelled");
			return m->status = GDL_BK_ERR_DEVICE;
		}
	}
	pg_read_barrier();
	if (cancelled)
		CHECK_FOR_INTERRUPTS();
	return m->status;
}

/* Slots this session holds, so that an exit in the middle of a run frees them. */
#define MAX_HELD 8
static SvcSlot *held_slots[MAX_HELD];
static bool exit_hook_installed = false;

/*
 * Session exit (FATAL from pg_terminate_backend or a fast shutdown, or a
 * normal end while a run's context lived): the slot is handed to its
 * service thread, which destroys what it holds and frees it (at once when
 * idle, else when the request in flight ends), so that exiting never waits
 * for the service.  Errors do not get here: they abort the context first.
 */
static void
release_slots_at_exit(int code, Datum arg)
{
	int			i;

	for (i = 0; i < MAX_HELD; i++)
		if (held_slots[i] != NULL)
		{
			SvcSlot    *slot = held_slots[i];

			held_slots[i] = NULL;
			pg_atomic_write_u32(&slot->cancel, 1);
			slot_orphan(slot);
		}
}

/* Note that this session holds (or no longer holds) a slot. */
static void
note_held(SvcSlot *slot, bool held)
{
	int			i;

	if (!exit_hook_installed)
	{
		before_shmem_exit(release_slots_at_exit, (Datum) 0);
		exit_hook_installed = true;
	}
	for (i = 0; i < MAX_HELD; i++)
		if (held ? held_slots[i] == NULL : held_slots[i] == slot)
		{
			held_slots[i] = held ? slot : NULL;
			return;
		}
}

/*
 * Take a free slot, waiting while all are busy.  NULL (with the reason)
 * when the service does not serve a GPU.
 */
SvcSlot *
svc_slot_acquire(char *why, size_t whylen)
{
	for (;;)
	{
		int			i;

		if (svc_shared->state != SVC_READY)
		{
			snprintf(why, whylen, "%s", svc_unavailable_reason());
			return NULL;
		}
		LWLockAcquire(svc_admit_lock(), LW_EXCLUSIVE);
		for (i = 0; i < svc_shared->nslots; i++)
		{
			SvcSlot    *slot = &svc_shared->slots[i];

			if (slot->state == SVC_SLOT_FREE)
			{
				slot->state = SVC_SLOT_BUSY;
				slot->pid = MyProcPid;
				LWLockRelease(svc_admit_lock());
				note_held(slot, true);
				return slot;
			}
		}
		LWLockRelease(svc_admit_lock());
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 5L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* Give a slot back (its contexts must be gone). */
void
svc_slot_release(SvcSlot *slot)
{
	note_held(slot, false);
	LWLockAcquire(svc_admit_lock(), LW_EXCLUSIVE);
	if (slot->state == SVC_SLOT_BUSY && slot->pid == MyProcPid)
	{
		slot->state = SVC_SLOT_FREE;
		slot->pid = 0;
	}
	LWLockRelease(svc_admit_lock());
}

/* The memo entry of a relation handle. */
static inline int
memo_slot(int64 rel)
{
	return (int) (((uint64) rel >> 4) % SIZE_MEMO);
}

/* Remember the rows of a relation (replacing what shared its entry). */
static void
memo_put(ProxyCtx *p, int64 rel, int64 rows)
{
	int			k = memo_slot(rel);

	p->memo_rel[k] = rel;
	p->memo_rows[k] = rows;
}

/*
 * Keep a failed reply's message for last_error(), the counters a reply
 * brings and the sizes of the relations it made.
 */
static int
done(ProxyCtx *p, int status)
{
	SvcMsg	   *m = &p->slot->msg;

	if (status != GDL_BK_OK)
		strlcpy(p->err, m->errmsg, sizeof(p->err));
	if (m->has_counters)
	{
		p->counters = m->counters;
		p->has_counters = true;
	}
	if (status == GDL_BK_OK)
		for (int i = 0; i < 2; i++)
			if (m->out_rel[i] != 0 && m->out_rows[i] >= 0)
				memo_put(p, m->out_rel[i], m->out_rows[i]);
	return status;
}

/*
 * Start a request of 'op' on the context's slot (arguments follow); it
 * carries the releases made since the last request.
 */
static SvcMsg *
begin(ProxyCtx *p, int op)
{
	SvcMsg	   *m = &p->slot->msg;

	m->op = op;
	m->job = -1;
	m->staged = 0;
	m->len = 0;
	m->a[0] = p->rctx;
	m->has_counters = 0;
	m->release_ctx = p->rctx;
	m->nrelease = p->npending;
	if (p->npending > 0)
		memcpy(m->release, p->pending, sizeof(int64) * p->npending);
	p->npending = 0;
	return m;
}



/*
 * Send a request whose payload is the concatenation of 'pieces': inline in
 * the buffer when it fits, else staged in buffer-sized pieces first.  The
 * request's arguments (set by the caller in m->a) are kept across staging.
 */
static int
send_with_payload(ProxyCtx *p, SvcMsg *m, const Piece *pieces, int npieces)
{
	SvcSlot    *slot = p->slot;
	char	   *buf = svc_slot_buf(slot);
	Size		cap = svc_shared->bufsize;
	int64		total = 0;
	int			i;

	for (i = 0; i < npieces; i++)
		total += pieces[i].len;
	if (total <= (int64) cap)
	{
		int64		off = 0;

		for (i = 0; i < npieces; i++)
		{
			if (pieces[i].len > 0)
				memcpy(buf + off, pieces[i].data, pieces[i].len);
			off += pieces[i].len;
		}
		m->len = total;
		m->staged = 0;
		return done(p, svc_call(slot, m));
	}
	else
	{
		SvcMsg		saved = *m;
		int64		off = 0;
		int			pi = 0;
		int64		pin = 0;	/* offset inside pieces[pi] */

		m->nrelease = 0;		/* the releases go with the request itself */

		while (off < total)
		{
			int64		n = 0;

			while (n < (int64) cap && pi < npieces)
			{
				int64		take = Min((int64) cap - n, pieces[pi].len - pin);

				memcpy(buf + n, (const char *) pieces[pi].data + pin, take);
				n += take;
				pin += take;
				if (pin == pieces[pi].len)
				{
					pi++;
					pin = 0;
				}
			}
			m->op = SVC_OP_STAGE_PUT;
			m->staged = 0;
			m->a[0] = off;
			m->a[1] = total;
			m->len = n;
			if (svc_call(slot, m) != GDL_BK_OK)
				return done(p, m->status);
			off += n;
			CHECK_FOR_INTERRUPTS();
		}
		*m = saved;
		m->len = total;
		m->staged = 1;
		return done(p, svc_call(slot, m));
	}
}

/* Send a request without payload. */
static int
send_plain(ProxyCtx *p, SvcMsg *m)
{
	return send_with_payload(p, m, NULL, 0);
}

/* ------------------------------------------------------------ operations */

static void *
px_ctx_create(const GdlBkConfig *cfg, const char **errmsg)
{
	ProxyCtx   *p;
	SvcSlot    *slot;
	SvcMsg	   *m;

	slot = svc_slot_acquire(create_err, sizeof(create_err));
	if (slot == NULL)
	{
		if (errmsg)
			*errmsg = create_err;
		return NULL;
	}
	p = MemoryContextAllocZero(TopMemoryContext, sizeof(ProxyCtx));
	p->slot = slot;
	p->generation = pg_atomic_read_u32(&svc_shared->generation);
	m = begin(p, SVC_OP_RESET);
	if (send_plain(p, m) == GDL_BK_OK)
	{
		m = begin(p, SVC_OP_CTX_CREATE);
		m->a[0] = cfg ? cfg->memory_limit : 0;
		m->a[1] = cfg ? cfg->nthreads : 0;
		m->a[2] = proxy_priority;
		m->job = proxy_job;
		if (send_plain(p, m) == GDL_BK_OK)
		{
			p->rctx = m->a[0];
			return p;
		}
	}
	strlcpy(create_err, p->err, sizeof(create_err));
	svc_slot_release(slot);
	pfree(p);
	if (errmsg)
		*errmsg = create_err;
	return NULL;
}

/* Destroy (or abort) the context and give its slot back. */
static void
px_end(ProxyCtx *p, int op)
{
	SvcMsg	   *m = begin(p, op);

	if (p->generation == pg_atomic_read_u32(&svc_shared->generation))
		(void) send_plain(p, m);
	svc_slot_release(p->slot);
	pfree(p);
}

static void
px_ctx_destroy(void *ctx)
{
	px_end((ProxyCtx *) ctx, SVC_OP_CTX_DESTROY);
}

/* After an error the host memory is going away, but p lives in TopMemoryContext. */
static void
px_ctx_abort(void *ctx)
{
	px_end((ProxyCtx *) ctx, SVC_OP_CTX_ABORT);
}

static const char *
px_last_error(void *ctx)
{
	return ((ProxyCtx *) ctx)->err;
}

/*
 * The counters as of the last reply (no operation ran since).  Releases
 * still pending count in bytes_held until the next request: the engine's
 * slicing (exec_mem.c) errs towards smaller slices by at most those.
 */
static void
px_counters(void *ctx, GdlBkCounters *out)
{
	ProxyCtx   *p = ctx;
	SvcMsg	   *m;

	memset(out, 0, sizeof(*out));
	if (p->has_counters)
	{
		*out = p->counters;
		return;
	}
	m = begin(p, SVC_OP_COUNTERS);
	if (send_plain(p, m) == GDL_BK_OK)
		*out = m->counters;
}

static int
px_set_text_ranks(void *ctx, const int32_t *ranks, int32_t n)
{
	ProxyCtx   *p = ctx;
	SvcMsg	   *m = begin(p, SVC_OP_SET_TEXT_RANKS);
	Piece		pc = {ranks, (int64) n * sizeof(int32_t)};

	m->a[1] = n;
	return send_with_payload(p, m, &pc, 1);
}

static int
px_upload(void *ctx, int ncols, int64_t nrows, const int64_t *const *cols, GdlBkRel **out)
{
	ProxyCtx   *p = ctx;
	SvcMsg	   *m = begin(p, SVC_OP_UPLOAD);
	Piece		pcs[GDL_BK_MAX_ARITY + 1];
	int			st;

	*out = NULL;
	column_pieces(pcs, ncols, nrows, cols);
	m->a[1] = ncols;
	m->a[2] = nrows;
	st = send_with_payload(p, m, pcs, ncols);
	if (st == GDL_BK_OK)
		*out = (GdlBkRel *) (intptr_t) m->a[0];
	return st;
}

static int
px_size(void *ctx, GdlBkRel *rel, int64_t *nrows)
{
	ProxyCtx   *p = ctx;
	SvcMsg	   *m;
	int			st;

	int			k = memo_slot((int64) (intptr_t) rel);

	if (rel != NULL && p->memo_rel[k] == (int64) (intptr_t) rel)
	{
		*nrows = p->memo_rows[k];
		return GDL_BK_OK;
	}
	m = begin(p, SVC_OP_SIZE);
	m->a[1] = (int64) (intptr_t) rel;
	st = send_plain(p, m);
	*nrows = st == GDL_BK_OK ? m->a[0] : 0;
	if (st == GDL_BK_OK && rel != NULL)
		memo_put(p, (int64) (intptr_t) rel, *nrows);
	return st;
}

static int
px_download(void *ctx, GdlBkRel *rel, int64_t *const *cols)
{
	ProxyCtx   *p = ctx;
	SvcMsg	   *m;
	int64_t		nrows;
	int			ncols;
	int			st;
	int64		total,
				off;

	/* the engine gives as many columns as the relation has; ask its arity */
	ncols = 0;
	while (ncols < GDL_BK_MAX_ARITY && cols[ncols] != NULL)
		ncols++;
	st = px_size(ctx, rel, &nrows);
	if (st != GDL_BK_OK)
		return st;
	m = begin(p, SVC_OP_DOWNLOAD);
	m->a[1] = (int64) (intptr_t) rel;
	m->a[2] = ncols;
	m->a[3] = nrows;
	st = send_plain(p, m);
	if (st != GDL_BK_OK)
		return st;
	total = m->len;
	if (!m->staged)
	{
		const char *buf = svc_slot_buf(p->slot);
		int			c;

		for (c = 0; c < ncols; c++)
			memcpy(cols[c], buf + (int64) c * nrows * 8, nrows * 8);
		return GDL_BK_OK;
	}
	for (off = 0; off < total;)
	{
		int64		n = Min((int64) svc_shared->bufsize, total - off);
		const char *buf = svc_slot_buf(p->slot);
		int64		done_bytes = 0;

		m = begin(p, SVC_OP_STAGE_GET);
		m->a[0] = off;
		m->a[1] = n;
		st = send_plain(p, m);
		if (st != GDL_BK_OK)
			return st;
		while (done_bytes < n)
		{
			int64		pos = off + done_bytes;
			int			c = (int) (pos / (nrows * 8));
			int64		in = pos % (nrows * 8);
			int64		take = Min(n - done_bytes, nrows * 8 - in);

			memcpy((char *) cols[c] + in, buf + done_bytes, take);
			done_bytes += take;
		}
		off += n;
		CHECK_FOR_INTERRUPTS();
	}
	return GDL_BK_OK;
}

static void
px_release(void *ctx, GdlBkRel *rel)
{
	ProxyCtx   *p = ctx;
	SvcMsg	   *m;
	int			k;

	if (rel == NULL)
		return;
	k = memo_slot((int64) (intptr_t) rel);
	if (p->memo_rel[k] == (int64) (intptr_t) rel)
		p->memo_rel[k] = 0;
	if (p->npending == SVC_MAX_RELEASE)
	{
		/* full: these go now, with a request of their own */
		m = begin(p, SVC_OP_RELEASE);
		m->a[1] = 0;
		(void) send_plain(p, m);
	}
	p->pending[p->npending++] = (int64) (intptr_t) rel;
}

/* join, antijoin and join_count: keys (and output columns) as payload. */
static int
px_joinlike(ProxyCtx *p, int op, GdlBkRel *L, GdlBkRel *R, int nkeys, const int *lkeys,
			const int *rkeys, int nout, const GdlBkColRef *outcols, GdlBkRel **result,
			int64_t *count)
{
	SvcMsg	   *m = begin(p, op);
	Piece		pcs[3] = {
		{lkeys, (int64) nkeys * sizeof(int)},
		{rkeys, (int64) nkeys * sizeof(int)},
		{outcols, (int64) nout * sizeof(GdlBkColRef)}
	};
	int			st;

	m->a[1] = (int64) (intptr_t) L;
	m->a[2] = (int64) (intptr_t) R;
	m->a[3] = nkeys;
	m->a[4] = nout;
	st = send_with_payload(p, m, pcs, op == SVC_OP_JOIN ? 3 : 2);
	if (result)
		*result = st == GDL_BK_OK ? (GdlBkRel *) (intptr_t) m->a[0] : NULL;
	if (count)
		*count = st == GDL_BK_OK ? m->a[0] : 0;
	return st;
}

static int
px_join(void *ctx, GdlBkRel *L, GdlBkRel *R, int nkeys, const int *lkeys, const int *rkeys,
		int nout, const GdlBkColRef *out, GdlBkRel **result)
{
	return px_joinlike(ctx, SVC_OP_JOIN, L, R, nkeys, lkeys, rkeys, nout, out, result, NULL);
}

static int
px_antijoin(void *ctx, GdlBkRel *L, GdlBkRel *R, int nkeys, const int *lkeys,
			const int *rkeys, GdlBkRel **result)
{
	return px_joinlike(ctx, SVC_OP_ANTIJOIN, L, R, nkeys, lkeys, rkeys, 0, NULL, result, NULL);
}

static int
px_join_count(void *ctx, GdlBkRel *L, GdlBkRel *R, int nkeys, const int *lkeys,
			  const int *rkeys, int64_t *count)
{
	return px_joinlike(ctx, SVC_OP_JOIN_COUNT, L, R, nkeys, lkeys, rkeys, 0, NULL, NULL, count);
}

static int
px_map(void *ctx, GdlBkRel *in, int nfilter, const GdlBkExpr *filter,
	   int nout, const GdlBkExpr *out, GdlBkRel **result)
{
	ProxyCtx   *p = ctx;
	SvcMsg	   *m = begin(p, SVC_OP_MAP);
	int			n = nfilter + nout;
	Piece	   *pcs = palloc(sizeof(Piece) * (2 * n + 1));
	int64	   *heads = palloc0(sizeof(int64) * (n + 1));
	int			e,
				st;

	for (e = 0; e < n; e++)
	{
		const GdlBkExpr *x = e < nfilter ? &filter[e] : &out[e - nfilter];

		heads[e] = x->ncode;
		pcs[2 * e].data = &heads[e];
		pcs[2 * e].len = 8;
		pcs[2 * e + 1].data = x->code;
		pcs[2 * e + 1].len = (int64) x->ncode * sizeof(GdlBkInsn);
	}
	m->a[1] = (int64) (intptr_t) in;
	m->a[2] = nfilter;
	m->a[3] = nout;
	st = send_with_payload(p, m, pcs, 2 * n);
	*result = st == GDL_BK_OK ? (GdlBkRel *) (intptr_t) m->a[0] : NULL;
	pfree(pcs);
	pfree(heads);
	return st;
}

static int
px_dedup(void *ctx, int nin, GdlBkRel *const *in, GdlBkRel **result)
{
	ProxyCtx   *p = ctx;
	SvcMsg	   *m = begin(p, SVC_OP_DEDUP);
	Piece		pc = {in, (int64) nin * sizeof(GdlBkRel *)};
	int			st;

	m->a[1] = nin;
	st = send_with_payload(p, m, &pc, 1);
	*result = st == GDL_BK_OK ? (GdlBkRel *) (intptr_t) m->a[0] : NULL;
	return st;
}

/*
 * Send a request begun as m whose arguments are two relations and that has
 * no payload: difference, merge and absorb.
 */
static int
send_two(ProxyCtx *p, SvcMsg *m, GdlBkRel *A, GdlBkRel *B)
{
	m->a[1] = (int64) (intptr_t) A;
	m->a[2] = (int64) (intptr_t) B;
	return send_plain(p, m);
}

/* difference, merge: two inputs, one output. */
static int
px_binary(void *ctx, int op, GdlBkRel *A, GdlBkRel *B, GdlBkRel **result)
{
	ProxyCtx   *p = ctx;
	SvcMsg	   *m = begin(p, op);
	int			st = send_two(p, m, A, B);

	*result = st == GDL_BK_OK ? (GdlBkRel *) (intptr_t) m->a[0] : NULL;
	return st;
}

static int
px_difference(void *ctx, GdlBkRel *A, GdlBkRel *B, GdlBkRel **result)
{
	return px_binary(ctx, SVC_OP_DIFFERENCE, A, B, result);
}

static int
px_merge(void *ctx, GdlBkRel *A, GdlBkRel *B, GdlBkRel **result)
{
	return px_binary(ctx, SVC_OP_MERGE, A, B, result);
}

static int
px_absorb(void *ctx, GdlBkRel *full, GdlBkRel *cand, GdlBkRel **new_full, GdlBkRel **delta)
{
	ProxyCtx   *p = ctx;
	SvcMsg	   *m = begin(p, SVC_OP_ABSORB);
	int			st = send_two(p, m, full, cand);

	*new_full = st == GDL_BK_OK ? (GdlBkRel *) (intptr_t) m->a[0] : NULL;
	*delta = st == GDL_BK_OK ? (GdlBkRel *) (intptr_t) m->a[1] : NULL;
	return st;
}

static int
px_aggregate(void *ctx, GdlBkRel *in, int ngroup, const int *group,
			 int nagg, const GdlBkAgg *aggs, GdlBkRel **result)
{
	ProxyCtx   *p = ctx;
	SvcMsg	   *m = begin(p, SVC_OP_AGGREGATE);
	Piece		pcs[2] = {{group, (int64) ngroup * sizeof(int)}, {aggs, (int64) nagg * sizeof(GdlBkAgg)}};
	int			st;

	m->a[1] = (int64) (intptr_t) in;
	m->a[2] = ngroup;
	m->a[3] = nagg;
	st = send_with_payload(p, m, pcs, 2);
	*result = st == GDL_BK_OK ? (GdlBkRel *) (intptr_t) m->a[0] : NULL;
	return st;
}

static int
px_slice(void *ctx, GdlBkRel *rel, int64_t from, int64_t to, GdlBkRel **result)
{
	ProxyCtx   *p = ctx;
	SvcMsg	   *m = begin(p, SVC_OP_SLICE);
	int			st;

	m->a[1] = (int64) (intptr_t) rel;
	m->a[2] = from;
	m->a[3] = to;
	st = send_plain(p, m);
	*result = st == GDL_BK_OK ? (GdlBkRel *) (intptr_t) m->a[0] : NULL;
	return st;
}

/* ------------------------------------------------------ resident tables */

/* A resident table held by the service, as a session sees it. */
typedef struct ProxyResident
{
	int64		handle;
	uint32		generation;
	int			idx;			/* its entry in the shared registry, -1: private */
	int64		bytes;
} ProxyResident;

static char resident_err[SVC_ERRLEN];

/* Run a context-free request on a slot taken for the occasion. */
static int
oneshot(int op, int64 a0, int ncols, int64 nrows, const Piece *pcs, int npieces, SvcMsg *reply)
{
	ProxyCtx	p;
	SvcMsg	   *m;
	volatile int st = GDL_BK_ERR_DEVICE;

	memset(&p, 0, sizeof(p));
	p.slot = svc_slot_acquire(resident_err, sizeof(resident_err));
	if (p.slot == NULL)
		return GDL_BK_ERR_DEVICE;
	PG_TRY();
	{
		m = begin(&p, op);
		m->a[0] = a0;
		m->a[1] = ncols;
		m->a[2] = nrows;
		st = send_with_payload(&p, m, pcs, npieces);
		*reply = *m;
		if (st != GDL_BK_OK)
			strlcpy(resident_err, p.err, sizeof(resident_err));
	}
	PG_FINALLY();
	{
		svc_slot_release(p.slot);
	}
	PG_END_TRY();
	return st;
}

/* Make a device copy in the service: its handle and bytes, or false with *why. */
bool
svc_proxy_resident_create_raw(int ncols, int64 nrows, const int64 *const *cols,
							  int64 *handle, int64 *bytes, const char **why)
{
	Piece		pcs[GDL_BK_MAX_ARITY + 1];
	SvcMsg		reply;

	column_pieces(pcs, ncols, nrows, cols);
	if (oneshot(SVC_OP_RESIDENT_CREATE, 0, ncols, nrows, pcs, ncols, &reply) != GDL_BK_OK ||
		reply.a[0] == 0)
	{
		*why = resident_err;
		return false;
	}
	*handle = reply.a[0];
	*bytes = reply.a[1];
	return true;
}

/* Free a device copy in the service (ignored when that service has ended). */
void
svc_proxy_resident_free_raw(int64 handle)
{
	SvcMsg		reply;

	(void) oneshot(SVC_OP_RESIDENT_FREE, handle, 0, 0, NULL, 0, &reply);
}

/* The session's handle of a service copy (idx: its registry entry, -1: private). */
void *
svc_proxy_resident_wrap(int64 handle, int idx)
{
	ProxyResident *r = MemoryContextAllocZero(TopMemoryContext, sizeof(ProxyResident));
	int64		bytes = 0;

	r->handle = handle;
	r->generation = pg_atomic_read_u32(&svc_shared->generation);
	r->idx = idx;
	if (idx >= 0)
		bytes = svc_shared->residents[idx].bytes;
	r->bytes = bytes;
	return r;
}

/* resident_create without a table to share by: a private copy. */
static void *
px_resident_create(int ncols, int64_t nrows, const int64_t *const *cols, int64_t *bytes,
				   const char **errmsg)
{
	int64		handle,
				got;
	ProxyResident *r;

	if (!svc_proxy_resident_create_raw(ncols, nrows, (const int64 *const *) cols, &handle, &got, errmsg))
		return NULL;
	pg_atomic_fetch_add_u64(&svc_shared->committed[SVC_RES_DEVICE], (uint64) got);
	r = svc_proxy_resident_wrap(handle, -1);
	r->bytes = got;
	*bytes = got;
	return r;
}

/* The session's entry went away: give back its reference (or the private copy). */
static void
px_resident_free(void *res)
{
	ProxyResident *r = res;

	if (r == NULL)
		return;
	if (r->generation == pg_atomic_read_u32(&svc_shared->generation))
		svc_resident_release(r->idx, r->handle, r->bytes);
	pfree(r);
}

static int
px_from_resident(void *ctx, void *res, int ncols, const int *colidx,
				 const int32_t *const *remap, const int32_t *remap_len, GdlBkRel **out)
{
	ProxyCtx   *p = ctx;
	ProxyResident *r = res;
	SvcMsg	   *m;
	int32	   *lens = palloc(sizeof(int32) * (ncols + 1));
	Piece	   *pcs = palloc(sizeof(Piece) * (ncols + 2));
	int			c,
				st;

	*out = NULL;
	if (r->generation != p->generation)
	{
		snprintf(p->err, sizeof(p->err), "the loaded table's device copy ended with a previous GPU service");
		return GDL_BK_ERR_DEVICE;
	}
	for (c = 0; c < ncols; c++)
	{
		lens[c] = remap[c] ? remap_len[c] : -1;
		pcs[2 + c].data = remap[c];
		pcs[2 + c].len = remap[c] ? (int64) remap_len[c] * sizeof(int32) : 0;
	}
	pcs[0].data = colidx;
	pcs[0].len = (int64) ncols * sizeof(int);
	pcs[1].data = lens;
	pcs[1].len = (int64) ncols * sizeof(int32);
	m = begin(p, SVC_OP_FROM_RESIDENT);
	m->a[1] = r->handle;
	m->a[2] = ncols;
	st = send_with_payload(p, m, pcs, ncols + 2);
	if (st == GDL_BK_OK)
		*out = (GdlBkRel *) (intptr_t) m->a[0];
	pfree(lens);
	pfree(pcs);
	return st;
}

static const GdlBackend proxy_backend = {
	GDL_BACKEND_ABI,
	"cuda",
	px_ctx_create,
	px_ctx_destroy,
	px_ctx_abort,
	px_last_error,
	px_counters,
	px_set_text_ranks,
	px_upload,
	px_download,
	px_size,
	px_release,
	px_join,
	px_antijoin,
	px_map,
	px_dedup,
	px_difference,
	px_merge,
	px_absorb,
	px_aggregate,
	px_slice,
	px_join_count,
	px_resident_create,
	px_resident_free,
	px_from_resident
};

/* The proxy as the engine sees it: the served backend's optional members only. */
static GdlBackend proxy_backend_served;

/*
 * The backend a session uses for the GPU while the service runs.  Optional
 * members the served backend lacks are NULL here too, so the engine takes
 * the same path as with that backend in the session.
 */
const GdlBackend *
svc_proxy_backend(void)
{
	proxy_backend_served = proxy_backend;
	if (!svc_shared->has_resident)
	{
		proxy_backend_served.resident_create = NULL;
		proxy_backend_served.resident_free = NULL;
		proxy_backend_served.from_resident = NULL;
	}
	if (!svc_shared->has_absorb)
		proxy_backend_served.absorb = NULL;
	if (!svc_shared->has_slice)
	{
		proxy_backend_served.slice = NULL;
		proxy_backend_served.join_count = NULL;
	}
	return &proxy_backend_served;
}

/* Append an array to a request's payload, padded to 8 bytes. */
void
svc_wire_put(SvcWire *w, const void *data, int64 bytes)
{
	static const char zeros[8] = {0};

	if (w->n + 2 > SVC_WIRE_MAX)
		elog(ERROR, "gpudl: internal: a request of too many pieces");
	w->data[w->n] = data;
	w->lens[w->n++] = bytes;
	if (svc_wire_pad(bytes) > bytes)
	{
		w->data[w->n] = zeros;
		w->lens[w->n++] = svc_wire_pad(bytes) - bytes;
	}
}

/*
 * A request outside any context (rule mining's counting): take a slot,
 * send 'op' with args[0..nargs) and a payload in pieces, and return the
 * reply's values in args and its payload in a palloc'd buffer (*reply,
 * *reply_len; NULL when empty).  The slot goes back in every case, also
 * when an interrupt ends the wait for a slot or the staging.  Returns the
 * reply's status; on failure 'err' holds the service's message.
 */
int
svc_proxy_request(int op, int job, int64 *args, int nargs,
				  const void *const *data, const int64 *lens, int npieces,
				  char **reply, int64 *reply_len, char *err, size_t errlen)
{
	ProxyCtx	p;
	Piece	   *pcs = palloc0(sizeof(Piece) * Max(npieces, 1));
	volatile int st = GDL_BK_ERR_DEVICE;
	int			i;

	*reply = NULL;
	*reply_len = 0;
	Assert(nargs <= 8);
	for (i = 0; i < npieces; i++)
	{
		pcs[i].data = data[i];
		pcs[i].len = lens[i];
	}
	memset(&p, 0, sizeof(p));
	p.slot = svc_slot_acquire(err, errlen);
	if (p.slot == NULL)
		return GDL_BK_ERR_DEVICE;
	PG_TRY();
	{
		SvcMsg	   *m = begin(&p, SVC_OP_RESET);

		st = send_plain(&p, m);
		if (st == GDL_BK_OK)
		{
			m = begin(&p, op);
			for (i = 0; i < nargs; i++)
				m->a[i] = args[i];
			m->job = job;
			st = send_with_payload(&p, m, pcs, npieces);
		}
		if (st == GDL_BK_OK)
		{
			int64		total = m->len;
			bool		staged = m->staged != 0;
			char	   *dst = total > 0 ? palloc_extended(total, MCXT_ALLOC_HUGE) : NULL;
			int64		off;

			for (i = 0; i < nargs; i++)
				args[i] = m->a[i];
			if (!staged && total > 0)
				memcpy(dst, svc_slot_buf(p.slot), total);
			for (off = 0; staged && off < total && st == GDL_BK_OK;)
			{
				int64		n = Min((int64) svc_shared->bufsize, total - off);

				m = begin(&p, SVC_OP_STAGE_GET);
				m->a[0] = off;
				m->a[1] = n;
				st = send_plain(&p, m);
				if (st == GDL_BK_OK)
					memcpy(dst + off, svc_slot_buf(p.slot), n);
				off += n;
				CHECK_FOR_INTERRUPTS();
			}
			*reply = dst;
			*reply_len = total;
		}
		if (st != GDL_BK_OK)
			strlcpy(err, p.err, errlen);
		/* free the service's staged copy of a large request or reply */
		if (st == GDL_BK_OK)
			(void) send_plain(&p, begin(&p, SVC_OP_RESET));
	}
	PG_FINALLY();
	{
		svc_slot_release(p.slot);
	}
	PG_END_TRY();
	pfree(pcs);
	return st;
}

/*
 * Admit a whole GPU job of a session (rule mining, learning) for 'need'
 * bytes of device memory, as a run is admitted: false (with 'why') when
 * the wait timed out under gpudl.device = auto, so that the caller does
 * the work on the CPU; raises 53200 under gpudl.device = gpu.  'cpu_work'
 * names the CPU alternative in the hint ("mine", "learn").
 */
bool
svc_admit_job(SvcAdmission *adm, int64 need, const char *program, const char *goal,
			  const char *phase, const char *cpu_work, char *why, size_t whylen)
{
	char		busy[512];
	TimestampTz wait_start = GetCurrentTimestamp();

	need = Min(need, svc_budget(SVC_RES_DEVICE));
	if (!svc_admit(adm, SVC_RES_DEVICE, need, program, goal,
				   gpudl_device_wait_timeout_ms, busy, sizeof(busy)))
	{
		long		waited = (long) ((GetCurrentTimestamp() - wait_start) / 1000);

		if (gpudl_device_setting == GPUDL_DEVICE_GPU)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("gpudl: the GPU was busy: waited %ld ms for %lld MB of device memory",
							waited, (long long) (need >> 20)),
					 errdetail("Held by %s.", busy),
					 errhint("Raise gpudl.device_wait_timeout (0 waits without limit), or use gpudl.device = auto to %s on the CPU after the wait.",
							 cpu_work)));
		snprintf(why, whylen, "the GPU was busy for %ld ms (%s)", waited, busy);
		return false;
	}
	svc_admit_set_phase(adm, phase);
	return true;
}

/*
 * Send an admitted job's request (svc_proxy_request with the job's
 * admission, its four arguments and its wire; the reply into jc); the
 * admission is given back in every case.
 */
int
svc_job_request(SvcJobCall *jc, int op, char *why, size_t whylen)
{
	volatile int st = GDL_BK_ERR_DEVICE;

	PG_TRY();
	{
		st = svc_proxy_request(op, jc->adm.job, jc->args, 4, jc->wire.data, jc->wire.lens,
							   jc->wire.n, &jc->reply, &jc->reply_len, why, whylen);
	}
	PG_CATCH();
	{
		svc_admit_release(&jc->adm);
		PG_RE_THROW();
	}
	PG_END_TRY();
	svc_admit_release(&jc->adm);
	return st;
}

/*
 * A job's reply of the wrong size, an internal error of the service: free
 * it, name it in why ("a training reply ...") and return 1, the failure
 * after which the learning or mining core works on the CPU.
 */
int
svc_job_wrong_reply(char *reply, const char *what, char *why, size_t whylen)
{
	snprintf(why, whylen, "internal: a %s reply of the wrong size", what);
	if (reply)
		pfree(reply);
	return 1;
}
