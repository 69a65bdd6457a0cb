/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

#include "sight-action.h"
#include "sight-budget.h"
#include "sight-model-provider.h"
#include "sight-observation.h"
#include "sight-project.h"
#include "sight-step-request.h"
#include "sight-step-result.h"
#include "sight-web-page.h"

G_BEGIN_DECLS

/* The runtime of one step: what act and the judgments (assert, waitFor,
 * extract) are given to work with. It observes the page, calls the model, keeps
 * the budget, waits and reports progress through hooks; it knows nothing of the
 * SightAgent that opened it (sight-agent.c sets the hooks to its signals).
 *
 * Every wait is asynchronous (a GTask completed from the page's, the model's or
 * a timeout source's callback) and every deadline is capped by the step's
 * remaining time; nothing here iterates a main context. */

/* At most this many screenshots ride in one act request: once more would, the
 * older ones are elided in one batch, keeping the newest SIGHT_STEP_KEEP_IMAGES. */
#define SIGHT_STEP_MAX_IMAGES 4
#define SIGHT_STEP_KEEP_IMAGES 2

typedef struct {
  void     (*observed)            (gpointer          data,
                                   SightObservation *observation);
  void     (*model_call_started)  (gpointer          data,
                                   guint             n);
  void     (*model_call_finished) (gpointer          data,
                                   guint             n,
                                   gboolean          ok);
  void     (*action_starting)     (gpointer          data,
                                   const char       *ref);
  /* @line is redacted already */
  void     (*action_performed)    (gpointer          data,
                                   const char       *line);
  void     (*budget_changed)      (gpointer          data,
                                   guint             model_calls,
                                   guint             actions,
                                   gint64            remaining_ms);
  /* whether a secret was filled in the attempt (pixels are then withheld) */
  gboolean (*secret_filled)       (gpointer          data);
} SightStepHooks;

typedef struct {
  /* owned */
  SightWebPage         *page;
  SightProject         *project;
  SightStepRequest     *request;
  SightBudget          *budget;
  SightStepResult      *result;
  SightModelProvider   *provider;
  /* why there is no provider (act with a trace cache opens without one) */
  GError               *provider_error;
  /* the step's one cancellable: its caller's and sight_agent_stop() fire it */
  GCancellable         *cancellable;
  /* the origin the step opened on: the target a secret may be filled into */
  char                 *target_origin;
  /* where assert writes its failure evidence (NULL: nowhere), and the step's
   * number in its attempt (the evidence file's name) */
  char                 *evidence_dir;
  guint                 number;
  /* the pause before each action (demo mode) */
  guint                 action_delay_ms;

  /* borrowed: the hooks outlive the step */
  const SightStepHooks *hooks;
  gpointer              hooks_data;
} SightStepContext;

/* Takes @request; the budget starts now. */
SightStepContext   *sight_step_context_new          (SightWebPage         *page,
                                                     SightProject         *project,
                                                     SightStepRequest     *request,
                                                     GCancellable         *cancellable,
                                                     const SightStepHooks *hooks,
                                                     gpointer              hooks_data);
void                sight_step_context_free         (SightStepContext     *ctx);

/* FALSE with ENVIRONMENT_UNAVAILABLE once the page was closed (disposed) under
 * the step: every operation on the page checks it first. */
gboolean            sight_step_context_check_page   (SightStepContext     *ctx,
                                                     GError              **error);
gboolean            sight_step_context_secret_filled (SightStepContext    *ctx);
/* "action-performed" with @line redacted. */
void                sight_step_context_emit_action  (SightStepContext     *ctx,
                                                     const char           *line);

/* A fresh observation with a timeout capped by the step's deadline; with
 * @screenshot, a masked screenshot too (on a capture failure the observation is
 * taken without one and *@out_no_pixels is set). */
void                sight_step_context_observe_async  (SightStepContext    *ctx,
                                                       gboolean             screenshot,
                                                       GAsyncReadyCallback  callback,
                                                       gpointer             user_data);
SightObservation   *sight_step_context_observe_finish (SightStepContext    *ctx,
                                                       GAsyncResult        *result,
                                                       gboolean            *out_no_pixels,
                                                       GError             **error);

/* Takes one model call from the budget, sends @request, accounts usage, pixels
 * and progress. */
void                sight_step_context_call_model_async  (SightStepContext    *ctx,
                                                          SightModelRequest   *request,
                                                          GAsyncReadyCallback  callback,
                                                          gpointer             user_data);
SightModelResponse *sight_step_context_call_model_finish (SightStepContext    *ctx,
                                                          GAsyncResult        *result,
                                                          GError             **error);

/* Waits @ms (capped by the step's remaining time) on a timeout source; FALSE with
 * G_IO_ERROR_CANCELLED as soon as the step's cancellable fires. */
void                sight_step_context_sleep_async  (SightStepContext    *ctx,
                                                     gint64               ms,
                                                     GAsyncReadyCallback  callback,
                                                     gpointer             user_data);
gboolean            sight_step_context_sleep_finish (SightStepContext    *ctx,
                                                     GAsyncResult        *result,
                                                     GError             **error);

/* "action-starting", then the action delay (capped by the step's time; a
 * cancelled step goes on at once and its action reports the cancellation). */
void                sight_step_context_start_action_async  (SightStepContext    *ctx,
                                                            const char          *ref,
                                                            GAsyncReadyCallback  callback,
                                                            gpointer             user_data);
void                sight_step_context_start_action_finish (SightStepContext    *ctx,
                                                            GAsyncResult        *result);

/* Performs @action (a page action, sight-action.h) through the engine
 * (actionability, the action, settling), within the action timeout.  Returns the
 * engine's result (descriptor, navigated, url, settleMs, popups, …); an action
 * the page refused is ACTION_FAILED naming why. */
void                sight_step_context_perform_async  (SightStepContext    *ctx,
                                                       const SightAction   *action,
                                                       GAsyncReadyCallback  callback,
                                                       gpointer             user_data);
JsonObject         *sight_step_context_perform_finish (SightStepContext    *ctx,
                                                       GAsyncResult        *result,
                                                       GError             **error);
/* The pixel-aware wait after an action while the step shows pixels
 * (sight_web_page_settle_pixels_async), bounded by what is left of the action
 * timeout after the @spent_ms the action took.  Never fails the step: a page
 * that cannot be captured is reported by the observation that follows. */
void                sight_step_context_settle_pixels_async  (SightStepContext    *ctx,
                                                             gint64               spent_ms,
                                                             GAsyncReadyCallback  callback,
                                                             gpointer             user_data);
void                sight_step_context_settle_pixels_finish (SightStepContext    *ctx,
                                                             GAsyncResult        *result);
/* Fills the Secret @name (param @param) into @ref through the one secret fill
 * (sight-secret-fill.h), from the step's target origin, timed as perform. */
void                sight_step_context_fill_secret_async  (SightStepContext    *ctx,
                                                           const char          *ref,
                                                           const char          *name,
                                                           const char          *param,
                                                           GAsyncReadyCallback  callback,
                                                           gpointer             user_data);
JsonObject         *sight_step_context_fill_secret_finish (SightStepContext    *ctx,
                                                           GAsyncResult        *result,
                                                           GError             **error);

/* Committing an action: the one way act's tool calls and a custom executor's
 * page/perform and page/tapAt start, budget and record an engine action. */

/* An engine action a step commits, and how it is recorded. */
typedef struct {
  const char  *tool;          /* the tool it is recorded as (static) */
  JsonNode    *record_args;   /* its args as recorded: a param by name, never a secret */
  SightAction  action;
  char        *log_line;      /* the action log's line (redacted when logged) */
  /* a fill of a Secret: its name and the param naming it */
  char        *secret_name;
  char        *param;
} SightStepAction;

/* Frees the members (a value is wiped first) and zeroes @action. */
void                sight_step_action_clear          (SightStepAction      *action);

/* Checks that a Secret may be filled (sight_secret_fill_authorize(): the
 * credential, its origins, the step's origin) and that an action step is left
 * (past the budget STEP_BUDGET_EXHAUSTED, past the deadline STEP_TIMEOUT),
 * announces the action (action-starting, the demo mode's pause), then performs
 * @action->action through the engine or, with a secret_name, fills that
 * Secret into @action->action.ref through the one secret fill. Once the engine committed it, it is counted and recorded
 * (sight_step_context_committed(), with the descriptor the trace cache replays
 * it by). @action is borrowed until the callback. */
void                sight_step_context_commit_action_async  (SightStepContext      *ctx,
                                                             const SightStepAction *action,
                                                             GAsyncReadyCallback    callback,
                                                             gpointer               user_data);
/* The engine's reply (navigated, url, settled, settleMs, popups, tapped, under,
 * durationMs, …), or NULL with the error and in *@out_ends_step whether it
 * ends the step: the deadline passed (the error is then the deadline's), the
 * budget ran out, the page is gone, the step was cancelled or the Secret was
 * refused (nothing typed). Otherwise the page refused the action (not
 * actionable, covered, gone: ACTION_FAILED…); it did not count and is the
 * caller's to report. */
JsonObject         *sight_step_context_commit_action_finish (SightStepContext      *ctx,
                                                             GAsyncResult          *result,
                                                             gboolean              *out_ends_step,
                                                             GError               **error);
/* An action the step committed: counted in the budget and the result, added
 * to the result's performed actions (with @descriptor, or null), its line to
 * the action log (redacted), and reported (action-performed, budget-changed). */
void                sight_step_context_committed     (SightStepContext      *ctx,
                                                      const SightStepAction *action,
                                                      JsonNode              *descriptor);
/* Adds {tool, args, descriptor} to the result's performed actions (what a
 * trace records), @args and @descriptor copied (NULL: null). */
void                sight_step_context_add_performed (SightStepContext     *ctx,
                                                      const char           *tool,
                                                      JsonNode             *args,
                                                      JsonNode             *descriptor);

/* The observation as the model is given it: untrusted data between markers. */
char               *sight_step_context_page_block   (SightObservation     *observation,
                                                     gboolean              with_tree);
void                sight_step_context_add_injection (SightStepContext    *ctx,
                                                      JsonNode            *injection);

/* The prompts and schemas of the agent's resources (sight-agent.gresource.xml),
 * NUL-terminated and alive for the life of the program. */
const char         *sight_step_context_resource_text (const char          *name);

G_END_DECLS
