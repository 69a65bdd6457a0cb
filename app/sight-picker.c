/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-picker"

#include "config.h"

#include "sight-picker.h"

#include <glib/gi18n.h>
#include <webkit/webkit.h>

#include "sight-direct-step.h"
#include "sight-inspector.h"
#include "sight-recorder.h"
#include "sight-step-list.h"
#include "sight-window.h"

typedef struct {
  const char      *action;
  const char      *label;
  SightExpectKind  expect;
} Expectation;

static const Expectation expectations[] = {
  { "expect-visible", N_("Expect _Visible"), SIGHT_EXPECT_VISIBLE },
  { "expect-text", N_("Expect _Text…"), SIGHT_EXPECT_HAS_TEXT },
  { "expect-value", N_("Expect V_alue"), SIGHT_EXPECT_VALUE },
  { "expect-checked", N_("Expect _Checked"), SIGHT_EXPECT_CHECKED },
  { "expect-unchecked", N_("Expect _Unchecked"), SIGHT_EXPECT_UNCHECKED },
  { "expect-enabled", N_("Expect _Enabled"), SIGHT_EXPECT_ENABLED },
  { "expect-disabled", N_("Expect _Disabled"), SIGHT_EXPECT_DISABLED },
  { "expect-url", N_("Expect U_RL Contains…"), SIGHT_EXPECT_URL_CONTAINS },
};

/* The roles that take the part of a control: what a click is about (as the
 * recorder's click is about the control around the point), and what can be
 * enabled or disabled. */
static const char *control_roles[] = { "button", "checkbox", "combobox", "link", "listbox",
                                       "menuitem", "menuitemcheckbox", "menuitemradio",
                                       "option", "radio", "searchbox", "slider",
                                       "spinbutton", "switch", "tab", "textbox", NULL };
static const char *checkable_roles[] = { "checkbox", "radio", "switch", "menuitemcheckbox",
                                         "menuitemradio", NULL };

/* A node of the observation as the recorder's describe() sees it: the nodes
 * with a ref and a role, in document order, each with the nearest such
 * ancestor. */
typedef struct {
  JsonObject *node;
  int         parent;
} Entry;

struct _SightPicker
{
  GObject parent_instance;

  /* borrowed, weak */
  SightWindow        *window;
  AdwMessageDialog   *dialog;

  /* owned */
  GSimpleActionGroup *actions;
  GMenu              *menu;
  char               *target;       /* the ref of the node the menu is about */
  SightObservation   *indexed;      /* what entries index */
  GArray             *entries;      /* Entry */
  GHashTable         *entry_of_ref; /* ref -> index + 1 */
  GtkWidget          *hover_popover;
  GtkWidget          *hover_label;
  GtkWidget          *menu_popover;
  GtkGesture         *click;
  char               *hover_text;
  char               *hover_ref;
  double              pointer_x, pointer_y;   /* over the web view */
  SightExpectKind     dialog_expect;
  gboolean            picking;
};

G_DEFINE_FINAL_TYPE (SightPicker, sight_picker, G_TYPE_OBJECT)

/* The observation's index ------------------------------------------------ */

static void
index_node (SightPicker *self,
            JsonObject  *node,
            int          parent)
{
  JsonNode *children = json_object_get_member (node, "children");

  if (json_object_has_member (node, "ref") && json_object_has_member (node, "role"))
    {
      Entry entry = { node, parent };

      g_array_append_val (self->entries, entry);
      parent = self->entries->len - 1;
      g_hash_table_insert (self->entry_of_ref,
                           (gpointer) json_object_get_string_member (node, "ref"),
                           GINT_TO_POINTER (parent + 1));
    }
  if (children == NULL || !JSON_NODE_HOLDS_ARRAY (children))
    return;
  for (guint i = 0; i < json_array_get_length (json_node_get_array (children)); i++)
    {
      JsonNode *child = json_array_get_element (json_node_get_array (children), i);

      if (JSON_NODE_HOLDS_OBJECT (child))
        index_node (self, json_node_get_object (child), parent);
    }
}

static void
index_observation (SightPicker      *self,
                   SightObservation *observation)
{
  JsonNode *tree;

  if (observation == self->indexed)
    return;
  g_set_object (&self->indexed, observation);
  g_array_set_size (self->entries, 0);
  g_hash_table_remove_all (self->entry_of_ref);
  tree = observation != NULL ? sight_observation_get_tree (observation) : NULL;
  if (tree != NULL && JSON_NODE_HOLDS_OBJECT (tree))
    index_node (self, json_node_get_object (tree), -1);
}

/* The window's observation (the inspector's), indexed. */
static SightObservation *
current_observation (SightPicker *self)
{
  SightObservation *observation = self->window != NULL
                                  ? sight_window_get_observation (self->window) : NULL;

  index_observation (self, observation);
  return observation;
}

static int
entry_of (SightPicker *self,
          const char  *ref)
{
  return ref != NULL ? GPOINTER_TO_INT (g_hash_table_lookup (self->entry_of_ref, ref)) - 1 : -1;
}

static const char *
member (JsonObject *node,
        const char *name)
{
  JsonNode *value = json_object_get_member (node, name);

  if (value == NULL || !JSON_NODE_HOLDS_VALUE (value) ||
      json_node_get_value_type (value) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (value);
}

static const char *
name_of (JsonObject *node)
{
  const char *name = member (node, "name");

  return name != NULL ? name : "";
}

/* How the recorder names the element of entry @index (recorder.js's
 * describe()): the node itself, or its nearest ancestor when it is an
 * anonymous generic, with which of the nodes of the same role and name it
 * is. */
static JsonObject *
describe (SightPicker *self,
          int          index)
{
  JsonObject *node, *descriptor;
  const char *role, *name;
  int nth = 0, count = 0;

  for (; index >= 0; index = g_array_index (self->entries, Entry, index).parent)
    {
      node = g_array_index (self->entries, Entry, index).node;
      if (!g_str_equal (member (node, "role") != NULL ? member (node, "role") : "", "generic") ||
          *name_of (node) != '\0' ||
          json_object_get_boolean_member_with_default (node, "clickable", FALSE))
        break;
    }
  if (index < 0)
    return NULL;
  node = g_array_index (self->entries, Entry, index).node;
  role = member (node, "role");
  name = name_of (node);
  for (guint i = 0; i < self->entries->len; i++)
    {
      JsonObject *other = g_array_index (self->entries, Entry, i).node;

      if (g_strcmp0 (member (other, "role"), role) != 0 || !g_str_equal (name_of (other), name))
        continue;
      count++;
      if ((int) i == index)
        nth = count;
    }
  descriptor = json_object_new ();
  json_object_set_string_member (descriptor, "ref", member (node, "ref"));
  json_object_set_string_member (descriptor, "role", role != NULL ? role : "");
  json_object_set_string_member (descriptor, "name", name);
  json_object_set_int_member (descriptor, "nth", nth);
  json_object_set_int_member (descriptor, "count", count);
  return descriptor;
}

static gboolean
is_control (JsonObject *node)
{
  return g_strv_contains (control_roles, member (node, "role") != NULL ? member (node, "role") : "") ||
         json_object_get_boolean_member_with_default (node, "clickable", FALSE);
}

/* The node a click at viewport CSS point (@x, @y) is about: the control
 * around the innermost node there, else that node. */
static int
entry_at (SightPicker *self,
          double       x,
          double       y)
{
  SightObservation *observation = current_observation (self);
  int index, hit;

  if (observation == NULL)
    return -1;
  hit = entry_of (self, sight_observation_hit_test (observation, x, y));
  for (index = hit; index >= 0; index = g_array_index (self->entries, Entry, index).parent)
    if (is_control (g_array_index (self->entries, Entry, index).node))
      return index;
  return hit;
}

/* The target and what fits it ------------------------------------------- */

static JsonObject *
target_node (SightPicker *self)
{
  int index;

  current_observation (self);
  index = entry_of (self, self->target);
  return index >= 0 ? g_array_index (self->entries, Entry, index).node : NULL;
}

static gboolean
fits (SightPicker     *self,
      JsonObject      *node,
      SightExpectKind  expect)
{
  const char *role;

  if (expect == SIGHT_EXPECT_URL_CONTAINS)
    return self->window != NULL &&
           sight_web_page_get_uri (sight_window_get_page (self->window)) != NULL;
  if (node == NULL)
    return FALSE;
  role = member (node, "role") != NULL ? member (node, "role") : "";
  switch ((int) expect)
    {
    case SIGHT_EXPECT_HAS_TEXT:
      return *name_of (node) != '\0';
    case SIGHT_EXPECT_VALUE:
      /* A secure field's value is never read. */
      return member (node, "value") != NULL &&
             !json_object_get_boolean_member_with_default (node, "secure", FALSE);
    case SIGHT_EXPECT_CHECKED:
    case SIGHT_EXPECT_UNCHECKED:
      return g_strv_contains (checkable_roles, role) || json_object_has_member (node, "checked");
    case SIGHT_EXPECT_ENABLED:
    case SIGHT_EXPECT_DISABLED:
      return (g_strv_contains (control_roles, role) && !g_str_equal (role, "link")) ||
             json_object_has_member (node, "disabled");
    default:
      return TRUE;
    }
}

static void
update_actions (SightPicker *self)
{
  JsonObject *node = target_node (self);

  for (guint i = 0; i < G_N_ELEMENTS (expectations); i++)
    g_simple_action_set_enabled (G_SIMPLE_ACTION (g_action_map_lookup_action (
                                   G_ACTION_MAP (self->actions), expectations[i].action)),
                                 fits (self, node, expectations[i].expect));
}

void
sight_picker_set_target (SightPicker *self,
                         const char  *ref)
{
  g_return_if_fail (SIGHT_IS_PICKER (self));

  if (ref != self->target)
    {
      g_free (self->target);
      self->target = g_strdup (ref);
    }
  update_actions (self);
}

const char *
sight_picker_get_target (SightPicker *self)
{
  g_return_val_if_fail (SIGHT_IS_PICKER (self), NULL);
  return self->target;
}

GMenuModel *
sight_picker_get_menu (SightPicker *self)
{
  g_return_val_if_fail (SIGHT_IS_PICKER (self), NULL);
  return G_MENU_MODEL (self->menu);
}

GActionGroup *
sight_picker_get_actions (SightPicker *self)
{
  g_return_val_if_fail (SIGHT_IS_PICKER (self), NULL);
  return G_ACTION_GROUP (self->actions);
}

AdwMessageDialog *
sight_picker_get_dialog (SightPicker *self)
{
  g_return_val_if_fail (SIGHT_IS_PICKER (self), NULL);
  return self->dialog;
}

/* Adding the step -------------------------------------------------------- */

static char *
step_text (SightPicker     *self,
           SightExpectKind  expect,
           const char      *value)
{
  g_autoptr(JsonObject) descriptor = NULL;
  SightDirectStep step = { 0 };

  if (expect == SIGHT_EXPECT_URL_CONTAINS)
    {
      step.verb = SIGHT_DIRECT_EXPECT;
      step.expect = expect;
      step.value = (char *) value;
      return sight_direct_step_to_text (&step);
    }
  current_observation (self);
  descriptor = describe (self, entry_of (self, self->target));
  if (descriptor == NULL)
    return NULL;
  return sight_recorder_step_text (descriptor, SIGHT_DIRECT_EXPECT, expect, value);
}

static void
add_step (SightPicker     *self,
          SightExpectKind  expect,
          const char      *value)
{
  g_autofree char *text = step_text (self, expect, value);
  g_autoptr(JsonObject) object = NULL;
  g_autoptr(JsonNode) node = NULL;
  SightStepList *list;

  if (text == NULL || self->window == NULL)
    return;
  object = json_object_new ();
  json_object_set_string_member (object, "do", text);
  node = json_node_new (JSON_NODE_OBJECT);
  json_node_set_object (node, object);
  list = sight_window_get_step_list (self->window);
  if (sight_step_list_add_at_selection (list, node) == G_MAXUINT)
    return;
  /* The new step shows selected in the list, its target outlined. */
  sight_window_show_page (self->window, "test");
  if (expect != SIGHT_EXPECT_URL_CONTAINS)
    sight_window_outline_ref (self->window, self->target);
}

static void
dialog_response_cb (AdwMessageDialog *dialog,
                    const char       *response,
                    SightPicker      *self)
{
  GtkEditable *entry = g_object_get_data (G_OBJECT (dialog), "entry");
  g_autofree char *value = g_strstrip (g_strdup (gtk_editable_get_text (entry)));

  if (g_str_equal (response, "add") && *value != '\0')
    add_step (self, self->dialog_expect, value);
  g_clear_weak_pointer (&self->dialog);
}

static void
entry_changed_cb (GtkEditable      *entry,
                  AdwMessageDialog *dialog)
{
  adw_message_dialog_set_response_enabled (dialog, "add",
                                           *gtk_editable_get_text (entry) != '\0');
}

/* "Expect Text…" and "Expect URL Contains…" ask for their text first,
 * with what the page shows now. */
static void
ask_value (SightPicker     *self,
           SightExpectKind  expect,
           const char      *prefill)
{
  GtkWidget *dialog, *entry;
  gboolean url = expect == SIGHT_EXPECT_URL_CONTAINS;

  if (self->dialog != NULL)
    gtk_window_destroy (GTK_WINDOW (self->dialog));
  dialog = adw_message_dialog_new (GTK_WINDOW (self->window),
                                   url ? _("Expect URL") : _("Expect Text"),
                                   url ? _("The step passes while the page’s address contains "
                                           "this text.")
                                       : _("The step passes while the element’s text contains "
                                           "this text."));
  entry = gtk_entry_new ();
  gtk_editable_set_text (GTK_EDITABLE (entry), prefill != NULL ? prefill : "");
  gtk_entry_set_activates_default (GTK_ENTRY (entry), TRUE);
  gtk_accessible_update_property (GTK_ACCESSIBLE (entry), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  url ? _("Part of the address") : _("Expected text"), -1);
  adw_message_dialog_set_extra_child (ADW_MESSAGE_DIALOG (dialog), entry);
  g_object_set_data (G_OBJECT (dialog), "entry", entry);
  adw_message_dialog_add_responses (ADW_MESSAGE_DIALOG (dialog),
                                    "cancel", _("_Cancel"),
                                    "add", _("_Add Step"),
                                    NULL);
  adw_message_dialog_set_response_appearance (ADW_MESSAGE_DIALOG (dialog), "add",
                                              ADW_RESPONSE_SUGGESTED);
  adw_message_dialog_set_default_response (ADW_MESSAGE_DIALOG (dialog), "add");
  adw_message_dialog_set_close_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  g_signal_connect (entry, "changed", G_CALLBACK (entry_changed_cb), dialog);
  entry_changed_cb (GTK_EDITABLE (entry), ADW_MESSAGE_DIALOG (dialog));
  g_signal_connect_object (dialog, "response", G_CALLBACK (dialog_response_cb), self, 0);
  self->dialog_expect = expect;
  g_set_weak_pointer (&self->dialog, ADW_MESSAGE_DIALOG (dialog));
  gtk_window_present (GTK_WINDOW (dialog));
  gtk_widget_grab_focus (entry);
}

/* The address without its origin: the part that stays when the site is
 * served elsewhere. */
static char *
url_part (const char *uri)
{
  g_autoptr(GUri) parsed = uri != NULL ? g_uri_parse (uri, G_URI_FLAGS_NONE, NULL) : NULL;
  const char *path;

  if (parsed == NULL)
    return g_strdup (uri);
  path = g_uri_get_path (parsed);
  if (path == NULL || *path == '\0' || g_str_equal (path, "/"))
    return g_strdup (uri);
  return g_uri_get_query (parsed) != NULL
         ? g_strconcat (path, "?", g_uri_get_query (parsed), NULL) : g_strdup (path);
}

static void
expect_activate_cb (GSimpleAction *action,
                    GVariant      *parameter,
                    gpointer       user_data)
{
  SightPicker *self = user_data;
  const char *name = g_action_get_name (G_ACTION (action));
  JsonObject *node = target_node (self);

  for (guint i = 0; i < G_N_ELEMENTS (expectations); i++)
    {
      SightExpectKind expect = expectations[i].expect;

      if (!g_str_equal (expectations[i].action, name) || !fits (self, node, expect))
        continue;
      switch ((int) expect)
        {
        case SIGHT_EXPECT_HAS_TEXT:
          ask_value (self, expect, name_of (node));
          break;
        case SIGHT_EXPECT_URL_CONTAINS:
          {
            g_autofree char *part = url_part (sight_web_page_get_uri (
                                                sight_window_get_page (self->window)));

            ask_value (self, expect, part);
          }
          break;
        case SIGHT_EXPECT_VALUE:
          add_step (self, expect, member (node, "value"));
          break;
        default:
          add_step (self, expect, NULL);
          break;
        }
      return;
    }
}

/* Pick mode -------------------------------------------------------------- */

static WebKitWebView *
web_view (SightPicker *self)
{
  return self->window != NULL
         ? sight_web_page_get_web_view (sight_window_get_page (self->window)) : NULL;
}

static double
zoom (SightPicker *self)
{
  double level = webkit_web_view_get_zoom_level (web_view (self));

  return level > 0 ? level : 1.0;
}

static gboolean
node_rect (SightPicker  *self,
           JsonObject   *node,
           GdkRectangle *rect)
{
  JsonNode *box = json_object_get_member (node, "box");
  JsonArray *array;
  double k = zoom (self);

  if (box == NULL || !JSON_NODE_HOLDS_ARRAY (box) ||
      json_array_get_length (array = json_node_get_array (box)) < 4)
    return FALSE;
  rect->x = json_array_get_double_element (array, 0) * k;
  rect->y = json_array_get_double_element (array, 1) * k;
  rect->width = MAX (1, json_array_get_double_element (array, 2) * k);
  rect->height = MAX (1, json_array_get_double_element (array, 3) * k);
  return TRUE;
}

static void
hide_hover (SightPicker *self)
{
  if (self->hover_popover != NULL)
    gtk_popover_popdown (GTK_POPOVER (self->hover_popover));
  g_clear_pointer (&self->hover_text, g_free);
  if (self->hover_ref != NULL && self->window != NULL)
    sight_window_outline_ref (self->window, NULL);
  g_clear_pointer (&self->hover_ref, g_free);
}

const char *
sight_picker_hover (SightPicker *self,
                    double       x,
                    double       y)
{
  g_autoptr(JsonObject) descriptor = NULL;
  JsonObject *node;
  GdkRectangle rect;
  int index;

  g_return_val_if_fail (SIGHT_IS_PICKER (self), NULL);

  self->pointer_x = x;
  self->pointer_y = y;
  if (!self->picking)
    return NULL;
  index = entry_at (self, x / zoom (self), y / zoom (self));
  descriptor = index >= 0 ? describe (self, index) : NULL;
  if (descriptor == NULL)
    {
      hide_hover (self);
      return NULL;
    }
  if (g_strcmp0 (self->hover_ref, json_object_get_string_member (descriptor, "ref")) == 0)
    return self->hover_text;
  g_free (self->hover_ref);
  self->hover_ref = g_strdup (json_object_get_string_member (descriptor, "ref"));
  g_free (self->hover_text);
  self->hover_text = sight_recorder_step_text (descriptor, SIGHT_DIRECT_CLICK,
                                               SIGHT_EXPECT_NONE, NULL);
  gtk_label_set_text (GTK_LABEL (self->hover_label), self->hover_text);
  node = g_array_index (self->entries, Entry, entry_of (self, self->hover_ref)).node;
  if (!node_rect (self, node, &rect))
    rect = (GdkRectangle) { (int) x, (int) y, 1, 1 };
  gtk_popover_set_pointing_to (GTK_POPOVER (self->hover_popover), &rect);
  gtk_popover_popup (GTK_POPOVER (self->hover_popover));
  sight_window_outline_ref (self->window, self->hover_ref);
  return self->hover_text;
}

GtkWidget *
sight_picker_get_hover_popover (SightPicker *self)
{
  g_return_val_if_fail (SIGHT_IS_PICKER (self), NULL);
  return self->hover_popover;
}

GtkPopover *
sight_picker_click (SightPicker *self,
                    double       x,
                    double       y)
{
  int index;

  g_return_val_if_fail (SIGHT_IS_PICKER (self), NULL);

  index = entry_at (self, x / zoom (self), y / zoom (self));
  hide_hover (self);
  sight_picker_set_target (self, index >= 0 ? member (g_array_index (self->entries, Entry,
                                                                     index).node, "ref")
                                            : NULL);
  if (self->target != NULL && self->window != NULL)
    {
      sight_inspector_select_ref (sight_window_get_inspector (self->window), self->target);
      sight_window_outline_ref (self->window, self->target);
    }
  gtk_popover_set_pointing_to (GTK_POPOVER (self->menu_popover),
                               &(GdkRectangle) { (int) x, (int) y, 1, 1 });
  gtk_popover_popup (GTK_POPOVER (self->menu_popover));
  return GTK_POPOVER (self->menu_popover);
}

static void
motion_cb (GtkEventControllerMotion *motion,
           double                    x,
           double                    y,
           SightPicker              *self)
{
  sight_picker_hover (self, x, y);
}

static void
leave_cb (GtkEventControllerMotion *motion,
          SightPicker              *self)
{
  if (self->picking)
    hide_hover (self);
}

/* In Pick mode the press is the picker's: the page never sees it. */
static void
pressed_cb (GtkGestureClick *gesture,
            int              n_press,
            double           x,
            double           y,
            SightPicker     *self)
{
  if (!self->picking)
    return;
  gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
  sight_picker_click (self, x, y);
}

static void
set_picking (SightPicker *self,
             gboolean     picking)
{
  WebKitWebView *view = web_view (self);

  self->picking = picking;
  g_simple_action_set_state (G_SIMPLE_ACTION (g_action_map_lookup_action (
                               G_ACTION_MAP (self->actions), "pick")),
                             g_variant_new_boolean (picking));
  gtk_event_controller_set_propagation_phase (GTK_EVENT_CONTROLLER (self->click),
                                              picking ? GTK_PHASE_CAPTURE : GTK_PHASE_NONE);
  gtk_widget_set_cursor_from_name (GTK_WIDGET (view), picking ? "crosshair" : NULL);
  if (picking)
    /* Hover and clicks are judged by the observation: a fresh one. */
    gtk_widget_activate_action (GTK_WIDGET (self->window), "win.refresh-observation", NULL);
  else
    hide_hover (self);
}

static void
pick_change_state_cb (GSimpleAction *action,
                      GVariant      *state,
                      gpointer       user_data)
{
  set_picking (user_data, g_variant_get_boolean (state));
}

/* The page's context menu: the expectations about the element under the
 * pointer, recording or not. */
static char *
plain_label (const char *label)
{
  GString *s = g_string_new (NULL);

  for (const char *p = label; *p != '\0'; p++)
    if (*p != '_')
      g_string_append_c (s, *p);
  return g_string_free (s, FALSE);
}

static gboolean
context_menu_cb (WebKitWebView       *view,
                 WebKitContextMenu   *menu,
                 WebKitHitTestResult *hit,
                 SightPicker         *self)
{
  int index = entry_at (self, self->pointer_x / zoom (self), self->pointer_y / zoom (self));

  sight_picker_set_target (self, index >= 0 ? member (g_array_index (self->entries, Entry,
                                                                     index).node, "ref")
                                            : NULL);
  webkit_context_menu_append (menu, webkit_context_menu_item_new_separator ());
  for (guint i = 0; i < G_N_ELEMENTS (expectations); i++)
    {
      g_autofree char *label = plain_label (_(expectations[i].label));
      GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self->actions),
                                                    expectations[i].action);

      webkit_context_menu_append (menu, webkit_context_menu_item_new_from_gaction (action, label,
                                                                                   NULL));
    }
  return FALSE;
}

/* Life cycle ------------------------------------------------------------- */

static void
sight_picker_dispose (GObject *object)
{
  SightPicker *self = SIGHT_PICKER (object);

  if (self->dialog != NULL)
    gtk_window_destroy (GTK_WINDOW (self->dialog));
  g_clear_weak_pointer (&self->dialog);
  g_clear_pointer (&self->hover_popover, gtk_widget_unparent);
  g_clear_pointer (&self->menu_popover, gtk_widget_unparent);
  g_clear_weak_pointer (&self->window);
  g_clear_object (&self->indexed);
  g_clear_object (&self->actions);
  g_clear_object (&self->menu);
  G_OBJECT_CLASS (sight_picker_parent_class)->dispose (object);
}

static void
sight_picker_finalize (GObject *object)
{
  SightPicker *self = SIGHT_PICKER (object);

  g_clear_pointer (&self->entries, g_array_unref);
  g_clear_pointer (&self->entry_of_ref, g_hash_table_unref);
  g_free (self->target);
  g_free (self->hover_text);
  g_free (self->hover_ref);
  G_OBJECT_CLASS (sight_picker_parent_class)->finalize (object);
}

static void
sight_picker_class_init (SightPickerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = sight_picker_dispose;
  object_class->finalize = sight_picker_finalize;
}

static void
sight_picker_init (SightPicker *self)
{
  GMenu *section;

  self->entries = g_array_new (FALSE, FALSE, sizeof (Entry));
  self->entry_of_ref = g_hash_table_new (g_str_hash, g_str_equal);
  self->actions = g_simple_action_group_new ();
  self->menu = g_menu_new ();
  section = g_menu_new ();
  for (guint i = 0; i < G_N_ELEMENTS (expectations); i++)
    {
      g_autoptr(GSimpleAction) action = g_simple_action_new (expectations[i].action, NULL);
      g_autofree char *detailed = g_strconcat ("steps.", expectations[i].action, NULL);

      g_signal_connect (action, "activate", G_CALLBACK (expect_activate_cb), self);
      g_action_map_add_action (G_ACTION_MAP (self->actions), G_ACTION (action));
      if (expectations[i].expect == SIGHT_EXPECT_URL_CONTAINS)
        {
          g_menu_append_section (self->menu, NULL, G_MENU_MODEL (section));
          g_object_unref (section);
          section = g_menu_new ();
        }
      g_menu_append (section, _(expectations[i].label), detailed);
    }
  g_menu_append_section (self->menu, NULL, G_MENU_MODEL (section));
  g_object_unref (section);
  {
    g_autoptr(GSimpleAction) pick = g_simple_action_new_stateful ("pick", NULL,
                                                                  g_variant_new_boolean (FALSE));

    g_signal_connect (pick, "change-state", G_CALLBACK (pick_change_state_cb), self);
    g_action_map_add_action (G_ACTION_MAP (self->actions), G_ACTION (pick));
  }
}

SightPicker *
sight_picker_new (SightWindow *window)
{
  SightPicker *self;
  WebKitWebView *view;
  GtkEventController *motion;

  g_return_val_if_fail (SIGHT_IS_WINDOW (window), NULL);

  self = g_object_new (SIGHT_TYPE_PICKER, NULL);
  g_set_weak_pointer (&self->window, window);
  gtk_widget_insert_action_group (GTK_WIDGET (window), "steps", G_ACTION_GROUP (self->actions));
  view = web_view (self);

  /* What Pick mode shows over the page: the step for the element under the
   * pointer, pointing at it. */
  self->hover_label = gtk_label_new (NULL);
  gtk_label_set_wrap (GTK_LABEL (self->hover_label), TRUE);
  gtk_label_set_max_width_chars (GTK_LABEL (self->hover_label), 60);
  gtk_widget_add_css_class (self->hover_label, "monospace");
  self->hover_popover = gtk_popover_new ();
  gtk_popover_set_child (GTK_POPOVER (self->hover_popover), self->hover_label);
  gtk_popover_set_autohide (GTK_POPOVER (self->hover_popover), FALSE);
  gtk_widget_set_can_target (self->hover_popover, FALSE);
  gtk_widget_set_can_focus (self->hover_popover, FALSE);
  gtk_widget_add_css_class (self->hover_popover, "pick-label");
  gtk_widget_set_parent (self->hover_popover, GTK_WIDGET (view));

  self->menu_popover = gtk_popover_menu_new_from_model (G_MENU_MODEL (self->menu));
  gtk_popover_set_has_arrow (GTK_POPOVER (self->menu_popover), FALSE);
  gtk_widget_set_halign (self->menu_popover, GTK_ALIGN_START);
  gtk_widget_set_parent (self->menu_popover, GTK_WIDGET (view));

  /* Capture: the page's own handlers may stop the motion they handle. */
  motion = gtk_event_controller_motion_new ();
  gtk_event_controller_set_propagation_phase (motion, GTK_PHASE_CAPTURE);
  g_signal_connect_object (motion, "motion", G_CALLBACK (motion_cb), self, 0);
  g_signal_connect_object (motion, "leave", G_CALLBACK (leave_cb), self, 0);
  gtk_widget_add_controller (GTK_WIDGET (view), motion);
  self->click = gtk_gesture_click_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (self->click), GDK_BUTTON_PRIMARY);
  gtk_event_controller_set_propagation_phase (GTK_EVENT_CONTROLLER (self->click),
                                              GTK_PHASE_NONE);
  g_signal_connect_object (self->click, "pressed", G_CALLBACK (pressed_cb), self, 0);
  gtk_widget_add_controller (GTK_WIDGET (view), GTK_EVENT_CONTROLLER (self->click));
  g_signal_connect_object (view, "context-menu", G_CALLBACK (context_menu_cb), self, 0);

  sight_inspector_set_node_menu (sight_window_get_inspector (window),
                                 G_MENU_MODEL (self->menu));
  update_actions (self);
  return self;
}
