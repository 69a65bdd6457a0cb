/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-report"

#include "config.h"

#include "sight-report.h"

#include <gdk-pixbuf/gdk-pixbuf.h>
#include <math.h>
#include <string.h>

#include "sight-error.h"
#include "sight-json.h"
#include "sight-secrets.h"

/* Screenshots in the report: a long side of at most this many pixels, and
 * re-encoded as JPEG when larger than SHOT_MAX_BYTES, so a 50-step run stays
 * small enough to mail. */
#define SHOT_MAX_SIDE 800
#define SHOT_MAX_BYTES (40 * 1024)
#define SHOT_QUALITY "55"
#define TREE_MAX_BYTES (64 * 1024)
#define FAILED_STEPS_IN_TEXT 5

gboolean
sight_report_format_from_string (const char        *name,
                                 SightReportFormat *out)
{
  static const char * const names[] = { "html", "json", "junit" };

  if (name == NULL)
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (g_ascii_strcasecmp (name, names[i]) == 0)
      {
        *out = i;
        return TRUE;
      }
  return FALSE;
}

/* ---------------------------------------------------------------- escaping */

/* Valid UTF-8 without NUL and control characters (tab and newline stay);
 * the line and paragraph separators become newlines. Secrets the process
 * knows are redacted once more. */
static char *
clean_text (const char *text)
{
  g_autofree char *valid = NULL;
  g_autofree char *redacted = NULL;
  GString *out;

  if (text == NULL)
    return g_strdup ("");
  redacted = sight_secrets_redact (text);
  valid = g_utf8_make_valid (redacted, -1);
  out = g_string_sized_new (strlen (valid));
  for (const char *p = valid; *p; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if (c == 0x2028 || c == 0x2029)
        g_string_append_c (out, '\n');
      else if ((c < 0x20 && c != '\t' && c != '\n') || (c >= 0x7f && c < 0xa0) ||
               c == 0xfffe || c == 0xffff)
        continue;
      else
        g_string_append_unichar (out, c);
    }
  return g_string_free (out, FALSE);
}

static void
append_escaped (GString    *out,
                const char *text)
{
  g_autofree char *clean = clean_text (text);

  for (const char *p = clean; *p; p++)
    switch (*p)
      {
      case '&': g_string_append (out, "&amp;"); break;
      case '<': g_string_append (out, "&lt;"); break;
      case '>': g_string_append (out, "&gt;"); break;
      case '"': g_string_append (out, "&quot;"); break;
      case '\'': g_string_append (out, "&#39;"); break;
      default: g_string_append_c (out, *p);
      }
}

char *
sight_report_escape_html (const char *text)
{
  GString *out = g_string_new (NULL);

  append_escaped (out, text);
  return g_string_free (out, FALSE);
}

char *
sight_report_escape_xml (const char *text)
{
  /* The same five entities are right for XML 1.0, and clean_text drops the
   * characters XML forbids. */
  return sight_report_escape_html (text);
}

char *
sight_report_safe_url (const char *url)
{
  const char *scheme;

  if (url == NULL)
    return NULL;
  /* Parsed as a browser would: whitespace and controls inside the scheme
   * (java\tscript:) must not sneak past the check. */
  for (const char *p = url; *p; p++)
    if ((guchar) *p <= 0x20 || *p == 0x7f)
      return NULL;
  scheme = g_uri_peek_scheme (url);
  if (scheme == NULL)
    return NULL;
  if (g_str_equal (scheme, "http") || g_str_equal (scheme, "https"))
    {
      if (!g_uri_is_valid (url, G_URI_FLAGS_PARSE_RELAXED, NULL))
        return NULL;
      return sight_report_escape_html (url);
    }
  if (g_str_equal (scheme, "data") &&
      (g_str_has_prefix (url + 5, "image/png;base64,") ||
       g_str_has_prefix (url + 5, "image/jpeg;base64,") ||
       g_str_has_prefix (url + 5, "image/webp;base64,") ||
       g_str_has_prefix (url + 5, "image/gif;base64,")))
    return sight_report_escape_html (url);
  return NULL;
}

/* ------------------------------------------------------------------ pieces */

static double
seconds_between (gint64 start,
                 gint64 end)
{
  if (start <= 0 || end < start)
    return 0;
  return (end - start) / 1e6;
}

static gint64
run_end (const SightRunRecord *run)
{
  return run->finished_at ? run->finished_at : g_get_real_time ();
}

static char *
iso_time (gint64 t)
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

static const char *
verdict_word (SightRunVerdict verdict)
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
static const char *
report_verdict (SightRunVerdict verdict)
{
  switch (verdict)
    {
    case SIGHT_RUN_VERDICT_PASS: return "pass";
    case SIGHT_RUN_VERDICT_FAIL: return "fail";
    case SIGHT_RUN_VERDICT_RUNNING: return "running";
    default: return "error";
    }
}

static gboolean
is_console_error (const SightLogRecord *l)
{
  return g_strcmp0 (l->kind, "page_error") == 0 ||
         (g_strcmp0 (l->kind, "console") == 0 && g_strcmp0 (l->level, "error") == 0);
}

static gboolean
is_failed_request (const SightLogRecord *l)
{
  /* "blocked": a load the origin guard refused (navigation or subresource) */
  return g_strcmp0 (l->kind, "request_failed") == 0 || g_strcmp0 (l->kind, "blocked") == 0;
}

/* A link of a page that did not work (a smoke test's): its address in url,
 * its HTTP status (0 when nothing answered), the page it is on in text. */
static gboolean
is_broken_link (const SightLogRecord *l)
{
  return g_strcmp0 (l->kind, "broken_link") == 0;
}

static char *one_line (const char *text,
                       gsize       max_bytes);

/* How many broken links the text names before "and N more". */
#define BROKEN_LINKS_IN_TEXT 5

static void
append_broken_link (GString              *s,
                    const SightLogRecord *l)
{
  g_autofree char *url = one_line (l->url ? l->url : "", 2048);
  g_autofree char *page = one_line (l->text ? l->text : "", 2048);

  if (l->status != 0)
    g_string_append_printf (s, "%s (HTTP %u, found on %s)", url, l->status, page);
  else
    g_string_append_printf (s, "%s (no answer, found on %s)", url, page);
}

static void
count_findings (const SightRunData *data,
                guint              *n_console,
                guint              *n_failed)
{
  *n_console = *n_failed = 0;
  for (guint i = 0; data->logs && i < data->logs->len; i++)
    {
      const SightLogRecord *l = data->logs->pdata[i];
      if (is_console_error (l))
        (*n_console)++;
      else if (is_failed_request (l))
        (*n_failed)++;
    }
}

static char *
findings_sentence (const SightRunData *data)
{
  GString *s = g_string_new (NULL);
  guint n_console, n_failed, n_broken = 0;

  count_findings (data, &n_console, &n_failed);
  if (n_console == 0 && n_failed == 0)
    g_string_append (s, "No console errors or failed network calls.");
  else
    g_string_append_printf (s, "%u console error%s and %u failed network call%s.",
                            n_console, n_console == 1 ? "" : "s",
                            n_failed, n_failed == 1 ? "" : "s");
  for (guint i = 0; data->logs && i < data->logs->len; i++)
    {
      const SightLogRecord *l = data->logs->pdata[i];

      if (!is_broken_link (l))
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

static const char *
step_label (const SightStepRecord *s)
{
  return s->label ? s->label : s->kind ? s->kind : "step";
}

static gboolean
step_failed (const SightStepRecord *s)
{
  return s->verdict == SIGHT_RUN_VERDICT_FAIL || s->verdict == SIGHT_RUN_VERDICT_ERROR ||
         s->verdict == SIGHT_RUN_VERDICT_INTERRUPTED;
}

static char *
one_line (const char *text,
          gsize       max_bytes)
{
  g_autofree char *clean = clean_text (text);
  g_autofree char *cut = NULL;

  g_strdelimit (clean, "\n\t", ' ');
  cut = sight_text_sanitize (g_strstrip (clean), max_bytes);
  return g_steal_pointer (&cut);
}

static char *
step_failure_text (const SightStepRecord *s)
{
  if (s->explanation && *s->explanation)
    return one_line (s->explanation, 500);
  if (s->code)
    return g_strdup (s->code);
  return g_strdup (sight_run_verdict_to_string (s->verdict));
}

char *
sight_report_summary (const SightRunData *data)
{
  const SightRunRecord *run = data->run;
  GString *s = g_string_new (NULL);
  g_autofree char *findings = findings_sentence (data);
  g_autofree char *url = one_line (run->url ? run->url : "", 2048);
  g_autofree char *name = one_line (run->name ? run->name : "", 2048);
  guint secs = (guint) round (seconds_between (run->started_at, run_end (run)));
  guint n_steps = data->steps ? data->steps->len : 0;
  guint passed = 0;
  const SightStepRecord *first_failed = NULL;

  for (guint i = 0; i < n_steps; i++)
    {
      const SightStepRecord *st = data->steps->pdata[i];
      if (st->verdict == SIGHT_RUN_VERDICT_PASS)
        passed++;
      else if (first_failed == NULL && step_failed (st))
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
              g_autofree char *answer = one_line (run->answer, 2000);
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

  g_string_append_printf (s, " %s in %u s: %u of %u step%s passed.", verdict_word (run->verdict),
                          secs, passed, n_steps, n_steps == 1 ? "" : "s");
  if (first_failed)
    {
      g_autofree char *why = step_failure_text (first_failed);
      g_autofree char *label = one_line (step_label (first_failed), 200);
      g_string_append_printf (s, " Step %u (%s) failed: %s", first_failed->index + 1, label, why);
      if (!g_str_has_suffix (why, "."))
        g_string_append_c (s, '.');
    }
  else if (run->verdict != SIGHT_RUN_VERDICT_PASS && run->explanation)
    {
      g_autofree char *why = one_line (run->explanation, 500);
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

      if (!step_failed (st))
        continue;
      if (shown == FAILED_STEPS_IN_TEXT)
        {
          g_string_append (s, "\n- …");
          break;
        }
      if (shown++ == 0)
        g_string_append (s, "\nFailed steps:");
      why = step_failure_text (st);
      label = one_line (step_label (st), 200);
      g_string_append_printf (s, "\n- Step %u (%s): %s", st->index + 1, label, why);
    }
  g_string_append (s, "\nThe whole report is in structuredContent.");
  return g_string_free (s, FALSE);
}

/* -------------------------------------------------------------------- JSON */

static void
add_string (JsonBuilder *b,
            const char  *member,
            const char  *value)
{
  g_autofree char *clean = NULL;

  if (value == NULL)
    return;
  clean = clean_text (value);
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
  g_autofree char *iso = iso_time (t);

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
  gint64 end = run_end (run);
  guint n_console, n_failed;

  count_findings (data, &n_console, &n_failed);

  json_builder_begin_object (b);
  add_string (b, "id", run->id);
  add_string (b, "kind", run->kind);
  json_builder_set_member_name (b, "verdict");
  json_builder_add_string_value (b, report_verdict (run->verdict));
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
  json_builder_add_int_value (b, (gint64) (seconds_between (run->started_at, end) * 1000));

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
  json_builder_add_int_value (b, run->input_tokens);
  json_builder_set_member_name (b, "outputTokens");
  json_builder_add_int_value (b, run->output_tokens);
  if (run->cost_micros >= 0)
    {
      json_builder_set_member_name (b, "costMicros");
      json_builder_add_int_value (b, run->cost_micros);
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
      add_string (b, "label", step_label (st));
      add_string (b, "instruction", st->instruction);
      json_builder_set_member_name (b, "ok");
      json_builder_add_boolean_value (b, st->verdict == SIGHT_RUN_VERDICT_PASS);
      json_builder_set_member_name (b, "verdict");
      json_builder_add_string_value (b, sight_run_verdict_to_string (st->verdict));
      add_string (b, "code", st->code);
      if (step_failed (st) || st->explanation)
        add_string (b, "error", step_failed (st) ? st->explanation : NULL);
      add_string (b, "explanation", st->explanation);
      json_builder_set_member_name (b, "ms");
      json_builder_add_int_value (b, (gint64) (seconds_between (st->started_at, st->finished_at) * 1000));
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
      if (!is_console_error (l))
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
      if (!is_failed_request (l))
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
      if (!is_broken_link (l))
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
      g_autofree char *note = clean_text (run->notes[i]);
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

/* ------------------------------------------------------------------- JUnit */

static void
xml_attr (GString    *out,
          const char *name,
          const char *value)
{
  g_autofree char *escaped = sight_report_escape_xml (value);

  g_string_append_printf (out, " %s=\"%s\"", name, escaped);
}

static GBytes *
render_junit (const SightRunData *data)
{
  const SightRunRecord *run = data->run;
  GString *out = g_string_new ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  g_autofree char *stamp = iso_time (run->started_at);
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
  time_s = g_strdup (g_ascii_formatd (buf, sizeof buf, "%.3f",
                                      seconds_between (run->started_at, run_end (run))));

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
  xml_attr (out, "value", report_verdict (run->verdict));
  g_string_append (out, "/>\n");
  if (run->url)
    {
      g_string_append (out, "      <property");
      xml_attr (out, "name", "url");
      xml_attr (out, "value", run->url);
      g_string_append (out, "/>\n");
    }
  g_string_append (out, "    </properties>\n");

  for (guint i = 0; i < data->steps->len; i++)
    {
      const SightStepRecord *st = data->steps->pdata[i];
      g_autofree char *name = g_strdup_printf ("Step %u (%s): %s", st->index + 1, step_label (st),
                                               st->instruction ? st->instruction : "");
      g_autofree char *why = step_failure_text (st);
      g_autofree char *message = NULL;
      g_autofree char *body = NULL;

      g_string_append (out, "    <testcase");
      xml_attr (out, "classname", suite_name);
      xml_attr (out, "name", name);
      g_string_append_printf (out, " time=\"%s\"",
                              g_ascii_formatd (buf, sizeof buf, "%.3f",
                                               seconds_between (st->started_at, st->finished_at)));
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
    g_autofree char *text = sight_report_text (data);
    g_autofree char *escaped = sight_report_escape_xml (text);
    g_string_append_printf (out, "    <system-out>%s</system-out>\n", escaped);
  }
  g_string_append (out, "  </testsuite>\n</testsuites>\n");
  return g_string_free_to_bytes (out);
}

/* -------------------------------------------------------------------- HTML */

typedef struct {
  char  *css_class;   /* "i3" */
  int    width;
  int    height;
} ShotInfo;

static void
shot_info_free (ShotInfo *info)
{
  g_free (info->css_class);
  g_free (info);
}

static gboolean
mime_is_image (const char *mime)
{
  return g_strcmp0 (mime, "image/png") == 0 || g_strcmp0 (mime, "image/jpeg") == 0 ||
         g_strcmp0 (mime, "image/webp") == 0 || g_strcmp0 (mime, "image/gif") == 0;
}

static void
size_prepared_cb (GdkPixbufLoader *loader,
                  int              width,
                  int              height,
                  gpointer         user_data)
{
  int long_side = MAX (width, height);

  if (long_side > SHOT_MAX_SIDE)
    gdk_pixbuf_loader_set_size (loader,
                                MAX (1, (int) round ((double) width * SHOT_MAX_SIDE / long_side)),
                                MAX (1, (int) round ((double) height * SHOT_MAX_SIDE / long_side)));
}

/* Resamples and re-encodes a screenshot when it is too large for a report. */
static GBytes *
prepare_shot (const SightObservationRecord *o,
              const char                  **out_mime,
              int                          *out_width,
              int                          *out_height)
{
  g_autoptr(GdkPixbufLoader) loader = NULL;
  g_autoptr(GdkPixbuf) scaled = NULL;
  g_autoptr(GdkPixbuf) flat = NULL;
  GdkPixbuf *pixbuf;
  g_autofree char *buffer = NULL;
  gsize size, len;
  const guchar *bytes = g_bytes_get_data (o->screenshot, &size);
  int w, h, long_side;

  *out_mime = o->screenshot_mime;
  *out_width = o->width;
  *out_height = o->height;
  if (size <= SHOT_MAX_BYTES && o->width > 0 && o->height > 0 &&
      MAX (o->width, o->height) <= SHOT_MAX_SIDE && mime_is_image (o->screenshot_mime) &&
      g_strcmp0 (o->screenshot_mime, "image/png") != 0)
    return g_bytes_ref (o->screenshot);

  loader = gdk_pixbuf_loader_new ();
  /* JPEG decodes straight to the smaller size, much faster than decoding
   * then scaling. */
  g_signal_connect (loader, "size-prepared", G_CALLBACK (size_prepared_cb), NULL);
  if (!gdk_pixbuf_loader_write (loader, bytes, size, NULL) ||
      !gdk_pixbuf_loader_close (loader, NULL) ||
      (pixbuf = gdk_pixbuf_loader_get_pixbuf (loader)) == NULL)
    return mime_is_image (o->screenshot_mime) ? g_bytes_ref (o->screenshot) : NULL;

  w = gdk_pixbuf_get_width (pixbuf);
  h = gdk_pixbuf_get_height (pixbuf);
  long_side = MAX (w, h);
  if (long_side > SHOT_MAX_SIDE)
    {
      int nw = MAX (1, (int) round ((double) w * SHOT_MAX_SIDE / long_side));
      int nh = MAX (1, (int) round ((double) h * SHOT_MAX_SIDE / long_side));
      scaled = gdk_pixbuf_scale_simple (pixbuf, nw, nh, GDK_INTERP_BILINEAR);
      pixbuf = scaled;
    }
  if (gdk_pixbuf_get_has_alpha (pixbuf))
    {
      flat = gdk_pixbuf_composite_color_simple (pixbuf, gdk_pixbuf_get_width (pixbuf),
                                                gdk_pixbuf_get_height (pixbuf),
                                                GDK_INTERP_NEAREST, 255, 8, 0xffffff, 0xffffff);
      pixbuf = flat;
    }
  if (!gdk_pixbuf_save_to_buffer (pixbuf, &buffer, &len, "jpeg", NULL,
                                  "quality", SHOT_QUALITY, NULL))
    return mime_is_image (o->screenshot_mime) ? g_bytes_ref (o->screenshot) : NULL;
  *out_mime = "image/jpeg";
  /* The box overlay works in fractions of the image, so the original size
   * is kept for it. */
  *out_width = o->width > 0 ? o->width : w;
  *out_height = o->height > 0 ? o->height : h;
  return g_bytes_new_take (g_steal_pointer (&buffer), len);
}

static const char base_css[] =
  ":root{color-scheme:light dark;--bg:#fff;--fg:#1d1d1f;--muted:#5e5e66;--line:#d8d8de;"
  "--card:#f6f6f8;--pass:#1a7f37;--fail:#c4262e;--err:#9a6700;--run:#1f6feb;--box:#e01b24}"
  "@media (prefers-color-scheme:dark){:root{--bg:#1b1b1f;--fg:#ececf1;--muted:#a9a9b3;"
  "--line:#3a3a42;--card:#25252b;--pass:#4ac26b;--fail:#ff6b6b;--err:#e3b341;--run:#6ea8fe;"
  "--box:#ff5c5c}}"
  "*{box-sizing:border-box}"
  "body{margin:0 auto;max-width:1100px;padding:24px;background:var(--bg);color:var(--fg);"
  "font:15px/1.5 system-ui,-apple-system,'Cantarell','Segoe UI',sans-serif}"
  "h1{font-size:1.5em;margin:0 0 .3em}h2{font-size:1.15em;margin:1.6em 0 .5em}"
  "h3{font-size:1em;margin:0}"
  "a{color:var(--run)}"
  ".badge{display:inline-block;padding:.1em .6em;border-radius:1em;font-weight:700;"
  "color:#fff;font-size:.85em;letter-spacing:.04em;vertical-align:middle}"
  ".v-pass{background:var(--pass)}.v-fail{background:var(--fail)}"
  ".v-error,.v-interrupted{background:var(--err)}.v-running{background:var(--run)}"
  ".v-skipped{background:var(--muted)}"
  ".summary{font-size:1.05em;margin:.6em 0}"
  ".meta{color:var(--muted);font-size:.9em;overflow-wrap:anywhere}"
  ".totals{display:grid;grid-template-columns:repeat(auto-fit,minmax(130px,1fr));gap:8px;"
  "margin:1em 0;padding:0;list-style:none}"
  ".totals li{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:8px 12px}"
  ".totals b{display:block;font-size:1.25em}"
  ".totals span{color:var(--muted);font-size:.85em}"
  ".film{display:flex;gap:6px;overflow-x:auto;padding:4px 0 8px}"
  ".film a{flex:0 0 112px;text-decoration:none;color:var(--fg);font-size:.8em;text-align:center}"
  ".film .thumb{width:112px;aspect-ratio:16/10;background-size:cover;background-position:top left;"
  "border:2px solid var(--line);border-radius:4px;background-color:var(--card)}"
  ".film .f-fail .thumb,.film .f-error .thumb,.film .f-interrupted .thumb{border-color:var(--fail)}"
  ".film .f-pass .thumb{border-color:var(--pass)}"
  ".step{border:1px solid var(--line);border-left:6px solid var(--muted);border-radius:8px;"
  "padding:12px 16px;margin:12px 0;break-inside:avoid-page;background:var(--bg)}"
  ".step.s-pass{border-left-color:var(--pass)}.step.s-fail{border-left-color:var(--fail)}"
  ".step.s-error,.step.s-interrupted{border-left-color:var(--err)}"
  ".step.s-running{border-left-color:var(--run)}"
  ".instr{font-family:ui-monospace,'DejaVu Sans Mono',monospace;background:var(--card);"
  "padding:2px 6px;border-radius:4px;overflow-wrap:anywhere;white-space:pre-wrap}"
  ".why{margin:.5em 0;overflow-wrap:anywhere;white-space:pre-wrap}"
  ".code{font-family:ui-monospace,monospace;font-weight:700;color:var(--fail)}"
  ".budget{display:flex;flex-wrap:wrap;gap:4px 18px;font-size:.85em;color:var(--muted);margin:.4em 0}"
  ".budget meter{width:90px;vertical-align:middle}"
  ".shots{display:grid;grid-template-columns:1fr 1fr;gap:12px;margin:.6em 0}"
  "figure{margin:0}figcaption{font-size:.85em;color:var(--muted)}"
  ".shot{position:relative;width:100%;background-size:100% 100%;border:1px solid var(--line);"
  "-webkit-print-color-adjust:exact;print-color-adjust:exact}"
  ".box{position:absolute;border:3px solid var(--box);border-radius:3px;"
  "box-shadow:0 0 0 2px rgba(255,255,255,.7)}"
  "details{margin:.4em 0}summary{cursor:pointer;color:var(--run)}"
  "pre{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:8px;"
  "overflow:auto;max-height:420px;font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere}"
  "table{border-collapse:collapse;width:100%;font-size:.9em}"
  "td,th{border-bottom:1px solid var(--line);padding:4px 6px;text-align:left;vertical-align:top;"
  "overflow-wrap:anywhere}"
  ".ok{color:var(--pass)}.bad{color:var(--fail)}"
  "footer{margin-top:2em;color:var(--muted);font-size:.8em}"
  ".tests td.n,.tests th{white-space:nowrap}.test{margin-top:2.4em}.v-flaky{background:#8250df}"
  "@media (max-width:700px){.shots{grid-template-columns:1fr}}"
  "@media print{body{max-width:none;padding:0;font-size:11pt}.film{display:none}"
  "pre{max-height:none}a{color:inherit;text-decoration:none}"
  ".step{break-inside:avoid}summary{color:inherit}}";

typedef struct {
  const SightRunData *data;
  GString            *css;     /* rules for images and boxes */
  GString            *body;
  GHashTable         *shots;   /* GBytes screenshot -> ShotInfo */
  guint               n_rules;
  const char         *prefix;  /* of anchors, so several runs share a page */
  GHashTable         *shot_steps;  /* indices + 1 of the steps whose screenshots
                                    * are embedded; NULL: every step's */
} HtmlContext;

/* A report stays small enough to mail however long the run: it embeds the
 * screenshots (before and after) of at most this many steps of a run, failed
 * steps and the ones before them first, then the first and the last ones.
 * Every screenshot stays in the store. */
#define REPORT_MAX_SHOT_STEPS 50

static gboolean
is_failure (SightRunVerdict verdict)
{
  return verdict == SIGHT_RUN_VERDICT_FAIL || verdict == SIGHT_RUN_VERDICT_ERROR;
}

static GHashTable *
choose_shot_steps (const SightRunData *data)
{
  GHashTable *chosen;
  guint n = data->steps->len;

  if (n <= REPORT_MAX_SHOT_STEPS)
    return NULL;
  chosen = g_hash_table_new (NULL, NULL);
  for (guint i = 0; i < n && g_hash_table_size (chosen) < REPORT_MAX_SHOT_STEPS / 2; i++)
    {
      const SightStepRecord *st = data->steps->pdata[i];

      if (!is_failure (st->verdict))
        continue;
      g_hash_table_add (chosen, GUINT_TO_POINTER (st->index + 1));
      if (st->index > 0)
        g_hash_table_add (chosen, GUINT_TO_POINTER (st->index));
    }
  for (guint i = 0; i < n && g_hash_table_size (chosen) < REPORT_MAX_SHOT_STEPS; i++)
    {
      const SightStepRecord *first = data->steps->pdata[i];
      const SightStepRecord *last = data->steps->pdata[n - 1 - i];

      g_hash_table_add (chosen, GUINT_TO_POINTER (first->index + 1));
      if (g_hash_table_size (chosen) < REPORT_MAX_SHOT_STEPS)
        g_hash_table_add (chosen, GUINT_TO_POINTER (last->index + 1));
    }
  return chosen;
}

static gboolean
shot_left_out (HtmlContext *ctx,
               guint        step)
{
  return ctx->shot_steps != NULL &&
         !g_hash_table_contains (ctx->shot_steps, GUINT_TO_POINTER (step + 1));
}

static const ShotInfo *
shot_for (HtmlContext                  *ctx,
          const SightObservationRecord *o,
          guint                         step)
{
  ShotInfo *info;
  g_autoptr(GBytes) bytes = NULL;
  g_autofree char *b64 = NULL;
  const char *mime;
  int w, h;

  if (o == NULL || o->screenshot == NULL || shot_left_out (ctx, step))
    return NULL;
  /* keyed by content: identical screenshots are embedded once */
  info = g_hash_table_lookup (ctx->shots, o->screenshot);
  if (info)
    return info;
  bytes = prepare_shot (o, &mime, &w, &h);
  if (bytes == NULL || !mime_is_image (mime))
    return NULL;
  info = g_new0 (ShotInfo, 1);
  info->css_class = g_strdup_printf ("i%u", ctx->n_rules++);
  info->width = w > 0 ? w : 16;
  info->height = h > 0 ? h : 10;
  b64 = g_base64_encode (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
  /* Each image is written once, as a class, and shown by every element that
   * needs it (the step and the filmstrip). */
  g_string_append_printf (ctx->css, ".%s{background-image:url(data:%s;base64,%s);aspect-ratio:%d/%d}",
                          info->css_class, mime, b64, info->width, info->height);
  g_hash_table_insert (ctx->shots, g_bytes_ref (o->screenshot), info);
  return info;
}

static const SightObservationRecord *
find_observation (const SightRunData *data,
                  guint               step,
                  const char         *phase)
{
  const SightObservationRecord *found = NULL;

  for (guint i = 0; i < data->observations->len; i++)
    {
      const SightObservationRecord *o = data->observations->pdata[i];
      if (o->step_index == (int) step && g_strcmp0 (o->phase, phase) == 0)
        found = o;
    }
  return found;
}

/* What the page looked like when the step began: its own "before", else the
 * last observation of an earlier step. */
static const SightObservationRecord *
before_observation (const SightRunData *data,
                    guint               step)
{
  const SightObservationRecord *o = find_observation (data, step, "before");

  if (o)
    return o;
  for (guint i = 0; i < data->observations->len; i++)
    {
      const SightObservationRecord *c = data->observations->pdata[i];
      if (c->step_index >= 0 && c->step_index < (int) step)
        o = c;
    }
  return o;
}

static const SightObservationRecord *
after_observation (const SightRunData *data,
                   guint               step)
{
  const SightObservationRecord *o = find_observation (data, step, "after");

  return o ? o : find_observation (data, step, "final");
}

static void
html_text (GString    *out,
           const char *text)
{
  append_escaped (out, text);
}

static void
html_link (GString    *out,
           const char *url)
{
  g_autofree char *safe = sight_report_safe_url (url);

  if (safe && !g_str_has_prefix (url, "data:"))
    {
      g_string_append_printf (out, "<a href=\"%s\" rel=\"noreferrer noopener\">", safe);
      html_text (out, url);
      g_string_append (out, "</a>");
    }
  else
    html_text (out, url);
}

static char *
format_cost (gint64 micros)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  if (micros < 0)
    return g_strdup ("not reported");
  return g_strdup_printf ("$%s", g_ascii_formatd (buf, sizeof buf, "%.4f", micros / 1e6));
}

static char *
format_seconds (double s)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  return g_strdup_printf ("%s s", g_ascii_formatd (buf, sizeof buf, s < 10 ? "%.1f" : "%.0f", s));
}

static void
total_item (GString    *out,
            const char *value,
            const char *label)
{
  g_string_append (out, "<li><b>");
  html_text (out, value);
  g_string_append (out, "</b><span>");
  html_text (out, label);
  g_string_append (out, "</span></li>");
}

static void
budget_meter (GString    *out,
              const char *label,
              double      used,
              double      limit,
              const char *unit)
{
  char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];

  g_string_append_printf (out, "<span>%s ", label);
  if (limit > 0)
    g_string_append_printf (out, "%s of %s%s <meter min=\"0\" max=\"%s\" value=\"%s\"></meter></span>",
                            g_ascii_formatd (a, sizeof a, "%g", used),
                            g_ascii_formatd (b, sizeof b, "%g", limit), unit,
                            g_ascii_formatd (b, sizeof b, "%g", limit),
                            g_ascii_formatd (a, sizeof a, "%g", MIN (used, limit)));
  else
    g_string_append_printf (out, "%s%s</span>", g_ascii_formatd (a, sizeof a, "%g", used), unit);
}

static double
json_number (JsonObject *o,
             const char *a,
             const char *b)
{
  if (o == NULL)
    return 0;
  if (a && json_object_has_member (o, a))
    return json_object_get_double_member_with_default (o, a, 0);
  if (b && json_object_has_member (o, b))
    return json_object_get_double_member_with_default (o, b, 0);
  return 0;
}

static void
html_shot (HtmlContext                  *ctx,
           const SightObservationRecord *o,
           const SightStepRecord        *st,
           const char                   *caption,
           gboolean                      with_box)
{
  const ShotInfo *info = shot_for (ctx, o, st->index);
  GString *out = ctx->body;

  g_string_append (out, "<figure>");
  if (info)
    {
      g_string_append_printf (out, "<div class=\"shot %s\" role=\"img\" aria-label=\"", info->css_class);
      html_text (out, caption);
      g_string_append (out, "\">");
      if (with_box && st->has_target && o->scale > 0)
        {
          double k = o->scale;
          char l[G_ASCII_DTOSTR_BUF_SIZE], t[G_ASCII_DTOSTR_BUF_SIZE];
          char w[G_ASCII_DTOSTR_BUF_SIZE], h[G_ASCII_DTOSTR_BUF_SIZE];
          guint rule = ctx->n_rules++;

          g_string_append_printf (ctx->css, ".b%u{left:%s%%;top:%s%%;width:%s%%;height:%s%%}", rule,
                                  g_ascii_formatd (l, sizeof l, "%.3f", 100 * st->target_x * k / info->width),
                                  g_ascii_formatd (t, sizeof t, "%.3f", 100 * st->target_y * k / info->height),
                                  g_ascii_formatd (w, sizeof w, "%.3f", 100 * st->target_width * k / info->width),
                                  g_ascii_formatd (h, sizeof h, "%.3f", 100 * st->target_height * k / info->height));
          g_string_append_printf (out, "<div class=\"box b%u\" title=\"the element the step acted on\"></div>", rule);
        }
      g_string_append (out, "</div>");
    }
  else if (o != NULL && o->screenshot != NULL && shot_left_out (ctx, st->index))
    g_string_append_printf (out, "<p class=\"meta\">Screenshot left out: the report embeds those "
                                 "of %u steps of a run (it is in the store).</p>",
                            REPORT_MAX_SHOT_STEPS);
  else
    g_string_append (out, "<p class=\"meta\">No screenshot.</p>");
  g_string_append (out, "<figcaption>");
  html_text (out, caption);
  if (o && o->url)
    {
      g_string_append (out, " · ");
      html_text (out, o->url);
    }
  g_string_append (out, "</figcaption></figure>");
}

static void
html_step (HtmlContext           *ctx,
           const SightStepRecord *st)
{
  const SightRunData *data = ctx->data;
  GString *out = ctx->body;
  const SightObservationRecord *before = before_observation (data, st->index);
  const SightObservationRecord *after = after_observation (data, st->index);
  const SightObservationRecord *seen = find_observation (data, st->index, "before");
  g_autoptr(JsonNode) budget_node =
    st->budget_json ? sight_json_parse (st->budget_json, -1, SIGHT_JSON_MAX_DEPTH, NULL) : NULL;
  JsonObject *budget = budget_node && JSON_NODE_HOLDS_OBJECT (budget_node)
                       ? json_node_get_object (budget_node) : NULL;
  g_autofree char *secs = format_seconds (seconds_between (st->started_at, st->finished_at));
  const char *verdict = sight_run_verdict_to_string (st->verdict);
  guint n_calls = 0;

  if (seen == NULL)
    seen = before ? before : after;

  g_string_append_printf (out, "<section class=\"step s-%s\" id=\"%sstep-%u\"><h3>Step %u · ",
                          verdict, ctx->prefix, st->index + 1, st->index + 1);
  html_text (out, step_label (st));
  g_string_append_printf (out, " <span class=\"badge v-%s\">%s</span> <span class=\"meta\">%s</span></h3>",
                          verdict, verdict, secs);
  if (st->instruction)
    {
      g_string_append (out, "<p><span class=\"instr\">");
      html_text (out, st->instruction);
      g_string_append (out, "</span></p>");
    }
  if (st->code)
    {
      g_string_append (out, "<p class=\"code\">");
      html_text (out, st->code);
      g_string_append (out, "</p>");
    }
  if (st->explanation)
    {
      g_string_append (out, "<p class=\"why\"><strong>Explanation: </strong>");
      html_text (out, st->explanation);
      g_string_append (out, "</p>");
    }

  g_string_append (out, "<div class=\"budget\">");
  budget_meter (out, "Model calls", st->model_calls,
                json_number (budget, "maxModelCalls", NULL), "");
  budget_meter (out, "Actions", st->actions, json_number (budget, "maxSteps", "maxActions"), "");
  budget_meter (out, "Time", round (seconds_between (st->started_at, st->finished_at) * 10) / 10,
                json_number (budget, "timeoutMs", "timeout") / 1000, " s");
  g_string_append (out, "</div>");

  if (before || after)
    {
      g_string_append (out, "<div class=\"shots\">");
      html_shot (ctx, before, st, "Before", TRUE);
      html_shot (ctx, after, st, "After", FALSE);
      g_string_append (out, "</div>");
    }

  if (seen && seen->tree_text)
    {
      gsize len = strlen (seen->tree_text);
      g_autofree char *cut = len > TREE_MAX_BYTES ? sight_text_sanitize (seen->tree_text, TREE_MAX_BYTES) : NULL;

      g_string_append (out, "<details><summary>What the model saw: the page's accessibility tree</summary><pre>");
      /* sight_text_sanitize drops newlines, so a long tree is cut by hand */
      if (cut)
        {
          g_autofree char *head = g_strndup (seen->tree_text, TREE_MAX_BYTES);
          html_text (out, head);
          g_string_append (out, "\n… (cut)");
        }
      else
        html_text (out, seen->tree_text);
      g_string_append (out, "</pre></details>");
    }

  for (guint i = 0; i < data->model_calls->len; i++)
    if (((SightModelCallRecord *) data->model_calls->pdata[i])->step_index == (int) st->index)
      n_calls++;
  if (n_calls > 0)
    {
      g_string_append_printf (out, "<details><summary>Model calls (%u)</summary><table>"
                                   "<tr><th>Model</th><th>Tokens in / out</th><th>Latency</th>"
                                   "<th>Cost</th><th>Request id</th></tr>", n_calls);
      for (guint i = 0; i < data->model_calls->len; i++)
        {
          const SightModelCallRecord *m = data->model_calls->pdata[i];
          g_autofree char *cost = NULL;

          if (m->step_index != (int) st->index)
            continue;
          cost = format_cost (m->cost_micros);
          g_string_append (out, "<tr><td>");
          html_text (out, m->provider);
          g_string_append (out, " ");
          html_text (out, m->model);
          g_string_append_printf (out, "</td><td>%" G_GINT64_FORMAT " / %" G_GINT64_FORMAT
                                  "</td><td>%" G_GINT64_FORMAT " ms</td><td>",
                                  MAX (m->input_tokens, 0), MAX (m->output_tokens, 0), m->latency_ms);
          html_text (out, cost);
          g_string_append (out, "</td><td>");
          html_text (out, m->request_id);
          g_string_append (out, "</td></tr>");
        }
      g_string_append (out, "</table></details>");
    }
  g_string_append (out, "</section>\n");
}

static void
html_logs (GString            *out,
           const SightRunData *data,
           const char         *prefix,
           gboolean            failed_requests)
{
  guint n = 0;

  for (guint i = 0; i < data->logs->len; i++)
    {
      const SightLogRecord *l = data->logs->pdata[i];

      if (failed_requests ? !is_failed_request (l) : !is_console_error (l))
        continue;
      if (n++ == 0)
        g_string_append (out, failed_requests
                              ? "<table><tr><th>Status</th><th>Address</th><th>Step</th></tr>"
                              : "<table><tr><th>Message</th><th>Source</th><th>Step</th></tr>");
      g_string_append (out, "<tr><td>");
      if (failed_requests)
        {
          if (l->status)
            g_string_append_printf (out, "%u", l->status);
          else
            html_text (out, l->text ? l->text : "network error");
          g_string_append (out, "</td><td>");
          html_text (out, l->url);
        }
      else
        {
          html_text (out, l->text);
          g_string_append (out, "</td><td>");
          html_text (out, l->url);
        }
      g_string_append (out, "</td><td>");
      if (l->step_index >= 0)
        g_string_append_printf (out, "<a href=\"#%sstep-%d\">%d</a>", prefix, l->step_index + 1,
                                l->step_index + 1);
      g_string_append (out, "</td></tr>");
    }
  if (n == 0)
    g_string_append_printf (out, "<p class=\"ok\">%s</p>",
                            failed_requests ? "No failed network calls." : "No console errors.");
  else
    g_string_append (out, "</table>");
}

/* Broken links, when a smoke test found any: findings whether or not they
 * failed the test. */
static void
html_broken_links (GString            *out,
                   const SightRunData *data,
                   const char         *prefix)
{
  guint n = 0;

  for (guint i = 0; i < data->logs->len; i++)
    {
      const SightLogRecord *l = data->logs->pdata[i];

      if (!is_broken_link (l))
        continue;
      if (n++ == 0)
        g_string_append (out, "<h2>Broken links</h2><table><tr><th>Status</th><th>Address</th>"
                              "<th>Found on</th><th>Step</th></tr>");
      g_string_append (out, "<tr><td>");
      if (l->status)
        g_string_append_printf (out, "%u", l->status);
      else
        g_string_append (out, "no answer");
      g_string_append (out, "</td><td>");
      html_text (out, l->url);
      g_string_append (out, "</td><td>");
      html_text (out, l->text);
      g_string_append (out, "</td><td>");
      if (l->step_index >= 0)
        g_string_append_printf (out, "<a href=\"#%sstep-%d\">%d</a>", prefix, l->step_index + 1,
                                l->step_index + 1);
      g_string_append (out, "</td></tr>");
    }
  if (n > 0)
    g_string_append (out, "</table>");
}

/* The report of one run into ctx->body: its header (h1, or h2 when the run
 * is one of several on the page), totals, filmstrip, findings and steps. */
static void
html_run (HtmlContext *ctx,
          gboolean     nested)
{
  const SightRunData *data = ctx->data;
  const SightRunRecord *run = data->run;
  GString *out = ctx->body;
  g_autofree char *summary = sight_report_summary (data);
  g_autofree char *started = iso_time (run->started_at);
  g_autofree char *secs = format_seconds (seconds_between (run->started_at, run_end (run)));
  g_autofree char *cost = format_cost (run->cost_micros);
  g_autofree char *calls = g_strdup_printf ("%u", run->model_calls);
  g_autofree char *actions = g_strdup_printf ("%u", run->actions);
  g_autofree char *tokens = g_strdup_printf ("%" G_GINT64_FORMAT " / %" G_GINT64_FORMAT,
                                             run->input_tokens, run->output_tokens);
  g_autofree char *steps = g_strdup_printf ("%u of %u", run->n_steps_passed,
                                            data->steps->len);
  g_autofree char *title = NULL;
  const char *verdict = report_verdict (run->verdict);
  const char *shown_verdict = run->verdict == SIGHT_RUN_VERDICT_INTERRUPTED ? "interrupted" : verdict;

  title = g_strdup (run->name && *run->name ? run->name : run->url ? run->url : run->id);
  g_clear_pointer (&ctx->shot_steps, g_hash_table_unref);
  ctx->shot_steps = choose_shot_steps (data);

  /* header */
  g_string_append (out, nested ? "<header><h3>" : "<header><h1>");
  html_text (out, title);
  g_string_append_printf (out, " <span class=\"badge v-%s\">%s</span>%s", shown_verdict,
                          shown_verdict, nested ? "</h3>" : "</h1>");
  g_string_append (out, "<p class=\"summary\">");
  html_text (out, summary);
  g_string_append (out, "</p><p class=\"meta\">");
  if (run->url)
    {
      g_string_append (out, "Address: ");
      html_link (out, run->url);
      g_string_append (out, "<br>");
    }
  g_string_append (out, "Run ");
  html_text (out, run->id);
  if (started)
    {
      g_string_append (out, " · started ");
      html_text (out, started);
    }
  g_string_append (out, " · ");
  html_text (out, run->kind);
  g_string_append (out, "</p></header>\n");

  /* totals */
  g_string_append (out, "<ul class=\"totals\">");
  total_item (out, secs, "duration");
  total_item (out, steps, "steps passed");
  total_item (out, calls, "model calls");
  total_item (out, actions, "actions");
  total_item (out, tokens, "tokens in / out");
  total_item (out, cost, "model cost");
  g_string_append (out, "</ul>\n");

  if (run->answer)
    {
      g_string_append (out, "<h2>Answer</h2><p class=\"why\">");
      html_text (out, run->answer);
      g_string_append (out, "</p>");
    }

  /* filmstrip: the screenshot after each step */
  if (data->steps->len > 0)
    {
      g_autoptr(GString) film = g_string_new (NULL);
      gboolean any = FALSE;

      for (guint i = 0; i < data->steps->len; i++)
        {
          const SightStepRecord *st = data->steps->pdata[i];
          const SightObservationRecord *o = after_observation (data, st->index);
          const ShotInfo *info = shot_for (ctx, o ? o : before_observation (data, st->index),
                                           st->index);

          any |= info != NULL;
          g_string_append_printf (film, "<a class=\"f-%s\" href=\"#%sstep-%u\"><div class=\"thumb %s\"></div>Step %u</a>",
                                  sight_run_verdict_to_string (st->verdict), ctx->prefix, st->index + 1,
                                  info ? info->css_class : "", st->index + 1);
        }
      if (any)
        g_string_append_printf (out, "<nav class=\"film\" aria-label=\"Filmstrip\">%s</nav>\n", film->str);
      if (ctx->shot_steps != NULL)
        g_string_append_printf (out, "<p class=\"meta\">Screenshots truncated: this report embeds "
                                     "those of %u of the %u steps (failed steps first, then the "
                                     "first and last ones); the others are in the store.</p>\n",
                                g_hash_table_size (ctx->shot_steps), data->steps->len);
    }

  /* findings */
  g_string_append (out, "<h2>Console errors</h2>");
  html_logs (out, data, ctx->prefix, FALSE);
  g_string_append (out, "<h2>Failed network calls</h2>");
  html_logs (out, data, ctx->prefix, TRUE);
  html_broken_links (out, data, ctx->prefix);
  if (run->final_url)
    {
      g_string_append (out, "<p class=\"meta\">Final address: ");
      html_link (out, run->final_url);
      g_string_append (out, "</p>");
    }
  if (run->notes && run->notes[0])
    {
      g_string_append (out, "<h2>Notes</h2><ul>");
      for (guint i = 0; run->notes[i]; i++)
        {
          g_string_append (out, "<li>");
          html_text (out, run->notes[i]);
          g_string_append (out, "</li>");
        }
      g_string_append (out, "</ul>");
    }

  /* timeline */
  g_string_append (out, "<h2>Steps</h2>\n");
  if (data->steps->len == 0)
    g_string_append (out, "<p class=\"meta\">No steps were recorded.</p>");
  for (guint i = 0; i < data->steps->len; i++)
    html_step (ctx, data->steps->pdata[i]);
}

static const char footer_text[] =
  "<footer>Written by Sightline " PACKAGE_VERSION ". This file is "
  "self-contained: it loads nothing from the network and runs no script. "
  "Green steps passed; red ones failed; the red box on a "
  "“Before” screenshot marks the element the step acted on.</footer>";

static HtmlContext
html_context_new (void)
{
  HtmlContext ctx = { NULL, g_string_new (NULL), g_string_new (NULL),
                      g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                             (GDestroyNotify) g_bytes_unref,
                                             (GDestroyNotify) shot_info_free), 0, "" };

  return ctx;
}

/* Wraps ctx->body in the document, with the style allowed by its hash, and
 * frees the context. */
static GBytes *
html_document (HtmlContext *ctx,
               const char  *title,
               const char  *verdict)
{
  GString *out = ctx->body;
  GString *doc;
  g_autofree char *hash = NULL;

  g_string_append (out, footer_text);

  /* The style is allowed by its hash: no inline script or style attribute
   * can run or apply even if escaping ever failed. */
  g_string_prepend (ctx->css, base_css);
  {
    GChecksum *sum = g_checksum_new (G_CHECKSUM_SHA256);
    guint8 digest[32];
    gsize len = sizeof digest;

    g_checksum_update (sum, (const guchar *) ctx->css->str, ctx->css->len);
    g_checksum_get_digest (sum, digest, &len);
    g_checksum_free (sum);
    hash = g_base64_encode (digest, len);
  }

  doc = g_string_sized_new (ctx->css->len + out->len + 1024);
  g_string_append (doc, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
  g_string_append_printf (doc, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                               "img-src data:; style-src 'sha256-%s'; base-uri 'none'; "
                               "form-action 'none'\">\n", hash);
  g_string_append (doc, "<meta name=\"referrer\" content=\"no-referrer\">\n"
                        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                        "<meta name=\"color-scheme\" content=\"light dark\">\n<title>");
  html_text (doc, title);
  g_string_append_printf (doc, " — %s — Sightline report</title>\n<style>", verdict);
  g_string_append_len (doc, ctx->css->str, ctx->css->len);
  g_string_append (doc, "</style></head>\n<body>\n");
  g_string_append_len (doc, out->str, out->len);
  g_string_append (doc, "\n</body></html>\n");

  g_string_free (ctx->css, TRUE);
  g_string_free (ctx->body, TRUE);
  g_hash_table_unref (ctx->shots);
  g_clear_pointer (&ctx->shot_steps, g_hash_table_unref);
  return g_string_free_to_bytes (doc);
}

static GBytes *
render_html (const SightRunData *data)
{
  HtmlContext ctx = html_context_new ();
  const SightRunRecord *run = data->run;
  g_autofree char *title = g_strdup (run->name && *run->name ? run->name : run->url ? run->url : run->id);

  ctx.data = data;
  html_run (&ctx, FALSE);
  return html_document (&ctx, title, report_verdict (run->verdict));
}

/* ------------------------------------------------------------------ suites */

static const char *
member_string (JsonObject *o,
               const char *name)
{
  JsonNode *node = o ? json_object_get_member (o, name) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) ||
      json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

static gint64
member_int (JsonObject *o,
            const char *name,
            gint64      fallback)
{
  JsonNode *node = o ? json_object_get_member (o, name) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node))
    return fallback;
  return json_node_get_value_type (node) == G_TYPE_DOUBLE ? (gint64) json_node_get_double (node)
                                                          : json_node_get_int (node);
}

static JsonArray *
member_array (JsonObject *o,
              const char *name)
{
  JsonNode *node = o ? json_object_get_member (o, name) : NULL;

  return node && JSON_NODE_HOLDS_ARRAY (node) ? json_node_get_array (node) : NULL;
}

static JsonObject *
member_object (JsonObject *o,
               const char *name)
{
  JsonNode *node = o ? json_object_get_member (o, name) : NULL;

  return node && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

static gint64
parse_iso (const char *text)
{
  g_autoptr(GDateTime) dt = text ? g_date_time_new_from_iso8601 (text, NULL) : NULL;

  return dt ? g_date_time_to_unix (dt) * G_USEC_PER_SEC : 0;
}

static SightRunVerdict
verdict_from (const char      *name,
              SightRunVerdict  fallback)
{
  SightRunVerdict verdict;

  return name && sight_run_verdict_from_string (name, &verdict) ? verdict : fallback;
}

/* A run as its JSON report (sight_report_to_json) describes it: everything
 * but the screenshots, trees and model calls, which the report leaves out.
 * Used when the run is not in this machine's store (a shard ran elsewhere). */
static SightRunData *
run_data_from_report (JsonObject *report)
{
  SightRunData *data = g_new0 (SightRunData, 1);
  SightRunRecord *run = g_new0 (SightRunRecord, 1);
  JsonObject *counts = member_object (report, "counts");
  JsonObject *usage = member_object (report, "usage");
  JsonObject *findings = member_object (report, "findings");
  JsonArray *steps = member_array (report, "steps");
  JsonArray *notes = member_array (report, "notes");
  JsonArray *console = member_array (findings, "consoleErrors");
  JsonArray *failed = member_array (findings, "failedRequests");
  JsonArray *broken = member_array (findings, "brokenLinks");

  data->run = run;
  data->steps = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_step_record_free);
  data->observations = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_observation_record_free);
  data->model_calls = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_model_call_record_free);
  data->logs = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_log_record_free);
  data->artifacts = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_artifact_record_free);

  run->id = g_strdup (member_string (report, "id"));
  run->kind = g_strdup (member_string (report, "kind"));
  run->name = g_strdup (member_string (report, "name"));
  run->url = g_strdup (member_string (report, "url"));
  run->code = g_strdup (member_string (report, "code"));
  run->answer = g_strdup (member_string (report, "answer"));
  run->final_url = g_strdup (member_string (findings, "finalUrl"));
  run->verdict = verdict_from (member_string (report, "status"), SIGHT_RUN_VERDICT_ERROR);
  run->started_at = parse_iso (member_string (report, "startedAt"));
  run->finished_at = run->started_at + member_int (report, "ms", 0) * 1000;
  run->n_steps_passed = member_int (counts, "passed", 0);
  run->n_steps_failed = member_int (counts, "failed", 0);
  run->n_steps_skipped = member_int (counts, "skipped", 0);
  run->model_calls = member_int (usage, "modelCalls", 0);
  run->actions = member_int (usage, "actions", 0);
  run->input_tokens = member_int (usage, "inputTokens", 0);
  run->output_tokens = member_int (usage, "outputTokens", 0);
  run->cost_micros = member_int (usage, "costMicros", -1);
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
      st->index = member_int (o, "index", i);
      st->kind = g_strdup (member_string (o, "kind"));
      st->label = g_strdup (member_string (o, "label"));
      st->instruction = g_strdup (member_string (o, "instruction"));
      st->verdict = verdict_from (member_string (o, "verdict"), SIGHT_RUN_VERDICT_ERROR);
      st->code = g_strdup (member_string (o, "code"));
      st->explanation = g_strdup (member_string (o, "explanation"));
      st->model_calls = member_int (o, "modelCalls", 0);
      st->actions = member_int (o, "actions", 0);
      st->started_at = run->started_at;
      st->finished_at = run->started_at + member_int (o, "ms", 0) * 1000;
      g_ptr_array_add (data->steps, st);
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
          l->step_index = member_int (o, "step", -1);
          if (pass == 0)
            {
              l->kind = g_strdup (member_string (o, "kind") ? member_string (o, "kind") : "console");
              l->level = g_strdup ("error");
              l->text = g_strdup (member_string (o, "text"));
            }
          else if (pass == 1)
            {
              l->kind = g_strdup ("request_failed");
              l->status = member_int (o, "status", 0);
              l->text = g_strdup (member_string (o, "error"));
            }
          else
            {
              l->kind = g_strdup ("broken_link");
              l->status = member_int (o, "status", 0);
              l->text = g_strdup (member_string (o, "foundOn"));
            }
          l->url = g_strdup (member_string (o, "url"));
          g_ptr_array_add (data->logs, l);
        }
    }
  return data;
}

/* The stored run of an attempt, else one rebuilt from its JSON report. */
static SightRunData *
attempt_run (JsonObject *attempt,
             GHashTable *runs,
             gboolean   *owned)
{
  const char *run_id = member_string (attempt, "runId");
  SightRunData *data = run_id && runs ? g_hash_table_lookup (runs, run_id) : NULL;
  JsonObject *report = member_object (attempt, "report");

  *owned = FALSE;
  if (data != NULL)
    return data;
  if (report == NULL)
    return NULL;
  *owned = TRUE;
  return run_data_from_report (report);
}

static const char *
suite_verdict_class (const char *verdict)
{
  if (g_strcmp0 (verdict, "pass") == 0 || g_strcmp0 (verdict, "flaky") == 0)
    return verdict;
  if (g_strcmp0 (verdict, "fail") == 0)
    return "fail";
  return "error";
}

static char *
suite_summary (JsonObject *suite)
{
  JsonObject *counts = member_object (suite, "counts");
  g_autofree char *secs = format_seconds (member_int (suite, "ms", 0) / 1000.0);

  return g_strdup_printf ("%" G_GINT64_FORMAT " tests: %" G_GINT64_FORMAT " passed, %"
                          G_GINT64_FORMAT " flaky, %" G_GINT64_FORMAT " failed, %"
                          G_GINT64_FORMAT " could not run, in %s.",
                          member_int (counts, "tests", 0), member_int (counts, "passed", 0),
                          member_int (counts, "flaky", 0), member_int (counts, "failed", 0),
                          member_int (counts, "errors", 0), secs);
}

static GBytes *
render_suite_html (JsonObject *suite,
                   GHashTable *runs)
{
  HtmlContext ctx = html_context_new ();
  GString *out = ctx.body;
  JsonArray *tests = member_array (suite, "tests");
  JsonObject *counts = member_object (suite, "counts");
  JsonObject *shard = member_object (suite, "shard");
  const char *verdict = member_string (suite, "verdict");
  g_autofree char *summary = suite_summary (suite);
  g_autofree char *secs = format_seconds (member_int (suite, "ms", 0) / 1000.0);
  static const char * const totals[][2] = {
    { "tests", "tests" }, { "passed", "passed" }, { "flaky", "flaky" },
    { "failed", "failed" }, { "errors", "could not run" },
  };

  if (verdict == NULL)
    verdict = "error";
  g_string_append_printf (out, "<header><h1>Test run <span class=\"badge v-%s\">%s</span></h1>",
                          suite_verdict_class (verdict), suite_verdict_class (verdict));
  g_string_append (out, "<p class=\"summary\">");
  html_text (out, summary);
  g_string_append (out, "</p><p class=\"meta\">");
  if (member_string (suite, "startedAt"))
    {
      g_string_append (out, "Started ");
      html_text (out, member_string (suite, "startedAt"));
      g_string_append (out, " · ");
    }
  g_string_append_printf (out, "%" G_GINT64_FORMAT " worker(s) · %" G_GINT64_FORMAT " retries",
                          member_int (suite, "workers", 1), member_int (suite, "retries", 0));
  if (shard)
    g_string_append_printf (out, " · shard %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT,
                            member_int (shard, "index", 0), member_int (shard, "total", 0));
  if (member_int (suite, "merged", 0) > 0)
    g_string_append_printf (out, " · merged from %" G_GINT64_FORMAT " results",
                            member_int (suite, "merged", 0));
  if (member_string (suite, "grep"))
    {
      g_string_append (out, " · grep ");
      html_text (out, member_string (suite, "grep"));
    }
  g_string_append (out, "</p></header>\n<ul class=\"totals\">");
  for (guint i = 0; i < G_N_ELEMENTS (totals); i++)
    {
      g_autofree char *n = g_strdup_printf ("%" G_GINT64_FORMAT, member_int (counts, totals[i][0], 0));
      total_item (out, n, totals[i][1]);
    }
  total_item (out, secs, "duration");
  g_string_append (out, "</ul>\n");

  /* the index of tests */
  g_string_append (out, "<h2>Tests</h2><table class=\"tests\"><tr><th>Test</th><th>Verdict</th><th>Attempts</th>"
                        "<th>Time</th><th>Why</th></tr>");
  for (guint i = 0; tests && i < json_array_get_length (tests); i++)
    {
      JsonObject *t = json_array_get_object_element (tests, i);
      const char *v = member_string (t, "verdict");
      JsonArray *attempts = member_array (t, "attempts");
      g_autofree char *time_s = format_seconds (member_int (t, "ms", 0) / 1000.0);

      g_string_append_printf (out, "<tr><td><a href=\"#t%u\">", i + 1);
      html_text (out, member_string (t, "name"));
      g_string_append (out, "</a><br><span class=\"meta\">");
      html_text (out, member_string (t, "file"));
      g_string_append_printf (out, "</span></td><td class=\"n\"><span class=\"badge v-%s\">",
                              suite_verdict_class (v));
      html_text (out, v ? v : "error");
      g_string_append_printf (out, "</span></td><td class=\"n\">%u</td><td class=\"n\">",
                              attempts ? json_array_get_length (attempts) : 0);
      html_text (out, time_s);
      g_string_append (out, "</td><td>");
      if (member_string (t, "code"))
        {
          g_string_append (out, "<span class=\"code\">");
          html_text (out, member_string (t, "code"));
          g_string_append (out, "</span> ");
          html_text (out, member_string (t, "failedStep"));
          g_string_append (out, ": ");
          html_text (out, member_string (t, "explanation"));
        }
      else if (g_strcmp0 (v, "flaky") == 0)
        g_string_append (out, "Passed on a retry");
      g_string_append (out, "</td></tr>");
    }
  g_string_append (out, "</table>\n");

  /* each test: every attempt, the last one open */
  for (guint i = 0; tests && i < json_array_get_length (tests); i++)
    {
      JsonObject *t = json_array_get_object_element (tests, i);
      JsonArray *attempts = member_array (t, "attempts");
      guint n = attempts ? json_array_get_length (attempts) : 0;
      const char *v = member_string (t, "verdict");

      g_string_append_printf (out, "<section class=\"test\" id=\"t%u\"><h2>", i + 1);
      html_text (out, member_string (t, "name"));
      g_string_append_printf (out, " <span class=\"badge v-%s\">", suite_verdict_class (v));
      html_text (out, v ? v : "error");
      g_string_append (out, "</span></h2><p class=\"meta\">");
      html_text (out, member_string (t, "file"));
      g_string_append (out, "</p>");
      for (guint a = 0; a < n; a++)
        {
          JsonObject *attempt = json_array_get_object_element (attempts, a);
          gboolean owned = FALSE;
          SightRunData *data = attempt_run (attempt, runs, &owned);
          g_autofree char *prefix = g_strdup_printf ("t%u-a%u-", i + 1, a + 1);
          gboolean last = a + 1 == n;

          if (n > 1)
            g_string_append_printf (out, "<details%s><summary>Attempt %u of %u: %s</summary>",
                                    last ? " open" : "", a + 1, n,
                                    sight_run_verdict_to_string (
                                      verdict_from (member_string (attempt, "verdict"),
                                                    SIGHT_RUN_VERDICT_ERROR)));
          if (data == NULL)
            g_string_append (out, "<p class=\"meta\">This attempt left no report.</p>");
          else
            {
              if (owned)
                g_string_append (out, "<p class=\"meta\">Drawn from the JSON result: the "
                                      "screenshots are in the store of the machine that ran "
                                      "it.</p>");
              ctx.data = data;
              ctx.prefix = prefix;
              html_run (&ctx, TRUE);
              ctx.data = NULL;
              ctx.prefix = "";
            }
          if (n > 1)
            g_string_append (out, "</details>");
          if (owned)
            sight_run_data_free (data);
        }
      g_string_append (out, "</section>\n");
    }
  if (tests == NULL || json_array_get_length (tests) == 0)
    g_string_append (out, "<p class=\"meta\">No tests ran.</p>");
  return html_document (&ctx, "Test run", suite_verdict_class (verdict));
}

static void
junit_case_failure (GString    *out,
                    const char *element,
                    JsonObject *attempt)
{
  const char *code = member_string (attempt, "code");
  const char *step = member_string (attempt, "failedStep");
  const char *why = member_string (attempt, "explanation");
  JsonObject *report = member_object (attempt, "report");
  g_autofree char *message = g_strdup_printf ("%s%s%s%s%s", step ? step : "", step ? ": " : "",
                                              code ? code : "", code && why ? ": " : "",
                                              why ? why : "");
  g_autofree char *body = sight_report_escape_xml (member_string (report, "text")
                                                   ? member_string (report, "text") : message);

  g_string_append_printf (out, "      <%s", element);
  xml_attr (out, "message", message);
  xml_attr (out, "type", code ? code : "ERROR");
  g_string_append_printf (out, ">%s</%s>\n", body, element);
}

static GBytes *
render_suite_junit (JsonObject *suite)
{
  GString *out = g_string_new ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  JsonArray *tests = member_array (suite, "tests");
  JsonObject *counts = member_object (suite, "counts");
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_autofree char *time_s = g_strdup (g_ascii_formatd (buf, sizeof buf, "%.3f",
                                                       member_int (suite, "ms", 0) / 1000.0));
  guint n = tests ? json_array_get_length (tests) : 0;
  gint64 failures = member_int (counts, "failed", 0), errors = member_int (counts, "errors", 0);

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
  if (member_string (suite, "startedAt"))
    xml_attr (out, "timestamp", member_string (suite, "startedAt"));
  g_string_append (out, ">\n");
  for (guint i = 0; i < n; i++)
    {
      JsonObject *t = json_array_get_object_element (tests, i);
      JsonArray *attempts = member_array (t, "attempts");
      guint n_attempts = attempts ? json_array_get_length (attempts) : 0;
      const char *v = member_string (t, "verdict");
      JsonObject *last = n_attempts ? json_array_get_object_element (attempts, n_attempts - 1) : NULL;

      g_string_append (out, "    <testcase");
      xml_attr (out, "classname", member_string (t, "file") ? member_string (t, "file") : "");
      xml_attr (out, "name", member_string (t, "name") ? member_string (t, "name") : "");
      g_string_append_printf (out, " time=\"%s\">\n",
                              g_ascii_formatd (buf, sizeof buf, "%.3f",
                                               member_int (t, "ms", 0) / 1000.0));
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
          JsonObject *report = member_object (last, "report");

          text = g_strdup_printf ("%s%s%s", g_strcmp0 (v, "flaky") == 0 ? "Flaky: passed on a retry.\n" : "",
                                  member_string (last, "runId") ? "Run " : "",
                                  member_string (last, "runId") ? member_string (last, "runId") : "");
          if (report && member_string (report, "text"))
            {
              g_autofree char *joined = g_strconcat (text, "\n", member_string (report, "text"), NULL);
              g_free (text);
              text = g_steal_pointer (&joined);
            }
          escaped = sight_report_escape_xml (text);
          g_string_append_printf (out, "      <system-out>%s</system-out>\n", escaped);
        }
      g_string_append (out, "    </testcase>\n");
    }
  g_string_append (out, "  </testsuite>\n</testsuites>\n");
  return g_string_free_to_bytes (out);
}

GBytes *
sight_report_render_suite (JsonObject         *suite,
                           GHashTable         *runs,
                           SightReportFormat   format,
                           GError            **error)
{
  g_return_val_if_fail (suite != NULL, NULL);

  switch (format)
    {
    case SIGHT_REPORT_HTML:
      return render_suite_html (suite, runs);
    case SIGHT_REPORT_JUNIT:
      return render_suite_junit (suite);
    case SIGHT_REPORT_JSON:
      {
        g_autoptr(JsonNode) root = json_node_new (JSON_NODE_OBJECT);
        g_autoptr(JsonGenerator) gen = json_generator_new ();
        char *text;

        json_node_set_object (root, suite);
        json_generator_set_pretty (gen, TRUE);
        json_generator_set_root (gen, root);
        text = json_generator_to_data (gen, NULL);
        return g_bytes_new_take (text, strlen (text));
      }
    default:
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "Unknown report format");
      return NULL;
    }
}

static gboolean
write_bytes (GBytes      *bytes,
             const char  *path,
             GError     **error)
{
  g_autoptr(GError) local_error = NULL;
  gsize len;
  const char *contents = g_bytes_get_data (bytes, &len);

  /* g_file_set_contents_full writes a temporary file and renames it. */
  if (!g_file_set_contents_full (path, contents ? contents : "", len,
                                 G_FILE_SET_CONTENTS_CONSISTENT, 0644, &local_error))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "Cannot write the report: %s", local_error->message);
      return FALSE;
    }
  return TRUE;
}

gboolean
sight_report_write_suite (JsonObject         *suite,
                          GHashTable         *runs,
                          SightReportFormat   format,
                          const char         *path,
                          GError            **error)
{
  g_autoptr(GBytes) bytes = sight_report_render_suite (suite, runs, format, error);

  return bytes != NULL && write_bytes (bytes, path, error);
}

/* ------------------------------------------------------------------ output */

GBytes *
sight_report_render (const SightRunData  *data,
                     SightReportFormat    format,
                     GError             **error)
{
  g_return_val_if_fail (data != NULL && data->run != NULL, NULL);
  g_return_val_if_fail (data->steps && data->observations && data->model_calls && data->logs, NULL);

  switch (format)
    {
    case SIGHT_REPORT_HTML:
      return render_html (data);
    case SIGHT_REPORT_JUNIT:
      return render_junit (data);
    case SIGHT_REPORT_JSON:
      {
        g_autoptr(JsonNode) root = sight_report_to_json (data);
        g_autoptr(JsonGenerator) gen = json_generator_new ();
        char *text;

        json_generator_set_pretty (gen, TRUE);
        json_generator_set_root (gen, root);
        text = json_generator_to_data (gen, NULL);
        return g_bytes_new_take (text, strlen (text));
      }
    default:
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "Unknown report format");
      return NULL;
    }
}

gboolean
sight_report_write (const SightRunData  *data,
                    SightReportFormat    format,
                    const char          *path,
                    GError             **error)
{
  g_autoptr(GBytes) bytes = sight_report_render (data, format, error);
  g_autoptr(GError) local_error = NULL;
  gsize len;
  const char *contents;

  if (bytes == NULL)
    return FALSE;
  contents = g_bytes_get_data (bytes, &len);
  /* g_file_set_contents_full writes a temporary file and renames it. */
  if (!g_file_set_contents_full (path, contents ? contents : "", len,
                                 G_FILE_SET_CONTENTS_CONSISTENT, 0644, &local_error))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "Cannot write the report: %s", local_error->message);
      return FALSE;
    }
  return TRUE;
}
