/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "sight-mcp-tool.h"

G_BEGIN_DECLS

/* A registry with the built-in tools of spec/webagent-mcp-tools.txt
 * (create_session, run_task, get_task, smoke_test, get_report,
 * list_sessions, get_session, stop_session, scrape, screenshot, pdf, crawl,
 * list_skills, run_skill, get_skill_run) and the agent steps on an open
 * session (act, assert, wait_for, extract). Their schemas come from
 * sight-mcp-tools.json. The tools whose runner part exists get their
 * handlers from sight_mcp_runner_tools_install(); every other tool answers
 * [unavailable] until its runner part lands and replaces that handler with
 * sight_mcp_registry_set_handler(). */
SightMcpRegistry *sight_mcp_registry_new_builtin (void);

/* The names of the built-in tools, in tools/list order. */
const char * const *sight_mcp_builtin_tool_names (void);

G_END_DECLS
