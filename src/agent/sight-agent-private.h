/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "sight-agent.h"
#include "sight-budget.h"
#include "sight-observation.h"

G_BEGIN_DECLS

/* One running step: shared by sight-agent.c (judgments) and sight-step-act.c. */
typedef struct {
  SightAgent         *agent;
  SightStepRequest   *request;
  SightBudget        *budget;
  SightStepResult    *result;
  SightModelProvider *provider;
  GCancellable       *cancellable;
  /* the caller's, which fires ours */
  GCancellable       *caller_cancellable;
  gulong              caller_handler;
  /* the origin the step opened on: the target a secret may be filled into */
  char               *target_origin;
  /* why there is no provider (act with a trace cache opens without one) */
  GError             *provider_error;
} SightStep;

/* Nested waits on the thread-default main context (see sight-agent.c). */
typedef struct {
  GAsyncResult *result;
} SightWaiter;

void               _sight_waiter_cb            (GObject       *source,
                                                GAsyncResult  *result,
                                                gpointer       user_data);
GAsyncResult      *_sight_waiter_wait          (SightWaiter   *waiter);
/* Sleeps @ms (already capped by the caller); FALSE when @cancellable fired. */
gboolean           _sight_sleep                (gint64         ms,
                                                GCancellable  *cancellable);

/* A fresh observation with a timeout capped by the step's deadline; with
 * @screenshot, a masked screenshot too (on a capture failure the observation is
 * taken without one and *@out_no_pixels is set). */
SightObservation  *_sight_step_observe         (SightStep     *step,
                                                gboolean       screenshot,
                                                gboolean      *out_no_pixels,
                                                GError       **error);
/* Takes one model call from the budget, sends @request, accounts usage, pixels and
 * progress. */
SightModelResponse *_sight_step_call_model     (SightStep         *step,
                                                SightModelRequest *request,
                                                GError           **error);
/* The observation as the model is given it: untrusted data between markers. */
char              *_sight_step_page_block      (SightObservation  *observation,
                                                gboolean           with_tree);
void               _sight_step_add_injection   (SightStep         *step,
                                                JsonNode          *injection);
/* One judgment of @condition on a fresh observation (tree only), as assert makes
 * it: one model call plus at most one repair round. */
gboolean           _sight_step_judge           (SightStep         *step,
                                                const char        *condition,
                                                gboolean          *out_verdict,
                                                char             **out_explanation,
                                                GError           **error);

/* "action-starting", then the action delay (capped by the step's time; a cancelled
 * step goes on at once and its action reports the cancellation). */
void               _sight_step_start_action    (SightStep         *step,
                                                const char        *ref);
void               _sight_agent_emit_action    (SightAgent        *self,
                                                const char        *line);
const char        *_sight_agent_get_evidence_dir (SightAgent      *self);

/* sight-step-act.c */
void               _sight_step_run_act         (SightStep         *step);

/* sight-step-actions.c: the page actions act commits, through the engine
 * (_sight_direct_perform_async: actionability, the action, settling). */
/* Runs @verb on @ref (or taps (@x, @y) when @at_point), waiting on the thread-default
 * main context; the timeout is the project's actionTimeout (10 s when unset), capped
 * by the step's deadline.  Returns the engine's result (descriptor, navigated, url,
 * settleMs, popups, …); an action the page refused is ACTION_FAILED naming why (a
 * covering element, a disabled control). */
JsonObject        *_sight_step_perform         (SightStep         *step,
                                                const char        *ref,
                                                const char        *verb,
                                                const char        *value,
                                                gboolean           at_point,
                                                double             x,
                                                double             y,
                                                GError           **error);
/* Fills the Secret @name (param @param) into @ref through the one secret fill
 * (sight-secret-fill.h), from the step's target origin, timed as
 * _sight_step_perform(). */
JsonObject        *_sight_step_fill_secret     (SightStep         *step,
                                                const char        *ref,
                                                const char        *name,
                                                const char        *param,
                                                GError           **error);

G_END_DECLS
