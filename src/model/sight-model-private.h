/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Small JSON readers shared by the wire formats: they never trust a type. */

static inline JsonObject *
_sight_json_object (JsonNode *node)
{
  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

static inline JsonObject *
_sight_json_object_member (JsonObject *object,
                           const char *name)
{
  return object != NULL ? _sight_json_object (json_object_get_member (object, name)) : NULL;
}

static inline JsonArray *
_sight_json_array_member (JsonObject *object,
                          const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  return node != NULL && JSON_NODE_HOLDS_ARRAY (node) ? json_node_get_array (node) : NULL;
}

static inline const char *
_sight_json_string_member (JsonObject *object,
                           const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node)
      || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

/* -1 when absent or not a non-negative integer. */
static inline gint64
_sight_json_count_member (JsonObject *object,
                          const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node)
      || json_node_get_value_type (node) != G_TYPE_INT64)
    return -1;
  return json_node_get_int (node) >= 0 ? json_node_get_int (node) : -1;
}

/* -1 when absent or not a non-negative number. */
static inline double
_sight_json_number_member (JsonObject *object,
                           const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node))
    return -1;
  if (json_node_get_value_type (node) != G_TYPE_INT64
      && json_node_get_value_type (node) != G_TYPE_DOUBLE)
    return -1;
  return json_node_get_double (node) >= 0 ? json_node_get_double (node) : -1;
}

static inline GBytes *
_sight_json_to_bytes (JsonNode *root)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  gsize length = 0;
  char *data;

  json_generator_set_root (generator, root);
  data = json_generator_to_data (generator, &length);
  return g_bytes_new_take (data, length);
}

static inline char *
_sight_image_data_url (GBytes     *bytes,
                       const char *media_type)
{
  gsize size = 0;
  const guchar *data = g_bytes_get_data (bytes, &size);
  g_autofree char *base64 = g_base64_encode (data, size);

  return g_strdup_printf ("data:%s;base64,%s", media_type, base64);
}

/* MODEL_OUTPUT_INVALID for an answer sight_json_parse() refused. */
void _sight_model_set_not_json_error (GError      **error,
                                      const char   *data,
                                      gsize         length,
                                      const GError *parse_error);

G_END_DECLS
