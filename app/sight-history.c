/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-history"

#include "config.h"

#include "sight-history.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <string.h>

#include "sight-error.h"
#include "sight-observation.h"
#include "sight-report.h"

#define RUNS_LIMIT 500

/* The verdict filter's items, in the dropdown's order. */
static const char * const verdict_filters[] = {
  NULL, "pass", "fail", "error", "interrupted", "running",
};

struct _SightHistory
{
  AdwBin parent_instance;

  /* template widgets */
  GtkStack          *pages;
  GtkSearchEntry    *search_entry;
  GtkDropDown       *verdict_dropdown;
  GtkStack          *list_stack;
  GtkListBox        *runs_box;
  GtkLabel          *run_title;
  GtkLabel          *run_summary;
  GtkListBox        *steps_box;
  GtkWidget         *detail_box;
  GtkLabel          *step_title;
  GtkToggleButton   *before_button;
  GtkToggleButton   *after_button;
  GtkLabel          *step_code;
  GtkLabel          *step_text;
  GtkWidget         *no_shot_label;
  GtkListBox        *logs_box;

  /* owned */
  SightStore        *store;
  GCancellable      *cancellable;
  GCancellable      *load_cancellable;
  GCancellable      *list_cancellable;
  GCancellable      *observation_cancellable; /* the stored observation being parsed */
  SightRunData      *run;
  GtkNativeDialog   *export_dialog;
  char              *search;       /* casefolded */
  char              *step_text_shown;
  int                step_index;   /* shown, -1 none */
  guint              n_logs;
  gboolean           loaded;
  gboolean           opening;
  gboolean           syncing_entry;
  gboolean           selecting;
};

G_DEFINE_FINAL_TYPE (SightHistory, sight_history, ADW_TYPE_BIN)

enum { RUNS_LOADED, RUN_LOADED, OBSERVATION_SELECTED, N_SIGNALS };
static guint signals[N_SIGNALS];

static const char *
verdict_label (SightRunVerdict verdict)
{
  switch (verdict)
    {
    case SIGHT_RUN_VERDICT_RUNNING:     return _("Running");
    case SIGHT_RUN_VERDICT_PASS:        return _("Passed");
    case SIGHT_RUN_VERDICT_FAIL:        return _("Failed");
    case SIGHT_RUN_VERDICT_ERROR:       return _("Error");
    case SIGHT_RUN_VERDICT_SKIPPED:     return _("Skipped");
    case SIGHT_RUN_VERDICT_INTERRUPTED: return _("Interrupted");
    default:                            return "";
    }
}

static GtkWidget *
verdict_icon (SightRunVerdict verdict)
{
  const char *name, *style;
  GtkWidget *icon;

  switch (verdict)
    {
    case SIGHT_RUN_VERDICT_PASS:
      name = "emblem-ok-symbolic", style = "success";
      break;
    case SIGHT_RUN_VERDICT_FAIL:
      name = "dialog-error-symbolic", style = "error";
      break;
    case SIGHT_RUN_VERDICT_RUNNING:
      name = "media-playback-start-symbolic", style = "accent";
      break;
    case SIGHT_RUN_VERDICT_SKIPPED:
      name = "radio-symbolic", style = "dim-label";
      break;
    default:
      name = "dialog-warning-symbolic", style = "warning";
      break;
    }
  icon = gtk_image_new_from_icon_name (name);
  gtk_widget_add_css_class (icon, style);
  gtk_accessible_update_property (GTK_ACCESSIBLE (icon), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  verdict_label (verdict), -1);
  return icon;
}

static char *
format_time (gint64 usec)
{
  g_autoptr(GDateTime) time = NULL;

  if (usec <= 0)
    return g_strdup ("");
  time = g_date_time_new_from_unix_local (usec / G_USEC_PER_SEC);
  /* Translators: when a run started; see g_date_time_format () */
  return time != NULL ? g_date_time_format (time, _("%e %b %Y, %H:%M")) : g_strdup ("");
}

/* Markup-free text for a row's title or subtitle (page text and URLs are
 * untrusted). */
static char *
row_text (const char *text)
{
  return g_markup_escape_text (text != NULL ? text : "", -1);
}

/* The list ----------------------------------------------------------------- */

static gboolean
filter_cb (GtkListBoxRow *row,
           gpointer       user_data)
{
  SightHistory *self = user_data;
  const char *haystack = g_object_get_data (G_OBJECT (row), "search-text");

  return self->search == NULL || *self->search == '\0' ||
         (haystack != NULL && strstr (haystack, self->search) != NULL);
}

static void
update_list_page (SightHistory *self)
{
  gboolean any = gtk_widget_get_first_child (GTK_WIDGET (self->runs_box)) != NULL;

  gtk_stack_set_visible_child_name (self->list_stack,
                                    !any && (self->search == NULL || *self->search == '\0') &&
                                    gtk_drop_down_get_selected (self->verdict_dropdown) == 0
                                    ? "empty"
                                    : sight_history_get_n_shown (self) == 0 ? "no-match" : "list");
}

static GtkWidget *
create_run_row (const SightRunRecord *run)
{
  GtkWidget *row = adw_action_row_new ();
  g_autofree char *when = format_time (run->started_at);
  g_autofree char *title = NULL;
  g_autofree char *subtitle = NULL;
  g_autofree char *steps = NULL;
  g_autofree char *search = NULL;
  const char *name = run->name != NULL && *run->name != '\0' ? run->name : run->url;

  title = row_text (name != NULL ? name : run->id);
  steps = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u step", "%u steps", run->n_steps),
                           run->n_steps);
  /* Translators: a run's row: its verdict, its kind, when it started and its steps */
  subtitle = g_markup_printf_escaped (_("%s · %s · %s · %s"), verdict_label (run->verdict),
                                      run->kind, when, steps);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  adw_action_row_set_title_lines (ADW_ACTION_ROW (row), 1);
  adw_action_row_add_prefix (ADW_ACTION_ROW (row), verdict_icon (run->verdict));
  adw_action_row_add_suffix (ADW_ACTION_ROW (row),
                             gtk_image_new_from_icon_name ("go-next-symbolic"));
  gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), TRUE);

  search = g_strjoin (" ", run->id, run->kind, run->name ? run->name : "", run->url ? run->url : "",
                      run->code ? run->code : "", run->explanation ? run->explanation : "",
                      verdict_label (run->verdict), NULL);
  g_object_set_data_full (G_OBJECT (row), "search-text", g_utf8_casefold (search, -1), g_free);
  g_object_set_data_full (G_OBJECT (row), "run-id", g_strdup (run->id), g_free);
  return row;
}

static void
list_runs_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(SightHistory) self = user_data;
  g_autoptr(GPtrArray) runs = NULL;
  g_autoptr(GError) error = NULL;
  GtkWidget *child;

  runs = sight_store_list_runs_finish (SIGHT_STORE (source), result, &error);
  if (runs == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_warning ("Could not list the runs: %s", error->message);
      return;
    }
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->runs_box))) != NULL)
    gtk_list_box_remove (self->runs_box, child);
  for (guint i = 0; i < runs->len; i++)
    gtk_list_box_append (self->runs_box, create_run_row (g_ptr_array_index (runs, i)));
  self->loaded = TRUE;
  update_list_page (self);
  g_signal_emit (self, signals[RUNS_LOADED], 0);
}

static void
list_runs (SightHistory *self)
{
  guint selected = gtk_drop_down_get_selected (self->verdict_dropdown);

  /* Only the newest question's answer counts. */
  if (self->list_cancellable != NULL)
    g_cancellable_cancel (self->list_cancellable);
  g_clear_object (&self->list_cancellable);
  self->list_cancellable = g_cancellable_new ();
  g_signal_connect_object (self->cancellable, "cancelled", G_CALLBACK (g_cancellable_cancel),
                           self->list_cancellable, G_CONNECT_SWAPPED);
  sight_store_list_runs_async (self->store, RUNS_LIMIT,
                               verdict_filters[MIN (selected, G_N_ELEMENTS (verdict_filters) - 1)],
                               self->list_cancellable, list_runs_cb, g_object_ref (self));
}

static void
store_open_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(SightHistory) self = user_data;
  g_autoptr(GError) error = NULL;
  SightStore *store = sight_store_new_finish (result, &error);

  self->opening = FALSE;
  if (store == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_warning ("Could not open the run store: %s", error->message);
      return;
    }
  if (self->store == NULL)
    self->store = store;
  else
    g_object_unref (store);
  list_runs (self);
}

void
sight_history_reload (SightHistory *self)
{
  g_return_if_fail (SIGHT_IS_HISTORY (self));

  if (self->store != NULL)
    list_runs (self);
  else if (!self->opening)
    {
      self->opening = TRUE;
      sight_store_new_async (NULL, self->cancellable, store_open_cb, g_object_ref (self));
    }
}

static void
search_changed_cb (GtkSearchEntry *entry,
                   SightHistory   *self)
{
  if (!self->syncing_entry)
    sight_history_set_search (self, gtk_editable_get_text (GTK_EDITABLE (entry)));
}

static void
verdict_changed_cb (GtkDropDown  *dropdown,
                    GParamSpec   *pspec,
                    SightHistory *self)
{
  if (self->store != NULL)
    list_runs (self);
}

static void
run_activated_cb (GtkListBox    *box,
                  GtkListBoxRow *row,
                  SightHistory  *self)
{
  sight_history_open_run (self, g_object_get_data (G_OBJECT (row), "run-id"));
}

/* One run ------------------------------------------------------------------ */

static void
observation_parsed_cb (GObject      *source,
                       GAsyncResult *result,
                       gpointer      user_data)
{
  g_autoptr(SightHistory) self = user_data;
  g_autoptr(SightObservation) observation = NULL;
  g_autoptr(GError) error = NULL;

  observation = sight_observation_new_from_stored_finish (result, &error);
  if (observation != NULL)
    g_signal_emit (self, signals[OBSERVATION_SELECTED], 0, observation);
}

/* Cancels the stored observation being parsed: a newer moment was chosen. */
static void
cancel_observation (SightHistory *self)
{
  if (self->observation_cancellable != NULL)
    g_cancellable_cancel (self->observation_cancellable);
  g_clear_object (&self->observation_cancellable);
}

/* Hands the stored observation of @record to ::observation-selected once a
 * worker parsed it, as a live capture's is (a stored tree is megabytes of
 * JSON too). @record NULL: an empty observation, so the inspector shows
 * nothing rather than another moment. */
static void
select_observation (SightHistory                 *self,
                    const SightObservationRecord *record)
{
  SightScreenshot shot = { 0 };

  cancel_observation (self);
  self->observation_cancellable = g_cancellable_new ();
  g_signal_connect_object (self->cancellable, "cancelled", G_CALLBACK (g_cancellable_cancel),
                           self->observation_cancellable, G_CONNECT_SWAPPED);
  if (record != NULL)
    {
      shot.bytes = record->screenshot;
      shot.width = record->width;
      shot.height = record->height;
      shot.scale = record->scale;
      sight_image_format_from_mime_type (record->screenshot_mime, &shot.format);
    }
  sight_observation_new_from_stored_async (record != NULL ? record->tree_json : NULL,
                                           record != NULL ? record->url : NULL,
                                           record != NULL && record->screenshot != NULL
                                           ? &shot : NULL,
                                           self->observation_cancellable, observation_parsed_cb,
                                           g_object_ref (self));
}

static const SightObservationRecord *
find_observation (SightHistory *self,
                  int           index,
                  const char   *phase)
{
  for (guint i = 0; i < self->run->observations->len; i++)
    {
      const SightObservationRecord *record = g_ptr_array_index (self->run->observations, i);

      if (record->step_index == index && g_strcmp0 (record->phase, phase) == 0)
        return record;
    }
  return NULL;
}

/* The latest observation stored before the moment (@index, @after): what
 * the page looked like then, when the step itself stored none. */
static const SightObservationRecord *
find_earlier_observation (SightHistory *self,
                          int           index,
                          gboolean      after)
{
  const SightObservationRecord *best = NULL;
  int best_key = -1;

  for (guint i = 0; i < self->run->observations->len; i++)
    {
      const SightObservationRecord *record = g_ptr_array_index (self->run->observations, i);
      int key;

      if (record->step_index < 0)
        continue;
      key = record->step_index * 2 + (g_strcmp0 (record->phase, "before") == 0 ? 0 : 1);
      if (key < index * 2 + (after ? 1 : 0) && key > best_key)
        best = record, best_key = key;
    }
  return best;
}

static void
show_observation (SightHistory *self)
{
  const SightObservationRecord *record = NULL;
  gboolean after = gtk_toggle_button_get_active (self->after_button);

  if (self->run == NULL)
    {
      cancel_observation (self);
      g_signal_emit (self, signals[OBSERVATION_SELECTED], 0, NULL);
      return;
    }
  if (self->step_index >= 0)
    record = find_observation (self, self->step_index, after ? "after" : "before");
  /* The last step's "after" may be stored as the run's final page. */
  if (record == NULL && after && self->step_index >= 0 &&
      (guint) self->step_index + 1 == self->run->steps->len)
    record = find_observation (self, -1, "final");
  if (record == NULL && self->step_index >= 0)
    {
      record = find_earlier_observation (self, self->step_index, after);
      if (record != NULL)
        {
          g_autofree char *text = g_strdup_printf (
            _("Nothing was stored for this moment: the page as of step %d"),
            record->step_index + 1);

          gtk_label_set_text (GTK_LABEL (self->no_shot_label), text);
        }
      else
        gtk_label_set_text (GTK_LABEL (self->no_shot_label),
                            _("No observation was stored for this step"));
      gtk_widget_set_visible (self->no_shot_label, TRUE);
    }
  else
    gtk_widget_set_visible (self->no_shot_label, FALSE);
  select_observation (self, record);
}

static void
phase_toggled_cb (GtkToggleButton *button,
                  SightHistory    *self)
{
  if (gtk_toggle_button_get_active (button) && !self->selecting)
    show_observation (self);
}

static GtkWidget *
create_log_row (const SightLogRecord *log)
{
  GtkWidget *row = adw_action_row_new ();
  g_autofree char *title = row_text (log->text);
  g_autofree char *subtitle = NULL;
  gboolean request = g_strcmp0 (log->kind, "request_failed") == 0;
  GtkWidget *icon = gtk_image_new_from_icon_name (request ? "network-error-symbolic"
                                                  : "dialog-error-symbolic");

  if (request && log->status > 0)
    /* Translators: a failed request: its HTTP status, then its URL */
    subtitle = g_markup_printf_escaped (_("HTTP %u · %s"), log->status, log->url ? log->url : "");
  else
    subtitle = row_text (log->url);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  adw_action_row_set_title_lines (ADW_ACTION_ROW (row), 3);
  adw_action_row_set_subtitle_lines (ADW_ACTION_ROW (row), 1);
  gtk_widget_add_css_class (icon, request ? "warning" : "error");
  gtk_accessible_update_property (GTK_ACCESSIBLE (icon), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  request ? _("Failed request") : _("Console error"), -1);
  adw_action_row_add_prefix (ADW_ACTION_ROW (row), icon);
  return row;
}

static gboolean
log_is_problem (const SightLogRecord *log)
{
  if (g_strcmp0 (log->kind, "console") == 0)
    return g_strcmp0 (log->level, "error") == 0;
  return TRUE;   /* page errors and failed requests */
}

static void
show_step (SightHistory *self,
           int           index)
{
  const SightStepRecord *step;
  GtkWidget *child;
  g_autofree char *title = NULL;
  const char *text;

  self->step_index = index;
  gtk_widget_set_visible (self->detail_box, index >= 0);
  if (index < 0)
    {
      show_observation (self);
      return;
    }
  step = g_ptr_array_index (self->run->steps, index);
  /* Translators: the detail of a step: its number and its kind */
  title = g_strdup_printf (_("Step %d · %s"), index + 1, step->kind);
  gtk_label_set_text (self->step_title, title);
  gtk_label_set_text (self->step_code, step->code != NULL ? step->code : "");
  gtk_widget_set_visible (GTK_WIDGET (self->step_code), step->code != NULL);
  text = step->explanation != NULL ? step->explanation : step->instruction;
  g_free (self->step_text_shown);
  self->step_text_shown = g_strdup (text);
  if (sight_run_data_get_step_evidence (self->run, (guint) index) != NULL)
    {
      /* Translators: a failed step's explanation, then where its screenshot was kept */
      g_autofree char *shown = g_strdup_printf (_("%s\nScreenshot: %s"), text != NULL ? text : "",
                                                sight_run_data_get_step_evidence (self->run,
                                                                                  (guint) index));

      gtk_label_set_text (self->step_text, shown);
    }
  else
    gtk_label_set_text (self->step_text, text != NULL ? text : "");

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->logs_box))) != NULL)
    gtk_list_box_remove (self->logs_box, child);
  self->n_logs = 0;
  for (guint i = 0; i < self->run->logs->len; i++)
    {
      const SightLogRecord *log = g_ptr_array_index (self->run->logs, i);

      if (log->step_index == index && log_is_problem (log))
        {
          gtk_list_box_append (self->logs_box, create_log_row (log));
          self->n_logs++;
        }
    }
  gtk_widget_set_visible (GTK_WIDGET (self->logs_box), self->n_logs > 0);
  show_observation (self);
}

static void
step_selected_cb (GtkListBox    *box,
                  GtkListBoxRow *row,
                  SightHistory  *self)
{
  if (self->selecting || self->run == NULL)
    return;
  show_step (self, row != NULL ? gtk_list_box_row_get_index (row) : -1);
}

static GtkWidget *
create_step_row (const SightStepRecord *step)
{
  GtkWidget *row = adw_action_row_new ();
  g_autofree char *title = NULL;
  g_autofree char *subtitle = NULL;
  const char *label = step->label != NULL ? step->label : step->kind;

  /* Translators: a step of a run: its number and its label */
  title = g_markup_printf_escaped (_("%u · %s"), step->index + 1, label);
  subtitle = row_text (step->instruction);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  adw_action_row_set_subtitle_lines (ADW_ACTION_ROW (row), 2);
  adw_action_row_add_prefix (ADW_ACTION_ROW (row), verdict_icon (step->verdict));
  return row;
}

/* The open run's recording, while its file is there. */
static const char *
run_video_path (SightHistory *self)
{
  const SightArtifactRecord *video = self->run != NULL ? sight_run_data_find_video (self->run)
                                                       : NULL;

  return video != NULL && video->path != NULL && g_file_test (video->path, G_FILE_TEST_IS_REGULAR)
           ? video->path
           : NULL;
}

static void
load_run_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(SightHistory) self = user_data;
  g_autoptr(GError) error = NULL;
  SightRunData *data = sight_store_load_run_finish (SIGHT_STORE (source), result, &error);
  g_autofree char *summary = NULL;
  GtkWidget *child;
  int first = -1;

  if (data == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_warning ("Could not load the run: %s", error->message);
      return;
    }
  g_clear_pointer (&self->run, sight_run_data_free);
  self->run = data;

  gtk_label_set_text (self->run_title, data->run->name != NULL && *data->run->name != '\0'
                      ? data->run->name : data->run->id);
  summary = sight_report_summary (data);
  gtk_label_set_text (self->run_summary, summary);

  self->selecting = TRUE;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->steps_box))) != NULL)
    gtk_list_box_remove (self->steps_box, child);
  for (guint i = 0; i < data->steps->len; i++)
    {
      const SightStepRecord *step = g_ptr_array_index (data->steps, i);

      gtk_list_box_append (self->steps_box, create_step_row (step));
      /* Open on the first step that did not pass: that is why one looks. */
      if (first < 0 && step->verdict != SIGHT_RUN_VERDICT_PASS &&
          step->verdict != SIGHT_RUN_VERDICT_SKIPPED)
        first = i;
    }
  if (first < 0 && data->steps->len > 0)
    first = 0;
  if (first >= 0)
    gtk_list_box_select_row (self->steps_box, gtk_list_box_get_row_at_index (self->steps_box, first));
  self->selecting = FALSE;

  gtk_stack_set_visible_child_name (self->pages, "run");
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "history.open-report", TRUE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "history.export-report", TRUE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "history.copy-json", TRUE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "history.open-video",
                                run_video_path (self) != NULL);
  show_step (self, first);
  g_signal_emit (self, signals[RUN_LOADED], 0);
}

void
sight_history_open_run (SightHistory *self,
                        const char   *run_id)
{
  g_return_if_fail (SIGHT_IS_HISTORY (self));
  g_return_if_fail (run_id != NULL);

  if (self->store == NULL)
    return;
  if (self->load_cancellable != NULL)
    g_cancellable_cancel (self->load_cancellable);
  g_clear_object (&self->load_cancellable);
  self->load_cancellable = g_cancellable_new ();
  g_signal_connect_object (self->cancellable, "cancelled", G_CALLBACK (g_cancellable_cancel),
                           self->load_cancellable, G_CONNECT_SWAPPED);
  sight_store_load_run_async (self->store, run_id, self->load_cancellable, load_run_cb,
                              g_object_ref (self));
}

/* Reports ------------------------------------------------------------------ */

gboolean
sight_history_export_report (SightHistory  *self,
                             GFile         *file,
                             GError       **error)
{
  g_autofree char *path = NULL;

  g_return_val_if_fail (SIGHT_IS_HISTORY (self), FALSE);
  g_return_val_if_fail (G_IS_FILE (file), FALSE);

  if (self->run == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, _("No run is open"));
      return FALSE;
    }
  path = g_file_get_path (file);
  if (path == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   _("Only local files can be saved"));
      return FALSE;
    }
  return sight_report_write (self->run, SIGHT_REPORT_HTML, path, error);
}

char *
sight_history_dup_json_report (SightHistory *self)
{
  g_autoptr(JsonNode) json = NULL;

  g_return_val_if_fail (SIGHT_IS_HISTORY (self), NULL);

  if (self->run == NULL)
    return NULL;
  json = sight_report_to_json (self->run);
  return json_to_string (json, TRUE);
}

static void
toast (SightHistory *self,
       const char   *message)
{
  GtkWidget *overlay = gtk_widget_get_ancestor (GTK_WIDGET (self), ADW_TYPE_TOAST_OVERLAY);

  if (overlay != NULL)
    adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (overlay), adw_toast_new (message));
  else
    g_message ("%s", message);
}

static void
open_report_action (GtkWidget  *widget,
                    const char *action_name,
                    GVariant   *parameter)
{
  SightHistory *self = SIGHT_HISTORY (widget);
  g_autofree char *dir = g_build_filename (g_get_user_cache_dir (), "sightline", "reports", NULL);
  g_autofree char *name = NULL;
  g_autofree char *path = NULL;
  g_autofree char *uri = NULL;
  g_autoptr(GFile) file = NULL;
  g_autoptr(GError) error = NULL;

  if (self->run == NULL)
    return;
  name = g_strconcat (self->run->run->id, ".html", NULL);
  path = g_build_filename (dir, name, NULL);
  file = g_file_new_for_path (path);
  if (g_mkdir_with_parents (dir, 0700) != 0 || !sight_history_export_report (self, file, &error))
    {
      g_autofree char *message = g_strdup_printf (_("Could not write the report: %s"),
                                                  error != NULL ? error->message : g_strerror (errno));

      toast (self, message);
      return;
    }
  uri = g_file_get_uri (file);
  gtk_show_uri (GTK_WINDOW (gtk_widget_get_root (widget)), uri, GDK_CURRENT_TIME);
}

static void
open_video_action (GtkWidget  *widget,
                   const char *action_name,
                   GVariant   *parameter)
{
  const char *path = run_video_path (SIGHT_HISTORY (widget));
  g_autofree char *uri = path != NULL ? g_filename_to_uri (path, NULL, NULL) : NULL;

  if (uri != NULL)
    gtk_show_uri (GTK_WINDOW (gtk_widget_get_root (widget)), uri, GDK_CURRENT_TIME);
}

static void
export_response_cb (GtkNativeDialog *dialog,
                    int              response,
                    SightHistory    *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autoptr(GError) error = NULL;

      if (!sight_history_export_report (self, file, &error))
        {
          g_autofree char *message = g_strdup_printf (_("Could not write the report: %s"),
                                                      error->message);

          toast (self, message);
        }
      else
        toast (self, _("Report exported"));
    }
  g_clear_object (&self->export_dialog);
}

static void
export_report_action (GtkWidget  *widget,
                      const char *action_name,
                      GVariant   *parameter)
{
  SightHistory *self = SIGHT_HISTORY (widget);
  GtkFileChooserNative *native;
  g_autofree char *name = NULL;

  if (self->run == NULL || self->export_dialog != NULL)
    return;
  native = gtk_file_chooser_native_new (_("Export Report"),
                                        GTK_WINDOW (gtk_widget_get_root (widget)),
                                        GTK_FILE_CHOOSER_ACTION_SAVE, _("_Export"), _("_Cancel"));
  name = g_strconcat (self->run->run->id, ".html", NULL);
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (native), name);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (native), TRUE);
  g_signal_connect (native, "response", G_CALLBACK (export_response_cb), self);
  self->export_dialog = GTK_NATIVE_DIALOG (native);
  gtk_native_dialog_show (self->export_dialog);
}

static void
copy_json_action (GtkWidget  *widget,
                  const char *action_name,
                  GVariant   *parameter)
{
  SightHistory *self = SIGHT_HISTORY (widget);
  g_autofree char *json = sight_history_dup_json_report (self);

  if (json == NULL)
    return;
  gdk_clipboard_set_text (gtk_widget_get_clipboard (widget), json);
  toast (self, _("JSON report copied"));
}

static void
reload_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  sight_history_reload (SIGHT_HISTORY (widget));
}

static void
back_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  SightHistory *self = SIGHT_HISTORY (widget);

  gtk_stack_set_visible_child_name (self->pages, "list");
  g_clear_pointer (&self->run, sight_run_data_free);
  self->step_index = -1;
  gtk_widget_action_set_enabled (widget, "history.open-report", FALSE);
  gtk_widget_action_set_enabled (widget, "history.export-report", FALSE);
  gtk_widget_action_set_enabled (widget, "history.copy-json", FALSE);
  gtk_widget_action_set_enabled (widget, "history.open-video", FALSE);
  cancel_observation (self);
  g_signal_emit (self, signals[OBSERVATION_SELECTED], 0, NULL);
  sight_history_reload (self);
}

/* Life cycle --------------------------------------------------------------- */

static void
sight_history_map (GtkWidget *widget)
{
  SightHistory *self = SIGHT_HISTORY (widget);

  GTK_WIDGET_CLASS (sight_history_parent_class)->map (widget);
  /* Read the store when someone looks (runs may have been added from the
   * command line since), not at startup. */
  if (self->run == NULL)
    sight_history_reload (self);
}

static void
sight_history_dispose (GObject *object)
{
  SightHistory *self = SIGHT_HISTORY (object);

  g_cancellable_cancel (self->cancellable);
  /* The rows go with the template: their selection changes mean nothing. */
  self->selecting = TRUE;
  g_clear_pointer (&self->run, sight_run_data_free);
  if (self->export_dialog != NULL)
    gtk_native_dialog_destroy (self->export_dialog);
  g_clear_object (&self->export_dialog);
  g_clear_object (&self->load_cancellable);
  g_clear_object (&self->list_cancellable);
  g_clear_object (&self->observation_cancellable);
  g_clear_object (&self->store);
  G_OBJECT_CLASS (sight_history_parent_class)->dispose (object);
}

static void
sight_history_finalize (GObject *object)
{
  SightHistory *self = SIGHT_HISTORY (object);

  g_clear_pointer (&self->run, sight_run_data_free);
  g_clear_object (&self->cancellable);
  g_free (self->search);
  g_free (self->step_text_shown);
  G_OBJECT_CLASS (sight_history_parent_class)->finalize (object);
}

static void
sight_history_class_init (SightHistoryClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sight_history_dispose;
  object_class->finalize = sight_history_finalize;
  widget_class->map = sight_history_map;

  signals[RUNS_LOADED] = g_signal_new ("runs-loaded", G_TYPE_FROM_CLASS (klass),
                                       G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[RUN_LOADED] = g_signal_new ("run-loaded", G_TYPE_FROM_CLASS (klass),
                                      G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  /**
   * SightHistory::observation-selected:
   * @observation: (nullable): what the selected step's page looked like, or
   *   NULL when no run is open any more
   */
  signals[OBSERVATION_SELECTED] = g_signal_new ("observation-selected", G_TYPE_FROM_CLASS (klass),
                                                G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                                G_TYPE_NONE, 1, SIGHT_TYPE_OBSERVATION);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/dev/sightline/Sightline/sight-history.ui");
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, SightHistory, name)
  BIND (pages);
  BIND (search_entry);
  BIND (verdict_dropdown);
  BIND (list_stack);
  BIND (runs_box);
  BIND (run_title);
  BIND (run_summary);
  BIND (steps_box);
  BIND (detail_box);
  BIND (step_title);
  BIND (before_button);
  BIND (after_button);
  BIND (step_code);
  BIND (step_text);
  BIND (no_shot_label);
  BIND (logs_box);
#undef BIND
  gtk_widget_class_bind_template_callback (widget_class, search_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, verdict_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, run_activated_cb);
  gtk_widget_class_bind_template_callback (widget_class, step_selected_cb);
  gtk_widget_class_bind_template_callback (widget_class, phase_toggled_cb);

  gtk_widget_class_install_action (widget_class, "history.reload", NULL, reload_action);
  gtk_widget_class_install_action (widget_class, "history.back", NULL, back_action);
  gtk_widget_class_install_action (widget_class, "history.open-report", NULL, open_report_action);
  gtk_widget_class_install_action (widget_class, "history.open-video", NULL, open_video_action);
  gtk_widget_class_install_action (widget_class, "history.export-report", NULL,
                                   export_report_action);
  gtk_widget_class_install_action (widget_class, "history.copy-json", NULL, copy_json_action);
}

static void
sight_history_init (SightHistory *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->cancellable = g_cancellable_new ();
  self->step_index = -1;
  gtk_list_box_set_filter_func (self->runs_box, filter_cb, self, NULL);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "history.open-report", FALSE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "history.export-report", FALSE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "history.copy-json", FALSE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "history.open-video", FALSE);
}

GtkWidget *
sight_history_new (void)
{
  return g_object_new (SIGHT_TYPE_HISTORY, NULL);
}

void
sight_history_set_store (SightHistory *self,
                         SightStore   *store)
{
  g_return_if_fail (SIGHT_IS_HISTORY (self));
  g_set_object (&self->store, store);
}

void
sight_history_set_verdict_filter (SightHistory *self,
                                  const char   *verdict)
{
  g_return_if_fail (SIGHT_IS_HISTORY (self));

  for (guint i = 0; i < G_N_ELEMENTS (verdict_filters); i++)
    if (g_strcmp0 (verdict_filters[i], verdict) == 0)
      gtk_drop_down_set_selected (self->verdict_dropdown, i);
}

void
sight_history_set_search (SightHistory *self,
                          const char   *text)
{
  g_return_if_fail (SIGHT_IS_HISTORY (self));

  g_free (self->search);
  self->search = text != NULL ? g_utf8_casefold (text, -1) : NULL;
  if (g_strcmp0 (gtk_editable_get_text (GTK_EDITABLE (self->search_entry)), text ? text : "") != 0)
    {
      /* Setting the text passes through "" (search-changed at once). */
      self->syncing_entry = TRUE;
      gtk_editable_set_text (GTK_EDITABLE (self->search_entry), text ? text : "");
      self->syncing_entry = FALSE;
    }
  gtk_list_box_invalidate_filter (self->runs_box);
  update_list_page (self);
}

guint
sight_history_get_n_shown (SightHistory *self)
{
  guint n = 0;

  g_return_val_if_fail (SIGHT_IS_HISTORY (self), 0);

  for (GtkWidget *row = gtk_widget_get_first_child (GTK_WIDGET (self->runs_box)); row != NULL;
       row = gtk_widget_get_next_sibling (row))
    if (GTK_IS_LIST_BOX_ROW (row) && filter_cb (GTK_LIST_BOX_ROW (row), self))
      n++;
  return n;
}

const char *
sight_history_get_shown_run_id (SightHistory *self,
                                guint         index)
{
  guint n = 0;

  g_return_val_if_fail (SIGHT_IS_HISTORY (self), NULL);

  for (GtkWidget *row = gtk_widget_get_first_child (GTK_WIDGET (self->runs_box)); row != NULL;
       row = gtk_widget_get_next_sibling (row))
    if (GTK_IS_LIST_BOX_ROW (row) && filter_cb (GTK_LIST_BOX_ROW (row), self) && n++ == index)
      return g_object_get_data (G_OBJECT (row), "run-id");
  return NULL;
}

const SightRunData *
sight_history_get_run (SightHistory *self)
{
  g_return_val_if_fail (SIGHT_IS_HISTORY (self), NULL);
  return self->run;
}

gboolean
sight_history_select_step (SightHistory *self,
                           guint         index,
                           gboolean      after)
{
  g_return_val_if_fail (SIGHT_IS_HISTORY (self), FALSE);

  if (self->run == NULL || index >= self->run->steps->len)
    return FALSE;
  self->selecting = TRUE;
  gtk_toggle_button_set_active (after ? self->after_button : self->before_button, TRUE);
  gtk_list_box_select_row (self->steps_box, gtk_list_box_get_row_at_index (self->steps_box, index));
  self->selecting = FALSE;
  show_step (self, index);
  return TRUE;
}

const char *
sight_history_get_step_text (SightHistory *self)
{
  g_return_val_if_fail (SIGHT_IS_HISTORY (self), NULL);
  return self->step_index >= 0 ? self->step_text_shown : NULL;
}

guint
sight_history_get_n_step_logs (SightHistory *self)
{
  g_return_val_if_fail (SIGHT_IS_HISTORY (self), 0);
  return self->step_index >= 0 ? self->n_logs : 0;
}
