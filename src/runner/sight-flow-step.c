/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-flow-step"

#include "config.h"

#include "sight-flow-step.h"

#include "sight-error.h"
#include "sight-project.h"
#include "sight-step-executor.h"

static void
executed_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GError) error = NULL;
  SightStepResult *step = sight_step_execute_finish (result, &error);

  if (step == NULL)
    g_task_return_error (task, g_steal_pointer (&error));
  else
    g_task_return_pointer (task, step, (GDestroyNotify) sight_step_result_unref);
}

void
sight_flow_step_run_async (SightWebPage        *page,
                           const char          *text,
                           guint                timeout_ms,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  g_autoptr(SightProject) project = NULL;
  g_autoptr(SightStepRequest) request = NULL;
  g_autoptr(SightAgent) agent = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *cwd = g_get_current_dir ();
  SightStepResult *step;

  g_task_set_source_tag (task, sight_flow_step_run_async);
  g_task_set_check_cancellable (task, FALSE);

  project = sight_project_load_for (cwd, &error);
  if (project != NULL)
    request = sight_step_request_new_for_text (project, text, timeout_ms, &error);
  if (request == NULL)
    {
      /* It did not open: a result all the same, as any step that failed. */
      step = sight_step_result_new (SIGHT_STEP_ACT, text);
      sight_step_result_take_error (step, g_steal_pointer (&error));
      g_task_return_pointer (task, step, (GDestroyNotify) sight_step_result_unref);
      return;
    }
  agent = sight_agent_new (project, page);
  sight_step_execute_async (agent, g_steal_pointer (&request), cancellable, executed_cb,
                            g_steal_pointer (&task));
}

SightStepResult *
sight_flow_step_run_finish (GAsyncResult  *result,
                            GError       **error)
{
  /* The flow's task ends as the executor's does: a result, or NULL when
   * cancelled. */
  return sight_step_execute_finish (result, error);
}
