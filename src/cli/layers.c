/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * layers.c - the command line of layers: `cordon layers`, `cordon diff`, `cordon apply`,
 * `cordon discard`, over cordon.h's cordon_layer_*. Runs in the caller. Bad input or a failure:
 * one line `cordon: <what>: <why>` on stderr, exit 125.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cordon.h"
#include "layers.h"

struct args {
	const char *cmd;
	const char *store; /* --layer-dir, or NULL: the default */
	const char *id;
	const char *workdir; /* apply --workdir, or NULL: the current directory */
	unsigned diff_flags;
	bool all;
};

static const char usage[] =
	"usage: cordon layers [--layer-dir DIR]\n"
	"       cordon diff [--stat|--patch] [--layer-dir DIR] [ID]\n"
	"       cordon apply [--layer-dir DIR] [-w DIR] [ID]\n"
	"       cordon discard [--layer-dir DIR] [ID|--all]\n"
	"\n"
	"A run with a copy-on-write workdir leaves its changes as a layer in the store\n"
	"(--layer-dir, else $CORDON_LAYER_DIR, else ~/.local/state/cordon/layers;\n"
	"/var/lib/cordon/layers for root). ID omitted: the newest layer of the current\n"
	"directory (apply: of DIR).\n"
	"  layers   list the layers: id, when saved, workdir, number of changes; a layer\n"
	"           that cannot be checked as cordon's own is listed with why\n"
	"  diff     what a layer changes: a summary (the files, then the commits the run\n"
	"           made) then a patch of the work tree (--stat, --patch: only one)\n"
	"  apply    write a layer's changes into the current directory (-w, --workdir: DIR),\n"
	"           which must be the layer's workdir, after checking that nothing changed\n"
	"           there since the run (else nothing is written); the run's commits are\n"
	"           fetched as refs/cordon/ID/BRANCH, the rest of its .git is dropped; the\n"
	"           layer is then removed from the store\n"
	"  discard  remove a layer (--all: every layer of the store)\n";

/* One line: its control bytes shown as \xNN (why may name a path of the sandbox's, a file's or
 * a commit's: no escape sequence of its reaches the terminal, no newline forges a line) */
static int fail(const char *what, const char *why)
{
	fprintf(stderr, "cordon: %s: ", what);
	for (const unsigned char *p = (const unsigned char *)why; *p; p++)
		if (iscntrl(*p))
			fprintf(stderr, "\\x%02x", *p);
		else
			fputc(*p, stderr);
	fputc('\n', stderr);
	return CORDON_EXIT_FAILURE;
}

static int parse(int argc, char **argv, struct args *a)
{
	enum { OPT_DIR = 256, OPT_STAT, OPT_PATCH, OPT_ALL, OPT_HELP };
	static const struct option opts[] = {
		{ "layer-dir", required_argument, NULL, OPT_DIR },
		{ "workdir", required_argument, NULL, 'w' },
		{ "stat", no_argument, NULL, OPT_STAT },
		{ "patch", no_argument, NULL, OPT_PATCH },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "help", no_argument, NULL, OPT_HELP },
		{ 0 },
	};
	int c;

	a->cmd = argv[1];
	optind = 2;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+hw:", opts, NULL)) != -1) {
		bool diff = !strcmp(a->cmd, "diff"), discard = !strcmp(a->cmd, "discard");

		if (c == OPT_DIR)
			a->store = optarg;
		else if (c == 'w' && !strcmp(a->cmd, "apply"))
			a->workdir = optarg;
		else if ((c == OPT_STAT || c == OPT_PATCH) && diff)
			a->diff_flags |= c == OPT_STAT ? CORDON_DIFF_STAT : CORDON_DIFF_PATCH;
		else if (c == OPT_ALL && discard)
			a->all = true;
		else if (c == OPT_HELP || c == 'h') {
			fputs(usage, stdout);
			return 0;
		} else if (c == 'w') { /* its argument, not the option, is argv[optind - 1] */
			return fail(a->cmd, "-w, --workdir: apply's only (cordon --help)");
		} else {
			char why[128];

			snprintf(why, sizeof(why), "unknown option %s (cordon %s --help)",
				 argv[optind - 1], a->cmd);
			return fail(a->cmd, why);
		}
	}
	if (optind < argc)
		a->id = argv[optind++];
	if (optind < argc || (a->id && (!strcmp(a->cmd, "layers") || a->all)))
		return fail(a->cmd, "too many arguments (cordon --help)");
	return -1;
}

static void when(int64_t t, char buf[32])
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!localtime_r(&tt, &tm) || !strftime(buf, 32, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, 32, "%lld", (long long)t);
}

static int list(const struct args *a)
{
	struct cordon_layer_info *v = NULL;
	struct cordon_error err = { 0 };
	size_t n = 0;

	if (cordon_layer_list(a->store, &v, &n, &err) < 0)
		return fail("layers", err.msg);
	for (size_t i = 0; i < n; i++) {
		char t[32];

		if (v[i].problem) {
			printf("%s  cannot be read: %s\n", v[i].id, v[i].problem);
			continue;
		}
		when(v[i].saved, t);
		printf("%s  %s  %s  %llu change%s\n", v[i].id, t, v[i].workdir,
		       (unsigned long long)v[i].changes, v[i].changes == 1 ? "" : "s");
	}
	cordon_layer_list_free(v, n);
	return 0;
}

/* The directory whose layer to pick: apply's DIR, or the current one (by its path: only to
 * choose; apply checks the directory itself). */
static int where(const struct args *a, char dir[PATH_MAX])
{
	char why[PATH_MAX + 64];

	if (!a->workdir)
		return getcwd(dir, PATH_MAX) ? 0
					     : fail(a->cmd, "the current directory is gone: give "
							    "a layer ID");
	if (realpath(a->workdir, dir))
		return 0;
	snprintf(why, sizeof(why), "%s: %s", a->workdir, strerror(errno));
	return fail(a->cmd, why);
}

/* ID omitted: the newest layer whose workdir is the directory. */
static int pick(struct args *a, char id[17])
{
	struct cordon_layer_info *v = NULL;
	struct cordon_error err = { 0 };
	char dir[PATH_MAX], why[PATH_MAX + 96];
	size_t n = 0;
	int r;

	if (a->id)
		return 0;
	r = where(a, dir);
	if (r)
		return r;
	if (cordon_layer_list(a->store, &v, &n, &err) < 0)
		return fail(a->cmd, err.msg);
	for (size_t i = 0; i < n; i++)
		if (!v[i].problem && !strcmp(v[i].workdir, dir)) {
			memcpy(id, v[i].id, 17);
			a->id = id;
			break;
		}
	cordon_layer_list_free(v, n);
	if (a->id)
		return 0;
	snprintf(why, sizeof(why), "no layer of %s (cordon layers lists them; give an ID)", dir);
	return fail(a->cmd, why);
}

static int diff(struct args *a)
{
	struct cordon_error err = { 0 };
	char id[17];
	int r = pick(a, id);

	if (r)
		return r;
	fflush(stdout);
	if (cordon_layer_diff(a->store, a->id, a->diff_flags, STDOUT_FILENO, &err) < 0)
		return fail("diff", err.msg);
	return 0;
}

/* What became of the run's git state: its commits as refs, the rest dropped. */
static void say_git(const struct cordon_apply_result *res)
{
	if (res->refs) {
		printf("cordon: apply: the run's commits are in");
		for (char **s = res->refs; *s; s++)
			printf("%s %s", s == res->refs ? "" : ",", *s);
		printf(" (git log %s)\n", res->refs[0]);
	}
	if (res->git_state)
		printf("cordon: apply: %llu file%s of the run's git state (.git: index, objects, "
		       "refs, logs) dropped, not written\n",
		       (unsigned long long)res->git_state, res->git_state == 1 ? "" : "s");
}

static int apply(struct args *a)
{
	struct cordon_layer_info info = { 0 };
	struct cordon_apply_result res = { 0 };
	struct cordon_error err = { 0 };
	uint64_t n = 0;
	char id[17];
	int r = pick(a, id);

	if (r)
		return r;
	if (cordon_layer_info(a->store, a->id, &info, &err) < 0 ||
	    cordon_layer_apply_result(a->store, a->id, a->workdir, &res, &err) < 0) {
		free(info.workdir);
		return fail("apply", err.msg);
	}
	n = res.changes - res.git_state;
	if (cordon_layer_discard(a->store, a->id, &err) < 0) {
		fprintf(stderr, "cordon: applied %llu changes from %s to %s; removing the layer: %s\n",
			(unsigned long long)n, a->id, info.workdir, err.msg);
		say_git(&res);
		cordon_apply_result_done(&res);
		free(info.workdir);
		return CORDON_EXIT_FAILURE;
	}
	printf("cordon: applied %llu change%s from %s to %s; layer removed\n",
	       (unsigned long long)n, n == 1 ? "" : "s", a->id, info.workdir);
	say_git(&res);
	cordon_apply_result_done(&res);
	free(info.workdir);
	return 0;
}

static int discard(struct args *a)
{
	struct cordon_layer_info *v = NULL;
	struct cordon_error err = { 0 };
	char id[17];
	size_t n = 0;
	int r;

	if (!a->all) {
		r = pick(a, id);
		if (r)
			return r;
		return cordon_layer_discard(a->store, a->id, &err) < 0 ? fail("discard", err.msg) : 0;
	}
	if (cordon_layer_list(a->store, &v, &n, &err) < 0)
		return fail("discard", err.msg);
	for (size_t i = 0; i < n; i++)
		if (cordon_layer_discard(a->store, v[i].id, &err) < 0 && err.code != ENOENT) {
			cordon_layer_list_free(v, n);
			return fail("discard", err.msg);
		}
	cordon_layer_list_free(v, n);
	return 0;
}

int cd_cli_layers(int argc, char **argv)
{
	struct args a = { 0 };
	int r = parse(argc, argv, &a);

	if (r >= 0)
		return r;
	if (!strcmp(a.cmd, "layers"))
		return list(&a);
	if (!strcmp(a.cmd, "diff"))
		return diff(&a);
	if (!strcmp(a.cmd, "apply"))
		return apply(&a);
	return discard(&a);
}
