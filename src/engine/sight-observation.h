/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "sight-web-page.h"

G_BEGIN_DECLS

typedef enum {
  SIGHT_OBSERVE_DEFAULT    = 0,
  /* The text is the whole tree (the inspector, --full) rather than the
   * bounded text for the model. */
  SIGHT_OBSERVE_FULL_TEXT  = 1 << 0,
  /* Also take the viewport screenshot, every secure field masked, resampled
   * to a long side of at most SIGHT_OBSERVATION_MAX_SIDE. */
  SIGHT_OBSERVE_SCREENSHOT = 1 << 1,
  /* Leave the JSON tree out (text only; diff and lookups then find nothing). */
  SIGHT_OBSERVE_NO_TREE    = 1 << 2,
  /* Parse and index the tree in the capture's worker, for a caller that
   * walks it on the main loop at once (a step resolving its target, the
   * inspector). Without it the tree stays JSON text until first used
   * (sight_observation_load_tree_async()); what is observed is the same. */
  SIGHT_OBSERVE_PARSE_TREE = 1 << 3,
} SightObserveFlags;

/* The long side of screenshots that go to the model (spec: at most 768). */
#define SIGHT_OBSERVATION_MAX_SIDE 768

#define SIGHT_TYPE_OBSERVATION (sight_observation_get_type ())
G_DECLARE_FINAL_TYPE (SightObservation, sight_observation, SIGHT, OBSERVATION, GObject)

/* The injected script (src/engine/js/snapshot.js). Run it with
 * sight_web_page_evaluate_async() as a prelude:
 *   "<script>\nreturn __sight.snapshot.resolve(args.ref) ? 1 : 0;"
 * Its API is documented at the top of snapshot.js. */
const char       *sight_observation_get_script       (void);
/* A ready function body: the script, then `return __sight.snapshot.<call>;`
 * (e.g. "observe(args)", "find(args)"). */
char             *sight_observation_build_call       (const char          *call);

/* One evaluate round trip (and, with SIGHT_OBSERVE_SCREENSHOT, one masked
 * screenshot). Fails with the page's errors (STEP_TIMEOUT,
 * ENVIRONMENT_UNAVAILABLE, ACTION_FAILED for a script error). */
void              sight_observation_capture_async    (SightWebPage        *page,
                                                      SightObserveFlags    flags,
                                                      guint                timeout_ms,
                                                      GCancellable        *cancellable,
                                                      GAsyncReadyCallback  callback,
                                                      gpointer             user_data);
/* The same, unless the page is still as @since saw it (the same document,
 * no mutation or input, scroll or viewport change since, nothing that
 * changes with no such signal: sight_observation_get_state()): then
 * _finish returns @since itself, with no walk and no screenshot taken.
 * A new observation carries the page's state to compare with next time
 * (@since NULL: the first); sight_observation_capture_async() gives none. */
void              sight_observation_capture_since_async (SightWebPage        *page,
                                                         SightObserveFlags    flags,
                                                         SightObservation    *since,
                                                         guint                timeout_ms,
                                                         GCancellable        *cancellable,
                                                         GAsyncReadyCallback  callback,
                                                         gpointer             user_data);
/* The page as it is now: the page's last observation taken with the same
 * flags by either function above or this one (a screenshot's aside) when the
 * page is still as it saw it, at the cost of one small round trip; else a
 * new one, which is remembered in its turn. For a caller that reads the page
 * without keeping what it read: the observation may be one that another
 * caller holds. */
void              sight_observation_capture_current_async (SightWebPage        *page,
                                                           SightObserveFlags    flags,
                                                           guint                timeout_ms,
                                                           GCancellable        *cancellable,
                                                           GAsyncReadyCallback  callback,
                                                           gpointer             user_data);
SightObservation *sight_observation_capture_finish   (GAsyncResult        *result,
                                                      GError             **error);
/* Takes the page's screenshot, masked by @observation's secure boxes, and
 * keeps it in @observation: the screenshot step of a capture with
 * SIGHT_OBSERVE_SCREENSHOT, for a caller that took the tree first. WebKit
 * paints the snapshot when its request arrives, before any script or input
 * sent to the page after this call. */
void              sight_observation_capture_screenshot_async  (SightObservation    *observation,
                                                               SightWebPage        *page,
                                                               GCancellable        *cancellable,
                                                               GAsyncReadyCallback  callback,
                                                               gpointer             user_data);
gboolean          sight_observation_capture_screenshot_finish (GAsyncResult        *result,
                                                               GError             **error);

/* From the JSON value snapshot.js's observe() returned (takes a reference). */
SightObservation *sight_observation_new_from_json    (JsonNode            *result,
                                                      GError             **error);
/* An observation as it was stored: @json as sight_observation_to_json() wrote
 * it (NULL or unreadable: an empty observation, which shows nothing rather
 * than another moment), @url for JSON that names none, and the screenshot
 * taken with it (copied, its bytes referenced; NULL for none). */
SightObservation *sight_observation_new_from_stored  (const char            *json,
                                                      const char            *url,
                                                      const SightScreenshot *shot);
/* The same in a worker, its tree parsed and indexed there too (a stored
 * tree is megabytes of JSON, as a live one): the one path of
 * sight_observation_capture_async()'s parse. */
void              sight_observation_new_from_stored_async  (const char            *json,
                                                            const char            *url,
                                                            const SightScreenshot *shot,
                                                            GCancellable          *cancellable,
                                                            GAsyncReadyCallback    callback,
                                                            gpointer               user_data);
SightObservation *sight_observation_new_from_stored_finish (GAsyncResult          *result,
                                                            GError               **error);

const char       *sight_observation_get_url          (SightObservation    *self);
const char       *sight_observation_get_title        (SightObservation    *self);
/* The page's state as the observation saw it, a token only the page can
 * compare (sight_observation_capture_since_async()); NULL when the page
 * could change unseen. Never stored. */
const char       *sight_observation_get_state        (SightObservation    *self);
/* The text: bounded for the model, or the whole tree with FULL_TEXT. */
const char       *sight_observation_get_text         (SightObservation    *self);
gboolean          sight_observation_is_full_text     (SightObservation    *self);
/* The tree's root node ({ role: "document", children: [...] }), or NULL;
 * parsed and indexed on the first call by any of the functions that read
 * the tree (get_tree, get_nodes, find_ref, lookup, hit_test, diff, a pretty
 * to_json), on the caller's thread: megabytes of JSON for a large page, so
 * a main-loop caller loads it first in a worker with
 * sight_observation_load_tree_async() or captures with
 * SIGHT_OBSERVE_PARSE_TREE. Thread-safe: a second caller waits for it. */
JsonNode         *sight_observation_get_tree         (SightObservation    *self);
void              sight_observation_load_tree_async  (SightObservation    *self,
                                                      GCancellable        *cancellable,
                                                      GAsyncReadyCallback  callback,
                                                      gpointer             user_data);
gboolean          sight_observation_load_tree_finish (SightObservation    *self,
                                                      GAsyncResult        *result,
                                                      GError             **error);
/* Whether the tree is parsed and indexed (then reading it costs nothing). */
gboolean          sight_observation_tree_loaded      (SightObservation    *self);
/* The whole observe() result (borrowed), but its "tree" member, which is
 * sight_observation_get_tree() (null here once the tree was set aside). */
JsonNode         *sight_observation_get_result       (SightObservation    *self);
/* The observation as JSON text for the store and the inspector. */
char             *sight_observation_to_json          (SightObservation    *self,
                                                      gboolean             pretty);

void              sight_observation_get_viewport     (SightObservation    *self,
                                                      int                 *width,
                                                      int                 *height,
                                                      int                 *scroll_x,
                                                      int                 *scroll_y);
guint             sight_observation_get_n_elements   (SightObservation    *self);
guint             sight_observation_get_n_nodes      (SightObservation    *self);
guint             sight_observation_get_n_interactive (SightObservation   *self);
/* Elements left out because the page passed the walk's guard for memory (a
 * million elements or tree nodes; past it only what the viewport shows is
 * still observed, up to twice that): 0 when the tree is complete, as it is
 * for any real page. The texts then say "truncated" on their first line and
 * "… N elements not observed" where they were. Page text past 2,000,000
 * characters is kept only in the viewport ("text clipped" on the first
 * line); elements are listed all the same. */
guint             sight_observation_get_n_not_observed (SightObservation  *self);
/* Subtrees the walk could not observe because the page's content made it
 * throw: each is one node with an "error" member in place of its subtree. */
guint             sight_observation_get_n_errors     (SightObservation    *self);
/* Secure fields seen in the viewport (the ones a screenshot must mask), and
 * on the whole page. */
guint             sight_observation_get_n_secure     (SightObservation    *self);
guint             sight_observation_get_n_secure_total (SightObservation  *self);
/* Mask rectangles painted on the screenshot; 0 without a screenshot. */
guint             sight_observation_get_n_masked     (SightObservation    *self);
/* TRUE when a screenshot exists and masked at least every secure field in
 * the viewport and every region holding a secret filled into the page
 * (SightScreenshot.n_secret_regions); FALSE means pixels must be refused
 * (MASKING_UNPROVEN). */
gboolean          sight_observation_masking_proven   (SightObservation    *self);
/* The masked screenshot (borrowed), or NULL. */
const SightScreenshot *sight_observation_get_screenshot (SightObservation *self);
/* Boxes (viewport CSS pixels) of the secure fields in the viewport. */
GArray           *sight_observation_get_secure_boxes (SightObservation    *self);

/* The observation from the JSON text snapshot.js's observe() returned:
 * parsed by the caller's thread, so sight_observation_capture_async() runs it
 * in a worker, but for the tree, which stays text until first read. The object is not
 * shared until returned; afterwards use it from one thread at a time. */
SightObservation *sight_observation_new_from_text    (const char          *json,
                                                      GError             **error);

/* One node of the tree in document order (sight_observation_get_nodes()). */
typedef struct {
  JsonObject *node;      /* borrowed from the observation */
  const char *role;      /* "" when the node has none (text runs), never NULL */
  const char *name;
  const char *ref;
  guint       parent;    /* index of its parent; G_MAXUINT for the root */
  guint       position;  /* among its parent's children */
} SightObservationNode;

/* Every node of the tree in document order, text runs included (built with
 * the tree: sight_observation_get_tree()), or NULL with 0 nodes when
 * there is no tree. The inspector searches and selects by it. */
const SightObservationNode *sight_observation_get_nodes (SightObservation *self,
                                                         guint            *n_nodes);
/* The index in sight_observation_get_nodes() of the node with @ref. */
gboolean          sight_observation_find_ref         (SightObservation    *self,
                                                      const char          *ref,
                                                      guint               *index);

/* The node with @ref (borrowed), or NULL. */
JsonObject       *sight_observation_lookup           (SightObservation    *self,
                                                      const char          *ref);
/* The ref of the innermost node whose box contains (@x, @y) in viewport CSS
 * pixels, or NULL. */
const char       *sight_observation_hit_test         (SightObservation    *self,
                                                      double               x,
                                                      double               y);

/* One line of the text format for @node: role "name" states #ref. */
char             *sight_observation_node_line        (JsonObject          *node);

/* What changed from @before to @after: lines "+ " (appeared), "- "
 * (disappeared) and "~ " (changed, with what it was), at most @max_lines
 * (0: no limit) and a count of the rest. Empty when nothing changed.
 * @n_changes (optional) receives the number of changes. */
char             *sight_observation_diff             (SightObservation    *before,
                                                      SightObservation    *after,
                                                      guint                max_lines,
                                                      guint               *n_changes);

G_END_DECLS
