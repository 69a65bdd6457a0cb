/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Main-loop stall probes shared by the window benchmarks: a timeout at
 * default priority (the gap between two of its dispatches is how long the
 * loop dispatched nothing) and a tick callback on a widget (the gap between
 * two frames of its frame clock), with max, p99 and the count of gaps over
 * the target. */
#pragma once

#include <gtk/gtk.h>

#define PROBE_MS     5
#define TARGET_MS    100.0

typedef struct {
  GArray *timer;     /* gaps in ms, doubles */
  GArray *frames;
  gint64  last_timer;
  gint64  last_frame;
} Probe;

static Probe probe;
static gboolean probing;

static void
record_gap (GArray *gaps,
            gint64 *last)
{
  gint64 now = g_get_monotonic_time ();

  if (probing)
    {
      double gap = (now - *last) / 1000.0;

      g_array_append_val (gaps, gap);
    }
  *last = now;
}

static gboolean
timer_cb (gpointer user_data)
{
  record_gap (probe.timer, &probe.last_timer);
  return G_SOURCE_CONTINUE;
}

static gboolean
tick_cb (GtkWidget     *widget,
         GdkFrameClock *clock,
         gpointer       user_data)
{
  record_gap (probe.frames, &probe.last_frame);
  return G_SOURCE_CONTINUE;
}

/* Installs the two probes, the frame probe on @widget. */
static void
probe_install (GtkWidget *widget)
{
  probe.timer = g_array_new (FALSE, FALSE, sizeof (double));
  probe.frames = g_array_new (FALSE, FALSE, sizeof (double));
  g_timeout_add_full (G_PRIORITY_DEFAULT, PROBE_MS, timer_cb, NULL, NULL);
  gtk_widget_add_tick_callback (widget, tick_cb, NULL, NULL);
}

/* Starts counting from now: a phase that begins with a long call on the
 * main loop counts that call as a gap. */
static void
probe_start (void)
{
  g_array_set_size (probe.timer, 0);
  g_array_set_size (probe.frames, 0);
  probe.last_timer = probe.last_frame = g_get_monotonic_time ();
  probing = TRUE;
}

static int
compare_doubles (gconstpointer a,
                 gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

typedef struct {
  double max, p99;
  guint over;        /* gaps over the target */
} Stats;

static Stats
stats_of (GArray *gaps)
{
  Stats stats = { 0 };

  if (gaps->len == 0)
    return stats;
  g_array_sort (gaps, compare_doubles);
  stats.max = g_array_index (gaps, double, gaps->len - 1);
  stats.p99 = g_array_index (gaps, double, MIN (gaps->len - 1, gaps->len * 99 / 100));
  for (guint i = 0; i < gaps->len; i++)
    stats.over += g_array_index (gaps, double, i) > TARGET_MS;
  return stats;
}

static void
print_header (void)
{
  g_print ("gaps in ms between dispatches of a %d ms timeout and between frames\n", PROBE_MS);
  g_print ("%-14s %7s | %8s %8s %6s | %8s %8s %6s\n", "phase", "seconds", "loop max", "p99",
           ">100", "frame max", "p99", ">100");
}

static void
print_row (const char *phase,
           double      seconds,
           Stats      *timer,
           Stats      *frames)
{
  g_print ("%-14s %7.1f | %8.1f %8.1f %6u | %8.1f %8.1f %6u\n", phase, seconds,
           timer->max, timer->p99, timer->over, frames->max, frames->p99, frames->over);
}
