/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Waiting for one async call in the benchmarks: pass done_cb and a Waiter,
 * then wait_for() runs the loop until the call completes and gives its
 * result (the Waiter keeps it until the next call). */
#pragma once

#include <gio/gio.h>

typedef struct {
  GMainLoop    *loop;
  GAsyncResult *result;
} Waiter;

static void
done_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  Waiter *w = user_data;

  w->result = g_object_ref (result);
  g_main_loop_quit (w->loop);
}

static GAsyncResult *
wait_for (Waiter *w)
{
  g_main_loop_run (w->loop);
  return w->result;
}
