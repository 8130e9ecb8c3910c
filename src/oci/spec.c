/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * spec.c - a bundle's config.json read with json-c into struct oci_spec: the version, root,
 * mounts, hostname, hooks and annotations here, process in spec_process.c, linux in
 * spec_linux.c. Every field type-checked, errors naming its JSON path; nothing decided (floor.c
 * decides). Runs in cordon-runtime, before anything is started.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "specdata.h"
#include "util.h"

#define OCI_CONFIG_MAX (16u << 20) /* a config.json larger than this is not an engine's */

const char *oci_json_path(char buf[OCI_PATH_MAX], const char *parent, const char *key)
{
	/* a longer path is cut: it only names a field in a message */
	if (snprintf(buf, OCI_PATH_MAX, "%s%s%s", parent, *parent ? "." : "", key) < 0)
		buf[0] = '\0';
	return buf;
}

const char *oci_json_item(char buf[OCI_PATH_MAX], const char *parent, const char *key, size_t i)
{
	/* a longer path is cut: it only names a field in a message */
	if (snprintf(buf, OCI_PATH_MAX, "%s%s%s[%zu]", parent, *parent ? "." : "", key, i) < 0)
		buf[0] = '\0';
	return buf;
}

static const char *type_words(json_type t)
{
	switch (t) {
	case json_type_string:
		return "a string";
	case json_type_array:
		return "an array";
	case json_type_object:
		return "an object";
	case json_type_boolean:
		return "a boolean";
	case json_type_int:
		return "an integer";
	default:
		return "a number";
	}
}

int oci_json_member(json_object *obj, const char *parent, const char *key, json_type type,
		    bool required, json_object **ret, struct cordon_error *err)
{
	char path[OCI_PATH_MAX];
	json_object *v = NULL;

	/* an engine writes "hooks": null for "none": null is absent */
	if (!json_object_object_get_ex(obj, key, &v) || !v) {
		if (required)
			return cd_fail(err, 0, "config", "%s: missing",
				       oci_json_path(path, parent, key));
		*ret = NULL;
		return 0;
	}
	if (!json_object_is_type(v, type))
		return cd_fail(err, 0, "config", "%s: not %s", oci_json_path(path, parent, key),
			       type_words(type));
	*ret = v;
	return 0;
}

int oci_json_string(json_object *obj, const char *parent, const char *key, bool required,
		    char **ret, struct cordon_error *err)
{
	json_object *v;
	char *s;
	int r = oci_json_member(obj, parent, key, json_type_string, required, &v, err);

	if (r < 0)
		return r;
	if (!v) {
		*ret = NULL;
		return 0;
	}
	s = strdup(json_object_get_string(v));
	if (!s)
		return cd_fail(err, ENOMEM, "config", "out of memory");
	*ret = s;
	return 0;
}

/* An array of strings; absent: *ret NULL. */
int oci_json_strv(json_object *obj, const char *parent, const char *key, char ***ret,
		  struct cordon_error *err)
{
	_cleanup_strv_ char **v = NULL;
	char path[OCI_PATH_MAX];
	json_object *a;
	size_t n;
	int r = oci_json_member(obj, parent, key, json_type_array, false, &a, err);

	if (r < 0)
		return r;
	*ret = NULL;
	if (!a)
		return 0;
	oci_json_path(path, parent, key);
	v = calloc(1, sizeof(*v));
	if (!v)
		return cd_fail(err, ENOMEM, "config", "out of memory");
	n = json_object_array_length(a);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(a, i);

		if (!json_object_is_type(e, json_type_string))
			return cd_fail(err, 0, "config", "%s[%zu]: not a string", path, i);
		if (cd_strv_push(&v, json_object_get_string(e)) < 0)
			return cd_fail(err, ENOMEM, "config", "out of memory");
	}
	*ret = CD_TAKE_PTR(v);
	return 0;
}

int oci_json_u64(json_object *v, const char *path, uint64_t max, uint64_t *ret,
		 struct cordon_error *err)
{
	uint64_t u;

	if (!json_object_is_type(v, json_type_int))
		return cd_fail(err, 0, "config", "%s: not an integer", path);
	if (json_object_get_int64(v) < 0)
		return cd_fail(err, 0, "config", "%s: negative", path);
	u = json_object_get_uint64(v);
	if (u > max)
		return cd_fail(err, 0, "config", "%s: %llu is out of range (at most %llu)", path,
			       (unsigned long long)u, (unsigned long long)max);
	*ret = u;
	return 0;
}

int oci_json_i64(json_object *v, const char *path, int64_t *ret, struct cordon_error *err)
{
	if (!json_object_is_type(v, json_type_int))
		return cd_fail(err, 0, "config", "%s: not an integer", path);
	if (json_object_get_int64(v) == INT64_MAX && json_object_get_uint64(v) > INT64_MAX)
		return cd_fail(err, 0, "config", "%s: out of range", path);
	*ret = json_object_get_int64(v);
	return 0;
}

int oci_json_bool(json_object *obj, const char *parent, const char *key, bool *ret_has, bool *ret,
		  struct cordon_error *err)
{
	json_object *v;
	int r = oci_json_member(obj, parent, key, json_type_boolean, false, &v, err);

	if (r < 0)
		return r;
	*ret_has = v != NULL;
	*ret = v && json_object_get_boolean(v);
	return 0;
}

int oci_json_others(json_object *obj, const char *const *known, char ***other,
		    struct cordon_error *err)
{
	json_object_object_foreach(obj, key, val)
	{
		bool found = false;

		if (!val)
			continue;
		for (size_t i = 0; known[i] && !found; i++)
			found = strcmp(key, known[i]) == 0;
		if (!found && cd_strv_push(other, key) < 0)
			return cd_fail(err, ENOMEM, "config", "out of memory");
	}
	return 0;
}

/* runtime-spec 1.0.x, 1.1.x, 1.2.x, with any pre-release or build suffix ("1.0.2-dev"). */
static bool version_ok(const char *v)
{
	char *end;
	unsigned long minor;

	if (strncmp(v, "1.", 2) != 0 || v[2] < '0' || v[2] > '9')
		return false;
	minor = strtoul(v + 2, &end, 10);
	if (minor > 2 || *end != '.' || end[1] < '0' || end[1] > '9')
		return false;
	strtoul(end + 1, &end, 10);
	return *end == '\0' || *end == '-' || *end == '+';
}

static int parse_root(json_object *top, struct oci_spec *s, struct cordon_error *err)
{
	_cleanup_free_ char *path = NULL;
	json_object *root;
	bool has;
	int r;

	r = oci_json_member(top, "", "root", json_type_object, true, &root, err);
	if (r < 0)
		return r;
	r = oci_json_string(root, "root", "path", true, &path, err);
	if (r < 0)
		return r;
	r = oci_json_bool(root, "root", "readonly", &has, &s->root_readonly, err);
	if (r < 0)
		return r;
	if (!*path)
		return cd_fail(err, 0, "config", "root.path: empty");
	s->rootfs = path[0] == '/' ? CD_TAKE_PTR(path) : cd_strdup_printf("%s/%s", s->bundle, path);
	if (!s->rootfs)
		return cd_fail(err, ENOMEM, "config", "out of memory");
	return 0;
}

static int parse_mount(json_object *m, const char *path, struct oci_mount *ret,
		       struct cordon_error *err)
{
	json_object *v;
	int r;

	if (!json_object_is_type(m, json_type_object))
		return cd_fail(err, 0, "config", "%s: not an object", path);
	r = oci_json_string(m, path, "destination", true, &ret->dest, err);
	if (r >= 0)
		r = oci_json_string(m, path, "type", false, &ret->type, err);
	if (r >= 0)
		r = oci_json_string(m, path, "source", false, &ret->source, err);
	if (r >= 0)
		r = oci_json_strv(m, path, "options", &ret->options, err);
	if (r < 0)
		return r;
	if (!ret->options && !(ret->options = calloc(1, sizeof(char *))))
		return cd_fail(err, ENOMEM, "config", "out of memory");
	if (ret->dest[0] != '/')
		return cd_fail(err, 0, "config", "%s.destination: \"%s\" is not absolute", path,
			       ret->dest);
	for (const char *k = "uidMappings"; k; k = k[0] == 'u' ? "gidMappings" : NULL) {
		r = oci_json_member(m, path, k, json_type_array, false, &v, err);
		if (r < 0)
			return r;
		ret->has_idmap |= v && json_object_array_length(v) > 0;
	}
	return 0;
}

static int parse_mounts(json_object *top, struct oci_spec *s, struct cordon_error *err)
{
	json_object *a;
	size_t n;
	int r = oci_json_member(top, "", "mounts", json_type_array, false, &a, err);

	if (r < 0 || !a)
		return r;
	n = json_object_array_length(a);
	s->mounts = calloc(n ? n : 1, sizeof(*s->mounts));
	if (!s->mounts)
		return cd_fail(err, ENOMEM, "config", "out of memory");
	for (size_t i = 0; i < n; i++) {
		char path[OCI_PATH_MAX];

		snprintf(path, sizeof(path), "mounts[%zu]", i);
		s->n_mounts = i + 1; /* freed whole, even half-read */
		r = parse_mount(json_object_array_get_idx(a, i), path, &s->mounts[i], err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_hooks(json_object *top, struct oci_spec *s, struct cordon_error *err)
{
	json_object *hooks;
	int r = oci_json_member(top, "", "hooks", json_type_object, false, &hooks, err);

	if (r < 0 || !hooks)
		return r;
	return oci_hooks_parse(hooks, s->hooks, err);
}

static int parse_annotations(json_object *top, struct oci_spec *s, struct cordon_error *err)
{
	json_object *a;
	size_t n, i = 0;
	int r = oci_json_member(top, "", "annotations", json_type_object, false, &a, err);

	if (r < 0 || !a)
		return r;
	n = (size_t)json_object_object_length(a);
	s->ann_keys = calloc(n + 1, sizeof(char *));
	s->ann_values = calloc(n + 1, sizeof(char *));
	if (!s->ann_keys || !s->ann_values)
		return cd_fail(err, ENOMEM, "config", "out of memory");
	json_object_object_foreach(a, key, val)
	{
		if (!json_object_is_type(val, json_type_string))
			return cd_fail(err, 0, "config", "annotations.%s: not a string", key);
		s->ann_keys[i] = key;
		s->ann_values[i++] = json_object_get_string(val);
	}
	s->n_ann = i;
	return 0;
}

static int parse_top(json_object *top, struct oci_spec *s, struct cordon_error *err)
{
	json_object *v;
	int r;

	if (!json_object_is_type(top, json_type_object))
		return cd_fail(err, 0, "config", "config.json: not a JSON object");
	r = oci_json_string(top, "", "ociVersion", true, &s->version, err);
	if (r < 0)
		return r;
	if (!version_ok(s->version))
		return cd_fail(err, 0, "config",
			       "ociVersion: \"%s\": not supported (runtime-spec 1.0 to 1.2)",
			       s->version);
	r = parse_root(top, s, err);
	if (r >= 0)
		r = oci_json_member(top, "", "process", json_type_object, true, &v, err);
	if (r >= 0)
		r = oci_proc_parse(v, "process", &s->process, err);
	if (r >= 0)
		r = oci_json_string(top, "", "hostname", false, &s->hostname, err);
	if (r >= 0)
		r = oci_json_string(top, "", "domainname", false, &s->domainname, err);
	if (r >= 0)
		r = parse_mounts(top, s, err);
	if (r >= 0)
		r = parse_hooks(top, s, err);
	if (r >= 0)
		r = parse_annotations(top, s, err);
	if (r >= 0)
		r = oci_json_member(top, "", "linux", json_type_object, false, &v, err);
	if (r >= 0 && v)
		r = oci_linux_parse(v, s, err);
	return r;
}

/* The whole of fd (name: for messages), at most OCI_CONFIG_MAX bytes, NUL-terminated. */
static int read_all(int fd, const char *name, char **ret, size_t *ret_len, struct cordon_error *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;

	for (;;) {
		ssize_t n;

		if (len + 1 >= cap) {
			char *nb;

			if (cap >= OCI_CONFIG_MAX)
				return cd_fail(err, EFBIG, "config", "%s: larger than %u MiB", name,
					       OCI_CONFIG_MAX >> 20);
			cap = cap ? cap * 2 : 65536;
			nb = realloc(buf, cap);
			if (!nb)
				return cd_fail(err, ENOMEM, "config", "out of memory");
			buf = nb;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return cd_fail_errno(err, errno, "config", "read %s", name);
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*ret_len = len;
	*ret = CD_TAKE_PTR(buf);
	return 0;
}

static int read_config(int dir, char **ret, size_t *ret_len, struct cordon_error *err)
{
	_cleanup_close_ int fd = openat(dir, "config.json", O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return cd_fail_errno(err, errno, "config", "config.json");
	return read_all(fd, "config.json", ret, ret_len, err);
}

/* The text as one JSON value (and nothing after it), json-c's reason otherwise. */
static int parse_text(const char *text, size_t len, const char *name, json_object **ret,
		      struct cordon_error *err)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *o;
	enum json_tokener_error e;
	size_t end;

	if (!tok)
		return cd_fail(err, ENOMEM, "config", "out of memory");
	if (len > INT_MAX)
		len = INT_MAX;
	o = json_tokener_parse_ex(tok, text, (int)len);
	e = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!o || e != json_tokener_success) {
		json_object_put(o);
		return cd_fail(err, 0, "config", "%s: not JSON: %s at byte %zu", name,
			       e == json_tokener_continue ? "unexpected end"
							  : json_tokener_error_desc(e),
			       end);
	}
	while (end < len && text[end] && strchr(" \t\r\n", text[end]))
		end++;
	if (end < len) {
		json_object_put(o);
		return cd_fail(err, 0, "config", "%s: not JSON: text after the value at byte %zu",
			       name, end);
	}
	*ret = o;
	return 0;
}

static int bundle_abs(const char *bundle, char **ret, struct cordon_error *err)
{
	char *abs = realpath(bundle, NULL);

	if (!abs)
		return cd_fail_errno(err, errno, "config", "bundle %s", bundle);
	*ret = abs;
	return 0;
}

int oci_spec_parse(const char *bundle, const char *text, size_t len, struct oci_spec **ret,
		   struct cordon_error *err)
{
	struct oci_spec *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return cd_fail(err, ENOMEM, "config", "out of memory");
	s->bundle = strdup(bundle);
	r = s->bundle ? 0 : cd_fail(err, ENOMEM, "config", "out of memory");
	if (r >= 0)
		r = parse_text(text, len, "config.json", &s->json, err);
	if (r >= 0)
		r = parse_top(s->json, s, err);
	if (r < 0) {
		oci_spec_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

int oci_spec_load(const char *bundle, struct oci_spec **ret, struct cordon_error *err)
{
	_cleanup_free_ char *abs = NULL, *text = NULL;
	_cleanup_close_ int dir = -1;
	size_t len = 0;
	int r = bundle_abs(bundle, &abs, err);

	if (r < 0)
		return r;
	dir = open(abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return cd_fail_errno(err, errno, "config", "bundle %s", abs);
	r = read_config(dir, &text, &len, err);
	return r < 0 ? r : oci_spec_parse(abs, text, len, ret, err);
}

void oci_spec_free(struct oci_spec *s)
{
	if (!s)
		return;
	oci_linux_done(s);
	for (size_t i = 0; i < s->n_mounts; i++) {
		free(s->mounts[i].dest);
		free(s->mounts[i].type);
		free(s->mounts[i].source);
		cd_strv_free(s->mounts[i].options);
	}
	free(s->mounts);
	oci_proc_free(s->process);
	free(s->ann_keys);
	free(s->ann_values);
	json_object_put(s->json);
	free(s->version);
	free(s->bundle);
	free(s->rootfs);
	free(s->hostname);
	free(s->domainname);
	oci_hooks_free(s->hooks);
	free(s);
}

const char *oci_spec_bundle(const struct oci_spec *s)
{
	return s->bundle;
}

const char *oci_spec_rootfs(const struct oci_spec *s)
{
	return s->rootfs;
}

const struct oci_hook_list *oci_spec_hooks(const struct oci_spec *s, enum oci_hook_kind k)
{
	return &s->hooks[k];
}

char *oci_spec_poststop_json(const struct oci_spec *s)
{
	json_object *hooks = NULL, *a = NULL;
	const char *text;

	if (json_object_object_get_ex(s->json, "hooks", &hooks) && hooks)
		json_object_object_get_ex(hooks, "poststop", &a);
	text = a ? json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN) : "[]";
	return cd_strdup_printf("{\"poststop\":%s}", text ? text : "[]");
}

const struct oci_process *oci_spec_process(const struct oci_spec *s)
{
	return &s->process->pub;
}

size_t oci_spec_annotations(const struct oci_spec *s, const char *const **ret_keys,
			    const char *const **ret_values)
{
	*ret_keys = s->ann_keys;
	*ret_values = s->ann_values;
	return s->n_ann;
}

const char *oci_spec_annotation(const struct oci_spec *s, const char *key)
{
	for (size_t i = 0; i < s->n_ann; i++)
		if (strcmp(s->ann_keys[i], key) == 0)
			return s->ann_values[i];
	return NULL;
}

int oci_process_load(const char *path, const struct oci_spec *container, struct oci_process **ret,
		     struct cordon_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	_cleanup_free_ char *text = NULL;
	json_object *o = NULL;
	struct oci_proc *p = NULL;
	struct stat st;
	size_t len = 0;
	int r;

	if (fd < 0 || fstat(fd, &st) < 0)
		return cd_fail_errno(err, errno, "config", "%s", path);
	if (!S_ISREG(st.st_mode))
		return cd_fail(err, EINVAL, "config", "%s: not a regular file", path);
	r = read_all(fd, path, &text, &len, err);
	if (r >= 0)
		r = parse_text(text, len, "process", &o, err);
	if (r >= 0 && !json_object_is_type(o, json_type_object))
		r = cd_fail(err, 0, "config", "process: not a JSON object");
	if (r >= 0)
		r = oci_proc_parse(o, "process", &p, err);
	if (r >= 0)
		r = oci_floor_process(p, container ? container->process : NULL, NULL, NULL, err);
	json_object_put(o);
	if (r < 0) {
		oci_proc_free(p);
		return r;
	}
	*ret = &p->pub;
	return 0;
}

void oci_process_free(struct oci_process *p)
{
	oci_proc_free((struct oci_proc *)p);
}
