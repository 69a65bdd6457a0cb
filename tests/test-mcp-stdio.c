/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-mcp-stdio"

#include "config.h"

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>

/* `sightline mcp` as a client starts it: a child process spoken to over its
 * standard input and output. */

typedef struct {
  GSubprocess      *process;
  GOutputStream    *to_server;
  GDataInputStream *from_server;
  char             *stderr_path;
  char             *tmpdir;
} Server;

static void
server_start (Server *server)
{
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GError) error = NULL;
  const char *bin = g_getenv ("SIGHTLINE_BIN");

  g_assert_nonnull (bin);
  server->tmpdir = g_dir_make_tmp ("test-mcp-stdio-XXXXXX", &error);
  g_assert_no_error (error);
  server->stderr_path = g_build_filename (server->tmpdir, "stderr.txt", NULL);

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                        G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_subprocess_launcher_set_stderr_file_path (launcher, server->stderr_path);
  /* Every log level on: none of it may reach stdout. */
  g_subprocess_launcher_setenv (launcher, "G_MESSAGES_DEBUG", "all", TRUE);
  g_subprocess_launcher_setenv (launcher, "XDG_CONFIG_HOME", server->tmpdir, TRUE);
  g_subprocess_launcher_setenv (launcher, "XDG_DATA_HOME", server->tmpdir, TRUE);
  server->process = g_subprocess_launcher_spawn (launcher, &error, bin, "mcp", NULL);
  g_assert_no_error (error);
  server->to_server = g_object_ref (g_subprocess_get_stdin_pipe (server->process));
  server->from_server = g_data_input_stream_new (g_subprocess_get_stdout_pipe (server->process));
}

static void
server_clear (Server *server)
{
  g_autoptr(GFile) stderr_file = g_file_new_for_path (server->stderr_path);

  g_file_delete (stderr_file, NULL, NULL);
  g_rmdir (server->tmpdir);
  g_clear_object (&server->process);
  g_clear_object (&server->to_server);
  g_clear_object (&server->from_server);
  g_clear_pointer (&server->stderr_path, g_free);
  g_clear_pointer (&server->tmpdir, g_free);
}

static void
send_line (Server     *server,
           const char *text)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *line = g_strconcat (text, "\n", NULL);

  g_output_stream_write_all (server->to_server, line, strlen (line), NULL, NULL, &error);
  g_assert_no_error (error);
  g_output_stream_flush (server->to_server, NULL, &error);
  g_assert_no_error (error);
}

static gboolean
deadline_cb (gpointer data)
{
  g_error ("sightline mcp did not answer in time");
  return G_SOURCE_REMOVE;
}

typedef struct {
  char     *line;
  gboolean  done;
} LineRead;

static void
line_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  LineRead *read = user_data;

  read->line = g_data_input_stream_read_line_finish (G_DATA_INPUT_STREAM (object), result, NULL,
                                                     NULL);
  read->done = TRUE;
}

/* The next line on stdout, which must be one JSON-RPC 2.0 message. */
static JsonObject *
read_message (Server *server)
{
  LineRead read = { NULL, FALSE };
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *line = NULL;
  guint deadline;
  JsonObject *object;

  deadline = g_timeout_add_seconds (30, deadline_cb, NULL);
  g_data_input_stream_read_line_async (server->from_server, G_PRIORITY_DEFAULT, NULL, line_cb,
                                       &read);
  while (!read.done)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (deadline);
  line = read.line;
  g_assert_nonnull (line);
  if (!json_parser_load_from_data (parser, line, -1, &error))
    g_error ("stdout carried a line that is not JSON: %s", line);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)));
  object = json_object_ref (json_node_get_object (json_parser_get_root (parser)));
  g_assert_cmpstr (json_object_get_string_member (object, "jsonrpc"), ==, "2.0");
  return object;
}

static void
waited_cb (GObject      *object,
           GAsyncResult *result,
           gpointer      user_data)
{
  gboolean *done = user_data;
  g_autoptr(GError) error = NULL;

  g_subprocess_wait_finish (G_SUBPROCESS (object), result, &error);
  g_assert_no_error (error);
  *done = TRUE;
}

static gboolean
exit_deadline_cb (gpointer data)
{
  g_error ("sightline mcp did not exit within 15 s");
  return G_SOURCE_REMOVE;
}

static void
wait_exit (Server *server,
           int     expected_status)
{
  gboolean done = FALSE;
  guint deadline = g_timeout_add_seconds (15, exit_deadline_cb, NULL);

  g_subprocess_wait_async (server->process, NULL, waited_cb, &done);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (deadline);
  g_assert_true (g_subprocess_get_if_exited (server->process));
  g_assert_cmpint (g_subprocess_get_exit_status (server->process), ==, expected_status);
}

static void
test_session (void)
{
  Server server = { 0 };
  g_autoptr(JsonObject) answer = NULL;
  g_autofree char *log = NULL;
  JsonObject *result;
  JsonArray *tools;
  const char *text;

  server_start (&server);

  /* A garbage line: -32700 with a null id, and the server goes on. */
  send_line (&server, "this is not json");
  answer = read_message (&server);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (answer, "error"),
                                               "code"), ==, -32700);
  g_assert_true (json_object_get_null_member (answer, "id"));
  g_clear_pointer (&answer, json_object_unref);

  /* So is a line that starts with a NUL byte (read as a C string it was
   * empty, and went unanswered). */
  {
    static const char nul_line[] = "\0{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}\n";
    g_autoptr(GError) error = NULL;

    g_output_stream_write_all (server.to_server, nul_line, sizeof nul_line - 1, NULL, NULL,
                               &error);
    g_assert_no_error (error);
    g_output_stream_flush (server.to_server, NULL, &error);
    g_assert_no_error (error);
    answer = read_message (&server);
    g_assert_cmpint (json_object_get_int_member (
                       json_object_get_object_member (answer, "error"), "code"), ==, -32700);
    g_assert_true (json_object_get_null_member (answer, "id"));
    g_clear_pointer (&answer, json_object_unref);
  }

  send_line (&server, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                      "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                      "\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}");
  answer = read_message (&server);
  result = json_object_get_object_member (answer, "result");
  g_assert_cmpstr (json_object_get_string_member (result, "protocolVersion"), ==, "2025-06-18");
  g_clear_pointer (&answer, json_object_unref);
  send_line (&server, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");

  send_line (&server, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
  answer = read_message (&server);
  g_assert_cmpint (json_object_get_int_member (answer, "id"), ==, 2);
  tools = json_object_get_array_member (json_object_get_object_member (answer, "result"),
                                        "tools");
  /* The 19 built-in tools and skill_smoke_uat. */
  g_assert_cmpuint (json_array_get_length (tools), ==, 20);
  g_clear_pointer (&answer, json_object_unref);

  /* Batches are refused under 2025-06-18. */
  send_line (&server, "[{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}]");
  answer = read_message (&server);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (answer, "error"),
                                               "code"), ==, -32600);
  g_clear_pointer (&answer, json_object_unref);

  send_line (&server, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":"
                      "{\"name\":\"no_such_tool\",\"arguments\":{}}}");
  answer = read_message (&server);
  result = json_object_get_object_member (answer, "result");
  g_assert_true (json_object_get_boolean_member (result, "isError"));
  text = json_object_get_string_member (
    json_array_get_object_element (json_object_get_array_member (result, "content"), 0), "text");
  g_assert_true (g_str_has_prefix (text, "[not_found] "));
  g_clear_pointer (&answer, json_object_unref);

  send_line (&server, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":"
                      "{\"name\":\"get_skill_run\",\"arguments\":{\"runId\":\"run_1\","
                      "\"waitSeconds\":121}}}");
  answer = read_message (&server);
  result = json_object_get_object_member (answer, "result");
  g_assert_cmpstr (json_object_get_string_member (
                     json_object_get_object_member (
                       json_object_get_object_member (result, "structuredContent"), "error"),
                     "code"), ==, "invalid_input");
  g_clear_pointer (&answer, json_object_unref);

  send_line (&server, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}");
  answer = read_message (&server);
  g_assert_cmpint (json_object_get_int_member (answer, "id"), ==, 6);
  g_assert_true (json_object_has_member (answer, "result"));
  g_clear_pointer (&answer, json_object_unref);

  /* End of input ends the server cleanly. */
  g_output_stream_close (server.to_server, NULL, NULL);
  wait_exit (&server, 0);

  /* The logs went to stderr. */
  g_file_get_contents (server.stderr_path, &log, NULL, NULL);
  g_assert_nonnull (strstr (log, "input ended"));
  server_clear (&server);
}

static void
test_sigterm (void)
{
  Server server = { 0 };
  g_autoptr(JsonObject) answer = NULL;

  server_start (&server);
  send_line (&server, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
  answer = read_message (&server);
  g_subprocess_send_signal (server.process, SIGTERM);
  wait_exit (&server, 0);
  server_clear (&server);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/mcp-stdio/session", test_session);
  g_test_add_func ("/mcp-stdio/sigterm", test_sigterm);
  return g_test_run ();
}
