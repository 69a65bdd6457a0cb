/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-json-schema"

#include "config.h"

#include "sight-json-schema.h"

#include <math.h>
#include <string.h>

#include "sight-error.h"
#include "sight-json.h"

#define MAX_ERRORS 32
#define MAX_DEPTH 512
#define MAX_MESSAGE 2000

struct _SightJsonSchema {
  gatomicrefcount  ref_count;
  JsonNode        *root;
  gboolean         draft7;
  /* owned: pattern string → GRegex */
  GHashTable      *regexes;
  /* owned keys: $ref string → JsonNode borrowed from root */
  GHashTable      *refs;
};

G_DEFINE_BOXED_TYPE (SightJsonSchema, sight_json_schema,
                     sight_json_schema_ref, sight_json_schema_unref)

void
sight_json_schema_error_free (SightJsonSchemaError *err)
{
  if (err == NULL)
    return;
  g_free (err->path);
  g_free (err->reason);
  g_free (err);
}

/* ---- JSON helpers ------------------------------------------------------- */

static gboolean
node_is_number (JsonNode *node)
{
  GType t;

  if (node == NULL || JSON_NODE_TYPE (node) != JSON_NODE_VALUE)
    return FALSE;
  t = json_node_get_value_type (node);
  return t == G_TYPE_INT64 || t == G_TYPE_DOUBLE;
}

static gboolean
node_is_int64 (JsonNode *node)
{
  return node_is_number (node) && json_node_get_value_type (node) == G_TYPE_INT64;
}

static double
node_number (JsonNode *node)
{
  if (json_node_get_value_type (node) == G_TYPE_INT64)
    return (double) json_node_get_int (node);
  return json_node_get_double (node);
}

static gboolean
node_is_integer (JsonNode *node)
{
  double d;

  if (!node_is_number (node))
    return FALSE;
  if (node_is_int64 (node))
    return TRUE;
  d = json_node_get_double (node);
  return isfinite (d) && floor (d) == d;
}

static gboolean
node_is_string (JsonNode *node)
{
  return node != NULL && JSON_NODE_TYPE (node) == JSON_NODE_VALUE &&
         json_node_get_value_type (node) == G_TYPE_STRING;
}

static gboolean
node_is_boolean (JsonNode *node)
{
  return node != NULL && JSON_NODE_TYPE (node) == JSON_NODE_VALUE &&
         json_node_get_value_type (node) == G_TYPE_BOOLEAN;
}

static gboolean
node_is_object (JsonNode *node)
{
  return node != NULL && JSON_NODE_HOLDS_OBJECT (node);
}

static gboolean
node_is_array (JsonNode *node)
{
  return node != NULL && JSON_NODE_HOLDS_ARRAY (node);
}

static gboolean
node_is_null (JsonNode *node)
{
  return node != NULL && JSON_NODE_HOLDS_NULL (node);
}

/* -1, 0 or 1; both must be numbers.  Two int64s compare exactly. */
static int
number_compare (JsonNode *a,
                JsonNode *b)
{
  if (node_is_int64 (a) && node_is_int64 (b))
    {
      gint64 x = json_node_get_int (a), y = json_node_get_int (b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
  else
    {
      double x = node_number (a), y = node_number (b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
}

static const char *
node_type_name (JsonNode *node)
{
  if (node == NULL || node_is_null (node))
    return "null";
  if (node_is_object (node))
    return "object";
  if (node_is_array (node))
    return "array";
  if (node_is_boolean (node))
    return "boolean";
  if (node_is_string (node))
    return "string";
  if (node_is_integer (node))
    return "integer";
  return "number";
}

gboolean
sight_json_equal (JsonNode *a,
                  JsonNode *b)
{
  if (a == NULL || b == NULL)
    return a == b;
  if (node_is_null (a) || node_is_null (b))
    return node_is_null (a) && node_is_null (b);
  if (node_is_number (a) || node_is_number (b))
    return node_is_number (a) && node_is_number (b) && number_compare (a, b) == 0;
  if (node_is_boolean (a) || node_is_boolean (b))
    return node_is_boolean (a) && node_is_boolean (b) &&
           !json_node_get_boolean (a) == !json_node_get_boolean (b);
  if (node_is_string (a) || node_is_string (b))
    return node_is_string (a) && node_is_string (b) &&
           g_str_equal (json_node_get_string (a), json_node_get_string (b));
  if (node_is_array (a) && node_is_array (b))
    {
      JsonArray *x = json_node_get_array (a), *y = json_node_get_array (b);
      guint n = json_array_get_length (x);

      if (n != json_array_get_length (y))
        return FALSE;
      for (guint i = 0; i < n; i++)
        if (!sight_json_equal (json_array_get_element (x, i), json_array_get_element (y, i)))
          return FALSE;
      return TRUE;
    }
  if (node_is_object (a) && node_is_object (b))
    {
      JsonObject *x = json_node_get_object (a), *y = json_node_get_object (b);
      JsonObjectIter iter;
      const char *key;
      JsonNode *value;

      if (json_object_get_size (x) != json_object_get_size (y))
        return FALSE;
      json_object_iter_init_ordered (&iter, x);
      while (json_object_iter_next_ordered (&iter, &key, &value))
        {
          if (!json_object_has_member (y, key))
            return FALSE;
          if (!sight_json_equal (value, json_object_get_member (y, key)))
            return FALSE;
        }
      return TRUE;
    }
  return FALSE;
}

char *
sight_json_pointer_append (const char *path,
                           const char *token)
{
  GString *out = g_string_new (path);

  g_string_append_c (out, '/');
  for (const char *p = token; *p; p++)
    {
      if (*p == '~')
        g_string_append (out, "~0");
      else if (*p == '/')
        g_string_append (out, "~1");
      else
        g_string_append_c (out, *p);
    }
  return g_string_free (out, FALSE);
}

static char *
pointer_append_index (const char *path,
                      guint       index)
{
  return g_strdup_printf ("%s/%u", path, index);
}

/* Unescapes one reference token; NULL for a malformed "~" escape. */
static char *
pointer_unescape_token (const char *token,
                        gsize       len)
{
  GString *out = g_string_sized_new (len);

  for (gsize i = 0; i < len; i++)
    {
      if (token[i] != '~')
        {
          g_string_append_c (out, token[i]);
          continue;
        }
      if (i + 1 < len && token[i + 1] == '0')
        g_string_append_c (out, '~');
      else if (i + 1 < len && token[i + 1] == '1')
        g_string_append_c (out, '/');
      else
        {
          g_string_free (out, TRUE);
          return NULL;
        }
      i++;
    }
  return g_string_free (out, FALSE);
}

JsonNode *
sight_json_pointer_resolve (JsonNode   *root,
                            const char *pointer)
{
  JsonNode *node = root;
  const char *p;

  g_return_val_if_fail (pointer != NULL, NULL);

  if (*pointer == '\0')
    return root;
  if (*pointer != '/')
    return NULL;

  p = pointer + 1;
  for (;;)
    {
      const char *end = strchr (p, '/');
      gsize len = end ? (gsize) (end - p) : strlen (p);
      g_autofree char *token = pointer_unescape_token (p, len);

      if (token == NULL || node == NULL)
        return NULL;
      if (node_is_object (node))
        {
          JsonObject *obj = json_node_get_object (node);

          if (!json_object_has_member (obj, token))
            return NULL;
          node = json_object_get_member (obj, token);
        }
      else if (node_is_array (node))
        {
          JsonArray *arr = json_node_get_array (node);
          char *endp = NULL;
          guint64 idx;

          if (token[0] == '\0' || (token[0] == '0' && token[1] != '\0') ||
              !g_ascii_isdigit (token[0]))
            return NULL;
          idx = g_ascii_strtoull (token, &endp, 10);
          if (*endp != '\0' || idx >= json_array_get_length (arr))
            return NULL;
          node = json_array_get_element (arr, (guint) idx);
        }
      else
        return NULL;

      if (end == NULL)
        break;
      p = end + 1;
    }
  return node;
}

/* ---- Schema checking (is the schema itself valid?) ---------------------- */

typedef struct {
  SightJsonSchema  *self;
  GHashTable       *checked;
  GError          **error;
} CheckCtx;

static gboolean check_schema (CheckCtx   *c,
                              JsonNode   *node,
                              const char *path);

G_GNUC_PRINTF (3, 4)
static gboolean
check_fail (CheckCtx   *c,
            const char *path,
            const char *format,
            ...)
{
  g_autofree char *reason = NULL;
  va_list args;

  va_start (args, format);
  reason = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (c->error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
               "schema %s: %s", *path ? path : "(root)", reason);
  return FALSE;
}

static const char *const type_names[] = {
  "null", "boolean", "object", "array", "number", "integer", "string",
};

static gboolean
is_type_name (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (type_names); i++)
    if (g_str_equal (type_names[i], name))
      return TRUE;
  return FALSE;
}

/* Rewrites the ECMA-262 escapes whose PCRE meaning differs.  GRegex matches code
 * points with Unicode classes (PCRE2_UCP), while ECMA's \d and \w are ASCII; ECMA
 * writes code points as \uXXXX or \u{X…}, which PCRE spells \x{…}; \v is the vertical
 * tab; a letter escape ECMA does not define (\Z, \A, \z, \h, …) is the letter itself;
 * "[]" matches nothing and "[^]" any character. */
static char *
ecma_to_pcre (const char *pattern)
{
  GString *out = g_string_sized_new (strlen (pattern) + 16);
  gboolean in_class = FALSE;
  const char *p = pattern;

  while (*p != '\0')
    {
      char c = *p;

      if (c == '\\' && p[1] != '\0')
        {
          char e = p[1];

          p += 2;
          switch (e)
            {
            case 'd':
              g_string_append (out, in_class ? "0-9" : "[0-9]");
              break;
            case 'D':
              g_string_append (out, in_class ? "\\x{0}-/:-\\x{10ffff}" : "[^0-9]");
              break;
            case 'w':
              g_string_append (out, in_class ? "A-Za-z0-9_" : "[A-Za-z0-9_]");
              break;
            case 'W':
              g_string_append (out, in_class ? "\\x{0}-/:-@\\[-\\^`{-\\x{10ffff}"
                                             : "[^A-Za-z0-9_]");
              break;
            case 'v':
              g_string_append (out, "\\x{0b}");
              break;
            case 'u':
              if (p[0] == '{')
                {
                  const char *end = p + 1;

                  while (g_ascii_isxdigit (*end))
                    end++;
                  if (*end == '}' && end > p + 1)
                    {
                      g_string_append (out, "\\x");
                      g_string_append_len (out, p, end - p + 1);
                      p = end + 1;
                      break;
                    }
                }
              else if (g_ascii_isxdigit (p[0]) && g_ascii_isxdigit (p[1]) &&
                       g_ascii_isxdigit (p[2]) && g_ascii_isxdigit (p[3]))
                {
                  g_string_append_printf (out, "\\x{%.4s}", p);
                  p += 4;
                  break;
                }
              g_string_append_c (out, 'u');
              break;
            default:
              if (g_ascii_isalpha (e) && strchr ("bBdDwWsSfnrtvcxukpP", e) == NULL)
                g_string_append_c (out, e);
              else
                {
                  g_string_append_c (out, '\\');
                  g_string_append_c (out, e);
                }
              break;
            }
          continue;
        }
      if (!in_class && c == '[')
        {
          if (g_str_has_prefix (p, "[]"))
            {
              g_string_append (out, "(?!)");
              p += 2;
              continue;
            }
          if (g_str_has_prefix (p, "[^]"))
            {
              g_string_append (out, "[\\s\\S]");
              p += 3;
              continue;
            }
          in_class = TRUE;
          g_string_append_c (out, c);
          p++;
          /* A "]" right after "[" or "[^" would close an ECMA class, handled above;
           * PCRE would take it literally, so nothing more to do here. */
          if (*p == '^')
            g_string_append_c (out, *p++);
          continue;
        }
      if (in_class && c == ']')
        in_class = FALSE;
      g_string_append_c (out, c);
      p++;
    }
  return g_string_free (out, FALSE);
}

static GRegex *
compile_regex (SightJsonSchema  *self,
               const char       *pattern,
               GError          **error)
{
  GRegex *regex = g_hash_table_lookup (self->regexes, pattern);
  g_autofree char *pcre = NULL;

  if (regex != NULL)
    return regex;
  /* ECMA-262 semantics: no implicit multiline, and "$" only at the very end. */
  pcre = ecma_to_pcre (pattern);
  regex = g_regex_new (pcre, G_REGEX_OPTIMIZE | G_REGEX_DOLLAR_ENDONLY, 0, error);
  if (regex == NULL)
    return NULL;
  g_hash_table_insert (self->regexes, g_strdup (pattern), regex);
  return regex;
}

/* Maps a local $ref to its target, or NULL. */
static JsonNode *
resolve_ref (SightJsonSchema *self,
             const char      *ref)
{
  const char *fragment = NULL;
  g_autofree char *decoded = NULL;

  if (ref[0] == '#')
    fragment = ref + 1;
  else if (node_is_object (self->root))
    {
      /* An absolute ref naming the root's own $id is local too. */
      const char *id = json_object_get_string_member_with_default (
          json_node_get_object (self->root), "$id", NULL);
      const char *hash = strchr (ref, '#');
      gsize base_len = hash ? (gsize) (hash - ref) : strlen (ref);

      if (id != NULL)
        {
          const char *id_hash = strchr (id, '#');
          gsize id_len = id_hash ? (gsize) (id_hash - id) : strlen (id);

          if (id_len == base_len && strncmp (id, ref, id_len) == 0)
            fragment = hash ? hash + 1 : "";
        }
    }
  if (fragment == NULL)
    return NULL;

  decoded = g_uri_unescape_string (fragment, NULL);
  if (decoded == NULL)
    return NULL;
  return sight_json_pointer_resolve (self->root, decoded);
}

static gboolean
check_schema_member (CheckCtx   *c,
                     JsonNode   *node,
                     const char *path,
                     const char *key)
{
  g_autofree char *sub = sight_json_pointer_append (path, key);
  return check_schema (c, node, sub);
}

static gboolean
check_nonneg_int (CheckCtx   *c,
                  JsonNode   *value,
                  const char *path)
{
  if (!node_is_integer (value) || node_number (value) < 0)
    return check_fail (c, path, "must be a non-negative integer");
  return TRUE;
}

static gboolean
check_schema_map (CheckCtx   *c,
                  JsonNode   *value,
                  const char *path,
                  gboolean    keys_are_patterns)
{
  JsonObjectIter iter;
  const char *key;
  JsonNode *sub;

  if (!node_is_object (value))
    return check_fail (c, path, "must be an object of schemas");
  json_object_iter_init_ordered (&iter, json_node_get_object (value));
  while (json_object_iter_next_ordered (&iter, &key, &sub))
    {
      if (keys_are_patterns)
        {
          g_autoptr(GError) regex_error = NULL;

          if (compile_regex (c->self, key, &regex_error) == NULL)
            {
              g_autofree char *kp = sight_json_pointer_append (path, key);
              return check_fail (c, kp, "invalid regular expression: %s", regex_error->message);
            }
        }
      if (!check_schema_member (c, sub, path, key))
        return FALSE;
    }
  return TRUE;
}

static gboolean
check_schema_array (CheckCtx   *c,
                    JsonNode   *value,
                    const char *path)
{
  JsonArray *arr;

  if (!node_is_array (value) || json_array_get_length (json_node_get_array (value)) == 0)
    return check_fail (c, path, "must be a non-empty array of schemas");
  arr = json_node_get_array (value);
  for (guint i = 0; i < json_array_get_length (arr); i++)
    {
      g_autofree char *sub = pointer_append_index (path, i);

      if (!check_schema (c, json_array_get_element (arr, i), sub))
        return FALSE;
    }
  return TRUE;
}

static gboolean
check_string_array (CheckCtx   *c,
                    JsonNode   *value,
                    const char *path)
{
  JsonArray *arr;

  if (!node_is_array (value))
    return check_fail (c, path, "must be an array of strings");
  arr = json_node_get_array (value);
  for (guint i = 0; i < json_array_get_length (arr); i++)
    if (!node_is_string (json_array_get_element (arr, i)))
      {
        g_autofree char *sub = pointer_append_index (path, i);
        return check_fail (c, sub, "must be a string");
      }
  return TRUE;
}

static gboolean
check_keyword (CheckCtx   *c,
               const char *key,
               JsonNode   *value,
               const char *path)
{
  if (g_str_equal (key, "type"))
    {
      if (node_is_string (value))
        {
          if (!is_type_name (json_node_get_string (value)))
            return check_fail (c, path, "unknown type name \"%s\"", json_node_get_string (value));
          return TRUE;
        }
      if (node_is_array (value))
        {
          JsonArray *arr = json_node_get_array (value);

          for (guint i = 0; i < json_array_get_length (arr); i++)
            {
              JsonNode *t = json_array_get_element (arr, i);
              g_autofree char *sub = pointer_append_index (path, i);

              if (!node_is_string (t))
                return check_fail (c, sub, "must be a type name");
              if (!is_type_name (json_node_get_string (t)))
                return check_fail (c, sub, "unknown type name \"%s\"", json_node_get_string (t));
              for (guint j = 0; j < i; j++)
                if (g_str_equal (json_node_get_string (t),
                                 json_array_get_string_element (arr, j)))
                  return check_fail (c, sub, "duplicate type name");
            }
          return TRUE;
        }
      return check_fail (c, path, "must be a type name or an array of type names");
    }

  if (g_str_equal (key, "properties") || g_str_equal (key, "$defs") ||
      g_str_equal (key, "definitions") || g_str_equal (key, "dependentSchemas"))
    return check_schema_map (c, value, path, FALSE);

  if (g_str_equal (key, "patternProperties"))
    return check_schema_map (c, value, path, TRUE);

  if (g_str_equal (key, "additionalProperties") || g_str_equal (key, "additionalItems") ||
      g_str_equal (key, "propertyNames") || g_str_equal (key, "contains") ||
      g_str_equal (key, "not") || g_str_equal (key, "if") || g_str_equal (key, "then") ||
      g_str_equal (key, "else"))
    return check_schema (c, value, path);

  if (g_str_equal (key, "items"))
    {
      /* An array of schemas is the draft-07 tuple form, still accepted. */
      if (node_is_array (value))
        {
          JsonArray *arr = json_node_get_array (value);

          for (guint i = 0; i < json_array_get_length (arr); i++)
            {
              g_autofree char *sub = pointer_append_index (path, i);

              if (!check_schema (c, json_array_get_element (arr, i), sub))
                return FALSE;
            }
          return TRUE;
        }
      return check_schema (c, value, path);
    }

  if (g_str_equal (key, "prefixItems") || g_str_equal (key, "allOf") ||
      g_str_equal (key, "anyOf") || g_str_equal (key, "oneOf"))
    return check_schema_array (c, value, path);

  if (g_str_equal (key, "required"))
    return check_string_array (c, value, path);

  if (g_str_equal (key, "dependentRequired") || g_str_equal (key, "dependencies"))
    {
      JsonObjectIter iter;
      const char *name;
      JsonNode *sub;

      if (!node_is_object (value))
        return check_fail (c, path, "must be an object");
      json_object_iter_init_ordered (&iter, json_node_get_object (value));
      while (json_object_iter_next_ordered (&iter, &name, &sub))
        {
          g_autofree char *sp = sight_json_pointer_append (path, name);

          if (node_is_array (sub))
            {
              if (!check_string_array (c, sub, sp))
                return FALSE;
            }
          else if (g_str_equal (key, "dependencies"))
            {
              if (!check_schema (c, sub, sp))
                return FALSE;
            }
          else
            return check_fail (c, sp, "must be an array of strings");
        }
      return TRUE;
    }

  if (g_str_equal (key, "enum"))
    {
      if (!node_is_array (value))
        return check_fail (c, path, "must be an array");
      return TRUE;
    }

  if (g_str_equal (key, "minimum") || g_str_equal (key, "maximum") ||
      g_str_equal (key, "exclusiveMinimum") || g_str_equal (key, "exclusiveMaximum"))
    {
      if (!node_is_number (value))
        return check_fail (c, path, "must be a number");
      return TRUE;
    }

  if (g_str_equal (key, "multipleOf"))
    {
      if (!node_is_number (value) || node_number (value) <= 0)
        return check_fail (c, path, "must be a number greater than 0");
      return TRUE;
    }

  if (g_str_equal (key, "minLength") || g_str_equal (key, "maxLength") ||
      g_str_equal (key, "minItems") || g_str_equal (key, "maxItems") ||
      g_str_equal (key, "minProperties") || g_str_equal (key, "maxProperties") ||
      g_str_equal (key, "minContains") || g_str_equal (key, "maxContains"))
    return check_nonneg_int (c, value, path);

  if (g_str_equal (key, "pattern"))
    {
      g_autoptr(GError) regex_error = NULL;

      if (!node_is_string (value))
        return check_fail (c, path, "must be a string");
      if (compile_regex (c->self, json_node_get_string (value), &regex_error) == NULL)
        return check_fail (c, path, "invalid regular expression: %s", regex_error->message);
      return TRUE;
    }

  if (g_str_equal (key, "uniqueItems"))
    {
      if (!node_is_boolean (value))
        return check_fail (c, path, "must be a boolean");
      return TRUE;
    }

  if (g_str_equal (key, "$ref"))
    {
      const char *ref;
      JsonNode *target;

      if (!node_is_string (value))
        return check_fail (c, path, "must be a string");
      ref = json_node_get_string (value);
      target = resolve_ref (c->self, ref);
      if (target == NULL)
        return check_fail (c, path, "unresolvable $ref \"%s\" (only references inside "
                           "this schema are supported)", ref);
      g_hash_table_insert (c->self->refs, g_strdup (ref), target);
      {
        g_autofree char *decoded = g_uri_unescape_string (strchr (ref, '#') ? strchr (ref, '#') + 1 : "", NULL);
        return check_schema (c, target, decoded ? decoded : "");
      }
    }

  if (g_str_equal (key, "unevaluatedProperties") || g_str_equal (key, "unevaluatedItems") ||
      g_str_equal (key, "$dynamicRef") || g_str_equal (key, "$recursiveRef"))
    return check_fail (c, path, "keyword %s is not supported", key);

  /* Annotations and unknown keywords are ignored, as the specification says. */
  return TRUE;
}

static gboolean
check_schema (CheckCtx   *c,
              JsonNode   *node,
              const char *path)
{
  JsonObjectIter iter;
  const char *key;
  JsonNode *value;

  if (g_hash_table_contains (c->checked, node))
    return TRUE;
  g_hash_table_add (c->checked, node);

  if (node_is_boolean (node))
    return TRUE;
  if (!node_is_object (node))
    return check_fail (c, path, "a schema must be an object or a boolean");

  json_object_iter_init_ordered (&iter, json_node_get_object (node));
  while (json_object_iter_next_ordered (&iter, &key, &value))
    {
      g_autofree char *sub = sight_json_pointer_append (path, key);

      if (!check_keyword (c, key, value, sub))
        return FALSE;
    }
  return TRUE;
}

/* ---- Construction -------------------------------------------------------- */

SightJsonSchema *
sight_json_schema_new_for_dialect (JsonNode               *schema,
                                   SightJsonSchemaDialect  dialect,
                                   GError                **error)
{
  g_autoptr(SightJsonSchema) self = NULL;
  g_autoptr(GHashTable) checked = NULL;
  CheckCtx c;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (schema == NULL)
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                           "schema (root): no schema given");
      return NULL;
    }

  self = g_new0 (SightJsonSchema, 1);
  g_atomic_ref_count_init (&self->ref_count);
  self->root = json_node_copy (schema);
  self->regexes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                         (GDestroyNotify) g_regex_unref);
  self->refs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  if (dialect == SIGHT_JSON_SCHEMA_DIALECT_AUTO)
    {
      const char *uri = NULL;

      if (node_is_object (self->root))
        uri = json_object_get_string_member_with_default (json_node_get_object (self->root),
                                                          "$schema", NULL);
      dialect = SIGHT_JSON_SCHEMA_DIALECT_2020_12;
      if (uri != NULL && (strstr (uri, "draft-07") || strstr (uri, "draft-06") ||
                          strstr (uri, "draft-04")))
        dialect = SIGHT_JSON_SCHEMA_DIALECT_DRAFT_7;
    }
  self->draft7 = dialect == SIGHT_JSON_SCHEMA_DIALECT_DRAFT_7;

  checked = g_hash_table_new (NULL, NULL);
  c = (CheckCtx) { self, checked, error };
  if (!check_schema (&c, self->root, ""))
    return NULL;

  return g_steal_pointer (&self);
}

SightJsonSchema *
sight_json_schema_new (JsonNode  *schema,
                       GError   **error)
{
  return sight_json_schema_new_for_dialect (schema, SIGHT_JSON_SCHEMA_DIALECT_AUTO, error);
}

SightJsonSchema *
sight_json_schema_new_from_string (const char  *json,
                                   GError     **error)
{
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) parse_error = NULL;

  g_return_val_if_fail (json != NULL, NULL);

  root = sight_json_parse (json, -1, SIGHT_JSON_MAX_DEPTH, &parse_error);
  if (root == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "schema is not valid JSON: %s", parse_error->message);
      return NULL;
    }
  return sight_json_schema_new (root, error);
}

SightJsonSchema *
sight_json_schema_ref (SightJsonSchema *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

void
sight_json_schema_unref (SightJsonSchema *self)
{
  g_return_if_fail (self != NULL);
  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;
  json_node_unref (self->root);
  g_hash_table_unref (self->regexes);
  g_hash_table_unref (self->refs);
  g_free (self);
}

JsonNode *
sight_json_schema_get_node (SightJsonSchema *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->root;
}

/* ---- Validation ------------------------------------------------------- */

typedef struct {
  SightJsonSchema *self;
  /* NULL: stop at the first failure and record nothing */
  GPtrArray       *errors;
  guint            depth;
} ValCtx;

static gboolean validate (ValCtx     *v,
                          JsonNode   *schema,
                          JsonNode   *inst,
                          const char *path);

G_GNUC_PRINTF (3, 4)
static gboolean
fail (ValCtx     *v,
      const char *path,
      const char *format,
      ...)
{
  SightJsonSchemaError *err;
  va_list args;

  if (v->errors == NULL || v->errors->len >= MAX_ERRORS)
    return FALSE;
  err = g_new0 (SightJsonSchemaError, 1);
  err->path = g_strdup (path);
  va_start (args, format);
  err->reason = g_strdup_vprintf (format, args);
  va_end (args);
  g_ptr_array_add (v->errors, err);
  return FALSE;
}

/* Whether to keep evaluating after a failure. */
static inline gboolean
go_on (ValCtx *v)
{
  return v->errors != NULL && v->errors->len < MAX_ERRORS;
}

static gboolean
quiet_valid (ValCtx     *v,
             JsonNode   *schema,
             JsonNode   *inst,
             const char *path)
{
  ValCtx q = { v->self, NULL, v->depth };
  return validate (&q, schema, inst, path);
}

/* When errors are collected: " (0: reason; 1: reason)", the first failure of each
 * branch of an anyOf / oneOf that none matched, so a repair prompt can say what
 * each alternative wanted.  "" when not collecting. */
static char *
branch_reasons (ValCtx     *v,
                JsonArray  *branches,
                JsonNode   *inst,
                const char *path)
{
  g_autoptr(GString) out = NULL;
  guint n = json_array_get_length (branches);

  if (v->errors == NULL)
    return g_strdup ("");
  out = g_string_new (" (");
  for (guint i = 0; i < n && i < 8; i++)
    {
      g_autoptr(GPtrArray) errors =
        g_ptr_array_new_with_free_func ((GDestroyNotify) sight_json_schema_error_free);
      ValCtx sub = { v->self, errors, v->depth };
      SightJsonSchemaError *first;
      g_autofree char *reason = NULL;

      validate (&sub, json_array_get_element (branches, i), inst, path);
      if (errors->len == 0)
        continue;
      first = g_ptr_array_index (errors, 0);
      reason = sight_text_sanitize (first->reason, 160);
      if (out->len > 2)
        g_string_append (out, "; ");
      if (g_str_equal (first->path, path))
        g_string_append_printf (out, "%u: %s", i, reason);
      else
        g_string_append_printf (out, "%u: %s %s", i, first->path + strlen (path), reason);
      if (out->len > 400)
        break;
    }
  if (out->len == 2)
    return g_strdup ("");
  g_string_append_c (out, ')');
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* JSON text of @node, cut to a prompt-friendly size. */
static char *
short_json (JsonNode *node)
{
  g_autofree char *text = json_to_string (node, FALSE);

  if (strlen (text) > 120)
    {
      const char *end = g_utf8_find_prev_char (text, text + 117);
      return g_strdup_printf ("%.*s…", (int) (end - text), text);
    }
  return g_steal_pointer (&text);
}

static gboolean
type_matches (JsonNode   *inst,
              const char *name)
{
  if (g_str_equal (name, "null"))
    return node_is_null (inst);
  if (g_str_equal (name, "boolean"))
    return node_is_boolean (inst);
  if (g_str_equal (name, "object"))
    return node_is_object (inst);
  if (g_str_equal (name, "array"))
    return node_is_array (inst);
  if (g_str_equal (name, "string"))
    return node_is_string (inst);
  if (g_str_equal (name, "number"))
    return node_is_number (inst);
  if (g_str_equal (name, "integer"))
    return node_is_integer (inst);
  return FALSE;
}

static gboolean
validate_type (ValCtx     *v,
               JsonNode   *value,
               JsonNode   *inst,
               const char *path)
{
  if (node_is_string (value))
    {
      if (type_matches (inst, json_node_get_string (value)))
        return TRUE;
      return fail (v, path, "must be %s %s, not %s",
                   strchr ("aeiou", json_node_get_string (value)[0]) ? "an" : "a",
                   json_node_get_string (value), node_type_name (inst));
    }
  else
    {
      JsonArray *arr = json_node_get_array (value);
      g_autoptr(GString) names = g_string_new (NULL);

      for (guint i = 0; i < json_array_get_length (arr); i++)
        {
          const char *name = json_array_get_string_element (arr, i);

          if (type_matches (inst, name))
            return TRUE;
          g_string_append_printf (names, "%s%s", i ? ", " : "", name);
        }
      return fail (v, path, "must be of type %s, not %s", names->str, node_type_name (inst));
    }
}

static gboolean
validate_number (ValCtx     *v,
                 JsonObject *schema,
                 JsonNode   *inst,
                 const char *path)
{
  gboolean ok = TRUE;
  JsonNode *limit;

  if ((limit = json_object_get_member (schema, "minimum")) && number_compare (inst, limit) < 0)
    {
      g_autofree char *t = short_json (limit);
      ok = fail (v, path, "must be at least %s", t);
      if (!go_on (v)) return FALSE;
    }
  if ((limit = json_object_get_member (schema, "maximum")) && number_compare (inst, limit) > 0)
    {
      g_autofree char *t = short_json (limit);
      ok = fail (v, path, "must be at most %s", t);
      if (!go_on (v)) return FALSE;
    }
  if ((limit = json_object_get_member (schema, "exclusiveMinimum")) &&
      number_compare (inst, limit) <= 0)
    {
      g_autofree char *t = short_json (limit);
      ok = fail (v, path, "must be greater than %s", t);
      if (!go_on (v)) return FALSE;
    }
  if ((limit = json_object_get_member (schema, "exclusiveMaximum")) &&
      number_compare (inst, limit) >= 0)
    {
      g_autofree char *t = short_json (limit);
      ok = fail (v, path, "must be less than %s", t);
      if (!go_on (v)) return FALSE;
    }
  if ((limit = json_object_get_member (schema, "multipleOf")))
    {
      gboolean multiple;

      if (node_is_int64 (inst) && node_is_int64 (limit))
        multiple = json_node_get_int (inst) % json_node_get_int (limit) == 0;
      else
        {
          double q = node_number (inst) / node_number (limit);

          /* A quotient within rounding error of an integer counts: 0.0075 is a
           * multiple of 0.0001 although 0.0075 / 0.0001 is 74.99999999999999. */
          multiple = isfinite (q) && fabs (q - nearbyint (q)) <= 1e-9 * fmax (1.0, fabs (q));
        }
      if (!multiple)
        {
          g_autofree char *t = short_json (limit);
          ok = fail (v, path, "must be a multiple of %s", t);
        }
    }
  return ok;
}

static gboolean
validate_string (ValCtx     *v,
                 JsonObject *schema,
                 JsonNode   *inst,
                 const char *path)
{
  const char *str = json_node_get_string (inst);
  gboolean ok = TRUE;
  JsonNode *limit;
  glong len = -1;

  if ((limit = json_object_get_member (schema, "minLength")))
    {
      len = g_utf8_strlen (str, -1);
      if (len < node_number (limit))
        {
          ok = fail (v, path, "must be at least %" G_GINT64_FORMAT " characters long",
                     (gint64) node_number (limit));
          if (!go_on (v)) return FALSE;
        }
    }
  if ((limit = json_object_get_member (schema, "maxLength")))
    {
      if (len < 0)
        len = g_utf8_strlen (str, -1);
      if (len > node_number (limit))
        {
          ok = fail (v, path, "must be at most %" G_GINT64_FORMAT " characters long",
                     (gint64) node_number (limit));
          if (!go_on (v)) return FALSE;
        }
    }
  if ((limit = json_object_get_member (schema, "pattern")))
    {
      GRegex *regex = g_hash_table_lookup (v->self->regexes, json_node_get_string (limit));

      if (regex != NULL && !g_regex_match (regex, str, 0, NULL))
        ok = fail (v, path, "must match the pattern %s", json_node_get_string (limit));
    }
  return ok;
}

static gboolean
validate_array (ValCtx     *v,
                JsonObject *schema,
                JsonNode   *inst,
                const char *path)
{
  JsonArray *arr = json_node_get_array (inst);
  guint n = json_array_get_length (arr);
  gboolean ok = TRUE;
  JsonNode *kw, *items = json_object_get_member (schema, "items");
  JsonArray *prefix = NULL;
  JsonNode *rest = NULL;
  guint first_rest = 0;

  if ((kw = json_object_get_member (schema, "prefixItems")))
    {
      prefix = json_node_get_array (kw);
      if (items != NULL && !node_is_array (items))
        rest = items;
    }
  else if (items != NULL && node_is_array (items))
    {
      prefix = json_node_get_array (items);
      rest = json_object_get_member (schema, "additionalItems");
    }
  else
    rest = items;

  if (prefix != NULL)
    {
      first_rest = json_array_get_length (prefix);
      for (guint i = 0; i < n && i < first_rest; i++)
        {
          g_autofree char *sub = pointer_append_index (path, i);

          if (!validate (v, json_array_get_element (prefix, i), json_array_get_element (arr, i), sub))
            {
              ok = FALSE;
              if (!go_on (v)) return FALSE;
            }
        }
    }
  if (rest != NULL)
    for (guint i = first_rest; i < n; i++)
      {
        g_autofree char *sub = pointer_append_index (path, i);

        if (!validate (v, rest, json_array_get_element (arr, i), sub))
          {
            ok = FALSE;
            if (!go_on (v)) return FALSE;
          }
      }

  if ((kw = json_object_get_member (schema, "contains")))
    {
      JsonNode *min_node = json_object_get_member (schema, "minContains");
      JsonNode *max_node = json_object_get_member (schema, "maxContains");
      double min = min_node ? node_number (min_node) : 1;
      guint count = 0;

      for (guint i = 0; i < n; i++)
        {
          g_autofree char *sub = pointer_append_index (path, i);

          if (quiet_valid (v, kw, json_array_get_element (arr, i), sub))
            count++;
        }
      if (count < min)
        {
          ok = fail (v, path, "must contain at least %g item(s) matching contains, has %u",
                     min, count);
          if (!go_on (v)) return FALSE;
        }
      if (max_node != NULL && count > node_number (max_node))
        {
          ok = fail (v, path, "must contain at most %g item(s) matching contains, has %u",
                     node_number (max_node), count);
          if (!go_on (v)) return FALSE;
        }
    }

  if ((kw = json_object_get_member (schema, "minItems")) && n < node_number (kw))
    {
      ok = fail (v, path, "must have at least %g items, has %u", node_number (kw), n);
      if (!go_on (v)) return FALSE;
    }
  if ((kw = json_object_get_member (schema, "maxItems")) && n > node_number (kw))
    {
      ok = fail (v, path, "must have at most %g items, has %u", node_number (kw), n);
      if (!go_on (v)) return FALSE;
    }
  if ((kw = json_object_get_member (schema, "uniqueItems")) && json_node_get_boolean (kw))
    {
      for (guint i = 1; i < n; i++)
        for (guint j = 0; j < i; j++)
          if (sight_json_equal (json_array_get_element (arr, i), json_array_get_element (arr, j)))
            {
              ok = fail (v, path, "items must be unique; items %u and %u are equal", j, i);
              goto done_unique;
            }
    done_unique:
      ;
    }
  return ok;
}

static gboolean
validate_required_list (ValCtx     *v,
                        JsonArray  *names,
                        JsonObject *obj,
                        const char *path,
                        const char *because)
{
  gboolean ok = TRUE;

  for (guint i = 0; i < json_array_get_length (names); i++)
    {
      const char *name = json_array_get_string_element (names, i);

      if (!json_object_has_member (obj, name))
        {
          if (because != NULL)
            ok = fail (v, path, "missing property \"%s\" (required when \"%s\" is present)",
                       name, because);
          else
            ok = fail (v, path, "missing required property \"%s\"", name);
          if (!go_on (v)) return FALSE;
        }
    }
  return ok;
}

static gboolean
validate_object (ValCtx     *v,
                 JsonObject *schema,
                 JsonNode   *inst,
                 const char *path)
{
  JsonObject *obj = json_node_get_object (inst);
  JsonObject *properties = NULL, *pattern_properties = NULL;
  JsonNode *kw, *additional;
  JsonObjectIter iter;
  const char *key;
  JsonNode *value;
  gboolean ok = TRUE;
  guint size = json_object_get_size (obj);

  if ((kw = json_object_get_member (schema, "required")))
    if (!validate_required_list (v, json_node_get_array (kw), obj, path, NULL))
      {
        ok = FALSE;
        if (!go_on (v)) return FALSE;
      }

  if ((kw = json_object_get_member (schema, "properties")))
    properties = json_node_get_object (kw);
  if ((kw = json_object_get_member (schema, "patternProperties")))
    pattern_properties = json_node_get_object (kw);
  additional = json_object_get_member (schema, "additionalProperties");

  json_object_iter_init_ordered (&iter, obj);
  while (json_object_iter_next_ordered (&iter, &key, &value))
    {
      g_autofree char *sub = sight_json_pointer_append (path, key);
      gboolean matched = FALSE;

      if (properties != NULL && json_object_has_member (properties, key))
        {
          matched = TRUE;
          if (!validate (v, json_object_get_member (properties, key), value, sub))
            {
              ok = FALSE;
              if (!go_on (v)) return FALSE;
            }
        }
      if (pattern_properties != NULL)
        {
          JsonObjectIter piter;
          const char *pattern;
          JsonNode *psub;

          json_object_iter_init_ordered (&piter, pattern_properties);
          while (json_object_iter_next_ordered (&piter, &pattern, &psub))
            {
              GRegex *regex = g_hash_table_lookup (v->self->regexes, pattern);

              if (regex == NULL || !g_regex_match (regex, key, 0, NULL))
                continue;
              matched = TRUE;
              if (!validate (v, psub, value, sub))
                {
                  ok = FALSE;
                  if (!go_on (v)) return FALSE;
                }
            }
        }
      if (!matched && additional != NULL)
        {
          if (node_is_boolean (additional) && !json_node_get_boolean (additional))
            ok = fail (v, sub, "property \"%s\" is not allowed", key);
          else if (!validate (v, additional, value, sub))
            ok = FALSE;
          if (!ok && !go_on (v))
            return FALSE;
        }
      if ((kw = json_object_get_member (schema, "propertyNames")))
        {
          g_autoptr(JsonNode) name_node = json_node_init_string (json_node_alloc (), key);

          if (!quiet_valid (v, kw, name_node, sub))
            {
              ok = fail (v, sub, "property name \"%s\" is not allowed by propertyNames", key);
              if (!go_on (v)) return FALSE;
            }
        }
    }

  if ((kw = json_object_get_member (schema, "minProperties")) && size < node_number (kw))
    {
      ok = fail (v, path, "must have at least %g properties, has %u", node_number (kw), size);
      if (!go_on (v)) return FALSE;
    }
  if ((kw = json_object_get_member (schema, "maxProperties")) && size > node_number (kw))
    {
      ok = fail (v, path, "must have at most %g properties, has %u", node_number (kw), size);
      if (!go_on (v)) return FALSE;
    }

  for (guint pass = 0; pass < 3; pass++)
    {
      static const char *const names[] = { "dependentRequired", "dependentSchemas", "dependencies" };

      if (!(kw = json_object_get_member (schema, names[pass])))
        continue;
      json_object_iter_init_ordered (&iter, json_node_get_object (kw));
      while (json_object_iter_next_ordered (&iter, &key, &value))
        {
          if (!json_object_has_member (obj, key))
            continue;
          if (node_is_array (value))
            {
              if (!validate_required_list (v, json_node_get_array (value), obj, path, key))
                ok = FALSE;
            }
          else if (!validate (v, value, inst, path))
            ok = FALSE;
          if (!ok && !go_on (v))
            return FALSE;
        }
    }
  return ok;
}

static gboolean
validate (ValCtx     *v,
          JsonNode   *schema,
          JsonNode   *inst,
          const char *path)
{
  JsonObject *obj;
  JsonNode *kw;
  gboolean ok = TRUE;
  gboolean result;

  if (node_is_boolean (schema))
    {
      if (json_node_get_boolean (schema))
        return TRUE;
      return fail (v, path, "no value is allowed here");
    }

  if (v->depth >= MAX_DEPTH)
    return fail (v, path, "schema recursion too deep");
  v->depth++;

  obj = json_node_get_object (schema);

#define CHECK(expr) \
  G_STMT_START { \
    if (!(expr)) \
      { \
        ok = FALSE; \
        if (!go_on (v)) \
          goto out; \
      } \
  } G_STMT_END

  if ((kw = json_object_get_member (obj, "$ref")))
    {
      JsonNode *target = g_hash_table_lookup (v->self->refs, json_node_get_string (kw));

      CHECK (target != NULL && validate (v, target, inst, path));
      /* Draft-07: a $ref makes its siblings ignored. */
      if (v->self->draft7)
        goto out;
    }

  if ((kw = json_object_get_member (obj, "type")))
    CHECK (validate_type (v, kw, inst, path));

  if ((kw = json_object_get_member (obj, "enum")))
    {
      JsonArray *arr = json_node_get_array (kw);
      gboolean found = FALSE;

      for (guint i = 0; i < json_array_get_length (arr) && !found; i++)
        found = sight_json_equal (inst, json_array_get_element (arr, i));
      if (!found)
        {
          g_autofree char *t = short_json (kw);
          CHECK (fail (v, path, "must be one of %s", t));
        }
    }

  if ((kw = json_object_get_member (obj, "const")) && !sight_json_equal (inst, kw))
    {
      g_autofree char *t = short_json (kw);
      CHECK (fail (v, path, "must equal %s", t));
    }

  if (node_is_number (inst))
    CHECK (validate_number (v, obj, inst, path));
  else if (node_is_string (inst))
    CHECK (validate_string (v, obj, inst, path));
  else if (node_is_array (inst))
    CHECK (validate_array (v, obj, inst, path));
  else if (node_is_object (inst))
    CHECK (validate_object (v, obj, inst, path));

  if ((kw = json_object_get_member (obj, "allOf")))
    {
      JsonArray *arr = json_node_get_array (kw);

      for (guint i = 0; i < json_array_get_length (arr); i++)
        CHECK (validate (v, json_array_get_element (arr, i), inst, path));
    }

  if ((kw = json_object_get_member (obj, "anyOf")))
    {
      JsonArray *arr = json_node_get_array (kw);
      gboolean any = FALSE;

      for (guint i = 0; i < json_array_get_length (arr) && !any; i++)
        any = quiet_valid (v, json_array_get_element (arr, i), inst, path);
      if (!any)
        {
          g_autofree char *why = branch_reasons (v, arr, inst, path);
          CHECK (fail (v, path, "must match at least one of the anyOf schemas%s", why));
        }
    }

  if ((kw = json_object_get_member (obj, "oneOf")))
    {
      JsonArray *arr = json_node_get_array (kw);
      guint count = 0;

      for (guint i = 0; i < json_array_get_length (arr) && count < 2; i++)
        if (quiet_valid (v, json_array_get_element (arr, i), inst, path))
          count++;
      if (count == 0)
        {
          g_autofree char *why = branch_reasons (v, arr, inst, path);
          CHECK (fail (v, path, "must match exactly one of the oneOf schemas, matches none%s",
                       why));
        }
      else if (count > 1)
        CHECK (fail (v, path, "must match exactly one of the oneOf schemas, matches several"));
    }

  if ((kw = json_object_get_member (obj, "not")) && quiet_valid (v, kw, inst, path))
    CHECK (fail (v, path, "must not match the schema in \"not\""));

  if ((kw = json_object_get_member (obj, "if")))
    {
      JsonNode *branch = quiet_valid (v, kw, inst, path)
                         ? json_object_get_member (obj, "then")
                         : json_object_get_member (obj, "else");

      if (branch != NULL)
        CHECK (validate (v, branch, inst, path));
    }

#undef CHECK

out:
  result = ok;
  v->depth--;
  return result;
}

gboolean
sight_json_schema_validate (SightJsonSchema  *self,
                            JsonNode         *instance,
                            GPtrArray       **out_errors)
{
  g_autoptr(GPtrArray) errors = NULL;
  ValCtx v = { self, NULL, 0 };
  gboolean ok;

  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (instance != NULL, FALSE);

  if (out_errors != NULL)
    errors = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_json_schema_error_free);
  v.errors = errors;
  ok = validate (&v, self->root, instance, "");
  if (out_errors != NULL)
    *out_errors = ok ? NULL : g_steal_pointer (&errors);
  return ok;
}

char *
sight_json_schema_errors_to_string (GPtrArray *errors)
{
  GString *out = g_string_new (NULL);

  if (errors == NULL)
    return g_string_free (out, FALSE);
  for (guint i = 0; i < errors->len; i++)
    {
      SightJsonSchemaError *err = g_ptr_array_index (errors, i);

      if (i > 0)
        g_string_append (out, "; ");
      g_string_append_printf (out, "%s: %s", *err->path ? err->path : "(root)", err->reason);
    }
  return g_string_free (out, FALSE);
}

gboolean
sight_json_schema_check (SightJsonSchema  *self,
                         JsonNode         *instance,
                         GError          **error)
{
  g_autoptr(GPtrArray) errors = NULL;
  g_autofree char *text = NULL;
  g_autofree char *bounded = NULL;

  if (sight_json_schema_validate (self, instance, &errors))
    return TRUE;
  text = sight_json_schema_errors_to_string (errors);
  bounded = sight_text_sanitize (text, MAX_MESSAGE);
  g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_OUTPUT_INVALID,
               "output does not match the schema: %s", bounded);
  return FALSE;
}
