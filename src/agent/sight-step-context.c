/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-step-context"

#include "config.h"

#include "sight-step-context.h"

#include <string.h>

#include "sight-actions.h"
#include "sight-agent-resources.h"
#include "sight-error.h"
#include "sight-secret-fill.h"
#include "sight-secrets.h"

/* How long one observation may take, before the step's deadline caps it. */
#define OBSERVE_TIMEOUT_MS 15000
/* The time one action may take to become actionable, act and settle, when the
 * project sets no actionTimeout. */
#define ACTION_TIMEOUT_MS 10000

SightStepContext *
sight_step_context_new (SightWebPage         *page,
                        SightProject         *project,
                        SightStepRequest     *request,
                        GCancellable         *cancellable,
                        const SightStepHooks *hooks,
                        gpointer              hooks_data)
{
  SightStepContext *ctx;

  g_return_val_if_fail (SIGHT_IS_WEB_PAGE (page), NULL);
  g_return_val_if_fail (G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (hooks != NULL, NULL);

  ctx = g_new0 (SightStepContext, 1);
  ctx->page = g_object_ref (page);
  ctx->project = sight_project_ref (project);
  ctx->request = request;
  ctx->cancellable = g_object_ref (cancellable);
  ctx->hooks = hooks;
  ctx->hooks_data = hooks_data;
  ctx->result = sight_step_result_new (request->limits.kind, request->instruction);
  ctx->budget = sight_budget_new (&request->limits);
  ctx->target_origin = sight_origin_normalize (sight_web_page_get_uri (page));
  return ctx;
}

void
sight_step_context_free (SightStepContext *ctx)
{
  g_clear_object (&ctx->page);
  g_clear_pointer (&ctx->project, sight_project_unref);
  g_clear_pointer (&ctx->request, sight_step_request_free);
  g_clear_pointer (&ctx->budget, sight_budget_free);
  g_clear_pointer (&ctx->result, sight_step_result_unref);
  g_clear_object (&ctx->provider);
  g_clear_error (&ctx->provider_error);
  g_clear_object (&ctx->cancellable);
  g_free (ctx->target_origin);
  g_free (ctx->evidence_dir);
  g_free (ctx);
}

gboolean
sight_step_context_check_page (SightStepContext  *ctx,
                               GError           **error)
{
  /* A page closed under the step (its window went away) has no view left. */
  if (sight_web_page_get_web_view (ctx->page) != NULL)
    return TRUE;
  g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                       "The page was closed");
  return FALSE;
}

gboolean
sight_step_context_secret_filled (SightStepContext *ctx)
{
  return ctx->hooks->secret_filled (ctx->hooks_data);
}

void
sight_step_context_emit_action (SightStepContext *ctx,
                                const char       *line)
{
  g_autofree char *redacted = sight_secrets_redact (line);

  ctx->hooks->action_performed (ctx->hooks_data, redacted);
}

static void
emit_budget (SightStepContext *ctx)
{
  ctx->hooks->budget_changed (ctx->hooks_data,
                              sight_budget_get_model_calls (ctx->budget),
                              sight_budget_get_actions (ctx->budget),
                              sight_budget_remaining_ms (ctx->budget));
}

/* Observing */

typedef struct {
  SightStepContext *ctx;
  gboolean          screenshot;
  gboolean          no_pixels;
} Observe;

static void observe_captured_cb (GObject      *source,
                                 GAsyncResult *result,
                                 gpointer      user_data);

static void
observe_capture (GTask *task)
{
  Observe *observe = g_task_get_task_data (task);
  SightStepContext *ctx = observe->ctx;
  GError *error = NULL;
  gint64 timeout_ms;

  if (!sight_step_context_check_page (ctx, &error) ||
      !sight_budget_check_deadline (ctx->budget, &error))
    {
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  timeout_ms = MAX (1, sight_budget_cap_ms (ctx->budget, OBSERVE_TIMEOUT_MS));
  sight_observation_capture_async (ctx->page,
                                   SIGHT_OBSERVE_PARSE_TREE |
                                   (observe->screenshot ? SIGHT_OBSERVE_SCREENSHOT
                                                        : SIGHT_OBSERVE_DEFAULT),
                                   (guint) timeout_ms, ctx->cancellable,
                                   observe_captured_cb, task);
}

static void
observe_captured_cb (GObject      *source,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  GTask *task = user_data;
  Observe *observe = g_task_get_task_data (task);
  SightStepContext *ctx = observe->ctx;
  g_autoptr(GError) error = NULL;
  SightObservation *observation;

  observation = sight_observation_capture_finish (result, &error);
  if (observation == NULL && observe->screenshot &&
      !g_error_matches (error, SIGHT_ERROR, SIGHT_ERROR_STEP_TIMEOUT) &&
      !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      /* Pixel evidence degrades instead of failing the call. */
      g_debug ("no screenshot: %s", error->message);
      observe->screenshot = FALSE;
      observe->no_pixels = TRUE;
      observe_capture (task);
      return;
    }
  if (observation == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      g_object_unref (task);
      return;
    }
  ctx->result->observations++;
  ctx->hooks->observed (ctx->hooks_data, observation);
  g_free (ctx->result->url);
  ctx->result->url = g_strdup (sight_observation_get_url (observation));
  g_task_return_pointer (task, observation, g_object_unref);
  g_object_unref (task);
}

void
sight_step_context_observe_async (SightStepContext    *ctx,
                                  gboolean             screenshot,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  GTask *task = g_task_new (NULL, NULL, callback, user_data);
  Observe *observe = g_new0 (Observe, 1);

  g_task_set_source_tag (task, sight_step_context_observe_async);
  observe->ctx = ctx;
  observe->screenshot = screenshot;
  g_task_set_task_data (task, observe, g_free);
  observe_capture (task);
}

SightObservation *
sight_step_context_observe_finish (SightStepContext  *ctx,
                                   GAsyncResult      *result,
                                   gboolean          *out_no_pixels,
                                   GError           **error)
{
  Observe *observe = g_task_get_task_data (G_TASK (result));

  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == sight_step_context_observe_async,
                        NULL);
  if (out_no_pixels != NULL)
    *out_no_pixels = observe->no_pixels;
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* Calling the model */

typedef struct {
  SightStepContext  *ctx;
  SightModelRequest *request;
  guint              n;
} Call;

static void
call_free (Call *call)
{
  sight_model_request_unref (call->request);
  g_free (call);
}

static void
call_model_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  Call *call = g_task_get_task_data (task);
  SightStepContext *ctx = call->ctx;
  GError *error = NULL;
  SightModelResponse *response;

  response = sight_model_provider_complete_finish (SIGHT_MODEL_PROVIDER (source), result, &error);
  if (response != NULL)
    sight_usage_add (&ctx->result->usage, &response->usage);
  else
    {
      /* A failed call still spent a request; its cost is unknown. */
      ctx->result->usage.model_calls = sight_usage_saturating_add (ctx->result->usage.model_calls, 1);
      ctx->result->usage.token_accounting = SIGHT_TOKEN_ACCOUNTING_ADAPTER_UPPER_BOUND;
    }
  ctx->hooks->model_call_finished (ctx->hooks_data, call->n, response != NULL);
  emit_budget (ctx);

  if (response == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, response, (GDestroyNotify) sight_model_response_unref);
}

void
sight_step_context_call_model_async (SightStepContext    *ctx,
                                     SightModelRequest   *request,
                                     GAsyncReadyCallback  callback,
                                     gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, NULL, callback, user_data);
  GError *error = NULL;
  Call *call;

  g_task_set_source_tag (task, sight_step_context_call_model_async);
  if (ctx->provider == NULL)
    {
      g_task_return_error (task, g_error_copy (ctx->provider_error));
      return;
    }
  if (!sight_budget_take_model_call (ctx->budget, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  call = g_new0 (Call, 1);
  call->ctx = ctx;
  call->request = sight_model_request_ref (request);
  call->n = sight_budget_get_model_calls (ctx->budget);
  g_task_set_task_data (task, call, (GDestroyNotify) call_free);
  ctx->result->model_calls = call->n;

  for (guint i = 0; i < request->messages->len; i++)
    {
      SightModelMessage *message = g_ptr_array_index (request->messages, i);

      for (guint j = 0; message->images != NULL && j < message->images->len; j++)
        {
          SightModelImage *image = g_ptr_array_index (message->images, j);

          ctx->result->vision_input = TRUE;
          ctx->result->images_sent++;
          ctx->result->pixel_bytes += g_bytes_get_size (image->bytes);
        }
    }

  ctx->hooks->model_call_started (ctx->hooks_data, call->n);
  emit_budget (ctx);

  sight_model_provider_complete_async (ctx->provider, request,
                                       sight_budget_get_deadline (ctx->budget),
                                       ctx->cancellable, call_model_cb, g_object_ref (task));
}

SightModelResponse *
sight_step_context_call_model_finish (SightStepContext  *ctx,
                                      GAsyncResult      *result,
                                      GError           **error)
{
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == sight_step_context_call_model_async,
                        NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* Waiting: a timeout source for the time, a cancellable source for a stop;
 * whichever dispatches first completes the wait and removes the other. */

typedef struct {
  GSource *timeout;
  GSource *cancelled;
} Sleep;

static void
sleep_clear (Sleep *sleep)
{
  if (sleep->timeout != NULL)
    g_source_destroy (sleep->timeout);
  if (sleep->cancelled != NULL)
    g_source_destroy (sleep->cancelled);
  g_clear_pointer (&sleep->timeout, g_source_unref);
  g_clear_pointer (&sleep->cancelled, g_source_unref);
}

static void
sleep_free (Sleep *sleep)
{
  sleep_clear (sleep);
  g_free (sleep);
}

static void
sleep_complete (GTask    *task,
                gboolean  slept)
{
  sleep_clear (g_task_get_task_data (task));
  if (slept)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
  g_object_unref (task);
}

static gboolean
sleep_timeout_cb (gpointer user_data)
{
  sleep_complete (user_data, TRUE);
  return G_SOURCE_REMOVE;
}

static gboolean
sleep_cancelled_cb (GCancellable *cancellable,
                    gpointer      user_data)
{
  sleep_complete (user_data, FALSE);
  return G_SOURCE_REMOVE;
}

void
sight_step_context_sleep_async (SightStepContext    *ctx,
                                gint64               ms,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  GTask *task = g_task_new (NULL, NULL, callback, user_data);
  GMainContext *context = g_task_get_context (task);
  Sleep *sleep = g_new0 (Sleep, 1);

  g_task_set_source_tag (task, sight_step_context_sleep_async);
  g_task_set_task_data (task, sleep, (GDestroyNotify) sleep_free);
  ms = sight_budget_cap_ms (ctx->budget, ms);
  if (g_cancellable_is_cancelled (ctx->cancellable) || ms <= 0)
    {
      sleep_complete (task, !g_cancellable_is_cancelled (ctx->cancellable));
      return;
    }

  sleep->timeout = g_timeout_source_new ((guint) MIN (ms, G_MAXUINT));
  g_source_set_callback (sleep->timeout, sleep_timeout_cb, task, NULL);
  g_source_attach (sleep->timeout, context);
  sleep->cancelled = g_cancellable_source_new (ctx->cancellable);
  g_source_set_callback (sleep->cancelled, G_SOURCE_FUNC (sleep_cancelled_cb), task, NULL);
  g_source_attach (sleep->cancelled, context);
}

gboolean
sight_step_context_sleep_finish (SightStepContext  *ctx,
                                 GAsyncResult      *result,
                                 GError           **error)
{
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == sight_step_context_sleep_async,
                        FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
action_delay_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;

  /* A cancelled delay is not this call's to report: the action that follows
   * runs on the cancelled step and reports it. */
  g_task_return_boolean (task, g_task_propagate_boolean (G_TASK (result), NULL));
}

void
sight_step_context_start_action_async (SightStepContext    *ctx,
                                       const char          *ref,
                                       GAsyncReadyCallback  callback,
                                       gpointer             user_data)
{
  GTask *task = g_task_new (NULL, NULL, callback, user_data);

  g_task_set_source_tag (task, sight_step_context_start_action_async);
  ctx->hooks->action_starting (ctx->hooks_data, ref);
  sight_step_context_sleep_async (ctx, ctx->action_delay_ms, action_delay_cb, task);
}

void
sight_step_context_start_action_finish (SightStepContext *ctx,
                                        GAsyncResult     *result)
{
  g_return_if_fail (g_task_get_source_tag (G_TASK (result)) == sight_step_context_start_action_async);
  g_task_propagate_boolean (G_TASK (result), NULL);
}

/* Acting */

/* The one timeout of an action: the project's actionTimeout, capped by the
 * step's deadline. */
static guint
action_timeout_ms (SightStepContext *ctx)
{
  gint64 configured = sight_project_get_action_timeout (ctx->project);

  return (guint) MAX (1, sight_budget_cap_ms (ctx->budget,
                                              configured > 0 ? configured : ACTION_TIMEOUT_MS));
}

static void
perform_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  JsonObject *reply = sight_web_page_perform_action_finish (SIGHT_WEB_PAGE (source), result,
                                                           &error);

  if (reply == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, reply, (GDestroyNotify) json_object_unref);
}

void
sight_step_context_perform_async (SightStepContext    *ctx,
                                  const SightAction   *action,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, NULL, callback, user_data);
  GError *error = NULL;

  g_task_set_source_tag (task, sight_step_context_perform_async);
  if (!sight_step_context_check_page (ctx, &error) ||
      !sight_budget_check_deadline (ctx->budget, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  sight_web_page_perform_action_async (ctx->page, action, action_timeout_ms (ctx),
                                       ctx->cancellable, perform_cb, g_object_ref (task));
}

JsonObject *
sight_step_context_perform_finish (SightStepContext  *ctx,
                                   GAsyncResult      *result,
                                   GError           **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
pixels_settled_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GError) error = NULL;
  gboolean changed = FALSE;

  if (!sight_web_page_settle_pixels_finish (SIGHT_WEB_PAGE (source), result, &changed, &error))
    g_debug ("the pixels were not watched: %s", error->message);
  g_task_return_boolean (task, TRUE);
}

void
sight_step_context_settle_pixels_async (SightStepContext    *ctx,
                                        gint64               spent_ms,
                                        GAsyncReadyCallback  callback,
                                        gpointer             user_data)
{
  GTask *task = g_task_new (NULL, NULL, callback, user_data);
  gint64 left = (gint64) action_timeout_ms (ctx) - MAX (spent_ms, 0);

  g_task_set_source_tag (task, sight_step_context_settle_pixels_async);
  if (!sight_step_context_check_page (ctx, NULL) || left <= 0)
    {
      g_task_return_boolean (task, TRUE);
      g_object_unref (task);
      return;
    }
  sight_web_page_settle_pixels_async (ctx->page, (guint) left, ctx->cancellable,
                                      pixels_settled_cb, task);
}

void
sight_step_context_settle_pixels_finish (SightStepContext *ctx,
                                         GAsyncResult     *result)
{
  g_return_if_fail (g_task_get_source_tag (G_TASK (result)) ==
                    sight_step_context_settle_pixels_async);
  g_task_propagate_boolean (G_TASK (result), NULL);
}

static void
fill_secret_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  JsonObject *reply = sight_secret_fill_finish (SIGHT_WEB_PAGE (source), result, &error);

  if (reply == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, reply, (GDestroyNotify) json_object_unref);
}

void
sight_step_context_fill_secret_async (SightStepContext    *ctx,
                                      const char          *ref,
                                      const char          *name,
                                      const char          *param,
                                      GAsyncReadyCallback  callback,
                                      gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, NULL, callback, user_data);
  GError *error = NULL;

  g_task_set_source_tag (task, sight_step_context_fill_secret_async);
  if (!sight_step_context_check_page (ctx, &error) ||
      !sight_budget_check_deadline (ctx->budget, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  sight_secret_fill_async (ctx->page, sight_project_get_secrets (ctx->project), name, param,
                           ctx->target_origin, ref, action_timeout_ms (ctx), ctx->cancellable,
                           fill_secret_cb, g_object_ref (task));
}

JsonObject *
sight_step_context_fill_secret_finish (SightStepContext  *ctx,
                                       GAsyncResult      *result,
                                       GError           **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* Committing an action */

typedef struct {
  SightStepContext      *ctx;
  const SightStepAction *action;
  gboolean               ends_step;
} Commit;

void
sight_step_action_clear (SightStepAction *action)
{
  g_clear_pointer (&action->record_args, json_node_unref);
  sight_action_clear (&action->action);
  g_clear_pointer (&action->log_line, g_free);
  g_clear_pointer (&action->secret_name, g_free);
  g_clear_pointer (&action->param, g_free);
  memset (action, 0, sizeof *action);
}

void
sight_step_context_add_performed (SightStepContext *ctx,
                                  const char       *tool,
                                  JsonNode         *args,
                                  JsonNode         *descriptor)
{
  JsonObject *record = json_object_new ();

  json_object_set_string_member (record, "tool", tool);
  json_object_set_member (record, "args",
                          args != NULL ? json_node_copy (args) : json_node_new (JSON_NODE_NULL));
  json_object_set_member (record, "descriptor",
                          descriptor != NULL ? json_node_copy (descriptor)
                                             : json_node_new (JSON_NODE_NULL));
  json_array_add_object_element (ctx->result->performed, record);
}

void
sight_step_context_committed (SightStepContext      *ctx,
                              const SightStepAction *action,
                              JsonNode              *descriptor)
{
  sight_budget_count_action (ctx->budget);
  ctx->result->actions = sight_budget_get_actions (ctx->budget);
  sight_step_context_add_performed (ctx, action->tool, action->record_args, descriptor);
  g_ptr_array_add (ctx->result->action_log, sight_secrets_redact (action->log_line));
  sight_step_context_emit_action (ctx, action->log_line);
  emit_budget (ctx);
}

/* The descriptor the trace cache replays @reply's action by: the engine's, with
 * the offset of a tap inside its node, and without the text of a field (which may
 * hold what was typed).  NULL for an action on the page itself. */
static JsonNode *
record_descriptor (const SightAction *action,
                   JsonObject        *reply)
{
  gboolean at_point = action->kind == SIGHT_ACTION_TAP_AT && action->ref == NULL;
  JsonNode *member = json_object_get_member (reply, "descriptor");
  JsonNode *copy;
  JsonObject *descriptor;
  const char *tag;

  if ((action->ref == NULL && !at_point) || member == NULL || !JSON_NODE_HOLDS_OBJECT (member))
    return NULL;
  copy = json_node_copy (member);
  descriptor = json_node_get_object (copy);
  tag = json_object_get_string_member_with_default (descriptor, "tag", "");
  if (g_str_equal (tag, "input") || g_str_equal (tag, "textarea") || g_str_equal (tag, "select"))
    json_object_remove_member (descriptor, "text");
  if (at_point && json_object_has_member (reply, "offset"))
    json_object_set_member (descriptor, "offset",
                            json_node_copy (json_object_get_member (reply, "offset")));
  return copy;
}

/* Whether the failure of an action ends the step, *@error replaced by the
 * deadline's once it passed; the page refusing the action does not. */
static gboolean
action_error_ends_step (SightStepContext       *ctx,
                        const SightStepAction  *action,
                        GError                **error)
{
  GError *deadline = NULL;

  /* A Secret the fill refused ends the step with its code, nothing typed. */
  if (action->secret_name != NULL && sight_secret_fill_error_is_refusal (*error))
    return TRUE;
  if (!sight_budget_check_deadline (ctx->budget, &deadline))
    {
      g_clear_error (error);
      *error = deadline;
      return TRUE;
    }
  return g_error_matches (*error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE) ||
         g_error_matches (*error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

static void
commit_performed_cb (GObject      *source,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  Commit *commit = g_task_get_task_data (task);
  SightStepContext *ctx = commit->ctx;
  const SightStepAction *action = commit->action;
  g_autoptr(JsonNode) descriptor = NULL;
  GError *error = NULL;
  JsonObject *reply;

  if (action->secret_name != NULL)
    reply = sight_step_context_fill_secret_finish (ctx, result, &error);
  else
    reply = sight_step_context_perform_finish (ctx, result, &error);
  if (reply == NULL)
    {
      commit->ends_step = action_error_ends_step (ctx, action, &error);
      g_task_return_error (task, error);
      return;
    }
  /* Committed: it counts. */
  descriptor = record_descriptor (&action->action, reply);
  sight_step_context_committed (ctx, action, descriptor);
  g_task_return_pointer (task, reply, (GDestroyNotify) json_object_unref);
}

static void
commit_started_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  GTask *task = user_data;
  Commit *commit = g_task_get_task_data (task);
  SightStepContext *ctx = commit->ctx;
  const SightStepAction *action = commit->action;

  sight_step_context_start_action_finish (ctx, result);
  /* the task's reference goes on to commit_performed_cb */
  if (action->secret_name != NULL)
    sight_step_context_fill_secret_async (ctx, action->action.ref, action->secret_name,
                                          action->param, commit_performed_cb, task);
  else
    sight_step_context_perform_async (ctx, &action->action, commit_performed_cb, task);
}

void
sight_step_context_commit_action_async (SightStepContext      *ctx,
                                        const SightStepAction *action,
                                        GAsyncReadyCallback    callback,
                                        gpointer               user_data)
{
  GTask *task = g_task_new (NULL, NULL, callback, user_data);
  Commit *commit = g_new0 (Commit, 1);
  GError *error = NULL;

  g_return_if_fail (action != NULL && action->tool != NULL);

  g_task_set_source_tag (task, sight_step_context_commit_action_async);
  commit->ctx = ctx;
  commit->action = action;
  g_task_set_task_data (task, commit, g_free);
  /* A credential or origin refused is no committed action. */
  if ((action->secret_name != NULL &&
       !sight_secret_fill_authorize (ctx->page, sight_project_get_secrets (ctx->project),
                                     action->secret_name, action->param, ctx->target_origin,
                                     &error)) ||
      !sight_budget_check_action (ctx->budget, &error))
    {
      commit->ends_step = TRUE;
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  sight_step_context_start_action_async (ctx, action->action.ref, commit_started_cb, task);
}

JsonObject *
sight_step_context_commit_action_finish (SightStepContext  *ctx,
                                         GAsyncResult      *result,
                                         gboolean          *out_ends_step,
                                         GError           **error)
{
  Commit *commit = g_task_get_task_data (G_TASK (result));

  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) ==
                        sight_step_context_commit_action_async, NULL);
  *out_ends_step = FALSE;
  if (g_task_had_error (G_TASK (result)))
    *out_ends_step = commit->ends_step;
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* What the model is given */

/* Page text must not close the data block it sits in. */
static void
append_escaped (GString    *out,
                const char *text)
{
  for (const char *p = text; *p != '\0'; p++)
    {
      if (*p == '<' && (g_str_has_prefix (p, "</page") || g_str_has_prefix (p, "<page")))
        g_string_append (out, "&lt;");
      else
        g_string_append_c (out, *p);
    }
}

char *
sight_step_context_page_block (SightObservation *observation,
                               gboolean          with_tree)
{
  GString *out = g_string_new ("<page>\n");
  g_autofree char *redacted = NULL;

  g_string_append (out, "url: ");
  append_escaped (out, sight_observation_get_url (observation) ?: "");
  g_string_append (out, "\n");
  if (with_tree)
    {
      g_string_append (out, "title: ");
      append_escaped (out, sight_observation_get_title (observation) ?: "");
      g_string_append (out, "\n");
      append_escaped (out, sight_observation_get_text (observation) ?: "");
      if (out->len > 0 && out->str[out->len - 1] != '\n')
        g_string_append_c (out, '\n');
    }
  else
    g_string_append (out, "(the tree is withheld: judge from the screenshot)\n");
  g_string_append (out, "</page>");

  redacted = sight_secrets_redact (out->str);
  g_string_free (out, TRUE);
  return g_steal_pointer (&redacted);
}

void
sight_step_context_add_injection (SightStepContext *ctx,
                                  JsonNode         *injection)
{
  const char *text;

  if (injection == NULL || JSON_NODE_HOLDS_NULL (injection) ||
      json_node_get_value_type (injection) != G_TYPE_STRING)
    return;
  text = json_node_get_string (injection);
  if (text == NULL || *text == '\0')
    return;
  g_ptr_array_add (ctx->result->injections, sight_text_sanitize (text, 512));
}

const char *
sight_step_context_resource_text (const char *name)
{
  g_autofree char *path = g_strconcat ("/dev/sightline/agent/prompts/", name, NULL);
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) error = NULL;

  /* The bytes of a compiled-in resource point into the program's data, which
   * stays; GResource ends every file with a NUL. */
  bytes = g_resource_lookup_data (sight_agent_prompts_get_resource (), path,
                                  G_RESOURCE_LOOKUP_FLAGS_NONE, &error);
  if (bytes == NULL)
    g_error ("%s missing from the agent's resources: %s", name, error->message);
  return g_bytes_get_data (bytes, NULL);
}
