/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gdk-pixbuf/gdk-pixbuf.h>

G_BEGIN_DECLS

/* Images: the formats Sightline writes, resampling and encoding, for the
 * engine's screenshots and the report's stored ones alike. */

typedef enum {
  SIGHT_IMAGE_PNG,
  SIGHT_IMAGE_JPEG,
  SIGHT_IMAGE_WEBP,
} SightImageFormat;

gboolean    sight_image_format_from_string (const char       *name,
                                            SightImageFormat *out);
const char *sight_image_format_mime_type   (SightImageFormat  format);
/* The file name suffix of @format, without the dot: "png", "jpg", "webp". */
const char *sight_image_format_extension   (SightImageFormat  format);
/* "image/png", "image/jpeg" or "image/webp"; FALSE (and @out untouched) for
 * anything else. */
gboolean    sight_image_format_from_mime_type (const char       *mime_type,
                                               SightImageFormat *out);

/* The size of a @width × @height image whose long side is brought down to
 * @max_side (0: no limit), its aspect kept, at least 1 × 1; FALSE when it
 * already fits (the size is then the same). */
gboolean    sight_image_fit                (int               width,
                                            int               height,
                                            int               max_side,
                                            int              *out_width,
                                            int              *out_height);
/* @pixbuf resampled (bilinear) to sight_image_fit() and flattened onto
 * white; a new reference. */
GdkPixbuf  *sight_image_downscale          (GdkPixbuf        *pixbuf,
                                            int               max_side);

/* Encodes @pixbuf; @quality 0-100 for JPEG and WebP, -1 for the default
 * (85 and 80). */
GBytes     *sight_encode_image             (GdkPixbuf        *pixbuf,
                                            SightImageFormat  format,
                                            int               quality,
                                            GError          **error);

G_END_DECLS
