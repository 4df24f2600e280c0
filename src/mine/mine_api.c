/*
 * mine_api.c — gdl_mine: options, the two counting passes (on the CPU,
 * mine_enum.c, or on a registered device, mine_device.c), the rules with
 * constants when asked (mine_const.c, on the CPU), the anytime levels of
 * max_seconds, the confidence thresholds, canonical rules sorted by (head,
 * body), and the phase times.
 */
#include "mine_int.h"

#include <stdlib.h>
#include <string.h>

/*
 * AMIE's defaults.  The fields not named are 0 or false: min_std_confidence,
 * threads, constants, max_body_constants, max_seconds, object_identity.
 */
void
gdl_mine_options_init(GdlMineOptions *o)
{
	static const GdlMineOptions amie = {
		.target = -1, .max_body = 3, .min_support = 1, .device = GDL_DEVICE_CPU,
		.min_head_coverage = 0.01, .min_confidence = 0.1,
		.constants_min_head_coverage = -1,
	};

	*o = amie;
}

/* qsort order of rules (mine_rule_cmp). */
static int
cmp_rule(const void *a, const void *b)
{
	return mine_rule_cmp(a, b);
}

/* The body bound of the rules with constants (options.max_body_constants). */
static int
constants_body(const GdlMineOptions *o)
{
	if (!o->constants)
		return 0;
	if (o->max_body_constants > 0)
		return o->max_body_constants;
	return o->max_body < 2 ? o->max_body : 2;
}

/* Check the options; raise on a bad one. */
static void
check_options(const GdlMineGraph *g, const GdlMineOptions *o)
{
	if (o->max_body < 1 || o->max_body > GDL_MINE_MAX_BODY)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "max_body must be between 1 and %d", GDL_MINE_MAX_BODY);
	if (o->max_body_constants < 0 || o->max_body_constants > 2)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "max_body_constants must be 1 or 2");
	if (o->target < -1 || o->target >= g->nrels)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "no relation %d to mine rules for", o->target);
	if (o->min_head_coverage < 0 || o->min_head_coverage > 1 || o->min_confidence < 0 ||
		o->min_confidence > 1 || o->min_std_confidence < 0 || o->min_std_confidence > 1 ||
		o->constants_min_head_coverage > 1)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "mining thresholds must be between 0 and 1");
	if (!(o->max_seconds >= 0))
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "max_seconds must not be negative");
}

/*
 * The rules without constants of up to max_body atoms: on the device when
 * asked and it can, else on the CPU; false (nothing kept) when the
 * deadline passed first.  Times add up over calls.
 */
static bool
count_var_rules(const GdlMineGraph *g, const GdlMineOptions *o, int max_body, double deadline,
				GdlMineResult *res, MineCand **c, int64_t *n)
{
	GdlMineOptions lo = *o;
	int			threads = o->threads > 0 ? o->threads : gdl_threads();
	double		t0 = gdl_now_ms(),
				t1;
	GdlMineTimes dt = {0};

	lo.max_body = max_body;
	if (o->device == GDL_DEVICE_GPU && mine_device_count(g, &lo, c, n, &dt))
	{
		res->device = GDL_DEVICE_GPU;
		res->times.index += dt.index;
		res->times.enumerate += dt.enumerate;
		res->times.measures += dt.measures;
		return true;
	}
	res->device = GDL_DEVICE_CPU;
	*c = mine_count_support(g, &lo, threads, deadline, n);
	t1 = gdl_now_ms();
	res->times.enumerate += (t1 - t0) / 1000.0;
	if (*c == NULL)
		return false;
	if (!mine_count_bodies(g, &lo, threads, deadline, *c, *n))
	{
		gdl_free(*c);
		*c = NULL;
		*n = 0;
		return false;
	}
	res->times.measures += (gdl_now_ms() - t1) / 1000.0;
	return true;
}

/* Append to *all (growing it) the rules with constants of body_from..body_to atoms. */
static bool
add_const_rules(const GdlMineGraph *g, const GdlMineOptions *o, int body_from, int body_to,
				double deadline, GdlMineResult *res, GdlMineRule **all, int64_t *nall)
{
	double		t0 = gdl_now_ms();
	bool		timed_out = false;
	int64_t		n = 0;
	GdlMineRule *r = mine_const_rules(g, o, body_from, body_to, deadline, &n, &timed_out);

	if (*all == NULL)
		*all = r;
	else
	{
		*all = gdl_realloc(*all, sizeof(GdlMineRule) * (*nall + n + 1));
		memcpy(*all + *nall, r, sizeof(GdlMineRule) * n);
		gdl_free(r);
	}
	*nall += n;
	res->times.constants += (gdl_now_ms() - t0) / 1000.0;
	return !timed_out;
}

/*
 * Mine every closed connected rule of up to max_body atoms whose head is
 * o->target (or any relation) over the thresholds, with exact measures;
 * with o->constants also the rules with constants (mine_const.c, always on
 * the CPU: a GPU run's device counts the rules without constants).
 * min_support below 1 counts as 1 (a rule without support is never
 * reported).  With max_seconds, level by level (gdl_mine.h), keeping the
 * levels completed within the budget.
 */
GdlMineResult *
gdl_mine(const GdlMineGraph *g, const GdlMineOptions *o)
{
	GdlMineResult *res = gdl_alloc(sizeof(GdlMineResult));
	double		t0 = gdl_now_ms();
	double		deadline = o->max_seconds > 0 ? t0 + o->max_seconds * 1000.0 : 0;
	int			maxc = constants_body(o);
	MineCand   *c = NULL;
	int64_t		n = 0;
	GdlMineRule *crules = NULL;
	int64_t		nconst = 0;

	check_options(g, o);
	memset(res, 0, sizeof(*res));
	if (deadline == 0)
	{
		count_var_rules(g, o, o->max_body, 0, res, &c, &n);
		res->complete_body = o->max_body;
		if (maxc > 0)
			add_const_rules(g, o, 1, maxc, 0, res, &crules, &nconst);
		res->complete_body_constants = maxc;
	}
	else
	{
		int			levels = o->max_body > maxc ? o->max_body : maxc;

		for (int b = 1; b <= levels && !res->timed_out; b++)
		{
			MineCand   *cb = NULL;
			int64_t		nb = 0;

			if (b <= o->max_body)
			{
				if (gdl_now_ms() >= deadline ||
					!count_var_rules(g, o, b, deadline, res, &cb, &nb))
				{
					res->timed_out = true;
					break;
				}
				if (c)
					gdl_free(c);
				c = cb;
				n = nb;
				res->complete_body = b;
			}
			if (b <= maxc)
			{
				if (gdl_now_ms() >= deadline ||
					!add_const_rules(g, o, b, b, deadline, res, &crules, &nconst))
					res->timed_out = true;
				else
					res->complete_body_constants = b;
			}
		}
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
	if (c)
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
