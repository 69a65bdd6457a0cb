/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

#include "sight-step-context.h"

G_BEGIN_DECLS

/* A failed step's evidence where no run keeps it (an agent's evidence
 * folder: `sightline step`, an MCP session): when the step's outcome in
 * @ctx calls for it by sight_step_shot_for () (a failed assertion, its
 * screenshot allowed, no secret filled) and the step has time left, the
 * page's masked screenshot is written into ctx->evidence_dir under a name
 * of its own and its path set as the result's screenshot_path. Whichever
 * body judged the step (the model's or a custom executor's). Never fails:
 * no evidence is no error. */
void     sight_step_evidence_keep_async  (SightStepContext    *ctx,
                                          GAsyncReadyCallback  callback,
                                          gpointer             user_data);
void     sight_step_evidence_keep_finish (GAsyncResult        *result);

G_END_DECLS
