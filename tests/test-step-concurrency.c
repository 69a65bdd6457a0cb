/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Steps of one process running at the same time (issue #21, one async model):
 * an act (scripted model) on one page and a direct step on a second run while a
 * waitFor holds a third page, which is closed in the middle of its step. Each
 * step is a chain of callbacks, so none waits inside another: the act and the
 * direct step end on their own, and the waitFor ends because its page went away,
 * long before its own timeout. Run under ASan: build-aux/test.sh --sanitize
 * step-concurrency. */

#include "agent-test-common.h"

#include "sight-direct-run.h"

static const char act_html[] =
  "<!doctype html><title>Act</title><main>"
  "<button onclick=\"document.getElementById('s').textContent = 'Pressed'\">Press me</button>"
  "<p id=s role=status></p></main>";

static const char direct_html[] =
  "<!doctype html><title>Direct</title><main>"
  "<button onclick=\"document.getElementById('s').textContent = 'Saved'\">Save</button>"
  "<p id=s role=status></p></main>";

static const char wait_html[] =
  "<!doctype html><title>Upload</title><main><h1>Upload</h1>"
  "<p role=status>Uploading, 40%</p></main>";

/* The waitFor's own deadline: the test closes its page well before. */
#define WAIT_TIMEOUT_MS 30000

typedef struct {
  GAsyncResult *result;
  gint64        ended_at;
} Ended;

static void
ended_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  Ended *ended = user_data;

  ended->result = g_object_ref (result);
  ended->ended_at = g_get_monotonic_time ();
}

static gboolean
deadline_cb (gpointer user_data)
{
  *(gboolean *) user_data = TRUE;
  return G_SOURCE_REMOVE;
}

static Fixture
fixture_with_own_page (const char *path)
{
  Fixture f = { 0 };
  g_autoptr(GError) error = NULL;

  f.model = sight_scripted_model_new (0, &error);
  g_assert_no_error (error);
  f.project = project_new (f.model, NULL);
  f.page = sight_web_page_new ();
  sight_web_page_set_viewport (f.page, 1024, 640, 1.0);
  fixture_load (&f, path);
  f.agent = sight_agent_new (f.project, f.page);
  f.evidence_dir = g_dir_make_tmp ("sight-concurrency-XXXXXX", &error);
  g_assert_no_error (error);
  return f;
}

static SightStepRequest *
request_new (Fixture       *f,
             SightStepKind  kind,
             const char    *instruction,
             const char    *options_json)
{
  g_autoptr(JsonNode) options = json_from_string (options_json, NULL);
  g_autoptr(GError) error = NULL;
  SightStepRequest *request;

  request = sight_step_request_new (f->project, kind, instruction, json_node_get_object (options),
                                    NULL, -1, &error);
  g_assert_no_error (error);
  return request;
}

static char *
status_text (Fixture *f)
{
  return page_eval_string (f, "document.getElementById ('s').textContent");
}

static void
test_concurrent_steps (void)
{
  Fixture act = fixture_with_own_page ("/act");
  Fixture direct = fixture_with_own_page ("/direct");
  Fixture wait = fixture_with_own_page ("/wait");
  g_autoptr(GError) error = NULL;
  g_autoptr(SightStepResult) act_result = NULL;
  g_autoptr(SightStepResult) wait_result = NULL;
  g_autofree char *summary = NULL;
  g_autofree char *ref = find_ref (&act, "button", "Press me");
  g_autofree char *pressed = NULL;
  g_autofree char *saved = NULL;
  Ended act_ended = { NULL, 0 }, direct_ended = { NULL, 0 }, wait_ended = { NULL, 0 };
  gboolean expired = FALSE;
  guint deadline;
  gint64 closed_at;

  /* The act takes its time: a slow first answer, a click, then done. */
  sight_scripted_model_push_printf (act.model,
                                    "{\"delay_ms\": 400, \"tool_calls\": [{\"name\": \"click\", "
                                    "\"arguments\": {\"ref\": \"%s\"}}]}", ref);
  sight_scripted_model_push (act.model,
                             "{\"tool_calls\": [{\"name\": \"done\", \"arguments\": "
                             "{\"verdict\": \"pass\", \"summary\": \"Pressed it.\"}}]}");
  /* The upload never completes: the waitFor judges false until it ends. */
  g_assert_true (sight_scripted_model_load_script (wait.model,
                                                   "{\"responses\": [], \"default\": {\"json\": "
                                                   "{\"verdict\": false, \"explanation\": "
                                                   "\"still uploading\", \"injection\": null}}}",
                                                   &error));
  g_assert_no_error (error);

  /* The act opens first: with nested waits, the waitFor opening next would run
   * inside it and hold the act's end until the waitFor's own end. */
  sight_agent_run_async (act.agent,
                         request_new (&act, SIGHT_STEP_ACT, "Press the button", "{}"),
                         NULL, ended_cb, &act_ended);
  sight_agent_run_async (wait.agent,
                         request_new (&wait, SIGHT_STEP_WAIT_FOR, "the upload reports completion",
                                      "{\"timeout\": 30000, \"interval\": 200}"),
                         NULL, ended_cb, &wait_ended);
  sight_direct_step_run_async (direct.page, "click \"Save\"", NULL, NULL, 20000, NULL, ended_cb,
                               &direct_ended);

  deadline = g_timeout_add (WAIT_TIMEOUT_MS * 2, deadline_cb, &expired);
  while (!expired && (act_ended.result == NULL || direct_ended.result == NULL))
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (expired);
  /* Both ended while the waitFor still runs. */
  g_assert_null (wait_ended.result);

  /* Its page closes under it, as a window's page does when the window goes. */
  closed_at = g_get_monotonic_time ();
  g_object_run_dispose (G_OBJECT (wait.page));
  while (!expired && wait_ended.result == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (expired);
  g_source_remove (deadline);

  act_result = sight_agent_run_finish (act.agent, act_ended.result, &error);
  g_assert_no_error (error);
  g_assert_true (sight_step_result_passed (act_result));
  g_assert_cmpuint (act_result->model_calls, ==, 2);
  g_assert_cmpuint (act_result->actions, ==, 1);
  pressed = status_text (&act);
  g_assert_cmpstr (pressed, ==, "Pressed");

  summary = sight_direct_step_run_finish (direct.page, direct_ended.result, &error);
  g_assert_no_error (error);
  g_assert_nonnull (summary);
  saved = status_text (&direct);
  g_assert_cmpstr (saved, ==, "Saved");

  /* The waitFor ended because its page was closed, not at its deadline, and
   * only after the other two. */
  wait_result = sight_agent_run_finish (wait.agent, wait_ended.result, &error);
  g_assert_nonnull (wait_result);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE);
  g_assert_cmpint (wait_ended.ended_at, >=, closed_at);
  g_assert_cmpint (act_ended.ended_at, <=, closed_at);
  g_assert_cmpint (direct_ended.ended_at, <=, closed_at);
  g_assert_cmpint ((wait_ended.ended_at - closed_at) / 1000, <, WAIT_TIMEOUT_MS / 2);
  g_assert_cmpuint (wait_result->model_calls, >=, 1);
  g_assert_cmpuint (sight_scripted_model_get_unexpected (act.model), ==, 0);

  g_clear_object (&act_ended.result);
  g_clear_object (&direct_ended.result);
  g_clear_object (&wait_ended.result);
  fixture_tear_down (&act);
  fixture_tear_down (&direct);
  fixture_tear_down (&wait);
}

typedef struct {
  SightAgent *agent;
  gint64      stopped_at;
} Stopping;

static gboolean
stop_cb (gpointer user_data)
{
  Stopping *stopping = user_data;

  stopping->stopped_at = g_get_monotonic_time ();
  sight_agent_stop (stopping->agent, "stopped by the test");
  return G_SOURCE_REMOVE;
}

/* Stops the step a moment after its first judgment, while it pauses. */
static void
judged_cb (SightAgent *agent,
           guint       n,
           gboolean    ok,
           Stopping   *stopping)
{
  g_timeout_add (300, stop_cb, stopping);
}

static void
cancelled_cb (SightAgent  *agent,
              const char  *reason,
              char       **out)
{
  g_free (*out);
  *out = g_strdup (reason);
}

/* sight_agent_stop() fires the step's one cancellable: a waitFor pausing
 * between its observations (a timeout source) ends at once, not at its
 * interval's end. */
static void
test_stop_while_waiting (void)
{
  Fixture wait = fixture_with_own_page ("/wait");
  g_autoptr(GError) error = NULL;
  g_autoptr(SightStepResult) result = NULL;
  g_autofree char *reason = NULL;
  Ended ended = { NULL, 0 };
  Stopping stopping = { wait.agent, 0 };
  gboolean expired = FALSE;
  guint deadline;

  g_assert_true (sight_scripted_model_load_script (wait.model,
                                                   "{\"responses\": [], \"default\": {\"json\": "
                                                   "{\"verdict\": false, \"explanation\": "
                                                   "\"still uploading\", \"injection\": null}}}",
                                                   &error));
  g_assert_no_error (error);
  g_signal_connect (wait.agent, "model-call-finished", G_CALLBACK (judged_cb), &stopping);
  g_signal_connect (wait.agent, "step-cancelled", G_CALLBACK (cancelled_cb), &reason);
  sight_agent_run_async (wait.agent,
                         request_new (&wait, SIGHT_STEP_WAIT_FOR, "the upload reports completion",
                                      "{\"timeout\": 30000, \"interval\": 20000}"),
                         NULL, ended_cb, &ended);
  deadline = g_timeout_add (WAIT_TIMEOUT_MS, deadline_cb, &expired);
  while (!expired && ended.result == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (expired);
  g_source_remove (deadline);

  result = sight_agent_run_finish (wait.agent, ended.result, &error);
  g_assert_null (result);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpstr (error->message, ==, "stopped by the test");
  g_assert_cmpstr (reason, ==, "stopped by the test");
  g_assert_cmpint (stopping.stopped_at, >, 0);
  /* well inside the 20 s interval */
  g_assert_cmpint ((ended.ended_at - stopping.stopped_at) / 1000, <, 5000);
  g_assert_cmpuint (sight_scripted_model_get_request_count (wait.model), ==, 1);

  g_clear_object (&ended.result);
  fixture_tear_down (&wait);
}

int
main (int    argc,
      char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_unsetenv ("SIGHTLINE_MODEL");
  g_unsetenv ("OPENAI_API_KEY");
  site_start ();
  site_add ("/act", act_html);
  site_add ("/direct", direct_html);
  site_add ("/wait", wait_html);

  g_test_add_func ("/step-concurrency/act-direct-and-a-closed-page", test_concurrent_steps);
  g_test_add_func ("/step-concurrency/stop-while-waiting", test_stop_while_waiting);
  return g_test_run ();
}
