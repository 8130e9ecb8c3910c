/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* routes.h - the router the transport calls (routes.c). */
#pragma once

#include "http.h"

extern const struct srv_http_router srv_routes;
