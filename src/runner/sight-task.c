/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-task"

#include "config.h"

#include "sight-task.h"

#include <string.h>

#include "sight-agent.h"
#include "sight-error.h"
#include "sight-observation.h"
#include "sight-step-executor.h"
#include "sight-run-recorder.h"
#include "sight-run-video.h"
#include "sight-session-agent.h"
#include "sight-tool-args.h"

#define TEXT_MAX_CHARS 2000
/* How long the page a failed task ended on may take to be observed. */
#define END_OBSERVE_TIMEOUT_MS 10000
/* The model calls a task may make beyond one per step: the conclusion and a
 * few tool errors the agent recovers from. */
#define EXTRA_MODEL_CALLS 5

static const char * const task_args[] = {
  "goal", "maxSteps", "sessionId", "startUrl", "engineId", "engineVersion", "record", "headers",
  "proxyUrl", "allowHosts", "credentials", "mode", "keepOpen", "waitSeconds", NULL
};
/* What only applies when the task opens its session. */
static const char * const session_args[] = {
  "startUrl", "engineId", "engineVersion", "record", "headers", "proxyUrl", "allowHosts",
  "credentials", NULL
};
static const char * const modes[] = { "auto", "full_auto", NULL };

static const char log_missing_note[] =
  "The session log is not available (it is stored when the session ends), so console errors, "
  "failed network calls and URLs are missing.";

struct _SightTask
{
  GObject        parent_instance;

  /* owned */
  SightStore    *store;
  SightRunRecorder *recorder;
  SightSession  *session;
  SightAgent    *agent;
  GCancellable  *cancellable;
  char          *id;
  char          *goal;
  char          *provider;
  GPtrArray     *steps;          /* JsonObject */
  char          *stopped_by;
  char          *limit;
  char          *reason;
  char          *answer;
  char          *final_url;
  char          *video;          /* the session's recording, once linked */
  const char    *code;

  gint64         max_steps;
  gboolean       keep_open;
  gboolean       opened_session;
  gboolean       session_closed;
  gboolean       finished;
  gboolean       ok;
  gboolean       log_saved;

  gint64         started_at;     /* real time, µs */
  gint64         finished_at;
  gint64         mark;           /* real time of the last action, µs */
  guint64        mark_cost;      /* the step's reported cost at the last action */
  guint64        mark_estimate;  /* and Sightline's estimate */
  guint          mark_calls;
  SightUsage     usage;          /* the step's, as last read */
  gulong         action_id;
  gulong         call_id;
};

G_DEFINE_FINAL_TYPE (SightTask, sight_task, G_TYPE_OBJECT)

enum {
  FINISHED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

/* The tasks of this process, for get_task, and the newest per session. */
static GHashTable *tasks;
static GHashTable *latest;

static void
sight_task_dispose (GObject *object)
{
  SightTask *self = SIGHT_TASK (object);

  if (self->agent != NULL)
    {
      g_clear_signal_handler (&self->action_id, self->agent);
      g_clear_signal_handler (&self->call_id, self->agent);
    }
  g_clear_object (&self->agent);
  g_clear_object (&self->session);
  g_clear_object (&self->recorder);
  g_clear_object (&self->store);
  g_clear_object (&self->cancellable);

  G_OBJECT_CLASS (sight_task_parent_class)->dispose (object);
}

static void
sight_task_finalize (GObject *object)
{
  SightTask *self = SIGHT_TASK (object);

  g_free (self->id);
  g_free (self->goal);
  g_free (self->provider);
  g_clear_pointer (&self->steps, g_ptr_array_unref);
  g_free (self->stopped_by);
  g_free (self->limit);
  g_free (self->reason);
  g_free (self->answer);
  g_free (self->final_url);
  g_free (self->video);

  G_OBJECT_CLASS (sight_task_parent_class)->finalize (object);
}

static void
sight_task_class_init (SightTaskClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = sight_task_dispose;
  object_class->finalize = sight_task_finalize;

  signals[FINISHED] = g_signal_new ("finished", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                    0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
sight_task_init (SightTask *self)
{
  self->steps = g_ptr_array_new_with_free_func ((GDestroyNotify) json_object_unref);
  sight_usage_init (&self->usage);
}

const char *
sight_task_get_id (SightTask *self)
{
  g_return_val_if_fail (SIGHT_IS_TASK (self), NULL);
  return self->id;
}

const char *
sight_task_get_session_id (SightTask *self)
{
  g_return_val_if_fail (SIGHT_IS_TASK (self), NULL);
  return sight_session_get_id (self->session);
}

gboolean
sight_task_is_finished (SightTask *self)
{
  g_return_val_if_fail (SIGHT_IS_TASK (self), FALSE);
  return self->finished;
}

const char *
sight_task_get_stopped_by (SightTask *self)
{
  g_return_val_if_fail (SIGHT_IS_TASK (self), NULL);
  return self->finished ? self->stopped_by : NULL;
}

const char *
sight_task_get_code (SightTask *self)
{
  g_return_val_if_fail (SIGHT_IS_TASK (self), NULL);
  return self->finished ? self->code : NULL;
}

gboolean
sight_task_is_unusable (SightTask *self)
{
  static const char * const unusable[] = {
    "captcha", "blocked", "error", "aborted", "paused", "navigation_blocked",
    "capacity_exceeded", "capacity_timeout", "timeout", NULL
  };

  g_return_val_if_fail (SIGHT_IS_TASK (self), FALSE);
  return self->finished && g_strv_contains (unusable, self->stopped_by);
}

gboolean
sight_task_get_session_closed (SightTask *self)
{
  g_return_val_if_fail (SIGHT_IS_TASK (self), FALSE);
  return self->session_closed;
}

void
sight_task_cancel (SightTask *self)
{
  g_return_if_fail (SIGHT_IS_TASK (self));
  g_cancellable_cancel (self->cancellable);
}

SightTask *
sight_task_lookup (const char *task_id)
{
  return tasks != NULL && task_id != NULL ? g_hash_table_lookup (tasks, task_id) : NULL;
}

SightTask *
sight_task_latest_for_session (const char *session_id)
{
  return latest != NULL && session_id != NULL ? g_hash_table_lookup (latest, session_id) : NULL;
}

static char *
cut (const char *text)
{
  g_autofree char *clean = sight_text_sanitize (text, TEXT_MAX_CHARS * 4);

  if (clean != NULL && g_utf8_strlen (clean, -1) > TEXT_MAX_CHARS)
    {
      char *end = g_utf8_offset_to_pointer (clean, TEXT_MAX_CHARS);

      *end = '\0';
    }
  return g_steal_pointer (&clean);
}

static char *
iso_time (gint64 t)
{
  g_autoptr(GDateTime) dt = NULL;

  if (t <= 0)
    return NULL;
  dt = g_date_time_new_from_unix_utc (t / G_USEC_PER_SEC);
  dt = g_date_time_add (dt, t % G_USEC_PER_SEC);
  return g_date_time_format (dt, "%Y-%m-%dT%H:%M:%S.%fZ");
}

static void
write_done_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  if (!sight_store_write_finish (SIGHT_STORE (source), result, &error))
    g_warning ("Could not store the task's progress: %s", error->message);
}

/* Costs as they happen: each model call is stored with the action it led
 * to; each action becomes a step with the time and cost since the last. */

static void
model_call_finished_cb (SightAgent *agent,
                        guint       n,
                        gboolean    ok,
                        SightTask  *self)
{
  SightUsage now;
  SightModelCallRecord record = { 0 };

  sight_agent_get_step_usage (agent, &now);
  record.run_id = self->id;
  record.step_index = (int) self->steps->len;
  record.provider = self->provider;
  record.input_tokens = (gint64) (now.input_tokens - self->usage.input_tokens);
  record.output_tokens = (gint64) (now.output_tokens - self->usage.output_tokens);
  record.cost_micros = now.has_cost ? (gint64) (now.cost_micro_usd -
                                                (self->usage.has_cost
                                                 ? self->usage.cost_micro_usd : 0)) : -1;
  record.has_estimated_cost = now.has_estimated_cost;
  record.estimated_cost_micros = now.has_estimated_cost
                                 ? (gint64) (now.estimated_cost_micro_usd -
                                             (self->usage.has_estimated_cost
                                              ? self->usage.estimated_cost_micro_usd : 0))
                                 : -1;
  record.created_at = g_get_real_time ();
  sight_store_add_model_call_async (self->store, &record, NULL, write_done_cb, NULL);
  self->usage = now;
}

static char *
first_ref (const char *line)
{
  g_auto(GStrv) words = g_strsplit_set (line, " ()", -1);

  /* The action line names its element as the observation does: #e12. */
  for (guint i = 0; words[i] != NULL; i++)
    {
      const char *word = words[i][0] == '#' ? words[i] + 1 : words[i];

      if (word[0] == 'e' && word[1] != '\0' && strspn (word + 1, "0123456789") == strlen (word + 1))
        return g_strdup (word);
    }
  return NULL;
}

static void
action_performed_cb (SightAgent *agent,
                     const char *line,
                     SightTask  *self)
{
  g_autofree char *op = g_strndup (line, strcspn (line, " "));
  g_autofree char *ref = first_ref (line);
  g_autofree char *label = cut (line);
  JsonObject *step = json_object_new ();
  SightStepRecord record = { 0 };
  gint64 now = g_get_real_time ();
  guint calls;

  sight_agent_get_step_usage (agent, &self->usage);
  calls = (guint) self->usage.model_calls - self->mark_calls;
  json_object_set_string_member (step, "op", op);
  if (ref != NULL)
    json_object_set_string_member (step, "ref", ref);
  if (self->provider != NULL)
    json_object_set_string_member (step, "provider", self->provider);
  json_object_set_boolean_member (step, "ok", TRUE);
  json_object_set_int_member (step, "ms", (now - self->mark) / 1000);
  if (self->usage.has_cost)
    json_object_set_int_member (step, "costMicros",
                                (gint64) (self->usage.cost_micro_usd - self->mark_cost));
  if (self->usage.has_estimated_cost)
    json_object_set_int_member (step, "estimatedCostMicros",
                                (gint64) (self->usage.estimated_cost_micro_usd -
                                          self->mark_estimate));
  json_object_set_null_member (step, "error");

  record.kind = (char *) "act";
  record.label = label;
  record.instruction = label;
  record.verdict = SIGHT_RUN_VERDICT_PASS;
  record.model_calls = calls;
  record.actions = 1;
  record.started_at = self->mark;
  record.finished_at = now;
  sight_run_recorder_step_add (self->recorder, &record);

  g_ptr_array_add (self->steps, step);
  self->mark = now;
  self->mark_cost = self->usage.has_cost ? self->usage.cost_micro_usd : 0;
  self->mark_estimate = self->usage.has_estimated_cost ? self->usage.estimated_cost_micro_usd : 0;
  self->mark_calls = (guint) self->usage.model_calls;
  sight_session_touch (self->session);
}

/* The end */

static void
save_log (SightTask *self)
{
  sight_run_recorder_store_log_between (self->recorder, sight_session_get_page (self->session),
                                        self->started_at, self->finished_at);
  self->log_saved = TRUE;
}

static SightRunVerdict
run_verdict (SightTask *self)
{
  if (sight_task_is_unusable (self))
    return SIGHT_RUN_VERDICT_ERROR;
  return self->ok ? SIGHT_RUN_VERDICT_PASS : SIGHT_RUN_VERDICT_FAIL;
}

static void
store_outcome (SightTask           *self,
               const char          *code,
               GAsyncReadyCallback  callback,
               gpointer             user_data)
{
  SightRunRecord run = { 0 };
  const char *notes[] = { log_missing_note, NULL };

  run.verdict = run_verdict (self);
  run.code = (char *) code;
  run.explanation = self->reason;
  run.answer = self->answer;
  run.finished_at = self->finished_at;
  if (self->log_saved)
    run.final_url = self->final_url;
  else
    run.notes = (char **) notes;
  sight_run_recorder_close_record (self->recorder, &run, callback, user_data);
}

static void
finished_stored_cb (GObject      *source,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  g_autoptr(SightTask) self = user_data;
  g_autoptr(GError) error = NULL;

  if (!sight_store_write_finish (SIGHT_STORE (source), result, &error))
    g_warning ("Could not store the end of task %s: %s", self->id, error->message);
  g_signal_emit (self, signals[FINISHED], 0);
}

/* Links the session's recording to the task's run, once. */
static void
link_video (SightTask          *self,
            SightVideoRecorder *video,
            GAsyncResult       *result)
{
  g_autofree char *path = sight_video_recorder_finish_finish (video, result, NULL);
  g_autoptr(GError) error = NULL;

  if (path == NULL || self->video != NULL)
    return;
  self->video = sight_run_video_link (self->recorder, path, &error);
  if (self->video == NULL)
    g_message ("Task %s: %s", self->id, error->message);
}

static void
video_kept_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(SightTask) self = user_data;

  link_video (self, SIGHT_VIDEO_RECORDER (source), result);
  store_outcome (self, self->code, finished_stored_cb, g_object_ref (self));
}

/* A session closed after its task ended: its recording joins the run. */
static void
video_kept_later_cb (GObject      *source,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  g_autoptr(SightTask) self = user_data;

  link_video (self, SIGHT_VIDEO_RECORDER (source), result);
}

/* The agent's outcome in the task's terms. */
static void
classify (SightTask       *self,
          SightStepResult *result,
          const GError    *error,
          const char     **out_code)
{
  const GError *failure = result != NULL ? result->error : error;
  SightErrorCode code;

  *out_code = NULL;
  if (failure == NULL)
    {
      self->ok = TRUE;
      self->stopped_by = g_strdup ("done");
      return;
    }
  self->reason = cut (failure->message);
  if (g_error_matches (failure, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      self->stopped_by = g_strdup ("aborted");
      return;
    }
  if (failure->domain != SIGHT_ERROR)
    {
      self->stopped_by = g_strdup ("error");
      return;
    }
  code = failure->code;
  *out_code = sight_error_code_to_string (code);
  switch (code)
    {
    case SIGHT_ERROR_ACTION_FAILED:
    case SIGHT_ERROR_ASSERTION_FAILED:
      /* The agent concluded that the goal cannot be reached. */
      self->stopped_by = g_strdup ("done");
      break;
    case SIGHT_ERROR_STEP_BUDGET_EXHAUSTED:
      if (result != NULL && result->actions < self->max_steps)
        {
          self->stopped_by = g_strdup ("stuck");
          self->limit = g_strdup ("maxModelCalls");
        }
      else
        {
          self->stopped_by = g_strdup ("budget");
          self->limit = g_strdup ("maxSteps");
        }
      break;
    case SIGHT_ERROR_STEP_TIMEOUT:
      self->stopped_by = g_strdup ("timeout");
      self->limit = g_strdup ("timeoutMs");
      break;
    case SIGHT_ERROR_POLICY_DENIED:
      self->stopped_by = g_strdup ("navigation_blocked");
      break;
    case SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE:
    case SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE:
    case SIGHT_ERROR_SEED_DATA_MISSING:
    case SIGHT_ERROR_TEST_SETUP_FAILED:
    case SIGHT_ERROR_AUTOMATION_UNSUPPORTED:
      self->stopped_by = g_strdup ("blocked");
      break;
    default:
      self->stopped_by = g_strdup ("error");
      break;
    }
}

static void
finish (SightTask       *self,
        SightStepResult *result,
        const GError    *error)
{
  const char *code = NULL;
  SightWebPage *page = sight_session_get_page (self->session);

  if (self->agent != NULL)
    {
      g_clear_signal_handler (&self->action_id, self->agent);
      g_clear_signal_handler (&self->call_id, self->agent);
      sight_agent_get_step_usage (self->agent, &self->usage);
    }
  classify (self, result, error, &code);
  self->code = code;
  if (result != NULL && result->summary != NULL && *result->summary != '\0')
    self->answer = cut (result->summary);
  self->finished = TRUE;
  self->finished_at = g_get_real_time ();
  if (page != NULL && sight_web_page_get_uri (page) != NULL)
    self->final_url = cut (sight_web_page_get_uri (page));
  sight_session_release (self->session);

  /* A session the task opened ends with it, unless it is to stay open; its
   * log then goes into the report at once. */
  if (self->opened_session && !self->keep_open)
    {
      self->session_closed = sight_session_stop (self->session, "stopped");
    }
  if (!self->log_saved && sight_session_get_status (self->session) != SIGHT_SESSION_LIVE)
    save_log (self);
  /* A recording that ended with the session is linked before the outcome
   * is stored and told: the report and the reply then name it. */
  if (sight_session_get_video (self->session) != NULL &&
      sight_session_get_status (self->session) != SIGHT_SESSION_LIVE)
    {
      sight_video_recorder_finish_async (sight_session_get_video (self->session), NULL,
                                         video_kept_cb, g_object_ref (self));
      return;
    }
  store_outcome (self, code, finished_stored_cb, g_object_ref (self));
}

/* A task that failed keeps the page it failed on, as a test's failed step
 * does (sight_step_shot_for ()): its tree and masked screenshot, after its
 * last step, before its session can go. */
typedef struct {
  SightTask       *task;
  SightStepResult *outcome;
  GError          *error;
} Ending;

static void
ending_free (Ending *ending)
{
  g_object_unref (ending->task);
  g_clear_pointer (&ending->outcome, sight_step_result_unref);
  g_clear_error (&ending->error);
  g_free (ending);
}

static void
end_observed_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  Ending *ending = user_data;
  SightTask *self = ending->task;
  g_autoptr(SightObservation) observation = sight_observation_capture_finish (result, NULL);

  if (observation != NULL)
    sight_run_recorder_observe (self->recorder,
                                sight_run_recorder_get_n_steps (self->recorder) > 0
                                ? "after" : "final", observation);
  finish (self, ending->outcome, ending->error);
  ending_free (ending);
}

static void
agent_done_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(SightTask) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(SightStepResult) outcome = sight_step_execute_finish (result, &error);
  const GError *failure = outcome != NULL ? outcome->error : error;
  SightWebPage *page = sight_session_get_page (self->session);
  Ending *ending;

  if (failure == NULL || g_error_matches (failure, G_IO_ERROR, G_IO_ERROR_CANCELLED) ||
      page == NULL ||
      sight_step_shot_for (TRUE, failure,
                           sight_agent_get_secret_filled (self->agent)) == SIGHT_STEP_SHOT_NONE)
    {
      finish (self, outcome, error);
      return;
    }
  ending = g_new0 (Ending, 1);
  ending->task = g_steal_pointer (&self);
  ending->outcome = g_steal_pointer (&outcome);
  ending->error = g_steal_pointer (&error);
  sight_observation_capture_async (page, SIGHT_OBSERVE_FULL_TEXT | SIGHT_OBSERVE_SCREENSHOT,
                                   END_OBSERVE_TIMEOUT_MS, NULL, end_observed_cb, ending);
}

/* A session that ends after its tasks: their log is stored now. */
static void
session_closed_cb (SightSessionRegistry *registry,
                   SightSession         *session,
                   gpointer              user_data)
{
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, tasks);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      SightTask *task = value;

      if (task->session != session || task->log_saved)
        continue;
      if (!task->finished)
        {
          /* Its page is going: the agent's step is cancelled, and the log
           * stored while the page is still there. */
          g_cancellable_cancel (task->cancellable);
          save_log (task);
          continue;
        }
      save_log (task);
      store_outcome (task, NULL, write_done_cb, NULL);
      if (sight_session_get_video (session) != NULL)
        sight_video_recorder_finish_async (sight_session_get_video (session), NULL,
                                           video_kept_later_cb, g_object_ref (task));
    }
}

static void
tasks_init (void)
{
  if (tasks != NULL)
    return;
  tasks = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_object_unref);
  latest = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_signal_connect (sight_session_registry_get_default (), "session-closed",
                    G_CALLBACK (session_closed_cb), NULL);
}

/* Starting */

typedef struct {
  SightStore   *store;
  JsonObject   *args;
  SightSession *opened;
  const char   *goal;
  gint64        max_steps;
  gboolean      keep_open;
} Start;

static void
start_free (Start *start)
{
  g_clear_object (&start->store);
  g_clear_pointer (&start->args, json_object_unref);
  g_clear_object (&start->opened);
  g_free (start);
}

static SightTask *
begin (Start         *start,
       SightSession  *session,
       GCancellable  *cancellable,
       GError       **error)
{
  g_autoptr(SightTask) self = NULL;
  g_autoptr(SightStepRequest) request = NULL;
  SightAgent *agent;
  SightRunRecord run = { 0 };
  SightWebPage *page;
  const SightAgentConfig *config;

  agent = sight_session_get_agent (session, error);
  if (agent == NULL)
    return NULL;
  request = sight_step_request_new (sight_agent_get_project (agent), SIGHT_STEP_ACT, start->goal,
                                    NULL, NULL, -1, error);
  if (request == NULL)
    return NULL;
  /* The task's own budget: maxSteps actions (up to 50, beyond the agent's
   * per-step limit), the calls to reach them, and the task's time limit. */
  request->limits.max_actions = start->max_steps;
  request->limits.max_model_calls = MAX (request->limits.max_model_calls,
                                         start->max_steps + EXTRA_MODEL_CALLS);
  request->limits.timeout_ms = SIGHT_TASK_TIMEOUT_MS;
  if (!sight_session_claim (session, "a task", error))
    return NULL;

  tasks_init ();
  self = g_object_new (SIGHT_TYPE_TASK, NULL);
  self->store = g_object_ref (start->store);
  self->session = g_object_ref (session);
  self->agent = g_object_ref (agent);
  self->cancellable = cancellable != NULL ? g_object_ref (cancellable) : g_cancellable_new ();
  self->id = sight_new_id ("tsk_");
  self->goal = cut (start->goal);
  self->max_steps = start->max_steps;
  self->keep_open = start->keep_open;
  self->opened_session = start->opened != NULL;
  config = request->limits.agent;
  if (config != NULL && config->provider != NULL)
    self->provider = g_strdup_printf ("%s:%s", config->provider,
                                      config->model ? config->model : "");
  self->started_at = self->mark = g_get_real_time ();

  page = sight_session_get_page (session);
  run.id = self->id;
  run.session_id = (char *) sight_session_get_id (session);
  run.kind = (char *) "task";
  run.name = self->goal;
  run.url = (char *) (page != NULL ? sight_web_page_get_uri (page) : NULL);
  run.started_at = self->started_at;
  self->recorder = sight_run_recorder_open (self->store, &run, error);
  if (self->recorder == NULL)
    {
      sight_session_release (session);
      return NULL;
    }

  g_hash_table_insert (tasks, self->id, g_object_ref (self));
  g_hash_table_insert (latest, g_strdup (sight_session_get_id (session)), self);
  self->action_id = g_signal_connect (agent, "action-performed",
                                      G_CALLBACK (action_performed_cb), self);
  self->call_id = g_signal_connect (agent, "model-call-finished",
                                    G_CALLBACK (model_call_finished_cb), self);
  sight_step_execute_async (agent, g_steal_pointer (&request), self->cancellable, agent_done_cb,
                            g_object_ref (self));
  return g_steal_pointer (&self);
}

static void
begin_or_fail (GTask        *task,
               SightSession *session)
{
  Start *start = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  SightTask *started = begin (start, session, g_task_get_cancellable (task), &error);

  if (started == NULL)
    {
      /* A session opened for a task that could not start is closed again. */
      if (start->opened != NULL)
        sight_session_stop (start->opened, "error");
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  g_task_return_pointer (task, started, g_object_unref);
}

static void
session_opened_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  Start *start = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;

  start->opened = sight_session_registry_create_finish (SIGHT_SESSION_REGISTRY (source), result,
                                                        &error);
  if (start->opened == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  begin_or_fail (task, start->opened);
}

void
sight_task_start_async (SightStore          *store,
                        JsonObject          *args,
                        GCancellable        *cancellable,
                        GAsyncReadyCallback  callback,
                        gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) session_options = json_object_new ();
  Start *start = g_new0 (Start, 1);
  const char *session_id = NULL;
  const char *mode;
  const char *start_url;
  gint64 wait_seconds;

  g_return_if_fail (SIGHT_IS_STORE (store));
  g_return_if_fail (args != NULL);

  g_task_set_source_tag (task, sight_task_start_async);
  g_task_set_task_data (task, start, (GDestroyNotify) start_free);
  start->store = g_object_ref (store);
  start->args = json_object_ref (args);

  if (!sight_tool_args_check_known (args, task_args, &error) ||
      !sight_tool_args_get_string (args, "goal", SIGHT_TASK_MAX_GOAL_CHARS, &start->goal,
                                   &error) ||
      !sight_tool_args_get_int (args, "maxSteps", SIGHT_TASK_DEFAULT_MAX_STEPS, 1,
                                SIGHT_TASK_MAX_STEPS, &start->max_steps, &error) ||
      !sight_tool_args_get_string (args, "sessionId", 200, &session_id, &error) ||
      !sight_tool_args_get_choice (args, "mode", modes, "auto", &mode, &error) ||
      !sight_tool_args_get_bool (args, "keepOpen", FALSE, &start->keep_open, &error) ||
      !sight_tool_args_get_int (args, "waitSeconds", 90, 1, 90, &wait_seconds, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  if (start->goal == NULL || *start->goal == '\0')
    {
      g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                               "goal: required, 1 to %d characters", SIGHT_TASK_MAX_GOAL_CHARS);
      return;
    }

  for (guint i = 0; session_args[i] != NULL; i++)
    {
      if (!json_object_has_member (args, session_args[i]))
        continue;
      if (session_id != NULL)
        {
          g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                                   "%s: only when run_task opens the session; leave it out "
                                   "with sessionId", session_args[i]);
          return;
        }
      json_object_set_member (session_options, session_args[i],
                              json_object_dup_member (args, session_args[i]));
    }

  if (session_id != NULL)
    {
      SightSession *session = sight_session_registry_lookup (sight_session_registry_get_default (),
                                                             session_id);

      if (session == NULL)
        {
          g_autofree char *safe = sight_text_sanitize (session_id, 100);

          g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "No session %s", safe);
          return;
        }
      begin_or_fail (task, session);
      return;
    }

  /* The agent starts from a page: a new session opens one first. */
  if (!sight_tool_args_get_url (args, "startUrl", TRUE, &start_url, &error))
    {
      g_prefix_error (&error, "without sessionId, ");
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  sight_session_registry_create_async (sight_session_registry_get_default (), session_options,
                                       cancellable, session_opened_cb, g_steal_pointer (&task));
}

SightTask *
sight_task_start_finish (GAsyncResult  *result,
                         GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* Reading */

JsonNode *
sight_task_to_json (SightTask *self)
{
  g_autoptr(JsonObject) record = json_object_new ();
  g_autoptr(JsonArray) steps = json_array_new ();
  g_autofree char *started = iso_time (self->started_at);
  g_autofree char *finished = iso_time (self->finished_at);
  JsonNode *node;
  gint64 end = self->finished ? self->finished_at : g_get_real_time ();

  g_return_val_if_fail (SIGHT_IS_TASK (self), NULL);

  json_object_set_string_member (record, "id", self->id);
  json_object_set_string_member (record, "goal", self->goal);
  json_object_set_string_member (record, "status", self->finished ? "finished" : "running");
  if (self->finished)
    {
      json_object_set_boolean_member (record, "ok", self->ok);
      json_object_set_string_member (record, "stoppedBy", self->stopped_by);
      if (self->limit != NULL)
        json_object_set_string_member (record, "limit", self->limit);
      if (self->reason != NULL)
        json_object_set_string_member (record, "reason", self->reason);
      if (self->answer != NULL)
        json_object_set_string_member (record, "answer", self->answer);
    }
  for (guint i = 0; i < self->steps->len; i++)
    json_array_add_object_element (steps, json_object_ref (g_ptr_array_index (self->steps, i)));
  json_object_set_array_member (record, "steps", g_steal_pointer (&steps));
  /* what the provider reported, and apart from it Sightline's estimate */
  if (self->usage.has_cost)
    json_object_set_int_member (record, "costMicros", (gint64) self->usage.cost_micro_usd);
  if (self->usage.has_estimated_cost)
    json_object_set_int_member (record, "estimatedCostMicros",
                                (gint64) self->usage.estimated_cost_micro_usd);
  json_object_set_string_member (record, "tokenAccounting",
                                 sight_token_accounting_to_string (self->usage.token_accounting));
  json_object_set_int_member (record, "ms", (end - self->started_at) / 1000);
  json_object_set_string_member (record, "startedAt", started);
  if (finished != NULL)
    json_object_set_string_member (record, "finishedAt", finished);
  if (self->video != NULL)
    json_object_set_string_member (record, "video", self->video);
  node = json_node_new (JSON_NODE_OBJECT);
  json_node_set_object (node, record);
  return node;
}

char *
sight_task_text (SightTask *self)
{
  GString *text = g_string_new (NULL);
  gint64 end = self->finished ? self->finished_at : g_get_real_time ();
  guint n = self->steps->len;

  g_return_val_if_fail (SIGHT_IS_TASK (self), NULL);

  if (!self->finished)
    g_string_append_printf (text, "Task %s is still running after %" G_GINT64_FORMAT " s, "
                            "%u step%s so far.", self->id, (end - self->started_at) / G_USEC_PER_SEC,
                            n, n == 1 ? "" : "s");
  else
    {
      g_string_append_printf (text, "Task %s (%s) in %u step%s, ",
                              g_str_equal (self->stopped_by, "done") ? "finished" : "stopped",
                              self->stopped_by, n, n == 1 ? "" : "s");
      {
        g_autofree char *cost = sight_usage_cost_text (&self->usage);

        g_string_append_printf (text, "%s, ", cost);
      }
      g_string_append_printf (text, "%" G_GINT64_FORMAT " s.",
                              (end - self->started_at + G_USEC_PER_SEC / 2) / G_USEC_PER_SEC);
      if (self->answer != NULL)
        g_string_append_printf (text, "\nAnswer: %s", self->answer);
      if (self->reason != NULL)
        g_string_append_printf (text, "\nReason: %s", self->reason);
    }
  if (self->session_closed || sight_session_get_status (self->session) != SIGHT_SESSION_LIVE)
    g_string_append_printf (text, "\nSession %s was closed.", sight_session_get_id (self->session));
  else
    g_string_append_printf (text, "\nSession %s is still open: run another task with sessionId, "
                            "or stop_session when done.", sight_session_get_id (self->session));
  g_string_append_printf (text, "\nFor the report, call get_report with the id %s.", self->id);
  return g_string_free (text, FALSE);
}
