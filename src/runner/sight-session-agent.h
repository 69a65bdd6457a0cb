/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "sight-agent.h"
#include "sight-session.h"

G_BEGIN_DECLS

/* Agent steps on an open session (the MCP tools act, assert, wait_for,
 * extract and run_task). One SightAgent per session, made on first use with
 * the project found from the current folder, so a secret filled in one step
 * keeps later screenshots withheld for the rest of the session. */

/* The session's agent; NOT_FOUND-like INVALID_ARGUMENT when the session
 * ended. */
SightAgent *sight_session_get_agent (SightSession  *session,
                                     GError       **error);

/* One step or task at a time on a session: claim fails with
 * INVALID_ARGUMENT while another holds it. */
gboolean    sight_session_claim     (SightSession  *session,
                                     const char    *what,
                                     GError       **error);
void        sight_session_release   (SightSession  *session);

/* For sight_session_stop(): stops the agent's step, if one runs, and lets
 * the agent (and its hold on the page) go. */
void        _sight_session_drop_agent (SightSession *session);

G_END_DECLS
