/*
 * svc_serve.c — the service's threads: one per slot, each waiting for its
 * session's requests and running them on the GPU backend.
 *
 * These threads never call PostgreSQL (no palloc, no elog, no locks): only
 * the backend module, malloc, and atomics on shared memory.  A context
 * created for a session carries the admission hook (GdlBkConfig.reserve),
 * so every device allocation of every run is checked against the cluster's
 * budget in svc_reserve_bytes.  Relation and resident handles are the
 * service's pointers, passed to sessions as opaque 64-bit values.
 */
#include "svc/svc_int.h"
#include "ilp/gdl_ilp_device.h"
#include "mine/gdl_mine_device.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <time.h>

#define SVC_MAX_CTX 8			/* contexts a slot may hold at once */
#define SPIN_LOOPS 20000		/* busy-wait before sleeping (~50 us) */

/* One thread's state. */
typedef struct ServeState
{
	SvcSlot    *slot;
	char	   *stage;			/* staged payload (request or reply) */
	int64		stage_cap;
	void	   *ctxs[SVC_MAX_CTX];
	int			ctx_jobs[SVC_MAX_CTX];
	volatile int op_now;		/* the request being run (SVC_OP_NONE: none) */
	volatile int64 op_since;	/* ... since (ms, monotonic) */
} ServeState;

static ServeState **serve_states;	/* one per slot (for the stop's report) */

static const GdlBackend *serve_bk;
static const GdlMineDevice *serve_mine;	/* the module's rule mining, or NULL */
static pthread_mutex_t serve_mine_lock = PTHREAD_MUTEX_INITIALIZER;
static const GdlIlpDevice *serve_ilp;	/* the module's rule learning, or NULL */
static pthread_mutex_t serve_ilp_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile bool serve_stopping = false;	/* no new requests once set */
static pg_atomic_uint32 serving;	/* requests being run now */

/* Whether the service is stopping (no new requests; jobs stop). */
bool
svc_serve_stopping(void)
{
	return serve_stopping;
}

/*
 * Take a module's one-at-a-time lock, waiting while another session's job
 * holds it but giving up when this job's session no longer wants it.
 */
static bool
job_lock(pthread_mutex_t *lock, SvcJobScope *sc)
{
	while (pthread_mutex_trylock(lock) != 0)
	{
		if (svc_job_should_stop(sc))
			return false;
		pg_usleep(2000L);
	}
	return true;
}

/* The admission hook of a context: arg is the job index. */
static int
reserve_hook(void *arg, int64_t bytes_after)
{
	return svc_reserve_bytes((int) (intptr_t) arg, bytes_after) == 0 ? 0 : 1;
}

/* Room for 'len' staged bytes; false when malloc fails. */
static bool
stage_reserve(ServeState *st, int64 len)
{
	char	   *p;

	if (len <= st->stage_cap)
		return true;
	p = realloc(st->stage, (size_t) len);
	if (p == NULL)
		return false;
	st->stage = p;
	st->stage_cap = len;
	return true;
}

/* Record a failure in the reply. */
static void
reply_error(SvcMsg *m, int status, const char *msg)
{
	m->status = status;
	strlcpy(m->errmsg, msg, sizeof(m->errmsg));
}

/* Reply with the backend's message when an operation failed. */
static void
reply_status(SvcMsg *m, void *ctx, int status)
{
	m->status = status;
	if (status != GDL_BK_OK)
		strlcpy(m->errmsg, ctx ? serve_bk->last_error(ctx) : "GPU backend failed", sizeof(m->errmsg));
}

/* Remember a context of the slot; false when the slot holds too many. */
static bool
ctx_add(ServeState *st, void *ctx, int job)
{
	int			i;

	for (i = 0; i < SVC_MAX_CTX; i++)
		if (st->ctxs[i] == NULL)
		{
			st->ctxs[i] = ctx;
			st->ctx_jobs[i] = job;
			return true;
		}
	return false;
}

/* Forget a context of the slot (it was destroyed). */
static void
ctx_forget(ServeState *st, void *ctx)
{
	int			i;

	for (i = 0; i < SVC_MAX_CTX; i++)
		if (st->ctxs[i] == ctx)
			st->ctxs[i] = NULL;
}

/* Whether 'ctx' is a live context of this slot (sessions pass raw values). */
static bool
ctx_known(ServeState *st, void *ctx)
{
	int			i;

	if (ctx == NULL)
		return false;
	for (i = 0; i < SVC_MAX_CTX; i++)
		if (st->ctxs[i] == ctx)
			return true;
	return false;
}

/* Reply payload: inline when it fits the slot's buffer, else staged. */
static char *
reply_payload(ServeState *st, SvcMsg *m, int64 len)
{
	m->len = len;
	if (len <= (int64) svc_shared->bufsize)
	{
		m->staged = 0;
		return svc_slot_buf(st->slot);
	}
	if (!stage_reserve(st, len))
		return NULL;
	m->staged = 1;
	return st->stage;
}

/*
 * Reply with len bytes copied from src, a device module's output that the
 * caller frees after: the one ending of the mining, training and coverage
 * requests.  False, with the reply an error, when the payload finds no room.
 */
static bool
reply_copy(ServeState *st, SvcMsg *m, const void *src, int64 len)
{
	char	   *dst = reply_payload(st, m, len);

	if (dst == NULL)
	{
		m->len = 0;
		reply_error(m, GDL_BK_ERR_NO_MEMORY, "out of host memory in the GPU service");
		return false;
	}
	if (len > 0)
		memcpy(dst, src, len);
	return true;
}

/* The module's rule-mining device (NULL: none); before svc_serve_start. */
void
svc_serve_set_mine(const GdlMineDevice *dev)
{
	serve_mine = dev;
	svc_shared->has_mine = dev != NULL;
}

/* The module's rule-learning device (NULL: none); before svc_serve_start. */
void
svc_serve_set_ilp(const GdlIlpDevice *dev)
{
	serve_ilp = dev;
	svc_shared->has_ilp = dev != NULL;
}

/*
 * SVC_OP_MINE: point a GdlMineDevIn into the request's payload (the wire
 * format of svc_int.h), count on the device, and reply with the candidates.
 * One mining at a time: the module sizes its scratch by the device's free
 * memory, which two at once would each count as theirs.
 */
static void
serve_mine_request(ServeState *st, SvcMsg *m, const char *pl)
{
	SvcMineWire w;
	GdlMineDevIn in;
	GdlMineDevCand *out = NULL;
	int64_t		nout = 0;
	double		sec[3] = {0, 0, 0};
	char		err[SVC_ERRLEN] = "";
	int64		off = sizeof(SvcMineWire),
				need;
	int			rc;
	SvcJobScope *sc;
	bool		stopped,
				copied;

	if (serve_mine == NULL || m->len < (int64) sizeof(SvcMineWire))
	{
		reply_error(m, GDL_BK_ERR_INVALID, "internal: the GPU service does not mine rules");
		return;
	}
	memcpy(&w, pl, sizeof(w));
	need = off + svc_wire_pad(8 * ((int64) w.nent + 1)) * 3 + svc_wire_pad(4 * w.nlinks) * 4 +
		svc_wire_pad(4 * w.npp) * 3 + svc_wire_pad(4 * w.ncp) * 2 + svc_wire_pad(8 * (int64) w.nrels);
	if (w.nent < 0 || w.nrels < 0 || w.nlinks < 0 || w.npp < 0 || w.ncp < 0 || need != m->len)
	{
		reply_error(m, GDL_BK_ERR_INVALID, "internal: a mining request of the wrong size");
		return;
	}
	memset(&in, 0, sizeof(in));
#define TAKE(field, type, count) \
	do { in.field = (const type *) (pl + off); off += svc_wire_pad(sizeof(type) * (int64) (count)); } while (0)
	TAKE(aoff, int64_t, w.nent + 1);
	TAKE(sig, int32_t, w.nlinks);
	TAKE(nb, int32_t, w.nlinks);
	TAKE(bnb, int32_t, w.nlinks);
	TAKE(bsig, int32_t, w.nlinks);
	TAKE(ppoff, int64_t, w.nent + 1);
	TAKE(ppa, int32_t, w.npp);
	TAKE(ppb, int32_t, w.npp);
	TAKE(ppz, int32_t, w.npp);
	TAKE(cpoff, int64_t, w.nent + 1);
	TAKE(cpa, int32_t, w.ncp);
	TAKE(cpb, int32_t, w.ncp);
	TAKE(nfacts, int64_t, w.nrels);
#undef TAKE
	in.nent = w.nent;
	in.nrels = w.nrels;
	in.nlinks = w.nlinks;
	in.max_body = w.max_body;
	in.target = w.target;
	in.min_support = w.min_support;
	in.min_head_coverage = w.min_head_coverage;
	sc = svc_job_begin(st->slot);
	if (sc == NULL)
	{
		reply_error(m, GDL_BK_ERR_NO_MEMORY, "out of host memory in the GPU service");
		return;
	}
	in.stop = svc_job_stop_cb;
	in.stop_arg = sc;
	if (!job_lock(&serve_mine_lock, sc))
		rc = 1;
	else
	{
		rc = serve_mine->mine(&in, &out, &nout, sec, err, sizeof(err));
		pthread_mutex_unlock(&serve_mine_lock);
	}
	stopped = svc_job_should_stop(sc);
	svc_job_end(sc);
	if (stopped)
		strlcpy(err, "cancelled: the session no longer waits for this mining", sizeof(err));
	if (rc != 0 || stopped)
	{
		if (rc == 0)
			serve_mine->mine_free(out);
		reply_error(m, GDL_BK_ERR_DEVICE, err[0] ? err : "the mining device failed");
		return;
	}
	/* the input is no longer needed: the reply may reuse the staging area */
	copied = reply_copy(st, m, out, (int64) sizeof(GdlMineDevCand) * nout);
	serve_mine->mine_free(out);
	if (!copied)
		return;
	m->a[0] = nout;
	for (int i = 0; i < 3; i++)
		memcpy(&m->a[1 + i], &sec[i], sizeof(double));
}

/*
 * SVC_OP_ILP_TRAIN: create a training session from the request's matrix,
 * train, destroy, and reply with the probabilities (a[0] epochs, a[1] the
 * loss, a[2] the seconds, as bits).  One learning operation at a time, as
 * for mining.
 */
static void
serve_ilp_train(ServeState *st, SvcMsg *m, const char *pl)
{
	SvcIlpTrainWire w;
	GdlIlpDevProblem prob;
	GdlIlpDevTrain t;
	GdlIlpDevResult r;
	GdlIlpDevSession *s;
	char		err[SVC_ERRLEN] = "";
	double	   *probs;
	int64		off = svc_wire_pad(sizeof(w));
	int			rc;
	SvcJobScope *sc;
	bool		copied;

	if (serve_ilp == NULL || m->len < (int64) sizeof(w))
	{
		reply_error(m, GDL_BK_ERR_INVALID, "internal: the GPU service does not learn rules");
		return;
	}
	memcpy(&w, pl, sizeof(w));
	if (w.prob.nrows < 0 || w.prob.ncols < 0 || w.nnz < 0 ||
		m->len != off + svc_wire_pad(8 * ((int64) w.prob.nrows + 1)) + svc_wire_pad(4 * w.nnz))
	{
		reply_error(m, GDL_BK_ERR_INVALID, "internal: a training request of the wrong size");
		return;
	}
	prob = w.prob;
	prob.off = (const int64_t *) (pl + off);
	prob.idx = (const int32_t *) (pl + off + svc_wire_pad(8 * ((int64) prob.nrows + 1)));
	t = w.train;
	probs = malloc(sizeof(double) * ((size_t) prob.ncols + 1));
	if (probs == NULL)
	{
		reply_error(m, GDL_BK_ERR_NO_MEMORY, "out of host memory in the GPU service");
		return;
	}
	memset(&r, 0, sizeof(r));
	r.prob = probs;
	sc = svc_job_begin(st->slot);
	t.stop = svc_job_stop_cb;
	t.stop_arg = sc;
	if (sc == NULL || !job_lock(&serve_ilp_lock, sc))
		rc = 1;
	else
	{
		s = serve_ilp->create(&prob, err, sizeof(err));
		rc = s == NULL ? 1 : serve_ilp->train(s, &t, &r, err, sizeof(err));
		if (s != NULL)
			serve_ilp->destroy(s);
		pthread_mutex_unlock(&serve_ilp_lock);
	}
	if (sc != NULL && svc_job_should_stop(sc))
	{
		rc = 1;
		strlcpy(err, "cancelled: the session no longer waits for this training", sizeof(err));
	}
	if (sc != NULL)
		svc_job_end(sc);
	if (rc != 0)
	{
		free(probs);
		reply_error(m, GDL_BK_ERR_DEVICE, err[0] ? err : "the training device failed");
		return;
	}
	/* the input is no longer needed: the reply may reuse the staging area */
	copied = reply_copy(st, m, probs, 8 * (int64) prob.ncols);
	free(probs);
	if (!copied)
		return;
	m->a[0] = r.epochs;
	memcpy(&m->a[1], &r.loss, sizeof(double));
	memcpy(&m->a[2], &r.seconds, sizeof(double));
}

/*
 * SVC_OP_ILP_COVER: the bulk coverage of the request's graph; reply with
 * the entries (a[0] their number, a[1] the seconds as bits).  The graph is
 * not kept on the device (graph_id 0): the next request may be another
 * session's.
 */
static void
serve_ilp_cover(ServeState *st, SvcMsg *m, const char *pl)
{
	SvcIlpCoverWire w;
	GdlIlpDevCoverIn in;
	uint64_t   *out = NULL;
	int64_t		nout = 0;
	double		secs = 0;
	char		err[SVC_ERRLEN] = "";
	int64		off = svc_wire_pad(sizeof(w)),
				ents;
	int			rc;
	SvcJobScope *sc;
	bool		copied;

	if (serve_ilp == NULL || serve_ilp->cover == NULL || m->len < (int64) sizeof(w))
	{
		reply_error(m, GDL_BK_ERR_INVALID, "internal: the GPU service does not compute coverage");
		return;
	}
	memcpy(&w, pl, sizeof(w));
	ents = svc_wire_pad(8 * ((int64) w.nent + 1));
	if (w.nent < 0 || w.nex < 0 || w.nadj < 0 || w.nsig < 0 || w.nusig < 0 ||
		m->len != off + ents * 3 + svc_wire_pad(8 * w.nadj) + svc_wire_pad(4 * w.nsig) +
		svc_wire_pad(4 * w.nusig) + svc_wire_pad(4 * (int64) w.nex) * 2)
	{
		reply_error(m, GDL_BK_ERR_INVALID, "internal: a coverage request of the wrong size");
		return;
	}
	memset(&in, 0, sizeof(in));
	in.nent = w.nent;
	in.nex = w.nex;
	in.max_entries = w.max_entries;
	in.skip_pred = w.skip_pred;
	in.graph_id = 0;
#define TAKE(field, type, count) \
	do { in.field = (const type *) (pl + off); off += svc_wire_pad(sizeof(type) * (int64) (count)); } while (0)
	TAKE(aoff, int64_t, w.nent + 1);
	TAKE(adj, uint64_t, w.nadj);
	TAKE(soff, int64_t, w.nent + 1);
	TAKE(sig, uint32_t, w.nsig);
	TAKE(uoff, int64_t, w.nent + 1);
	TAKE(usig, uint32_t, w.nusig);
	TAKE(ex0, int32_t, w.nex);
	TAKE(ex1, int32_t, w.nex);
#undef TAKE
	sc = svc_job_begin(st->slot);
	if (sc == NULL || !job_lock(&serve_ilp_lock, sc))
		rc = 1;
	else
	{
		rc = serve_ilp->cover(&in, &out, &nout, &secs, err, sizeof(err));
		pthread_mutex_unlock(&serve_ilp_lock);
	}
	if (sc != NULL && svc_job_should_stop(sc) && rc == 0)
	{
		serve_ilp->cover_free(out);
		out = NULL;
		rc = 1;
		strlcpy(err, "cancelled: the session no longer waits for this coverage", sizeof(err));
	}
	if (sc != NULL)
		svc_job_end(sc);
	if (rc != 0)
	{
		if (out != NULL)
			serve_ilp->cover_free(out);
		reply_error(m, GDL_BK_ERR_DEVICE, err[0] ? err : "the coverage device failed");
		return;
	}
	copied = reply_copy(st, m, out, 8 * (int64) nout);
	serve_ilp->cover_free(out);
	if (!copied)
		return;
	m->a[0] = nout;
	memcpy(&m->a[1], &secs, sizeof(double));
}

/* Destroy every context of the slot and its staged payload. */
static void
reset_slot(ServeState *st)
{
	int			i;

	for (i = 0; i < SVC_MAX_CTX; i++)
		if (st->ctxs[i])
		{
			void	   *c = st->ctxs[i];

			st->ctxs[i] = NULL;
			if (serve_bk->ctx_abort)
				serve_bk->ctx_abort(c);
			else
				serve_bk->ctx_destroy(c);
		}
	free(st->stage);
	st->stage = NULL;
	st->stage_cap = 0;
}

/*
 * A slot its session gave up (SVC_SLOT_ORPHAN) and with no request left:
 * destroy what it holds and free it for other sessions.
 */
static void
reclaim_if_orphan(ServeState *st)
{
	SvcSlot    *slot = st->slot;

	if (slot->state != SVC_SLOT_ORPHAN ||
		pg_atomic_read_u64(&slot->req_seq) != pg_atomic_read_u64(&slot->rep_seq))
		return;
	reset_slot(st);
	pg_atomic_write_u32(&slot->cancel, 0);
	slot->pid = 0;
	pg_memory_barrier();
	slot->state = SVC_SLOT_FREE;
}

/*
 * Release the relations a request carries (SvcMsg.release): the session
 * defers its releases to its next request, so that freeing a relation costs
 * no round trip of its own.  They go before the request's operation, so
 * the memory is back before that operation needs it.
 */
static void
serve_releases(ServeState *st, SvcMsg *m)
{
	void	   *ctx = (void *) (intptr_t) m->release_ctx;
	int			n = m->nrelease;

	m->nrelease = 0;
	if (n <= 0 || n > SVC_MAX_RELEASE || !ctx_known(st, ctx))
		return;
	for (int i = 0; i < n; i++)
		serve_bk->release(ctx, (GdlBkRel *) (intptr_t) m->release[i]);
}

/*
 * Whether 'op' names a context of the slot in a[0] (the operations between
 * SVC_OP_COUNTERS and SVC_OP_JOIN_COUNT, but from_resident).
 */
static bool
op_on_context(int op)
{
	return op >= SVC_OP_COUNTERS && op <= SVC_OP_JOIN_COUNT && op != SVC_OP_FROM_RESIDENT;
}

static void serve_op(ServeState *st);

/*
 * Run one request of the slot and fill in its reply: the releases it
 * carries, its operation, then (for an operation on a context that still
 * exists) the context's counters, so that the session reads them without
 * asking again.
 */
static void
serve_one(ServeState *st)
{
	SvcMsg	   *m = &st->slot->msg;
	void	   *ctx = (void *) (intptr_t) m->a[0];
	int			op = m->op;

	m->has_counters = 0;
	m->out_rel[0] = m->out_rel[1] = 0;
	serve_releases(st, m);
	serve_op(st);
	if (op_on_context(op) && m->status == GDL_BK_OK && ctx_known(st, ctx))
	{
		if (serve_bk->counters)
		{
			memset(&m->counters, 0, sizeof(m->counters));
			serve_bk->counters(ctx, &m->counters);
			m->has_counters = 1;
		}
		for (int i = 0; i < 2; i++)
			m->out_rows[i] = (m->out_rel[i] != 0 && serve_bk->size_known) ?
				serve_bk->size_known(ctx, (GdlBkRel *) (intptr_t) m->out_rel[i]) : -1;
	}
	else
		m->out_rel[0] = m->out_rel[1] = 0;
}

/* Run one request's operation and fill in its reply. */
static void
serve_op(ServeState *st)
{
	SvcMsg	   *m = &st->slot->msg;
	const GdlBackend *bk = serve_bk;
	char	   *buf = svc_slot_buf(st->slot);
	const char *pl = m->staged ? st->stage : buf;
	void	   *ctx = (void *) (intptr_t) m->a[0];
	GdlBkRel   *out = NULL,
			   *out2 = NULL;
	int			status = GDL_BK_OK;
	int			op = m->op;

	m->status = GDL_BK_OK;
	m->errmsg[0] = '\0';
	if ((op == SVC_OP_ABSORB && !bk->absorb) || (op == SVC_OP_SLICE && !bk->slice) ||
		(op == SVC_OP_JOIN_COUNT && !bk->join_count) ||
		((op == SVC_OP_RESIDENT_CREATE || op == SVC_OP_FROM_RESIDENT) && !svc_shared->has_resident))
	{
		reply_error(m, GDL_BK_ERR_INVALID, "internal: the served backend lacks this operation");
		return;
	}
	if (op_on_context(op) && !ctx_known(st, ctx))
	{
		reply_error(m, GDL_BK_ERR_INVALID, "internal: unknown context in a request to the GPU service");
		return;
	}
	switch (op)
	{
		case SVC_OP_MINE:
			serve_mine_request(st, m, pl);
			return;
		case SVC_OP_ILP_TRAIN:
			serve_ilp_train(st, m, pl);
			return;
		case SVC_OP_ILP_COVER:
			serve_ilp_cover(st, m, pl);
			return;
		case SVC_OP_CTX_CREATE:
			{
				GdlBkConfig cfg;
				const char *why = NULL;
				void	   *c;

				memset(&cfg, 0, sizeof(cfg));
				cfg.memory_limit = m->a[0];
				cfg.nthreads = (int) m->a[1];
				cfg.reserve = m->job >= 0 ? reserve_hook : NULL;
				cfg.reserve_arg = (void *) (intptr_t) m->job;
				cfg.priority = (int) m->a[2];
				c = bk->ctx_create(&cfg, &why);
				if (c == NULL)
					reply_error(m, GDL_BK_ERR_DEVICE, why ? why : "could not create a GPU context");
				else if (!ctx_add(st, c, m->job))
				{
					bk->ctx_destroy(c);
					reply_error(m, GDL_BK_ERR_INVALID, "internal: too many GPU contexts in one slot");
				}
				else
					m->a[0] = (int64) (intptr_t) c;
				return;
			}
		case SVC_OP_CTX_DESTROY:
		case SVC_OP_CTX_ABORT:
			if (ctx_known(st, ctx))
			{
				ctx_forget(st, ctx);
				if (op == SVC_OP_CTX_ABORT && bk->ctx_abort)
					bk->ctx_abort(ctx);
				else
					bk->ctx_destroy(ctx);
			}
			return;
		case SVC_OP_RESET:
			reset_slot(st);
			return;
		case SVC_OP_COUNTERS:
			memset(&m->counters, 0, sizeof(m->counters));
			if (bk->counters)
				bk->counters(ctx, &m->counters);
			return;
		case SVC_OP_STAGE_PUT:
			{
				int64		off = m->a[0],
							total = m->a[1];

				if (off == 0 && !stage_reserve(st, total))
				{
					reply_error(m, GDL_BK_ERR_NO_MEMORY, "out of host memory in the GPU service");
					return;
				}
				if (off < 0 || off + m->len > st->stage_cap)
				{
					reply_error(m, GDL_BK_ERR_INVALID, "internal: staged piece out of range");
					return;
				}
				memcpy(st->stage + off, buf, (size_t) m->len);
				return;
			}
		case SVC_OP_STAGE_GET:
			{
				int64		off = m->a[0],
							len = m->a[1];

				if (off < 0 || len < 0 || len > (int64) svc_shared->bufsize || off + len > st->stage_cap)
				{
					reply_error(m, GDL_BK_ERR_INVALID, "internal: staged read out of range");
					return;
				}
				memcpy(buf, st->stage + off, (size_t) len);
				m->len = len;
				return;
			}
		case SVC_OP_SET_TEXT_RANKS:
			status = bk->set_text_ranks(ctx, (const int32_t *) pl, (int32_t) m->a[1]);
			break;
		case SVC_OP_UPLOAD:
		case SVC_OP_RESIDENT_CREATE:
			{
				int			ncols = (int) m->a[1];
				int64		nrows = m->a[2];
				const int64_t *cols[GDL_BK_MAX_ARITY + 1];
				int			c;

				if (ncols < 0 || ncols > GDL_BK_MAX_ARITY)
				{
					reply_error(m, GDL_BK_ERR_INVALID, "internal: bad arity");
					return;
				}
				for (c = 0; c < ncols; c++)
					cols[c] = (const int64_t *) pl + (int64) c * nrows;
				if (op == SVC_OP_UPLOAD)
				{
					status = bk->upload(ctx, ncols, nrows, cols, &out);
					break;
				}
				else
				{
					const char *why = NULL;
					int64_t		bytes = 0;
					void	   *res;

					if (!bk->resident_create)
					{
						reply_error(m, GDL_BK_ERR_INVALID, "the GPU backend keeps no resident tables");
						return;
					}
					res = bk->resident_create(ncols, nrows, cols, &bytes, &why);
					if (res == NULL)
						reply_error(m, GDL_BK_ERR_NO_MEMORY, why ? why : "could not keep the table on the device");
					m->a[0] = (int64) (intptr_t) res;
					m->a[1] = bytes;
					return;
				}
			}
		case SVC_OP_RESIDENT_FREE:
			if (bk->resident_free && m->a[0] != 0)
				bk->resident_free((void *) (intptr_t) m->a[0]);
			return;
		case SVC_OP_DOWNLOAD:
			{
				GdlBkRel   *rel = (GdlBkRel *) (intptr_t) m->a[1];
				int			ncols = (int) m->a[2];
				int64		nrows = m->a[3];
				int64_t    *cols[GDL_BK_MAX_ARITY + 1];
				char	   *dst = reply_payload(st, m, (int64) ncols * nrows * 8);
				int			c;

				if (dst == NULL)
				{
					reply_error(m, GDL_BK_ERR_NO_MEMORY, "out of host memory in the GPU service");
					return;
				}
				for (c = 0; c < ncols; c++)
					cols[c] = (int64_t *) dst + (int64) c * nrows;
				status = bk->download(ctx, rel, cols);
				if (status != GDL_BK_OK)
					m->len = 0;
				reply_status(m, ctx, status);
				return;
			}
		case SVC_OP_SIZE:
			{
				int64_t		n = 0;

				status = bk->size(ctx, (GdlBkRel *) (intptr_t) m->a[1], &n);
				m->a[0] = n;
				reply_status(m, ctx, status);
				return;
			}
		case SVC_OP_RELEASE:
			/* a[1] = 0: only the releases the request carried */
			if (m->a[1] != 0)
				bk->release(ctx, (GdlBkRel *) (intptr_t) m->a[1]);
			return;
		case SVC_OP_JOIN:
		case SVC_OP_ANTIJOIN:
		case SVC_OP_JOIN_COUNT:
			{
				int			nkeys = (int) m->a[3];
				const int  *lkeys = (const int *) pl;
				const int  *rkeys = lkeys + nkeys;
				GdlBkRel   *L = (GdlBkRel *) (intptr_t) m->a[1];
				GdlBkRel   *R = (GdlBkRel *) (intptr_t) m->a[2];

				if (op == SVC_OP_JOIN)
					status = bk->join(ctx, L, R, nkeys, lkeys, rkeys, (int) m->a[4],
									  (const GdlBkColRef *) (rkeys + nkeys), &out);
				else if (op == SVC_OP_ANTIJOIN)
					status = bk->antijoin(ctx, L, R, nkeys, lkeys, rkeys, &out);
				else
				{
					int64_t		count = 0;

					status = bk->join_count(ctx, L, R, nkeys, lkeys, rkeys, &count);
					m->a[0] = count;
					reply_status(m, ctx, status);
					return;
				}
				break;
			}
		case SVC_OP_MAP:
			{
				int			nf = (int) m->a[2],
							no = (int) m->a[3];
				GdlBkExpr	exprs[2 * GDL_BK_MAX_ARITY + 2];
				const char *p = pl;
				int			e;

				if (nf < 0 || no < 0 || nf + no > 2 * GDL_BK_MAX_ARITY + 2)
				{
					reply_error(m, GDL_BK_ERR_INVALID, "internal: too many expressions");
					return;
				}
				for (e = 0; e < nf + no; e++)
				{
					exprs[e].ncode = *(const int32 *) p;
					p += 8;
					exprs[e].code = (const GdlBkInsn *) p;
					p += sizeof(GdlBkInsn) * exprs[e].ncode;
				}
				status = bk->map(ctx, (GdlBkRel *) (intptr_t) m->a[1], nf, exprs, no, exprs + nf, &out);
				break;
			}
		case SVC_OP_DEDUP:
			status = bk->dedup(ctx, (int) m->a[1], (GdlBkRel *const *) pl, &out);
			break;
		case SVC_OP_DIFFERENCE:
			status = bk->difference(ctx, (GdlBkRel *) (intptr_t) m->a[1],
									(GdlBkRel *) (intptr_t) m->a[2], &out);
			break;
		case SVC_OP_MERGE:
			status = bk->merge(ctx, (GdlBkRel *) (intptr_t) m->a[1],
							   (GdlBkRel *) (intptr_t) m->a[2], &out);
			break;
		case SVC_OP_ABSORB:
			status = bk->absorb(ctx, (GdlBkRel *) (intptr_t) m->a[1],
								(GdlBkRel *) (intptr_t) m->a[2], &out, &out2);
			m->a[1] = (int64) (intptr_t) out2;
			m->out_rel[1] = (int64) (intptr_t) out2;
			break;
		case SVC_OP_AGGREGATE:
			{
				int			ngroup = (int) m->a[2];
				const int  *group = (const int *) pl;

				status = bk->aggregate(ctx, (GdlBkRel *) (intptr_t) m->a[1], ngroup, group,
									   (int) m->a[3], (const GdlBkAgg *) (group + ngroup), &out);
				break;
			}
		case SVC_OP_SLICE:
			status = bk->slice(ctx, (GdlBkRel *) (intptr_t) m->a[1], m->a[2], m->a[3], &out);
			break;
		case SVC_OP_FROM_RESIDENT:
			{
				int			ncols = (int) m->a[2];
				const int32 *colidx = (const int32 *) pl;
				const int32 *lens = colidx + ncols;
				const int32_t *remap[GDL_BK_MAX_ARITY + 1];
				int32_t		remap_len[GDL_BK_MAX_ARITY + 1];
				const int32 *p = lens + ncols;
				int			c;

				if (!ctx_known(st, ctx) || ncols < 0 || ncols > GDL_BK_MAX_ARITY)
				{
					reply_error(m, GDL_BK_ERR_INVALID, "internal: bad resident request");
					return;
				}
				for (c = 0; c < ncols; c++)
				{
					remap_len[c] = lens[c] < 0 ? 0 : lens[c];
					remap[c] = lens[c] < 0 ? NULL : p;
					if (lens[c] > 0)
						p += lens[c];
				}
				status = bk->from_resident(ctx, (void *) (intptr_t) m->a[1], ncols, colidx,
										   remap, remap_len, &out);
				break;
			}
		default:
			reply_error(m, GDL_BK_ERR_INVALID, "internal: unknown request to the GPU service");
			return;
	}
	m->a[0] = (int64) (intptr_t) out;
	m->out_rel[0] = (int64) (intptr_t) out;
	reply_status(m, ctx, status);
}

/*
 * Wait (spin, then sleep) until the slot has an unanswered request; on the
 * way, reclaim the slot when its session gave it up.
 */
static uint64
wait_request(ServeState *st)
{
	SvcSlot    *slot = st->slot;
	int			i;

	for (;;)
	{
		uint64		req = pg_atomic_read_u64(&slot->req_seq);

		if (serve_stopping)
		{
			pg_usleep(100000L);	/* the process is ending: take nothing new */
			continue;
		}
		pg_read_barrier();
		if (req != pg_atomic_read_u64(&slot->rep_seq))
		{
			if (slot->state == SVC_SLOT_BUSY)
				return req;
			/* posted, then given up before it was taken: nobody waits */
			pg_atomic_write_u64(&slot->rep_seq, req);
		}
		reclaim_if_orphan(st);
		for (i = 0; i < SPIN_LOOPS; i++)
		{
			pg_spin_delay();
			if (pg_atomic_read_u64(&slot->req_seq) != pg_atomic_read_u64(&slot->rep_seq))
				break;
		}
		if (i < SPIN_LOOPS)
			continue;
		{
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 1;
			(void) sem_timedwait(&slot->req_sem, &ts);
		}
	}
}

/* A slot's thread: serve requests forever. */
static void *
serve_thread(void *arg)
{
	ServeState *st = calloc(1, sizeof(ServeState));

	if (st == NULL)
		return NULL;
	st->slot = (SvcSlot *) arg;
	if (serve_states)
		serve_states[st->slot - svc_shared->slots] = st;
	for (;;)
	{
		uint64		req = wait_request(st);
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		st->op_since = (int64) now.tv_sec * 1000 + now.tv_nsec / 1000000;
		st->op_now = st->slot->msg.op;
		pg_atomic_fetch_add_u32(&serving, 1);
		pg_read_barrier();
		serve_one(st);
		if (st->slot->state == SVC_SLOT_ORPHAN)
		{
			clock_gettime(CLOCK_MONOTONIC, &now);
			/* a thread: not elog */
			fprintf(stderr, "gpudl GPU service: request %d ended %lld ms after it started; its session had given it up\n",
					st->op_now, (long long) ((int64) now.tv_sec * 1000 + now.tv_nsec / 1000000 - st->op_since));
		}
		st->op_now = SVC_OP_NONE;
		pg_atomic_fetch_sub_u32(&serving, 1);
		pg_write_barrier();
		pg_atomic_write_u64(&st->slot->rep_seq, req);
		sem_post(&st->slot->rep_sem);
		reclaim_if_orphan(st);	/* its session left while this ran */
	}
	return NULL;
}

/* Start one thread per slot, serving with 'bk'. */
void
svc_serve_start(const GdlBackend *bk)
{
	int			i;
	sigset_t	all,
				old;

	serve_bk = bk;
	pg_atomic_init_u32(&serving, 0);
	serve_states = calloc(svc_shared->nslots, sizeof(ServeState *));
	/* sessions see the same optional members as the served backend */
	svc_shared->has_resident = bk->resident_create && bk->resident_free && bk->from_resident;
	svc_shared->has_absorb = bk->absorb != NULL;
	svc_shared->has_slice = bk->slice != NULL && bk->join_count != NULL;
	svc_shared->has_join_count = svc_shared->has_slice;
	/* signals go to the main thread: the threads start with all blocked but faults */
	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	sigdelset(&all, SIGABRT);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < svc_shared->nslots; i++)
	{
		pthread_t	t;
		pthread_attr_t attr;

		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attr, 8 << 20);
		if (pthread_create(&t, &attr, serve_thread, &svc_shared->slots[i]) != 0)
			elog(FATAL, "gpudl GPU service: could not start a thread: %m");
		pthread_attr_destroy(&attr);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * Stop taking requests and wait (up to wait_ms) for the operations in
 * flight to end, so the process can exit without a thread inside the
 * driver.  Sessions whose request is not taken see the service stopped.
 */
void
svc_serve_stop(int wait_ms)
{
	int			waited = 0;

	serve_stopping = true;
	pg_memory_barrier();
	/* requests posted but not taken stay untaken: their sessions see the service stopped */
	while (waited < wait_ms && pg_atomic_read_u32(&serving) > 0)
	{
		pg_usleep(10000L);
		waited += 10;
	}
	if (waited >= 1000)
		elog(LOG, "gpudl GPU service: waited %d ms at stop for %u request(s) in flight",
			 waited, pg_atomic_read_u32(&serving));
	/* what did not end: the request, its slot, for how long, whose */
	if (pg_atomic_read_u32(&serving) > 0 && serve_states)
	{
		struct timespec now;
		int64		now_ms;
		int			i;

		clock_gettime(CLOCK_MONOTONIC, &now);
		now_ms = (int64) now.tv_sec * 1000 + now.tv_nsec / 1000000;
		for (i = 0; i < svc_shared->nslots; i++)
		{
			ServeState *st = serve_states[i];

			if (st && st->op_now != SVC_OP_NONE)
				elog(LOG, "gpudl GPU service: slot %d still runs request %d (for %lld ms, session %d, %s)",
					 i, st->op_now, (long long) (now_ms - st->op_since), st->slot->pid,
					 st->slot->state == SVC_SLOT_ORPHAN ? "given up by its session" : "its session waits");
		}
	}
}
