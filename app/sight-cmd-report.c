/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-cmd-report"

#include "config.h"

#include <glib/gi18n.h>
#include <stdio.h>

#include "sight-cli.h"
#include "sight-commands.h"
#include "sight-error.h"
#include "sight-report.h"
#include "sight-store.h"

int
sight_cmd_report (int    argc,
                  char **argv)
{
  g_autofree char *format_name = NULL;
  g_autofree char *output = NULL;
  g_autoptr(SightStore) store = NULL;
  g_autoptr(SightRunData) data = NULL;
  g_autoptr(GError) error = NULL;
  SightReportFormat format = SIGHT_REPORT_HTML;
  int status = 0;
  GOptionEntry entries[] = {
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name,
      N_("html (default), json or junit"), "FORMAT" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
      N_("Write to FILE instead of standard output"), "FILE" },
    { NULL }
  };

  if (!sight_cli_parse ("report", _("RUN — write the report of a stored run"),
                        entries, &argc, &argv, &status))
    return status;
  if (argc != 2)
    return sight_cli_usage_error ("report", _("give exactly one run id (run_…; see “sightline runs”)"));
  if (format_name && !sight_report_format_from_string (format_name, &format))
    return sight_cli_usage_error ("report", _("--format must be html, json or junit, not “%s”"),
                                  format_name);
  if (!g_str_has_prefix (argv[1], "run_"))
    return sight_cli_usage_error ("report", _("“%s” is not a run id (run_…)"), argv[1]);

  store = sight_store_new (NULL, &error);
  if (store == NULL)
    return sight_cli_report_error (error);
  data = sight_store_load_run (store, argv[1], &error);
  if (data == NULL)
    return sight_cli_report_error (error);

  if (output)
    {
      if (!sight_report_write (data, format, output, &error))
        return sight_cli_report_error (error);
    }
  else
    {
      g_autoptr(GBytes) bytes = sight_report_render (data, format, &error);
      gsize len;
      const char *contents;

      if (bytes == NULL)
        return sight_cli_report_error (error);
      contents = g_bytes_get_data (bytes, &len);
      if (len > 0 && fwrite (contents, 1, len, stdout) != len)
        return 70;
      fflush (stdout);
    }
  return 0;
}
