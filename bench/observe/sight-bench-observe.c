/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Times Sightline's observation inside WebKitGTK on pages given by URL.
 *
 *   sight-bench-observe [--runs N] [--output-dir DIR] [--probe FILE] URL...
 *
 * For each URL: loads it (1280x720), then N times each: a bare walk over the
 * same DOM (the floor), the default observation (JSON tree + bounded text, one
 * evaluate round trip, parsed into a SightObservation) and the full-text
 * observation. Prints one JSON line per page with median milliseconds; with
 * --output-dir also writes the texts there, for bench/observe/run.mjs to
 * count tokens. With --probe FILE it only evaluates FILE's text as a script
 * body on each page, N times, and prints what it returns (bench/observe's
 * profile.mjs writes such a body: the observation with time counters).
 * Run it under a display (xvfb-run). */
#define G_LOG_DOMAIN "sight-bench-observe"

#include "config.h"

#include <gtk/gtk.h>
#include <string.h>

#include "sight-observation.h"
#include "sight-web-page.h"
#include "sight-bench-wait.h"


static int
cmp_double (gconstpointer a,
            gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y;
}

static double
median (GArray *values)
{
  g_array_sort (values, cmp_double);
  return g_array_index (values, double, values->len / 2);
}

static JsonNode *
evaluate (SightWebPage *page,
          Waiter       *w,
          const char   *body,
          GError      **error)
{
  g_clear_object (&w->result);
  sight_web_page_evaluate_async (page, body, NULL, 120000, NULL, done_cb, w);
  return sight_web_page_evaluate_finish (page, wait_for (w), error);
}

static SightObservation *
observe (SightWebPage      *page,
         Waiter            *w,
         SightObserveFlags  flags,
         double            *ms,
         GError           **error)
{
  gint64 t0 = g_get_monotonic_time ();
  SightObservation *obs;

  g_clear_object (&w->result);
  sight_observation_capture_async (page, flags, 120000, NULL, done_cb, w);
  obs = sight_observation_capture_finish (wait_for (w), error);
  *ms = (g_get_monotonic_time () - t0) / 1000.0;
  return obs;
}

enum { WALK, SERIALIZE, STRINGIFY, TRANSPORT, PARSE, PARSE_WALL, TREE, N_PHASES };

static double
timing_of (SightObservation *obs,
           const char       *phase)
{
  JsonObject *res = json_node_get_object (sight_observation_get_result (obs));
  JsonObject *timing = json_object_get_object_member (res, "timing");

  return json_object_get_double_member_with_default (timing, phase, 0);
}

/* The capture's phases (the page's walk and text, the round trip, the
 * worker's parse); the transport is the round trip less the page's own
 * time, stringify included until time_stringify() takes it out. */
static void
record_phases (SightObservation *obs,
               GArray          **phase_ms)
{
  double walk = timing_of (obs, "walk"), text = timing_of (obs, "serialize");
  double transport = timing_of (obs, "roundTrip") - walk - text;
  double parse = timing_of (obs, "parse"), parse_wall = timing_of (obs, "parseWall");

  g_array_append_val (phase_ms[WALK], walk);
  g_array_append_val (phase_ms[SERIALIZE], text);
  g_array_append_val (phase_ms[TRANSPORT], transport);
  g_array_append_val (phase_ms[PARSE], parse);
  g_array_append_val (phase_ms[PARSE_WALL], parse_wall);
}

/* What the first caller that walks the tree pays after the capture: the
 * tree's parse and index (the capture leaves it as text). */
static void
time_tree (SightObservation *obs,
           GArray          **phase_ms)
{
  gint64 t0 = g_get_monotonic_time ();
  double ms;

  sight_observation_get_nodes (obs, NULL);
  ms = (g_get_monotonic_time () - t0) / 1000.0;
  g_array_append_val (phase_ms[TREE], ms);
}

/* JSON.stringify of the default observation, timed in the page: taken out
 * of the last transport figure. */
static gboolean
time_stringify (SightWebPage *page,
                Waiter       *w,
                const char   *body,
                GArray      **phase_ms,
                GError      **error)
{
  g_autoptr(JsonNode) value = evaluate (page, w, body, error);
  double ms;

  if (value == NULL)
    return FALSE;
  ms = json_object_get_double_member_with_default (json_node_get_object (value), "ms", 0);
  g_array_append_val (phase_ms[STRINGIFY], ms);
  g_array_index (phase_ms[TRANSPORT], double, phase_ms[TRANSPORT]->len - 1) -= ms;
  return TRUE;
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SightWebPage) page = NULL;
  g_autofree char *output_dir = NULL;
  g_autofree char *probe_file = NULL;
  g_autofree char *probe_body = NULL;
  g_autofree char *bare_body = NULL;
  g_autofree char *stringify_body = NULL;
  int runs = 5;
  Waiter w = { 0 };
  GOptionEntry entries[] = {
    { "runs", 0, 0, G_OPTION_ARG_INT, &runs, "Runs per measurement (median)", "N" },
    { "output-dir", 0, 0, G_OPTION_ARG_FILENAME, &output_dir, "Write the texts here", "DIR" },
    { "probe", 0, 0, G_OPTION_ARG_FILENAME, &probe_file, "Only evaluate this script body", "FILE" },
    { NULL }
  };

  context = g_option_context_new ("URL… — time Sightline's observation in WebKitGTK");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || argc < 2 || runs < 1)
    {
      g_printerr ("%s\n", error ? error->message : "usage: sight-bench-observe [--runs N] URL…");
      return 2;
    }

  if (probe_file != NULL && !g_file_get_contents (probe_file, &probe_body, NULL, &error))
    {
      g_printerr ("%s\n", error->message);
      return 2;
    }

  gtk_init ();
  w.loop = g_main_loop_new (NULL, FALSE);
  page = sight_web_page_new ();
  sight_web_page_set_viewport (page, 1280, 720, 1.0);
  bare_body = sight_observation_build_call ("bareWalk ()");
  /* The default observation serialized as the evaluate wrapper does, timed
   * in the page. */
  stringify_body = g_strconcat (sight_observation_get_script (),
                                "\nconst r = __sight.snapshot.observe ({ text: 'compact' });\n"
                                "const t0 = performance.now ();\n"
                                "const n = JSON.stringify (r).length;\n"
                                "return { ms: performance.now () - t0, chars: n };", NULL);

  for (int i = 1; i < argc; i++)
    {
      const char *url = argv[i];
      g_autoptr(GArray) bare = g_array_new (FALSE, FALSE, sizeof (double));
      g_autoptr(GArray) dflt = g_array_new (FALSE, FALSE, sizeof (double));
      g_autoptr(GArray) full = g_array_new (FALSE, FALSE, sizeof (double));
      g_autoptr(SightObservation) compact_obs = NULL;
      g_autoptr(SightObservation) full_obs = NULL;
      g_autofree char *json = NULL;
      g_autofree char *stem = NULL;
      g_autofree char *compact_file = NULL;
      g_autofree char *full_file = NULL;
      g_autoptr(JsonBuilder) b = json_builder_new ();
      g_autoptr(JsonNode) line = NULL;
      g_autofree char *line_text = NULL;
      GArray *phase_ms[N_PHASES];

      for (guint k = 0; k < N_PHASES; k++)
        phase_ms[k] = g_array_new (FALSE, FALSE, sizeof (double));

      g_clear_object (&w.result);
      sight_web_page_load_async (page, url, SIGHT_WAIT_UNTIL_LOAD, 120000, NULL, done_cb, &w);
      if (!sight_web_page_load_finish (page, wait_for (&w), &error))
        {
          g_printerr ("%s: %s\n", url, error->message);
          return 1;
        }

      for (int r = 0; probe_body != NULL && r < runs; r++)
        {
          g_autoptr(JsonNode) value = evaluate (page, &w, probe_body, &error);
          g_autofree char *text = NULL;

          if (value == NULL)
            {
              g_printerr ("%s: %s\n", url, error->message);
              return 1;
            }
          text = json_to_string (value, FALSE);
          g_print ("{\"url\":\"%s\",\"probe\":%s}\n", url, text);
        }
      if (probe_body != NULL)
        {
          for (guint k = 0; k < N_PHASES; k++)
            g_array_unref (phase_ms[k]);
          continue;
        }

      for (int r = 0; r < runs; r++)
        {
          g_autoptr(JsonNode) count = NULL;
          g_autoptr(SightObservation) o1 = NULL;
          g_autoptr(SightObservation) o2 = NULL;
          gint64 t0 = g_get_monotonic_time ();
          double ms;

          count = evaluate (page, &w, bare_body, &error);
          if (count == NULL)
            {
              g_printerr ("%s: %s\n", url, error->message);
              return 1;
            }
          ms = (g_get_monotonic_time () - t0) / 1000.0;
          g_array_append_val (bare, ms);

          o1 = observe (page, &w, SIGHT_OBSERVE_DEFAULT, &ms, &error);
          if (o1 == NULL)
            {
              g_printerr ("%s: %s\n", url, error->message);
              return 1;
            }
          g_array_append_val (dflt, ms);
          record_phases (o1, phase_ms);
          time_tree (o1, phase_ms);
          if (!time_stringify (page, &w, stringify_body, phase_ms, &error))
            {
              g_printerr ("%s: %s\n", url, error->message);
              return 1;
            }
          o2 = observe (page, &w, SIGHT_OBSERVE_FULL_TEXT, &ms, &error);
          if (o2 == NULL)
            {
              g_printerr ("%s: %s\n", url, error->message);
              return 1;
            }
          g_array_append_val (full, ms);
          if (r == runs - 1)
            {
              compact_obs = g_steal_pointer (&o1);
              full_obs = g_steal_pointer (&o2);
            }
        }

      json = sight_observation_to_json (compact_obs, FALSE);
      stem = g_strdup_printf ("page-%d", i);
      compact_file = g_strconcat (stem, "-compact.txt", NULL);
      full_file = g_strconcat (stem, "-full.txt", NULL);
      if (output_dir != NULL)
        {
          g_autofree char *p1 = g_build_filename (output_dir, compact_file, NULL);
          g_autofree char *p2 = g_build_filename (output_dir, full_file, NULL);

          if (!g_file_set_contents (p1, sight_observation_get_text (compact_obs), -1, &error) ||
              !g_file_set_contents (p2, sight_observation_get_text (full_obs), -1, &error))
            {
              g_printerr ("%s\n", error->message);
              return 1;
            }
        }

      json_builder_begin_object (b);
      json_builder_set_member_name (b, "url");
      json_builder_add_string_value (b, url);
      json_builder_set_member_name (b, "ms");
      json_builder_add_double_value (b, median (dflt));
      json_builder_set_member_name (b, "full_ms");
      json_builder_add_double_value (b, median (full));
      json_builder_set_member_name (b, "bare_ms");
      json_builder_add_double_value (b, median (bare));
      /* Where the default observation's time went, medians over the runs:
       * the page's walk and text, JSON.stringify (timed in the page by a
       * call of its own), the rest of the round trip (the wrapper, the
       * string's way to the UI process, jsc_value_to_string: the transport),
       * and the parse in the capture's worker. */
      {
        static const char *const phases[] = { "walk", "serialize", "stringify", "transport",
                                              "parse", "parseWall", "tree" };

        json_builder_set_member_name (b, "phases");
        json_builder_begin_object (b);
        for (guint k = 0; k < G_N_ELEMENTS (phases); k++)
          {
            json_builder_set_member_name (b, phases[k]);
            json_builder_add_double_value (b, median (phase_ms[k]));
          }
        json_builder_end_object (b);
        for (guint k = 0; k < G_N_ELEMENTS (phases); k++)
          g_array_unref (phase_ms[k]);
      }
      json_builder_set_member_name (b, "elements");
      json_builder_add_int_value (b, sight_observation_get_n_elements (compact_obs));
      json_builder_set_member_name (b, "not_observed");
      json_builder_add_int_value (b, sight_observation_get_n_not_observed (compact_obs));
      json_builder_set_member_name (b, "json_bytes");
      json_builder_add_int_value (b, strlen (json));
      json_builder_set_member_name (b, "compact_file");
      json_builder_add_string_value (b, compact_file);
      json_builder_set_member_name (b, "full_file");
      json_builder_add_string_value (b, full_file);
      json_builder_end_object (b);
      line = json_builder_get_root (b);
      line_text = json_to_string (line, FALSE);
      g_print ("%s\n", line_text);
    }

  g_clear_object (&w.result);
  g_main_loop_unref (w.loop);
  return 0;
}
