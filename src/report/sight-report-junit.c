/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-report"

#include "config.h"

#include "sight-report.h"

#include <string.h>

#include "sight-report-private.h"

/* ------------------------------------------------------------------- JUnit */

static void
xml_attr (GString    *out,
          const char *name,
          const char *value)
{
  g_autofree char *escaped = sight_report_escape_xml (value);

  g_string_append_printf (out, " %s=\"%s\"", name, escaped);
}

GBytes *
_sight_report_render_junit (const SightRunData *data)
{
  const SightRunRecord *run = data->run;
  GString *out = g_string_new ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  g_autofree char *stamp = _sight_report_iso_time (run->started_at);
  g_autofree char *suite_name = g_strdup (run->name ? run->name : run->url ? run->url : run->id);
  g_autofree char *time_s = NULL;
  guint tests = data->steps->len, failures = 0, errors = 0, skipped = 0;
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  for (guint i = 0; i < data->steps->len; i++)
    {
      const SightStepRecord *st = data->steps->pdata[i];
      if (st->verdict == SIGHT_RUN_VERDICT_FAIL)
        failures++;
      else if (st->verdict == SIGHT_RUN_VERDICT_ERROR || st->verdict == SIGHT_RUN_VERDICT_INTERRUPTED)
        errors++;
      else if (st->verdict == SIGHT_RUN_VERDICT_SKIPPED)
        skipped++;
    }
  /* A run that could not start has no steps; it still is one error. */
  if (tests == 0 && run->verdict != SIGHT_RUN_VERDICT_PASS)
    {
      tests = 1;
      errors = 1;
    }
  time_s = g_strdup (g_ascii_formatd (
      buf, sizeof buf, "%.3f",
      _sight_report_seconds_between (run->started_at, _sight_report_run_end (run))));

  g_string_append (out, "<testsuites");
  xml_attr (out, "name", "sightline");
  g_string_append_printf (out, " tests=\"%u\" failures=\"%u\" errors=\"%u\" skipped=\"%u\" time=\"%s\">\n",
                          tests, failures, errors, skipped, time_s);
  g_string_append (out, "  <testsuite");
  xml_attr (out, "name", suite_name);
  xml_attr (out, "id", run->id);
  g_string_append_printf (out, " tests=\"%u\" failures=\"%u\" errors=\"%u\" skipped=\"%u\" time=\"%s\"",
                          tests, failures, errors, skipped, time_s);
  if (stamp)
    xml_attr (out, "timestamp", stamp);
  g_string_append (out, ">\n    <properties>\n");
  g_string_append (out, "      <property");
  xml_attr (out, "name", "run");
  xml_attr (out, "value", run->id);
  g_string_append (out, "/>\n      <property");
  xml_attr (out, "name", "verdict");
  xml_attr (out, "value", _sight_report_verdict (run->verdict));
  g_string_append (out, "/>\n");
  if (run->url)
    {
      g_string_append (out, "      <property");
      xml_attr (out, "name", "url");
      xml_attr (out, "value", run->url);
      g_string_append (out, "/>\n");
    }
  {
    g_autofree char *reported = run->usage.has_cost
                                ? g_strdup_printf ("%" G_GUINT64_FORMAT, run->usage.cost_micro_usd)
                                : NULL;
    g_autofree char *estimated = run->usage.has_estimated_cost
                                 ? g_strdup_printf ("%" G_GUINT64_FORMAT,
                                                    run->usage.estimated_cost_micro_usd)
                                 : NULL;
    const char *properties[][2] = {
      { "tokenAccounting", sight_token_accounting_to_string (run->usage.token_accounting) },
      { "costMicros", reported },
      { "estimatedCostMicros", estimated },
    };

    for (guint i = 0; i < G_N_ELEMENTS (properties); i++)
      if (properties[i][1] != NULL)
        {
          g_string_append (out, "      <property");
          xml_attr (out, "name", properties[i][0]);
          xml_attr (out, "value", properties[i][1]);
          g_string_append (out, "/>\n");
        }
  }
  g_string_append (out, "    </properties>\n");

  for (guint i = 0; i < data->steps->len; i++)
    {
      const SightStepRecord *st = data->steps->pdata[i];
      g_autofree char *name = g_strdup_printf ("Step %u (%s): %s", st->index + 1,
                                               _sight_report_step_label (st),
                                               st->instruction ? st->instruction : "");
      g_autofree char *why = _sight_report_step_failure_text (st);
      g_autofree char *message = NULL;
      g_autofree char *body = NULL;

      g_string_append (out, "    <testcase");
      xml_attr (out, "classname", suite_name);
      xml_attr (out, "name", name);
      g_string_append_printf (
          out, " time=\"%s\"",
          g_ascii_formatd (buf, sizeof buf, "%.3f",
                           _sight_report_seconds_between (st->started_at, st->finished_at)));
      if (st->verdict == SIGHT_RUN_VERDICT_PASS || st->verdict == SIGHT_RUN_VERDICT_RUNNING)
        {
          g_string_append (out, "/>\n");
          continue;
        }
      g_string_append (out, ">\n");
      message = st->code ? g_strdup_printf ("%s: %s", st->code, why) : g_strdup (why);
      body = sight_report_escape_xml (st->explanation ? st->explanation : why);
      if (st->verdict == SIGHT_RUN_VERDICT_SKIPPED)
        g_string_append (out, "      <skipped/>\n");
      else
        {
          const char *el = st->verdict == SIGHT_RUN_VERDICT_FAIL ? "failure" : "error";
          g_string_append_printf (out, "      <%s", el);
          xml_attr (out, "message", message);
          xml_attr (out, "type", st->code ? st->code : sight_run_verdict_to_string (st->verdict));
          g_string_append_printf (out, ">%s</%s>\n", body, el);
        }
      g_string_append (out, "    </testcase>\n");
    }
  if (data->steps->len == 0 && run->verdict != SIGHT_RUN_VERDICT_PASS)
    {
      g_string_append (out, "    <testcase");
      xml_attr (out, "classname", suite_name);
      xml_attr (out, "name", "run");
      g_string_append (out, ">\n      <error");
      xml_attr (out, "message", run->explanation ? run->explanation : sight_run_verdict_to_string (run->verdict));
      xml_attr (out, "type", run->code ? run->code : sight_run_verdict_to_string (run->verdict));
      g_string_append (out, "/>\n    </testcase>\n");
    }
  {
    g_autoptr(GString) text = g_string_new (NULL);
    g_autofree char *summary = sight_report_text (data);
    g_autofree char *escaped = NULL;

    g_string_append (text, summary);
    _sight_report_append_attachments (text, data);
    escaped = sight_report_escape_xml (text->str);
    g_string_append_printf (out, "    <system-out>%s</system-out>\n", escaped);
  }
  g_string_append (out, "  </testsuite>\n</testsuites>\n");
  return g_string_free_to_bytes (out);
}

static void
junit_case_failure (GString    *out,
                    const char *element,
                    JsonObject *attempt)
{
  const char *code = _sight_report_member_string (attempt, "code");
  const char *step = _sight_report_member_string (attempt, "failedStep");
  const char *why = _sight_report_member_string (attempt, "explanation");
  JsonObject *report = _sight_report_member_object (attempt, "report");
  g_autofree char *message = g_strdup_printf ("%s%s%s%s%s", step ? step : "", step ? ": " : "",
                                              code ? code : "", code && why ? ": " : "",
                                              why ? why : "");
  g_autofree char *body = sight_report_escape_xml (
      _sight_report_member_string (report, "text") ? _sight_report_member_string (report, "text")
                                                   : message);

  g_string_append_printf (out, "      <%s", element);
  xml_attr (out, "message", message);
  xml_attr (out, "type", code ? code : "ERROR");
  g_string_append_printf (out, ">%s</%s>\n", body, element);
}

GBytes *
_sight_report_render_suite_junit (JsonObject *suite)
{
  GString *out = g_string_new ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  JsonArray *tests = _sight_report_member_array (suite, "tests");
  JsonObject *counts = _sight_report_member_object (suite, "counts");
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_autofree char *time_s = g_strdup (g_ascii_formatd (
      buf, sizeof buf, "%.3f", _sight_report_member_int (suite, "ms", 0) / 1000.0));
  guint n = tests ? json_array_get_length (tests) : 0;
  gint64           failures = _sight_report_member_int (counts, "failed", 0),
         errors = _sight_report_member_int (counts, "errors", 0);

  g_string_append (out, "<testsuites");
  xml_attr (out, "name", "sightline run");
  g_string_append_printf (out, " tests=\"%u\" failures=\"%" G_GINT64_FORMAT "\" errors=\"%"
                          G_GINT64_FORMAT "\" skipped=\"0\" time=\"%s\">\n",
                          n, failures, errors, time_s);
  g_string_append (out, "  <testsuite");
  xml_attr (out, "name", "sightline run");
  g_string_append_printf (out, " tests=\"%u\" failures=\"%" G_GINT64_FORMAT "\" errors=\"%"
                          G_GINT64_FORMAT "\" skipped=\"0\" time=\"%s\"", n, failures, errors,
                          time_s);
  if (_sight_report_member_string (suite, "startedAt"))
    xml_attr (out, "timestamp", _sight_report_member_string (suite, "startedAt"));
  g_string_append (out, ">\n");
  for (guint i = 0; i < n; i++)
    {
      JsonObject *t = json_array_get_object_element (tests, i);
      JsonArray *attempts = _sight_report_member_array (t, "attempts");
      guint n_attempts = attempts ? json_array_get_length (attempts) : 0;
      const char *v = _sight_report_member_string (t, "verdict");
      JsonObject *last = n_attempts ? json_array_get_object_element (attempts, n_attempts - 1) : NULL;

      g_string_append (out, "    <testcase");
      xml_attr (out, "classname",
                _sight_report_member_string (t, "file") ? _sight_report_member_string (t, "file")
                                                        : "");
      xml_attr (out, "name",
                _sight_report_member_string (t, "name") ? _sight_report_member_string (t, "name")
                                                        : "");
      g_string_append_printf (out, " time=\"%s\">\n",
                              g_ascii_formatd (buf, sizeof buf, "%.3f",
                                               _sight_report_member_int (t, "ms", 0) / 1000.0));
      if (g_strcmp0 (v, "fail") == 0 || g_strcmp0 (v, "error") == 0)
        {
          if (last != NULL)
            junit_case_failure (out, g_strcmp0 (v, "fail") == 0 ? "failure" : "error", last);
          else
            g_string_append (out, "      <error message=\"The test did not run\" type=\"ERROR\"/>\n");
        }
      /* Earlier attempts, as Surefire writes reruns: a flaky test's failed
       * attempts are flakyFailure, a failed test's are rerunFailure. */
      for (guint a = 0; a + 1 < n_attempts; a++)
        junit_case_failure (out, g_strcmp0 (v, "flaky") == 0 ? "flakyFailure" : "rerunFailure",
                            json_array_get_object_element (attempts, a));
      if (last != NULL)
        {
          g_autofree char *text = NULL;
          g_autofree char *escaped = NULL;
          JsonObject *report = _sight_report_member_object (last, "report");

          text = g_strdup_printf ("%s%s%s", g_strcmp0 (v, "flaky") == 0 ? "Flaky: passed on a retry.\n" : "",
                                  _sight_report_member_string (last, "runId") ? "Run " : "",
                                  _sight_report_member_string (last, "runId") ? _sight_report_member_string (last, "runId") : "");
          if (report && _sight_report_member_string (report, "text"))
            {
              g_autofree char *joined = g_strconcat (text, "\n", _sight_report_member_string (report, "text"), NULL);
              g_free (text);
              text = g_steal_pointer (&joined);
            }
          if (report != NULL)
            {
              g_autoptr(SightRunData) data = _sight_report_run_data_from_report (report);
              g_autoptr(GString) joined = g_string_new (text);

              _sight_report_append_attachments (joined, data);
              g_free (text);
              text = g_string_free (g_steal_pointer (&joined), FALSE);
            }
          escaped = sight_report_escape_xml (text);
          g_string_append_printf (out, "      <system-out>%s</system-out>\n", escaped);
        }
      g_string_append (out, "    </testcase>\n");
    }
  g_string_append (out, "  </testsuite>\n</testsuites>\n");
  return g_string_free_to_bytes (out);
}
