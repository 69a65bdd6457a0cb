/* SPDX-License-Identifier: GPL-3.0-or-later */
/* From launch to a painted window with the demo page loaded: Sightline's
 * window against a bare GtkWindow holding a WebKitWebView that loads the same
 * page, in the same run.
 *
 *   sight-bench-launch [--runs N]
 *
 * Each launch is a new process (this program again, with --child KIND),
 * timed from just before it is spawned to the first frame the window paints
 * once the loaded page has drawn: after the web view's load of the demo page
 * finished, the page waits for two animation frames of its own (so its first
 * frame has been produced and handed to the UI process), then the window
 * draws a frame and the frame clock's after-paint stops the clock. No
 * sleeps. "app" runs Sightline's application as `sightline` with no
 * arguments does: it activates, the window starts the bundled demo site and
 * opens it. "bare" starts the same demo site and loads it into a plain
 * WebKitWebView with GTK's and WebKit's defaults; "bare-chosen" does the same
 * with the graphics Sightline chooses for this machine (sight-graphics.h:
 * where OpenGL is drawn in software, GTK's cairo renderer and a page without
 * compositing). Prints the medians, the ratios and whether the target
 * (< 1.5 s) is met. Run it under a display (xvfb-run). */
#define G_LOG_DOMAIN "sight-bench-launch"

#include "config.h"

#include <adwaita.h>
#include <stdlib.h>
#include <webkit/webkit.h>

#include "sight-application.h"
#include "sight-demo-site.h"
#include "sight-graphics.h"
#include "sight-window.h"
#include "test-files.h"

#define TARGET_MS      1500.0
#define CHILD_DEADLINE 20     /* seconds for one launch */

/* The child ----------------------------------------------------------------- */

static gint64 t0;
static gint64 load_started_us;
static gint64 load_finished_us;
static GtkWidget *timed_window;

static void
after_paint_cb (GdkFrameClock *clock,
                gpointer       user_data)
{
  gint64 now = g_get_monotonic_time ();

  g_print ("%.1f %.1f %.1f\n", (now - t0) / 1000.0, (load_finished_us - t0) / 1000.0,
           (load_started_us - t0) / 1000.0);
  exit (0);
}

static void
page_drew_cb (GObject      *view,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(JSCValue) value = NULL;
  g_autoptr(GError) error = NULL;
  GdkFrameClock *clock;

  value = webkit_web_view_call_async_javascript_function_finish (WEBKIT_WEB_VIEW (view), result,
                                                                 &error);
  if (value == NULL)
    g_error ("the page's animation frames: %s", error->message);
  clock = gtk_widget_get_frame_clock (timed_window);
  g_assert (clock != NULL);
  g_signal_connect (clock, "after-paint", G_CALLBACK (after_paint_cb), NULL);
  gtk_widget_queue_draw (timed_window);
}

static void
load_changed_cb (WebKitWebView   *view,
                 WebKitLoadEvent  event,
                 gpointer         user_data)
{
  const char *uri = webkit_web_view_get_uri (view);

  if (event == WEBKIT_LOAD_STARTED && load_started_us == 0)
    load_started_us = g_get_monotonic_time ();
  /* Only the demo page counts (not about:blank or an error page). */
  if (event != WEBKIT_LOAD_FINISHED || uri == NULL || !g_str_has_prefix (uri, "http://127.0.0.1"))
    return;
  load_finished_us = g_get_monotonic_time ();
  webkit_web_view_call_async_javascript_function (view,
                                                  "await new Promise (done => requestAnimationFrame "
                                                  "(() => requestAnimationFrame (done)));"
                                                  "return true;",
                                                  -1, NULL, NULL, NULL, NULL, page_drew_cb, NULL);
}

static gboolean
deadline_cb (gpointer user_data)
{
  g_printerr ("no painted page within %d s\n", CHILD_DEADLINE);
  exit (1);
}

static void
app_window_added_cb (GtkApplication *application,
                     GtkWindow      *window,
                     gpointer        user_data)
{
  if (!SIGHT_IS_WINDOW (window) || timed_window != NULL)
    return;
  timed_window = GTK_WIDGET (window);
  g_signal_connect (sight_web_page_get_web_view (sight_window_get_page (SIGHT_WINDOW (window))),
                    "load-changed", G_CALLBACK (load_changed_cb), NULL);
}

static int
run_app (void)
{
  g_autoptr(SightApplication) app = NULL;

  /* As sightline's main() does. */
  sight_graphics_choose_renderer ();
  app = sight_application_new ();
  /* Another Sightline on the session bus must not take the activation. */
  g_application_set_flags (G_APPLICATION (app),
                           G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE);
  g_signal_connect (app, "window-added", G_CALLBACK (app_window_added_cb), NULL);
  return g_application_run (G_APPLICATION (app), 0, NULL);
}

static int
run_bare (gboolean chosen)
{
  g_autoptr(SightDemoSite) site = NULL;
  g_autoptr(GError) error = NULL;
  GtkWidget *view;

  if (chosen)
    sight_graphics_choose_renderer ();
  gtk_init ();
  site = sight_demo_site_new ();
  if (!sight_demo_site_start (site, 0, &error))
    g_error ("%s", error->message);
  timed_window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (timed_window), 1280, 800);
  view = webkit_web_view_new ();
  if (chosen && sight_graphics_is_software ())
    webkit_settings_set_hardware_acceleration_policy (webkit_web_view_get_settings (WEBKIT_WEB_VIEW (view)),
                                                      WEBKIT_HARDWARE_ACCELERATION_POLICY_NEVER);
  gtk_window_set_child (GTK_WINDOW (timed_window), view);
  g_signal_connect (view, "load-changed", G_CALLBACK (load_changed_cb), NULL);
  gtk_window_present (GTK_WINDOW (timed_window));
  webkit_web_view_load_uri (WEBKIT_WEB_VIEW (view), sight_demo_site_get_url (site));
  while (TRUE)
    g_main_context_iteration (NULL, TRUE);
  return 0;
}

static int
run_child (const char *kind)
{
  const char *start = g_getenv ("SIGHT_BENCH_T0");

  g_assert (start != NULL);
  t0 = g_ascii_strtoll (start, NULL, 10);
  g_timeout_add_seconds (CHILD_DEADLINE, deadline_cb, NULL);
  if (g_str_equal (kind, "app"))
    return run_app ();
  return run_bare (g_str_equal (kind, "bare-chosen"));
}

/* The parent ---------------------------------------------------------------- */

/* Milliseconds from the spawn (doubles): the web view's first load started,
 * the demo page's load finished, the frame after it painted. */
typedef struct {
  GArray *started;
  GArray *loaded;
  GArray *painted;
} Series;

static gboolean
launch (const char *self_path,
        const char *kind,
        GFile      *data_dir,
        Series     *series)
{
  const char *argv[] = { self_path, "--child", kind, NULL };
  g_auto(GStrv) envp = g_get_environ ();
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *start = NULL;
  g_autofree char *data_path = g_file_get_path (data_dir);
  g_autoptr(GError) error = NULL;
  double painted, loaded, started;
  int status;

  envp = g_environ_setenv (envp, "SIGHTLINE_DATA_DIR", data_path, TRUE);
  envp = g_environ_setenv (envp, "GSETTINGS_BACKEND", "memory", TRUE);
  envp = g_environ_setenv (envp, "GSETTINGS_SCHEMA_DIR", BENCH_SCHEMA_DIR, FALSE);
  envp = g_environ_setenv (envp, "NO_AT_BRIDGE", "1", TRUE);
  start = g_strdup_printf ("%" G_GINT64_FORMAT, g_get_monotonic_time ());
  envp = g_environ_setenv (envp, "SIGHT_BENCH_T0", start, TRUE);
  if (!g_spawn_sync (NULL, (char **) argv, envp, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                     &status, &error))
    g_error ("%s", error->message);
  if (!g_spawn_check_wait_status (status, NULL) ||
      sscanf (out, "%lf %lf %lf", &painted, &loaded, &started) != 3)
    {
      g_printerr ("%s launch failed: %s\n", kind, err);
      return FALSE;
    }
  g_array_append_val (series->started, started);
  g_array_append_val (series->loaded, loaded);
  g_array_append_val (series->painted, painted);
  return TRUE;
}

static int
compare_doubles (gconstpointer a,
                 gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

static double
median (GArray *values)
{
  g_array_sort (values, compare_doubles);
  return g_array_index (values, double, values->len / 2);
}

static void
series_init (Series *series)
{
  series->started = g_array_new (FALSE, FALSE, sizeof (double));
  series->loaded = g_array_new (FALSE, FALSE, sizeof (double));
  series->painted = g_array_new (FALSE, FALSE, sizeof (double));
}

static void
series_clear (Series *series)
{
  g_array_set_size (series->started, 0);
  g_array_set_size (series->loaded, 0);
  g_array_set_size (series->painted, 0);
}

/* Prints the medians; returns the painted one. */
static double
series_print (const char *name,
              Series     *series)
{
  double painted = median (series->painted);

  g_print ("%-32s %10.0f %10.0f %10.0f\n", name, median (series->started),
           median (series->loaded), painted);
  return painted;
}

int
main (int    argc,
      char **argv)
{
  static const struct {
    const char *kind;
    const char *name;
  } kinds[] = {
    { "bare", "bare GtkWindow + WebKitWebView" },
    { "bare-chosen", "bare, Sightline's graphics" },
    { "app", "Sightline window" },
  };
  int runs = 5;
  g_autofree char *self_path = NULL;
  g_autoptr(GFile) data_dir = NULL;
  Series series[G_N_ELEMENTS (kinds)];
  double painted[G_N_ELEMENTS (kinds)];
  double app_ms;

  if (argc == 3 && g_str_equal (argv[1], "--child"))
    return run_child (argv[2]);
  if (argc == 3 && g_str_equal (argv[1], "--runs"))
    runs = MAX (1, atoi (argv[2]));
  else if (argc != 1)
    {
      g_printerr ("usage: sight-bench-launch [--runs N]\n");
      return 2;
    }

  self_path = g_file_read_link ("/proc/self/exe", NULL);
  data_dir = g_file_new_for_path (g_dir_make_tmp ("sight-bench-launch-XXXXXX", NULL));
  /* One launch each first, not counted: the page cache and fontconfig's
   * caches warm up for all alike. Then the kinds take turns. */
  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    {
      series_init (&series[k]);
      launch (self_path, kinds[k].kind, data_dir, &series[k]);
      series_clear (&series[k]);
    }
  for (int i = 0; i < runs; i++)
    for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
      if (!launch (self_path, kinds[k].kind, data_dir, &series[k]))
        return 1;
  test_remove_file_tree (data_dir);

  g_print ("%d launches each, median ms from the spawn; OpenGL drawn %s\n", runs,
           sight_graphics_is_software () ? "in software" : "by a GPU");
  g_print ("%-32s %10s %10s %10s\n", "", "load start", "loaded", "painted");
  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    painted[k] = series_print (kinds[k].name, &series[k]);
  app_ms = painted[2];
  g_print ("ratio Sightline / bare (painted): %.2f; Sightline / bare with its graphics: %.2f\n",
           app_ms / painted[0], app_ms / painted[1]);
  g_print ("target < %.0f ms: %s (bare: %s)\n", TARGET_MS, app_ms < TARGET_MS ? "met" : "MISSED",
           painted[0] < TARGET_MS ? "met" : "missed");
  return 0;
}
