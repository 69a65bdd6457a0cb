/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-icons"

#include "config.h"

#include <gdk-pixbuf/gdk-pixbuf.h>
#include <string.h>

/* The app icons render (through librsvg, as the desktop renders them), fill the
 * GNOME icon canvas the way the HIG asks, and the symbolic icon is one colour so
 * that GTK can recolour it. */

static char *
icon_path (const char *dir,
           const char *name)
{
  return g_test_build_filename (G_TEST_DIST, "..", "data", "icons", "hicolor", dir, "apps",
                                name, NULL);
}

static GdkPixbuf *
load_icon (const char *path,
           int         size)
{
  g_autoptr(GError) error = NULL;
  GdkPixbuf *pixbuf = gdk_pixbuf_new_from_file_at_size (path, size, size, &error);

  g_assert_no_error (error);
  g_assert_nonnull (pixbuf);
  g_assert_cmpint (gdk_pixbuf_get_width (pixbuf), ==, size);
  g_assert_cmpint (gdk_pixbuf_get_height (pixbuf), ==, size);
  g_assert_true (gdk_pixbuf_get_has_alpha (pixbuf));
  g_assert_cmpint (gdk_pixbuf_get_n_channels (pixbuf), ==, 4);
  return pixbuf;
}

/* The share of pixels that are mostly opaque. */
static double
coverage (GdkPixbuf *pixbuf)
{
  int width = gdk_pixbuf_get_width (pixbuf);
  int height = gdk_pixbuf_get_height (pixbuf);
  int stride = gdk_pixbuf_get_rowstride (pixbuf);
  const guint8 *pixels = gdk_pixbuf_read_pixels (pixbuf);
  guint opaque = 0;

  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      if (pixels[y * stride + x * 4 + 3] > 128)
        opaque++;
  return (double) opaque / (width * height);
}

static void
assert_view_box (const char *path,
                 const char *view_box)
{
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *expected = g_strdup_printf ("viewBox=\"%s\"", view_box);

  g_file_get_contents (path, &text, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (text, expected));
  /* Nothing outside the file: no linked images or fonts the theme cannot ship. */
  g_assert_null (strstr (text, "xlink:href=\"http"));
  g_assert_null (strstr (text, "<image"));
  g_assert_null (strstr (text, "<text"));
}

static void
test_app_icon (void)
{
  g_autofree char *path = icon_path ("scalable", APP_ID ".svg");
  int sizes[] = { 32, 128, 512 };

  assert_view_box (path, "0 0 128 128");
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      g_autoptr(GdkPixbuf) pixbuf = load_icon (path, sizes[i]);
      double covered = coverage (pixbuf);

      /* A window shape inside the canvas's margins: most of it, never all of it. */
      g_assert_cmpfloat (covered, >, 0.5);
      g_assert_cmpfloat (covered, <, 0.9);
    }

  /* The corners stay transparent (the shape has rounded corners and margins), the
   * centre is painted. */
  {
    g_autoptr(GdkPixbuf) pixbuf = load_icon (path, 128);
    const guint8 *pixels = gdk_pixbuf_read_pixels (pixbuf);
    int stride = gdk_pixbuf_get_rowstride (pixbuf);

    g_assert_cmpint (pixels[0 * stride + 0 * 4 + 3], ==, 0);
    g_assert_cmpint (pixels[127 * stride + 127 * 4 + 3], ==, 0);
    g_assert_cmpint (pixels[64 * stride + 64 * 4 + 3], ==, 255);
  }
}

static void
test_symbolic_icon (void)
{
  g_autofree char *path = icon_path ("symbolic", APP_ID "-symbolic.svg");
  g_autoptr(GdkPixbuf) pixbuf = NULL;
  const guint8 *pixels;
  int stride;
  guint painted = 0;

  assert_view_box (path, "0 0 16 16");
  pixbuf = load_icon (path, 64);
  pixels = gdk_pixbuf_read_pixels (pixbuf);
  stride = gdk_pixbuf_get_rowstride (pixbuf);
  for (int y = 0; y < 64; y++)
    for (int x = 0; x < 64; x++)
      {
        const guint8 *p = pixels + y * stride + x * 4;

        if (p[3] < 64)
          continue;
        painted++;
        /* #2e3436, the colour GTK replaces with the foreground */
        g_assert_cmpint (ABS (p[0] - 0x2e), <=, 4);
        g_assert_cmpint (ABS (p[1] - 0x34), <=, 4);
        g_assert_cmpint (ABS (p[2] - 0x36), <=, 4);
      }
  g_assert_cmpuint (painted, >, 64 * 64 / 5);
  g_assert_cmpuint (painted, <, 64 * 64 * 4 / 5);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/icons/app", test_app_icon);
  g_test_add_func ("/icons/symbolic", test_symbolic_icon);
  return g_test_run ();
}
