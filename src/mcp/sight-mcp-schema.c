/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-mcp-schema"

#include "config.h"

#include "sight-mcp-schema.h"

#include <math.h>
#include <string.h>

typedef struct {
  GPtrArray *path;     /* JsonNode: string or int segments */
  JsonArray *issues;
} Validation;

static gboolean validate (Validation *v, JsonNode *schema, JsonNode *instance);

static void
issue (Validation *v,
       const char *format,
       ...) G_GNUC_PRINTF (2, 3);

static void
issue (Validation *v,
       const char *format,
       ...)
{
  g_autoptr(JsonObject) object = json_object_new ();
  g_autoptr(JsonArray) path = json_array_new ();
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);

  for (guint i = 0; i < v->path->len; i++)
    json_array_add_element (path, json_node_copy (g_ptr_array_index (v->path, i)));
  json_object_set_array_member (object, "path", g_steal_pointer (&path));
  json_object_set_string_member (object, "message", message);
  json_array_add_object_element (v->issues, g_steal_pointer (&object));
}

void
sight_mcp_schema_add_issue (JsonArray  *issues,
                            const char *path,
                            const char *message)
{
  g_autoptr(JsonObject) object = json_object_new ();
  g_autoptr(JsonArray) segments = json_array_new ();

  if (path != NULL && *path != '\0')
    {
      g_auto(GStrv) parts = g_strsplit (path, "/", -1);

      for (guint i = 0; parts[i] != NULL; i++)
        json_array_add_string_element (segments, parts[i]);
    }
  json_object_set_array_member (object, "path", g_steal_pointer (&segments));
  json_object_set_string_member (object, "message", message);
  json_array_add_object_element (issues, g_steal_pointer (&object));
}

/* The field name for messages: the last path segment, or "arguments". */
static char *
field_name (Validation *v)
{
  JsonNode *last;

  if (v->path->len == 0)
    return g_strdup ("arguments");
  last = g_ptr_array_index (v->path, v->path->len - 1);
  if (json_node_get_value_type (last) == G_TYPE_STRING)
    return g_strdup (json_node_get_string (last));
  return g_strdup_printf ("item %" G_GINT64_FORMAT, json_node_get_int (last));
}

static gboolean
is_integer_node (JsonNode *node)
{
  GType type = json_node_get_value_type (node);

  if (type == G_TYPE_INT64)
    return TRUE;
  if (type == G_TYPE_DOUBLE)
    {
      double d = json_node_get_double (node);
      return isfinite (d) && d == floor (d) && fabs (d) < 9007199254740992.0;
    }
  return FALSE;
}

static gboolean
is_number_node (JsonNode *node)
{
  GType type;

  if (!JSON_NODE_HOLDS_VALUE (node))
    return FALSE;
  type = json_node_get_value_type (node);
  return type == G_TYPE_INT64 || type == G_TYPE_DOUBLE;
}

static double
number_of (JsonNode *node)
{
  if (json_node_get_value_type (node) == G_TYPE_INT64)
    return (double) json_node_get_int (node);
  return json_node_get_double (node);
}

static gboolean
matches_type (JsonNode   *instance,
              const char *type)
{
  if (g_str_equal (type, "object"))
    return JSON_NODE_HOLDS_OBJECT (instance);
  if (g_str_equal (type, "array"))
    return JSON_NODE_HOLDS_ARRAY (instance);
  if (g_str_equal (type, "null"))
    return JSON_NODE_HOLDS_NULL (instance);
  if (!JSON_NODE_HOLDS_VALUE (instance))
    return FALSE;
  if (g_str_equal (type, "string"))
    return json_node_get_value_type (instance) == G_TYPE_STRING;
  if (g_str_equal (type, "boolean"))
    return json_node_get_value_type (instance) == G_TYPE_BOOLEAN;
  if (g_str_equal (type, "number"))
    return is_number_node (instance);
  if (g_str_equal (type, "integer"))
    return is_number_node (instance) && is_integer_node (instance);
  return FALSE;
}

static gboolean
nodes_equal (JsonNode *a,
             JsonNode *b)
{
  if (is_number_node (a) && is_number_node (b))
    return number_of (a) == number_of (b);
  return json_node_equal (a, b);
}

static void
push_name (Validation *v,
           const char *name)
{
  JsonNode *node = json_node_new (JSON_NODE_VALUE);

  json_node_set_string (node, name);
  g_ptr_array_add (v->path, node);
}

static void
push_index (Validation *v,
            guint       index)
{
  JsonNode *node = json_node_new (JSON_NODE_VALUE);

  json_node_set_int (node, index);
  g_ptr_array_add (v->path, node);
}

static void
pop (Validation *v)
{
  g_ptr_array_remove_index (v->path, v->path->len - 1);
}

/* Runs @schema against @instance into a scratch issue list: for anyOf. */
static gboolean
validate_quietly (Validation *v,
                  JsonNode   *schema,
                  JsonNode   *instance,
                  JsonArray **out_issues)
{
  Validation scratch = { v->path, json_array_new () };
  gboolean ok = validate (&scratch, schema, instance);

  if (out_issues != NULL)
    *out_issues = scratch.issues;
  else
    json_array_unref (scratch.issues);
  return ok;
}

static char *
describe_types (JsonNode *type)
{
  if (JSON_NODE_HOLDS_ARRAY (type))
    {
      JsonArray *types = json_node_get_array (type);
      GString *out = g_string_new (NULL);

      for (guint i = 0; i < json_array_get_length (types); i++)
        {
          if (i > 0)
            g_string_append (out, i + 1 == json_array_get_length (types) ? " or " : ", ");
          g_string_append (out, json_array_get_string_element (types, i));
        }
      return g_string_free (out, FALSE);
    }
  return g_strdup (json_node_get_string (type));
}

static gboolean
validate_object (Validation *v,
                 JsonObject *schema,
                 JsonObject *object)
{
  JsonObject *properties = NULL;
  JsonNode *additional = json_object_get_member (schema, "additionalProperties");
  gboolean ok = TRUE;
  g_autoptr(GList) members = NULL;

  if (json_object_has_member (schema, "properties"))
    properties = json_object_get_object_member (schema, "properties");

  if (json_object_has_member (schema, "required"))
    {
      JsonArray *required = json_object_get_array_member (schema, "required");

      for (guint i = 0; i < json_array_get_length (required); i++)
        {
          const char *name = json_array_get_string_element (required, i);

          if (!json_object_has_member (object, name))
            {
              push_name (v, name);
              issue (v, "%s is required", name);
              pop (v);
              ok = FALSE;
            }
        }
    }

  if (json_object_has_member (schema, "dependentRequired"))
    {
      JsonObject *dependent = json_object_get_object_member (schema, "dependentRequired");
      g_autoptr(GList) names = json_object_get_members (dependent);

      for (GList *l = names; l != NULL; l = l->next)
        {
          JsonArray *needs;

          if (!json_object_has_member (object, l->data))
            continue;
          needs = json_object_get_array_member (dependent, l->data);
          for (guint i = 0; i < json_array_get_length (needs); i++)
            {
              const char *need = json_array_get_string_element (needs, i);

              if (!json_object_has_member (object, need))
                {
                  push_name (v, l->data);
                  issue (v, "%s needs %s", (const char *) l->data, need);
                  pop (v);
                  ok = FALSE;
                }
            }
        }
    }

  members = json_object_get_members (object);
  for (GList *l = members; l != NULL; l = l->next)
    {
      const char *name = l->data;
      JsonNode *value = json_object_get_member (object, name);
      JsonNode *property = NULL;

      if (properties != NULL)
        property = json_object_get_member (properties, name);

      push_name (v, name);
      if (property != NULL)
        ok &= validate (v, property, value);
      else if (additional != NULL && JSON_NODE_HOLDS_VALUE (additional) &&
               !json_node_get_boolean (additional))
        {
          g_autofree char *safe = g_utf8_make_valid (name, MIN (strlen (name), 64));
          issue (v, "unknown field %s", safe);
          ok = FALSE;
        }
      else if (additional != NULL && JSON_NODE_HOLDS_OBJECT (additional))
        ok &= validate (v, additional, value);
      pop (v);
    }
  return ok;
}

static gboolean
validate_array (Validation *v,
                JsonObject *schema,
                JsonArray  *array)
{
  g_autofree char *field = field_name (v);
  guint length = json_array_get_length (array);
  gboolean ok = TRUE;

  if (json_object_has_member (schema, "minItems") &&
      length < json_object_get_int_member (schema, "minItems"))
    {
      issue (v, "%s needs at least %" G_GINT64_FORMAT " items", field,
             json_object_get_int_member (schema, "minItems"));
      ok = FALSE;
    }
  if (json_object_has_member (schema, "maxItems") &&
      length > json_object_get_int_member (schema, "maxItems"))
    {
      issue (v, "%s takes at most %" G_GINT64_FORMAT " items", field,
             json_object_get_int_member (schema, "maxItems"));
      ok = FALSE;
    }
  if (json_object_has_member (schema, "items"))
    {
      JsonNode *items = json_object_get_member (schema, "items");

      for (guint i = 0; i < length; i++)
        {
          push_index (v, i);
          ok &= validate (v, items, json_array_get_element (array, i));
          pop (v);
        }
    }
  if (json_object_has_member (schema, "uniqueItems") &&
      json_object_get_boolean_member (schema, "uniqueItems"))
    {
      for (guint i = 0; i < length; i++)
        for (guint j = i + 1; j < length; j++)
          if (nodes_equal (json_array_get_element (array, i), json_array_get_element (array, j)))
            {
              issue (v, "%s has the same item twice", field);
              return FALSE;
            }
    }
  return ok;
}

static gboolean
validate_string (Validation *v,
                 JsonObject *schema,
                 const char *string)
{
  g_autofree char *field = field_name (v);
  glong length;

  if (!g_utf8_validate (string, -1, NULL))
    {
      issue (v, "%s is not valid UTF-8", field);
      return FALSE;
    }
  length = g_utf8_strlen (string, -1);
  if (json_object_has_member (schema, "minLength") &&
      length < json_object_get_int_member (schema, "minLength"))
    {
      if (json_object_get_int_member (schema, "minLength") == 1)
        issue (v, "%s must not be empty", field);
      else
        issue (v, "%s needs at least %" G_GINT64_FORMAT " characters", field,
               json_object_get_int_member (schema, "minLength"));
      return FALSE;
    }
  if (json_object_has_member (schema, "maxLength") &&
      length > json_object_get_int_member (schema, "maxLength"))
    {
      issue (v, "%s takes at most %" G_GINT64_FORMAT " characters", field,
             json_object_get_int_member (schema, "maxLength"));
      return FALSE;
    }
  if (json_object_has_member (schema, "pattern"))
    {
      const char *pattern = json_object_get_string_member (schema, "pattern");

      if (!g_regex_match_simple (pattern, string, 0, 0))
        {
          const char *hint = json_object_get_string_member_with_default (schema, "description",
                                                                          NULL);
          if (hint != NULL)
            issue (v, "%s is not valid: %s", field, hint);
          else
            issue (v, "%s does not match %s", field, pattern);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
validate_number (Validation *v,
                 JsonObject *schema,
                 JsonNode   *instance)
{
  g_autofree char *field = field_name (v);
  double value = number_of (instance);

  if (json_object_has_member (schema, "minimum"))
    {
      JsonNode *min = json_object_get_member (schema, "minimum");
      if (value < number_of (min))
        {
          g_autofree char *text = json_to_string (min, FALSE);
          issue (v, "%s must be at least %s", field, text);
          return FALSE;
        }
    }
  if (json_object_has_member (schema, "maximum"))
    {
      JsonNode *max = json_object_get_member (schema, "maximum");
      if (value > number_of (max))
        {
          g_autofree char *text = json_to_string (max, FALSE);
          issue (v, "%s must be at most %s", field, text);
          return FALSE;
        }
    }
  if (json_object_has_member (schema, "exclusiveMinimum"))
    {
      JsonNode *min = json_object_get_member (schema, "exclusiveMinimum");
      if (value <= number_of (min))
        {
          g_autofree char *text = json_to_string (min, FALSE);
          issue (v, "%s must be more than %s", field, text);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
validate (Validation *v,
          JsonNode   *schema_node,
          JsonNode   *instance)
{
  JsonObject *schema;
  g_autofree char *field = NULL;
  gboolean ok = TRUE;

  if (JSON_NODE_HOLDS_VALUE (schema_node))
    {
      if (json_node_get_boolean (schema_node))
        return TRUE;
      field = field_name (v);
      issue (v, "%s is not allowed", field);
      return FALSE;
    }
  if (!JSON_NODE_HOLDS_OBJECT (schema_node))
    return TRUE;
  schema = json_node_get_object (schema_node);
  field = field_name (v);

  if (json_object_has_member (schema, "type"))
    {
      JsonNode *type = json_object_get_member (schema, "type");
      gboolean matched = FALSE;

      if (JSON_NODE_HOLDS_ARRAY (type))
        {
          JsonArray *types = json_node_get_array (type);
          for (guint i = 0; i < json_array_get_length (types) && !matched; i++)
            matched = matches_type (instance, json_array_get_string_element (types, i));
        }
      else
        matched = matches_type (instance, json_node_get_string (type));

      if (!matched)
        {
          g_autofree char *types = describe_types (type);
          issue (v, "%s must be %s %s", field,
                 strchr ("aeiou", types[0]) != NULL ? "an" : "a", types);
          return FALSE;
        }
    }

  if (json_object_has_member (schema, "const") &&
      !nodes_equal (json_object_get_member (schema, "const"), instance))
    {
      g_autofree char *text = json_to_string (json_object_get_member (schema, "const"), FALSE);
      issue (v, "%s must be %s", field, text);
      return FALSE;
    }

  if (json_object_has_member (schema, "enum"))
    {
      JsonArray *values = json_object_get_array_member (schema, "enum");
      gboolean found = FALSE;

      for (guint i = 0; i < json_array_get_length (values) && !found; i++)
        found = nodes_equal (json_array_get_element (values, i), instance);
      if (!found)
        {
          g_autoptr(GString) list = g_string_new (NULL);

          for (guint i = 0; i < json_array_get_length (values); i++)
            {
              g_autofree char *text = json_to_string (json_array_get_element (values, i), FALSE);
              if (i > 0)
                g_string_append (list, i + 1 == json_array_get_length (values) ? " or " : ", ");
              g_string_append (list, text);
            }
          issue (v, "%s must be one of %s", field, list->str);
          return FALSE;
        }
    }

  if (json_object_has_member (schema, "anyOf") || json_object_has_member (schema, "oneOf"))
    {
      gboolean one = !json_object_has_member (schema, "anyOf");
      JsonArray *branches = json_object_get_array_member (schema, one ? "oneOf" : "anyOf");
      g_autoptr(JsonArray) first_issues = NULL;
      guint passed = 0;

      for (guint i = 0; i < json_array_get_length (branches); i++)
        {
          JsonArray *branch_issues = NULL;

          if (validate_quietly (v, json_array_get_element (branches, i), instance, &branch_issues))
            passed++;
          if (first_issues == NULL && json_array_get_length (branch_issues) > 0 &&
              JSON_NODE_HOLDS_OBJECT (json_array_get_element (branches, i)) &&
              json_object_has_member (json_array_get_object_element (branches, i), "type") &&
              matches_type (instance,
                            json_object_get_string_member (
                              json_array_get_object_element (branches, i), "type")))
            first_issues = json_array_ref (branch_issues);
          json_array_unref (branch_issues);
        }
      if (passed == 0)
        {
          /* Report the problems of the branch of the instance's own type
           * when there is one: that is what the caller meant to send. */
          if (first_issues != NULL)
            for (guint i = 0; i < json_array_get_length (first_issues); i++)
              json_array_add_element (v->issues,
                                      json_node_copy (json_array_get_element (first_issues, i)));
          else
            {
              const char *hint = json_object_get_string_member_with_default (schema,
                                                                              "description",
                                                                              NULL);
              if (hint != NULL)
                issue (v, "%s is not valid: %s", field, hint);
              else
                issue (v, "%s matches none of the allowed forms", field);
            }
          return FALSE;
        }
      if (one && passed > 1)
        {
          issue (v, "%s matches more than one of the allowed forms", field);
          return FALSE;
        }
    }

  if (JSON_NODE_HOLDS_OBJECT (instance))
    ok &= validate_object (v, schema, json_node_get_object (instance));
  else if (JSON_NODE_HOLDS_ARRAY (instance))
    ok &= validate_array (v, schema, json_node_get_array (instance));
  else if (JSON_NODE_HOLDS_VALUE (instance) &&
           json_node_get_value_type (instance) == G_TYPE_STRING)
    ok &= validate_string (v, schema, json_node_get_string (instance));
  else if (is_number_node (instance))
    ok &= validate_number (v, schema, instance);

  return ok;
}

gboolean
sight_mcp_schema_validate (JsonNode  *schema,
                           JsonNode  *instance,
                           JsonArray *issues)
{
  g_autoptr(GPtrArray) path = g_ptr_array_new_with_free_func ((GDestroyNotify) json_node_unref);
  Validation v = { path, issues };

  g_return_val_if_fail (schema != NULL, FALSE);
  g_return_val_if_fail (instance != NULL, FALSE);
  g_return_val_if_fail (issues != NULL, FALSE);

  return validate (&v, schema, instance);
}
