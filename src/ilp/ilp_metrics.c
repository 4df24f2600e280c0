/*
 * ilp_metrics.c — how good one rule is.
 *
 * On the examples: precision = covered positives / covered examples (a
 * negative counted with its sampling weight),
 * recall = covered positives / positives, support = covered positives.
 *
 * On the data, as AMIE defines them, with the positives (and the target's
 * known facts) standing for the head relation's facts K:
 *   head_coverage  = |heads in K| / |K|
 *   std_confidence = |heads in K| / |heads|
 *   pca_confidence = |heads in K| / |heads (x, y) such that K has some (x, y')|
 * where heads are all the head tuples the body derives over the background
 * (one materialisation per selected rule, not per candidate).  For a unary
 * head the PCA confidence equals the standard confidence.
 */
#include "ilp_int.h"

/* Fill m with the example measures and the AMIE measures of candidate c. */
void
ilp_metrics(const IlpWorld *w, const IlpCand *c, IlpMetrics *m)
{
	IlpRel	  **rels = ilp_world_rels(w);
	const IlpRel *k = w->preds[w->target].rel;
	int64_t    *keys = NULL;
	int64_t		nh,
				hits = 0,
				pca_den = 0;

	m->support = c->npos;
	m->precision = c->ncov > 0 ?
		(double) c->npos / (c->npos + w->neg_weight * (c->ncov - c->npos)) : 0.0;
	m->recall = w->npos > 0 ? (double) c->npos / w->npos : 0.0;

	nh = ilp_rule_heads(w, rels, &c->rule, &keys);
	for (int64_t i = 0; i < nh; i++)
	{
		int32_t		x = (int32_t) ((uint64_t) keys[i] >> 32);
		int32_t		y = (int32_t) (keys[i] & 0xffffffff);
		bool		in = ilp_rel_has(k, x, y);

		hits += in ? 1 : 0;
		if (w->arity == 1 || (x < k->ndom[0] && k->fwd_off[x + 1] > k->fwd_off[x]))
			pca_den++;
	}
	m->head_coverage = k->n > 0 ? (double) hits / k->n : 0.0;
	m->std_confidence = nh > 0 ? (double) hits / nh : 0.0;
	m->pca_confidence = pca_den > 0 ? (double) hits / pca_den : 0.0;
	gdl_free(keys);
	gdl_free(rels);
}
