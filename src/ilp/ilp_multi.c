/*
 * ilp_multi.c — every rule of the bias, for every relation of one graph as
 * the target.
 *
 * Learning each relation of a knowledge graph from the others builds, per
 * target, the same value domains, the same indexed relations and the same
 * bulk-coverage adjacency, only the target's own relation left out.  Here
 * they are built once: a base world of every relation
 * (ilp_world_build_graph), one adjacency over it (ilp_bulk_graph_build,
 * kept on the device across targets when one takes bulk coverage), and per
 * target a world that shares both (ilp_world_for_target: the target's
 * positives and negatives, its relation as the target predicate) whose bulk
 * coverage skips the target's predicate while enumerating.  The candidates
 * of each target are the ones ilp_candidates gives for the world
 * ilp_world_build builds from the others (test_ilp_bulk checks).
 */
#include "ilp_int.h"

#include <string.h>

/* Release a candidate set and the coverage lists it owns. */
void
ilp_candset_free(IlpCandSet *cs)
{
	if (cs == NULL)
		return;
	for (int32_t i = 0; i < cs->n; i++)
		gdl_free(cs->c[i].cov);
	gdl_free(cs->c);
	gdl_free(cs);
}

/* The predicate of relation 'name' in a base world, or -1. */
static int
find_pred(const IlpWorld *base, const char *name)
{
	int			lo = 0,
				hi = base->npreds - 1;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;
		int			c = strcmp(base->preds[mid].name, name);

		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/*
 * Score every rule of the bias for each relation rels[targets[i]] as the
 * target, the other relations as background, its facts as positives and
 * negatives by negspec: fn(arg, pred, world, candidates) sees each target's
 * world and candidates (both freed after it returns).  *world_s (may be
 * NULL) receives the seconds spent building worlds: the base world once
 * and each target's.  Returns how many targets were scored.
 */
int
ilp_score_targets(const GdlIlpRelation *rels, int nrels, const int *targets, int ntargets,
				  const IlpBias *bias, const IlpNegSpec *negspec, IlpScoreFn fn, void *arg,
				  double *world_s)
{
	double		t0 = ilp_now(),
				ws;
	IlpWorld   *base = ilp_world_build_graph(rels, nrels);
	IlpBulkGraph *g;
	int			done = 0;

	ws = ilp_now() - t0;
	g = bias->use_examples && bias->max_body <= 2 && !bias->recursive && !bias->invented ?
		ilp_bulk_graph_build(base) : NULL;
	for (int i = 0; i < ntargets; i++)
	{
		const GdlIlpRelation *rel;
		int			pred;
		IlpWorld   *w;
		IlpCandSet *cs;

		if (targets[i] < 0 || targets[i] >= nrels)
			gdl_error(GDL_ERR_PARAM, NULL, NULL, "no relation %d to learn", targets[i]);
		rel = &rels[targets[i]];
		pred = find_pred(base, rel->name);
		if (pred < 0 || rel->arity != 2)
			gdl_error(GDL_ERR_PARAM, NULL, NULL, "relation \"%s\" is not a binary relation of the graph",
					  rel->name);
		t0 = ilp_now();
		w = ilp_world_for_target(base, g, pred, &rel->rows, negspec);
		ws += ilp_now() - t0;
		cs = ilp_candidates(w, bias);
		if (fn != NULL)
			fn(arg, pred, w, cs);
		ilp_candset_free(cs);
		ilp_world_target_free(w);
		done++;
		gdl_check_interrupts();
	}
	ilp_bulk_graph_free(g);
	if (world_s != NULL)
		*world_s = ws;
	return done;
}
