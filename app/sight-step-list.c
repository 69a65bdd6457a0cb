/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-step-list"

#include "config.h"

#include "sight-step-list.h"

#include <glib/gi18n.h>

#include "sight-error.h"
#include "sight-observation.h"
#include "sight-run-recorder.h"
#include "sight-secret-fields.h"
#include "sight-json.h"
#include "sight-step-executor.h"
#include "sight-step-undo.h"
#include "sight-store.h"
#include "sight-suite.h"
#include "sight-test-file.h"
#include "sight-trace-cache.h"

#define LOAD_TIMEOUT_MS 30000
#define OBSERVE_TIMEOUT_MS 10000

/* The step kinds, in the kind menu's order, are the executor's. */
#define kinds sight_step_kind_names

typedef struct {
  char *verdict;   /* "pass", "fail", "blocked", "running" or NULL */
  char *cache;     /* the trace cache's status, or NULL */
  char *detail;    /* the summary or explanation of the last run */
  char *key;       /* the healed trace's key, until it is accepted or rejected */
  SightErrorCode code; /* why the last run stopped here, when it did */
  gboolean  has_code;
} StepState;

struct _SightStepList
{
  AdwBin parent_instance;

  /* template widgets */
  AdwExpanderRow *details_row;
  AdwEntryRow   *name_row;
  AdwEntryRow   *url_row;
  GtkLabel      *count_label;
  GtkLabel      *status_label;
  GtkWidget     *model_preferences_button;
  GtkStack      *steps_stack;
  GtkListBox    *steps_box;
  AdwEntryRow   *add_row;
  GtkDropDown   *add_kind_dropdown;

  /* owned */
  JsonNode      *root;            /* the test file's object */
  GPtrArray     *states;          /* StepState, one per step */
  GPtrArray     *rows;            /* the steps' rows (borrowed from steps_box) */
  GFile         *file;
  SightWebPage  *page;
  GCancellable  *run_cancellable;
  SightStore    *store;           /* where runs are kept, or NULL */
  char          *base_url;        /* what a relative start address resolves against */
  SightRunRecorder *recorder;     /* the stored run of the run going on */
  SightRunVerdict run_verdict;    /* its first step that did not pass */
  char          *run_explanation;

  /* borrowed, and watched: the window's, which may go first (a run's
   * callbacks hold the list past it) */
  SightComposer *composer;

  int            run_index;       /* the step running, -1 when none */
  guint          run_first;       /* where the run started */
  guint          next_source;
  gboolean       run_to_end;
  gboolean       waiting;         /* for the composer's ::step-finished */
  gboolean       modified;
  gboolean       updating;        /* the rows are being filled in from the model */
  gboolean       testing;         /* Run All: the runner runs the test */
  SightTestFile *test_file;       /* what it runs */
  SightStepUndo *undo;            /* every edit of the test, to undo and redo */
  int            selected;        /* the selected step, -1 when none */
};

G_DEFINE_FINAL_TYPE (SightStepList, sight_step_list, ADW_TYPE_BIN)

enum { PROP_0, PROP_MODIFIED, PROP_RUNNING, PROP_FILE, PROP_CAN_UNDO, PROP_CAN_REDO, N_PROPS };
static GParamSpec *properties[N_PROPS];

static void
step_state_free (gpointer data)
{
  StepState *state = data;

  g_free (state->verdict);
  g_free (state->cache);
  g_free (state->detail);
  g_free (state->key);
  g_free (state);
}

static JsonArray *
steps_array (SightStepList *self)
{
  return json_object_get_array_member (json_node_get_object (self->root), "steps");
}

static const char *
step_kind_of (JsonObject *step)
{
  for (guint i = 0; kinds[i] != NULL; i++)
    if (json_object_has_member (step, kinds[i]))
      return kinds[i];
  return NULL;
}

/* Unsaved changes are what the undo stack holds beyond the saved state:
 * undoing back to it clears the mark. */
static void
update_modified (SightStepList *self)
{
  gboolean modified = !sight_step_undo_is_clean (self->undo);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CAN_UNDO]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CAN_REDO]);
  if (self->modified == modified)
    return;
  self->modified = modified;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MODIFIED]);
}

static void update_actions (SightStepList *self);
static const SightStepUndoOps undo_ops;
static void show_status (SightStepList *self,
                         const char    *text,
                         const char    *style);

/* Rows ------------------------------------------------------------------- */

static char *
cache_text (const StepState *state)
{
  if (state->cache == NULL)
    return NULL;
  if (g_str_equal (state->cache, "self-finalized"))
    return g_strdup (_("Cached"));
  if (g_str_equal (state->cache, "agent-concluded"))
    return g_strdup (_("Cached, judged"));
  if (g_str_equal (state->cache, "accepted"))
    return g_strdup (_("Heal accepted"));
  if (g_str_equal (state->cache, "rejected"))
    return g_strdup (_("Heal rejected"));
  /* A trace that no longer matched and that the model then healed: it
   * replays next time, once someone has looked at it. */
  if (state->key != NULL && g_strcmp0 (state->verdict, "pass") == 0)
    return g_strdup (_("Healed, needs review"));
  return g_strdup (_("Cache missed"));
}

static void
update_row (SightStepList *self,
            guint          index)
{
  GtkWidget *row = g_ptr_array_index (self->rows, index);
  JsonObject *step = json_array_get_object_element (steps_array (self), index);
  const StepState *state = g_ptr_array_index (self->states, index);
  const char *kind = step_kind_of (step);
  GtkImage *icon = g_object_get_data (G_OBJECT (row), "verdict-icon");
  GtkWidget *spinner = g_object_get_data (G_OBJECT (row), "spinner");
  GtkLabel *cache = g_object_get_data (G_OBJECT (row), "cache-label");
  g_autofree char *title = NULL;
  g_autofree char *cache_label = cache_text (state);
  const char *verdict = state->verdict;
  const char *classes[] = { "success", "error", "warning", "dim-label" };

  /* Translators: a step row's title: its number and its kind */
  title = g_strdup_printf (_("%u · %s"), index + 1,
                           g_strcmp0 (kind, "do") == 0 ? _("Direct step") : kind);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);

  gtk_widget_set_visible (spinner, g_strcmp0 (verdict, "running") == 0);
  gtk_spinner_set_spinning (GTK_SPINNER (spinner), g_strcmp0 (verdict, "running") == 0);
  gtk_widget_set_visible (GTK_WIDGET (icon), g_strcmp0 (verdict, "running") != 0);
  for (guint i = 0; i < G_N_ELEMENTS (classes); i++)
    gtk_widget_remove_css_class (GTK_WIDGET (icon), classes[i]);
  if (verdict == NULL || g_str_equal (verdict, "running"))
    {
      gtk_image_set_from_icon_name (icon, "radio-symbolic");
      gtk_widget_add_css_class (GTK_WIDGET (icon), "dim-label");
      gtk_accessible_update_property (GTK_ACCESSIBLE (icon), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                      verdict == NULL ? _("Not run") : _("Running"), -1);
    }
  else
    {
      gboolean pass = g_str_equal (verdict, "pass");
      gboolean blocked = g_str_equal (verdict, "blocked");

      gtk_image_set_from_icon_name (icon, pass ? "emblem-ok-symbolic"
                                    : blocked ? "action-unavailable-symbolic"
                                    : "dialog-error-symbolic");
      gtk_widget_add_css_class (GTK_WIDGET (icon), pass ? "success" : blocked ? "warning" : "error");
      gtk_accessible_update_property (GTK_ACCESSIBLE (icon), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                      pass ? _("Passed") : blocked ? _("Blocked") : _("Failed"),
                                      -1);
    }
  gtk_widget_set_tooltip_text (row, state->detail);

  gtk_widget_set_visible (g_object_get_data (G_OBJECT (row), "review-box"),
                          state->key != NULL && g_strcmp0 (verdict, "pass") == 0);
  gtk_widget_set_visible (GTK_WIDGET (cache), cache_label != NULL);
  gtk_label_set_text (cache, cache_label != NULL ? cache_label : "");
  gtk_widget_set_tooltip_text (GTK_WIDGET (cache),
                               g_strcmp0 (kind, "act") == 0
                               ? _("How the trace cache took part in the last run") : NULL);
}

static guint
row_index (GtkWidget *row)
{
  return GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (row), "step-index"));
}

static void
row_changed_cb (GtkEditable   *editable,
                SightStepList *self)
{
  if (self->updating)
    return;
  sight_step_list_set_instruction (self, row_index (GTK_WIDGET (editable)),
                                   gtk_editable_get_text (editable));
}

static GMenuModel *
row_menu (guint index)
{
  GMenu *menu = g_menu_new ();
  GMenu *section;
  struct { const char *label; const char *action; } run_items[] = {
    { N_("_Run Step"), "step.run" },
    { N_("Run _From Here"), "step.run-from" },
  }, edit_items[] = {
    { N_("Move _Up"), "step.move-up" },
    { N_("Move _Down"), "step.move-down" },
    { N_("_Delete"), "step.delete" },
  };

  section = g_menu_new ();
  for (guint i = 0; i < G_N_ELEMENTS (run_items); i++)
    {
      g_autoptr(GMenuItem) item = g_menu_item_new (_(run_items[i].label), NULL);

      g_menu_item_set_action_and_target_value (item, run_items[i].action,
                                               g_variant_new_uint32 (index));
      g_menu_append_item (section, item);
    }
  g_menu_append_section (menu, NULL, G_MENU_MODEL (section));
  g_object_unref (section);
  section = g_menu_new ();
  for (guint i = 0; i < G_N_ELEMENTS (edit_items); i++)
    {
      g_autoptr(GMenuItem) item = g_menu_item_new (_(edit_items[i].label), NULL);

      g_menu_item_set_action_and_target_value (item, edit_items[i].action,
                                               g_variant_new_uint32 (index));
      g_menu_append_item (section, item);
    }
  g_menu_append_section (menu, NULL, G_MENU_MODEL (section));
  g_object_unref (section);
  return G_MENU_MODEL (menu);
}

/* Drag and drop: a row carries its index; dropping it on another row moves
 * it there. */
static GdkContentProvider *
drag_prepare_cb (GtkDragSource *source,
                 double         x,
                 double         y,
                 GtkWidget     *row)
{
  return gdk_content_provider_new_typed (G_TYPE_UINT, row_index (row));
}

static void
drag_begin_cb (GtkDragSource *source,
               GdkDrag       *drag,
               GtkWidget     *row)
{
  g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new (row);

  gtk_drag_source_set_icon (source, paintable, 0, 0);
}

static gboolean
drop_cb (GtkDropTarget *target,
         const GValue  *value,
         double         x,
         double         y,
         GtkWidget     *row)
{
  SightStepList *self = SIGHT_STEP_LIST (gtk_widget_get_ancestor (row, SIGHT_TYPE_STEP_LIST));

  if (self == NULL || !G_VALUE_HOLDS_UINT (value) || self->run_index >= 0)
    return FALSE;
  sight_step_list_move_step (self, g_value_get_uint (value), row_index (row));
  return TRUE;
}

static void
review_clicked_cb (GtkButton     *button,
                   SightStepList *self)
{
  GtkWidget *row = g_object_get_data (G_OBJECT (button), "row");
  guint index = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (row), "step-index"));
  gboolean accept = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (button), "accept"));
  g_autoptr(GError) error = NULL;

  if (!sight_step_list_review_heal (self, index, accept, &error))
    show_status (self, error->message, "error");
}

static void
row_focus_cb (GtkEventControllerFocus *focus,
              GtkWidget               *row)
{
  SightStepList *self = SIGHT_STEP_LIST (gtk_widget_get_ancestor (row, SIGHT_TYPE_STEP_LIST));

  if (self != NULL && !self->updating)
    sight_step_list_select (self, row_index (row));
}

static GtkWidget *
create_row (SightStepList *self,
            guint          index)
{
  JsonObject *step = json_array_get_object_element (steps_array (self), index);
  const char *kind = step_kind_of (step);
  GtkWidget *row = adw_entry_row_new ();
  GtkWidget *icon = gtk_image_new ();
  GtkWidget *spinner = gtk_spinner_new ();
  GtkWidget *cache = gtk_label_new (NULL);
  GtkWidget *menu_button = gtk_menu_button_new ();
  g_autoptr(GMenuModel) menu = row_menu (index);
  GtkDragSource *drag = gtk_drag_source_new ();
  GtkDropTarget *drop = gtk_drop_target_new (G_TYPE_UINT, GDK_ACTION_MOVE);
  GtkEventController *focus = gtk_event_controller_focus_new ();

  g_object_set_data (G_OBJECT (row), "step-index", GUINT_TO_POINTER (index));
  g_object_set_data (G_OBJECT (row), "verdict-icon", icon);
  g_object_set_data (G_OBJECT (row), "spinner", spinner);
  g_object_set_data (G_OBJECT (row), "cache-label", cache);
  gtk_editable_set_text (GTK_EDITABLE (row),
                         kind != NULL ? json_object_get_string_member (step, kind) : "");
  g_signal_connect (row, "changed", G_CALLBACK (row_changed_cb), self);

  adw_entry_row_add_prefix (ADW_ENTRY_ROW (row), icon);
  adw_entry_row_add_prefix (ADW_ENTRY_ROW (row), spinner);
  gtk_widget_add_css_class (cache, "caption");
  gtk_widget_add_css_class (cache, "cache-state");
  gtk_widget_set_valign (cache, GTK_ALIGN_CENTER);
  adw_entry_row_add_suffix (ADW_ENTRY_ROW (row), cache);

  /* A healed trace: replayed from the next run on, once someone says so. */
  {
    GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 0);
    GtkWidget *accept = gtk_button_new_with_mnemonic (_("_Accept"));
    GtkWidget *reject = gtk_button_new_with_mnemonic (_("_Reject"));

    gtk_widget_add_css_class (box, "linked");
    gtk_widget_set_valign (box, GTK_ALIGN_CENTER);
    gtk_widget_set_tooltip_text (accept, _("Keep the healed trace: later runs replay it"));
    gtk_widget_set_tooltip_text (reject, _("Delete the healed trace: the model acts next time"));
    gtk_widget_add_css_class (reject, "destructive-action");
    g_object_set_data (G_OBJECT (accept), "row", row);
    g_object_set_data (G_OBJECT (reject), "row", row);
    g_signal_connect (accept, "clicked", G_CALLBACK (review_clicked_cb), self);
    g_signal_connect (reject, "clicked", G_CALLBACK (review_clicked_cb), self);
    g_object_set_data (G_OBJECT (accept), "accept", GINT_TO_POINTER (TRUE));
    gtk_box_append (GTK_BOX (box), accept);
    gtk_box_append (GTK_BOX (box), reject);
    gtk_widget_set_visible (box, FALSE);
    g_object_set_data (G_OBJECT (row), "review-box", box);
    adw_entry_row_add_suffix (ADW_ENTRY_ROW (row), box);
  }

  gtk_menu_button_set_icon_name (GTK_MENU_BUTTON (menu_button), "view-more-symbolic");
  gtk_menu_button_set_menu_model (GTK_MENU_BUTTON (menu_button), menu);
  gtk_widget_set_valign (menu_button, GTK_ALIGN_CENTER);
  gtk_widget_add_css_class (menu_button, "flat");
  gtk_widget_set_tooltip_text (menu_button, _("Step Menu"));
  gtk_accessible_update_property (GTK_ACCESSIBLE (menu_button), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Step Menu"), -1);
  adw_entry_row_add_suffix (ADW_ENTRY_ROW (row), menu_button);

  gtk_drag_source_set_actions (drag, GDK_ACTION_MOVE);
  g_signal_connect (drag, "prepare", G_CALLBACK (drag_prepare_cb), row);
  g_signal_connect (drag, "drag-begin", G_CALLBACK (drag_begin_cb), row);
  gtk_widget_add_controller (icon, GTK_EVENT_CONTROLLER (drag));
  g_signal_connect (drop, "drop", G_CALLBACK (drop_cb), row);
  gtk_widget_add_controller (row, GTK_EVENT_CONTROLLER (drop));
  /* Editing a step selects it: an expectation picked next goes after it. */
  g_signal_connect (focus, "enter", G_CALLBACK (row_focus_cb), row);
  gtk_widget_add_controller (row, focus);
  return row;
}

static void
update_count (SightStepList *self)
{
  guint n = sight_step_list_get_n_steps (self);
  g_autofree char *text = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u Step", "%u Steps", n),
                                           n);

  gtk_label_set_text (self->count_label, text);
  gtk_stack_set_visible_child_name (self->steps_stack, n > 0 ? "list" : "empty");
}

static void
rebuild (SightStepList *self)
{
  GtkWidget *child;
  guint n = sight_step_list_get_n_steps (self);

  self->updating = TRUE;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->steps_box))) != NULL)
    gtk_list_box_remove (self->steps_box, child);
  g_ptr_array_set_size (self->rows, 0);
  for (guint i = 0; i < n; i++)
    {
      GtkWidget *row = create_row (self, i);

      gtk_list_box_append (self->steps_box, row);
      g_ptr_array_add (self->rows, row);
      update_row (self, i);
    }
  self->updating = FALSE;
  if (self->selected >= 0 && (guint) self->selected < self->rows->len)
    gtk_list_box_select_row (self->steps_box, g_ptr_array_index (self->rows, self->selected));
  else
    self->selected = -1;
  update_count (self);
  update_actions (self);
}

/* The collapsed details say what the test is and where it starts. */
static void
update_details_summary (SightStepList *self)
{
  JsonObject *object = json_node_get_object (self->root);
  const char *name = json_object_get_string_member_with_default (object, "name", "");
  const char *url = json_object_get_string_member_with_default (object, "url", "");
  g_autofree char *title = g_markup_escape_text (*name != '\0' ? name : _("Unnamed test"), -1);
  g_autofree char *subtitle = g_markup_escape_text (*url != '\0' ? url : _("No start address"),
                                                    -1);

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (self->details_row), title);
  adw_expander_row_set_subtitle (self->details_row, subtitle);
}

static void
fill_details (SightStepList *self)
{
  JsonObject *object = json_node_get_object (self->root);

  self->updating = TRUE;
  gtk_editable_set_text (GTK_EDITABLE (self->name_row),
                         json_object_get_string_member_with_default (object, "name", ""));
  gtk_editable_set_text (GTK_EDITABLE (self->url_row),
                         json_object_get_string_member_with_default (object, "url", ""));
  self->updating = FALSE;
  update_details_summary (self);
}

/* An empty name or URL is left out of the file rather than written empty. */
static void
set_member (SightStepList *self,
            const char    *name,
            const char    *value)
{
  JsonObject *object = json_node_get_object (self->root);

  if (value == NULL || *value == '\0')
    json_object_remove_member (object, name);
  else
    json_object_set_string_member (object, name, value);
  update_details_summary (self);
}

/* A person's edit of the test's name or start address: kept for undo. */
static void
edit_member (SightStepList *self,
             const char    *name,
             const char    *value)
{
  JsonObject *object = json_node_get_object (self->root);
  g_autofree char *before = g_strdup (json_object_get_string_member_with_default (object, name,
                                                                                  NULL));

  set_member (self, name, value);
  sight_step_undo_push_member (self->undo, name, before,
                               value != NULL && *value != '\0' ? value : NULL);
  update_modified (self);
}

static void
name_changed_cb (GtkEditable   *editable,
                 SightStepList *self)
{
  if (self->updating)
    return;
  edit_member (self, "name", gtk_editable_get_text (editable));
}

static void
url_changed_cb (GtkEditable   *editable,
                SightStepList *self)
{
  if (self->updating)
    return;
  edit_member (self, "url", gtk_editable_get_text (editable));
}

static void
add_apply_cb (AdwEntryRow   *row,
              SightStepList *self)
{
  g_autofree char *text = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (row))));
  guint selected = gtk_drop_down_get_selected (self->add_kind_dropdown);
  g_autoptr(JsonObject) step = json_object_new ();
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);

  if (*text == '\0')
    {
      gtk_widget_error_bell (GTK_WIDGET (row));
      return;
    }
  json_object_set_string_member (step, kinds[MIN (selected, g_strv_length ((GStrv) kinds) - 1)],
                                 text);
  json_node_set_object (node, step);
  sight_step_list_append_step (self, node);
  gtk_editable_set_text (GTK_EDITABLE (row), "");
}

/* Recording runs in the store ------------------------------------------ */

/* The test's start address, a relative one ("/login") resolved against the
 * base address for tests as `sightline run --base-url` does; NULL with no
 * error when the test has none. */
static char *
resolve_start_url (SightStepList  *self,
                   GError        **error)
{
  const char *url = json_object_get_string_member_with_default (json_node_get_object (self->root),
                                                                "url", "");
  g_autoptr(GError) local_error = NULL;
  char *resolved;

  if (*url == '\0')
    return NULL;
  if (g_uri_peek_scheme (url) != NULL)
    return g_strdup (url);
  if (self->base_url == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   _("The start address “%s” is relative: set the base address for tests "
                     "in Preferences"), url);
      return NULL;
    }
  resolved = g_uri_resolve_relative (self->base_url, url, G_URI_FLAGS_NONE, &local_error);
  if (resolved == NULL)
    g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                 _("The start address “%s” does not resolve against “%s”: %s"), url,
                 self->base_url, local_error->message);
  return resolved;
}

/* A run of the test's steps is kept like any other run: the Runs page and
 * `sightline runs` list it, its report can be written. */
static void
record_run_start (SightStepList *self)
{
  SightRunRecord run = { 0 };
  JsonObject *object = json_node_get_object (self->root);
  g_autofree char *name = NULL;
  g_autofree char *url = resolve_start_url (self, NULL);

  g_clear_object (&self->recorder);
  g_clear_pointer (&self->run_explanation, g_free);
  self->run_verdict = SIGHT_RUN_VERDICT_PASS;
  if (self->store == NULL)
    return;
  name = g_strdup (json_object_get_string_member_with_default (object, "name", ""));
  if (*name == '\0')
    {
      g_free (name);
      name = sight_step_list_dup_display_name (self);
    }
  run.kind = (char *) "test";
  run.name = name;
  run.url = url != NULL ? url
            : self->page != NULL ? (char *) sight_web_page_get_uri (self->page) : NULL;
  self->recorder = sight_run_recorder_open_async (self->store, &run);
}

/* A failed step's row: its explanation, then where its evidence is kept. */
static char *
evidence_detail (const char *detail,
                 const char *path)
{
  /* Translators: a failed step's explanation, then where its screenshot was kept */
  return g_strdup_printf (_("%s\nScreenshot: %s"), detail != NULL ? detail : "", path);
}

typedef struct {
  SightStepList    *self;
  SightRunRecorder *recorder;
  guint             index;      /* the step's row */
} ObservationData;

static void
observation_data_free (ObservationData *data)
{
  g_object_unref (data->self);
  g_object_unref (data->recorder);
  g_free (data);
}

static void continue_run (SightStepList *self);

/* The page after the step is kept (with a failed assertion's evidence, as
 * every runner keeps it): its row says where, as Run All's do. */
static void
record_observation_cb (GObject      *source,
                       GAsyncResult *result,
                       gpointer      user_data)
{
  ObservationData *data = user_data;
  g_autofree char *evidence = sight_run_recorder_observe_step_finish (data->recorder, result,
                                                                      NULL);

  if (evidence != NULL && data->index < data->self->states->len)
    {
      StepState *state = g_ptr_array_index (data->self->states, data->index);
      g_autofree char *shown = evidence_detail (state->detail, evidence);

      g_free (state->detail);
      state->detail = g_steal_pointer (&shown);
      if (data->index < data->self->rows->len)
        update_row (data->self, data->index);
    }
  continue_run (data->self);
  observation_data_free (data);
}

/* Stores the outcome of the step that is open (the composer's result: its
 * verdict, code and detail), then the page as it left it; the run goes on
 * once that is taken (the next step must not change it first). */
static void
record_step (SightStepList *self,
             const char    *masked,
             const char    *verdict,
             const char    *code,
             const char    *detail,
             gboolean       secret_filled)
{
  g_autoptr(GError) error = NULL;
  SightErrorCode error_code;
  SightRunVerdict recorded = g_strcmp0 (verdict, "pass") == 0 ? SIGHT_RUN_VERDICT_PASS
                                                              : SIGHT_RUN_VERDICT_FAIL;
  ObservationData *data;

  if (self->recorder == NULL)
    {
      continue_run (self);
      return;
    }
  /* A coded failure is mapped as every runner maps it. */
  if (recorded != SIGHT_RUN_VERDICT_PASS && code != NULL &&
      sight_error_code_from_string (code, &error_code))
    {
      error = g_error_new_literal (SIGHT_ERROR, error_code, detail != NULL ? detail : "");
      recorded = sight_run_verdict_for_error (error);
    }
  recorded = sight_run_recorder_step_close (self->recorder, recorded, error, detail, NULL, masked);
  if (recorded != SIGHT_RUN_VERDICT_PASS && self->run_verdict == SIGHT_RUN_VERDICT_PASS)
    {
      self->run_verdict = recorded;
      self->run_explanation = g_strdup (detail);
    }

  /* What the page looked like after it, for the Runs page. */
  if (self->page == NULL)
    {
      continue_run (self);
      return;
    }
  data = g_new0 (ObservationData, 1);
  data->self = g_object_ref (self);
  data->recorder = g_object_ref (self->recorder);
  data->index = (guint) self->run_index;
  sight_run_recorder_observe_step_async (self->recorder, self->page, SIGHT_OBSERVE_FULL_TEXT,
                                         secret_filled ||
                                         sight_web_page_get_secret_fills (self->page) > 0,
                                         OBSERVE_TIMEOUT_MS, NULL, record_observation_cb, data);
}

static void
record_run_end (SightStepList *self,
                gboolean       stopped)
{
  if (self->recorder == NULL)
    return;
  if (stopped)
    sight_run_recorder_interrupt (self->recorder, self->run_explanation,
                                  self->page != NULL ? sight_web_page_get_uri (self->page) : NULL);
  else
    sight_run_recorder_close (self->recorder, self->run_verdict, NULL, self->run_explanation,
                              self->page != NULL ? sight_web_page_get_uri (self->page) : NULL,
                              NULL, NULL);
  g_clear_object (&self->recorder);
}

/* Running ---------------------------------------------------------------- */

static void
set_state (SightStepList *self,
           guint          index,
           const char    *verdict,
           const char    *cache,
           const char    *detail)
{
  StepState *state = g_ptr_array_index (self->states, index);

  state->has_code = FALSE;
  g_free (state->verdict);
  state->verdict = g_strdup (verdict);
  g_free (state->cache);
  state->cache = g_strdup (cache);
  g_free (state->detail);
  state->detail = g_strdup (detail);
  g_clear_pointer (&state->key, g_free);
  if (index < self->rows->len)
    update_row (self, index);
}

static void
show_status (SightStepList *self,
             const char    *text,
             const char    *style)
{
  const char *styles[] = { "success", "error", "warning", "dim-label" };

  for (guint i = 0; i < G_N_ELEMENTS (styles); i++)
    gtk_widget_remove_css_class (GTK_WIDGET (self->status_label), styles[i]);
  if (style != NULL)
    gtk_widget_add_css_class (GTK_WIDGET (self->status_label), style);
  gtk_label_set_text (self->status_label, text != NULL ? text : "");
  gtk_widget_set_visible (GTK_WIDGET (self->status_label), text != NULL);
  gtk_widget_set_visible (self->model_preferences_button, FALSE);
}

/* The run stopped for want of a model: the line offers its preferences. */
static void
offer_model_preferences (SightStepList *self,
                         SightErrorCode code)
{
  gtk_widget_set_visible (self->model_preferences_button, code == SIGHT_ERROR_MODEL_UNAVAILABLE);
}

/* One line on how the run went: which step stopped it, and why. */
static void
update_status (SightStepList *self,
               guint          first,
               guint          last,
               gboolean       stopped)
{
  guint passed = 0;

  for (guint i = first; i <= last && i < self->states->len; i++)
    {
      const StepState *state = g_ptr_array_index (self->states, i);
      g_autofree char *text = NULL;

      if (g_strcmp0 (state->verdict, "pass") == 0)
        {
          passed++;
          continue;
        }
      if (state->verdict == NULL || g_str_equal (state->verdict, "running"))
        break;
      text = g_strdup_printf (g_str_equal (state->verdict, "blocked")
                              /* Translators: why a run stopped: a step number, then why */
                              ? _("Step %u was blocked: %s") : _("Step %u failed: %s"),
                              i + 1, state->detail != NULL ? state->detail : "");
      show_status (self, text, g_str_equal (state->verdict, "blocked") ? "warning" : "error");
      if (state->has_code)
        offer_model_preferences (self, state->code);
      return;
    }
  if (stopped)
    show_status (self, _("Stopped"), "dim-label");
  else
    {
      g_autofree char *text = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u step passed",
                                                            "%u steps passed", passed), passed);

      show_status (self, text, "success");
    }
}

static void
end_run (SightStepList *self)
{
  gboolean stopped = FALSE;

  if (self->run_index >= 0 && (guint) self->run_index < self->states->len)
    {
      StepState *state = g_ptr_array_index (self->states, self->run_index);

      if (g_strcmp0 (state->verdict, "running") == 0)
        {
          set_state (self, self->run_index, NULL, NULL, NULL);
          stopped = TRUE;
        }
      update_status (self, self->run_first, self->run_index, stopped);
      record_run_end (self, stopped);
    }
  self->run_index = -1;
  self->waiting = FALSE;
  g_clear_handle_id (&self->next_source, g_source_remove);
  g_clear_object (&self->run_cancellable);
  update_actions (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RUNNING]);
}

static void
copy_option_cb (JsonObject  *object,
                const char  *name,
                JsonNode    *node,
                gpointer     user_data)
{
  json_object_set_member (user_data, name, json_node_copy (node));
}

static void
run_current (SightStepList *self)
{
  JsonObject *step;
  const char *kind;
  g_autoptr(JsonObject) options = json_object_new ();

  if (self->run_index < 0 || (guint) self->run_index >= sight_step_list_get_n_steps (self) ||
      self->composer == NULL)
    {
      end_run (self);
      return;
    }
  step = json_array_get_object_element (steps_array (self), self->run_index);
  kind = step_kind_of (step);
  /* The step's other members are its options. */
  json_object_foreach_member (step, copy_option_cb, options);
  json_object_remove_member (options, kind);
  set_state (self, self->run_index, "running", NULL, NULL);
  self->waiting = TRUE;
  if (self->recorder != NULL)
    sight_run_recorder_step_open (self->recorder, kind, NULL,
                                  json_object_get_string_member (step, kind), options);
  if (!sight_composer_run_step (self->composer, kind,
                                json_object_get_string_member (step, kind), options))
    end_run (self);
}

static gboolean
next_cb (gpointer user_data)
{
  SightStepList *self = user_data;

  self->next_source = 0;
  if (self->waiting)
    end_run (self);     /* the composer stopped without a result: Stop */
  else
    run_current (self);
  return G_SOURCE_REMOVE;
}

static void
step_finished_cb (SightComposer *composer,
                  JsonNode      *result,
                  SightStepList *self)
{
  JsonObject *object;
  const char *verdict, *cache = NULL, *detail, *masked;

  if (self->run_index < 0 || !self->waiting || !JSON_NODE_HOLDS_OBJECT (result))
    return;
  object = json_node_get_object (result);
  verdict = json_object_get_string_member_with_default (object, "verdict", "fail");
  if (json_object_has_member (object, "cache") &&
      JSON_NODE_HOLDS_OBJECT (json_object_get_member (object, "cache")))
    cache = json_object_get_string_member_with_default (
      json_object_get_object_member (object, "cache"), "status", NULL);
  detail = json_object_get_string_member_with_default (
    object, "explanation", json_object_get_string_member_with_default (object, "summary", NULL));
  self->waiting = FALSE;
  /* The result came: not a Stop (see composer_running_cb). */
  g_clear_handle_id (&self->next_source, g_source_remove);
  set_state (self, self->run_index, verdict, cache, detail);
  if (cache != NULL && json_object_has_member (json_object_get_object_member (object, "cache"),
                                               "key"))
    {
      StepState *state = g_ptr_array_index (self->states, self->run_index);

      state->key = g_strdup (json_object_get_string_member (
        json_object_get_object_member (object, "cache"), "key"));
      if ((guint) self->run_index < self->rows->len)
        update_row (self, self->run_index);
    }
  /* The step's text as it may be stored: a password typed literally into
   * a secure field is masked by the composer. */
  masked = json_object_get_boolean_member_with_default (object, "masked", FALSE)
           ? json_object_get_string_member_with_default (object, "instruction", NULL) : NULL;
  record_step (self, masked, verdict,
               json_object_get_string_member_with_default (object, "code", NULL), detail,
               json_object_get_boolean_member_with_default (object, "secretFilled", FALSE));
}

static void
continue_run (SightStepList *self)
{
  const char *verdict;

  if (self->run_index < 0 || self->waiting)
    return;   /* stopped meanwhile */
  verdict = sight_step_list_get_verdict (self, self->run_index);
  g_clear_handle_id (&self->next_source, g_source_remove);
  if (self->run_to_end && g_strcmp0 (verdict, "pass") == 0 &&
      (guint) self->run_index + 1 < sight_step_list_get_n_steps (self))
    {
      self->run_index++;
      /* Let the composer settle first: the result came from its callback. */
      self->next_source = g_idle_add_full (G_PRIORITY_DEFAULT, next_cb, self, NULL);
    }
  else
    end_run (self);
}

static void
composer_running_cb (SightComposer *composer,
                     GParamSpec    *pspec,
                     SightStepList *self)
{
  /* ::step-finished follows "running" going FALSE in the same callback; a
   * step that was stopped never sends it. (The next step starts at default
   * priority: a spinning row's redraws would starve an idle.) */
  if (self->waiting && !sight_composer_get_running (composer) && self->next_source == 0)
    self->next_source = g_idle_add_full (G_PRIORITY_DEFAULT, next_cb, self, NULL);
}

/* @record: the run is kept by the step list (steps run through the
 * composer), not by the runner. */
static void
start_run (SightStepList *self,
           guint          index,
           gboolean       to_end,
           gboolean       record)
{
  if (self->run_index >= 0 || self->composer == NULL ||
      sight_composer_get_running (self->composer) || index >= sight_step_list_get_n_steps (self))
    return;
  for (guint i = index; i < (to_end ? self->states->len : index + 1); i++)
    set_state (self, i, NULL, NULL, NULL);
  self->run_index = index;
  self->run_first = index;
  self->run_to_end = to_end;
  show_status (self, NULL, NULL);
  self->run_cancellable = g_cancellable_new ();
  if (record)
    record_run_start (self);
  update_actions (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RUNNING]);
}

/* A step of the test running through the runner ended (-1: the start page
 * loaded, or not): its row shows how, and the next one runs. */
static void
test_step_cb (int              index,
              SightStepResult *result,
              gpointer         user_data)
{
  SightStepList *self = user_data;
  const char *detail = result->error != NULL ? result->error->message : result->summary;
  const char *cache = NULL, *key = NULL;
  guint row = index < 0 ? 0 : (guint) index;

  if (self->run_index < 0 || row >= self->states->len)
    return;
  if (index < 0)
    {
      /* The start page did not load: the test could not start. */
      if (result->error != NULL)
        set_state (self, 0, "blocked", NULL, detail);
      return;
    }
  if (self->composer != NULL)
    sight_composer_show_step_result (self->composer, result);
  if (result->cache != NULL && JSON_NODE_HOLDS_OBJECT (result->cache))
    {
      JsonObject *object = json_node_get_object (result->cache);

      cache = json_object_get_string_member_with_default (object, "status", NULL);
      key = json_object_get_string_member_with_default (object, "key", NULL);
    }
  if (result->screenshot_path != NULL)
    {
      g_autofree char *shown = evidence_detail (detail, result->screenshot_path);

      set_state (self, row, sight_step_verdict_to_string (result->verdict), cache, shown);
    }
  else
    set_state (self, row, sight_step_verdict_to_string (result->verdict), cache, detail);
  if (result->error != NULL && result->error->domain == SIGHT_ERROR)
    {
      StepState *state = g_ptr_array_index (self->states, row);

      state->code = result->error->code;
      state->has_code = TRUE;
    }
  if (cache != NULL && key != NULL)
    {
      StepState *state = g_ptr_array_index (self->states, row);

      state->key = g_strdup (key);
      update_row (self, row);
    }
  self->run_index = index;
  if (result->error == NULL && row + 1 < self->states->len)
    {
      self->run_index = index + 1;
      set_state (self, row + 1, "running", NULL, NULL);
    }
}

static void
test_done_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(SightStepList) self = user_data;
  g_autoptr(JsonObject) attempt = sight_test_run_finish (result, NULL);
  const char *code = attempt != NULL
                     ? json_object_get_string_member_with_default (attempt, "code", NULL) : NULL;
  const char *explanation = attempt != NULL
                            ? json_object_get_string_member_with_default (attempt, "explanation",
                                                                          NULL) : NULL;
  gboolean any_ran = FALSE;
  SightErrorCode error_code;

  self->testing = FALSE;
  for (guint i = 0; i < self->states->len; i++)
    {
      const StepState *state = g_ptr_array_index (self->states, i);

      any_ran |= state->verdict != NULL && !g_str_equal (state->verdict, "running");
    }
  end_run (self);
  /* The test stopped before its first step (a model it needs is missing):
   * the line says why, not "Stopped". */
  if (!any_ran && explanation != NULL)
    {
      show_status (self, explanation, "warning");
      if (code != NULL && sight_error_code_from_string (code, &error_code))
        offer_model_preferences (self, error_code);
    }
}

/* Runs the whole test as `sightline run` does (sight_test_run_async): from
 * its start page, within its timeout, stopping at its first failure, kept
 * as a run of kind "test"; on the window's page, with the composer's agent
 * settings and meters. */
static void
run_all_action (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  SightStepList *self = SIGHT_STEP_LIST (widget);
  g_autofree char *url = NULL;
  g_autofree char *text = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SightAgent) agent = NULL;
  SightProject *project;

  if (sight_step_list_get_n_steps (self) == 0 || self->run_index >= 0 || self->composer == NULL ||
      self->page == NULL || self->store == NULL)
    return;
  url = resolve_start_url (self, &error);
  if (error != NULL)
    {
      show_status (self, error->message, "error");
      return;
    }
  path = self->file != NULL ? g_file_get_path (self->file) : NULL;
  text = json_to_string (self->root, FALSE);
  g_clear_pointer (&self->test_file, sight_test_file_free);
  self->test_file = sight_test_file_parse (path, text, -1, &error);
  if (self->test_file == NULL)
    {
      show_status (self, error->message, "error");
      return;
    }
  start_run (self, 0, TRUE, FALSE);
  if (self->run_index < 0)
    return;
  project = sight_composer_get_project (self->composer);
  agent = sight_composer_new_agent (self->composer, self->test_file->agent);
  self->testing = TRUE;
  set_state (self, 0, "running", NULL, NULL);
  sight_test_run_async (self->store, self->test_file, project, url, agent, test_step_cb, self,
                        self->run_cancellable, test_done_cb, g_object_ref (self));
}

static void
stop_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  SightStepList *self = SIGHT_STEP_LIST (widget);

  if (self->run_index < 0)
    return;
  self->run_to_end = FALSE;
  if (self->run_cancellable != NULL)
    g_cancellable_cancel (self->run_cancellable);
  /* The runner ends the test it runs and records it as interrupted. */
  if (self->testing)
    return;
  if (self->composer != NULL && sight_composer_get_running (self->composer))
    gtk_widget_activate_action (GTK_WIDGET (self->composer), "composer.stop", NULL);
  else
    end_run (self);
}

static void
run_step_action (GtkWidget  *widget,
                 const char *action_name,
                 GVariant   *parameter)
{
  SightStepList *self = SIGHT_STEP_LIST (widget);
  guint index = g_variant_get_uint32 (parameter);

  start_run (self, index, g_str_equal (action_name, "step.run-from"), TRUE);
  if (self->run_index >= 0)
    run_current (self);
}

static void
move_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  SightStepList *self = SIGHT_STEP_LIST (widget);
  guint index = g_variant_get_uint32 (parameter);

  if (g_str_equal (action_name, "step.move-up") && index > 0)
    sight_step_list_move_step (self, index, index - 1);
  else if (g_str_equal (action_name, "step.move-down"))
    sight_step_list_move_step (self, index, index + 1);
}

static void
delete_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  sight_step_list_remove_step (SIGHT_STEP_LIST (widget), g_variant_get_uint32 (parameter));
}

static void
update_actions (SightStepList *self)
{
  gboolean idle = self->run_index < 0;
  gboolean any = sight_step_list_get_n_steps (self) > 0;

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "steps.run-all", idle && any);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "steps.stop", !idle);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "step.run", idle);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "step.run-from", idle);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "step.move-up", idle);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "step.move-down", idle);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "step.delete", idle);
  /* Undo waits for the run: its steps' rows follow the model. */
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CAN_UNDO]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CAN_REDO]);
}

/* Life cycle ------------------------------------------------------------- */

static void
sight_step_list_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  SightStepList *self = SIGHT_STEP_LIST (object);

  switch (prop_id)
    {
    case PROP_MODIFIED:
      g_value_set_boolean (value, self->modified);
      break;
    case PROP_RUNNING:
      g_value_set_boolean (value, self->run_index >= 0);
      break;
    case PROP_FILE:
      g_value_set_object (value, self->file);
      break;
    case PROP_CAN_UNDO:
      g_value_set_boolean (value, sight_step_list_can_undo (self));
      break;
    case PROP_CAN_REDO:
      g_value_set_boolean (value, sight_step_list_can_redo (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sight_step_list_dispose (GObject *object)
{
  SightStepList *self = SIGHT_STEP_LIST (object);

  if (self->run_cancellable != NULL)
    g_cancellable_cancel (self->run_cancellable);
  g_clear_object (&self->run_cancellable);
  g_clear_handle_id (&self->next_source, g_source_remove);
  sight_step_list_set_composer (self, NULL);
  g_clear_object (&self->page);
  g_clear_object (&self->file);
  g_clear_object (&self->store);
  G_OBJECT_CLASS (sight_step_list_parent_class)->dispose (object);
}

static void
sight_step_list_finalize (GObject *object)
{
  SightStepList *self = SIGHT_STEP_LIST (object);

  g_clear_pointer (&self->root, json_node_unref);
  g_clear_pointer (&self->test_file, sight_test_file_free);
  g_clear_object (&self->recorder);
  g_clear_pointer (&self->run_explanation, g_free);
  g_clear_pointer (&self->base_url, g_free);
  g_clear_pointer (&self->states, g_ptr_array_unref);
  g_clear_pointer (&self->rows, g_ptr_array_unref);
  g_clear_pointer (&self->undo, sight_step_undo_free);
  G_OBJECT_CLASS (sight_step_list_parent_class)->finalize (object);
}

static void
sight_step_list_class_init (SightStepListClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sight_step_list_dispose;
  object_class->finalize = sight_step_list_finalize;
  object_class->get_property = sight_step_list_get_property;

  properties[PROP_MODIFIED] =
    g_param_spec_boolean ("modified", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_RUNNING] =
    g_param_spec_boolean ("running", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_FILE] =
    g_param_spec_object ("file", NULL, NULL, G_TYPE_FILE,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_CAN_UNDO] =
    g_param_spec_boolean ("can-undo", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_CAN_REDO] =
    g_param_spec_boolean ("can-redo", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/dev/sightline/Sightline/sight-step-list.ui");
  gtk_widget_class_bind_template_child (widget_class, SightStepList, details_row);
  gtk_widget_class_bind_template_child (widget_class, SightStepList, status_label);
  gtk_widget_class_bind_template_child (widget_class, SightStepList, model_preferences_button);
  gtk_widget_class_bind_template_child (widget_class, SightStepList, name_row);
  gtk_widget_class_bind_template_child (widget_class, SightStepList, url_row);
  gtk_widget_class_bind_template_child (widget_class, SightStepList, count_label);
  gtk_widget_class_bind_template_child (widget_class, SightStepList, steps_stack);
  gtk_widget_class_bind_template_child (widget_class, SightStepList, steps_box);
  gtk_widget_class_bind_template_child (widget_class, SightStepList, add_row);
  gtk_widget_class_bind_template_child (widget_class, SightStepList, add_kind_dropdown);
  gtk_widget_class_bind_template_callback (widget_class, name_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, url_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, add_apply_cb);

  gtk_widget_class_install_action (widget_class, "steps.run-all", NULL, run_all_action);
  gtk_widget_class_install_action (widget_class, "steps.stop", NULL, stop_action);
  gtk_widget_class_install_action (widget_class, "step.run", "u", run_step_action);
  gtk_widget_class_install_action (widget_class, "step.run-from", "u", run_step_action);
  gtk_widget_class_install_action (widget_class, "step.move-up", "u", move_action);
  gtk_widget_class_install_action (widget_class, "step.move-down", "u", move_action);
  gtk_widget_class_install_action (widget_class, "step.delete", "u", delete_action);
}

static void
sight_step_list_init (SightStepList *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->run_index = -1;
  self->selected = -1;
  self->states = g_ptr_array_new_with_free_func (step_state_free);
  self->rows = g_ptr_array_new ();
  self->undo = sight_step_undo_new (&undo_ops, self);
  sight_step_list_new_test (self, NULL);
}

GtkWidget *
sight_step_list_new (void)
{
  return g_object_new (SIGHT_TYPE_STEP_LIST, NULL);
}

/* The window closed while the list lives on: a run going ends with it. */
static void
composer_gone_cb (gpointer  user_data,
                  GObject  *composer)
{
  SightStepList *self = user_data;

  self->composer = NULL;
  if (self->run_cancellable != NULL)
    g_cancellable_cancel (self->run_cancellable);
}

void
sight_step_list_set_composer (SightStepList *self,
                              SightComposer *composer)
{
  g_return_if_fail (SIGHT_IS_STEP_LIST (self));

  if (self->composer != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->composer, self);
      g_object_weak_unref (G_OBJECT (self->composer), composer_gone_cb, self);
    }
  self->composer = composer;
  if (composer == NULL)
    return;
  g_object_weak_ref (G_OBJECT (composer), composer_gone_cb, self);
  g_signal_connect_object (composer, "step-finished", G_CALLBACK (step_finished_cb), self, 0);
  g_signal_connect_object (composer, "notify::running", G_CALLBACK (composer_running_cb),
                           self, 0);
}

void
sight_step_list_set_store (SightStepList *self,
                           SightStore    *store)
{
  g_return_if_fail (SIGHT_IS_STEP_LIST (self));
  g_set_object (&self->store, store);
}

void
sight_step_list_set_page (SightStepList *self,
                          SightWebPage  *page)
{
  g_return_if_fail (SIGHT_IS_STEP_LIST (self));
  g_set_object (&self->page, page);
}

static void
set_root (SightStepList *self,
          JsonNode      *root,
          GFile         *file)
{
  g_clear_pointer (&self->root, json_node_unref);
  self->root = root;
  g_ptr_array_set_size (self->states, 0);
  for (guint i = 0; i < sight_step_list_get_n_steps (self); i++)
    g_ptr_array_add (self->states, g_new0 (StepState, 1));
  if (g_set_object (&self->file, file))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FILE]);
  fill_details (self);
  show_status (self, NULL, NULL);
  self->selected = -1;
  rebuild (self);
  /* A test opened or started anew has no history to undo. */
  sight_step_undo_clear (self->undo);
  update_modified (self);
}

void
sight_step_list_new_test (SightStepList *self,
                          const char    *url)
{
  g_autoptr(JsonObject) object = json_object_new ();
  JsonNode *root = json_node_new (JSON_NODE_OBJECT);

  g_return_if_fail (SIGHT_IS_STEP_LIST (self));

  if (url != NULL && *url != '\0')
    json_object_set_string_member (object, "url", url);
  json_object_set_array_member (object, "steps", json_array_new ());
  json_node_set_object (root, object);
  set_root (self, root, NULL);
}

gboolean
sight_step_list_load (SightStepList  *self,
                      GFile          *file,
                      GError        **error)
{
  g_autoptr(SightTestFile) test = NULL;
  g_autofree char *path = NULL;

  g_return_val_if_fail (SIGHT_IS_STEP_LIST (self), FALSE);
  g_return_val_if_fail (G_IS_FILE (file), FALSE);

  path = g_file_get_path (file);
  if (path == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   _("Only local files can be opened"));
      return FALSE;
    }
  test = sight_test_file_load (path, error);
  if (test == NULL)
    return FALSE;
  if (self->run_index >= 0)
    stop_action (GTK_WIDGET (self), "steps.stop", NULL);
  set_root (self, json_node_copy (test->root), file);
  return TRUE;
}

gboolean
sight_step_list_save (SightStepList  *self,
                      GFile          *file,
                      GError        **error)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(SightTestFile) check = NULL;
  g_autofree char *path = NULL;
  g_autofree char *text = NULL;
  gsize length;

  g_return_val_if_fail (SIGHT_IS_STEP_LIST (self), FALSE);
  g_return_val_if_fail (file != NULL || self->file != NULL, FALSE);

  if (file == NULL)
    file = self->file;
  path = g_file_get_path (file);
  if (path == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   _("Only local files can be saved"));
      return FALSE;
    }
  json_generator_set_pretty (generator, TRUE);
  json_generator_set_indent (generator, 2);
  json_generator_set_root (generator, self->root);
  text = json_generator_to_data (generator, &length);
  /* Never write a file the runner would refuse (an emptied step, say). */
  check = sight_test_file_parse (path, text, length, error);
  if (check == NULL)
    return FALSE;
  if (!g_file_set_contents_full (path, text, length, G_FILE_SET_CONTENTS_CONSISTENT, 0644, error))
    return FALSE;
  if (file != self->file)
    {
      g_object_ref (file);
      g_clear_object (&self->file);
      self->file = file;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FILE]);
    }
  sight_step_undo_mark_clean (self->undo);
  update_modified (self);
  return TRUE;
}

GFile *
sight_step_list_get_file (SightStepList *self)
{
  g_return_val_if_fail (SIGHT_IS_STEP_LIST (self), NULL);
  return self->file;
}

char *
sight_step_list_dup_display_name (SightStepList *self)
{
  g_return_val_if_fail (SIGHT_IS_STEP_LIST (self), NULL);
  return self->file != NULL ? g_file_get_basename (self->file) : g_strdup (_("Untitled Test"));
}

gboolean
sight_step_list_get_modified (SightStepList *self)
{
  g_return_val_if_fail (SIGHT_IS_STEP_LIST (self), FALSE);
  return self->modified;
}

gboolean
sight_step_list_get_running (SightStepList *self)
{
  g_return_val_if_fail (SIGHT_IS_STEP_LIST (self), FALSE);
  return self->run_index >= 0;
}

guint
sight_step_list_get_n_steps (SightStepList *self)
{
  g_return_val_if_fail (SIGHT_IS_STEP_LIST (self), 0);
  return self->root != NULL ? json_array_get_length (steps_array (self)) : 0;
}

JsonObject *
sight_step_list_get_step (SightStepList *self,
                          guint          index)
{
  g_return_val_if_fail (SIGHT_IS_STEP_LIST (self), NULL);
  g_return_val_if_fail (index < sight_step_list_get_n_steps (self), NULL);
  return json_array_get_object_element (steps_array (self), index);
}

const char *
sight_step_list_get_step_kind (SightStepList *self,
                               guint          index)
{
  JsonObject *step = sight_step_list_get_step (self, index);

  return step != NULL ? step_kind_of (step) : NULL;
}

const char *
sight_step_list_get_instruction (SightStepList *self,
                                 guint          index)
{
  JsonObject *step = sight_step_list_get_step (self, index);
  const char *kind = step != NULL ? step_kind_of (step) : NULL;

  return kind != NULL ? json_object_get_string_member (step, kind) : NULL;
}

const char *
sight_step_list_get_verdict (SightStepList *self,
                             guint          index)
{
  g_return_val_if_fail (SIGHT_IS_STEP_LIST (self), NULL);
  g_return_val_if_fail (index < self->states->len, NULL);
  return ((StepState *) g_ptr_array_index (self->states, index))->verdict;
}

const char *
sight_step_list_get_cache_state (SightStepList *self,
                                 guint          index)
{
  g_return_val_if_fail (SIGHT_IS_STEP_LIST (self), NULL);
  g_return_val_if_fail (index < self->states->len, NULL);
  return ((StepState *) g_ptr_array_index (self->states, index))->cache;
}

/* The model's edits. Nothing here is recorded: the public edits below
 * record each for undo, and the undo stack replays them through these. */

static void
model_set_text (gpointer    model,
                guint       index,
                const char *text)
{
  SightStepList *self = model;
  JsonObject *step = sight_step_list_get_step (self, index);
  const char *kind = step != NULL ? step_kind_of (step) : NULL;

  if (kind == NULL)
    return;
  json_object_set_string_member (step, kind, text);
  if (index < self->rows->len &&
      g_strcmp0 (gtk_editable_get_text (g_ptr_array_index (self->rows, index)), text) != 0)
    {
      self->updating = TRUE;
      gtk_editable_set_text (g_ptr_array_index (self->rows, index), text);
      self->updating = FALSE;
    }
}

/* JsonArray inserts only at its end: the steps are laid out anew. */
static void
model_insert (gpointer  model,
              guint     index,
              JsonNode *step)
{
  SightStepList *self = model;
  JsonArray *steps = steps_array (self);
  guint n = json_array_get_length (steps);
  JsonArray *laid = json_array_sized_new (n + 1);

  index = MIN (index, n);
  for (guint i = 0; i <= n; i++)
    json_array_add_element (laid, i == index ? json_node_copy (step)
                                             : json_node_copy (json_array_get_element (
                                                 steps, i < index ? i : i - 1)));
  json_object_set_array_member (json_node_get_object (self->root), "steps", laid);
  g_ptr_array_insert (self->states, index, g_new0 (StepState, 1));
  if (self->selected >= (int) index)
    self->selected++;
  rebuild (self);
}

static void
model_remove (gpointer model,
              guint    index)
{
  SightStepList *self = model;

  json_array_remove_element (steps_array (self), index);
  g_ptr_array_remove_index (self->states, index);
  if (self->selected == (int) index)
    self->selected = -1;
  else if (self->selected > (int) index)
    self->selected--;
  rebuild (self);
}

static void
model_move (gpointer model,
            guint    from,
            guint    to)
{
  SightStepList *self = model;
  JsonArray *steps = steps_array (self), *moved;
  guint n = json_array_get_length (steps);
  g_autoptr(GPtrArray) order = g_ptr_array_new ();
  gpointer state;

  for (guint i = 0; i < n; i++)
    g_ptr_array_add (order, json_array_get_element (steps, i));
  g_ptr_array_insert (order, to > from ? to + 1 : to, g_ptr_array_index (order, from));
  g_ptr_array_remove_index (order, to > from ? from : from + 1);
  moved = json_array_sized_new (n);
  for (guint i = 0; i < n; i++)
    json_array_add_element (moved, json_node_copy (g_ptr_array_index (order, i)));
  json_object_set_array_member (json_node_get_object (self->root), "steps", moved);

  state = g_ptr_array_steal_index (self->states, from);
  g_ptr_array_insert (self->states, to, state);
  /* The selection goes with the step moved. */
  if (self->selected == (int) from)
    self->selected = to;
  rebuild (self);
}

static void
model_set_member (gpointer    model,
                  const char *member,
                  const char *value)
{
  SightStepList *self = model;

  set_member (self, member, value);
  fill_details (self);
}

static const SightStepUndoOps undo_ops = {
  .insert = model_insert,
  .remove = model_remove,
  .set_text = model_set_text,
  .move = model_move,
  .set_member = model_set_member,
};

void
sight_step_list_set_instruction (SightStepList *self,
                                 guint          index,
                                 const char    *instruction)
{
  g_autofree char *before = NULL;

  g_return_if_fail (SIGHT_IS_STEP_LIST (self));
  g_return_if_fail (instruction != NULL);

  before = g_strdup (sight_step_list_get_instruction (self, index));
  if (before == NULL || g_str_equal (before, instruction))
    return;
  model_set_text (self, index, instruction);
  sight_step_undo_push_set_text (self->undo, index, before, instruction);
  update_modified (self);
}

void
sight_step_list_append_step (SightStepList *self,
                             JsonNode      *step)
{
  g_return_if_fail (SIGHT_IS_STEP_LIST (self));
  g_return_if_fail (step != NULL);

  sight_step_list_insert_step (self, sight_step_list_get_n_steps (self), step);
}

gboolean
sight_step_list_insert_step (SightStepList *self,
                             guint          index,
                             JsonNode      *step)
{
  g_return_val_if_fail (SIGHT_IS_STEP_LIST (self), FALSE);
  g_return_val_if_fail (step != NULL, FALSE);

  if (!JSON_NODE_HOLDS_OBJECT (step) || step_kind_of (json_node_get_object (step)) == NULL ||
      index > sight_step_list_get_n_steps (self))
    return FALSE;
  model_insert (self, index, step);
  sight_step_undo_push_insert (self->undo, index, step);
  update_modified (self);
  return TRUE;
}

guint
sight_step_list_add_at_selection (SightStepList *self,
                                  JsonNode      *step)
{
  guint index;

  g_return_val_if_fail (SIGHT_IS_STEP_LIST (self), G_MAXUINT);

  index = self->selected >= 0 ? (guint) self->selected + 1 : sight_step_list_get_n_steps (self);
  if (!sight_step_list_insert_step (self, index, step))
    return G_MAXUINT;
  sight_step_list_select (self, index);
  return index;
}

void
sight_step_list_move_step (SightStepList *self,
                           guint          from,
                           guint          to)
{
  guint n;

  g_return_if_fail (SIGHT_IS_STEP_LIST (self));

  n = sight_step_list_get_n_steps (self);
  if (from >= n || to >= n || from == to || self->run_index >= 0)
    return;
  model_move (self, from, to);
  sight_step_undo_push_move (self->undo, from, to);
  update_modified (self);
}

void
sight_step_list_remove_step (SightStepList *self,
                             guint          index)
{
  g_autoptr(JsonNode) step = NULL;

  g_return_if_fail (SIGHT_IS_STEP_LIST (self));

  if (index >= sight_step_list_get_n_steps (self) || self->run_index >= 0)
    return;
  step = json_node_copy (json_array_get_element (steps_array (self), index));
  model_remove (self, index);
  sight_step_undo_push_remove (self->undo, index, step);
  update_modified (self);
}

void
sight_step_list_suggest_url (SightStepList *self,
                             const char    *url)
{
  JsonObject *object;

  g_return_if_fail (SIGHT_IS_STEP_LIST (self));

  object = json_node_get_object (self->root);
  if (url == NULL || *json_object_get_string_member_with_default (object, "url", "") != '\0')
    return;
  edit_member (self, "url", url);
  fill_details (self);
}

gboolean
sight_step_list_undo (SightStepList *self)
{
  gboolean done;

  g_return_val_if_fail (SIGHT_IS_STEP_LIST (self), FALSE);

  if (self->run_index >= 0)
    return FALSE;
  done = sight_step_undo_undo (self->undo);
  update_modified (self);
  return done;
}

gboolean
sight_step_list_redo (SightStepList *self)
{
  gboolean done;

  g_return_val_if_fail (SIGHT_IS_STEP_LIST (self), FALSE);

  if (self->run_index >= 0)
    return FALSE;
  done = sight_step_undo_redo (self->undo);
  update_modified (self);
  return done;
}

gboolean
sight_step_list_can_undo (SightStepList *self)
{
  g_return_val_if_fail (SIGHT_IS_STEP_LIST (self), FALSE);
  return self->run_index < 0 && sight_step_undo_can_undo (self->undo);
}

gboolean
sight_step_list_can_redo (SightStepList *self)
{
  g_return_val_if_fail (SIGHT_IS_STEP_LIST (self), FALSE);
  return self->run_index < 0 && sight_step_undo_can_redo (self->undo);
}

void
sight_step_list_begin_group (SightStepList *self)
{
  g_return_if_fail (SIGHT_IS_STEP_LIST (self));
  sight_step_undo_begin_group (self->undo);
}

void
sight_step_list_end_group (SightStepList *self)
{
  g_return_if_fail (SIGHT_IS_STEP_LIST (self));
  sight_step_undo_end_group (self->undo);
  update_modified (self);
}

int
sight_step_list_get_selected (SightStepList *self)
{
  g_return_val_if_fail (SIGHT_IS_STEP_LIST (self), -1);
  return self->selected;
}

void
sight_step_list_select (SightStepList *self,
                        int            index)
{
  g_return_if_fail (SIGHT_IS_STEP_LIST (self));

  if (index < 0 || (guint) index >= self->rows->len)
    {
      self->selected = -1;
      gtk_list_box_unselect_all (self->steps_box);
      return;
    }
  self->selected = index;
  gtk_list_box_select_row (self->steps_box, g_ptr_array_index (self->rows, index));
}

const char *
sight_step_list_get_url (SightStepList *self)
{
  g_return_val_if_fail (SIGHT_IS_STEP_LIST (self), NULL);
  return json_object_get_string_member_with_default (json_node_get_object (self->root), "url",
                                                     NULL);
}

gboolean
sight_step_list_offers_model_preferences (SightStepList *self)
{
  g_return_val_if_fail (SIGHT_IS_STEP_LIST (self), FALSE);
  return gtk_widget_get_visible (self->model_preferences_button);
}

const char *
sight_step_list_get_status (SightStepList *self)
{
  g_return_val_if_fail (SIGHT_IS_STEP_LIST (self), NULL);
  return gtk_widget_get_visible (GTK_WIDGET (self->status_label))
         ? gtk_label_get_text (self->status_label) : NULL;
}

const char *
sight_step_list_get_heal_key (SightStepList *self,
                              guint          index)
{
  g_return_val_if_fail (SIGHT_IS_STEP_LIST (self), NULL);
  g_return_val_if_fail (index < self->states->len, NULL);

  return ((StepState *) g_ptr_array_index (self->states, index))->key;
}

gboolean
sight_step_list_review_heal (SightStepList *self,
                             guint          index,
                             gboolean       accept,
                             GError       **error)
{
  SightProject *project;
  const char *dir;
  StepState *state;
  g_autoptr(SightTraceCache) cache = NULL;

  g_return_val_if_fail (SIGHT_IS_STEP_LIST (self), FALSE);
  g_return_val_if_fail (index < self->states->len, FALSE);

  state = g_ptr_array_index (self->states, index);
  project = self->composer != NULL ? sight_composer_get_project (self->composer) : NULL;
  dir = project != NULL ? sight_project_get_trace_cache_dir (project) : NULL;
  if (state->key == NULL || dir == NULL)
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                           _("This step has no healed trace to review"));
      return FALSE;
    }
  cache = sight_trace_cache_new (dir);
  if (accept)
    {
      if (!sight_trace_cache_mark_reviewed (cache, state->key, error))
        return FALSE;
    }
  else
    sight_trace_cache_forget (cache, state->key);
  g_clear_pointer (&state->key, g_free);
  g_free (state->cache);
  state->cache = g_strdup (accept ? "accepted" : "rejected");
  if (index < self->rows->len)
    update_row (self, index);
  return TRUE;
}

void
sight_step_list_set_base_url (SightStepList *self,
                              const char    *base_url)
{
  g_return_if_fail (SIGHT_IS_STEP_LIST (self));

  g_clear_pointer (&self->base_url, g_free);
  if (base_url != NULL && *base_url != '\0')
    self->base_url = g_strdup (base_url);
}
