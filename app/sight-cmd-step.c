/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-cmd-step"

#include "config.h"

#include <glib/gi18n.h>

#include "sight-agent.h"
#include "sight-cli.h"
#include "sight-cli-args.h"
#include "sight-commands.h"
#include "sight-error.h"
#include "sight-json.h"
#include "sight-page-guard.h"
#include "sight-project.h"
#include "sight-step-executor.h"
#include "sight-step-request.h"

/* sightline act|assert|wait-for|extract URL INSTRUCTION: one agent step on a page,
 * headless, with the project file found from the current folder. */

#define LOAD_TIMEOUT_MS 30000

static int
report (GError *error)
{
  int status = sight_cli_report_error (error);

  g_error_free (error);
  return status;
}

static int
run_step (SightStepKind   kind,
          const char     *command,
          const char     *usage,
          int             argc,
          char          **argv)
{
  g_autofree char *params = NULL;
  g_autofree char *schema_path = NULL;
  g_autofree char *agent_name = NULL;
  g_autofree char *vision = NULL;
  g_autofree char *cwd = g_get_current_dir ();
  g_autofree char *evidence = NULL;
  int timeout_ms = 0;
  int interval_ms = 0;
  int max_steps = 0;
  int max_model_calls = 0;
  gboolean json = FALSE;
  int status = 0;
  GError *error = NULL;
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonNode) options = NULL;
  g_autoptr(SightProject) project = NULL;
  g_autoptr(SightWebPage) page = NULL;
  g_autoptr(SightAgent) agent = NULL;
  g_autoptr(SightStepResult) result = NULL;
  g_autoptr(GAsyncResult) load = NULL;
  g_autoptr(GAsyncResult) ran = NULL;
  SightStepRequest *request;
  GOptionEntry entries[] = {
    { "params", 0, 0, G_OPTION_ARG_STRING, &params,
      N_("Params as a JSON object; a secret is {\"secret\": NAME}"), "JSON" },
    { "schema", 0, 0, G_OPTION_ARG_FILENAME, &schema_path,
      N_("The JSON Schema of the value to extract"), "FILE" },
    { "agent", 0, 0, G_OPTION_ARG_STRING, &agent_name,
      N_("The agent of sightline.json to use"), "NAME" },
    { "vision", 0, 0, G_OPTION_ARG_STRING, &vision,
      N_("What the model is shown: false (off), true (on) or only"), "MODE" },
    { "timeout", 0, 0, G_OPTION_ARG_INT, &timeout_ms,
      N_("The step's timeout in milliseconds"), "MS" },
    { "interval", 0, 0, G_OPTION_ARG_INT, &interval_ms,
      N_("wait-for: milliseconds between observations (100-60000)"), "MS" },
    { "max-steps", 0, 0, G_OPTION_ARG_INT, &max_steps,
      N_("act: lower the action budget"), "N" },
    { "max-model-calls", 0, 0, G_OPTION_ARG_INT, &max_model_calls,
      N_("act, wait-for: lower the model-call budget"), "N" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json,
      N_("Print the step result as JSON"), NULL },
    { NULL }
  };

  if (!sight_cli_parse (command, usage, entries, &argc, &argv, &status))
    return status;
  if (argc != 3)
    return sight_cli_usage_error (command, _("expected a URL and an instruction"));

  /* Options by the spec's names; the step request checks them all, so a flag given
   * to a method that does not take it fails as that method's call would. */
  json_builder_begin_object (b);
  if (params != NULL)
    {
      g_autoptr(JsonNode) node = sight_json_parse (params, -1, SIGHT_JSON_MAX_DEPTH, &error);

      if (node == NULL)
        {
          g_autoptr(GError) wrapped = g_error_new (SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                                                   "--params: %s", error->message);
          g_clear_error (&error);
          return sight_cli_report_error (wrapped);
        }
      json_builder_set_member_name (b, "params");
      json_builder_add_value (b, g_steal_pointer (&node));
    }
  if (schema_path != NULL)
    {
      g_autoptr(JsonNode) schema = sight_json_parse_file (schema_path, SIGHT_JSON_MAX_DEPTH, &error);

      if (schema == NULL)
        {
          g_autoptr(GError) wrapped = g_error_new (SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                                                   "--schema: %s", error->message);
          g_clear_error (&error);
          return sight_cli_report_error (wrapped);
        }
      json_builder_set_member_name (b, "schema");
      json_builder_add_value (b, g_steal_pointer (&schema));
    }
  if (agent_name != NULL)
    {
      json_builder_set_member_name (b, "agent");
      json_builder_add_string_value (b, agent_name);
    }
  if (vision != NULL)
    {
      json_builder_set_member_name (b, "vision");
      if (g_str_equal (vision, "true") || g_str_equal (vision, "on"))
        json_builder_add_boolean_value (b, TRUE);
      else if (g_str_equal (vision, "false") || g_str_equal (vision, "off"))
        json_builder_add_boolean_value (b, FALSE);
      else
        json_builder_add_string_value (b, vision);
    }
  if (timeout_ms != 0)
    {
      json_builder_set_member_name (b, "timeout");
      json_builder_add_int_value (b, timeout_ms);
    }
  if (interval_ms != 0)
    {
      json_builder_set_member_name (b, "interval");
      json_builder_add_int_value (b, interval_ms);
    }
  if (max_steps != 0)
    {
      json_builder_set_member_name (b, "maxSteps");
      json_builder_add_int_value (b, max_steps);
    }
  if (max_model_calls != 0)
    {
      json_builder_set_member_name (b, "maxModelCalls");
      json_builder_add_int_value (b, max_model_calls);
    }
  json_builder_end_object (b);
  options = json_builder_get_root (b);

  project = sight_project_load_for (cwd, &error);
  if (project == NULL)
    return report (error);
  request = sight_step_request_new (project, kind, argv[2], json_node_get_object (options),
                                    NULL, -1, &error);
  if (request == NULL)
    return report (error);

  page = sight_web_page_new ();
  sight_page_guard (page, project, argv[1], NULL, NULL);
  sight_web_page_set_viewport (page, 1280, 720, 1.0);
  sight_web_page_load_async (page, argv[1], SIGHT_WAIT_UNTIL_LOAD,
                             (guint) MIN (LOAD_TIMEOUT_MS, request->limits.timeout_ms), NULL,
                             sight_cli_result_cb, &load);
  if (!sight_web_page_load_finish (page, sight_cli_wait (&load), &error))
    {
      sight_step_request_free (request);
      return report (error);
    }

  agent = sight_agent_new (project, page);
  evidence = g_build_filename (g_get_user_cache_dir (), "sightline", "evidence", NULL);
  sight_agent_set_evidence_dir (agent, evidence);
  sight_step_execute_async (agent, request, NULL, sight_cli_result_cb, &ran);
  result = sight_step_execute_finish (sight_cli_wait (&ran), &error);
  if (result == NULL)
    return report (error);

  if (json)
    {
      g_autoptr(JsonNode) node = sight_step_result_to_json (result);
      g_autofree char *text = json_to_string (node, TRUE);

      g_print ("%s\n", text);
    }
  else if (error == NULL)
    {
      if (result->value != NULL)
        {
          g_autofree char *text = json_to_string (result->value, TRUE);

          g_print ("%s\n", text);
        }
      else
        g_print ("%s\n", result->summary ? result->summary : "pass");
    }

  if (error != NULL)
    {
      if (json)
        {
          status = sight_error_exit_status (error);
          g_error_free (error);
          return status;
        }
      if (result->screenshot_path != NULL)
        g_printerr (_("Screenshot: %s\n"), result->screenshot_path);
      return report (error);
    }
  return 0;
}

int
sight_cmd_act (int    argc,
               char **argv)
{
  return run_step (SIGHT_STEP_ACT, "act", _("URL INSTRUCTION — carry out a task on a page"),
                   argc, argv);
}

int
sight_cmd_assert (int    argc,
                  char **argv)
{
  return run_step (SIGHT_STEP_ASSERT, "assert", _("URL ASSERTION — judge a page once"),
                   argc, argv);
}

int
sight_cmd_wait_for (int    argc,
                    char **argv)
{
  return run_step (SIGHT_STEP_WAIT_FOR, "wait-for",
                   _("URL CONDITION — observe a page until a condition holds"), argc, argv);
}

int
sight_cmd_extract (int    argc,
                   char **argv)
{
  return run_step (SIGHT_STEP_EXTRACT, "extract",
                   _("URL INSTRUCTION — read a value that follows --schema from a page"),
                   argc, argv);
}
