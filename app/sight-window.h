/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <adwaita.h>

#include "sight-application.h"

G_BEGIN_DECLS

#define SIGHT_TYPE_WINDOW (sight_window_get_type ())
G_DECLARE_FINAL_TYPE (SightWindow, sight_window, SIGHT, WINDOW, AdwApplicationWindow)

SightWindow *sight_window_new      (SightApplication *application);
void         sight_window_open_uri (SightWindow      *self,
                                    const char       *uri);

G_END_DECLS
