/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* events.h - the audit trail's events of a sandbox and its command (docs/audit.md): start,
 * signal, limit, file, exit. The exec and net events are written by execlog.c and proxy.c, a
 * copy-on-write workdir's file events by src/layer/audit_files.c.
 * Supervisor side; each does nothing when the audit is off. */
#pragma once

#include "audit.h"
#include "json.h"
#include "snapshot.h"

/* What renders a part of an event that a layer above knows the shape of. */
typedef void (*cd_event_render_fn)(struct cd_json *j, const void *data);
/* "start": cordon's version, the command, the workdir's entries and what is applied (its
 * members rendered by applied(j, data) into the event's object). */
void cd_event_start(const struct cd_audit *a, char *const *argv, size_t workdir_entries,
		    cd_event_render_fn applied, const void *data);
/* "signal": a signal cordon received and passed on. */
void cd_event_signal(const struct cd_audit *a, int sig, int from_pid);
/* "limit": a bound that fired and what was done; count 0 is left out. */
void cd_event_limit(const struct cd_audit *a, const char *limit, const char *action,
		    uint64_t count);
/* "file": one change of the workdir, however it was found (a walk's snapshots, a layer's
 * manifest): sha256 NULL for none, target NULL for no symlink. */
struct cd_file_event {
	const char *change; /* "created", "modified", "deleted" */
	const char *path;
	const char *type;
	uint64_t size;
	mode_t mode;
	const char *sha256;
	const char *target;
};
void cd_event_file(const struct cd_audit *a, const struct cd_file_event *f);
/* "file": one per change of the workdir between two snapshots. */
void cd_event_files(const struct cd_audit *a, const struct cd_snapshot *before,
		    const struct cd_snapshot *after);
/* "protect": a path the sandbox made at a protected path, removed after the run. */
void cd_event_protect(const struct cd_audit *a, const char *rel, const char *glob,
		      const char *action);
/* "exit": the result; the last line. */
void cd_event_exit(const struct cd_audit *a, const struct cordon_result *res,
		   uint64_t exec_events_dropped);
