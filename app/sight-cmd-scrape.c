/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-cmd-scrape"

#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "sight-cli.h"
#include "sight-cli-args.h"
#include "sight-commands.h"
#include "sight-scrape.h"

static const SightArgSpec scrape_specs[] = {
  { "format", "format", SIGHT_ARG_LIST, N_("html, cleaned_html, markdown, readability (default markdown)") },
  { "wait-until", "waitUntil", SIGHT_ARG_STRING, N_("domcontentloaded, load or networkidle (default load)") },
  { "wait-for-text", "waitForText", SIGHT_ARG_STRING, N_("Wait until this text is on the page") },
  { "timeout-ms", "timeoutMs", SIGHT_ARG_INT, N_("1000 to 120000 (default 30000)") },
  { "screenshot", "screenshot", SIGHT_ARG_BOOL, N_("Also return a PNG screenshot as base64") },
  { NULL }
};

int
sight_cmd_scrape (int    argc,
                  char **argv)
{
  g_auto(SightArgs) args = { 0 };
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(JsonNode) scraped = NULL;
  g_autoptr(GError) error = NULL;
  JsonObject *content;
  g_autoptr(GList) formats = NULL;
  int status;

  if (!sight_args_parse ("scrape", "URL", scrape_specs, TRUE, argc, argv, &args, &status))
    return status;
  if (g_strv_length (args.positional) != 1)
    return sight_cli_usage_error ("scrape", _("give exactly one URL"));
  json_object_set_string_member (args.args, "url", args.positional[0]);

  sight_scrape_async (args.args, NULL, sight_cli_result_cb, &result);
  scraped = sight_scrape_finish (sight_cli_wait (&result), &error);
  if (scraped == NULL)
    return sight_cli_report_error (error);

  content = json_object_get_object_member (json_node_get_object (scraped), "content");
  formats = json_object_get_members (content);
  /* One format prints as itself; anything more is the tool's JSON. */
  if (args.json || g_list_length (formats) != 1)
    {
      g_autofree char *text = sight_cli_json_text (scraped);

      if (!sight_cli_emit_text (args.output, text, &error))
        return sight_cli_report_error (error);
    }
  else if (!sight_cli_emit_text (args.output,
                                 json_object_get_string_member (content, formats->data), &error))
    return sight_cli_report_error (error);
  return 0;
}
