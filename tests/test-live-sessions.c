/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-live-sessions"

#include "config.h"

#include <adwaita.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <libsoup/soup.h>
#include <string.h>
#include <webkit/webkit.h>

#include "sight-mcp-http.h"

#include "sight-window.h"

/* The window's in-app MCP server: a real SoupSession client over loopback
 * opens a session on the demo site; it appears in the window's list, shows
 * its page when chosen, goes when stopped; turning the server off closes
 * the port. */

#define DEADLINE_US (60 * G_USEC_PER_SEC)

static char *test_config;

static gboolean
wake_cb (gpointer user_data)
{
  return G_SOURCE_CONTINUE;
}

static void
store_result_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

static void
wait_for (GAsyncResult **result)
{
  gint64 deadline = g_get_monotonic_time () + DEADLINE_US;

  while (*result == NULL && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_nonnull (*result);
}

/* POSTs @body to @url; returns the reply's JSON object and its status. */
static JsonObject *
post (SoupSession  *client,
      const char   *url,
      const char   *token,
      const char   *session_id,
      const char   *body,
      guint        *out_status,
      char        **out_session_id)
{
  g_autoptr(SoupMessage) msg = soup_message_new ("POST", url);
  SoupMessageHeaders *headers = soup_message_get_request_headers (msg);
  g_autoptr(GBytes) request = g_bytes_new (body, strlen (body));
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GBytes) reply = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *auth = g_strdup_printf ("Bearer %s", token);
  g_autoptr(JsonParser) parser = json_parser_new ();

  soup_message_headers_replace (headers, "Authorization", auth);
  soup_message_headers_replace (headers, "Accept", "application/json, text/event-stream");
  if (session_id != NULL)
    {
      soup_message_headers_replace (headers, "Mcp-Session-Id", session_id);
      soup_message_headers_replace (headers, "MCP-Protocol-Version", "2025-06-18");
    }
  soup_message_set_request_body_from_bytes (msg, "application/json", request);
  soup_session_send_and_read_async (client, msg, G_PRIORITY_DEFAULT, NULL,
                                    store_result_cb, &result);
  wait_for (&result);
  reply = soup_session_send_and_read_finish (client, result, &error);
  if (out_status != NULL)
    *out_status = soup_message_get_status (msg);
  if (reply == NULL)
    return NULL;
  if (out_session_id != NULL)
    *out_session_id = g_strdup (soup_message_headers_get_one (
                                  soup_message_get_response_headers (msg), "Mcp-Session-Id"));
  if (g_bytes_get_size (reply) == 0 ||
      !json_parser_load_from_data (parser, g_bytes_get_data (reply, NULL),
                                   g_bytes_get_size (reply), NULL))
    return NULL;
  return json_object_ref (json_node_get_object (json_parser_get_root (parser)));
}

static void
spin_until (gboolean (*done) (gpointer), gpointer data)
{
  gint64 deadline = g_get_monotonic_time () + DEADLINE_US;

  while (!done (data) && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (done (data));
}

static gboolean
demo_ready (gpointer data)
{
  return sight_window_get_demo_url (data) != NULL;
}

static const char *inspector_url;

static gboolean
inspector_shows (gpointer data)
{
  SightObservation *observation = sight_inspector_get_observation (data);

  return observation != NULL &&
         g_strcmp0 (sight_observation_get_url (observation), inspector_url) == 0;
}

static gboolean
list_has_session (gpointer data)
{
  return g_list_model_get_n_items (gtk_drop_down_get_model (data)) == 2;
}

static gboolean
list_is_empty (gpointer data)
{
  return g_list_model_get_n_items (gtk_drop_down_get_model (data)) == 1;
}

static void
test_live_sessions (void)
{
  const char *config = g_getenv ("XDG_CONFIG_HOME");
  g_autofree char *token_path = NULL;
  g_autofree char *token = NULL;
  g_autofree char *url = NULL;
  g_autofree char *mcp_session = NULL;
  g_autofree char *body = NULL;
  g_autofree char *sess_id = NULL;
  g_autofree char *start_url = NULL;
  g_autoptr(SoupSession) client = soup_session_new_with_options ("timeout", 30, NULL);
  g_autoptr(JsonObject) reply = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocketClient) socket_client = NULL;
  g_autoptr(GSocketConnection) connection = NULL;
  SightWindow *window;
  SightLiveSessions *live;
  GtkDropDown *dropdown;
  SightSession *shown;
  WebKitWebView *view;
  guint status = 0, port;

  window = g_object_ref_sink (g_object_new (SIGHT_TYPE_WINDOW, NULL));
  gtk_window_present (GTK_WINDOW (window));
  sight_window_open_demo_site (window);
  spin_until (demo_ready, window);

  live = sight_window_get_live_sessions (window);
  dropdown = sight_live_sessions_get_dropdown (live);
  g_assert_false (sight_live_sessions_get_serving (live));
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (dropdown)));

  /* The primary menu's "Serve MCP…" opens the popover with the switch. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.serve-mcp", NULL));
  g_assert_true (gtk_widget_get_mapped (GTK_WIDGET (sight_live_sessions_get_switch (live))));

  /* Toggle on: the switch in the popover starts the server. */
  gtk_switch_set_active (sight_live_sessions_get_switch (live), TRUE);
  g_assert_true (sight_live_sessions_get_serving (live));
  port = sight_live_sessions_get_port (live);
  g_assert_cmpuint (port, >, 0);
  url = g_strdup (sight_live_sessions_get_url (live));
  g_assert_true (g_str_has_prefix (url, "http://127.0.0.1:"));
  g_assert_true (g_str_has_suffix (url, "/mcp"));
  /* The user's stored token, created on first use. */
  token = sight_mcp_http_load_or_create_token (NULL, &token_path, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (token_path, config));

  /* A wrong token is refused. */
  reply = post (client, url, "wrong", NULL,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                "\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}",
                &status, NULL);
  g_assert_cmpuint (status, ==, 401);
  g_clear_pointer (&reply, json_object_unref);

  reply = post (client, url, token, NULL,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                "\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}",
                &status, &mcp_session);
  g_assert_cmpuint (status, ==, 200);
  g_assert_nonnull (mcp_session);
  g_clear_pointer (&reply, json_object_unref);
  reply = post (client, url, token, mcp_session,
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
                &status, NULL);
  g_clear_pointer (&reply, json_object_unref);

  /* An address the window's own page is not at, to tell the pages apart. */
  start_url = g_strconcat (sight_window_get_demo_url (window), "?live=1", NULL);
  body = g_strdup_printf ("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                          "{\"name\":\"create_session\",\"arguments\":{\"startUrl\":\"%s\"}}}",
                          start_url);
  reply = post (client, url, token, mcp_session, body, &status, NULL);
  g_assert_cmpuint (status, ==, 200);
  g_assert_nonnull (reply);
  {
    JsonObject *result = json_object_get_object_member (reply, "result");
    JsonObject *structured;

    g_assert_nonnull (result);
    g_assert_false (json_object_get_boolean_member_with_default (result, "isError", FALSE));
    structured = json_object_get_object_member (result, "structuredContent");
    sess_id = g_strdup (json_object_get_string_member_with_default (
                          structured, "sessionId",
                          json_object_get_string_member_with_default (structured, "id", "")));
  }
  g_assert_true (g_str_has_prefix (sess_id, "sess_"));
  g_clear_pointer (&reply, json_object_unref);

  /* It shows up in the window's list... */
  spin_until (list_has_session, dropdown);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (dropdown)));
  {
    const char *label = gtk_string_list_get_string (
                          GTK_STRING_LIST (gtk_drop_down_get_model (dropdown)), 1);

    g_assert_true (g_str_has_prefix (label, sess_id));
  }
  /* ...and choosing it shows its page, at its URL, in the window. */
  gtk_drop_down_set_selected (dropdown, 1);
  shown = sight_live_sessions_get_shown (live);
  g_assert_nonnull (shown);
  g_assert_cmpstr (sight_session_get_id (shown), ==, sess_id);
  view = sight_web_page_get_web_view (sight_session_get_page (shown));
  g_assert_true (gtk_widget_get_root (GTK_WIDGET (view)) == GTK_ROOT (window));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (view)));
  g_assert_false (gtk_widget_get_visible (
                    GTK_WIDGET (sight_web_page_get_web_view (sight_window_get_page (window)))));
  g_assert_cmpstr (webkit_web_view_get_uri (view), ==, start_url);
  /* The inspector follows the session's page. */
  inspector_url = start_url;
  spin_until (inspector_shows, sight_window_get_inspector (window));

  /* stop_session: it disappears, and the window says so and shows its own page. */
  g_free (body);
  body = g_strdup_printf ("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":"
                          "{\"name\":\"stop_session\",\"arguments\":{\"sessionId\":\"%s\"}}}",
                          sess_id);
  reply = post (client, url, token, mcp_session, body, &status, NULL);
  g_assert_cmpuint (status, ==, 200);
  g_clear_pointer (&reply, json_object_unref);
  spin_until (list_is_empty, dropdown);
  g_assert_null (sight_live_sessions_get_shown (live));
  g_assert_nonnull (sight_live_sessions_get_last_notice (live));
  g_assert_nonnull (strstr (sight_live_sessions_get_last_notice (live), sess_id));
  g_assert_true (gtk_widget_get_visible (
                   GTK_WIDGET (sight_web_page_get_web_view (sight_window_get_page (window)))));
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (dropdown)));

  /* Toggle off: the port refuses connections. */
  gtk_switch_set_active (sight_live_sessions_get_switch (live), FALSE);
  g_assert_false (sight_live_sessions_get_serving (live));
  g_assert_null (sight_live_sessions_get_url (live));
  socket_client = g_socket_client_new ();
  g_socket_client_set_timeout (socket_client, 5);
  connection = g_socket_client_connect_to_host (socket_client, "127.0.0.1", port, NULL, &error);
  g_assert_null (connection);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED);

  gtk_window_destroy (GTK_WINDOW (window));
  g_object_unref (window);
  g_unlink (token_path);
  {
    g_autofree char *dir = g_path_get_dirname (token_path);

    g_rmdir (dir);
    g_rmdir (config);
    g_free (test_config);
  }
}

int
main (int    argc,
      char **argv)
{
  /* Before anything reads it (GLib caches the folder): the test's token
   * lives in a folder of its own, never in the user's. */
  test_config = g_dir_make_tmp ("sight-live-XXXXXX", NULL);
  g_setenv ("XDG_CONFIG_HOME", test_config, TRUE);
  g_unsetenv ("SIGHTLINE_MODEL");
  g_unsetenv ("OPENAI_API_KEY");
  g_unsetenv ("ANTHROPIC_API_KEY");
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();

  g_test_add_func ("/live-sessions/serve-and-watch", test_live_sessions);
  g_timeout_add (100, wake_cb, NULL);
  return g_test_run ();
}
