/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

#include "sight-action.h"
#include "sight-observation.h"

G_BEGIN_DECLS

/* A direct step: a plain-language step ("click Sign in", "type \"a@b.c\" into
 * Email", "expect text \"Welcome\"") that runs with no model. Parsing is pure
 * text work; resolving the target needs an observation. */

typedef enum {
  SIGHT_DIRECT_CLICK,
  SIGHT_DIRECT_DOUBLE_CLICK,
  SIGHT_DIRECT_HOVER,
  SIGHT_DIRECT_FILL,           /* type / fill / enter / clear */
  SIGHT_DIRECT_PRESS,          /* a key or a chord, optionally into a target */
  SIGHT_DIRECT_SELECT,         /* an option of a select / listbox */
  SIGHT_DIRECT_CHECK,
  SIGHT_DIRECT_UNCHECK,
  SIGHT_DIRECT_UPLOAD,
  SIGHT_DIRECT_GOTO,
  SIGHT_DIRECT_BACK,
  SIGHT_DIRECT_FORWARD,
  SIGHT_DIRECT_RELOAD,
  SIGHT_DIRECT_SCROLL,
  SIGHT_DIRECT_WAIT_FOR_TEXT,  /* value: the text; expect: TEXT or NO_TEXT */
  SIGHT_DIRECT_WAIT_TIME,      /* value: milliseconds, as decimal text */
  SIGHT_DIRECT_EXPECT,
} SightDirectVerb;

typedef enum {
  SIGHT_EXPECT_NONE,
  SIGHT_EXPECT_TEXT,           /* value is on the page */
  SIGHT_EXPECT_NO_TEXT,        /* value is not on the page */
  SIGHT_EXPECT_URL_CONTAINS,
  SIGHT_EXPECT_URL_EQUALS,
  SIGHT_EXPECT_VISIBLE,        /* target exists and is visible */
  SIGHT_EXPECT_HIDDEN,         /* target is absent or not visible */
  SIGHT_EXPECT_CHECKED,
  SIGHT_EXPECT_UNCHECKED,
  SIGHT_EXPECT_ENABLED,
  SIGHT_EXPECT_DISABLED,
  SIGHT_EXPECT_VALUE,          /* target's value equals value */
  SIGHT_EXPECT_HAS_TEXT,       /* target's name or text contains value */
} SightExpectKind;

typedef enum {
  SIGHT_SCROLL_NONE,
  SIGHT_SCROLL_DOWN,
  SIGHT_SCROLL_UP,
  SIGHT_SCROLL_TOP,
  SIGHT_SCROLL_BOTTOM,
  SIGHT_SCROLL_TO_TARGET,
} SightScrollKind;

/* What a step acts on, as a person named it. */
typedef struct {
  char     *role;     /* ARIA role from a hint word ("link", "field"), or NULL */
  char     *name;     /* the accessible name as written, or NULL (role only) */
  char     *phrase;   /* the whole phrase after articles and the ordinal, for a
                       * fallback when a trailing word was not a role hint */
  int       nth;      /* 1-based; 0 = not given; -1 = the last one */
  gboolean  quoted;   /* the name was quoted */
} SightTarget;

typedef struct {
  SightDirectVerb  verb;
  gboolean         has_target;
  SightTarget      target;
  char            *value;      /* text to type, option, key, URL, file, expected text */
  char            *param;      /* set instead of value for "{name}": a params entry */
  SightExpectKind  expect;
  SightScrollKind  scroll;
  int              amount;     /* scroll pixels; 0 = one page */
  char            *source;     /* the step as written */
} SightDirectStep;

void             sight_direct_step_free   (SightDirectStep  *step);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightDirectStep, sight_direct_step_free)

/* Parses @text. A step that does not parse fails with INVALID_ARGUMENT and a
 * message that says what was not understood and how to write it. */
SightDirectStep *sight_direct_step_parse  (const char       *text,
                                           GError          **error);

/* A canonical text of @step that parses back to the same step. */
char            *sight_direct_step_to_text (const SightDirectStep *step);

/* The nicks of the generated enum types (sight-agent-enums.h). */
const char      *sight_direct_verb_to_string   (SightDirectVerb  verb);
const char      *sight_expect_kind_to_string   (SightExpectKind  kind);

/* The page action @verb performs (sight-action.h); FALSE for an expectation
 * and a wait for text, which only observe. */
gboolean         sight_direct_verb_to_action   (SightDirectVerb  verb,
                                                SightActionKind *out_kind);
/* The verb of a step that performs @kind; FALSE for an action no direct step
 * performs (a tap at a point, act's screenshot and done). */
gboolean         sight_direct_verb_from_action (SightActionKind  kind,
                                                SightDirectVerb *out_verb);
/* The roles a click looks for when the step names no kind of element
 * ("click Sign in"), in the order they are tried; NULL-terminated.  They are
 * the controls act's tap_at taps by ref (any other node is a bare point). */
const char * const *sight_direct_control_roles (void);

/* The ARIA role a hint word stands for ("button", "field", "check box"), or
 * NULL when @words is not a role hint. */
const char      *sight_role_hint_lookup        (const char      *words);
/* Whether an observed @role satisfies a hinted role: a "textbox" hint also
 * takes searchbox, combobox and spinbutton, a "checkbox" hint a switch, … */
gboolean         sight_role_hint_matches       (const char      *hint,
                                                const char      *role);

/* A key name as the engine takes it ("Enter", "Control+A", "ArrowDown"), or
 * NULL when @text is not a key or chord. */
char            *sight_key_normalize           (const char      *text);

/* A node of an observation as resolution sees it (borrowed strings). */
typedef enum {
  SIGHT_NODE_HIDDEN   = 1 << 0,   /* not rendered or outside every viewport scroll */
  SIGHT_NODE_CHECKED  = 1 << 1,   /* checked, pressed or selected */
  SIGHT_NODE_DISABLED = 1 << 2,
  SIGHT_NODE_FOCUSED  = 1 << 3,
  SIGHT_NODE_EXPANDED = 1 << 4,
  SIGHT_NODE_MIXED    = 1 << 5,
  SIGHT_NODE_SECURE   = 1 << 6,   /* a password or one-time-code field */
} SightNodeStates;

typedef struct {
  const char *ref;      /* "e12" */
  const char *role;
  const char *name;
  const char *value;    /* current value of a field, or NULL */
  guint       states;   /* SightNodeStates */
  const char *text;     /* the name and the text inside, or NULL */
  guint       depth;    /* listed ancestors: a node's subtree is the nodes after it that are deeper */
} SightNodeView;

/* Finds the node @step's target names among @nodes (document order): exact
 * role and name first, then the name case-insensitively, then as a substring.
 * Without a role hint, the verb's kind of control is preferred (a click
 * prefers controls over headings). Fails with ACTION_FAILED when nothing
 * matches, when the nth does not exist, or when several match and the step
 * does not say which: the message lists the candidates with their refs. */
gboolean         sight_direct_step_resolve     (const SightDirectStep *step,
                                                const SightNodeView   *nodes,
                                                guint                  n_nodes,
                                                guint                 *out_index,
                                                GError               **error);

/* The nodes of an observation's tree in document order, as resolution sees
 * them. Strings are borrowed from @observation, which the list keeps alive. */
typedef struct _SightNodeList SightNodeList;


SightNodeList       *sight_node_list_new   (SightObservation         *observation);
const SightNodeView *sight_node_list_get   (SightNodeList            *list,
                                            guint                    *n_nodes);
void                 sight_node_list_free  (SightNodeList            *list);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightNodeList, sight_node_list_free)

/* A short description of @target for messages: the 2nd "Add to cart" button */
char            *sight_target_describe         (const SightTarget     *target);

G_END_DECLS
