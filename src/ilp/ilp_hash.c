/*
 * ilp_hash.c — the two hash sets the ILP core needs: 64-bit keys (packed
 * tuples) and candidate rules keyed by their canonical form.  Open
 * addressing with linear probing, capacity a power of two, load <= 1/2.
 */
#include "ilp_int.h"

#include <string.h>

/* Round up to a power of two, at least 16. */
static int64_t
pow2_at_least(int64_t n)
{
	int64_t		c = 16;

	while (c < n)
		c <<= 1;
	return c;
}

/* Start an empty key set sized for about 'expect' keys. */
void
ilp_keyset_init(IlpKeySet *s, int64_t expect)
{
	s->n = 0;
	s->cap = pow2_at_least(expect * 2);
	s->slots = gdl_alloc(sizeof(uint64_t) * s->cap);
}

/* The hash of an occupied slot of a table (where grow_slots reinserts it). */
typedef uint64_t (*SlotHash) (const void *ctx, uint64_t slot);

/*
 * Double an open-addressing table of nonzero slots (*slots, *cap) and
 * reinsert every slot where hash(ctx, slot) probes to: both sets grow so.
 */
static void
grow_slots(uint64_t **slots, int64_t *cap, SlotHash hash, const void *ctx)
{
	uint64_t   *old = *slots;
	int64_t		oldcap = *cap;
	uint64_t   *t;

	*cap *= 2;
	t = *slots = gdl_alloc(sizeof(uint64_t) * *cap);
	for (int64_t i = 0; i < oldcap; i++)
	{
		if (old[i] != 0)
		{
			int64_t		h = hash(ctx, old[i]) & (*cap - 1);

			while (t[h] != 0)
				h = (h + 1) & (*cap - 1);
			t[h] = old[i];
		}
	}
	gdl_free(old);
}

/* SlotHash of a key set: the stored key (key + 1) mixed. */
static uint64_t
key_slot_hash(const void *ctx, uint64_t slot)
{
	(void) ctx;
	return ilp_mix64(slot);
}

/* Insert a key; false when it was already there. */
bool
ilp_keyset_add(IlpKeySet *s, uint64_t key)
{
	uint64_t	k = key + 1;
	int64_t		h;

	if ((s->n + 1) * 2 > s->cap)
		grow_slots(&s->slots, &s->cap, key_slot_hash, NULL);
	h = ilp_mix64(k) & (s->cap - 1);
	while (s->slots[h] != 0)
	{
		if (s->slots[h] == k)
			return false;
		h = (h + 1) & (s->cap - 1);
	}
	s->slots[h] = k;
	s->n++;
	return true;
}

/* Membership test. */
bool
ilp_keyset_has(const IlpKeySet *s, uint64_t key)
{
	uint64_t	k = key + 1;
	int64_t		h = ilp_mix64(k) & (s->cap - 1);

	while (s->slots[h] != 0)
	{
		if (s->slots[h] == k)
			return true;
		h = (h + 1) & (s->cap - 1);
	}
	return false;
}

/* Release the table. */
void
ilp_keyset_free(IlpKeySet *s)
{
	gdl_free(s->slots);
	s->slots = NULL;
	s->n = s->cap = 0;
}

/* Start an empty rule set. */
void
ilp_ruleset_init(IlpRuleSet *s)
{
	s->n = 0;
	s->cap = 1024;
	s->slots = gdl_alloc(sizeof(uint64_t) * s->cap);
	s->keycap = 512;
	s->keys = gdl_alloc(sizeof(IlpRule) * s->keycap);
}

/* SlotHash of a rule set: the hash of the rule the slot stands for. */
static uint64_t
rule_slot_hash(const void *ctx, uint64_t slot)
{
	const IlpRuleSet *s = ctx;

	return ilp_rule_hash(&s->keys[slot - 1]);
}

/* Insert a canonical rule; false when an equal rule is already there. */
bool
ilp_ruleset_add(IlpRuleSet *s, const IlpRule *r)
{
	int64_t		h;

	if ((s->n + 1) * 2 > s->cap)
		grow_slots(&s->slots, &s->cap, rule_slot_hash, s);
	h = ilp_rule_hash(r) & (s->cap - 1);
	while (s->slots[h] != 0)
	{
		if (ilp_rule_cmp(&s->keys[s->slots[h] - 1], r) == 0)
			return false;
		h = (h + 1) & (s->cap - 1);
	}
	if (s->n == s->keycap)
	{
		s->keycap *= 2;
		s->keys = gdl_realloc(s->keys, sizeof(IlpRule) * s->keycap);
	}
	s->keys[s->n] = *r;
	s->slots[h] = ++s->n;
	return true;
}

/* Release the set. */
void
ilp_ruleset_free(IlpRuleSet *s)
{
	gdl_free(s->slots);
	gdl_free(s->keys);
	memset(s, 0, sizeof(*s));
}
