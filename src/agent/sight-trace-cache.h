/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "sight-observation.h"
#include "sight-secrets.h"

G_BEGIN_DECLS

/* The trace cache (spec/agent-api.txt, act's `cache`).
 *
 * An act that passed leaves a trace: its committed actions, each with the
 * descriptor the engine returned (role, name, nth, box, viewport; for a bare
 * point, the point and the viewport), and the end state it reached (URL
 * pattern and the page's landmarks). A later act with the same key (agent,
 * instruction, parameter names, start URL pattern) replays the actions with no
 * model call, re-finding each node by descriptor. The result's `cache` says how
 * it went: self-finalized (the recorded end state came back on its own),
 * agent-concluded (it did not, and one model judgment decided) or missed, with
 * the reason (a node that could not be re-found, another viewport size), when
 * the step went to the model. A trace the model healed is written back marked
 * for review.
 *
 * Traces never hold a secret value: actions name params ({password}), and
 * the cache refuses an action whose arguments hold a string it was told is
 * secret. Traces are JSON files under the user cache dir, written to a
 * temporary name and renamed. */

typedef enum {
  SIGHT_CACHE_SELF_FINALIZED,
  SIGHT_CACHE_AGENT_CONCLUDED,
  SIGHT_CACHE_MISSED,
} SightCacheStatus;

const char *sight_cache_status_to_string (SightCacheStatus status);
/* { "status": "missed", "reason": "…" } for a step result's `cache`. */
JsonNode   *sight_cache_info_new         (SightCacheStatus  status,
                                          const char       *reason);

/* scheme://host[:port]/path with digits-only and long hex path segments as
 * ":id", no query or fragment: the start URL part of the key. */
char       *sight_trace_url_pattern      (const char       *url);
/* A stable hex key of agent, instruction, the sorted top-level param names
 * (never their values) and the start URL pattern. */
char       *sight_trace_key              (const char       *agent,
                                          const char       *instruction,
                                          JsonNode         *params,
                                          const char       *start_url);

typedef struct _SightTrace SightTrace;

SightTrace *sight_trace_new              (const char       *agent,
                                          const char       *instruction,
                                          JsonNode         *params,
                                          const char       *start_url,
                                          int               viewport_width,
                                          int               viewport_height);
SightTrace *sight_trace_ref              (SightTrace       *trace);
void        sight_trace_unref            (SightTrace       *trace);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightTrace, sight_trace_unref)

const char *sight_trace_get_key          (SightTrace       *trace);
guint       sight_trace_get_n_actions    (SightTrace       *trace);
/* { "tool": …, "args": {…}, "descriptor": {…} } (borrowed) */
JsonObject *sight_trace_get_action       (SightTrace       *trace,
                                          guint             index);
gboolean    sight_trace_needs_review     (SightTrace       *trace);
/* The start URL pattern of the key (sight_trace_url_pattern). */
const char *sight_trace_get_url_pattern  (SightTrace       *trace);

/* Records a committed action. @secrets (optional, NULL-terminated) are
 * strings that must not be stored: an action whose args hold one fails with
 * POLICY_DENIED and is not recorded. */
gboolean    sight_trace_add_action       (SightTrace       *trace,
                                          const char       *tool,
                                          JsonNode         *args,
                                          JsonNode         *descriptor,
                                          const char * const *secrets,
                                          GError          **error);
/* The end state: the URL pattern and the landmarks (headings, alerts,
 * status messages, dialogs) of @end. */
void        sight_trace_set_end_state    (SightTrace       *trace,
                                          SightObservation *end);
/* Whether the recorded end state is back in @now; when not, @reason says
 * what is missing. */
gboolean    sight_trace_end_state_returned (SightTrace     *trace,
                                            SightObservation *now,
                                            char          **reason);

/* Where to replay action @index on @now: a node's ref (*out_ref), or a bare
 * point in viewport CSS pixels (*out_ref NULL, *out_x, *out_y). FALSE with
 * @reason when the node cannot be re-found, or a bare point was recorded on
 * a viewport of another size. */
gboolean    sight_trace_refind           (SightTrace       *trace,
                                          guint             index,
                                          SightObservation *now,
                                          char            **out_ref,
                                          double           *out_x,
                                          double           *out_y,
                                          char            **reason);

JsonNode   *sight_trace_to_json          (SightTrace       *trace);
SightTrace *sight_trace_new_from_json    (JsonNode         *node,
                                          GError          **error);

/* Replays @trace on @page with no model call: each action's node re-found by
 * its descriptor in a fresh observation, then acted on; {param}s filled from
 * @params (Secrets through @secrets, host-side). Finishes with a `cache`
 * object: { "status": "self-finalized" } when the recorded end state came
 * back; { "status": "missed", "reason", "action" } when a node could not be
 * re-found, the viewport differs for a bare point, or an action failed (the
 * step goes to the model); { "status": "unconfirmed", "reason" } when every
 * action ran but the end state did not come back within the deadline (one
 * model judgment then decides: agent-concluded). Errors only for a page that
 * is gone or a cancelled step. */
void        sight_trace_replay_async     (SightTrace          *trace,
                                          SightWebPage        *page,
                                          JsonNode            *params,
                                          SightSecrets        *secrets,
                                          guint                timeout_ms,
                                          GCancellable        *cancellable,
                                          GAsyncReadyCallback  callback,
                                          gpointer             user_data);
JsonNode   *sight_trace_replay_finish    (SightTrace          *trace,
                                          GAsyncResult        *result,
                                          GError             **error);

typedef struct _SightTraceCache SightTraceCache;

/* @dir: where traces live; NULL for $XDG_CACHE_HOME/sightline/traces. */
SightTraceCache *sight_trace_cache_new   (const char       *dir);
void        sight_trace_cache_free       (SightTraceCache  *cache);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightTraceCache, sight_trace_cache_free)

const char *sight_trace_cache_get_dir    (SightTraceCache  *cache);
/* The trace of @key, or NULL (a trace that does not read is NULL too). */
SightTrace *sight_trace_cache_lookup     (SightTraceCache  *cache,
                                          const char       *key);
gboolean    sight_trace_cache_save       (SightTraceCache  *cache,
                                          SightTrace       *trace,
                                          GError          **error);
/* Saves a trace the model healed, marked for review. */
gboolean    sight_trace_cache_save_healed (SightTraceCache *cache,
                                           SightTrace      *trace,
                                           GError         **error);
/* Whether @cache holds a trace of the act (@agent, @instruction, the names of
 * @params) recorded at any start address: such a step can replay with no
 * model, so a test that has no model may still run it. */
gboolean    sight_trace_cache_has_trace_for (SightTraceCache *cache,
                                             const char      *agent,
                                             const char      *instruction,
                                             JsonNode        *params);
/* Keys of the traces marked for review, sorted. */
GStrv       sight_trace_cache_list_review (SightTraceCache *cache);
/* Clears the review mark (a person accepted the heal). */
gboolean    sight_trace_cache_mark_reviewed (SightTraceCache *cache,
                                             const char      *key,
                                             GError         **error);
gboolean    sight_trace_cache_forget     (SightTraceCache  *cache,
                                          const char       *key);
/* The traces of the step (@agent, @instruction, the names of @params) recorded
 * from any start URL, sorted by key: for a reader that cannot know where the
 * step will start, such as export. */
GPtrArray  *sight_trace_cache_find_step  (SightTraceCache  *cache,
                                          const char       *agent,
                                          const char       *instruction,
                                          JsonNode         *params);

G_END_DECLS
