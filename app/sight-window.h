/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <adwaita.h>

#include "sight-application.h"
#include "sight-composer.h"
#include "sight-history.h"
#include "sight-inspector.h"
#include "sight-live-sessions.h"
#include "sight-observation.h"
#include "sight-step-list.h"
#include "sight-web-page.h"

G_BEGIN_DECLS

#define SIGHT_TYPE_WINDOW (sight_window_get_type ())
G_DECLARE_FINAL_TYPE (SightWindow, sight_window, SIGHT, WINDOW, AdwApplicationWindow)

SightWindow      *sight_window_new             (SightApplication *application);
/* Loads @uri (a bare host gets https://, a loopback host http://). */
void              sight_window_open_uri        (SightWindow      *self,
                                                const char       *uri);
/* Starts the bundled demo site in-process (once) and opens it. */
void              sight_window_open_demo_site  (SightWindow      *self);
/* The demo site's base URL, or NULL before it started. */
const char       *sight_window_get_demo_url    (SightWindow      *self);

/* Opens a *.sightline.json test in the step list (it shows the Test page). */
gboolean          sight_window_open_test_file  (SightWindow      *self,
                                                GFile            *file,
                                                GError          **error);
SightStepList    *sight_window_get_step_list   (SightWindow      *self);
SightHistory     *sight_window_get_history     (SightWindow      *self);
/* Shows the sidebar's "test", "compose" or "runs" page. */
void              sight_window_show_page       (SightWindow      *self,
                                                const char       *name);
/* The "Save Changes?" dialog while it is up (closing, opening or starting a
 * new test with unsaved changes), else NULL. */
AdwMessageDialog *sight_window_get_save_dialog (SightWindow      *self);

SightWebPage     *sight_window_get_page        (SightWindow      *self);
/* Outlines the node @ref of the observation on the live page (NULL: none). */
void              sight_window_outline_ref     (SightWindow      *self,
                                                const char       *ref);
/* Expectations by picking and Pick mode (the "steps" action group). */
struct _SightPicker *sight_window_get_picker   (SightWindow      *self);
/* The in-app MCP server and the live sessions of its clients. */
SightLiveSessions *sight_window_get_live_sessions (SightWindow *self);
SightInspector   *sight_window_get_inspector   (SightWindow      *self);
SightComposer    *sight_window_get_composer    (SightWindow      *self);
/* The observation the inspector shows (borrowed), or NULL. */
SightObservation *sight_window_get_observation (SightWindow      *self);
/* Whether the page's web process is gone (the "The Page Stopped" notice is
 * up) until win.reload starts a new one. */
gboolean          sight_window_get_crashed     (SightWindow      *self);
/* Demo mode: panes and header bar hidden, full screen, step captions. */
gboolean          sight_window_get_demo_mode   (SightWindow      *self);
struct _SightDemoOverlay *sight_window_get_demo_overlay (SightWindow *self);
/* The bar that offers to save a recorded password as a credential. */
struct _SightCredentialOffer *sight_window_get_credential_offer (SightWindow *self);
/* Cancelled when the window closes; every long operation of the window
 * uses it or a child of it. */
GCancellable     *sight_window_get_cancellable (SightWindow      *self);

G_END_DECLS
