/*
 * test_nccl.c — the NCCL exchange of partitioned runs (issue 14,
 * cuda/nccl_comm.cu) on every GPU of the host: loads cuda/gpudl_cuda.so
 * (path from $GDL_CUDA_LIB, default ../../cuda/gpudl_cuda.so) and runs its
 * self-test: each GPU sends 100000 values to their owners with grouped
 * ncclSend/ncclRecv (counts first), each checks it received exactly what
 * it owns, then one ncclAllReduce of the counts.
 *
 * Needs 2 or more GPUs and libnccl; otherwise (CI, a one-GPU machine) it
 * prints "test_nccl: skipped (<reason>)" and exits 0.
 */
#include "test_host.h"

#include <dlfcn.h>
#include <string.h>

typedef int (*SelfTestFn) (char *msg, size_t msglen);

int
main(void)
{
	const char *path = getenv("GDL_CUDA_LIB");
	void	   *h;
	SelfTestFn	selftest;
	char		msg[512] = "";
	int			rc;

	gdl_test_host_install();
	if (!path || !*path)
		path = "../../cuda/gpudl_cuda.so";
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
	{
		printf("test_nccl: skipped (cannot load %s: %s)\n", path, dlerror());
		return 0;
	}
	selftest = (SelfTestFn) dlsym(h, "gdl_nccl_selftest");
	CHECK_MSG(selftest != NULL, "%s has no gdl_nccl_selftest", path);
	if (!selftest)
		return gdl_test_summary("test_nccl");
	rc = selftest(msg, sizeof(msg));
	if (rc == 1)
	{
		printf("test_nccl: skipped (%s)\n", msg);
		return 0;
	}
	CHECK_MSG(rc == 0, "NCCL self-test failed: %s", msg);
	printf("test_nccl: %s\n", msg);
	return gdl_test_summary("test_nccl");
}
