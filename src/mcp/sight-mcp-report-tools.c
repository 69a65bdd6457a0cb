/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-mcp-report-tools"

#include "config.h"

#include "sight-mcp-runner-private.h"
#include "sight-mcp-runner-tools.h"

#include <errno.h>
#include <string.h>

#include "sight-error.h"
#include "sight-report.h"
#include "sight-smoke.h"

/* smoke_test and get_report: a run in the store, waited for while it runs,
 * returned as the spec's report. */

#define POLL_INTERVAL_MS 300

/* Work that outlives its call */

typedef struct {
  GWeakRef      call;
  GCancellable *job;
} JobLink;

static void
job_link_free (gpointer data)
{
  JobLink *link = data;

  g_weak_ref_clear (&link->call);
  g_clear_object (&link->job);
  g_free (link);
}

static void
call_cancelled_cb (GCancellable *cancellable,
                   gpointer      data)
{
  JobLink *link = data;
  g_autoptr(SightMcpToolCall) call = g_weak_ref_get (&link->call);

  /* Once the call answered (the wait ended), the job is no longer the
   * call's: a client going away then leaves it running to its end. */
  if (call != NULL && !sight_mcp_tool_call_is_returned (call))
    g_cancellable_cancel (link->job);
}

GCancellable *
_sight_mcp_job_cancellable (SightMcpToolCall *call)
{
  GCancellable *job = g_cancellable_new ();
  JobLink *link = g_new0 (JobLink, 1);

  g_weak_ref_init (&link->call, call);
  link->job = g_object_ref (job);
  if (g_cancellable_connect (sight_mcp_tool_call_get_cancellable (call),
                             G_CALLBACK (call_cancelled_cb), link, job_link_free) == 0)
    g_cancellable_cancel (job);
  return job;
}

/* Waiting for a run */

typedef struct {
  SightMcpToolCall     *call;
  SightStore           *store;
  char                 *run_id;
  SightMcpRunReadyFunc  func;
  gpointer              user_data;
} RunWait;

static void
run_wait_free (RunWait *wait)
{
  g_clear_object (&wait->call);
  g_clear_object (&wait->store);
  g_free (wait->run_id);
  g_free (wait);
}

static void run_wait_read (RunWait *wait);

static gboolean
run_wait_again_cb (gpointer data)
{
  run_wait_read (data);
  return G_SOURCE_REMOVE;
}

static void
run_loaded_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  RunWait *wait = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(SightRunData) data = sight_store_load_run_finish (SIGHT_STORE (source), result, &error);

  if (data != NULL && data->run->verdict == SIGHT_RUN_VERDICT_RUNNING &&
      !g_cancellable_is_cancelled (sight_mcp_tool_call_get_wait_cancellable (wait->call)) &&
      !sight_mcp_tool_call_is_returned (wait->call))
    {
      g_timeout_add (POLL_INTERVAL_MS, run_wait_again_cb, wait);
      return;
    }
  if (!sight_mcp_tool_call_is_returned (wait->call))
    wait->func (wait->call, data, error, wait->user_data);
  run_wait_free (wait);
}

static void
run_wait_read (RunWait *wait)
{
  sight_store_load_run_async (wait->store, wait->run_id, NULL, run_loaded_cb, wait);
}

void
_sight_mcp_wait_for_run (SightMcpToolCall     *call,
                         SightStore           *store,
                         const char           *run_id,
                         SightMcpRunReadyFunc  func,
                         gpointer              user_data)
{
  RunWait *wait = g_new0 (RunWait, 1);

  wait->call = g_object_ref (call);
  wait->store = g_object_ref (store);
  wait->run_id = g_strdup (run_id);
  wait->func = func;
  wait->user_data = user_data;
  run_wait_read (wait);
}

/* The report */

char *
_sight_mcp_write_html_report (SightStore         *store,
                              const SightRunData *data)
{
  g_autofree char *dir = g_path_get_dirname (sight_store_get_path (store));
  g_autofree char *reports = g_build_filename (dir, "reports", NULL);
  g_autofree char *name = g_strconcat (data->run->id, ".html", NULL);
  g_autofree char *path = g_build_filename (reports, name, NULL);
  g_autoptr(GError) error = NULL;

  if (g_mkdir_with_parents (reports, 0700) != 0 ||
      !sight_report_write (data, SIGHT_REPORT_HTML, path, &error))
    {
      g_warning ("Could not write the HTML report of %s: %s", data->run->id,
                 error ? error->message : g_strerror (errno));
      return NULL;
    }
  return g_filename_to_uri (path, NULL, NULL);
}

/* Adds @line to the report's text, before its @last_line when it ends so. */
static void
insert_before_last_line (GString    *out,
                         const char *last_line,
                         const char *line)
{
  if (g_str_has_suffix (out->str, last_line))
    g_string_insert (out, out->len - strlen (last_line), line);
  else
    g_string_append (out, line);
}

void
_sight_mcp_return_report (SightMcpToolCall *call,
                          SightStore       *store,
                          SightRunData     *data)
{
  g_autoptr(JsonNode) report = sight_report_to_json (data);
  g_autofree char *text = sight_report_text (data);
  g_autofree char *url = NULL;
  g_autoptr(GString) out = g_string_new (text);
  JsonObject *structured = json_node_get_object (report);
  const char *verdict = json_object_get_string_member (structured, "verdict");
  const char *last_line = "\nThe whole report is in structuredContent.";

  /* A running test has no report worth a file yet. */
  if (data->run->verdict != SIGHT_RUN_VERDICT_RUNNING)
    url = _sight_mcp_write_html_report (store, data);
  if (url != NULL)
    {
      g_autofree char *line = g_strdup_printf ("\nFull HTML report: %s", url);

      insert_before_last_line (out, last_line, line);
      json_object_set_string_member (structured, "reportUrl", url);
    }
  if (sight_run_data_find_video (data) != NULL)
    {
      const char *video = sight_run_data_find_video (data)->path;
      g_autofree char *line = g_strdup_printf ("\nVideo of the run: %s", video);

      insert_before_last_line (out, last_line, line);
      json_object_set_string_member (structured, "video", video);
    }
  sight_mcp_tool_call_return_result (call, out->str, structured, g_str_equal (verdict, "error"));
}

/* smoke_test */

static void
report_ready_cb (SightMcpToolCall *call,
                 SightRunData     *data,
                 const GError     *error,
                 gpointer          user_data)
{
  SightStore *store = user_data;

  if (data == NULL)
    sight_mcp_tool_call_return_gerror (call, error);
  else
    _sight_mcp_return_report (call, store, data);
  g_object_unref (store);
}

static void
smoke_done_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = sight_smoke_test_finish (result, &error);

  /* The outcome is read from the store; here only a failure to say so is
   * worth a line in the log. */
  if (node == NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_warning ("The smoke test ended with an error: %s", error->message);
}

static void
smoke_test_handler (SightMcpToolCall *call,
                    gpointer          user_data)
{
  g_autoptr(GError) error = NULL;
  SightStore *store = sight_store_get_default (&error);
  g_autoptr(GCancellable) job = NULL;
  g_autofree char *run_id = NULL;

  if (store == NULL)
    {
      sight_mcp_tool_call_return_gerror (call, error);
      return;
    }
  job = _sight_mcp_job_cancellable (call);
  run_id = sight_smoke_test_start (store, sight_mcp_tool_call_get_arguments (call), job,
                                   smoke_done_cb, NULL, &error);
  if (run_id == NULL)
    {
      sight_mcp_tool_call_return_gerror (call, error);
      return;
    }
  _sight_mcp_wait_for_run (call, store, run_id, report_ready_cb, g_object_ref (store));
}

/* get_report */

static void
get_report_ready_cb (SightMcpToolCall *call,
                     SightRunData     *data,
                     const GError     *error,
                     gpointer          user_data)
{
  SightStore *store = user_data;

  if (data == NULL && g_error_matches (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT))
    {
      JsonObject *args = sight_mcp_tool_call_get_arguments (call);
      g_autofree char *safe = sight_text_sanitize (json_object_get_string_member (args, "id"), 100);

      sight_mcp_tool_call_return_error (call, "not_found", NULL, "No run or task %s", safe);
    }
  else
    report_ready_cb (call, data, error, g_object_ref (store));
  g_object_unref (store);
}

static void
get_report_handler (SightMcpToolCall *call,
                    gpointer          user_data)
{
  g_autoptr(GError) error = NULL;
  SightStore *store = sight_store_get_default (&error);
  JsonObject *args = sight_mcp_tool_call_get_arguments (call);

  if (store == NULL)
    {
      sight_mcp_tool_call_return_gerror (call, error);
      return;
    }
  _sight_mcp_wait_for_run (call, store, json_object_get_string_member (args, "id"),
                           get_report_ready_cb, g_object_ref (store));
}

void
_sight_mcp_report_tools_install (SightMcpRegistry *registry)
{
  sight_mcp_registry_set_handler (registry, "smoke_test", smoke_test_handler, NULL, NULL);
  sight_mcp_registry_set_handler (registry, "get_report", get_report_handler, NULL, NULL);
}
