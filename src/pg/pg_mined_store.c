/*
 * pg_mined_store.c — the rows of a committed mining run written into
 * gpudl.mined_rules in bulk: heap pages filled a batch at a time
 * (table_multi_insert, as COPY does) and the table's indexes updated per
 * row, instead of one executor row with a foreign-key check, a row trigger
 * and the row-level policy's subquery for each of millions of rules
 * (FB15k-237: 1.7 M rules, docs/BENCHMARKS.md).
 *
 * What the skipped per-row work guaranteed is guaranteed once per run:
 * the caller's 'modify' right on the program (gpudl_mine checks it before
 * mining; the row trigger skips catalog writes of gpudl's own functions and
 * the insert policy asks the same), the program row's existence (the
 * foreign key: the row is locked FOR KEY SHARE, as the key check locks it,
 * so it cannot go before this transaction ends), INSERT on the table and
 * USAGE on its sequence (checked as the executor and nextval check them).
 * Every column is set as the table's defaults set it: the id from the
 * sequence, mined_by the current role, mined_at the transaction's start.
 */
#include "pg/gpudl_kg.h"

#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/sequence.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

/* Rows handed to table_multi_insert at once (COPY's buffer holds 1,000). */
#define MINED_STORE_BATCH 1000

/* The table's columns a row sets (by name: sql/gpudl--0.2--0.3.sql and later). */
static const char *const column_names[] = {
	"id", "program", "target", "rule", "support", "head_coverage", "std_confidence",
	"pca_confidence", "body_size", "pca_body_size", "nbody", "params", "mined_by", "mined_at"
};
enum
{
	COL_ID, COL_PROGRAM, COL_TARGET, COL_RULE, COL_SUPPORT, COL_HEAD_COVERAGE,
	COL_STD_CONFIDENCE, COL_PCA_CONFIDENCE, COL_BODY_SIZE, COL_PCA_BODY_SIZE,
	COL_NBODY, COL_PARAMS, COL_MINED_BY, COL_MINED_AT, MINED_STORE_NCOLS
};

struct GpudlMinedStore
{
	Relation	rel;
	Oid			seq;			/* the id column's sequence */
	EState	   *estate;
	ResultRelInfo *rri;
	BulkInsertState bistate;
	CommandId	cid;
	TupleTableSlot *slots[MINED_STORE_BATCH];
	int			nbuffered;
	int			natts;			/* of the table (dropped columns included) */
	AttrNumber	col[MINED_STORE_NCOLS]; /* each column's index in a row */
	MemoryContext batch_cxt;	/* the buffered rows' values */
	Datum		program;
	Datum		params;
	Datum		mined_by;
	Datum		mined_at;
};

/* Raise 42501 unless the current role has the privilege on the relation. */
static void
require_privilege(Oid relid, AclMode mode, const char *what)
{
	if (pg_class_aclcheck(relid, GetUserId(), mode) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for %s %s", what, get_rel_name(relid)),
				 errhint("gpudl_mine(..., commit => true) stores rules as an INSERT into gpudl.mined_rules would.")));
}

/*
 * Lock the program's row FOR KEY SHARE (what the foreign key's check
 * locks), so that it stays while the rows naming it are written; an error
 * if it is gone.
 */
static void
lock_program_row(const char *program)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(program)};
	Oid			programs = get_relname_relid("programs", get_namespace_oid("gpudl", false));
	Oid			save_userid;
	int			save_sec;
	uint64		found;
	Relation	rel = table_open(programs, AccessShareLock);
	Oid			owner = rel->rd_rel->relowner;

	table_close(rel, AccessShareLock);

	/*
	 * As the table's owner, without its row-level security, as the foreign
	 * key's check runs (ri_triggers.c): a row lock needs more than the
	 * caller's rights on it, and the caller's right on the program is
	 * checked already.  An error restores the role with the transaction.
	 */
	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(owner,
						   save_sec | SECURITY_LOCAL_USERID_CHANGE | SECURITY_NOFORCE_RLS);
	SPI_connect();
	if (SPI_execute_with_args("SELECT 1 FROM gpudl.programs WHERE name = $1 FOR KEY SHARE",
							  1, argtypes, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "gpudl: could not lock the program's row");
	found = SPI_processed;
	SPI_finish();
	SetUserIdAndSecContext(save_userid, save_sec);
	if (found != 1)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("program \"%s\" does not exist", program)));
}

/* See gpudl_kg.h. */
GpudlMinedStore *
gpudl_mined_store_begin(const char *program, Datum params)
{
	GpudlMinedStore *st = palloc0(sizeof(GpudlMinedStore));
	Oid			relid = get_relname_relid("mined_rules", get_namespace_oid("gpudl", false));
	List	   *seqs;

	lock_program_row(program);
	require_privilege(relid, ACL_INSERT, "table");
	st->rel = table_open(relid, RowExclusiveLock);
	seqs = getOwnedSequences(relid);
	if (list_length(seqs) != 1)
		elog(ERROR, "gpudl: gpudl.mined_rules has %d sequences, expected its id's", list_length(seqs));
	st->seq = linitial_oid(seqs);
	st->natts = RelationGetDescr(st->rel)->natts;
	for (int c = 0; c < MINED_STORE_NCOLS; c++)
	{
		AttrNumber	a = get_attnum(relid, column_names[c]);

		if (a == InvalidAttrNumber)
			elog(ERROR, "gpudl: gpudl.mined_rules has no column %s", column_names[c]);
		st->col[c] = a - 1;
	}
	st->estate = CreateExecutorState();
	st->rri = makeNode(ResultRelInfo);
	InitResultRelInfo(st->rri, st->rel, 1, NULL, 0);
	ExecOpenIndices(st->rri, false);
	st->bistate = GetBulkInsertState();
	st->cid = GetCurrentCommandId(true);
	for (int i = 0; i < MINED_STORE_BATCH; i++)
		st->slots[i] = table_slot_create(st->rel, &st->estate->es_tupleTable);
	st->batch_cxt = AllocSetContextCreate(CurrentMemoryContext, "gpudl mined rules batch",
										  ALLOCSET_DEFAULT_SIZES);
	st->program = CStringGetTextDatum(program);
	st->params = params;
	st->mined_by = ObjectIdGetDatum(GetUserId());
	st->mined_at = TimestampTzGetDatum(GetCurrentTransactionStartTimestamp());
	return st;
}

/* Write the buffered rows: their heap tuples at once, then each one's index entries. */
static void
flush_rows(GpudlMinedStore *st)
{
	if (st->nbuffered == 0)
		return;
	table_multi_insert(st->rel, st->slots, st->nbuffered, st->cid, 0, st->bistate);
	for (int i = 0; i < st->nbuffered; i++)
	{
		List	   *recheck = ExecInsertIndexTuples(st->rri, st->slots[i], st->estate,
													false, false, NULL, NIL);

		list_free(recheck);
		ExecClearTuple(st->slots[i]);
	}
	ResetPerTupleExprContext(st->estate);
	MemoryContextReset(st->batch_cxt);
	st->nbuffered = 0;
	CHECK_FOR_INTERRUPTS();
}

/* See gpudl_kg.h. */
void
gpudl_mined_store_add(GpudlMinedStore *st, const char *target, const char *text, const GdlMineRule *r)
{
	TupleTableSlot *slot = st->slots[st->nbuffered];
	MemoryContext old = MemoryContextSwitchTo(st->batch_cxt);
	Datum		v[MINED_STORE_NCOLS];

	ExecClearTuple(slot);
	v[COL_ID] = Int64GetDatum(nextval_internal(st->seq, true));
	v[COL_PROGRAM] = st->program;
	v[COL_TARGET] = CStringGetTextDatum(target);
	v[COL_RULE] = CStringGetTextDatum(text);
	v[COL_SUPPORT] = Int64GetDatum(r->support);
	v[COL_HEAD_COVERAGE] = Float8GetDatum(r->head_coverage);
	v[COL_STD_CONFIDENCE] = Float8GetDatum(r->std_confidence);
	v[COL_PCA_CONFIDENCE] = Float8GetDatum(r->pca_confidence);
	v[COL_BODY_SIZE] = Int64GetDatum(r->body_size);
	v[COL_PCA_BODY_SIZE] = Int64GetDatum(r->pca_body_size);
	v[COL_NBODY] = Int32GetDatum(r->nbody);
	v[COL_PARAMS] = st->params;
	v[COL_MINED_BY] = st->mined_by;
	v[COL_MINED_AT] = st->mined_at;
	/* dropped columns (none today) stay null */
	memset(slot->tts_isnull, true, sizeof(bool) * st->natts);
	for (int c = 0; c < MINED_STORE_NCOLS; c++)
	{
		slot->tts_values[st->col[c]] = v[c];
		slot->tts_isnull[st->col[c]] = c == COL_PARAMS && st->params == (Datum) 0;
	}
	ExecStoreVirtualTuple(slot);
	MemoryContextSwitchTo(old);
	if (++st->nbuffered == MINED_STORE_BATCH)
		flush_rows(st);
}

/* See gpudl_kg.h. */
void
gpudl_mined_store_end(GpudlMinedStore *st)
{
	flush_rows(st);
	ExecCloseIndices(st->rri);
	FreeBulkInsertState(st->bistate);
	table_finish_bulk_insert(st->rel, 0);
	ExecResetTupleTable(st->estate->es_tupleTable, false);
	FreeExecutorState(st->estate);
	table_close(st->rel, NoLock);	/* the lock stays to the transaction's end */
	MemoryContextDelete(st->batch_cxt);
	/* the rows are visible to the statements after this one, as an INSERT's */
	CommandCounterIncrement();
}
