/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-api-key"

#include "config.h"

#include "sight-api-key.h"

#include <glib/gi18n.h>
#include <libsecret/secret.h>

#include "sight-error.h"
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

static void
store_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;

  if (secret_password_store_finish (result, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

void
sight_api_key_store_async (const char          *provider,
                           const char          *key,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);
  /* Translators: the keyring item's label; %s is a provider, e.g. "openai" */
  g_autofree char *label = g_strdup_printf (_("Sightline API key for %s"), provider);

  g_task_set_source_tag (task, sight_api_key_store_async);
  secret_password_store (api_key_schema (), SECRET_COLLECTION_DEFAULT, label, key, cancellable,
                         store_cb, task, "provider", provider, NULL);
}

gboolean
sight_api_key_store_finish (GAsyncResult  *result,
                            GError       **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
lookup_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  char *key = secret_password_lookup_finish (result, &error);

  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, key, (GDestroyNotify) secret_password_free);
}

void
sight_api_key_lookup_async (const char          *provider,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);

  g_task_set_source_tag (task, sight_api_key_lookup_async);
  secret_password_lookup (api_key_schema (), cancellable, lookup_cb, task,
                          "provider", provider, NULL);
}

char *
sight_api_key_lookup_finish (GAsyncResult  *result,
                             GError       **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
clear_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;

  secret_password_clear_finish (result, &error);
  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

void
sight_api_key_clear_async (const char          *provider,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);

  g_task_set_source_tag (task, sight_api_key_clear_async);
  secret_password_clear (api_key_schema (), cancellable, clear_cb, task,
                         "provider", provider, NULL);
}

gboolean
sight_api_key_clear_finish (GAsyncResult  *result,
                            GError       **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

void
sight_api_key_free (char *key)
{
  if (key != NULL)
    secret_password_free (key);
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
