/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>
#include <webkit/webkit.h>

#include "sight-image.h"

G_BEGIN_DECLS

/* When a load counts as finished. */
typedef enum {
  SIGHT_WAIT_UNTIL_DOMCONTENTLOADED,
  SIGHT_WAIT_UNTIL_LOAD,
  SIGHT_WAIT_UNTIL_NETWORKIDLE,
} SightWaitUntil;

gboolean sight_wait_until_from_string (const char     *name,
                                       SightWaitUntil *out);

/* SightImageFormat, sight_image_format_*() and sight_encode_image() are in
 * sight-image.h (base), shared with the report. */

/* A rectangle in viewport CSS pixels (for full-page shots: page CSS pixels). */
typedef struct {
  double x, y, width, height;
} SightRect;

typedef struct {
  gboolean          full_page;
  SightImageFormat  format;
  int               quality;      /* 0-100, JPEG and WebP only; -1 for the default */
  int               max_side;     /* resample so the long side is at most this; 0 = off */
  const SightRect  *masks;        /* painted over before encoding */
  guint             n_masks;
  /* TRUE: no encoding; the masked, resampled pixels come back as
   * SightScreenshot.pixbuf (RGB, flattened onto white) and @format and
   * @quality are unused (the video recorder's frames) */
  gboolean          raw;
} SightScreenshotOptions;

#define SIGHT_SCREENSHOT_OPTIONS_INIT { FALSE, SIGHT_IMAGE_PNG, -1, 0, NULL, 0, FALSE }

typedef struct {
  GBytes *bytes;       /* the encoded image */
  int     width;       /* of the encoded image, in pixels */
  int     height;
  double  scale;       /* encoded pixels per CSS pixel */
  guint   n_masked;    /* mask rectangles actually painted */
  /* of the masks, regions holding a secret a step filled into the page (a
   * field, a text run, an element rendering an attribute), in the captured
   * area: each must be among those painted */
  guint   n_secret_regions;
  SightImageFormat format; /* how @bytes are encoded */
  GdkPixbuf *pixbuf;   /* with SightScreenshotOptions.raw, instead of @bytes */
} SightScreenshot;

void        sight_screenshot_free          (SightScreenshot       *shot);
/* The MIME type of the encoded image ("image/png", …). */
const char *sight_screenshot_get_mime_type (const SightScreenshot *shot);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightScreenshot, sight_screenshot_free)

/* What the page logged over its life. */
typedef enum {
  SIGHT_LOG_CONSOLE,         /* console.* message */
  SIGHT_LOG_PAGE_ERROR,      /* uncaught exception or unhandled rejection */
  SIGHT_LOG_REQUEST_FAILED,  /* network error or HTTP status >= 400 */
  SIGHT_LOG_BLOCKED,         /* a navigation refused: outside the allowed origins */
} SightLogKind;

/* "console", "page_error", "request_failed", "blocked": the names the store keeps. */
const char *sight_log_kind_to_string (SightLogKind kind);

typedef struct {
  SightLogKind  kind;
  char         *level;       /* console: log, info, warning, error, debug */
  char         *text;
  char         *url;         /* the source or the request URL */
  guint         status;      /* HTTP status for failed requests, 0 for network errors */
  gint64        timestamp;   /* g_get_real_time () */
} SightLogEntry;

void sight_log_entry_free (SightLogEntry *entry);

#define SIGHT_TYPE_WEB_PAGE (sight_web_page_get_type ())
G_DECLARE_FINAL_TYPE (SightWebPage, sight_web_page, SIGHT, WEB_PAGE, GObject)

/* The name of the isolated script world every Sightline script runs in. */
#define SIGHT_SCRIPT_WORLD "sightline"

SightWebPage  *sight_web_page_new                 (void);
/* The view, for embedding in a window. Headless pages keep it in an
 * unmapped offscreen toplevel of their own. */
WebKitWebView *sight_web_page_get_web_view        (SightWebPage        *self);
const char    *sight_web_page_get_uri             (SightWebPage        *self);

void           sight_web_page_set_viewport        (SightWebPage        *self,
                                                   int                  width,
                                                   int                  height,
                                                   double               device_scale);
void           sight_web_page_get_viewport        (SightWebPage        *self,
                                                   int                 *width,
                                                   int                 *height);

/* Loads @uri; finishes when @wait_until is reached, or fails with
 * ENVIRONMENT_UNAVAILABLE (unreachable), STEP_TIMEOUT (deadline) or
 * INVALID_ARGUMENT (not http/https/about/data). */
void           sight_web_page_load_async          (SightWebPage        *self,
                                                   const char          *uri,
                                                   SightWaitUntil       wait_until,
                                                   guint                timeout_ms,
                                                   GCancellable        *cancellable,
                                                   GAsyncReadyCallback  callback,
                                                   gpointer             user_data);
gboolean       sight_web_page_load_finish         (SightWebPage        *self,
                                                   GAsyncResult        *result,
                                                   GError             **error);

/* Runs @function_body (the body of an async JS function; `args` is bound to
 * @args, or null) in the SIGHT_SCRIPT_WORLD isolated world of the main frame.
 * Its return value comes back as JSON. Fails with STEP_TIMEOUT after
 * @timeout_ms, and ENVIRONMENT_UNAVAILABLE when the web process died or hung. */
void           sight_web_page_evaluate_async      (SightWebPage        *self,
                                                   const char          *function_body,
                                                   JsonNode            *args,
                                                   guint                timeout_ms,
                                                   GCancellable        *cancellable,
                                                   GAsyncReadyCallback  callback,
                                                   gpointer             user_data);
JsonNode      *sight_web_page_evaluate_finish     (SightWebPage        *self,
                                                   GAsyncResult        *result,
                                                   GError             **error);
/* The same, finishing with the value's JSON text unparsed (never NULL on
 * success; "null" for undefined), for a caller that parses a large value off
 * the main thread (sight_observation_capture_async()). */
void           sight_web_page_evaluate_text_async (SightWebPage        *self,
                                                   const char          *function_body,
                                                   JsonNode            *args,
                                                   guint                timeout_ms,
                                                   GCancellable        *cancellable,
                                                   GAsyncReadyCallback  callback,
                                                   gpointer             user_data);
char          *sight_web_page_evaluate_text_finish (SightWebPage       *self,
                                                    GAsyncResult       *result,
                                                    GError            **error);

void           sight_web_page_screenshot_async    (SightWebPage                 *self,
                                                   const SightScreenshotOptions *options,
                                                   GCancellable                 *cancellable,
                                                   GAsyncReadyCallback           callback,
                                                   gpointer                      user_data);
SightScreenshot *sight_web_page_screenshot_finish (SightWebPage        *self,
                                                   GAsyncResult        *result,
                                                   GError             **error);

/* Log entries since the page was created (SightLogEntry, borrowed). */
GPtrArray     *sight_web_page_get_log             (SightWebPage        *self);

/* Additions of the engine beyond the first contract. */

/* The page's own ephemeral network session (cookies, cache, storage). */
WebKitNetworkSession *sight_web_page_get_network_session (SightWebPage *self);
double         sight_web_page_get_device_scale    (SightWebPage        *self);

/* Headless (the default): the view lives in a toplevel of the page's own that
 * is realized but never shown, sized by sight_web_page_set_viewport(). Set
 * FALSE before packing the view into a window of your own; the window's
 * allocation is then the viewport. */
void           sight_web_page_set_headless        (SightWebPage        *self,
                                                   gboolean             headless);

/* Requests started and not yet finished or failed. */
guint          sight_web_page_get_requests_in_flight (SightWebPage     *self);
/* TRUE when no request is in flight and none started or ended for @idle_ms. */
gboolean       sight_web_page_is_network_idle     (SightWebPage        *self,
                                                   guint                idle_ms);

/* How long the web process may stay unresponsive before it is terminated
 * (default 5000 ms). Pending operations then fail with ENVIRONMENT_UNAVAILABLE
 * and the next load starts a new web process. */
void           sight_web_page_set_hang_timeout    (SightWebPage        *self,
                                                   guint                timeout_ms);
/* The page's crash and hang state, the one place a step learns whether it
 * kept its page. Take a mark when a step starts; when it ends,
 * sight_web_page_check_process_async() fails with ENVIRONMENT_UNAVAILABLE
 * naming why if the web process went away since (crashed, stopped
 * responding, went over its memory limit, was terminated) or the page is
 * still blank after it did. It also asks a live web process to answer: one
 * silent for the hang timeout is terminated as stopped responding (WebKit
 * notices a stuck process only when input is sent to it). */
guint          sight_web_page_get_process_mark    (SightWebPage        *self);
void           sight_web_page_check_process_async (SightWebPage        *self,
                                                   guint                mark,
                                                   GCancellable        *cancellable,
                                                   GAsyncReadyCallback  callback,
                                                   gpointer             user_data);
/* The same, but a web process that answered a script at or after @since
 * (monotonic µs; the step's last round trip) is not asked again. */
void           sight_web_page_check_process_since_async (SightWebPage        *self,
                                                         guint                mark,
                                                         gint64               since,
                                                         GCancellable        *cancellable,
                                                         GAsyncReadyCallback  callback,
                                                         gpointer             user_data);
gboolean       sight_web_page_check_process_finish (SightWebPage       *self,
                                                    GAsyncResult       *result,
                                                    GError            **error);

/* Terminates the web process; pending operations fail with @reason. */
/* The memory one page's web process may use, in MB: past it WebKit ends the
 * process and the page reports EXCEEDED_MEMORY_LIMIT (a page-error log entry,
 * pending operations fail with ENVIRONMENT_UNAVAILABLE, the next load starts
 * a new process). SIGHTLINE_PAGE_MEMORY_LIMIT_MB (128–65536) sets it for the
 * process, read when the first page is made. */
#define SIGHT_PAGE_MEMORY_LIMIT_DEFAULT 3072
#define SIGHT_PAGE_MEMORY_LIMIT_MIN     128
#define SIGHT_PAGE_MEMORY_LIMIT_MAX     65536
guint          sight_web_page_get_memory_limit    (void);

/* Navigations of the page and its frames, redirects and popups to a URL
 * outside @origins (see SightOriginPolicy for the entries) are refused in
 * WebKit's policy handler and logged as SIGHT_LOG_BLOCKED. NULL or an empty
 * list allows everything (the default). Popups keep their opener's list. */
gboolean       sight_web_page_set_allowed_origins (SightWebPage       *self,
                                                   const char * const *origins,
                                                   GError            **error);

void           sight_web_page_terminate_web_process (SightWebPage      *self,
                                                     const char        *reason);

/* At a command's exit: ends the processes WebKit started for this process
 * (the sandboxed web and network processes, their D-Bus proxy) and waits
 * until they have exited, up to @deadline (monotonic, µs), then kills what
 * is left. TRUE when all had exited in time. What a command starts ends with
 * it: they would otherwise outlive it for a moment, holding its files. */
gboolean       sight_web_page_process_wait_exit   (gint64              deadline);

/* Popups this page opened (SightWebPage, borrowed), oldest first; each is a
 * page of the same session. See also the ::popup signal. */
GPtrArray     *sight_web_page_get_popups          (SightWebPage        *self);
/* The page that opened this one, or NULL. */
SightWebPage  *sight_web_page_get_opener          (SightWebPage        *self);

G_END_DECLS
