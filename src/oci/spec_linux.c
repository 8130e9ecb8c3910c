/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * spec_linux.c - config.json's "linux" object read into struct oci_spec: namespaces, id
 * mappings, resources, seccomp (spec_seccomp.c), masked and read-only paths,
 * sysctl, devices, cgroupsPath. Types checked, nothing decided. Runs in cordon-runtime.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "specdata.h"
#include "util.h"

void oci_linux_done(struct oci_spec *s)
{
	for (size_t i = 0; i < s->n_ns; i++) {
		free(s->ns[i].type);
		free(s->ns[i].path);
	}
	free(s->ns);
	free(s->uid_maps);
	free(s->gid_maps);
	for (size_t i = 0; i < s->res.n_devs; i++)
		free(s->res.devs[i].access);
	free(s->res.devs);
	cd_strv_free(s->res.other);
	oci_seccomp_done(&s->seccomp);
	free(s->cgroups_path);
	cd_strv_free(s->masked);
	cd_strv_free(s->readonly);
	cd_strv_free(s->sysctl_keys);
	cd_strv_free(s->sysctl_values);
	for (size_t i = 0; i < s->n_devices; i++) {
		free(s->devices[i].path);
		free(s->devices[i].type);
	}
	free(s->devices);
	cd_strv_free(s->linux_other);
}

/* An array member of obj, each element an object: its length, 0 when absent. */
static int object_array(json_object *obj, const char *parent, const char *key, json_object **ret,
			size_t *ret_n, struct cordon_error *err)
{
	char path[OCI_PATH_MAX];
	int r = oci_json_member(obj, parent, key, json_type_array, false, ret, err);

	*ret_n = 0;
	if (r < 0 || !*ret)
		return r;
	*ret_n = json_object_array_length(*ret);
	for (size_t i = 0; i < *ret_n; i++)
		if (!json_object_is_type(json_object_array_get_idx(*ret, i), json_type_object))
			return cd_fail(err, 0, "config", "%s[%zu]: not an object",
				       oci_json_path(path, parent, key), i);
	return 0;
}

static int parse_namespaces(json_object *lx, struct oci_spec *s, struct cordon_error *err)
{
	static const char *const types[] = {"pid", "network", "mount",	"ipc",
					    "uts", "user",    "cgroup", "time"};
	json_object *a;
	size_t n;
	int r = object_array(lx, "linux", "namespaces", &a, &n, err);

	if (r < 0 || !a)
		return r;
	s->ns = calloc(n + 1, sizeof(*s->ns));
	if (!s->ns)
		return cd_fail(err, ENOMEM, "config", "out of memory");
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(a, i);
		char path[OCI_PATH_MAX];
		bool known = false;

		snprintf(path, sizeof(path), "linux.namespaces[%zu]", i);
		s->n_ns = i + 1;
		r = oci_json_string(e, path, "type", true, &s->ns[i].type, err);
		if (r >= 0)
			r = oci_json_string(e, path, "path", false, &s->ns[i].path, err);
		if (r < 0)
			return r;
		for (size_t t = 0; t < CD_ELEMENTSOF(types); t++)
			known |= strcmp(s->ns[i].type, types[t]) == 0;
		if (!known)
			return cd_fail(err, 0, "config", "%s.type: \"%s\" is not a namespace type",
				       path, s->ns[i].type);
		for (size_t j = 0; j < i; j++)
			if (strcmp(s->ns[j].type, s->ns[i].type) == 0)
				return cd_fail(err, 0, "config", "%s.type: %s given twice", path,
					       s->ns[i].type);
	}
	return 0;
}

static int parse_idmaps(json_object *lx, const char *key, struct oci_idmap **ret, size_t *ret_n,
			struct cordon_error *err)
{
	static const char *const fields[] = {"containerID", "hostID", "size"};
	json_object *a;
	size_t n;
	int r = object_array(lx, "linux", key, &a, &n, err);

	if (r < 0 || !a)
		return r;
	*ret = calloc(n + 1, sizeof(**ret));
	if (!*ret)
		return cd_fail(err, ENOMEM, "config", "out of memory");
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(a, i), *v;
		char path[OCI_PATH_MAX], buf[OCI_PATH_MAX];
		uint64_t u[3];

		snprintf(path, sizeof(path), "linux.%s[%zu]", key, i);
		for (size_t f = 0; f < 3; f++) {
			r = oci_json_member(e, path, fields[f], json_type_int, true, &v, err);
			if (r >= 0)
				r = oci_json_u64(v, oci_json_path(buf, path, fields[f]), UINT32_MAX,
						 &u[f], err);
			if (r < 0)
				return r;
		}
		(*ret)[i] = (struct oci_idmap){(uint32_t)u[0], (uint32_t)u[1], (uint32_t)u[2]};
	}
	*ret_n = n;
	return 0;
}

/* An integer member that may be -1 (unlimited), as memory.limit, cpu.quota, pids.limit. */
static int limit_member(json_object *o, const char *parent, const char *key, bool *ret_has,
			int64_t *ret, struct cordon_error *err)
{
	char path[OCI_PATH_MAX];
	json_object *v;
	int r = oci_json_member(o, parent, key, json_type_int, false, &v, err);

	if (r < 0 || !v)
		return r;
	r = oci_json_i64(v, oci_json_path(path, parent, key), ret, err);
	if (r < 0)
		return r;
	if (*ret < -1)
		return cd_fail(err, 0, "config", "%s: %lld is not a limit (-1: none)", path,
			       (long long)*ret);
	*ret_has = true;
	return 0;
}

static int parse_memory(json_object *res, struct oci_resources *r_, struct cordon_error *err)
{
	static const char *const known[] = {"limit", "swap", NULL};
	const char *p = "linux.resources.memory";
	json_object *m;
	int r = oci_json_member(res, "linux.resources", "memory", json_type_object, false, &m, err);

	if (r < 0 || !m)
		return r;
	r = limit_member(m, p, "limit", &r_->has_memory, &r_->memory, err);
	if (r >= 0)
		r = limit_member(m, p, "swap", &r_->has_swap, &r_->swap, err);
	if (r < 0)
		return r;
	{
		_cleanup_strv_ char **other = NULL;

		r = oci_json_others(m, known, &other, err);
		for (size_t i = 0; r >= 0 && other && other[i]; i++) {
			_cleanup_free_ char *k = cd_strdup_printf("memory.%s", other[i]);

			if (!k || cd_strv_push(&r_->other, k) < 0)
				r = cd_fail(err, ENOMEM, "config", "out of memory");
		}
	}
	return r;
}

static int parse_cpu(json_object *res, struct oci_resources *r_, struct cordon_error *err)
{
	static const char *const known[] = {"shares", "quota", "period", "cpus", NULL};
	const char *p = "linux.resources.cpu";
	char buf[OCI_PATH_MAX];
	json_object *c, *v;
	int r = oci_json_member(res, "linux.resources", "cpu", json_type_object, false, &c, err);

	if (r < 0 || !c)
		return r;
	r = limit_member(c, p, "quota", &r_->has_quota, &r_->quota, err);
	if (r >= 0)
		r = oci_json_member(c, p, "shares", json_type_int, false, &v, err);
	if (r >= 0 && v) {
		r_->has_shares = true;
		r = oci_json_u64(v, oci_json_path(buf, p, "shares"), UINT64_MAX, &r_->shares, err);
	}
	if (r >= 0)
		r = oci_json_member(c, p, "period", json_type_int, false, &v, err);
	if (r >= 0 && v) {
		r_->has_period = true;
		r = oci_json_u64(v, oci_json_path(buf, p, "period"), UINT64_MAX, &r_->period, err);
	}
	if (r >= 0)
		r = oci_json_member(c, p, "cpus", json_type_string, false, &v, err);
	if (r < 0)
		return r;
	r_->has_cpuset = v && *json_object_get_string(v);
	{
		_cleanup_strv_ char **other = NULL;

		r = oci_json_others(c, known, &other, err);
		for (size_t i = 0; r >= 0 && other && other[i]; i++) {
			_cleanup_free_ char *k = cd_strdup_printf("cpu.%s", other[i]);

			if (!k || cd_strv_push(&r_->other, k) < 0)
				r = cd_fail(err, ENOMEM, "config", "out of memory");
		}
	}
	return r;
}

static int parse_devrule(json_object *e, const char *path, struct oci_devrule *d,
			 struct cordon_error *err)
{
	_cleanup_free_ char *type = NULL;
	char buf[OCI_PATH_MAX];
	json_object *v;
	bool has;
	int r = oci_json_bool(e, path, "allow", &has, &d->allow, err);

	if (r >= 0 && !has)
		r = cd_fail(err, 0, "config", "%s.allow: missing", path);
	if (r >= 0)
		r = oci_json_string(e, path, "type", false, &type, err);
	if (r >= 0)
		r = oci_json_string(e, path, "access", false, &d->access, err);
	if (r < 0)
		return r;
	d->type = type ? type[0] : 'a';
	if (type && (strlen(type) != 1 || !strchr("acb", type[0])))
		return cd_fail(err, 0, "config", "%s.type: \"%s\" is not a, c or b", path, type);
	d->major = d->minor = -1;
	for (int f = 0; f < 2; f++) {
		const char *k = f ? "minor" : "major";

		r = oci_json_member(e, path, k, json_type_int, false, &v, err);
		if (r >= 0 && v)
			r = oci_json_i64(v, oci_json_path(buf, path, k), f ? &d->minor : &d->major,
					 err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_resources(json_object *lx, struct oci_spec *s, struct cordon_error *err)
{
	static const char *const known[] = {"devices", "memory", "cpu", "pids", NULL};
	struct oci_resources *res = &s->res;
	json_object *o, *a, *v;
	size_t n;
	int r = oci_json_member(lx, "linux", "resources", json_type_object, false, &o, err);

	if (r < 0 || !o)
		return r;
	r = parse_memory(o, res, err);
	if (r >= 0)
		r = parse_cpu(o, res, err);
	if (r >= 0)
		r = oci_json_member(o, "linux.resources", "pids", json_type_object, false, &v, err);
	if (r >= 0 && v)
		r = limit_member(v, "linux.resources.pids", "limit", &res->has_pids, &res->pids,
				 err);
	if (r >= 0)
		r = oci_json_others(o, known, &res->other, err);
	if (r >= 0)
		r = object_array(o, "linux.resources", "devices", &a, &n, err);
	if (r < 0 || !a)
		return r;
	res->devs = calloc(n + 1, sizeof(*res->devs));
	if (!res->devs)
		return cd_fail(err, ENOMEM, "config", "out of memory");
	for (size_t i = 0; i < n; i++) {
		char path[OCI_PATH_MAX];

		snprintf(path, sizeof(path), "linux.resources.devices[%zu]", i);
		res->n_devs = i + 1;
		r = parse_devrule(json_object_array_get_idx(a, i), path, &res->devs[i], err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* linux.seccomp, whole (spec_seccomp.c) */
static int parse_seccomp(json_object *lx, struct oci_seccomp *sc, struct cordon_error *err)
{
	json_object *o;
	int r = oci_json_member(lx, "linux", "seccomp", json_type_object, false, &o, err);

	if (r < 0 || !o)
		return r;
	return oci_seccomp_parse(o, sc, err);
}

static int parse_sysctl(json_object *lx, struct oci_spec *s, struct cordon_error *err)
{
	json_object *o;
	int r = oci_json_member(lx, "linux", "sysctl", json_type_object, false, &o, err);

	if (r < 0 || !o)
		return r;
	json_object_object_foreach(o, key, val)
	{
		if (!json_object_is_type(val, json_type_string))
			return cd_fail(err, 0, "config", "linux.sysctl.%s: not a string", key);
		if (cd_strv_push(&s->sysctl_keys, key) < 0 ||
		    cd_strv_push(&s->sysctl_values, json_object_get_string(val)) < 0)
			return cd_fail(err, ENOMEM, "config", "out of memory");
	}
	return 0;
}

static int parse_devices(json_object *lx, struct oci_spec *s, struct cordon_error *err)
{
	json_object *a, *v;
	size_t n;
	int r = object_array(lx, "linux", "devices", &a, &n, err);

	if (r < 0 || !a)
		return r;
	s->devices = calloc(n + 1, sizeof(*s->devices));
	if (!s->devices)
		return cd_fail(err, ENOMEM, "config", "out of memory");
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(a, i);
		struct oci_device *d = &s->devices[i];
		char path[OCI_PATH_MAX], buf[OCI_PATH_MAX];

		snprintf(path, sizeof(path), "linux.devices[%zu]", i);
		s->n_devices = i + 1;
		d->major = d->minor = -1;
		r = oci_json_string(e, path, "path", true, &d->path, err);
		if (r >= 0)
			r = oci_json_string(e, path, "type", true, &d->type, err);
		for (int f = 0; f < 2 && r >= 0; f++) {
			const char *k = f ? "minor" : "major";

			r = oci_json_member(e, path, k, json_type_int, false, &v, err);
			if (r >= 0 && v)
				r = oci_json_i64(v, oci_json_path(buf, path, k),
						 f ? &d->minor : &d->major, err);
		}
		if (r < 0)
			return r;
	}
	return 0;
}

int oci_linux_parse(json_object *lx, struct oci_spec *s, struct cordon_error *err)
{
	static const char *const known[] = {
	    "namespaces",    "uidMappings", "gidMappings", "resources",	  "seccomp", "maskedPaths",
	    "readonlyPaths", "sysctl",	    "devices",	   "cgroupsPath", NULL,
	};
	int r = parse_namespaces(lx, s, err);

	if (r >= 0)
		r = parse_idmaps(lx, "uidMappings", &s->uid_maps, &s->n_uid_maps, err);
	if (r >= 0)
		r = parse_idmaps(lx, "gidMappings", &s->gid_maps, &s->n_gid_maps, err);
	if (r >= 0)
		r = parse_resources(lx, s, err);
	if (r >= 0)
		r = parse_seccomp(lx, &s->seccomp, err);
	if (r >= 0)
		r = oci_json_strv(lx, "linux", "maskedPaths", &s->masked, err);
	if (r >= 0)
		r = oci_json_strv(lx, "linux", "readonlyPaths", &s->readonly, err);
	if (r >= 0)
		r = parse_sysctl(lx, s, err);
	if (r >= 0)
		r = parse_devices(lx, s, err);
	if (r >= 0)
		r = oci_json_string(lx, "linux", "cgroupsPath", false, &s->cgroups_path, err);
	if (r >= 0)
		r = oci_json_others(lx, known, &s->linux_other, err);
	return r;
}
