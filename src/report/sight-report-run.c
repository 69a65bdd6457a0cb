/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-report"

#include "config.h"

#include "sight-report.h"

#include <string.h>

#include "sight-error.h"
#include "sight-json.h"
#include "sight-report-private.h"

/* ----------------------------------------------------------------- the run */

double
_sight_report_seconds_between (gint64 start,
                               gint64 end)
{
  if (start <= 0 || end < start)
    return 0;
  return (end - start) / 1e6;
}

gint64
_sight_report_run_end (const SightRunRecord *run)
{
  return run->finished_at ? run->finished_at : g_get_real_time ();
}

char *
_sight_report_iso_time (gint64 t)
{
  g_autoptr(GDateTime) dt = NULL;

  if (t <= 0)
    return NULL;
  dt = g_date_time_new_from_unix_utc (t / G_USEC_PER_SEC);
  if (dt == NULL)
    return NULL;
  dt = g_date_time_add (dt, t % G_USEC_PER_SEC);
  return g_date_time_format (dt, "%Y-%m-%dT%H:%M:%S.%fZ");
}

const char *
_sight_report_verdict_word (SightRunVerdict verdict)
{
  switch (verdict)
    {
    case SIGHT_RUN_VERDICT_PASS: return "PASSED";
    case SIGHT_RUN_VERDICT_FAIL: return "FAILED";
    case SIGHT_RUN_VERDICT_RUNNING: return "is RUNNING";
    case SIGHT_RUN_VERDICT_INTERRUPTED: return "was INTERRUPTED";
    case SIGHT_RUN_VERDICT_SKIPPED: return "SKIPPED";
    case SIGHT_RUN_VERDICT_ERROR:
    default: return "could not run (ERROR)";
    }
}

/* The report verdict of the spec: pass, fail, error or running. */
const char *
_sight_report_verdict (SightRunVerdict verdict)
{
  switch (verdict)
    {
    case SIGHT_RUN_VERDICT_PASS: return "pass";
    case SIGHT_RUN_VERDICT_FAIL: return "fail";
    case SIGHT_RUN_VERDICT_RUNNING: return "running";
    default: return "error";
    }
}

gboolean
_sight_report_is_console_error (const SightLogRecord *l)
{
  return g_strcmp0 (l->kind, "page_error") == 0 ||
         (g_strcmp0 (l->kind, "console") == 0 && g_strcmp0 (l->level, "error") == 0);
}

gboolean
_sight_report_is_failed_request (const SightLogRecord *l)
{
  /* "blocked": a load the origin guard refused (navigation or subresource) */
  return g_strcmp0 (l->kind, "request_failed") == 0 || g_strcmp0 (l->kind, "blocked") == 0;
}

/* A link of a page that did not work (a smoke test's): its address in url,
 * its HTTP status (0 when nothing answered), the page it is on in text. */
gboolean
_sight_report_is_broken_link (const SightLogRecord *l)
{
  return g_strcmp0 (l->kind, "broken_link") == 0;
}

void
_sight_report_count_findings (const SightRunData *data,
                              guint              *n_console,
                              guint              *n_failed)
{
  *n_console = *n_failed = 0;
  for (guint i = 0; data->logs && i < data->logs->len; i++)
    {
      const SightLogRecord *l = data->logs->pdata[i];
      if (_sight_report_is_console_error (l))
        (*n_console)++;
      else if (_sight_report_is_failed_request (l))
        (*n_failed)++;
    }
}

const char *
_sight_report_step_label (const SightStepRecord *s)
{
  return s->label ? s->label : s->kind ? s->kind : "step";
}

gboolean
_sight_report_step_failed (const SightStepRecord *s)
{
  return s->verdict == SIGHT_RUN_VERDICT_FAIL || s->verdict == SIGHT_RUN_VERDICT_ERROR ||
         s->verdict == SIGHT_RUN_VERDICT_INTERRUPTED;
}

char *
_sight_report_one_line (const char *text,
                        gsize       max_bytes)
{
  g_autofree char *clean = _sight_report_clean_text (text);
  g_autofree char *cut = NULL;

  g_strdelimit (clean, "\n\t", ' ');
  cut = sight_text_sanitize (g_strstrip (clean), max_bytes);
  return g_steal_pointer (&cut);
}

char *
_sight_report_step_failure_text (const SightStepRecord *s)
{
  if (s->explanation && *s->explanation)
    return _sight_report_one_line (s->explanation, 500);
  if (s->code)
    return g_strdup (s->code);
  return g_strdup (sight_run_verdict_to_string (s->verdict));
}

void
_sight_report_append_attachments (GString            *out,
                                  const SightRunData *data)
{
  for (guint i = 0; data->steps != NULL && i < data->steps->len; i++)
    {
      const SightStepRecord *st = data->steps->pdata[i];
      const char *path = sight_run_data_get_step_evidence (data, st->index);

      if (path != NULL)
        g_string_append_printf (out, "\n[[ATTACHMENT|%s]]", path);
    }
}

/* ---------------------------------------------- a run from its JSON report */

const char *
_sight_report_member_string (JsonObject *o,
                             const char *name)
{
  JsonNode *node = o ? json_object_get_member (o, name) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) ||
      json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

gint64
_sight_report_member_int (JsonObject *o,
                          const char *name,
                          gint64      fallback)
{
  JsonNode *node = o ? json_object_get_member (o, name) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node))
    return fallback;
  return json_node_get_value_type (node) == G_TYPE_DOUBLE ? (gint64) json_node_get_double (node)
                                                          : json_node_get_int (node);
}

JsonArray *
_sight_report_member_array (JsonObject *o,
                            const char *name)
{
  JsonNode *node = o ? json_object_get_member (o, name) : NULL;

  return node && JSON_NODE_HOLDS_ARRAY (node) ? json_node_get_array (node) : NULL;
}

JsonObject *
_sight_report_member_object (JsonObject *o,
                             const char *name)
{
  JsonNode *node = o ? json_object_get_member (o, name) : NULL;

  return node && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

gint64
_sight_report_parse_iso (const char *text)
{
  g_autoptr(GDateTime) dt = text ? g_date_time_new_from_iso8601 (text, NULL) : NULL;

  return dt ? g_date_time_to_unix (dt) * G_USEC_PER_SEC : 0;
}

SightRunVerdict
_sight_report_verdict_from (const char      *name,
                            SightRunVerdict  fallback)
{
  SightRunVerdict verdict;

  return name && sight_run_verdict_from_string (name, &verdict) ? verdict : fallback;
}

/* A run as its JSON report (sight_report_to_json) describes it: everything
 * but the screenshots, trees and model calls, which the report leaves out.
 * Used when the run is not in this machine's store (a shard ran elsewhere). */
SightRunData *
_sight_report_run_data_from_report (JsonObject *report)
{
  SightRunData *data = g_new0 (SightRunData, 1);
  SightRunRecord *run = g_new0 (SightRunRecord, 1);
  JsonObject *counts = _sight_report_member_object (report, "counts");
  JsonObject *usage = _sight_report_member_object (report, "usage");
  JsonObject *findings = _sight_report_member_object (report, "findings");
  JsonArray *steps = _sight_report_member_array (report, "steps");
  JsonArray *notes = _sight_report_member_array (report, "notes");
  JsonArray *console = _sight_report_member_array (findings, "consoleErrors");
  JsonArray *failed = _sight_report_member_array (findings, "failedRequests");
  JsonArray *broken = _sight_report_member_array (findings, "brokenLinks");

  data->run = run;
  data->steps = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_step_record_free);
  data->observations = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_observation_record_free);
  data->model_calls = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_model_call_record_free);
  data->logs = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_log_record_free);
  data->artifacts = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_artifact_record_free);

  run->id = g_strdup (_sight_report_member_string (report, "id"));
  run->kind = g_strdup (_sight_report_member_string (report, "kind"));
  run->name = g_strdup (_sight_report_member_string (report, "name"));
  run->url = g_strdup (_sight_report_member_string (report, "url"));
  run->code = g_strdup (_sight_report_member_string (report, "code"));
  run->answer = g_strdup (_sight_report_member_string (report, "answer"));
  run->final_url = g_strdup (_sight_report_member_string (findings, "finalUrl"));
  run->verdict = _sight_report_verdict_from (_sight_report_member_string (report, "status"),
                                             SIGHT_RUN_VERDICT_ERROR);
  run->started_at = _sight_report_parse_iso (_sight_report_member_string (report, "startedAt"));
  run->finished_at = run->started_at + _sight_report_member_int (report, "ms", 0) * 1000;
  run->n_steps_passed = _sight_report_member_int (counts, "passed", 0);
  run->n_steps_failed = _sight_report_member_int (counts, "failed", 0);
  run->n_steps_skipped = _sight_report_member_int (counts, "skipped", 0);
  run->model_calls = _sight_report_member_int (usage, "modelCalls", 0);
  run->actions = _sight_report_member_int (usage, "actions", 0);
  sight_usage_init (&run->usage);
  run->usage.model_calls = run->model_calls;
  run->usage.input_tokens = MAX (_sight_report_member_int (usage, "inputTokens", 0), 0);
  run->usage.output_tokens = MAX (_sight_report_member_int (usage, "outputTokens", 0), 0);
  run->usage.cached_input_tokens = MAX (_sight_report_member_int (usage, "cachedInputTokens", 0), 0);
  if (g_strcmp0 (_sight_report_member_string (usage, "tokenAccounting"), "adapter-upper-bound") == 0)
    run->usage.token_accounting = SIGHT_TOKEN_ACCOUNTING_ADAPTER_UPPER_BOUND;
  run->usage.has_cost = _sight_report_member_int (usage, "costMicros", -1) >= 0;
  run->usage.cost_micro_usd = MAX (_sight_report_member_int (usage, "costMicros", 0), 0);
  run->usage.has_estimated_cost = _sight_report_member_int (usage, "estimatedCostMicros", -1) >= 0;
  run->usage.estimated_cost_micro_usd = MAX (_sight_report_member_int (usage, "estimatedCostMicros",
                                                                       0), 0);
  if (notes != NULL)
    {
      g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();

      for (guint i = 0; i < json_array_get_length (notes); i++)
        if (json_node_get_value_type (json_array_get_element (notes, i)) == G_TYPE_STRING)
          g_strv_builder_add (builder, json_array_get_string_element (notes, i));
      run->notes = g_strv_builder_end (builder);
    }

  for (guint i = 0; steps && i < json_array_get_length (steps); i++)
    {
      JsonObject *o = json_array_get_object_element (steps, i);
      SightStepRecord *st;

      if (o == NULL)
        continue;
      st = g_new0 (SightStepRecord, 1);
      st->run_id = g_strdup (run->id);
      st->index = _sight_report_member_int (o, "index", i);
      st->kind = g_strdup (_sight_report_member_string (o, "kind"));
      st->label = g_strdup (_sight_report_member_string (o, "label"));
      st->instruction = g_strdup (_sight_report_member_string (o, "instruction"));
      st->verdict = _sight_report_verdict_from (_sight_report_member_string (o, "verdict"),
                                                SIGHT_RUN_VERDICT_ERROR);
      st->code = g_strdup (_sight_report_member_string (o, "code"));
      st->explanation = g_strdup (_sight_report_member_string (o, "explanation"));
      st->model_calls = _sight_report_member_int (o, "modelCalls", 0);
      st->actions = _sight_report_member_int (o, "actions", 0);
      st->started_at = run->started_at;
      st->finished_at = run->started_at + _sight_report_member_int (o, "ms", 0) * 1000;
      g_ptr_array_add (data->steps, st);
      /* The evidence is on the machine that ran it; its path still is. */
      if (_sight_report_member_string (o, "screenshot") != NULL)
        {
          SightArtifactRecord *a = g_new0 (SightArtifactRecord, 1);

          a->run_id = g_strdup (run->id);
          a->step_index = (int) st->index;
          a->path = g_strdup (_sight_report_member_string (o, "screenshot"));
          a->name = g_path_get_basename (a->path);
          a->mime = g_strdup ("image/jpeg");
          g_ptr_array_add (data->artifacts, a);
        }
    }
  for (guint pass = 0; pass < 3; pass++)
    {
      JsonArray *list = pass == 0 ? console : pass == 1 ? failed : broken;

      for (guint i = 0; list && i < json_array_get_length (list); i++)
        {
          JsonObject *o = json_array_get_object_element (list, i);
          SightLogRecord *l;

          if (o == NULL)
            continue;
          l = g_new0 (SightLogRecord, 1);
          l->run_id = g_strdup (run->id);
          l->step_index = _sight_report_member_int (o, "step", -1);
          if (pass == 0)
            {
              l->kind = g_strdup (_sight_report_member_string (o, "kind") ? _sight_report_member_string (o, "kind") : "console");
              l->level = g_strdup ("error");
              l->text = g_strdup (_sight_report_member_string (o, "text"));
            }
          else if (pass == 1)
            {
              l->kind = g_strdup ("request_failed");
              l->status = _sight_report_member_int (o, "status", 0);
              l->text = g_strdup (_sight_report_member_string (o, "error"));
            }
          else
            {
              l->kind = g_strdup ("broken_link");
              l->status = _sight_report_member_int (o, "status", 0);
              l->text = g_strdup (_sight_report_member_string (o, "foundOn"));
            }
          l->url = g_strdup (_sight_report_member_string (o, "url"));
          g_ptr_array_add (data->logs, l);
        }
    }
  return data;
}

/* The stored run of an attempt, else one rebuilt from its JSON report. */
SightRunData *
_sight_report_attempt_run (JsonObject *attempt,
                           GHashTable *runs,
                           gboolean   *owned)
{
  const char *run_id = _sight_report_member_string (attempt, "runId");
  SightRunData *data = run_id && runs ? g_hash_table_lookup (runs, run_id) : NULL;
  JsonObject *report = _sight_report_member_object (attempt, "report");

  *owned = FALSE;
  if (data != NULL)
    return data;
  if (report == NULL)
    return NULL;
  *owned = TRUE;
  return _sight_report_run_data_from_report (report);
}
