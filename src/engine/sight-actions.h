/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "sight-action.h"
#include "sight-web-page.h"

G_BEGIN_DECLS

/* Acting on a page: the engine contract of spec/agent-api.txt (perform by
 * node, tapAt by point). Each call checks actionability (attached, visible,
 * stable across two animation frames when anything could move it, enabled,
 * editable for fill, not covered by another element, which the error names)
 * until @timeout_ms, acts, then settles by signals: a navigation the action
 * started has loaded, no request the action started is in flight (fetch, XHR
 * and reading their bodies, as the page hooks count them; any other load
 * WebKit reports), no timer of at most a second and no posted message its
 * handlers started is pending, in the page or a same-origin frame, and no DOM
 * mutation came after the action: in the task after it when a rendering
 * update would run nothing of the page's, else in or after a rendered frame.
 * Only a page that keeps mutating, or runs an interval or animation frames
 * the action started, falls back to a short window (half a second for a clean
 * frame), then is given up on ("mutating"). All of it is bounded by the same
 * deadline.
 *
 * @action is a JSON object with "type" and the type's fields:
 *   click        button ("left", "middle", "right"), clickCount (1-3),
 *                modifiers (["Shift", "Control", "Alt", "Meta"]), position {x, y}
 *   hover        modifiers, position
 *   fill         value (replaces the value)
 *   type         text (key by key), delay (ms between keys)
 *   press        keys: a key or chord ("Enter", "Control+A") or a list of them
 *   select       values: option values or labels (or value)
 *   check, uncheck, focus, scrollIntoView
 *   scroll       dx, dy in CSS pixels, or pages (a multiple of 0.8 viewport
 *                heights), on the ref's element or, with ref NULL, the page
 *   press        with ref NULL: to the focused element
 *   setFiles     files: paths, answered through WebKit's file chooser request
 *   drag         to: the ref to drop on
 *
 * The result object: { ok, action, ref, descriptor { ref, role, name, nth,
 * text, tag, testId, css, frame[], box, viewport }, detail, navigated, url,
 * settled, settleReason, settleMs, durationMs, popups [{ url }], input }.
 * "settleReason" says what ended the wait: "signals" (the page was done),
 * "load" or "requests" (after a navigation or requests the action started,
 * then signals), "mutating" (the page kept mutating through the window;
 * settled is false), "timeout" or
 * "navigation" (the document went away under the script). "input" names the
 * path the events took: "synthetic" (DOM events, isTrusted false) or "editor"
 * (text through the editing commands: beforeinput/input are trusted). */
void        sight_web_page_perform_async     (SightWebPage        *self,
                                              const char          *ref,
                                              JsonObject          *action,
                                              guint                timeout_ms,
                                              GCancellable        *cancellable,
                                              GAsyncReadyCallback  callback,
                                              gpointer             user_data);
JsonObject *sight_web_page_perform_finish    (SightWebPage        *self,
                                              GAsyncResult        *result,
                                              GError             **error);

/* Taps the point (@x, @y) in viewport CSS pixels: a listed control under it is
 * tapped by its ref (result "tapped": "ref", with its descriptor and the
 * offset inside its box); otherwise the bare point ("tapped": "point", with
 * what sits under it). Settles as perform does. */
void        sight_web_page_tap_at_async      (SightWebPage        *self,
                                              double               x,
                                              double               y,
                                              guint                timeout_ms,
                                              GCancellable        *cancellable,
                                              GAsyncReadyCallback  callback,
                                              gpointer             user_data);
JsonObject *sight_web_page_tap_at_finish     (SightWebPage        *self,
                                              GAsyncResult        *result,
                                              GError             **error);

/* Performs @action (sight-action.h): a tap at its point (a TAP_AT with no
 * ref) as sight_web_page_tap_at_async, any other page action on its ref (or
 * the page) as sight_web_page_perform_async. Fails with INVALID_ARGUMENT for a
 * kind that is not a page action. Finishes with the engine's result. */
void        sight_web_page_perform_action_async  (SightWebPage        *self,
                                                  const SightAction   *action,
                                                  guint                timeout_ms,
                                                  GCancellable        *cancellable,
                                                  GAsyncReadyCallback  callback,
                                                  gpointer             user_data);
JsonObject *sight_web_page_perform_action_finish (SightWebPage        *self,
                                                  GAsyncResult        *result,
                                                  GError             **error);

/* The wait after an action while its step is showing pixels, started once
 * perform or tapAt has settled the DOM: frames of the viewport are compared
 * every few tens of milliseconds, and the wait ends as soon as one differs
 * from the frame taken when the DOM had gone quiet (a canvas redrawn without
 * touching the DOM has landed), or once the frames have agreed for a change
 * window of some hundred milliseconds (two frames when the page's last
 * action settled by signals), or at @timeout_ms.  *@out_changed says
 * whether the screen changed.  Fails only when the page is gone or the wait
 * was cancelled. */
void        sight_web_page_settle_pixels_async  (SightWebPage        *self,
                                                 guint                timeout_ms,
                                                 GCancellable        *cancellable,
                                                 GAsyncReadyCallback  callback,
                                                 gpointer             user_data);
gboolean    sight_web_page_settle_pixels_finish (SightWebPage        *self,
                                                 GAsyncResult        *result,
                                                 gboolean            *out_changed,
                                                 GError             **error);

typedef enum {
  SIGHT_HISTORY_BACK,
  SIGHT_HISTORY_FORWARD,
  SIGHT_HISTORY_RELOAD,
} SightHistoryAction;

/* Back, forward or reload, waiting for the load (going to a URL is
 * sight_web_page_load_async()). Fails with ACTION_FAILED when there is no
 * page to go back or forward to. */
void        sight_web_page_history_async     (SightWebPage        *self,
                                              SightHistoryAction   action,
                                              guint                timeout_ms,
                                              GCancellable        *cancellable,
                                              GAsyncReadyCallback  callback,
                                              gpointer             user_data);
gboolean    sight_web_page_history_finish    (SightWebPage        *self,
                                              GAsyncResult        *result,
                                              GError             **error);

G_END_DECLS
