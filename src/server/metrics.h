/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* metrics.h - a sandbox's metrics (metrics.c). */
#pragma once

#include "req.h"

/* GET /sandboxes/{id}/metrics (routes.c) */
enum MHD_Result srv_metrics_get(struct srv_req *r);
