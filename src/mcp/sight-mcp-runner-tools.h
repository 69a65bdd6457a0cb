/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "sight-mcp-tool.h"

G_BEGIN_DECLS

/* Installs the handlers of the built-in tools whose runner part exists:
 * create_session, list_sessions, get_session, stop_session (the runner's
 * SightSessionRegistry), scrape, screenshot, pdf, crawl, smoke_test and
 * get_report (runs in the store), act, assert, wait_for and extract (the
 * agent on an open session). They need
 * WebKitGTK, so a display and gtk_init() in the process. */
void sight_mcp_runner_tools_install (SightMcpRegistry *registry);

G_END_DECLS
