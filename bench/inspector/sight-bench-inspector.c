/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The longest main-loop stall while the inspector shows, updates, selects in
 * and searches the tree of a large page (issue #19: cards-20000, 200,000
 * elements; target < 100 ms).
 *
 *   sight-bench-inspector [--rounds N] PAGE.html
 *
 * PAGE.html (bench/observe's gen-pages.mjs writes cards-20000.html) is served
 * from 127.0.0.1 and observed twice as the window observes it (full text and
 * the JSON tree) by a page of its own. A window holding the inspector is
 * shown, and with the probes of sight-bench-probe.h running, each phase is one
 * call on the main loop followed by half a second of the loop running:
 *   show     sight_inspector_set_observation (the first observation)
 *   update   the same with the second one (refs kept, the selection restored)
 *   select   sight_inspector_select_ref (the tree's last node)
 *   search   sight_inspector_search for the last named node's name
 *   miss     sight_inspector_search for a name no node has (the whole tree)
 * Each call's CPU time on the main thread is printed as well. The capture
 * itself is measured too ("capture": the page's evaluate round
 * trip and the parse of its JSON, in a worker since issue #19; "parse
 * stall" is the longest main-loop gap during it), which the window pays as
 * well. Run it under a display (xvfb-run). */
#define G_LOG_DOMAIN "sight-bench-inspector"

#include "config.h"

#include <adwaita.h>
#include <libsoup/soup.h>
#include <stdlib.h>
#include <time.h>

#include "sight-bench-probe.h"
#include "sight-bench-wait.h"
#include "sight-graphics.h"
#include "sight-inspector.h"
#include "sight-observation.h"
#include "sight-web-page.h"

#define DEADLINE_MS  600000
#define SETTLE_MS    500


static void
serve_cb (SoupServer        *server,
          SoupServerMessage *msg,
          const char        *path,
          GHashTable        *query,
          gpointer           user_data)
{
  GBytes *page = user_data;

  soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
  soup_server_message_set_response (msg, "text/html; charset=utf-8", SOUP_MEMORY_STATIC,
                                    g_bytes_get_data (page, NULL), g_bytes_get_size (page));
}

static void
spin (int ms)
{
  gint64 end = g_get_monotonic_time () + ms * 1000;

  /* The probe's timeout wakes the loop every few ms. */
  while (g_get_monotonic_time () < end)
    g_main_context_iteration (NULL, TRUE);
}

static SightObservation *
capture (SightWebPage *page,
         Waiter       *w,
         double       *ms)
{
  g_autoptr(GError) error = NULL;
  gint64 t0 = g_get_monotonic_time ();
  SightObservation *observation;

  g_clear_object (&w->result);
  sight_observation_capture_async (page, SIGHT_OBSERVE_FULL_TEXT, DEADLINE_MS, NULL, done_cb, w);
  observation = sight_observation_capture_finish (wait_for (w), &error);
  if (observation == NULL)
    g_error ("observation: %s", error->message);
  *ms = (g_get_monotonic_time () - t0) / 1000.0;
  return observation;
}

/* The last node in document order, and the last one with a name. */
static void
last_nodes (JsonObject  *node,
            const char **ref,
            const char **name)
{
  JsonArray *kids = json_object_has_member (node, "children")
    ? json_object_get_array_member (node, "children") : NULL;

  if (json_object_has_member (node, "ref"))
    *ref = json_object_get_string_member (node, "ref");
  if (json_object_has_member (node, "name"))
    *name = json_object_get_string_member (node, "name");
  for (guint i = 0; kids != NULL && i < json_array_get_length (kids); i++)
    last_nodes (json_array_get_object_element (kids, i), ref, name);
}

/* The main thread's CPU time in ms: on a machine shared with other work the
 * wall time of a call says as much about the machine. */
static double
thread_cpu_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

typedef enum { SHOW, UPDATE, SELECT, SEARCH, MISS } Phase;
static const char *phase_names[] = { "show", "update", "select", "search", "miss" };

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) html = NULL;
  g_autoptr(SoupServer) server = NULL;
  g_autoptr(SightWebPage) page = NULL;
  g_autoptr(SightObservation) first = NULL;
  g_autoptr(SightObservation) second = NULL;
  g_autofree char *url = NULL;
  GSList *uris;
  GtkWidget *window, *inspector;
  const char *last_ref = NULL, *last_name = NULL;
  Waiter w = { 0 };
  Stats worst = { 0 };
  const char *worst_phase = "";
  double capture_ms, worst_cpu = 0;
  int rounds = 1;

  if (argc == 4 && g_str_equal (argv[1], "--rounds"))
    rounds = MAX (1, atoi (argv[2]));
  else if (argc != 2)
    {
      g_printerr ("usage: sight-bench-inspector [--rounds N] PAGE.html\n");
      return 2;
    }
  g_setenv ("NO_AT_BRIDGE", "1", TRUE);
  /* As sightline's main() does. */
  sight_graphics_choose_renderer ();
  gtk_init ();
  adw_init ();
  w.loop = g_main_loop_new (NULL, FALSE);

  {
    char *data;
    gsize len;

    if (!g_file_get_contents (argv[argc - 1], &data, &len, &error))
      g_error ("%s", error->message);
    html = g_bytes_new_take (data, len);
  }
  server = soup_server_new (NULL, NULL);
  soup_server_add_handler (server, NULL, serve_cb, html, NULL);
  if (!soup_server_listen_local (server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error))
    g_error ("%s", error->message);
  uris = soup_server_get_uris (server);
  url = g_uri_to_string (uris->data);
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);

  page = sight_web_page_new ();
  sight_web_page_set_viewport (page, 1280, 720, 1.0);
  sight_web_page_load_async (page, url, SIGHT_WAIT_UNTIL_LOAD, DEADLINE_MS, NULL, done_cb, &w);
  if (!sight_web_page_load_finish (page, wait_for (&w), &error))
    g_error ("%s: %s", url, error->message);

  window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (window), 1000, 800);
  inspector = sight_inspector_new ();
  gtk_window_set_child (GTK_WINDOW (window), inspector);
  gtk_window_present (GTK_WINDOW (window));
  probe_install (window);
  spin (SETTLE_MS);

  print_header ();
  probe_start ();
  first = capture (page, &w, &capture_ms);
  second = capture (page, &w, &capture_ms);
  probing = FALSE;
  {
    Stats timer = stats_of (probe.timer), frames = stats_of (probe.frames);

    JsonObject *timing = json_object_get_object_member (
      json_node_get_object (sight_observation_get_result (second)), "timing");

    print_row ("capture", capture_ms / 1000.0, &timer, &frames);
    /* The parse used to run on the main loop (3.4-5.4 s for cards-20000);
     * now it runs in the capture's worker, and the loop's longest gap over
     * the two captures is what is left of it on the main thread (the
     * string's conversion, the web process's answer). */
    g_print ("parse stall: longest main-loop gap over both captures %.1f ms (target < %.0f ms: %s); "
             "the second capture: page walk %.0f ms, round trip %.0f ms, parse and index in the "
             "worker %.0f ms (%.0f ms until back on the main loop)\n",
             MAX (timer.max, frames.max), TARGET_MS,
             MAX (timer.max, frames.max) < TARGET_MS ? "met" : "MISSED",
             json_object_get_double_member_with_default (timing, "walk", 0),
             json_object_get_double_member_with_default (timing, "roundTrip", 0),
             json_object_get_double_member_with_default (timing, "parse", 0),
             json_object_get_double_member_with_default (timing, "parseWall", 0));
  }
  last_nodes (json_node_get_object (sight_observation_get_tree (first)), &last_ref, &last_name);
  if (last_ref == NULL || last_name == NULL)
    g_error ("the observation has no named node");

  for (int round = 0; round < rounds; round++)
    for (Phase phase = SHOW; phase <= MISS; phase++)
      {
        SightInspector *self = SIGHT_INSPECTOR (inspector);
        gint64 t0;
        double call_ms, cpu0, cpu_ms;
        Stats timer, frames;
        gboolean ok = TRUE;

        probe_start ();
        t0 = g_get_monotonic_time ();
        cpu0 = thread_cpu_ms ();
        switch (phase)
          {
          case SHOW:
            sight_inspector_set_observation (self, NULL);
            sight_inspector_set_observation (self, first);
            break;
          case UPDATE:
            sight_inspector_set_observation (self, second);
            break;
          case SELECT:
            ok = sight_inspector_select_ref (self, last_ref) &&
                 g_strcmp0 (sight_inspector_get_selected_ref (self), last_ref) == 0;
            break;
          case SEARCH:
            sight_inspector_select_ref (self, NULL);
            ok = sight_inspector_search (self, last_name);
            break;
          case MISS:
            ok = !sight_inspector_search (self, "no node is called this");
            break;
          }
        call_ms = (g_get_monotonic_time () - t0) / 1000.0;
        cpu_ms = thread_cpu_ms () - cpu0;
        if (!ok)
          g_error ("%s: the inspector did not find what it should", phase_names[phase]);
        spin (SETTLE_MS);
        probing = FALSE;
        timer = stats_of (probe.timer);
        frames = stats_of (probe.frames);
        print_row (phase_names[phase], call_ms / 1000.0, &timer, &frames);
        g_print ("               the call: %.0f ms wall, %.0f ms CPU of the main thread\n",
                 call_ms, cpu_ms);
        worst_cpu = MAX (worst_cpu, cpu_ms);
        if (phase == SHOW)
          g_print ("               rows listed: %u of %u nodes\n",
                   sight_inspector_get_n_rows (self), sight_observation_get_n_nodes (first));
        if (MAX (timer.max, frames.max) > worst.max)
          {
            worst.max = MAX (timer.max, frames.max);
            worst_phase = phase_names[phase];
          }
      }
  g_print ("%u elements; longest stall with the tree: %.1f ms (%s); target < %.0f ms: %s\n"
           "the longest call in CPU time of the main thread: %.0f ms\n",
           sight_observation_get_n_elements (first), worst.max, worst_phase, TARGET_MS,
           worst.max < TARGET_MS ? "met" : "MISSED", worst_cpu);

  gtk_window_destroy (GTK_WINDOW (window));
  g_clear_object (&w.result);
  g_main_loop_unref (w.loop);
  return 0;
}
