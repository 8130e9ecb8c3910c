/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* envd_watch.h - envd's directory watchers (envd_watch.c). */
#pragma once

#include "registry.h"
#include "req.h"

/* Watchers (streams and polled) one sandbox may have at once: each is an inotify instance of
 * the sandbox's, a worker process of its agent and, polled, an entry here */
#define SRV_SANDBOX_MAX_WATCHERS 16

/* /filesystem.Filesystem/<name> (routes.c) */
enum MHD_Result srv_watch_dir(struct srv_req *r);
enum MHD_Result srv_watch_create(struct srv_req *r);
enum MHD_Result srv_watch_events(struct srv_req *r);
enum MHD_Result srv_watch_remove(struct srv_req *r);
/* A sandbox's end: its polled watchers go (srv_reg_on_death; a stream ends with its watch) */
void srv_watch_on_death(struct srv_sandbox *sb, void *ctx);
