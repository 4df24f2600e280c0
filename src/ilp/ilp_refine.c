/*
 * ilp_refine.c — the refinement search of gdl_ilp_learn (issue 15): any
 * arity, long bodies, types, a time budget, noise.
 *
 * Sequential covering over a beam search (docs/DESIGN.md, rule learning):
 *
 *   1. Find one rule: the beam starts from the empty body; each level
 *      refines every rule of the beam by one atom (ilp_nrule.c), computes
 *      each new rule's coverage on its parent's covered examples only (a
 *      refinement covers a subset), and keeps the 'beam' best: half by
 *      positives minus negatives covered, half by lift (truncate_pool).
 *      A rule whose head variables all occur in its body is complete;
 *      an acceptable complete rule (no negative, or with noise at most
 *      noise x its examples) competes for the best by
 *      positives (then fewer atoms), or with noise by description length
 *      gain (positives - negatives - size).  A rule that cannot beat the
 *      best any more (its positives bound every refinement's) is pruned,
 *      and so is a consistent one (refining it only loses positives);
 *      once a rule covers half the positives in play, the search goes at
 *      most two atoms deeper than it.
 *   2. Cover: add the best rule to the program, drop the positives it
 *      covers (and with noise the negatives), repeat until every positive
 *      is covered, no acceptable rule is left, or max_rules; with noise,
 *      also once the program misclassifies at most noise x the examples
 *      (so a noisy task gets a compact program, not one rule per outlier).
 *   3. Anytime: the whole is run with beam 64 (or the user's), and while
 *      the program is not exact, the beam cut something and time is left,
 *      again with a beam four times wider; the best program (most examples
 *      right, then fewest atoms) is kept.  Past max_seconds the search
 *      stops inside a join; the program found so far is the answer, marked
 *      timed out.
 *
 * Memory: the data, plus the coverage lists of at most 2 x beam rules of a
 * level (each at most the examples in play) — never a matrix of the bias.
 */
#include "ilp_refine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A rule of the search and what it covers among the examples in play. */
typedef struct Node
{
	NxRule		r;
	int32_t    *cov;			/* ascending example ids: positives first */
	int32_t		ntp;
	int32_t		nfp;
	uint64_t	key;
	int64_t		lift;			/* ntp x N0 - nfp x P0 (see truncate_pool) */
} Node;

typedef struct Search
{
	const NxWorld *w;
	NxSolver	solver;
	int			max_body;
	int			max_vars;
	int			beam;
	int			min_support;
	double		noise;
	IlpKeySet	seen;
	bool		cut;			/* the beam dropped some rule */
	int64_t		nodes;
	/* the best complete rule of the current search */
	int64_t		P0;				/* positives and negatives in play */
	int64_t		N0;
	bool		have;
	Node		best;
	double		best_score;
} Search;

/* One learned program and how it does on all examples. */
typedef struct Program
{
	int			n;
	NxRule	   *rules;
	int32_t		tp;
	int32_t		fp;
	int			atoms;
} Program;

/* Count the positives (ids below npos) in an ascending id list. */
static int32_t
count_pos(int32_t npos, const int32_t *ids, int32_t n)
{
	int32_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		int32_t		mid = (lo + hi) / 2;

		if (ids[mid] < npos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Is a complete rule acceptable? */
static bool
acceptable(const Search *s, int32_t tp, int32_t fp)
{
	if (tp < s->min_support)
		return false;
	if (s->noise <= 0.0)
		return fp == 0;
	return tp > fp && fp <= s->noise * (double) (tp + fp);
}

/* Score of an acceptable complete rule (higher is better). */
static double
rule_score(const Search *s, const Node *n)
{
	if (s->noise <= 0.0)
		return n->ntp * 64.0 - n->r.natoms;
	return n->ntp - n->nfp - (n->r.natoms + 1);
}

/* Can some refinement of n (or n itself) still beat the best rule? */
static bool
can_beat(const Search *s, const Node *n)
{
	if (!s->have)
		return true;
	if (s->noise <= 0.0)
		return n->ntp * 64.0 - n->r.natoms > s->best_score;
	return n->ntp - (n->r.natoms + 1) > s->best_score;
}

/* Beam order: positives - negatives, then positives, then the key. */
static int
cmp_node(const void *x, const void *y)
{
	const Node *a = x,
			   *b = y;
	int64_t		sa = (int64_t) a->ntp - a->nfp,
				sb = (int64_t) b->ntp - b->nfp;

	if (sa != sb)
		return sa > sb ? -1 : 1;
	if (a->ntp != b->ntp)
		return a->ntp > b->ntp ? -1 : 1;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return memcmp(&a->r, &b->r, sizeof(NxRule));
}

/* Lift order: ntp x N0 - nfp x P0, then the beam order. */
static int
cmp_lift(const void *x, const void *y)
{
	const Node *a = x,
			   *b = y;

	if (a->lift != b->lift)
		return a->lift > b->lift ? -1 : 1;
	return cmp_node(x, y);
}

/*
 * Keep the best 'keep' nodes of a pool, freeing the others: half by
 * positives - negatives, the other half, among the rest, by lift
 * (positives x N0 - negatives x P0 over the P0 positives and N0 negatives
 * in play: coverage times how much the rule raises the share of positives,
 * CN2-SD's weighted relative accuracy up to a constant).  Positives -
 * negatives alone favours rules that cover little: with 1383 positives and
 * 3117 negatives a two-atom rule covering 6 + 12 outranks one covering
 * 692 + 808, the half of eight-puzzle's positives whose blank is in the
 * move's row; lift alone neglects the near-consistent rules that
 * positives - negatives keeps (trains3, minimal-decay).  Both halves
 * together learn every noise-free Popper task (bench/popper/RESULTS.md).
 */
static void
truncate_pool(Search *s, Node *pool, int *n, int keep)
{
	if (*n <= keep)
		return;
	qsort(pool, *n, sizeof(Node), cmp_node);
	qsort(pool + keep / 2, *n - keep / 2, sizeof(Node), cmp_lift);
	for (int i = keep; i < *n; i++)
		gdl_free(pool[i].cov);
	*n = keep;
	s->cut = true;
}

/* Consider one complete rule for the best. */
static void
offer(Search *s, const Node *n)
{
	double		sc;

	if (!nx_rule_safe(&n->r, s->w->arity) || !acceptable(s, n->ntp, n->nfp))
		return;
	sc = rule_score(s, n);
	if (s->have && sc <= s->best_score)
		return;
	if (s->have)
		gdl_free(s->best.cov);
	s->best = *n;
	s->best.cov = gdl_alloc(sizeof(int32_t) * (n->ntp + n->nfp + 1));
	memcpy(s->best.cov, n->cov, sizeof(int32_t) * (n->ntp + n->nfp));
	s->best_score = sc;
	s->have = true;
}

/*
 * The best acceptable rule over the examples ex[0..nex-1] (ascending,
 * positives first), or false.  s->solver.expired: stopped early.
 */
static bool
find_rule(Search *s, const int32_t *ex, int32_t nex, Node *out)
{
	const NxWorld *w = s->w;
	Node	   *level = gdl_alloc(sizeof(Node));
	int			nlevel = 1;
	int32_t		inplay;

	s->have = false;
	ilp_keyset_free(&s->seen);
	ilp_keyset_init(&s->seen, 1024);
	memset(&level[0], 0, sizeof(Node));
	level[0].r.nvars = (int8_t) w->arity;
	for (int v = 0; v < w->arity; v++)
		level[0].r.vcls[v] = (int8_t) w->cls[v];
	level[0].cov = gdl_alloc(sizeof(int32_t) * (nex + 1));
	memcpy(level[0].cov, ex, sizeof(int32_t) * nex);
	for (int32_t i = 0; i < nex; i++)
		level[0].ntp += ex[i] < w->npos;
	level[0].nfp = nex - level[0].ntp;
	inplay = level[0].ntp;
	s->P0 = level[0].ntp > 0 ? level[0].ntp : 1;
	s->N0 = level[0].nfp > 0 ? level[0].nfp : 1;

	for (int depth = 1; depth <= s->max_body && nlevel > 0 && !s->solver.expired; depth++)
	{
		/* Occam: once a rule covers half the positives, look at most two atoms further */
		if (s->have && depth > s->best.r.natoms + 2 && 2 * (int64_t) s->best.ntp >= inplay)
			break;
		int			cap = 2 * s->beam + 64;
		Node	   *pool = gdl_alloc(sizeof(Node) * cap);
		int			npool = 0;

		for (int i = 0; i < nlevel && !s->solver.expired; i++)
		{
			Node	   *par = &level[i];
			NxRule	   *kids;
			int			nk;

			if (!can_beat(s, par))
				continue;
			nk = nx_refinements(w, &par->r, s->max_vars, &kids);
			for (int j = 0; j < nk && !s->solver.expired; j++)
			{
				Node		c;
				int32_t	   *buf;
				int32_t		nc;

				if (s->solver.deadline > 0 && (s->nodes & 63) == 0 && ilp_now() > s->solver.deadline)
				{
					s->solver.expired = true;
					break;
				}
				memset(&c, 0, sizeof(c));
				c.r = kids[j];
				nx_rule_canon(&c.r, w->arity);
				c.key = nx_rule_key(&c.r);
				if (!ilp_keyset_add(&s->seen, c.key))
					continue;
				s->nodes++;
				buf = gdl_alloc(sizeof(int32_t) * (par->ntp + par->nfp + 1));
				nc = nx_cover(&s->solver, &c.r, par->cov, par->ntp + par->nfp, buf);
				if (s->solver.expired)
				{
					gdl_free(buf);
					break;
				}
				c.cov = buf;
				c.ntp = count_pos(w->npos, buf, nc);
				c.nfp = nc - c.ntp;
				c.lift = (int64_t) c.ntp * s->N0 - (int64_t) c.nfp * s->P0;
				if (c.ntp < s->min_support || !can_beat(s, &c))
				{
					gdl_free(buf);
					continue;
				}
				offer(s, &c);
				if ((c.nfp == 0 && nx_rule_safe(&c.r, w->arity)) || depth == s->max_body)
				{
					gdl_free(buf);
					continue;
				}
				if (npool == cap)
					truncate_pool(s, pool, &npool, s->beam);
				pool[npool++] = c;
			}
			gdl_free(kids);
		}
		for (int i = 0; i < nlevel; i++)
			gdl_free(level[i].cov);
		gdl_free(level);
		truncate_pool(s, pool, &npool, s->beam);
		/* a later level cannot beat the best with what is left */
		level = pool;
		nlevel = npool;
		for (int i = 0; i < nlevel; i++)
			if (!can_beat(s, &level[i]))
			{
				gdl_free(level[i].cov);
				level[i] = level[--nlevel];
				i--;
			}
		if (nlevel > 1)
			qsort(level, nlevel, sizeof(Node), cmp_node);
	}
	for (int i = 0; i < nlevel; i++)
		gdl_free(level[i].cov);
	gdl_free(level);
	if (!s->have)
		return false;
	*out = s->best;
	return true;
}

/* Examples of all the program's rules: tp and fp over all examples. */
static void
program_score(Search *s, Program *pg)
{
	const NxWorld *w = s->w;
	int32_t		nex = w->npos + w->nneg;
	bool	   *cov = gdl_alloc(sizeof(bool) * (nex + 1));
	int32_t    *all = gdl_alloc(sizeof(int32_t) * (nex + 1));
	int32_t    *buf = gdl_alloc(sizeof(int32_t) * (nex + 1));
	NxSolver	sv = s->solver;

	sv.deadline = 0;
	sv.expired = false;
	for (int32_t i = 0; i < nex; i++)
		all[i] = i;
	pg->atoms = 0;
	for (int i = 0; i < pg->n; i++)
	{
		int32_t		n = nx_cover(&sv, &pg->rules[i], all, nex, buf);

		for (int32_t k = 0; k < n; k++)
			cov[buf[k]] = true;
		pg->atoms += pg->rules[i].natoms + 1;
	}
	pg->tp = pg->fp = 0;
	for (int32_t i = 0; i < nex; i++)
		if (cov[i])
		{
			if (i < w->npos)
				pg->tp++;
			else
				pg->fp++;
		}
	gdl_free(cov);
	gdl_free(all);
	gdl_free(buf);
}

/* Learn one program by sequential covering with the current beam. */
static void
cover_all(Search *s, int max_rules, Program *pg)
{
	const NxWorld *w = s->w;
	int32_t		nex = w->npos + w->nneg;
	bool	   *done = gdl_alloc(sizeof(bool) * (nex + 1));
	int32_t    *ex = gdl_alloc(sizeof(int32_t) * (nex + 1));

	memset(pg, 0, sizeof(*pg));
	pg->rules = gdl_alloc(sizeof(NxRule) * (max_rules + 1));
	while (pg->n < max_rules && !s->solver.expired)
	{
		int32_t		n = 0,
					left = 0,
					fp = 0;
		Node		best;

		for (int32_t i = 0; i < nex; i++)
			if (!done[i])
			{
				ex[n++] = i;
				left += i < w->npos;
			}
			else
				fp += i >= w->npos;
		/* with noise, the program may misclassify noise x the examples */
		if (left == 0 || (s->noise > 0 && left + fp <= s->noise * nex) ||
			!find_rule(s, ex, n, &best))
			break;
		pg->rules[pg->n++] = best.r;
		for (int32_t k = 0; k < best.ntp + best.nfp; k++)
			if (best.cov[k] < w->npos || s->noise > 0.0)
				done[best.cov[k]] = true;
		gdl_free(best.cov);
	}
	gdl_free(done);
	gdl_free(ex);
	program_score(s, pg);
}

/* Is program a better than b: more examples right, then fewer atoms? */
static bool
better(const NxWorld *w, const Program *a, const Program *b)
{
	int64_t		ra = a->tp + (w->nneg - a->fp),
				rb = b->tp + (w->nneg - b->fp);

	if (ra != rb)
		return ra > rb;
	return a->atoms < b->atoms;
}

/* Does the problem need the refinement search? */
bool
ilp_refine_needed(const GdlIlpProblem *prob, const GdlIlpParams *params)
{
	if (params->method == GDL_ILP_REFINE)
		return true;
	if (params->method == GDL_ILP_BULK)
		return false;
	if (prob->arity > 2 || params->max_body > 3)
		return true;
	for (int k = 0; k < prob->arity; k++)
		if (prob->tags[k] != NULL)
			return true;
	for (int r = 0; r < prob->nrels; r++)
	{
		if (prob->rels[r].arity > 2 && prob->rels[r].arity <= GDL_ILP_MAX_ARITY &&
			prob->rels[r].rows.nrows > 0)
			return true;
		for (int k = 0; k < prob->rels[r].arity && k < GDL_ILP_MAX_ARITY; k++)
			if (prob->rels[r].tags[k] != NULL)
				return true;
	}
	return false;
}

/* The result rows of a program: per-rule measures on all examples. */
static GdlIlpResult *
make_result(Search *s, const Program *pg, int beam, bool timed_out, double secs)
{
	const NxWorld *w = s->w;
	GdlIlpResult *res = gdl_alloc(sizeof(GdlIlpResult));
	int32_t		nex = w->npos + w->nneg;
	int32_t    *all = gdl_alloc(sizeof(int32_t) * (nex + 1));
	int32_t    *buf = gdl_alloc(sizeof(int32_t) * (nex + 1));
	double	   *q = gdl_alloc(sizeof(double) * (nex + 1));
	NxSolver	sv = s->solver;
	GdlBuf		prog;

	sv.deadline = 0;
	sv.expired = false;
	gdl_buf_init(&prog);
	for (int32_t i = 0; i < nex; i++)
	{
		all[i] = i;
		q[i] = 1.0;
	}
	res->nrules = pg->n;
	res->rules = gdl_alloc(sizeof(GdlIlpRule) * (pg->n + 1));
	for (int i = 0; i < pg->n; i++)
	{
		GdlIlpRule *r = &res->rules[i];
		int32_t		n = nx_cover(&sv, &pg->rules[i], all, nex, buf);
		int32_t		tp = count_pos(w->npos, buf, n);
		double		p;

		r->rank = i + 1;
		r->rule = nx_rule_text(w, &pg->rules[i]);
		r->precision = n > 0 ? (double) tp / n : 0.0;
		r->recall = w->npos > 0 ? (double) tp / w->npos : 0.0;
		r->support = tp;
		r->head_coverage = r->recall;
		r->std_confidence = r->precision;
		r->pca_confidence = r->precision;
		r->probability = r->precision;
		p = r->probability;
		for (int32_t k = 0; k < n; k++)
			q[buf[k]] *= 1.0 - p;
		r->loss = 0.0;
		for (int32_t e = 0; e < nex; e++)
		{
			double		x = e < w->npos ? 1.0 - q[e] : q[e];

			r->loss -= log(x > GDL_ILP_EPS ? x : GDL_ILP_EPS);
		}
		r->candidate_id = i;
		gdl_buf_append(&prog, "%s\n", r->rule);
	}
	res->epochs = 0;
	res->final_loss = pg->n > 0 ? res->rules[pg->n - 1].loss : 0.0;
	res->program = prog.data ? prog.data : gdl_strdup("");
	res->npositives = w->npos;
	res->nnegatives = w->nneg;
	res->ncandidates = s->nodes;
	res->max_body_used = 0;
	for (int i = 0; i < pg->n; i++)
		if (pg->rules[i].natoms > res->max_body_used)
			res->max_body_used = pg->rules[i].natoms;
	res->train_precision = pg->tp + pg->fp > 0 ? (double) pg->tp / (pg->tp + pg->fp) : 0.0;
	res->train_recall = w->npos > 0 ? (double) pg->tp / w->npos : 0.0;
	res->timed_out = timed_out;
	res->method = "refine";
	res->nnotes = w->nnotes;
	res->notes = w->notes;
	res->message = gdl_sprintf("refinement search (beam %d%s): %lld rules tried on %d+%d "
							   "examples%s in %.1f s; %d rules, precision %.3f, recall %.3f, "
							   "accuracy %.3f on the examples%s",
							   beam, s->noise > 0 ? gdl_sprintf(", noise %g", s->noise) : "",
							   (long long) s->nodes, w->npos, w->nneg,
							   w->generated_neg ? " (negatives generated)" : "", secs, pg->n,
							   res->train_precision, res->train_recall,
							   nex > 0 ? (double) (pg->tp + w->nneg - pg->fp) / nex : 0.0,
							   timed_out ? "; max_seconds ran out: the best program so far" : "");
	gdl_free(all);
	gdl_free(buf);
	gdl_free(q);
	return res;
}

/* Learn with the refinement search; see the file comment. */
GdlIlpResult *
ilp_refine_learn(const GdlIlpProblem *prob, const GdlIlpParams *params)
{
	double		t0 = ilp_now();
	Search		s;
	NxWorld    *w;
	Program		best;
	bool		have = false;
	int			beam = params->beam > 0 ? params->beam : 64;
	int			used_beam = beam;

	w = nx_world_build(prob, params->seed, params->neg_per_pos > 0 ? params->neg_per_pos : 4);
	memset(&s, 0, sizeof(s));
	memset(&best, 0, sizeof(best));
	s.w = w;
	s.solver.w = w;
	s.solver.deadline = params->max_seconds > 0 ? t0 + params->max_seconds : 0;
	s.max_body = params->max_body;
	s.max_vars = params->max_vars > 0 ? params->max_vars : w->arity + params->max_body;
	if (s.max_vars > NX_MAX_VARS)
		s.max_vars = NX_MAX_VARS;
	if (s.max_vars < w->arity)
		s.max_vars = w->arity;
	s.min_support = params->min_support > 0 ? params->min_support : 1;
	s.noise = params->noise;
	ilp_keyset_init(&s.seen, 16);
	for (;;)
	{
		Program		pg;

		s.beam = beam;
		s.cut = false;
		ilp_progress("searching", -1, NAN);
		cover_all(&s, params->max_rules, &pg);
		if (!have || better(w, &pg, &best))
		{
			best = pg;
			used_beam = beam;
			have = true;
		}
		if (s.solver.expired || (best.tp == w->npos && best.fp == 0) || !s.cut ||
			(s.noise > 0 && (w->npos - best.tp) + best.fp <= s.noise * (w->npos + w->nneg)) ||
			params->beam > 0 || beam >= 4096)
			break;
		beam *= 4;
	}
	ilp_keyset_free(&s.seen);
	return make_result(&s, &best, used_beam, s.solver.expired, ilp_now() - t0);
}
