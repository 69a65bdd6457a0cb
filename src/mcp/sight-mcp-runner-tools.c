/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-mcp-runner-tools"

#include "config.h"

#include "sight-mcp-runner-tools.h"

#include "sight-mcp-runner-private.h"

#include "sight-crawl.h"
#include "sight-error.h"
#include "sight-pdf.h"
#include "sight-scrape.h"
#include "sight-session.h"
#include "sight-web-page.h"

/* The tools whose work the runner does. Each handler only adapts: it passes
 * the validated arguments through and turns the runner's answer into the
 * tool's result. */

static void
return_json (SightMcpToolCall *call,
             JsonNode         *node)
{
  g_autofree char *text = json_to_string (node, FALSE);

  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      sight_mcp_tool_call_return_error (call, "internal", NULL,
                                        "%s returned something other than an object",
                                        sight_mcp_tool_call_get_name (call));
      return;
    }
  sight_mcp_tool_call_return_result (call, text, json_node_get_object (node), FALSE);
}

/* scrape and crawl */

static void
scraped_cb (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(SightMcpToolCall) call = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = sight_scrape_finish (result, &error);

  if (node == NULL)
    sight_mcp_tool_call_return_gerror (call, error);
  else
    return_json (call, node);
}

static void
scrape_handler (SightMcpToolCall *call,
                gpointer          user_data)
{
  sight_scrape_async (sight_mcp_tool_call_get_arguments (call),
                      sight_mcp_tool_call_get_cancellable (call), scraped_cb,
                      g_object_ref (call));
}

static void
crawled_cb (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(SightMcpToolCall) call = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = sight_crawl_finish (result, &error);

  if (node == NULL)
    sight_mcp_tool_call_return_gerror (call, error);
  else
    return_json (call, node);
}

static void
crawl_handler (SightMcpToolCall *call,
               gpointer          user_data)
{
  sight_crawl_async (sight_mcp_tool_call_get_arguments (call),
                     sight_mcp_tool_call_get_cancellable (call), crawled_cb,
                     g_object_ref (call));
}

/* pdf: an MCP resource, as the spec says. */

static void
printed_cb (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(SightMcpToolCall) call = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) pdf = sight_pdf_finish (result, &error);
  g_autoptr(JsonArray) content = NULL;
  g_autoptr(JsonObject) item = NULL;
  g_autoptr(JsonObject) resource = NULL;
  g_autofree char *blob = NULL;
  gsize size = 0;
  const guchar *data;

  if (pdf == NULL)
    {
      sight_mcp_tool_call_return_gerror (call, error);
      return;
    }
  data = g_bytes_get_data (pdf, &size);
  blob = g_base64_encode (data, size);
  resource = json_object_new ();
  json_object_set_string_member (resource, "uri", "webagent://quick/pdf");
  json_object_set_string_member (resource, "mimeType", "application/pdf");
  json_object_set_string_member (resource, "blob", blob);
  item = json_object_new ();
  json_object_set_string_member (item, "type", "resource");
  json_object_set_object_member (item, "resource", g_steal_pointer (&resource));
  content = json_array_new ();
  json_array_add_object_element (content, g_steal_pointer (&item));
  sight_mcp_tool_call_return_content (call, content, NULL, FALSE);
}

static void
pdf_handler (SightMcpToolCall *call,
             gpointer          user_data)
{
  sight_pdf_async (sight_mcp_tool_call_get_arguments (call),
                   sight_mcp_tool_call_get_cancellable (call), printed_cb, g_object_ref (call));
}

/* screenshot: a fresh page, loaded, then an MCP image. */

typedef struct {
  SightMcpToolCall       *call;
  SightWebPage           *page;
  SightScreenshotOptions  options;
  char                   *wait_for_text;
  gint64                  deadline;
} Shot;

static gboolean
shot_free_idle_cb (gpointer data)
{
  Shot *shot = data;

  g_clear_object (&shot->call);
  g_clear_object (&shot->page);
  g_free (shot->wait_for_text);
  g_free (shot);
  return G_SOURCE_REMOVE;
}

/* Called from the page's own callbacks: the page is dropped after they
 * returned, not inside them. */
static void
shot_free (Shot *shot)
{
  g_idle_add (shot_free_idle_cb, shot);
}

static void
shot_taken_cb (GObject      *object,
               GAsyncResult *result,
               gpointer      user_data)
{
  Shot *shot = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(SightScreenshot) image = NULL;
  g_autoptr(JsonArray) content = NULL;
  g_autoptr(JsonObject) item = NULL;
  g_autofree char *data = NULL;
  gsize size = 0;
  const guchar *bytes;

  image = sight_web_page_screenshot_finish (SIGHT_WEB_PAGE (object), result, &error);
  if (image == NULL)
    {
      sight_mcp_tool_call_return_gerror (shot->call, error);
      shot_free (shot);
      return;
    }
  bytes = g_bytes_get_data (image->bytes, &size);
  data = g_base64_encode (bytes, size);
  item = json_object_new ();
  json_object_set_string_member (item, "type", "image");
  json_object_set_string_member (item, "data", data);
  json_object_set_string_member (item, "mimeType",
                                 sight_image_format_mime_type (shot->options.format));
  content = json_array_new ();
  json_array_add_object_element (content, g_steal_pointer (&item));
  sight_mcp_tool_call_return_content (shot->call, content, NULL, FALSE);
  shot_free (shot);
}

static void
shot_take (Shot *shot)
{
  sight_web_page_screenshot_async (shot->page, &shot->options,
                                   sight_mcp_tool_call_get_cancellable (shot->call),
                                   shot_taken_cb, shot);
}

static void
shot_text_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  Shot *shot = user_data;
  g_autoptr(GError) error = NULL;

  if (!sight_page_wait_for_text_finish (SIGHT_WEB_PAGE (object), result, &error))
    {
      sight_mcp_tool_call_return_gerror (shot->call, error);
      shot_free (shot);
      return;
    }
  shot_take (shot);
}

static void
shot_loaded_cb (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  Shot *shot = user_data;
  g_autoptr(GError) error = NULL;

  if (!sight_web_page_load_finish (SIGHT_WEB_PAGE (object), result, &error))
    {
      sight_mcp_tool_call_return_gerror (shot->call, error);
      shot_free (shot);
      return;
    }
  if (shot->wait_for_text != NULL)
    sight_page_wait_for_text_async (shot->page, shot->wait_for_text, shot->deadline,
                                    sight_mcp_tool_call_get_cancellable (shot->call),
                                    shot_text_cb, shot);
  else
    shot_take (shot);
}

/* Arguments the runner does not act on yet are refused by name rather than
 * silently ignored. */
static gboolean
refuse_unsupported (SightMcpToolCall   *call,
                    const char * const *names)
{
  JsonObject *args = sight_mcp_tool_call_get_arguments (call);

  for (guint i = 0; names[i] != NULL; i++)
    if (json_object_has_member (args, names[i]))
      {
        g_autoptr(JsonObject) details = json_object_new ();
        g_autoptr(JsonArray) issues = json_array_new ();
        g_autoptr(JsonObject) issue = json_object_new ();
        g_autoptr(JsonArray) path = json_array_new ();
        g_autofree char *message =
          g_strdup_printf ("%s is not supported by %s in this build of Sightline yet",
                           names[i], sight_mcp_tool_call_get_name (call));

        json_array_add_string_element (path, names[i]);
        json_object_set_array_member (issue, "path", g_steal_pointer (&path));
        json_object_set_string_member (issue, "message", message);
        json_array_add_object_element (issues, g_steal_pointer (&issue));
        json_object_set_array_member (details, "issues", g_steal_pointer (&issues));
        sight_mcp_tool_call_return_error (call, "invalid_input", details, "%s", message);
        return TRUE;
      }
  return FALSE;
}

static void
screenshot_handler (SightMcpToolCall *call,
                    gpointer          user_data)
{
  static const char * const unsupported[] = {
    "engine", "device", "block", "allowHosts", "proxyUrl", NULL,
  };
  JsonObject *args = sight_mcp_tool_call_get_arguments (call);
  SightWaitUntil wait_until;
  gint64 timeout_ms;
  Shot *shot;

  if (refuse_unsupported (call, unsupported))
    return;

  shot = g_new0 (Shot, 1);
  shot->call = g_object_ref (call);
  shot->options = (SightScreenshotOptions) SIGHT_SCREENSHOT_OPTIONS_INIT;
  /* The schema checked every type and range; the defaults are the spec's. */
  shot->options.full_page = json_object_get_boolean_member_with_default (args, "fullPage", TRUE);
  sight_image_format_from_string (json_object_get_string_member_with_default (args, "format",
                                                                              "png"),
                                  &shot->options.format);
  shot->options.quality = json_object_get_int_member_with_default (args, "quality", -1);
  sight_wait_until_from_string (json_object_get_string_member_with_default (args, "waitUntil",
                                                                            "load"),
                                &wait_until);
  timeout_ms = json_object_get_int_member_with_default (args, "timeoutMs", 30000);
  shot->deadline = g_get_monotonic_time () + timeout_ms * 1000;
  shot->wait_for_text = g_strdup (json_object_get_string_member_with_default (args,
                                                                              "waitForText",
                                                                              NULL));
  shot->page = sight_web_page_new ();
  if (json_object_has_member (args, "viewport"))
    {
      JsonObject *viewport = json_object_get_object_member (args, "viewport");

      sight_web_page_set_viewport (shot->page,
                                   json_object_get_int_member (viewport, "width"),
                                   json_object_get_int_member (viewport, "height"),
                                   json_object_get_double_member_with_default (
                                     viewport, "deviceScaleFactor", 1.0));
    }
  sight_web_page_load_async (shot->page, json_object_get_string_member (args, "url"), wait_until,
                             (guint) timeout_ms, sight_mcp_tool_call_get_cancellable (call),
                             shot_loaded_cb, shot);
}

/* Sessions */

static void
session_created_cb (GObject      *object,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  g_autoptr(SightMcpToolCall) call = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(SightSession) session = NULL;
  g_autoptr(JsonNode) record = NULL;

  session = sight_session_registry_create_finish (SIGHT_SESSION_REGISTRY (object), result,
                                                  &error);
  if (session == NULL)
    {
      sight_mcp_tool_call_return_gerror (call, error);
      return;
    }
  record = sight_session_to_json (session);
  return_json (call, record);
}

static void
create_session_handler (SightMcpToolCall *call,
                        gpointer          user_data)
{
  sight_session_registry_create_async (sight_session_registry_get_default (),
                                       sight_mcp_tool_call_get_arguments (call),
                                       sight_mcp_tool_call_get_cancellable (call),
                                       session_created_cb, g_object_ref (call));
}

static void
list_sessions_handler (SightMcpToolCall *call,
                       gpointer          user_data)
{
  g_autoptr(GPtrArray) sessions = NULL;
  g_autoptr(JsonObject) structured = json_object_new ();
  g_autoptr(JsonArray) list = json_array_new ();
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);

  sessions = sight_session_registry_list (sight_session_registry_get_default (), 200);
  for (guint i = 0; i < sessions->len; i++)
    json_array_add_element (list, sight_session_to_json (g_ptr_array_index (sessions, i)));
  json_object_set_array_member (structured, "sessions", g_steal_pointer (&list));
  json_node_set_object (node, structured);
  return_json (call, node);
}

/* sessionId, or its deprecated alias id (the check made sure they agree). */
static const char *
session_id_argument (SightMcpToolCall *call)
{
  JsonObject *args = sight_mcp_tool_call_get_arguments (call);

  if (json_object_has_member (args, "sessionId"))
    return json_object_get_string_member (args, "sessionId");
  return json_object_get_string_member (args, "id");
}

static void
get_session_handler (SightMcpToolCall *call,
                     gpointer          user_data)
{
  const char *id = session_id_argument (call);
  SightSession *session = sight_session_registry_lookup (sight_session_registry_get_default (),
                                                         id);
  g_autoptr(JsonNode) record = NULL;

  if (session == NULL)
    {
      g_autofree char *safe = sight_text_sanitize (id, 100);
      sight_mcp_tool_call_return_error (call, "not_found", NULL, "No session %s", safe);
      return;
    }
  record = sight_session_to_json (session);
  return_json (call, record);
}

static void
stop_session_handler (SightMcpToolCall *call,
                      gpointer          user_data)
{
  SightSession *session = sight_session_registry_lookup (sight_session_registry_get_default (),
                                                         session_id_argument (call));
  g_autoptr(JsonObject) structured = json_object_new ();
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
  gboolean closed = FALSE;

  /* Safe to repeat: an unknown id is deleted: false, not an error. */
  if (session != NULL)
    closed = sight_session_stop (session, "stopped");
  json_object_set_boolean_member (structured, "deleted", session != NULL);
  json_object_set_boolean_member (structured, "closed", closed);
  json_node_set_object (node, structured);
  return_json (call, node);
}

static const struct {
  const char          *tool;
  SightMcpToolHandler  handler;
} runner_tools[] = {
  { "create_session", create_session_handler },
  { "list_sessions", list_sessions_handler },
  { "get_session", get_session_handler },
  { "stop_session", stop_session_handler },
  { "scrape", scrape_handler },
  { "screenshot", screenshot_handler },
  { "pdf", pdf_handler },
  { "crawl", crawl_handler },
};

void
sight_mcp_runner_tools_install (SightMcpRegistry *registry)
{
  g_return_if_fail (SIGHT_IS_MCP_REGISTRY (registry));

  for (guint i = 0; i < G_N_ELEMENTS (runner_tools); i++)
    if (!sight_mcp_registry_set_handler (registry, runner_tools[i].tool, runner_tools[i].handler,
                                         NULL, NULL))
      g_warning ("no tool %s to install", runner_tools[i].tool);
  _sight_mcp_report_tools_install (registry);
  _sight_mcp_step_tools_install (registry);
  _sight_mcp_task_tools_install (registry);
  _sight_mcp_skill_tools_install (registry);
}
