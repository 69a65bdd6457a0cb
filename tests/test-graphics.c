/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-graphics"

#include "config.h"

#include <gtk/gtk.h>
#include <webkit/webkit.h>

#include "sight-graphics.h"
#include "sight-web-page.h"

/* How Sightline draws where OpenGL is drawn in software: GTK's cairo
 * renderer unless the user chose one, and a shown page without compositing.
 * The decision is made once per process, so each case runs in a child
 * process with its own environment. */

static void
test_told_software (void)
{
  if (g_test_subprocess ())
    {
      g_setenv ("LIBGL_ALWAYS_SOFTWARE", "1", TRUE);
      g_unsetenv ("GSK_RENDERER");
      g_assert_true (sight_graphics_is_software ());
      sight_graphics_choose_renderer ();
      g_assert_cmpstr (g_getenv ("GSK_RENDERER"), ==, "cairo");
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static void
test_told_driver (void)
{
  if (g_test_subprocess ())
    {
      g_unsetenv ("LIBGL_ALWAYS_SOFTWARE");
      g_setenv ("GALLIUM_DRIVER", "llvmpipe", TRUE);
      g_assert_true (sight_graphics_is_software ());
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static void
test_user_renderer_kept (void)
{
  if (g_test_subprocess ())
    {
      g_setenv ("LIBGL_ALWAYS_SOFTWARE", "1", TRUE);
      g_setenv ("GSK_RENDERER", "ngl", TRUE);
      sight_graphics_choose_renderer ();
      g_assert_cmpstr (g_getenv ("GSK_RENDERER"), ==, "ngl");
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

/* A machine with a GPU keeps GTK's own choice. Only a machine with a DRM
 * render node can say so. */
static void
test_gpu_left_alone (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/dev/dri", 0, NULL);
  gboolean render_node = FALSE;
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    render_node |= g_str_has_prefix (name, "renderD");
  if (!render_node)
    {
      g_test_skip ("no GPU here (no render node under /dev/dri)");
      return;
    }
  if (g_test_subprocess ())
    {
      g_unsetenv ("LIBGL_ALWAYS_SOFTWARE");
      g_unsetenv ("GALLIUM_DRIVER");
      g_unsetenv ("GSK_RENDERER");
      g_assert_false (sight_graphics_is_software ());
      sight_graphics_choose_renderer ();
      g_assert_null (g_getenv ("GSK_RENDERER"));
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static WebKitHardwareAccelerationPolicy
shown_page_policy (void)
{
  g_autoptr(SightWebPage) page = NULL;
  WebKitSettings *settings;

  gtk_init ();
  page = sight_web_page_new ();
  sight_web_page_set_headless (page, FALSE);
  settings = webkit_web_view_get_settings (sight_web_page_get_web_view (page));
  return webkit_settings_get_hardware_acceleration_policy (settings);
}

static void
test_shown_page_not_composited (void)
{
  if (g_test_subprocess ())
    {
      g_setenv ("LIBGL_ALWAYS_SOFTWARE", "1", TRUE);
      g_assert_cmpint (shown_page_policy (), ==, WEBKIT_HARDWARE_ACCELERATION_POLICY_NEVER);
      return;
    }
  g_test_trap_subprocess (NULL, 60 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/graphics/told-software", test_told_software);
  g_test_add_func ("/graphics/told-driver", test_told_driver);
  g_test_add_func ("/graphics/user-renderer-kept", test_user_renderer_kept);
  g_test_add_func ("/graphics/gpu-left-alone", test_gpu_left_alone);
  g_test_add_func ("/graphics/shown-page-not-composited", test_shown_page_not_composited);
  return g_test_run ();
}
