/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-preferences"

#include "config.h"

#include <adwaita.h>
#include <string.h>

#include "app-test-common.h"
#include "sight-api-key.h"
#include "sight-preferences.h"
#include "sight-scripted-model.h"
#include "sight-window.h"

#define DEADLINE_US (40 * G_USEC_PER_SEC)

/* The preferences against the app's real schema (a memory backend), the
 * model they name against the scripted model server, and the API key
 * through libsecret into a throwaway GNOME keyring (tests/keyring-session.sh). */
static SightWindow *window;
static GSettings *settings;
static SightScriptedModel *model;

static gboolean
wake_cb (gpointer user_data)
{
  return G_SOURCE_CONTINUE;
}

static void
spin (guint ms)
{
  gint64 until = g_get_monotonic_time () + ms * 1000;

  while (g_get_monotonic_time () < until)
    g_main_context_iteration (NULL, FALSE), g_usleep (2000);
}

static GtkWidget *
child (SightPreferences *preferences,
       const char       *name)
{
  return GTK_WIDGET (gtk_widget_get_template_child (GTK_WIDGET (preferences),
                                                    SIGHT_TYPE_PREFERENCES, name));
}

static void
test_round_trip (void)
{
  SightPreferences *preferences = sight_preferences_new (GTK_WINDOW (window), settings);
  g_autofree char *provider = NULL;
  g_autofree char *name = NULL;
  g_autofree char *vision = NULL;

  gtk_window_present (GTK_WINDOW (preferences));

  /* Widgets → settings. */
  adw_combo_row_set_selected (ADW_COMBO_ROW (child (preferences, "provider_row")), 2);
  provider = g_settings_get_string (settings, "model-provider");
  g_assert_cmpstr (provider, ==, "anthropic");
  gtk_editable_set_text (GTK_EDITABLE (child (preferences, "model_row")), "claude-sonnet-4");
  name = g_settings_get_string (settings, "model-name");
  g_assert_cmpstr (name, ==, "claude-sonnet-4");
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (child (preferences, "timeout_spin")), 45);
  g_assert_cmpuint (g_settings_get_uint (settings, "default-timeout"), ==, 45000);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (child (preferences, "max_steps_spin")), 7);
  g_assert_cmpuint (g_settings_get_uint (settings, "default-max-steps"), ==, 7);
  adw_combo_row_set_selected (ADW_COMBO_ROW (child (preferences, "vision_row")), 2);
  vision = g_settings_get_string (settings, "default-vision");
  g_assert_cmpstr (vision, ==, "only");

  /* Settings → widgets. */
  g_settings_set_string (settings, "model-base-url", "http://127.0.0.1:11434/v1");
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (child (preferences, "base_url_row"))), ==,
                   "http://127.0.0.1:11434/v1");
  g_settings_set_uint (settings, "default-action-timeout", 20000);
  g_assert_cmpfloat (gtk_spin_button_get_value (GTK_SPIN_BUTTON (child (preferences,
                                                                       "action_timeout_spin"))),
                     ==, 20);
  g_settings_set_string (settings, "model-provider", "openai");
  g_assert_cmpuint (adw_combo_row_get_selected (ADW_COMBO_ROW (child (preferences, "provider_row"))),
                    ==, 1);
  /* Demo options, both ways. */
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (child (preferences, "demo_delay_spin")), 1500);
  g_assert_cmpuint (g_settings_get_uint (settings, "demo-slow-motion"), ==, 1500);
  g_settings_set_boolean (settings, "demo-captions", FALSE);
  g_assert_false (gtk_switch_get_active (GTK_SWITCH (child (preferences, "demo_captions_switch"))));

  /* A typed key never reaches the settings. */
  {
    g_autoptr(GSettingsSchema) schema = NULL;
    g_auto(GStrv) keys = NULL;

    g_object_get (settings, "settings-schema", &schema, NULL);
    keys = g_settings_schema_list_keys (schema);
    for (guint i = 0; keys[i] != NULL; i++)
      g_assert_null (strstr (keys[i], "api-key"));
  }
  gtk_window_destroy (GTK_WINDOW (preferences));
  g_settings_reset (settings, "default-timeout");
  g_settings_reset (settings, "default-max-steps");
  g_settings_reset (settings, "default-vision");
  g_settings_reset (settings, "default-action-timeout");
  g_settings_reset (settings, "demo-slow-motion");
  g_settings_reset (settings, "demo-captions");
}

static gboolean
wait_model_shown (SightComposer *composer,
                  gboolean       no_model)
{
  gint64 deadline = g_get_monotonic_time () + DEADLINE_US;

  while (sight_composer_get_no_model_shown (composer) != no_model &&
         g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  return sight_composer_get_no_model_shown (composer) == no_model;
}

static void
run_assert (SightComposer *composer)
{
  gint64 deadline = g_get_monotonic_time () + DEADLINE_US;

  sight_composer_set_instruction (composer, "the page offers a sign-in form");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.run", NULL));
  while (sight_composer_get_running (composer) && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (sight_composer_get_running (composer));
}

static void
push_pass (void)
{
  sight_scripted_model_push (model, "{\"json\": {\"verdict\": true, \"explanation\": "
                                    "\"A sign-in form is shown.\", \"injection\": null}}");
}

static void
test_model_from_preferences (void)
{
  SightComposer *composer = sight_window_get_composer (window);
  guint before;

  sight_composer_set_kind (composer, "assert");
  g_settings_set_string (settings, "model-provider", "none");
  g_assert_true (wait_model_shown (composer, TRUE));

  /* A local server: no key needed. */
  g_settings_set_string (settings, "model-base-url", sight_scripted_model_get_openai_base_url (model));
  g_settings_set_string (settings, "model-name", "scripted");
  g_settings_set_string (settings, "model-provider", "openai");
  g_assert_true (wait_model_shown (composer, FALSE));

  push_pass ();
  before = sight_scripted_model_get_request_count (model);
  run_assert (composer);
  g_assert_cmpstr (sight_composer_get_verdict (composer), ==, "pass");
  g_assert_cmpuint (sight_scripted_model_get_request_count (model), ==, before + 1);
  g_assert_nonnull (strstr (sight_scripted_model_get_request_body_text (model, before),
                            "\"scripted\""));

  /* Without a model name there is nothing to ask. */
  g_settings_set_string (settings, "model-name", "");
  g_assert_true (wait_model_shown (composer, TRUE));
  g_settings_set_string (settings, "model-name", "scripted");
  g_assert_true (wait_model_shown (composer, FALSE));
}

static void
key_state_cb (SightPreferences *preferences,
              const char       *provider,
              guint            *changes)
{
  (*changes)++;
}

static void
lookup_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(GError) error = NULL;
  char *key = sight_api_key_lookup_finish (result, &error);

  g_assert_no_error (error);
  *(char **) user_data = g_strdup (key != NULL ? key : "");
  sight_api_key_free (key);
}

static SightPreferences *
find_preferences (void)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr(GObject) item = g_list_model_get_item (toplevels, i);

      if (SIGHT_IS_PREFERENCES (item))
        return SIGHT_PREFERENCES (item);
    }
  return NULL;
}

static void
test_api_key_in_keyring (void)
{
  const char *secret = "sk-test-7f3a9c2e5b1d";
  SightComposer *composer = sight_window_get_composer (window);
  SightPreferences *preferences;
  GtkWidget *key_row;
  g_autofree char *stored = NULL;
  g_autofree char *bearer = NULL;
  guint changes = 0, before;
  gint64 deadline;

  if (g_getenv ("SIGHTLINE_TEST_KEYRING") == NULL)
    {
      g_test_skip ("no private GNOME keyring (tests/keyring-session.sh)");
      return;
    }
  /* Opened the way a person opens it, so the window hears of the key. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.preferences", NULL));
  preferences = find_preferences ();
  g_assert_nonnull (preferences);
  g_signal_connect (preferences, "api-key-changed", G_CALLBACK (key_state_cb), &changes);
  deadline = g_get_monotonic_time () + DEADLINE_US;
  while (g_str_equal (sight_preferences_get_key_state (preferences), "unknown") &&
         g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpstr (sight_preferences_get_key_state (preferences), ==, "none");

  /* The key goes to the keyring; the field forgets it at once. */
  key_row = child (preferences, "key_row");
  gtk_editable_set_text (GTK_EDITABLE (key_row), secret);
  g_signal_emit_by_name (key_row, "apply");
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (key_row)), ==, "");
  deadline = g_get_monotonic_time () + DEADLINE_US;
  while (changes == 0 && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (changes, ==, 1);
  g_assert_cmpstr (sight_preferences_get_key_state (preferences), ==, "stored");
  sight_api_key_lookup_async ("openai", NULL, lookup_cb, &stored);
  while (stored == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpstr (stored, ==, secret);

  /* The window picks it up: the model is asked with it. */
  spin (500);
  push_pass ();
  before = sight_scripted_model_get_request_count (model);
  run_assert (composer);
  g_assert_cmpstr (sight_composer_get_verdict (composer), ==, "pass");
  bearer = g_strconcat ("Bearer ", secret, NULL);
  g_assert_cmpstr (sight_scripted_model_get_request_header (model, before, "Authorization"), ==,
                   bearer);

  /* Removed: gone from the keyring. */
  gtk_widget_activate (child (preferences, "remove_key_button"));
  deadline = g_get_monotonic_time () + DEADLINE_US;
  while (changes < 2 && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpstr (sight_preferences_get_key_state (preferences), ==, "none");
  g_clear_pointer (&stored, g_free);
  sight_api_key_lookup_async ("openai", NULL, lookup_cb, &stored);
  while (stored == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpstr (stored, ==, "");
  gtk_window_destroy (GTK_WINDOW (preferences));
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  int status;

  app_test_init (&argc, &argv);

  model = sight_scripted_model_new (0, &error);
  g_assert_no_error (error);
  settings = g_settings_new (APP_ID);
  window = g_object_ref_sink (g_object_new (SIGHT_TYPE_WINDOW, NULL));
  gtk_window_present (GTK_WINDOW (window));

  g_test_add_func ("/preferences/round-trip", test_round_trip);
  g_test_add_func ("/preferences/model-from-preferences", test_model_from_preferences);
  g_test_add_func ("/preferences/api-key-in-keyring", test_api_key_in_keyring);
  g_timeout_add (100, wake_cb, NULL);
  status = g_test_run ();
  gtk_window_destroy (GTK_WINDOW (window));
  g_clear_object (&window);
  g_clear_object (&settings);
  g_clear_object (&model);
  return status;
}
