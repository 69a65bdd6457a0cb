/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <libsoup/soup.h>
#include <string.h>

#include "sight-error.h"
#include "sight-scripted-model.h"
#include "sight-session.h"
#include "sight-smoke.h"
#include "sight-store.h"
#include "sight-suite.h"
#include "sight-web-page.h"

/* An agent that would leave the site (issue #26, item 7): a test file whose
 * act step the scripted model answers by clicking a link to another origin
 * (another port on loopback). Run as a suite, the page is held to the test's
 * start origin: the other server gets no request, and the step says which
 * URL was refused. With the other origin in the project's allowedOrigins the
 * same click gets there, so the check can fail.
 *
 * Subresources too: a guarded page whose HTML loads an image, calls fetch()
 * and sends a beacon to the other origin; the other server sees none of them
 * unless that origin is allowed. */

static SoupServer *home, *elsewhere;
static char *home_url, *elsewhere_url;
static guint elsewhere_requests;
static guint elsewhere_subresources;   /* requests under /sub/ */

static void
home_cb (SoupServer        *server,
         SoupServerMessage *msg,
         const char        *path,
         GHashTable        *query,
         gpointer           user_data)
{
  g_autofree char *body = NULL;

  if (g_str_equal (path, "/subresources"))
    body = g_strdup_printf ("<!doctype html><html lang=en><title>Subresources</title>"
                            "<img src=\"%ssub/img.png\" alt=pixel>"
                            "<script>fetch('%ssub/fetch').catch(() => {});"
                            "navigator.sendBeacon('%ssub/beacon', 'x');</script></html>",
                            elsewhere_url, elsewhere_url, elsewhere_url);
  else
    body = g_strdup_printf ("<!doctype html><html lang=en><title>Home</title>"
                            "<a href=\"%slanding\">Elsewhere</a>"
                            "<img src=\"%spixel.png\" alt=\"\"></html>",
                            elsewhere_url, elsewhere_url);

  soup_server_message_set_status (msg, 200, NULL);
  soup_server_message_set_response (msg, "text/html", SOUP_MEMORY_COPY, body, strlen (body));
}

static void
elsewhere_cb (SoupServer        *server,
              SoupServerMessage *msg,
              const char        *path,
              GHashTable        *query,
              gpointer           user_data)
{
  static const char body[] = "<!doctype html><html lang=en><title>Elsewhere</title><h1>Away</h1></html>";

  elsewhere_requests++;
  if (g_str_has_prefix (path, "/sub/"))
    elsewhere_subresources++;
  soup_server_message_set_status (msg, 200, NULL);
  soup_server_message_set_response (msg, "text/html", SOUP_MEMORY_STATIC, body, strlen (body));
}

static char *
serve (SoupServer **server,
       SoupServerCallback callback)
{
  g_autoptr(GError) error = NULL;
  GSList *uris;
  char *url;

  *server = soup_server_new (NULL, NULL);
  soup_server_add_handler (*server, NULL, callback, NULL, NULL);
  g_assert_true (soup_server_listen_local (*server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error));
  uris = soup_server_get_uris (*server);
  url = g_uri_to_string (uris->data);
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);
  return url;
}

static void
done_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

/* Runs the one-step test in a project of its own; the suite's JSON as text. */
static char *
run_leaving (SightScriptedModel *model,
             const char         *allowed)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("sight-origin-guard-XXXXXX", &error);
  g_autofree char *project_path = g_build_filename (dir, "sightline.json", NULL);
  g_autofree char *test_path = g_build_filename (dir, "leave.sightline.json", NULL);
  g_autofree char *db = g_build_filename (dir, "runs.db", NULL);
  g_autofree char *project = NULL;
  g_autofree char *test = NULL;
  g_autoptr(SightStore) store = NULL;
  g_autoptr(GPtrArray) files = NULL;
  g_autoptr(JsonObject) args = json_object_new ();
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(JsonNode) node = NULL;
  const char *paths[] = { test_path, NULL };

  project = g_strdup_printf ("{\"agents\": {\"default\": {\"model\": \"openai:scripted\", "
                             "\"baseUrl\": \"%s\"}}%s%s}",
                             sight_scripted_model_get_openai_base_url (model),
                             allowed != NULL ? ", \"allowedOrigins\": " : "",
                             allowed != NULL ? allowed : "");
  test = g_strdup_printf ("{\"name\": \"Leaves\", \"url\": \"%s\", "
                          "\"steps\": [{\"act\": \"follow the Elsewhere link\"}]}", home_url);
  g_assert_true (g_file_set_contents (project_path, project, -1, NULL));
  g_assert_true (g_file_set_contents (test_path, test, -1, NULL));

  sight_scripted_model_load_script (model, "[]", NULL);
  sight_scripted_model_push (model, "{\"tool_calls\": [{\"name\": \"click\", \"arguments\": {\"ref\": \"e1\"}}]}");
  sight_scripted_model_push (model, "{\"tool_calls\": [{\"name\": \"done\", \"arguments\": "
                                    "{\"verdict\": \"pass\", \"summary\": \"followed the link\"}}]}");
  store = sight_store_new (db, &error);
  g_assert_no_error (error);
  files = sight_suite_load_files (paths, &error);
  g_assert_no_error (error);
  sight_suite_run_async (store, files, args, NULL, NULL, NULL, done_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  node = sight_suite_run_finish (result, &error);
  g_assert_no_error (error);
  g_unlink (test_path);
  g_unlink (project_path);
  return json_to_string (node, FALSE);
}

static void
test_act_leaves (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightScriptedModel) model = sight_scripted_model_new (0, &error);
  g_autofree char *guarded = NULL;
  g_autofree char *widened = NULL;
  g_autofree char *origin = g_strndup (elsewhere_url, strlen (elsewhere_url) - 1);
  g_autofree char *allowed = g_strdup_printf ("[\"%s\"]", origin);
  g_autofree char *refused = g_strdup_printf ("%slanding was refused", elsewhere_url);
  g_autofree char *blocked_image = g_strdup_printf ("\"url\":\"%spixel.png\",\"status\":0,"
                                                    "\"error\":\"Blocked a subresource (img) "
                                                    "outside the allowed origins\"",
                                                    elsewhere_url);

  g_assert_no_error (error);
  guarded = run_leaving (model, NULL);
  g_test_message ("guarded: %u requests elsewhere", elsewhere_requests);
  g_assert_cmpuint (elsewhere_requests, ==, 0);
  g_assert_nonnull (strstr (guarded, refused));
  /* The start page's image elsewhere is in the report's failed requests. */
  g_assert_nonnull (strstr (guarded, blocked_image));

  widened = run_leaving (model, allowed);
  g_test_message ("allowedOrigins %s: %u requests elsewhere", allowed, elsewhere_requests);
  g_assert_cmpuint (elsewhere_requests, >=, 1);
  g_assert_null (strstr (widened, "was refused"));
  g_assert_null (strstr (widened, "Blocked a subresource"));
}

static gboolean
flag_cb (gpointer user_data)
{
  *(gboolean *) user_data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Loads /subresources on a page allowed @origins, waits for the network to
 * go quiet and a second more (the beacon), and counts what reached the
 * other server. */
/* Filter stores being compiled in the test's TMPDIR (see main). */
static guint
filter_stores (void)
{
  g_autoptr(GDir) dir = g_dir_open (g_get_tmp_dir (), 0, NULL);
  const char *name;
  guint n = 0;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_prefix (name, "sightline-filter-"))
      n++;
  return n;
}

static guint stores_at_guard;   /* filter_stores() as the last page was guarded */

static guint
subresources_reaching (const char * const *origins,
                       GString            *blocked)
{
  g_autoptr(SightWebPage) page = sight_web_page_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  g_autofree char *url = g_strconcat (home_url, "subresources", NULL);
  gboolean waited = FALSE;
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;

  g_assert_true (sight_web_page_set_allowed_origins (page, origins, &error));
  g_assert_no_error (error);
  stores_at_guard = filter_stores ();
  elsewhere_subresources = 0;
  sight_web_page_load_async (page, url, SIGHT_WAIT_UNTIL_NETWORKIDLE, 20000, NULL, done_cb,
                             &result);
  while (result == NULL && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_nonnull (result);
  g_assert_true (sight_web_page_load_finish (page, result, &error));
  g_assert_no_error (error);
  g_timeout_add (1000, flag_cb, &waited);
  while (!waited)
    g_main_context_iteration (NULL, TRUE);
  /* What the page's log says the guard refused, "kind url" per line. */
  for (guint i = 0; i < sight_web_page_get_log (page)->len; i++)
    {
      SightLogEntry *entry = g_ptr_array_index (sight_web_page_get_log (page), i);

      if (entry->kind == SIGHT_LOG_BLOCKED)
        g_string_append_printf (blocked, "%s %s\n", entry->text, entry->url);
    }
  return elsewhere_subresources;
}

static void
test_subresources (void)
{
  g_autofree char *own = g_strndup (home_url, strlen (home_url) - 1);
  g_autofree char *other = g_strndup (elsewhere_url, strlen (elsewhere_url) - 1);
  const char *guarded[] = { own, NULL };
  const char *widened[] = { own, other, NULL };
  guint n;

  g_autoptr(GString) blocked = g_string_new ("");
  g_autofree char *img = g_strdup_printf ("(img) outside the allowed origins %ssub/img.png\n",
                                          elsewhere_url);
  g_autofree char *fetched = g_strdup_printf ("(fetch) outside the allowed origins %ssub/fetch\n",
                                              elsewhere_url);

  n = subresources_reaching (guarded, blocked);
  g_test_message ("guarded: %u subresource requests elsewhere; logged:\n%s", n, blocked->str);
  g_assert_cmpuint (n, ==, 0);
  /* Each refused load is named in the log, which the steps read
   * (navigationBlocked); the beacon fails unseen. */
  g_assert_nonnull (strstr (blocked->str, img));
  g_assert_nonnull (strstr (blocked->str, fetched));
  g_string_truncate (blocked, 0);
  n = subresources_reaching (widened, blocked);
  g_test_message ("elsewhere allowed: %u subresource requests elsewhere", n);
  g_assert_cmpuint (n, ==, 3);
  g_assert_cmpstr (blocked->str, ==, "");
}

/* Pages guarded alike share one compiled filter (every test of a suite on
 * one site): the second page's guard is in at once, without a store compiled
 * for it, and it holds that page to its origins as the first did. */
static void
test_filter_shared (void)
{
  g_autofree char *own = g_strndup (home_url, strlen (home_url) - 1);
  const char *origins[] = { own, "https://shared.example", NULL };
  g_autofree char *img = g_strdup_printf ("(img) outside the allowed origins %ssub/img.png\n",
                                          elsewhere_url);

  for (guint round = 0; round < 2; round++)
    {
      g_autoptr(GString) blocked = g_string_new ("");
      guint n = subresources_reaching (origins, blocked);

      g_test_message ("page %u: %u filter stores as it was guarded, %u subresource requests "
                      "elsewhere", round + 1, stores_at_guard, n);
      g_assert_cmpuint (stores_at_guard, ==, round == 0 ? 1 : 0);
      g_assert_cmpuint (n, ==, 0);
      g_assert_nonnull (strstr (blocked->str, img));
    }
}

/* Loads /subresources on a new page allowed @origins; the load's error, or
 * NULL when it loaded. */
static GError *
load_guarded (const char * const *origins)
{
  g_autoptr(SightWebPage) page = sight_web_page_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  g_autofree char *url = g_strconcat (home_url, "subresources", NULL);
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;

  g_assert_true (sight_web_page_set_allowed_origins (page, origins, &error));
  g_assert_no_error (error);
  sight_web_page_load_async (page, url, SIGHT_WAIT_UNTIL_LOAD, 20000, NULL, done_cb, &result);
  while (result == NULL && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_nonnull (result);
  if (sight_web_page_load_finish (page, result, &error))
    {
      g_assert_cmpstr (sight_web_page_get_uri (page), ==, url);
      return NULL;
    }
  g_assert_cmpstr (sight_web_page_get_uri (page), !=, url);
  return g_steal_pointer (&error);
}

/* A filter that cannot be compiled (here: its store has no temporary
 * folder to go in) does not leave the page unguarded: the load fails. */
static void
test_filter_unusable (void)
{
  g_autoptr(SightWebPage) page = sight_web_page_new ();
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *own = g_strndup (home_url, strlen (home_url) - 1);
  g_autofree char *url = g_strconcat (home_url, "subresources", NULL);
  g_autofree char *moved = g_strconcat (g_get_tmp_dir (), ".away", NULL);
  /* rules no page compiled before (compiled ones are shared) */
  const char *origins[] = { own, "https://unusable.example", NULL };
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;

  /* The test's own TMPDIR (see main) is moved away while the filter's store
   * would be made in it, and back. */
  g_assert_cmpint (g_rename (g_get_tmp_dir (), moved), ==, 0);
  g_assert_true (sight_web_page_set_allowed_origins (page, origins, &error));
  g_assert_cmpint (g_rename (moved, g_get_tmp_dir ()), ==, 0);
  g_assert_no_error (error);
  sight_web_page_load_async (page, url, SIGHT_WAIT_UNTIL_LOAD, 20000, NULL, done_cb, &result);
  while (result == NULL && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_nonnull (result);
  g_assert_false (sight_web_page_load_finish (page, result, &error));
  g_test_message ("unusable filter: %s", error->message);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "subresource filter"));
  g_assert_cmpstr (sight_web_page_get_uri (page), !=, url);
}

/* A bare host in another script among the allowed ones (issue #26, item 7):
 * it is held in its punycode form, so the filter compiles and the page
 * loads (before, the host went into the content rules as written, which
 * WebKit refuses, and every load of the page failed). */
static void
test_idna_host (void)
{
  g_autofree char *own = g_strndup (home_url, strlen (home_url) - 1);
  const char *origins[] = { own, "b\u00fccher.example", NULL };
  g_autoptr(GError) error = load_guarded (origins);

  if (error != NULL)
    g_test_message ("load: %s", error->message);
  g_assert_no_error (error);
}

/* Runs the main loop for @ms. */
static void
spin (guint ms)
{
  gboolean waited = FALSE;

  g_timeout_add (ms, flag_cb, &waited);
  while (!waited)
    g_main_context_iteration (NULL, TRUE);
}

/* A navigation the page starts itself while the subresource filter compiles
 * (issue #26, item 7): it waits for the filter, so the page it opens loads
 * nothing from the other origin. The list holds 3,000 more origins, which
 * makes the compile take longer than the script that navigates. */
static void
test_navigation_while_compiling (void)
{
  g_autoptr(SightWebPage) page = sight_web_page_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GAsyncResult) loaded = NULL;
  g_autoptr(GAsyncResult) evaluated = NULL;
  g_autoptr(GPtrArray) origins = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(JsonNode) answer = NULL;
  g_autofree char *url = g_strconcat (home_url, "subresources", NULL);
  g_autofree char *script = g_strdup_printf ("location.href = '%s'; return true;", url);
  gint64 started, deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;

  sight_web_page_load_async (page, home_url, SIGHT_WAIT_UNTIL_LOAD, 20000, NULL, done_cb, &loaded);
  while (loaded == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (sight_web_page_load_finish (page, loaded, &error));
  g_assert_no_error (error);

  g_ptr_array_add (origins, g_strndup (home_url, strlen (home_url) - 1));
  for (guint i = 0; i < 3000; i++)
    g_ptr_array_add (origins, g_strdup_printf ("https://host-%u.example", i));
  g_ptr_array_add (origins, NULL);
  elsewhere_subresources = 0;
  started = g_get_monotonic_time ();
  g_assert_true (sight_web_page_set_allowed_origins (page, (const char * const *) origins->pdata,
                                                     &error));
  g_assert_no_error (error);
  sight_web_page_evaluate_async (page, script, NULL, 5000, NULL, done_cb, &evaluated);
  while (evaluated == NULL)
    g_main_context_iteration (NULL, TRUE);
  answer = sight_web_page_evaluate_finish (page, evaluated, NULL);
  g_test_message ("navigation asked for after %" G_GINT64_FORMAT " ms",
                  (g_get_monotonic_time () - started) / 1000);

  while (g_get_monotonic_time () < deadline &&
         (g_strcmp0 (sight_web_page_get_uri (page), url) != 0 ||
          !sight_web_page_is_network_idle (page, 500)))
    spin (50);
  g_assert_cmpstr (sight_web_page_get_uri (page), ==, url);
  spin (1000);   /* the beacon */
  g_test_message ("navigated while compiling: %u subresource requests elsewhere",
                  elsewhere_subresources);
  g_assert_cmpuint (elsewhere_subresources, ==, 0);
}

/* Smoke tests are held to their start origin too (issue #26, item 7): a
 * smoke test whose step clicks the link to the other origin, its link check
 * off; the other server sees no request. */
static void
test_smoke (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("sight-origin-guard-XXXXXX", &error);
  g_autofree char *db = g_build_filename (dir, "runs.db", NULL);
  g_autoptr(SightStore) store = NULL;
  g_autoptr(JsonObject) args = json_object_new ();
  g_autoptr(JsonArray) steps = json_array_new ();
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(JsonNode) report = NULL;

  g_assert_no_error (error);
  store = sight_store_new (db, &error);
  g_assert_no_error (error);
  elsewhere_requests = 0;
  json_array_add_string_element (steps, "click \"Elsewhere\"");
  json_object_set_string_member (args, "url", home_url);
  json_object_set_array_member (args, "steps", json_array_ref (steps));
  json_object_set_int_member (args, "maxLinks", 0);
  sight_smoke_test_async (store, args, NULL, done_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  report = sight_smoke_test_finish (result, &error);
  g_assert_no_error (error);
  spin (1000);
  g_test_message ("smoke test: %u requests elsewhere", elsewhere_requests);
  g_assert_cmpuint (elsewhere_requests, ==, 0);
  g_clear_object (&store);
  g_unlink (db);
}

/* So are sessions opened without allowHosts (MCP's create_session, and the
 * skills and tasks that open one): a script on the session's page sends it
 * to the other origin; the other server sees no request. */
static void
test_session (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *script = g_strdup_printf ("location.href = '%slanding'; return true;",
                                             elsewhere_url);
  g_autoptr(JsonObject) args = json_object_new ();
  g_autoptr(GAsyncResult) opened = NULL;
  g_autoptr(GAsyncResult) evaluated = NULL;
  g_autoptr(JsonNode) answer = NULL;
  g_autoptr(SightSession) session = NULL;
  SightWebPage *page;

  elsewhere_requests = 0;
  json_object_set_string_member (args, "startUrl", home_url);
  sight_session_registry_create_async (sight_session_registry_get_default (), args, NULL,
                                       done_cb, &opened);
  while (opened == NULL)
    g_main_context_iteration (NULL, TRUE);
  session = sight_session_registry_create_finish (sight_session_registry_get_default (), opened,
                                                  &error);
  g_assert_no_error (error);
  page = sight_session_get_page (session);
  sight_web_page_evaluate_async (page, script, NULL, 5000, NULL, done_cb, &evaluated);
  while (evaluated == NULL)
    g_main_context_iteration (NULL, TRUE);
  answer = sight_web_page_evaluate_finish (page, evaluated, NULL);
  spin (1500);
  g_test_message ("session without allowHosts: %u requests elsewhere", elsewhere_requests);
  g_assert_cmpuint (elsewhere_requests, ==, 0);
  g_assert_cmpstr (sight_web_page_get_uri (page), ==, home_url);
  sight_session_stop (session, "stopped");
}

int
main (int    argc,
      char **argv)
{
  const char *outer = g_getenv ("TMPDIR");
  g_autofree char *tmp = g_build_filename (outer != NULL && *outer != '\0' ? outer : "/tmp",
                                           "sight-origin-guard-tmp-XXXXXX", NULL);
  int status;

  /* A temporary folder of the test's own (filter-unusable moves it away);
   * GLib reads TMPDIR once, on first use. */
  g_assert_nonnull (g_mkdtemp (tmp));
  g_setenv ("TMPDIR", tmp, TRUE);
  gtk_test_init (&argc, &argv, NULL);
  g_assert_cmpstr (g_get_tmp_dir (), ==, tmp);
  g_unsetenv ("SIGHTLINE_MODEL");
  g_unsetenv ("OPENAI_API_KEY");
  elsewhere_url = serve (&elsewhere, elsewhere_cb);
  home_url = serve (&home, home_cb);
  g_test_add_func ("/origin-guard/act-leaves", test_act_leaves);
  g_test_add_func ("/origin-guard/subresources", test_subresources);
  g_test_add_func ("/origin-guard/filter-shared", test_filter_shared);
  g_test_add_func ("/origin-guard/filter-unusable", test_filter_unusable);
  g_test_add_func ("/origin-guard/idna-host", test_idna_host);
  g_test_add_func ("/origin-guard/navigation-while-compiling", test_navigation_while_compiling);
  g_test_add_func ("/origin-guard/smoke", test_smoke);
  g_test_add_func ("/origin-guard/session", test_session);
  status = g_test_run ();
  g_rmdir (tmp);
  return status;
}
