/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-mcp-tool"

#include "config.h"

#include "sight-mcp-tool.h"

#include <gio/gio.h>

#include "sight-error.h"
#include "sight-mcp-server.h"
#include "sight-mcp-tool-private.h"

/* How long a handler may stay silent after its wait ended. */
#define WAIT_GRACE_SECONDS 5
/* The heartbeat of a running call, for clients that asked for progress. */
static guint heartbeat_ms = 5000;

struct _SightMcpToolCall
{
  GObject               parent_instance;

  /* owned */
  SightMcpTool         *tool;
  JsonObject           *arguments;
  GCancellable         *cancellable;
  GCancellable         *wait_cancellable;
  gulong                cancelled_id;
  guint                 wait_source;
  guint                 grace_source;
  guint                 heartbeat_source;
  gint64                started_at;
  int                   wait_seconds;
  gboolean              wants_progress;
  gboolean              handler_reported;
  gboolean              returned;
  double                last_progress;

  /* borrowed: the server, until detached */
  SightMcpReturnFunc    return_func;
  SightMcpProgressFunc  progress_func;
  gpointer              user_data;
};

G_DEFINE_FINAL_TYPE (SightMcpToolCall, sight_mcp_tool_call, G_TYPE_OBJECT)

static void
stop_timers (SightMcpToolCall *self)
{
  g_clear_handle_id (&self->wait_source, g_source_remove);
  g_clear_handle_id (&self->grace_source, g_source_remove);
  g_clear_handle_id (&self->heartbeat_source, g_source_remove);
}

static void
sight_mcp_tool_call_dispose (GObject *object)
{
  SightMcpToolCall *self = SIGHT_MCP_TOOL_CALL (object);

  stop_timers (self);
  /* Not g_cancellable_disconnect(): the last reference may go away inside
   * the cancellable's own emission, where that would wait forever. */
  if (self->cancelled_id != 0)
    g_clear_signal_handler (&self->cancelled_id, self->cancellable);
  G_OBJECT_CLASS (sight_mcp_tool_call_parent_class)->dispose (object);
}

static void
sight_mcp_tool_call_finalize (GObject *object)
{
  SightMcpToolCall *self = SIGHT_MCP_TOOL_CALL (object);

  g_clear_pointer (&self->tool, _sight_mcp_tool_unref);
  g_clear_pointer (&self->arguments, json_object_unref);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->wait_cancellable);
  G_OBJECT_CLASS (sight_mcp_tool_call_parent_class)->finalize (object);
}

static void
sight_mcp_tool_call_class_init (SightMcpToolCallClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = sight_mcp_tool_call_dispose;
  object_class->finalize = sight_mcp_tool_call_finalize;
}

static void
sight_mcp_tool_call_init (SightMcpToolCall *self)
{
  self->wait_seconds = -1;
  self->last_progress = -1;
}

SightMcpTool *
_sight_mcp_tool_ref (SightMcpTool *tool)
{
  return g_atomic_rc_box_acquire (tool);
}

static void
tool_clear (SightMcpTool *tool)
{
  if (tool->destroy != NULL)
    tool->destroy (tool->user_data);
  g_free (tool->name);
  g_free (tool->description);
  g_free (tool->wait_argument);
  g_clear_pointer (&tool->input_schema, json_node_unref);
  g_clear_pointer (&tool->output_schema, json_node_unref);
  g_clear_pointer (&tool->annotations, json_node_unref);
}

void
_sight_mcp_tool_unref (SightMcpTool *tool)
{
  g_atomic_rc_box_release_full (tool, (GDestroyNotify) tool_clear);
}

const char *
sight_mcp_tool_get_name (SightMcpTool *tool)
{
  return tool->name;
}

JsonNode *
sight_mcp_tool_get_input_schema (SightMcpTool *tool)
{
  return tool->input_schema;
}

int
_sight_mcp_tool_resolve_wait (SightMcpTool *tool,
                              JsonObject   *arguments)
{
  g_auto(GStrv) parts = NULL;
  JsonObject *object = arguments;
  JsonNode *node = NULL;
  gint64 wait;

  if (tool->wait_argument == NULL)
    return -1;

  parts = g_strsplit (tool->wait_argument, "/", -1);
  for (guint i = 0; parts[i] != NULL && object != NULL; i++)
    {
      node = json_object_get_member (object, parts[i]);
      if (node == NULL)
        break;
      if (parts[i + 1] != NULL)
        {
          object = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
          node = NULL;
        }
    }

  if (node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
      json_node_get_value_type (node) == G_TYPE_INT64)
    wait = json_node_get_int (node);
  else if (node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
           json_node_get_value_type (node) == G_TYPE_DOUBLE)
    wait = (gint64) json_node_get_double (node);
  else
    wait = tool->wait_default;

  return (int) CLAMP (wait, 0, tool->wait_cap);
}

static void
cancelled_cb (GCancellable     *cancellable,
              SightMcpToolCall *self)
{
  /* May run in another thread when work is cancelled there; cancelling a
   * GCancellable is thread-safe. */
  g_cancellable_cancel (self->wait_cancellable);
}

SightMcpToolCall *
_sight_mcp_tool_call_new (SightMcpTool         *tool,
                          JsonObject           *arguments,
                          GCancellable         *cancellable,
                          gboolean              wants_progress,
                          SightMcpReturnFunc    return_func,
                          SightMcpProgressFunc  progress_func,
                          gpointer              user_data)
{
  SightMcpToolCall *self = g_object_new (SIGHT_TYPE_MCP_TOOL_CALL, NULL);

  self->tool = _sight_mcp_tool_ref (tool);
  self->arguments = json_object_ref (arguments);
  self->cancellable = cancellable != NULL ? g_object_ref (cancellable) : g_cancellable_new ();
  self->wait_cancellable = g_cancellable_new ();
  self->cancelled_id = g_signal_connect (self->cancellable, "cancelled",
                                         G_CALLBACK (cancelled_cb), self);
  if (g_cancellable_is_cancelled (self->cancellable))
    g_cancellable_cancel (self->wait_cancellable);
  self->wait_seconds = _sight_mcp_tool_resolve_wait (tool, arguments);
  self->wants_progress = wants_progress;
  self->return_func = return_func;
  self->progress_func = progress_func;
  self->user_data = user_data;
  return self;
}

static gboolean
grace_cb (gpointer data)
{
  SightMcpToolCall *self = data;

  self->grace_source = 0;
  sight_mcp_tool_call_return_error (self, "timeout", NULL,
                                    "%s did not answer within its wait of %d s", self->tool->name,
                                    self->wait_seconds);
  return G_SOURCE_REMOVE;
}

static gboolean
wait_cb (gpointer data)
{
  SightMcpToolCall *self = data;

  self->wait_source = 0;
  g_debug ("%s: the wait of %d s is over", self->tool->name, self->wait_seconds);
  g_cancellable_cancel (self->wait_cancellable);
  if (!self->returned)
    self->grace_source = g_timeout_add_seconds (WAIT_GRACE_SECONDS, grace_cb, self);
  return G_SOURCE_REMOVE;
}

static void
emit_progress (SightMcpToolCall *self,
               double            progress,
               double            total,
               const char       *message)
{
  if (!self->wants_progress || self->returned || self->progress_func == NULL)
    return;
  /* Progress must grow from one notification to the next. */
  if (progress <= self->last_progress)
    return;
  self->last_progress = progress;
  self->progress_func (self, progress, total, message, self->user_data);
}

static gboolean
heartbeat_cb (gpointer data)
{
  SightMcpToolCall *self = data;
  double elapsed = (g_get_monotonic_time () - self->started_at) / (double) G_USEC_PER_SEC;
  g_autofree char *message = NULL;

  if (self->handler_reported)
    {
      self->heartbeat_source = 0;
      return G_SOURCE_REMOVE;
    }
  if (self->wait_seconds >= 0)
    message = g_strdup_printf ("%s: waiting, %.0f s of at most %d s", self->tool->name,
                               elapsed, self->wait_seconds);
  else
    message = g_strdup_printf ("%s: working, %.0f s", self->tool->name, elapsed);
  emit_progress (self, elapsed, self->wait_seconds > 0 ? self->wait_seconds : 0, message);
  return G_SOURCE_CONTINUE;
}

void
sight_mcp_set_heartbeat_interval (guint milliseconds)
{
  heartbeat_ms = MAX (milliseconds, 10);
}

void
_sight_mcp_tool_call_run (SightMcpToolCall *self)
{
  g_autoptr(SightMcpToolCall) hold = g_object_ref (self);

  self->started_at = g_get_monotonic_time ();
  if (self->wait_seconds >= 0)
    self->wait_source = g_timeout_add_seconds (self->wait_seconds, wait_cb, self);
  if (self->wants_progress)
    self->heartbeat_source = g_timeout_add (heartbeat_ms, heartbeat_cb, self);
  self->tool->handler (self, self->tool->user_data);
}

void
_sight_mcp_tool_call_detach (SightMcpToolCall *self)
{
  self->return_func = NULL;
  self->progress_func = NULL;
}

const char *
sight_mcp_tool_call_get_name (SightMcpToolCall *self)
{
  g_return_val_if_fail (SIGHT_IS_MCP_TOOL_CALL (self), NULL);
  return self->tool->name;
}

JsonObject *
sight_mcp_tool_call_get_arguments (SightMcpToolCall *self)
{
  g_return_val_if_fail (SIGHT_IS_MCP_TOOL_CALL (self), NULL);
  return self->arguments;
}

GCancellable *
sight_mcp_tool_call_get_cancellable (SightMcpToolCall *self)
{
  g_return_val_if_fail (SIGHT_IS_MCP_TOOL_CALL (self), NULL);
  return self->cancellable;
}

int
sight_mcp_tool_call_get_wait_seconds (SightMcpToolCall *self)
{
  g_return_val_if_fail (SIGHT_IS_MCP_TOOL_CALL (self), -1);
  return self->wait_seconds;
}

GCancellable *
sight_mcp_tool_call_get_wait_cancellable (SightMcpToolCall *self)
{
  g_return_val_if_fail (SIGHT_IS_MCP_TOOL_CALL (self), NULL);
  return self->wait_cancellable;
}

gboolean
sight_mcp_tool_call_is_returned (SightMcpToolCall *self)
{
  g_return_val_if_fail (SIGHT_IS_MCP_TOOL_CALL (self), TRUE);
  return self->returned;
}

void
sight_mcp_tool_call_report_progress (SightMcpToolCall *self,
                                     double            progress,
                                     double            total,
                                     const char       *message)
{
  g_return_if_fail (SIGHT_IS_MCP_TOOL_CALL (self));

  self->handler_reported = TRUE;
  emit_progress (self, progress, total, message);
}

static void
finish (SightMcpToolCall *self,
        JsonObject       *result)
{
  SightMcpReturnFunc return_func = self->return_func;
  g_autoptr(SightMcpToolCall) hold = g_object_ref (self);

  if (self->returned)
    {
      g_warning ("%s answered twice; the second answer is dropped", self->tool->name);
      return;
    }
  self->returned = TRUE;
  stop_timers (self);
  self->return_func = NULL;
  self->progress_func = NULL;
  if (return_func != NULL)
    return_func (self, result, self->user_data);
}

static JsonArray *
text_content (const char *text)
{
  JsonArray *content = json_array_new ();
  g_autoptr(JsonObject) item = json_object_new ();

  json_object_set_string_member (item, "type", "text");
  json_object_set_string_member (item, "text", text != NULL ? text : "");
  json_array_add_object_element (content, g_steal_pointer (&item));
  return content;
}

void
sight_mcp_tool_call_return_content (SightMcpToolCall *self,
                                    JsonArray        *content,
                                    JsonObject       *structured,
                                    gboolean          is_error)
{
  g_autoptr(JsonObject) result = json_object_new ();

  g_return_if_fail (SIGHT_IS_MCP_TOOL_CALL (self));
  g_return_if_fail (content != NULL);

  json_object_set_array_member (result, "content", json_array_ref (content));
  if (structured != NULL)
    json_object_set_object_member (result, "structuredContent", json_object_ref (structured));
  if (is_error)
    json_object_set_boolean_member (result, "isError", TRUE);
  finish (self, result);
}

void
sight_mcp_tool_call_return_result (SightMcpToolCall *self,
                                   const char       *text,
                                   JsonObject       *structured,
                                   gboolean          is_error)
{
  g_autoptr(JsonArray) content = NULL;
  g_autofree char *fallback = NULL;

  g_return_if_fail (SIGHT_IS_MCP_TOOL_CALL (self));

  /* Clients that do not read structuredContent get the same data as text. */
  if (text == NULL && structured != NULL)
    {
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);

      json_node_set_object (node, structured);
      fallback = json_to_string (node, FALSE);
      text = fallback;
    }
  content = text_content (text);
  sight_mcp_tool_call_return_content (self, content, structured, is_error);
}

void
sight_mcp_tool_call_return_error (SightMcpToolCall *self,
                                  const char       *code,
                                  JsonObject       *details,
                                  const char       *format,
                                  ...)
{
  g_autoptr(JsonObject) structured = json_object_new ();
  g_autoptr(JsonObject) error = json_object_new ();
  g_autofree char *raw = NULL;
  g_autofree char *message = NULL;
  g_autofree char *text = NULL;
  va_list args;

  g_return_if_fail (SIGHT_IS_MCP_TOOL_CALL (self));
  g_return_if_fail (code != NULL);

  va_start (args, format);
  raw = g_strdup_vprintf (format, args);
  va_end (args);
  message = sight_text_sanitize (raw, 2000);

  json_object_set_string_member (error, "code", code);
  json_object_set_string_member (error, "message", message);
  if (details != NULL)
    json_object_set_object_member (error, "details", json_object_ref (details));
  json_object_set_object_member (structured, "error", g_steal_pointer (&error));
  text = g_strdup_printf ("[%s] %s", code, message);
  sight_mcp_tool_call_return_result (self, text, structured, TRUE);
}

const char *
sight_mcp_error_code_for_error (const GError *error)
{
  if (error->domain == SIGHT_ERROR)
    {
      switch ((SightErrorCode) error->code)
        {
        case SIGHT_ERROR_INVALID_ARGUMENT:
          return "invalid_input";
        case SIGHT_ERROR_STEP_TIMEOUT:
          return "timeout";
        case SIGHT_ERROR_POLICY_DENIED:
          return "navigation_blocked";
        case SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE:
        case SIGHT_ERROR_UNSUPPORTED_CAPABILITY:
          return "unavailable";
        default:
          return "internal";
        }
    }
  if (error->domain == G_IO_ERROR)
    {
      switch (error->code)
        {
        case G_IO_ERROR_NOT_FOUND:
          return "not_found";
        case G_IO_ERROR_CANCELLED:
          return "cancelled";
        case G_IO_ERROR_TIMED_OUT:
          return "timeout";
        case G_IO_ERROR_NOT_SUPPORTED:
          return "unavailable";
        case G_IO_ERROR_INVALID_ARGUMENT:
          return "invalid_input";
        case G_IO_ERROR_BUSY:
          return "capacity_exceeded";
        default:
          return "internal";
        }
    }
  return "internal";
}

void
sight_mcp_tool_call_return_gerror (SightMcpToolCall *self,
                                   const GError     *error)
{
  g_autoptr(JsonObject) details = NULL;

  g_return_if_fail (SIGHT_IS_MCP_TOOL_CALL (self));
  g_return_if_fail (error != NULL);

  if (error->domain == SIGHT_ERROR)
    {
      /* The step's own code stays visible next to the service code. */
      details = json_object_new ();
      json_object_set_string_member (details, "sightCode",
                                     sight_error_code_to_string (error->code));
      json_object_set_boolean_member (details, "blocked",
                                      sight_error_code_is_blocked (error->code));
    }
  else if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_BUSY))
    {
      /* The retry hint of a capacity_exceeded answer. */
      details = json_object_new ();
      json_object_set_int_member (details, "retryAfterMs", SIGHT_MCP_CAPACITY_RETRY_MS);
    }
  sight_mcp_tool_call_return_error (self, sight_mcp_error_code_for_error (error), details, "%s",
                                    error->message);
}

/* The registry */

struct _SightMcpRegistry
{
  GObject    parent_instance;

  GPtrArray *tools;   /* SightMcpTool, registration order */
};

G_DEFINE_FINAL_TYPE (SightMcpRegistry, sight_mcp_registry, G_TYPE_OBJECT)

static void
sight_mcp_registry_finalize (GObject *object)
{
  SightMcpRegistry *self = SIGHT_MCP_REGISTRY (object);

  g_clear_pointer (&self->tools, g_ptr_array_unref);
  G_OBJECT_CLASS (sight_mcp_registry_parent_class)->finalize (object);
}

static void
sight_mcp_registry_class_init (SightMcpRegistryClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sight_mcp_registry_finalize;
}

static void
sight_mcp_registry_init (SightMcpRegistry *self)
{
  self->tools = g_ptr_array_new_with_free_func ((GDestroyNotify) _sight_mcp_tool_unref);
}

SightMcpRegistry *
sight_mcp_registry_new (void)
{
  return g_object_new (SIGHT_TYPE_MCP_REGISTRY, NULL);
}

static gboolean
find_index (SightMcpRegistry *self,
            const char       *name,
            guint            *out_index)
{
  for (guint i = 0; i < self->tools->len; i++)
    {
      SightMcpTool *tool = g_ptr_array_index (self->tools, i);

      if (g_str_equal (tool->name, name))
        {
          *out_index = i;
          return TRUE;
        }
    }
  return FALSE;
}

static JsonNode *
object_node_copy (JsonObject *object)
{
  g_autoptr(JsonNode) node = NULL;

  if (object == NULL)
    return NULL;
  node = json_node_new (JSON_NODE_OBJECT);
  json_node_set_object (node, object);
  return json_node_copy (node);
}

void
sight_mcp_registry_add (SightMcpRegistry       *self,
                        const SightMcpToolInfo *info,
                        gpointer                user_data,
                        GDestroyNotify          destroy)
{
  SightMcpTool *tool;
  guint index;

  g_return_if_fail (SIGHT_IS_MCP_REGISTRY (self));
  g_return_if_fail (info != NULL && info->name != NULL && info->input_schema != NULL);
  g_return_if_fail (info->handler != NULL);

  tool = g_atomic_rc_box_new0 (SightMcpTool);
  tool->name = g_strdup (info->name);
  tool->description = g_strdup (info->description != NULL ? info->description : "");
  tool->input_schema = object_node_copy (info->input_schema);
  tool->output_schema = object_node_copy (info->output_schema);
  tool->annotations = object_node_copy (info->annotations);
  tool->wait_argument = g_strdup (info->wait_argument);
  tool->wait_default = info->wait_default;
  tool->wait_cap = info->wait_cap;
  tool->check = info->check;
  tool->handler = info->handler;
  tool->user_data = user_data;
  tool->destroy = destroy;

  if (find_index (self, info->name, &index))
    {
      _sight_mcp_tool_unref (g_ptr_array_index (self->tools, index));
      g_ptr_array_index (self->tools, index) = tool;
    }
  else
    g_ptr_array_add (self->tools, tool);
}

gboolean
sight_mcp_registry_remove (SightMcpRegistry *self,
                           const char       *name)
{
  guint index;

  g_return_val_if_fail (SIGHT_IS_MCP_REGISTRY (self), FALSE);

  if (!find_index (self, name, &index))
    return FALSE;
  g_ptr_array_remove_index (self->tools, index);
  return TRUE;
}

gboolean
sight_mcp_registry_set_handler (SightMcpRegistry    *self,
                                const char          *name,
                                SightMcpToolHandler  handler,
                                gpointer             user_data,
                                GDestroyNotify       destroy)
{
  SightMcpTool *old;
  SightMcpToolInfo info = { 0 };
  guint index;

  g_return_val_if_fail (SIGHT_IS_MCP_REGISTRY (self), FALSE);

  if (!find_index (self, name, &index))
    return FALSE;
  old = _sight_mcp_tool_ref (g_ptr_array_index (self->tools, index));
  info.name = old->name;
  info.description = old->description;
  info.input_schema = json_node_get_object (old->input_schema);
  info.output_schema = old->output_schema ? json_node_get_object (old->output_schema) : NULL;
  info.annotations = old->annotations ? json_node_get_object (old->annotations) : NULL;
  info.wait_argument = old->wait_argument;
  info.wait_default = old->wait_default;
  info.wait_cap = old->wait_cap;
  info.check = old->check;
  info.handler = handler;
  sight_mcp_registry_add (self, &info, user_data, destroy);
  _sight_mcp_tool_unref (old);
  return TRUE;
}

SightMcpTool *
sight_mcp_registry_lookup (SightMcpRegistry *self,
                           const char       *name)
{
  guint index;

  g_return_val_if_fail (SIGHT_IS_MCP_REGISTRY (self), NULL);

  if (name == NULL || !find_index (self, name, &index))
    return NULL;
  return g_ptr_array_index (self->tools, index);
}

guint
sight_mcp_registry_get_n_tools (SightMcpRegistry *self)
{
  g_return_val_if_fail (SIGHT_IS_MCP_REGISTRY (self), 0);
  return self->tools->len;
}

JsonArray *
sight_mcp_registry_list (SightMcpRegistry *self)
{
  JsonArray *list = json_array_new ();

  g_return_val_if_fail (SIGHT_IS_MCP_REGISTRY (self), list);

  for (guint i = 0; i < self->tools->len; i++)
    {
      SightMcpTool *tool = g_ptr_array_index (self->tools, i);
      g_autoptr(JsonObject) entry = json_object_new ();

      json_object_set_string_member (entry, "name", tool->name);
      json_object_set_string_member (entry, "description", tool->description);
      json_object_set_member (entry, "inputSchema", json_node_copy (tool->input_schema));
      if (tool->output_schema != NULL)
        json_object_set_member (entry, "outputSchema", json_node_copy (tool->output_schema));
      if (tool->annotations != NULL)
        json_object_set_member (entry, "annotations", json_node_copy (tool->annotations));
      json_array_add_object_element (list, g_steal_pointer (&entry));
    }
  return list;
}
