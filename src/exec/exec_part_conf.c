/*
 * exec_part_conf.c — the settings of partitioned runs (issue 14:
 * gpudl.partitions, gpudl.devices, the replication threshold), how many
 * partitions a run gets and on which devices, and the contexts of the
 * running partitioned run, released by gdl_engine_abort_cleanup after an
 * error (exec_part_abort).  The driver is exec_part_run.c.
 */
#include "exec_part_int.h"

#include <stdlib.h>
#include <string.h>

static int part_setting = 0;	/* gpudl.partitions */
static int part_ndevs = 0;		/* gpudl.devices: 0 = all */
static int part_devs[GDL_PART_MAX];
static int64_t part_min_rows = 100000;

/* The contexts of the running partitioned run, for exec_part_abort. */
static const GdlBackend *live_bk;
static void *live_ctx[GDL_PART_MAX];

/* Partitions of the next runs (0: one per device). */
void
gdl_engine_set_partitions(int n)
{
	part_setting = n < 0 ? 0 : (n > GDL_PART_MAX ? GDL_PART_MAX : n);
}

int
gdl_engine_partitions(void)
{
	return part_setting;
}

/* The GPU ordinals partitions run on (n = 0: all). */
void
gdl_engine_set_devices(const int *ids, int n)
{
	int			i;

	part_ndevs = n < 0 ? 0 : (n > GDL_PART_MAX ? GDL_PART_MAX : n);
	for (i = 0; i < part_ndevs; i++)
		part_devs[i] = ids[i];
}

/* Tables under this many rows are replicated. */
void
gdl_engine_set_part_min_rows(int64_t rows)
{
	part_min_rows = rows < 0 ? 0 : rows;
}

/* "all" or "0,1,3" -> ordinals; the count (0: all), -1 when not valid. */
int
gdl_part_parse_devices(const char *text, int *ids)
{
	const char *s = text;
	int			n = 0;

	while (*s == ' ')
		s++;
	if (*s == '\0' || strcmp(s, "all") == 0)
		return 0;
	while (*s)
	{
		char	   *end;
		long		v;
		int			i;

		while (*s == ' ')
			s++;
		if (*s < '0' || *s > '9')
			return -1;
		v = strtol(s, &end, 10);
		if (v < 0 || v > 1023 || n == GDL_PART_MAX)
			return -1;
		for (i = 0; i < n; i++)
			if (ids[i] == (int) v)
				return -1;		/* listed twice */
		ids[n++] = (int) v;
		s = end;
		while (*s == ' ')
			s++;
		if (*s == ',')
			s++;
		else if (*s != '\0')
			return -1;
	}
	return n;
}

/* Release the contexts of a partitioned run an error interrupted. */
void
exec_part_abort(void)
{
	int			p;

	for (p = 0; p < GDL_PART_MAX; p++)
		if (live_ctx[p])
		{
			void	   *c = live_ctx[p];

			live_ctx[p] = NULL;
			if (live_bk && live_bk->ctx_abort)
				live_bk->ctx_abort(c);
		}
	if (live_bk && live_bk->select_device)
		(void) live_bk->select_device(0);	/* as at the end of a run */
	live_bk = NULL;
}

/* A context exec_check destroyed: no longer ours to abort. */
void
exec_part_forget(void *ctx)
{
	int			p;

	for (p = 0; p < GDL_PART_MAX && ctx; p++)
		if (live_ctx[p] == ctx)
			live_ctx[p] = NULL;
}

/* Partitions and their devices for this run; 0 when the run is not partitioned. */
int
part_choose(const GdlBackend *bk, const GdlRunInput *in, int *dev)
{
	static int	ndev_cached = -1;
	int			ndev = 1,
				P,
				p,
				nuse;
	int			use[GDL_PART_MAX];

	if (part_setting == 1)
		return 0;
	if (in->device == GDL_DEVICE_GPU && bk->device_count && bk->select_device)
	{
		if (ndev_cached < 0)
			ndev_cached = bk->device_count();
		ndev = ndev_cached > 0 ? ndev_cached : 1;
	}
	if (part_setting == 0 && (in->device != GDL_DEVICE_GPU || ndev <= 1 ||
							  part_ndevs == 1))
		return 0;				/* one device: the unpartitioned path */
	if (in->device == GDL_DEVICE_GPU && bk->select_device)
	{
		nuse = 0;
		if (part_ndevs == 0)
			for (p = 0; p < ndev && p < GDL_PART_MAX; p++)
				use[nuse++] = p;
		else
			for (p = 0; p < part_ndevs; p++)
			{
				if (part_devs[p] >= ndev)
					gdl_error(GDL_ERR_PARAM, NULL, "Set gpudl.devices to ordinals below the device count, or to 'all'.",
							  "gpudl.devices names GPU %d, but there are %d", part_devs[p], ndev);
				use[nuse++] = part_devs[p];
			}
	}
	else
	{
		nuse = 1;
		use[0] = -1;			/* the CPU, or a backend of one device */
	}
	P = part_setting > 0 ? part_setting : nuse;
	if (P <= 1)
		return 0;
	for (p = 0; p < P; p++)
		dev[p] = use[p % nuse];
	return P;
}

/* A partitioned run starts on backend bk: its contexts are recorded as made. */
void
part_live_begin(const GdlBackend *bk)
{
	live_bk = bk;
}

void
part_live_set(int p, void *ctx)
{
	live_ctx[p] = ctx;
}

/* The run ended normally (its contexts are destroyed). */
void
part_live_end(void)
{
	int			p;

	for (p = 0; p < GDL_PART_MAX; p++)
		live_ctx[p] = NULL;
	live_bk = NULL;
}

/* Tables under this many rows are replicated. */
int64_t
part_min_rows_setting(void)
{
	return part_min_rows;
}

