/*
 * svc_mine.c — rule mining on the GPU when the GPU service owns it: a
 * session's GdlMineDevice whose counting is sent to the service.
 *
 * Without this, a cluster running the service (the default) mined on the
 * CPU only, since a session may not open the GPU the service holds.  Here
 * the mining core (src/mine) calls this device as it calls the CUDA module:
 * the graph's links go to a slot of the service (staged in pieces when
 * large), the service runs the module's counting (svc_serve.c, one mining
 * at a time on the device), and the candidates come back.  Before that the
 * session is admitted against the cluster's device budget like any GPU
 * run, so mining queues behind the runs that hold the device and shows in
 * gpudl_gpu_jobs() with its program and phase; with gpudl.device = auto a
 * wait past gpudl.device_wait_timeout counts on the CPU instead, with
 * gpudl.device = gpu it raises 53200 as a run does.  Any failure in the
 * service (the module's, or the service ending) makes the core count on
 * the CPU, as it does when the session's own module fails.
 */
#include "svc/svc_int.h"
#include "mine/gdl_mine_device.h"


/* What gpudl_gpu_jobs() shows for the mining in flight. */
static char mine_program[64] = "";
static char mine_goal[128] = "";

/* Name the mining that the next counting belongs to (for gpudl_gpu_jobs). */
void
svc_mine_set_label(const char *program, const char *target)
{
	strlcpy(mine_program, program ? program : "", sizeof(mine_program));
	snprintf(mine_goal, sizeof(mine_goal), "gpudl_mine(%s)", target ? target : "every relation");
}

/*
 * Device memory to be admitted for: the links and pairs on the device, the
 * walk's scratch and the count table.  The module sizes its scratch by the
 * free memory it finds (at most half, at most 24 GB), so this is what it
 * needs to run at all, not what it may borrow while the device is idle.
 */
static int64
mine_need(const GdlMineDevIn *in)
{
	int64		npairs = in->ppoff[in->nent] + in->cpoff[in->nent];
	int64		bytes = in->nlinks * 16 + npairs * 12 + ((int64) in->nent + 1) * 24;

	return Max(bytes * 4, (int64) 1 << 30);
}

/*
 * GdlMineDevice.mine: admitted, then counted in the service.  Returns
 * nonzero (the core counts on the CPU) when the wait timed out under
 * gpudl.device = auto or the service failed; raises under gpudl.device =
 * gpu when the wait timed out, and on cancel.
 */
static int
px_mine(const GdlMineDevIn *in, GdlMineDevCand **out, int64_t *nout, double seconds[3],
		char *why, size_t whylen)
{
	SvcMineWire w;
	SvcJobCall	jc = SVC_JOB_CALL_INIT;

	*out = NULL;
	*nout = 0;
	if (!svc_admit_job(&jc.adm, mine_need(in), mine_program[0] ? mine_program : "(mining)",
					   mine_goal[0] ? mine_goal : "gpudl_mine", "mining", "mine", why, whylen))
		return 1;

	memset(&w, 0, sizeof(w));
	w.nent = in->nent;
	w.nrels = in->nrels;
	w.nlinks = in->nlinks;
	w.npp = in->ppoff[in->nent];
	w.ncp = in->cpoff[in->nent];
	w.max_body = in->max_body;
	w.target = in->target;
	w.min_support = in->min_support;
	w.min_head_coverage = in->min_head_coverage;
	svc_wire_put(&jc.wire, &w, sizeof(w));
	svc_wire_put(&jc.wire, in->aoff, 8 * ((int64) in->nent + 1));
	svc_wire_put(&jc.wire, in->sig, 4 * in->nlinks);
	svc_wire_put(&jc.wire, in->nb, 4 * in->nlinks);
	svc_wire_put(&jc.wire, in->bnb, 4 * in->nlinks);
	svc_wire_put(&jc.wire, in->bsig, 4 * in->nlinks);
	svc_wire_put(&jc.wire, in->ppoff, 8 * ((int64) in->nent + 1));
	svc_wire_put(&jc.wire, in->ppa, 4 * w.npp);
	svc_wire_put(&jc.wire, in->ppb, 4 * w.npp);
	svc_wire_put(&jc.wire, in->ppz, 4 * w.npp);
	svc_wire_put(&jc.wire, in->cpoff, 8 * ((int64) in->nent + 1));
	svc_wire_put(&jc.wire, in->cpa, 4 * w.ncp);
	svc_wire_put(&jc.wire, in->cpb, 4 * w.ncp);
	svc_wire_put(&jc.wire, in->nfacts, 8 * (int64) in->nrels);

	if (svc_job_request(&jc, SVC_OP_MINE, why, whylen) != GDL_BK_OK)
		return 1;
	if (jc.reply_len != jc.args[0] * (int64) sizeof(GdlMineDevCand))
		return svc_job_wrong_reply(jc.reply, "mining", why, whylen);
	*out = (GdlMineDevCand *) jc.reply;
	*nout = jc.args[0];
	for (int i = 0; i < 3; i++)
		memcpy(&seconds[i], &jc.args[1 + i], sizeof(double));
	return 0;
}

/* GdlMineDevice.mine_free: the reply was palloc'd. */
static void
px_mine_free(GdlMineDevCand *p)
{
	if (p)
		pfree(p);
}

static const GdlMineDevice proxy_mine = {
	GDL_MINE_DEVICE_ABI, "cuda (GPU service)", px_mine, px_mine_free
};

/* The session's mining device when the service serves one (else NULL). */
const GdlMineDevice *
svc_mine_proxy_device(void)
{
	if (svc_shared == NULL || svc_shared->state != SVC_READY || !svc_shared->has_mine)
		return NULL;
	return &proxy_mine;
}
