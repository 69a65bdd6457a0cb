/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-trace-cache"

#include "config.h"

#include "sight-trace-cache.h"

#include <glib/gstdio.h>
#include <string.h>

#include "sight-actions.h"
#include "sight-agent-enums.h"
#include "sight-direct-run.h"
#include "sight-direct-step.h"
#include "sight-enum.h"
#include "sight-error.h"
#include "sight-json.h"
#include "sight-params.h"
#include "sight-secret-fill.h"

#define TRACE_VERSION 1
#define MAX_LANDMARKS 20

struct _SightTrace {
  gatomicrefcount  ref_count;
  JsonObject      *data;
};

struct _SightTraceCache {
  char *dir;
};

const char *
sight_cache_status_to_string (SightCacheStatus status)
{
  return sight_enum_to_nick (SIGHT_TYPE_CACHE_STATUS, status);
}

JsonNode *
sight_cache_info_new (SightCacheStatus  status,
                      const char       *reason)
{
  g_autoptr(JsonObject) info = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_object_set_string_member (info, "status", sight_cache_status_to_string (status));
  if (reason != NULL)
    {
      g_autofree char *clean = sight_text_sanitize (reason, 500);

      json_object_set_string_member (info, "reason", clean);
    }
  json_node_set_object (node, info);
  return node;
}

static gboolean
is_id_segment (const char *segment)
{
  gsize len = strlen (segment);
  gboolean digits = len > 0, hex = len >= 16;

  for (gsize i = 0; i < len; i++)
    {
      digits &= g_ascii_isdigit (segment[i]);
      hex &= g_ascii_isxdigit (segment[i]) || segment[i] == '-';
    }
  return digits || hex;
}

char *
sight_trace_url_pattern (const char *url)
{
  g_autoptr(GUri) uri = NULL;
  g_auto(GStrv) segments = NULL;
  GString *s;
  int port;

  if (url == NULL)
    return g_strdup ("");
  uri = g_uri_parse (url, G_URI_FLAGS_NONE, NULL);
  if (uri == NULL || g_uri_get_host (uri) == NULL)
    return g_strdup (url);
  s = g_string_new (NULL);
  g_string_append_printf (s, "%s://%s", g_uri_get_scheme (uri), g_uri_get_host (uri));
  port = g_uri_get_port (uri);
  if (port > 0 &&
      !((port == 80 && g_str_equal (g_uri_get_scheme (uri), "http")) ||
        (port == 443 && g_str_equal (g_uri_get_scheme (uri), "https"))))
    g_string_append_printf (s, ":%d", port);
  segments = g_strsplit (g_uri_get_path (uri), "/", -1);
  for (guint i = 0; segments[i] != NULL; i++)
    {
      if (i == 0 && segments[i][0] == '\0')
        continue;
      g_string_append_c (s, '/');
      g_string_append (s, is_id_segment (segments[i]) ? ":id" : segments[i]);
    }
  if (s->str[s->len - 1] != '/' && strchr (s->str + strlen (g_uri_get_scheme (uri)) + 3, '/') == NULL)
    g_string_append_c (s, '/');
  return g_string_free (s, FALSE);
}

static int
compare_strings (gconstpointer a,
                 gconstpointer b)
{
  return g_strcmp0 (*(const char * const *) a, *(const char * const *) b);
}

static GStrv
param_names (JsonNode *params)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new ();

  if (params != NULL && JSON_NODE_HOLDS_OBJECT (params))
    {
      g_autoptr(GList) members = json_object_get_members (json_node_get_object (params));

      for (GList *l = members; l != NULL; l = l->next)
        g_ptr_array_add (names, g_strdup (l->data));
    }
  g_ptr_array_sort (names, compare_strings);
  g_ptr_array_add (names, NULL);
  return (GStrv) g_ptr_array_steal (names, NULL);
}

char *
sight_trace_key (const char *agent,
                 const char *instruction,
                 JsonNode   *params,
                 const char *start_url)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  g_auto(GStrv) names = param_names (params);
  g_autofree char *pattern = sight_trace_url_pattern (start_url);
  g_autofree char *text = NULL;
  g_autofree char *nfc = g_utf8_normalize (instruction != NULL ? instruction : "", -1,
                                           G_NORMALIZE_NFC);

  json_builder_begin_array (builder);
  json_builder_add_int_value (builder, TRACE_VERSION);
  json_builder_add_string_value (builder, agent != NULL ? agent : "default");
  json_builder_add_string_value (builder, nfc != NULL ? nfc : "");
  json_builder_begin_array (builder);
  for (guint i = 0; names[i] != NULL; i++)
    json_builder_add_string_value (builder, names[i]);
  json_builder_end_array (builder);
  json_builder_add_string_value (builder, pattern);
  json_builder_end_array (builder);
  root = json_builder_get_root (builder);
  text = json_to_string (root, FALSE);
  return g_compute_checksum_for_string (G_CHECKSUM_SHA256, text, -1);
}

static SightTrace *
trace_wrap (JsonObject *data)
{
  SightTrace *trace = g_new0 (SightTrace, 1);

  g_atomic_ref_count_init (&trace->ref_count);
  trace->data = data;
  return trace;
}

SightTrace *
sight_trace_new (const char *agent,
                 const char *instruction,
                 JsonNode   *params,
                 const char *start_url,
                 int         viewport_width,
                 int         viewport_height)
{
  JsonObject *data = json_object_new ();
  g_autoptr(JsonObject) viewport = json_object_new ();
  g_autoptr(JsonArray) names_array = json_array_new ();
  g_auto(GStrv) names = param_names (params);
  g_autofree char *key = sight_trace_key (agent, instruction, params, start_url);
  g_autofree char *pattern = sight_trace_url_pattern (start_url);

  for (guint i = 0; names[i] != NULL; i++)
    json_array_add_string_element (names_array, names[i]);
  json_object_set_int_member (viewport, "width", viewport_width);
  json_object_set_int_member (viewport, "height", viewport_height);

  json_object_set_int_member (data, "version", TRACE_VERSION);
  json_object_set_string_member (data, "key", key);
  json_object_set_string_member (data, "agent", agent != NULL ? agent : "default");
  json_object_set_string_member (data, "instruction", instruction != NULL ? instruction : "");
  json_object_set_array_member (data, "paramNames", g_steal_pointer (&names_array));
  json_object_set_string_member (data, "urlPattern", pattern);
  json_object_set_object_member (data, "viewport", g_steal_pointer (&viewport));
  json_object_set_array_member (data, "actions", json_array_new ());
  json_object_set_boolean_member (data, "needsReview", FALSE);
  json_object_set_int_member (data, "createdAt", g_get_real_time ());
  return trace_wrap (data);
}

SightTrace *
sight_trace_ref (SightTrace *trace)
{
  g_atomic_ref_count_inc (&trace->ref_count);
  return trace;
}

void
sight_trace_unref (SightTrace *trace)
{
  if (trace != NULL && g_atomic_ref_count_dec (&trace->ref_count))
    {
      json_object_unref (trace->data);
      g_free (trace);
    }
}

const char *
sight_trace_get_key (SightTrace *trace)
{
  return json_object_get_string_member (trace->data, "key");
}

guint
sight_trace_get_n_actions (SightTrace *trace)
{
  return json_array_get_length (json_object_get_array_member (trace->data, "actions"));
}

JsonObject *
sight_trace_get_action (SightTrace *trace,
                        guint       index)
{
  JsonArray *actions = json_object_get_array_member (trace->data, "actions");

  g_return_val_if_fail (index < json_array_get_length (actions), NULL);
  return json_array_get_object_element (actions, index);
}

gboolean
sight_trace_needs_review (SightTrace *trace)
{
  return json_object_get_boolean_member_with_default (trace->data, "needsReview", FALSE);
}

const char *
sight_trace_get_url_pattern (SightTrace *trace)
{
  return json_object_get_string_member_with_default (trace->data, "urlPattern", "");
}

static gboolean
holds_secret (JsonNode           *node,
              const char * const *secrets)
{
  if (node == NULL || secrets == NULL)
    return FALSE;
  if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING)
    {
      const char *text = json_node_get_string (node);

      for (guint i = 0; secrets[i] != NULL; i++)
        if (*secrets[i] != '\0' && strstr (text, secrets[i]) != NULL)
          return TRUE;
      return FALSE;
    }
  if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *array = json_node_get_array (node);

      for (guint i = 0; i < json_array_get_length (array); i++)
        if (holds_secret (json_array_get_element (array, i), secrets))
          return TRUE;
      return FALSE;
    }
  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonObject *object = json_node_get_object (node);
      g_autoptr(GList) members = json_object_get_members (object);

      for (GList *l = members; l != NULL; l = l->next)
        if (holds_secret (json_object_get_member (object, l->data), secrets))
          return TRUE;
    }
  return FALSE;
}

gboolean
sight_trace_add_action (SightTrace          *trace,
                        const char          *tool,
                        JsonNode            *args,
                        JsonNode            *descriptor,
                        const char * const  *secrets,
                        GError             **error)
{
  g_autoptr(JsonObject) action = json_object_new ();

  g_return_val_if_fail (trace != NULL, FALSE);
  g_return_val_if_fail (tool != NULL, FALSE);

  if (holds_secret (args, secrets) || holds_secret (descriptor, secrets))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_POLICY_DENIED,
                   "the %s action holds a secret value; a trace names the parameter instead",
                   tool);
      return FALSE;
    }
  json_object_set_string_member (action, "tool", tool);
  json_object_set_member (action, "args",
                          args != NULL ? json_node_copy (args) : json_node_new (JSON_NODE_NULL));
  json_object_set_member (action, "descriptor",
                          descriptor != NULL ? json_node_copy (descriptor)
                                             : json_node_new (JSON_NODE_NULL));
  json_array_add_object_element (json_object_get_array_member (trace->data, "actions"),
                                 g_steal_pointer (&action));
  return TRUE;
}

static gboolean
is_landmark_role (const char *role)
{
  static const char *roles[] = { "heading", "alert", "status", "dialog", "alertdialog", NULL };

  return role != NULL && g_strv_contains (roles, role);
}

void
sight_trace_set_end_state (SightTrace       *trace,
                           SightObservation *end)
{
  g_autoptr(SightNodeList) list = sight_node_list_new (end);
  g_autoptr(JsonObject) state = json_object_new ();
  g_autoptr(JsonArray) landmarks = json_array_new ();
  g_autofree char *pattern = sight_trace_url_pattern (sight_observation_get_url (end));
  const SightNodeView *nodes;
  guint n;

  nodes = sight_node_list_get (list, &n);
  for (guint i = 0; i < n && json_array_get_length (landmarks) < MAX_LANDMARKS; i++)
    if (is_landmark_role (nodes[i].role) && nodes[i].name != NULL && *nodes[i].name != '\0')
      {
        g_autoptr(JsonObject) landmark = json_object_new ();

        json_object_set_string_member (landmark, "role", nodes[i].role);
        json_object_set_string_member (landmark, "name", nodes[i].name);
        json_array_add_object_element (landmarks, g_steal_pointer (&landmark));
      }
  json_object_set_string_member (state, "urlPattern", pattern);
  json_object_set_array_member (state, "landmarks", g_steal_pointer (&landmarks));
  json_object_set_object_member (trace->data, "endState", g_steal_pointer (&state));
}

gboolean
sight_trace_end_state_returned (SightTrace        *trace,
                                SightObservation  *now,
                                char             **reason)
{
  JsonObject *state;
  JsonArray *landmarks;
  g_autofree char *pattern = NULL;
  g_autoptr(SightNodeList) list = NULL;
  const SightNodeView *nodes;
  guint n;

  if (!json_object_has_member (trace->data, "endState"))
    {
      if (reason != NULL)
        *reason = g_strdup ("the trace has no recorded end state");
      return FALSE;
    }
  state = json_object_get_object_member (trace->data, "endState");
  pattern = sight_trace_url_pattern (sight_observation_get_url (now));
  if (g_strcmp0 (pattern, json_object_get_string_member (state, "urlPattern")) != 0)
    {
      if (reason != NULL)
        *reason = g_strdup_printf ("the page is %s, the trace ended on %s", pattern,
                                   json_object_get_string_member (state, "urlPattern"));
      return FALSE;
    }
  list = sight_node_list_new (now);
  nodes = sight_node_list_get (list, &n);
  landmarks = json_object_get_array_member (state, "landmarks");
  for (guint k = 0; k < json_array_get_length (landmarks); k++)
    {
      JsonObject *landmark = json_array_get_object_element (landmarks, k);
      const char *role = json_object_get_string_member (landmark, "role");
      const char *name = json_object_get_string_member (landmark, "name");
      gboolean found = FALSE;

      for (guint i = 0; i < n && !found; i++)
        found = g_strcmp0 (nodes[i].role, role) == 0 && g_strcmp0 (nodes[i].name, name) == 0;
      if (!found)
        {
          if (reason != NULL)
            *reason = g_strdup_printf ("the %s \"%s\" of the recorded end state is not on the "
                                       "page", role, name);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
read_box (JsonNode *node,
          double   *x,
          double   *y,
          double   *w,
          double   *h)
{
  if (node == NULL)
    return FALSE;
  if (JSON_NODE_HOLDS_ARRAY (node) && json_array_get_length (json_node_get_array (node)) == 4)
    {
      JsonArray *a = json_node_get_array (node);

      *x = json_array_get_double_element (a, 0);
      *y = json_array_get_double_element (a, 1);
      *w = json_array_get_double_element (a, 2);
      *h = json_array_get_double_element (a, 3);
      return TRUE;
    }
  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonObject *o = json_node_get_object (node);

      *x = json_object_get_double_member_with_default (o, "x", 0);
      *y = json_object_get_double_member_with_default (o, "y", 0);
      *w = json_object_get_double_member_with_default (o, "width", 0);
      *h = json_object_get_double_member_with_default (o, "height", 0);
      return TRUE;
    }
  return FALSE;
}

static JsonObject *
object_member (JsonObject *object,
               const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

/* The observed node a descriptor names: same role, same name, and the
 * descriptor's nth (0-based) among several. */
static const char *
find_node (JsonObject       *descriptor,
           SightObservation *now,
           char            **reason)
{
  g_autoptr(SightNodeList) list = sight_node_list_new (now);
  g_autoptr(GPtrArray) alike = g_ptr_array_new ();
  const char *role = json_object_get_string_member_with_default (descriptor, "role", NULL);
  const char *name = json_object_get_string_member_with_default (descriptor, "name", "");
  gint64 nth = json_object_get_int_member_with_default (descriptor, "nth", 0);
  const SightNodeView *nodes;
  guint n;

  nodes = sight_node_list_get (list, &n);
  for (guint i = 0; i < n; i++)
    if (g_strcmp0 (nodes[i].role, role) == 0 &&
        g_strcmp0 (nodes[i].name != NULL ? nodes[i].name : "", name) == 0)
      g_ptr_array_add (alike, (gpointer) nodes[i].ref);

  if (alike->len == 0)
    {
      *reason = g_strdup_printf ("no %s \"%s\" on the page any more", role != NULL ? role : "node",
                                 name);
      return NULL;
    }
  if (alike->len == 1)
    nth = 0;
  if (nth < 0 || (guint) nth >= alike->len)
    {
      *reason = g_strdup_printf ("the trace used %s \"%s\" number %" G_GINT64_FORMAT
                                 ", the page has %u", role, name, nth + 1, alike->len);
      return NULL;
    }
  /* the ref lives as long as @now, which the caller holds */
  return g_ptr_array_index (alike, nth);
}

gboolean
sight_trace_refind (SightTrace        *trace,
                    guint              index,
                    SightObservation  *now,
                    char             **out_ref,
                    double            *out_x,
                    double            *out_y,
                    char             **reason)
{
  JsonObject *action = sight_trace_get_action (trace, index);
  JsonObject *descriptor = object_member (action, "descriptor");
  JsonObject *point = object_member (descriptor, "point");
  JsonObject *offset = object_member (descriptor, "offset");
  g_autofree char *why = NULL;
  const char *ref;

  *out_ref = NULL;
  if (descriptor == NULL)
    {
      /* an action on the page itself (a key, a scroll): nothing to re-find */
      return TRUE;
    }

  if (point != NULL && offset == NULL)
    {
      /* A bare point: the same point, on a viewport of the recorded size. */
      JsonObject *viewport = object_member (descriptor, "viewport");
      gint64 rw = viewport != NULL ? json_object_get_int_member_with_default (viewport, "width", 0) : 0;
      gint64 rh = viewport != NULL ? json_object_get_int_member_with_default (viewport, "height", 0) : 0;
      int vw = 0, vh = 0;

      sight_observation_get_viewport (now, &vw, &vh, NULL, NULL);
      if (rw != vw || rh != vh)
        {
          if (reason != NULL)
            *reason = g_strdup_printf ("the viewport is %dx%d, the point was recorded on %"
                                       G_GINT64_FORMAT "x%" G_GINT64_FORMAT, vw, vh, rw, rh);
          return FALSE;
        }
      *out_x = json_object_get_double_member_with_default (point, "x", 0);
      *out_y = json_object_get_double_member_with_default (point, "y", 0);
      return TRUE;
    }

  ref = find_node (descriptor, now, &why);
  if (ref == NULL)
    {
      if (reason != NULL)
        *reason = g_steal_pointer (&why);
      return FALSE;
    }

  if (offset != NULL)
    {
      /* A point inside a listed node: the same place inside its live box. */
      JsonObject *live = sight_observation_lookup (now, ref);
      double rx, ry, rw, rh, lx, ly, lw, lh;

      if (live == NULL || !read_box (json_object_get_member (live, "box"), &lx, &ly, &lw, &lh) ||
          !read_box (json_object_get_member (descriptor, "box"), &rx, &ry, &rw, &rh) ||
          rw <= 0 || rh <= 0)
        {
          if (reason != NULL)
            *reason = g_strdup ("the tapped node has no box to place the point in");
          return FALSE;
        }
      *out_x = lx + json_object_get_double_member_with_default (offset, "x", 0) * lw / rw;
      *out_y = ly + json_object_get_double_member_with_default (offset, "y", 0) * lh / rh;
      return TRUE;
    }

  *out_ref = g_strdup (ref);
  return TRUE;
}

JsonNode *
sight_trace_to_json (SightTrace *trace)
{
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);
  g_autofree char *text = NULL;

  json_node_set_object (node, trace->data);
  /* a deep copy */
  text = json_to_string (node, FALSE);
  json_node_unref (node);
  return json_from_string (text, NULL);
}

SightTrace *
sight_trace_new_from_json (JsonNode  *node,
                           GError   **error)
{
  JsonObject *data;
  g_autofree char *text = NULL;
  JsonNode *copy;

  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node) ||
      json_object_get_int_member_with_default (json_node_get_object (node), "version", 0) !=
        TRACE_VERSION ||
      json_object_get_string_member_with_default (json_node_get_object (node), "key", NULL) == NULL ||
      !json_object_has_member (json_node_get_object (node), "actions") ||
      !JSON_NODE_HOLDS_ARRAY (json_object_get_member (json_node_get_object (node), "actions")))
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                           "not a trace of this version");
      return NULL;
    }
  text = json_to_string (node, FALSE);
  copy = json_from_string (text, NULL);
  data = json_object_ref (json_node_get_object (copy));
  json_node_unref (copy);
  return trace_wrap (data);
}

SightTraceCache *
sight_trace_cache_new (const char *dir)
{
  SightTraceCache *cache = g_new0 (SightTraceCache, 1);

  cache->dir = dir != NULL ? g_strdup (dir)
                           : g_build_filename (g_get_user_cache_dir (), "sightline", "traces", NULL);
  return cache;
}

void
sight_trace_cache_free (SightTraceCache *cache)
{
  if (cache == NULL)
    return;
  g_free (cache->dir);
  g_free (cache);
}

const char *
sight_trace_cache_get_dir (SightTraceCache *cache)
{
  return cache->dir;
}

static char *
trace_path (SightTraceCache *cache,
            const char      *key)
{
  g_autofree char *file = NULL;

  /* keys are hex digests; anything else never reaches the file system */
  for (const char *p = key; *p != '\0'; p++)
    if (!g_ascii_isxdigit (*p))
      return NULL;
  if (*key == '\0')
    return NULL;
  file = g_strconcat (key, ".json", NULL);
  return g_build_filename (cache->dir, file, NULL);
}

SightTrace *
sight_trace_cache_lookup (SightTraceCache *cache,
                          const char      *key)
{
  g_autofree char *path = trace_path (cache, key);
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) error = NULL;
  SightTrace *trace;

  if (path == NULL || !g_file_test (path, G_FILE_TEST_IS_REGULAR))
    return NULL;
  root = sight_json_parse_file (path, SIGHT_JSON_MAX_DEPTH, &error);
  if (root == NULL)
    {
      g_debug ("trace %s does not read: %s", key, error->message);
      return NULL;
    }
  trace = sight_trace_new_from_json (root, &error);
  if (trace == NULL)
    g_debug ("trace %s: %s", key, error->message);
  else if (g_strcmp0 (sight_trace_get_key (trace), key) != 0)
    g_clear_pointer (&trace, sight_trace_unref);
  return trace;
}

gboolean
sight_trace_cache_save (SightTraceCache  *cache,
                        SightTrace       *trace,
                        GError          **error)
{
  g_autofree char *path = trace_path (cache, sight_trace_get_key (trace));
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *text = NULL;
  g_autoptr(GError) local_error = NULL;

  if (path == NULL)
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "bad trace key");
      return FALSE;
    }
  if (g_mkdir_with_parents (cache->dir, 0700) != 0)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "cannot create %s: %s", cache->dir, g_strerror (errno));
      return FALSE;
    }
  node = sight_trace_to_json (trace);
  text = json_to_string (node, TRUE);
  if (!g_file_set_contents_full (path, text, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0600,
                                 &local_error))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE, "%s",
                   local_error->message);
      return FALSE;
    }
  return TRUE;
}

gboolean
sight_trace_cache_save_healed (SightTraceCache  *cache,
                               SightTrace       *trace,
                               GError          **error)
{
  json_object_set_boolean_member (trace->data, "needsReview", TRUE);
  json_object_set_int_member (trace->data, "healedAt", g_get_real_time ());
  return sight_trace_cache_save (cache, trace, error);
}

/* The next trace in @dir of @cache (its key in *@out_key), or NULL at the end;
 * files that are not traces are passed over. */
static SightTrace *
next_trace (SightTraceCache  *cache,
            GDir             *dir,
            char            **out_key)
{
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *key = NULL;
      SightTrace *trace;

      if (!g_str_has_suffix (name, ".json"))
        continue;
      key = g_strndup (name, strlen (name) - 5);
      trace = sight_trace_cache_lookup (cache, key);
      if (trace != NULL)
        {
          *out_key = g_steal_pointer (&key);
          return trace;
        }
    }
  return NULL;
}

GStrv
sight_trace_cache_list_review (SightTraceCache *cache)
{
  g_autoptr(GDir) dir = g_dir_open (cache->dir, 0, NULL);
  g_autoptr(GPtrArray) keys = g_ptr_array_new ();
  SightTrace *trace;
  char *key;

  while ((trace = next_trace (cache, dir, &key)) != NULL)
    {
      if (sight_trace_needs_review (trace))
        g_ptr_array_add (keys, key);
      else
        g_free (key);
      sight_trace_unref (trace);
    }
  g_ptr_array_sort (keys, compare_strings);
  g_ptr_array_add (keys, NULL);
  return (GStrv) g_ptr_array_steal (keys, NULL);
}

gboolean
sight_trace_cache_has_trace_for (SightTraceCache *cache,
                                 const char      *agent,
                                 const char      *instruction,
                                 JsonNode        *params)
{
  g_autoptr(GDir) dir = g_dir_open (cache->dir, 0, NULL);
  SightTrace *trace;
  char *key;

  /* A trace's key is its step's key at the address it was recorded on. */
  while ((trace = next_trace (cache, dir, &key)) != NULL)
    {
      g_autofree char *expected = sight_trace_key (agent, instruction, params,
                                                   json_object_get_string_member_with_default (
                                                     trace->data, "urlPattern", ""));
      gboolean found = g_str_equal (expected, key);

      g_free (key);
      sight_trace_unref (trace);
      if (found)
        return TRUE;
    }
  return FALSE;
}

gboolean
sight_trace_cache_mark_reviewed (SightTraceCache  *cache,
                                 const char       *key,
                                 GError          **error)
{
  g_autoptr(SightTrace) trace = sight_trace_cache_lookup (cache, key);

  if (trace == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "no trace %s", key);
      return FALSE;
    }
  json_object_set_boolean_member (trace->data, "needsReview", FALSE);
  return sight_trace_cache_save (cache, trace, error);
}

gboolean
sight_trace_cache_forget (SightTraceCache *cache,
                          const char      *key)
{
  g_autofree char *path = trace_path (cache, key);

  return path != NULL && g_unlink (path) == 0;
}

/* Whether @trace was recorded for the step: the members of its key but the
 * start URL, as sight_trace_new wrote them. */
static gboolean
trace_is_of_step (SightTrace *trace,
                  const char *agent,
                  const char *instruction,
                  GStrv       names)
{
  JsonObject *data = trace->data;
  JsonNode *recorded = json_object_get_member (data, "paramNames");
  JsonArray *array;

  if (g_strcmp0 (json_object_get_string_member_with_default (data, "agent", NULL),
                 agent != NULL ? agent : "default") != 0 ||
      g_strcmp0 (json_object_get_string_member_with_default (data, "instruction", NULL),
                 instruction != NULL ? instruction : "") != 0 ||
      recorded == NULL || !JSON_NODE_HOLDS_ARRAY (recorded))
    return FALSE;
  array = json_node_get_array (recorded);
  if (json_array_get_length (array) != g_strv_length (names))
    return FALSE;
  for (guint i = 0; names[i] != NULL; i++)
    if (g_strcmp0 (json_array_get_string_element (array, i), names[i]) != 0)
      return FALSE;
  return TRUE;
}

GPtrArray *
sight_trace_cache_find_step (SightTraceCache *cache,
                             const char      *agent,
                             const char      *instruction,
                             JsonNode        *params)
{
  g_autoptr(GDir) dir = g_dir_open (cache->dir, 0, NULL);
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
  g_auto(GStrv) names = param_names (params);
  GPtrArray *traces = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_trace_unref);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_suffix (name, ".json"))
      g_ptr_array_add (keys, g_strndup (name, strlen (name) - 5));
  g_ptr_array_sort (keys, compare_strings);
  for (guint i = 0; i < keys->len; i++)
    {
      SightTrace *trace = sight_trace_cache_lookup (cache, g_ptr_array_index (keys, i));

      if (trace != NULL && trace_is_of_step (trace, agent, instruction, names))
        g_ptr_array_add (traces, trace);
      else if (trace != NULL)
        sight_trace_unref (trace);
    }
  return traces;
}

/* Replay */

#define END_STATE_POLL_MS 100
/* how long the recorded end state may take to come back after the last action */
#define END_STATE_WAIT_MS 3000

typedef struct {
  SightTrace   *trace;
  SightWebPage *page;
  JsonNode     *params;
  SightSecrets *secrets;
  char         *origin;        /* the page's when the replay started */
  gint64        deadline;
  guint         index;
  gint64        end_deadline;
} Replay;

static void
replay_free (Replay *replay)
{
  sight_trace_unref (replay->trace);
  g_object_unref (replay->page);
  g_clear_pointer (&replay->params, json_node_unref);
  g_clear_pointer (&replay->secrets, sight_secrets_unref);
  g_free (replay->origin);
  g_free (replay);
}

static void replay_next (GTask *task);

static guint
replay_remaining (Replay *replay)
{
  gint64 left = (replay->deadline - g_get_monotonic_time ()) / 1000;

  return left > 0 ? (guint) MIN (left, (gint64) 10000) : 1;
}

static void
replay_outcome (GTask            *task,
                const char       *status,
                const char       *reason,
                int               action)
{
  g_autoptr(JsonObject) info = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_object_set_string_member (info, "status", status);
  if (reason != NULL)
    {
      g_autofree char *clean = sight_text_sanitize (reason, 500);

      json_object_set_string_member (info, "reason", clean);
    }
  if (action >= 0)
    json_object_set_int_member (info, "action", action + 1);
  json_node_set_object (node, info);
  g_task_return_pointer (task, node, (GDestroyNotify) json_node_unref);
  g_object_unref (task);
}

static gboolean
replay_next_cb (gpointer data)
{
  replay_next (G_TASK (data));
  return G_SOURCE_REMOVE;
}

static void
replay_advance (GTask *task)
{
  Replay *replay = g_task_get_task_data (task);

  /* the engine settled the page after the action */
  replay->index++;
  g_idle_add_full (G_PRIORITY_DEFAULT, replay_next_cb, task, NULL);
}

static void
performed_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      data)
{
  GTask *task = data;
  Replay *replay = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) reply =
    g_task_get_source_tag (G_TASK (result)) == sight_secret_fill_async
      ? sight_secret_fill_finish (SIGHT_WEB_PAGE (source), result, &error)
      : sight_web_page_perform_action_finish (SIGHT_WEB_PAGE (source), result, &error);

  if (reply == NULL)
    {
      /* A secret refused stays refused: the step ends with its code. */
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ||
          sight_secret_fill_error_is_refusal (error))
        {
          g_task_return_error (task, g_steal_pointer (&error));
          g_object_unref (task);
          return;
        }
      JsonObject *action = sight_trace_get_action (replay->trace, replay->index);
      g_autofree char *why = g_strdup_printf ("the recorded %s failed: %s",
                                              json_object_get_string_member (action, "tool"),
                                              error->message);

      replay_outcome (task, "missed", why, replay->index);
      return;
    }
  replay_advance (task);
}

/* The value a recorded fill or selection types: its value, or its param's;
 * for a Secret, its name in *@out_secret (the one secret fill reads and types
 * it). */
static gboolean
replay_value (Replay       *replay,
              SightAction  *action,
              const char  **out_secret,
              char        **why)
{
  JsonNode *value;
  const char *secret = NULL;

  if (action->param == NULL)
    {
      if (action->value == NULL)
        action->value = g_strdup ("");
      return TRUE;
    }
  value = replay->params != NULL && JSON_NODE_HOLDS_OBJECT (replay->params)
            ? json_object_get_member (json_node_get_object (replay->params), action->param) : NULL;
  if (value == NULL)
    {
      *why = g_strdup_printf ("the trace types {%s}, which this step's params do not have",
                              action->param);
      return FALSE;
    }
  if (sight_params_is_secret (value, &secret))
    {
      *out_secret = secret;
      return TRUE;
    }
  g_free (action->value);
  action->value = JSON_NODE_HOLDS_VALUE (value) && json_node_get_value_type (value) == G_TYPE_STRING
                    ? g_strdup (json_node_get_string (value)) : json_to_string (value, FALSE);
  return TRUE;
}

static void
replay_observed_cb (GObject      *source,
                    GAsyncResult *result,
                    gpointer      data)
{
  GTask *task = data;
  Replay *replay = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(SightObservation) obs = sight_observation_capture_finish (result, &error);
  JsonObject *recorded = sight_trace_get_action (replay->trace, replay->index);
  g_auto(SightAction) action = { 0 };
  g_autofree char *why = NULL;
  const char *secret = NULL;

  if (obs == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      g_object_unref (task);
      return;
    }
  /* replay_next read the action already */
  sight_action_from_tool_call (&action, json_object_get_string_member (recorded, "tool"),
                               object_member (recorded, "args"));
  g_clear_pointer (&action.ref, g_free);
  if (!sight_trace_refind (replay->trace, replay->index, obs, &action.ref, &action.x, &action.y,
                           &why))
    {
      replay_outcome (task, "missed", why, replay->index);
      return;
    }
  /* a node found by its ref takes the action; a bare point is tapped */
  if (action.ref == NULL && (action.x != 0 || action.y != 0))
    action.kind = SIGHT_ACTION_TAP_AT;
  if (action.kind == SIGHT_ACTION_FILL || action.kind == SIGHT_ACTION_SELECT)
    {
      if (!replay_value (replay, &action, &secret, &why))
        {
          replay_outcome (task, "missed", why, replay->index);
          return;
        }
      if (secret != NULL && action.kind == SIGHT_ACTION_FILL && action.ref != NULL)
        {
          sight_secret_fill_async (replay->page, replay->secrets, secret, action.param,
                                   replay->origin, action.ref, replay_remaining (replay),
                                   g_task_get_cancellable (task), performed_cb, task);
          return;
        }
      if (secret != NULL)
        {
          replay_outcome (task, "missed", "the trace selects a secret, which only a fill types",
                          replay->index);
          return;
        }
    }
  sight_web_page_perform_action_async (replay->page, &action, replay_remaining (replay),
                                       g_task_get_cancellable (task), performed_cb, task);
}

static void
replay_loaded_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      data)
{
  GTask *task = data;
  Replay *replay = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;

  if (!sight_web_page_load_finish (SIGHT_WEB_PAGE (source), result, &error))
    {
      replay_outcome (task, "missed", error->message, replay->index);
      return;
    }
  replay_advance (task);
}

static void
end_state_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      data)
{
  GTask *task = data;
  Replay *replay = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(SightObservation) obs = sight_observation_capture_finish (result, &error);
  g_autofree char *why = NULL;

  if (obs != NULL && sight_trace_end_state_returned (replay->trace, obs, &why))
    {
      replay_outcome (task, "self-finalized", NULL, -1);
      return;
    }
  if (g_get_monotonic_time () + END_STATE_POLL_MS * 1000 >= MIN (replay->deadline, replay->end_deadline))
    {
      replay_outcome (task, "unconfirmed", why != NULL ? why : error->message, -1);
      return;
    }
  g_timeout_add (END_STATE_POLL_MS, replay_next_cb, task);
}

static void
replay_back_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      data)
{
  GTask *task = data;
  Replay *replay = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;

  if (!sight_web_page_history_finish (SIGHT_WEB_PAGE (source), result, &error))
    {
      replay_outcome (task, "missed", error->message, replay->index);
      return;
    }
  replay_advance (task);
}

static void
replay_next (GTask *task)
{
  Replay *replay = g_task_get_task_data (task);
  g_auto(SightAction) action = { 0 };
  JsonObject *recorded, *args;
  const char *tool;

  if (g_task_return_error_if_cancelled (task))
    {
      g_object_unref (task);
      return;
    }
  if (replay->index >= sight_trace_get_n_actions (replay->trace))
    {
      if (replay->end_deadline == 0)
        replay->end_deadline = g_get_monotonic_time () + END_STATE_WAIT_MS * 1000;
      sight_observation_capture_current_async (replay->page, SIGHT_OBSERVE_PARSE_TREE,
                                               replay_remaining (replay),
                                               g_task_get_cancellable (task), end_state_cb, task);
      return;
    }
  if (g_get_monotonic_time () >= replay->deadline)
    {
      replay_outcome (task, "missed", "the step's deadline passed during the replay",
                      replay->index);
      return;
    }

  recorded = sight_trace_get_action (replay->trace, replay->index);
  tool = json_object_get_string_member_with_default (recorded, "tool", "");
  args = object_member (recorded, "args");
  if (!sight_action_from_tool_call (&action, tool, args))
    {
      g_autofree char *why = g_strdup_printf ("the trace holds an action Sightline does not "
                                              "know: \"%s\"", tool);

      replay_outcome (task, "missed", why, replay->index);
      return;
    }

  switch (action.kind)
    {
    case SIGHT_ACTION_NAVIGATE:
      {
        const char *url = action.value != NULL ? action.value : "";
        g_autoptr(GUri) base = g_uri_parse (sight_web_page_get_uri (replay->page), G_URI_FLAGS_NONE,
                                            NULL);
        g_autoptr(GUri) joined = base != NULL ? g_uri_parse_relative (base, url, G_URI_FLAGS_NONE,
                                                                      NULL)
                                              : NULL;
        g_autofree char *uri = joined != NULL ? g_uri_to_string (joined) : g_strdup (url);

        sight_web_page_load_async (replay->page, uri, SIGHT_WAIT_UNTIL_LOAD,
                                   replay_remaining (replay), g_task_get_cancellable (task),
                                   replay_loaded_cb, task);
      }
      return;
    case SIGHT_ACTION_BACK:
      sight_web_page_history_async (replay->page, SIGHT_HISTORY_BACK, replay_remaining (replay),
                                    g_task_get_cancellable (task), replay_back_cb, task);
      return;
    case SIGHT_ACTION_WAIT:
      replay->index++;
      g_timeout_add ((guint) MIN (g_ascii_strtoll (action.value, NULL, 10),
                                  (gint64) replay_remaining (replay)),
                     replay_next_cb, task);
      return;
    case SIGHT_ACTION_SCREENSHOT:
      replay->index++;
      replay_next (task);
      return;
    default:
      /* an action on a node or the page */
      break;
    }
  if (object_member (recorded, "descriptor") == NULL)
    {
      /* an action on the page or the focused element: a key, a page scroll */
      if (action.kind != SIGHT_ACTION_PRESS)
        {
          g_free (action.value);
          action.value = g_strdup (args != NULL ? json_object_get_string_member_with_default (
                                                    args, "direction", NULL) : NULL);
          action.kind = SIGHT_ACTION_SCROLL;
        }
      g_clear_pointer (&action.ref, g_free);
      sight_web_page_perform_action_async (replay->page, &action, replay_remaining (replay),
                                           g_task_get_cancellable (task), performed_cb, task);
      return;
    }
  sight_observation_capture_current_async (replay->page, SIGHT_OBSERVE_PARSE_TREE,
                                           replay_remaining (replay),
                                           g_task_get_cancellable (task), replay_observed_cb, task);
}

void
sight_trace_replay_async (SightTrace          *trace,
                          SightWebPage        *page,
                          JsonNode            *params,
                          SightSecrets        *secrets,
                          guint                timeout_ms,
                          GCancellable        *cancellable,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data)
{
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);
  Replay *replay = g_new0 (Replay, 1);

  g_task_set_source_tag (task, sight_trace_replay_async);
  replay->trace = sight_trace_ref (trace);
  replay->page = g_object_ref (page);
  replay->params = params != NULL ? json_node_ref (params) : NULL;
  replay->secrets = secrets != NULL ? sight_secrets_ref (secrets) : NULL;
  replay->origin = g_strdup (sight_web_page_get_uri (page));
  replay->deadline = g_get_monotonic_time () + (gint64) MAX (timeout_ms, 1u) * 1000;
  g_task_set_task_data (task, replay, (GDestroyNotify) replay_free);
  replay_next (task);
}

JsonNode *
sight_trace_replay_finish (SightTrace    *trace,
                           GAsyncResult  *result,
                           GError       **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}
