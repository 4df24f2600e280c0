/*
 * mine.cu — the counting of knowledge-graph rule mining on the GPU: the
 * device half of src/mine/gdl_mine_device.h, exported as
 * gdl_cuda_mine_entry() beside gdl_backend_entry.
 *
 * The same two passes as the CPU (src/mine/mine_enum.c), with GPU
 * threads walking, per entity x, the very same groups (a raw body and the
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
 * A thread takes one part of an entity's walk (the shapes not starting
 * with a path, or the paths through one first-link signature), so that a
 * graph of few dense entities (kinship) still spreads over threads.  Its
 * frontiers (the links gathered from a set of entities, as sig << 32 | nb)
 * live in its slice of a scratch buffer and are sorted (heapsort) and
 * deduplicated there.  Each x's worst frontier is bounded
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
#include <pthread.h>
#include <unistd.h>

#include <cub/cub.cuh>

#include "mine/gdl_mine_device.h"
#include "cu_bufs.cuh"
#include "mine_walk.cuh"

namespace
{

typedef md_ull ull;

#define MD_BLOCK 128

/* One thread per work item (a part of an entity's walk): md_walk_x. */
__global__ void
k_mine(MdRun run)
{
	int64_t		t = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (t < run.nx)
		md_walk_x(&run, t);
}

/* Flag the pass-1 pairs over the thresholds. */
__global__ void
k_flag(const ull *keys, const ull *vals, uint64_t n, const int64_t *nfacts, int64_t minsup,
	   double minhc, unsigned char *flag)
{
	uint64_t	i = (uint64_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		flag[i] = md_pair_passes(keys[i] & ~MD_SET_BIT, vals[i], nfacts, minsup, minhc) && keys[i] != 0;
}

/* ---------------------------------------------------------------- host */

double
now_s()
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/* A key set (or key -> index table) built by md_set_build, uploaded. */
bool
upload_set(CuBufs &b, const uint64_t *keys, int64_t n, const ull **dkeys, const int64_t **didx,
		   uint64_t *mask, char *errmsg, size_t errlen)
{
	ull		   *k = NULL;
	int64_t    *ix = NULL;
	uint64_t	cap = 0;
	bool		ok;

	if (!md_set_build(keys, n, &k, &ix, &cap))
	{
		snprintf(errmsg, errlen, "out of host memory");
		return false;
	}
	*mask = cap - 1;
	ok = b.up((const ull *) k, (int64_t) cap, dkeys, errmsg, errlen) &&
		(didx == NULL || b.up((const int64_t *) ix, (int64_t) cap, didx, errmsg, errlen));
	free(k);
	free(ix);
	return ok;
}

/*
 * Run one pass over the entities ents (ordered by their frontier bound
 * need_of, largest first), as work items (md_items: an entity's parts),
 * in batches of as many threads as the scratch budget holds.
 */
/*
 * The caller's stop request (GdlMineDevIn.stop) as two flags the kernels
 * read (MdRun.stop, MdRun.stop_host):
 *   - one in device memory, read every 64 groups (an L2 hit; mapped host
 *     memory read that often made GPU mining 15x slower), raised by a copy
 *     on a stream of its own from poll();
 *   - one in mapped host memory, read every 16,384 groups (cheap at that
 *     rate), raised by a watcher thread that makes no CUDA call.  The copy
 *     alone was not enough in the GPU service: while other threads of the
 *     process sat in CUDA calls that wait for the device (a page-locked
 *     allocation or a cudaFree of another session's request), the copy and
 *     this thread's cudaStreamQuery waited behind them, for the very kernel
 *     that was to stop: a cancelled mining ran on for 32 s on the H200.
 * Freed with the run, after its kernels.
 */
struct StopFlag
{
	int		   *host = NULL;	/* pinned: the copy's source */
	int		   *dev = NULL;
	volatile int *mapped = NULL;	/* pinned, mapped: the watcher's flag */
	cudaStream_t stream = NULL;
	const GdlMineDevIn *in = NULL;
	pthread_t	watcher;
	bool		watching = false;
	volatile bool done = false;
	double		raised_at = 0;	/* when the watcher saw the request */

	~StopFlag()
	{
		if (watching)
		{
			done = true;
			pthread_join(watcher, NULL);
		}
		if (stream)
		{
			cudaStreamSynchronize(stream);
			cudaStreamDestroy(stream);
		}
		if (dev)
			cudaFree(dev);
		if (host)
			cudaFreeHost(host);
		if (mapped)
			cudaFreeHost((void *) mapped);
	}
	/* The watcher: polls the caller every millisecond, raises the mapped flag. */
	static void *watch(void *arg)
	{
		StopFlag   *sf = (StopFlag *) arg;

		while (!sf->done)
		{
			if (sf->in->stop(sf->in->stop_arg))
			{
				sf->raised_at = now_s();
				*sf->mapped = 1;
				__sync_synchronize();
				break;
			}
			usleep(1000);
		}
		return NULL;
	}
	/* Allocate both flags and start the watcher; false with errmsg. */
	bool		start(const GdlMineDevIn *req, char *errmsg, size_t errlen)
	{
		void	   *m = NULL;

		in = req;
		if (cu_msg_failed(cudaHostAlloc((void **) &host, sizeof(int), cudaHostAllocDefault),
					  "stop flag", errmsg, errlen) ||
			cu_msg_failed(cudaHostAlloc(&m, sizeof(int), cudaHostAllocMapped), "stop flag", errmsg, errlen))
			return false;
		mapped = (volatile int *) m;
		*host = 0;
		*mapped = 0;
		if (cu_msg_failed(cudaMalloc((void **) &dev, sizeof(int)), "stop flag", errmsg, errlen) ||
			cu_msg_failed(cudaMemset(dev, 0, sizeof(int)), "stop flag", errmsg, errlen) ||
			cu_msg_failed(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stop flag",
					  errmsg, errlen))
			return false;
		if (pthread_create(&watcher, NULL, watch, this) != 0)
		{
			snprintf(errmsg, errlen, "could not start the stop watcher");
			return false;
		}
		watching = true;
		return true;
	}
	/* The device pointer of the mapped flag (UVA: the host address). */
	const volatile int *mapped_dev() const
	{
		void	   *d = NULL;

		if (mapped == NULL || cudaHostGetDevicePointer(&d, (void *) mapped, 0) != cudaSuccess)
			return NULL;
		return (const volatile int *) d;
	}
	/* Poll the caller; once it asks, raise the flags.  True when stopped. */
	bool		poll()
	{
		if (host && !*host && ((mapped && *mapped) || (in->stop && in->stop(in->stop_arg))))
		{
			*host = 1;
			if (mapped)
				*mapped = 1;
			cudaMemcpyAsync(dev, host, sizeof(int), cudaMemcpyHostToDevice, stream);
		}
		return host && *host;
	}
};

/*
 * Wait for the launched kernels, polling the caller's stop request every
 * millisecond (a kernel that reads the flag leaves its walk within
 * microseconds); false with "cancelled" when stopped.
 */
bool
wait_kernels(StopFlag &sf, const char *what, char *errmsg, size_t errlen)
{
	cudaError_t e;

	while ((e = cudaStreamQuery(0)) == cudaErrorNotReady)
	{
		sf.poll();
		usleep(1000);
	}
	if (cu_msg_failed(e, what, errmsg, errlen))
		return false;
	if (sf.poll())
	{
		/* a slow stop is worth a line in the server log */
		if (sf.raised_at > 0 && now_s() - sf.raised_at > 0.25)
			fprintf(stderr, "gpudl GPU mining: %s stopped %.0f ms after the stop request\n",
					what, (now_s() - sf.raised_at) * 1000);
		snprintf(errmsg, errlen, "cancelled");
		return false;
	}
	return true;
}

bool
run_pass(CuBufs &b, MdRun &run, const std::vector<int32_t> &ents, int maxb, const int64_t *aoff,
		 const int32_t *sig, const std::vector<int64_t> &need_of, StopFlag &sf,
		 char *errmsg, size_t errlen)
{
	int64_t		nitems = md_items_count(ents.data(), (int64_t) ents.size(), aoff, sig, maxb);
	std::vector<int32_t> xs(nitems), parts(nitems);
	std::vector<int64_t> need(nitems);
	const int32_t *dxs,
			   *dparts;
	size_t		freeb = 0,
				totalb = 0;
	size_t		budget;
	ull		   *scratch = NULL;
	int64_t		maxthreads = 1 << 20;

	if (nitems == 0)
		return true;
	md_items(ents.data(), (int64_t) ents.size(), aoff, sig, maxb, need_of.data(), xs.data(),
			 parts.data(), need.data());
	if (!b.up(xs.data(), nitems, &dxs, errmsg, errlen) ||
		!b.up(parts.data(), nitems, &dparts, errmsg, errlen))
		return false;
	if (cu_msg_failed(cudaMemGetInfo(&freeb, &totalb), "memory info", errmsg, errlen))
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
		run.parts = dparts + i;
		run.nx = nt;
		run.scratch = scratch;
		run.cap = cap;
		k_mine<<<(unsigned) ((nt + MD_BLOCK - 1) / MD_BLOCK), MD_BLOCK>>>(run);
		if (cu_msg_failed(cudaGetLastError(), "mining kernel", errmsg, errlen) ||
			!wait_kernels(sf, "mining kernel", errmsg, errlen))
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
	StopFlag	sf;				/* freed last: kernels read it */
	CuBufs		b;
	MdRun		run;
	double		t0 = now_s(),
				t1,
				t2;
	int32_t		n = in->nent;
	int64_t		npp = in->ppoff[n];
	int			maxb = std::min(std::max(in->max_body, 1), 3);
	std::vector<int64_t> d2(n), need(n);
	std::vector<int32_t> order(n), xs1;
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
	sf.in = in;
	if (in->stop != NULL)
	{
		if (!sf.start(in, errmsg, errlen))
			return 1;
		run.stop = sf.dev;
		run.stop_host = sf.mapped_dev();
	}

	/* each x's frontier bound */
	md_need(n, in->aoff, in->nb, in->ppoff, maxb, d2.data(), need.data());
	for (int32_t x = 0; x < n; x++)
		order[x] = x;
	std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t c) { return need[a] > need[c]; });
	for (int32_t x : order)
	{
		bool		head = false;

		for (int64_t k = in->aoff[x]; k < in->aoff[x + 1] && !head; k++)
			head = (in->sig[k] & 1) == 0 && (in->target < 0 || in->sig[k] == 2 * in->target);
		if (head)
			xs1.push_back(x);
	}
	t1 = now_s();
	seconds[2] = t1 - t0;

	/*
	 * pass 1: support in a hash table, grown and rerun while too full; the
	 * first size from the graph (32 slots a link, at most a quarter of the
	 * free memory)
	 */
	std::vector<GdlMineDevCand> cand;
	uint64_t	cap0 = 1ull << 22;
	{
		size_t		freeb = 0,
					totalb = 0;

		if (cu_msg_failed(cudaMemGetInfo(&freeb, &totalb), "memory info", errmsg, errlen))
			return 1;
		while (cap0 < (uint64_t) in->nlinks * 32 && cap0 * 2 * 16 <= freeb / 4)
			cap0 *= 2;
	}
	for (uint64_t cap = cap0; ; cap *= 4)
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

		CuBufs		hb;

		if (!hb.alloc(&hk, sizeof(ull) * cap, errmsg, errlen) ||
			!hb.alloc(&hv, sizeof(ull) * cap, errmsg, errlen) ||
			!hb.alloc(&hu, sizeof(ull), errmsg, errlen) ||
			cu_msg_failed(cudaMemset(hk, 0, sizeof(ull) * cap), "memset", errmsg, errlen) ||
			cu_msg_failed(cudaMemset(hv, 0, sizeof(ull) * cap), "memset", errmsg, errlen) ||
			cu_msg_failed(cudaMemset(hu, 0, sizeof(ull)), "memset", errmsg, errlen) ||
			cu_msg_failed(cudaMemset(derr, 0, sizeof(int)), "memset", errmsg, errlen))
			return 1;
		run.pass = 1;
		run.hkeys = hk;
		run.hvals = hv;
		run.hmask = cap - 1;
		run.hused = hu;
		run.hlimit = cap / 2;
		if (!run_pass(hb, run, xs1, maxb, in->aoff, in->sig, need, sf, errmsg, errlen) ||
			cu_msg_failed(cudaMemcpy(&herr, derr, sizeof(int), cudaMemcpyDeviceToHost), "download", errmsg, errlen))
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
		if (cu_msg_failed(cudaGetLastError(), "flag kernel", errmsg, errlen) ||
			cu_msg_failed(cub::DeviceSelect::Flagged(tmp, tmpb, hk, flag, sk, nsel, (int64_t) cap), "select", errmsg, errlen) ||
			!hb.alloc((char **) &tmp, tmpb, errmsg, errlen) ||
			cu_msg_failed(cub::DeviceSelect::Flagged(tmp, tmpb, hk, flag, sk, nsel, (int64_t) cap), "select", errmsg, errlen) ||
			cu_msg_failed(cub::DeviceSelect::Flagged(tmp, tmpb, hv, flag, sv, nsel, (int64_t) cap), "select", errmsg, errlen) ||
			cu_msg_failed(cudaMemcpy(&nsel_h, nsel, sizeof(int64_t), cudaMemcpyDeviceToHost), "download", errmsg, errlen))
			return 1;
		/*
		 * sorted by (body key, head) on the device: a pair is key << HEAD_BITS
		 * | head under the set bit every selected slot has, so its order is
		 * the candidates' (a host sort of tens of millions took seconds, in
		 * which a stop request was not seen)
		 */
		ull		   *sk2 = NULL,
				   *sv2 = NULL;
		void	   *stmp = NULL;
		size_t		stmpb = 0;

		if (sf.poll())
		{
			snprintf(errmsg, errlen, "cancelled");
			return 1;
		}
		if (nsel_h > 0 &&
			(!hb.alloc(&sk2, sizeof(ull) * nsel_h, errmsg, errlen) ||
			 !hb.alloc(&sv2, sizeof(ull) * nsel_h, errmsg, errlen) ||
			 cu_msg_failed(cub::DeviceRadixSort::SortPairs(stmp, stmpb, sk, sk2, sv, sv2, nsel_h, 0, 63),
					   "sort", errmsg, errlen) ||
			 !hb.alloc((char **) &stmp, stmpb, errmsg, errlen) ||
			 cu_msg_failed(cub::DeviceRadixSort::SortPairs(stmp, stmpb, sk, sk2, sv, sv2, nsel_h, 0, 63),
					   "sort", errmsg, errlen) ||
			 !wait_kernels(sf, "sort", errmsg, errlen)))
			return 1;

		std::vector<ull> ks(nsel_h), vs(nsel_h);

		if (nsel_h > 0 &&
			(cu_msg_failed(cudaMemcpy(ks.data(), sk2, sizeof(ull) * nsel_h, cudaMemcpyDeviceToHost), "download", errmsg, errlen) ||
			 cu_msg_failed(cudaMemcpy(vs.data(), sv2, sizeof(ull) * nsel_h, cudaMemcpyDeviceToHost), "download", errmsg, errlen)))
			return 1;
		cand.resize(nsel_h);
		for (int64_t i = 0; i < nsel_h; i++)
		{
			ull			pair = ks[i] & ~MD_SET_BIT;

			if ((i & ((1 << 20) - 1)) == 0 && i > 0 && sf.poll())
			{
				snprintf(errmsg, errlen, "cancelled");
				return 1;
			}

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
	/* (sorted on the device above) */
	if (sf.poll())
	{
		snprintf(errmsg, errlen, "cancelled");
		return 1;
	}
	if (!cand.empty())
	{
		std::vector<uint64_t> ckey(cand.size());
		std::vector<int32_t> chead(cand.size());
		std::vector<unsigned char> need_p1(2 * (size_t) in->nrels + 1, 0),
					need_p2p(2 * (size_t) in->nrels + 1, 0);
		uint64_t   *bodies = NULL,
				   *p3 = NULL,
				   *pp = NULL;
		int64_t    *bcoff = NULL,
					nbodies = 0,
					np3 = 0,
					npp2 = 0;
		unsigned	shapes = 0;
		ull		   *bcnt,
				   *pcnt;
		bool		ok;

		for (size_t i = 0; i < cand.size(); i++)
		{
			ckey[i] = cand[i].key;
			chead[i] = cand[i].head;
		}
		ok = md_pass2_tables(ckey.data(), (int64_t) cand.size(), in->nrels, &bodies, &bcoff, &nbodies,
							 &p3, &np3, &pp, &npp2, need_p1.data(), need_p2p.data(), &shapes);
		if (ok && sf.poll())
		{
			free(bodies);
			free(p3);
			free(pp);
			free(bcoff);
			snprintf(errmsg, errlen, "cancelled");
			return 1;
		}
		run.pass = 2;
		run.shapes = shapes;
		ok = ok &&
			upload_set(b, bodies, nbodies, &run.bkeys, &run.bidx, &run.bmask, errmsg, errlen) &&
			upload_set(b, p3, np3, &run.p3keys, NULL, &run.p3mask, errmsg, errlen) &&
			upload_set(b, pp, npp2, &run.ppkeys, NULL, &run.ppmask, errmsg, errlen) &&
			b.up((const int64_t *) bcoff, nbodies + 1, &run.bcoff, errmsg, errlen) &&
			b.up(chead.data(), (int64_t) chead.size(), &run.chead, errmsg, errlen) &&
			b.up(need_p1.data(), (int64_t) need_p1.size(), &run.need_p1, errmsg, errlen) &&
			b.up(need_p2p.data(), (int64_t) need_p2p.size(), &run.need_p2p, errmsg, errlen) &&
			b.alloc(&bcnt, sizeof(ull) * nbodies, errmsg, errlen) &&
			b.alloc(&pcnt, sizeof(ull) * cand.size(), errmsg, errlen) &&
			!cu_msg_failed(cudaMemset(bcnt, 0, sizeof(ull) * nbodies), "memset", errmsg, errlen) &&
			!cu_msg_failed(cudaMemset(pcnt, 0, sizeof(ull) * cand.size()), "memset", errmsg, errlen) &&
			!cu_msg_failed(cudaMemset(derr, 0, sizeof(int)), "memset", errmsg, errlen);
		free(bodies);
		free(p3);
		free(pp);
		if (!ok)
		{
			free(bcoff);
			if (!errmsg[0])
				snprintf(errmsg, errlen, "out of host memory");
			return 1;
		}
		run.bcnt = bcnt;
		run.pcnt = pcnt;
		if (!run_pass(b, run, order, maxb, in->aoff, in->sig, need, sf, errmsg, errlen) ||
			cu_msg_failed(cudaMemcpy(&herr, derr, sizeof(int), cudaMemcpyDeviceToHost), "download", errmsg, errlen))
			return 1;
		if (herr != 0)
		{
			snprintf(errmsg, errlen, "a frontier outgrew its bound");
			return 1;
		}
		std::vector<ull> hb(nbodies), hp(cand.size());

		if (cu_msg_failed(cudaMemcpy(hb.data(), bcnt, sizeof(ull) * hb.size(), cudaMemcpyDeviceToHost), "download", errmsg, errlen) ||
			cu_msg_failed(cudaMemcpy(hp.data(), pcnt, sizeof(ull) * hp.size(), cudaMemcpyDeviceToHost), "download", errmsg, errlen))
			return 1;
		for (int64_t bi = 0; bi < nbodies; bi++)
			for (int64_t i = bcoff[bi]; i < bcoff[bi + 1]; i++)
			{
				if ((i & ((1 << 20) - 1)) == 0 && sf.poll())
				{
					free(bcoff);
					snprintf(errmsg, errlen, "cancelled");
					return 1;
				}
				cand[i].body_size = (int64_t) hb[bi];
				cand[i].pca_body_size = (int64_t) hp[i];
			}
		free(bcoff);
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
		if ((i & ((1 << 20) - 1)) == 0 && sf.poll())
		{
			free(*out);
			*out = NULL;
			snprintf(errmsg, errlen, "cancelled");
			return 1;
		}
		(*out)[i] = cand[i];
		(*out)[i].key = md_host_key(cand[i].key);
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
