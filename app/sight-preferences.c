/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-preferences"

#include "config.h"

#include "sight-preferences.h"

#include <glib/gi18n.h>
#include <string.h>

#include "sight-api-key.h"

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

  /* owned */
  GSettings           *settings;
  GCancellable        *cancellable;
  GCancellable        *lookup_cancellable;
  const char          *key_state;
};

G_DEFINE_FINAL_TYPE (SightPreferences, sight_preferences, ADW_TYPE_PREFERENCES_WINDOW)

enum { API_KEY_CHANGED, N_SIGNALS };
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

/* Life cycle -------------------------------------------------------------- */

static void
sight_preferences_dispose (GObject *object)
{
  SightPreferences *self = SIGHT_PREFERENCES (object);

  g_cancellable_cancel (self->cancellable);
  if (self->lookup_cancellable != NULL)
    g_cancellable_cancel (self->lookup_cancellable);
  g_clear_object (&self->lookup_cancellable);
  g_clear_object (&self->settings);
  G_OBJECT_CLASS (sight_preferences_parent_class)->dispose (object);
}

static void
sight_preferences_finalize (GObject *object)
{
  g_clear_object (&SIGHT_PREFERENCES (object)->cancellable);
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
#undef BIND
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
