/*
 * cpu_set.c — set operations of the CPU backend: dedup (sort + unique),
 * difference, merge (union) and absorb (the semi-naive step: new delta and
 * new full in one go).  Packed relations work on sorted uint64 keys, split
 * over threads; wide ones fall back to a row-by-row merge.
 */
#include "cpu_int.h"

#include <string.h>

/* absorb merges the newest run into the one before once it is 1/RUN_RATIO of it */
#ifndef RUN_RATIO
#define RUN_RATIO 4
#endif

/* Compare row i of a with row j of b lexicographically (signed values). */
int
cpu_row_cmp(const CpuRel *a, int64_t i, const CpuRel *b, int64_t j)
{
	int			c;

	for (c = 0; c < a->arity; c++)
	{
		int64_t		x = cpu_get(a, i, c);
		int64_t		y = cpu_get(b, j, c);

		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

/* First index in sorted k[from..to) with k[i] >= x. */
static int64_t
lower_bound(const uint64_t *k, int64_t from, int64_t to, uint64_t x)
{
	while (from < to)
	{
		int64_t		mid = from + (to - from) / 2;

		if (k[mid] < x)
			from = mid + 1;
		else
			to = mid;
	}
	return from;
}

/* First index >= pos in sorted k[pos..n) with k[i] >= x, by galloping. */
static inline int64_t
gallop(const uint64_t *k, int64_t pos, int64_t n, uint64_t x)
{
	int64_t		step = 1,
				hi;

	if (pos >= n || k[pos] >= x)
		return pos;
	/* k[pos] < x: find hi with k[hi] >= x */
	hi = pos + 1;
	while (hi < n && k[hi] < x)
	{
		pos = hi;
		step <<= 1;
		hi = pos + step;
	}
	if (hi > n)
		hi = n;
	return lower_bound(k, pos + 1, hi, x);
}

/* Shared state of a parallel key set operation. */
typedef struct KeyOp
{
	const uint64_t *a;
	int64_t		na;
	const uint64_t *b;
	int64_t		nb;
	uint64_t   *out;
	int64_t		abeg[CPU_MAX_THREADS + 1];	/* split of a */
	int64_t		bbeg[CPU_MAX_THREADS + 1];	/* matching split of b */
	int64_t		cnt[CPU_MAX_THREADS];
} KeyOp;

/* Split a and b into nt aligned parts: b's part t holds keys in a's part t's range. */
static void
keyop_split(KeyOp *op, int nt)
{
	int			t;

	op->abeg[0] = 0;
	op->bbeg[0] = 0;
	for (t = 1; t < nt; t++)
	{
		op->abeg[t] = (int64_t) ((__int128) op->na * t / nt);
		op->bbeg[t] = op->abeg[t] < op->na ?
			lower_bound(op->b, op->bbeg[t - 1], op->nb, op->a[op->abeg[t]]) : op->nb;
	}
	op->abeg[nt] = op->na;
	op->bbeg[nt] = op->nb;
}

/* Task: a \ b for this part, written at out + abeg. */
static void
diff_task(void *arg, int tid, int nt)
{
	KeyOp	   *op = arg;
	int64_t		i,
				j = op->bbeg[tid],
				jend = op->bbeg[tid + 1];
	uint64_t   *o = op->out + op->abeg[tid];
	int64_t		m = 0;

	for (i = op->abeg[tid]; i < op->abeg[tid + 1]; i++)
	{
		uint64_t	x = op->a[i];

		j = gallop(op->b, j, jend, x);
		if (j < jend && op->b[j] == x)
			continue;
		o[m++] = x;
	}
	op->cnt[tid] = m;
}

/* Task: a U b for this part, written at out + abeg + bbeg. */
static void
union_task(void *arg, int tid, int nt)
{
	KeyOp	   *op = arg;
	int64_t		i = op->abeg[tid],
				iend = op->abeg[tid + 1];
	int64_t		j = op->bbeg[tid],
				jend = op->bbeg[tid + 1];
	uint64_t   *o = op->out + op->abeg[tid] + op->bbeg[tid];
	int64_t		m = 0;

	while (i < iend && j < jend)
	{
		uint64_t	x = op->a[i],
					y = op->b[j];

		if (x < y)
		{
			o[m++] = x;
			i++;
		}
		else if (y < x)
		{
			o[m++] = y;
			j++;
		}
		else
		{
			o[m++] = x;
			i++;
			j++;
		}
	}
	if (i < iend)
	{
		memcpy(o + m, op->a + i, (size_t) (iend - i) * sizeof(uint64_t));
		m += iend - i;
	}
	if (j < jend)
	{
		memcpy(o + m, op->b + j, (size_t) (jend - j) * sizeof(uint64_t));
		m += jend - j;
	}
	op->cnt[tid] = m;
}

/* Move the parts written at 'starts' together; returns the total. */
static int64_t
keyop_compact(KeyOp *op, int nt, bool with_b)
{
	int64_t		pos = 0;
	int			t;

	for (t = 0; t < nt; t++)
	{
		int64_t		start = op->abeg[t] + (with_b ? op->bbeg[t] : 0);

		if (start != pos && op->cnt[t] > 0)
			memmove(op->out + pos, op->out + start, (size_t) op->cnt[t] * sizeof(uint64_t));
		pos += op->cnt[t];
	}
	return pos;
}

/*
 * Run a key set operation on nt threads: a and b split into aligned parts,
 * task run on each part, the parts' results moved together (with_b: each
 * was written at abeg + bbeg, else at abeg).  Returns the count.
 */
static int64_t
keyop_run(const uint64_t *a, int64_t na, const uint64_t *b, int64_t nb, uint64_t *out, int nt,
		  GdlTaskFn task, bool with_b)
{
	KeyOp		op;

	op.a = a;
	op.na = na;
	op.b = b;
	op.nb = nb;
	op.out = out;
	keyop_split(&op, nt);
	gdl_parallel(nt, task, &op);
	gdl_check_stop();	/* stopped tasks leave partial results: raise */
	return keyop_compact(&op, nt, with_b);
}

/* Threads worth using for n items. */
static int
threads_for(CpuCtx *ctx, int64_t n)
{
	return n < (1 << 16) ? 1 : ctx->nthreads;
}

/* out = a \ b (sorted unique keys); returns the count.  out has room for na. */
static int64_t
keys_diff(CpuCtx *ctx, const uint64_t *a, int64_t na, const uint64_t *b, int64_t nb,
		  uint64_t *out)
{
	return keyop_run(a, na, b, nb, out, threads_for(ctx, na), diff_task, false);
}

/* out = a U b (sorted unique keys); returns the count.  out has room for na + nb. */
static int64_t
keys_union(CpuCtx *ctx, const uint64_t *a, int64_t na, const uint64_t *b, int64_t nb,
		   uint64_t *out)
{
	int			nt = threads_for(ctx, na + nb);

	if (na < nb)
	{
		const uint64_t *t = a;
		int64_t		tn = na;

		a = b;
		na = nb;
		b = t;
		nb = tn;
	}
	return keyop_run(a, na, b, nb, out, nt, union_task, true);
}

/* Shared state of a parallel difference against several runs. */
typedef struct RunsDiff
{
	const uint64_t *c;
	int64_t		nc;
	CpuRun	   *const *runs;
	int			nruns;
	uint64_t   *out;
	int64_t		cbeg[CPU_MAX_THREADS + 1];
	int64_t		cnt[CPU_MAX_THREADS];
} RunsDiff;

/* Task: this part of c minus every run, written at out + cbeg. */
static void
runs_diff_task(void *arg, int tid, int nt)
{
	RunsDiff   *rd = arg;
	int64_t		pos[CPU_MAX_RUNS];
	int64_t		i,
				m = 0;
	uint64_t   *o = rd->out ? rd->out + rd->cbeg[tid] : NULL;
	int			k;

	if (rd->cbeg[tid] >= rd->cbeg[tid + 1])
	{
		rd->cnt[tid] = 0;
		return;
	}
	for (k = 0; k < rd->nruns; k++)
		pos[k] = lower_bound(rd->runs[k]->keys, 0, rd->runs[k]->n, rd->c[rd->cbeg[tid]]);
	for (i = rd->cbeg[tid]; i < rd->cbeg[tid + 1]; i++)
	{
		uint64_t	x = rd->c[i];
		bool		found = false;

		for (k = 0; k < rd->nruns && !found; k++)
		{
			const CpuRun *run = rd->runs[k];

			pos[k] = gallop(run->keys, pos[k], run->n, x);
			found = pos[k] < run->n && run->keys[pos[k]] == x;
		}
		if (!found)
		{
			if (o)
				o[m] = x;
			m++;
		}
	}
	rd->cnt[tid] = m;
}

/*
 * out = c minus the union of the runs (all sorted); returns the count.
 * With out NULL, only counts.
 */
static int64_t
keys_diff_runs(CpuCtx *ctx, const uint64_t *c, int64_t nc, CpuRun *const *runs, int nruns,
			   uint64_t *out)
{
	RunsDiff	rd;
	int			nt = threads_for(ctx, nc),
				t;
	int64_t		pos = 0;

	rd.c = c;
	rd.nc = nc;
	rd.runs = runs;
	rd.nruns = nruns;
	rd.out = out;
	for (t = 0; t <= nt; t++)
		rd.cbeg[t] = (int64_t) ((__int128) nc * t / nt);
	gdl_parallel(nt, runs_diff_task, &rd);
	gdl_check_stop();	/* stopped tasks leave partial results: raise */
	for (t = 0; t < nt; t++)
	{
		if (out && rd.cbeg[t] != pos && rd.cnt[t] > 0)
			memmove(out + pos, out + rd.cbeg[t], sizeof(uint64_t) * rd.cnt[t]);
		pos += rd.cnt[t];
	}
	return pos;
}

/*
 * Merge a relation's runs into one (its rows do not change): needed before
 * anything but absorb reads a relation made of several runs.
 */
void
cpu_rel_flatten(CpuCtx *ctx, CpuRel *r)
{
	CpuRun	   *acc;
	int			k;

	if (r->nruns <= 1)
		return;
	/* merge from the smallest (last) runs up: each key moves O(log runs) times */
	acc = r->runs[r->nruns - 1];
	acc->refs++;
	for (k = r->nruns - 2; k >= 0; k--)
	{
		CpuRun	   *m = cpu_run_new(ctx, acc->n + r->runs[k]->n);

		m->n = keys_union(ctx, r->runs[k]->keys, r->runs[k]->n, acc->keys, acc->n, m->keys);
		cpu_run_unref(ctx, acc);
		acc = m;
	}
	for (k = 0; k < r->nruns; k++)
		cpu_run_unref(ctx, r->runs[k]);
	r->runs[0] = acc;
	r->nruns = 1;
	r->keys = acc->keys;
}

/* Turn a flat packed relation into one made of a single run (same rows). */
static void
rel_to_runs(CpuCtx *ctx, CpuRel *r)
{
	CpuRun	   *run;

	if (r->nruns > 0)
		return;
	run = gdl_alloc(sizeof(CpuRun));
	run->keys = r->keys;
	run->n = r->n;
	run->cap = r->kcap;
	run->refs = 1;
	/* the bytes move from the relation to the run */
	r->bytes -= r->kcap;
	r->kcap = 0;
	r->runs[0] = run;
	r->nruns = 1;
}

/* A packed set relation with schema s and bounds (lo, hi) around keys. */
static CpuRel *
packed_set(CpuCtx *ctx, int arity, const CpuSchema *s, const int64_t *lo, const int64_t *hi)
{
	CpuRel	   *r = cpu_rel_new(ctx, arity);

	r->packed = true;
	r->sch = *s;
	memcpy(r->lo, lo, sizeof(int64_t) * arity);
	memcpy(r->hi, hi, sizeof(int64_t) * arity);
	r->is_set = true;
	r->sorted_cols = arity;
	return r;
}

/* Dedup of wide rows: permutation sort then unique gather. */
static CpuRel *
dedup_wide(CpuCtx *ctx, int nin, GdlBkRel *const *in, const int64_t *lo, const int64_t *hi)
{
	int			arity = in[0]->arity;
	CpuRel	   *all = cpu_rel_new(ctx, arity);
	CpuRel	   *r;
	int64_t		total = 0,
				pos = 0,
				i,
				m = 0;
	int64_t    *perm;
	int			cols[CPU_MAX_ARITY];
	int			k,
				c;

	for (k = 0; k < nin; k++)
		total += in[k]->n;
	cpu_rel_alloc_cols(ctx, all, total);
	for (k = 0; k < nin; k++)
	{
		for (c = 0; c < arity; c++)
			cpu_rel_decode_col(in[k], c, 0, in[k]->n, all->cols[c] + pos);
		pos += in[k]->n;
	}
	all->n = total;
	for (c = 0; c < arity; c++)
		cols[c] = c;
	perm = cpu_sort_perm_cols(ctx, all, arity, cols);
	r = cpu_rel_new(ctx, arity);
	memcpy(r->lo, lo, sizeof(int64_t) * arity);
	memcpy(r->hi, hi, sizeof(int64_t) * arity);
	cpu_rel_alloc_cols(ctx, r, total);
	for (i = 0; i < total; i++)
	{
		if (m > 0)
		{
			for (c = 0; c < arity; c++)
				if (all->cols[c][perm[i]] != r->cols[c][m - 1])
					break;
			if (c == arity)
				continue;
		}
		for (c = 0; c < arity; c++)
			r->cols[c][m] = all->cols[c][perm[i]];
		m++;
	}
	gdl_free(perm);
	cpu_rel_free(ctx, all);
	cpu_rel_shrink(ctx, r, m);
	r->is_set = true;
	r->sorted_cols = arity;
	return r;
}

/*
 * Dedup of several bags of which some come grouped by their leading
 * columns (a join driven by an input sorted on the head's first variable)
 * or are sets already: each such bag is made a set on its own (grouped:
 * per-group sort, cheap; a set: as is), the other bags together by one
 * sort, and the sets are then merged, smallest two first.  One sort of all
 * the rows together would throw the grouping away: on CSPA's valueAlias a
 * round's bags are hundreds of millions of rows, half of them grouped.
 * *done is false (nothing done) when too few rows are grouped or sets.
 * Returns a backend status; on an error the sets made so far are freed.
 */
static int
dedup_grouped_apart(CpuCtx *ctx, int nin, GdlBkRel *const *in, int64_t total,
					GdlBkRel **result, bool *done)
{
	GdlBkRel   *sets[64];
	GdlBkRel   *rest[64];
	int			nsets = 0,
				nrest = 0,
				k;
	int64_t		apart = 0;
	int			st = GDL_BK_OK;
	bool		all_sets = true;

	*done = false;
	if (nin > 64)
		return GDL_BK_OK;
	for (k = 0; k < nin; k++)
	{
		CpuRel	   *x = in[k];

		if (x->packed && x->n > 0 && (x->is_set || x->sorted_cols > 0))
			apart += x->n;
		all_sets &= x->is_set || x->n == 0;
	}
	/*
	 * worth it only when a good share of the rows needs no global sort;
	 * sets alone go the usual way (slices of one set are just concatenated)
	 */
	if (all_sets || apart < (int64_t) 1 << 16 || apart * 4 < total)
		return GDL_BK_OK;
	*done = true;
	for (k = 0; k < nin && st == GDL_BK_OK; k++)
	{
		CpuRel	   *x = in[k];

		if (x->n == 0)
			continue;
		if (x->packed && (x->is_set || x->sorted_cols > 0))
		{
			GdlBkRel   *one = NULL;

			st = cpu_op_dedup(ctx, 1, &in[k], &one);
			if (one)
				sets[nsets++] = one;
		}
		else
			rest[nrest++] = in[k];
	}
	if (nrest > 0 && st == GDL_BK_OK)
	{
		GdlBkRel   *one = NULL;

		st = cpu_op_dedup(ctx, nrest, rest, &one);
		if (one)
			sets[nsets++] = one;
	}
	while (nsets > 1 && st == GDL_BK_OK)
	{
		int			a = 0,
					b = 1;
		GdlBkRel   *m = NULL;

		/* the two smallest */
		if (sets[b]->n < sets[a]->n)
			a = 1, b = 0;
		for (k = 2; k < nsets; k++)
			if (sets[k]->n < sets[a]->n)
				b = a, a = k;
			else if (sets[k]->n < sets[b]->n)
				b = k;
		if ((st = cpu_op_merge(ctx, sets[a], sets[b], &m)) != GDL_BK_OK)
			break;
		cpu_rel_free(ctx, sets[a]);
		cpu_rel_free(ctx, sets[b]);
		if (a > b)
		{
			int			t = a;

			a = b;
			b = t;
		}
		sets[a] = m;
		sets[b] = sets[--nsets];
	}
	if (st != GDL_BK_OK)
	{
		for (k = 0; k < nsets; k++)
			cpu_rel_free(ctx, sets[k]);
		return st;
	}
	*result = sets[0];
	return GDL_BK_OK;
}

/* Backend op: the set of rows of the union of the inputs. */
int
cpu_op_dedup(void *vctx, int nin, GdlBkRel *const *in, GdlBkRel **result)
{
	CpuCtx	   *ctx = vctx;
	int			arity = in[0]->arity;
	int64_t		lo[CPU_MAX_ARITY],
				hi[CPU_MAX_ARITY];
	int64_t		total = 0,
				pos = 0,
				m;
	CpuSchema	s;
	CpuRel	   *r;
	uint64_t   *tmp,
			   *sorted;
	int64_t		tcap;
	int			k,
				c;

	*result = NULL;
	cpu_bounds_empty(arity, lo, hi);
	for (k = 0; k < nin; k++)
	{
		if (in[k]->arity != arity)
			return cpu_fail(ctx, GDL_BK_ERR_INVALID, "dedup of relations of different arity");
		cpu_rel_flatten(ctx, in[k]);
		cpu_bounds_union(arity, lo, hi, in[k]->lo, in[k]->hi);
		total += in[k]->n;
	}
	if (nin > 1)
	{
		bool		done;
		int			st = dedup_grouped_apart(ctx, nin, in, total, result, &done);

		if (st != GDL_BK_OK || done)
			return st;
	}
	if (!cpu_schema_make(arity, lo, hi, &s))
	{
		*result = dedup_wide(ctx, nin, in, lo, hi);
		return GDL_BK_OK;
	}
	/* keep the input's schema when it is compatible: cheaper and stable */
	if (in[0]->packed && cpu_schema_compatible(&in[0]->sch, &s) &&
		in[0]->sch.bits[0] >= s.bits[0])
		s = in[0]->sch;
	r = packed_set(ctx, arity, &s, lo, hi);
	cpu_rel_alloc_keys(ctx, r, total);
	if (nin == 1 && in[0]->sorted_cols > 0 && arity > 0 && !in[0]->is_set && in[0]->packed &&
		cpu_schema_compatible(&in[0]->sch, &s))
	{
		/* grouped by leading columns already: sort + unique each group */
		m = cpu_sort_unique_segments(ctx, in[0]->keys, r->keys, total,
									 s.shift[in[0]->sorted_cols - 1]);
		cpu_rel_shrink(ctx, r, m);
		*result = r;
		return GDL_BK_OK;
	}
	for (k = 0; k < nin; k++)
	{
		CpuRel	   *x = in[k];

		if (x->packed && cpu_schema_compatible(&x->sch, &s))
			memcpy(r->keys + pos, x->keys, (size_t) x->n * sizeof(uint64_t));
		else
		{
			int64_t		i;

			for (i = 0; i < x->n; i++)
			{
				uint64_t	key = 0;

				for (c = 0; c < arity; c++)
					key |= cpu_enc(&s, c, cpu_get(x, i, c));
				r->keys[pos + i] = key;
			}
		}
		pos += x->n;
	}
	if (nin == 1 && in[0]->is_set)
	{
		r->n = total;
		*result = r;
		return GDL_BK_OK;
	}
	/* sets in increasing, disjoint key ranges (slices of one set): concatenated */
	for (k = 0; k < nin; k++)
		if (!in[k]->is_set)
			break;
	if (k == nin)
	{
		uint64_t	last = 0;
		bool		ordered = true,
					any = false;

		pos = 0;
		for (k = 0; k < nin && ordered; k++)
		{
			if (in[k]->n == 0)
				continue;
			if (any && r->keys[pos] <= last)
				ordered = false;
			pos += in[k]->n;
			last = r->keys[pos - 1];
			any = true;
		}
		if (ordered)
		{
			r->n = total;
			*result = r;
			return GDL_BK_OK;
		}
	}
	tmp = cpu_buf_get(ctx, (int64_t) sizeof(uint64_t) * (total > 0 ? total : 1), &tcap);
	sorted = cpu_sort_u64(ctx, r->keys, tmp, total);
	if (sorted != r->keys)
	{
		/* the result landed in tmp: swap buffers */
		int64_t		kc = r->kcap;
		uint64_t   *k = r->keys;

		cpu_account(ctx, tcap - kc);
		r->bytes += tcap - kc;
		r->keys = tmp;
		r->kcap = tcap;
		tmp = k;
		tcap = kc;
	}
	cpu_buf_put(ctx, tmp, tcap);
	m = cpu_unique_u64(ctx, r->keys, total);
	cpu_rel_shrink(ctx, r, m);
	*result = r;
	return GDL_BK_OK;
}

/*
 * Bring two relations to one packed schema, when their union bounds fit:
 * The outputs pa and pb are A and B or repacked copies (to be freed by the caller when they
 * differ).  Returns false when the rows need the wide path.
 */
static bool
unify_packed(CpuCtx *ctx, CpuRel *A, CpuRel *B, CpuRel **pa, CpuRel **pb, CpuSchema *s)
{
	int64_t		lo[CPU_MAX_ARITY],
				hi[CPU_MAX_ARITY];
	int			arity = A->arity;

	*pa = A;
	*pb = B;
	if (A->packed && B->packed && cpu_schema_compatible(&A->sch, &B->sch))
	{
		*s = A->sch.bits[0] >= B->sch.bits[0] ? A->sch : B->sch;
		return true;
	}
	memcpy(lo, A->lo, sizeof(int64_t) * arity);
	memcpy(hi, A->hi, sizeof(int64_t) * arity);
	cpu_bounds_union(arity, lo, hi, B->lo, B->hi);
	if (!cpu_schema_make(arity, lo, hi, s))
		return false;
	if (!A->packed || !cpu_schema_compatible(&A->sch, s))
		*pa = cpu_rel_repack(ctx, A, s);
	if (!B->packed || !cpu_schema_compatible(&B->sch, s))
		*pb = cpu_rel_repack(ctx, B, s);
	return true;
}

/* Free the copies unify_packed made. */
static void
unify_done(CpuCtx *ctx, CpuRel *A, CpuRel *B, CpuRel *pa, CpuRel *pb)
{
	if (pa != A)
		cpu_rel_free(ctx, pa);
	if (pb != B)
		cpu_rel_free(ctx, pb);
}

/* Wide set difference (diff) or union of two sets, row by row. */
static CpuRel *
wide_setop(CpuCtx *ctx, CpuRel *A, CpuRel *B, bool diff)
{
	int			arity = A->arity;
	CpuRel	   *r = cpu_rel_new(ctx, arity);
	int64_t		i = 0,
				j = 0,
				m = 0;
	int			c;

	memcpy(r->lo, A->lo, sizeof(r->lo));
	memcpy(r->hi, A->hi, sizeof(r->hi));
	if (!diff)
		cpu_bounds_union(arity, r->lo, r->hi, B->lo, B->hi);
	cpu_rel_alloc_cols(ctx, r, A->n + (diff ? 0 : B->n));
	while (i < A->n || j < B->n)
	{
		int			cmp;
		const CpuRel *src;
		int64_t		row;

		if (i >= A->n)
			cmp = 1;
		else if (j >= B->n)
			cmp = -1;
		else
			cmp = cpu_row_cmp(A, i, B, j);
		if (diff)
		{
			if (i >= A->n)
				break;
			if (cmp > 0)
			{
				j++;
				continue;
			}
			if (cmp == 0)
			{
				i++;
				j++;
				continue;
			}
			src = A;
			row = i++;
		}
		else if (cmp < 0)
		{
			src = A;
			row = i++;
		}
		else if (cmp > 0)
		{
			src = B;
			row = j++;
		}
		else
		{
			src = A;
			row = i++;
			j++;
		}
		for (c = 0; c < arity; c++)
			r->cols[c][m] = cpu_get(src, row, c);
		m++;
	}
	cpu_rel_shrink(ctx, r, m);
	r->is_set = true;
	r->sorted_cols = arity;
	return r;
}

/* Check that two inputs of a set operation are sets of one arity. */
static int
check_sets(CpuCtx *ctx, CpuRel *A, CpuRel *B, const char *op)
{
	if (A->arity != B->arity)
		return cpu_fail(ctx, GDL_BK_ERR_INVALID, "%s of relations of different arity", op);
	if (!A->is_set || !B->is_set)
		return cpu_fail(ctx, GDL_BK_ERR_INVALID, "%s of a relation that is not a set", op);
	return GDL_BK_OK;
}

/*
 * The flat path of difference (minus) and merge (union), shared by both
 * ops: B flattened (A already is), both packed under one schema and their
 * sorted keys subtracted or united, or the wide path when they do not pack.
 */
static int
flat_setop(CpuCtx *ctx, CpuRel *A, CpuRel *B, bool minus, GdlBkRel **result)
{
	CpuRel	   *pa,
			   *pb,
			   *r;
	CpuSchema	s;

	cpu_rel_flatten(ctx, B);
	if (!unify_packed(ctx, A, B, &pa, &pb, &s))
	{
		*result = wide_setop(ctx, A, B, minus);
		return GDL_BK_OK;
	}
	r = packed_set(ctx, A->arity, &s, A->lo, A->hi);
	if (minus)
	{
		cpu_rel_alloc_keys(ctx, r, pa->n);
		cpu_rel_shrink(ctx, r, keys_diff(ctx, pa->keys, pa->n, pb->keys, pb->n, r->keys));
	}
	else
	{
		cpu_bounds_union(A->arity, r->lo, r->hi, B->lo, B->hi);
		cpu_rel_alloc_keys(ctx, r, pa->n + pb->n);
		cpu_rel_shrink(ctx, r, keys_union(ctx, pa->keys, pa->n, pb->keys, pb->n, r->keys));
	}
	unify_done(ctx, A, B, pa, pb);
	*result = r;
	return GDL_BK_OK;
}

/* Backend op: set A minus set B. */
int
cpu_op_difference(void *vctx, GdlBkRel *A, GdlBkRel *B, GdlBkRel **result)
{
	CpuCtx	   *ctx = vctx;
	CpuRel	   *r;
	int			st;

	*result = NULL;
	if ((st = check_sets(ctx, A, B, "difference")) != GDL_BK_OK)
		return st;
	cpu_rel_flatten(ctx, A);
	if (B->nruns > 1 && A->packed && B->packed && cpu_schema_compatible(&A->sch, &B->sch))
	{
		/* B made of runs (a full relation): subtract them without merging */
		r = packed_set(ctx, A->arity, &A->sch, A->lo, A->hi);
		cpu_rel_alloc_keys(ctx, r, A->n);
		cpu_rel_shrink(ctx, r, keys_diff_runs(ctx, A->keys, A->n, B->runs, B->nruns, r->keys));
		*result = r;
		return GDL_BK_OK;
	}
	return flat_setop(ctx, A, B, true, result);
}

/* Backend op: union of sets A and B. */
int
cpu_op_merge(void *vctx, GdlBkRel *A, GdlBkRel *B, GdlBkRel **result)
{
	CpuCtx	   *ctx = vctx;
	int			st;

	*result = NULL;
	if ((st = check_sets(ctx, A, B, "merge")) != GDL_BK_OK)
		return st;
	cpu_rel_flatten(ctx, A);
	return flat_setop(ctx, A, B, false, result);
}

/*
 * Whether merging runs of n keys in all stays under the context's memory
 * target (the merged copy lives next to its sources until they are
 * dropped).  Without a target, always.  Not merging only costs a longer
 * list of runs to search, so full is never copied when that would not fit.
 */
static bool
merge_fits(CpuCtx *ctx, int64_t n)
{
	if (ctx->limit <= 0)
		return true;
	return ctx->bytes + n * (int64_t) sizeof(uint64_t) <= ctx->limit / 16 * 14;
}

/*
 * absorb on runs: delta = cand minus every run of full (one galloping pass),
 * new full = full's runs (shared) plus delta as a new run, then the last
 * runs merged while the newest is at least a quarter of the one before
 * (and, under a memory target, while the merged copy fits).
 */
static void
absorb_runs(CpuCtx *ctx, CpuRel *full, CpuRel *cand, const CpuSchema *s,
			const int64_t *lo, const int64_t *hi, CpuRel **new_full, CpuRel **delta)
{
	CpuRel	   *d = packed_set(ctx, full->arity, s, lo, hi);
	CpuRel	   *nf = packed_set(ctx, full->arity, s, lo, hi);
	CpuRun	   *drun;
	int			k;

	rel_to_runs(ctx, full);
	if (!merge_fits(ctx, cand->n))
	{
		/*
		 * memory is short: count the new keys first; when all are new (a
		 * split rule's pieces were reduced against full already) the delta
		 * shares cand's keys, else it gets a buffer of the exact size
		 */
		int64_t		nnew = keys_diff_runs(ctx, cand->keys, cand->n, full->runs, full->nruns, NULL);

		if (nnew == cand->n && cand->n > 0 && (cand->nruns > 0 || cand->kcap > 0))
		{
			rel_to_runs(ctx, cand);
			drun = cand->runs[0];
			drun->refs++;
		}
		else
		{
			drun = cpu_run_new(ctx, nnew);
			drun->n = keys_diff_runs(ctx, cand->keys, cand->n, full->runs, full->nruns, drun->keys);
		}
	}
	else
	{
		drun = cpu_run_new(ctx, cand->n);
		drun->n = keys_diff_runs(ctx, cand->keys, cand->n, full->runs, full->nruns, drun->keys);
	}
	d->runs[0] = drun;
	d->nruns = 1;
	d->keys = drun->keys;
	d->n = drun->n;
	nf->n = full->n + drun->n;
	for (k = 0; k < full->nruns; k++)
	{
		nf->runs[k] = full->runs[k];
		nf->runs[k]->refs++;
	}
	nf->nruns = full->nruns;
	if (drun->n > 0)
	{
		nf->runs[nf->nruns++] = drun;
		drun->refs++;
	}
	while (nf->nruns >= 2 &&
		   ((nf->runs[nf->nruns - 1]->n * RUN_RATIO >= nf->runs[nf->nruns - 2]->n &&
			 merge_fits(ctx, nf->runs[nf->nruns - 2]->n + nf->runs[nf->nruns - 1]->n)) ||
			nf->nruns >= CPU_MAX_RUNS))
	{
		CpuRun	   *a = nf->runs[nf->nruns - 2],
				   *b = nf->runs[nf->nruns - 1];
		CpuRun	   *m = cpu_run_new(ctx, a->n + b->n);

		m->n = keys_union(ctx, a->keys, a->n, b->keys, b->n, m->keys);
		cpu_run_unref(ctx, a);
		cpu_run_unref(ctx, b);
		nf->runs[nf->nruns - 2] = m;
		nf->nruns--;
	}
	nf->keys = nf->nruns == 1 ? nf->runs[0]->keys : NULL;
	if (nf->nruns == 0)
	{
		/* empty full and empty delta */
		nf->runs[0] = cpu_run_new(ctx, 0);
		nf->nruns = 1;
		nf->keys = nf->runs[0]->keys;
	}
	*delta = d;
	*new_full = nf;
}

/* Backend op: delta = cand \ full and new_full = full U cand, in one step. */
int
cpu_op_absorb(void *vctx, GdlBkRel *full, GdlBkRel *cand,
			  GdlBkRel **new_full, GdlBkRel **delta)
{
	CpuCtx	   *ctx = vctx;
	CpuRel	   *pf,
			   *pc,
			   *d,
			   *nf;
	CpuSchema	s;
	int64_t		lo[CPU_MAX_ARITY],
				hi[CPU_MAX_ARITY];
	int			st;

	*new_full = NULL;
	*delta = NULL;
	if ((st = check_sets(ctx, full, cand, "absorb")) != GDL_BK_OK)
		return st;
	cpu_rel_flatten(ctx, cand);
	memcpy(lo, full->lo, sizeof(lo));
	memcpy(hi, full->hi, sizeof(hi));
	cpu_bounds_union(full->arity, lo, hi, cand->lo, cand->hi);
	if (full->packed && cand->packed && cpu_schema_compatible(&full->sch, &cand->sch))
	{
		/* the delta shares the new full's bounds, so both keep one schema */
		s = full->sch.bits[0] >= cand->sch.bits[0] ? full->sch : cand->sch;
		absorb_runs(ctx, full, cand, &s, lo, hi, new_full, delta);
		return GDL_BK_OK;
	}
	cpu_rel_flatten(ctx, full);
	if (!unify_packed(ctx, full, cand, &pf, &pc, &s))
	{
		d = wide_setop(ctx, cand, full, true);
		nf = wide_setop(ctx, full, d, false);
		*delta = d;
		*new_full = nf;
		return GDL_BK_OK;
	}
	d = packed_set(ctx, full->arity, &s, lo, hi);
	cpu_rel_alloc_keys(ctx, d, pc->n);
	cpu_rel_shrink(ctx, d, keys_diff(ctx, pc->keys, pc->n, pf->keys, pf->n, d->keys));
	nf = packed_set(ctx, full->arity, &s, lo, hi);
	cpu_rel_alloc_keys(ctx, nf, pf->n + d->n);
	nf->n = keys_union(ctx, pf->keys, pf->n, d->keys, d->n, nf->keys);
	unify_done(ctx, full, cand, pf, pc);
	*delta = d;
	*new_full = nf;
	return GDL_BK_OK;
}
