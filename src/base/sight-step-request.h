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
void              sight_step_request_free      (SightStepRequest *request);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightStepRequest, sight_step_request_free)

G_END_DECLS
