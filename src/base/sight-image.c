/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-image"

#include "config.h"

#include "sight-image.h"

#include <math.h>
#include <webp/encode.h>

#include "sight-error.h"

/* ---------------------------------------------------------------- formats */

gboolean
sight_image_format_from_string (const char       *name,
                                SightImageFormat *out)
{
  if (name == NULL)
    return FALSE;
  if (g_ascii_strcasecmp (name, "png") == 0)
    *out = SIGHT_IMAGE_PNG;
  else if (g_ascii_strcasecmp (name, "jpeg") == 0 || g_ascii_strcasecmp (name, "jpg") == 0)
    *out = SIGHT_IMAGE_JPEG;
  else if (g_ascii_strcasecmp (name, "webp") == 0)
    *out = SIGHT_IMAGE_WEBP;
  else
    return FALSE;
  return TRUE;
}

const char *
sight_image_format_mime_type (SightImageFormat format)
{
  switch (format)
    {
    case SIGHT_IMAGE_JPEG:
      return "image/jpeg";
    case SIGHT_IMAGE_WEBP:
      return "image/webp";
    case SIGHT_IMAGE_PNG:
    default:
      return "image/png";
    }
}

const char *
sight_image_format_extension (SightImageFormat format)
{
  switch (format)
    {
    case SIGHT_IMAGE_JPEG:
      return "jpg";
    case SIGHT_IMAGE_WEBP:
      return "webp";
    case SIGHT_IMAGE_PNG:
    default:
      return "png";
    }
}

gboolean
sight_image_format_from_mime_type (const char       *mime_type,
                                   SightImageFormat *out)
{
  g_return_val_if_fail (out != NULL, FALSE);

  if (g_strcmp0 (mime_type, "image/png") == 0)
    *out = SIGHT_IMAGE_PNG;
  else if (g_strcmp0 (mime_type, "image/jpeg") == 0)
    *out = SIGHT_IMAGE_JPEG;
  else if (g_strcmp0 (mime_type, "image/webp") == 0)
    *out = SIGHT_IMAGE_WEBP;
  else
    return FALSE;
  return TRUE;
}

/* ------------------------------------------------------------- resampling */

gboolean
sight_image_fit (int  width,
                 int  height,
                 int  max_side,
                 int *out_width,
                 int *out_height)
{
  int long_side = MAX (width, height);

  *out_width = width;
  *out_height = height;
  if (max_side <= 0 || long_side <= max_side)
    return FALSE;
  *out_width = MAX (1, (int) round ((double) width * max_side / long_side));
  *out_height = MAX (1, (int) round ((double) height * max_side / long_side));
  return TRUE;
}

GdkPixbuf *
sight_image_downscale (GdkPixbuf *pixbuf,
                       int        max_side)
{
  g_autoptr(GdkPixbuf) scaled = NULL;
  int width, height;

  g_return_val_if_fail (GDK_IS_PIXBUF (pixbuf), NULL);

  if (sight_image_fit (gdk_pixbuf_get_width (pixbuf), gdk_pixbuf_get_height (pixbuf), max_side,
                       &width, &height))
    scaled = gdk_pixbuf_scale_simple (pixbuf, width, height, GDK_INTERP_BILINEAR);
  else
    scaled = g_object_ref (pixbuf);
  if (!gdk_pixbuf_get_has_alpha (scaled))
    return g_steal_pointer (&scaled);
  return gdk_pixbuf_composite_color_simple (scaled, gdk_pixbuf_get_width (scaled),
                                            gdk_pixbuf_get_height (scaled), GDK_INTERP_NEAREST,
                                            255, 8, 0xffffff, 0xffffff);
}

/* --------------------------------------------------------------- encoding */

static GBytes *
encode_webp (GdkPixbuf *pixbuf,
             int        quality,
             GError   **error)
{
  uint8_t *output = NULL;
  size_t size;
  int width = gdk_pixbuf_get_width (pixbuf);
  int height = gdk_pixbuf_get_height (pixbuf);
  int stride = gdk_pixbuf_get_rowstride (pixbuf);
  const guint8 *pixels = gdk_pixbuf_read_pixels (pixbuf);

  if (gdk_pixbuf_get_has_alpha (pixbuf))
    size = WebPEncodeRGBA (pixels, width, height, stride, quality, &output);
  else
    size = WebPEncodeRGB (pixels, width, height, stride, quality, &output);
  if (size == 0 || output == NULL)
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INTERNAL, "WebP encoding failed");
      return NULL;
    }
  {
    GBytes *bytes = g_bytes_new (output, size);

    WebPFree (output);
    return bytes;
  }
}

GBytes *
sight_encode_image (GdkPixbuf         *pixbuf,
                    SightImageFormat   format,
                    int                quality,
                    GError           **error)
{
  g_autofree char *buffer = NULL;
  gsize size = 0;
  g_autofree char *quality_text = NULL;

  if (quality < 0)
    quality = format == SIGHT_IMAGE_WEBP ? 80 : 85;
  quality = CLAMP (quality, 0, 100);

  switch (format)
    {
    case SIGHT_IMAGE_WEBP:
      return encode_webp (pixbuf, quality, error);
    case SIGHT_IMAGE_JPEG:
      quality_text = g_strdup_printf ("%d", quality);
      if (!gdk_pixbuf_save_to_buffer (pixbuf, &buffer, &size, "jpeg", error,
                                      "quality", quality_text, NULL))
        return NULL;
      break;
    case SIGHT_IMAGE_PNG:
    default:
      if (!gdk_pixbuf_save_to_buffer (pixbuf, &buffer, &size, "png", error, NULL))
        return NULL;
      break;
    }
  return g_bytes_new_take (g_steal_pointer (&buffer), size);
}
