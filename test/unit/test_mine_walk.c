/*
 * test_mine_walk.c — the GPU miner's walk (cuda/mine_walk.cuh, the code of
 * cuda/mine.cu's kernels) run on the CPU, where there is no GPU.
 *
 * A mining device whose mine() does what cuda/mine.cu's driver does —
 * frontier bounds (md_need), pass 1 into a support table of
 * (body << 14 | head) pairs, the thresholds (md_pair_passes), pass 2's
 * tables (md_pass2_tables, md_set_build), pass 2 — with one "thread" per
 * entity run in turn, each with exactly its own frontier bound as scratch
 * (so a bound too small shows).  Registered through gdl_mine_device.h, it
 * must give gdl_mine the very rules and measures of the CPU miner on random
 * graphs, sparse and dense, with duplicates and self-loops.
 */
#include "test_util.h"
#include "../../src/mine/gdl_mine.h"
#include "../../src/mine/gdl_mine_device.h"
#include "../../src/mine/mine_int.h"
#include "../../cuda/mine_walk.cuh"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>

static uint64_t rng = 99;		/* the random graphs' splitmix64 state */
static int64_t emu_retries;		/* support tables grown */
static const volatile int *emu_stop;	/* the walks' stop flag (NULL: none) */

/*
 * Run a pass over the entities ents[0..n) as the GPU does, in work items
 * (md_items: an entity's parts), one at a time, each with exactly its
 * entity's bound as scratch.
 */
static void
emu_pass(MdRun *run, const GdlMineDevIn *in, const int32_t *ents, int64_t n, const int64_t *need,
		 md_ull *scratch)
{
	int64_t		m = md_items_count(ents, n, in->aoff, in->sig, in->max_body);
	int32_t    *xs = malloc(sizeof(int32_t) * (m + 1));
	int32_t    *parts = malloc(sizeof(int32_t) * (m + 1));
	int64_t    *ineed = malloc(sizeof(int64_t) * (m + 1));

	md_items(ents, n, in->aoff, in->sig, in->max_body, need, xs, parts, ineed);
	for (int64_t i = 0; i < m; i++)
	{
		run->xs = xs + i;
		run->parts = parts + i;
		run->nx = 1;
		run->scratch = scratch;
		run->cap = ineed[i];
		md_walk_x(run, 0);
	}
	free(xs);
	free(parts);
	free(ineed);
}

/* Order of (key, head) candidates. */
static int
cmp_cand(const void *a, const void *b)
{
	const GdlMineDevCand *x = a,
			   *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->head < y->head ? -1 : x->head > y->head;
}

/* The emulated device's mine(): cuda/mine.cu's md_mine on the CPU. */
static int
emu_mine(const GdlMineDevIn *in, GdlMineDevCand **out, int64_t *nout, double seconds[3],
		 char *errmsg, size_t errlen)
{
	int32_t		n = in->nent;
	MdRun		run;
	int64_t    *d2 = calloc(n + 1, sizeof(int64_t));
	int64_t    *need = calloc(n + 1, sizeof(int64_t));
	int32_t    *xs = calloc(n + 1, sizeof(int32_t));
	int64_t		nx = 0,
				maxneed = 1,
				nc = 0;
	md_ull	   *scratch;
	int			err = 0;
	GdlMineDevCand *c;
	uint64_t	cap;

	memset(&run, 0, sizeof(run));
	run.g.nent = n;
	run.g.nrels = in->nrels;
	run.g.nlinks = in->nlinks;
	run.g.aoff = in->aoff;
	run.g.asig = in->sig;
	run.g.anb = in->nb;
	run.g.bnb = in->bnb;
	run.g.bsig = in->bsig;
	run.g.ppoff = in->ppoff;
	run.g.ppa = in->ppa;
	run.g.ppb = in->ppb;
	run.g.ppz = in->ppz;
	run.g.cpoff = in->cpoff;
	run.g.cpa = in->cpa;
	run.g.cpb = in->cpb;
	run.maxb = in->max_body;
	run.target = in->target;
	run.err = &err;
	run.stop = emu_stop;
	md_need(n, in->aoff, in->nb, in->ppoff, in->max_body, d2, need);
	for (int32_t x = 0; x < n; x++)
	{
		bool		head = false;

		maxneed = need[x] > maxneed ? need[x] : maxneed;
		for (int64_t k = in->aoff[x]; k < in->aoff[x + 1] && !head; k++)
			head = (in->sig[k] & 1) == 0 && (in->target < 0 || in->sig[k] == 2 * in->target);
		if (head)
			xs[nx++] = x;
	}
	scratch = calloc(3 * maxneed, sizeof(md_ull));

	/* pass 1, the table grown while too full (small to start: retries happen) */
	for (cap = 1024;; cap *= 4)
	{
		md_ull		used = 0;

		run.pass = 1;
		run.hkeys = calloc(cap, sizeof(md_ull));
		run.hvals = calloc(cap, sizeof(md_ull));
		run.hmask = cap - 1;
		run.hused = &used;
		run.hlimit = cap / 2;
		err = 0;
		emu_pass(&run, in, xs, nx, need, scratch);
		if (emu_stop != NULL && *emu_stop)
		{
			snprintf(errmsg, errlen, "cancelled");
			free(run.hkeys);
			free(run.hvals);
			free(scratch);
			free(d2);
			free(need);
			free(xs);
			return 1;
		}
		if (err == 2)
		{
			snprintf(errmsg, errlen, "a frontier outgrew its bound");
			return 1;
		}
		if (err == 0)
			break;
		free(run.hkeys);
		free(run.hvals);
		emu_retries++;
	}
	c = malloc(sizeof(GdlMineDevCand) * (cap + 1));
	for (uint64_t i = 0; i < cap; i++)
		if (run.hkeys[i] != 0 &&
			md_pair_passes(run.hkeys[i] & ~MD_SET_BIT, run.hvals[i], in->nfacts, in->min_support,
						   in->min_head_coverage))
		{
			md_ull		pair = run.hkeys[i] & ~MD_SET_BIT;

			c[nc].key = pair >> MD_HEAD_BITS;
			c[nc].head = (int32_t) (pair & ((1u << MD_HEAD_BITS) - 1));
			c[nc].support = (int64_t) run.hvals[i];
			c[nc].body_size = c[nc].pca_body_size = 0;
			nc++;
		}
	free(run.hkeys);
	free(run.hvals);
	qsort(c, nc, sizeof(GdlMineDevCand), cmp_cand);

	/* pass 2 */
	if (nc > 0)
	{
		uint64_t   *ckey = malloc(sizeof(uint64_t) * nc);
		int32_t    *chead = malloc(sizeof(int32_t) * nc);
		unsigned char *np1 = calloc(2 * in->nrels + 1, 1);
		unsigned char *np2p = calloc(2 * in->nrels + 1, 1);
		uint64_t   *bodies = NULL,
				   *p3 = NULL,
				   *pp = NULL;
		int64_t    *bcoff = NULL,
				   *bidx = NULL,
				   *dummy = NULL,
					nb = 0,
					np3 = 0,
					npp = 0;
		md_ull	   *bkeys = NULL,
				   *p3keys = NULL,
				   *ppkeys = NULL;
		int32_t    *all = malloc(sizeof(int32_t) * (n + 1));

		for (int64_t i = 0; i < nc; i++)
		{
			ckey[i] = c[i].key;
			chead[i] = c[i].head;
		}
		if (!md_pass2_tables(ckey, nc, in->nrels, &bodies, &bcoff, &nb, &p3, &np3, &pp, &npp, np1, np2p,
							 &run.shapes) ||
			!md_set_build(bodies, nb, &bkeys, &bidx, &run.bmask))
			abort();
		run.bmask--;
		if (!md_set_build(p3, np3, &p3keys, &dummy, &run.p3mask))
			abort();
		run.p3mask--;
		free(dummy);
		if (!md_set_build(pp, npp, &ppkeys, &dummy, &run.ppmask))
			abort();
		run.ppmask--;
		free(dummy);
		run.pass = 2;
		run.bkeys = bkeys;
		run.bidx = bidx;
		run.bcoff = bcoff;
		run.chead = chead;
		run.bcnt = calloc(nb + 1, sizeof(md_ull));
		run.pcnt = calloc(nc + 1, sizeof(md_ull));
		run.need_p1 = np1;
		run.need_p2p = np2p;
		run.p3keys = p3keys;
		run.ppkeys = ppkeys;
		for (int32_t x = 0; x < n; x++)
			all[x] = x;
		err = 0;
		emu_pass(&run, in, all, n, need, scratch);
		if (err != 0)
		{
			snprintf(errmsg, errlen, "a frontier outgrew its bound");
			return 1;
		}
		for (int64_t b = 0; b < nb; b++)
			for (int64_t i = bcoff[b]; i < bcoff[b + 1]; i++)
			{
				c[i].body_size = (int64_t) run.bcnt[b];
				c[i].pca_body_size = (int64_t) run.pcnt[i];
			}
		free(ckey);
		free(chead);
		free(np1);
		free(np2p);
		free(bodies);
		free(p3);
		free(pp);
		free(bcoff);
		free(bidx);
		free(bkeys);
		free(p3keys);
		free(ppkeys);
		free(run.bcnt);
		free(run.pcnt);
		free(all);
	}
	for (int64_t i = 0; i < nc; i++)
		c[i].key = md_host_key(c[i].key);
	free(d2);
	free(need);
	free(xs);
	free(scratch);
	seconds[0] = seconds[1] = seconds[2] = 0;
	*out = c;
	*nout = nc;
	return 0;
}

static void
emu_free(GdlMineDevCand *p)
{
	free(p);
}

static const GdlMineDevice emu_device = {GDL_MINE_DEVICE_ABI, "emulated", emu_mine, emu_free};

/* R relations of about f random facts over n entities (self-loops, repeats). */
static GdlMineRelation *
random_rels(int n, int R, int64_t f)
{
	return gdl_test_mine_rels(&rng, n, R, f);
}

/* The flag a "cancel" raises after 0.3 s (as cuda/mine.cu's watcher). */
static volatile int stop_flag;
static double stop_raised_at;

static void *
raise_later(void *arg)
{
	(void) arg;
	usleep(300000);
	stop_raised_at = gdl_test_now_s();
	stop_flag = 1;
	return NULL;
}

/*
 * A stopped walk leaves at once: a dense graph (14 entities, 55 relations,
 * max_body 3: minutes of walking) with the stop flag raised before the
 * walks and while they run.  Before, a walk that had seen the flag (or a
 * full support table) still ran through its loops and sorts, each group
 * returning at once: 5-150 ms an item on a CPU core, seconds on a GPU
 * thread, and a cancelled GPU mining went on for as long.
 */
static void
check_stopped_walk(void)
{
	GdlMineGraph *g;
	GdlMineOptions o;
	GdlMineDevIn in;

	rng = 3;
	g = gdl_mine_graph_build(55, random_rels(14, 55, 60));
	gdl_mine_options_init(&o);
	o.max_body = 3;
	o.min_support = 1;
	o.min_head_coverage = 0;
	mine_device_input(g, &o, &in);
	for (int later = 0; later < 2; later++)
	{
		GdlMineDevCand *out = NULL;
		int64_t		nout = 0;
		double		sec[3],
					t0,
					took;
		char		err[128] = "";
		pthread_t	th;
		int			rc;

		stop_flag = later ? 0 : 1;
		emu_stop = &stop_flag;
		t0 = stop_raised_at = gdl_test_now_s();
		if (later)
			CHECK(pthread_create(&th, NULL, raise_later, NULL) == 0);
		rc = emu_mine(&in, &out, &nout, sec, err, sizeof(err));
		took = gdl_test_now_s() - stop_raised_at;
		if (later)
			pthread_join(th, NULL);
		emu_stop = NULL;
		CHECK_MSG(rc != 0 && strcmp(err, "cancelled") == 0, "stopped walk: rc %d (%s)", rc, err);
		CHECK_MSG(took < 0.5, "stopped walk (%s): out %.3f s after the flag",
				  later ? "raised while walking" : "raised before", took);
		printf("  a stopped walk of a dense graph (flag raised %s): out %.3f s after it (%.2f s in all)\n",
			   later ? "while walking" : "before", took, gdl_test_now_s() - t0);
	}
	gdl_test_reset();
}

int
main(void)
{
	int64_t		nrules = 0;

	gdl_test_host_install();
	gdl_mine_register_device(&emu_device);
	for (int seed = 0; seed < 48; seed++)
	{
		GdlTestMineSize sz = gdl_test_mine_size(seed, 4, 11, 20, 4);
		GdlMineGraph *g;
		GdlMineOptions o;
		GdlMineResult *c,
				   *d;
		char		what[32];

		rng = 7000 + seed;
		g = gdl_mine_graph_build(sz.R, random_rels(sz.n, sz.R, sz.f));
		gdl_mine_options_init(&o);
		gdl_test_mine_vary(&o, seed, 24, 4);
		if (seed % 7 == 3)
			o.target = seed % sz.R;
		/* with constants: the device path adds the CPU's constant rules */
		o.constants = seed % 3 == 2;
		c = gdl_mine(g, &o);
		o.device = GDL_DEVICE_GPU;
		d = gdl_mine(g, &o);
		CHECK_MSG(d->device == GDL_DEVICE_GPU, "seed %d: %s", seed, gdl_mine_device_last_error());
		snprintf(what, sizeof(what), "seed %d", seed);
		gdl_test_mine_same(g, c, d, what, "walk");
		nrules += c->nrules;
		gdl_test_reset();
	}
	printf("  48 graphs, %ld rules agree; support tables grown %ld times\n", (long) nrules,
		   (long) emu_retries);
	check_stopped_walk();
	gdl_mine_register_device(NULL);
	return gdl_test_summary("test_mine_walk");
}
