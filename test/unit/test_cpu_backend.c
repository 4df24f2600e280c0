/*
 * test_cpu_backend.c — every operation of the CPU backend (gdl_backend.h)
 * against a naive row-at-a-time reference on random relations: packed and
 * wide layouts (small, negative and 64-bit wide value ranges), one and
 * several threads, small and large inputs.
 */
#include "test_util.h"
#include "test_rows.h"

#include <string.h>

#include "../../src/exec/gdl_backend.h"
#include "../../src/exec/gdl_engine.h"



static const GdlBackend *bk;
static void *ctx;
static uint64_t rng_state = 88172645463325252ULL;

/* The next number of this file's xorshift64 sequence (test_util.c). */
static uint64_t
rnd(void)
{
	return gdl_test_xorshift(&rng_state);
}

/* Random value in one of a few range classes. */
static int64_t
rnd_val(int cls, int64_t range)
{
	switch (cls)
	{
		case 0:
			return (int64_t) (rnd() % (uint64_t) range);
		case 1:
			return (int64_t) (rnd() % (uint64_t) range) - range / 2;
		default:
			/* wide: big values, few distinct */
			return (int64_t) ((rnd() % (uint64_t) range) * 0x10000000001LL) ^ (int64_t) (rnd() % 2 ? INT64_MIN : 0);
	}
}

/* Random rows (host rows: test_rows.h). */
static Rows
rows_random(int arity, int64_t n, int cls, int64_t range)
{
	return rows_random_of(arity, n, rnd_val, cls, range);
}

/* Upload host rows. */
static GdlBkRel *
upload(const Rows *r)
{
	int64_t    *cols[GDL_BK_MAX_ARITY];
	GdlBkRel   *rel = NULL;
	int			c;
	int64_t		i;

	for (c = 0; c < r->arity; c++)
	{
		cols[c] = malloc(sizeof(int64_t) * (r->n + 1));
		for (i = 0; i < r->n; i++)
			cols[c][i] = r->v[i * r->arity + c];
	}
	CHECK(bk->upload(ctx, r->arity, r->n, (const int64_t *const *) cols, &rel) == GDL_BK_OK);
	for (c = 0; c < r->arity; c++)
		free(cols[c]);
	return rel;
}

/* Download into host rows. */
static Rows
download(GdlBkRel *rel, int arity)
{
	Rows		r;
	int64_t    *cols[GDL_BK_MAX_ARITY];
	int			c;
	int64_t		i;

	r.arity = arity;
	CHECK(bk->size(ctx, rel, &r.n) == GDL_BK_OK);
	r.v = malloc(sizeof(int64_t) * (r.n * arity + 1));
	for (c = 0; c < arity; c++)
		cols[c] = malloc(sizeof(int64_t) * (r.n + 1));
	CHECK(bk->download(ctx, rel, cols) == GDL_BK_OK);
	for (c = 0; c < arity; c++)
	{
		for (i = 0; i < r.n; i++)
			r.v[i * arity + c] = cols[c][i];
		free(cols[c]);
	}
	return r;
}

/* Sort rows; with 'uniq' also remove duplicates. */
static void
rows_norm(Rows *r, bool uniq)
{
	int64_t		i,
				m = 0;

	rows_cmp_arity = r->arity;
	if (r->arity == 0)
	{
		if (uniq && r->n > 1)
			r->n = 1;
		return;
	}
	qsort(r->v, r->n, sizeof(int64_t) * r->arity, rows_cmp);
	if (!uniq)
		return;
	for (i = 0; i < r->n; i++)
		if (m == 0 || rows_cmp(r->v + i * r->arity, r->v + (m - 1) * r->arity) != 0)
		{
			memmove(r->v + m * r->arity, r->v + i * r->arity, sizeof(int64_t) * r->arity);
			m++;
		}
	r->n = m;
}

/* Are two row sets equal (after normalising both)? */
static bool
rows_equal(Rows *a, Rows *b, bool uniq)
{
	rows_norm(a, uniq);
	rows_norm(b, uniq);
	if (a->n != b->n || a->arity != b->arity)
	{
		fprintf(stderr, "  rows differ: %lld vs %lld rows\n", (long long) a->n, (long long) b->n);
		return false;
	}
	return a->n == 0 || a->arity == 0 ||
		memcmp(a->v, b->v, sizeof(int64_t) * a->n * a->arity) == 0;
}

/* Is a downloaded relation a set (no duplicate rows)? */
static bool
rows_unique(Rows *r)
{
	int64_t		n = r->n;

	rows_norm(r, true);
	return r->n == n;
}

/* Concatenate rows (same arity). */
static Rows
rows_concat(const Rows *a, const Rows *b)
{
	Rows		r;

	r.arity = a->arity;
	r.n = a->n + b->n;
	r.v = malloc(sizeof(int64_t) * (r.n * r.arity + 1));
	if (a->n > 0)				/* memcpy from NULL is undefined even for 0 bytes */
		memcpy(r.v, a->v, sizeof(int64_t) * a->n * a->arity);
	if (b->n > 0)
		memcpy(r.v + a->n * a->arity, b->v, sizeof(int64_t) * b->n * b->arity);
	return r;
}

/* Set from host rows (upload + dedup). */
static GdlBkRel *
upload_set(const Rows *r)
{
	GdlBkRel   *bag = upload(r),
			   *set = NULL;

	CHECK(bk->dedup(ctx, 1, &bag, &set) == GDL_BK_OK);
	bk->release(ctx, bag);
	return set;
}

/* dedup of two bags against the reference. */
static void
test_dedup(int arity, int64_t n, int cls, int64_t range)
{
	Rows		a = rows_random(arity, n, cls, range),
				b = rows_random(arity, n / 3, cls, range);
	GdlBkRel   *in[2];
	GdlBkRel   *out = NULL;
	Rows		got,
				ref;

	in[0] = upload(&a);
	in[1] = upload(&b);
	CHECK(bk->dedup(ctx, 2, in, &out) == GDL_BK_OK);
	got = download(out, arity);
	ref = rows_concat(&a, &b);
	CHECK_MSG(rows_equal(&got, &ref, true), "dedup arity %d n %lld cls %d", arity, (long long) n, cls);
	/* dedup of a set is itself */
	{
		GdlBkRel   *again = NULL;
		Rows		g2;

		CHECK(bk->dedup(ctx, 1, &out, &again) == GDL_BK_OK);
		g2 = download(again, arity);
		CHECK(rows_equal(&g2, &got, false));
		bk->release(ctx, again);
		free(g2.v);
	}
	bk->release(ctx, in[0]);
	bk->release(ctx, in[1]);
	bk->release(ctx, out);
	free(a.v);
	free(b.v);
	free(got.v);
	free(ref.v);
}

/* Is row x (arity) in sorted unique rows r? */
static bool
rows_contains(const Rows *r, const int64_t *x)
{
	rows_cmp_arity = r->arity;
	return r->n > 0 && bsearch(x, r->v, r->n, sizeof(int64_t) * r->arity, rows_cmp) != NULL;
}

/* difference, merge and absorb against the reference. */
static void
test_setops(int arity, int64_t na, int64_t nb, int cls, int cls2, int64_t range)
{
	Rows		a = rows_random(arity, na, cls, range),
				b = rows_random(arity, nb, cls2, range);
	GdlBkRel   *A,
			   *B,
			   *D = NULL,
			   *M = NULL,
			   *NF = NULL,
			   *ND = NULL;
	Rows		gd,
				gm,
				gnf,
				gnd,
				rd,
				rm;
	int64_t		i;

	/* share some rows */
	for (i = 0; i < nb / 2 && i < na; i++)
		memcpy(b.v + i * arity, a.v + (rnd() % na) * arity, sizeof(int64_t) * arity);
	A = upload_set(&a);
	B = upload_set(&b);
	rows_norm(&a, true);
	rows_norm(&b, true);
	CHECK(bk->difference(ctx, A, B, &D) == GDL_BK_OK);
	CHECK(bk->merge(ctx, A, B, &M) == GDL_BK_OK);
	CHECK(bk->absorb(ctx, A, B, &NF, &ND) == GDL_BK_OK);
	rd.arity = arity;
	rd.n = 0;
	rd.v = malloc(sizeof(int64_t) * (a.n * arity + 1));
	for (i = 0; i < a.n; i++)
		if (!rows_contains(&b, a.v + i * arity))
			memcpy(rd.v + (rd.n++) * arity, a.v + i * arity, sizeof(int64_t) * arity);
	rm = rows_concat(&a, &b);
	gd = download(D, arity);
	gm = download(M, arity);
	gnf = download(NF, arity);
	gnd = download(ND, arity);
	CHECK(rows_unique(&gd));
	CHECK(rows_unique(&gm));
	CHECK_MSG(rows_equal(&gd, &rd, true), "difference arity %d cls %d/%d", arity, cls, cls2);
	CHECK_MSG(rows_equal(&gm, &rm, true), "merge arity %d cls %d/%d", arity, cls, cls2);
	CHECK_MSG(rows_equal(&gnf, &rm, true), "absorb full arity %d", arity);
	/* absorb's delta = B \ A */
	free(rd.v);
	rd.n = 0;
	rd.v = malloc(sizeof(int64_t) * (b.n * arity + 1));
	for (i = 0; i < b.n; i++)
		if (!rows_contains(&a, b.v + i * arity))
			memcpy(rd.v + (rd.n++) * arity, b.v + i * arity, sizeof(int64_t) * arity);
	CHECK_MSG(rows_equal(&gnd, &rd, true), "absorb delta arity %d cls %d/%d", arity, cls, cls2);
	/* set ops accept their own results */
	{
		GdlBkRel   *X = NULL;

		CHECK(bk->difference(ctx, NF, ND, &X) == GDL_BK_OK);
		bk->release(ctx, X);
	}
	bk->release(ctx, A);
	bk->release(ctx, B);
	bk->release(ctx, D);
	bk->release(ctx, M);
	bk->release(ctx, NF);
	bk->release(ctx, ND);
	free(a.v);
	free(b.v);
	free(gd.v);
	free(gm.v);
	free(gnf.v);
	free(gnd.v);
	free(rd.v);
	free(rm.v);
}

/* join and antijoin against the reference (nested loops). */
static void
test_join(int la, int ra, int nkeys, int64_t nl, int64_t nr, int cls, int64_t range, bool lset)
{
	Rows		l = rows_random(la, nl, cls, range),
				r = rows_random(ra, nr, cls, range);
	int			lkeys[4],
				rkeys[4],
				k,
				nout = 0;
	GdlBkColRef out[8];
	GdlBkRel   *L,
			   *R,
			   *J = NULL,
			   *A = NULL;
	Rows		gj,
				ga,
				rj,
				rajr;
	int64_t		i,
				j;

	for (k = 0; k < nkeys; k++)
	{
		lkeys[k] = (int) (rnd() % la);
		rkeys[k] = (int) (rnd() % ra);
	}
	for (k = 0; k < la && nout < 8; k++)
		if (rnd() % 3)
		{
			out[nout].side = 0;
			out[nout++].col = k;
		}
	for (k = 0; k < ra && nout < 8; k++)
		if (rnd() % 2)
		{
			out[nout].side = 1;
			out[nout++].col = k;
		}
	L = lset ? upload_set(&l) : upload(&l);
	if (lset)
		rows_norm(&l, true);
	R = upload(&r);
	CHECK(bk->join(ctx, L, R, nkeys, lkeys, rkeys, nout, out, &J) == GDL_BK_OK);
	CHECK(bk->antijoin(ctx, L, R, nkeys, lkeys, rkeys, &A) == GDL_BK_OK);
	/* a second join reuses R's cached index */
	{
		GdlBkRel   *J2 = NULL;
		int64_t		n1,
					n2;

		CHECK(bk->join(ctx, L, R, nkeys, lkeys, rkeys, nout, out, &J2) == GDL_BK_OK);
		bk->size(ctx, J, &n1);
		bk->size(ctx, J2, &n2);
		CHECK(n1 == n2);
		CHECK(bk->join_count(ctx, L, R, nkeys, lkeys, rkeys, &n2) == GDL_BK_OK);
		CHECK(n1 == n2);
		bk->release(ctx, J2);
	}
	rj.arity = nout;
	rj.n = 0;
	rj.v = NULL;
	rajr.arity = la;
	rajr.n = 0;
	rajr.v = malloc(sizeof(int64_t) * (l.n * la + 1));
	{
		int64_t		cap = 1024;

		rj.v = malloc(sizeof(int64_t) * cap * (nout + 1));
		for (i = 0; i < l.n; i++)
		{
			bool		any = false;

			for (j = 0; j < r.n; j++)
			{
				for (k = 0; k < nkeys; k++)
					if (l.v[i * la + lkeys[k]] != r.v[j * ra + rkeys[k]])
						break;
				if (k < nkeys)
					continue;
				any = true;
				if (rj.n == cap)
				{
					cap *= 2;
					rj.v = realloc(rj.v, sizeof(int64_t) * cap * (nout + 1));
				}
				for (k = 0; k < nout; k++)
					rj.v[rj.n * nout + k] = out[k].side == 0 ? l.v[i * la + out[k].col] : r.v[j * ra + out[k].col];
				rj.n++;
			}
			if (!any)
				memcpy(rajr.v + (rajr.n++) * la, l.v + i * la, sizeof(int64_t) * la);
		}
	}
	gj = download(J, nout);
	ga = download(A, la);
	CHECK_MSG(rows_equal(&gj, &rj, false), "join %d/%d keys %d cls %d", la, ra, nkeys, cls);
	CHECK_MSG(rows_equal(&ga, &rajr, false), "antijoin %d/%d keys %d cls %d", la, ra, nkeys, cls);
	bk->release(ctx, L);
	bk->release(ctx, R);
	bk->release(ctx, J);
	bk->release(ctx, A);
	free(l.v);
	free(r.v);
	free(gj.v);
	free(ga.v);
	free(rj.v);
	free(rajr.v);
}

/* map: X > c filter, then (X + Y, Y, 7, X * 2) and a text rank output. */
static void
test_map(int64_t n, int cls, int64_t range)
{
	Rows		a = rows_random(2, n, cls, range);
	GdlBkRel   *A = upload(&a),
			   *M = NULL;
	GdlBkInsn	f1[] = {{GDL_BC_COL, 0, 0}, {GDL_BC_CONST, 0, 3}, {GDL_BC_GT, 0, 0}};
	GdlBkInsn	f2[] = {{GDL_BC_COL, 1, 0}, {GDL_BC_CONST, 0, 5}, {GDL_BC_MOD, 0, 0}, {GDL_BC_CONST, 0, 0}, {GDL_BC_NE, 0, 0}};
	GdlBkInsn	o1[] = {{GDL_BC_COL, 0, 0}, {GDL_BC_COL, 1, 0}, {GDL_BC_ADD, 0, 0}};
	GdlBkInsn	o2[] = {{GDL_BC_COL, 1, 0}};
	GdlBkInsn	o3[] = {{GDL_BC_CONST, 0, 7}};
	GdlBkInsn	o4[] = {{GDL_BC_COL, 0, 0}, {GDL_BC_CONST, 0, 2}, {GDL_BC_MUL, 0, 0}};
	GdlBkExpr	filt[2] = {{3, f1}, {5, f2}};
	GdlBkExpr	outs[4] = {{3, o1}, {1, o2}, {1, o3}, {3, o4}};
	Rows		got,
				ref;
	int64_t		i;

	CHECK(bk->map(ctx, A, 2, filt, 4, outs, &M) == GDL_BK_OK);
	got = download(M, 4);
	ref.arity = 4;
	ref.n = 0;
	ref.v = malloc(sizeof(int64_t) * (n * 4 + 1));
	for (i = 0; i < n; i++)
	{
		int64_t		x = a.v[2 * i],
					y = a.v[2 * i + 1];

		if (!(x > 3) || y % 5 == 0)
			continue;
		ref.v[ref.n * 4] = x + y;
		ref.v[ref.n * 4 + 1] = y;
		ref.v[ref.n * 4 + 2] = 7;
		ref.v[ref.n * 4 + 3] = x * 2;
		ref.n++;
	}
	CHECK_MSG(rows_equal(&got, &ref, false), "map n %lld cls %d", (long long) n, cls);
	bk->release(ctx, A);
	bk->release(ctx, M);
	free(a.v);
	free(got.v);
	free(ref.v);
}

/* map errors: division by zero only on rows that pass earlier filters; overflow. */
static void
test_map_errors(void)
{
	Rows		a = rows_random(2, 1000, 0, 10);
	GdlBkRel   *A,
			   *M = NULL;
	GdlBkInsn	nz[] = {{GDL_BC_COL, 1, 0}, {GDL_BC_CONST, 0, 0}, {GDL_BC_NE, 0, 0}};
	GdlBkInsn	dv[] = {{GDL_BC_COL, 0, 0}, {GDL_BC_COL, 1, 0}, {GDL_BC_DIV, 0, 0}};
	GdlBkInsn	big[] = {{GDL_BC_COL, 0, 0}, {GDL_BC_CONST, 0, INT64_MAX}, {GDL_BC_ADD, 0, 0}};
	GdlBkInsn	one[] = {{GDL_BC_CONST, 0, 1}};
	GdlBkExpr	f = {3, nz};
	GdlBkExpr	o = {3, dv};
	GdlBkExpr	ob = {3, big};
	GdlBkExpr	bad = {1, one};
	GdlBkInsn	under[] = {{GDL_BC_ADD, 0, 0}};
	GdlBkExpr	ou = {1, under};

	a.v[1] = 0;					/* make sure a zero divisor exists */
	a.v[0] = 5;
	A = upload(&a);
	CHECK(bk->map(ctx, A, 1, &f, 1, &o, &M) == GDL_BK_OK);
	bk->release(ctx, M);
	M = NULL;
	CHECK(bk->map(ctx, A, 0, NULL, 1, &o, &M) == GDL_BK_ERR_DIV_ZERO);
	CHECK(M == NULL);
	CHECK(strstr(bk->last_error(ctx), "division by zero") != NULL);
	CHECK(bk->map(ctx, A, 0, NULL, 1, &ob, &M) == GDL_BK_ERR_OVERFLOW);
	CHECK(bk->map(ctx, A, 0, NULL, 1, &ou, &M) == GDL_BK_ERR_INVALID);
	CHECK(bk->map(ctx, A, 1, &bad, 0, NULL, &M) == GDL_BK_OK);
	{
		int64_t		n;

		bk->size(ctx, M, &n);
		CHECK(n == 1000);
		bk->release(ctx, M);
	}
	bk->release(ctx, A);
	free(a.v);
}

/* aggregate: group by col 0, count, sum(col 1), min(col 2), max(col 2). */
static void
test_aggregate(int64_t n, int cls, int64_t range)
{
	Rows		a = rows_random(3, n, cls, range);
	GdlBkRel   *A = upload(&a),
			   *G = NULL;
	int			group[1] = {0};
	GdlBkAgg	aggs[4] = {{GDL_BK_AGG_COUNT, GDL_BK_VAL_INT, -1}, {GDL_BK_AGG_SUM, GDL_BK_VAL_INT, 1},
	{GDL_BK_AGG_MIN, GDL_BK_VAL_INT, 2}, {GDL_BK_AGG_MAX, GDL_BK_VAL_INT, 2}};
	Rows		got,
				ref;
	int64_t		i;

	if (cls == 2)
		for (i = 0; i < n; i++)
			a.v[3 * i + 1] %= 1000000;	/* keep sums in range */
	bk->release(ctx, A);
	A = upload(&a);
	CHECK(bk->aggregate(ctx, A, 1, group, 4, aggs, &G) == GDL_BK_OK);
	got = download(G, 5);
	rows_norm(&a, false);
	ref.arity = 5;
	ref.n = 0;
	ref.v = malloc(sizeof(int64_t) * (n * 5 + 1));
	for (i = 0; i < a.n; i++)
	{
		int64_t    *g = ref.v + (ref.n - 1) * 5;
		int64_t    *x = a.v + 3 * i;

		if (ref.n == 0 || g[0] != x[0])
		{
			g = ref.v + (ref.n++) * 5;
			g[0] = x[0];
			g[1] = 0;
			g[2] = 0;
			g[3] = x[2];
			g[4] = x[2];
		}
		g[1]++;
		g[2] += x[1];
		if (x[2] < g[3])
			g[3] = x[2];
		if (x[2] > g[4])
			g[4] = x[2];
	}
	CHECK_MSG(rows_equal(&got, &ref, false), "aggregate n %lld cls %d", (long long) n, cls);
	CHECK(rows_unique(&got));
	bk->release(ctx, A);
	bk->release(ctx, G);
	free(a.v);
	free(got.v);
	free(ref.v);
	/* no input rows: no output row, also without groups */
	{
		GdlBkRel   *E,
				   *R = NULL;
		Rows		e = {3, 0, NULL};
		int64_t		cnt;

		E = upload(&e);
		CHECK(bk->aggregate(ctx, E, 0, group, 1, aggs, &R) == GDL_BK_OK);
		bk->size(ctx, R, &cnt);
		CHECK(cnt == 0);
		bk->release(ctx, E);
		bk->release(ctx, R);
	}
}

/*
 * dedup of a join output that keeps the (sorted) left order: the grouped
 * path (bitmap for dense groups, in-place sort for sparse ones).
 */
static void
test_grouped_dedup(int64_t nl, int64_t nr, int64_t range, int64_t range2)
{
	Rows		l = rows_random(2, nl, 0, range),
				r = rows_random(2, nr, 0, range);
	GdlBkRel   *L,
			   *R,
			   *J = NULL,
			   *D = NULL;
	GdlBkColRef out[2] = {{0, 0}, {1, 1}};
	int			lk = 1,
				rk = 0;
	Rows		gj,
				gd;
	int64_t		i;

	for (i = 0; i < nr; i++)
		r.v[2 * i + 1] = (int64_t) (rnd() % (uint64_t) range2);
	L = upload_set(&l);
	R = upload(&r);
	CHECK(bk->join(ctx, L, R, 1, &lk, &rk, 2, out, &J) == GDL_BK_OK);
	CHECK(bk->dedup(ctx, 1, &J, &D) == GDL_BK_OK);
	gj = download(J, 2);
	gd = download(D, 2);
	CHECK(rows_unique(&gd));
	CHECK_MSG(rows_equal(&gd, &gj, true), "grouped dedup range %lld/%lld", (long long) range, (long long) range2);
	bk->release(ctx, L);
	bk->release(ctx, R);
	bk->release(ctx, J);
	bk->release(ctx, D);
	free(l.v);
	free(r.v);
	free(gj.v);
	free(gd.v);
}

/*
 * dedup of several bags of which some are grouped join outputs and one a
 * set (each made a set apart, then merged) and one plain: the union of all
 * their rows, each once.  Big enough (> 65,536 grouped rows) for that path.
 */
static void
test_grouped_bags_dedup(int64_t nl, int64_t nr, int64_t range)
{
	Rows		l = rows_random(2, nl, 0, range),
				r = rows_random(2, nr, 0, range),
				plain = rows_random(2, nl / 4, 0, range),
				sr = rows_random(2, nl / 4, 0, range),
				all;
	GdlBkRel   *L = upload_set(&l),
			   *R = upload(&r),
			   *in[4] = {NULL, NULL, NULL, NULL},
			   *D = NULL;
	GdlBkColRef out1[2] = {{0, 0}, {1, 1}},
				out2[2] = {{0, 0}, {1, 0}};
	int			lk = 1,
				rk = 0;
	Rows		got[4],
				gd;
	int64_t		i,
				pos = 0;

	CHECK(bk->join(ctx, L, R, 1, &lk, &rk, 2, out1, &in[0]) == GDL_BK_OK);
	CHECK(bk->join(ctx, L, R, 1, &lk, &rk, 2, out2, &in[1]) == GDL_BK_OK);
	in[2] = upload(&plain);
	in[3] = upload_set(&sr);
	all.arity = 2;
	all.n = 0;
	for (i = 0; i < 4; i++)
	{
		got[i] = download(in[i], 2);
		all.n += got[i].n;
	}
	all.v = malloc(sizeof(int64_t) * 2 * (all.n > 0 ? all.n : 1));
	for (i = 0; i < 4; i++)
	{
		memcpy(all.v + 2 * pos, got[i].v, sizeof(int64_t) * 2 * got[i].n);
		pos += got[i].n;
		free(got[i].v);
	}
	CHECK(bk->dedup(ctx, 4, in, &D) == GDL_BK_OK);
	gd = download(D, 2);
	CHECK(rows_unique(&gd));
	CHECK_MSG(rows_equal(&gd, &all, true), "dedup of grouped bags, %lld rows in", (long long) all.n);
	for (i = 0; i < 4; i++)
		bk->release(ctx, in[i]);
	bk->release(ctx, L);
	bk->release(ctx, R);
	bk->release(ctx, D);
	free(l.v);
	free(r.v);
	free(plain.v);
	free(sr.v);
	free(all.v);
	free(gd.v);
}

/* Many rounds of absorb (full kept as runs), checked against a host union. */
static void
test_absorb_rounds(int rounds, int64_t per_round, int64_t range)
{
	Rows		all = {2, 0, NULL};
	Rows		none = {2, 0, NULL};
	GdlBkRel   *full = upload_set(&none);
	int			r;

	all.v = malloc(sizeof(int64_t) * 2 * (rounds * per_round + 1));
	for (r = 0; r < rounds; r++)
	{
		Rows		c = rows_random(2, per_round / (1 + r % 4), 0, range);
		GdlBkRel   *C = upload_set(&c),
				   *NF = NULL,
				   *ND = NULL;
		Rows		gd,
					ref;
		int64_t		i,
					n0;

		rows_norm(&c, true);
		rows_norm(&all, true);
		ref.arity = 2;
		ref.n = 0;
		ref.v = malloc(sizeof(int64_t) * 2 * (c.n + 1));
		for (i = 0; i < c.n; i++)
			if (!rows_contains(&all, c.v + 2 * i))
				memcpy(ref.v + 2 * (ref.n++), c.v + 2 * i, sizeof(int64_t) * 2);
		{
			/* difference against a full made of runs */
			GdlBkRel   *D = NULL;
			Rows		g2,
						r2;

			CHECK(bk->difference(ctx, C, full, &D) == GDL_BK_OK);
			g2 = download(D, 2);
			r2 = rows_concat(&ref, &none);
			CHECK_MSG(rows_equal(&g2, &r2, false), "difference with runs, round %d", r);
			bk->release(ctx, D);
			free(g2.v);
			free(r2.v);
		}
		CHECK(bk->absorb(ctx, full, C, &NF, &ND) == GDL_BK_OK);
		gd = download(ND, 2);
		CHECK_MSG(rows_equal(&gd, &ref, false), "absorb round %d delta", r);
		memcpy(all.v + 2 * all.n, ref.v, sizeof(int64_t) * 2 * ref.n);
		all.n += ref.n;
		bk->size(ctx, NF, &n0);
		CHECK(n0 == all.n);
		bk->release(ctx, full);
		bk->release(ctx, C);
		bk->release(ctx, ND);
		full = NF;
		free(c.v);
		free(gd.v);
		free(ref.v);
	}
	{
		Rows		gf = download(full, 2);

		CHECK(rows_equal(&gf, &all, true));
		free(gf.v);
	}
	bk->release(ctx, full);
	free(all.v);
}

/* Arity-0 relations: the unit relation and its joins. */
static void
test_unit(void)
{
	Rows		u = {0, 3, NULL};
	Rows		a = rows_random(2, 10, 0, 5);
	GdlBkRel   *U = upload(&u),
			   *A = upload(&a),
			   *D = NULL,
			   *J = NULL;
	GdlBkColRef out[2] = {{1, 0}, {1, 1}};
	int64_t		n;

	CHECK(bk->dedup(ctx, 1, &U, &D) == GDL_BK_OK);
	bk->size(ctx, D, &n);
	CHECK(n == 1);
	CHECK(bk->join(ctx, D, A, 0, NULL, NULL, 2, out, &J) == GDL_BK_OK);
	bk->size(ctx, J, &n);
	CHECK(n == 10);
	bk->release(ctx, U);
	bk->release(ctx, A);
	bk->release(ctx, D);
	bk->release(ctx, J);
	free(a.v);
}

/* Run the whole suite with a given thread count. */
static void
suite(int nthreads, bool big)
{
	GdlBkConfig cfg = {nthreads, 0};
	int			cls,
				ar;
	int64_t		n = big ? 70000 : 2000;

	ctx = bk->ctx_create(&cfg, NULL);
	CHECK(ctx != NULL);
	for (cls = 0; cls < 3; cls++)
		for (ar = 0; ar <= 4; ar++)
		{
			test_dedup(ar, n, cls, cls == 2 ? 50 : 1000);
			test_dedup(ar, n, cls, 7);
			if (ar > 0)
			{
				test_setops(ar, n, n / 2, cls, cls, 300);
				test_setops(ar, n / 10, n, cls, (cls + 1) % 3, 300);
				test_setops(ar, n, 0, cls, cls, 300);
			}
		}
	test_dedup(20, n / 10, 2, 3);
	test_setops(20, n / 10, n / 10, 2, 2, 3);
	for (cls = 0; cls < 3; cls++)
	{
		test_join(2, 2, 1, big ? 3000 : 300, 400, cls, 40, true);
		test_join(2, 2, 1, big ? 3000 : 300, 400, cls, 40, false);
		test_join(3, 2, 2, 300, 500, cls, 6, false);
		test_join(1, 3, 0, 20, 30, cls, 6, false);
		test_join(2, 3, 3, 300, 500, cls, 3, true);
		test_join(4, 4, 2, 300, 300, cls, 5, false);
		test_map(n, cls, 100);
		test_aggregate(n, cls, 50);
	}
	/* sparse keys (hash index) */
	test_join(2, 2, 1, 500, 500, 0, 1LL << 40, false);
	test_join(2, 2, 2, 500, 500, 0, 1LL << 30, false);
	test_grouped_dedup(big ? 20000 : 2000, 3000, 500, 600);
	test_grouped_dedup(big ? 20000 : 2000, 3000, 500, 1LL << 40);
	test_grouped_dedup(2000, 300, 50, 1LL << 20);
	test_grouped_bags_dedup(big ? 40000 : 5000, 4000, 600);
	test_absorb_rounds(40, big ? 20000 : 500, 3000);
	test_absorb_rounds(10, 300, 40);
	test_map_errors();
	test_unit();
	bk->ctx_destroy(ctx);
}

int
main(void)
{
	gdl_test_host_install();
	bk = gdl_cpu_backend();
	CHECK(bk->abi == GDL_BACKEND_ABI);
	suite(1, false);
	suite(2, false);
	suite(3, true);
	gdl_test_reset();
	return gdl_test_summary("test_cpu_backend");
}
