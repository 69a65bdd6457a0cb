/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-secret-fill"

#include "config.h"

#include "sight-secret-fill.h"

#include "sight-error.h"
#include "sight-secret-fields.h"

static void
filled_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  JsonObject *reply = sight_web_page_fill_secret_finish (SIGHT_WEB_PAGE (source), result, &error);

  if (reply == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, reply, (GDestroyNotify) json_object_unref);
}

gboolean
sight_secret_fill_authorize (SightWebPage  *page,
                             SightSecrets  *secrets,
                             const char    *name,
                             const char    *param,
                             const char    *step_origin,
                             GError       **error)
{
  const char *url = sight_web_page_get_uri (page);
  g_autofree char *origin = sight_origin_normalize (url);
  g_autofree char *wanted = step_origin != NULL ? sight_origin_normalize (step_origin) : NULL;
  const SightCredential *cred = secrets != NULL ? sight_secrets_lookup (secrets, name) : NULL;

  g_return_val_if_fail (SIGHT_IS_WEB_PAGE (page), FALSE);
  g_return_val_if_fail (name != NULL, FALSE);

  if (cred == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE,
                   "the credential \"%s\" (param {%s}) is not registered", name,
                   param != NULL ? param : name);
      return FALSE;
    }
  if (origin == NULL || (step_origin != NULL && g_strcmp0 (origin, wanted) != 0))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_POLICY_DENIED,
                   "the secret \"%s\" may not be filled on %s: the step opened on %s",
                   name, origin != NULL ? origin : "this page",
                   wanted != NULL ? wanted : "another origin");
      return FALSE;
    }
  if (!sight_credential_origin_allowed (cred, url))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_POLICY_DENIED,
                   "the credential \"%s\" is not allowed on %s", name, origin);
      return FALSE;
    }
  return TRUE;
}

typedef struct {
  SightSecrets *secrets;
  char         *name;
  char         *param;
  char         *step_origin;
  char         *ref;
  gint64        deadline;
} Fill;

static void
fill_free (Fill *fill)
{
  sight_secrets_unref (fill->secrets);
  g_free (fill->name);
  g_free (fill->param);
  g_free (fill->step_origin);
  g_free (fill->ref);
  g_free (fill);
}

static void
resolved_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  SightWebPage *page = g_task_get_source_object (task);
  Fill *fill = g_task_get_task_data (task);
  GCancellable *cancellable = g_task_get_cancellable (task);
  GError *error = NULL;
  const char *value = sight_secrets_resolve_finish (fill->secrets, result, &error);
  gint64 left_ms = (fill->deadline - g_get_monotonic_time ()) / 1000;

  /* The page may have moved on while the keyring answered: checks 1 and 2
   * again, on the page as it is now. */
  if (value == NULL ||
      !sight_secret_fill_authorize (page, fill->secrets, fill->name, fill->param,
                                    fill->step_origin, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  /* The fill has what the keyring left of the deadline. */
  sight_web_page_fill_secret_async (page, fill->ref, value,
                                    sight_secrets_lookup (fill->secrets, fill->name)->purpose,
                                    (guint) CLAMP (left_ms, 1, G_MAXUINT),
                                    cancellable, filled_cb, g_steal_pointer (&task));
}

void
sight_secret_fill_async (SightWebPage        *page,
                         SightSecrets        *secrets,
                         const char          *name,
                         const char          *param,
                         const char          *step_origin,
                         const char          *ref,
                         guint                timeout_ms,
                         GCancellable        *cancellable,
                         GAsyncReadyCallback  callback,
                         gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  GError *error = NULL;
  Fill *fill;

  g_return_if_fail (SIGHT_IS_WEB_PAGE (page));
  g_return_if_fail (name != NULL);
  g_return_if_fail (ref != NULL);

  task = g_task_new (page, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_secret_fill_async);
  if (!sight_secret_fill_authorize (page, secrets, name, param, step_origin, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  fill = g_new0 (Fill, 1);
  fill->secrets = sight_secrets_ref (secrets);
  fill->name = g_strdup (name);
  fill->param = g_strdup (param);
  fill->step_origin = g_strdup (step_origin);
  fill->ref = g_strdup (ref);
  fill->deadline = g_get_monotonic_time () + (gint64) MAX (timeout_ms, 1u) * 1000;
  g_task_set_task_data (task, fill, (GDestroyNotify) fill_free);
  /* Reading a keyring value is a D-Bus exchange: it waits on no thread, and
   * within the fill's deadline. */
  sight_secrets_resolve_async (secrets, name, sight_web_page_get_uri (page), MAX (timeout_ms, 1u),
                               cancellable, resolved_cb, g_steal_pointer (&task));
}

JsonObject *
sight_secret_fill_finish (SightWebPage  *page,
                          GAsyncResult  *result,
                          GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, page), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

gboolean
sight_secret_fill_error_is_refusal (const GError *error)
{
  return g_error_matches (error, SIGHT_ERROR, SIGHT_ERROR_POLICY_DENIED) ||
         g_error_matches (error, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE);
}

gboolean
sight_secret_fill_note_typed (gboolean    secure,
                              const char *name,
                              const char *value)
{
  if (!secure || value == NULL || value[0] == '\0')
    return FALSE;
  sight_secrets_register_value (name != NULL ? name : "typed", value);
  return TRUE;
}
