/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-oci-spec.c - cordon-runtime's config.json parser and floor (src/oci/spec*.c, floor*.c):
 * the engines' real configs (tests/oci/fixtures: podman root and rootless, containerd, Slurm)
 * each give a session config; each field honoured, clamped (a log line) or refused (the exact
 * line); bad JSON, wrong types, versions. TAP on stdout. Works in a temporary bundle under /tmp.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "filter.h"
#include "limit.h"
#include "spec.h"
#include "util.h"

#include "../lib/tap.h"

#define BAIL_OUT(...)                                                                              \
	do {                                                                                       \
		printf("Bail out! ");                                                              \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
		exit(1);                                                                           \
	} while (0)

static char tmp[64];	 /* the test's directory */
static char bundle[128]; /* tmp/bundle: config.json and rootfs/ */
static char scratch[128];
static char logbuf[8192]; /* the floor's lines, one a line */

static void log_line(void *userdata, const char *line)
{
	size_t n = strlen(logbuf);

	(void)userdata;
	snprintf(logbuf + n, sizeof(logbuf) - n, "%s\n", line);
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		BAIL_OUT("write %s: %s", path, strerror(errno));
	close(fd);
}

/* A host path for a bind's source under tmp: a directory for podman's shm, else a file. */
static const char *host_source(const char *dest, const char *src)
{
	static char path[256];
	bool dir = strstr(src, "/shm") != NULL;

	snprintf(path, sizeof(path), "%s/src%s", tmp, dest);
	for (char *p = path + strlen(tmp) + 1; *p; p++)
		if (*p == '/')
			*p = '_';
	if (dir)
		mkdir(path, 0755);
	else
		write_file(path, "x\n");
	return path;
}

/* The engines' paths are of the machine they were taken on: the root and the bind sources
 * become the test's own. */
static void localize(json_object *top)
{
	json_object *root = json_object_object_get(top, "root");
	json_object *mounts = json_object_object_get(top, "mounts");

	json_object_object_add(root, "path", json_object_new_string("rootfs"));
	for (size_t i = 0; mounts && i < json_object_array_length(mounts); i++) {
		json_object *m = json_object_array_get_idx(mounts, i);
		const char *type = json_object_get_string(json_object_object_get(m, "type"));
		const char *src = json_object_get_string(json_object_object_get(m, "source"));
		const char *dest = json_object_get_string(json_object_object_get(m, "destination"));

		if (type && !strcmp(type, "bind") && src && src[0] == '/')
			json_object_object_add(m, "source",
					       json_object_new_string(host_source(dest, src)));
	}
}

/* Load bundle/config.json = text and ask the floor; *ret_c the config (0) or NULL. */
static int load_config(const char *text, struct oci_spec **ret_s, struct cordon_config **ret_c,
		       struct cordon_error *err)
{
	char path[256];
	struct oci_spec *s = NULL;
	struct cordon_config *c = NULL;
	int r;

	memset(err, 0, sizeof(*err));
	logbuf[0] = '\0';
	snprintf(path, sizeof(path), "%s/config.json", bundle);
	write_file(path, text);
	r = oci_spec_load(bundle, &s, err);
	if (r >= 0) {
		c = cordon_config_new();
		r = oci_spec_config_scratch(s, scratch, c, log_line, NULL, err);
	}
	if (r < 0 || !ret_c) {
		cordon_config_free(c);
		c = NULL;
	}
	if (r < 0 || !ret_s) {
		oci_spec_free(s);
		s = NULL;
	}
	if (ret_c)
		*ret_c = c;
	if (ret_s)
		*ret_s = s;
	return r;
}

static char *fixture(const char *name, bool local)
{
	char path[512];
	json_object *o;
	char *text;

	snprintf(path, sizeof(path), "%s/%s", OCI_FIXTURES, name);
	o = json_object_from_file(path);
	if (!o)
		BAIL_OUT("fixture %s: %s", name, json_util_get_last_err());
	if (local)
		localize(o);
	text = strdup(json_object_to_json_string(o));
	json_object_put(o);
	return text;
}

/* A minimal config the floor accepts, with the member at pointer set to value (JSON text), or
 * removed when value is NULL. */
static const char base[] =
    "{\"ociVersion\":\"1.0.2\",\"process\":{\"args\":[\"/bin/true\"],\"cwd\":\"/\","
    "\"user\":{\"uid\":0,\"gid\":0},\"noNewPrivileges\":true},"
    "\"root\":{\"path\":\"rootfs\",\"readonly\":true},\"hostname\":\"h\","
    "\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"}],"
    "\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"network\"},{\"type\":\"ipc\"},"
    "{\"type\":\"uts\"},{\"type\":\"mount\"}]}}";

static char *variant(const char *pointer, const char *value)
{
	json_object *top = json_tokener_parse(base);
	char *text;

	json_object *v = value ? json_tokener_parse(value) : NULL;

	/* json-c leaves v to the caller when it fails: one past an array's end, appended */
	if (value && json_pointer_set(&top, pointer, v) < 0) {
		_cleanup_free_ char *parent = strdup(pointer);
		json_object *a;

		*strrchr(parent, '/') = '\0';
		if (json_pointer_get(top, parent, &a) < 0 ||
		    !json_object_is_type(a, json_type_array))
			BAIL_OUT("variant %s", pointer);
		json_object_array_add(a, v);
	}
	if (!value) {
		_cleanup_free_ char *parent = strdup(pointer);
		char *slash = strrchr(parent, '/');
		json_object *p;

		*slash = '\0';
		if (json_pointer_get(top, *parent ? parent : "", &p) < 0)
			BAIL_OUT("variant %s", pointer);
		json_object_object_del(p, slash + 1);
	}
	text = strdup(json_object_to_json_string(top));
	json_object_put(top);
	return text;
}

/* The floor's verdict on base with pointer = value: "" when accepted, else the message. */
static const char *verdict(const char *pointer, const char *value)
{
	static struct cordon_error err;
	_cleanup_free_ char *text = variant(pointer, value);

	if (load_config(text, NULL, NULL, &err) >= 0)
		return "";
	return err.msg;
}

static const char *shown(const char *value)
{
	return value ? value : "(removed)";
}

#define REFUSED(pointer, value, msg)                                                               \
	is_str(verdict(pointer, value), msg, "%s = %s", pointer, shown(value))
#define ACCEPTED(pointer, value)                                                                   \
	is_str(verdict(pointer, value), "", "%s = %s: accepted", pointer, shown(value))
#define LOGGED(sub) like_str(logbuf, sub, "logged: %s", sub)

static bool has_bind(const struct cordon_config *c, const char *dst)
{
	for (size_t i = 0; i < c->fs.n_binds; i++)
		if (!strcmp(c->fs.binds[i].dst, dst))
			return true;
	return false;
}

static uint64_t cg(const struct cordon_config *c, enum cd_cgroup_limit i)
{
	return c->limits.cgroup[i].set ? c->limits.cgroup[i].soft : 0;
}

static void test_podman_root(void)
{
	_cleanup_free_ char *text = fixture("podman-root-netnone.json", true);
	struct cordon_config *c;
	struct oci_spec *s;
	struct cordon_error err;
	const struct oci_process *p;
	char want[256];

	is_int(load_config(text, &s, &c, &err), 0, "podman root: accepted (%s)", err.msg);
	if (!c)
		return;
	p = oci_spec_process(s);
	is_str(p->args[0], "/bin/true", "podman root: process.args");
	is_str(p->env[3], "HOSTNAME=a5568bb43bbc", "podman root: process.env, in order");
	is_str(p->cwd, "/", "podman root: process.cwd");
	ok(!p->terminal, "podman root: no terminal");
	snprintf(want, sizeof(want), "%s/rootfs", bundle);
	is_str(c->fs.rootfs, want, "podman root: root.path, relative to the bundle");
	is_str(oci_spec_rootfs(s), want, "podman root: oci_spec_rootfs");
	ok(c->identity.uid_set && c->identity.uid == 0 && c->identity.gid == 0,
	   "podman root: process.user 0:0");
	is_str(c->identity.hostname, "a5568bb43bbc", "podman root: hostname");
	ok(has_bind(c, "/etc/hosts") && has_bind(c, "/etc/hostname") &&
	       has_bind(c, "/run/.containerenv"),
	   "podman root: its file binds, read-only");
	LOGGED("mounts[7]: /etc/hostname: a read-write file: clamped to read-only");
	LOGGED("mounts[5]: /dev/shm: the engine's directory is not shared: cordon's own /dev/shm");
	is_str(c->fs.workdir, scratch, "podman root: no read-write directory: the scratch workdir");
	is_str(c->fs.workdir_target, OCI_SCRATCH_TARGET, "podman root: at OCI_SCRATCH_TARGET");
	is_uint(cg(c, CD_CG_PIDS), 2048, "podman root: pids.limit 2048");
	is_int(c->limits.cgroup_mode, CORDON_CGROUP_BEST_EFFORT, "podman root: limits best-effort");
	ok(c->limits.rlimits[RLIMIT_NOFILE].set && c->limits.rlimits[RLIMIT_NOFILE].hard == 1024,
	   "podman root: RLIMIT_NOFILE 1024");
	LOGGED("process.capabilities: 11 of the engines' default set: clamped to none");
	LOGGED("process.noNewPrivileges: absent: clamped to true");
	ok(c->sysctl.n == 1 && !strcmp(c->sysctl.v[0].path, "net/ipv4/ping_group_range") &&
	       !strcmp(c->sysctl.v[0].value, "0 0"),
	   "podman root: linux.sysctl's ping_group_range \"0 0\" carried to the sandbox");
	LOGGED("linux.seccomp: the profile (22 rules, default SCMP_ACT_ERRNO) installed in the "
	       "container's processes");
	ok(c->seccomp.bpf && c->seccomp.bpf_len % 8 == 0 && c->seccomp.bpf_len / 8 > 100,
	   "podman root: its profile compiled for the session's commands (%zu instructions)",
	   c->seccomp.bpf_len / 8);
	LOGGED("linux.maskedPaths[9]: /sys/fs/selinux: not masked");
	is_int(c->net.mode, CORDON_NET_NONE, "podman root: a network namespace of its own");
	is_str(oci_spec_annotation(s, "io.podman.annotations.autoremove"), "TRUE",
	       "podman root: annotations");
	{
		const char *const *k, *const *v;

		is_uint(oci_spec_annotations(s, &k, &v), 8, "podman root: 8 annotations");
		is_str(k[0], "io.container.manager",
		       "podman root: annotations in the file's order");
	}
	/* exec's --process against this container */
	{
		struct oci_process *ep = NULL;
		char path[512];

		snprintf(path, sizeof(path), "%s/podman-exec-process.json", OCI_FIXTURES);
		is_int(oci_process_load(path, s, &ep, &err), 0,
		       "podman exec --process: accepted (%s)", err.msg);
		if (ep) {
			is_str(ep->cwd, "/tmp", "podman exec: cwd");
			is_str(ep->env[3], "FOO=bar", "podman exec: env");
			is_str(ep->env[4], "HOME=", "podman exec: env, an empty value kept");
			ok(!ep->terminal && ep->uid == 0, "podman exec: no terminal, uid 0");
		}
		oci_process_free(ep);
		snprintf(path, sizeof(path), "%s/exec.json", tmp);
		write_file(path, "{\"args\":[\"/bin/id\"],\"cwd\":\"/\",\"user\":{\"uid\":1000,"
				 "\"gid\":1000}}");
		ep = NULL;
		memset(&err, 0, sizeof(err));
		ok(oci_process_load(path, s, &ep, &err) == -EPERM && !ep, "exec as another user: "
									  "-EPERM");
		is_str(err.msg, "process.user: 1000:1000: exec runs as the container's user (0:0)",
		       "exec as another user: refused, one line");
		write_file(path, "{\"args\":[\"/bin/id\"],\"cwd\":\"/\",\"capabilities\":"
				 "{\"effective\":[\"CAP_SYS_PTRACE\"]}}");
		memset(&err, 0, sizeof(err));
		oci_process_load(path, s, &ep, &err);
		like_str(err.msg, "process.capabilities.effective[0]: CAP_SYS_PTRACE: refused",
			 "exec with CAP_SYS_PTRACE: refused");
		write_file(path, "{\"args\":[\"/bin/id\"],\"cwd\":\"/\"");
		memset(&err, 0, sizeof(err));
		oci_process_load(path, s, &ep, &err);
		like_str(err.msg, "process: not JSON: unexpected end at byte", "exec: bad JSON");
		write_file(path, "{\"args\":\"/bin/id\",\"cwd\":\"/\"}");
		memset(&err, 0, sizeof(err));
		oci_process_load(path, s, &ep, &err);
		is_str(err.msg, "process.args: not an array", "exec: a wrong type, its path");
		memset(&err, 0, sizeof(err));
		oci_process_load(tmp, s, &ep, &err);
		like_str(err.msg, ": not a regular file", "exec: a directory as --process");
	}
	cordon_config_free(c);
	oci_spec_free(s);
}

/* Its text with the annotation key=value added. */
static char *annotated(const char *text, const char *key, const char *value)
{
	json_object *top = json_tokener_parse(text), *a;
	char *out;

	if (!json_object_object_get_ex(top, "annotations", &a)) {
		a = json_object_new_object();
		json_object_object_add(top, "annotations", a);
	}
	json_object_object_add(a, key, json_object_new_string(value));
	out = strdup(json_object_to_json_string(top));
	json_object_put(top);
	return out;
}

static void test_fixtures(void)
{
	static const char *const names[] = {
	    "podman-root-tty-limits.json",
	    "podman-rootless-netnone.json",
	    "slurm-rootless-run.json",
	    "ctr-run.json",
	};
	static const char *const refused[][2] = {
	    /* the engines' network namespaces, long gone: joined by path, opened at create */
	    {"podman-root-bridge.json", "linux.namespaces[1]: network "
					"/run/netns/netns-b01a62da-63f7-ec8b-6ac0-dd5c52bb86c9: "
					"No such file or directory"},
	    {"ctr-run-with-netns.json", "linux.namespaces[4]: network /run/netns/h30ns: No such "
					"file or directory"},
	    {"slurm-rootless-run.json", "linux.namespaces: no network entry: the host's network "
					"namespace: refused (annotation cordon.net=host allows "
					"it)"},
	};
	struct cordon_error err;

	for (size_t i = 0; i < CD_ELEMENTSOF(names); i++) {
		_cleanup_free_ char *text = fixture(names[i], true), *net = NULL;
		struct cordon_config *c;

		/* podman's bridge network is a namespace it made (-tty-limits ran with one):
		 * refused below; the rest of the config is what is tested here */
		if (i == 0) {
			json_object *o = json_tokener_parse(text);

			json_pointer_set(&o, "/linux/namespaces/1",
					 json_tokener_parse("{\"type\":\"network\"}"));
			free(text);
			text = strdup(json_object_to_json_string(o));
			json_object_put(o);
		}
		/* Slurm's rootless bundle has no network namespace: its user says so */
		if (i == 2)
			net = annotated(text, "cordon.net", "host");
		is_int(load_config(net ? net : text, NULL, &c, &err), 0, "%s: accepted (%s)",
		       names[i], err.msg);
		if (i == 0 && c) {
			ok(has_bind(c, "/etc/resolv.conf"), "tty-limits: /etc/resolv.conf bound");
			is_uint(cg(c, CD_CG_MEMORY), 64u << 20, "tty-limits: memory.limit 64M");
			is_uint(cg(c, CD_CG_MEMORY_SWAP), 64u << 20,
				"tty-limits: memory.swap 128M (memory and swap) is 64M of swap");
			is_uint(cg(c, CD_CG_CPUS), 500, "tty-limits: cpu quota/period 0.5 CPU");
		}
		if (i == 2 && c) {
			is_int(c->net.mode, CORDON_NET_HOST,
			       "slurm, cordon.net=host: the host's "
			       "network");
			LOGGED(
			    "mounts[5]: /sys: the host's /sys bound: cordon's own read-only /sys");
			/* it maps 0 to uid 1004, the user it was taken as: not the caller's */
			if (getuid() != 1004)
				LOGGED("linux.uidMappings, gidMappings: clamped");
		}
		if (i == 3 && c) {
			ok(c->fs.n_tmpfs == 1 && !strcmp(c->fs.tmpfs[0].path, "/run") &&
			       c->fs.tmpfs[0].size == 65536u << 10,
			   "containerd: tmpfs /run, size=65536k");
			LOGGED("linux.resources.cpu.shares: 1024: not applied");
			LOGGED("linux.cgroupsPath: \"/h30/t9\": not used");
		}
		cordon_config_free(c);
	}
	for (size_t i = 0; i < CD_ELEMENTSOF(refused); i++) {
		_cleanup_free_ char *text = fixture(refused[i][0], true);

		load_config(text, NULL, NULL, &err);
		is_str(err.msg, refused[i][1], "%s: refused, one line", refused[i][0]);
	}
}

static void test_bad_json(void)
{
	struct cordon_error err;

	load_config("{\"ociVersion\": ", NULL, NULL, &err);
	like_str(err.msg, "config.json: not JSON: unexpected end at byte", "truncated JSON");
	load_config("{} x", NULL, NULL, &err);
	is_str(err.msg, "config.json: not JSON: text after the value at byte 3", "text after it");
	load_config("[1]", NULL, NULL, &err);
	is_str(err.msg, "config.json: not a JSON object", "not an object");
	load_config("{}", NULL, NULL, &err);
	is_str(err.msg, "ociVersion: missing", "empty object");
	{
		struct oci_spec *s = NULL;
		char path[256];

		snprintf(path, sizeof(path), "%s/nothing", tmp);
		memset(&err, 0, sizeof(err));
		ok(oci_spec_load(path, &s, &err) == -ENOENT && !s, "a missing bundle: -ENOENT");
		like_str(err.msg, "/nothing", "a missing bundle: named");
	}
}

static void test_versions(void)
{
	ACCEPTED("/ociVersion", "\"1.0.0\"");
	ACCEPTED("/ociVersion", "\"1.1.0-rc.1\"");
	ACCEPTED("/ociVersion", "\"1.2.1\"");
	REFUSED("/ociVersion", "\"1.3.0\"",
		"ociVersion: \"1.3.0\": not supported (runtime-spec 1.0 to 1.2)");
	REFUSED("/ociVersion", "\"2.0.0\"",
		"ociVersion: \"2.0.0\": not supported (runtime-spec 1.0 to 1.2)");
	REFUSED("/ociVersion", "\"1.0\"",
		"ociVersion: \"1.0\": not supported (runtime-spec 1.0 to 1.2)");
	REFUSED("/ociVersion", "\"0.6.0\"",
		"ociVersion: \"0.6.0\": not supported (runtime-spec 1.0 to 1.2)");
	REFUSED("/ociVersion", "1", "ociVersion: not a string");
}

static void test_types(void)
{
	REFUSED("/process/args", "\"/bin/true\"", "process.args: not an array");
	REFUSED("/process/args", "[\"/bin/echo\", 1]", "process.args[1]: not a string");
	REFUSED("/process/args", "[]", "process.args: missing or empty (the command to run)");
	REFUSED("/process/env", "[\"NOEQUALS\"]", "process.env[0]: \"NOEQUALS\" is not KEY=VALUE");
	REFUSED("/process/cwd", "\"tmp\"", "process.cwd: \"tmp\" is not absolute");
	REFUSED("/process/cwd", NULL, "process.cwd: missing");
	REFUSED("/process/user/uid", "\"0\"", "process.user.uid: not an integer");
	REFUSED("/process/user/uid", "-1", "process.user.uid: negative");
	REFUSED("/process/user/gid", "1.5", "process.user.gid: not an integer");
	REFUSED("/process/user/additionalGids", "[1, \"x\"]",
		"process.user.additionalGids[1]: not an integer");
	REFUSED("/process/terminal", "\"yes\"", "process.terminal: not a boolean");
	REFUSED("/process/consoleSize", "{\"height\": 24}", "process.consoleSize.width: missing");
	REFUSED("/process/rlimits", "[{\"type\": \"RLIMIT_NOFILE\", \"soft\": 2, \"hard\": 1}]",
		"process.rlimits[0]: soft limit above the hard limit");
	REFUSED("/process/rlimits", "[{\"type\": \"NOFILE\", \"soft\": 1, \"hard\": 1}]",
		"process.rlimits[0].type: \"NOFILE\" is not an RLIMIT_ name");
	REFUSED("/process/rlimits", "[{\"type\": \"RLIMIT_FOO\", \"soft\": 1, \"hard\": 1}]",
		"process.rlimits[0].type: RLIMIT_FOO: unknown");
	REFUSED("/process/capabilities", "{\"bounding\": \"CAP_KILL\"}",
		"process.capabilities.bounding: not an array");
	REFUSED("/process/noNewPrivileges", "1", "process.noNewPrivileges: not a boolean");
	REFUSED("/process/oomScoreAdj", "2000",
		"process.oomScoreAdj: 2000 is out of range (-1000 to 1000)");
	REFUSED("/process", NULL, "process: missing");
	REFUSED("/root", NULL, "root: missing");
	REFUSED("/root/path", "7", "root.path: not a string");
	REFUSED("/root/readonly", "\"true\"", "root.readonly: not a boolean");
	REFUSED("/hostname", "[]", "hostname: not a string");
	REFUSED("/mounts/0/options", "[\"ro\", 3]", "mounts[0].options[1]: not a string");
	REFUSED("/mounts/0/destination", NULL, "mounts[0].destination: missing");
	REFUSED("/mounts/0/destination", "\"proc\"",
		"mounts[0].destination: \"proc\" is not absolute");
	REFUSED("/mounts", "{}", "mounts: not an array");
	REFUSED("/linux/namespaces/0/type", "\"pids\"",
		"linux.namespaces[0].type: \"pids\" is not a namespace type");
	REFUSED("/linux/namespaces/0", "{\"type\": \"network\"}",
		"linux.namespaces[1].type: network given twice");
	REFUSED("/linux/uidMappings", "[{\"containerID\": 0, \"hostID\": \"1\", \"size\": 1}]",
		"linux.uidMappings[0].hostID: not an integer");
	REFUSED("/linux/resources", "{\"pids\": {\"limit\": \"10\"}}",
		"linux.resources.pids.limit: not an integer");
	REFUSED("/linux/resources", "{\"memory\": {\"limit\": -2}}",
		"linux.resources.memory.limit: -2 is not a limit (-1: none)");
	REFUSED("/linux/resources", "{\"devices\": [{\"access\": \"rwm\"}]}",
		"linux.resources.devices[0].allow: missing");
	REFUSED("/linux/seccomp", "{\"syscalls\": []}", "linux.seccomp.defaultAction: missing");
	REFUSED("/linux/sysctl", "{\"net.ipv4.ip_forward\": 1}",
		"linux.sysctl.net.ipv4.ip_forward: not a string");
	REFUSED("/linux/maskedPaths", "\"/proc/kcore\"", "linux.maskedPaths: not an array");
	REFUSED("/annotations", "{\"a\": 1}", "annotations.a: not a string");
	REFUSED("/hooks", "{\"prestart\": [{\"args\": []}]}", "hooks.prestart[0].path: missing");
	REFUSED("/hooks", "{\"poststart\": [{\"path\": \"/bin/x\", \"args\": \"x\"}]}",
		"hooks.poststart[0].args: not an array");
	REFUSED("/hooks", "{\"poststart\": [{\"path\": \"/bin/x\", \"timeout\": 0}]}",
		"hooks.poststart[0].timeout: must be a positive integer");
	REFUSED("/linux/seccomp",
		"{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"architectures\": "
		"[1]}",
		"linux.seccomp.architectures[0]: not a string");
	REFUSED("/linux/seccomp",
		"{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": "
		"[{\"names\": [\"x\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": "
		"[{\"index\": 7, \"value\": 1, \"op\": \"SCMP_CMP_EQ\"}]}]}",
		"linux.seccomp.syscalls[0].args[0].index: 7 is out of range (at most 5)");
	REFUSED("/linux/seccomp",
		"{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": "
		"[{\"names\": [\"x\"], \"action\": \"SCMP_ACT_ERRNO\", "
		"\"errnoRet\": \"EPERM\"}]}",
		"linux.seccomp.syscalls[0].errnoRet: not an integer");
	ACCEPTED("/hooks", "null");
}

static void test_namespaces(void)
{
	const char *ns = "/linux/namespaces";

	REFUSED(
	    ns,
	    "[{\"type\":\"network\"},{\"type\":\"ipc\"},{\"type\":\"uts\"},{\"type\":\"mount\"}]",
	    "linux.namespaces: no pid entry: the host's pid namespace: refused");
	REFUSED(ns,
		"[{\"type\":\"pid\"},{\"type\":\"network\"},{\"type\":\"ipc\"},{\"type\":\"uts\"}]",
		"linux.namespaces: no mount entry: the host's mount namespace: refused");
	REFUSED(
	    ns,
	    "[{\"type\":\"pid\"},{\"type\":\"network\"},{\"type\":\"uts\"},{\"type\":\"mount\"}]",
	    "linux.namespaces: no ipc entry: the host's ipc namespace: refused");
	REFUSED(ns,
		"[{\"type\":\"pid\"},{\"type\":\"ipc\"},{\"type\":\"uts\"},{\"type\":\"mount\"}]",
		"linux.namespaces: no network entry: the host's network namespace: refused "
		"(annotation cordon.net=host allows it)");
	REFUSED("/linux/namespaces/5", "{\"type\":\"user\",\"path\":\"/proc/1/ns/user\"}",
		"linux.namespaces[5]: user /proc/1/ns/user: joining one: refused (the container's "
		"is always its own)");
	REFUSED("/linux/namespaces/0", "{\"type\":\"pid\",\"path\":\"/proc/1/ns/pid\"}",
		"linux.namespaces[0]: pid /proc/1/ns/pid: joining one: refused (the container's is "
		"always its own)");
	/* joined by path (network, ipc, uts): a namespace file of the type, not the host's */
	REFUSED("/linux/namespaces/3", "{\"type\":\"uts\",\"path\":\"/proc/self/ns/uts\"}",
		"linux.namespaces[3]: uts /proc/self/ns/uts: the host's own uts namespace (the "
		"caller's, or pid 1's): joining it is no isolation: refused");
	REFUSED("/linux/namespaces/3", "{\"type\":\"uts\",\"path\":\"/proc/self/ns/ipc\"}",
		"linux.namespaces[3]: uts /proc/self/ns/ipc: a namespace of type ipc, not uts: "
		"refused");
	REFUSED("/linux/namespaces/1", "{\"type\":\"network\",\"path\":\"/proc/self/status\"}",
		"linux.namespaces[1]: network /proc/self/status: not a namespace file: refused");
	REFUSED("/linux/namespaces/2", "{\"type\":\"ipc\",\"path\":\"/dev/null\"}",
		"linux.namespaces[2]: ipc /dev/null: not a namespace file: refused");
	ACCEPTED("/linux/namespaces/5", "{\"type\":\"user\"}");
	ACCEPTED("/linux/namespaces/5", "{\"type\":\"cgroup\"}");
	/* the host's network, asked for by annotation */
	{
		json_object *top = json_tokener_parse(base);
		json_object *a =
		    json_object_object_get(json_object_object_get(top, "linux"), "namespaces");
		struct cordon_config *c;
		struct cordon_error err;

		json_object_array_del_idx(a, 1, 1);
		json_object_object_add(top, "annotations",
				       json_tokener_parse("{\"cordon.net\":\"host\"}"));
		is_int(load_config(json_object_to_json_string(top), NULL, &c, &err), 0,
		       "no network entry, cordon.net=host: accepted (%s)", err.msg);
		ok(c && c->net.mode == CORDON_NET_HOST, "cordon.net=host: the host's network");
		cordon_config_free(c);
		json_object_object_add(top, "annotations",
				       json_tokener_parse("{\"cordon.net\":\"bridge\"}"));
		load_config(json_object_to_json_string(top), NULL, NULL, &err);
		is_str(err.msg, "annotations.cordon.net: \"bridge\": only \"host\"",
		       "cordon.net=bridge: refused");
		json_object_put(top);
	}
}

static void test_process_floor(void)
{
	REFUSED("/process/capabilities", "{\"bounding\":[\"CAP_KILL\",\"CAP_SYS_ADMIN\"]}",
		"process.capabilities.bounding[1]: CAP_SYS_ADMIN: refused (cordon's processes hold "
		"no capabilities; only the engines' default set is accepted, and clamped to none)");
	ACCEPTED("/process/capabilities", "{\"bounding\":[\"CAP_KILL\",\"CAP_NET_RAW\"],"
					  "\"ambient\":[\"CAP_CHOWN\"]}");
	LOGGED("process.capabilities: 3 of the engines' default set: clamped to none");
	ACCEPTED("/process/noNewPrivileges", "false");
	LOGGED("process.noNewPrivileges: false: clamped to true (always on)");
	ACCEPTED("/process/apparmorProfile", "\"docker-default\"");
	LOGGED("process.apparmorProfile: \"docker-default\": ignored");
	ACCEPTED("/process/user/additionalGids", "[0, 10]");
	LOGGED("process.user.additionalGids: clamped to none");
	ACCEPTED("/root/readonly", "false");
	LOGGED("root.readonly: false: clamped to true (cordon's root is read-only)");
	REFUSED("/hostname", "\"no_underscore\"",
		"hostname: \"no_underscore\" is not a hostname (1-64 of a-z 0-9 - .)");
	REFUSED("/annotations", "{\"io.podman.annotations.privileged\":\"TRUE\"}",
		"annotations.io.podman.annotations.privileged: TRUE: privileged containers are "
		"refused");
	ACCEPTED("/annotations", "{\"io.podman.annotations.privileged\":\"FALSE\"}");
	ACCEPTED("/hooks", "{\"poststop\":[{\"path\":\"/bin/true\"}]}");
}

/* hooks: every kind read, in order; each field's shape refused naming its JSON path; the
 * poststop hooks saved for delete read back the same (spec_hooks.c) */
static void test_hooks(void)
{
	static const char hooks[] =
	    "{\"prestart\":[{\"path\":\"/p\"}],\"createRuntime\":[{\"path\":\"/cr\"}],"
	    "\"createContainer\":[{\"path\":\"/cc\"}],\"startContainer\":[{\"path\":\"/sc\"}],"
	    "\"poststart\":[{\"path\":\"/ps\",\"args\":[\"ps\",\"a b\"],\"env\":[\"A=1\"],"
	    "\"timeout\":7},{\"path\":\"/ps2\"}],\"poststop\":[{\"path\":\"/po\",\"timeout\":3}]}";
	static const char *const paths[OCI_HOOK_KINDS] = {"/p", "/cr", "/cc", "/sc", "/ps", "/po"};
	_cleanup_free_ char *text = variant("/hooks", hooks), *saved = NULL;
	struct oci_hook_list back[OCI_HOOK_KINDS] = {{0}};
	struct cordon_error err = {0};
	struct oci_spec *s = NULL;
	const struct oci_hook_list *l;

	is_int(load_config(text, &s, NULL, &err), 0, "every kind of hook: accepted (%s)", err.msg);
	if (!s)
		return;
	for (size_t k = 0; k < OCI_HOOK_KINDS; k++) {
		l = oci_spec_hooks(s, (enum oci_hook_kind)k);
		is_str(l->n ? l->v[0].path : "", paths[k], "hooks.%s[0].path", oci_hook_names[k]);
	}
	l = oci_spec_hooks(s, OCI_HOOK_POSTSTART);
	is_int((int)l->n, 2, "hooks.poststart: two hooks, in order");
	is_str(l->v[0].args[1], "a b", "hooks.poststart[0].args[1]");
	is_str(l->v[0].env[0], "A=1", "hooks.poststart[0].env[0]");
	ok(!l->v[0].env[1], "hooks.poststart[0].env: exactly the config's");
	is_int((int)l->v[0].timeout, 7, "hooks.poststart[0].timeout");
	ok(!l->v[1].args && !l->v[1].env && !l->v[1].timeout, "hooks.poststart[1]: none given");
	saved = oci_spec_poststop_json(s);
	is_int(oci_hooks_parse_text(saved, back, &err), 0, "poststop saved for delete: read back");
	is_str(back[OCI_HOOK_POSTSTOP].n ? back[OCI_HOOK_POSTSTOP].v[0].path : "", "/po",
	       "... hooks.poststop[0].path");
	is_int((int)back[OCI_HOOK_POSTSTOP].v[0].timeout, 3, "... its timeout");
	ok(!back[OCI_HOOK_PRESTART].n, "... and nothing else");
	oci_hooks_free(back);
	oci_spec_free(s);

	REFUSED("/hooks", "{\"prestart\":[{\"path\":\"hook.sh\"}]}",
		"hooks.prestart[0].path: \"hook.sh\": not an absolute path");
	REFUSED("/hooks", "{\"prestart\":[{\"path\":\"\"}]}",
		"hooks.prestart[0].path: \"\": not an absolute path");
	REFUSED("/hooks", "{\"poststart\":[{\"path\":\"/a\"},{\"path\":\"/b\",\"timeout\":-1}]}",
		"hooks.poststart[1].timeout: must be a positive integer");
	REFUSED("/hooks", "{\"poststop\":[{\"path\":\"/a\",\"timeout\":\"5\"}]}",
		"hooks.poststop[0].timeout: must be a positive integer");
	REFUSED("/hooks", "{\"poststop\":[{\"path\":\"/a\",\"timeout\":1.5}]}",
		"hooks.poststop[0].timeout: must be a positive integer");
	REFUSED("/hooks", "{\"poststop\":[{\"path\":\"/a\",\"timeout\":4294967297}]}",
		"hooks.poststop[0].timeout: must be a positive integer");
	REFUSED("/hooks", "{\"createRuntime\":[{\"path\":\"/a\",\"env\":[\"A=1\",\"B\"]}]}",
		"hooks.createRuntime[0].env[1]: not KEY=VALUE");
	REFUSED("/hooks", "{\"createRuntime\":[{\"path\":\"/a\",\"env\":[\"=1\"]}]}",
		"hooks.createRuntime[0].env[0]: not KEY=VALUE");
	REFUSED("/hooks", "{\"createRuntime\":[{\"path\":\"/a\",\"args\":[\"a\",2]}]}",
		"hooks.createRuntime[0].args[1]: not a string");
	REFUSED("/hooks", "{\"startContainer\":[\"/a\"]}", "hooks.startContainer[0]: not an object");
	REFUSED("/hooks", "{\"startContainer\":{}}", "hooks.startContainer: not an array");
	REFUSED("/hooks", "[]", "hooks: not an object");
	ACCEPTED("/hooks", "{\"prestart\":[],\"poststop\":null}");
	is_int(oci_hooks_parse_text("[1]", back, &err), -EINVAL, "a saved hooks file not an object");
}

static void test_rlimit_clamp(void)
{
	struct rlimit mine;
	char value[160];

	getrlimit(RLIMIT_NOFILE, &mine);
	if (mine.rlim_max == RLIM_INFINITY || mine.rlim_max >= 1u << 30) {
		skip("RLIMIT_NOFILE's hard limit is unlimited here", "nofile clamped");
		return;
	}
	snprintf(value, sizeof(value),
		 "[{\"type\":\"RLIMIT_NOFILE\",\"soft\":1048576,\"hard\":1048576}]");
	ACCEPTED("/process/rlimits", value);
	snprintf(value, sizeof(value),
		 "process.rlimits[0]: RLIMIT_NOFILE 1048576:1048576: clamped to %llu:%llu (the "
		 "caller's hard limit)",
		 (unsigned long long)mine.rlim_max, (unsigned long long)mine.rlim_max);
	LOGGED(value);
}

static void test_mounts(void)
{
	char value[1024], dir[160], file[160];

	snprintf(dir, sizeof(dir), "%s/project", tmp);
	mkdir(dir, 0755);
	snprintf(file, sizeof(file), "%s/hosts", tmp);
	write_file(file, "127.0.0.1 localhost\n");
	{
		struct cordon_config *c;
		struct cordon_error err;
		_cleanup_free_ char *text = NULL;

		snprintf(value, sizeof(value),
			 "{\"destination\":\"/work\",\"type\":\"bind\",\"source\":\"%s\","
			 "\"options\":[\"rbind\"]}",
			 dir);
		text = variant("/mounts/1", value);
		is_int(load_config(text, NULL, &c, &err), 0,
		       "a read-write directory: accepted (%s)", err.msg);
		ok(c && !strcmp(c->fs.workdir, dir) && !strcmp(c->fs.workdir_target, "/work"),
		   "a read-write directory: the workdir, at its destination");
		cordon_config_free(c);
	}
	snprintf(value, sizeof(value),
		 "[{\"destination\":\"/a\",\"type\":\"bind\",\"source\":\"%s\"},"
		 "{\"destination\":\"/b\",\"type\":\"bind\",\"source\":\"%s\"}]",
		 dir, dir);
	REFUSED(
	    "/mounts", value,
	    "mounts[1]: /b: a second read-write directory: refused (cordon's container has one, "
	    "mounts[0])");
	REFUSED("/mounts/1", "{\"destination\":\"/w\",\"type\":\"bind\",\"source\":\"/etc\"}",
		"mounts[1]: /etc: refusing to make it writable: a system directory (/etc, /usr, "
		"/opt, /run, /dev, ... and everything below them)");
	snprintf(value, sizeof(value),
		 "{\"destination\":\"/etc/hosts\",\"type\":\"bind\",\"source\":\"%s\"}", file);
	ACCEPTED("/mounts/1", value);
	LOGGED("mounts[1]: /etc/hosts: a read-write file: clamped to read-only");
	/* the rootfs is read-only: a mount point it lacks below a directory it has */
	snprintf(value, sizeof(value),
		 "{\"destination\":\"/etc/nothing\",\"type\":\"bind\",\"source\":\"%s\"}", file);
	ACCEPTED("/mounts/1", value);
	LOGGED(
	    "mounts[1]: /etc/nothing: no such file in the rootfs, which cordon mounts read-only: "
	    "not bound");
	snprintf(value, sizeof(value),
		 "{\"destination\":\"/etc/nodir\",\"type\":\"bind\",\"source\":\"%s\"}", dir);
	REFUSED("/mounts/1", value,
		"mounts[1]: /etc/nodir: no such directory in the rootfs, which cordon mounts "
		"read-only: refused (make it in the image)");
	snprintf(value, sizeof(value),
		 "{\"destination\":\"/srv/x\",\"type\":\"bind\",\"source\":\"%s\"}", file);
	ACCEPTED("/mounts/1", value);
	LOGGED("mounts[1]: /srv/x: a read-write file: clamped to read-only");
	ACCEPTED("/mounts/1", "{\"destination\":\"/opt\",\"type\":\"bind\",\"source\":\"/usr\","
			      "\"options\":[\"rbind\",\"ro\"]}");
	ACCEPTED("/mounts/1", "{\"destination\":\"/data\",\"type\":\"tmpfs\",\"source\":\"tmpfs\","
			      "\"options\":[\"size=1g\"]}");
	unlike_str(logbuf, "size=1g", "tmpfs size=: applied, not logged");
	ACCEPTED("/mounts/1",
		 "{\"destination\":\"/data\",\"type\":\"tmpfs\",\"source\":\"tmpfs\","
		 "\"options\":[\"rw\",\"noexec\",\"nosuid\",\"nodev\",\"mode=1777\"]}");
	LOGGED("mounts[1]: /data: option noexec not applied (cordon's mounts are nosuid, nodev)");
	LOGGED("mounts[1]: /data: option mode=1777 not applied");
	REFUSED("/mounts/1",
		"{\"destination\":\"/data\",\"type\":\"tmpfs\",\"options\":[\"size=lots\"]}",
		"mounts[1].options: \"size=lots\" is not a size");
	REFUSED("/mounts/1", "{\"destination\":\"/data\",\"type\":\"overlay\",\"source\":\"o\"}",
		"mounts[1]: /data: type \"overlay\" there: refused (bind and tmpfs only)");
	REFUSED("/mounts/1",
		"{\"destination\":\"/dev/fuse\",\"type\":\"bind\",\"source\":\"/dev/fuse\"}",
		"mounts[1]: /dev/fuse: /proc, /sys and /dev are cordon's own (only their usual "
		"mounts are accepted): refused");
	REFUSED("/mounts/1", "{\"destination\":\"/host\",\"type\":\"proc\",\"source\":\"proc\"}",
		"mounts[1]: /host: type \"proc\" there: refused (bind and tmpfs only)");
	REFUSED("/mounts/1", "{\"destination\":\"/\",\"type\":\"bind\",\"source\":\"/\"}",
		"mounts[1]: a mount on /: refused (root.path is the root)");
	ACCEPTED("/mounts/1", "{\"destination\":\"/dev/mqueue\",\"type\":\"mqueue\"}");
	LOGGED("mounts[1]: /dev/mqueue: not mounted");
	ACCEPTED("/linux/maskedPaths", "[\"/proc/kcore\", \"/etc/shadow\"]");
	REFUSED("/linux/maskedPaths", "[\"relative\"]",
		"linux.maskedPaths[0]: \"relative\" is not an absolute path without \"..\"");
	ACCEPTED("/linux/readonlyPaths", "[\"/proc/sys\", \"/etc\"]");
	snprintf(value, sizeof(value), "{\"destination\":\"/data\",\"type\":\"tmpfs\"}");
	{
		json_object *top = json_tokener_parse(base);
		struct cordon_error err;

		json_object_array_add(json_object_object_get(top, "mounts"),
				      json_tokener_parse(value));
		json_pointer_set(&top, "/linux/readonlyPaths", json_tokener_parse("[\"/data/x\"]"));
		load_config(json_object_to_json_string(top), NULL, NULL, &err);
		is_str(err.msg,
		       "linux.readonlyPaths[0]: /data/x: below the writable /data: a "
		       "read-only path there is not built yet: refused",
		       "a read-only path in a tmpfs: refused");
		json_object_put(top);
	}
	{
		struct cordon_config *c;
		struct cordon_error err;
		_cleanup_free_ char *text = variant("/linux/maskedPaths", "[\"/etc/shadow\"]");

		load_config(text, NULL, &c, &err);
		ok(c && c->fs.hide && !strcmp(c->fs.hide[0], "/etc/shadow") && !c->fs.hide[1],
		   "maskedPaths: hidden (cordon's own /proc masks not repeated)");
		cordon_config_free(c);
	}
}

/* One tmpfs at dst in c, of that size, and no other there. */
static bool one_tmpfs(const struct cordon_config *c, const char *dst, uint64_t size)
{
	size_t n = 0;
	bool sized = false;

	for (size_t i = 0; c && i < c->fs.n_tmpfs; i++)
		if (!strcmp(c->fs.tmpfs[i].path, dst)) {
			n++;
			sized = c->fs.tmpfs[i].size == size;
		}
	return n == 1 && sized;
}

/* podman --read-only's tmpfs on /var/tmp, whatever the image's /var holds: the container runs
 * (cordon's root is read-only: no mount point is made in the image's /var). */
static void test_var_tmp(void)
{
	static const char mnt[] = "{\"destination\":\"/var/tmp\",\"type\":\"tmpfs\","
				  "\"source\":\"tmpfs\",\"options\":[\"rw\",\"size=1m\"]}";
	char *text = variant("/mounts/1", mnt);
	struct cordon_config *c;
	struct cordon_error err;
	char path[256], bind[512];

	is_int(load_config(text, NULL, &c, &err), 0, "tmpfs /var/tmp, no /var: accepted (%s)",
	       err.msg);
	ok(one_tmpfs(c, "/var/tmp", 1u << 20), "... mounted (below cordon's own /var)");
	cordon_config_free(c);
	snprintf(path, sizeof(path), "%s/rootfs/var", bundle);
	mkdir(path, 0755);
	is_int(load_config(text, NULL, &c, &err), 0,
	       "tmpfs /var/tmp, a /var without tmp: accepted (%s)", err.msg);
	ok(c && c->fs.n_tmpfs == 0, "... not mounted: the read-only /var has no mount point");
	LOGGED("mounts[1]: /var/tmp: no such directory in the rootfs, which cordon mounts "
	       "read-only: tmpfs not mounted");
	cordon_config_free(c);
	snprintf(path, sizeof(path), "%s/rootfs/var/tmp", bundle);
	mkdir(path, 0755);
	is_int(load_config(text, NULL, &c, &err), 0,
	       "tmpfs /var/tmp, a /var with tmp: accepted (%s)", err.msg);
	ok(one_tmpfs(c, "/var/tmp", 1u << 20), "... the config's tmpfs, in place of the floor's");
	cordon_config_free(c);
	/* below the floor's own /var/tmp, the mount point is made in that tmpfs */
	free(text);
	snprintf(bind, sizeof(bind),
		 "{\"destination\":\"/var/tmp/f\",\"type\":\"bind\",\"source\":\"%s/hosts\","
		 "\"options\":[\"ro\"]}",
		 tmp);
	text = variant("/mounts/1", bind);
	is_int(load_config(text, NULL, &c, &err), 0,
	       "a bind below the image's /var/tmp: accepted (%s)", err.msg);
	ok(c && has_bind(c, "/var/tmp/f"), "... bound (in the floor's tmpfs on /var/tmp)");
	cordon_config_free(c);
	free(text);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/rootfs/var", bundle);
	rmdir(path);
}

static void test_image_dirs(void)
{
	struct cordon_config *c;
	struct cordon_error err;
	_cleanup_free_ char *text = variant("/hostname", "\"h\"");
	char path[256], want[256];
	bool var = false;

	is_int(load_config(text, NULL, &c, &err), 0, "an image without /var: accepted (%s)",
	       err.msg);
	ok(c && c->fs.n_binds == 0 && c->fs.n_tmpfs == 0, "an image without /var: nothing added");
	cordon_config_free(c);
	snprintf(path, sizeof(path), "%s/rootfs/var", bundle);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/rootfs/var/tmp", bundle);
	mkdir(path, 0755);
	is_int(load_config(text, NULL, &c, &err), 0, "an image with /var: accepted (%s)", err.msg);
	snprintf(want, sizeof(want), "%s/rootfs/var", bundle);
	for (size_t i = 0; c && i < c->fs.n_binds; i++)
		var |= !strcmp(c->fs.binds[i].dst, "/var") && !strcmp(c->fs.binds[i].src, want);
	ok(var, "the image's /var: bound read-only (cordon hides a host root's)");
	ok(c && c->fs.n_tmpfs == 1 && !strcmp(c->fs.tmpfs[0].path, "/var/tmp") &&
	       c->fs.tmpfs[0].size == 256u << 20,
	   "the image's /var/tmp: a fresh tmpfs, as cordon gives a host root");
	cordon_config_free(c);
	/* a mount point the read-only /var lacks */
	snprintf(path, sizeof(path), "%s/hosts", tmp);
	snprintf(want, sizeof(want),
		 "{\"destination\":\"/var/lib/dir\",\"type\":\"bind\",\"source\":\"%s\","
		 "\"options\":[\"ro\"]}",
		 tmp);
	REFUSED("/mounts/1", want,
		"mounts[1]: /var/lib/dir: no such directory in the rootfs, which cordon mounts "
		"read-only: refused (make it in the image)");
	snprintf(path, sizeof(path), "%s/rootfs/var/tmp", bundle);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/rootfs/var", bundle);
	rmdir(path);
	test_var_tmp();
}

static void test_linux_floor(void)
{
	REFUSED("/linux/sysctl", "{\"kernel.domainname\":\"x\"}",
		"linux.sysctl.kernel.domainname: the hostname is config.json's hostname (the UTS "
		"namespace's domain name stays \"(none)\"): refused");
	REFUSED("/linux/sysctl", "{\"vm.swappiness\":\"10\"}",
		"linux.sysctl.vm.swappiness: not namespaced: it would change the host: refused");
	REFUSED("/linux/sysctl", "{\"kernel.pid_max\":\"10\"}",
		"linux.sysctl.kernel.pid_max: not namespaced: it would change the host: refused");
	REFUSED("/linux/sysctl", "{\"net/ipv4/../../kernel/core_pattern\":\"|/x\"}",
		"linux.sysctl.net/ipv4/../../kernel/core_pattern: not a sysctl key (an empty, "
		"\".\" or \"..\" component): refused");
	REFUSED("/linux/sysctl", "{\"kernel.shmmax\":\"1\\n2\"}",
		"linux.sysctl.kernel.shmmax: a newline or control character in the value: refused");
	ACCEPTED("/linux/sysctl", "{\"kernel.shmmax\":\"1024\"}");
	ACCEPTED("/linux/sysctl", "{\"net.ipv4.ip_unprivileged_port_start\":\"0\"}");
	REFUSED("/linux/devices",
		"[{\"path\":\"/dev/fuse\",\"type\":\"c\",\"major\":10,\"minor\":229}]",
		"linux.devices[0]: /dev/fuse: refused (cordon's /dev has only null, zero, full, "
		"random, urandom, tty)");
	ACCEPTED("/linux/devices",
		 "[{\"path\":\"/dev/null\",\"type\":\"c\",\"major\":1,\"minor\":3}]");
	REFUSED("/linux/resources", "{\"devices\":[{\"allow\":true,\"access\":\"rwm\"}]}",
		"linux.resources.devices[0]: allow a -1:-1: refused (cordon's /dev has only its "
		"standard nodes)");
	REFUSED("/linux/resources",
		"{\"devices\":[{\"allow\":true,\"type\":\"c\",\"major\":10,"
		"\"minor\":229,\"access\":\"rwm\"}]}",
		"linux.resources.devices[0]: allow c 10:229: refused (cordon's /dev has only its "
		"standard nodes)");
	REFUSED("/linux/seccomp",
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":"
		"[{\"names\":[\"mkdir\"],\"action\":\"SCMP_ACT_NOTIFY\"}]}",
		"linux.seccomp.syscalls[0].action: SCMP_ACT_NOTIFY: handing system calls to a "
		"listener is refused");
	REFUSED("/linux/seccomp", "{\"defaultAction\":\"SCMP_ACT_NOTIFY\"}",
		"linux.seccomp.defaultAction: SCMP_ACT_NOTIFY: handing system calls to a listener "
		"is refused");
	REFUSED("/linux/seccomp", "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":\"/s\"}",
		"linux.seccomp.listenerPath: SCMP_ACT_NOTIFY: handing system calls to a listener "
		"is refused");
	REFUSED("/linux/resources", "{\"memory\":{\"limit\":1048576,\"swap\":1024}}",
		"linux.resources.memory.swap: 1024 is below memory.limit (it counts memory and "
		"swap)");
	ACCEPTED("/linux/personality", "{\"domain\":\"LINUX\"}");
	LOGGED("linux.personality: ignored");
}

/* What the compiled profile of base with linux.seccomp = profile answers for the native call
 * nr with args (SECCOMP_RET_*, data included); 0xdead when the floor refused it. */
static uint32_t profile_says(const char *profile, const char *call, const uint64_t args[6])
{
	struct cordon_config *c = NULL;
	struct cordon_error err;
	_cleanup_free_ char *text = variant("/linux/seccomp", profile);
	struct cd_filter f = {0};
	uint32_t v;

	if (load_config(text, NULL, &c, &err) < 0 || !c->seccomp.bpf) {
		diag("refused: %s", err.msg);
		cordon_config_free(c);
		return 0xdead;
	}
	f.insns = c->seccomp.bpf;
	f.len = (unsigned short)(c->seccomp.bpf_len / sizeof(struct sock_filter));
	v = cd_filter_eval(&f, seccomp_arch_native(), seccomp_syscall_resolve_name(call), args);
	cordon_config_free(c);
	return v;
}

static void test_seccomp(void)
{
	static const uint64_t none[6] = {0}, pers_8[6] = {8}, pers_9[6] = {9};
	const char *errno_mkdir =
	    "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"mkdir\","
	    "\"mkdirat\",\"no_such_call_xy\",\"no_such_call_x\"],\"action\":\"SCMP_ACT_ERRNO\","
	    "\"errnoRet\":1},{\"names\":[\"no_such_call_x\"],\"action\":\"SCMP_ACT_LOG\"}]}";
	const char *allow_list =
	    "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":38,\"architectures\":"
	    "[\"SCMP_ARCH_X86_64\",\"SCMP_ARCH_X86\",\"SCMP_ARCH_X32\",\"SCMP_ARCH_NOSUCH\"],"
	    "\"flags\":[\"SECCOMP_FILTER_FLAG_LOG\"],\"syscalls\":[{\"names\":[\"read\","
	    "\"write\"],\"action\":\"SCMP_ACT_ALLOW\"},{\"names\":[\"personality\"],"
	    "\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"value\":8,"
	    "\"op\":\"SCMP_CMP_EQ\"}]},{\"names\":[\"socket\"],\"action\":"
	    "\"SCMP_ACT_KILL_PROCESS\",\"args\":[{\"index\":0,\"value\":16,\"op\":"
	    "\"SCMP_CMP_EQ\"},{\"index\":0,\"value\":17,\"op\":\"SCMP_CMP_EQ\"}]},"
	    "{\"names\":[\"ioctl\"],\"action\":\"SCMP_ACT_TRAP\",\"args\":[{\"index\":1,"
	    "\"value\":255,\"valueTwo\":4,\"op\":\"SCMP_CMP_MASKED_EQ\"}]}]}";
	uint64_t a[6] = {0};
	struct cordon_config *c = NULL;
	struct cordon_error err;

	is_int((int)profile_says(errno_mkdir, "mkdir", none), (int)(SECCOMP_RET_ERRNO | 1),
	       "seccomp: mkdir -> ERRNO errnoRet 1");
	LOGGED("linux.seccomp.syscalls: 2 names libseccomp does not know, skipped: "
	       "no_such_call_xy, no_such_call_x\n");
	is_int((int)profile_says(errno_mkdir, "mkdirat", none), (int)(SECCOMP_RET_ERRNO | 1),
	       "seccomp: mkdirat too");
	is_int((int)profile_says(errno_mkdir, "openat", none), (int)SECCOMP_RET_ALLOW,
	       "seccomp: the rest: the default (allow)");
	is_int((int)profile_says(allow_list, "read", none), (int)SECCOMP_RET_ALLOW,
	       "seccomp allow-list: read allowed");
	is_int((int)profile_says(allow_list, "mkdir", none), (int)(SECCOMP_RET_ERRNO | 38),
	       "seccomp allow-list: the rest: defaultErrnoRet 38");
	LOGGED("linux.seccomp.architectures: 1 libseccomp does not know, skipped: "
	       "SCMP_ARCH_NOSUCH");
#ifdef __x86_64__
	LOGGED("linux.seccomp.architectures: SCMP_ARCH_X86, SCMP_ARCH_X32: not compiled in "
	       "(cordon's baseline kills every other ABI of this CPU)");
#endif
	is_int((int)profile_says(allow_list, "personality", pers_8), (int)SECCOMP_RET_ALLOW,
	       "seccomp: personality(8): args[0] == 8 holds: allowed");
	is_int((int)profile_says(allow_list, "personality", pers_9), (int)(SECCOMP_RET_ERRNO | 38),
	       "seccomp: personality(9): the default");
	a[0] = 17;
	is_int((int)profile_says(allow_list, "socket", a), (int)SECCOMP_RET_KILL_PROCESS,
	       "seccomp: one index twice: either comparison (17)");
	a[0] = 16;
	is_int((int)profile_says(allow_list, "socket", a), (int)SECCOMP_RET_KILL_PROCESS,
	       "seccomp: ... or the other (16)");
	a[0] = 2;
	is_int((int)profile_says(allow_list, "socket", a), (int)(SECCOMP_RET_ERRNO | 38),
	       "seccomp: ... neither: the default");
	a[0] = 0, a[1] = 0x1204;
	is_int((int)profile_says(allow_list, "ioctl", a), (int)SECCOMP_RET_TRAP,
	       "seccomp: MASKED_EQ: arg1 & 255 == 4: TRAP");
	a[1] = 0x1205;
	is_int((int)profile_says(allow_list, "ioctl", a), (int)(SECCOMP_RET_ERRNO | 38),
	       "seccomp: MASKED_EQ: arg1 & 255 != 4: the default");
	{
		_cleanup_free_ char *text = variant("/linux/seccomp", allow_list);

		ok(load_config(text, NULL, &c, &err) >= 0 &&
			   c->seccomp.bpf_flags == SECCOMP_FILTER_FLAG_LOG,
		   "seccomp: flags: SECCOMP_FILTER_FLAG_LOG carried to the install");
		cordon_config_free(c);
	}
	is_int((int)profile_says("{\"defaultAction\":\"SCMP_ACT_KILL\"}", "getpid", none),
	       (int)SECCOMP_RET_KILL_THREAD, "seccomp: SCMP_ACT_KILL is KILL_THREAD");
	REFUSED("/linux/seccomp", "{\"defaultAction\":\"SCMP_ACT_MAYBE\"}",
		"linux.seccomp.defaultAction: \"SCMP_ACT_MAYBE\" is not a seccomp action");
	REFUSED("/linux/seccomp",
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"mkdir\"],"
		"\"action\":\"SCMP_ACT_DENY\"}]}",
		"linux.seccomp.syscalls[0].action: \"SCMP_ACT_DENY\" is not a seccomp action");
	REFUSED("/linux/seccomp",
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"mkdir\"],"
		"\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":0,\"value\":1,"
		"\"op\":\"SCMP_CMP_SORTA\"}]}]}",
		"linux.seccomp.syscalls[0].args[0].op: \"SCMP_CMP_SORTA\" is not a seccomp "
		"comparison");
	REFUSED("/linux/seccomp",
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"mkdir\"],"
		"\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":6,\"value\":1,"
		"\"op\":\"SCMP_CMP_EQ\"}]}]}",
		"linux.seccomp.syscalls[0].args[0].index: 6 is out of range (at most 5)");
	REFUSED("/linux/seccomp",
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"flags\":[\"SECCOMP_FILTER_FLAG_X\"]}",
		"linux.seccomp.flags[0]: \"SECCOMP_FILTER_FLAG_X\" is not a seccomp flag");
	REFUSED("/linux/seccomp",
		"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":5000}",
		"linux.seccomp.defaultErrnoRet: 5000 is out of range (at most 4095)");
	ACCEPTED("/linux/seccomp", "{\"defaultAction\":\"SCMP_ACT_ALLOW\"}");
}

static void test_annotations(void)
{
	struct cordon_config *c;
	struct cordon_error err;
	_cleanup_free_ char *text = variant(
	    "/annotations", "{\"cordon.allow-net\":\"example.com,192.0.2.1:8443\","
			    "\"cordon.audit\":\"audit.jsonl\",\"cordon.cgroup\":\"required\"}");
	char want[256];

	is_int(load_config(text, NULL, &c, &err), 0, "cordon's annotations: accepted (%s)",
	       err.msg);
	if (c) {
		is_uint(c->net.n_allow, 2, "cordon.allow-net: two entries");
		snprintf(want, sizeof(want), "%s/audit.jsonl", bundle);
		is_str(c->outputs.audit_path, want, "cordon.audit: a file in the bundle");
		is_int(c->limits.cgroup_mode, CORDON_CGROUP_REQUIRED, "cordon.cgroup=required");
	}
	cordon_config_free(c);
	REFUSED("/annotations", "{\"cordon.audit\":\"/etc/shadow\"}",
		"annotations.cordon.audit: \"/etc/shadow\": a file name (made in the bundle "
		"directory)");
	REFUSED(
	    "/annotations", "{\"cordon.audit\":\"../../x\"}",
	    "annotations.cordon.audit: \"../../x\": a file name (made in the bundle directory)");
	REFUSED("/annotations", "{\"cordon.audit\":\"config.json\"}",
		"annotations.cordon.audit: \"config.json\": a file name (made in the bundle "
		"directory)");
	REFUSED("/annotations", "{\"cordon.cgroup\":\"maybe\"}",
		"annotations.cordon.cgroup: \"maybe\": only \"required\"");
	like_str(verdict("/annotations", "{\"cordon.allow-net\":\"exa mple\"}"),
		 "annotations.cordon.allow-net: ", "cordon.allow-net: a bad entry, named");
}

static void test_example(void)
{
	for (int rootless = 0; rootless < 2; rootless++) {
		_cleanup_free_ char *text = oci_spec_example(rootless);
		struct cordon_error err;

		ok(text != NULL, "spec example (rootless %d): written", rootless);
		is_int(load_config(text ? text : "", NULL, NULL, &err), 0,
		       "spec example (rootless %d): the floor accepts it (%s)", rootless, err.msg);
		if (rootless && getuid() != 0)
			unlike_str(logbuf, "uidMappings",
				   "spec --rootless: its mapping is cordon's own");
	}
}

int main(void)
{
	char rootfs[160];

	snprintf(tmp, sizeof(tmp), "/tmp/test-oci-spec-XXXXXX");
	if (!mkdtemp(tmp))
		BAIL_OUT("mkdtemp: %s", strerror(errno));
	snprintf(bundle, sizeof(bundle), "%s/bundle", tmp);
	snprintf(rootfs, sizeof(rootfs), "%s/rootfs", bundle);
	snprintf(scratch, sizeof(scratch), "%s/scratch", tmp);
	if (mkdir(bundle, 0755) < 0 || mkdir(rootfs, 0755) < 0 || mkdir(scratch, 0755) < 0)
		BAIL_OUT("mkdir: %s", strerror(errno));
	/* an image's /etc, with the files podman binds over */
	{
		static const char *const files[] = {"hosts", "hostname", "resolv.conf"};
		char path[256];

		snprintf(path, sizeof(path), "%s/etc", rootfs);
		if (mkdir(path, 0755) < 0)
			BAIL_OUT("mkdir: %s", strerror(errno));
		for (size_t i = 0; i < CD_ELEMENTSOF(files); i++) {
			snprintf(path, sizeof(path), "%s/etc/%s", rootfs, files[i]);
			write_file(path, "");
		}
	}

	test_podman_root();
	test_fixtures();
	test_bad_json();
	test_versions();
	test_types();
	test_namespaces();
	test_process_floor();
	test_rlimit_clamp();
	test_mounts();
	test_image_dirs();
	test_linux_floor();
	test_seccomp();
	test_annotations();
	test_hooks();
	test_example();

	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
		if (system(cmd) != 0)
			diag("could not remove %s", tmp);
	}
	return done_testing();
}
