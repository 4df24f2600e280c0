/*
 * mine_int.h — internals of the mining core (src/mine): the graph's
 * indexes, the raw encoding of rule bodies the enumerator counts by, and the
 * functions the files of the layer share.
 *
 * Link signatures.  A link from entity u to entity v through relation p is
 * the signature sig = 2p (p(u, v) holds) or 2p + 1 (p(v, u) holds).  Every
 * entity's adjacency lists its links (sig, neighbour), sorted and distinct.
 *
 * Raw bodies.  The enumerator meets every rule body in exactly one raw form,
 * a shape and up to three signatures (MINE_SH_*), packed into a 64-bit key;
 * mine_key_rule turns it into atoms (then gdl_mine_canonical orders them).
 */
#ifndef MINE_INT_H
#define MINE_INT_H

#include "gdl_mine.h"
#include "../core/gdl_host.h"
#include "gdl_mine_device.h"

struct GdlMineGraph
{
	int			nrels;
	char	  **names;
	int64_t    *nfacts;			/* distinct facts per relation */
	bool	   *reflexive;		/* per relation: some fact r(e, e) */
	int32_t		nent;
	int64_t    *values;			/* nent values, ascending: dense id = rank */

	/* links of each entity sorted by (sig, nb): [aoff[e], aoff[e+1]) */
	int64_t    *aoff;
	int32_t    *asig;
	int32_t    *anb;
	/* the same links sorted by (nb, sig) */
	int32_t    *bnb;
	int32_t    *bsig;
	/* signature directory: entity e's distinct sigs [soff[e], soff[e+1]) */
	int64_t    *soff;
	int32_t    *ssig;
	int64_t    *sbeg;			/* its links: [sbeg[k], send[k]) of asig/anb */
	int64_t    *send;

	/*
	 * Parallel pairs: (a, b, z) with a < b, both links from e to z, sorted
	 * by (a, b, z): [ppoff[e], ppoff[e+1]).  Cycle pairs: the distinct
	 * (a, b) among them: [cpoff[e], cpoff[e+1]).
	 */
	int64_t    *ppoff;
	int32_t    *ppa;
	int32_t    *ppb;
	int32_t    *ppz;
	int64_t    *cpoff;
	int32_t    *cpa;
	int32_t    *cpb;
	int64_t		nlinks;			/* aoff[nent] */
};

/* Raw body shapes (X, Y the head's variables). */
enum
{
	MINE_SH_L = 1,				/* l(X,Y) */
	MINE_SH_LL = 2,				/* l1 < l2 both on (X,Y) */
	MINE_SH_LLL = 3,			/* l1 < l2 < l3 on (X,Y) */
	MINE_SH_P2 = 4,				/* s1 X->Z, s2 Z->Y */
	MINE_SH_P2L = 5,			/* s1 X->Z, s2 Z->Y, l X->Y */
	MINE_SH_PP2 = 6,			/* a < b X->Z, s2 Z->Y */
	MINE_SH_P2P = 7,			/* s1 X->Z, a < b Z->Y */
	MINE_SH_CXL = 8,			/* a < b X->Z, l X->Y */
	MINE_SH_CYL = 9,			/* l X->Y, a < b Y->Z */
	MINE_SH_P3 = 10				/* s1 X->Z, s2 Z->W, s3 W->Y */
};

#define MINE_SIG_BITS 19
#define MINE_SIG_MASK ((1u << MINE_SIG_BITS) - 1)
#define MINE_MAX_RELS ((1 << (MINE_SIG_BITS - 1)) - 1)

/* Pack a raw body: shape in the top bits, then up to three signatures. */
static inline uint64_t
mine_key(int shape, uint32_t s1, uint32_t s2, uint32_t s3)
{
	return ((uint64_t) shape << (3 * MINE_SIG_BITS)) |
		((uint64_t) s1 << (2 * MINE_SIG_BITS)) |
		((uint64_t) s2 << MINE_SIG_BITS) | (uint64_t) s3;
}

static inline int
mine_key_shape(uint64_t k)
{
	return (int) (k >> (3 * MINE_SIG_BITS));
}

static inline uint32_t
mine_key_sig(uint64_t k, int i)
{
	return (uint32_t) (k >> ((2 - i) * MINE_SIG_BITS)) & MINE_SIG_MASK;
}

/* 64-bit mixer (splitmix64's finaliser) for hash tables. */
static inline uint64_t
mine_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Three-way order of two scalars: -1, 0 or 1 (the qsort orders below). */
#define MINE_CMP(x, y) (((x) > (y)) - ((x) < (y)))

/* In a comparator: return the order of x and y when they differ. */
#define MINE_CMP_RET(x, y) \
	do { if ((x) != (y)) return (x) < (y) ? -1 : 1; } while (0)

/* Order of (key, then tie) pairs: the two-field qsort orders of the layer. */
static inline int
mine_cmp_pair(uint64_t xkey, int64_t xtie, uint64_t ykey, int64_t ytie)
{
	return xkey != ykey ? MINE_CMP(xkey, ykey) : MINE_CMP(xtie, ytie);
}

/* mine_canon.c */
extern void mine_key_rule(uint64_t key, int32_t head, GdlMineRule *r);
extern bool mine_key_has_atom(uint64_t key, uint32_t sig);
extern int	mine_key_nbody(uint64_t key);
extern int	mine_rule_cmp(const GdlMineRule *a, const GdlMineRule *b);
extern GdlMineAtom mine_const_atom(uint32_t sig, int u, int64_t value);
extern GdlMineAtom mine_link_atom(uint32_t sig, int u, int v);
extern void mine_rule_init(GdlMineRule *r, int32_t head, int head_const, int64_t head_value,
						   int nbody);

/*
 * mine_const.c: the rules with constants (gdl_mine.h lists them) of
 * body_from to body_to atoms over min_support and the constants' head
 * coverage, canonical, with support, body_size and pca_body_size counted
 * (head_coverage and confidences are the caller's).  When deadline (a
 * gdl_now_ms() time, 0: none) passes, *timed_out and the rules so far
 * (each exact, but not every one of the language).
 */
extern GdlMineRule *mine_const_rules(const GdlMineGraph *g, const GdlMineOptions *o,
									 int body_from, int body_to, double deadline,
									 int64_t *nrules, bool *timed_out);

/* mine_graph.c: the links of e with signature sig, or false */
extern bool mine_graph_links(const GdlMineGraph *g, int32_t e, uint32_t sig,
							 int64_t *beg, int64_t *end);
/* mine_graph.c: the first i of [lo, hi) with v[i] >= x (v ascends there), or hi */
extern int64_t mine_lower_bound(const int32_t *v, int64_t lo, int64_t hi, int64_t x);
/* mine_graph.c: sort unsigned 64-bit keys ascending (inline comparisons) */
extern void mine_sort_u64(uint64_t *v, int64_t n);

/* mine_enum.c: support and denominators of raw bodies (see there) */
typedef struct MineCand
{
	int32_t		head;
	uint64_t	key;
	int64_t		support;
	int64_t		body_size;
	int64_t		pca_body_size;
} MineCand;

extern MineCand *mine_count_support(const GdlMineGraph *g, const GdlMineOptions *o,
									int threads, double deadline, int64_t *ncand);
extern bool mine_count_bodies(const GdlMineGraph *g, const GdlMineOptions *o,
							  int threads, double deadline, MineCand *c, int64_t ncand);
/* mine_enum.c: qsort order of candidates: body key, then head */
extern int	mine_cand_cmp(const void *a, const void *b);

/* mine_device.c: both passes on the registered device; false: not done */
extern void mine_device_input(const GdlMineGraph *g, const GdlMineOptions *o,
							  GdlMineDevIn *in);
extern bool mine_device_count(const GdlMineGraph *g, const GdlMineOptions *o,
							  MineCand **c, int64_t *ncand, GdlMineTimes *times);

/* mine_predict_index.c: rules prepared for prediction (gdl_predict_index) */
typedef struct PredKeyed
{
	uint64_t	key;
	int32_t		rule;
} PredKeyed;

typedef struct PredKeyedList
{
	PredKeyed  *v;
	int64_t		n;
	int64_t		cap;
} PredKeyedList;

struct GdlPredictIndex
{
	const GdlMineRule *rules;	/* the rules it was made for */
	int64_t		nrules;
	int32_t    *fixed;			/* per rule: the head constant's entity, or -1 */
	int32_t    *cval;			/* per rule, GDL_MINE_MAX_BODY each: body constants' entities */
	/* per query direction, [1]: subject bound (r(h, ?)), [0]: object bound */
	PredKeyedList general[2];	/* searched: key 0, in the rules' order */
	PredKeyedList byhead[2];	/* the query binds the head constant: key its entity */
	PredKeyedList links[2];		/* fired by a link of X: key sig << 32 | entity */
	PredKeyedList open[2];		/* fired by any link of X of a signature: key sig */
};

extern int64_t pred_keyed_lower(const PredKeyedList *l, uint64_t key);

/* One derivation of a prediction: an answer entity, a rule and its confidence. */
typedef struct PredHit
{
	int32_t		ent;
	int32_t		rule;
	double		conf;
} PredHit;

/* mine_predict.c: the cluster of a rule under a clustering aggregation, never 0 */
extern uint64_t mine_rule_cluster(const GdlMineRule *r, GdlPredictAggregation agg);

/* mine_features.c: the kind of a rule, 0 .. GDL_PREDICT_NKINDS - 1 */
extern int	mine_rule_kind(const GdlMineRule *r);
/*
 * The features of answer ent (dense id) of query q from its hits (best
 * first): GDL_PREDICT_NFEATURES values into f.
 */
extern void mine_answer_features(const GdlMineGraph *g, const GdlMineRule *rules, const PredHit *hits,
								 int64_t n, const GdlPredictQuery *q, int32_t ent, double *f);

#endif							/* MINE_INT_H */
