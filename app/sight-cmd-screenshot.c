/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-cmd-screenshot"

#include "config.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "sight-cli.h"
#include "sight-cli-args.h"
#include "sight-commands.h"
#include "sight-error.h"
#include "sight-web-page.h"

static gboolean
check_url (const char  *url,
           GError     **error)
{
  g_autoptr(GUri) uri = g_uri_parse (url, G_URI_FLAGS_NONE, NULL);
  const char *scheme;

  if (uri == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "“%s” is not a valid URL",
                   url);
      return FALSE;
    }
  scheme = g_uri_get_scheme (uri);
  if (g_ascii_strcasecmp (scheme, "http") != 0 && g_ascii_strcasecmp (scheme, "https") != 0)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "Unsupported URL scheme “%s” (use http or https)", scheme);
      return FALSE;
    }
  if (g_uri_get_host (uri) == NULL || *g_uri_get_host (uri) == '\0')
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "“%s” has no host", url);
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_output (const char  *output,
              GError     **error)
{
  g_autofree char *dir = g_path_get_dirname (output);

  if (g_file_test (output, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "Cannot write %s: it is a directory", output);
      return FALSE;
    }
  if (!g_file_test (dir, G_FILE_TEST_IS_DIR) || access (dir, W_OK) != 0)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "Cannot write %s: the folder %s does not exist or is not writable",
                   output, dir);
      return FALSE;
    }
  return TRUE;
}

int
sight_cmd_screenshot (int    argc,
                      char **argv)
{
  g_autofree char *output = NULL;
  g_autofree char *format_name = NULL;
  g_autofree char *wait_until_name = NULL;
  gboolean full_page = FALSE;
  int quality = -1, width = 1280, height = 720, max_side = 0, timeout_ms = 30000;
  double scale = 1.0;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, N_("Write the image here"), "FILE" },
    { "full-page", 0, 0, G_OPTION_ARG_NONE, &full_page, N_("Capture the whole page"), NULL },
    { "format", 0, 0, G_OPTION_ARG_STRING, &format_name,
      N_("png, jpeg or webp (default: from the file name, else png)"), "FORMAT" },
    { "quality", 0, 0, G_OPTION_ARG_INT, &quality, N_("JPEG or WebP quality, 0–100"), "N" },
    { "width", 0, 0, G_OPTION_ARG_INT, &width, N_("Viewport width in CSS pixels (1280)"), "W" },
    { "height", 0, 0, G_OPTION_ARG_INT, &height, N_("Viewport height in CSS pixels (720)"), "H" },
    { "device-scale", 0, 0, G_OPTION_ARG_DOUBLE, &scale, N_("Device pixels per CSS pixel"), "S" },
    { "max-side", 0, 0, G_OPTION_ARG_INT, &max_side,
      N_("Resample so the long side is at most N pixels"), "N" },
    { "wait-until", 0, 0, G_OPTION_ARG_STRING, &wait_until_name,
      N_("domcontentloaded, load or networkidle (default load)"), "EVENT" },
    { "timeout", 0, 0, G_OPTION_ARG_INT, &timeout_ms, N_("Load deadline in ms (30000)"), "MS" },
    { NULL }
  };
  SightScreenshotOptions options = SIGHT_SCREENSHOT_OPTIONS_INIT;
  SightWaitUntil wait_until = SIGHT_WAIT_UNTIL_LOAD;
  g_autoptr(SightWebPage) page = NULL;
  g_autoptr(SightScreenshot) shot = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  const char *url;
  int status = 0;

  if (!sight_cli_parse ("screenshot", "URL", entries, &argc, &argv, &status))
    return status;
  if (argc != 2)
    return sight_cli_usage_error ("screenshot", "expected one URL");
  url = argv[1];
  if (output == NULL)
    return sight_cli_usage_error ("screenshot", "--output FILE is required");
  if (format_name == NULL)
    {
      g_autofree char *lower = g_ascii_strdown (output, -1);

      if (g_str_has_suffix (lower, ".jpg") || g_str_has_suffix (lower, ".jpeg"))
        options.format = SIGHT_IMAGE_JPEG;
      else if (g_str_has_suffix (lower, ".webp"))
        options.format = SIGHT_IMAGE_WEBP;
    }
  else if (!sight_image_format_from_string (format_name, &options.format))
    return sight_cli_usage_error ("screenshot", "--format must be png, jpeg or webp");
  if (quality != -1 && (quality < 0 || quality > 100))
    return sight_cli_usage_error ("screenshot", "--quality must be between 0 and 100");
  if (width < 16 || width > 8192 || height < 16 || height > 8192)
    return sight_cli_usage_error ("screenshot", "--width and --height must be 16–8192");
  if (scale < 0.25 || scale > 4)
    return sight_cli_usage_error ("screenshot", "--device-scale must be 0.25–4");
  if (max_side < 0)
    return sight_cli_usage_error ("screenshot", "--max-side must be positive");
  if (timeout_ms <= 0)
    return sight_cli_usage_error ("screenshot", "--timeout must be positive");
  if (wait_until_name != NULL && !sight_wait_until_from_string (wait_until_name, &wait_until))
    return sight_cli_usage_error ("screenshot",
                                  "--wait-until must be domcontentloaded, load or networkidle");
  if (!check_url (url, &error) || !check_output (output, &error))
    return sight_cli_report_error (error);

  options.full_page = full_page;
  options.quality = quality;
  options.max_side = max_side;

  page = sight_web_page_new ();
  sight_web_page_set_viewport (page, width, height, scale);
  sight_web_page_load_async (page, url, wait_until, (guint) timeout_ms, NULL, sight_cli_result_cb,
                             &result);
  /* Every call here has its own deadline, so the waits return. */
  if (!sight_web_page_load_finish (page, sight_cli_wait (&result), &error))
    return sight_cli_report_error (error);
  g_clear_object (&result);

  sight_web_page_screenshot_async (page, &options, NULL, sight_cli_result_cb, &result);
  shot = sight_web_page_screenshot_finish (page, sight_cli_wait (&result), &error);
  if (shot == NULL)
    return sight_cli_report_error (error);

  /* Written to a temporary name and renamed: never a partial file. */
  if (!g_file_set_contents_full (output, g_bytes_get_data (shot->bytes, NULL),
                                 g_bytes_get_size (shot->bytes),
                                 G_FILE_SET_CONTENTS_CONSISTENT, 0644, &error))
    {
      g_autoptr(GError) wrapped = g_error_new (SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                               "Cannot write %s: %s", output, error->message);

      return sight_cli_report_error (wrapped);
    }

  /* TRANSLATORS: file name, width, height, image type, size */
  g_print (_("Wrote %s (%d×%d %s, %zu bytes)\n"), output, shot->width, shot->height,
           sight_image_format_mime_type (options.format), g_bytes_get_size (shot->bytes));
  return 0;
}
