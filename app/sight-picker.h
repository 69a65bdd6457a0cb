/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <adwaita.h>

#include "sight-observation.h"

G_BEGIN_DECLS

struct _SightWindow;

/* Expectations by picking. One node of the observation is the picker's
 * target: the one selected in the tree or on the screenshot, the one under
 * the pointer when the page's context menu opens, or the one clicked in
 * Pick mode. The expectation menu (sight_picker_get_menu(), shown by all
 * three) adds a direct step about it at the step list's selection, named
 * as the recorder names a target, and outlines it on the page.
 *
 * Actions, in the window's "steps" group: steps.expect-visible,
 * steps.expect-text (asks for the text, the node's prefilled),
 * steps.expect-value, steps.expect-checked, steps.expect-unchecked,
 * steps.expect-enabled, steps.expect-disabled, steps.expect-url (asks for
 * the part of the address, the page's path prefilled), enabled as they fit
 * the target's role and states; and steps.pick, a toggle: while on,
 * hovering the page shows the step that would click the element under the
 * pointer, and a click opens the expectation menu instead of reaching the
 * page. */

#define SIGHT_TYPE_PICKER (sight_picker_get_type ())
G_DECLARE_FINAL_TYPE (SightPicker, sight_picker, SIGHT, PICKER, GObject)

SightPicker *sight_picker_new              (struct _SightWindow *window);
GMenuModel  *sight_picker_get_menu         (SightPicker       *self);
/* The "steps" group the window holds (borrowed). */
GActionGroup *sight_picker_get_actions     (SightPicker       *self);
/* Makes the node @ref of the window's observation the target (NULL: none;
 * then only steps.expect-url is enabled). */
void         sight_picker_set_target       (SightPicker       *self,
                                            const char        *ref);
const char  *sight_picker_get_target       (SightPicker       *self);
/* The dialog of steps.expect-text or steps.expect-url while it is up
 * (responses "cancel" and "add"), else NULL. */
AdwMessageDialog *sight_picker_get_dialog  (SightPicker       *self);
/* The pointer at web view point (@x, @y) in Pick mode, as motion there
 * does: the label shows the step for the element under it; returns the
 * label's text (borrowed), or NULL when no node is there. */
const char  *sight_picker_hover            (SightPicker       *self,
                                            double             x,
                                            double             y);
/* The label Pick mode shows over the page (for the screenshots). */
GtkWidget   *sight_picker_get_hover_popover (SightPicker      *self);
/* A click at web view point (@x, @y) in Pick mode: the node under it is
 * the target and the expectation menu opens there (returned, borrowed). */
GtkPopover  *sight_picker_click            (SightPicker       *self,
                                            double             x,
                                            double             y);

G_END_DECLS
