/*
 * gpudl_pg.h — shared declarations of gpudl's PostgreSQL layer (src/pg):
 * settings, the host hooks, catalog access and program loading.
 *
 * Only files in src/pg, src/svc, src/maint and src/api include PostgreSQL headers; the core below them sees
 * PostgreSQL only through the host interface (src/core/gdl_host.h).
 */
#ifndef GPUDL_PG_H
#define GPUDL_PG_H

#include "postgres.h"

#include "fmgr.h"
#include "nodes/pg_list.h"
#include "utils/acl.h"

#include "lang/gdl_lang.h"
#include "svc/gpudl_svc.h"

/* ------------------------------------------------------------- settings */

/* gpudl.device and gpudl.cuda_library: src/svc/gpudl_svc.h */
extern int	gpudl_device_memory_limit_mb;
extern int	gpudl_max_iterations;
extern int	gpudl_host_memory_limit_mb;

extern void gpudl_define_gucs(void);

/* ----------------------------------------------------------------- host */

/* Install the palloc/ereport host hooks for the core (idempotent). */
extern void gpudl_install_host(void);

/* Start counting the core's host memory afresh (one per SQL call). */
extern void gpudl_memory_reset(void);

/* Required arguments of SQL functions: NULL raises 22004 (pg_args.c). */
extern char *gpudl_text_arg(FunctionCallInfo fcinfo, int n, const char *what);
extern int32 gpudl_int_arg(FunctionCallInfo fcinfo, int n, const char *what);

/* One word a text argument may be, and what it stands for (pg_args.c). */
typedef struct GpudlKeyword
{
	const char *name;
	int			value;
} GpudlKeyword;

extern int	gpudl_keyword(const char *s, const GpudlKeyword *keys, const char *what_fmt,
						  const char *hint);

/* ------------------------------------------------------------- catalog */

/* A program as stored: catalog row plus its parsed, enabled clauses. */
typedef struct GpudlProgramDef
{
	char	   *name;
	int64		version;
	GdlProgram *prog;			/* items carry their rule ids */
	List	   *bindings;		/* GpudlBinding * */
} GpudlProgramDef;

typedef struct GpudlBinding
{
	char	   *predicate;
	Oid			relid;
	List	   *columns;		/* char * column names, NIL = all in order */
} GpudlBinding;

/* ----------------------------------------------------------- privileges */

/* What a caller wants to do with a program (pg_acl.c). */
typedef enum GpudlPrivilege
{
	GPUDL_PRIV_NONE,			/* only see that it exists */
	GPUDL_PRIV_USE,				/* read its rules, query, learn without commit */
	GPUDL_PRIV_MODIFY,			/* also change rules and bindings, commit */
	GPUDL_PRIV_OWN				/* drop, change owner or description, grant */
} GpudlPrivilege;

/* Does the catalog have owners (0.2 and later; false on a 0.1 catalog)? */
extern bool gpudl_catalog_has_owners(void);

/* The role owning the catalog tables (bypasses their row-level security). */
extern Oid	gpudl_catalog_owner(void);

/* The role owning a relation. */
extern Oid	gpudl_rel_owner(Oid relid);
/* The table an unbound predicate name reads: schema.table, else the whole name. */
extern Oid	gpudl_lookup_pred_relation(const char *name);

/* May roleid do 'need' on a program with this owner and ACL (NULL: none)? */
extern bool gpudl_privilege_allows(Oid owner, Acl *acl, GpudlPrivilege need, Oid roleid);

/* Raise 42501, naming the program and its owner, unless the current user may. */
extern void gpudl_privilege_require(const char *program, Oid owner, Acl *acl,
									GpudlPrivilege need);

/* Raise 42501 unless the current user may read the bound columns of relid. */
extern void gpudl_require_readable(Oid relid, List *columns, const char *program,
								   const char *predicate);

/* A role's name for messages (its OID when the role was dropped). */
extern char *gpudl_role_name(Oid roleid);

/* ------------------------------------------------------------- programs */

/*
 * The version of a program, after checking that the current user may do
 * 'need' on it (42501 otherwise).  Missing: 42704 unless missing_ok.
 */
extern int64 gpudl_program_version(const char *name, GpudlPrivilege need,
								   bool missing_ok, bool *found);

/*
 * Load name, version, enabled rules (parsed) and bindings; errors if missing
 * or when the caller may not use the program (42501).
 */
extern GpudlProgramDef *gpudl_load_program(const char *name);

/* Parse one text, reporting errors against 'what' (e.g. "rule 12"). */
extern GdlProgram *gpudl_parse_text(const char *text, const char *context);

/* Analyse a program definition, resolving EDB predicates to tables. */
extern GdlAnalysis *gpudl_analyze_program(GpudlProgramDef *def);

/*
 * Resolve a predicate of a program to a table (its binding, else a table of
 * that name on search_path); false when there is none.  arg: GpudlProgramDef.
 */
extern bool gpudl_resolve_predicate(void *arg, const char *name, GdlRelInfo *out);

/* A bound table no rule reads, as an extensional predicate (pg_catalog.c). */
extern bool gpudl_unread_binding(GpudlProgramDef *def, const GdlAnalysis *a,
								 const GpudlBinding *b, GdlPred *p);

/* Validate a stored program as a whole (used by the catalog triggers). */
extern void gpudl_validate_stored_program(const char *name);

/* Check that a program exists (42704) and the caller may do 'need' (42501). */
extern void gpudl_require_program(const char *name, GpudlPrivilege need);

/* Bump a program's version and updated_at. */
extern void gpudl_bump_version(const char *name);

/*
 * Called with a program's name after its version was bumped: the layer of
 * maintained tables (src/maint) sets it from _PG_init, so that the catalog
 * below it need not call up into it.
 */
typedef void (*GpudlProgramChangedHook) (const char *program);
extern GpudlProgramChangedHook gpudl_program_changed_hook;

/* Map a PostgreSQL type to an engine type (UNKNOWN if unsupported). */
extern GdlType gpudl_type_from_oid(Oid typid);

/* Session flag: a gpudl_* function is writing the catalog and has validated. */
extern int	gpudl_catalog_write_depth;

/* ------------------------------------------------------- shared memory */

/*
 * Shared memory (pg_shmem.c): only with shared_preload_libraries = 'gpudl'.
 * Each module below owns its struct; gpudl_shmem_ready() is false in a
 * session that loaded gpudl later, and every module must then work per
 * session.
 */
struct LWLock;
union LWLockPadded;
extern void gpudl_shmem_install(void);
extern bool gpudl_shmem_ready(void);

/* The GPU service's (src/svc/gpudl_svc.h) takes its locks at init. */
/* Progress of running evaluations and learns (pg_progress.c). */
extern Size gpudl_progress_shmem_size(void);
extern void gpudl_progress_shmem_init(void *mem, bool found, union LWLockPadded *locks);

/*
 * Bracket an SQL entry point's work (kind: "query", "count",
 * "materialize", "learn"): begin returns a token for end.  An error ends
 * it by itself (at transaction or subtransaction abort).
 */
extern int	gpudl_progress_begin(const char *kind, const char *program, const char *goal);
extern void gpudl_progress_end(int token);
extern void gpudl_progress_phase(const char *phase);
extern void gpudl_progress_device(const char *device);

/* Hooks for the engine (GdlRunInput.progress; arg: const char ** device) and ILP. */
struct GdlProgress;
struct GdlIlpProgress;
extern void gpudl_progress_engine(void *arg, const struct GdlProgress *p);
extern void gpudl_progress_ilp(void *arg, const struct GdlIlpProgress *p);

#endif							/* GPUDL_PG_H */
