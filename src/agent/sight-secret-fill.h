/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "sight-secrets.h"
#include "sight-web-page.h"

G_BEGIN_DECLS

/* The one host-side fill of a Secret, whatever path asks for it: act's
 * `fill {ref, param}`, direct steps (`type {password} into Password`) and the
 * trace cache's replays, and so every caller of those (suites, smoke tests,
 * skills, tasks, MCP, the app's composer and step list).
 *
 * It checks, in this order, and types nothing when a check fails:
 *   1. the credential @name is registered in @secrets
 *      (SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE, also when its value cannot be
 *      read);
 *   2. the page's current origin is @step_origin (the origin the step opened
 *      on; NULL: any) and one of the credential's allowedOrigins
 *      (SIGHT_ERROR_POLICY_DENIED);
 *   3. and 4., in the page at fill time: the field @ref is enabled and
 *      editable, and of the credential's purpose
 *      (sight_web_page_fill_secret_async(): SIGHT_ERROR_POLICY_DENIED naming
 *      the field and both purposes).
 * The value is read only once 1 and 2 passed (sight_secrets_resolve_async:
 * a keyring value without blocking, and within @timeout_ms, which also bounds
 * the fill: a keyring that is absent, locked or does not answer in time is
 * SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE), 1 and 2 are checked again on the
 * page as it is once the value is read, and from then on the page masks it in
 * every screenshot and counts the fill (its pixels are tainted:
 * sight_web_page_get_secret_fills()).  @param names the param for messages.
 * Finishes with the engine's result, which holds no value. */
void        sight_secret_fill_async  (SightWebPage        *page,
                                      SightSecrets        *secrets,
                                      const char          *name,
                                      const char          *param,
                                      const char          *step_origin,
                                      const char          *ref,
                                      guint                timeout_ms,
                                      GCancellable        *cancellable,
                                      GAsyncReadyCallback  callback,
                                      gpointer             user_data);
JsonObject *sight_secret_fill_finish (SightWebPage        *page,
                                      GAsyncResult        *result,
                                      GError             **error);

/* Checks 1 and 2 alone, with no value read and nothing typed (act asks before
 * it counts an action). */
gboolean    sight_secret_fill_authorize (SightWebPage  *page,
                                         SightSecrets  *secrets,
                                         const char    *name,
                                         const char    *param,
                                         const char    *step_origin,
                                         GError       **error);

/* Whether @error is one of the refusals above, which end a step: a replay or
 * a retry cannot make them pass. */
gboolean    sight_secret_fill_error_is_refusal (const GError *error);

/* The one rule for a value that is not a Secret but is typed into a secure
 * field (@secure: a password or one-time-code field): it is a secret from
 * then on, whether the test wrote it out literally or as a plain param, and
 * every path that types one (act's `fill`, direct steps, and so suites,
 * smoke tests, skills, tasks, the app) calls this before it reports or stores
 * the step.  It registers @value with the process-wide redactor under @name
 * (the param's name, or "typed"), so every later write masks it: the step's
 * options and text in the store, the reports read from there, logs, action
 * lines.  Returns TRUE when @value is a secret from now on (FALSE for an
 * empty value or a field that is not secure); a value shorter than the
 * redactor's minimum counts but is not registered (sight-secrets.h). */
gboolean    sight_secret_fill_note_typed (gboolean    secure,
                                          const char *name,
                                          const char *value);

G_END_DECLS
