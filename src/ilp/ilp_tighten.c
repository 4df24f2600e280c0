/*
 * ilp_tighten.c — specialising a selected rule when the data says it is too
 * general.
 *
 * The examples alone cannot tell "f(X, Y) :- father(Y, X)" from the true
 * "f(X, Y) :- father(Y, X), male(X)" when no daughter happens to be among the
 * negatives: both derive every positive and no negative.  The background
 * can: the general rule derives twice as many facts over the data, and the
 * extra literal keeps every positive it covered.  If a literal dropping a
 * fraction d of the derived facts were unrelated to the target, keeping all
 * k covered positives would happen by chance with probability (1 - d)^k;
 * when that is below ILP_TIGHTEN_ALPHA the rule takes the literal.  Repeat
 * while it helps and the body has room.  Only non-recursive rules are
 * tightened (their derivations are exact).
 */
#include "ilp_int.h"

#include <math.h>
#include <string.h>

#define ILP_TIGHTEN_ALPHA 0.01

/* How many head tuples a rule derives over the data. */
static int64_t
count_heads(const IlpWorld *w, IlpRel *const *rels, const IlpRule *r)
{
	int64_t    *keys = NULL;
	int64_t		n = ilp_rule_heads(w, rels, r, &keys);

	gdl_free(keys);
	return n;
}

/*
 * Specialise candidate c while a refinement keeps every covered positive and
 * significantly cuts what it derives; returns true and fills *out (with its
 * own coverage) when c changed.
 */
bool
ilp_tighten(const IlpWorld *w, const IlpBias *bias, const IlpCand *c, IlpCand *out)
{
	IlpRel	  **rels = ilp_world_rels(w);
	IlpCand		cur = *c;
	int64_t		heads;
	int32_t    *buf = gdl_alloc(sizeof(int32_t) * (c->ncov + 1));
	bool		changed = false;

	if (c->recursive || c->npos == 0)
	{
		gdl_free(buf);
		gdl_free(rels);
		return false;
	}
	heads = count_heads(w, rels, &cur.rule);
	for (;;)
	{
		IlpRule    *refs = NULL;
		int			nref = ilp_refine(w, bias, &cur.rule, &refs);
		int			best = -1;
		int64_t		bheads = 0;
		int32_t		bnc = 0;

		gdl_check_interrupts();
		for (int i = 0; i < nref; i++)
		{
			int32_t		nc = ilp_cover(w, rels, &refs[i], cur.cov, cur.ncov, buf);
			int64_t		h;

			if (ilp_count_pos(w, buf, nc) < cur.npos)
				continue;		/* loses a positive */
			h = count_heads(w, rels, &refs[i]);
			if (h >= heads || pow((double) h / (double) heads, cur.npos) > ILP_TIGHTEN_ALPHA)
				continue;
			if (best < 0 || h < bheads || (h == bheads && nc < bnc) ||
				(h == bheads && nc == bnc && ilp_rule_cmp(&refs[i], &refs[best]) < 0))
			{
				best = i;
				bheads = h;
				bnc = nc;
			}
		}
		if (best < 0)
		{
			gdl_free(refs);
			break;
		}
		cur.rule = refs[best];
		cur.ncov = ilp_cover(w, rels, &refs[best], cur.cov, cur.ncov, buf);
		cur.cov = gdl_alloc(sizeof(int32_t) * (cur.ncov + 1));
		memcpy(cur.cov, buf, sizeof(int32_t) * cur.ncov);
		cur.invented = ilp_rule_uses(&cur.rule, w, ILP_PRED_CLOSURE);
		heads = bheads;
		changed = true;
		gdl_free(refs);
	}
	gdl_free(buf);
	gdl_free(rels);
	if (changed)
		*out = cur;
	return changed;
}
