/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-mcp-step-tools"

#include "config.h"

#include "sight-mcp-runner-private.h"

#include "sight-agent.h"
#include "sight-error.h"
#include "sight-session-agent.h"
#include "sight-session.h"
#include "sight-step-executor.h"

/* act, assert, wait_for and extract on an open session: the agent's step,
 * with the tool's arguments as the step's options (beyond the service
 * spec). A passing step is a result; a failing one is isError with the
 * agent's code ("[ASSERTION_FAILED] …") and the whole step in
 * structuredContent.error.details. Every string of a step result is already
 * redacted of secrets. */

typedef struct {
  const char    *tool;
  SightStepKind  kind;
  const char    *instruction_argument;
} StepTool;

static const StepTool step_tools[] = {
  { "act", SIGHT_STEP_ACT, "instruction" },
  { "assert", SIGHT_STEP_ASSERT, "assertion" },
  { "wait_for", SIGHT_STEP_WAIT_FOR, "condition" },
  { "extract", SIGHT_STEP_EXTRACT, "instruction" },
};

typedef struct {
  SightMcpToolCall *call;
  SightSession     *session;
} Step;

static void
step_free (Step *step)
{
  sight_session_release (step->session);
  g_clear_object (&step->session);
  g_clear_object (&step->call);
  g_free (step);
}

/* The step result in the tool's output shape: verdict, code, summary,
 * modelCalls, actions (the committed actions, one line each), usage, cache,
 * and judgment or value when the step has one. */
static JsonObject *
step_json (SightStepResult *result)
{
  g_autoptr(JsonNode) node = sight_step_result_to_json (result);
  JsonObject *object = json_object_ref (json_node_get_object (node));
  JsonNode *log = json_object_dup_member (object, "actionLog");

  json_object_remove_member (object, "actionLog");
  json_object_set_int_member (object, "actionCount", result->actions);
  if (log != NULL)
    json_object_set_member (object, "actions", log);
  else
    json_object_set_array_member (object, "actions", json_array_new ());
  return object;
}

static void
step_done_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  Step *step = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(SightStepResult) outcome = sight_step_execute_finish (result, &error);
  g_autoptr(JsonObject) structured = NULL;
  g_autofree char *text = NULL;

  if (outcome == NULL)
    {
      sight_mcp_tool_call_return_gerror (step->call, error);
      step_free (step);
      return;
    }
  structured = step_json (outcome);
  if (outcome->error != NULL)
    {
      const char *code = outcome->error->domain == SIGHT_ERROR
                         ? sight_error_code_to_string (outcome->error->code) : "INTERNAL";

      sight_mcp_tool_call_return_error (step->call, code, structured, "%s",
                                        outcome->error->message);
      step_free (step);
      return;
    }

  if (outcome->value != NULL)
    {
      g_autofree char *value = json_to_string (outcome->value, FALSE);

      text = g_strdup_printf ("%s passed: %s\nValue: %s",
                              sight_step_kind_to_string (outcome->kind),
                              outcome->summary ? outcome->summary : "", value);
    }
  else
    text = g_strdup_printf ("%s passed: %s (%u model call%s, %u action%s)",
                            sight_step_kind_to_string (outcome->kind),
                            outcome->summary ? outcome->summary : "",
                            outcome->model_calls, outcome->model_calls == 1 ? "" : "s",
                            outcome->actions, outcome->actions == 1 ? "" : "s");
  sight_mcp_tool_call_return_result (step->call, text, structured, FALSE);
  step_free (step);
}

static void
refuse (SightMcpToolCall *call,
        const GError     *error)
{
  if (g_error_matches (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT))
    sight_mcp_tool_call_return_error (call, "invalid_input", NULL, "%s", error->message);
  else if (error->domain == SIGHT_ERROR)
    sight_mcp_tool_call_return_error (call, sight_error_code_to_string (error->code), NULL, "%s",
                                      error->message);
  else
    sight_mcp_tool_call_return_gerror (call, error);
}

static void
step_tool_handler (SightMcpToolCall *call,
                   gpointer          user_data)
{
  const StepTool *info = user_data;
  JsonObject *args = sight_mcp_tool_call_get_arguments (call);
  const char *session_id = json_object_get_string_member (args, "sessionId");
  SightSession *session;
  SightAgent *agent;
  g_autoptr(JsonObject) options = json_object_new ();
  g_autoptr(SightStepRequest) request = NULL;
  g_autoptr(GError) error = NULL;
  JsonObjectIter iter;
  const char *name;
  JsonNode *value;
  Step *step;

  session = sight_session_registry_lookup (sight_session_registry_get_default (), session_id);
  if (session == NULL)
    {
      g_autofree char *safe = sight_text_sanitize (session_id, 100);

      sight_mcp_tool_call_return_error (call, "not_found", NULL, "No session %s", safe);
      return;
    }
  agent = sight_session_get_agent (session, &error);
  if (agent == NULL)
    {
      refuse (call, error);
      return;
    }

  /* Every other argument is an option of the step, by the spec's name. */
  json_object_iter_init (&iter, args);
  while (json_object_iter_next (&iter, &name, &value))
    if (!g_str_equal (name, "sessionId") && !g_str_equal (name, info->instruction_argument))
      json_object_set_member (options, name, json_node_copy (value));

  request = sight_step_request_new_for_kind (sight_agent_get_project (agent),
                                             sight_step_kind_to_string (info->kind),
                                             json_object_get_string_member (
                                               args, info->instruction_argument),
                                             options, NULL, -1, 0, &error);
  if (request == NULL || !sight_session_claim (session, info->tool, &error))
    {
      refuse (call, error);
      return;
    }

  /* A failed assertion keeps its evidence (sight_step_shot_for ()): the
   * session's screenshots are kept under its id, which the server chose. */
  {
    g_autofree char *evidence = g_build_filename (g_get_user_cache_dir (), "sightline", "evidence",
                                                  sight_session_get_id (session), NULL);

    sight_agent_set_evidence_dir (agent, evidence);
  }
  step = g_new0 (Step, 1);
  step->call = g_object_ref (call);
  step->session = g_object_ref (session);
  sight_step_execute_async (agent, g_steal_pointer (&request),
                            sight_mcp_tool_call_get_cancellable (call), step_done_cb, step);
}

void
_sight_mcp_step_tools_install (SightMcpRegistry *registry)
{
  for (guint i = 0; i < G_N_ELEMENTS (step_tools); i++)
    sight_mcp_registry_set_handler (registry, step_tools[i].tool, step_tool_handler,
                                    (gpointer) &step_tools[i], NULL);
}
