/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <glib/gstdio.h>
#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/pbutils/pbutils.h>
#include <gtk/gtk.h>
#include <libsoup/soup.h>
#include <string.h>

#include "sight-observation.h"
#include "sight-report.h"
#include "sight-secret-fields.h"
#include "sight-session.h"
#include "sight-smoke.h"
#include "sight-store.h"
#include "sight-web-page.h"
#include "test-files.h"

/* Sessions recorded as video (issue #23, item 9): a session opened with
 * `record` on a loopback page whose password field holds a canary writes a
 * WebM file that GStreamer's discoverer reads as VP8 video of the page's size
 * with a duration, within the size bound for mailed reports, and in every
 * sampled frame (decoded back to RGB) the field's box is black while the
 * page around it shows. A session without `record` writes nothing, and a
 * smoke test always records and links its video from the report. */

#define CANARY "canary-7f3a9c1e-video"
/* The password field's box on the page, in CSS pixels (the viewport is
 * 1280 × 720 at scale 1, the video's size). */
#define FIELD_X 200
#define FIELD_Y 160
#define FIELD_W 360
#define FIELD_H 60
/* 2 MB a minute at 1280 × 720, and the first frame (a whole key frame) on top. */
#define BYTES_PER_MINUTE (2 * 1024 * 1024)
#define KEY_FRAME_ALLOWANCE (128 * 1024)

static SoupServer *server;
static char *base;
static char *data_dir;

static void
handler (SoupServer        *srv,
         SoupServerMessage *msg,
         const char        *path,
         GHashTable        *query,
         gpointer           user_data)
{
  /* A yellow page, a magenta field: unmasked, the field would show. */
  g_autofree char *body = g_strdup_printf (
    "<!doctype html><html lang=en><title>Sign in</title>"
    "<style>html,body{margin:0;background:#ffff00}"
    "#pw{position:absolute;left:%dpx;top:%dpx;width:%dpx;height:%dpx;box-sizing:border-box;"
    "border:0;padding:0;margin:0;background:#ff00ff;color:#00ff00;font-size:40px}</style>"
    "<label for=pw>Password</label><input id=pw type=password value=\"%s\">"
    "<p style=\"position:absolute;top:400px;left:200px;font-size:30px\">Welcome</p></html>",
    FIELD_X, FIELD_Y, FIELD_W, FIELD_H, CANARY);

  soup_server_message_set_status (msg, 200, NULL);
  soup_server_message_set_response (msg, "text/html", SOUP_MEMORY_COPY, body, strlen (body));
}

/* The same page with a user name field (type=text: not secure, so masked
 * only once it holds the filled secret) that shows its text in green; the
 * page turns yellow again as soon as the field gets its input. */
static void
typing_handler (SoupServer        *srv,
                SoupServerMessage *msg,
                const char        *path,
                GHashTable        *query,
                gpointer           user_data)
{
  g_autofree char *body = g_strdup_printf (
    "<!doctype html><html lang=en><title>Sign in</title>"
    "<style>html,body{margin:0;background:#ffff00}"
    "#user{position:absolute;left:%dpx;top:%dpx;width:%dpx;height:%dpx;box-sizing:border-box;"
    "border:0;padding:0;margin:0;background:#ff00ff;color:#00ff00;font-size:40px}</style>"
    "<label for=user>User name</label><input id=user type=text autocomplete=username "
    "oninput=\"document.documentElement.style.background=document.body.style.background="
    "'#ffff00'\"></html>",
    FIELD_X, FIELD_Y, FIELD_W, FIELD_H);

  soup_server_message_set_status (msg, 200, NULL);
  soup_server_message_set_response (msg, "text/html", SOUP_MEMORY_COPY, body, strlen (body));
}

static void
done_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

static gboolean
timeout_cb (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

static void
spin (guint ms)
{
  gboolean done = FALSE;

  g_timeout_add (ms, timeout_cb, &done);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
}

static SightSession *
open_session_at (const char *path,
                 gboolean    record)
{
  g_autoptr(JsonObject) args = json_object_new ();
  g_autoptr(GAsyncResult) opened = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *url = g_strconcat (base, path, NULL);
  SightSession *session;

  json_object_set_string_member (args, "startUrl", url);
  if (record)
    json_object_set_boolean_member (args, "record", TRUE);
  sight_session_registry_create_async (sight_session_registry_get_default (), args, NULL,
                                       done_cb, &opened);
  while (opened == NULL)
    g_main_context_iteration (NULL, TRUE);
  session = sight_session_registry_create_finish (sight_session_registry_get_default (), opened,
                                                  &error);
  g_assert_no_error (error);
  return session;
}

static SightSession *
open_session (gboolean record)
{
  return open_session_at ("", record);
}

/* The session record's recording, once it is no longer being written. */
static JsonObject *
wait_recording (SightSession *session)
{
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;

  for (;;)
    {
      g_autoptr(JsonNode) node = sight_session_to_json (session);
      JsonObject *record = json_node_get_object (node);
      JsonObject *recording;

      g_assert_true (json_object_has_member (record, "recording"));
      recording = json_object_get_object_member (record, "recording");
      if (!g_str_equal (json_object_get_string_member (recording, "status"), "recording"))
        return json_object_ref (recording);
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      spin (50);
    }
}

/* What GStreamer's discoverer says of the file: it plays, as VP8 of the
 * page's size; returns its duration in ns. */
static GstClockTime
check_playable (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GstDiscoverer) discoverer = gst_discoverer_new (10 * GST_SECOND, &error);
  g_autoptr(GstDiscovererInfo) info = NULL;
  g_autofree char *uri = g_filename_to_uri (path, NULL, NULL);
  g_autoptr(GstCaps) caps = NULL;
  GList *streams;
  GstDiscovererVideoInfo *video;
  GstClockTime duration;

  g_assert_no_error (error);
  info = gst_discoverer_discover_uri (discoverer, uri, &error);
  g_assert_no_error (error);
  g_assert_cmpint (gst_discoverer_info_get_result (info), ==, GST_DISCOVERER_OK);
  duration = gst_discoverer_info_get_duration (info);
  streams = gst_discoverer_info_get_video_streams (info);
  g_assert_cmpuint (g_list_length (streams), ==, 1);
  video = streams->data;
  caps = gst_discoverer_stream_info_get_caps (GST_DISCOVERER_STREAM_INFO (video));
  g_test_message ("%s: %s, %" GST_TIME_FORMAT, path,
                  gst_structure_get_name (gst_caps_get_structure (caps, 0)),
                  GST_TIME_ARGS (duration));
  g_assert_true (gst_structure_has_name (gst_caps_get_structure (caps, 0), "video/x-vp8") ||
                 gst_structure_has_name (gst_caps_get_structure (caps, 0), "video/x-vp9"));
  g_assert_cmpuint (gst_discoverer_video_info_get_width (video), ==, 1280);
  g_assert_cmpuint (gst_discoverer_video_info_get_height (video), ==, 720);
  gst_discoverer_stream_info_list_free (streams);
  g_assert_cmpuint (duration, >, 0);
  return duration;
}

static void
check_size (const char   *path,
            GstClockTime  duration)
{
  GStatBuf st;
  double minutes = (double) duration / (60.0 * GST_SECOND);

  g_assert_cmpint (g_stat (path, &st), ==, 0);
  g_test_message ("%s: %" G_GINT64_FORMAT " bytes for %.2f s (%.0f bytes a minute)", path,
                  (gint64) st.st_size, minutes * 60, st.st_size / minutes);
  g_assert_cmpint (st.st_size, >, 0);
  g_assert_cmpfloat (st.st_size, <=, KEY_FRAME_ALLOWANCE + BYTES_PER_MINUTE * minutes);
}

typedef struct {
  guint64 sum[3];
  guint8  max;
  guint   n;
} Area;

static void
measure (const guint8 *pixels,
         int           stride,
         int           x,
         int           y,
         int           w,
         int           h,
         Area         *area)
{
  memset (area, 0, sizeof *area);
  for (int row = y; row < y + h; row++)
    for (int col = x; col < x + w; col++)
      {
        const guint8 *p = pixels + row * stride + col * 3;

        for (int c = 0; c < 3; c++)
          {
            area->sum[c] += p[c];
            area->max = MAX (area->max, p[c]);
          }
        area->n++;
      }
}

/* One decoded frame (RGB, @stride bytes a row) handed to a FrameFunc. */
typedef void (*FrameFunc) (const guint8 *pixels,
                           int           stride,
                           guint         index,
                           gpointer      user_data);

/* Decodes the file to RGB and hands every frame to @func, in order;
 * returns how many there were. */
static guint
decode_frames (const char *path,
               FrameFunc   func,
               gpointer    user_data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *quoted = g_strescape (path, NULL);
  g_autofree char *description = g_strdup_printf (
    "filesrc location=\"%s\" ! matroskademux ! vp8dec ! videoconvert ! "
    "video/x-raw,format=RGB ! appsink name=sink sync=false", quoted);
  g_autoptr(GstElement) pipeline = gst_parse_launch (description, &error);
  g_autoptr(GstElement) sink = NULL;
  guint seen = 0;

  g_assert_no_error (error);
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  g_assert_cmpint (gst_element_set_state (pipeline, GST_STATE_PLAYING), !=,
                   GST_STATE_CHANGE_FAILURE);
  for (;;)
    {
      g_autoptr(GstSample) sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
                                                                  10 * GST_SECOND);
      GstVideoInfo info;
      GstMapInfo map;

      if (sample == NULL)
        {
          g_assert_true (gst_app_sink_is_eos (GST_APP_SINK (sink)));
          break;
        }
      g_assert_true (gst_video_info_from_caps (&info, gst_sample_get_caps (sample)));
      g_assert_true (gst_buffer_map (gst_sample_get_buffer (sample), &map, GST_MAP_READ));
      func (map.data, GST_VIDEO_INFO_PLANE_STRIDE (&info, 0), seen++, user_data);
      gst_buffer_unmap (gst_sample_get_buffer (sample), &map);
    }
  gst_element_set_state (pipeline, GST_STATE_NULL);
  return seen;
}

/* The page beside the field: yellow, the page's own background. */
static gboolean
is_yellow (const Area *area)
{
  return area->sum[0] / area->n > 180 && area->sum[1] / area->n > 180 &&
         area->sum[2] / area->n < 80;
}

/* The field's box (inset a little for the codec's edges) is black: masked. */
static gboolean
is_black (const Area *area)
{
  for (int c = 0; c < 3; c++)
    if (area->sum[c] / area->n >= 24)
      return FALSE;
  return area->max < 80;
}

static void
measure_frame (const guint8 *pixels,
               int           stride,
               guint         index,
               Area         *field,
               Area         *page)
{
  measure (pixels, stride, FIELD_X + 4, FIELD_Y + 4, FIELD_W - 8, FIELD_H - 8, field);
  measure (pixels, stride, FIELD_X + FIELD_W + 40, FIELD_Y, 100, FIELD_H, page);
  g_test_message ("frame %u: field rgb %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
                  "/%" G_GUINT64_FORMAT " (max %u), page %" G_GUINT64_FORMAT
                  "/%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT, index,
                  field->sum[0] / field->n, field->sum[1] / field->n, field->sum[2] / field->n,
                  field->max, page->sum[0] / page->n, page->sum[1] / page->n,
                  page->sum[2] / page->n);
}

static void
field_black_cb (const guint8 *pixels,
                int           stride,
                guint         index,
                gpointer      user_data)
{
  guint *frames = user_data;
  Area field, page;

  measure_frame (pixels, stride, index, &field, &page);
  /* Frames of the blank page before the load are white; once the page
   * shows (yellow)… */
  if (!is_yellow (&page))
    {
      g_assert_cmpuint (*frames, ==, 0);
      return;
    }
  /* …the field does not (black, not magenta), in every frame. */
  g_assert_true (is_black (&field));
  (*frames)++;
}

/* Once the page shows (yellow beside the field), the password field's box
 * is black in every frame. Returns the frames showing the page. */
static guint
check_field_black (const char *path)
{
  guint frames = 0;

  decode_frames (path, field_black_cb, &frames);
  return frames;
}

static void
test_session_records (void)
{
  g_autoptr(SightSession) session = open_session (TRUE);
  g_autoptr(JsonObject) recording = NULL;
  g_autofree char *part = NULL;
  const char *path;
  GstClockTime duration;
  guint frames;

  /* A few seconds of a page that shows a secure field. */
  spin (3000);
  g_assert_true (sight_session_stop (session, "stopped"));
  recording = wait_recording (session);
  g_assert_cmpstr (json_object_get_string_member (recording, "status"), ==, "kept");
  path = json_object_get_string_member (recording, "path");
  g_assert_nonnull (path);
  g_assert_true (g_str_has_prefix (path, data_dir));
  g_assert_true (g_str_has_suffix (path, ".webm"));
  part = g_strconcat (path, ".part", NULL);
  g_assert_false (g_file_test (part, G_FILE_TEST_EXISTS));

  duration = check_playable (path);
  g_assert_cmpuint (duration, >=, 2 * GST_SECOND);
  check_size (path, duration);
  frames = check_field_black (path);
  g_test_message ("%u frames show the page, %" G_GINT64_FORMAT " captured", frames,
                  json_object_get_int_member (recording, "frames"));
  g_assert_cmpuint (frames, >=, 5);
}

/* A secret typed into the field while the session records: the page says
 * it is typing from the call until the fill ends (no frame is taken then),
 * and the field stays black in the video after it. */
static void
test_session_secret_fill (void)
{
  g_autoptr(SightSession) session = open_session (TRUE);
  SightWebPage *page = sight_session_get_page (session);
  g_autoptr(GAsyncResult) observed = NULL;
  g_autoptr(GAsyncResult) filled = NULL;
  g_autoptr(SightObservation) observation = NULL;
  g_autoptr(JsonNode) tree = NULL;
  g_autoptr(JsonObject) reply = NULL;
  g_autoptr(JsonObject) recording = NULL;
  g_autofree char *json = NULL;
  g_autoptr(GError) error = NULL;
  gboolean typing = TRUE;
  guint mark, during;
  JsonArray *secure;

  sight_observation_capture_async (page, SIGHT_OBSERVE_DEFAULT, 10000, NULL, done_cb, &observed);
  while (observed == NULL)
    g_main_context_iteration (NULL, TRUE);
  observation = sight_observation_capture_finish (observed, &error);
  g_assert_no_error (error);
  json = sight_observation_to_json (observation, FALSE);
  tree = json_from_string (json, &error);
  g_assert_no_error (error);
  secure = json_object_get_array_member (json_node_get_object (tree), "secure");
  g_assert_cmpuint (json_array_get_length (secure), ==, 1);

  mark = sight_web_page_get_secret_typing_mark (page, &typing);
  g_assert_false (typing);
  sight_web_page_fill_secret_async (page, json_object_get_string_member (
                                      json_array_get_object_element (secure, 0), "ref"),
                                    CANARY "-typed", "password", 10000, NULL, done_cb, &filled);
  during = sight_web_page_get_secret_typing_mark (page, &typing);
  g_assert_true (typing);
  g_assert_cmpuint (during, ==, mark + 1);
  while (filled == NULL)
    g_main_context_iteration (NULL, TRUE);
  reply = sight_web_page_fill_secret_finish (page, filled, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sight_web_page_get_secret_typing_mark (page, &typing), ==, during);
  g_assert_false (typing);

  spin (1500);
  g_assert_true (sight_session_stop (session, "stopped"));
  recording = wait_recording (session);
  g_assert_cmpstr (json_object_get_string_member (recording, "status"), ==, "kept");
  g_assert_cmpuint (check_field_black (json_object_get_string_member (recording, "path")), >=, 3);
}

/* The frames the recording holds so far. */
static gint64
recorded_frames (SightSession *session)
{
  g_autoptr(JsonNode) node = sight_session_to_json (session);
  JsonObject *recording = json_object_get_object_member (json_node_get_object (node),
                                                         "recording");

  return json_object_get_int_member (recording, "frames");
}

/* Iterates the main loop until @session's recording holds @frames frames
 * (20 s at most). */
static void
wait_frames (SightSession *session,
             gint64        frames)
{
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;

  while (recorded_frames (session) < frames)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_main_context_iteration (NULL, TRUE);
    }
}

typedef struct {
  SightWebPage *page;
  const char   *ref;
  GAsyncResult *filled;
} Typing;

/* The page is cyan now and the field hidden for a while: the fill starts in
 * the same dispatch, so no capture begins in between, and it waits for the
 * field to show again. */
static void
cyan_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  Typing *typing = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = sight_web_page_evaluate_finish (typing->page, result, &error);

  g_assert_no_error (error);
  sight_web_page_fill_secret_async (typing->page, typing->ref, CANARY "-user", "username", 10000,
                                    NULL, done_cb, &typing->filled);
}

typedef struct {
  guint cyan;       /* frames captured while the secret was being typed */
  guint shown;      /* frames in which green text shows in the field */
  guint empty;      /* the field before the fill: magenta */
  guint masked;     /* the field after it: black */
} TypingFrames;

static void
typing_frame_cb (const guint8 *pixels,
                 int           stride,
                 guint         index,
                 gpointer      user_data)
{
  TypingFrames *frames = user_data;
  Area field, page;

  measure_frame (pixels, stride, index, &field, &page);
  if (page.sum[0] / page.n < 80 && page.sum[1] / page.n > 180 && page.sum[2] / page.n > 180)
    frames->cyan++;
  for (int row = FIELD_Y + 4; row < FIELD_Y + FIELD_H - 4; row++)
    for (int col = FIELD_X + 4; col < FIELD_X + FIELD_W - 4; col++)
      {
        const guint8 *p = pixels + row * stride + col * 3;

        if (p[1] > 160 && p[0] < 120 && p[2] < 120)
          {
            frames->shown++;
            row = FIELD_Y + FIELD_H;
            break;
          }
      }
  if (!is_yellow (&page))
    return;
  if (is_black (&field))
    frames->masked++;
  else if (field.sum[0] / field.n > 180 && field.sum[1] / field.n < 80 &&
           field.sum[2] / field.n > 180)
    {
      /* The field is never unmasked again once the secret is in it. */
      g_assert_cmpuint (frames->masked, ==, 0);
      frames->empty++;
    }
}

/* A secret typed into a field that is not secure (a user name) while the
 * session records: from the call until the fill ends no frame is kept (the
 * page turned cyan just before the call and yellow again when the field got
 * its input, so a cyan frame is one of that interval), and after it the
 * field holding the secret is black. */
static void
test_session_typing_withheld (void)
{
  g_autoptr(SightSession) session = open_session_at ("typing", TRUE);
  SightWebPage *page = sight_session_get_page (session);
  g_autoptr(GAsyncResult) observed = NULL;
  g_autoptr(SightObservation) observation = NULL;
  g_autoptr(JsonObject) reply = NULL;
  g_autoptr(JsonObject) recording = NULL;
  g_autoptr(GError) error = NULL;
  Typing typing = { page, NULL, NULL };
  TypingFrames frames = { 0 };
  gint64 before;

  sight_observation_capture_async (page, SIGHT_OBSERVE_DEFAULT, 10000, NULL, done_cb, &observed);
  while (observed == NULL)
    g_main_context_iteration (NULL, TRUE);
  observation = sight_observation_capture_finish (observed, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sight_observation_get_n_secure (observation), ==, 0);
  typing.ref = sight_observation_hit_test (observation, FIELD_X + FIELD_W / 2.0,
                                           FIELD_Y + FIELD_H / 2.0);
  g_assert_nonnull (typing.ref);

  /* The page with its empty field in a few frames first. */
  wait_frames (session, 3);
  sight_web_page_evaluate_async (
    page,
    "const field = document.getElementById ('user');"
    "document.documentElement.style.background = document.body.style.background = '#00ffff';"
    "field.style.display = 'none';"
    "setTimeout (() => { field.style.display = 'block'; }, 1500);"
    "return true;", NULL, 5000, NULL, cyan_cb, &typing);
  while (typing.filled == NULL)
    g_main_context_iteration (NULL, TRUE);
  reply = sight_web_page_fill_secret_finish (page, typing.filled, &error);
  g_clear_object (&typing.filled);
  g_assert_no_error (error);
  before = recorded_frames (session);
  /* …and the page after the fill in a few more. */
  wait_frames (session, before + 3);

  g_assert_true (sight_session_stop (session, "stopped"));
  recording = wait_recording (session);
  g_assert_cmpstr (json_object_get_string_member (recording, "status"), ==, "kept");
  decode_frames (json_object_get_string_member (recording, "path"), typing_frame_cb, &frames);
  g_test_message ("%u frames of the typing, %u with the field's text, %u empty, %u masked",
                  frames.cyan, frames.shown, frames.empty, frames.masked);
  g_assert_cmpuint (frames.cyan, ==, 0);
  g_assert_cmpuint (frames.shown, ==, 0);
  g_assert_cmpuint (frames.empty, >=, 1);
  g_assert_cmpuint (frames.masked, >=, 2);
}

static void
opened_then_stopped_cb (GObject      *source,
                        GAsyncResult *result,
                        gpointer      user_data)
{
  SightSession **session = user_data;
  g_autoptr(GError) error = NULL;

  *session = sight_session_registry_create_finish (SIGHT_SESSION_REGISTRY (source), result,
                                                   &error);
  g_assert_no_error (error);
  g_assert_true (sight_session_stop (*session, "stopped"));
}

/* A recorded session stopped as soon as it is open, before any frame of
 * its loaded page was kept: the recording still ends with the page as it
 * ends (its web process goes after that frame), so there is a video. */
static void
test_session_stopped_at_once (void)
{
  g_autoptr(SightSession) session = NULL;
  g_autoptr(JsonObject) args = json_object_new ();
  g_autoptr(JsonObject) recording = NULL;

  json_object_set_string_member (args, "startUrl", base);
  json_object_set_boolean_member (args, "record", TRUE);
  sight_session_registry_create_async (sight_session_registry_get_default (), args, NULL,
                                       opened_then_stopped_cb, &session);
  while (session == NULL)
    g_main_context_iteration (NULL, TRUE);
  recording = wait_recording (session);
  g_test_message ("%s: %" G_GINT64_FORMAT " frames%s%s",
                  json_object_get_string_member (recording, "status"),
                  json_object_get_int_member (recording, "frames"),
                  json_object_has_member (recording, "error") ? ", " : "",
                  json_object_get_string_member_with_default (recording, "error", ""));
  g_assert_cmpstr (json_object_get_string_member (recording, "status"), ==, "kept");
  g_assert_cmpuint (check_field_black (json_object_get_string_member (recording, "path")), >=, 1);
}

static void
test_session_without_record (void)
{
  g_autoptr(SightSession) session = open_session (FALSE);
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *videos = g_build_filename (data_dir, "videos", NULL);
  g_autofree char *name = NULL;
  g_autofree char *path = NULL;

  spin (1000);
  sight_session_stop (session, "stopped");
  spin (200);
  node = sight_session_to_json (session);
  g_assert_false (json_object_get_boolean_member (json_node_get_object (node), "record"));
  g_assert_false (json_object_has_member (json_node_get_object (node), "recording"));
  name = g_strconcat (sight_session_get_id (session), ".webm", NULL);
  path = g_build_filename (videos, name, NULL);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

static void
test_smoke_records (void)
{
  g_autofree char *db = g_build_filename (data_dir, "smoke", "sightline.db", NULL);
  g_autofree char *dir = g_path_get_dirname (db);
  g_autofree char *html_path = g_build_filename (data_dir, "smoke", "report.html", NULL);
  g_autofree char *html = NULL;
  g_autofree char *uri = NULL;
  g_autoptr(SightStore) store = NULL;
  g_autoptr(JsonObject) args = json_object_new ();
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(SightRunData) data = NULL;
  g_autoptr(GAsyncResult) loaded = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *artifact = NULL;
  const char *path;
  const char *run_id;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  store = sight_store_new (db, &error);
  g_assert_no_error (error);
  json_object_set_string_member (args, "url", base);
  json_object_set_int_member (args, "maxLinks", 0);
  json_object_set_string_member (args, "expectText", "Welcome");
  sight_smoke_test_async (store, args, NULL, done_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  node = sight_smoke_test_finish (result, &error);
  g_assert_no_error (error);
  path = json_object_get_string_member_with_default (json_node_get_object (node), "video", NULL);
  g_assert_nonnull (path);
  g_assert_true (g_str_has_prefix (path, dir));
  check_playable (path);
  g_assert_cmpuint (check_field_black (path), >=, 1);

  /* The stored run links it, and so does its HTML report. */
  run_id = json_object_get_string_member (json_node_get_object (node), "runId");
  sight_store_load_run_async (store, run_id, NULL, done_cb, &loaded);
  while (loaded == NULL)
    g_main_context_iteration (NULL, TRUE);
  data = sight_store_load_run_finish (store, loaded, &error);
  g_assert_no_error (error);
  g_assert_nonnull (sight_run_data_find_video (data));
  g_assert_cmpstr (sight_run_data_find_video (data)->path, ==, path);
  /* It is an artifact like the others: a file in the run's own folder. */
  artifact = sight_store_artifact_path (store, run_id, "video.webm");
  g_assert_cmpstr (path, ==, artifact);
  g_assert_true (sight_report_write (data, SIGHT_REPORT_HTML, html_path, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (html_path, &html, NULL, NULL));
  uri = g_filename_to_uri (path, NULL, NULL);
  g_assert_nonnull (strstr (html, uri));
  g_assert_null (strstr (html, CANARY));
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  const char *outer = g_getenv ("TMPDIR");
  g_autofree char *tmp = g_build_filename (outer != NULL && *outer != '\0' ? outer : "/tmp",
                                           "sight-video-XXXXXX", NULL);
  GSList *uris;
  int status;

  gtk_test_init (&argc, &argv, NULL);
  gst_init (&argc, &argv);
  data_dir = g_mkdtemp (tmp);
  g_assert_nonnull (data_dir);
  g_setenv ("SIGHTLINE_DATA_DIR", data_dir, TRUE);

  server = soup_server_new (NULL, NULL);
  soup_server_add_handler (server, NULL, handler, NULL, NULL);
  soup_server_add_handler (server, "/typing", typing_handler, NULL, NULL);
  g_assert_true (soup_server_listen_local (server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error));
  uris = soup_server_get_uris (server);
  base = g_uri_to_string (uris->data);
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);

  g_test_add_func ("/video/session/records", test_session_records);
  g_test_add_func ("/video/session/secret-fill", test_session_secret_fill);
  g_test_add_func ("/video/session/typing-withheld", test_session_typing_withheld);
  g_test_add_func ("/video/session/stopped-at-once", test_session_stopped_at_once);
  g_test_add_func ("/video/session/without-record", test_session_without_record);
  g_test_add_func ("/video/smoke/records", test_smoke_records);
  status = g_test_run ();
  test_remove_tree (data_dir);
  g_clear_object (&server);
  g_free (base);
  return status;
}
