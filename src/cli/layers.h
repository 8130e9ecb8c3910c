/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* layers.h - `cordon layers|diff|apply|discard` (layers.c). */
#pragma once

/* argv[1] is the subcommand; returns the exit code. */
int cd_cli_layers(int argc, char **argv);
