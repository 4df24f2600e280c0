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
 *      timed out.  An exact program found early in a budget gets one wider
 *      search for a smaller one.
 *   4. Minimal: each program found is shrunk (minimize: rules and body
 *      atoms the examples do not need dropped, with recursion atoms
 *      generalised to the target), judged at the fixpoint when recursive.
 *   5. Invention: with allow_recursive and invent, when the program does
 *      not fit or has more than 6 literals, steps 1-4 run again over a
 *      world with invented helpers (ilp_ninvent.c: closures and unions),
 *      whose clauses count in a program's size; the better program wins.
 *
 * With allow_recursive the target is a relation of the world (issue 22;
 * docs/DESIGN.md): FOIL's oracle while searching, the engine's fixpoint
 * (ilp_nfix.c) to accept a rule, a base case first.
 *
 * Memory: the data, plus the coverage lists of at most 2 x beam rules of a
 * level (each at most the examples in play) — never a matrix of the bias.
 */
#include "ilp_refine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Runners-up of a search with recursion, each judged at the fixpoint. */
#define NX_ALTS 8

/* A rule of the search and what it covers among the examples in play. */
typedef struct Node
{
	NxRule		r;
	int32_t    *cov;			/* ascending example ids: positives first */
	int32_t		ntp;
	int32_t		nfp;
	uint64_t	key;
	int64_t		lift;			/* ntp x N0 - nfp x P0 (see truncate_pool) */
	int32_t		nfresh;			/* with recursion: positives covered still in play */
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
	/* recursion through the target (w->target_rel >= 0) */
	IlpKeySet	failed;			/* rules the fixpoint rejected: never offered again */
	IlpKeySet	inprog;			/* rules of the program being built */
	bool		has_base;		/* the program has a rule without the target */
	const bool *done;			/* examples explained so far (cover_all's) */
	NxRel		fix;			/* the fixpoint of the program being built */
	int64_t		fixruns;		/* fixpoints computed */
	bool		cut;			/* the beam dropped some rule */
	int			used_beam;		/* the beam that found the best program */
	int64_t		nodes;
	/* the best complete rule of the current search */
	int64_t		P0;				/* positives and negatives in play */
	int64_t		N0;
	bool		have;
	Node		best;
	double		best_score;
	uint64_t	best_hash;		/* of what the best covers (recursive mode) */
	/* with recursion, the runners-up, best first (judged again at the fixpoint) */
	int			nalt;
	Node		alt[NX_ALTS];
	double		alt_score[NX_ALTS];
	uint64_t	alt_hash[NX_ALTS];	/* of what each covers */
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

/*
 * Is the search looking for the base case of a recursive program?  Then the
 * shortest acceptable rule wins, coverage deciding between equals: a base
 * case is short, and a longer rule that covers more now (a chain that the
 * recursion will derive) would take its place.
 */
static bool
base_mode(const Search *s)
{
	return s->w->target_rel >= 0 && !s->has_base;
}

/*
 * Is the search looking for a further rule of a recursive program?  Then
 * coverage is over all the examples, the positives already explained
 * included (cover_all), and a complete rule is judged by all the positives
 * it derives (the target assumed to hold on the positives) as long as some
 * are still in play: in the finished program a rule derives all it
 * derives, and a correct rule derives much of the target, where a
 * coincidence that fills the few positives left in play derives little
 * else.  The beam ranks partial rules the same way.
 */
static bool
recursive_mode(const Search *s)
{
	return s->w->target_rel >= 0 && s->has_base;
}

/*
 * The score of a rule, or the bound of its refinements', in recursive
 * mode: positives in play first (a rule that only specialises one already
 * taken adds none), then all the positives it derives (a coincidence that
 * fills the few left in play derives little else).
 */
static double
recursive_score(const Search *s, const Node *n)
{
	double		big = 64.0 * (s->w->npos + 1);

	if (s->noise <= 0.0)
		return n->nfresh * big + n->ntp * 64.0 - n->r.natoms;
	return n->nfresh * big + n->ntp - n->nfp - (n->r.natoms + 1);
}

/* Score of an acceptable complete rule (higher is better). */
static double
rule_score(Search *s, const Node *n)
{
	if (base_mode(s))
		return -1e9 * n->r.natoms + (s->noise <= 0.0 ? n->ntp : n->ntp - n->nfp);
	if (recursive_mode(s))
		return recursive_score(s, n);
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
	if (base_mode(s))
		return n->r.natoms <= s->best.r.natoms;
	if (recursive_mode(s))
	{
		/* the runners-up are kept too: beat the last of them */
		double		bound = s->nalt < NX_ALTS ? -1e300 : s->alt_score[NX_ALTS - 1];
		Node		up = *n;

		up.nfp = 0;				/* a refinement may lose every negative */
		return recursive_score(s, &up) > bound;
	}
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

/* A hash of the examples a node covers. */
static uint64_t
cov_hash(const Node *n)
{
	uint64_t	h = ilp_mix64((uint64_t) (n->ntp + n->nfp));

	for (int32_t k = 0; k < n->ntp + n->nfp; k++)
		h = ilp_mix64(h ^ (uint64_t) n->cov[k]);
	return h;
}

/*
 * Keep a runner-up among the NX_ALTS best, in score order; copy: n's
 * coverage is the caller's (copied when kept), else it is handed over
 * (freed when not kept).
 */
static void
alt_insert(Search *s, const Node *n, double sc, bool copy)
{
	int			at = s->nalt;
	Node		x = *n;
	uint64_t	h = cov_hash(n);
	bool		same = s->have && s->best_hash == h;

	/* a rule that covers just what a better one covers adds no choice */
	for (int i = 0; i < s->nalt && !same; i++)
		same = s->alt_hash[i] == h;
	if (same || (s->nalt == NX_ALTS && sc <= s->alt_score[NX_ALTS - 1]))
	{
		if (!copy)
			gdl_free(n->cov);
		return;
	}
	if (copy)
	{
		x.cov = gdl_alloc(sizeof(int32_t) * (n->ntp + n->nfp + 1));
		memcpy(x.cov, n->cov, sizeof(int32_t) * (n->ntp + n->nfp));
	}
	if (s->nalt == NX_ALTS)
	{
		gdl_free(s->alt[NX_ALTS - 1].cov);
		s->nalt--;
		at = s->nalt;
	}
	while (at > 0 && s->alt_score[at - 1] < sc)
	{
		s->alt[at] = s->alt[at - 1];
		s->alt_score[at] = s->alt_score[at - 1];
		s->alt_hash[at] = s->alt_hash[at - 1];
		at--;
	}
	s->alt[at] = x;
	s->alt_score[at] = sc;
	s->alt_hash[at] = h;
	s->nalt++;
}

/* Free the runners-up. */
static void
alt_clear(Search *s)
{
	for (int i = 0; i < s->nalt; i++)
		gdl_free(s->alt[i].cov);
	s->nalt = 0;
}

/*
 * Are a rule's body atoms one component (linked by shared variables, head
 * ones included)?  A recursive rule whose body falls apart, t(X, Y) :-
 * t(X, Z), t(W, Y), derives a product of its parts at the fixpoint; it is
 * never offered, and with recursion neither is a base case that falls
 * apart (t(X, Y) :- father(X, Z), father(W, Y): a product the recursion
 * would build on; Popper's clauses are connected too).
 */
static bool
body_connected(const NxRule *r)
{
	uint32_t	reach = 1;		/* atoms reached from atom 0, as bits */
	bool		grew = true;

	while (grew)
	{
		uint32_t	vars = 0;

		grew = false;
		for (int i = 0; i < r->natoms; i++)
			if (reach & (1u << i))
				for (int k = 0; k < NX_MAX_ARITY; k++)
					if (r->atoms[i].args[k] >= 0)
						vars |= 1u << r->atoms[i].args[k];
		for (int i = 0; i < r->natoms; i++)
			if (!(reach & (1u << i)))
				for (int k = 0; k < NX_MAX_ARITY; k++)
					if (r->atoms[i].args[k] >= 0 && (vars & (1u << r->atoms[i].args[k])))
					{
						reach |= 1u << i;
						grew = true;
						break;
					}
	}
	return reach == (1u << r->natoms) - 1;
}

/* Consider one complete rule for the best. */
static void
offer(Search *s, const Node *n)
{
	double		sc;

	if (!nx_rule_safe(&n->r, s->w->arity) || !acceptable(s, n->ntp, n->nfp))
		return;
	if (s->w->target_rel >= 0)
	{
		/* a recursive rule needs a base case; a rejected rule stays rejected */
		if (!s->has_base && nx_rule_recursive(s->w, &n->r))
			return;
		if (ilp_keyset_has(&s->failed, n->key) || ilp_keyset_has(&s->inprog, n->key))
			return;
		/* some positive it derives must still be in play */
		if (recursive_mode(s) && n->nfresh < s->min_support)
			return;
		if (!body_connected(&n->r))
			return;
	}
	sc = rule_score(s, n);
	if (s->have && sc <= s->best_score)
	{
		if (recursive_mode(s))
			alt_insert(s, n, sc, true);
		return;
	}
	if (s->have)
	{
		if (recursive_mode(s))
			alt_insert(s, &s->best, s->best_score, false);
		else
			gdl_free(s->best.cov);
	}
	s->best = *n;
	s->best.cov = gdl_alloc(sizeof(int32_t) * (n->ntp + n->nfp + 1));
	memcpy(s->best.cov, n->cov, sizeof(int32_t) * (n->ntp + n->nfp));
	s->best_score = sc;
	s->best_hash = recursive_mode(s) ? cov_hash(&s->best) : 0;
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
	alt_clear(s);
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
	level[0].nfresh = level[0].ntp;
	inplay = level[0].ntp;
	s->P0 = level[0].ntp > 0 ? level[0].ntp : 1;
	s->N0 = level[0].nfp > 0 ? level[0].nfp : 1;

	for (int depth = 1; depth <= s->max_body && nlevel > 0 && !s->solver.expired; depth++)
	{
		/* Occam: once a rule covers half the positives, look at most two atoms further */
		if (s->have && depth > s->best.r.natoms + 2 && 2 * (int64_t) s->best.ntp >= inplay)
			break;
		if (s->have && base_mode(s) && depth > s->best.r.natoms)
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
				c.ntp = ilp_count_below(w->npos, buf, nc);
				c.nfp = nc - c.ntp;
				c.nfresh = c.ntp;
				if (recursive_mode(s))
					for (int32_t k = 0; k < c.ntp; k++)
						c.nfresh -= s->done[buf[k]];
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

/* Is example i (positives first, then negatives) in the relation? */
static bool
example_derived(const NxWorld *w, const NxRel *rel, int32_t i)
{
	int64_t		t[NX_MAX_ARITY];

	for (int k = 0; k < w->arity; k++)
		t[k] = w->ex[k][i];
	return nx_rel_has(rel, t);
}

/*
 * With recursion: set the target's tuples in the world to the program's
 * fixpoint (from the known facts), so that each rule's coverage is what it
 * derives in the finished program.
 */
static void
settle(Search *s, const Program *pg)
{
	NxWorld    *w = (NxWorld *) s->w;
	NxRel		f;

	memset(&f, 0, sizeof(f));
	f.arity = w->arity;
	nx_fixpoint(w, pg->rules, pg->n, &w->known, &f);
	s->fixruns++;
	nx_world_set_target(w, &f, false);
	nx_rel_clear(&f);
}

/*
 * Is helper relation h used by a rule of the program before rule 'upto'
 * (atom 'atom' of rule 'upto' excluded and later ones)?  Helpers are
 * defined once per program, so their clauses are counted and printed at
 * their first use.
 */
static bool
helper_used_before(const Program *pg, int h, int upto, int atom)
{
	for (int i = 0; i <= upto && i < pg->n; i++)
		for (int j = 0; j < pg->rules[i].natoms && (i < upto || j < atom); j++)
			if (pg->rules[i].atoms[j].pred == h)
				return true;
	return false;
}

/* Literals of the definitions of the helpers the program uses, each once. */
static int
helper_literals(const NxWorld *w, const Program *pg)
{
	int			n = 0;

	for (int i = 0; i < pg->n; i++)
		for (int j = 0; j < pg->rules[i].natoms; j++)
		{
			int			h = pg->rules[i].atoms[j].pred;

			if (w->rels[h].helper != NX_HELPER_NONE && !helper_used_before(pg, h, i, j))
				n += nx_helper_literals(&w->rels[h]);
		}
	return n;
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
	if (w->target_rel >= 0)
	{
		/* recursion: what the program derives at its fixpoint */
		settle(s, pg);
		for (int32_t i = 0; i < nex; i++)
			cov[i] = example_derived(w, &w->rels[w->target_rel], i);
		for (int i = 0; i < pg->n; i++)
			pg->atoms += pg->rules[i].natoms + 1;
	}
	else
		for (int i = 0; i < pg->n; i++)
		{
			int32_t		n = nx_cover(&sv, &pg->rules[i], all, nex, buf);

			for (int32_t k = 0; k < n; k++)
				cov[buf[k]] = true;
			pg->atoms += pg->rules[i].natoms + 1;
		}
	pg->atoms += helper_literals(w, pg);
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

/*
 * With recursion: the program's fixpoint with rule c added (computed from
 * the fixpoint without it, so only what c adds is derived) into *f; false
 * when it derives negatives (with noise: more than noise x what it
 * derives).  *fresh: positives in play it derives.
 */
static bool
judge_at_fixpoint(Search *s, Program *pg, const Node *c, const bool *done, NxRel *f,
				  int32_t *fresh)
{
	const NxWorld *w = s->w;
	int32_t		nex = w->npos + w->nneg;
	int32_t		tp = 0,
				fp = 0;

	memset(f, 0, sizeof(*f));
	f->arity = w->arity;
	*fresh = 0;
	pg->rules[pg->n] = c->r;
	nx_fixpoint(w, pg->rules, pg->n + 1, &s->fix, f);
	s->fixruns++;
	for (int32_t i = 0; i < nex; i++)
		if (example_derived(w, f, i))
		{
			if (i < w->npos)
			{
				tp++;
				*fresh += !done[i];
			}
			else
				fp++;
		}
	if (s->noise <= 0.0 ? fp == 0 : fp <= s->noise * (double) (tp + fp))
		return true;
	nx_rel_clear(f);
	return false;
}

/*
 * With recursion: choose the search's next rule among its best and the
 * runners-up by what each really derives: the one whose fixpoint derives
 * the most positives in play (the first, by the search's score, among
 * equals); when none derives a new one, the best by the search's score
 * (FOIL's way: a load rule that needs the store rule still to be found is
 * taken for what it explains assuming the target on the positives;
 * cover_all brings back what the finished fixpoint does not derive).  A
 * candidate whose fixpoint derives negatives is rejected for the rest of
 * the run.  The chosen rule joins the program; the positives its fixpoint
 * derives and those it explains leave play (with noise the negatives
 * too); the target's tuples the search assumes become the new fixpoint
 * plus the positives.  False: every candidate was rejected.
 */
static bool
accept_at_fixpoint(Search *s, Program *pg, Node *best, bool *done)
{
	NxWorld    *w = (NxWorld *) s->w;
	int32_t		nex = w->npos + w->nneg;
	Node	   *cand[NX_ALTS + 1];
	int			ncand = 0,
				pick = -1;
	int32_t		pick_fresh = 0;
	NxRel		pick_fix;
	const Node *c;

	memset(&pick_fix, 0, sizeof(pick_fix));
	cand[ncand++] = best;
	for (int i = 0; i < s->nalt; i++)
		cand[ncand++] = &s->alt[i];
	for (int i = 0; i < ncand; i++)
	{
		NxRel		f;
		int32_t		fresh;

		if (!judge_at_fixpoint(s, pg, cand[i], done, &f, &fresh))
		{
			ilp_keyset_add(&s->failed, cand[i]->key);
			continue;
		}
		if (pick < 0 || fresh > pick_fresh)
		{
			nx_rel_clear(&pick_fix);
			pick_fix = f;
			pick = i;
			pick_fresh = fresh;
		}
		else
			nx_rel_clear(&f);
	}
	if (pick < 0)
		return false;
	c = cand[pick];
	pg->rules[pg->n++] = c->r;
	ilp_keyset_add(&s->inprog, c->key);
	if (!nx_rule_recursive(w, &c->r))
		s->has_base = true;
	for (int32_t i = 0; i < nex; i++)
		if ((i < w->npos || s->noise > 0.0) && example_derived(w, &pick_fix, i))
			done[i] = true;
	for (int32_t k = 0; k < c->ntp + c->nfp; k++)
		if (c->cov[k] < w->npos || s->noise > 0.0)
			done[c->cov[k]] = true;
	nx_rel_clear(&s->fix);
	s->fix = pick_fix;
	nx_world_set_target(w, &s->fix, true);
	return true;
}

/* Learn one program by sequential covering with the current beam. */
static void
cover_all(Search *s, int max_rules, Program *pg)
{
	const NxWorld *w = s->w;
	int32_t		nex = w->npos + w->nneg;
	bool	   *done = gdl_alloc(sizeof(bool) * (nex + 1));
	int32_t    *ex = gdl_alloc(sizeof(int32_t) * (nex + 1));

	int			rejected = 0,
				restarts = 0;

	s->done = done;
	memset(pg, 0, sizeof(*pg));
	pg->rules = gdl_alloc(sizeof(NxRule) * (max_rules + 1));
	if (w->target_rel >= 0)
	{
		/* the empty program's fixpoint: the known facts */
		ilp_keyset_free(&s->inprog);
		ilp_keyset_init(&s->inprog, 16);
		s->has_base = false;
		nx_rel_clear(&s->fix);
		s->fix.arity = w->arity;
		nx_fixpoint(w, NULL, 0, &w->known, &s->fix);
		s->fixruns++;
		nx_world_set_target((NxWorld *) w, &s->fix, true);
	}
	for (;;)
	{
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
				else if (i < w->npos && recursive_mode(s))
					ex[n++] = i;	/* with recursion, coverage over all positives */
				else
					fp += i >= w->npos;
			/* with noise, the program may misclassify noise x the examples */
			if (left == 0 || (s->noise > 0 && left + fp <= s->noise * nex) ||
				!find_rule(s, ex, n, &best))
				break;
			if (w->target_rel >= 0)
			{
				bool		ok = accept_at_fixpoint(s, pg, &best, done);

				gdl_free(best.cov);
				alt_clear(s);
				/* all rejected (negatives at the fixpoint): search again without them */
				if (!ok && ++rejected > 16)
					break;
				continue;
			}
			pg->rules[pg->n++] = best.r;
			for (int32_t k = 0; k < best.ntp + best.nfp; k++)
				if (best.cov[k] < w->npos || s->noise > 0.0)
					done[best.cov[k]] = true;
			gdl_free(best.cov);
		}

		/*
		 * With recursion, positives left play when a rule derived them
		 * assuming the target on the positives; those the program's
		 * fixpoint does not derive (a justification that was circular, or
		 * needs a rule not found) come back into play, twice at most.
		 */
		if (w->target_rel < 0 || restarts >= 2 || pg->n >= max_rules || s->solver.expired ||
			rejected > 16)
			break;
		{
			int32_t		back = 0;

			for (int32_t i = 0; i < w->npos; i++)
				if (done[i] && !example_derived(w, &s->fix, i))
				{
					done[i] = false;
					back++;
				}
			if (back == 0)
				break;
			restarts++;
		}
	}
	gdl_free(done);
	gdl_free(ex);
	program_score(s, pg);
}

/* Does a scored program fit: exact, or with noise within noise x the examples? */
static bool
program_fits(const Search *s, const Program *pg)
{
	const NxWorld *w = s->w;

	return (pg->tp == w->npos && pg->fp == 0) ||
		(s->noise > 0 && (w->npos - pg->tp) + pg->fp <= s->noise * (w->npos + w->nneg));
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

/* Misclassified examples of a scored program. */
static int64_t
program_errors(const NxWorld *w, const Program *pg)
{
	return (int64_t) (w->npos - pg->tp) + pg->fp;
}

/*
 * Is program t, a smaller variant of pg, at least as good?  Exact: every
 * positive still derived, no negative more.  With noise: no longer a description (errors + atoms).
 */
static bool
no_worse(const Search *s, const Program *t, const Program *pg)
{
	if (s->noise <= 0.0)
		return t->tp >= pg->tp && t->fp <= pg->fp;
	return program_errors(s->w, t) + t->atoms <= program_errors(s->w, pg) + pg->atoms;
}

/* A rule without body atom j, canonical; false when it would be unsafe or empty. */
static bool
drop_atom(const NxWorld *w, const NxRule *r, int j, NxRule *out)
{
	int			maxv = w->arity - 1;

	if (r->natoms <= 1)
		return false;
	*out = *r;
	memmove(&out->atoms[j], &out->atoms[j + 1], sizeof(NxAtom) * (r->natoms - j - 1));
	out->natoms--;
	memset(&out->atoms[out->natoms], -1, sizeof(NxAtom));
	nx_rule_canon(out, w->arity);
	for (int i = 0; i < out->natoms; i++)
		for (int k = 0; k < w->rels[out->atoms[i].pred].arity; k++)
			if (out->atoms[i].args[k] > maxv)
				maxv = out->atoms[i].args[k];
	out->nvars = (int8_t) (maxv + 1);
	if (!nx_rule_safe(out, w->arity))
		return false;
	if (out->natoms == 1 && out->atoms[0].pred == w->target_rel)
		return false;
	return true;
}

/* Drop every rule (last first) without which the program is no worse. */
static void
drop_rules(Search *s, Program *pg, Program *tmp)
{
	Program		t = *tmp;

	for (int i = pg->n - 1; i >= 0 && pg->n > 1; i--)
	{
		if (s->solver.deadline > 0 && ilp_now() > s->solver.deadline)
			break;
		t.n = 0;
		for (int j = 0; j < pg->n; j++)
			if (j != i)
				t.rules[t.n++] = pg->rules[j];
		program_score(s, &t);
		if (no_worse(s, &t, pg))
		{
			memcpy(pg->rules, t.rules, sizeof(NxRule) * t.n);
			pg->n = t.n;
			pg->tp = t.tp;
			pg->fp = t.fp;
			pg->atoms = t.atoms;
		}
	}
}

/*
 * With recursion: replace a body atom over a relation shaped like the
 * target by the target over the same arguments wherever the program stays
 * no worse.  The target holds wherever its base case does, so the rule
 * becomes more general at the same size: addr(Z, W) where the examples
 * cannot tell it from pt(Z, W), and pt(Z, W) is what holds on code the
 * examples do not show.
 */
static void
generalize(Search *s, Program *pg, Program *t)
{
	const NxWorld *w = s->w;

	if (w->target_rel < 0)
		return;
	for (int i = 0; i < pg->n; i++)
		for (int j = 0; j < pg->rules[i].natoms; j++)
		{
			NxRule		r = pg->rules[i];
			const NxRel *R = &w->rels[r.atoms[j].pred];
			int			uses = 0;
			bool		fits = r.atoms[j].pred != w->target_rel && R->arity == w->arity,
						same = true;

			if (s->solver.deadline > 0 && ilp_now() > s->solver.deadline)
				return;
			for (int k = 0; k < R->arity && fits; k++)
				fits = nx_compat(w, R->cls[k], w->cls[k]);
			for (int a = 0; a < r.natoms; a++)
				uses += r.atoms[a].pred == w->target_rel;
			for (int k = 0; k < w->arity; k++)
				same = same && r.atoms[j].args[k] == k;
			if (!fits || uses >= 2 || same)
				continue;
			r.atoms[j].pred = (int16_t) w->target_rel;
			nx_rule_canon(&r, w->arity);
			memcpy(t->rules, pg->rules, sizeof(NxRule) * pg->n);
			t->n = pg->n;
			t->rules[i] = r;
			program_score(s, t);
			if (no_worse(s, t, pg))
			{
				pg->rules[i] = r;
				pg->tp = t->tp;
				pg->fp = t->fp;
				pg->atoms = t->atoms;
				j = -1;			/* the atoms moved: look again (ends: one more target atom) */
			}
		}
}

/*
 * Make the learned program minimal (issue 22): drop every rule, then every
 * body atom, whose removal leaves the program no worse on the examples
 * (no_worse), judged at the fixpoint when the program is recursive.  A rule
 * that covers only examples others cover goes; so does a literal that
 * excludes no negative.  Stops at the deadline (what is dropped stays
 * dropped: each step kept the program as good).
 */
static void
minimize(Search *s, Program *pg)
{
	const NxWorld *w = s->w;
	Program		t;

	t.rules = gdl_alloc(sizeof(NxRule) * (pg->n + 1));
	drop_rules(s, pg, &t);
	for (int i = 0; i < pg->n; i++)
		for (int j = pg->rules[i].natoms - 1; j >= 0; j--)
		{
			NxRule		r;

			if (s->solver.deadline > 0 && ilp_now() > s->solver.deadline)
				break;
			if (!drop_atom(w, &pg->rules[i], j, &r))
				continue;
			memcpy(t.rules, pg->rules, sizeof(NxRule) * pg->n);
			t.n = pg->n;
			t.rules[i] = r;
			program_score(s, &t);
			if (no_worse(s, &t, pg))
			{
				pg->rules[i] = r;
				pg->tp = t.tp;
				pg->fp = t.fp;
				pg->atoms = t.atoms;
				j = pg->rules[i].natoms;	/* the atoms moved: look again */
			}
		}
	generalize(s, pg, &t);
	/* a shortened rule may now repeat or subsume another */
	drop_rules(s, pg, &t);
	gdl_free(t.rules);
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

/* Clauses of the helpers rule i uses first in the program, or NULL. */
static char *
rule_aux(const NxWorld *w, const Program *pg, int i)
{
	GdlBuf		b;

	gdl_buf_init(&b);
	for (int j = 0; j < pg->rules[i].natoms; j++)
	{
		int			h = pg->rules[i].atoms[j].pred;

		if (w->rels[h].helper != NX_HELPER_NONE && !helper_used_before(pg, h, i, j))
			gdl_buf_append(&b, "%s%s", b.len ? "\n" : "", nx_helper_text(w, h));
	}
	if (b.len == 0)
	{
		gdl_free(b.data);
		return NULL;
	}
	return b.data;
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
	GdlBuf		aux;			/* clauses of the helpers, first in the program */

	sv.deadline = 0;
	sv.expired = false;
	gdl_buf_init(&prog);
	gdl_buf_init(&aux);
	if (w->target_rel >= 0)
		settle(s, pg);			/* each rule's coverage in the finished program */
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
		int32_t		tp = ilp_count_below(w->npos, buf, n);
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
		r->recursive = nx_rule_recursive(w, &pg->rules[i]);
		r->aux = rule_aux(w, pg, i);
		if (r->aux)
		{
			gdl_buf_append(&aux, "%s\n", r->aux);
			res->invented = true;
		}
		gdl_buf_append(&prog, "%s\n", r->rule);
	}
	res->epochs = 0;
	res->final_loss = pg->n > 0 ? res->rules[pg->n - 1].loss : 0.0;
	if (aux.len > 0)
	{
		gdl_buf_append(&aux, "%s", prog.data);
		prog = aux;
	}
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

/*
 * One anytime search over a world (steps 1-4 of the file comment): the
 * best program into *best, the beam that found it into *used_beam.  The
 * search state stays in *s for make_result.
 */
static void
search_world(Search *s, const NxWorld *w, const GdlIlpParams *params, double t0,
			 double deadline, Program *best)
{
	int			beam = params->beam > 0 ? params->beam : 64;
	bool		have = false;
	bool		smaller = false;	/* searching again for a smaller program */

	memset(s, 0, sizeof(*s));
	memset(best, 0, sizeof(*best));
	s->w = w;
	s->solver.w = w;
	s->solver.deadline = deadline;
	s->max_body = params->max_body;
	s->max_vars = params->max_vars > 0 ? params->max_vars : w->arity + params->max_body;
	if (s->max_vars > NX_MAX_VARS)
		s->max_vars = NX_MAX_VARS;
	if (s->max_vars < w->arity)
		s->max_vars = w->arity;
	s->min_support = params->min_support > 0 ? params->min_support : 1;
	s->noise = params->noise;
	s->used_beam = beam;
	ilp_keyset_init(&s->seen, 16);
	ilp_keyset_init(&s->failed, 16);
	ilp_keyset_init(&s->inprog, 16);
	for (;;)
	{
		Program		pg;

		s->beam = beam;
		s->cut = false;
		ilp_progress("searching", -1, NAN);
		cover_all(s, params->max_rules, &pg);
		if (!s->solver.expired && (pg.n > 1 || (pg.n == 1 && pg.rules[0].natoms > 1)))
			minimize(s, &pg);
		if (!have || better(w, &pg, best))
		{
			*best = pg;
			s->used_beam = beam;
			have = true;
		}
		if (s->solver.expired || !s->cut || params->beam > 0 || beam >= 4096 || smaller)
			break;
		if (program_fits(s, best))
		{
			/*
			 * Popper returns the smallest program that fits: one search
			 * with a four times wider beam may find a smaller one, when
			 * it fits in the budget (about four times this one's time,
			 * with a quarter of what is left kept back); its program
			 * replaces this one only if smaller.
			 */
			double		now = ilp_now();

			if (deadline == 0 || (now - t0) * 6 > params->max_seconds)
				break;
			smaller = true;
			s->solver.deadline = now + (deadline - now) * 0.75;
		}
		beam *= 4;
	}
	if (smaller)
	{
		/* the wider search was optional: its running out is not the call's */
		s->solver.deadline = deadline;
		s->solver.expired = false;
	}
	ilp_keyset_free(&s->seen);
	alt_clear(s);
	ilp_keyset_free(&s->failed);
	ilp_keyset_free(&s->inprog);
	nx_rel_clear(&s->fix);
}

/*
 * Should the search run again with invented helpers (ilp_ninvent.c), and
 * until when (*until, 0 for no limit)?  Only with allow_recursive and
 * invent, when time is left, and when a helper could help: the program does
 * not fit (then with all the time left), or it is larger than the smallest
 * program with a helper (one one-atom rule and a union: 6 literals) — then,
 * like the wider search, within about four times what the search took.
 */
static bool
want_helpers(const Search *s, const Program *pg, const GdlIlpParams *params, double t0,
			 double deadline, double *until)
{
	double		now = ilp_now();

	*until = deadline;
	if (!params->allow_recursive || !params->invent || s->solver.expired)
		return false;
	if (deadline > 0 && now >= deadline)
		return false;
	if (!program_fits(s, pg))
		return true;
	if (pg->atoms <= 6)
		return false;
	*until = now + 4 * (now - t0) + 1.0;
	if (deadline > 0 && *until > deadline)
		*until = deadline;
	return true;
}

/* Learn with the refinement search; see the file comment. */
GdlIlpResult *
ilp_refine_learn(const GdlIlpProblem *prob, const GdlIlpParams *params)
{
	double		t0 = ilp_now();
	double		deadline = params->max_seconds > 0 ? t0 + params->max_seconds : 0;
	int			npp = params->neg_per_pos > 0 ? params->neg_per_pos : 4;
	Search		s;
	Program		best;
	NxWorld    *w;
	bool		timed_out;
	double		until;

	w = nx_world_build(prob, params->seed, npp, params->allow_recursive, false);
	search_world(&s, w, params, t0, deadline, &best);
	timed_out = s.solver.expired;
	if (want_helpers(&s, &best, params, t0, deadline, &until))
	{
		/*
		 * Predicate invention: the same search over a world with helpers;
		 * its program replaces this one only when better (more examples
		 * right, then fewer literals, the helpers' clauses counted).  Its
		 * running out of time is the call's only when it had all the time
		 * left.
		 */
		NxWorld    *wh = nx_world_build(prob, params->seed, npp, params->allow_recursive, true);
		Search		sh;
		Program		besth;
		int64_t		nodes = s.nodes;

		if (wh->nrels > w->nrels)
		{
			search_world(&sh, wh, params, t0, until, &besth);
			sh.nodes += nodes;
			timed_out = sh.solver.expired && until == deadline && deadline > 0;
			if (better(wh, &besth, &best))
			{
				s = sh;
				best = besth;
			}
			else
				s.nodes = sh.nodes;
		}
	}
	return make_result(&s, &best, s.used_beam, timed_out, ilp_now() - t0);
}
