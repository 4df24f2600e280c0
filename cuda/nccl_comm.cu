/*
 * nccl_comm.cu — the device exchange of partitioned runs over NCCL (issue
 * 14): one communicator over the GPUs of one host (ncclCommInitAll, one
 * process, a stream per device), an all-to-all of rows done as NCCL does
 * it — counts first (each device sends every peer how many values follow),
 * then the values, each as one group of ncclSend/ncclRecv per peer between
 * ncclGroupStart and ncclGroupEnd — and the fixpoint test, one
 * ncclAllReduce of the per-device delta sizes.
 *
 * libnccl is loaded with dlopen on first use (libnccl.so.2, or
 * GDL_NCCL_LIB), so the module needs NCCL only where several GPUs are
 * used; nothing links against it.  The types come from nccl.h when the
 * toolkit has it (CUDA 13 ships it), else from the few stable definitions
 * below.
 *
 * Exported C API (looked up with dlsym; the engine's host exchange,
 * src/exec/exec_part_xchg.c, is what partitioned runs use today):
 *   gdl_nccl_open / gdl_nccl_close, gdl_nccl_alltoall, gdl_nccl_allreduce_sum,
 *   gdl_nccl_selftest (test/unit/test_nccl.c: runs with >= 2 GPUs).
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <dlfcn.h>
#include <vector>

#include <cuda_runtime.h>

#if defined(__has_include)
#if __has_include(<nccl.h>)
#include <nccl.h>
#define GDL_HAVE_NCCL_H 1
#endif
#endif

#ifndef GDL_HAVE_NCCL_H
/* The few NCCL definitions used here (stable across NCCL 2.x). */
typedef struct ncclComm *ncclComm_t;
typedef enum
{
	ncclSuccess = 0
} ncclResult_t;
typedef enum
{
	ncclInt64 = 4
} ncclDataType_t;
typedef enum
{
	ncclSum = 0
} ncclRedOp_t;
#endif

#define NC_EXPORT extern "C" __attribute__((visibility("default")))
#define NC_MAX_DEV 64

/* The NCCL entry points, from dlopen. */
typedef struct NcclApi
{
	void	   *lib;
	ncclResult_t (*CommInitAll) (ncclComm_t *, int, const int *);
	ncclResult_t (*CommDestroy) (ncclComm_t);
	ncclResult_t (*GroupStart) (void);
	ncclResult_t (*GroupEnd) (void);
	ncclResult_t (*Send) (const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
	ncclResult_t (*Recv) (void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
	ncclResult_t (*AllReduce) (const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
							   ncclComm_t, cudaStream_t);
	const char *(*GetErrorString) (ncclResult_t);
} NcclApi;

static NcclApi g_nccl;

/* A communicator over ndev GPUs of this host. */
typedef struct GdlNccl
{
	int			ndev;
	int			dev[NC_MAX_DEV];
	ncclComm_t	comm[NC_MAX_DEV];
	cudaStream_t stream[NC_MAX_DEV];
	int64_t    *dcounts[NC_MAX_DEV];	/* 2 * ndev int64 per device: sent, received counts */
} GdlNccl;

/* Load libnccl once; NULL on success, else why not. */
static const char *
nccl_load(void)
{
	static char why[512];
	const char *path = getenv("GDL_NCCL_LIB");

	if (g_nccl.lib)
		return nullptr;
	if (!path || !*path)
		path = "libnccl.so.2";
	void	   *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h)
	{
		snprintf(why, sizeof(why), "cannot load %s: %s", path, dlerror());
		return why;
	}
#define NC_SYM(field, name) \
	if (!(*(void **) &g_nccl.field = dlsym(h, name))) \
	{ \
		snprintf(why, sizeof(why), "%s has no %s", path, name); \
		dlclose(h); \
		return why; \
	}
	NC_SYM(CommInitAll, "ncclCommInitAll");
	NC_SYM(CommDestroy, "ncclCommDestroy");
	NC_SYM(GroupStart, "ncclGroupStart");
	NC_SYM(GroupEnd, "ncclGroupEnd");
	NC_SYM(Send, "ncclSend");
	NC_SYM(Recv, "ncclRecv");
	NC_SYM(AllReduce, "ncclAllReduce");
	NC_SYM(GetErrorString, "ncclGetErrorString");
#undef NC_SYM
	g_nccl.lib = h;
	return nullptr;
}

static void
set_err(char *err, size_t errlen, const char *what, const char *msg)
{
	if (err && errlen > 0)
		snprintf(err, errlen, "%s: %s", what, msg);
}

#define NC_CHECK(call, what) \
	do { \
		ncclResult_t r_ = (call); \
		if (r_ != ncclSuccess) \
		{ \
			set_err(err, errlen, what, g_nccl.GetErrorString(r_)); \
			return -1; \
		} \
	} while (0)

#define CU_CHECK(call, what) \
	do { \
		cudaError_t e_ = (call); \
		if (e_ != cudaSuccess) \
		{ \
			set_err(err, errlen, what, cudaGetErrorString(e_)); \
			(void) cudaGetLastError(); \
			return -1; \
		} \
	} while (0)

/* Release a communicator (NULL is ignored). */
NC_EXPORT void
gdl_nccl_close(GdlNccl *h)
{
	if (!h)
		return;
	for (int d = 0; d < h->ndev; d++)
	{
		(void) cudaSetDevice(h->dev[d]);
		if (h->dcounts[d])
			(void) cudaFree(h->dcounts[d]);
		if (h->stream[d])
			(void) cudaStreamDestroy(h->stream[d]);
		if (h->comm[d] && g_nccl.CommDestroy)
			(void) g_nccl.CommDestroy(h->comm[d]);
	}
	(void) cudaGetLastError();
	free(h);
}

/*
 * One communicator over GPUs devs[0..ndev): NULL with the reason in err
 * when NCCL cannot be loaded or initialised.
 */
NC_EXPORT GdlNccl *
gdl_nccl_open(int ndev, const int *devs, char *err, size_t errlen)
{
	const char *why = nccl_load();
	GdlNccl    *h;

	if (why)
	{
		set_err(err, errlen, "NCCL", why);
		return nullptr;
	}
	if (ndev < 1 || ndev > NC_MAX_DEV)
	{
		set_err(err, errlen, "NCCL", "bad device count");
		return nullptr;
	}
	h = (GdlNccl *) calloc(1, sizeof(GdlNccl));
	if (!h)
	{
		set_err(err, errlen, "NCCL", "out of host memory");
		return nullptr;
	}
	h->ndev = ndev;
	memcpy(h->dev, devs, sizeof(int) * ndev);
	{
		ncclResult_t r = g_nccl.CommInitAll(h->comm, ndev, devs);

		if (r != ncclSuccess)
		{
			set_err(err, errlen, "ncclCommInitAll", g_nccl.GetErrorString(r));
			memset(h->comm, 0, sizeof(h->comm));
			gdl_nccl_close(h);
			return nullptr;
		}
	}
	for (int d = 0; d < ndev; d++)
	{
		cudaError_t e = cudaSetDevice(devs[d]);

		if (e == cudaSuccess)
			e = cudaStreamCreateWithFlags(&h->stream[d], cudaStreamNonBlocking);
		if (e == cudaSuccess)
			e = cudaMalloc((void **) &h->dcounts[d], sizeof(int64_t) * 2 * ndev);
		if (e != cudaSuccess)
		{
			set_err(err, errlen, "CUDA", cudaGetErrorString(e));
			(void) cudaGetLastError();
			gdl_nccl_close(h);
			return nullptr;
		}
	}
	return h;
}

/*
 * All-to-all of int64 values between the devices.  Device d sends
 * sendcounts[d * P + q] values to peer q, read from send[d] (device memory
 * of GPU d, the blocks for peers 0..P-1 one after the other).  On return
 * recv[d] is a new cudaMalloc'ed buffer of GPU d (caller frees; NULL when
 * nothing arrived) holding the blocks from peers 0..P-1 in order, and
 * recvcounts[d * P + q] how many values came from q.  Counts travel first
 * (one group of 1-value sends), then the values (one group).  0, or -1
 * with a message in err.
 */
NC_EXPORT int
gdl_nccl_alltoall(GdlNccl *h, const int64_t *const *send, const int64_t *sendcounts,
				  int64_t **recv, int64_t *recvcounts, char *err, size_t errlen)
{
	int			P = h->ndev;

	/* the counts */
	for (int d = 0; d < P; d++)
	{
		CU_CHECK(cudaSetDevice(h->dev[d]), "cudaSetDevice");
		CU_CHECK(cudaMemcpyAsync(h->dcounts[d], sendcounts + (size_t) d * P, sizeof(int64_t) * P,
								 cudaMemcpyHostToDevice, h->stream[d]), "counts to device");
	}
	NC_CHECK(g_nccl.GroupStart(), "ncclGroupStart");
	for (int d = 0; d < P; d++)
		for (int q = 0; q < P; q++)
		{
			NC_CHECK(g_nccl.Send(h->dcounts[d] + q, 1, ncclInt64, q, h->comm[d], h->stream[d]), "ncclSend");
			NC_CHECK(g_nccl.Recv(h->dcounts[d] + P + q, 1, ncclInt64, q, h->comm[d], h->stream[d]), "ncclRecv");
		}
	NC_CHECK(g_nccl.GroupEnd(), "ncclGroupEnd");
	for (int d = 0; d < P; d++)
	{
		CU_CHECK(cudaSetDevice(h->dev[d]), "cudaSetDevice");
		CU_CHECK(cudaMemcpyAsync(recvcounts + (size_t) d * P, h->dcounts[d] + P, sizeof(int64_t) * P,
								 cudaMemcpyDeviceToHost, h->stream[d]), "counts to host");
		CU_CHECK(cudaStreamSynchronize(h->stream[d]), "counts");
	}
	/* room for what arrives */
	for (int d = 0; d < P; d++)
	{
		int64_t		tot = 0;

		recv[d] = nullptr;
		for (int q = 0; q < P; q++)
			tot += recvcounts[(size_t) d * P + q];
		if (tot == 0)
			continue;
		CU_CHECK(cudaSetDevice(h->dev[d]), "cudaSetDevice");
		CU_CHECK(cudaMalloc((void **) &recv[d], sizeof(int64_t) * tot), "receive buffer");
	}
	/* the values */
	NC_CHECK(g_nccl.GroupStart(), "ncclGroupStart");
	for (int d = 0; d < P; d++)
	{
		int64_t		soff = 0,
					roff = 0;

		for (int q = 0; q < P; q++)
		{
			int64_t		ns = sendcounts[(size_t) d * P + q],
						nr = recvcounts[(size_t) d * P + q];

			if (ns > 0)
				NC_CHECK(g_nccl.Send(send[d] + soff, (size_t) ns, ncclInt64, q, h->comm[d], h->stream[d]),
						 "ncclSend");
			if (nr > 0)
				NC_CHECK(g_nccl.Recv(recv[d] + roff, (size_t) nr, ncclInt64, q, h->comm[d], h->stream[d]),
						 "ncclRecv");
			soff += ns;
			roff += nr;
		}
	}
	NC_CHECK(g_nccl.GroupEnd(), "ncclGroupEnd");
	for (int d = 0; d < P; d++)
	{
		CU_CHECK(cudaSetDevice(h->dev[d]), "cudaSetDevice");
		CU_CHECK(cudaStreamSynchronize(h->stream[d]), "exchange");
	}
	return 0;
}

/*
 * The fixpoint test: the sum over devices of values[d] (each device's new
 * tuples), by one ncclAllReduce; every device gets the sum, *total is
 * device 0's.  0, or -1 with a message in err.
 */
NC_EXPORT int
gdl_nccl_allreduce_sum(GdlNccl *h, const int64_t *values, int64_t *total, char *err, size_t errlen)
{
	int			P = h->ndev;

	for (int d = 0; d < P; d++)
	{
		CU_CHECK(cudaSetDevice(h->dev[d]), "cudaSetDevice");
		CU_CHECK(cudaMemcpyAsync(h->dcounts[d], values + d, sizeof(int64_t), cudaMemcpyHostToDevice,
								 h->stream[d]), "value to device");
	}
	NC_CHECK(g_nccl.GroupStart(), "ncclGroupStart");
	for (int d = 0; d < P; d++)
		NC_CHECK(g_nccl.AllReduce(h->dcounts[d], h->dcounts[d] + 1, 1, ncclInt64, ncclSum, h->comm[d],
								  h->stream[d]), "ncclAllReduce");
	NC_CHECK(g_nccl.GroupEnd(), "ncclGroupEnd");
	for (int d = 0; d < P; d++)
	{
		int64_t		v = 0;

		CU_CHECK(cudaSetDevice(h->dev[d]), "cudaSetDevice");
		CU_CHECK(cudaMemcpyAsync(&v, h->dcounts[d] + 1, sizeof(int64_t), cudaMemcpyDeviceToHost,
								 h->stream[d]), "sum to host");
		CU_CHECK(cudaStreamSynchronize(h->stream[d]), "allreduce");
		if (d == 0)
			*total = v;
		else if (v != *total)
		{
			set_err(err, errlen, "ncclAllReduce", "devices disagree on the sum");
			return -1;
		}
	}
	return 0;
}

/* The owner of a value among P devices (the engine's part_owner mix). */
static int
owner_of(int64_t v, int P)
{
	uint64_t	x = (uint64_t) v;

	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return (int) (x % (uint64_t) P);
}

/*
 * Self-test on every GPU of the host: each device holds rows 0..n-1 of its
 * own numbers, sends each to its owner, and every device checks it got
 * exactly the values it owns; then the all-reduce of the devices' counts.
 * Returns 0 (passed), 1 (skipped: fewer than 2 GPUs, or no NCCL; msg says
 * why) or -1 (failed; msg says how).
 */
NC_EXPORT int
gdl_nccl_selftest(char *msg, size_t msglen)
{
	int			ndev = 0;
	int			devs[NC_MAX_DEV];
	char		err[512] = "";
	size_t		errlen = sizeof(err);
	GdlNccl    *h;
	const int64_t n = 100000;
	int			rc = 0;

	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 2)
	{
		(void) cudaGetLastError();
		snprintf(msg, msglen, "%d GPU%s: the NCCL exchange needs 2 or more", ndev, ndev == 1 ? "" : "s");
		return 1;
	}
	if (ndev > NC_MAX_DEV)
		ndev = NC_MAX_DEV;
	for (int d = 0; d < ndev; d++)
		devs[d] = d;
	h = gdl_nccl_open(ndev, devs, err, errlen);
	if (!h)
	{
		snprintf(msg, msglen, "%s", err);
		return g_nccl.lib ? -1 : 1;
	}
	{
		int			P = ndev;
		std::vector < int64_t > sendcounts((size_t) P * P, 0), recvcounts((size_t) P * P, 0);
		std::vector < int64_t * >dsend(P, nullptr), drecv(P, nullptr);
		std::vector < std::vector < int64_t > >expect(P);
		int64_t		total = 0;
		std::vector < int64_t > mine(P, 0);

		for (int d = 0; d < P && rc == 0; d++)
		{
			std::vector < std::vector < int64_t > >byowner(P);
			std::vector < int64_t > flat;

			for (int64_t i = 0; i < n; i++)
			{
				int64_t		v = (int64_t) d * n + i;
				int			o = owner_of(v, P);

				byowner[o].push_back(v);
				expect[o].push_back(v);
			}
			for (int q = 0; q < P; q++)
			{
				sendcounts[(size_t) d * P + q] = (int64_t) byowner[q].size();
				flat.insert(flat.end(), byowner[q].begin(), byowner[q].end());
			}
			if (cudaSetDevice(d) != cudaSuccess ||
				cudaMalloc((void **) &dsend[d], sizeof(int64_t) * flat.size()) != cudaSuccess ||
				cudaMemcpy(dsend[d], flat.data(), sizeof(int64_t) * flat.size(), cudaMemcpyHostToDevice) != cudaSuccess)
			{
				snprintf(msg, msglen, "CUDA: %s", cudaGetErrorString(cudaGetLastError()));
				rc = -1;
			}
		}
		if (rc == 0 && gdl_nccl_alltoall(h, dsend.data(), sendcounts.data(), drecv.data(),
										 recvcounts.data(), err, errlen) != 0)
		{
			snprintf(msg, msglen, "%s", err);
			rc = -1;
		}
		for (int d = 0; d < P && rc == 0; d++)
		{
			int64_t		got = 0;

			for (int q = 0; q < P; q++)
				got += recvcounts[(size_t) d * P + q];
			std::vector < int64_t > host(got > 0 ? got : 1);
			if (got > 0)
			{
				(void) cudaSetDevice(d);
				(void) cudaMemcpy(host.data(), drecv[d], sizeof(int64_t) * got, cudaMemcpyDeviceToHost);
			}
			if (got != (int64_t) expect[d].size())
			{
				snprintf(msg, msglen, "GPU %d received %lld values, owns %lld", d, (long long) got,
						 (long long) expect[d].size());
				rc = -1;
				break;
			}
			/* blocks arrive from peers in order, each in the sender's order: as expected */
			for (int64_t i = 0; i < got; i++)
				if (host[i] != expect[d][i] || owner_of(host[i], P) != d)
				{
					snprintf(msg, msglen, "GPU %d value %lld: got %lld, expected %lld", d,
							 (long long) i, (long long) host[i], (long long) expect[d][i]);
					rc = -1;
					break;
				}
			mine[d] = got;
		}
		if (rc == 0 && gdl_nccl_allreduce_sum(h, mine.data(), &total, err, errlen) != 0)
		{
			snprintf(msg, msglen, "%s", err);
			rc = -1;
		}
		if (rc == 0 && total != n * P)
		{
			snprintf(msg, msglen, "all-reduce gave %lld, expected %lld", (long long) total,
					 (long long) (n * P));
			rc = -1;
		}
		if (rc == 0)
			snprintf(msg, msglen, "%d GPUs exchanged %lld values; all-reduce %lld", P,
					 (long long) (n * P), (long long) total);
		for (int d = 0; d < P; d++)
		{
			(void) cudaSetDevice(d);
			if (dsend[d])
				(void) cudaFree(dsend[d]);
			if (drecv[d])
				(void) cudaFree(drecv[d]);
		}
		(void) cudaGetLastError();
	}
	gdl_nccl_close(h);
	return rc;
}
