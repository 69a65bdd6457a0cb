/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "sight-observation.h"
#include "sight-store.h"
#include "sight-web-page.h"

G_BEGIN_DECLS

/* Stores @observation as the page looked at step @step_index of run @run_id
 * (@phase: "after", "final", …): URL, title, tree, text and, when it has
 * one and @with_screenshot, the screenshot with its MIME type, size and scale. @callback gets the
 * store's write (sight_store_write_finish). */
void sight_run_store_observation (SightStore          *store,
                                  const char          *run_id,
                                  int                  step_index,
                                  const char          *phase,
                                  SightObservation    *observation,
                                  gboolean             with_screenshot,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data);

/* Stores what @page logged (NULL: nothing) as run @run_id's log, keeping the
 * entries stamped from @since (0: from the start) to @until (0: to now).
 * @callback gets each write (sight_store_write_finish). */
void sight_run_store_page_log    (SightStore          *store,
                                  const char          *run_id,
                                  SightWebPage        *page,
                                  gint64               since,
                                  gint64               until,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data);

G_END_DECLS
