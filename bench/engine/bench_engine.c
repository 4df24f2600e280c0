/*
 * bench_engine.c — standalone benchmark of the planner + engine + backend:
 * loads an edge list (tab-separated pairs of integers), runs transitive
 * closure or same generation through gdl_run, and prints tuples,
 * iterations, seconds, the per-phase breakdown and peak memory.
 *
 *   bench_engine [--program tc|tc-nl|tc-nl-as-written|sg] [--threads N] [--repeat N]
 *                [--device cpu|gpu --cuda-lib path/to/gpudl_cuda.so]
 *                [--memory-limit MB] [--host-limit MB] graph.txt
 *
 * --memory-limit sets GdlRunInput.memory_limit (what gpudl.device_memory_limit
 * and, on the CPU, gpudl.host_memory_limit give the engine): joins whose
 * output would not fit run in slices.  --host-limit does what
 * gpudl.host_memory_limit does for a CPU run: the host allocator raises out
 * of memory past it, and the engine counts the host's bytes against it.
 * The line printed ends with the peak backend bytes per result tuple, the
 * slices run and the host's peak (all gdl_alloc'ed bytes).
 *
 * With --device gpu the CUDA backend module is dlopen'ed and registered
 * through gdl_backend_register, as the PostgreSQL layer does.
 *
 * Issue 14: --partitions N (gpudl.partitions), --devices 0,1 (gpudl.devices)
 * and --part-min-rows N (tables under it are replicated) run the fixpoint
 * partitioned; one "part=" line per partition (device, tuples owned, MB
 * sent and received, exchange ms, peak MB) comes before the result line,
 * which then ends with parts=, xchg_mb= (all partitions' sent bytes) and
 * xchg_ms= (the slowest partition's exchange time).
 */
#include "../../test/unit/test_host.h"

#include <dlfcn.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "../../src/exec/gdl_backend.h"
#include "../../src/exec/gdl_engine.h"
#include "../common/gpu_load.h"
#include "../../src/exec/gdl_part.h"

static int64_t *edge_src;
static int64_t *edge_dst;
static int64_t nedges;

static const GdlType edge_types[2] = {GDL_TYPE_INT, GDL_TYPE_INT};
static const char *const edge_cols[2] = {"a", "b"};
static const char *const edge_typn[2] = {"int4", "int4"};

/* Read "src<TAB>dst" lines; '#' lines are comments. */
static void
read_graph(const char *path)
{
	FILE	   *f = fopen(path, "r");
	char		line[256];
	int64_t		cap = 1 << 16;

	if (f == NULL)
	{
		perror(path);
		exit(2);
	}
	edge_src = malloc(sizeof(int64_t) * cap);
	edge_dst = malloc(sizeof(int64_t) * cap);
	while (fgets(line, sizeof(line), f))
	{
		long long	a,
					b;

		if (line[0] == '#' || sscanf(line, "%lld %lld", &a, &b) != 2)
			continue;
		if (nedges == cap)
		{
			cap *= 2;
			edge_src = realloc(edge_src, sizeof(int64_t) * cap);
			edge_dst = realloc(edge_dst, sizeof(int64_t) * cap);
		}
		edge_src[nedges] = a;
		edge_dst[nedges] = b;
		nedges++;
	}
	fclose(f);
}

/* The one table: edge(int, int). */
static bool
resolve(void *arg, const char *name, GdlRelInfo *out)
{
	if (strcmp(name, "edge") != 0)
		return false;
	out->relid = 1;
	out->display_name = (char *) "edge";
	out->ncols = 2;
	out->types = (GdlType *) edge_types;
	out->colnames = (char **) edge_cols;
	out->typnames = (char **) edge_typn;
	return true;
}

/* Hand the edges to the engine. */
static void
load_edb(void *arg, const GdlPred *pred, GdlDict *dict, GdlColumns *out)
{
	out->ncols = 2;
	out->nrows = (size_t) nedges;
	out->cols = gdl_alloc(sizeof(int64_t *) * 2);
	out->cols[0] = gdl_alloc(sizeof(int64_t) * (nedges + 1));
	out->cols[1] = gdl_alloc(sizeof(int64_t) * (nedges + 1));
	memcpy(out->cols[0], edge_src, sizeof(int64_t) * nedges);
	memcpy(out->cols[1], edge_dst, sizeof(int64_t) * nedges);
}

/* GdlRunInput.memory_held under --host-limit: every byte the host holds. */
static int64_t
host_held(void *arg)
{
	return (int64_t) gdl_test_live_bytes();
}

/* Seconds of a monotonic clock. */
static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* An option that stores its value: a string, an int or an int64. */
typedef struct ValueOpt
{
	const char *name;
	char		kind;			/* 's', 'i' or 'l' */
	void	   *dst;
} ValueOpt;

/* Store val at the option of opts (ended by a NULL name) called name; false: none is. */
static bool
set_value_opt(const ValueOpt *opts, const char *name, const char *val)
{
	for (; opts->name != NULL; opts++)
	{
		if (strcmp(opts->name, name) != 0)
			continue;
		if (opts->kind == 's')
			*(const char **) opts->dst = val;
		else if (opts->kind == 'i')
			*(int *) opts->dst = atoi(val);
		else
			*(int64_t *) opts->dst = atoll(val);
		return true;
	}
	return false;
}

int
main(int argc, char **argv)
{
	static const char *program = "tc";
	static const char *graph = NULL;
	static const char *cuda_lib = NULL;
	static GdlDevice device = GDL_DEVICE_CPU;
	static int64_t memory_limit_mb = 0,
				host_limit_mb = 0;
	static int	threads = 0,
				partitions = 0,
				repeat = 1,
				r;
	int			i;
	static const char *src;
	static GdlProgram *prog;
	static GdlAnalysis *a;
	static GdlPlan *plan;
	static GdlRunInput in;
	static GdlGoal goal;
	GdlError   *err;
	struct rusage ru;
	static const ValueOpt value_opts[] = {
		{"--program", 's', &program}, {"--cuda-lib", 's', &cuda_lib},
		{"--threads", 'i', &threads}, {"--repeat", 'i', &repeat}, {"--partitions", 'i', &partitions},
		{"--memory-limit", 'l', &memory_limit_mb}, {"--host-limit", 'l', &host_limit_mb},
		{NULL, 0, NULL}
	};

	for (i = 1; i < argc; i++)
	{
		if (i + 1 < argc && set_value_opt(value_opts, argv[i], argv[i + 1]))
			i++;
		else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
		{
			i++;
			device = strcmp(argv[i], "gpu") == 0 ? GDL_DEVICE_GPU : GDL_DEVICE_CPU;
		}
		else if (strcmp(argv[i], "--part-min-rows") == 0 && i + 1 < argc)
			gdl_engine_set_part_min_rows(atoll(argv[++i]));
		else if (strcmp(argv[i], "--devices") == 0 && i + 1 < argc)
		{
			int			ids[GDL_PART_MAX];
			int			n = gdl_part_parse_devices(argv[++i], ids);

			if (n < 0)
			{
				fprintf(stderr, "bad --devices %s\n", argv[i]);
				return 2;
			}
			gdl_engine_set_devices(ids, n);
		}
		else
			graph = argv[i];
	}
	if (graph == NULL)
	{
		fprintf(stderr, "usage: %s [--program tc|tc-nl|tc-nl-as-written|sg] [--threads N] [--repeat N] "
				"[--device cpu|gpu --cuda-lib lib.so] [--memory-limit MB] [--host-limit MB] "
				"[--partitions N] [--devices all|0,1] [--part-min-rows N] graph.txt\n", argv[0]);
		return 2;
	}
	if (strcmp(program, "tc") == 0)
		src = "path(X, Y) :- edge(X, Y). path(X, Z) :- path(X, Y), edge(Y, Z).";
	else if (strcmp(program, "tc-nl") == 0 || strcmp(program, "tc-nl-as-written") == 0)
	{
		/* tc-nl is made linear by the analysis; tc-nl-as-written runs the non-linear rounds */
		src = "path(X, Y) :- edge(X, Y). path(X, Z) :- path(X, Y), path(Y, Z).";
		gdl_linearize_closures = strcmp(program, "tc-nl") == 0;
	}
	else if (strcmp(program, "sg") == 0)
		src = "sg(X, Y) :- edge(P, X), edge(P, Y), X != Y. sg(X, Y) :- edge(A, X), sg(A, B), edge(B, Y).";
	else
	{
		fprintf(stderr, "unknown program %s\n", program);
		return 2;
	}
	gdl_test_host_install();
	if (device == GDL_DEVICE_GPU)
		bench_load_gpu(cuda_lib ? cuda_lib : "./gpudl_cuda.so");
	gdl_engine_set_threads(threads);
	gdl_engine_set_partitions(partitions);
	read_graph(graph);

	err = GDL_TRY(prog = gdl_parse(src); a = gdl_analyze(prog, resolve, NULL); plan = gdl_plan_compile(a));
	if (err)
	{
		fprintf(stderr, "error: %s\n", err->message);
		return 1;
	}
	memset(&in, 0, sizeof(in));
	in.load_edb = load_edb;
	in.device = device;
	in.max_iterations = 100000;
	in.want_rows = false;
	in.memory_limit = memory_limit_mb * 1024 * 1024;
	if (host_limit_mb > 0)
	{
		gdl_test_set_limit((size_t) host_limit_mb << 20);
		in.memory_limit = host_limit_mb << 20;
		in.memory_held = host_held;
	}
	memset(&goal, 0, sizeof(goal));
	goal.pred = gdl_analysis_find_pred(a, strcmp(program, "sg") == 0 ? "sg" : "path");

	for (r = 0; r < repeat; r++)
	{
		static GdlResult *res;
		char	   *parts_tail;
		GdlDict    *dict = gdl_dict_create();
		double		t0 = now_s(),
					c0,
					secs;
		struct rusage r0;

		gdl_test_reset_peak();
		getrusage(RUSAGE_SELF, &r0);
		c0 = r0.ru_utime.tv_sec + r0.ru_utime.tv_usec / 1e6 + r0.ru_stime.tv_sec + r0.ru_stime.tv_usec / 1e6;
		err = GDL_TRY(res = gdl_run(plan, &in, dict, &goal));
		secs = now_s() - t0;
		if (err)
		{
			fprintf(stderr, "error: %s\n", err->message);
			return 1;
		}
		getrusage(RUSAGE_SELF, &ru);
		{
			double		xchg_mb = 0,
						xchg_ms = 0;
			int			q;

			for (q = 0; q < res->stats.nparts; q++)
			{
				const GdlPartStats *ps = &res->stats.parts[q];

				printf("part=%d device=%d tuples=%lld sent_mb=%.1f received_mb=%.1f xchg_ms=%.0f peak_mb=%.0f\n",
					   q, ps->device, (long long) ps->tuples, ps->bytes_sent / 1048576.0,
					   ps->bytes_received / 1048576.0, ps->ms_exchange, ps->peak_bytes / 1048576.0);
				xchg_mb += ps->bytes_sent / 1048576.0;
				if (ps->ms_exchange > xchg_ms)
					xchg_ms = ps->ms_exchange;
			}
			parts_tail = gdl_sprintf(" parts=%d xchg_mb=%.1f xchg_ms=%.0f", res->stats.nparts, xchg_mb,
									 xchg_ms);
		}
		printf("graph=%s program=%s device=%s threads=%d edges=%lld tuples=%lld iterations=%lld "
			   "seconds=%.3f cpu_seconds=%.3f load_ms=%.0f join_ms=%.0f dedup_ms=%.0f difference_ms=%.0f merge_ms=%.0f "
			   "backend_peak_mb=%.0f peak_rss_mb=%.0f bytes_per_tuple=%.1f batches=%lld host_peak_mb=%.0f%s\n",
			   strrchr(graph, '/') ? strrchr(graph, '/') + 1 : graph, program,
			   res->stats.backend, threads, (long long) nedges, (long long) res->count,
			   (long long) res->stats.iterations, secs,
			   ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6 - c0,
			   res->stats.ms_load, res->stats.ms_join,
			   res->stats.ms_dedup, res->stats.ms_difference, res->stats.ms_merge,
			   res->stats.peak_bytes / 1048576.0, ru.ru_maxrss / 1024.0,
			   res->count > 0 ? (double) res->stats.peak_bytes / (double) res->count : 0.0,
			   (long long) res->stats.batches, gdl_test_peak_bytes() / 1048576.0, parts_tail);
		fflush(stdout);
		gdl_free(res);
		gdl_free(dict);
	}
	return 0;
}
