/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-video-recorder"

#include "config.h"

#include "sight-video-recorder.h"

#include <errno.h>
#include <stdlib.h>
#include <glib/gstdio.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include "sight-error.h"
#include "sight-secret-fields.h"
#include "sight-web-page-private.h"

/* Frames queued for the encoder past which a new one is dropped rather than
 * queued: a machine too busy to encode loses frames, not memory. */
#define MAX_QUEUED_FRAMES 4
/* How long the end of a recording waits for the page's last frame. */
#define LAST_FRAME_TIMEOUT_MS 2000

typedef enum {
  STATE_RECORDING,
  STATE_FINISHING,
  STATE_DONE,
} State;

struct _SightVideoRecorder
{
  GObject parent_instance;

  /* owned */
  SightWebPage *page;          /* until the recording is finished */
  char         *path;
  char         *part_path;     /* written here, renamed to @path when complete */
  GstElement   *pipeline;
  GstElement   *src;           /* borrowed from @pipeline */
  GstBuffer    *last_frame;    /* the newest frame pushed, to end the stream on */
  GCancellable *capture_cancellable;
  GPtrArray    *waiters;       /* GTask: finish_async calls */
  char         *done_path;     /* the outcome, once STATE_DONE */
  GError       *done_error;

  State         state;
  guint         tick_id;
  guint         bus_watch_id;
  guint         deadline_id;
  gboolean      capturing;
  gboolean      ending;        /* the end of the stream is sent */
  guint         last_frame_id; /* the wait for the last capture */
  gint64        started_at;    /* monotonic, µs */
  GstClockTime  last_pts;
  int           width;         /* of the stream, fixed by the first frame */
  int           height;
  guint         n_frames;      /* pushed */
  guint         n_withheld;    /* captured while a secret was being typed */
  guint         n_dropped;     /* the encoder was behind */
  guint         n_unsettled;   /* captured across a load: masks and pixels may differ */
  guint         load_events;   /* main-frame loads started or committed so far */
};

G_DEFINE_FINAL_TYPE (SightVideoRecorder, sight_video_recorder, G_TYPE_OBJECT)

/* The files of recordings under way. A process that ends before one is
 * finished (a command whose server stops while a run goes on) leaves no
 * part of it: what is left at exit is removed. Main thread only. */
static GPtrArray *unfinished;

static void
remove_unfinished (void)
{
  for (guint i = 0; unfinished != NULL && i < unfinished->len; i++)
    g_unlink (g_ptr_array_index (unfinished, i));
}

static void
unfinished_add (const char *part_path)
{
  if (unfinished == NULL)
    {
      unfinished = g_ptr_array_new_with_free_func (g_free);
      atexit (remove_unfinished);
    }
  g_ptr_array_add (unfinished, g_strdup (part_path));
}

/* @part_path is finished with: renamed, or removed. */
static void
unfinished_drop (const char *part_path)
{
  for (guint i = 0; unfinished != NULL && i < unfinished->len; i++)
    if (g_str_equal (g_ptr_array_index (unfinished, i), part_path))
      {
        g_ptr_array_remove_index_fast (unfinished, i);
        return;
      }
}

static void     complete      (SightVideoRecorder *self,
                               GError             *error);
static void     end_stream    (SightVideoRecorder *self);
static gboolean start_capture (SightVideoRecorder *self);

/* Stops every capture, timer and GStreamer thread and drops the pipeline
 * and the page; TRUE when a pipeline was running (its file is then whole
 * only after an end of stream). */
static gboolean
stop (SightVideoRecorder *self)
{
  gboolean running = self->pipeline != NULL;

  g_clear_handle_id (&self->tick_id, g_source_remove);
  g_clear_handle_id (&self->bus_watch_id, g_source_remove);
  g_clear_handle_id (&self->deadline_id, g_source_remove);
  g_clear_handle_id (&self->last_frame_id, g_source_remove);
  g_cancellable_cancel (self->capture_cancellable);
  if (running)
    gst_element_set_state (self->pipeline, GST_STATE_NULL);
  g_clear_pointer (&self->pipeline, gst_object_unref);
  g_clear_pointer (&self->last_frame, gst_buffer_unref);
  g_clear_object (&self->page);
  return running;
}

static void
sight_video_recorder_dispose (GObject *object)
{
  SightVideoRecorder *self = SIGHT_VIDEO_RECORDER (object);

  /* Dropped before it was finished: nothing half-written stays. */
  if (self->pipeline != NULL && stop (self))
    {
      g_unlink (self->part_path);
      unfinished_drop (self->part_path);
    }
  g_clear_object (&self->capture_cancellable);

  G_OBJECT_CLASS (sight_video_recorder_parent_class)->dispose (object);
}

static void
sight_video_recorder_finalize (GObject *object)
{
  SightVideoRecorder *self = SIGHT_VIDEO_RECORDER (object);

  g_free (self->path);
  g_free (self->part_path);
  g_free (self->done_path);
  g_clear_error (&self->done_error);
  g_clear_pointer (&self->waiters, g_ptr_array_unref);

  G_OBJECT_CLASS (sight_video_recorder_parent_class)->finalize (object);
}

static void
sight_video_recorder_class_init (SightVideoRecorderClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = sight_video_recorder_dispose;
  object_class->finalize = sight_video_recorder_finalize;
}

static void
sight_video_recorder_init (SightVideoRecorder *self)
{
  self->waiters = g_ptr_array_new_with_free_func (g_object_unref);
  self->capture_cancellable = g_cancellable_new ();
  self->last_pts = GST_CLOCK_TIME_NONE;
}

const char *
sight_video_recorder_get_path (SightVideoRecorder *self)
{
  g_return_val_if_fail (SIGHT_IS_VIDEO_RECORDER (self), NULL);
  return self->path;
}

guint
sight_video_recorder_get_n_frames (SightVideoRecorder *self)
{
  g_return_val_if_fail (SIGHT_IS_VIDEO_RECORDER (self), 0);
  return self->n_frames;
}

/* ----------------------------------------------------------------------- */
/* Frames                                                                  */

static GstClockTime
now_pts (SightVideoRecorder *self)
{
  return (GstClockTime) (g_get_monotonic_time () - self->started_at) * GST_USECOND;
}

static void
push (SightVideoRecorder *self,
      GstBuffer          *buffer,
      GstClockTime        pts)
{
  /* Timestamps only move forward. */
  if (GST_CLOCK_TIME_IS_VALID (self->last_pts) && pts <= self->last_pts)
    {
      gst_buffer_unref (buffer);
      return;
    }
  GST_BUFFER_PTS (buffer) = pts;
  GST_BUFFER_DURATION (buffer) = GST_SECOND / SIGHT_VIDEO_FPS;
  self->last_pts = pts;
  gst_clear_buffer (&self->last_frame);
  self->last_frame = gst_buffer_ref (buffer);
  if (gst_app_src_push_buffer (GST_APP_SRC (self->src), buffer) == GST_FLOW_OK)
    self->n_frames++;
}

static void
set_caps (SightVideoRecorder *self,
          int                 width,
          int                 height)
{
  g_autoptr(GstCaps) caps = NULL;

  /* Even sizes suit every encoder; a frame one pixel larger is cropped. */
  self->width = MAX (2, width & ~1);
  self->height = MAX (2, height & ~1);
  caps = gst_caps_new_simple ("video/x-raw",
                              "format", G_TYPE_STRING, "RGB",
                              "width", G_TYPE_INT, self->width,
                              "height", G_TYPE_INT, self->height,
                              "framerate", GST_TYPE_FRACTION, SIGHT_VIDEO_FPS, 1,
                              NULL);
  gst_app_src_set_caps (GST_APP_SRC (self->src), caps);
}

static void
push_pixbuf (SightVideoRecorder *self,
             GdkPixbuf          *pixbuf,
             GstClockTime        pts)
{
  g_autoptr(GdkPixbuf) frame = NULL;
  gsize offset[GST_VIDEO_MAX_PLANES] = { 0 };
  int stride[GST_VIDEO_MAX_PLANES] = { 0 };
  int width = gdk_pixbuf_get_width (pixbuf);
  int height = gdk_pixbuf_get_height (pixbuf);
  GstBuffer *buffer;
  gsize size;

  g_return_if_fail (gdk_pixbuf_get_n_channels (pixbuf) == 3);

  if (self->width == 0)
    set_caps (self, width, height);
  /* The stream keeps its first size: a page resized since is scaled to it. */
  if ((width != self->width && width != self->width + 1) ||
      (height != self->height && height != self->height + 1))
    frame = gdk_pixbuf_scale_simple (pixbuf, self->width, self->height, GDK_INTERP_BILINEAR);
  else
    frame = g_object_ref (pixbuf);

  size = gdk_pixbuf_get_byte_length (frame);
  stride[0] = gdk_pixbuf_get_rowstride (frame);
  buffer = gst_buffer_new_wrapped_full (GST_MEMORY_FLAG_READONLY,
                                        (gpointer) gdk_pixbuf_read_pixels (frame), size, 0, size,
                                        g_object_ref (frame), g_object_unref);
  gst_buffer_add_video_meta_full (buffer, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_RGB,
                                  self->width, self->height, 1, offset, stride);
  push (self, buffer, pts);
}

typedef struct {
  SightVideoRecorder *self;
  GstClockTime        pts;
  guint               typing_mark;
  guint               load_mark;
} Capture;

static void
frame_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  Capture *capture = user_data;
  g_autoptr(SightVideoRecorder) self = capture->self;
  g_autoptr(SightScreenshot) shot = NULL;
  g_autoptr(GError) error = NULL;
  gboolean typing = FALSE;
  gboolean pushed = FALSE;
  guint mark;

  shot = sight_web_page_screenshot_finish (SIGHT_WEB_PAGE (source), result, &error);
  self->capturing = FALSE;
  mark = sight_web_page_get_secret_typing_mark (SIGHT_WEB_PAGE (source), &typing);
  if (shot == NULL || self->state == STATE_DONE || self->ending)
    {
      if (shot == NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_debug ("A frame was not captured: %s", error->message);
    }
  else if (typing || mark != capture->typing_mark)
    self->n_withheld++;
  /* The masks were measured in one document and the pixels may be of the
   * next: such a frame could show a field unmasked. */
  else if (self->load_events != capture->load_mark)
    self->n_unsettled++;
  else if (gst_app_src_get_current_level_bytes (GST_APP_SRC (self->src)) <
           (guint64) MAX_QUEUED_FRAMES * gdk_pixbuf_get_byte_length (shot->pixbuf))
    {
      push_pixbuf (self, shot->pixbuf, capture->pts);
      pushed = TRUE;
    }
  else
    self->n_dropped++;
  g_free (capture);
  if (self->state != STATE_FINISHING)
    return;
  /* The last frame of a recording that is finishing is in. One that could
   * not be kept (begun across the load, say) is taken again while the wait
   * for the last frame lasts: a recording stopped early still shows the
   * page as it ends. */
  if (!pushed && !self->ending && self->last_frame_id != 0 && self->page != NULL &&
      start_capture (self))
    return;
  end_stream (self);
}

/* Starts a capture; FALSE when none started: a secret is being typed (the
 * frame is withheld) or a document is loading (its masks are not settled). */
static gboolean
start_capture (SightVideoRecorder *self)
{
  SightScreenshotOptions options = SIGHT_SCREENSHOT_OPTIONS_INIT;
  gboolean typing = FALSE;
  Capture *capture;

  if (_sight_web_page_is_loading (self->page))
    {
      self->n_unsettled++;
      return FALSE;
    }
  capture = g_new0 (Capture, 1);
  capture->load_mark = self->load_events;
  capture->typing_mark = sight_web_page_get_secret_typing_mark (self->page, &typing);
  if (typing)
    {
      self->n_withheld++;
      g_free (capture);
      return FALSE;
    }
  capture->self = g_object_ref (self);
  capture->pts = now_pts (self);
  /* No masks of our own: the screenshot then covers every secure field as
   * well as every filled secret. */
  options.raw = TRUE;
  options.max_side = SIGHT_VIDEO_MAX_SIDE;
  self->capturing = TRUE;
  sight_web_page_screenshot_async (self->page, &options, self->capture_cancellable, frame_cb,
                                   capture);
  return TRUE;
}

/* A load that starts or commits may change the document the masks were
 * measured in; WebKit's "finished", which can come well after the committed
 * document's load event, changes nothing. */
static void
load_changed_cb (SightVideoRecorder *self,
                 WebKitLoadEvent     event)
{
  if (event == WEBKIT_LOAD_STARTED || event == WEBKIT_LOAD_COMMITTED)
    self->load_events++;
}

static gboolean
tick_cb (gpointer user_data)
{
  SightVideoRecorder *self = user_data;

  /* One capture at a time: a tick that finds one pending is skipped. */
  if (!self->capturing)
    start_capture (self);
  return G_SOURCE_CONTINUE;
}

/* ----------------------------------------------------------------------- */
/* The pipeline                                                            */

static gboolean
bus_cb (GstBus     *bus,
        GstMessage *message,
        gpointer    user_data)
{
  SightVideoRecorder *self = user_data;

  switch (GST_MESSAGE_TYPE (message))
    {
    case GST_MESSAGE_EOS:
      self->bus_watch_id = 0;
      complete (self, NULL);
      return G_SOURCE_REMOVE;

    case GST_MESSAGE_ERROR:
      {
        g_autoptr(GError) error = NULL;

        gst_message_parse_error (message, &error, NULL);
        self->bus_watch_id = 0;
        complete (self, g_error_new (SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                     "The video could not be encoded: %s", error->message));
        return G_SOURCE_REMOVE;
      }

    default:
      return G_SOURCE_CONTINUE;
    }
}

static GstElement *
make_element (GstElement  *pipeline,
              const char  *factory,
              const char  *package,
              GError     **error)
{
  GstElement *element = gst_element_factory_make (factory, NULL);

  if (element == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "Recording needs GStreamer's %s element (Debian: %s)", factory, package);
      return NULL;
    }
  gst_bin_add (GST_BIN (pipeline), element);
  return element;
}

static gboolean
build_pipeline (SightVideoRecorder  *self,
                GError             **error)
{
  static const struct {
    const char *factory;
    const char *package;
  } chain[] = {
    { "appsrc", "gstreamer1.0-plugins-base" },
    { "videoconvert", "gstreamer1.0-plugins-base" },
    { "vp8enc", "gstreamer1.0-plugins-good" },
    { "webmmux", "gstreamer1.0-plugins-good" },
    { "filesink", "libgstreamer1.0-0" },
  };
  GstElement *elements[G_N_ELEMENTS (chain)];
  g_autoptr(GstBus) bus = NULL;
  g_autoptr(GError) init_error = NULL;

  if (!gst_init_check (NULL, NULL, &init_error))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "GStreamer could not start, so nothing can be recorded: %s",
                   init_error->message);
      return FALSE;
    }
  self->pipeline = gst_object_ref_sink (gst_pipeline_new ("sight-video"));
  for (guint i = 0; i < G_N_ELEMENTS (chain); i++)
    if ((elements[i] = make_element (self->pipeline, chain[i].factory, chain[i].package,
                                     error)) == NULL)
      return FALSE;
  self->src = elements[0];
  g_object_set (self->src,
                "format", GST_FORMAT_TIME,
                "is-live", TRUE,
                "block", FALSE,
                NULL);
  /* Realtime, on one thread: the machine runs the page and the tests too. */
  g_object_set (elements[2],
                "target-bitrate", SIGHT_VIDEO_BITRATE,
                "deadline", (gint64) 1,
                "cpu-used", 8,
                "threads", 1,
                "keyframe-max-dist", 10 * SIGHT_VIDEO_FPS,
                NULL);
  gst_util_set_object_arg (G_OBJECT (elements[2]), "end-usage", "cbr");
  /* The file takes frames as they come, not at the clock's pace. */
  g_object_set (elements[4], "location", self->part_path, "sync", FALSE, "async", FALSE, NULL);
  unfinished_add (self->part_path);
  if (!gst_element_link_many (elements[0], elements[1], elements[2], elements[3], elements[4],
                              NULL))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "The video encoder could not be set up");
      return FALSE;
    }
  bus = gst_pipeline_get_bus (GST_PIPELINE (self->pipeline));
  self->bus_watch_id = gst_bus_add_watch (bus, bus_cb, self);
  if (gst_element_set_state (self->pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "The video could not be started at %s", self->part_path);
      return FALSE;
    }
  return TRUE;
}

SightVideoRecorder *
sight_video_recorder_new (SightWebPage  *page,
                          const char    *path,
                          GError       **error)
{
  g_autoptr(SightVideoRecorder) self = NULL;
  g_autofree char *dir = NULL;

  g_return_val_if_fail (SIGHT_IS_WEB_PAGE (page), NULL);
  g_return_val_if_fail (path != NULL, NULL);

  self = g_object_new (SIGHT_TYPE_VIDEO_RECORDER, NULL);
  self->page = g_object_ref (page);
  self->path = g_strdup (path);
  self->part_path = g_strconcat (path, ".part", NULL);
  dir = g_path_get_dirname (path);
  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int errsv = errno;

      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "The video folder %s could not be made: %s", dir, g_strerror (errsv));
      return NULL;
    }
  if (!build_pipeline (self, error))
    return NULL;
  g_signal_connect_object (sight_web_page_get_web_view (page), "load-changed",
                           G_CALLBACK (load_changed_cb), self, G_CONNECT_SWAPPED);
  self->started_at = g_get_monotonic_time ();
  self->tick_id = g_timeout_add (1000 / SIGHT_VIDEO_FPS, tick_cb, self);
  tick_cb (self);
  return g_steal_pointer (&self);
}

/* ----------------------------------------------------------------------- */
/* The end                                                                 */

static void
return_to (GTask              *task,
           SightVideoRecorder *self)
{
  if (self->done_error != NULL)
    g_task_return_error (task, g_error_copy (self->done_error));
  else
    g_task_return_pointer (task, g_strdup (self->done_path), g_free);
}

/* Ends the recording with @error (taken), or complete when NULL. */
static void
complete (SightVideoRecorder *self,
          GError             *error)
{
  g_autoptr(GPtrArray) waiters = NULL;

  if (self->state == STATE_DONE)
    {
      g_clear_error (&error);
      return;
    }
  self->state = STATE_DONE;
  stop (self);

  if (error == NULL && g_rename (self->part_path, self->path) != 0)
    {
      int errsv = errno;

      error = g_error_new (SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                           "The video could not be kept at %s: %s", self->path,
                           g_strerror (errsv));
    }
  if (error != NULL)
    {
      g_unlink (self->part_path);
      self->done_error = error;
    }
  else
    self->done_path = g_strdup (self->path);
  unfinished_drop (self->part_path);
  g_debug ("Recording %s ended: %u frames, %u withheld while a secret was typed, %u across a "
           "load, %u dropped (the encoder was behind)%s%s", self->path, self->n_frames,
           self->n_withheld, self->n_unsettled, self->n_dropped, error ? ": " : "",
           error ? error->message : "");

  waiters = g_steal_pointer (&self->waiters);
  self->waiters = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < waiters->len; i++)
    return_to (g_ptr_array_index (waiters, i), self);
}

/* Ends the stream of a finishing recording, once. */
static void
end_stream (SightVideoRecorder *self)
{
  if (self->state != STATE_FINISHING || self->ending)
    return;
  self->ending = TRUE;
  g_clear_handle_id (&self->last_frame_id, g_source_remove);
  g_cancellable_cancel (self->capture_cancellable);
  if (self->n_frames == 0)
    {
      complete (self, g_error_new (SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                   "No frame of the page could be captured, so there is no "
                                   "video"));
      return;
    }
  /* The newest frame again, so the video lasts as long as the recording. */
  push (self, gst_buffer_copy (self->last_frame), now_pts (self));
  gst_app_src_end_of_stream (GST_APP_SRC (self->src));
}

static gboolean
last_frame_timeout_cb (gpointer user_data)
{
  SightVideoRecorder *self = user_data;

  self->last_frame_id = 0;
  end_stream (self);
  return G_SOURCE_REMOVE;
}

static gboolean
deadline_cb (gpointer user_data)
{
  SightVideoRecorder *self = user_data;

  self->deadline_id = 0;
  complete (self, g_error_new (SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                               "The video was not written within %d ms",
                               SIGHT_VIDEO_FINISH_TIMEOUT_MS));
  return G_SOURCE_REMOVE;
}

void
sight_video_recorder_finish_async (SightVideoRecorder  *self,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (SIGHT_IS_VIDEO_RECORDER (self));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_video_recorder_finish_async);
  if (self->state == STATE_DONE)
    {
      return_to (task, self);
      return;
    }
  g_ptr_array_add (self->waiters, g_steal_pointer (&task));
  if (self->state == STATE_FINISHING)
    return;

  self->state = STATE_FINISHING;
  g_clear_handle_id (&self->tick_id, g_source_remove);
  self->deadline_id = g_timeout_add (SIGHT_VIDEO_FINISH_TIMEOUT_MS, deadline_cb, self);
  /* What the page shows at the end matters most: the capture under way,
   * or one more, is waited for (briefly) before the stream ends. */
  if (!self->capturing && (self->page == NULL || !start_capture (self)))
    {
      end_stream (self);
      return;
    }
  self->last_frame_id = g_timeout_add (LAST_FRAME_TIMEOUT_MS, last_frame_timeout_cb, self);
}

char *
sight_video_recorder_finish_finish (SightVideoRecorder  *self,
                                    GAsyncResult        *result,
                                    GError             **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
