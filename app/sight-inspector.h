/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <adwaita.h>

#include "sight-observation.h"

G_BEGIN_DECLS

#define SIGHT_TYPE_INSPECTOR (sight_inspector_get_type ())
G_DECLARE_FINAL_TYPE (SightInspector, sight_inspector, SIGHT, INSPECTOR, AdwBin)

/* The inspector: an observation's accessibility tree (role, name, states,
 * ref) and its masked screenshot with the nodes' boxes, side by side and
 * synchronized. Selecting a node (in the tree, by clicking the screenshot, or
 * with sight_inspector_select_ref()) emits ::node-selected with its ref. */
GtkWidget        *sight_inspector_new              (void);
void              sight_inspector_set_observation  (SightInspector   *self,
                                                    SightObservation *observation);
SightObservation *sight_inspector_get_observation  (SightInspector   *self);
/* Selects the row of @ref (NULL clears); FALSE when no node has it. */
gboolean          sight_inspector_select_ref       (SightInspector   *self,
                                                    const char       *ref);
const char       *sight_inspector_get_selected_ref (SightInspector   *self);
/* Rows of the tree as shown (expanded). */
guint             sight_inspector_get_n_rows       (SightInspector   *self);
/* Selects the next row (after the selected one, wrapping) whose role, name
 * or ref contains @text, case-insensitively; FALSE when none does. */
gboolean          sight_inspector_search           (SightInspector   *self,
                                                    const char       *text);
/* The same with the scan in a worker, as the search entry searches: the
 * main loop only selects the match. A newer search, another observation or
 * @cancellable cancels it (G_IO_ERROR_CANCELLED). */
void              sight_inspector_search_async     (SightInspector      *self,
                                                    const char          *text,
                                                    GCancellable        *cancellable,
                                                    GAsyncReadyCallback  callback,
                                                    gpointer             user_data);
gboolean          sight_inspector_search_finish    (SightInspector      *self,
                                                    GAsyncResult        *result,
                                                    GError             **error);
void              sight_inspector_focus_search     (SightInspector   *self);
GtkWidget        *sight_inspector_get_shot_view    (SightInspector   *self);
/* The context menu of a node, in the tree and on the screenshot (a right
 * click selects the node first; Menu or Shift+F10 opens it for the selected
 * node). NULL: none. */
void              sight_inspector_set_node_menu    (SightInspector   *self,
                                                    GMenuModel       *menu);
/* Opens the context menu for the selected node, as Shift+F10 does;
 * returns it, or NULL when no node is selected or no menu is set. */
GtkPopover       *sight_inspector_popup_node_menu  (SightInspector   *self);

G_END_DECLS
