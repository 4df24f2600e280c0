/*
 * bench/analysis/standalone.c — gpudl's core engine on extract.py's facts
 * without PostgreSQL: parses a .dl file with gpudl's own parser, reads each
 * extensional predicate from FACTS/<name>.tsv (two text columns), runs the
 * CPU engine on each goal predicate and prints its tuples and the median of
 * 3 wall times.  So the rules files are checked by gpudl's parser and the
 * derived sizes on a code base are known before a server runs them (issue 23).
 * GDL_DEVICE=gpu runs the CUDA module instead (GDL_CUDA_LIB, default
 * cuda/gpudl_cuda.so), GDL_THREADS=N the CPU engine on N threads, GDL_BATCH_ROWS=N a join's rows per slice (default 32 Mi).
 *
 *   cc -O2 -std=gnu11 -pthread -o gdl_analysis bench/analysis/standalone.c \
 *      test/unit/test_host.c src/{core,lang,plan,exec,cpu,ilp,mine}/[a-z]*.c -lm -ldl
 *   ./gdl_analysis FACTS_DIR cspa.dl valueFlow memoryAlias valueAlias
 *   DUMP=dir ./gdl_analysis ...   # also write each goal's rows, sorted, as dir/<goal>.tsv
 */
#include "../../test/unit/test_host.h"
#include <string.h>
#include <time.h>
#include "../../src/exec/gdl_engine.h"
#include "../common/gpu_load.h"
#include "../../src/exec/gdl_backend.h"

#include <dlfcn.h>
#include <stdlib.h>

#define MAXT 32

/* One fact table: rows of two strings, read once. */
typedef struct Fact
{
	char	   *name;
	int64_t		n;
	char	  **a;
	char	  **b;
} Fact;

static Fact facts[MAXT];
static int	nfacts;
static const char *facts_dir;
static GdlDevice run_device = GDL_DEVICE_CPU;	/* GDL_DEVICE=gpu: the CUDA module */
static GdlType text2[2] = {GDL_TYPE_TEXT, GDL_TYPE_TEXT};
static char *colnames[2] = {"a", "b"};
static char *typnames[2] = {"text", "text"};

/* The table of predicate 'name', read from its .tsv on first use; NULL if none. */
static Fact *
fact_get(const char *name)
{
	char		path[4096], line[8192];
	FILE	   *fh;
	Fact	   *f;
	int64_t		cap = 1024;
	int			i;

	for (i = 0; i < nfacts; i++)
		if (strcmp(facts[i].name, name) == 0)
			return &facts[i];
	snprintf(path, sizeof(path), "%s/%s.tsv", facts_dir, name);
	if (nfacts == MAXT || (fh = fopen(path, "r")) == NULL)
		return NULL;
	f = &facts[nfacts++];
	f->name = strdup(name);
	f->a = malloc(cap * sizeof(char *));
	f->b = malloc(cap * sizeof(char *));
	while (fgets(line, sizeof(line), fh))
	{
		char	   *tab = strchr(line, '\t'), *nl;

		if (!tab)
			continue;
		*tab = '\0';
		if ((nl = strchr(tab + 1, '\n')))
			*nl = '\0';
		if (f->n == cap)
		{
			cap *= 2;
			f->a = realloc(f->a, cap * sizeof(char *));
			f->b = realloc(f->b, cap * sizeof(char *));
		}
		f->a[f->n] = strdup(line);
		f->b[f->n++] = strdup(tab + 1);
	}
	fclose(fh);
	return f;
}

/* Resolver for gdl_analyze: a predicate is a table when its .tsv exists. */
static bool
resolve(void *arg, const char *name, GdlRelInfo *out)
{
	Fact	   *f = fact_get(name);

	if (!f)
		return false;
	out->relid = 100 + (uint32_t) (f - facts);
	out->display_name = f->name;
	out->ncols = 2;
	out->types = text2;
	out->colnames = colnames;
	out->typnames = typnames;
	return true;
}

/* The engine's EDB loader: the table's strings as dictionary ids. */
static void
load_edb(void *arg, const GdlPred *pred, GdlDict *dict, GdlColumns *out)
{
	Fact	   *f = fact_get(pred->name);
	int64_t		r;

	if (!f)
		gdl_error(GDL_ERR_UNDEFINED, NULL, NULL, "no table %s", pred->name);
	out->ncols = 2;
	out->nrows = f->n;
	out->cols = gdl_alloc(sizeof(int64_t *) * 2);
	out->cols[0] = gdl_alloc(sizeof(int64_t) * (f->n + 1));
	out->cols[1] = gdl_alloc(sizeof(int64_t) * (f->n + 1));
	for (r = 0; r < f->n; r++)
	{
		out->cols[0][r] = gdl_dict_intern(dict, f->a[r], strlen(f->a[r]));
		out->cols[1][r] = gdl_dict_intern(dict, f->b[r], strlen(f->b[r]));
	}
}

/* The whole file 'path' as a malloc'ed string (exit on error). */
static char *
slurp(const char *path)
{
	FILE	   *fh = fopen(path, "r");
	long		n;
	char	   *s;

	if (!fh)
	{
		perror(path);
		exit(2);
	}
	fseek(fh, 0, SEEK_END);
	n = ftell(fh);
	rewind(fh);
	s = malloc(n + 1);
	s[fread(s, 1, n, fh)] = '\0';
	fclose(fh);
	return s;
}

/* Seconds on the monotonic clock. */
static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* strcmp for qsort of "a\tb" lines. */
static int
cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *) x, *(char *const *) y);
}

/* Write the goal's rows (decoded, sorted) to DUMP/<goal>.tsv. */
static void
dump_rows(const char *dir, const char *goal, const GdlResult *res, GdlDict *dict)
{
	char		path[4096];
	char	  **lines = malloc(sizeof(char *) * (res->count + 1));
	FILE	   *fh;
	int64_t		r;

	for (r = 0; r < res->count; r++)
	{
		size_t		la, lb;
		const char *a = gdl_dict_string(dict, (int32_t) res->rows.cols[0][r], &la);
		const char *b = gdl_dict_string(dict, (int32_t) res->rows.cols[1][r], &lb);

		lines[r] = malloc(la + lb + 2);
		sprintf(lines[r], "%.*s\t%.*s", (int) la, a, (int) lb, b);
	}
	qsort(lines, res->count, sizeof(char *), cmp_str);
	snprintf(path, sizeof(path), "%s/%s.tsv", dir, goal);
	fh = fopen(path, "w");
	for (r = 0; r < res->count; r++)
	{
		fprintf(fh, "%s\n", lines[r]);
		free(lines[r]);
	}
	fclose(fh);
	free(lines);
}

/* The plan's lines on stderr (EXPLAIN=1): which atom drives each rule version. */
static void
print_plan(const GdlPlan *plan)
{
	char	  **lines = NULL;
	int			n = gdl_plan_explain(plan, &lines);

	for (int i = 0; i < n; i++)
		fprintf(stderr, "%s\n", lines[i]);
}

/* One run of goal 'name' of program 'src': tuples, or -1 (message printed). */
static int64_t
run_goal(const char *src, const char *name, double *secs, double *load_secs, const char *dump)
{
	GdlProgram *volatile p = NULL;
	GdlAnalysis *volatile a = NULL;
	GdlPlan    *volatile plan = NULL;
	GdlResult  *volatile res = NULL;
	GdlDict    *volatile dict = NULL;
	GdlRunInput in;
	GdlGoal		goal;
	GdlError   *e;
	double		t0 = now();
	int64_t		n = -1;

	memset(&in, 0, sizeof(in));
	in.load_edb = load_edb;
	in.device = run_device;
	in.want_rows = dump != NULL;
	memset(&goal, 0, sizeof(goal));
	e = GDL_TRY(p = gdl_parse(src); a = gdl_analyze(p, resolve, NULL);
				goal.pred = gdl_analysis_find_pred(a, name);
				if (goal.pred < 0) gdl_error(GDL_ERR_UNDEFINED, NULL, NULL, "no predicate %s", name);
				dict = gdl_dict_create(); plan = gdl_plan_compile(a);
				if (getenv("EXPLAIN")) print_plan(plan);
				res = gdl_run(plan, &in, dict, &goal));
	*secs = now() - t0;
	*load_secs = res ? res->stats.ms_load / 1000.0 : 0.0;
	if (e)
		fprintf(stderr, "%s: %s%s%s\n", name, e->message, e->detail ? ": " : "", e->detail ? e->detail : "");
	else
	{
		n = res->count;
		if (getenv("GDL_TRACE"))
			fprintf(stderr, "%s: %lld rounds, %lld tuples; ms join %.0f, dedup %.0f, difference %.0f, merge %.0f, total %.0f; peak %lld MB, %lld batches\n",
					name, (long long) res->stats.iterations, (long long) res->stats.tuples_derived,
					res->stats.ms_join, res->stats.ms_dedup, res->stats.ms_difference,
					res->stats.ms_merge, res->stats.ms_total,
					(long long) (res->stats.peak_bytes >> 20), (long long) res->stats.batches);
		if (dump)
			dump_rows(dump, name, res, dict);
	}
	gdl_test_reset();
	return n;
}

/* qsort comparison of doubles. */
static int
cmp_double(const void *x, const void *y)
{
	double		a = *(const double *) x, b = *(const double *) y;

	return a < b ? -1 : a > b;
}

int
main(int argc, char **argv)
{
	char	   *src;
	int			g, k, rc = 0;

	if (argc < 4)
	{
		fprintf(stderr, "usage: %s FACTS_DIR PROGRAM.dl GOAL...\n", argv[0]);
		return 2;
	}
	gdl_test_host_install();
	if (getenv("GDL_DEVICE") && strcmp(getenv("GDL_DEVICE"), "gpu") == 0)
	{
		bench_load_gpu(getenv("GDL_CUDA_LIB") ? getenv("GDL_CUDA_LIB") : "cuda/gpudl_cuda.so");
		run_device = GDL_DEVICE_GPU;
	}
	if (getenv("GDL_THREADS"))
		gdl_engine_set_threads(atoi(getenv("GDL_THREADS")));
	if (getenv("GDL_BATCH_ROWS"))	/* a join's rows per slice (default 32 Mi) */
		gdl_engine_set_batch_rows(atoll(getenv("GDL_BATCH_ROWS")));
	facts_dir = argv[1];
	src = slurp(argv[2]);
	for (g = 3; g < argc; g++)
	{
		double		t[3],
					load[3];
		int64_t		n = 0;

		/* three runs for the median; one when the first takes more than 20 s */
		for (k = 0; k < 3 && n >= 0 && (k == 0 || t[0] <= 20.0); k++)
			n = run_goal(src, argv[g], &t[k], &load[k], k == 0 ? getenv("DUMP") : NULL);
		if (n < 0)
		{
			rc = 1;
			continue;
		}
		qsort(t, k, sizeof(double), cmp_double);
		qsort(load, k, sizeof(double), cmp_double);
		/* load: reading and interning the facts on the host, the same work
		 * for both devices; the rest is the evaluation */
		printf("%-12s %12lld tuples %9.3f s (%s, %s, standalone; load %.3f s)\n",
			   argv[g], (long long) n, t[k / 2], k == 3 ? "median of 3" : "one run",
			   run_device == GDL_DEVICE_GPU ? "GPU" : "CPU engine", load[k / 2]);
	}
	return rc;
}
