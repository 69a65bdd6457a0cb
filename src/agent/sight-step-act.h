/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "sight-step-context.h"

G_BEGIN_DECLS

/* act (spec "agent.act") on @ctx's page: a cached trace replayed when the project
 * keeps one, else the model loop: observe → model (tools) → commit the actions the
 * model called → observe the changes → … until the model concludes with done, or a
 * budget or the deadline runs out. The outcome is written into @ctx's result. */
void      sight_step_act_run_async   (SightStepContext    *ctx,
                                      GAsyncReadyCallback  callback,
                                      gpointer             user_data);
void      sight_step_act_run_finish  (SightStepContext    *ctx,
                                      GAsyncResult        *result);

/* act's tools as a JSON array of {name, description, parameters}: the table of
 * sight-step-act.c with their schemas from the agent's resources. */
JsonNode *sight_step_act_get_tools   (gboolean             with_pixels);

G_END_DECLS
