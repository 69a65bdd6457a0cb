/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-observation"

#include "config.h"

#include "sight-observation.h"

#include <string.h>

#include "sight-error.h"
#include "sight-json.h"
#include "sight-observation-private.h"
#include "sight-observation-resources.h"

struct _SightObservation
{
  GObject parent_instance;

  /* owned */
  JsonNode        *result;        /* only here when made from text: freed off the main thread */
  gboolean         owns_result;
  SightScreenshot *shot;
  GArray          *secure_boxes;  /* SightRect */
  /* The tree crosses from the page as JSON text and stays so until a
   * caller walks it (load_tree()): parsing a large page's tree in json-glib
   * took as long as a third of the page's walk (bench/observe), and the
   * store, the snapshot command and the model's text need only the text. */
  GMutex           tree_lock;     /* tree, nodes and by_ref while they are built */
  char            *tree_text;     /* the tree's JSON as the page wrote it (kept: to_json) */
  JsonNode        *tree;          /* its own reference (the result's "tree" is null when split) */
  GArray          *nodes;         /* SightObservationNode, document order; built with the tree */
  GHashTable      *by_ref;        /* ref -> index in nodes, with them */

  /* borrowed from result */
  const char *url;
  const char *title;
  const char *text;

  gboolean full_text;
  guint    n_elements;
  guint    n_nodes;
  guint    n_interactive;
  guint    n_not_observed;
  guint    n_errors;
  guint    n_secure;
  guint    n_secure_total;
  int      vw, vh, sx, sy;
};

G_DEFINE_FINAL_TYPE (SightObservation, sight_observation, G_TYPE_OBJECT)

/* The same as sight_screenshot_free(), kept here so that this file links
 * without the page (the JSON side is usable on its own, e.g. by the store). */
static void
screenshot_free (SightScreenshot *shot)
{
  g_clear_pointer (&shot->bytes, g_bytes_unref);
  g_free (shot);
}

static void load_tree (SightObservation *self);

/* Freeing a large page's tree takes as long as a good part of its parse
 * (about a third in json-glib, 100 ms for cards-5000's 2.5 MB on this
 * machine). Nothing else holds a reference into a tree parsed from text
 * (the inspector's rows hold the observation), so a worker frees it. */
#define FREE_IN_WORKER_NODES 2000

static void
free_tree_thread (GTask        *task,
                  gpointer      source_object,
                  gpointer      task_data,
                  GCancellable *cancellable)
{
  JsonNode **nodes = task_data;

  g_clear_pointer (&nodes[0], json_node_unref);
  g_clear_pointer (&nodes[1], json_node_unref);
  g_free (nodes);
  g_task_return_boolean (task, TRUE);
}

static void
sight_observation_finalize (GObject *object)
{
  SightObservation *self = SIGHT_OBSERVATION (object);

  g_clear_pointer (&self->nodes, g_array_unref);
  g_clear_pointer (&self->by_ref, g_hash_table_unref);
  if (self->owns_result && self->tree != NULL && self->n_nodes > FREE_IN_WORKER_NODES)
    {
      g_autoptr(GTask) task = g_task_new (NULL, NULL, NULL, NULL);
      JsonNode **nodes = g_new0 (JsonNode *, 2);

      nodes[0] = g_steal_pointer (&self->result);
      nodes[1] = g_steal_pointer (&self->tree);
      g_task_set_source_tag (task, free_tree_thread);
      g_task_set_task_data (task, nodes, NULL);
      g_task_run_in_thread (task, free_tree_thread);
    }
  g_clear_pointer (&self->result, json_node_unref);
  g_clear_pointer (&self->tree, json_node_unref);
  g_clear_pointer (&self->tree_text, g_free);
  g_mutex_clear (&self->tree_lock);
  g_clear_pointer (&self->shot, screenshot_free);
  g_clear_pointer (&self->secure_boxes, g_array_unref);

  G_OBJECT_CLASS (sight_observation_parent_class)->finalize (object);
}

static void
sight_observation_class_init (SightObservationClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sight_observation_finalize;
}

static void
sight_observation_init (SightObservation *self)
{
  self->secure_boxes = g_array_new (FALSE, TRUE, sizeof (SightRect));
  g_mutex_init (&self->tree_lock);
}

const char *
sight_observation_get_script (void)
{
  static char *script;

  if (g_once_init_enter (&script))
    {
      g_autoptr(GBytes) bytes = NULL;
      g_autoptr(GError) error = NULL;
      char *text;

      bytes = g_resource_lookup_data (sight_observation_js_get_resource (),
                                      "/dev/sightline/engine/js/snapshot.js",
                                      G_RESOURCE_LOOKUP_FLAGS_NONE, &error);
      if (bytes == NULL)
        g_error ("snapshot.js missing from the engine's resources: %s", error->message);
      text = g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
      g_once_init_leave (&script, text);
    }
  return script;
}

char *
sight_observation_build_call (const char *call)
{
  g_return_val_if_fail (call != NULL, NULL);
  return g_strconcat (sight_observation_get_script (), "\nreturn __sight.snapshot.", call, ";",
                      NULL);
}

static guint
member_uint (JsonObject *object,
             const char *name)
{
  if (object == NULL || !json_object_has_member (object, name))
    return 0;
  return (guint) MAX (0, json_object_get_int_member (object, name));
}

static gboolean
read_box (JsonObject *node,
          SightRect  *rect)
{
  JsonArray *box;

  if (node == NULL || !json_object_has_member (node, "box"))
    return FALSE;
  box = json_object_get_array_member (node, "box");
  if (box == NULL || json_array_get_length (box) != 4)
    return FALSE;
  rect->x = json_array_get_double_element (box, 0);
  rect->y = json_array_get_double_element (box, 1);
  rect->width = json_array_get_double_element (box, 2);
  rect->height = json_array_get_double_element (box, 3);
  return TRUE;
}

SightObservation *
sight_observation_new_from_json (JsonNode  *result,
                                 GError   **error)
{
  g_autoptr(SightObservation) self = NULL;
  JsonObject *object, *counts, *viewport;

  g_return_val_if_fail (result != NULL, NULL);

  if (!JSON_NODE_HOLDS_OBJECT (result) ||
      !json_object_has_member (json_node_get_object (result), "version"))
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED,
                           "The page returned no observation");
      return NULL;
    }

  self = g_object_new (SIGHT_TYPE_OBSERVATION, NULL);
  self->result = json_node_ref (result);
  object = json_node_get_object (result);

  self->url = json_object_get_string_member_with_default (object, "url", "");
  self->title = json_object_get_string_member_with_default (object, "title", "");
  self->text = json_object_get_string_member_with_default (object, "text", "");
  self->full_text = g_strcmp0 (json_object_get_string_member_with_default (object, "textMode", ""),
                               "full") == 0;
  if (json_object_has_member (object, "tree") &&
      JSON_NODE_HOLDS_OBJECT (json_object_get_member (object, "tree")))
    self->tree = json_node_ref (json_object_get_member (object, "tree"));

  counts = json_object_has_member (object, "counts")
    ? json_object_get_object_member (object, "counts") : NULL;
  self->n_elements = member_uint (counts, "elements");
  self->n_nodes = member_uint (counts, "nodes");
  self->n_interactive = member_uint (counts, "interactive");
  self->n_not_observed = member_uint (counts, "notObserved");
  self->n_errors = member_uint (counts, "errors");
  self->n_secure = member_uint (counts, "secureInView");
  self->n_secure_total = member_uint (counts, "secure");

  viewport = json_object_has_member (object, "viewport")
    ? json_object_get_object_member (object, "viewport") : NULL;
  self->vw = (int) member_uint (viewport, "width");
  self->vh = (int) member_uint (viewport, "height");
  self->sx = viewport ? (int) json_object_get_int_member_with_default (viewport, "scrollX", 0) : 0;
  self->sy = viewport ? (int) json_object_get_int_member_with_default (viewport, "scrollY", 0) : 0;

  if (json_object_has_member (object, "secure"))
    {
      JsonArray *secure = json_object_get_array_member (object, "secure");

      for (guint i = 0; secure != NULL && i < json_array_get_length (secure); i++)
        {
          JsonObject *s = json_array_get_object_element (secure, i);
          SightRect rect;

          if (json_object_get_boolean_member_with_default (s, "inView", FALSE) &&
              read_box (s, &rect))
            g_array_append_val (self->secure_boxes, rect);
        }
    }

  return g_steal_pointer (&self);
}

/* The one way from JSON text to an observation, for a live capture and a
 * stored one alike: parsed, built and indexed (sight_observation_get_nodes())
 * by the caller's thread, and its tree freed by a worker when it goes.
 * @stored: @json is as sight_observation_to_json() wrote it (NULL or
 * unreadable: an empty observation; @url for JSON that names none). */
static SightObservation *
observation_from_text (const char  *json,
                       gboolean     stored,
                       const char  *url,
                       GError     **error)
{
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *head = NULL;
  g_autofree char *tree_text = NULL;
  SightObservation *self;
  gsize start, end;

  /* The tree is set aside as text (load_tree()); the rest is parsed. */
  if (json != NULL && sight_json_find_member (json, -1, "tree", &start, &end) &&
      json[start] == '{')
    {
      gsize length = end + strlen (json + end);

      tree_text = g_strndup (json + start, end - start);
      head = g_malloc (start + strlen ("null") + (length - end) + 1);
      memcpy (head, json, start);
      memcpy (head + start, "null", strlen ("null"));
      memcpy (head + start + strlen ("null"), json + end, length - end + 1);
      json = head;
    }
  if (json != NULL)
    node = sight_json_parse (json, -1, SIGHT_JSON_MAX_DEPTH_TREE, NULL);
  if (stored)
    {
      JsonObject *object;

      if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
        {
          g_autoptr(JsonObject) empty = json_object_new ();

          g_clear_pointer (&node, json_node_unref);
          node = json_node_new (JSON_NODE_OBJECT);
          json_node_set_object (node, empty);
        }
      object = json_node_get_object (node);
      if (!json_object_has_member (object, "version"))
        json_object_set_int_member (object, "version", 1);
      if (url != NULL && !json_object_has_member (object, "url"))
        json_object_set_string_member (object, "url", url);
    }
  else if (node == NULL)
    node = json_node_new (JSON_NODE_NULL);
  self = sight_observation_new_from_json (node, error);
  if (self != NULL)
    {
      self->owns_result = TRUE;
      self->tree_text = g_steal_pointer (&tree_text);
    }
  return self;
}

SightObservation *
sight_observation_new_from_text (const char  *json,
                                 GError     **error)
{
  g_return_val_if_fail (json != NULL, NULL);
  return observation_from_text (json, FALSE, NULL, error);
}

static void
set_stored_screenshot (SightObservation      *self,
                       const SightScreenshot *shot)
{
  SightScreenshot *copy;

  if (shot == NULL || shot->bytes == NULL)
    return;
  copy = g_new0 (SightScreenshot, 1);
  *copy = *shot;
  copy->bytes = g_bytes_ref (shot->bytes);
  if (copy->scale <= 0)
    copy->scale = 1.0;
  _sight_observation_set_screenshot (self, copy);
}

SightObservation *
sight_observation_new_from_stored (const char            *json,
                                   const char            *url,
                                   const SightScreenshot *shot)
{
  SightObservation *self = observation_from_text (json, TRUE, url, NULL);

  if (self != NULL)
    set_stored_screenshot (self, shot);
  return self;
}

/* Parsing in a worker ---------------------------------------------------- */

typedef struct {
  char            *json;
  gboolean         load_tree;  /* parse and index the tree too */
  gboolean         stored;
  char            *url;
  SightScreenshot *shot;   /* stored: the screenshot taken with it, or NULL */
} Parse;

static void
parse_free (Parse *parse)
{
  g_free (parse->json);
  g_free (parse->url);
  if (parse->shot != NULL)
    screenshot_free (parse->shot);
  g_free (parse);
}

/* The JSON of a large page's tree is megabytes: json-glib parsing it took
 * seconds of the main loop (bench/inspector). Nothing here touches GTK or
 * WebKit; the object is handed back whole. */
static void
parse_thread (GTask        *task,
              gpointer      source_object,
              gpointer      task_data,
              GCancellable *cancellable)
{
  Parse *parse = task_data;
  GError *error = NULL;
  gint64 t0 = g_get_monotonic_time ();
  SightObservation *self;

  self = observation_from_text (parse->json, parse->stored, parse->url, &error);
  if (self == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  if (parse->load_tree)
    load_tree (self);
  if (parse->shot != NULL)
    set_stored_screenshot (self, parse->shot);
  else if (!parse->stored)
    _sight_observation_set_timing (self, "parse", (g_get_monotonic_time () - t0) / 1000.0);
  g_task_return_pointer (task, self, g_object_unref);
}

static void
parse_in_worker (Parse               *parse,
                 GCancellable        *cancellable,
                 GAsyncReadyCallback  callback,
                 gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, cancellable, callback, user_data);

  g_task_set_source_tag (task, parse_in_worker);
  g_task_set_task_data (task, parse, (GDestroyNotify) parse_free);
  g_task_run_in_thread (task, parse_thread);
}

void
_sight_observation_new_from_text_async (char                *json,
                                        gboolean             load_tree,
                                        GCancellable        *cancellable,
                                        GAsyncReadyCallback  callback,
                                        gpointer             user_data)
{
  Parse *parse = g_new0 (Parse, 1);

  parse->json = json;
  parse->load_tree = load_tree;
  parse_in_worker (parse, cancellable, callback, user_data);
}

void
sight_observation_new_from_stored_async (const char            *json,
                                         const char            *url,
                                         const SightScreenshot *shot,
                                         GCancellable          *cancellable,
                                         GAsyncReadyCallback    callback,
                                         gpointer               user_data)
{
  Parse *parse = g_new0 (Parse, 1);

  parse->json = g_strdup (json);
  parse->load_tree = TRUE;
  parse->stored = TRUE;
  parse->url = g_strdup (url);
  if (shot != NULL && shot->bytes != NULL)
    {
      parse->shot = g_new0 (SightScreenshot, 1);
      *parse->shot = *shot;
      parse->shot->bytes = g_bytes_ref (shot->bytes);
      parse->shot->pixbuf = NULL;
    }
  parse_in_worker (parse, cancellable, callback, user_data);
}

static SightObservation *
parse_finish (GAsyncResult  *result,
              GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == parse_in_worker, NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

SightObservation *
_sight_observation_new_from_text_finish (GAsyncResult  *result,
                                         GError       **error)
{
  return parse_finish (result, error);
}

SightObservation *
sight_observation_new_from_stored_finish (GAsyncResult  *result,
                                          GError       **error)
{
  return parse_finish (result, error);
}

void
_sight_observation_set_screenshot (SightObservation *self,
                                   SightScreenshot  *shot)
{
  g_clear_pointer (&self->shot, screenshot_free);
  self->shot = shot;
}

void
_sight_observation_set_timing (SightObservation *self,
                               const char       *phase,
                               double            ms)
{
  JsonObject *object = json_node_get_object (self->result);
  JsonNode *timing = json_object_get_member (object, "timing");

  if (timing == NULL || !JSON_NODE_HOLDS_OBJECT (timing))
    {
      json_object_set_object_member (object, "timing", json_object_new ());
      timing = json_object_get_member (object, "timing");
    }
  json_object_set_double_member (json_node_get_object (timing), phase, ms);
}

const char *
sight_observation_get_url (SightObservation *self)
{
  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), NULL);
  return self->url;
}

const char *
sight_observation_get_state (SightObservation *self)
{
  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), NULL);
  if (self->result == NULL || !JSON_NODE_HOLDS_OBJECT (self->result))
    return NULL;
  return json_object_get_string_member_with_default (json_node_get_object (self->result),
                                                     "state", NULL);
}

const char *
sight_observation_get_title (SightObservation *self)
{
  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), NULL);
  return self->title;
}

const char *
sight_observation_get_text (SightObservation *self)
{
  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), NULL);
  return self->text;
}

gboolean
sight_observation_is_full_text (SightObservation *self)
{
  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), FALSE);
  return self->full_text;
}

JsonNode *
sight_observation_get_tree (SightObservation *self)
{
  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), NULL);
  load_tree (self);
  return self->tree;
}

JsonNode *
sight_observation_get_result (SightObservation *self)
{
  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), NULL);
  return self->result;
}

char *
sight_observation_to_json (SightObservation *self,
                           gboolean          pretty)
{
  g_autoptr(JsonNode) copy = NULL;
  g_autoptr(GList) members = NULL;
  g_autofree char *head = NULL;
  const char *tree_text = NULL;
  JsonObject *source, *object;
  GString *out;

  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), NULL);

  /* The tree as the page wrote it goes out after the rest, unparsed. */
  if (!pretty)
    tree_text = self->tree_text;
  if (tree_text == NULL)
    load_tree (self);

  /* A new top-level object sharing the members (json_node_copy() would share
   * the object itself, and the result must stay as it is). */
  source = json_node_get_object (self->result);
  object = json_object_new ();
  members = json_object_get_members (source);
  for (GList *l = members; l != NULL; l = l->next)
    if (!g_str_equal (l->data, "timing") && !g_str_equal (l->data, "state") &&
        !g_str_equal (l->data, "tree"))
      json_object_set_member (object, l->data,
                              json_node_copy (json_object_get_member (source, l->data)));
  copy = json_node_init_object (json_node_alloc (), object);
  json_object_unref (object);
  if (self->shot != NULL)
    {
      JsonObject *shot = json_object_new ();

      json_object_set_int_member (shot, "width", self->shot->width);
      json_object_set_int_member (shot, "height", self->shot->height);
      json_object_set_double_member (shot, "scale", self->shot->scale);
      json_object_set_int_member (shot, "bytes", g_bytes_get_size (self->shot->bytes));
      json_object_set_int_member (shot, "masked", self->shot->n_masked);
      json_object_set_int_member (shot, "secretRegions", self->shot->n_secret_regions);
      json_object_set_object_member (object, "screenshot", shot);
    }
  json_object_set_boolean_member (object, "maskingProven",
                                  sight_observation_masking_proven (self));
  if (tree_text == NULL)
    {
      if (self->tree != NULL)
        json_object_set_member (object, "tree", json_node_copy (self->tree));
      return json_to_string (copy, pretty);
    }
  /* "{...}": the object has members (maskingProven at least). */
  head = json_to_string (copy, FALSE);
  out = g_string_sized_new (strlen (head) + strlen (tree_text) + 16);
  g_string_append_len (out, head, strlen (head) - 1);
  g_string_append (out, ",\"tree\":");
  g_string_append (out, tree_text);
  g_string_append_c (out, '}');
  return g_string_free (out, FALSE);
}

void
sight_observation_get_viewport (SightObservation *self,
                                int              *width,
                                int              *height,
                                int              *scroll_x,
                                int              *scroll_y)
{
  g_return_if_fail (SIGHT_IS_OBSERVATION (self));
  if (width) *width = self->vw;
  if (height) *height = self->vh;
  if (scroll_x) *scroll_x = self->sx;
  if (scroll_y) *scroll_y = self->sy;
}

guint
sight_observation_get_n_elements (SightObservation *self)
{
  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), 0);
  return self->n_elements;
}

guint
sight_observation_get_n_nodes (SightObservation *self)
{
  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), 0);
  return self->n_nodes;
}

guint
sight_observation_get_n_interactive (SightObservation *self)
{
  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), 0);
  return self->n_interactive;
}

guint
sight_observation_get_n_not_observed (SightObservation *self)
{
  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), 0);
  return self->n_not_observed;
}

guint
sight_observation_get_n_errors (SightObservation *self)
{
  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), 0);
  return self->n_errors;
}

guint
sight_observation_get_n_secure (SightObservation *self)
{
  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), 0);
  return self->n_secure;
}

guint
sight_observation_get_n_secure_total (SightObservation *self)
{
  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), 0);
  return self->n_secure_total;
}

guint
sight_observation_get_n_masked (SightObservation *self)
{
  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), 0);
  return self->shot != NULL ? self->shot->n_masked : 0;
}

gboolean
sight_observation_masking_proven (SightObservation *self)
{
  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), FALSE);
  /* the secure fields in view and every region holding a filled secret */
  return self->shot != NULL &&
         self->shot->n_masked >= self->n_secure + self->shot->n_secret_regions;
}

const SightScreenshot *
sight_observation_get_screenshot (SightObservation *self)
{
  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), NULL);
  return self->shot;
}

GArray *
sight_observation_get_secure_boxes (SightObservation *self)
{
  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), NULL);
  return self->secure_boxes;
}

/* ----------------------------------------------------------------------- */
/* Walking the tree                                                         */

static JsonArray *
children_of (JsonObject *node)
{
  if (node == NULL || !json_object_has_member (node, "children"))
    return NULL;
  return json_object_get_array_member (node, "children");
}

static gboolean
is_text (JsonObject *node)
{
  return json_object_has_member (node, "text");
}

static const char *member_string (JsonObject *node,
                                  const char *name);

typedef struct {
  guint      index;    /* in nodes */
  JsonArray *kids;
  guint      next;     /* the next child to visit */
  guint      n_objects;
} IndexFrame;

static void
index_append (SightObservation *self,
              JsonObject       *node,
              guint             parent,
              guint             position)
{
  SightObservationNode n = { node, "", "", "", parent, position };
  const char *s;

  if ((s = member_string (node, "role")) != NULL)
    n.role = s;
  if ((s = member_string (node, "name")) != NULL)
    n.name = s;
  if ((s = member_string (node, "ref")) != NULL)
    n.ref = s;
  if (*n.ref != '\0')
    g_hash_table_insert (self->by_ref, (gpointer) n.ref, GUINT_TO_POINTER (self->nodes->len));
  g_array_append_val (self->nodes, n);
}

/* In document order, without recursion: the depth is the page's. */
static void
index_tree (SightObservation *self,
            JsonObject       *root)
{
  g_autoptr(GArray) stack = g_array_new (FALSE, FALSE, sizeof (IndexFrame));
  IndexFrame frame = { 0, children_of (root), 0, 0 };

  index_append (self, root, G_MAXUINT, 0);
  g_array_append_val (stack, frame);
  while (stack->len > 0)
    {
      IndexFrame *top = &g_array_index (stack, IndexFrame, stack->len - 1);
      JsonNode *child;

      if (top->kids == NULL || top->next >= json_array_get_length (top->kids))
        {
          g_array_set_size (stack, stack->len - 1);
          continue;
        }
      child = json_array_get_element (top->kids, top->next++);
      if (!JSON_NODE_HOLDS_OBJECT (child))
        continue;
      frame.index = self->nodes->len;
      frame.kids = children_of (json_node_get_object (child));
      frame.next = 0;
      frame.n_objects = 0;
      index_append (self, json_node_get_object (child), top->index, top->n_objects++);
      g_array_append_val (stack, frame);
    }
}

/* The tree parsed and indexed, once, by whichever thread asks first (the
 * others wait for it). A tree too deep or unreadable is none: lookups find
 * nothing, as with SIGHT_OBSERVE_NO_TREE. */
static void
load_tree (SightObservation *self)
{
  g_mutex_lock (&self->tree_lock);
  if (self->nodes == NULL && self->tree_text != NULL)
    {
      JsonNode *tree = sight_json_parse (self->tree_text, -1, SIGHT_JSON_MAX_DEPTH_TREE - 1, NULL);

      if (tree != NULL && JSON_NODE_HOLDS_OBJECT (tree))
        self->tree = tree;
      else
        g_clear_pointer (&tree, json_node_unref);
    }
  if (self->nodes == NULL)
    {
      self->nodes = g_array_new (FALSE, FALSE, sizeof (SightObservationNode));
      self->by_ref = g_hash_table_new (g_str_hash, g_str_equal);
      if (self->tree != NULL)
        index_tree (self, json_node_get_object (self->tree));
    }
  g_mutex_unlock (&self->tree_lock);
}

static void
load_tree_thread (GTask        *task,
                  gpointer      source_object,
                  gpointer      task_data,
                  GCancellable *cancellable)
{
  load_tree (source_object);
  g_task_return_boolean (task, TRUE);
}

void
sight_observation_load_tree_async (SightObservation    *self,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (SIGHT_IS_OBSERVATION (self));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_observation_load_tree_async);
  if (sight_observation_tree_loaded (self))
    g_task_return_boolean (task, TRUE);
  else
    g_task_run_in_thread (task, load_tree_thread);
}

gboolean
sight_observation_load_tree_finish (SightObservation  *self,
                                    GAsyncResult      *result,
                                    GError           **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

gboolean
sight_observation_tree_loaded (SightObservation *self)
{
  gboolean loaded;

  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), FALSE);
  g_mutex_lock (&self->tree_lock);
  loaded = self->nodes != NULL;
  g_mutex_unlock (&self->tree_lock);
  return loaded;
}

const SightObservationNode *
sight_observation_get_nodes (SightObservation *self,
                             guint            *n_nodes)
{
  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), NULL);

  load_tree (self);
  if (n_nodes != NULL)
    *n_nodes = self->nodes->len;
  return self->nodes->len > 0 ? (const SightObservationNode *) (gpointer) self->nodes->data
                              : NULL;
}

gboolean
sight_observation_find_ref (SightObservation *self,
                            const char       *ref,
                            guint            *index)
{
  gpointer value;

  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), FALSE);
  g_return_val_if_fail (ref != NULL, FALSE);

  sight_observation_get_nodes (self, NULL);
  if (!g_hash_table_lookup_extended (self->by_ref, ref, NULL, &value))
    return FALSE;
  if (index != NULL)
    *index = GPOINTER_TO_UINT (value);
  return TRUE;
}

JsonObject *
sight_observation_lookup (SightObservation *self,
                          const char       *ref)
{
  guint index;

  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), NULL);
  g_return_val_if_fail (ref != NULL, NULL);

  if (!sight_observation_find_ref (self, ref, &index))
    return NULL;
  return g_array_index (self->nodes, SightObservationNode, index).node;
}

static const char *
hit_test_in (JsonObject *node,
             double      x,
             double      y)
{
  JsonArray *kids = children_of (node);
  SightRect box;
  gboolean inside;

  inside = read_box (node, &box) &&
           x >= box.x && y >= box.y && x < box.x + box.width && y < box.y + box.height;

  /* Later siblings paint over earlier ones; look at them first. */
  for (guint i = kids != NULL ? json_array_get_length (kids) : 0; i > 0; i--)
    {
      JsonObject *child = json_array_get_object_element (kids, i - 1);
      const char *found;

      if (child == NULL || is_text (child))
        continue;
      found = hit_test_in (child, x, y);
      if (found != NULL)
        return found;
    }
  if (inside && json_object_has_member (node, "ref"))
    return json_object_get_string_member (node, "ref");
  return NULL;
}

const char *
sight_observation_hit_test (SightObservation *self,
                            double            x,
                            double            y)
{
  g_return_val_if_fail (SIGHT_IS_OBSERVATION (self), NULL);
  load_tree (self);
  if (self->tree == NULL)
    return NULL;
  return hit_test_in (json_node_get_object (self->tree), x, y);
}

/* ----------------------------------------------------------------------- */
/* Text                                                                     */

static void
append_quoted (GString    *s,
               const char *text,
               guint       max_chars)
{
  glong len = g_utf8_strlen (text, -1);
  const char *end = len > (glong) max_chars ? g_utf8_offset_to_pointer (text, max_chars)
                                            : text + strlen (text);

  g_string_append_c (s, '"');
  for (const char *p = text; p < end; p++)
    {
      if (*p == '"' || *p == '\\')
        g_string_append_c (s, '\\');
      g_string_append_c (s, *p);
    }
  if (len > (glong) max_chars)
    g_string_append (s, "…");
  g_string_append_c (s, '"');
}

static gboolean
is_number (const char *s)
{
  g_autoptr(GRegex) re = NULL;

  re = g_regex_new ("^-?\\d+(\\.\\d+)?$", 0, 0, NULL);
  return g_regex_match (re, s, 0, NULL);
}

static const char *
member_string (JsonObject *node,
               const char *name)
{
  JsonNode *member;

  if (!json_object_has_member (node, name))
    return NULL;
  member = json_object_get_member (node, name);
  if (!JSON_NODE_HOLDS_VALUE (member) || json_node_get_value_type (member) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (member);
}

/* TRUE for `true`; "mixed" for the string. */
static int
member_tristate (JsonObject *node,
                 const char *name)
{
  JsonNode *member;

  if (!json_object_has_member (node, name))
    return -1;
  member = json_object_get_member (node, name);
  if (JSON_NODE_HOLDS_VALUE (member) && json_node_get_value_type (member) == G_TYPE_BOOLEAN)
    return json_node_get_boolean (member) ? 1 : 0;
  if (JSON_NODE_HOLDS_VALUE (member) && json_node_get_value_type (member) == G_TYPE_STRING &&
      g_str_equal (json_node_get_string (member), "mixed"))
    return 2;
  return -1;
}

static void
append_node_line (GString    *s,
                  JsonObject *node,
                  guint       max_name)
{
  static const char *const flags[] = {
    "selected", NULL, "disabled", "required", "invalid", "readonly", "focused", "modal",
    "secure", "clickable", "focusable",
  };
  const char *name = member_string (node, "name");
  const char *value = member_string (node, "value");
  const char *desc = member_string (node, "desc");
  const char *origin = member_string (node, "origin");
  const char *ref = member_string (node, "ref");
  int t;

  g_string_append (s, json_object_get_string_member_with_default (node, "role", "generic"));
  if (name != NULL && *name != '\0')
    {
      g_string_append_c (s, ' ');
      append_quoted (s, name, max_name);
    }
  if (json_object_has_member (node, "level"))
    g_string_append_printf (s, " level=%" G_GINT64_FORMAT,
                            json_object_get_int_member (node, "level"));
  t = member_tristate (node, "checked");
  if (t == 1)
    g_string_append (s, " checked");
  else if (t == 2)
    g_string_append (s, " checked=mixed");
  for (guint i = 0; i < G_N_ELEMENTS (flags); i++)
    {
      if (flags[i] == NULL)
        {
          /* expanded and pressed sit between selected and disabled */
          t = member_tristate (node, "expanded");
          if (t == 1)
            g_string_append (s, " expanded");
          else if (t == 0)
            g_string_append (s, " collapsed");
          t = member_tristate (node, "pressed");
          if (t == 1)
            g_string_append (s, " pressed");
          else if (t == 2)
            g_string_append (s, " pressed=mixed");
          continue;
        }
      if (member_tristate (node, flags[i]) == 1)
        g_string_append_printf (s, " %s", flags[i]);
    }
  if (value != NULL)
    {
      g_string_append (s, " value=");
      if (is_number (value))
        g_string_append (s, value);
      else
        append_quoted (s, value, max_name);
    }
  if (member_string (node, "max") != NULL)
    g_string_append_printf (s, " max=%s", member_string (node, "max"));
  if (member_tristate (node, "crossOrigin") == 1)
    g_string_append (s, " cross-origin");
  if (origin != NULL)
    g_string_append_printf (s, " origin=%s", origin);
  if (desc != NULL)
    {
      g_string_append (s, " desc=");
      append_quoted (s, desc, max_name);
    }
  if (ref != NULL)
    g_string_append_printf (s, " #%s", ref);
}

char *
sight_observation_node_line (JsonObject *node)
{
  GString *s = g_string_new (NULL);

  g_return_val_if_fail (node != NULL, NULL);
  if (is_text (node))
    append_quoted (s, json_object_get_string_member (node, "text"), 200);
  else
    append_node_line (s, node, 120);
  return g_string_free (s, FALSE);
}

/* ----------------------------------------------------------------------- */
/* Diff                                                                     */

typedef struct {
  const char *ref;
  char       *line;    /* the node's line */
  char       *texts;   /* its direct text children, joined */
  guint       depth;
  JsonObject *node;
} DiffEntry;

static void
diff_entry_free (gpointer data)
{
  DiffEntry *e = data;

  g_free (e->line);
  g_free (e->texts);
  g_free (e);
}

static void
collect_entries (JsonObject *node,
                 guint       depth,
                 GPtrArray  *out)
{
  JsonArray *kids = children_of (node);
  DiffEntry *e = g_new0 (DiffEntry, 1);
  GString *texts = g_string_new (NULL);

  e->ref = json_object_has_member (node, "ref") ? json_object_get_string_member (node, "ref")
                                                : "document";
  e->line = sight_observation_node_line (node);
  e->depth = depth;
  e->node = node;
  g_ptr_array_add (out, e);
  for (guint i = 0; kids != NULL && i < json_array_get_length (kids); i++)
    {
      JsonObject *child = json_array_get_object_element (kids, i);

      if (child == NULL)
        continue;
      if (is_text (child))
        {
          if (texts->len > 0)
            g_string_append (texts, " / ");
          g_string_append (texts, json_object_get_string_member (child, "text"));
        }
      else
        collect_entries (child, depth + 1, out);
    }
  e->texts = g_string_free (texts, FALSE);
}

static void
append_texts (GString    *out,
              const char *texts,
              guint       indent)
{
  g_auto(GStrv) parts = NULL;

  if (texts == NULL || *texts == '\0')
    return;
  parts = g_strsplit (texts, " / ", 4);
  for (guint i = 0; parts[i] != NULL && i < 3; i++)
    {
      g_string_append (out, "\n  ");
      for (guint j = 0; j < indent + 1; j++)
        g_string_append_c (out, ' ');
      append_quoted (out, parts[i], 200);
    }
}

typedef struct {
  GString *out;
  guint    lines;
  guint    max_lines;
  guint    changes;
  guint    omitted;
} DiffOut;

static gboolean
diff_room (DiffOut *d)
{
  d->changes++;
  if (d->max_lines > 0 && d->lines >= d->max_lines)
    {
      d->omitted++;
      return FALSE;
    }
  d->lines++;
  if (d->out->len > 0)
    g_string_append_c (d->out, '\n');
  return TRUE;
}

/* Lists entries of @entries missing from @other: nested ones indented under
 * the outermost one that is missing too. */
static void
diff_one_side (GPtrArray  *entries,
               GHashTable *other,
               char        sign,
               DiffOut    *d)
{
  guint base_depth = G_MAXUINT;

  for (guint i = 0; i < entries->len; i++)
    {
      DiffEntry *e = g_ptr_array_index (entries, i);

      if (g_hash_table_contains (other, e->ref))
        {
          base_depth = G_MAXUINT;
          continue;
        }
      if (base_depth == G_MAXUINT || e->depth <= base_depth)
        base_depth = e->depth;
      if (!diff_room (d))
        continue;
      g_string_append_c (d->out, sign);
      g_string_append_c (d->out, ' ');
      for (guint j = base_depth; j < e->depth; j++)
        g_string_append_c (d->out, ' ');
      g_string_append (d->out, e->line);
      append_texts (d->out, e->texts, e->depth - base_depth);
    }
}

static GHashTable *
entries_by_ref (GPtrArray *entries)
{
  GHashTable *table = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint i = 0; i < entries->len; i++)
    {
      DiffEntry *e = g_ptr_array_index (entries, i);

      g_hash_table_insert (table, (gpointer) e->ref, e);
    }
  return table;
}

char *
sight_observation_diff (SightObservation *before,
                        SightObservation *after,
                        guint             max_lines,
                        guint            *n_changes)
{
  g_autoptr(GPtrArray) old_entries = g_ptr_array_new_with_free_func (diff_entry_free);
  g_autoptr(GPtrArray) new_entries = g_ptr_array_new_with_free_func (diff_entry_free);
  g_autoptr(GHashTable) old_by_ref = NULL;
  g_autoptr(GHashTable) new_by_ref = NULL;
  DiffOut d = { g_string_new (NULL), 0, max_lines, 0, 0 };

  g_return_val_if_fail (SIGHT_IS_OBSERVATION (before), NULL);
  g_return_val_if_fail (SIGHT_IS_OBSERVATION (after), NULL);

  load_tree (before);
  load_tree (after);
  if (before->tree != NULL)
    collect_entries (json_node_get_object (before->tree), 0, old_entries);
  if (after->tree != NULL)
    collect_entries (json_node_get_object (after->tree), 0, new_entries);
  old_by_ref = entries_by_ref (old_entries);
  new_by_ref = entries_by_ref (new_entries);

  if (g_strcmp0 (before->url, after->url) != 0 && diff_room (&d))
    g_string_append_printf (d.out, "~ page %s (was %s)", after->url, before->url);

  diff_one_side (new_entries, old_by_ref, '+', &d);
  diff_one_side (old_entries, new_by_ref, '-', &d);

  for (guint i = 0; i < new_entries->len; i++)
    {
      DiffEntry *e = g_ptr_array_index (new_entries, i);
      DiffEntry *o = g_hash_table_lookup (old_by_ref, e->ref);
      gboolean line_changed, texts_changed;

      if (o == NULL)
        continue;
      line_changed = g_strcmp0 (o->line, e->line) != 0;
      texts_changed = g_strcmp0 (o->texts, e->texts) != 0;
      if (!line_changed && !texts_changed)
        continue;
      if (!diff_room (&d))
        continue;
      g_string_append (d.out, "~ ");
      g_string_append (d.out, e->line);
      if (line_changed)
        g_string_append_printf (d.out, " (was: %s)", o->line);
      if (texts_changed)
        {
          g_string_append (d.out, " text ");
          append_quoted (d.out, e->texts, 200);
          g_string_append (d.out, " (was ");
          append_quoted (d.out, o->texts, 200);
          g_string_append (d.out, ")");
        }
    }

  if (d.omitted > 0)
    g_string_append_printf (d.out, "\n… %u more changes", d.omitted);
  if (n_changes != NULL)
    *n_changes = d.changes;
  return g_string_free (d.out, FALSE);
}
