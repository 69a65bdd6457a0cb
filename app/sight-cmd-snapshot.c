/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-cmd-snapshot"

#include "config.h"

#include <glib/gi18n.h>
#include <stdio.h>

#include "sight-cli.h"
#include "sight-commands.h"
#include "sight-error.h"
#include "sight-observation.h"
#include "sight-web-page.h"

typedef struct {
  GMainLoop        *loop;
  SightWebPage     *page;
  SightObserveFlags flags;
  guint             timeout_ms;
  SightObservation *observation;
  GError           *error;
} SnapshotRun;

static void
capture_done_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  SnapshotRun *run = user_data;

  run->observation = sight_observation_capture_finish (result, &run->error);
  g_main_loop_quit (run->loop);
}

static void
load_done_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  SnapshotRun *run = user_data;

  if (!sight_web_page_load_finish (SIGHT_WEB_PAGE (source), result, &run->error))
    {
      g_main_loop_quit (run->loop);
      return;
    }
  sight_observation_capture_async (run->page, run->flags, run->timeout_ms, NULL,
                                   capture_done_cb, run);
}

static gboolean
parse_viewport (const char *text,
                int        *width,
                int        *height)
{
  char *end = NULL;
  gint64 w, h;

  w = g_ascii_strtoll (text, &end, 10);
  if (end == NULL || (*end != 'x' && *end != 'X'))
    return FALSE;
  h = g_ascii_strtoll (end + 1, &end, 10);
  if (*end != '\0' || w < 100 || h < 100 || w > 10000 || h > 10000)
    return FALSE;
  *width = (int) w;
  *height = (int) h;
  return TRUE;
}

int
sight_cmd_snapshot (int    argc,
                    char **argv)
{
  g_autofree char *format = NULL;
  g_autofree char *wait_until_name = NULL;
  g_autofree char *viewport = NULL;
  g_autofree char *screenshot_path = NULL;
  gboolean full = FALSE;
  int timeout_ms = 30000;
  int width = 1280, height = 720;
  int status = 0;
  SightWaitUntil wait_until = SIGHT_WAIT_UNTIL_LOAD;
  SnapshotRun run = { 0 };
  GOptionEntry entries[] = {
    { "format", 0, 0, G_OPTION_ARG_STRING, &format,
      N_("Output format: text (default) or json"), "FORMAT" },
    { "full", 0, 0, G_OPTION_ARG_NONE, &full,
      N_("The whole tree rather than the bounded text the model receives"), NULL },
    { "wait-until", 0, 0, G_OPTION_ARG_STRING, &wait_until_name,
      N_("When the load counts as finished: domcontentloaded, load (default), networkidle"),
      "EVENT" },
    { "timeout", 0, 0, G_OPTION_ARG_INT, &timeout_ms,
      N_("Deadline of the load and of the observation, in milliseconds (default 30000)"), "MS" },
    { "viewport", 0, 0, G_OPTION_ARG_STRING, &viewport,
      N_("Viewport size in CSS pixels (default 1280x720)"), "WxH" },
    { "screenshot", 0, 0, G_OPTION_ARG_FILENAME, &screenshot_path,
      N_("Also write the masked screenshot the model would see (PNG) to FILE"), "FILE" },
    { NULL }
  };

  if (!sight_cli_parse ("snapshot", _("URL — print the observation of a page"), entries,
                        &argc, &argv, &status))
    return status;
  if (argc != 2)
    return sight_cli_usage_error ("snapshot", _("expected one URL"));
  if (format != NULL && !g_str_equal (format, "text") && !g_str_equal (format, "json"))
    return sight_cli_usage_error ("snapshot", _("--format must be text or json"));
  if (wait_until_name != NULL && !sight_wait_until_from_string (wait_until_name, &wait_until))
    return sight_cli_usage_error ("snapshot",
                                  _("--wait-until must be domcontentloaded, load or networkidle"));
  if (timeout_ms <= 0)
    return sight_cli_usage_error ("snapshot", _("--timeout must be a positive number"));
  if (viewport != NULL && !parse_viewport (viewport, &width, &height))
    return sight_cli_usage_error ("snapshot", _("--viewport must look like 1280x720"));

  run.loop = g_main_loop_new (NULL, FALSE);
  run.page = sight_web_page_new ();
  run.timeout_ms = (guint) timeout_ms;
  run.flags = full ? SIGHT_OBSERVE_FULL_TEXT : SIGHT_OBSERVE_DEFAULT;
  if (screenshot_path != NULL)
    run.flags |= SIGHT_OBSERVE_SCREENSHOT;
  sight_web_page_set_viewport (run.page, width, height, 1.0);
  sight_web_page_load_async (run.page, argv[1], wait_until, (guint) timeout_ms, NULL,
                             load_done_cb, &run);
  g_main_loop_run (run.loop);

  if (run.error != NULL)
    status = sight_cli_report_error (run.error);
  else
    {
      const SightScreenshot *shot = sight_observation_get_screenshot (run.observation);
      g_autoptr(GError) error = NULL;

      if (format != NULL && g_str_equal (format, "json"))
        {
          g_autofree char *json = sight_observation_to_json (run.observation, TRUE);

          g_print ("%s\n", json);
        }
      else
        g_print ("%s\n", sight_observation_get_text (run.observation));

      if (screenshot_path != NULL && shot != NULL &&
          !g_file_set_contents (screenshot_path, g_bytes_get_data (shot->bytes, NULL),
                                g_bytes_get_size (shot->bytes), &error))
        {
          g_autoptr(GError) wrapped =
            g_error_new (SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                         "Cannot write the screenshot: %s", error->message);

          status = sight_cli_report_error (wrapped);
        }
    }

  g_clear_object (&run.observation);
  g_clear_error (&run.error);
  g_clear_object (&run.page);
  g_main_loop_unref (run.loop);
  return status;
}
