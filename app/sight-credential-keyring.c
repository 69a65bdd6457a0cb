/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-credential-keyring"

#include "config.h"

#include "sight-credential-keyring.h"

#include <glib/gi18n.h>
#include <string.h>

#include "sight-error.h"
#include "sight-keyring.h"

GHashTable *
sight_credential_keyring_attributes (const char *name)
{
  GHashTable *attributes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

  g_return_val_if_fail (name != NULL && *name != '\0', attributes);

  g_hash_table_insert (attributes, g_strdup ("application"), g_strdup (APP_ID));
  g_hash_table_insert (attributes, g_strdup ("credential"), g_strdup (name));
  return attributes;
}

gboolean
sight_credential_keyring_is_own (const SightCredential *cred)
{
  g_return_val_if_fail (cred != NULL, FALSE);

  return cred->source == SIGHT_CREDENTIAL_SOURCE_KEYRING && cred->keyring_attributes != NULL &&
         g_strcmp0 (g_hash_table_lookup (cred->keyring_attributes, "application"), APP_ID) == 0;
}

static GHashTable *
attributes_of (const SightCredential *cred)
{
  if (cred->source == SIGHT_CREDENTIAL_SOURCE_KEYRING && cred->keyring_attributes != NULL &&
      g_hash_table_size (cred->keyring_attributes) > 0)
    return g_hash_table_ref (cred->keyring_attributes);
  return sight_credential_keyring_attributes (cred->name);
}

static gboolean
same_attributes (GHashTable *a,
                 GHashTable *b)
{
  GHashTableIter iter;
  gpointer key, value;

  if (g_hash_table_size (a) != g_hash_table_size (b))
    return FALSE;
  g_hash_table_iter_init (&iter, a);
  while (g_hash_table_iter_next (&iter, &key, &value))
    if (g_strcmp0 (value, g_hash_table_lookup (b, key)) != 0)
      return FALSE;
  return TRUE;
}

void
sight_credential_keyring_store_async (const SightCredential *cred,
                                      const char            *value,
                                      GCancellable          *cancellable,
                                      GAsyncReadyCallback    callback,
                                      gpointer               user_data)
{
  g_autoptr(GHashTable) attributes = NULL;
  g_autofree char *label = NULL;

  g_return_if_fail (cred != NULL && cred->name != NULL);
  g_return_if_fail (value != NULL);

  attributes = attributes_of (cred);
  /* Translators: the keyring item's label; %s is a credential, e.g. "member.password" */
  label = g_strdup_printf (_("Sightline credential %s"), cred->name);
  /* No schema: the project file names the item by its attributes alone. */
  sight_keyring_store_async (NULL, attributes, label, value, 0, cancellable, callback,
                             user_data);
}

gboolean
sight_credential_keyring_store_finish (GAsyncResult  *result,
                                       GError       **error)
{
  return sight_keyring_store_finish (result, error);
}

void
sight_credential_keyring_clear_async (const SightCredential *cred,
                                      GCancellable          *cancellable,
                                      GAsyncReadyCallback    callback,
                                      gpointer               user_data)
{
  g_autoptr(GHashTable) attributes = NULL;

  g_return_if_fail (cred != NULL && cred->name != NULL);

  attributes = attributes_of (cred);
  sight_keyring_clear_async (NULL, attributes, 0, cancellable, callback, user_data);
}

gboolean
sight_credential_keyring_clear_finish (GAsyncResult  *result,
                                       GError       **error)
{
  return sight_keyring_clear_finish (result, error);
}

static void
has_value_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  char *value = sight_keyring_lookup_finish (result, &error);

  if (error != NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  /* Only whether there is one: the value itself is dropped unread. */
  g_task_return_int (task, value != NULL ? 1 : 0);
  sight_keyring_value_free (value);
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
  sight_keyring_lookup_async (NULL, attributes, 0, cancellable, has_value_cb, task);
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

/* Saving a credential: its value to the keyring, then the project file ---
 *
 * A rename that changes the keyring item (the app's own attributes name the
 * credential) moves the value: it is stored under the new attributes first,
 * then the file is written (the one step that commits), then the old item is
 * removed. A keyring that refuses the new item leaves everything as it was;
 * a file that cannot be written removes the new item again. */

typedef struct
{
  char            *project_path;
  SightCredential *old;       /* the credential replaced, or NULL */
  SightCredential *cred;
  gboolean         stored;    /* a new item is in the keyring under cred's attributes */
  gboolean         moving;    /* the old item goes once the file names the new one */
  GError          *error;     /* the file's, while the new item is removed again */
} Save;

static void
save_free (Save *save)
{
  g_free (save->project_path);
  g_clear_pointer (&save->old, sight_credential_free);
  sight_credential_free (save->cred);
  g_clear_error (&save->error);
  g_free (save);
}

/* The item the credential no longer uses is gone: the old one once the file
 * names the new one, or the new one again when the file could not be
 * written (save->error). One left behind is only warned about. */
static void
item_cleared_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  Save *save = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;

  if (!sight_keyring_clear_finish (result, &error))
    g_warning ("credential %s: a keyring item it no longer uses stays: %s", save->cred->name,
               error->message);
  if (save->error != NULL)
    g_task_return_error (task, g_steal_pointer (&save->error));
  else
    g_task_return_boolean (task, TRUE);
}

static void
write_file_thread (GTask        *task,
                   gpointer      source,
                   gpointer      task_data,
                   GCancellable *cancellable)
{
  Save *save = task_data;
  GError *error = NULL;

  if (sight_project_file_replace_credential (save->project_path,
                                             save->old != NULL ? save->old->name : NULL,
                                             save->cred, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void
file_written_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  Save *save = g_task_get_task_data (task);
  GError *error = NULL;

  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      if (save->stored && save->moving)
        {
          g_autoptr(GHashTable) attributes = attributes_of (save->cred);

          save->error = error;
          sight_keyring_clear_async (NULL, attributes, 0, NULL, item_cleared_cb,
                                     g_steal_pointer (&task));
          return;
        }
      g_task_return_error (task, error);
      return;
    }
  if (save->moving)
    {
      g_autoptr(GHashTable) attributes = attributes_of (save->old);

      sight_keyring_clear_async (NULL, attributes, 0, NULL, item_cleared_cb,
                                 g_steal_pointer (&task));
      return;
    }
  g_task_return_boolean (task, TRUE);
}

static void
write_file (GTask *task)
{
  /* Not cancellable: once started, the write is the commit, and what
   * follows it must know whether it happened. */
  GTask *write = g_task_new (NULL, NULL, file_written_cb, task);

  g_task_set_task_data (write, g_task_get_task_data (task), NULL);
  g_task_run_in_thread (write, write_file_thread);
  g_object_unref (write);
}

static void
save_stored_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  GTask *task = user_data;
  Save *save = g_task_get_task_data (task);
  GError *error = NULL;

  if (!sight_credential_keyring_store_finish (result, &error))
    {
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  save->stored = TRUE;
  write_file (task);
}

static void
old_value_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  GTask *task = user_data;
  Save *save = g_task_get_task_data (task);
  GError *error = NULL;
  char *value = sight_keyring_lookup_finish (result, &error);

  if (value == NULL)
    {
      if (error == NULL)
        error = g_error_new (SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE,
                             "the keyring holds no value for %s: enter one", save->old->name);
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  sight_credential_keyring_store_async (save->cred, value, g_task_get_cancellable (task),
                                        save_stored_cb, task);
  sight_keyring_value_free (value);
}

void
sight_credential_replace_async (const char            *project_path,
                                const SightCredential *old,
                                const SightCredential *cred,
                                const char            *value,
                                GCancellable          *cancellable,
                                GAsyncReadyCallback    callback,
                                gpointer               user_data)
{
  GTask *task;
  Save *save;

  g_return_if_fail (project_path != NULL);
  g_return_if_fail (cred != NULL && cred->name != NULL);

  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_credential_replace_async);
  save = g_new0 (Save, 1);
  save->project_path = g_strdup (project_path);
  save->old = old != NULL ? sight_credential_copy (old) : NULL;
  save->cred = sight_credential_copy (cred);
  if (save->cred->source == SIGHT_CREDENTIAL_SOURCE_KEYRING &&
      save->cred->keyring_attributes == NULL)
    save->cred->keyring_attributes = sight_credential_keyring_attributes (cred->name);
  if (save->old != NULL && save->old->source == SIGHT_CREDENTIAL_SOURCE_KEYRING &&
      save->cred->source == SIGHT_CREDENTIAL_SOURCE_KEYRING)
    {
      g_autoptr(GHashTable) before = attributes_of (save->old);

      save->moving = !same_attributes (before, save->cred->keyring_attributes);
    }
  g_task_set_task_data (task, save, (GDestroyNotify) save_free);
  if (value != NULL && *value != '\0')
    sight_credential_keyring_store_async (save->cred, value, cancellable, save_stored_cb, task);
  else if (save->moving)
    {
      g_autoptr(GHashTable) before = attributes_of (save->old);

      sight_keyring_lookup_async (NULL, before, 0, cancellable, old_value_cb, task);
    }
  else
    write_file (task);
}

void
sight_credential_save_async (const char            *project_path,
                             const SightCredential *cred,
                             const char            *value,
                             GCancellable          *cancellable,
                             GAsyncReadyCallback    callback,
                             gpointer               user_data)
{
  sight_credential_replace_async (project_path, NULL, cred, value, cancellable, callback,
                                  user_data);
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
