/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <adwaita.h>

#include "sight-composer.h"
#include "sight-store.h"
#include "sight-web-page.h"

G_BEGIN_DECLS

#define SIGHT_TYPE_STEP_LIST (sight_step_list_get_type ())
G_DECLARE_FINAL_TYPE (SightStepList, sight_step_list, SIGHT, STEP_LIST, AdwBin)

/* The test being edited: a *.sightline.json file's name, start URL and
 * steps, each editable in place, movable and deletable, and runnable one by
 * one, from a step on, or all (from the start URL). Steps run through the
 * composer, so its meters move and its timeline records them; each row then
 * shows its verdict and, for act steps, how the trace cache took part.
 *
 * Actions: steps.run-all, steps.stop, and, with the step's index (u),
 * step.run, step.run-from, step.move-up, step.move-down, step.delete.
 *
 * Every edit (a step added, edited, moved or deleted, the name or start
 * address changed) can be undone and redone (sight-step-undo.h); the
 * "modified" property is TRUE while the test differs from its saved state,
 * "can-undo" and "can-redo" follow the stack (both FALSE during a run). */
GtkWidget  *sight_step_list_new             (void);
void        sight_step_list_set_composer    (SightStepList  *self,
                                             SightComposer  *composer);
void        sight_step_list_set_page        (SightStepList  *self,
                                             SightWebPage   *page);
/* Runs of the steps are kept in @store (kind "test", each step with the page
 * after it), as the command line keeps its runs. */
void        sight_step_list_set_store       (SightStepList  *self,
                                             SightStore     *store);

/* What a test's relative start address ("/login") resolves against when
 * the test runs (NULL or empty: none; running such a test then says so). */
void        sight_step_list_set_base_url    (SightStepList  *self,
                                             const char     *base_url);

/* An empty, unnamed test starting at @url (may be NULL). */
void        sight_step_list_new_test        (SightStepList  *self,
                                             const char     *url);
/* Loads a test file (validated by the runner's loader). */
gboolean    sight_step_list_load            (SightStepList  *self,
                                             GFile          *file,
                                             GError        **error);
/* Writes the test to @file (NULL: where it came from), atomically. */
gboolean    sight_step_list_save            (SightStepList  *self,
                                             GFile          *file,
                                             GError        **error);
/* Where the test lives, or NULL for a new test. */
GFile      *sight_step_list_get_file        (SightStepList  *self);
/* The file's base name, or "Untitled Test" (translated). */
char       *sight_step_list_dup_display_name (SightStepList *self);
gboolean    sight_step_list_get_modified    (SightStepList  *self);
gboolean    sight_step_list_get_running     (SightStepList  *self);

guint       sight_step_list_get_n_steps     (SightStepList  *self);
/* Step @index as a test-file step object (borrowed). */
JsonObject *sight_step_list_get_step        (SightStepList  *self,
                                             guint           index);
const char *sight_step_list_get_step_kind   (SightStepList  *self,
                                             guint           index);
const char *sight_step_list_get_instruction (SightStepList  *self,
                                             guint           index);
/* "pass", "fail", "blocked", "running", or NULL before it ran. */
const char *sight_step_list_get_verdict     (SightStepList  *self,
                                             guint           index);
/* The trace cache's status from the last run ("self-finalized",
 * "agent-concluded", "missed"), or NULL when unknown. */
const char *sight_step_list_get_cache_state (SightStepList  *self,
                                             guint           index);
/* What the row's editor does. */
void        sight_step_list_set_instruction (SightStepList  *self,
                                             guint           index,
                                             const char     *instruction);
/* Appends a test-file step object (a copy is kept). */
void        sight_step_list_append_step     (SightStepList  *self,
                                             JsonNode       *step);
/* Inserts a step object before @index (the number of steps: at the end);
 * FALSE when it is no step or @index is past the end. */
gboolean    sight_step_list_insert_step     (SightStepList  *self,
                                             guint           index,
                                             JsonNode       *step);
/* Inserts a step after the selected one (at the end when none is) and
 * selects it; returns its index, or G_MAXUINT when it is no step. */
guint       sight_step_list_add_at_selection (SightStepList *self,
                                              JsonNode      *step);
/* The selected step (the one edited last, or added last), or -1. */
int         sight_step_list_get_selected    (SightStepList  *self);
/* Selects step @index (-1: none). */
void        sight_step_list_select          (SightStepList  *self,
                                             int             index);
void        sight_step_list_move_step       (SightStepList  *self,
                                             guint           from,
                                             guint           to);
void        sight_step_list_remove_step     (SightStepList  *self,
                                             guint           index);
/* Undo and redo the last edit (win.undo, win.redo); FALSE when there is
 * none, or while steps run. */
gboolean    sight_step_list_undo            (SightStepList  *self);
gboolean    sight_step_list_redo            (SightStepList  *self);
gboolean    sight_step_list_can_undo        (SightStepList  *self);
gboolean    sight_step_list_can_redo        (SightStepList  *self);
/* Edits between these undo as one (a recording session); they nest. */
void        sight_step_list_begin_group     (SightStepList  *self);
void        sight_step_list_end_group       (SightStepList  *self);
/* The line on how the last run went ("Step 3 failed: …"), or NULL. */
const char *sight_step_list_get_status      (SightStepList  *self);
/* Whether that line offers the model's preferences: the last run stopped
 * for want of a model (MODEL_UNAVAILABLE). */
gboolean    sight_step_list_offers_model_preferences (SightStepList *self);
/* The test's start URL, or NULL. */
const char *sight_step_list_get_url         (SightStepList  *self);
/* Sets the start URL when the test has none (a recording's first page). */
void        sight_step_list_suggest_url     (SightStepList  *self,
                                             const char     *url);
/* The key of the trace the model healed in step @index's last run, while
 * it waits for review, or NULL. */
const char *sight_step_list_get_heal_key    (SightStepList  *self,
                                             guint           index);
/* Accept (the trace replays from now on) or reject (the trace is deleted)
 * the healed trace of step @index: the row's Accept / Reject buttons. */
gboolean    sight_step_list_review_heal     (SightStepList  *self,
                                             guint           index,
                                             gboolean        accept,
                                             GError        **error);

G_END_DECLS
