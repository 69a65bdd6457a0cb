/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "sight-project.h"
#include "sight-step-result.h"
#include "sight-web-page.h"

G_BEGIN_DECLS

/* One plain-language step of a flow (a smoke test's or a skill's steps),
 * run through the step executor with the project found from the working
 * folder: a direct step runs with no model; any other text runs as `act`
 * and so needs a model (MODEL_UNAVAILABLE when none is configured).
 * Finishes like sight_step_execute_finish(): the step's result, pass or
 * fail (the error copied into @error), or NULL when cancelled. */
void             sight_flow_step_run_async  (SightWebPage        *page,
                                             const char          *text,
                                             guint                timeout_ms,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data);
SightStepResult *sight_flow_step_run_finish (GAsyncResult        *result,
                                             GError             **error);

G_END_DECLS
