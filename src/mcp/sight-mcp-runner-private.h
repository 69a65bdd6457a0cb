/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "sight-mcp-tool.h"
#include "sight-store.h"

G_BEGIN_DECLS

/* Shared by the tools that read stored runs (smoke_test, get_report, the
 * skill tools, run_task and get_task). */

/* Called once with the run as the store has it when it stopped running or
 * the call's wait ended (@data), or with @error (the id is unknown: not_found
 * is the caller's to say). */
typedef void (*SightMcpRunReadyFunc) (SightMcpToolCall *call,
                                      SightRunData     *data,
                                      const GError     *error,
                                      gpointer          user_data);

/* Reads run @run_id from @store, again every few hundred milliseconds while
 * its verdict is running and the call's wait lasts. */
void   _sight_mcp_wait_for_run     (SightMcpToolCall     *call,
                                    SightStore           *store,
                                    const char           *run_id,
                                    SightMcpRunReadyFunc  func,
                                    gpointer              user_data);

/* Writes the run's HTML report next to the store and returns its file URI,
 * or NULL when it could not be written. */
char  *_sight_mcp_write_html_report (SightStore          *store,
                                     const SightRunData  *data);

/* The result of smoke_test and get_report: the report's text with the
 * failed steps and a link to the HTML report, structuredContent the whole
 * report; isError only for verdict error. */
void   _sight_mcp_return_report    (SightMcpToolCall     *call,
                                    SightStore           *store,
                                    SightRunData         *data);

/* A cancellable for work that may outlive the call (it goes on after the
 * wait): cancelled with the call's cancellable until the call returned. */
GCancellable *_sight_mcp_job_cancellable (SightMcpToolCall *call);

/* The handlers of each file, installed by sight_mcp_runner_tools_install(). */
void _sight_mcp_report_tools_install (SightMcpRegistry *registry);
void _sight_mcp_step_tools_install   (SightMcpRegistry *registry);
void _sight_mcp_task_tools_install   (SightMcpRegistry *registry);
void _sight_mcp_skill_tools_install  (SightMcpRegistry *registry);

G_END_DECLS
