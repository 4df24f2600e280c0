/*
 * pg_part.c — the PostgreSQL side of partitioned runs (issue 14): the
 * settings gpudl.partitions and gpudl.devices (handed to the engine,
 * src/exec/exec_part.c), and what the partitions of a run did, per
 * partition, for EXPLAIN ANALYZE and gpudl_device_info().
 *
 * A GPU run through the GPU service is not partitioned: every partition
 * would hold a slot of the service, and a run needing more slots than are
 * free would wait for itself.  Such runs go unpartitioned (CPU runs, and
 * GPU runs of a session that loads the CUDA module itself, are
 * partitioned as set).
 */
#include "pg/pg_part.h"

#include <limits.h>

#include "svc/svc_int.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"

int			gpudl_partitions = 1;
static char *gpudl_devices = NULL;

/* The last partitioned run of this session (TopMemoryContext). */
static int	last_nparts = 0;
static GdlPartStats *last_parts = NULL;

/* gpudl.partitions changed: tell the engine. */
static void
assign_partitions(int newval, void *extra)
{
	gdl_engine_set_partitions(newval);
}

/* gpudl.devices: "all" or a list of GPU ordinals. */
static bool
check_devices(char **newval, void **extra, GucSource source)
{
	int			ids[GDL_PART_MAX];

	if (gdl_part_parse_devices(*newval, ids) < 0)
	{
		GUC_check_errdetail("gpudl.devices is 'all' or a comma-separated list of distinct GPU numbers, at most %d.",
							GDL_PART_MAX);
		return false;
	}
	return true;
}

static void
assign_devices(const char *newval, void *extra)
{
	int			ids[GDL_PART_MAX];
	int			n = gdl_part_parse_devices(newval, ids);

	gdl_engine_set_devices(ids, n < 0 ? 0 : n);
}

/* Define gpudl.partitions and gpudl.devices. */
void
gpudl_part_define_gucs(void)
{
	DefineCustomIntVariable("gpudl.partitions",
							"Partitions one evaluation is spread over (0: one per GPU of gpudl.devices; default 1).",
							"More than 1 spreads the fixpoint over that many backend contexts, "
							"several per device (or on the CPU) when there are fewer devices.",
							&gpudl_partitions, 1, 0, GDL_PART_MAX,
							PGC_USERSET, 0, NULL, assign_partitions, NULL);
	DefineCustomStringVariable("gpudl.devices",
							   "GPUs a partitioned evaluation uses: 'all' or a list such as '0,1'.",
							   NULL, &gpudl_devices, "all",
							   PGC_USERSET, 0, check_devices, assign_devices, NULL);
}

/* Before gdl_run: no partitions for a GPU run through the service.  Returns what to restore. */
int
gpudl_part_run_begin(const GdlRunInput *in)
{
	int			saved = gdl_engine_partitions();

	if (in->device == GDL_DEVICE_GPU && svc_active() && gpudl_service_enabled)
		gdl_engine_set_partitions(1);
	return saved;
}

/* After gdl_run (res NULL: it failed): restore, and keep the partitions' counters. */
void
gpudl_part_run_end(int saved, const GdlResult *res)
{
	gdl_engine_set_partitions(saved);
	if (res == NULL || res->stats.nparts <= 0)
		return;
	if (last_parts)
		pfree(last_parts);
	last_parts = MemoryContextAlloc(TopMemoryContext, sizeof(GdlPartStats) * res->stats.nparts);
	memcpy(last_parts, res->stats.parts, sizeof(GdlPartStats) * res->stats.nparts);
	last_nparts = res->stats.nparts;
}

/* Where a partition ran, in words (-1: the CPU, or a backend of one device). */
static char *
part_device(const GdlPartStats *ps)
{
	return ps->device >= 0 ? psprintf("GPU %d", ps->device) : pstrdup("cpu");
}

/*
 * gpudl_device_info's rows of the last partitioned run: backend
 * 'partition', the partition and its counters in words, its peak bytes as
 * memory_total (memory_free NULL).
 */
void
gpudl_part_device_rows(ReturnSetInfo *rsinfo)
{
	int			p;

	for (p = 0; p < last_nparts; p++)
	{
		const GdlPartStats *ps = &last_parts[p];
		Datum		values[4];
		bool		nulls[4] = {false, false, false, true};

		values[0] = CStringGetTextDatum("partition");
		values[1] = CStringGetTextDatum(psprintf("partition %d of the last run (%s): %lld tuples, %lld bytes sent, %lld received, %.3f ms exchanging",
												 p, part_device(ps), (long long) ps->tuples,
												 (long long) ps->bytes_sent,
												 (long long) ps->bytes_received, ps->ms_exchange));
		values[2] = Int64GetDatum(ps->peak_bytes);
		values[3] = (Datum) 0;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/*
 * EXPLAIN ANALYZE lines of a partitioned run: the partitions, and per
 * partition its tuples and bytes exchanged (the same on every machine for
 * the same data), plus with machine details its device, exchange time and
 * peak bytes.
 */
void
gpudl_part_explain(int nparts, const GdlPartStats *parts, bool details, ExplainState *es)
{
	int			p;

	if (nparts <= 0)
		return;
	ExplainPropertyInteger("Partitions", NULL, nparts, es);
	for (p = 0; p < nparts; p++)
	{
		const GdlPartStats *ps = &parts[p];
		char	   *line = psprintf("%lld tuples, %lld bytes sent, %lld received",
									(long long) ps->tuples, (long long) ps->bytes_sent,
									(long long) ps->bytes_received);

		if (details)
			line = psprintf("%s: %s, exchange %.3f ms, peak %lld bytes", part_device(ps), line,
							ps->ms_exchange, (long long) ps->peak_bytes);
		ExplainPropertyText(psprintf("Partition %d", p), line, es);
	}
}
