/*
 * cpu_expr.c — the map operation of the CPU backend: filters and computed
 * columns given as GdlBkExpr bytecode, interpreted a block of rows at a time
 * (one dispatch per instruction per block, not per row).  Filters are
 * applied in order on a shrinking selection, so a later filter or an output
 * is never evaluated on a row an earlier filter dropped.
 */
#include "cpu_int.h"

#include <string.h>

#define BLK 512

/* Per-thread evaluation state. */
typedef struct ExprThread
{
	int64_t		stack[GDL_BK_MAX_STACK][BLK];
	int64_t		sel[BLK];
	int64_t		tmpsel[BLK];
} ExprThread;

/* Shared state of a parallel map. */
typedef struct MapPar
{
	CpuCtx	   *ctx;
	const CpuRel *in;
	int			nfilter;
	const GdlBkExpr *filter;
	int			nout;
	const GdlBkExpr *out;
	int64_t    *ocols[CPU_MAX_ARITY];	/* temp output, thread t writes at its 'from' */
	int64_t		ocaps[CPU_MAX_ARITY];
	ExprThread *ts;
	int64_t		from[CPU_MAX_THREADS + 1];
	int64_t		cnt[CPU_MAX_THREADS];
	int			status[CPU_MAX_THREADS];
	int64_t		lo[CPU_MAX_THREADS][CPU_MAX_ARITY];
	int64_t		hi[CPU_MAX_THREADS][CPU_MAX_ARITY];
} MapPar;

/*
 * Evaluate expression e over the n selected rows; the values end in
 * st->stack[0].  Returns a GdlBkStatus.
 */
static int
eval_expr(const GdlBkExpr *e, const CpuRel *in, const int64_t *sel, int n,
		  ExprThread *st, const int32_t *ranks, int32_t nranks)
{
	int			sp = 0,
				pc,
				i;

	for (pc = 0; pc < e->ncode; pc++)
	{
		const GdlBkInsn *ins = &e->code[pc];
		int64_t    *a = sp >= 2 ? st->stack[sp - 2] : NULL;
		int64_t    *b = sp >= 1 ? st->stack[sp - 1] : NULL;

		switch (ins->op)
		{
			case GDL_BC_COL:
				{
					int64_t    *d = st->stack[sp++];
					int			c = ins->arg;

					if (!in->packed)
						for (i = 0; i < n; i++)
							d[i] = in->cols[c][sel[i]];
					else
						for (i = 0; i < n; i++)
							d[i] = cpu_get(in, sel[i], c);
					break;
				}
			case GDL_BC_CONST:
				{
					int64_t    *d = st->stack[sp++];

					for (i = 0; i < n; i++)
						d[i] = ins->imm;
					break;
				}
			case GDL_BC_ADD:
				for (i = 0; i < n; i++)
					if (__builtin_add_overflow(a[i], b[i], &a[i]))
						return GDL_BK_ERR_OVERFLOW;
				sp--;
				break;
			case GDL_BC_SUB:
				for (i = 0; i < n; i++)
					if (__builtin_sub_overflow(a[i], b[i], &a[i]))
						return GDL_BK_ERR_OVERFLOW;
				sp--;
				break;
			case GDL_BC_MUL:
				for (i = 0; i < n; i++)
					if (__builtin_mul_overflow(a[i], b[i], &a[i]))
						return GDL_BK_ERR_OVERFLOW;
				sp--;
				break;
			case GDL_BC_DIV:
				for (i = 0; i < n; i++)
				{
					if (b[i] == 0)
						return GDL_BK_ERR_DIV_ZERO;
					if (b[i] == -1)
					{
						if (a[i] == INT64_MIN)
							return GDL_BK_ERR_OVERFLOW;
						a[i] = -a[i];
					}
					else
						a[i] = a[i] / b[i];
				}
				sp--;
				break;
			case GDL_BC_MOD:
				for (i = 0; i < n; i++)
				{
					if (b[i] == 0)
						return GDL_BK_ERR_DIV_ZERO;
					a[i] = b[i] == -1 ? 0 : a[i] % b[i];
				}
				sp--;
				break;
			case GDL_BC_NEG:
				for (i = 0; i < n; i++)
				{
					if (b[i] == INT64_MIN)
						return GDL_BK_ERR_OVERFLOW;
					b[i] = -b[i];
				}
				break;
			case GDL_BC_FADD:
				for (i = 0; i < n; i++)
					a[i] = as_i(as_f(a[i]) + as_f(b[i]));
				sp--;
				break;
			case GDL_BC_FSUB:
				for (i = 0; i < n; i++)
					a[i] = as_i(as_f(a[i]) - as_f(b[i]));
				sp--;
				break;
			case GDL_BC_FMUL:
				for (i = 0; i < n; i++)
					a[i] = as_i(as_f(a[i]) * as_f(b[i]));
				sp--;
				break;
			case GDL_BC_FDIV:
				for (i = 0; i < n; i++)
				{
					if (as_f(b[i]) == 0.0)
						return GDL_BK_ERR_DIV_ZERO;
					a[i] = as_i(as_f(a[i]) / as_f(b[i]));
				}
				sp--;
				break;
			case GDL_BC_FNEG:
				for (i = 0; i < n; i++)
					b[i] = as_i(-as_f(b[i]));
				break;
			case GDL_BC_I2F:
				for (i = 0; i < n; i++)
					b[i] = as_i((double) b[i]);
				break;
#define CMP_CASE(OP, EXPR) \
			case OP: \
				for (i = 0; i < n; i++) \
					a[i] = (EXPR); \
				sp--; \
				break;
				CMP_CASE(GDL_BC_EQ, a[i] == b[i])
					CMP_CASE(GDL_BC_NE, a[i] != b[i])
					CMP_CASE(GDL_BC_LT, a[i] < b[i])
					CMP_CASE(GDL_BC_LE, a[i] <= b[i])
					CMP_CASE(GDL_BC_GT, a[i] > b[i])
					CMP_CASE(GDL_BC_GE, a[i] >= b[i])
					CMP_CASE(GDL_BC_FEQ, as_f(a[i]) == as_f(b[i]))
					CMP_CASE(GDL_BC_FNE, as_f(a[i]) != as_f(b[i]))
					CMP_CASE(GDL_BC_FLT, as_f(a[i]) < as_f(b[i]))
					CMP_CASE(GDL_BC_FLE, as_f(a[i]) <= as_f(b[i]))
					CMP_CASE(GDL_BC_FGT, as_f(a[i]) > as_f(b[i]))
					CMP_CASE(GDL_BC_FGE, as_f(a[i]) >= as_f(b[i]))
#undef CMP_CASE
			case GDL_BC_RANK:
				for (i = 0; i < n; i++)
				{
					if (b[i] < 0 || b[i] >= nranks)
						return GDL_BK_ERR_INVALID;
					b[i] = ranks[b[i]];
				}
				break;
			case GDL_BC_NOP:
				break;
			default:
				return GDL_BK_ERR_INVALID;
		}
	}
	return GDL_BK_OK;
}

/* Task: filter and compute this thread's share of the rows. */
static void
map_task(void *arg, int tid, int nt)
{
	MapPar	   *mp = arg;
	ExprThread *st = &mp->ts[tid];
	int64_t		from = mp->from[tid],
				to = mp->from[tid + 1],
				row,
				m = 0;
	int			j;

	mp->status[tid] = GDL_BK_OK;
	for (j = 0; j < mp->nout; j++)
	{
		mp->lo[tid][j] = INT64_MAX;
		mp->hi[tid][j] = INT64_MIN;
	}
	for (row = from; row < to; row += BLK)
	{
		int			n = (int) (to - row < BLK ? to - row : BLK);
		int			f,
					i,
					k;

		for (i = 0; i < n; i++)
			st->sel[i] = row + i;
		for (f = 0; f < mp->nfilter && n > 0; f++)
		{
			int			s = eval_expr(&mp->filter[f], mp->in, st->sel, n, st,
									  mp->ctx->ranks, mp->ctx->nranks);

			if (s != GDL_BK_OK)
			{
				mp->status[tid] = s;
				return;
			}
			for (i = 0, k = 0; i < n; i++)
				if (st->stack[0][i])
					st->sel[k++] = st->sel[i];
			n = k;
		}
		if (n == 0)
			continue;
		for (j = 0; j < mp->nout; j++)
		{
			int			s = eval_expr(&mp->out[j], mp->in, st->sel, n, st,
									  mp->ctx->ranks, mp->ctx->nranks);
			int64_t    *d = mp->ocols[j] + from + m;
			int64_t		lo = mp->lo[tid][j],
						hi = mp->hi[tid][j];

			if (s != GDL_BK_OK)
			{
				mp->status[tid] = s;
				return;
			}
			for (i = 0; i < n; i++)
			{
				int64_t		v = st->stack[0][i];

				d[i] = v;
				if (v < lo)
					lo = v;
				if (v > hi)
					hi = v;
			}
			mp->lo[tid][j] = lo;
			mp->hi[tid][j] = hi;
		}
		m += n;
	}
	mp->cnt[tid] = m;
}

/* Check an expression: valid ops and columns, one result, bounded stack. */
static int
check_expr(CpuCtx *ctx, const GdlBkExpr *e, int arity)
{
	int			sp = 0,
				pc;

	for (pc = 0; pc < e->ncode; pc++)
	{
		const GdlBkInsn *ins = &e->code[pc];
		int			pops,
					pushes = 1;

		switch (ins->op)
		{
			case GDL_BC_COL:
				if (ins->arg < 0 || ins->arg >= arity)
					return cpu_fail(ctx, GDL_BK_ERR_INVALID, "expression column %d out of range", ins->arg);
				pops = 0;
				break;
			case GDL_BC_CONST:
				pops = 0;
				break;
			case GDL_BC_NEG:
			case GDL_BC_FNEG:
			case GDL_BC_I2F:
			case GDL_BC_RANK:
				pops = 1;
				break;
			case GDL_BC_NOP:
				pops = 0;
				pushes = 0;
				break;
			default:
				if (ins->op < GDL_BC_ADD || ins->op > GDL_BC_FGE)
					return cpu_fail(ctx, GDL_BK_ERR_INVALID, "bad expression opcode %d", ins->op);
				pops = 2;
				break;
		}
		if (sp < pops)
			return cpu_fail(ctx, GDL_BK_ERR_INVALID, "expression stack underflow");
		sp += pushes - pops;
		if (sp > GDL_BK_MAX_STACK)
			return cpu_fail(ctx, GDL_BK_ERR_INVALID, "expression stack too deep");
	}
	if (sp != 1)
		return cpu_fail(ctx, GDL_BK_ERR_INVALID, "expression leaves %d values", sp);
	return GDL_BK_OK;
}

/* Message for an evaluation failure. */
static int
eval_fail(CpuCtx *ctx, int s)
{
	switch (s)
	{
		case GDL_BK_ERR_DIV_ZERO:
			return cpu_fail(ctx, s, "division by zero");
		case GDL_BK_ERR_OVERFLOW:
			return cpu_fail(ctx, s, "bigint out of range");
		default:
			return cpu_fail(ctx, s, "text id without a rank in an expression");
	}
}

/* Backend op: filter rows and compute output columns. */
int
cpu_op_map(void *vctx, GdlBkRel *in, int nfilter, const GdlBkExpr *filter,
		   int nout, const GdlBkExpr *out, GdlBkRel **result)
{
	CpuCtx	   *ctx = vctx;
	MapPar	   *mp;
	CpuRel	   *res;
	int64_t		lo[CPU_MAX_ARITY],
				hi[CPU_MAX_ARITY];
	int64_t		total = 0;
	int			nt,
				t,
				j,
				s,
				sorted;
	bool		identity;

	*result = NULL;
	if (nout < 0 || nout > CPU_MAX_ARITY)
		return cpu_fail(ctx, GDL_BK_ERR_INVALID, "bad map output arity %d", nout);
	cpu_rel_flatten(ctx, in);
	for (j = 0; j < nfilter; j++)
		if ((s = check_expr(ctx, &filter[j], in->arity)) != GDL_BK_OK)
			return s;
	for (j = 0; j < nout; j++)
		if ((s = check_expr(ctx, &out[j], in->arity)) != GDL_BK_OK)
			return s;
	nt = in->n >= 65536 ? ctx->nthreads : 1;
	mp = gdl_alloc(sizeof(MapPar));
	mp->ctx = ctx;
	mp->in = in;
	mp->nfilter = nfilter;
	mp->filter = filter;
	mp->nout = nout;
	mp->out = out;
	mp->ts = gdl_alloc(sizeof(ExprThread) * nt);
	for (j = 0; j < nout; j++)
		mp->ocols[j] = cpu_buf_get(ctx, (int64_t) sizeof(int64_t) * (in->n > 0 ? in->n : 1),
								   &mp->ocaps[j]);
	for (t = 0; t <= nt; t++)
		mp->from[t] = (int64_t) ((__int128) in->n * t / nt);
	gdl_parallel(nt, map_task, mp);
	gdl_check_stop();	/* stopped tasks leave partial results: raise */
	for (t = 0; t < nt; t++)
		if (mp->status[t] != GDL_BK_OK)
		{
			s = mp->status[t];
			for (j = 0; j < nout; j++)
				cpu_buf_put(ctx, mp->ocols[j], mp->ocaps[j]);
			gdl_free(mp->ts);
			gdl_free(mp);
			return eval_fail(ctx, s);
		}
	/* move the threads' parts together; bounds */
	cpu_bounds_empty(nout, lo, hi);
	for (t = 0; t < nt; t++)
	{
		if (mp->from[t] != total && mp->cnt[t] > 0)
			for (j = 0; j < nout; j++)
				memmove(mp->ocols[j] + total, mp->ocols[j] + mp->from[t],
						sizeof(int64_t) * mp->cnt[t]);
		total += mp->cnt[t];
		if (mp->cnt[t] > 0)
			cpu_bounds_union(nout, lo, hi, mp->lo[t], mp->hi[t]);
	}
	/* a plain column keeps its input's (stable) bounds */
	identity = nout == in->arity;
	for (j = 0; j < nout; j++)
	{
		if (out[j].ncode == 1 && out[j].code[0].op == GDL_BC_COL)
		{
			lo[j] = in->lo[out[j].code[0].arg];
			hi[j] = in->hi[out[j].code[0].arg];
		}
		if (!(out[j].ncode == 1 && out[j].code[0].op == GDL_BC_COL && out[j].code[0].arg == j))
			identity = false;
	}
	res = cpu_rel_from_cols(ctx, nout, total, mp->ocols, mp->ocaps, lo, hi);
	if (!res->packed)
		cpu_rel_shrink(ctx, res, total);
	for (sorted = 0; sorted < nout && sorted < in->sorted_cols; sorted++)
		if (!(out[sorted].ncode == 1 && out[sorted].code[0].op == GDL_BC_COL &&
			  out[sorted].code[0].arg == sorted))
			break;
	res->sorted_cols = sorted;
	res->is_set = identity && in->is_set;
	gdl_free(mp->ts);
	gdl_free(mp);
	*result = res;
	return GDL_BK_OK;
}
