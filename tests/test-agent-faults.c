/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Faults end to end (issue #13): every fault of the model endpoint that the
 * scripted model server can produce, through act and through assert on a real
 * page, each followed by a step that passes on the same agent and page; and
 * the web process killed during act, hung by the page during act, and swapped
 * by a cross-site navigation. */
#include "config.h"

#include "agent-test-common.h"

static const char button_html[] =
  "<!doctype html><title>Counter</title><h1>Counter</h1>"
  "<button id=b onclick=\"document.getElementById('n').textContent = "
  "String (Number (document.getElementById('n').textContent) + 1)\">Add one</button>"
  "<p>Count: <span id=n>0</span></p>"
  "<button onclick='for (;;) {}'>Freeze</button>";

typedef struct {
  const char *name;
  const char *entries;     /* pushed before the step, a JSON array */
  gboolean    passes;      /* the step still passes (retried, or repaired) */
  SightErrorCode code;     /* else its code */
  guint       model_calls; /* requests the step counts */
  /* assert only, where it differs: a judgment that fails validation gets
   * one repair round */
  gboolean    judgment_repaired;
} Fault;

/* What the step asks for after the fault entries, for act and for assert. */
#define ACT_DONE "{\"tool_calls\": [{\"name\": \"done\", \"arguments\": {\"verdict\": \"pass\", \"summary\": \"ok\"}}]}"
#define JUDGE_TRUE "{\"json\": {\"verdict\": true, \"explanation\": \"The counter is shown.\", \"injection\": null}}"

static const Fault faults[] = {
  { "429 then an answer", "[{\"status\": 429, \"headers\": {\"retry-after-ms\": \"5\"}}]", TRUE, 0, 1 },
  { "429 three times", "[{\"status\": 429}, {\"status\": 429}, {\"status\": 429}]", FALSE,
    SIGHT_ERROR_MODEL_UNAVAILABLE, 1 },
  { "503 then an answer", "[{\"status\": 503}]", TRUE, 0, 1 },
  { "500 three times", "[{\"status\": 500}, {\"status\": 500}, {\"status\": 500}]", FALSE,
    SIGHT_ERROR_MODEL_UNAVAILABLE, 1 },
  { "529 overloaded three times", "[{\"fault\": \"overloaded\"}, {\"fault\": \"overloaded\"}, {\"fault\": \"overloaded\"}]",
    FALSE, SIGHT_ERROR_MODEL_UNAVAILABLE, 1 },
  { "quota", "[{\"fault\": \"quota\"}]", FALSE, SIGHT_ERROR_MODEL_UNAVAILABLE, 1 },
  { "401", "[{\"status\": 401}]", FALSE, SIGHT_ERROR_MODEL_UNAVAILABLE, 1 },
  { "HTML error page three times", "[{\"fault\": \"html\"}, {\"fault\": \"html\"}, {\"fault\": \"html\"}]",
    FALSE, SIGHT_ERROR_MODEL_UNAVAILABLE, 1 },
  { "truncated stream then an answer", "[{\"fault\": \"drop\"}]", TRUE, 0, 1 },
  { "truncated stream three times", "[{\"fault\": \"drop\"}, {\"fault\": \"drop\"}, {\"fault\": \"drop\"}]",
    FALSE, SIGHT_ERROR_MODEL_UNAVAILABLE, 1 },
  { "error inside a 200, then an answer", "[{\"fault\": \"error_in_200\", \"status\": 503}]", TRUE, 0, 1 },
};

/* Faults in the answer itself: a body that is not JSON, no choice, an answer
 * cut at the token limit. They are not retried (the same request would get
 * the same answer): act ends with MODEL_OUTPUT_INVALID; assert's judgment
 * gets its one repair round, which answers. */
static const Fault output_faults[] = {
  { "body not JSON", "[{\"fault\": \"malformed\"}]", FALSE, SIGHT_ERROR_MODEL_OUTPUT_INVALID, 1, TRUE },
  { "no choices", "[{\"fault\": \"empty_choices\", \"text\": \"x\"}]", FALSE,
    SIGHT_ERROR_MODEL_OUTPUT_INVALID, 1, TRUE },
  { "cut at the token limit", "[{\"fault\": \"length\", \"text\": \"The answer is cu\"}]", FALSE,
    SIGHT_ERROR_MODEL_OUTPUT_INVALID, 1, TRUE },
};

static void
check_step (Fixture       *f,
            SightStepKind  kind,
            const Fault   *fault)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightStepResult) result = NULL;
  g_autoptr(SightStepResult) after = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  const char *answer = kind == SIGHT_STEP_ACT ? ACT_DONE : JUDGE_TRUE;
  JsonArray *entries;
  const char *what = kind == SIGHT_STEP_ACT ? "act" : "assert";

  sight_scripted_model_load_script (f->model, "[]", NULL);
  g_assert_true (json_parser_load_from_data (parser, fault->entries, -1, NULL));
  entries = json_node_get_array (json_parser_get_root (parser));
  for (guint i = 0; i < json_array_get_length (entries); i++)
    {
      g_autofree char *entry = json_to_string (json_array_get_element (entries, i), FALSE);

      sight_scripted_model_push (f->model, entry);
    }
  sight_scripted_model_push (f->model, answer);

  result = run_step (f, kind, kind == SIGHT_STEP_ACT ? "add one to the counter" : "the counter is shown",
                     NULL, &error);
  g_assert_nonnull (result);
  g_test_message ("%s, %s: verdict %s, %s, %u model calls, %u requests",
                  what, fault->name, sight_step_verdict_to_string (result->verdict),
                  result->error ? result->error->message : "no error", result->model_calls,
                  sight_scripted_model_get_request_count (f->model));
  if (kind == SIGHT_STEP_ASSERT && fault->judgment_repaired)
    {
      g_assert_no_error (error);
      g_assert_cmpint (result->verdict, ==, SIGHT_STEP_VERDICT_PASS);
      g_assert_cmpuint (result->model_calls, ==, 2);
      g_assert_cmpuint (result->repair_rounds, ==, 1);
    }
  else if (fault->passes)
    {
      g_assert_no_error (error);
      g_assert_no_error (result->error);
      g_assert_cmpint (result->verdict, ==, SIGHT_STEP_VERDICT_PASS);
    }
  else
    {
      assert_code (result, error, fault->code);
      g_clear_error (&error);
    }
  if (!(kind == SIGHT_STEP_ASSERT && fault->judgment_repaired))
    g_assert_cmpuint (result->model_calls, ==, fault->model_calls);

  /* The same agent and page take the next step as if nothing happened. */
  sight_scripted_model_load_script (f->model, "[]", NULL);
  sight_scripted_model_push (f->model, answer);
  after = run_step (f, kind, kind == SIGHT_STEP_ACT ? "add one to the counter" : "the counter is shown",
                    NULL, &error);
  g_assert_no_error (error);
  g_assert_no_error (after->error);
  g_assert_cmpint (after->verdict, ==, SIGHT_STEP_VERDICT_PASS);
  g_assert_cmpuint (after->model_calls, ==, 1);
}

static void
test_model_faults (void)
{
  Fixture f = { 0 };

  fixture_set_up (&f, NULL);
  fixture_load (&f, "/counter");
  for (guint i = 0; i < G_N_ELEMENTS (faults); i++)
    {
      check_step (&f, SIGHT_STEP_ACT, &faults[i]);
      check_step (&f, SIGHT_STEP_ASSERT, &faults[i]);
    }
  for (guint i = 0; i < G_N_ELEMENTS (output_faults); i++)
    {
      check_step (&f, SIGHT_STEP_ACT, &output_faults[i]);
      check_step (&f, SIGHT_STEP_ASSERT, &output_faults[i]);
    }
  fixture_tear_down (&f);
}

/* The model answers slowly; the web process is killed while it thinks. */
static guint kill_timer;

static gboolean
kill_cb (gpointer user_data)
{
  kill_timer = 0;
  sight_web_page_terminate_web_process (user_data, "killed by the test during act");
  return G_SOURCE_REMOVE;
}

static char *
counter_text (Fixture *f)
{
  g_autoptr(SightObservation) observation = NULL;
  g_autoptr(GError) error = NULL;
  GAsyncResult *result = NULL;
  char *text;

  sight_observation_capture_async (f->page, 0, 10000, NULL, store_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  observation = sight_observation_capture_finish (result, &error);
  g_object_unref (result);
  g_assert_no_error (error);
  text = g_strdup (sight_observation_get_text (observation));
  return text;
}

static void
test_web_process_faults (void)
{
  Fixture f = { 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(SightStepResult) killed = NULL;
  g_autoptr(SightStepResult) hung = NULL;
  g_autoptr(SightStepResult) next = NULL;
  g_autoptr(SightStepResult) swapped = NULL;
  g_autofree char *text = NULL;
  g_autofree char *other_site = NULL;

  fixture_set_up (&f, "\"defaults\": {\"actionTimeout\": 3000}");
  sight_web_page_set_hang_timeout (f.page, 2000);

  /* Killed while the model thinks: the step ends with ENVIRONMENT_UNAVAILABLE. */
  fixture_load (&f, "/counter");
  sight_scripted_model_push (f.model, "{\"delay_ms\": 1500, \"tool_calls\": [{\"name\": \"click\", "
                                      "\"arguments\": {\"ref\": \"e2\"}}]}");
  sight_scripted_model_push (f.model, ACT_DONE);
  kill_timer = g_timeout_add (500, kill_cb, f.page);
  killed = run_step (&f, SIGHT_STEP_ACT, "add one to the counter", NULL, &error);
  g_clear_handle_id (&kill_timer, g_source_remove);
  g_test_message ("killed during act: %s", killed->error ? killed->error->message : "passed");
  assert_code (killed, error, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE);
  g_clear_error (&error);

  /* The page takes a load and the next act passes. */
  sight_scripted_model_load_script (f.model, "[]", NULL);
  fixture_load (&f, "/counter");
  sight_scripted_model_push (f.model, "{\"tool_calls\": [{\"name\": \"click\", \"arguments\": {\"ref\": \"e2\"}}]}");
  sight_scripted_model_push (f.model, ACT_DONE);
  next = run_step (&f, SIGHT_STEP_ACT, "add one to the counter", NULL, &error);
  g_assert_no_error (error);
  g_assert_no_error (next->error);
  text = counter_text (&f);
  g_assert_nonnull (strstr (text, "Count: 1"));
  g_clear_pointer (&next, sight_step_result_unref);
  g_clear_pointer (&text, g_free);

  /* Hung by the page: a click whose handler never returns. */
  sight_scripted_model_load_script (f.model, "[]", NULL);
  sight_scripted_model_push (f.model, "{\"tool_calls\": [{\"name\": \"click\", \"arguments\": {\"ref\": \"e3\"}}]}");
  sight_scripted_model_push (f.model, ACT_DONE);
  hung = run_step (&f, SIGHT_STEP_ACT, "press Freeze", NULL, &error);
  g_test_message ("hung during act: %s", hung->error ? hung->error->message : "passed");
  assert_code (hung, error, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE);
  g_clear_error (&error);

  sight_scripted_model_load_script (f.model, "[]", NULL);
  fixture_load (&f, "/counter");
  sight_scripted_model_push (f.model, "{\"tool_calls\": [{\"name\": \"click\", \"arguments\": {\"ref\": \"e2\"}}]}");
  sight_scripted_model_push (f.model, ACT_DONE);
  next = run_step (&f, SIGHT_STEP_ACT, "add one to the counter", NULL, &error);
  g_assert_no_error (error);
  g_assert_no_error (next->error);
  text = counter_text (&f);
  g_assert_nonnull (strstr (text, "Count: 1"));
  g_clear_pointer (&text, g_free);

  /* Swapped: "localhost" is another site than "127.0.0.1", which WebKit
   * serves from a new web process (process swap on navigation); the page
   * object and the agent go on there. */
  other_site = g_strdup_printf ("http://localhost:%s/counter", strrchr (site_url, ':') + 1);
  {
    GAsyncResult *load = NULL;

    sight_web_page_load_async (f.page, other_site, SIGHT_WAIT_UNTIL_LOAD, 20000, NULL, store_cb,
                               &load);
    while (load == NULL)
      g_main_context_iteration (NULL, TRUE);
    g_assert_true (sight_web_page_load_finish (f.page, load, &error));
    g_assert_no_error (error);
    g_object_unref (load);
  }
  sight_scripted_model_load_script (f.model, "[]", NULL);
  sight_scripted_model_push (f.model, "{\"tool_calls\": [{\"name\": \"click\", \"arguments\": {\"ref\": \"e2\"}}]}");
  sight_scripted_model_push (f.model, ACT_DONE);
  swapped = run_step (&f, SIGHT_STEP_ACT, "add one", NULL, &error);
  g_assert_no_error (error);
  g_assert_no_error (swapped->error);
  g_assert_true (g_str_has_prefix (sight_web_page_get_uri (f.page), "http://localhost:"));
  text = counter_text (&f);
  g_assert_nonnull (strstr (text, "Count: 1"));

  fixture_tear_down (&f);
}

int
main (int    argc,
      char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_unsetenv ("SIGHTLINE_MODEL");
  g_unsetenv ("OPENAI_API_KEY");
  site_start ();
  site_add ("/counter", button_html);

  g_test_add_func ("/agent-faults/model", test_model_faults);
  g_test_add_func ("/agent-faults/web-process", test_web_process_faults);
  return g_test_run ();
}
