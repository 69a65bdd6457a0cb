/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-bench-suite"

#include "config.h"

#include <gtk/gtk.h>

#include "sight-demo-site.h"
#include "sight-store.h"
#include "sight-suite.h"

/* The wall time of one suite of test files against the demo site with 1
 * worker (the baseline) and with more, in the same process and run; prints
 * each as a ratio of the baseline, and whether the verdicts agree.
 * Usage: sight-bench-suite [--workers 1,2,4] [--rounds N] FILE… */

static void
done_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

static char *
verdicts (JsonObject *result)
{
  JsonArray *tests = json_object_get_array_member (result, "tests");
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < json_array_get_length (tests); i++)
    g_string_append_printf (out, "%s;", json_object_get_string_member (
                              json_array_get_object_element (tests, i), "verdict"));
  return g_string_free (out, FALSE);
}

static double
run_once (SightStore *store,
          GPtrArray  *files,
          const char *base_url,
          guint       workers,
          char      **out_verdicts)
{
  g_autoptr(JsonObject) args = json_object_new ();
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GError) error = NULL;
  gint64 start = g_get_monotonic_time ();

  json_object_set_int_member (args, "workers", workers);
  json_object_set_string_member (args, "baseUrl", base_url);
  sight_suite_run_async (store, files, args, NULL, NULL, NULL, done_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  node = sight_suite_run_finish (result, &error);
  if (node == NULL)
    g_error ("the suite did not run: %s", error->message);
  *out_verdicts = verdicts (json_node_get_object (node));
  return (g_get_monotonic_time () - start) / 1e6;
}

int
main (int    argc,
      char **argv)
{
  g_autofree char *workers_list = g_strdup ("1,2,4");
  int rounds = 2;
  GOptionEntry entries[] = {
    { "workers", 0, 0, G_OPTION_ARG_STRING, &workers_list, "Worker counts; the first is the baseline", "LIST" },
    { "rounds", 0, 0, G_OPTION_ARG_INT, &rounds, "Rounds of each (the median is kept)", "N" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("FILE…");
  g_autoptr(GError) error = NULL;
  g_autoptr(SightDemoSite) site = NULL;
  g_autoptr(SightStore) store = NULL;
  g_autoptr(GPtrArray) files = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *db = NULL;
  g_auto(GStrv) counts = NULL;
  g_autofree char *baseline_verdicts = NULL;
  double baseline = 0;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || argc < 2 || rounds < 1)
    {
      g_printerr ("%s\n", error ? error->message : "give test files");
      return 2;
    }
  gtk_init ();
  files = sight_suite_load_files ((const char * const *) argv + 1, &error);
  if (files == NULL)
    g_error ("%s", error->message);
  dir = g_dir_make_tmp ("sight-bench-suite-XXXXXX", &error);
  db = g_build_filename (dir, "sightline.db", NULL);
  store = sight_store_new (db, &error);
  if (store == NULL)
    g_error ("%s", error->message);
  site = sight_demo_site_new ();
  if (!sight_demo_site_start (site, 0, &error))
    g_error ("%s", error->message);

  g_print ("%u tests, %d round(s) each, median wall time\n", files->len, rounds);
  g_print ("%-8s %10s %8s  %s\n", "workers", "seconds", "ratio", "verdicts");
  counts = g_strsplit (workers_list, ",", -1);
  for (guint c = 0; counts[c] != NULL; c++)
    {
      guint workers = (guint) g_ascii_strtoull (counts[c], NULL, 10);
      g_autofree double *times = g_new0 (double, rounds);
      g_autofree char *seen = NULL;
      double median;

      for (int r = 0; r < rounds; r++)
        {
          g_clear_pointer (&seen, g_free);
          times[r] = run_once (store, files, sight_demo_site_get_url (site), workers, &seen);
        }
      for (int i = 1; i < rounds; i++)
        for (int j = i; j > 0 && times[j] < times[j - 1]; j--)
          {
            double t = times[j];
            times[j] = times[j - 1];
            times[j - 1] = t;
          }
      median = times[rounds / 2];
      if (c == 0)
        {
          baseline = median;
          baseline_verdicts = g_strdup (seen);
        }
      g_print ("%-8u %10.2f %8.2f  %s%s\n", workers, median, median / baseline, seen,
               g_strcmp0 (seen, baseline_verdicts) == 0 ? "" : "  (differ from the baseline)");
    }
  return 0;
}
