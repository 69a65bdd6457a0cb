/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-cmd-export"

#include "config.h"

#include <glib/gi18n.h>

#include "sight-cli.h"
#include "sight-commands.h"
#include "sight-error.h"
#include "sight-export.h"

int
sight_cmd_export (int    argc,
                  char **argv)
{
  g_autofree char *to = NULL;
  g_autofree char *output = NULL;
  g_autofree char *text = NULL;
  g_auto(GStrv) fixme = NULL;
  g_autoptr(GError) error = NULL;
  SightExportFormat format;
  int status = 0;
  GOptionEntry entries[] = {
    { "to", 0, 0, G_OPTION_ARG_STRING, &to,
      N_("What to write: playwright or e2e"), "FORMAT" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
      N_("Write to FILE instead of standard output"), "FILE" },
    { NULL }
  };

  if (!sight_cli_parse ("export", _("FILE — a test file as a Playwright or @e2edev/e2e test"),
                        entries, &argc, &argv, &status))
    return status;
  if (argc != 2)
    return sight_cli_usage_error ("export", _("give exactly one test file"));
  if (to == NULL)
    return sight_cli_usage_error ("export", _("--to is required: playwright or e2e"));
  if (!sight_export_format_from_string (to, &format))
    return sight_cli_usage_error ("export", _("--to must be playwright or e2e, not “%s”"), to);

  text = sight_export_test_path (argv[1], format, &fixme, &error);
  if (text == NULL)
    return sight_cli_report_error (error);
  /* what the exported test does not do, so that nobody takes its verdict for
   * the whole test's */
  for (guint i = 0; fixme[i] != NULL; i++)
    g_printerr (_("%s: test.fixme: %s\n"), argv[1], fixme[i]);

  if (output == NULL)
    {
      g_print ("%s", text);
      return 0;
    }
  /* g_file_set_contents writes a temporary file and renames it over @output */
  if (!g_file_set_contents (output, text, -1, &error))
    {
      g_autoptr(GError) wrapped = g_error_new (SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                                               "%s: %s", output, error->message);

      return sight_cli_report_error (wrapped);
    }
  return 0;
}
