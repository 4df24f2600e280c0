/*
 * ilp_fixpoint.c — a small bottom-up evaluator for candidate programs, used
 * when the host gives no fixpoint hook, and for the AMIE measures (every
 * head a rule derives over the data).
 *
 * Naive iteration: each round evaluates every rule over the background with
 * the target relation as derived so far (starting from the target's known
 * facts) until nothing new appears.  A rule's solutions are enumerated up to
 * the step that binds its head, then finished with an existence check, so a
 * head is produced once however many ways it can be derived.
 */
#include "ilp_int.h"

#include <string.h>

#define ILP_FIXPOINT_CAP 50000000	/* derived target facts before giving up */

/* Collects distinct head tuples of one rule. */
typedef struct Heads
{
	IlpKeySet  *set;
	int64_t		n;
	int64_t		cap;
	int64_t    *keys;
	int			arity;
	IlpRel	   *const *rels;
	const IlpPlan *plan;
	int			cut;			/* first step after which the head is bound */
	int64_t		calls;
} Heads;

/* Prefix solution: the head is bound; record it if new and derivable. */
static bool
on_prefix(void *arg, const int32_t *vals)
{
	Heads	   *h = arg;
	uint64_t	key = ilp_pair_key(vals[0], h->arity == 2 ? vals[1] : 0);
	int32_t		v[ILP_MAX_VARS];

	if ((++h->calls & 65535) == 0)
		gdl_check_interrupts();
	if (ilp_keyset_has(h->set, key))
		return false;
	memcpy(v, vals, sizeof(v));
	if (h->cut < h->plan->nsteps && !ilp_solve(h->rels, h->plan, h->cut, v, NULL, NULL))
		return false;
	ilp_keyset_add(h->set, key);
	if (h->n == h->cap)
	{
		h->cap = h->cap * 2 + 256;
		h->keys = gdl_realloc(h->keys, sizeof(int64_t) * h->cap);
	}
	h->keys[h->n++] = (int64_t) key;
	if (h->set->n > ILP_FIXPOINT_CAP)
		gdl_error(GDL_ERR_LIMIT, NULL, "Lower max_body or give fewer background facts.",
				  "a candidate rule derives more than %d facts", ILP_FIXPOINT_CAP);
	return false;
}

/* Add every head the rule derives over rels to h (new ones appended to h->keys). */
static void
rule_heads(IlpRel *const *rels, const IlpRule *r, int arity, Heads *h)
{
	IlpPlan		plan,
				prefix;
	int32_t		vals[ILP_MAX_VARS];
	bool		bound[ILP_MAX_VARS] = {false};
	int			cut = 0,
				need = arity;

	ilp_plan_build(r, 0, &plan);
	/* the step after which all head variables are bound */
	for (cut = 0; cut < plan.nsteps && need > 0; cut++)
	{
		const IlpStep *s = &plan.steps[cut];

		if (s->a < arity && !bound[s->a])
		{
			bound[s->a] = true;
			need--;
		}
		if (s->b >= 0 && s->b < arity && !bound[s->b])
		{
			bound[s->b] = true;
			need--;
		}
	}
	prefix = plan;
	prefix.nsteps = cut;
	h->rels = rels;
	h->plan = &plan;
	h->cut = cut;
	h->arity = arity;
	memset(vals, 0xff, sizeof(vals));
	ilp_solve(rels, &prefix, 0, vals, on_prefix, h);
}

/* Every head tuple one rule derives over the world (target = its relation). */
int64_t
ilp_rule_heads(const IlpWorld *w, IlpRel *const *rels, const IlpRule *r, int64_t **keys_out)
{
	IlpKeySet	set;
	Heads		h;

	memset(&h, 0, sizeof(h));
	ilp_keyset_init(&set, 1024);
	h.set = &set;
	rule_heads(rels, r, w->arity, &h);
	ilp_keyset_free(&set);
	*keys_out = h.keys;
	return h.n;
}

/* Rebuild the target relation from the derived keys. */
static IlpRel *
target_rel(const IlpWorld *w, const int64_t *keys, int64_t n)
{
	int32_t		nd[2] = {w->dom[w->cls[0]].n, w->arity == 2 ? w->dom[w->cls[1]].n : 0};
	int32_t    *a = gdl_alloc(sizeof(int32_t) * (n + 1));
	int32_t    *b = gdl_alloc(sizeof(int32_t) * (n + 1));
	IlpRel	   *r;

	for (int64_t i = 0; i < n; i++)
	{
		a[i] = (int32_t) ((uint64_t) keys[i] >> 32);
		b[i] = (int32_t) (keys[i] & 0xffffffff);
	}
	r = ilp_rel_build(w->arity, nd, n, a, w->arity == 2 ? b : NULL);
	gdl_free(a);
	gdl_free(b);
	return r;
}

/*
 * Evaluate a program of candidate rules to its least fixpoint over the
 * world's background; 'set' (initialised here) receives the target facts.
 */
void
ilp_fixpoint_set(const IlpWorld *w, const IlpRule *rules, int nrules, IlpKeySet *set)
{
	IlpRel	  **rels = ilp_world_rels(w);
	Heads		h;
	bool		recursive = false;

	memset(&h, 0, sizeof(h));
	ilp_keyset_init(set, 1024 + w->known->n);
	h.set = set;
	for (int64_t i = 0; i < w->known->n; i++)
	{
		uint64_t	k = ilp_pair_key(w->known->a[i], w->arity == 2 ? w->known->b[i] : 0);

		if (ilp_keyset_add(set, k))
		{
			if (h.n == h.cap)
			{
				h.cap = h.cap * 2 + 256;
				h.keys = gdl_realloc(h.keys, sizeof(int64_t) * h.cap);
			}
			h.keys[h.n++] = (int64_t) k;
		}
	}
	for (int i = 0; i < nrules; i++)
		recursive = recursive || ilp_rule_uses(&rules[i], w, ILP_PRED_TARGET);
	for (;;)
	{
		int64_t		before = h.n;

		IlpRel	   *t;

		gdl_check_interrupts();
		t = target_rel(w, h.keys, h.n);
		rels[w->target] = t;
		for (int i = 0; i < nrules; i++)
			rule_heads(rels, &rules[i], w->arity, &h);
		ilp_rel_free(t);
		if (!recursive || h.n == before)
			break;
	}
	gdl_free(h.keys);
	gdl_free(rels);
}

/* Mark the examples a program of candidate rules derives at fixpoint. */
void
ilp_fixpoint(const IlpWorld *w, const IlpRule *rules, int nrules, bool *derived)
{
	IlpKeySet	set;
	int32_t		nex = w->npos + w->nneg;

	ilp_fixpoint_set(w, rules, nrules, &set);
	for (int32_t e = 0; e < nex; e++)
		derived[e] = ilp_keyset_has(&set, ilp_pair_key(w->ex[0][e], w->ex[1][e]));
	ilp_keyset_free(&set);
}
