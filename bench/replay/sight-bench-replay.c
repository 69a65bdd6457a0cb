/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A cached 20-action flow on the demo site, replayed from the trace cache,
 * against the same flow run as direct steps, in the same run.
 *
 *   sight-bench-replay [--runs N]
 *
 * Serves the bundled demo site on 127.0.0.1. Runs the flow (sign up in three
 * steps with a detour back, sign in, add two projects, open pricing) as
 * direct steps once to record it: each step's action with its descriptor goes
 * into a trace (sight_direct_step_run_get_record), and the end state is taken.
 * Then N times each, alternating: the flow as direct steps, and the trace
 * replayed (sight_trace_replay_async), each from a fresh /signup in a new
 * page. Prints the medians and their ratio (target: replay ≤ 1.5 × direct);
 * a replay makes no model call by construction, and every replay must end
 * self-finalized. Run it under a display (xvfb-run). */
#define G_LOG_DOMAIN "sight-bench-replay"

#include "config.h"

#include <gtk/gtk.h>
#include <stdlib.h>

#include "sight-bench-flow.h"
#include "sight-demo-site.h"
#include "sight-direct-run.h"
#include "sight-observation.h"
#include "sight-trace-cache.h"
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

static SightWebPage *
fresh_page (const char *start)
{
  SightWebPage *page = sight_web_page_new ();
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;

  sight_web_page_set_viewport (page, 1280, 720, 1.0);
  sight_web_page_load_async (page, start, SIGHT_WAIT_UNTIL_LOAD, 30000, NULL, done_cb, &result);
  if (!sight_web_page_load_finish (page, wait_for (&result), &error))
    g_error ("%s", error->message);
  return page;
}

/* Runs the flow as direct steps; with @trace, records each action into it. */
static void
run_direct (SightWebPage *page,
            SightTrace   *trace)
{
  for (guint i = 0; i < G_N_ELEMENTS (sight_bench_flow); i++)
    {
      g_autoptr(GAsyncResult) result = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *summary = NULL;
      JsonObject *record;

      sight_direct_step_run_async (page, sight_bench_flow[i], NULL, NULL, 15000, NULL, done_cb,
                                   &result);
      wait_for (&result);
      summary = sight_direct_step_run_finish (page, result, &error);
      if (summary == NULL)
        g_error ("step %u, %s: %s", i + 1, sight_bench_flow[i], error->message);
      record = sight_direct_step_run_get_record (result);
      if (trace != NULL)
        {
          if (record == NULL)
            g_error ("step %u recorded no action", i + 1);
          if (!sight_trace_add_action (trace, json_object_get_string_member (record, "tool"),
                                       json_object_get_member (record, "args"),
                                       json_object_get_member (record, "descriptor"), NULL,
                                       &error))
            g_error ("%s", error->message);
        }
    }
}

static int
compare_doubles (const void *a,
                 const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y;
}

static double
median (GArray *values)
{
  g_array_sort (values, compare_doubles);
  return g_array_index (values, double, values->len / 2);
}

int
main (int    argc,
      char **argv)
{
  int runs = 3;
  GOptionEntry entries[] = {
    { "runs", 0, 0, G_OPTION_ARG_INT, &runs, "Repetitions of each", "N" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new (NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(SightDemoSite) site = NULL;
  g_autoptr(SightTrace) trace = NULL;
  g_autoptr(GArray) direct = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) replay = g_array_new (FALSE, FALSE, sizeof (double));
  g_autofree char *start = NULL;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || runs < 1)
    {
      g_printerr ("usage: sight-bench-replay [--runs N]\n");
      return 2;
    }
  gtk_init ();
  site = sight_demo_site_new ();
  if (!sight_demo_site_start (site, 0, &error))
    g_error ("%s", error->message);
  start = g_strconcat (sight_demo_site_get_url (site), SIGHT_BENCH_FLOW_START, NULL);

  /* Record once. */
  {
    g_autoptr(SightWebPage) page = fresh_page (start);
    g_autoptr(GAsyncResult) result = NULL;
    g_autoptr(SightObservation) end = NULL;

    trace = sight_trace_new ("default", "sign up, sign in, add two projects, choose Team", NULL,
                             start, 1280, 720);
    run_direct (page, trace);
    sight_observation_capture_async (page, SIGHT_OBSERVE_DEFAULT, 30000, NULL, done_cb, &result);
    end = sight_observation_capture_finish (wait_for (&result), &error);
    if (end == NULL)
      g_error ("%s", error->message);
    sight_trace_set_end_state (trace, end);
  }

  for (int r = 0; r < runs; r++)
    {
      /* The flow as direct steps. */
      {
        g_autoptr(SightWebPage) page = fresh_page (start);
        gint64 t0 = g_get_monotonic_time ();
        double ms;

        run_direct (page, NULL);
        ms = (g_get_monotonic_time () - t0) / 1000.0;
        g_array_append_val (direct, ms);
      }
      /* The trace replayed. */
      {
        g_autoptr(SightWebPage) page = fresh_page (start);
        g_autoptr(GAsyncResult) result = NULL;
        g_autoptr(JsonNode) info = NULL;
        gint64 t0 = g_get_monotonic_time ();
        const char *status;
        double ms;

        sight_trace_replay_async (trace, page, NULL, NULL, 120000, NULL, done_cb, &result);
        info = sight_trace_replay_finish (trace, wait_for (&result), &error);
        ms = (g_get_monotonic_time () - t0) / 1000.0;
        if (info == NULL)
          g_error ("%s", error->message);
        status = json_object_get_string_member (json_node_get_object (info), "status");
        if (g_strcmp0 (status, "self-finalized") != 0)
          g_error ("the replay ended %s: %s", status,
                   json_object_get_string_member_with_default (json_node_get_object (info),
                                                               "reason", ""));
        g_array_append_val (replay, ms);
      }
    }

  g_print ("%u actions, median of %d: direct steps %.0f ms, trace replay %.0f ms "
           "(0 model calls, self-finalized): replay/direct %.2f (target <= 1.5)\n",
           sight_trace_get_n_actions (trace), runs, median (direct), median (replay),
           median (replay) / median (direct));
  sight_demo_site_stop (site);
  return 0;
}
