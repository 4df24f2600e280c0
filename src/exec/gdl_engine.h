/*
 * gdl_engine.h — what the host (the PostgreSQL layer, or a test) sees of the
 * planner and the engine.
 *
 *   analysis --gdl_plan_compile--> GdlPlan (cached by the host per program
 *   version and bound tables) --gdl_run--> GdlResult
 *
 * Values inside the engine are 64-bit: integers as themselves, bool as 0/1,
 * float8 bit-cast, text as ids from a GdlDict (one dictionary per run).
 * The engine never knows which backend runs it (CPU or CUDA: gdl_backend.h).
 */
#ifndef GDL_ENGINE_H
#define GDL_ENGINE_H

#include "../lang/gdl_lang.h"
#include "../plan/gdl_plan.h"

/* ----------------------------------------------------------- dictionary */

/* Text dictionary: string <-> dense 32-bit id, ids in first-seen order. */
typedef struct GdlDict GdlDict;

extern GdlDict *gdl_dict_create(void);
extern int32_t gdl_dict_intern(GdlDict *d, const char *s, size_t len);
/* -1 when the string is not in the dictionary */
extern int32_t gdl_dict_lookup(const GdlDict *d, const char *s, size_t len);
extern const char *gdl_dict_string(const GdlDict *d, int32_t id, size_t *len);
extern int32_t gdl_dict_size(const GdlDict *d);
/* rank of each id in byte order of the strings (for text < comparisons) */
extern const int32_t *gdl_dict_ranks(GdlDict *d);

/* --------------------------------------------------------------- columns */

/* A relation as columns: cols[c][r], c < ncols, r < nrows. */
typedef struct GdlColumns
{
	int			ncols;
	size_t		nrows;
	int64_t   **cols;
} GdlColumns;

/* Rows as sorted runs (exec_columns.c): where runs start (-1: more than max_runs). */
extern int	gdl_columns_sorted_runs(const GdlColumns *rows, size_t *starts, int max_runs);
/* ... and whether the sorted run [lo, hi) holds 'row' */
extern bool gdl_columns_run_has(const GdlColumns *rows, size_t lo, size_t hi, const int64_t *row);
/* ... the first row of the run not below 'row', searched outward from 'from'; whether row r equals 'row' */
extern size_t gdl_columns_run_seek(const GdlColumns *rows, size_t lo, size_t hi, size_t from, const int64_t *row);
extern bool gdl_columns_row_equals(const GdlColumns *rows, size_t r, const int64_t *row);

/* ------------------------------------------------------------------ runs */

typedef enum GdlDevice
{
	GDL_DEVICE_CPU, GDL_DEVICE_GPU
} GdlDevice;

/* Restriction of the goal: argument 'arg' must equal 'value' (encoded). */
typedef struct GdlGoalBinding
{
	int			arg;
	int64_t		value;
} GdlGoalBinding;

typedef struct GdlGoal
{
	int			pred;			/* predicate id in the analysis */
	int			nbindings;
	GdlGoalBinding *bindings;	/* constants of the goal */
	int			nequal;			/* pairs of arguments that must be equal */
	int		   *equal_a;		/* (repeated goal variables: p(X, X)) */
	int		   *equal_b;
} GdlGoal;

struct GdlBackend;				/* src/exec/gdl_backend.h */

/*
 * An extensional predicate served from a table resident in a backend's
 * memory (gpudl_load on a device): the predicate's columns are resident
 * columns colidx[0..ncols), text ones mapped through remap[c] (ids of the
 * table's dictionary -> the run's; NULL for other types).  The arrays are
 * gdl_alloc'ed; the engine frees them.
 */
typedef struct GdlResidentRef
{
	void	   *resident;		/* the backend's handle (resident_create) */
	int			ncols;
	int		   *colidx;
	int32_t   **remap;
	int32_t    *remap_len;
} GdlResidentRef;

/*
 * Progress of a run, reported to the host at each stratum's start (round 0)
 * and after each fixpoint round, so that others can watch a long run
 * (gpudl_progress).  Numbers are what the engine knows cheaply.
 */
typedef struct GdlProgress
{
	const char *phase;			/* "evaluating", then "downloading" (rows out) */
	int			stratum;		/* index of the stratum being evaluated (-1: none) */
	int			nstrata;
	int64_t		round;			/* fixpoint round within the stratum, 0 at its start (-1: none) */
	int64_t		tuples;			/* derived so far: earlier strata plus this one's relations */
	int64_t		bytes;			/* most bytes the backend context has held so far */
} GdlProgress;

typedef struct GdlRunInput
{
	/*
	 * Fill *out with the rows of an extensional predicate, encoding text
	 * through 'dict'.  Columns must be gdl_alloc'ed; the engine frees them.
	 */
	void		(*load_edb) (void *arg, const GdlPred *pred, GdlDict *dict, GdlColumns *out);
	void	   *load_arg;

	/*
	 * Optional: serve an extensional predicate from a resident table of
	 * backend bk instead (true, *out filled), or decline (false: load_edb
	 * is called).  Only asked when bk can read resident tables.
	 */
	bool		(*load_edb_resident) (void *arg, const GdlPred *pred,
									  const struct GdlBackend *bk, GdlDict *dict,
									  GdlResidentRef *out);
	GdlDevice	device;
	int64_t		max_iterations;
	bool		want_rows;		/* false: count only (gpudl_count) */
	int64_t		memory_limit;	/* bytes the backend context may hold; 0 = no limit */
	/* optional: told where the run is (must not raise or allocate much) */
	void		(*progress) (void *arg, const GdlProgress *p);
	void	   *progress_arg;

	/*
	 * Optional: the bytes the run holds now, counted against memory_limit,
	 * when the host counts them itself (a CPU run's memory is the host's:
	 * its allocator hooks see scratch buffers the backend does not count).
	 * NULL: the backend's own count (GdlBkCounters.bytes_held).
	 */
	int64_t		(*memory_held) (void *arg);
	void	   *memory_arg;
} GdlRunInput;

/* Per-run counters, for gpudl_stats and EXPLAIN ANALYZE. */
typedef struct GdlRunStats
{
	int64_t		iterations;		/* fixpoint rounds, all strata */
	int64_t		tuples_derived;
	double		ms_load;
	double		ms_join;
	double		ms_dedup;
	double		ms_difference;
	double		ms_merge;
	double		ms_total;
	int64_t		bytes_to_device;
	int64_t		bytes_from_device;
	int64_t		transfers;
	int			nstrata;
	int64_t    *stratum_iterations;
	int64_t    *stratum_tuples;
	int64_t		peak_bytes;		/* most bytes the backend held at once */
	int64_t		batches;		/* slices rules ran over (see gdl_engine_set_batch_rows) */
	const char *backend;		/* "cpu" or "cuda" */
	/* device kernels the backend launched itself, per phase, and library calls */
	int64_t		launches_load;
	int64_t		launches_join;
	int64_t		launches_dedup;
	int64_t		launches_difference;
	int64_t		launches_merge;
	int64_t		launches;		/* all of them, the answer's filter included */
	int64_t		library_calls;	/* device library algorithms (CUB), all phases */
	int64_t		resident_loads;	/* predicates served from resident tables */
	/* partitioned runs (issue 14, gdl_part.h): one entry per partition; 0/NULL otherwise */
	int			nparts;
	struct GdlPartStats *parts;
} GdlRunStats;

typedef struct GdlResult
{
	int64_t		count;			/* rows of the goal after its filter */
	GdlColumns	rows;			/* goal rows when want_rows */
	GdlType    *types;			/* per goal column */
	GdlRunStats stats;
} GdlResult;

/* Evaluate what the goal needs to its least fixpoint and answer the goal. */
extern GdlResult *gdl_run(const GdlPlan *plan, const GdlRunInput *in,
						  GdlDict *dict, const GdlGoal *goal);

/* -------------------------------------------------------------- backends */

/*
 * The backend gdl_run uses for a device, as the host registered it: the
 * CPU backend (src/cpu, gdl_cpu_backend()) at start-up, the GPU one after
 * dlopen'ing the CUDA module or attaching to the GPU service.  NULL when
 * there is none for the device.
 */
extern const struct GdlBackend *gdl_backend_for(GdlDevice device);
extern void gdl_backend_register(GdlDevice device, const struct GdlBackend *backend);

/* The built-in CPU backend (src/cpu), for hosts to register. */
extern const struct GdlBackend *gdl_cpu_backend(void);

/* Worker threads of the CPU backend; 0 (the default) = one per CPU, at most 16. */
extern void gdl_engine_set_threads(int nthreads);

/*
 * Memory bound of a round: a join that would produce more rows than this
 * runs over slices of its left input, each slice's result reduced (dedup,
 * minus full) before the next (default 32M rows; 0 turns splitting off).
 * Under a memory limit slices are also sized from the memory left
 * (src/exec/exec_mem.c); a device run without a set limit is split by its
 * free memory only, not by this.
 */
extern void gdl_engine_set_batch_rows(int64_t rows);

/*
 * Call after an error escaped gdl_run (e.g. from PG_CATCH or a memory
 * context reset callback): releases what the run's backend context holds
 * outside host memory (device memory).  Harmless when no run is active.
 */
extern void gdl_engine_abort_cleanup(void);

#endif							/* GDL_ENGINE_H */
