/*
 * map.cu — filter and compute: the expression bytecode of gdl_backend.h
 * interpreted per row on the device.
 *
 * One kernel evaluates, for each row, the filters in order (stopping at the
 * first that gives 0) and then the outputs, into a temporary wide buffer;
 * it flags the kept rows, records the error of the LOWEST failing row (so
 * the error is the one a sequential evaluation would meet first), and
 * reduces exact bounds of every output column over the kept rows.  One
 * host sync reads error and bounds; the kept rows are then compacted into
 * the output's layout (packed when the bounds allow it).
 */
#include <stdlib.h>
#include <string.h>

#include "cu_int.cuh"

/* Error codes in the error word: (row << 8) | status. */
#define MAP_NO_ERROR (~0ULL)

/* Expression table entry on the device. */
struct DExpr
{
	int			start;
	int			len;
};

/* ------------------------------------------------------------ device */

/* Evaluate one expression on row i; GDL_BK_OK and *res, or an error status. */
static __device__ int
eval_expr(const GdlBkInsn *code, DExpr e, const DRel &in, int64_t i,
		  const int32_t *ranks, int32_t nranks, int64_t *res)
{
	int64_t		st[GDL_BK_MAX_STACK];
	int			sp = 0;

	for (int pc = e.start; pc < e.start + e.len; pc++)
	{
		GdlBkInsn	ins = code[pc];
		int64_t		a = 0,
					b = 0,
					r = 0;
		double		fa,
					fb;

		switch (ins.op)
		{
			case GDL_BC_COL:
				st[sp++] = dget(in, i, ins.arg);
				continue;
			case GDL_BC_CONST:
				st[sp++] = ins.imm;
				continue;
			case GDL_BC_NOP:
				continue;
			case GDL_BC_NEG:
				if (st[sp - 1] == INT64_MIN)
					return GDL_BK_ERR_OVERFLOW;
				st[sp - 1] = -st[sp - 1];
				continue;
			case GDL_BC_FNEG:
				st[sp - 1] = __double_as_longlong(-__longlong_as_double(st[sp - 1]));
				continue;
			case GDL_BC_I2F:
				st[sp - 1] = __double_as_longlong((double) st[sp - 1]);
				continue;
			case GDL_BC_RANK:
				a = st[sp - 1];
				if (a < 0 || a >= nranks)
					return GDL_BK_ERR_INVALID;
				st[sp - 1] = ranks[a];
				continue;
			default:
				break;
		}
		/* binary operators */
		b = st[--sp];
		a = st[sp - 1];
		fa = __longlong_as_double(a);
		fb = __longlong_as_double(b);
		switch (ins.op)
		{
			case GDL_BC_ADD:
				r = (int64_t) ((uint64_t) a + (uint64_t) b);
				if (((a ^ r) & (b ^ r)) < 0)
					return GDL_BK_ERR_OVERFLOW;
				break;
			case GDL_BC_SUB:
				r = (int64_t) ((uint64_t) a - (uint64_t) b);
				if (((a ^ b) & (a ^ r)) < 0)
					return GDL_BK_ERR_OVERFLOW;
				break;
			case GDL_BC_MUL:
				{
					int64_t		h = __mul64hi(a, b);

					r = (int64_t) ((uint64_t) a * (uint64_t) b);
					if (h != (r >> 63))
						return GDL_BK_ERR_OVERFLOW;
				}
				break;
			case GDL_BC_DIV:
				if (b == 0)
					return GDL_BK_ERR_DIV_ZERO;
				if (a == INT64_MIN && b == -1)
					return GDL_BK_ERR_OVERFLOW;
				r = a / b;
				break;
			case GDL_BC_MOD:
				if (b == 0)
					return GDL_BK_ERR_DIV_ZERO;
				r = b == -1 ? 0 : a % b;
				break;
			case GDL_BC_FADD:
				r = __double_as_longlong(fa + fb);
				break;
			case GDL_BC_FSUB:
				r = __double_as_longlong(fa - fb);
				break;
			case GDL_BC_FMUL:
				r = __double_as_longlong(fa * fb);
				break;
			case GDL_BC_FDIV:
				if (fb == 0.0)
					return GDL_BK_ERR_DIV_ZERO;
				r = __double_as_longlong(fa / fb);
				break;
			case GDL_BC_EQ:
				r = a == b;
				break;
			case GDL_BC_NE:
				r = a != b;
				break;
			case GDL_BC_LT:
				r = a < b;
				break;
			case GDL_BC_LE:
				r = a <= b;
				break;
			case GDL_BC_GT:
				r = a > b;
				break;
			case GDL_BC_GE:
				r = a >= b;
				break;
			case GDL_BC_FEQ:
				r = fa == fb;
				break;
			case GDL_BC_FNE:
				r = fa != fb;
				break;
			case GDL_BC_FLT:
				r = fa < fb;
				break;
			case GDL_BC_FLE:
				r = fa <= fb;
				break;
			case GDL_BC_FGT:
				r = fa > fb;
				break;
			case GDL_BC_FGE:
				r = fa >= fb;
				break;
			default:
				return GDL_BK_ERR_INVALID;
		}
		st[sp - 1] = r;
	}
	*res = st[0];
	return GDL_BK_OK;
}

/* Warp minimum and maximum of v over the lanes with 'ok'. */
static __device__ __forceinline__ void
warp_bounds(bool ok, int64_t v, int64_t &mn, int64_t &mx)
{
	mn = ok ? v : INT64_MAX;
	mx = ok ? v : INT64_MIN;
	for (int d = 16; d >= 1; d >>= 1)
	{
		int64_t		a = __shfl_xor_sync(0xffffffffu, mn, d);
		int64_t		b = __shfl_xor_sync(0xffffffffu, mx, d);

		mn = a < mn ? a : mn;
		mx = b > mx ? b : mx;
	}
}

/*
 * Kernel: evaluate filters and outputs of every row (warp-uniform loop, for
 * the bound reductions).  stats[0] = lowest error word, stats[1 + 2j] and
 * stats[2 + 2j] = min and max of output j over kept rows.
 */
static __global__ void
k_map(DRel in, const GdlBkInsn *code, const DExpr *ex, int nfilter, int nout,
	  const int32_t *ranks, int32_t nranks, int64_t *tmp, uint8_t *keep, long long *stats)
{
	int			lane = threadIdx.x & 31;
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t base = (int64_t) blockIdx.x * blockDim.x + threadIdx.x - lane; base < in.n;
		 base += stride)
	{
		int64_t		i = base + lane;
		bool		ok = i < in.n;
		int			err = GDL_BK_OK;
		int64_t		v = 0;

		for (int f = 0; ok && f < nfilter; f++)
		{
			err = eval_expr(code, ex[f], in, i, ranks, nranks, &v);
			if (err != GDL_BK_OK || v == 0)
				ok = false;
		}
		for (int j = 0; ok && j < nout; j++)
		{
			err = eval_expr(code, ex[nfilter + j], in, i, ranks, nranks, &v);
			if (err != GDL_BK_OK)
				ok = false;
			else
				tmp[(int64_t) j * in.n + i] = v;
		}
		if (err != GDL_BK_OK)
			atomicMin((unsigned long long *) &stats[0],
					  ((unsigned long long) i << 8) | (unsigned long long) err);
		if (i < in.n)
			keep[i] = ok ? 1 : 0;
		for (int j = 0; j < nout; j++)
		{
			int64_t		mn,
						mx;

			warp_bounds(ok, ok ? tmp[(int64_t) j * in.n + i] : 0, mn, mx);
			if (lane == 0 && mn <= mx)
			{
				atomicMin(&stats[1 + 2 * j], (long long) mn);
				atomicMax(&stats[2 + 2 * j], (long long) mx);
			}
		}
	}
}

/* Kernel: output row k = temporary row ids[k] (or k when ids is NULL). */
static __global__ void
k_map_out(const int64_t *tmp, int64_t ld, const uint32_t *ids, int64_t m, DOut o)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;
	int64_t		v[CU_MAX_ARITY];

	for (int64_t k = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; k < m; k += stride)
	{
		int64_t		i = ids ? (int64_t) ids[k] : k;

		for (int j = 0; j < o.arity; j++)
			v[j] = tmp[(int64_t) j * ld + i];
		dput(o, k, v);
	}
}

/* The columns of a pure projection. */
struct ProjSpec
{
	int			nout;
	int8_t		col[CU_MAX_ARITY];
};

/* Kernel: output column j = input column ps.col[j]. */
template < int FIXED >
static __global__ void
k_project(DRel in, ProjSpec ps, DOut o)
{
	int64_t		stride = (int64_t) gridDim.x * blockDim.x;

	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < in.n; i += stride)
	{
		if constexpr (FIXED > 0)
		{
			int64_t		v[FIXED < 2 ? 2 : FIXED];

#pragma unroll
			for (int j = 0; j < FIXED; j++)
				v[j] = dget(in, i, ps.col[j]);
			dput(o, i, v);
		}
		else
		{
			int64_t		v[CU_MAX_ARITY];

			for (int j = 0; j < ps.nout; j++)
				v[j] = dget(in, i, ps.col[j]);
			dput(o, i, v);
		}
	}
}

/* --------------------------------------------------------------- host */

/* Whether expression e is a single column reference. */
static bool
is_col(const GdlBkExpr *e)
{
	return e->ncode == 1 && e->code[0].op == GDL_BC_COL;
}

/*
 * A map without filters whose outputs are plain columns: no evaluation,
 * no sync; the identity shares the input's storage.
 */
static int
map_project(CuCtx *c, CuRel *in, int nout, const GdlBkExpr *out, CuRel **result)
{
	ProjSpec	ps;
	int64_t		lo[CU_MAX_ARITY],
				hi[CU_MAX_ARITY];
	bool		identity = nout == in->arity;
	CuRel	   *r;
	DOut		o;
	unsigned	g;

	ps.nout = nout;
	for (int j = 0; j < nout; j++)
	{
		ps.col[j] = (int8_t) out[j].code[0].arg;
		lo[j] = in->lo[ps.col[j]];
		hi[j] = in->hi[ps.col[j]];
		if (ps.col[j] != j)
			identity = false;
	}
	if (identity)
		return rel_share(c, in, result);
	if (nout == 0)
		return rel_unit(c, in->n, result);
	CU_OK(rel_new_bounded(c, nout, in->n, lo, hi, &r));
	if (in->n > 0)
	{
		o = rel_dout(r);
		g = cu_grid(in->n);
		c->cnt.launches++;
		if (o.layout == L_PACKED && nout == 2)
			k_project<2><<<g, CU_BLOCK, 0, c->stream>>>(rel_drel(in), ps, o);
		else if (o.layout == L_PACKED)
			k_project<1><<<g, CU_BLOCK, 0, c->stream>>>(rel_drel(in), ps, o);
		else
			k_project<0><<<g, CU_BLOCK, 0, c->stream>>>(rel_drel(in), ps, o);
		if (cudaGetLastError() != cudaSuccess)
		{
			rel_free(c, r);
			return cu_fail(c, GDL_BK_ERR_DEVICE, "map: kernel launch failed");
		}
	}
	*result = r;
	return GDL_BK_OK;
}

/* Check an expression's code: operands, columns, stack depth. */
static int
check_expr(CuCtx *c, const GdlBkExpr *e, int arity)
{
	int			depth = 0;

	if (e->ncode < 1 || !e->code)
		return cu_fail(c, GDL_BK_ERR_INVALID, "map: empty expression");
	for (int pc = 0; pc < e->ncode; pc++)
	{
		int			op = e->code[pc].op;

		if (op == GDL_BC_COL && (e->code[pc].arg < 0 || e->code[pc].arg >= arity))
			return cu_fail(c, GDL_BK_ERR_INVALID, "map: column %d out of range", e->code[pc].arg);
		if (op == GDL_BC_COL || op == GDL_BC_CONST)
			depth++;
		else if (op == GDL_BC_NEG || op == GDL_BC_FNEG || op == GDL_BC_I2F ||
				 op == GDL_BC_RANK || op == GDL_BC_NOP)
		{
			if (op != GDL_BC_NOP && depth < 1)
				return cu_fail(c, GDL_BK_ERR_INVALID, "map: stack underflow");
		}
		else if (op >= GDL_BC_ADD && op <= GDL_BC_FGE)
		{
			if (depth < 2)
				return cu_fail(c, GDL_BK_ERR_INVALID, "map: stack underflow");
			depth--;
		}
		else
			return cu_fail(c, GDL_BK_ERR_INVALID, "map: unknown opcode %d", op);
		if (depth > GDL_BK_MAX_STACK)
			return cu_fail(c, GDL_BK_ERR_INVALID, "map: expression too deep");
	}
	if (depth != 1)
		return cu_fail(c, GDL_BK_ERR_INVALID, "map: expression leaves %d values", depth);
	return GDL_BK_OK;
}

/* The message of a row's evaluation error. */
static int
map_error(CuCtx *c, unsigned long long w)
{
	int			st = (int) (w & 0xff);
	long long	row = (long long) (w >> 8);

	if (st == GDL_BK_ERR_DIV_ZERO)
		return cu_fail(c, st, "division by zero (row %lld)", row);
	if (st == GDL_BK_ERR_OVERFLOW)
		return cu_fail(c, st, "bigint out of range (row %lld)", row);
	return cu_fail(c, st, "text id outside the rank table (row %lld)", row);
}

/* Copy the expressions' code and table to the device. */
static int
upload_code(CuCtx *c, int nexpr, const GdlBkExpr *const *ex, DBuf &code, DBuf &table)
{
	int			total = 0;
	GdlBkInsn  *hcode;
	DExpr	   *htab;
	int			s = GDL_BK_OK;

	for (int k = 0; k < nexpr; k++)
		total += ex[k]->ncode;
	hcode = (GdlBkInsn *) malloc(sizeof(GdlBkInsn) * (total > 0 ? total : 1));
	htab = (DExpr *) malloc(sizeof(DExpr) * (nexpr > 0 ? nexpr : 1));
	if (!hcode || !htab)
	{
		free(hcode);
		free(htab);
		return cu_fail(c, GDL_BK_ERR_NO_MEMORY, "out of host memory");
	}
	total = 0;
	for (int k = 0; k < nexpr; k++)
	{
		memcpy(hcode + total, ex[k]->code, sizeof(GdlBkInsn) * ex[k]->ncode);
		htab[k].start = total;
		htab[k].len = ex[k]->ncode;
		total += ex[k]->ncode;
	}
	s = code.get(c, sizeof(GdlBkInsn) * (total > 0 ? total : 1));
	if (s == GDL_BK_OK)
		s = table.get(c, sizeof(DExpr) * (nexpr > 0 ? nexpr : 1));
	if (s == GDL_BK_OK && total > 0 &&
		cudaMemcpyAsync(code.p, hcode, sizeof(GdlBkInsn) * total, cudaMemcpyHostToDevice,
						c->stream) != cudaSuccess)
		s = cu_fail(c, GDL_BK_ERR_DEVICE, "map: code upload failed");
	if (s == GDL_BK_OK && nexpr > 0 &&
		cudaMemcpyAsync(table.p, htab, sizeof(DExpr) * nexpr, cudaMemcpyHostToDevice,
						c->stream) != cudaSuccess)
		s = cu_fail(c, GDL_BK_ERR_DEVICE, "map: code upload failed");
	c->cnt.transfers += 2;
	c->cnt.bytes_to_device += (int64_t) (sizeof(GdlBkInsn) * total + sizeof(DExpr) * nexpr);
	free(hcode);
	free(htab);
	return s;
}

/* map: see gdl_backend.h. */
int
cu_op_map(CuCtx *c, CuRel *in, int nfilter, const GdlBkExpr *filter,
		  int nout, const GdlBkExpr *out, CuRel **result)
{
	const GdlBkExpr *ex[2 * CU_MAX_ARITY + 1];
	const GdlBkExpr **exv = ex;
	int			nexpr = nfilter + nout;
	int64_t		n = in->n,
				m = n;
	int64_t		hstats[1 + 2 * CU_MAX_ARITY],
				lo[CU_MAX_ARITY],
				hi[CU_MAX_ARITY];
	DBuf		code,
				table,
				tmp,
				keep,
				stats,
				ids;
	CuRel	   *r;
	int			s;

	if (nexpr > (int) (sizeof(ex) / sizeof(ex[0])))
	{
		exv = (const GdlBkExpr **) malloc(sizeof(GdlBkExpr *) * nexpr);
		if (!exv)
			return cu_fail(c, GDL_BK_ERR_NO_MEMORY, "out of host memory");
	}
	s = GDL_BK_OK;
	for (int k = 0; k < nexpr && s == GDL_BK_OK; k++)
	{
		exv[k] = k < nfilter ? &filter[k] : &out[k - nfilter];
		s = check_expr(c, exv[k], in->arity);
	}
	if (s == GDL_BK_OK && nfilter == 0)
	{
		bool		proj = true;

		for (int j = 0; j < nout; j++)
			proj = proj && is_col(&out[j]);
		if (proj)
		{
			if (exv != ex)
				free(exv);
			return map_project(c, in, nout, out, result);
		}
	}
	if (s == GDL_BK_OK && n > 0)
		s = upload_code(c, nexpr, exv, code, table);
	if (exv != ex)
		free(exv);
	CU_OK(s);
	if (n == 0)
	{
		if (nout == 0)
			return rel_unit(c, 0, result);
		bounds_empty(nout, lo, hi);
		return rel_new(c, nout, cu_packable(nout, lo, hi) ? L_PACKED : L_WIDE, 0, result);
	}
	if (n > (int64_t) UINT32_MAX)
		return cu_fail(c, GDL_BK_ERR_NO_MEMORY, "map: too many rows (%lld)", (long long) n);

	/* evaluate */
	hstats[0] = (int64_t) MAP_NO_ERROR;
	for (int j = 0; j < nout; j++)
	{
		hstats[1 + 2 * j] = INT64_MAX;
		hstats[2 + 2 * j] = INT64_MIN;
	}
	CU_OK(tmp.get(c, sizeof(int64_t) * n * (nout > 0 ? nout : 1)));
	CU_OK(keep.get(c, n));
	CU_OK(stats.get(c, sizeof(int64_t) * (1 + 2 * nout)));
	CU_TRY(c, cudaMemcpyAsync(stats.p, hstats, sizeof(int64_t) * (1 + 2 * nout),
							  cudaMemcpyHostToDevice, c->stream));
	c->cnt.launches++;
	k_map<<<cu_grid(n), CU_BLOCK, 0, c->stream>>>(rel_drel(in), code.as<GdlBkInsn>(),
												   table.as<DExpr>(), nfilter, nout, c->dranks,
												   c->nranks, tmp.as<int64_t>(), keep.as<uint8_t>(),
												   stats.as<long long>());
	CU_LAUNCHED(c);
	CU_OK(cu_read_i64(c, stats.p, 1 + 2 * nout, hstats));
	if ((unsigned long long) hstats[0] != MAP_NO_ERROR)
		return map_error(c, (unsigned long long) hstats[0]);

	/* compact the kept rows */
	if (nfilter > 0)
		CU_OK(select_flagged(c, keep.as<uint8_t>(), n, ids, &m));
	if (nout == 0)
		return rel_unit(c, m, result);
	for (int j = 0; j < nout; j++)
	{
		/* a plain column keeps its input's bounds (stable layouts across rounds) */
		lo[j] = is_col(&out[j]) ? in->lo[out[j].code[0].arg] : hstats[1 + 2 * j];
		hi[j] = is_col(&out[j]) ? in->hi[out[j].code[0].arg] : hstats[2 + 2 * j];
	}
	CU_OK(rel_new_bounded(c, nout, m, lo, hi, &r));
	/* a filtered set with its columns unchanged stays a set */
	r->is_set = in->is_set && nout == in->arity && r->layout == in->layout;
	for (int j = 0; j < nout && r->is_set; j++)
		r->is_set = is_col(&out[j]) && out[j].code[0].arg == j;
	if (m > 0)
	{
		c->cnt.launches++;
		k_map_out<<<cu_grid(m), CU_BLOCK, 0, c->stream>>>(tmp.as<int64_t>(), n,
														  nfilter > 0 ? ids.as<uint32_t>() : nullptr,
														  m, rel_dout(r));
		if (cudaGetLastError() != cudaSuccess)
		{
			rel_free(c, r);
			return cu_fail(c, GDL_BK_ERR_DEVICE, "map: kernel launch failed");
		}
	}
	*result = r;
	return GDL_BK_OK;
}
