/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-api-key"

#include "config.h"

#include "sight-api-key.h"

#include <glib/gi18n.h>

#include "sight-error.h"
#include "sight-keyring.h"
#include "sight-model-config.h"

static const SecretSchema *
api_key_schema (void)
{
  static const SecretSchema schema = {
    APP_ID ".ApiKey", SECRET_SCHEMA_NONE,
    {
      { "provider", SECRET_SCHEMA_ATTRIBUTE_STRING },
      { NULL, 0 },
    }
  };

  return &schema;
}

/* The keyring item of @provider's key. */
static GHashTable *
api_key_attributes (const char *provider)
{
  GHashTable *attributes = g_hash_table_new (g_str_hash, g_str_equal);

  g_hash_table_insert (attributes, (gpointer) "provider", (gpointer) provider);
  return attributes;
}

void
sight_api_key_store_async (const char          *provider,
                           const char          *key,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  g_autoptr(GHashTable) attributes = api_key_attributes (provider);
  /* Translators: the keyring item's label; %s is a provider, e.g. "openai" */
  g_autofree char *label = g_strdup_printf (_("Sightline API key for %s"), provider);

  sight_keyring_store_async (api_key_schema (), attributes, label, key, 0, cancellable, callback,
                             user_data);
}

gboolean
sight_api_key_store_finish (GAsyncResult  *result,
                            GError       **error)
{
  return sight_keyring_store_finish (result, error);
}

void
sight_api_key_lookup_async (const char          *provider,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  g_autoptr(GHashTable) attributes = api_key_attributes (provider);

  sight_keyring_lookup_async (api_key_schema (), attributes, 0, cancellable, callback, user_data);
}

char *
sight_api_key_lookup_finish (GAsyncResult  *result,
                             GError       **error)
{
  return sight_keyring_lookup_finish (result, error);
}

void
sight_api_key_clear_async (const char          *provider,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  g_autoptr(GHashTable) attributes = api_key_attributes (provider);

  sight_keyring_clear_async (api_key_schema (), attributes, 0, cancellable, callback, user_data);
}

gboolean
sight_api_key_clear_finish (GAsyncResult  *result,
                            GError       **error)
{
  return sight_keyring_clear_finish (result, error);
}

void
sight_api_key_free (char *key)
{
  sight_keyring_value_free (key);
}

SightModelProvider *
sight_api_key_new_provider (GSettings   *settings,
                            const char  *key,
                            GError     **error)
{
  g_autofree char *provider_name = g_settings_get_string (settings, "model-provider");
  g_autofree char *model = g_strstrip (g_settings_get_string (settings, "model-name"));
  g_autofree char *base_url = g_strstrip (g_settings_get_string (settings, "model-base-url"));
  g_autofree char *name = NULL;

  if (g_str_equal (provider_name, "none"))
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE,
                           _("Choose a provider in Preferences."));
      return NULL;
    }
  if (*model == '\0')
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE,
                           _("Choose a model name in Preferences."));
      return NULL;
    }
  name = g_strdup_printf ("%s:%s", provider_name, model);
  return sight_model_provider_new_for_name (name, *base_url != '\0' ? base_url : NULL, key,
                                            error);
}
