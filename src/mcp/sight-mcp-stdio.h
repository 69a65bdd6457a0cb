/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

#include "sight-mcp-server.h"

G_BEGIN_DECLS

/* The stdio transport: newline-delimited JSON-RPC messages read from
 * @input, answers and notifications written to @output, one per line and
 * nothing else. A line that is not JSON is answered with -32700 and the
 * transport goes on. At end of input the session closes (running calls are
 * cancelled and so mark their work interrupted) and the run finishes once
 * they have answered, or after a few seconds. */
#define SIGHT_TYPE_MCP_STDIO (sight_mcp_stdio_get_type ())
G_DECLARE_FINAL_TYPE (SightMcpStdio, sight_mcp_stdio, SIGHT, MCP_STDIO, GObject)

SightMcpStdio   *sight_mcp_stdio_new         (SightMcpServer *server,
                                              GInputStream   *input,
                                              GOutputStream  *output);
SightMcpSession *sight_mcp_stdio_get_session (SightMcpStdio  *self);

/* Runs until end of input, a read or write error, or @cancellable. */
void             sight_mcp_stdio_run_async   (SightMcpStdio       *self,
                                              GCancellable        *cancellable,
                                              GAsyncReadyCallback  callback,
                                              gpointer             user_data);
gboolean         sight_mcp_stdio_run_finish  (SightMcpStdio       *self,
                                              GAsyncResult        *result,
                                              GError             **error);

G_END_DECLS
