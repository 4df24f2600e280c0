/*
 * pg_part.h — the PostgreSQL side of partitioned runs (issue 14, pg_part.c):
 * gpudl.partitions and gpudl.devices, and what a partitioned run shows in
 * EXPLAIN ANALYZE and gpudl_device_info().
 */
#ifndef PG_PART_H
#define PG_PART_H

#include "pg/gpudl_run.h"
#include "exec/gdl_part.h"
#include "commands/explain.h"
#include "funcapi.h"

extern int	gpudl_partitions;

extern void gpudl_part_define_gucs(void);

/* Around one gdl_run: the partitions it may use; then what it did. */
extern int	gpudl_part_run_begin(const GdlRunInput *in);
extern void gpudl_part_run_end(int saved, const GdlResult *res);

/* gpudl_device_info's rows of the session's last partitioned run. */
extern void gpudl_part_device_rows(ReturnSetInfo *rsinfo);

/* EXPLAIN ANALYZE: the partitions of the scan's last run. */
extern void gpudl_part_explain(int nparts, const GdlPartStats *parts, bool details,
							   ExplainState *es);

#endif							/* PG_PART_H */
