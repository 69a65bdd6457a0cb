/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Headless subcommands need a display for WebKitGTK's rendering but must work
 * where none exists: with neither DISPLAY nor WAYLAND_DISPLAY set, start a
 * private Xvfb, point DISPLAY at it and stop it at exit. */
gboolean sight_headless_ensure_display (GError **error);
/* What a command that renders needs before it starts: the display, its
 * standard output kept from WebKit's helper processes, GTK initialized. */
gboolean sight_headless_start          (GError **error);

G_END_DECLS
