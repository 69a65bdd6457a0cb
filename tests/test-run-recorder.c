/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-run-recorder"

#include "config.h"

#include <gtk/gtk.h>
#include <string.h>

#include "test-files.h"
#include "sight-demo-site.h"
#include "sight-direct-run.h"
#include "sight-error.h"
#include "sight-run-recorder.h"
#include "sight-step-result.h"
#include "sight-store.h"
#include "sight-web-page.h"

#define DEADLINE_US (30 * G_USEC_PER_SEC)

typedef struct {
  char       *dir;
  SightStore *store;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;

  f->dir = g_dir_make_tmp ("sight-run-recorder-XXXXXX", NULL);
  g_assert_nonnull (f->dir);
  path = g_build_filename (f->dir, "sightline.db", NULL);
  f->store = sight_store_new (path, &error);
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  g_clear_object (&f->store);
  test_remove_tree (f->dir);
  g_free (f->dir);
}

static void
closed_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  gboolean *done = user_data;
  g_autoptr(GError) error = NULL;

  g_assert_true (sight_store_write_finish (SIGHT_STORE (source), result, &error));
  g_assert_no_error (error);
  *done = TRUE;
}

/* Closes the run and reads it back once every write before it is in. */
static SightRunData *
close_and_load (Fixture          *f,
                SightRunRecorder *recorder,
                SightRunVerdict   verdict,
                const char       *code)
{
  gboolean done = FALSE;
  gint64 deadline = g_get_monotonic_time () + DEADLINE_US;
  g_autoptr(GError) error = NULL;
  SightRunData *data;

  sight_run_recorder_close (recorder, verdict, code, "a step failed", "http://127.0.0.1/end",
                            closed_cb, &done);
  while (!done && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (done);
  data = sight_store_load_run (f->store, sight_run_recorder_get_run_id (recorder), &error);
  g_assert_no_error (error);
  g_assert_nonnull (data);
  return data;
}

/* What each kind of step gives the executor's caller: a result that passed,
 * failed (a product failure) or was blocked (a budget, the model). */
typedef enum { OUTCOME_PASS, OUTCOME_FAIL, OUTCOME_BLOCKED } Outcome;

static SightStepResult *
make_result (const char *kind,
             Outcome     outcome)
{
  SightStepKind step_kind = SIGHT_STEP_ACT;
  gboolean direct = g_str_equal (kind, "do");
  g_autofree char *instruction = g_strdup_printf ("%s step", kind);
  SightStepResult *result;

  if (!direct)
    g_assert_true (sight_step_kind_from_string (kind, &step_kind));
  result = sight_step_result_new (step_kind, instruction);
  result->direct = direct;
  result->summary = g_strdup_printf ("%s done", kind);
  result->actions = 1;
  if (!direct)
    {
      result->model_calls = 2;
      result->usage.model_calls = 2;
      result->usage.input_tokens = 1200;
      result->usage.output_tokens = 80;
      result->cache = json_from_string ("{\"status\": \"missed\"}", NULL);
    }
  if (outcome == OUTCOME_FAIL)
    sight_step_result_take_error (result,
                                  g_error_new (SIGHT_ERROR,
                                               g_str_equal (kind, "act") || direct
                                               ? SIGHT_ERROR_ACTION_FAILED
                                               : SIGHT_ERROR_ASSERTION_FAILED,
                                               "%s did not hold", kind));
  else if (outcome == OUTCOME_BLOCKED)
    sight_step_result_take_error (result,
                                  g_error_new (SIGHT_ERROR,
                                               direct ? SIGHT_ERROR_STEP_TIMEOUT
                                                      : SIGHT_ERROR_MODEL_UNAVAILABLE,
                                               "%s could not run", kind));
  return result;
}

static const char * const kinds[] = { "do", "act", "assert", "waitFor", "extract" };

/* Every kind of step, passed, failed and blocked, then one cut short, one
 * skipped: each row says what the step did, in a real SQLite file. */
static void
test_each_kind (Fixture       *f,
                gconstpointer  data)
{
  SightRunRecord run = { .kind = (char *) "test", .name = (char *) "Every kind",
                         .url = (char *) "http://127.0.0.1/start" };
  g_autoptr(GError) error = NULL;
  g_autoptr(SightRunRecorder) recorder = sight_run_recorder_open (f->store, &run, &error);
  g_autoptr(SightRunData) stored = NULL;
  g_autoptr(GError) cancelled = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED, "Stopped");
  g_autoptr(JsonObject) options = json_object_new ();
  guint index = 0;

  g_assert_no_error (error);
  g_assert_nonnull (recorder);
  g_assert_true (g_str_has_prefix (sight_run_recorder_get_run_id (recorder), "run_"));

  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    for (Outcome o = OUTCOME_PASS; o <= OUTCOME_BLOCKED; o++)
      {
        g_autoptr(SightStepResult) result = make_result (kinds[k], o);
        static const SightRunVerdict expected[] = {
          SIGHT_RUN_VERDICT_PASS, SIGHT_RUN_VERDICT_FAIL, SIGHT_RUN_VERDICT_ERROR,
        };

        g_assert_cmpuint (sight_run_recorder_get_n_steps (recorder), ==, index);
        sight_run_recorder_step_open (recorder, kinds[k], NULL, result->instruction, NULL);
        g_assert_cmpint (sight_run_recorder_step_result (recorder, result, result->error, NULL),
                         ==, expected[o]);
        index++;
      }

  /* A direct step that typed a secret literally: stored masked. */
  {
    g_autoptr(SightStepResult) result = make_result ("do", OUTCOME_PASS);

    g_free (result->instruction);
    result->instruction = g_strdup ("type \"" SIGHT_DIRECT_SECRET_MASK "\" into Password");
    result->instruction_masked = TRUE;
    sight_run_recorder_step_open (recorder, "do", "type \"hunter2-canary\" into Password",
                                  "type \"hunter2-canary\" into Password", options);
    sight_run_recorder_step_result (recorder, result, NULL, NULL);
  }
  /* Cut short: interrupted, its masked text kept. */
  sight_run_recorder_step_open (recorder, "do", NULL, "type \"hunter2-canary\" into Password",
                                NULL);
  g_assert_cmpint (sight_run_recorder_step_result (recorder, NULL, cancelled,
                                                   "type \"" SIGHT_DIRECT_SECRET_MASK
                                                   "\" into Password"),
                   ==, SIGHT_RUN_VERDICT_INTERRUPTED);
  sight_run_recorder_step_skip (recorder, "assert", NULL, "the badge shows", NULL,
                                "An earlier step failed");

  stored = close_and_load (f, recorder, SIGHT_RUN_VERDICT_FAIL, "ACTION_FAILED");
  g_assert_cmpstr (stored->run->name, ==, "Every kind");
  g_assert_cmpint (stored->run->verdict, ==, SIGHT_RUN_VERDICT_FAIL);
  g_assert_cmpstr (stored->run->code, ==, "ACTION_FAILED");
  g_assert_cmpstr (stored->run->final_url, ==, "http://127.0.0.1/end");
  g_assert_cmpuint (stored->steps->len, ==, index + 3);

  for (guint i = 0; i < index; i++)
    {
      const SightStepRecord *step = g_ptr_array_index (stored->steps, i);
      const char *kind = kinds[i / 3];
      Outcome o = i % 3;
      gboolean direct = g_str_equal (kind, "do");

      g_assert_cmpuint (step->index, ==, i);
      g_assert_cmpstr (step->kind, ==, kind);
      g_assert_true (step->started_at > 0 && step->finished_at >= step->started_at);
      switch (o)
        {
        case OUTCOME_PASS:
          g_assert_cmpint (step->verdict, ==, SIGHT_RUN_VERDICT_PASS);
          g_assert_null (step->code);
          g_assert_true (g_str_has_suffix (step->explanation, " done"));
          break;
        case OUTCOME_FAIL:
          g_assert_cmpint (step->verdict, ==, SIGHT_RUN_VERDICT_FAIL);
          g_assert_cmpstr (step->code, ==, g_str_equal (kind, "act") || direct
                                           ? "ACTION_FAILED" : "ASSERTION_FAILED");
          g_assert_true (g_str_has_suffix (step->explanation, "did not hold"));
          break;
        case OUTCOME_BLOCKED:
          g_assert_cmpint (step->verdict, ==, SIGHT_RUN_VERDICT_ERROR);
          g_assert_cmpstr (step->code, ==, direct ? "STEP_TIMEOUT" : "MODEL_UNAVAILABLE");
          break;
        }
      /* Usage and the trace cache's part for model steps; a direct step spends
       * no model, and its row says so. */
      if (direct)
        {
          g_assert_cmpuint (step->model_calls, ==, 0);
          g_assert_cmpuint (step->actions, ==, 0);
          g_assert_null (step->usage_json);
        }
      else
        {
          g_assert_cmpuint (step->model_calls, ==, 2);
          g_assert_cmpuint (step->actions, ==, 1);
          g_assert_nonnull (strstr (step->usage_json, "\"inputTokens\":1200"));
          g_assert_nonnull (strstr (step->cache_json, "missed"));
        }
    }
  {
    const SightStepRecord *masked = g_ptr_array_index (stored->steps, index);
    const SightStepRecord *cut = g_ptr_array_index (stored->steps, index + 1);
    const SightStepRecord *skipped = g_ptr_array_index (stored->steps, index + 2);

    g_assert_cmpint (masked->verdict, ==, SIGHT_RUN_VERDICT_PASS);
    g_assert_null (strstr (masked->instruction, "hunter2-canary"));
    g_assert_null (strstr (masked->label, "hunter2-canary"));
    g_assert_nonnull (strstr (masked->instruction, SIGHT_DIRECT_SECRET_MASK));
    g_assert_cmpint (cut->verdict, ==, SIGHT_RUN_VERDICT_INTERRUPTED);
    g_assert_cmpstr (cut->explanation, ==, "Interrupted");
    g_assert_null (cut->code);
    g_assert_null (strstr (cut->instruction, "hunter2-canary"));
    g_assert_cmpint (skipped->verdict, ==, SIGHT_RUN_VERDICT_SKIPPED);
    g_assert_cmpstr (skipped->kind, ==, "assert");
    g_assert_cmpstr (skipped->explanation, ==, "An earlier step failed");
  }
}

/* A run interrupted with a step open: both are kept as interrupted. */
static void
test_interrupted (Fixture       *f,
                  gconstpointer  data)
{
  SightRunRecord run = { .kind = (char *) "test", .name = (char *) "Cut short" };
  g_autoptr(GError) error = NULL;
  g_autoptr(SightRunRecorder) recorder = sight_run_recorder_open (f->store, &run, &error);
  g_autoptr(SightRunData) stored = NULL;
  g_autoptr(SightStepResult) result = make_result ("act", OUTCOME_PASS);
  const SightStepRecord *step;

  g_assert_no_error (error);
  sight_run_recorder_step_open (recorder, "load", "load the start page", "about:blank", NULL);
  sight_run_recorder_step_close (recorder, SIGHT_RUN_VERDICT_PASS, NULL, "The start page loaded",
                                 NULL, NULL);
  sight_run_recorder_step_open (recorder, "act", NULL, "Sign in", NULL);
  sight_run_recorder_interrupt (recorder, "The run was interrupted", NULL);
  stored = close_and_load (f, recorder, SIGHT_RUN_VERDICT_INTERRUPTED, NULL);
  g_assert_cmpint (stored->run->verdict, ==, SIGHT_RUN_VERDICT_INTERRUPTED);
  g_assert_cmpuint (stored->steps->len, ==, 2);
  step = g_ptr_array_index (stored->steps, 0);
  g_assert_cmpint (step->verdict, ==, SIGHT_RUN_VERDICT_PASS);
  g_assert_cmpstr (step->label, ==, "load the start page");
  step = g_ptr_array_index (stored->steps, 1);
  g_assert_cmpint (step->verdict, ==, SIGHT_RUN_VERDICT_INTERRUPTED);
  g_assert_cmpstr (step->instruction, ==, "Sign in");
}

static void
async_done_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  GAsyncResult **out = user_data;

  *out = g_object_ref (result);
}

static GAsyncResult *
wait_for (GAsyncResult **result)
{
  gint64 deadline = g_get_monotonic_time () + DEADLINE_US;

  while (*result == NULL && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_nonnull (*result);
  return *result;
}

/* Runs @script in the page (the Sightline world shares its DOM). */
static void
page_run (SightWebPage *page,
          const char   *script)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(JsonNode) value = NULL;
  g_autoptr(GError) error = NULL;

  sight_web_page_evaluate_async (page, script, NULL, 10000, NULL, async_done_cb, &result);
  value = sight_web_page_evaluate_finish (page, wait_for (&result), &error);
  g_assert_no_error (error);
}

/* One passing step, then the page after it, as the suite records it. */
static SightObservation *
record_step (SightRunRecorder *recorder,
             SightWebPage     *page,
             const char       *instruction)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autofree char *evidence = NULL;
  SightObservation *observation = NULL;

  sight_run_recorder_step_open (recorder, "do", NULL, instruction, NULL);
  sight_run_recorder_step_close (recorder, SIGHT_RUN_VERDICT_PASS, NULL, "done", NULL, NULL);
  sight_run_recorder_observe_step_async (recorder, page, SIGHT_OBSERVE_DEFAULT, FALSE, 10000, NULL,
                                         async_done_cb, &result);
  evidence = sight_run_recorder_observe_step_finish (recorder, wait_for (&result), &observation);
  g_assert_null (evidence);
  g_assert_nonnull (observation);
  return observation;
}

static SightObservationRecord *
after_step (SightRunData *data,
            int           index)
{
  for (guint i = 0; i < data->observations->len; i++)
    {
      SightObservationRecord *o = data->observations->pdata[i];

      if (o->step_index == index && g_strcmp0 (o->phase, "after") == 0)
        return o;
    }
  g_assert_not_reached ();
}

/* A step after which the page is as it was recorded last (an expectation)
 * is recorded with that same tree and screenshot, with no new walk: the
 * observation is the one of the step before. A step that changed the page
 * (its DOM, a field's value, the scroll position) gets a new one. */
static void
test_unchanged_page_recorded_again (Fixture       *f,
                                    gconstpointer  data)
{
  SightRunRecord run = { .kind = (char *) "test", .name = (char *) "unchanged" };
  g_autoptr(SightDemoSite) site = sight_demo_site_new ();
  g_autoptr(SightWebPage) page = sight_web_page_new ();
  g_autoptr(SightRunRecorder) recorder = NULL;
  g_autoptr(GAsyncResult) loaded = NULL;
  g_autofree char *url = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SightRunData) stored = NULL;
  g_autoptr(SightObservation) load = NULL;
  g_autoptr(SightObservation) expect = NULL;
  g_autoptr(SightObservation) expect_again = NULL;
  g_autoptr(SightObservation) mutated = NULL;
  g_autoptr(SightObservation) typed = NULL;
  g_autoptr(SightObservation) scrolled = NULL;
  SightObservationRecord *o0, *o1, *o2, *o3;

  g_assert_true (sight_demo_site_start (site, 0, &error));
  g_assert_no_error (error);
  url = g_strconcat (sight_demo_site_get_url (site), "login", NULL);
  sight_web_page_set_viewport (page, 800, 600, 1.0);
  sight_web_page_load_async (page, url, SIGHT_WAIT_UNTIL_LOAD, 10000, NULL, async_done_cb,
                             &loaded);
  g_assert_true (sight_web_page_load_finish (page, wait_for (&loaded), &error));
  g_assert_no_error (error);
  recorder = sight_run_recorder_open (f->store, &run, &error);
  g_assert_no_error (error);

  load = record_step (recorder, page, "load the start page");
  expect = record_step (recorder, page, "expect text \"Sign in\"");
  expect_again = record_step (recorder, page, "expect the Email field visible");
  g_assert_true (expect == load);
  g_assert_true (expect_again == load);

  page_run (page, "const p = document.createElement ('p');\n"
                  "p.textContent = 'Changed';\n"
                  "p.style.cssText = 'height: 3000px; margin: 0; background: red';\n"
                  "document.body.prepend (p);");
  mutated = record_step (recorder, page, "click Change");
  g_assert_true (mutated != load);
  {
    g_autofree char *json = sight_observation_to_json (mutated, FALSE);

    g_assert_nonnull (strstr (json, "Changed"));
  }
  /* a value set with no mutation and no event */
  page_run (page, "document.querySelector ('input').value = 'typed@example.test';");
  typed = record_step (recorder, page, "type into Name");
  g_assert_true (typed != mutated);
  page_run (page, "window.scrollTo (0, 400);");
  scrolled = record_step (recorder, page, "scroll down");
  g_assert_true (scrolled != typed);

  g_clear_pointer (&stored, sight_run_data_free);
  stored = close_and_load (f, recorder, SIGHT_RUN_VERDICT_PASS, NULL);
  o0 = after_step (stored, 0);
  o1 = after_step (stored, 1);
  o2 = after_step (stored, 2);
  o3 = after_step (stored, 3);
  g_assert_nonnull (o0->screenshot);
  g_assert_nonnull (o1->screenshot);
  g_assert_nonnull (o2->screenshot);
  g_assert_true (g_bytes_equal (o0->screenshot, o1->screenshot));
  g_assert_true (g_bytes_equal (o0->screenshot, o2->screenshot));
  g_assert_cmpstr (o0->tree_json, ==, o1->tree_json);
  g_assert_cmpstr (o0->tree_text, ==, o2->tree_text);
  g_assert_cmpstr (o3->tree_json, !=, o0->tree_json);
  g_assert_nonnull (o3->screenshot);
  g_assert_false (g_bytes_equal (o3->screenshot, o0->screenshot));
}

/* The one mapping every runner and the app use. */
static void
test_verdict_mapping (void)
{
  static const struct { SightErrorCode code; SightRunVerdict verdict; } cases[] = {
    { SIGHT_ERROR_ACTION_FAILED, SIGHT_RUN_VERDICT_FAIL },
    { SIGHT_ERROR_ASSERTION_FAILED, SIGHT_RUN_VERDICT_FAIL },
    { SIGHT_ERROR_STEP_TIMEOUT, SIGHT_RUN_VERDICT_ERROR },
    { SIGHT_ERROR_STEP_BUDGET_EXHAUSTED, SIGHT_RUN_VERDICT_ERROR },
    { SIGHT_ERROR_MODEL_UNAVAILABLE, SIGHT_RUN_VERDICT_ERROR },
    { SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE, SIGHT_RUN_VERDICT_ERROR },
    { SIGHT_ERROR_INVALID_ARGUMENT, SIGHT_RUN_VERDICT_ERROR },
    { SIGHT_ERROR_POLICY_DENIED, SIGHT_RUN_VERDICT_ERROR },
  };
  g_autoptr(GError) cancelled = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED, "x");
  g_autoptr(GError) other = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_FAILED, "x");

  g_assert_cmpint (sight_run_verdict_for_error (NULL), ==, SIGHT_RUN_VERDICT_PASS);
  g_assert_cmpint (sight_run_verdict_for_error (cancelled), ==, SIGHT_RUN_VERDICT_INTERRUPTED);
  g_assert_cmpint (sight_run_verdict_for_error (other), ==, SIGHT_RUN_VERDICT_ERROR);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = g_error_new_literal (SIGHT_ERROR, cases[i].code, "x");

      g_assert_cmpint (sight_run_verdict_for_error (error), ==, cases[i].verdict);
    }
}

int
main (int   argc,
      char *argv[])
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add ("/run-recorder/each-kind", Fixture, NULL, fixture_setup, test_each_kind,
              fixture_teardown);
  g_test_add ("/run-recorder/interrupted", Fixture, NULL, fixture_setup, test_interrupted,
              fixture_teardown);
  g_test_add ("/run-recorder/unchanged-page-recorded-again", Fixture, NULL, fixture_setup,
              test_unchanged_page_recorded_again, fixture_teardown);
  g_test_add_func ("/run-recorder/verdict-mapping", test_verdict_mapping);
  return g_test_run ();
}
