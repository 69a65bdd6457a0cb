/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "sight-secrets.h"
#include "sight-web-page.h"

G_BEGIN_DECLS

/* Runs one direct step (sight-direct-step.h) on @page with no model.
 *
 * A target is re-observed and resolved until it is there or the deadline
 * passes (a target that is ambiguous fails at once, listing the candidates).
 * Expectations and "wait for" poll until they hold or @timeout_ms passes:
 * a failed expectation is ASSERTION_FAILED, a wait that ran out STEP_TIMEOUT.
 * A {param} is filled from @params; a Secret there is resolved through
 * @secrets for the page's origin and never appears in the summary.
 * Finishes with a one-line summary of what was done. */
void   sight_direct_step_run_async  (SightWebPage        *page,
                                     const char          *text,
                                     JsonNode            *params,
                                     SightSecrets        *secrets,
                                     guint                timeout_ms,
                                     GCancellable        *cancellable,
                                     GAsyncReadyCallback  callback,
                                     gpointer             user_data);
char  *sight_direct_step_run_finish (SightWebPage        *page,
                                     GAsyncResult        *result,
                                     GError             **error);
/* The action a step that passed performed, as the trace cache records act's:
 * { "tool", "args" (a {param} by name, never a secret value), "descriptor" }
 * (sight_trace_add_action takes them), or NULL for a step that performed none
 * (an expectation, a wait) or failed.  Borrowed from @result. */
JsonObject *sight_direct_step_run_get_record (GAsyncResult      *result);

/* What stands for a secret typed literally in a stored step text. */
#define SIGHT_DIRECT_SECRET_MASK "[secret]"

/* The step's text as it may be stored and reported once its target turned
 * out to be a password or one-time-code field and the test typed the value
 * out: the value replaced by SIGHT_DIRECT_SECRET_MASK (a plain {param}: the
 * text as written, its value now known to the redactor, so the step's options
 * are to be written again). NULL when the text can stand as written (or the
 * step never reached its target). Valid whether the step passed or failed;
 * borrowed from @result. */
const char *sight_direct_step_run_get_masked_text (GAsyncResult   *result);

G_END_DECLS
