/*
 * api_stats.c — gpudl_stats(): this backend's plan-cache hits and misses,
 * run counters, the last run's iterations and phase times, and bytes moved
 * between host and device.
 */
#include "pg/gpudl_run.h"

#include "funcapi.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(gpudl_stats);

/* Add one (name, value) row. */
static void
put(ReturnSetInfo *rsinfo, const char *name, int64 value)
{
	Datum		values[2];
	bool		nulls[2] = {false, false};

	values[0] = CStringGetTextDatum(name);
	values[1] = Int64GetDatum(value);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/* gpudl_stats() RETURNS TABLE(name text, value bigint) */
Datum
gpudl_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const GpudlCounters *c = &gpudl_counters;

	InitMaterializedSRF(fcinfo, 0);
	put(rsinfo, "plan_cache_hits", c->plan_cache_hits);
	put(rsinfo, "plan_cache_misses", c->plan_cache_misses);
	put(rsinfo, "plan_cache_entries", gpudl_plan_cache_size());
	put(rsinfo, "runs", c->runs);
	put(rsinfo, "gpu_runs", c->gpu_runs);
	put(rsinfo, "cpu_fallbacks", c->cpu_fallbacks);
	put(rsinfo, "rows_loaded", c->rows_loaded);
	put(rsinfo, "cache_reads", c->cache_reads);
	put(rsinfo, "device_cache_reads", c->device_cache_reads);
	put(rsinfo, "last_iterations", c->last_iterations);
	put(rsinfo, "last_tuples_derived", c->last_tuples);
	put(rsinfo, "last_result_rows", c->last_result_rows);
	put(rsinfo, "last_us_total", (int64) (c->last_ms_total * 1000));
	put(rsinfo, "last_us_load", (int64) (c->last_ms_load * 1000));
	put(rsinfo, "last_us_join", (int64) (c->last_ms_join * 1000));
	put(rsinfo, "last_us_dedup", (int64) (c->last_ms_dedup * 1000));
	put(rsinfo, "last_us_difference", (int64) (c->last_ms_difference * 1000));
	put(rsinfo, "last_us_merge", (int64) (c->last_ms_merge * 1000));
	put(rsinfo, "bytes_to_device", c->bytes_to_device);
	put(rsinfo, "bytes_from_device", c->bytes_from_device);
	put(rsinfo, "device_transfers", c->device_transfers);
	put(rsinfo, "last_launches", c->last_launches);
	put(rsinfo, "last_launches_load", c->last_launches_load);
	put(rsinfo, "last_launches_join", c->last_launches_join);
	put(rsinfo, "last_launches_dedup", c->last_launches_dedup);
	put(rsinfo, "last_launches_difference", c->last_launches_difference);
	put(rsinfo, "last_launches_merge", c->last_launches_merge);
	put(rsinfo, "last_library_calls", c->last_library_calls);
	put(rsinfo, "last_peak_device_bytes", c->last_peak_device_bytes);
	put(rsinfo, "last_peak_host_bytes", c->last_peak_host_bytes);
	put(rsinfo, "last_batches", c->last_batches);
	return (Datum) 0;
}
