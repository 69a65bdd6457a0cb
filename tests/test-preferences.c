/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-preferences"

#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <libsecret/secret.h>
#include <string.h>

#include "app-test-common.h"
#include "sight-api-key.h"
#include "sight-credential-keyring.h"
#include "sight-credentials-page.h"
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
  app_test_spin (500);
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

/* Model › Test Connection ------------------------------------------------ */

static const char *
test_connection (SightPreferences *preferences,
                 const char      **text)
{
  gint64 deadline = g_get_monotonic_time () + DEADLINE_US;
  const char *state;

  g_signal_emit_by_name (child (preferences, "test_button"), "clicked");
  g_assert_cmpstr (sight_preferences_get_probe_state (preferences, NULL), ==, "running");
  while (g_str_equal (sight_preferences_get_probe_state (preferences, NULL), "running") &&
         g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  state = sight_preferences_get_probe_state (preferences, text);
  g_test_message ("Test Connection: %s: %s", state, *text);
  return state;
}

/* A port nothing listens on: bound, then closed. */
static guint
closed_port (void)
{
  g_autoptr(GSocket) socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
                                            G_SOCKET_PROTOCOL_TCP, NULL);
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) any = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;
  guint port;

  g_assert_true (g_socket_bind (socket, any, TRUE, NULL));
  bound = g_socket_get_local_address (socket, NULL);
  port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
  g_socket_close (socket, NULL);
  return port;
}

static void
test_connection_probe (void)
{
  SightPreferences *preferences = sight_preferences_new (GTK_WINDOW (window), settings);
  g_autofree char *refused = g_strdup_printf ("http://127.0.0.1:%u/v1", closed_port ());
  const char *text = NULL;
  guint before;

  gtk_window_present (GTK_WINDOW (preferences));
  g_settings_set_string (settings, "model-base-url",
                         sight_scripted_model_get_openai_base_url (model));
  g_settings_set_string (settings, "model-name", "scripted");
  g_settings_set_string (settings, "model-provider", "openai");

  /* It answers: the model, the latency, the tokens; one real request. */
  before = sight_scripted_model_get_request_count (model);
  sight_scripted_model_push (model, "{\"text\": \"ready\", \"model\": \"scripted-2025\", "
                                    "\"usage\": {\"input\": 12, \"output\": 2}}");
  g_assert_cmpstr (test_connection (preferences, &text), ==, "ok");
  g_assert_nonnull (strstr (text, "scripted-2025"));
  g_assert_nonnull (strstr (text, " ms"));
  g_assert_nonnull (strstr (text, "12 tokens in, 2 out"));
  g_assert_cmpuint (sight_scripted_model_get_request_count (model), ==, before + 1);
  g_assert_nonnull (strstr (sight_scripted_model_get_request_body_text (model, before),
                            "\"scripted\""));

  /* The Anthropic wire format answers the same way. */
  g_settings_set_string (settings, "model-base-url",
                         sight_scripted_model_get_anthropic_base_url (model));
  g_settings_set_string (settings, "model-provider", "anthropic");
  sight_scripted_model_push (model, "{\"text\": \"ready\", \"usage\": {\"input\": 9, "
                                    "\"output\": 1}}");
  before = sight_scripted_model_get_request_count (model);
  g_assert_cmpstr (test_connection (preferences, &text), ==, "ok");
  g_assert_nonnull (strstr (text, "9 tokens in, 1 out"));
  g_assert_cmpstr (sight_scripted_model_get_request_path (model, before), ==, "/v1/messages");
  g_settings_set_string (settings, "model-provider", "openai");
  g_settings_set_string (settings, "model-base-url",
                         sight_scripted_model_get_openai_base_url (model));

  /* 401: the key. */
  sight_scripted_model_set_api_key (model, "sk-the-right-key");
  g_assert_cmpstr (test_connection (preferences, &text), ==, "failed");
  g_assert_nonnull (strstr (text, "refused the API key (HTTP 401)"));
  sight_scripted_model_set_api_key (model, NULL);

  /* 404: the model name; not retried. */
  before = sight_scripted_model_get_request_count (model);
  sight_scripted_model_push (model, "{\"status\": 404, \"error\": {\"type\": "
                                    "\"invalid_request_error\", \"code\": \"model_not_found\", "
                                    "\"message\": \"The model scripted does not exist\"}}");
  g_assert_cmpstr (test_connection (preferences, &text), ==, "failed");
  g_assert_nonnull (strstr (text, "does not know the model “scripted” (HTTP 404)"));
  g_assert_cmpuint (sight_scripted_model_get_request_count (model), ==, before + 1);

  /* Nothing listens: the base URL. */
  g_settings_set_string (settings, "model-base-url", refused);
  g_assert_cmpstr (test_connection (preferences, &text), ==, "failed");
  g_assert_nonnull (strstr (text, "Nothing answers at"));
  g_assert_nonnull (strstr (text, "check the base URL"));
  g_assert_null (strstr (text, "Ollama"));
  /* … and on Ollama's port, Ollama is not running (when nothing is on it). */
  g_settings_set_string (settings, "model-base-url", "http://127.0.0.1:11434/v1");
  if (g_str_equal (test_connection (preferences, &text), "failed") &&
      strstr (text, "Nothing answers") != NULL)
    g_assert_nonnull (strstr (text, "Ollama is not running"));

  /* A slow model and the window closes: the probe is cancelled, nothing
   * comes back to a closed window. */
  g_settings_set_string (settings, "model-base-url",
                         sight_scripted_model_get_openai_base_url (model));
  sight_scripted_model_push (model, "{\"text\": \"ready\", \"delay_ms\": 3000}");
  g_signal_emit_by_name (child (preferences, "test_button"), "clicked");
  g_assert_cmpstr (sight_preferences_get_probe_state (preferences, NULL), ==, "running");
  app_test_spin (200);
  gtk_window_destroy (GTK_WINDOW (preferences));
  app_test_spin (300);
  g_settings_set_string (settings, "model-provider", "none");
  /* the delayed answer goes to nobody */
  app_test_spin (3000);
  g_assert_true (sight_scripted_model_load_script (model, "[]", NULL));
}

/* Preferences › Credentials ------------------------------------------------ */

static GtkWidget *
find_button (GtkWidget  *root,
             const char *row_name,
             const char *tooltip)
{
  for (GtkWidget *w = gtk_widget_get_first_child (root); w != NULL;
       w = gtk_widget_get_next_sibling (w))
    {
      GtkWidget *found;

      if (GTK_IS_BUTTON (w) && g_strcmp0 (gtk_widget_get_tooltip_text (w), tooltip) == 0 &&
          gtk_widget_get_ancestor (w, ADW_TYPE_ACTION_ROW) != NULL &&
          g_str_equal (gtk_widget_get_name (gtk_widget_get_ancestor (w, ADW_TYPE_ACTION_ROW)),
                       row_name))
        return w;
      found = find_button (w, row_name, tooltip);
      if (found != NULL)
        return found;
    }
  return NULL;
}

static GtkWidget *
page_child (SightCredentialsPage *page,
            const char           *name)
{
  return GTK_WIDGET (gtk_widget_get_template_child (GTK_WIDGET (page),
                                                    SIGHT_TYPE_CREDENTIALS_PAGE, name));
}

static void
wait_not_busy (SightCredentialsPage *page)
{
  gint64 deadline = g_get_monotonic_time () + DEADLINE_US;

  app_test_spin (50);
  while (sight_credentials_page_get_busy (page) && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (sight_credentials_page_get_busy (page));
}

static char *
keyring_value (const char *name)
{
  g_autoptr(GHashTable) attributes = sight_credential_keyring_attributes (name);
  g_autoptr(GError) error = NULL;
  SecretValue *value = secret_service_lookup_sync (NULL, NULL, attributes, NULL, &error);
  char *text;

  g_assert_no_error (error);
  if (value == NULL)
    return NULL;
  text = g_strdup (secret_value_get_text (value));
  secret_value_unref (value);
  return text;
}

static void
resolved_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      data)
{
  *(GAsyncResult **) data = g_object_ref (result);
}

/* @name's value as a step reads it: from the keyring, asynchronously. */
static const char *
resolve_value (SightProject *project,
               const char   *name)
{
  SightSecrets *secrets = sight_project_get_secrets (project);
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  gint64 deadline = g_get_monotonic_time () + DEADLINE_US;
  const char *value;

  sight_secrets_resolve_async (secrets, name, "http://127.0.0.1:8765/", 5000, NULL,
                               resolved_cb, &result);
  while (result == NULL && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_nonnull (result);
  value = sight_secrets_resolve_finish (secrets, result, &error);
  g_assert_no_error (error);
  return value;
}

static void
test_credentials_page (void)
{
  const char *secret = "harbor-pw-5c81e2";
  g_autofree char *dir = g_dir_make_tmp ("sight-prefs-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "sightline.json", NULL);
  g_autofree char *text = NULL;
  g_autofree char *stored = NULL;
  g_autoptr(SightProject) project = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) names = NULL;
  SightPreferences *preferences;
  SightCredentialsPage *page;
  const SightCredential *cred;
  guint changes = 0;

  if (g_getenv ("SIGHTLINE_TEST_KEYRING") == NULL)
    {
      g_test_skip ("no private GNOME keyring (tests/keyring-session.sh)");
      return;
    }
  g_assert_true (g_file_set_contents (path, "{ \"defaults\": { \"timeout\": 45000 },\n"
                                      "  \"credentials\": { \"admin.email\": { \"purpose\": "
                                      "\"email\", \"allowedOrigins\": [\"http://a.test\"], "
                                      "\"source\": { \"env\": \"ADMIN_EMAIL\" } } } }", -1, NULL));
  preferences = sight_preferences_new (GTK_WINDOW (window), settings);
  sight_preferences_set_project_path (preferences, path);
  g_signal_connect (preferences, "credentials-changed", G_CALLBACK (key_state_cb), &changes);
  adw_preferences_window_set_visible_page_name (ADW_PREFERENCES_WINDOW (preferences),
                                                "credentials");
  gtk_window_present (GTK_WINDOW (preferences));
  page = SIGHT_CREDENTIALS_PAGE (child (preferences, "credentials_page"));

  /* The file's credentials are listed, with where their values live. */
  names = sight_credentials_page_list_names (page);
  g_assert_cmpuint (g_strv_length (names), ==, 1);
  g_assert_cmpstr (names[0], ==, "admin.email");
  g_clear_pointer (&names, g_strfreev);
  g_assert_nonnull (find_button (GTK_WIDGET (page), "admin.email", "Remove"));

  /* Bad input: nothing is written. */
  gtk_editable_set_text (GTK_EDITABLE (page_child (page, "name_row")), "member.password");
  gtk_editable_set_text (GTK_EDITABLE (page_child (page, "origins_row")), "not an origin");
  gtk_editable_set_text (GTK_EDITABLE (page_child (page, "value_row")), secret);
  g_signal_emit_by_name (page_child (page, "save_button"), "clicked");
  wait_not_busy (page);
  g_assert_cmpuint (changes, ==, 0);
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (page_child (page, "value_row"))), ==, "");

  /* Added: the value to the keyring, the credential to the file. */
  gtk_editable_set_text (GTK_EDITABLE (page_child (page, "origins_row")),
                         "http://127.0.0.1:8765");
  gtk_editable_set_text (GTK_EDITABLE (page_child (page, "value_row")), secret);
  adw_combo_row_set_selected (ADW_COMBO_ROW (page_child (page, "purpose_row")), 2);
  g_signal_emit_by_name (page_child (page, "save_button"), "clicked");
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (page_child (page, "value_row"))), ==, "");
  wait_not_busy (page);
  g_assert_cmpuint (changes, ==, 1);
  stored = keyring_value ("member.password");
  g_assert_cmpstr (stored, ==, secret);
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_null (strstr (text, secret));
  g_clear_pointer (&text, g_free);
  project = sight_project_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sight_project_get_timeout (project), ==, 45000);
  g_assert_nonnull (sight_secrets_lookup (sight_project_get_secrets (project), "admin.email"));
  cred = sight_secrets_lookup (sight_project_get_secrets (project), "member.password");
  g_assert_nonnull (cred);
  g_assert_cmpstr (cred->purpose, ==, "password");
  g_assert_cmpstr (cred->allowed_origins[0], ==, "http://127.0.0.1:8765");
  g_assert_cmpint (cred->source, ==, SIGHT_CREDENTIAL_SOURCE_KEYRING);
  g_assert_cmpstr (g_hash_table_lookup (cred->keyring_attributes, "credential"), ==,
                   "member.password");
  /* … and readable by a step, as any program reads it (sight-secrets.h). */
  g_assert_cmpstr (resolve_value (project, "member.password"), ==, secret);
  g_clear_pointer (&project, sight_project_unref);
  names = sight_credentials_page_list_names (page);
  g_assert_cmpuint (g_strv_length (names), ==, 2);
  g_clear_pointer (&names, g_strfreev);

  /* Removed: from the file and from the keyring; the other one stays. */
  g_signal_emit_by_name (find_button (GTK_WIDGET (page), "member.password", "Remove"), "clicked");
  wait_not_busy (page);
  g_assert_cmpuint (changes, ==, 2);
  g_clear_pointer (&stored, g_free);
  stored = keyring_value ("member.password");
  g_assert_null (stored);
  project = sight_project_load (path, &error);
  g_assert_no_error (error);
  g_assert_null (sight_secrets_lookup (sight_project_get_secrets (project), "member.password"));
  g_assert_nonnull (sight_secrets_lookup (sight_project_get_secrets (project), "admin.email"));

  gtk_window_destroy (GTK_WINDOW (preferences));
  g_unlink (path);
  g_rmdir (dir);
}

/* Renaming a credential in the form moves it: the project entry and the
 * keyring item take the new name and the old ones are gone. A rename that
 * cannot be written leaves the file and the keyring as they were. (The old
 * form looked the credential up by its new name, so it asked for a value, or
 * with one added a second credential and kept the first.) */
static void
test_credential_rename (void)
{
  const char *secret = "rename-pw-40b7aa";
  g_autofree char *dir = g_dir_make_tmp ("sight-rename-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "sightline.json", NULL);
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  g_autofree char *stored = NULL;
  g_autoptr(SightProject) project = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) names = NULL;
  SightPreferences *preferences;
  SightCredentialsPage *page;
  const SightCredential *cred;
  guint changes = 0;

  if (g_getenv ("SIGHTLINE_TEST_KEYRING") == NULL)
    {
      g_test_skip ("no private GNOME keyring (tests/keyring-session.sh)");
      return;
    }
  g_assert_true (g_file_set_contents (path, "{ \"credentials\": { \"admin.email\": { "
                                      "\"purpose\": \"email\", \"allowedOrigins\": "
                                      "[\"http://a.test\"], \"source\": { \"env\": "
                                      "\"ADMIN_EMAIL\" } } } }", -1, NULL));
  preferences = sight_preferences_new (GTK_WINDOW (window), settings);
  sight_preferences_set_project_path (preferences, path);
  g_signal_connect (preferences, "credentials-changed", G_CALLBACK (key_state_cb), &changes);
  adw_preferences_window_set_visible_page_name (ADW_PREFERENCES_WINDOW (preferences),
                                                "credentials");
  gtk_window_present (GTK_WINDOW (preferences));
  page = SIGHT_CREDENTIALS_PAGE (child (preferences, "credentials_page"));

  gtk_editable_set_text (GTK_EDITABLE (page_child (page, "name_row")), "member.password");
  gtk_editable_set_text (GTK_EDITABLE (page_child (page, "origins_row")),
                         "http://127.0.0.1:8765");
  gtk_editable_set_text (GTK_EDITABLE (page_child (page, "value_row")), secret);
  g_signal_emit_by_name (page_child (page, "save_button"), "clicked");
  wait_not_busy (page);
  g_assert_cmpuint (changes, ==, 1);
  stored = keyring_value ("member.password");
  g_assert_cmpstr (stored, ==, secret);
  g_clear_pointer (&stored, g_free);

  /* Edit, give it a new name, leave the value empty: the value moves. */
  g_signal_emit_by_name (find_button (GTK_WIDGET (page), "member.password", "Edit"), "clicked");
  gtk_editable_set_text (GTK_EDITABLE (page_child (page, "name_row")), "member.pw");
  g_signal_emit_by_name (page_child (page, "save_button"), "clicked");
  wait_not_busy (page);
  g_assert_cmpuint (changes, ==, 2);
  names = sight_credentials_page_list_names (page);
  g_assert_cmpuint (g_strv_length (names), ==, 2);
  g_assert_cmpstr (names[0], ==, "admin.email");
  g_assert_cmpstr (names[1], ==, "member.pw");
  g_clear_pointer (&names, g_strfreev);
  stored = keyring_value ("member.password");
  g_assert_null (stored);
  stored = keyring_value ("member.pw");
  g_assert_cmpstr (stored, ==, secret);
  g_clear_pointer (&stored, g_free);
  project = sight_project_load (path, &error);
  g_assert_no_error (error);
  g_assert_null (sight_secrets_lookup (sight_project_get_secrets (project), "member.password"));
  cred = sight_secrets_lookup (sight_project_get_secrets (project), "member.pw");
  g_assert_nonnull (cred);
  g_assert_cmpstr (cred->allowed_origins[0], ==, "http://127.0.0.1:8765");
  g_assert_cmpstr (g_hash_table_lookup (cred->keyring_attributes, "credential"), ==,
                   "member.pw");
  g_assert_cmpstr (resolve_value (project, "member.pw"), ==, secret);
  g_clear_pointer (&project, sight_project_unref);

  /* A rename onto another credential's name is refused: nothing moves. */
  g_signal_emit_by_name (find_button (GTK_WIDGET (page), "member.pw", "Edit"), "clicked");
  gtk_editable_set_text (GTK_EDITABLE (page_child (page, "name_row")), "admin.email");
  g_signal_emit_by_name (page_child (page, "save_button"), "clicked");
  wait_not_busy (page);
  g_assert_cmpuint (changes, ==, 2);
  stored = keyring_value ("member.pw");
  g_assert_cmpstr (stored, ==, secret);
  g_clear_pointer (&stored, g_free);

  /* The file cannot be rewritten (someone broke it since it was read): the
   * new keyring item is removed again, the old one and the file stay. */
  g_signal_emit_by_name (find_button (GTK_WIDGET (page), "member.pw", "Edit"), "clicked");
  gtk_editable_set_text (GTK_EDITABLE (page_child (page, "name_row")), "member.secret");
  g_assert_true (g_file_get_contents (path, &before, NULL, NULL));
  g_assert_true (g_file_set_contents (path, "{ \"credentials\": ", -1, NULL));
  g_signal_emit_by_name (page_child (page, "save_button"), "clicked");
  wait_not_busy (page);
  g_assert_cmpuint (changes, ==, 2);
  stored = keyring_value ("member.secret");
  g_assert_null (stored);
  stored = keyring_value ("member.pw");
  g_assert_cmpstr (stored, ==, secret);
  g_clear_pointer (&stored, g_free);
  g_assert_true (g_file_get_contents (path, &after, NULL, NULL));
  g_assert_cmpstr (after, ==, "{ \"credentials\": ");

  gtk_window_destroy (GTK_WINDOW (preferences));
  g_unlink (path);
  g_rmdir (dir);
}

/* A model step with no model: the blocked message opens Preferences on
 * the Model page. */
static void
test_blocked_links_to_model (void)
{
  SightComposer *composer = sight_window_get_composer (window);
  SightPreferences *preferences;

  g_settings_set_string (settings, "model-provider", "none");
  sight_composer_set_kind (composer, "assert");
  g_assert_true (wait_model_shown (composer, TRUE));
  run_assert (composer);
  g_assert_cmpstr (sight_composer_get_verdict (composer), ==, "blocked");
  g_assert_null (find_preferences ());
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.preferences-page", "s",
                                             "model"));
  preferences = find_preferences ();
  g_assert_nonnull (preferences);
  g_assert_cmpstr (adw_preferences_window_get_visible_page_name (
                     ADW_PREFERENCES_WINDOW (preferences)), ==, "model");
  gtk_window_destroy (GTK_WINDOW (preferences));
  /* the button the blocked result shows is that action */
  {
    GtkWidget *button = GTK_WIDGET (gtk_widget_get_template_child (GTK_WIDGET (composer),
                                                                   SIGHT_TYPE_COMPOSER,
                                                                   "model_preferences_button"));

    g_assert_true (gtk_widget_get_visible (button));
    g_assert_cmpstr (gtk_actionable_get_action_name (GTK_ACTIONABLE (button)), ==,
                     "win.preferences-page");
    g_signal_emit_by_name (button, "clicked");
    preferences = find_preferences ();
    g_assert_nonnull (preferences);
    g_assert_cmpstr (adw_preferences_window_get_visible_page_name (
                       ADW_PREFERENCES_WINDOW (preferences)), ==, "model");
    gtk_window_destroy (GTK_WINDOW (preferences));
  }
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
  g_test_add_func ("/preferences/test-connection", test_connection_probe);
  g_test_add_func ("/preferences/credentials", test_credentials_page);
  g_test_add_func ("/preferences/credential-rename", test_credential_rename);
  g_test_add_func ("/preferences/blocked-links-to-model", test_blocked_links_to_model);
  status = g_test_run ();
  gtk_window_destroy (GTK_WINDOW (window));
  g_clear_object (&window);
  g_clear_object (&settings);
  g_clear_object (&model);
  return status;
}
