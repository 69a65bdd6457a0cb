/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Times action → fresh observation inside WebKitGTK on pages given by URL.
 *
 *   sight-bench-act [--runs N] URL...
 *
 * Each page has a button #bench-add that appends an element when clicked.
 * For each URL: loads it (1280x720), observes once (the ref comes from an
 * observation, as for the agent), then N times: perform a click on the
 * button's ref (actionability, events, settling) and capture a fresh default
 * observation. Prints one JSON line per page with every run's times in
 * milliseconds: the pair, the click alone, and the pair's phases (dispatch:
 * the round trip to the page; action: in the page, finding the ref,
 * actionability and the events; settle: until the page was done; observe),
 * and how often each settle reason was seen. Run it under a display
 * (xvfb-run); bench/act/run.mjs takes the medians. */
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

/* The pixel-aware wait after a click, in ms (what act adds in pixel mode). */
static double
settle_pixels (SightWebPage *page)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  gint64 t0 = g_get_monotonic_time ();

  sight_web_page_settle_pixels_async (page, 2000, NULL, done_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  if (!sight_web_page_settle_pixels_finish (page, result, NULL, &error))
    g_error ("%s", error->message);
  return (g_get_monotonic_time () - t0) / 1000.0;
}

static GAsyncResult *
wait_for (GAsyncResult **slot)
{
  while (*slot == NULL)
    g_main_context_iteration (NULL, TRUE);
  return *slot;
}

int
main (int    argc,
      char **argv)
{
  int runs = 15;
  gboolean pixels = FALSE;
  GOptionEntry entries[] = {
    { "runs", 0, 0, G_OPTION_ARG_INT, &runs, "Repetitions per page", "N" },
    { "pixels", 0, 0, G_OPTION_ARG_NONE, &pixels,
      "Also time the pixel-aware wait: after a click, and with no action before it", NULL },
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
      /* per run: the pair, the click alone, and the pair's phases */
      const char *phases[] = { "pairMs", "clickMs", "dispatchMs", "actionMs", "settleMs",
                               "observeMs", "pixelsMs", "pixelsAloneMs" };
      GArray *phase[G_N_ELEMENTS (phases)];
      g_autoptr(GHashTable) reasons = g_hash_table_new (g_str_hash, g_str_equal);
      g_autofree char *body = NULL;
      const char *ref;

      for (guint k = 0; k < G_N_ELEMENTS (phases); k++)
        phase[k] = g_array_new (FALSE, FALSE, sizeof (double));
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
            JsonObject *timing = json_object_get_object_member (done, "timing");
            const char *reason = json_object_get_string_member_with_default (done, "settleReason",
                                                                             "?");
            double pair = (t2 - t0) / 1000.0, click = (t1 - t0) / 1000.0;
            double settle = json_object_get_int_member_with_default (done, "settleMs", 0);
            double in_page = 0, values[G_N_ELEMENTS (phases)];

            /* the action in the page: finding the ref, actionability, the events */
            for (guint k = 0; timing != NULL && k < 4; k++)
              in_page += json_object_get_int_member_with_default (
                timing, (const char *[]) { "resolveMs", "actionableMs", "describeMs",
                                           "actMs" }[k], 0);
            values[0] = pair;
            values[1] = click;
            values[2] = MAX (0, click - in_page - settle);  /* the round trip to the page */
            values[3] = in_page;
            values[4] = settle;
            values[5] = pair - click;
            for (guint k = 0; k < 6; k++)
              g_array_append_val (phase[k], values[k]);
            g_hash_table_insert (reasons, (gpointer) g_intern_string (reason),
                                 GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (reasons,
                                                                                          reason)) + 1));
          }
        }
      /* Pixel mode: the wait right after a click (settled by signals), and
       * one with no action in the last second (the full change window). */
      for (int i = 0; pixels && i < runs; i++)
        {
          g_autoptr(JsonObject) done = NULL;
          double ms;

          sight_web_page_perform_async (page, ref, json_node_get_object (action), 10000, NULL,
                                        done_cb, &result);
          done = sight_web_page_perform_finish (page, wait_for (&result), &error);
          if (done == NULL)
            g_error ("%s", error->message);
          g_clear_object (&result);
          ms = settle_pixels (page);
          g_array_append_val (phase[6], ms);
          if (i < 3)
            {
              g_usleep (1100 * 1000);
              ms = settle_pixels (page);
              g_array_append_val (phase[7], ms);
            }
        }
      {
        g_autoptr(GString) line = g_string_new (NULL);
        GHashTableIter iter;
        gpointer key, value;
        gboolean first = TRUE;

        g_string_append_printf (line, "{\"url\": \"%s\"", argv[u]);
        for (guint k = 0; k < G_N_ELEMENTS (phases); k++)
          {
            g_string_append_printf (line, ", \"%s\": [", phases[k]);
            for (guint i = 0; i < phase[k]->len; i++)
              g_string_append_printf (line, "%s%.2f", i > 0 ? ", " : "",
                                      g_array_index (phase[k], double, i));
            g_string_append (line, "]");
            g_array_unref (phase[k]);
          }
        g_string_append (line, ", \"settleReasons\": {");
        g_hash_table_iter_init (&iter, reasons);
        while (g_hash_table_iter_next (&iter, &key, &value))
          {
            g_string_append_printf (line, "%s\"%s\": %u", first ? "" : ", ", (char *) key,
                                    GPOINTER_TO_UINT (value));
            first = FALSE;
          }
        g_string_append (line, "}}");
        g_print ("%s\n", line->str);
      }
    }
  return 0;
}
