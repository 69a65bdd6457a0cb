/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-wpt-a11y"

/* The observation's roles and names against the Web Platform Tests'
 * accessibility pages (accname/, html-aam/, wai-aria/role/ of
 * ../shared/wpt-a11y, or $WPT_A11Y_DIR), served as they are over loopback
 * and loaded one by one in WebKitGTK. For every element a page expects a
 * name or a role of (wpt/wpt-a11y-check.js reads them as the folder's README
 * says they are written), the answer of snapshot.js's describe(), the code
 * the observation names and roles elements with, is compared with it. Prints
 * each file's score and the totals (tentative files apart), writes every
 * failure to wpt-a11y-failures.txt next to this program, and fails when the
 * non-tentative totals fall below the level reached (MIN_* below). */

#include "config.h"

#include <gtk/gtk.h>
#include <json-glib/json-glib.h>
#include <libsoup/soup.h>
#include <string.h>

#include "sight-observation.h"
#include "sight-web-page.h"

/* The measured level: raise these as the rules improve, never lower them. */
#define MIN_NAMES_PASSED 1137
#define MIN_ROLES_PASSED 195

#define LOAD_TIMEOUT_MS 30000
#define CHECK_TIMEOUT_MS 30000

static char *root_dir;

typedef struct {
  guint names, names_passed, roles, roles_passed, open;
} Score;

static void
server_cb (SoupServer        *server,
           SoupServerMessage *msg,
           const char        *path,
           GHashTable        *query,
           gpointer           user_data)
{
  g_autofree char *file = NULL;
  g_autofree char *canonical = NULL;
  g_autofree char *inside = g_strconcat (root_dir, G_DIR_SEPARATOR_S, NULL);
  char *contents = NULL;
  gsize length = 0;
  const char *type = "text/plain";

  file = g_build_filename (root_dir, path, NULL);
  canonical = g_canonicalize_filename (file, NULL);
  if (!g_str_has_prefix (canonical, inside) ||
      !g_file_get_contents (canonical, &contents, &length, NULL))
    {
      soup_server_message_set_status (msg, 404, NULL);
      soup_server_message_set_response (msg, "text/plain", SOUP_MEMORY_STATIC, "missing", 7);
      return;
    }
  if (g_str_has_suffix (canonical, ".html"))
    type = "text/html; charset=utf-8";
  else if (g_str_has_suffix (canonical, ".js"))
    type = "text/javascript; charset=utf-8";
  else if (g_str_has_suffix (canonical, ".css"))
    type = "text/css; charset=utf-8";
  soup_server_message_set_status (msg, 200, NULL);
  soup_server_message_set_response (msg, type, SOUP_MEMORY_TAKE, contents, length);
}

static void
collect_pages (const char *dir,
               const char *rel,
               GPtrArray  *pages)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  if (d == NULL)
    return;
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_autofree char *sub = *rel ? g_strconcat (rel, "/", name, NULL) : g_strdup (name);

      if (g_file_test (path, G_FILE_TEST_IS_DIR))
        {
          if (!g_str_equal (name, "scripts") && !g_str_equal (name, "resources"))
            collect_pages (path, sub, pages);
        }
      else if (g_str_has_suffix (name, ".html"))
        g_ptr_array_add (pages, g_steal_pointer (&sub));
    }
}

static int
compare_strings (gconstpointer a,
                 gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static gboolean
is_tentative (const char *page)
{
  return strstr (page, ".tentative.") != NULL || strstr (page, "tentative/") != NULL ||
         strstr (page, "-tentative.") != NULL;
}

typedef struct {
  GMainLoop    *loop;
  GAsyncResult *result;
} Waiter;

static void
waiter_done_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  Waiter *w = user_data;

  w->result = g_object_ref (result);
  g_main_loop_quit (w->loop);
}

/* Loads @url and runs the check; returns its checks array, or NULL with
 * @error set. */
static JsonNode *
check_page (SightWebPage  *page,
            const char    *url,
            const char    *script,
            GError       **error)
{
  Waiter w = { g_main_loop_new (NULL, FALSE), NULL };
  JsonNode *value = NULL;
  gboolean loaded;

  sight_web_page_load_async (page, url, SIGHT_WAIT_UNTIL_LOAD, LOAD_TIMEOUT_MS, NULL,
                             waiter_done_cb, &w);
  g_main_loop_run (w.loop);
  loaded = sight_web_page_load_finish (page, w.result, error);
  g_clear_object (&w.result);
  if (loaded)
    {
      sight_web_page_evaluate_async (page, script, NULL, CHECK_TIMEOUT_MS, NULL,
                                     waiter_done_cb, &w);
      g_main_loop_run (w.loop);
      value = sight_web_page_evaluate_finish (page, w.result, error);
      g_clear_object (&w.result);
    }
  g_main_loop_unref (w.loop);
  return value;
}

static void
test_wpt (void)
{
  g_autoptr(SoupServer) server = soup_server_new (NULL, NULL);
  g_autoptr(GPtrArray) pages = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(SightWebPage) page = NULL;
  g_autoptr(GString) failures = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *check_js = NULL;
  g_autofree char *script = NULL;
  g_autofree char *base = NULL;
  g_autofree char *failures_file = NULL;
  Score score[2] = { { 0 } }; /* [0] specified, [1] tentative */
  GSList *uris;

  if (!g_file_test (root_dir, G_FILE_TEST_IS_DIR))
    {
      g_test_skip ("no WPT pages at ../shared/wpt-a11y (set WPT_A11Y_DIR)");
      return;
    }
  g_file_get_contents (g_test_get_filename (G_TEST_DIST, "wpt", "wpt-a11y-check.js", NULL),
                       &check_js, NULL, &error);
  g_assert_no_error (error);
  script = g_strconcat (sight_observation_get_script (), "\n", check_js, NULL);

  soup_server_add_handler (server, NULL, server_cb, NULL, NULL);
  soup_server_listen_local (server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error);
  g_assert_no_error (error);
  uris = soup_server_get_uris (server);
  base = g_strdup_printf ("http://127.0.0.1:%u/", g_uri_get_port (uris->data));
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);

  collect_pages (root_dir, "", pages);
  g_ptr_array_sort (pages, compare_strings);
  g_assert_cmpuint (pages->len, >, 50);

  page = sight_web_page_new ();
  sight_web_page_set_viewport (page, 1024, 768, 1.0);
  for (guint i = 0; i < pages->len; i++)
    {
      const char *rel = g_ptr_array_index (pages, i);
      g_autofree char *url = g_strconcat (base, rel, NULL);
      g_autoptr(GError) page_error = NULL;
      g_autoptr(JsonNode) value = check_page (page, url, script, &page_error);
      Score *s = &score[is_tentative (rel) ? 1 : 0];
      Score file = { 0 };
      JsonArray *checks;

      if (value == NULL || !JSON_NODE_HOLDS_OBJECT (value))
        {
          g_test_message ("ERROR %s: %s", rel, page_error ? page_error->message : "no answer");
          g_string_append_printf (failures, "%s\tpage\t-\t%s\n", rel,
                                  page_error ? page_error->message : "no answer");
          continue;
        }
      checks = json_object_get_array_member (json_node_get_object (value), "checks");
      for (guint j = 0; checks != NULL && j < json_array_get_length (checks); j++)
        {
          JsonObject *c = json_array_get_object_element (checks, j);
          gboolean name = g_str_equal (json_object_get_string_member (c, "kind"), "name");
          gboolean ok = json_object_get_boolean_member (c, "ok");

          if (json_object_get_boolean_member_with_default (c, "open", FALSE))
            {
              file.open++;
              continue;
            }
          if (name)
            {
              file.names++;
              file.names_passed += ok;
            }
          else
            {
              file.roles++;
              file.roles_passed += ok;
            }
          if (!ok)
            g_string_append_printf (failures, "%s%s\t%s\t%s\texpected \"%s\" got \"%s\"\t%s\n",
                                    rel, is_tentative (rel) ? " (tentative)" : "",
                                    json_object_get_string_member (c, "kind"),
                                    json_object_get_string_member (c, "test"),
                                    json_object_get_string_member (c, "expected"),
                                    json_object_get_string_member (c, "actual"),
                                    json_object_get_string_member (c, "html"));
        }
      s->open += file.open;
      if (file.names + file.roles == 0)
        continue;
      g_test_message ("%s %s: names %u/%u, roles %u/%u",
                      file.names_passed == file.names && file.roles_passed == file.roles
                        ? "PASS" : "FAIL",
                      rel, file.names_passed, file.names, file.roles_passed, file.roles);
      s->names += file.names;
      s->names_passed += file.names_passed;
      s->roles += file.roles;
      s->roles_passed += file.roles_passed;
    }

  for (guint t = 0; t < 2; t++)
    g_test_message ("TOTAL%s: names %u/%u (%.1f%%), roles %u/%u (%.1f%%); "
                    "%u left open by the specs, not counted",
                    t ? " tentative" : "", score[t].names_passed, score[t].names,
                    score[t].names ? 100.0 * score[t].names_passed / score[t].names : 0.0,
                    score[t].roles_passed, score[t].roles,
                    score[t].roles ? 100.0 * score[t].roles_passed / score[t].roles : 0.0,
                    score[t].open);

  failures_file = g_test_build_filename (G_TEST_BUILT, "wpt-a11y-failures.txt", NULL);
  g_file_set_contents (failures_file, failures->str, failures->len, &error);
  g_assert_no_error (error);
  g_test_message ("failures: %s", failures_file);

  g_assert_cmpuint (score[0].names, >, 900);
  g_assert_cmpuint (score[0].roles, >, 150);
  g_assert_cmpuint (score[0].names_passed, >=, MIN_NAMES_PASSED);
  g_assert_cmpuint (score[0].roles_passed, >=, MIN_ROLES_PASSED);
}

int
main (int    argc,
      char **argv)
{
  const char *env = g_getenv ("WPT_A11Y_DIR");
  g_autofree char *dir = NULL;

  g_test_init (&argc, &argv, NULL);
  gtk_init ();
  dir = env != NULL ? g_strdup (env)
                    : g_test_build_filename (G_TEST_DIST, "..", "..", "shared", "wpt-a11y", NULL);
  root_dir = g_canonicalize_filename (dir, NULL);
  g_test_add_func ("/wpt-a11y/conformance", test_wpt);
  return g_test_run ();
}
