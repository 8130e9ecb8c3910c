/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy.c - the seccomp policy language (seccomp-policies/README.md): a lexer, a recursive
 * descent parser, includes and groups, and the checks that keep a policy meaning what it says:
 * unknown names are errors, and rules libseccomp would silently merge away are refused.
 */
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "policy.h"

#ifndef CORDON_POLICY_DIR
#define CORDON_POLICY_DIR "/usr/local/share/cordon/seccomp-policies"
#endif

/* The named policies of seccomp-policies/, compiled into the binary (meson: embed-policy.py):
 * where the installed directory does not have a name (an uninstalled build, a copied binary),
 * the binary's own copy is used. Never the source tree it was built from. */
extern const char cd_policy_default[], cd_policy_strict[], cd_policy_groups[];
extern const size_t cd_policy_default_len, cd_policy_strict_len, cd_policy_groups_len;

static const struct builtin {
	const char *name;
	const char *text;
	const size_t *len;
} builtins[] = {
	{ "default", cd_policy_default, &cd_policy_default_len },
	{ "strict", cd_policy_strict, &cd_policy_strict_len },
	{ "groups", cd_policy_groups, &cd_policy_groups_len },
};

/* "built-in:NAME": what cd_policy_find() returns for a built-in policy. No name or path given by
 * a user looks like it (a name has no ':', a path has a '/' or ends in ".policy"). */
#define BUILTIN_PREFIX "built-in:"

static const struct builtin *builtin_of(const char *path)
{
	if (strncmp(path, BUILTIN_PREFIX, strlen(BUILTIN_PREFIX)) != 0)
		return NULL;
	for (size_t i = 0; i < CD_ELEMENTSOF(builtins); i++)
		if (strcmp(path + strlen(BUILTIN_PREFIX), builtins[i].name) == 0)
			return &builtins[i];
	return NULL;
}

/* NAME's built-in copy, "built-in:NAME", or NULL with *err: no such name anywhere. */
static char *builtin_name(const char *name, const char *const *search, struct cordon_error *err)
{
	for (size_t i = 0; i < CD_ELEMENTSOF(builtins); i++)
		if (strcmp(name, builtins[i].name) == 0)
			return cd_strdup_printf(BUILTIN_PREFIX "%s", name);
	if (!search || !search[0])
		cd_fail(err, ENOENT, "seccomp-policy", "no policy \"%s\": no policy directory, and "
			"none built in by that name", name);
	else
		cd_fail(err, ENOENT, "seccomp-policy", "no policy \"%s\" in %s%s%s, and none built in "
			"by that name (give a path to use your own file)", name, search[0],
			search[1] ? " or " : "", search[1] ? search[1] : "");
	return NULL;
}

#define TOKEN_MAX 128

enum tok_kind { T_EOF, T_NL, T_WORD, T_NUM, T_GROUP, T_STR, T_PUNCT };

struct token {
	enum tok_kind kind;
	char text[TOKEN_MAX];
	uint64_t num;
	unsigned line, col;
};

struct lexer {
	const char *p, *end;
	unsigned line, col;
};

struct parser {
	struct cd_policy *pol;
	const char *file; /* display name, owned by pol->files */
	const char *real; /* real path, or NULL for text given in memory */
	struct parser *parent;
	unsigned depth;
	struct lexer lx;
	struct token tok;
	struct cordon_error *err;
};

static int parse_text(struct parser *ps, const char *text, size_t len);

const char *const *cd_policy_search_path(void)
{
	static const char *const dirs[] = { CORDON_POLICY_DIR, NULL };

	return dirs;
}

/* "file:line:col: message" */
_printf_(3, 4) static int perr(struct parser *ps, const struct token *t, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return cd_fail(ps->err, EINVAL, "policy", "%s:%u:%u: %s", ps->file, t->line, t->col, msg);
}

static const char *tok_str(const struct token *t, char *buf, size_t size)
{
	switch (t->kind) {
	case T_EOF:
		return "end of file";
	case T_NL:
		return "end of line";
	case T_PUNCT:
		snprintf(buf, size, "'%s'", t->text);
		return buf;
	default:
		snprintf(buf, size, "\"%s\"", t->text);
		return buf;
	}
}

/* --- lexer --- */

static int lex_char(struct lexer *lx)
{
	return lx->p < lx->end ? (unsigned char)*lx->p : -1;
}

static void lex_advance(struct lexer *lx, size_t n)
{
	lx->p += n;
	lx->col += (unsigned)n;
}

static bool is_word_char(int c)
{
	return c >= 0 && (isalnum(c) || c == '_' || c == '-');
}

/* Skip blanks, comments and backslash-newline continuations. */
static void lex_skip(struct lexer *lx)
{
	for (;;) {
		int c = lex_char(lx);

		if (c == ' ' || c == '\t' || c == '\r') {
			lex_advance(lx, 1);
		} else if (c == '#') {
			while (lex_char(lx) >= 0 && lex_char(lx) != '\n')
				lex_advance(lx, 1);
		} else if (c == '\\' && lx->p + 2 < lx->end && lx->p[1] == '\r' && lx->p[2] == '\n') {
			lx->p += 3; /* CRLF files */
			lx->line++;
			lx->col = 1;
		} else if (c == '\\' && lx->p + 1 < lx->end && lx->p[1] == '\n') {
			lx->p += 2;
			lx->line++;
			lx->col = 1;
		} else {
			return;
		}
	}
}

static int lex_span(struct parser *ps, struct token *t, size_t n)
{
	if (n >= TOKEN_MAX)
		return perr(ps, t, "token too long (at most %d characters)", TOKEN_MAX - 1);
	memcpy(t->text, ps->lx.p, n);
	t->text[n] = '\0';
	lex_advance(&ps->lx, n);
	return 0;
}

static int lex_number(struct parser *ps, struct token *t)
{
	struct lexer *lx = &ps->lx;
	size_t n = 0;
	bool neg = lx->p[0] == '-';
	char *end;
	int r;

	while (lx->p + n < lx->end && is_word_char((unsigned char)lx->p[n]))
		n++;
	r = lex_span(ps, t, n);
	if (r < 0)
		return r;
	errno = 0;
	t->num = strtoull(t->text + neg, &end, 0);
	if (*end || end == t->text + neg)
		return perr(ps, t, "bad number \"%s\"", t->text);
	if (errno == ERANGE || (neg && t->num > (uint64_t)INT64_MAX + 1))
		return perr(ps, t, "number \"%s\" out of range (64 bits)", t->text);
	if (neg)
		t->num = -t->num;
	t->kind = T_NUM;
	return 0;
}

static int lex_punct(struct parser *ps, struct token *t)
{
	static const char *const puncts[] = { "==", "!=", "<=", ">=", "(", ")", ",", "&",
					      "|",  "<",  ">" };
	struct lexer *lx = &ps->lx;

	for (size_t i = 0; i < CD_ELEMENTSOF(puncts); i++) {
		size_t n = strlen(puncts[i]);

		if ((size_t)(lx->end - lx->p) >= n && memcmp(lx->p, puncts[i], n) == 0) {
			t->kind = T_PUNCT;
			return lex_span(ps, t, n);
		}
	}
	if (lex_char(lx) == '=')
		return perr(ps, t, "unexpected '=' (comparisons are written ==)");
	if (isprint(lex_char(lx)))
		return perr(ps, t, "unexpected character '%c'", lex_char(lx));
	return perr(ps, t, "unexpected byte 0x%02x", lex_char(lx));
}

static int lex_string(struct parser *ps, struct token *t)
{
	struct lexer *lx = &ps->lx;
	size_t n = 1;

	while (lx->p + n < lx->end && lx->p[n] != '"' && lx->p[n] != '\n')
		n++;
	if (lx->p + n >= lx->end || lx->p[n] != '"')
		return perr(ps, t, "unterminated string: expected '\"' before the end of the line");
	lex_advance(lx, 1);
	t->kind = T_STR;
	if (lex_span(ps, t, n - 1) < 0)
		return -EINVAL;
	lex_advance(lx, 1);
	return 0;
}

static int lex_next(struct parser *ps)
{
	struct lexer *lx = &ps->lx;
	struct token *t = &ps->tok;
	int c;

	lex_skip(lx);
	t->line = lx->line;
	t->col = lx->col;
	t->text[0] = '\0';
	c = lex_char(lx);
	if (c < 0) {
		t->kind = T_EOF;
		return 0;
	}
	if (c == '\n') {
		t->kind = T_NL;
		lx->p++;
		lx->line++;
		lx->col = 1;
		return 0;
	}
	if (isdigit(c) || (c == '-' && lx->p + 1 < lx->end && isdigit((unsigned char)lx->p[1])))
		return lex_number(ps, t);
	if (isalpha(c) || c == '_') {
		size_t n = 0;

		while (lx->p + n < lx->end && is_word_char((unsigned char)lx->p[n]))
			n++;
		t->kind = T_WORD;
		return lex_span(ps, t, n);
	}
	if (c == '@') {
		size_t n = 1;

		while (lx->p + n < lx->end && is_word_char((unsigned char)lx->p[n]))
			n++;
		if (n == 1)
			return perr(ps, t, "expected a group name after '@'");
		t->kind = T_GROUP;
		return lex_span(ps, t, n);
	}
	if (c == '"')
		return lex_string(ps, t);
	return lex_punct(ps, t);
}

static bool tok_is(const struct token *t, enum tok_kind kind, const char *text)
{
	return t->kind == kind && (!text || strcmp(t->text, text) == 0);
}

static bool at_end_of_statement(const struct token *t)
{
	return t->kind == T_NL || t->kind == T_EOF;
}

static int expect_end(struct parser *ps)
{
	char b[TOKEN_MAX + 4];

	if (!at_end_of_statement(&ps->tok))
		return perr(ps, &ps->tok, "expected end of line, got %s",
			    tok_str(&ps->tok, b, sizeof(b)));
	return 0;
}

/* --- names --- */

static int resolve_syscall(struct parser *ps, const struct token *t, int *ret)
{
	int nr = seccomp_syscall_resolve_name(t->text);

	if (nr == __NR_SCMP_ERROR)
		return perr(ps, t, "unknown syscall \"%s\"", t->text);
	*ret = nr;
	return 0;
}

static struct cd_policy_group *find_group(struct cd_policy *p, const char *name)
{
	for (size_t i = 0; i < p->n_groups; i++)
		if (strcmp(p->groups[i].name, name) == 0)
			return &p->groups[i];
	return NULL;
}

static struct cd_policy_group *lookup_group(struct parser *ps, const struct token *t)
{
	struct cd_policy_group *g = find_group(ps->pol, t->text + 1);

	if (!g)
		perr(ps, t, "unknown group \"%s\" (groups are defined with `group %s ...` "
			    "before use, e.g. in groups.policy)", t->text, t->text);
	return g;
}

/* --- actions --- */

struct action_name {
	const char *name;
	uint32_t action;
};

static const struct action_name actions[] = {
	{ "allow", SCMP_ACT_ALLOW },
	{ "log", SCMP_ACT_LOG },
	{ "kill", SCMP_ACT_KILL_PROCESS },
	{ "kill-process", SCMP_ACT_KILL_PROCESS },
	{ "kill-thread", SCMP_ACT_KILL_THREAD },
	{ "trap", SCMP_ACT_TRAP },
	{ "notify", SCMP_ACT_NOTIFY },
};

static bool is_action_word(const struct token *t)
{
	if (t->kind != T_WORD)
		return false;
	if (strcmp(t->text, "errno") == 0)
		return true;
	for (size_t i = 0; i < CD_ELEMENTSOF(actions); i++)
		if (strcmp(t->text, actions[i].name) == 0)
			return true;
	return false;
}

static int parse_errno(struct parser *ps, uint32_t *ret)
{
	char b[TOKEN_MAX + 4];
	int e;

	if (ps->tok.kind == T_NUM) {
		if (ps->tok.num < 1 || ps->tok.num > 4094)
			return perr(ps, &ps->tok, "errno %s out of range (1 to 4094)", ps->tok.text);
		e = (int)ps->tok.num;
	} else if (ps->tok.kind == T_WORD) {
		e = cd_policy_errno(ps->tok.text);
		if (e < 0)
			return perr(ps, &ps->tok, "unknown errno \"%s\" (use a name such as EPERM "
						  "or ENOSYS, or a number)", ps->tok.text);
	} else {
		return perr(ps, &ps->tok, "expected an errno name or number after \"errno\", got %s",
			    tok_str(&ps->tok, b, sizeof(b)));
	}
	*ret = SCMP_ACT_ERRNO((uint32_t)e);
	return lex_next(ps);
}

/* action := allow | log | kill | kill-process | kill-thread | trap | notify | errno E */
static int parse_action(struct parser *ps, uint32_t *ret)
{
	char b[TOKEN_MAX + 4];

	if (tok_is(&ps->tok, T_WORD, "errno")) {
		int r = lex_next(ps);

		return r < 0 ? r : parse_errno(ps, ret);
	}
	for (size_t i = 0; ps->tok.kind == T_WORD && i < CD_ELEMENTSOF(actions); i++)
		if (strcmp(ps->tok.text, actions[i].name) == 0) {
			*ret = actions[i].action;
			return lex_next(ps);
		}
	return perr(ps, &ps->tok, "unknown action %s: expected allow, errno ERRNO, kill, "
				  "kill-thread, log, trap or notify", tok_str(&ps->tok, b, sizeof(b)));
}

const char *cd_policy_action_str(uint32_t action, char *buf, size_t size)
{
	if ((action & SCMP_ACT_ERRNO(0)) == SCMP_ACT_ERRNO(0) && action != SCMP_ACT_ALLOW &&
	    (action & 0xffff0000u) == SCMP_ACT_ERRNO(0)) {
		const char *n = cd_policy_errno_name((int)(action & 0xffff));

		if (n)
			snprintf(buf, size, "errno %s", n);
		else
			snprintf(buf, size, "errno %u", action & 0xffff);
		return buf;
	}
	for (size_t i = 0; i < CD_ELEMENTSOF(actions); i++)
		if (actions[i].action == action) {
			snprintf(buf, size, "%s", actions[i].name);
			return buf;
		}
	snprintf(buf, size, "action 0x%08x", action);
	return buf;
}

/* --- values and conditions --- */

/* value := term { '|' term }, term := number | CONSTANT */
static int parse_value(struct parser *ps, uint64_t *ret)
{
	char b[TOKEN_MAX + 4];
	uint64_t v = 0, term;
	int r;

	for (;;) {
		if (ps->tok.kind == T_NUM)
			term = ps->tok.num;
		else if (ps->tok.kind == T_WORD && !cd_policy_constant(ps->tok.text, &term))
			return perr(ps, &ps->tok, "unknown constant \"%s\"", ps->tok.text);
		else if (ps->tok.kind != T_WORD)
			return perr(ps, &ps->tok, "expected a number or a constant, got %s",
				    tok_str(&ps->tok, b, sizeof(b)));
		v |= term;
		r = lex_next(ps);
		if (r < 0)
			return r;
		if (!tok_is(&ps->tok, T_PUNCT, "|"))
			break;
		r = lex_next(ps);
		if (r < 0)
			return r;
	}
	*ret = v;
	return 0;
}

static int parse_cmp(struct parser *ps, enum cd_cmp *ret)
{
	static const struct {
		const char *text;
		enum cd_cmp op;
	} ops[] = { { "==", CD_CMP_EQ }, { "!=", CD_CMP_NE }, { "<", CD_CMP_LT },
		    { "<=", CD_CMP_LE }, { ">", CD_CMP_GT },  { ">=", CD_CMP_GE } };
	char b[TOKEN_MAX + 4];

	for (size_t i = 0; i < CD_ELEMENTSOF(ops); i++)
		if (tok_is(&ps->tok, T_PUNCT, ops[i].text)) {
			*ret = ops[i].op;
			return lex_next(ps);
		}
	return perr(ps, &ps->tok, "expected a comparison (==, !=, <, <=, >, >= or &), got %s",
		    tok_str(&ps->tok, b, sizeof(b)));
}

/* One spelling per meaning, so that the conflict checks compare like with like: a mask of
 * all 64 bits is a plain ==. */
static int normalize_cond(struct cd_policy_cond *c)
{
	if (c->op == CD_CMP_MASKED_EQ && c->mask == UINT64_MAX)
		c->op = CD_CMP_EQ;
	return 0;
}

/* cond := argN OP value | argN '&' MASK [ '==' value ] */
static int parse_cond(struct parser *ps, struct cd_policy_cond *c, unsigned *seen)
{
	struct token at = ps->tok;
	char b[TOKEN_MAX + 4];
	int r;

	if (ps->tok.kind != T_WORD || strncmp(ps->tok.text, "arg", 3) != 0 ||
	    ps->tok.text[3] < '0' || ps->tok.text[3] > '5' || ps->tok.text[4])
		return perr(ps, &ps->tok, "expected an argument arg0 to arg5, got %s",
			    tok_str(&ps->tok, b, sizeof(b)));
	c->arg = (unsigned)(ps->tok.text[3] - '0');
	if (*seen & (1u << c->arg))
		return perr(ps, &at, "%s is tested twice in one rule (write two rules instead)",
			    at.text);
	*seen |= 1u << c->arg;
	r = lex_next(ps);
	if (r < 0)
		return r;
	if (!tok_is(&ps->tok, T_PUNCT, "&")) {
		c->mask = UINT64_MAX;
		r = parse_cmp(ps, &c->op);
		return r < 0 ? r : parse_value(ps, &c->value);
	}
	c->op = CD_CMP_MASKED_EQ;
	r = lex_next(ps);
	if (r < 0 || (r = parse_value(ps, &c->mask)) < 0)
		return r;
	if (tok_is(&ps->tok, T_PUNCT, ")") || tok_is(&ps->tok, T_PUNCT, ",")) {
		c->value = c->mask; /* "argN & FLAG": all of FLAG's bits set */
		return normalize_cond(c);
	}
	if (!tok_is(&ps->tok, T_PUNCT, "=="))
		return perr(ps, &ps->tok, "a masked test compares with == only: expected '==', "
					  "',' or ')', got %s", tok_str(&ps->tok, b, sizeof(b)));
	r = lex_next(ps);
	if (r < 0 || (r = parse_value(ps, &c->value)) < 0)
		return r;
	if (c->value & ~c->mask)
		return perr(ps, &at, "%s & 0x%llx can never equal 0x%llx", at.text,
			    (unsigned long long)c->mask, (unsigned long long)c->value);
	return normalize_cond(c);
}

/* '(' cond { ',' cond } ')' */
static int parse_conds(struct parser *ps, struct cd_policy_rule *rule)
{
	char b[TOKEN_MAX + 4];
	unsigned seen = 0;
	int r;

	for (;;) {
		r = lex_next(ps);
		if (r < 0)
			return r;
		if (rule->n_conds == CD_POLICY_MAX_CONDS)
			return perr(ps, &ps->tok, "too many conditions (one per argument)");
		r = parse_cond(ps, &rule->conds[rule->n_conds++], &seen);
		if (r < 0)
			return r;
		if (tok_is(&ps->tok, T_PUNCT, ")"))
			return lex_next(ps);
		if (!tok_is(&ps->tok, T_PUNCT, ","))
			return perr(ps, &ps->tok, "expected ',' or ')', got %s",
				    tok_str(&ps->tok, b, sizeof(b)));
	}
}

/* --- rules --- */

static bool same_conds(const struct cd_policy_rule *a, const struct cd_policy_rule *b)
{
	if (a->n_conds != b->n_conds)
		return false;
	for (unsigned i = 0; i < a->n_conds; i++) {
		const struct cd_policy_cond *x = &a->conds[i], *y = NULL;

		for (unsigned j = 0; j < b->n_conds; j++)
			if (b->conds[j].arg == x->arg)
				y = &b->conds[j];
		if (!y || y->op != x->op || y->mask != x->mask || y->value != x->value)
			return false;
	}
	return true;
}

/* Every condition of a is also one of b's (b is narrower, or equal). */
static bool conds_subset(const struct cd_policy_rule *a, const struct cd_policy_rule *b)
{
	for (unsigned i = 0; i < a->n_conds; i++) {
		bool found = false;

		for (unsigned j = 0; j < b->n_conds && !found; j++)
			found = a->conds[i].arg == b->conds[j].arg && a->conds[i].op == b->conds[j].op &&
				a->conds[i].mask == b->conds[j].mask &&
				a->conds[i].value == b->conds[j].value;
		if (!found)
			return false;
	}
	return true;
}

/* libseccomp merges an unconditional rule over conditional rules of another action without a
 * word, and rejects equal conditions with two actions: refuse both here, naming both lines. */
static int check_conflict(struct parser *ps, const struct token *t,
			  const struct cd_policy_rule *new, bool *duplicate)
{
	char a[48], b[48];

	*duplicate = false;
	for (size_t i = 0; i < ps->pol->n_rules; i++) {
		const struct cd_policy_rule *old = &ps->pol->rules[i];

		if (old->nr != new->nr)
			continue;
		if (old->action == new->action) {
			if (same_conds(old, new))
				*duplicate = true;
			continue;
		}
		if (old->n_conds && new->n_conds && !conds_subset(old, new) && !conds_subset(new, old))
			continue;
		return perr(ps, t, "%s: \"%s\" conflicts with \"%s\" at %s:%u:%u (%s)", new->name,
			    cd_policy_action_str(new->action, a, sizeof(a)),
			    cd_policy_action_str(old->action, b, sizeof(b)), old->loc.file,
			    old->loc.line, old->loc.col,
			    old->n_conds && new->n_conds
				    ? "when one rule's conditions include the other's, libseccomp keeps "
				      "only one of them: make them disjoint"
				    : "a rule without conditions cannot be combined with rules of "
				      "another action for the same syscall");
	}
	return 0;
}

static int add_rule(struct parser *ps, const struct token *t, struct cd_policy_rule *rule)
{
	struct cd_policy *p = ps->pol;
	struct cd_policy_rule *v;
	bool duplicate;
	int r;

	rule->loc = (struct cd_policy_loc){ ps->file, t->line, t->col };
	r = check_conflict(ps, t, rule, &duplicate);
	if (r < 0 || duplicate)
		return r;
	v = realloc(p->rules, (p->n_rules + 1) * sizeof(*v));
	if (!v)
		return cd_fail(ps->err, ENOMEM, "policy", "out of memory");
	p->rules = v;
	p->rules[p->n_rules++] = *rule;
	return 0;
}

static void rule_name(struct cd_policy_rule *rule, int nr, const char *name)
{
	rule->nr = nr;
	snprintf(rule->name, sizeof(rule->name), "%.39s", name);
}

/* One target of a rule: a syscall with optional conditions, or a group. */
static int parse_target(struct parser *ps, uint32_t action)
{
	struct cd_policy_rule rule = { .action = action };
	struct token t = ps->tok;
	char b[TOKEN_MAX + 4];
	int r, nr = 0;

	if (t.kind == T_GROUP) {
		struct cd_policy_group *g = lookup_group(ps, &t);

		if (!g)
			return -EINVAL;
		r = lex_next(ps);
		if (r < 0)
			return r;
		if (tok_is(&ps->tok, T_PUNCT, "("))
			return perr(ps, &ps->tok, "a group cannot take conditions (%s): write the "
						  "syscalls out", t.text);
		for (size_t i = 0; i < g->n_members; i++) {
			rule_name(&rule, g->members[i].nr, g->members[i].name);
			r = add_rule(ps, &t, &rule);
			if (r < 0)
				return r;
		}
		return 0;
	}
	if (t.kind != T_WORD)
		return perr(ps, &t, "expected a syscall name or @group, got %s",
			    tok_str(&t, b, sizeof(b)));
	r = resolve_syscall(ps, &t, &nr);
	if (r < 0)
		return r;
	rule_name(&rule, nr, t.text);
	r = lex_next(ps);
	if (r < 0)
		return r;
	if (tok_is(&ps->tok, T_PUNCT, "(")) {
		r = parse_conds(ps, &rule);
		if (r < 0)
			return r;
	}
	return add_rule(ps, &t, &rule);
}

/* ACTION target { target } */
static int parse_rule(struct parser *ps)
{
	struct token at = ps->tok;
	char b[TOKEN_MAX + 4];
	uint32_t action;
	int r;

	r = parse_action(ps, &action);
	if (r < 0)
		return r;
	if (at_end_of_statement(&ps->tok))
		return perr(ps, &ps->tok, "expected a syscall name or @group after \"%s\", got %s",
			    at.text, tok_str(&ps->tok, b, sizeof(b)));
	while (!at_end_of_statement(&ps->tok)) {
		r = parse_target(ps, action);
		if (r < 0)
			return r;
	}
	return 0;
}

/* default ACTION */
static int parse_default(struct parser *ps)
{
	struct token at = ps->tok;
	struct cd_policy *p = ps->pol;
	int r;

	if (p->default_set)
		return perr(ps, &at, "the default action is already set at %s:%u:%u",
			    p->default_loc.file, p->default_loc.line, p->default_loc.col);
	r = lex_next(ps);
	if (r < 0 || (r = parse_action(ps, &p->default_action)) < 0)
		return r;
	p->default_set = true;
	p->default_loc = (struct cd_policy_loc){ ps->file, at.line, at.col };
	return expect_end(ps);
}

static int group_add(struct parser *ps, struct cd_policy_group *g, int nr, const char *name)
{
	struct cd_policy_member *v;

	for (size_t i = 0; i < g->n_members; i++)
		if (g->members[i].nr == nr && strcmp(g->members[i].name, name) == 0)
			return 0;
	v = realloc(g->members, (g->n_members + 1) * sizeof(*v));
	if (!v)
		return cd_fail(ps->err, ENOMEM, "policy", "out of memory");
	g->members = v;
	g->members[g->n_members].nr = nr;
	snprintf(g->members[g->n_members].name, sizeof(v->name), "%.39s", name);
	g->n_members++;
	return 0;
}

/* group @NAME member { member }, member := syscall | @group */
static int parse_group_members(struct parser *ps, struct cd_policy_group *g)
{
	char b[TOKEN_MAX + 4];
	int r, nr = 0;

	while (!at_end_of_statement(&ps->tok)) {
		const struct token *t = &ps->tok;

		if (t->kind == T_GROUP) {
			struct cd_policy_group *sub = lookup_group(ps, t);

			if (!sub)
				return -EINVAL;
			for (size_t i = 0; i < sub->n_members; i++) {
				r = group_add(ps, g, sub->members[i].nr, sub->members[i].name);
				if (r < 0)
					return r;
			}
		} else if (t->kind == T_WORD) {
			r = resolve_syscall(ps, t, &nr);
			if (r < 0 || (r = group_add(ps, g, nr, t->text)) < 0)
				return r;
		} else {
			return perr(ps, t, "expected a syscall name or @group, got %s",
				    tok_str(t, b, sizeof(b)));
		}
		r = lex_next(ps);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_group(struct parser *ps)
{
	struct cd_policy *p = ps->pol;
	struct cd_policy_group *v, *g, *old;
	char b[TOKEN_MAX + 4];
	int r;

	r = lex_next(ps);
	if (r < 0)
		return r;
	if (ps->tok.kind != T_GROUP)
		return perr(ps, &ps->tok, "expected a group name (@name) after \"group\", got %s",
			    tok_str(&ps->tok, b, sizeof(b)));
	old = find_group(p, ps->tok.text + 1);
	if (old)
		return perr(ps, &ps->tok, "group %s is already defined at %s:%u:%u", ps->tok.text,
			    old->loc.file, old->loc.line, old->loc.col);
	v = realloc(p->groups, (p->n_groups + 1) * sizeof(*v));
	if (!v)
		return cd_fail(ps->err, ENOMEM, "policy", "out of memory");
	p->groups = v;
	g = &p->groups[p->n_groups];
	*g = (struct cd_policy_group){
		.name = strdup(ps->tok.text + 1),
		.loc = { ps->file, ps->tok.line, ps->tok.col },
	};
	if (!g->name)
		return cd_fail(ps->err, ENOMEM, "policy", "out of memory");
	p->n_groups++;
	r = lex_next(ps);
	if (r < 0)
		return r;
	if (at_end_of_statement(&ps->tok))
		return perr(ps, &ps->tok, "expected the syscalls of group @%s", g->name);
	return parse_group_members(ps, g);
}

/* --- files and includes --- */

static int read_file(const char *path, char **ret, size_t *ret_len)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t len = 0;
	ssize_t n;

	/* never open a FIFO (it would block) or a device (opening may have effects) */
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (st.st_size > CD_POLICY_MAX_FILE)
		return -EFBIG;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	while (len < (size_t)st.st_size) {
		n = read(fd, buf + len, (size_t)st.st_size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*ret = CD_TAKE_PTR(buf);
	*ret_len = len;
	return 0;
}

static bool file_seen(const struct cd_policy *p, const char *real)
{
	for (size_t i = 0; p->files_real && p->files_real[i]; i++)
		if (strcmp(p->files_real[i], real) == 0)
			return true;
	return false;
}

static char *file_in(const char *dir, const char *name)
{
	return name[0] == '/' || !dir ? strdup(name) : cd_strdup_printf("%s/%s", dir, name);
}

/* The file an `include` names in the file real (NULL: text given in memory): a path relative
 * to it, or NAME.policy in its directory, then in the search path. */
static char *resolve_include(const char *real, const char *const *search, const char *name,
			     bool quoted)
{
	_cleanup_free_ char *dir = NULL;
	char *path;

	if (real && !builtin_of(real)) {
		dir = strdup(real);
		if (!dir)
			return NULL;
		*strrchr(dir, '/') = '\0';
	}
	if (quoted || strchr(name, '/'))
		return file_in(dir, name);
	/* a built-in policy includes built-ins: never a file of another version */
	if (real && builtin_of(real))
		return builtin_name(name, NULL, NULL);
	path = cd_strdup_printf("%s/%s.policy", dir ? dir : ".", name);
	if (path && (!dir || access(path, F_OK) < 0)) {
		free(path);
		path = cd_policy_find(name, search, NULL);
	}
	return path;
}

static char *include_path(struct parser *ps, const char *name, bool quoted)
{
	return resolve_include(ps->real, ps->pol->search, name, quoted);
}

static int record_file(struct cd_policy *p, const char *display, const char *real,
		       struct cordon_error *err)
{
	if (cd_strv_push(&p->files, display) < 0 || cd_strv_push(&p->files_real, real) < 0)
		return cd_fail(err, ENOMEM, "policy", "out of memory");
	return 0;
}

static int parse_file(struct parser *parent, const struct token *at, const char *path,
		      const char *display);

/* include NAME | include "PATH" */
static int parse_include(struct parser *ps)
{
	struct token at, name;
	_cleanup_free_ char *path = NULL, *display = NULL;
	char b[TOKEN_MAX + 4];
	int r;

	at = ps->tok;
	r = lex_next(ps);
	if (r < 0)
		return r;
	name = ps->tok;
	if (name.kind != T_WORD && name.kind != T_STR)
		return perr(ps, &name, "expected a policy name or \"path\" after \"include\", got %s",
			    tok_str(&name, b, sizeof(b)));
	r = lex_next(ps);
	if (r < 0 || (r = expect_end(ps)) < 0)
		return r;
	path = include_path(ps, name.text, name.kind == T_STR);
	if (!path)
		return perr(ps, &name, "cannot find policy \"%s\" next to %s or in %s", name.text,
			    ps->file, ps->pol->search && ps->pol->search[0] ? ps->pol->search[0]
									  : "no policy directory");
	display = name.kind == T_STR || strchr(name.text, '/') ? strdup(name.text)
					 : cd_strdup_printf("%s.policy", name.text);
	if (!display)
		return cd_fail(ps->err, ENOMEM, "policy", "out of memory");
	return parse_file(ps, &at, path, display);
}

static int parse_statement(struct parser *ps)
{
	char b[TOKEN_MAX + 4];

	if (tok_is(&ps->tok, T_WORD, "default"))
		return parse_default(ps);
	if (tok_is(&ps->tok, T_WORD, "include"))
		return parse_include(ps);
	if (tok_is(&ps->tok, T_WORD, "group"))
		return parse_group(ps);
	if (is_action_word(&ps->tok))
		return parse_rule(ps);
	return perr(ps, &ps->tok, "expected default, include, group or an action (allow, errno, "
				  "kill, log, trap, notify), got %s", tok_str(&ps->tok, b, sizeof(b)));
}

static int parse_text(struct parser *ps, const char *text, size_t len)
{
	int r;

	ps->lx = (struct lexer){ text, text + len, 1, 1 };
	for (;;) {
		r = lex_next(ps);
		if (r < 0)
			return r;
		if (ps->tok.kind == T_EOF)
			return 0;
		if (ps->tok.kind == T_NL)
			continue;
		r = parse_statement(ps);
		if (r < 0)
			return r;
		if (ps->tok.kind == T_EOF)
			return 0;
	}
}

/* A policy's identity: its real path, or "built-in:NAME" as it is. NULL: errno set. */
static char *source_real(const char *path)
{
	return builtin_of(path) ? strdup(path) : realpath(path, NULL);
}

/* A policy's text, by its identity: -errno (read_file's). */
static int source_read(const char *real, char **ret, size_t *ret_len)
{
	const struct builtin *b = builtin_of(real);

	if (!b)
		return read_file(real, ret, ret_len);
	*ret = strndup(b->text, *b->len);
	*ret_len = *b->len;
	return *ret ? 0 : -ENOMEM;
}

static bool including(const struct parser *ps, const char *real)
{
	for (; ps; ps = ps->parent)
		if (ps->real && strcmp(ps->real, real) == 0)
			return true;
	return false;
}

static int parse_file(struct parser *parent, const struct token *at, const char *path,
		      const char *display)
{
	struct cd_policy *p = parent->pol;
	_cleanup_free_ char *real = source_real(path), *text = NULL;
	struct parser ps = { .pol = p, .parent = parent, .depth = parent->depth + 1,
			     .err = parent->err };
	size_t len;
	int r;

	if (!real)
		return perr(parent, at, "cannot open %s: %s", path, strerror(errno));
	if (including(parent, real))
		return perr(parent, at, "include cycle: %s includes itself", display);
	if (file_seen(p, real))
		return 0; /* included before: once is enough */
	if (ps.depth > CD_POLICY_MAX_DEPTH)
		return perr(parent, at, "includes nested too deep (at most %d)",
			    CD_POLICY_MAX_DEPTH);
	r = source_read(real, &text, &len);
	if (r < 0)
		return perr(parent, at, "cannot read %s: %s", path,
			    r == -EFBIG ? "larger than 1 MiB" : strerror(-r));
	r = record_file(p, display, real, parent->err);
	if (r < 0)
		return r;
	ps.file = p->files[cd_strv_len(p->files) - 1];
	ps.real = p->files_real[cd_strv_len(p->files_real) - 1];
	return parse_text(&ps, text, len);
}

static int finish(struct parser *ps)
{
	if (!ps->pol->default_set)
		return cd_fail(ps->err, EINVAL, "policy",
			       "%s: no default action (add a line such as `default allow` or "
			       "`default errno ENOSYS`)", ps->file);
	return 0;
}

int cd_policy_parse(struct cd_policy *p, const char *text, size_t len, const char *display,
		    struct cordon_error *err)
{
	struct parser ps = { .pol = p, .err = err };
	int r;

	if (!p->search)
		p->search = cd_policy_search_path();
	r = record_file(p, display, "", err);
	if (r < 0)
		return r;
	ps.file = p->files[0];
	r = parse_text(&ps, text, len);
	return r < 0 ? r : finish(&ps);
}

int cd_policy_load(struct cd_policy *p, const char *path, const char *display,
		   struct cordon_error *err)
{
	struct parser top = { .pol = p, .file = display, .err = err };
	_cleanup_free_ char *real = source_real(path), *text = NULL;
	size_t len;
	int r;

	if (!p->search)
		p->search = cd_policy_search_path();
	if (!real)
		return cd_fail_errno(err, errno, "seccomp-policy", "%s", path);
	r = source_read(real, &text, &len);
	if (r < 0)
		return cd_fail(err, -r, "seccomp-policy", "%s: %s", path,
			       r == -EFBIG ? "larger than 1 MiB" :
			       r == -EINVAL ? "not a regular file" : strerror(-r));
	r = record_file(p, display, real, err);
	if (r < 0)
		return r;
	top.file = p->files[0];
	top.real = p->files_real[0];
	r = parse_text(&top, text, len);
	return r < 0 ? r : finish(&top);
}

/* One text a parse would read, by its identity, to fn */
static int pass_source(const char *real, cd_policy_source_fn fn, void *data)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int r = source_read(real, &text, &len);

	if (r < 0)
		return r;
	fn(text, len, data);
	return 0;
}

int cd_policy_sources(const char *path, const char *const *includes, cd_policy_source_fn fn,
		      void *data)
{
	_cleanup_free_ char *real = source_real(path);
	int r;

	if (!real)
		return -errno;
	r = pass_source(real, fn, data);
	for (size_t i = 0; r >= 0 && includes && includes[i]; i++) {
		_cleanup_free_ char *inc = resolve_include(real, cd_policy_search_path(), includes[i],
							   false);
		_cleanup_free_ char *inc_real = inc ? source_real(inc) : NULL;

		r = inc_real ? pass_source(inc_real, fn, data) : -ENOENT;
	}
	return r;
}

void cd_policy_baseline_source(cd_policy_source_fn fn, void *data)
{
	extern const char cd_baseline_policy[];
	extern const size_t cd_baseline_policy_len;

	fn(cd_baseline_policy, cd_baseline_policy_len, data);
}

int cd_policy_parse_baseline(struct cd_policy *p, struct cordon_error *err)
{
	extern const char cd_baseline_policy[];
	extern const size_t cd_baseline_policy_len;

	return cd_policy_parse(p, cd_baseline_policy, cd_baseline_policy_len, "baseline.policy",
			       err);
}

void cd_policy_free(struct cd_policy *p)
{
	for (size_t i = 0; i < p->n_groups; i++) {
		free(p->groups[i].name);
		free(p->groups[i].members);
	}
	free(p->groups);
	free(p->rules);
	cd_strv_free(p->files);
	cd_strv_free(p->files_real);
	*p = (struct cd_policy){ 0 };
}

static bool looks_like_path(const char *s)
{
	size_t n = strlen(s);

	return strchr(s, '/') || (n > 7 && strcmp(s + n - 7, ".policy") == 0);
}

char *cd_policy_display_name(const char *name_or_path)
{
	return looks_like_path(name_or_path) ? strdup(name_or_path)
					     : cd_strdup_printf("%s.policy", name_or_path);
}

char *cd_policy_find(const char *name, const char *const *search, struct cordon_error *err)
{
	bool valid = name[0] != '\0';

	if (looks_like_path(name)) {
		if (access(name, R_OK) == 0)
			return strdup(name);
		cd_fail_errno(err, errno, "seccomp-policy", "%s", name);
		return NULL;
	}
	for (const char *c = name; *c; c++)
		valid = valid && (isalnum((unsigned char)*c) || *c == '-' || *c == '_');
	if (!valid) {
		cd_fail(err, EINVAL, "seccomp-policy", "\"%s\": not a policy name (letters, digits, "
						       "- and _) nor a path", name);
		return NULL;
	}
	for (size_t i = 0; search && search[i]; i++) {
		char *path = cd_strdup_printf("%s/%s.policy", search[i], name);

		if (path && access(path, R_OK) == 0)
			return path;
		/* only a file that is not there falls back to the built-in one: an installed file
		 * that cannot be read (a stricter one an administrator made) fails the run */
		if (path && errno != ENOENT) {
			cd_fail_errno(err, errno, "seccomp-policy", "%s", path);
			free(path);
			return NULL;
		}
		free(path);
	}
	return builtin_name(name, search, err);
}


const char *cd_policy_cmp_str(enum cd_cmp op)
{
	static const char *const s[] = { "==", "!=", "<", "<=", ">", ">=", "&" };

	return op < CD_ELEMENTSOF(s) ? s[op] : "?";
}
