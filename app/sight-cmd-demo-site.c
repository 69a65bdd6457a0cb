/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-cmd-demo-site"

#include "config.h"

#include <glib-unix.h>
#include <glib/gi18n.h>

#include "sight-cli.h"
#include "sight-commands.h"
#include "sight-demo-site.h"
#include "sight-error.h"

static gboolean
quit_cb (gpointer user_data)
{
  g_main_loop_quit (user_data);
  return G_SOURCE_REMOVE;
}

int
sight_cmd_demo_site (int    argc,
                     char **argv)
{
  int port = 8765;
  g_autofree char *port_file = NULL;
  GOptionEntry entries[] = {
    { "port", 0, 0, G_OPTION_ARG_INT, &port,
      N_("Port on 127.0.0.1 (0 picks a free one; default 8765)"), "N" },
    { "port-file", 0, 0, G_OPTION_ARG_FILENAME, &port_file,
      N_("Write the port to this file once listening"), "FILE" },
    { NULL }
  };
  g_autoptr(SightDemoSite) site = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GMainLoop) loop = NULL;
  int status = 0;

  if (!sight_cli_parse ("demo-site", "", entries, &argc, &argv, &status))
    return status;
  if (argc > 1)
    return sight_cli_usage_error ("demo-site", "unexpected argument “%s”", argv[1]);
  if (port < 0 || port > 65535)
    return sight_cli_usage_error ("demo-site", "--port must be between 0 and 65535");

  site = sight_demo_site_new ();
  if (!sight_demo_site_start (site, (guint) port, &error))
    return sight_cli_report_error (error);

  if (port_file != NULL)
    {
      g_autofree char *text = g_strdup_printf ("%u\n", sight_demo_site_get_port (site));

      if (!g_file_set_contents (port_file, text, -1, &error))
        {
          g_autoptr(GError) wrapped =
            g_error_new (SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                         "Cannot write the port file: %s", error->message);

          return sight_cli_report_error (wrapped);
        }
    }

  /* TRANSLATORS: %s is a URL */
  g_print (_("Serving the demo site at %s (press Ctrl+C to stop)\n"),
           sight_demo_site_get_url (site));
  g_print (_("Sign in as %s with the password %s\n"), SIGHT_DEMO_SITE_EMAIL,
           SIGHT_DEMO_SITE_PASSWORD);

  loop = g_main_loop_new (NULL, FALSE);
  g_unix_signal_add (SIGINT, quit_cb, loop);
  g_unix_signal_add (SIGTERM, quit_cb, loop);
  g_unix_signal_add (SIGHUP, quit_cb, loop);
  g_main_loop_run (loop);
  return 0;
}
