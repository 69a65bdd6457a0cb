/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Shared by the MCP tool tests: an in-process server session and a call()
 * that answers with the tools/call result. */
#pragma once

#include <gtk/gtk.h>
#include <string.h>

#include "sight-mcp-server.h"
#include "sight-mcp-tools.h"

static SightMcpServer *server;
static SightMcpSession *session;

typedef struct {
  JsonNode *answer;
  gboolean  done;
} Exchange;

G_GNUC_UNUSED static void
done_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  Exchange *exchange = user_data;
  g_autoptr(GError) error = NULL;

  exchange->answer = sight_mcp_session_handle_finish (SIGHT_MCP_SESSION (object), result, &error);
  g_assert_no_error (error);
  exchange->done = TRUE;
}

G_GNUC_UNUSED static gboolean
deadline_cb (gpointer data)
{
  g_error ("no answer in 50 s");
  return G_SOURCE_REMOVE;
}

G_GNUC_UNUSED static JsonObject *
call (const char *name,
      const char *arguments_format,
      ...) G_GNUC_PRINTF (2, 3);

/* Calls @name and returns its result object. */
G_GNUC_UNUSED static JsonObject *
call (const char *name,
      const char *arguments_format,
      ...)
{
  g_autofree char *arguments = NULL;
  g_autofree char *request = NULL;
  Exchange exchange = { NULL, FALSE };
  JsonObject *result;
  guint deadline;
  va_list args;

  va_start (args, arguments_format);
  arguments = g_strdup_vprintf (arguments_format, args);
  va_end (args);
  request = g_strdup_printf ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                             "\"params\":{\"name\":\"%s\",\"arguments\":%s}}", name, arguments);
  deadline = g_timeout_add_seconds (50, deadline_cb, NULL);
  sight_mcp_session_handle_text_async (session, request, -1, NULL, NULL, done_cb, &exchange);
  while (!exchange.done)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (deadline);
  result = json_object_ref (json_object_get_object_member (json_node_get_object (exchange.answer),
                                                           "result"));
  json_node_unref (exchange.answer);
  return result;
}

G_GNUC_UNUSED static gboolean
is_error (JsonObject *result)
{
  return json_object_get_boolean_member_with_default (result, "isError", FALSE);
}

G_GNUC_UNUSED static JsonObject *
structured (JsonObject *result)
{
  return json_object_get_object_member (result, "structuredContent");
}

G_GNUC_UNUSED static const char *
error_code (JsonObject *result)
{
  return json_object_get_string_member (json_object_get_object_member (structured (result),
                                                                       "error"), "code");
}

G_GNUC_UNUSED static const char *
text_of (JsonObject *result)
{
  return json_object_get_string_member (
    json_array_get_object_element (json_object_get_array_member (result, "content"), 0), "text");
}

/* A server with the built-in tools and one initialized session. */
G_GNUC_UNUSED static void
mcp_start (void)
{
  g_autoptr(SightMcpRegistry) registry = sight_mcp_registry_new_builtin ();
  Exchange exchange = { NULL, FALSE };

  server = sight_mcp_server_new (registry);
  session = sight_mcp_server_create_session (server);
  sight_mcp_session_handle_text_async (session,
                                       "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
                                       "\"params\":{\"protocolVersion\":\"2025-06-18\"}}",
                                       -1, NULL, NULL, done_cb, &exchange);
  while (!exchange.done)
    g_main_context_iteration (NULL, TRUE);
  json_node_unref (exchange.answer);
}

G_GNUC_UNUSED static void
mcp_stop (void)
{
  sight_mcp_server_shutdown (server);
  g_clear_object (&session);
  g_clear_object (&server);
}
