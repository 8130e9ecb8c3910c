/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* control.h - the REST control plane (control.c). */
#pragma once

#include "cordon.h"
#include "req.h"

/* the newest envd version the SDK (e2b 2.51.0) compares against: its newest code paths */
#define SRV_ENVD_VERSION "0.6.4"

/* The handlers of E2B's REST API (routes.c says which answers which request) */
enum MHD_Result srv_control_create(struct srv_req *r);
enum MHD_Result srv_control_list(struct srv_req *r);
enum MHD_Result srv_control_templates(struct srv_req *r);
enum MHD_Result srv_control_template_alias(struct srv_req *r);
enum MHD_Result srv_control_get(struct srv_req *r);
enum MHD_Result srv_control_kill(struct srv_req *r);
enum MHD_Result srv_control_timeout(struct srv_req *r);
enum MHD_Result srv_control_connect(struct srv_req *r);
enum MHD_Result srv_control_refresh(struct srv_req *r);
enum MHD_Result srv_control_pause(struct srv_req *r);
enum MHD_Result srv_control_resume(struct srv_req *r);
enum MHD_Result srv_control_health(struct srv_req *r);
enum MHD_Result srv_control_unsupported(struct srv_req *r);
