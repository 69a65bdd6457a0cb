/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

#include "sight-mcp-server.h"

G_BEGIN_DECLS

/* The Streamable HTTP transport of MCP on one endpoint, /mcp:
 *  - POST carries one message (or a batch where the protocol version has
 *    them); requests are answered with application/json, or with a
 *    text/event-stream when a tools/call asked for progress and the client
 *    accepts a stream; notifications and responses get 202.
 *  - GET answers 405: the server offers no stream of its own.
 *  - DELETE ends the session named by Mcp-Session-Id.
 * Every request needs "Authorization: Bearer <token>" (401 otherwise), a
 * Host that names this server (403 otherwise: DNS rebinding) and no Origin
 * or this server's own origin (403 otherwise). initialize creates a session
 * and answers with its Mcp-Session-Id; later requests must send it (400
 * without, 404 for one the server does not know). An MCP-Protocol-Version
 * header the server does not speak, or that differs from the session's, is
 * 400. A body over the size limit is 413. */
#define SIGHT_TYPE_MCP_HTTP (sight_mcp_http_get_type ())
G_DECLARE_FINAL_TYPE (SightMcpHttp, sight_mcp_http, SIGHT, MCP_HTTP, GObject)

#define SIGHT_MCP_HTTP_DEFAULT_MAX_BODY (4 * 1024 * 1024)
/* How long a request may take to arrive, headers and body, counted from
 * when its connection waits for it: a slow client, a slow body and an idle
 * keep-alive connection are closed past it (408 when part of a request came).
 * A chunked body is counted as it arrives and refused (413) once it passes
 * the size limit. */
#define SIGHT_MCP_HTTP_DEFAULT_REQUEST_TIMEOUT_MS 30000

SightMcpHttp *sight_mcp_http_new               (SightMcpServer *server,
                                                const char     *token);
void          sight_mcp_http_set_max_body_size (SightMcpHttp   *self,
                                                gsize           max_bytes);
void          sight_mcp_http_set_request_timeout (SightMcpHttp *self,
                                                  guint         timeout_ms);
/* Listens on @address (an IP literal: "127.0.0.1" unless the person asked
 * for another) and @port (0 picks a free one). */
gboolean      sight_mcp_http_listen            (SightMcpHttp   *self,
                                                const char     *address,
                                                guint           port,
                                                GError        **error);
guint         sight_mcp_http_get_port          (SightMcpHttp   *self);
/* "http://127.0.0.1:PORT/mcp" */
char         *sight_mcp_http_get_url           (SightMcpHttp   *self);
guint         sight_mcp_http_get_n_sessions    (SightMcpHttp   *self);
/* Stops listening and closes every session. */
void          sight_mcp_http_shutdown          (SightMcpHttp   *self);

/* The bearer token stored for the user at @path (or, when NULL,
 * $XDG_CONFIG_HOME/sightline/mcp-token): read when the file exists, else
 * generated from 32 random bytes and written with mode 0600 in a 0700
 * folder. @out_path receives the file's path. */
char         *sight_mcp_http_load_or_create_token (const char  *path,
                                                   char       **out_path,
                                                   gboolean    *out_created,
                                                   GError     **error);

G_END_DECLS
