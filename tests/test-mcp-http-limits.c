/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-mcp-http-limits"

#include "config.h"

#include <string.h>

#include "sight-mcp-http.h"
#include "sight-mcp-tools.h"

/* Clients that never finish a request (issue #26, item 6), as raw sockets on
 * loopback against a SightMcpHttp served from this program's main loop: the
 * clients run in a thread of their own with blocking sockets. Each one must
 * see its connection closed within the request timeout (plus slack), and a
 * chunked body that goes on and on must be refused once it passes the size
 * limit, not read whole. */

#define TOKEN "test-token-0123456789abcdef"
#define REQUEST_TIMEOUT_MS 1500
#define MAX_BODY (1024 * 1024)
/* What the clients allow the server before they call it a failure. */
#define CLOSE_WITHIN_MS (REQUEST_TIMEOUT_MS + 2500)

static guint port;

/* Connects, with a receive timeout well past the server's own. */
static GSocket *
client_connect (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new (loopback, port);
  GSocket *socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
                                  G_SOCKET_PROTOCOL_TCP, &error);

  g_assert_no_error (error);
  g_socket_set_timeout (socket, 20);
  g_socket_connect (socket, address, NULL, &error);
  g_assert_no_error (error);
  return socket;
}

static gboolean
send_text (GSocket    *socket,
           const char *text,
           gsize       length)
{
  while (length > 0)
    {
      gssize n = g_socket_send (socket, text, length, NULL, NULL);

      if (n <= 0)
        return FALSE;
      text += n;
      length -= n;
    }
  return TRUE;
}

/* Reads until the server closes; what it said. NULL when the read timed out
 * (the server kept the connection open). */
static char *
read_until_closed (GSocket *socket)
{
  g_autoptr(GString) got = g_string_new (NULL);
  char buffer[4096];

  for (;;)
    {
      g_autoptr(GError) error = NULL;
      gssize n = g_socket_receive (socket, buffer, sizeof buffer, NULL, &error);

      if (n == 0 || g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED) ||
          g_error_matches (error, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE))
        return g_string_free (g_steal_pointer (&got), FALSE);
      if (n < 0)
        {
          g_test_message ("read: %s", error->message);
          return g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT)
                   ? NULL : g_string_free (g_steal_pointer (&got), FALSE);
        }
      g_string_append_len (got, buffer, n);
    }
}

static char *
headers_for (const char *extra)
{
  return g_strdup_printf ("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
                          "Authorization: Bearer " TOKEN "\r\n"
                          "Content-Type: application/json\r\n"
                          "Accept: application/json, text/event-stream\r\n%s\r\n",
                          port, extra);
}

typedef struct {
  const char *name;
  gint64      closed_after_ms;   /* -1: not closed */
  char       *answer;
  guint64     sent;
} Outcome;

/* Headers one byte every 300 ms: they would take 40 s. */
static gpointer
slow_headers (gpointer data)
{
  Outcome *out = data;
  g_autoptr(GSocket) socket = client_connect ();
  g_autofree char *headers = headers_for ("Content-Length: 2\r\n");
  gint64 t0 = g_get_monotonic_time ();

  for (const char *p = headers; *p != '\0'; p++)
    {
      if (!send_text (socket, p, 1))
        break;
      out->sent++;
      if ((g_get_monotonic_time () - t0) / 1000 > CLOSE_WITHIN_MS + 5000)
        break;
      g_usleep (300 * 1000);
      /* A closed connection shows as readable at EOF. */
      if (g_socket_condition_check (socket, G_IO_IN | G_IO_HUP | G_IO_ERR) != 0)
        break;
    }
  out->answer = read_until_closed (socket);
  out->closed_after_ms = out->answer != NULL ? (g_get_monotonic_time () - t0) / 1000 : -1;
  return NULL;
}

/* Whole headers, then the body one byte every 300 ms. */
static gpointer
slow_body (gpointer data)
{
  Outcome *out = data;
  g_autoptr(GSocket) socket = client_connect ();
  g_autofree char *headers = headers_for ("Content-Length: 200\r\n");
  gint64 t0 = g_get_monotonic_time ();

  g_assert_true (send_text (socket, headers, strlen (headers)));
  for (guint i = 0; i < 200; i++)
    {
      if (!send_text (socket, " ", 1))
        break;
      out->sent++;
      if ((g_get_monotonic_time () - t0) / 1000 > CLOSE_WITHIN_MS + 5000)
        break;
      g_usleep (300 * 1000);
      if (g_socket_condition_check (socket, G_IO_IN | G_IO_HUP | G_IO_ERR) != 0)
        break;
    }
  out->answer = read_until_closed (socket);
  out->closed_after_ms = out->answer != NULL ? (g_get_monotonic_time () - t0) / 1000 : -1;
  return NULL;
}

/* Connects and sends nothing: an idle keep-alive connection. */
static gpointer
idle (gpointer data)
{
  Outcome *out = data;
  g_autoptr(GSocket) socket = client_connect ();
  gint64 t0 = g_get_monotonic_time ();

  out->answer = read_until_closed (socket);
  out->closed_after_ms = out->answer != NULL ? (g_get_monotonic_time () - t0) / 1000 : -1;
  return NULL;
}

/* A chunked body of up to 300 MB, sent as fast as the server reads it. */
static gpointer
chunked_flood (gpointer data)
{
  Outcome *out = data;
  g_autoptr(GSocket) socket = client_connect ();
  g_autofree char *headers = headers_for ("Transfer-Encoding: chunked\r\n");
  g_autofree char *chunk = NULL;
  gsize size = 64 * 1024;
  g_autofree char *line = g_strdup_printf ("%" G_GSIZE_MODIFIER "x\r\n", size);
  gint64 t0 = g_get_monotonic_time ();

  chunk = g_malloc (size + 2);
  memset (chunk, ' ', size);
  memcpy (chunk + size, "\r\n", 2);
  g_assert_true (send_text (socket, headers, strlen (headers)));
  while (out->sent < (guint64) 300 * 1024 * 1024)
    {
      if (!send_text (socket, line, strlen (line)) || !send_text (socket, chunk, size + 2))
        break;
      out->sent += size;
      /* The answer is read as soon as there is one, before the connection
       * is reset under it. */
      if (g_socket_condition_check (socket, G_IO_IN | G_IO_HUP | G_IO_ERR) != 0)
        break;
    }
  out->answer = read_until_closed (socket);
  out->closed_after_ms = out->answer != NULL ? (g_get_monotonic_time () - t0) / 1000 : -1;
  return NULL;
}

typedef struct {
  Outcome  outcomes[4];
  gboolean done;
} Run;

static gpointer
clients_thread (gpointer data)
{
  Run *run = data;
  GThreadFunc clients[] = { slow_headers, slow_body, idle, chunked_flood };
  const char *names[] = { "slow headers", "slow body", "idle connection", "chunked 300 MB" };
  GThread *threads[G_N_ELEMENTS (clients)];

  /* All four at once, each in a thread: the server serves them together. */
  for (guint i = 0; i < G_N_ELEMENTS (clients); i++)
    {
      run->outcomes[i].name = names[i];
      threads[i] = g_thread_new (names[i], clients[i], &run->outcomes[i]);
    }
  for (guint i = 0; i < G_N_ELEMENTS (clients); i++)
    g_thread_join (threads[i]);
  g_atomic_int_set (&run->done, TRUE);
  g_main_context_wakeup (NULL);
  return NULL;
}

static gsize
resident_kb (void)
{
  g_autofree char *status = NULL;
  const char *line;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL) ||
      (line = strstr (status, "VmRSS:")) == NULL)
    return 0;
  return g_ascii_strtoull (line + 6, NULL, 10);
}

static void
test_slow_clients (void)
{
  g_autoptr(SightMcpRegistry) registry = sight_mcp_registry_new_builtin ();
  g_autoptr(SightMcpServer) server = sight_mcp_server_new (registry);
  g_autoptr(SightMcpHttp) http = sight_mcp_http_new (server, TOKEN);
  g_autoptr(GError) error = NULL;
  Run run = { 0 };
  GThread *thread;
  gsize rss_before, rss_after;

  sight_mcp_http_set_max_body_size (http, MAX_BODY);
  sight_mcp_http_set_request_timeout (http, REQUEST_TIMEOUT_MS);
  sight_mcp_http_listen (http, "127.0.0.1", 0, &error);
  g_assert_no_error (error);
  port = sight_mcp_http_get_port (http);

  rss_before = resident_kb ();
  thread = g_thread_new ("clients", clients_thread, &run);
  while (!g_atomic_int_get (&run.done))
    g_main_context_iteration (NULL, TRUE);
  g_thread_join (thread);
  rss_after = resident_kb ();

  for (guint i = 0; i < G_N_ELEMENTS (run.outcomes); i++)
    {
      Outcome *out = &run.outcomes[i];
      g_autofree char *first = out->answer != NULL ? g_strndup (out->answer, strcspn (out->answer, "\r\n"))
                                                   : NULL;

      g_test_message ("%s: %s after %" G_GINT64_FORMAT " ms, %" G_GUINT64_FORMAT " bytes sent, "
                      "answer \"%s\"", out->name, out->closed_after_ms >= 0 ? "closed" : "still open",
                      out->closed_after_ms, out->sent, first != NULL ? first : "");
    }
  g_test_message ("resident memory %" G_GSIZE_FORMAT " → %" G_GSIZE_FORMAT " kB", rss_before,
                  rss_after);

  /* The slow ones are closed within the request timeout, with a 408 once
   * part of a request came. */
  for (guint i = 0; i < 3; i++)
    {
      g_assert_cmpint (run.outcomes[i].closed_after_ms, >=, 0);
      g_assert_cmpint (run.outcomes[i].closed_after_ms, <=, CLOSE_WITHIN_MS);
    }
  g_assert_true (g_str_has_prefix (run.outcomes[1].answer, "HTTP/1.1 408"));
  /* The flood is refused soon after the limit, not read to its end. */
  g_assert_nonnull (run.outcomes[3].answer);
  g_assert_true (g_str_has_prefix (run.outcomes[3].answer, "HTTP/1.1 413"));
  g_assert_cmpuint (run.outcomes[3].sent, <, (guint64) 64 * 1024 * 1024);
  g_assert_cmpuint (rss_after, <, rss_before + 48 * 1024);

  sight_mcp_http_shutdown (http);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/mcp-http-limits/slow-clients", test_slow_clients);
  return g_test_run ();
}
