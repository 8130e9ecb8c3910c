/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* control.h - the REST control plane (control.c). */
#pragma once

#include "cordon.h"
#include "http.h"

/* the newest envd version the SDK (e2b 2.51.0) compares against: its newest code paths */
#define SRV_ENVD_VERSION "0.6.4"

srv_handler_fn srv_control_route(const char *method, const char *url, char **ret_sub);
