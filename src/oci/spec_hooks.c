/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * spec_hooks.c - config.json's "hooks" (runtime-spec 1.0 to 1.2, "POSIX-platform Hooks") read
 * into lists, one per kind: path absolute, args an array of strings, env KEY=VALUE strings,
 * timeout a positive integer (seconds). Errors name the JSON path
 * ("hooks.poststart[1].timeout: must be a positive integer"). Pure: no I/O (the unit tests and
 * the fuzzer call it). Runs in cordon-runtime, before anything is started (create), and in
 * delete (the poststop hooks create saved, hooks.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "specdata.h"
#include "util.h"

const char *const oci_hook_names[OCI_HOOK_KINDS] = {
    [OCI_HOOK_PRESTART] = "prestart",
    [OCI_HOOK_CREATE_RUNTIME] = "createRuntime",
    [OCI_HOOK_CREATE_CONTAINER] = "createContainer",
    [OCI_HOOK_START_CONTAINER] = "startContainer",
    [OCI_HOOK_POSTSTART] = "poststart",
    [OCI_HOOK_POSTSTOP] = "poststop",
};

static int hook_env(char **env, const char *path, struct cordon_error *err)
{
	for (size_t i = 0; env && env[i]; i++) {
		const char *eq = strchr(env[i], '=');

		if (!eq || eq == env[i])
			return cd_fail(err, 0, "config", "%s.env[%zu]: not KEY=VALUE", path, i);
	}
	return 0;
}

static int hook_timeout(json_object *h, const char *path, unsigned *ret, struct cordon_error *err)
{
	json_object *v;

	*ret = 0;
	if (!json_object_object_get_ex(h, "timeout", &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) <= 0 ||
	    json_object_get_int64(v) > INT32_MAX)
		return cd_fail(err, 0, "config", "%s.timeout: must be a positive integer", path);
	*ret = (unsigned)json_object_get_int64(v);
	return 0;
}

static int hook_parse(json_object *h, const char *path, struct oci_hook *ret,
		      struct cordon_error *err)
{
	int r;

	if (!json_object_is_type(h, json_type_object))
		return cd_fail(err, 0, "config", "%s: not an object", path);
	r = oci_json_string(h, path, "path", true, &ret->path, err);
	if (r < 0)
		return r;
	if (ret->path[0] != '/')
		return cd_fail(err, 0, "config", "%s.path: \"%s\": not an absolute path", path,
			       ret->path);
	r = oci_json_strv(h, path, "args", &ret->args, err);
	if (r >= 0)
		r = oci_json_strv(h, path, "env", &ret->env, err);
	if (r >= 0)
		r = hook_env(ret->env, path, err);
	if (r >= 0)
		r = hook_timeout(h, path, &ret->timeout, err);
	return r;
}

static int list_parse(json_object *a, const char *name, struct oci_hook_list *ret,
		      struct cordon_error *err)
{
	size_t n = json_object_array_length(a);

	ret->v = calloc(n + 1, sizeof(*ret->v));
	if (!ret->v)
		return cd_fail(err, ENOMEM, "config", "out of memory");
	for (size_t j = 0; j < n; j++) {
		char path[OCI_PATH_MAX];
		int r;

		ret->n = j + 1; /* freed whole, even half-read */
		oci_json_item(path, "hooks", name, j);
		r = hook_parse(json_object_array_get_idx(a, j), path, &ret->v[j], err);
		if (r < 0)
			return r;
	}
	return 0;
}

int oci_hooks_parse(json_object *hooks, struct oci_hook_list ret[OCI_HOOK_KINDS],
		    struct cordon_error *err)
{
	for (size_t k = 0; k < OCI_HOOK_KINDS; k++) {
		json_object *a;
		int r = oci_json_member(hooks, "hooks", oci_hook_names[k], json_type_array, false,
					&a, err);

		if (r >= 0 && a)
			r = list_parse(a, oci_hook_names[k], &ret[k], err);
		if (r < 0)
			return r;
	}
	return 0;
}

int oci_hooks_parse_text(const char *text, struct oci_hook_list ret[OCI_HOOK_KINDS],
			 struct cordon_error *err)
{
	json_object *o = json_tokener_parse(text);
	int r;

	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return cd_fail(err, 0, "config", "hooks: not a JSON object");
	}
	r = oci_hooks_parse(o, ret, err);
	json_object_put(o);
	return r;
}

void oci_hooks_free(struct oci_hook_list l[OCI_HOOK_KINDS])
{
	for (size_t k = 0; k < OCI_HOOK_KINDS; k++) {
		for (size_t j = 0; j < l[k].n; j++) {
			free(l[k].v[j].path);
			cd_strv_free(l[k].v[j].args);
			cd_strv_free(l[k].v[j].env);
		}
		free(l[k].v);
		l[k] = (struct oci_hook_list){0};
	}
}
