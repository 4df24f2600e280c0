/*
 * ilp_api.c — gdl_ilp_candidates and gdl_ilp_loss_grad: the bias listed with
 * stable ids, and the noisy-or loss and gradient over that same list, for
 * users who drive their own optimiser (gpudl_candidates, gpudl_loss_grad).
 *
 * Both enumerate the full bias without looking at examples, so the ids a
 * user got from gdl_ilp_candidates index the probabilities given to
 * gdl_ilp_loss_grad.
 */
#include "ilp_int.h"

/* Enumerate the bias of a problem without examples (listing mode). */
static IlpCandSet *
full_bias(const IlpWorld *w, int max_body, bool allow_recursive)
{
	IlpBias		bias;

	if (max_body < 1 || max_body > ILP_MAX_ATOMS)
		gdl_error(GDL_ERR_PARAM, NULL, "Rule bodies have 1 to 3 atoms.",
				  "max_body must be between 1 and %d, not %d", ILP_MAX_ATOMS, max_body);
	bias.max_body = max_body;
	bias.recursive = allow_recursive;
	bias.invented = false;
	bias.use_examples = false;
	bias.min_support = 0;
	bias.max_candidates = 2000000;
	return ilp_candidates(w, &bias);
}

/* List the candidates of the bias; see gdl_ilp.h. */
GdlIlpCandidateList *
gdl_ilp_candidates(const GdlIlpProblem *prob, int max_body, bool allow_recursive)
{
	IlpWorld   *w;
	IlpCandSet *cs;
	GdlIlpCandidateList *out = gdl_alloc(sizeof(GdlIlpCandidateList));

	if (max_body < 1 || max_body > ILP_MAX_ATOMS)
		gdl_error(GDL_ERR_PARAM, NULL, "Rule bodies have 1 to 3 atoms.",
				  "max_body must be between 1 and %d, not %d", ILP_MAX_ATOMS, max_body);
	w = ilp_world_build(prob, false, false, NULL);
	cs = full_bias(w, max_body, allow_recursive);
	out->n = cs->n;
	out->items = gdl_alloc(sizeof(GdlIlpCandidate) * (cs->n + 1));
	for (int32_t i = 0; i < cs->n; i++)
	{
		out->items[i].id = i;
		out->items[i].rule = ilp_rule_text(&cs->c[i].rule, w);
		out->items[i].template = ilp_rule_template(&cs->c[i].rule, w);
		if ((i & 4095) == 4095)
			gdl_check_interrupts();
	}
	return out;
}

/* Noisy-or loss and gradient over the listed candidates; see gdl_ilp.h. */
double
gdl_ilp_loss_grad(const GdlIlpProblem *prob, int max_body, bool allow_recursive,
				  int64_t seed, const double *probs, int nprobs, double *grad)
{
	IlpWorld   *w;
	IlpCandSet *cs;
	IlpRel	  **rels;
	int32_t		nex;
	int32_t    *all;
	int32_t    *buf;
	int32_t   **cov;
	int32_t    *ncov;
	IlpCsr	   *m;
	double		loss;

	if (nprobs < 0 || (nprobs > 0 && probs == NULL))
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "no probabilities given");
	for (int i = 0; i < nprobs; i++)
		if (!(probs[i] >= 0.0 && probs[i] <= 1.0))
			gdl_error(GDL_ERR_PARAM, NULL, NULL,
					  "probability %d is %g, not between 0 and 1", i + 1, probs[i]);
	{
		IlpNegSpec	neg = {GDL_ILP_NEG_PCA, 4, max_body, seed};

		w = ilp_world_build(prob, true, false, &neg);
	}
	cs = full_bias(w, max_body, allow_recursive);
	if (nprobs != cs->n)
		gdl_error(GDL_ERR_PARAM, NULL,
				  "Pass one probability per row of gpudl_candidates with the same bias.",
				  "%d probabilities given for %d candidate rules", nprobs, cs->n);

	/* coverage of every listed candidate, driven from the examples */
	nex = w->npos + w->nneg;
	rels = ilp_world_rels(w);
	all = gdl_alloc(sizeof(int32_t) * (nex + 1));
	buf = gdl_alloc(sizeof(int32_t) * (nex + 1));
	cov = gdl_alloc(sizeof(int32_t *) * (cs->n + 1));
	ncov = gdl_alloc(sizeof(int32_t) * (cs->n + 1));
	for (int32_t i = 0; i < nex; i++)
		all[i] = i;
	for (int32_t c = 0; c < cs->n; c++)
	{
		ncov[c] = ilp_cover(w, rels, &cs->c[c].rule, all, nex, buf);
		cov[c] = gdl_alloc(sizeof(int32_t) * (ncov[c] + 1));
		for (int32_t k = 0; k < ncov[c]; k++)
			cov[c][k] = buf[k];
		if ((c & 255) == 255)
			gdl_check_interrupts();
	}
	m = ilp_csr_build(nex, cs->n, ncov, cov);
	loss = ilp_loss_grad_p(m, w->npos, probs, grad);
	for (int32_t c = 0; c < cs->n; c++)
		gdl_free(cov[c]);
	gdl_free(cov);
	gdl_free(ncov);
	gdl_free(all);
	gdl_free(buf);
	gdl_free(rels);
	return loss;
}
