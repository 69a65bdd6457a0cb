/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-mcp-http"

#include "config.h"

#include "sight-mcp-http.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <libsoup/soup.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sight-error.h"

#define MCP_PATH "/mcp"

struct _SightMcpHttp
{
  GObject         parent_instance;

  /* owned */
  SightMcpServer *server;
  SoupServer     *soup;
  char           *token;
  char           *address;      /* what we listen on */
  guint           port;
  gsize           max_body;
  guint           request_timeout_ms;
  GHashTable     *sessions;     /* Mcp-Session-Id -> SightMcpSession */
};

G_DEFINE_FINAL_TYPE (SightMcpHttp, sight_mcp_http, G_TYPE_OBJECT)

/* One POST being answered. */
typedef struct {
  SightMcpHttp      *self;
  SoupServerMessage *msg;
  SightMcpSession   *session;
  char              *session_id;     /* set for initialize */
  gboolean           stream;         /* answering with text/event-stream */
  gboolean           disconnected;
  gulong             disconnected_id;
} Post;

static void
post_free (Post *post)
{
  g_clear_signal_handler (&post->disconnected_id, post->msg);
  g_clear_object (&post->msg);
  g_clear_object (&post->session);
  g_clear_object (&post->self);
  g_free (post->session_id);
  g_free (post);
}

static void
sight_mcp_http_dispose (GObject *object)
{
  SightMcpHttp *self = SIGHT_MCP_HTTP (object);

  sight_mcp_http_shutdown (self);
  G_OBJECT_CLASS (sight_mcp_http_parent_class)->dispose (object);
}

static void
sight_mcp_http_finalize (GObject *object)
{
  SightMcpHttp *self = SIGHT_MCP_HTTP (object);

  g_clear_object (&self->soup);
  g_clear_object (&self->server);
  g_clear_pointer (&self->sessions, g_hash_table_unref);
  if (self->token != NULL)
    memset (self->token, 0, strlen (self->token));
  g_clear_pointer (&self->token, g_free);
  g_clear_pointer (&self->address, g_free);
  G_OBJECT_CLASS (sight_mcp_http_parent_class)->finalize (object);
}

static void
sight_mcp_http_class_init (SightMcpHttpClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = sight_mcp_http_dispose;
  object_class->finalize = sight_mcp_http_finalize;
}

static void
sight_mcp_http_init (SightMcpHttp *self)
{
  self->max_body = SIGHT_MCP_HTTP_DEFAULT_MAX_BODY;
  self->request_timeout_ms = SIGHT_MCP_HTTP_DEFAULT_REQUEST_TIMEOUT_MS;
  self->sessions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
}

/* Answers */

static void
respond_json (SoupServerMessage *msg,
              guint              status,
              JsonNode          *body)
{
  g_autofree char *text = json_to_string (body, FALSE);
  gsize length = strlen (text);

  soup_server_message_set_status (msg, status, NULL);
  soup_server_message_set_response (msg, "application/json", SOUP_MEMORY_TAKE,
                                    g_steal_pointer (&text), length);
}

/* An HTTP-level refusal, with a JSON-RPC error body that has no id. */
static void
refuse (SoupServerMessage *msg,
        guint              status,
        int                rpc_code,
        const char        *message)
{
  g_autoptr(JsonNode) body = sight_mcp_error_response_new (NULL, rpc_code, message);

  g_debug ("refusing %s %s: %u %s", soup_server_message_get_method (msg),
           g_uri_get_path (soup_server_message_get_uri (msg)), status, message);
  respond_json (msg, status, body);
}

/* Checks */

static gboolean
constant_time_equal (const char *a,
                     const char *b)
{
  gsize la = strlen (a), lb = strlen (b);
  guchar diff = la != lb;

  for (gsize i = 0; i < la; i++)
    diff |= (guchar) a[i] ^ (guchar) b[i % MAX (lb, 1)];
  return diff == 0;
}

static gboolean
host_is_ours (SightMcpHttp *self,
              const char   *host)
{
  g_autofree char *with_port = NULL;
  const char *names[] = { "127.0.0.1", "localhost", "[::1]", NULL, NULL };
  g_autofree char *bracketed = NULL;

  if (host == NULL)
    return FALSE;
  if (strchr (self->address, ':') != NULL)
    names[3] = bracketed = g_strdup_printf ("[%s]", self->address);
  else
    names[3] = self->address;

  for (guint i = 0; names[i] != NULL; i++)
    {
      g_autofree char *expected = g_strdup_printf ("%s:%u", names[i], self->port);

      if (g_ascii_strcasecmp (host, expected) == 0)
        return TRUE;
    }
  return FALSE;
}

static gboolean
origin_is_ours (SightMcpHttp *self,
                const char   *origin)
{
  if (!g_str_has_prefix (origin, "http://"))
    return FALSE;
  return host_is_ours (self, origin + strlen ("http://"));
}

/* The checks that need only the headers: they run before the body is read,
 * so a refused request never costs its body. Returns FALSE with the status
 * set. */
static gboolean
check_headers (SightMcpHttp      *self,
               SoupServerMessage *msg)
{
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (msg);
  const char *host = soup_message_headers_get_one (headers, "Host");
  const char *origin = soup_message_headers_get_one (headers, "Origin");
  const char *authorization = soup_message_headers_get_one (headers, "Authorization");
  const char *method = soup_server_message_get_method (msg);
  goffset length;

  if (!host_is_ours (self, host))
    {
      refuse (msg, SOUP_STATUS_FORBIDDEN, SIGHT_MCP_INVALID_REQUEST,
              "Forbidden: the Host header does not name this server");
      return FALSE;
    }
  if (origin != NULL && !origin_is_ours (self, origin))
    {
      refuse (msg, SOUP_STATUS_FORBIDDEN, SIGHT_MCP_INVALID_REQUEST,
              "Forbidden: requests from this Origin are not allowed");
      return FALSE;
    }
  if (authorization == NULL || g_ascii_strncasecmp (authorization, "Bearer ", 7) != 0 ||
      !constant_time_equal (authorization + 7, self->token))
    {
      soup_message_headers_replace (soup_server_message_get_response_headers (msg),
                                    "WWW-Authenticate", "Bearer realm=\"sightline\"");
      refuse (msg, SOUP_STATUS_UNAUTHORIZED, SIGHT_MCP_INVALID_REQUEST,
              "Unauthorized: send Authorization: Bearer with the token of sightline serve");
      return FALSE;
    }
  if (!g_str_equal (method, "POST") && !g_str_equal (method, "GET") &&
      !g_str_equal (method, "DELETE"))
    {
      soup_message_headers_replace (soup_server_message_get_response_headers (msg), "Allow",
                                    "POST, GET, DELETE");
      refuse (msg, SOUP_STATUS_METHOD_NOT_ALLOWED, SIGHT_MCP_INVALID_REQUEST,
              "Method not allowed");
      return FALSE;
    }
  length = soup_message_headers_get_content_length (headers);
  if (soup_message_headers_get_encoding (headers) == SOUP_ENCODING_CONTENT_LENGTH &&
      length > (goffset) self->max_body)
    {
      refuse (msg, SOUP_STATUS_REQUEST_ENTITY_TOO_LARGE, SIGHT_MCP_INVALID_REQUEST,
              "Payload too large");
      return FALSE;
    }
  return TRUE;
}

static void
early_handler_cb (SoupServer        *server,
                  SoupServerMessage *msg,
                  const char        *path,
                  GHashTable        *query,
                  gpointer           user_data)
{
  check_headers (SIGHT_MCP_HTTP (user_data), msg);
}

/* Requests that do not arrive. libsoup reads a request as slowly as the
 * client sends it, keeps an idle keep-alive connection open for ever and
 * reads a chunked body whole before the handler can look at its size. So
 * each request, from the moment its connection waits for it, has
 * request_timeout_ms for its headers and body, and a chunked body is
 * counted as its chunks arrive: past either bound the connection is ended,
 * with a 408 or 413 said first when the client is still sending. */

typedef struct {
  SightMcpHttp      *self;      /* borrowed: the server ends with its connections */
  SoupServerMessage *msg;       /* borrowed: this is its data */
  guint              timeout_source;
  goffset            received;
  gboolean           started;   /* some of the request arrived */
} Arrival;

static void
arrival_free (Arrival *arrival)
{
  g_clear_handle_id (&arrival->timeout_source, g_source_remove);
  g_free (arrival);
}

/* Ends the connection @msg came on, after writing @status_line when given.
 * libsoup is reading the request, so nothing else is being written: the
 * short answer goes out whole, and shutting the socket down (not closing
 * it: libsoup still polls it) makes libsoup drop the message. */
static void
end_connection (SoupServerMessage *msg,
                const char        *status_line)
{
  GSocket *socket = soup_server_message_get_socket (msg);

  if (socket == NULL)
    return;
  if (status_line != NULL)
    {
      g_autofree char *answer = g_strdup_printf ("HTTP/1.1 %s\r\nConnection: close\r\n"
                                                 "Content-Length: 0\r\n\r\n", status_line);

      g_socket_send (socket, answer, strlen (answer), NULL, NULL);
    }
  g_socket_shutdown (socket, TRUE, TRUE, NULL);
}

static gboolean
arrival_timeout_cb (gpointer data)
{
  Arrival *arrival = data;

  arrival->timeout_source = 0;
  g_debug ("a request did not arrive within %u ms (%" G_GOFFSET_FORMAT " body bytes): "
           "closing its connection", arrival->self->request_timeout_ms, arrival->received);
  /* An idle keep-alive connection just closes. */
  end_connection (arrival->msg, arrival->started ? "408 Request Timeout" : NULL);
  return G_SOURCE_REMOVE;
}

static void
arrival_got_headers_cb (SoupServerMessage *msg,
                        Arrival           *arrival)
{
  arrival->started = TRUE;
}

static void
arrival_got_chunk_cb (SoupServerMessage *msg,
                      GBytes            *chunk,
                      Arrival           *arrival)
{
  arrival->started = TRUE;
  arrival->received += g_bytes_get_size (chunk);
  if (arrival->received > (goffset) arrival->self->max_body)
    {
      g_debug ("a request body passed %" G_GSIZE_FORMAT " bytes: refused", arrival->self->max_body);
      g_clear_handle_id (&arrival->timeout_source, g_source_remove);
      end_connection (msg, "413 Payload Too Large");
    }
}

static void
arrival_done_cb (SoupServerMessage *msg,
                 Arrival           *arrival)
{
  g_clear_handle_id (&arrival->timeout_source, g_source_remove);
}

static void
request_started_cb (SoupServer        *server,
                    SoupServerMessage *msg,
                    SightMcpHttp      *self)
{
  Arrival *arrival = g_new0 (Arrival, 1);

  arrival->self = self;
  arrival->msg = msg;
  arrival->timeout_source = g_timeout_add (self->request_timeout_ms, arrival_timeout_cb, arrival);
  g_object_set_data_full (G_OBJECT (msg), "sight-arrival", arrival, (GDestroyNotify) arrival_free);
  g_signal_connect (msg, "got-headers", G_CALLBACK (arrival_got_headers_cb), arrival);
  g_signal_connect (msg, "got-chunk", G_CALLBACK (arrival_got_chunk_cb), arrival);
  g_signal_connect (msg, "got-body", G_CALLBACK (arrival_done_cb), arrival);
  g_signal_connect (msg, "finished", G_CALLBACK (arrival_done_cb), arrival);
  g_signal_connect (msg, "disconnected", G_CALLBACK (arrival_done_cb), arrival);
}

/* The session a request names, or NULL with the status set. */
static SightMcpSession *
find_session (SightMcpHttp      *self,
              SoupServerMessage *msg)
{
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (msg);
  const char *id = soup_message_headers_get_one (headers, "Mcp-Session-Id");
  const char *version = soup_message_headers_get_one (headers, "MCP-Protocol-Version");
  SightMcpSession *session;

  if (id == NULL)
    {
      refuse (msg, SOUP_STATUS_BAD_REQUEST, SIGHT_MCP_INVALID_REQUEST,
              "Bad Request: no Mcp-Session-Id; send initialize first");
      return NULL;
    }
  session = g_hash_table_lookup (self->sessions, id);
  if (session == NULL)
    {
      refuse (msg, SOUP_STATUS_NOT_FOUND, SIGHT_MCP_INVALID_REQUEST,
              "Session not found: initialize a new session");
      return NULL;
    }
  /* Without the header the client is taken to speak 2025-03-26, which the
   * transport's rules allow. */
  if (version != NULL && (!sight_mcp_protocol_version_supported (version) ||
                          g_strcmp0 (version,
                                     sight_mcp_session_get_protocol_version (session)) != 0))
    {
      g_autofree char *safe = sight_text_sanitize (version, 40);
      g_autofree char *message =
        g_strdup_printf ("Bad Request: unsupported MCP-Protocol-Version %s (this session "
                         "speaks %s)", safe, sight_mcp_session_get_protocol_version (session));
      refuse (msg, SOUP_STATUS_BAD_REQUEST, SIGHT_MCP_INVALID_REQUEST, message);
      return NULL;
    }
  return session;
}

static char *
new_session_id (void)
{
  guint8 bytes[16];
  GString *id = g_string_sized_new (33);

  if (getrandom (bytes, sizeof bytes, 0) != sizeof bytes)
    g_error ("no randomness for a session id: %s", g_strerror (errno));
  for (guint i = 0; i < sizeof bytes; i++)
    g_string_append_printf (id, "%02x", bytes[i]);
  return g_string_free (id, FALSE);
}

static gboolean
accepts (const char *accept,
         const char *type)
{
  return accept == NULL || strstr (accept, type) != NULL || strstr (accept, "*/*") != NULL;
}

static gboolean
wants_progress (JsonNode *message)
{
  if (JSON_NODE_HOLDS_ARRAY (message))
    {
      JsonArray *batch = json_node_get_array (message);

      for (guint i = 0; i < json_array_get_length (batch); i++)
        if (wants_progress (json_array_get_element (batch, i)))
          return TRUE;
      return FALSE;
    }
  if (JSON_NODE_HOLDS_OBJECT (message))
    {
      JsonObject *object = json_node_get_object (message);
      JsonNode *params = json_object_get_member (object, "params");
      JsonNode *meta;

      if (params == NULL || !JSON_NODE_HOLDS_OBJECT (params) ||
          !json_object_has_member (object, "id"))
        return FALSE;
      meta = json_object_get_member (json_node_get_object (params), "_meta");
      return meta != NULL && JSON_NODE_HOLDS_OBJECT (meta) &&
             json_object_has_member (json_node_get_object (meta), "progressToken");
    }
  return FALSE;
}

static gboolean
is_initialize (JsonNode *message)
{
  JsonObject *object;

  if (!JSON_NODE_HOLDS_OBJECT (message))
    return FALSE;
  object = json_node_get_object (message);
  return json_object_has_member (object, "id") &&
         g_strcmp0 (json_object_get_string_member_with_default (object, "method", NULL),
                    "initialize") == 0;
}

/* Streams */

static void
stream_event (Post     *post,
              JsonNode *message)
{
  g_autofree char *json = json_to_string (message, FALSE);
  g_autofree char *event = g_strdup_printf ("event: message\ndata: %s\n\n", json);
  SoupMessageBody *body = soup_server_message_get_response_body (post->msg);

  soup_message_body_append (body, SOUP_MEMORY_COPY, event, strlen (event));
  soup_server_message_unpause (post->msg);
}

static void
start_stream (Post *post)
{
  SoupMessageHeaders *headers = soup_server_message_get_response_headers (post->msg);

  post->stream = TRUE;
  soup_server_message_set_status (post->msg, SOUP_STATUS_OK, NULL);
  soup_message_headers_set_encoding (headers, SOUP_ENCODING_CHUNKED);
  soup_message_headers_set_content_type (headers, "text/event-stream", NULL);
  soup_message_headers_replace (headers, "Cache-Control", "no-cache");
  if (post->session_id != NULL)
    soup_message_headers_replace (headers, "Mcp-Session-Id", post->session_id);
}

static void
notify_cb (JsonNode *message,
           gpointer  user_data)
{
  Post *post = user_data;

  if (post->disconnected || !post->stream)
    return;
  stream_event (post, message);
}

static void
disconnected_cb (SoupServerMessage *msg,
                 gpointer           user_data)
{
  Post *post = user_data;

  post->disconnected = TRUE;
}

static void
handled_cb (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  Post *post = user_data;
  SightMcpHttp *self = post->self;
  g_autoptr(JsonNode) answer = NULL;
  g_autoptr(GError) error = NULL;
  gboolean refused = FALSE;

  answer = sight_mcp_session_handle_finish (SIGHT_MCP_SESSION (object), result, &error);

  /* A message that failed as a whole (not JSON-RPC, no batches here) is a
   * 400 with the JSON-RPC error as body. */
  if (answer != NULL && JSON_NODE_HOLDS_OBJECT (answer))
    {
      JsonObject *object_answer = json_node_get_object (answer);

      refused = json_object_has_member (object_answer, "error") &&
                JSON_NODE_HOLDS_NULL (json_object_get_member (object_answer, "id"));
    }

  if (post->session_id != NULL)
    {
      /* initialize: the session exists once initialize succeeded. */
      if (sight_mcp_session_is_initialized (post->session))
        g_hash_table_insert (self->sessions, g_strdup (post->session_id),
                             g_object_ref (post->session));
      else
        {
          sight_mcp_session_close (post->session);
          g_clear_pointer (&post->session_id, g_free);
        }
    }

  if (post->disconnected)
    {
      g_debug ("the client left before its answer");
      post_free (post);
      return;
    }

  if (post->stream)
    {
      if (answer != NULL)
        stream_event (post, answer);
      soup_message_body_complete (soup_server_message_get_response_body (post->msg));
      soup_server_message_unpause (post->msg);
    }
  else
    {
      if (post->session_id != NULL)
        soup_message_headers_replace (soup_server_message_get_response_headers (post->msg),
                                      "Mcp-Session-Id", post->session_id);
      if (answer == NULL)
        {
          if (error != NULL)
            refuse (post->msg, SOUP_STATUS_INTERNAL_SERVER_ERROR, SIGHT_MCP_INTERNAL_ERROR,
                    "Internal error");
          else
            soup_server_message_set_status (post->msg, SOUP_STATUS_ACCEPTED, NULL);
        }
      else
        respond_json (post->msg, refused ? SOUP_STATUS_BAD_REQUEST : SOUP_STATUS_OK, answer);
      soup_server_message_unpause (post->msg);
    }
  post_free (post);
}

static void
handle_post (SightMcpHttp      *self,
             SoupServerMessage *msg)
{
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (msg);
  SoupMessageBody *body = soup_server_message_get_request_body (msg);
  const char *accept = soup_message_headers_get_one (headers, "Accept");
  const char *content_type = soup_message_headers_get_content_type (headers, NULL);
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) message = NULL;
  Post *post;

  if (!accepts (accept, "application/json") && !accepts (accept, "text/event-stream"))
    {
      refuse (msg, SOUP_STATUS_NOT_ACCEPTABLE, SIGHT_MCP_INVALID_REQUEST,
              "Not Acceptable: accept application/json and text/event-stream");
      return;
    }
  if (content_type == NULL || g_ascii_strcasecmp (content_type, "application/json") != 0)
    {
      refuse (msg, SOUP_STATUS_UNSUPPORTED_MEDIA_TYPE, SIGHT_MCP_INVALID_REQUEST,
              "Unsupported Media Type: send application/json");
      return;
    }
  /* A chunked body has no length up front: check it now it is read. */
  if (body->length > (goffset) self->max_body)
    {
      refuse (msg, SOUP_STATUS_REQUEST_ENTITY_TOO_LARGE, SIGHT_MCP_INVALID_REQUEST,
              "Payload too large");
      return;
    }

  bytes = soup_message_body_flatten (body);
  message = sight_mcp_message_parse (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes),
                                     &error);
  if (message == NULL)
    {
      refuse (msg, SOUP_STATUS_BAD_REQUEST, SIGHT_MCP_PARSE_ERROR, error->message);
      return;
    }

  post = g_new0 (Post, 1);
  post->self = g_object_ref (self);
  post->msg = g_object_ref (msg);
  if (is_initialize (message))
    {
      post->session = sight_mcp_server_create_session (self->server);
      post->session_id = new_session_id ();
    }
  else
    {
      SightMcpSession *session = find_session (self, msg);

      if (session == NULL)
        {
          post_free (post);
          return;
        }
      post->session = g_object_ref (session);
    }

  post->disconnected_id = g_signal_connect (msg, "disconnected", G_CALLBACK (disconnected_cb),
                                            post);
  if (accept != NULL && strstr (accept, "text/event-stream") != NULL && wants_progress (message))
    start_stream (post);
  soup_server_message_pause (msg);
  sight_mcp_session_handle_async (post->session, message, notify_cb, post, handled_cb, post);
}

static void
handle_delete (SightMcpHttp      *self,
               SoupServerMessage *msg)
{
  const char *id = soup_message_headers_get_one (soup_server_message_get_request_headers (msg),
                                                 "Mcp-Session-Id");
  SightMcpSession *session = find_session (self, msg);

  if (session == NULL)
    return;
  sight_mcp_session_close (session);
  g_hash_table_remove (self->sessions, id);
  soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
}

static void
handler_cb (SoupServer        *server,
            SoupServerMessage *msg,
            const char        *path,
            GHashTable        *query,
            gpointer           user_data)
{
  SightMcpHttp *self = SIGHT_MCP_HTTP (user_data);
  const char *method = soup_server_message_get_method (msg);

  if (!g_str_equal (path, MCP_PATH))
    {
      refuse (msg, SOUP_STATUS_NOT_FOUND, SIGHT_MCP_INVALID_REQUEST,
              "Not found: the endpoint is " MCP_PATH);
      return;
    }
  if (!check_headers (self, msg))
    return;

  if (g_str_equal (method, "POST"))
    handle_post (self, msg);
  else if (g_str_equal (method, "DELETE"))
    handle_delete (self, msg);
  else
    {
      /* GET would open a server-to-client stream; this server sends
       * nothing unasked, so it offers none. */
      soup_message_headers_replace (soup_server_message_get_response_headers (msg), "Allow",
                                    "POST, DELETE");
      refuse (msg, SOUP_STATUS_METHOD_NOT_ALLOWED, SIGHT_MCP_INVALID_REQUEST,
              "Method not allowed: this server offers no GET stream");
    }
}

SightMcpHttp *
sight_mcp_http_new (SightMcpServer *server,
                    const char     *token)
{
  SightMcpHttp *self;

  g_return_val_if_fail (SIGHT_IS_MCP_SERVER (server), NULL);
  g_return_val_if_fail (token != NULL && strlen (token) >= 16, NULL);

  self = g_object_new (SIGHT_TYPE_MCP_HTTP, NULL);
  self->server = g_object_ref (server);
  self->token = g_strdup (token);
  self->soup = soup_server_new ("server-header", "sightline-mcp", NULL);
  soup_server_add_early_handler (self->soup, NULL, early_handler_cb, self, NULL);
  soup_server_add_handler (self->soup, NULL, handler_cb, self, NULL);
  g_signal_connect (self->soup, "request-started", G_CALLBACK (request_started_cb), self);
  return self;
}

void
sight_mcp_http_set_max_body_size (SightMcpHttp *self,
                                  gsize         max_bytes)
{
  g_return_if_fail (SIGHT_IS_MCP_HTTP (self));
  self->max_body = max_bytes;
}

void
sight_mcp_http_set_request_timeout (SightMcpHttp *self,
                                    guint         timeout_ms)
{
  g_return_if_fail (SIGHT_IS_MCP_HTTP (self));
  g_return_if_fail (timeout_ms > 0);
  self->request_timeout_ms = timeout_ms;
}

gboolean
sight_mcp_http_listen (SightMcpHttp  *self,
                       const char    *address,
                       guint          port,
                       GError       **error)
{
  g_autoptr(GInetAddress) inet = NULL;
  g_autoptr(GSocketAddress) socket_address = NULL;
  g_autoptr(GError) local_error = NULL;
  GSList *uris;

  g_return_val_if_fail (SIGHT_IS_MCP_HTTP (self), FALSE);

  inet = g_inet_address_new_from_string (address != NULL ? address : "127.0.0.1");
  if (inet == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "%s is not an IP address", address);
      return FALSE;
    }
  socket_address = g_inet_socket_address_new (inet, port);
  if (!soup_server_listen (self->soup, socket_address, 0, &local_error))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "cannot listen on %s port %u: %s", address, port, local_error->message);
      return FALSE;
    }
  uris = soup_server_get_uris (self->soup);
  self->port = uris != NULL ? (guint) g_uri_get_port (uris->data) : port;
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);
  g_free (self->address);
  self->address = g_inet_address_to_string (inet);
  return TRUE;
}

guint
sight_mcp_http_get_port (SightMcpHttp *self)
{
  g_return_val_if_fail (SIGHT_IS_MCP_HTTP (self), 0);
  return self->port;
}

char *
sight_mcp_http_get_url (SightMcpHttp *self)
{
  g_return_val_if_fail (SIGHT_IS_MCP_HTTP (self), NULL);

  if (strchr (self->address, ':') != NULL)
    return g_strdup_printf ("http://[%s]:%u" MCP_PATH, self->address, self->port);
  return g_strdup_printf ("http://%s:%u" MCP_PATH, self->address, self->port);
}

guint
sight_mcp_http_get_n_sessions (SightMcpHttp *self)
{
  g_return_val_if_fail (SIGHT_IS_MCP_HTTP (self), 0);
  return g_hash_table_size (self->sessions);
}

void
sight_mcp_http_shutdown (SightMcpHttp *self)
{
  GHashTableIter iter;
  gpointer value;

  g_return_if_fail (SIGHT_IS_MCP_HTTP (self));

  if (self->soup != NULL)
    soup_server_disconnect (self->soup);
  g_hash_table_iter_init (&iter, self->sessions);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    sight_mcp_session_close (value);
  g_hash_table_remove_all (self->sessions);
}

/* The token */

static char *
generate_token (void)
{
  guint8 bytes[32];

  if (getrandom (bytes, sizeof bytes, 0) != sizeof bytes)
    return NULL;
  /* URL-safe, no padding: it travels in a header and sits in a file. */
  {
    g_autofree char *base64 = g_base64_encode (bytes, sizeof bytes);
    GString *token = g_string_new ("sl_");

    for (const char *p = base64; *p != '\0'; p++)
      {
        if (*p == '+')
          g_string_append_c (token, '-');
        else if (*p == '/')
          g_string_append_c (token, '_');
        else if (*p != '=')
          g_string_append_c (token, *p);
      }
    memset (bytes, 0, sizeof bytes);
    return g_string_free (token, FALSE);
  }
}

char *
sight_mcp_http_load_or_create_token (const char  *path,
                                     char       **out_path,
                                     gboolean    *out_created,
                                     GError     **error)
{
  g_autofree char *file_path = NULL;
  g_autofree char *folder = NULL;
  g_autofree char *contents = NULL;
  g_autofree char *token = NULL;
  g_autofree char *line = NULL;
  int fd;

  file_path = path != NULL ? g_strdup (path)
                           : g_build_filename (g_get_user_config_dir (), "sightline",
                                               "mcp-token", NULL);
  if (out_created != NULL)
    *out_created = FALSE;

  if (g_file_get_contents (file_path, &contents, NULL, NULL))
    {
      g_strstrip (contents);
      if (strlen (contents) < 16)
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                       "the token file %s is too short: delete it to get a new token",
                       file_path);
          return NULL;
        }
      if (out_path != NULL)
        *out_path = g_steal_pointer (&file_path);
      return g_steal_pointer (&contents);
    }

  folder = g_path_get_dirname (file_path);
  if (g_mkdir_with_parents (folder, 0700) != 0)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "cannot create %s: %s", folder, g_strerror (errno));
      return NULL;
    }
  token = generate_token ();
  if (token == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "no randomness for a token");
      return NULL;
    }
  /* O_EXCL: never write a token into a file someone else created. */
  fd = g_open (file_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "cannot create the token file %s: %s", file_path, g_strerror (errno));
      return NULL;
    }
  line = g_strconcat (token, "\n", NULL);
  if (write (fd, line, strlen (line)) != (gssize) strlen (line) || fsync (fd) != 0)
    {
      int saved = errno;

      close (fd);
      g_unlink (file_path);
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "cannot write the token file %s: %s", file_path, g_strerror (saved));
      return NULL;
    }
  close (fd);
  if (out_created != NULL)
    *out_created = TRUE;
  if (out_path != NULL)
    *out_path = g_steal_pointer (&file_path);
  return g_steal_pointer (&token);
}
