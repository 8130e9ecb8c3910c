/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* envd_process.h - envd's process service (envd_process.c). */
#pragma once

#include "req.h"

/* The process service's RPCs (routes.c: /process.Process/<name>) */
enum MHD_Result srv_process_start(struct srv_req *r);
enum MHD_Result srv_process_connect(struct srv_req *r);
enum MHD_Result srv_process_list(struct srv_req *r);
enum MHD_Result srv_process_send_input(struct srv_req *r);
enum MHD_Result srv_process_send_signal(struct srv_req *r);
enum MHD_Result srv_process_close_stdin(struct srv_req *r);
enum MHD_Result srv_process_update(struct srv_req *r);
enum MHD_Result srv_process_unimplemented(struct srv_req *r);
