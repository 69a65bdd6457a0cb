/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-cmd-serve"

#include "config.h"

#include <glib-unix.h>
#include <glib/gi18n.h>
#include <signal.h>
#include <stdio.h>

#include "sight-cli.h"
#include "sight-commands.h"
#include "sight-error.h"
#include "sight-headless.h"
#include "sight-mcp-http.h"
#include "sight-mcp-tools.h"
#include "sight-serve-attach.h"

static gboolean
signal_cb (gpointer data)
{
  g_main_loop_quit (data);
  return G_SOURCE_CONTINUE;
}

int
sight_cmd_serve (int    argc,
                 char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightMcpRegistry) registry = NULL;
  g_autoptr(SightMcpServer) server = NULL;
  g_autoptr(SightMcpHttp) http = NULL;
  g_autoptr(GMainLoop) loop = NULL;
  g_autofree char *bind = NULL;
  g_autofree char *token_file = NULL;
  g_autofree char *token_path = NULL;
  g_autofree char *token = NULL;
  g_autofree char *url = NULL;
  gboolean created = FALSE;
  gboolean headless = FALSE;
  int port = G_MININT;                  /* not given: 8808 */
  gboolean port_given;
  int max_body = SIGHT_MCP_HTTP_DEFAULT_MAX_BODY;
  int exit_status = 0;
  guint sigint_id, sigterm_id;
  GOptionEntry entries[] = {
    { "port", 'p', 0, G_OPTION_ARG_INT, &port,
      N_("Port to listen on (0 picks a free one; default 8808)"), N_("N") },
    { "bind", 0, 0, G_OPTION_ARG_STRING, &bind,
      N_("Address to listen on instead of 127.0.0.1; anything else reaches other machines"),
      N_("ADDR") },
    { "token-file", 0, 0, G_OPTION_ARG_FILENAME, &token_file,
      N_("Where the bearer token is kept (default: the user config folder)"), N_("FILE") },
    { "max-body", 0, 0, G_OPTION_ARG_INT, &max_body,
      N_("Largest request body accepted, in bytes (default 4 MiB)"), N_("BYTES") },
    { "headless", 0, 0, G_OPTION_ARG_NONE, &headless,
      N_("Serve from this command even when the app is running (by default the running "
         "app serves, on its own port, and its window shows the sessions)"), NULL },
    { NULL }
  };

  if (!sight_cli_parse ("serve", _("— serve the MCP tools over HTTP"), entries, &argc, &argv,
                        &exit_status))
    return exit_status;
  if (argc > 1)
    return sight_cli_usage_error ("serve", _("unexpected argument “%s”"), argv[1]);
  port_given = port != G_MININT;
  if (!port_given)
    port = 8808;
  if (port < 0 || port > 65535)
    return sight_cli_usage_error ("serve", _("--port must be 0 to 65535"));
  if (max_body < 1024)
    return sight_cli_usage_error ("serve", _("--max-body must be at least 1024"));

  /* With the app running, its window serves (on its own port, with the
   * user's token), so the sessions clients open show there live. An
   * address or token file of the command's own needs a server of its own. */
  if (!headless && bind == NULL && token_file == NULL)
    {
      url = sight_serve_attach (&error);
      if (url == NULL && error != NULL)
        return sight_cli_report_error (error);
    }
  if (url != NULL)
    {
      token = sight_mcp_http_load_or_create_token (NULL, &token_path, NULL, &error);
      if (token == NULL)
        return sight_cli_report_error (error);
      if (port_given)
        g_printerr ("%s\n", _("Note: --port is not used: the running app serves on its own "
                              "port (its mcp-server-port setting); add --headless to serve "
                              "from this command"));
      g_print (_("MCP endpoint: %s\n"), url);
      g_print (_("Bearer token: in %s\n"), token_path);
      g_print ("%s\n", _("Served by the running Sightline app: the sessions clients open "
                         "appear under Live Sessions in its window. Turn it off there."));
      return 0;
    }

  /* Serving from here renders pages: only now the display (asking the app
   * needs none, which keeps that quick). */
  if (!sight_headless_start (&error))
    return sight_cli_report_error (error);
  token = sight_mcp_http_load_or_create_token (token_file, &token_path, &created, &error);
  if (token == NULL)
    return sight_cli_report_error (error);

  signal (SIGPIPE, SIG_IGN);
  registry = sight_mcp_registry_new_builtin ();
  server = sight_mcp_server_new (registry);
  http = sight_mcp_http_new (server, token);
  sight_mcp_http_set_max_body_size (http, max_body);
  if (!sight_mcp_http_listen (http, bind != NULL ? bind : "127.0.0.1", port, &error))
    return sight_cli_report_error (error);

  url = sight_mcp_http_get_url (http);
  /* The token itself is never printed: it stays in its 0600 file. */
  g_print (_("MCP endpoint: %s\n"), url);
  g_print (created ? _("Bearer token: created in %s (mode 0600)\n")
                   : _("Bearer token: in %s\n"), token_path);
  if (bind != NULL && g_strcmp0 (bind, "127.0.0.1") != 0 && g_strcmp0 (bind, "::1") != 0)
    g_printerr (_("Warning: listening on %s, not only on this machine\n"), bind);
  fflush (stdout);

  loop = g_main_loop_new (NULL, FALSE);
  sigint_id = g_unix_signal_add (SIGINT, signal_cb, loop);
  sigterm_id = g_unix_signal_add (SIGTERM, signal_cb, loop);
  g_main_loop_run (loop);
  g_source_remove (sigint_id);
  g_source_remove (sigterm_id);

  sight_mcp_http_shutdown (http);
  sight_mcp_server_shutdown (server);
  return 0;
}
