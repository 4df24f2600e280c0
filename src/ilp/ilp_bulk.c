/*
 * ilp_bulk.c — the coverage of every rule of a body-2 bias at once.
 *
 * The search (ilp_candidates.c) asks for the coverage of tens of thousands
 * of rules per target, each a semi-join driven from its parent's examples.
 * For a binary target over one value class and bodies of at most two atoms,
 * all those coverages come instead from one pass over the examples: the
 * background becomes one adjacency over entities (every fact, seen from
 * both ends, tagged with its predicate and direction), each example lists
 * the rules it satisfies from the adjacency of its two values
 * (ilp_bulk_example in ilp_bulk.h, the same code on the CPU and the GPU),
 * and a sort of the (rule key, example) entries lays out each rule's
 * coverage as one ascending run.  The runs are indexed by key, and the
 * search looks a rule up instead of joining; a rule whose shape the bulk
 * does not enumerate (an inequality on a fresh variable) is joined per rule
 * as before.  The results are the same either way (test_ilp_bulk checks).
 *
 * The device (gdl_ilp_device.h cover()) does the enumeration and the sort
 * when one is registered and the mode allows it; any failure there falls
 * back to the CPU, which is the reference.
 */
#include "ilp_int.h"
#include "ilp_bulk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* More raw entries than this: no bulk (the per-rule joins need no memory). */
#define ILP_BULK_MAX_ENTRIES	((int64_t) 96 << 20)

static bool ilp_bulk_enabled = true;

struct IlpBulk
{
	const IlpWorld *w;
	int64_t		n;				/* distinct entries */
	uint64_t   *ent;			/* key << 24 | example, ascending */
	int64_t		cap;			/* hash slots, a power of two */
	uint64_t   *hkey;			/* key + 1, 0 empty */
	int64_t    *hpos;			/* first entry of the key's run */
	int32_t    *hlen;			/* length of the run */
	bool		on_device;
};

/*
 * One adjacency for every target of a graph (ilp_bulk_graph_build): the
 * input of every predicate the base world has, indexed once; a target's
 * world (ilp_world_for_target) numbers predicates as the base does, so its
 * bulk coverage is this input with the target's own predicate skipped.
 */
struct IlpBulkGraph
{
	const IlpWorld *base;
	int			cls;			/* the one value class */
	int			npreds;
	bool	   *inc;			/* per predicate: in the adjacency */
	GdlIlpDevCoverIn in;		/* the graph part (no examples) */
};

static uint64_t ilp_bulk_graph_ids = 0;

/* ------------------------------------------------------------- threads */

/*
 * Worker threads for the bulk's CPU loops: GDL_ILP_THREADS when set (for
 * benchmarks), else the core's setting (gpudl.threads).
 */
static int
par_threads(void)
{
	const char *env = getenv("GDL_ILP_THREADS");

	if (env != NULL && atol(env) > 0)
		return atol(env) > GDL_MAX_THREADS ? GDL_MAX_THREADS : (int) atol(env);
	return gdl_threads();
}

/* Bulk coverage on (default) or off; see gdl_ilp_device.h. */
void
gdl_ilp_set_bulk(bool on)
{
	ilp_bulk_enabled = on;
}

/* Was the bulk computed on the device? */
bool
ilp_bulk_on_device(const IlpBulk *b)
{
	return b != NULL && b->on_device;
}

/* The one value class of every allowed predicate and the target, or -1. */
static int
one_class(const IlpWorld *w, const bool *pred_ok)
{
	int			c = w->cls[0];

	if (w->arity != 2 || w->cls[1] != c)
		return -1;
	for (int p = 0; p < w->npreds; p++)
	{
		const IlpPred *pr = &w->preds[p];

		if (!pred_ok[p])
			continue;
		if (pr->rel == NULL || (pr->arity != 1 && pr->arity != 2))
			return -1;
		if (pr->cls[0] != c || (pr->arity == 2 && pr->cls[1] != c))
			return -1;
	}
	return c;
}

/* Sort one entity's adjacency entries (short runs: insertion sort). */
static void
sort_run(uint64_t *a, int64_t n)
{
	if (n > 48)
	{
		qsort(a, n, sizeof(uint64_t), ilp_cmp_u64);
		return;
	}
	for (int64_t i = 1; i < n; i++)
	{
		uint64_t	t = a[i];
		int64_t		j = i;

		while (j > 0 && a[j - 1] > t)
		{
			a[j] = a[j - 1];
			j--;
		}
		a[j] = t;
	}
}

/*
 * One entry v at entity x of a CSR array dst: counted at off[x + 1] while
 * dst is NULL (the sizing pass), else stored at off[x]++ (the filling pass).
 * A macro: the arrays hold 64-bit entries and 32-bit signatures.
 */
#define CSR_PUT(off, x, dst, v) \
	((dst) == NULL ? (void) (off)[(x) + 1]++ : (void) ((dst)[(off)[x]++] = (v)))

/*
 * One pass of build_input over the usable predicates: their adjacency
 * entries, signatures and unary memberships, counted (adj NULL: sizes into
 * aoff, soff, uoff) or stored (at those starts, moved along).  stamp holds
 * the last predicate that gave an entity an object signature, tagged apart
 * per pass.  Predicates go in order, out before in, so signatures ascend.
 */
static void
scan_input(const IlpWorld *w, const bool *pred_ok, int32_t *stamp, int64_t *aoff, int64_t *soff,
		   int64_t *uoff, uint64_t *adj, uint32_t *sig, uint32_t *usig)
{
	for (int p = 0; p < w->npreds; p++)
	{
		const IlpRel *r = w->preds[p].rel;
		int32_t		tag = adj == NULL ? p : -p - 2;

		if (!pred_ok[p])
			continue;
		if (r->arity == 1)
		{
			for (int64_t i = 0; i < r->n; i++)
				CSR_PUT(uoff, r->a[i], usig, (uint32_t) p);
			continue;
		}
		for (int64_t i = 0; i < r->n; i++)
			CSR_PUT(aoff, r->a[i], adj, (uint64_t) (uint32_t) r->b[i] << 32 | (uint32_t) p << 1);
		for (int64_t i = 0; i < r->n; i++)
			CSR_PUT(aoff, r->b[i], adj, (uint64_t) (uint32_t) r->a[i] << 32 | (uint32_t) p << 1 | 1);
		/* distinct subjects (a ascends) and objects (stamped) of p */
		for (int64_t i = 0; i < r->n; i++)
			if (i == 0 || r->a[i] != r->a[i - 1])
				CSR_PUT(soff, r->a[i], sig, (uint32_t) p << 1);
		for (int64_t i = 0; i < r->n; i++)
			if (stamp[r->b[i]] != tag)
			{
				stamp[r->b[i]] = tag;
				CSR_PUT(soff, r->b[i], sig, (uint32_t) p << 1 | 1);
			}
	}
}

/*
 * Build the device-neutral input without the examples: the adjacency (by
 * entity, then each entity's entries sorted, so they ascend by z,
 * predicate, direction), the signatures and unary memberships of each
 * entity.  Sets all of *in: the examples (nex, ex0, ex1) are left 0.
 */
static void
build_input(const IlpWorld *w, const bool *pred_ok, int32_t nent, GdlIlpDevCoverIn *in)
{
	int64_t    *zoff = gdl_alloc(sizeof(int64_t) * ((int64_t) nent + 2));
	int64_t    *aoff = gdl_alloc(sizeof(int64_t) * ((int64_t) nent + 2));
	int64_t    *soff = gdl_alloc(sizeof(int64_t) * ((int64_t) nent + 2));
	int64_t    *uoff = gdl_alloc(sizeof(int64_t) * ((int64_t) nent + 2));
	int32_t    *stamp = gdl_alloc(sizeof(int32_t) * ((int64_t) nent + 1));	/* last pred seen */
	uint64_t   *adj;
	uint32_t   *sig;
	uint32_t   *usig;

	/* counts: per z, per entity, signatures, unary */
	memset(stamp, 0xFF, sizeof(int32_t) * ((int64_t) nent + 1));
	scan_input(w, pred_ok, stamp, aoff, soff, uoff, NULL, NULL, NULL);
	for (int32_t v = 0; v < nent; v++)
	{
		aoff[v + 1] += aoff[v];
		soff[v + 1] += soff[v];
		uoff[v + 1] += uoff[v];
	}

	/* by entity, then each entity's few entries sorted in place */
	adj = gdl_alloc(sizeof(uint64_t) * (aoff[nent] + 1));
	memcpy(zoff, aoff, sizeof(int64_t) * ((int64_t) nent + 1));
	sig = gdl_alloc(sizeof(uint32_t) * (soff[nent] + 1));
	usig = gdl_alloc(sizeof(uint32_t) * (uoff[nent] + 1));
	scan_input(w, pred_ok, stamp, zoff, soff, uoff, adj, sig, usig);
	gdl_free(stamp);
	/*
	 * The fills moved each start to the next one's: shift back.  Predicates
	 * were scanned in order, out before in, so signatures ascend.
	 */
	for (int32_t v = nent; v > 0; v--)
	{
		soff[v] = soff[v - 1];
		uoff[v] = uoff[v - 1];
	}
	soff[0] = uoff[0] = 0;

	for (int32_t v = 0; v < nent; v++)
		sort_run(adj + aoff[v], aoff[v + 1] - aoff[v]);
	gdl_free(zoff);

	*in = (GdlIlpDevCoverIn) {
		.nent = nent, .aoff = aoff, .adj = adj, .soff = soff, .sig = sig, .uoff = uoff,
		.usig = usig, .max_entries = ILP_BULK_MAX_ENTRIES, .skip_pred = -1, .graph_id = 0,
	};
}

/* Free what build_input allocated. */
static void
free_input(GdlIlpDevCoverIn *in)
{
	gdl_free((void *) in->aoff);
	gdl_free((void *) in->adj);
	gdl_free((void *) in->soff);
	gdl_free((void *) in->sig);
	gdl_free((void *) in->uoff);
	gdl_free((void *) in->usig);
}

/* A parallel LSD radix sort's shared state (16-bit digits). */
typedef struct RadixArg
{
	const uint64_t *src;
	uint64_t   *dst;
	int64_t		n;
	int			shift;
	int64_t    *hist;			/* ntasks x 65536: counts, then positions */
	bool		scatter;
} RadixArg;

/* Count (or scatter) one task's slice by the current digit. */
static void
radix_task(void *p, int tid, int ntasks)
{
	RadixArg   *a = p;
	int64_t		from,
				to;
	int64_t    *h = a->hist + (int64_t) tid * 65536;

	gdl_split(a->n, tid, ntasks, &from, &to);
	if (!a->scatter)
	{
		memset(h, 0, sizeof(int64_t) * 65536);
		for (int64_t i = from; i < to; i++)
			h[(a->src[i] >> a->shift) & 0xFFFF]++;
	}
	else
		for (int64_t i = from; i < to; i++)
			a->dst[h[(a->src[i] >> a->shift) & 0xFFFF]++] = a->src[i];
}

/*
 * LSD radix sort of n 64-bit keys (16-bit digits, constant digits skipped),
 * each pass counted and scattered by slices in parallel (stable: slices in
 * order), so the result does not depend on the number of threads.
 */
static void
radix_sort_u64(uint64_t *a, int64_t n)
{
	int			nt = n < ((int64_t) 1 << 15) ? 1 : par_threads();
	uint64_t   *tmp = gdl_alloc_uninit(sizeof(uint64_t) * (n + 1));
	RadixArg	ra;
	uint64_t   *src = a,
			   *dst = tmp;

	ra.hist = gdl_alloc(sizeof(int64_t) * 65536 * nt);
	ra.n = n;
	for (int shift = 0; shift < 64; shift += 16)
	{
		int64_t		sum = 0;
		bool		trivial = false;

		ra.src = src;
		ra.dst = dst;
		ra.shift = shift;
		ra.scatter = false;
		gdl_parallel(nt, radix_task, &ra);
		for (int d = 0; d < 65536 && !trivial; d++)
		{
			int64_t		c = 0;

			for (int t = 0; t < nt; t++)
				c += ra.hist[(int64_t) t * 65536 + d];
			trivial = c == n;
		}
		if (trivial)
			continue;
		for (int d = 0; d < 65536; d++)
			for (int t = 0; t < nt; t++)
			{
				int64_t		c = ra.hist[(int64_t) t * 65536 + d];

				ra.hist[(int64_t) t * 65536 + d] = sum;
				sum += c;
			}
		ra.scatter = true;
		gdl_parallel(nt, radix_task, &ra);
		{
			uint64_t   *t = src;

			src = dst;
			dst = t;
		}
		gdl_check_interrupts();
	}
	if (src != a)
		memcpy(a, src, sizeof(uint64_t) * n);
	gdl_free(tmp);
	gdl_free(ra.hist);
}

/* The per-example pass of cover_cpu, shared by its tasks. */
typedef struct CoverArg
{
	const GdlIlpDevCoverIn *in;
	int64_t    *off;			/* nex + 1: counts, then positions */
	uint64_t   *ent;			/* NULL: count */
	int64_t		next;			/* next block of examples to take (atomic) */
} CoverArg;

#define COVER_BLOCK 256

/* Count (or write) the entries of blocks of examples taken in turn. */
static void
cover_task(void *p, int tid, int ntasks)
{
	CoverArg   *a = p;
	int32_t		nex = a->in->nex;

	for (;;)
	{
		int64_t		b = __atomic_fetch_add(&a->next, 1, __ATOMIC_RELAXED);
		int32_t		e0 = (int32_t) (b * COVER_BLOCK);
		int32_t		e1;

		if (b * COVER_BLOCK >= nex || gdl_interrupt_pending())
			break;				/* an interrupt: the caller raises (gdl_check_stop) */
		e1 = e0 + COVER_BLOCK < nex ? e0 + COVER_BLOCK : nex;
		for (int32_t e = e0; e < e1; e++)
		{
			/* an example may join tens of thousands of candidates: read the flag per example */
			if (gdl_interrupt_pending())
				return;
			if (a->ent == NULL)
				a->off[e] = ilp_bulk_example(a->in, e, NULL);
			else
				ilp_bulk_example(a->in, e, a->ent + a->off[e]);
		}
	}
}

/*
 * The entries on the CPU: count per example, place, sort, drop repeats,
 * over worker threads.  Returns false (nothing allocated) past max_entries.
 */
static bool
cover_cpu(const GdlIlpDevCoverIn *in, uint64_t **out, int64_t *nout)
{
	int64_t		total = 0,
				m = 0;
	int			nt = in->nex < 4 * COVER_BLOCK ? 1 : par_threads();
	CoverArg	ca;
	double		t0;

	ca.in = in;
	ca.off = gdl_alloc(sizeof(int64_t) * ((int64_t) in->nex + 1));
	ca.ent = NULL;
	ca.next = 0;
	gdl_parallel(nt, cover_task, &ca);
	gdl_check_stop();
	for (int32_t e = 0; e < in->nex; e++)
	{
		int64_t		c = ca.off[e];

		ca.off[e] = total;
		total += c;
	}
	gdl_check_interrupts();
	if (total > in->max_entries)
	{
		gdl_free(ca.off);
		return false;
	}
	ca.ent = gdl_alloc_uninit(sizeof(uint64_t) * (total + 1));
	ca.next = 0;
	gdl_parallel(nt, cover_task, &ca);
	gdl_check_stop();
	gdl_free(ca.off);
	t0 = ilp_now();
	radix_sort_u64(ca.ent, total);
	gdl_ilp_timings.bulk_sort_s += ilp_now() - t0;
	for (int64_t i = 0; i < total; i++)
		if (m == 0 || ca.ent[i] != ca.ent[m - 1])
			ca.ent[m++] = ca.ent[i];
	*out = ca.ent;
	*nout = m;
	return true;
}

/* The entries on the device; false (with the reason kept) when it fails. */
static bool
cover_device(const GdlIlpDevice *dev, const GdlIlpDevCoverIn *in, uint64_t **out, int64_t *nout)
{
	uint64_t   *dout = NULL;
	int64_t		n = 0;
	double		secs = 0;
	char		err[256];
	int			rc;

	err[0] = '\0';
	rc = dev->cover(in, &dout, &n, &secs, err, sizeof(err));
	gdl_ilp_timings.bulk_device_s += secs;
	if (rc != 0)
	{
		snprintf(gdl_ilp_timings.last_device_error, sizeof(gdl_ilp_timings.last_device_error),
				 "bulk coverage: %s", err);
		if (dout != NULL)
			dev->cover_free(dout);
		return false;
	}
	/* into host-arena memory, so an error later cannot leak the module's */
	*out = gdl_alloc(sizeof(uint64_t) * (n + 1));
	if (n > 0)
		memcpy(*out, dout, sizeof(uint64_t) * n);
	dev->cover_free(dout);
	*nout = n;
	return true;
}

/* Index the runs of equal keys of the sorted entries. */
static void
build_index(IlpBulk *b)
{
	int64_t		nkeys = 0;

	for (int64_t i = 0; i < b->n; i++)
		nkeys += i == 0 || (b->ent[i] >> ILP_BULK_EX_BITS) != (b->ent[i - 1] >> ILP_BULK_EX_BITS);
	b->cap = 16;
	while (b->cap < nkeys * 2)
		b->cap <<= 1;
	b->hkey = gdl_alloc(sizeof(uint64_t) * b->cap);
	b->hpos = gdl_alloc(sizeof(int64_t) * b->cap);
	b->hlen = gdl_alloc(sizeof(int32_t) * b->cap);
	for (int64_t i = 0; i < b->n;)
	{
		uint64_t	key = b->ent[i] >> ILP_BULK_EX_BITS;
		int64_t		j = i + 1;
		int64_t		h = (int64_t) (ilp_mix64(key) & (uint64_t) (b->cap - 1));

		while (j < b->n && (b->ent[j] >> ILP_BULK_EX_BITS) == key)
			j++;
		while (b->hkey[h] != 0)
			h = (h + 1) & (b->cap - 1);
		b->hkey[h] = key + 1;
		b->hpos[h] = i;
		b->hlen[h] = (int32_t) (j - i);
		i = j;
	}
	gdl_ilp_timings.bulk_keys += nkeys;
}

/*
 * Does w's shared graph hold exactly the predicates pred_ok allows, the
 * target's own left out, over class cls?
 */
static bool
graph_fits(const IlpWorld *w, const bool *pred_ok, int cls)
{
	const IlpBulkGraph *g = w->bulk_graph;

	if (g == NULL || g->cls != cls || g->npreds != w->npreds || w->target < 0 ||
		w->target >= w->npreds)
		return false;
	for (int p = 0; p < w->npreds; p++)
		if (pred_ok[p] != (g->inc[p] && p != w->target))
			return false;
	return true;
}

/*
 * The adjacency of every unary and binary predicate of a one-class world
 * (the background of several targets: ilp_world_for_target), built once;
 * NULL when the predicates span several value classes.  A device that takes
 * bulk coverage keeps it (graph_id) across targets until the graph is freed.
 */
IlpBulkGraph *
ilp_bulk_graph_build(const IlpWorld *base)
{
	IlpBulkGraph *g;
	int			cls = -1;
	double		t0 = ilp_now();

	for (int p = 0; p < base->npreds; p++)
	{
		const IlpPred *pr = &base->preds[p];

		if (pr->kind != ILP_PRED_BG || pr->rel == NULL || (pr->arity != 1 && pr->arity != 2))
			continue;
		if (cls < 0)
			cls = pr->cls[0];
		if (pr->cls[0] != cls || (pr->arity == 2 && pr->cls[1] != cls))
			return NULL;
	}
	if (cls < 0 || base->npreds >= ILP_BULK_MAX_PREDS)
		return NULL;
	g = gdl_alloc(sizeof(IlpBulkGraph));
	g->base = base;
	g->cls = cls;
	g->npreds = base->npreds;
	g->inc = gdl_alloc(sizeof(bool) * (base->npreds + 1));
	for (int p = 0; p < base->npreds; p++)
	{
		const IlpPred *pr = &base->preds[p];

		g->inc[p] = pr->kind == ILP_PRED_BG && pr->rel != NULL && (pr->arity == 1 || pr->arity == 2);
	}
	build_input(base, g->inc, base->dom[cls].n, &g->in);
	g->in.graph_id = ++ilp_bulk_graph_ids;
	gdl_ilp_timings.bulk_graph_s += ilp_now() - t0;
	return g;
}

/* Release a shared graph (and what the device keeps of it). */
void
ilp_bulk_graph_free(IlpBulkGraph *g)
{
	const GdlIlpDevice *dev = gdl_ilp_device();

	if (g == NULL)
		return;
	if (dev != NULL && dev->abi == GDL_ILP_DEVICE_ABI && dev->cover_release != NULL)
		dev->cover_release();
	free_input(&g->in);
	gdl_free(g->inc);
	gdl_free(g);
}

/*
 * The bulk coverage of the body-2 bias of w over the predicates pred_ok
 * allows, or NULL where it does not apply (off, a deeper bias, a unary
 * target, several value classes, too many entries): then every rule is
 * joined on its own.
 */
IlpBulk *
ilp_bulk_build(const IlpWorld *w, const bool *pred_ok, int max_body)
{
	GdlIlpDevCoverIn in;
	const GdlIlpDevice *dev;
	IlpBulk    *b;
	int			cls;
	int32_t		nex = w->npos + w->nneg;
	double		t0 = ilp_now();
	bool		ok = false,
				shared;

	if (!ilp_bulk_enabled || max_body > 2 || nex <= 0 || w->npreds >= ILP_BULK_MAX_PREDS ||
		nex >= (1 << ILP_BULK_EX_BITS))
		return NULL;
	cls = one_class(w, pred_ok);
	if (cls < 0)
		return NULL;
	for (int32_t e = 0; e < nex; e++)
		if (w->ex[0][e] < 0 || w->ex[0][e] >= w->dom[cls].n ||
			w->ex[1][e] < 0 || w->ex[1][e] >= w->dom[cls].n)
			return NULL;
	shared = graph_fits(w, pred_ok, cls);
	if (shared)
	{
		in = w->bulk_graph->in;
		in.skip_pred = w->target;
		gdl_ilp_timings.bulk_shared++;
	}
	else
	{
		memset(&in, 0, sizeof(in));
		build_input(w, pred_ok, w->dom[cls].n, &in);
	}
	in.nex = nex;
	in.ex0 = w->ex[0];
	in.ex1 = w->ex[1];
	gdl_ilp_timings.bulk_input_s += ilp_now() - t0;
	b = gdl_alloc(sizeof(IlpBulk));
	b->w = w;
	dev = ilp_cover_device(in.aoff[in.nent] + nex);
	if (dev != NULL)
	{
		/* the graph stays on the device only where it can be released */
		if (dev->cover_release == NULL)
			in.graph_id = 0;
		ok = b->on_device = cover_device(dev, &in, &b->ent, &b->n);
	}
	if (!ok)
		ok = cover_cpu(&in, &b->ent, &b->n);
	if (!shared)
		free_input(&in);
	if (!ok)
	{
		gdl_free(b);
		return NULL;
	}
	build_index(b);
	gdl_ilp_timings.bulk_builds++;
	gdl_ilp_timings.bulk_device += b->on_device ? 1 : 0;
	gdl_ilp_timings.bulk_entries += b->n;
	gdl_ilp_timings.bulk_s += ilp_now() - t0;
	return b;
}

/* Is pat the pattern of a one-atom body the bulk enumerates? */
static bool
pat_one(uint32_t pat)
{
	switch (pat)
	{
		case ILP_BULK_PAT(0, 1):
		case ILP_BULK_PAT(1, 0):
		case ILP_BULK_PAT(0, 0):
		case ILP_BULK_PAT(1, 1):
		case ILP_BULK_PAT(0, -1):
		case ILP_BULK_PAT(1, -1):
		case ILP_BULK_PAT(0, 2):
		case ILP_BULK_PAT(2, 0):
		case ILP_BULK_PAT(1, 2):
		case ILP_BULK_PAT(2, 1):
			return true;
		default:
			return false;
	}
}

/* Does pat link the head arguments directly? */
static bool
pat_link(uint32_t pat)
{
	return pat == ILP_BULK_PAT(0, 1) || pat == ILP_BULK_PAT(1, 0);
}

/* Is pat an atom from X (side 0) or Y (side 1) to the fresh variable? */
static bool
pat_side(uint32_t pat, int side)
{
	return side == 0 ? (pat == ILP_BULK_PAT(0, 2) || pat == ILP_BULK_PAT(2, 0)) :
		(pat == ILP_BULK_PAT(1, 2) || pat == ILP_BULK_PAT(2, 1));
}

/*
 * The bulk key of a rule, and whether it carries "X != Y"; false when the
 * bulk does not enumerate its shape.
 */
static bool
rule_key(const IlpRule *r, uint64_t *key, bool *ne)
{
	uint32_t	pat[2],
				code[2];

	if (r->natoms < 1 || r->natoms > 2 || r->nvars > 3 || r->nlits > r->natoms + 1)
		return false;
	*ne = false;
	if (r->nlits > r->natoms)
	{
		const IlpLit *l = &r->lits[r->natoms];

		if (l->pred >= 0 || !((l->a == 0 && l->b == 1) || (l->a == 1 && l->b == 0)))
			return false;
		*ne = true;
	}
	for (int i = 0; i < r->natoms; i++)
	{
		const IlpLit *l = &r->lits[i];

		if (l->pred < 0 || l->a < 0 || l->a > 2 || l->b < -1 || l->b > 2)
			return false;
		pat[i] = ILP_BULK_PAT(l->a, l->b);
		if (!pat_one(pat[i]))
			return false;
		code[i] = ilp_bulk_atom(pat[i], (uint32_t) l->pred);
	}
	if (r->natoms == 1)
	{
		*key = ilp_bulk_key1(code[0]);
		return true;
	}
	if (code[0] == code[1])
		return false;
	if (!((pat_link(pat[0]) || pat_link(pat[1])) ||
		  (pat_side(pat[0], 0) && pat_side(pat[1], 1)) ||
		  (pat_side(pat[0], 1) && pat_side(pat[1], 0))))
		return false;
	*key = ilp_bulk_key2(code[0], code[1]);
	return true;
}

/*
 * The examples rule r derives (all of them, ascending) into out, their
 * number into *n; false when the bulk does not know r's shape (then the
 * caller joins it).
 */
bool
ilp_bulk_cover(const IlpBulk *b, const IlpRule *r, int32_t *out, int32_t *n)
{
	uint64_t	key;
	bool		ne;
	int64_t		h;
	int32_t		m = 0;

	if (!rule_key(r, &key, &ne))
	{
		gdl_ilp_timings.bulk_misses++;
		return false;
	}
	gdl_ilp_timings.bulk_hits++;
	h = (int64_t) (ilp_mix64(key) & (uint64_t) (b->cap - 1));
	while (b->hkey[h] != 0 && b->hkey[h] != key + 1)
		h = (h + 1) & (b->cap - 1);
	if (b->hkey[h] != 0)
	{
		const uint64_t *run = b->ent + b->hpos[h];
		uint64_t	mask = ((uint64_t) 1 << ILP_BULK_EX_BITS) - 1;

		for (int32_t k = 0; k < b->hlen[h]; k++)
		{
			int32_t		e = (int32_t) (run[k] & mask);

			if (!ne || b->w->ex[0][e] != b->w->ex[1][e])
				out[m++] = e;
		}
	}
	*n = m;
	return true;
}

/* Release a bulk coverage. */
void
ilp_bulk_free(IlpBulk *b)
{
	if (b == NULL)
		return;
	gdl_free(b->ent);
	gdl_free(b->hkey);
	gdl_free(b->hpos);
	gdl_free(b->hlen);
	gdl_free(b);
}
