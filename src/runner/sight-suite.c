/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-suite"

#include "config.h"

#include "sight-suite.h"

#include <string.h>

#include "sight-agent.h"
#include "sight-error.h"
#include "sight-observation.h"
#include "sight-page-guard.h"
#include "sight-flow-step.h"
#include "sight-model-config.h"
#include "sight-project.h"
#include "sight-report.h"
#include "sight-run-recorder.h"
#include "sight-scrape.h"
#include "sight-step-executor.h"
#include "sight-step-request.h"
#include "sight-tool-args.h"
#include "sight-trace-cache.h"
#include "sight-web-page.h"

#define LOAD_TIMEOUT_MS 30000
#define DO_TIMEOUT_MS 15000
#define OBSERVE_TIMEOUT_MS 10000
#define MAX_WORKERS 16
#define MAX_RETRIES 10
#define MAX_SHARDS 1000

static const char * const suite_args[] = {
  "workers", "shard", "retries", "grep", "baseUrl", "project", NULL
};

typedef struct _Suite Suite;

/* One test of the suite and what its attempts gave. */
typedef struct {
  SightTestFile *file;          /* borrowed from the caller's array */
  SightProject  *project;
  char          *url;           /* resolved; NULL: start on about:blank */
  JsonArray     *attempts;
  guint          n_attempts;
  gint64         started;
  gint64         finished;
} Test;

typedef struct _Attempt Attempt;

/* Where an attempt's time goes, for its result's "phases" (the benches'
 * breakdown): opening its run and page, loading the start page, running the
 * steps, observing the page after each, and closing the run. */
typedef enum {
  PHASE_SETUP,
  PHASE_LOAD,
  PHASE_STEPS,
  PHASE_OBSERVE,
  PHASE_CLOSE,
  N_PHASES
} Phase;

static const char * const phase_names[N_PHASES] = {
  "setupMs", "loadMs", "stepsMs", "observeMs", "closeMs"
};

/* One attempt of one test, as one stored run. */
struct _Attempt {
  Suite            *suite;        /* NULL: a test run on its own (sight_test_run_async) */
  GTask            *task;         /* of a test run on its own */
  Test             *test;
  SightStore       *store;
  GCancellable     *cancellable;
  SightRunRecorder *recorder;
  SightWebPage     *page;
  SightAgent       *agent;
  SightTestStepFunc on_step;
  gpointer          on_step_data;
  void            (*done) (Attempt *attempt, JsonObject *result);
  char             *run_id;
  guint             step;         /* the next step of the file */
  gint64            started;      /* monotonic */
  gint64            deadline;     /* monotonic */
  Phase             phase;        /* the one the time since phase_since goes to */
  gint64            phase_since;  /* monotonic */
  gint64            phase_us[N_PHASES];
  gboolean          loaded;
  gboolean          borrowed_page; /* the caller's: guarded only while the test runs */
  gboolean          stopped;      /* a step failed: the rest are skipped */
  gboolean          released;     /* its worker went on to the next test */
  SightRunVerdict   verdict;
  SightErrorCode    code;
  char             *explanation;
  char             *failed_step;
  const char       *skip_reason;  /* why the steps after a stop are skipped */
};

struct _Suite {
  SightStore   *store;
  GTask        *task;
  GPtrArray    *tests;          /* Test, the selected ones in order */
  GQueue        queue;          /* Test * waiting for an attempt */
  guint         workers;
  guint         retries;
  guint         running;        /* tests holding a worker */
  guint         alive;          /* attempts not done (holding a worker or finishing) */
  guint         total;          /* before grep and shard */
  guint         shard_index;    /* 0: no shard */
  guint         shard_total;
  char         *grep;
  gint64        started;        /* real time */
  GPtrArray    *spares;         /* Spare: the next tests' pages (one per worker) */
  SightSuiteProgressFunc progress;
  gpointer      progress_data;
};

static void
test_free (Test *test)
{
  g_clear_pointer (&test->project, sight_project_unref);
  g_free (test->url);
  g_clear_pointer (&test->attempts, json_array_unref);
  g_free (test);
}


static void
suite_free (Suite *suite)
{
  g_clear_pointer (&suite->spares, g_ptr_array_unref);
  g_clear_object (&suite->store);
  g_clear_pointer (&suite->tests, g_ptr_array_unref);
  g_queue_clear (&suite->queue);
  g_free (suite->grep);
  g_free (suite);
}

static void
attempt_free (Attempt *attempt)
{
  g_clear_object (&attempt->recorder);
  g_clear_object (&attempt->store);
  g_clear_object (&attempt->cancellable);
  g_clear_object (&attempt->agent);
  g_clear_object (&attempt->page);
  g_free (attempt->run_id);
  g_free (attempt->explanation);
  g_free (attempt->failed_step);
  g_free (attempt);
}

static void attempt_next (Attempt *attempt);
static void suite_pump (Suite *suite);
static JsonObject *test_result (Test *test);
static void spare_fill (Suite *suite);

/* The time since the last change goes to the phase that ends. */
static void
phase_enter (Attempt *attempt,
             Phase    phase)
{
  gint64 now = g_get_monotonic_time ();

  attempt->phase_us[attempt->phase] += now - attempt->phase_since;
  attempt->phase = phase;
  attempt->phase_since = now;
}

static gint64
remaining_ms (Attempt *attempt)
{
  return MAX (0, (attempt->deadline - g_get_monotonic_time ()) / 1000);
}

static guint
capped_ms (Attempt *attempt,
           gint64   limit)
{
  return (guint) CLAMP (MIN (limit, remaining_ms (attempt)), 1, G_MAXINT);
}

/* ------------------------------------------------------------ step records */

static SightErrorCode
error_code_of (const GError *error)
{
  return error != NULL && error->domain == SIGHT_ERROR ? (SightErrorCode) error->code
                                                       : SIGHT_ERROR_INTERNAL;
}

/* The test stops at its first step that failed (or could not run): the
 * attempt keeps which, and why. */
static void
note_step (Attempt         *attempt,
           SightRunVerdict  verdict,
           const GError    *error,
           const char      *explanation,
           guint            index,
           const char      *what)
{
  if ((verdict == SIGHT_RUN_VERDICT_FAIL || verdict == SIGHT_RUN_VERDICT_ERROR) &&
      !attempt->stopped)
    {
      attempt->stopped = TRUE;
      attempt->verdict = verdict;
      attempt->code = error != NULL ? error_code_of (error) : SIGHT_ERROR_ASSERTION_FAILED;
      attempt->explanation = g_strdup (error != NULL ? error->message : explanation);
      attempt->failed_step = g_strdup_printf ("Step %u (%s)", index + 1, what);
    }
}

static void
step_close (Attempt         *attempt,
            SightRunVerdict  verdict,
            const GError    *error,
            const char      *explanation,
            const char      *what)
{
  guint index = sight_run_recorder_get_n_steps (attempt->recorder);

  verdict = sight_run_recorder_step_close (attempt->recorder, verdict, error, explanation, NULL,
                                           NULL);
  note_step (attempt, verdict, error, explanation, index, what);
}

/* Tells the caller of a test run on its own how step @index went: a result
 * for a step that ended without one (it did not open, the time ran out). */
static void
report_step (Attempt         *attempt,
             int              index,
             SightStepResult *result,
             const GError    *error)
{
  g_autoptr(SightStepResult) made = NULL;

  if (attempt->on_step == NULL)
    return;
  if (result == NULL)
    {
      SightTestStep *step = index >= 0 ? g_ptr_array_index (attempt->test->file->steps, index)
                                       : NULL;

      made = result = sight_step_result_new (SIGHT_STEP_ACT, step ? step->instruction : "");
      result->direct = step == NULL || step->kind == SIGHT_TEST_STEP_DO;
      if (error != NULL)
        sight_step_result_take_error (result, g_error_copy (error));
    }
  attempt->on_step (index, result, attempt->on_step_data);
}

/* What the page looked like after the step, kept for the report (and, for
 * a failed assertion, as its evidence), then the step is told and the next
 * one starts. */
typedef struct {
  Attempt         *attempt;
  SightStepResult *outcome;     /* to tell (NULL: nothing) */
  int              index;
} AfterStep;

static void
after_step_observed_cb (GObject      *source,
                        GAsyncResult *result,
                        gpointer      user_data)
{
  AfterStep *after = user_data;
  Attempt *attempt = after->attempt;
  g_autofree char *evidence = sight_run_recorder_observe_step_finish (SIGHT_RUN_RECORDER (source),
                                                                      result, NULL);

  if (after->outcome != NULL)
    {
      if (evidence != NULL)
        {
          g_free (after->outcome->screenshot_path);
          after->outcome->screenshot_path = g_steal_pointer (&evidence);
        }
      report_step (attempt, after->index, after->outcome, NULL);
      sight_step_result_unref (after->outcome);
    }
  g_free (after);
  attempt_next (attempt);
}

static void
observe_then_next (Attempt         *attempt,
                   SightStepResult *outcome,
                   int              index)
{
  AfterStep *after;

  if (remaining_ms (attempt) < 1)
    {
      if (outcome != NULL)
        report_step (attempt, index, outcome, NULL);
      attempt_next (attempt);
      return;
    }
  phase_enter (attempt, PHASE_OBSERVE);
  after = g_new0 (AfterStep, 1);
  after->attempt = attempt;
  after->outcome = outcome != NULL ? sight_step_result_ref (outcome) : NULL;
  after->index = index;
  sight_run_recorder_observe_step_async (attempt->recorder, attempt->page, SIGHT_OBSERVE_DEFAULT,
                                         attempt->agent != NULL &&
                                         sight_agent_get_secret_filled (attempt->agent),
                                         capped_ms (attempt, OBSERVE_TIMEOUT_MS),
                                         attempt->cancellable, after_step_observed_cb, after);
}

/* ------------------------------------------------------------------ steps */

static void
loaded_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  Attempt *attempt = user_data;
  g_autoptr(GError) error = NULL;
  gboolean loaded;
  guint status;

  loaded = sight_web_page_load_finish (SIGHT_WEB_PAGE (source), result, &error);
  if (attempt->suite != NULL && !g_cancellable_is_cancelled (attempt->cancellable))
    spare_fill (attempt->suite);
  if (!loaded)
    {
      /* The test could not start: not a product failure. */
      if (error_code_of (error) == SIGHT_ERROR_ACTION_FAILED)
        error->code = SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE;
      step_close (attempt, SIGHT_RUN_VERDICT_ERROR, error, NULL, "load the start page");
      report_step (attempt, -1, NULL, error);
      attempt_next (attempt);
      return;
    }
  status = sight_page_status_code (attempt->page);
  if (status >= 400)
    {
      g_autoptr(GError) http = g_error_new (SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                            "The start page answered with HTTP status %u",
                                            status);

      step_close (attempt, SIGHT_RUN_VERDICT_ERROR, http, NULL, "load the start page");
      report_step (attempt, -1, NULL, http);
    }
  else
    {
      attempt->loaded = TRUE;
      step_close (attempt, SIGHT_RUN_VERDICT_PASS, NULL, "The start page loaded",
                  "load the start page");
    }
  observe_then_next (attempt, NULL, -1);
}

static const char *
step_what (SightTestStep *step)
{
  return sight_test_step_kind_to_string (step->kind);
}

static void
executed_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  Attempt *attempt = user_data;
  SightTestStep *step = g_ptr_array_index (attempt->test->file->steps, attempt->step - 1);
  g_autoptr(GError) error = NULL;
  g_autoptr(SightStepResult) outcome = sight_step_execute_finish (result, &error);
  guint index = sight_run_recorder_get_n_steps (attempt->recorder);
  SightRunVerdict verdict;

  verdict = sight_run_recorder_step_result (attempt->recorder, outcome, error,
                                            sight_step_execute_get_masked_instruction (result));
  if (outcome == NULL)
    {
      attempt_next (attempt);
      return;
    }
  note_step (attempt, verdict, outcome->error, NULL, index, step_what (step));
  observe_then_next (attempt, outcome, (int) attempt->step - 1);
}

static void
run_step (Attempt       *attempt,
          SightTestStep *step)
{
  SightProject *project = attempt->test->project;
  g_autoptr(SightStepRequest) request = NULL;
  g_autoptr(GError) error = NULL;
  gint64 action = sight_project_get_action_timeout (project);

  phase_enter (attempt, PHASE_STEPS);
  sight_run_recorder_step_open (attempt->recorder, step_what (step), NULL, step->instruction,
                                step->options);
  request = sight_step_request_new_for_kind (project, step_what (step), step->instruction,
                                             step->options, attempt->test->file->agent,
                                             remaining_ms (attempt),
                                             capped_ms (attempt,
                                                        action > 0 ? action : DO_TIMEOUT_MS),
                                             &error);
  if (request == NULL)
    {
      step_close (attempt, SIGHT_RUN_VERDICT_ERROR, error, NULL, step_what (step));
      report_step (attempt, (int) attempt->step - 1, NULL, error);
      attempt_next (attempt);
      return;
    }
  if (attempt->agent == NULL)
    attempt->agent = sight_agent_new (project, attempt->page);
  sight_step_execute_async (attempt->agent, g_steal_pointer (&request), attempt->cancellable,
                            executed_cb, attempt);
}

/* ---------------------------------------------------------------- the end */

/* The attempt's entry of a test's "attempts". */
static JsonObject *
attempt_json (Attempt      *attempt,
              SightRunData *data)
{
  JsonObject *object = json_object_new ();
  JsonObject *phases = json_object_new ();

  phase_enter (attempt, attempt->phase);
  for (guint i = 0; i < N_PHASES; i++)
    json_object_set_int_member (phases, phase_names[i], attempt->phase_us[i] / 1000);
  json_object_set_string_member (object, "runId", attempt->run_id);
  json_object_set_string_member (object, "verdict", sight_run_verdict_to_string (attempt->verdict));
  if (attempt->verdict != SIGHT_RUN_VERDICT_PASS)
    {
      json_object_set_string_member (object, "code", sight_error_code_to_string (attempt->code));
      if (attempt->explanation != NULL)
        json_object_set_string_member (object, "explanation", attempt->explanation);
      if (attempt->failed_step != NULL)
        json_object_set_string_member (object, "failedStep", attempt->failed_step);
    }
  json_object_set_int_member (object, "ms",
                              (g_get_monotonic_time () - attempt->started) / 1000);
  json_object_set_object_member (object, "phases", phases);
  if (data != NULL)
    json_object_set_member (object, "report", sight_report_to_json (data));
  return object;
}

static void
attempt_done (Attempt      *attempt,
              SightRunData *data)
{
  JsonObject *object = attempt_json (attempt, data);

  attempt->done (attempt, object);
}

/* The attempt's worker is free for the next test (once). */
static void
worker_release (Attempt *attempt)
{
  if (attempt->suite != NULL && !attempt->released)
    {
      attempt->released = TRUE;
      attempt->suite->running--;
    }
}

/* The suite's end of an attempt: the test is retried or done. */
static void
suite_attempt_done (Attempt    *attempt,
                    JsonObject *object)
{
  Suite *suite = attempt->suite;
  Test *test = attempt->test;

  json_array_add_object_element (test->attempts, object);
  test->n_attempts++;
  test->finished = g_get_real_time ();

  suite->alive--;
  worker_release (attempt);
  /* Retry what may pass another time; a missing model or a bad argument
   * will not. */
  if (attempt->verdict != SIGHT_RUN_VERDICT_PASS && test->n_attempts <= suite->retries &&
      !g_cancellable_is_cancelled (g_task_get_cancellable (suite->task)) &&
      (attempt->verdict == SIGHT_RUN_VERDICT_FAIL ||
       attempt->code == SIGHT_ERROR_STEP_TIMEOUT ||
       attempt->code == SIGHT_ERROR_STEP_BUDGET_EXHAUSTED ||
       attempt->code == SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE ||
       attempt->code == SIGHT_ERROR_MODEL_OUTPUT_INVALID ||
       attempt->code == SIGHT_ERROR_INTERNAL))
    g_queue_push_head (&suite->queue, test);
  else if (suite->progress != NULL)
    {
      g_autoptr(JsonObject) entry = test_result (test);

      suite->progress (entry, suite->progress_data);
    }
  attempt_free (attempt);
  suite_pump (suite);
}

static void
run_loaded_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  Attempt *attempt = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(SightRunData) data = sight_store_load_run_finish (SIGHT_STORE (source), result,
                                                               &error);

  if (data == NULL)
    g_warning ("Could not read back run %s: %s", attempt->run_id, error->message);
  attempt_done (attempt, data);
}

static void
run_finished_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  Attempt *attempt = user_data;
  g_autoptr(GError) error = NULL;

  /* A run the store could not keep is an error whatever its steps said;
   * what it kept still goes into the report. */
  if (!sight_store_write_finish (SIGHT_STORE (source), result, &error))
    {
      attempt->stopped = TRUE;
      attempt->verdict = SIGHT_RUN_VERDICT_ERROR;
      attempt->code = error->domain == SIGHT_ERROR ? (SightErrorCode) error->code
                                                   : SIGHT_ERROR_INTERNAL;
      g_free (attempt->explanation);
      attempt->explanation = g_strdup (error->message);
      g_clear_pointer (&attempt->failed_step, g_free);
    }
  sight_store_load_run_async (attempt->store, attempt->run_id, NULL, run_loaded_cb, attempt);
}

static void
attempt_finish (Attempt *attempt)
{
  phase_enter (attempt, PHASE_CLOSE);
  sight_run_recorder_store_log (attempt->recorder, attempt->page);
  /* The steps are over: while the run is finished (the last step's
   * screenshot, the store), the worker starts the next test. A retry of
   * this one waits for its verdict, so it comes after. */
  if (attempt->suite != NULL)
    {
      worker_release (attempt);
      suite_pump (attempt->suite);
    }
  if (attempt->borrowed_page)
    sight_web_page_set_allowed_origins (attempt->page, NULL, NULL);
  if (!attempt->stopped)
    attempt->verdict = SIGHT_RUN_VERDICT_PASS;
  sight_run_recorder_close (attempt->recorder, attempt->verdict,
                            sight_error_code_to_string (attempt->code), attempt->explanation,
                            attempt->page ? sight_web_page_get_uri (attempt->page) : NULL,
                            run_finished_cb, attempt);
}

static void
attempt_next (Attempt *attempt)
{
  GPtrArray *steps = attempt->test->file->steps;
  GCancellable *cancellable = attempt->cancellable;
  SightTestStep *step;

  /* Cancelled (the command was interrupted): the rest is skipped and the run
   * recorded as interrupted, whatever the step in flight said. */
  if (g_cancellable_is_cancelled (cancellable) &&
      attempt->verdict != SIGHT_RUN_VERDICT_INTERRUPTED)
    {
      attempt->stopped = TRUE;
      attempt->verdict = SIGHT_RUN_VERDICT_INTERRUPTED;
      attempt->code = SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE;
      g_free (attempt->explanation);
      attempt->explanation = g_strdup ("The run was interrupted before this test finished");
    }
  if (attempt->step >= steps->len)
    {
      attempt_finish (attempt);
      return;
    }
  step = g_ptr_array_index (steps, attempt->step++);
  if (attempt->stopped)
    {
      sight_run_recorder_step_skip (attempt->recorder, step_what (step), NULL, step->instruction,
                                    step->options,
                                    attempt->skip_reason ? attempt->skip_reason
                                    : attempt->loaded ? "An earlier step failed"
                                                      : "The start page did not load");
      attempt_next (attempt);
      return;
    }
  if (remaining_ms (attempt) < 1)
    {
      g_autoptr(GError) error = g_error_new (SIGHT_ERROR, SIGHT_ERROR_STEP_TIMEOUT,
                                             "The test's time (%" G_GINT64_FORMAT " ms) ran out "
                                             "before this step",
                                             (attempt->deadline - attempt->started) / 1000);

      sight_run_recorder_step_open (attempt->recorder, step_what (step), NULL,
                                    step->instruction, step->options);
      step_close (attempt, SIGHT_RUN_VERDICT_ERROR, error, NULL, step_what (step));
      report_step (attempt, (int) attempt->step - 1, NULL, error);
      attempt_next (attempt);
      return;
    }
  run_step (attempt, step);
}

gboolean
sight_test_check_model (SightTestFile  *file,
                        SightProject   *project,
                        SightAgent     *agent,
                        GError        **error)
{
  const char *dir = sight_project_get_trace_cache_dir (project);
  g_autoptr(SightTraceCache) cache = dir != NULL ? sight_trace_cache_new (dir) : NULL;

  g_return_val_if_fail (file != NULL, FALSE);
  g_return_val_if_fail (project != NULL, FALSE);

  if (agent != NULL && sight_agent_get_provider (agent) != NULL)
    return TRUE;
  for (guint i = 0; i < file->steps->len; i++)
    {
      SightTestStep *step = g_ptr_array_index (file->steps, i);
      g_autoptr(SightStepRequest) request = NULL;
      g_autoptr(SightModelProvider) provider = NULL;
      g_autoptr(GError) why = NULL;
      g_autofree char *line = NULL;
      const SightAgentConfig *config;

      if (step->kind == SIGHT_TEST_STEP_DO)
        continue;
      request = sight_step_request_new_for_kind (project, step_what (step), step->instruction,
                                                 step->options, file->agent, -1, 1, NULL);
      if (request == NULL)
        continue;
      config = request->limits.agent;
      /* The agent's own executor carries it out: no model needed. */
      if (sight_agent_config_dispatches (config, request->limits.kind))
        continue;
      provider = sight_model_provider_new_for_agent_config (config, &why);
      if (provider != NULL)
        continue;
      if (request->limits.kind == SIGHT_STEP_ACT && cache != NULL &&
          sight_trace_cache_has_trace_for (cache,
                                           config != NULL && config->name ? config->name
                                                                          : "default",
                                           request->instruction, request->options->params))
        continue;
      if (step->line > 0)
        line = g_strdup_printf (", line %u", step->line);
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE,
                   "No step ran: step %u of the test (%s%s) needs a model, and %s. A direct "
                   "step (do) needs none, nor does an act that the trace cache can replay",
                   i + 1, step_what (step), line != NULL ? line : "",
                   why != NULL ? why->message : "none is configured");
      return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------ spare page */

/* A new page's first load waits for its web process to start (bubblewrap,
 * then the process itself): about a third of a short test. So while a test
 * runs, the page of the test after it starts its web process on about:blank,
 * from which the start page's load stays in the same process. Each test
 * still has a page of its own, with its own ephemeral network session: no
 * cookie, storage or cache of one test reaches another.
 *
 * A spare belongs to the suite's list of spares until a test takes its page
 * or the suite lets go of it. Let go of while its warm-up load is in flight,
 * it is ended by that load's callback, once the load is over (a view closed
 * while it loads takes GTK's window with it mid-signal). */
typedef struct {
  SightWebPage *page;
  GCancellable *cancellable;    /* of the warm-up load */
  gboolean      warming;        /* the warm-up load is in flight */
  gboolean      ready;          /* it finished: the web process is up */
  gboolean      dropped;        /* let go of while warming: the callback ends it */
} Spare;

static void
spare_end (Spare *spare)
{
  g_clear_object (&spare->page);
  g_clear_object (&spare->cancellable);
  g_free (spare);
}

/* The suite lets go of @spare (its list's free function). */
static void
spare_free (Spare *spare)
{
  if (spare->warming)
    {
      spare->dropped = TRUE;
      g_cancellable_cancel (spare->cancellable);
      return;
    }
  spare_end (spare);
}

static void
spare_warmed_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  Spare *spare = user_data;
  g_autoptr(GError) error = NULL;
  gboolean warmed = sight_web_page_load_finish (SIGHT_WEB_PAGE (source), result, &error);

  spare->warming = FALSE;
  if (spare->dropped)
    {
      spare_end (spare);
      return;
    }
  /* Failed: the spare stays unready, and a test makes a new page instead. */
  if (!warmed)
    g_debug ("The spare page did not warm up: %s", error->message);
  spare->ready = warmed;
}

static void
spare_make (Suite *suite)
{
  Spare *spare = g_new0 (Spare, 1);

  spare->page = sight_web_page_new ();
  spare->cancellable = g_cancellable_new ();
  spare->warming = TRUE;
  g_ptr_array_add (suite->spares, spare);
  sight_web_page_load_async (spare->page, "about:blank", SIGHT_WAIT_UNTIL_LOAD, LOAD_TIMEOUT_MS,
                             spare->cancellable, spare_warmed_cb, spare);
}

/* Spares for the tests after the ones running, one for each worker while
 * tests wait. Called once a test's start page has loaded: a spare's new web
 * process started with that load would compete with it for the CPU. */
static void
spare_fill (Suite *suite)
{
  guint wanted = MIN (MAX (suite->workers, 1), g_queue_get_length (&suite->queue));

  while (suite->spares->len < wanted)
    spare_make (suite);
}

/* The page of a warm spare for the test starting now, else a new one (the
 * test's load must not meet about:blank's commit). */
static SightWebPage *
spare_take (Suite *suite)
{
  SightWebPage *page = NULL;

  for (guint i = 0; i < suite->spares->len && page == NULL; i++)
    {
      Spare *spare = g_ptr_array_index (suite->spares, i);

      if (spare->ready)
        {
          page = g_steal_pointer (&spare->page);
          g_ptr_array_remove_index (suite->spares, i);
        }
    }
  if (page == NULL)
    page = sight_web_page_new ();
  return page;
}

/* What the suite started ends with it: a spare no test took is closed. */
static void
spare_drop (Suite *suite)
{
  if (suite->spares != NULL)
    g_ptr_array_set_size (suite->spares, 0);
}

/* Starts an attempt of @test on @page (NULL: a page of its own), recorded
 * in @store; @notes go with the stored run. */
static void
attempt_begin (Attempt      *attempt,
               SightWebPage *page,
               const char   *notes[])
{
  Test *test = attempt->test;
  SightRunRecord run = { 0 };
  g_autoptr(GError) error = NULL;
  gint64 timeout = test->file->timeout_ms > 0 ? test->file->timeout_ms
                                               : sight_project_get_timeout (test->project);

  attempt->started = g_get_monotonic_time ();
  attempt->phase = PHASE_SETUP;
  attempt->phase_since = attempt->started;
  attempt->deadline = attempt->started + timeout * 1000;

  run.kind = (char *) "test";
  run.name = test->file->name;
  run.url = test->url;
  run.notes = (char **) notes;
  attempt->recorder = sight_run_recorder_open (attempt->store, &run, &error);
  if (attempt->recorder == NULL)
    {
      /* Without the store there is nothing to report into: the result
       * says why. */
      g_debug ("Could not open a run: %s", error->message);
      attempt->stopped = TRUE;
      attempt->verdict = SIGHT_RUN_VERDICT_ERROR;
      attempt->code = SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE;
      attempt->explanation = g_strdup (error->message);
      attempt_done (attempt, NULL);
      return;
    }
  attempt->run_id = g_strdup (sight_run_recorder_get_run_id (attempt->recorder));

  /* Without the model a step needs, nothing runs: not even the direct steps
   * before it. */
  if (!sight_test_check_model (test->file, test->project, attempt->agent, &error))
    {
      attempt->stopped = TRUE;
      attempt->verdict = SIGHT_RUN_VERDICT_ERROR;
      attempt->code = SIGHT_ERROR_MODEL_UNAVAILABLE;
      attempt->explanation = g_strdup (error->message);
      attempt->skip_reason = "Not run: the test needs a model that is not configured";
      sight_run_recorder_step_skip (attempt->recorder, "load", "load the start page",
                                    test->url ? test->url : "about:blank", NULL,
                                    attempt->skip_reason);
      attempt_next (attempt);
      return;
    }

  attempt->page = page != NULL ? g_object_ref (page)
                 : attempt->suite != NULL ? spare_take (attempt->suite)
                                          : sight_web_page_new ();
  attempt->borrowed_page = page != NULL;
  sight_page_guard (attempt->page, test->project, test->url, NULL, NULL);
  phase_enter (attempt, PHASE_LOAD);
  sight_run_recorder_step_open (attempt->recorder, "load", "load the start page",
                                test->url ? test->url : "about:blank", NULL);
  sight_web_page_load_async (attempt->page, test->url ? test->url : "about:blank",
                             SIGHT_WAIT_UNTIL_LOAD, capped_ms (attempt, LOAD_TIMEOUT_MS),
                             attempt->cancellable, loaded_cb, attempt);
}

static void
attempt_start (Suite *suite,
               Test  *test)
{
  Attempt *attempt = g_new0 (Attempt, 1);
  g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func (g_free);

  suite->alive++;
  attempt->suite = suite;
  attempt->test = test;
  attempt->store = g_object_ref (suite->store);
  g_set_object (&attempt->cancellable, g_task_get_cancellable (suite->task));
  attempt->done = suite_attempt_done;
  if (test->n_attempts == 0)
    test->started = g_get_real_time ();

  g_ptr_array_add (notes, g_strdup_printf ("Test file: %s", test->file->path));
  if (suite->retries > 0)
    g_ptr_array_add (notes, g_strdup_printf ("Attempt %u of at most %u", test->n_attempts + 1,
                                             suite->retries + 1));
  g_ptr_array_add (notes, NULL);
  attempt_begin (attempt, NULL, (const char **) notes->pdata);
}

/* ------------------------------------------------------- one test alone */

static void
test_attempt_done (Attempt    *attempt,
                   JsonObject *object)
{
  g_autoptr(GTask) task = g_steal_pointer (&attempt->task);

  g_task_return_pointer (task, object, (GDestroyNotify) json_object_unref);
}

static void
test_task_data_free (Attempt *attempt)
{
  test_free (attempt->test);
  attempt_free (attempt);
}

void
sight_test_run_async (SightStore          *store,
                      SightTestFile       *file,
                      SightProject        *project,
                      const char          *url,
                      SightAgent          *agent,
                      SightTestStepFunc    on_step,
                      gpointer             on_step_data,
                      GCancellable        *cancellable,
                      GAsyncReadyCallback  callback,
                      gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  g_autofree char *note = NULL;
  const char *notes[2] = { NULL, NULL };
  Attempt *attempt;
  Test *test;

  g_return_if_fail (SIGHT_IS_STORE (store));
  g_return_if_fail (file != NULL);
  g_return_if_fail (project != NULL);
  g_return_if_fail (agent == NULL || SIGHT_IS_AGENT (agent));

  g_task_set_source_tag (task, sight_test_run_async);
  g_task_set_check_cancellable (task, FALSE);
  test = g_new0 (Test, 1);
  test->file = file;
  test->project = sight_project_ref (project);
  test->url = g_strdup (url);
  test->attempts = json_array_new ();
  test->started = g_get_real_time ();
  attempt = g_new0 (Attempt, 1);
  attempt->test = test;
  attempt->store = g_object_ref (store);
  g_set_object (&attempt->cancellable, cancellable);
  g_set_object (&attempt->agent, agent);
  attempt->on_step = on_step;
  attempt->on_step_data = on_step_data;
  attempt->done = test_attempt_done;
  g_task_set_task_data (task, attempt, (GDestroyNotify) test_task_data_free);
  attempt->task = g_object_ref (task);
  if (file->path != NULL)
    notes[0] = note = g_strdup_printf ("Test file: %s", file->path);
  attempt_begin (attempt, agent != NULL ? sight_agent_get_page (agent) : NULL, notes);
}

JsonObject *
sight_test_run_finish (GAsyncResult  *result,
                       GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ----------------------------------------------------------------- result */

/* The failure evidence of an attempt: the screenshot path its report gives
 * a step, or NULL. */
static const char *
attempt_evidence (JsonObject *attempt)
{
  /* An attempt that never opened its run (a busy database) has no report. */
  JsonObject *report = json_object_has_member (attempt, "report")
                       ? json_object_get_object_member (attempt, "report") : NULL;
  JsonArray *steps = report != NULL && json_object_has_member (report, "steps")
                     ? json_object_get_array_member (report, "steps") : NULL;

  for (guint i = 0; steps != NULL && i < json_array_get_length (steps); i++)
    {
      JsonObject *step = json_array_get_object_element (steps, i);

      if (step != NULL && json_object_has_member (step, "screenshot"))
        return json_object_get_string_member (step, "screenshot");
    }
  return NULL;
}

static JsonObject *
test_result (Test *test)
{
  JsonObject *object = json_object_new ();
  guint n = json_array_get_length (test->attempts);
  JsonObject *last = n > 0 ? json_array_get_object_element (test->attempts, n - 1) : NULL;
  const char *verdict = last ? json_object_get_string_member (last, "verdict") : "error";

  json_object_set_string_member (object, "file", test->file->path);
  json_object_set_string_member (object, "name", test->file->name);
  if (test->url != NULL)
    json_object_set_string_member (object, "url", test->url);
  if (last == NULL)
    {
      json_object_set_string_member (object, "code", "ENVIRONMENT_UNAVAILABLE");
      json_object_set_string_member (object, "explanation",
                                     "Not run: the run was interrupted before this test started");
    }
  if (g_str_equal (verdict, "pass"))
    json_object_set_string_member (object, "verdict", n > 1 ? "flaky" : "pass");
  else
    json_object_set_string_member (object, "verdict",
                                   g_str_equal (verdict, "fail") ? "fail" : "error");
  if (g_str_equal (verdict, "interrupted"))
    json_object_set_boolean_member (object, "interrupted", TRUE);
  if (last != NULL && !g_str_equal (verdict, "pass"))
    {
      const char *screenshot = attempt_evidence (last);

      for (guint i = 0; i < 3; i++)
        {
          static const char * const members[] = { "code", "explanation", "failedStep" };

          if (json_object_has_member (last, members[i]))
            json_object_set_string_member (object, members[i],
                                           json_object_get_string_member (last, members[i]));
        }
      if (screenshot != NULL)
        json_object_set_string_member (object, "screenshot", screenshot);
    }
  json_object_set_int_member (object, "ms", MAX (0, test->finished - test->started) / 1000);
  json_object_set_array_member (object, "attempts", json_array_ref (test->attempts));
  return object;
}

static char *
iso_now (gint64 t)
{
  g_autoptr(GDateTime) dt = g_date_time_new_from_unix_utc (t / G_USEC_PER_SEC);

  return g_date_time_format (dt, "%Y-%m-%dT%H:%M:%SZ");
}

/* Counts, verdict and exit status from the "tests" array of @result. */
static void
summarize (JsonObject *result)
{
  JsonArray *tests = json_object_get_array_member (result, "tests");
  JsonObject *counts = json_object_new ();
  guint passed = 0, flaky = 0, failed = 0, errors = 0;

  for (guint i = 0; i < json_array_get_length (tests); i++)
    {
      const char *verdict = json_object_get_string_member (json_array_get_object_element (tests, i),
                                                           "verdict");

      if (g_str_equal (verdict, "pass"))
        passed++;
      else if (g_str_equal (verdict, "flaky"))
        flaky++;
      else if (g_str_equal (verdict, "fail"))
        failed++;
      else
        errors++;
    }
  json_object_set_int_member (counts, "tests", json_array_get_length (tests));
  json_object_set_int_member (counts, "passed", passed);
  json_object_set_int_member (counts, "flaky", flaky);
  json_object_set_int_member (counts, "failed", failed);
  json_object_set_int_member (counts, "errors", errors);
  json_object_set_object_member (result, "counts", counts);
  json_object_set_string_member (result, "verdict",
                                 failed > 0 ? "fail" : errors > 0 ? "error" : "pass");
  json_object_set_int_member (result, "exitStatus", sight_suite_exit_status (result));
}

static void
suite_return (Suite *suite)
{
  g_autoptr(GTask) task = suite->task;
  JsonObject *result = json_object_new ();
  JsonArray *tests = json_array_new ();
  JsonNode *root;
  gint64 now = g_get_real_time ();
  g_autofree char *started = iso_now (suite->started);
  g_autofree char *finished = iso_now (now);

  suite->task = NULL;
  spare_drop (suite);
  for (guint i = 0; i < suite->tests->len; i++)
    json_array_add_object_element (tests, test_result (g_ptr_array_index (suite->tests, i)));
  json_object_set_string_member (result, "kind", "sightline-suite");
  json_object_set_int_member (result, "version", 1);
  json_object_set_string_member (result, "startedAt", started);
  json_object_set_string_member (result, "finishedAt", finished);
  json_object_set_int_member (result, "ms", (now - suite->started) / 1000);
  json_object_set_int_member (result, "workers", suite->workers);
  json_object_set_int_member (result, "retries", suite->retries);
  if (suite->shard_total > 0)
    {
      JsonObject *shard = json_object_new ();

      json_object_set_int_member (shard, "index", suite->shard_index);
      json_object_set_int_member (shard, "total", suite->shard_total);
      json_object_set_object_member (result, "shard", shard);
    }
  if (suite->grep != NULL)
    json_object_set_string_member (result, "grep", suite->grep);
  json_object_set_int_member (result, "total", suite->total);
  json_object_set_int_member (result, "selected", suite->tests->len);
  if (g_cancellable_is_cancelled (g_task_get_cancellable (task)))
    json_object_set_boolean_member (result, "interrupted", TRUE);
  json_object_set_array_member (result, "tests", tests);
  summarize (result);

  root = json_node_new (JSON_NODE_OBJECT);
  json_node_take_object (root, result);
  g_task_return_pointer (task, root, (GDestroyNotify) json_node_unref);
}

static void
suite_pump (Suite *suite)
{
  /* Once cancelled, the tests still waiting do not start. */
  if (suite->task != NULL && g_cancellable_is_cancelled (g_task_get_cancellable (suite->task)))
    g_queue_clear (&suite->queue);
  while (suite->running < suite->workers && !g_queue_is_empty (&suite->queue))
    {
      suite->running++;
      attempt_start (suite, g_queue_pop_head (&suite->queue));
    }
  if (suite->alive == 0 && g_queue_is_empty (&suite->queue) && suite->task != NULL)
    suite_return (suite);
}

/* ------------------------------------------------------------------ setup */

static gboolean
parse_shard (const char  *text,
             guint       *index,
             guint       *total,
             GError     **error)
{
  guint64 i = 0, n = 0;
  g_auto(GStrv) parts = g_strsplit (text, "/", -1);

  if (g_strv_length (parts) != 2 ||
      !g_ascii_string_to_unsigned (parts[0], 10, 1, MAX_SHARDS, &i, NULL) ||
      !g_ascii_string_to_unsigned (parts[1], 10, 1, MAX_SHARDS, &n, NULL) || i > n)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "shard: must be I/N with 1 <= I <= N <= %u, for example 1/2 (got “%s”)",
                   MAX_SHARDS, text);
      return FALSE;
    }
  *index = i;
  *total = n;
  return TRUE;
}

static gboolean
resolve_url (SightTestFile  *file,
             const char     *base_url,
             char          **out,
             GError        **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *base = g_path_get_basename (file->path);

  *out = NULL;
  if (file->url == NULL)
    {
      *out = g_strdup (base_url);
      return TRUE;
    }
  if (g_uri_peek_scheme (file->url) != NULL)
    {
      *out = g_strdup (file->url);
      return TRUE;
    }
  if (base_url == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "%s: url “%s” is relative: give --base-url (baseUrl) to resolve it", base,
                   file->url);
      return FALSE;
    }
  *out = g_uri_resolve_relative (base_url, file->url, G_URI_FLAGS_NONE, &local_error);
  if (*out == NULL || !sight_url_validate (*out, "url", &local_error))
    {
      g_clear_pointer (out, g_free);
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "%s: %s", base,
                   local_error->message);
      return FALSE;
    }
  return TRUE;
}

static SightProject *
project_for (GHashTable     *cache,
             SightTestFile  *file,
             GError        **error)
{
  g_autofree char *path = sight_project_find (file->path);
  SightProject *project;

  if (path == NULL)
    path = g_strdup ("");
  project = g_hash_table_lookup (cache, path);
  if (project == NULL)
    {
      project = *path ? sight_project_load (path, error) : sight_project_new_default ();
      if (project == NULL)
        return NULL;
      g_hash_table_insert (cache, g_strdup (path), project);
    }
  return sight_project_ref (project);
}

/* How long @test is expected to take, in its own unit: its number of
 * steps (each one an action or a check with its recording). */
static guint
expected_length (const Test *test)
{
  return test->file->steps->len;
}

/* With several workers the longest tests start first, so that the last to
 * end is a short one and no worker waits long for another at the end (the
 * sort is stable: tests of one length keep their order). One worker runs
 * the tests in order. */
static int
longest_first (gconstpointer a,
               gconstpointer b,
               gpointer      user_data)
{
  guint la = expected_length (a), lb = expected_length (b);

  return la > lb ? -1 : la < lb ? 1 : 0;
}

void
sight_suite_run_async (SightStore             *store,
                       GPtrArray              *files,
                       JsonObject             *args,
                       SightSuiteProgressFunc  progress,
                       gpointer                progress_data,
                       GCancellable           *cancellable,
                       GAsyncReadyCallback     callback,
                       gpointer                user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  g_autoptr(GError) error = NULL;
  g_autoptr(GHashTable) projects = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                          (GDestroyNotify) sight_project_unref);
  g_autoptr(GRegex) regex = NULL;
  g_autoptr(SightProject) shared_project = NULL;
  g_autoptr(GPtrArray) selected = g_ptr_array_new ();
  Suite *suite = g_new0 (Suite, 1);
  const char *shard = NULL, *grep = NULL, *base_url = NULL, *project_path = NULL;
  gint64 workers, retries;
  guint from, to;

  g_task_set_source_tag (task, sight_suite_run_async);
  /* Cancelled, the suite still returns its result: what ran, and what was
   * interrupted. */
  g_task_set_check_cancellable (task, FALSE);
  g_task_set_task_data (task, suite, (GDestroyNotify) suite_free);
  suite->store = g_object_ref (store);
  suite->spares = g_ptr_array_new_with_free_func ((GDestroyNotify) spare_free);
  suite->progress = progress;
  suite->progress_data = progress_data;
  suite->tests = g_ptr_array_new_with_free_func ((GDestroyNotify) test_free);
  g_queue_init (&suite->queue);
  suite->started = g_get_real_time ();

  if (!sight_tool_args_check_known (args, suite_args, &error) ||
      !sight_tool_args_get_int (args, "workers", 1, 1, MAX_WORKERS, &workers, &error) ||
      !sight_tool_args_get_int (args, "retries", 0, 0, MAX_RETRIES, &retries, &error) ||
      !sight_tool_args_get_string (args, "shard", 20, &shard, &error) ||
      !sight_tool_args_get_string (args, "grep", 500, &grep, &error) ||
      !sight_tool_args_get_string (args, "project", 4096, &project_path, &error) ||
      !sight_tool_args_get_url (args, "baseUrl", FALSE, &base_url, &error) ||
      (shard != NULL && !parse_shard (shard, &suite->shard_index, &suite->shard_total, &error)))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  suite->workers = workers;
  suite->retries = retries;
  if (grep != NULL)
    {
      g_autoptr(GError) regex_error = NULL;

      regex = g_regex_new (grep, G_REGEX_OPTIMIZE, 0, &regex_error);
      if (regex == NULL)
        {
          g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                                   "grep: not a regular expression: %s", regex_error->message);
          return;
        }
      suite->grep = g_strdup (grep);
    }
  if (project_path != NULL)
    {
      shared_project = sight_project_load (project_path, &error);
      if (shared_project == NULL)
        {
          g_task_return_error (task, g_steal_pointer (&error));
          return;
        }
    }

  suite->total = files->len;
  for (guint i = 0; i < files->len; i++)
    {
      SightTestFile *file = g_ptr_array_index (files, i);
      g_autofree char *base = g_path_get_basename (file->path);

      if (regex == NULL || g_regex_match (regex, file->name, 0, NULL) ||
          g_regex_match (regex, base, 0, NULL))
        g_ptr_array_add (selected, file);
    }
  if (regex != NULL && selected->len == 0)
    {
      g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                               "grep: no test's name or file name matches “%s”", grep);
      return;
    }
  from = 0;
  to = selected->len;
  if (suite->shard_total > 0)
    {
      from = (guint) ((guint64) (suite->shard_index - 1) * selected->len / suite->shard_total);
      to = (guint) ((guint64) suite->shard_index * selected->len / suite->shard_total);
    }

  for (guint i = from; i < to; i++)
    {
      Test *test = g_new0 (Test, 1);

      test->file = g_ptr_array_index (selected, i);
      test->attempts = json_array_new ();
      g_ptr_array_add (suite->tests, test);
      test->project = shared_project ? sight_project_ref (shared_project)
                                     : project_for (projects, test->file, &error);
      if (test->project == NULL || !resolve_url (test->file, base_url, &test->url, &error))
        {
          g_task_return_error (task, g_steal_pointer (&error));
          return;
        }
      g_queue_push_tail (&suite->queue, test);
    }

  if (suite->workers > 1)
    g_queue_sort (&suite->queue, longest_first, NULL);
  suite->task = g_steal_pointer (&task);
  suite_pump (suite);
}

JsonNode *
sight_suite_run_finish (GAsyncResult  *result,
                        GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static int
compare_paths (gconstpointer a,
               gconstpointer b)
{
  return g_strcmp0 (*(const char * const *) a, *(const char * const *) b);
}

/* The test files under @dir, recursively, in name order. */
static gboolean
collect_folder (const char  *dir,
                GPtrArray   *paths,
                GError     **error)
{
  g_autoptr(GDir) handle = NULL;
  g_autoptr(GPtrArray) here = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) local_error = NULL;
  const char *name;

  handle = g_dir_open (dir, 0, &local_error);
  if (handle == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "%s", local_error->message);
      return FALSE;
    }
  while ((name = g_dir_read_name (handle)) != NULL)
    if (name[0] != '.')
      g_ptr_array_add (here, g_build_filename (dir, name, NULL));
  g_ptr_array_sort (here, compare_paths);
  for (guint i = 0; i < here->len; i++)
    {
      const char *path = g_ptr_array_index (here, i);

      if (g_file_test (path, G_FILE_TEST_IS_DIR))
        {
          if (!collect_folder (path, paths, error))
            return FALSE;
        }
      else if (g_str_has_suffix (path, ".sightline.json"))
        g_ptr_array_add (paths, g_strdup (path));
    }
  return TRUE;
}

GPtrArray *
sight_suite_load_files (const char * const  *paths,
                        GError             **error)
{
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_test_file_free);
  g_autoptr(GPtrArray) all = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; paths[i] != NULL; i++)
    {
      if (!g_file_test (paths[i], G_FILE_TEST_IS_DIR))
        g_ptr_array_add (all, g_strdup (paths[i]));
      else if (!collect_folder (paths[i], all, error))
        return NULL;
    }
  for (guint i = 0; i < all->len; i++)
    {
      SightTestFile *file = sight_test_file_load (g_ptr_array_index (all, i), error);

      if (file == NULL)
        return NULL;
      g_ptr_array_add (files, file);
    }
  if (files->len == 0)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "no test files (*.sightline.json) in %s", paths[0] ? paths[0] : "(none)");
      return NULL;
    }
  return g_steal_pointer (&files);
}

/* ------------------------------------------------------------------ merge */

JsonNode *
sight_suite_merge (GPtrArray  *results,
                   GError    **error)
{
  JsonObject *merged = json_object_new ();
  JsonArray *tests = json_array_new ();
  JsonNode *root = json_node_new (JSON_NODE_OBJECT);
  g_autofree char *started = NULL;
  g_autofree char *finished = NULL;
  gint64 ms = 0, total = 0, workers = 0, retries = 0;

  json_node_take_object (root, merged);
  json_object_set_array_member (merged, "tests", tests);
  for (guint i = 0; i < results->len; i++)
    {
      JsonNode *node = g_ptr_array_index (results, i);
      JsonObject *object;
      JsonArray *part;
      const char *s, *f;

      if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node) ||
          g_strcmp0 (json_object_get_string_member_with_default (json_node_get_object (node),
                                                                 "kind", NULL),
                     "sightline-suite") != 0 ||
          json_object_get_int_member_with_default (json_node_get_object (node), "version", 0) != 1 ||
          json_object_get_member (json_node_get_object (node), "tests") == NULL ||
          !JSON_NODE_HOLDS_ARRAY (json_object_get_member (json_node_get_object (node), "tests")))
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "input %u: not the JSON result of “sightline run --json” "
                       "(kind “sightline-suite”, version 1)", i + 1);
          json_node_unref (root);
          return NULL;
        }
      object = json_node_get_object (node);
      part = json_object_get_array_member (object, "tests");
      for (guint t = 0; t < json_array_get_length (part); t++)
        json_array_add_element (tests, json_node_copy (json_array_get_element (part, t)));
      s = json_object_get_string_member_with_default (object, "startedAt", NULL);
      f = json_object_get_string_member_with_default (object, "finishedAt", NULL);
      if (s != NULL && (started == NULL || strcmp (s, started) < 0))
        { g_free (started); started = g_strdup (s); }
      if (f != NULL && (finished == NULL || strcmp (f, finished) > 0))
        { g_free (finished); finished = g_strdup (f); }
      ms = MAX (ms, json_object_get_int_member_with_default (object, "ms", 0));
      total = MAX (total, json_object_get_int_member_with_default (object, "total", 0));
      workers = MAX (workers, json_object_get_int_member_with_default (object, "workers", 1));
      retries = MAX (retries, json_object_get_int_member_with_default (object, "retries", 0));
    }
  json_object_set_string_member (merged, "kind", "sightline-suite");
  json_object_set_int_member (merged, "version", 1);
  if (started != NULL)
    json_object_set_string_member (merged, "startedAt", started);
  if (finished != NULL)
    json_object_set_string_member (merged, "finishedAt", finished);
  /* Shards run side by side: the longest is the suite's wall time. */
  json_object_set_int_member (merged, "ms", ms);
  json_object_set_int_member (merged, "workers", workers);
  json_object_set_int_member (merged, "retries", retries);
  json_object_set_int_member (merged, "total", total);
  json_object_set_int_member (merged, "selected", json_array_get_length (tests));
  json_object_set_int_member (merged, "merged", results->len);
  summarize (merged);
  return root;
}

/* ------------------------------------------------------------- exit, text */

int
sight_suite_exit_status (JsonObject *result)
{
  JsonArray *tests = json_object_get_array_member (result, "tests");
  int status = 0;

  for (guint i = 0; i < json_array_get_length (tests); i++)
    {
      JsonObject *test = json_array_get_object_element (tests, i);
      const char *verdict = json_object_get_string_member (test, "verdict");
      const char *code = json_object_get_string_member_with_default (test, "code", NULL);
      SightErrorCode error_code;

      if (g_str_equal (verdict, "fail"))
        return 1;
      if (status == 0 && g_str_equal (verdict, "error"))
        status = code != NULL && sight_error_code_from_string (code, &error_code)
                 ? sight_error_code_exit_status (error_code) : 70;
    }
  return status;
}

char *
sight_suite_test_text (JsonObject *test)
{
  GString *out = g_string_new (NULL);
  const char *verdict = json_object_get_string_member (test, "verdict");
  guint attempts = json_array_get_length (json_object_get_array_member (test, "attempts"));
  g_autofree char *base = g_path_get_basename (json_object_get_string_member (test, "file"));
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  g_string_append_printf (out, "%-5s  %s (%s) %s s", verdict,
                          json_object_get_string_member (test, "name"), base,
                          g_ascii_formatd (buf, sizeof buf, "%.1f",
                                           json_object_get_int_member (test, "ms") / 1000.0));
  if (g_str_equal (verdict, "flaky"))
    g_string_append_printf (out, ": passed on attempt %u", attempts);
  else if (!g_str_equal (verdict, "pass"))
    {
      g_string_append_printf (out, "\n       %s: %s: %s",
                              json_object_get_string_member_with_default (test, "failedStep",
                                                                          "The test"),
                              json_object_get_string_member_with_default (test, "code",
                                                                          "INTERNAL"),
                              json_object_get_string_member_with_default (test, "explanation",
                                                                          ""));
      if (attempts > 1)
        g_string_append_printf (out, " (%u attempts)", attempts);
      if (json_object_has_member (test, "screenshot"))
        g_string_append_printf (out, "\n       Screenshot: %s",
                                json_object_get_string_member (test, "screenshot"));
    }
  return g_string_free (out, FALSE);
}

char *
sight_suite_totals_text (JsonObject *result)
{
  JsonObject *counts = json_object_get_object_member (result, "counts");
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  return g_strdup_printf ("%" G_GINT64_FORMAT " tests: %" G_GINT64_FORMAT " passed, %"
                          G_GINT64_FORMAT " flaky, %" G_GINT64_FORMAT " failed, %"
                          G_GINT64_FORMAT " could not run, in %s s",
                          json_object_get_int_member (counts, "tests"),
                          json_object_get_int_member (counts, "passed"),
                          json_object_get_int_member (counts, "flaky"),
                          json_object_get_int_member (counts, "failed"),
                          json_object_get_int_member (counts, "errors"),
                          g_ascii_formatd (buf, sizeof buf, "%.1f",
                                           json_object_get_int_member (result, "ms") / 1000.0));
}

char *
sight_suite_text (JsonObject *result)
{
  GString *out = g_string_new (NULL);
  JsonArray *tests = json_object_get_array_member (result, "tests");
  g_autofree char *totals = sight_suite_totals_text (result);

  for (guint i = 0; i < json_array_get_length (tests); i++)
    {
      g_autofree char *line = sight_suite_test_text (json_array_get_object_element (tests, i));

      g_string_append_printf (out, "%s\n", line);
    }
  g_string_append (out, totals);
  return g_string_free (out, FALSE);
}
