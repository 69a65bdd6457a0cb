/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "sight-mcp-tool.h"

G_BEGIN_DECLS

struct _SightMcpTool {
  char                *name;
  char                *description;
  JsonNode            *input_schema;
  JsonNode            *output_schema;   /* nullable */
  JsonNode            *annotations;     /* nullable */
  char                *wait_argument;   /* nullable */
  int                  wait_default;
  int                  wait_cap;
  SightMcpToolCheck    check;
  SightMcpToolHandler  handler;
  gpointer             user_data;
  GDestroyNotify       destroy;
};

/* How the server learns the outcome: @result is the tools/call result object
 * (content, structuredContent?, isError?). Called exactly once. */
typedef void (*SightMcpReturnFunc)   (SightMcpToolCall *call,
                                      JsonObject       *result,
                                      gpointer          user_data);
typedef void (*SightMcpProgressFunc) (SightMcpToolCall *call,
                                      double            progress,
                                      double            total,
                                      const char       *message,
                                      gpointer          user_data);

SightMcpTool     *_sight_mcp_tool_ref         (SightMcpTool *tool);
void              _sight_mcp_tool_unref       (SightMcpTool *tool);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightMcpTool, _sight_mcp_tool_unref)

/* Reads the tool's wait argument from @arguments, applies its default and
 * cap. -1 when the tool does not wait. */
int               _sight_mcp_tool_resolve_wait (SightMcpTool *tool,
                                                JsonObject   *arguments);

SightMcpToolCall *_sight_mcp_tool_call_new    (SightMcpTool         *tool,
                                               JsonObject           *arguments,
                                               GCancellable         *cancellable,
                                               gboolean              wants_progress,
                                               SightMcpReturnFunc    return_func,
                                               SightMcpProgressFunc  progress_func,
                                               gpointer              user_data);
/* Starts the wait timers and the progress heartbeat, then calls the
 * handler. */
void              _sight_mcp_tool_call_run    (SightMcpToolCall     *call);
/* Stops reporting to the server: after a cancelled request or a closed
 * transport the outcome is dropped. */
void              _sight_mcp_tool_call_detach (SightMcpToolCall     *call);

G_END_DECLS
