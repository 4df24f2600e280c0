/*
 * test_ilp_gpu.c — rule-learning training on the GPU (cuda/ilp.cu through
 * src/ilp/gdl_ilp_device.h) against the CPU reference: random coverage
 * matrices trained both ways must give the same probabilities, loss and
 * epochs to rounding (1e-6 relative), and the forward pass the same loss
 * and example probabilities.  Loads ../../cuda/gpudl_cuda.so (or
 * $GDL_CUDA_LIB); without the module or a GPU it prints "skipped" and
 * passes, as in CI.
 */
#include "test_util.h"
#include "../../src/ilp/ilp_int.h"
#include "../../src/ilp/gdl_ilp_device.h"

#include <math.h>
#include <string.h>

static uint64_t rng = 42;

/* A pseudo-random 64-bit number. */
static uint64_t
next_rand(void)
{
	rng = ilp_mix64(rng);
	return rng;
}

/* Relative difference of two numbers (absolute near zero). */
static double
rel_diff(double a, double b)
{
	double		d = fabs(a - b);
	double		s = fmax(fabs(a), fabs(b));

	return s > 1.0 ? d / s : d;
}

/*
 * A random matrix: nrows examples (npos positives first), ncols candidates,
 * each entry present with probability 1/dens, plus a few candidates that
 * cover many examples (long columns) and a long row.
 */
static IlpCsr *
random_csr(int32_t nrows, int32_t ncols, int dens, int32_t npos, double wneg)
{
	int32_t   **cov = gdl_alloc(sizeof(int32_t *) * ncols);
	int32_t    *ncov = gdl_alloc(sizeof(int32_t) * ncols);
	IlpCsr	   *m;

	for (int32_t c = 0; c < ncols; c++)
	{
		int			d = c % 17 == 0 ? 3 : dens;
		bool		poslean = c % 5 == 0;	/* some candidates mostly cover positives */

		cov[c] = gdl_alloc(sizeof(int32_t) * (nrows + 1));
		ncov[c] = 0;
		for (int32_t r = 0; r < nrows; r++)
		{
			int			dd = poslean && r >= npos ? d * 8 : d;

			if (r == 1 || next_rand() % dd == 0)
				cov[c][ncov[c]++] = r;
		}
	}
	m = ilp_csr_build(nrows, ncols, ncov, cov);
	m->wneg = wneg;
	for (int32_t c = 0; c < ncols; c++)
		gdl_free(cov[c]);
	gdl_free(cov);
	gdl_free(ncov);
	return m;
}

/* Train one matrix on the CPU and on the device and compare. */
static void
compare_one(const GdlIlpDevice *dev, int32_t nrows, int32_t ncols, int dens, int32_t npos,
			double wneg, int epochs)
{
	IlpCsr	   *m = random_csr(nrows, ncols, dens, npos, wneg);
	IlpTrainOut cpu,
				gpu;
	double		worst = 0.0;
	double	   *P1 = gdl_alloc(sizeof(double) * (nrows + 1));
	double	   *P2 = gdl_alloc(sizeof(double) * (nrows + 1));
	double		l1,
				l2 = 0.0,
				worstP = 0.0;
	GdlIlpDevProblem pr;
	GdlIlpDevSession *s;
	char		err[256] = "";

	gdl_ilp_register_device(NULL);
	ilp_train(m, npos, epochs, 0.1, &cpu);
	CHECK(!cpu.on_device);
	gdl_ilp_register_device(dev);
	gdl_ilp_set_device_mode(GDL_ILP_DEVICE_ALWAYS);
	gdl_ilp_timings.last_device_error[0] = '\0';
	ilp_train(m, npos, epochs, 0.1, &gpu);
	CHECK_MSG(gpu.on_device, "device training failed: %s", gdl_ilp_timings.last_device_error);
	gdl_ilp_register_device(NULL);
	if (!gpu.on_device)
		return;
	CHECK_MSG(cpu.epochs == gpu.epochs, "epochs %d vs %d", cpu.epochs, gpu.epochs);
	for (int32_t c = 0; c < ncols; c++)
		worst = fmax(worst, rel_diff(cpu.prob[c], gpu.prob[c]));
	CHECK_MSG(worst <= 1e-6, "%dx%d: probabilities differ by %g", nrows, ncols, worst);
	CHECK_MSG(rel_diff(cpu.loss, gpu.loss) <= 1e-6, "loss %.17g vs %.17g", cpu.loss, gpu.loss);

	/* forward at the trained probabilities */
	pr = (GdlIlpDevProblem) {
		.nrows = m->nrows, .ncols = m->ncols, .npos = npos, .wneg = m->wneg, .off = m->off, .idx = m->idx
	};
	l1 = ilp_loss_forward(m, npos, cpu.prob, P1);
	s = dev->create(&pr, err, sizeof(err));
	CHECK_MSG(s != NULL, "create: %s", err);
	if (s != NULL)
	{
		CHECK_MSG(dev->forward(s, cpu.prob, P2, &l2, err, sizeof(err)) == 0, "forward: %s", err);
		for (int32_t r = 0; r < nrows; r++)
			worstP = fmax(worstP, rel_diff(P1[r], P2[r]));
		CHECK_MSG(worstP <= 1e-12, "example probabilities differ by %g", worstP);
		CHECK_MSG(rel_diff(l1, l2) <= 1e-9, "forward loss %.17g vs %.17g", l1, l2);
		dev->destroy(s);
	}
	printf("  %d x %d, %lld entries: %d epochs, loss %.6f, max prob diff %.2g\n", nrows, ncols,
		   (long long) m->off[nrows], gpu.epochs, gpu.loss, worst);
}

/*
 * The CUDA module's training device ($GDL_CUDA_LIB, else the default path),
 * once a trivial session tells that a GPU works; NULL, said, when not.
 */
static const GdlIlpDevice *
load_device(void)
{
	GdlIlpDeviceEntryFn entry = (GdlIlpDeviceEntryFn)
		gdl_test_module_entry("test_ilp_gpu", getenv("GDL_CUDA_LIB"), GDL_ILP_DEVICE_ENTRY_SYMBOL);
	const GdlIlpDevice *dev = entry ? entry() : NULL;
	int64_t		off[2] = {0, 1};
	int32_t		idx[1] = {0};
	GdlIlpDevProblem pr = {.nrows = 1, .ncols = 1, .npos = 1, .wneg = 1.0, .off = off, .idx = idx};
	char		err[256] = "";
	GdlIlpDevSession *s;

	if (entry == NULL)
		return NULL;
	CHECK(dev != NULL && dev->abi == GDL_ILP_DEVICE_ABI);
	s = dev->create(&pr, err, sizeof(err));
	if (s == NULL)
	{
		printf("test_ilp_gpu: skipped (no GPU: %s)\n", err);
		return NULL;
	}
	dev->destroy(s);
	return dev;
}

int
main(void)
{
	const GdlIlpDevice *dev;

	gdl_test_host_install();
	dev = load_device();
	if (dev == NULL)
		return 0;

	compare_one(dev, 1, 1, 1, 1, 1.0, 50);
	compare_one(dev, 50, 7, 3, 10, 1.0, 200);
	compare_one(dev, 400, 120, 10, 100, 2.5, 200);
	compare_one(dev, 3000, 900, 40, 600, 1.0, 300);
	compare_one(dev, 20000, 5000, 200, 4000, 4.0, 200);
	compare_one(dev, 1000, 300, 5, 0, 1.0, 100);	/* negatives only */
	compare_one(dev, 1000, 300, 5, 1000, 1.0, 100);	/* positives only */

	/* gdl_ilp_learn's threshold: AUTO leaves a small matrix to the CPU */
	{
		IlpCsr	   *m = random_csr(30, 5, 3, 10, 1.0);
		IlpTrainOut o;

		gdl_ilp_register_device(dev);
		gdl_ilp_set_device_mode(GDL_ILP_DEVICE_AUTO);
		ilp_train(m, 10, 20, 0.1, &o);
		CHECK(!o.on_device);
		gdl_ilp_register_device(NULL);
	}
	return gdl_test_summary("test_ilp_gpu");
}
