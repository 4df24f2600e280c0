/*
 * gdl_part.h — partitioned evaluation (issue 14): the fixpoint spread over P
 * partitions, each a backend context of its own (several GPUs of one host,
 * several partitions on one GPU, or several CPU contexts standing in for
 * them in tests).  What the host sets and what a run reports per partition;
 * the driver is src/exec/exec_part.c, the exchange exec_part_xchg.c.
 *
 * With partitions <= 1 (the default) nothing here runs: gdl_run takes the
 * one-context path unchanged.
 */
#ifndef GDL_PART_H
#define GDL_PART_H

#include <stdint.h>

/* Most partitions (and devices) of one run. */
#define GDL_PART_MAX 64

/*
 * What one partition did in a run (GdlRunStats.parts[0..nparts)): its
 * device, the tuples it owns at the end, the rows and bytes it sent to and
 * received from the other partitions, and the time it spent exchanging
 * (download, bucketing, upload of the rows routed to their owners).
 */
typedef struct GdlPartStats
{
	int			device;			/* GPU ordinal, -1 on the CPU */
	int64_t		tuples;			/* rows of the derived relations it owns at the end */
	int64_t		rows_sent;		/* rows that left it for another partition */
	int64_t		rows_received;
	int64_t		bytes_sent;
	int64_t		bytes_received;
	double		ms_exchange;
	int64_t		peak_bytes;		/* most bytes its backend context held */
} GdlPartStats;

/*
 * Partitions of the next runs: 0 = one per device of gpudl.devices (so 1 on
 * the CPU and on a one-GPU machine: the unpartitioned path); n > 1 forces
 * the partitioned path with n partitions spread round-robin over the
 * devices (more than one per device when n exceeds them).
 */
extern void gdl_engine_set_partitions(int n);
extern int	gdl_engine_partitions(void);

/*
 * The GPUs partitions run on: ordinals ids[0..n); n = 0 means every device
 * the GPU backend reports.  Copied.
 */
extern void gdl_engine_set_devices(const int *ids, int n);

/*
 * Parse a gpudl.devices value ("all", or a comma-separated list of
 * ordinals) into ids[0..GDL_PART_MAX); returns the count (0 for "all"), or
 * -1 when the text is not valid.
 */
extern int	gdl_part_parse_devices(const char *text, int *ids);

/*
 * Extensional relations with fewer rows than this are replicated to every
 * partition instead of partitioned when a rule joins them with a partitioned
 * relation (default 100000).
 */
extern void gdl_engine_set_part_min_rows(int64_t rows);

#endif							/* GDL_PART_H */
