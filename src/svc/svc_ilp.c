/*
 * svc_ilp.c — rule learning's device work when the GPU service owns the
 * GPU: a session's GdlIlpDevice whose training and bulk coverage run in the
 * service.
 *
 * Without this, a cluster running the service (the default) learned on the
 * CPU only.  The learning core (src/ilp) calls create, train and destroy in
 * a row (ilp_device.c) and cover once per bulk build (ilp_bulk.c); here
 * create only keeps the problem, train sends the problem and the training
 * constants to a slot of the service, which creates, trains and destroys
 * there in one request and sends back the probabilities, and cover sends the
 * graph and gets the entries back.  Each request is admitted against the
 * cluster's device budget first, like a run: it queues behind runs that
 * hold the device and shows in gpudl_gpu_jobs() (phase "training" or
 * "coverage").  A wait past gpudl.device_wait_timeout, or a failure in the
 * service, hands the work back to the CPU (the core's fallback), except
 * that gpudl.device = gpu raises 53200 on the wait as a run does.  The
 * graph is never kept in the service between calls (no graph_id): two
 * sessions' graphs must not be taken for one another.
 */
#include "svc/svc_int.h"
#include "ilp/gdl_ilp_device.h"


/* A training problem kept by create() until train() sends it. */
struct GdlIlpDevSession
{
	GdlIlpDevProblem prob;
};

/* Admit one learning request (at least 256 MB; see svc_admit_job). */
static bool
ilp_admit(SvcAdmission *adm, int64 need, const char *phase, char *why, size_t whylen)
{
	return svc_admit_job(adm, Max(need, (int64) 256 << 20), "(rule learning)", phase, phase,
						 "learn", why, whylen);
}

/* GdlIlpDevice.create: keep the problem (the core keeps its arrays alive). */
static GdlIlpDevSession *
px_create(const GdlIlpDevProblem *prob, char *why, size_t whylen)
{
	GdlIlpDevSession *s = palloc0(sizeof(GdlIlpDevSession));

	s->prob = *prob;
	return s;
}

/* GdlIlpDevice.train: create, train and destroy in the service. */
static int
px_train(GdlIlpDevSession *s, const GdlIlpDevTrain *t, GdlIlpDevResult *out,
		 char *why, size_t whylen)
{
	const GdlIlpDevProblem *p = &s->prob;
	SvcIlpTrainWire w;
	SvcJobCall	jc = SVC_JOB_CALL_INIT;
	int64		nnz = p->off[p->nrows];

	/* the matrix both ways, per-candidate Adam state, per-example values */
	if (!ilp_admit(&jc.adm, nnz * 16 + (int64) p->ncols * 64 + (int64) p->nrows * 32,
				   "training", why, whylen))
		return 1;
	memset(&w, 0, sizeof(w));
	w.prob = *p;
	w.nnz = nnz;
	w.train = *t;
	svc_wire_put(&jc.wire, &w, sizeof(w));
	svc_wire_put(&jc.wire, p->off, 8 * ((int64) p->nrows + 1));
	svc_wire_put(&jc.wire, p->idx, 4 * nnz);
	if (svc_job_request(&jc, SVC_OP_ILP_TRAIN, why, whylen) != GDL_BK_OK)
		return 1;
	if (jc.reply_len != 8 * (int64) p->ncols)
		return svc_job_wrong_reply(jc.reply, "training", why, whylen);
	if (p->ncols > 0)
		memcpy(out->prob, jc.reply, jc.reply_len);
	if (jc.reply)
		pfree(jc.reply);
	out->epochs = (int) jc.args[0];
	memcpy(&out->loss, &jc.args[1], sizeof(double));
	memcpy(&out->seconds, &jc.args[2], sizeof(double));
	return 0;
}

/* GdlIlpDevice.forward: not served (the core trains only); the CPU does it. */
static int
px_forward(GdlIlpDevSession *s, const double *prob, double *P, double *loss,
		   char *why, size_t whylen)
{
	snprintf(why, whylen, "forward passes are not served by the GPU service");
	return 1;
}

/* GdlIlpDevice.destroy: nothing lives in the service between requests. */
static void
px_destroy(GdlIlpDevSession *s)
{
	if (s)
		pfree(s);
}

/* GdlIlpDevice.cover: the bulk coverage of one graph in the service. */
static int
px_cover(const GdlIlpDevCoverIn *in, uint64_t **out, int64_t *nout, double *seconds,
		 char *why, size_t whylen)
{
	SvcIlpCoverWire w;
	SvcJobCall	jc = SVC_JOB_CALL_INIT;
	int64		input;

	*out = NULL;
	*nout = 0;
	*seconds = 0;
	memset(&w, 0, sizeof(w));
	w.nent = in->nent;
	w.nex = in->nex;
	w.nadj = in->aoff[in->nent];
	w.nsig = in->soff[in->nent];
	w.nusig = in->uoff[in->nent];
	w.max_entries = in->max_entries;
	w.skip_pred = in->skip_pred;
	input = w.nadj * 8 + (w.nsig + w.nusig) * 4 + ((int64) w.nent + 1) * 24 + (int64) w.nex * 8;
	/* the input, and the raw entries up to the module's cap, sorted with scratch */
	if (!ilp_admit(&jc.adm, input * 2 + Min(in->max_entries, input * 8) * 16,
				   "coverage", why, whylen))
		return 1;
	svc_wire_put(&jc.wire, &w, sizeof(w));
	svc_wire_put(&jc.wire, in->aoff, 8 * ((int64) in->nent + 1));
	svc_wire_put(&jc.wire, in->adj, 8 * w.nadj);
	svc_wire_put(&jc.wire, in->soff, 8 * ((int64) in->nent + 1));
	svc_wire_put(&jc.wire, in->sig, 4 * w.nsig);
	svc_wire_put(&jc.wire, in->uoff, 8 * ((int64) in->nent + 1));
	svc_wire_put(&jc.wire, in->usig, 4 * w.nusig);
	svc_wire_put(&jc.wire, in->ex0, 4 * (int64) in->nex);
	svc_wire_put(&jc.wire, in->ex1, 4 * (int64) in->nex);
	if (svc_job_request(&jc, SVC_OP_ILP_COVER, why, whylen) != GDL_BK_OK)
		return 1;
	if (jc.reply_len != 8 * jc.args[0])
		return svc_job_wrong_reply(jc.reply, "coverage", why, whylen);
	*out = (uint64_t *) jc.reply;
	*nout = jc.args[0];
	memcpy(seconds, &jc.args[1], sizeof(double));
	return 0;
}

/* GdlIlpDevice.cover_free: the reply was palloc'd. */
static void
px_cover_free(uint64_t *p)
{
	if (p)
		pfree(p);
}

static const GdlIlpDevice proxy_ilp = {
	GDL_ILP_DEVICE_ABI, "cuda (GPU service)", px_create, px_train, px_forward, px_destroy,
	px_cover, px_cover_free, NULL
};

/* The session's rule-learning device when the service serves one (else NULL). */
const GdlIlpDevice *
svc_ilp_proxy_device(void)
{
	if (svc_shared == NULL || svc_shared->state != SVC_READY || !svc_shared->has_ilp)
		return NULL;
	return &proxy_ilp;
}
