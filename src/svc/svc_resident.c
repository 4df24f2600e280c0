/*
 * svc_resident.c — tables loaded with gpudl_load, kept on the device once
 * for the whole cluster while the GPU service runs.
 *
 * Each session still reads the table itself, with its own rights (its host
 * copy also serves its CPU runs); what is shared is the device copy.  A
 * registry in shared memory maps (database, table, fingerprint) to the
 * service's resident handle.  The fingerprint hashes the columns' values
 * and the table's text in dictionary order, so two sessions share a copy
 * only when they would have built the very same one: text ids then mean the
 * same strings in both.  Sessions never get rows they could not read:
 * every query still checks the caller's SELECT right and the table's change
 * counter before it uses its cache entry (pg_cache.c), whatever the device
 * copy.
 *
 * A copy stays while any session's cache entry refers to it, and after
 * that until its memory is needed: a run or a new copy that does not fit in
 * the device budget evicts unreferenced copies, least recently used first.
 * Copies count against the device budget (gpudl.device_memory_budget).
 */
#include "svc/svc_int.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "utils/lsyscache.h"

/* This backend's references, released at exit (cache contexts are not). */
#define MAX_LOCAL_REFS 64
static int	local_refs[MAX_LOCAL_REFS];
static int	nlocal_refs = 0;
static bool exit_hook = false;

/* Release one reference (resident lock held). */
static void
unref_locked(int idx)
{
	SvcResident *r = &svc_shared->residents[idx];

	if (r->used && r->refs > 0)
		r->refs--;
}

/* Backend exit: drop the references this session still holds. */
static void
release_refs_at_exit(int code, Datum arg)
{
	int			i;

	if (!svc_active() || nlocal_refs == 0)
		return;
	LWLockAcquire(svc_resident_lock(), LW_EXCLUSIVE);
	for (i = 0; i < nlocal_refs; i++)
		unref_locked(local_refs[i]);
	LWLockRelease(svc_resident_lock());
	nlocal_refs = 0;
}

/* Remember (or forget) a reference of this session. */
static void
local_ref(int idx, bool add)
{
	int			i;

	if (!exit_hook)
	{
		before_shmem_exit(release_refs_at_exit, (Datum) 0);
		exit_hook = true;
	}
	if (add)
	{
		if (nlocal_refs < MAX_LOCAL_REFS)
			local_refs[nlocal_refs++] = idx;
		return;
	}
	for (i = 0; i < nlocal_refs; i++)
		if (local_refs[i] == idx)
		{
			local_refs[i] = local_refs[--nlocal_refs];
			return;
		}
}

/*
 * Evict unreferenced copies, least recently used first, until 'bytes' more
 * fit in the device budget (or none is left).  Returns whether they fit.
 */
bool
svc_resident_make_room(int64 bytes)
{
	for (;;)
	{
		int64		budget = svc_budget(SVC_RES_DEVICE);
		int			victim = -1;
		int64		handle = 0,
					vbytes = 0;
		int			i;

		if ((int64) pg_atomic_read_u64(&svc_shared->committed[SVC_RES_DEVICE]) + bytes <= budget)
			return true;
		LWLockAcquire(svc_resident_lock(), LW_EXCLUSIVE);
		for (i = 0; i < SVC_MAX_RESIDENTS; i++)
		{
			SvcResident *r = &svc_shared->residents[i];

			if (r->used && r->refs == 0 &&
				(victim < 0 || r->last_used < svc_shared->residents[victim].last_used))
				victim = i;
		}
		if (victim >= 0)
		{
			handle = svc_shared->residents[victim].handle;
			vbytes = svc_shared->residents[victim].bytes;
			memset(&svc_shared->residents[victim], 0, sizeof(SvcResident));
		}
		LWLockRelease(svc_resident_lock());
		if (victim < 0)
			return false;
		elog(DEBUG1, "gpudl: evicting a shared device copy (%lld bytes) to make room",
			 (long long) vbytes);
		svc_proxy_resident_free_raw(handle);
		pg_atomic_fetch_sub_u64(&svc_shared->committed[SVC_RES_DEVICE], (uint64) vbytes);
	}
}

/* Fingerprint of a table's columns and its text, in dictionary order. */
uint64
svc_resident_fingerprint(int ncols, int64 nrows, const int64 *const *cols,
						 int nstrings, const char *(*string_at) (void *arg, int i, int *len),
						 void *arg)
{
	uint64		h = 1469598103934665603ULL ^ (uint64) nrows ^ ((uint64) ncols << 56);
	int			c,
				i;
	int64		r;

	for (c = 0; c < ncols; c++)
		for (r = 0; r < nrows; r++)
		{
			h ^= (uint64) cols[c][r];
			h *= 1099511628211ULL;
			h ^= h >> 29;
		}
	for (i = 0; i < nstrings; i++)
	{
		int			len;
		const char *s = string_at(arg, i, &len);

		for (c = 0; c < len; c++)
		{
			h ^= (unsigned char) s[c];
			h *= 1099511628211ULL;
		}
		h ^= 0x1ff;
		h *= 1099511628211ULL;
	}
	return h;
}

/*
 * A device copy of a table for this session: the cluster's copy with the
 * same fingerprint when there is one, else a new one (made room for by
 * eviction).  Returns the proxy's resident handle, or NULL with *why.
 */
void *
svc_resident_acquire(Oid relid, uint64 fingerprint, int ncols, int64 nrows,
					 const int64 *const *cols, int64 *bytes, const char **why)
{
	int			i,
				free_idx = -1;
	int64		handle = 0;
	int64		got = 0;
	int64		estimate = (int64) ncols * nrows * 8 + 4096;

	LWLockAcquire(svc_resident_lock(), LW_EXCLUSIVE);
	for (i = 0; i < SVC_MAX_RESIDENTS; i++)
	{
		SvcResident *r = &svc_shared->residents[i];

		if (r->used && r->dbid == MyDatabaseId && r->relid == relid &&
			r->fingerprint == fingerprint && r->ncols == ncols && r->nrows == nrows)
		{
			r->refs++;
			r->last_used = svc_shared->next_stamp++;
			*bytes = r->bytes;
			handle = r->handle;
			LWLockRelease(svc_resident_lock());
			local_ref(i, true);
			return svc_proxy_resident_wrap(handle, i);
		}
		if (!r->used && free_idx < 0)
			free_idx = i;
	}
	LWLockRelease(svc_resident_lock());

	if (!svc_resident_make_room(estimate))
	{
		*why = "the device budget is held by running queries and loaded tables in use";
		return NULL;
	}
	if (!svc_proxy_resident_create_raw(ncols, nrows, cols, &handle, &got, why))
		return NULL;
	pg_atomic_fetch_add_u64(&svc_shared->committed[SVC_RES_DEVICE], (uint64) got);

	LWLockAcquire(svc_resident_lock(), LW_EXCLUSIVE);
	if (free_idx < 0 || svc_shared->residents[free_idx].used)
		for (free_idx = -1, i = 0; i < SVC_MAX_RESIDENTS && free_idx < 0; i++)
			if (!svc_shared->residents[i].used)
				free_idx = i;
	if (free_idx >= 0)
	{
		SvcResident *r = &svc_shared->residents[free_idx];

		r->used = true;
		r->dbid = MyDatabaseId;
		r->relid = relid;
		r->fingerprint = fingerprint;
		r->handle = handle;
		r->bytes = got;
		r->refs = 1;
		r->ncols = ncols;
		r->nrows = nrows;
		r->last_used = svc_shared->next_stamp++;
		strlcpy(r->relname, get_rel_name(relid) ? get_rel_name(relid) : "?", sizeof(r->relname));
	}
	LWLockRelease(svc_resident_lock());
	*bytes = got;
	if (free_idx < 0)
	{
		/* registry full: a private copy, freed with the session's entry */
		return svc_proxy_resident_wrap(handle, -1);
	}
	local_ref(free_idx, true);
	return svc_proxy_resident_wrap(handle, free_idx);
}

/*
 * This session's cache entry went away (gpudl_unload, a reload after the
 * table changed, a dropped table): the copy is freed when no other session
 * uses it, as the session asked or the copy is stale.  (Copies left by
 * sessions that ended stay until their memory is needed: they may be
 * loaded again.)  A private copy (registry full) is freed at once.
 */
void
svc_resident_release(int idx, int64 handle, int64 bytes)
{
	bool		free_it = idx < 0;

	if (idx >= 0)
	{
		LWLockAcquire(svc_resident_lock(), LW_EXCLUSIVE);
		if (svc_shared->residents[idx].used && svc_shared->residents[idx].handle == handle)
		{
			unref_locked(idx);
			if (svc_shared->residents[idx].refs == 0)
			{
				bytes = svc_shared->residents[idx].bytes;
				memset(&svc_shared->residents[idx], 0, sizeof(SvcResident));
				free_it = true;
			}
		}
		LWLockRelease(svc_resident_lock());
		local_ref(idx, false);
	}
	if (free_it)
	{
		svc_proxy_resident_free_raw(handle);
		pg_atomic_fetch_sub_u64(&svc_shared->committed[SVC_RES_DEVICE], (uint64) bytes);
	}
}

/* How many sessions use the copy of a table in this database (0: none). */
int
svc_resident_sharers(Oid relid, int64 *bytes)
{
	int			n = 0,
				i;

	if (!svc_active())
		return 0;
	LWLockAcquire(svc_resident_lock(), LW_SHARED);
	for (i = 0; i < SVC_MAX_RESIDENTS; i++)
	{
		SvcResident *r = &svc_shared->residents[i];

		if (r->used && r->dbid == MyDatabaseId && r->relid == relid)
		{
			n += r->refs;
			*bytes = r->bytes;
		}
	}
	LWLockRelease(svc_resident_lock());
	return n;
}
