/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "sight-budget.h"
#include "sight-project.h"
#include "sight-step-options.h"

G_BEGIN_DECLS

/* Everything checked and resolved before a step opens, in the spec's order: the
 * instruction (UTF-8, NFC, 1-8192 bytes), the options for the method (unknown:
 * INVALID_ARGUMENT; schema or vision on act: UNSUPPORTED_CAPABILITY), params
 * (64 KiB, 32 levels), the agent (unknown: INVALID_ARGUMENT) and the budgets (per-call
 * limits only lower the agent's; the timeout capped by the test's remaining time).
 * A step that fails here has not opened: no observation, no model call. */
typedef struct {
  /* a direct step (`do`): no model, no options; its params are in params and its
   * deadline in limits.timeout_ms */
  gboolean           direct;
  /* do: the params object as written (Secrets as {secret}), or NULL */
  JsonNode          *params;
  /* the agent steps' options; NULL for a direct step */
  SightStepOptions  *options;
  /* the instruction as written, NFC */
  char              *instruction;
  /* the instruction with {name} placeholders filled from params, Secrets projected:
   * what the model is given */
  char              *model_instruction;
  /* params as the model sees them (Secrets as {secret, purpose}); NULL without params */
  JsonNode          *model_params;
  /* names of the credentials the params refer to (never NULL) */
  GStrv              secret_names;
  SightBudgetLimits  limits;
} SightStepRequest;

SightStepRequest *sight_step_request_new       (SightProject   *project,
                                                SightStepKind   kind,
                                                const char     *instruction,
                                                JsonObject     *options,
                                                const char     *test_agent,
                                                gint64          remaining_test_ms,
                                                GError        **error);
/* The same from a test-file step ({"act": "…", "params": {…}, …}). */
SightStepRequest *sight_step_request_new_from_step (SightProject   *project,
                                                    JsonObject     *step,
                                                    const char     *test_agent,
                                                    gint64          remaining_test_ms,
                                                    GError        **error);
/* A direct step (`do`): @instruction, as written, run with @params (a params
 * object, or NULL; copied) within @timeout_ms.  Whether the text parses as a
 * direct step is the executor's to say (sight-step-executor.h). */
SightStepRequest *sight_step_request_new_direct (const char     *instruction,
                                                 JsonNode       *params,
                                                 guint           timeout_ms);
void              sight_step_request_free      (SightStepRequest *request);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightStepRequest, sight_step_request_free)

G_END_DECLS
