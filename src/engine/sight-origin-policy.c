/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-origin-policy"

#include "config.h"

#include "sight-origin-policy.h"

#include <string.h>

#include "sight-error.h"

typedef struct {
  char *scheme;   /* NULL: http or https */
  char *host;     /* lower case */
  int   port;     /* -1: any (a bare host), else the origin's port */
} Origin;

struct _SightOriginPolicy
{
  gatomicrefcount  ref_count;
  GArray          *origins;   /* Origin */
};

static void
origin_clear (Origin *origin)
{
  g_free (origin->scheme);
  g_free (origin->host);
}

static int
default_port (const char *scheme)
{
  if (g_ascii_strcasecmp (scheme, "http") == 0)
    return 80;
  if (g_ascii_strcasecmp (scheme, "https") == 0)
    return 443;
  return -1;
}

/* Scheme, host and port of @uri; FALSE when it has no host. */
static gboolean
parse_origin (const char *uri,
              Origin     *out)
{
  g_autoptr(GUri) parsed = g_uri_parse (uri, G_URI_FLAGS_ENCODED | G_URI_FLAGS_PARSE_RELAXED,
                                        NULL);
  const char *host;

  if (parsed == NULL)
    return FALSE;
  host = g_uri_get_host (parsed);
  if (host == NULL || *host == '\0')
    return FALSE;
  out->scheme = g_ascii_strdown (g_uri_get_scheme (parsed), -1);
  out->host = g_ascii_strdown (host, -1);
  out->port = g_uri_get_port (parsed) > 0 ? g_uri_get_port (parsed) : default_port (out->scheme);
  return TRUE;
}

SightOriginPolicy *
sight_origin_policy_new (const char * const  *entries,
                         GError             **error)
{
  g_autoptr(SightOriginPolicy) self = g_new0 (SightOriginPolicy, 1);

  g_atomic_ref_count_init (&self->ref_count);
  self->origins = g_array_new (FALSE, TRUE, sizeof (Origin));
  g_array_set_clear_func (self->origins, (GDestroyNotify) origin_clear);
  for (guint i = 0; entries != NULL && entries[i] != NULL; i++)
    {
      Origin origin = { NULL, NULL, -1 };
      const char *entry = entries[i];

      if (strstr (entry, "://") != NULL)
        {
          if (!parse_origin (entry, &origin))
            {
              g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                           "“%s” is not an origin (scheme://host[:port])", entry);
              return NULL;
            }
        }
      else
        {
          if (*entry == '\0' || strpbrk (entry, "/:?#@ ") != NULL)
            {
              g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                           "“%s” is not a host name", entry);
              return NULL;
            }
          origin.host = g_ascii_strdown (entry, -1);
        }
      g_array_append_val (self->origins, origin);
    }
  return g_steal_pointer (&self);
}

SightOriginPolicy *
sight_origin_policy_ref (SightOriginPolicy *self)
{
  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

void
sight_origin_policy_unref (SightOriginPolicy *self)
{
  if (self == NULL || !g_atomic_ref_count_dec (&self->ref_count))
    return;
  g_clear_pointer (&self->origins, g_array_unref);
  g_free (self);
}

gboolean
sight_origin_policy_allows (SightOriginPolicy *self,
                            const char        *uri)
{
  Origin target = { NULL, NULL, -1 };
  gboolean allowed = FALSE;

  if (uri == NULL)
    return FALSE;
  if (g_ascii_strcasecmp (uri, "about:blank") == 0 || g_ascii_strcasecmp (uri, "about:srcdoc") == 0)
    return TRUE;
  /* blob:https://host/uuid belongs to the origin that made it. */
  if (g_ascii_strncasecmp (uri, "blob:", 5) == 0)
    uri += 5;
  if (!parse_origin (uri, &target))
    return FALSE;
  for (guint i = 0; i < self->origins->len && !allowed; i++)
    {
      Origin *origin = &g_array_index (self->origins, Origin, i);

      if (g_strcmp0 (origin->host, target.host) != 0)
        continue;
      if (origin->scheme == NULL)
        allowed = g_str_equal (target.scheme, "http") || g_str_equal (target.scheme, "https");
      else
        allowed = g_str_equal (origin->scheme, target.scheme) && origin->port == target.port;
    }
  origin_clear (&target);
  return allowed;
}
