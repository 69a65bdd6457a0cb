/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-step-executor"

#include "config.h"

#include "sight-step-executor.h"

#include "sight-direct-run.h"
#include "sight-direct-step.h"
#include "sight-error.h"
#include "sight-external-executor.h"

gboolean
sight_step_kind_name_is_valid (const char *name)
{
  return name != NULL && g_strv_contains (sight_step_kind_names, name);
}

SightStepRequest *
sight_step_request_new_for_kind (SightProject  *project,
                                 const char    *kind,
                                 const char    *instruction,
                                 JsonObject    *options,
                                 const char    *test_agent,
                                 gint64         remaining_test_ms,
                                 guint          direct_timeout_ms,
                                 GError       **error)
{
  SightStepKind step_kind;

  g_return_val_if_fail (project != NULL, NULL);
  g_return_val_if_fail (instruction != NULL, NULL);

  if (g_strcmp0 (kind, "do") == 0)
    return sight_step_request_new_direct (instruction,
                                          options != NULL
                                          ? json_object_get_member (options, "params") : NULL,
                                          direct_timeout_ms);
  if (!sight_step_kind_from_string (kind, &step_kind))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "a step is one of do, act, assert, waitFor or extract");
      return NULL;
    }
  return sight_step_request_new (project, step_kind, instruction, options, test_agent,
                                 remaining_test_ms, error);
}

const char *
sight_step_kind_for_text (const char *text)
{
  g_autoptr(SightDirectStep) direct = NULL;

  g_return_val_if_fail (text != NULL, NULL);

  direct = sight_direct_step_parse (text, NULL);
  return direct != NULL ? "do" : "act";
}

SightStepRequest *
sight_step_request_new_for_text (SightProject  *project,
                                 const char    *text,
                                 guint          timeout_ms,
                                 GError       **error)
{
  g_return_val_if_fail (project != NULL, NULL);
  g_return_val_if_fail (text != NULL, NULL);

  if (g_str_equal (sight_step_kind_for_text (text), "do"))
    return sight_step_request_new_direct (text, NULL, timeout_ms);
  /* Not a direct step: the agent acts on it, which needs a model. */
  return sight_step_request_new (project, SIGHT_STEP_ACT, text, NULL, NULL, timeout_ms, error);
}

static const SightStepBody external_executor = {
  sight_external_executor_run_async,
  sight_external_executor_run_finish,
};

typedef struct {
  SightAgent       *agent;
  SightStepRequest *request;
  gint64            started;
  char             *masked;   /* sight_direct_step_run_get_masked_text () */
} Execution;

static void
execution_free (Execution *execution)
{
  g_clear_object (&execution->agent);
  g_clear_pointer (&execution->request, sight_step_request_free);
  g_free (execution->masked);
  g_free (execution);
}

static void
agent_done_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GError) error = NULL;
  SightStepResult *step = sight_agent_run_finish (SIGHT_AGENT (source), result, &error);

  if (step == NULL)
    g_task_return_error (task, g_steal_pointer (&error));
  else
    g_task_return_pointer (task, step, (GDestroyNotify) sight_step_result_unref);
}

static void
direct_done_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  Execution *execution = g_task_get_task_data (task);
  SightWebPage *page = SIGHT_WEB_PAGE (source);
  g_autoptr(GError) error = NULL;
  g_autofree char *summary = sight_direct_step_run_finish (page, result, &error);
  const char *masked = sight_direct_step_run_get_masked_text (result);
  JsonObject *record = sight_direct_step_run_get_record (result);
  SightStepResult *step;

  execution->masked = g_strdup (masked);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  step = sight_step_result_new (SIGHT_STEP_ACT,
                                masked != NULL ? masked : execution->request->instruction);
  step->direct = TRUE;
  step->instruction_masked = masked != NULL;
  step->url = g_strdup (sight_web_page_get_uri (page));
  step->duration_ms = (g_get_monotonic_time () - execution->started) / 1000;
  if (summary != NULL)
    step->summary = g_steal_pointer (&summary);
  if (record != NULL)
    {
      step->actions = 1;
      json_array_add_object_element (step->performed, json_object_ref (record));
    }
  if (error != NULL)
    sight_step_result_take_error (step, g_steal_pointer (&error));
  g_task_return_pointer (task, step, (GDestroyNotify) sight_step_result_unref);
}

void
sight_step_execute_async (SightAgent          *agent,
                          SightStepRequest    *request,
                          GCancellable        *cancellable,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  Execution *execution;

  g_return_if_fail (SIGHT_IS_AGENT (agent));
  g_return_if_fail (request != NULL);

  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_step_execute_async);
  /* A cancelled step still finishes through its own callback chain. */
  g_task_set_check_cancellable (task, FALSE);
  if (!request->direct)
    {
      /* An agent with a custom executor has it carry out act and assert. */
      if (sight_agent_config_dispatches (request->limits.agent, request->limits.kind))
        sight_agent_run_body_async (agent, request, &external_executor, cancellable,
                                    agent_done_cb, g_steal_pointer (&task));
      else
        sight_agent_run_async (agent, request, cancellable, agent_done_cb,
                               g_steal_pointer (&task));
      return;
    }
  execution = g_new0 (Execution, 1);
  execution->agent = g_object_ref (agent);
  execution->request = request;
  execution->started = g_get_monotonic_time ();
  g_task_set_task_data (task, execution, (GDestroyNotify) execution_free);
  sight_direct_step_run_async (sight_agent_get_page (agent), request->instruction,
                               request->params,
                               sight_project_get_secrets (sight_agent_get_project (agent)),
                               (guint) request->limits.timeout_ms, cancellable, direct_done_cb,
                               g_steal_pointer (&task));
}

SightStepResult *
sight_step_execute_finish (GAsyncResult  *result,
                           GError       **error)
{
  SightStepResult *step;

  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);

  step = g_task_propagate_pointer (G_TASK (result), error);
  if (step != NULL && step->error != NULL)
    sight_step_result_propagate (step, error);
  return step;
}

const char *
sight_step_execute_get_masked_instruction (GAsyncResult *result)
{
  Execution *execution;

  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);

  execution = g_task_get_task_data (G_TASK (result));
  return execution != NULL ? execution->masked : NULL;
}
