/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-secrets"

#include "config.h"

#include "sight-secrets.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include "sight-error.h"
#include "sight-keyring.h"

#define MIN_SECRET_BYTES 3
#define MIN_BASE64_CORE 8

/* ---- Credentials ---------------------------------------------------------- */

static const char *const purposes[] = {
  "username", "email", "password", "new-password", "one-time-code", NULL,
};

const char * const *
sight_credential_purposes (void)
{
  return purposes;
}

gboolean
sight_credential_purpose_is_valid (const char *purpose)
{
  for (guint i = 0; purpose != NULL && purposes[i] != NULL; i++)
    if (g_str_equal (purposes[i], purpose))
      return TRUE;
  return FALSE;
}

SightCredential *
sight_credential_copy (const SightCredential *cred)
{
  SightCredential *copy;

  g_return_val_if_fail (cred != NULL, NULL);

  copy = g_new0 (SightCredential, 1);
  copy->name = g_strdup (cred->name);
  copy->purpose = g_strdup (cred->purpose);
  copy->allowed_origins = g_strdupv (cred->allowed_origins);
  copy->source = cred->source;
  copy->source_arg = g_strdup (cred->source_arg);
  if (cred->keyring_attributes != NULL)
    {
      GHashTableIter iter;
      gpointer k, v;

      copy->keyring_attributes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
      g_hash_table_iter_init (&iter, cred->keyring_attributes);
      while (g_hash_table_iter_next (&iter, &k, &v))
        g_hash_table_insert (copy->keyring_attributes, g_strdup (k), g_strdup (v));
    }
  return copy;
}

void
sight_credential_free (SightCredential *cred)
{
  if (cred == NULL)
    return;
  g_free (cred->name);
  g_free (cred->purpose);
  g_strfreev (cred->allowed_origins);
  if (cred->source_arg != NULL)
    {
      /* It may be a value (SIGHT_CREDENTIAL_SOURCE_VALUE). */
      memset (cred->source_arg, 0, strlen (cred->source_arg));
      g_free (cred->source_arg);
    }
  g_clear_pointer (&cred->keyring_attributes, g_hash_table_unref);
  g_free (cred);
}

char *
sight_origin_normalize (const char *url_or_origin)
{
  g_autoptr(GUri) uri = NULL;
  g_autofree char *scheme = NULL;
  g_autofree char *host = NULL;
  g_autofree char *port_text = NULL;
  int port;

  if (url_or_origin == NULL)
    return NULL;
  uri = g_uri_parse (url_or_origin, G_URI_FLAGS_NONE, NULL);
  if (uri == NULL || g_uri_get_host (uri) == NULL || *g_uri_get_host (uri) == '\0')
    return NULL;

  scheme = g_ascii_strdown (g_uri_get_scheme (uri), -1);
  host = sight_host_to_ascii (g_uri_get_host (uri));
  if (host == NULL)
    return NULL;
  port = g_uri_get_port (uri);
  if ((port == 80 && (g_str_equal (scheme, "http") || g_str_equal (scheme, "ws"))) ||
      (port == 443 && (g_str_equal (scheme, "https") || g_str_equal (scheme, "wss"))))
    port = -1;

  port_text = port > 0 ? g_strdup_printf (":%d", port) : g_strdup ("");
  return g_strdup_printf ("%s://%s%s%s%s", scheme,
                          strchr (host, ':') ? "[" : "", host, strchr (host, ':') ? "]" : "",
                          port_text);
}

char *
sight_host_to_ascii (const char *host)
{
  g_autofree char *ascii = NULL;

  if (host == NULL || *host == '\0')
    return NULL;
  ascii = g_hostname_to_ascii (host);
  return ascii != NULL ? g_ascii_strdown (ascii, -1) : NULL;
}

gboolean
sight_credential_origin_allowed (const SightCredential *cred,
                                 const char            *url)
{
  g_autofree char *origin = NULL;

  g_return_val_if_fail (cred != NULL, FALSE);

  origin = sight_origin_normalize (url);
  if (origin == NULL || cred->allowed_origins == NULL)
    return FALSE;
  for (guint i = 0; cred->allowed_origins[i] != NULL; i++)
    {
      g_autofree char *allowed = sight_origin_normalize (cred->allowed_origins[i]);

      if (allowed != NULL && g_str_equal (allowed, origin))
        return TRUE;
    }
  return FALSE;
}

/* ---- The credential store ------------------------------------------------- */

struct _SightSecrets {
  gatomicrefcount      ref_count;
  /* name → SightCredential */
  GHashTable          *credentials;
  /* name → value read (wiped on free) */
  GHashTable          *values;
};

G_DEFINE_BOXED_TYPE (SightSecrets, sight_secrets, sight_secrets_ref, sight_secrets_unref)

static void
wipe_free (gpointer data)
{
  char *value = data;

  if (value == NULL)
    return;
  memset (value, 0, strlen (value));
  g_free (value);
}

SightSecrets *
sight_secrets_new (void)
{
  SightSecrets *self = g_new0 (SightSecrets, 1);

  g_atomic_ref_count_init (&self->ref_count);
  self->credentials = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                             (GDestroyNotify) sight_credential_free);
  self->values = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, wipe_free);
  return self;
}

SightSecrets *
sight_secrets_ref (SightSecrets *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

void
sight_secrets_unref (SightSecrets *self)
{
  g_return_if_fail (self != NULL);
  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;
  g_hash_table_unref (self->credentials);
  g_hash_table_unref (self->values);
  g_free (self);
}

void
sight_secrets_add (SightSecrets          *self,
                   const SightCredential *cred)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (cred != NULL && cred->name != NULL);

  g_hash_table_remove (self->values, cred->name);
  g_hash_table_insert (self->credentials, g_strdup (cred->name), sight_credential_copy (cred));
  if (cred->source == SIGHT_CREDENTIAL_SOURCE_VALUE && cred->source_arg != NULL)
    sight_secrets_register_value (cred->name, cred->source_arg);
}

const SightCredential *
sight_secrets_lookup (SightSecrets *self,
                      const char   *name)
{
  g_return_val_if_fail (self != NULL, NULL);
  return name ? g_hash_table_lookup (self->credentials, name) : NULL;
}

static int
compare_names (gconstpointer a,
               gconstpointer b,
               gpointer      user_data)
{
  return strcmp (*(char **) a, *(char **) b);
}

GStrv
sight_secrets_list_names (SightSecrets *self)
{
  g_autofree const char **keys = NULL;
  GStrv names;
  guint n;

  g_return_val_if_fail (self != NULL, NULL);

  keys = (const char **) g_hash_table_get_keys_as_array (self->credentials, &n);
  names = g_new0 (char *, n + 1);
  for (guint i = 0; i < n; i++)
    names[i] = g_strdup (keys[i]);
  g_qsort_with_data (names, n, sizeof (char *), compare_names, NULL);
  return names;
}

static char *
read_value (const SightCredential  *cred,
            GError                **error)
{
  switch (cred->source)
    {
    case SIGHT_CREDENTIAL_SOURCE_ENV:
      {
        const char *value = g_getenv (cred->source_arg);

        if (value == NULL || *value == '\0')
          {
            g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE,
                         "credential %s: environment variable %s is not set", cred->name,
                         cred->source_arg);
            return NULL;
          }
        return g_strdup (value);
      }
    case SIGHT_CREDENTIAL_SOURCE_FILE:
      {
        g_autoptr(GError) local = NULL;
        char *contents = NULL;
        gsize len = 0;

        if (!g_file_get_contents (cred->source_arg, &contents, &len, &local))
          {
            g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE,
                         "credential %s: cannot read its file: %s", cred->name, local->message);
            return NULL;
          }
        /* One trailing line break is the file's, not the value's. */
        if (len > 0 && contents[len - 1] == '\n')
          contents[--len] = '\0';
        if (len > 0 && contents[len - 1] == '\r')
          contents[--len] = '\0';
        if (len == 0 || strlen (contents) != len || !g_utf8_validate (contents, len, NULL))
          {
            wipe_free (contents);
            g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE,
                         "credential %s: its file is empty or not UTF-8 text", cred->name);
            return NULL;
          }
        return contents;
      }
    case SIGHT_CREDENTIAL_SOURCE_KEYRING:
      /* Read only by sight_secrets_resolve_async: a keyring is a D-Bus
       * service, never waited for on the caller's thread. */
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE,
                   "credential %s: its keyring value has not been read yet", cred->name);
      return NULL;
    case SIGHT_CREDENTIAL_SOURCE_VALUE:
      if (cred->source_arg == NULL || *cred->source_arg == '\0')
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE,
                       "credential %s has no value", cred->name);
          return NULL;
        }
      return g_strdup (cred->source_arg);
    default:
      g_assert_not_reached ();
    }
}

/* The credential @name, declared, and allowed on @url when one is given. */
static const SightCredential *
checked_credential (SightSecrets  *self,
                    const char    *name,
                    const char    *url,
                    gboolean       check_origin,
                    GError       **error)
{
  const SightCredential *cred = sight_secrets_lookup (self, name);

  if (cred == NULL)
    {
      g_autofree char *safe = sight_text_sanitize (name, 128);

      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE,
                   "no credential named %s is registered", safe);
      return NULL;
    }
  if (check_origin && !sight_credential_origin_allowed (cred, url))
    {
      g_autofree char *origin = sight_origin_normalize (url);

      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_POLICY_DENIED,
                   "credential %s may not be used on %s", name,
                   origin ? origin : "a page without an origin");
      return NULL;
    }
  return cred;
}

/* Keeps @value (taken) as @name's, known to the redactor from now on.  A
 * value kept first wins, so one handed out before stays valid. */
static const char *
keep_value (SightSecrets *self,
            const char   *name,
            char         *value)
{
  const char *known = g_hash_table_lookup (self->values, name);

  if (known != NULL)
    {
      wipe_free (value);
      return known;
    }
  sight_secrets_register_value (name, value);
  g_hash_table_insert (self->values, g_strdup (name), value);
  return value;
}

static const char *
resolve_now (SightSecrets  *self,
             const char    *name,
             const char    *url,
             gboolean       check_origin,
             GError       **error)
{
  const SightCredential *cred;
  const char *known;
  char *value;

  g_return_val_if_fail (self != NULL, NULL);

  cred = checked_credential (self, name, url, check_origin, error);
  if (cred == NULL)
    return NULL;
  if ((known = g_hash_table_lookup (self->values, name)) != NULL)
    return known;
  value = read_value (cred, error);
  return value != NULL ? keep_value (self, name, value) : NULL;
}

const char *
sight_secrets_resolve (SightSecrets  *self,
                       const char    *name,
                       GError       **error)
{
  return resolve_now (self, name, NULL, FALSE, error);
}

const char *
sight_secrets_resolve_for_origin (SightSecrets  *self,
                                  const char    *name,
                                  const char    *url,
                                  GError       **error)
{
  return resolve_now (self, name, url, TRUE, error);
}

typedef struct {
  SightSecrets *secrets;
  char         *name;
} Resolve;

static void
resolve_free (Resolve *resolve)
{
  sight_secrets_unref (resolve->secrets);
  g_free (resolve->name);
  g_free (resolve);
}

static void
keyring_read_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  Resolve *resolve = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  char *value = sight_keyring_lookup_finish (result, &error);

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_task_return_error (task, g_steal_pointer (&error));
  else if (error != NULL)
    g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE,
                             "credential %s: %s", resolve->name, error->message);
  else if (value == NULL)
    g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE,
                             "credential %s: the keyring holds no value for it (locked, or "
                             "never saved there)", resolve->name);
  else
    g_task_return_pointer (task, (gpointer) keep_value (resolve->secrets, resolve->name, value),
                           NULL);
}

void
sight_secrets_resolve_async (SightSecrets        *self,
                             const char          *name,
                             const char          *url,
                             guint                timeout_ms,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  const SightCredential *cred;
  const char *known;
  GError *error = NULL;
  Resolve *resolve;

  g_return_if_fail (self != NULL);

  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_secrets_resolve_async);
  cred = checked_credential (self, name, url, TRUE, &error);
  if (cred == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  known = g_hash_table_lookup (self->values, name);
  if (known == NULL && cred->source != SIGHT_CREDENTIAL_SOURCE_KEYRING)
    known = resolve_now (self, name, NULL, FALSE, &error);
  if (known != NULL || error != NULL)
    {
      if (error != NULL)
        g_task_return_error (task, error);
      else
        g_task_return_pointer (task, (gpointer) known, NULL);
      return;
    }
  if (cred->keyring_attributes == NULL || g_hash_table_size (cred->keyring_attributes) == 0)
    {
      g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE,
                               "credential %s names no keyring attributes", cred->name);
      return;
    }
  resolve = g_new0 (Resolve, 1);
  resolve->secrets = sight_secrets_ref (self);
  resolve->name = g_strdup (name);
  g_task_set_task_data (task, resolve, (GDestroyNotify) resolve_free);
  /* The keyring's own deadline, capped by what the caller has left. */
  sight_keyring_lookup_async (NULL, cred->keyring_attributes,
                              timeout_ms > 0 ? MIN (timeout_ms, SIGHT_KEYRING_TIMEOUT_MS)
                                             : SIGHT_KEYRING_TIMEOUT_MS,
                              cancellable, keyring_read_cb, g_steal_pointer (&task));
}

const char *
sight_secrets_resolve_finish (SightSecrets  *self,
                              GAsyncResult  *result,
                              GError       **error)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == sight_secrets_resolve_async,
                        NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ---- The redactor ------------------------------------------------------- */

typedef struct {
  char *text;
  gsize len;
  char *marker;
} Pattern;

static GMutex redact_lock;
/* name → GPtrArray of values (owned strings) */
static GHashTable *registry;
/* Pattern*, rebuilt lazily after a change; longest first */
static GPtrArray *patterns;
/* index: first byte → GPtrArray of Pattern* (borrowed), longest first */
static GPtrArray *by_first_byte[256];

static void
pattern_free (Pattern *p)
{
  memset (p->text, 0, p->len);
  g_free (p->text);
  g_free (p->marker);
  g_free (p);
}

static void
clear_patterns (void)
{
  g_clear_pointer (&patterns, g_ptr_array_unref);
  for (guint i = 0; i < 256; i++)
    g_clear_pointer (&by_first_byte[i], g_ptr_array_unref);
}

static void
add_variant (GHashTable *variants,
             char       *text)
{
  if (text != NULL && strlen (text) >= MIN_SECRET_BYTES)
    g_hash_table_add (variants, text);
  else
    g_free (text);
}

static char *
replace_all (const char *text,
             const char *from,
             const char *to)
{
  g_auto(GStrv) parts = g_strsplit (text, from, -1);
  return g_strjoinv (to, parts);
}

static char *
hex_lower (const char *escaped)
{
  GString *out = g_string_new (NULL);

  for (const char *p = escaped; *p; p++)
    {
      if (*p == '%' && g_ascii_isxdigit (p[1]) && g_ascii_isxdigit (p[2]))
        {
          g_string_append_c (out, '%');
          g_string_append_c (out, g_ascii_tolower (p[1]));
          g_string_append_c (out, g_ascii_tolower (p[2]));
          p += 2;
        }
      else
        g_string_append_c (out, *p);
    }
  return g_string_free (out, FALSE);
}

static char *
base64_url (const char *b64)
{
  GString *out = g_string_new (NULL);

  for (const char *p = b64; *p && *p != '='; p++)
    g_string_append_c (out, *p == '+' ? '-' : *p == '/' ? '_' : *p);
  return g_string_free (out, FALSE);
}

static char *
strip_padding (const char *b64)
{
  const char *eq = strchr (b64, '=');
  return eq ? g_strndup (b64, eq - b64) : g_strdup (b64);
}

static char *
json_escape (const char *value,
             gboolean    ascii_only,
             gboolean    escape_slash)
{
  g_autoptr(JsonNode) node = json_node_init_string (json_node_alloc (), value);
  g_autofree char *quoted = json_to_string (node, FALSE);
  g_autofree char *inner = g_strndup (quoted + 1, strlen (quoted) - 2);
  GString *out;

  if (!ascii_only && !escape_slash)
    return g_steal_pointer (&inner);

  out = g_string_new (NULL);
  for (const char *p = inner; *p; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if (escape_slash && c == '/')
        g_string_append (out, "\\/");
      else if (ascii_only && c >= 0x80)
        {
          if (c >= 0x10000)
            {
              gunichar v = c - 0x10000;
              g_string_append_printf (out, "\\u%04x\\u%04x", 0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff));
            }
          else
            g_string_append_printf (out, "\\u%04x", c);
        }
      else
        g_string_append_unichar (out, c);
    }
  return g_string_free (out, FALSE);
}

static char *
html_escape (const char *value,
             const char *apos,
             const char *quot)
{
  GString *out = g_string_new (NULL);

  for (const char *p = value; *p; p++)
    {
      switch (*p)
        {
        case '&': g_string_append (out, "&amp;"); break;
        case '<': g_string_append (out, "&lt;"); break;
        case '>': g_string_append (out, "&gt;"); break;
        case '\'': g_string_append (out, apos); break;
        case '"': g_string_append (out, quot); break;
        default: g_string_append_c (out, *p); break;
        }
    }
  return g_string_free (out, FALSE);
}

/* Every form in which @value may show up in text we write. */
static void
collect_variants (const char *value,
                  GHashTable *variants)
{
  gsize n = strlen (value);
  g_autofree char *b64 = g_base64_encode ((const guchar *) value, n);

  add_variant (variants, g_strdup (value));

  /* URL encodings: RFC 3986 (upper and lower hex), encodeURIComponent, forms. */
  {
    g_autofree char *all = g_uri_escape_string (value, NULL, FALSE);
    g_autofree char *component = g_uri_escape_string (value, "!'()*", FALSE);
    g_autofree char *form_space = g_uri_escape_string (value, " ", FALSE);

    add_variant (variants, hex_lower (all));
    add_variant (variants, hex_lower (component));
    add_variant (variants, replace_all (form_space, " ", "+"));
    {
      g_autofree char *form = replace_all (form_space, " ", "+");
      add_variant (variants, hex_lower (form));
    }
    add_variant (variants, g_steal_pointer (&all));
    add_variant (variants, g_steal_pointer (&component));
  }

  /* base64: standard and URL-safe, padded or not, and the part of the encoding that
   * is the value's alone at each of the three alignments inside a longer blob
   * (e.g. "user:password" in a Basic authorization header). */
  add_variant (variants, strip_padding (b64));
  add_variant (variants, base64_url (b64));
  add_variant (variants, g_strdup (b64));
  for (gsize k = 0; k < 3; k++)
    {
      g_autofree guchar *buf = g_malloc0 (k + n);
      g_autofree char *enc = NULL;
      gsize start = (8 * k + 5) / 6;
      gsize end = (8 * (k + n)) / 6;

      memcpy (buf + k, value, n);
      enc = g_base64_encode (buf, k + n);
      if (end > start && end - start >= MIN_BASE64_CORE)
        {
          g_autofree char *core = g_strndup (enc + start, end - start);

          add_variant (variants, base64_url (core));
          add_variant (variants, g_steal_pointer (&core));
        }
      memset (buf, 0, k + n);
    }

  /* HTML: & < > as entities, and each spelling of the quotes escapers use. */
  {
    static const char *const apos_forms[] = { "&apos;", "&#39;", "&#x27;", "&#X27;", "'" };
    static const char *const quot_forms[] = { "&quot;", "&#34;", "&#x22;", "&#X22;", "\"" };

    for (guint a = 0; a < G_N_ELEMENTS (apos_forms); a++)
      for (guint q = 0; q < G_N_ELEMENTS (quot_forms); q++)
        add_variant (variants, html_escape (value, apos_forms[a], quot_forms[q]));
  }

  /* JSON string contents: as json-glib writes them, with \/ and with \uXXXX. */
  add_variant (variants, json_escape (value, FALSE, FALSE));
  add_variant (variants, json_escape (value, TRUE, FALSE));
  add_variant (variants, json_escape (value, FALSE, TRUE));
  add_variant (variants, json_escape (value, TRUE, TRUE));

  /* A form value or URL embedded in JSON. */
  {
    g_autofree char *url = g_uri_escape_string (value, NULL, FALSE);
    add_variant (variants, json_escape (url, FALSE, TRUE));
  }
}

static int
pattern_longest_first (gconstpointer a,
                       gconstpointer b)
{
  const Pattern *x = *(Pattern **) a, *y = *(Pattern **) b;
  return x->len < y->len ? 1 : x->len > y->len ? -1 : 0;
}

static void
ensure_patterns_locked (void)
{
  GHashTableIter iter;
  gpointer key, val;

  if (patterns != NULL || registry == NULL)
    return;

  patterns = g_ptr_array_new_with_free_func ((GDestroyNotify) pattern_free);
  g_hash_table_iter_init (&iter, registry);
  while (g_hash_table_iter_next (&iter, &key, &val))
    {
      GPtrArray *values = val;

      for (guint i = 0; i < values->len; i++)
        {
          g_autoptr(GHashTable) variants = g_hash_table_new_full (g_str_hash, g_str_equal,
                                                                  wipe_free, NULL);
          GHashTableIter viter;
          gpointer v;

          collect_variants (g_ptr_array_index (values, i), variants);
          g_hash_table_iter_init (&viter, variants);
          while (g_hash_table_iter_next (&viter, &v, NULL))
            {
              Pattern *p = g_new0 (Pattern, 1);

              p->text = g_strdup (v);
              p->len = strlen (v);
              p->marker = g_strdup_printf ("[secret:%s]", (const char *) key);
              g_ptr_array_add (patterns, p);
            }
        }
    }
  g_ptr_array_sort (patterns, pattern_longest_first);
  for (guint i = 0; i < patterns->len; i++)
    {
      Pattern *p = g_ptr_array_index (patterns, i);
      guchar first = (guchar) p->text[0];

      if (by_first_byte[first] == NULL)
        by_first_byte[first] = g_ptr_array_new ();
      g_ptr_array_add (by_first_byte[first], p);
    }
}

void
sight_secrets_register_value (const char *name,
                              const char *value)
{
  GPtrArray *values;

  g_return_if_fail (name != NULL);

  if (value == NULL || strlen (value) < MIN_SECRET_BYTES)
    return;

  g_mutex_lock (&redact_lock);
  if (registry == NULL)
    registry = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                      (GDestroyNotify) g_ptr_array_unref);
  values = g_hash_table_lookup (registry, name);
  if (values == NULL)
    {
      values = g_ptr_array_new_with_free_func (wipe_free);
      g_hash_table_insert (registry, g_strdup (name), values);
    }
  if (!g_ptr_array_find_with_equal_func (values, value, g_str_equal, NULL))
    {
      g_ptr_array_add (values, g_strdup (value));
      clear_patterns ();
    }
  g_mutex_unlock (&redact_lock);
}

void
sight_secrets_forget_all (void)
{
  g_mutex_lock (&redact_lock);
  clear_patterns ();
  g_clear_pointer (&registry, g_hash_table_unref);
  g_mutex_unlock (&redact_lock);
}

/* Scans @text once; at each byte the longest known form that starts there wins. */
static char *
scan_locked (const char *text,
             gboolean    stop_at_first,
             gboolean   *found)
{
  GString *out = stop_at_first ? NULL : g_string_sized_new (strlen (text));
  const char *p = text;

  *found = FALSE;
  while (*p != '\0')
    {
      GPtrArray *candidates = by_first_byte[(guchar) *p];
      Pattern *hit = NULL;

      for (guint i = 0; candidates != NULL && i < candidates->len && hit == NULL; i++)
        {
          Pattern *pat = g_ptr_array_index (candidates, i);

          if (strncmp (p, pat->text, pat->len) == 0)
            hit = pat;
        }
      if (hit != NULL)
        {
          *found = TRUE;
          if (stop_at_first)
            return NULL;
          g_string_append (out, hit->marker);
          p += hit->len;
        }
      else
        {
          if (out != NULL)
            g_string_append_c (out, *p);
          p++;
        }
    }
  return out ? g_string_free (out, FALSE) : NULL;
}

char *
sight_secrets_redact (const char *text)
{
  gboolean found;
  char *result;

  if (text == NULL)
    return NULL;

  g_mutex_lock (&redact_lock);
  ensure_patterns_locked ();
  if (patterns == NULL || patterns->len == 0)
    result = g_strdup (text);
  else
    result = scan_locked (text, FALSE, &found);
  g_mutex_unlock (&redact_lock);
  return result;
}

gboolean
sight_secrets_contains_any (const char *text)
{
  gboolean found = FALSE;

  if (text == NULL)
    return FALSE;

  g_mutex_lock (&redact_lock);
  ensure_patterns_locked ();
  if (patterns != NULL && patterns->len > 0)
    scan_locked (text, TRUE, &found);
  g_mutex_unlock (&redact_lock);
  return found;
}

JsonNode *
sight_secrets_redact_json (JsonNode *node)
{
  if (node == NULL)
    return NULL;

  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      g_autoptr(JsonObject) dst = json_object_new ();
      JsonObjectIter iter;
      const char *key;
      JsonNode *value;

      json_object_iter_init_ordered (&iter, json_node_get_object (node));
      while (json_object_iter_next_ordered (&iter, &key, &value))
        {
          g_autofree char *clean_key = sight_secrets_redact (key);
          json_object_set_member (dst, clean_key, sight_secrets_redact_json (value));
        }
      return json_node_init_object (json_node_alloc (), dst);
    }
  if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *src = json_node_get_array (node);
      g_autoptr(JsonArray) dst = json_array_sized_new (json_array_get_length (src));

      for (guint i = 0; i < json_array_get_length (src); i++)
        json_array_add_element (dst, sight_secrets_redact_json (json_array_get_element (src, i)));
      return json_node_init_array (json_node_alloc (), dst);
    }
  if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING)
    {
      g_autofree char *clean = sight_secrets_redact (json_node_get_string (node));
      return json_node_init_string (json_node_alloc (), clean);
    }
  return json_node_copy (node);
}

GLogWriterOutput
sight_secrets_log_writer (GLogLevelFlags   log_level,
                          const GLogField *fields,
                          gsize            n_fields,
                          gpointer         user_data)
{
  g_autofree GLogField *copy = g_new (GLogField, n_fields);
  g_autoptr(GPtrArray) owned = g_ptr_array_new_with_free_func (g_free);

  for (gsize i = 0; i < n_fields; i++)
    {
      copy[i] = fields[i];
      /* length -1 marks a NUL-terminated string; others are binary and left alone. */
      if (fields[i].length < 0 && fields[i].value != NULL)
        {
          char *clean = sight_secrets_redact (fields[i].value);

          g_ptr_array_add (owned, clean);
          copy[i].value = clean;
        }
    }
  return g_log_writer_default (log_level, copy, n_fields, user_data);
}
