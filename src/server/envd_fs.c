/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* envd_fs.c - envd's filesystem service (filesystem.Filesystem) over Connect with JSON: Stat,
 * ListDir, MakeDir, Move, Remove, each done inside the sandbox by the library (no host path is
 * followed); the watchers are envd_watch.c's. Runs in the server (connection threads). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "connect.h"
#include "envd_fs.h"
#include "opts.h"
#include "registry.h"
#include "req.h"
#include "rpc.h"
#include "util.h"

#define LIST_MAX 20000
/* A ListDir's answer, encoded, at most (names of control bytes take 6 bytes each, and every
 * entry repeats its directory in its path): built in one buffer, never as a json-c tree (which
 * took 900 MB for one listing of 64 MiB of names). With the names the library holds for it
 * (SRV_LIST_RAW_MAX), a listing costs the server about 32 MiB, and a sandbox builds at most
 * LISTS_AT_ONCE at a time (the others wait their turn). */
#define LIST_REPLY_MAX (16u << 20)
#define LISTS_AT_ONCE  2

/* Go's os.FileMode.String(), which envd sends as "permissions". */
static void permissions(uint32_t mode, enum cordon_file_type type, char out[11])
{
	static const char rwx[] = "rwxrwxrwx";

	out[0] = type == CORDON_FILE_DIRECTORY ? 'd' : type == CORDON_FILE_SYMLINK ? 'L' : '-';
	for (int i = 0; i < 9; i++)
		out[1 + i] = mode & (1u << (8 - i)) ? rwx[i] : '-';
	out[10] = '\0';
}

/* An owner or group as envd names it: the sandbox's accounts by name ("user" for the user and
 * its group: sbconfig.c), any other id by number */
static const char *id_name(unsigned id, char *buf, size_t size)
{
	if (id == 0)
		return "root";
	if (id == SRV_SANDBOX_UID)
		return SRV_SANDBOX_USER;
	snprintf(buf, size, "%u", id);
	return buf;
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
	json_object_object_add(j, "owner", json_object_new_string(id_name(f->uid, n, sizeof(n))));
	json_object_object_add(j, "group", json_object_new_string(id_name(f->gid, n, sizeof(n))));
	gmtime_r(&secs, &tm);
	snprintf(t, sizeof(t), "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (long long)(f->mtime_ns % 1000000000));
	json_object_object_add(j, "modifiedTime", json_object_new_string(t));
	if (f->link_target)
		json_object_object_add(j, "symlinkTarget", json_object_new_string(f->link_target));
	return j;
}

/* A buffer that refuses to grow past its bound. */
struct out {
	char *buf;
	size_t len, cap;
	bool full;
};

static void out_put(struct out *o, const char *s, size_t n)
{
	if (o->full || o->len + n + 1 > LIST_REPLY_MAX) {
		o->full = true;
		return;
	}
	if (o->len + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 64 * 1024;
		char *b;

		while (cap < o->len + n + 1)
			cap *= 2;
		b = realloc(o->buf, cap < LIST_REPLY_MAX ? cap : LIST_REPLY_MAX);
		if (!b) {
			o->full = true;
			return;
		}
		o->buf = b;
		o->cap = cap < LIST_REPLY_MAX ? cap : LIST_REPLY_MAX;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

/* "key":"value", escaped as json-c does (control bytes \u00XX, " and \; other bytes as they
 * are) */
static void out_str(struct out *o, const char *key, const char *v, bool comma)
{
	char esc[8];
	size_t run;

	out_put(o, comma ? ",\"" : "\"", comma ? 2 : 1);
	out_put(o, key, strlen(key));
	out_put(o, "\":\"", 3);
	while (*v && !o->full) {
		run = strcspn(v, "\"\\\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e"
				"\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d"
				"\x1e\x1f");
		out_put(o, v, run);
		v += run;
		if (!*v)
			break;
		if (*v == '"' || *v == '\\')
			snprintf(esc, sizeof(esc), "\\%c", *v);
		else
			snprintf(esc, sizeof(esc), "\\u%04x", (unsigned)(unsigned char)*v);
		out_put(o, esc, strlen(esc));
		v++;
	}
	out_put(o, "\"", 1);
}

static void out_entry(struct out *o, const struct cordon_file_info *f, bool comma)
{
	static const char *const types[] = {"FILE_TYPE_UNSPECIFIED", "FILE_TYPE_FILE",
					    "FILE_TYPE_DIRECTORY", "FILE_TYPE_SYMLINK"};
	char perm[11], t[48], n[24], owner[16], group[16], mode[16];
	time_t secs = (time_t)(f->mtime_ns / 1000000000);
	struct tm tm;

	out_put(o, comma ? ",{" : "{", comma ? 2 : 1);
	out_str(o, "name", f->name ? f->name : "", false);
	out_str(o, "type", types[f->type], true);
	out_str(o, "path", f->path ? f->path : "", true);
	snprintf(n, sizeof(n), "%llu", (unsigned long long)f->size); /* int64: a string in JSON */
	out_str(o, "size", n, true);
	snprintf(mode, sizeof(mode), ",\"mode\":%u", f->mode & 07777);
	out_put(o, mode, strlen(mode));
	permissions(f->mode, f->type, perm);
	out_str(o, "permissions", perm, true);
	out_str(o, "owner", id_name(f->uid, owner, sizeof(owner)), true);
	out_str(o, "group", id_name(f->gid, group, sizeof(group)), true);
	gmtime_r(&secs, &tm);
	snprintf(t, sizeof(t), "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (long long)(f->mtime_ns % 1000000000));
	out_str(o, "modifiedTime", t, true);
	if (f->link_target)
		out_str(o, "symlinkTarget", f->link_target, true);
	out_put(o, "}", 1);
}

/* {"entries":[...]}, or NULL when it would pass LIST_REPLY_MAX (or memory ran out) */
static char *list_encode(const struct cordon_file_info *v, size_t n, size_t *ret_len)
{
	struct out o = {0};

	out_put(&o, "{\"entries\":[", 12);
	for (size_t i = 0; i < n && !o.full; i++)
		out_entry(&o, &v[i], i > 0);
	out_put(&o, "]}", 2);
	if (o.full) {
		free(o.buf);
		return NULL;
	}
	*ret_len = o.len;
	return o.buf;
}

/* A turn to build a listing: 0, or -ECANCELED (the sandbox ends), -ETIMEDOUT. */
static int list_turn(struct srv_sandbox *sb)
{
	uint64_t end = cd_now_ns() + SRV_AGENT_CALL_NS;
	int r = 0;

	pthread_mutex_lock(&sb->lock);
	while (sb->n_lists >= LISTS_AT_ONCE) {
		struct timespec ts;

		if (__atomic_load_n(&sb->dying, __ATOMIC_RELAXED)) {
			r = -ECANCELED;
			break;
		}
		if (cd_now_ns() >= end) {
			r = -ETIMEDOUT;
			break;
		}
		/* sb->cond (CLOCK_REALTIME) is broadcast at each turn's end; a short step so that
		 * the sandbox's end is seen too */
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 200 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&sb->cond, &sb->lock, &ts);
	}
	if (r == 0)
		sb->n_lists++;
	pthread_mutex_unlock(&sb->lock);
	return r;
}

static void list_turn_end(struct srv_sandbox *sb)
{
	pthread_mutex_lock(&sb->lock);
	sb->n_lists--;
	pthread_cond_broadcast(&sb->cond);
	pthread_mutex_unlock(&sb->lock);
}

/* A full disk is envd's `internal`, not `resource_exhausted`: the SDK makes that a
 * RateLimitError ("try again later"), which a full disk is not. */
static enum MHD_Result fail(struct srv_req *r, const struct cordon_error *err)
{
	bool full = err->code == ENOSPC || err->code == EDQUOT;

	return srv_rpc_error(r, full ? "internal" : srv_connect_code_of_errno(err->code), "%s",
			     err->msg);
}

/* The request's string field key (non-empty); NULL with an error answered. req is freed then. */
static const char *path_field(struct srv_req *r, json_object *req, const char *key)
{
	json_object *v;
	const char *why = NULL;

	if (srv_rpc_get(req, key, json_type_string, &v, &why) < 0 || !v ||
	    !json_object_get_string_len(v)) {
		srv_rpc_error(r, "invalid_argument", "%s", why ? why : "a path is missing");
		json_object_put(req);
		return NULL;
	}
	return json_object_get_string(v);
}

/* {"entry": stat(path)} */
static enum MHD_Result reply_entry(struct srv_req *r, const char *path)
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
	return srv_rpc_reply(r, j);
}

enum MHD_Result srv_fs_stat(struct srv_req *r)
{
	json_object *req = srv_rpc_request(r, false);
	const char *path = req ? path_field(r, req, "path") : NULL;
	enum MHD_Result ret;

	if (!path)
		return MHD_YES;
	ret = reply_entry(r, path);
	json_object_put(req);
	return ret;
}

enum MHD_Result srv_fs_list_dir(struct srv_req *r)
{
	struct cordon_error err = {0};
	json_object *req = srv_rpc_request(r, false), *depth_j;
	const char *path = req ? path_field(r, req, "path") : NULL, *why = NULL;
	struct cordon_file_info *v = NULL;
	size_t n = 0, len = 0;
	char *out;
	int64_t depth = 1;
	int k;

	if (!path)
		return MHD_YES;
	if (srv_rpc_get(req, "depth", json_type_int, &depth_j, &why) < 0) {
		json_object_put(req);
		return srv_rpc_error(r, "invalid_argument", "%s", why);
	}
	if (depth_j)
		depth = json_object_get_int64(depth_j);
	if (depth == 0)
		depth = 1;
	if (depth < 0 || depth > 64) {
		json_object_put(req);
		return srv_rpc_error(r, "invalid_argument", "\"depth\" must be 1-64");
	}
	k = list_turn(r->sb);
	if (k < 0) {
		json_object_put(req);
		return srv_rpc_error(r, k == -ECANCELED ? "unavailable" : "deadline_exceeded",
				     k == -ECANCELED
					 ? "the sandbox is being killed"
					 : "other listings of this sandbox took too long");
	}
	k = cordon_session_list(r->sb->session, path, (unsigned)depth, LIST_MAX, &v, &n, &err);
	json_object_put(req);
	if (k < 0) {
		list_turn_end(r->sb);
		return fail(r, &err);
	}
	out = list_encode(v, n, &len);
	cordon_file_info_free(v, n);
	list_turn_end(r->sb);
	if (!out)
		return srv_rpc_error(r, "resource_exhausted",
				     "the listing is more than %u MiB as JSON: list less at once "
				     "(a lower depth, a directory further down)",
				     LIST_REPLY_MAX >> 20);
	return srv_rpc_reply_raw(r, out, len);
}

enum MHD_Result srv_fs_make_dir(struct srv_req *r)
{
	struct cordon_error err = {0};
	json_object *req = srv_rpc_request(r, false);
	const char *path = req ? path_field(r, req, "path") : NULL;
	enum MHD_Result ret;
	int made = 0;

	if (!path)
		return MHD_YES;
	if (cordon_session_mkdir(r->sb->session, path, &made, &err) < 0)
		ret = fail(r, &err);
	else if (!made) /* the SDK's makeDir() says false on already_exists */
		ret = srv_rpc_error(r, "already_exists", "%s already exists", path);
	else
		ret = reply_entry(r, path);
	json_object_put(req);
	return ret;
}

enum MHD_Result srv_fs_move(struct srv_req *r)
{
	struct cordon_error err = {0};
	json_object *req = srv_rpc_request(r, false);
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

enum MHD_Result srv_fs_remove(struct srv_req *r)
{
	struct cordon_error err = {0};
	json_object *req = srv_rpc_request(r, false);
	const char *path = req ? path_field(r, req, "path") : NULL;
	int k;

	if (!path)
		return MHD_YES;
	k = cordon_session_remove(r->sb->session, path, &err);
	json_object_put(req);
	if (k < 0)
		return fail(r, &err);
	return srv_rpc_reply(r, json_object_new_object());
}
