/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

#include "sight-web-page.h"

G_BEGIN_DECLS

/* A page recorded as video: a WebM file (VP8) of what the viewport showed,
 * for a session's `record` and every smoke test.
 *
 * Frames are the page's screenshots (sight_web_page_screenshot_async(), raw):
 * every secure field and every region holding a filled secret is painted
 * black in each one by the screenshot's own masking, and a frame whose
 * capture overlapped a secret being typed, or a load (the masks measured in
 * one document, the pixels maybe of the next), is withheld (the video holds
 * the frame before); no capture starts while a document loads.  A capture runs at most every 1/SIGHT_VIDEO_FPS s and never
 * two at once: a tick that finds the last one pending is skipped.  Frames
 * are resampled to a long side of at most SIGHT_VIDEO_MAX_SIDE and encoded
 * at SIGHT_VIDEO_BITRATE in GStreamer's own threads (appsrc, videoconvert,
 * vp8enc, webmmux, filesink), into a temporary name next to @path.
 *
 * The figures keep a minute of a 1280 × 720 page under 2 MB, the size of a
 * report to mail: 250 kbit/s is 1.9 MB a minute, and a page that changes
 * little takes far less; 5 frames a second shows each step's effect while
 * the captures (one snapshot and one walk for the masks each) leave the main
 * loop free. */

#define SIGHT_VIDEO_FPS 5
#define SIGHT_VIDEO_MAX_SIDE 1280
#define SIGHT_VIDEO_BITRATE 250000   /* bits per second */
/* How long the end of a recording may take to be written. */
#define SIGHT_VIDEO_FINISH_TIMEOUT_MS 10000

#define SIGHT_TYPE_VIDEO_RECORDER (sight_video_recorder_get_type ())
G_DECLARE_FINAL_TYPE (SightVideoRecorder, sight_video_recorder, SIGHT, VIDEO_RECORDER, GObject)

/* Starts recording @page into @path (its folder is made). Fails with
 * ENVIRONMENT_UNAVAILABLE when GStreamer or one of its elements is missing.
 * The page is held until the recording finishes. */
SightVideoRecorder *sight_video_recorder_new          (SightWebPage        *page,
                                                       const char          *path,
                                                       GError             **error);
const char         *sight_video_recorder_get_path     (SightVideoRecorder  *self);
guint               sight_video_recorder_get_n_frames (SightVideoRecorder  *self);

/* Stops capturing after one last frame (the page as it ends, 2 s at most),
 * ends the stream and waits (SIGHT_VIDEO_FINISH_TIMEOUT_MS at most, all
 * told) until the file is complete, then moves it to its path. Finishes
 * with the path, or fails (ENVIRONMENT_UNAVAILABLE: an encoding error, the
 * deadline, no frame captured at all) with nothing left on disk. Calling it
 * again gives the same outcome. A cancelled @cancellable makes this call
 * finish cancelled, when the recording ends; the file is completed all the
 * same. */
void                sight_video_recorder_finish_async (SightVideoRecorder  *self,
                                                       GCancellable        *cancellable,
                                                       GAsyncReadyCallback  callback,
                                                       gpointer             user_data);
char               *sight_video_recorder_finish_finish (SightVideoRecorder *self,
                                                        GAsyncResult       *result,
                                                        GError            **error);

G_END_DECLS
