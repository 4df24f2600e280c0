/*
 * test_lang.c — unit tests of the Datalog language layer: parsing into the
 * AST, printing back, error classes and their messages, resolution, type
 * inference, safety, stratification and the explain lines.  Tables come
 * from a fake resolver.
 */
#include "test_util.h"
#include "../../src/lang/gdl_lang.h"
#include "../../src/lang/lang_int.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ fixtures */

typedef struct FakeTable
{
	const char *name;
	const char *display;
	int			ncols;
	GdlType		types[4];
	const char *colnames[4];
	const char *typnames[4];
} FakeTable;

static const FakeTable tables[] = {
	{"edge", "public.edge", 2, {GDL_TYPE_INT, GDL_TYPE_INT}, {"src", "dst"}, {"int4", "int4"}},
	{"public.edge", "public.edge", 2, {GDL_TYPE_INT, GDL_TYPE_INT}, {"src", "dst"}, {"int4", "int4"}},
	{"node", "public.node", 1, {GDL_TYPE_INT}, {"id"}, {"int4"}},
	{"person", "public.person", 1, {GDL_TYPE_TEXT}, {"name"}, {"text"}},
	{"parent", "public.parent", 2, {GDL_TYPE_TEXT, GDL_TYPE_TEXT}, {"p", "c"}, {"text", "text"}},
	{"big", "public.big", 2, {GDL_TYPE_BIGINT, GDL_TYPE_BIGINT}, {"a", "b"}, {"int8", "int8"}},
	{"fl", "public.fl", 2, {GDL_TYPE_TEXT, GDL_TYPE_FLOAT8}, {"k", "v"}, {"text", "float8"}},
	{"flags", "public.flags", 2, {GDL_TYPE_TEXT, GDL_TYPE_BOOL}, {"k", "on"}, {"text", "bool"}},
	{"geo", "public.geo", 2, {GDL_TYPE_INT, GDL_TYPE_UNKNOWN}, {"id", "pos"}, {"int4", "point"}},
	{"sales.orders", "sales.orders", 2, {GDL_TYPE_INT, GDL_TYPE_TEXT}, {"id", "what"}, {"int4", "text"}},
};

static int	resolve_calls;

/* The fake host resolver: a fixed set of tables. */
static bool
fake_resolve(void *arg, const char *name, GdlRelInfo *out)
{
	size_t		i;

	resolve_calls++;
	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
	{
		const FakeTable *t = &tables[i];

		if (strcmp(t->name, name) != 0)
			continue;
		out->relid = 1000 + (uint32_t) i;
		out->display_name = (char *) t->display;
		out->ncols = t->ncols;
		out->types = (GdlType *) t->types;
		out->colnames = (char **) t->colnames;
		out->typnames = (char **) t->typnames;
		return true;
	}
	return false;
}

/* Parse, failing the test on an error. */
static GdlProgram *
parse_ok(const char *src)
{
	GdlProgram *volatile p = NULL;
	GdlError   *e = GDL_TRY(p = gdl_parse(src));

	CHECK_MSG(e == NULL, "parse of <%s> failed: %s", src, e ? e->message : "");
	return e ? NULL : p;
}

/* Parse, failing the test on an error or unless there are n items; NULL then. */
static GdlProgram *
parse_items(const char *src, int n)
{
	GdlProgram *p = parse_ok(src);

	CHECK(p && p->nitems == n);
	return p && p->nitems == n ? p : NULL;
}

/* Parse and analyse, failing the test on an error. */
static GdlAnalysis *
analyze_ok(const char *src)
{
	return gdl_test_analyze(src, fake_resolve);
}

/* Parse and analyse, returning the error (NULL if none). */
static GdlError *
run_err(const char *src)
{
	GdlProgram *volatile p = NULL;

	return GDL_TRY(p = gdl_parse(src); (void) gdl_analyze(p, fake_resolve, NULL));
}

/* Does hint h contain want (always true when want is NULL)? */
static bool
hint_has(const char *h, const char *want)
{
	return want == NULL || (h != NULL && strstr(h, want) != NULL);
}

/* Expect an error of 'code' whose message contains 'msg' (and hint 'hint'). */
#define EXPECT_ERR(src, code_, msg, hint_) do { \
	GdlError *e_ = run_err(src); \
	CHECK_MSG(e_ != NULL, "no error for <%s>", src); \
	if (e_) { \
		CHECK_MSG(e_->code == (code_), "<%s>: code %d, want %d (%s)", src, e_->code, code_, e_->message); \
		CHECK_MSG(strstr(e_->message, msg) != NULL, "<%s>: message <%s> lacks <%s>", src, e_->message, msg); \
		CHECK_MSG(hint_has(e_->hint, hint_), "<%s>: hint <%s> lacks <%s>", src, \
				  e_->hint ? e_->hint : "(null)", hint_ ? (const char *) hint_ : ""); \
	} } while (0)

/* Expect the detail of an error to contain a string. */
#define EXPECT_DETAIL(src, det) do { \
	GdlError *e_ = run_err(src); \
	CHECK_MSG(e_ && e_->detail && strstr(e_->detail, det), "<%s>: detail <%s> lacks <%s>", \
			  src, e_ && e_->detail ? e_->detail : "(null)", det); } while (0)

/* Canonical text of the only clause of a source. */
static const char *
canon(const char *src)
{
	GdlProgram *p = parse_ok(src);

	if (p == NULL || p->nitems != 1 || p->items[0].kind != GDL_ITEM_CLAUSE)
		return "(bad)";
	return gdl_clause_to_string(p->items[0].clause);
}

/* Type of argument i of predicate 'name'. */
static GdlType
ptype(const GdlAnalysis *a, const char *name, int i)
{
	int			id = a ? gdl_analysis_find_pred(a, name) : -1;

	if (id < 0 || i >= a->preds[id].arity)
		return (GdlType) -1;
	return a->preds[id].types[i];
}

/* ---------------------------------------------------------------- parse */

/* Facts, rules, comments and item texts. */
static void
test_parse_basic(void)
{
	const char *src =
		"% a comment\n"
		"edge(1, 2).   // trailing\n"
		"/* block\n comment */ path(X, Y) :- edge(X, Y).\n"
		"path(X, Z) :-\n   path(X, Y),  % recursive\n   edge(Y, Z).\n";
	GdlProgram *p = parse_items(src, 3);
	GdlClause  *c;

	if (!p)
		return;
	c = p->items[0].clause;
	CHECK(p->items[0].kind == GDL_ITEM_CLAUSE);
	CHECK(strcmp(c->head.name, "edge") == 0 && c->head.nargs == 2 && c->nbody == 0);
	CHECK(c->head.args[0]->kind == GDL_TERM_INT && c->head.args[0]->ival == 1);
	CHECK(strcmp(c->text, "edge(1, 2).") == 0);
	CHECK(c->loc.line == 2 && c->loc.col == 1);

	c = p->items[1].clause;
	CHECK(strcmp(c->text, "path(X, Y) :- edge(X, Y).") == 0);
	CHECK(c->loc.line == 4 && c->loc.col == 13);
	CHECK(c->nvars == 2 && strcmp(c->varnames[0], "X") == 0 && strcmp(c->varnames[1], "Y") == 0);
	CHECK(c->nbody == 1 && c->body[0].kind == GDL_LIT_ATOM);
	CHECK(c->head.args[1]->kind == GDL_TERM_VAR && c->head.args[1]->var == 1);
	CHECK(c->body[0].atom.args[0]->var == 0);

	c = p->items[2].clause;
	CHECK(strcmp(c->text, "path(X, Z) :-\n   path(X, Y),  % recursive\n   edge(Y, Z).") == 0);
	CHECK(c->nvars == 3 && strcmp(c->varnames[1], "Z") == 0);
	CHECK(strcmp(gdl_clause_to_string(c), "path(X, Z) :- path(X, Y), edge(Y, Z).") == 0);
	CHECK(strcmp(gdl_item_head(&p->items[2]), "path") == 0);

	/* empty and comment-only texts have no items */
	p = parse_ok("");
	CHECK(p && p->nitems == 0);
	p = parse_ok("  % nothing\n /* here */ // at all\n");
	CHECK(p && p->nitems == 0);
}

/* Constants of every kind. */
static void
test_parse_constants(void)
{
	GdlProgram *p = parse_items("k(\"al\\\"i\\\\ce\", bob, -7, 1.5, true, false, -2.5e3, 'sq', 9223372036854775807, -9223372036854775808).", 1);
	GdlTerm   **a;

	if (!p)
		return;
	a = p->items[0].clause->head.args;
	CHECK(p->items[0].clause->head.nargs == 10);
	CHECK(a[0]->kind == GDL_TERM_TEXT && strcmp(a[0]->text, "al\"i\\ce") == 0 && a[0]->quoted);
	CHECK(a[1]->kind == GDL_TERM_TEXT && strcmp(a[1]->text, "bob") == 0 && !a[1]->quoted);
	CHECK(a[2]->kind == GDL_TERM_INT && a[2]->ival == -7);
	CHECK(a[3]->kind == GDL_TERM_FLOAT && a[3]->fval == 1.5);
	CHECK(a[4]->kind == GDL_TERM_BOOL && a[4]->bval);
	CHECK(a[5]->kind == GDL_TERM_BOOL && !a[5]->bval);
	CHECK(a[6]->kind == GDL_TERM_FLOAT && a[6]->fval == -2500.0);
	CHECK(a[7]->kind == GDL_TERM_TEXT && strcmp(a[7]->text, "sq") == 0);
	CHECK(a[8]->kind == GDL_TERM_INT && a[8]->ival == INT64_MAX);
	CHECK(a[9]->kind == GDL_TERM_INT && a[9]->ival == INT64_MIN);
	CHECK(strcmp(gdl_clause_to_string(p->items[0].clause),
				 "k(\"al\\\"i\\\\ce\", bob, -7, 1.5, true, false, -2500.0, \"sq\", 9223372036854775807, -9223372036854775808).") == 0);
}

/* Negation, comparisons, arithmetic precedence, assignments, aggregates. */
static void
test_parse_body(void)
{
	GdlProgram *p = parse_ok("r(X) :- node(X), !p(X), not q(X, _), X != 3, X >= 1, X < 9, X <= 8, X > 0, X = X.");
	GdlClause  *c;
	GdlTerm    *t;

	CHECK(p && p->nitems == 1);
	if (!p)
		return;
	c = p->items[0].clause;
	CHECK(c->nbody == 9);
	CHECK(c->body[1].kind == GDL_LIT_NEG && strcmp(c->body[1].atom.name, "p") == 0);
	CHECK(c->body[2].kind == GDL_LIT_NEG && c->body[2].atom.args[1]->kind == GDL_TERM_ANON);
	CHECK(c->body[3].kind == GDL_LIT_CMP && c->body[3].cmp == GDL_CMP_NE);
	CHECK(c->body[4].cmp == GDL_CMP_GE && c->body[5].cmp == GDL_CMP_LT);
	CHECK(c->body[6].cmp == GDL_CMP_LE && c->body[7].cmp == GDL_CMP_GT);
	CHECK(c->body[8].cmp == GDL_CMP_EQ);

	/* precedence: 1 + 2 * 3 - 4 = (1 + (2 * 3)) - 4 */
	p = parse_ok("n(N) :- node(X), N = 1 + X * 3 - 4 / 2 % 5.");
	t = p ? p->items[0].clause->body[1].rhs : NULL;
	CHECK(t && t->kind == GDL_TERM_BINOP && t->op == GDL_OP_SUB);
	CHECK(t && t->left->kind == GDL_TERM_BINOP && t->left->op == GDL_OP_ADD);
	CHECK(t && t->left->right->op == GDL_OP_MUL);
	CHECK(t && t->right->op == GDL_OP_MOD && t->right->left->op == GDL_OP_DIV);

	/* parentheses and unary minus */
	p = parse_ok("n(N) :- node(X), N = -(X + 1) * -X - -3.");
	t = p ? p->items[0].clause->body[1].rhs : NULL;
	CHECK(t && t->op == GDL_OP_SUB && t->right->kind == GDL_TERM_INT && t->right->ival == -3);
	CHECK(t && t->left->op == GDL_OP_MUL && t->left->left->kind == GDL_TERM_NEG &&
		  t->left->left->left->op == GDL_OP_ADD && t->left->right->kind == GDL_TERM_NEG);

	/* aggregates */
	p = parse_ok("deg(X, count(Y)) :- edge(X, Y).");
	t = p ? p->items[0].clause->head.args[1] : NULL;
	CHECK(t && t->kind == GDL_TERM_AGG && t->agg == GDL_AGG_COUNT && t->arg->kind == GDL_TERM_VAR);
	p = parse_ok("s(sum(Y)) :- e(Y). m(min(Y)) :- e(Y). x(max(Y)) :- e(Y).");
	CHECK(p && p->items[0].clause->head.args[0]->agg == GDL_AGG_SUM);
	CHECK(p && p->items[1].clause->head.args[0]->agg == GDL_AGG_MIN);
	CHECK(p && p->items[2].clause->head.args[0]->agg == GDL_AGG_MAX);

	/* schema-qualified body atoms */
	p = parse_ok("o(I) :- sales.orders(I, _).");
	CHECK(p && strcmp(p->items[0].clause->body[0].atom.name, "sales.orders") == 0);

	/* % as modulo vs comment */
	p = parse_ok("m(N) :- node(X), N = X % 2. % a comment\nm2(N) :- node(X), N = (X + 1) % (X - 2).");
	CHECK(p && p->nitems == 2);
	CHECK(p && p->items[0].clause->body[1].rhs->op == GDL_OP_MOD);
	CHECK(p && p->items[1].clause->body[1].rhs->op == GDL_OP_MOD);
	p = parse_ok("a(X) :- node(X) % Comment here\n.");
	CHECK(p && p->nitems == 1);
	p = parse_ok("a(X) :- node(X), X > 5 % comment\n.");
	CHECK(p && p->nitems == 1 && p->items[0].clause->body[1].rhs->kind == GDL_TERM_INT);
}

/* .decl items and their texts. */
static void
test_parse_decl(void)
{
	GdlProgram *p = parse_items(".decl score(who: text, points: bigint)\n"
								".decl f(x: double precision, b: boolean, i: integer).\n"
								".decl g(int, text)\n"
								"score(\"a\", 1).", 4);
	GdlDecl    *d;

	if (!p)
		return;
	d = p->items[0].decl;
	CHECK(p->items[0].kind == GDL_ITEM_DECL);
	CHECK(strcmp(d->name, "score") == 0 && d->nargs == 2);
	CHECK(strcmp(d->argnames[0], "who") == 0 && d->types[0] == GDL_TYPE_TEXT);
	CHECK(strcmp(d->argnames[1], "points") == 0 && d->types[1] == GDL_TYPE_BIGINT);
	CHECK(strcmp(d->text, ".decl score(who: text, points: bigint)") == 0);
	d = p->items[1].decl;
	CHECK(d->types[0] == GDL_TYPE_FLOAT8 && d->types[1] == GDL_TYPE_BOOL && d->types[2] == GDL_TYPE_INT);
	CHECK(strcmp(d->text, ".decl f(x: double precision, b: boolean, i: integer).") == 0);
	d = p->items[2].decl;
	CHECK(d->nargs == 2 && strcmp(d->argnames[0], "arg1") == 0 && d->types[1] == GDL_TYPE_TEXT);
	CHECK(strcmp(gdl_decl_to_string(p->items[0].decl), ".decl score(who: text, points: bigint)") == 0);
	CHECK(strcmp(gdl_item_head(&p->items[0]), "score") == 0);
	/* decls back to back without '.' */
	p = parse_ok(".decl a(x: int).decl b(y: int)");
	CHECK(p && p->nitems == 2 && strcmp(p->items[1].decl->name, "b") == 0);
}

/* Printing gives canonical text that parses back the same. */
static void
test_print(void)
{
	CHECK(strcmp(canon("p(X,Y):-q(X,Y),X!=Y."), "p(X, Y) :- q(X, Y), X != Y.") == 0);
	CHECK(strcmp(canon("p(N) :- q(X), N = (X + 1) * 2."), "p(N) :- q(X), N = (X + 1) * 2.") == 0);
	CHECK(strcmp(canon("p(N) :- q(X), N = X - (1 - 2)."), "p(N) :- q(X), N = X - (1 - 2).") == 0);
	CHECK(strcmp(canon("p(N) :- q(X), N = (X - 1) - 2."), "p(N) :- q(X), N = X - 1 - 2.") == 0);
	CHECK(strcmp(canon("p(N) :- q(X), N = -(5)."), "p(N) :- q(X), N = -(5).") == 0);
	CHECK(strcmp(canon("p(N) :- q(X), N = - -X."), "p(N) :- q(X), N = - -X.") == 0);
	CHECK(strcmp(canon("p(2.0, -0.5, \"a b\", \"x\", not_, \"true\")."),
				 "p(2.0, -0.5, \"a b\", \"x\", not_, \"true\").") == 0);
	CHECK(strcmp(canon("p(X) :- q(X), not r(X)."), "p(X) :- q(X), !r(X).") == 0);
	CHECK(strcmp(canon("d(X, count(Y)) :- e(X, Y)."), "d(X, count(Y)) :- e(X, Y).") == 0);
	/* '%' next to a constant stays modulo after printing */
	CHECK(strcmp(canon("p(N) :- q(X), N = X % (\"a\")."), "p(N) :- q(X), N = X % (\"a\").") == 0);
	CHECK(strcmp(canon("p(N) :- q(X), N = X % (abc)."), "p(N) :- q(X), N = X % (abc).") == 0);
	CHECK(strcmp(canon("p(N) :- q(X), N = (abc) % X."), "p(N) :- q(X), N = abc % X.") == 0);
	CHECK(strcmp(canon("p(N) :- q(X), N = abc % X."), "p(N) :- q(X), N = abc % X.") == 0);
	CHECK(strcmp(gdl_type_name(GDL_TYPE_FLOAT8), "float8") == 0);
	CHECK(strcmp(gdl_type_name(GDL_TYPE_INT), "int") == 0);
	CHECK(gdl_type_from_name("INT8") == GDL_TYPE_BIGINT);
	CHECK(gdl_type_from_name("varchar") == GDL_TYPE_TEXT);
	CHECK(gdl_type_from_name("point") == GDL_TYPE_UNKNOWN);
}

/* gdl_program_append concatenates items. */
static void
test_append(void)
{
	GdlProgram *p = parse_ok("a(1).");
	GdlProgram *q = parse_ok("b(X) :- a(X). c(2).");

	if (!p || !q)
		return;
	gdl_program_append(p, q);
	CHECK(p->nitems == 3 && strcmp(gdl_item_head(&p->items[2]), "c") == 0);
	gdl_program_append(p, parse_ok(""));
	CHECK(p->nitems == 3);
}

/* --------------------------------------------------------- syntax errors */

static void
test_syntax_errors(void)
{
	GdlError   *e;

	EXPECT_ERR("edge(1, 2).\npath(X, Y :- edge(X, Y).", GDL_ERR_SYNTAX,
			   "syntax error at line 2, column 11: expected \",\" or \")\" but found \":-\"", NULL);
	e = run_err("edge(1, 2).\npath(X, Y :- edge(X, Y).");
	CHECK(e && e->detail && strcmp(e->detail, "line 2: path(X, Y :- edge(X, Y).\n                  ^") == 0);
	EXPECT_ERR("p(X) :- q(X)", GDL_ERR_SYNTAX, "line 1, column 13: expected \",\" or \".\" but found end of input",
			   "every clause ends with");
	EXPECT_ERR("p(\"abc).", GDL_ERR_SYNTAX, "line 1, column 3: unterminated string", NULL);
	EXPECT_ERR("p(\"a\\qb\").", GDL_ERR_SYNTAX, "invalid escape sequence \"\\q\" in string", NULL);
	EXPECT_ERR("p(1).\n/* never closed", GDL_ERR_SYNTAX, "line 2, column 1: unterminated /* comment", NULL);
	EXPECT_ERR("p(X) # q(X).", GDL_ERR_SYNTAX, "line 1, column 6: unexpected character \"#\"", NULL);
	EXPECT_ERR("p(\xc3\xa9t\xc3\xa9).", GDL_ERR_SYNTAX, "unexpected character \"\xc3\xa9\"", NULL);
	EXPECT_ERR("p(99999999999999999999).", GDL_ERR_SYNTAX, "integer constant 99999999999999999999 is out of range", NULL);
	EXPECT_ERR("p(9223372036854775808).", GDL_ERR_SYNTAX, "integer constant 9223372036854775808 is out of range", NULL);
	EXPECT_ERR("p(1e999).", GDL_ERR_SYNTAX, "float constant 1e999 is out of range", NULL);
	EXPECT_ERR("Edge(1, 2).", GDL_ERR_SYNTAX, "expected a fact, a rule or .decl but found \"Edge\"",
			   "predicate names start with a lower-case letter");
	EXPECT_ERR("p(X) :- Q(X).", GDL_ERR_SYNTAX, "expected a predicate name but found \"Q\"",
			   "write other names in quotes, as in \"Q\"(...)");
	EXPECT_ERR("p(X) :- e(X, _), !_q(X).", GDL_ERR_SYNTAX, "column 19: expected a predicate name",
			   "as in \"_q\"(...)");
	EXPECT_ERR("p(X+1) :- node(X).", GDL_ERR_SYNTAX, "arithmetic is not allowed as an argument of an atom",
			   "N = X + 1");
	EXPECT_ERR("p(X) :- e(count(X)).", GDL_ERR_SYNTAX, "aggregate count(...) is only allowed in the head", NULL);
	EXPECT_ERR("p(count(1)) :- e(X).", GDL_ERR_SYNTAX, "expected a variable to aggregate in count(...)", NULL);
	EXPECT_ERR("p(count(X), sum(Y)) :- e(X, Y).", GDL_ERR_SYNTAX, "only one aggregate per rule head", NULL);
	EXPECT_ERR("p() :- e(X).", GDL_ERR_SYNTAX, "expected an argument but found \")\"", "at least one argument");
	EXPECT_ERR("done :- e(X).", GDL_ERR_SYNTAX, "expected \"(\" after predicate name \"done\"", NULL);
	EXPECT_ERR(".decl p(a: point)", GDL_ERR_DATATYPE, "unknown type \"point\" in .decl of \"p\"", "supported types");
	EXPECT_ERR(".decl p()", GDL_ERR_SYNTAX, "expected an argument declaration", NULL);
	EXPECT_ERR("p(X) :- e(X), .", GDL_ERR_SYNTAX, "expected a constant, a variable or \"(\" but found \".\"", NULL);
	EXPECT_ERR("p(1) p(2).", GDL_ERR_SYNTAX, "expected \":-\" or \".\" but found \"p\"", NULL);
	EXPECT_ERR("p(X) :- e(X), X = ((((1)).", GDL_ERR_SYNTAX, "expected \")\" but found \".\"", NULL);

	/* caret under a tab-indented column, and line numbers past the first */
	e = run_err("a(1).\n\n\tb(X) :- ;");
	CHECK(e && strstr(e->message, "line 3, column 10") != NULL);
	CHECK(e && e->detail && strcmp(e->detail, "line 3: \tb(X) :- ;\n        \t        ^") == 0);

	/* deep nesting is an error, not a crash */
	{
		GdlBuf		b;
		int			i;

		gdl_buf_init(&b);
		gdl_buf_append(&b, "p(N) :- e(N), N = ");
		for (i = 0; i < 5000; i++)
			gdl_buf_putc(&b, '(');
		EXPECT_ERR(b.data, GDL_ERR_SYNTAX, "nested too deeply", NULL);
		gdl_buf_init(&b);
		gdl_buf_append(&b, "p(N) :- e(N), N = 1");
		for (i = 0; i < 5000; i++)
			gdl_buf_append(&b, " + 1");
		EXPECT_ERR(b.data, GDL_ERR_SYNTAX, "too many operators in one clause", NULL);
		gdl_buf_init(&b);
		gdl_buf_append(&b, "p(N) :- e(N), N = ");
		for (i = 0; i < 5000; i++)
			gdl_buf_append(&b, "- ");
		gdl_buf_append(&b, "N.");
		EXPECT_ERR(b.data, GDL_ERR_SYNTAX, "nested too deeply", NULL);
	}
}

/* -------------------------------------------------------------- analysis */

/* IDB/EDB resolution, arity and unsupported columns. */
static void
test_resolve(void)
{
	GdlAnalysis *a = analyze_ok("path(X, Y) :- edge(X, Y).\npath(X, Z) :- path(X, Y), edge(Y, Z).\n"
								"o(I, W) :- sales.orders(I, W).");
	int			path;
	int			edge;

	CHECK(a != NULL);
	if (!a)
		return;
	CHECK(a->npreds == 4);
	path = gdl_analysis_find_pred(a, "path");
	edge = gdl_analysis_find_pred(a, "edge");
	CHECK(path == 0 && edge == 1);
	CHECK(!a->preds[path].is_edb && a->preds[edge].is_edb);
	CHECK(a->preds[edge].rel.relid == 1000 && strcmp(a->preds[edge].rel.display_name, "public.edge") == 0);
	CHECK(a->preds[edge].stratum == -1 && a->preds[path].stratum == 0);
	CHECK(a->preds[path].nclauses == 2 && a->preds[path].clauses[1] == 1);
	CHECK(a->nclauses == 3 && a->clauses[1].head_pred == path);
	CHECK(a->clauses[1].lit_pred[0] == path && a->clauses[1].lit_pred[1] == edge);
	CHECK(a->clauses[2].lit_pred[0] == gdl_analysis_find_pred(a, "sales.orders"));
	CHECK(gdl_analysis_find_pred(a, "nope") == -1);
	CHECK(a->preds[path].first_use.line == 1);

	/* a rule-defined name shadows a table of that name */
	resolve_calls = 0;
	a = analyze_ok("edge(1, \"x\"). p(X) :- edge(X, _).");
	CHECK(a && !a->preds[gdl_analysis_find_pred(a, "edge")].is_edb);
	CHECK(resolve_calls == 0);

	EXPECT_ERR("p(X) :- foo(X).", GDL_ERR_UNDEFINED,
			   "predicate \"foo\" is not defined by any rule and no table \"foo\" exists", "gpudl_bind");
	EXPECT_DETAIL("p(X) :- foo(X).", "used at line 1, column 9 in rule: p(X) :- foo(X).");
	EXPECT_ERR("p(X) :- nope.tab(X).", GDL_ERR_UNDEFINED, "predicate \"nope.tab\" is not defined", "search_path");
	EXPECT_ERR("p(X) :- edge(X).", GDL_ERR_DATATYPE,
			   "arity mismatch for predicate \"edge\": used with 1 argument at line 1, column 9, but table public.edge has 2 columns",
			   "use _ for columns");
	EXPECT_ERR("p(1, 2).\nq(X) :- p(X).", GDL_ERR_DATATYPE,
			   "arity mismatch for predicate \"p\": used with 1 argument at line 2, column 9, but it is used with 2 arguments at line 1, column 1",
			   NULL);
	EXPECT_ERR(".decl p(a: int)\np(1, 2).", GDL_ERR_DATATYPE,
			   "used with 2 arguments at line 2, column 1, but it is declared with 1 argument at line 1", NULL);
	EXPECT_ERR("p(1, 2).\n.decl p(a: int)", GDL_ERR_DATATYPE,
			   "declared with 1 argument at line 2, column 1, but it is used with 2 arguments at line 1, column 1", NULL);
	EXPECT_ERR(".decl p(a: int)\n.decl p(a: int)", GDL_ERR_DATATYPE,
			   "predicate \"p\" is declared more than once (lines 1 and 2)", NULL);
	EXPECT_ERR("g(X, P) :- geo(X, P).", GDL_ERR_DATATYPE,
			   "column \"pos\" of table public.geo has unsupported type point", "write _");
	a = analyze_ok("g(X) :- geo(X, _).");
	CHECK(a && ptype(a, "g", 0) == GDL_TYPE_INT);
	EXPECT_ERR("public.edge(1, 2).", GDL_ERR_SYNTAX,
			   "schema-qualified predicate \"public.edge\" cannot be defined", "gpudl_materialize");
	EXPECT_ERR("d(X, count(Y)) :- edge(X, Y).\nd(X, 1) :- node(X).", GDL_ERR_STRATIFY,
			   "predicate \"d\" has an aggregate rule, so it must be defined by that rule alone", NULL);
}

/* Type inference and type errors. */
static void
test_types(void)
{
	GdlAnalysis *a;

	a = analyze_ok("p(X, Y) :- edge(X, Y).\nq(N) :- big(N, _).\nr(X) :- p(X, _).\nr(X) :- q(X).");
	CHECK(ptype(a, "p", 0) == GDL_TYPE_INT && ptype(a, "p", 1) == GDL_TYPE_INT);
	CHECK(ptype(a, "q", 0) == GDL_TYPE_BIGINT);
	CHECK(ptype(a, "r", 0) == GDL_TYPE_BIGINT);	/* int and bigint widen */

	a = analyze_ok("f(1). f(2). g(3000000000). h(1.5). h(2). t(\"a\", b). b(true).");
	CHECK(ptype(a, "f", 0) == GDL_TYPE_INT);
	CHECK(ptype(a, "g", 0) == GDL_TYPE_BIGINT);
	CHECK(ptype(a, "h", 0) == GDL_TYPE_FLOAT8);
	CHECK(ptype(a, "t", 0) == GDL_TYPE_TEXT && ptype(a, "t", 1) == GDL_TYPE_TEXT);
	CHECK(ptype(a, "b", 0) == GDL_TYPE_BOOL);

	/* an integer literal gives way to float8 from a table */
	a = analyze_ok("v(1). v(X) :- fl(_, X).");
	CHECK(ptype(a, "v", 0) == GDL_TYPE_FLOAT8);

	/* types flow through recursion and assignments */
	a = analyze_ok("c(0).\nc(N) :- c(M), N = M + 1, N < 10.\n"
				   "n(X, N) :- edge(X, _), N = X * 2.\n"
				   "nb(X, N) :- big(X, _), N = X + 1.\n"
				   "chain(A, C) :- node(X), C = B + 1, B = X, A = 7.");
	CHECK(ptype(a, "c", 0) == GDL_TYPE_BIGINT);
	CHECK(ptype(a, "n", 1) == GDL_TYPE_INT);
	CHECK(ptype(a, "nb", 1) == GDL_TYPE_BIGINT);
	CHECK(ptype(a, "chain", 0) == GDL_TYPE_INT && ptype(a, "chain", 1) == GDL_TYPE_INT);
	if (a)
	{
		GdlClauseInfo *ci = &a->clauses[4];

		CHECK(ci->lit_assigns[1] && ci->lit_assigns[2] && ci->lit_assigns[3]);
		CHECK(!a->clauses[1].lit_assigns[0] && a->clauses[1].lit_assigns[1] && !a->clauses[1].lit_assigns[2]);
		CHECK(ci->var_types[0] == GDL_TYPE_INT);	/* A */
	}

	/* aggregates */
	a = analyze_ok("deg(X, count(Y)) :- edge(X, Y).\ns(K, sum(V)) :- fl(K, V).\n"
				   "si(sum(Y)) :- edge(_, Y).\nmn(min(K)) :- person(K).\nmx(max(B)) :- big(_, B).");
	CHECK(ptype(a, "deg", 0) == GDL_TYPE_INT && ptype(a, "deg", 1) == GDL_TYPE_BIGINT);
	CHECK(ptype(a, "s", 1) == GDL_TYPE_FLOAT8);
	CHECK(ptype(a, "si", 0) == GDL_TYPE_BIGINT);
	CHECK(ptype(a, "mn", 0) == GDL_TYPE_TEXT);
	CHECK(ptype(a, "mx", 0) == GDL_TYPE_BIGINT);
	CHECK(a && a->preds[gdl_analysis_find_pred(a, "deg")].has_agg);

	/* declarations */
	a = analyze_ok(".decl score(who: text, points: bigint)\nscore(W, P) :- person(W), edge(P, _).\n"
				   ".decl empty(x: int)\n.decl ff(x: float8)\nff(1).");
	CHECK(ptype(a, "score", 1) == GDL_TYPE_BIGINT);
	CHECK(ptype(a, "empty", 0) == GDL_TYPE_INT);
	CHECK(ptype(a, "ff", 0) == GDL_TYPE_FLOAT8);
	CHECK(a && a->preds[gdl_analysis_find_pred(a, "score")].decl != NULL);

	/* variable types */
	a = analyze_ok("p(K, V, B) :- fl(K, V), flags(K, B), V > 1, K != \"x\", B = true.");
	if (a)
	{
		CHECK(a->clauses[0].var_types[0] == GDL_TYPE_TEXT);
		CHECK(a->clauses[0].var_types[1] == GDL_TYPE_FLOAT8);
		CHECK(a->clauses[0].var_types[2] == GDL_TYPE_BOOL);
	}
	/* ordering comparisons work on every type */
	analyze_ok("p(A) :- person(A), person(B), A < B.");

	EXPECT_ERR("p(X) :- edge(X, _), person(X).", GDL_ERR_DATATYPE,
			   "type mismatch for variable X in rule at line 1: int from argument 1 of \"edge\", but text from argument 1 of \"person\"",
			   NULL);
	EXPECT_ERR("a(1).\na(\"x\").", GDL_ERR_DATATYPE,
			   "type mismatch for argument 1 of predicate \"a\": integer from fact at line 1 (1), but text from fact at line 2 (\"x\")",
			   NULL);
	EXPECT_ERR("p(X) :- edge(X, _).\np(X) :- person(X).", GDL_ERR_DATATYPE,
			   "type mismatch for argument 1 of predicate \"p\": int from rule at line 1 (variable X), but text from rule at line 2 (variable X)",
			   NULL);
	EXPECT_ERR("p(x) :- edge(x, 1).", GDL_ERR_DATATYPE,
			   "constant x is text, but argument 1 of \"edge\" is int",
			   "x is a text constant; variables start with an upper-case letter or _");
	EXPECT_ERR("p(X) :- edge(X, Y), Y = \"a\".", GDL_ERR_DATATYPE,
			   "cannot compare Y (int) with \"a\" (text)", NULL);
	EXPECT_ERR("p(X) :- flags(X, B), B > 1.", GDL_ERR_DATATYPE, "cannot compare B (bool) with 1 (integer)", NULL);
	EXPECT_ERR("p(N) :- person(X), N = X + 1.", GDL_ERR_DATATYPE,
			   "arithmetic on X, which is text", "arithmetic works on int and bigint");
	EXPECT_ERR("p(N) :- fl(_, X), N = X * 2.", GDL_ERR_DATATYPE, "arithmetic on X, which is float8", NULL);
	EXPECT_ERR("p(sum(X)) :- person(X).", GDL_ERR_DATATYPE, "sum(X) of a text value", NULL);
	EXPECT_ERR(".decl s(a: int)\ns(N) :- big(N, _).", GDL_ERR_DATATYPE,
			   "type mismatch for argument 1 of predicate \"s\": declared int, but rule at line 2 (variable N) gives bigint",
			   "declare the argument as bigint");
	EXPECT_ERR(".decl s(a: int)\ns(\"x\").", GDL_ERR_DATATYPE, "declared int, but fact at line 2 (\"x\") gives text", NULL);
	EXPECT_ERR("p(X) :- r(X).\nr(X) :- p(X).", GDL_ERR_DATATYPE,
			   "cannot infer the type of argument 1 of predicate \"p\"", ".decl p");
	/* with a declaration the same program is fine */
	a = analyze_ok(".decl p(x: int)\np(X) :- r(X).\nr(X) :- p(X).");
	CHECK(ptype(a, "r", 0) == GDL_TYPE_INT);
}

/* Safety and assignments. */
static void
test_safety(void)
{
	GdlAnalysis *a;

	a = analyze_ok("p(X, N) :- node(X), N = X + 1, N < 100.\n"
				   "q(X, N) :- node(X), X + 1 = N.\n"
				   "r(X) :- node(X), !edge(X, _).\n"
				   "s(N) :- M = 2, N = M * 3, node(N).");
	if (a)
	{
		CHECK(a->clauses[0].lit_assigns[1] && !a->clauses[0].lit_assigns[2]);
		/* "expr = V" is normalised to "V = expr" */
		CHECK(a->clauses[1].lit_assigns[1] && a->clauses[1].clause->body[1].lhs->kind == GDL_TERM_VAR);
		/* N is bound by node(N): N = M * 3 is a filter, M = 2 an assignment */
		CHECK(a->clauses[3].lit_assigns[0] && !a->clauses[3].lit_assigns[1]);
		CHECK(a->clauses[0].lit_pred[1] == -1);
	}

	EXPECT_ERR("p(X, Y) :- edge(X, _).", GDL_ERR_UNSAFE,
			   "unsafe rule at line 1, column 6: variable Y in the head is not bound by a positive body atom",
			   "every variable in the head must appear in a positive body atom");
	EXPECT_DETAIL("p(X, Y) :- edge(X, _).", "rule: p(X, Y) :- edge(X, _).");
	EXPECT_ERR("p(X) :- node(X), !edge(X, Y).", GDL_ERR_UNSAFE,
			   "variable Y in a negated atom is not bound", "use _");
	EXPECT_ERR("p(X) :- node(X), Y > 3.", GDL_ERR_UNSAFE, "variable Y in a comparison is not bound", NULL);
	EXPECT_ERR("p(X) :- node(X), Z = Y + W.", GDL_ERR_UNSAFE,
			   "column 22: variable Y in an arithmetic expression is not bound", NULL);
	EXPECT_ERR("p(X) :- node(X), Y = Z.", GDL_ERR_UNSAFE, "variable Z in a comparison is not bound", NULL);
	/* chains of copies in any order are assignments */
	a = analyze_ok("p(X, Z) :- node(X), Y = Z, X = Y.");
	CHECK(a && a->clauses[0].lit_assigns[1] && a->clauses[0].lit_assigns[2]);
	EXPECT_ERR("p(X, _) :- node(X).", GDL_ERR_UNSAFE, "variable _ appears in the head", NULL);
	EXPECT_ERR("p(X) :- node(X), _ < 3.", GDL_ERR_UNSAFE, "variable _ appears in a comparison", NULL);
	EXPECT_ERR("p(1, X).", GDL_ERR_UNSAFE, "unsafe fact at line 1, column 6: variable X makes the fact non-ground",
			   "variables start with an upper-case letter");
	EXPECT_ERR("p(_).", GDL_ERR_UNSAFE, "variable _ makes the fact non-ground", NULL);
	EXPECT_ERR("p(count(X)).", GDL_ERR_UNSAFE, "aggregate count(...) in a fact", NULL);
	EXPECT_ERR("d(X, count(Y)) :- node(X).", GDL_ERR_UNSAFE,
			   "variable Y aggregated by count(...) is not bound", NULL);
	EXPECT_ERR("d(X, count(X)) :- node(X).", GDL_ERR_UNSAFE,
			   "variable X is both aggregated by count(...) and a grouping argument", NULL);
	EXPECT_ERR("p(X) :- !node(X).", GDL_ERR_UNSAFE, "variable X in the head is not bound", NULL);
}

/* Strata, recursion flags and stratification errors. */
static void
test_stratify(void)
{
	GdlAnalysis *a;
	int			even;
	int			odd;

	a = analyze_ok("reach(X) :- node(X), X = 1.\n"
				   "reach(Y) :- reach(X), edge(X, Y).\n"
				   "unreach(X) :- node(X), !reach(X).\n"
				   "even(X) :- node(X), X = 0.\n"
				   "even(Y) :- odd(X), edge(X, Y).\n"
				   "odd(Y) :- even(X), edge(X, Y).\n"
				   "cnt(count(X)) :- unreach(X).\n"
				   ".decl nothing(x: int)\n");
	if (!a)
		return;
	CHECK(a->nstrata == 5);
	CHECK(a->strata[0].npreds == 1 && a->strata[0].preds[0] == gdl_analysis_find_pred(a, "reach"));
	CHECK(a->strata[0].recursive && a->strata[0].nclauses == 2);
	CHECK(!a->clauses[0].recursive && a->clauses[1].recursive);
	CHECK(a->preds[gdl_analysis_find_pred(a, "unreach")].stratum >
		  a->preds[gdl_analysis_find_pred(a, "reach")].stratum);
	CHECK(a->preds[gdl_analysis_find_pred(a, "cnt")].stratum >
		  a->preds[gdl_analysis_find_pred(a, "unreach")].stratum);
	even = gdl_analysis_find_pred(a, "even");
	odd = gdl_analysis_find_pred(a, "odd");
	CHECK(a->preds[even].stratum == a->preds[odd].stratum);
	CHECK(a->strata[a->preds[even].stratum].npreds == 2 && a->strata[a->preds[even].stratum].recursive);
	CHECK(!a->clauses[3].recursive && a->clauses[4].recursive && a->clauses[5].recursive);
	CHECK(!a->strata[a->preds[gdl_analysis_find_pred(a, "unreach")].stratum].recursive);
	{
		GdlStratum *s = &a->strata[a->preds[gdl_analysis_find_pred(a, "nothing")].stratum];

		CHECK(s->nclauses == 0 && s->npreds == 1 && !s->recursive);
	}
	/* every clause is in exactly its head's stratum, strata in dependency order */
	{
		int			i;
		int			j;

		for (i = 0; i < a->nclauses; i++)
			for (j = 0; j < a->clauses[i].clause->nbody; j++)
			{
				int			bp = a->clauses[i].lit_pred[j];

				if (bp >= 0 && !a->preds[bp].is_edb)
					CHECK(a->preds[bp].stratum <= a->preds[a->clauses[i].head_pred].stratum);
			}
	}

	EXPECT_ERR("p(X) :- node(X), !p(X).", GDL_ERR_STRATIFY,
			   "recursion through negation is not allowed: a rule for \"p\" negates \"p\" itself",
			   "stratified Datalog");
	EXPECT_ERR("win(X) :- edge(X, Y), !win(Y).", GDL_ERR_STRATIFY, "negates \"win\" itself", NULL);
	EXPECT_ERR("p(X) :- node(X), !q(X).\nq(X) :- node(X), p(X).", GDL_ERR_STRATIFY,
			   "a rule for \"p\" negates \"q\", which depends on \"p\" (cycle: p, q)", NULL);
	EXPECT_DETAIL("p(X) :- node(X), !q(X).\nq(X) :- node(X), p(X).", "rule at line 1: p(X) :- node(X), !q(X).");
	EXPECT_ERR("d(X, count(Y)) :- d(X, Y).", GDL_ERR_STRATIFY,
			   "recursion through aggregation is not allowed: the aggregate rule for \"d\" reads \"d\" itself", NULL);
	EXPECT_ERR("d(X, min(C)) :- e(X, C).\ne(X, C) :- d(X, C).\ne(X, 1) :- node(X).", GDL_ERR_STRATIFY,
			   "the aggregate rule for \"d\" reads \"e\", which depends on \"d\" (cycle: d, e)", NULL);
}

/* Explain lines. */
static void
test_explain(void)
{
	GdlAnalysis *a = analyze_ok("path(X, Y) :- edge(X, Y).\npath(X, Z) :- path(X, Y), edge(Y, Z).\n"
								"far(X) :- path(X, Y),\n   Y > 10.");
	char	  **lines;
	int			n;
	static const char *want[] = {
		"stratum 0: path/2 (recursive)",
		"  [rule 12] path(X, Y) :- edge(X, Y).",
		"  path(X, Z) :- path(X, Y), edge(Y, Z).",
		"stratum 1: far/1",
		"  far(X) :- path(X, Y), Y > 10.",
		"idb path/2: path(int, int)",
		"idb far/1: far(int)",
		"edb edge/2: public.edge(int, int)",
	};
	int			i;

	if (!a)
		return;
	a->prog->items[0].rule_id = 12;
	n = gdl_explain_strata(a, &lines);
	CHECK_MSG(n == 8, "explain gave %d lines", n);
	for (i = 0; i < n && i < 8; i++)
		CHECK_MSG(strcmp(lines[i], want[i]) == 0, "line %d: <%s> want <%s>", i, lines[i], want[i]);

	a = analyze_ok("e(1, 2). e(2, 3). e(3, 4). e(4, 5). e(5, 6). e(6, 7).\n"
				   ".decl none(x: text)\nf(1.5).");
	n = a ? gdl_explain_strata(a, &lines) : 0;
	CHECK(n == 8);
	if (n == 8)
	{
		CHECK(strcmp(lines[0], "stratum 0: e/2") == 0);
		CHECK(strcmp(lines[1], "  6 facts of e/2") == 0);
		CHECK(strcmp(lines[2], "stratum 1: none/1 (declared, no clauses)") == 0);
		CHECK(strcmp(lines[3], "stratum 2: f/1") == 0);
		CHECK(strcmp(lines[4], "  f(1.5).") == 0);
		CHECK(strcmp(lines[5], "idb e/2: e(int, int)") == 0);
		CHECK(strcmp(lines[6], "idb none/1: none(text) (declared)") == 0);
		CHECK(strcmp(lines[7], "idb f/1: f(float8)") == 0);
	}
	/* an empty program analyses to nothing */
	a = analyze_ok("");
	CHECK(a && a->npreds == 0 && a->nstrata == 0 && gdl_explain_strata(a, &lines) == 0);
}

/* ------------------------------------------------ closures made linear */

/* The analysed program's clause texts, one per line. */
static char *
clause_texts(const GdlAnalysis *a)
{
	GdlBuf		b;

	gdl_buf_init(&b);
	for (int i = 0; i < a->prog->nitems; i++)
		if (a->prog->items[i].kind == GDL_ITEM_CLAUSE)
			gdl_buf_append(&b, "%s\n", a->prog->items[i].clause->text);
	return b.data;
}

/* Is src analysed into exactly the clauses want (one per line)? */
static void
check_linear(const char *src, const char *want)
{
	GdlAnalysis *a = analyze_ok(src);
	char	   *got = a ? clause_texts(a) : NULL;

	CHECK_MSG(got && strcmp(got, want) == 0, "<%s>\n gave <%s>\n want <%s>", src,
			  got ? got : "(error)", want);
	/* again: idempotent */
	if (a)
	{
		gdl_lang_linearize(a->prog);
		CHECK(strcmp(clause_texts(a), want) == 0);
	}
}

/*
 * Closures written non-linearly become linear (lang_linear.c); anything
 * else that reads the target twice is left as written.
 */
static void
test_linearize(void)
{
	GdlAnalysis *a;

	check_linear("tc(X, Y) :- edge(X, Y). tc(X, Z) :- tc(X, Y), tc(Y, Z).",
				 "tc(X, Y) :- edge(X, Y).\ntc(X, Z) :- tc(X, Y), edge(Y, Z).\n");
	/* either body order; names of any kind */
	check_linear("\"/a/b\"(P, Q) :- edge(P, Q). \"/a/b\"(A, C) :- \"/a/b\"(B, C), \"/a/b\"(A, B).",
				 "\"/a/b\"(P, Q) :- edge(P, Q).\n\"/a/b\"(A, C) :- \"/a/b\"(A, B), edge(B, C).\n");
	/* two base rules, one of them a join with a filter: one linear rule each */
	check_linear("anc(X, Y) :- edge(X, Y), node(X). anc(X, Y) :- edge(X, W), edge(W, Y), W > 1.\n"
				 "anc(X, Z) :- anc(X, Y), anc(Y, Z).",
				 "anc(X, Y) :- edge(X, Y), node(X).\n"
				 "anc(X, Y) :- edge(X, W), edge(W, Y), W > 1.\n"
				 "anc(X, Z) :- anc(X, Y), edge(Y, Z), node(Y).\n"
				 "anc(X, Z) :- anc(X, Y), edge(Y, W_3), edge(W_3, Z), W_3 > 1.\n");
	/*
	 * left as written: a fact of the target, another rule reading the
	 * target, only reflexive base rules, a concatenation that is not one, a
	 * wider arity
	 */
	check_linear("tc(1, 2). tc(X, Y) :- edge(X, Y). tc(X, Z) :- tc(X, Y), tc(Y, Z).",
				 "tc(1, 2).\ntc(X, Y) :- edge(X, Y).\ntc(X, Z) :- tc(X, Y), tc(Y, Z).\n");
	check_linear("tc(X, Y) :- edge(X, Y). tc(X, Z) :- tc(X, Y), edge(Y, Z). tc(X, Z) :- tc(X, Y), tc(Y, Z).",
				 "tc(X, Y) :- edge(X, Y).\ntc(X, Z) :- tc(X, Y), edge(Y, Z).\ntc(X, Z) :- tc(X, Y), tc(Y, Z).\n");
	check_linear("tc(X, X) :- edge(X, _). tc(X, Z) :- tc(X, Y), tc(Y, Z).",
				 "tc(X, X) :- edge(X, _).\ntc(X, Z) :- tc(X, Y), tc(Y, Z).\n");
	/* a base rule may read T through other predicates; a reflexive one is not composed */
	check_linear("vf(X, Y) :- edge(X, Y). vf(X, Y) :- edge(X, Z), ma(Z, Y). vf(X, Z) :- vf(X, Y), vf(Y, Z).\n"
				 "vf(X, X) :- node(X). ma(X, Y) :- vf(X, Y), node(Y).",
				 "vf(X, Y) :- edge(X, Y).\nvf(X, Y) :- edge(X, Z), ma(Z, Y).\n"
				 "vf(X, Z) :- vf(X, Y), edge(Y, Z).\nvf(X, Z) :- vf(X, Y), edge(Y, Z_3), ma(Z_3, Z).\n"
				 "vf(X, X) :- node(X).\nma(X, Y) :- vf(X, Y), node(Y).\n");
	check_linear("tc(X, Y) :- edge(X, Y). tc(X, Z) :- tc(X, Y), tc(Z, Y).",
				 "tc(X, Y) :- edge(X, Y).\ntc(X, Z) :- tc(X, Y), tc(Z, Y).\n");
	check_linear("t(X, Y, W) :- edge(X, Y), node(W). t(X, Z, W) :- t(X, Y, W), t(Y, Z, W).",
				 "t(X, Y, W) :- edge(X, Y), node(W).\nt(X, Z, W) :- t(X, Y, W), t(Y, Z, W).\n");
	/* the engine's non-linear evaluation stays reachable */
	gdl_linearize_closures = false;
	check_linear("tc(X, Y) :- edge(X, Y). tc(X, Z) :- tc(X, Y), tc(Y, Z).",
				 "tc(X, Y) :- edge(X, Y).\ntc(X, Z) :- tc(X, Y), tc(Y, Z).\n");
	gdl_linearize_closures = true;
	a = analyze_ok("tc(X, Y) :- edge(X, Y). tc(X, Z) :- tc(X, Y), tc(Y, Z).");
	CHECK(a && a->nclauses == 2 && a->clauses[1].recursive);
}

/* ---------------------------------------------------- quoted predicate names */

/* Quoted names in heads, bodies, negation, .decl; printing them back. */
static void
test_quoted_names(void)
{
	GdlProgram *p;
	const GdlClause *c;

	p = parse_ok("'co-occurs_with'(X, Y) :- \"/film/film/genre\"(X, Y), !\"Has Car\"(Y, X),\n"
				 "   not '_hypernym'(X, X), \"é\" (Y, Z), Z != \"x\".");
	if (p)
	{
		c = p->items[0].clause;
		CHECK(strcmp(c->head.name, "co-occurs_with") == 0);
		CHECK(c->nbody == 5);
		CHECK(c->body[0].kind == GDL_LIT_ATOM && strcmp(c->body[0].atom.name, "/film/film/genre") == 0);
		CHECK(c->body[1].kind == GDL_LIT_NEG && strcmp(c->body[1].atom.name, "Has Car") == 0);
		CHECK(c->body[2].kind == GDL_LIT_NEG && strcmp(c->body[2].atom.name, "_hypernym") == 0);
		CHECK(c->body[3].kind == GDL_LIT_ATOM && strcmp(c->body[3].atom.name, "é") == 0);
		CHECK(c->body[4].kind == GDL_LIT_CMP && c->body[4].rhs->kind == GDL_TERM_TEXT);
		CHECK_MSG(strcmp(gdl_clause_to_string(c),
						 "\"co-occurs_with\"(X, Y) :- \"/film/film/genre\"(X, Y), !\"Has Car\"(Y, X), "
						 "!\"_hypernym\"(X, X), \"é\"(Y, Z), Z != \"x\".") == 0,
				  "got %s", gdl_clause_to_string(c));
	}
	/* names that need no quotes print bare, quoted or not */
	CHECK(strcmp(canon("\"edge\"(X, Y) :- 'sales.orders'(X, Y), \"not\"(X), true(Y)."),
				 "edge(X, Y) :- sales.orders(X, Y), not(X), true(Y).") == 0);
	CHECK(strcmp(canon("\"Parent\"(\"a\", 'b')."), "\"Parent\"(\"a\", \"b\").") == 0);
	CHECK(strcmp(canon("\"a \\\"q\\\" \\\\ b\\n\"(1)."), "\"a \\\"q\\\" \\\\ b\\n\"(1).") == 0);
	/* .decl of a quoted name */
	p = parse_ok(".decl \"Has Car\"(owner: text, car: text)");
	CHECK(p && p->items[0].kind == GDL_ITEM_DECL && strcmp(p->items[0].decl->name, "Has Car") == 0);
	CHECK(p && strcmp(gdl_decl_to_string(p->items[0].decl),
					  ".decl \"Has Car\"(owner: text, car: text)") == 0);
	/* a % after a quoted atom's ')' is a comment, as after any atom */
	p = parse_ok("\"a-b\"(X) :- e(X, Y) % comment\n, e(Y, X).");
	CHECK(p && p->items[0].clause->nbody == 2);
	/* which names need quotes */
	CHECK(!gdl_name_needs_quotes("edge") && !gdl_name_needs_quotes("sales.orders"));
	CHECK(!gdl_name_needs_quotes("not") && !gdl_name_needs_quotes("count") && !gdl_name_needs_quotes("aB_9"));
	CHECK(gdl_name_needs_quotes("Parent") && gdl_name_needs_quotes("_hypernym") &&
		  gdl_name_needs_quotes("9a") && gdl_name_needs_quotes("a.b.c") && gdl_name_needs_quotes(".a") &&
		  gdl_name_needs_quotes("a.") && gdl_name_needs_quotes("a.B") && gdl_name_needs_quotes("") &&
		  gdl_name_needs_quotes("has car") && gdl_name_needs_quotes("é") && gdl_name_needs_quotes("a@b"));
	CHECK(strcmp(gdl_pred_name_quote("/film/film/genre"), "\"/film/film/genre\"") == 0);
	CHECK(strcmp(gdl_pred_name_quote("a\"b\\c\td"), "\"a\\\"b\\\\c\\td\"") == 0);
	/* a head with a dot that does not read as schema.name is a name, not a table */
	CHECK(analyze_ok("\"/a/b./c/d\"(X, Y) :- edge(X, Y). q(X) :- \"/a/b./c/d\"(X, _).") != NULL);
	EXPECT_ERR("\"sales.orders2\"(X) :- edge(X, _).", GDL_ERR_SYNTAX, "schema-qualified", NULL);
	/* errors of the quoted form */
	EXPECT_ERR("\"\"(X) :- edge(X, _).", GDL_ERR_SYNTAX, "empty predicate name", "at least one character");
	EXPECT_ERR("p(X) :- ''(X, _).", GDL_ERR_SYNTAX, "column 9: empty predicate name", NULL);
	EXPECT_ERR("\"co-occurs(X, Y) :- edge(X, Y).", GDL_ERR_SYNTAX, "unterminated string", NULL);
	EXPECT_ERR("p(X) :- edge(X, Y), X = \"a\"(Y).", GDL_ERR_SYNTAX,
			   "unexpected atom \"\"a\"\" where a value was expected", NULL);
	EXPECT_ERR("\"p q\".", GDL_ERR_SYNTAX, "expected \"(\" after predicate name \"p q\"", NULL);
	EXPECT_ERR("\"p\" :- edge(X, Y).", GDL_ERR_SYNTAX, "expected \"(\" after predicate name \"p\"",
			   "at least one argument");
	EXPECT_ERR("\"p\"(X) :- \"q\" edge(X, Y).", GDL_ERR_SYNTAX, "a comparison operator", NULL);
	EXPECT_ERR("Parent(X, Y) :- edge(X, Y).", GDL_ERR_SYNTAX, "expected a fact", "lower-case letter");
	EXPECT_ERR("p(X) :- edge(X, Y), Parent(X, Y).", GDL_ERR_SYNTAX, "expected a predicate name but found \"Parent\"",
			   "as in \"Parent\"(...)");
	EXPECT_ERR("p(X) :- \"no such\"(X).", GDL_ERR_UNDEFINED, "predicate \"no such\" is not defined", NULL);
}

/* A random name from characters that need care: quotes, \, blanks, é, / . - _ */
static char *
random_name(unsigned *seed)
{
	static const char *const parts[] = {
		"a", "b", "Z", "_", "0", "9", "-", "/", ".", " ", "\"", "'", "\\", "é", "日本",
		"\t", "\n", "\r", "(", ")", ",", ":-", "%", "#", "@", "not", "film", "x.y"
	};
	int			n = 1 + (int) (rand_r(seed) % 8);
	GdlBuf		b;

	gdl_buf_init(&b);
	for (int i = 0; i < n; i++)
		gdl_buf_append(&b, "%s", parts[rand_r(seed) % (sizeof(parts) / sizeof(parts[0]))]);
	return b.data;
}

/* print(parse(x)) == x, and parse(print(ast)) names the same predicates. */
static void
test_quoted_roundtrip(void)
{
	unsigned	seed = 20;

	for (int k = 0; k < 3000; k++)
	{
		char	   *h = random_name(&seed);
		char	   *b1 = random_name(&seed);
		char	   *b2 = random_name(&seed);
		char	   *src = gdl_sprintf("%s(X, Y) :- %s(X, Z), !%s(Z, Y), %s(Y, \"c\").",
									  gdl_pred_name_quote(h), gdl_pred_name_quote(b1),
									  gdl_pred_name_quote(b2), gdl_pred_name_quote(b1));
		GdlProgram *p = parse_ok(src);
		const GdlClause *c;

		if (p == NULL)
			break;
		c = p->items[0].clause;
		CHECK_MSG(strcmp(c->head.name, h) == 0 && strcmp(c->body[0].atom.name, b1) == 0 &&
				  strcmp(c->body[1].atom.name, b2) == 0 && strcmp(c->body[2].atom.name, b1) == 0,
				  "names of <%s>", src);
		CHECK_MSG(strcmp(gdl_clause_to_string(c), src) == 0, "print(parse(<%s>)) = <%s>", src,
				  gdl_clause_to_string(c));
		p = parse_ok(gdl_sprintf(".decl %s(a: int)", gdl_pred_name_quote(h)));
		CHECK_MSG(p && strcmp(p->items[0].decl->name, h) == 0, ".decl of <%s>", h);
		if (k % 500 == 0)
			gdl_test_reset();
	}
}

/* Errors leave nothing behind: the arena reset frees everything. */
static void
test_no_leak(void)
{
	gdl_test_reset();
	(void) run_err("p(X) :- edge(X, Y), Y = \"a\".");
	(void) run_err("p(\"abc");
	gdl_test_reset();
	CHECK(gdl_test_live_bytes() == 0);
}

int
main(void)
{
	gdl_test_host_install();
	test_parse_basic();
	test_parse_constants();
	test_parse_body();
	test_parse_decl();
	test_print();
	test_append();
	test_syntax_errors();
	test_resolve();
	test_types();
	test_safety();
	test_stratify();
	test_explain();
	test_linearize();
	test_quoted_names();
	test_quoted_roundtrip();
	test_no_leak();
	gdl_test_reset();
	return gdl_test_summary("test_lang");
}
