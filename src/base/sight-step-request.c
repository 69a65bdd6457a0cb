/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-step-request"

#include "config.h"

#include "sight-step-request.h"

#include "sight-error.h"
#include "sight-params.h"

void
sight_step_request_free (SightStepRequest *request)
{
  if (request == NULL)
    return;
  g_clear_pointer (&request->options, sight_step_options_free);
  g_clear_pointer (&request->params, json_node_unref);
  g_free (request->instruction);
  g_free (request->model_instruction);
  g_clear_pointer (&request->model_params, json_node_unref);
  g_strfreev (request->secret_names);
  g_free (request);
}

static SightStepRequest *
finish (SightProject      *project,
        SightStepOptions  *options,
        char              *instruction,
        const char        *test_agent,
        gint64             remaining_test_ms,
        GError           **error)
{
  g_autoptr(SightStepRequest) request = g_new0 (SightStepRequest, 1);
  SightSecrets *secrets = sight_project_get_secrets (project);

  request->options = options;
  request->instruction = instruction;
  if (!sight_budget_resolve (project, options, test_agent, remaining_test_ms,
                             &request->limits, error))
    return NULL;
  request->model_instruction = sight_instruction_fill (instruction, options->params, secrets,
                                                       error);
  if (request->model_instruction == NULL)
    return NULL;
  request->model_params = sight_params_project (options->params, secrets);
  request->secret_names = sight_params_list_secrets (options->params);
  return g_steal_pointer (&request);
}

SightStepRequest *
sight_step_request_new (SightProject   *project,
                        SightStepKind   kind,
                        const char     *instruction,
                        JsonObject     *options_json,
                        const char     *test_agent,
                        gint64          remaining_test_ms,
                        GError        **error)
{
  g_autofree char *nfc = NULL;
  SightStepOptions *options;

  g_return_val_if_fail (project != NULL, NULL);

  nfc = sight_instruction_normalize (instruction, -1, error);
  if (nfc == NULL)
    return NULL;
  options = sight_step_options_parse (kind, options_json, error);
  if (options == NULL)
    return NULL;
  return finish (project, options, g_steal_pointer (&nfc), test_agent, remaining_test_ms, error);
}

SightStepRequest *
sight_step_request_new_from_step (SightProject   *project,
                                  JsonObject     *step,
                                  const char     *test_agent,
                                  gint64          remaining_test_ms,
                                  GError        **error)
{
  char *instruction = NULL;
  SightStepOptions *options;

  g_return_val_if_fail (project != NULL, NULL);
  g_return_val_if_fail (step != NULL, NULL);

  options = sight_step_options_parse_step (step, &instruction, error);
  if (options == NULL)
    return NULL;
  return finish (project, options, instruction, test_agent, remaining_test_ms, error);
}

SightStepRequest *
sight_step_request_new_direct (const char  *instruction,
                               JsonNode    *params,
                               guint        timeout_ms)
{
  SightStepRequest *request;

  g_return_val_if_fail (instruction != NULL, NULL);

  request = g_new0 (SightStepRequest, 1);
  request->direct = TRUE;
  request->instruction = g_strdup (instruction);
  request->params = params != NULL ? json_node_copy (params) : NULL;
  request->secret_names = g_new0 (char *, 1);
  request->limits.timeout_ms = timeout_ms;
  request->limits.vision = SIGHT_VISION_OFF;
  /* a failed expectation keeps its evidence like an assert (sight_step_shot_for ()) */
  request->limits.screenshot = TRUE;
  return request;
}
