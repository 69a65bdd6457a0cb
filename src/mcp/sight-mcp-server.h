/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "sight-mcp-tool.h"

G_BEGIN_DECLS

/* JSON-RPC 2.0 error codes. */
#define SIGHT_MCP_PARSE_ERROR      (-32700)
#define SIGHT_MCP_INVALID_REQUEST  (-32600)
#define SIGHT_MCP_METHOD_NOT_FOUND (-32601)
#define SIGHT_MCP_INVALID_PARAMS   (-32602)
#define SIGHT_MCP_INTERNAL_ERROR   (-32603)

/* Protocol versions, newest first. */
#define SIGHT_MCP_PROTOCOL_LATEST "2025-06-18"
const char * const *sight_mcp_protocol_versions          (void);
gboolean            sight_mcp_protocol_version_supported (const char *version);
/* Batches are JSON-RPC 2.0 and MCP 2024-11-05 and 2025-03-26; 2025-06-18
 * removed them. */
gboolean            sight_mcp_protocol_version_allows_batches (const char *version);

/* The MCP protocol engine, independent of transport: it owns the tool
 * registry and hands out one SightMcpSession per conversation (one stdio
 * stream, one Mcp-Session-Id). */
#define SIGHT_TYPE_MCP_SERVER (sight_mcp_server_get_type ())
G_DECLARE_FINAL_TYPE (SightMcpServer, sight_mcp_server, SIGHT, MCP_SERVER, GObject)

#define SIGHT_TYPE_MCP_SESSION (sight_mcp_session_get_type ())
G_DECLARE_FINAL_TYPE (SightMcpSession, sight_mcp_session, SIGHT, MCP_SESSION, GObject)

SightMcpServer   *sight_mcp_server_new            (SightMcpRegistry *registry);
SightMcpRegistry *sight_mcp_server_get_registry   (SightMcpServer   *self);
SightMcpSession  *sight_mcp_server_create_session (SightMcpServer   *self);
/* Closes every session: their running calls are cancelled. */
void              sight_mcp_server_shutdown       (SightMcpServer   *self);

/* Tool calls that may run at once over all sessions (default: 4 per core,
 * at least 8; SIGHTLINE_MCP_MAX_CALLS). A call past it is answered at once
 * with capacity_exceeded (details: limit, retryAfterMs); list_sessions,
 * get_session, stop_session and list_skills are never refused. */
void              sight_mcp_server_set_max_calls  (SightMcpServer   *self,
                                                   guint             max_calls);
guint             sight_mcp_server_get_max_calls  (SightMcpServer   *self);

/* Sends one server-to-client message (a notification) while a message the
 * client sent is being handled. */
typedef void (*SightMcpNotifyFunc) (JsonNode *message,
                                    gpointer  user_data);

/* Handles one framed message from the client: a request, a notification, a
 * response, or a batch. @notify (may be NULL) receives the progress
 * notifications of the requests in it and must stay callable until the
 * operation finishes. The operation finishes when every request in it is
 * answered (or cancelled by the client, which gets no answer). */
void              sight_mcp_session_handle_async  (SightMcpSession    *self,
                                                   JsonNode           *message,
                                                   SightMcpNotifyFunc  notify,
                                                   gpointer            notify_data,
                                                   GAsyncReadyCallback callback,
                                                   gpointer            user_data);
/* The answer: an object, an array for a batch, or NULL when the message
 * needs no answer. */
JsonNode         *sight_mcp_session_handle_finish (SightMcpSession    *self,
                                                   GAsyncResult       *result,
                                                   GError            **error);

/* Like sight_mcp_session_handle_async() for text as it arrived: text that is
 * not JSON is answered with -32700. */
void              sight_mcp_session_handle_text_async (SightMcpSession    *self,
                                                       const char         *text,
                                                       gssize              length,
                                                       SightMcpNotifyFunc  notify,
                                                       gpointer            notify_data,
                                                       GAsyncReadyCallback callback,
                                                       gpointer            user_data);

/* The negotiated protocol version, or NULL before initialize. */
const char       *sight_mcp_session_get_protocol_version (SightMcpSession *self);
/* TRUE once initialize was answered. */
gboolean          sight_mcp_session_is_initialized (SightMcpSession  *self);
/* Running tools/call requests. */
guint             sight_mcp_session_get_n_running (SightMcpSession  *self);
/* Cancels every running call and refuses new ones. Safe to repeat. */
void              sight_mcp_session_close         (SightMcpSession  *self);
gboolean          sight_mcp_session_is_closed     (SightMcpSession  *self);

/* A JSON-RPC message as it arrived, nested at most SIGHT_JSON_MAX_DEPTH
 * levels deep; otherwise NULL and @error's message is the -32700 answer's. */
JsonNode         *sight_mcp_message_parse         (const char *text,
                                                   gssize      length,
                                                   GError    **error);

/* A JSON-RPC error response. @id may be NULL (for null). */
JsonNode         *sight_mcp_error_response_new    (JsonNode   *id,
                                                   int         code,
                                                   const char *message);

/* The interval of the progress heartbeat of running calls (5000 ms unless
 * changed; tests shorten it). */
void              sight_mcp_set_heartbeat_interval (guint milliseconds);

G_END_DECLS
