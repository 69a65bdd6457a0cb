/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "sight-run-recorder.h"
#include "sight-store.h"
#include "sight-video-recorder.h"

G_BEGIN_DECLS

/* Where recordings are kept and how a run links one: a session's (`record`
 * on create_session and run_task) or a smoke test's (always) WebM file
 * (sight-video-recorder.h) is kept after the session ends, as
 * <the store's folder>/videos/<id>.webm, and the run names it among its
 * artifacts (sight_run_data_find_video() in sight-store.h), so every report
 * can link it. */

/* @store's folder (NULL: the default store's, sight_store_default_path()),
 * videos/@id.webm. */
char     *sight_run_video_path   (SightStore       *store,
                                  const char       *id);
/* Adds the artifact naming @path to @recorder's run. */
void      sight_run_video_link   (SightRunRecorder *recorder,
                                  const char       *path);

G_END_DECLS
