/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-flow-step"

#include "config.h"

#include "sight-flow-step.h"

#include "sight-agent.h"
#include "sight-direct-run.h"
#include "sight-direct-step.h"
#include "sight-error.h"
#include "sight-project.h"

typedef struct {
  SightAgent *agent;
  char       *masked_text;  /* sight_direct_step_run_get_masked_text () */
} FlowStep;

static void
flow_step_free (FlowStep *flow)
{
  g_clear_object (&flow->agent);
  g_free (flow->masked_text);
  g_free (flow);
}

static void
act_done_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(SightStepResult) step = sight_agent_run_finish (SIGHT_AGENT (source), result, &error);
  JsonObject *detail;

  if (error != NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  detail = json_object_new ();
  json_object_set_string_member (detail, "kind", "act");
  json_object_set_string_member (detail, "summary", step->summary ? step->summary : "");
  json_object_set_int_member (detail, "modelCalls", step->model_calls);
  json_object_set_int_member (detail, "actions", step->actions);
  g_task_return_pointer (task, detail, (GDestroyNotify) json_object_unref);
}

static void
direct_done_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *summary = sight_direct_step_run_finish (SIGHT_WEB_PAGE (source), result,
                                                           &error);
  FlowStep *flow = g_task_get_task_data (task);
  JsonObject *detail;

  flow->masked_text = g_strdup (sight_direct_step_run_get_masked_text (result));
  if (summary == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  detail = json_object_new ();
  json_object_set_string_member (detail, "kind", "do");
  json_object_set_string_member (detail, "summary", summary);
  g_task_return_pointer (task, detail, (GDestroyNotify) json_object_unref);
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
  g_autoptr(SightDirectStep) direct = NULL;
  g_autoptr(SightProject) project = NULL;
  g_autoptr(SightStepRequest) request = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *cwd = g_get_current_dir ();
  FlowStep *flow = g_new0 (FlowStep, 1);

  g_task_set_source_tag (task, sight_flow_step_run_async);
  g_task_set_task_data (task, flow, (GDestroyNotify) flow_step_free);

  project = sight_project_load_for (cwd, &error);
  if (project == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  direct = sight_direct_step_parse (text, NULL);
  if (direct != NULL)
    {
      sight_direct_step_run_async (page, text, NULL, sight_project_get_secrets (project),
                                   timeout_ms, cancellable, direct_done_cb,
                                   g_steal_pointer (&task));
      return;
    }

  /* Not a direct step: the agent acts on it, which needs a model. */
  request = sight_step_request_new (project, SIGHT_STEP_ACT, text, NULL, NULL, timeout_ms, &error);
  if (request == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  flow->agent = sight_agent_new (project, page);
  sight_agent_run_async (flow->agent, g_steal_pointer (&request), cancellable, act_done_cb,
                         g_steal_pointer (&task));
}

const char *
sight_flow_step_run_get_masked_text (GAsyncResult *result)
{
  FlowStep *flow;

  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);

  flow = g_task_get_task_data (G_TASK (result));
  return flow != NULL ? flow->masked_text : NULL;
}

JsonObject *
sight_flow_step_run_finish (GAsyncResult  *result,
                            GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
