/*
 * cpu_agg.c — group by + aggregates (count, sum, min, max) of the CPU
 * backend: rows sorted by the group columns through a permutation, then one
 * pass over each group.
 */
#include "cpu_int.h"

#include <string.h>

/* Whether value a orders before b for the aggregate's value kind. */
static inline bool
agg_less(const CpuCtx *ctx, int valkind, int64_t a, int64_t b)
{
	switch (valkind)
	{
		case GDL_BK_VAL_FLOAT:
			return as_f(a) < as_f(b);
		case GDL_BK_VAL_TEXT:
			return ctx->ranks[a] < ctx->ranks[b];
		default:
			return a < b;
	}
}

/* Backend op: group by the given columns and aggregate. */
int
cpu_op_aggregate(void *vctx, GdlBkRel *in, int ngroup, const int *group,
				 int nagg, const GdlBkAgg *aggs, GdlBkRel **result)
{
	CpuCtx	   *ctx = vctx;
	int			arity = ngroup + nagg;
	int64_t    *cols[CPU_MAX_ARITY];
	int64_t		caps[CPU_MAX_ARITY];
	int64_t    *perm;
	int64_t		n = in->n,
				i = 0,
				g = 0,
				k;
	int			c,
				a;
	CpuRel	   *res;

	*result = NULL;
	if (ngroup < 0 || nagg < 0 || arity > CPU_MAX_ARITY)
		return cpu_fail(ctx, GDL_BK_ERR_INVALID, "bad aggregate arity");
	cpu_rel_flatten(ctx, in);
	for (c = 0; c < ngroup; c++)
		if (group[c] < 0 || group[c] >= in->arity)
			return cpu_fail(ctx, GDL_BK_ERR_INVALID, "group column out of range");
	for (a = 0; a < nagg; a++)
	{
		if (aggs[a].kind != GDL_BK_AGG_COUNT && (aggs[a].col < 0 || aggs[a].col >= in->arity))
			return cpu_fail(ctx, GDL_BK_ERR_INVALID, "aggregate column out of range");
		if (aggs[a].kind < GDL_BK_AGG_COUNT || aggs[a].kind > GDL_BK_AGG_MAX)
			return cpu_fail(ctx, GDL_BK_ERR_INVALID, "bad aggregate kind");
		if (aggs[a].valkind == GDL_BK_VAL_TEXT && aggs[a].kind != GDL_BK_AGG_COUNT &&
			ctx->ranks == NULL)
			return cpu_fail(ctx, GDL_BK_ERR_INVALID, "text aggregate without ranks");
	}
	perm = cpu_sort_perm_cols(ctx, in, ngroup, group);
	for (c = 0; c < arity; c++)
		cols[c] = cpu_buf_get(ctx, (int64_t) sizeof(int64_t) * (n > 0 ? n : 1), &caps[c]);
	while (i < n)
	{
		int64_t		j = i + 1;

		while (j < n)
		{
			for (c = 0; c < ngroup; c++)
				if (cpu_get(in, perm[j], group[c]) != cpu_get(in, perm[i], group[c]))
					break;
			if (c < ngroup)
				break;
			j++;
		}
		for (c = 0; c < ngroup; c++)
			cols[c][g] = cpu_get(in, perm[i], group[c]);
		for (a = 0; a < nagg; a++)
		{
			const GdlBkAgg *ag = &aggs[a];
			int64_t		acc;

			if (ag->kind == GDL_BK_AGG_COUNT)
				acc = j - i;
			else if (ag->kind == GDL_BK_AGG_SUM)
			{
				if (ag->valkind == GDL_BK_VAL_FLOAT)
				{
					double		s = 0;

					for (k = i; k < j; k++)
						s += as_f(cpu_get(in, perm[k], ag->col));
					acc = as_i(s);
				}
				else
				{
					acc = 0;
					for (k = i; k < j; k++)
						if (__builtin_add_overflow(acc, cpu_get(in, perm[k], ag->col), &acc))
						{
							for (c = 0; c < arity; c++)
								cpu_buf_put(ctx, cols[c], caps[c]);
							gdl_free(perm);
							return cpu_fail(ctx, GDL_BK_ERR_OVERFLOW, "bigint out of range in sum");
						}
				}
			}
			else
			{
				acc = cpu_get(in, perm[i], ag->col);
				for (k = i + 1; k < j; k++)
				{
					int64_t		v = cpu_get(in, perm[k], ag->col);

					if (ag->valkind == GDL_BK_VAL_TEXT && (v < 0 || v >= ctx->nranks))
						continue;
					if (ag->kind == GDL_BK_AGG_MIN ? agg_less(ctx, ag->valkind, v, acc)
						: agg_less(ctx, ag->valkind, acc, v))
						acc = v;
				}
			}
			cols[ngroup + a][g] = acc;
		}
		g++;
		i = j;
	}
	gdl_free(perm);
	res = cpu_rel_from_cols(ctx, arity, g, cols, caps, NULL, NULL);
	if (!res->packed)
		cpu_rel_shrink(ctx, res, g);
	res->is_set = true;
	res->sorted_cols = arity;
	*result = res;
	return GDL_BK_OK;
}
