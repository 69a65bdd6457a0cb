/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <adwaita.h>

#include "sight-web-page.h"

G_BEGIN_DECLS

#define SIGHT_TYPE_DEMO_OVERLAY (sight_demo_overlay_get_type ())
G_DECLARE_FINAL_TYPE (SightDemoOverlay, sight_demo_overlay, SIGHT, DEMO_OVERLAY, AdwBin)

/* Demo mode's caption over the live page: a large line saying what the
 * current step does ("Clicking “Sign in”"). For a direct step it also finds
 * the step's target in the live page and emits ::target-found with its ref,
 * so the window can outline it before the action runs. */

GtkWidget  *sight_demo_overlay_new          (void);
void        sight_demo_overlay_set_page     (SightDemoOverlay *self,
                                             SightWebPage     *page);
/* Shows the caption of a @kind step ("do", "act", "assert", …) and looks up
 * a direct step's target. */
void        sight_demo_overlay_show_step    (SightDemoOverlay *self,
                                             const char       *kind,
                                             const char       *instruction);
void        sight_demo_overlay_clear        (SightDemoOverlay *self);
/* The caption shown, or NULL. */
const char *sight_demo_overlay_get_caption  (SightDemoOverlay *self);

/* The caption of a step, translated (never NULL). */
char       *sight_demo_caption              (const char       *kind,
                                             const char       *instruction);

G_END_DECLS
