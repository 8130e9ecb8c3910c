/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cow.h - the supervisor's side of a copy-on-write workdir (cow.c): the layer store opened and a
 * layer to start from checked before anything starts; the overlay's upper received from pid 1
 * (and seeded) at sync 2; the changes saved as a layer when the sandbox has ended (the protected
 * paths' globs with them: protect_run.h).
 */
#pragma once

#include "sandbox.h"

int cd_cow_prepare(struct cd_sandbox *sb, struct cordon_error *err);
/* sync 2, --cow: wait for pid 1's CD_MSG_LAYER, seed the upper (--cow-from), answer; then the
 * notice that directories of the workdir cannot be renamed inside. */
int cd_cow_handshake(struct cd_sandbox *sb, struct cordon_error *err);
/* Every process of the sandbox is gone: save the layer (nothing to do without --cow). */
void cd_cow_end(struct cd_sandbox *sb);
void cd_cow_done(struct cd_sandbox *sb);
/* While the sandbox runs: its changes so far saved as a new layer (a session forked from
 * them starts from it: --cow-from). -EINVAL without a copy-on-write workdir. */
int cd_cow_checkpoint(struct cd_sandbox *sb, char ret_id[17], struct cordon_error *err);
