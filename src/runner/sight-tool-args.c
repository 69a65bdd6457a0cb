/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-tool-args"

#include "config.h"

#include "sight-tool-args.h"

#include <math.h>

#include "sight-error.h"

#define MAX_URL_CHARS 2048

static gboolean
fail (GError    **error,
      const char *name,
      const char *format,
      ...) G_GNUC_PRINTF (3, 4);

static gboolean
fail (GError    **error,
      const char *name,
      const char *format,
      ...)
{
  g_autofree char *detail = NULL;
  va_list args;

  va_start (args, format);
  detail = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "%s: %s", name, detail);
  return FALSE;
}

gboolean
sight_tool_args_check_known (JsonObject          *args,
                             const char * const  *known,
                             GError             **error)
{
  g_autoptr(GList) members = NULL;

  if (args == NULL)
    return TRUE;
  members = json_object_get_members (args);
  for (GList *l = members; l != NULL; l = l->next)
    if (!g_strv_contains (known, l->data))
      return fail (error, l->data, "unknown argument");
  return TRUE;
}

static JsonNode *
member (JsonObject *args,
        const char *name)
{
  JsonNode *node;

  if (args == NULL || !json_object_has_member (args, name))
    return NULL;
  node = json_object_get_member (args, name);
  return JSON_NODE_HOLDS_NULL (node) ? NULL : node;
}

gboolean
sight_tool_args_get_int (JsonObject  *args,
                         const char  *name,
                         gint64       fallback,
                         gint64       min,
                         gint64       max,
                         gint64      *out,
                         GError     **error)
{
  JsonNode *node = member (args, name);
  double value;

  if (node == NULL)
    {
      *out = fallback;
      return TRUE;
    }
  if (!JSON_NODE_HOLDS_VALUE (node) ||
      (json_node_get_value_type (node) != G_TYPE_INT64 &&
       json_node_get_value_type (node) != G_TYPE_DOUBLE))
    return fail (error, name, "must be an integer from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT,
                 min, max);
  value = json_node_get_double (node);
  if (json_node_get_value_type (node) == G_TYPE_INT64)
    value = (double) json_node_get_int (node);
  if (!isfinite (value) || value != floor (value) || value < (double) min || value > (double) max)
    return fail (error, name, "must be an integer from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT,
                 min, max);
  *out = (gint64) value;
  return TRUE;
}

gboolean
sight_tool_args_get_bool (JsonObject  *args,
                          const char  *name,
                          gboolean     fallback,
                          gboolean    *out,
                          GError     **error)
{
  JsonNode *node = member (args, name);

  if (node == NULL)
    {
      *out = fallback;
      return TRUE;
    }
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_BOOLEAN)
    return fail (error, name, "must be true or false");
  *out = json_node_get_boolean (node);
  return TRUE;
}

static gboolean
string_value (JsonNode    *node,
              const char  *name,
              gsize        max_chars,
              const char **out,
              GError     **error)
{
  const char *value;

  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return fail (error, name, "must be a string");
  value = json_node_get_string (node);
  if (!g_utf8_validate (value, -1, NULL))
    return fail (error, name, "must be valid UTF-8");
  if (max_chars > 0 && g_utf8_strlen (value, -1) > (glong) max_chars)
    return fail (error, name, "must be at most %" G_GSIZE_FORMAT " characters", max_chars);
  *out = value;
  return TRUE;
}

gboolean
sight_tool_args_get_string (JsonObject  *args,
                            const char  *name,
                            gsize        max_chars,
                            const char **out,
                            GError     **error)
{
  JsonNode *node = member (args, name);

  *out = NULL;
  if (node == NULL)
    return TRUE;
  return string_value (node, name, max_chars, out, error);
}

gboolean
sight_tool_args_get_choice (JsonObject          *args,
                            const char          *name,
                            const char * const  *choices,
                            const char          *fallback,
                            const char         **out,
                            GError             **error)
{
  const char *value = NULL;

  if (!sight_tool_args_get_string (args, name, 0, &value, error))
    return FALSE;
  if (value == NULL)
    {
      *out = fallback;
      return TRUE;
    }
  if (!g_strv_contains (choices, value))
    {
      g_autofree char *list = g_strjoinv (", ", (char **) choices);

      return fail (error, name, "must be one of %s", list);
    }
  *out = value;
  return TRUE;
}

gboolean
sight_tool_args_get_strv (JsonObject          *args,
                          const char          *name,
                          const char * const  *choices,
                          guint                max_items,
                          gsize                max_chars,
                          const char * const  *fallback,
                          char              ***out,
                          GError             **error)
{
  JsonNode *node = member (args, name);
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  JsonArray *array;

  if (node == NULL)
    {
      *out = g_strdupv ((char **) fallback);
      return TRUE;
    }
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return fail (error, name, "must be an array of strings");
  array = json_node_get_array (node);
  if (json_array_get_length (array) > max_items)
    return fail (error, name, "must have at most %u items", max_items);
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      const char *value;
      g_autofree char *item = g_strdup_printf ("%s[%u]", name, i);

      if (!string_value (json_array_get_element (array, i), item, max_chars, &value, error))
        return FALSE;
      if (choices != NULL && !g_strv_contains (choices, value))
        {
          g_autofree char *list = g_strjoinv (", ", (char **) choices);

          return fail (error, item, "must be one of %s", list);
        }
      g_strv_builder_add (builder, value);
    }
  *out = g_strv_builder_end (builder);
  return TRUE;
}

gboolean
sight_url_validate (const char  *url,
                    const char  *argument,
                    GError     **error)
{
  g_autoptr(GUri) uri = NULL;
  const char *scheme;

  if (g_utf8_strlen (url, -1) > MAX_URL_CHARS)
    return fail (error, argument, "must be at most %d characters", MAX_URL_CHARS);
  uri = g_uri_parse (url, G_URI_FLAGS_ENCODED | G_URI_FLAGS_PARSE_RELAXED, NULL);
  if (uri == NULL)
    return fail (error, argument, "“%s” is not a valid URL", url);
  scheme = g_uri_get_scheme (uri);
  if (g_ascii_strcasecmp (scheme, "http") != 0 && g_ascii_strcasecmp (scheme, "https") != 0)
    return fail (error, argument, "must be an http or https URL, not %s:", scheme);
  if (g_uri_get_host (uri) == NULL || *g_uri_get_host (uri) == '\0')
    return fail (error, argument, "“%s” has no host", url);
  return TRUE;
}

gboolean
sight_tool_args_get_url (JsonObject  *args,
                         const char  *name,
                         gboolean     required,
                         const char **out,
                         GError     **error)
{
  if (!sight_tool_args_get_string (args, name, 0, out, error))
    return FALSE;
  if (*out == NULL)
    return required ? fail (error, name, "is required") : TRUE;
  return sight_url_validate (*out, name, error);
}
