/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-screenshot-cmd"

#include "config.h"

#include <gdk-pixbuf/gdk-pixbuf.h>
#include <glib/gstdio.h>
#include <string.h>

#include "cli-test-common.h"
#include "sight-demo-site.h"

static SightDemoSite *site;
static char *tmpdir;

/* Runs `sightline screenshot ARGS…` while the demo site answers on this
 * thread's main context. */
static void
run_screenshot (CliRun      *run,
                gboolean     without_display,
                const char  *first_arg,
                ...)
{
  static const char * const no_display[] = { "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", NULL };
  const CliOptions options = { NULL, NULL, without_display ? no_display : NULL, 90 };
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  va_list ap;

  g_ptr_array_add (args, (char *) "screenshot");
  va_start (ap, first_arg);
  for (const char *arg = first_arg; arg != NULL; arg = va_arg (ap, const char *))
    g_ptr_array_add (args, (char *) arg);
  va_end (ap);
  g_ptr_array_add (args, NULL);
  cli_run_argv (run, &options, (const char * const *) args->pdata);
}

static char *
output_path (const char *name)
{
  return g_build_filename (tmpdir, name, NULL);
}

static GdkPixbuf *
load_image (const char *path,
            const char *magic,
            gsize       magic_len,
            gsize       magic_offset)
{
  g_autofree char *data = NULL;
  gsize len = 0;
  g_autoptr(GError) error = NULL;
  GdkPixbuf *pixbuf;

  g_assert_true (g_file_get_contents (path, &data, &len, &error));
  g_assert_cmpuint (len, >, magic_offset + magic_len);
  g_assert_cmpmem (data + magic_offset, magic_len, magic, magic_len);
  pixbuf = gdk_pixbuf_new_from_file (path, &error);
  if (error != NULL && g_str_has_suffix (path, ".webp"))
    return NULL; /* No WebP loader for gdk-pixbuf installed: the bytes were checked. */
  g_assert_no_error (error);
  return pixbuf;
}

static void
test_png_without_display (void)
{
  g_autofree char *path = output_path ("shot.png");
  g_autoptr(GdkPixbuf) pixbuf = NULL;
  CliRun run = { 0 };

  run_screenshot (&run, TRUE, sight_demo_site_get_url (site), "--output", path, NULL);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.out, "shot.png"));
  pixbuf = load_image (path, "\x89PNG\r\n\x1a\n", 8, 0);
  g_assert_cmpint (gdk_pixbuf_get_width (pixbuf), ==, 1280);
  g_assert_cmpint (gdk_pixbuf_get_height (pixbuf), ==, 720);
  cli_run_clear (&run);
}

static void
test_jpeg_viewport (void)
{
  g_autofree char *path = output_path ("shot.jpg");
  g_autofree char *url = g_strconcat (sight_demo_site_get_url (site), "pricing", NULL);
  g_autoptr(GdkPixbuf) pixbuf = NULL;
  g_autofree char *small = output_path ("small.jpg");
  CliRun run = { 0 };
  GStatBuf big_stat, small_stat;

  run_screenshot (&run, FALSE, url, "--output", path, "--format", "jpeg", "--quality", "95",
                  "--width", "600", "--height", "400", NULL);
  g_assert_cmpint (run.status, ==, 0);
  pixbuf = load_image (path, "\xff\xd8\xff", 3, 0);
  g_assert_cmpint (gdk_pixbuf_get_width (pixbuf), ==, 600);
  g_assert_cmpint (gdk_pixbuf_get_height (pixbuf), ==, 400);
  cli_run_clear (&run);

  /* The quality reaches the encoder. */
  run_screenshot (&run, FALSE, url, "--output", small, "--quality", "10",
                  "--width", "600", "--height", "400", NULL);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_cmpint (g_stat (path, &big_stat), ==, 0);
  g_assert_cmpint (g_stat (small, &small_stat), ==, 0);
  g_assert_cmpint (small_stat.st_size, <, big_stat.st_size);
  cli_run_clear (&run);
}

static void
test_webp_full_page_resampled (void)
{
  g_autofree char *path = output_path ("shot.webp");
  g_autofree char *url = g_strconcat (sight_demo_site_get_url (site), "signup", NULL);
  g_autoptr(GdkPixbuf) pixbuf = NULL;
  g_autofree char *data = NULL;
  gsize len;
  CliRun run = { 0 };
  guint32 width, height;
  const guint8 *vp8;

  run_screenshot (&run, FALSE, url, "--output", path, "--format", "webp", "--full-page",
                  "--max-side", "400", NULL);
  g_assert_cmpint (run.status, ==, 0);
  pixbuf = load_image (path, "WEBP", 4, 8);
  g_assert_true (g_file_get_contents (path, &data, &len, NULL));
  g_assert_cmpmem (data, 4, "RIFF", 4);
  /* A lossy WebP: "VP8 " chunk, frame header, then 14-bit width and height. */
  g_assert_cmpmem (data + 12, 4, "VP8 ", 4);
  vp8 = (const guint8 *) data + 20;
  g_assert_cmpmem (vp8 + 3, 3, "\x9d\x01\x2a", 3);
  width = (vp8[6] | (vp8[7] << 8)) & 0x3fff;
  height = (vp8[8] | (vp8[9] << 8)) & 0x3fff;
  g_assert_cmpuint (MAX (width, height), ==, 400);
  g_assert_cmpuint (width, ==, 400);
  cli_run_clear (&run);
}

static void
test_bad_input (void)
{
  g_autofree char *path = output_path ("never.png");
  g_autofree char *unwritable = g_build_filename (tmpdir, "no-such-dir", "x.png", NULL);
  CliRun run = { 0 };

  run_screenshot (&run, FALSE, "file:///etc/passwd", "--output", path, NULL);
  g_assert_cmpint (run.status, ==, 2);
  g_assert_true (g_str_has_prefix (run.err, "INVALID_ARGUMENT: "));
  g_assert_cmpint (strchr (run.err, '\n') - run.err, ==, strlen (run.err) - 1);
  cli_run_clear (&run);

  run_screenshot (&run, FALSE, "not a url", "--output", path, NULL);
  g_assert_cmpint (run.status, ==, 2);
  g_assert_true (g_str_has_prefix (run.err, "INVALID_ARGUMENT: "));
  cli_run_clear (&run);

  run_screenshot (&run, FALSE, sight_demo_site_get_url (site), "--output", path, "--format",
                  "gif", NULL);
  g_assert_cmpint (run.status, ==, 2);
  cli_run_clear (&run);

  run_screenshot (&run, FALSE, sight_demo_site_get_url (site), "--output", unwritable, NULL);
  g_assert_cmpint (run.status, ==, 2);
  g_assert_nonnull (strstr (run.err, "no-such-dir"));
  g_assert_false (g_file_test (unwritable, G_FILE_TEST_EXISTS));
  cli_run_clear (&run);

  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

static void
test_unreachable (void)
{
  g_autoptr(GSocket) socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
                                            G_SOCKET_PROTOCOL_TCP, NULL);
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;
  g_autofree char *url = NULL;
  g_autofree char *path = output_path ("unreachable.png");
  CliRun run = { 0 };

  g_assert_true (g_socket_bind (socket, address, FALSE, NULL));
  bound = g_socket_get_local_address (socket, NULL);
  url = g_strdup_printf ("http://127.0.0.1:%u/",
                         g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound)));
  g_socket_close (socket, NULL);

  run_screenshot (&run, FALSE, url, "--output", path, NULL);
  g_assert_cmpint (run.status, ==, 3);
  g_assert_true (g_str_has_prefix (run.err, "ENVIRONMENT_UNAVAILABLE: "));
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  cli_run_clear (&run);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);

  site = sight_demo_site_new ();
  if (!sight_demo_site_start (site, 0, &error))
    g_error ("%s", error->message);
  tmpdir = g_dir_make_tmp ("sightline-screenshot-XXXXXX", &error);
  g_assert_no_error (error);

  g_test_add_func ("/screenshot-cmd/bad-input", test_bad_input);
  g_test_add_func ("/screenshot-cmd/png-without-display", test_png_without_display);
  g_test_add_func ("/screenshot-cmd/jpeg-viewport", test_jpeg_viewport);
  g_test_add_func ("/screenshot-cmd/webp-full-page-resampled", test_webp_full_page_resampled);
  g_test_add_func ("/screenshot-cmd/unreachable", test_unreachable);
  status = g_test_run ();

  {
    g_autoptr(GDir) dir = g_dir_open (tmpdir, 0, NULL);
    const char *name;

    while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
      {
        g_autofree char *path = g_build_filename (tmpdir, name, NULL);

        g_unlink (path);
      }
    g_rmdir (tmpdir);
  }
  g_clear_object (&site);
  g_free (tmpdir);
  return status;
}
