/*
 * bench_tc.c — benchmark of the CUDA backend through gdl_backend.h alone:
 * transitive closure and same generation on an edge list, driven as the
 * semi-naive engine drives a backend (join, dedup, absorb per round), with
 * per-phase wall times.  Not part of the module build; build it beside the
 * module with
 *
 *     gcc -O2 -std=gnu11 -Isrc -o cuda/bench_tc cuda/bench_tc.c -ldl
 *     cuda/bench_tc cuda/gpudl_cuda.so graph.txt [tc|sg] [runs]
 *
 * Every operation of the backend returns with its row count known on the
 * host, so host timers around each call measure the device work.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/gdl_backend.h"

static const GdlBackend *bk;
static void *ctx;

/* Phase timers of one run, milliseconds. */
typedef struct Times
{
	double		upload,
				join,
				map,
				dedup,
				absorb,
				release,
				total;
	int64_t		rounds,
				tuples,
				joined;
} Times;

/* Wall clock in milliseconds. */
static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Stop on a failed backend call. */
static void
ok(int s, const char *what)
{
	if (s != GDL_BK_OK)
	{
		fprintf(stderr, "%s failed (%d): %s\n", what, s, bk->last_error(ctx));
		exit(1);
	}
}

/* Read a tab-separated edge list. */
static int64_t
read_edges(const char *path, int64_t **src, int64_t **dst)
{
	FILE	   *f = fopen(path, "r");
	int64_t		n = 0,
				cap = 1 << 16;
	long long	a,
				b;

	if (!f)
	{
		perror(path);
		exit(1);
	}
	*src = malloc(sizeof(int64_t) * cap);
	*dst = malloc(sizeof(int64_t) * cap);
	while (fscanf(f, "%lld %lld", &a, &b) == 2)
	{
		if (n == cap)
		{
			cap *= 2;
			*src = realloc(*src, sizeof(int64_t) * cap);
			*dst = realloc(*dst, sizeof(int64_t) * cap);
		}
		(*src)[n] = a;
		(*dst)[n] = b;
		n++;
	}
	fclose(f);
	return n;
}

/* Absorb a candidate set into full; replaces full and delta. */
static void
absorb(GdlBkRel **full, GdlBkRel **delta, GdlBkRel *cand, Times *t)
{
	GdlBkRel   *nf,
			   *nd;
	double		t0 = now_ms();

	ok(bk->absorb(ctx, *full, cand, &nf, &nd), "absorb");
	t->absorb += now_ms() - t0;
	t0 = now_ms();
	bk->release(ctx, cand);
	if (*delta != *full)
		bk->release(ctx, *delta);
	bk->release(ctx, *full);
	t->release += now_ms() - t0;
	*full = nf;
	*delta = nd;
}

/* Dedup one bag (released). */
static GdlBkRel *
dedup1(GdlBkRel *bag, Times *t)
{
	GdlBkRel   *set;
	double		t0 = now_ms();

	ok(bk->dedup(ctx, 1, &bag, &set), "dedup");
	t->dedup += now_ms() - t0;
	bk->release(ctx, bag);
	return set;
}

/* One evaluation of TC or SG; times in t. */
static void
run(const char *prog, int64_t n, int64_t *src, int64_t *dst, Times *t)
{
	const int64_t *cols[2] = {src, dst};
	GdlBkRel   *edge,
			   *full,
			   *delta,
			   *j,
			   *j2;
	int64_t		dn = 0;
	double		t0 = now_ms(),
				t1;
	bool		tc = strcmp(prog, "tc") == 0;

	memset(t, 0, sizeof(*t));
	ok(bk->upload(ctx, 2, n, cols, &edge), "upload");
	t->upload = now_ms() - t0;
	if (tc)
	{
		t1 = now_ms();
		ok(bk->dedup(ctx, 1, &edge, &full), "dedup");
		t->dedup += now_ms() - t1;
	}
	else
	{
		int			k0 = 0;
		GdlBkColRef o[2] = {{0, 1}, {1, 1}};
		GdlBkInsn	ne[3] = {{GDL_BC_COL, 0, 0}, {GDL_BC_COL, 1, 0}, {GDL_BC_NE, 0, 0}};
		GdlBkInsn	c0 = {GDL_BC_COL, 0, 0},
					c1 = {GDL_BC_COL, 1, 0};
		GdlBkExpr	filt = {3, ne},
					outs[2] = {{1, &c0}, {1, &c1}};

		t1 = now_ms();
		ok(bk->join(ctx, edge, edge, 1, &k0, &k0, 2, o, &j), "join");
		t->join += now_ms() - t1;
		t1 = now_ms();
		ok(bk->map(ctx, j, 1, &filt, 2, outs, &j2), "map");
		t->map += now_ms() - t1;
		bk->release(ctx, j);
		full = dedup1(j2, t);
	}
	delta = full;
	for (;;)
	{
		ok(bk->size(ctx, delta, &dn), "size");
		if (dn == 0)
			break;
		t->rounds++;
		t1 = now_ms();
		if (tc)
		{
			int			lk = 1,
						rk = 0;
			GdlBkColRef o[2] = {{0, 0}, {1, 1}};

			ok(bk->join(ctx, delta, edge, 1, &lk, &rk, 2, o, &j), "join");
		}
		else
		{
			int			k0 = 0,
						k1 = 1;
			GdlBkColRef o1[2] = {{1, 1}, {0, 1}};
			GdlBkColRef o2[2] = {{0, 0}, {1, 1}};

			ok(bk->join(ctx, delta, edge, 1, &k0, &k0, 2, o1, &j2), "join");
			ok(bk->join(ctx, j2, edge, 1, &k1, &k0, 2, o2, &j), "join");
			bk->release(ctx, j2);
		}
		t->join += now_ms() - t1;
		ok(bk->size(ctx, j, &dn), "size");
		t->joined += dn;
		absorb(&full, &delta, dedup1(j, t), t);
	}
	ok(bk->size(ctx, full, &t->tuples), "size");
	if (delta != full)
		bk->release(ctx, delta);
	bk->release(ctx, full);
	bk->release(ctx, edge);
	t->total = now_ms() - t0;
}

/* Median of a small array (sorted in place). */
static int
cmp_d(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	const char *lib = argc > 1 ? argv[1] : "cuda/gpudl_cuda.so";
	const char *graph = argc > 2 ? argv[2] : NULL;
	const char *prog = argc > 3 ? argv[3] : "tc";
	int			runs = argc > 4 ? atoi(argv[4]) : 5;
	void	   *h;
	GdlBackendEntryFn entry;
	const char *err = NULL;
	int64_t    *src,
			   *dst,
				n;
	double		totals[64];
	Times		t,
				best;
	GdlBkCounters cnt;

	if (!graph || runs < 1 || runs > 64)
	{
		fprintf(stderr, "usage: %s module.so graph.txt [tc|sg] [runs]\n", argv[0]);
		return 2;
	}
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h || !(entry = (GdlBackendEntryFn) dlsym(h, GDL_BACKEND_ENTRY_SYMBOL)))
	{
		fprintf(stderr, "cannot load %s: %s\n", lib, dlerror());
		return 1;
	}
	bk = entry();
	n = read_edges(graph, &src, &dst);
	ctx = bk->ctx_create(NULL, &err);
	if (!ctx)
	{
		fprintf(stderr, "ctx_create: %s\n", err);
		return 1;
	}
	run(prog, n, src, dst, &t);	/* warm-up: module load, pool growth */
	best = t;
	for (int r = 0; r < runs; r++)
	{
		run(prog, n, src, dst, &t);
		totals[r] = t.total;
		if (t.total <= best.total || r == 0)
			best = t;
	}
	qsort(totals, runs, sizeof(double), cmp_d);
	bk->counters(ctx, &cnt);
	printf("%s %s: %lld edges, %lld tuples, %lld rounds, %lld joined rows\n",
		   prog, graph, (long long) n, (long long) best.tuples, (long long) best.rounds,
		   (long long) best.joined);
	printf("  median %.1f ms, min %.1f ms, max %.1f ms over %d runs (after one warm-up)\n",
		   totals[runs / 2], totals[0], totals[runs - 1], runs);
	printf("  fastest run by phase (ms): upload %.2f, join %.2f, map %.2f, dedup %.2f, absorb %.2f, release %.2f\n",
		   best.upload, best.join, best.map, best.dedup, best.absorb, best.release);
	printf("  device peak %.1f MB, %lld transfers\n", cnt.peak_bytes / 1048576.0,
		   (long long) cnt.transfers);
	bk->ctx_destroy(ctx);
	return 0;
}
