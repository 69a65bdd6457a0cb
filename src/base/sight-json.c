/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-json"

#include "config.h"

#include "sight-json.h"

#include <string.h>

#include "sight-error.h"

/* The scan follows json-glib 1.6's scanner where it matters for depth: a
 * double-quoted string ends at an unescaped '"', a single-quoted one (which
 * json-glib accepts) at the next '\'', with no escapes, and a C comment at
 * its close. Where the two could disagree on invalid input, the scan counts more
 * brackets than the parser would see, never fewer. */
gboolean
sight_json_check_depth (const char *data,
                        gssize      length,
                        guint       max_depth,
                        GError    **error)
{
  const char *p = data;
  const char *end;
  guint depth = 0;

  g_return_val_if_fail (data != NULL || length == 0, FALSE);

  if (length < 0)
    length = strlen (data);
  end = data + length;

  while (p < end)
    {
      switch (*p)
        {
        case '[':
        case '{':
          if (++depth > max_depth)
            {
              g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                           "JSON nested more than %u levels deep", max_depth);
              return FALSE;
            }
          p++;
          break;

        case ']':
        case '}':
          if (depth > 0)
            depth--;
          p++;
          break;

        case '"':
          for (p++; p < end && *p != '"'; p++)
            if (*p == '\\' && p + 1 < end)
              p++;
          p++;
          break;

        case '\'':
          p = memchr (p + 1, '\'', end - (p + 1));
          p = p != NULL ? p + 1 : end;
          break;

        case '/':
          if (p + 1 < end && p[1] == '*')
            {
              const char *close = g_strstr_len (p + 2, end - (p + 2), "*/");

              p = close != NULL ? close + 2 : end;
            }
          else
            p++;
          break;

        default:
          p++;
          break;
        }
    }
  return TRUE;
}

JsonNode *
sight_json_parse (const char *data,
                  gssize      length,
                  guint       max_depth,
                  GError    **error)
{
  g_autoptr(JsonParser) parser = NULL;

  g_return_val_if_fail (max_depth > 0, NULL);

  if (data == NULL || length == 0 || (length < 0 && *data == '\0'))
    {
      g_set_error_literal (error, JSON_PARSER_ERROR, JSON_PARSER_ERROR_PARSE, "no JSON: empty");
      return NULL;
    }
  if (!sight_json_check_depth (data, length, max_depth, error))
    return NULL;

  parser = json_parser_new ();
  if (!json_parser_load_from_data (parser, data, length, error))
    return NULL;
  if (json_parser_get_root (parser) == NULL)
    {
      g_set_error_literal (error, JSON_PARSER_ERROR, JSON_PARSER_ERROR_PARSE, "no JSON: empty");
      return NULL;
    }
  return json_parser_steal_root (parser);
}

JsonNode *
sight_json_parse_file (const char *path,
                       guint       max_depth,
                       GError    **error)
{
  g_autofree char *contents = NULL;
  gsize length = 0;

  if (!g_file_get_contents (path, &contents, &length, error))
    return NULL;
  return sight_json_parse (contents, length, max_depth, error);
}
