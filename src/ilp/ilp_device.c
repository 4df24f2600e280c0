/*
 * ilp_device.c — the registered training accelerator (gdl_ilp_device.h) and
 * the device half of ilp_train: upload the coverage matrix once, run every
 * epoch on the device, read back the probabilities and the loss.  The CPU
 * path in ilp_adam.c is the reference and takes over when the device fails.
 */
#include "ilp_int.h"
#include "gdl_ilp_device.h"

#include <stdio.h>
#include <string.h>

/* Matrices with fewer entries than this train on the CPU in AUTO mode. */
#define ILP_DEVICE_MIN_NNZ 100000

static const GdlIlpDevice *ilp_dev = NULL;
static GdlIlpDeviceMode ilp_dev_mode = GDL_ILP_DEVICE_AUTO;

GdlIlpTimings gdl_ilp_timings;

/* Register (or with NULL, unregister) the training device. */
void
gdl_ilp_register_device(const GdlIlpDevice *dev)
{
	if (dev != NULL && dev->abi != GDL_ILP_DEVICE_ABI)
		dev = NULL;
	ilp_dev = dev;
}

/* The registered device, or NULL. */
const GdlIlpDevice *
gdl_ilp_device(void)
{
	return ilp_dev;
}

/* Choose when the device trains. */
void
gdl_ilp_set_device_mode(GdlIlpDeviceMode mode)
{
	ilp_dev_mode = mode;
}

/*
 * The device to compute bulk coverage on, for 'work' (adjacency entries plus
 * examples), or NULL for the CPU: one with cover() is registered and the
 * mode allows it (AUTO: work at least ILP_DEVICE_MIN_NNZ).
 */
const GdlIlpDevice *
ilp_cover_device(int64_t work)
{
	const GdlIlpDevice *dev = ilp_dev;

	if (dev == NULL || dev->cover == NULL || ilp_dev_mode == GDL_ILP_DEVICE_NEVER)
		return NULL;
	if (ilp_dev_mode == GDL_ILP_DEVICE_AUTO && work < ILP_DEVICE_MIN_NNZ)
		return NULL;
	return dev;
}

/* Seconds on a monotonic clock. */
double
ilp_now(void)
{
	return gdl_now_ms() / 1000.0;
}

/* GdlIlpDevTrain.stop: the host's pending interrupt (cancel, timeout). */
static int
device_stop(void *arg)
{
	(void) arg;
	return gdl_interrupt_pending() ? 1 : 0;
}

/*
 * Train on the device when one is registered and the mode and the matrix
 * size say so.  Returns true when it did (out filled as by ilp_train);
 * false leaves the work to the CPU (the reason of a failure is kept in
 * gdl_ilp_timings.last_device_error).
 */
bool
ilp_train_device(const IlpCsr *m, int32_t npos, int epochs, double lr, double w0,
				 int stall_every, double stall_tol, IlpTrainOut *out)
{
	const GdlIlpDevice *dev = ilp_dev;
	GdlIlpDevProblem pr;
	GdlIlpDevTrain t;
	GdlIlpDevResult r;
	GdlIlpDevSession *s;
	char		err[256];
	double	   *prob;
	int			rc;

	if (dev == NULL || ilp_dev_mode == GDL_ILP_DEVICE_NEVER || m->ncols == 0 || m->nrows == 0)
		return false;
	if (ilp_dev_mode == GDL_ILP_DEVICE_AUTO && m->off[m->nrows] < ILP_DEVICE_MIN_NNZ)
		return false;
	pr.nrows = m->nrows;
	pr.ncols = m->ncols;
	pr.npos = npos;
	pr.wneg = m->wneg;
	pr.off = m->off;
	pr.idx = m->idx;
	err[0] = '\0';
	s = dev->create(&pr, err, sizeof(err));
	if (s == NULL)
	{
		snprintf(gdl_ilp_timings.last_device_error, sizeof(gdl_ilp_timings.last_device_error),
				 "%s", err);
		return false;
	}
	t.epochs = epochs;
	t.lr = lr;
	t.beta1 = 0.9;
	t.beta2 = 0.999;
	t.adam_eps = 1e-8;
	t.w0 = w0;
	t.stall_every = stall_every;
	t.stall_tol = stall_tol;
	t.loss_eps = GDL_ILP_EPS;
	t.stop = device_stop;
	t.stop_arg = NULL;
	prob = gdl_alloc(sizeof(double) * (m->ncols + 1));
	memset(&r, 0, sizeof(r));
	r.prob = prob;
	rc = dev->train(s, &t, &r, err, sizeof(err));
	dev->destroy(s);
	if (rc != 0)
	{
		gdl_free(prob);
		gdl_check_stop();		/* stopped by an interrupt: raise it, no CPU fallback */
		snprintf(gdl_ilp_timings.last_device_error, sizeof(gdl_ilp_timings.last_device_error),
				 "%s", err);
		return false;
	}
	out->epochs = r.epochs;
	out->loss = r.loss;
	out->prob = prob;
	out->on_device = true;
	return true;
}
