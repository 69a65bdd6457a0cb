/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-live-sessions"

#include "config.h"

#include <adwaita.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <libsoup/soup.h>
#include <signal.h>
#include <string.h>
#include <webkit/webkit.h>

#include "app-test-common.h"
#include "test-files.h"
#include "sight-mcp-http.h"
#include "sight-scripted-model.h"

#include "sight-application.h"
#include "sight-window.h"

/* The window's in-app MCP server: a real SoupSession client over loopback
 * opens a session on the demo site; it appears in the window's list, shows
 * its page when chosen, goes when stopped; turning the server off closes
 * the port. While a session is shown, the steps the client runs on it move
 * the composer's meters and land in its timeline, and the inspector follows
 * each action (the scripted model stands in for the model). */

#define DEADLINE_US (60 * G_USEC_PER_SEC)

static char *test_config;
static char *test_project;
static SightScriptedModel *model;

static SoupMessage *
new_post (const char *url,
          const char *token,
          const char *session_id,
          const char *body)
{
  SoupMessage *msg = soup_message_new ("POST", url);
  SoupMessageHeaders *headers = soup_message_get_request_headers (msg);
  g_autoptr(GBytes) request = g_bytes_new (body, strlen (body));
  g_autofree char *auth = g_strdup_printf ("Bearer %s", token);

  soup_message_headers_replace (headers, "Authorization", auth);
  soup_message_headers_replace (headers, "Accept", "application/json, text/event-stream");
  if (session_id != NULL)
    {
      soup_message_headers_replace (headers, "Mcp-Session-Id", session_id);
      soup_message_headers_replace (headers, "MCP-Protocol-Version", "2025-06-18");
    }
  soup_message_set_request_body_from_bytes (msg, "application/json", request);
  return msg;
}

/* The reply of @msg, sent with send_and_read_async, as a JSON object. */
static JsonObject *
read_reply (SoupSession  *client,
            SoupMessage  *msg,
            GAsyncResult *result,
            guint        *out_status,
            char        **out_session_id)
{
  g_autoptr(GBytes) reply = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();

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
  g_autoptr(SoupMessage) msg = new_post (url, token, session_id, body);
  g_autoptr(GAsyncResult) result = NULL;

  soup_session_send_and_read_async (client, msg, G_PRIORITY_DEFAULT, NULL,
                                    app_test_store_result_cb, &result);
  app_test_wait_result (&result, DEADLINE_US);
  return read_reply (client, msg, result, out_status, out_session_id);
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

#define INITIALIZE "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":" \
                   "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{}," \
                   "\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}"

/* A window serving MCP and a client connected to it. */
typedef struct {
  SightWindow *window;
  SightLiveSessions *live;
  SoupSession *client;
  char        *url;
  char        *token;
  char        *mcp_session;
  int          next_id;
} Fixture;

/* A client of f->url: initialize, with the user's stored token. */
static void
fixture_connect (Fixture *f)
{
  g_autoptr(JsonObject) reply = NULL;
  g_autoptr(GError) error = NULL;
  guint status = 0;

  f->client = soup_session_new_with_options ("timeout", 30, NULL);
  f->next_id = 2;
  f->token = sight_mcp_http_load_or_create_token (NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  reply = post (f->client, f->url, f->token, NULL, INITIALIZE, &status, &f->mcp_session);
  g_assert_cmpuint (status, ==, 200);
  g_assert_nonnull (f->mcp_session);
  g_clear_pointer (&reply, json_object_unref);
  reply = post (f->client, f->url, f->token, f->mcp_session,
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &status, NULL);
}

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  f->window = g_object_ref_sink (g_object_new (SIGHT_TYPE_WINDOW, NULL));
  gtk_window_present (GTK_WINDOW (f->window));
  sight_window_open_demo_site (f->window);
  spin_until (demo_ready, f->window);
  f->live = sight_window_get_live_sessions (f->window);
  g_assert_false (sight_live_sessions_get_serving (f->live));

  /* The primary menu's "Serve MCP…" opens the popover with the switch... */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.serve-mcp", NULL));
  g_assert_true (gtk_widget_get_mapped (GTK_WIDGET (sight_live_sessions_get_switch (f->live))));
  /* ...which starts the server. */
  gtk_switch_set_active (sight_live_sessions_get_switch (f->live), TRUE);
  g_assert_true (sight_live_sessions_get_serving (f->live));
  f->url = g_strdup (sight_live_sessions_get_url (f->live));
  fixture_connect (f);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  /* Off, so that the next test's window does not serve on its own (the
   * setting outlives the window). */
  gtk_switch_set_active (sight_live_sessions_get_switch (f->live), FALSE);
  gtk_window_destroy (GTK_WINDOW (f->window));
  g_object_unref (f->window);
  g_object_unref (f->client);
  g_free (f->url);
  g_free (f->token);
  g_free (f->mcp_session);
}

static char *
tools_call_body (Fixture    *f,
                 const char *tool,
                 const char *arguments)
{
  return g_strdup_printf ("{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":"
                          "{\"name\":\"%s\",\"arguments\":%s}}",
                          f->next_id++, tool, arguments);
}

/* tools/call @tool; returns the call's result. */
static JsonObject *
call_tool (Fixture    *f,
           const char *tool,
           const char *arguments)
{
  g_autofree char *body = tools_call_body (f, tool, arguments);
  g_autoptr(JsonObject) reply = NULL;
  guint status = 0;

  reply = post (f->client, f->url, f->token, f->mcp_session, body, &status, NULL);
  g_assert_cmpuint (status, ==, 200);
  g_assert_nonnull (reply);
  g_assert_true (json_object_has_member (reply, "result"));
  return json_object_ref (json_object_get_object_member (reply, "result"));
}

/* Opens a session at @start_url (NULL: none) through the client; returns
 * its id. */
static char *
create_session (Fixture    *f,
                const char *start_url)
{
  g_autofree char *arguments = start_url != NULL
                               ? g_strdup_printf ("{\"startUrl\":\"%s\"}", start_url)
                               : g_strdup ("{}");
  g_autoptr(JsonObject) result = call_tool (f, "create_session", arguments);
  JsonObject *structured;

  g_assert_false (json_object_get_boolean_member_with_default (result, "isError", FALSE));
  structured = json_object_get_object_member (result, "structuredContent");
  return g_strdup (json_object_get_string_member_with_default (
                     structured, "sessionId",
                     json_object_get_string_member_with_default (structured, "id", "")));
}

static void
test_live_sessions (Fixture       *f,
                    gconstpointer  data)
{
  const char *config = g_getenv ("XDG_CONFIG_HOME");
  g_autofree char *token_path = NULL;
  g_autofree char *token = NULL;
  g_autofree char *sess_id = NULL;
  g_autofree char *start_url = NULL;
  g_autofree char *arguments = NULL;
  g_autoptr(JsonObject) reply = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocketClient) socket_client = NULL;
  g_autoptr(GSocketConnection) connection = NULL;
  GtkDropDown *dropdown = sight_live_sessions_get_dropdown (f->live);
  SightSession *shown;
  WebKitWebView *view;
  guint status = 0, port;

  port = sight_live_sessions_get_port (f->live);
  g_assert_cmpuint (port, >, 0);
  g_assert_true (g_str_has_prefix (f->url, "http://127.0.0.1:"));
  g_assert_true (g_str_has_suffix (f->url, "/mcp"));
  /* The token lives in the user's config folder. */
  token = sight_mcp_http_load_or_create_token (NULL, &token_path, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (token_path, config));

  /* A wrong token is refused. */
  reply = post (f->client, f->url, "wrong", NULL, INITIALIZE, &status, NULL);
  g_assert_cmpuint (status, ==, 401);

  /* An address the window's own page is not at, to tell the pages apart. */
  start_url = g_strconcat (sight_window_get_demo_url (f->window), "?live=1", NULL);
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (dropdown)));
  sess_id = create_session (f, start_url);
  g_assert_true (g_str_has_prefix (sess_id, "sess_"));

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
  shown = sight_live_sessions_get_shown (f->live);
  g_assert_nonnull (shown);
  g_assert_cmpstr (sight_session_get_id (shown), ==, sess_id);
  view = sight_web_page_get_web_view (sight_session_get_page (shown));
  g_assert_true (gtk_widget_get_root (GTK_WIDGET (view)) == GTK_ROOT (f->window));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (view)));
  g_assert_false (gtk_widget_get_visible (
                    GTK_WIDGET (sight_web_page_get_web_view (sight_window_get_page (f->window)))));
  g_assert_cmpstr (webkit_web_view_get_uri (view), ==, start_url);
  /* The inspector follows the session's page. */
  inspector_url = start_url;
  spin_until (inspector_shows, sight_window_get_inspector (f->window));

  /* stop_session: it disappears, and the window says so and shows its own page. */
  g_clear_pointer (&reply, json_object_unref);
  arguments = g_strdup_printf ("{\"sessionId\":\"%s\"}", sess_id);
  reply = call_tool (f, "stop_session", arguments);
  spin_until (list_is_empty, dropdown);
  g_assert_null (sight_live_sessions_get_shown (f->live));
  g_assert_nonnull (sight_live_sessions_get_last_notice (f->live));
  g_assert_nonnull (strstr (sight_live_sessions_get_last_notice (f->live), sess_id));
  g_assert_true (gtk_widget_get_visible (
                   GTK_WIDGET (sight_web_page_get_web_view (sight_window_get_page (f->window)))));
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (dropdown)));

  /* Toggle off: the port refuses connections. */
  gtk_switch_set_active (sight_live_sessions_get_switch (f->live), FALSE);
  g_assert_false (sight_live_sessions_get_serving (f->live));
  g_assert_null (sight_live_sessions_get_url (f->live));
  socket_client = g_socket_client_new ();
  g_socket_client_set_timeout (socket_client, 5);
  connection = g_socket_client_connect_to_host (socket_client, "127.0.0.1", port, NULL, &error);
  g_assert_null (connection);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED);
}

/* The ref of the first @role "@name" in the observation's text, e.g. e4. */
static char *
ref_in_text (SightObservation *observation,
             const char       *role,
             const char       *name)
{
  g_autofree char *pattern = g_strdup_printf ("^\\s*%s \"%s\"[^\\n]*#(e\\d+)$", role, name);
  g_autoptr(GRegex) regex = g_regex_new (pattern, G_REGEX_MULTILINE, 0, NULL);
  g_autoptr(GMatchInfo) match = NULL;

  if (!g_regex_match (regex, sight_observation_get_text (observation), 0, &match))
    return NULL;
  return g_match_info_fetch (match, 1);
}

/* Held, so that no later observation can take its address. */
static SightObservation *before_step;

/* What the window showed while a step ran: the agent runs a step inside
 * nested iterations of the main context, so a timeout samples it there. */
typedef struct {
  SightComposer  *composer;
  SightInspector *inspector;
  guint           timeline;         /* rows before the step */
  GAsyncResult  **result;
  guint           max_actions;
  guint           max_calls;
  gint64          max_elapsed_ms;
  gboolean        inspector_refreshed;
  gboolean        inspector_shows_email;
} Watch;

static gboolean
sample_cb (gpointer data)
{
  Watch *watch = data;
  SightObservation *observation = sight_inspector_get_observation (watch->inspector);
  guint calls = 0, actions = 0;
  gint64 elapsed_ms = 0;

  /* Only while the step is under way: no row for it yet. */
  if (*watch->result != NULL ||
      sight_composer_get_n_timeline (watch->composer) != watch->timeline)
    return G_SOURCE_CONTINUE;
  sight_composer_get_meters (watch->composer, &calls, &actions, &elapsed_ms);
  watch->max_actions = MAX (watch->max_actions, actions);
  watch->max_calls = MAX (watch->max_calls, calls);
  watch->max_elapsed_ms = MAX (watch->max_elapsed_ms, elapsed_ms);
  if (observation != NULL && observation != before_step)
    {
      watch->inspector_refreshed = TRUE;
      if (strstr (sight_observation_get_text (observation), "live@example.test") != NULL)
        watch->inspector_shows_email = TRUE;
    }
  return G_SOURCE_CONTINUE;
}

/* The client's tools/call has its answer; @data: the GAsyncResult ** it
 * lands in. */
static gboolean
result_arrived (gpointer data)
{
  return *(GAsyncResult **) data != NULL;
}

static void
test_follow_steps (Fixture       *f,
                   gconstpointer  data)
{
  SightComposer *composer = sight_window_get_composer (f->window);
  SightInspector *inspector = sight_window_get_inspector (f->window);
  GtkDropDown *dropdown = sight_live_sessions_get_dropdown (f->live);
  g_autofree char *login_url = NULL;
  g_autofree char *sess_id = NULL;
  g_autofree char *email = NULL;
  g_autofree char *arguments = NULL;
  g_autofree char *body = NULL;
  g_autoptr(SoupMessage) msg = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(JsonObject) reply = NULL;
  g_autoptr(JsonObject) failed = NULL;
  Watch watch = { composer, inspector, 0, &result };
  guint timeline, calls = 0, actions = 0, status = 0, sample;

  login_url = g_strconcat (sight_window_get_demo_url (f->window), "login", NULL);
  sess_id = create_session (f, login_url);
  spin_until (list_has_session, dropdown);
  gtk_drop_down_set_selected (dropdown, 1);
  inspector_url = login_url;
  spin_until (inspector_shows, inspector);
  email = ref_in_text (sight_inspector_get_observation (inspector), "textbox", "Email");
  g_assert_nonnull (email);
  timeline = watch.timeline = sight_composer_get_n_timeline (composer);

  /* act: the model fills the Email field, then takes its time to say done. */
  sight_scripted_model_push_printf (model, "{\"tool_calls\": [{\"name\": \"fill\", \"arguments\": "
                                    "{\"ref\": \"%s\", \"value\": \"live@example.test\"}}]}",
                                    email);
  sight_scripted_model_push (model, "{\"delay_ms\": 1500, \"tool_calls\": [{\"name\": \"done\", "
                             "\"arguments\": {\"verdict\": \"pass\", "
                             "\"summary\": \"The email is typed.\"}}]}");
  g_set_object (&before_step, sight_inspector_get_observation (inspector));
  arguments = g_strdup_printf ("{\"sessionId\":\"%s\",\"instruction\":\"type the email\","
                               "\"maxSteps\":5}", sess_id);
  body = tools_call_body (f, "act", arguments);
  msg = new_post (f->url, f->token, f->mcp_session, body);
  soup_session_send_and_read_async (f->client, msg, G_PRIORITY_DEFAULT, NULL,
                                    app_test_store_result_cb, &result);

  sample = g_timeout_add (50, sample_cb, &watch);
  spin_until (result_arrived, &result);
  g_source_remove (sample);
  /* While it ran the meters moved, with no row for it yet, and the
   * inspector showed the page after the action (filling a field loads
   * nothing). */
  g_assert_cmpuint (watch.max_actions, ==, 1);
  g_assert_cmpuint (watch.max_calls, >=, 1);
  g_assert_cmpint (watch.max_elapsed_ms, >=, 1000);
  g_assert_true (watch.inspector_refreshed);
  g_assert_true (watch.inspector_shows_email);
  g_clear_object (&before_step);
  reply = read_reply (f->client, msg, result, &status, NULL);
  g_assert_cmpuint (status, ==, 200);
  g_assert_nonnull (reply);
  {
    JsonObject *call_result = json_object_get_object_member (reply, "result");

    g_assert_false (json_object_get_boolean_member_with_default (call_result, "isError", FALSE));
    g_assert_cmpstr (json_object_get_string_member (
                       json_object_get_object_member (call_result, "structuredContent"),
                       "verdict"), ==, "pass");
  }
  /* One row, passed, with the step's counts on the meters. */
  g_assert_cmpuint (sight_composer_get_n_timeline (composer), ==, timeline + 1);
  g_assert_cmpstr (sight_composer_get_verdict (composer), ==, "pass");
  sight_composer_get_meters (composer, &calls, &actions, NULL);
  g_assert_cmpuint (calls, ==, 2);
  g_assert_cmpuint (actions, ==, 1);

  /* A failing assert lands as a failed row. */
  sight_scripted_model_push (model, "{\"json\": {\"verdict\": false, \"explanation\": "
                             "\"No trial badge is shown.\", \"injection\": null}}");
  g_free (arguments);
  arguments = g_strdup_printf ("{\"sessionId\":\"%s\",\"assertion\":\"a trial badge is shown\","
                               "\"screenshot\":false}", sess_id);
  failed = call_tool (f, "assert", arguments);
  g_assert_true (json_object_get_boolean_member_with_default (failed, "isError", FALSE));
  g_assert_cmpuint (sight_composer_get_n_timeline (composer), ==, timeline + 2);
  g_assert_cmpstr (sight_composer_get_verdict (composer), ==, "fail");
  sight_composer_get_meters (composer, &calls, &actions, NULL);
  g_assert_cmpuint (calls, ==, 1);
  g_assert_cmpuint (actions, ==, 0);
  g_assert_cmpuint (sight_scripted_model_get_unexpected (model), ==, 0);

  /* Back on the window's own page the composer follows nothing. */
  gtk_drop_down_set_selected (dropdown, 0);
  sight_scripted_model_push (model, "{\"json\": {\"verdict\": true, \"explanation\": "
                             "\"The form is there.\", \"injection\": null}}");
  g_free (arguments);
  arguments = g_strdup_printf ("{\"sessionId\":\"%s\",\"assertion\":\"a form is shown\"}",
                               sess_id);
  g_clear_pointer (&failed, json_object_unref);
  failed = call_tool (f, "assert", arguments);
  g_assert_false (json_object_get_boolean_member_with_default (failed, "isError", FALSE));
  g_assert_cmpuint (sight_scripted_model_get_remaining (model), ==, 0);
  g_assert_cmpuint (sight_composer_get_n_timeline (composer), ==, timeline + 2);

  /* Shown again, a task on it is one more row, when it ends. */
  gtk_drop_down_set_selected (dropdown, 1);
  sight_scripted_model_push (model, "{\"tool_calls\": [{\"name\": \"done\", \"arguments\": "
                             "{\"verdict\": \"pass\", \"summary\": \"The form asks for an "
                             "email.\"}}]}");
  g_free (arguments);
  arguments = g_strdup_printf ("{\"sessionId\":\"%s\",\"goal\":\"say what the form asks\","
                               "\"waitSeconds\":30}", sess_id);
  g_clear_pointer (&failed, json_object_unref);
  failed = call_tool (f, "run_task", arguments);
  g_assert_false (json_object_get_boolean_member_with_default (failed, "isError", FALSE));
  g_assert_cmpuint (sight_composer_get_n_timeline (composer), ==, timeline + 3);
  g_assert_cmpstr (sight_composer_get_verdict (composer), ==, "pass");
  sight_composer_get_meters (composer, &calls, NULL, NULL);
  g_assert_cmpuint (calls, ==, 1);

  g_free (arguments);
  arguments = g_strdup_printf ("{\"sessionId\":\"%s\"}", sess_id);
  g_clear_pointer (&failed, json_object_unref);
  failed = call_tool (f, "stop_session", arguments);
  spin_until (list_is_empty, dropdown);
}

/* Stop in the window stops a client's step: the client gets an error that
 * says so, long before the model would have answered, and the timeline a
 * stopped row. */
typedef struct {
  SightWindow   *window;
  GAsyncResult **result;
  gboolean       stopped;
} StopWatch;

static gboolean
stop_when_running_cb (gpointer data)
{
  StopWatch *watch = data;
  gint64 elapsed_ms = 0;

  if (watch->stopped || *watch->result != NULL)
    return G_SOURCE_CONTINUE;
  sight_composer_get_meters (sight_window_get_composer (watch->window), NULL, NULL, &elapsed_ms);
  if (elapsed_ms >= 500)
    {
      g_assert_true (gtk_widget_activate_action (GTK_WIDGET (watch->window), "win.stop", NULL));
      watch->stopped = TRUE;
    }
  return G_SOURCE_CONTINUE;
}

static gboolean
composer_idle (gpointer data)
{
  return !sight_composer_get_running (data);
}

static void
test_stop_client_step (Fixture       *f,
                       gconstpointer  data)
{
  SightComposer *composer = sight_window_get_composer (f->window);
  GtkDropDown *dropdown = sight_live_sessions_get_dropdown (f->live);
  g_autofree char *login_url = NULL;
  g_autofree char *sess_id = NULL;
  g_autofree char *arguments = NULL;
  g_autofree char *body = NULL;
  g_autofree char *reply_text = NULL;
  g_autoptr(SoupMessage) msg = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(JsonObject) reply = NULL;
  g_autoptr(JsonObject) again = NULL;
  StopWatch watch = { f->window, &result, FALSE };
  guint timeline, status = 0, sample;
  gint64 start;
  JsonObject *call_result;

  login_url = g_strconcat (sight_window_get_demo_url (f->window), "login", NULL);
  sess_id = create_session (f, login_url);
  spin_until (list_has_session, dropdown);
  gtk_drop_down_set_selected (dropdown, 1);
  timeline = sight_composer_get_n_timeline (composer);

  /* The model would take 20 s to answer. */
  sight_scripted_model_push (model, "{\"delay_ms\": 20000, \"json\": {\"verdict\": true, "
                             "\"explanation\": \"Too late.\", \"injection\": null}}");
  arguments = g_strdup_printf ("{\"sessionId\":\"%s\",\"assertion\":\"a form is shown\","
                               "\"screenshot\":false}", sess_id);
  body = tools_call_body (f, "assert", arguments);
  msg = new_post (f->url, f->token, f->mcp_session, body);
  start = g_get_monotonic_time ();
  soup_session_send_and_read_async (f->client, msg, G_PRIORITY_DEFAULT, NULL,
                                    app_test_store_result_cb, &result);
  sample = g_timeout_add (50, stop_when_running_cb, &watch);
  spin_until (result_arrived, &result);
  g_source_remove (sample);
  g_assert_true (watch.stopped);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 10 * G_USEC_PER_SEC);

  reply = read_reply (f->client, msg, result, &status, NULL);
  g_assert_cmpuint (status, ==, 200);
  g_assert_nonnull (reply);
  call_result = json_object_get_object_member (reply, "result");
  g_assert_true (json_object_get_boolean_member_with_default (call_result, "isError", FALSE));
  reply_text = json_to_string (json_object_get_member (reply, "result"), FALSE);
  g_assert_nonnull (strstr (reply_text, "stopped in the Sightline window"));
  /* One row for it, failed, and the meters at rest. */
  g_assert_cmpuint (sight_composer_get_n_timeline (composer), ==, timeline + 1);
  g_assert_cmpstr (sight_composer_get_verdict (composer), ==, "fail");

  /* The session goes on: its next step runs and passes. */
  sight_scripted_model_push (model, "{\"json\": {\"verdict\": true, \"explanation\": "
                             "\"The form is there.\", \"injection\": null}}");
  again = call_tool (f, "assert", arguments);
  g_assert_false (json_object_get_boolean_member_with_default (again, "isError", FALSE));
  g_assert_cmpuint (sight_composer_get_n_timeline (composer), ==, timeline + 2);
  g_assert_cmpstr (sight_composer_get_verdict (composer), ==, "pass");

  /* A step of the window's own, while the session is shown, runs on the
   * window's page, which comes back into view first. */
  g_assert_cmpuint (gtk_drop_down_get_selected (dropdown), ==, 1);
  g_assert_true (sight_composer_run_step (composer, "do", "expect text \"14-day trial\"", NULL));
  g_assert_cmpuint (gtk_drop_down_get_selected (dropdown), ==, 0);
  spin_until (composer_idle, composer);
  g_assert_cmpuint (sight_composer_get_n_timeline (composer), ==, timeline + 3);
  g_assert_cmpstr (sight_composer_get_verdict (composer), ==, "pass");

  g_free (arguments);
  arguments = g_strdup_printf ("{\"sessionId\":\"%s\"}", sess_id);
  g_clear_pointer (&again, json_object_unref);
  again = call_tool (f, "stop_session", arguments);
  spin_until (list_is_empty, dropdown);
}

/* Runs `sightline serve --port 0` and reads what it prints first. */
static GSubprocess *
spawn_serve (GDataInputStream **out_stdout)
{
  g_autoptr(GError) error = NULL;
  GSubprocess *serve;

  serve = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                            g_getenv ("SIGHTLINE_BIN"), "serve", "--port", "0", NULL);
  g_assert_no_error (error);
  *out_stdout = g_data_input_stream_new (g_subprocess_get_stdout_pipe (serve));
  return serve;
}

/* The next line of @out, iterating the main context meanwhile (the app in
 * this process answers the command's D-Bus calls). */
static char *
read_line (GDataInputStream *out)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  char *line;

  g_data_input_stream_read_line_async (out, G_PRIORITY_DEFAULT, NULL, app_test_store_result_cb,
                                       &result);
  app_test_wait_result (&result, DEADLINE_US);
  line = g_data_input_stream_read_line_finish_utf8 (out, result, NULL, &error);
  g_assert_no_error (error);
  return line;
}

static char *
endpoint_of (const char *line)
{
  g_assert_nonnull (line);
  g_assert_true (g_str_has_prefix (line, "MCP endpoint: http://127.0.0.1:"));
  return g_strdup (line + strlen ("MCP endpoint: "));
}

static void
wait_exit (GSubprocess *process)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;

  g_subprocess_wait_async (process, NULL, app_test_store_result_cb, &result);
  app_test_wait_result (&result, DEADLINE_US);
  g_assert_true (g_subprocess_wait_finish (process, result, &error));
  g_assert_no_error (error);
}

/* Under a private session bus: with no app on it `sightline serve` serves
 * headless; with the app registered it asks the app, whose window then
 * serves, prints that endpoint and exits; a real HTTP client's session then
 * shows in the window. */
static void
test_serve_attaches (void)
{
  g_autoptr(GSubprocess) serve = NULL;
  g_autoptr(GDataInputStream) out = NULL;
  g_autoptr(SightApplication) app = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *line = NULL;
  g_autofree char *sess_id = NULL;
  g_autofree char *token_path = NULL;
  g_autofree char *token_line = NULL;
  g_autofree char *token = NULL;
  Fixture fixture = { NULL }, *f = &fixture;
  GtkDropDown *dropdown;

  /* No app: the command's own server, until it is stopped. */
  serve = spawn_serve (&out);
  line = read_line (out);
  f->url = endpoint_of (line);
  fixture_connect (f);
  g_subprocess_send_signal (serve, SIGTERM);
  wait_exit (serve);
  g_assert_true (g_subprocess_get_if_exited (serve));
  g_assert_cmpint (g_subprocess_get_exit_status (serve), ==, 0);
  g_clear_pointer (&f->url, g_free);
  g_clear_pointer (&f->token, g_free);
  g_clear_pointer (&f->mcp_session, g_free);
  g_clear_object (&f->client);
  g_clear_object (&serve);
  g_clear_object (&out);
  g_clear_pointer (&line, g_free);

  /* The app, the primary instance on the bus, with no window yet. */
  app = sight_application_new ();
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);
  g_assert_false (g_application_get_is_remote (G_APPLICATION (app)));
  g_assert_null (gtk_application_get_active_window (GTK_APPLICATION (app)));

  serve = spawn_serve (&out);
  line = read_line (out);
  f->url = endpoint_of (line);
  token_line = read_line (out);
  wait_exit (serve);
  g_assert_cmpint (g_subprocess_get_exit_status (serve), ==, 0);
  token = sight_mcp_http_load_or_create_token (NULL, &token_path, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (token_line, token_path));
  /* The token itself is never printed. */
  g_assert_null (strstr (token_line, token));

  /* The app's window serves at that endpoint... */
  f->window = SIGHT_WINDOW (gtk_application_get_active_window (GTK_APPLICATION (app)));
  g_assert_nonnull (f->window);
  g_object_ref (f->window);
  f->live = sight_window_get_live_sessions (f->window);
  g_assert_true (sight_live_sessions_get_serving (f->live));
  g_assert_cmpstr (sight_live_sessions_get_url (f->live), ==, f->url);
  /* ...and a client's session shows there. */
  fixture_connect (f);
  sess_id = create_session (f, NULL);
  g_assert_true (g_str_has_prefix (sess_id, "sess_"));
  dropdown = sight_live_sessions_get_dropdown (f->live);
  spin_until (list_has_session, dropdown);
  g_assert_true (g_str_has_prefix (gtk_string_list_get_string (
                                     GTK_STRING_LIST (gtk_drop_down_get_model (dropdown)), 1),
                                   sess_id));

  /* Asked again, the window keeps its server and endpoint. */
  g_clear_object (&serve);
  g_clear_object (&out);
  g_clear_pointer (&line, g_free);
  serve = spawn_serve (&out);
  line = read_line (out);
  g_assert_cmpstr (line + strlen ("MCP endpoint: "), ==, f->url);
  wait_exit (serve);
  g_assert_cmpint (g_subprocess_get_exit_status (serve), ==, 0);

  fixture_tear_down (f, NULL);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *project = NULL;
  g_autofree char *project_path = NULL;
  GTestDBus *bus;
  g_autofree char *display = NULL;
  int status;

  /* A private session bus, for the app and `sightline serve` to meet on. */
  display = g_strdup (g_getenv ("DISPLAY"));
  bus = g_test_dbus_new (G_TEST_DBUS_NONE);
  g_test_dbus_up (bus);
  /* GTestDBus unsets DISPLAY (against autolaunching); the windows need it. */
  if (display != NULL)
    g_setenv ("DISPLAY", display, TRUE);
  /* Before anything reads it (GLib caches the folder): the test's token
   * lives in a folder of its own, never in the user's. */
  test_config = g_dir_make_tmp ("sight-live-XXXXXX", NULL);
  g_setenv ("XDG_CONFIG_HOME", test_config, TRUE);
  app_test_init (&argc, &argv);

  /* Sessions' agents find the project in the current folder: its default
   * agent is the scripted model. */
  model = sight_scripted_model_new (0, &error);
  g_assert_no_error (error);
  test_project = g_dir_make_tmp ("sight-live-project-XXXXXX", NULL);
  g_setenv ("SIGHTLINE_DATA_DIR", test_project, TRUE);
  project = g_strdup_printf ("{\"agents\": {\"default\": {\"model\": \"openai:gpt-4.1\","
                             " \"baseUrl\": \"%s\"}}}",
                             sight_scripted_model_get_openai_base_url (model));
  project_path = g_build_filename (test_project, "sightline.json", NULL);
  g_file_set_contents (project_path, project, -1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_chdir (test_project), ==, 0);

  g_test_add ("/live-sessions/serve-and-watch", Fixture, NULL,
              fixture_set_up, test_live_sessions, fixture_tear_down);
  g_test_add ("/live-sessions/follow-steps", Fixture, NULL,
              fixture_set_up, test_follow_steps, fixture_tear_down);
  g_test_add ("/live-sessions/stop-client-step", Fixture, NULL,
              fixture_set_up, test_stop_client_step, fixture_tear_down);
  g_test_add_func ("/live-sessions/serve-attaches", test_serve_attaches);
  status = g_test_run ();

  g_clear_object (&model);
  /* Stopped, not down (nor unreferenced, which takes it down): down waits
   * for the last reference to the connection, which the app's web views
   * may still hold. */
  g_test_dbus_stop (bus);
  g_chdir ("/");
  test_remove_tree (test_project);
  test_remove_tree (test_config);
  g_free (test_project);
  g_free (test_config);
  return status;
}
