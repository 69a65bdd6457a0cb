/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "sight-agent.h"
#include "sight-project.h"
#include "sight-step-request.h"
#include "sight-step-result.h"

G_BEGIN_DECLS

/* The one entry point of a step, whatever its kind: a direct step (`do`, no
 * model) or an agent step (act, assert, waitFor, extract). The suite, the
 * smoke test, skills, tasks, MCP and the app build a request here and run it
 * here; none of them chooses between a direct and a model step itself. */

/* The kinds of step a test file, a skill or the app may name, in that order:
 * "do", "act", "assert", "waitFor", "extract"; NULL-terminated. They are
 * sight_step_kind_get_names(): the direct step's name and SightStepKind's
 * nicks. */
#define sight_step_kind_names (sight_step_kind_get_names ())

/* Whether @name is one of sight_step_kind_names. */
gboolean          sight_step_kind_name_is_valid  (const char     *name);

/* A request for a step of kind @kind ("do" or an agent step's name) with
 * @options (the step's other members; NULL: none).  A `do` step takes its
 * "params" from @options and runs within @direct_timeout_ms; an agent
 * step's options are validated and its budgets resolved against @project,
 * @test_agent and @remaining_test_ms (sight_step_request_new()). An unknown
 * kind is INVALID_ARGUMENT. */
SightStepRequest *sight_step_request_new_for_kind (SightProject  *project,
                                                   const char    *kind,
                                                   const char    *instruction,
                                                   JsonObject    *options,
                                                   const char    *test_agent,
                                                   gint64         remaining_test_ms,
                                                   guint          direct_timeout_ms,
                                                   GError       **error);

/* What a plain-language step of a flow runs as: "do" when @text parses as
 * a direct step, else "act". */
const char       *sight_step_kind_for_text        (const char    *text);

/* A plain-language step of a flow (a smoke test's or a skill's steps): a
 * direct step when @text parses as one, else act (which needs a model),
 * either within @timeout_ms. */
SightStepRequest *sight_step_request_new_for_text (SightProject  *project,
                                                   const char    *text,
                                                   guint          timeout_ms,
                                                   GError       **error);

/* Runs @request (taken) on @agent's page: a direct step through
 * sight_direct_step_run_async() with @agent's project's secrets, an agent
 * step through sight_agent_run_async(), or, for act and assert with an agent
 * that has a custom executor, through that program
 * (sight-external-executor.h, docs/executor.md).  The result is always returned,
 * pass or fail; on failure it carries the error, which _finish copies into
 * @error.  _finish returns NULL only when @cancellable fired
 * (G_IO_ERROR_CANCELLED in @error).
 *
 * A direct step's result has direct set, the summary, one action when it
 * performed one (its record in performed), the URL it ended on and, when a
 * secret was typed literally into a secure field, the masked text as its
 * instruction (instruction_masked). */
void              sight_step_execute_async       (SightAgent          *agent,
                                                  SightStepRequest    *request,
                                                  GCancellable        *cancellable,
                                                  GAsyncReadyCallback  callback,
                                                  gpointer             user_data);
SightStepResult  *sight_step_execute_finish      (GAsyncResult        *result,
                                                  GError             **error);
/* A direct step's text with a secret it typed literally masked, or NULL;
 * valid also when the step was cancelled (when _finish returns NULL), for
 * the stored row of a step cut short. Borrowed from @result. */
const char       *sight_step_execute_get_masked_instruction (GAsyncResult *result);

G_END_DECLS
