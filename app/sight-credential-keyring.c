/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-credential-keyring"

#include "config.h"

#include "sight-credential-keyring.h"

#include <glib/gi18n.h>
#include <libsecret/secret.h>
#include <string.h>

#include "sight-error.h"

GHashTable *
sight_credential_keyring_attributes (const char *name)
{
  GHashTable *attributes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

  g_return_val_if_fail (name != NULL && *name != '\0', attributes);

  g_hash_table_insert (attributes, g_strdup ("application"), g_strdup (APP_ID));
  g_hash_table_insert (attributes, g_strdup ("credential"), g_strdup (name));
  return attributes;
}

/* A step is about to fill the credential: its value, read from the keyring
 * (a short D-Bus exchange with the Secret Service). No schema: the
 * project file names the item by its attributes alone. */
static char *
keyring_resolve (const SightCredential  *cred,
                 gpointer                user_data,
                 GError                **error)
{
  g_autoptr(GError) local = NULL;
  SecretValue *value;
  char *text = NULL;

  if (cred->keyring_attributes == NULL || g_hash_table_size (cred->keyring_attributes) == 0)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE,
                   "credential %s names no keyring attributes", cred->name);
      return NULL;
    }
  value = secret_service_lookup_sync (NULL, NULL, cred->keyring_attributes, NULL, &local);
  if (value == NULL)
    {
      if (local != NULL)
        g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE,
                     "the keyring did not answer: %s", local->message);
      return NULL;
    }
  text = g_strdup (secret_value_get_text (value));
  secret_value_unref (value);
  return text;
}

void
sight_credential_keyring_install (void)
{
  sight_secrets_set_default_keyring_resolver (keyring_resolve, NULL);
}

static GHashTable *
attributes_of (const SightCredential *cred)
{
  if (cred->source == SIGHT_CREDENTIAL_SOURCE_KEYRING && cred->keyring_attributes != NULL &&
      g_hash_table_size (cred->keyring_attributes) > 0)
    return g_hash_table_ref (cred->keyring_attributes);
  return sight_credential_keyring_attributes (cred->name);
}

static void
store_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;

  if (secret_service_store_finish (NULL, result, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

void
sight_credential_keyring_store_async (const SightCredential *cred,
                                      const char            *value,
                                      GCancellable          *cancellable,
                                      GAsyncReadyCallback    callback,
                                      gpointer               user_data)
{
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);
  g_autoptr(GHashTable) attributes = NULL;
  g_autofree char *label = NULL;
  SecretValue *secret;

  g_return_if_fail (cred != NULL && cred->name != NULL);
  g_return_if_fail (value != NULL);

  g_task_set_source_tag (task, sight_credential_keyring_store_async);
  attributes = attributes_of (cred);
  /* Translators: the keyring item's label; %s is a credential, e.g. "member.password" */
  label = g_strdup_printf (_("Sightline credential %s"), cred->name);
  secret = secret_value_new (value, -1, "text/plain");
  secret_service_store (NULL, NULL, attributes, SECRET_COLLECTION_DEFAULT, label, secret,
                        cancellable, store_cb, task);
  secret_value_unref (secret);
}

gboolean
sight_credential_keyring_store_finish (GAsyncResult  *result,
                                       GError       **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
clear_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;

  /* FALSE with no error: there was nothing to remove. */
  secret_service_clear_finish (NULL, result, &error);
  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

void
sight_credential_keyring_clear_async (const SightCredential *cred,
                                      GCancellable          *cancellable,
                                      GAsyncReadyCallback    callback,
                                      gpointer               user_data)
{
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);
  g_autoptr(GHashTable) attributes = NULL;

  g_return_if_fail (cred != NULL && cred->name != NULL);

  g_task_set_source_tag (task, sight_credential_keyring_clear_async);
  attributes = attributes_of (cred);
  secret_service_clear (NULL, NULL, attributes, cancellable, clear_cb, task);
}

gboolean
sight_credential_keyring_clear_finish (GAsyncResult  *result,
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
  SecretValue *value = secret_service_lookup_finish (NULL, result, &error);

  if (error != NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  /* Only whether there is one: the value itself is dropped unread. */
  g_task_return_int (task, value != NULL ? 1 : 0);
  if (value != NULL)
    secret_value_unref (value);
}

void
sight_credential_keyring_has_value_async (const SightCredential *cred,
                                          GCancellable          *cancellable,
                                          GAsyncReadyCallback    callback,
                                          gpointer               user_data)
{
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);
  g_autoptr(GHashTable) attributes = NULL;

  g_return_if_fail (cred != NULL && cred->name != NULL);

  g_task_set_source_tag (task, sight_credential_keyring_has_value_async);
  attributes = attributes_of (cred);
  secret_service_lookup (NULL, NULL, attributes, cancellable, lookup_cb, task);
}

gboolean
sight_credential_keyring_has_value_finish (GAsyncResult  *result,
                                           gboolean      *has_value,
                                           GError       **error)
{
  g_autoptr(GError) local = NULL;
  gssize found = g_task_propagate_int (G_TASK (result), &local);

  if (local != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  *has_value = found == 1;
  return TRUE;
}

/* Saving a credential: its value to the keyring, then the project file -- */

typedef struct
{
  char            *project_path;
  SightCredential *cred;
} Save;

static void
save_free (Save *save)
{
  g_free (save->project_path);
  sight_credential_free (save->cred);
  g_free (save);
}

static void
write_file_thread (GTask        *task,
                   gpointer      source,
                   gpointer      task_data,
                   GCancellable *cancellable)
{
  Save *save = task_data;
  GError *error = NULL;

  if (sight_project_file_set_credential (save->project_path, save->cred, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void
save_stored_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;

  if (!sight_credential_keyring_store_finish (result, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  g_task_run_in_thread (task, write_file_thread);
}

void
sight_credential_save_async (const char            *project_path,
                             const SightCredential *cred,
                             const char            *value,
                             GCancellable          *cancellable,
                             GAsyncReadyCallback    callback,
                             gpointer               user_data)
{
  g_autoptr(GTask) task = NULL;
  Save *save;

  g_return_if_fail (project_path != NULL);
  g_return_if_fail (cred != NULL && cred->name != NULL);

  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_credential_save_async);
  save = g_new0 (Save, 1);
  save->project_path = g_strdup (project_path);
  save->cred = sight_credential_copy (cred);
  if (save->cred->source == SIGHT_CREDENTIAL_SOURCE_KEYRING &&
      save->cred->keyring_attributes == NULL)
    save->cred->keyring_attributes = sight_credential_keyring_attributes (cred->name);
  g_task_set_task_data (task, save, (GDestroyNotify) save_free);
  if (value != NULL && *value != '\0')
    sight_credential_keyring_store_async (save->cred, value, cancellable, save_stored_cb,
                                          g_steal_pointer (&task));
  else
    g_task_run_in_thread (task, write_file_thread);
}

gboolean
sight_credential_save_finish (GAsyncResult  *result,
                              GError       **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

char *
sight_credential_project_path_for (GFile *test_file)
{
  g_autofree char *path = test_file != NULL ? g_file_get_path (test_file) : NULL;
  g_autofree char *dir = NULL;
  char *found;

  if (path != NULL)
    dir = g_path_get_dirname (path);
  else
    dir = g_get_current_dir ();
  found = sight_project_find (dir);
  if (found != NULL)
    return found;
  return g_build_filename (dir, SIGHT_PROJECT_FILE_NAME, NULL);
}
