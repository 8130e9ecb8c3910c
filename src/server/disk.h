/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* disk.h - --disk: the workdirs' budgets, checked every 2 s (disk.c). */
#pragma once

#include "cordon.h"

int srv_disk_start(struct cordon_error *err);
void srv_disk_stop(void);
