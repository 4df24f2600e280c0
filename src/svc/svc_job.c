/*
 * svc_job.c — the GPU service's jobs (mining, learning) as stoppable work
 * (issue 20): a job runs in a scope that records every allocation the core
 * makes for it and knows whose it is (the slot), so that
 *   - the job can be asked whether its session still wants it
 *     (svc_job_should_stop: the slot's cancel flag, the slot given up, the
 *     session's process gone, the service stopping), from any thread —
 *     worker threads find the scope through gdl_parallel's thread tag;
 *   - the core's interrupt checks and errors inside the job unwind to the
 *     scope (longjmp) and every allocation of the job is freed, instead of
 *     the service aborting;
 *   - with gpudl.service_backend = cpu, mining through the service counts
 *     on the CPU core in the service (svc_cpu_mine_device), so that the
 *     service's job path (SVC_OP_MINE: staging, cancel, abandon) is tested
 *     where there is no GPU.
 *
 * Runs in the service's threads: no PostgreSQL calls (no palloc, elog or
 * locks), only malloc, atomics and the core.
 */
#include "svc/svc_int.h"
#include "mine/gdl_mine.h"
#include "mine/gdl_mine_device.h"
#include "mine/mine_int.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Header of a block from the service's host allocator. */
typedef struct JobBlock
{
	struct JobBlock *prev,
			   *next;
	struct SvcJobScope *scope;	/* NULL: not a job's (the CPU backend's contexts) */
	size_t		size;
	uint64		pad;			/* keeps the payload 16-byte aligned */
} JobBlock;

struct SvcJobScope
{
	SvcSlot    *slot;
	int			pid;			/* the session that asked */
	JobBlock	head;			/* ring of the job's blocks */
	sigjmp_buf	unwind;
	bool		can_unwind;
	char		err[SVC_ERRLEN];
	double		last_pid_check;
	volatile bool stopped;
};

static __thread SvcJobScope *cur_scope;	/* the slot thread's job, if any */

static double
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

/* Begin a job of 'slot' on the calling (slot) thread; NULL without memory. */
SvcJobScope *
svc_job_begin(SvcSlot *slot)
{
	SvcJobScope *sc = calloc(1, sizeof(SvcJobScope));

	if (sc == NULL)
		return NULL;
	sc->slot = slot;
	sc->pid = slot->pid;
	sc->head.prev = sc->head.next = &sc->head;
	sc->last_pid_check = mono_ms();
	cur_scope = sc;
	gdl_set_thread_tag(sc);
	return sc;
}

/* End the job: free every block the core allocated for it, and the scope. */
void
svc_job_end(SvcJobScope *sc)
{
	JobBlock   *b = sc->head.next;

	while (b != &sc->head)
	{
		JobBlock   *next = b->next;

		free(b);
		b = next;
	}
	cur_scope = NULL;
	gdl_set_thread_tag(NULL);
	free(sc);
}

/*
 * Whether the job's session no longer wants it: the cancel flag its wait
 * sets on an interrupt, the slot given up (the session was interrupted
 * past the grace, or exited), its process gone, or the service stopping.
 * Cheap (the process check runs at most every 100 ms); any thread.
 */
bool
svc_job_should_stop(SvcJobScope *sc)
{
	if (sc == NULL)
		return false;
	if (sc->stopped)
		return true;
	if (pg_atomic_read_u32(&sc->slot->cancel) != 0 || sc->slot->state != SVC_SLOT_BUSY ||
		sc->slot->pid != sc->pid || svc_serve_stopping())
		sc->stopped = true;
	else if (sc == cur_scope && mono_ms() - sc->last_pid_check > 100)
	{
		sc->last_pid_check = mono_ms();
		if (kill(sc->pid, 0) != 0 && errno == ESRCH)
			sc->stopped = true;
	}
	return sc->stopped;
}

/* ---------------------------------------------- the service's host hooks */

static void *
job_alloc(size_t size)
{
	JobBlock   *b = calloc(1, sizeof(JobBlock) + (size ? size : 1));

	if (b == NULL)
	{
		if (cur_scope != NULL)
			gdl_error(GDL_ERR_OUT_OF_MEMORY, NULL, NULL, "out of host memory in the GPU service");
		fprintf(stderr, "gpudl GPU service: out of host memory (%zu bytes)\n", size);
		abort();
	}
	b->size = size;
	b->scope = cur_scope;
	if (cur_scope != NULL)
	{
		b->next = cur_scope->head.next;
		b->prev = &cur_scope->head;
		b->next->prev = b;
		cur_scope->head.next = b;
	}
	return b + 1;
}

static void
job_free(void *ptr)
{
	JobBlock   *b;

	if (ptr == NULL)
		return;
	b = (JobBlock *) ptr - 1;
	if (b->scope != NULL)
	{
		b->prev->next = b->next;
		b->next->prev = b->prev;
	}
	free(b);
}

static void *
job_realloc(void *ptr, size_t size)
{
	JobBlock   *b = (JobBlock *) ptr - 1,
			   *n;

	if (ptr == NULL)
		return job_alloc(size);
	/* the block keeps its scope (or none): unlink, grow, link again */
	if (b->scope != NULL)
	{
		b->prev->next = b->next;
		b->next->prev = b->prev;
	}
	n = realloc(b, sizeof(JobBlock) + (size ? size : 1));
	if (n == NULL)
	{
		fprintf(stderr, "gpudl GPU service: out of host memory (%zu bytes)\n", size);
		abort();
	}
	n->size = size;
	if (n->scope != NULL)
	{
		n->next = n->scope->head.next;
		n->prev = &n->scope->head;
		n->next->prev = n;
		n->scope->head.next = n;
	}
	return n + 1;
}

/* A core error: inside a job, unwind to it; elsewhere (a bug) abort. */
static void
job_error(const GdlError *err)
{
	SvcJobScope *sc = cur_scope;

	if (sc != NULL && sc->can_unwind)
	{
		strlcpy(sc->err, err->message, sizeof(sc->err));
		siglongjmp(sc->unwind, 1);
	}
	fprintf(stderr, "gpudl GPU service: %s\n", err->message);
	abort();
}

/* The core's interrupt check inside a job: unwind when it should stop. */
static void
job_check_interrupts(void)
{
	SvcJobScope *sc = cur_scope;

	if (sc != NULL && sc->can_unwind && svc_job_should_stop(sc))
	{
		strlcpy(sc->err, "cancelled: the session no longer waits for this job", sizeof(sc->err));
		siglongjmp(sc->unwind, 1);
	}
}

/* Worker threads' poll: their job (by the thread tag) should stop. */
static bool
job_interrupt_pending(void)
{
	return svc_job_should_stop((SvcJobScope *) gdl_thread_tag());
}

static const GdlHost svc_job_host = {
	job_alloc, job_realloc, job_free, job_error, job_check_interrupts, NULL, job_interrupt_pending
};

/* The host hooks of the service process (malloc, jobs unwind). */
const GdlHost *
svc_job_host_hooks(void)
{
	return &svc_job_host;
}

/* GdlMineDevIn.stop in the service: arg is the job's scope. */
int
svc_job_stop_cb(void *arg)
{
	return svc_job_should_stop((SvcJobScope *) arg) ? 1 : 0;
}

/* ------------------------------ mining on the CPU core, in the service */

/*
 * GdlMineDevice.mine of the CPU-backend service: the graph rebuilt from
 * the links (p(e, nb) for every even signature 2p), counted by the core as
 * a session would (mine_count_support, mine_count_bodies), in the calling
 * slot thread's job scope (svc_serve.c sets it up): interrupts unwind there.
 */
static int
cpu_mine(const GdlMineDevIn *in, GdlMineDevCand **out, int64_t *nout, double seconds[3],
		 char *errmsg, size_t errlen)
{
	SvcJobScope *sc = cur_scope;
	GdlMineRelation *rels;
	GdlMineOptions o;
	GdlMineGraph *g;
	MineCand   *c;
	int64_t		n = 0;
	int64_t    *cnt;
	GdlMineDevCand *res;
	double		t0;

	*out = NULL;
	*nout = 0;
	if (sc == NULL)
	{
		snprintf(errmsg, errlen, "internal: CPU mining outside a job of the GPU service");
		return 1;
	}
	sc->can_unwind = true;
	if (sigsetjmp(sc->unwind, 0) != 0)
	{
		sc->can_unwind = false;
		snprintf(errmsg, errlen, "%s", sc->err);
		return 1;
	}
	t0 = mono_ms();
	rels = gdl_alloc(sizeof(GdlMineRelation) * (in->nrels + 1));
	cnt = gdl_alloc(sizeof(int64_t) * (in->nrels + 1));
	for (int64_t k = 0; k < in->nlinks; k++)
		if ((in->sig[k] & 1) == 0)
			cnt[in->sig[k] >> 1]++;
	for (int r = 0; r < in->nrels; r++)
	{
		rels[r].name = gdl_sprintf("r%d", r);
		rels[r].rows.ncols = 2;
		rels[r].rows.nrows = 0;
		rels[r].rows.cols = gdl_alloc(sizeof(int64_t *) * 2);
		rels[r].rows.cols[0] = gdl_alloc(sizeof(int64_t) * (cnt[r] + 1));
		rels[r].rows.cols[1] = gdl_alloc(sizeof(int64_t) * (cnt[r] + 1));
	}
	for (int32_t e = 0; e < in->nent; e++)
	{
		for (int64_t k = in->aoff[e]; k < in->aoff[e + 1]; k++)
			if ((in->sig[k] & 1) == 0)
			{
				GdlColumns *rows = &rels[in->sig[k] >> 1].rows;

				rows->cols[0][rows->nrows] = e;
				rows->cols[1][rows->nrows] = in->nb[k];
				rows->nrows++;
			}
		gdl_check_interrupts();
	}
	g = gdl_mine_graph_build(in->nrels, rels);
	memset(&o, 0, sizeof(o));
	o.target = in->target;
	o.max_body = in->max_body;
	o.min_head_coverage = in->min_head_coverage;
	o.min_support = in->min_support;
	o.device = GDL_DEVICE_CPU;
	seconds[2] = (mono_ms() - t0) / 1000;
	t0 = mono_ms();
	c = mine_count_support(g, &o, gdl_threads(), 0, &n);
	seconds[0] = (mono_ms() - t0) / 1000;
	t0 = mono_ms();
	mine_count_bodies(g, &o, gdl_threads(), 0, c, n);
	seconds[1] = (mono_ms() - t0) / 1000;
	sc->can_unwind = false;
	res = malloc(sizeof(GdlMineDevCand) * (n + 1));
	if (res == NULL)
	{
		snprintf(errmsg, errlen, "out of host memory in the GPU service");
		return 1;
	}
	for (int64_t i = 0; i < n; i++)
	{
		res[i].key = c[i].key;
		res[i].head = c[i].head;
		res[i].support = c[i].support;
		res[i].body_size = c[i].body_size;
		res[i].pca_body_size = c[i].pca_body_size;
	}
	*out = res;
	*nout = n;
	return 0;
}

static void
cpu_mine_free(GdlMineDevCand *p)
{
	free(p);
}

static const GdlMineDevice svc_cpu_mine = {
	GDL_MINE_DEVICE_ABI, "cpu (GPU service)", cpu_mine, cpu_mine_free
};

/* The CPU-backend service's mining device. */
const GdlMineDevice *
svc_cpu_mine_device(void)
{
	return &svc_cpu_mine;
}
