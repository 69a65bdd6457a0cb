/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "sight-run-recorder.h"
#include "sight-store.h"
#include "sight-video-recorder.h"

G_BEGIN_DECLS

/* Where recordings are kept and how a run links one. A run's recording (a
 * smoke test's, always) is an artifact like every other: the WebM file
 * (sight-video-recorder.h) artifacts/<run>/video.webm beside the store,
 * named among the run's artifacts (sight_run_data_find_video() in
 * sight-store.h), so every report can link it. A session's recording
 * (`record` on create_session and run_task) starts before any run: it is
 * kept as <the default store's folder>/videos/<session>.webm and becomes
 * each of its task runs' artifact when the run links it. */

#define SIGHT_RUN_VIDEO_NAME "video.webm"

/* The file of run @run_id's recording in @store. */
char     *sight_run_video_path         (SightStore       *store,
                                        const char       *run_id);
/* The file of session @session_id's recording. */
char     *sight_run_video_session_path (const char       *session_id);
/* Makes the complete recording at @path the artifact of @recorder's run
 * (the file itself when it is sight_run_video_path (), else a hard link to
 * it there, or a copy) and stores its row. Returns the artifact's path, or
 * NULL with why. */
char     *sight_run_video_link         (SightRunRecorder *recorder,
                                        const char       *path,
                                        GError          **error);

G_END_DECLS
