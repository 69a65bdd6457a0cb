/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-report"

#include "config.h"

#include "sight-report.h"

#include <math.h>
#include <string.h>

#include "sight-report-private.h"

/* -------------------------------------------------------------------- text */

#define FAILED_STEPS_IN_TEXT 5

/* How many broken links the text names before "and N more". */
#define BROKEN_LINKS_IN_TEXT 5

static void
append_broken_link (GString              *s,
                    const SightLogRecord *l)
{
  g_autofree char *url = _sight_report_one_line (l->url ? l->url : "", 2048);
  g_autofree char *page = _sight_report_one_line (l->text ? l->text : "", 2048);

  if (l->status != 0)
    g_string_append_printf (s, "%s (HTTP %u, found on %s)", url, l->status, page);
  else
    g_string_append_printf (s, "%s (no answer, found on %s)", url, page);
}

static char *
findings_sentence (const SightRunData *data)
{
  GString *s = g_string_new (NULL);
  guint n_console, n_failed, n_broken = 0;

  _sight_report_count_findings (data, &n_console, &n_failed);
  if (n_console == 0 && n_failed == 0)
    g_string_append (s, "No console errors or failed network calls.");
  else
    g_string_append_printf (s, "%u console error%s and %u failed network call%s.",
                            n_console, n_console == 1 ? "" : "s",
                            n_failed, n_failed == 1 ? "" : "s");
  for (guint i = 0; data->logs && i < data->logs->len; i++)
    {
      const SightLogRecord *l = data->logs->pdata[i];

      if (!_sight_report_is_broken_link (l))
        continue;
      if (n_broken < BROKEN_LINKS_IN_TEXT)
        {
          g_string_append (s, n_broken == 0 ? " Broken links: " : ", ");
          append_broken_link (s, l);
        }
      n_broken++;
    }
  if (n_broken > BROKEN_LINKS_IN_TEXT)
    g_string_append_printf (s, " and %u more", n_broken - BROKEN_LINKS_IN_TEXT);
  if (n_broken > 0)
    g_string_append_c (s, '.');
  return g_string_free (s, FALSE);
}

char *
sight_report_summary (const SightRunData *data)
{
  const SightRunRecord *run = data->run;
  GString *s = g_string_new (NULL);
  g_autofree char *findings = findings_sentence (data);
  g_autofree char *url = _sight_report_one_line (run->url ? run->url : "", 2048);
  g_autofree char *name = _sight_report_one_line (run->name ? run->name : "", 2048);
  guint secs = (guint) round (_sight_report_seconds_between (run->started_at,
                                                            _sight_report_run_end (run)));
  guint n_steps = data->steps ? data->steps->len : 0;
  guint passed = 0;
  const SightStepRecord *first_failed = NULL;
  gboolean unstored = sight_run_record_is_unstored (run);

  for (guint i = 0; i < n_steps; i++)
    {
      const SightStepRecord *st = data->steps->pdata[i];
      if (st->verdict == SIGHT_RUN_VERDICT_PASS)
        passed++;
      else if (first_failed == NULL && _sight_report_step_failed (st))
        first_failed = st;
    }

  if (g_strcmp0 (run->kind, "task") == 0)
    {
      const char *goal = *name ? name : url;

      if (run->verdict == SIGHT_RUN_VERDICT_RUNNING)
        g_string_append_printf (s, "Task \"%s\" is still running: call get_report with the id %s "
                                "again until its verdict is not running.", goal, run->id);
      else
        {
          g_string_append_printf (s, "Task \"%s\" %s in %u s: %s %u agent step%s, %s.", goal,
                                  run->verdict == SIGHT_RUN_VERDICT_PASS ? "finished" : "stopped",
                                  secs,
                                  run->verdict == SIGHT_RUN_VERDICT_PASS
                                    ? "the agent says it is done."
                                    : "the agent did not finish.",
                                  n_steps, n_steps == 1 ? "" : "s",
                                  first_failed ? "not all ok" : "all ok");
          if (run->answer && *run->answer)
            {
              g_autofree char *answer = _sight_report_one_line (run->answer, 2000);
              g_string_append_printf (s, " Answer: %s", answer);
            }
          g_string_append_printf (s, " %s", findings);
          g_string_append (s, " Note: no assertions were checked, so `ok` only means the agent "
                              "says it is done.");
        }
      return g_string_free (s, FALSE);
    }

  if (g_strcmp0 (run->kind, "smoke") == 0)
    g_string_append_printf (s, "Smoke test of %s", url);
  else if (*name)
    g_string_append_printf (s, "Test \"%s\"", name);
  else
    g_string_append_printf (s, "Test of %s", url);

  if (run->verdict == SIGHT_RUN_VERDICT_RUNNING)
    {
      g_string_append_printf (s, " is still running: call get_report with the id %s again "
                                 "until its verdict is not running.", run->id);
      return g_string_free (s, FALSE);
    }

  g_string_append_printf (s, " %s in %u s: %u of %u step%s passed.",
                          _sight_report_verdict_word (run->verdict), secs, passed, n_steps,
                          n_steps == 1 ? "" : "s");
  /* What was stored is not what happened: said first, whatever the steps
   * say (a late write failed after a step did). */
  if (unstored)
    {
      g_autofree char *why = _sight_report_one_line (run->explanation, 500);

      g_string_append_printf (s, " %s", why);
      if (!g_str_has_suffix (why, "."))
        g_string_append_c (s, '.');
    }
  if (first_failed)
    {
      g_autofree char *why = _sight_report_step_failure_text (first_failed);
      g_autofree char *label
          = _sight_report_one_line (_sight_report_step_label (first_failed), 200);
      g_string_append_printf (s, " Step %u (%s) failed: %s", first_failed->index + 1, label, why);
      if (!g_str_has_suffix (why, "."))
        g_string_append_c (s, '.');
    }
  else if (!unstored && run->verdict != SIGHT_RUN_VERDICT_PASS && run->explanation)
    {
      g_autofree char *why = _sight_report_one_line (run->explanation, 500);
      g_string_append_printf (s, " %s", why);
      if (!g_str_has_suffix (why, "."))
        g_string_append_c (s, '.');
    }
  g_string_append_printf (s, " %s", findings);
  return g_string_free (s, FALSE);
}

char *
sight_report_text (const SightRunData *data)
{
  GString *s = g_string_new (NULL);
  g_autofree char *summary = sight_report_summary (data);
  guint shown = 0;

  g_string_append (s, summary);
  for (guint i = 0; data->steps && i < data->steps->len; i++)
    {
      const SightStepRecord *st = data->steps->pdata[i];
      g_autofree char *why = NULL;
      g_autofree char *label = NULL;

      if (!_sight_report_step_failed (st))
        continue;
      if (shown == FAILED_STEPS_IN_TEXT)
        {
          g_string_append (s, "\n- …");
          break;
        }
      if (shown++ == 0)
        g_string_append (s, "\nFailed steps:");
      why = _sight_report_step_failure_text (st);
      label = _sight_report_one_line (_sight_report_step_label (st), 200);
      g_string_append_printf (s, "\n- Step %u (%s): %s", st->index + 1, label, why);
      if (sight_run_data_get_step_evidence (data, st->index) != NULL)
        {
          g_autofree char *path = _sight_report_one_line (sight_run_data_get_step_evidence (data,
                                                                                      st->index),
                                                          4096);

          g_string_append_printf (s, " (screenshot: %s)", path);
        }
    }
  if (data->run->usage.model_calls > 0)
    {
      const SightUsage *usage = &data->run->usage;
      g_autofree char *cost = sight_usage_cost_text (usage);

      g_string_append_printf (s, "\nModel usage: %" G_GUINT64_FORMAT " call%s, %" G_GUINT64_FORMAT
                              " tokens in and %" G_GUINT64_FORMAT " out (%s), %s.",
                              usage->model_calls, usage->model_calls == 1 ? "" : "s",
                              usage->input_tokens, usage->output_tokens,
                              usage->token_accounting == SIGHT_TOKEN_ACCOUNTING_PROVIDER
                              ? "the provider's counts" : "an upper bound",
                              cost);
    }
  g_string_append (s, "\nThe whole report is in structuredContent.");
  return g_string_free (s, FALSE);
}
