/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cmd_state.c - state (the runtime-spec's state JSON, runc's fields), list (table or JSON) and
 * ps (the container's host pids, from its holder). state and list read state.json and the
 * holder's lock only: root may read a user's --root (Slurm asks as root). Runs in
 * cordon-runtime.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"
#include "util.h"

static int state_of(int rootfd, const char *id, struct oci_state *st, struct cordon_error *err)
{
	_cleanup_close_ int dirfd = oci_dir_open(rootfd, id, err);

	if (dirfd < 0)
		return dirfd;
	return oci_state_read(dirfd, st, err);
}

int oci_cmd_state(int argc, char **argv)
{
	const char *id = oci_one_id("state", argc, argv);
	struct cordon_error err = {0};
	_cleanup_close_ int rootfd = -1;
	_cleanup_free_ char *text = NULL;
	struct oci_state st;
	int r;

	if (!id)
		return OCI_EXIT_BAD;
	rootfd = oci_root_open(oci_g.root, false, true, &err);
	if (rootfd < 0)
		return oci_error_from(OCI_EXIT_FAIL, "--root", &err);
	r = state_of(rootfd, id, &st, &err);
	if (r < 0)
		return oci_error_from(OCI_EXIT_FAIL, "state", &err);
	text = oci_state_json(&st);
	oci_state_clear(&st);
	if (!text)
		return oci_error(OCI_EXIT_FAIL, "state", "out of memory");
	printf("%s\n", text);
	return 0;
}

enum { L_FORMAT, L_QUIET };
static const struct oci_opt list_opts[] = {
    [L_FORMAT] = {"format", 'f', true},
    [L_QUIET] = {"quiet", 'q', false},
};

/* A string of a state file for the table: its control bytes (a newline, an ESC that would drive
 * the reader's terminal) and backslashes written \xHH, so that one container is one line */
static char *table_str(const char *s)
{
	size_t n = strlen(s ? s : ""), at = 0;
	char *out = malloc(4 * n + 1);

	if (!out)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++)
		if (*p < 0x20 || *p == 0x7f || *p == '\\')
			at += (size_t)sprintf(out + at, "\\x%02x", *p);
		else
			out[at++] = (char)*p;
	out[at] = '\0';
	return out;
}

static void list_one(const struct oci_state *st, bool json, bool quiet, bool *first)
{
	_cleanup_free_ char *id = table_str(st->id), *bundle = table_str(st->bundle),
			    *created = table_str(st->created);

	if (!id || !bundle || !created)
		return;
	if (quiet) {
		printf("%s\n", id);
	} else if (json) {
		_cleanup_free_ char *text = oci_state_json(st);

		if (text) {
			printf("%s%s", *first ? "" : ",", text);
			*first = false;
		}
	} else {
		printf("%-20s %-8d %-10s %-40s %s\n", id, (int)st->pid, oci_status_name(st->status),
		       bundle, created);
	}
}

int oci_cmd_list(int argc, char **argv)
{
	const char *v[CD_ELEMENTSOF(list_opts)];
	struct cordon_error err = {0};
	_cleanup_(cd_closedirp) DIR *d = NULL;
	bool first = true;
	struct dirent *de;
	bool json;
	char **rest;
	int n, r, fd;

	r = oci_opts_parse("list", list_opts, CD_ELEMENTSOF(list_opts), argc, argv, v, &n, &rest,
			   false);
	if (r)
		return r;
	if (n)
		return oci_error(OCI_EXIT_BAD, "list", "no operand expected");
	if (v[L_FORMAT] && strcmp(v[L_FORMAT], "json") && strcmp(v[L_FORMAT], "table"))
		return oci_error(OCI_EXIT_BAD, "--format", "\"%s\": table or json", v[L_FORMAT]);
	json = v[L_FORMAT] && !strcmp(v[L_FORMAT], "json");
	fd = oci_root_open(oci_g.root, false, true, &err);
	if (fd < 0 && err.code == ENOENT) {
		printf(json ? "null\n" : "");
		return 0;
	}
	if (fd < 0)
		return oci_error_from(OCI_EXIT_FAIL, "--root", &err);
	d = fdopendir(fd);
	if (!d)
		return oci_error(OCI_EXIT_FAIL, "list", "%s", strerror(errno));
	if (json)
		printf("[");
	else if (!v[L_QUIET])
		printf("%-20s %-8s %-10s %-40s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED");
	while ((de = readdir(d))) {
		struct oci_state st;

		if (oci_id_check(de->d_name, NULL) < 0 ||
		    state_of(dirfd(d), de->d_name, &st, NULL) < 0)
			continue;
		list_one(&st, json, v[L_QUIET] != NULL, &first);
		oci_state_clear(&st);
	}
	if (json)
		printf("]\n");
	return 0;
}

enum { P_FORMAT };
static const struct oci_opt ps_opts[] = {
    [P_FORMAT] = {"format", 'f', true},
};

static int ps_print(const int32_t *pids, size_t n, bool json)
{
	if (json) {
		printf("[");
		for (size_t i = 0; i < n; i++)
			printf("%s%d", i ? "," : "", pids[i]);
		printf("]\n");
		return 0;
	}
	printf("PID\n");
	for (size_t i = 0; i < n; i++)
		printf("%d\n", pids[i]);
	return 0;
}

int oci_cmd_ps(int argc, char **argv)
{
	const char *v[CD_ELEMENTSOF(ps_opts)], *id;
	struct cordon_error err = {0};
	_cleanup_close_ int rootfd = -1, dirfd = -1, sock = -1;
	_cleanup_free_ int32_t *pids = malloc(OCI_MSG_MAX);
	size_t len = 0;
	char **rest;
	int n, r;

	r = oci_opts_parse("ps", ps_opts, CD_ELEMENTSOF(ps_opts), argc, argv, v, &n, &rest, true);
	if (r)
		return r;
	/* runc passes what follows the id to ps(1); we have no ps(1) arguments to offer */
	id = oci_one_id("ps", n > 1 ? 1 : n, rest);
	if (!id || !pids)
		return OCI_EXIT_BAD;
	if (v[P_FORMAT] && strcmp(v[P_FORMAT], "json") && strcmp(v[P_FORMAT], "table"))
		return oci_error(OCI_EXIT_BAD, "--format", "\"%s\": table or json", v[P_FORMAT]);
	rootfd = oci_root_open(oci_g.root, false, true, &err);
	if (rootfd < 0)
		return oci_error_from(OCI_EXIT_FAIL, "--root", &err);
	dirfd = oci_dir_open(rootfd, id, &err);
	if (dirfd < 0)
		return oci_error_from(OCI_EXIT_FAIL, "ps", &err);
	sock = oci_ctl_connect(dirfd, &err);
	if (sock < 0 && err.code == EPERM)
		return oci_error_from(OCI_EXIT_FAIL, "ps", &err);
	if (sock < 0)
		return ps_print(pids, 0, v[P_FORMAT] && !strcmp(v[P_FORMAT], "json"));
	oci_ctl_bound(sock, OCI_CTL_WAIT_S);
	r = oci_ctl_call(sock, OCI_MSG_PS, NULL, 0, NULL, 0, pids, OCI_MSG_MAX, &len, &err);
	if (r < 0)
		return oci_error_from(OCI_EXIT_FAIL, "ps", &err);
	return ps_print(pids, len / sizeof(int32_t), v[P_FORMAT] && !strcmp(v[P_FORMAT], "json"));
}
