/*
 * mine_api.c — gdl_mine: options, the two counting passes (on the CPU,
 * mine_enum.c, or on a registered device, mine_device.c), the rules with
 * constants when asked (mine_const.c, on the CPU), the confidence
 * thresholds, canonical rules sorted by (head, body), and the phase times.
 */
#include "mine_int.h"

#include <stdlib.h>

/* AMIE's defaults. */
void
gdl_mine_options_init(GdlMineOptions *o)
{
	o->target = -1;
	o->max_body = 3;
	o->min_head_coverage = 0.01;
	o->min_confidence = 0.1;
	o->min_std_confidence = 0.0;
	o->min_support = 1;
	o->device = GDL_DEVICE_CPU;
	o->threads = 0;
	o->constants = false;
}

/* qsort order of rules (mine_rule_cmp). */
static int
cmp_rule(const void *a, const void *b)
{
	return mine_rule_cmp(a, b);
}

/* Check the options; raise on a bad one. */
static void
check_options(const GdlMineGraph *g, const GdlMineOptions *o)
{
	if (o->max_body < 1 || o->max_body > GDL_MINE_MAX_BODY)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "max_body must be between 1 and %d", GDL_MINE_MAX_BODY);
	if (o->target < -1 || o->target >= g->nrels)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "no relation %d to mine rules for", o->target);
	if (o->min_head_coverage < 0 || o->min_head_coverage > 1 || o->min_confidence < 0 ||
		o->min_confidence > 1 || o->min_std_confidence < 0 || o->min_std_confidence > 1)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "mining thresholds must be between 0 and 1");
}

/*
 * Mine every closed connected rule of up to max_body atoms whose head is
 * o->target (or any relation) over the thresholds, with exact measures;
 * with o->constants also the rules with constants (mine_const.c, always on
 * the CPU: a GPU run's device counts the rules without constants).
 * min_support below 1 counts as 1 (a rule without support is never
 * reported).
 */
GdlMineResult *
gdl_mine(const GdlMineGraph *g, const GdlMineOptions *o)
{
	GdlMineResult *res = gdl_alloc(sizeof(GdlMineResult));
	double		t0 = gdl_now_ms(),
				t1,
				t2;
	int			threads = o->threads > 0 ? o->threads : gdl_threads();
	MineCand   *c;
	int64_t		n = 0;
	bool		done = false;
	GdlMineRule *crules = NULL;
	int64_t		nconst = 0;

	check_options(g, o);
	if (o->device == GDL_DEVICE_GPU)
		done = mine_device_count(g, o, &c, &n, &res->times);
	res->device = done ? GDL_DEVICE_GPU : GDL_DEVICE_CPU;
	if (!done)
	{
		c = mine_count_support(g, o, threads, &n);
		t1 = gdl_now_ms();
		mine_count_bodies(g, o, threads, c, n);
		t2 = gdl_now_ms();
		res->times.index = 0;
		res->times.enumerate = (t1 - t0) / 1000.0;
		res->times.measures = (t2 - t1) / 1000.0;
	}
	if (o->constants)
	{
		/* on the CPU for either device: the same rules and counts */
		t1 = gdl_now_ms();
		crules = mine_const_rules(g, o, &nconst);
		res->times.constants = (gdl_now_ms() - t1) / 1000.0;
	}
	res->candidates = n + nconst;
	res->rules = gdl_alloc(sizeof(GdlMineRule) * (n + nconst + 1));
	for (int64_t i = 0; i < n; i++)
	{
		GdlMineRule *r = &res->rules[res->nrules];
		double		pca = c[i].pca_body_size > 0 ? (double) c[i].support / c[i].pca_body_size : 0;
		double		std = c[i].body_size > 0 ? (double) c[i].support / c[i].body_size : 0;

		if (pca < o->min_confidence || std < o->min_std_confidence)
			continue;
		mine_key_rule(c[i].key, c[i].head, r);
		r->support = c[i].support;
		r->body_size = c[i].body_size;
		r->pca_body_size = c[i].pca_body_size;
		r->head_coverage = (double) c[i].support / (double) g->nfacts[c[i].head];
		r->std_confidence = std;
		r->pca_confidence = pca;
		res->nrules++;
	}
	gdl_free(c);
	for (int64_t i = 0; i < nconst; i++)
	{
		GdlMineRule *r = &crules[i];
		double		pca = r->pca_body_size > 0 ? (double) r->support / r->pca_body_size : 0;
		double		std = r->body_size > 0 ? (double) r->support / r->body_size : 0;

		if (pca < o->min_confidence || std < o->min_std_confidence)
			continue;
		r->head_coverage = (double) r->support / (double) g->nfacts[r->head];
		r->std_confidence = std;
		r->pca_confidence = pca;
		res->rules[res->nrules++] = *r;
	}
	if (crules)
		gdl_free(crules);
	qsort(res->rules, res->nrules, sizeof(GdlMineRule), cmp_rule);
	res->times.total = (gdl_now_ms() - t0) / 1000.0;
	return res;
}
