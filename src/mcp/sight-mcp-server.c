/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-mcp-server"

#include "config.h"

#include "sight-mcp-server.h"

#include <string.h>

#include "sight-error.h"
#include "sight-json.h"
#include "sight-mcp-schema.h"
#include "sight-mcp-tool-private.h"

static const char * const protocol_versions[] = {
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
  NULL,
};

const char * const *
sight_mcp_protocol_versions (void)
{
  return protocol_versions;
}

gboolean
sight_mcp_protocol_version_supported (const char *version)
{
  return version != NULL && g_strv_contains (protocol_versions, version);
}

gboolean
sight_mcp_protocol_version_allows_batches (const char *version)
{
  return version != NULL && (g_str_equal (version, "2025-03-26") ||
                             g_str_equal (version, "2024-11-05"));
}

struct _SightMcpServer
{
  GObject           parent_instance;

  SightMcpRegistry *registry;
  GPtrArray        *sessions;   /* weak: sessions remove themselves */
  guint             max_calls;  /* tool calls running at once, over all sessions */
  guint             calls;
};

G_DEFINE_FINAL_TYPE (SightMcpServer, sight_mcp_server, G_TYPE_OBJECT)

typedef enum {
  SESSION_NEW,
  SESSION_INITIALIZED,   /* initialize answered */
  SESSION_READY,         /* notifications/initialized received */
  SESSION_CLOSED,
} SessionState;

struct _SightMcpSession
{
  GObject         parent_instance;

  /* owned */
  SightMcpServer *server;
  SessionState    state;
  char           *protocol_version;
  GHashTable     *running;   /* id as JSON text -> Running */
};

G_DEFINE_FINAL_TYPE (SightMcpSession, sight_mcp_session, G_TYPE_OBJECT)

/* One framed message being handled: it finishes when all its requests are
 * answered. */
typedef struct {
  SightMcpSession    *session;
  GPtrArray          *responses;   /* JsonNode or NULL, message order */
  gboolean            batch;
  guint               pending;
  SightMcpNotifyFunc  notify;
  gpointer            notify_data;
  GTask              *task;
} Handling;

typedef struct {
  Handling         *handling;
  guint             slot;
  JsonNode         *id;
  JsonNode         *progress_token;   /* nullable */
  char             *key;
  GCancellable     *cancellable;
  SightMcpToolCall *call;
  gboolean          cancelled_by_client;
  gboolean          counted;   /* holds one of the server's max_calls */
} Running;

static void
running_free (Running *running)
{
  g_clear_pointer (&running->id, json_node_unref);
  g_clear_pointer (&running->progress_token, json_node_unref);
  g_clear_pointer (&running->key, g_free);
  g_clear_object (&running->cancellable);
  g_clear_object (&running->call);
  g_free (running);
}

/* Server */

static void
sight_mcp_server_finalize (GObject *object)
{
  SightMcpServer *self = SIGHT_MCP_SERVER (object);

  g_clear_object (&self->registry);
  g_clear_pointer (&self->sessions, g_ptr_array_unref);
  G_OBJECT_CLASS (sight_mcp_server_parent_class)->finalize (object);
}

static void
sight_mcp_server_class_init (SightMcpServerClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sight_mcp_server_finalize;
}

/* By default a few calls per core: past them a client is told to come back
 * (capacity_exceeded) instead of growing the queue of work without bound.
 * SIGHTLINE_MCP_MAX_CALLS (1–10000) sets it. */
static guint
default_max_calls (void)
{
  const char *env = g_getenv ("SIGHTLINE_MCP_MAX_CALLS");
  guint64 n;

  if (env != NULL && g_ascii_string_to_unsigned (env, 10, 1, 10000, &n, NULL))
    return (guint) n;
  return MAX (8, 4 * g_get_num_processors ());
}

static void
sight_mcp_server_init (SightMcpServer *self)
{
  self->sessions = g_ptr_array_new ();
  self->max_calls = default_max_calls ();
}

void
sight_mcp_server_set_max_calls (SightMcpServer *self,
                                guint           max_calls)
{
  g_return_if_fail (SIGHT_IS_MCP_SERVER (self));
  g_return_if_fail (max_calls > 0);
  self->max_calls = max_calls;
}

guint
sight_mcp_server_get_max_calls (SightMcpServer *self)
{
  g_return_val_if_fail (SIGHT_IS_MCP_SERVER (self), 0);
  return self->max_calls;
}

SightMcpServer *
sight_mcp_server_new (SightMcpRegistry *registry)
{
  SightMcpServer *self;

  g_return_val_if_fail (SIGHT_IS_MCP_REGISTRY (registry), NULL);

  self = g_object_new (SIGHT_TYPE_MCP_SERVER, NULL);
  self->registry = g_object_ref (registry);
  return self;
}

SightMcpRegistry *
sight_mcp_server_get_registry (SightMcpServer *self)
{
  g_return_val_if_fail (SIGHT_IS_MCP_SERVER (self), NULL);
  return self->registry;
}

static void
session_gone_cb (gpointer  data,
                 GObject  *where_the_object_was)
{
  SightMcpServer *self = data;

  g_ptr_array_remove (self->sessions, where_the_object_was);
}

SightMcpSession *
sight_mcp_server_create_session (SightMcpServer *self)
{
  SightMcpSession *session;

  g_return_val_if_fail (SIGHT_IS_MCP_SERVER (self), NULL);

  session = g_object_new (SIGHT_TYPE_MCP_SESSION, NULL);
  session->server = g_object_ref (self);
  g_ptr_array_add (self->sessions, session);
  g_object_weak_ref (G_OBJECT (session), session_gone_cb, self);
  return session;
}

void
sight_mcp_server_shutdown (SightMcpServer *self)
{
  g_autoptr(GPtrArray) sessions = NULL;

  g_return_if_fail (SIGHT_IS_MCP_SERVER (self));

  sessions = g_ptr_array_copy (self->sessions, (GCopyFunc) g_object_ref, NULL);
  g_ptr_array_set_free_func (sessions, g_object_unref);
  for (guint i = 0; i < sessions->len; i++)
    sight_mcp_session_close (g_ptr_array_index (sessions, i));
}

/* Session */

static void
sight_mcp_session_dispose (GObject *object)
{
  SightMcpSession *self = SIGHT_MCP_SESSION (object);

  sight_mcp_session_close (self);
  G_OBJECT_CLASS (sight_mcp_session_parent_class)->dispose (object);
}

static void
sight_mcp_session_finalize (GObject *object)
{
  SightMcpSession *self = SIGHT_MCP_SESSION (object);

  g_clear_pointer (&self->protocol_version, g_free);
  g_clear_pointer (&self->running, g_hash_table_unref);
  g_clear_object (&self->server);
  G_OBJECT_CLASS (sight_mcp_session_parent_class)->finalize (object);
}

static void
sight_mcp_session_class_init (SightMcpSessionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = sight_mcp_session_dispose;
  object_class->finalize = sight_mcp_session_finalize;
}

static void
sight_mcp_session_init (SightMcpSession *self)
{
  self->state = SESSION_NEW;
  self->running = g_hash_table_new (g_str_hash, g_str_equal);
}

const char *
sight_mcp_session_get_protocol_version (SightMcpSession *self)
{
  g_return_val_if_fail (SIGHT_IS_MCP_SESSION (self), NULL);
  return self->protocol_version;
}

gboolean
sight_mcp_session_is_initialized (SightMcpSession *self)
{
  g_return_val_if_fail (SIGHT_IS_MCP_SESSION (self), FALSE);
  return self->state == SESSION_INITIALIZED || self->state == SESSION_READY;
}

guint
sight_mcp_session_get_n_running (SightMcpSession *self)
{
  g_return_val_if_fail (SIGHT_IS_MCP_SESSION (self), 0);
  return g_hash_table_size (self->running);
}

gboolean
sight_mcp_session_is_closed (SightMcpSession *self)
{
  g_return_val_if_fail (SIGHT_IS_MCP_SESSION (self), TRUE);
  return self->state == SESSION_CLOSED;
}

void
sight_mcp_session_close (SightMcpSession *self)
{
  g_autoptr(GList) running = NULL;

  g_return_if_fail (SIGHT_IS_MCP_SESSION (self));

  if (self->state == SESSION_CLOSED)
    return;
  self->state = SESSION_CLOSED;
  /* The calls finish on their own once cancelled; their answers are still
   * collected so every handle operation completes. */
  running = g_hash_table_get_values (self->running);
  for (GList *l = running; l != NULL; l = l->next)
    {
      Running *r = l->data;

      g_debug ("cancelling %s: the session closed", r->key);
      g_cancellable_cancel (r->cancellable);
    }
}

/* Responses */

static JsonNode *
object_node (JsonObject *object)
{
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_node_take_object (node, object);
  return node;
}

JsonNode *
sight_mcp_error_response_new (JsonNode   *id,
                              int         code,
                              const char *message)
{
  JsonObject *response = json_object_new ();
  g_autoptr(JsonObject) error = json_object_new ();

  json_object_set_string_member (response, "jsonrpc", "2.0");
  if (id != NULL)
    json_object_set_member (response, "id", json_node_copy (id));
  else
    json_object_set_null_member (response, "id");
  json_object_set_int_member (error, "code", code);
  json_object_set_string_member (error, "message", message);
  json_object_set_object_member (response, "error", g_steal_pointer (&error));
  return object_node (response);
}

static JsonNode *
result_response_new (JsonNode   *id,
                     JsonObject *result)
{
  JsonObject *response = json_object_new ();

  json_object_set_string_member (response, "jsonrpc", "2.0");
  json_object_set_member (response, "id", json_node_copy (id));
  json_object_set_object_member (response, "result", json_object_ref (result));
  return object_node (response);
}

/* Handling */

static void
response_free (gpointer data)
{
  if (data != NULL)
    json_node_unref (data);
}

static void
handling_free (Handling *handling)
{
  g_clear_pointer (&handling->responses, g_ptr_array_unref);
  g_clear_object (&handling->session);
  g_free (handling);
}

static void
handling_maybe_finish (Handling *handling)
{
  g_autoptr(GTask) task = NULL;
  JsonNode *answer = NULL;

  if (handling->pending > 0)
    return;

  task = g_steal_pointer (&handling->task);
  if (handling->batch)
    {
      g_autoptr(JsonArray) array = json_array_new ();

      for (guint i = 0; i < handling->responses->len; i++)
        if (g_ptr_array_index (handling->responses, i) != NULL)
          json_array_add_element (array,
                                  json_node_ref (g_ptr_array_index (handling->responses, i)));
      if (json_array_get_length (array) > 0)
        {
          answer = json_node_new (JSON_NODE_ARRAY);
          json_node_set_array (answer, array);
        }
    }
  else if (handling->responses->len > 0 && g_ptr_array_index (handling->responses, 0) != NULL)
    answer = json_node_ref (g_ptr_array_index (handling->responses, 0));

  g_task_return_pointer (task, answer, (GDestroyNotify) json_node_unref);
}

static void
handling_answer (Handling *handling,
                 guint     slot,
                 JsonNode *response)
{
  g_assert (slot < handling->responses->len);
  g_assert (g_ptr_array_index (handling->responses, slot) == NULL);

  g_ptr_array_index (handling->responses, slot) = response;
}

/* Methods */

static JsonObject *
handle_initialize (SightMcpSession *self,
                   JsonObject      *params,
                   int             *out_code,
                   char           **out_message)
{
  JsonObject *result;
  g_autoptr(JsonObject) capabilities = json_object_new ();
  g_autoptr(JsonObject) tools = json_object_new ();
  g_autoptr(JsonObject) info = json_object_new ();
  JsonNode *version_node;
  const char *requested;

  if (self->state != SESSION_NEW)
    {
      *out_code = SIGHT_MCP_INVALID_REQUEST;
      *out_message = g_strdup ("initialize was already done on this session");
      return NULL;
    }
  version_node = params != NULL ? json_object_get_member (params, "protocolVersion") : NULL;
  if (version_node == NULL || !JSON_NODE_HOLDS_VALUE (version_node) ||
      json_node_get_value_type (version_node) != G_TYPE_STRING)
    {
      *out_code = SIGHT_MCP_INVALID_PARAMS;
      *out_message = g_strdup ("initialize needs params.protocolVersion, a string");
      return NULL;
    }
  if ((json_object_has_member (params, "capabilities") &&
       !JSON_NODE_HOLDS_OBJECT (json_object_get_member (params, "capabilities"))) ||
      (json_object_has_member (params, "clientInfo") &&
       !JSON_NODE_HOLDS_OBJECT (json_object_get_member (params, "clientInfo"))))
    {
      *out_code = SIGHT_MCP_INVALID_PARAMS;
      *out_message = g_strdup ("initialize: capabilities and clientInfo must be objects");
      return NULL;
    }

  requested = json_node_get_string (version_node);
  /* The client's version when we speak it, else our latest: the client
   * then decides whether it can go on. */
  g_free (self->protocol_version);
  self->protocol_version = g_strdup (sight_mcp_protocol_version_supported (requested)
                                     ? requested : SIGHT_MCP_PROTOCOL_LATEST);
  self->state = SESSION_INITIALIZED;

  result = json_object_new ();
  json_object_set_string_member (result, "protocolVersion", self->protocol_version);
  json_object_set_boolean_member (tools, "listChanged", FALSE);
  json_object_set_object_member (capabilities, "tools", g_steal_pointer (&tools));
  json_object_set_object_member (result, "capabilities", g_steal_pointer (&capabilities));
  json_object_set_string_member (info, "name", "sightline");
  json_object_set_string_member (info, "title", "Sightline");
  json_object_set_string_member (info, "version", PACKAGE_VERSION);
  json_object_set_object_member (result, "serverInfo", g_steal_pointer (&info));
  json_object_set_string_member (result, "instructions",
                                 "Sightline drives a local WebKit browser. Tool failures come "
                                 "back as results with isError and the text \"[code] message\"; "
                                 "a test that ran and failed is a normal result: read its "
                                 "verdict. Waits are capped at 90 s (120 s for skill tools); a "
                                 "longer job keeps running and is read with get_report, get_task "
                                 "or get_skill_run.");
  return result;
}

static JsonObject *
handle_tools_list (SightMcpSession *self,
                   JsonObject      *params,
                   int             *out_code,
                   char           **out_message)
{
  JsonObject *result;

  /* One page holds every tool, so the only valid cursor is none. */
  if (params != NULL && json_object_has_member (params, "cursor"))
    {
      *out_code = SIGHT_MCP_INVALID_PARAMS;
      *out_message = g_strdup ("tools/list: unknown cursor; the list has a single page");
      return NULL;
    }
  result = json_object_new ();
  json_object_set_array_member (result, "tools",
                                sight_mcp_registry_list (self->server->registry));
  return result;
}

static void
progress_cb (SightMcpToolCall *call,
             double            progress,
             double            total,
             const char       *message,
             gpointer          user_data)
{
  Running *running = user_data;
  Handling *handling = running->handling;
  g_autoptr(JsonObject) notification = json_object_new ();
  g_autoptr(JsonObject) params = json_object_new ();
  g_autoptr(JsonNode) node = NULL;

  if (handling->notify == NULL || running->progress_token == NULL)
    return;

  json_object_set_member (params, "progressToken", json_node_copy (running->progress_token));
  json_object_set_double_member (params, "progress", progress);
  if (total > 0)
    json_object_set_double_member (params, "total", total);
  /* message arrived with 2025-03-26. */
  if (message != NULL && handling->session->protocol_version != NULL &&
      strcmp (handling->session->protocol_version, "2025-03-26") >= 0)
    json_object_set_string_member (params, "message", message);
  json_object_set_string_member (notification, "jsonrpc", "2.0");
  json_object_set_string_member (notification, "method", "notifications/progress");
  json_object_set_object_member (notification, "params", g_steal_pointer (&params));
  node = object_node (g_steal_pointer (&notification));
  handling->notify (node, handling->notify_data);
}

static void
return_cb (SightMcpToolCall *call,
           JsonObject       *result,
           gpointer          user_data)
{
  Running *running = user_data;
  Handling *handling = running->handling;
  SightMcpSession *self = handling->session;

  g_hash_table_remove (self->running, running->key);
  if (running->counted)
    self->server->calls--;
  /* A request the client cancelled gets no answer. */
  if (!running->cancelled_by_client)
    handling_answer (handling, running->slot, result_response_new (running->id, result));
  else
    g_debug ("%s was cancelled by the client: no answer", running->key);
  handling->pending--;
  running_free (running);
  handling_maybe_finish (handling);
}

/* Reading the list of sessions or skills, reading one session and stopping
 * one start no browser work and free capacity: never refused as busy. */
static gboolean
is_light_tool (const char *name)
{
  static const char * const light[] = {
    "list_sessions", "get_session", "stop_session", "list_skills", NULL
  };

  return g_strv_contains (light, name);
}

static void
reject_arguments (SightMcpToolCall *call,
                  gpointer          user_data)
{
  JsonArray *issues = user_data;
  g_autoptr(JsonObject) details = json_object_new ();
  JsonObject *first = json_array_get_object_element (issues, 0);
  guint n = json_array_get_length (issues);

  json_object_set_array_member (details, "issues", json_array_ref (issues));
  if (n == 1)
    sight_mcp_tool_call_return_error (call, "invalid_input", details,
                                      "Invalid arguments for %s: %s",
                                      sight_mcp_tool_call_get_name (call),
                                      json_object_get_string_member (first, "message"));
  else
    sight_mcp_tool_call_return_error (call, "invalid_input", details,
                                      "Invalid arguments for %s: %s (and %u more issues)",
                                      sight_mcp_tool_call_get_name (call),
                                      json_object_get_string_member (first, "message"), n - 1);
}

static void
unknown_tool (SightMcpToolCall *call,
              gpointer          user_data)
{
  const char *name = user_data;

  sight_mcp_tool_call_return_error (call, "not_found",
                                    NULL, "Unknown tool %s: tools/list names the tools", name);
}

static gboolean
is_valid_id (JsonNode *id)
{
  GType type;

  if (!JSON_NODE_HOLDS_VALUE (id))
    return FALSE;
  type = json_node_get_value_type (id);
  /* MCP ids are strings or integers, never null. */
  return type == G_TYPE_STRING || type == G_TYPE_INT64;
}

/* Starts a tools/call. Returns FALSE with a protocol error for malformed
 * params; tool problems become results. */
static gboolean
start_tools_call (SightMcpSession *self,
                  Handling        *handling,
                  guint            slot,
                  JsonNode        *id,
                  JsonObject      *params,
                  int             *out_code,
                  char           **out_message)
{
  JsonNode *name_node = params != NULL ? json_object_get_member (params, "name") : NULL;
  JsonNode *arguments_node = params != NULL ? json_object_get_member (params, "arguments") : NULL;
  JsonNode *meta = params != NULL ? json_object_get_member (params, "_meta") : NULL;
  g_autoptr(JsonObject) arguments = NULL;
  g_autoptr(SightMcpTool) fallback = NULL;
  g_autoptr(JsonArray) issues = json_array_new ();
  g_autofree char *safe_name = NULL;
  SightMcpTool *tool;
  Running *running;

  if (name_node == NULL || !JSON_NODE_HOLDS_VALUE (name_node) ||
      json_node_get_value_type (name_node) != G_TYPE_STRING)
    {
      *out_code = SIGHT_MCP_INVALID_PARAMS;
      *out_message = g_strdup ("tools/call needs params.name, a string");
      return FALSE;
    }
  if (arguments_node != NULL && !JSON_NODE_HOLDS_OBJECT (arguments_node) &&
      !JSON_NODE_HOLDS_NULL (arguments_node))
    {
      *out_code = SIGHT_MCP_INVALID_PARAMS;
      *out_message = g_strdup ("tools/call: params.arguments must be an object");
      return FALSE;
    }
  if (meta != NULL && !JSON_NODE_HOLDS_OBJECT (meta))
    {
      *out_code = SIGHT_MCP_INVALID_PARAMS;
      *out_message = g_strdup ("tools/call: params._meta must be an object");
      return FALSE;
    }

  arguments = arguments_node != NULL && JSON_NODE_HOLDS_OBJECT (arguments_node)
              ? json_object_ref (json_node_get_object (arguments_node))
              : json_object_new ();

  running = g_new0 (Running, 1);
  running->handling = handling;
  running->slot = slot;
  running->id = json_node_copy (id);
  running->key = json_to_string (id, FALSE);
  running->cancellable = g_cancellable_new ();
  if (meta != NULL)
    {
      JsonNode *token = json_object_get_member (json_node_get_object (meta), "progressToken");

      if (token != NULL && is_valid_id (token))
        running->progress_token = json_node_copy (token);
    }

  tool = sight_mcp_registry_lookup (self->server->registry, json_node_get_string (name_node));
  if (tool == NULL)
    {
      /* The spec answers an unknown tool with a not_found result rather
       * than a protocol error, so a model sees why. */
      g_autoptr(JsonObject) empty = json_object_new ();

      safe_name = sight_text_sanitize (json_node_get_string (name_node), 128);
      fallback = g_atomic_rc_box_new0 (SightMcpTool);
      fallback->name = g_strdup (safe_name);
      fallback->description = g_strdup ("");
      fallback->input_schema = json_node_new (JSON_NODE_OBJECT);
      json_node_set_object (fallback->input_schema, empty);
      fallback->handler = unknown_tool;
      fallback->user_data = g_strdup (safe_name);
      fallback->destroy = g_free;
      fallback->wait_argument = NULL;
      tool = fallback;
    }
  else
    {
      g_autoptr(JsonNode) instance = json_node_new (JSON_NODE_OBJECT);

      /* The tool's own check first: it gives the pointed hints (use
       * startUrl, not url) that a bare "unknown field" would hide. */
      json_node_set_object (instance, arguments);
      if (tool->check != NULL)
        tool->check (arguments, issues);
      if (json_array_get_length (issues) == 0)
        sight_mcp_schema_validate (tool->input_schema, instance, issues);
    }

  running->call = _sight_mcp_tool_call_new (tool, arguments, running->cancellable,
                                            running->progress_token != NULL,
                                            return_cb, progress_cb, running);
  g_hash_table_insert (self->running, running->key, running);
  handling->pending++;

  if (json_array_get_length (issues) > 0)
    reject_arguments (running->call, issues);
  else if (!is_light_tool (tool->name) && self->server->calls >= self->server->max_calls)
    {
      g_autoptr(JsonObject) details = json_object_new ();

      json_object_set_int_member (details, "limit", self->server->max_calls);
      json_object_set_int_member (details, "retryAfterMs", SIGHT_MCP_CAPACITY_RETRY_MS);
      sight_mcp_tool_call_return_error (running->call, "capacity_exceeded", details,
                                        "The server is busy: %u tool calls are running, its "
                                        "limit; retry in %u s",
                                        self->server->calls, SIGHT_MCP_CAPACITY_RETRY_MS / 1000);
    }
  else
    {
      if (!is_light_tool (tool->name))
        {
          running->counted = TRUE;
          self->server->calls++;
        }
      _sight_mcp_tool_call_run (running->call);
    }
  return TRUE;
}

static void
handle_cancelled (SightMcpSession *self,
                  JsonObject      *params)
{
  JsonNode *request_id = params != NULL ? json_object_get_member (params, "requestId") : NULL;
  g_autofree char *key = NULL;
  Running *running;

  if (request_id == NULL || !is_valid_id (request_id))
    return;
  key = json_to_string (request_id, FALSE);
  running = g_hash_table_lookup (self->running, key);
  if (running == NULL)
    {
      /* Already answered or never seen: nothing to do (the spec allows
       * the race). */
      g_debug ("notifications/cancelled for %s, which is not running", key);
      return;
    }
  g_debug ("cancelling %s at the client's request", key);
  running->cancelled_by_client = TRUE;
  g_cancellable_cancel (running->cancellable);
}

/* Handles one message (not a batch) into @slot of @handling. */
static void
handle_one (SightMcpSession *self,
            Handling        *handling,
            guint            slot,
            JsonNode        *message)
{
  JsonObject *object;
  JsonNode *id = NULL;
  JsonNode *method_node;
  JsonNode *params_node;
  JsonObject *params = NULL;
  const char *method;
  g_autoptr(JsonObject) result = NULL;
  g_autofree char *error_message = NULL;
  int error_code = 0;

  if (!JSON_NODE_HOLDS_OBJECT (message))
    {
      handling_answer (handling, slot,
                       sight_mcp_error_response_new (NULL, SIGHT_MCP_INVALID_REQUEST,
                                                     "Invalid Request: a message is a JSON "
                                                     "object"));
      return;
    }
  object = json_node_get_object (message);
  id = json_object_get_member (object, "id");
  method_node = json_object_get_member (object, "method");

  if (id != NULL && !is_valid_id (id))
    {
      handling_answer (handling, slot,
                       sight_mcp_error_response_new (NULL, SIGHT_MCP_INVALID_REQUEST,
                                                     "Invalid Request: id must be a string or "
                                                     "an integer"));
      return;
    }
  if (!json_object_has_member (object, "jsonrpc") ||
      !JSON_NODE_HOLDS_VALUE (json_object_get_member (object, "jsonrpc")) ||
      json_node_get_value_type (json_object_get_member (object, "jsonrpc")) != G_TYPE_STRING ||
      !g_str_equal (json_object_get_string_member (object, "jsonrpc"), "2.0"))
    {
      handling_answer (handling, slot,
                       sight_mcp_error_response_new (id, SIGHT_MCP_INVALID_REQUEST,
                                                     "Invalid Request: jsonrpc must be "
                                                     "\"2.0\""));
      return;
    }
  if (method_node == NULL)
    {
      /* A response from the client: this server sends no requests, so
       * there is nothing it could answer. */
      if (id != NULL && (json_object_has_member (object, "result") ||
                         json_object_has_member (object, "error")))
        return;
      handling_answer (handling, slot,
                       sight_mcp_error_response_new (id, SIGHT_MCP_INVALID_REQUEST,
                                                     "Invalid Request: no method"));
      return;
    }
  if (!JSON_NODE_HOLDS_VALUE (method_node) ||
      json_node_get_value_type (method_node) != G_TYPE_STRING)
    {
      handling_answer (handling, slot,
                       sight_mcp_error_response_new (id, SIGHT_MCP_INVALID_REQUEST,
                                                     "Invalid Request: method must be a "
                                                     "string"));
      return;
    }
  method = json_node_get_string (method_node);
  params_node = json_object_get_member (object, "params");
  if (params_node != NULL && JSON_NODE_HOLDS_OBJECT (params_node))
    params = json_node_get_object (params_node);

  if (id == NULL)
    {
      /* Notifications get no answer, not even an error. */
      if (params_node != NULL && params == NULL)
        return;
      if (g_str_equal (method, "notifications/initialized"))
        {
          if (self->state == SESSION_INITIALIZED)
            self->state = SESSION_READY;
        }
      else if (g_str_equal (method, "notifications/cancelled"))
        handle_cancelled (self, params);
      else
        g_debug ("ignoring notification %s", method);
      return;
    }

  if (params_node != NULL && params == NULL)
    {
      handling_answer (handling, slot,
                       sight_mcp_error_response_new (id, SIGHT_MCP_INVALID_PARAMS,
                                                     "Invalid params: params must be an "
                                                     "object"));
      return;
    }
  if (self->state == SESSION_CLOSED)
    {
      handling_answer (handling, slot,
                       sight_mcp_error_response_new (id, SIGHT_MCP_INVALID_REQUEST,
                                                     "The session is closed"));
      return;
    }

  if (g_str_equal (method, "ping"))
    result = json_object_new ();
  else if (g_str_equal (method, "initialize"))
    {
      if (handling->batch)
        {
          error_code = SIGHT_MCP_INVALID_REQUEST;
          error_message = g_strdup ("initialize must not be part of a batch");
        }
      else
        result = handle_initialize (self, params, &error_code, &error_message);
    }
  else if (self->state == SESSION_NEW)
    {
      if (g_str_equal (method, "tools/list") || g_str_equal (method, "tools/call"))
        {
          error_code = SIGHT_MCP_INVALID_REQUEST;
          error_message = g_strdup_printf ("%s before initialize: send initialize first",
                                           method);
        }
      else
        {
          error_code = SIGHT_MCP_METHOD_NOT_FOUND;
          error_message = g_strdup_printf ("Method not found: %s", method);
        }
    }
  else if (g_str_equal (method, "tools/list"))
    result = handle_tools_list (self, params, &error_code, &error_message);
  else if (g_str_equal (method, "tools/call"))
    {
      g_autofree char *key = json_to_string (id, FALSE);

      if (g_hash_table_contains (self->running, key))
        {
          error_code = SIGHT_MCP_INVALID_REQUEST;
          error_message = g_strdup_printf ("Request id %s is already in use", key);
        }
      else if (start_tools_call (self, handling, slot, id, params, &error_code, &error_message))
        return;
    }
  else
    {
      error_code = SIGHT_MCP_METHOD_NOT_FOUND;
      error_message = g_strdup_printf ("Method not found: %s", method);
    }

  if (result != NULL)
    handling_answer (handling, slot, result_response_new (id, result));
  else
    {
      g_autofree char *safe = sight_text_sanitize (error_message, 500);
      handling_answer (handling, slot, sight_mcp_error_response_new (id, error_code, safe));
    }
}

void
sight_mcp_session_handle_async (SightMcpSession    *self,
                                JsonNode           *message,
                                SightMcpNotifyFunc  notify,
                                gpointer            notify_data,
                                GAsyncReadyCallback callback,
                                gpointer            user_data)
{
  Handling *handling;

  g_return_if_fail (SIGHT_IS_MCP_SESSION (self));
  g_return_if_fail (message != NULL);

  handling = g_new0 (Handling, 1);
  handling->session = g_object_ref (self);
  handling->responses = g_ptr_array_new_with_free_func (response_free);
  handling->notify = notify;
  handling->notify_data = notify_data;
  handling->task = g_task_new (self, NULL, callback, user_data);
  g_task_set_source_tag (handling->task, sight_mcp_session_handle_async);
  g_task_set_task_data (handling->task, handling, (GDestroyNotify) handling_free);
  /* One hold so that answers given during the loop below cannot finish the
   * operation early. */
  handling->pending = 1;

  if (JSON_NODE_HOLDS_ARRAY (message))
    {
      JsonArray *batch = json_node_get_array (message);
      guint n = json_array_get_length (batch);

      g_ptr_array_add (handling->responses, NULL);
      if (n == 0)
        handling_answer (handling, 0,
                         sight_mcp_error_response_new (NULL, SIGHT_MCP_INVALID_REQUEST,
                                                       "Invalid Request: an empty batch"));
      else if (self->state == SESSION_NEW)
        handling_answer (handling, 0,
                         sight_mcp_error_response_new (NULL, SIGHT_MCP_INVALID_REQUEST,
                                                       "Invalid Request: initialize first, "
                                                       "and not in a batch"));
      else if (!sight_mcp_protocol_version_allows_batches (self->protocol_version))
        {
          g_autofree char *text = g_strdup_printf ("Invalid Request: protocol version %s has "
                                                   "no batches; send one message at a time",
                                                   self->protocol_version);
          handling_answer (handling, 0,
                           sight_mcp_error_response_new (NULL, SIGHT_MCP_INVALID_REQUEST, text));
        }
      else
        {
          handling->batch = TRUE;
          g_ptr_array_set_size (handling->responses, n);
          for (guint i = 0; i < n; i++)
            handle_one (self, handling, i, json_array_get_element (batch, i));
        }
    }
  else
    {
      g_ptr_array_add (handling->responses, NULL);
      handle_one (self, handling, 0, message);
    }

  handling->pending--;
  handling_maybe_finish (handling);
}

JsonNode *
sight_mcp_message_parse (const char *text,
                         gssize      length,
                         GError    **error)
{
  g_autoptr(GError) local_error = NULL;
  JsonNode *message = sight_json_parse (text, length, SIGHT_JSON_MAX_DEPTH, &local_error);

  if (message != NULL)
    return message;
  g_debug ("parse error: %s", local_error->message);
  g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "Parse error: %s",
               g_error_matches (local_error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT)
                 ? local_error->message
                 : "the message is not JSON");
  return NULL;
}

void
sight_mcp_session_handle_text_async (SightMcpSession    *self,
                                     const char         *text,
                                     gssize              length,
                                     SightMcpNotifyFunc  notify,
                                     gpointer            notify_data,
                                     GAsyncReadyCallback callback,
                                     gpointer            user_data)
{
  g_autoptr(JsonNode) message = NULL;
  g_autoptr(GError) error = NULL;

  g_return_if_fail (SIGHT_IS_MCP_SESSION (self));

  message = sight_mcp_message_parse (text, length, &error);
  if (message == NULL)
    {
      g_autoptr(GTask) task = g_task_new (self, NULL, callback, user_data);

      g_task_set_source_tag (task, sight_mcp_session_handle_async);
      g_task_return_pointer (task,
                             sight_mcp_error_response_new (NULL, SIGHT_MCP_PARSE_ERROR,
                                                           error->message),
                             (GDestroyNotify) json_node_unref);
      return;
    }
  sight_mcp_session_handle_async (self, message, notify, notify_data, callback, user_data);
}

JsonNode *
sight_mcp_session_handle_finish (SightMcpSession  *self,
                                 GAsyncResult     *result,
                                 GError          **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
