/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-cmd-runs"

#include "config.h"

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>

#include "sight-cli.h"
#include "sight-commands.h"
#include "sight-error.h"
#include "sight-store.h"

static char *
local_time (gint64 t)
{
  g_autoptr(GDateTime) utc = g_date_time_new_from_unix_utc (t / G_USEC_PER_SEC);
  g_autoptr(GDateTime) local = utc ? g_date_time_to_local (utc) : NULL;

  return local ? g_date_time_format (local, "%Y-%m-%d %H:%M:%S") : g_strdup ("-");
}

static char *
iso_time (gint64 t)
{
  g_autoptr(GDateTime) utc = t > 0 ? g_date_time_new_from_unix_utc (t / G_USEC_PER_SEC) : NULL;

  return utc ? g_date_time_format_iso8601 (utc) : NULL;
}

/* One line for a terminal: no control characters, bounded. */
static char *
cell (const char *text,
      gsize       max_bytes)
{
  return sight_text_sanitize (text ? text : "", max_bytes);
}

int
sight_cmd_runs (int    argc,
                char **argv)
{
  g_autofree char *verdict = NULL;
  g_autoptr(SightStore) store = NULL;
  g_autoptr(GPtrArray) runs = NULL;
  g_autoptr(GError) error = NULL;
  gboolean json = FALSE;
  int limit = 20;
  int status = 0;
  GOptionEntry entries[] = {
    { "limit", 'n', 0, G_OPTION_ARG_INT, &limit,
      N_("List at most N runs, newest first (default 20, 0 for all)"), "N" },
    { "verdict", 0, 0, G_OPTION_ARG_STRING, &verdict,
      N_("Only runs with this verdict: running, pass, fail, error or interrupted"), "VERDICT" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json,
      N_("Print JSON"), NULL },
    { NULL }
  };

  if (!sight_cli_parse ("runs", _("— list the stored runs"), entries, &argc, &argv, &status))
    return status;
  if (argc != 1)
    return sight_cli_usage_error ("runs", _("takes no arguments"));
  if (limit < 0)
    return sight_cli_usage_error ("runs", _("--limit must be 0 or more"));
  if (verdict && !sight_run_verdict_from_string (verdict, NULL))
    return sight_cli_usage_error ("runs", _("--verdict must be running, pass, fail, error or "
                                            "interrupted, not “%s”"), verdict);

  store = sight_store_new (NULL, &error);
  if (store == NULL)
    return sight_cli_report_error (error);
  runs = sight_store_list_runs (store, limit, verdict, &error);
  if (runs == NULL)
    return sight_cli_report_error (error);

  if (json)
    {
      g_autoptr(JsonBuilder) b = json_builder_new ();
      g_autoptr(JsonNode) root = NULL;
      g_autofree char *text = NULL;

      json_builder_begin_object (b);
      json_builder_set_member_name (b, "runs");
      json_builder_begin_array (b);
      for (guint i = 0; i < runs->len; i++)
        {
          SightRunRecord *r = runs->pdata[i];
          g_autofree char *started = iso_time (r->started_at);
          g_autofree char *finished = iso_time (r->finished_at);

          json_builder_begin_object (b);
          json_builder_set_member_name (b, "id");
          json_builder_add_string_value (b, r->id);
          json_builder_set_member_name (b, "kind");
          json_builder_add_string_value (b, r->kind);
          if (r->name)
            {
              json_builder_set_member_name (b, "name");
              json_builder_add_string_value (b, r->name);
            }
          if (r->url)
            {
              json_builder_set_member_name (b, "url");
              json_builder_add_string_value (b, r->url);
            }
          json_builder_set_member_name (b, "verdict");
          json_builder_add_string_value (b, sight_run_verdict_to_string (r->verdict));
          if (r->code)
            {
              json_builder_set_member_name (b, "code");
              json_builder_add_string_value (b, r->code);
            }
          json_builder_set_member_name (b, "startedAt");
          json_builder_add_string_value (b, started);
          if (finished)
            {
              json_builder_set_member_name (b, "finishedAt");
              json_builder_add_string_value (b, finished);
              json_builder_set_member_name (b, "ms");
              json_builder_add_int_value (b, (r->finished_at - r->started_at) / 1000);
            }
          json_builder_set_member_name (b, "steps");
          json_builder_add_int_value (b, r->n_steps);
          json_builder_set_member_name (b, "passed");
          json_builder_add_int_value (b, r->n_steps_passed);
          json_builder_set_member_name (b, "failed");
          json_builder_add_int_value (b, r->n_steps_failed);
          json_builder_set_member_name (b, "modelCalls");
          json_builder_add_int_value (b, r->model_calls);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
      json_builder_end_object (b);
      root = json_builder_get_root (b);
      text = json_to_string (root, TRUE);
      g_print ("%s\n", text);
      return 0;
    }

  if (runs->len == 0)
    {
      g_print ("%s\n", _("No runs stored yet."));
      return 0;
    }
  g_print ("%-28s  %-11s  %-19s  %8s  %7s  %s\n", _("RUN"), _("VERDICT"), _("STARTED"),
           _("SECONDS"), _("STEPS"), _("NAME"));
  for (guint i = 0; i < runs->len; i++)
    {
      SightRunRecord *r = runs->pdata[i];
      g_autofree char *started = local_time (r->started_at);
      g_autofree char *name = cell (r->name && *r->name ? r->name : r->url, 200);
      g_autofree char *secs = r->finished_at
                              ? g_strdup_printf ("%.1f", (r->finished_at - r->started_at) / 1e6)
                              : g_strdup ("-");
      g_autofree char *steps = g_strdup_printf ("%u/%u", r->n_steps_passed, r->n_steps);

      g_print ("%-28s  %-11s  %-19s  %8s  %7s  %s\n", r->id, sight_run_verdict_to_string (r->verdict),
               started, secs, steps, name);
    }
  return 0;
}
