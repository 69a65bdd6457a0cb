/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-window"

#include "config.h"

#include "sight-window.h"

#include <glib/gi18n.h>
#include <string.h>
#include <webkit/webkit.h>

#include "sight-composer.h"
#include "sight-credential-keyring.h"
#include "sight-credential-offer.h"
#include "sight-demo-overlay.h"
#include "sight-demo-site.h"
#include "sight-api-key.h"
#include "sight-error.h"
#include "sight-model-config.h"
#include "sight-preferences.h"
#include "sight-history.h"
#include "sight-picker.h"
#include "sight-recorder.h"
#include "sight-step-list.h"

#define LOAD_TIMEOUT_MS        30000
#define OBSERVE_TIMEOUT_MS     15000
#define HIGHLIGHT_TIMEOUT_MS   3000
#define REFRESH_DELAY_MS       250
/* Demo mode pauses at least this long before a step: the outline of the
 * target shows before the action. */
#define DEMO_MIN_DELAY_MS      400

struct _SightWindow
{
  AdwApplicationWindow parent_instance;

  /* template widgets */
  AdwToastOverlay *toast_overlay;
  GtkEntry        *address_entry;
  GtkBox          *page_box;
  AdwStatusPage   *crash_page;
  GtkPaned        *main_paned;
  SightComposer   *composer;
  SightInspector  *inspector;
  SightStepList   *step_list;
  SightHistory    *history;
  AdwViewStack    *sidebar_stack;
  SightDemoOverlay *demo_overlay;
  GtkWidget       *sidebar;
  GtkWidget       *header_bar;
  SightLiveSessions *live_sessions;
  SightCredentialOffer *credential_offer;

  /* owned */
  SightWebPage    *page;
  SightDemoSite   *demo_site;
  SightRecorder   *recorder;
  SightPicker     *picker;             /* expectations by picking, Pick mode */
  GCancellable    *cancellable;        /* fired when the window closes */
  GCancellable    *observe_cancellable;
  GCancellable    *model_cancellable;
  GSettings       *settings;
  GtkNativeDialog *file_dialog;
  AdwMessageDialog *save_dialog;
  AdwToast        *demo_toast;         /* weak: "press Esc to leave" while it is up */
  guint            refresh_source;
  guint            startup_source;
  gboolean         uri_requested;
  gboolean         inspector_visible;
  gboolean         recording;
  /* The inspector shows a stored run's step, not the live page. */
  gboolean         time_travel;
  /* What to do once the unsaved changes are saved or discarded. */
  enum { AFTER_NOTHING, AFTER_CLOSE, AFTER_NEW, AFTER_OPEN } after_save;
  gboolean         closing;
  gboolean         crashed;          /* the web process is gone until a reload */
  gboolean         demo_mode;
  /* the step-list step a pending credential offer is for */
  guint            offer_step_index;
};

G_DEFINE_FINAL_TYPE (SightWindow, sight_window, ADW_TYPE_APPLICATION_WINDOW)

enum { PROP_0, PROP_INSPECTOR_VISIBLE, PROP_RECORDING, PROP_DEMO_MODE, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { OBSERVATION_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* The outline of the selected node in the live page: drawn by a script in
 * Sightline's isolated world, so page scripts neither see nor disturb it. */
static const char highlight_script[] =
  "const id = '__sightline-highlight';\n"
  "let box = document.getElementById (id);\n"
  "const el = args.ref ? __sight.snapshot.resolve (args.ref) : null;\n"
  "if (!el) { if (box) box.remove (); return false; }\n"
  "if (!box) {\n"
  "  box = document.createElement ('div');\n"
  "  box.id = id;\n"
  "  box.setAttribute ('aria-hidden', 'true');\n"
  "  box.style.cssText = 'position:fixed;pointer-events:none;z-index:2147483647;'\n"
  "    + 'outline:2px solid #3584e4;background:rgba(53,132,228,.18);border-radius:3px;'\n"
  "    + 'transition:all 120ms ease-out;box-sizing:border-box';\n"
  "  document.documentElement.appendChild (box);\n"
  "}\n"
  "el.scrollIntoView ({ block: 'nearest', inline: 'nearest' });\n"
  "const r = el.getBoundingClientRect ();\n"
  "box.style.left = r.left + 'px'; box.style.top = r.top + 'px';\n"
  "box.style.width = r.width + 'px'; box.style.height = r.height + 'px';\n"
  "return true;\n";

/* Returns the toast shown (owned by the overlay). */
static AdwToast *
show_toast (SightWindow *self,
            const char  *message)
{
  AdwToast *toast = adw_toast_new (message);

  adw_toast_set_timeout (toast, 5);
  adw_toast_overlay_add_toast (self->toast_overlay, toast);
  return toast;
}

/* Observation ------------------------------------------------------------ */

static void
capture_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(SightWindow) self = user_data;
  g_autoptr(SightObservation) observation = NULL;
  g_autoptr(GError) error = NULL;

  observation = sight_observation_capture_finish (result, &error);
  if (observation == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) &&
          !g_cancellable_is_cancelled (self->cancellable))
        {
          g_autofree char *message = g_strdup_printf (_("Could not observe the page: %s"),
                                                      error->message);

          show_toast (self, message);
        }
      return;
    }
  if (self->time_travel)
    return;
  sight_inspector_set_observation (self->inspector, observation);
  g_signal_emit (self, signals[OBSERVATION_CHANGED], 0);
}

static char *
page_script (const char *body)
{
  return g_strconcat (sight_observation_get_script (), "\n", body, NULL);
}

static void
unhighlight_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(SightWindow) self = user_data;
  g_autoptr(JsonNode) value = NULL;
  g_autoptr(GError) error = NULL;

  /* Whatever the outcome, the observation goes on: a page without our
   * outline is the normal case. */
  value = sight_web_page_evaluate_finish (SIGHT_WEB_PAGE (source), result, &error);
  if (g_cancellable_is_cancelled (self->observe_cancellable))
    return;
  sight_observation_capture_async (self->page,
                                   SIGHT_OBSERVE_FULL_TEXT | SIGHT_OBSERVE_SCREENSHOT |
                                   SIGHT_OBSERVE_PARSE_TREE,
                                   OBSERVE_TIMEOUT_MS, self->observe_cancellable,
                                   capture_cb, g_object_ref (self));
}

static void
refresh_observation (SightWindow *self)
{
  g_autofree char *script = page_script (highlight_script);
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) args = NULL;

  g_clear_handle_id (&self->refresh_source, g_source_remove);
  if (self->observe_cancellable != NULL)
    g_cancellable_cancel (self->observe_cancellable);
  g_clear_object (&self->observe_cancellable);
  self->observe_cancellable = g_cancellable_new ();
  g_signal_connect_object (self->cancellable, "cancelled",
                           G_CALLBACK (g_cancellable_cancel), self->observe_cancellable,
                           G_CONNECT_SWAPPED);

  /* Take the outline away first: the screenshot shows the page itself. */
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "ref");
  json_builder_add_null_value (builder);
  json_builder_end_object (builder);
  args = json_builder_get_root (builder);
  sight_web_page_evaluate_async (self->page, script, args, HIGHLIGHT_TIMEOUT_MS,
                                 self->observe_cancellable, unhighlight_cb,
                                 g_object_ref (self));
}

static gboolean
refresh_timeout_cb (gpointer user_data)
{
  SightWindow *self = user_data;

  self->refresh_source = 0;
  refresh_observation (self);
  return G_SOURCE_REMOVE;
}

static void
schedule_refresh (SightWindow *self)
{
  g_clear_handle_id (&self->refresh_source, g_source_remove);
  self->refresh_source = g_timeout_add (REFRESH_DELAY_MS, refresh_timeout_cb, self);
}

static void
highlight_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(SightWindow) self = user_data;
  g_autoptr(JsonNode) value = NULL;
  g_autoptr(GError) error = NULL;

  value = sight_web_page_evaluate_finish (SIGHT_WEB_PAGE (source), result, &error);
  if (value == NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_debug ("Could not outline the node: %s", error->message);
}

static void
highlight_ref (SightWindow *self,
               const char  *ref)
{
  g_autofree char *script = page_script (highlight_script);
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) args = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "ref");
  if (ref != NULL)
    json_builder_add_string_value (builder, ref);
  else
    json_builder_add_null_value (builder);
  json_builder_end_object (builder);
  args = json_builder_get_root (builder);
  sight_web_page_evaluate_async (self->page, script, args, HIGHLIGHT_TIMEOUT_MS,
                                 self->cancellable, highlight_cb, g_object_ref (self));
}

void
sight_window_outline_ref (SightWindow *self,
                          const char  *ref)
{
  g_return_if_fail (SIGHT_IS_WINDOW (self));
  highlight_ref (self, ref);
}

static void
node_selected_cb (SightInspector *inspector,
                  const char     *ref,
                  SightWindow    *self)
{
  highlight_ref (self, ref);
  /* The tree's and the screenshot's context menus are about it. */
  if (self->picker != NULL)
    sight_picker_set_target (self->picker, ref);
}

static void
step_finished_cb (SightComposer *composer,
                  JsonNode      *result,
                  SightWindow   *self)
{
  /* The inspector shows the page as the step left it. */
  schedule_refresh (self);
}

/* Demo mode -------------------------------------------------------------- */

static void
update_demo_delay (SightWindow *self)
{
  guint delay = 0;

  if (self->demo_mode)
    delay = MAX (self->settings != NULL
                 ? g_settings_get_uint (self->settings, "demo-slow-motion") : 0,
                 DEMO_MIN_DELAY_MS);
  sight_composer_set_start_delay (self->composer, delay);
}

/* Developer panes and the header bar go; the page fills the screen and the
 * caption of each step shows over it. */
static void
set_demo_mode (SightWindow *self,
               gboolean     demo_mode)
{
  if (self->demo_mode == demo_mode)
    return;
  self->demo_mode = demo_mode;
  gtk_widget_set_visible (self->sidebar, !demo_mode);
  gtk_widget_set_visible (self->header_bar, !demo_mode);
  gtk_widget_set_visible (GTK_WIDGET (self->inspector), !demo_mode && self->inspector_visible);
  gtk_widget_set_visible (GTK_WIDGET (self->demo_overlay), demo_mode);
  sight_demo_overlay_clear (self->demo_overlay);
  update_demo_delay (self);
  if (demo_mode)
    {
      gtk_window_fullscreen (GTK_WINDOW (self));
      g_set_weak_pointer (&self->demo_toast, show_toast (self, _("Demo mode: press Esc to leave")));
    }
  else
    {
      /* Its hint is over (a toast waits out its time only in a focused
       * window). */
      if (self->demo_toast != NULL)
        adw_toast_dismiss (self->demo_toast);
      g_clear_weak_pointer (&self->demo_toast);
      gtk_window_unfullscreen (GTK_WINDOW (self));
      highlight_ref (self, NULL);
    }
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.leave-demo", demo_mode);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DEMO_MODE]);
}

static void
demo_step_started_cb (SightComposer *composer,
                      const char    *kind,
                      const char    *instruction,
                      SightWindow   *self)
{
  if (!self->demo_mode)
    return;
  if (self->settings == NULL || g_settings_get_boolean (self->settings, "demo-captions"))
    sight_demo_overlay_show_step (self->demo_overlay, kind, instruction);
  else if (g_str_equal (kind, "do"))
    /* No caption, but the target is still outlined. */
    {
      sight_demo_overlay_show_step (self->demo_overlay, kind, instruction);
      gtk_widget_set_visible (GTK_WIDGET (self->demo_overlay), FALSE);
    }
}

/* An act step's agent is about to act: outline its target first. */
static void
demo_action_starting_cb (SightComposer *composer,
                         const char    *ref,
                         SightWindow   *self)
{
  if (self->demo_mode)
    highlight_ref (self, ref);
}

static void
demo_target_found_cb (SightDemoOverlay *overlay,
                      const char       *ref,
                      SightWindow      *self)
{
  if (self->demo_mode)
    highlight_ref (self, ref);
}

static void
leave_demo_action (GtkWidget  *widget,
                   const char *action_name,
                   GVariant   *parameter)
{
  set_demo_mode (SIGHT_WINDOW (widget), FALSE);
}

/* Preferences ------------------------------------------------------------ */

/* The step defaults of the preferences: the timeouts as the project of the
 * steps run here, the budgets and vision as the composer's defaults. */
static void
apply_defaults (SightWindow *self)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(SightProject) project = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  g_autofree char *vision = NULL;
  g_autofree char *project_path = NULL;
  g_autofree char *project_dir = NULL;
  g_autofree char *contents = NULL;

  if (self->settings == NULL)
    return;
  vision = g_settings_get_string (self->settings, "default-vision");
  /* The test's project file (its credentials, agents, defaults) when there
   * is one; the preferences give the defaults it does not. */
  project_path = sight_credential_project_path_for (sight_step_list_get_file (self->step_list));
  project_dir = g_path_get_dirname (project_path);
  if (g_file_get_contents (project_path, &contents, NULL, NULL))
    {
      g_autoptr(SightProject) check = sight_project_load (project_path, &error);

      if (check != NULL)
        root = json_from_string (contents, NULL);
      else
        g_message ("The project file is not used: %s", error->message);
      g_clear_error (&error);
    }
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_clear_pointer (&root, json_node_unref);
      root = json_node_new (JSON_NODE_OBJECT);
      json_node_take_object (root, json_object_new ());
    }
  if (!json_object_has_member (json_node_get_object (root), "defaults"))
    {
      g_autoptr(JsonNode) defaults = NULL;

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "timeout");
      json_builder_add_int_value (builder, g_settings_get_uint (self->settings, "default-timeout"));
      json_builder_set_member_name (builder, "actionTimeout");
      json_builder_add_int_value (builder,
                                  g_settings_get_uint (self->settings, "default-action-timeout"));
      json_builder_end_object (builder);
      defaults = json_builder_get_root (builder);
      json_object_set_member (json_node_get_object (root), "defaults",
                              g_steal_pointer (&defaults));
    }
  text = json_to_string (root, FALSE);
  project = sight_project_new_from_data (text, -1, project_dir, &error);
  if (project == NULL)
    {
      g_message ("The step defaults are not usable: %s", error->message);
      return;
    }
  sight_composer_set_project (self->composer, project);
  sight_composer_set_defaults (self->composer,
                               g_settings_get_uint (self->settings, "default-max-steps"),
                               g_settings_get_uint (self->settings, "default-max-model-calls"),
                               vision);
}

/* A test opened from a folder with a project file runs with it; one with
 * none keeps the project the steps had. */
static void
test_file_changed_cb (SightStepList *step_list,
                      GParamSpec    *pspec,
                      SightWindow   *self)
{
  GFile *file = sight_step_list_get_file (step_list);
  g_autofree char *path = file != NULL ? g_file_get_path (file) : NULL;
  g_autofree char *found = path != NULL ? sight_project_find (path) : NULL;

  if (found != NULL)
    apply_defaults (self);
}

static void
model_key_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(SightWindow) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(SightModelProvider) provider = NULL;
  char *key;

  key = sight_api_key_lookup_finish (result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ||
      g_cancellable_is_cancelled (self->cancellable))
    {
      sight_api_key_free (key);
      return;
    }
  /* No keyring: a local server needs no key; others say what is missing. */
  if (error != NULL)
    g_debug ("No keyring: %s", error->message);
  g_clear_error (&error);

  provider = sight_api_key_new_provider (self->settings, key, &error);
  sight_api_key_free (key);
  sight_composer_set_provider (self->composer, provider, error != NULL ? error->message : NULL);
}

/* The model of the preferences, its key read from the keyring. */
static void
apply_model (SightWindow *self)
{
  g_autofree char *provider = NULL;

  if (self->settings == NULL)
    return;
  if (self->model_cancellable != NULL)
    g_cancellable_cancel (self->model_cancellable);
  g_clear_object (&self->model_cancellable);
  provider = g_settings_get_string (self->settings, "model-provider");
  if (g_str_equal (provider, "none"))
    {
      /* The environment (SIGHTLINE_MODEL) still decides. */
      sight_composer_set_provider (self->composer, NULL, NULL);
      return;
    }
  self->model_cancellable = g_cancellable_new ();
  g_signal_connect_object (self->cancellable, "cancelled", G_CALLBACK (g_cancellable_cancel),
                           self->model_cancellable, G_CONNECT_SWAPPED);
  sight_api_key_lookup_async (provider, self->model_cancellable, model_key_cb,
                              g_object_ref (self));
}

static void
apply_tests_base_url (SightWindow *self)
{
  g_autofree char *base_url = g_strstrip (g_settings_get_string (self->settings,
                                                                 "tests-base-url"));

  sight_step_list_set_base_url (self->step_list, base_url);
}

static void
settings_changed_cb (GSettings   *settings,
                     const char  *key,
                     SightWindow *self)
{
  if (g_str_has_prefix (key, "model-"))
    apply_model (self);
  else if (g_str_equal (key, "tests-base-url"))
    apply_tests_base_url (self);
  else if (g_str_has_prefix (key, "default-"))
    apply_defaults (self);
}

static void
api_key_changed_cb (SightPreferences *preferences,
                    const char       *provider,
                    SightWindow      *self)
{
  apply_model (self);
}

static void
serve_mcp_action (GtkWidget  *widget,
                  const char *action_name,
                  GVariant   *parameter)
{
  sight_live_sessions_popup (SIGHT_WINDOW (widget)->live_sessions);
}

static void
preferences_action (GtkWidget  *widget,
                    const char *action_name,
                    GVariant   *parameter)
{
  SightWindow *self = SIGHT_WINDOW (widget);
  SightPreferences *preferences;
  g_autofree char *project_path = NULL;

  if (self->settings == NULL)
    {
      show_toast (self, _("Preferences need the app’s settings schema installed"));
      return;
    }
  preferences = sight_preferences_new (GTK_WINDOW (self), self->settings);
  g_signal_connect_object (preferences, "api-key-changed", G_CALLBACK (api_key_changed_cb),
                           self, 0);
  project_path = sight_credential_project_path_for (sight_step_list_get_file (self->step_list));
  sight_preferences_set_project_path (preferences, project_path);
  g_signal_connect_object (preferences, "credentials-changed", G_CALLBACK (apply_defaults),
                           self, G_CONNECT_SWAPPED);
  if (parameter != NULL)
    adw_preferences_window_set_visible_page_name (ADW_PREFERENCES_WINDOW (preferences),
                                                  g_variant_get_string (parameter, NULL));
  gtk_window_present (GTK_WINDOW (preferences));
}

/* Time travel ------------------------------------------------------------ */

static void
history_observation_cb (SightHistory     *history,
                        SightObservation *observation,
                        SightWindow      *self)
{
  if (observation != NULL)
    {
      self->time_travel = TRUE;
      if (!self->inspector_visible)
        g_object_set (self, "inspector-visible", TRUE, NULL);
      sight_inspector_set_observation (self->inspector, observation);
    }
  else if (self->time_travel)
    {
      /* Back to the present: the live page. */
      self->time_travel = FALSE;
      refresh_observation (self);
    }
}

static void
sidebar_page_cb (AdwViewStack *stack,
                 GParamSpec   *pspec,
                 SightWindow  *self)
{
  if (self->time_travel &&
      g_strcmp0 (adw_view_stack_get_visible_child_name (stack), "runs") != 0)
    {
      self->time_travel = FALSE;
      refresh_observation (self);
    }
}

static void
run_action (GtkWidget  *widget,
            const char *action_name,
            GVariant   *parameter)
{
  gtk_widget_activate_action (GTK_WIDGET (SIGHT_WINDOW (widget)->composer), "composer.run", NULL);
}

static void
stop_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  gtk_widget_activate_action (GTK_WIDGET (SIGHT_WINDOW (widget)->composer), "composer.stop",
                              NULL);
}

/* Recording -------------------------------------------------------------- */

static void
step_recorded_cb (SightRecorder *recorder,
                  JsonNode      *step,
                  SightWindow   *self)
{
  g_autoptr(JsonNode) copy = json_node_copy (step);

  sight_composer_add_recorded_step (self->composer, step);
  /* The runner's test files take a direct step as text alone: the
   * recorder's target descriptor stays out of the file. */
  if (JSON_NODE_HOLDS_OBJECT (copy))
    json_object_remove_member (json_node_get_object (copy), "target");
  sight_step_list_suggest_url (self->step_list, sight_recorder_get_start_url (recorder));
  sight_step_list_append_step (self->step_list, copy);
}

/* The recorder offers to save a typed password as a credential. */
static void
credential_offered_cb (SightRecorder *recorder,
                       const char    *name,
                       const char    *origin,
                       const char    *purpose,
                       SightWindow   *self)
{
  guint n = sight_step_list_get_n_steps (self->step_list);

  if (n == 0)
    return;
  self->offer_step_index = n - 1;
  sight_credential_offer_present (self->credential_offer, name, origin);
}

/* The credential the offered step's params name ("password" when it names
 * none); with @rename, it names @rename from now on. */
static const char *
offer_step_secret (SightWindow *self,
                   const char  *rename)
{
  const char *name = "password";
  JsonObject *step, *params;
  JsonObjectIter iter;
  const char *param;
  JsonNode *member;

  if (self->offer_step_index >= sight_step_list_get_n_steps (self->step_list))
    return name;
  step = sight_step_list_get_step (self->step_list, self->offer_step_index);
  params = json_object_has_member (step, "params")
             ? json_object_get_object_member (step, "params") : NULL;
  if (params == NULL)
    return name;
  json_object_iter_init (&iter, params);
  while (json_object_iter_next (&iter, &param, &member))
    {
      JsonObject *secret = JSON_NODE_HOLDS_OBJECT (member) ? json_node_get_object (member) : NULL;

      if (secret == NULL || !json_object_has_member (secret, "secret"))
        continue;
      if (rename != NULL)
        json_object_set_string_member (secret, "secret", rename);
      name = json_object_get_string_member (secret, "secret");
    }
  return name;
}

static void
credential_saved_cb (GObject      *source,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  g_autoptr(SightWindow) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *message = NULL;

  if (!sight_credential_save_finish (result, &error))
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;
      message = g_strdup_printf (_("Could not save the credential: %s"), error->message);
      show_toast (self, message);
      return;
    }
  show_toast (self, _("Credential saved: the value is in the keyring, the project file names "
                      "it"));
  apply_defaults (self);
}

static void
credential_accepted_cb (SightCredentialOffer *offer,
                        const char           *name,
                        const char           *origin,
                        SightWindow          *self)
{
  g_autoptr(SightCredential) cred = g_new0 (SightCredential, 1);
  const char *purpose = NULL;
  g_autofree char *project_path = NULL;
  char *value;

  if (self->recorder == NULL ||
      !sight_recorder_get_credential_offer (self->recorder, NULL, NULL, &purpose))
    return;
  cred->purpose = g_strdup (purpose);
  value = sight_recorder_accept_credential (self->recorder, name);
  /* The recorded step types the credential from now on. */
  offer_step_secret (self, name);
  cred->name = g_strdup (name);
  cred->allowed_origins = g_new0 (char *, 2);
  cred->allowed_origins[0] = g_strdup (origin);
  cred->source = SIGHT_CREDENTIAL_SOURCE_KEYRING;
  project_path = sight_credential_project_path_for (sight_step_list_get_file (self->step_list));
  sight_credential_save_async (project_path, cred, value, self->cancellable, credential_saved_cb,
                               g_object_ref (self));
  if (value != NULL)
    {
      memset (value, 0, strlen (value));
      g_free (value);
    }
}

static void
credential_declined_cb (SightCredentialOffer *offer,
                        SightWindow          *self)
{
  g_autofree char *message = NULL;
  const char *name;

  if (self->recorder != NULL)
    sight_recorder_decline_credential (self->recorder);
  /* The name the recorded step keeps. */
  name = offer_step_secret (self, NULL);
  /* Translators: %s is a credential name, e.g. "password" */
  message = g_strdup_printf (_("Not saved. To replay this step, the project needs a credential "
                               "named “%s”: add it in Preferences › Credentials."), name);
  show_toast (self, message);
}

static void
set_recording (SightWindow *self,
               gboolean     recording)
{
  if (self->recording == recording)
    return;
  self->recording = recording;
  if (self->recorder == NULL)
    {
      self->recorder = sight_recorder_new (sight_web_page_get_web_view (self->page));
      g_signal_connect_object (self->recorder, "step-added",
                               G_CALLBACK (step_recorded_cb), self, 0);
      sight_recorder_set_offer_credentials (self->recorder, TRUE);
      g_signal_connect_object (self->recorder, "credential-offered",
                               G_CALLBACK (credential_offered_cb), self, 0);
    }
  /* What one recording session adds undoes as one edit. */
  if (recording)
    {
      sight_step_list_begin_group (self->step_list);
      sight_recorder_start (self->recorder);
    }
  else
    {
      sight_recorder_stop (self->recorder);
      sight_step_list_end_group (self->step_list);
    }
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RECORDING]);
}

static void
set_crashed (SightWindow *self,
             gboolean     crashed,
             const char  *reason)
{
  self->crashed = crashed;
  if (crashed)
    {
      g_autofree char *escaped = g_markup_escape_text (reason != NULL ? reason : "", -1);
      g_autofree char *description = g_strdup_printf (
        _("%s. Reload to start it again; steps fail until then."), escaped);

      adw_status_page_set_description (self->crash_page, description);
    }
  gtk_widget_set_visible (GTK_WIDGET (self->crash_page), crashed);
}

/* Navigation ------------------------------------------------------------- */

static void
update_navigation_actions (SightWindow *self)
{
  WebKitWebView *view = sight_web_page_get_web_view (self->page);

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.back",
                                 webkit_web_view_can_go_back (view));
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.forward",
                                 webkit_web_view_can_go_forward (view));
}

static void
load_changed_cb (WebKitWebView   *view,
                 WebKitLoadEvent  event,
                 SightWindow     *self)
{
  const char *uri = webkit_web_view_get_uri (view);

  if (uri != NULL && !gtk_widget_has_focus (GTK_WIDGET (self->address_entry)) &&
      gtk_widget_get_focus_child (GTK_WIDGET (self->address_entry)) == NULL)
    gtk_editable_set_text (GTK_EDITABLE (self->address_entry), uri);
  update_navigation_actions (self);
  if (event == WEBKIT_LOAD_STARTED && self->crashed)
    set_crashed (self, FALSE, NULL);
  if (event == WEBKIT_LOAD_FINISHED)
    {
      gtk_entry_set_progress_fraction (self->address_entry, 0);
      schedule_refresh (self);
    }
}

static void
progress_changed_cb (WebKitWebView *view,
                     GParamSpec    *pspec,
                     SightWindow   *self)
{
  double progress = webkit_web_view_get_estimated_load_progress (view);

  gtk_entry_set_progress_fraction (self->address_entry, progress >= 1.0 ? 0 : progress);
}

/* The test's file name while one is open or being written (with a marker
 * when it has unsaved changes), else the page's title. */
static void
update_title (SightWindow *self)
{
  const char *title = webkit_web_view_get_title (sight_web_page_get_web_view (self->page));
  gboolean modified = sight_step_list_get_modified (self->step_list);
  g_autofree char *full = NULL;

  if (modified || sight_step_list_get_file (self->step_list) != NULL)
    {
      g_autofree char *name = sight_step_list_dup_display_name (self->step_list);

      if (modified)
        /* Translators: the window title: a test file with unsaved changes */
        full = g_strdup_printf (_("• %s — Sightline"), name);
      else
        full = g_strdup_printf (_("%s — Sightline"), name);
    }
  else if (title != NULL && *title != '\0')
    /* Translators: the window title: the page's title, then the app's name */
    full = g_strdup_printf (_("%s — Sightline"), title);
  gtk_window_set_title (GTK_WINDOW (self), full != NULL ? full : _("Sightline"));
}

static void
title_changed_cb (WebKitWebView *view,
                  GParamSpec    *pspec,
                  SightWindow   *self)
{
  update_title (self);
}

static void
step_list_changed_cb (SightStepList *step_list,
                      GParamSpec    *pspec,
                      SightWindow   *self)
{
  update_title (self);
}

static void
update_undo_actions (SightWindow *self)
{
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.undo",
                                 sight_step_list_can_undo (self->step_list));
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.redo",
                                 sight_step_list_can_redo (self->step_list));
}

static void
undo_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  SightWindow *self = SIGHT_WINDOW (widget);

  if (g_str_equal (action_name, "win.undo"))
    sight_step_list_undo (self->step_list);
  else
    sight_step_list_redo (self->step_list);
}

static void
load_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr(SightWindow) self = user_data;
  g_autoptr(GError) error = NULL;

  if (!sight_web_page_load_finish (SIGHT_WEB_PAGE (source), result, &error) &&
      !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) &&
      !g_cancellable_is_cancelled (self->cancellable))
    {
      g_autofree char *message = g_strdup_printf (_("Could not open the page: %s"),
                                                  error->message);

      show_toast (self, message);
    }
}

static char *
normalize_uri (const char *text)
{
  g_autofree char *stripped = g_strstrip (g_strdup (text));
  const char *scheme = g_uri_peek_scheme (stripped);

  if (*stripped == '\0')
    return NULL;
  if (scheme != NULL && (strstr (stripped, "://") != NULL || g_str_equal (scheme, "about") ||
                         g_str_equal (scheme, "data")))
    return g_steal_pointer (&stripped);
  if (g_str_has_prefix (stripped, "localhost") || g_str_has_prefix (stripped, "127.") ||
      g_str_has_prefix (stripped, "[::1]"))
    return g_strconcat ("http://", stripped, NULL);
  return g_strconcat ("https://", stripped, NULL);
}

void
sight_window_open_uri (SightWindow *self,
                       const char  *uri)
{
  g_autofree char *normalized = NULL;

  g_return_if_fail (SIGHT_IS_WINDOW (self));
  g_return_if_fail (uri != NULL);

  self->uri_requested = TRUE;
  normalized = normalize_uri (uri);
  if (normalized == NULL)
    return;
  gtk_editable_set_text (GTK_EDITABLE (self->address_entry), normalized);
  sight_web_page_load_async (self->page, normalized, SIGHT_WAIT_UNTIL_LOAD, LOAD_TIMEOUT_MS,
                             self->cancellable, load_cb, g_object_ref (self));
}

void
sight_window_open_demo_site (SightWindow *self)
{
  g_return_if_fail (SIGHT_IS_WINDOW (self));

  if (self->demo_site == NULL)
    {
      g_autoptr(GError) error = NULL;

      self->demo_site = sight_demo_site_new ();
      if (!sight_demo_site_start (self->demo_site, 0, &error))
        {
          g_autofree char *message = g_strdup_printf (_("Could not start the demo site: %s"),
                                                      error->message);

          g_clear_object (&self->demo_site);
          show_toast (self, message);
          return;
        }
    }
  sight_window_open_uri (self, sight_demo_site_get_url (self->demo_site));
}

const char *
sight_window_get_demo_url (SightWindow *self)
{
  g_return_val_if_fail (SIGHT_IS_WINDOW (self), NULL);
  return self->demo_site != NULL ? sight_demo_site_get_url (self->demo_site) : NULL;
}

static gboolean
startup_idle_cb (gpointer user_data)
{
  SightWindow *self = user_data;

  self->startup_source = 0;
  /* With no URL to open, show something real that needs no internet. */
  if (!self->uri_requested)
    sight_window_open_demo_site (self);
  return G_SOURCE_REMOVE;
}

static void
address_activate_cb (GtkEntry    *entry,
                     SightWindow *self)
{
  sight_window_open_uri (self, gtk_editable_get_text (GTK_EDITABLE (entry)));
  gtk_widget_grab_focus (GTK_WIDGET (sight_web_page_get_web_view (self->page)));
}

/* Actions ---------------------------------------------------------------- */

static void
back_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  webkit_web_view_go_back (sight_web_page_get_web_view (SIGHT_WINDOW (widget)->page));
}

static void
forward_action (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  webkit_web_view_go_forward (sight_web_page_get_web_view (SIGHT_WINDOW (widget)->page));
}

static void
web_process_lost_cb (SightWebPage *page,
                     const char   *reason,
                     SightWindow  *self)
{
  AdwToast *toast;

  if (g_cancellable_is_cancelled (self->cancellable))
    return;
  set_crashed (self, TRUE, reason);
  toast = adw_toast_new (_("The page’s web process stopped"));
  adw_toast_set_button_label (toast, _("_Reload"));
  adw_toast_set_action_name (toast, "win.reload");
  adw_toast_set_priority (toast, ADW_TOAST_PRIORITY_HIGH);
  adw_toast_overlay_add_toast (self->toast_overlay, toast);
}

static void
reload_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  SightWindow *self = SIGHT_WINDOW (widget);
  WebKitWebView *view = sight_web_page_get_web_view (self->page);

  if (self->crashed)
    {
      /* A new web process, through the page object (its deadline, its
       * scripts); the address the page had, else the one typed. */
      g_autofree char *uri = g_strdup (webkit_web_view_get_uri (view));

      set_crashed (self, FALSE, NULL);
      if (uri == NULL || *uri == '\0')
        uri = g_strdup (gtk_editable_get_text (GTK_EDITABLE (self->address_entry)));
      if (uri != NULL && *uri != '\0')
        {
          sight_window_open_uri (self, uri);
          return;
        }
    }
  webkit_web_view_reload (view);
}

static void
focus_address_action (GtkWidget  *widget,
                      const char *action_name,
                      GVariant   *parameter)
{
  SightWindow *self = SIGHT_WINDOW (widget);

  gtk_widget_grab_focus (GTK_WIDGET (self->address_entry));
  gtk_editable_select_region (GTK_EDITABLE (self->address_entry), 0, -1);
}

static void
refresh_observation_action (GtkWidget  *widget,
                            const char *action_name,
                            GVariant   *parameter)
{
  refresh_observation (SIGHT_WINDOW (widget));
}

static void
find_node_action (GtkWidget  *widget,
                  const char *action_name,
                  GVariant   *parameter)
{
  SightWindow *self = SIGHT_WINDOW (widget);

  if (!self->inspector_visible)
    g_object_set (self, "inspector-visible", TRUE, NULL);
  sight_inspector_focus_search (self->inspector);
}

static void
open_demo_action (GtkWidget  *widget,
                  const char *action_name,
                  GVariant   *parameter)
{
  sight_window_open_demo_site (SIGHT_WINDOW (widget));
}

/* Test files ------------------------------------------------------------- */

static void continue_after_save (SightWindow *self);

gboolean
sight_window_open_test_file (SightWindow  *self,
                             GFile        *file,
                             GError      **error)
{
  g_return_val_if_fail (SIGHT_IS_WINDOW (self), FALSE);
  g_return_val_if_fail (G_IS_FILE (file), FALSE);

  if (!sight_step_list_load (self->step_list, file, error))
    return FALSE;
  adw_view_stack_set_visible_child_name (self->sidebar_stack, "test");
  update_title (self);
  return TRUE;
}

static void
show_error_toast (SightWindow *self,
                  gboolean     saving,
                  GError      *error)
{
  g_autofree char *message = saving
                             ? g_strdup_printf (_("Could not save the test: %s"), error->message)
                             : g_strdup_printf (_("Could not open the test: %s"), error->message);

  show_toast (self, message);
}

static void
add_test_filters (GtkFileChooser *chooser)
{
  g_autoptr(GtkFileFilter) tests = gtk_file_filter_new ();
  g_autoptr(GtkFileFilter) all = gtk_file_filter_new ();

  gtk_file_filter_set_name (tests, _("Sightline Tests"));
  gtk_file_filter_add_pattern (tests, "*.sightline.json");
  gtk_file_chooser_add_filter (chooser, tests);
  gtk_file_filter_set_name (all, _("JSON Files"));
  gtk_file_filter_add_mime_type (all, "application/json");
  gtk_file_filter_add_pattern (all, "*.json");
  gtk_file_chooser_add_filter (chooser, all);
}

static void
open_response_cb (GtkNativeDialog *dialog,
                  int              response,
                  SightWindow     *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autoptr(GError) error = NULL;

      if (!sight_window_open_test_file (self, file, &error))
        show_error_toast (self, FALSE, error);
    }
  g_clear_object (&self->file_dialog);
}

static void
show_open_dialog (SightWindow *self)
{
  GtkFileChooserNative *native;

  if (self->file_dialog != NULL)
    return;
  native = gtk_file_chooser_native_new (_("Open Test"), GTK_WINDOW (self),
                                        GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
  add_test_filters (GTK_FILE_CHOOSER (native));
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (native), TRUE);
  g_signal_connect (native, "response", G_CALLBACK (open_response_cb), self);
  self->file_dialog = GTK_NATIVE_DIALOG (native);
  gtk_native_dialog_show (self->file_dialog);
}

static void
save_as_response_cb (GtkNativeDialog *dialog,
                     int              response,
                     SightWindow     *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autoptr(GError) error = NULL;

      if (!sight_step_list_save (self->step_list, file, &error))
        {
          show_error_toast (self, TRUE, error);
          self->after_save = AFTER_NOTHING;
        }
    }
  else
    self->after_save = AFTER_NOTHING;
  g_clear_object (&self->file_dialog);
  update_title (self);
  continue_after_save (self);
}

static void
show_save_as_dialog (SightWindow *self)
{
  GtkFileChooserNative *native;
  GFile *current = sight_step_list_get_file (self->step_list);

  if (self->file_dialog != NULL)
    return;
  native = gtk_file_chooser_native_new (_("Save Test"), GTK_WINDOW (self),
                                        GTK_FILE_CHOOSER_ACTION_SAVE, _("_Save"), _("_Cancel"));
  add_test_filters (GTK_FILE_CHOOSER (native));
  if (current != NULL)
    gtk_file_chooser_set_file (GTK_FILE_CHOOSER (native), current, NULL);
  else
    gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (native), "test.sightline.json");
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (native), TRUE);
  g_signal_connect (native, "response", G_CALLBACK (save_as_response_cb), self);
  self->file_dialog = GTK_NATIVE_DIALOG (native);
  gtk_native_dialog_show (self->file_dialog);
}

/* Saves where the test came from, or asks where. */
static void
save_test (SightWindow *self)
{
  g_autoptr(GError) error = NULL;

  if (sight_step_list_get_file (self->step_list) == NULL)
    {
      show_save_as_dialog (self);
      return;
    }
  if (!sight_step_list_save (self->step_list, NULL, &error))
    {
      show_error_toast (self, TRUE, error);
      self->after_save = AFTER_NOTHING;
    }
  update_title (self);
  continue_after_save (self);
}

static void
continue_after_save (SightWindow *self)
{
  int after = self->after_save;

  self->after_save = AFTER_NOTHING;
  if (sight_step_list_get_modified (self->step_list) && after != AFTER_NOTHING)
    return;   /* the save failed: keep the changes */
  switch (after)
    {
    case AFTER_CLOSE:
      self->closing = TRUE;
      gtk_window_close (GTK_WINDOW (self));
      break;
    case AFTER_NEW:
      sight_step_list_new_test (self->step_list, NULL);
      adw_view_stack_set_visible_child_name (self->sidebar_stack, "test");
      update_title (self);
      break;
    case AFTER_OPEN:
      show_open_dialog (self);
      break;
    default:
      break;
    }
}

static void
save_dialog_response_cb (AdwMessageDialog *dialog,
                         const char       *response,
                         SightWindow      *self)
{
  self->save_dialog = NULL;
  if (g_str_equal (response, "save"))
    save_test (self);
  else if (g_str_equal (response, "discard"))
    {
      /* Forget the changes, then carry on as if saved. */
      int after = self->after_save;

      if (after != AFTER_CLOSE)
        sight_step_list_new_test (self->step_list, NULL);
      self->after_save = AFTER_NOTHING;
      if (after == AFTER_CLOSE)
        {
          self->closing = TRUE;
          gtk_window_close (GTK_WINDOW (self));
        }
      else
        {
          self->after_save = after;
          continue_after_save (self);
        }
    }
  else
    self->after_save = AFTER_NOTHING;
}

/* Runs @after now when nothing is unsaved; else asks first. */
static void
maybe_save_then (SightWindow *self,
                 int          after)
{
  g_autofree char *name = NULL;
  AdwMessageDialog *dialog;

  self->after_save = after;
  if (!sight_step_list_get_modified (self->step_list))
    {
      continue_after_save (self);
      return;
    }
  if (self->save_dialog != NULL)
    return;
  name = sight_step_list_dup_display_name (self->step_list);
  dialog = ADW_MESSAGE_DIALOG (adw_message_dialog_new (GTK_WINDOW (self), _("Save Changes?"),
                                                       NULL));
  adw_message_dialog_format_body (dialog,
                                  _("“%s” has unsaved changes. Changes which are not saved "
                                    "will be permanently lost."), name);
  adw_message_dialog_add_responses (dialog,
                                    "cancel", _("_Cancel"),
                                    "discard", _("_Discard"),
                                    "save", _("_Save"),
                                    NULL);
  adw_message_dialog_set_response_appearance (dialog, "discard", ADW_RESPONSE_DESTRUCTIVE);
  adw_message_dialog_set_response_appearance (dialog, "save", ADW_RESPONSE_SUGGESTED);
  adw_message_dialog_set_default_response (dialog, "save");
  adw_message_dialog_set_close_response (dialog, "cancel");
  g_signal_connect (dialog, "response", G_CALLBACK (save_dialog_response_cb), self);
  self->save_dialog = dialog;
  gtk_window_present (GTK_WINDOW (dialog));
}

AdwMessageDialog *
sight_window_get_save_dialog (SightWindow *self)
{
  g_return_val_if_fail (SIGHT_IS_WINDOW (self), NULL);
  return self->save_dialog;
}

SightHistory *
sight_window_get_history (SightWindow *self)
{
  g_return_val_if_fail (SIGHT_IS_WINDOW (self), NULL);
  return self->history;
}

void
sight_window_show_page (SightWindow *self,
                        const char  *name)
{
  g_return_if_fail (SIGHT_IS_WINDOW (self));
  adw_view_stack_set_visible_child_name (self->sidebar_stack, name);
}

SightStepList *
sight_window_get_step_list (SightWindow *self)
{
  g_return_val_if_fail (SIGHT_IS_WINDOW (self), NULL);
  return self->step_list;
}

static void
new_test_action (GtkWidget  *widget,
                 const char *action_name,
                 GVariant   *parameter)
{
  maybe_save_then (SIGHT_WINDOW (widget), AFTER_NEW);
}

static void
open_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  maybe_save_then (SIGHT_WINDOW (widget), AFTER_OPEN);
}

static void
save_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  save_test (SIGHT_WINDOW (widget));
}

static void
save_as_action (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  show_save_as_dialog (SIGHT_WINDOW (widget));
}

static void
run_all_action (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  SightWindow *self = SIGHT_WINDOW (widget);

  adw_view_stack_set_visible_child_name (self->sidebar_stack, "test");
  gtk_widget_activate_action (GTK_WIDGET (self->step_list), "steps.run-all", NULL);
}

/* Life cycle ------------------------------------------------------------- */

static gboolean
sight_window_close_request (GtkWindow *window)
{
  SightWindow *self = SIGHT_WINDOW (window);

  if (!self->closing && sight_step_list_get_modified (self->step_list))
    {
      maybe_save_then (self, AFTER_CLOSE);
      return TRUE;
    }
  g_cancellable_cancel (self->cancellable);
  if (self->settings != NULL)
    {
      int width, height;

      gtk_window_get_default_size (window, &width, &height);
      g_settings_set_int (self->settings, "window-width", width);
      g_settings_set_int (self->settings, "window-height", height);
      g_settings_set_boolean (self->settings, "window-maximized",
                              gtk_window_is_maximized (window));
    }
  return GTK_WINDOW_CLASS (sight_window_parent_class)->close_request (window);
}

static void
sight_window_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  SightWindow *self = SIGHT_WINDOW (object);

  switch (prop_id)
    {
    case PROP_INSPECTOR_VISIBLE:
      g_value_set_boolean (value, self->inspector_visible);
      break;
    case PROP_RECORDING:
      g_value_set_boolean (value, self->recording);
      break;
    case PROP_DEMO_MODE:
      g_value_set_boolean (value, self->demo_mode);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sight_window_set_property (GObject      *object,
                           guint         prop_id,
                           const GValue *value,
                           GParamSpec   *pspec)
{
  SightWindow *self = SIGHT_WINDOW (object);

  switch (prop_id)
    {
    case PROP_INSPECTOR_VISIBLE:
      if (self->inspector_visible != g_value_get_boolean (value))
        {
          self->inspector_visible = g_value_get_boolean (value);
          gtk_widget_set_visible (GTK_WIDGET (self->inspector),
                                  self->inspector_visible && !self->demo_mode);
          g_object_notify_by_pspec (object, pspec);
        }
      break;
    case PROP_RECORDING:
      set_recording (self, g_value_get_boolean (value));
      break;
    case PROP_DEMO_MODE:
      set_demo_mode (self, g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sight_window_dispose (GObject *object)
{
  SightWindow *self = SIGHT_WINDOW (object);

  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  if (self->observe_cancellable != NULL)
    g_cancellable_cancel (self->observe_cancellable);
  if (self->model_cancellable != NULL)
    g_cancellable_cancel (self->model_cancellable);
  g_clear_handle_id (&self->refresh_source, g_source_remove);
  g_clear_handle_id (&self->startup_source, g_source_remove);
  g_clear_weak_pointer (&self->demo_toast);
  /* Its popovers on the page go before the page does. */
  g_clear_object (&self->picker);
  /* The sidebar's widgets go with the template, after this. */
  if (self->history != NULL)
    g_signal_handlers_disconnect_by_data (self->history, self);
  if (self->step_list != NULL)
    g_signal_handlers_disconnect_by_data (self->step_list, self);
  if (self->sidebar_stack != NULL)
    g_signal_handlers_disconnect_by_data (self->sidebar_stack, self);
  if (self->recorder != NULL)
    sight_recorder_stop (self->recorder);
  g_clear_object (&self->recorder);
  if (self->page != NULL)
    {
      g_signal_handlers_disconnect_by_data (sight_web_page_get_web_view (self->page), self);
      g_signal_handlers_disconnect_by_data (self->page, self);
    }
  g_clear_object (&self->page);
  if (self->demo_site != NULL)
    sight_demo_site_stop (self->demo_site);
  g_clear_object (&self->demo_site);
  g_clear_object (&self->settings);
  if (self->file_dialog != NULL)
    gtk_native_dialog_destroy (self->file_dialog);
  g_clear_object (&self->file_dialog);
  g_clear_object (&self->observe_cancellable);
  g_clear_object (&self->model_cancellable);
  g_clear_object (&self->cancellable);
  G_OBJECT_CLASS (sight_window_parent_class)->dispose (object);
}

static void
sight_window_class_init (SightWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GtkWindowClass *window_class = GTK_WINDOW_CLASS (klass);

  object_class->dispose = sight_window_dispose;
  object_class->get_property = sight_window_get_property;
  object_class->set_property = sight_window_set_property;
  window_class->close_request = sight_window_close_request;

  properties[PROP_INSPECTOR_VISIBLE] =
    g_param_spec_boolean ("inspector-visible", NULL, NULL, TRUE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_RECORDING] =
    g_param_spec_boolean ("recording", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_DEMO_MODE] =
    g_param_spec_boolean ("demo-mode", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * SightWindow::observation-changed:
   *
   * The inspector shows a new observation.
   */
  signals[OBSERVATION_CHANGED] = g_signal_new ("observation-changed", G_TYPE_FROM_CLASS (klass),
                                               G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                               G_TYPE_NONE, 0);

  g_type_ensure (SIGHT_TYPE_INSPECTOR);
  g_type_ensure (SIGHT_TYPE_COMPOSER);
  g_type_ensure (SIGHT_TYPE_STEP_LIST);
  g_type_ensure (SIGHT_TYPE_HISTORY);
  g_type_ensure (SIGHT_TYPE_DEMO_OVERLAY);
  g_type_ensure (SIGHT_TYPE_LIVE_SESSIONS);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/dev/sightline/Sightline/sight-window.ui");
  gtk_widget_class_bind_template_child (widget_class, SightWindow, toast_overlay);
  gtk_widget_class_bind_template_child (widget_class, SightWindow, address_entry);
  gtk_widget_class_bind_template_child (widget_class, SightWindow, page_box);
  gtk_widget_class_bind_template_child (widget_class, SightWindow, demo_overlay);
  gtk_widget_class_bind_template_child (widget_class, SightWindow, sidebar);
  gtk_widget_class_bind_template_child (widget_class, SightWindow, header_bar);
  gtk_widget_class_bind_template_child (widget_class, SightWindow, crash_page);
  gtk_widget_class_bind_template_child (widget_class, SightWindow, live_sessions);
  gtk_widget_class_bind_template_child (widget_class, SightWindow, main_paned);
  gtk_widget_class_bind_template_child (widget_class, SightWindow, inspector);
  gtk_widget_class_bind_template_child (widget_class, SightWindow, composer);
  gtk_widget_class_bind_template_child (widget_class, SightWindow, step_list);
  gtk_widget_class_bind_template_child (widget_class, SightWindow, history);
  gtk_widget_class_bind_template_callback (widget_class, history_observation_cb);
  gtk_widget_class_bind_template_callback (widget_class, sidebar_page_cb);
  gtk_widget_class_bind_template_child (widget_class, SightWindow, sidebar_stack);
  gtk_widget_class_bind_template_callback (widget_class, step_finished_cb);
  gtk_widget_class_install_action (widget_class, "win.run", NULL, run_action);
  gtk_widget_class_install_action (widget_class, "win.stop", NULL, stop_action);
  gtk_widget_class_bind_template_callback (widget_class, address_activate_cb);
  gtk_widget_class_bind_template_callback (widget_class, node_selected_cb);

  gtk_widget_class_install_action (widget_class, "win.new-test", NULL, new_test_action);
  gtk_widget_class_install_action (widget_class, "win.open", NULL, open_action);
  gtk_widget_class_install_action (widget_class, "win.save", NULL, save_action);
  gtk_widget_class_install_action (widget_class, "win.save-as", NULL, save_as_action);
  gtk_widget_class_install_action (widget_class, "win.run-all", NULL, run_all_action);
  /* Ctrl+Z and Ctrl+Shift+Z are the application's accelerators. */
  gtk_widget_class_install_action (widget_class, "win.undo", NULL, undo_action);
  gtk_widget_class_install_action (widget_class, "win.redo", NULL, undo_action);
  gtk_widget_class_install_action (widget_class, "win.preferences", NULL, preferences_action);
  /* Preferences on one page ("model", "steps", "credentials"). */
  gtk_widget_class_install_action (widget_class, "win.preferences-page", "s", preferences_action);
  gtk_widget_class_install_action (widget_class, "win.serve-mcp", NULL, serve_mcp_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_comma, GDK_CONTROL_MASK,
                                       "win.preferences", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_n, GDK_CONTROL_MASK,
                                       "win.new-test", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_o, GDK_CONTROL_MASK,
                                       "win.open", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_s, GDK_CONTROL_MASK,
                                       "win.save", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_s,
                                       GDK_CONTROL_MASK | GDK_SHIFT_MASK, "win.save-as", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Return,
                                       GDK_CONTROL_MASK | GDK_SHIFT_MASK, "win.run-all", NULL);

  gtk_widget_class_install_action (widget_class, "win.back", NULL, back_action);
  gtk_widget_class_install_action (widget_class, "win.forward", NULL, forward_action);
  gtk_widget_class_install_action (widget_class, "win.reload", NULL, reload_action);
  gtk_widget_class_install_action (widget_class, "win.focus-address", NULL,
                                   focus_address_action);
  gtk_widget_class_install_action (widget_class, "win.refresh-observation", NULL,
                                   refresh_observation_action);
  gtk_widget_class_install_action (widget_class, "win.find-node", NULL, find_node_action);
  gtk_widget_class_install_action (widget_class, "win.open-demo-site", NULL, open_demo_action);
  gtk_widget_class_install_property_action (widget_class, "win.show-inspector",
                                            "inspector-visible");
  gtk_widget_class_install_property_action (widget_class, "win.record", "recording");
  gtk_widget_class_install_property_action (widget_class, "win.demo-mode", "demo-mode");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_F11, 0, "win.demo-mode", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_d,
                                       GDK_CONTROL_MASK | GDK_SHIFT_MASK, "win.demo-mode", NULL);
  /* Disabled outside demo mode, so Escape keeps its usual work there. */
  gtk_widget_class_install_action (widget_class, "win.leave-demo", NULL, leave_demo_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "win.leave-demo", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_r,
                                       GDK_CONTROL_MASK | GDK_SHIFT_MASK, "win.record", NULL);

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Left, GDK_ALT_MASK,
                                       "win.back", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Right, GDK_ALT_MASK,
                                       "win.forward", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_r, GDK_CONTROL_MASK,
                                       "win.reload", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_F5, 0, "win.reload", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_l, GDK_CONTROL_MASK,
                                       "win.focus-address", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_o,
                                       GDK_CONTROL_MASK | GDK_SHIFT_MASK,
                                       "win.refresh-observation", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_f, GDK_CONTROL_MASK,
                                       "win.find-node", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_i,
                                       GDK_CONTROL_MASK | GDK_SHIFT_MASK,
                                       "win.show-inspector", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_F12, 0,
                                       "win.show-inspector", NULL);
}

static GSettings *
app_settings (void)
{
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  g_autoptr(GSettingsSchema) schema = NULL;

  /* A build tree run without the compiled schema still opens a window. */
  if (source != NULL)
    schema = g_settings_schema_source_lookup (source, APP_ID, TRUE);
  if (schema == NULL)
    return NULL;
  return g_settings_new (APP_ID);
}

static void
store_open_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(SightWindow) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(SightStore) store = sight_store_new_finish (result, &error);

  if (store == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_autofree char *message = g_strdup_printf (_("Runs are not kept: %s"), error->message);

          show_toast (self, message);
        }
      return;
    }
  if (g_cancellable_is_cancelled (self->cancellable))
    return;
  sight_step_list_set_store (self->step_list, store);
  sight_history_set_store (self->history, store);
}

static void
sight_window_init (SightWindow *self)
{
  WebKitWebView *view;

  self->inspector_visible = TRUE;
  gtk_widget_init_template (GTK_WIDGET (self));

  self->cancellable = g_cancellable_new ();
  self->page = sight_web_page_new ();
  sight_web_page_set_headless (self->page, FALSE);
  view = sight_web_page_get_web_view (self->page);
  gtk_widget_set_hexpand (GTK_WIDGET (view), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (view), TRUE);
  /* The credential offer sits over the page, the page below it. */
  gtk_orientable_set_orientation (GTK_ORIENTABLE (self->page_box), GTK_ORIENTATION_VERTICAL);
  self->credential_offer = sight_credential_offer_new ();
  gtk_box_append (self->page_box, GTK_WIDGET (self->credential_offer));
  g_signal_connect_object (self->credential_offer, "accepted",
                           G_CALLBACK (credential_accepted_cb), self, 0);
  g_signal_connect_object (self->credential_offer, "declined",
                           G_CALLBACK (credential_declined_cb), self, 0);
  gtk_box_append (self->page_box, GTK_WIDGET (view));
  g_signal_connect (view, "load-changed", G_CALLBACK (load_changed_cb), self);
  g_signal_connect (view, "notify::estimated-load-progress",
                    G_CALLBACK (progress_changed_cb), self);
  g_signal_connect (view, "notify::title", G_CALLBACK (title_changed_cb), self);
  g_signal_connect (self->page, "web-process-lost", G_CALLBACK (web_process_lost_cb), self);
  update_navigation_actions (self);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.leave-demo", FALSE);
  sight_live_sessions_attach (self->live_sessions, self->page_box, self->page, self->inspector,
                              self->composer);
  sight_composer_set_page (self->composer, self->page);
  sight_composer_set_cancellable (self->composer, self->cancellable);
  sight_step_list_set_composer (self->step_list, self->composer);
  sight_demo_overlay_set_page (self->demo_overlay, self->page);
  g_signal_connect_object (self->composer, "step-started",
                           G_CALLBACK (demo_step_started_cb), self, 0);
  g_signal_connect_object (self->demo_overlay, "target-found",
                           G_CALLBACK (demo_target_found_cb), self, 0);
  g_signal_connect_object (self->composer, "action-starting",
                           G_CALLBACK (demo_action_starting_cb), self, 0);
  sight_step_list_set_page (self->step_list, self->page);
  self->picker = sight_picker_new (self);
  g_signal_connect_object (self->step_list, "notify::modified",
                           G_CALLBACK (step_list_changed_cb), self, 0);
  g_signal_connect_object (self->step_list, "notify::file",
                           G_CALLBACK (step_list_changed_cb), self, 0);
  /* Another test file may have another project file. */
  g_signal_connect_object (self->step_list, "notify::file",
                           G_CALLBACK (test_file_changed_cb), self, 0);
  g_signal_connect_object (self->step_list, "notify::can-undo",
                           G_CALLBACK (update_undo_actions), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->step_list, "notify::can-redo",
                           G_CALLBACK (update_undo_actions), self, G_CONNECT_SWAPPED);
  update_undo_actions (self);

  self->settings = app_settings ();
  if (self->settings != NULL)
    {
      gtk_window_set_default_size (GTK_WINDOW (self),
                                   g_settings_get_int (self->settings, "window-width"),
                                   g_settings_get_int (self->settings, "window-height"));
      if (g_settings_get_boolean (self->settings, "window-maximized"))
        gtk_window_maximize (GTK_WINDOW (self));
      /* -1 (the default) leaves the divider where the template puts it. */
      if (g_settings_get_int (self->settings, "inspector-position") >= 0)
        gtk_paned_set_position (self->main_paned,
                                g_settings_get_int (self->settings, "inspector-position"));
      g_settings_bind (self->settings, "inspector-position", self->main_paned, "position",
                       G_SETTINGS_BIND_SET);
      g_settings_bind (self->settings, "inspector-visible", self, "inspector-visible",
                       G_SETTINGS_BIND_DEFAULT);
      g_signal_connect_object (self->settings, "changed", G_CALLBACK (settings_changed_cb),
                               self, 0);
      g_signal_connect_object (self->settings, "changed::demo-slow-motion",
                               G_CALLBACK (update_demo_delay), self, G_CONNECT_SWAPPED);
      apply_defaults (self);
      apply_model (self);
      apply_tests_base_url (self);
    }

  /* One store for the window: its runs page and the runs of its tests. */
  sight_store_new_async (NULL, self->cancellable, store_open_cb, g_object_ref (self));
  self->startup_source = g_idle_add_full (G_PRIORITY_DEFAULT, startup_idle_cb, self, NULL);
}

SightWindow *
sight_window_new (SightApplication *application)
{
  return g_object_new (SIGHT_TYPE_WINDOW, "application", application, NULL);
}

SightPicker *
sight_window_get_picker (SightWindow *self)
{
  g_return_val_if_fail (SIGHT_IS_WINDOW (self), NULL);
  return self->picker;
}

SightWebPage *
sight_window_get_page (SightWindow *self)
{
  g_return_val_if_fail (SIGHT_IS_WINDOW (self), NULL);
  return self->page;
}

SightLiveSessions *
sight_window_get_live_sessions (SightWindow *self)
{
  g_return_val_if_fail (SIGHT_IS_WINDOW (self), NULL);
  return self->live_sessions;
}

SightInspector *
sight_window_get_inspector (SightWindow *self)
{
  g_return_val_if_fail (SIGHT_IS_WINDOW (self), NULL);
  return self->inspector;
}

SightComposer *
sight_window_get_composer (SightWindow *self)
{
  g_return_val_if_fail (SIGHT_IS_WINDOW (self), NULL);
  return self->composer;
}

SightObservation *
sight_window_get_observation (SightWindow *self)
{
  g_return_val_if_fail (SIGHT_IS_WINDOW (self), NULL);
  return sight_inspector_get_observation (self->inspector);
}

gboolean
sight_window_get_crashed (SightWindow *self)
{
  g_return_val_if_fail (SIGHT_IS_WINDOW (self), FALSE);
  return self->crashed;
}

GCancellable *
sight_window_get_cancellable (SightWindow *self)
{
  g_return_val_if_fail (SIGHT_IS_WINDOW (self), NULL);
  return self->cancellable;
}

gboolean
sight_window_get_demo_mode (SightWindow *self)
{
  g_return_val_if_fail (SIGHT_IS_WINDOW (self), FALSE);

  return self->demo_mode;
}

SightDemoOverlay *
sight_window_get_demo_overlay (SightWindow *self)
{
  g_return_val_if_fail (SIGHT_IS_WINDOW (self), NULL);

  return self->demo_overlay;
}

SightCredentialOffer *
sight_window_get_credential_offer (SightWindow *self)
{
  g_return_val_if_fail (SIGHT_IS_WINDOW (self), NULL);
  return self->credential_offer;
}
