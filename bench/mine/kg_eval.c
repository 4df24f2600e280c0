/*
 * kg_eval.c — link prediction scored without a database: the mining core
 * (gdl_mine) and prediction (gdl_predict_many) on a knowledge graph's
 * train split, every triple of the valid or test split asked both ways,
 * filtered ranks with ties at their expected rank — the procedure of
 * bench/kg/eval.sh and score.sql, minus SQL, so that a sweep of mining and
 * scoring settings on FB15k-237 takes minutes instead of an hour.  The SQL
 * path stays the one the benchmarks report; this is for choosing what to
 * build (and cross-checks it: the same settings give the same scores).
 *
 *   kg_eval DIR [-x valid|test] [-b MAX_BODY] [-H HC] [-C PCA_CONF] [-s SUP]
 *           [-K] [-B MAX_BODY_CONST] [-h CONST_HC] [-T THREADS]
 *           [-a max,noisy_or,cluster,kind] [-p] [-S SMOOTH[,SMOOTH...]] [-r] [-O] [-o]
 *           [-w RULES_FILE | -l RULES_FILE] [-N] [-W] [-V WEIGHTS] [-f FOLD]
 *
 * DIR holds train.txt, valid.txt, test.txt (each may be .txt.gz; facts.txt
 * too, joined to the graph), tab-separated subject, relation, object; the
 * entity count for the ranks of underived answers comes from
 * entities.txt[.gz] when present, else from every split.  -a and -S take
 * lists: every combination is scored on the rules of one mining run.  -p:
 * PCA confidence (default std).  -r: per-relation scores too.  -O: mine
 * with object identity on X, -o: predict with it.  -w: save the mined rules
 * (raw structs, this build only), -l: load them instead of mining.  -N:
 * answer without gdl_predict_index (every rule tried per query; A/B).
 * -W: with -a kind, learn the weighted aggregation's weights on the split
 * (gdl_predict_fit) and print them; -V w,...: those weights for -a
 * weighted (learn on valid, score test with them).  -f 0|1: ask only the
 * triples of the relations in that half (by a hash of the name), for
 * weights fitted on one half and scored on the other (bench/kg/folds.sh).
 */
#include "../../test/unit/test_host.h"
#include "../../src/mine/gdl_mine.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------- string ids */

/* An open-addressing map from names to dense ids. */
typedef struct NameMap
{
	char	  **names;			/* by id */
	int32_t		n;
	int32_t		cap;			/* of names */
	int32_t    *slots;			/* id + 1, 0 empty */
	uint64_t	nslots;
} NameMap;

/* FNV-1a of a string. */
static uint64_t
hash_str(const char *s)
{
	uint64_t	h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char) *s) * 1099511628211ULL;
	return h;
}

/* The id of a name, added when new (add) or -1 when absent. */
static int32_t
name_id(NameMap *m, const char *s, bool add)
{
	uint64_t	i;

	if ((uint64_t) m->n * 2 + 2 > m->nslots)
	{
		uint64_t	ns = m->nslots ? m->nslots * 2 : 1024;
		int32_t    *sl = calloc(ns, sizeof(int32_t));

		for (int32_t k = 0; k < m->n; k++)
		{
			uint64_t	j = hash_str(m->names[k]) & (ns - 1);

			while (sl[j])
				j = (j + 1) & (ns - 1);
			sl[j] = k + 1;
		}
		free(m->slots);
		m->slots = sl;
		m->nslots = ns;
	}
	i = hash_str(s) & (m->nslots - 1);
	while (m->slots[i])
	{
		if (strcmp(m->names[m->slots[i] - 1], s) == 0)
			return m->slots[i] - 1;
		i = (i + 1) & (m->nslots - 1);
	}
	if (!add)
		return -1;
	if (m->n == m->cap)
	{
		m->cap = m->cap ? m->cap * 2 : 1024;
		m->names = realloc(m->names, sizeof(char *) * m->cap);
	}
	m->names[m->n] = strdup(s);
	m->slots[i] = m->n + 1;
	return m->n++;
}

/* ------------------------------------------------------------- triples */

typedef struct Triple
{
	int32_t		h,
				r,
				t;
} Triple;

typedef struct Split
{
	Triple	   *t;
	int64_t		n;
} Split;

static NameMap ents,
			rels;

/* Open DIR/name.txt or DIR/name.txt.gz through zcat; NULL when neither. */
static FILE *
open_split(const char *dir, const char *name)
{
	char		path[4096],
				cmd[4200];

	snprintf(path, sizeof(path), "%s/%s.txt", dir, name);
	if (access(path, R_OK) != 0)
	{
		snprintf(path, sizeof(path), "%s/%s.txt.gz", dir, name);
		if (access(path, R_OK) != 0)
			return NULL;
	}
	snprintf(cmd, sizeof(cmd), "zcat -f '%s'", path);
	return popen(cmd, "r");
}

/* Read a split's triples (names become ids). */
static Split
read_split(const char *dir, const char *name)
{
	Split		s = {NULL, 0};
	int64_t		cap = 0;
	char		line[8192];
	FILE	   *f = open_split(dir, name);

	if (!f)
		return s;
	while (fgets(line, sizeof(line), f))
	{
		char	   *a = strtok(line, "\t\r\n"),
				   *p = strtok(NULL, "\t\r\n"),
				   *o = strtok(NULL, "\t\r\n");

		if (!a || !p || !o)
			continue;
		if (s.n == cap)
		{
			cap = cap ? cap * 2 : 65536;
			s.t = realloc(s.t, sizeof(Triple) * cap);
		}
		s.t[s.n].h = name_id(&ents, a, true);
		s.t[s.n].r = name_id(&rels, p, true);
		s.t[s.n].t = name_id(&ents, o, true);
		s.n++;
	}
	pclose(f);
	return s;
}

/* Count the lines of DIR/entities.txt[.gz], or -1. */
static int64_t
count_entities(const char *dir)
{
	FILE	   *f = open_split(dir, "entities");
	char		line[8192];
	int64_t		n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (line[0] != '\n')
			n++;
	pclose(f);
	return n > 0 ? n : -1;
}

/* A set of triples (every split): the true answers to filter. */
typedef struct TripleSet
{
	Triple	   *slots;			/* r == -1: empty */
	uint64_t	mask;
} TripleSet;

static uint64_t
hash_triple(int32_t h, int32_t r, int32_t t)
{
	uint64_t	x = ((uint64_t) (uint32_t) h << 32) ^ (uint64_t) (uint32_t) t;

	x ^= (uint64_t) (uint32_t) r * 0x9E3779B97F4A7C15ULL;
	x ^= x >> 29;
	x *= 0xBF58476D1CE4E5B9ULL;
	return x ^ (x >> 32);
}

static void
set_add(TripleSet *s, Triple x)
{
	uint64_t	i = hash_triple(x.h, x.r, x.t) & s->mask;

	while (s->slots[i].r >= 0)
	{
		if (s->slots[i].h == x.h && s->slots[i].r == x.r && s->slots[i].t == x.t)
			return;
		i = (i + 1) & s->mask;
	}
	s->slots[i] = x;
}

static bool
set_has(const TripleSet *s, int32_t h, int32_t r, int32_t t)
{
	uint64_t	i = hash_triple(h, r, t) & s->mask;

	while (s->slots[i].r >= 0)
	{
		if (s->slots[i].h == h && s->slots[i].r == r && s->slots[i].t == t)
			return true;
		i = (i + 1) & s->mask;
	}
	return false;
}

/* ------------------------------------------------------------- scoring */

/* A query asked: r(given, ?) (tail) or r(?, given), wanting `want`. */
typedef struct Asked
{
	int32_t		r;
	bool		tail;
	int32_t		given;
	int32_t		want;
} Asked;

/* qsort order of asked queries: relation, direction, given entity. */
static int
cmp_asked(const void *a, const void *b)
{
	const Asked *x = a,
			   *y = b;

	if (x->r != y->r)
		return x->r < y->r ? -1 : 1;
	if (x->tail != y->tail)
		return x->tail < y->tail ? -1 : 1;
	return x->given < y->given ? -1 : x->given > y->given;
}

/* Scores of a set of queries. */
typedef struct Score
{
	double		rr,
				h1,
				h10,
				derived;
	int64_t		n;
} Score;

/* Is `ans` a true answer of the query (any split)? */
static bool
is_true(const TripleSet *truth, const Asked *q, int32_t ans)
{
	return q->tail ? set_has(truth, q->given, q->r, ans) : set_has(truth, ans, q->r, q->given);
}

/*
 * -P: underived answers ranked by a prior instead of tied: how often each
 * entity is the object (for r(h, ?)) or subject (for r(?, t)) of the
 * relation in the graph.  prior_list[d][r] holds the entities with a
 * nonzero count.  NULL: no prior.
 */
static int32_t *prior_count[2];	/* [d][r * nents + e] */
static int32_t **prior_list[2];	/* [d][r] -> entities, prior_len[d][r] of them */
static int64_t *prior_len[2];
static int32_t prior_nents;
static uint8_t *prior_mark;		/* derived answers of the query being ranked */

/*
 * The filtered rank of a query's want among its answers (exclude_known:
 * no fact of the graph is among them), ties at their expected rank; an
 * underived want ties with every other underived entity (score.sql).
 */
static double
filtered_rank(const GdlPredictResult *res, const Asked *q, const TripleSet *truth,
			  int64_t nentities, int64_t ntrue, bool *derived)
{
	int64_t		want_rank = -1;
	int64_t		better = 0,
				tied = 0,
				wrong = 0;

	for (int64_t i = 0; i < res->nanswers; i++)
		if (res->answers[i].value == q->want)
			want_rank = res->answers[i].rank;
	for (int64_t i = 0; i < res->nanswers; i++)
	{
		const GdlPredictAnswer *a = &res->answers[i];

		if (a->value == q->want || is_true(truth, q, (int32_t) a->value))
			continue;
		wrong++;
		if (want_rank >= 0 && a->rank < want_rank)
			better++;
		else if (want_rank >= 0 && a->rank == want_rank)
			tied++;
	}
	*derived = want_rank >= 0;
	if (want_rank >= 0)
		return 1 + better + tied / 2.0;
	if (prior_count[0])
	{
		int			d = q->tail;
		const int32_t *cnt = prior_count[d] + (int64_t) q->r * prior_nents;
		int32_t		fw = cnt[q->want];
		int64_t		gt = 0,
					eq = 0,
					pos = 0,
					rest = nentities - ntrue - wrong;

		for (int64_t i = 0; i < res->nanswers; i++)
			prior_mark[res->answers[i].value] = 1;
		for (int64_t i = 0; i < prior_len[d][q->r]; i++)
		{
			int32_t		e = prior_list[d][q->r][i];

			if (e == q->want || prior_mark[e] || is_true(truth, q, e))
				continue;
			pos++;
			gt += cnt[e] > fw;
			eq += cnt[e] == fw;
		}
		for (int64_t i = 0; i < res->nanswers; i++)
			prior_mark[res->answers[i].value] = 0;
		if (fw == 0)
			return 1 + wrong + pos + (rest - pos) / 2.0;
		return 1 + wrong + gt + eq / 2.0;
	}
	return 1 + wrong + (nentities - ntrue - wrong) / 2.0;
}

/*
 * The true answers of every (relation, entity, direction), counted over
 * every split (distinct triples only: the truth set's own slots).
 */
typedef struct CountMap
{
	Triple	   *keys;			/* (given, r, tail) ; r == -1 empty */
	int64_t    *counts;
	uint64_t	mask;
} CountMap;

static void
count_add(CountMap *m, int32_t given, int32_t r, int32_t tail)
{
	uint64_t	i = hash_triple(given, r, tail) & m->mask;

	while (m->keys[i].r >= 0 && !(m->keys[i].h == given && m->keys[i].r == r && m->keys[i].t == tail))
		i = (i + 1) & m->mask;
	m->keys[i] = (Triple) {given, r, tail};
	m->counts[i]++;
}

static int64_t
count_get(const CountMap *m, const Asked *q)
{
	uint64_t	i = hash_triple(q->given, q->r, q->tail) & m->mask;

	while (m->keys[i].r >= 0)
	{
		if (m->keys[i].h == q->given && m->keys[i].r == q->r && m->keys[i].t == q->tail)
			return m->counts[i];
		i = (i + 1) & m->mask;
	}
	return 0;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Parse a comma-separated list of numbers into out (at most max). */
static int
parse_list(const char *s, double *out, int max)
{
	int			n = 0;
	char	   *dup = strdup(s),
			   *tok = strtok(dup, ",");

	for (; tok && n < max; tok = strtok(NULL, ","))
		out[n++] = atof(tok);
	free(dup);
	return n;
}

int
main(int argc, char **argv)
{
	const char *dir,
			   *save_rules = NULL,
			   *load_rules = NULL,
			   *split_name = "valid",
			   *aggs = "max,cluster";
	GdlMineOptions o;
	double		smooth[16];
	int			nsmooth = 1,
				c;
	bool		use_pca = false,
				pred_oi = false,
				per_rel = false;
	Split		train,
				facts,
				valid,
				test,
				asked_split;
	Split		all[4];
	int			nall = 0;
	TripleSet	truth;
	int64_t		total = 0,
				nentities;
	GdlMineRelation *mrels;
	GdlMineGraph *g;
	GdlMineResult *res;
	int64_t    *rule_lo,
			   *rule_hi;
	Asked	   *asked;
	int64_t		nasked = 0;
	int			fold = -1;
	int64_t    *ntrue;
	double		t0;
	bool		use_prior = false;	/* -P: underived answers ranked by frequency */
	bool		no_index = false;	/* -N: predict without gdl_predict_index (A/B) */
	GdlPredictIndex **index = NULL;
	bool		learn_w = false,	/* -W: learn the weighted aggregation's weights on this split */
				fixed_w = false;	/* -V w,...: the weighted aggregation's weights */
	double		wts[GDL_PREDICT_NWEIGHTS];
	GdlPredictFit *fit = NULL;

	gdl_test_host_install();
	gdl_mine_options_init(&o);
	o.device = GDL_DEVICE_CPU;
	smooth[0] = 5;
	if (argc < 2 || argv[1][0] == '-')
	{
		fprintf(stderr, "usage: %s DIR [-x valid|test] [-b B] [-H HC] [-C CONF] [-s SUP] [-K] [-B MBC] "
				"[-h CHC] [-T THREADS] [-a AGGS] [-p] [-S SMOOTHS] [-r]\n", argv[0]);
		return 2;
	}
	dir = argv[1];
	optind = 2;
	while ((c = getopt(argc, argv, "x:b:H:C:s:KB:h:T:a:pS:roOw:l:NPWV:f:")) != -1)
	{
		switch (c)
		{
			case 'x': split_name = optarg; break;
			case 'b': o.max_body = atoi(optarg); break;
			case 'H': o.min_head_coverage = atof(optarg); break;
			case 'C': o.min_confidence = atof(optarg); break;
			case 's': o.min_support = atol(optarg); break;
			case 'K': o.constants = true; break;
			case 'B': o.max_body_constants = atoi(optarg); break;
			case 'h': o.constants_min_head_coverage = atof(optarg); break;
			case 'T': o.threads = atoi(optarg); gdl_set_threads(o.threads); break;
			case 'a': aggs = optarg; break;
			case 'p': use_pca = true; break;
			case 'S': nsmooth = parse_list(optarg, smooth, 16); break;
			case 'r': per_rel = true; break;
			case 'o': pred_oi = true; break;
			case 'w': save_rules = optarg; break;
			case 'l': load_rules = optarg; break;
			case 'O': o.object_identity = true; break;
			case 'N': no_index = true; break;
			case 'P': use_prior = true; break;
			case 'W': learn_w = true; break;
			case 'f': fold = atoi(optarg); break;
			case 'V':
				if (parse_list(optarg, wts, GDL_PREDICT_NWEIGHTS) != GDL_PREDICT_NWEIGHTS)
				{
					fprintf(stderr, "-V takes %d weights\n", GDL_PREDICT_NWEIGHTS);
					return 2;
				}
				fixed_w = true;
				break;
			default: return 2;
		}
	}

	/* the splits; the graph is facts ∪ train */
	t0 = now_s();
	facts = read_split(dir, "facts");
	train = read_split(dir, "train");
	valid = read_split(dir, "valid");
	test = read_split(dir, "test");
	if (train.n == 0 || (valid.n == 0 && test.n == 0))
	{
		fprintf(stderr, "%s: no train.txt, valid.txt, test.txt\n", dir);
		return 2;
	}
	asked_split = strcmp(split_name, "test") == 0 ? test : valid;
	all[nall++] = facts;
	all[nall++] = train;
	all[nall++] = valid;
	all[nall++] = test;
	nentities = count_entities(dir);
	if (nentities < 0)
		nentities = ents.n;
	{
		int64_t		n = facts.n + train.n + valid.n + test.n;
		uint64_t	cap = 1;

		while (cap < (uint64_t) n * 2)
			cap <<= 1;
		truth.slots = malloc(sizeof(Triple) * cap);
		for (uint64_t i = 0; i < cap; i++)
			truth.slots[i].r = -1;
		truth.mask = cap - 1;
		for (int k = 0; k < nall; k++)
			for (int64_t i = 0; i < all[k].n; i++)
				set_add(&truth, all[k].t[i]);
	}

	/* the graph: one relation per name, values = entity ids */
	mrels = calloc(rels.n, sizeof(GdlMineRelation));
	for (int r = 0; r < rels.n; r++)
	{
		mrels[r].name = rels.names[r];
		mrels[r].rows.ncols = 2;
		mrels[r].rows.cols = malloc(sizeof(int64_t *) * 2);
		mrels[r].rows.cols[0] = malloc(sizeof(int64_t) * (facts.n + train.n + 1));
		mrels[r].rows.cols[1] = malloc(sizeof(int64_t) * (facts.n + train.n + 1));
	}
	for (int k = 0; k < 2; k++)
		for (int64_t i = 0; i < all[k].n; i++)
		{
			const Triple *x = &all[k].t[i];
			GdlColumns *cols = &mrels[x->r].rows;

			cols->cols[0][cols->nrows] = x->h;
			cols->cols[1][cols->nrows] = x->t;
			cols->nrows++;
			total++;
		}
	g = gdl_mine_graph_build(rels.n, mrels);
	if (use_prior)
	{
		prior_nents = ents.n;
		prior_mark = calloc(ents.n + 1, 1);
		for (int d = 0; d < 2; d++)
		{
			prior_count[d] = calloc((size_t) rels.n * ents.n, sizeof(int32_t));
			prior_list[d] = calloc(rels.n, sizeof(int32_t *));
			prior_len[d] = calloc(rels.n, sizeof(int64_t));
			for (int k = 0; k < 2; k++)
				for (int64_t i = 0; i < all[k].n; i++)
				{
					const Triple *x = &all[k].t[i];
					int32_t		e = d ? x->t : x->h;

					if (prior_count[d][(int64_t) x->r * ents.n + e]++ == 0)
						prior_len[d][x->r]++;
				}
			for (int r = 0; r < rels.n; r++)
			{
				int64_t		n = 0;

				prior_list[d][r] = malloc(sizeof(int32_t) * (prior_len[d][r] + 1));
				for (int32_t e = 0; e < ents.n; e++)
					if (prior_count[d][(int64_t) r * ents.n + e])
						prior_list[d][r][n++] = e;
			}
		}
	}
	printf("graph: %s, %d relations, %ld facts, %d entities (%ld in all); %s: %ld triples; read %.1fs\n",
		   dir, rels.n, (long) total, gdl_mine_graph_nentities(g), (long) nentities,
		   split_name, (long) asked_split.n, now_s() - t0);

	/* mining */
	t0 = now_s();
	if (load_rules)
	{
		/* the rules of an earlier run (-w) on the same DIR: a sweep of scoring settings */
		FILE	   *f = fopen(load_rules, "rb");

		if (!f)
		{
			perror(load_rules);
			return 2;
		}
		res = calloc(1, sizeof(GdlMineResult));
		if (fread(&res->nrules, sizeof(int64_t), 1, f) != 1)
			return 2;
		res->rules = malloc(sizeof(GdlMineRule) * (res->nrules + 1));
		if (fread(res->rules, sizeof(GdlMineRule), res->nrules, f) != (size_t) res->nrules)
			return 2;
		fclose(f);
		printf("rules: %ld from %s\n", (long) res->nrules, load_rules);
	}
	else
	{
		res = gdl_mine(g, &o);
		printf("mining: max_body %d, hc %g, pca conf %g, support %ld%s%s: %ld rules in %.1fs\n",
			   o.max_body, o.min_head_coverage, o.min_confidence, (long) o.min_support,
			   o.constants ? ", constants" : "", o.object_identity ? ", object identity" : "",
			   (long) res->nrules, now_s() - t0);
		printf("mining phases: index %.1fs, enumerate %.1fs, measures %.1fs, constants %.1fs, total %.1fs\n",
			   res->times.index, res->times.enumerate, res->times.measures, res->times.constants,
			   res->times.total);
	}
	if (save_rules)
	{
		FILE	   *f = fopen(save_rules, "wb");

		if (!f || fwrite(&res->nrules, sizeof(int64_t), 1, f) != 1 ||
			fwrite(res->rules, sizeof(GdlMineRule), res->nrules, f) != (size_t) res->nrules)
		{
			perror(save_rules);
			return 2;
		}
		fclose(f);
	}
	fflush(stdout);
	rule_lo = calloc(rels.n, sizeof(int64_t));
	rule_hi = calloc(rels.n, sizeof(int64_t));
	for (int64_t i = res->nrules - 1; i >= 0; i--)
		rule_lo[res->rules[i].head] = i;
	for (int64_t i = 0; i < res->nrules; i++)
		rule_hi[res->rules[i].head] = i + 1;
	if (!no_index)
	{
		/* each relation's rules prepared once for its queries (gdl_predict_index) */
		double		ti = now_s();

		index = calloc(rels.n, sizeof(GdlPredictIndex *));
		for (int r = 0; r < rels.n; r++)
			if (rule_hi[r] > rule_lo[r])
				index[r] = gdl_predict_index(g, res->rules + rule_lo[r], rule_hi[r] - rule_lo[r]);
		printf("prediction index: %.1fs\n", now_s() - ti);
	}

	/* the queries: both directions of every asked triple */
	asked = malloc(sizeof(Asked) * asked_split.n * 2);
	for (int64_t i = 0; i < asked_split.n; i++)
	{
		const Triple *x = &asked_split.t[i];

		/* -f: the relation's half by its name (independent of reading order) */
		if (fold >= 0 && (int) (hash_str(rels.names[x->r]) & 1) != fold)
			continue;
		asked[nasked++] = (Asked) {x->r, true, x->h, x->t};
		asked[nasked++] = (Asked) {x->r, false, x->t, x->h};
	}
	qsort(asked, nasked, sizeof(Asked), cmp_asked);
	{
		CountMap	cm;

		cm.mask = truth.mask * 2 + 1;
		cm.keys = malloc(sizeof(Triple) * (cm.mask + 1));
		cm.counts = calloc(cm.mask + 1, sizeof(int64_t));
		for (uint64_t i = 0; i <= cm.mask; i++)
			cm.keys[i].r = -1;
		for (uint64_t i = 0; i <= truth.mask; i++)
			if (truth.slots[i].r >= 0)
			{
				count_add(&cm, truth.slots[i].h, truth.slots[i].r, 1);
				count_add(&cm, truth.slots[i].t, truth.slots[i].r, 0);
			}
		ntrue = malloc(sizeof(int64_t) * nasked);
		for (int64_t i = 0; i < nasked; i++)
			ntrue[i] = count_get(&cm, &asked[i]);
	}

	/* every scoring setting */
	{
		char	   *dup = strdup(aggs),
				   *tok;

		for (tok = strtok(dup, ","); tok; tok = strtok(NULL, ","))
			for (int si = 0; si < nsmooth; si++)
			{
				GdlPredictOptions po;
				const int64_t batch = 4096;
				Score		all_s = {0},
							dir_s[2] = {{0}};
				Score	   *rel_s = calloc(rels.n, sizeof(Score));
				double		tp = now_s(), t_keep = 0;

				gdl_predict_options_init(&po);
				po.aggregation = strcmp(tok, "max") == 0 ? GDL_PREDICT_MAX :
					strcmp(tok, "noisy_or") == 0 ? GDL_PREDICT_NOISY_OR :
					strcmp(tok, "kind") == 0 ? GDL_PREDICT_KIND_NOISY_OR :
					strcmp(tok, "weighted") == 0 ? GDL_PREDICT_WEIGHTED : GDL_PREDICT_CLUSTER_NOISY_OR;
				if (fixed_w)
					memcpy(po.weights, wts, sizeof(wts));
				if (learn_w && po.aggregation == GDL_PREDICT_KIND_NOISY_OR)
				{
					gdl_predict_fit_free(fit);
					fit = gdl_predict_fit_create(g, nasked, asked_split.n);
					for (int64_t i = 0; i < asked_split.n; i++)
						gdl_predict_fit_truth(fit, asked_split.t[i].r, asked_split.t[i].h, asked_split.t[i].t);
				}
				po.use_pca = use_pca;
				po.smoothing = smooth[si];
				po.exclude_known = true;
				po.object_identity = pred_oi;
				for (int64_t b0 = 0; b0 < nasked;)
				{
					GdlPredictJob *jobs = calloc(batch, sizeof(GdlPredictJob));
					int64_t		nb = 0,
								b1;

					/* up to `batch` distinct queries: asked[b0 .. b1) */
					for (b1 = b0; b1 < nasked; b1++)
					{
						const Asked *q = &asked[b1];

						if (b1 > b0 && cmp_asked(q, &asked[b1 - 1]) == 0)
							continue;
						if (nb == batch)
							break;
						jobs[nb].rules = res->rules + rule_lo[q->r];
						jobs[nb].nrules = rule_hi[q->r] - rule_lo[q->r];
						jobs[nb].index = index ? index[q->r] : NULL;
						jobs[nb].q.rel = q->r;
						jobs[nb].q.subject_bound = q->tail;
						jobs[nb].q.value = q->given;
						nb++;
					}
					gdl_predict_many(g, jobs, nb, &po);
					if (fit)
					{
						/* each asked triple's true answer, job by job (their question) */
						int64_t    *wants = malloc(sizeof(int64_t) * (b1 - b0)),
								   *from = malloc(sizeof(int64_t) * (nb + 1));

						for (int64_t k = b0, j = -1; k < b1; k++)
						{
							if (k == b0 || cmp_asked(&asked[k], &asked[k - 1]) != 0)
								from[++j] = k - b0;
							wants[k - b0] = asked[k].want;
						}
						from[nb] = b1 - b0;
						double		tk = now_s();

						gdl_predict_fit_add_many(fit, jobs, nb, wants, from, &po);
						t_keep += now_s() - tk;
						free(wants);
						free(from);
					}
					for (int64_t k = b0, j = -1; k < b1; k++)
					{
						const Asked *q = &asked[k];
						bool		derived;
						double		rank;

						if (k == b0 || cmp_asked(q, &asked[k - 1]) != 0)
							j++;
						rank = filtered_rank(jobs[j].res, q, &truth, nentities, ntrue[k], &derived);
						for (int w = 0; w < 3; w++)
						{
							Score	   *s = w == 2 ? &dir_s[q->tail] : w ? &rel_s[q->r] : &all_s;

							s->rr += 1.0 / rank;
							s->h1 += rank <= 1;
							s->h10 += rank <= 10;
							s->derived += derived;
							s->n++;
						}
					}
					for (int64_t k = 0; k < nb; k++)
						gdl_predict_result_free(jobs[k].res);
					free(jobs);
					b0 = b1;
				}
				printf("%-8s %-4s smoothing %-5g MRR %.4f  Hits@1 %.4f  Hits@10 %.4f  derived %.3f  (%ld queries, %.1fs)\n",
					   tok, use_pca ? "pca" : "std", smooth[si], all_s.rr / all_s.n, all_s.h1 / all_s.n,
					   all_s.h10 / all_s.n, all_s.derived / all_s.n, (long) all_s.n, now_s() - tp);
				for (int d = 1; d >= 0; d--)
					if (dir_s[d].n)
						printf("  %s  %6ld  MRR %.4f  H@1 %.4f  H@10 %.4f  derived %.3f\n",
							   d ? "r(h, ?)" : "r(?, t)", (long) dir_s[d].n, dir_s[d].rr / dir_s[d].n,
							   dir_s[d].h1 / dir_s[d].n, dir_s[d].h10 / dir_s[d].n, dir_s[d].derived / dir_s[d].n);
				if (fit)
				{
					double		before,
								after,
								tl = now_s();

					gdl_predict_fit_learn(fit, wts, &before, &after);
					printf("fit: %ld queries (kept in %.1fs), MRR %.4f -> %.4f in %.1fs; -V ",
						   (long) gdl_predict_fit_nqueries(fit), t_keep, before, after, now_s() - tl);
					for (int k = 0; k < GDL_PREDICT_NWEIGHTS; k++)
						printf("%s%.4g", k ? "," : "", wts[k]);
					printf("\n");
					gdl_predict_fit_free(fit);
					fit = NULL;
				}
				if (per_rel)
					for (int r = 0; r < rels.n; r++)
						if (rel_s[r].n)
							printf("  %-70s %6ld  MRR %.3f  H@1 %.3f  H@10 %.3f\n", rels.names[r],
								   (long) rel_s[r].n, rel_s[r].rr / rel_s[r].n, rel_s[r].h1 / rel_s[r].n,
								   rel_s[r].h10 / rel_s[r].n);
				fflush(stdout);
				free(rel_s);
			}
		free(dup);
	}
	return 0;
}
