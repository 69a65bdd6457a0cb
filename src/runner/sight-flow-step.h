/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "sight-project.h"
#include "sight-web-page.h"

G_BEGIN_DECLS

/* One plain-language step of a flow (a smoke test's steps, a test file's
 * `do`): a direct step runs with no model; any other text runs as `act` and
 * so needs a model (MODEL_UNAVAILABLE when none is configured). Finishes
 * with a JSON object describing what ran ({ kind: "do"|"act", … }). */
void        sight_flow_step_run_async  (SightWebPage        *page,
                                        const char          *text,
                                        guint                timeout_ms,
                                        GCancellable        *cancellable,
                                        GAsyncReadyCallback  callback,
                                        gpointer             user_data);
JsonObject *sight_flow_step_run_finish (GAsyncResult        *result,
                                        GError             **error);

/* The step's text as it may be stored: a value the text typed literally into
 * a password or one-time-code field masked (sight_direct_step_run_get_masked_text);
 * NULL when it can stand as written. Borrowed from @result. */
const char *sight_flow_step_run_get_masked_text (GAsyncResult        *result);

G_END_DECLS
