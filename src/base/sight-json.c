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

static const char *
skip_space (const char *p,
            const char *end)
{
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
    p++;
  return p;
}

/* Past the string that starts at @p ('"'), or NULL if it does not end. */
static const char *
skip_string (const char *p,
             const char *end)
{
  for (p++; p < end; p++)
    {
      if (*p == '"')
        return p + 1;
      if (*p == '\\' && ++p == end)
        return NULL;
    }
  return NULL;
}

/* Past the value that starts at @p, or NULL where it is not plain JSON. */
static const char *
skip_value (const char *p,
            const char *end)
{
  guint depth = 0;

  do
    {
      if (p >= end)
        return NULL;
      switch (*p)
        {
        case '"':
          if ((p = skip_string (p, end)) == NULL)
            return NULL;
          break;
        case '[':
        case '{':
          depth++;
          p++;
          break;
        case ']':
        case '}':
          if (depth == 0)
            return NULL;
          depth--;
          p++;
          break;
        case '\'':
        case '/':
          return NULL;
        default:
          /* A scalar ends at a separator or a closing bracket. */
          if (depth == 0)
            {
              while (p < end && *p != ',' && *p != '}' && *p != ']' &&
                     *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
                {
                  if (*p == '"' || *p == '\'' || *p == '/' || *p == '[' || *p == '{')
                    return NULL;
                  p++;
                }
              return p;
            }
          p++;
          break;
        }
    }
  while (depth > 0);
  return p;
}

gboolean
sight_json_find_member (const char *data,
                        gssize      length,
                        const char *name,
                        gsize      *start,
                        gsize      *end)
{
  const char *p, *stop;
  gsize name_len;

  g_return_val_if_fail (data != NULL || length == 0, FALSE);
  g_return_val_if_fail (name != NULL, FALSE);

  if (length < 0)
    length = strlen (data);
  stop = data + length;
  name_len = strlen (name);
  p = skip_space (data, stop);
  if (p == stop || *p != '{')
    return FALSE;
  p = skip_space (p + 1, stop);
  if (p < stop && *p == '}')
    return FALSE;
  while (p < stop && *p == '"')
    {
      const char *key = p + 1;
      const char *key_end = skip_string (p, stop);
      const char *value;
      gboolean match;

      if (key_end == NULL)
        return FALSE;
      match = (gsize) (key_end - 1 - key) == name_len && memcmp (key, name, name_len) == 0;
      p = skip_space (key_end, stop);
      if (p == stop || *p != ':')
        return FALSE;
      value = skip_space (p + 1, stop);
      if ((p = skip_value (value, stop)) == NULL)
        return FALSE;
      if (match)
        {
          *start = value - data;
          *end = p - data;
          return TRUE;
        }
      p = skip_space (p, stop);
      if (p == stop || *p != ',')
        return FALSE;
      p = skip_space (p + 1, stop);
    }
  return FALSE;
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
