/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-mcp-task-tools"

#include "config.h"

#include "sight-mcp-runner-private.h"

#include "sight-error.h"
#include "sight-task.h"

/* run_task and get_task: a task of the runner, waited for up to the call's
 * wait; a task still running then is a normal "running" result. */

typedef struct {
  SightMcpToolCall *call;
  SightTask        *task;
  gboolean          is_get;
  gulong            finished_id;
  gulong            wait_id;
  guint             idle_id;
} TaskWait;

static const char running_note[] =
  "The task is still running and its session stays open. Call get_task (or get_report with the "
  "taskId) to read it later, then stop_session when you are done.";

static void
task_wait_free (TaskWait *wait)
{
  g_clear_signal_handler (&wait->finished_id, wait->task);
  if (wait->wait_id != 0)
    g_cancellable_disconnect (sight_mcp_tool_call_get_wait_cancellable (wait->call),
                              wait->wait_id);
  g_clear_object (&wait->task);
  g_clear_object (&wait->call);
  g_free (wait);
}

static void
return_task (SightMcpToolCall *call,
             SightTask        *task,
             gboolean          is_get)
{
  g_autoptr(JsonObject) structured = json_object_new ();
  g_autoptr(JsonNode) record = NULL;
  g_autofree char *text = sight_task_text (task);
  JsonObject *object;

  json_object_set_string_member (structured, "sessionId", sight_task_get_session_id (task));
  if (!sight_task_is_finished (task))
    {
      json_object_set_string_member (structured, "taskId", sight_task_get_id (task));
      json_object_set_string_member (structured, "status", "running");
      if (!is_get)
        json_object_set_boolean_member (structured, "sessionClosed", FALSE);
      json_object_set_string_member (structured, "note", running_note);
      sight_mcp_tool_call_return_result (call, text, structured, FALSE);
      return;
    }

  record = sight_task_to_json (task);
  object = json_node_get_object (record);
  if (is_get)
    {
      json_object_set_string_member (structured, "taskId", sight_task_get_id (task));
      json_object_set_string_member (structured, "status", "finished");
    }
  else
    {
      json_object_set_boolean_member (structured, "sessionClosed",
                                      sight_task_get_session_closed (task));
      json_object_set_string_member (object, "taskId", sight_task_get_id (task));
      json_object_set_string_member (object, "text", text);
    }
  json_object_set_object_member (structured, "task", json_object_ref (object));
  sight_mcp_tool_call_return_result (call, text, structured, sight_task_is_unusable (task));
}

static gboolean
task_wait_over_idle_cb (gpointer data)
{
  TaskWait *wait = data;

  wait->idle_id = 0;
  if (!sight_mcp_tool_call_is_returned (wait->call))
    return_task (wait->call, wait->task, wait->is_get);
  task_wait_free (wait);
  return G_SOURCE_REMOVE;
}

static void
task_finished_cb (SightTask *task,
                  TaskWait  *wait)
{
  /* When the wait ended just before, its idle answers (with the end). */
  if (wait->idle_id == 0)
    task_wait_over_idle_cb (wait);
}

static void
wait_over_cb (GCancellable *cancellable,
              TaskWait     *wait)
{
  /* Disconnecting from inside the handler would deadlock: answer from an
   * idle instead, then the finished handler is dropped there. */
  if (wait->idle_id == 0)
    wait->idle_id = g_idle_add (task_wait_over_idle_cb, wait);
}

static void
wait_for_task (SightMcpToolCall *call,
               SightTask        *task,
               gboolean          is_get)
{
  TaskWait *wait;

  if (sight_task_is_finished (task))
    {
      return_task (call, task, is_get);
      return;
    }
  wait = g_new0 (TaskWait, 1);
  wait->call = g_object_ref (call);
  wait->task = g_object_ref (task);
  wait->is_get = is_get;
  wait->finished_id = g_signal_connect (task, "finished", G_CALLBACK (task_finished_cb), wait);
  wait->wait_id = g_cancellable_connect (sight_mcp_tool_call_get_wait_cancellable (call),
                                         G_CALLBACK (wait_over_cb), wait, NULL);
}

static void
task_started_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  g_autoptr(SightMcpToolCall) call = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(SightTask) task = sight_task_start_finish (result, &error);

  if (sight_mcp_tool_call_is_returned (call))
    return;
  if (task == NULL)
    {
      sight_mcp_tool_call_return_gerror (call, error);
      return;
    }
  wait_for_task (call, task, FALSE);
}

static void
run_task_handler (SightMcpToolCall *call,
                  gpointer          user_data)
{
  g_autoptr(GError) error = NULL;
  SightStore *store = sight_store_get_default (&error);
  g_autoptr(GCancellable) job = NULL;

  if (store == NULL)
    {
      sight_mcp_tool_call_return_gerror (call, error);
      return;
    }
  /* The task goes on after the wait; a client that cancels while it waits
   * stops it. */
  job = _sight_mcp_job_cancellable (call);
  sight_task_start_async (store, sight_mcp_tool_call_get_arguments (call), job, task_started_cb,
                          g_object_ref (call));
}

static void
get_task_handler (SightMcpToolCall *call,
                  gpointer          user_data)
{
  JsonObject *args = sight_mcp_tool_call_get_arguments (call);
  const char *session_id = json_object_get_string_member (args, "sessionId");
  const char *task_id = json_object_get_string_member_with_default (args, "taskId", NULL);
  SightTask *task;

  if (task_id != NULL)
    {
      task = sight_task_lookup (task_id);
      if (task != NULL && g_strcmp0 (sight_task_get_session_id (task), session_id) != 0)
        task = NULL;
    }
  else
    task = sight_task_latest_for_session (session_id);
  if (task == NULL)
    {
      g_autofree char *safe_session = sight_text_sanitize (session_id, 100);
      g_autofree char *safe_task = sight_text_sanitize (task_id, 100);

      if (task_id != NULL)
        sight_mcp_tool_call_return_error (call, "not_found", NULL, "No task %s on session %s",
                                          safe_task, safe_session);
      else
        sight_mcp_tool_call_return_error (call, "not_found", NULL, "Session %s has no task",
                                          safe_session);
      return;
    }
  wait_for_task (call, task, TRUE);
}

void
_sight_mcp_task_tools_install (SightMcpRegistry *registry)
{
  sight_mcp_registry_set_handler (registry, "run_task", run_task_handler, NULL, NULL);
  sight_mcp_registry_set_handler (registry, "get_task", get_task_handler, NULL, NULL);
}
