/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * spec-interim.c - INTERIM: the smallest reading of config.json that lets the lifecycle run
 * end to end (root.path, process args/env/cwd/terminal/consoleSize, hostname, annotations)
 * until the parser and floor of spec.h (spec.c, floor.c: branch i30-spec) are merged; meson
 * builds it only while oci_spec_sources is empty, and it is deleted at that merge. Every other
 * field is ignored here: not for release. Runs in cordon-runtime.
 */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spec.h"
#include "util.h"

struct oci_spec {
	char *bundle;
	char *rootfs;
	char *hostname;
	struct oci_process *process;
	char **ann_keys;
	char **ann_values;
	size_t n_ann;
};

void oci_process_free(struct oci_process *p)
{
	if (!p)
		return;
	cd_strv_free(p->args);
	cd_strv_free(p->env);
	free(p->cwd);
	free(p);
}

void oci_spec_free(struct oci_spec *s)
{
	if (!s)
		return;
	free(s->bundle);
	free(s->rootfs);
	free(s->hostname);
	oci_process_free(s->process);
	cd_strv_free(s->ann_keys);
	cd_strv_free(s->ann_values);
	free(s);
}

static int strv_get(json_object *o, const char *key, char ***ret, struct cordon_error *err)
{
	json_object *a;
	char **v = calloc(1, sizeof(char *));

	if (!v)
		return cd_fail(err, ENOMEM, "config.json", "out of memory");
	*ret = v;
	if (!json_object_object_get_ex(o, key, &a))
		return 0;
	if (!json_object_is_type(a, json_type_array))
		return cd_fail(err, EINVAL, "config.json", "process.%s: not an array of strings",
			       key);
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);

		if (!json_object_is_type(e, json_type_string))
			return cd_fail(err, EINVAL, "config.json",
				       "process.%s: not an array of strings", key);
		if (cd_strv_push(ret, json_object_get_string(e)) < 0)
			return cd_fail(err, ENOMEM, "config.json", "out of memory");
	}
	return 0;
}

static int process_parse(json_object *o, struct oci_process **ret, struct cordon_error *err)
{
	struct oci_process *p = calloc(1, sizeof(*p));
	json_object *v, *u;
	int r;

	if (!p)
		return cd_fail(err, ENOMEM, "config.json", "out of memory");
	*ret = p;
	if (!json_object_is_type(o, json_type_object))
		return cd_fail(err, EINVAL, "config.json", "process: not an object");
	r = strv_get(o, "args", &p->args, err);
	if (r < 0)
		return r;
	if (!p->args[0])
		return cd_fail(err, EINVAL, "config.json", "process.args: empty");
	r = strv_get(o, "env", &p->env, err);
	if (r < 0)
		return r;
	p->cwd = strdup(json_object_object_get_ex(o, "cwd", &v) ? json_object_get_string(v) : "/");
	if (!p->cwd || p->cwd[0] != '/')
		return cd_fail(err, EINVAL, "config.json", "process.cwd: not an absolute path");
	p->terminal = json_object_object_get_ex(o, "terminal", &v) && json_object_get_boolean(v);
	if (json_object_object_get_ex(o, "consoleSize", &v)) {
		if (json_object_object_get_ex(v, "height", &u))
			p->rows = (unsigned short)json_object_get_int(u);
		if (json_object_object_get_ex(v, "width", &u))
			p->cols = (unsigned short)json_object_get_int(u);
	}
	if (json_object_object_get_ex(o, "user", &v)) {
		if (json_object_object_get_ex(v, "uid", &u))
			p->uid = (uid_t)json_object_get_int64(u);
		if (json_object_object_get_ex(v, "gid", &u))
			p->gid = (gid_t)json_object_get_int64(u);
	}
	return 0;
}

static json_object *file_parse(const char *path, struct cordon_error *err)
{
	json_object *o = json_object_from_file(path);

	if (!o)
		cd_fail(err, EINVAL, "config.json", "%s: %s", path, json_util_get_last_err());
	return o;
}

static int spec_fill(struct oci_spec *s, json_object *o, struct cordon_error *err)
{
	json_object *v, *p;
	char buf[PATH_MAX];

	if (!json_object_object_get_ex(o, "root", &v) || !json_object_object_get_ex(v, "path", &p))
		return cd_fail(err, EINVAL, "config.json", "root.path: missing");
	snprintf(buf, sizeof(buf), "%s", json_object_get_string(p));
	s->rootfs = buf[0] == '/' ? strdup(buf) : cd_strdup_printf("%s/%s", s->bundle, buf);
	if (json_object_object_get_ex(o, "hostname", &v))
		s->hostname = strdup(json_object_get_string(v));
	if (!json_object_object_get_ex(o, "process", &v))
		return cd_fail(err, EINVAL, "config.json", "process: missing");
	if (process_parse(v, &s->process, err) < 0)
		return -EINVAL;
	s->ann_keys = calloc(1, sizeof(char *));
	s->ann_values = calloc(1, sizeof(char *));
	if (!s->rootfs || !s->ann_keys || !s->ann_values)
		return cd_fail(err, ENOMEM, "config.json", "out of memory");
	if (json_object_object_get_ex(o, "annotations", &v) &&
	    json_object_is_type(v, json_type_object)) {
		json_object_object_foreach(v, key, val)
		{
			if (cd_strv_push(&s->ann_keys, key) < 0 ||
			    cd_strv_push(&s->ann_values, json_object_get_string(val)) < 0)
				return cd_fail(err, ENOMEM, "config.json", "out of memory");
			s->n_ann++;
		}
	}
	return 0;
}

int oci_spec_load(const char *bundle, struct oci_spec **ret, struct cordon_error *err)
{
	struct oci_spec *s = calloc(1, sizeof(*s));
	_cleanup_free_ char *path = NULL;
	json_object *o;
	int r;

	if (!s)
		return cd_fail(err, ENOMEM, "config.json", "out of memory");
	s->bundle = realpath(bundle, NULL);
	if (!s->bundle) {
		oci_spec_free(s);
		return cd_fail_errno(err, errno, "--bundle", "%s", bundle);
	}
	path = cd_strdup_printf("%s/config.json", s->bundle);
	o = path ? file_parse(path, err) : NULL;
	if (!o) {
		oci_spec_free(s);
		return -EINVAL;
	}
	r = spec_fill(s, o, err);
	json_object_put(o);
	if (r < 0) {
		oci_spec_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

const char *oci_spec_bundle(const struct oci_spec *s)
{
	return s->bundle;
}

const char *oci_spec_rootfs(const struct oci_spec *s)
{
	return s->rootfs;
}

const struct oci_process *oci_spec_process(const struct oci_spec *s)
{
	return s->process;
}

size_t oci_spec_annotations(const struct oci_spec *s, const char *const **ret_keys,
			    const char *const **ret_values)
{
	*ret_keys = (const char *const *)s->ann_keys;
	*ret_values = (const char *const *)s->ann_values;
	return s->n_ann;
}

const char *oci_spec_annotation(const struct oci_spec *s, const char *key)
{
	for (size_t i = 0; i < s->n_ann; i++)
		if (!strcmp(s->ann_keys[i], key))
			return s->ann_values[i];
	return NULL;
}

int oci_spec_config(const struct oci_spec *s, struct cordon_config *c, oci_log_fn log,
		    void *userdata, struct cordon_error *err)
{
	int r;

	if (log)
		log(userdata, "config.json: interim reader: only root.path, process and hostname");
	r = cordon_config_set_rootfs(c, s->rootfs, err);
	if (r < 0)
		return r;
	/* the bundle as the one writable directory, until the floor says what a container's is */
	r = cordon_config_set_workdir(c, s->bundle, err);
	if (r < 0)
		return r;
	r = cordon_config_set_default_protect(c, 0, err);
	if (r < 0)
		return r;
	if (s->hostname && s->hostname[0])
		r = cordon_config_set_hostname(c, s->hostname, err);
	return r;
}

int oci_process_load(const char *path, const struct oci_spec *container, struct oci_process **ret,
		     struct cordon_error *err)
{
	json_object *o = file_parse(path, err);
	int r;

	(void)container;
	if (!o)
		return -EINVAL;
	r = process_parse(o, ret, err);
	json_object_put(o);
	if (r < 0) {
		oci_process_free(*ret);
		*ret = NULL;
	}
	return r;
}

char *oci_spec_example(bool rootless)
{
	(void)rootless;
	return strdup("{\n"
		      "\t\"ociVersion\": \"1.2.0\",\n"
		      "\t\"process\": {\n"
		      "\t\t\"terminal\": false,\n"
		      "\t\t\"user\": { \"uid\": 0, \"gid\": 0 },\n"
		      "\t\t\"args\": [ \"sh\" ],\n"
		      "\t\t\"env\": [ \"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:"
		      "/sbin:/bin\", \"TERM=xterm\" ],\n"
		      "\t\t\"cwd\": \"/\",\n"
		      "\t\t\"noNewPrivileges\": true\n"
		      "\t},\n"
		      "\t\"root\": { \"path\": \"rootfs\", \"readonly\": true },\n"
		      "\t\"hostname\": \"cordon\",\n"
		      "\t\"linux\": {\n"
		      "\t\t\"namespaces\": [ { \"type\": \"pid\" }, { \"type\": \"network\" }, "
		      "{ \"type\": \"ipc\" }, { \"type\": \"uts\" }, { \"type\": \"mount\" }, "
		      "{ \"type\": \"user\" }, { \"type\": \"cgroup\" } ]\n"
		      "\t}\n"
		      "}\n");
}
