/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-demo-site"

#include "config.h"

#include "sight-demo-site.h"

#include <libsoup/soup.h>
#include <string.h>

#include "sight-demo-site-resources.h"
#include "sight-error.h"

#define SESSION_COOKIE "harbor_session"

struct _SightDemoSite
{
  GObject parent_instance;

  SoupServer *server;
  GHashTable *sessions;   /* token → email */
  guint       port;
  char       *url;
};

G_DEFINE_FINAL_TYPE (SightDemoSite, sight_demo_site, G_TYPE_OBJECT)

static GBytes *
lookup (const char *name)
{
  g_autofree char *path = g_strconcat ("/dev/sightline/demo-site/", name, NULL);

  return g_resource_lookup_data (sight_demo_site_get_resource (), path,
                                 G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);
}

static void
respond_bytes (SoupServerMessage *msg,
               guint              status,
               const char        *content_type,
               GBytes            *bytes)
{
  soup_server_message_set_status (msg, status, NULL);
  soup_message_headers_replace (soup_server_message_get_response_headers (msg),
                                "Cache-Control", "no-store");
  soup_server_message_set_response (msg, content_type, SOUP_MEMORY_COPY,
                                    g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
}

/* Serves a page, replacing {{name}} placeholders with HTML-escaped values. */
static void
respond_page (SoupServerMessage *msg,
              guint              status,
              const char        *name,
              const char        *error_html,
              const char        *email)
{
  g_autoptr(GBytes) bytes = lookup (name);
  g_autoptr(GString) page = NULL;
  g_autofree char *escaped_email = g_markup_escape_text (email != NULL ? email : "", -1);
  g_autoptr(GBytes) body = NULL;

  g_assert (bytes != NULL);
  page = g_string_new_len (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
  g_string_replace (page, "{{error}}", error_html != NULL ? error_html : "", 0);
  g_string_replace (page, "{{email}}", escaped_email, 0);
  body = g_string_free_to_bytes (g_steal_pointer (&page));
  respond_bytes (msg, status, "text/html; charset=utf-8", body);
}

static void
redirect (SoupServerMessage *msg,
          const char        *location)
{
  soup_server_message_set_redirect (msg, SOUP_STATUS_SEE_OTHER, location);
}

static const char *
session_email (SightDemoSite     *self,
               SoupServerMessage *msg)
{
  const char *header = soup_message_headers_get_one (soup_server_message_get_request_headers (msg),
                                                     "Cookie");
  g_autoptr(GHashTable) cookies = NULL;
  const char *token;

  if (header == NULL)
    return NULL;
  cookies = soup_header_parse_semi_param_list (header);
  token = g_hash_table_lookup (cookies, SESSION_COOKIE);
  return token != NULL ? g_hash_table_lookup (self->sessions, token) : NULL;
}

/* A host-only cookie, for whichever host the site was reached by. */
static void
set_session_cookie (SoupServerMessage *msg,
                    const char        *value,
                    gboolean           expire)
{
  g_autofree char *line = g_strdup_printf ("%s=%s; Path=/; HttpOnly; SameSite=Lax%s",
                                           SESSION_COOKIE, value, expire ? "; Max-Age=0" : "");

  soup_message_headers_append (soup_server_message_get_response_headers (msg), "Set-Cookie",
                               line);
}

static void
handle_login_post (SightDemoSite     *self,
                   SoupServerMessage *msg)
{
  SoupMessageBody *request_body = soup_server_message_get_request_body (msg);
  g_autoptr(GBytes) flat = soup_message_body_flatten (request_body);
  g_autofree char *text = g_strndup (g_bytes_get_data (flat, NULL), g_bytes_get_size (flat));
  g_autoptr(GHashTable) form = soup_form_decode (text);
  const char *email = g_hash_table_lookup (form, "email");
  const char *password = g_hash_table_lookup (form, "password");

  if (g_strcmp0 (email, SIGHT_DEMO_SITE_EMAIL) == 0 &&
      g_strcmp0 (password, SIGHT_DEMO_SITE_PASSWORD) == 0)
    {
      g_autofree char *token = g_uuid_string_random ();

      g_hash_table_insert (self->sessions, g_strdup (token), g_strdup (email));
      set_session_cookie (msg, token, FALSE);
      redirect (msg, "/dashboard");
      return;
    }
  respond_page (msg, SOUP_STATUS_UNAUTHORIZED, "login.html",
                "<p class=\"error\" role=\"alert\">Wrong email or password. "
                "Check both and try again.</p>",
                email);
}

static void
server_cb (SoupServer        *server,
           SoupServerMessage *msg,
           const char        *path,
           GHashTable        *query,
           gpointer           user_data)
{
  SightDemoSite *self = user_data;
  const char *method = soup_server_message_get_method (msg);
  gboolean is_get = g_str_equal (method, "GET") || g_str_equal (method, "HEAD");

  if (g_str_equal (method, "POST") && g_str_equal (path, "/login"))
    handle_login_post (self, msg);
  else if (g_str_equal (method, "POST") && g_str_equal (path, "/logout"))
    {
      set_session_cookie (msg, "", TRUE);
      redirect (msg, "/login");
    }
  else if (!is_get)
    soup_server_message_set_status (msg, SOUP_STATUS_METHOD_NOT_ALLOWED, NULL);
  else if (g_str_equal (path, "/") || g_str_equal (path, "/login"))
    respond_page (msg, SOUP_STATUS_OK, "login.html", NULL, NULL);
  else if (g_str_equal (path, "/dashboard"))
    {
      const char *email = session_email (self, msg);

      if (email == NULL)
        redirect (msg, "/login");
      else
        respond_page (msg, SOUP_STATUS_OK, "dashboard.html", NULL, email);
    }
  else if (g_str_equal (path, "/pricing"))
    respond_page (msg, SOUP_STATUS_OK, "pricing.html", NULL, NULL);
  else if (g_str_equal (path, "/signup"))
    respond_page (msg, SOUP_STATUS_OK, "signup.html", NULL, NULL);
  else if (g_str_equal (path, "/status"))
    respond_page (msg, SOUP_STATUS_OK, "status.html", NULL, NULL);
  else if (g_str_equal (path, "/static/site.css") || g_str_equal (path, "/static/signup.js"))
    {
      const char *name = path + strlen ("/static/");
      g_autoptr(GBytes) bytes = lookup (name);

      respond_bytes (msg, SOUP_STATUS_OK,
                     g_str_has_suffix (name, ".css") ? "text/css; charset=utf-8"
                                                     : "text/javascript; charset=utf-8",
                     bytes);
    }
  else if (g_str_equal (path, "/favicon.ico"))
    soup_server_message_set_status (msg, SOUP_STATUS_NO_CONTENT, NULL);
  else
    respond_page (msg, SOUP_STATUS_NOT_FOUND, "not-found.html", NULL, NULL);
}

gboolean
sight_demo_site_start (SightDemoSite  *self,
                       guint           port,
                       GError        **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GInetAddress) loopback = NULL;
  g_autoptr(GSocketAddress) address = NULL;
  GSList *uris;

  g_return_val_if_fail (SIGHT_IS_DEMO_SITE (self), FALSE);
  g_return_val_if_fail (self->server == NULL, FALSE);

  if (port > 65535)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "Port %u is out of range (0–65535)", port);
      return FALSE;
    }
  self->server = soup_server_new ("server-header", "Harbor-demo ", NULL);
  soup_server_add_handler (self->server, NULL, server_cb, self, NULL);
  loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  address = g_inet_socket_address_new (loopback, port);
  if (!soup_server_listen (self->server, address, 0, &local_error))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "Could not listen on 127.0.0.1:%u: %s", port, local_error->message);
      g_clear_object (&self->server);
      return FALSE;
    }
  uris = soup_server_get_uris (self->server);
  self->port = g_uri_get_port (uris->data);
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);
  self->url = g_strdup_printf ("http://127.0.0.1:%u/", self->port);
  return TRUE;
}

void
sight_demo_site_stop (SightDemoSite *self)
{
  g_return_if_fail (SIGHT_IS_DEMO_SITE (self));

  if (self->server != NULL)
    soup_server_disconnect (self->server);
  g_clear_object (&self->server);
  g_clear_pointer (&self->url, g_free);
  self->port = 0;
}

guint
sight_demo_site_get_port (SightDemoSite *self)
{
  g_return_val_if_fail (SIGHT_IS_DEMO_SITE (self), 0);
  return self->port;
}

const char *
sight_demo_site_get_url (SightDemoSite *self)
{
  g_return_val_if_fail (SIGHT_IS_DEMO_SITE (self), NULL);
  return self->url;
}

static void
sight_demo_site_dispose (GObject *object)
{
  sight_demo_site_stop (SIGHT_DEMO_SITE (object));
  G_OBJECT_CLASS (sight_demo_site_parent_class)->dispose (object);
}

static void
sight_demo_site_finalize (GObject *object)
{
  SightDemoSite *self = SIGHT_DEMO_SITE (object);

  g_clear_pointer (&self->sessions, g_hash_table_unref);
  G_OBJECT_CLASS (sight_demo_site_parent_class)->finalize (object);
}

static void
sight_demo_site_class_init (SightDemoSiteClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = sight_demo_site_dispose;
  object_class->finalize = sight_demo_site_finalize;
}

static void
sight_demo_site_init (SightDemoSite *self)
{
  self->sessions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
}

SightDemoSite *
sight_demo_site_new (void)
{
  return g_object_new (SIGHT_TYPE_DEMO_SITE, NULL);
}
