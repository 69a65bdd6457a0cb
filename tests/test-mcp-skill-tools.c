/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-mcp-skill-tools"

#include "config.h"

#include "mcp-agent-test-common.h"
#include "sight-store.h"

/* Skills through MCP: the built-in smoke-uat, user skills from JSON files in
 * the project's skills folder, list_skills, run_skill, get_skill_run and the
 * skill_<name> tools, on the demo site with real WebKitGTK. */

static const char pricing_check[] =
  "{ \"name\": \"pricing-check\", \"version\": \"1.0.0\","
  "  \"description\": \"Opens the pricing page from any page and looks for a plan\","
  "  \"inputs\": { \"url\": { \"type\": \"url\", \"required\": true },"
  "              \"plan\": { \"type\": \"string\", \"default\": \"Team\", \"maxLength\": 40 } },"
  "  \"steps\": [ \"click Pricing\", \"expect text \\\"{plan}\\\"\" ], \"timeout\": 5000 }";

static const char probe[] =
  "{ \"name\": \"probe\", \"description\": \"Pretends to probe\","
  "  \"inputs\": { \"url\": { \"type\": \"url\", \"required\": true } },"
  "  \"permissions\": [ \"active_scan\" ],"
  "  \"steps\": [ \"expect text \\\"Pricing\\\"\" ] }";

static const char slow[] =
  "{ \"name\": \"slow\", \"inputs\": { \"url\": { \"type\": \"url\", \"required\": true } },"
  "  \"steps\": [ \"wait 8 seconds\", \"expect text \\\"Pricing\\\"\" ] }";

static JsonObject *
find_by_name (JsonArray  *array,
              const char *key,
              const char *name)
{
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonObject *entry = json_array_get_object_element (array, i);

      if (g_strcmp0 (json_object_get_string_member (entry, key), name) == 0)
        return entry;
    }
  return NULL;
}

static void
test_list (void)
{
  g_autoptr(JsonObject) listed = call ("list_skills", "{}");
  JsonArray *skills;
  JsonObject *user;
  Exchange exchange = { NULL, FALSE };
  JsonArray *tools;
  JsonObject *tool;
  JsonObject *schema;

  g_assert_false (is_error (listed));
  skills = json_object_get_array_member (structured (listed), "skills");
  g_assert_cmpuint (json_array_get_length (skills), ==, 4);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (skills, 0),
                                                  "name"), ==, "smoke-uat");
  user = find_by_name (skills, "name", "pricing-check");
  g_assert_nonnull (user);
  g_assert_cmpstr (json_object_get_string_member (user, "tool"), ==, "skill_pricing_check");
  g_assert_cmpstr (json_object_get_string_member (user, "version"), ==, "1.0.0");
  g_assert_false (json_object_get_boolean_member (user, "builtin"));
  g_assert_cmpstr (json_object_get_string_member (
                     find_by_name (skills, "name", "probe"), "tool"), ==, "skill_probe");

  sight_mcp_session_handle_text_async (session, "{\"jsonrpc\":\"2.0\",\"id\":3,"
                                       "\"method\":\"tools/list\"}", -1, NULL, NULL, done_cb,
                                       &exchange);
  while (!exchange.done)
    g_main_context_iteration (NULL, TRUE);
  tools = json_object_get_array_member (json_object_get_object_member (
                                          json_node_get_object (exchange.answer), "result"),
                                        "tools");
  g_assert_cmpuint (json_array_get_length (tools), ==, 23);
  tool = find_by_name (tools, "name", "skill_pricing_check");
  g_assert_nonnull (tool);
  schema = json_object_get_object_member (tool, "inputSchema");
  g_assert_true (json_object_has_member (json_object_get_object_member (schema, "properties"),
                                         "plan"));
  g_assert_true (json_object_has_member (json_object_get_object_member (schema, "properties"),
                                         "options"));
  g_assert_cmpstr (json_array_get_string_element (json_object_get_array_member (schema,
                                                                                "required"), 0),
                   ==, "url");
  g_assert_false (json_object_get_boolean_member (schema, "additionalProperties"));
  tool = find_by_name (tools, "name", "skill_probe");
  g_assert_true (json_object_has_member (json_object_get_object_member (
                                           json_object_get_object_member (tool, "inputSchema"),
                                           "properties"), "confirm"));
  json_node_unref (exchange.answer);
}

static void
test_typed_tool (void)
{
  const char *url = sight_demo_site_get_url (site);
  g_autoptr(JsonObject) passed = call ("skill_pricing_check", "{\"url\":\"%slogin\","
                                                              "\"options\":{\"waitSeconds\":40}}",
                                       url);
  g_autoptr(JsonObject) failed = NULL;
  g_autoptr(JsonObject) report = NULL;
  JsonObject *counts;
  const char *text;

  g_assert_false (is_error (passed));
  g_assert_cmpstr (json_object_get_string_member (structured (passed), "status"), ==, "passed");
  g_assert_cmpstr (json_object_get_string_member (structured (passed), "skill"), ==,
                   "pricing-check");
  g_assert_true (g_str_has_prefix (json_object_get_string_member (structured (passed),
                                                                  "sessionId"), "sess_"));
  g_assert_true (json_object_get_boolean_member (structured (passed), "hasReport"));
  g_assert_true (g_str_has_prefix (json_object_get_string_member (structured (passed),
                                                                  "reportUrl"), "file://"));
  counts = json_object_get_object_member (structured (passed), "counts");
  g_assert_cmpint (json_object_get_int_member (counts, "steps"), ==, 3);
  g_assert_cmpint (json_object_get_int_member (counts, "passed"), ==, 3);
  text = text_of (passed);
  g_assert_true (g_str_has_prefix (text, "Skill pricing-check, version 1.0.0, run run_"));
  g_assert_nonnull (strstr (text, ": passed.\n"));
  g_assert_nonnull (strstr (text, "\nReport: file://"));

  /* A plan the page does not show: a failed run is a result, not an error. */
  failed = call ("skill_pricing_check", "{\"url\":\"%slogin\",\"plan\":\"Platinum\"}", url);
  g_assert_false (is_error (failed));
  g_assert_cmpstr (json_object_get_string_member (structured (failed), "status"), ==, "failed");
  g_assert_nonnull (strstr (text_of (failed), "Failed steps:\n- Step 3 (expect text"));

  report = call ("get_report", "{\"id\":\"%s\"}",
                 json_object_get_string_member (structured (failed), "runId"));
  g_assert_cmpstr (json_object_get_string_member (structured (report), "verdict"), ==, "fail");
}

static void
test_run_and_read (void)
{
  const char *url = sight_demo_site_get_url (site);
  g_autoptr(JsonObject) started = call ("run_skill", "{\"name\":\"pricing-check\","
                                                     "\"inputs\":{\"url\":\"%slogin\"}}", url);
  g_autoptr(JsonObject) read = NULL;
  g_autoptr(JsonObject) denied = NULL;
  g_autoptr(JsonObject) denied_read = NULL;
  g_autoptr(JsonObject) unconfirmed = NULL;
  g_autoptr(JsonObject) confirmed = NULL;
  g_autoptr(JsonObject) smoke = NULL;
  g_autoptr(JsonObject) smoke_read = NULL;

  g_assert_false (is_error (started));
  g_assert_true (g_str_has_prefix (json_object_get_string_member (structured (started), "runId"),
                                   "run_"));
  g_assert_cmpstr (json_object_get_string_member (structured (started), "status"), ==, "running");
  g_assert_cmpstr (json_object_get_string_member (structured (started), "placement"), ==,
                   "started");
  read = call ("get_skill_run", "{\"runId\":\"%s\",\"waitSeconds\":40}",
               json_object_get_string_member (structured (started), "runId"));
  g_assert_false (is_error (read));
  g_assert_cmpstr (json_object_get_string_member (structured (read), "status"), ==, "passed");

  /* A permission nobody granted: the run is denied and nothing runs. */
  denied = call ("run_skill", "{\"name\":\"probe\",\"inputs\":{\"url\":\"%spricing\"}}", url);
  g_assert_cmpstr (json_object_get_string_member (structured (denied), "status"), ==, "denied");
  denied_read = call ("get_skill_run", "{\"runId\":\"%s\"}",
                      json_object_get_string_member (structured (denied), "runId"));
  g_assert_true (is_error (denied_read));
  g_assert_cmpstr (json_object_get_string_member (structured (denied_read), "status"), ==,
                   "denied");
  g_assert_nonnull (strstr (text_of (denied_read), "grant [\"active_scan\"]"));

  unconfirmed = call ("skill_probe", "{\"url\":\"%spricing\"}", url);
  g_assert_cmpstr (error_code (unconfirmed), ==, "invalid_input");
  confirmed = call ("skill_probe", "{\"url\":\"%spricing\",\"confirm\":true}", url);
  g_assert_cmpstr (json_object_get_string_member (structured (confirmed), "status"), ==, "passed");

  /* smoke-uat is the smoke test. */
  smoke = call ("skill_smoke_uat", "{\"url\":\"%spricing\",\"maxLinks\":0,"
                                   "\"expectText\":\"Pricing\"}", url);
  g_assert_false (is_error (smoke));
  g_assert_cmpstr (json_object_get_string_member (structured (smoke), "skill"), ==, "smoke-uat");
  g_assert_cmpstr (json_object_get_string_member (structured (smoke), "status"), ==, "passed");
  smoke_read = call ("get_skill_run", "{\"runId\":\"%s\"}",
                     json_object_get_string_member (structured (smoke), "runId"));
  g_assert_cmpstr (json_object_get_string_member (structured (smoke_read), "status"), ==,
                   "passed");
}

static void
test_refusals (void)
{
  const char *url = sight_demo_site_get_url (site);
  g_autoptr(JsonObject) unknown = call ("run_skill", "{\"name\":\"nope\"}");
  g_autoptr(JsonObject) wrong_type = call ("run_skill", "{\"name\":\"pricing-check\","
                                                        "\"inputs\":{\"url\":\"%s\",\"plan\":5}}",
                                           url);
  g_autoptr(JsonObject) extra = call ("run_skill", "{\"name\":\"pricing-check\","
                                                   "\"inputs\":{\"url\":\"%s\",\"colour\":\"red\"}}",
                                      url);
  g_autoptr(JsonObject) missing = call ("run_skill", "{\"name\":\"pricing-check\"}");
  g_autoptr(JsonObject) no_run = call ("get_skill_run", "{\"runId\":\"run_nope\"}");
  g_autoptr(JsonObject) old_version = call ("run_skill", "{\"name\":\"pricing-check\","
                                                         "\"version\":\"0.1\"}");

  g_assert_cmpstr (error_code (unknown), ==, "not_found");
  g_assert_cmpstr (error_code (wrong_type), ==, "invalid_input");
  g_assert_nonnull (strstr (text_of (wrong_type), "plan"));
  g_assert_cmpstr (error_code (extra), ==, "invalid_input");
  g_assert_cmpstr (error_code (missing), ==, "invalid_input");
  g_assert_cmpstr (error_code (no_run), ==, "not_found");
  g_assert_cmpstr (error_code (old_version), ==, "not_found");
}

static gboolean
timeout_cb (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

static void
spin (guint ms)
{
  gboolean over = FALSE;

  g_timeout_add (ms, timeout_cb, &over);
  while (!over)
    g_main_context_iteration (NULL, TRUE);
}

/* A client that cancels a skill_<name> call while it waits cancels the run. */
static void
test_cancelled (void)
{
  g_autofree char *request = g_strdup_printf ("{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":"
                                              "\"tools/call\",\"params\":{\"name\":\"skill_slow\","
                                              "\"arguments\":{\"url\":\"%spricing\"}}}",
                                              sight_demo_site_get_url (site));
  Exchange running = { NULL, FALSE };
  Exchange cancel = { NULL, FALSE };
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) runs = NULL;
  g_autoptr(JsonObject) read = NULL;
  SightStore *store = sight_store_get_default (&error);
  SightRunRecord *newest;

  g_assert_no_error (error);
  sight_mcp_session_handle_text_async (session, request, -1, NULL, NULL, done_cb, &running);
  spin (2500);
  g_assert_false (running.done);
  sight_mcp_session_handle_text_async (session, "{\"jsonrpc\":\"2.0\",\"method\":"
                                       "\"notifications/cancelled\",\"params\":{\"requestId\":41}}",
                                       -1, NULL, NULL, done_cb, &cancel);
  while (!running.done || !cancel.done)
    g_main_context_iteration (NULL, TRUE);
  g_clear_pointer (&running.answer, json_node_unref);
  g_clear_pointer (&cancel.answer, json_node_unref);

  runs = sight_store_list_runs (store, 1, NULL, &error);
  g_assert_no_error (error);
  newest = g_ptr_array_index (runs, 0);
  g_assert_cmpstr (newest->name, ==, "slow 1");
  read = call ("get_skill_run", "{\"runId\":\"%s\",\"waitSeconds\":20}", newest->id);
  g_assert_true (is_error (read));
  g_assert_cmpstr (json_object_get_string_member (structured (read), "status"), ==, "cancelled");
}

int
main (int    argc,
      char **argv)
{
  g_autofree char *dir = NULL;
  g_autofree char *path = NULL;

  mcp_agent_test_init (&argc, &argv);
  /* The skills folder next to the project file, then a server that sees it. */
  dir = g_build_filename (g_get_current_dir (), "skills", NULL);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  path = g_build_filename (dir, "pricing-check.json", NULL);
  g_assert_true (g_file_set_contents (path, pricing_check, -1, NULL));
  g_free (path);
  path = g_build_filename (dir, "probe.json", NULL);
  g_assert_true (g_file_set_contents (path, probe, -1, NULL));
  g_free (path);
  path = g_build_filename (dir, "slow.json", NULL);
  g_assert_true (g_file_set_contents (path, slow, -1, NULL));
  g_free (path);
  path = g_build_filename (dir, "broken.json", NULL);
  g_assert_true (g_file_set_contents (path, "{\"name\": ", -1, NULL));
  mcp_stop ();
  mcp_start ();

  g_test_add_func ("/mcp-skill-tools/list", test_list);
  g_test_add_func ("/mcp-skill-tools/typed-tool", test_typed_tool);
  g_test_add_func ("/mcp-skill-tools/run-and-read", test_run_and_read);
  g_test_add_func ("/mcp-skill-tools/refusals", test_refusals);
  g_test_add_func ("/mcp-skill-tools/cancelled", test_cancelled);
  return mcp_agent_test_run ();
}
