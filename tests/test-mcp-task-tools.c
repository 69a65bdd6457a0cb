/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-mcp-task-tools"

#include "config.h"

#include "mcp-agent-test-common.h"
#include "sight-store.h"

/* Tasks through MCP (run_task, get_task, get_report of a task) and the
 * task command, with the scripted model, real WebKitGTK and the demo site. */

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
  /* The scripted provider reports no cost: the price table's figure is
   * Sightline's estimate, and says so. */
  g_assert_false (json_object_has_member (step, "costMicros"));
  g_assert_false (json_object_has_member (task, "costMicros"));
  g_assert_cmpint (json_object_get_int_member (step, "estimatedCostMicros"), >, 0);
  g_assert_cmpint (json_object_get_int_member (task, "estimatedCostMicros"), >,
                   json_object_get_int_member (step, "estimatedCostMicros"));
  g_assert_cmpstr (json_object_get_string_member (task, "tokenAccounting"), ==, "provider");
  text = text_of (ran);
  g_assert_true (g_str_has_prefix (text, "Task finished (done) in 1 step, ~$"));
  g_assert_nonnull (strstr (text, " estimated, "));
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

  /* The page it stopped on is kept after its last step, as a test's failed
   * step's is: the tree and the screenshot the report shows. */
  {
    g_autoptr(GError) error = NULL;
    SightStore *store = sight_store_get_default (&error);
    SightRunData *data;
    const SightObservationRecord *after = NULL;

    g_assert_no_error (error);
    data = sight_store_load_run (store, task_id, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (data->steps->len, ==, 1);
    for (guint i = 0; i < data->observations->len; i++)
      {
        const SightObservationRecord *o = g_ptr_array_index (data->observations, i);

        if (o->step_index == 0 && g_strcmp0 (o->phase, "after") == 0)
          after = o;
      }
    g_assert_nonnull (after);
    g_assert_nonnull (after->screenshot);
    g_assert_nonnull (after->tree_json);
    g_assert_nonnull (strstr (after->url, "/pricing"));
    sight_run_data_free (data);
  }

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

static void
communicated_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

/* sightline task URL GOAL runs the same task from the command line. */
static void
test_task_command (void)
{
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) record = NULL;
  g_autofree char *url = g_strconcat (sight_demo_site_get_url (site), "login", NULL);
  g_autofree char *out = NULL;
  GAsyncResult *result = NULL;
  JsonObject *task;

  sight_scripted_model_push (model, "{\"tool_calls\": [{\"name\": \"navigate\", "
                             "\"arguments\": {\"url\": \"/pricing\"}}]}");
  sight_scripted_model_push (model, "{\"tool_calls\": [{\"name\": \"done\", \"arguments\": "
                             "{\"verdict\": \"pass\", \"summary\": \"The heading is Pricing.\"}}]}");
  process = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, g_getenv ("SIGHTLINE_BIN"),
                              "task", url, "Open the pricing page", "--max-steps", "3", "--json",
                              NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8_async (process, NULL, NULL, communicated_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_subprocess_communicate_utf8_finish (process, result, &out, NULL, &error);
  g_object_unref (result);
  g_assert_no_error (error);
  g_assert_cmpint (g_subprocess_get_exit_status (process), ==, 0);
  record = json_from_string (out, &error);
  g_assert_no_error (error);
  task = json_node_get_object (record);
  g_assert_cmpstr (json_object_get_string_member (task, "stoppedBy"), ==, "done");
  g_assert_cmpstr (json_object_get_string_member (task, "answer"), ==, "The heading is Pricing.");
  g_assert_cmpstr (json_object_get_string_member (
                     json_array_get_object_element (json_object_get_array_member (task, "steps"),
                                                    0), "op"), ==, "navigate");
  g_assert_cmpuint (sight_scripted_model_get_unexpected (model), ==, 0);
}

int
main (int    argc,
      char **argv)
{
  mcp_agent_test_init (&argc, &argv);
  g_test_add_func ("/mcp-task-tools/task-done", test_task_done);
  g_test_add_func ("/mcp-task-tools/task-budget", test_task_budget);
  g_test_add_func ("/mcp-task-tools/task-running", test_task_running);
  g_test_add_func ("/mcp-task-tools/task-refusals", test_task_refusals);
  g_test_add_func ("/mcp-task-tools/task-command", test_task_command);
  return mcp_agent_test_run ();
}
