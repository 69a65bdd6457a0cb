/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-cmd-merge-reports"

#include "config.h"

#include <glib/gi18n.h>

#include "sight-cli.h"
#include "sight-cli-args.h"
#include "sight-cmd-run.h"
#include "sight-commands.h"
#include "sight-error.h"
#include "sight-json.h"
#include "sight-suite.h"

static const SightArgSpec merge_specs[] = {
  { "report", "report", SIGHT_ARG_STRING, N_("Write the HTML report to FILE.html, or index.html and results.json into a folder") },
  { "junit", "junit", SIGHT_ARG_STRING, N_("Write a JUnit XML report to FILE") },
  { NULL }
};

/* A results file, or a report folder holding results.json. */
static JsonNode *
load_result (const char  *path,
             GError     **error)
{
  JsonNode *root;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *file = g_file_test (path, G_FILE_TEST_IS_DIR)
                          ? g_build_filename (path, "results.json", NULL) : g_strdup (path);

  root = sight_json_parse_file (file, SIGHT_JSON_MAX_DEPTH, &local_error);
  if (root == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "%s: %s", file,
                   local_error->message);
      return NULL;
    }
  return root;
}

int
sight_cmd_merge_reports (int    argc,
                         char **argv)
{
  g_auto(SightArgs) args = { 0 };
  g_autoptr(GPtrArray) results = g_ptr_array_new_with_free_func ((GDestroyNotify) json_node_unref);
  g_autoptr(JsonNode) merged = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SightStore) store = NULL;
  const char *report, *junit;
  int status;

  if (!sight_args_parse ("merge-reports", "FILE…", merge_specs, FALSE, argc, argv, &args,
                         &status))
    return status;
  if (args.positional == NULL || args.positional[0] == NULL)
    return sight_cli_usage_error ("merge-reports",
                                  _("give the JSON results of the shards (sightline run --json)"));
  for (guint i = 0; args.positional[i] != NULL; i++)
    {
      JsonNode *node = load_result (args.positional[i], &error);

      if (node == NULL)
        return sight_cli_report_error (error);
      g_ptr_array_add (results, node);
    }
  merged = sight_suite_merge (results, &error);
  if (merged == NULL)
    return sight_cli_report_error (error);

  /* The runs' screenshots are in the store when the shards ran here; the
   * report is drawn from the JSON results otherwise. */
  store = sight_store_new (NULL, NULL);
  report = json_object_get_string_member_with_default (args.args, "report", NULL);
  junit = json_object_get_string_member_with_default (args.args, "junit", NULL);
  return sight_cmd_run_emit (json_node_get_object (merged), store, report, junit, args.json,
                             FALSE);
}
