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
 * which the caller's cancellable and the deadline both cancel, so the answer
 * says which of the two ended the wait. */
typedef struct {
  OpKind        kind;
  guint         timeout_ms;
  gboolean      timed_out;
  GCancellable *inner;
  GCancellable *outer;
  gulong        outer_id;
  GSource      *deadline;
} Op;

static void
op_stop (Op *op)
{
  if (op->deadline != NULL)
    {
      g_source_destroy (op->deadline);
      g_clear_pointer (&op->deadline, g_source_unref);
    }
  if (op->outer_id != 0)
    g_cancellable_disconnect (op->outer, op->outer_id);
  op->outer_id = 0;
}

static void
op_free (Op *op)
{
  op_stop (op);
  g_clear_object (&op->inner);
  g_clear_object (&op->outer);
  g_free (op);
}

static gboolean
deadline_cb (gpointer data)
{
  Op *op = data;

  op->timed_out = TRUE;
  g_cancellable_cancel (op->inner);
  return G_SOURCE_REMOVE;
}

static void
outer_cancelled_cb (GCancellable *outer,
                    gpointer      inner)
{
  g_cancellable_cancel (G_CANCELLABLE (inner));
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
  op->timeout_ms = timeout_ms > 0 ? timeout_ms : SIGHT_KEYRING_TIMEOUT_MS;
  op->inner = g_cancellable_new ();
  g_task_set_task_data (task, op, (GDestroyNotify) op_free);
  if (cancellable != NULL)
    {
      op->outer = g_object_ref (cancellable);
      op->outer_id = g_cancellable_connect (cancellable, G_CALLBACK (outer_cancelled_cb),
                                            g_object_ref (op->inner), g_object_unref);
    }
  op->deadline = g_timeout_source_new (op->timeout_ms);
  g_source_set_static_name (op->deadline, "[sightline] keyring deadline");
  g_source_set_callback (op->deadline, deadline_cb, op, NULL);
  g_source_attach (op->deadline, g_task_get_context (task));
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

  if (error != NULL)
    {
      if (op->timed_out)
        g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE,
                                 "the keyring did not answer within %u ms", op->timeout_ms);
      else if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
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

void
sight_keyring_lookup_async (const SecretSchema  *schema,
                            GHashTable          *attributes,
                            guint                timeout_ms,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  GTask *task;

  g_return_if_fail (attributes != NULL && g_hash_table_size (attributes) > 0);

  task = op_start (OP_LOOKUP, timeout_ms, cancellable, callback, user_data,
                   sight_keyring_lookup_async);
  secret_service_lookup (NULL, schema, attributes, ((Op *) g_task_get_task_data (task))->inner,
                         done_cb, task);
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
