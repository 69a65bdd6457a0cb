/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-demo-site"

#include "config.h"

#include <libsoup/soup.h>
#include <string.h>

#include "sight-demo-site.h"

static SightDemoSite *site;

typedef struct {
  guint  status;
  char  *body;
  char  *location;
  char  *cookie;
} Reply;

static void
reply_clear (Reply *reply)
{
  g_clear_pointer (&reply->body, g_free);
  g_clear_pointer (&reply->location, g_free);
  g_clear_pointer (&reply->cookie, g_free);
}

static void
send_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  GAsyncResult **out = user_data;

  *out = g_object_ref (result);
}

/* The site runs on this thread, so requests go out asynchronously. */
static void
request (Reply      *reply,
         const char *method,
         const char *path,
         const char *form,
         const char *cookie)
{
  g_autoptr(SoupSession) session = soup_session_new ();
  g_autofree char *url = g_strconcat (sight_demo_site_get_url (site), path + 1, NULL);
  g_autoptr(SoupMessage) msg = soup_message_new (method, url);
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GBytes) body = NULL;
  g_autoptr(GError) error = NULL;
  SoupMessageHeaders *headers;

  soup_message_add_flags (msg, SOUP_MESSAGE_NO_REDIRECT);
  if (form != NULL)
    {
      g_autoptr(GBytes) bytes = g_bytes_new (form, strlen (form));

      soup_message_set_request_body_from_bytes (msg, "application/x-www-form-urlencoded", bytes);
    }
  if (cookie != NULL)
    soup_message_headers_append (soup_message_get_request_headers (msg), "Cookie", cookie);
  soup_session_send_and_read_async (session, msg, G_PRIORITY_DEFAULT, NULL, send_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  body = soup_session_send_and_read_finish (session, result, &error);
  g_assert_no_error (error);
  headers = soup_message_get_response_headers (msg);
  reply->status = soup_message_get_status (msg);
  reply->body = g_strndup (g_bytes_get_data (body, NULL), g_bytes_get_size (body));
  reply->location = g_strdup (soup_message_headers_get_one (headers, "Location"));
  reply->cookie = g_strdup (soup_message_headers_get_one (headers, "Set-Cookie"));
}

static void
test_pages (void)
{
  static const struct { const char *path; guint status; const char *text; } pages[] = {
    { "/", 200, "type=\"password\"" },
    { "/login", 200, "Sign in to your workspace" },
    { "/pricing", 200, "Enterprise" },
    { "/signup", 200, "Step 1 of 3" },
    { "/status", 200, "console.error" },
    { "/static/site.css", 200, "--brand" },
    { "/static/signup.js", 200, "addEventListener" },
    { "/docs/getting-started", 404, "Page not found" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (pages); i++)
    {
      Reply reply = { 0 };

      request (&reply, "GET", pages[i].path, NULL, NULL);
      g_assert_cmpuint (reply.status, ==, pages[i].status);
      g_assert_nonnull (strstr (reply.body, pages[i].text));
      g_assert_null (strstr (reply.body, "http://"));
      g_assert_null (strstr (reply.body, "https://"));
      reply_clear (&reply);
    }
}

static void
test_sign_in (void)
{
  Reply reply = { 0 };
  g_autofree char *cookie = NULL;

  /* Signed out, the dashboard sends you to sign in. */
  request (&reply, "GET", "/dashboard", NULL, NULL);
  g_assert_cmpuint (reply.status, ==, 303);
  g_assert_true (g_str_has_suffix (reply.location, "/login"));
  reply_clear (&reply);

  /* A wrong password is refused, the email kept (escaped). */
  request (&reply, "POST", "/login", "email=member%40example.test%22%3E&password=guess", NULL);
  g_assert_cmpuint (reply.status, ==, 401);
  g_assert_nonnull (strstr (reply.body, "Wrong email or password"));
  g_assert_nonnull (strstr (reply.body, "value=\"member@example.test&quot;&gt;\""));
  g_assert_null (reply.cookie);
  reply_clear (&reply);

  request (&reply, "POST", "/login",
           "email=member%40example.test&password=" SIGHT_DEMO_SITE_PASSWORD, NULL);
  g_assert_cmpuint (reply.status, ==, 303);
  g_assert_true (g_str_has_suffix (reply.location, "/dashboard"));
  g_assert_nonnull (reply.cookie);
  cookie = g_strndup (reply.cookie, strcspn (reply.cookie, ";"));
  reply_clear (&reply);

  request (&reply, "GET", "/dashboard", NULL, cookie);
  g_assert_cmpuint (reply.status, ==, 200);
  g_assert_nonnull (strstr (reply.body, ">Trial</span>"));
  g_assert_nonnull (strstr (reply.body, "Northwind Logistics"));
  g_assert_nonnull (strstr (reply.body, "Welcome back, member@example.test."));
  reply_clear (&reply);

  request (&reply, "GET", "/dashboard", NULL, "harbor_session=forged");
  g_assert_cmpuint (reply.status, ==, 303);
  reply_clear (&reply);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  site = sight_demo_site_new ();
  if (!sight_demo_site_start (site, 0, &error))
    g_error ("%s", error->message);
  g_assert_true (g_str_has_prefix (sight_demo_site_get_url (site), "http://127.0.0.1:"));

  g_test_add_func ("/demo-site/pages", test_pages);
  g_test_add_func ("/demo-site/sign-in", test_sign_in);
  status = g_test_run ();
  g_clear_object (&site);
  return status;
}
