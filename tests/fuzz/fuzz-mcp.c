/* fuzz-mcp.c: the JSON-RPC handling of an MCP session
 * (sight_mcp_session_handle_text_async) on arbitrary text.  Each line of the
 * input is one message to the same session, so later lines reach the
 * states after initialize.  The registry holds one tool, "echo", that
 * answers at once with its arguments. */
#include "config.h"

#include <stdlib.h>

#include "sight-mcp-server.h"
#include "sight-mcp-tool.h"
#include "sight-fuzz.h"

typedef struct {
  gboolean  done;
  JsonNode *answer;
} Exchange;

static void
echo_handler (SightMcpToolCall *call,
              gpointer          user_data)
{
  sight_mcp_tool_call_return_result (call, "echo", NULL, FALSE);
}

static void
notify_cb (JsonNode *message,
           gpointer  user_data)
{
}

static void
done_cb (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  Exchange *exchange = user_data;
  g_autoptr(GError) error = NULL;

  exchange->answer = sight_mcp_session_handle_finish (SIGHT_MCP_SESSION (object), result, &error);
  exchange->done = TRUE;
}

static SightMcpServer *
fuzz_server (void)
{
  static SightMcpServer *server;

  if (server == NULL)
    {
      g_autoptr(SightMcpRegistry) registry = sight_mcp_registry_new ();
      g_autoptr(JsonNode) schema = json_from_string ("{\"type\":\"object\",\"properties\":"
                                                     "{\"text\":{\"type\":\"string\"}}}", NULL);
      SightMcpToolInfo info = { 0 };

      info.name = "echo";
      info.description = "Answers at once";
      info.input_schema = json_node_get_object (schema);
      info.handler = echo_handler;
      sight_mcp_registry_add (registry, &info, NULL, NULL);
      server = sight_mcp_server_new (registry);
    }
  return server;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autofree char *text = sight_fuzz_dup_text (data, size);
  g_auto(GStrv) lines = g_strsplit (text, "\n", 8);
  g_autoptr(SightMcpSession) session = sight_mcp_server_create_session (fuzz_server ());

  for (guint i = 0; lines[i] != NULL; i++)
    {
      Exchange exchange = { FALSE, NULL };
      gint64 deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;

      sight_mcp_session_handle_text_async (session, lines[i], -1, notify_cb, NULL,
                                           done_cb, &exchange);
      /* Nothing here waits on the network: every message is answered at
       * once, so a message still pending after 5 s is a hang. */
      while (!exchange.done)
        {
          if (g_get_monotonic_time () > deadline)
            {
              g_printerr ("message %u was not answered in 5 s\n", i + 1);
              abort ();
            }
          g_main_context_iteration (NULL, FALSE);
        }
      g_clear_pointer (&exchange.answer, json_node_unref);
    }
  sight_mcp_session_close (session);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  return 0;
}
