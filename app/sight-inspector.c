/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-inspector"

#include "config.h"

#include "sight-inspector.h"

#include <glib/gi18n.h>
#include <string.h>

#include "sight-shot-view.h"

/* One node of the tree as the list shows it. */
#define SIGHT_TYPE_TREE_NODE (sight_tree_node_get_type ())
G_DECLARE_FINAL_TYPE (SightTreeNode, sight_tree_node, SIGHT, TREE_NODE, GObject)

struct _SightTreeNode
{
  GObject           parent_instance;
  SightObservation *observation;  /* owned: keeps @node's tree alive */
  JsonObject       *node;         /* borrowed from the observation */
  char             *states;
};

G_DEFINE_FINAL_TYPE (SightTreeNode, sight_tree_node, G_TYPE_OBJECT)

static void
sight_tree_node_finalize (GObject *object)
{
  SightTreeNode *self = SIGHT_TREE_NODE (object);

  g_clear_object (&self->observation);
  g_clear_pointer (&self->states, g_free);
  G_OBJECT_CLASS (sight_tree_node_parent_class)->finalize (object);
}

static void
sight_tree_node_class_init (SightTreeNodeClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sight_tree_node_finalize;
}

static void
sight_tree_node_init (SightTreeNode *self)
{
}

static char *
states_of (JsonObject *node)
{
  static const char *flags[] = { "checked", "selected", "expanded", "pressed", "disabled",
                                 "required", "invalid", "readonly", "focused", "modal",
                                 "secure", "clickable", NULL };
  g_autoptr(GString) text = g_string_new (NULL);

  for (guint i = 0; flags[i] != NULL; i++)
    {
      JsonNode *value = json_object_get_member (node, flags[i]);

      if (value == NULL || !JSON_NODE_HOLDS_VALUE (value))
        continue;
      if (json_node_get_value_type (value) == G_TYPE_BOOLEAN)
        {
          if (json_node_get_boolean (value))
            g_string_append_printf (text, "%s%s", text->len ? " " : "", flags[i]);
          else if (g_str_equal (flags[i], "expanded"))
            g_string_append_printf (text, "%scollapsed", text->len ? " " : "");
        }
      else if (json_node_get_value_type (value) == G_TYPE_STRING)
        g_string_append_printf (text, "%s%s=%s", text->len ? " " : "", flags[i],
                                json_node_get_string (value));
    }
  if (json_object_has_member (node, "level"))
    g_string_append_printf (text, "%slevel=%" G_GINT64_FORMAT, text->len ? " " : "",
                            json_object_get_int_member (node, "level"));
  if (json_object_has_member (node, "value") &&
      JSON_NODE_HOLDS_VALUE (json_object_get_member (node, "value")))
    {
      g_autofree char *value = g_strdup (json_object_get_string_member (node, "value"));

      if (value != NULL && g_utf8_strlen (value, -1) > 40)
        {
          g_autofree char *cut = g_utf8_substring (value, 0, 40);

          g_free (value);
          value = g_strconcat (cut, "…", NULL);
        }
      g_string_append_printf (text, "%svalue=“%s”", text->len ? " " : "",
                              value != NULL ? value : "");
    }
  return g_string_free (g_steal_pointer (&text), FALSE);
}

/* The states are read when the row is first shown: a tree of 200,000 nodes
 * makes items only for the rows expanded, and strings only for the rows
 * bound. An item holds the observation, not a reference on its JSON: the
 * tree's objects are then referenced by the observation alone, which can
 * free them off the main thread (sight-observation.c). */
static SightTreeNode *
sight_tree_node_new (SightObservation *observation,
                     JsonObject       *node)
{
  SightTreeNode *self = g_object_new (SIGHT_TYPE_TREE_NODE, NULL);

  self->observation = g_object_ref (observation);
  self->node = node;
  return self;
}

static const char *
sight_tree_node_get_states (SightTreeNode *self)
{
  if (self->states == NULL)
    self->states = states_of (self->node);
  return self->states;
}

static const char *
member_string (JsonObject *node,
               const char *member)
{
  JsonNode *value = json_object_get_member (node, member);

  if (value == NULL || !JSON_NODE_HOLDS_VALUE (value) ||
      json_node_get_value_type (value) != G_TYPE_STRING)
    return "";
  return json_node_get_string (value);
}

static const char *
node_string (SightTreeNode *self,
             const char    *member)
{
  return member_string (self->node, member);
}

/* A node's children as a list model whose items are made when the list asks
 * for them: expanding a list of 20,000 cards (a selection deep in it does)
 * makes items for the rows shown, not 20,000 objects on the main loop. */
#define SIGHT_TYPE_TREE_CHILDREN (sight_tree_children_get_type ())
G_DECLARE_FINAL_TYPE (SightTreeChildren, sight_tree_children, SIGHT, TREE_CHILDREN, GObject)

struct _SightTreeChildren
{
  GObject           parent_instance;
  SightObservation *observation;
  JsonArray        *array;    /* borrowed from the observation */
  GArray           *objects;  /* guint: the array's object elements; NULL when all are */
  guint             n_items;
  SightTreeNode   **items;    /* made on first use */
};

static GType
sight_tree_children_get_item_type (GListModel *model)
{
  return SIGHT_TYPE_TREE_NODE;
}

static guint
sight_tree_children_get_n_items (GListModel *model)
{
  return SIGHT_TREE_CHILDREN (model)->n_items;
}

static gpointer
sight_tree_children_get_item (GListModel *model,
                              guint       position)
{
  SightTreeChildren *self = SIGHT_TREE_CHILDREN (model);

  if (position >= self->n_items)
    return NULL;
  if (self->items[position] == NULL)
    {
      guint i = self->objects != NULL ? g_array_index (self->objects, guint, position) : position;

      self->items[position] = sight_tree_node_new (self->observation,
                                                   json_array_get_object_element (self->array, i));
    }
  return g_object_ref (self->items[position]);
}

static void
sight_tree_children_model_init (GListModelInterface *iface)
{
  iface->get_item_type = sight_tree_children_get_item_type;
  iface->get_n_items = sight_tree_children_get_n_items;
  iface->get_item = sight_tree_children_get_item;
}

G_DEFINE_FINAL_TYPE_WITH_CODE (SightTreeChildren, sight_tree_children, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL,
                                                      sight_tree_children_model_init))

static void
sight_tree_children_finalize (GObject *object)
{
  SightTreeChildren *self = SIGHT_TREE_CHILDREN (object);

  for (guint i = 0; i < self->n_items; i++)
    g_clear_object (&self->items[i]);
  g_free (self->items);
  g_clear_pointer (&self->objects, g_array_unref);
  g_clear_object (&self->observation);
  G_OBJECT_CLASS (sight_tree_children_parent_class)->finalize (object);
}

static void
sight_tree_children_class_init (SightTreeChildrenClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sight_tree_children_finalize;
}

static void
sight_tree_children_init (SightTreeChildren *self)
{
}

static GListModel *
children_model (SightTreeNode *item)
{
  JsonObject *node = item->node;
  SightTreeChildren *self;
  JsonArray *children;
  guint length;

  if (!json_object_has_member (node, "children") ||
      !JSON_NODE_HOLDS_ARRAY (json_object_get_member (node, "children")))
    return NULL;
  children = json_object_get_array_member (node, "children");
  length = json_array_get_length (children);
  self = g_object_new (SIGHT_TYPE_TREE_CHILDREN, NULL);
  self->observation = g_object_ref (item->observation);
  self->array = children;
  for (guint i = 0; i < length; i++)
    {
      gboolean object = JSON_NODE_HOLDS_OBJECT (json_array_get_element (children, i));

      if (!object && self->objects == NULL)
        {
          self->objects = g_array_sized_new (FALSE, FALSE, sizeof (guint), length);
          for (guint j = 0; j < i; j++)
            g_array_append_val (self->objects, j);
        }
      if (object && self->objects != NULL)
        g_array_append_val (self->objects, i);
    }
  self->n_items = self->objects != NULL ? self->objects->len : length;
  if (self->n_items == 0)
    {
      g_object_unref (self);
      return NULL;
    }
  self->items = g_new0 (SightTreeNode *, self->n_items);
  return G_LIST_MODEL (self);
}

static GListModel *
create_children_cb (gpointer item,
                    gpointer user_data)
{
  return children_model (SIGHT_TREE_NODE (item));
}

struct _SightInspector
{
  AdwBin parent_instance;

  /* template widgets */
  GtkStack          *stack;
  GtkSearchEntry    *search_entry;
  GtkLabel          *summary_label;
  GtkListView       *tree_view;
  GtkPaned          *paned;
  SightShotView     *shot_view;
  GtkStack          *shot_stack;

  /* owned */
  SightObservation  *observation;
  JsonObject        *root;          /* the observation's tree */
  GtkSingleSelection *selection;
  GtkWidget         *node_menu;     /* the tree's context menu, or NULL */
  GCancellable      *search_cancellable; /* the search under way */
  gboolean           syncing;
};

G_DEFINE_FINAL_TYPE (SightInspector, sight_inspector, ADW_TYPE_BIN)

enum { NODE_SELECTED, N_SIGNALS };
static guint signals[N_SIGNALS];

const char *
sight_inspector_get_selected_ref (SightInspector *self)
{
  GtkTreeListRow *row;
  SightTreeNode *node;

  g_return_val_if_fail (SIGHT_IS_INSPECTOR (self), NULL);

  row = gtk_single_selection_get_selected_item (self->selection);
  if (row == NULL)
    return NULL;
  node = gtk_tree_list_row_get_item (row);
  if (node == NULL)
    return NULL;
  g_object_unref (node);   /* the row keeps it */
  return node_string (node, "ref")[0] != '\0' ? node_string (node, "ref") : NULL;
}

static void
selection_changed_cb (GtkSingleSelection *selection,
                      GParamSpec         *pspec,
                      SightInspector     *self)
{
  const char *ref = sight_inspector_get_selected_ref (self);

  sight_shot_view_set_selected_ref (self->shot_view, ref);
  if (!self->syncing)
    g_signal_emit (self, signals[NODE_SELECTED], 0, ref);
}

static void
select_position (SightInspector *self,
                 guint           position)
{
  gtk_single_selection_set_selected (self->selection, position);
  if (position != GTK_INVALID_LIST_POSITION)
    gtk_widget_activate_action (GTK_WIDGET (self->tree_view), "list.scroll-to-item", "u",
                                position);
}

/* Rows are made lazily: the list holds the rows of expanded nodes only (the
 * model asks create_children_cb() for a node's children when it is
 * expanded). A new tree opens expanded as far as it shows at most
 * INITIAL_ROWS rows, which is all of a small page; a node selected by
 * ref, by search or from the screenshot has its ancestors expanded. Search
 * and selection use an index of the observation's JSON, never the rows. */
#define INITIAL_ROWS 500

static JsonArray *
node_children (JsonObject *node)
{
  JsonNode *children = json_object_get_member (node, "children");

  return children != NULL && JSON_NODE_HOLDS_ARRAY (children)
    ? json_node_get_array (children) : NULL;
}

/* Expands, in document order, every node whose children still fit in
 * INITIAL_ROWS rows: a list of 20,000 cards stays folded until asked for. */
static void
expand_initial (GtkTreeListModel *tree)
{
  GListModel *rows = G_LIST_MODEL (tree);

  for (guint i = 0; i < g_list_model_get_n_items (rows); i++)
    {
      g_autoptr(GtkTreeListRow) row = gtk_tree_list_model_get_row (tree, i);
      g_autoptr(SightTreeNode) node = gtk_tree_list_row_get_item (row);
      JsonArray *kids = node_children (node->node);

      if (kids != NULL &&
          g_list_model_get_n_items (rows) + json_array_get_length (kids) <= INITIAL_ROWS)
        gtk_tree_list_row_set_expanded (row, TRUE);
    }
}

/* The row of the observation's node @index (sight_observation_get_nodes(),
 * indexed in the capture's worker: one walk per observation, then every
 * search is a scan of an array and every selection a hash lookup and a walk
 * up the parents), its ancestors expanded. */
static guint
reveal (SightInspector *self,
        guint           index)
{
  GtkTreeListModel *tree = GTK_TREE_LIST_MODEL (gtk_single_selection_get_model (self->selection));
  g_autoptr(GArray) path = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr(GtkTreeListRow) row = NULL;
  const SightObservationNode *nodes;

  if (tree == NULL)
    return GTK_INVALID_LIST_POSITION;
  nodes = sight_observation_get_nodes (self->observation, NULL);
  for (guint i = index; nodes[i].parent != G_MAXUINT; i = nodes[i].parent)
    g_array_prepend_val (path, nodes[i].position);
  row = gtk_tree_list_model_get_row (tree, 0);
  for (guint i = 0; row != NULL && i < path->len; i++)
    {
      GtkTreeListRow *child;

      gtk_tree_list_row_set_expanded (row, TRUE);
      child = gtk_tree_list_row_get_child_row (row, g_array_index (path, guint, i));
      g_object_unref (row);
      row = child;
    }
  return row != NULL ? gtk_tree_list_row_get_position (row) : GTK_INVALID_LIST_POSITION;
}

static gboolean
select_entry (SightInspector *self,
              guint           index)
{
  guint position = reveal (self, index);

  if (position == GTK_INVALID_LIST_POSITION)
    return FALSE;
  select_position (self, position);
  return TRUE;
}

gboolean
sight_inspector_select_ref (SightInspector *self,
                            const char     *ref)
{
  guint index;

  g_return_val_if_fail (SIGHT_IS_INSPECTOR (self), FALSE);

  if (ref == NULL)
    {
      select_position (self, GTK_INVALID_LIST_POSITION);
      return TRUE;
    }
  if (self->root == NULL || !sight_observation_find_ref (self->observation, ref, &index))
    return FALSE;
  return select_entry (self, index);
}

static gboolean
contains_casefold (const char *haystack,
                   const char *needle,
                   gboolean    ascii)
{
  g_autofree char *h = NULL;

  /* An ASCII needle is compared without folding (and copying) every name. */
  if (ascii)
    {
      size_t n = strlen (needle);

      for (const char *p = haystack; *p != '\0'; p++)
        if (g_ascii_strncasecmp (p, needle, n) == 0)
          return TRUE;
      return FALSE;
    }
  h = g_utf8_casefold (haystack, -1);
  return strstr (h, needle) != NULL;
}

/* The index of the first node, in document order from the one after
 * @after (NULL: from the top) round to it, whose role or name holds @text
 * (casefolded) or whose ref is @text; G_MAXUINT for none or when
 * @cancellable fires. Reads the observation only: a search worker runs it. */
static guint
find_match (SightObservation *observation,
            JsonObject       *after,
            const char       *text,
            GCancellable     *cancellable)
{
  g_autofree char *needle = g_utf8_casefold (text, -1);
  gboolean ascii = g_str_is_ascii (needle);
  const SightObservationNode *nodes;
  guint n, start = 0;

  nodes = sight_observation_get_nodes (observation, &n);
  /* A scan of pointers: cheaper than a hash entry for every node. */
  for (guint i = 0; after != NULL && i < n; i++)
    if (nodes[i].node == after)
      {
        start = i + 1;
        break;
      }
  for (guint k = 0; k < n; k++)
    {
      guint i = (start + k) % n;
      const SightObservationNode *entry = &nodes[i];

      if (k % 4096 == 4095 && g_cancellable_is_cancelled (cancellable))
        return G_MAXUINT;
      if (contains_casefold (entry->role, needle, ascii) ||
          contains_casefold (entry->name, needle, ascii) ||
          g_str_equal (entry->ref, text))
        return i;
    }
  return G_MAXUINT;
}

/* The selected node, where a search goes on from. */
static JsonObject *
selected_node (SightInspector *self)
{
  GtkTreeListRow *selected = gtk_single_selection_get_selected_item (self->selection);
  g_autoptr(SightTreeNode) node = NULL;

  if (selected == NULL)
    return NULL;
  node = gtk_tree_list_row_get_item (selected);
  return node != NULL ? node->node : NULL;
}

gboolean
sight_inspector_search (SightInspector *self,
                        const char     *text)
{
  guint index;

  g_return_val_if_fail (SIGHT_IS_INSPECTOR (self), FALSE);

  if (text == NULL || *text == '\0' || self->root == NULL)
    return FALSE;
  index = find_match (self->observation, selected_node (self), text, NULL);
  return index != G_MAXUINT && select_entry (self, index);
}

typedef struct {
  SightObservation *observation;
  JsonObject       *after;   /* borrowed from the observation */
  char             *text;
} Search;

static void
search_free (Search *search)
{
  g_clear_object (&search->observation);
  g_free (search->text);
  g_free (search);
}

/* Scanning 100,000 names takes 50 ms of CPU, several times that in wall
 * time on a loaded machine (bench/inspector): it runs in a worker, which
 * only reads the observation (its index is built before). */
static void
search_thread (GTask        *task,
               gpointer      source_object,
               gpointer      task_data,
               GCancellable *cancellable)
{
  Search *search = task_data;
  guint index = find_match (search->observation, search->after, search->text, cancellable);

  if (g_task_return_error_if_cancelled (task))
    return;
  g_task_return_int (task, index == G_MAXUINT ? -1 : (gssize) index);
}

void
sight_inspector_search_async (SightInspector      *self,
                              const char          *text,
                              GCancellable        *cancellable,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  Search *search;

  g_return_if_fail (SIGHT_IS_INSPECTOR (self));

  if (self->search_cancellable != NULL)
    g_cancellable_cancel (self->search_cancellable);
  g_clear_object (&self->search_cancellable);
  self->search_cancellable = g_cancellable_new ();
  if (cancellable != NULL)
    g_signal_connect_object (cancellable, "cancelled", G_CALLBACK (g_cancellable_cancel),
                             self->search_cancellable, G_CONNECT_SWAPPED);
  task = g_task_new (self, self->search_cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_inspector_search_async);
  if (text == NULL || *text == '\0' || self->root == NULL)
    {
      g_task_return_int (task, -1);
      return;
    }
  search = g_new0 (Search, 1);
  search->observation = g_object_ref (self->observation);
  search->after = selected_node (self);
  search->text = g_strdup (text);
  g_task_set_task_data (task, search, (GDestroyNotify) search_free);
  /* Indexed here if the capture's worker did not: the worker only reads. */
  sight_observation_get_nodes (self->observation, NULL);
  g_task_run_in_thread (task, search_thread);
}

gboolean
sight_inspector_search_finish (SightInspector  *self,
                               GAsyncResult    *result,
                               GError         **error)
{
  Search *search;
  gssize index;

  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == sight_inspector_search_async,
                        FALSE);

  index = g_task_propagate_int (G_TASK (result), error);
  search = g_task_get_task_data (G_TASK (result));
  if (index < 0)
    return FALSE;
  /* Another observation since: the index means nothing in it. */
  if (search->observation != self->observation)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "Another tree is shown");
      return FALSE;
    }
  return select_entry (self, (guint) index);
}

static void
search_done_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  SightInspector *self = SIGHT_INSPECTOR (source);
  g_autoptr(GError) error = NULL;
  gboolean found = sight_inspector_search_finish (self, result, &error);

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  if (!found && *gtk_editable_get_text (GTK_EDITABLE (self->search_entry)) != '\0')
    gtk_widget_add_css_class (GTK_WIDGET (self->search_entry), "error");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (self->search_entry), "error");
}

static void
search_changed_cb (GtkSearchEntry *entry,
                   SightInspector *self)
{
  /* Search from the top as the text grows, so the first match wins. */
  select_position (self, GTK_INVALID_LIST_POSITION);
  sight_inspector_search_async (self, gtk_editable_get_text (GTK_EDITABLE (entry)), NULL,
                                search_done_cb, NULL);
}

static void
search_next_cb (GtkSearchEntry *entry,
                SightInspector *self)
{
  sight_inspector_search_async (self, gtk_editable_get_text (GTK_EDITABLE (entry)), NULL,
                                search_done_cb, NULL);
}

static void
node_clicked_cb (SightShotView  *view,
                 const char     *ref,
                 SightInspector *self)
{
  if (ref != NULL)
    sight_inspector_select_ref (self, ref);
}

/* Rows: an expander holding role, name, states and ref. */

/* The name's full text as its tooltip, asked for when the pointer rests on
 * it: setting a tooltip while binding a row queries the pointer, a round
 * trip to the display server per row. */
static gboolean
name_query_tooltip_cb (GtkWidget  *label,
                       int         x,
                       int         y,
                       gboolean    keyboard,
                       GtkTooltip *tooltip,
                       gpointer    user_data)
{
  const char *text = gtk_label_get_text (GTK_LABEL (label));

  if (*text == '\0')
    return FALSE;
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

static void
setup_row_cb (GtkSignalListItemFactory *factory,
              GtkListItem              *item,
              gpointer                  user_data)
{
  GtkWidget *expander = gtk_tree_expander_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *role = gtk_label_new (NULL);
  GtkWidget *name = gtk_label_new (NULL);
  GtkWidget *states = gtk_label_new (NULL);
  GtkWidget *ref = gtk_label_new (NULL);

  gtk_widget_add_css_class (role, "node-role");
  gtk_widget_add_css_class (name, "node-name");
  gtk_label_set_ellipsize (GTK_LABEL (name), PANGO_ELLIPSIZE_END);
  gtk_label_set_xalign (GTK_LABEL (name), 0);
  gtk_widget_set_has_tooltip (name, TRUE);
  g_signal_connect (name, "query-tooltip", G_CALLBACK (name_query_tooltip_cb), NULL);
  gtk_widget_set_hexpand (name, TRUE);
  gtk_widget_add_css_class (states, "node-states");
  gtk_widget_add_css_class (states, "dim-label");
  gtk_label_set_ellipsize (GTK_LABEL (states), PANGO_ELLIPSIZE_END);
  gtk_widget_add_css_class (ref, "node-ref");
  gtk_widget_add_css_class (ref, "dim-label");
  gtk_box_append (GTK_BOX (box), role);
  gtk_box_append (GTK_BOX (box), name);
  gtk_box_append (GTK_BOX (box), states);
  gtk_box_append (GTK_BOX (box), ref);
  gtk_tree_expander_set_child (GTK_TREE_EXPANDER (expander), box);
  gtk_list_item_set_child (item, expander);
}

static void
bind_row_cb (GtkSignalListItemFactory *factory,
             GtkListItem              *item,
             gpointer                  user_data)
{
  GtkTreeListRow *row = gtk_list_item_get_item (item);
  GtkWidget *expander = gtk_list_item_get_child (item);
  GtkWidget *box = gtk_tree_expander_get_child (GTK_TREE_EXPANDER (expander));
  GtkWidget *role = gtk_widget_get_first_child (box);
  GtkWidget *name = gtk_widget_get_next_sibling (role);
  GtkWidget *states = gtk_widget_get_next_sibling (name);
  GtkWidget *ref = gtk_widget_get_next_sibling (states);
  g_autoptr(SightTreeNode) node = gtk_tree_list_row_get_item (row);
  g_autofree char *label = NULL;
  const char *text;

  gtk_tree_expander_set_list_row (GTK_TREE_EXPANDER (expander), row);
  gtk_label_set_text (GTK_LABEL (role), node_string (node, "role"));
  text = node_string (node, "name");
  gtk_label_set_text (GTK_LABEL (name), *text ? text : "");
  gtk_label_set_text (GTK_LABEL (states), sight_tree_node_get_states (node));
  gtk_widget_set_visible (states, sight_tree_node_get_states (node)[0] != '\0');
  gtk_label_set_text (GTK_LABEL (ref), node_string (node, "ref"));

  label = sight_observation_node_line (node->node);
  gtk_accessible_update_property (GTK_ACCESSIBLE (gtk_list_item_get_child (item)),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, label, -1);
}

static void
unbind_row_cb (GtkSignalListItemFactory *factory,
               GtkListItem              *item,
               gpointer                  user_data)
{
  gtk_tree_expander_set_list_row (GTK_TREE_EXPANDER (gtk_list_item_get_child (item)), NULL);
}

/* The tree's context menu: about the node right-clicked (which it
 * selects), or the selected one from the keyboard (Menu, Shift+F10). */
static GtkPopover *
popup_node_menu_at (SightInspector *self,
                    double          x,
                    double          y)
{
  if (self->node_menu == NULL || sight_inspector_get_selected_ref (self) == NULL)
    return NULL;
  gtk_popover_set_pointing_to (GTK_POPOVER (self->node_menu),
                               &(GdkRectangle) { (int) x, (int) y, 1, 1 });
  gtk_popover_popup (GTK_POPOVER (self->node_menu));
  return GTK_POPOVER (self->node_menu);
}

static void
tree_pressed_cb (GtkGestureClick *gesture,
                 int              n_press,
                 double           x,
                 double           y,
                 SightInspector  *self)
{
  GtkWidget *picked = gtk_widget_pick (GTK_WIDGET (self->tree_view), x, y, GTK_PICK_DEFAULT);
  GtkWidget *expander = picked != NULL ? gtk_widget_get_ancestor (picked,
                                                                  GTK_TYPE_TREE_EXPANDER)
                                       : NULL;
  GtkTreeListRow *row = expander != NULL
                        ? gtk_tree_expander_get_list_row (GTK_TREE_EXPANDER (expander)) : NULL;
  graphene_point_t point;

  if (row == NULL)
    return;
  gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
  select_position (self, gtk_tree_list_row_get_position (row));
  if (gtk_widget_compute_point (GTK_WIDGET (self->tree_view), GTK_WIDGET (self),
                                &GRAPHENE_POINT_INIT (x, y), &point))
    popup_node_menu_at (self, point.x, point.y);
}

GtkPopover *
sight_inspector_popup_node_menu (SightInspector *self)
{
  graphene_rect_t bounds = GRAPHENE_RECT_INIT (0, 0, 0, 0);

  g_return_val_if_fail (SIGHT_IS_INSPECTOR (self), NULL);

  if (!gtk_widget_compute_bounds (GTK_WIDGET (self->tree_view), GTK_WIDGET (self), &bounds))
    graphene_rect_init (&bounds, 0, 0, 0, 0);
  return popup_node_menu_at (self, bounds.origin.x + bounds.size.width / 2,
                             bounds.origin.y + bounds.size.height / 2);
}

static void
node_menu_action (GtkWidget  *widget,
                  const char *action_name,
                  GVariant   *parameter)
{
  sight_inspector_popup_node_menu (SIGHT_INSPECTOR (widget));
}

void
sight_inspector_set_node_menu (SightInspector *self,
                               GMenuModel     *menu)
{
  g_return_if_fail (SIGHT_IS_INSPECTOR (self));

  g_clear_pointer (&self->node_menu, gtk_widget_unparent);
  sight_shot_view_set_context_menu (self->shot_view, menu);
  if (menu == NULL)
    return;
  self->node_menu = gtk_popover_menu_new_from_model (menu);
  gtk_popover_set_has_arrow (GTK_POPOVER (self->node_menu), FALSE);
  gtk_widget_set_halign (self->node_menu, GTK_ALIGN_START);
  gtk_widget_set_parent (self->node_menu, GTK_WIDGET (self));
}

static void
sight_inspector_dispose (GObject *object)
{
  SightInspector *self = SIGHT_INSPECTOR (object);

  g_clear_pointer (&self->node_menu, gtk_widget_unparent);
  if (self->search_cancellable != NULL)
    g_cancellable_cancel (self->search_cancellable);
  g_clear_object (&self->search_cancellable);
  g_clear_object (&self->selection);
  self->root = NULL;
  g_clear_object (&self->observation);
  G_OBJECT_CLASS (sight_inspector_parent_class)->dispose (object);
}

static void
sight_inspector_class_init (SightInspectorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sight_inspector_dispose;

  /**
   * SightInspector::node-selected:
   * @ref: (nullable): the selected node's ref
   */
  signals[NODE_SELECTED] = g_signal_new ("node-selected", G_TYPE_FROM_CLASS (klass),
                                         G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                         G_TYPE_NONE, 1, G_TYPE_STRING);

  g_type_ensure (SIGHT_TYPE_SHOT_VIEW);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/dev/sightline/Sightline/sight-inspector.ui");
  gtk_widget_class_bind_template_child (widget_class, SightInspector, stack);
  gtk_widget_class_bind_template_child (widget_class, SightInspector, search_entry);
  gtk_widget_class_bind_template_child (widget_class, SightInspector, summary_label);
  gtk_widget_class_bind_template_child (widget_class, SightInspector, tree_view);
  gtk_widget_class_bind_template_child (widget_class, SightInspector, paned);
  gtk_widget_class_bind_template_child (widget_class, SightInspector, shot_view);
  gtk_widget_class_bind_template_child (widget_class, SightInspector, shot_stack);
  gtk_widget_class_bind_template_callback (widget_class, search_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, search_next_cb);
  gtk_widget_class_bind_template_callback (widget_class, node_clicked_cb);
  gtk_widget_class_set_css_name (widget_class, "inspector");
  gtk_widget_class_install_action (widget_class, "inspector.node-menu", NULL, node_menu_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_F10, GDK_SHIFT_MASK,
                                       "inspector.node-menu", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Menu, 0, "inspector.node-menu", NULL);
}

static void
sight_inspector_init (SightInspector *self)
{
  GtkListItemFactory *factory;

  gtk_widget_init_template (GTK_WIDGET (self));

  self->selection = gtk_single_selection_new (NULL);
  gtk_single_selection_set_autoselect (self->selection, FALSE);
  gtk_single_selection_set_can_unselect (self->selection, TRUE);
  g_signal_connect (self->selection, "notify::selected-item",
                    G_CALLBACK (selection_changed_cb), self);

  factory = gtk_signal_list_item_factory_new ();
  g_signal_connect (factory, "setup", G_CALLBACK (setup_row_cb), NULL);
  g_signal_connect (factory, "bind", G_CALLBACK (bind_row_cb), NULL);
  g_signal_connect (factory, "unbind", G_CALLBACK (unbind_row_cb), NULL);
  gtk_list_view_set_factory (self->tree_view, factory);
  g_object_unref (factory);
  gtk_list_view_set_model (self->tree_view, GTK_SELECTION_MODEL (self->selection));

  gtk_search_entry_set_key_capture_widget (self->search_entry, GTK_WIDGET (self->tree_view));

  {
    GtkGesture *menu_click = gtk_gesture_click_new ();

    gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (menu_click), GDK_BUTTON_SECONDARY);
    g_signal_connect (menu_click, "pressed", G_CALLBACK (tree_pressed_cb), self);
    gtk_widget_add_controller (GTK_WIDGET (self->tree_view), GTK_EVENT_CONTROLLER (menu_click));
  }
}

GtkWidget *
sight_inspector_new (void)
{
  return g_object_new (SIGHT_TYPE_INSPECTOR, NULL);
}

void
sight_inspector_set_observation (SightInspector   *self,
                                 SightObservation *observation)
{
  g_autofree char *previous = NULL;
  g_autofree char *summary = NULL;
  GtkTreeListModel *tree;
  JsonNode *root;

  g_return_if_fail (SIGHT_IS_INSPECTOR (self));

  previous = g_strdup (sight_inspector_get_selected_ref (self));
  if (self->search_cancellable != NULL && observation != self->observation)
    g_cancellable_cancel (self->search_cancellable);
  g_set_object (&self->observation, observation);

  self->syncing = TRUE;
  root = observation != NULL ? sight_observation_get_tree (observation) : NULL;
  self->root = root != NULL && JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;
  if (self->root != NULL)
    {
      GListStore *top = g_list_store_new (SIGHT_TYPE_TREE_NODE);
      g_autoptr(SightTreeNode) item = sight_tree_node_new (observation, self->root);

      g_list_store_append (top, item);
      tree = gtk_tree_list_model_new (G_LIST_MODEL (top), FALSE, FALSE,
                                      create_children_cb, NULL, NULL);
      expand_initial (tree);
      gtk_single_selection_set_model (self->selection, G_LIST_MODEL (tree));
      g_object_unref (tree);
    }
  else
    gtk_single_selection_set_model (self->selection, NULL);
  sight_shot_view_set_observation (self->shot_view, observation);
  gtk_stack_set_visible_child_name (self->shot_stack,
                                    observation != NULL &&
                                    sight_observation_get_screenshot (observation) != NULL
                                    ? "shot" : "no-shot");
  /* Refs survive observations of one document: keep the selection. */
  if (previous == NULL || !sight_inspector_select_ref (self, previous))
    select_position (self, GTK_INVALID_LIST_POSITION);
  self->syncing = FALSE;

  if (observation != NULL)
    {
      summary = g_strdup_printf (_("%u nodes · %u interactive"),
                                 sight_observation_get_n_nodes (observation),
                                 sight_observation_get_n_interactive (observation));
      gtk_label_set_text (self->summary_label, summary);
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->summary_label),
                                   sight_observation_get_url (observation));
    }
  else
    gtk_label_set_text (self->summary_label, "");
  gtk_stack_set_visible_child_name (self->stack, observation != NULL ? "content" : "empty");
}

SightObservation *
sight_inspector_get_observation (SightInspector *self)
{
  g_return_val_if_fail (SIGHT_IS_INSPECTOR (self), NULL);
  return self->observation;
}

guint
sight_inspector_get_n_rows (SightInspector *self)
{
  g_return_val_if_fail (SIGHT_IS_INSPECTOR (self), 0);
  return g_list_model_get_n_items (G_LIST_MODEL (self->selection));
}

void
sight_inspector_focus_search (SightInspector *self)
{
  g_return_if_fail (SIGHT_IS_INSPECTOR (self));
  gtk_widget_grab_focus (GTK_WIDGET (self->search_entry));
}

GtkWidget *
sight_inspector_get_shot_view (SightInspector *self)
{
  g_return_val_if_fail (SIGHT_IS_INSPECTOR (self), NULL);
  return GTK_WIDGET (self->shot_view);
}
