/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* envd_process.h - envd's process service (envd_process.c). */
#pragma once

#include "http.h"

srv_handler_fn srv_process_route(const char *rpc);
