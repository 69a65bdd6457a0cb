/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "sight-session.h"
#include "sight-store.h"

G_BEGIN_DECLS

/* A task of spec/webagent-mcp-tools.txt (run_task): an open goal the agent
 * works toward on a session's page with its act loop (one bounded act step
 * whose budget is the task's maxSteps), until it concludes or a budget, the
 * deadline or something outside the product stops it. Ids look like tsk_….
 *
 * The task is a run in the store (kind "task", the goal as its name, each
 * committed action a step), so get_report reads it; its session's console
 * and network log is added to the run when the session ends.
 *
 * stoppedBy: done (the agent concluded; ok says whether it reached the
 * goal), budget (maxSteps ran out), stuck (the model calls ran out before
 * the steps did: the agent went round without acting), timeout (the task's
 * time limit), blocked (credentials, environment, seed data, setup or a
 * screen that cannot be automated), navigation_blocked (a policy refused a
 * navigation), error (the model or the engine failed), aborted (cancelled:
 * the client went away, or the session ended under the task). */

#define SIGHT_TASK_MAX_GOAL_CHARS 2000
#define SIGHT_TASK_MAX_STEPS 50
#define SIGHT_TASK_DEFAULT_MAX_STEPS 25
/* The time a task may take, beyond any wait of a caller. */
#define SIGHT_TASK_TIMEOUT_MS 600000

#define SIGHT_TYPE_TASK (sight_task_get_type ())
G_DECLARE_FINAL_TYPE (SightTask, sight_task, SIGHT, TASK, GObject)

/* Validates the run_task arguments (goal, maxSteps, sessionId, startUrl,
 * engineId, engineVersion, record, headers, proxyUrl, allowHosts,
 * credentials, mode, keepOpen, waitSeconds; the session options only without
 * sessionId, and startUrl needed then), opens a session when there is no
 * sessionId, and starts the task. Finishes as soon as the task runs. A
 * session the call opened is closed again when the task cannot start. */
void          sight_task_start_async   (SightStore          *store,
                                        JsonObject          *args,
                                        GCancellable        *cancellable,
                                        GAsyncReadyCallback  callback,
                                        gpointer             user_data);
SightTask    *sight_task_start_finish  (GAsyncResult        *result,
                                        GError             **error);

const char   *sight_task_get_id        (SightTask *self);
const char   *sight_task_get_session_id (SightTask *self);
gboolean      sight_task_is_finished   (SightTask *self);
/* done, budget, stuck, timeout, blocked, navigation_blocked, error,
 * aborted; NULL while running. */
const char   *sight_task_get_stopped_by (SightTask *self);
/* The error code name of sight-error.h the agent stopped with (ACTION_FAILED
 * for a goal it concluded cannot be reached, STEP_BUDGET_EXHAUSTED, …), NULL
 * when it reached the goal or is still running. */
const char   *sight_task_get_code      (SightTask *self);
/* TRUE when the stop means the agent could not test (the tools' isError). */
gboolean      sight_task_is_unusable   (SightTask *self);
/* Whether the task's own session was closed when it ended. */
gboolean      sight_task_get_session_closed (SightTask *self);
/* Stops the task (stoppedBy aborted). */
void          sight_task_cancel        (SightTask *self);

/* The task record: id, goal, status (running|finished), ok, stoppedBy,
 * limit, reason, answer, steps [{op, ref, provider, ok, ms, costMicros,
 * error}], costMicros (absent when no call reported a cost), ms, startedAt,
 * finishedAt, and video: the path of the session's recording (`record`) once
 * it is complete and linked to the task's run. Strings are cut at 2000
 * characters. */
JsonNode     *sight_task_to_json       (SightTask *self);
/* "Task finished (done) in 2 steps, $0.0006, 5 s." then Answer:, Reason:,
 * whether the session is still open, and the get_report line. */
char         *sight_task_text          (SightTask *self);

/* Tasks of this process, by id, or the newest on a session; NULL when none. */
SightTask    *sight_task_lookup        (const char *task_id);
SightTask    *sight_task_latest_for_session (const char *session_id);

/* "finished" (no arguments) is emitted once, after the run is stored. */

G_END_DECLS
