/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

#include "sight-model-provider.h"
#include "sight-project.h"
#include "sight-step-context.h"
#include "sight-step-request.h"
#include "sight-step-result.h"
#include "sight-web-page.h"

G_BEGIN_DECLS

/* The built-in agent of spec/agent-api.txt: runs act, assert, waitFor and extract
 * on one page, each as one bounded invocation (a fresh observation, an explicit
 * deadline, a model-call budget, no transcript shared between steps).
 *
 * One SightAgent serves one attempt of one test: it remembers whether a secret was
 * filled in the attempt (later screenshots are then withheld: PIXEL_TAINTED, and
 * assert's failure evidence is skipped).
 *
 * Progress, for live meters:
 *   "step-started"        (const SightStepRequest *) as a step starts: its kind,
 *                                               instruction and resolved limits
 *   "model-call-started"   (guint n)           before request n (1-based) of the step
 *   "model-call-finished"  (guint n, gboolean ok)
 *   "action-starting"      (const char *ref)   before each action, with its target's
 *                                               ref (NULL for a tap at a point): demo
 *                                               mode outlines it
 *   "action-performed"     (const char *line)  after each committed action
 *   "budget-changed"       (guint model_calls, guint actions, gint64 remaining_ms)
 *   "step-finished"        (SightStepResult *)  once per step, pass or fail: the seam
 *                                               the runner connects the store to
 *   "step-cancelled"       (const char *reason) instead, for a step whose caller's
 *                                               cancellable fired or that
 *                                               sight_agent_stop() stopped
 *   "observed"             (SightObservation *) each observation the step takes, before
 *                                               the model is given it (the inspector) */

#define SIGHT_TYPE_AGENT (sight_agent_get_type ())
G_DECLARE_FINAL_TYPE (SightAgent, sight_agent, SIGHT, AGENT, GObject)

/* At most this many screenshots ride in one act request: older ones are elided
 * in batches, keeping the newest two (the step context's SIGHT_STEP_MAX_IMAGES,
 * which sight-agent.c checks). */
#define SIGHT_AGENT_MAX_IMAGES 4

SightAgent      *sight_agent_new                (SightProject     *project,
                                                 SightWebPage     *page);
SightWebPage    *sight_agent_get_page           (SightAgent       *self);
SightProject    *sight_agent_get_project        (SightAgent       *self);

/* Where failure evidence (assert screenshots) is written; NULL: none is written. */
void             sight_agent_set_evidence_dir   (SightAgent       *self,
                                                 const char       *dir);
/* Overrides the provider built from the step's agent config (tests, the app's model
 * picker).  NULL returns to the config. */
void             sight_agent_set_provider       (SightAgent         *self,
                                                 SightModelProvider *provider);
/* The provider set above, or NULL (borrowed). */
SightModelProvider *sight_agent_get_provider    (SightAgent         *self);
/* A pause before each action, after "action-starting" (demo mode's slow motion);
 * 0, the default, acts at once.  The pause counts against the step's time. */
void             sight_agent_set_action_delay   (SightAgent       *self,
                                                 guint             delay_ms);
/* Stops the step in progress, whoever started it (the window's Stop on a
 * client's step): it ends with G_IO_ERROR_CANCELLED saying @reason. */
void             sight_agent_stop               (SightAgent       *self,
                                                 const char       *reason);
/* Whether a secret was filled in this attempt: marked here, or typed into the
 * agent's page by any path (sight_web_page_get_secret_fills()).  Later pixels
 * are then withheld (PIXEL_TAINTED) and assert's evidence is skipped. */
void             sight_agent_mark_secret_filled (SightAgent       *self);
gboolean         sight_agent_get_secret_filled  (SightAgent       *self);

/* Runs one step whose every argument @request already checked (it is taken).  The
 * result is always returned, pass or fail; on failure it also carries the error,
 * which _finish copies into @error.  _finish returns NULL only when @cancellable
 * fired (G_IO_ERROR_CANCELLED). */
void             sight_agent_run_async          (SightAgent          *self,
                                                 SightStepRequest    *request,
                                                 GCancellable        *cancellable,
                                                 GAsyncReadyCallback  callback,
                                                 gpointer             user_data);
SightStepResult *sight_agent_run_finish         (SightAgent          *self,
                                                 GAsyncResult        *result,
                                                 GError             **error);

/* What carries out a step once it opened on its context: the built-in agent's
 * act and judgments (sight_agent_run_async), or a custom executor's
 * (sight-external-executor.h); the step executor chooses. The outcome goes into
 * the context's result; run_finish only says it ended. */
typedef struct {
  void (*run_async)  (SightStepContext    *ctx,
                      GAsyncReadyCallback  callback,
                      gpointer             user_data);
  void (*run_finish) (SightStepContext    *ctx,
                      GAsyncResult        *result);
} SightStepBody;

/* sight_agent_run_async with @body carrying the step out: no model is set up
 * for it. Finish with sight_agent_run_finish. */
void             sight_agent_run_body_async     (SightAgent          *self,
                                                 SightStepRequest    *request,
                                                 const SightStepBody *body,
                                                 GCancellable        *cancellable,
                                                 GAsyncReadyCallback  callback,
                                                 gpointer             user_data);
/* What the step in progress spent so far (the last step's total once it ended;
 * an empty sum before the first), for meters that attribute cost to each action
 * as it happens, e.g. from "model-call-finished" or "action-performed". */
void             sight_agent_get_step_usage     (SightAgent          *self,
                                                 SightUsage          *out_usage);

/* The system prompts and tool definitions, for the inspector and tests. */
const char      *sight_agent_get_system_prompt  (SightStepKind        kind);
/* The act tools as a JSON array of {name, description, parameters}. */
JsonNode        *sight_agent_get_act_tools      (gboolean             with_pixels);

G_END_DECLS
