/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-store"

#include "config.h"

#include "sight-store.h"

#include <string.h>

#include "sight-json.h"
#include "sight-secrets.h"
#include "sight-error.h"
#include "sight-store-private.h"

/* ----------------------------------------------------------------- secrets */

#define SECRET_MIN_BYTES 4
#define SECRET_MARK "[secret]"

static void
core_add_secret_form (StoreCore  *core,
                      const char *form)
{
  if (form == NULL || strlen (form) < SECRET_MIN_BYTES)
    return;
  for (guint i = 0; i < core->secrets->len; i++)
    if (g_str_equal (g_ptr_array_index (core->secrets, i), form))
      return;
  g_ptr_array_add (core->secrets, g_strdup (form));
}

static char *
json_escaped (const char *value)
{
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_VALUE);
  g_autofree char *quoted = NULL;

  json_node_set_string (node, value);
  quoted = json_to_string (node, FALSE);
  /* strip the quotes */
  return g_strndup (quoted + 1, strlen (quoted) - 2);
}

/* Replaces every secret the process knows (sight-secrets.h) and every form
 * registered with this store in @text; returns a new string. */
char *
_sight_store_redact (StoreCore  *core,
                     const char *text)
{
  g_autoptr(GString) s = NULL;
  g_autofree char *known = NULL;

  if (text == NULL)
    return NULL;
  known = sight_secrets_redact (text);
  s = g_string_new (known);
  g_mutex_lock (&core->secrets_lock);
  for (guint i = 0; i < core->secrets->len; i++)
    g_string_replace (s, g_ptr_array_index (core->secrets, i), SECRET_MARK, 0);
  g_mutex_unlock (&core->secrets_lock);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

static gboolean
contains_bytes (const char *data,
                gsize       len,
                const char *needle,
                gsize       needle_len)
{
  if (needle_len == 0 || needle_len > len)
    return FALSE;
  for (gsize i = 0; i + needle_len <= len; i++)
    if (data[i] == needle[0] && memcmp (data + i, needle, needle_len) == 0)
      return TRUE;
  return FALSE;
}

/* Text-like blobs are redacted; any other blob that contains a secret is
 * refused. */
GBytes *
_sight_store_redact_blob (StoreCore   *core,
                          GBytes      *bytes,
                          const char  *mime,
                          GError     **error)
{
  gsize len;
  const char *data;
  gboolean found = FALSE;

  if (bytes == NULL)
    return NULL;
  data = g_bytes_get_data (bytes, &len);
  if (mime && (g_str_has_prefix (mime, "text/") || strstr (mime, "json") || strstr (mime, "xml")))
    {
      g_autofree char *text = g_strndup (data, len);
      char *clean = _sight_store_redact (core, text);
      return g_bytes_new_take (clean, strlen (clean));
    }
  g_mutex_lock (&core->secrets_lock);
  for (guint i = 0; i < core->secrets->len && !found; i++)
    {
      const char *secret = g_ptr_array_index (core->secrets, i);
      found = contains_bytes (data, len, secret, strlen (secret));
    }
  g_mutex_unlock (&core->secrets_lock);
  if (found)
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_POLICY_DENIED,
                           "Refused to store data that contains a secret");
      return NULL;
    }
  return g_bytes_ref (bytes);
}

static int
longer_first (gconstpointer a,
              gconstpointer b)
{
  gsize la = strlen (*(const char * const *) a);
  gsize lb = strlen (*(const char * const *) b);

  return la < lb ? 1 : la > lb ? -1 : 0;
}

void
sight_store_add_secret (SightStore *self,
                        const char *value)
{
  StoreCore *core;
  g_autofree char *json = NULL;
  g_autofree char *uri = NULL;
  g_autofree char *b64 = NULL;

  g_return_if_fail (SIGHT_IS_STORE (self));

  if (value == NULL || strlen (value) < SECRET_MIN_BYTES)
    return;
  core = self->core;
  json = json_escaped (value);
  uri = g_uri_escape_string (value, NULL, FALSE);
  b64 = g_base64_encode ((const guchar *) value, strlen (value));
  g_mutex_lock (&core->secrets_lock);
  g_ptr_array_add (core->raw_secrets, g_strdup (value));
  core_add_secret_form (core, value);
  core_add_secret_form (core, json);
  core_add_secret_form (core, uri);
  core_add_secret_form (core, b64);
  /* Longest first, so a form that contains another is replaced whole. */
  g_ptr_array_sort (core->secrets, longer_first);
  g_mutex_unlock (&core->secrets_lock);
}
