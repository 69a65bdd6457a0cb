/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-mcp-capacity"

#include "config.h"

#include "mcp-test-common.h"
#include "sight-demo-site.h"
#include "sight-session.h"
#include "web-process-common.h"

/* Browsers held and released through the MCP tools (issue #26, items 4
 * and 5): a stopped session lets its web process go; live sessions and
 * tool calls have limits, past which a call is answered capacity_exceeded
 * with a retry hint, or waits as waitForCapacityMs / queueForCapacity ask. */

static SightDemoSite *site;

static gboolean
no_more_than_cb (gpointer data)
{
  return count_web_processes () <= GPOINTER_TO_UINT (data);
}

/* Iterates the main context until @done or @seconds passed. */
static gboolean
wait_for (gboolean (*done) (gpointer), gpointer data, guint seconds)
{
  gint64 deadline = g_get_monotonic_time () + seconds * G_USEC_PER_SEC;

  while (!done (data) && g_get_monotonic_time () < deadline)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (20000);
  return done (data);
}

static void
test_stopped_sessions (void)
{
  const char *url = sight_demo_site_get_url (site);
  guint before = count_web_processes ();
  guint peak = 0;
  gint64 t0;

  for (guint i = 0; i < 30; i++)
    {
      g_autoptr(JsonObject) created = call ("create_session", "{\"startUrl\":\"%slogin\"}", url);
      g_autoptr(JsonObject) stopped = NULL;
      const char *id;

      g_assert_false (is_error (created));
      id = json_object_get_string_member (structured (created), "id");
      peak = MAX (peak, count_web_processes ());
      stopped = call ("stop_session", "{\"sessionId\":\"%s\"}", id);
      g_assert_true (json_object_get_boolean_member (structured (stopped), "closed"));
    }
  t0 = g_get_monotonic_time ();
  wait_for (no_more_than_cb, GUINT_TO_POINTER (before), 20);
  g_test_message ("30 sessions created and stopped: web processes before %u, at most %u while "
                  "one was live, %u left %.1f s after the last stop",
                  before, peak, count_web_processes (), (g_get_monotonic_time () - t0) / 1e6);
  g_assert_cmpuint (count_web_processes (), <=, before);
  g_assert_cmpuint (sight_session_registry_count_live (sight_session_registry_get_default ()),
                    ==, 0);

  /* The ended sessions are still answered for. */
  {
    g_autoptr(JsonObject) listed = call ("list_sessions", "{}");
    JsonArray *sessions = json_object_get_array_member (structured (listed), "sessions");
    JsonObject *newest = json_array_get_object_element (sessions, 0);
    g_autoptr(JsonObject) again = call ("stop_session", "{\"sessionId\":\"%s\"}",
                                        json_object_get_string_member (newest, "id"));

    g_assert_cmpuint (json_array_get_length (sessions), >=, 30);
    g_assert_cmpstr (json_object_get_string_member (newest, "status"), ==, "closed");
    g_assert_true (json_object_get_boolean_member (structured (again), "deleted"));
    g_assert_false (json_object_get_boolean_member (structured (again), "closed"));
  }
}

/* A session left idle is stopped the same way: its web process goes. */
static gboolean
session_ended_cb (gpointer data)
{
  SightSession *ended = sight_session_registry_lookup (sight_session_registry_get_default (),
                                                       data);

  return ended != NULL && sight_session_get_status (ended) == SIGHT_SESSION_CLOSED &&
         count_web_processes () == 0;
}

static void
test_idle_session (void)
{
  const char *url = sight_demo_site_get_url (site);
  g_autoptr(JsonObject) created = call ("create_session",
                                        "{\"startUrl\":\"%slogin\",\"idleTimeoutMs\":10000}", url);
  g_autofree char *id = NULL;
  g_autoptr(JsonObject) read = NULL;
  gint64 t0 = g_get_monotonic_time ();

  g_assert_false (is_error (created));
  id = g_strdup (json_object_get_string_member (structured (created), "id"));
  g_assert_cmpuint (count_web_processes (), >=, 1);
  g_assert_true (wait_for (session_ended_cb, id, 30));
  g_test_message ("idle session ended after %.1f s with no web process left",
                  (g_get_monotonic_time () - t0) / 1e6);
  read = call ("get_session", "{\"sessionId\":\"%s\"}", id);
  g_assert_cmpstr (json_object_get_string_member (structured (read), "endReason"), ==, "idle");
}

/* Many calls at once on the one MCP session. */
typedef struct {
  Exchange *exchanges;
  guint     n;
} Batch;

static void
batch_start (Batch      *batch,
             guint       n,
             const char *name,
             const char *arguments)
{
  batch->n = n;
  batch->exchanges = g_new0 (Exchange, n);
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *request =
        g_strdup_printf ("{\"jsonrpc\":\"2.0\",\"id\":%u,\"method\":\"tools/call\","
                         "\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
                         100 + i, name, arguments);

      sight_mcp_session_handle_text_async (session, request, -1, NULL, NULL, done_cb,
                                           &batch->exchanges[i]);
    }
}

static gboolean
batch_done_cb (gpointer data)
{
  Batch *batch = data;

  for (guint i = 0; i < batch->n; i++)
    if (!batch->exchanges[i].done)
      return FALSE;
  return TRUE;
}

static JsonObject *
batch_result (Batch *batch,
              guint  i)
{
  return json_object_get_object_member (json_node_get_object (batch->exchanges[i].answer),
                                        "result");
}

static void
batch_clear (Batch *batch)
{
  for (guint i = 0; i < batch->n; i++)
    g_clear_pointer (&batch->exchanges[i].answer, json_node_unref);
  g_free (batch->exchanges);
}

static void
stop_all (void)
{
  g_autoptr(GPtrArray) all = sight_session_registry_list (sight_session_registry_get_default (),
                                                          G_MAXUINT);

  for (guint i = 0; i < all->len; i++)
    sight_session_stop (g_ptr_array_index (all, i), "stopped");
}

static gboolean
stop_one_cb (gpointer data)
{
  g_autoptr(GPtrArray) all = sight_session_registry_list (sight_session_registry_get_default (),
                                                          G_MAXUINT);

  for (guint i = 0; i < all->len; i++)
    if (sight_session_stop (g_ptr_array_index (all, i), "stopped"))
      break;
  return G_SOURCE_REMOVE;
}

#define LIMIT 3

static void
test_limits (void)
{
  SightSessionRegistry *registry = sight_session_registry_get_default ();
  Batch batch = { 0 };
  guint created = 0, refused = 0;
  gint64 t0;

  sight_session_registry_set_max_live (registry, LIMIT);
  /* The limit of calls out of the way first. */
  sight_mcp_server_set_max_calls (server, 64);

  /* 40 create_session at once against a limit of 3 sessions. */
  batch_start (&batch, 40, "create_session", "{}");
  g_assert_true (wait_for (batch_done_cb, &batch, 60));
  for (guint i = 0; i < batch.n; i++)
    {
      JsonObject *result = batch_result (&batch, i);

      if (!is_error (result))
        created++;
      else
        {
          JsonObject *details = json_object_get_object_member (
            json_object_get_object_member (structured (result), "error"), "details");

          g_assert_cmpstr (error_code (result), ==, "capacity_exceeded");
          g_assert_true (g_str_has_prefix (text_of (result), "[capacity_exceeded] "));
          g_assert_cmpint (json_object_get_int_member (details, "retryAfterMs"), >, 0);
          refused++;
        }
    }
  g_test_message ("40 create_session against a limit of %d: %u live, %u capacity_exceeded",
                  LIMIT, created, refused);
  g_assert_cmpuint (created, ==, LIMIT);
  g_assert_cmpuint (refused, ==, 40 - LIMIT);
  g_assert_cmpuint (sight_session_registry_count_live (registry), ==, LIMIT);
  batch_clear (&batch);

  /* waitForCapacityMs: none ends, so it fails after its wait… */
  t0 = g_get_monotonic_time ();
  {
    g_autoptr(JsonObject) result = call ("create_session", "{\"waitForCapacityMs\":1500}");

    g_assert_true (is_error (result));
    g_assert_cmpstr (error_code (result), ==, "capacity_exceeded");
    g_assert_cmpint (g_get_monotonic_time () - t0, >=, 1400 * 1000);
  }
  /* …and gets the session that ends while it waits. */
  g_timeout_add (800, stop_one_cb, NULL);
  {
    g_autoptr(JsonObject) result = call ("create_session", "{\"waitForCapacityMs\":20000}");

    g_assert_false (is_error (result));
  }
  /* So does a queued one. */
  g_timeout_add (800, stop_one_cb, NULL);
  {
    g_autoptr(JsonObject) result = call ("create_session",
                                         "{\"queueForCapacity\":{\"maxWaitSeconds\":30}}");

    g_assert_false (is_error (result));
  }
  g_assert_cmpuint (sight_session_registry_count_live (registry), ==, LIMIT);

  /* 40 tool calls at once against a limit of 5 calls: the 5 that run wait
   * for a session; the 35 others are told at once to come back. */
  sight_mcp_server_set_max_calls (server, 5);
  t0 = g_get_monotonic_time ();
  batch_start (&batch, 40, "create_session", "{\"waitForCapacityMs\":3000}");
  {
    guint answered_early = 0;

    while (g_main_context_iteration (NULL, FALSE))
      ;
    for (guint i = 0; i < batch.n; i++)
      if (batch.exchanges[i].done)
        answered_early++;
    g_assert_cmpuint (answered_early, ==, 35);
  }
  {
    /* Reading the sessions is never refused as busy. */
    g_autoptr(JsonObject) listed = call ("list_sessions", "{}");

    g_assert_false (is_error (listed));
  }
  g_assert_true (wait_for (batch_done_cb, &batch, 60));
  created = refused = 0;
  for (guint i = 0; i < batch.n; i++)
    {
      JsonObject *result = batch_result (&batch, i);
      JsonObject *details = json_object_get_object_member (
        json_object_get_object_member (structured (result), "error"), "details");

      g_assert_true (is_error (result));
      g_assert_cmpstr (error_code (result), ==, "capacity_exceeded");
      if (json_object_has_member (details, "limit"))
        {
          g_assert_cmpint (json_object_get_int_member (details, "limit"), ==, 5);
          refused++;
        }
      else
        created++;   /* waited its 3 s for a session */
    }
  g_test_message ("40 calls against a limit of 5 calls: %u refused at once, %u waited 3 s",
                  refused, created);
  g_assert_cmpuint (refused, ==, 35);
  g_assert_cmpuint (created, ==, 5);
  batch_clear (&batch);

  /* Capacity comes back once they are done. */
  stop_all ();
  {
    g_autoptr(JsonObject) result = call ("create_session", "{}");

    g_assert_false (is_error (result));
  }
  stop_all ();
  sight_mcp_server_set_max_calls (server, 64);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *data_dir = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  data_dir = g_dir_make_tmp ("sight-mcp-capacity-XXXXXX", NULL);
  g_setenv ("SIGHTLINE_DATA_DIR", data_dir, TRUE);
  gtk_init ();

  site = sight_demo_site_new ();
  sight_demo_site_start (site, 0, &error);
  g_assert_no_error (error);
  mcp_start ();

  g_test_add_func ("/mcp-capacity/stopped-sessions", test_stopped_sessions);
  g_test_add_func ("/mcp-capacity/idle-session", test_idle_session);
  g_test_add_func ("/mcp-capacity/limits", test_limits);
  status = g_test_run ();

  mcp_stop ();
  sight_demo_site_stop (site);
  g_clear_object (&site);
  return status;
}
