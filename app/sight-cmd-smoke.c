/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-cmd-smoke"

#include "config.h"

#include <glib/gi18n.h>

#include "sight-cli.h"
#include "sight-cli-args.h"
#include "sight-commands.h"
#include "sight-error.h"
#include "sight-report.h"
#include "sight-smoke.h"
#include "sight-store.h"

static const SightArgSpec smoke_specs[] = {
  { "step", "steps", SIGHT_ARG_REPEAT, N_("A plain-language step (repeat for more; up to 30)") },
  { "expect-text", "expectText", SIGHT_ARG_STRING, N_("Text that must be on the page at the end") },
  { "expect-url", "expectUrl", SIGHT_ARG_STRING, N_("Text the address must contain at the end") },
  { "expect-no-text", "expectNoText", SIGHT_ARG_STRING, N_("Text that must not be on the page") },
  { "max-links", "maxLinks", SIGHT_ARG_INT, N_("Same-origin links to check, 0 to 200 (default 50)") },
  { "strict-links", "strictLinks", SIGHT_ARG_BOOL, N_("A broken link fails the test (default true)") },
  { NULL }
};

int
sight_cmd_smoke (int    argc,
                 char **argv)
{
  g_auto(SightArgs) args = { 0 };
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(JsonNode) outcome = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SightStore) store = NULL;
  JsonObject *object;
  const char *verdict;
  int status;

  if (!sight_args_parse ("smoke", "URL", smoke_specs, TRUE, argc, argv, &args, &status))
    return status;
  if (g_strv_length (args.positional) != 1)
    return sight_cli_usage_error ("smoke", _("give exactly one URL"));
  json_object_set_string_member (args.args, "url", args.positional[0]);

  store = sight_store_new (NULL, &error);
  if (store == NULL)
    return sight_cli_report_error (error);

  sight_smoke_test_async (store, args.args, NULL, sight_cli_result_cb, &result);
  outcome = sight_smoke_test_finish (sight_cli_wait (&result), &error);
  if (outcome == NULL)
    return sight_cli_report_error (error);

  object = json_node_get_object (outcome);
  verdict = json_object_get_string_member (object, "verdict");

  /* --output writes the HTML report; the text goes to the terminal. */
  if (args.output != NULL)
    {
      g_autoptr(SightRunData) data = sight_store_load_run (store,
                                                          json_object_get_string_member (object, "runId"),
                                                          &error);

      if (data == NULL || !sight_report_write (data, SIGHT_REPORT_HTML, args.output, &error))
        return sight_cli_report_error (error);
    }
  if (args.json)
    {
      g_autofree char *text = sight_cli_json_text (json_object_get_member (object, "report"));

      g_print ("%s\n", text);
    }
  else
    g_print ("%s\n", json_object_get_string_member (object, "text"));

  if (g_str_equal (verdict, "pass"))
    return 0;
  if (g_str_equal (verdict, "fail"))
    return 1;
  {
    JsonObject *report = json_object_get_object_member (object, "report");
    const char *code = json_object_get_string_member_with_default (report, "code", NULL);
    SightErrorCode error_code;

    if (code != NULL && sight_error_code_from_string (code, &error_code))
      return sight_error_code_exit_status (error_code);
    return 70;
  }
}
