/*
 * pg_gucs.c — gpudl's settings (PRODUCT.md section 4), defined once at
 * library load by _PG_init (src/api/api_module.c).  The GPU service's own
 * settings are in src/svc/svc_shmem.c; gpudl.device and gpudl.cuda_library
 * live there too (the service reads them) and are registered here.
 */
#include "pg/gpudl_pg.h"
#include "pg/gpudl_run.h"
#include "pg/gpudl_kg.h"
#include "svc/svc_int.h"
#include "pg/pg_part.h"

#include <limits.h>

#include "utils/guc.h"

int			gpudl_device_memory_limit_mb = 0;
int			gpudl_max_iterations = 100000;
int			gpudl_host_memory_limit_mb = 0;
bool		gpudl_enable_customscan = true;
bool		gpudl_enable_pushdown = true;
bool		gpudl_enable_magic = true;
bool		gpudl_explain_machine_details = true;
double		gpudl_maintain_recompute_share = 0.01;
int			gpudl_maintain_check_deletions = GPUDL_CHECK_AUTO;

static const struct config_enum_entry check_deletions_options[] = {
	{"auto", GPUDL_CHECK_AUTO, false},
	{"always", GPUDL_CHECK_ALWAYS, false},
	{"never", GPUDL_CHECK_NEVER, false},
	{NULL, 0, false}
};

static const struct config_enum_entry device_options[] = {
	{"auto", GPUDL_DEVICE_AUTO, false},
	{"cpu", GPUDL_DEVICE_CPU, false},
	{"gpu", GPUDL_DEVICE_GPU, false},
	{NULL, 0, false}
};

static int	gpudl_threads = 0;
static int	gpudl_batch_rows = 32 << 20;

/* gpudl.threads changed: tell the core. */
static void
assign_threads(int newval, void *extra)
{
	gdl_set_threads(newval);
}

/* gpudl.batch_rows changed: tell the engine. */
static void
assign_batch_rows(int newval, void *extra)
{
	gdl_engine_set_batch_rows(newval);
}

/* The integer settings, defined in this order (gpudl_define_int_settings). */
static const GpudlIntSetting int_settings[] = {
	{"gpudl.device_memory_limit", "Device memory one backend may hold, in MB (0: no limit).", NULL, &gpudl_device_memory_limit_mb, 0, 0, INT_MAX, PGC_USERSET, GUC_UNIT_MB, NULL},
	{"gpudl.max_iterations", "Fixpoint rounds before a run stops with an error.", NULL, &gpudl_max_iterations, 100000, 1, INT_MAX, PGC_USERSET, 0, NULL},
	{"gpudl.host_memory_limit", "Host memory one evaluation may hold, in MB (0: three quarters of physical memory).", "Past it the evaluation stops with an error instead of exhausting the machine.", &gpudl_host_memory_limit_mb, 0, 0, INT_MAX, PGC_USERSET, GUC_UNIT_MB, NULL},
	{"gpudl.threads", "CPU worker threads one evaluation or rule learning may use (0: one per CPU, up to 16).", NULL, &gpudl_threads, 0, 0, GDL_MAX_THREADS, PGC_USERSET, 0, assign_threads},
	{"gpudl.batch_rows", "Most rows one join of a rule produces at once, before they are deduplicated (0: as many as memory allows).", "A join whose output would be larger runs over slices of its input, each reduced before the next: smaller keeps memory near the result, larger costs fewer launches (CSPA on a GPU: 2.3 s at the default, 1.2 s at 536870912).", &gpudl_batch_rows, 32 << 20, 0, INT_MAX, PGC_USERSET, 0, assign_batch_rows},
};

/*
 * The boolean settings, in their order: each is on by default and set by
 * any user (PGC_USERSET), with no flags or hooks.
 */
static const struct
{
	const char *name;
	const char *short_desc;
	const char *long_desc;
	bool	   *var;
}			bool_settings[] = {
	{"gpudl.enable_customscan", "Runs gpudl_query and gpudl_count in FROM through the GpuDatalog custom scan.", "Off: they run as plain function scans.", &gpudl_enable_customscan},
	{"gpudl.enable_pushdown", "Pushes WHERE conditions on gpudl_query's columns into the goal.", "Equality with a constant, a parameter or an outer value binds the goal argument.", &gpudl_enable_pushdown},
	{"gpudl.enable_magic", "Evaluates goals with bound arguments goal-directed (magic sets).", "Off: the whole program is evaluated, then the goal filters.", &gpudl_enable_magic},
	{"gpudl.explain_machine_details", "Shows device, times and bytes moved in EXPLAIN of the GpuDatalog scan.", "Off keeps EXPLAIN output the same on every machine (regression tests).", &gpudl_explain_machine_details},
	{"gpudl.kg_cache", "Keeps the last knowledge graph read, with its parsed stored rules, between calls of gpudl_predict and gpudl_mine.", "Only graphs whose tables have counted changes (gpudl_load) are kept; off: every call reads them.", &gpudl_kg_cache},
};

/* Define gpudl.* settings and reserve the prefix. */
void
gpudl_define_gucs(void)
{
	DefineCustomEnumVariable("gpudl.device",
							 "Where gpudl evaluates programs: auto, cpu or gpu.",
							 "auto uses a GPU when one works, else the CPU; gpu fails when none works.",
							 &gpudl_device_setting, GPUDL_DEVICE_AUTO, device_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	gpudl_define_int_settings(int_settings, lengthof(int_settings));
	DefineCustomStringVariable("gpudl.cuda_library",
							   "Path of the GPU backend module to dlopen.",
							   NULL, &gpudl_cuda_library, "$libdir/gpudl_cuda.so",
							   PGC_SUSET, 0, NULL, NULL, NULL);
	for (int i = 0; i < lengthof(bool_settings); i++)
		DefineCustomBoolVariable(bool_settings[i].name, bool_settings[i].short_desc,
								 bool_settings[i].long_desc, bool_settings[i].var, true,
								 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomRealVariable("gpudl.maintain_recompute_share",
							 "Recomputes a maintained table when a change reaches more than this share of its rows.",
							 "Delete-and-rederive and semi-naive rounds in SQL cost more per row than the engine's full run; 1 never recomputes.",
							 &gpudl_maintain_recompute_share, 0.01, 0.0, 1.0, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("gpudl.maintain_check_deletions",
							 "When a maintained table's over-deletion is checked against the relation computed afresh: auto, always or never.",
							 "auto: once delete-and-rederive reaches past gpudl.maintain_recompute_share of the rows, or has run longer than the engine's last run for the table; checked, only rows that really go are deleted and nothing is put back.",
							 &gpudl_maintain_check_deletions, GPUDL_CHECK_AUTO, check_deletions_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	gpudl_part_define_gucs();	/* gpudl.partitions, gpudl.devices (pg_part.c) */
}
