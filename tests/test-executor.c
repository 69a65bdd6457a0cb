/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Custom executors (docs/executor.md): the project file's "executor", assert's
 * budget with one, and steps carried out by real programs over JSON-RPC on a
 * real page: the example executor (examples/executors/first-match.py) and
 * executors that hang, overspend, write garbage or exit (tests/executors/). */
#include "config.h"

#include "agent-test-common.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <signal.h>

#include "cli-test-common.h"
#include "sight-step-executor.h"

/* A member's sign-in: the greeting names who signed in, once a password was typed. */
static const char login_html[] =
  "<!doctype html><title>Members</title><h1>Sign in</h1>"
  "<p><label for=mail>Email</label> <input id=mail type=email autocomplete=username>"
  "<p><label for=pw>Password</label> <input id=pw type=password autocomplete=current-password>"
  "<p><button id=go type=button>Sign in</button> <button type=button>Help</button>"
  "<output id=s role=status></output>"
  "<script>go.onclick = () => { s.textContent = pw.value ? 'Welcome, ' + mail.value.split ('@')[0]"
  " : 'Type your password'; };</script>";

static char *example_executor;
static char *misbehave;
static char *workdir;

static char *
workdir_file (const char *name)
{
  return g_build_filename (workdir, name, NULL);
}

/* An agent with @mode of misbehave.py and @budget ("\"maxSteps\": 3", …). */
static char *
misbehaving_agent (const char *mode,
                   const char *budget)
{
  g_autofree char *file = workdir_file (mode);

  return g_strdup_printf ("\"%s\": {\"executor\": {\"command\": [\"python3\", \"%s\", \"%s\", \"%s\"]}%s%s}",
                          mode, misbehave, mode, file, budget ? ", " : "", budget ? budget : "");
}

static SightProject *
executor_project (void)
{
  g_autofree char *transcript = workdir_file ("transcript");
  g_autofree char *hang = misbehaving_agent ("hang", NULL);
  g_autofree char *budget = misbehaving_agent ("budget", "\"maxSteps\": 3");
  g_autofree char *models = misbehaving_agent ("models", "\"maxModelCalls\": 2");
  g_autofree char *garbage = misbehaving_agent ("garbage", NULL);
  g_autofree char *exits = misbehaving_agent ("exit", NULL);
  g_autofree char *pixels = misbehaving_agent ("pixels", NULL);
  g_autofree char *tap = misbehaving_agent ("tap", NULL);
  g_autofree char *wrong = misbehaving_agent ("wrong", NULL);
  g_autofree char *usage = misbehaving_agent ("usage", NULL);
  g_autofree char *unreported = misbehaving_agent ("unreported", NULL);
  g_autofree char *json = NULL;
  g_autoptr(GError) error = NULL;
  SightProject *project;

  json = g_strdup_printf (
    "{\"agents\": {"
    " \"rules\": {\"executor\": {\"command\": [\"python3\", \"%s\"],"
    "                         \"env\": {\"SIGHTLINE_EXECUTOR_TRANSCRIPT\": \"%s\"}},"
    "             \"maxSteps\": 5, \"maxModelCalls\": 3},"
    " %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
    " \"missing\": {\"executor\": {\"command\": [\"/nonexistent/sightline-executor\"]}}},"
    " \"defaults\": {\"agent\": \"rules\", \"timeout\": 20000},"
    " \"credentials\": {\"member.password\": {\"purpose\": \"password\","
    "   \"allowedOrigins\": [\"%s\"], \"source\": {\"env\": \"SIGHT_TEST_CANARY\"}}}}",
    example_executor, transcript, hang, budget, models, garbage, exits, pixels, tap, wrong,
    usage, unreported, site_url);
  project = sight_project_new_from_data (json, -1, NULL, &error);
  g_assert_no_error (error);
  return project;
}

static void
executor_set_up (Fixture *f)
{
  g_autoptr(GError) error = NULL;

  f->project = executor_project ();
  if (shared_page == NULL)
    {
      shared_page = sight_web_page_new ();
      sight_web_page_set_viewport (shared_page, 1280, 720, 1.0);
    }
  f->page = g_object_ref (shared_page);
  f->agent = sight_agent_new (f->project, f->page);
  f->evidence_dir = g_dir_make_tmp ("sight-executor-XXXXXX", &error);
  g_assert_no_error (error);
}

typedef struct {
  GMainLoop    *loop;
  GAsyncResult *result;
} Wait;

static void
executed_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  Wait *wait = user_data;

  wait->result = g_object_ref (result);
  g_main_loop_quit (wait->loop);
}

/* One step through the step executor, the one entry point every caller uses;
 * NULL when the request was refused before the step opened. */
static SightStepResult *
execute_cancellable (Fixture       *f,
                     SightStepKind  kind,
                     const char    *instruction,
                     const char    *options_json,
                     const char    *agent,
                     GCancellable  *cancellable,
                     GError       **error)
{
  g_autoptr(JsonNode) options = NULL;
  SightStepRequest *request;
  SightStepResult *result;
  Wait wait = { NULL, NULL };

  if (options_json != NULL)
    options = json_from_string (options_json, NULL);
  request = sight_step_request_new (f->project, kind, instruction,
                                    options ? json_node_get_object (options) : NULL, agent, -1,
                                    error);
  if (request == NULL)
    return NULL;
  wait.loop = g_main_loop_new (NULL, FALSE);
  sight_step_execute_async (f->agent, request, cancellable, executed_cb, &wait);
  g_main_loop_run (wait.loop);
  result = sight_step_execute_finish (wait.result, error);
  g_object_unref (wait.result);
  g_main_loop_unref (wait.loop);
  return result;
}

static SightStepResult *
execute (Fixture       *f,
         SightStepKind  kind,
         const char    *instruction,
         const char    *options_json,
         const char    *agent,
         GError       **error)
{
  return execute_cancellable (f, kind, instruction, options_json, agent, NULL, error);
}

/* The project file */

static void
assert_refused (const char *agent_json,
                const char *pointer)
{
  g_autofree char *json = g_strdup_printf ("{\"agents\": {\"x\": %s}}", agent_json);
  g_autoptr(GError) error = NULL;
  g_autoptr(SightProject) project = sight_project_new_from_data (json, -1, NULL, &error);

  g_assert_null (project);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
  if (strstr (error->message, pointer) == NULL)
    g_error ("\"%s\" does not name %s", error->message, pointer);
}

static void
test_project (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightProject) project = NULL;
  const SightAgentConfig *agent;

  project = sight_project_new_from_data (
    "{\"agents\": {\"rules\": {\"executor\": {\"command\": [\"python3\", \"./x.py\", \"--fast\"],"
    " \"env\": {\"LEVEL\": \"2\", \"EMPTY\": \"\"}}},"
    " \"model\": {\"model\": \"openai:m\", \"baseUrl\": \"http://127.0.0.1:1/v1\"}}}",
    -1, "/srv/project", &error);
  g_assert_no_error (error);
  agent = sight_project_get_agent (project, "rules");
  g_assert_nonnull (agent->executor);
  /* an executor needs no model */
  g_assert_null (agent->provider);
  g_assert_cmpuint (g_strv_length (agent->executor->argv), ==, 3);
  /* only a program path is resolved; arguments are the program's */
  g_assert_cmpstr (agent->executor->argv[0], ==, "python3");
  g_assert_cmpstr (agent->executor->argv[1], ==, "./x.py");
  g_assert_cmpstr (agent->executor->cwd, ==, "/srv/project");
  g_assert_true (g_strv_contains ((const char * const *) agent->executor->env, "LEVEL=2"));
  g_assert_true (g_strv_contains ((const char * const *) agent->executor->env, "EMPTY="));
  g_assert_true (sight_agent_config_dispatches (agent, SIGHT_STEP_ACT));
  g_assert_true (sight_agent_config_dispatches (agent, SIGHT_STEP_ASSERT));
  g_assert_false (sight_agent_config_dispatches (agent, SIGHT_STEP_WAIT_FOR));
  g_assert_false (sight_agent_config_dispatches (agent, SIGHT_STEP_EXTRACT));
  g_assert_null (sight_project_get_agent (project, "model")->executor);
  g_assert_false (sight_agent_config_dispatches (sight_project_get_agent (project, "model"),
                                                 SIGHT_STEP_ACT));
  g_clear_pointer (&project, sight_project_unref);

  project = sight_project_new_from_data (
    "{\"agents\": {\"rules\": {\"executor\": {\"command\": [\"bin/run\"]}}}}", -1, "/srv/p",
    &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sight_project_get_agent (project, "rules")->executor->argv[0], ==,
                   "/srv/p/bin/run");

  /* Every bad executor is refused whole, naming where. */
  assert_refused ("{\"executor\": [\"python3\"]}", "/agents/x/executor");
  assert_refused ("{\"executor\": {}}", "/agents/x/executor/command");
  assert_refused ("{\"executor\": {\"command\": []}}", "/agents/x/executor/command");
  assert_refused ("{\"executor\": {\"command\": \"python3 x.py\"}}", "/agents/x/executor/command");
  assert_refused ("{\"executor\": {\"command\": [\"python3\", 7]}}", "/agents/x/executor/command/1");
  assert_refused ("{\"executor\": {\"command\": [\"\"]}}", "/agents/x/executor/command/0");
  assert_refused ("{\"executor\": {\"command\": [\"a\"], \"env\": {\"1X\": \"v\"}}}",
                  "/agents/x/executor/env/1X");
  assert_refused ("{\"executor\": {\"command\": [\"a\"], \"env\": {\"X\": 1}}}",
                  "/agents/x/executor/env/X");
  assert_refused ("{\"executor\": {\"command\": [\"a\"], \"env\": [\"X=1\"]}}",
                  "/agents/x/executor/env");
  assert_refused ("{\"executor\": {\"command\": [\"a\"], \"cwd\": \"/tmp\"}}",
                  "/agents/x/executor/cwd");
  /* without an executor a model is still required */
  assert_refused ("{\"maxSteps\": 3}", "/agents/x/model");
}

/* assert's budget with an executor (spec "Budgets") */
static void
test_assert_budget (void)
{
  g_autoptr(SightProject) project = NULL;
  g_autoptr(SightStepRequest) request = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) vision = json_from_string ("{\"vision\": true}", NULL);
  g_autoptr(JsonNode) screenshot = json_from_string ("{\"screenshot\": false}", NULL);

  project = sight_project_new_from_data (
    "{\"agents\": {\"rules\": {\"executor\": {\"command\": [\"x\"]}, \"maxSteps\": 7,"
    " \"maxModelCalls\": 9, \"vision\": \"only\"},"
    " \"model\": {\"model\": \"openai:m\", \"baseUrl\": \"http://127.0.0.1:1/v1\", \"maxSteps\": 7}},"
    " \"defaults\": {\"timeout\": 50000, \"actionTimeout\": 40000}}", -1, NULL, &error);
  g_assert_no_error (error);

  request = sight_step_request_new (project, SIGHT_STEP_ASSERT, "the page says \"hi\"", NULL,
                                    "rules", -1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (request->limits.max_actions, ==, 7);
  g_assert_cmpint (request->limits.max_model_calls, ==, 9);
  g_assert_cmpint (request->limits.timeout_ms, ==, 50000);
  g_assert_cmpint (request->limits.vision, ==, SIGHT_VISION_OFF);
  g_clear_pointer (&request, sight_step_request_free);

  /* the remaining test time still caps it */
  request = sight_step_request_new (project, SIGHT_STEP_ASSERT, "x", NULL, "rules", 1234, &error);
  g_assert_no_error (error);
  g_assert_cmpint (request->limits.timeout_ms, ==, 1234);
  g_clear_pointer (&request, sight_step_request_free);

  request = sight_step_request_new (project, SIGHT_STEP_ASSERT, "x",
                                    json_node_get_object (vision), "rules", -1, &error);
  g_assert_null (request);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_UNSUPPORTED_CAPABILITY);
  g_clear_error (&error);
  request = sight_step_request_new (project, SIGHT_STEP_ASSERT, "x",
                                    json_node_get_object (screenshot), "rules", -1, &error);
  g_assert_null (request);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_UNSUPPORTED_CAPABILITY);
  g_clear_error (&error);

  /* The built-in agent's row is unchanged. */
  request = sight_step_request_new (project, SIGHT_STEP_ASSERT, "x",
                                    json_node_get_object (vision), "model", -1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (request->limits.max_actions, ==, 0);
  g_assert_cmpint (request->limits.max_model_calls, ==, 2);
  g_assert_cmpint (request->limits.timeout_ms, ==, 40000);
  g_assert_cmpint (request->limits.vision, ==, SIGHT_VISION_ON);
}

/* The example executor */

static void
assert_no_canary_in (const char *text)
{
  g_autofree char *b64 = g_base64_encode ((const guchar *) CANARY, strlen (CANARY));

  g_assert_null (strstr (text, CANARY));
  g_assert_null (strstr (text, "7f3a9"));
  g_assert_null (strstr (text, b64));
}

static void
test_act (void)
{
  Fixture f = { 0 };
  g_autoptr(SightStepResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *transcript_path = workdir_file ("transcript");
  g_autofree char *transcript = NULL;
  g_autofree char *status = NULL;
  g_autofree char *value = NULL;

  g_remove (transcript_path);
  executor_set_up (&f);
  fixture_load (&f, "/login");
  result = execute (&f, SIGHT_STEP_ACT, "Sign in",
                    "{\"params\": {\"email\": \"ada@example.test\","
                    " \"password\": {\"secret\": \"member.password\"}}}", NULL, &error);
  g_assert_no_error (error);
  g_assert_true (sight_step_result_passed (result));
  g_assert_cmpuint (result->actions, ==, 3);
  g_assert_cmpuint (json_array_get_length (result->performed), ==, 3);
  g_assert_cmpuint (result->action_log->len, ==, 3);
  g_assert_true (result->secret_filled);
  g_assert_nonnull (strstr (result->summary, "Sign in"));
  status = page_eval_string (&f, "document.getElementById('s').textContent");
  g_assert_cmpstr (status, ==, "Welcome, ada");
  value = page_eval_string (&f, "document.getElementById('pw').value");
  g_assert_cmpstr (value, ==, CANARY);

  /* The executor got the params as the model does and never the secret's value. */
  g_assert_true (g_file_get_contents (transcript_path, &transcript, NULL, NULL));
  g_assert_nonnull (strstr (transcript, "< {\"jsonrpc\":\"2.0\",\"method\":\"step/run\""));
  g_assert_nonnull (strstr (transcript, "\"secret\":\"member.password\""));
  g_assert_nonnull (strstr (transcript, "\"method\": \"step/finish\""));
  assert_no_canary_in (transcript);
  for (guint i = 0; i < result->action_log->len; i++)
    assert_no_canary_in (g_ptr_array_index (result->action_log, i));
  fixture_tear_down (&f);
}

static void
test_assert (void)
{
  Fixture f = { 0 };
  g_autoptr(SightStepResult) passed = NULL;
  g_autoptr(SightStepResult) failed = NULL;
  g_autoptr(SightStepResult) no_quote = NULL;
  g_autoptr(SightStepResult) wait_for = NULL;
  g_autoptr(GError) error = NULL;

  executor_set_up (&f);
  fixture_load (&f, "/login");
  /* No agent of the project has a model: the executor judges. */
  passed = execute (&f, SIGHT_STEP_ASSERT, "the page shows \"Sign in\"", NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (sight_step_result_passed (passed));
  g_assert_nonnull (strstr (passed->summary, "\"Sign in\""));

  /* A failed assertion keeps its evidence as the model's would, where the
   * agent keeps it (`sightline step`, an MCP session). */
  sight_agent_set_evidence_dir (f.agent, f.evidence_dir);
  failed = execute (&f, SIGHT_STEP_ASSERT, "the page shows \"Goodbye\"", NULL, NULL, &error);
  assert_code (failed, error, SIGHT_ERROR_ASSERTION_FAILED);
  g_assert_nonnull (strstr (failed->error->message, "Goodbye"));
  g_assert_nonnull (failed->screenshot_path);
  g_assert_true (g_str_has_prefix (failed->screenshot_path, f.evidence_dir));
  g_assert_true (g_file_test (failed->screenshot_path, G_FILE_TEST_IS_REGULAR));
  g_clear_error (&error);
  sight_agent_set_evidence_dir (f.agent, NULL);

  no_quote = execute (&f, SIGHT_STEP_ASSERT, "the page is fine", NULL, NULL, &error);
  assert_code (no_quote, error, SIGHT_ERROR_TEST_SETUP_FAILED);
  g_clear_error (&error);

  g_assert_null (execute (&f, SIGHT_STEP_ASSERT, "x", "{\"vision\": true}", NULL, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_UNSUPPORTED_CAPABILITY);
  g_clear_error (&error);

  /* waitFor is not the executor's: it needs the agent's model, and there is none. */
  wait_for = execute (&f, SIGHT_STEP_WAIT_FOR, "the page shows a welcome", NULL, NULL, &error);
  assert_code (wait_for, error, SIGHT_ERROR_MODEL_UNAVAILABLE);
  fixture_tear_down (&f);
}

/* Executors that misbehave */

static gboolean
process_gone (int pid)
{
  g_autofree char *stat_path = g_strdup_printf ("/proc/%d/stat", pid);
  g_autofree char *stat = NULL;
  const char *state;

  if (!g_file_get_contents (stat_path, &stat, NULL, NULL))
    return TRUE;
  /* "pid (comm) S …": dead but not yet reaped by its new parent counts as gone */
  state = strrchr (stat, ')');
  return state != NULL && (state[2] == 'Z' || state[2] == 'X');
}

/* The hanging executor that wrote @pid_path was killed and reaped (a zombie
 * would still answer kill 0), and what it started in its group was killed
 * with it. */
static void
assert_group_ended (const char *pid_path)
{
  g_autofree char *pids = NULL;
  int leader = 0, child = 0;

  g_assert_true (g_file_get_contents (pid_path, &pids, NULL, NULL));
  g_assert_cmpint (sscanf (pids, "%d %d", &leader, &child), ==, 2);
  g_assert_cmpint (kill (leader, 0), ==, -1);
  g_assert_cmpint (errno, ==, ESRCH);
  for (int i = 0; i < 100 && !process_gone (child); i++)
    g_usleep (20000);
  g_assert_true (process_gone (child));
}

typedef struct {
  const char   *pid_path;
  GCancellable *cancellable;
  gint64        cancelled;
} Cancel;

/* Cancels once the hanging executor is running (it wrote its pids). */
static gboolean
cancel_when_started_cb (gpointer user_data)
{
  Cancel *cancel = user_data;

  if (!g_file_test (cancel->pid_path, G_FILE_TEST_EXISTS))
    return G_SOURCE_CONTINUE;
  cancel->cancelled = g_get_monotonic_time ();
  g_cancellable_cancel (cancel->cancellable);
  return G_SOURCE_REMOVE;
}

static void
test_hang (void)
{
  Cancel cancel = { 0 };
  Fixture f = { 0 };
  g_autoptr(SightStepResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *pid_path = workdir_file ("hang");
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  gint64 started;

  g_remove (pid_path);
  executor_set_up (&f);
  fixture_load (&f, "/login");
  started = g_get_monotonic_time ();
  result = execute (&f, SIGHT_STEP_ACT, "Sign in", "{\"timeout\": 3000}", "hang", &error);
  assert_code (result, error, SIGHT_ERROR_STEP_TIMEOUT);
  g_assert_cmpint ((g_get_monotonic_time () - started) / 1000, >=, 3000);
  g_assert_cmpint ((g_get_monotonic_time () - started) / 1000, <, 8000);

  assert_group_ended (pid_path);
  g_clear_pointer (&result, sight_step_result_unref);
  g_clear_error (&error);

  /* A step cancelled (a stop, a window closed) ends its executor the same way. */
  g_remove (pid_path);
  cancel.pid_path = pid_path;
  cancel.cancellable = cancellable;
  g_timeout_add (50, cancel_when_started_cb, &cancel);
  result = execute_cancellable (&f, SIGHT_STEP_ACT, "Sign in", NULL, "hang", cancellable, &error);
  g_assert_null (result);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  /* the step ended soon after the cancellation, long before its 20 s deadline */
  g_assert_cmpint ((g_get_monotonic_time () - cancel.cancelled) / 1000, <, 3000);
  assert_group_ended (pid_path);
  fixture_tear_down (&f);
}

static void
test_budget (void)
{
  Fixture f = { 0 };
  g_autoptr(SightStepResult) actions = NULL;
  g_autoptr(SightStepResult) models = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *clicks = NULL;

  executor_set_up (&f);
  fixture_load (&f, "/login");
  actions = execute (&f, SIGHT_STEP_ACT, "Sign in", NULL, "budget", &error);
  assert_code (actions, error, SIGHT_ERROR_STEP_BUDGET_EXHAUSTED);
  g_assert_cmpuint (actions->actions, ==, 3);
  g_assert_cmpuint (actions->action_log->len, ==, 3);
  g_clear_error (&error);

  /* a per-call budget lowers it */
  g_clear_pointer (&actions, sight_step_result_unref);
  actions = execute (&f, SIGHT_STEP_ACT, "Sign in", "{\"maxSteps\": 2}", "budget", &error);
  assert_code (actions, error, SIGHT_ERROR_STEP_BUDGET_EXHAUSTED);
  g_assert_cmpuint (actions->actions, ==, 2);
  g_clear_error (&error);

  models = execute (&f, SIGHT_STEP_ACT, "Sign in", NULL, "models", &error);
  assert_code (models, error, SIGHT_ERROR_STEP_BUDGET_EXHAUSTED);
  g_assert_cmpuint (models->model_calls, ==, 2);
  g_assert_nonnull (strstr (models->error->message, "model calls"));
  fixture_tear_down (&f);
}

/* The usage an executor reports of its own model calls (budget/modelUsage)
 * is the step's, summed as every usage is: saturating at
 * Number.MAX_SAFE_INTEGER; a call it never reports leaves the sum an upper
 * bound. */
static void
test_model_usage (void)
{
  Fixture f = { 0 };
  g_autoptr(SightStepResult) reported = NULL;
  g_autoptr(SightStepResult) unreported = NULL;
  g_autoptr(GError) error = NULL;

  executor_set_up (&f);
  fixture_load (&f, "/login");
  reported = execute (&f, SIGHT_STEP_ACT, "Sign in", NULL, "usage", &error);
  g_assert_no_error (error);
  g_assert_no_error (reported->error);
  /* a report before any call, and a negative count, are refused */
  g_assert_cmpstr (reported->summary, ==,
                   "refusals=refused,refused; inputTokens=9007199254740991");
  g_assert_cmpuint (reported->model_calls, ==, 2);
  g_assert_cmpuint (reported->usage.model_calls, ==, 2);
  g_assert_cmpuint (reported->usage.input_tokens, ==, SIGHT_USAGE_MAX_SAFE);
  g_assert_cmpuint (reported->usage.output_tokens, ==, 35);
  g_assert_cmpuint (reported->usage.cached_input_tokens, ==, 20);
  g_assert_true (reported->usage.has_cost);
  g_assert_cmpuint (reported->usage.cost_micro_usd, ==, 500);
  g_assert_cmpint (reported->usage.token_accounting, ==, SIGHT_TOKEN_ACCOUNTING_PROVIDER);

  unreported = execute (&f, SIGHT_STEP_ACT, "Sign in", NULL, "unreported", &error);
  g_assert_no_error (error);
  g_assert_no_error (unreported->error);
  g_assert_cmpuint (unreported->usage.model_calls, ==, 2);
  g_assert_cmpuint (unreported->usage.input_tokens, ==, 10);
  g_assert_cmpuint (unreported->usage.output_tokens, ==, 2);
  g_assert_false (unreported->usage.has_cost);
  g_assert_cmpint (unreported->usage.token_accounting, ==,
                   SIGHT_TOKEN_ACCOUNTING_ADAPTER_UPPER_BOUND);
  fixture_tear_down (&f);
}

static void
test_garbage_and_exit (void)
{
  Fixture f = { 0 };
  g_autoptr(SightStepResult) garbage = NULL;
  g_autoptr(SightStepResult) exits = NULL;
  g_autoptr(SightStepResult) missing = NULL;
  g_autoptr(GError) error = NULL;
  gint64 started;

  executor_set_up (&f);
  fixture_load (&f, "/login");
  started = g_get_monotonic_time ();
  garbage = execute (&f, SIGHT_STEP_ACT, "Sign in", NULL, "garbage", &error);
  assert_code (garbage, error, SIGHT_ERROR_MODEL_OUTPUT_INVALID);
  g_assert_nonnull (strstr (error->message, "not JSON-RPC 2.0"));
  g_assert_nonnull (strstr (error->message, "this is not JSON"));
  /* at once, not after the executor's 30 s sleep nor the step's deadline */
  g_assert_cmpint ((g_get_monotonic_time () - started) / 1000, <, 10000);
  g_clear_error (&error);

  exits = execute (&f, SIGHT_STEP_ASSERT, "the page shows \"Sign in\"", NULL, "exit", &error);
  assert_code (exits, error, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "exited with status 3 before it called step/finish"));
  g_clear_error (&error);

  missing = execute (&f, SIGHT_STEP_ACT, "Sign in", NULL, "missing", &error);
  assert_code (missing, error, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "could not be started"));
  fixture_tear_down (&f);
}

static void
test_pixels (void)
{
  Fixture f = { 0 };
  g_autoptr(SightStepResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *ok = NULL;

  executor_set_up (&f);
  fixture_load (&f, "/login");
  result = execute (&f, SIGHT_STEP_ACT, "Sign in",
                    "{\"params\": {\"password\": {\"secret\": \"member.password\"}}}", "pixels",
                    &error);
  g_assert_no_error (error);
  /* a masked screenshot before the secret, none after it */
  ok = g_strdup_printf ("before=image/png %dx", 768);
  g_assert_nonnull (strstr (result->summary, ok));
  g_assert_nonnull (strstr (result->summary, "after=PIXEL_TAINTED"));
  g_assert_cmpstr (result->vision_degraded, ==, "PIXEL_TAINTED");
  g_assert_true (result->vision_input);
  g_assert_cmpuint (result->images_sent, ==, 1);
  g_assert_true (result->secret_filled);
  /* Sightline's environment, which holds the credential, is not the executor's. */
  g_assert_nonnull (strstr (result->summary, "env="));
  g_assert_null (strstr (result->summary, "SIGHT_TEST_CANARY"));
  g_assert_nonnull (strstr (result->summary, "PATH"));
  fixture_tear_down (&f);
}

/* page/tapAt taps a point of the screenshot; a bad call is refused and the step
 * goes on; a Secret goes through the one secret fill's checks. */
static void
test_tap_and_refusals (void)
{
  Fixture f = { 0 };
  g_autoptr(SightStepResult) tapped = NULL;
  g_autoptr(SightStepResult) wrong = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *status = NULL;
  g_autofree char *email = NULL;

  executor_set_up (&f);
  fixture_load (&f, "/login");
  tapped = execute (&f, SIGHT_STEP_ACT, "Sign in", NULL, "tap", &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (tapped->summary, "refusal=there is no element e999"));
  g_assert_cmpuint (tapped->actions, ==, 1);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (tapped->performed, 0),
                                                  "tool"), ==, "tap_at");
  status = page_eval_string (&f, "document.getElementById('s').textContent");
  g_assert_cmpstr (status, ==, "Type your password");

  /* a password into the Email field: refused, nothing typed, the step ends */
  wrong = execute (&f, SIGHT_STEP_ACT, "Sign in",
                   "{\"params\": {\"password\": {\"secret\": \"member.password\"}}}", "wrong",
                   &error);
  assert_code (wrong, error, SIGHT_ERROR_POLICY_DENIED);
  g_assert_cmpuint (wrong->actions, ==, 0);
  email = page_eval_string (&f, "document.getElementById('mail').value");
  g_assert_cmpstr (email, ==, "");
  fixture_tear_down (&f);
}

/* `sightline run` on a test file whose agent has an executor and no model */
static void
test_cli (void)
{
  g_auto(CliRun) run = { 0 };
  g_autofree char *dir = g_build_filename (workdir, "cli", NULL);
  g_autofree char *store = g_build_filename (workdir, "cli-store", NULL);
  g_autofree char *project = g_build_filename (dir, "sightline.json", NULL);
  g_autofree char *test = g_build_filename (dir, "sign-in.sightline.json", NULL);
  g_autofree char *project_json = NULL;
  g_autofree char *test_json = NULL;
  g_autofree char *failing_json = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  project_json = g_strdup_printf ("{\"agents\": {\"rules\": {\"executor\": {\"command\": "
                                  "[\"python3\", \"%s\"]}}},"
                                  " \"credentials\": {\"member.password\": {\"purpose\": \"password\","
                                  " \"allowedOrigins\": [\"%s\"], \"source\": {\"env\": \"SIGHT_TEST_CANARY\"}}}}",
                                  example_executor, site_url);
  g_assert_true (g_file_set_contents (project, project_json, -1, &error));
  test_json = g_strdup_printf ("{\"name\": \"Ada signs in\", \"url\": \"%s/login\", \"steps\": ["
                               " {\"act\": \"Sign in\", \"params\": {\"email\": \"ada@example.test\","
                               "  \"password\": {\"secret\": \"member.password\"}}},"
                               " {\"assert\": \"the page shows \\\"Welcome, ada\\\"\"}]}", site_url);
  g_assert_true (g_file_set_contents (test, test_json, -1, &error));

  cli_run_with_store (&run, store, "run", test, "--json", NULL);
  if (run.status != 0)
    g_test_message ("stdout: %s\nstderr: %s", run.out, run.err);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.out, "\"passed\""));
  assert_no_canary_in (run.out);
  assert_no_canary_in (run.err);

  failing_json = g_strdup_printf ("{\"name\": \"Ada is greeted by name\", \"url\": \"%s/login\","
                                  " \"steps\": [{\"assert\": \"the page shows \\\"Goodbye\\\"\"}]}",
                                  site_url);
  g_assert_true (g_file_set_contents (test, failing_json, -1, &error));
  cli_run_clear (&run);
  cli_run_with_store (&run, store, "run", test, NULL);
  g_assert_cmpint (run.status, ==, 1);
  g_assert_nonnull (strstr (run.out, "ASSERTION_FAILED"));
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  int status;

  gtk_test_init (&argc, &argv, NULL);
  g_unsetenv ("SIGHTLINE_MODEL");
  g_unsetenv ("OPENAI_API_KEY");
  g_setenv ("SIGHT_TEST_CANARY", CANARY, TRUE);
  example_executor = g_test_build_filename (G_TEST_DIST, "..", "examples", "executors",
                                            "first-match.py", NULL);
  misbehave = g_test_build_filename (G_TEST_DIST, "executors", "misbehave.py", NULL);
  workdir = g_dir_make_tmp ("sight-test-executor-XXXXXX", &error);
  g_assert_no_error (error);
  site_start ();
  site_add ("/login", login_html);

  g_test_add_func ("/executor/project", test_project);
  g_test_add_func ("/executor/assert-budget", test_assert_budget);
  g_test_add_func ("/executor/act", test_act);
  g_test_add_func ("/executor/assert", test_assert);
  g_test_add_func ("/executor/hang", test_hang);
  g_test_add_func ("/executor/budget", test_budget);
  g_test_add_func ("/executor/model-usage", test_model_usage);
  g_test_add_func ("/executor/garbage-and-exit", test_garbage_and_exit);
  g_test_add_func ("/executor/pixels", test_pixels);
  g_test_add_func ("/executor/tap-and-refusals", test_tap_and_refusals);
  g_test_add_func ("/executor/cli", test_cli);
  status = g_test_run ();

  g_clear_object (&shared_page);
  {
    g_autofree char *rm = g_strdup_printf ("rm -rf '%s'", workdir);

    if (system (rm) != 0)
      g_warning ("could not remove %s", workdir);
  }
  g_free (workdir);
  g_free (example_executor);
  g_free (misbehave);
  return status;
}
