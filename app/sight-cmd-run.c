/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-cmd-run"

#include "config.h"

#include "sight-cmd-run.h"

#include <glib/gi18n.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <glib-unix.h>
#include <signal.h>

#include "sight-cli.h"
#include "sight-cli-args.h"
#include "sight-commands.h"
#include "sight-error.h"
#include "sight-report.h"
#include "sight-suite.h"

static const SightArgSpec run_specs[] = {
  { "project", "project", SIGHT_ARG_STRING, N_("The project file (default: sightline.json next to or above each test)") },
  { "workers", "workers", SIGHT_ARG_INT, N_("Tests run at once, each in its own page, 1 to 16 (default 1)") },
  { "shard", "shard", SIGHT_ARG_STRING, N_("Run only share I of N of the tests, as I/N") },
  { "retries", "retries", SIGHT_ARG_INT, N_("Run a failed test again up to N times, 0 to 10 (default 0)") },
  { "grep", "grep", SIGHT_ARG_STRING, N_("Run only the tests whose name or file name matches this regular expression") },
  { "base-url", "baseUrl", SIGHT_ARG_STRING, N_("Resolve the tests’ relative start addresses against this URL") },
  { "report", "report", SIGHT_ARG_STRING, N_("Write the HTML report to FILE.html, or index.html and results.json into a folder") },
  { "junit", "junit", SIGHT_ARG_STRING, N_("Write a JUnit XML report to FILE") },
  { NULL }
};

/* Every stored run the result names, for the report's screenshots. */
static GHashTable *
load_runs (JsonObject *result,
           SightStore *store)
{
  GHashTable *runs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                            (GDestroyNotify) sight_run_data_free);
  JsonArray *tests = json_object_get_array_member (result, "tests");

  for (guint i = 0; store != NULL && i < json_array_get_length (tests); i++)
    {
      JsonArray *attempts = json_object_get_array_member (json_array_get_object_element (tests, i),
                                                          "attempts");

      for (guint a = 0; attempts != NULL && a < json_array_get_length (attempts); a++)
        {
          const char *run_id = json_object_get_string_member_with_default (
            json_array_get_object_element (attempts, a), "runId", NULL);
          SightRunData *data;

          if (run_id == NULL || g_hash_table_contains (runs, run_id))
            continue;
          data = sight_store_load_run (store, run_id, NULL);
          if (data != NULL)
            g_hash_table_insert (runs, g_strdup (run_id), data);
        }
    }
  return runs;
}

int
sight_cmd_run_emit (JsonObject *result,
                    SightStore *store,
                    const char *report,
                    const char *junit,
                    gboolean    json,
                    gboolean    tests_shown)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *html_path = NULL;

  if (report != NULL)
    {
      g_autoptr(GHashTable) runs = load_runs (result, store);

      if (g_str_has_suffix (report, ".html") || g_str_has_suffix (report, ".htm"))
        html_path = g_strdup (report);
      else
        {
          g_autofree char *results = g_build_filename (report, "results.json", NULL);

          if (g_mkdir_with_parents (report, 0755) != 0)
            {
              error = g_error_new (SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                   _("Cannot create the report folder %s: %s"), report,
                                   g_strerror (errno));
              return sight_cli_report_error (error);
            }
          html_path = g_build_filename (report, "index.html", NULL);
          if (!sight_report_write_suite (result, NULL, SIGHT_REPORT_JSON, results, &error))
            return sight_cli_report_error (error);
        }
      if (!sight_report_write_suite (result, runs, SIGHT_REPORT_HTML, html_path, &error))
        return sight_cli_report_error (error);
    }
  if (junit != NULL &&
      !sight_report_write_suite (result, NULL, SIGHT_REPORT_JUNIT, junit, &error))
    return sight_cli_report_error (error);

  if (json)
    {
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
      g_autofree char *text = NULL;

      json_node_set_object (node, result);
      text = sight_cli_json_text (node);
      g_print ("%s\n", text);
    }
  else
    {
      g_autofree char *text = tests_shown ? sight_suite_totals_text (result)
                                          : sight_suite_text (result);

      g_print ("%s\n", text);
    }
  /* With --json, stdout holds only the JSON. */
  if (html_path != NULL)
    {
      if (json)
        g_printerr (_("HTML report: %s\n"), html_path);
      else
        g_print (_("HTML report: %s\n"), html_path);
    }
  if (junit != NULL && !json)
    g_print (_("JUnit report: %s\n"), junit);
  return sight_suite_exit_status (result);
}

/* Each test's line as it ends, so a long suite shows its progress. */
static void
test_done_cb (JsonObject *test,
              gpointer    user_data)
{
  g_autofree char *line = sight_suite_test_text (test);

  g_print ("%s\n", line);
}

/* The first SIGINT or SIGTERM stops the run cleanly: the tests in flight
 * end as interrupted, the reports are written. A second one kills. */
static gboolean
interrupt_cb (gpointer user_data)
{
  g_printerr ("%s\n", _("Interrupted: recording the tests in flight and writing the reports "
                        "(interrupt again to quit at once)"));
  g_cancellable_cancel (G_CANCELLABLE (user_data));
  return G_SOURCE_REMOVE;
}

static char *
take_string (JsonObject *args,
             const char *name)
{
  char *value = NULL;

  if (json_object_has_member (args, name))
    {
      value = g_strdup (json_object_get_string_member (args, name));
      json_object_remove_member (args, name);
    }
  return value;
}

int
sight_cmd_run (int    argc,
               char **argv)
{
  g_auto(SightArgs) args = { 0 };
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(JsonNode) outcome = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SightStore) store = NULL;
  g_autoptr(GPtrArray) files = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autofree char *report = NULL;
  g_autofree char *junit = NULL;
  int status;

  if (!sight_args_parse ("run", "FILE…", run_specs, FALSE, argc, argv, &args, &status))
    return status;
  if (args.positional == NULL || args.positional[0] == NULL)
    return sight_cli_usage_error ("run", _("give at least one test file (*.sightline.json) or "
                                           "a folder of them"));
  report = take_string (args.args, "report");
  junit = take_string (args.args, "junit");

  /* A test file that does not parse is bad usage: nothing runs. */
  files = sight_suite_load_files ((const char * const *) args.positional, &error);
  if (files == NULL)
    return sight_cli_report_error (error);

  store = sight_store_new (NULL, &error);
  if (store == NULL)
    return sight_cli_report_error (error);

  g_unix_signal_add (SIGINT, interrupt_cb, cancellable);
  g_unix_signal_add (SIGTERM, interrupt_cb, cancellable);
  sight_suite_run_async (store, files, args.args, args.json ? NULL : test_done_cb, NULL,
                         cancellable, sight_cli_result_cb, &result);
  outcome = sight_suite_run_finish (sight_cli_wait (&result), &error);
  if (outcome == NULL)
    return sight_cli_report_error (error);
  status = sight_cmd_run_emit (json_node_get_object (outcome), store, report, junit, args.json,
                               !args.json);
  /* As a shell reports a command a SIGINT ended. */
  return g_cancellable_is_cancelled (cancellable) ? 130 : status;
}
