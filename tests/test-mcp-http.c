/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-mcp-http"

#include "config.h"

#include <glib/gstdio.h>
#include <libsoup/soup.h>
#include <string.h>
#include <sys/stat.h>

#include "sight-mcp-http.h"
#include "sight-mcp-tools.h"

#define TOKEN "test-token-0123456789abcdef"

/* The Streamable HTTP transport over real loopback HTTP: a SightMcpHttp on
 * 127.0.0.1 port 0 and a SoupSession client in the same main loop. */

typedef struct {
  SightMcpRegistry *registry;
  SightMcpServer   *server;
  SightMcpHttp     *http;
  SoupSession      *client;
  char             *url;
} Fixture;

typedef struct {
  guint               status;
  SoupMessageHeaders *headers;
  char               *body;
} Reply;

static void
reply_clear (Reply *reply)
{
  g_clear_pointer (&reply->headers, soup_message_headers_unref);
  g_clear_pointer (&reply->body, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Reply, reply_clear)

/* Test tools: echo reports progress; slow waits for cancellation. */

static gboolean slow_cancelled;

static void
echo_handler (SightMcpToolCall *call,
              gpointer          user_data)
{
  sight_mcp_tool_call_report_progress (call, 1, 2, "half way");
  sight_mcp_tool_call_report_progress (call, 2, 2, "done");
  sight_mcp_tool_call_return_result (call, "echoed", sight_mcp_tool_call_get_arguments (call),
                                     FALSE);
}

static void
slow_cancelled_cb (GCancellable     *cancellable,
                   SightMcpToolCall *call)
{
  slow_cancelled = TRUE;
  sight_mcp_tool_call_return_error (call, "cancelled", NULL, "interrupted");
}

static void
slow_handler (SightMcpToolCall *call,
              gpointer          user_data)
{
  slow_cancelled = FALSE;
  g_cancellable_connect (sight_mcp_tool_call_get_cancellable (call),
                         G_CALLBACK (slow_cancelled_cb), g_object_ref (call), g_object_unref);
}

static void
add_test_tools (SightMcpRegistry *registry)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  SightMcpToolInfo info = { 0 };

  json_parser_load_from_data (parser, "{\"type\":\"object\",\"properties\":{\"text\":"
                                      "{\"type\":\"string\"}},\"additionalProperties\":false}",
                              -1, NULL);
  info.input_schema = json_node_get_object (json_parser_get_root (parser));
  info.name = "echo";
  info.handler = echo_handler;
  sight_mcp_registry_add (registry, &info, NULL, NULL);
  info.name = "slow";
  info.handler = slow_handler;
  sight_mcp_registry_add (registry, &info, NULL, NULL);
}

static void
fixture_setup (Fixture       *fixture,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  fixture->registry = sight_mcp_registry_new_builtin ();
  add_test_tools (fixture->registry);
  fixture->server = sight_mcp_server_new (fixture->registry);
  fixture->http = sight_mcp_http_new (fixture->server, TOKEN);
  sight_mcp_http_set_max_body_size (fixture->http, 4096);
  sight_mcp_http_listen (fixture->http, "127.0.0.1", 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sight_mcp_http_get_port (fixture->http), >, 0);
  fixture->url = sight_mcp_http_get_url (fixture->http);
  fixture->client = soup_session_new_with_options ("timeout", 20, NULL);
}

static void
fixture_teardown (Fixture       *fixture,
                  gconstpointer  data)
{
  sight_mcp_http_shutdown (fixture->http);
  g_clear_object (&fixture->client);
  g_clear_object (&fixture->http);
  g_clear_object (&fixture->server);
  g_clear_object (&fixture->registry);
  g_clear_pointer (&fixture->url, g_free);
}

typedef struct {
  GBytes   *bytes;
  gboolean  done;
} Sent;

static void
sent_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  Sent *sent = user_data;
  g_autoptr(GError) error = NULL;

  sent->bytes = soup_session_send_and_read_finish (SOUP_SESSION (object), result, &error);
  g_assert_no_error (error);
  sent->done = TRUE;
}

static gboolean
deadline_cb (gpointer data)
{
  g_error ("no HTTP answer in time");
  return G_SOURCE_REMOVE;
}

static void
iterate_until (gboolean *flag)
{
  guint deadline = g_timeout_add_seconds (20, deadline_cb, NULL);

  while (!*flag)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (deadline);
}

/* @extra: "Name: value" lines, NULL-terminated. */
static SoupMessage *
new_message (Fixture           *fixture,
             const char        *method,
             const char        *body,
             const char        *token,
             const char * const *extra)
{
  SoupMessage *msg = soup_message_new (method, fixture->url);
  SoupMessageHeaders *headers = soup_message_get_request_headers (msg);

  if (token != NULL)
    {
      g_autofree char *value = g_strdup_printf ("Bearer %s", token);
      soup_message_headers_replace (headers, "Authorization", value);
    }
  soup_message_headers_replace (headers, "Accept", "application/json, text/event-stream");
  for (guint i = 0; extra != NULL && extra[i] != NULL; i++)
    {
      g_auto(GStrv) pair = g_strsplit (extra[i], ": ", 2);
      soup_message_headers_replace (headers, pair[0], pair[1]);
    }
  if (body != NULL)
    {
      g_autoptr(GBytes) bytes = g_bytes_new (body, strlen (body));
      soup_message_set_request_body_from_bytes (msg, "application/json", bytes);
    }
  return msg;
}

static void
send_message (Fixture     *fixture,
              SoupMessage *msg,
              Reply       *reply)
{
  Sent sent = { NULL, FALSE };
  gsize length = 0;
  const char *data;

  soup_session_send_and_read_async (fixture->client, msg, G_PRIORITY_DEFAULT, NULL, sent_cb,
                                    &sent);
  iterate_until (&sent.done);
  reply->status = soup_message_get_status (msg);
  reply->headers = soup_message_headers_ref (soup_message_get_response_headers (msg));
  data = g_bytes_get_data (sent.bytes, &length);
  reply->body = g_strndup (data != NULL ? data : "", length);
  g_bytes_unref (sent.bytes);
}

static void
request (Fixture            *fixture,
         const char         *method,
         const char         *body,
         const char         *token,
         const char * const *extra,
         Reply              *reply)
{
  g_autoptr(SoupMessage) msg = new_message (fixture, method, body, token, extra);

  send_message (fixture, msg, reply);
}

static char *
initialize (Fixture    *fixture,
            const char *version)
{
  g_auto(Reply) reply = { 0 };
  g_autofree char *body =
    g_strdup_printf ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                     "{\"protocolVersion\":\"%s\",\"capabilities\":{},"
                     "\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}", version);
  const char *id;

  request (fixture, "POST", body, TOKEN, NULL, &reply);
  g_assert_cmpuint (reply.status, ==, 200);
  g_assert_nonnull (strstr (reply.body, version));
  id = soup_message_headers_get_one (reply.headers, "Mcp-Session-Id");
  g_assert_nonnull (id);
  /* Visible ASCII, hard to guess. */
  g_assert_cmpuint (strlen (id), ==, 32);
  return g_strdup (id);
}

static void
test_session_flow (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autofree char *id = initialize (fixture, "2025-06-18");
  g_autofree char *session_header = g_strdup_printf ("Mcp-Session-Id: %s", id);
  const char *headers[] = { session_header, "MCP-Protocol-Version: 2025-06-18", NULL };
  const char *old_headers[] = { session_header, NULL };
  g_auto(Reply) reply = { 0 };

  g_assert_cmpuint (sight_mcp_http_get_n_sessions (fixture->http), ==, 1);

  /* A notification is accepted with 202 and no body. */
  request (fixture, "POST", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
           TOKEN, headers, &reply);
  g_assert_cmpuint (reply.status, ==, 202);
  g_assert_cmpstr (reply.body, ==, "");
  reply_clear (&reply);

  request (fixture, "POST", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", TOKEN,
           headers, &reply);
  g_assert_cmpuint (reply.status, ==, 200);
  g_assert_cmpstr (soup_message_headers_get_content_type (reply.headers, NULL), ==,
                   "application/json");
  g_assert_nonnull (strstr (reply.body, "\"name\":\"smoke_test\""));
  reply_clear (&reply);

  /* Without the version header the session's version holds. */
  request (fixture, "POST", "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
                            "\"params\":{\"name\":\"no_such_tool\"}}",
           TOKEN, old_headers, &reply);
  g_assert_cmpuint (reply.status, ==, 200);
  g_assert_nonnull (strstr (reply.body, "[not_found]"));
  g_assert_nonnull (strstr (reply.body, "\"isError\":true"));
  reply_clear (&reply);

  /* 2025-06-18 has no batches: 400 with -32600. */
  request (fixture, "POST", "[{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}]", TOKEN,
           headers, &reply);
  g_assert_cmpuint (reply.status, ==, 400);
  g_assert_nonnull (strstr (reply.body, "-32600"));
  reply_clear (&reply);

  request (fixture, "POST", "{\"jsonrpc\":\"2.0\",\"id\":5,", TOKEN, headers, &reply);
  g_assert_cmpuint (reply.status, ==, 400);
  g_assert_nonnull (strstr (reply.body, "-32700"));
  reply_clear (&reply);

  /* No stream of our own. */
  request (fixture, "GET", NULL, TOKEN, headers, &reply);
  g_assert_cmpuint (reply.status, ==, 405);
  reply_clear (&reply);

  request (fixture, "DELETE", NULL, TOKEN, headers, &reply);
  g_assert_cmpuint (reply.status, ==, 200);
  g_assert_cmpuint (sight_mcp_http_get_n_sessions (fixture->http), ==, 0);
  reply_clear (&reply);
  request (fixture, "POST", "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}", TOKEN, headers,
           &reply);
  g_assert_cmpuint (reply.status, ==, 404);
}

static void
test_batches_2025_03_26 (Fixture       *fixture,
                         gconstpointer  data)
{
  g_autofree char *id = initialize (fixture, "2025-03-26");
  g_autofree char *session_header = g_strdup_printf ("Mcp-Session-Id: %s", id);
  const char *headers[] = { session_header, "MCP-Protocol-Version: 2025-03-26", NULL };
  g_auto(Reply) reply = { 0 };

  request (fixture, "POST", "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
                            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}]",
           TOKEN, headers, &reply);
  g_assert_cmpuint (reply.status, ==, 200);
  g_assert_cmpstr (reply.body, ==, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}},"
                                   "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}]");
}

static void
test_security (Fixture       *fixture,
               gconstpointer  data)
{
  g_autofree char *id = initialize (fixture, "2025-06-18");
  g_autofree char *session_header = g_strdup_printf ("Mcp-Session-Id: %s", id);
  g_autofree char *own_origin = g_strdup_printf ("Origin: http://localhost:%u",
                                                 sight_mcp_http_get_port (fixture->http));
  const char *ping = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
  const char *good[] = { session_header, NULL };
  const char *evil_origin[] = { session_header, "Origin: http://evil.example", NULL };
  const char *null_origin[] = { session_header, "Origin: null", NULL };
  const char *port_origin[] = { session_header, "Origin: http://127.0.0.1:1", NULL };
  const char *same_origin[] = { session_header, own_origin, NULL };
  const char *unknown_session[] = { "Mcp-Session-Id: 0123456789abcdef0123456789abcdef", NULL };
  const char *bad_version[] = { session_header, "MCP-Protocol-Version: 2099-01-01", NULL };
  const char *other_version[] = { session_header, "MCP-Protocol-Version: 2024-11-05", NULL };
  g_autofree char *big = NULL;
  g_auto(Reply) reply = { 0 };

  request (fixture, "POST", ping, NULL, good, &reply);
  g_assert_cmpuint (reply.status, ==, 401);
  g_assert_nonnull (soup_message_headers_get_one (reply.headers, "WWW-Authenticate"));
  reply_clear (&reply);
  request (fixture, "POST", ping, "wrong-token-0123456789abcdef", good, &reply);
  g_assert_cmpuint (reply.status, ==, 401);
  reply_clear (&reply);
  request (fixture, "POST", ping, TOKEN "x", good, &reply);
  g_assert_cmpuint (reply.status, ==, 401);
  reply_clear (&reply);
  /* Even initialize needs the token. */
  request (fixture, "POST", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                            "\"params\":{\"protocolVersion\":\"2025-06-18\"}}",
           NULL, NULL, &reply);
  g_assert_cmpuint (reply.status, ==, 401);
  reply_clear (&reply);

  request (fixture, "POST", ping, TOKEN, evil_origin, &reply);
  g_assert_cmpuint (reply.status, ==, 403);
  reply_clear (&reply);
  request (fixture, "POST", ping, TOKEN, null_origin, &reply);
  g_assert_cmpuint (reply.status, ==, 403);
  reply_clear (&reply);
  request (fixture, "POST", ping, TOKEN, port_origin, &reply);
  g_assert_cmpuint (reply.status, ==, 403);
  reply_clear (&reply);
  request (fixture, "POST", ping, TOKEN, same_origin, &reply);
  g_assert_cmpuint (reply.status, ==, 200);
  reply_clear (&reply);

  request (fixture, "POST", ping, TOKEN, unknown_session, &reply);
  g_assert_cmpuint (reply.status, ==, 404);
  reply_clear (&reply);
  request (fixture, "POST", ping, TOKEN, NULL, &reply);
  g_assert_cmpuint (reply.status, ==, 400);
  reply_clear (&reply);
  request (fixture, "POST", ping, TOKEN, bad_version, &reply);
  g_assert_cmpuint (reply.status, ==, 400);
  reply_clear (&reply);
  request (fixture, "POST", ping, TOKEN, other_version, &reply);
  g_assert_cmpuint (reply.status, ==, 400);
  reply_clear (&reply);

  /* The limit is 4096 bytes here. */
  big = g_strnfill (5000, ' ');
  request (fixture, "POST", big, TOKEN, good, &reply);
  g_assert_cmpuint (reply.status, ==, 413);
  reply_clear (&reply);
  request (fixture, "PUT", ping, TOKEN, good, &reply);
  g_assert_cmpuint (reply.status, ==, 405);
  reply_clear (&reply);

  /* The session still works after all that. */
  request (fixture, "POST", ping, TOKEN, good, &reply);
  g_assert_cmpuint (reply.status, ==, 200);
}

/* A raw request, to send a Host header a browser under DNS rebinding
 * would send. Returns the status line. */
static char *
raw_request (guint       port,
             const char *text)
{
  g_autoptr(GSocketClient) client = g_socket_client_new ();
  g_autoptr(GSocketConnection) connection = NULL;
  g_autoptr(GDataInputStream) input = NULL;
  g_autoptr(GError) error = NULL;
  char *line;

  connection = g_socket_client_connect_to_host (client, "127.0.0.1", port, NULL, &error);
  g_assert_no_error (error);
  g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (connection)), text,
                             strlen (text), NULL, NULL, &error);
  g_assert_no_error (error);
  input = g_data_input_stream_new (g_io_stream_get_input_stream (G_IO_STREAM (connection)));
  line = g_data_input_stream_read_line (input, NULL, NULL, &error);
  g_assert_no_error (error);
  g_strchomp (line);
  return line;
}

typedef struct {
  guint  port;
  char  *request;
  char  *status;
} RawRequest;

static gpointer
raw_thread (gpointer data)
{
  RawRequest *raw = data;

  raw->status = raw_request (raw->port, raw->request);
  return NULL;
}

static char *
raw_in_thread (Fixture    *fixture,
               const char *host)
{
  const char *body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
  RawRequest raw = { sight_mcp_http_get_port (fixture->http), NULL, NULL };
  GThread *thread;

  raw.request = g_strdup_printf ("POST /mcp HTTP/1.1\r\nHost: %s\r\n"
                                 "Authorization: Bearer " TOKEN "\r\n"
                                 "Content-Type: application/json\r\n"
                                 "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                                 host, strlen (body), body);
  thread = g_thread_new ("raw", raw_thread, &raw);
  while (raw.status == NULL)
    g_main_context_iteration (NULL, FALSE);
  g_thread_join (thread);
  g_free (raw.request);
  return raw.status;
}

static void
test_host (Fixture       *fixture,
           gconstpointer  data)
{
  g_autofree char *evil = raw_in_thread (fixture, "evil.example");
  g_autofree char *evil_port = NULL;
  g_autofree char *ours = NULL;
  g_autofree char *host = NULL;

  g_assert_cmpstr (evil, ==, "HTTP/1.1 403 Forbidden");
  host = g_strdup_printf ("evil.example:%u", sight_mcp_http_get_port (fixture->http));
  evil_port = raw_in_thread (fixture, host);
  g_assert_cmpstr (evil_port, ==, "HTTP/1.1 403 Forbidden");
  g_free (host);
  /* The right Host passes the Host check (and stops at the session one). */
  host = g_strdup_printf ("127.0.0.1:%u", sight_mcp_http_get_port (fixture->http));
  ours = raw_in_thread (fixture, host);
  g_assert_cmpstr (ours, ==, "HTTP/1.1 400 Bad Request");
}

static void
test_progress_stream (Fixture       *fixture,
                      gconstpointer  data)
{
  g_autofree char *id = initialize (fixture, "2025-06-18");
  g_autofree char *session_header = g_strdup_printf ("Mcp-Session-Id: %s", id);
  const char *headers[] = { session_header, NULL };
  g_auto(Reply) reply = { 0 };
  const char *first, *second, *answer;

  request (fixture, "POST", "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
                            "{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"},"
                            "\"_meta\":{\"progressToken\":\"p1\"}}}",
           TOKEN, headers, &reply);
  g_assert_cmpuint (reply.status, ==, 200);
  g_assert_cmpstr (soup_message_headers_get_content_type (reply.headers, NULL), ==,
                   "text/event-stream");
  /* Two progress events, then the answer, as SSE events. */
  first = strstr (reply.body, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"");
  g_assert_nonnull (first);
  second = strstr (first + 1, "notifications/progress");
  g_assert_nonnull (second);
  answer = strstr (second, "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\"");
  g_assert_nonnull (answer);
  g_assert_nonnull (strstr (reply.body, "\"progressToken\":\"p1\""));
  g_assert_true (g_str_has_suffix (reply.body, "\n\n"));
}

static void
test_cancel_over_http (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autofree char *id = initialize (fixture, "2025-06-18");
  g_autofree char *session_header = g_strdup_printf ("Mcp-Session-Id: %s", id);
  const char *headers[] = { session_header, NULL };
  g_autoptr(SoupMessage) slow = NULL;
  g_auto(Reply) reply = { 0 };
  Sent sent = { NULL, FALSE };

  slow = new_message (fixture, "POST", "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":"
                                       "\"tools/call\",\"params\":{\"name\":\"slow\"}}",
                      TOKEN, headers);
  soup_session_send_and_read_async (fixture->client, slow, G_PRIORITY_DEFAULT, NULL, sent_cb,
                                    &sent);
  /* Let the call start. */
  for (guint i = 0; i < 50 && !sent.done; i++)
    g_main_context_iteration (NULL, FALSE);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_usleep (50000);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_assert_false (sent.done);

  request (fixture, "POST", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                            "\"params\":{\"requestId\":\"s\"}}",
           TOKEN, headers, &reply);
  g_assert_cmpuint (reply.status, ==, 202);
  iterate_until (&sent.done);
  g_assert_true (slow_cancelled);
  /* The cancelled request has no JSON-RPC answer. */
  g_assert_cmpuint (soup_message_get_status (slow), ==, 202);
  g_assert_cmpuint (g_bytes_get_size (sent.bytes), ==, 0);
  g_bytes_unref (sent.bytes);
}

static void
test_token_file (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("test-mcp-token-XXXXXX", &error);
  g_autofree char *path = g_build_filename (dir, "sub", "mcp-token", NULL);
  g_autofree char *folder = g_path_get_dirname (path);
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autofree char *where = NULL;
  gboolean created = FALSE;
  GStatBuf st;

  first = sight_mcp_http_load_or_create_token (path, &where, &created, &error);
  g_assert_no_error (error);
  g_assert_true (created);
  g_assert_cmpstr (where, ==, path);
  g_assert_cmpuint (strlen (first), >=, 40);
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0600);
  g_assert_cmpint (g_stat (folder, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0700);

  second = sight_mcp_http_load_or_create_token (path, NULL, &created, &error);
  g_assert_no_error (error);
  g_assert_false (created);
  g_assert_cmpstr (first, ==, second);

  g_unlink (path);
  g_rmdir (folder);
  g_rmdir (dir);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/mcp-http/session-flow", Fixture, NULL, fixture_setup, test_session_flow,
              fixture_teardown);
  g_test_add ("/mcp-http/batches-2025-03-26", Fixture, NULL, fixture_setup,
              test_batches_2025_03_26, fixture_teardown);
  g_test_add ("/mcp-http/security", Fixture, NULL, fixture_setup, test_security,
              fixture_teardown);
  g_test_add ("/mcp-http/host", Fixture, NULL, fixture_setup, test_host, fixture_teardown);
  g_test_add ("/mcp-http/progress-stream", Fixture, NULL, fixture_setup, test_progress_stream,
              fixture_teardown);
  g_test_add ("/mcp-http/cancel", Fixture, NULL, fixture_setup, test_cancel_over_http,
              fixture_teardown);
  g_test_add_func ("/mcp-http/token-file", test_token_file);
  return g_test_run ();
}
