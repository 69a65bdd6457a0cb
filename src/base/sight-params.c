/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-params"

#include "config.h"

#include "sight-params.h"

#include <math.h>
#include <string.h>

#include "sight-error.h"
#include "sight-json-schema.h"

gboolean
sight_params_is_secret (JsonNode    *node,
                        const char **out_name)
{
  JsonObject *obj;
  JsonNode *name;

  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return FALSE;
  obj = json_node_get_object (node);
  if (json_object_get_size (obj) != 1 || !json_object_has_member (obj, "secret"))
    return FALSE;
  name = json_object_get_member (obj, "secret");
  if (!JSON_NODE_HOLDS_VALUE (name) || json_node_get_value_type (name) != G_TYPE_STRING)
    return FALSE;
  if (out_name != NULL)
    *out_name = json_node_get_string (name);
  return TRUE;
}

static gboolean
check_value (JsonNode    *node,
             const char  *path,
             guint        depth,
             GError     **error)
{
  const char *secret_name;

  if (JSON_NODE_HOLDS_VALUE (node))
    {
      GType t = json_node_get_value_type (node);

      if (t == G_TYPE_DOUBLE && !isfinite (json_node_get_double (node)))
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "params%s: a number must be finite", path);
          return FALSE;
        }
      if (t != G_TYPE_DOUBLE && t != G_TYPE_INT64 && t != G_TYPE_BOOLEAN && t != G_TYPE_STRING)
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "params%s: not a JSON value", path);
          return FALSE;
        }
      if (t == G_TYPE_STRING && !g_utf8_validate (json_node_get_string (node), -1, NULL))
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "params%s: a string must be valid UTF-8", path);
          return FALSE;
        }
      return TRUE;
    }
  if (JSON_NODE_HOLDS_NULL (node))
    return TRUE;

  if (sight_params_is_secret (node, &secret_name))
    {
      if (*secret_name == '\0')
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "params%s: a Secret must name a credential", path);
          return FALSE;
        }
      return TRUE;
    }

  if (depth + 1 > SIGHT_PARAMS_MAX_DEPTH)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "params%s: nested more than %d levels deep", path, SIGHT_PARAMS_MAX_DEPTH);
      return FALSE;
    }

  if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *arr = json_node_get_array (node);

      for (guint i = 0; i < json_array_get_length (arr); i++)
        {
          g_autofree char *sub = g_strdup_printf ("%s/%u", path, i);

          if (!check_value (json_array_get_element (arr, i), sub, depth + 1, error))
            return FALSE;
        }
      return TRUE;
    }
  else
    {
      JsonObjectIter iter;
      const char *key;
      JsonNode *value;

      json_object_iter_init_ordered (&iter, json_node_get_object (node));
      while (json_object_iter_next_ordered (&iter, &key, &value))
        {
          g_autofree char *sub = sight_json_pointer_append (path, key);

          if (!check_value (value, sub, depth + 1, error))
            return FALSE;
        }
      return TRUE;
    }
}

gboolean
sight_params_validate (JsonNode  *params,
                       GError   **error)
{
  g_autofree char *text = NULL;
  gsize len;

  if (params == NULL || !JSON_NODE_HOLDS_OBJECT (params) ||
      sight_params_is_secret (params, NULL))
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                           "params must be an object of name → value");
      return FALSE;
    }
  /* The params object is level 1: its members sit at depth 1. */
  if (!check_value (params, "", 0, error))
    return FALSE;

  text = json_to_string (params, FALSE);
  len = strlen (text);
  if (len > SIGHT_PARAMS_MAX_BYTES)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "params are %" G_GSIZE_FORMAT " bytes as JSON, more than the %d allowed",
                   len, SIGHT_PARAMS_MAX_BYTES);
      return FALSE;
    }
  return TRUE;
}

static JsonNode *
project_secret (const char   *name,
                SightSecrets *secrets)
{
  g_autoptr(JsonObject) obj = json_object_new ();
  const SightCredential *cred = secrets ? sight_secrets_lookup (secrets, name) : NULL;
  JsonNode *node = json_node_alloc ();

  json_object_set_string_member (obj, "secret", name);
  if (cred != NULL && cred->purpose != NULL)
    json_object_set_string_member (obj, "purpose", cred->purpose);
  json_node_init_object (node, obj);
  return node;
}

JsonNode *
sight_params_project (JsonNode     *params,
                      SightSecrets *secrets)
{
  const char *name;

  if (params == NULL)
    return NULL;
  if (sight_params_is_secret (params, &name))
    return project_secret (name, secrets);
  if (JSON_NODE_HOLDS_ARRAY (params))
    {
      JsonArray *src = json_node_get_array (params);
      g_autoptr(JsonArray) dst = json_array_sized_new (json_array_get_length (src));

      for (guint i = 0; i < json_array_get_length (src); i++)
        json_array_add_element (dst, sight_params_project (json_array_get_element (src, i),
                                                           secrets));
      return json_node_init_array (json_node_alloc (), dst);
    }
  if (JSON_NODE_HOLDS_OBJECT (params))
    {
      g_autoptr(JsonObject) dst = json_object_new ();
      JsonObjectIter iter;
      const char *key;
      JsonNode *value;

      json_object_iter_init_ordered (&iter, json_node_get_object (params));
      while (json_object_iter_next_ordered (&iter, &key, &value))
        json_object_set_member (dst, key, sight_params_project (value, secrets));
      return json_node_init_object (json_node_alloc (), dst);
    }
  return json_node_copy (params);
}

static void
collect_secrets (JsonNode  *node,
                 GPtrArray *names)
{
  const char *name;

  if (node == NULL)
    return;
  if (sight_params_is_secret (node, &name))
    {
      if (!g_ptr_array_find_with_equal_func (names, name, g_str_equal, NULL))
        g_ptr_array_add (names, g_strdup (name));
    }
  else if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *arr = json_node_get_array (node);

      for (guint i = 0; i < json_array_get_length (arr); i++)
        collect_secrets (json_array_get_element (arr, i), names);
    }
  else if (JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonObjectIter iter;
      const char *key;
      JsonNode *value;

      json_object_iter_init_ordered (&iter, json_node_get_object (node));
      while (json_object_iter_next_ordered (&iter, &key, &value))
        collect_secrets (value, names);
    }
}

GStrv
sight_params_list_secrets (JsonNode *params)
{
  GPtrArray *names = g_ptr_array_new ();

  collect_secrets (params, names);
  g_ptr_array_add (names, NULL);
  return (GStrv) g_ptr_array_free (names, FALSE);
}

static gboolean
is_name_char (char c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '-' || c == '.' || c == '$';
}

char *
sight_instruction_fill (const char    *instruction,
                        JsonNode      *params,
                        SightSecrets  *secrets,
                        GError       **error)
{
  g_autoptr(GString) out = NULL;
  JsonObject *obj = NULL;
  const char *p;

  g_return_val_if_fail (instruction != NULL, NULL);

  if (params != NULL && JSON_NODE_HOLDS_OBJECT (params))
    obj = json_node_get_object (params);
  out = g_string_sized_new (strlen (instruction));

  for (p = instruction; *p != '\0';)
    {
      const char *end;
      g_autofree char *name = NULL;
      JsonNode *value;
      const char *secret_name;

      if (*p != '{')
        {
          g_string_append_c (out, *p++);
          continue;
        }
      for (end = p + 1; is_name_char (*end); end++)
        ;
      if (*end != '}' || end == p + 1 || obj == NULL)
        {
          g_string_append_c (out, *p++);
          continue;
        }
      name = g_strndup (p + 1, end - p - 1);
      if (!json_object_has_member (obj, name))
        {
          g_string_append_c (out, *p++);
          continue;
        }

      value = json_object_get_member (obj, name);
      if (sight_params_is_secret (value, &secret_name))
        {
          g_autoptr(JsonNode) projected = project_secret (secret_name, secrets);
          g_autofree char *text = json_to_string (projected, FALSE);

          g_string_append (out, text);
        }
      else if (JSON_NODE_HOLDS_VALUE (value))
        {
          GType t = json_node_get_value_type (value);

          if (t == G_TYPE_STRING)
            g_string_append (out, json_node_get_string (value));
          else if (t == G_TYPE_BOOLEAN)
            g_string_append (out, json_node_get_boolean (value) ? "true" : "false");
          else
            {
              g_autofree char *text = json_to_string (value, FALSE);
              g_string_append (out, text);
            }
        }
      else
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "placeholder {%s} names a param that is not a string, number, "
                       "boolean or Secret", name);
          return NULL;
        }
      p = end + 1;
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}
