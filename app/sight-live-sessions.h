/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <adwaita.h>

#include "sight-composer.h"
#include "sight-inspector.h"
#include "sight-session.h"
#include "sight-web-page.h"

G_BEGIN_DECLS

/* The window's in-process MCP server and the sessions its clients open: a
 * header-bar button whose popover turns the Streamable HTTP server on and
 * off (127.0.0.1, a free port, the user's stored token) and shows how to
 * connect, and a "Live sessions" drop-down of the process's sessions; the
 * chosen session's page takes the place of the window's own, with the
 * inspector following it (after each load and each action the client's
 * steps perform) and the composer's meters and timeline following the
 * steps the client runs on it. */
#define SIGHT_TYPE_LIVE_SESSIONS (sight_live_sessions_get_type ())
G_DECLARE_FINAL_TYPE (SightLiveSessions, sight_live_sessions, SIGHT, LIVE_SESSIONS, GtkBox)

/* Where the pages go: @page_box holds @own_page's view; @inspector and
 * @composer (borrowed: the window's) follow the shown session. */
void          sight_live_sessions_attach           (SightLiveSessions *self,
                                                    GtkBox            *page_box,
                                                    SightWebPage      *own_page,
                                                    SightInspector    *inspector,
                                                    SightComposer     *composer);
gboolean      sight_live_sessions_set_serving      (SightLiveSessions *self,
                                                    gboolean           serving,
                                                    GError           **error);
gboolean      sight_live_sessions_get_serving      (SightLiveSessions *self);
/* "http://127.0.0.1:PORT/mcp" while serving, else NULL. */
const char   *sight_live_sessions_get_url          (SightLiveSessions *self);
guint         sight_live_sessions_get_port         (SightLiveSessions *self);
GtkSwitch    *sight_live_sessions_get_switch       (SightLiveSessions *self);
/* Item 0 is the window's own page, then the live sessions, newest first. */
GtkDropDown  *sight_live_sessions_get_dropdown     (SightLiveSessions *self);
/* The session shown in the window, or NULL for the window's own page. */
SightSession *sight_live_sessions_get_shown        (SightLiveSessions *self);
/* Opens the popover with the switch, the endpoint and how to connect. */
void          sight_live_sessions_popup            (SightLiveSessions *self);
/* The last notice shown (e.g. that the shown session ended), or NULL. */
const char   *sight_live_sessions_get_last_notice  (SightLiveSessions *self);

G_END_DECLS
