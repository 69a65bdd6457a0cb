/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-report"

#include "config.h"

#include "sight-report.h"

#include <string.h>

#include "sight-error.h"
#include "sight-report-private.h"
#include "sight-secrets.h"

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
char *
_sight_report_clean_text (const char *text)
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

void
_sight_report_append_escaped (GString    *out,
                              const char *text)
{
  g_autofree char *clean = _sight_report_clean_text (text);

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

  _sight_report_append_escaped (out, text);
  return g_string_free (out, FALSE);
}

char *
sight_report_escape_xml (const char *text)
{
  /* The same five entities are right for XML 1.0, and _sight_report_clean_text drops the
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

/* ------------------------------------------------------------------ output */

/* Pretty-printed JSON text of @root. */
static GBytes *
json_bytes (JsonNode *root)
{
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  char *text;

  json_generator_set_pretty (gen, TRUE);
  json_generator_set_root (gen, root);
  text = json_generator_to_data (gen, NULL);
  return g_bytes_new_take (text, strlen (text));
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
      return _sight_report_render_html (data);
    case SIGHT_REPORT_JUNIT:
      return _sight_report_render_junit (data);
    case SIGHT_REPORT_JSON:
      {
        g_autoptr(JsonNode) root = sight_report_to_json (data);

        return json_bytes (root);
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

  return bytes != NULL && write_bytes (bytes, path, error);
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
      return _sight_report_render_suite_html (suite, runs);
    case SIGHT_REPORT_JUNIT:
      return _sight_report_render_suite_junit (suite);
    case SIGHT_REPORT_JSON:
      {
        g_autoptr(JsonNode) root = json_node_new (JSON_NODE_OBJECT);

        json_node_set_object (root, suite);
        return json_bytes (root);
      }
    default:
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "Unknown report format");
      return NULL;
    }
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
