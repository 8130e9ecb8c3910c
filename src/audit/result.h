/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* result.h - a run's result as JSON, for the report (src/records) and the audit trail's exit
 * event. Pure. Supervisor side. */
#pragma once

#include "cordon.h"
#include "json.h"

/* The result's members (outcome, exit code, times, usage, proxy, capture, error) into the open
 * object j. */
void cd_audit_render_result(struct cd_json *j, const struct cordon_result *res);
