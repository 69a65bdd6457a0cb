/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* One tools/call in flight. The server creates it after the arguments passed
 * the tool's input schema, hands it to the tool's handler, and answers the
 * request when the handler calls one of the sight_mcp_tool_call_return_*()
 * functions (exactly once, from the main context, at any later time). */
/* The retry hint (details.retryAfterMs) of every capacity_exceeded answer:
 * the server's tool-call limit and the sessions' limit. */
#define SIGHT_MCP_CAPACITY_RETRY_MS 2000

#define SIGHT_TYPE_MCP_TOOL_CALL (sight_mcp_tool_call_get_type ())
G_DECLARE_FINAL_TYPE (SightMcpToolCall, sight_mcp_tool_call, SIGHT, MCP_TOOL_CALL, GObject)

typedef void (*SightMcpToolHandler) (SightMcpToolCall *call,
                                     gpointer          user_data);

/* The tool's name and its validated arguments (never NULL; {} when the
 * client sent none). */
const char   *sight_mcp_tool_call_get_name         (SightMcpToolCall *self);
JsonObject   *sight_mcp_tool_call_get_arguments    (SightMcpToolCall *self);

/* Cancelled when the client cancels the request (notifications/cancelled),
 * when its connection or session ends, or when the server shuts down: stop
 * the work and mark it interrupted. */
GCancellable *sight_mcp_tool_call_get_cancellable  (SightMcpToolCall *self);

/* For tools that wait (run_task, get_task, smoke_test, get_report,
 * get_skill_run, skill_<name>): the wait in seconds after the server applied
 * the tool's default and cap (90 s or 120 s), or -1 for a tool that does not
 * wait. The wait cancellable is cancelled when that wait is over (and when
 * the call is cancelled): a handler then stops waiting, leaves the job
 * running and returns its "running" result. A handler that has not answered
 * 5 s after its wait ended is answered by the server with [timeout]. */
int           sight_mcp_tool_call_get_wait_seconds (SightMcpToolCall *self);
GCancellable *sight_mcp_tool_call_get_wait_cancellable (SightMcpToolCall *self);

/* Sends notifications/progress when the client asked for progress (a
 * _meta.progressToken); does nothing otherwise. @progress must grow from
 * call to call; @total <= 0 means unknown. The server itself sends a
 * heartbeat every few seconds while a call runs. */
void          sight_mcp_tool_call_report_progress  (SightMcpToolCall *self,
                                                    double            progress,
                                                    double            total,
                                                    const char       *message);

/* A result whose content is @text and whose structuredContent is
 * @structured (may be NULL). @is_error follows the spec's isError rules for
 * the tool: for a verdict error, an unusable task end, a run status error,
 * denied or cancelled. */
void          sight_mcp_tool_call_return_result    (SightMcpToolCall *self,
                                                    const char       *text,
                                                    JsonObject       *structured,
                                                    gboolean          is_error);

/* A result with @content items (image, resource…) and optional
 * @structured. */
void          sight_mcp_tool_call_return_content   (SightMcpToolCall *self,
                                                    JsonArray        *content,
                                                    JsonObject       *structured,
                                                    gboolean          is_error);

/* A failure: isError true, text "[code] message", structuredContent
 * { error: { code, message, details? } }. @code is a service error code:
 * invalid_input, not_found, unavailable, navigation_blocked, timeout,
 * cancelled, internal… @details may be NULL. */
void          sight_mcp_tool_call_return_error     (SightMcpToolCall *self,
                                                    const char       *code,
                                                    JsonObject       *details,
                                                    const char       *format,
                                                    ...) G_GNUC_PRINTF (4, 5);

/* A failure from a GError: its code becomes a service code (see
 * sight_mcp_error_code_for_error()) and its message is sanitized. */
void          sight_mcp_tool_call_return_gerror    (SightMcpToolCall *self,
                                                    const GError     *error);

gboolean      sight_mcp_tool_call_is_returned      (SightMcpToolCall *self);

/* The service error code for a GError: SIGHT_ERROR_INVALID_ARGUMENT is
 * invalid_input, G_IO_ERROR_NOT_FOUND not_found, G_IO_ERROR_CANCELLED
 * cancelled, SIGHT_ERROR_STEP_TIMEOUT and G_IO_ERROR_TIMED_OUT timeout,
 * SIGHT_ERROR_POLICY_DENIED navigation_blocked,
 * SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE and G_IO_ERROR_NOT_SUPPORTED
 * unavailable, and every other error internal. */
const char   *sight_mcp_error_code_for_error       (const GError     *error);

/* The registry of tools a server offers. */
#define SIGHT_TYPE_MCP_REGISTRY (sight_mcp_registry_get_type ())
G_DECLARE_FINAL_TYPE (SightMcpRegistry, sight_mcp_registry, SIGHT, MCP_REGISTRY, GObject)

/* A check that runs before the input schema, for the rules a schema does
 * not say well (one field refused together with another, a hint for a
 * wrong field name). It sees unvalidated arguments, so it checks types
 * before it reads. It appends issues with sight_mcp_schema_add_issue();
 * when it found any, the schema is not run. */
typedef void (*SightMcpToolCheck) (JsonObject *arguments,
                                   JsonArray  *issues);

typedef struct {
  const char        *name;
  const char        *description;
  JsonObject        *input_schema;     /* borrowed; the registry copies it */
  JsonObject        *output_schema;    /* may be NULL */
  JsonObject        *annotations;      /* may be NULL */
  /* The wait: the argument's "/"-separated path ("waitSeconds",
   * "options/waitSeconds") or NULL, its default and the server's cap. */
  const char        *wait_argument;
  int                wait_default;
  int                wait_cap;
  SightMcpToolCheck  check;
  SightMcpToolHandler handler;
} SightMcpToolInfo;

typedef struct _SightMcpTool SightMcpTool;

SightMcpRegistry *sight_mcp_registry_new         (void);
/* Adds or replaces the tool named @info->name. @user_data is passed to the
 * handler and freed with @destroy when the tool is replaced or removed. */
void              sight_mcp_registry_add         (SightMcpRegistry       *self,
                                                  const SightMcpToolInfo *info,
                                                  gpointer                user_data,
                                                  GDestroyNotify          destroy);
gboolean          sight_mcp_registry_remove      (SightMcpRegistry       *self,
                                                  const char             *name);
/* Replaces the handler of an existing tool, keeping its schemas: this is
 * how runner work plugs into the built-in tools. */
gboolean          sight_mcp_registry_set_handler (SightMcpRegistry       *self,
                                                  const char             *name,
                                                  SightMcpToolHandler     handler,
                                                  gpointer                user_data,
                                                  GDestroyNotify          destroy);
SightMcpTool     *sight_mcp_registry_lookup      (SightMcpRegistry       *self,
                                                  const char             *name);
guint             sight_mcp_registry_get_n_tools (SightMcpRegistry       *self);
/* The tools/list entries in registration order: name, description,
 * inputSchema, outputSchema and annotations. */
JsonArray        *sight_mcp_registry_list        (SightMcpRegistry       *self);

const char       *sight_mcp_tool_get_name        (SightMcpTool           *tool);
JsonNode         *sight_mcp_tool_get_input_schema (SightMcpTool          *tool);

G_END_DECLS
