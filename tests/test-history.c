/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-history"

#include "config.h"

#include <adwaita.h>
#include <string.h>

#include "app-test-common.h"
#include "test-files.h"
#include "sight-history.h"
#include "sight-inspector.h"
#include "sight-store-sync.h"
#include "sight-store.h"
#include "sight-window.h"

#define DEADLINE_US (30 * G_USEC_PER_SEC)

/* Runs written the way the runner writes them (a real SQLite store in a
 * temporary data dir), then read by the window's history. */
static SightWindow *window;
static char *tmpdir;
static char *failed_run_id;
static guint runs_loaded, run_loaded, observations;

static gboolean
wait_count (guint *counter,
            guint  target)
{
  gint64 deadline = g_get_monotonic_time () + DEADLINE_US;

  while (*counter < target && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  return *counter >= target;
}

/* A small PNG of one color, as a stored screenshot. */
static GBytes *
make_png (guint8 red)
{
  const int width = 80, height = 60;
  g_autofree guint8 *pixels = g_malloc (width * height * 4);
  g_autoptr(GBytes) data = NULL;
  g_autoptr(GdkTexture) texture = NULL;

  for (int i = 0; i < width * height; i++)
    {
      pixels[i * 4] = red;
      pixels[i * 4 + 1] = 120;
      pixels[i * 4 + 2] = 200;
      pixels[i * 4 + 3] = 255;
    }
  data = g_bytes_new (pixels, width * height * 4);
  texture = gdk_memory_texture_new (width, height, GDK_MEMORY_R8G8B8A8, data, width * 4);
  return gdk_texture_save_to_png_bytes (texture);
}

static char *
tree_json (const char *url,
           const char *button)
{
  return g_strdup_printf ("{\"version\":1,\"url\":\"%s\",\"title\":\"Sign in\","
                          "\"viewport\":{\"width\":80,\"height\":60},"
                          "\"tree\":{\"role\":\"document\",\"name\":\"Sign in\",\"ref\":\"e1\","
                          "\"children\":[{\"role\":\"button\",\"name\":\"%s\",\"ref\":\"e2\","
                          "\"box\":[10,10,40,20]},{\"role\":\"textbox\",\"name\":\"Email\","
                          "\"ref\":\"e3\",\"box\":[10,35,60,15]}]}}", url, button);
}

static void
add_observation (SightStore *store,
                 const char *run_id,
                 int         index,
                 const char *phase,
                 const char *url,
                 guint8      red)
{
  SightObservationRecord record = { 0 };
  g_autofree char *tree = tree_json (url, phase);
  g_autoptr(GBytes) png = make_png (red);
  g_autoptr(GError) error = NULL;

  record.run_id = (char *) run_id;
  record.step_index = index;
  record.phase = (char *) phase;
  record.url = (char *) url;
  record.title = (char *) "Sign in";
  record.tree_json = tree;
  record.screenshot = png;
  record.screenshot_mime = (char *) "image/png";
  record.width = 80;
  record.height = 60;
  record.scale = 1.0;
  g_assert_true (sight_store_add_observation (store, &record, &error));
  g_assert_no_error (error);
}

static void
add_log (SightStore *store,
         const char *run_id,
         int         index,
         const char *kind,
         const char *level,
         const char *text,
         guint       status)
{
  SightLogRecord log = { 0 };
  g_autoptr(GError) error = NULL;

  log.run_id = (char *) run_id;
  log.step_index = index;
  log.kind = (char *) kind;
  log.level = (char *) level;
  log.text = (char *) text;
  log.url = (char *) "http://127.0.0.1:9/api/session";
  log.status = status;
  g_assert_true (sight_store_add_log (store, &log, &error));
  g_assert_no_error (error);
}

static void
write_runs (void)
{
  g_autoptr(SightStore) store = NULL;
  g_autoptr(GError) error = NULL;
  SightRunRecord run = { 0 };
  SightStepRecord step = { 0 };
  g_autofree char *smoke_id = NULL;

  store = sight_store_new (NULL, &error);
  g_assert_no_error (error);

  /* A smoke test that passed. */
  run.kind = (char *) "smoke";
  run.name = (char *) "Smoke test of the pricing page";
  run.url = (char *) "http://127.0.0.1:9/pricing";
  run.started_at = g_get_real_time () - 60 * G_USEC_PER_SEC;
  smoke_id = sight_store_open_run (store, &run, &error);
  g_assert_no_error (error);
  step.run_id = smoke_id;
  step.index = 0;
  step.kind = (char *) "load";
  step.instruction = (char *) "open http://127.0.0.1:9/pricing";
  step.verdict = SIGHT_RUN_VERDICT_PASS;
  g_assert_true (sight_store_add_step (store, &step, &error));
  g_assert_true (sight_store_finish_step (store, &step, &error));
  run.id = smoke_id;
  run.verdict = SIGHT_RUN_VERDICT_PASS;
  g_assert_true (sight_store_finish_run (store, &run, &error));
  g_assert_no_error (error);

  /* A test that failed at its second step. */
  memset (&run, 0, sizeof run);
  run.kind = (char *) "test";
  run.name = (char *) "A member signs in";
  run.url = (char *) "http://127.0.0.1:9/login";
  run.started_at = g_get_real_time ();
  failed_run_id = sight_store_open_run (store, &run, &error);
  g_assert_no_error (error);
  memset (&step, 0, sizeof step);
  step.run_id = failed_run_id;
  step.index = 0;
  step.kind = (char *) "do";
  step.instruction = (char *) "type \"member@example.test\" into Email";
  step.verdict = SIGHT_RUN_VERDICT_PASS;
  g_assert_true (sight_store_add_step (store, &step, &error));
  g_assert_true (sight_store_finish_step (store, &step, &error));
  step.index = 1;
  step.kind = (char *) "assert";
  step.instruction = (char *) "the dashboard shows a trial badge";
  step.verdict = SIGHT_RUN_VERDICT_FAIL;
  step.code = (char *) "ASSERTION_FAILED";
  step.explanation = (char *) "The page still shows the sign-in form; no trial badge is visible.";
  g_assert_true (sight_store_add_step (store, &step, &error));
  g_assert_true (sight_store_finish_step (store, &step, &error));
  g_assert_no_error (error);
  add_observation (store, failed_run_id, 1, "before", "http://127.0.0.1:9/login", 10);
  add_observation (store, failed_run_id, 1, "after", "http://127.0.0.1:9/login?error=1", 250);
  add_log (store, failed_run_id, 1, "console", "error", "TypeError: session is undefined", 0);
  add_log (store, failed_run_id, 1, "request_failed", NULL, "POST /api/session", 500);
  add_log (store, failed_run_id, 1, "console", "log", "just a log line", 0);
  run.id = failed_run_id;
  run.verdict = SIGHT_RUN_VERDICT_FAIL;
  run.code = (char *) "ASSERTION_FAILED";
  g_assert_true (sight_store_finish_run (store, &run, &error));
  g_assert_no_error (error);
}

static SightHistory *
history (void)
{
  return sight_window_get_history (window);
}

static void
test_lists_and_filters_runs (void)
{
  guint before = runs_loaded;

  sight_window_show_page (window, "runs");
  g_assert_true (wait_count (&runs_loaded, before + 1));
  g_assert_cmpuint (sight_history_get_n_shown (history ()), ==, 2);
  /* Newest first. */
  g_assert_cmpstr (sight_history_get_shown_run_id (history (), 0), ==, failed_run_id);

  /* By verdict: read again from the store. */
  before = runs_loaded;
  sight_history_set_verdict_filter (history (), "fail");
  g_assert_true (wait_count (&runs_loaded, before + 1));
  g_assert_cmpuint (sight_history_get_n_shown (history ()), ==, 1);
  g_assert_cmpstr (sight_history_get_shown_run_id (history (), 0), ==, failed_run_id);
  before = runs_loaded;
  sight_history_set_verdict_filter (history (), NULL);
  g_assert_true (wait_count (&runs_loaded, before + 1));

  /* By text: name, kind, URL, code. */
  sight_history_set_search (history (), "PRICING");
  g_assert_cmpuint (sight_history_get_n_shown (history ()), ==, 1);
  g_assert_cmpstr (sight_history_get_shown_run_id (history (), 0), !=, failed_run_id);
  sight_history_set_search (history (), "assertion_failed");
  g_assert_cmpuint (sight_history_get_n_shown (history ()), ==, 1);
  sight_history_set_search (history (), "no run says this");
  g_assert_cmpuint (sight_history_get_n_shown (history ()), ==, 0);
  sight_history_set_search (history (), "");
  g_assert_cmpuint (sight_history_get_n_shown (history ()), ==, 2);
}

static void
test_time_travels_through_a_run (void)
{
  SightInspector *inspector = sight_window_get_inspector (window);
  const SightRunData *data;
  SightObservation *observation;
  guint before = run_loaded;
  guint shown = observations;

  sight_window_show_page (window, "runs");
  sight_history_open_run (history (), failed_run_id);
  g_assert_true (wait_count (&run_loaded, before + 1));
  g_assert_true (wait_count (&observations, shown + 1));
  data = sight_history_get_run (history ());
  g_assert_nonnull (data);
  g_assert_cmpuint (data->steps->len, ==, 2);

  /* It opens on the failing step: its explanation, its console error and
   * failed request (not the plain log line), and the page after it. */
  g_assert_cmpstr (sight_history_get_step_text (history ()), ==,
                   "The page still shows the sign-in form; no trial badge is visible.");
  g_assert_cmpuint (sight_history_get_n_step_logs (history ()), ==, 2);
  observation = sight_window_get_observation (window);
  g_assert_nonnull (observation);
  g_assert_cmpstr (sight_observation_get_url (observation), ==, "http://127.0.0.1:9/login?error=1");
  g_assert_nonnull (sight_observation_get_screenshot (observation));
  g_assert_cmpuint (sight_inspector_get_n_rows (inspector), ==, 3);
  g_assert_true (sight_inspector_select_ref (inspector, "e3"));

  /* Before the step. */
  shown = observations;
  g_assert_true (sight_history_select_step (history (), 1, FALSE));
  g_assert_true (wait_count (&observations, shown + 1));
  observation = sight_window_get_observation (window);
  g_assert_cmpstr (sight_observation_get_url (observation), ==, "http://127.0.0.1:9/login");

  /* A step with nothing stored shows nothing rather than another moment. */
  shown = observations;
  g_assert_true (sight_history_select_step (history (), 0, TRUE));
  g_assert_true (wait_count (&observations, shown + 1));
  observation = sight_window_get_observation (window);
  g_assert_null (sight_observation_get_screenshot (observation));
  g_assert_cmpuint (sight_history_get_n_step_logs (history ()), ==, 0);
  g_assert_false (sight_history_select_step (history (), 2, TRUE));
}

static void
test_report_export_and_json (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "report.html", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;
  g_autofree char *html = NULL;
  g_autofree char *json = NULL;
  g_autoptr(JsonNode) root = NULL;

  g_assert_nonnull (sight_history_get_run (history ()));
  g_assert_true (sight_history_export_report (history (), file, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (path, &html, NULL, NULL));
  g_assert_nonnull (strstr (html, "<html"));
  g_assert_nonnull (strstr (html, "A member signs in"));

  json = sight_history_dup_json_report (history ());
  root = json_from_string (json, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (root), "verdict"), ==,
                   "fail");

  /* The copy action puts the same text on the clipboard. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (history ()), "history.copy-json", NULL));

  /* Back to the list: the inspector returns to the live page. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (history ()), "history.back", NULL));
  g_assert_null (sight_history_get_run (history ()));
}

int
main (int    argc,
      char **argv)
{
  int status;

  tmpdir = g_dir_make_tmp ("test-history-XXXXXX", NULL);
  g_setenv ("SIGHTLINE_DATA_DIR", tmpdir, TRUE);
  g_setenv ("XDG_CACHE_HOME", tmpdir, TRUE);
  app_test_init (&argc, &argv);

  write_runs ();
  window = g_object_ref_sink (g_object_new (SIGHT_TYPE_WINDOW, NULL));
  g_signal_connect_swapped (sight_window_get_history (window), "runs-loaded",
                            G_CALLBACK (app_test_count_cb), &runs_loaded);
  g_signal_connect_swapped (sight_window_get_history (window), "run-loaded",
                            G_CALLBACK (app_test_count_cb), &run_loaded);
  /* A stored observation is handed on once a worker parsed it. */
  g_signal_connect_swapped (sight_window_get_history (window), "observation-selected",
                            G_CALLBACK (app_test_count_cb), &observations);
  gtk_window_present (GTK_WINDOW (window));

  g_test_add_func ("/history/lists-and-filters-runs", test_lists_and_filters_runs);
  g_test_add_func ("/history/time-travels-through-a-run", test_time_travels_through_a_run);
  g_test_add_func ("/history/report-export-and-json", test_report_export_and_json);
  status = g_test_run ();
  gtk_window_destroy (GTK_WINDOW (window));
  g_clear_object (&window);
  test_remove_tree (tmpdir);
  return status;
}
