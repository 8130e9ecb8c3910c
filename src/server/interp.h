/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* interp.h - the code interpreter (interp.c). */
#pragma once

#include "req.h"
#include "registry.h"

/* Code contexts a sandbox may have at once (the default one counts): each is a kernel process
 * of the sandbox's and two pipes and a buffer of the server's. */
#define SRV_SANDBOX_MAX_CTXS 16
/* Kernel lines past 256 KiB that the server holds at once for one sandbox (one line: at most
 * 32 MiB): a line past it is dropped, and the execution told. */
#define SRV_SANDBOX_LINE_BYTES (32u << 20)
/* The sandbox is dying (srv_reg_on_death): its contexts go, their kernels with them. */
void srv_interp_on_death(struct srv_sandbox *sb, void *ctx);

/* The handlers of the code interpreter's API (routes.c) */
enum MHD_Result srv_interp_execute(struct srv_req *r);
enum MHD_Result srv_interp_create_ctx(struct srv_req *r);
enum MHD_Result srv_interp_list_ctx(struct srv_req *r);
enum MHD_Result srv_interp_remove_ctx(struct srv_req *r);
enum MHD_Result srv_interp_restart_ctx(struct srv_req *r);
enum MHD_Result srv_interp_health(struct srv_req *r);
