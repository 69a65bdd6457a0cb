/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "sight-error.h"
#include "sight-origin-policy.h"
#include "sight-web-page.h"

G_BEGIN_DECLS

typedef struct _SightPageOp SightPageOp;
typedef struct _Ping Ping;

struct _SightWebPage
{
  GObject parent_instance;

  /* owned */
  GtkWidget                *toplevel;     /* never presented; holds the view while headless */
  SightOriginPolicy        *origin_policy; /* NULL: every origin */
  WebKitUserContentFilter  *content_filter; /* the policy's subresource filter, once compiled */
  GError                   *filter_error;   /* it could not be compiled: no load runs */
  guint                     filter_generation; /* bumped by each set_allowed_origins */
  guint                     filter_timeout;    /* the compile's deadline, while compiling */
  char                     *deferred_uri;   /* the load waiting for the filter */
  GPtrArray                *held;           /* WebKitPolicyDecision waiting for it */
  WebKitWebView            *view;
  WebKitNetworkSession     *session;
  WebKitUserContentManager *content;
  GPtrArray                *log;          /* SightLogEntry */
  GHashTable               *in_flight;    /* WebKitWebResource → itself */
  GList                    *pending;      /* SightPageOp, evaluations and loads in flight */
  SightPageOp              *load_op;      /* the load being waited for, in @pending */

  int      width;
  int      height;
  double   device_scale;
  gboolean headless;

  gint64   last_network_activity;         /* monotonic µs */
  gint64   last_answer;                   /* monotonic µs: a script last answered */
  guint    hang_timeout_ms;
  guint    hang_source;
  guint    generation;                    /* bumped when the web process goes away */
  char    *lost_reason;                   /* why it went, until the next load starts */
  char    *last_loss;                     /* why it last went, kept (see check_process) */
  char    *terminate_reason;              /* why we are terminating the web process */

  guint         navigation_count;         /* main-frame loads started */
  gboolean      document_committed;       /* the latest main-frame load committed */
  gboolean      document_loaded;          /* … and its document's load event fired */
  guint         slice_chars;              /* results longer are read in slices of it
                                           * (sight-web-page-evaluate.c); 0: its default */
  char        **pending_files;            /* the answer to the next file chooser */
  gboolean      file_chooser_answered;
  SightWebPage *opener;                   /* weak */
  GPtrArray    *popups;                   /* SightWebPage this page opened */

  /* Secrets a step filled into this page (values, wiped when freed): every
   * screenshot paints over wherever they show. */
  GPtrArray    *filled_secrets;
  guint         secret_fills;             /* fills that typed (or began to) */
  guint         secrets_typing;           /* fills under way now */
  guint         secret_fills_begun;       /* fills started, ever */
};

/* The page's signals (sight-web-page.c installs them). */
enum {
  WEB_PROCESS_LOST,
  POPUP,
  N_SIGNALS
};

/* A wait of the page (a load, an evaluation, a check of the web process):
 * every one has a deadline and fails cleanly when the web process goes away. */
struct _SightPageOp
{
  SightWebPage *page;        /* borrowed; the op is removed before the page dies */
  GTask        *task;
  GCancellable *cancellable; /* internal: cancelled on timeout, crash or caller cancel */
  GCancellable *caller_cancellable;
  gulong        cancel_id;
  guint         timeout_source;
  guint         poll_source;
  guint         cancel_source;
  gboolean      done;
  gboolean      freed_by_callback; /* an engine callback still holds the op */
  Ping         *ping;              /* asking whether the web process still answers */
  guint         ping_source;
  GError       *timeout_error;     /* reported when the ping is answered */
  guint         timeout_ms;
  /* load only */
  SightWaitUntil wait_until;
  gboolean       wait_until_set;
  gboolean       started;
  gboolean       committed;
  gboolean       dom_ready;
  gboolean       loaded;
  gboolean       expects_document; /* asked for a URL that is not about: */
  gboolean       redirected;
  char          *requested_uri;
  GError        *load_error;
};

struct _Ping
{
  int          ref_count;
  SightPageOp *op;   /* cleared when the op goes away */
};

extern guint _sight_web_page_signals[N_SIGNALS];

/* The page, split by purpose: sight-web-page.c (the object, its pending
 * operations, loads, requests, the log, viewport, filled secrets),
 * sight-web-page-policy.c (allowed origins, popups), sight-web-page-process.c
 * (the web context, sandbox probe, crashes and hangs),
 * sight-web-page-evaluate.c and sight-web-page-capture.c (screenshots). */

/* Pending operations (sight-web-page.c). */
SightPageOp *_sight_page_op_new                 (SightWebPage       *self,
                                                 GTask              *task,
                                                 guint               timeout_ms,
                                                 GCancellable       *caller_cancellable);
void         _sight_page_op_complete            (SightPageOp        *op,
                                                 GError             *error,
                                                 gpointer            value,
                                                 GDestroyNotify      value_free);
void         _sight_page_op_free                (SightPageOp        *op);
void         _sight_ping_unref                  (Ping               *ping);
void         _sight_web_page_fail_pending_ops   (SightWebPage       *self,
                                                 SightErrorCode      code,
                                                 const char         *message);
/* The load being waited for moved on: completes it when it is done. */
void         _sight_web_page_load_op_check      (SightPageOp        *op);
void         _sight_web_page_add_log_entry      (SightWebPage       *self,
                                                 SightLogKind        kind,
                                                 const char         *level,
                                                 const char         *text,
                                                 const char         *url,
                                                 guint               status);

/* Allowed origins and popups (sight-web-page-policy.c); connected to the
 * view by sight-web-page.c. */
gboolean     _sight_web_page_decide_policy_cb   (WebKitWebView            *view,
                                                 WebKitPolicyDecision     *decision,
                                                 WebKitPolicyDecisionType  type,
                                                 SightWebPage             *self);
GtkWidget   *_sight_web_page_create_cb          (WebKitWebView          *view,
                                                 WebKitNavigationAction *action,
                                                 SightWebPage           *self);

/* The web process (sight-web-page-process.c). */
WebKitWebContext *_sight_web_page_get_web_context (void);
/* @op ran past its deadline: @error (taken) if the web process still
 * answers, else it is terminated as hung. */
void         _sight_page_op_timed_out           (SightPageOp        *op,
                                                 GError             *error);
void         _sight_web_page_web_process_terminated_cb (WebKitWebView                     *view,
                                                        WebKitWebProcessTerminationReason  reason,
                                                        SightWebPage                      *self);
void         _sight_web_page_responsive_changed_cb (WebKitWebView *view,
                                                    GParamSpec    *pspec,
                                                    SightWebPage  *self);


/* For the actions code of the engine. */

/* A script's result whose JSON is longer than @chars UTF-16 code units is
 * read back in slices of that length (0: the default, 262,144); for
 * the tests of the sliced path. */
void     _sight_web_page_set_slice_chars           (SightWebPage       *self,
                                                    guint               chars);

/* Main-frame loads started over the page's life. */
guint    _sight_web_page_get_navigation_count      (SightWebPage       *self);
gboolean _sight_web_page_is_loading                (SightWebPage       *self);
/* The next file chooser the page opens is answered with @files (paths);
 * NULL makes it cancel. */
void     _sight_web_page_set_pending_files         (SightWebPage       *self,
                                                    const char * const *files);
/* Whether a file chooser was answered since the files were set (once). */
gboolean _sight_web_page_take_file_chooser_answered (SightWebPage      *self);

/* Like sight_web_page_load_async() for a navigation started otherwise
 * (finish with sight_web_page_load_finish()). */
void     _sight_web_page_wait_for_navigation_async (SightWebPage       *self,
                                                    SightWaitUntil      wait_until,
                                                    guint               timeout_ms,
                                                    GCancellable       *cancellable,
                                                    GAsyncReadyCallback callback,
                                                    gpointer            user_data);

/* A digest of what the viewport shows now (sight-web-page-capture.c): equal
 * digests, equal frames.  The pixels themselves never leave the engine. */
void     _sight_web_page_frame_digest_async        (SightWebPage       *self,
                                                    GCancellable       *cancellable,
                                                    GAsyncReadyCallback callback,
                                                    gpointer            user_data);
char    *_sight_web_page_frame_digest_finish       (SightWebPage       *self,
                                                    GAsyncResult       *result,
                                                    GError            **error);

/* Secrets filled into the page (sight_web_page_fill_secret_async()): the
 * value is kept, wiped when the page goes, so every later screenshot can
 * paint over wherever it shows; a fill that typed counts towards
 * sight_web_page_get_secret_fills(). */
void       _sight_web_page_add_filled_secret      (SightWebPage       *self,
                                                   const char         *value);
void       _sight_web_page_count_secret_fill      (SightWebPage       *self);
/* A fill begins (@typing TRUE) or ends typing (sight-secret-fields.c). */
void       _sight_web_page_secret_typing          (SightWebPage       *self,
                                                   gboolean            typing);
/* The values of the page and its openers (borrowed strings). */
GPtrArray *_sight_web_page_collect_filled_secrets (SightWebPage       *self);

/* The web-process sandbox, probed once per process before the first load
 * (sight-web-page-process.c). */
gboolean   _sight_web_page_sandbox_probed         (void);
void       _sight_web_page_probe_sandbox_async    (GAsyncReadyCallback callback,
                                                   gpointer            user_data);
gboolean   _sight_web_page_sandbox_usable         (GError            **error);

G_END_DECLS
