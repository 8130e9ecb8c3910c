/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* audit.h - the audit trail (docs/audit.md): a JSON Lines log of the whole session, one event
 * per line, each line written whole with one write(). An event that cannot be written does not
 * stop the run (the sandbox never waits on the log) but is remembered: cd_audit_check() says
 * whether the log is complete. Supervisor side. */
#pragma once

#include <sys/stat.h>

#include "output.h"
#include "json.h"
#include "snapshot.h"
#include "util.h"

struct cd_audit_loss;

struct cd_audit {
	int fd; /* -1: no audit */
	const char *id;
	/* the events that did not reach the log: behind a pointer, because the writers of events
	 * (the exec log, the proxy) hold the log const; allocated by open */
	struct cd_audit_loss *loss;
};

/* Create the log before anything starts, anew, outside the workdir (output.h): failing here
 * fails the run. a->id is the caller's, set before or after. */
int cd_audit_open(const char *path, const struct cd_output_ctx *ctx, struct cd_audit *a,
		  struct cordon_error *err);
/* The same on a descriptor the caller opened, which it takes (closed on failure too); name is
 * for messages. */
int cd_audit_open_fd(int fd, const char *name, struct cd_audit *a, struct cordon_error *err);
/* Accepts a log never opened, or half-opened. */
void cd_audit_close(struct cd_audit *a);
static inline bool cd_audit_on(const struct cd_audit *a)
{
	return a->fd >= 0;
}

/* An event: begin() opens the object with "event", "id", "time"; the caller adds its keys;
 * end() closes it and writes the line: 0, or -errno when the event is not in the log or only in
 * part (-ENOMEM: it could not be composed), which the log remembers for cd_audit_check(). */
void cd_audit_begin(const struct cd_audit *a, struct cd_json *j, const char *event);
int cd_audit_end(const struct cd_audit *a, struct cd_json *j);

/* 0 when every event so far is in the log whole (or there is no log); else -errno of the first
 * that is not, *err saying how many are missing: the log is incomplete. */
int cd_audit_check(const struct cd_audit *a, struct cordon_error *err);
/* How many events are not in the log (the "gap" events in it say where). */
uint64_t cd_audit_lost(const struct cd_audit *a);

/* A string that may not be UTF-8 (paths, arguments): as a JSON string, where a byte that is not
 * valid UTF-8 shows as \u00XX; *lossy is set then, so that the caller adds the exact bytes. The
 * JSON writer and this test use the same validator (utf8.h): *lossy is set exactly when the
 * JSON string does not give the bytes back. */
void cd_audit_string(struct cd_json *j, const char *s, size_t n, bool *lossy);
void cd_audit_hex(struct cd_json *j, const char *s, size_t n);

/* One "limit" event per bound a walk of the workdir reached (walk: "before", "after"). */
void cd_audit_walk_limits(const struct cd_audit *a, const char *walk, const struct cd_snapshot *s);
