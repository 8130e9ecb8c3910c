/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* envd_fs.h - envd's filesystem service (envd_fs.c). */
#pragma once

#include "http.h"

srv_handler_fn srv_fs_route(const char *rpc);
