/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-preferences"

#include "config.h"

#include "sight-preferences.h"

#include <glib/gi18n.h>
#include <string.h>

#include "sight-api-key.h"
#include "sight-credentials-page.h"
#include "sight-model-provider.h"

/* Test Connection waits this long for the one answer. */
#define PROBE_TIMEOUT_MS 20000

/* The enums' nicks in the combo rows' order. */
static const char * const providers[] = { "none", "openai", "anthropic", NULL };
static const char * const visions[] = { "off", "on", "only", NULL };

struct _SightPreferences
{
  AdwPreferencesWindow parent_instance;

  /* template widgets */
  AdwComboRow         *provider_row;
  AdwEntryRow         *model_row;
  AdwEntryRow         *base_url_row;
  AdwEntryRow         *tests_base_url_row;
  AdwPasswordEntryRow *key_row;
  AdwActionRow        *key_status_row;
  GtkWidget           *remove_key_button;
  GtkSpinButton       *timeout_spin;
  GtkSpinButton       *action_timeout_spin;
  GtkSpinButton       *max_steps_spin;
  GtkSpinButton       *max_calls_spin;
  AdwComboRow         *vision_row;
  GtkSpinButton       *demo_delay_spin;
  GtkSwitch           *demo_captions_switch;
  AdwActionRow        *test_row;
  GtkSpinner          *test_spinner;
  GtkWidget           *test_button;
  SightCredentialsPage *credentials_page;

  /* owned */
  GSettings           *settings;
  GCancellable        *cancellable;         /* fired when the window closes */
  GCancellable        *lookup_cancellable;
  GCancellable        *probe_cancellable;
  SightModelProvider  *probe_provider;
  const char          *key_state;
  const char          *probe_state;
  char                *probe_text;
};

G_DEFINE_FINAL_TYPE (SightPreferences, sight_preferences, ADW_TYPE_PREFERENCES_WINDOW)

enum { API_KEY_CHANGED, CREDENTIALS_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* Mappings between the settings and the rows --------------------------- */

static gboolean
nick_to_index (GValue   *value,
               GVariant *variant,
               gpointer  user_data)
{
  const char * const *nicks = user_data;
  const char *nick = g_variant_get_string (variant, NULL);

  for (guint i = 0; nicks[i] != NULL; i++)
    if (g_str_equal (nicks[i], nick))
      {
        g_value_set_uint (value, i);
        return TRUE;
      }
  return FALSE;
}

static GVariant *
index_to_nick (const GValue       *value,
               const GVariantType *type,
               gpointer            user_data)
{
  const char * const *nicks = user_data;
  guint index = g_value_get_uint (value);

  if (index >= g_strv_length ((char **) nicks))
    return NULL;
  return g_variant_new_string (nicks[index]);
}

static gboolean
ms_to_seconds (GValue   *value,
               GVariant *variant,
               gpointer  user_data)
{
  g_value_set_double (value, g_variant_get_uint32 (variant) / 1000.0);
  return TRUE;
}

static GVariant *
seconds_to_ms (const GValue       *value,
               const GVariantType *type,
               gpointer            user_data)
{
  return g_variant_new_uint32 ((guint32) (g_value_get_double (value) * 1000.0 + 0.5));
}

/* The API key ----------------------------------------------------------- */

static const char *
current_provider (SightPreferences *self)
{
  guint selected = adw_combo_row_get_selected (self->provider_row);

  return selected < G_N_ELEMENTS (providers) - 1 ? providers[selected] : "none";
}

static void
set_key_state (SightPreferences *self,
               const char       *state,
               const char       *detail)
{
  self->key_state = state;
  if (g_str_equal (state, "stored"))
    adw_action_row_set_subtitle (ADW_ACTION_ROW (self->key_status_row),
                                 _("A key is stored in the keyring"));
  else if (g_str_equal (state, "none"))
    adw_action_row_set_subtitle (ADW_ACTION_ROW (self->key_status_row), _("No key stored"));
  else if (g_str_equal (state, "unavailable"))
    {
      g_autofree char *text = g_strdup_printf (_("The keyring is not available: %s"),
                                               detail != NULL ? detail : "");
      g_autofree char *escaped = g_markup_escape_text (text, -1);

      adw_action_row_set_subtitle (ADW_ACTION_ROW (self->key_status_row), escaped);
    }
  else
    adw_action_row_set_subtitle (ADW_ACTION_ROW (self->key_status_row), "");
  gtk_widget_set_sensitive (self->remove_key_button, g_str_equal (state, "stored"));
}

static void
lookup_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(SightPreferences) self = user_data;
  g_autoptr(GError) error = NULL;
  char *key = sight_api_key_lookup_finish (result, &error);

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  if (error != NULL)
    set_key_state (self, "unavailable", error->message);
  else
    set_key_state (self, key != NULL ? "stored" : "none", NULL);
  sight_api_key_free (key);
}

static void
update_key_state (SightPreferences *self)
{
  const char *provider = current_provider (self);
  gboolean any = !g_str_equal (provider, "none");

  gtk_widget_set_sensitive (GTK_WIDGET (self->key_row), any);
  gtk_widget_set_sensitive (GTK_WIDGET (self->model_row), any);
  gtk_widget_set_sensitive (GTK_WIDGET (self->base_url_row), any);
  if (self->lookup_cancellable != NULL)
    g_cancellable_cancel (self->lookup_cancellable);
  g_clear_object (&self->lookup_cancellable);
  if (!any)
    {
      set_key_state (self, "none", NULL);
      return;
    }
  set_key_state (self, "unknown", NULL);
  self->lookup_cancellable = g_cancellable_new ();
  sight_api_key_lookup_async (provider, self->lookup_cancellable, lookup_cb,
                              g_object_ref (self));
}

static void
provider_changed_cb (AdwComboRow      *row,
                     GParamSpec       *pspec,
                     SightPreferences *self)
{
  update_key_state (self);
}

static void
toast (SightPreferences *self,
       const char       *message)
{
  adw_preferences_window_add_toast (ADW_PREFERENCES_WINDOW (self), adw_toast_new (message));
}

static void
store_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(SightPreferences) self = user_data;
  g_autoptr(GError) error = NULL;

  if (!sight_api_key_store_finish (result, &error))
    {
      g_autofree char *message = NULL;

      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;
      message = g_strdup_printf (_("Could not store the key in the keyring: %s"), error->message);
      toast (self, message);
      return;
    }
  toast (self, _("API key stored in the keyring"));
  set_key_state (self, "stored", NULL);
  g_signal_emit (self, signals[API_KEY_CHANGED], 0, current_provider (self));
}

static void
key_apply_cb (AdwEntryRow      *row,
              SightPreferences *self)
{
  g_autofree char *key = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (row))));
  const char *provider = current_provider (self);

  /* The field forgets the key at once; only the keyring keeps it. */
  gtk_editable_set_text (GTK_EDITABLE (row), "");
  if (*key == '\0' || g_str_equal (provider, "none"))
    {
      memset (key, 0, strlen (key));
      return;
    }
  sight_api_key_store_async (provider, key, self->cancellable, store_cb, g_object_ref (self));
  memset (key, 0, strlen (key));
}

static void
clear_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(SightPreferences) self = user_data;
  g_autoptr(GError) error = NULL;

  if (!sight_api_key_clear_finish (result, &error))
    {
      g_autofree char *message = NULL;

      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;
      message = g_strdup_printf (_("Could not remove the key: %s"), error->message);
      toast (self, message);
      return;
    }
  set_key_state (self, "none", NULL);
  g_signal_emit (self, signals[API_KEY_CHANGED], 0, current_provider (self));
}

static void
remove_key_cb (GtkButton        *button,
               SightPreferences *self)
{
  sight_api_key_clear_async (current_provider (self), self->cancellable, clear_cb,
                             g_object_ref (self));
}

/* Test connection --------------------------------------------------------- */

static void
set_probe_state (SightPreferences *self,
                 const char       *state,
                 const char       *text)
{
  const char *classes[] = { "success", "error" };
  g_autofree char *escaped = g_markup_escape_text (text != NULL ? text : "", -1);

  self->probe_state = state;
  g_free (self->probe_text);
  self->probe_text = g_strdup (text);
  adw_action_row_set_subtitle (self->test_row, escaped);
  for (guint i = 0; i < G_N_ELEMENTS (classes); i++)
    gtk_widget_remove_css_class (GTK_WIDGET (self->test_row), classes[i]);
  if (g_str_equal (state, "ok") || g_str_equal (state, "failed"))
    gtk_widget_add_css_class (GTK_WIDGET (self->test_row),
                              g_str_equal (state, "ok") ? "success" : "error");
  gtk_spinner_set_spinning (self->test_spinner, g_str_equal (state, "running"));
  gtk_widget_set_sensitive (self->test_button, !g_str_equal (state, "running"));
}

/* Whether @base_url is Ollama's (its default port, or its name). */
static gboolean
looks_like_ollama (const char *base_url)
{
  g_autoptr(GUri) uri = g_uri_parse (base_url, G_URI_FLAGS_NONE, NULL);

  return uri != NULL && (g_uri_get_port (uri) == 11434 ||
                         strstr (g_uri_get_host (uri) != NULL ? g_uri_get_host (uri) : "",
                                 "ollama") != NULL);
}

/* What the probe found, in plain words: which setting to look at. */
static char *
describe_probe (SightModelProvider    *provider,
                const SightModelProbe *probe)
{
  const char *base_url = sight_model_provider_get_base_url (provider);

  switch (probe->outcome)
    {
    case SIGHT_MODEL_PROBE_OK:
      /* Translators: a model's name, the answer's latency in milliseconds, then
       * the tokens sent and received */
      return g_strdup_printf (_("%s answered in %lld ms: %llu tokens in, %llu out"),
                              probe->model, (long long) probe->latency_ms,
                              (unsigned long long) probe->usage.input_tokens,
                              (unsigned long long) probe->usage.output_tokens);
    case SIGHT_MODEL_PROBE_KEY_REFUSED:
      return g_strdup_printf (_("The endpoint refused the API key (HTTP %u): store a valid key "
                                "above."), probe->http_status);
    case SIGHT_MODEL_PROBE_MODEL_NOT_FOUND:
      return g_strdup_printf (_("The endpoint does not know the model “%s” (HTTP 404): check the "
                                "model name."), sight_model_provider_get_model (provider));
    case SIGHT_MODEL_PROBE_UNREACHABLE:
      if (looks_like_ollama (base_url))
        return g_strdup_printf (_("Nothing answers at %s: Ollama is not running. Start it "
                                  "(“ollama serve”) or check the base URL."), base_url);
      return g_strdup_printf (_("Nothing answers at %s: check the base URL."), base_url);
    case SIGHT_MODEL_PROBE_TIMEOUT:
      return g_strdup_printf (_("No answer from %s within %u seconds."), base_url,
                              PROBE_TIMEOUT_MS / 1000);
    case SIGHT_MODEL_PROBE_FAILED:
    default:
      return g_strdup_printf (_("The model did not answer: %s"), probe->message);
    }
}

static void
probe_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(SightPreferences) self = user_data;
  SightModelProvider *provider = SIGHT_MODEL_PROVIDER (source);
  g_autoptr(SightModelProbe) probe = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;

  probe = sight_model_provider_probe_finish (provider, result, &error);
  if (probe == NULL)
    return;  /* cancelled: the window closed or another test began */
  text = describe_probe (provider, probe);
  set_probe_state (self, probe->outcome == SIGHT_MODEL_PROBE_OK ? "ok" : "failed", text);
}

static void
probe_key_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(SightPreferences) self = user_data;
  g_autoptr(GError) error = NULL;
  char *key = sight_api_key_lookup_finish (result, &error);

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      sight_api_key_free (key);
      return;
    }
  /* No keyring: a local server needs no key. */
  g_clear_error (&error);
  g_clear_object (&self->probe_provider);
  self->probe_provider = sight_api_key_new_provider (self->settings, key, &error);
  sight_api_key_free (key);
  if (self->probe_provider == NULL)
    {
      set_probe_state (self, "failed", error->message);
      return;
    }
  sight_model_provider_probe_async (self->probe_provider, PROBE_TIMEOUT_MS,
                                    self->probe_cancellable, probe_cb, g_object_ref (self));
}

static void
test_connection_cb (SightPreferences *self)
{
  if (self->probe_cancellable != NULL)
    g_cancellable_cancel (self->probe_cancellable);
  g_clear_object (&self->probe_cancellable);
  if (g_str_equal (current_provider (self), "none"))
    {
      set_probe_state (self, "failed", _("Choose a provider first."));
      return;
    }
  self->probe_cancellable = g_cancellable_new ();
  g_signal_connect_object (self->cancellable, "cancelled", G_CALLBACK (g_cancellable_cancel),
                           self->probe_cancellable, G_CONNECT_SWAPPED);
  set_probe_state (self, "running", _("Asking the model…"));
  sight_api_key_lookup_async (current_provider (self), self->probe_cancellable, probe_key_cb,
                              g_object_ref (self));
}

static void
credentials_changed_cb (SightCredentialsPage *page,
                        SightPreferences     *self)
{
  g_signal_emit (self, signals[CREDENTIALS_CHANGED], 0);
}

/* Life cycle -------------------------------------------------------------- */

static void
sight_preferences_dispose (GObject *object)
{
  SightPreferences *self = SIGHT_PREFERENCES (object);

  g_cancellable_cancel (self->cancellable);
  if (self->lookup_cancellable != NULL)
    g_cancellable_cancel (self->lookup_cancellable);
  g_clear_object (&self->lookup_cancellable);
  g_clear_object (&self->probe_cancellable);
  g_clear_object (&self->probe_provider);
  g_clear_object (&self->settings);
  G_OBJECT_CLASS (sight_preferences_parent_class)->dispose (object);
}

static void
sight_preferences_finalize (GObject *object)
{
  g_clear_object (&SIGHT_PREFERENCES (object)->cancellable);
  g_free (SIGHT_PREFERENCES (object)->probe_text);
  G_OBJECT_CLASS (sight_preferences_parent_class)->finalize (object);
}

static void
sight_preferences_class_init (SightPreferencesClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sight_preferences_dispose;
  object_class->finalize = sight_preferences_finalize;

  /**
   * SightPreferences::api-key-changed:
   * @provider: the provider whose key was stored or removed
   */
  signals[API_KEY_CHANGED] = g_signal_new ("api-key-changed", G_TYPE_FROM_CLASS (klass),
                                           G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                           G_TYPE_NONE, 1, G_TYPE_STRING);
  /* The project file's credentials were written. */
  signals[CREDENTIALS_CHANGED] = g_signal_new ("credentials-changed", G_TYPE_FROM_CLASS (klass),
                                               G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                               G_TYPE_NONE, 0);

  g_type_ensure (SIGHT_TYPE_CREDENTIALS_PAGE);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/dev/sightline/Sightline/sight-preferences.ui");
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, SightPreferences, name)
  BIND (provider_row);
  BIND (model_row);
  BIND (base_url_row);
  BIND (tests_base_url_row);
  BIND (key_row);
  BIND (key_status_row);
  BIND (remove_key_button);
  BIND (timeout_spin);
  BIND (action_timeout_spin);
  BIND (max_steps_spin);
  BIND (max_calls_spin);
  BIND (vision_row);
  BIND (demo_delay_spin);
  BIND (demo_captions_switch);
  BIND (test_row);
  BIND (test_spinner);
  BIND (test_button);
  BIND (credentials_page);
#undef BIND
  gtk_widget_class_bind_template_callback (widget_class, test_connection_cb);
  gtk_widget_class_bind_template_callback (widget_class, provider_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, key_apply_cb);
  gtk_widget_class_bind_template_callback (widget_class, remove_key_cb);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
}

static void
sight_preferences_init (SightPreferences *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->cancellable = g_cancellable_new ();
  self->key_state = "unknown";
  self->probe_state = "idle";
  g_signal_connect_object (self->credentials_page, "changed",
                           G_CALLBACK (credentials_changed_cb), self, 0);
}

SightPreferences *
sight_preferences_new (GtkWindow *parent,
                       GSettings *settings)
{
  SightPreferences *self;

  g_return_val_if_fail (G_IS_SETTINGS (settings), NULL);

  self = g_object_new (SIGHT_TYPE_PREFERENCES, "transient-for", parent, "modal", TRUE, NULL);
  self->settings = g_object_ref (settings);
  g_settings_bind_with_mapping (settings, "model-provider", self->provider_row, "selected",
                                G_SETTINGS_BIND_DEFAULT, nick_to_index, index_to_nick,
                                (gpointer) providers, NULL);
  g_settings_bind (settings, "model-name", self->model_row, "text", G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (settings, "model-base-url", self->base_url_row, "text",
                   G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (settings, "tests-base-url", self->tests_base_url_row, "text",
                   G_SETTINGS_BIND_DEFAULT);
  g_settings_bind_with_mapping (settings, "default-timeout", self->timeout_spin, "value",
                                G_SETTINGS_BIND_DEFAULT, ms_to_seconds, seconds_to_ms, NULL, NULL);
  g_settings_bind_with_mapping (settings, "default-action-timeout", self->action_timeout_spin,
                                "value", G_SETTINGS_BIND_DEFAULT, ms_to_seconds, seconds_to_ms,
                                NULL, NULL);
  g_settings_bind (settings, "default-max-steps", self->max_steps_spin, "value",
                   G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (settings, "default-max-model-calls", self->max_calls_spin, "value",
                   G_SETTINGS_BIND_DEFAULT);
  g_settings_bind_with_mapping (settings, "default-vision", self->vision_row, "selected",
                                G_SETTINGS_BIND_DEFAULT, nick_to_index, index_to_nick,
                                (gpointer) visions, NULL);
  g_settings_bind (settings, "demo-slow-motion", self->demo_delay_spin, "value",
                   G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (settings, "demo-captions", self->demo_captions_switch, "active",
                   G_SETTINGS_BIND_DEFAULT);
  update_key_state (self);
  return self;
}

const char *
sight_preferences_get_key_state (SightPreferences *self)
{
  g_return_val_if_fail (SIGHT_IS_PREFERENCES (self), NULL);
  return self->key_state;
}

void
sight_preferences_set_project_path (SightPreferences *self,
                                    const char       *path)
{
  g_return_if_fail (SIGHT_IS_PREFERENCES (self));
  sight_credentials_page_set_project_path (self->credentials_page, path);
}

const char *
sight_preferences_get_probe_state (SightPreferences *self,
                                   const char      **text)
{
  g_return_val_if_fail (SIGHT_IS_PREFERENCES (self), NULL);
  if (text != NULL)
    *text = self->probe_text;
  return self->probe_state;
}
