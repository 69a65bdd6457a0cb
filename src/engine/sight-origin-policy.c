/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-origin-policy"

#include "config.h"

#include "sight-origin-policy.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include "sight-error.h"
#include "sight-secrets.h"

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

/* Scheme, host (its ASCII form) and port of @uri; FALSE when it has no host
 * or the host has no ASCII form. */
static gboolean
parse_origin (const char *uri,
              Origin     *out)
{
  g_autoptr(GUri) parsed = g_uri_parse (uri, G_URI_FLAGS_ENCODED | G_URI_FLAGS_PARSE_RELAXED,
                                        NULL);
  char *host;

  if (parsed == NULL || (host = sight_host_to_ascii (g_uri_get_host (parsed))) == NULL)
    return FALSE;
  out->scheme = g_ascii_strdown (g_uri_get_scheme (parsed), -1);
  out->host = host;
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
                           "“%s” is not an origin (scheme://host[:port]) with a host that "
                           "has an ASCII (IDNA) form", entry);
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
          /* WebKit's URLs carry a host in another script as punycode, and its
           * content-rule url-filter takes ASCII only. */
          origin.host = sight_host_to_ascii (entry);
          if (origin.host == NULL)
            {
              g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                           "“%s”: the host has no ASCII (IDNA) form (each label may be at "
                           "most 63 characters once encoded)", entry);
              return NULL;
            }
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

/* Every kind of load but "document" and "popup": pages, frames and new
 * windows stay with the navigation policy handler, which logs them. */
static const char * const subresource_types[] = {
  "image", "style-sheet", "script", "font", "raw", "svg-document", "media", "ping", "fetch",
  "websocket", "other", NULL
};

static void
add_rule (JsonBuilder        *builder,
          const char         *url_filter,
          const char * const *types,
          const char         *action)
{
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "trigger");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "url-filter");
  json_builder_add_string_value (builder, url_filter);
  if (types != NULL)
    {
      json_builder_set_member_name (builder, "resource-type");
      json_builder_begin_array (builder);
      for (guint i = 0; types[i] != NULL; i++)
        json_builder_add_string_value (builder, types[i]);
      json_builder_end_array (builder);
    }
  json_builder_end_object (builder);
  json_builder_set_member_name (builder, "action");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, action);
  json_builder_end_object (builder);
  json_builder_end_object (builder);
}

/* "^scheme://host:port/" for one scheme; the port optional where it is the
 * scheme's default (WebKit drops it from the URL) or any (a bare host). */
static void
add_origin_rule (JsonBuilder  *builder,
                 const char   *scheme,
                 const Origin *origin)
{
  g_autoptr(GString) filter = g_string_new ("^");
  gboolean bracket = strchr (origin->host, ':') != NULL;   /* IPv6 */

  g_string_append_printf (filter, "%s://%s", scheme, bracket ? "\\[" : "");
  for (const char *c = origin->host; *c != '\0'; c++)
    {
      if (strchr (".*+?()[]{}|^$\\", *c) != NULL)
        g_string_append_c (filter, '\\');
      g_string_append_c (filter, *c);
    }
  if (bracket)
    g_string_append (filter, "\\]");
  if (origin->port < 0)
    g_string_append (filter, "(:[0-9]+)?");
  else if (origin->port == default_port (origin->scheme))
    g_string_append_printf (filter, "(:%d)?", origin->port);
  else
    g_string_append_printf (filter, ":%d", origin->port);
  g_string_append_c (filter, '/');
  add_rule (builder, filter->str, NULL, "ignore-previous-rules");
}

char *
sight_origin_policy_to_content_rules (SightOriginPolicy *self)
{
  static const char * const internal[] = { "^data:", "^blob:", "^about:" };
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_array (builder);
  add_rule (builder, ".*", subresource_types, "block");
  for (guint i = 0; i < G_N_ELEMENTS (internal); i++)
    add_rule (builder, internal[i], NULL, "ignore-previous-rules");
  for (guint i = 0; i < self->origins->len; i++)
    {
      Origin *origin = &g_array_index (self->origins, Origin, i);
      const char *scheme = origin->scheme;

      if (scheme == NULL)
        {
          add_origin_rule (builder, "https?", origin);
          add_origin_rule (builder, "wss?", origin);
          continue;
        }
      add_origin_rule (builder, scheme, origin);
      if (g_str_equal (scheme, "http") || g_str_equal (scheme, "https"))
        add_origin_rule (builder, g_str_equal (scheme, "http") ? "ws" : "wss", origin);
    }
  json_builder_end_array (builder);
  root = json_builder_get_root (builder);
  return json_to_string (root, FALSE);
}
