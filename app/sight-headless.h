/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Headless subcommands need a display for WebKitGTK's rendering and a
 * session bus for GLib and WebKit, but must work where neither exists: with
 * no session bus to find, start a private dbus-daemon; with neither DISPLAY
 * nor WAYLAND_DISPLAY set, a private Xvfb. Both end with the command, however
 * it ends (at exit, or by their parent-death signal when it is killed). Call
 * before anything touches the bus or starts a thread. */
gboolean sight_headless_ensure_display     (GError **error);
/* The session bus alone, for the app: with none to find, a private
 * dbus-daemon that ends with the process (GLib would otherwise autolaunch
 * one that outlives it). A failure is only a warning: the app runs without. */
void     sight_headless_ensure_session_bus (void);
/* Whether GLib finds a session bus without autolaunching one. */
gboolean sight_headless_session_bus_exists (void);
/* What a command that renders needs before it starts: the display, its
 * standard output kept from WebKit's helper processes, GTK initialized. */
gboolean sight_headless_start              (GError **error);

G_END_DECLS
