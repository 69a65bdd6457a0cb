/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What the window's tests (test-window, test-step-list, test-history,
 * test-live-sessions, test-preferences) do first in main(). */
#pragma once

#include <adwaita.h>

#include "sight-graphics.h"

/* The tests see "no model configured", whatever the shell has, and GTK draws
 * as sightline's main() has it draw; then GTK's test set-up and libadwaita. */
G_GNUC_UNUSED static void
app_test_init (int    *argc,
               char ***argv)
{
  g_unsetenv ("SIGHTLINE_MODEL");
  g_unsetenv ("OPENAI_API_KEY");
  g_unsetenv ("ANTHROPIC_API_KEY");
  sight_graphics_choose_renderer ();
  gtk_test_init (argc, argv, NULL);
  adw_init ();
}
