/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* One action on a page, as every part that acts speaks of it: a direct step
 * once resolved (sight-direct-run.c), act's tools (sight-step-act.c), a trace
 * the cache replays (sight-trace-cache.c) and the engine that performs it
 * (sight_web_page_perform_action_async, sight-actions.h).
 *
 * The kind's nick is its name everywhere: act's tool names, the "tool" of a
 * trace's actions, the actions of sight_web_page_perform_action_async. A trace
 * writes an uncheck as the "check" tool with "checked": false, as act's check
 * tool takes it. */
typedef enum {
  SIGHT_ACTION_CLICK,
  SIGHT_ACTION_DOUBLE_CLICK,   /*< nick=dblclick >*/
  SIGHT_ACTION_HOVER,
  SIGHT_ACTION_FILL,           /* value: the text that replaces the field's */
  SIGHT_ACTION_PRESS,          /* value: a key or chord; no ref: the focused element */
  SIGHT_ACTION_SELECT,         /* value: an option's value or label */
  SIGHT_ACTION_CHECK,
  SIGHT_ACTION_UNCHECK,
  SIGHT_ACTION_UPLOAD,         /* value: a file path */
  SIGHT_ACTION_SCROLL,         /* a ref: into view; none: the page, value "down", "up",
                                * "top", "bottom" or a pixel count */
  /* a point (x, y), or the node found there by its ref */
  SIGHT_ACTION_TAP_AT,         /*< nick=tap_at >*/
  SIGHT_ACTION_NAVIGATE,       /* value: the URL */
  SIGHT_ACTION_BACK,
  SIGHT_ACTION_FORWARD,
  SIGHT_ACTION_RELOAD,
  SIGHT_ACTION_WAIT,           /* value: milliseconds */
  SIGHT_ACTION_SCREENSHOT,     /* act's look at the pixels: nothing on the page changes */
  SIGHT_ACTION_DONE,           /* act's conclusion: nothing on the page changes */
} SightActionKind;

/* The roles of a listed control, NULL-terminated, in the order a step that
 * names no kind of element tries them ("click Sign in"): what a tap at a
 * point taps by its ref rather than as a bare point, in act's tap_at and in
 * the page's own tapAt (actions.js reads them as __sight.controlRoles). */
const char * const *sight_action_control_roles (void);
/* The script that hands the control roles to the page's scripts; run before
 * actions.js. */
const char *_sight_action_roles_script     (void);

const char *sight_action_kind_to_nick      (SightActionKind   kind);
/* The kind named @name (a nick: an act tool's name, a trace's "tool"). */
gboolean    sight_action_kind_from_nick    (const char       *name,
                                            SightActionKind  *out_kind);
/* Whether the engine performs @kind on a node or the page (the kinds of
 * sight_action_to_engine); the others are navigations or no page change. */
gboolean    sight_action_kind_is_page_action (SightActionKind kind);

typedef struct {
  SightActionKind  kind;
  char            *ref;          /* the node ("e12"); NULL: the page, the focused element or
                                  * the point (x, y) */
  JsonObject      *descriptor;   /* how the node was found, as the engine described it, or NULL */
  char            *value;        /* what the kind takes (above), or NULL */
  char            *param;        /* the params entry the value comes from ("password"), or NULL;
                                  * the value is never a secret's */
  double           x;            /* TAP_AT: viewport CSS pixels */
  double           y;
} SightAction;

void        sight_action_init              (SightAction       *action,
                                            SightActionKind    kind);
/* Frees the members; a value is wiped first (it may be what a person typed). */
void        sight_action_clear             (SightAction       *action);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SightAction, sight_action_clear)

/* The engine's action object ({ "type", … }, sight_web_page_perform_async)
 * of a page action on a node (@action->ref) or, for a scroll or a press
 * without one, the page; NULL for a kind that is not a page action. */
JsonObject *sight_action_to_engine         (const SightAction *action);

/* The action as act's tools take it and a trace records it: the tool's name
 * in *@out_tool and its arguments (ref; value or param for fill; option or
 * param for select; key; checked; direction; x, y; url; ms). NULL for an
 * upload (a file path is not replayed) and act's done. */
JsonObject *sight_action_to_tool_call      (const SightAction *action,
                                            const char       **out_tool);
/* The action of a tool call or a trace's recorded action: @tool and its
 * @args (NULL for none). FALSE for a tool that is no action. "tap" (older
 * traces) is tap_at. */
gboolean    sight_action_from_tool_call    (SightAction       *action,
                                            const char        *tool,
                                            JsonObject        *args);

G_END_DECLS
