/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-cmd-pdf"

#include "config.h"

#include <glib/gi18n.h>

#include "sight-cli.h"
#include "sight-cli-args.h"
#include "sight-commands.h"
#include "sight-pdf.h"

static const SightArgSpec pdf_specs[] = {
  { "paper", "paper", SIGHT_ARG_STRING, N_("A4 (default), Letter or Legal") },
  { "landscape", "landscape", SIGHT_ARG_BOOL, N_("Landscape orientation") },
  { "print-background", "printBackground", SIGHT_ARG_BOOL, N_("Print backgrounds (default true)") },
  { "wait-until", "waitUntil", SIGHT_ARG_STRING, N_("domcontentloaded, load or networkidle (default load)") },
  { "wait-for-text", "waitForText", SIGHT_ARG_STRING, N_("Wait until this text is on the page") },
  { "timeout-ms", "timeoutMs", SIGHT_ARG_INT, N_("1000 to 120000 (default 30000)") },
  { NULL }
};

int
sight_cmd_pdf (int    argc,
               char **argv)
{
  g_auto(SightArgs) args = { 0 };
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GBytes) pdf = NULL;
  g_autoptr(GError) error = NULL;
  int status;

  if (!sight_args_parse ("pdf", "URL --output FILE", pdf_specs, TRUE, argc, argv, &args, &status))
    return status;
  if (g_strv_length (args.positional) != 1)
    return sight_cli_usage_error ("pdf", _("give exactly one URL"));
  if (args.output == NULL)
    return sight_cli_usage_error ("pdf", _("--output FILE is required"));
  json_object_set_string_member (args.args, "url", args.positional[0]);

  sight_pdf_async (args.args, NULL, sight_cli_result_cb, &result);
  pdf = sight_pdf_finish (sight_cli_wait (&result), &error);
  if (pdf == NULL || !sight_cli_write_file (args.output, pdf, &error))
    return sight_cli_report_error (error);
  if (args.json)
    {
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
      JsonObject *object = json_object_new ();
      g_autofree char *text = NULL;

      json_object_set_string_member (object, "output", args.output);
      json_object_set_int_member (object, "bytes", g_bytes_get_size (pdf));
      json_node_take_object (node, object);
      text = sight_cli_json_text (node);
      g_print ("%s\n", text);
    }
  return 0;
}
