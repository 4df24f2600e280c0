/*
 * mine_predict.c — link prediction with mined rules: the answers of
 * r(h, ?) or r(?, t), each scored from the rules that derive it.
 *
 * Each rule whose head is the query's relation is evaluated with the bound
 * variable fixed (X = h, or Y = t): a small backtracking search over its
 * body atoms along the graph's links, never a full body materialization.
 * Constants of the body are bound from the start; a head r(X, c) answers
 * r(h, ?) with c when its body holds for X = h, and r(?, c) with the X of
 * its body (r(?, t) for t != c: nothing); r(c, X) the other way round.
 * Every answer collects the smoothed confidence support / (denominator +
 * smoothing) of each rule deriving it; answers rank by the aggregation
 * (max: the confidences best first, compared lexicographically; noisy_or:
 * 1 - prod(1 - c); cluster_noisy_or: the same product over clusters of
 * redundant rules, each counted once with its best confidence, ties then
 * broken as by max), ties by value; equal ranking keys share a rank.
 *
 * The query's own entity is no answer of a relation without a fact
 * r(e, e): a rule through a symmetric path (r(X, Y) :- s(X, Z), s(Y, Z))
 * proposes X itself for every X, and with Datalog's semantics (variables
 * may meet) nothing else stops it; an irreflexive relation never has it.
 *
 * Why clusters: max ranks an answer by its best rule alone, so ten
 * independent pieces of evidence count as one; noisy-or adds them up but
 * also adds up rules that say the same thing (a path and its longer
 * variants; every "X has some l-link" rule proposing the popular c).
 * SAFRAN clusters rules by the overlap of their predictions on the
 * training graph; here a cluster is either the rules over the same body
 * relations (cluster_noisy_or) or a kind of evidence (kind_noisy_or; see
 * rule_cluster) — no pass over the graph and no tuned threshold.
 *
 * Object identity (options.object_identity): in a rule without constants
 * no other variable binds X's entity, the semantics gdl_mine counts with
 * the same option, so that measures and answers agree.
 */
#include "mine_int.h"

#include <stdlib.h>
#include <string.h>

/* Defaults: max aggregation over PCA confidence, smoothing 5. */
void
gdl_predict_options_init(GdlPredictOptions *o)
{
	o->aggregation = GDL_PREDICT_MAX;
	o->use_pca = true;
	o->smoothing = 5.0;
	o->exclude_known = false;
	o->limit = 0;
	o->object_identity = false;
	for (int k = 0; k < GDL_PREDICT_NWEIGHTS; k++)
		o->weights[k] = k % GDL_PREDICT_NFEATURES < GDL_PREDICT_NKINDS ? 1.0 : 0.0;
}


/* The search state of one rule. */
typedef struct PredSearch
{
	const GdlMineGraph *g;
	const GdlMineRule *r;
	int			free_var;		/* the variable whose values are answers */
	int32_t		fixed;			/* or the one answer (a head constant), -1 */
	bool		done;			/* the fixed answer was found: stop */
	int32_t		val[4];			/* -1: unbound */
	int32_t		cval[GDL_MINE_MAX_BODY];	/* each atom's constant (entity) */
	bool		used[GDL_MINE_MAX_BODY];
	uint32_t   *seen;			/* per entity: rule stamp */
	uint32_t	stamp;
	PredHit    *hits;
	int64_t		nhits;
	int64_t		cap;
	int32_t		rule;
	double		conf;
	bool		threaded;		/* on a worker thread: malloc, no gdl_* calls */
	bool		failed;			/* threaded: out of memory */
	bool		oi;				/* object identity on X for this rule */
} PredSearch;

/*
 * Memory of a query: the host's (gdl_alloc, raising on failure) in the
 * calling thread, malloc on a worker thread (gdl_predict_many), where a
 * failure is noted and the query given up.
 */
static void *
pred_alloc(bool threaded, size_t n)
{
	return threaded ? malloc(n ? n : 1) : gdl_alloc(n);
}

static void
pred_free(bool threaded, void *p)
{
	if (p == NULL)
		return;
	if (threaded)
		free(p);
	else
		gdl_free(p);
}

/* Record an answer once per rule. */
static void
pred_found(PredSearch *s, int32_t e)
{
	if (s->seen[e] == s->stamp)
		return;
	s->seen[e] = s->stamp;
	if (s->failed)
		return;
	if (s->nhits == s->cap)
	{
		int64_t		ncap = s->cap ? 2 * s->cap : 64;

		if (s->threaded)
		{
			PredHit    *h = realloc(s->hits, sizeof(PredHit) * ncap);

			if (h == NULL)
			{
				s->failed = s->done = true;
				return;
			}
			s->hits = h;
		}
		else
			s->hits = gdl_realloc(s->hits, sizeof(PredHit) * ncap);
		s->cap = ncap;
	}
	s->hits[s->nhits].ent = e;
	s->hits[s->nhits].rule = s->rule;
	s->hits[s->nhits].conf = s->conf;
	s->nhits++;
}

/* The value of argument arg (a variable, or GDL_MINE_C) of atom i; -1: unbound. */
static inline int32_t
arg_value(const PredSearch *s, int i, int arg)
{
	return arg == GDL_MINE_C ? s->cval[i] : s->val[arg];
}

/*
 * Object identity on X (options.object_identity, as gdl_mine counts it):
 * in a rule without constants no other variable binds X's entity.  Would
 * binding variable var to e break it?
 */
static inline bool
oi_clash(const PredSearch *s, int var, int32_t e)
{
	if (!s->oi)
		return false;
	if (var != GDL_MINE_X)
		return s->val[GDL_MINE_X] == e;
	for (int v = GDL_MINE_Y; v <= GDL_MINE_W; v++)
		if (s->val[v] == e)
			return true;
	return false;
}

/*
 * Match the remaining atoms (depth of them done): the next atom is one with
 * a bound argument (both bound: a lookup); with none, its first argument
 * ranges over every entity.  When all are matched the free variable's value
 * is an answer.
 */
static void
pred_search(PredSearch *s, int depth)
{
	const GdlMineRule *r = s->r;
	const GdlMineGraph *g = s->g;
	int			pick = -1,
				best = -1;

	if (s->done)
		return;
	if (depth == r->nbody)
	{
		if (s->fixed >= 0)
		{
			pred_found(s, s->fixed);
			s->done = true;
		}
		else if (s->val[s->free_var] >= 0)
			pred_found(s, s->val[s->free_var]);
		return;
	}
	for (int i = 0; i < r->nbody; i++)
	{
		int			nbound;

		if (s->used[i])
			continue;
		nbound = (arg_value(s, i, r->body[i].a) >= 0) + (arg_value(s, i, r->body[i].b) >= 0);
		if (nbound > best)
		{
			best = nbound;
			pick = i;
		}
	}
	s->used[pick] = true;
	{
		const GdlMineAtom *at = &r->body[pick];
		int32_t		va = arg_value(s, pick, at->a),
					vb = arg_value(s, pick, at->b);

		if (va >= 0 && vb >= 0)
		{
			if (gdl_mine_graph_has(g, at->rel, va, vb))
				pred_search(s, depth + 1);
		}
		else if (va >= 0 || vb >= 0)
		{
			int32_t		e = va >= 0 ? va : vb;
			int			other = va >= 0 ? at->b : at->a;
			uint32_t	sig = 2 * (uint32_t) at->rel + (va >= 0 ? 0 : 1);
			int64_t		beg,
						end;

			if (mine_graph_links(g, e, sig, &beg, &end))
				for (int64_t k = beg; k < end; k++)
				{
					if (oi_clash(s, other, g->anb[k]))
						continue;
					s->val[other] = g->anb[k];
					pred_search(s, depth + 1);
				}
			s->val[other] = -1;
		}
		else
		{
			/* bind the first argument to every entity, then search again */
			s->used[pick] = false;
			for (int32_t e = 0; e < g->nent; e++)
			{
				if (oi_clash(s, at->a, e))
					continue;
				s->val[(int) at->a] = e;
				pred_search(s, depth);
			}
			s->val[(int) at->a] = -1;
		}
	}
	s->used[pick] = false;
}

/* Order of hits: answer, then confidence (best first), then rule. */
static int
cmp_hit(const void *a, const void *b)
{
	const PredHit *x = a,
			   *y = b;

	MINE_CMP_RET(x->ent, y->ent);
	MINE_CMP_RET(y->conf, x->conf);
	return MINE_CMP(x->rule, y->rule);
}

/* An answer while ranking: its hits [from, from + n). */
typedef struct PredAns
{
	int32_t		ent;
	int64_t		from;
	int32_t		n;
	double		score;
} PredAns;

static __thread const PredHit *rank_hits;	/* for the qsort comparators (per thread) */
static __thread GdlPredictAggregation rank_agg;

/* Sorted, packed body relations of a rule (never 0: every rule has a body atom). */
static uint64_t
body_relations_key(const GdlMineRule *r)
{
	uint64_t	rel[GDL_MINE_MAX_BODY] = {0};
	uint64_t	key = 0;

	for (int k = 0; k < r->nbody; k++)
	{
		uint64_t	v = (uint64_t) r->body[k].rel + 1;
		int			p = k;

		while (p > 0 && rel[p - 1] > v)
		{
			rel[p] = rel[p - 1];
			p--;
		}
		rel[p] = v;
	}
	for (int k = 0; k < r->nbody; k++)
		key = (key << 21) | (rel[k] & ((1u << 21) - 1));
	return key;
}

/*
 * The cluster of a rule, never 0 (a hash-set key).
 *
 * cluster_noisy_or: the rules over the same body relations (whatever their
 * constants, directions and variables).
 *
 * kind_noisy_or, a kind of evidence:
 *   - rules without constants, one cluster per body length: paths between
 *     X and Y of one length say the same thing (a film's genre through its
 *     director and through its writer), so they count once;
 *   - open rules r(X, c) :- l(X, Z) together: each says "X has some l-link"
 *     and they all propose the popular c;
 *   - rules with a body constant, one per (body relations, constants):
 *     r(X, c) :- l(X, d1) and r(X, c) :- l(X, d2) are two pieces of evidence
 *     (X's l-links d1 and d2), while the directions of one are one.
 * On FB15k-237's valid split kinds are +0.024 MRR over body relations; on
 * Kinship (dense, its evidence paths over many relations) -0.03: auto.sh
 * chooses per graph (docs/BENCHMARKS.md).
 */
uint64_t
mine_rule_cluster(const GdlMineRule *r, GdlPredictAggregation agg)
{
	uint64_t	key;
	bool		has_const = false;

	if (agg != GDL_PREDICT_KIND_NOISY_OR)
		return body_relations_key(r);
	for (int k = 0; k < r->nbody; k++)
		has_const |= r->body[k].a == GDL_MINE_C || r->body[k].b == GDL_MINE_C;
	if (r->head_const != GDL_MINE_HEAD_VARS && r->nbody == 1 && !has_const)
		return 1;
	if (r->head_const == GDL_MINE_HEAD_VARS && !has_const)
		return 2 + (uint64_t) r->nbody;
	key = body_relations_key(r);
	for (int k = 0; k < r->nbody; k++)
		if (r->body[k].a == GDL_MINE_C || r->body[k].b == GDL_MINE_C)
		{
			uint64_t	z = key ^ ((uint64_t) r->body[k].value * 0x9E3779B97F4A7C15ull);

			z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
			key = z ^ (z >> 27);
		}
	/* 1 .. 2 + GDL_MINE_MAX_BODY are the clusters above */
	return key < 8 ? key + 8 : key;
}

/*
 * 1 - prod(1 - c) over the hits [from, to) of one answer (best first),
 * each cluster counted once, with its first (best) hit; set: a scratch
 * hash set of at least 2 (to - from) slots, of which the first power of
 * two above that is cleared and used.
 */
static double
cluster_noisy_or(const GdlMineRule *rules, const PredHit *hits, int64_t from, int64_t to,
				 uint64_t *set, GdlPredictAggregation agg)
{
	int64_t		size = 2;
	double		prod = 1.0;

	while (size < 2 * (to - from))
		size *= 2;
	memset(set, 0, sizeof(uint64_t) * size);
	for (int64_t k = from; k < to; k++)
	{
		uint64_t	key = mine_rule_cluster(&rules[hits[k].rule], agg);
		uint64_t	h = (key * 0x9E3779B97F4A7C15ull) >> 17;
		bool		seen = false;

		for (int64_t p = (int64_t) (h & (uint64_t) (size - 1));; p = (p + 1) & (size - 1))
		{
			if (set[p] == 0)
			{
				set[p] = key;
				break;
			}
			if (set[p] == key)
			{
				seen = true;
				break;
			}
		}
		if (!seen)
			prod *= 1.0 - hits[k].conf;
	}
	return 1.0 - prod;
}

/* GDL_PREDICT_WEIGHTED's score of an answer: its features weighted for the query's direction. */
static double
weighted_score(const GdlMineGraph *g, const GdlMineRule *rules, const PredHit *hits, int64_t n,
			   const GdlPredictQuery *q, const GdlPredictOptions *o)
{
	double		f[GDL_PREDICT_NFEATURES],
				sum = 0;
	const double *w = o->weights + (q->subject_bound ? GDL_PREDICT_NFEATURES : 0);

	mine_answer_features(g, rules, hits, n, q, hits[0].ent, f);
	for (int k = 0; k < GDL_PREDICT_NFEATURES; k++)
		sum += w[k] * f[k];
	return sum;
}

/* Ranking key order: better first; 0 when the whole key is equal. */
static int
cmp_key(const PredAns *x, const PredAns *y)
{
	if (rank_agg != GDL_PREDICT_MAX && x->score != y->score)
		return x->score > y->score ? -1 : 1;
	if (rank_agg == GDL_PREDICT_NOISY_OR)
		return 0;
	for (int i = 0; i < x->n || i < y->n; i++)
	{
		double		cx = i < x->n ? rank_hits[x->from + i].conf : -1.0;
		double		cy = i < y->n ? rank_hits[y->from + i].conf : -1.0;

		if (cx != cy)
			return cx > cy ? -1 : 1;
	}
	return 0;
}

/* Answer order: ranking key, then value (dense ids ascend with values). */
static int
cmp_ans(const void *a, const void *b)
{
	const PredAns *x = a,
			   *y = b;
	int			c = cmp_key(x, y);

	if (c)
		return c;
	return x->ent < y->ent ? -1 : x->ent > y->ent;
}

/* The checks of a query's arguments (the calling thread: they raise). */
static void
check_query(const GdlMineGraph *g, const GdlPredictQuery *q, const GdlPredictOptions *o)
{
	if (q->rel < 0 || q->rel >= g->nrels)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "no relation %d to predict", q->rel);
	if (o->smoothing < 0)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "smoothing must not be negative");
}

/*
 * Evaluate rule i for the query (X = bound or Y = bound): record the
 * answers it derives.  Its constants' entities come from the index when
 * there is one (else from the graph, a binary search each).  fired: the
 * index found its body true for X = bound (a one-atom rule with a head
 * constant), so that constant is the one answer, without a search.
 */
static void
try_rule(PredSearch *s, const GdlMineRule *rules, int64_t i, const GdlPredictIndex *ix,
		 const GdlPredictQuery *q, const GdlPredictOptions *o, int32_t bound, bool fired)
{
	const GdlMineRule *r = &rules[i];
	double		den = (double) (o->use_pca ? r->pca_body_size : r->body_size) + o->smoothing;
	bool		usable = true;

	if (r->head != q->rel || r->nbody < 1 || r->nbody > GDL_MINE_MAX_BODY)
		return;
	s->rule = (int32_t) i;
	s->conf = den > 0 ? (double) r->support / den : 0.0;
	if (fired)
	{
		s->stamp++;
		s->done = false;
		pred_found(s, ix->fixed[i]);
		return;
	}

	/*
	 * head(X, c) or head(c, X): when the query binds the constant's side,
	 * the rule applies only if it is c (checked first: most rules with a
	 * constant head do not apply), and X is the answer; else X is the
	 * bound value and c the one answer.
	 */
	s->fixed = -1;
	s->done = false;
	for (int v = 0; v < 4; v++)
		s->val[v] = -1;
	if (r->head_const == GDL_MINE_HEAD_VARS)
	{
		s->free_var = q->subject_bound ? GDL_MINE_Y : GDL_MINE_X;
		s->val[q->subject_bound ? GDL_MINE_X : GDL_MINE_Y] = bound;
	}
	else if (q->subject_bound == (r->head_const == GDL_MINE_HEAD_SUBJECT))
	{
		if (r->head_value != q->value)
			return;
		s->free_var = GDL_MINE_X;
	}
	else
	{
		s->fixed = ix ? ix->fixed[i] : gdl_mine_graph_entity(s->g, r->head_value);
		s->free_var = GDL_MINE_X;
		s->val[GDL_MINE_X] = bound;
		usable &= s->fixed >= 0;
	}
	/* constants absent from the graph: the body never holds */
	for (int k = 0; k < r->nbody; k++)
	{
		s->cval[k] = -1;
		if (r->body[k].a == GDL_MINE_C || r->body[k].b == GDL_MINE_C)
		{
			s->cval[k] = ix ? ix->cval[i * GDL_MINE_MAX_BODY + k] : gdl_mine_graph_entity(s->g, r->body[k].value);
			usable &= s->cval[k] >= 0;
		}
	}
	s->r = r;
	s->oi = o->object_identity && r->head_const == GDL_MINE_HEAD_VARS;
	for (int k = 0; k < r->nbody; k++)
		s->oi &= s->cval[k] < 0;
	s->stamp++;
	if (!usable)
		return;
	memset(s->used, 0, sizeof(s->used));
	pred_search(s, 0);
}

/* Poll for an interrupt (threaded: the flag only; else the host raises). */
static bool
poll_stop(bool threaded, bool *stopped)
{
	if (!threaded)
		gdl_check_interrupts();
	else if (gdl_interrupt_pending())
	{
		*stopped = true;
		return true;
	}
	return false;
}

/*
 * The rules of an index for one query (mine_predict_index.c): the general
 * ones searched, those whose head constant the query binds found by it,
 * and the one-atom rules fired by the bound entity's links.
 */
static void
predict_indexed(PredSearch *s, const GdlPredictIndex *ix, const GdlPredictQuery *q,
				const GdlPredictOptions *o, int32_t bound, bool threaded, bool *stopped)
{
	const GdlMineGraph *g = s->g;
	int			d = q->subject_bound ? 1 : 0;
	const PredKeyedList *gen = &ix->general[d],
			   *byhead = &ix->byhead[d],
			   *links = &ix->links[d],
			   *open = &ix->open[d];
	int64_t		k;

	for (k = 0; k < gen->n && !s->failed; k++)
	{
		if ((k & 255) == 0 && poll_stop(threaded, stopped))
			return;
		try_rule(s, ix->rules, gen->v[k].rule, ix, q, o, bound, false);
	}
	for (k = pred_keyed_lower(byhead, (uint64_t) bound); k < byhead->n && byhead->v[k].key == (uint64_t) bound &&
		 !s->failed; k++)
	{
		if ((k & 255) == 0 && poll_stop(threaded, stopped))
			return;
		try_rule(s, ix->rules, byhead->v[k].rule, ix, q, o, bound, false);
	}
	if (links->n > 0)
		for (int64_t l = g->aoff[bound]; l < g->aoff[bound + 1] && !s->failed; l++)
		{
			uint64_t	key = ((uint64_t) (uint32_t) g->asig[l] << 32) | (uint32_t) g->anb[l];

			for (k = pred_keyed_lower(links, key); k < links->n && links->v[k].key == key && !s->failed; k++)
				try_rule(s, ix->rules, links->v[k].rule, ix, q, o, bound, true);
		}
	for (k = 0; k < open->n && !s->failed;)
	{
		uint64_t	sig = open->v[k].key;
		int64_t		beg,
					end;
		bool		fires = mine_graph_links(g, bound, (uint32_t) sig, &beg, &end) && beg < end;

		for (; k < open->n && open->v[k].key == sig && !s->failed; k++)
			if (fires)
				try_rule(s, ix->rules, open->v[k].rule, ix, q, o, bound, true);
	}
}

/*
 * Rank the answers of one query with the rules whose head is its relation.
 * A value no fact mentions has no answers.  threaded: on a worker thread
 * (malloc'd result; NULL when out of memory or *stopped by an interrupt).
 */
/* A worker's per-entity stamps, kept over its queries (zeroed once, not per query). */
typedef struct PredScratch
{
	uint32_t   *seen;			/* nent + 1, calloc'd */
	uint32_t	stamp;			/* the last stamp used */
	int32_t    *count;			/* nent + 1, zero between queries (group_hits); may be NULL */
} PredScratch;

/* qsort order of entity ids. */
static int
cmp_int32(const void *a, const void *b)
{
	return MINE_CMP(*(const int32_t *) a, *(const int32_t *) b);
}

/*
 * Sort a worker's hits in cmp_hit's order without comparing them all: a
 * counting pass by answer entity (the per-worker counts, left zero
 * again), the distinct answers sorted, the hits scattered into their
 * answer's group, then each group (a few hits) sorted by confidence and
 * rule.  The (answer, rule) pairs are distinct, so the order is cmp_hit's
 * exactly.  Returns the sorted hits (malloc'd; the old array freed), or
 * NULL when out of memory (the hits untouched).
 */
static PredHit *
group_hits(PredHit *hits, int64_t n, int32_t *count)
{
	int32_t    *ents = malloc(sizeof(int32_t) * (n + 1));
	PredHit    *out = malloc(sizeof(PredHit) * (n + 1));
	int64_t		nents = 0,
				at = 0;

	if (ents == NULL || out == NULL)
	{
		free(ents);
		free(out);
		return NULL;
	}
	for (int64_t i = 0; i < n; i++)
		if (count[hits[i].ent]++ == 0)
			ents[nents++] = hits[i].ent;
	qsort(ents, nents, sizeof(int32_t), cmp_int32);
	for (int64_t k = 0; k < nents; k++)
	{
		int32_t		c = count[ents[k]];

		count[ents[k]] = (int32_t) at;	/* the group's next slot */
		at += c;
	}
	for (int64_t i = 0; i < n; i++)
		out[count[hits[i].ent]++] = hits[i];
	for (int64_t k = 0, from = 0; k < nents; k++)
	{
		int64_t		to = count[ents[k]];

		if (to - from > 1)
			qsort(out + from, to - from, sizeof(PredHit), cmp_hit);
		count[ents[k]] = 0;
		from = to;
	}
	free(ents);
	free(hits);
	return out;
}

static GdlPredictResult *
predict_query(const GdlMineGraph *g, const GdlMineRule *rules, int64_t nrules,
			  const GdlPredictIndex *ix, const GdlPredictQuery *q, const GdlPredictOptions *o,
			  bool threaded, bool *stopped, PredScratch *scratch)
{
	GdlPredictResult *res = pred_alloc(threaded, sizeof(GdlPredictResult));
	PredSearch	s;
	int32_t		bound;
	PredAns    *ans;
	uint64_t   *cset = NULL;	/* cluster_noisy_or's scratch set */
	int64_t		nans = 0,
				nkeep = 0;

	if (res == NULL)
		return NULL;
	memset(res, 0, sizeof(*res));
	bound = gdl_mine_graph_entity(g, q->value);
	if (bound < 0)
		return res;
	memset(&s, 0, sizeof(s));
	s.g = g;
	s.threaded = threaded;
	if (scratch != NULL)
	{
		/* the worker's stamps: a new stamp per rule never meets an old one (reset at wrap) */
		if (scratch->stamp > UINT32_MAX - (uint32_t) (nrules + 2))
		{
			memset(scratch->seen, 0, sizeof(uint32_t) * (g->nent + 1));
			scratch->stamp = 0;
		}
		s.seen = scratch->seen;
		s.stamp = scratch->stamp;
	}
	else
		s.seen = threaded ? calloc(g->nent + 1, sizeof(uint32_t)) : gdl_alloc(sizeof(uint32_t) * (g->nent + 1));
	if (s.seen == NULL)
	{
		free(res);
		return NULL;
	}
	if (ix != NULL)
		predict_indexed(&s, ix, q, o, bound, threaded, stopped);
	else
		for (int64_t i = 0; i < nrules && i <= INT32_MAX; i++)
		{
			if ((i & 255) == 0 && poll_stop(threaded, stopped))
				break;
			if (s.failed)
				break;
			try_rule(&s, rules, i, NULL, q, o, bound, false);
		}
	if (scratch != NULL)
		scratch->stamp = s.stamp;
	if (s.failed || (stopped && *stopped))
	{
		free(s.hits);
		if (scratch == NULL)
			free(s.seen);
		free(res);
		return NULL;
	}
	if (s.nhits == 0)
	{
		pred_free(threaded, s.hits);
		if (scratch == NULL)
			pred_free(threaded, s.seen);
		return res;
	}
	{
		PredHit    *sorted = threaded && scratch != NULL && scratch->count != NULL
			? group_hits(s.hits, s.nhits, scratch->count) : NULL;

		if (sorted != NULL)
			s.hits = sorted;
		else
			qsort(s.hits, s.nhits, sizeof(PredHit), cmp_hit);
	}
	ans = pred_alloc(threaded, sizeof(PredAns) * s.nhits);
	if ((o->aggregation == GDL_PREDICT_CLUSTER_NOISY_OR || o->aggregation == GDL_PREDICT_KIND_NOISY_OR) &&
		ans != NULL)
	{
		cset = pred_alloc(threaded, sizeof(uint64_t) * (4 * s.nhits + 2));
		if (cset == NULL)
		{
			free(ans);
			ans = NULL;
		}
	}
	if (ans == NULL)
	{
		free(s.hits);
		if (scratch == NULL)
			free(s.seen);
		free(res);
		return NULL;
	}
	for (int64_t i = 0; i < s.nhits;)
	{
		int64_t		j = i;
		double		prod = 1.0;

		while (j < s.nhits && s.hits[j].ent == s.hits[i].ent)
		{
			prod *= 1.0 - s.hits[j].conf;
			j++;
		}
		if ((o->exclude_known &&
			 (q->subject_bound ? gdl_mine_graph_has(g, q->rel, bound, s.hits[i].ent)
			  : gdl_mine_graph_has(g, q->rel, s.hits[i].ent, bound))) ||
			(s.hits[i].ent == bound && !g->reflexive[q->rel]))
		{
			i = j;
			continue;
		}
		ans[nans].ent = s.hits[i].ent;
		ans[nans].from = i;
		ans[nans].n = (int32_t) (j - i);
		ans[nans].score = o->aggregation == GDL_PREDICT_NOISY_OR ? 1.0 - prod
			: (o->aggregation == GDL_PREDICT_CLUSTER_NOISY_OR || o->aggregation == GDL_PREDICT_KIND_NOISY_OR)
			? cluster_noisy_or(rules, s.hits, i, j, cset, o->aggregation)
			: o->aggregation == GDL_PREDICT_WEIGHTED ? weighted_score(g, rules, s.hits + i, j - i, q, o)
			: s.hits[i].conf;
		nans++;
		i = j;
	}
	if (cset)
		pred_free(threaded, cset);
	rank_hits = s.hits;
	rank_agg = o->aggregation;
	qsort(ans, nans, sizeof(PredAns), cmp_ans);
	nkeep = o->limit > 0 && o->limit < nans ? o->limit : nans;
	res->answers = pred_alloc(threaded, sizeof(GdlPredictAnswer) * (nkeep + 1));
	for (int64_t i = 0; i < nkeep && res->answers; i++)
	{
		GdlPredictAnswer *a = &res->answers[i];

		a->value = g->values[ans[i].ent];
		a->score = ans[i].score;
		a->rank = (i > 0 && cmp_key(&ans[i], &ans[i - 1]) == 0) ? res->answers[i - 1].rank : i + 1;
		a->nrules = ans[i].n;
		a->rules = pred_alloc(threaded, sizeof(int32_t) * (ans[i].n + 1));
		if (a->rules == NULL)
		{
			/* threaded, out of memory: give the query up */
			res->nanswers = i;
			rank_hits = NULL;
			free(ans);
			free(s.hits);
			if (scratch == NULL)
			free(s.seen);
			gdl_predict_result_free(res);
			return NULL;
		}
		for (int32_t k = 0; k < ans[i].n; k++)
			a->rules[k] = s.hits[ans[i].from + k].rule;
	}
	rank_hits = NULL;
	pred_free(threaded, ans);
	pred_free(threaded, s.hits);
	if (scratch == NULL)
			pred_free(threaded, s.seen);
	if (res->answers == NULL)
	{
		free(res);
		return NULL;
	}
	res->nanswers = nkeep;
	return res;
}

/* gdl_mine.h: one query, in the calling thread. */
GdlPredictResult *
gdl_predict(const GdlMineGraph *g, const GdlMineRule *rules, int64_t nrules,
			const GdlPredictQuery *q, const GdlPredictOptions *o)
{
	check_query(g, q, o);
	return predict_query(g, rules, nrules, NULL, q, o, false, NULL, NULL);
}

/* Free a result of gdl_predict_many (malloc'd); NULL is ignored. */
void
gdl_predict_result_free(GdlPredictResult *res)
{
	if (res == NULL)
		return;
	for (int64_t i = 0; i < res->nanswers; i++)
		free(res->answers[i].rules);
	free(res->answers);
	free(res);
}

/* The shared state of gdl_predict_many's workers. */
typedef struct PredBatch
{
	const GdlMineGraph *g;
	GdlPredictJob *jobs;
	int64_t		n;
	const GdlPredictOptions *o;
	int64_t		cursor;			/* next job (atomic) */
	int			failed;			/* out of memory (atomic) */
	int			stopped;		/* an interrupt (atomic) */
} PredBatch;

/* A worker: take jobs one at a time until none is left or the batch fails. */
static void
predict_task(void *arg, int tid, int ntasks)
{
	PredBatch  *b = arg;
	PredScratch sc;

	(void) tid;
	(void) ntasks;
	sc.stamp = 0;
	sc.seen = calloc(b->g->nent + 1, sizeof(uint32_t));
	sc.count = calloc(b->g->nent + 1, sizeof(int32_t));	/* NULL: hits sorted by qsort */
	if (sc.seen == NULL)
	{
		__atomic_store_n(&b->failed, 1, __ATOMIC_RELAXED);
		return;
	}
	for (;;)
	{
		int64_t		j = __atomic_fetch_add(&b->cursor, 1, __ATOMIC_RELAXED);
		GdlPredictJob *job;
		bool		stopped = false;

		if (j >= b->n || __atomic_load_n(&b->failed, __ATOMIC_RELAXED) ||
			__atomic_load_n(&b->stopped, __ATOMIC_RELAXED))
			break;
		job = &b->jobs[j];
		job->res = predict_query(b->g, job->rules, job->nrules, job->index, &job->q, b->o, true, &stopped, &sc);
		if (stopped)
			__atomic_store_n(&b->stopped, 1, __ATOMIC_RELAXED);
		else if (job->res == NULL)
			__atomic_store_n(&b->failed, 1, __ATOMIC_RELAXED);
	}
	free(sc.seen);
	free(sc.count);
}

/* A batch of gdl_predict_start: the workers' shared state and their threads. */
struct GdlPredictRun
{
	PredBatch	b;
	GdlParRun  *par;
};

/* Free every result of a batch's jobs. */
static void
free_results(GdlPredictJob *jobs, int64_t n)
{
	for (int64_t j = 0; j < n; j++)
	{
		gdl_predict_result_free(jobs[j].res);
		jobs[j].res = NULL;
	}
}

/*
 * gdl_mine.h: start answering n queries on gdl_threads() worker threads and
 * return at once.  The queries are checked first, here (a bad one raises
 * before any thread starts).  NULL when there is no memory for the handle
 * (the batch has then run to its end: gdl_predict_finish(NULL) checks it).
 */
GdlPredictRun *
gdl_predict_start(const GdlMineGraph *g, GdlPredictJob *jobs, int64_t n, const GdlPredictOptions *o)
{
	GdlPredictRun *run;
	int			threads = gdl_threads();

	for (int64_t j = 0; j < n; j++)
	{
		check_query(g, &jobs[j].q, o);
		jobs[j].res = NULL;
	}
	run = malloc(sizeof(GdlPredictRun));
	if (run == NULL)
		gdl_error(GDL_ERR_OUT_OF_MEMORY, NULL, NULL, "out of memory while predicting");
	memset(run, 0, sizeof(*run));
	run->b.g = g;
	run->b.jobs = jobs;
	run->b.n = n;
	run->b.o = o;
	if (threads > n)
		threads = (int) (n > 0 ? n : 1);
	run->par = gdl_parallel_start(threads, predict_task, &run->b);
	return run;
}

/*
 * gdl_mine.h: wait for a batch of gdl_predict_start; on an interrupt or a
 * failure free every result and raise.
 */
void
gdl_predict_finish(GdlPredictRun *run)
{
	PredBatch	b;

	gdl_parallel_join(run->par);
	b = run->b;
	free(run);
	if (b.failed || b.stopped)
	{
		free_results(b.jobs, b.n);
		gdl_check_stop();
		gdl_error(GDL_ERR_OUT_OF_MEMORY, NULL, NULL, "out of memory while predicting");
	}
}

/*
 * gdl_mine.h: stop a batch of gdl_predict_start (the workers give up at
 * their next query), wait for it and free its results; never raises, so a
 * host's error path may call it.
 */
void
gdl_predict_cancel(GdlPredictRun *run)
{
	if (run == NULL)
		return;
	__atomic_store_n(&run->b.stopped, 1, __ATOMIC_RELAXED);
	gdl_parallel_join(run->par);
	free_results(run->b.jobs, run->b.n);
	free(run);
}

/*
 * gdl_mine.h: many queries on gdl_threads() worker threads, each job's
 * result malloc'd (gdl_predict_result_free).  An interrupt or a failure
 * frees every result and raises.
 */
void
gdl_predict_many(const GdlMineGraph *g, GdlPredictJob *jobs, int64_t n, const GdlPredictOptions *o)
{
	gdl_predict_finish(gdl_predict_start(g, jobs, n, o));
}
