/*
 * mine.cu — the counting of knowledge-graph rule mining on the GPU: the
 * device half of src/mine/gdl_mine_device.h, exported as
 * gdl_cuda_mine_entry() beside gdl_backend_entry.
 *
 * The same two passes as the CPU (src/mine/mine_enum.c), with one GPU
 * thread per entity x walking the very same groups (a raw body and the
 * distinct y with body(x, y)):
 *
 *   pass 1  every y that a head r links from x adds 1 to support(r, B) in a
 *           device hash table (atomicCAS / atomicAdd on 64-bit integers:
 *           exact, order-free); the pairs over min_support and
 *           min_head_coverage are flagged and compacted with
 *           cub::DeviceSelect::Flagged and read back
 *   pass 2  the walk again, pruned to the candidates' bodies as on the CPU;
 *           each group adds |Y| to its body's size and, for every candidate
 *           head r with x among r's subjects, to pca_body_size(r, B)
 *
 * A thread's frontiers (the links gathered from a set of entities, as
 * sig << 32 | nb) live in its slice of a scratch buffer and are sorted
 * (heapsort) and deduplicated there.  Each x's worst frontier is bounded
 * beforehand from degrees (two- and three-hop sums, capped by the number of
 * links), the entities are processed in order of that bound, largest first,
 * in batches as many as the scratch budget holds.  Every count is an
 * integer sum, so the candidates equal the CPU's exactly; the host turns
 * them into rules.  Every CUDA error becomes a status and a message (the
 * host then counts on the CPU).
 */
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cub/cub.cuh>

#include "mine/gdl_mine_device.h"

namespace
{

typedef unsigned long long ull;

/* Device key packing: 15-bit signatures, 14-bit heads (body << 14 | head). */
#define MD_SIG_BITS 15
#define MD_SIG_MASK 0x7fffu
#define MD_HEAD_BITS 14
#define MD_MAX_RELS ((1 << MD_HEAD_BITS) - 1)
#define MD_SET_BIT (1ull << 63)	/* marks a used slot of a key set */
#define MD_BLOCK 128

/* Raw body shapes (gdl_mine_device.h). */
enum
{
	SH_L = 1, SH_LL, SH_LLL, SH_P2, SH_P2L, SH_PP2, SH_P2P, SH_CXL, SH_CYL, SH_P3
};

__host__ __device__ inline uint64_t
dkey(int sh, uint32_t a, uint32_t b, uint32_t c)
{
	return ((uint64_t) sh << (3 * MD_SIG_BITS)) | ((uint64_t) a << (2 * MD_SIG_BITS)) |
		((uint64_t) b << MD_SIG_BITS) | (uint64_t) c;
}

__host__ __device__ inline int
dshape(uint64_t k)
{
	return (int) (k >> (3 * MD_SIG_BITS));
}

__host__ __device__ inline uint32_t
dsig(uint64_t k, int i)
{
	return (uint32_t) (k >> ((2 - i) * MD_SIG_BITS)) & MD_SIG_MASK;
}

/* The host's key (19-bit signatures) of a device body key. */
uint64_t
host_key(uint64_t k)
{
	return ((uint64_t) dshape(k) << 57) | ((uint64_t) dsig(k, 0) << 38) |
		((uint64_t) dsig(k, 1) << 19) | (uint64_t) dsig(k, 2);
}

/* splitmix64's finaliser. */
__host__ __device__ inline uint64_t
mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Does the body hold the link X->Y of signature sig (mine_key_has_atom)? */
__device__ inline bool
has_atom(uint64_t key, uint32_t sig)
{
	switch (dshape(key))
	{
		case SH_LLL:
			return dsig(key, 0) == sig || dsig(key, 1) == sig || dsig(key, 2) == sig;
		case SH_LL:
			return dsig(key, 0) == sig || dsig(key, 1) == sig;
		case SH_L:
		case SH_CYL:
			return dsig(key, 0) == sig;
		case SH_P2L:
		case SH_CXL:
			return dsig(key, 2) == sig;
		default:
			return false;
	}
}

/* The graph on the device. */
struct DG
{
	int32_t		nent;
	int32_t		nrels;
	int64_t		nlinks;
	const int64_t *aoff;
	const int32_t *asig;
	const int32_t *anb;
	const int32_t *bnb;
	const int32_t *bsig;
	const int64_t *ppoff;
	const int32_t *ppa;
	const int32_t *ppb;
	const int32_t *ppz;
	const int64_t *cpoff;
	const int32_t *cpa;
	const int32_t *cpb;
};

/* Everything a kernel launch reads. */
struct DRun
{
	DG			g;
	int			pass;
	int			maxb;
	int			target;
	/* pass 1: (body << 14 | head) -> support */
	ull		   *hkeys;
	ull		   *hvals;
	uint64_t	hmask;
	ull		   *hused;
	uint64_t	hlimit;
	int		   *err;			/* 1: table too full, 2: a frontier overflowed */
	/* pass 2 */
	const ull  *bkeys;			/* body set: key | MD_SET_BIT */
	const int64_t *bidx;
	uint64_t	bmask;
	const int64_t *bcoff;
	const int32_t *chead;
	ull		   *bcnt;
	ull		   *pcnt;
	const unsigned char *need_p1;
	const unsigned char *need_p2p;
	const ull  *p3keys;
	uint64_t	p3mask;
	const ull  *ppkeys;
	uint64_t	ppmask;
	unsigned	shapes;			/* bit sh: some candidate body has shape sh */
	/* the launch */
	const int32_t *xs;
	int64_t		nx;
	ull		   *scratch;
	int64_t		cap;			/* entries per frontier buffer (three per thread) */
};

/* A key set / index lookup: slot of key, or -1. */
__device__ inline int64_t
set_find(const ull *keys, uint64_t mask, uint64_t key)
{
	uint64_t	h = mix(key) & mask;
	ull			want = key | MD_SET_BIT;

	for (uint64_t probes = 0; probes <= mask; probes++)
	{
		ull			k = keys[h];

		if (k == 0)
			return -1;
		if (k == want)
			return (int64_t) h;
		h = (h + 1) & mask;
	}
	return -1;
}

/* Add 1 to a pass-1 pair. */
__device__ inline void
sup_add(const DRun &run, uint64_t pair)
{
	uint64_t	h = mix(pair) & run.hmask;
	ull			want = pair | MD_SET_BIT;

	for (uint64_t probes = 0; probes <= run.hmask; probes++)
	{
		ull			old = run.hkeys[h];

		if (old == 0)
		{
			old = atomicCAS(&run.hkeys[h], 0ull, want);
			if (old == 0)
			{
				atomicAdd(&run.hvals[h], 1ull);
				if (atomicAdd(run.hused, 1ull) + 1 > run.hlimit)
					atomicExch(run.err, 1);
				return;
			}
		}
		if (old == want)
		{
			atomicAdd(&run.hvals[h], 1ull);
			return;
		}
		h = (h + 1) & run.hmask;
	}
	atomicExch(run.err, 1);
}

/* Accessors of y lists: int32 arrays, frontier entries, one value, pairs. */
struct Y32
{
	const int32_t *p;
	__device__ int32_t operator() (int64_t i) const { return p[i]; }
};
struct Y64
{
	const ull  *p;
	__device__ int32_t operator() (int64_t i) const { return (int32_t) (uint32_t) p[i]; }
};
struct YP
{
	const ull  *p;
	__device__ int32_t operator() (int64_t i) const { return (int32_t) (p[i] & 0x7fffffffull); }
};
struct Y1
{
	int32_t		y;
	__device__ int32_t operator() (int64_t) const { return y; }
};

/* One thread's state. */
struct W
{
	const DRun *run;
	int32_t		x;
	int64_t		xa;
	int64_t		xb;
	ull		   *L2;
	ull		   *L3;
	ull		   *LP;
	bool		ovf;
};

/* First by-neighbour link of x to y (or the end of x's links). */
__device__ inline int64_t
xlinks(const DG &g, int64_t xa, int64_t xb, int32_t y)
{
	int64_t		lo = xa,
				hi = xb;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (g.bnb[mid] < y)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Is x a subject of relation r? */
__device__ inline bool
xdom(const DG &g, int64_t xa, int64_t xb, int32_t r)
{
	int64_t		lo = xa,
				hi = xb;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (g.asig[mid] < 2 * r)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < xb && g.asig[lo] == 2 * r;
}

/* Count one group (mine_enum.c's emit). */
template <typename YS>
__device__ void
emit(W &w, uint64_t key, YS ys, int64_t n)
{
	const DRun &run = *w.run;
	const DG   &g = run.g;

	if (run.pass == 1)
	{
		for (int64_t i = 0; i < n; i++)
		{
			int32_t		y = ys(i);

			for (int64_t j = xlinks(g, w.xa, w.xb, y); j < w.xb && g.bnb[j] == y; j++)
			{
				uint32_t	s = (uint32_t) g.bsig[j];

				if (s & 1)
					continue;
				if (run.target >= 0 && (int) (s >> 1) != run.target)
					continue;
				if (has_atom(key, s))
					continue;
				sup_add(run, (key << MD_HEAD_BITS) | (s >> 1));
			}
		}
	}
	else
	{
		int64_t		slot = set_find(run.bkeys, run.bmask, key);
		int64_t		b;

		if (slot < 0)
			return;
		b = run.bidx[slot];
		atomicAdd(&run.bcnt[b], (ull) n);
		for (int64_t c = run.bcoff[b]; c < run.bcoff[b + 1]; c++)
			if (xdom(g, w.xa, w.xb, run.chead[c]))
				atomicAdd(&run.pcnt[c], (ull) n);
	}
}

/* Heapsort of n 64-bit keys. */
__device__ void
sift(ull *a, int64_t i, int64_t n)
{
	for (;;)
	{
		int64_t		l = 2 * i + 1,
					c;
		ull			t;

		if (l >= n)
			return;
		c = (l + 1 < n && a[l + 1] > a[l]) ? l + 1 : l;
		if (a[i] >= a[c])
			return;
		t = a[i];
		a[i] = a[c];
		a[c] = t;
		i = c;
	}
}

__device__ void
heapsort(ull *a, int64_t n)
{
	for (int64_t i = n / 2 - 1; i >= 0; i--)
		sift(a, i, n);
	for (int64_t e = n - 1; e > 0; e--)
	{
		ull			t = a[0];

		a[0] = a[e];
		a[e] = t;
		sift(a, 0, e);
	}
}

/* Sort and deduplicate; the new length. */
__device__ int64_t
sort_unique(ull *a, int64_t n)
{
	int64_t		m = 0;

	heapsort(a, n);
	for (int64_t i = 0; i < n; i++)
		if (m == 0 || a[i] != a[m - 1])
			a[m++] = a[i];
	return m;
}

/* The links of the frontier F, as sig << 32 | nb, sorted and distinct; -1: overflow. */
template <typename FS>
__device__ int64_t
expand(W &w, FS F, int64_t nF, ull *out)
{
	const DG   &g = w.run->g;
	int64_t		n = 0;

	for (int64_t i = 0; i < nF; i++)
	{
		int32_t		e = F(i);

		for (int64_t k = g.aoff[e]; k < g.aoff[e + 1]; k++)
		{
			if (n >= w.run->cap)
			{
				w.ovf = true;
				return -1;
			}
			out[n++] = ((ull) (uint32_t) g.asig[k] << 32) | (uint32_t) g.anb[k];
		}
	}
	return nF > 1 ? sort_unique(out, n) : n;
}

/* Is shape sh counted in this pass? */
__device__ inline bool
want(const DRun &run, int sh)
{
	return run.pass == 1 || (run.shapes >> sh) & 1;
}

/* The paths out of x through the first link group (s1, Z). */
__device__ void
enum_paths(W &w, uint32_t s1, const int32_t *Z, int64_t nZ)
{
	const DRun &run = *w.run;
	const DG   &g = run.g;
	int64_t		n2 = expand(w, Y32 {Z}, nZ, w.L2);

	if (n2 < 0)
		return;
	for (int64_t i = 0; i < n2;)
	{
		uint32_t	s2 = (uint32_t) (w.L2[i] >> 32);
		int64_t		j = i;

		while (j < n2 && (uint32_t) (w.L2[j] >> 32) == s2)
			j++;
		if (want(run, SH_P2))
			emit(w, dkey(SH_P2, s1, s2, 0), Y64 {w.L2 + i}, j - i);
		if (run.maxb >= 3)
		{
			if (want(run, SH_P2L))
				for (int64_t k = i; k < j; k++)
				{
					int32_t		y = (int32_t) (uint32_t) w.L2[k];

					for (int64_t l = xlinks(g, w.xa, w.xb, y); l < w.xb && g.bnb[l] == y; l++)
						emit(w, dkey(SH_P2L, s1, s2, (uint32_t) g.bsig[l]), Y1 {y}, 1);
				}
			if (run.pass == 1 ||
				(((run.shapes >> SH_P3) & 1) && set_find(run.p3keys, run.p3mask, dkey(0, s1, s2, 0)) >= 0))
			{
				int64_t		n3 = expand(w, Y64 {w.L2 + i}, j - i, w.L3);

				if (n3 < 0)
					return;
				for (int64_t a = 0; a < n3;)
				{
					uint32_t	s3 = (uint32_t) (w.L3[a] >> 32);
					int64_t		b = a;

					while (b < n3 && (uint32_t) (w.L3[b] >> 32) == s3)
						b++;
					emit(w, dkey(SH_P3, s1, s2, s3), Y64 {w.L3 + a}, b - a);
					a = b;
				}
			}
		}
		i = j;
	}
	if (run.maxb >= 3 && (run.pass == 1 || run.need_p2p[s1]))
	{
		int64_t		n = 0;

		for (int64_t k = 0; k < nZ; k++)
			for (int64_t p = g.ppoff[Z[k]]; p < g.ppoff[Z[k] + 1]; p++)
			{
				if (n >= run.cap)
				{
					w.ovf = true;
					return;
				}
				w.LP[n++] = ((ull) (uint32_t) g.ppa[p] << 46) | ((ull) (uint32_t) g.ppb[p] << 31) |
					(uint32_t) g.ppz[p];
			}
		if (nZ > 1)
			n = sort_unique(w.LP, n);
		for (int64_t p = 0; p < n;)
		{
			ull			ab = w.LP[p] >> 31;
			int64_t		q = p;

			while (q < n && (w.LP[q] >> 31) == ab)
				q++;
			emit(w, dkey(SH_P2P, s1, (uint32_t) (ab >> 15), (uint32_t) (ab & MD_SIG_MASK)),
				 YP {w.LP + p}, q - p);
			p = q;
		}
	}
}

/* Every body group of one entity (mine_enum.c's enum_x); a thread per x. */
__global__ void
k_mine(DRun run)
{
	int64_t		t = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	const DG   &g = run.g;
	W			w;

	if (t >= run.nx)
		return;
	w.run = &run;
	w.x = run.xs[t];
	w.xa = g.aoff[w.x];
	w.xb = g.aoff[w.x + 1];
	w.L2 = run.scratch + 3 * t * run.cap;
	w.L3 = w.L2 + run.cap;
	w.LP = w.L3 + run.cap;
	w.ovf = false;
	if (w.xa == w.xb)
		return;

	/* one link on (X, Y), and the cycles X-Z-X with a link on (X, Y) */
	for (int64_t a = w.xa; a < w.xb;)
	{
		int64_t		b = a;

		while (b < w.xb && g.asig[b] == g.asig[a])
			b++;
		emit(w, dkey(SH_L, (uint32_t) g.asig[a], 0, 0), Y32 {g.anb + a}, b - a);
		a = b;
	}
	if (run.maxb >= 2 && (want(run, SH_LL) || (run.maxb >= 3 && want(run, SH_LLL))))
		for (int64_t j = w.xa; j < w.xb;)
		{
			int64_t		e = j;

			while (e < w.xb && g.bnb[e] == g.bnb[j])
				e++;
			for (int64_t a = j; a < e; a++)
				for (int64_t b = a + 1; b < e; b++)
				{
					emit(w, dkey(SH_LL, g.bsig[a], g.bsig[b], 0), Y1 {g.bnb[j]}, 1);
					if (run.maxb >= 3)
						for (int64_t c = b + 1; c < e; c++)
							emit(w, dkey(SH_LLL, g.bsig[a], g.bsig[b], g.bsig[c]), Y1 {g.bnb[j]}, 1);
				}
			j = e;
		}
	if (run.maxb >= 3)
	{
		if (want(run, SH_CYL))
			for (int64_t j = w.xa; j < w.xb; j++)
			{
				int32_t		y = g.anb[j];

				for (int64_t p = g.cpoff[y]; p < g.cpoff[y + 1]; p++)
					emit(w, dkey(SH_CYL, g.asig[j], g.cpa[p], g.cpb[p]), Y1 {y}, 1);
			}
		for (int64_t p = g.ppoff[w.x]; p < g.ppoff[w.x + 1] && !w.ovf;)
		{
			int64_t		q = p;
			uint32_t	a = g.ppa[p],
						b = g.ppb[p];

			while (q < g.ppoff[w.x + 1] && g.ppa[q] == (int32_t) a && g.ppb[q] == (int32_t) b)
				q++;
			if (want(run, SH_CXL))
				for (int64_t k = w.xa; k < w.xb;)
				{
					int64_t		e = k;

					while (e < w.xb && g.asig[e] == g.asig[k])
						e++;
					emit(w, dkey(SH_CXL, a, b, (uint32_t) g.asig[k]), Y32 {g.anb + k}, e - k);
					k = e;
				}
			if (run.pass == 1 ||
				(((run.shapes >> SH_PP2) & 1) && set_find(run.ppkeys, run.ppmask, dkey(0, a, b, 0)) >= 0))
			{
				int64_t		n = expand(w, Y32 {g.ppz + p}, q - p, w.L3);

				for (int64_t i = 0; i < n;)
				{
					uint32_t	s2 = (uint32_t) (w.L3[i] >> 32);
					int64_t		j = i;

					while (j < n && (uint32_t) (w.L3[j] >> 32) == s2)
						j++;
					emit(w, dkey(SH_PP2, a, b, s2), Y64 {w.L3 + i}, j - i);
					i = j;
				}
			}
			p = q;
		}
	}
	if (run.maxb >= 2)
		for (int64_t a = w.xa; a < w.xb && !w.ovf;)
		{
			int64_t		b = a;
			uint32_t	s1 = (uint32_t) g.asig[a];

			while (b < w.xb && g.asig[b] == g.asig[a])
				b++;
			if (run.pass == 1 || run.need_p1[s1])
				enum_paths(w, s1, g.anb + a, b - a);
			a = b;
		}
	if (w.ovf)
		atomicExch(run.err, 2);
}

/* Flag the pass-1 pairs over the thresholds. */
__global__ void
k_flag(const ull *keys, const ull *vals, uint64_t n, const int64_t *nfacts, int64_t minsup,
	   double minhc, unsigned char *flag)
{
	uint64_t	i = (uint64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	flag[i] = 0;
	if (keys[i] == 0)
		return;
	{
		int32_t		head = (int32_t) (keys[i] & ((1ull << MD_HEAD_BITS) - 1));
		ull			sup = vals[i];

		flag[i] = (int64_t) sup >= minsup && (double) sup / (double) nfacts[head] >= minhc;
	}
}

/* ---------------------------------------------------------------- host */

/* Record a CUDA error as the message; true when there was one. */
bool
md_failed(cudaError_t rc, const char *what, char *errmsg, size_t errlen)
{
	if (rc == cudaSuccess)
		return false;
	snprintf(errmsg, errlen, "%s: %s", what, cudaGetErrorString(rc));
	return true;
}

/* Device buffers of one call, freed together. */
struct Bufs
{
	std::vector<void *> p;

	~Bufs()
	{
		for (void *q : p)
			cudaFree(q);
	}
	template <typename T> bool alloc(T **out, size_t bytes, char *errmsg, size_t errlen)
	{
		void	   *q = NULL;

		if (md_failed(cudaMalloc(&q, bytes > 0 ? bytes : 8), "device memory", errmsg, errlen))
			return false;
		p.push_back(q);
		*out = (T *) q;
		return true;
	}
	void		release(void *q)
	{
		for (size_t i = 0; i < p.size(); i++)
			if (p[i] == q)
			{
				cudaFree(q);
				p.erase(p.begin() + i);
				return;
			}
	}
	template <typename T> bool up(const T *src, int64_t n, const T **dst, char *errmsg, size_t errlen)
	{
		T		   *d;

		if (!alloc(&d, sizeof(T) * (size_t) n, errmsg, errlen))
			return false;
		if (n > 0 && md_failed(cudaMemcpy(d, src, sizeof(T) * (size_t) n, cudaMemcpyHostToDevice),
							   "upload", errmsg, errlen))
			return false;
		*dst = d;
		return true;
	}
};

double
now_s()
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/* A host-built key set (or key -> index table) uploaded; keys get MD_SET_BIT. */
bool
upload_set(Bufs &b, const std::vector<uint64_t> &keys, const ull **dkeys, const int64_t **didx,
		   uint64_t *mask, char *errmsg, size_t errlen)
{
	uint64_t	cap = 16;

	while (cap < 2 * keys.size() + 16)
		cap *= 2;
	std::vector<ull> k(cap, 0);
	std::vector<int64_t> ix(cap, -1);

	for (size_t i = 0; i < keys.size(); i++)
	{
		uint64_t	h = mix(keys[i]) & (cap - 1);
		ull			want = keys[i] | MD_SET_BIT;

		while (k[h] != 0 && k[h] != want)
			h = (h + 1) & (cap - 1);
		if (k[h] == 0)
		{
			k[h] = want;
			ix[h] = (int64_t) i;
		}
	}
	*mask = cap - 1;
	if (!b.up(k.data(), (int64_t) cap, dkeys, errmsg, errlen))
		return false;
	return didx == NULL || b.up(ix.data(), (int64_t) cap, didx, errmsg, errlen);
}

/*
 * Run one pass over the entities xs (ordered by their frontier bound need,
 * largest first): batches as many threads as the scratch budget holds.
 */
bool
run_pass(Bufs &b, DRun &run, const std::vector<int32_t> &xs, const std::vector<int64_t> &need,
		 char *errmsg, size_t errlen)
{
	const int32_t *dxs;
	size_t		freeb = 0,
				totalb = 0;
	size_t		budget;
	ull		   *scratch = NULL;
	int64_t		maxthreads = 1 << 20;

	if (xs.empty())
		return true;
	if (!b.up(xs.data(), (int64_t) xs.size(), &dxs, errmsg, errlen))
		return false;
	if (md_failed(cudaMemGetInfo(&freeb, &totalb), "memory info", errmsg, errlen))
		return false;
	budget = std::min(freeb / 2, (size_t) 24 << 30);
	{
		/* scratch for the largest batch: bounded by budget */
		size_t		want = 0;
		int64_t		i = 0;

		while (i < (int64_t) xs.size())
		{
			int64_t		cap = std::max<int64_t>(need[i], 1);
			int64_t		nt = std::min<int64_t>((int64_t) (budget / (24 * (size_t) cap)), maxthreads);

			nt = std::max<int64_t>(1, std::min<int64_t>(nt, (int64_t) xs.size() - i));
			want = std::max(want, (size_t) nt * 24 * (size_t) cap);
			i += nt;
		}
		if (!b.alloc(&scratch, want, errmsg, errlen))
			return false;
	}
	for (int64_t i = 0; i < (int64_t) xs.size();)
	{
		int64_t		cap = std::max<int64_t>(need[i], 1);
		int64_t		nt = std::min<int64_t>((int64_t) (budget / (24 * (size_t) cap)), maxthreads);

		nt = std::max<int64_t>(1, std::min<int64_t>(nt, (int64_t) xs.size() - i));
		run.xs = dxs + i;
		run.nx = nt;
		run.scratch = scratch;
		run.cap = cap;
		k_mine<<<(unsigned) ((nt + MD_BLOCK - 1) / MD_BLOCK), MD_BLOCK>>>(run);
		if (md_failed(cudaGetLastError(), "mining kernel", errmsg, errlen) ||
			md_failed(cudaDeviceSynchronize(), "mining kernel", errmsg, errlen))
			return false;
		i += nt;
	}
	b.release(scratch);
	return true;
}

/* gdl_mine_device.h's mine(). */
int
md_mine(const GdlMineDevIn *in, GdlMineDevCand **out, int64_t *nout, double seconds[3],
		char *errmsg, size_t errlen)
{
	Bufs		b;
	DRun		run;
	double		t0 = now_s(),
				t1,
				t2;
	int32_t		n = in->nent;
	int64_t		npp = in->ppoff[n];
	int			maxb = std::min(std::max(in->max_body, 1), 3);
	std::vector<int64_t> d2(n), need(n);
	std::vector<int32_t> order(n), xs1;
	std::vector<int64_t> need1;
	int		   *derr;
	int			herr = 0;

	*out = NULL;
	*nout = 0;
	if (in->nrels > MD_MAX_RELS)
	{
		snprintf(errmsg, errlen, "the GPU miner takes at most %d relations", MD_MAX_RELS);
		return 1;
	}
	memset(&run, 0, sizeof(run));
	run.g.nent = n;
	run.g.nrels = in->nrels;
	run.g.nlinks = in->nlinks;
	if (!b.up(in->aoff, (int64_t) n + 1, &run.g.aoff, errmsg, errlen) ||
		!b.up(in->sig, in->nlinks, &run.g.asig, errmsg, errlen) ||
		!b.up(in->nb, in->nlinks, &run.g.anb, errmsg, errlen) ||
		!b.up(in->bnb, in->nlinks, &run.g.bnb, errmsg, errlen) ||
		!b.up(in->bsig, in->nlinks, &run.g.bsig, errmsg, errlen) ||
		!b.up(in->ppoff, (int64_t) n + 1, &run.g.ppoff, errmsg, errlen) ||
		!b.up(in->ppa, npp, &run.g.ppa, errmsg, errlen) ||
		!b.up(in->ppb, npp, &run.g.ppb, errmsg, errlen) ||
		!b.up(in->ppz, npp, &run.g.ppz, errmsg, errlen) ||
		!b.up(in->cpoff, (int64_t) n + 1, &run.g.cpoff, errmsg, errlen) ||
		!b.up(in->cpa, in->cpoff[n], &run.g.cpa, errmsg, errlen) ||
		!b.up(in->cpb, in->cpoff[n], &run.g.cpb, errmsg, errlen) ||
		!b.alloc(&derr, sizeof(int), errmsg, errlen))
		return 1;
	run.maxb = maxb;
	run.target = in->target;
	run.err = derr;

	/* each x's frontier bound: two- and three-hop degree sums, capped */
	for (int32_t e = 0; e < n; e++)
	{
		d2[e] = 0;
		for (int64_t k = in->aoff[e]; k < in->aoff[e + 1]; k++)
			d2[e] += in->aoff[in->nb[k] + 1] - in->aoff[in->nb[k]];
	}
	for (int32_t x = 0; x < n; x++)
	{
		int64_t		d3 = 0,
					pp = 0,
					v = std::min(d2[x], in->nlinks);

		if (maxb >= 3)
		{
			for (int64_t k = in->aoff[x]; k < in->aoff[x + 1]; k++)
			{
				d3 += d2[in->nb[k]];
				pp += in->ppoff[in->nb[k] + 1] - in->ppoff[in->nb[k]];
			}
			v = std::max(v, std::min(d3, in->nlinks));
			v = std::max(v, std::min(pp, npp));
		}
		need[x] = std::max<int64_t>(v, 1);
		order[x] = x;
	}
	std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t c) { return need[a] > need[c]; });
	for (int32_t x : order)
	{
		bool		head = false;

		for (int64_t k = in->aoff[x]; k < in->aoff[x + 1] && !head; k++)
			head = (in->sig[k] & 1) == 0 && (in->target < 0 || in->sig[k] == 2 * in->target);
		if (head)
		{
			xs1.push_back(x);
			need1.push_back(need[x]);
		}
	}
	std::vector<int64_t> needall(n);
	for (int32_t i = 0; i < n; i++)
		needall[i] = need[order[i]];
	t1 = now_s();
	seconds[2] = t1 - t0;

	/* pass 1: support in a hash table, grown and rerun while too full */
	std::vector<GdlMineDevCand> cand;
	for (uint64_t cap = std::max<uint64_t>(1ull << 22, 1); ; cap *= 4)
	{
		ull		   *hk,
				   *hv,
				   *hu;
		unsigned char *flag;
		ull		   *sk,
				   *sv;
		int64_t    *nsel;
		const int64_t *dnf;
		void	   *tmp = NULL;
		size_t		tmpb = 0;
		int64_t		nsel_h = 0;

		while (cap < (uint64_t) in->nlinks * 4)
			cap *= 2;
		Bufs		hb;

		if (!hb.alloc(&hk, sizeof(ull) * cap, errmsg, errlen) ||
			!hb.alloc(&hv, sizeof(ull) * cap, errmsg, errlen) ||
			!hb.alloc(&hu, sizeof(ull), errmsg, errlen) ||
			md_failed(cudaMemset(hk, 0, sizeof(ull) * cap), "memset", errmsg, errlen) ||
			md_failed(cudaMemset(hv, 0, sizeof(ull) * cap), "memset", errmsg, errlen) ||
			md_failed(cudaMemset(hu, 0, sizeof(ull)), "memset", errmsg, errlen) ||
			md_failed(cudaMemset(derr, 0, sizeof(int)), "memset", errmsg, errlen))
			return 1;
		run.pass = 1;
		run.hkeys = hk;
		run.hvals = hv;
		run.hmask = cap - 1;
		run.hused = hu;
		run.hlimit = cap / 2;
		if (!run_pass(hb, run, xs1, need1, errmsg, errlen) ||
			md_failed(cudaMemcpy(&herr, derr, sizeof(int), cudaMemcpyDeviceToHost), "download", errmsg, errlen))
			return 1;
		if (herr == 2)
		{
			snprintf(errmsg, errlen, "a frontier outgrew its bound");
			return 1;
		}
		if (herr == 1)
		{
			if (cap >= (1ull << 33))
			{
				snprintf(errmsg, errlen, "too many rules for the GPU's support table");
				return 1;
			}
			continue;
		}
		/* flag and compact the pairs over the thresholds */
		if (!hb.alloc(&flag, cap, errmsg, errlen) ||
			!hb.alloc(&sk, sizeof(ull) * cap, errmsg, errlen) ||
			!hb.alloc(&sv, sizeof(ull) * cap, errmsg, errlen) ||
			!hb.alloc(&nsel, sizeof(int64_t), errmsg, errlen) ||
			!hb.up(in->nfacts, in->nrels, &dnf, errmsg, errlen))
			return 1;
		k_flag<<<(unsigned) ((cap + 255) / 256), 256>>>(hk, hv, cap, dnf, in->min_support,
														in->min_head_coverage, flag);
		if (md_failed(cudaGetLastError(), "flag kernel", errmsg, errlen) ||
			md_failed(cub::DeviceSelect::Flagged(tmp, tmpb, hk, flag, sk, nsel, (int64_t) cap), "select", errmsg, errlen) ||
			!hb.alloc((char **) &tmp, tmpb, errmsg, errlen) ||
			md_failed(cub::DeviceSelect::Flagged(tmp, tmpb, hk, flag, sk, nsel, (int64_t) cap), "select", errmsg, errlen) ||
			md_failed(cub::DeviceSelect::Flagged(tmp, tmpb, hv, flag, sv, nsel, (int64_t) cap), "select", errmsg, errlen) ||
			md_failed(cudaMemcpy(&nsel_h, nsel, sizeof(int64_t), cudaMemcpyDeviceToHost), "download", errmsg, errlen))
			return 1;
		std::vector<ull> ks(nsel_h), vs(nsel_h);

		if (nsel_h > 0 &&
			(md_failed(cudaMemcpy(ks.data(), sk, sizeof(ull) * nsel_h, cudaMemcpyDeviceToHost), "download", errmsg, errlen) ||
			 md_failed(cudaMemcpy(vs.data(), sv, sizeof(ull) * nsel_h, cudaMemcpyDeviceToHost), "download", errmsg, errlen)))
			return 1;
		cand.resize(nsel_h);
		for (int64_t i = 0; i < nsel_h; i++)
		{
			ull			pair = ks[i] & ~MD_SET_BIT;

			cand[i].key = pair >> MD_HEAD_BITS;	/* device key for now */
			cand[i].head = (int32_t) (pair & ((1ull << MD_HEAD_BITS) - 1));
			cand[i].support = (int64_t) vs[i];
			cand[i].body_size = 0;
			cand[i].pca_body_size = 0;
		}
		break;
	}
	t2 = now_s();
	seconds[0] = t2 - t1;

	/* pass 2: the candidates' bodies and prefixes */
	std::sort(cand.begin(), cand.end(), [](const GdlMineDevCand &a, const GdlMineDevCand &c) {
		return a.key != c.key ? a.key < c.key : a.head < c.head;
	});
	if (!cand.empty())
	{
		std::vector<uint64_t> bodies, p3, pp;
		std::vector<int64_t> bcoff;
		std::vector<int32_t> chead(cand.size());
		std::vector<unsigned char> need_p1(2 * (size_t) in->nrels + 1, 0),
					need_p2p(2 * (size_t) in->nrels + 1, 0);
		unsigned	shapes = 0;
		ull		   *bcnt,
				   *pcnt;

		for (size_t i = 0; i < cand.size(); i++)
		{
			uint64_t	k = cand[i].key;
			int			sh = dshape(k);

			chead[i] = cand[i].head;
			if (i > 0 && k == cand[i - 1].key)
				continue;
			bcoff.push_back((int64_t) i);
			bodies.push_back(k);
			shapes |= 1u << sh;
			if (sh == SH_P2 || sh == SH_P2L || sh == SH_P2P || sh == SH_P3)
				need_p1[dsig(k, 0)] = 1;
			if (sh == SH_P2P)
				need_p2p[dsig(k, 0)] = 1;
			if (sh == SH_P3)
				p3.push_back(dkey(0, dsig(k, 0), dsig(k, 1), 0));
			if (sh == SH_PP2)
				pp.push_back(dkey(0, dsig(k, 0), dsig(k, 1), 0));
		}
		bcoff.push_back((int64_t) cand.size());
		run.pass = 2;
		run.shapes = shapes;
		if (!upload_set(b, bodies, &run.bkeys, &run.bidx, &run.bmask, errmsg, errlen) ||
			!upload_set(b, p3, &run.p3keys, NULL, &run.p3mask, errmsg, errlen) ||
			!upload_set(b, pp, &run.ppkeys, NULL, &run.ppmask, errmsg, errlen) ||
			!b.up(bcoff.data(), (int64_t) bcoff.size(), &run.bcoff, errmsg, errlen) ||
			!b.up(chead.data(), (int64_t) chead.size(), &run.chead, errmsg, errlen) ||
			!b.up(need_p1.data(), (int64_t) need_p1.size(), &run.need_p1, errmsg, errlen) ||
			!b.up(need_p2p.data(), (int64_t) need_p2p.size(), &run.need_p2p, errmsg, errlen) ||
			!b.alloc(&bcnt, sizeof(ull) * bodies.size(), errmsg, errlen) ||
			!b.alloc(&pcnt, sizeof(ull) * cand.size(), errmsg, errlen) ||
			md_failed(cudaMemset(bcnt, 0, sizeof(ull) * bodies.size()), "memset", errmsg, errlen) ||
			md_failed(cudaMemset(pcnt, 0, sizeof(ull) * cand.size()), "memset", errmsg, errlen) ||
			md_failed(cudaMemset(derr, 0, sizeof(int)), "memset", errmsg, errlen))
			return 1;
		run.bcnt = bcnt;
		run.pcnt = pcnt;
		if (!run_pass(b, run, order, needall, errmsg, errlen) ||
			md_failed(cudaMemcpy(&herr, derr, sizeof(int), cudaMemcpyDeviceToHost), "download", errmsg, errlen))
			return 1;
		if (herr != 0)
		{
			snprintf(errmsg, errlen, "a frontier outgrew its bound");
			return 1;
		}
		std::vector<ull> hb(bodies.size()), hp(cand.size());

		if (md_failed(cudaMemcpy(hb.data(), bcnt, sizeof(ull) * hb.size(), cudaMemcpyDeviceToHost), "download", errmsg, errlen) ||
			md_failed(cudaMemcpy(hp.data(), pcnt, sizeof(ull) * hp.size(), cudaMemcpyDeviceToHost), "download", errmsg, errlen))
			return 1;
		for (size_t bi = 0; bi < bodies.size(); bi++)
			for (int64_t i = bcoff[bi]; i < bcoff[bi + 1]; i++)
			{
				cand[i].body_size = (int64_t) hb[bi];
				cand[i].pca_body_size = (int64_t) hp[i];
			}
	}
	seconds[1] = now_s() - t2;
	*out = (GdlMineDevCand *) malloc(sizeof(GdlMineDevCand) * (cand.size() + 1));
	if (*out == NULL)
	{
		snprintf(errmsg, errlen, "out of host memory");
		return 1;
	}
	for (size_t i = 0; i < cand.size(); i++)
	{
		(*out)[i] = cand[i];
		(*out)[i].key = host_key(cand[i].key);
	}
	*nout = (int64_t) cand.size();
	return 0;
}

void
md_free(GdlMineDevCand *p)
{
	free(p);
}

const GdlMineDevice mine_device = {
	GDL_MINE_DEVICE_ABI,
	"cuda",
	md_mine,
	md_free
};

}								/* namespace */

/* The entry point the host looks up with dlsym. */
extern "C" __attribute__((visibility("default"))) const GdlMineDevice *
gdl_cuda_mine_entry(void)
{
	return &mine_device;
}
