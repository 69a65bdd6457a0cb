/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Times action → fresh observation inside WebKitGTK on pages given by URL.
 *
 *   sight-bench-act [--runs N] URL...
 *
 * Each page has a button #bench-add that appends an element when clicked.
 * For each URL: loads it (1280x720), observes once (the ref comes from an
 * observation, as for the agent), then N times: perform a click on the
 * button's ref (actionability, events, settling) and capture a fresh default
 * observation. Prints one JSON line per page with the median and the 90th
 * percentile of the pair, and of the click alone, in milliseconds. Run it
 * under a display (xvfb-run). */
#define G_LOG_DOMAIN "sight-bench-act"

#include "config.h"

#include <gtk/gtk.h>
#include <stdlib.h>

#include "sight-actions.h"
#include "sight-observation.h"
#include "sight-web-page.h"

static void
done_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

static GAsyncResult *
wait_for (GAsyncResult **slot)
{
  while (*slot == NULL)
    g_main_context_iteration (NULL, TRUE);
  return *slot;
}

static int
compare_doubles (const void *a,
                 const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y;
}

static double
percentile (GArray *values,
            double  p)
{
  g_array_sort (values, compare_doubles);
  return g_array_index (values, double, MIN (values->len - 1, (guint) (values->len * p)));
}

int
main (int    argc,
      char **argv)
{
  int runs = 15;
  GOptionEntry entries[] = {
    { "runs", 0, 0, G_OPTION_ARG_INT, &runs, "Repetitions per page", "N" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("URL…");
  g_autoptr(GError) error = NULL;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || argc < 2)
    {
      g_printerr ("usage: sight-bench-act [--runs N] URL…\n");
      return 2;
    }
  gtk_init ();

  for (int u = 1; u < argc; u++)
    {
      g_autoptr(SightWebPage) page = sight_web_page_new ();
      g_autoptr(GAsyncResult) result = NULL;
      g_autoptr(SightObservation) observation = NULL;
      g_autoptr(JsonNode) ref_node = NULL;
      g_autoptr(JsonNode) action = json_from_string ("{\"type\": \"click\"}", NULL);
      g_autoptr(GArray) pair = g_array_new (FALSE, FALSE, sizeof (double));
      g_autoptr(GArray) click = g_array_new (FALSE, FALSE, sizeof (double));
      /* where the click's time goes: settling after the action, and the script's parts */
      const char *parts[] = { "settleMs", "actionableMs", "describeMs", "actMs", "quietMs" };
      GArray *part[G_N_ELEMENTS (parts)];
      g_autofree char *body = NULL;
      const char *ref;

      for (guint k = 0; k < G_N_ELEMENTS (parts); k++)
        part[k] = g_array_new (FALSE, FALSE, sizeof (double));
      sight_web_page_set_viewport (page, 1280, 720, 1.0);
      sight_web_page_load_async (page, argv[u], SIGHT_WAIT_UNTIL_LOAD, 60000, NULL, done_cb,
                                 &result);
      if (!sight_web_page_load_finish (page, wait_for (&result), &error))
        g_error ("%s", error->message);
      g_clear_object (&result);

      sight_observation_capture_async (page, SIGHT_OBSERVE_DEFAULT, 60000, NULL, done_cb, &result);
      observation = sight_observation_capture_finish (wait_for (&result), &error);
      if (observation == NULL)
        g_error ("%s", error->message);
      g_clear_object (&result);
      g_clear_object (&observation);

      body = g_strconcat (sight_observation_get_script (),
                          "\nreturn __sight.snapshot.refOf (document.getElementById "
                          "('bench-add'));", NULL);
      sight_web_page_evaluate_async (page, body, NULL, 10000, NULL, done_cb, &result);
      ref_node = sight_web_page_evaluate_finish (page, wait_for (&result), &error);
      if (ref_node == NULL)
        g_error ("%s", error->message);
      g_clear_object (&result);
      ref = json_node_get_string (ref_node);

      for (int i = 0; i < runs + 1; i++)
        {
          g_autoptr(JsonObject) done = NULL;
          gint64 t0 = g_get_monotonic_time (), t1, t2;

          sight_web_page_perform_async (page, ref, json_node_get_object (action), 10000, NULL,
                                        done_cb, &result);
          done = sight_web_page_perform_finish (page, wait_for (&result), &error);
          if (done == NULL)
            g_error ("%s", error->message);
          g_clear_object (&result);
          t1 = g_get_monotonic_time ();
          sight_observation_capture_async (page, SIGHT_OBSERVE_DEFAULT, 60000, NULL, done_cb,
                                           &result);
          observation = sight_observation_capture_finish (wait_for (&result), &error);
          if (observation == NULL)
            g_error ("%s", error->message);
          g_clear_object (&result);
          g_clear_object (&observation);
          t2 = g_get_monotonic_time ();
          if (i == 0)
            continue;  /* warm-up */
          {
            double p = (t2 - t0) / 1000.0, c = (t1 - t0) / 1000.0;

            JsonObject *timing = json_object_get_object_member (done, "timing");

            g_array_append_val (pair, p);
            g_array_append_val (click, c);
            for (guint k = 0; k < G_N_ELEMENTS (parts); k++)
              {
                JsonObject *from = k == 0 ? done : timing;
                double v = from != NULL ? json_object_get_int_member_with_default (from, parts[k], -1)
                                        : -1;

                g_array_append_val (part[k], v);
              }
          }
        }
      g_print ("{\"url\": \"%s\", \"pairMs\": %.1f, \"pairP90Ms\": %.1f, \"clickMs\": %.1f}\n",
               argv[u], percentile (pair, 0.5), percentile (pair, 0.9), percentile (click, 0.5));
      g_printerr ("%s: medians of the click's parts:", argv[u]);
      for (guint k = 0; k < G_N_ELEMENTS (parts); k++)
        {
          g_printerr (" %s %.0f", parts[k], percentile (part[k], 0.5));
          g_array_unref (part[k]);
        }
      g_printerr ("\n");
    }
  return 0;
}
