/*
 * test_mine_gpu.c — rule mining on the GPU (cuda/mine.cu through
 * src/mine/gdl_mine_device.h) against the CPU: random graphs, sparse and
 * dense, with duplicates and self-loops, every body length and threshold
 * set, and a synthetic 1M-fact knowledge graph (100,000 entities, 100
 * relations, planted inverses and compositions) at max_body 2 and 3 must
 * give the very same rules with the very same measures.  Loads
 * ../../cuda/gpudl_cuda.so (or $GDL_CUDA_LIB, or the first argument);
 * without the module or a GPU it prints "skipped" and passes, as in CI.
 * GDL_MINE_GPU_SMALL=1 leaves out the 1M-fact graph.
 */
#include "test_util.h"
#include "../../src/mine/gdl_mine.h"
#include "../../src/mine/gdl_mine_device.h"
#include "../../src/mine/mine_int.h"

#include <pthread.h>

#include <string.h>
#include <time.h>

static uint64_t rng = 777;

/* The next number of this file's splitmix64 sequence (test_util.c). */
static uint64_t
next_rand(void)
{
	return gdl_test_splitmix(&rng);
}

/* R relations of about f random facts over n entities (self-loops, repeats). */
static GdlMineRelation *
random_rels(int n, int R, int64_t f)
{
	return gdl_test_mine_rels(&rng, n, R, f);
}

/*
 * The synthetic KG: E entities in 10 types, R relations of F facts; every
 * relation from 60% on is, for 90% of its facts, the inverse of an earlier
 * one or the subjects of one paired with the objects of another; the rest
 * random.
 */
static GdlMineRelation *
big_kg(int E, int R, int64_t F)
{
	GdlMineRelation *rels = gdl_alloc(sizeof(GdlMineRelation) * R);
	int			nbase = R * 6 / 10;
	int64_t		per = E / 10;

	for (int r = 0; r < R; r++)
	{
		GdlColumns *c = &rels[r].rows;
		int			ts = (int) (next_rand() % 10),
					td = (int) (next_rand() % 10);

		rels[r].name = gdl_sprintf("r%d", r);
		gdl_test_pair_columns(c, F);
		for (int64_t i = 0; i < F; i++)
		{
			c->cols[0][i] = ts * per + (int64_t) (next_rand() % per);
			c->cols[1][i] = td * per + (int64_t) (next_rand() % per);
		}
		if (r >= nbase)
		{
			const GdlColumns *a = &rels[next_rand() % nbase].rows;
			const GdlColumns *b = &rels[next_rand() % nbase].rows;

			for (int64_t i = 0; i < F * 9 / 10; i++)
			{
				if (r % 2)
				{
					/* inverse of a */
					c->cols[0][i] = a->cols[1][i];
					c->cols[1][i] = a->cols[0][i];
				}
				else
				{
					/* a's subject with b's object: shares both ends' degrees */
					c->cols[0][i] = a->cols[0][i];
					c->cols[1][i] = b->cols[1][i];
				}
			}
		}
	}
	return rels;
}

/* The module's problem for graph g, every rule up to max_body atoms. */
static GdlMineDevIn
dev_in(const GdlMineGraph *g, int max_body)
{
	GdlMineOptions o;
	GdlMineDevIn in;

	gdl_mine_options_init(&o);
	o.max_body = max_body;
	o.min_support = 1;
	o.min_head_coverage = 0;
	mine_device_input(g, &o, &in);
	return in;
}

/* Another session's small requests: device allocations and frees, which wait for the device. */
typedef struct Busy
{
	const GdlMineDevice *dev;
	GdlMineDevIn in;
	volatile bool done;
	int			runs;
} Busy;

static void *
busy_loop(void *arg)
{
	Busy	   *b = arg;

	while (!b->done)
	{
		GdlMineDevCand *out = NULL;
		int64_t		nout = 0;
		double		sec[3];
		char		err[256];

		if (b->dev->mine(&b->in, &out, &nout, sec, err, sizeof(err)) == 0)
			b->dev->mine_free(out);
		b->runs++;
	}
	return NULL;
}

/* Whether mining g raises (a small function: setjmp's locals stay simple). */
static bool
mine_raises(const GdlMineGraph *g, const GdlMineOptions *o)
{
	return GDL_TRY(gdl_mine(g, o)) != NULL;
}

/*
 * A cancel stops GPU mining of a dense graph (hours of paths; 130 s on the
 * H200 once) within a second, alone and while another thread makes CUDA
 * calls that wait for the device (the GPU service's other sessions).
 */
static void
check_stop(const GdlMineDevice *dev)
{
	GdlMineRelation *rels;
	GdlMineGraph *g,
			   *small;
	GdlMineOptions o;

	rng = 3;
	rels = random_rels(14, 55, 60);
	g = gdl_mine_graph_build(55, rels);
	small = gdl_mine_graph_build(3, random_rels(20, 3, 30));
	gdl_mine_options_init(&o);
	o.max_body = 3;
	o.min_head_coverage = 0;
	o.min_confidence = 0;
	o.device = GDL_DEVICE_GPU;
	for (int busy = 0; busy < 2; busy++)
	{
		Busy		b = {dev, dev_in(small, 2), false, 0};
		pthread_t	th;
		double		t0;
		bool		raised;

		if (busy)
			CHECK(pthread_create(&th, NULL, busy_loop, &b) == 0);
		t0 = gdl_test_now_s();
		gdl_test_interrupt_after(0.1);
		raised = mine_raises(g, &o);
		gdl_test_interrupt_after(0);
		if (busy)
		{
			b.done = true;
			pthread_join(th, NULL);
		}
		CHECK_MSG(raised, "dense graph%s: mining was not stopped", busy ? " (busy)" : "");
		CHECK_MSG(gdl_test_now_s() - t0 < 1.5, "dense graph%s: stopped after %.2f s (asked at 0.1 s)",
				  busy ? " (busy)" : "", gdl_test_now_s() - t0);
		printf("  stop%s: mining stopped %.0f ms after the cancel%s\n", busy ? " while busy" : "",
			   (gdl_test_now_s() - t0 - 0.1) * 1000, busy ? "" : "");
		if (busy)
			printf("  (the other thread ran %d small minings meanwhile)\n", b.runs);
	}
}

/* Mine g on the CPU and on the GPU; every rule and measure must agree. */
static void
compare(const GdlMineGraph *g, const GdlMineOptions *base, const char *what, bool timing)
{
	GdlMineOptions o = *base;
	GdlMineResult *c,
			   *d;
	double		t0 = gdl_test_now_s(),
				t1,
				t2;

	o.device = GDL_DEVICE_CPU;
	c = gdl_mine(g, &o);
	t1 = gdl_test_now_s();
	o.device = GDL_DEVICE_GPU;
	d = gdl_mine(g, &o);
	t2 = gdl_test_now_s();
	CHECK_MSG(d->device == GDL_DEVICE_GPU, "%s: the GPU did not mine: %s", what,
			  gdl_mine_device_last_error());
	gdl_test_mine_same(g, c, d, what, "gpu");
	if (timing)
		printf("  %s: %ld rules; cpu %.2fs, gpu %.2fs (support %.2fs, denominators %.2fs, upload %.2fs)\n",
			   what, (long) c->nrules, t1 - t0, t2 - t1, d->times.enumerate, d->times.measures,
			   d->times.index);
}

int
main(int argc, char **argv)
{
	const char *lib = argc > 1 ? argv[1] : getenv("GDL_CUDA_LIB");
	GdlMineDeviceEntryFn entry;
	const GdlMineDevice *dev;

	gdl_test_host_install();
	entry = (GdlMineDeviceEntryFn) gdl_test_module_entry("test_mine_gpu", lib, GDL_MINE_DEVICE_ENTRY_SYMBOL);
	if (entry == NULL)
		return 0;
	dev = entry();
	CHECK(dev != NULL && dev->abi == GDL_MINE_DEVICE_ABI);
	gdl_mine_register_device(dev);
	/* a trivial graph tells whether a GPU works */
	{
		GdlMineRelation *rels = random_rels(3, 1, 2);
		GdlMineGraph *g = gdl_mine_graph_build(1, rels);
		GdlMineOptions o;
		GdlMineResult *r;

		gdl_mine_options_init(&o);
		o.device = GDL_DEVICE_GPU;
		r = gdl_mine(g, &o);
		if (r->device != GDL_DEVICE_GPU)
		{
			printf("test_mine_gpu: skipped (no GPU: %s)\n", gdl_mine_device_last_error());
			return 0;
		}
		gdl_test_reset();
	}

	for (int seed = 0; seed < 40; seed++)
	{
		GdlTestMineSize sz = gdl_test_mine_size(seed, 5, 20, 30, 13);
		GdlMineGraph *g;
		GdlMineOptions o;
		char		what[80];

		rng = 5000 + seed;
		g = gdl_mine_graph_build(sz.R, random_rels(sz.n, sz.R, sz.f));
		gdl_mine_options_init(&o);
		o.max_body = 1 + seed % 3;
		if (seed % 4 == 0)
		{
			o.min_head_coverage = 0;
			o.min_confidence = 0;
		}
		if (seed % 7 == 3)
			o.target = seed % sz.R;
		/* with constants: the device's variable rules plus the CPU's constant ones */
		o.constants = seed % 3 == 1;
		snprintf(what, sizeof(what), "seed %d (%s, n %d, R %d, body %d%s)", seed,
				 sz.dense ? "dense" : "sparse", sz.n, sz.R, o.max_body, o.constants ? ", constants" : "");
		compare(g, &o, what, false);
		gdl_test_reset();
	}
	printf("  40 random graphs compared\n");
	check_stop(dev);
	gdl_test_reset();

	if (!getenv("GDL_MINE_GPU_SMALL"))
	{
		GdlMineRelation *rels;
		GdlMineGraph *g;
		GdlMineOptions o;

		rng = 20261201;
		rels = big_kg(100000, 100, 10000);
		g = gdl_mine_graph_build(100, rels);
		gdl_mine_options_init(&o);
		o.max_body = 2;
		compare(g, &o, "1M facts, body 2", true);
		o.max_body = 3;
		compare(g, &o, "1M facts, body 3", true);
		o.max_body = 2;
		o.constants = true;
		o.target = 7;
		compare(g, &o, "1M facts, body 2, constants, one target", true);
		gdl_test_reset();
	}
	return gdl_test_summary("test_mine_gpu");
}
