/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-mcp-agent-tools"

#include "config.h"

#include <glib/gstdio.h>

#include "mcp-test-common.h"
#include "sight-demo-site.h"
#include "sight-observation.h"
#include "sight-scripted-model.h"
#include "sight-session.h"

/* The agent's steps on an open session through MCP (act, assert, wait_for,
 * extract), with the scripted model, real WebKitGTK and the demo site. */

static SightDemoSite *site;
static SightScriptedModel *model;

static void
result_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

static char *
find_ref_in (JsonNode   *node,
             const char *role,
             const char *name)
{
  JsonObject *o;
  JsonArray *children;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return NULL;
  o = json_node_get_object (node);
  if (g_strcmp0 (json_object_get_string_member_with_default (o, "role", NULL), role) == 0 &&
      g_strcmp0 (json_object_get_string_member_with_default (o, "name", NULL), name) == 0)
    return g_strdup (json_object_get_string_member (o, "ref"));
  children = json_object_has_member (o, "children")
             ? json_object_get_array_member (o, "children") : NULL;
  for (guint i = 0; children != NULL && i < json_array_get_length (children); i++)
    {
      char *ref = find_ref_in (json_array_get_element (children, i), role, name);

      if (ref != NULL)
        return ref;
    }
  return NULL;
}

/* The ref the agent will see for @role "@name" on the session's page. */
static char *
session_ref (const char *session_id,
             const char *role,
             const char *name)
{
  SightSession *s = sight_session_registry_lookup (sight_session_registry_get_default (),
                                                   session_id);
  g_autoptr(GError) error = NULL;
  g_autoptr(SightObservation) observation = NULL;
  GAsyncResult *result = NULL;
  char *ref;

  g_assert_nonnull (s);
  sight_observation_capture_async (sight_session_get_page (s), SIGHT_OBSERVE_DEFAULT, 10000, NULL,
                                   result_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  observation = sight_observation_capture_finish (result, &error);
  g_assert_no_error (error);
  g_object_unref (result);
  ref = find_ref_in (sight_observation_get_tree (observation), role, name);
  g_assert_nonnull (ref);
  return ref;
}

static char *
open_session (const char *path)
{
  g_autoptr(JsonObject) created = call ("create_session", "{\"startUrl\":\"%s%s\"}",
                                        sight_demo_site_get_url (site), path);

  g_assert_false (is_error (created));
  return g_strdup (json_object_get_string_member (structured (created), "id"));
}

static void
test_act (void)
{
  g_autofree char *id = open_session ("login");
  g_autofree char *pricing = session_ref (id, "link", "Pricing");
  g_autoptr(JsonObject) acted = NULL;
  g_autoptr(JsonObject) busy_free = NULL;
  JsonArray *actions;
  SightSession *s;

  sight_scripted_model_push_printf (model, "{\"tool_calls\": [{\"name\": \"click\", "
                                    "\"arguments\": {\"ref\": \"%s\"}}]}", pricing);
  sight_scripted_model_push (model, "{\"tool_calls\": [{\"name\": \"done\", \"arguments\": "
                             "{\"verdict\": \"pass\", \"summary\": \"The pricing page is open.\"}}]}");
  acted = call ("act", "{\"sessionId\":\"%s\",\"instruction\":\"open the pricing page\","
                       "\"maxSteps\":5}", id);
  g_assert_false (is_error (acted));
  g_assert_cmpstr (json_object_get_string_member (structured (acted), "verdict"), ==, "pass");
  g_assert_cmpstr (json_object_get_string_member (structured (acted), "summary"), ==,
                   "The pricing page is open.");
  g_assert_cmpint (json_object_get_int_member (structured (acted), "modelCalls"), ==, 2);
  actions = json_object_get_array_member (structured (acted), "actions");
  g_assert_cmpuint (json_array_get_length (actions), ==, 1);
  g_assert_true (g_str_has_prefix (json_array_get_string_element (actions, 0), "click"));
  g_assert_true (g_str_has_prefix (text_of (acted), "act passed: The pricing page is open."));
  s = sight_session_registry_lookup (sight_session_registry_get_default (), id);
  g_assert_true (g_str_has_suffix (sight_web_page_get_uri (sight_session_get_page (s)), "/pricing"));

  /* The session is free again for the next step. */
  sight_scripted_model_push (model, "{\"tool_calls\": [{\"name\": \"done\", \"arguments\": "
                             "{\"verdict\": \"fail\", \"summary\": \"There is no cart.\"}}]}");
  busy_free = call ("act", "{\"sessionId\":\"%s\",\"instruction\":\"open the cart\"}", id);
  g_assert_true (is_error (busy_free));
  g_assert_cmpstr (error_code (busy_free), ==, "ACTION_FAILED");
  g_assert_true (g_str_has_prefix (text_of (busy_free), "[ACTION_FAILED] There is no cart."));
  g_assert_cmpstr (json_object_get_string_member (
                     json_object_get_object_member (
                       json_object_get_object_member (structured (busy_free), "error"),
                       "details"), "verdict"), ==, "fail");
  g_assert_cmpuint (sight_scripted_model_get_unexpected (model), ==, 0);
  json_object_unref (call ("stop_session", "{\"sessionId\":\"%s\"}", id));
}

static void
test_judgments (void)
{
  g_autofree char *id = open_session ("pricing");
  g_autoptr(JsonObject) holds = NULL;
  g_autoptr(JsonObject) fails = NULL;
  g_autoptr(JsonObject) waited = NULL;
  g_autoptr(JsonObject) extracted = NULL;
  JsonObject *value;

  sight_scripted_model_push (model, "{\"json\": {\"verdict\": true, \"explanation\": "
                             "\"The heading reads Pricing.\", \"injection\": null}}");
  holds = call ("assert", "{\"sessionId\":\"%s\",\"assertion\":\"the heading says Pricing\"}", id);
  g_assert_false (is_error (holds));
  g_assert_cmpstr (json_object_get_string_member (structured (holds), "verdict"), ==, "pass");

  sight_scripted_model_push (model, "{\"json\": {\"verdict\": false, \"explanation\": "
                             "\"No trial badge is shown.\", \"injection\": null}}");
  fails = call ("assert", "{\"sessionId\":\"%s\",\"assertion\":\"a trial badge is shown\","
                          "\"screenshot\":false}", id);
  g_assert_true (is_error (fails));
  g_assert_cmpstr (error_code (fails), ==, "ASSERTION_FAILED");
  g_assert_nonnull (strstr (text_of (fails), "No trial badge is shown."));

  sight_scripted_model_push (model, "{\"json\": {\"verdict\": true, \"explanation\": "
                             "\"Three plans are listed.\", \"injection\": null}}");
  waited = call ("wait_for", "{\"sessionId\":\"%s\",\"condition\":\"the plans are listed\","
                             "\"interval\":100,\"timeout\":10000}", id);
  g_assert_false (is_error (waited));
  g_assert_true (json_object_get_boolean_member (structured (waited), "judgment"));

  sight_scripted_model_push (model, "{\"json\": {\"plan\": \"Team\"}}");
  extracted = call ("extract", "{\"sessionId\":\"%s\",\"instruction\":\"the recommended plan\","
                               "\"schema\":{\"type\":\"object\",\"required\":[\"plan\"],"
                               "\"properties\":{\"plan\":{\"type\":\"string\"}}}}", id);
  g_assert_false (is_error (extracted));
  value = json_object_get_object_member (structured (extracted), "value");
  g_assert_cmpstr (json_object_get_string_member (value, "plan"), ==, "Team");
  g_assert_nonnull (strstr (text_of (extracted), "\"plan\":\"Team\""));
  g_assert_cmpuint (sight_scripted_model_get_unexpected (model), ==, 0);
  json_object_unref (call ("stop_session", "{\"sessionId\":\"%s\"}", id));
}

static void
test_refusals (void)
{
  g_autofree char *id = open_session ("pricing");
  g_autoptr(JsonObject) unknown = call ("act", "{\"sessionId\":\"sess_nope\","
                                               "\"instruction\":\"click\"}");
  g_autoptr(JsonObject) unknown_agent = NULL;
  g_autoptr(JsonObject) extra = NULL;
  g_autoptr(JsonObject) ended = NULL;
  guint requests = sight_scripted_model_get_request_count (model);

  g_assert_true (is_error (unknown));
  g_assert_cmpstr (error_code (unknown), ==, "not_found");

  unknown_agent = call ("assert", "{\"sessionId\":\"%s\",\"assertion\":\"x\","
                                  "\"agent\":\"nobody\"}", id);
  g_assert_true (is_error (unknown_agent));
  g_assert_cmpstr (error_code (unknown_agent), ==, "invalid_input");

  extra = call ("extract", "{\"sessionId\":\"%s\",\"instruction\":\"x\",\"schema\":{},"
                           "\"maxSteps\":3}", id);
  g_assert_true (is_error (extra));
  g_assert_cmpstr (error_code (extra), ==, "invalid_input");

  json_object_unref (call ("stop_session", "{\"sessionId\":\"%s\"}", id));
  ended = call ("assert", "{\"sessionId\":\"%s\",\"assertion\":\"x\"}", id);
  g_assert_true (is_error (ended));
  g_assert_cmpstr (error_code (ended), ==, "invalid_input");
  g_assert_nonnull (strstr (text_of (ended), "has ended"));
  /* None of these opened a step. */
  g_assert_cmpuint (sight_scripted_model_get_request_count (model), ==, requests);
}

static JsonObject *
task_of (JsonObject *result)
{
  return json_object_get_object_member (structured (result), "task");
}

/* A task that opens its own session, clicks, concludes, and closes it. */
static void
test_task_done (void)
{
  g_autofree char *probe = open_session ("login");
  g_autofree char *pricing = session_ref (probe, "link", "Pricing");
  g_autoptr(JsonObject) ran = NULL;
  g_autoptr(JsonObject) report = NULL;
  JsonObject *task;
  JsonObject *step;
  JsonArray *notes;
  const char *text;
  SightSession *s;

  json_object_unref (call ("stop_session", "{\"sessionId\":\"%s\"}", probe));
  sight_scripted_model_push_printf (model, "{\"tool_calls\": [{\"name\": \"click\", "
                                    "\"arguments\": {\"ref\": \"%s\"}}]}", pricing);
  sight_scripted_model_push (model, "{\"tool_calls\": [{\"name\": \"done\", \"arguments\": "
                             "{\"verdict\": \"pass\", \"summary\": \"The heading is Pricing.\"}}]}");
  ran = call ("run_task", "{\"goal\":\"Open the pricing page and tell me its heading\","
                          "\"startUrl\":\"%slogin\",\"maxSteps\":5}",
              sight_demo_site_get_url (site));
  g_assert_false (is_error (ran));
  g_assert_true (json_object_get_boolean_member (structured (ran), "sessionClosed"));
  task = task_of (ran);
  g_assert_true (g_str_has_prefix (json_object_get_string_member (task, "taskId"), "tsk_"));
  g_assert_true (json_object_get_boolean_member (task, "ok"));
  g_assert_cmpstr (json_object_get_string_member (task, "stoppedBy"), ==, "done");
  g_assert_cmpstr (json_object_get_string_member (task, "answer"), ==, "The heading is Pricing.");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (task, "steps")), ==, 1);
  step = json_array_get_object_element (json_object_get_array_member (task, "steps"), 0);
  g_assert_cmpstr (json_object_get_string_member (step, "op"), ==, "click");
  g_assert_cmpstr (json_object_get_string_member (step, "ref"), ==, pricing);
  g_assert_true (json_object_get_boolean_member (step, "ok"));
  g_assert_cmpint (json_object_get_int_member (step, "ms"), >=, 0);
  g_assert_cmpint (json_object_get_int_member (step, "costMicros"), >, 0);
  g_assert_cmpint (json_object_get_int_member (task, "costMicros"), >,
                   json_object_get_int_member (step, "costMicros"));
  text = text_of (ran);
  g_assert_true (g_str_has_prefix (text, "Task finished (done) in 1 step, $"));
  g_assert_nonnull (strstr (text, "\nAnswer: The heading is Pricing."));
  g_assert_nonnull (strstr (text, " was closed."));
  g_assert_nonnull (strstr (text, json_object_get_string_member (task, "taskId")));
  s = sight_session_registry_lookup (sight_session_registry_get_default (),
                                     json_object_get_string_member (structured (ran), "sessionId"));
  g_assert_cmpint (sight_session_get_status (s), ==, SIGHT_SESSION_CLOSED);

  /* Its report is complete at once: the session log was saved. */
  report = call ("get_report", "{\"id\":\"%s\"}", json_object_get_string_member (task, "taskId"));
  g_assert_false (is_error (report));
  g_assert_cmpstr (json_object_get_string_member (structured (report), "verdict"), ==, "pass");
  g_assert_true (g_str_has_prefix (text_of (report),
                                   "Task \"Open the pricing page and tell me its heading\" "
                                   "finished in "));
  g_assert_nonnull (strstr (text_of (report), "the agent says it is done. 1 agent step, all ok."));
  notes = json_object_get_array_member (structured (report), "notes");
  g_assert_cmpuint (json_array_get_length (notes), ==, 0);
  g_assert_nonnull (json_object_get_string_member (
    json_object_get_object_member (structured (report), "findings"), "finalUrl"));
}

/* maxSteps runs out on a session kept open; get_task reads the task, and the
 * report lacks the log until the session ends. */
static void
test_task_budget (void)
{
  g_autoptr(JsonObject) ran = NULL;
  g_autoptr(JsonObject) read = NULL;
  g_autoptr(JsonObject) open_report = NULL;
  g_autoptr(JsonObject) closed_report = NULL;
  const char *session_id;
  const char *task_id;
  JsonObject *task;

  sight_scripted_model_push (model, "{\"tool_calls\": [{\"name\": \"navigate\", "
                             "\"arguments\": {\"url\": \"/pricing\"}}]}");
  sight_scripted_model_push (model, "{\"tool_calls\": [{\"name\": \"navigate\", "
                             "\"arguments\": {\"url\": \"/status\"}}]}");
  ran = call ("run_task", "{\"goal\":\"Look around\",\"startUrl\":\"%slogin\",\"maxSteps\":1,"
                          "\"keepOpen\":true}", sight_demo_site_get_url (site));
  g_assert_false (is_error (ran));
  g_assert_false (json_object_get_boolean_member (structured (ran), "sessionClosed"));
  task = task_of (ran);
  g_assert_false (json_object_get_boolean_member (task, "ok"));
  g_assert_cmpstr (json_object_get_string_member (task, "stoppedBy"), ==, "budget");
  g_assert_cmpstr (json_object_get_string_member (task, "limit"), ==, "maxSteps");
  g_assert_true (g_str_has_prefix (text_of (ran), "Task stopped (budget) in 1 step"));
  g_assert_nonnull (strstr (text_of (ran), "is still open"));
  session_id = json_object_get_string_member (structured (ran), "sessionId");
  task_id = json_object_get_string_member (task, "taskId");

  read = call ("get_task", "{\"sessionId\":\"%s\",\"waitSeconds\":0}", session_id);
  g_assert_false (is_error (read));
  g_assert_cmpstr (json_object_get_string_member (structured (read), "status"), ==, "finished");
  g_assert_cmpstr (json_object_get_string_member (structured (read), "taskId"), ==, task_id);
  g_assert_cmpstr (json_object_get_string_member (task_of (read), "id"), ==, task_id);
  g_assert_cmpstr (json_object_get_string_member (task_of (read), "goal"), ==, "Look around");
  g_assert_nonnull (json_object_get_string_member (task_of (read), "finishedAt"));

  open_report = call ("get_report", "{\"id\":\"%s\"}", task_id);
  g_assert_cmpstr (json_object_get_string_member (structured (open_report), "verdict"), ==,
                   "fail");
  g_assert_true (g_str_has_prefix (json_array_get_string_element (
                   json_object_get_array_member (structured (open_report), "notes"), 0),
                   "The session log is not available"));

  json_object_unref (call ("stop_session", "{\"sessionId\":\"%s\"}", session_id));
  closed_report = call ("get_report", "{\"id\":\"%s\"}", task_id);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (structured (closed_report),
                                                                         "notes")), ==, 0);
  g_assert_cmpuint (sight_scripted_model_get_unexpected (model), ==, 0);
}

/* A task longer than the wait comes back running; get_task waits for it. */
static void
test_task_running (void)
{
  g_autoptr(JsonObject) ran = NULL;
  g_autoptr(JsonObject) read = NULL;

  sight_scripted_model_push (model, "{\"delay_ms\": 2500, \"tool_calls\": [{\"name\": \"done\", "
                             "\"arguments\": {\"verdict\": \"pass\", \"summary\": \"Seen.\"}}]}");
  ran = call ("run_task", "{\"goal\":\"Look\",\"startUrl\":\"%spricing\",\"waitSeconds\":1}",
              sight_demo_site_get_url (site));
  g_assert_false (is_error (ran));
  g_assert_cmpstr (json_object_get_string_member (structured (ran), "status"), ==, "running");
  g_assert_false (json_object_get_boolean_member (structured (ran), "sessionClosed"));
  g_assert_true (g_str_has_prefix (json_object_get_string_member (structured (ran), "taskId"),
                                   "tsk_"));
  g_assert_nonnull (json_object_get_string_member (structured (ran), "note"));

  read = call ("get_task", "{\"sessionId\":\"%s\",\"taskId\":\"%s\",\"waitSeconds\":20}",
               json_object_get_string_member (structured (ran), "sessionId"),
               json_object_get_string_member (structured (ran), "taskId"));
  g_assert_false (is_error (read));
  g_assert_cmpstr (json_object_get_string_member (structured (read), "status"), ==, "finished");
  g_assert_cmpstr (json_object_get_string_member (task_of (read), "answer"), ==, "Seen.");
}

static void
test_task_refusals (void)
{
  const char *url = sight_demo_site_get_url (site);
  g_autofree char *id = open_session ("pricing");
  g_autoptr(JsonObject) both = call ("run_task", "{\"goal\":\"x\",\"sessionId\":\"%s\","
                                                 "\"startUrl\":\"%s\"}", id, url);
  g_autoptr(JsonObject) nowhere = call ("run_task", "{\"goal\":\"x\"}");
  g_autoptr(JsonObject) too_many = call ("run_task", "{\"goal\":\"x\",\"startUrl\":\"%s\","
                                                     "\"maxSteps\":51}", url);
  g_autoptr(JsonObject) unknown = call ("run_task", "{\"goal\":\"x\",\"sessionId\":\"sess_no\"}");
  g_autoptr(JsonObject) no_task = call ("get_task", "{\"sessionId\":\"%s\"}", id);
  g_autoptr(JsonObject) broken = NULL;

  g_assert_cmpstr (error_code (both), ==, "invalid_input");
  g_assert_nonnull (strstr (text_of (both), "startUrl"));
  g_assert_cmpstr (error_code (nowhere), ==, "invalid_input");
  g_assert_cmpstr (error_code (too_many), ==, "invalid_input");
  g_assert_cmpstr (error_code (unknown), ==, "not_found");
  g_assert_cmpstr (error_code (no_task), ==, "not_found");

  /* A model that cannot answer: the agent could not test, so isError. */
  sight_scripted_model_push (model, "{\"fault\": \"quota\"}");
  broken = call ("run_task", "{\"goal\":\"Look\",\"sessionId\":\"%s\"}", id);
  g_assert_true (is_error (broken));
  g_assert_cmpstr (json_object_get_string_member (task_of (broken), "stoppedBy"), ==, "error");
  g_assert_nonnull (strstr (text_of (broken), "Reason: "));
  /* The session was not the task's: it stays open. */
  g_assert_nonnull (strstr (text_of (broken), "is still open"));
  json_object_unref (call ("stop_session", "{\"sessionId\":\"%s\"}", id));
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *project = NULL;
  g_autofree char *project_path = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  /* Runs go to a store of the test's own; the project file in the same
   * folder points the default agent at the scripted model. */
  dir = g_dir_make_tmp ("sight-mcp-agent-tools-XXXXXX", &error);
  g_assert_no_error (error);
  g_setenv ("SIGHTLINE_DATA_DIR", dir, TRUE);
  g_unsetenv ("SIGHTLINE_MODEL");
  gtk_init ();

  model = sight_scripted_model_new (0, &error);
  g_assert_no_error (error);
  /* A model of the built-in price table, so steps have a cost. */
  project = g_strdup_printf ("{\"agents\": {\"default\": {\"model\": \"openai:gpt-4.1\","
                             " \"baseUrl\": \"%s\"}}}",
                             sight_scripted_model_get_openai_base_url (model));
  project_path = g_build_filename (dir, "sightline.json", NULL);
  g_file_set_contents (project_path, project, -1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_chdir (dir), ==, 0);

  site = sight_demo_site_new ();
  sight_demo_site_start (site, 0, &error);
  g_assert_no_error (error);
  mcp_start ();

  g_test_add_func ("/mcp-agent-tools/act", test_act);
  g_test_add_func ("/mcp-agent-tools/judgments", test_judgments);
  g_test_add_func ("/mcp-agent-tools/refusals", test_refusals);
  g_test_add_func ("/mcp-agent-tools/task-done", test_task_done);
  g_test_add_func ("/mcp-agent-tools/task-budget", test_task_budget);
  g_test_add_func ("/mcp-agent-tools/task-running", test_task_running);
  g_test_add_func ("/mcp-agent-tools/task-refusals", test_task_refusals);
  status = g_test_run ();

  mcp_stop ();
  sight_demo_site_stop (site);
  g_clear_object (&site);
  g_clear_object (&model);
  return status;
}
