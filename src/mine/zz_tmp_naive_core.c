/*
 * zz_tmp_naive_core.c — TEMPORARY naive stand-in for the mining core
 * (branch i12m implements src/mine/ for real).  Only here so that the SQL
 * layer can be compiled and tested; deleted before the final commit.
 * Mines bodies of up to 2 atoms naively; predicts by backtracking.
 */
#include "gdl_mine.h"

#include <stdlib.h>
#include <string.h>

struct GdlMineGraph
{
	int			nrels;
	char	  **names;
	int32_t		nent;
	int64_t    *values;			/* sorted */
	int64_t    *nfacts;
	/* per relation: CSR by subject and by object, neighbours sorted */
	int64_t   **out_off;
	int32_t   **out_adj;
	int64_t   **in_off;
	int32_t   **in_adj;
};

static int
cmp_i64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return x < y ? -1 : x > y;
}

int32_t
gdl_mine_graph_entity(const GdlMineGraph *g, int64_t value)
{
	int64_t		lo = 0,
				hi = g->nent - 1;

	while (lo <= hi)
	{
		int64_t		m = (lo + hi) / 2;

		if (g->values[m] == value)
			return (int32_t) m;
		if (g->values[m] < value)
			lo = m + 1;
		else
			hi = m - 1;
	}
	return -1;
}

static void
build_csr(int32_t nent, int64_t n, const int64_t *keys, int64_t **off_out, int32_t **adj_out)
{
	int64_t    *off = gdl_alloc(sizeof(int64_t) * (nent + 1));
	int32_t    *adj = gdl_alloc(sizeof(int32_t) * (n + 1));
	int64_t		i;

	memset(off, 0, sizeof(int64_t) * (nent + 1));
	for (i = 0; i < n; i++)
		off[(keys[i] >> 32) + 1]++;
	for (i = 0; i < nent; i++)
		off[i + 1] += off[i];
	for (i = 0; i < n; i++)
		adj[i] = (int32_t) (keys[i] & 0xFFFFFFFF);
	*off_out = off;
	*adj_out = adj;
}

GdlMineGraph *
gdl_mine_graph_build(int nrels, const GdlMineRelation *rels)
{
	GdlMineGraph *g = gdl_alloc(sizeof(GdlMineGraph));
	int64_t		total = 0,
				n = 0,
				i;
	int			r;

	memset(g, 0, sizeof(*g));
	g->nrels = nrels;
	for (r = 0; r < nrels; r++)
		total += rels[r].rows.nrows;
	g->values = gdl_alloc(sizeof(int64_t) * (2 * total + 1));
	for (r = 0; r < nrels; r++)
		for (i = 0; i < (int64_t) rels[r].rows.nrows; i++)
		{
			g->values[n++] = rels[r].rows.cols[0][i];
			g->values[n++] = rels[r].rows.cols[1][i];
		}
	qsort(g->values, n, sizeof(int64_t), cmp_i64);
	{
		int64_t		k = 0;

		for (i = 0; i < n; i++)
			if (k == 0 || g->values[k - 1] != g->values[i])
				g->values[k++] = g->values[i];
		g->nent = (int32_t) k;
	}
	g->names = gdl_alloc(sizeof(char *) * (nrels + 1));
	g->nfacts = gdl_alloc(sizeof(int64_t) * (nrels + 1));
	g->out_off = gdl_alloc(sizeof(void *) * (nrels + 1));
	g->out_adj = gdl_alloc(sizeof(void *) * (nrels + 1));
	g->in_off = gdl_alloc(sizeof(void *) * (nrels + 1));
	g->in_adj = gdl_alloc(sizeof(void *) * (nrels + 1));
	for (r = 0; r < nrels; r++)
	{
		int64_t		m = rels[r].rows.nrows,
					k = 0;
		int64_t    *keys = gdl_alloc(sizeof(int64_t) * (m + 1));
		int64_t    *rev = gdl_alloc(sizeof(int64_t) * (m + 1));

		g->names[r] = gdl_strdup(rels[r].name);
		for (i = 0; i < m; i++)
		{
			int64_t		s = gdl_mine_graph_entity(g, rels[r].rows.cols[0][i]);
			int64_t		o = gdl_mine_graph_entity(g, rels[r].rows.cols[1][i]);

			keys[i] = (s << 32) | o;
		}
		qsort(keys, m, sizeof(int64_t), cmp_i64);
		for (i = 0; i < m; i++)
			if (k == 0 || keys[k - 1] != keys[i])
				keys[k++] = keys[i];
		g->nfacts[r] = k;
		for (i = 0; i < k; i++)
			rev[i] = ((keys[i] & 0xFFFFFFFF) << 32) | (keys[i] >> 32);
		qsort(rev, k, sizeof(int64_t), cmp_i64);
		build_csr(g->nent, k, keys, &g->out_off[r], &g->out_adj[r]);
		build_csr(g->nent, k, rev, &g->in_off[r], &g->in_adj[r]);
	}
	return g;
}

int
gdl_mine_graph_nrels(const GdlMineGraph *g)
{
	return g->nrels;
}

const char *
gdl_mine_graph_relname(const GdlMineGraph *g, int rel)
{
	return g->names[rel];
}

int64_t
gdl_mine_graph_nfacts(const GdlMineGraph *g, int rel)
{
	return g->nfacts[rel];
}

int64_t
gdl_mine_graph_value(const GdlMineGraph *g, int32_t e)
{
	return g->values[e];
}

int32_t
gdl_mine_graph_nentities(const GdlMineGraph *g)
{
	return g->nent;
}

bool
gdl_mine_graph_has(const GdlMineGraph *g, int rel, int32_t s, int32_t o)
{
	int64_t		lo = g->out_off[rel][s],
				hi = g->out_off[rel][s + 1] - 1;

	while (lo <= hi)
	{
		int64_t		m = (lo + hi) / 2;
		int32_t		v = g->out_adj[rel][m];

		if (v == o)
			return true;
		if (v < o)
			lo = m + 1;
		else
			hi = m - 1;
	}
	return false;
}

/* ------------------------------------------------------------- evaluation */

typedef void (*EmitFn) (void *arg, const int32_t *assign);

/* Backtrack over atoms in order; assign[v] < 0: unbound. */
static void
bt(const GdlMineGraph *g, const GdlMineAtom *atoms, int n, int k, int32_t *assign, EmitFn emit, void *arg)
{
	const GdlMineAtom *a;
	int32_t		sa,
				sb;
	int64_t		i;

	if (k == n)
	{
		emit(arg, assign);
		return;
	}
	a = &atoms[k];
	sa = assign[a->a];
	sb = assign[a->b];
	if (sa >= 0 && sb >= 0)
	{
		if (gdl_mine_graph_has(g, a->rel, sa, sb))
			bt(g, atoms, n, k + 1, assign, emit, arg);
	}
	else if (sa >= 0)
	{
		for (i = g->out_off[a->rel][sa]; i < g->out_off[a->rel][sa + 1]; i++)
		{
			assign[a->b] = g->out_adj[a->rel][i];
			bt(g, atoms, n, k + 1, assign, emit, arg);
		}
		assign[a->b] = -1;
	}
	else if (sb >= 0)
	{
		for (i = g->in_off[a->rel][sb]; i < g->in_off[a->rel][sb + 1]; i++)
		{
			assign[a->a] = g->in_adj[a->rel][i];
			bt(g, atoms, n, k + 1, assign, emit, arg);
		}
		assign[a->a] = -1;
	}
	else
	{
		int32_t		s;

		for (s = 0; s < g->nent; s++)
		{
			assign[a->a] = s;
			bt(g, atoms, n, k, assign, emit, arg);
		}
		assign[a->a] = -1;
	}
}

/* Order atoms so each one after the first shares a bound variable. */
static int
order_atoms(const GdlMineAtom *in, int n, int first_var, GdlMineAtom *out)
{
	bool		used[GDL_MINE_MAX_BODY] = {0};
	bool		bound[4] = {0};
	int			k,
				j;

	if (first_var >= 0)
		bound[first_var] = true;
	for (k = 0; k < n; k++)
	{
		int			pick = -1;

		for (j = 0; j < n && pick < 0; j++)
			if (!used[j] && (bound[in[j].a] || bound[in[j].b]))
				pick = j;
		for (j = 0; j < n && pick < 0; j++)
			if (!used[j])
				pick = j;
		used[pick] = true;
		out[k] = in[pick];
		bound[in[pick].a] = bound[in[pick].b] = true;
	}
	return n;
}

typedef struct PairBuf
{
	int64_t    *keys;
	int64_t		n,
				cap;
} PairBuf;

static void
emit_pair(void *arg, const int32_t *assign)
{
	PairBuf    *b = arg;

	if (b->n == b->cap)
	{
		b->cap = b->cap * 2 + 64;
		b->keys = gdl_realloc(b->keys, sizeof(int64_t) * b->cap);
	}
	b->keys[b->n++] = ((int64_t) assign[0] << 32) | assign[1];
}

/* Distinct (x, y) pairs of a body, sorted. */
static void
body_pairs(const GdlMineGraph *g, const GdlMineAtom *body, int n, PairBuf *b)
{
	GdlMineAtom ord[GDL_MINE_MAX_BODY];
	int32_t		assign[4] = {-1, -1, -1, -1};
	int64_t		i,
				k = 0;

	b->n = 0;
	order_atoms(body, n, -1, ord);
	bt(g, ord, n, 0, assign, emit_pair, b);
	qsort(b->keys, b->n, sizeof(int64_t), cmp_i64);
	for (i = 0; i < b->n; i++)
		if (k == 0 || b->keys[k - 1] != b->keys[i])
			b->keys[k++] = b->keys[i];
	b->n = k;
}

/* ----------------------------------------------------------------- mining */

void
gdl_mine_options_init(GdlMineOptions *o)
{
	memset(o, 0, sizeof(*o));
	o->target = -1;
	o->max_body = 3;
	o->min_head_coverage = 0.01;
	o->min_confidence = 0.1;
	o->min_std_confidence = 0;
	o->min_support = 1;
	o->device = GDL_DEVICE_CPU;
}

void
gdl_mine_canonical(GdlMineRule *r)
{
	(void) r;
}

typedef struct RuleBuf
{
	GdlMineRule *r;
	int64_t		n,
				cap;
} RuleBuf;

static void
consider(const GdlMineGraph *g, const GdlMineOptions *o, const GdlMineAtom *body, int nb,
		 PairBuf *pb, RuleBuf *rb, int64_t *cand)
{
	int			h,
				k;

	body_pairs(g, body, nb, pb);
	if (pb->n == 0)
		return;
	for (h = 0; h < g->nrels; h++)
	{
		GdlMineRule r;
		int64_t		i,
					sup = 0,
					pca = 0;
		bool		bad = false;

		if (o->target >= 0 && h != o->target)
			continue;
		for (k = 0; k < nb; k++)
			if (body[k].rel == h && body[k].a == GDL_MINE_X && body[k].b == GDL_MINE_Y)
				bad = true;
		if (bad)
			continue;
		(*cand)++;
		for (i = 0; i < pb->n; i++)
		{
			int32_t		x = (int32_t) (pb->keys[i] >> 32),
						y = (int32_t) (pb->keys[i] & 0xFFFFFFFF);

			if (g->out_off[h][x + 1] > g->out_off[h][x])
			{
				pca++;
				if (gdl_mine_graph_has(g, h, x, y))
					sup++;
			}
		}
		if (sup < o->min_support || sup == 0)
			continue;
		memset(&r, 0, sizeof(r));
		r.head = h;
		r.nbody = nb;
		memcpy(r.body, body, sizeof(GdlMineAtom) * nb);
		r.support = sup;
		r.body_size = pb->n;
		r.pca_body_size = pca;
		r.head_coverage = (double) sup / g->nfacts[h];
		r.std_confidence = (double) sup / pb->n;
		r.pca_confidence = (double) sup / pca;
		if (r.head_coverage < o->min_head_coverage || r.pca_confidence < o->min_confidence ||
			r.std_confidence < o->min_std_confidence)
			continue;
		if (rb->n == rb->cap)
		{
			rb->cap = rb->cap * 2 + 64;
			rb->r = gdl_realloc(rb->r, sizeof(GdlMineRule) * rb->cap);
		}
		rb->r[rb->n++] = r;
	}
}

static int
cmp_rule(const void *a, const void *b)
{
	const GdlMineRule *x = a,
			   *y = b;

	if (x->head != y->head)
		return x->head < y->head ? -1 : 1;
	return memcmp(x->body, y->body, sizeof(x->body)) < 0 ? -1 : 1;
}

GdlMineResult *
gdl_mine(const GdlMineGraph *g, const GdlMineOptions *o)
{
	GdlMineResult *res = gdl_alloc(sizeof(GdlMineResult));
	PairBuf		pb = {0};
	RuleBuf		rb = {0};
	GdlMineAtom body[GDL_MINE_MAX_BODY];
	int			natoms = 2 * g->nrels;
	int			p,
				q,
				op,
				oq;
	double		t0 = gdl_now_ms();

	memset(res, 0, sizeof(*res));
	memset(body, 0, sizeof(body));
	for (p = 0; p < natoms; p++)
	{
		body[0].rel = p / 2;
		body[0].a = p % 2 ? GDL_MINE_Y : GDL_MINE_X;
		body[0].b = p % 2 ? GDL_MINE_X : GDL_MINE_Y;
		consider(g, o, body, 1, &pb, &rb, &res->candidates);
		gdl_check_interrupts();
	}
	if (o->max_body >= 2)
	{
		for (p = 0; p < natoms; p++)
			for (q = p + 1; q < natoms; q++)
			{
				if (p / 2 == q / 2 && 0)
					continue;
				body[0].rel = p / 2;
				body[0].a = p % 2 ? GDL_MINE_Y : GDL_MINE_X;
				body[0].b = p % 2 ? GDL_MINE_X : GDL_MINE_Y;
				body[1].rel = q / 2;
				body[1].a = q % 2 ? GDL_MINE_Y : GDL_MINE_X;
				body[1].b = q % 2 ? GDL_MINE_X : GDL_MINE_Y;
				consider(g, o, body, 2, &pb, &rb, &res->candidates);
			}
		for (p = 0; p < g->nrels; p++)
		{
			gdl_check_interrupts();
			for (q = 0; q < g->nrels; q++)
				for (op = 0; op < 2; op++)
					for (oq = 0; oq < 2; oq++)
					{
						body[0].rel = p;
						body[0].a = op ? GDL_MINE_Z : GDL_MINE_X;
						body[0].b = op ? GDL_MINE_X : GDL_MINE_Z;
						body[1].rel = q;
						body[1].a = oq ? GDL_MINE_Y : GDL_MINE_Z;
						body[1].b = oq ? GDL_MINE_Z : GDL_MINE_Y;
						consider(g, o, body, 2, &pb, &rb, &res->candidates);
					}
		}
	}
	qsort(rb.r, rb.n, sizeof(GdlMineRule), cmp_rule);
	res->nrules = rb.n;
	res->rules = rb.r;
	res->times.total = (gdl_now_ms() - t0) / 1000.0;
	return res;
}

char *
gdl_mine_rule_text(const GdlMineGraph *g, const GdlMineRule *r)
{
	static const char *vn[] = {"X", "Y", "Z", "W"};
	GdlBuf		b;
	int			i;

	gdl_buf_init(&b);
	gdl_buf_append(&b, "%s(X, Y) :- ", g->names[r->head]);
	for (i = 0; i < r->nbody; i++)
		gdl_buf_append(&b, "%s%s(%s, %s)", i ? ", " : "", g->names[r->body[i].rel],
					   vn[r->body[i].a], vn[r->body[i].b]);
	gdl_buf_append(&b, ".");
	return b.data;
}

/* ------------------------------------------------------------- prediction */

void
gdl_predict_options_init(GdlPredictOptions *o)
{
	memset(o, 0, sizeof(*o));
	o->aggregation = GDL_PREDICT_MAX;
	o->use_pca = true;
	o->smoothing = 5;
	o->exclude_known = true;
	o->limit = 10;
}

typedef struct Cand
{
	int32_t		e;
	int32_t		n,
				cap;
	double	   *conf;
	int32_t    *rules;
	double		score;
} Cand;

typedef struct PredState
{
	Cand	   *by_ent;			/* per entity */
	bool		subject_bound;
	int32_t		cur_rule;
	double		cur_conf;
} PredState;

static void
emit_answer(void *arg, const int32_t *assign)
{
	PredState  *s = arg;
	int32_t		e = s->subject_bound ? assign[1] : assign[0];
	Cand	   *c = &s->by_ent[e];

	if (c->n > 0 && c->rules[c->n - 1] == s->cur_rule)
		return;
	if (c->n == c->cap)
	{
		c->cap = c->cap * 2 + 4;
		c->conf = gdl_realloc(c->conf, sizeof(double) * c->cap);
		c->rules = gdl_realloc(c->rules, sizeof(int32_t) * c->cap);
	}
	c->conf[c->n] = s->cur_conf;
	c->rules[c->n] = s->cur_rule;
	c->n++;
}

static GdlPredictAggregation sort_agg;

static int
cmp_key(const Cand *a, const Cand *b)
{
	int			i;

	if (sort_agg == GDL_PREDICT_NOISY_OR)
		return a->score > b->score ? -1 : a->score < b->score;
	for (i = 0; i < a->n && i < b->n; i++)
		if (a->conf[i] != b->conf[i])
			return a->conf[i] > b->conf[i] ? -1 : 1;
	return a->n > b->n ? -1 : a->n < b->n;
}

static int
cmp_cand(const void *x, const void *y)
{
	const Cand *a = *(const Cand *const *) x,
			   *b = *(const Cand *const *) y;
	int			c = cmp_key(a, b);

	return c ? c : (a->e < b->e ? -1 : a->e > b->e);
}

GdlPredictResult *
gdl_predict(const GdlMineGraph *g, const GdlMineRule *rules, int64_t nrules,
			const GdlPredictQuery *q, const GdlPredictOptions *o)
{
	GdlPredictResult *res = gdl_alloc(sizeof(GdlPredictResult));
	int32_t		v = gdl_mine_graph_entity(g, q->value);
	PredState	s;
	Cand	  **list;
	int64_t		i,
				n = 0;
	int32_t		e;

	memset(res, 0, sizeof(*res));
	if (v < 0)
		return res;
	s.by_ent = gdl_alloc(sizeof(Cand) * g->nent);
	memset(s.by_ent, 0, sizeof(Cand) * g->nent);
	s.subject_bound = q->subject_bound;
	for (i = 0; i < nrules; i++)
	{
		const GdlMineRule *r = &rules[i];
		GdlMineAtom ord[GDL_MINE_MAX_BODY];
		int32_t		assign[4] = {-1, -1, -1, -1};
		double		den;

		if (r->head != q->rel)
			continue;
		den = (double) (o->use_pca ? r->pca_body_size : r->body_size) + o->smoothing;
		s.cur_rule = (int32_t) i;
		s.cur_conf = den > 0 ? r->support / den : 0;
		assign[q->subject_bound ? 0 : 1] = v;
		order_atoms(r->body, r->nbody, q->subject_bound ? 0 : 1, ord);
		bt(g, ord, r->nbody, 0, assign, emit_answer, &s);
	}
	list = gdl_alloc(sizeof(Cand *) * (g->nent + 1));
	for (e = 0; e < g->nent; e++)
	{
		Cand	   *c = &s.by_ent[e];
		int			a,
					b;

		if (c->n == 0)
			continue;
		if (o->exclude_known &&
			(q->subject_bound ? gdl_mine_graph_has(g, q->rel, v, e) : gdl_mine_graph_has(g, q->rel, e, v)))
			continue;
		c->e = e;
		/* sort confidences (with rules) descending */
		for (a = 1; a < c->n; a++)
			for (b = a; b > 0 && c->conf[b] > c->conf[b - 1]; b--)
			{
				double		t = c->conf[b];
				int32_t		tr = c->rules[b];

				c->conf[b] = c->conf[b - 1];
				c->rules[b] = c->rules[b - 1];
				c->conf[b - 1] = t;
				c->rules[b - 1] = tr;
			}
		if (o->aggregation == GDL_PREDICT_MAX)
			c->score = c->conf[0];
		else
		{
			double		p = 1;

			for (a = 0; a < c->n; a++)
				p *= 1 - c->conf[a];
			c->score = 1 - p;
		}
		list[n++] = c;
	}
	sort_agg = o->aggregation;
	qsort(list, n, sizeof(Cand *), cmp_cand);
	res->nanswers = (o->limit > 0 && o->limit < n) ? o->limit : n;
	res->answers = gdl_alloc(sizeof(GdlPredictAnswer) * (res->nanswers + 1));
	for (i = 0; i < res->nanswers; i++)
	{
		GdlPredictAnswer *a = &res->answers[i];

		a->value = g->values[list[i]->e];
		a->score = list[i]->score;
		a->rank = (i > 0 && cmp_key(list[i], list[i - 1]) == 0) ? res->answers[i - 1].rank : i + 1;
		a->nrules = list[i]->n;
		a->rules = list[i]->rules;
	}
	return res;
}
