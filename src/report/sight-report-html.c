/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-report"

#include "config.h"

#include "sight-report.h"

#include <gdk-pixbuf/gdk-pixbuf.h>
#include <math.h>
#include <string.h>

#include "sight-error.h"
#include "sight-image.h"
#include "sight-json.h"
#include "sight-report-private.h"

/* Screenshots in the report: a long side of at most this many pixels, and
 * re-encoded as JPEG when larger than SHOT_MAX_BYTES, so a 50-step run stays
 * small enough to mail. */
#define SHOT_MAX_SIDE 800
#define SHOT_MAX_BYTES (40 * 1024)
#define SHOT_QUALITY 55
#define TREE_MAX_BYTES (64 * 1024)

/* ------------------------------------------------------------- screenshots */

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
  int fit_width, fit_height;

  if (sight_image_fit (width, height, SHOT_MAX_SIDE, &fit_width, &fit_height))
    gdk_pixbuf_loader_set_size (loader, fit_width, fit_height);
}

/* Resamples and re-encodes a screenshot when it is too large for a report. */
static GBytes *
prepare_shot (const SightObservationRecord *o,
              const char                  **out_mime,
              int                          *out_width,
              int                          *out_height)
{
  g_autoptr(GdkPixbufLoader) loader = NULL;
  g_autoptr(GdkPixbuf) flat = NULL;
  g_autoptr(GBytes) encoded = NULL;
  GdkPixbuf *pixbuf;
  gsize size;
  const guchar *bytes = g_bytes_get_data (o->screenshot, &size);
  int w, h;

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
  flat = sight_image_downscale (pixbuf, SHOT_MAX_SIDE);
  encoded = sight_encode_image (flat, SIGHT_IMAGE_JPEG, SHOT_QUALITY, NULL);
  if (encoded == NULL)
    return mime_is_image (o->screenshot_mime) ? g_bytes_ref (o->screenshot) : NULL;
  *out_mime = "image/jpeg";
  /* The box overlay works in fractions of the image, so the original size
   * is kept for it. */
  *out_width = o->width > 0 ? o->width : w;
  *out_height = o->height > 0 ? o->height : h;
  return g_steal_pointer (&encoded);
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

/* ------------------------------------------------------------------ pieces */

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
  _sight_report_append_escaped (out, text);
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

/* Sightline's own estimate, marked as one. */
static char *
format_estimate (gint64 micros)
{
  g_autofree char *cost = NULL;

  if (micros < 0)
    return g_strdup ("none");
  cost = format_cost (micros);
  return g_strdup_printf ("~%s (estimated)", cost);
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
  g_autofree char *secs = format_seconds (_sight_report_seconds_between (st->started_at,
                                                                        st->finished_at));
  const char *verdict = sight_run_verdict_to_string (st->verdict);
  const char *evidence = sight_run_data_get_step_evidence (data, st->index);
  guint n_calls = 0;

  if (seen == NULL)
    seen = before ? before : after;

  g_string_append_printf (out, "<section class=\"step s-%s\" id=\"%sstep-%u\"><h3>Step %u · ",
                          verdict, ctx->prefix, st->index + 1, st->index + 1);
  html_text (out, _sight_report_step_label (st));
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
  if (evidence != NULL)
    {
      g_string_append (out, "<p class=\"meta\">Evidence (the “After” screenshot): <code>");
      html_text (out, evidence);
      g_string_append (out, "</code></p>");
    }

  g_string_append (out, "<div class=\"budget\">");
  budget_meter (out, "Model calls", st->model_calls,
                json_number (budget, "maxModelCalls", NULL), "");
  budget_meter (out, "Actions", st->actions, json_number (budget, "maxSteps", "maxActions"), "");
  budget_meter (out, "Time",
                round (_sight_report_seconds_between (st->started_at, st->finished_at) * 10) / 10,
                json_number (budget, "timeoutMs", "timeout") / 1000, " s");
  g_string_append (out, "</div>");

  if (before || after)
    {
      g_string_append (out, "<div class=\"shots\">");
      html_shot (ctx, before, st, "Before", TRUE);
      html_shot (ctx, after, st, evidence != NULL ? "After (the failure's evidence)" : "After",
                 FALSE);
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
          cost = m->cost_micros < 0 && m->has_estimated_cost
                 ? format_estimate (m->estimated_cost_micros) : format_cost (m->cost_micros);
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

      if (failed_requests ? !_sight_report_is_failed_request (l)
                          : !_sight_report_is_console_error (l))
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

      if (!_sight_report_is_broken_link (l))
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

/* The run's recording, linked where the store keeps it (a file beside the
 * store, not embedded: the report stays small enough to mail). */
static void
html_video (GString            *out,
            const SightRunData *data)
{
  const SightArtifactRecord *video = sight_run_data_find_video (data);
  g_autofree char *uri = NULL;
  g_autofree char *href = NULL;
  g_autofree char *name = NULL;

  if (video == NULL || video->path == NULL ||
      (uri = g_filename_to_uri (video->path, NULL, NULL)) == NULL)
    return;
  href = sight_report_escape_html (uri);
  name = g_path_get_basename (video->path);
  g_string_append_printf (out, "<h2>Recording</h2><p class=\"video\"><a href=\"%s\" "
                               "type=\"%s\">", href, video->mime);
  html_text (out, name);
  g_string_append (out, "</a> (WebM video of what the page showed, secure fields masked)</p>\n");
}

/* ------------------------------------------------------------------- a run */

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
  g_autofree char *started = _sight_report_iso_time (run->started_at);
  g_autofree char      *secs = format_seconds (
           _sight_report_seconds_between (run->started_at, _sight_report_run_end (run)));
  g_autofree char *cost = format_cost (run->usage.has_cost ? (gint64) run->usage.cost_micro_usd
                                                            : -1);
  g_autofree char *estimate = format_estimate (run->usage.has_estimated_cost
                                               ? (gint64) run->usage.estimated_cost_micro_usd : -1);
  g_autofree char *calls = g_strdup_printf ("%u", run->model_calls);
  g_autofree char *actions = g_strdup_printf ("%u", run->actions);
  g_autofree char *tokens = g_strdup_printf ("%" G_GUINT64_FORMAT " / %" G_GUINT64_FORMAT,
                                             run->usage.input_tokens, run->usage.output_tokens);
  g_autofree char *steps = g_strdup_printf ("%u of %u", run->n_steps_passed,
                                            data->steps->len);
  g_autofree char *title = NULL;
  const char *verdict = _sight_report_verdict (run->verdict);
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
  total_item (out, tokens,
              run->usage.token_accounting == SIGHT_TOKEN_ACCOUNTING_PROVIDER
              ? "tokens in / out (the provider's counts)"
              : "tokens in / out (an upper bound: not every call gave provider counts)");
  total_item (out, cost, "model cost reported by the provider");
  total_item (out, estimate,
              "estimated cost (Sightline's price table, for calls the provider did not price)");
  g_string_append (out, "</ul>\n");

  if (run->answer)
    {
      g_string_append (out, "<h2>Answer</h2><p class=\"why\">");
      html_text (out, run->answer);
      g_string_append (out, "</p>");
    }

  html_video (out, data);

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

GBytes *
_sight_report_render_html (const SightRunData *data)
{
  HtmlContext ctx = html_context_new ();
  const SightRunRecord *run = data->run;
  g_autofree char *title = g_strdup (run->name && *run->name ? run->name : run->url ? run->url : run->id);

  ctx.data = data;
  html_run (&ctx, FALSE);
  return html_document (&ctx, title, _sight_report_verdict (run->verdict));
}

/* ----------------------------------------------------------------- a suite */

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
  JsonObject *counts = _sight_report_member_object (suite, "counts");
  g_autofree char *secs = format_seconds (_sight_report_member_int (suite, "ms", 0) / 1000.0);

  return g_strdup_printf (
      "%" G_GINT64_FORMAT " tests: %" G_GINT64_FORMAT " passed, %" G_GINT64_FORMAT
      " flaky, %" G_GINT64_FORMAT " failed, %" G_GINT64_FORMAT " could not run, in %s.",
      _sight_report_member_int (counts, "tests", 0), _sight_report_member_int (counts, "passed", 0),
      _sight_report_member_int (counts, "flaky", 0), _sight_report_member_int (counts, "failed", 0),
      _sight_report_member_int (counts, "errors", 0), secs);
}

GBytes *
_sight_report_render_suite_html (JsonObject *suite,
                                 GHashTable *runs)
{
  HtmlContext ctx = html_context_new ();
  GString *out = ctx.body;
  JsonArray *tests = _sight_report_member_array (suite, "tests");
  JsonObject *counts = _sight_report_member_object (suite, "counts");
  JsonObject *shard = _sight_report_member_object (suite, "shard");
  const char *verdict = _sight_report_member_string (suite, "verdict");
  g_autofree char *summary = suite_summary (suite);
  g_autofree char *secs = format_seconds (_sight_report_member_int (suite, "ms", 0) / 1000.0);
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
  if (_sight_report_member_string (suite, "startedAt"))
    {
      g_string_append (out, "Started ");
      html_text (out, _sight_report_member_string (suite, "startedAt"));
      g_string_append (out, " · ");
    }
  g_string_append_printf (out, "%" G_GINT64_FORMAT " worker(s) · %" G_GINT64_FORMAT " retries",
                          _sight_report_member_int (suite, "workers", 1),
                          _sight_report_member_int (suite, "retries", 0));
  if (shard)
    g_string_append_printf (out, " · shard %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT,
                            _sight_report_member_int (shard, "index", 0),
                            _sight_report_member_int (shard, "total", 0));
  if (_sight_report_member_int (suite, "merged", 0) > 0)
    g_string_append_printf (out, " · merged from %" G_GINT64_FORMAT " results",
                            _sight_report_member_int (suite, "merged", 0));
  if (_sight_report_member_string (suite, "grep"))
    {
      g_string_append (out, " · grep ");
      html_text (out, _sight_report_member_string (suite, "grep"));
    }
  g_string_append (out, "</p></header>\n<ul class=\"totals\">");
  for (guint i = 0; i < G_N_ELEMENTS (totals); i++)
    {
      g_autofree char *n = g_strdup_printf ("%" G_GINT64_FORMAT, _sight_report_member_int (counts, totals[i][0], 0));
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
      const char *v = _sight_report_member_string (t, "verdict");
      JsonArray *attempts = _sight_report_member_array (t, "attempts");
      g_autofree char *time_s = format_seconds (_sight_report_member_int (t, "ms", 0) / 1000.0);

      g_string_append_printf (out, "<tr><td><a href=\"#t%u\">", i + 1);
      html_text (out, _sight_report_member_string (t, "name"));
      g_string_append (out, "</a><br><span class=\"meta\">");
      html_text (out, _sight_report_member_string (t, "file"));
      g_string_append_printf (out, "</span></td><td class=\"n\"><span class=\"badge v-%s\">",
                              suite_verdict_class (v));
      html_text (out, v ? v : "error");
      g_string_append_printf (out, "</span></td><td class=\"n\">%u</td><td class=\"n\">",
                              attempts ? json_array_get_length (attempts) : 0);
      html_text (out, time_s);
      g_string_append (out, "</td><td>");
      if (_sight_report_member_string (t, "code"))
        {
          g_string_append (out, "<span class=\"code\">");
          html_text (out, _sight_report_member_string (t, "code"));
          g_string_append (out, "</span> ");
          html_text (out, _sight_report_member_string (t, "failedStep"));
          g_string_append (out, ": ");
          html_text (out, _sight_report_member_string (t, "explanation"));
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
      JsonArray *attempts = _sight_report_member_array (t, "attempts");
      guint n = attempts ? json_array_get_length (attempts) : 0;
      const char *v = _sight_report_member_string (t, "verdict");

      g_string_append_printf (out, "<section class=\"test\" id=\"t%u\"><h2>", i + 1);
      html_text (out, _sight_report_member_string (t, "name"));
      g_string_append_printf (out, " <span class=\"badge v-%s\">", suite_verdict_class (v));
      html_text (out, v ? v : "error");
      g_string_append (out, "</span></h2><p class=\"meta\">");
      html_text (out, _sight_report_member_string (t, "file"));
      g_string_append (out, "</p>");
      for (guint a = 0; a < n; a++)
        {
          JsonObject *attempt = json_array_get_object_element (attempts, a);
          gboolean owned = FALSE;
          SightRunData *data = _sight_report_attempt_run (attempt, runs, &owned);
          g_autofree char *prefix = g_strdup_printf ("t%u-a%u-", i + 1, a + 1);
          gboolean last = a + 1 == n;

          if (n > 1)
            g_string_append_printf (
                out, "<details%s><summary>Attempt %u of %u: %s</summary>", last ? " open" : "",
                a + 1, n,
                sight_run_verdict_to_string (_sight_report_verdict_from (
                    _sight_report_member_string (attempt, "verdict"), SIGHT_RUN_VERDICT_ERROR)));
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
