/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "sight-observation.h"

G_BEGIN_DECLS

#define SIGHT_TYPE_SHOT_VIEW (sight_shot_view_get_type ())
G_DECLARE_FINAL_TYPE (SightShotView, sight_shot_view, SIGHT, SHOT_VIEW, GtkWidget)

/* An observation's masked screenshot with its nodes' boxes drawn over it.
 * A click emits ::node-clicked with the ref under the point (the
 * observation's hit test), or NULL. */
GtkWidget  *sight_shot_view_new              (void);
void        sight_shot_view_set_observation  (SightShotView    *self,
                                              SightObservation *observation);
void        sight_shot_view_set_selected_ref (SightShotView    *self,
                                              const char       *ref);
const char *sight_shot_view_get_selected_ref (SightShotView    *self);
/* Widget coordinates to viewport CSS pixels; FALSE outside the image. */
gboolean    sight_shot_view_to_css           (SightShotView    *self,
                                              double            x,
                                              double            y,
                                              double           *css_x,
                                              double           *css_y);
/* Viewport CSS pixels to widget coordinates (for tests and demo mode). */
gboolean    sight_shot_view_from_css         (SightShotView    *self,
                                              double            css_x,
                                              double            css_y,
                                              double           *x,
                                              double           *y);
/* The menu a right click opens about the node it selects (NULL: none). */
void        sight_shot_view_set_context_menu (SightShotView    *self,
                                              GMenuModel       *menu);
/* Emits ::node-clicked as a click at widget point (@x, @y) would. */
void        sight_shot_view_click            (SightShotView    *self,
                                              double            x,
                                              double            y);

G_END_DECLS
