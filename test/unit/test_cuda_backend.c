/*
 * test_cuda_backend.c — differential test of the CUDA backend.
 *
 * Loads cuda/gpudl_cuda.so with dlopen (path from $GDL_CUDA_LIB, default
 * ../../cuda/gpudl_cuda.so), runs every operation of gdl_backend.h on many
 * random relations with both the CUDA backend and the CPU backend (the
 * reference, linked into every test binary), and compares each result as a
 * sorted bag (and checks set results have no duplicates) and each status.
 * Covers packed and wide layouts, arity 0 to 4, cached join indexes,
 * semi-naive fixpoints through absorb (including absorbing from an older
 * version of `full`, which exercises the hash log's versioning), map
 * errors, aggregates, the memory limit, and a leak check: after
 * ctx_destroy and after ctx_abort mid-run, the device's free memory is back
 * at its starting value.
 *
 * Without the module or a GPU (CI) it prints
 * "test_cuda_backend: skipped (no GPU: <reason>)" and exits 0.
 */
#include "test_util.h"
#include "test_rows.h"

#include <dlfcn.h>
#include <string.h>

#include "../../src/exec/gdl_backend.h"
#include "../../src/exec/gdl_engine.h"



typedef int (*MemInfoFn) (size_t *free_bytes, size_t *total_bytes);

static const GdlBackend *cpu;
static const GdlBackend *gpu;
static void *cctx;
static void *gctx;
static MemInfoFn meminfo;
static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

/* The next number of this file's xorshift64 sequence (test_util.c). */
static uint64_t
rnd(void)
{
	return gdl_test_xorshift(&rng_state);
}

/* Random integer in [0, n). */
static int64_t
rndn(int64_t n)
{
	return n > 0 ? (int64_t) (rnd() % (uint64_t) n) : 0;
}

/* ------------------------------------------- host rows (test_rows.h) */

/*
 * Random value of a class: 0 small non-negative (packed), 1 small signed,
 * 2 large (wide), 3 around 2^32 (edge of packing).
 */
static int64_t
rnd_val(int cls, int64_t range)
{
	switch (cls)
	{
		case 0:
			return rndn(range);
		case 1:
			return rndn(range) - range / 2;
		case 2:
			return (rndn(range) * 0x10000000001LL) ^ (rnd() % 2 ? INT64_MIN : 0);
		default:
			return 0xffffffffLL - rndn(range);
	}
}

/* Random rows of one value class. */
static Rows
rows_random(int arity, int64_t n, int cls, int64_t range)
{
	return rows_random_of(arity, n, rnd_val, cls, range);
}

/* Sort rows in place. */
static void
rows_sort(Rows *r)
{
	rows_cmp_arity = r->arity;
	if (r->arity > 0 && r->n > 1)
		qsort(r->v, r->n, sizeof(int64_t) * r->arity, rows_cmp);
}

/* Whether sorted rows hold a duplicate. */
static bool
rows_has_dup(const Rows *r)
{
	rows_cmp_arity = r->arity;
	if (r->arity == 0)
		return r->n > 1;
	for (int64_t i = 1; i < r->n; i++)
		if (rows_cmp(r->v + (i - 1) * r->arity, r->v + i * r->arity) == 0)
			return true;
	return false;
}

/* ----------------------------------------------------------- pairs */

/* The same relation in both backends. */
typedef struct Pair
{
	GdlBkRel   *c;
	GdlBkRel   *g;
	int			arity;
} Pair;

static const Pair NOPAIR = {NULL, NULL, 0};

/* Upload host rows to one backend. */
static GdlBkRel *
upload_one(const GdlBackend *bk, void *ctx, const Rows *r)
{
	int64_t    *cols[GDL_BK_MAX_ARITY];
	GdlBkRel   *rel = NULL;
	int			s;

	for (int k = 0; k < r->arity; k++)
	{
		cols[k] = malloc(sizeof(int64_t) * (r->n + 1));
		for (int64_t i = 0; i < r->n; i++)
			cols[k][i] = r->v[i * r->arity + k];
	}
	s = bk->upload(ctx, r->arity, r->n, (const int64_t *const *) cols, &rel);
	CHECK_MSG(s == GDL_BK_OK, "%s upload: %s", bk->name, bk->last_error(ctx));
	for (int k = 0; k < r->arity; k++)
		free(cols[k]);
	return rel;
}

/* Download a relation of one backend as host rows. */
static Rows
download_one(const GdlBackend *bk, void *ctx, GdlBkRel *rel, int arity)
{
	Rows		r;
	int64_t    *cols[GDL_BK_MAX_ARITY];
	int			s;

	r.arity = arity;
	r.n = 0;
	s = bk->size(ctx, rel, &r.n);
	CHECK_MSG(s == GDL_BK_OK, "%s size: %s", bk->name, bk->last_error(ctx));
	r.v = malloc(sizeof(int64_t) * (r.n * arity + 1));
	for (int k = 0; k < arity; k++)
		cols[k] = malloc(sizeof(int64_t) * (r.n + 1));
	s = bk->download(ctx, rel, cols);
	CHECK_MSG(s == GDL_BK_OK, "%s download: %s", bk->name, bk->last_error(ctx));
	for (int k = 0; k < arity; k++)
	{
		for (int64_t i = 0; i < r.n; i++)
			r.v[i * arity + k] = cols[k][i];
		free(cols[k]);
	}
	return r;
}

/* Upload host rows to both backends. */
static Pair
pair_upload(const Rows *r)
{
	Pair		p;

	p.c = upload_one(cpu, cctx, r);
	p.g = upload_one(gpu, gctx, r);
	p.arity = r->arity;
	return p;
}

/* Release both sides. */
static void
pair_release(Pair p)
{
	if (p.c)
		cpu->release(cctx, p.c);
	if (p.g)
		gpu->release(gctx, p.g);
}

static int	n_compared;

/* Compare both sides as bags; a set must have no duplicate rows. */
static void
pair_check(Pair p, const char *what, bool set)
{
	Rows		a,
				b;
	bool		same;

	if (!p.c || !p.g)
		return;
	a = download_one(cpu, cctx, p.c, p.arity);
	b = download_one(gpu, gctx, p.g, p.arity);
	rows_sort(&a);
	rows_sort(&b);
	same = a.n == b.n && (p.arity == 0 ||
						  memcmp(a.v, b.v, sizeof(int64_t) * a.n * p.arity) == 0);
	CHECK_MSG(same, "%s: cpu %lld rows, cuda %lld rows (arity %d)", what,
			  (long long) a.n, (long long) b.n, p.arity);
	if (!same && p.arity > 0)
	{
		for (int64_t i = 0; i < a.n && i < b.n; i++)
			if (rows_cmp(a.v + i * p.arity, b.v + i * p.arity) != 0)
			{
				fprintf(stderr, "  first difference at sorted row %lld: cpu %lld, cuda %lld\n",
						(long long) i, (long long) a.v[i * p.arity], (long long) b.v[i * p.arity]);
				break;
			}
	}
	if (set)
		CHECK_MSG(!rows_has_dup(&b), "%s: cuda result has duplicate rows", what);
	n_compared++;
	free(a.v);
	free(b.v);
}

/* Compare two statuses; on failure release what was made. */
static bool
statuses(const char *what, int sc, int sg, Pair *out)
{
	CHECK_MSG(sc == sg, "%s: cpu status %d (%s), cuda status %d (%s)", what,
			  sc, sc ? cpu->last_error(cctx) : "ok", sg, sg ? gpu->last_error(gctx) : "ok");
	if (sc != GDL_BK_OK || sg != GDL_BK_OK)
	{
		pair_release(*out);
		*out = NOPAIR;
		return false;
	}
	return true;
}

/* Compare an operation's two results (statuses, then rows; set: as sets). */
static void
compare_op(const char *what, int sc, int sg, Pair *out, bool set)
{
	if (statuses(what, sc, sg, out))
		pair_check(*out, what, set);
}

/* Release an operation's result and input pairs and free its host rows. */
static void
release_op(Pair *out, Pair *in, Rows *r)
{
	pair_release(*out);
	pair_release(*in);
	free(r->v);
}

/* A random set: dedup of random rows. */
static Pair
pair_set(int arity, int64_t n, int cls, int64_t range)
{
	Rows		r = rows_random(arity, n, cls, range);
	Pair		bag = pair_upload(&r),
				out = NOPAIR;
	int			sc,
				sg;

	sc = cpu->dedup(cctx, 1, &bag.c, &out.c);
	sg = gpu->dedup(gctx, 1, &bag.g, &out.g);
	out.arity = arity;
	if (statuses("dedup", sc, sg, &out))
		pair_check(out, "dedup", true);
	pair_release(bag);
	free(r.v);
	return out;
}

/* ------------------------------------------------------------- set ops */

/* dedup of 1 to 3 random bags. */
static void
test_dedup(void)
{
	for (int t = 0; t < 60; t++)
	{
		int			arity = (int) rndn(5),
					nin = 1 + (int) rndn(3),
					cls = (int) rndn(4);
		int64_t		range = 1 + rndn(t % 2 ? 50 : 5000);
		Pair		in[3];
		GdlBkRel   *ic[3],
				   *ig[3];
		Pair		out = NOPAIR;
		int			sc,
					sg;

		for (int i = 0; i < nin; i++)
		{
			Rows		r = rows_random(arity, rndn(t % 3 ? 300 : 20000), i == 1 ? (int) rndn(4) : cls, range);

			in[i] = pair_upload(&r);
			ic[i] = in[i].c;
			ig[i] = in[i].g;
			free(r.v);
		}
		sc = cpu->dedup(cctx, nin, ic, &out.c);
		sg = gpu->dedup(gctx, nin, ig, &out.g);
		out.arity = arity;
		if (statuses("dedup", sc, sg, &out))
			pair_check(out, "dedup n-ary", true);
		pair_release(out);
		for (int i = 0; i < nin; i++)
			pair_release(in[i]);
	}
}

/* difference, merge and absorb of random sets of mixed layouts. */
static void
test_setops(void)
{
	for (int t = 0; t < 60; t++)
	{
		int			arity = (int) rndn(4);
		int64_t		range = 1 + rndn(t % 2 ? 40 : 3000);
		Pair		A = pair_set(arity, rndn(t % 4 ? 400 : 30000), (int) rndn(4), range);
		Pair		B = pair_set(arity, rndn(t % 5 ? 400 : 30000), t % 3 ? (int) rndn(4) : 0, range);
		Pair		d = NOPAIR,
					m = NOPAIR,
					nf = NOPAIR,
					nd = NOPAIR;

		d.arity = m.arity = nf.arity = nd.arity = arity;
		compare_op("difference", cpu->difference(cctx, A.c, B.c, &d.c),
				   gpu->difference(gctx, A.g, B.g, &d.g), &d, true);
		compare_op("merge", cpu->merge(cctx, A.c, B.c, &m.c),
				   gpu->merge(gctx, A.g, B.g, &m.g), &m, true);
		if (statuses("absorb", cpu->absorb(cctx, A.c, B.c, &nf.c, &nd.c),
					 gpu->absorb(gctx, A.g, B.g, &nf.g, &nd.g), &nf))
		{
			pair_check(nf, "absorb full", true);
			pair_check(nd, "absorb delta", true);
		}
		pair_release(nd);
		pair_release(nf);
		pair_release(m);
		pair_release(d);
		pair_release(B);
		pair_release(A);
	}
}

/*
 * Versions of `full`: absorb repeatedly, then use OLDER versions again
 * (absorb from a non-tip version, difference and merge against it, join
 * with it) and check old versions and deltas did not change.
 */
static void
test_versions(void)
{
	for (int t = 0; t < 12; t++)
	{
		int			arity = 1 + (int) rndn(2);
		int64_t		range = 200 + rndn(2000);
		int			cls = t % 4 == 3 ? 1 : 0;
		Pair		full[6],
					delta[6];
		int			nv = 0;

		full[0] = pair_set(arity, 300, cls, range);
		delta[0] = NOPAIR;
		for (nv = 1; nv < 6; nv++)
		{
			Pair		cand = pair_set(arity, 50 + rndn(3000), cls, range);
			int			from = nv == 4 ? 2 : nv - 1;	/* version 4 grows from an old full */

			full[nv] = delta[nv] = NOPAIR;
			full[nv].arity = delta[nv].arity = arity;
			if (statuses("absorb chain", cpu->absorb(cctx, full[from].c, cand.c, &full[nv].c, &delta[nv].c),
						 gpu->absorb(gctx, full[from].g, cand.g, &full[nv].g, &delta[nv].g), &full[nv]))
			{
				pair_check(full[nv], "absorb chain full", true);
				pair_check(delta[nv], "absorb chain delta", true);
			}
			pair_release(cand);
		}
		/* older versions still read right, also against new candidates */
		for (int v = 0; v < 6; v++)
		{
			Pair		q = pair_set(arity, 500, cls, range),
						d = NOPAIR,
						m = NOPAIR;

			d.arity = m.arity = arity;
			pair_check(full[v], "old full", true);
			if (v > 0)
				pair_check(delta[v], "old delta", true);
			if (statuses("difference vs old", cpu->difference(cctx, q.c, full[v].c, &d.c),
						 gpu->difference(gctx, q.g, full[v].g, &d.g), &d))
				pair_check(d, "difference vs old full", true);
			if (v > 0 && statuses("difference vs delta", cpu->difference(cctx, q.c, delta[v].c, &m.c),
								  gpu->difference(gctx, q.g, delta[v].g, &m.g), &m))
				pair_check(m, "difference vs delta", true);
			pair_release(m);
			m = NOPAIR;
			m.arity = arity;
			if (statuses("merge old", cpu->merge(cctx, full[v].c, q.c, &m.c),
						 gpu->merge(gctx, full[v].g, q.g, &m.g), &m))
				pair_check(m, "merge old full", true);
			pair_release(m);
			pair_release(d);
			pair_release(q);
		}
		for (int v = 0; v < 6; v++)
		{
			pair_release(full[v]);
			pair_release(delta[v]);
		}
	}
}

/*
 * `full` as sorted runs (cuda/runs.cu): a long chain of absorbs of
 * candidate sets of very different sizes (runs pile up and are merged),
 * each full and delta checked; then the last full searched (difference),
 * joined (flattened) and absorbed into again.
 */
static void
test_runs(void)
{
	for (int t = 0; t < 3; t++)
	{
		int			arity = t == 2 ? 1 : 2;
		int64_t		range = 1000000;
		Pair		full = pair_set(arity, 10, 0, range);

		for (int round = 0; round < 60 && full.c; round++)
		{
			int64_t		n = round % 7 == 3 ? 20000 + rndn(40000) : 1 + rndn(round % 2 ? 30 : 3000);
			Pair		cand = pair_set(arity, n, 0, range),
						nf = NOPAIR,
						nd = NOPAIR;

			nf.arity = nd.arity = arity;
			if (statuses("runs absorb", cpu->absorb(cctx, full.c, cand.c, &nf.c, &nd.c),
						 gpu->absorb(gctx, full.g, cand.g, &nf.g, &nd.g), &nf))
			{
				if (round % 5 == 0 || round > 55)
				{
					pair_check(nf, "runs absorb full", true);
					pair_check(nd, "runs absorb delta", true);
				}
				pair_release(nd);
				pair_release(full);
				full = nf;
			}
			pair_release(cand);
		}
		if (full.c)
		{
			Pair		q = pair_set(arity, 5000, 0, range),
						d = NOPAIR,
						j = NOPAIR;
			int			k0 = 0;
			GdlBkColRef out[2] = {{0, 0}, {1, 0}};

			d.arity = arity;
			j.arity = 2;
			compare_op("difference vs runs", cpu->difference(cctx, q.c, full.c, &d.c),
					   gpu->difference(gctx, q.g, full.g, &d.g), &d, true);
			compare_op("join with runs", cpu->join(cctx, q.c, full.c, 1, &k0, &k0, 2, out, &j.c),
					   gpu->join(gctx, q.g, full.g, 1, &k0, &k0, 2, out, &j.g), &j, false);
			pair_check(full, "runs full after join", true);
			pair_release(j);
			pair_release(d);
			pair_release(q);
			pair_release(full);
		}
	}
}

/*
 * Deferred dedup: bags with many duplicates (far more rows than the set they
 * reduce to) absorbed and merged into hash logs in chunks, and the same
 * dedup results used by other operations afterwards.
 */
static void
test_pending(void)
{
	for (int t = 0; t < 6; t++)
	{
		int			arity = 1 + t % 2;
		Rows		r = rows_random(arity, t < 2 ? 3000000 : 200000, 0, t < 2 ? 3000 : 100000);
		Pair		bag = pair_upload(&r),
					cand = NOPAIR,
					full = pair_set(arity, 500, 0, 3000),
					nf = NOPAIR,
					nd = NOPAIR,
					m = NOPAIR,
					j = NOPAIR;
		int			k0 = 0;
		GdlBkColRef out[1] = {{0, 0}};

		cand.arity = nf.arity = nd.arity = m.arity = arity;
		j.arity = 1;
		if (statuses("pending dedup", cpu->dedup(cctx, 1, &bag.c, &cand.c),
					 gpu->dedup(gctx, 1, &bag.g, &cand.g), &cand))
		{
			if (statuses("pending absorb", cpu->absorb(cctx, full.c, cand.c, &nf.c, &nd.c),
						 gpu->absorb(gctx, full.g, cand.g, &nf.g, &nd.g), &nf))
			{
				pair_check(nf, "pending absorb full", true);
				pair_check(nd, "pending absorb delta", true);
				if (statuses("pending merge", cpu->merge(cctx, nf.c, cand.c, &m.c),
							 gpu->merge(gctx, nf.g, cand.g, &m.g), &m))
					pair_check(m, "pending merge into tip", true);
			}
			if (t % 3 == 2 && statuses("pending join", cpu->join(cctx, cand.c, full.c, 1, &k0, &k0, 1, out, &j.c),
									   gpu->join(gctx, cand.g, full.g, 1, &k0, &k0, 1, out, &j.g), &j))
				pair_check(j, "join of a dedup result", false);
			pair_check(cand, "dedup result after absorb", true);
		}
		pair_release(j);
		pair_release(m);
		pair_release(nd);
		pair_release(nf);
		pair_release(full);
		pair_release(cand);
		pair_release(bag);
		free(r.v);
	}
}

/* ----------------------------------------------------------------- joins */

/* Random joins and anti-joins; R is reused with several key sets (cached indexes). */
static void
test_join(void)
{
	for (int t = 0; t < 50; t++)
	{
		int			la = (int) rndn(5),
					ra = (int) rndn(5);
		int64_t		range = 1 + rndn(t % 2 ? 30 : 2000);
		int			cls = (int) rndn(4);
		Rows		lr = rows_random(la, rndn(t % 4 ? 500 : 20000), cls, range),
					rr = rows_random(ra, rndn(t % 3 ? 500 : 5000), t % 2 ? cls : 0, range);
		Pair		L = pair_upload(&lr),
					R = t % 3 ? pair_upload(&rr) : pair_set(ra, rr.n, cls, range);

		for (int rep = 0; rep < 4; rep++)
		{
			int			maxk = la < ra ? la : ra;
			int			nkeys = (int) rndn(maxk + 1 > 3 ? 3 : maxk + 1);
			int			lkeys[4],
						rkeys[4],
						nout = (int) rndn(5);
			GdlBkColRef out[8];
			Pair		j = NOPAIR,
						a = NOPAIR;
			int64_t		ln = 0,
						rn = 0;

			if (rep == 3 && nkeys == 0 && maxk > 0)
				nkeys = 1;
			for (int k = 0; k < nkeys; k++)
			{
				lkeys[k] = (int) rndn(la);
				rkeys[k] = (int) rndn(ra);
			}
			for (int k = 0; k < nout; k++)
			{
				out[k].side = (la == 0) ? 1 : (ra == 0 ? 0 : (int) rndn(2));
				out[k].col = (int) rndn(out[k].side ? ra : la);
				if ((out[k].side ? ra : la) == 0)
					nout = k;
			}
			cpu->size(cctx, L.c, &ln);
			cpu->size(cctx, R.c, &rn);
			if (nkeys == 0 && ln * rn > 2000000)
				nkeys = maxk > 0 ? 1 : 0;
			if (nkeys == 0 && ln * rn > 2000000)
				continue;
			j.arity = nout;
			compare_op("join", cpu->join(cctx, L.c, R.c, nkeys, lkeys, rkeys, nout, out, &j.c),
					   gpu->join(gctx, L.g, R.g, nkeys, lkeys, rkeys, nout, out, &j.g), &j, false);
			a.arity = la;
			compare_op("antijoin", cpu->antijoin(cctx, L.c, R.c, nkeys, lkeys, rkeys, &a.c),
					   gpu->antijoin(gctx, L.g, R.g, nkeys, lkeys, rkeys, &a.g), &a, false);
			pair_release(a);
			pair_release(j);
		}
		pair_release(R);
		pair_release(L);
		free(lr.v);
		free(rr.v);
	}
}

/* --------------------------------------------------------------- map */

/* A growing expression. */
typedef struct Code
{
	int			n;
	GdlBkInsn	c[64];
} Code;

/* Append one instruction. */
static void
emit(Code *e, int op, int arg, int64_t imm)
{
	if (e->n < 64)
	{
		e->c[e->n].op = op;
		e->c[e->n].arg = arg;
		e->c[e->n].imm = imm;
		e->n++;
	}
}

/* Double as its bit pattern. */
static int64_t
fbits(double d)
{
	int64_t		v;

	memcpy(&v, &d, sizeof(v));
	return v;
}

/*
 * A random integer expression of one error family: 0 safe arithmetic
 * (overflow only with large values), 1 division/modulo (division by zero),
 * 2 float arithmetic via I2F, 3 text ranks.
 */
static void
gen_int(Code *e, int depth, int arity, int fam)
{
	int			choice = (int) rndn(depth > 0 ? 5 : 2);

	if (choice == 0 && arity > 0)
	{
		emit(e, GDL_BC_COL, (int) rndn(arity), 0);
		if (fam == 3)
			emit(e, GDL_BC_RANK, 0, 0);
		return;
	}
	if (choice <= 1)
	{
		emit(e, GDL_BC_CONST, 0, fam == 1 ? rndn(3) - 1 : rndn(20) - 5);
		return;
	}
	if (fam == 2)
	{
		/* a float computation compared to a constant: an int result */
		static const int fops[] = {GDL_BC_FADD, GDL_BC_FSUB, GDL_BC_FMUL, GDL_BC_FDIV};
		static const int fcmp[] = {GDL_BC_FEQ, GDL_BC_FNE, GDL_BC_FLT, GDL_BC_FLE, GDL_BC_FGT, GDL_BC_FGE};

		gen_int(e, depth - 1, arity, 0);
		emit(e, GDL_BC_I2F, 0, 0);
		gen_int(e, depth - 1, arity, 0);
		emit(e, GDL_BC_I2F, 0, 0);
		emit(e, fops[rndn(4)], 0, 0);
		if (rndn(2))
			emit(e, GDL_BC_FNEG, 0, 0);
		emit(e, GDL_BC_CONST, 0, fbits((double) (rndn(10) - 3)));
		emit(e, fcmp[rndn(6)], 0, 0);
		return;
	}
	if (choice == 2)
	{
		gen_int(e, depth - 1, arity, fam);
		emit(e, GDL_BC_NEG, 0, 0);
		return;
	}
	gen_int(e, depth - 1, arity, fam);
	gen_int(e, depth - 1, arity, fam);
	if (fam == 1)
		emit(e, rndn(2) ? GDL_BC_DIV : GDL_BC_MOD, 0, 0);
	else
	{
		static const int iops[] = {GDL_BC_ADD, GDL_BC_SUB, GDL_BC_MUL, GDL_BC_EQ, GDL_BC_NE,
		GDL_BC_LT, GDL_BC_LE, GDL_BC_GT, GDL_BC_GE};

		emit(e, iops[rndn(9)], 0, 0);
	}
}

/* Random maps: filters and outputs of one error family, compared with their statuses. */
static void
test_map(void)
{
	int32_t		ranks[100];

	for (int i = 0; i < 100; i++)
		ranks[i] = i;
	for (int i = 99; i > 0; i--)
	{
		int			j = (int) rndn(i + 1);
		int32_t		x = ranks[i];

		ranks[i] = ranks[j];
		ranks[j] = x;
	}
	CHECK(cpu->set_text_ranks(cctx, ranks, 100) == GDL_BK_OK);
	CHECK(gpu->set_text_ranks(gctx, ranks, 100) == GDL_BK_OK);
	for (int t = 0; t < 150; t++)
	{
		int			fam = (int) rndn(4);
		int			arity = 1 + (int) rndn(3);
		int			cls = fam == 0 ? (int) rndn(3) : 0;
		Rows		r = rows_random(arity, rndn(t % 4 ? 300 : 20000), cls, fam == 3 ? (t % 5 ? 100 : 110) : 30);
		Pair		in = pair_upload(&r),
					out = NOPAIR;
		int			nf = (int) rndn(3),
					no = (int) rndn(4);
		Code		codes[8];
		GdlBkExpr	filt[4],
					outs[4];

		for (int k = 0; k < nf + no; k++)
		{
			Code	   *c = &codes[k];

			c->n = 0;
			if (k >= nf && rndn(3) == 0)
				emit(c, GDL_BC_COL, (int) rndn(arity), 0);
			else
				gen_int(c, 1 + (int) rndn(3), arity, fam);
			if (rndn(4) == 0)
				emit(c, GDL_BC_NOP, 0, 0);
			if (k < nf)
			{
				filt[k].ncode = c->n;
				filt[k].code = c->c;
			}
			else
			{
				outs[k - nf].ncode = c->n;
				outs[k - nf].code = c->c;
			}
		}
		out.arity = no;
		compare_op("map", cpu->map(cctx, in.c, nf, filt, no, outs, &out.c),
				   gpu->map(gctx, in.g, nf, filt, no, outs, &out.g), &out, false);
		release_op(&out, &in, &r);
	}
}

/* ----------------------------------------------------------- aggregates */

/* Random group-by with count/sum/min/max over int, float and text values. */
static void
test_aggregate(void)
{
	for (int t = 0; t < 60; t++)
	{
		int64_t		n = rndn(t % 4 ? 400 : 30000);
		int			vk = (int) rndn(3);
		Rows		r;
		Pair		in,
					out = NOPAIR;
		int			ngroup = (int) rndn(3),
					group[2],
					nagg = (int) rndn(4);
		GdlBkAgg	aggs[4];

		r.arity = 3;
		r.n = n;
		r.v = malloc(sizeof(int64_t) * (3 * n + 1));
		for (int64_t i = 0; i < n; i++)
		{
			int64_t		v = rndn(200) - 100;

			r.v[3 * i] = rndn(t % 2 ? 5 : 500);
			r.v[3 * i + 1] = rnd_val(t % 3 == 0 ? 2 : 0, 7);
			r.v[3 * i + 2] = vk == GDL_BK_VAL_FLOAT ? fbits((double) v) :
				vk == GDL_BK_VAL_TEXT ? rndn(100) : v;
		}
		in = pair_upload(&r);
		for (int k = 0; k < ngroup; k++)
			group[k] = ngroup == 1 ? (int) rndn(2) : k;
		for (int a = 0; a < nagg; a++)
		{
			aggs[a].kind = (int) rndn(4);
			aggs[a].valkind = vk;
			if (vk == GDL_BK_VAL_TEXT && aggs[a].kind == GDL_BK_AGG_SUM)
				aggs[a].kind = GDL_BK_AGG_MAX;
			aggs[a].col = 2;
		}
		out.arity = ngroup + nagg;
		compare_op("aggregate", cpu->aggregate(cctx, in.c, ngroup, group, nagg, aggs, &out.c),
				   gpu->aggregate(gctx, in.g, ngroup, group, nagg, aggs, &out.g), &out, true);
		release_op(&out, &in, &r);
	}
}

/* ------------------------------------------------------- fixpoints, unit */

/*
 * Semi-naive transitive closure of a random graph through the interface,
 * as the engine drives it: join delta with edge, dedup, absorb.  Returns
 * the closure's size.
 */
static int64_t
run_tc(const GdlBackend *bk, void *ctx, GdlBkRel *edge, int rounds_max, GdlBkRel **full_out)
{
	int			lk = 1,
				rk = 0;
	GdlBkColRef out[2] = {{0, 0}, {1, 1}};
	GdlBkRel   *full = NULL,
			   *delta,
			   *j,
			   *cand,
			   *nf,
			   *nd;
	int64_t		n = 0;

	CHECK(bk->dedup(ctx, 1, &edge, &full) == GDL_BK_OK);
	delta = full;
	for (int round = 0; round < rounds_max; round++)
	{
		CHECK(bk->size(ctx, delta, &n) == GDL_BK_OK);
		if (n == 0)
			break;
		if (bk->join(ctx, delta, edge, 1, &lk, &rk, 2, out, &j) != GDL_BK_OK)
			break;
		if (bk->dedup(ctx, 1, &j, &cand) != GDL_BK_OK)
			break;
		bk->release(ctx, j);
		if (bk->absorb(ctx, full, cand, &nf, &nd) != GDL_BK_OK)
			break;
		bk->release(ctx, cand);
		if (delta != full)
			bk->release(ctx, delta);
		bk->release(ctx, full);
		full = nf;
		delta = nd;
	}
	if (delta != full)
		bk->release(ctx, delta);
	CHECK(bk->size(ctx, full, &n) == GDL_BK_OK);
	*full_out = full;
	return n;
}

/* TC on random graphs, both backends. */
static void
test_tc(void)
{
	for (int t = 0; t < 8; t++)
	{
		int64_t		nodes = 20 + rndn(t % 2 ? 300 : 3000);
		Rows		r = rows_random(2, nodes + rndn(nodes * 2), 0, nodes);
		Pair		e,
					f;

		if (t == 7)
			for (int64_t i = 0; i < r.n * 2; i++)
				r.v[i] += (int64_t) 1 << 40;	/* wide values: the general path */
		e = pair_upload(&r);
		f.arity = 2;
		run_tc(cpu, cctx, e.c, 100000, &f.c);
		run_tc(gpu, gctx, e.g, 100000, &f.g);
		pair_check(f, "transitive closure", true);
		pair_release(f);
		pair_release(e);
		free(r.v);
	}
}

/* Arity-0 relations through every set operation and joins. */
static void
test_unit(void)
{
	for (int a = 0; a < 3; a++)
		for (int b = 0; b < 3; b++)
		{
			Rows		ra = {0, a, NULL},
						rb = {0, b, NULL};
			Pair		A = pair_upload(&ra),
						B = pair_upload(&rb),
						o = NOPAIR,
						o2 = NOPAIR,
						SA = NOPAIR,
						SB = NOPAIR;
			GdlBkRel   *ic[2] = {A.c, B.c},
					   *ig[2] = {A.g, B.g};

			if (statuses("unit dedup", cpu->dedup(cctx, 2, ic, &o.c), gpu->dedup(gctx, 2, ig, &o.g), &o))
				pair_check(o, "unit dedup", true);
			pair_release(o);
			o = NOPAIR;
			compare_op("unit join", cpu->join(cctx, A.c, B.c, 0, NULL, NULL, 0, NULL, &o.c),
					   gpu->join(gctx, A.g, B.g, 0, NULL, NULL, 0, NULL, &o.g), &o, false);
			pair_release(o);
			o = NOPAIR;
			compare_op("unit antijoin", cpu->antijoin(cctx, A.c, B.c, 0, NULL, NULL, &o.c),
					   gpu->antijoin(gctx, A.g, B.g, 0, NULL, NULL, &o.g), &o, false);
			pair_release(o);
			o = NOPAIR;
			/* set operations take sets: dedup the units first */
			if (statuses("unit set", cpu->dedup(cctx, 1, &A.c, &SA.c), gpu->dedup(gctx, 1, &A.g, &SA.g), &SA) &&
				statuses("unit set", cpu->dedup(cctx, 1, &B.c, &SB.c), gpu->dedup(gctx, 1, &B.g, &SB.g), &SB))
			{
				compare_op("unit difference", cpu->difference(cctx, SA.c, SB.c, &o.c),
						   gpu->difference(gctx, SA.g, SB.g, &o.g), &o, true);
				pair_release(o);
				o = NOPAIR;
				compare_op("unit merge", cpu->merge(cctx, SA.c, SB.c, &o.c),
						   gpu->merge(gctx, SA.g, SB.g, &o.g), &o, true);
				pair_release(o);
				o = NOPAIR;
				if (statuses("unit absorb", cpu->absorb(cctx, SA.c, SB.c, &o.c, &o2.c),
							 gpu->absorb(gctx, SA.g, SB.g, &o.g, &o2.g), &o))
				{
					pair_check(o, "unit absorb full", true);
					pair_check(o2, "unit absorb delta", true);
				}
				pair_release(o2);
				pair_release(o);
			}
			pair_release(SB);
			pair_release(SA);
			pair_release(B);
			pair_release(A);
		}
}

/* ------------------------------------------------ memory limit and leaks */

/* A device context with a small memory limit fails cleanly and stays usable. */
static void
test_memory_limit(void)
{
	GdlBkConfig cfg = {0, 4 << 20};
	const char *err = NULL;
	void	   *ctx = gpu->ctx_create(&cfg, &err);
	Rows		big = rows_random(3, 1 << 20, 2, 1000),
				small = rows_random(2, 1000, 0, 100);
	GdlBkRel   *r = NULL,
			   *s = NULL,
			   *d = NULL;

	CHECK_MSG(ctx != NULL, "ctx_create with a limit: %s", err ? err : "?");
	if (!ctx)
		return;
	{
		int64_t    *cols[3];
		int			st;

		for (int k = 0; k < 3; k++)
		{
			cols[k] = malloc(sizeof(int64_t) * big.n);
			for (int64_t i = 0; i < big.n; i++)
				cols[k][i] = big.v[i * 3 + k];
		}
		st = gpu->upload(ctx, 3, big.n, (const int64_t *const *) cols, &r);
		CHECK_MSG(st == GDL_BK_ERR_NO_MEMORY && r == NULL,
				  "upload over the limit: status %d", st);
		CHECK(strlen(gpu->last_error(ctx)) > 0);
		for (int k = 0; k < 3; k++)
			free(cols[k]);
	}
	s = upload_one(gpu, ctx, &small);
	CHECK(s != NULL);
	CHECK(gpu->dedup(ctx, 1, &s, &d) == GDL_BK_OK && d != NULL);
	gpu->ctx_destroy(ctx);
	free(big.v);
	free(small.v);
}

/* A workload touching every kind of kernel, in a fresh context; abort midway or destroy. */
static void
leak_workload(bool abort_midway)
{
	const char *err = NULL;
	void	   *ctx = gpu->ctx_create(NULL, &err);
	Rows		r = rows_random(2, 20000, 0, 5000),
				w = rows_random(3, 5000, 2, 100);
	GdlBkRel   *e,
			   *wide,
			   *full = NULL,
			   *x = NULL,
			   *y = NULL;
	GdlBkAgg	agg = {GDL_BK_AGG_SUM, GDL_BK_VAL_INT, 1};
	int			grp = 0;
	GdlBkInsn	ins[3] = {{GDL_BC_COL, 0, 0}, {GDL_BC_CONST, 0, 3}, {GDL_BC_ADD, 0, 0}};
	GdlBkExpr	ex = {3, ins};

	CHECK_MSG(ctx != NULL, "ctx_create: %s", err ? err : "?");
	if (!ctx)
		return;
	e = upload_one(gpu, ctx, &r);
	wide = upload_one(gpu, ctx, &w);
	run_tc(gpu, ctx, e, abort_midway ? 3 : 100000, &full);
	CHECK(gpu->aggregate(ctx, e, 1, &grp, 1, &agg, &x) == GDL_BK_OK);
	CHECK(gpu->map(ctx, wide, 1, &ex, 1, &ex, &y) == GDL_BK_OK);
	if (abort_midway)
		gpu->ctx_abort(ctx);	/* relations still alive */
	else
	{
		GdlBkRel   *z = NULL;

		CHECK(gpu->dedup(ctx, 1, &wide, &z) == GDL_BK_OK);
		gpu->ctx_destroy(ctx);
	}
	free(r.v);
	free(w.v);
}

/* The device's free memory returns to its level after destroy and after abort. */
static void
test_leaks(void)
{
	size_t		f0 = 0,
				f1 = 0,
				f2 = 0,
				total = 0;

	if (!meminfo)
	{
		printf("test_cuda_backend: leak check skipped (no gdl_cuda_debug_meminfo)\n");
		return;
	}
	leak_workload(false);		/* warm up: modules load lazily */
	leak_workload(true);
	CHECK(meminfo(&f0, &total) == 0);
	leak_workload(false);
	CHECK(meminfo(&f1, &total) == 0);
	leak_workload(true);
	CHECK(meminfo(&f2, &total) == 0);
	CHECK_MSG(f1 == f0, "free device memory after destroy: %zu, before %zu (diff %lld)",
			  f1, f0, (long long) f0 - (long long) f1);
	CHECK_MSG(f2 == f0, "free device memory after abort: %zu, before %zu (diff %lld)",
			  f2, f0, (long long) f0 - (long long) f2);
	printf("test_cuda_backend: leak check: free %zu / %zu bytes, after destroy %zu, after abort %zu\n",
		   f0, total, f1, f2);
}

/* ------------------------------------------------------------------ main */

/* Load the module and create a context; NULL with a reason when impossible. */
static const char *
load_gpu(void)
{
	static char why[512];
	void	   *h = NULL;
	const char *err = NULL;

	gpu = gdl_test_load_backend(&h, why, sizeof(why));
	if (!gpu)
		return why;
	meminfo = (MemInfoFn) dlsym(h, "gdl_cuda_debug_meminfo");
	gctx = gpu->ctx_create(NULL, &err);
	if (!gctx)
	{
		snprintf(why, sizeof(why), "%s", err ? err : "ctx_create failed");
		return why;
	}
	return NULL;
}

/*
 * Resident tables (gpudl_load on the device): a bag made from a resident
 * table's chosen columns, some through text maps, equals the same rows
 * uploaded, for every value class; the resident outlives contexts, and
 * freeing it gives its device memory back.
 */
static void
test_resident(void)
{
	size_t		free0 = 0,
				free1 = 0,
				total = 0;

	if (meminfo)
		(void) meminfo(&free0, &total);
	for (int iter = 0; iter < 40; iter++)
	{
		int			ncols = 1 + (int) rndn(5);
		int64_t		n = iter % 7 == 0 ? 0 : 1 + rndn(iter % 3 == 0 ? 200000 : 2000);
		int			cls = (int) rndn(4);
		int64_t    *cols[8];
		int32_t    *remap[8];
		int32_t		remap_len[8];
		int			colidx[8];
		const int32_t *maps[8];
		int32_t		lens[8];
		int			nout = 1 + (int) rndn(3);
		int64_t		bytes = 0;
		const char *why = NULL;
		void	   *res;
		Rows		want;
		Pair		p;

		for (int k = 0; k < ncols; k++)
		{
			bool		text = rndn(3) == 0;

			remap_len[k] = text ? 1 + (int32_t) rndn(500) : 0;
			remap[k] = NULL;
			if (text)
			{
				remap[k] = malloc(sizeof(int32_t) * remap_len[k]);
				for (int32_t v = 0; v < remap_len[k]; v++)
					remap[k][v] = (int32_t) rndn(1 << 20);
			}
			cols[k] = malloc(sizeof(int64_t) * (n + 1));
			for (int64_t i = 0; i < n; i++)
				cols[k][i] = text ? rndn(remap_len[k]) : rnd_val(cls, 1000);
		}
		res = gpu->resident_create(ncols, n, (const int64_t *const *) cols, &bytes, &why);
		CHECK_MSG(res != NULL, "resident_create: %s", why ? why : "?");
		if (!res)
			return;
		CHECK(bytes == n * ncols * 8);
		/* the expected rows: chosen columns (repeats allowed), mapped */
		want.arity = nout;
		want.n = n;
		want.v = malloc(sizeof(int64_t) * (n * nout + 1));
		for (int j = 0; j < nout; j++)
		{
			colidx[j] = (int) rndn(ncols);
			maps[j] = remap[colidx[j]];
			lens[j] = remap_len[colidx[j]];
			for (int64_t i = 0; i < n; i++)
			{
				int64_t		x = cols[colidx[j]][i];

				want.v[i * nout + j] = maps[j] ? maps[j][x] : x;
			}
		}
		p.c = upload_one(cpu, cctx, &want);
		p.g = NULL;
		p.arity = nout;
		CHECK_MSG(gpu->from_resident(gctx, res, nout, colidx, maps, lens, &p.g) == GDL_BK_OK,
				  "from_resident: %s", gpu->last_error(gctx));
		/* resident memory is not the context's: destroy and use again */
		if (iter == 5)
		{
			const char *err = NULL;

			gpu->release(gctx, p.g);
			gpu->ctx_destroy(gctx);
			gctx = gpu->ctx_create(NULL, &err);
			CHECK_MSG(gctx != NULL, "ctx_create: %s", err ? err : "?");
			p.g = NULL;
			CHECK(gpu->from_resident(gctx, res, nout, colidx, maps, lens, &p.g) == GDL_BK_OK);
		}
		if (p.g)
			pair_check(p, "from_resident", false);
		pair_release(p);
		/* a column index out of range is refused, the context stays usable */
		{
			GdlBkRel   *bad = NULL;
			int			badidx = ncols;

			CHECK(gpu->from_resident(gctx, res, 1, &badidx, NULL, NULL, &bad) == GDL_BK_ERR_INVALID);
			CHECK(bad == NULL);
		}
		gpu->resident_free(res);
		for (int k = 0; k < ncols; k++)
		{
			free(cols[k]);
			free(remap[k]);
		}
		free(want.v);
	}
	if (meminfo)
	{
		(void) meminfo(&free1, &total);
		CHECK_MSG(free1 + (16 << 20) >= free0, "resident tables leaked %lld bytes",
				  (long long) free0 - (long long) free1);
	}
}

int
main(void)
{
	const char *why;
	const char *err = NULL;
	GdlBkCounters cnt;

	gdl_test_host_install();
	why = load_gpu();
	if (why)
	{
		printf("test_cuda_backend: skipped (no GPU: %s)\n", why);
		return 0;
	}
	cpu = gdl_cpu_backend();
	cctx = cpu->ctx_create(NULL, &err);
	CHECK_MSG(cctx != NULL, "cpu ctx_create: %s", err ? err : "?");
	if (!cctx)
		return gdl_test_summary("test_cuda_backend");

	test_unit();
	test_dedup();
	test_setops();
	test_versions();
	test_runs();
	test_pending();
	test_join();
	test_map();
	test_aggregate();
	test_tc();
	test_resident();
	gpu->counters(gctx, &cnt);
	printf("test_cuda_backend: %d results compared; device peak %lld bytes, %lld transfers\n",
		   n_compared, (long long) cnt.peak_bytes, (long long) cnt.transfers);
	cpu->ctx_destroy(cctx);
	gpu->ctx_destroy(gctx);
	test_memory_limit();
	test_leaks();
	return gdl_test_summary("test_cuda_backend");
}
