/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-application"

#include "config.h"

#include "sight-application.h"

#include <glib/gi18n.h>
#include <glib-unix.h>
#include <signal.h>

#include "sight-live-sessions.h"
#include "sight-window.h"

struct _SightApplication
{
  AdwApplication parent_instance;
};

G_DEFINE_FINAL_TYPE (SightApplication, sight_application, ADW_TYPE_APPLICATION)

static SightWindow *
get_or_create_window (SightApplication *self)
{
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (self));

  if (window == NULL)
    window = GTK_WINDOW (sight_window_new (self));
  return SIGHT_WINDOW (window);
}

static void
sight_application_activate (GApplication *app)
{
  gboolean is_new = gtk_application_get_active_window (GTK_APPLICATION (app)) == NULL;
  SightWindow *window = get_or_create_window (SIGHT_APPLICATION (app));

  /* A new window starts loading the demo site before it is shown: the web
   * process starts while the window is realized and mapped, not after. */
  if (is_new)
    sight_window_open_demo_site (window);
  gtk_window_present (GTK_WINDOW (window));
}

static void
sight_application_open (GApplication  *app,
                        GFile        **files,
                        int            n_files,
                        const char    *hint)
{
  SightWindow *window = get_or_create_window (SIGHT_APPLICATION (app));

  for (int i = 0; i < n_files; i++)
    {
      g_autofree char *name = g_file_get_basename (files[i]);

      /* A test file opens in the step list; anything else in the page. */
      if (name != NULL && g_str_has_suffix (name, ".sightline.json"))
        {
          g_autoptr(GError) error = NULL;

          if (!sight_window_open_test_file (window, files[i], &error))
            g_warning ("%s", error->message);
        }
      else
        {
          g_autofree char *uri = g_file_get_uri (files[i]);

          sight_window_open_uri (window, uri);
        }
    }
  gtk_window_present (GTK_WINDOW (window));
}

static void
quit_action (GSimpleAction *action,
             GVariant      *parameter,
             gpointer       user_data)
{
  g_application_quit (G_APPLICATION (user_data));
}

static void
about_action (GSimpleAction *action,
              GVariant      *parameter,
              gpointer       user_data)
{
  SightApplication *self = user_data;
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (self));

  adw_show_about_window (window,
                         "application-name", _("Sightline"),
                         "application-icon", APP_ID,
                         "version", PACKAGE_VERSION,
                         "developer-name", _("The Sightline developers"),
                         "comments", _("Author, run and inspect AI-driven browser tests"),
                         "license-type", GTK_LICENSE_GPL_3_0,
                         NULL);
}

/* `sightline serve` while the app runs: the window serves MCP, so the
 * sessions its clients open show there live. The state is the endpoint
 * after the last activation ("" when the server could not start); the
 * command reads it over D-Bus (org.gtk.Actions.Describe). */
static void
serve_mcp_action (GSimpleAction *action,
                  GVariant      *parameter,
                  gpointer       user_data)
{
  SightWindow *window = get_or_create_window (SIGHT_APPLICATION (user_data));
  SightLiveSessions *live = sight_window_get_live_sessions (window);
  g_autoptr(GError) error = NULL;
  const char *url;

  if (!sight_live_sessions_set_serving (live, TRUE, &error))
    g_warning ("Could not start the MCP server: %s", error->message);
  url = sight_live_sessions_get_url (live);
  g_simple_action_set_state (action, g_variant_new_string (url != NULL ? url : ""));
  gtk_window_present (GTK_WINDOW (window));
}

static const GActionEntry app_actions[] = {
  { "quit", quit_action },
  { "about", about_action },
  { "serve-mcp", serve_mcp_action, NULL, "\"\"" },
};

/* SIGTERM (a session's logout, `timeout`, a service manager) and SIGINT
 * quit as app.quit does, so the window's pages, their web processes and
 * the helpers the process started end with it and the status is 0. */
static gboolean
quit_signal_cb (gpointer user_data)
{
  g_application_quit (G_APPLICATION (user_data));
  return G_SOURCE_CONTINUE;
}

static void
sight_application_startup (GApplication *app)
{
  static const char *quit_accels[] = { "<Control>q", NULL };
  static const char *undo_accels[] = { "<Control>z", NULL };
  static const char *redo_accels[] = { "<Control><Shift>z", NULL };

  G_APPLICATION_CLASS (sight_application_parent_class)->startup (app);

  g_unix_signal_add (SIGTERM, quit_signal_cb, app);
  g_unix_signal_add (SIGINT, quit_signal_cb, app);

  g_action_map_add_action_entries (G_ACTION_MAP (app), app_actions,
                                   G_N_ELEMENTS (app_actions), app);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "app.quit", quit_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "win.undo", undo_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "win.redo", redo_accels);
}

static void
sight_application_class_init (SightApplicationClass *klass)
{
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);

  app_class->activate = sight_application_activate;
  app_class->open = sight_application_open;
  app_class->startup = sight_application_startup;
}

static void
sight_application_init (SightApplication *self)
{
}

SightApplication *
sight_application_new (void)
{
  return g_object_new (SIGHT_TYPE_APPLICATION,
                       "application-id", APP_ID,
                       "flags", G_APPLICATION_HANDLES_OPEN,
                       "resource-base-path", "/dev/sightline/Sightline",
                       NULL);
}
