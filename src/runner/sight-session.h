/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "sight-video-recorder.h"
#include "sight-web-page.h"

G_BEGIN_DECLS

/* A browser session of spec/webagent-mcp-tools.txt, locally: one page (and
 * the popups it opens) with its own ephemeral network session, an idle
 * timeout (10 s-24 h, default 5 min) and a hard cap on its lifetime
 * (10 s-24 h, default 1 h). Ids look like sess_…. */

#define SIGHT_TYPE_SESSION (sight_session_get_type ())
G_DECLARE_FINAL_TYPE (SightSession, sight_session, SIGHT, SESSION, GObject)

typedef enum {
  SIGHT_SESSION_LIVE,
  SIGHT_SESSION_CLOSED,
} SightSessionStatus;

const char         *sight_session_get_id        (SightSession *self);
SightSessionStatus  sight_session_get_status    (SightSession *self);
/* NULL once the session ended. */
SightWebPage       *sight_session_get_page      (SightSession *self);
/* The session's recording (create_session's `record`), NULL without one. It
 * ends when the session does: sight_video_recorder_finish_async() then gives
 * the kept file's path. */
SightVideoRecorder *sight_session_get_video     (SightSession *self);
/* Postpones the idle timeout: call on every action. */
void                sight_session_touch         (SightSession *self);
/* Ends the session (reason: stopped, idle, maxDuration, error): a step
 * running on it is stopped, and its page and web process are released once
 * "session-closed" was emitted. Returns TRUE when this call closed a live
 * session. */
gboolean            sight_session_stop          (SightSession *self,
                                                 const char   *reason);
/* The session record: id, status, engine, createdAt, endedAt, endReason,
 * title, startUrl, viewport, record, endpoints; with record, recording:
 * { status: recording|kept|failed, frames, path once kept, error }. */
JsonNode           *sight_session_to_json       (SightSession *self);

/* The process's sessions. "session-added" and "session-closed" let a window
 * show what MCP clients and commands do as they do it. */
#define SIGHT_TYPE_SESSION_REGISTRY (sight_session_registry_get_type ())
G_DECLARE_FINAL_TYPE (SightSessionRegistry, sight_session_registry, SIGHT, SESSION_REGISTRY, GObject)

SightSessionRegistry *sight_session_registry_get_default (void);

/* Validates the create_session arguments (startUrl, device, viewport, record,
 * headers, credentials, proxyUrl, allowHosts, idleTimeoutMs, maxDurationMs,
 * engineId, engineVersion, waitForCapacityMs, queueForCapacity), opens the
 * session and, with startUrl, loads it before finishing. */
void          sight_session_registry_create_async  (SightSessionRegistry *self,
                                                    JsonObject           *args,
                                                    GCancellable         *cancellable,
                                                    GAsyncReadyCallback   callback,
                                                    gpointer              user_data);
SightSession *sight_session_registry_create_finish (SightSessionRegistry *self,
                                                    GAsyncResult         *result,
                                                    GError              **error);
/* A session by id, live or closed; NULL when unknown. */
SightSession *sight_session_registry_lookup        (SightSessionRegistry *self,
                                                    const char           *id);
/* Sessions newest first, at most @limit. */
GPtrArray    *sight_session_registry_list          (SightSessionRegistry *self,
                                                    guint                 limit);

/* Sessions that may be live at once (default: one per 512 MiB of memory,
 * at most four per core, at least two; SIGHTLINE_MAX_SESSIONS). A create past
 * it waits for a session to end for its waitForCapacityMs, or its
 * queueForCapacity.maxWaitSeconds, first come first served, then fails with
 * G_IO_ERROR_BUSY (capacity_exceeded over MCP). A stopped session's page and
 * web process are released; the records of the newest 200 ended sessions
 * are kept. */
void          sight_session_registry_set_max_live  (SightSessionRegistry *self,
                                                    guint                 max_live);
guint         sight_session_registry_get_max_live  (SightSessionRegistry *self);
guint         sight_session_registry_count_live    (SightSessionRegistry *self);

/* A random id with @prefix: prefix + 24 lower-case letters and digits. */
char         *sight_new_id                         (const char           *prefix);

G_END_DECLS
