/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "sight-observation.h"
#include "sight-step-result.h"
#include "sight-store.h"
#include "sight-web-page.h"

G_BEGIN_DECLS

/* One stored run, as every runner and the app keep it: the run opened, each
 * step opened (its row says "running" while it runs, so a run cut short
 * shows where it was) and closed with its verdict, code, explanation, usage
 * and trace-cache part, the page after it (tree and screenshot), the steps
 * not run recorded as skipped, the page's log, and the run closed with its
 * verdict or marked interrupted. The step's text and options are written
 * again when it closes: a secret typed literally is masked in the text, and
 * the store masks a param that turned out to be a secret.
 *
 * Writes go through the store's thread; a write that fails is logged. */

#define SIGHT_TYPE_RUN_RECORDER (sight_run_recorder_get_type ())
G_DECLARE_FINAL_TYPE (SightRunRecorder, sight_run_recorder, SIGHT, RUN_RECORDER, GObject)

/* The one verdict mapping of a step's error: none is a pass; a cancelled
 * step was interrupted; a product failure (ACTION_FAILED, ASSERTION_FAILED)
 * fails; anything else (the environment, credentials, budgets, the model, a
 * bad argument, an internal error) means it could not run to a result. */
SightRunVerdict   sight_run_verdict_for_error      (const GError     *error);

/* Opens a run in @store as @run describes it (verdict running, started now
 * unless set). Fails with the store's error. */
SightRunRecorder *sight_run_recorder_open          (SightStore       *store,
                                                    const SightRunRecord *run,
                                                    GError          **error);
/* The same without waiting for the store (the app's thread must not): the
 * run is opened on the store's thread and a failure is logged. */
SightRunRecorder *sight_run_recorder_open_async    (SightStore       *store,
                                                    const SightRunRecord *run);
const char       *sight_run_recorder_get_run_id    (SightRunRecorder *self);
SightStore       *sight_run_recorder_get_store     (SightRunRecorder *self);
/* The index the next step gets (the number of steps recorded). */
guint             sight_run_recorder_get_n_steps   (SightRunRecorder *self);

/* Opens the next step. @label may be NULL (derived by the store); @options
 * (borrowed until the step closes) are the step's options as written. */
void              sight_run_recorder_step_open     (SightRunRecorder *self,
                                                    const char       *kind,
                                                    const char       *label,
                                                    const char       *instruction,
                                                    JsonObject       *options);
/* Closes the open step with @verdict (a cancelled @error: interrupted),
 * @error's code and message or @explanation, and, from @result when given,
 * its usage, trace-cache part, model calls and actions (a direct step's
 * none). @instruction: the text as it is to be kept from now on (masked),
 * or NULL for the one it opened with. Returns the verdict recorded. */
SightRunVerdict   sight_run_recorder_step_close    (SightRunRecorder *self,
                                                    SightRunVerdict   verdict,
                                                    const GError     *error,
                                                    const char       *explanation,
                                                    SightStepResult  *result,
                                                    const char       *instruction);
/* Closes the open step with what the executor returned: its verdict mapped
 * by sight_run_verdict_for_error(), its summary, usage and masked text.
 * @result NULL with @error cancelled: interrupted, @masked the text to keep. */
SightRunVerdict   sight_run_recorder_step_result   (SightRunRecorder *self,
                                                    SightStepResult  *result,
                                                    const GError     *error,
                                                    const char       *masked);
/* A step that does not run: opened and closed as skipped, saying @why. */
void              sight_run_recorder_step_skip     (SightRunRecorder *self,
                                                    const char       *kind,
                                                    const char       *label,
                                                    const char       *instruction,
                                                    JsonObject       *options,
                                                    const char       *why);
/* Records a step that has already ended, as @step gives it (kind, label,
 * instruction, verdict, spend, times; the run and the index are the
 * recorder's): each action of a task as it is committed. */
void              sight_run_recorder_step_add      (SightRunRecorder *self,
                                                    const SightStepRecord *step);
/* Stores @observation as the page after the last closed step (@phase
 * "after", "final", …). */
void              sight_run_recorder_observe       (SightRunRecorder *self,
                                                    const char       *phase,
                                                    SightObservation *observation);
/* Takes and stores the page after the step that closed last (phase
 * "after"), as sight_step_shot_for () rules from that step's screenshot
 * option, how it ended and @secret_filled (whether a secret was filled in
 * the attempt): with screenshot: false no screenshot at all; after an
 * ASSERTION_FAILED the screenshot is also stored as the step's failure
 * evidence, an artifact ("step-N-evidence.jpg") kept as a file too. @flags
 * adds to what is captured (SIGHT_OBSERVE_FULL_TEXT); the capture gives up
 * after @timeout_ms. _finish returns the evidence's path (NULL: none) and,
 * when @out_observation is given, what was seen (NULL when the capture
 * failed, which is not an error: the step is recorded all the same).
 *
 * The page's screenshot is taken while the next step goes on: observe
 * answers once the tree is in and the snapshot asked for (WebKit paints it
 * before anything sent after), and the run is finished after the last
 * screenshot is kept. A failure's evidence is in before observe answers.
 * When the page has not changed since it was recorded last (no mutation,
 * input, scroll or viewport change: sight_observation_capture_since_async()),
 * the step is recorded with that same tree and screenshot, with no walk
 * and no paint. */
void              sight_run_recorder_observe_step_async  (SightRunRecorder    *self,
                                                          SightWebPage        *page,
                                                          SightObserveFlags    flags,
                                                          gboolean             secret_filled,
                                                          guint                timeout_ms,
                                                          GCancellable        *cancellable,
                                                          GAsyncReadyCallback  callback,
                                                          gpointer             user_data);
char             *sight_run_recorder_observe_step_finish (SightRunRecorder    *self,
                                                          GAsyncResult        *result,
                                                          SightObservation   **out_observation);
/* Stores what @page logged (NULL: nothing) as the run's log; _between
 * keeps the entries stamped from @since (0: the start) to @until (0: now). */
void              sight_run_recorder_store_log     (SightRunRecorder *self,
                                                    SightWebPage     *page);
void              sight_run_recorder_store_log_between (SightRunRecorder *self,
                                                        SightWebPage     *page,
                                                        gint64            since,
                                                        gint64            until);
/* Closes the run: @verdict, with @code and @explanation unless it passed,
 * and the URL the page ended on. @callback gets the store's write
 * (sight_store_write_finish); NULL: a failed write is logged. */
void              sight_run_recorder_close         (SightRunRecorder *self,
                                                    SightRunVerdict   verdict,
                                                    const char       *code,
                                                    const char       *explanation,
                                                    const char       *final_url,
                                                    GAsyncReadyCallback callback,
                                                    gpointer          user_data);
/* The same with everything @run says (a task's answer, notes, when it
 * finished); its id is the recorder's. A run may be closed again (a task's
 * log stored once its session ends). */
void              sight_run_recorder_close_record  (SightRunRecorder *self,
                                                    const SightRunRecord *run,
                                                    GAsyncReadyCallback callback,
                                                    gpointer          user_data);
/* Closes the run as interrupted, saying @explanation. */
void              sight_run_recorder_interrupt     (SightRunRecorder *self,
                                                    const char       *explanation,
                                                    const char       *final_url);

G_END_DECLS
