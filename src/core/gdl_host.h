/*
 * gdl_host.h — the host interface of gpudl's core.
 *
 * The core (language, planner, engine, ILP driver, CPU backend) is plain C with
 * no PostgreSQL header.  Everything it needs from its host — memory, errors,
 * interrupt checks and logging — goes through the hooks below.  The extension
 * installs hooks backed by palloc/ereport/CHECK_FOR_INTERRUPTS
 * (src/pg/pg_host.c); the standalone tests install malloc and longjmp
 * (test/unit/test_host.c).  This is how PostGIS keeps liblwgeom independent.
 *
 * Rules for core code:
 *   - allocate only with gdl_alloc/gdl_realloc/gdl_free (never from a worker
 *     thread: hosts are not thread safe);
 *   - report user mistakes with gdl_error (it never returns);
 *   - call gdl_check_interrupts() in every loop that can run long;
 *   - in worker threads (gdl_parallel's tasks), poll gdl_interrupt_pending()
 *     every few milliseconds of work and stop early when it is true; after
 *     the loop the calling thread calls gdl_check_stop(), which raises.
 */
#ifndef GDL_HOST_H
#define GDL_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Error classes; the PostgreSQL host maps each to a SQLSTATE. */
typedef enum GdlErrCode
{
	GDL_ERR_SYNTAX,				/* 42601 syntax_error */
	GDL_ERR_UNDEFINED,			/* 42P01 undefined_table (unknown predicate/table) */
	GDL_ERR_DATATYPE,			/* 42804 datatype_mismatch (arity, types) */
	GDL_ERR_UNSAFE,				/* 42P17 invalid_object_definition (unsafe rule) */
	GDL_ERR_STRATIFY,			/* 42P17 invalid_object_definition (unstratifiable) */
	GDL_ERR_PRIVILEGE,			/* 42501 insufficient_privilege */
	GDL_ERR_PARAM,				/* 22023 invalid_parameter_value */
	GDL_ERR_LIMIT,				/* 54000 program_limit_exceeded (max_iterations) */
	GDL_ERR_DEVICE_MEMORY,		/* 53200 out_of_memory on the device */
	GDL_ERR_OUT_OF_MEMORY,		/* 53200 out_of_memory on the host */
	GDL_ERR_DIVISION_BY_ZERO,	/* 22012 */
	GDL_ERR_OVERFLOW,			/* 22003 numeric_value_out_of_range */
	GDL_ERR_DEVICE,				/* 58000 system_error (device failure) */
	GDL_ERR_INTERNAL			/* XX000 internal_error */
} GdlErrCode;

/* A raised error: message plus optional detail and hint (NULL when absent). */
typedef struct GdlError
{
	GdlErrCode	code;
	const char *message;
	const char *detail;
	const char *hint;
} GdlError;

/* The hooks a host installs once, before any core call. */
typedef struct GdlHost
{
	void	   *(*alloc) (size_t size);	/* zeroed memory; raises on failure */
	void	   *(*realloc) (void *ptr, size_t size);
	void		(*free) (void *ptr);
	void		(*error) (const GdlError *err);	/* must not return */
	void		(*check_interrupts) (void);
	void		(*log) (const char *msg);

	/*
	 * Optional, callable from any thread: true when check_interrupts is
	 * about to raise (cancel, timeout, termination), so that worker threads
	 * stop their share early.  NULL: never.
	 */
	bool		(*interrupt_pending) (void);
} GdlHost;

extern void gdl_set_host(const GdlHost *host);

extern void *gdl_alloc(size_t size);
extern void *gdl_realloc(void *ptr, size_t size);
/* Like gdl_alloc, not zeroed: for blocks the caller writes in full. */
extern void *gdl_alloc_uninit(size_t size);
/* Hint that a big block not written yet should get huge pages. */
extern void gdl_advise_huge(void *p, size_t size);
extern void gdl_free(void *ptr);
/* A growing array with room for element n: see gdl_host.c. */
extern void *gdl_grow(void *v, int n, int *cap, int first, size_t elem);
extern char *gdl_strdup(const char *s);
extern char *gdl_strndup(const char *s, size_t n);
extern char *gdl_sprintf(const char *fmt,...) __attribute__((format(printf, 1, 2)));
extern void gdl_check_interrupts(void);
/* Thread safe: whether an interrupt is pending (workers poll it). */
extern bool gdl_interrupt_pending(void);
/*
 * On the calling thread, after a parallel loop: when an interrupt is
 * pending, raise it (through check_interrupts; a host that does not raise
 * there gets an internal error, never the loop's partial result).
 */
extern void gdl_check_stop(void);
extern void gdl_log(const char *fmt,...) __attribute__((format(printf, 1, 2)));

/*
 * Raise an error.  detail and hint may be NULL; fmt builds the message.
 */
extern void gdl_error(GdlErrCode code, const char *detail, const char *hint,
					  const char *fmt,...)
			__attribute__((format(printf, 4, 5), noreturn));

/* Growable string buffer, for messages and printing. */
typedef struct GdlBuf
{
	char	   *data;
	size_t		len;
	size_t		cap;
} GdlBuf;

extern void gdl_buf_init(GdlBuf *b);
extern void gdl_buf_append(GdlBuf *b, const char *fmt,...) __attribute__((format(printf, 2, 3)));
extern void gdl_buf_putc(GdlBuf *b, char c);
extern void gdl_buf_putsn(GdlBuf *b, const char *s, size_t n);

/* A growable list of text lines (explain output); zero-initialise. */
typedef struct GdlLines
{
	int			n;
	int			cap;
	char	  **v;
} GdlLines;

extern void gdl_lines_add(GdlLines *l, char *line);

/*
 * Worker threads (gdl_par.c): fn(arg, tid, ntasks) for every tid < ntasks in
 * parallel, all joined before return; tasks make no gdl_* calls.
 */
#define GDL_MAX_THREADS 64
typedef void (*GdlTaskFn) (void *arg, int tid, int ntasks);
extern void gdl_parallel(int ntasks, GdlTaskFn fn, void *arg);
/*
 * The same loop started on threads of its own, the calling thread free
 * until gdl_parallel_join (which it must call, also on its error paths).
 */
typedef struct GdlParRun GdlParRun;
extern GdlParRun *gdl_parallel_start(int ntasks, GdlTaskFn fn, void *arg);
extern void gdl_parallel_join(GdlParRun *r);
/*
 * A tag of the calling thread that gdl_parallel's workers inherit, so that
 * a host serving several jobs at once (the GPU service) can tell from any
 * thread whose work it does (gdl_par.c).
 */
extern void gdl_set_thread_tag(void *tag);
extern void *gdl_thread_tag(void);
/* Threads per operation: n, or 0 for one per CPU up to 16 (gdl_par.c). */
extern void gdl_set_threads(int n);
extern int	gdl_threads(void);
/* Task tid's share [*from, *to) of n items. */
extern void gdl_split(int64_t n, int tid, int ntasks, int64_t *from, int64_t *to);
/* Monotonic clock in milliseconds. */
extern double gdl_now_ms(void);

/* String -> int map (gdl_strmap.c); zero-initialise, keys are not copied. */
typedef struct GdlStrMap
{
	int			nslots;			/* power of two */
	int			nused;
	const char **keys;
	int		   *vals;
} GdlStrMap;

extern uint32_t gdl_hash_string(const char *s);
extern int	gdl_strmap_get(const GdlStrMap *m, const char *key);	/* -1 when absent */
extern void gdl_strmap_put(GdlStrMap *m, const char *key, int val);

#endif							/* GDL_HOST_H */
