/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What the window's tests (test-window, test-step-list, test-picking,
 * test-authoring, test-history, test-live-sessions, test-preferences,
 * test-inspector) share: what they do first in main(), and their waits on
 * the window, its step list and its page. Each wait takes its test's own
 * deadline and fails the test when it passes. */
#pragma once

#include <adwaita.h>
#include <webkit/webkit.h>

#include "sight-graphics.h"
#include "sight-observation.h"
#include "sight-step-list.h"
#include "sight-web-page.h"
#include "sight-window.h"

/* The waits below iterate the main context blocking, then check their
 * deadline: this tick wakes them when nothing else happens (a page whose web
 * process died sends nothing), so a deadline fails the test instead of
 * hanging it. */
G_GNUC_UNUSED static gboolean
app_test_wake_cb (gpointer user_data)
{
  return G_SOURCE_CONTINUE;
}

/* The tests see "no model configured", whatever the shell has, and GTK draws
 * as sightline's main() has it draw; then GTK's test set-up, libadwaita and
 * the waits' wake-up tick. */
G_GNUC_UNUSED static void
app_test_init (int    *argc,
               char ***argv)
{
  g_unsetenv ("SIGHTLINE_MODEL");
  g_unsetenv ("OPENAI_API_KEY");
  g_unsetenv ("ANTHROPIC_API_KEY");
  sight_graphics_choose_renderer ();
  gtk_test_init (argc, argv, NULL);
  adw_init ();
  g_timeout_add (100, app_test_wake_cb, NULL);
}

/* Lets the main context run for @ms, never blocking on it. */
G_GNUC_UNUSED static void
app_test_spin (guint ms)
{
  gint64 until = g_get_monotonic_time () + ms * 1000;

  while (g_get_monotonic_time () < until)
    g_main_context_iteration (NULL, FALSE), g_usleep (2000);
}

G_GNUC_UNUSED static void
app_test_count_cb (guint *counter)
{
  (*counter)++;
}

G_GNUC_UNUSED static void
app_test_store_result_cb (GObject      *source,
                          GAsyncResult *result,
                          gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

/* Waits until app_test_store_result_cb() has stored *@result. */
G_GNUC_UNUSED static void
app_test_wait_result (GAsyncResult **result,
                      gint64         timeout_us)
{
  gint64 deadline = g_get_monotonic_time () + timeout_us;

  while (*result == NULL && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_nonnull (*result);
}

/* One window for the program (one web process, one demo site): the first
 * call opens *@window, shows it and waits until the demo site it opens by
 * itself has loaded; later calls keep it. */
G_GNUC_UNUSED static void
app_test_ensure_window (SightWindow **window,
                        gint64        timeout_us)
{
  gint64 deadline = g_get_monotonic_time () + timeout_us;
  WebKitWebView *view;

  if (*window != NULL)
    return;
  *window = g_object_ref_sink (g_object_new (SIGHT_TYPE_WINDOW, NULL));
  gtk_window_present (GTK_WINDOW (*window));
  view = sight_web_page_get_web_view (sight_window_get_page (*window));
  while ((sight_window_get_demo_url (*window) == NULL || webkit_web_view_is_loading (view)) &&
         g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_nonnull (sight_window_get_demo_url (*window));
}

/* Waits until @list runs no step; whether it stopped in time. */
G_GNUC_UNUSED static gboolean
app_test_wait_list_idle (SightStepList *list,
                         gint64         timeout_us)
{
  gint64 deadline = g_get_monotonic_time () + timeout_us;

  while (sight_step_list_get_running (list) && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  return !sight_step_list_get_running (list);
}

G_GNUC_UNUSED static void
app_test_page_js_cb (GObject      *source,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JSCValue) value = webkit_web_view_evaluate_javascript_finish (WEBKIT_WEB_VIEW (source),
                                                                          result, &error);

  g_assert_no_error (error);
  *(gboolean *) user_data = TRUE;
}

/* Runs @script in @page's own world, as a person's input arrives there, and
 * waits until it has run (without an exception). */
G_GNUC_UNUSED static void
app_test_run_page_js (SightWebPage *page,
                      const char   *script,
                      gint64        timeout_us)
{
  gint64 deadline = g_get_monotonic_time () + timeout_us;
  gboolean done = FALSE;

  webkit_web_view_evaluate_javascript (sight_web_page_get_web_view (page), script, -1, NULL,
                                       NULL, NULL, app_test_page_js_cb, &done);
  while (!done && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (done);
}

G_GNUC_UNUSED static void
app_test_observed_cb (SightWindow *window,
                      gboolean    *seen)
{
  *seen = TRUE;
}

/* A new observation of @window's page, as the inspector shows it. */
G_GNUC_UNUSED static SightObservation *
app_test_observe (SightWindow *window,
                  gint64       timeout_us)
{
  gboolean seen = FALSE;
  gulong id = g_signal_connect (window, "observation-changed",
                                G_CALLBACK (app_test_observed_cb), &seen);
  gint64 deadline = g_get_monotonic_time () + timeout_us;

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.refresh-observation",
                                             NULL));
  while (!seen && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_signal_handler_disconnect (window, id);
  g_assert_true (seen);
  return sight_window_get_observation (window);
}

/* The first node of @role named @name (any name when NULL) in document
 * order; the test fails when there is none. */
G_GNUC_UNUSED static JsonObject *
app_test_find_node (SightObservation *observation,
                    const char       *role,
                    const char       *name)
{
  const SightObservationNode *nodes;
  guint n_nodes = 0;
  JsonObject *found = NULL;

  nodes = sight_observation_get_nodes (observation, &n_nodes);
  for (guint i = 0; i < n_nodes && found == NULL; i++)
    {
      JsonObject *node = nodes[i].node;

      if (g_strcmp0 (json_object_get_string_member_with_default (node, "role", NULL), role) == 0 &&
          (name == NULL ||
           g_strcmp0 (json_object_get_string_member_with_default (node, "name", NULL), name) == 0))
        found = node;
    }
  if (found == NULL)
    {
      g_autofree char *tree = json_to_string (sight_observation_get_tree (observation), FALSE);

      g_test_message ("no %s “%s” in %s", role, name, tree);
    }
  g_assert_nonnull (found);
  return found;
}

/* Writes the test file @dir/@file_name, named @test_name, that starts at
 * @url with @steps_json. */
G_GNUC_UNUSED static GFile *
app_test_write_test (const char *dir,
                     const char *file_name,
                     const char *test_name,
                     const char *url,
                     const char *steps_json)
{
  g_autofree char *path = g_build_filename (dir, file_name, NULL);
  g_autofree char *text = g_strdup_printf ("{\n  \"name\": \"%s\",\n  \"url\": \"%s\",\n"
                                           "  \"steps\": %s\n}\n", test_name, url, steps_json);
  g_autoptr(GError) error = NULL;

  g_file_set_contents (path, text, -1, &error);
  g_assert_no_error (error);
  return g_file_new_for_path (path);
}
