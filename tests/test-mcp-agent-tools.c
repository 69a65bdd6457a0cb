/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-mcp-agent-tools"

#include "config.h"

#include "mcp-agent-test-common.h"

/* The agent's steps on an open session through MCP (act, assert, wait_for,
 * extract), with the scripted model, real WebKitGTK and the demo site. */

static void
test_act (void)
{
  g_autofree char *id = open_session ("login");
  g_autofree char *pricing = session_ref (id, "link", "Pricing");
  g_autoptr(JsonObject) acted = NULL;
  g_autoptr(JsonObject) busy_free = NULL;
  JsonArray *actions;
  SightSession *s;

  sight_scripted_model_push_printf (model, "{\"tool_calls\": [{\"name\": \"click\", "
                                    "\"arguments\": {\"ref\": \"%s\"}}]}", pricing);
  sight_scripted_model_push (model, "{\"tool_calls\": [{\"name\": \"done\", \"arguments\": "
                             "{\"verdict\": \"pass\", \"summary\": \"The pricing page is open.\"}}]}");
  acted = call ("act", "{\"sessionId\":\"%s\",\"instruction\":\"open the pricing page\","
                       "\"maxSteps\":5}", id);
  g_assert_false (is_error (acted));
  g_assert_cmpstr (json_object_get_string_member (structured (acted), "verdict"), ==, "pass");
  g_assert_cmpstr (json_object_get_string_member (structured (acted), "summary"), ==,
                   "The pricing page is open.");
  g_assert_cmpint (json_object_get_int_member (structured (acted), "modelCalls"), ==, 2);
  actions = json_object_get_array_member (structured (acted), "actions");
  g_assert_cmpuint (json_array_get_length (actions), ==, 1);
  g_assert_true (g_str_has_prefix (json_array_get_string_element (actions, 0), "click"));
  g_assert_true (g_str_has_prefix (text_of (acted), "act passed: The pricing page is open."));
  s = sight_session_registry_lookup (sight_session_registry_get_default (), id);
  g_assert_true (g_str_has_suffix (sight_web_page_get_uri (sight_session_get_page (s)), "/pricing"));

  /* The session is free again for the next step. */
  sight_scripted_model_push (model, "{\"tool_calls\": [{\"name\": \"done\", \"arguments\": "
                             "{\"verdict\": \"fail\", \"summary\": \"There is no cart.\"}}]}");
  busy_free = call ("act", "{\"sessionId\":\"%s\",\"instruction\":\"open the cart\"}", id);
  g_assert_true (is_error (busy_free));
  g_assert_cmpstr (error_code (busy_free), ==, "ACTION_FAILED");
  g_assert_true (g_str_has_prefix (text_of (busy_free), "[ACTION_FAILED] There is no cart."));
  g_assert_cmpstr (json_object_get_string_member (
                     json_object_get_object_member (
                       json_object_get_object_member (structured (busy_free), "error"),
                       "details"), "verdict"), ==, "fail");
  g_assert_cmpuint (sight_scripted_model_get_unexpected (model), ==, 0);
  json_object_unref (call ("stop_session", "{\"sessionId\":\"%s\"}", id));
}

static void
test_judgments (void)
{
  g_autofree char *id = open_session ("pricing");
  g_autoptr(JsonObject) holds = NULL;
  g_autoptr(JsonObject) fails = NULL;
  g_autoptr(JsonObject) waited = NULL;
  g_autoptr(JsonObject) extracted = NULL;
  JsonObject *value;

  sight_scripted_model_push (model, "{\"json\": {\"verdict\": true, \"explanation\": "
                             "\"The heading reads Pricing.\", \"injection\": null}}");
  holds = call ("assert", "{\"sessionId\":\"%s\",\"assertion\":\"the heading says Pricing\"}", id);
  g_assert_false (is_error (holds));
  g_assert_cmpstr (json_object_get_string_member (structured (holds), "verdict"), ==, "pass");

  sight_scripted_model_push (model, "{\"json\": {\"verdict\": false, \"explanation\": "
                             "\"No trial badge is shown.\", \"injection\": null}}");
  fails = call ("assert", "{\"sessionId\":\"%s\",\"assertion\":\"a trial badge is shown\","
                          "\"screenshot\":false}", id);
  g_assert_true (is_error (fails));
  g_assert_cmpstr (error_code (fails), ==, "ASSERTION_FAILED");
  g_assert_nonnull (strstr (text_of (fails), "No trial badge is shown."));
  /* screenshot: false: no evidence */
  g_assert_false (json_object_has_member (
    json_object_get_object_member (json_object_get_object_member (structured (fails), "error"),
                                   "details"), "screenshot"));

  /* Without it, the failure carries its screenshot's path, and the file is there. */
  sight_scripted_model_push (model, "{\"json\": {\"verdict\": false, \"explanation\": "
                             "\"No trial badge is shown.\", \"injection\": null}}");
  {
    g_autoptr(JsonObject) shown = call ("assert", "{\"sessionId\":\"%s\","
                                                  "\"assertion\":\"a trial badge is shown\"}", id);
    JsonObject *details = json_object_get_object_member (
      json_object_get_object_member (structured (shown), "error"), "details");
    const char *path = json_object_get_string_member_with_default (details, "screenshot", NULL);

    g_assert_cmpstr (error_code (shown), ==, "ASSERTION_FAILED");
    g_assert_nonnull (path);
    g_assert_nonnull (strstr (path, id));
    g_assert_true (g_file_test (path, G_FILE_TEST_IS_REGULAR));
  }

  sight_scripted_model_push (model, "{\"json\": {\"verdict\": true, \"explanation\": "
                             "\"Three plans are listed.\", \"injection\": null}}");
  waited = call ("wait_for", "{\"sessionId\":\"%s\",\"condition\":\"the plans are listed\","
                             "\"interval\":100,\"timeout\":10000}", id);
  g_assert_false (is_error (waited));
  g_assert_true (json_object_get_boolean_member (structured (waited), "judgment"));

  sight_scripted_model_push (model, "{\"json\": {\"plan\": \"Team\"}}");
  extracted = call ("extract", "{\"sessionId\":\"%s\",\"instruction\":\"the recommended plan\","
                               "\"schema\":{\"type\":\"object\",\"required\":[\"plan\"],"
                               "\"properties\":{\"plan\":{\"type\":\"string\"}}}}", id);
  g_assert_false (is_error (extracted));
  value = json_object_get_object_member (structured (extracted), "value");
  g_assert_cmpstr (json_object_get_string_member (value, "plan"), ==, "Team");
  g_assert_nonnull (strstr (text_of (extracted), "\"plan\":\"Team\""));
  g_assert_cmpuint (sight_scripted_model_get_unexpected (model), ==, 0);
  json_object_unref (call ("stop_session", "{\"sessionId\":\"%s\"}", id));
}

static void
test_refusals (void)
{
  g_autofree char *id = open_session ("pricing");
  g_autoptr(JsonObject) unknown = call ("act", "{\"sessionId\":\"sess_nope\","
                                               "\"instruction\":\"click\"}");
  g_autoptr(JsonObject) unknown_agent = NULL;
  g_autoptr(JsonObject) extra = NULL;
  g_autoptr(JsonObject) ended = NULL;
  guint requests = sight_scripted_model_get_request_count (model);

  g_assert_true (is_error (unknown));
  g_assert_cmpstr (error_code (unknown), ==, "not_found");

  unknown_agent = call ("assert", "{\"sessionId\":\"%s\",\"assertion\":\"x\","
                                  "\"agent\":\"nobody\"}", id);
  g_assert_true (is_error (unknown_agent));
  g_assert_cmpstr (error_code (unknown_agent), ==, "invalid_input");

  extra = call ("extract", "{\"sessionId\":\"%s\",\"instruction\":\"x\",\"schema\":{},"
                           "\"maxSteps\":3}", id);
  g_assert_true (is_error (extra));
  g_assert_cmpstr (error_code (extra), ==, "invalid_input");

  json_object_unref (call ("stop_session", "{\"sessionId\":\"%s\"}", id));
  ended = call ("assert", "{\"sessionId\":\"%s\",\"assertion\":\"x\"}", id);
  g_assert_true (is_error (ended));
  g_assert_cmpstr (error_code (ended), ==, "invalid_input");
  g_assert_nonnull (strstr (text_of (ended), "has ended"));
  /* None of these opened a step. */
  g_assert_cmpuint (sight_scripted_model_get_request_count (model), ==, requests);
}

/* A secret param is typed host-side; no reply carries it in any encoding. */
static void
test_secret (void)
{
  g_autofree char *id = open_session ("login");
  g_autofree char *password = session_ref (id, "textbox", "Password");
  g_autoptr(JsonObject) acted = NULL;
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
  g_autoptr(JsonNode) typed = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *reply = NULL;
  g_autofree char *b64 = g_base64_encode ((const guchar *) CANARY, strlen (CANARY));
  g_autofree char *escaped = g_uri_escape_string (CANARY, NULL, FALSE);
  SightSession *s = sight_session_registry_lookup (sight_session_registry_get_default (), id);
  GAsyncResult *result = NULL;

  sight_scripted_model_clear_requests (model);
  sight_scripted_model_push_printf (model, "{\"tool_calls\": [{\"name\": \"fill\", "
                                    "\"arguments\": {\"ref\": \"%s\", \"param\": \"password\"}}]}",
                                    password);
  sight_scripted_model_push (model, "{\"tool_calls\": [{\"name\": \"done\", \"arguments\": "
                             "{\"verdict\": \"pass\", \"summary\": \"Typed the password.\"}}]}");
  acted = call ("act", "{\"sessionId\":\"%s\",\"instruction\":\"type the password\","
                       "\"params\":{\"password\":{\"secret\":\"member.password\"}}}", id);
  g_assert_false (is_error (acted));
  json_node_set_object (node, acted);
  reply = json_to_string (node, FALSE);
  g_assert_null (strstr (reply, CANARY));
  g_assert_null (strstr (reply, b64));
  g_assert_null (strstr (reply, escaped));
  g_assert_null (strstr (reply, "7f3a9"));
  g_assert_cmpuint (sight_scripted_model_count_requests_containing (model, CANARY), ==, 0);

  /* It did reach the page. */
  sight_web_page_evaluate_async (sight_session_get_page (s),
                                 "return document.querySelector ('input[type=password]').value;",
                                 NULL, 5000, NULL, result_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  typed = sight_web_page_evaluate_finish (sight_session_get_page (s), result, &error);
  g_object_unref (result);
  g_assert_no_error (error);
  g_assert_cmpstr (json_node_get_string (typed), ==, CANARY);
  json_object_unref (call ("stop_session", "{\"sessionId\":\"%s\"}", id));
}

int
main (int    argc,
      char **argv)
{
  mcp_agent_test_init (&argc, &argv);
  g_test_add_func ("/mcp-agent-tools/act", test_act);
  g_test_add_func ("/mcp-agent-tools/judgments", test_judgments);
  g_test_add_func ("/mcp-agent-tools/refusals", test_refusals);
  g_test_add_func ("/mcp-agent-tools/secret", test_secret);
  return mcp_agent_test_run ();
}
