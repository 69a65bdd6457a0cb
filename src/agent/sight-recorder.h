/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>
#include <webkit/webkit.h>

#include "sight-direct-step.h"

G_BEGIN_DECLS

/* Records a person's interaction with a web view as direct steps.
 *
 * Clicks, typing (one fill per field), selections, checks, the keys that
 * matter (Enter, Escape, Tab) and navigations the person started become test
 * file steps: { "do": "click the \"Sign in\" button", "target": descriptor }.
 * A descriptor is how the observation named the element: { ref, role, name,
 * nth, count, tag, box }. A typed password is never read: its step types a
 * {param} whose params name a credential. Assertions are added by picking an
 * element (sight_recorder_pick). */

typedef enum {
  SIGHT_PICK_VISIBLE,
  SIGHT_PICK_TEXT,
  SIGHT_PICK_VALUE,
  SIGHT_PICK_CHECKED,
} SightPickKind;

#define SIGHT_TYPE_RECORDER (sight_recorder_get_type ())
G_DECLARE_FINAL_TYPE (SightRecorder, sight_recorder, SIGHT, RECORDER, GObject)

SightRecorder *sight_recorder_new          (WebKitWebView  *view);

/* Starts listening: on every page loaded from now on, and on the current one. */
void           sight_recorder_start        (SightRecorder  *self);
/* Stops; a pending fill is sent first. */
void           sight_recorder_stop         (SightRecorder  *self);
gboolean       sight_recorder_is_recording (SightRecorder  *self);

/* The next click on the page picks an element for an assertion instead of
 * reaching the page. */
void           sight_recorder_pick         (SightRecorder  *self,
                                            SightPickKind   kind);

/* The name of the credential a typed password refers to (default
 * "password"); the step reads: type {password} into the "Password" field. */
void           sight_recorder_set_credential_name (SightRecorder *self,
                                                   const char    *name);

/* Whether a value typed into a secure field is offered to be saved as a
 * credential (from the next start; default FALSE: the value is never
 * read). When on, the recorder holds the value host-side only, registers it
 * with the redactor at once, and emits ::credential-offered after the
 * step; the step types {param} with the default credential name until the
 * offer is accepted. A new offer replaces an unanswered one. */
void           sight_recorder_set_offer_credentials (SightRecorder *self,
                                                     gboolean       offer);
/* The pending offer (borrowed strings), FALSE when there is none. */
gboolean       sight_recorder_get_credential_offer  (SightRecorder  *self,
                                                     const char    **name,
                                                     const char    **origin,
                                                     const char    **purpose);
/* The offered step now names the credential @name; returns the typed value
 * for the caller to store (wipe it after), or NULL with no offer pending. */
char          *sight_recorder_accept_credential     (SightRecorder *self,
                                                     const char    *name);
/* Forgets the offered value; the step keeps its default credential name. */
void           sight_recorder_decline_credential    (SightRecorder *self);

/* A navigation within this long after a recorded click or key press is its
 * consequence, not a step of its own (default 3000 ms). */
void           sight_recorder_set_navigation_window (SightRecorder *self,
                                                     guint          window_ms);

/* The text of the step that does @verb (for an expectation, @expect, with
 * @value where it takes one; NULL otherwise) to the element @descriptor
 * names ({ role, name, nth, count }): the words a recorded step uses for it,
 * so a step picked in the app names its target as a recorded click does. */
char          *sight_recorder_step_text    (JsonObject      *descriptor,
                                            SightDirectVerb  verb,
                                            SightExpectKind  expect,
                                            const char      *value);

/* The URL when recording started (the test file's "url"), or NULL. */
const char    *sight_recorder_get_start_url (SightRecorder *self);
/* The steps so far, a JSON array of test-file steps (a new reference). */
JsonNode      *sight_recorder_get_steps    (SightRecorder  *self);
/* The steps as a test file object { name, url, steps }. */
JsonNode      *sight_recorder_to_test_file (SightRecorder  *self,
                                            const char     *name);

G_END_DECLS
