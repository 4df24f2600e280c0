/*
 * mine_device.c — the registered mining accelerator (gdl_mine_device.h):
 * the graph's links handed to the device, both counting passes run there,
 * the candidates read back into host memory sorted as the CPU leaves them.
 * The CPU (mine_enum.c) is the reference and counts whenever no device is
 * registered or the device fails (the reason is kept for
 * gdl_mine_device_last_error).
 */
#include "mine_int.h"
#include "gdl_mine_device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const GdlMineDevice *mine_dev = NULL;
static char mine_dev_error[256];

/* Register (or with NULL, unregister) the mining device. */
void
gdl_mine_register_device(const GdlMineDevice *dev)
{
	if (dev != NULL && (dev->abi != GDL_MINE_DEVICE_ABI || dev->mine == NULL))
		dev = NULL;
	mine_dev = dev;
}

/* The registered device, or NULL. */
const GdlMineDevice *
gdl_mine_device(void)
{
	return mine_dev;
}

/* Why the last GPU mining fell back to the CPU, or "". */
const char *
gdl_mine_device_last_error(void)
{
	return mine_dev_error;
}

/* GdlMineDevIn.stop: the host's pending interrupt (cancel, timeout). */
static int
device_stop(void *arg)
{
	(void) arg;
	return gdl_interrupt_pending() ? 1 : 0;
}

/*
 * The device's problem for graph g under options o (stop left NULL): the
 * graph's link arrays as they are, the thresholds.
 */
void
mine_device_input(const GdlMineGraph *g, const GdlMineOptions *o, GdlMineDevIn *in)
{
	memset(in, 0, sizeof(*in));
	in->nent = g->nent;
	in->nrels = g->nrels;
	in->nlinks = g->nlinks;
	in->aoff = g->aoff;
	in->sig = g->asig;
	in->nb = g->anb;
	in->bnb = g->bnb;
	in->bsig = g->bsig;
	in->ppoff = g->ppoff;
	in->ppa = g->ppa;
	in->ppb = g->ppb;
	in->ppz = g->ppz;
	in->cpoff = g->cpoff;
	in->cpa = g->cpa;
	in->cpb = g->cpb;
	in->nfacts = g->nfacts;
	in->max_body = o->max_body;
	in->target = o->target;
	in->min_support = o->min_support < 1 ? 1 : o->min_support;
	in->min_head_coverage = o->min_head_coverage;
}

/*
 * Count on the device when one is registered: true with *c (host memory,
 * sorted by body key and head), *ncand and the phase times filled; false
 * leaves the work to the CPU.
 */
bool
mine_device_count(const GdlMineGraph *g, const GdlMineOptions *o,
				  MineCand **c, int64_t *ncand, GdlMineTimes *times)
{
	const GdlMineDevice *dev = mine_dev;
	GdlMineDevIn in;
	GdlMineDevCand *out = NULL;
	int64_t		nout = 0;
	double		sec[3] = {0, 0, 0};
	MineCand   *cand;

	mine_dev_error[0] = '\0';
	if (dev == NULL)
	{
		snprintf(mine_dev_error, sizeof(mine_dev_error), "no mining device is registered");
		return false;
	}
	if (o->object_identity)
	{
		/* the device's walk counts Datalog's semantics only (cuda/mine_walk.cuh) */
		snprintf(mine_dev_error, sizeof(mine_dev_error),
				 "object identity is counted on the CPU (the device's walk has no object identity)");
		return false;
	}
	mine_device_input(g, o, &in);
	in.stop = device_stop;
	if (dev->mine(&in, &out, &nout, sec, mine_dev_error, sizeof(mine_dev_error)) != 0)
	{
		gdl_check_stop();		/* stopped by an interrupt: raise it, no CPU fallback */
		if (mine_dev_error[0] == '\0')
			snprintf(mine_dev_error, sizeof(mine_dev_error), "the mining device failed");
		return false;
	}
	cand = gdl_alloc(sizeof(MineCand) * (nout + 1));
	for (int64_t i = 0; i < nout; i++)
	{
		cand[i].key = out[i].key;
		cand[i].head = out[i].head;
		cand[i].support = out[i].support;
		cand[i].body_size = out[i].body_size;
		cand[i].pca_body_size = out[i].pca_body_size;
	}
	if (dev->mine_free)
		dev->mine_free(out);
	/* the CUDA module sorts on the device: a host sort only when not in order */
	for (int64_t i = 1; i < nout; i++)
	{
		if ((i & ((1 << 20) - 1)) == 0)
			gdl_check_interrupts();
		if (mine_cand_cmp(&cand[i - 1], &cand[i]) > 0)
		{
			qsort(cand, nout, sizeof(MineCand), mine_cand_cmp);
			break;
		}
	}
	*c = cand;
	*ncand = nout;
	times->index = sec[2];
	times->enumerate = sec[0];
	times->measures = sec[1];
	return true;
}
