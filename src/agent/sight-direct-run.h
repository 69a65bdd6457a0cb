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

/* One page action ("click", "dblclick", "hover", "fill", "press", "select",
 * "check", "uncheck", "scroll") on the element @ref names, on the element
 * at (@x, @y) when @at_point, or on the focused element when neither.
 * Used by direct steps and the trace cache's replay. */
void     _sight_direct_perform_async  (SightWebPage        *page,
                                       const char          *ref,
                                       gboolean             at_point,
                                       double               x,
                                       double               y,
                                       const char          *action,
                                       const char          *value,
                                       guint                timeout_ms,
                                       GCancellable        *cancellable,
                                       GAsyncReadyCallback  callback,
                                       gpointer             user_data);
gboolean _sight_direct_perform_finish (SightWebPage        *page,
                                       GAsyncResult        *result,
                                       GError             **error);

G_END_DECLS
