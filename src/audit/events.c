/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* events.c - the audit trail's events of a sandbox and its command. Runs in the supervisor. */
#include <signal.h>
#include <string.h>

#include "events.h"
#include "result.h"
#include "cordon.h"

void cd_event_start(const struct cd_audit *a, char *const *argv, size_t workdir_entries,
		    cd_event_render_fn applied, const void *data)
{
	struct cd_json j;

	if (!cd_audit_on(a))
		return;
	cd_audit_begin(a, &j, "start");
	cd_json_kv_string(&j, "cordon", cordon_version());
	cd_json_key(&j, "command");
	cd_json_array_begin(&j);
	for (char *const *s = argv; *s; s++)
		cd_json_string(&j, *s);
	cd_json_array_end(&j);
	cd_json_kv_uint(&j, "workdir_entries", workdir_entries);
	applied(&j, data);
	cd_audit_end(a, &j);
}

void cd_event_signal(const struct cd_audit *a, int sig, int from_pid)
{
	struct cd_json j;

	if (!cd_audit_on(a))
		return;
	cd_audit_begin(a, &j, "signal");
	cd_json_kv_int(&j, "signal", sig);
	cd_json_kv_string(&j, "name", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	cd_json_kv_int(&j, "from_pid", from_pid);
	cd_json_kv_string(&j, "action", "forwarded to the command");
	cd_audit_end(a, &j);
}

void cd_event_limit(const struct cd_audit *a, const char *limit, const char *action,
		    uint64_t count)
{
	struct cd_json j;

	if (!cd_audit_on(a))
		return;
	cd_audit_begin(a, &j, "limit");
	cd_json_kv_string(&j, "limit", limit);
	cd_json_kv_string(&j, "action", action);
	if (count)
		cd_json_kv_uint(&j, "count", count);
	cd_audit_end(a, &j);
}

void cd_event_file(const struct cd_audit *a, const struct cd_file_event *f)
{
	bool lossy = false;
	struct cd_json j;

	cd_audit_begin(a, &j, "file");
	cd_json_kv_string(&j, "change", f->change);
	cd_json_key(&j, "path");
	cd_audit_string(&j, f->path, strlen(f->path), &lossy);
	cd_json_kv_string(&j, "type", f->type);
	cd_json_kv_uint(&j, "size", f->size);
	cd_json_kv_uint(&j, "mode", f->mode & 07777);
	cd_json_key(&j, "sha256");
	if (f->sha256)
		cd_json_string(&j, f->sha256);
	else
		cd_json_null(&j);
	if (f->target) {
		cd_json_key(&j, "target");
		cd_audit_string(&j, f->target, strlen(f->target), &lossy);
	}
	if (lossy) {
		cd_json_key(&j, "path_hex");
		cd_audit_hex(&j, f->path, strlen(f->path));
	}
	cd_audit_end(a, &j);
}

static void file_event(enum cd_change what, const struct cd_fentry *e, void *data)
{
	static const char *const names[] = { "created", "modified", "deleted" };

	cd_event_file(data, &(struct cd_file_event){
				    .change = names[what],
				    .path = e->path,
				    .type = cd_fentry_type(e->mode),
				    .size = e->size,
				    .mode = e->mode,
				    .sha256 = e->hashed && what != CD_DELETED ? e->sha256 : NULL,
				    .target = e->link,
			    });
}

void cd_event_files(const struct cd_audit *a, const struct cd_snapshot *before,
		    const struct cd_snapshot *after)
{
	if (cd_audit_on(a))
		cd_snapshot_diff(before, after, file_event, (void *)a);
}

void cd_event_protect(const struct cd_audit *a, const char *rel, const char *glob,
		      const char *action)
{
	bool lossy = false;
	struct cd_json j;

	if (!cd_audit_on(a))
		return;
	cd_audit_begin(a, &j, "protect");
	cd_json_key(&j, "path");
	cd_audit_string(&j, rel, strlen(rel), &lossy);
	cd_json_kv_string(&j, "rule", glob);
	cd_json_kv_string(&j, "action", action);
	cd_audit_end(a, &j);
}

void cd_event_exit(const struct cd_audit *a, const struct cordon_result *res,
		   uint64_t exec_events_dropped)
{
	struct cd_json j;

	if (!cd_audit_on(a))
		return;
	cd_audit_begin(a, &j, "exit");
	cd_audit_render_result(&j, res);
	cd_json_kv_uint(&j, "exec_events_dropped", exec_events_dropped);
	cd_json_kv_uint(&j, "events_lost", cd_audit_lost(a));
	cd_audit_end(a, &j);
}
