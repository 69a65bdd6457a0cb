/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-cmd-mcp"

#include "config.h"

#include <gio/gunixinputstream.h>
#include <gio/gunixoutputstream.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <glib/gi18n.h>
#include <gtk/gtk.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "sight-cli.h"
#include "sight-commands.h"
#include "sight-error.h"
#include "sight-headless.h"
#include "sight-mcp-stdio.h"
#include "sight-mcp-tools.h"

typedef struct {
  GMainLoop    *loop;
  GCancellable *cancellable;
  GError       *error;
} McpRun;

static void
print_to_stderr (const char *text)
{
  fputs (text, stderr);
}

/* stdout belongs to the protocol: keep a private descriptor for it and point
 * descriptor 1 at stderr, so that nothing else (a g_print, a library, a
 * child process) can write a stray line into the JSON-RPC stream. */
static int
take_stdout (GError **error)
{
  /* fileno (stdout): main may have moved the command's output off
   * descriptor 1 already (see keep_output_from_children). */
  /* Close-on-exec: a child holding the protocol pipe would keep the
   * client from seeing it end when the server exits. */
  int protocol_fd = fcntl (fileno (stdout), F_DUPFD_CLOEXEC, 3);

  if (protocol_fd < 0 || dup2 (STDERR_FILENO, fileno (stdout)) < 0 ||
      dup2 (STDERR_FILENO, STDOUT_FILENO) < 0)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "cannot set up standard output for the protocol");
      return -1;
    }
  /* Logs that GLib sends to stdout now land on stderr too. */
  g_set_print_handler (print_to_stderr);
  return protocol_fd;
}

static gboolean
signal_cb (gpointer data)
{
  McpRun *run = data;

  g_debug ("signal received: ending the session");
  g_cancellable_cancel (run->cancellable);
  return G_SOURCE_CONTINUE;
}

static void
run_done_cb (GObject      *object,
             GAsyncResult *result,
             gpointer      user_data)
{
  McpRun *run = user_data;

  sight_mcp_stdio_run_finish (SIGHT_MCP_STDIO (object), result, &run->error);
  g_main_loop_quit (run->loop);
}

int
sight_cmd_mcp (int    argc,
               char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightMcpRegistry) registry = NULL;
  g_autoptr(SightMcpServer) server = NULL;
  g_autoptr(SightMcpStdio) stdio = NULL;
  g_autoptr(GInputStream) input = NULL;
  g_autoptr(GOutputStream) output = NULL;
  g_autoptr(GMainLoop) loop = NULL;
  g_autoptr(GCancellable) cancellable = NULL;
  McpRun run = { 0 };
  GOptionEntry entries[] = { { NULL } };
  int exit_status = 0;
  int protocol_fd;
  guint sigint_id, sigterm_id;

  if (!sight_cli_parse ("mcp", "— serve MCP over standard input and output", entries, &argc,
                        &argv, &exit_status))
    return exit_status;
  if (argc > 1)
    return sight_cli_usage_error ("mcp", "unexpected argument “%s”", argv[1]);

  protocol_fd = take_stdout (&error);
  if (protocol_fd < 0)
    return sight_cli_report_error (error);
  /* A client that goes away must end the server, not kill it mid-write. */
  signal (SIGPIPE, SIG_IGN);

  /* The display comes after stdout is taken: GTK and GIO may log while
   * they start. Without one the protocol still works and the tools that
   * need a browser say why they cannot run. */
  if (sight_headless_ensure_display (&error))
    gtk_init ();
  else
    {
      g_warning ("no display for the browser: %s", error->message);
      g_clear_error (&error);
    }

  registry = sight_mcp_registry_new_builtin ();
  server = sight_mcp_server_new (registry);
  input = g_unix_input_stream_new (STDIN_FILENO, FALSE);
  output = g_unix_output_stream_new (protocol_fd, TRUE);
  stdio = sight_mcp_stdio_new (server, input, output);

  loop = g_main_loop_new (NULL, FALSE);
  cancellable = g_cancellable_new ();
  run.loop = loop;
  run.cancellable = cancellable;
  sigint_id = g_unix_signal_add (SIGINT, signal_cb, &run);
  sigterm_id = g_unix_signal_add (SIGTERM, signal_cb, &run);

  g_debug ("serving MCP on standard input and output");
  sight_mcp_stdio_run_async (stdio, cancellable, run_done_cb, &run);
  g_main_loop_run (loop);

  g_source_remove (sigint_id);
  g_source_remove (sigterm_id);
  sight_mcp_server_shutdown (server);

  if (run.error != NULL && !g_error_matches (run.error, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE))
    {
      g_autoptr(GError) failure = g_error_new (SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                               "MCP over stdio ended: %s",
                                               run.error->message);
      g_clear_error (&run.error);
      return sight_cli_report_error (failure);
    }
  g_clear_error (&run.error);
  return 0;
}
