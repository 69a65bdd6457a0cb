/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-graphics"

#include "config.h"

#include "sight-graphics.h"

static gboolean
env_is_true (const char *name)
{
  const char *value = g_getenv (name);

  return value != NULL && *value != '\0' && !g_str_equal (value, "0") &&
         g_ascii_strcasecmp (value, "false") != 0;
}

static gboolean
env_names_software_driver (void)
{
  const char *driver = g_getenv ("GALLIUM_DRIVER");

  return driver != NULL &&
         (g_str_equal (driver, "llvmpipe") || g_str_equal (driver, "softpipe") ||
          g_str_equal (driver, "swrast"));
}

/* A GPU the kernel drives shows up as a DRM render node. */
static gboolean
has_render_node (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/dev/dri", 0, NULL);
  const char *name;

  if (dir == NULL)
    return FALSE;
  while ((name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_prefix (name, "renderD"))
      return TRUE;
  return FALSE;
}

/**
 * sight_graphics_is_software:
 *
 * Whether OpenGL on this machine is drawn in software: Mesa is told so
 * (`LIBGL_ALWAYS_SOFTWARE`, `GALLIUM_DRIVER=llvmpipe`), or there is no GPU
 * (no DRM render node under /dev/dri). Decided once per process.
 */
gboolean
sight_graphics_is_software (void)
{
  static gsize decided;
  static gboolean software;

  if (g_once_init_enter (&decided))
    {
      software = env_is_true ("LIBGL_ALWAYS_SOFTWARE") || env_names_software_driver () ||
                 !has_render_node ();
      g_debug ("OpenGL is drawn %s", software ? "in software" : "by a GPU");
      g_once_init_leave (&decided, 1);
    }
  return software;
}

/**
 * sight_graphics_choose_renderer:
 *
 * Where OpenGL is drawn in software, GTK draws with cairo, unless
 * `GSK_RENDERER` already chooses a renderer. GTK reads that variable when it
 * realizes its first window, so call this first thing in main(), before any
 * other thread starts.
 */
void
sight_graphics_choose_renderer (void)
{
  if (g_getenv ("GSK_RENDERER") == NULL && sight_graphics_is_software ())
    g_setenv ("GSK_RENDERER", "cairo", FALSE);
}
