/*
 * mine_features.c — the evidence features of a predicted answer, which
 * the weighted aggregation (GDL_PREDICT_WEIGHTED) sums with learned
 * weights (mine_fit.c).
 *
 * kind_noisy_or multiplies the kinds' noisy-ors, i.e. adds their
 * -log(1 - p) with weight 1 each; on FB15k-237 the kinds are not worth the
 * same (paths of two atoms more, of one atom less, docs/BENCHMARKS.md), and
 * the weights say by how much.  Three more features give the learning
 * what the rules do not say: how popular the answer is for the relation
 * (a prior), the best rule alone (max's signal) and how many rules agree.
 */
#include "mine_int.h"

#include <math.h>

/* The kind of a rule (gdl_mine.h's list), 0 .. GDL_PREDICT_NKINDS - 1. */
int
mine_rule_kind(const GdlMineRule *r)
{
	bool		body_const = false;

	for (int k = 0; k < r->nbody; k++)
		body_const |= r->body[k].a == GDL_MINE_C || r->body[k].b == GDL_MINE_C;
	if (r->head_const == GDL_MINE_HEAD_VARS && !body_const)
		return r->nbody >= 3 ? 2 : r->nbody - 1;
	if (r->nbody == 1 && !body_const)
		return 3;				/* open: r(X, "c") :- l(X, Z) */
	if (r->nbody == 1)
		return 4;				/* r(X, "c") :- l(X, "d") */
	return 5;
}

/* -log(1 - p), bounded for p = 1. */
static double
evidence(double prod_not)
{
	return -log(prod_not > 1e-12 ? prod_not : 1e-12);
}

/*
 * The features of answer ent of query q from its hits [0, n), best first:
 * per kind, -log(1 - noisy-or over its clusters (kind_noisy_or's), each
 * counted once with its best rule); the prior log(1 + facts r(_, ent))
 * for r(h, ?) or log(1 + facts r(ent, _)) for r(?, t); the best rule's
 * -log(1 - confidence); log(1 + n); log(1 + clusters, at most 32
 * counted); the best body-constant rule's -log(1 - confidence); the best
 * PCA confidence's (below 0.999) -log(1 - c).
 */
void
mine_answer_features(const GdlMineGraph *g, const GdlMineRule *rules, const PredHit *hits,
					 int64_t n, const GdlPredictQuery *q, int32_t ent, double *f)
{
	double		not_p[GDL_PREDICT_NKINDS];
	double		best_const = 0,
				best_pca = 0;
	uint64_t	seen[32];
	int			nseen = 0;
	int64_t		lo,
				hi;

	for (int k = 0; k < GDL_PREDICT_NKINDS; k++)
		not_p[k] = 1.0;
	for (int64_t i = 0; i < n; i++)
	{
		const GdlMineRule *r = &rules[hits[i].rule];
		uint64_t	key = mine_rule_cluster(r, GDL_PREDICT_KIND_NOISY_OR);
		bool		dup = false;
		int			kind;

		/* an answer's clusters are few; past 32 each later one counts */
		for (int j = 0; j < nseen && !dup; j++)
			dup = seen[j] == key;
		if (dup)
			continue;
		if (nseen < (int) (sizeof(seen) / sizeof(seen[0])))
			seen[nseen++] = key;
		kind = mine_rule_kind(r);
		not_p[kind] *= 1.0 - hits[i].conf;
		if (kind >= 4 && hits[i].conf > best_const)
			best_const = hits[i].conf;
		if (r->pca_confidence > best_pca)
			best_pca = r->pca_confidence < 0.999 ? r->pca_confidence : 0.999;
	}
	for (int k = 0; k < GDL_PREDICT_NKINDS; k++)
		f[k] = evidence(not_p[k]);
	/* links of ent with the relation's inverse (r(_, ent)) or forward (r(ent, _)) signature */
	f[GDL_PREDICT_NKINDS] = mine_graph_links(g, ent, 2 * (uint32_t) q->rel + (q->subject_bound ? 1 : 0), &lo, &hi)
		? log1p((double) (hi - lo)) : 0.0;
	f[GDL_PREDICT_NKINDS + 1] = n > 0 ? evidence(1.0 - hits[0].conf) : 0.0;
	f[GDL_PREDICT_NKINDS + 2] = log1p((double) n);
	f[GDL_PREDICT_NKINDS + 3] = log1p((double) nseen);
	f[GDL_PREDICT_NKINDS + 4] = evidence(1.0 - best_const);
	f[GDL_PREDICT_NKINDS + 5] = evidence(1.0 - best_pca);
}
