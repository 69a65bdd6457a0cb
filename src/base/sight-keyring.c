/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-keyring"

#include "config.h"

#include "sight-keyring.h"

#include <string.h>

#include "sight-error.h"

typedef enum {
  OP_STORE,
  OP_LOOKUP,
  OP_CLEAR,
} OpKind;

/* One call to the Secret Service, under its deadline. libsecret sees @inner,
 * which the caller's cancellable and the deadline both cancel. The call
 * finishes when either fires, without waiting for libsecret to answer: a
 * cancelled unlock prompt (a locked keyring) can leave its operation never
 * finishing. An answer that comes after that is dropped. */
typedef struct {
  OpKind        kind;
  guint         timeout_ms;
  gboolean      returned;
  gboolean      locked;        /* a lookup's items are all locked */
  GTask        *task;          /* borrowed: the task owns this Op */
  const SecretSchema *schema;  /* a lookup's, until it is asked */
  GHashTable   *attributes;
  GCancellable *inner;
  GSource      *deadline;
  GSource      *cancelled;     /* of the caller's cancellable */
} Op;

static void
clear_source (GSource **source)
{
  if (*source == NULL)
    return;
  g_source_destroy (*source);
  g_clear_pointer (source, g_source_unref);
}

static void
op_stop (Op *op)
{
  clear_source (&op->deadline);
  clear_source (&op->cancelled);
}

static void
op_free (Op *op)
{
  op_stop (op);
  g_clear_object (&op->inner);
  g_clear_pointer (&op->attributes, g_hash_table_unref);
  g_free (op);
}

/* Finishes the call with @error (taken) before libsecret answers. */
static void
op_give_up (Op     *op,
            GError *error)
{
  GTask *task = op->task;

  op->returned = TRUE;
  op_stop (op);
  g_cancellable_cancel (op->inner);
  g_task_return_error (task, error);
}

static gboolean
deadline_cb (gpointer data)
{
  Op *op = data;

  if (op->locked)
    op_give_up (op, g_error_new (SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE,
                                 "the keyring is locked and was not unlocked within %u ms",
                                 op->timeout_ms));
  else
    op_give_up (op, g_error_new (SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE,
                                 "the keyring did not answer within %u ms", op->timeout_ms));
  return G_SOURCE_REMOVE;
}

static gboolean
cancelled_cb (GCancellable *cancellable,
              gpointer      data)
{
  Op *op = data;

  op_give_up (op, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                       "the keyring call was cancelled"));
  return G_SOURCE_REMOVE;
}

static GSource *
op_attach (Op          *op,
           GSource     *source,
           GSourceFunc  callback,
           const char  *name)
{
  g_source_set_static_name (source, name);
  g_source_set_callback (source, callback, op, NULL);
  g_source_attach (source, g_task_get_context (op->task));
  return source;
}

static GTask *
op_start (OpKind               kind,
          guint                timeout_ms,
          GCancellable        *cancellable,
          GAsyncReadyCallback  callback,
          gpointer             user_data,
          gpointer             source_tag)
{
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);
  Op *op = g_new0 (Op, 1);

  g_task_set_source_tag (task, source_tag);
  op->kind = kind;
  op->task = task;
  op->timeout_ms = timeout_ms > 0 ? timeout_ms : SIGHT_KEYRING_TIMEOUT_MS;
  op->inner = g_cancellable_new ();
  g_task_set_task_data (task, op, (GDestroyNotify) op_free);
  op->deadline = op_attach (op, g_timeout_source_new (op->timeout_ms), deadline_cb,
                            "[sightline] keyring deadline");
  if (cancellable != NULL)
    op->cancelled = op_attach (op, g_cancellable_source_new (cancellable),
                               G_SOURCE_FUNC (cancelled_cb),
                               "[sightline] keyring cancelled");
  return task;
}

/* The value's text, copied so that it is freed like every other value
 * (wiped, then g_free); NULL when the item holds no UTF-8 text. */
static char *
value_text (SecretValue *value)
{
  gsize len = 0;
  const char *bytes = secret_value_get (value, &len);

  if (bytes == NULL || len == 0 || memchr (bytes, '\0', len) != NULL ||
      !g_utf8_validate (bytes, len, NULL))
    return NULL;
  return g_strndup (bytes, len);
}

static void
done_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  Op *op = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  SecretValue *value = NULL;
  char *text = NULL;

  switch (op->kind)
    {
    case OP_STORE:
      secret_service_store_finish (NULL, result, &error);
      break;
    case OP_LOOKUP:
      value = secret_service_lookup_finish (NULL, result, &error);
      break;
    case OP_CLEAR:
      /* FALSE with no error: there was nothing to remove. */
      secret_service_clear_finish (NULL, result, &error);
      break;
    default:
      g_assert_not_reached ();
    }
  op_stop (op);

  /* Told already: the deadline or the caller's cancellable came first. */
  if (op->returned)
    {
      g_clear_pointer (&value, secret_value_unref);
      return;
    }
  if (error != NULL)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_task_return_error (task, g_steal_pointer (&error));
      else
        {
          g_dbus_error_strip_remote_error (error);
          g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE,
                                   "the keyring is not available: %s", error->message);
        }
      return;
    }
  if (op->kind != OP_LOOKUP)
    {
      g_task_return_boolean (task, TRUE);
      return;
    }
  /* An unlock that was refused or could not be asked (no prompter). */
  if (value == NULL && op->locked)
    {
      g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE,
                               "the keyring is locked, and it was not unlocked");
      return;
    }
  if (value != NULL)
    {
      text = value_text (value);
      secret_value_unref (value);
      if (text == NULL)
        {
          g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE,
                                   "the keyring item holds no text");
          return;
        }
    }
  g_task_return_pointer (task, text, (GDestroyNotify) sight_keyring_value_free);
}

void
sight_keyring_store_async (const SecretSchema  *schema,
                           GHashTable          *attributes,
                           const char          *label,
                           const char          *value,
                           guint                timeout_ms,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  GTask *task;
  SecretValue *secret;

  g_return_if_fail (attributes != NULL && g_hash_table_size (attributes) > 0);
  g_return_if_fail (label != NULL);
  g_return_if_fail (value != NULL);

  task = op_start (OP_STORE, timeout_ms, cancellable, callback, user_data,
                   sight_keyring_store_async);
  secret = secret_value_new (value, -1, "text/plain");
  secret_service_store (NULL, schema, attributes, SECRET_COLLECTION_DEFAULT, label, secret,
                        ((Op *) g_task_get_task_data (task))->inner, done_cb, task);
  secret_value_unref (secret);
}

gboolean
sight_keyring_store_finish (GAsyncResult  *result,
                            GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

/* The items matching, looked at without unlocking any: the lookup then
 * reads the value (which unlocks, prompting when the keyring asks to). */
static void
searched_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  GTask *task = user_data;
  Op *op = g_task_get_task_data (task);
  GList *items = secret_service_search_finish (NULL, result, NULL);

  op->locked = items != NULL;
  for (GList *l = items; l != NULL; l = l->next)
    if (!secret_item_get_locked (l->data))
      op->locked = FALSE;
  g_list_free_full (items, g_object_unref);
  if (op->returned)
    {
      g_object_unref (task);
      return;
    }
  secret_service_lookup (NULL, op->schema, op->attributes, op->inner, done_cb, task);
}

void
sight_keyring_lookup_async (const SecretSchema  *schema,
                            GHashTable          *attributes,
                            guint                timeout_ms,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  GHashTableIter iter;
  gpointer name, value;
  GTask *task;
  Op *op;

  g_return_if_fail (attributes != NULL && g_hash_table_size (attributes) > 0);

  task = op_start (OP_LOOKUP, timeout_ms, cancellable, callback, user_data,
                   sight_keyring_lookup_async);
  op = g_task_get_task_data (task);
  op->schema = schema;
  /* The lookup starts after the search: the caller's table may hold
   * strings that are gone by then, so the op keeps copies. */
  op->attributes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_hash_table_iter_init (&iter, attributes);
  while (g_hash_table_iter_next (&iter, &name, &value))
    g_hash_table_insert (op->attributes, g_strdup (name), g_strdup (value));
  /* Whether the items are locked is asked first, unlocking nothing, so that
   * a lookup that ends waiting for an unlock says so. */
  secret_service_search (NULL, schema, op->attributes, SECRET_SEARCH_NONE, op->inner, searched_cb,
                         task);
}

char *
sight_keyring_lookup_finish (GAsyncResult  *result,
                             GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

void
sight_keyring_clear_async (const SecretSchema  *schema,
                           GHashTable          *attributes,
                           guint                timeout_ms,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  GTask *task;

  g_return_if_fail (attributes != NULL && g_hash_table_size (attributes) > 0);

  task = op_start (OP_CLEAR, timeout_ms, cancellable, callback, user_data,
                   sight_keyring_clear_async);
  secret_service_clear (NULL, schema, attributes, ((Op *) g_task_get_task_data (task))->inner,
                        done_cb, task);
}

gboolean
sight_keyring_clear_finish (GAsyncResult  *result,
                            GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

void
sight_keyring_value_free (char *value)
{
  if (value == NULL)
    return;
  memset (value, 0, strlen (value));
  g_free (value);
}
