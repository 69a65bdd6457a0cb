/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-report"

#include "config.h"

#include "sight-report.h"

#include "sight-json.h"
#include "sight-report-private.h"
#include "sight-secrets.h"

/* -------------------------------------------------------------------- JSON */

static void
add_string (JsonBuilder *b,
            const char  *member,
            const char  *value)
{
  g_autofree char *clean = NULL;

  if (value == NULL)
    return;
  clean = _sight_report_clean_text (value);
  json_builder_set_member_name (b, member);
  json_builder_add_string_value (b, clean);
}

static void
add_json_text (JsonBuilder *b,
               const char  *member,
               const char  *json)
{
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(JsonNode) redacted = NULL;

  if (json == NULL || (node = sight_json_parse (json, -1, SIGHT_JSON_MAX_DEPTH, NULL)) == NULL)
    return;
  redacted = sight_secrets_redact_json (node);
  json_builder_set_member_name (b, member);
  json_builder_add_value (b, g_steal_pointer (&redacted));
}

static void
add_time (JsonBuilder *b,
          const char  *member,
          gint64       t)
{
  g_autofree char *iso = _sight_report_iso_time (t);

  if (iso)
    {
      json_builder_set_member_name (b, member);
      json_builder_add_string_value (b, iso);
    }
}

JsonNode *
sight_report_to_json (const SightRunData *data)
{
  const SightRunRecord *run = data->run;
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autofree char *summary = sight_report_summary (data);
  g_autofree char *text = sight_report_text (data);
  gint64 end = _sight_report_run_end (run);
  guint n_console, n_failed;

  _sight_report_count_findings (data, &n_console, &n_failed);

  json_builder_begin_object (b);
  add_string (b, "id", run->id);
  add_string (b, "kind", run->kind);
  json_builder_set_member_name (b, "verdict");
  json_builder_add_string_value (b, _sight_report_verdict (run->verdict));
  json_builder_set_member_name (b, "status");
  json_builder_add_string_value (b, sight_run_verdict_to_string (run->verdict));
  add_string (b, "summary", summary);
  add_string (b, "text", text);
  add_string (b, "name", run->name);
  add_string (b, "url", run->url);
  add_string (b, "sessionId", run->session_id);
  add_string (b, "code", run->code);
  add_string (b, "answer", run->answer);
  add_time (b, "startedAt", run->started_at);
  add_time (b, "finishedAt", run->finished_at);
  json_builder_set_member_name (b, "ms");
  json_builder_add_int_value (
      b, (gint64)(_sight_report_seconds_between (run->started_at, end) * 1000));

  json_builder_set_member_name (b, "counts");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "steps");
  json_builder_add_int_value (b, data->steps ? data->steps->len : 0);
  json_builder_set_member_name (b, "passed");
  json_builder_add_int_value (b, run->n_steps_passed);
  json_builder_set_member_name (b, "failed");
  json_builder_add_int_value (b, run->n_steps_failed);
  json_builder_set_member_name (b, "skipped");
  json_builder_add_int_value (b, run->n_steps_skipped);
  json_builder_end_object (b);

  json_builder_set_member_name (b, "usage");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "modelCalls");
  json_builder_add_int_value (b, run->model_calls);
  json_builder_set_member_name (b, "actions");
  json_builder_add_int_value (b, run->actions);
  json_builder_set_member_name (b, "inputTokens");
  json_builder_add_int_value (b, run->usage.input_tokens);
  json_builder_set_member_name (b, "outputTokens");
  json_builder_add_int_value (b, run->usage.output_tokens);
  json_builder_set_member_name (b, "cachedInputTokens");
  json_builder_add_int_value (b, run->usage.cached_input_tokens);
  json_builder_set_member_name (b, "tokenAccounting");
  json_builder_add_string_value (b, sight_token_accounting_to_string (run->usage.token_accounting));
  /* what providers reported, and apart from it Sightline's estimate */
  if (run->usage.has_cost)
    {
      json_builder_set_member_name (b, "costMicros");
      json_builder_add_int_value (b, run->usage.cost_micro_usd);
    }
  if (run->usage.has_estimated_cost)
    {
      json_builder_set_member_name (b, "estimatedCostMicros");
      json_builder_add_int_value (b, run->usage.estimated_cost_micro_usd);
    }
  json_builder_end_object (b);

  json_builder_set_member_name (b, "steps");
  json_builder_begin_array (b);
  for (guint i = 0; data->steps && i < data->steps->len; i++)
    {
      const SightStepRecord *st = data->steps->pdata[i];

      json_builder_begin_object (b);
      json_builder_set_member_name (b, "index");
      json_builder_add_int_value (b, st->index);
      add_string (b, "kind", st->kind);
      add_string (b, "label", _sight_report_step_label (st));
      add_string (b, "instruction", st->instruction);
      json_builder_set_member_name (b, "ok");
      json_builder_add_boolean_value (b, st->verdict == SIGHT_RUN_VERDICT_PASS);
      json_builder_set_member_name (b, "verdict");
      json_builder_add_string_value (b, sight_run_verdict_to_string (st->verdict));
      add_string (b, "code", st->code);
      if (_sight_report_step_failed (st) || st->explanation)
        add_string (b, "error", _sight_report_step_failed (st) ? st->explanation : NULL);
      add_string (b, "explanation", st->explanation);
      add_string (b, "screenshot", sight_run_data_get_step_evidence (data, st->index));
      /* when the step began: with the run's startedAt it places the step in
       * the run's time (bench/vs-playwright's phases) */
      add_time (b, "startedAt", st->started_at);
      json_builder_set_member_name (b, "ms");
      json_builder_add_int_value (b, (gint64) (_sight_report_seconds_between (st->started_at, st->finished_at) * 1000));
      json_builder_set_member_name (b, "modelCalls");
      json_builder_add_int_value (b, st->model_calls);
      json_builder_set_member_name (b, "actions");
      json_builder_add_int_value (b, st->actions);
      add_json_text (b, "options", st->options_json);
      add_json_text (b, "usage", st->usage_json);
      add_json_text (b, "cache", st->cache_json);
      add_json_text (b, "budget", st->budget_json);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);

  json_builder_set_member_name (b, "findings");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "consoleErrors");
  json_builder_begin_array (b);
  for (guint i = 0; data->logs && i < data->logs->len; i++)
    {
      const SightLogRecord *l = data->logs->pdata[i];
      if (!_sight_report_is_console_error (l))
        continue;
      json_builder_begin_object (b);
      add_string (b, "kind", l->kind);
      add_string (b, "text", l->text);
      add_string (b, "url", l->url);
      if (l->step_index >= 0)
        {
          json_builder_set_member_name (b, "step");
          json_builder_add_int_value (b, l->step_index);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "failedRequests");
  json_builder_begin_array (b);
  for (guint i = 0; data->logs && i < data->logs->len; i++)
    {
      const SightLogRecord *l = data->logs->pdata[i];
      if (!_sight_report_is_failed_request (l))
        continue;
      json_builder_begin_object (b);
      add_string (b, "url", l->url);
      json_builder_set_member_name (b, "status");
      json_builder_add_int_value (b, l->status);
      add_string (b, "error", l->text);
      if (l->step_index >= 0)
        {
          json_builder_set_member_name (b, "step");
          json_builder_add_int_value (b, l->step_index);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "brokenLinks");
  json_builder_begin_array (b);
  for (guint i = 0; data->logs && i < data->logs->len; i++)
    {
      const SightLogRecord *l = data->logs->pdata[i];
      if (!_sight_report_is_broken_link (l))
        continue;
      json_builder_begin_object (b);
      add_string (b, "url", l->url);
      json_builder_set_member_name (b, "status");
      json_builder_add_int_value (b, l->status);
      add_string (b, "foundOn", l->text);
      if (l->step_index >= 0)
        {
          json_builder_set_member_name (b, "step");
          json_builder_add_int_value (b, l->step_index);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  add_string (b, "finalUrl", run->final_url);
  json_builder_end_object (b);

  json_builder_set_member_name (b, "notes");
  json_builder_begin_array (b);
  for (guint i = 0; run->notes && run->notes[i]; i++)
    {
      g_autofree char *note = _sight_report_clean_text (run->notes[i]);
      json_builder_add_string_value (b, note);
    }
  if (run->verdict == SIGHT_RUN_VERDICT_INTERRUPTED)
    json_builder_add_string_value (b, "The process running this test ended before the test "
                                      "finished; the steps that were still running are marked "
                                      "interrupted.");
  json_builder_end_array (b);
  json_builder_end_object (b);

  return json_builder_get_root (b);
}
