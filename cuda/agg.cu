/*
 * agg.cu — group by + aggregates (count, sum, min, max).
 *
 * Rows are ordered by the group columns (the lexicographic permutation of
 * sort.cu), group heads are flagged and compacted into segment offsets,
 * and each aggregate is one CUB segmented reduction over the permuted
 * values with a combining operator that knows the value kind: integer sums
 * are exact in 128 bits (overflow is an error only when the group's true
 * sum does not fit int64), float8 min/max order NaN above everything (as
 * PostgreSQL does), text min/max compare ranks.  A last kernel writes one
 * row per group.
 */
#include <cub/cub.cuh>
#include <string.h>

#include "cu_int.cuh"

/* A partial aggregate: a value (low word of a 128-bit sum), high word, empty flag. */
struct AggAcc
{
	long long	v;
	long long	hi;
	int			empty;
	int			pad;
};

/* The aggregates of one call, as kernels see them. */
struct AggSpec
{
	int			ngroup;
	int			nagg;
	int			group[CU_MAX_ARITY];
	int8_t		kind[CU_MAX_ARITY];
	int8_t		valkind[CU_MAX_ARITY];
	int8_t		col[CU_MAX_ARITY];
};

/* Order of two float8 values with NaN greatest: -1, 0 or 1. */
static __device__ __forceinline__ int
fcmp(long long a, long long b)
{
	double		x = __longlong_as_double(a),
				y = __longlong_as_double(b);
	bool		nx = x != x,
				ny = y != y;

	if (nx || ny)
		return nx == ny ? 0 : (nx ? 1 : -1);
	return x < y ? -1 : (x > y ? 1 : 0);
}

/* Combining operator of one aggregate. */
struct AggOp
{
	int			kind;
	int			valkind;
	const int32_t *ranks;
	int32_t		nranks;

	/* Rank of a text id (the id itself outside the table). */
	__device__ __forceinline__ long long rank(long long id) const
	{
		return (id >= 0 && id < nranks) ? ranks[id] : id;
	}

	/* Combine two partial aggregates. */
	__device__ __forceinline__ AggAcc operator()(const AggAcc &a, const AggAcc &b) const
	{
		AggAcc		r = a;
		int			c;

		if (a.empty)
			return b;
		if (b.empty)
			return a;
		if (kind == GDL_BK_AGG_SUM)
		{
			if (valkind == GDL_BK_VAL_FLOAT)
				r.v = __double_as_longlong(__longlong_as_double(a.v) + __longlong_as_double(b.v));
			else
			{
				unsigned long long lo = (unsigned long long) a.v + (unsigned long long) b.v;

				r.hi = a.hi + b.hi + (lo < (unsigned long long) a.v ? 1 : 0);
				r.v = (long long) lo;
			}
			return r;
		}
		if (valkind == GDL_BK_VAL_FLOAT)
			c = fcmp(a.v, b.v);
		else if (valkind == GDL_BK_VAL_TEXT)
			c = rank(a.v) < rank(b.v) ? -1 : (rank(a.v) > rank(b.v) ? 1 : 0);
		else
			c = a.v < b.v ? -1 : (a.v > b.v ? 1 : 0);
		if (kind == GDL_BK_AGG_MIN)
			return c <= 0 ? a : b;
		return c >= 0 ? a : b;
	}
};

/* Kernel: flag the first row of each group in permutation order. */
static __global__ void
k_group_heads(DRel in, const uint32_t *perm, AggSpec sp, uint8_t *flags)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t p = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; p < in.n; p += stride)
	{
		bool		head = p == 0;

		for (int k = 0; !head && k < sp.ngroup; k++)
			if (dget(in, perm[p], sp.group[k]) != dget(in, perm[p - 1], sp.group[k]))
				head = true;
		flags[p] = head ? 1 : 0;
	}
}

/* Kernel: 64-bit segment offsets from the head positions, plus the end n. */
static __global__ void
k_offsets(const uint32_t *heads, int64_t g, int64_t n, int64_t *off)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i <= g; i += stride)
		off[i] = i < g ? (int64_t) heads[i] : n;
}

/* Kernel: acc[p] = the aggregated column of row perm[p], as a partial. */
static __global__ void
k_agg_values(DRel in, const uint32_t *perm, int col, bool sum_int, AggAcc *acc)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t p = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; p < in.n; p += stride)
	{
		AggAcc		a;
		long long	v = dget(in, perm[p], col);

		a.v = v;
		a.hi = (sum_int && v < 0) ? -1 : 0;
		a.empty = 0;
		a.pad = 0;
		acc[p] = a;
	}
}

/* Kernel: one output row per group; an integer sum that does not fit sets *err. */
static __global__ void
k_agg_out(DRel in, const uint32_t *perm, const int64_t *off, int64_t g, AggSpec sp,
		  const AggAcc *acc, DOut o, unsigned long long *err)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;
	int64_t		v[CU_MAX_ARITY];

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < g; i += stride)
	{
		int64_t		row = perm[off[i]];

		for (int k = 0; k < sp.ngroup; k++)
			v[k] = dget(in, row, sp.group[k]);
		for (int a = 0; a < sp.nagg; a++)
		{
			const AggAcc *x = &acc[(int64_t) a * g + i];

			if (sp.kind[a] == GDL_BK_AGG_COUNT)
				v[sp.ngroup + a] = off[i + 1] - off[i];
			else
			{
				if (sp.kind[a] == GDL_BK_AGG_SUM && sp.valkind[a] != GDL_BK_VAL_FLOAT &&
					x->hi != (x->v < 0 ? -1 : 0))
					atomicMin(err, (unsigned long long) i);
				v[sp.ngroup + a] = x->v;
			}
		}
		dput(o, i, v);
	}
}

/* Check the arguments of an aggregate against the input's arity. */
static int
agg_check(CuCtx *c, const CuRel *in, int ngroup, const int *group, int nagg, const GdlBkAgg *aggs)
{
	for (int k = 0; k < ngroup; k++)
		if (group[k] < 0 || group[k] >= in->arity)
			return cu_fail(c, GDL_BK_ERR_INVALID, "aggregate: group column out of range");
	for (int a = 0; a < nagg; a++)
	{
		if (aggs[a].kind < GDL_BK_AGG_COUNT || aggs[a].kind > GDL_BK_AGG_MAX ||
			aggs[a].valkind < GDL_BK_VAL_INT || aggs[a].valkind > GDL_BK_VAL_TEXT)
			return cu_fail(c, GDL_BK_ERR_INVALID, "aggregate: bad kind");
		if (aggs[a].kind != GDL_BK_AGG_COUNT && (aggs[a].col < 0 || aggs[a].col >= in->arity))
			return cu_fail(c, GDL_BK_ERR_INVALID, "aggregate: column out of range");
	}
	return GDL_BK_OK;
}

/* Bounds of the output columns (exact where inherited, else unknown). */
static void
agg_bounds(const CuRel *in, const AggSpec &sp, int64_t *lo, int64_t *hi)
{
	for (int k = 0; k < sp.ngroup; k++)
	{
		lo[k] = in->lo[sp.group[k]];
		hi[k] = in->hi[sp.group[k]];
	}
	for (int a = 0; a < sp.nagg; a++)
	{
		int			j = sp.ngroup + a;

		if (sp.kind[a] == GDL_BK_AGG_COUNT)
		{
			lo[j] = 1;
			hi[j] = in->n;
		}
		else if (sp.kind[a] != GDL_BK_AGG_SUM && sp.valkind[a] != GDL_BK_VAL_FLOAT)
		{
			lo[j] = in->lo[sp.col[a]];
			hi[j] = in->hi[sp.col[a]];
		}
		else
		{
			lo[j] = INT64_MIN;
			hi[j] = INT64_MAX;
		}
	}
}

/* aggregate: see gdl_backend.h. */
int
cu_op_aggregate(CuCtx *c, CuRel *in, int ngroup, const int *group,
				int nagg, const GdlBkAgg *aggs, CuRel **result)
{
	int			arity = ngroup + nagg;
	int64_t		n = in->n,
				g = 0,
				herr = 0;
	int64_t		lo[CU_MAX_ARITY],
				hi[CU_MAX_ARITY];
	AggSpec		sp;
	DBuf		perm,
				flags,
				heads,
				off,
				acc;
	DRel		d = rel_drel(in);
	CuRel	   *r;
	unsigned long long *derr = c->dscratch + 1;

	CU_OK(agg_check(c, in, ngroup, group, nagg, aggs));
	memset(&sp, 0, sizeof(sp));
	sp.ngroup = ngroup;
	sp.nagg = nagg;
	memcpy(sp.group, group, sizeof(int) * ngroup);
	for (int a = 0; a < nagg; a++)
	{
		sp.kind[a] = (int8_t) aggs[a].kind;
		sp.valkind[a] = (int8_t) aggs[a].valkind;
		sp.col[a] = (int8_t) (aggs[a].kind == GDL_BK_AGG_COUNT ? 0 : aggs[a].col);
	}
	agg_bounds(in, sp, lo, hi);
	if (n == 0 || arity == 0)
	{
		if (arity == 0)
			return rel_unit(c, n > 0 ? 1 : 0, result);
		CU_OK(rel_new(c, arity, cu_packable(arity, lo, hi) ? L_PACKED : L_WIDE, 0, result));
		return GDL_BK_OK;
	}

	/* order by group, find the groups */
	CU_OK(sort_perm(c, d, ngroup, group, in->lo, in->hi, perm));
	CU_OK(flags.get(c, n));
	c->cnt.launches++;
	k_group_heads<<<cu_grid(n), CU_BLOCK, 0, c->stream>>>(d, perm.as<uint32_t>(), sp,
														   flags.as<uint8_t>());
	CU_LAUNCHED(c);
	CU_OK(select_flagged(c, flags.as<uint8_t>(), n, heads, &g));
	CU_OK(off.get(c, sizeof(int64_t) * (g + 1)));
	c->cnt.launches++;
	k_offsets<<<cu_grid(g + 1), CU_BLOCK, 0, c->stream>>>(heads.as<uint32_t>(), g, n,
														  off.as<int64_t>());
	CU_LAUNCHED(c);

	/* one segmented reduction per aggregate */
	CU_OK(acc.get(c, sizeof(AggAcc) * g * (nagg > 0 ? nagg : 1)));
	if (nagg > 0)
	{
		DBuf		vals;

		CU_OK(vals.get(c, sizeof(AggAcc) * n));
		for (int a = 0; a < nagg; a++)
		{
			AggOp		op;
			AggAcc		init;
			AggAcc	   *outp = acc.as<AggAcc>() + (int64_t) a * g;
			const int64_t *offp = off.as<int64_t>();

			if (aggs[a].kind == GDL_BK_AGG_COUNT)
				continue;
			op.kind = aggs[a].kind;
			op.valkind = aggs[a].valkind;
			op.ranks = c->dranks;
			op.nranks = c->nranks;
			init.v = 0;
			init.hi = 0;
			init.empty = 1;
			init.pad = 0;
			c->cnt.launches++;
			k_agg_values<<<cu_grid(n), CU_BLOCK, 0, c->stream>>>(
				d, perm.as<uint32_t>(), aggs[a].col,
				aggs[a].kind == GDL_BK_AGG_SUM && aggs[a].valkind != GDL_BK_VAL_FLOAT,
				vals.as<AggAcc>());
			CU_LAUNCHED(c);
			CU_OK(cu_cub(c, [&](void *t, size_t &b) {
				return cub::DeviceSegmentedReduce::Reduce(t, b, vals.as<AggAcc>(), outp, g,
														  offp, offp + 1, op, init, c->stream);
			}));
		}
	}

	/* one row per group */
	CU_OK(rel_new_bounded(c, arity, g, lo, hi, &r));
	r->is_set = true;
	herr = -1;
	if (cudaMemsetAsync(derr, 0xff, sizeof(unsigned long long), c->stream) != cudaSuccess)
	{
		rel_free(c, r);
		return cu_fail(c, GDL_BK_ERR_DEVICE, "aggregate: memset failed");
	}
	c->cnt.launches++;
	k_agg_out<<<cu_grid(g), CU_BLOCK, 0, c->stream>>>(d, perm.as<uint32_t>(), off.as<int64_t>(), g,
													  sp, acc.as<AggAcc>(), rel_dout(r), derr);
	if (cudaGetLastError() != cudaSuccess || cu_read_i64(c, derr, 1, &herr) != GDL_BK_OK)
	{
		rel_free(c, r);
		return cu_fail(c, GDL_BK_ERR_DEVICE, "aggregate: kernel failed");
	}
	if (herr != -1)
	{
		rel_free(c, r);
		return cu_fail(c, GDL_BK_ERR_OVERFLOW, "bigint out of range (sum of group %lld)",
					   (long long) herr);
	}
	*result = r;
	return GDL_BK_OK;
}
