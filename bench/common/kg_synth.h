/*
 * kg_synth.h — the synthetic knowledge graph of the rule-learning and
 * rule-mining benchmarks (bench/ilp/kg_gpu.c, bench/mine/bench_mine.c), in
 * one place so both measure the same graph: E entities in T types, R binary
 * relations of F facts each between two types; the first 60% random, each
 * other one planted from them (a composition, an inverse or a restriction)
 * for 90% of its facts, the rest noise.  Deterministic (splitmix64 from a
 * fixed seed).  The sizes are the including file's settings: nent, ntypes,
 * nrels, nfacts (defaults 100,000 / 10 / 100 / 10,000: 1M facts).
 */
#ifndef KG_SYNTH_H
#define KG_SYNTH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng_state = 20261129;

/* splitmix64: the next pseudo-random number. */
static inline uint64_t
next_rand(void)
{
	uint64_t	x = (rng_state += 0x9e3779b97f4a7c15ULL);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Seconds on a monotonic clock. */
static inline double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct KgRel
{
	char		name[256];	/* FB15k-237 names run to ~100 bytes */
	int			src;			/* entity type of each argument */
	int			dst;
	int64_t		n;
	int64_t    *a;
	int64_t    *b;
	int64_t		cap;			/* allocated rows (readers that grow a relation) */
	char		planted[1024];	/* the planted rule, or "" */
} KgRel;

static int	nent = 100000,
			ntypes = 10,
			nrels = 100,
			nfacts = 10000;

/* A random entity of type t. */
static inline int64_t
rand_ent(int t)
{
	int64_t		per = nent / ntypes;

	return (int64_t) t * per + (int64_t) (next_rand() % (uint64_t) per);
}

/* Fill r with random facts of its types. */
static inline void
random_rel(KgRel *r, int64_t from, int64_t n)
{
	for (int64_t i = from; i < n; i++)
	{
		r->a[i] = rand_ent(r->src);
		r->b[i] = rand_ent(r->dst);
	}
	r->n = n;
}

/* The b-successors of x in r (r sorted by a is not needed: a linear index). */
typedef struct Adj
{
	int64_t    *off;
	int64_t    *to;
} Adj;

/* Index r by its first column (entities are dense in [0, nent)). */
static inline Adj
adj_build(const KgRel *r, bool inverse)
{
	Adj			j;
	const int64_t *x = inverse ? r->b : r->a;
	const int64_t *y = inverse ? r->a : r->b;
	int64_t    *fill;

	j.off = calloc(nent + 1, sizeof(int64_t));
	j.to = malloc(sizeof(int64_t) * (r->n + 1));
	fill = malloc(sizeof(int64_t) * (nent + 1));
	for (int64_t i = 0; i < r->n; i++)
		j.off[x[i] + 1]++;
	for (int64_t e = 0; e < nent; e++)
		j.off[e + 1] += j.off[e];
	memcpy(fill, j.off, sizeof(int64_t) * (nent + 1));
	for (int64_t i = 0; i < r->n; i++)
		j.to[fill[x[i]]++] = y[i];
	free(fill);
	return j;
}

/* Generate the graph. */
static inline KgRel *
make_kg(void)
{
	KgRel	   *rels = calloc(nrels, sizeof(KgRel));
	int			nbase = nrels * 6 / 10;

	for (int r = 0; r < nrels; r++)
	{
		snprintf(rels[r].name, sizeof(rels[r].name), "r%d", r);
		rels[r].a = malloc(sizeof(int64_t) * nfacts);
		rels[r].b = malloc(sizeof(int64_t) * nfacts);
	}
	for (int r = 0; r < nbase; r++)
	{
		rels[r].src = (int) (next_rand() % ntypes);
		rels[r].dst = (int) (next_rand() % ntypes);
		random_rel(&rels[r], 0, nfacts);
	}
	for (int r = nbase; r < nrels; r++)
	{
		KgRel	   *t = &rels[r];
		int			kind = r % 3;
		int			ia = (int) (next_rand() % nbase);
		KgRel	   *a = &rels[ia];
		int64_t		want = nfacts * 9 / 10,
					n = 0;

		if (kind == 0)
		{
			/* composition: b must start where a ends */
			int			ib = -1;
			Adj			jb;

			for (int k = 0; k < nbase && ib < 0; k++)
			{
				int			c = (int) ((ia + 1 + k) % nbase);

				if (rels[c].src == a->dst)
					ib = c;
			}
			if (ib < 0)
				kind = 1;
			else
			{
				t->src = a->src;
				t->dst = rels[ib].dst;
				snprintf(t->planted, sizeof(t->planted), "%s(X, Y) :- %s(X, Z), %s(Z, Y).",
						 t->name, a->name, rels[ib].name);
				jb = adj_build(&rels[ib], false);
				for (int64_t i = 0; i < a->n && n < want; i++)
					for (int64_t k = jb.off[a->b[i]]; k < jb.off[a->b[i] + 1] && n < want; k++)
					{
						t->a[n] = a->a[i];
						t->b[n] = jb.to[k];
						n++;
					}
				free(jb.off);
				free(jb.to);
			}
		}
		if (kind == 1)
		{
			t->src = a->dst;
			t->dst = a->src;
			snprintf(t->planted, sizeof(t->planted), "%s(X, Y) :- %s(Y, X).", t->name, a->name);
			for (int64_t i = 0; i < a->n && n < want; i++)
			{
				t->a[n] = a->b[i];
				t->b[n] = a->a[i];
				n++;
			}
		}
		else if (kind == 2)
		{
			/* restriction: a(X, Y) where Y has an outgoing c edge */
			int			ic = (int) (next_rand() % nbase);
			Adj			jc;

			for (int k = 0; k < nbase; k++)
				if (rels[(ic + k) % nbase].src == a->dst)
				{
					ic = (ic + k) % nbase;
					break;
				}
			t->src = a->src;
			t->dst = a->dst;
			snprintf(t->planted, sizeof(t->planted), "%s(X, Y) :- %s(X, Y), %s(Y, W).",
					 t->name, a->name, rels[ic].name);
			jc = adj_build(&rels[ic], false);
			for (int64_t i = 0; i < a->n && n < want; i++)
				if (jc.off[a->b[i] + 1] > jc.off[a->b[i]])
				{
					t->a[n] = a->a[i];
					t->b[n] = a->b[i];
					n++;
				}
			free(jc.off);
			free(jc.to);
		}
		/* the rest (at least 10%) is noise */
		random_rel(t, n, nfacts);
	}
	return rels;
}

#endif							/* KG_SYNTH_H */
