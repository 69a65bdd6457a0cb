/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-page-memory"

#include "config.h"

#include <string.h>

#include <gtk/gtk.h>

#include "sight-error.h"
#include "sight-web-page.h"

/* A page that allocates without bound (issue #13): past the page memory limit
 * WebKit ends its web process, the page says EXCEEDED_MEMORY_LIMIT in its log
 * and in the error of what was waiting, and the next load works. The limit is
 * process-wide, hence a test program of its own with a small one. */

#define LIMIT_MB "256"

static void
store_result_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

static void
lost_cb (SightWebPage *page,
         const char   *reason,
         char        **out)
{
  g_free (*out);
  *out = g_strdup (reason);
}

static gboolean
wait_until (gboolean (*done) (gpointer), gpointer data, guint seconds)
{
  gint64 deadline = g_get_monotonic_time () + seconds * G_USEC_PER_SEC;

  while (!done (data) && g_get_monotonic_time () < deadline)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (10000);
  return done (data);
}

static gboolean
result_set (gpointer data)
{
  return *(GAsyncResult **) data != NULL;
}

static gboolean
string_set (gpointer data)
{
  return *(char **) data != NULL;
}

static void
test_unbounded_allocation (void)
{
  g_autoptr(SightWebPage) page = sight_web_page_new ();
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) answer = NULL;
  g_autofree char *reason = NULL;
  GPtrArray *log;
  gboolean logged = FALSE;
  gint64 t0;

  g_assert_cmpuint (sight_web_page_get_memory_limit (), ==, 256);
  g_signal_connect (page, "web-process-lost", G_CALLBACK (lost_cb), &reason);

  sight_web_page_load_async (page, "about:blank", SIGHT_WAIT_UNTIL_LOAD, 20000, NULL,
                             store_result_cb, &result);
  g_assert_true (wait_until (result_set, &result, 30));
  g_assert_true (sight_web_page_load_finish (page, result, &error));
  g_assert_no_error (error);
  g_clear_object (&result);

  /* 16 MB more every 20 ms, kept reachable, written so the pages are real. */
  t0 = g_get_monotonic_time ();
  sight_web_page_evaluate_async (page,
                                 "globalThis.hoard = [];\n"
                                 "setInterval (() => {\n"
                                 "  const a = new Float64Array (2 * 1024 * 1024);\n"
                                 "  a.fill (Math.random ());\n"
                                 "  globalThis.hoard.push (a);\n"
                                 "}, 20);\n"
                                 "return true;",
                                 NULL, 5000, NULL, store_result_cb, &result);
  g_assert_true (wait_until (result_set, &result, 30));
  answer = sight_web_page_evaluate_finish (page, result, &error);
  g_assert_no_error (error);
  g_clear_object (&result);

  g_assert_true (wait_until (string_set, &reason, 60));
  g_test_message ("web process ended after %.1f s: %s",
                  (g_get_monotonic_time () - t0) / 1e6, reason);
  g_assert_nonnull (strstr (reason, "EXCEEDED_MEMORY_LIMIT"));
  g_assert_nonnull (strstr (reason, "256 MB"));

  log = sight_web_page_get_log (page);
  for (guint i = 0; i < log->len; i++)
    {
      SightLogEntry *entry = log->pdata[i];

      if (entry->kind == SIGHT_LOG_PAGE_ERROR && strstr (entry->text, "EXCEEDED_MEMORY_LIMIT"))
        logged = TRUE;
    }
  g_assert_true (logged);

  /* The page is usable again: a new web process. */
  sight_web_page_load_async (page, "about:blank", SIGHT_WAIT_UNTIL_LOAD, 20000, NULL,
                             store_result_cb, &result);
  g_assert_true (wait_until (result_set, &result, 30));
  g_assert_true (sight_web_page_load_finish (page, result, &error));
  g_assert_no_error (error);
  g_clear_object (&result);
  g_clear_pointer (&answer, json_node_unref);
  sight_web_page_evaluate_async (page, "return 6 * 7;", NULL, 5000, NULL, store_result_cb,
                                 &result);
  g_assert_true (wait_until (result_set, &result, 30));
  answer = sight_web_page_evaluate_finish (page, result, &error);
  g_assert_no_error (error);
  g_assert_cmpint (json_node_get_int (answer), ==, 42);
}

int
main (int    argc,
      char **argv)
{
  g_setenv ("SIGHTLINE_PAGE_MEMORY_LIMIT_MB", LIMIT_MB, TRUE);
  gtk_test_init (&argc, &argv, NULL);
  g_test_add_func ("/page-memory/unbounded-allocation", test_unbounded_allocation);
  return g_test_run ();
}
