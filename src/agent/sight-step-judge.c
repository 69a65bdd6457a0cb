/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-step-judge"

#include "config.h"

#include "sight-step-judge.h"

#include "sight-error.h"
#include "sight-json-schema.h"

/* Explanations the model writes are bounded like every explanation. */
#define EXPLANATION_MAX_BYTES 2048

/* Pixels for assert, waitFor and extract (spec "Vision"): degrade to the tree,
 * except under 'only', which is POLICY_DENIED rather than answer from the tree. */

typedef struct {
  SightStepContext *ctx;
  /* the step allows pixels */
  gboolean          vision;
  const char       *degraded;
  gboolean          pixels;
} Look;

static void
look_observed_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  Look *look = g_task_get_task_data (task);
  SightStepContext *ctx = look->ctx;
  g_autoptr(SightObservation) observation = NULL;
  GError *error = NULL;
  gboolean no_pixels = FALSE;

  observation = sight_step_context_observe_finish (ctx, result, &no_pixels, &error);
  if (observation == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  if (!look->vision)
    {
      g_task_return_pointer (task, g_steal_pointer (&observation), g_object_unref);
      return;
    }
  if (look->degraded == NULL)
    {
      if (no_pixels || sight_observation_get_screenshot (observation) == NULL)
        look->degraded = "UNSUPPORTED_CAPABILITY";
      else if (!sight_observation_masking_proven (observation))
        look->degraded = "MASKING_UNPROVEN";
    }
  if (look->degraded != NULL)
    {
      if (ctx->request->limits.vision == SIGHT_VISION_ONLY)
        {
          g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_POLICY_DENIED,
                                   "vision 'only' needs pixels, and they are withheld (%s); "
                                   "the question is not answered from the tree", look->degraded);
          return;
        }
      g_free (ctx->result->vision_degraded);
      ctx->result->vision_degraded = g_strdup (look->degraded);
    }
  else
    look->pixels = TRUE;
  g_task_return_pointer (task, g_steal_pointer (&observation), g_object_unref);
}

static void
look_async (SightStepContext    *ctx,
            GAsyncReadyCallback  callback,
            gpointer             user_data)
{
  GTask *task = g_task_new (NULL, NULL, callback, user_data);
  SightVisionMode vision = ctx->request->limits.vision;
  Look *look = g_new0 (Look, 1);

  look->ctx = ctx;
  look->vision = vision != SIGHT_VISION_OFF && vision != SIGHT_VISION_UNSET;
  g_task_set_task_data (task, look, g_free);
  if (look->vision && sight_step_context_secret_filled (ctx))
    look->degraded = "PIXEL_TAINTED";
  sight_step_context_observe_async (ctx, look->vision && look->degraded == NULL,
                                    look_observed_cb, task);
}

static SightObservation *
look_finish (GAsyncResult  *result,
             gboolean      *out_pixels,
             GError       **error)
{
  Look *look = g_task_get_task_data (G_TASK (result));

  *out_pixels = look->pixels;
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* Asks for one structured answer validated against a schema, with at most one
 * repair round for output that fails validation; MODEL_OUTPUT_INVALID after it. */

typedef struct {
  SightStepContext  *ctx;
  SightModelRequest *request;
  SightJsonSchema   *schema;
  char              *last_problem;
  guint              round;
} Ask;

static void
ask_free (Ask *ask)
{
  sight_model_request_unref (ask->request);
  sight_json_schema_unref (ask->schema);
  g_free (ask->last_problem);
  g_free (ask);
}

static void ask_answered_cb (GObject      *source,
                             GAsyncResult *result,
                             gpointer      user_data);

static void
ask_round (GTask *task)
{
  Ask *ask = g_task_get_task_data (task);

  if (ask->round >= 2)
    {
      g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_MODEL_OUTPUT_INVALID,
                               "the model's answer failed validation after one repair round: %s",
                               ask->last_problem ? ask->last_problem : "invalid");
      g_object_unref (task);
      return;
    }
  if (ask->round > 0)
    ask->ctx->result->repair_rounds++;
  sight_step_context_call_model_async (ask->ctx, ask->request, ask_answered_cb, task);
}

/* The answer failed (@problem): the first time, the repair round asks again,
 * with the @response that did not follow the schema (NULL: it could not be
 * read at all). */
static void
ask_again (GTask              *task,
           SightModelResponse *response,
           const char         *problem)
{
  Ask *ask = g_task_get_task_data (task);

  g_free (ask->last_problem);
  ask->last_problem = g_strdup (problem);
  if (ask->round == 0)
    {
      g_autofree char *repair = NULL;

      if (response != NULL)
        {
          repair = g_strdup_printf ("Your answer does not follow the schema: %s. Answer again "
                                    "with one JSON value that follows it.", problem);
          sight_model_request_add_response (ask->request, response);
        }
      else
        repair = g_strdup_printf ("Your previous answer could not be read (%s). Answer "
                                  "again with one JSON value that follows the schema.", problem);
      sight_model_request_add_message (ask->request, SIGHT_MODEL_ROLE_USER, repair);
    }
  ask->round++;
  ask_round (task);
}

static void
ask_answered_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  GTask *task = user_data;
  Ask *ask = g_task_get_task_data (task);
  g_autoptr(SightModelResponse) response = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) value = NULL;
  g_autoptr(GError) invalid = NULL;

  response = sight_step_context_call_model_finish (ask->ctx, result, &error);
  if (response == NULL)
    {
      if (!g_error_matches (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_OUTPUT_INVALID))
        {
          g_task_return_error (task, g_steal_pointer (&error));
          g_object_unref (task);
          return;
        }
      ask_again (task, NULL, error->message);
      return;
    }

  value = sight_model_response_parse_json (response);
  if (value == NULL)
    g_set_error_literal (&invalid, SIGHT_ERROR, SIGHT_ERROR_MODEL_OUTPUT_INVALID,
                         "the answer is not JSON");
  else
    sight_json_schema_check (ask->schema, value, &invalid);

  if (invalid == NULL)
    {
      g_task_return_pointer (task, g_steal_pointer (&value), (GDestroyNotify) json_node_unref);
      g_object_unref (task);
      return;
    }

  ask_again (task, response, invalid->message);
}

static void
ask_structured_async (SightStepContext    *ctx,
                      const char          *system,
                      const char          *user_text,
                      SightObservation    *observation,
                      gboolean             pixels,
                      const char          *response_name,
                      SightJsonSchema     *schema,
                      GAsyncReadyCallback  callback,
                      gpointer             user_data)
{
  GTask *task = g_task_new (NULL, NULL, callback, user_data);
  Ask *ask = g_new0 (Ask, 1);
  SightModelMessage *message;

  ask->ctx = ctx;
  ask->schema = sight_json_schema_ref (schema);
  ask->request = sight_model_request_new ();
  g_task_set_task_data (task, ask, (GDestroyNotify) ask_free);

  sight_model_request_set_system (ask->request, system);
  message = sight_model_request_add_message (ask->request, SIGHT_MODEL_ROLE_USER, user_text);
  if (pixels)
    {
      const SightScreenshot *shot = sight_observation_get_screenshot (observation);

      sight_model_message_add_image (message, "image/png", shot->bytes);
    }
  sight_model_request_set_response_schema (ask->request, response_name,
                                           sight_json_schema_get_node (schema));
  ask_round (task);
}

static JsonNode *
ask_structured_finish (GAsyncResult  *result,
                       GError       **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* One judgment of a condition on one observation. */

typedef struct {
  gboolean  verdict;
  char     *explanation;
} Judgment;

static SightJsonSchema *
judgment_schema (void)
{
  static SightJsonSchema *schema;

  if (g_once_init_enter (&schema))
    {
      g_autoptr(JsonNode) node = NULL;
      g_autoptr(GError) error = NULL;

      node = json_from_string (sight_step_context_resource_text ("judgment-schema.json"), &error);
      g_assert_no_error (error);
      g_once_init_leave (&schema, sight_json_schema_new (node, NULL));
    }
  return schema;
}

static void
judged_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  SightStepContext *ctx = g_task_get_task_data (task);
  g_autoptr(JsonNode) answer = NULL;
  GError *error = NULL;
  Judgment *judgment;
  JsonObject *object;

  answer = ask_structured_finish (result, &error);
  if (answer == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  object = json_node_get_object (answer);
  judgment = g_new0 (Judgment, 1);
  judgment->verdict = json_object_get_boolean_member (object, "verdict");
  judgment->explanation = sight_text_sanitize (json_object_get_string_member (object, "explanation"),
                                               EXPLANATION_MAX_BYTES);
  sight_step_context_add_injection (ctx, json_object_get_member (object, "injection"));
  ctx->result->has_judgment = TRUE;
  ctx->result->judgment = judgment->verdict;
  g_free (ctx->result->summary);
  ctx->result->summary = g_strdup (judgment->explanation);
  g_task_return_pointer (task, judgment, NULL);
}

static void
judge_async (SightStepContext    *ctx,
             const char          *condition,
             SightObservation    *observation,
             gboolean             pixels,
             GAsyncReadyCallback  callback,
             gpointer             user_data)
{
  GTask *task = g_task_new (NULL, NULL, callback, user_data);
  g_autofree char *page = NULL;
  g_autofree char *text = NULL;
  gboolean with_tree = ctx->request->limits.vision != SIGHT_VISION_ONLY || !pixels;

  g_task_set_task_data (task, ctx, NULL);
  page = sight_step_context_page_block (observation, with_tree);
  text = g_strdup_printf ("Condition: %s\n\nObservation%s:\n%s",
                          condition,
                          pixels ? " (a screenshot of the viewport is attached)" : "",
                          page);
  ask_structured_async (ctx, sight_step_context_resource_text ("judge.txt"), text, observation,
                        pixels, "judgment", judgment_schema (), judged_cb, task);
}

/* Moves the judgment into @out (its explanation replaced). */
static gboolean
judge_finish (GAsyncResult  *result,
              Judgment      *out,
              GError       **error)
{
  Judgment *judgment = g_task_propagate_pointer (G_TASK (result), error);

  if (judgment == NULL)
    return FALSE;
  out->verdict = judgment->verdict;
  g_free (out->explanation);
  out->explanation = judgment->explanation;
  g_free (judgment);
  return TRUE;
}

/* The judgment of act's cached replay */

typedef struct {
  SightStepContext *ctx;
  char             *condition;
  Judgment          judgment;
} Condition;

static void
condition_free (Condition *condition)
{
  g_free (condition->condition);
  g_free (condition->judgment.explanation);
  g_free (condition);
}

static void
condition_judged_cb (GObject      *source,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  Condition *condition = g_task_get_task_data (task);
  GError *error = NULL;

  if (!judge_finish (result, &condition->judgment, &error))
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

static void
condition_observed_cb (GObject      *source,
                       GAsyncResult *result,
                       gpointer      user_data)
{
  GTask *task = user_data;
  Condition *condition = g_task_get_task_data (task);
  g_autoptr(SightObservation) observation = NULL;
  GError *error = NULL;

  observation = sight_step_context_observe_finish (condition->ctx, result, NULL, &error);
  if (observation == NULL)
    {
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  judge_async (condition->ctx, condition->condition, observation, FALSE, condition_judged_cb,
               task);
}

void
sight_step_judge_condition_async (SightStepContext    *ctx,
                                  const char          *text,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  GTask *task = g_task_new (NULL, NULL, callback, user_data);
  Condition *condition = g_new0 (Condition, 1);

  g_task_set_source_tag (task, sight_step_judge_condition_async);
  condition->ctx = ctx;
  condition->condition = g_strdup (text);
  g_task_set_task_data (task, condition, (GDestroyNotify) condition_free);
  sight_step_context_observe_async (ctx, FALSE, condition_observed_cb, task);
}

gboolean
sight_step_judge_condition_finish (SightStepContext  *ctx,
                                   GAsyncResult      *result,
                                   gboolean          *out_verdict,
                                   char             **out_explanation,
                                   GError           **error)
{
  Condition *condition = g_task_get_task_data (G_TASK (result));

  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == sight_step_judge_condition_async,
                        FALSE);
  if (!g_task_propagate_boolean (G_TASK (result), error))
    return FALSE;
  *out_verdict = condition->judgment.verdict;
  *out_explanation = g_steal_pointer (&condition->judgment.explanation);
  return TRUE;
}

/* assert, waitFor, extract: one state for all three */

typedef struct {
  SightStepContext *ctx;
  SightObservation *observation;
  gboolean          pixels;
  Judgment          judgment;
  gboolean          have_judgment;
  /* waitFor: the screen last judged, the one being judged, the round's start */
  char             *last_key;
  char             *key;
  gint64            started;
} Run;

static void
run_free (Run *run)
{
  g_clear_object (&run->observation);
  g_free (run->judgment.explanation);
  g_free (run->last_key);
  g_free (run->key);
  g_free (run);
}

/* Ends the judgment; @error (taken) is the step's. */
static void
run_return (GTask  *task,
            GError *error)
{
  Run *run = g_task_get_task_data (task);

  if (error != NULL)
    sight_step_result_take_error (run->ctx->result, error);
  g_task_return_boolean (task, TRUE);
  g_object_unref (task);
}

/* assert */

static void
assert_judged_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  GTask *task = user_data;
  Run *run = g_task_get_task_data (task);
  GError *error = NULL;

  if (!judge_finish (result, &run->judgment, &error))
    {
      run_return (task, error);
      return;
    }
  if (run->judgment.verdict)
    {
      run_return (task, NULL);
      return;
    }
  /* Its evidence is kept by the agent (sight-step-evidence.h). */
  run_return (task, g_error_new (SIGHT_ERROR, SIGHT_ERROR_ASSERTION_FAILED, "%s",
                                 run->judgment.explanation));
}

static void
assert_looked_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  GTask *task = user_data;
  Run *run = g_task_get_task_data (task);
  GError *error = NULL;

  run->observation = look_finish (result, &run->pixels, &error);
  if (run->observation == NULL)
    {
      run_return (task, error);
      return;
    }
  judge_async (run->ctx, run->ctx->request->model_instruction, run->observation, run->pixels,
               assert_judged_cb, task);
}

/* waitFor */

/* What a waitFor compares to decide whether the screen changed. */
static char *
screen_key (SightObservation *observation,
            gboolean          pixels)
{
  const SightScreenshot *shot = sight_observation_get_screenshot (observation);
  g_autofree char *hash = NULL;

  if (pixels && shot != NULL)
    hash = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, shot->bytes);
  return g_strdup_printf ("%s\n%s\n%s", sight_observation_get_url (observation) ?: "",
                          sight_observation_get_text (observation) ?: "", hash ?: "");
}

/* A timeout or an exhausted budget says what was last judged. */
static GError *
with_last_judgment (Run    *run,
                    GError *error)
{
  GError *out;

  if (error->domain != SIGHT_ERROR || (error->code != SIGHT_ERROR_STEP_TIMEOUT &&
                                       error->code != SIGHT_ERROR_STEP_BUDGET_EXHAUSTED))
    return error;
  if (!run->have_judgment)
    out = g_error_new (SIGHT_ERROR, error->code, "%s; no judgment was made", error->message);
  else
    out = g_error_new (SIGHT_ERROR, error->code, "%s; last judgment: %s (%s)", error->message,
                       run->judgment.verdict ? "true" : "false", run->judgment.explanation);
  g_error_free (error);
  return out;
}

static void wait_look (GTask *task);

static void
wait_slept_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  GTask *task = user_data;
  Run *run = g_task_get_task_data (task);
  GError *error = NULL;

  if (!sight_step_context_sleep_finish (run->ctx, result, NULL))
    {
      run_return (task, NULL); /* cancelled: the step says so */
      return;
    }
  if (!sight_budget_check_deadline (run->ctx->budget, &error))
    {
      run_return (task, with_last_judgment (run, error));
      return;
    }
  wait_look (task);
}

/* One observation per interval, the time spent observing and judging included. */
static void
wait_pause (GTask *task)
{
  Run *run = g_task_get_task_data (task);
  const SightBudgetLimits *limits = &run->ctx->request->limits;
  gint64 interval = limits->interval_ms > 0 ? limits->interval_ms : SIGHT_WAIT_FOR_INTERVAL_DEFAULT;
  gint64 spent_ms = (g_get_monotonic_time () - run->started) / 1000;
  GError *error = NULL;

  if (!sight_budget_check_deadline (run->ctx->budget, &error))
    {
      run_return (task, with_last_judgment (run, error));
      return;
    }
  sight_step_context_sleep_async (run->ctx, MAX (0, interval - spent_ms), wait_slept_cb, task);
}

static void
wait_judged_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  GTask *task = user_data;
  Run *run = g_task_get_task_data (task);
  GError *error = NULL;

  if (!judge_finish (result, &run->judgment, &error))
    {
      run_return (task, with_last_judgment (run, error));
      return;
    }
  run->have_judgment = TRUE;
  g_free (run->last_key);
  run->last_key = g_steal_pointer (&run->key);
  if (run->judgment.verdict)
    run_return (task, NULL);
  else
    wait_pause (task);
}

static void
wait_looked_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  GTask *task = user_data;
  Run *run = g_task_get_task_data (task);
  GError *error = NULL;

  g_clear_object (&run->observation);
  run->observation = look_finish (result, &run->pixels, &error);
  if (run->observation == NULL)
    {
      run_return (task, with_last_judgment (run, error));
      return;
    }
  g_free (run->key);
  run->key = screen_key (run->observation, run->pixels);
  if (run->last_key != NULL && g_strcmp0 (run->key, run->last_key) == 0)
    {
      wait_pause (task);
      return;
    }
  judge_async (run->ctx, run->ctx->request->model_instruction, run->observation, run->pixels,
               wait_judged_cb, task);
}

static void
wait_look (GTask *task)
{
  Run *run = g_task_get_task_data (task);

  run->started = g_get_monotonic_time ();
  look_async (run->ctx, wait_looked_cb, task);
}

/* extract */

static void
extracted_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  GTask *task = user_data;
  Run *run = g_task_get_task_data (task);
  SightStepResult *step_result = run->ctx->result;
  GError *error = NULL;
  JsonNode *value;

  value = ask_structured_finish (result, &error);
  if (value == NULL)
    {
      run_return (task, error);
      return;
    }
  step_result->value = value;
  g_free (step_result->summary);
  step_result->summary = g_strdup ("extracted a value that follows the schema");
  run_return (task, NULL);
}

static void
extract_looked_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  GTask *task = user_data;
  Run *run = g_task_get_task_data (task);
  SightStepContext *ctx = run->ctx;
  SightJsonSchema *schema = ctx->request->options->schema;
  g_autofree char *page = NULL;
  g_autofree char *text = NULL;
  g_autofree char *schema_text = NULL;
  GError *error = NULL;

  run->observation = look_finish (result, &run->pixels, &error);
  if (run->observation == NULL)
    {
      run_return (task, error);
      return;
    }
  page = sight_step_context_page_block (run->observation,
                                        ctx->request->limits.vision != SIGHT_VISION_ONLY ||
                                        !run->pixels);
  schema_text = json_to_string (sight_json_schema_get_node (schema), FALSE);
  text = g_strdup_printf ("Extract: %s\n\nSchema of the answer: %s\n\nObservation%s:\n%s",
                          ctx->request->model_instruction, schema_text,
                          run->pixels ? " (a screenshot of the viewport is attached)" : "", page);
  ask_structured_async (ctx, sight_step_context_resource_text ("extract.txt"), text,
                        run->observation, run->pixels, "extraction", schema, extracted_cb, task);
}

void
sight_step_judgment_run_async (SightStepContext    *ctx,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  GTask *task = g_task_new (NULL, NULL, callback, user_data);
  Run *run = g_new0 (Run, 1);

  g_task_set_source_tag (task, sight_step_judgment_run_async);
  run->ctx = ctx;
  g_task_set_task_data (task, run, (GDestroyNotify) run_free);
  switch (ctx->request->limits.kind)
    {
    case SIGHT_STEP_ASSERT:
      look_async (ctx, assert_looked_cb, task);
      break;
    case SIGHT_STEP_WAIT_FOR:
      wait_look (task);
      break;
    case SIGHT_STEP_EXTRACT:
      look_async (ctx, extract_looked_cb, task);
      break;
    default:
      g_assert_not_reached ();
    }
}

void
sight_step_judgment_run_finish (SightStepContext *ctx,
                                GAsyncResult     *result)
{
  g_return_if_fail (g_task_get_source_tag (G_TASK (result)) == sight_step_judgment_run_async);
  g_task_propagate_boolean (G_TASK (result), NULL);
}
