/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-agent"

#include "config.h"

#include "sight-agent.h"

#include "sight-model-config.h"
#include "sight-secret-fields.h"
#include "sight-secrets.h"
#include "sight-step-act.h"
#include "sight-step-context.h"
#include "sight-step-evidence.h"
#include "sight-step-judge.h"

G_STATIC_ASSERT (SIGHT_AGENT_MAX_IMAGES == SIGHT_STEP_MAX_IMAGES);

/* The refused URLs a step result keeps. */
#define MAX_BLOCKED_URLS 50

struct _SightAgent
{
  GObject             parent_instance;

  /* owned */
  SightProject       *project;
  SightWebPage       *page;
  SightModelProvider *provider;
  char               *evidence_dir;
  gboolean            secret_filled;
  guint               n_steps;
  guint               action_delay_ms;
  /* the result of the step in progress, or of the last one */
  SightStepResult    *current;
  /* the step in progress's own cancellable, and why
   * sight_agent_stop() fired it */
  GCancellable       *step_cancellable;
  char               *stop_reason;
};

G_DEFINE_FINAL_TYPE (SightAgent, sight_agent, G_TYPE_OBJECT)

enum {
  STEP_STARTED,
  MODEL_CALL_STARTED,
  MODEL_CALL_FINISHED,
  ACTION_STARTING,
  ACTION_PERFORMED,
  BUDGET_CHANGED,
  STEP_FINISHED,
  STEP_CANCELLED,
  OBSERVED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

/* The prompts live in the agent's resources (sight-agent.gresource.xml). */
const char *
sight_agent_get_system_prompt (SightStepKind kind)
{
  switch (kind)
    {
    case SIGHT_STEP_ACT:
      return sight_step_context_resource_text ("act.txt");
    case SIGHT_STEP_EXTRACT:
      return sight_step_context_resource_text ("extract.txt");
    case SIGHT_STEP_ASSERT:
    case SIGHT_STEP_WAIT_FOR:
    default:
      return sight_step_context_resource_text ("judge.txt");
    }
}

JsonNode *
sight_agent_get_act_tools (gboolean with_pixels)
{
  return sight_step_act_get_tools (with_pixels);
}

static void
sight_agent_dispose (GObject *object)
{
  SightAgent *self = SIGHT_AGENT (object);

  g_clear_object (&self->page);
  g_clear_object (&self->provider);

  G_OBJECT_CLASS (sight_agent_parent_class)->dispose (object);
}

static void
sight_agent_finalize (GObject *object)
{
  SightAgent *self = SIGHT_AGENT (object);

  g_clear_pointer (&self->project, sight_project_unref);
  g_clear_object (&self->step_cancellable);
  g_clear_pointer (&self->current, sight_step_result_unref);
  g_free (self->evidence_dir);
  g_free (self->stop_reason);

  G_OBJECT_CLASS (sight_agent_parent_class)->finalize (object);
}

static void
sight_agent_class_init (SightAgentClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = sight_agent_dispose;
  object_class->finalize = sight_agent_finalize;

  signals[STEP_STARTED] =
    g_signal_new ("step-started", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_POINTER);
  signals[MODEL_CALL_STARTED] =
    g_signal_new ("model-call-started", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT);
  signals[MODEL_CALL_FINISHED] =
    g_signal_new ("model-call-finished", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_BOOLEAN);
  signals[ACTION_STARTING] =
    g_signal_new ("action-starting", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  signals[ACTION_PERFORMED] =
    g_signal_new ("action-performed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  signals[BUDGET_CHANGED] =
    g_signal_new ("budget-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 3, G_TYPE_UINT, G_TYPE_UINT, G_TYPE_INT64);
  signals[STEP_FINISHED] =
    g_signal_new ("step-finished", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 1, SIGHT_TYPE_STEP_RESULT);
  signals[STEP_CANCELLED] =
    g_signal_new ("step-cancelled", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  signals[OBSERVED] =
    g_signal_new ("observed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 1, SIGHT_TYPE_OBSERVATION);
}

static void
sight_agent_init (SightAgent *self)
{
}

SightAgent *
sight_agent_new (SightProject *project,
                 SightWebPage *page)
{
  SightAgent *self;

  g_return_val_if_fail (SIGHT_IS_WEB_PAGE (page), NULL);

  self = g_object_new (SIGHT_TYPE_AGENT, NULL);
  self->project = project ? sight_project_ref (project) : sight_project_new_default ();
  self->page = g_object_ref (page);
  return self;
}

SightWebPage *
sight_agent_get_page (SightAgent *self)
{
  return self->page;
}

SightProject *
sight_agent_get_project (SightAgent *self)
{
  return self->project;
}

void
sight_agent_set_evidence_dir (SightAgent *self,
                              const char *dir)
{
  g_return_if_fail (SIGHT_IS_AGENT (self));
  g_free (self->evidence_dir);
  self->evidence_dir = g_strdup (dir);
}

void
sight_agent_set_provider (SightAgent         *self,
                          SightModelProvider *provider)
{
  g_return_if_fail (SIGHT_IS_AGENT (self));
  g_set_object (&self->provider, provider);
}

SightModelProvider *
sight_agent_get_provider (SightAgent *self)
{
  g_return_val_if_fail (SIGHT_IS_AGENT (self), NULL);
  return self->provider;
}

void
sight_agent_mark_secret_filled (SightAgent *self)
{
  g_return_if_fail (SIGHT_IS_AGENT (self));
  self->secret_filled = TRUE;
}

gboolean
sight_agent_get_secret_filled (SightAgent *self)
{
  /* A secret typed into the attempt's page by any path taints its pixels. */
  return self->secret_filled || sight_web_page_get_secret_fills (self->page) > 0;
}

void
sight_agent_set_action_delay (SightAgent *self,
                              guint       delay_ms)
{
  g_return_if_fail (SIGHT_IS_AGENT (self));
  self->action_delay_ms = delay_ms;
}

/**
 * sight_agent_stop:
 * @self: an agent
 * @reason: why, for the step's caller ("stopped in the Sightline window")
 *
 * Stops the step in progress, whoever started it, as its caller's
 * cancellable would: it ends with G_IO_ERROR_CANCELLED saying @reason, and
 * "step-cancelled" is emitted. Nothing happens between steps.
 */
void
sight_agent_stop (SightAgent *self,
                  const char *reason)
{
  g_return_if_fail (SIGHT_IS_AGENT (self));
  g_return_if_fail (reason != NULL);

  if (self->step_cancellable == NULL || g_cancellable_is_cancelled (self->step_cancellable))
    return;
  g_free (self->stop_reason);
  self->stop_reason = g_strdup (reason);
  g_cancellable_cancel (self->step_cancellable);
}


/* The step context's hooks: the agent's signals. */

static void
hook_observed (gpointer          data,
               SightObservation *observation)
{
  g_signal_emit (data, signals[OBSERVED], 0, observation);
}

static void
hook_model_call_started (gpointer data,
                         guint    n)
{
  g_signal_emit (data, signals[MODEL_CALL_STARTED], 0, n);
}

static void
hook_model_call_finished (gpointer data,
                          guint    n,
                          gboolean ok)
{
  g_signal_emit (data, signals[MODEL_CALL_FINISHED], 0, n, ok);
}

static void
hook_action_starting (gpointer    data,
                      const char *ref)
{
  g_signal_emit (data, signals[ACTION_STARTING], 0, ref);
}

static void
hook_action_performed (gpointer    data,
                       const char *line)
{
  g_signal_emit (data, signals[ACTION_PERFORMED], 0, line);
}

static void
hook_budget_changed (gpointer data,
                     guint    model_calls,
                     guint    actions,
                     gint64   remaining_ms)
{
  g_signal_emit (data, signals[BUDGET_CHANGED], 0, model_calls, actions, remaining_ms);
}

static gboolean
hook_secret_filled (gpointer data)
{
  return sight_agent_get_secret_filled (data);
}

static const SightStepHooks agent_hooks = {
  .observed = hook_observed,
  .model_call_started = hook_model_call_started,
  .model_call_finished = hook_model_call_finished,
  .action_starting = hook_action_starting,
  .action_performed = hook_action_performed,
  .budget_changed = hook_budget_changed,
  .secret_filled = hook_secret_filled,
};

/* One step of the agent, from sight_agent_run_async() to its result. */
typedef struct {
  SightAgent       *agent;
  /* until the step opens, then the context's */
  SightStepRequest *request;
  SightStepContext *ctx;
  /* what carries the step out; NULL: act or a judgment */
  const SightStepBody *body;
  GCancellable     *cancellable;
  /* the caller's, which fires ours */
  GCancellable     *caller_cancellable;
  gulong            caller_handler;
  /* what the step's end compares with its start */
  gint64            started;
  guint             fills_before;
  guint             mark;
  gint64            since;
  /* why the step was cancelled, once it was */
  char             *cancel_reason;
} Run;

static void
run_free (Run *run)
{
  if (run->caller_handler != 0)
    g_cancellable_disconnect (run->caller_cancellable, run->caller_handler);
  g_clear_object (&run->caller_cancellable);
  g_clear_pointer (&run->request, sight_step_request_free);
  g_clear_pointer (&run->ctx, sight_step_context_free);
  g_clear_object (&run->cancellable);
  g_clear_object (&run->agent);
  g_free (run->cancel_reason);
  g_free (run);
}

static gboolean
run_told_cb (gpointer user_data)
{
  GTask *task = user_data;
  Run *run = g_task_get_task_data (task);

  if (run->cancel_reason != NULL)
    {
      g_signal_emit (run->agent, signals[STEP_CANCELLED], 0, run->cancel_reason);
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "%s", run->cancel_reason);
    }
  else
    {
      g_signal_emit (run->agent, signals[STEP_FINISHED], 0, run->ctx->result);
      g_task_return_pointer (task, sight_step_result_ref (run->ctx->result),
                             (GDestroyNotify) sight_step_result_unref);
    }
  g_object_unref (task);
  return G_SOURCE_REMOVE;
}

static void
run_end (GTask *task)
{
  Run *run = g_task_get_task_data (task);
  SightAgent *self = run->agent;
  SightStepContext *ctx = run->ctx;
  SightStepResult *result = ctx->result;
  GPtrArray *log = sight_web_page_get_log (self->page);

  /* Every URL the origin guard refused while the step ran. */
  for (guint i = 0; i < log->len && result->navigation_blocked->len < MAX_BLOCKED_URLS; i++)
    {
      SightLogEntry *entry = g_ptr_array_index (log, i);

      if (entry->kind == SIGHT_LOG_BLOCKED && entry->timestamp >= run->since)
        g_ptr_array_add (result->navigation_blocked, sight_secrets_redact (entry->url));
    }
  if (result->navigation_blocked->len > 0)
    {
      g_autofree char *url = sight_text_sanitize (g_ptr_array_index (result->navigation_blocked, 0), 300);
      char *summary = g_strdup_printf ("%s%sThe page was kept on its allowed origins: %s was "
                                       "refused%s", result->summary ? result->summary : "",
                                       result->summary && *result->summary ? " " : "",
                                       url, result->navigation_blocked->len > 1
                                              ? " (and more, see navigationBlocked)" : "");

      g_free (result->summary);
      result->summary = summary;
    }

  result->model_calls = sight_budget_get_model_calls (ctx->budget);
  result->actions = sight_budget_get_actions (ctx->budget);
  result->duration_ms = (g_get_monotonic_time () - run->started) / 1000;
  /* by act's fill or a replayed trace's: one fill for both (sight-secret-fill.h) */
  if (sight_web_page_get_secret_fills (self->page) != run->fills_before)
    result->secret_filled = TRUE;

  g_clear_object (&self->step_cancellable);
  if (g_cancellable_is_cancelled (run->cancellable))
    run->cancel_reason = g_strdup (self->stop_reason ? self->stop_reason
                                                     : "the step was cancelled");

  /* The end is told from the main loop: a cancellation can complete the last
   * operation from inside the cancellable's handler, where the caller's end
   * (and our disconnecting from its cancellable) must not run. */
  g_idle_add_full (G_PRIORITY_DEFAULT, run_told_cb, task, NULL);
}

static void
process_checked_cb (GObject      *source,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  GTask *task = user_data;
  Run *run = g_task_get_task_data (task);
  GError *lost = NULL;

  if (!sight_web_page_check_process_finish (SIGHT_WEB_PAGE (source), result, &lost) &&
      !g_error_matches (lost, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    sight_step_result_take_error (run->ctx->result, g_steal_pointer (&lost));
  g_clear_error (&lost);
  run_end (task);
}

/* Whatever the step concluded, a page that lost its web process during it
 * (crashed, stopped responding, over its memory limit) is why it ended. */
static void
run_check_process (GTask *task)
{
  Run *run = g_task_get_task_data (task);
  GError *error = NULL;

  if (g_cancellable_is_cancelled (run->cancellable))
    {
      run_end (task);
      return;
    }
  if (!sight_step_context_check_page (run->ctx, &error))
    {
      sight_step_result_take_error (run->ctx->result, error);
      run_end (task);
      return;
    }
  sight_web_page_check_process_async (run->agent->page, run->mark, run->cancellable,
                                      process_checked_cb, task);
}

static void
evidence_kept_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  sight_step_evidence_keep_finish (result);
  run_check_process (user_data);
}

static void
step_done_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  GTask *task = user_data;
  Run *run = g_task_get_task_data (task);

  if (run->body != NULL)
    run->body->run_finish (run->ctx, result);
  else if (run->ctx->request->limits.kind == SIGHT_STEP_ACT)
    sight_step_act_run_finish (run->ctx, result);
  else
    sight_step_judgment_run_finish (run->ctx, result);
  /* The page the step failed on, before anything else touches it. */
  sight_step_evidence_keep_async (run->ctx, evidence_kept_cb, task);
}

static gboolean
run_start_cb (gpointer user_data)
{
  GTask *task = user_data;
  Run *run = g_task_get_task_data (task);
  SightAgent *self = run->agent;
  SightStepContext *ctx;
  SightStepKind kind = run->request->limits.kind;
  g_autoptr(GError) error = NULL;

  run->started = g_get_monotonic_time ();
  run->fills_before = sight_web_page_get_secret_fills (self->page);
  run->mark = sight_web_page_get_process_mark (self->page);
  run->since = g_get_real_time ();

  self->n_steps++;
  g_set_object (&self->step_cancellable, run->cancellable);
  g_clear_pointer (&self->stop_reason, g_free);
  ctx = run->ctx = sight_step_context_new (self->page, self->project,
                                           g_steal_pointer (&run->request), run->cancellable,
                                           &agent_hooks, self);
  ctx->number = self->n_steps;
  ctx->evidence_dir = g_strdup (self->evidence_dir);
  ctx->action_delay_ms = self->action_delay_ms;
  g_clear_pointer (&self->current, sight_step_result_unref);
  self->current = sight_step_result_ref (ctx->result);
  g_signal_emit (self, signals[STEP_STARTED], 0, ctx->request);

  if (run->body != NULL)
    {
      run->body->run_async (ctx, step_done_cb, task);
      return G_SOURCE_REMOVE;
    }
  if (self->provider != NULL)
    ctx->provider = g_object_ref (self->provider);
  else
    ctx->provider = sight_model_provider_new_for_agent_config (ctx->request->limits.agent, &error);

  /* act replays a cached trace with no model; it asks for one only when needed */
  if (ctx->provider == NULL &&
      (kind != SIGHT_STEP_ACT || sight_project_get_trace_cache_dir (self->project) == NULL))
    {
      sight_step_result_take_error (ctx->result, g_steal_pointer (&error));
      run_check_process (task);
      return G_SOURCE_REMOVE;
    }
  ctx->provider_error = g_steal_pointer (&error);
  if (kind == SIGHT_STEP_ACT)
    sight_step_act_run_async (ctx, step_done_cb, task);
  else
    sight_step_judgment_run_async (ctx, step_done_cb, task);
  return G_SOURCE_REMOVE;
}

static void
caller_cancelled_cb (GCancellable *caller,
                     GCancellable *step_cancellable)
{
  g_cancellable_cancel (step_cancellable);
}

void
sight_agent_run_async (SightAgent          *self,
                       SightStepRequest    *request,
                       GCancellable        *cancellable,
                       GAsyncReadyCallback  callback,
                       gpointer             user_data)
{
  sight_agent_run_body_async (self, request, NULL, cancellable, callback, user_data);
}

void
sight_agent_run_body_async (SightAgent          *self,
                            SightStepRequest    *request,
                            const SightStepBody *body,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  g_autoptr(GSource) idle = NULL;
  GTask *task;
  Run *run;

  g_return_if_fail (SIGHT_IS_AGENT (self));
  g_return_if_fail (request != NULL);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_agent_run_async);

  run = g_new0 (Run, 1);
  run->agent = g_object_ref (self);
  run->request = request;
  run->body = body;
  /* The step's one cancellable, which its caller's fires too, so that
   * sight_agent_stop() stops the step without touching the caller's. */
  run->cancellable = g_cancellable_new ();
  if (cancellable != NULL)
    {
      run->caller_cancellable = g_object_ref (cancellable);
      run->caller_handler = g_cancellable_connect (cancellable, G_CALLBACK (caller_cancelled_cb),
                                                   g_object_ref (run->cancellable),
                                                   g_object_unref);
    }
  g_task_set_task_data (task, run, (GDestroyNotify) run_free);

  /* The step opens from the main loop, as every later state of it runs. Not at
   * idle priority: while the window redraws continuously (a spinner on a slow
   * renderer), idle sources never run. */
  idle = g_idle_source_new ();
  g_source_set_priority (idle, G_PRIORITY_DEFAULT);
  g_source_set_callback (idle, run_start_cb, task, NULL);
  g_source_attach (idle, g_main_context_get_thread_default ());
}

SightStepResult *
sight_agent_run_finish (SightAgent    *self,
                        GAsyncResult  *result,
                        GError       **error)
{
  SightStepResult *step_result;

  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  step_result = g_task_propagate_pointer (G_TASK (result), error);
  if (step_result != NULL && step_result->error != NULL)
    sight_step_result_propagate (step_result, error);
  return step_result;
}

void
sight_agent_get_step_usage (SightAgent *self,
                            SightUsage *out_usage)
{
  g_return_if_fail (SIGHT_IS_AGENT (self));
  g_return_if_fail (out_usage != NULL);

  if (self->current != NULL)
    *out_usage = self->current->usage;
  else
    sight_usage_init (out_usage);
}
