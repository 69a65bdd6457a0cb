/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <adwaita.h>

#include "sight-observation.h"
#include "sight-store.h"

G_BEGIN_DECLS

#define SIGHT_TYPE_HISTORY (sight_history_get_type ())
G_DECLARE_FINAL_TYPE (SightHistory, sight_history, SIGHT, HISTORY, AdwBin)

/* The stored runs, newest first, filtered by verdict and a search text; an
 * opened run time-travels through its steps: each step's verdict, code and
 * explanation, its console errors and failed requests, and its before and
 * after observation (::observation-selected hands it to the inspector once a
 * worker parsed it: an empty one when the step has none stored, NULL when the
 * run is closed). The
 * run's report can be opened, exported as HTML or copied as JSON.
 *
 * Every store read is asynchronous. Actions: history.reload, history.back,
 * history.open-report, history.export-report, history.copy-json. */
GtkWidget    *sight_history_new                (void);
/* Uses @store (default: the store at its default path, opened on first
 * use). */
void          sight_history_set_store          (SightHistory *self,
                                                SightStore   *store);
/* Reads the runs again; ::runs-loaded follows. */
void          sight_history_reload             (SightHistory *self);
/* NULL for every verdict, else "pass", "fail", "error", "interrupted", … */
void          sight_history_set_verdict_filter (SightHistory *self,
                                                const char   *verdict);
void          sight_history_set_search         (SightHistory *self,
                                                const char   *text);
/* Runs listed after the filter and the search. */
guint         sight_history_get_n_shown        (SightHistory *self);
/* The id of the @index-th run listed, or NULL. */
const char   *sight_history_get_shown_run_id   (SightHistory *self,
                                                guint         index);

/* Loads the run and shows it; ::run-loaded follows. */
void          sight_history_open_run           (SightHistory *self,
                                                const char   *run_id);
/* The run shown (borrowed), or NULL. */
const SightRunData *sight_history_get_run      (SightHistory *self);
/* Shows step @index of the open run, its "before" or "after" observation
 * in the inspector; FALSE when there is no such step. */
gboolean      sight_history_select_step        (SightHistory *self,
                                                guint         index,
                                                gboolean      after);
/* What the step's detail shows: its explanation (or summary), and the
 * number of console errors and failed requests listed. */
const char   *sight_history_get_step_text      (SightHistory *self);
guint         sight_history_get_n_step_logs    (SightHistory *self);
/* Writes the open run's HTML report to @file. */
gboolean      sight_history_export_report      (SightHistory *self,
                                                GFile        *file,
                                                GError      **error);
/* The open run's JSON report as text, as "Copy JSON" puts it on the
 * clipboard. */
char         *sight_history_dup_json_report    (SightHistory *self);

G_END_DECLS
