/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "sight-step-context.h"

G_BEGIN_DECLS

/* The judgments of spec/agent-api.txt: assert, waitFor and extract, each on fresh
 * observations of @ctx's page. The outcome is written into @ctx's result (its
 * error included); _finish only says the judgment ended. */
void      sight_step_judgment_run_async      (SightStepContext    *ctx,
                                              GAsyncReadyCallback  callback,
                                              gpointer             user_data);
void      sight_step_judgment_run_finish     (SightStepContext    *ctx,
                                              GAsyncResult        *result);

/* One judgment of @condition on a fresh observation (tree only), as assert makes
 * it: one model call plus at most one repair round (act's cached replay asks it). */
void      sight_step_judge_condition_async   (SightStepContext    *ctx,
                                              const char          *condition,
                                              GAsyncReadyCallback  callback,
                                              gpointer             user_data);
gboolean  sight_step_judge_condition_finish  (SightStepContext    *ctx,
                                              GAsyncResult        *result,
                                              gboolean            *out_verdict,
                                              char               **out_explanation,
                                              GError             **error);

G_END_DECLS
