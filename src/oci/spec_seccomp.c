/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * spec_seccomp.c - config.json's linux.seccomp read whole into struct oci_seccomp: the default
 * action and errno, architectures, flags, and every rule (names, action, errnoRet, args). Pure:
 * names are kept as written, floor_seccomp.c resolves and compiles them. Every error names its
 * JSON path. Runs in cordon-runtime.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "specdata.h"
#include "util.h"

#define P "linux.seccomp"

static const struct {
	const char *name;
	enum oci_scmp_action act;
} actions[] = {
    {"SCMP_ACT_KILL", OCI_SCMP_KILL_THREAD},
    {"SCMP_ACT_KILL_THREAD", OCI_SCMP_KILL_THREAD},
    {"SCMP_ACT_KILL_PROCESS", OCI_SCMP_KILL_PROCESS},
    {"SCMP_ACT_TRAP", OCI_SCMP_TRAP},
    {"SCMP_ACT_ERRNO", OCI_SCMP_ERRNO},
    {"SCMP_ACT_TRACE", OCI_SCMP_TRACE},
    {"SCMP_ACT_ALLOW", OCI_SCMP_ALLOW},
    {"SCMP_ACT_LOG", OCI_SCMP_LOG},
    {"SCMP_ACT_NOTIFY", OCI_SCMP_NOTIFY},
};

static const char *const ops[] = {
    [OCI_SCMP_NE] = "SCMP_CMP_NE",
    [OCI_SCMP_LT] = "SCMP_CMP_LT",
    [OCI_SCMP_LE] = "SCMP_CMP_LE",
    [OCI_SCMP_EQ] = "SCMP_CMP_EQ",
    [OCI_SCMP_GE] = "SCMP_CMP_GE",
    [OCI_SCMP_GT] = "SCMP_CMP_GT",
    [OCI_SCMP_MASKED_EQ] = "SCMP_CMP_MASKED_EQ",
};

static const struct {
	const char *name;
	unsigned flag;
} flags[] = {
    {"SECCOMP_FILTER_FLAG_TSYNC", OCI_SCMP_FLAG_TSYNC},
    {"SECCOMP_FILTER_FLAG_LOG", OCI_SCMP_FLAG_LOG},
    {"SECCOMP_FILTER_FLAG_SPEC_ALLOW", OCI_SCMP_FLAG_SPEC_ALLOW},
    {"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", OCI_SCMP_FLAG_WAIT_KILLABLE_RECV},
};

void oci_seccomp_done(struct oci_seccomp *sc)
{
	free(sc->default_action);
	free(sc->notify_at);
	cd_strv_free(sc->archs);
	for (size_t i = 0; i < sc->n_rules; i++) {
		cd_strv_free(sc->rules[i].names);
		free(sc->rules[i].args);
	}
	free(sc->rules);
	*sc = (struct oci_seccomp){0};
}

/* A member that is an action's name: *ret, or an error naming parent.key. */
static int action_member(json_object *o, const char *parent, const char *key,
			 enum oci_scmp_action *ret, char **ret_name, struct cordon_error *err)
{
	_cleanup_free_ char *name = NULL;
	char path[OCI_PATH_MAX];
	int r = oci_json_string(o, parent, key, true, &name, err);

	if (r < 0)
		return r;
	for (size_t i = 0; i < CD_ELEMENTSOF(actions); i++)
		if (strcmp(name, actions[i].name) == 0) {
			*ret = actions[i].act;
			if (ret_name)
				*ret_name = CD_TAKE_PTR(name);
			return 0;
		}
	return cd_fail(err, 0, "config", "%s: \"%s\" is not a seccomp action",
		       oci_json_path(path, parent, key), name);
}

/* An errno member (errnoRet, defaultErrnoRet): *ret, EPERM when absent. */
static int errno_member(json_object *o, const char *parent, const char *key, uint32_t *ret,
			struct cordon_error *err)
{
	char path[OCI_PATH_MAX];
	json_object *v;
	uint64_t u;
	int r = oci_json_member(o, parent, key, json_type_int, false, &v, err);

	*ret = EPERM;
	if (r < 0 || !v)
		return r;
	/* SECCOMP_RET_DATA is 16 bits; the kernel caps an errno at 4095 */
	r = oci_json_u64(v, oci_json_path(path, parent, key), 4095, &u, err);
	if (r >= 0)
		*ret = (uint32_t)u;
	return r;
}

static int parse_arg(json_object *a, const char *path, struct oci_scmp_arg *arg,
		     struct cordon_error *err)
{
	static const char *const fields[] = {"index", "value", "valueTwo"};
	_cleanup_free_ char *op = NULL;
	char buf[OCI_PATH_MAX];
	uint64_t u[3] = {0, 0, 0};
	json_object *v;
	int r = 0;

	if (!json_object_is_type(a, json_type_object))
		return cd_fail(err, 0, "config", "%s: not an object", path);
	for (size_t f = 0; r >= 0 && f < CD_ELEMENTSOF(fields); f++) {
		r = oci_json_member(a, path, fields[f], json_type_int, f == 0, &v, err);
		if (r >= 0 && v)
			r = oci_json_u64(v, oci_json_path(buf, path, fields[f]),
					 f == 0 ? 5 : UINT64_MAX, &u[f], err);
	}
	if (r >= 0)
		r = oci_json_string(a, path, "op", true, &op, err);
	if (r < 0)
		return r;
	*arg = (struct oci_scmp_arg){.index = (unsigned)u[0], .value = u[1], .value_two = u[2]};
	for (size_t i = 0; i < CD_ELEMENTSOF(ops); i++)
		if (strcmp(op, ops[i]) == 0) {
			arg->op = (enum oci_scmp_op)i;
			return 0;
		}
	return cd_fail(err, 0, "config", "%s.op: \"%s\" is not a seccomp comparison", path, op);
}

static int parse_rule(json_object *e, const char *path, struct oci_scmp_rule *rule,
		      struct cordon_error *err)
{
	char apath[OCI_PATH_MAX];
	json_object *a;
	int r;

	if (!json_object_is_type(e, json_type_object))
		return cd_fail(err, 0, "config", "%s: not an object", path);
	r = oci_json_strv(e, path, "names", &rule->names, err);
	if (r >= 0 && !rule->names) {
		rule->names = calloc(1, sizeof(char *));
		if (!rule->names)
			r = cd_fail(err, ENOMEM, "config", "out of memory");
	}
	if (r >= 0)
		r = action_member(e, path, "action", &rule->action, NULL, err);
	if (r >= 0)
		r = errno_member(e, path, "errnoRet", &rule->errno_ret, err);
	if (r >= 0)
		r = oci_json_member(e, path, "args", json_type_array, false, &a, err);
	if (r < 0 || !a)
		return r;
	rule->args = calloc(json_object_array_length(a) + 1, sizeof(*rule->args));
	if (!rule->args)
		return cd_fail(err, ENOMEM, "config", "out of memory");
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		r = parse_arg(json_object_array_get_idx(a, i),
			      oci_json_item(apath, path, "args", i), &rule->args[i], err);
		if (r < 0)
			return r;
		rule->n_args = i + 1;
	}
	return 0;
}

static int parse_flags(json_object *o, struct oci_seccomp *sc, struct cordon_error *err)
{
	_cleanup_strv_ char **v = NULL;
	int r = oci_json_strv(o, P, "flags", &v, err);

	for (size_t i = 0; r >= 0 && v && v[i]; i++) {
		bool known = false;

		for (size_t f = 0; f < CD_ELEMENTSOF(flags) && !known; f++)
			if (strcmp(v[i], flags[f].name) == 0) {
				sc->flags |= flags[f].flag;
				known = true;
			}
		if (!known)
			r = cd_fail(err, 0, "config", P ".flags[%zu]: \"%s\" is not a seccomp flag",
				    i, v[i]);
	}
	return r;
}

static int parse_rules(json_object *o, struct oci_seccomp *sc, struct cordon_error *err)
{
	json_object *a;
	int r = oci_json_member(o, P, "syscalls", json_type_array, false, &a, err);

	if (r < 0 || !a)
		return r;
	sc->rules = calloc(json_object_array_length(a) + 1, sizeof(*sc->rules));
	if (!sc->rules)
		return cd_fail(err, ENOMEM, "config", "out of memory");
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		char path[OCI_PATH_MAX];

		snprintf(path, sizeof(path), P ".syscalls[%zu]", i);
		sc->n_rules = i + 1;
		r = parse_rule(json_object_array_get_idx(a, i), path, &sc->rules[i], err);
		if (r < 0)
			return r;
		if (sc->rules[i].action == OCI_SCMP_NOTIFY && !sc->notify_at) {
			sc->notify_at = cd_strdup_printf("%s.action", path);
			if (!sc->notify_at)
				return cd_fail(err, ENOMEM, "config", "out of memory");
		}
	}
	return 0;
}

int oci_seccomp_parse(json_object *o, struct oci_seccomp *sc, struct cordon_error *err)
{
	_cleanup_free_ char *listener = NULL;
	int r;

	sc->present = true;
	r = action_member(o, P, "defaultAction", &sc->default_act, &sc->default_action, err);
	if (r >= 0)
		r = errno_member(o, P, "defaultErrnoRet", &sc->default_errno, err);
	if (r >= 0)
		r = oci_json_string(o, P, "listenerPath", false, &listener, err);
	if (r >= 0)
		r = oci_json_strv(o, P, "architectures", &sc->archs, err);
	if (r >= 0)
		r = parse_flags(o, sc, err);
	if (r >= 0)
		r = parse_rules(o, sc, err);
	if (r < 0)
		return r;
	/* the first reason wins: the default, then a listener, then a rule */
	if (sc->default_act == OCI_SCMP_NOTIFY || (listener && *listener)) {
		free(sc->notify_at);
		sc->notify_at = strdup(sc->default_act == OCI_SCMP_NOTIFY ? P ".defaultAction"
									  : P ".listenerPath");
		if (!sc->notify_at)
			return cd_fail(err, ENOMEM, "config", "out of memory");
	}
	return 0;
}
