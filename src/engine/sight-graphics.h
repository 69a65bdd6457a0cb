/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* How Sightline draws on this machine. Without a GPU, Mesa renders OpenGL in
 * software (llvmpipe), and there GTK's GL renderer and WebKit's composited
 * pages cost more than they save: the idle main window paints a frame every
 * 45-50 ms with GL in software, every 20 ms with cairo (sight-bench-stall's
 * idle row, bench/window). */

gboolean sight_graphics_is_software     (void);
void     sight_graphics_choose_renderer (void);

G_END_DECLS
