/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cmd_misc.c - features (what this runtime takes, as runc's JSON says it) and spec (a
 * config.json cordon's floor accepts, written into the bundle). Runs in cordon-runtime.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "runtime.h"
#include "spec.h"
#include "util.h"

static void strings(struct cd_json *j, const char *key, const char *const *v)
{
	cd_json_key(j, key);
	cd_json_array_begin(j);
	for (; *v; v++)
		cd_json_string(j, *v);
	cd_json_array_end(j);
}

static void features_linux(struct cd_json *j)
{
	static const char *const ns[] = {"cgroup", "ipc",  "mount", "network",
					 "pid",	   "user", "uts",   NULL};

	cd_json_key(j, "linux");
	cd_json_object_begin(j);
	strings(j, "namespaces", ns);
	cd_json_key(j, "cgroup");
	cd_json_object_begin(j);
	cd_json_kv_bool(j, "v1", false);
	cd_json_kv_bool(j, "v2", true);
	cd_json_kv_bool(j, "systemd", false);
	cd_json_kv_bool(j, "systemdUser", false);
	cd_json_object_end(j);
	cd_json_key(j, "apparmor");
	cd_json_object_begin(j);
	cd_json_kv_bool(j, "enabled", false);
	cd_json_object_end(j);
	cd_json_key(j, "selinux");
	cd_json_object_begin(j);
	cd_json_kv_bool(j, "enabled", false);
	cd_json_object_end(j);
	cd_json_object_end(j);
}

int oci_cmd_features(int argc, char **argv)
{
	struct cd_json j = {0};
	_cleanup_free_ char *text = NULL;

	(void)argv;
	if (argc)
		return oci_error(OCI_EXIT_BAD, "features", "no operand expected");
	cd_json_object_begin(&j);
	cd_json_kv_string(&j, "ociVersionMin", "1.0.0");
	cd_json_kv_string(&j, "ociVersionMax", "1.2.0");
	cd_json_key(&j, "hooks");
	cd_json_array_begin(&j);
	for (size_t k = 0; k < OCI_HOOK_KINDS; k++)
		cd_json_string(&j, oci_hook_names[k]);
	cd_json_array_end(&j);
	features_linux(&j);
	cd_json_key(&j, "annotations");
	cd_json_object_begin(&j);
	cd_json_kv_string(&j, "io.github.cordon.runtime.version", cordon_version());
	cd_json_kv_string(&j, "io.github.cordon.runtime.model", "session");
	cd_json_object_end(&j);
	cd_json_object_end(&j);
	text = cd_json_steal(&j);
	if (!text)
		return oci_error(OCI_EXIT_FAIL, "features", "out of memory");
	printf("%s\n", text);
	return 0;
}

enum { S_BUNDLE, S_ROOTLESS };
static const struct oci_opt spec_opts[] = {
    [S_BUNDLE] = {"bundle", 'b', true},
    [S_ROOTLESS] = {"rootless", 0, false},
};

int oci_cmd_spec(int argc, char **argv)
{
	const char *v[CD_ELEMENTSOF(spec_opts)];
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int dir = -1, fd = -1;
	char **rest;
	int n, r;

	r = oci_opts_parse("spec", spec_opts, CD_ELEMENTSOF(spec_opts), argc, argv, v, &n, &rest,
			   false);
	if (r)
		return r;
	if (n)
		return oci_error(OCI_EXIT_BAD, "spec", "no operand expected");
	text = oci_spec_example(v[S_ROOTLESS] != NULL);
	if (!text)
		return oci_error(OCI_EXIT_FAIL, "spec", "out of memory");
	dir = open(v[S_BUNDLE] ? v[S_BUNDLE] : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return oci_error(OCI_EXIT_BAD, "--bundle", "%s: %s",
				 v[S_BUNDLE] ? v[S_BUNDLE] : ".", strerror(errno));
	fd = openat(dir, "config.json", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return oci_error(OCI_EXIT_BAD, "spec", "config.json: %s", strerror(errno));
	r = cd_write_all(fd, text, strlen(text));
	if (r < 0)
		return oci_error(OCI_EXIT_FAIL, "spec", "config.json: %s", strerror(-r));
	return 0;
}
