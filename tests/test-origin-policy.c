/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-origin-policy"

#include "config.h"

#include <gtk/gtk.h>
#include <libsoup/soup.h>
#include <string.h>

#include "sight-error.h"
#include "sight-origin-policy.h"
#include "sight-web-page.h"

/* Hostile pages (issue #13): a page on the allowed origin tries every way out
 * to another origin — script navigation, a javascript: link, meta refresh,
 * window.open, an iframe, a server redirect, data: and file: URLs. With
 * allowed origins set, WebKit's policy handler refuses each before any request
 * reaches the other origin, and the page logs it; without them the same page
 * does reach it, so each case can fail. */

static SoupServer *home;     /* the allowed origin */
static SoupServer *outside;  /* another origin: same host, another port */
static char *home_url;
static char *outside_url;
static guint outside_hits;

static void
home_cb (SoupServer        *server,
         SoupServerMessage *msg,
         const char        *path,
         GHashTable        *query,
         gpointer           data)
{
  g_autofree char *html = NULL;

  if (g_str_equal (path, "/redirect"))
    {
      soup_server_message_set_redirect (msg, SOUP_STATUS_FOUND, outside_url);
      return;
    }
  if (g_str_equal (path, "/refresh"))
    html = g_strdup_printf ("<meta http-equiv=refresh content='0;url=%s'><p>refreshing</p>",
                            outside_url);
  else if (g_str_equal (path, "/frame"))
    html = g_strdup_printf ("<p>framed</p><iframe src='%sframed'></iframe>", outside_url);
  else
    html = g_strdup_printf ("<title>Home</title><a id=js href=\"javascript:location.href='%sjs'\">go</a>",
                            outside_url);
  soup_server_message_set_status (msg, 200, NULL);
  soup_server_message_set_response (msg, "text/html", SOUP_MEMORY_COPY, html, strlen (html));
}

static void
outside_cb (SoupServer        *server,
            SoupServerMessage *msg,
            const char        *path,
            GHashTable        *query,
            gpointer           data)
{
  static const char html[] = "<title>Outside</title><p>you left</p>";

  outside_hits++;
  soup_server_message_set_status (msg, 200, NULL);
  soup_server_message_set_response (msg, "text/html", SOUP_MEMORY_STATIC, html, strlen (html));
}

static char *
listen (SoupServer *server)
{
  g_autoptr(GError) error = NULL;
  GSList *uris;
  char *url;

  if (!soup_server_listen_local (server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error))
    g_error ("%s", error->message);
  uris = soup_server_get_uris (server);
  url = g_uri_to_string (uris->data);
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);
  return url;
}

static void
store_result_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

static GAsyncResult *
wait_for (GAsyncResult **slot)
{
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;

  while (*slot == NULL && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_nonnull (*slot);
  return *slot;
}

static void
spin (guint ms)
{
  gint64 until = g_get_monotonic_time () + ms * 1000;

  while (g_get_monotonic_time () < until)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (5000);
}

static gboolean
load (SightWebPage *page,
      const char   *path,
      GError      **error)
{
  g_autofree char *url = g_strconcat (home_url, path + 1, NULL);
  g_autoptr(GAsyncResult) result = NULL;

  sight_web_page_load_async (page, url, SIGHT_WAIT_UNTIL_LOAD, 20000, NULL, store_result_cb,
                             &result);
  return sight_web_page_load_finish (page, wait_for (&result), error);
}

static void
run_script (SightWebPage *page,
            const char   *body)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) answer = NULL;

  sight_web_page_evaluate_async (page, body, NULL, 5000, NULL, store_result_cb, &result);
  answer = sight_web_page_evaluate_finish (page, wait_for (&result), &error);
  g_assert_no_error (error);
}

static guint
count_blocked (SightWebPage *page,
               const char   *url_part)
{
  GPtrArray *log = sight_web_page_get_log (page);
  guint n = 0;

  for (guint i = 0; i < log->len; i++)
    {
      SightLogEntry *entry = log->pdata[i];

      if (entry->kind == SIGHT_LOG_BLOCKED && entry->url != NULL &&
          strstr (entry->url, url_part) != NULL)
        n++;
    }
  return n;
}

static SightWebPage *
new_page (gboolean guarded)
{
  SightWebPage *page = sight_web_page_new ();
  g_autofree char *origin = g_strndup (home_url, strlen (home_url) - 1);  /* no final / */
  const char *origins[] = { origin, NULL };
  g_autoptr(GError) error = NULL;

  if (guarded)
    {
      g_assert_true (sight_web_page_set_allowed_origins (page, origins, &error));
      g_assert_no_error (error);
    }
  return page;
}

/* Each way out, from the home page: what the test does, and the URL part of
 * the outside address it goes to. */
typedef enum { BY_SCRIPT, BY_JS_LINK, BY_WINDOW_OPEN, BY_DATA_URL, BY_FILE_URL,
               BY_META_REFRESH, BY_IFRAME, BY_REDIRECT } WayOut;

static void
try_way_out (SightWebPage *page,
             WayOut        way)
{
  g_autofree char *script = NULL;
  g_autoptr(GError) error = NULL;

  switch (way)
    {
    case BY_SCRIPT:
      g_assert_true (load (page, "/", &error));
      script = g_strdup_printf ("location.href = '%sscript'; return 1;", outside_url);
      run_script (page, script);
      break;
    case BY_JS_LINK:
      g_assert_true (load (page, "/", &error));
      run_script (page, "document.getElementById ('js').click (); return 1;");
      break;
    case BY_WINDOW_OPEN:
      g_assert_true (load (page, "/", &error));
      script = g_strdup_printf ("window.open ('%spopup'); return 1;", outside_url);
      run_script (page, script);
      break;
    case BY_DATA_URL:
      g_assert_true (load (page, "/", &error));
      run_script (page, "location.href = 'data:text/html,<p>data</p>'; return 1;");
      break;
    case BY_FILE_URL:
      g_assert_true (load (page, "/", &error));
      run_script (page, "location.href = 'file:///etc/hostname'; return 1;");
      break;
    case BY_META_REFRESH:
      g_assert_true (load (page, "/refresh", &error));
      break;
    case BY_IFRAME:
      g_assert_true (load (page, "/frame", &error));
      break;
    case BY_REDIRECT:
      /* The load itself is refused: POLICY_DENIED when guarded. */
      if (!load (page, "/redirect", &error))
        {
          g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_POLICY_DENIED);
          g_assert_nonnull (strstr (error->message, "outside the allowed origins"));
          g_clear_error (&error);
        }
      break;
    default:
      g_assert_not_reached ();
    }
  g_assert_no_error (error);
  spin (1000);
}

static void
test_ways_out (void)
{
  static const struct {
    WayOut      way;
    const char *name;
    const char *blocked_url;   /* what the log names; NULL: the outside origin */
    gboolean    reaches_outside;  /* unguarded, does a request arrive there? */
    gboolean    logged;           /* guarded, is it refused by our policy handler? */
  } cases[] = {
    { BY_SCRIPT, "script navigation", NULL, TRUE, TRUE },
    { BY_JS_LINK, "javascript: link", NULL, TRUE, TRUE },
    { BY_WINDOW_OPEN, "window.open", NULL, TRUE, TRUE },
    { BY_META_REFRESH, "meta refresh", NULL, TRUE, TRUE },
    { BY_IFRAME, "iframe", NULL, TRUE, TRUE },
    { BY_REDIRECT, "server redirect", NULL, TRUE, TRUE },
    { BY_DATA_URL, "data: URL", "data:", FALSE, TRUE },
    /* WebKit itself refuses a web page's navigation to a local file, before
     * any policy decision is asked: the page stays, nothing is logged. */
    { BY_FILE_URL, "file: URL", "file:", FALSE, FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const char *blocked = cases[i].blocked_url ? cases[i].blocked_url : outside_url;

      /* Without allowed origins the page does get out. */
      if (cases[i].reaches_outside)
        {
          g_autoptr(SightWebPage) open_page = new_page (FALSE);

          outside_hits = 0;
          try_way_out (open_page, cases[i].way);
          g_test_message ("%s, unguarded: %u requests outside", cases[i].name, outside_hits);
          g_assert_cmpuint (outside_hits, >, 0);
          g_assert_cmpuint (count_blocked (open_page, blocked), ==, 0);
        }
      {
        g_autoptr(SightWebPage) page = new_page (TRUE);

        outside_hits = 0;
        try_way_out (page, cases[i].way);
        g_test_message ("%s, guarded: %u requests outside, %u blocked", cases[i].name,
                        outside_hits, count_blocked (page, blocked));
        g_assert_cmpuint (outside_hits, ==, 0);
        g_assert_cmpuint (count_blocked (page, blocked), >=, cases[i].logged ? 1 : 0);
        g_test_message ("%s, guarded: the page shows %s", cases[i].name,
                        sight_web_page_get_uri (page));
        /* A refused redirect fails the load, which leaves no page to stay on. */
        if (cases[i].way != BY_REDIRECT)
          g_assert_true (g_str_has_prefix (sight_web_page_get_uri (page), home_url));
        g_assert_cmpuint (sight_web_page_get_popups (page)->len, ==, 0);
      }
    }
}

static void
test_policy_entries (void)
{
  const char *entries[] = { "https://shop.example", "http://127.0.0.1:8765", "Docs.Example", NULL };
  const char *bad_origin[] = { "https://", NULL };
  const char *bad_host[] = { "docs.example/path", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(SightOriginPolicy) policy = sight_origin_policy_new (entries, &error);

  g_assert_no_error (error);
  g_assert_true (sight_origin_policy_allows (policy, "https://shop.example/cart?x=1"));
  g_assert_true (sight_origin_policy_allows (policy, "https://shop.example:443/"));
  g_assert_false (sight_origin_policy_allows (policy, "http://shop.example/"));
  g_assert_false (sight_origin_policy_allows (policy, "https://shop.example:8443/"));
  g_assert_false (sight_origin_policy_allows (policy, "https://evil.shop.example/"));
  g_assert_true (sight_origin_policy_allows (policy, "http://127.0.0.1:8765/login"));
  g_assert_false (sight_origin_policy_allows (policy, "http://127.0.0.1:8766/"));
  g_assert_true (sight_origin_policy_allows (policy, "http://docs.example:3000/"));
  g_assert_true (sight_origin_policy_allows (policy, "https://DOCS.example/"));
  g_assert_false (sight_origin_policy_allows (policy, "ftp://docs.example/"));
  g_assert_true (sight_origin_policy_allows (policy, "blob:https://shop.example/1b2c"));
  g_assert_false (sight_origin_policy_allows (policy, "blob:https://evil.example/1b2c"));
  g_assert_true (sight_origin_policy_allows (policy, "about:blank"));
  g_assert_false (sight_origin_policy_allows (policy, "data:text/html,hi"));
  g_assert_false (sight_origin_policy_allows (policy, "file:///etc/passwd"));
  g_assert_false (sight_origin_policy_allows (policy, "javascript:alert(1)"));
  g_assert_false (sight_origin_policy_allows (policy, "not a url"));
  g_assert_false (sight_origin_policy_allows (policy, NULL));

  g_assert_null (sight_origin_policy_new (bad_origin, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (sight_origin_policy_new (bad_host, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
}

/* A host in another script is held in the punycode form WebKit puts in
 * URLs; the content rules carry that ASCII form (url-filter takes ASCII
 * only); a host with no ASCII form is refused (issue #26, item 7). */
static void
test_policy_idna (void)
{
  const char *entries[] = { "https://B\u00fccher.example", "\u00e9cole.example", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(SightOriginPolicy) policy = sight_origin_policy_new (entries, &error);
  g_autoptr(GString) long_label = g_string_new ("");
  g_autofree char *rules = NULL;
  const char *unusable[] = { NULL, NULL };

  g_assert_no_error (error);
  g_assert_true (sight_origin_policy_allows (policy, "https://xn--bcher-kva.example/katalog"));
  g_assert_false (sight_origin_policy_allows (policy, "http://xn--bcher-kva.example/"));
  g_assert_false (sight_origin_policy_allows (policy, "https://bucher.example/"));
  g_assert_true (sight_origin_policy_allows (policy, "http://xn--cole-9oa.example:8080/"));
  rules = sight_origin_policy_to_content_rules (policy);
  g_assert_nonnull (strstr (rules, "xn--bcher-kva\\\\.example"));
  g_assert_nonnull (strstr (rules, "xn--cole-9oa\\\\.example"));
  for (const char *c = rules; *c != '\0'; c++)
    g_assert_cmpint ((guchar) *c, <, 0x80);

  for (guint i = 0; i < 70; i++)
    g_string_append (long_label, "\u00fc");
  g_string_append (long_label, ".example");
  unusable[0] = long_label->str;
  g_assert_null (sight_origin_policy_new (unusable, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "no ASCII (IDNA) form"));
}

int
main (int    argc,
      char **argv)
{
  int status;

  gtk_test_init (&argc, &argv, NULL);
  home = soup_server_new (NULL, NULL);
  soup_server_add_handler (home, NULL, home_cb, NULL, NULL);
  home_url = listen (home);
  outside = soup_server_new (NULL, NULL);
  soup_server_add_handler (outside, NULL, outside_cb, NULL, NULL);
  outside_url = listen (outside);

  g_test_add_func ("/origin-policy/entries", test_policy_entries);
  g_test_add_func ("/origin-policy/idna", test_policy_idna);
  g_test_add_func ("/origin-policy/ways-out", test_ways_out);
  status = g_test_run ();

  g_clear_object (&home);
  g_clear_object (&outside);
  g_free (home_url);
  g_free (outside_url);
  return status;
}
