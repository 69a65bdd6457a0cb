/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-web-page"

#include "config.h"

#include "sight-web-page.h"

#include <math.h>
#include <string.h>

#include "sight-error.h"
#include "sight-secret-fields.h"
#include "sight-web-page-private.h"

/* ----------------------------------------------------------------------- */
/* Screenshots: captured on the main thread, masked, resampled and         */
/* encoded in a worker thread                                              */

typedef struct {
  SightScreenshotOptions options;
  SightRect             *masks;
  int                    css_width;      /* of the captured region */
  /* The captured pixels: a texture in memory, downloaded in the worker
   * thread that masks, resamples and encodes them (each takes long enough
   * to hold up the next step, encoding a PNG to stall the window); any
   * other texture is downloaded on the main thread, into @source. */
  GdkTexture            *texture;
  cairo_surface_t       *source;
  double                 scale;          /* image pixels per CSS pixel */
  /* of @masks, the regions holding a filled secret (sight-secret-fields.h) */
  guint                  n_secret;
} ShotData;

static void
shot_data_free (ShotData *data)
{
  g_free (data->masks);
  g_clear_object (&data->texture);
  g_clear_pointer (&data->source, cairo_surface_destroy);
  g_free (data);
}

static cairo_surface_t *
download_texture (GdkTexture *texture)
{
  cairo_surface_t *surface;

  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, gdk_texture_get_width (texture),
                                        gdk_texture_get_height (texture));
  cairo_surface_flush (surface);
  gdk_texture_download (texture, cairo_image_surface_get_data (surface),
                        cairo_image_surface_get_stride (surface));
  cairo_surface_mark_dirty (surface);
  return surface;
}

/* Paints @masks (in CSS pixels, @scale image pixels each) on @source,
 * flattens it onto white and resamples so the long side is at most
 * @max_side. */
static GdkPixbuf *
render_surface (cairo_surface_t *source,
                const SightRect *masks,
                guint            n_masks,
                double           scale,
                int              max_side,
                guint           *n_masked)
{
  int width = cairo_image_surface_get_width (source);
  int height = cairo_image_surface_get_height (source);
  int out_width, out_height;
  cairo_surface_t *target;
  cairo_t *cr;
  GdkPixbuf *pixbuf;

  *n_masked = 0;
  cr = cairo_create (source);
  cairo_set_source_rgb (cr, 0, 0, 0);
  for (guint i = 0; i < n_masks; i++)
    {
      double x = floor (masks[i].x * scale), y = floor (masks[i].y * scale);
      double w = ceil ((masks[i].x + masks[i].width) * scale) - x;
      double h = ceil ((masks[i].y + masks[i].height) * scale) - y;

      if (w <= 0 || h <= 0 || x >= width || y >= height || x + w <= 0 || y + h <= 0)
        continue;
      cairo_rectangle (cr, x, y, w, h);
      (*n_masked)++;
    }
  cairo_fill (cr);
  cairo_destroy (cr);

  sight_image_fit (width, height, max_side, &out_width, &out_height);

  target = cairo_image_surface_create (CAIRO_FORMAT_RGB24, out_width, out_height);
  cr = cairo_create (target);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  cairo_scale (cr, (double) out_width / width, (double) out_height / height);
  cairo_set_source_surface (cr, source, 0, 0);
  cairo_pattern_set_filter (cairo_get_source (cr), CAIRO_FILTER_GOOD);
  cairo_paint (cr);
  cairo_destroy (cr);
  cairo_surface_flush (target);

  pixbuf = gdk_pixbuf_get_from_surface (target, 0, 0, out_width, out_height);
  cairo_surface_destroy (target);
  return pixbuf;
}

static void
encode_shot_thread (GTask        *task,
                    gpointer      source_object,
                    gpointer      task_data,
                    GCancellable *cancellable)
{
  ShotData *data = task_data;
  g_autoptr(GdkPixbuf) pixbuf = NULL;
  g_autoptr(SightScreenshot) shot = NULL;
  g_autoptr(GError) error = NULL;
  int source_width;
  guint n_masked = 0;

  if (data->source == NULL)
    {
      data->source = download_texture (data->texture);
      g_clear_object (&data->texture);
    }
  source_width = cairo_image_surface_get_width (data->source);

  pixbuf = render_surface (data->source, data->masks, data->options.n_masks, data->scale,
                           data->options.max_side, &n_masked);
  shot = g_new0 (SightScreenshot, 1);
  shot->width = gdk_pixbuf_get_width (pixbuf);
  shot->height = gdk_pixbuf_get_height (pixbuf);
  shot->scale = data->scale * shot->width / source_width;
  shot->n_masked = n_masked;
  shot->n_secret_regions = data->n_secret;
  shot->format = data->options.format;
  if (data->options.raw)
    {
      shot->pixbuf = g_steal_pointer (&pixbuf);
      g_task_return_pointer (task, g_steal_pointer (&shot), (GDestroyNotify) sight_screenshot_free);
      return;
    }
  shot->bytes = sight_encode_image (pixbuf, data->options.format, data->options.quality, &error);
  if (shot->bytes == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  g_task_return_pointer (task, g_steal_pointer (&shot), (GDestroyNotify) sight_screenshot_free);
}

static void
encode_shot_done_cb (GObject      *source,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GError) error = NULL;
  SightScreenshot *shot;

  shot = g_task_propagate_pointer (G_TASK (result), &error);
  if (shot == NULL)
    g_task_return_error (task, g_steal_pointer (&error));
  else
    g_task_return_pointer (task, shot, (GDestroyNotify) sight_screenshot_free);
}

static void
snapshot_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  SightWebPage *self = g_task_get_source_object (task);
  ShotData *data = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  g_autoptr(GTask) encode = NULL;
  GCancellable *cancellable;

  texture = webkit_web_view_get_snapshot_finish (WEBKIT_WEB_VIEW (source), result, &error);
  if (texture == NULL)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_task_return_error (task, g_steal_pointer (&error));
      else
        g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                 "The page could not be captured: %s", error->message);
      return;
    }

  data->scale = data->css_width > 0
                ? (double) gdk_texture_get_width (texture) / data->css_width
                : self->device_scale;
  /* A texture in memory is immutable, and read from any thread. */
  if (GDK_IS_MEMORY_TEXTURE (texture))
    data->texture = g_steal_pointer (&texture);
  else
    data->source = download_texture (texture);

  /* The encoding runs under a task of its own with no source object: a
   * worker thread may drop a task's last reference, and the page (a WebKit
   * view) must only ever be finalized on the main thread. The page's task
   * keeps the data and ends on the main thread, in encode_shot_done_cb(). */
  cancellable = g_task_get_cancellable (task);
  encode = g_task_new (NULL, cancellable, encode_shot_done_cb, g_steal_pointer (&task));
  g_task_set_source_tag (encode, encode_shot_thread);
  g_task_set_task_data (encode, data, NULL);
  g_task_run_in_thread (encode, encode_shot_thread);
}

static void
take_snapshot (GTask *task)
{
  SightWebPage *self = g_task_get_source_object (task);
  ShotData *data = g_task_get_task_data (task);

  webkit_web_view_get_snapshot (self->view,
                                data->options.full_page ? WEBKIT_SNAPSHOT_REGION_FULL_DOCUMENT
                                                        : WEBKIT_SNAPSHOT_REGION_VISIBLE,
                                WEBKIT_SNAPSHOT_OPTIONS_NONE, g_task_get_cancellable (task),
                                snapshot_cb, task);
}

static void
regions_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  GTask *task = user_data;
  ShotData *data = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) boxes = NULL;
  g_autoptr(GPtrArray) secrets = _sight_web_page_collect_filled_secrets (SIGHT_WEB_PAGE (source));

  boxes = _sight_secret_regions_finish (SIGHT_WEB_PAGE (source), result, &data->n_secret, &error);
  if (boxes == NULL && secrets->len > 0)
    {
      /* Unmeasured, a secret could show anywhere: no pixels at all. */
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_task_return_error (task, g_steal_pointer (&error));
      else
        g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                 "Where the filled secrets show could not be measured, so "
                                 "nothing was captured: %s", error->message);
      g_object_unref (task);
      return;
    }
  if (boxes != NULL && boxes->len > 0)
    {
      data->masks = g_renew (SightRect, data->masks, data->options.n_masks + boxes->len);
      memcpy (data->masks + data->options.n_masks, boxes->data, sizeof (SightRect) * boxes->len);
      data->options.n_masks += boxes->len;
      data->options.masks = data->masks;
    }
  take_snapshot (task);
}

void
sight_web_page_screenshot_async (SightWebPage                 *self,
                                 const SightScreenshotOptions *options,
                                 GCancellable                 *cancellable,
                                 GAsyncReadyCallback           callback,
                                 gpointer                      user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(GPtrArray) secrets = NULL;
  ShotData *data;
  int view_width;

  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));
  g_return_if_fail (options != NULL);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_web_page_screenshot_async);
  data = g_new0 (ShotData, 1);
  data->options = *options;
  if (options->n_masks > 0)
    data->masks = g_memdup2 (options->masks, sizeof (SightRect) * options->n_masks);
  data->options.masks = data->masks;
  /* Both regions are as wide as the viewport in CSS pixels. */
  sight_web_page_get_viewport (self, &view_width, NULL);
  data->css_width = view_width;
  g_task_set_task_data (task, data, (GDestroyNotify) shot_data_free);

  /* Every screenshot paints over wherever a filled secret shows, measured
   * now (a field that moved or stopped being secure is still covered); one
   * that comes with no masks (not an observation's) covers the secure
   * fields too. */
  secrets = _sight_web_page_collect_filled_secrets (self);
  if (secrets->len > 0 || options->n_masks == 0)
    {
      _sight_secret_regions_async (self, (const char * const *) secrets->pdata, secrets->len,
                                   options->full_page, options->n_masks == 0, cancellable,
                                   regions_cb, g_steal_pointer (&task));
      return;
    }
  take_snapshot (g_steal_pointer (&task));
}

SightScreenshot *
sight_web_page_screenshot_finish (SightWebPage  *self,
                                  GAsyncResult  *result,
                                  GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ----------------------------------------------------------------------- */
/* Frames: a digest of the visible region, for the pixel-aware settling of  */
/* an action (sight-actions.c)                                             */

static void
frame_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  g_autofree guchar *pixels = NULL;
  gsize stride, size;

  texture = webkit_web_view_get_snapshot_finish (WEBKIT_WEB_VIEW (source), result, &error);
  if (texture == NULL)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_task_return_error (task, g_steal_pointer (&error));
      else
        g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                 "The page could not be captured: %s", error->message);
      return;
    }
  stride = (gsize) gdk_texture_get_width (texture) * 4;
  size = stride * (gsize) gdk_texture_get_height (texture);
  pixels = g_malloc (size);
  gdk_texture_download (texture, pixels, stride);
  g_task_return_pointer (task, g_compute_checksum_for_data (G_CHECKSUM_SHA256, pixels, size),
                         g_free);
}

void
_sight_web_page_frame_digest_async (SightWebPage        *self,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  GTask *task;

  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, _sight_web_page_frame_digest_async);
  if (self->view == NULL)
    {
      g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                               "The page was closed");
      g_object_unref (task);
      return;
    }
  webkit_web_view_get_snapshot (self->view, WEBKIT_SNAPSHOT_REGION_VISIBLE,
                                WEBKIT_SNAPSHOT_OPTIONS_NONE, cancellable, frame_cb, task);
}

char *
_sight_web_page_frame_digest_finish (SightWebPage  *self,
                                     GAsyncResult  *result,
                                     GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
