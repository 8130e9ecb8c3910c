/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* policy_show.c - cordon_policy_describe(): a policy as its rules and its compiled size, for
 * `cordon policy check|show`. */
#include <stdio.h>
#include <string.h>

#include "policy.h"
#include "filter.h"

static void show_cond(FILE *f, const struct cd_policy_cond *c)
{
	if (c->op == CD_CMP_MASKED_EQ)
		fprintf(f, "arg%u & 0x%llx == 0x%llx", c->arg, (unsigned long long)c->mask,
			(unsigned long long)c->value);
	else
		fprintf(f, "arg%u %s 0x%llx", c->arg, cd_policy_cmp_str(c->op),
			(unsigned long long)c->value);
}

static void show_rule(FILE *f, const struct cd_policy_rule *r, uint32_t def)
{
	char a[48];

	fprintf(f, "  %-16s %s", cd_policy_action_str(r->action, a, sizeof(a)), r->name);
	if (r->n_conds) {
		fputc('(', f);
		for (unsigned i = 0; i < r->n_conds; i++) {
			if (i)
				fputs(", ", f);
			show_cond(f, &r->conds[i]);
		}
		fputc(')', f);
	}
	fprintf(f, "    # %s:%u", r->loc.file, r->loc.line);
	if (r->nr < 0)
		fputs(", not on this architecture", f);
	else if (r->action == def)
		fputs(", same as the default", f);
	fputc('\n', f);
}

static void describe(FILE *f, const struct cd_policy *p, const struct cd_filter *plain,
		     const struct cd_filter *tree)
{
	char a[48];

	fprintf(f, "policy %s", p->files[0]);
	for (size_t i = 1; p->files[i]; i++)
		fprintf(f, "%s%s", i == 1 ? " (includes " : ", ", p->files[i]);
	fprintf(f, "%s\n", p->files[1] ? ")" : "");
	fprintf(f, "default: %s\n", cd_policy_action_str(p->default_action, a, sizeof(a)));
	fprintf(f, "other architectures (i386, x32): kill\n");
	fprintf(f, "rules (%zu):\n", p->n_rules);
	for (size_t i = 0; i < p->n_rules; i++)
		show_rule(f, &p->rules[i], p->default_action);
	fprintf(f, "BPF: %u instructions (binary tree), %u as a linear list\n", tree->len,
		plain->len);
	fprintf(f, "terminal injection (TIOCSTI, TIOCLINUX): %s\n",
		tree->blocks_tiocsti ? "denied" : "NOT denied (cordon starts a new session)");
}

static void policy_release(struct cd_policy *p)
{
	cd_policy_free(p);
}

static void filter_release(struct cd_filter *f)
{
	cd_filter_done(f);
}

int cordon_policy_describe(const char *name_or_path, char **ret_text, struct cordon_error *err)
{
	_cleanup_(policy_release) struct cd_policy p = { 0 };
	_cleanup_(filter_release) struct cd_filter plain = { 0 }, tree = { 0 };
	_cleanup_free_ char *path = NULL, *display = NULL;
	char *text = NULL;
	size_t size = 0;
	FILE *f;
	int r;

	path = cd_policy_find(name_or_path, cd_policy_search_path(), err);
	if (!path)
		return -(err && err->code ? err->code : EINVAL);
	display = cd_policy_display_name(name_or_path);
	if (!display)
		return cd_fail(err, ENOMEM, "policy", "out of memory");
	r = cd_policy_load(&p, path, display, err);
	if (r < 0)
		return r;
	r = cd_filter_compile(&p, false, false, &plain, err);
	if (r < 0 || (r = cd_filter_compile(&p, false, true, &tree, err)) < 0)
		return r;
	f = open_memstream(&text, &size);
	if (!f)
		return cd_fail(err, ENOMEM, "policy", "out of memory");
	describe(f, &p, &plain, &tree);
	if (fclose(f) != 0) {
		free(text);
		return cd_fail(err, ENOMEM, "policy", "out of memory");
	}
	*ret_text = text;
	return 0;
}
