/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-mcp"

#include "config.h"

#include <gio/gunixinputstream.h>
#include <gio/gunixoutputstream.h>
#include <glib-unix.h>
#include <string.h>
#include <unistd.h>

#include "sight-mcp-schema.h"
#include "sight-mcp-server.h"
#include "sight-mcp-stdio.h"
#include "sight-mcp-tool-private.h"
#include "sight-mcp-tools.h"

/* Helpers */

static JsonNode *
parse (const char *text)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  json_parser_load_from_data (parser, text, -1, &error);
  g_assert_no_error (error);
  return json_node_copy (json_parser_get_root (parser));
}

static char *
to_text (JsonNode *node)
{
  return node != NULL ? json_to_string (node, FALSE) : g_strdup ("(none)");
}

typedef struct {
  JsonNode  *answer;
  gboolean   done;
  GPtrArray *notifications;
} Exchange;

static void
exchange_notify_cb (JsonNode *message,
                    gpointer  user_data)
{
  Exchange *exchange = user_data;

  g_ptr_array_add (exchange->notifications, json_node_copy (message));
}

static void
exchange_done_cb (GObject      *object,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  Exchange *exchange = user_data;
  g_autoptr(GError) error = NULL;

  exchange->answer = sight_mcp_session_handle_finish (SIGHT_MCP_SESSION (object), result, &error);
  g_assert_no_error (error);
  exchange->done = TRUE;
}

static gboolean
deadline_cb (gpointer data)
{
  g_error ("the test ran past its deadline");
  return G_SOURCE_REMOVE;
}

static void
iterate_until (gboolean *flag,
               guint     seconds)
{
  guint deadline = g_timeout_add_seconds (seconds, deadline_cb, NULL);

  while (!*flag)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (deadline);
}

/* Sends @text and waits for its answer; returns it as compact JSON text or
 * "(none)". */
static char *
send (SightMcpSession *session,
      const char      *text)
{
  Exchange exchange = { NULL, FALSE, g_ptr_array_new_with_free_func ((GDestroyNotify) json_node_unref) };
  char *answer;

  sight_mcp_session_handle_text_async (session, text, -1, exchange_notify_cb, &exchange,
                                       exchange_done_cb, &exchange);
  iterate_until (&exchange.done, 20);
  answer = to_text (exchange.answer);
  g_clear_pointer (&exchange.answer, json_node_unref);
  g_ptr_array_unref (exchange.notifications);
  return answer;
}

static JsonNode *
send_node (SightMcpSession *session,
           const char      *text)
{
  g_autofree char *answer = send (session, text);

  if (g_str_equal (answer, "(none)"))
    return NULL;
  return parse (answer);
}

static gint64
error_code_of (JsonNode *answer)
{
  JsonObject *object = json_node_get_object (answer);

  g_assert_true (json_object_has_member (object, "error"));
  return json_object_get_int_member (json_object_get_object_member (object, "error"), "code");
}

static void
assert_error (SightMcpSession *session,
              const char      *request,
              int              code,
              gboolean         id_null)
{
  g_autoptr(JsonNode) answer = send_node (session, request);
  JsonObject *object;

  g_assert_nonnull (answer);
  g_assert_cmpint (error_code_of (answer), ==, code);
  object = json_node_get_object (answer);
  g_assert_cmpstr (json_object_get_string_member (object, "jsonrpc"), ==, "2.0");
  g_assert_true (json_object_has_member (object, "id"));
  g_assert_cmpint (JSON_NODE_HOLDS_NULL (json_object_get_member (object, "id")), ==, id_null);
}

static void
initialize (SightMcpSession *session,
            const char      *version)
{
  g_autofree char *request =
    g_strdup_printf ("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
                     "{\"protocolVersion\":\"%s\",\"capabilities\":{},"
                     "\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}", version);
  g_autoptr(JsonNode) answer = send_node (session, request);
  g_autofree char *none = NULL;

  g_assert_nonnull (answer);
  g_assert_true (json_object_has_member (json_node_get_object (answer), "result"));
  none = send (session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  g_assert_cmpstr (none, ==, "(none)");
}

static JsonObject *
result_of (JsonNode *answer)
{
  JsonObject *object = json_node_get_object (answer);

  g_assert_true (json_object_has_member (object, "result"));
  return json_object_get_object_member (object, "result");
}

static JsonNode *
call_tool (SightMcpSession *session,
           const char      *name,
           const char      *arguments_json)
{
  g_autofree char *request =
    g_strdup_printf ("{\"jsonrpc\":\"2.0\",\"id\":\"c\",\"method\":\"tools/call\",\"params\":"
                     "{\"name\":\"%s\",\"arguments\":%s}}", name, arguments_json);

  return send_node (session, request);
}

static const char *
error_code_in_result (JsonObject *result)
{
  JsonObject *structured;

  g_assert_true (json_object_get_boolean_member_with_default (result, "isError", FALSE));
  structured = json_object_get_object_member (result, "structuredContent");
  return json_object_get_string_member (json_object_get_object_member (structured, "error"),
                                        "code");
}

/* Test tools */

typedef struct {
  SightMcpToolCall *call;
  gboolean          cancelled;
  gboolean          wait_over;
  guint             source;
} SlowCall;

static SlowCall slow;

static void
slow_cancelled_cb (GCancellable *cancellable,
                   gpointer      data)
{
  slow.cancelled = TRUE;
  /* Work stops and says so, as the runner marks a run interrupted. */
  if (!sight_mcp_tool_call_is_returned (slow.call))
    sight_mcp_tool_call_return_error (slow.call, "cancelled", NULL, "interrupted");
}

static void
slow_wait_over_cb (GCancellable *cancellable,
                   gpointer      data)
{
  g_autoptr(JsonObject) structured = json_object_new ();

  slow.wait_over = TRUE;
  if (g_cancellable_is_cancelled (sight_mcp_tool_call_get_cancellable (slow.call)) ||
      sight_mcp_tool_call_is_returned (slow.call))
    return;
  json_object_set_string_member (structured, "status", "running");
  sight_mcp_tool_call_return_result (slow.call, "still running", structured, FALSE);
}

/* Never answers by itself: only cancellation or the end of its wait does. */
static void
slow_handler (SightMcpToolCall *call,
              gpointer          user_data)
{
  g_clear_object (&slow.call);
  slow.call = g_object_ref (call);
  slow.cancelled = FALSE;
  slow.wait_over = FALSE;
  g_cancellable_connect (sight_mcp_tool_call_get_cancellable (call),
                         G_CALLBACK (slow_cancelled_cb), NULL, NULL);
  if (GPOINTER_TO_INT (user_data))
    g_signal_connect (sight_mcp_tool_call_get_wait_cancellable (call), "cancelled",
                      G_CALLBACK (slow_wait_over_cb), NULL);
}

static void
silent_handler (SightMcpToolCall *call,
                gpointer          user_data)
{
  g_clear_object (&slow.call);
  slow.call = g_object_ref (call);
}

static void
echo_handler (SightMcpToolCall *call,
              gpointer          user_data)
{
  g_autoptr(JsonObject) structured = json_object_ref (sight_mcp_tool_call_get_arguments (call));

  json_object_set_int_member (structured, "wait", sight_mcp_tool_call_get_wait_seconds (call));
  sight_mcp_tool_call_report_progress (call, 1, 2, "half");
  sight_mcp_tool_call_report_progress (call, 1, 2, "not growing: dropped");
  sight_mcp_tool_call_report_progress (call, 2, 2, "done");
  sight_mcp_tool_call_return_result (call, NULL, structured, FALSE);
}

static SightMcpRegistry *
test_registry (void)
{
  SightMcpRegistry *registry = sight_mcp_registry_new ();
  g_autoptr(JsonNode) schema = parse ("{\"type\":\"object\",\"properties\":{"
                                      "\"waitSeconds\":{\"type\":\"integer\",\"minimum\":0},"
                                      "\"text\":{\"type\":\"string\"}},"
                                      "\"additionalProperties\":false}");
  SightMcpToolInfo info = { 0 };

  info.input_schema = json_node_get_object (schema);
  info.wait_argument = "waitSeconds";
  info.wait_default = 30;
  info.wait_cap = 1;

  info.name = "slow";
  info.handler = slow_handler;
  sight_mcp_registry_add (registry, &info, GINT_TO_POINTER (FALSE), NULL);
  info.name = "slow_running";
  sight_mcp_registry_add (registry, &info, GINT_TO_POINTER (TRUE), NULL);
  info.name = "silent";
  info.wait_cap = 0;
  info.handler = silent_handler;
  sight_mcp_registry_add (registry, &info, NULL, NULL);
  info.name = "echo";
  info.wait_cap = 90;
  info.handler = echo_handler;
  sight_mcp_registry_add (registry, &info, NULL, NULL);
  return registry;
}

/* Tests: schema */

static guint
n_issues (const char *schema_json,
          const char *instance_json,
          char      **first_message)
{
  g_autoptr(JsonNode) schema = parse (schema_json);
  g_autoptr(JsonNode) instance = parse (instance_json);
  g_autoptr(JsonArray) issues = json_array_new ();
  gboolean ok = sight_mcp_schema_validate (schema, instance, issues);

  g_assert_cmpint (ok, ==, json_array_get_length (issues) == 0);
  if (first_message != NULL)
    *first_message = json_array_get_length (issues) > 0
                     ? g_strdup (json_object_get_string_member (
                         json_array_get_object_element (issues, 0), "message"))
                     : NULL;
  return json_array_get_length (issues);
}

static void
test_schema (void)
{
  const char *schema = "{\"type\":\"object\",\"required\":[\"url\"],"
                       "\"properties\":{\"url\":{\"type\":\"string\",\"maxLength\":5},"
                       "\"n\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":50},"
                       "\"mode\":{\"type\":\"string\",\"enum\":[\"auto\",\"full_auto\"]},"
                       "\"list\":{\"type\":\"array\",\"maxItems\":2,\"items\":{\"type\":\"string\"}},"
                       "\"cred\":{\"anyOf\":[{\"type\":\"boolean\"},{\"type\":\"object\","
                       "\"properties\":{\"ns\":{\"type\":\"string\"}},\"additionalProperties\":false}]},"
                       "\"proxy\":{\"type\":\"string\"},\"hosts\":{\"type\":\"array\"}},"
                       "\"dependentRequired\":{\"hosts\":[\"proxy\"]},"
                       "\"additionalProperties\":false}";
  g_autofree char *message = NULL;

  g_assert_cmpuint (n_issues (schema, "{\"url\":\"a\"}", NULL), ==, 0);
  g_assert_cmpuint (n_issues (schema, "{\"url\":\"a\",\"n\":50,\"mode\":\"auto\",\"list\":[\"x\"],"
                                      "\"cred\":true}", NULL), ==, 0);
  g_assert_cmpuint (n_issues (schema, "{\"url\":\"a\",\"cred\":{\"ns\":\"v\"}}", NULL), ==, 0);
  /* 50.0 is an integer in JSON Schema; 1.5 is not. */
  g_assert_cmpuint (n_issues (schema, "{\"url\":\"a\",\"n\":50.0}", NULL), ==, 0);
  g_assert_cmpuint (n_issues (schema, "{\"url\":\"a\",\"n\":1.5}", &message), ==, 1);
  g_assert_cmpstr (message, ==, "n must be an integer");
  g_clear_pointer (&message, g_free);

  g_assert_cmpuint (n_issues (schema, "{}", &message), ==, 1);
  g_assert_cmpstr (message, ==, "url is required");
  g_clear_pointer (&message, g_free);
  g_assert_cmpuint (n_issues (schema, "{\"url\":\"a\",\"n\":51}", &message), ==, 1);
  g_assert_cmpstr (message, ==, "n must be at most 50");
  g_clear_pointer (&message, g_free);
  g_assert_cmpuint (n_issues (schema, "{\"url\":\"a\",\"n\":0}", NULL), ==, 1);
  g_assert_cmpuint (n_issues (schema, "{\"url\":\"abcdef\"}", &message), ==, 1);
  g_assert_cmpstr (message, ==, "url takes at most 5 characters");
  g_clear_pointer (&message, g_free);
  /* Characters, not bytes. */
  g_assert_cmpuint (n_issues (schema, "{\"url\":\"ééééé\"}", NULL), ==, 0);
  g_assert_cmpuint (n_issues (schema, "{\"url\":\"a\",\"mode\":\"manual\"}", &message), ==, 1);
  g_assert_cmpstr (message, ==, "mode must be one of \"auto\" or \"full_auto\"");
  g_clear_pointer (&message, g_free);
  g_assert_cmpuint (n_issues (schema, "{\"url\":\"a\",\"list\":[\"x\",\"y\",\"z\"]}", NULL), ==, 1);
  g_assert_cmpuint (n_issues (schema, "{\"url\":\"a\",\"list\":[\"x\",3]}", &message), ==, 1);
  g_assert_cmpstr (message, ==, "item 1 must be a string");
  g_clear_pointer (&message, g_free);
  g_assert_cmpuint (n_issues (schema, "{\"url\":\"a\",\"cred\":\"yes\"}", NULL), ==, 1);
  g_assert_cmpuint (n_issues (schema, "{\"url\":\"a\",\"cred\":{\"other\":1}}", &message), ==, 1);
  g_assert_cmpstr (message, ==, "unknown field other");
  g_clear_pointer (&message, g_free);
  g_assert_cmpuint (n_issues (schema, "{\"url\":\"a\",\"hosts\":[]}", &message), ==, 1);
  g_assert_cmpstr (message, ==, "hosts needs proxy");
  g_clear_pointer (&message, g_free);
  g_assert_cmpuint (n_issues (schema, "{\"url\":\"a\",\"extra\":1,\"more\":2}", NULL), ==, 2);
  g_assert_cmpuint (n_issues (schema, "[]", &message), ==, 1);
  g_assert_cmpstr (message, ==, "arguments must be an object");
}

static void
test_builtin_schemas (void)
{
  g_autoptr(SightMcpRegistry) registry = sight_mcp_registry_new_builtin ();
  g_autoptr(JsonArray) list = sight_mcp_registry_list (registry);
  const char * const *names = sight_mcp_builtin_tool_names ();
  struct {
    const char *tool;
    const char *arguments;
    guint       issues;
  } cases[] = {
    { "run_task", "{\"goal\":\"find the price\"}", 0 },
    { "run_task", "{\"goal\":\"\"}", 1 },
    { "run_task", "{\"goal\":\"g\",\"waitSeconds\":91}", 1 },
    { "run_task", "{\"goal\":\"g\",\"maxSteps\":51}", 1 },
    { "run_task", "{\"goal\":\"g\",\"mode\":\"manual\"}", 1 },
    { "run_task", "{\"goal\":\"g\",\"allowHosts\":[\"intranet\"]}", 1 },
    { "run_task", "{\"goal\":\"g\",\"goalx\":1}", 1 },
    { "get_task", "{\"sessionId\":\"sess_1\",\"waitSeconds\":500}", 0 },
    { "get_task", "{\"sessionId\":\"sess_1\",\"waitSeconds\":-1}", 1 },
    { "smoke_test", "{\"url\":\"https://example.test\",\"steps\":[\"click Sign in\"],"
                    "\"maxLinks\":200,\"strictLinks\":false,\"waitSeconds\":90}", 0 },
    { "smoke_test", "{\"url\":\"ftp://example.test\"}", 1 },
    { "smoke_test", "{\"url\":\"https://example.test\",\"maxLinks\":201}", 1 },
    { "smoke_test", "{\"url\":\"https://example.test\",\"waitSeconds\":0}", 1 },
    { "get_report", "{\"id\":\"run_1\",\"waitSeconds\":91}", 1 },
    { "list_sessions", "{}", 0 },
    { "list_sessions", "{\"limit\":5}", 1 },
    { "scrape", "{\"url\":\"https://example.test\",\"format\":[\"markdown\",\"html\"],"
                "\"waitUntil\":\"networkidle\",\"timeoutMs\":120000}", 0 },
    { "scrape", "{\"url\":\"https://example.test\",\"format\":[\"pdf\"]}", 1 },
    { "scrape", "{\"url\":\"https://example.test\",\"timeoutMs\":999}", 1 },
    { "screenshot", "{\"url\":\"https://example.test\",\"format\":\"jpeg\",\"quality\":80,"
                    "\"viewport\":{\"width\":1280,\"height\":800}}", 0 },
    { "screenshot", "{\"url\":\"https://example.test\",\"viewport\":{\"width\":100,"
                    "\"height\":800}}", 1 },
    { "pdf", "{\"url\":\"https://example.test\",\"paper\":\"Letter\"}", 0 },
    { "pdf", "{\"url\":\"https://example.test\",\"paper\":\"A3\"}", 1 },
    { "crawl", "{\"url\":\"https://example.test\",\"scope\":\"subdomains\",\"maxPages\":100,"
               "\"maxDepth\":5}", 0 },
    { "crawl", "{\"url\":\"https://example.test\",\"scope\":[\"a.test\",\"b.test\"]}", 0 },
    { "crawl", "{\"url\":\"https://example.test\",\"scope\":\"world\"}", 1 },
    { "crawl", "{\"url\":\"https://example.test\",\"maxDepth\":6}", 1 },
    { "get_skill_run", "{\"runId\":\"run_1\",\"waitSeconds\":120}", 0 },
    { "get_skill_run", "{\"runId\":\"run_1\",\"waitSeconds\":121}", 1 },
    { "run_skill", "{\"name\":\"smoke-uat\",\"grant\":[\"active_scan\"]}", 0 },
    { "run_skill", "{\"name\":\"smoke-uat\",\"grant\":[\"root\"]}", 1 },
    { "create_session", "{\"startUrl\":\"https://example.test\",\"record\":true,"
                        "\"idleTimeoutMs\":10000,\"queueForCapacity\":{\"maxWaitSeconds\":900}}", 0 },
    { "create_session", "{\"idleTimeoutMs\":9999}", 1 },
    { "create_session", "{\"engineVersion\":2}", 1 },
    { "act", "{\"sessionId\":\"sess_1\",\"instruction\":\"click Sign in\"}", 0 },
    { "assert", "{\"sessionId\":\"sess_1\",\"assertion\":\"a badge\",\"vision\":\"only\"}", 0 },
    { "assert", "{\"sessionId\":\"sess_1\",\"assertion\":\"a badge\",\"vision\":\"some\"}", 1 },
    { "wait_for", "{\"sessionId\":\"sess_1\",\"condition\":\"done\",\"interval\":99}", 1 },
    { "extract", "{\"sessionId\":\"sess_1\",\"instruction\":\"name\"}", 1 },
    /* sessionId or its deprecated alias id: one of them is required. */
    { "get_session", "{}", 1 },
    { "get_session", "{\"sessionId\":\"sess_1\"}", 0 },
    { "get_session", "{\"id\":\"sess_1\"}", 0 },
    { "stop_session", "{}", 1 },
    { "stop_session", "{\"sessionId\":\"sess_1\"}", 0 },
    { "stop_session", "{\"id\":\"sess_1\"}", 0 },
  };

  /* The 19 built-in tools, then one per skill: here only skill_smoke_uat. */
  g_assert_cmpuint (json_array_get_length (list), ==, 20);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (list, 19),
                                                  "name"), ==, "skill_smoke_uat");
  for (guint i = 0; names[i] != NULL; i++)
    {
      JsonObject *entry = json_array_get_object_element (list, i);
      JsonObject *input = json_object_get_object_member (entry, "inputSchema");

      g_assert_cmpstr (json_object_get_string_member (entry, "name"), ==, names[i]);
      g_assert_cmpstr (json_object_get_string_member (input, "type"), ==, "object");
      /* Unknown fields are refused by every tool. */
      g_assert_false (json_object_get_boolean_member (input, "additionalProperties"));
      g_assert_cmpuint (strlen (json_object_get_string_member (entry, "description")), >, 20);
    }

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      SightMcpTool *tool = sight_mcp_registry_lookup (registry, cases[i].tool);
      g_autoptr(JsonNode) arguments = parse (cases[i].arguments);
      g_autoptr(JsonArray) issues = json_array_new ();

      g_assert_nonnull (tool);
      if (tool->check != NULL)
        tool->check (json_node_get_object (arguments), issues);
      if (json_array_get_length (issues) == 0)
        sight_mcp_schema_validate (tool->input_schema, arguments, issues);
      if (json_array_get_length (issues) != cases[i].issues)
        g_error ("%s %s: %u issues, expected %u", cases[i].tool, cases[i].arguments,
                 json_array_get_length (issues), cases[i].issues);
    }

  /* The schemas themselves say so, for a client that reads tools/list: no
   * session id is refused by the inputSchema alone. */
  for (guint i = 0; i < 2; i++)
    {
      SightMcpTool *tool = sight_mcp_registry_lookup (registry,
                                                      i == 0 ? "get_session" : "stop_session");
      g_autoptr(JsonNode) none = parse ("{}");
      g_autoptr(JsonNode) alias = parse ("{\"id\":\"sess_1\"}");
      g_autoptr(JsonArray) issues = json_array_new ();

      sight_mcp_schema_validate (tool->input_schema, none, issues);
      g_assert_cmpuint (json_array_get_length (issues), ==, 1);
      sight_mcp_schema_validate (tool->input_schema, alias, issues);
      g_assert_cmpuint (json_array_get_length (issues), ==, 1);
    }
}

static void
test_waits (void)
{
  g_autoptr(SightMcpRegistry) registry = sight_mcp_registry_new_builtin ();
  struct {
    const char *tool;
    const char *arguments;
    int         wait;
  } cases[] = {
    { "run_task", "{}", 90 },
    { "run_task", "{\"waitSeconds\":10}", 10 },
    { "get_task", "{}", 30 },
    { "get_task", "{\"waitSeconds\":500}", 90 },   /* lowered to 90 */
    { "smoke_test", "{}", 60 },
    { "get_report", "{}", 30 },
    { "get_skill_run", "{}", 0 },
    { "get_skill_run", "{\"waitSeconds\":120}", 120 },
    { "scrape", "{}", -1 },
    { "list_sessions", "{}", -1 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(JsonNode) arguments = parse (cases[i].arguments);
      SightMcpTool *tool = sight_mcp_registry_lookup (registry, cases[i].tool);

      g_assert_cmpint (_sight_mcp_tool_resolve_wait (tool, json_node_get_object (arguments)), ==,
                       cases[i].wait);
    }
}

/* Tests: protocol */

static void
test_protocol_errors (void)
{
  g_autoptr(SightMcpRegistry) registry = sight_mcp_registry_new_builtin ();
  g_autoptr(SightMcpServer) server = sight_mcp_server_new (registry);
  g_autoptr(SightMcpSession) session = sight_mcp_server_create_session (server);
  g_autofree char *answer = NULL;

  assert_error (session, "{\"jsonrpc\":\"2.0\",\"id\":1,", SIGHT_MCP_PARSE_ERROR, TRUE);
  assert_error (session, "not json at all", SIGHT_MCP_PARSE_ERROR, TRUE);
  assert_error (session, "42", SIGHT_MCP_INVALID_REQUEST, TRUE);
  assert_error (session, "{\"id\":1,\"method\":\"ping\"}", SIGHT_MCP_INVALID_REQUEST, FALSE);
  assert_error (session, "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}",
                SIGHT_MCP_INVALID_REQUEST, FALSE);
  assert_error (session, "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}",
                SIGHT_MCP_INVALID_REQUEST, TRUE);
  assert_error (session, "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}",
                SIGHT_MCP_INVALID_REQUEST, TRUE);
  assert_error (session, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}",
                SIGHT_MCP_INVALID_REQUEST, FALSE);

  /* Ping works before initialize; the tools do not. */
  answer = send (session, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}");
  g_assert_cmpstr (answer, ==, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"result\":{}}");
  g_clear_pointer (&answer, g_free);
  assert_error (session, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
                SIGHT_MCP_INVALID_REQUEST, FALSE);
  assert_error (session, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}",
                SIGHT_MCP_INVALID_PARAMS, FALSE);
  assert_error (session, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                         "\"params\":{\"protocolVersion\":2025}}",
                SIGHT_MCP_INVALID_PARAMS, FALSE);
  /* A batch before initialize is refused whole. */
  assert_error (session, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
                SIGHT_MCP_INVALID_REQUEST, TRUE);

  initialize (session, "2025-06-18");
  assert_error (session, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                         "\"params\":{\"protocolVersion\":\"2025-06-18\"}}",
                SIGHT_MCP_INVALID_REQUEST, FALSE);
  assert_error (session, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/list\"}",
                SIGHT_MCP_METHOD_NOT_FOUND, FALSE);
  assert_error (session, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                         "\"params\":{\"arguments\":{}}}",
                SIGHT_MCP_INVALID_PARAMS, FALSE);
  assert_error (session, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                         "\"params\":{\"name\":\"scrape\",\"arguments\":[1]}}",
                SIGHT_MCP_INVALID_PARAMS, FALSE);
  assert_error (session, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                         "\"params\":[\"scrape\"]}",
                SIGHT_MCP_INVALID_PARAMS, FALSE);
  assert_error (session, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\","
                         "\"params\":{\"cursor\":\"next\"}}",
                SIGHT_MCP_INVALID_PARAMS, FALSE);

  /* Notifications and client responses get no answer, even unknown ones. */
  answer = send (session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}");
  g_assert_cmpstr (answer, ==, "(none)");
  g_clear_pointer (&answer, g_free);
  answer = send (session, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}");
  g_assert_cmpstr (answer, ==, "(none)");
  g_clear_pointer (&answer, g_free);
  answer = send (session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                          "\"params\":{\"requestId\":99}}");
  g_assert_cmpstr (answer, ==, "(none)");
}

static void
test_negotiation (void)
{
  g_autoptr(SightMcpRegistry) registry = sight_mcp_registry_new_builtin ();
  g_autoptr(SightMcpServer) server = sight_mcp_server_new (registry);
  struct {
    const char *asked;
    const char *answered;
  } cases[] = {
    { "2025-06-18", "2025-06-18" },
    { "2025-03-26", "2025-03-26" },
    { "2024-11-05", "2024-11-05" },
    { "2099-01-01", "2025-06-18" },
    { "2024-10-07", "2025-06-18" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(SightMcpSession) session = sight_mcp_server_create_session (server);
      g_autofree char *request =
        g_strdup_printf ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                         "{\"protocolVersion\":\"%s\",\"capabilities\":{},"
                         "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}", cases[i].asked);
      g_autoptr(JsonNode) answer = send_node (session, request);
      JsonObject *result = result_of (answer);

      g_assert_cmpstr (json_object_get_string_member (result, "protocolVersion"), ==,
                       cases[i].answered);
      g_assert_cmpstr (sight_mcp_session_get_protocol_version (session), ==, cases[i].answered);
      g_assert_true (json_object_has_member (json_object_get_object_member (result,
                                                                            "capabilities"),
                                             "tools"));
      g_assert_cmpstr (json_object_get_string_member (
                         json_object_get_object_member (result, "serverInfo"), "name"),
                       ==, "sightline");
    }
}

static void
test_batches (void)
{
  g_autoptr(SightMcpRegistry) registry = sight_mcp_registry_new_builtin ();
  g_autoptr(SightMcpServer) server = sight_mcp_server_new (registry);
  g_autoptr(SightMcpSession) old = sight_mcp_server_create_session (server);
  g_autoptr(SightMcpSession) current = sight_mcp_server_create_session (server);
  g_autoptr(JsonNode) answer = NULL;
  g_autofree char *none = NULL;
  const char *batch = "[{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"ping\"},"
                      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},"
                      "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"nope\"},"
                      "{\"jsonrpc\":\"2.0\",\"id\":\"c\",\"method\":\"tools/call\","
                      "\"params\":{\"name\":\"list_skills\"}},"
                      "17]";
  JsonArray *answers;

  initialize (old, "2025-03-26");
  answer = send_node (old, batch);
  g_assert_true (JSON_NODE_HOLDS_ARRAY (answer));
  answers = json_node_get_array (answer);
  /* One answer per request, in order; none for the notification. */
  g_assert_cmpuint (json_array_get_length (answers), ==, 4);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (answers, 0), "id"),
                   ==, "a");
  g_assert_cmpint (error_code_of (json_array_get_element (answers, 1)), ==,
                   SIGHT_MCP_METHOD_NOT_FOUND);
  g_assert_true (json_object_has_member (json_object_get_object_member (
                    result_of (json_array_get_element (answers, 2)), "structuredContent"),
                  "skills"));
  g_assert_cmpint (error_code_of (json_array_get_element (answers, 3)), ==,
                   SIGHT_MCP_INVALID_REQUEST);
  g_clear_pointer (&answer, json_node_unref);

  none = send (old, "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}]");
  g_assert_cmpstr (none, ==, "(none)");
  assert_error (old, "[]", SIGHT_MCP_INVALID_REQUEST, TRUE);
  /* initialize is never part of a batch. */
  answer = send_node (old, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                           "\"params\":{\"protocolVersion\":\"2025-03-26\"}}]");
  g_assert_cmpint (error_code_of (json_array_get_element (json_node_get_array (answer), 0)), ==,
                   SIGHT_MCP_INVALID_REQUEST);
  g_clear_pointer (&answer, json_node_unref);

  /* 2025-06-18 has no batches. */
  initialize (current, "2025-06-18");
  assert_error (current, batch, SIGHT_MCP_INVALID_REQUEST, TRUE);
}

/* What list_skills says of a skill's inputs and what tools/list says of its
 * skill_<name> tool agree: the same inputs, the same ones required. */
static void
test_skill_schemas_agree (void)
{
  g_autoptr(SightMcpRegistry) registry = sight_mcp_registry_new_builtin ();
  g_autoptr(SightMcpServer) server = sight_mcp_server_new (registry);
  g_autoptr(SightMcpSession) session = sight_mcp_server_create_session (server);
  g_autoptr(JsonNode) listed = NULL;
  g_autoptr(JsonNode) skills_answer = NULL;
  JsonArray *tools;
  JsonArray *skills;
  guint compared = 0;

  initialize (session, "2025-06-18");
  listed = send_node (session, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
  tools = json_object_get_array_member (result_of (listed), "tools");
  skills_answer = call_tool (session, "list_skills", "{}");
  skills = json_object_get_array_member (
    json_object_get_object_member (result_of (skills_answer), "structuredContent"), "skills");
  g_assert_cmpuint (json_array_get_length (skills), >=, 1);

  for (guint i = 0; i < json_array_get_length (skills); i++)
    {
      JsonObject *skill = json_array_get_object_element (skills, i);
      const char *tool_name = json_object_get_string_member (skill, "tool");
      JsonObject *inputs = json_object_get_object_member (skill, "inputs");
      JsonArray *required_inputs = json_object_get_array_member (skill, "requiredInputs");
      JsonObject *schema = NULL;
      JsonObject *properties;
      g_autoptr(GPtrArray) schema_required = g_ptr_array_new ();
      JsonObjectIter iter;
      const char *name;
      JsonNode *value;

      for (guint t = 0; t < json_array_get_length (tools); t++)
        {
          JsonObject *tool = json_array_get_object_element (tools, t);

          if (g_str_equal (json_object_get_string_member (tool, "name"), tool_name))
            schema = json_object_get_object_member (tool, "inputSchema");
        }
      g_assert_nonnull (schema);
      properties = json_object_get_object_member (schema, "properties");
      if (json_object_has_member (schema, "required"))
        {
          JsonArray *required = json_object_get_array_member (schema, "required");

          for (guint r = 0; r < json_array_get_length (required); r++)
            if (!g_str_equal (json_array_get_string_element (required, r), "confirm"))
              g_ptr_array_add (schema_required,
                               (char *) json_array_get_string_element (required, r));
        }

      /* requiredInputs is the tool's required list, less the tool's own
       * confirm. */
      g_assert_cmpuint (json_array_get_length (required_inputs), ==, schema_required->len);
      for (guint r = 0; r < json_array_get_length (required_inputs); r++)
        g_assert_true (g_ptr_array_find_with_equal_func (
          schema_required, json_array_get_string_element (required_inputs, r), g_str_equal,
          NULL));

      /* Every input is a property of the tool, required there exactly when
       * list_skills says so. */
      json_object_iter_init (&iter, inputs);
      while (json_object_iter_next (&iter, &name, &value))
        {
          gboolean listed_required = json_object_get_boolean_member_with_default (
            json_node_get_object (value), "required", FALSE);
          gboolean tool_required =
            g_ptr_array_find_with_equal_func (schema_required, name, g_str_equal, NULL);

          g_assert_true (json_object_has_member (json_node_get_object (value), "required"));
          g_assert_true (json_object_has_member (properties, name));
          if (listed_required != tool_required)
            g_error ("%s: input %s is %srequired in list_skills, %srequired in tools/list",
                     tool_name, name, listed_required ? "" : "not ", tool_required ? "" : "not ");
          compared++;
        }
      for (guint r = 0; r < schema_required->len; r++)
        g_assert_true (json_object_has_member (inputs, schema_required->pdata[r]));
    }
  /* smoke-uat's url, steps, expectText, expectUrl, expectNoText, maxLinks,
   * strictLinks at least. */
  g_assert_cmpuint (compared, >=, 7);
}

static void
test_tools_call (void)
{
  g_autoptr(SightMcpRegistry) registry = sight_mcp_registry_new_builtin ();
  g_autoptr(SightMcpServer) server = sight_mcp_server_new (registry);
  g_autoptr(SightMcpSession) session = sight_mcp_server_create_session (server);
  g_autoptr(JsonNode) answer = NULL;
  JsonObject *result;
  JsonObject *error;
  JsonArray *issues;
  const char *text;

  initialize (session, "2025-06-18");

  answer = send_node (session, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (result_of (answer),
                                                                         "tools")), ==, 20);
  g_clear_pointer (&answer, json_node_unref);

  /* The spec: an unknown tool is not_found, as a result. */
  answer = call_tool (session, "no_such_tool", "{}");
  g_assert_cmpstr (error_code_in_result (result_of (answer)), ==, "not_found");
  g_clear_pointer (&answer, json_node_unref);

  /* Argument problems: invalid_input with details.issues, text [code] message. */
  answer = call_tool (session, "smoke_test", "{\"url\":\"https://example.test\",\"maxLinks\":500,"
                                             "\"colour\":\"red\"}");
  result = result_of (answer);
  g_assert_cmpstr (error_code_in_result (result), ==, "invalid_input");
  error = json_object_get_object_member (json_object_get_object_member (result,
                                                                        "structuredContent"),
                                         "error");
  issues = json_object_get_array_member (json_object_get_object_member (error, "details"),
                                         "issues");
  g_assert_cmpuint (json_array_get_length (issues), ==, 2);
  text = json_object_get_string_member (
    json_array_get_object_element (json_object_get_array_member (result, "content"), 0), "text");
  g_assert_true (g_str_has_prefix (text, "[invalid_input] Invalid arguments for smoke_test: "));
  g_assert_nonnull (strstr (json_object_get_string_member (error, "message"), "(and 1 more"));
  g_clear_pointer (&answer, json_node_unref);

  answer = call_tool (session, "run_task", "{\"goal\":\"g\",\"sessionId\":\"sess_1\","
                                           "\"startUrl\":\"https://example.test\"}");
  result = result_of (answer);
  g_assert_cmpstr (error_code_in_result (result), ==, "invalid_input");
  g_clear_pointer (&answer, json_node_unref);

  answer = call_tool (session, "smoke_test", "{\"url\":\"https://example.test\","
                                             "\"session\":{\"credentials\":true}}");
  result = result_of (answer);
  g_assert_nonnull (strstr (json_object_get_string_member (
                              json_array_get_object_element (
                                json_object_get_array_member (result, "content"), 0), "text"),
                            "Signed-in skill runs are not available yet: remove "
                            "session.credentials"));
  g_clear_pointer (&answer, json_node_unref);

  answer = call_tool (session, "get_session", "{\"sessionId\":\"a\",\"id\":\"b\"}");
  g_assert_cmpstr (error_code_in_result (result_of (answer)), ==, "invalid_input");
  g_clear_pointer (&answer, json_node_unref);

  /* The built-in skill is listed with its tool. */
  answer = call_tool (session, "list_skills", "{}");
  result = result_of (answer);
  g_assert_false (json_object_get_boolean_member_with_default (result, "isError", FALSE));
  g_assert_cmpstr (json_object_get_string_member (
                     json_array_get_object_element (
                       json_object_get_array_member (
                         json_object_get_object_member (result, "structuredContent"), "skills"),
                       0), "tool"), ==, "skill_smoke_uat");
  g_clear_pointer (&answer, json_node_unref);

  /* A typed skill tool refuses sign-in options before anything runs. */
  answer = call_tool (session, "skill_smoke_uat", "{\"url\":\"https://example.test\","
                                                  "\"options\":{\"session\":{\"profileId\":\"p\"}}}");
  result = result_of (answer);
  g_assert_cmpstr (error_code_in_result (result), ==, "invalid_input");
  g_assert_nonnull (strstr (json_object_get_string_member (
                              json_array_get_object_element (
                                json_object_get_array_member (result, "content"), 0), "text"),
                            "Signed-in skill runs are not available yet: remove "
                            "session.profileId"));
  g_clear_pointer (&answer, json_node_unref);

  /* A missing arguments member is {}. */
  answer = send_node (session, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\","
                               "\"params\":{\"name\":\"scrape\"}}");
  g_assert_cmpstr (error_code_in_result (result_of (answer)), ==, "invalid_input");
}

static void
test_progress (void)
{
  g_autoptr(SightMcpRegistry) registry = test_registry ();
  g_autoptr(SightMcpServer) server = sight_mcp_server_new (registry);
  g_autoptr(SightMcpSession) session = sight_mcp_server_create_session (server);
  Exchange exchange = { NULL, FALSE, g_ptr_array_new_with_free_func ((GDestroyNotify) json_node_unref) };
  JsonObject *structured;

  initialize (session, "2025-06-18");
  sight_mcp_session_handle_text_async (session,
                                       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                                       "\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":"
                                       "\"hi\",\"waitSeconds\":500},\"_meta\":"
                                       "{\"progressToken\":\"tok\"}}}",
                                       -1, exchange_notify_cb, &exchange, exchange_done_cb,
                                       &exchange);
  iterate_until (&exchange.done, 10);
  /* Two notifications: the one that did not grow was dropped. */
  g_assert_cmpuint (exchange.notifications->len, ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      JsonObject *note = json_node_get_object (g_ptr_array_index (exchange.notifications, i));
      JsonObject *params = json_object_get_object_member (note, "params");

      g_assert_cmpstr (json_object_get_string_member (note, "method"), ==,
                       "notifications/progress");
      g_assert_cmpstr (json_object_get_string_member (params, "progressToken"), ==, "tok");
      g_assert_cmpfloat (json_object_get_double_member (params, "progress"), ==, i + 1);
      g_assert_cmpfloat (json_object_get_double_member (params, "total"), ==, 2);
    }
  structured = json_object_get_object_member (result_of (exchange.answer), "structuredContent");
  g_assert_cmpstr (json_object_get_string_member (structured, "text"), ==, "hi");
  /* The server applied the cap of 90 s to the wait. */
  g_assert_cmpint (json_object_get_int_member (structured, "wait"), ==, 90);
  g_clear_pointer (&exchange.answer, json_node_unref);
  g_ptr_array_unref (exchange.notifications);
}

static void
test_heartbeat_and_wait (void)
{
  g_autoptr(SightMcpRegistry) registry = test_registry ();
  g_autoptr(SightMcpServer) server = sight_mcp_server_new (registry);
  g_autoptr(SightMcpSession) session = sight_mcp_server_create_session (server);
  Exchange exchange = { NULL, FALSE, g_ptr_array_new_with_free_func ((GDestroyNotify) json_node_unref) };
  JsonObject *result;
  double last = -1;

  sight_mcp_set_heartbeat_interval (100);
  initialize (session, "2025-03-26");
  /* slow_running waits at most 1 s (its cap), then answers "running". */
  sight_mcp_session_handle_text_async (session,
                                       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                                       "\"params\":{\"name\":\"slow_running\",\"arguments\":"
                                       "{\"waitSeconds\":60},\"_meta\":{\"progressToken\":7}}}",
                                       -1, exchange_notify_cb, &exchange, exchange_done_cb,
                                       &exchange);
  iterate_until (&exchange.done, 10);
  g_assert_true (slow.wait_over);
  g_assert_false (slow.cancelled);
  result = result_of (exchange.answer);
  g_assert_false (json_object_get_boolean_member_with_default (result, "isError", FALSE));
  g_assert_cmpstr (json_object_get_string_member (
                     json_object_get_object_member (result, "structuredContent"), "status"),
                   ==, "running");
  /* About ten heartbeats in one second, each with the token and growing. */
  g_assert_cmpuint (exchange.notifications->len, >=, 3);
  for (guint i = 0; i < exchange.notifications->len; i++)
    {
      JsonObject *params = json_object_get_object_member (
        json_node_get_object (g_ptr_array_index (exchange.notifications, i)), "params");

      g_assert_cmpint (json_object_get_int_member (params, "progressToken"), ==, 7);
      g_assert_cmpfloat (json_object_get_double_member (params, "progress"), >, last);
      last = json_object_get_double_member (params, "progress");
      g_assert_true (json_object_has_member (params, "message"));
    }
  g_clear_pointer (&exchange.answer, json_node_unref);
  g_ptr_array_unref (exchange.notifications);
  g_clear_object (&slow.call);
  sight_mcp_set_heartbeat_interval (5000);
}

static void
test_silent_handler_times_out (void)
{
  g_autoptr(SightMcpRegistry) registry = test_registry ();
  g_autoptr(SightMcpServer) server = sight_mcp_server_new (registry);
  g_autoptr(SightMcpSession) session = sight_mcp_server_create_session (server);
  g_autoptr(JsonNode) answer = NULL;
  gint64 start;

  initialize (session, "2025-06-18");
  start = g_get_monotonic_time ();
  /* A wait cap of 0 s and a handler that never answers: the server answers
   * [timeout] after its grace period. */
  answer = call_tool (session, "silent", "{}");
  g_assert_cmpstr (error_code_in_result (result_of (answer)), ==, "timeout");
  g_assert_cmpint (g_get_monotonic_time () - start, <, 8 * G_USEC_PER_SEC);
  g_assert_true (sight_mcp_tool_call_is_returned (slow.call));
  g_clear_object (&slow.call);
}

static void
test_cancellation (void)
{
  g_autoptr(SightMcpRegistry) registry = test_registry ();
  g_autoptr(SightMcpServer) server = sight_mcp_server_new (registry);
  g_autoptr(SightMcpSession) session = sight_mcp_server_create_session (server);
  Exchange exchange = { NULL, FALSE, g_ptr_array_new_with_free_func ((GDestroyNotify) json_node_unref) };
  g_autofree char *answer = NULL;

  initialize (session, "2025-06-18");
  sight_mcp_session_handle_text_async (session,
                                       "{\"jsonrpc\":\"2.0\",\"id\":\"long\",\"method\":"
                                       "\"tools/call\",\"params\":{\"name\":\"slow\"}}",
                                       -1, exchange_notify_cb, &exchange, exchange_done_cb,
                                       &exchange);
  g_main_context_iteration (NULL, FALSE);
  g_assert_false (exchange.done);
  g_assert_cmpuint (sight_mcp_session_get_n_running (session), ==, 1);

  /* The same id again while it runs is refused. */
  answer = send (session, "{\"jsonrpc\":\"2.0\",\"id\":\"long\",\"method\":\"tools/call\","
                          "\"params\":{\"name\":\"slow\"}}");
  g_assert_nonnull (strstr (answer, "-32600"));
  g_clear_pointer (&answer, g_free);

  answer = send (session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                          "\"params\":{\"requestId\":\"long\",\"reason\":\"user\"}}");
  g_assert_cmpstr (answer, ==, "(none)");
  iterate_until (&exchange.done, 5);
  /* The tool saw its cancellable fire, and the client gets no answer. */
  g_assert_true (slow.cancelled);
  g_assert_null (exchange.answer);
  g_assert_cmpuint (sight_mcp_session_get_n_running (session), ==, 0);
  g_clear_pointer (&answer, g_free);

  /* The session goes on. */
  answer = send (session, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
  g_assert_cmpstr (answer, ==, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}");
  g_ptr_array_unref (exchange.notifications);
  g_clear_object (&slow.call);
}

static void
test_close_cancels (void)
{
  g_autoptr(SightMcpRegistry) registry = test_registry ();
  g_autoptr(SightMcpServer) server = sight_mcp_server_new (registry);
  g_autoptr(SightMcpSession) session = sight_mcp_server_create_session (server);
  Exchange exchange = { NULL, FALSE, g_ptr_array_new_with_free_func ((GDestroyNotify) json_node_unref) };
  JsonObject *result;
  g_autofree char *answer = NULL;

  initialize (session, "2025-06-18");
  sight_mcp_session_handle_text_async (session,
                                       "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
                                       "\"params\":{\"name\":\"slow\"}}",
                                       -1, exchange_notify_cb, &exchange, exchange_done_cb,
                                       &exchange);
  sight_mcp_server_shutdown (server);
  iterate_until (&exchange.done, 5);
  g_assert_true (slow.cancelled);
  /* Closed, not cancelled by the client: the answer says interrupted. */
  result = result_of (exchange.answer);
  g_assert_cmpstr (error_code_in_result (result), ==, "cancelled");
  g_assert_true (sight_mcp_session_is_closed (session));
  answer = send (session, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"}");
  g_assert_nonnull (strstr (answer, "-32600"));
  g_clear_pointer (&exchange.answer, json_node_unref);
  g_ptr_array_unref (exchange.notifications);
  g_clear_object (&slow.call);
}

/* Tests: stdio over pipes, in process */

typedef struct {
  GDataInputStream *from_server;
  GOutputStream    *to_server;
  SightMcpStdio    *stdio;
  gboolean          finished;
} Pipes;

static void
stdio_done_cb (GObject      *object,
               GAsyncResult *result,
               gpointer      user_data)
{
  Pipes *pipes = user_data;
  g_autoptr(GError) error = NULL;

  g_assert_true (sight_mcp_stdio_run_finish (SIGHT_MCP_STDIO (object), result, &error));
  g_assert_no_error (error);
  pipes->finished = TRUE;
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

static char *
read_line (Pipes *pipes)
{
  LineRead read = { NULL, FALSE };

  g_data_input_stream_read_line_async (pipes->from_server, G_PRIORITY_DEFAULT, NULL, line_cb,
                                       &read);
  iterate_until (&read.done, 10);
  return read.line;
}

static void
write_text (Pipes      *pipes,
            const char *text)
{
  g_autoptr(GError) error = NULL;

  g_output_stream_write_all (pipes->to_server, text, strlen (text), NULL, NULL, &error);
  g_assert_no_error (error);
}

static void
test_stdio_framing (void)
{
  g_autoptr(SightMcpRegistry) registry = test_registry ();
  g_autoptr(SightMcpServer) server = sight_mcp_server_new (registry);
  g_autoptr(GInputStream) server_in = NULL;
  g_autoptr(GOutputStream) server_out = NULL;
  g_autoptr(GInputStream) client_in = NULL;
  g_autoptr(GError) error = NULL;
  Pipes pipes = { 0 };
  int to_server[2], from_server[2];
  char *line;

  g_assert_true (g_unix_open_pipe (to_server, FD_CLOEXEC, &error));
  g_assert_true (g_unix_open_pipe (from_server, FD_CLOEXEC, &error));
  server_in = g_unix_input_stream_new (to_server[0], TRUE);
  server_out = g_unix_output_stream_new (from_server[1], TRUE);
  client_in = g_unix_input_stream_new (from_server[0], TRUE);
  pipes.to_server = g_unix_output_stream_new (to_server[1], TRUE);
  pipes.from_server = g_data_input_stream_new (client_in);
  pipes.stdio = sight_mcp_stdio_new (server, server_in, server_out);
  sight_mcp_stdio_run_async (pipes.stdio, NULL, stdio_done_cb, &pipes);

  /* Garbage, then a request split over two writes, with CRLF and blank
   * lines around: one answer per message, one line each. */
  write_text (&pipes, "}{ garbage\n\n");
  line = read_line (&pipes);
  g_assert_nonnull (strstr (line, "\"code\":-32700"));
  g_free (line);
  write_text (&pipes, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                      "{\"protocolVersion\":\"2025-06-18\",");
  write_text (&pipes, "\"capabilities\":{}}}\r\n");
  line = read_line (&pipes);
  g_assert_true (g_str_has_prefix (line, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"));
  g_assert_null (strchr (line, '\n'));
  g_free (line);
  write_text (&pipes, "\xff\xfe not utf-8\n");
  line = read_line (&pipes);
  g_assert_nonnull (strstr (line, "\"code\":-32700"));
  g_free (line);

  /* Progress and the answer of a call, on their own lines; a multi-line
   * text argument stays on one line, escaped. */
  sight_mcp_set_heartbeat_interval (5000);
  write_text (&pipes, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                      "{\"name\":\"echo\",\"arguments\":{\"text\":\"a\\nb\"},"
                      "\"_meta\":{\"progressToken\":1}}}\n");
  line = read_line (&pipes);
  g_assert_nonnull (strstr (line, "notifications/progress"));
  g_free (line);
  line = read_line (&pipes);
  g_assert_nonnull (strstr (line, "notifications/progress"));
  g_free (line);
  line = read_line (&pipes);
  g_assert_true (g_str_has_prefix (line, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":"));
  g_assert_nonnull (strstr (line, "a\\nb"));
  g_free (line);

  /* A running call, then end of input: the call is cancelled (its work
   * marked interrupted) and the run finishes. */
  write_text (&pipes, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":"
                      "{\"name\":\"slow\"}}\n");
  while (slow.call == NULL || sight_mcp_session_get_n_running (
                                sight_mcp_stdio_get_session (pipes.stdio)) == 0)
    g_main_context_iteration (NULL, TRUE);
  g_output_stream_close (pipes.to_server, NULL, NULL);
  iterate_until (&pipes.finished, 10);
  g_assert_true (slow.cancelled);

  g_clear_object (&slow.call);
  g_clear_object (&pipes.stdio);
  g_clear_object (&pipes.from_server);
  g_clear_object (&pipes.to_server);
}

int
main (int    argc,
      char **argv)
{
  g_autofree char *data_dir = NULL;

  g_test_init (&argc, &argv, NULL);
  /* Skills and runs come from a data folder of the test's own. */
  data_dir = g_dir_make_tmp ("sight-mcp-XXXXXX", NULL);
  g_setenv ("SIGHTLINE_DATA_DIR", data_dir, TRUE);

  g_test_add_func ("/mcp/schema", test_schema);
  g_test_add_func ("/mcp/builtin-schemas", test_builtin_schemas);
  g_test_add_func ("/mcp/waits", test_waits);
  g_test_add_func ("/mcp/protocol-errors", test_protocol_errors);
  g_test_add_func ("/mcp/negotiation", test_negotiation);
  g_test_add_func ("/mcp/batches", test_batches);
  g_test_add_func ("/mcp/skill-schemas-agree", test_skill_schemas_agree);
  g_test_add_func ("/mcp/tools-call", test_tools_call);
  g_test_add_func ("/mcp/progress", test_progress);
  g_test_add_func ("/mcp/heartbeat-and-wait", test_heartbeat_and_wait);
  g_test_add_func ("/mcp/silent-handler-times-out", test_silent_handler_times_out);
  g_test_add_func ("/mcp/cancellation", test_cancellation);
  g_test_add_func ("/mcp/close-cancels", test_close_cancels);
  g_test_add_func ("/mcp/stdio-framing", test_stdio_framing);
  return g_test_run ();
}
