/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <adwaita.h>

#include "sight-agent.h"
#include "sight-model-provider.h"
#include "sight-project.h"
#include "sight-web-page.h"

G_BEGIN_DECLS

#define SIGHT_TYPE_COMPOSER (sight_composer_get_type ())
G_DECLARE_FINAL_TYPE (SightComposer, sight_composer, SIGHT, COMPOSER, AdwBin)

/* The step composer: a direct step ("do") or act / assert / waitFor /
 * extract, its instruction, params, schema and options, run live against
 * the page. The verdict, summary or explanation and code show inline; the
 * budget meters move from the agent's progress signals while the step runs;
 * every step run lands in the timeline.
 *
 * Actions: composer.run, composer.stop. Emits ::step-finished with the
 * step's result as JSON (sight_step_result_to_json's shape; direct steps
 * and steps that could not start {"kind", "instruction", "verdict",
 * "code"?, "explanation"?, "summary"?}); a stopped step emits nothing, and
 * the "running" property turns FALSE either way. */
GtkWidget  *sight_composer_new             (void);
void        sight_composer_set_page        (SightComposer *self,
                                            SightWebPage  *page);
/* Cancelled with the window: a running step stops. */
void        sight_composer_set_cancellable (SightComposer *self,
                                            GCancellable  *cancellable);
/* "do", "act", "assert", "waitFor" or "extract". */
void        sight_composer_set_kind        (SightComposer *self,
                                            const char    *kind);
const char *sight_composer_get_kind        (SightComposer *self);
void        sight_composer_set_instruction (SightComposer *self,
                                            const char    *instruction);
gboolean    sight_composer_get_running     (SightComposer *self);
/* "pass", "fail", "blocked", or NULL before the first step. */
const char *sight_composer_get_verdict     (SightComposer *self);
guint       sight_composer_get_n_timeline  (SightComposer *self);
/* What the meters show: model calls and actions used, and the time used. */
void        sight_composer_get_meters      (SightComposer *self,
                                            guint         *model_calls,
                                            guint         *actions,
                                            gint64        *elapsed_ms);
/* Runs one step of a test file (@options: its members other than the
 * instruction, or NULL) as if typed in; FALSE when a step is running. */
gboolean    sight_composer_run_step        (SightComposer *self,
                                            const char    *kind,
                                            const char    *instruction,
                                            JsonObject    *options);
/* Adds a step the recorder made (a test-file step object) to the timeline. */
/* A new agent on the composer's page for a step run on the composer's
 * behalf (a whole test run by the runner): the preferences' model for an
 * agent that names none, the meters following its budget and model calls,
 * demo mode's pauses before its actions. */
SightAgent *sight_composer_new_agent       (SightComposer   *self,
                                            const char      *agent_name);
/* Shows a step that ran elsewhere (through the runner) as the composer
 * shows its own: verdict, timeline row, tokens and totals. */
void        sight_composer_show_step_result (SightComposer  *self,
                                             SightStepResult *step);
void        sight_composer_add_recorded_step (SightComposer *self,
                                              JsonNode      *step);
/* The model of the app's preferences, for agents that name none (NULL:
 * none; @hint then says why, or NULL to fall back to the environment). */
void        sight_composer_set_provider    (SightComposer      *self,
                                            SightModelProvider *provider,
                                            const char         *hint);
/* The project whose agents, budgets and credentials steps use (a step
 * running keeps the one it started with). */
void        sight_composer_set_project     (SightComposer *self,
                                            SightProject  *project);
/* What a step that says nothing gets: act's maxSteps, act's and waitFor's
 * maxModelCalls, and vision ("off", "on", "only") for the judgments. 0 and
 * NULL leave it to the agent. */
void        sight_composer_set_defaults    (SightComposer *self,
                                            guint          max_steps,
                                            guint          max_model_calls,
                                            const char    *vision);
/* Whether the "No model configured" notice is up. */
gboolean    sight_composer_get_no_model_shown (SightComposer *self);
/* The project steps run with (borrowed), or NULL. */
SightProject *sight_composer_get_project   (SightComposer *self);
/* A pause before each step starts, after ::step-started, and before each
 * action of an act step, after ::action-starting (@ref: the target's ref, or
 * NULL for a tap at a point): demo mode's slow motion; 0 does not pause. */
void        sight_composer_set_start_delay (SightComposer *self,
                                            guint          delay_ms);
/* Shows the steps @agent runs (a live session's, driven by an MCP client)
 * as they run: the meters move from its progress signals and each step
 * lands in the timeline with its verdict; ::step-finished is not emitted
 * for them. NULL stops following. */
void        sight_composer_follow_agent    (SightComposer *self,
                                            SightAgent    *agent);

G_END_DECLS
