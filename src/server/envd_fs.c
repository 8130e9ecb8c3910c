/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* envd_fs.c - envd's filesystem service (filesystem.Filesystem) over Connect with JSON: Stat,
 * ListDir, MakeDir, Move, Remove, each done inside the sandbox by the library (no host path is
 * followed); the watchers answer unimplemented. Runs in the server (connection threads). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "connect.h"
#include "server.h"
#include "util.h"

#define LIST_MAX 100000

/* Go's os.FileMode.String(), which envd sends as "permissions". */
static void permissions(uint32_t mode, enum cordon_file_type type, char out[11])
{
	static const char rwx[] = "rwxrwxrwx";

	out[0] = type == CORDON_FILE_DIRECTORY ? 'd' : type == CORDON_FILE_SYMLINK ? 'L' : '-';
	for (int i = 0; i < 9; i++)
		out[1 + i] = mode & (1u << (8 - i)) ? rwx[i] : '-';
	out[10] = '\0';
}

static json_object *entry_json(const struct cordon_file_info *f)
{
	static const char *const types[] = {"FILE_TYPE_UNSPECIFIED", "FILE_TYPE_FILE",
					    "FILE_TYPE_DIRECTORY", "FILE_TYPE_SYMLINK"};
	json_object *j = json_object_new_object();
	char perm[11], t[48], n[24];
	time_t secs = (time_t)(f->mtime_ns / 1000000000);
	struct tm tm;

	if (!j)
		return NULL;
	json_object_object_add(j, "name", json_object_new_string(f->name ? f->name : ""));
	json_object_object_add(j, "type", json_object_new_string(types[f->type]));
	json_object_object_add(j, "path", json_object_new_string(f->path ? f->path : ""));
	snprintf(n, sizeof(n), "%llu", (unsigned long long)f->size); /* int64: a string in JSON */
	json_object_object_add(j, "size", json_object_new_string(n));
	json_object_object_add(j, "mode", json_object_new_int64(f->mode & 07777));
	permissions(f->mode, f->type, perm);
	json_object_object_add(j, "permissions", json_object_new_string(perm));
	snprintf(n, sizeof(n), "%u", f->uid);
	json_object_object_add(j, "owner", json_object_new_string(f->uid == 0 ? "root" : n));
	snprintf(n, sizeof(n), "%u", f->gid);
	json_object_object_add(j, "group", json_object_new_string(f->gid == 0 ? "root" : n));
	gmtime_r(&secs, &tm);
	snprintf(t, sizeof(t), "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (long long)(f->mtime_ns % 1000000000));
	json_object_object_add(j, "modifiedTime", json_object_new_string(t));
	if (f->link_target)
		json_object_object_add(j, "symlinkTarget", json_object_new_string(f->link_target));
	return j;
}

static enum MHD_Result fail(struct cd_req *r, const struct cordon_error *err)
{
	return cd_rpc_error(r, cd_connect_code_of_errno(err->code), "%s", err->msg);
}

/* The request's string field key (non-empty); NULL with an error answered. req is freed then. */
static const char *path_field(struct cd_req *r, json_object *req, const char *key)
{
	json_object *v;
	const char *why = NULL;

	if (cd_rpc_get(req, key, json_type_string, &v, &why) < 0 || !v ||
	    !json_object_get_string_len(v)) {
		cd_rpc_error(r, "invalid_argument", "%s", why ? why : "a path is missing");
		json_object_put(req);
		return NULL;
	}
	return json_object_get_string(v);
}

/* {"entry": stat(path)} */
static enum MHD_Result reply_entry(struct cd_req *r, const char *path)
{
	struct cordon_error err = {0};
	struct cordon_file_info f = {0};
	json_object *j;

	if (cordon_session_stat(r->sb->session, path, &f, &err) < 0)
		return fail(r, &err);
	j = json_object_new_object();
	if (j)
		json_object_object_add(j, "entry", entry_json(&f));
	cordon_file_info_clear(&f);
	return cd_rpc_reply(r, j);
}

static enum MHD_Result stat_(struct cd_req *r)
{
	json_object *req = cd_rpc_request(r, false);
	const char *path = req ? path_field(r, req, "path") : NULL;
	enum MHD_Result ret;

	if (!path)
		return MHD_YES;
	ret = reply_entry(r, path);
	json_object_put(req);
	return ret;
}

static enum MHD_Result list_dir(struct cd_req *r)
{
	struct cordon_error err = {0};
	json_object *req = cd_rpc_request(r, false), *depth_j, *j, *a;
	const char *path = req ? path_field(r, req, "path") : NULL, *why = NULL;
	struct cordon_file_info *v = NULL;
	size_t n = 0;
	int64_t depth = 1;
	int k;

	if (!path)
		return MHD_YES;
	if (cd_rpc_get(req, "depth", json_type_int, &depth_j, &why) < 0) {
		json_object_put(req);
		return cd_rpc_error(r, "invalid_argument", "%s", why);
	}
	if (depth_j)
		depth = json_object_get_int64(depth_j);
	if (depth == 0)
		depth = 1;
	if (depth < 0 || depth > 64) {
		json_object_put(req);
		return cd_rpc_error(r, "invalid_argument", "\"depth\" must be 1-64");
	}
	k = cordon_session_list(r->sb->session, path, (unsigned)depth, LIST_MAX, &v, &n, &err);
	json_object_put(req);
	if (k < 0)
		return fail(r, &err);
	j = json_object_new_object();
	a = json_object_new_array();
	for (size_t i = 0; a && i < n; i++)
		json_object_array_add(a, entry_json(&v[i]));
	cordon_file_info_free(v, n);
	if (j)
		json_object_object_add(j, "entries", a);
	else
		json_object_put(a);
	return cd_rpc_reply(r, j);
}

static enum MHD_Result make_dir(struct cd_req *r)
{
	struct cordon_error err = {0};
	json_object *req = cd_rpc_request(r, false);
	const char *path = req ? path_field(r, req, "path") : NULL;
	enum MHD_Result ret;
	int made = 0;

	if (!path)
		return MHD_YES;
	if (cordon_session_mkdir(r->sb->session, path, &made, &err) < 0)
		ret = fail(r, &err);
	else if (!made) /* the SDK's makeDir() says false on already_exists */
		ret = cd_rpc_error(r, "already_exists", "%s already exists", path);
	else
		ret = reply_entry(r, path);
	json_object_put(req);
	return ret;
}

static enum MHD_Result move(struct cd_req *r)
{
	struct cordon_error err = {0};
	json_object *req = cd_rpc_request(r, false);
	const char *from = req ? path_field(r, req, "source") : NULL, *to;
	enum MHD_Result ret;

	if (!from)
		return MHD_YES;
	to = path_field(r, req, "destination");
	if (!to)
		return MHD_YES;
	if (cordon_session_rename(r->sb->session, from, to, &err) < 0)
		ret = fail(r, &err);
	else
		ret = reply_entry(r, to);
	json_object_put(req);
	return ret;
}

static enum MHD_Result remove_(struct cd_req *r)
{
	struct cordon_error err = {0};
	json_object *req = cd_rpc_request(r, false);
	const char *path = req ? path_field(r, req, "path") : NULL;
	int k;

	if (!path)
		return MHD_YES;
	k = cordon_session_remove(r->sb->session, path, &err);
	json_object_put(req);
	if (k < 0)
		return fail(r, &err);
	return cd_rpc_reply(r, json_object_new_object());
}

static enum MHD_Result unimplemented(struct cd_req *r)
{
	if (strcmp(r->url, "/filesystem.Filesystem/WatchDir") == 0)
		return cd_rpc_stream_error(r, "unimplemented",
					   "watching directories is not supported by cordon serve");
	return cd_rpc_error(r, "unimplemented", "%s is not supported by cordon serve", r->url);
}

cd_handler_fn cd_fs_route(const char *rpc)
{
	static const struct {
		const char *name;
		cd_handler_fn fn;
	} rpcs[] = {
	    {"Stat", stat_},
	    {"ListDir", list_dir},
	    {"MakeDir", make_dir},
	    {"Move", move},
	    {"Remove", remove_},
	    {"WatchDir", unimplemented},
	    {"CreateWatcher", unimplemented},
	    {"GetWatcherEvents", unimplemented},
	    {"RemoveWatcher", unimplemented},
	};

	for (size_t i = 0; i < CD_ELEMENTSOF(rpcs); i++)
		if (strcmp(rpc, rpcs[i].name) == 0)
			return rpcs[i].fn;
	return NULL;
}
