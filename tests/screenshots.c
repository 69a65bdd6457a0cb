/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "screenshots"

/* Takes the README's screenshots of the real window on the bundled demo
 * site (run it under Xvfb):
 *   xvfb-run -a -s "-screen 0 1600x1000x24" _build/tests/screenshots docs/screenshots
 * main-window.png: a test opened, run, with the inspector; runs.png: a smoke
 * test's stored run opened on its steps; crashed.png: the page's web process
 * gone; preferences.png, preferences-steps.png: the preferences' two pages;
 * credential-offer.png: the bar that offers to save a recorded password;
 * preferences-credentials.png: the project file's credentials.
 * picking-menu.png: the tree's expectation menu on a heading; pick-mode.png:
 * Pick mode naming the button under the pointer.
 * The run comes from the real
 * `sightline smoke` command ($SIGHTLINE_BIN), in a throwaway data dir. */

#include "config.h"

#include <adwaita.h>
#include <webkit/webkit.h>

#include "sight-credential-offer.h"
#include "sight-graphics.h"
#include "sight-picker.h"
#include "sight-preferences.h"
#include "sight-secrets.h"
#include "sight-window.h"

#define DEADLINE_US (90 * G_USEC_PER_SEC)

static guint observations, runs_loaded, run_loaded;

static void
count_cb (guint *counter)
{
  (*counter)++;
}

static gboolean
wake_cb (gpointer user_data)
{
  return G_SOURCE_CONTINUE;
}

static gboolean
wait_count (guint *counter,
            guint  target)
{
  gint64 deadline = g_get_monotonic_time () + DEADLINE_US;

  while (*counter < target && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  return *counter >= target;
}

static void
spin (guint ms)
{
  gint64 until = g_get_monotonic_time () + ms * 1000;

  while (g_get_monotonic_time () < until)
    g_main_context_iteration (NULL, FALSE), g_usleep (5000);
}

/* GTK's own rendering of the window, without the desktop around it. */
static void
shoot (gpointer     window,
       const char  *dir,
       const char  *name)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new (GTK_WIDGET (window));
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  int width, height;

  spin (1500);
  width = gtk_widget_get_width (GTK_WIDGET (window));
  height = gtk_widget_get_height (GTK_WIDGET (window));
  gdk_paintable_snapshot (paintable, snapshot, width, height);
  node = gtk_snapshot_free_to_node (snapshot);
  texture = gsk_renderer_render_texture (gtk_native_get_renderer (GTK_NATIVE (window)), node,
                                         &GRAPHENE_RECT_INIT (0, 0, width, height));
  if (!gdk_texture_save_to_png (texture, path))
    g_error ("Could not write %s", path);
  g_print ("%s\n", path);
}

/* The window with a popover of it drawn where it is shown (a popover is a
 * surface of its own, which the window's rendering leaves out). */
static void
shoot_with_popover (gpointer     window,
                    GtkWidget   *popover,
                    const char  *dir,
                    const char  *name)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new (GTK_WIDGET (window));
  g_autoptr(GdkPaintable) pop = gtk_widget_paintable_new (popover);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  GdkSurface *surface;
  double wx, wy, px, py;
  int width, height;

  spin (1500);
  width = gtk_widget_get_width (GTK_WIDGET (window));
  height = gtk_widget_get_height (GTK_WIDGET (window));
  gdk_paintable_snapshot (paintable, snapshot, width, height);
  surface = gtk_native_get_surface (GTK_NATIVE (popover));
  if (surface != NULL && GDK_IS_POPUP (surface) && gtk_widget_get_mapped (popover))
    {
      gtk_native_get_surface_transform (GTK_NATIVE (window), &wx, &wy);
      gtk_native_get_surface_transform (GTK_NATIVE (popover), &px, &py);
      gtk_snapshot_save (snapshot);
      gtk_snapshot_translate (snapshot,
                              &GRAPHENE_POINT_INIT (gdk_popup_get_position_x (GDK_POPUP (surface))
                                                    - wx + px,
                                                    gdk_popup_get_position_y (GDK_POPUP (surface))
                                                    - wy + py));
      gdk_paintable_snapshot (pop, snapshot, gtk_widget_get_width (popover),
                              gtk_widget_get_height (popover));
      gtk_snapshot_restore (snapshot);
    }
  node = gtk_snapshot_free_to_node (snapshot);
  texture = gsk_renderer_render_texture (gtk_native_get_renderer (GTK_NATIVE (window)), node,
                                         &GRAPHENE_RECT_INIT (0, 0, width, height));
  if (!gdk_texture_save_to_png (texture, path))
    g_error ("Could not write %s", path);
  g_print ("%s\n", path);
}

static JsonObject *
find_node (JsonObject *node,
           const char *role)
{
  JsonNode *children = json_object_get_member (node, "children");

  if (g_strcmp0 (json_object_get_string_member_with_default (node, "role", NULL), role) == 0)
    return node;
  for (guint i = 0; children != NULL && JSON_NODE_HOLDS_ARRAY (children) &&
                    i < json_array_get_length (json_node_get_array (children)); i++)
    {
      JsonNode *child = json_array_get_element (json_node_get_array (children), i);
      JsonObject *found = JSON_NODE_HOLDS_OBJECT (child)
                          ? find_node (json_node_get_object (child), role) : NULL;

      if (found != NULL)
        return found;
    }
  return NULL;
}

static void
smoke_done_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_subprocess_wait_finish (G_SUBPROCESS (source), result, NULL);
  *(gboolean *) user_data = TRUE;
}

int
main (int    argc,
      char **argv)
{
  g_autofree char *tmpdir = g_dir_make_tmp ("sightline-screenshots-XXXXXX", NULL);
  g_autofree char *test_path = g_build_filename (tmpdir, "sign-in.sightline.json", NULL);
  g_autofree char *test_text = NULL;
  g_autoptr(GFile) test_file = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) smoke = NULL;
  const char *bin = g_getenv ("SIGHTLINE_BIN");
  const char *dir = argc > 1 ? argv[1] : ".";
  SightWindow *window;
  SightStepList *list;
  gboolean smoke_done = FALSE;
  gint64 deadline;

  g_setenv ("SIGHTLINE_DATA_DIR", tmpdir, TRUE);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  g_unsetenv ("SIGHTLINE_MODEL");
  sight_graphics_choose_renderer ();
  gtk_init ();
  adw_init ();
  g_timeout_add (100, wake_cb, NULL);

  window = g_object_new (SIGHT_TYPE_WINDOW, "default-width", 1440, "default-height", 900, NULL);
  g_signal_connect_swapped (window, "observation-changed", G_CALLBACK (count_cb), &observations);
  g_signal_connect_swapped (sight_window_get_history (window), "runs-loaded",
                            G_CALLBACK (count_cb), &runs_loaded);
  g_signal_connect_swapped (sight_window_get_history (window), "run-loaded",
                            G_CALLBACK (count_cb), &run_loaded);
  gtk_window_present (GTK_WINDOW (window));
  if (!wait_count (&observations, 1))
    g_error ("The demo site did not open");

  /* A stored run, made by the command line like anyone's. */
  if (bin != NULL)
    {
      smoke = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error, bin, "smoke",
                                sight_window_get_demo_url (window), "--expect-text", "Sign in",
                                NULL);
      if (smoke == NULL)
        g_error ("%s", error->message);
      g_subprocess_wait_async (smoke, NULL, smoke_done_cb, &smoke_done);
    }

  /* A test, opened and run. */
  test_text = g_strdup_printf (
    "{\n  \"name\": \"A member signs in\",\n  \"url\": \"%s\",\n  \"steps\": [\n"
    "    { \"do\": \"type \\\"member@example.test\\\" into Email\" },\n"
    "    { \"do\": \"expect Email has value \\\"member@example.test\\\"\" },\n"
    "    { \"do\": \"expect text \\\"14-day trial, no card needed\\\"\" },\n"
    "    { \"act\": \"Sign in as the member\" },\n"
    "    { \"assert\": \"the dashboard shows a trial badge\" }\n  ]\n}\n",
    sight_window_get_demo_url (window));
  g_file_set_contents (test_path, test_text, -1, NULL);
  /* Its project file, with the credentials Preferences › Credentials lists. */
  {
    g_autofree char *project_path = g_build_filename (tmpdir, "sightline.json", NULL);
    g_autofree char *origin = sight_origin_normalize (sight_window_get_demo_url (window));
    g_autofree char *project_text = g_strdup_printf (
      "{ \"credentials\": {\n"
      "  \"member.password\": { \"purpose\": \"password\", \"allowedOrigins\": [\"%s\"],\n"
      "    \"source\": { \"keyring\": { \"application\": \"dev.sightline.Sightline\",\n"
      "                                 \"credential\": \"member.password\" } } },\n"
      "  \"member.email\": { \"purpose\": \"email\", \"allowedOrigins\": [\"%s\"],\n"
      "    \"source\": { \"env\": \"MEMBER_EMAIL\" } } } }\n", origin, origin);

    g_file_set_contents (project_path, project_text, -1, NULL);
  }
  test_file = g_file_new_for_path (test_path);
  if (!sight_window_open_test_file (window, test_file, &error))
    g_error ("%s", error->message);
  list = sight_window_get_step_list (window);
  gtk_widget_activate_action (GTK_WIDGET (window), "win.run-all", NULL);
  deadline = g_get_monotonic_time () + DEADLINE_US;
  while (sight_step_list_get_running (list) && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  wait_count (&observations, observations + 1);
  shoot (window, dir, "main-window.png");

  /* Demo mode, while a step waits out its slow motion with its target
   * outlined and its caption up. */
  {
    g_autoptr(GSettings) settings = g_settings_new ("dev.sightline.Sightline");
    SightComposer *composer = sight_window_get_composer (window);

    g_settings_set_uint (settings, "demo-slow-motion", 2500);
    gtk_widget_activate_action (GTK_WIDGET (window), "win.demo-mode", NULL);
    spin (1000);
    sight_composer_run_step (composer, "do", "click the \"Sign in\" button", NULL);
    spin (1500);
    shoot (window, dir, "demo-mode.png");
    deadline = g_get_monotonic_time () + DEADLINE_US;
    while (sight_composer_get_running (composer) && g_get_monotonic_time () < deadline)
      g_main_context_iteration (NULL, TRUE);
    gtk_widget_activate_action (GTK_WIDGET (window), "win.leave-demo", NULL);
    g_settings_set_uint (settings, "demo-slow-motion", 0);
    spin (500);
  }

  /* Picking: the tree's context menu on a heading, then Pick mode's label
   * over the Sign in button. */
  {
    SightInspector *inspector = sight_window_get_inspector (window);
    SightPicker *picker = sight_window_get_picker (window);
    SightObservation *observation;
    JsonObject *node;
    GtkPopover *menu;

    sight_window_open_uri (window, sight_window_get_demo_url (window));
    wait_count (&observations, observations + 1);
    observation = sight_window_get_observation (window);
    node = observation != NULL
           ? find_node (json_node_get_object (sight_observation_get_tree (observation)), "heading")
           : NULL;
    if (node != NULL && sight_inspector_select_ref (inspector,
                                                    json_object_get_string_member (node, "ref")))
      {
        menu = sight_inspector_popup_node_menu (inspector);
        if (menu != NULL)
          {
            shoot_with_popover (window, GTK_WIDGET (menu), dir, "picking-menu.png");
            gtk_popover_popdown (menu);
          }
      }
    gtk_widget_activate_action (GTK_WIDGET (window), "steps.pick", NULL);
    wait_count (&observations, observations + 1);
    observation = sight_window_get_observation (window);
    node = observation != NULL
           ? find_node (json_node_get_object (sight_observation_get_tree (observation)), "button")
           : NULL;
    if (node != NULL)
      {
        JsonArray *box = json_object_get_array_member (node, "box");
        double k = webkit_web_view_get_zoom_level (
          sight_web_page_get_web_view (sight_window_get_page (window)));
        GtkWidget *label_popover;

        sight_picker_hover (picker,
                            (json_array_get_double_element (box, 0) +
                             json_array_get_double_element (box, 2) / 2) * k,
                            (json_array_get_double_element (box, 1) +
                             json_array_get_double_element (box, 3) / 2) * k);
        label_popover = sight_picker_get_hover_popover (picker);
        shoot_with_popover (window, label_popover, dir, "pick-mode.png");
      }
    gtk_widget_activate_action (GTK_WIDGET (window), "steps.pick", NULL);
  }

  /* The stored run, time-travelled to its failing (or first) step. */
  deadline = g_get_monotonic_time () + DEADLINE_US;
  while (smoke != NULL && !smoke_done && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  sight_window_show_page (window, "runs");
  if (wait_count (&runs_loaded, 1) &&
      sight_history_get_n_shown (sight_window_get_history (window)) > 0)
    {
      sight_history_open_run (sight_window_get_history (window),
                              sight_history_get_shown_run_id (sight_window_get_history (window),
                                                              0));
      wait_count (&run_loaded, 1);
    }
  shoot (window, dir, "runs.png");

  /* Recording a password: the offer to save it as a credential. */
  sight_window_show_page (window, "test");
  {
    g_autofree char *origin = sight_origin_normalize (sight_window_get_demo_url (window));

    sight_window_open_demo_site (window);
    wait_count (&observations, observations + 1);
    sight_credential_offer_present (sight_window_get_credential_offer (window),
                                    "member.password", origin);
    shoot (window, dir, "credential-offer.png");
    sight_credential_offer_dismiss (sight_window_get_credential_offer (window));
  }

  /* The page's web process gone: the notice and its Reload. */
  sight_window_show_page (window, "test");
  sight_web_page_terminate_web_process (sight_window_get_page (window),
                                        "The page’s web process crashed");
  deadline = g_get_monotonic_time () + DEADLINE_US;
  while (!sight_window_get_crashed (window) && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  shoot (window, dir, "crashed.png");

  /* The preferences, over the window. */
  gtk_widget_activate_action (GTK_WIDGET (window), "win.preferences", NULL);
  {
    GListModel *toplevels = gtk_window_get_toplevels ();

    for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
      {
        g_autoptr(GtkWindow) item = g_list_model_get_item (toplevels, i);

        if (SIGHT_IS_PREFERENCES (item))
          {
            shoot ((SightWindow *) item, dir, "preferences.png");
            adw_preferences_window_set_visible_page_name (ADW_PREFERENCES_WINDOW (item), "steps");
            spin (300);
            shoot ((SightWindow *) item, dir, "preferences-steps.png");
            adw_preferences_window_set_visible_page_name (ADW_PREFERENCES_WINDOW (item),
                                                          "credentials");
            spin (300);
            shoot ((SightWindow *) item, dir, "preferences-credentials.png");
            break;
          }
      }
  }

  gtk_window_destroy (GTK_WINDOW (window));
  return 0;
}
