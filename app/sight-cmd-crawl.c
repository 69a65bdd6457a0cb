/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-cmd-crawl"

#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "sight-cli.h"
#include "sight-cli-args.h"
#include "sight-commands.h"
#include "sight-crawl.h"

static const SightArgSpec crawl_specs[] = {
  { "scope", "scope", SIGHT_ARG_STRING, N_("host (default), subdomains, or a comma-separated host list") },
  { "include", "include", SIGHT_ARG_LIST, N_("URL patterns to follow (* wildcards; up to 50)") },
  { "exclude", "exclude", SIGHT_ARG_LIST, N_("URL patterns to skip (* wildcards; up to 50)") },
  { "max-pages", "maxPages", SIGHT_ARG_INT, N_("1 to 100 (default 25)") },
  { "max-depth", "maxDepth", SIGHT_ARG_INT, N_("0 to 5 (default 2)") },
  { "delay-ms", "delayMs", SIGHT_ARG_INT, N_("Pause between pages, 0 to 10000 (default 500)") },
  { "respect-robots", "respectRobots", SIGHT_ARG_BOOL, N_("Obey robots.txt (default true)") },
  { "sitemap", "sitemap", SIGHT_ARG_BOOL, N_("Also start from /sitemap.xml") },
  { "content", "content", SIGHT_ARG_LIST, N_("Return page content in these formats") },
  { "max-ms", "maxMs", SIGHT_ARG_INT, N_("Limit for the whole crawl, 1000 to 600000") },
  { "cursor", "cursor", SIGHT_ARG_STRING, N_("Continue a crawl that stopped") },
  { NULL }
};

int
sight_cmd_crawl (int    argc,
                 char **argv)
{
  g_auto(SightArgs) args = { 0 };
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(JsonNode) crawled = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) text = NULL;
  JsonObject *object;
  JsonArray *pages;
  const char *scope;
  int status;

  if (!sight_args_parse ("crawl", "URL", crawl_specs, TRUE, argc, argv, &args, &status))
    return status;
  if (g_strv_length (args.positional) != 1)
    return sight_cli_usage_error ("crawl", _("give exactly one URL"));
  json_object_set_string_member (args.args, "url", args.positional[0]);

  /* A comma in --scope makes it the host list of the tool's argument. */
  scope = json_object_get_string_member_with_default (args.args, "scope", NULL);
  if (scope != NULL && strchr (scope, ',') != NULL)
    {
      g_auto(GStrv) hosts = g_strsplit (scope, ",", -1);
      JsonArray *array = json_array_new ();

      for (char **h = hosts; *h != NULL; h++)
        json_array_add_string_element (array, g_strstrip (*h));
      json_object_set_array_member (args.args, "scope", array);
    }

  sight_crawl_async (args.args, NULL, sight_cli_result_cb, &result);
  crawled = sight_crawl_finish (sight_cli_wait (&result), &error);
  if (crawled == NULL)
    return sight_cli_report_error (error);

  if (args.json)
    {
      g_autofree char *json = sight_cli_json_text (crawled);

      if (!sight_cli_emit_text (args.output, json, &error))
        return sight_cli_report_error (error);
      return 0;
    }

  object = json_node_get_object (crawled);
  pages = json_object_get_array_member (object, "pages");
  text = g_string_new (NULL);
  for (guint i = 0; i < json_array_get_length (pages); i++)
    {
      JsonObject *page = json_array_get_object_element (pages, i);

      g_string_append_printf (text, "%3" G_GINT64_FORMAT "  d%" G_GINT64_FORMAT "  %5" G_GINT64_FORMAT " ms  %s  %s\n",
                              json_object_get_int_member (page, "status"),
                              json_object_get_int_member (page, "depth"),
                              json_object_get_int_member (page, "ms"),
                              json_object_get_string_member (page, "url"),
                              json_object_get_string_member (page, "title"));
    }
  /* Plain %d rather than G_GINT64_FORMAT, which xgettext cannot see through:
   * the counts are bounded by maxPages and the crawl's own limits. */
  g_string_append_printf (text, _("%u pages, %d skipped, %d pending; stopped by %s"),
                          json_array_get_length (pages),
                          (int) json_object_get_int_member (object, "skippedTotal"),
                          (int) json_object_get_int_member (object, "pending"),
                          json_object_get_string_member (object, "stoppedBy"));
  if (json_object_has_member (object, "cursor"))
    g_string_append_printf (text, "\n%s %s", _("Continue with --cursor"),
                            json_object_get_string_member (object, "cursor"));
  if (!sight_cli_emit_text (args.output, text->str, &error))
    return sight_cli_report_error (error);
  return 0;
}
