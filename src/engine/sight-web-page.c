/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-web-page"

#include "config.h"

#include "sight-web-page.h"

#include <errno.h>
#include <gdk-pixbuf/gdk-pixbuf.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <webp/encode.h>

#include "sight-engine-resources.h"
#include "sight-error.h"
#include "sight-graphics.h"
#include "sight-json.h"
#include "sight-origin-policy.h"
#include "sight-secret-fields.h"
#include "sight-web-page-private.h"

#define DEFAULT_WIDTH 1280
#define DEFAULT_HEIGHT 720
#define NETWORK_IDLE_MS 500
#define IDLE_POLL_MS 50
#define DEFAULT_HANG_TIMEOUT_MS 5000
#define MAX_LOG_ENTRIES 2000
#define MAX_LOG_TEXT 4096
#define FILTER_COMPILE_TIMEOUT_MS 10000

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
  guint    hang_timeout_ms;
  guint    hang_source;
  guint    generation;                    /* bumped when the web process goes away */
  char    *lost_reason;                   /* why it went, until the next load starts */
  char    *last_loss;                     /* why it last went, kept (see check_process) */
  char    *terminate_reason;              /* why we are terminating the web process */

  guint         navigation_count;         /* main-frame loads started */
  char        **pending_files;            /* the answer to the next file chooser */
  gboolean      file_chooser_answered;
  SightWebPage *opener;                   /* weak */
  GPtrArray    *popups;                   /* SightWebPage this page opened */

  /* Secrets a step filled into this page (values, wiped when freed): every
   * screenshot paints over wherever they show. */
  GPtrArray    *filled_secrets;
  guint         secret_fills;             /* fills that typed (or began to) */
};

G_DEFINE_FINAL_TYPE (SightWebPage, sight_web_page, G_TYPE_OBJECT)

enum {
  WEB_PROCESS_LOST,
  POPUP,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

enum {
  PROP_0,
  PROP_OPENER,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* ----------------------------------------------------------------------- */
/* Small public helpers                                                     */

gboolean
sight_wait_until_from_string (const char     *name,
                              SightWaitUntil *out)
{
  static const struct { const char *name; SightWaitUntil value; } names[] = {
    { "domcontentloaded", SIGHT_WAIT_UNTIL_DOMCONTENTLOADED },
    { "load", SIGHT_WAIT_UNTIL_LOAD },
    { "networkidle", SIGHT_WAIT_UNTIL_NETWORKIDLE },
  };

  for (guint i = 0; name != NULL && i < G_N_ELEMENTS (names); i++)
    if (g_ascii_strcasecmp (name, names[i].name) == 0)
      {
        *out = names[i].value;
        return TRUE;
      }
  return FALSE;
}

gboolean
sight_image_format_from_string (const char       *name,
                                SightImageFormat *out)
{
  if (name == NULL)
    return FALSE;
  if (g_ascii_strcasecmp (name, "png") == 0)
    *out = SIGHT_IMAGE_PNG;
  else if (g_ascii_strcasecmp (name, "jpeg") == 0 || g_ascii_strcasecmp (name, "jpg") == 0)
    *out = SIGHT_IMAGE_JPEG;
  else if (g_ascii_strcasecmp (name, "webp") == 0)
    *out = SIGHT_IMAGE_WEBP;
  else
    return FALSE;
  return TRUE;
}

const char *
sight_image_format_mime_type (SightImageFormat format)
{
  switch (format)
    {
    case SIGHT_IMAGE_JPEG:
      return "image/jpeg";
    case SIGHT_IMAGE_WEBP:
      return "image/webp";
    case SIGHT_IMAGE_PNG:
    default:
      return "image/png";
    }
}

gboolean
sight_image_format_from_mime_type (const char       *mime_type,
                                   SightImageFormat *out)
{
  g_return_val_if_fail (out != NULL, FALSE);

  if (g_strcmp0 (mime_type, "image/png") == 0)
    *out = SIGHT_IMAGE_PNG;
  else if (g_strcmp0 (mime_type, "image/jpeg") == 0)
    *out = SIGHT_IMAGE_JPEG;
  else if (g_strcmp0 (mime_type, "image/webp") == 0)
    *out = SIGHT_IMAGE_WEBP;
  else
    return FALSE;
  return TRUE;
}

void
sight_screenshot_free (SightScreenshot *shot)
{
  if (shot == NULL)
    return;
  g_clear_pointer (&shot->bytes, g_bytes_unref);
  g_free (shot);
}

const char *
sight_screenshot_get_mime_type (const SightScreenshot *shot)
{
  g_return_val_if_fail (shot != NULL, NULL);
  return sight_image_format_mime_type (shot->format);
}

void
sight_log_entry_free (SightLogEntry *entry)
{
  if (entry == NULL)
    return;
  g_free (entry->level);
  g_free (entry->text);
  g_free (entry->url);
  g_free (entry);
}

/* ----------------------------------------------------------------------- */
/* Pending operations: every wait has a deadline and fails cleanly when the */
/* web process goes away.                                                   */

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

static void
ping_unref (Ping *ping)
{
  if (--ping->ref_count == 0)
    g_free (ping);
}

static void
page_op_free (SightPageOp *op)
{
  if (op->ping != NULL)
    {
      op->ping->op = NULL;
      g_clear_pointer (&op->ping, ping_unref);
    }
  g_clear_handle_id (&op->ping_source, g_source_remove);
  g_clear_error (&op->timeout_error);
  if (op->caller_cancellable != NULL && op->cancel_id != 0)
    g_cancellable_disconnect (op->caller_cancellable, op->cancel_id);
  g_clear_object (&op->caller_cancellable);
  g_clear_handle_id (&op->timeout_source, g_source_remove);
  g_clear_handle_id (&op->poll_source, g_source_remove);
  g_clear_handle_id (&op->cancel_source, g_source_remove);
  g_clear_object (&op->cancellable);
  g_clear_object (&op->task);
  g_clear_error (&op->load_error);
  g_free (op->requested_uri);
  g_free (op);
}

/* Detaches @op from its page: it will not be completed through the page again. */
static void
page_op_detach (SightPageOp *op)
{
  SightWebPage *self = op->page;

  if (self == NULL)
    return;
  self->pending = g_list_remove (self->pending, op);
  if (self->load_op == op)
    self->load_op = NULL;
  op->page = NULL;
  g_clear_handle_id (&op->timeout_source, g_source_remove);
  g_clear_handle_id (&op->poll_source, g_source_remove);
  g_clear_handle_id (&op->ping_source, g_source_remove);
}

/* Completes @op with @error (taken) or, when NULL, with @value. The op is
 * freed once the engine call it wraps has come back (see page_op_release). */
static void
page_op_complete (SightPageOp *op,
                  GError      *error,
                  gpointer     value,
                  GDestroyNotify value_free)
{
  g_autoptr(GTask) task = NULL;

  if (op->done)
    {
      g_clear_error (&error);
      if (value != NULL && value_free != NULL)
        value_free (value);
      return;
    }
  op->done = TRUE;
  page_op_detach (op);
  g_cancellable_cancel (op->cancellable);
  task = g_object_ref (op->task);
  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, value, value_free);
  if (!op->freed_by_callback)
    page_op_free (op);
}

static gboolean
cancel_idle_cb (gpointer user_data)
{
  SightPageOp *op = user_data;

  op->cancel_source = 0;
  page_op_complete (op, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                             "The operation was cancelled"),
                    NULL, NULL);
  return G_SOURCE_REMOVE;
}

static void
caller_cancelled_cb (GCancellable *cancellable,
                     SightPageOp  *op)
{
  /* The op can't be freed inside the caller's cancel handler (disconnecting
   * there deadlocks), so it completes from an idle. */
  if (!op->done && op->cancel_source == 0)
    op->cancel_source = g_idle_add_full (G_PRIORITY_DEFAULT, cancel_idle_cb, op, NULL);
}

static SightPageOp *
page_op_new (SightWebPage *self,
             GTask        *task,
             guint         timeout_ms,
             GCancellable *caller_cancellable)
{
  SightPageOp *op = g_new0 (SightPageOp, 1);

  op->page = self;
  op->task = g_object_ref (task);
  op->timeout_ms = timeout_ms;
  op->cancellable = g_cancellable_new ();
  if (caller_cancellable != NULL)
    {
      op->caller_cancellable = g_object_ref (caller_cancellable);
      op->cancel_id = g_cancellable_connect (caller_cancellable,
                                             G_CALLBACK (caller_cancelled_cb), op, NULL);
    }
  self->pending = g_list_prepend (self->pending, op);
  return op;
}

static void
ping_answered_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  Ping *ping = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JSCValue) value =
    webkit_web_view_call_async_javascript_function_finish (WEBKIT_WEB_VIEW (source), result,
                                                           &error);

  /* An error other than a script's own means the process went away: the
   * termination fails the op, not this answer. */
  gboolean answered = value != NULL;

  if (!answered)
    g_debug ("ping failed: %s", error->message);
  if (answered && ping->op != NULL && !ping->op->done && ping->op->timeout_error != NULL)
    {
      SightPageOp *op = ping->op;
      SightWebPage *self = op->page;
      gboolean is_load = op->wait_until_set;

      /* Frees a load op, which clears ping->op. */
      page_op_complete (op, g_steal_pointer (&op->timeout_error), NULL, NULL);
      /* A load that ran out of time stops, so it can't change the page later. */
      if (self != NULL && is_load && self->load_op == NULL)
        webkit_web_view_stop_loading (self->view);
    }
  ping_unref (ping);
}

static gboolean
ping_timeout_cb (gpointer user_data)
{
  SightPageOp *op = user_data;
  SightWebPage *self = op->page;
  g_autofree char *reason = NULL;

  op->ping_source = 0;
  if (self == NULL || op->done)
    return G_SOURCE_REMOVE;
  if (op->timeout_ms > 0)
    reason = g_strdup_printf ("The page stopped responding (no answer for %u ms after a %u ms "
                              "deadline); its web process was terminated",
                              self->hang_timeout_ms, op->timeout_ms);
  else
    reason = g_strdup_printf ("The page stopped responding (no answer for %u ms); its web "
                              "process was terminated", self->hang_timeout_ms);
  g_debug ("%s", reason);
  /* Fail the op first: terminating finishes the engine call it wraps, whose
   * callback may free it before terminate returns. */
  page_op_complete (op, g_error_new_literal (SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                             reason),
                    NULL, NULL);
  sight_web_page_terminate_web_process (self, reason);
  return G_SOURCE_REMOVE;
}

/* @op ran past its deadline. A page whose main thread is stuck (a script in
 * an endless loop) also makes our scripts wait forever, and WebKit only
 * notices unresponsiveness when input is sent, so ask the web process
 * directly: an answer means a plain timeout (@error); none within the hang
 * timeout means a hang, and the web process is terminated. */
static void
page_op_timed_out (SightPageOp *op,
                   GError      *error)
{
  SightWebPage *self = op->page;
  Ping *ping;

  g_clear_error (&op->timeout_error);
  op->timeout_error = error;
  ping = g_new0 (Ping, 1);
  ping->ref_count = 2;
  ping->op = op;
  op->ping = ping;
  op->ping_source = g_timeout_add (self->hang_timeout_ms, ping_timeout_cb, op);
  webkit_web_view_call_async_javascript_function (self->view, "return 1;", -1, NULL, NULL, NULL,
                                                  NULL, ping_answered_cb, ping);
}

static void
fail_pending_ops (SightWebPage *self,
                  SightErrorCode code,
                  const char    *message)
{
  while (self->pending != NULL)
    {
      SightPageOp *op = self->pending->data;

      page_op_complete (op, g_error_new_literal (SIGHT_ERROR, code, message), NULL, NULL);
    }
}

/* ----------------------------------------------------------------------- */
/* The process-wide web context                                             */

guint
sight_web_page_get_memory_limit (void)
{
  const char *env = g_getenv ("SIGHTLINE_PAGE_MEMORY_LIMIT_MB");
  guint64 mb;

  if (env != NULL && g_ascii_string_to_unsigned (env, 10, SIGHT_PAGE_MEMORY_LIMIT_MIN,
                                                 SIGHT_PAGE_MEMORY_LIMIT_MAX, &mb, NULL))
    return (guint) mb;
  return SIGHT_PAGE_MEMORY_LIMIT_DEFAULT;
}

static WebKitWebContext *
get_web_context (void)
{
  static WebKitWebContext *context;

  /* GTK and WebKit live on the main thread only. */
  if (context == NULL)
    {
      g_autoptr(WebKitMemoryPressureSettings) memory = webkit_memory_pressure_settings_new ();

      /* WebKit's default never kills a web process, so a page that allocates
       * without bound takes the machine down with it. Past the limit it is
       * ended (EXCEEDED_MEMORY_LIMIT), checked every second. */
      webkit_memory_pressure_settings_set_memory_limit (memory, sight_web_page_get_memory_limit ());
      webkit_memory_pressure_settings_set_kill_threshold (memory, 1.0);
      webkit_memory_pressure_settings_set_poll_interval (memory, 1.0);
      context = g_object_new (WEBKIT_TYPE_WEB_CONTEXT,
                              "memory-pressure-settings", memory,
                              NULL);
      webkit_web_context_set_cache_model (context, WEBKIT_CACHE_MODEL_DOCUMENT_VIEWER);
    }
  return context;
}

/* WebKit runs each web process inside bubblewrap. Where bubblewrap cannot
 * set up its namespaces (a container without user namespaces, a seccomp
 * profile that forbids them), WebKit aborts the whole program with SIGTRAP
 * when it first launches one ("Failed to fully launch dbus-proxy"), before
 * any error can be reported. So the sandbox is tried once, the way WebKit
 * uses it, before the first load: the load waits for the probe's answer on
 * the main context, under the probe's own deadline. */
#define SANDBOX_PROBE_TIMEOUT_MS 10000

static struct {
  gboolean      probed;
  char         *failure;      /* NULL when the sandbox works, else why not */
  char         *bwrap;        /* the bubblewrap tried */
  GPtrArray    *waiters;      /* GTask, while the probe runs */
  GCancellable *cancellable;  /* cancelled at the probe's deadline */
  guint         timeout;
} sandbox;

/* The person turned the sandbox off (WebKit then runs no bubblewrap), or
 * Flatpak provides it (through flatpak-spawn, not bubblewrap). */
static gboolean
sandbox_needs_probe (void)
{
  return g_getenv ("WEBKIT_DISABLE_SANDBOX_THIS_IS_DANGEROUS") == NULL &&
         !g_file_test ("/.flatpak-info", G_FILE_TEST_EXISTS);
}

static void
probe_settle (const char *why)
{
  g_autoptr(GPtrArray) waiters = g_steal_pointer (&sandbox.waiters);

  g_clear_handle_id (&sandbox.timeout, g_source_remove);
  g_clear_object (&sandbox.cancellable);
  sandbox.probed = TRUE;
  if (why != NULL)
    {
      sandbox.failure =
        g_strdup_printf ("The browser engine's sandbox cannot start here: bubblewrap (%s) "
                         "failed: %s. Sightline opens pages only inside WebKit's sandbox. In a "
                         "container, allow it to create user namespaces (for example a "
                         "seccomp profile that permits them); only where you trust every page "
                         "you open, set WEBKIT_DISABLE_SANDBOX_THIS_IS_DANGEROUS=1 yourself",
                         sandbox.bwrap, why);
      g_debug ("%s", sandbox.failure);
    }
  for (guint i = 0; waiters != NULL && i < waiters->len; i++)
    {
      g_autoptr(GTask) task = g_ptr_array_index (waiters, i);

      g_task_return_boolean (task, TRUE);
    }
}

static gboolean
probe_timeout_cb (gpointer data)
{
  sandbox.timeout = 0;
  g_cancellable_cancel (sandbox.cancellable);
  return G_SOURCE_REMOVE;
}

static void
probe_done_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      data)
{
  GSubprocess *probe = G_SUBPROCESS (source);
  g_autoptr(GError) error = NULL;
  g_autofree char *why = NULL;
  GInputStream *err;
  char buffer[512] = "";
  gssize n;

  if (!g_subprocess_wait_finish (probe, result, &error))
    {
      g_subprocess_force_exit (probe);
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        why = g_strdup_printf ("it did not start within %d s", SANDBOX_PROBE_TIMEOUT_MS / 1000);
      else
        why = g_strdup (error->message);
    }
  else if (!g_subprocess_get_successful (probe))
    {
      /* It has exited: what it said is all in the pipe. */
      err = g_subprocess_get_stderr_pipe (probe);
      n = g_input_stream_read (err, buffer, sizeof buffer - 1, NULL, NULL);
      buffer[MAX (n, 0)] = '\0';
      g_strstrip (buffer);
      buffer[strcspn (buffer, "\n")] = '\0';
      why = buffer[0] != '\0' ? sight_text_sanitize (buffer, 300) : g_strdup ("it failed");
    }
  probe_settle (why);
}

static void
probe_start (void)
{
  g_autoptr(GSubprocess) probe = NULL;
  g_autoptr(GError) error = NULL;

  sandbox.bwrap = g_find_program_in_path ("bwrap");
  if (sandbox.bwrap == NULL)
    sandbox.bwrap = g_strdup ("/usr/bin/bwrap");
  probe = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_PIPE,
                            &error, sandbox.bwrap, "--ro-bind", "/", "/", "--unshare-user-try",
                            "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net",
                            "--die-with-parent", "--", "true", NULL);
  if (probe == NULL)
    {
      probe_settle (error->message);
      return;
    }
  sandbox.cancellable = g_cancellable_new ();
  sandbox.timeout = g_timeout_add (SANDBOX_PROBE_TIMEOUT_MS, probe_timeout_cb, NULL);
  g_subprocess_wait_async (probe, sandbox.cancellable, probe_done_cb, NULL);
}

/* Whether the probe has answered (or none is needed). */
gboolean
_sight_web_page_sandbox_probed (void)
{
  if (!sandbox.probed && sandbox.waiters == NULL && !sandbox_needs_probe ())
    sandbox.probed = TRUE;
  return sandbox.probed;
}

/* Runs the probe once per process; @callback is called on the main context
 * when it has answered (finish with g_task_propagate_boolean ()). */
void
_sight_web_page_probe_sandbox_async (GAsyncReadyCallback callback,
                                     gpointer            user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, NULL, callback, user_data);

  g_task_set_source_tag (task, _sight_web_page_probe_sandbox_async);
  if (_sight_web_page_sandbox_probed ())
    {
      g_task_return_boolean (task, TRUE);
      return;
    }
  if (sandbox.waiters == NULL)
    {
      sandbox.waiters = g_ptr_array_new ();
      g_ptr_array_add (sandbox.waiters, g_steal_pointer (&task));
      probe_start ();
      return;
    }
  g_ptr_array_add (sandbox.waiters, g_steal_pointer (&task));
}

/* FALSE, with ENVIRONMENT_UNAVAILABLE and a hint, where the web process
 * sandbox cannot start; only once the probe has answered. */
gboolean
_sight_web_page_sandbox_usable (GError **error)
{
  g_return_val_if_fail (sandbox.probed, FALSE);

  if (sandbox.failure == NULL)
    return TRUE;
  g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE, sandbox.failure);
  return FALSE;
}

static char *
load_js_resource (const char *name)
{
  g_autofree char *path = g_strconcat ("/dev/sightline/engine/js/", name, NULL);
  /* Looked up in the engine's own resource: a static library's automatic
   * registration is dropped by the linker when nothing references it. */
  g_autoptr(GBytes) bytes = g_resource_lookup_data (sight_engine_get_resource (), path,
                                                    G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);

  g_assert (bytes != NULL);
  return g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
}

/* ----------------------------------------------------------------------- */
/* The log                                                                  */

static void
add_log_entry (SightWebPage *self,
               SightLogKind  kind,
               const char   *level,
               const char   *text,
               const char   *url,
               guint         status)
{
  SightLogEntry *entry;

  if (self->log->len >= MAX_LOG_ENTRIES)
    g_ptr_array_remove_index (self->log, 0);
  entry = g_new0 (SightLogEntry, 1);
  entry->kind = kind;
  entry->level = g_strdup (level);
  entry->text = sight_text_sanitize (text != NULL ? text : "", MAX_LOG_TEXT);
  entry->url = sight_text_sanitize (url != NULL ? url : "", MAX_LOG_TEXT);
  entry->status = status;
  entry->timestamp = g_get_real_time ();
  g_ptr_array_add (self->log, entry);
}

GPtrArray *
sight_web_page_get_log (SightWebPage *self)
{
  g_return_val_if_fail (SIGHT_IS_WEB_PAGE (self), NULL);
  return self->log;
}

static void
handle_log_message (SightWebPage *self,
                    const char   *entry_json)
{
  g_autoptr(JsonNode) node = sight_json_parse (entry_json, -1, SIGHT_JSON_MAX_DEPTH, NULL);
  JsonObject *object;
  const char *kind;

  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return;
  object = json_node_get_object (node);
  kind = json_object_get_string_member_with_default (object, "kind", "");
  if (g_str_equal (kind, "console"))
    add_log_entry (self, SIGHT_LOG_CONSOLE,
                   json_object_get_string_member_with_default (object, "level", "log"),
                   json_object_get_string_member_with_default (object, "text", ""),
                   json_object_get_string_member_with_default (object, "url", ""), 0);
  else if (g_str_equal (kind, "error"))
    add_log_entry (self, SIGHT_LOG_PAGE_ERROR, "error",
                   json_object_get_string_member_with_default (object, "text", ""),
                   json_object_get_string_member_with_default (object, "url", ""), 0);
}

/* ----------------------------------------------------------------------- */
/* Loading                                                                  */

static void load_op_check (SightPageOp *op);

static gboolean
load_poll_cb (gpointer user_data)
{
  SightPageOp *op = user_data;

  load_op_check (op);
  return G_SOURCE_CONTINUE;
}

gboolean
sight_web_page_is_network_idle (SightWebPage *self,
                                guint         idle_ms)
{
  return g_hash_table_size (self->in_flight) == 0 &&
         g_get_monotonic_time () - self->last_network_activity >= (gint64) idle_ms * 1000;
}

static void
load_op_check (SightPageOp *op)
{
  SightWebPage *self = op->page;

  if (self == NULL || op->done)
    return;
  if (op->load_error != NULL)
    {
      page_op_complete (op, g_steal_pointer (&op->load_error), NULL, NULL);
      return;
    }
  switch (op->wait_until)
    {
    case SIGHT_WAIT_UNTIL_DOMCONTENTLOADED:
      if (op->dom_ready || op->loaded)
        page_op_complete (op, NULL, GINT_TO_POINTER (TRUE), NULL);
      break;
    case SIGHT_WAIT_UNTIL_LOAD:
      if (op->loaded)
        page_op_complete (op, NULL, GINT_TO_POINTER (TRUE), NULL);
      break;
    case SIGHT_WAIT_UNTIL_NETWORKIDLE:
    default:
      if (!op->loaded)
        break;
      if (sight_web_page_is_network_idle (self, NETWORK_IDLE_MS))
        page_op_complete (op, NULL, GINT_TO_POINTER (TRUE), NULL);
      else if (op->poll_source == 0)
        op->poll_source = g_timeout_add (IDLE_POLL_MS, load_poll_cb, op);
      break;
    }
}

static gboolean
load_timeout_cb (gpointer user_data)
{
  SightPageOp *op = user_data;
  SightWebPage *self = op->page;
  const char *stage;
  GError *error;

  op->timeout_source = 0;
  if (self == NULL || op->done)
    return G_SOURCE_REMOVE;
  if (!op->committed)
    stage = "no response";
  else if (!op->dom_ready && !op->loaded)
    stage = "the document did not finish parsing";
  else if (!op->loaded)
    stage = "the load event did not fire";
  else
    stage = "the network did not become idle";
  g_clear_handle_id (&op->poll_source, g_source_remove);
  error = g_error_new (SIGHT_ERROR, SIGHT_ERROR_STEP_TIMEOUT,
                       "Loading %s timed out after %u ms (%s)",
                       webkit_web_view_get_uri (self->view), op->timeout_ms, stage);
  if (!op->committed)
    {
      /* Nothing of the new page runs yet (the server is slow, or a new web
       * process is still starting), so there is no hang to look for. The
       * provisional load is left to the next navigation to replace: stopping
       * it while a new web process starts wedged the next load. */
      page_op_complete (op, error, NULL, NULL);
      return G_SOURCE_REMOVE;
    }
  page_op_timed_out (op, error);
  return G_SOURCE_REMOVE;
}

static gboolean
is_loadable_uri (const char *uri,
                 GError    **error)
{
  g_autoptr(GUri) parsed = NULL;
  const char *scheme;

  if (uri == NULL || *uri == '\0')
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "The URL is empty");
      return FALSE;
    }
  parsed = g_uri_parse (uri, G_URI_FLAGS_ENCODED, NULL);
  if (parsed == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "“%s” is not a valid URL",
                   uri);
      return FALSE;
    }
  scheme = g_uri_get_scheme (parsed);
  if (g_ascii_strcasecmp (scheme, "http") == 0 || g_ascii_strcasecmp (scheme, "https") == 0)
    {
      if (g_uri_get_host (parsed) == NULL || *g_uri_get_host (parsed) == '\0')
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "“%s” has no host", uri);
          return FALSE;
        }
      return TRUE;
    }
  if (g_ascii_strcasecmp (scheme, "about") == 0 || g_ascii_strcasecmp (scheme, "data") == 0)
    return TRUE;
  g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
               "Unsupported URL scheme “%s” (use http or https)", scheme);
  return FALSE;
}

/* Starts the load @task stands for, once the sandbox probe has answered. */
static void
load_start (SightWebPage   *self,
            GTask          *task,
            const char     *uri,
            SightWaitUntil  wait_until,
            guint           timeout_ms)
{
  g_autoptr(GError) error = NULL;
  SightPageOp *op;

  if (!_sight_web_page_sandbox_usable (&error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  if (self->load_op != NULL)
    page_op_complete (self->load_op,
                      g_error_new_literal (SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED,
                                           "The load was replaced by another navigation"),
                      NULL, NULL);

  op = page_op_new (self, task, timeout_ms, g_task_get_cancellable (task));
  op->wait_until = wait_until;
  op->wait_until_set = TRUE;
  op->expects_document = g_ascii_strncasecmp (uri, "about:", 6) != 0;
  op->requested_uri = g_strdup (uri);
  self->load_op = op;
  if (timeout_ms > 0)
    op->timeout_source = g_timeout_add (timeout_ms, load_timeout_cb, op);
  g_clear_pointer (&self->deferred_uri, g_free);
  if (self->filter_error != NULL)
    {
      op->load_error = g_error_copy (self->filter_error);
      load_op_check (op);
      return;
    }
  /* A guarded page loads nothing before its subresource filter is in. */
  if (self->filter_timeout != 0)
    {
      self->deferred_uri = g_strdup (uri);
      return;
    }
  webkit_web_view_load_uri (self->view, uri);
}

typedef struct {
  GTask          *task;
  char           *uri;
  SightWaitUntil  wait_until;
  guint           timeout_ms;
} ProbeWait;

static void
load_probed_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  ProbeWait *wait = user_data;
  SightWebPage *self = g_task_get_source_object (wait->task);

  g_task_propagate_boolean (G_TASK (result), NULL);
  if (self->view == NULL)
    g_task_return_new_error (wait->task, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                             "The page was closed");
  else
    load_start (self, wait->task, wait->uri, wait->wait_until, wait->timeout_ms);
  g_object_unref (wait->task);
  g_free (wait->uri);
  g_free (wait);
}

void
sight_web_page_load_async (SightWebPage        *self,
                           const char          *uri,
                           SightWaitUntil       wait_until,
                           guint                timeout_ms,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(GError) error = NULL;
  ProbeWait *wait;

  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_web_page_load_async);

  if (!is_loadable_uri (uri, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  if (_sight_web_page_sandbox_probed ())
    {
      load_start (self, task, uri, wait_until, timeout_ms);
      return;
    }
  /* The first load of the process waits for the sandbox probe. */
  wait = g_new0 (ProbeWait, 1);
  wait->task = g_steal_pointer (&task);
  wait->uri = g_strdup (uri);
  wait->wait_until = wait_until;
  wait->timeout_ms = timeout_ms;
  _sight_web_page_probe_sandbox_async (load_probed_cb, wait);
}

gboolean
sight_web_page_load_finish (SightWebPage  *self,
                            GAsyncResult  *result,
                            GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_pointer (G_TASK (result), error) != NULL;
}

/* Waits for a navigation that something else (history, a click) starts. */
void
_sight_web_page_wait_for_navigation_async (SightWebPage        *self,
                                           SightWaitUntil       wait_until,
                                           guint                timeout_ms,
                                           GCancellable        *cancellable,
                                           GAsyncReadyCallback  callback,
                                           gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  SightPageOp *op;

  g_task_set_source_tag (task, sight_web_page_load_async);
  if (self->load_op != NULL)
    page_op_complete (self->load_op,
                      g_error_new_literal (SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED,
                                           "The load was replaced by another navigation"),
                      NULL, NULL);
  op = page_op_new (self, task, timeout_ms, cancellable);
  op->wait_until = wait_until;
  op->wait_until_set = TRUE;
  self->load_op = op;
  if (timeout_ms > 0)
    op->timeout_source = g_timeout_add (timeout_ms, load_timeout_cb, op);
}

/* Scheme, host and port alike; a URL without a host matches nothing. */
static gboolean
same_origin (const char *a,
             const char *b)
{
  g_autoptr(GUri) ua = a != NULL ? g_uri_parse (a, G_URI_FLAGS_ENCODED, NULL) : NULL;
  g_autoptr(GUri) ub = b != NULL ? g_uri_parse (b, G_URI_FLAGS_ENCODED, NULL) : NULL;

  if (ua == NULL || ub == NULL || g_uri_get_host (ua) == NULL || g_uri_get_host (ub) == NULL)
    return FALSE;
  return g_ascii_strcasecmp (g_uri_get_scheme (ua), g_uri_get_scheme (ub)) == 0 &&
         g_ascii_strcasecmp (g_uri_get_host (ua), g_uri_get_host (ub)) == 0 &&
         g_uri_get_port (ua) == g_uri_get_port (ub);
}

/* ----------------------------------------------------------------------- */
/* Allowed origins                                                          */

const char *
sight_log_kind_to_string (SightLogKind kind)
{
  switch (kind)
    {
    case SIGHT_LOG_CONSOLE: return "console";
    case SIGHT_LOG_PAGE_ERROR: return "page_error";
    case SIGHT_LOG_REQUEST_FAILED: return "request_failed";
    case SIGHT_LOG_BLOCKED: return "blocked";
    default: return "console";
    }
}

typedef struct {
  SightWebPage                 *page;        /* owned until the compile ends */
  guint                         generation;
  char                         *dir;         /* the store's folder, removed after */
  WebKitUserContentFilterStore *store;
} FilterCompile;

static void
remove_store_dir (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *file = g_build_filename (path, name, NULL);

      if (g_unlink (file) != 0)
        g_warning ("Could not remove %s: %s", file, g_strerror (errno));
    }
  if (g_rmdir (path) != 0)
    g_warning ("Could not remove %s: %s", path, g_strerror (errno));
}

/* The filter is in (@filter; NULL when the list was dropped meanwhile) or
 * cannot be (@error): the load waiting for it starts, or fails with @error,
 * as does every later one. */
static void
filter_settle (SightWebPage            *self,
               WebKitUserContentFilter *filter,
               GError                  *error)
{
  g_autofree char *uri = g_steal_pointer (&self->deferred_uri);

  g_clear_handle_id (&self->filter_timeout, g_source_remove);
  if (error != NULL)
    {
      add_log_entry (self, SIGHT_LOG_PAGE_ERROR, NULL, error->message, NULL, 0);
      self->filter_error = error;
      if (uri != NULL && self->load_op != NULL)
        {
          self->load_op->load_error = g_error_copy (error);
          load_op_check (self->load_op);
        }
      return;
    }
  if (filter != NULL)
    {
      self->content_filter = webkit_user_content_filter_ref (filter);
      webkit_user_content_manager_add_filter (self->content, filter);
    }
  if (uri != NULL && self->load_op != NULL)
    webkit_web_view_load_uri (self->view, uri);
}

static gboolean
filter_timeout_cb (gpointer user_data)
{
  SightWebPage *self = user_data;

  self->filter_timeout = 0;
  self->filter_generation++;   /* a late result is dropped */
  filter_settle (self, NULL,
                 g_error_new (SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                              "The allowed-origins subresource filter was not compiled "
                              "within %d s; the page is not loaded unguarded",
                              FILTER_COMPILE_TIMEOUT_MS / 1000));
  return G_SOURCE_REMOVE;
}

static void
filter_saved_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  FilterCompile *compile = user_data;
  SightWebPage *self = compile->page;
  g_autoptr(GError) error = NULL;
  WebKitUserContentFilter *filter;

  filter = webkit_user_content_filter_store_save_finish (compile->store, result, &error);
  /* WebKit keeps the compiled rules mapped; the file is not read again. */
  remove_store_dir (compile->dir);
  if (compile->generation == self->filter_generation)
    {
      if (filter != NULL)
        filter_settle (self, filter, NULL);
      else
        filter_settle (self, NULL,
                       g_error_new (SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                    "The allowed-origins subresource filter could not be "
                                    "compiled (%s); the page is not loaded unguarded",
                                    error->message));
    }
  g_clear_pointer (&filter, webkit_user_content_filter_unref);
  g_object_unref (compile->store);
  g_free (compile->dir);
  g_object_unref (compile->page);
  g_free (compile);
}

/* Compiles the policy's content rules in a store of our own, in a temporary
 * folder; loads wait for it (see sight_web_page_load_async). */
static void
filter_compile (SightWebPage *self)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *rules = sight_origin_policy_to_content_rules (self->origin_policy);
  g_autoptr(GBytes) source = NULL;
  FilterCompile *compile;
  gsize len;
  char *dir = g_dir_make_tmp ("sightline-filter-XXXXXX", &error);

  if (dir == NULL)
    {
      filter_settle (self, NULL,
                     g_error_new (SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                  "No folder for the allowed-origins subresource filter: %s",
                                  error->message));
      return;
    }
  compile = g_new0 (FilterCompile, 1);
  compile->page = g_object_ref (self);
  compile->generation = self->filter_generation;
  compile->dir = dir;
  compile->store = webkit_user_content_filter_store_new (dir);
  len = strlen (rules);
  source = g_bytes_new_take (g_steal_pointer (&rules), len);
  self->filter_timeout = g_timeout_add (FILTER_COMPILE_TIMEOUT_MS, filter_timeout_cb, self);
  webkit_user_content_filter_store_save (compile->store, "allowed-origins", source, NULL,
                                         filter_saved_cb, compile);
}

gboolean
sight_web_page_set_allowed_origins (SightWebPage       *self,
                                    const char * const *origins,
                                    GError            **error)
{
  SightOriginPolicy *policy = NULL;

  g_return_val_if_fail (SIGHT_IS_WEB_PAGE (self), FALSE);

  if (origins != NULL && origins[0] != NULL)
    {
      policy = sight_origin_policy_new (origins, error);
      if (policy == NULL)
        return FALSE;
    }
  g_clear_pointer (&self->origin_policy, sight_origin_policy_unref);
  self->origin_policy = policy;
  self->filter_generation++;
  g_clear_handle_id (&self->filter_timeout, g_source_remove);
  g_clear_error (&self->filter_error);
  if (self->content_filter != NULL)
    webkit_user_content_manager_remove_filter (self->content, self->content_filter);
  g_clear_pointer (&self->content_filter, webkit_user_content_filter_unref);
  if (policy != NULL)
    filter_compile (self);
  else if (self->deferred_uri != NULL)
    filter_settle (self, NULL, NULL);
  return TRUE;
}

/* Navigations (main frame and frames, redirects included) and new windows
 * outside the allowed origins are ignored before any request leaves. */
static gboolean
decide_policy_cb (WebKitWebView            *view,
                  WebKitPolicyDecision     *decision,
                  WebKitPolicyDecisionType  type,
                  SightWebPage             *self)
{
  WebKitNavigationAction *action;
  const char *uri;
  g_autofree char *text = NULL;
  SightPageOp *op;

  if (self->origin_policy == NULL || type == WEBKIT_POLICY_DECISION_TYPE_RESPONSE)
    return FALSE;
  action = webkit_navigation_policy_decision_get_navigation_action (
    WEBKIT_NAVIGATION_POLICY_DECISION (decision));
  uri = webkit_uri_request_get_uri (webkit_navigation_action_get_request (action));
  if (sight_origin_policy_allows (self->origin_policy, uri))
    return FALSE;
  text = g_strdup_printf ("Blocked %s outside the allowed origins",
                          type == WEBKIT_POLICY_DECISION_TYPE_NEW_WINDOW_ACTION
                            ? "a new window"
                            : webkit_navigation_action_is_redirect (action)
                                ? "a redirect"
                                : "a navigation");
  g_debug ("%s: %s", text, uri);
  add_log_entry (self, SIGHT_LOG_BLOCKED, NULL, text, uri, 0);
  /* A load being waited for that is refused, at its start or by a redirect,
   * fails now instead of at its deadline. */
  op = self->load_op;
  if (op != NULL && !op->done && !op->committed && op->load_error == NULL &&
      type == WEBKIT_POLICY_DECISION_TYPE_NAVIGATION_ACTION &&
      (g_strcmp0 (op->requested_uri, uri) == 0 || webkit_navigation_action_is_redirect (action)))
    {
      op->load_error = g_error_new (SIGHT_ERROR, SIGHT_ERROR_POLICY_DENIED,
                                    "%s: %s", text, uri);
      webkit_policy_decision_ignore (decision);
      load_op_check (op);
      return TRUE;
    }
  webkit_policy_decision_ignore (decision);
  return TRUE;
}

static void
load_changed_cb (WebKitWebView   *view,
                 WebKitLoadEvent  event,
                 SightWebPage    *self)
{
  SightPageOp *op = self->load_op;

  if (event == WEBKIT_LOAD_STARTED)
    {
      self->navigation_count++;
      g_clear_pointer (&self->lost_reason, g_free);
    }
  if (op == NULL)
    return;
  /* The load this op waits for begins with STARTED; a FINISHED before it
   * ends the load that ours replaced. */
  if (event == WEBKIT_LOAD_STARTED)
    op->started = TRUE;
  if (!op->started)
    return;
  switch (event)
    {
    case WEBKIT_LOAD_COMMITTED:
      op->committed = TRUE;
      op->dom_ready = FALSE;
      /* WebKit answers a URL it refuses to fetch, such as one on a port
       * browsers block (9, 25, 6000, …), by committing an empty document
       * under another URL (about:blank, or the page before) and no
       * load-failed: without this the load would pass on a blank page. */
      if (op->expects_document && !op->redirected && op->load_error == NULL &&
          !same_origin (webkit_web_view_get_uri (view), op->requested_uri))
        op->load_error = g_error_new (SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                      "Could not load %s: the browser engine refused it "
                                      "(browsers block some ports, such as 9, 25 or 6000)",
                                      op->requested_uri);
      break;
    case WEBKIT_LOAD_FINISHED:
      op->committed = TRUE;
      op->loaded = TRUE;
      break;
    case WEBKIT_LOAD_REDIRECTED:
      op->redirected = TRUE;
      break;
    case WEBKIT_LOAD_STARTED:
    default:
      break;
    }
  load_op_check (op);
}

static gboolean
load_failed_cb (WebKitWebView   *view,
                WebKitLoadEvent  event,
                const char      *failing_uri,
                GError          *error,
                SightWebPage    *self)
{
  SightPageOp *op = self->load_op;
  g_autofree char *message = NULL;

  g_debug ("load-failed %d %s %s", event, failing_uri, error->message);
  add_log_entry (self, SIGHT_LOG_REQUEST_FAILED, NULL, error->message, failing_uri, 0);
  if (op == NULL || !op->started || op->load_error != NULL)
    return FALSE;
  /* Cancelled loads are replaced by another navigation, which the op waits for. */
  if (g_error_matches (error, WEBKIT_NETWORK_ERROR, WEBKIT_NETWORK_ERROR_CANCELLED))
    return FALSE;
  if (g_error_matches (error, WEBKIT_POLICY_ERROR,
                       WEBKIT_POLICY_ERROR_FRAME_LOAD_INTERRUPTED_BY_POLICY_CHANGE))
    return FALSE;
  message = sight_text_sanitize (error->message, 300);
  op->load_error = g_error_new (SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                "Could not load %s: %s", failing_uri, message);
  load_op_check (op);
  return FALSE;
}

static void
script_message_cb (WebKitUserContentManager *manager,
                   JSCValue                 *value,
                   SightWebPage             *self)
{
  g_autofree char *text = NULL;
  g_autoptr(JsonNode) node = NULL;
  JsonObject *object;
  const char *type;

  if (!jsc_value_is_string (value))
    return;
  text = jsc_value_to_string (value);
  node = sight_json_parse (text, -1, SIGHT_JSON_MAX_DEPTH, NULL);
  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return;
  object = json_node_get_object (node);
  type = json_object_get_string_member_with_default (object, "type", "");
  if (g_str_equal (type, "log"))
    handle_log_message (self, json_object_get_string_member_with_default (object, "entry", ""));
  else if (g_str_equal (type, "domcontentloaded") && self->load_op != NULL &&
           self->load_op->committed)
    {
      self->load_op->dom_ready = TRUE;
      load_op_check (self->load_op);
    }
}

/* ----------------------------------------------------------------------- */
/* Requests                                                                 */

static void
resource_done (SightWebPage      *self,
               WebKitWebResource *resource)
{
  if (g_hash_table_remove (self->in_flight, resource))
    self->last_network_activity = g_get_monotonic_time ();
}

static void
resource_finished_cb (WebKitWebResource *resource,
                      SightWebPage      *self)
{
  WebKitURIResponse *response = webkit_web_resource_get_response (resource);

  if (g_hash_table_contains (self->in_flight, resource) && response != NULL)
    {
      guint status = webkit_uri_response_get_status_code (response);

      if (status >= 400)
        add_log_entry (self, SIGHT_LOG_REQUEST_FAILED, NULL,
                       soup_status_get_phrase (status),
                       webkit_web_resource_get_uri (resource), status);
    }
  resource_done (self, resource);
}

static void
resource_failed_cb (WebKitWebResource *resource,
                    GError            *error,
                    SightWebPage      *self)
{
  if (g_hash_table_contains (self->in_flight, resource) &&
      !g_error_matches (error, WEBKIT_NETWORK_ERROR, WEBKIT_NETWORK_ERROR_CANCELLED))
    add_log_entry (self, SIGHT_LOG_REQUEST_FAILED, NULL, error->message,
                   webkit_web_resource_get_uri (resource), 0);
  resource_done (self, resource);
}

static void
resource_load_started_cb (WebKitWebView     *view,
                          WebKitWebResource *resource,
                          WebKitURIRequest  *request,
                          SightWebPage      *self)
{
  g_hash_table_add (self->in_flight, g_object_ref (resource));
  self->last_network_activity = g_get_monotonic_time ();
  g_signal_connect_object (resource, "finished", G_CALLBACK (resource_finished_cb), self, 0);
  g_signal_connect_object (resource, "failed", G_CALLBACK (resource_failed_cb), self, 0);
}

guint
sight_web_page_get_requests_in_flight (SightWebPage *self)
{
  g_return_val_if_fail (SIGHT_IS_WEB_PAGE (self), 0);
  return g_hash_table_size (self->in_flight);
}

/* ----------------------------------------------------------------------- */
/* Crashes and hangs                                                        */

static void
web_process_lost (SightWebPage *self,
                  const char   *reason)
{
  g_clear_handle_id (&self->hang_source, g_source_remove);
  self->generation++;
  g_free (self->lost_reason);
  self->lost_reason = g_strdup (reason);
  g_free (self->last_loss);
  self->last_loss = g_strdup (reason);
  g_hash_table_remove_all (self->in_flight);
  fail_pending_ops (self, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE, reason);
  g_signal_emit (self, signals[WEB_PROCESS_LOST], 0, reason);
}

static void
web_process_terminated_cb (WebKitWebView                     *view,
                           WebKitWebProcessTerminationReason  reason,
                           SightWebPage                      *self)
{
  g_autofree char *requested = g_steal_pointer (&self->terminate_reason);
  const char *message;

  switch (reason)
    {
    case WEBKIT_WEB_PROCESS_CRASHED:
      message = "The page’s web process crashed";
      break;
    case WEBKIT_WEB_PROCESS_EXCEEDED_MEMORY_LIMIT:
      g_free (requested);
      requested = g_strdup_printf ("EXCEEDED_MEMORY_LIMIT: the page’s web process went over "
                                   "its memory limit (%u MB) and was stopped",
                                   sight_web_page_get_memory_limit ());
      message = requested;
      add_log_entry (self, SIGHT_LOG_PAGE_ERROR, "error", message,
                     webkit_web_view_get_uri (view), 0);
      break;
    case WEBKIT_WEB_PROCESS_TERMINATED_BY_API:
    default:
      message = requested != NULL ? requested : "The page’s web process was terminated";
      break;
    }
  g_debug ("web process terminated: %s", message);
  web_process_lost (self, message);
}

void
sight_web_page_terminate_web_process (SightWebPage *self,
                                      const char   *reason)
{
  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));

  g_free (self->terminate_reason);
  self->terminate_reason = g_strdup (reason);
  webkit_web_view_terminate_web_process (self->view);
}

static gboolean
hang_timeout_cb (gpointer user_data)
{
  SightWebPage *self = user_data;
  g_autofree char *reason = NULL;

  self->hang_source = 0;
  if (webkit_web_view_get_is_web_process_responsive (self->view))
    return G_SOURCE_REMOVE;
  reason = g_strdup_printf ("The page stopped responding for %u ms; its web process was "
                            "terminated", self->hang_timeout_ms);
  g_debug ("%s", reason);
  sight_web_page_terminate_web_process (self, reason);
  return G_SOURCE_REMOVE;
}

static void
responsive_changed_cb (WebKitWebView *view,
                       GParamSpec    *pspec,
                       SightWebPage  *self)
{
  if (webkit_web_view_get_is_web_process_responsive (view))
    g_clear_handle_id (&self->hang_source, g_source_remove);
  else if (self->hang_source == 0)
    self->hang_source = g_timeout_add (self->hang_timeout_ms, hang_timeout_cb, self);
}

void
sight_web_page_set_hang_timeout (SightWebPage *self,
                                 guint         timeout_ms)
{
  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));
  self->hang_timeout_ms = MAX (timeout_ms, 100);
}

guint
sight_web_page_get_process_mark (SightWebPage *self)
{
  g_return_val_if_fail (SIGHT_IS_WEB_PAGE (self), 0);
  return self->generation;
}

/* FALSE, with why, when the web process went away since @mark or the page
 * is still blank after it did. */
static gboolean
process_kept (SightWebPage *self,
              guint         mark,
              GError      **error)
{
  if (self->lost_reason != NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "%s; the page is blank until it loads again", self->lost_reason);
      return FALSE;
    }
  if (self->generation != mark)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "%s during the step; the page was loaded again since", self->last_loss);
      return FALSE;
    }
  return TRUE;
}

static void
check_answered_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  Ping *ping = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JSCValue) value =
    webkit_web_view_call_async_javascript_function_finish (WEBKIT_WEB_VIEW (source), result,
                                                           &error);

  /* Any answer, an error too (a document being replaced in a process swap),
   * means the process is there; a crash fails the op through its
   * termination, and silence through the hang timeout. */
  if (value == NULL)
    g_debug ("check: %s", error->message);
  if (ping->op != NULL && !ping->op->done)
    page_op_complete (ping->op, NULL, GINT_TO_POINTER (TRUE), NULL);
  ping_unref (ping);
}

void
sight_web_page_check_process_async (SightWebPage        *self,
                                    guint                mark,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(GError) error = NULL;
  SightPageOp *op;
  Ping *ping;

  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_web_page_check_process_async);
  if (!process_kept (self, mark, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  /* A page that never loaded has no web process to ask. */
  if (self->navigation_count == 0)
    {
      g_task_return_pointer (task, GINT_TO_POINTER (TRUE), NULL);
      return;
    }
  /* WebKit only notices a stuck web process when input is sent to it, so ask
   * it to answer, within the hang timeout; ping_timeout_cb ends a silent one. */
  op = page_op_new (self, task, 0, cancellable);
  ping = g_new0 (Ping, 1);
  ping->ref_count = 2;
  ping->op = op;
  op->ping = ping;
  op->ping_source = g_timeout_add (self->hang_timeout_ms, ping_timeout_cb, op);
  webkit_web_view_call_async_javascript_function (self->view, "return 1;", -1, NULL, NULL, NULL,
                                                  NULL, check_answered_cb, ping);
}

gboolean
sight_web_page_check_process_finish (SightWebPage  *self,
                                     GAsyncResult  *result,
                                     GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_pointer (G_TASK (result), error) != NULL;
}

/* ----------------------------------------------------------------------- */
/* Evaluation                                                               */

static void
evaluate_done_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  SightPageOp *op = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JSCValue) value = NULL;

  value = webkit_web_view_evaluate_javascript_finish (WEBKIT_WEB_VIEW (source), result, &error);
  if (!op->done)
    {
      if (value == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        page_op_complete (op, g_steal_pointer (&error), NULL, NULL);
      else if (value == NULL && op->page != NULL && op->page->terminate_reason != NULL)
        page_op_complete (op, g_error_new_literal (SIGHT_ERROR,
                                                   SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                                   op->page->terminate_reason),
                          NULL, NULL);
      else if (value == NULL)
        {
          g_autofree char *message = sight_text_sanitize (error->message, 500);
          gboolean script_error = g_error_matches (error, WEBKIT_JAVASCRIPT_ERROR,
                                                   WEBKIT_JAVASCRIPT_ERROR_SCRIPT_FAILED);

          /* Anything but the script's own exception means the process went away. */
          page_op_complete (op, g_error_new (SIGHT_ERROR,
                                             script_error ? SIGHT_ERROR_ACTION_FAILED
                                                          : SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                             script_error ? "Script failed: %s"
                                                          : "The page could not run a script: %s",
                                             message),
                            NULL, NULL);
        }
      else
        {
          g_autofree char *json = jsc_value_to_string (value);
          JsonNode *node = sight_json_parse (json, -1, SIGHT_JSON_MAX_DEPTH_TREE, NULL);

          if (node == NULL)
            node = json_node_new (JSON_NODE_NULL);
          page_op_complete (op, NULL, node, (GDestroyNotify) json_node_unref);
        }
    }
  page_op_free (op);
}

static gboolean
evaluate_timeout_cb (gpointer user_data)
{
  SightPageOp *op = user_data;

  op->timeout_source = 0;
  if (op->page == NULL || op->done)
    return G_SOURCE_REMOVE;
  page_op_timed_out (op, g_error_new (SIGHT_ERROR, SIGHT_ERROR_STEP_TIMEOUT,
                                      "A page script did not finish within %u ms",
                                      op->timeout_ms));
  return G_SOURCE_REMOVE;
}

void
sight_web_page_evaluate_async (SightWebPage        *self,
                               const char          *function_body,
                               JsonNode            *args,
                               guint                timeout_ms,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(GVariantDict) dict = NULL;
  g_autofree char *args_json = NULL;
  g_autofree char *wrapped = NULL;
  SightPageOp *op;

  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));
  g_return_if_fail (function_body != NULL);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_web_page_evaluate_async);
  /* WebKit starts a new web process only for a load; a script sent before
   * would fail with a confusing "Unsupported result type". */
  if (self->lost_reason != NULL)
    {
      g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                               "%s; the page is blank until it loads again", self->lost_reason);
      return;
    }

  args_json = args != NULL ? json_to_string (args, FALSE) : g_strdup ("null");
  dict = g_variant_dict_new (NULL);
  g_variant_dict_insert (dict, "__sightArgs", "s", args_json);
  /* The body runs as an async function of `args`; its value comes back as
   * JSON text so any JSON-able value crosses intact. */
  wrapped = g_strconcat ("const __sightFn = async function (args) {\n", function_body,
                         "\n};\n"
                         "const __sightValue = await __sightFn (JSON.parse (__sightArgs));\n"
                         "const __sightJson = JSON.stringify (__sightValue);\n"
                         "if (__sightJson === undefined) return 'null';\n"
                         /* Page text is never a C string: a U+0000 would end it
                          * where json-glib hands it on, a lone surrogate would be
                          * invalid UTF-8. Both become U+FFFD, as the HTML
                          * tokenizer and CSS do with U+0000; an escape preceded
                          * by an odd run of backslashes is one of them. */
                         "if (!/\\\\u(?:0000|d[89a-f])/.test (__sightJson)) return __sightJson;\n"
                         "return __sightJson.replace (/(\\\\+)u(?:0000|d[89a-f][0-9a-f]{2})/g,\n"
                         "  (m, b) => b.length % 2 ? b + 'ufffd' : m);",
                         NULL);

  op = page_op_new (self, task, timeout_ms, cancellable);
  op->freed_by_callback = TRUE;
  if (timeout_ms > 0)
    op->timeout_source = g_timeout_add (timeout_ms, evaluate_timeout_cb, op);
  webkit_web_view_call_async_javascript_function (self->view, wrapped, -1,
                                                  g_variant_dict_end (dict),
                                                  SIGHT_SCRIPT_WORLD, NULL, op->cancellable,
                                                  evaluate_done_cb, op);
}

JsonNode *
sight_web_page_evaluate_finish (SightWebPage  *self,
                                GAsyncResult  *result,
                                GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ----------------------------------------------------------------------- */
/* Viewport                                                                 */

static void
apply_viewport (SightWebPage *self)
{
  int width = (int) ceil (self->width * self->device_scale);
  int height = (int) ceil (self->height * self->device_scale);

  /* WebKitGTK takes its device scale from the monitor; a page zoom of the
   * scale over a widget of scaled size gives the same CSS viewport and the
   * same pixel density. */
  webkit_web_view_set_zoom_level (self->view, self->device_scale);
  if (!self->headless)
    return;
  gtk_widget_set_size_request (GTK_WIDGET (self->view), width, height);
  gtk_widget_size_allocate (GTK_WIDGET (self->view),
                            &(GtkAllocation) { 0, 0, width, height }, -1);
  if (!gtk_widget_get_mapped (GTK_WIDGET (self->view)))
    gtk_widget_map (GTK_WIDGET (self->view));
}

void
sight_web_page_set_viewport (SightWebPage *self,
                             int           width,
                             int           height,
                             double        device_scale)
{
  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));

  self->width = CLAMP (width, 16, 8192);
  self->height = CLAMP (height, 16, 8192);
  self->device_scale = device_scale > 0 ? CLAMP (device_scale, 0.25, 4.0) : 1.0;
  apply_viewport (self);
}

void
sight_web_page_get_viewport (SightWebPage *self,
                             int          *width,
                             int          *height)
{
  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));

  if (!self->headless)
    {
      double scale = self->device_scale > 0 ? self->device_scale : 1.0;

      if (width != NULL)
        *width = (int) (gtk_widget_get_width (GTK_WIDGET (self->view)) / scale);
      if (height != NULL)
        *height = (int) (gtk_widget_get_height (GTK_WIDGET (self->view)) / scale);
      return;
    }
  if (width != NULL)
    *width = self->width;
  if (height != NULL)
    *height = self->height;
}

double
sight_web_page_get_device_scale (SightWebPage *self)
{
  g_return_val_if_fail (SIGHT_IS_WEB_PAGE (self), 1.0);
  return self->device_scale;
}

void
sight_web_page_set_headless (SightWebPage *self,
                             gboolean      headless)
{
  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));

  headless = !!headless;
  if (self->headless == headless)
    return;
  self->headless = headless;
  /* Switching the compositing mode of a page that has loaded makes its web
   * process crash (WebKitGTK 2.50 under Xvfb, seen when the window shows an
   * MCP client's session and lets it go again): a page shown after its
   * first load keeps drawing without compositing, which a window shows as
   * well. Where OpenGL is drawn in software, a shown page is not
   * composited either: the web process then skips its own GL set-up and
   * each frame reaches GTK as plain memory (with GTK's cairo renderer, a
   * bare view's launch gains 0.3 s: sight-bench-launch). */
  if (webkit_web_view_get_uri (self->view) == NULL)
    webkit_settings_set_hardware_acceleration_policy (webkit_web_view_get_settings (self->view),
                                                      headless || sight_graphics_is_software ()
                                                        ? WEBKIT_HARDWARE_ACCELERATION_POLICY_NEVER
                                                        : WEBKIT_HARDWARE_ACCELERATION_POLICY_ALWAYS);
  if (headless)
    {
      gtk_window_set_child (GTK_WINDOW (self->toplevel), GTK_WIDGET (self->view));
      apply_viewport (self);
    }
  else
    {
      gtk_widget_set_size_request (GTK_WIDGET (self->view), -1, -1);
      gtk_window_set_child (GTK_WINDOW (self->toplevel), NULL);
    }
}

/* ----------------------------------------------------------------------- */
/* Screenshots                                                              */

typedef struct {
  SightScreenshotOptions options;
  SightRect             *masks;
  int                    css_width;      /* of the captured region */
  /* The captured pixels, downloaded on the main thread; masked, resampled
   * and encoded in a worker thread (encoding a PNG takes long enough to
   * stall the window). */
  cairo_surface_t       *source;
  double                 scale;          /* image pixels per CSS pixel */
  /* of @masks, the regions holding a filled secret (sight-secret-fields.h) */
  guint                  n_secret;
} ShotData;

static void
shot_data_free (ShotData *data)
{
  g_free (data->masks);
  g_clear_pointer (&data->source, cairo_surface_destroy);
  g_free (data);
}

static GBytes *
encode_webp (GdkPixbuf *pixbuf,
             int        quality,
             GError   **error)
{
  uint8_t *output = NULL;
  size_t size;
  int width = gdk_pixbuf_get_width (pixbuf);
  int height = gdk_pixbuf_get_height (pixbuf);
  int stride = gdk_pixbuf_get_rowstride (pixbuf);
  const guint8 *pixels = gdk_pixbuf_read_pixels (pixbuf);

  if (gdk_pixbuf_get_has_alpha (pixbuf))
    size = WebPEncodeRGBA (pixels, width, height, stride, quality, &output);
  else
    size = WebPEncodeRGB (pixels, width, height, stride, quality, &output);
  if (size == 0 || output == NULL)
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INTERNAL, "WebP encoding failed");
      return NULL;
    }
  {
    GBytes *bytes = g_bytes_new (output, size);

    WebPFree (output);
    return bytes;
  }
}

GBytes *
sight_encode_image (GdkPixbuf         *pixbuf,
                    SightImageFormat   format,
                    int                quality,
                    GError           **error)
{
  g_autofree char *buffer = NULL;
  gsize size = 0;
  g_autofree char *quality_text = NULL;

  if (quality < 0)
    quality = format == SIGHT_IMAGE_WEBP ? 80 : 85;
  quality = CLAMP (quality, 0, 100);

  switch (format)
    {
    case SIGHT_IMAGE_WEBP:
      return encode_webp (pixbuf, quality, error);
    case SIGHT_IMAGE_JPEG:
      quality_text = g_strdup_printf ("%d", quality);
      if (!gdk_pixbuf_save_to_buffer (pixbuf, &buffer, &size, "jpeg", error,
                                      "quality", quality_text, NULL))
        return NULL;
      break;
    case SIGHT_IMAGE_PNG:
    default:
      if (!gdk_pixbuf_save_to_buffer (pixbuf, &buffer, &size, "png", error, NULL))
        return NULL;
      break;
    }
  return g_bytes_new_take (g_steal_pointer (&buffer), size);
}

static cairo_surface_t *
download_texture (GdkTexture *texture)
{
  cairo_surface_t *surface;

  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, gdk_texture_get_width (texture),
                                        gdk_texture_get_height (texture));
  cairo_surface_flush (surface);
  gdk_texture_download (texture, cairo_image_surface_get_data (surface),
                        cairo_image_surface_get_stride (surface));
  cairo_surface_mark_dirty (surface);
  return surface;
}

/* Paints @masks (in CSS pixels, @scale image pixels each) on @source,
 * flattens it onto white and resamples so the long side is at most
 * @max_side. */
static GdkPixbuf *
render_surface (cairo_surface_t *source,
                const SightRect *masks,
                guint            n_masks,
                double           scale,
                int              max_side,
                guint           *n_masked)
{
  int width = cairo_image_surface_get_width (source);
  int height = cairo_image_surface_get_height (source);
  int out_width = width, out_height = height;
  double factor = 1.0;
  cairo_surface_t *target;
  cairo_t *cr;
  GdkPixbuf *pixbuf;

  *n_masked = 0;
  cr = cairo_create (source);
  cairo_set_source_rgb (cr, 0, 0, 0);
  for (guint i = 0; i < n_masks; i++)
    {
      double x = floor (masks[i].x * scale), y = floor (masks[i].y * scale);
      double w = ceil ((masks[i].x + masks[i].width) * scale) - x;
      double h = ceil ((masks[i].y + masks[i].height) * scale) - y;

      if (w <= 0 || h <= 0 || x >= width || y >= height || x + w <= 0 || y + h <= 0)
        continue;
      cairo_rectangle (cr, x, y, w, h);
      (*n_masked)++;
    }
  cairo_fill (cr);
  cairo_destroy (cr);

  if (max_side > 0 && MAX (width, height) > max_side)
    {
      factor = (double) max_side / MAX (width, height);
      out_width = MAX (1, (int) round (width * factor));
      out_height = MAX (1, (int) round (height * factor));
    }

  target = cairo_image_surface_create (CAIRO_FORMAT_RGB24, out_width, out_height);
  cr = cairo_create (target);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  cairo_scale (cr, (double) out_width / width, (double) out_height / height);
  cairo_set_source_surface (cr, source, 0, 0);
  cairo_pattern_set_filter (cairo_get_source (cr), CAIRO_FILTER_GOOD);
  cairo_paint (cr);
  cairo_destroy (cr);
  cairo_surface_flush (target);

  pixbuf = gdk_pixbuf_get_from_surface (target, 0, 0, out_width, out_height);
  cairo_surface_destroy (target);
  return pixbuf;
}

static void
encode_shot_thread (GTask        *task,
                    gpointer      source_object,
                    gpointer      task_data,
                    GCancellable *cancellable)
{
  ShotData *data = task_data;
  g_autoptr(GdkPixbuf) pixbuf = NULL;
  g_autoptr(SightScreenshot) shot = NULL;
  g_autoptr(GError) error = NULL;
  int source_width = cairo_image_surface_get_width (data->source);
  guint n_masked = 0;

  pixbuf = render_surface (data->source, data->masks, data->options.n_masks, data->scale,
                           data->options.max_side, &n_masked);
  shot = g_new0 (SightScreenshot, 1);
  shot->width = gdk_pixbuf_get_width (pixbuf);
  shot->height = gdk_pixbuf_get_height (pixbuf);
  shot->scale = data->scale * shot->width / source_width;
  shot->n_masked = n_masked;
  shot->n_secret_regions = data->n_secret;
  shot->format = data->options.format;
  shot->bytes = sight_encode_image (pixbuf, data->options.format, data->options.quality, &error);
  if (shot->bytes == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  g_task_return_pointer (task, g_steal_pointer (&shot), (GDestroyNotify) sight_screenshot_free);
}

static void
encode_shot_done_cb (GObject      *source,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GError) error = NULL;
  SightScreenshot *shot;

  shot = g_task_propagate_pointer (G_TASK (result), &error);
  if (shot == NULL)
    g_task_return_error (task, g_steal_pointer (&error));
  else
    g_task_return_pointer (task, shot, (GDestroyNotify) sight_screenshot_free);
}

static void
snapshot_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  SightWebPage *self = g_task_get_source_object (task);
  ShotData *data = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  g_autoptr(GTask) encode = NULL;
  GCancellable *cancellable;

  texture = webkit_web_view_get_snapshot_finish (WEBKIT_WEB_VIEW (source), result, &error);
  if (texture == NULL)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_task_return_error (task, g_steal_pointer (&error));
      else
        g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                 "The page could not be captured: %s", error->message);
      return;
    }

  data->scale = data->css_width > 0
                ? (double) gdk_texture_get_width (texture) / data->css_width
                : self->device_scale;
  data->source = download_texture (texture);

  /* The encoding runs under a task of its own with no source object: a
   * worker thread may drop a task's last reference, and the page (a WebKit
   * view) must only ever be finalized on the main thread. The page's task
   * keeps the data and ends on the main thread, in encode_shot_done_cb(). */
  cancellable = g_task_get_cancellable (task);
  encode = g_task_new (NULL, cancellable, encode_shot_done_cb, g_steal_pointer (&task));
  g_task_set_source_tag (encode, encode_shot_thread);
  g_task_set_task_data (encode, data, NULL);
  g_task_run_in_thread (encode, encode_shot_thread);
}

static void
take_snapshot (GTask *task)
{
  SightWebPage *self = g_task_get_source_object (task);
  ShotData *data = g_task_get_task_data (task);

  webkit_web_view_get_snapshot (self->view,
                                data->options.full_page ? WEBKIT_SNAPSHOT_REGION_FULL_DOCUMENT
                                                        : WEBKIT_SNAPSHOT_REGION_VISIBLE,
                                WEBKIT_SNAPSHOT_OPTIONS_NONE, g_task_get_cancellable (task),
                                snapshot_cb, task);
}

static void
regions_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  GTask *task = user_data;
  ShotData *data = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) boxes = NULL;
  g_autoptr(GPtrArray) secrets = _sight_web_page_collect_filled_secrets (SIGHT_WEB_PAGE (source));

  boxes = _sight_secret_regions_finish (SIGHT_WEB_PAGE (source), result, &data->n_secret, &error);
  if (boxes == NULL && secrets->len > 0)
    {
      /* Unmeasured, a secret could show anywhere: no pixels at all. */
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_task_return_error (task, g_steal_pointer (&error));
      else
        g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                 "Where the filled secrets show could not be measured, so "
                                 "nothing was captured: %s", error->message);
      g_object_unref (task);
      return;
    }
  if (boxes != NULL && boxes->len > 0)
    {
      data->masks = g_renew (SightRect, data->masks, data->options.n_masks + boxes->len);
      memcpy (data->masks + data->options.n_masks, boxes->data, sizeof (SightRect) * boxes->len);
      data->options.n_masks += boxes->len;
      data->options.masks = data->masks;
    }
  take_snapshot (task);
}

void
sight_web_page_screenshot_async (SightWebPage                 *self,
                                 const SightScreenshotOptions *options,
                                 GCancellable                 *cancellable,
                                 GAsyncReadyCallback           callback,
                                 gpointer                      user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(GPtrArray) secrets = NULL;
  ShotData *data;
  int view_width;

  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));
  g_return_if_fail (options != NULL);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_web_page_screenshot_async);
  data = g_new0 (ShotData, 1);
  data->options = *options;
  if (options->n_masks > 0)
    data->masks = g_memdup2 (options->masks, sizeof (SightRect) * options->n_masks);
  data->options.masks = data->masks;
  /* Both regions are as wide as the viewport in CSS pixels. */
  sight_web_page_get_viewport (self, &view_width, NULL);
  data->css_width = view_width;
  g_task_set_task_data (task, data, (GDestroyNotify) shot_data_free);

  /* Every screenshot paints over wherever a filled secret shows, measured
   * now (a field that moved or stopped being secure is still covered); one
   * that comes with no masks (not an observation's) covers the secure
   * fields too. */
  secrets = _sight_web_page_collect_filled_secrets (self);
  if (secrets->len > 0 || options->n_masks == 0)
    {
      _sight_secret_regions_async (self, (const char * const *) secrets->pdata, secrets->len,
                                   options->full_page, options->n_masks == 0, cancellable,
                                   regions_cb, g_steal_pointer (&task));
      return;
    }
  take_snapshot (g_steal_pointer (&task));
}

SightScreenshot *
sight_web_page_screenshot_finish (SightWebPage  *self,
                                  GAsyncResult  *result,
                                  GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ----------------------------------------------------------------------- */
/* Filled secrets                                                           */

static void
wipe_free (gpointer data)
{
  char *value = data;

  if (value != NULL)
    memset (value, 0, strlen (value));
  g_free (value);
}

void
_sight_web_page_add_filled_secret (SightWebPage *self,
                                   const char   *value)
{
  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));
  g_return_if_fail (value != NULL);

  for (guint i = 0; i < self->filled_secrets->len; i++)
    if (g_str_equal (g_ptr_array_index (self->filled_secrets, i), value))
      return;
  g_ptr_array_add (self->filled_secrets, g_strdup (value));
}

void
_sight_web_page_count_secret_fill (SightWebPage *self)
{
  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));
  self->secret_fills++;
}

guint
sight_web_page_get_secret_fills (SightWebPage *self)
{
  g_return_val_if_fail (SIGHT_IS_WEB_PAGE (self), 0);
  return self->secret_fills;
}

GPtrArray *
_sight_web_page_collect_filled_secrets (SightWebPage *self)
{
  GPtrArray *values = g_ptr_array_new ();

  /* A popup shows what its opener's session holds too. */
  for (SightWebPage *page = self; page != NULL; page = page->opener)
    for (guint i = 0; i < page->filled_secrets->len; i++)
      g_ptr_array_add (values, g_ptr_array_index (page->filled_secrets, i));
  return values;
}

/* ----------------------------------------------------------------------- */
/* File choosers and popups                                                 */

guint
_sight_web_page_get_navigation_count (SightWebPage *self)
{
  return self->navigation_count;
}

void
_sight_web_page_set_pending_files (SightWebPage      *self,
                                   const char * const *files)
{
  g_clear_pointer (&self->pending_files, g_strfreev);
  self->pending_files = g_strdupv ((char **) files);
  self->file_chooser_answered = FALSE;
}

gboolean
_sight_web_page_take_file_chooser_answered (SightWebPage *self)
{
  gboolean answered = self->file_chooser_answered;

  self->file_chooser_answered = FALSE;
  return answered;
}

static gboolean
run_file_chooser_cb (WebKitWebView            *view,
                     WebKitFileChooserRequest *request,
                     SightWebPage             *self)
{
  /* Headless pages never show a dialog: the chooser is answered with the
   * files an action set, or cancelled. */
  if (self->pending_files != NULL)
    {
      gboolean multiple = webkit_file_chooser_request_get_select_multiple (request);
      guint n = g_strv_length (self->pending_files);

      if (!multiple && n > 1)
        n = 1;
      {
        g_autofree char **files = g_new0 (char *, n + 1);

        for (guint i = 0; i < n; i++)
          files[i] = self->pending_files[i];
        webkit_file_chooser_request_select_files (request, (const char * const *) files);
      }
      self->file_chooser_answered = TRUE;
      g_clear_pointer (&self->pending_files, g_strfreev);
    }
  else
    webkit_file_chooser_request_cancel (request);
  return TRUE;
}

GPtrArray *
sight_web_page_get_popups (SightWebPage *self)
{
  g_return_val_if_fail (SIGHT_IS_WEB_PAGE (self), NULL);
  return self->popups;
}

SightWebPage *
sight_web_page_get_opener (SightWebPage *self)
{
  g_return_val_if_fail (SIGHT_IS_WEB_PAGE (self), NULL);
  return self->opener;
}

static GtkWidget *
create_cb (WebKitWebView          *view,
           WebKitNavigationAction *action,
           SightWebPage           *self)
{
  g_autoptr(SightWebPage) popup = NULL;
  const char *uri = webkit_uri_request_get_uri (webkit_navigation_action_get_request (action));

  /* window.open asks for a view without a policy decision first. An empty
   * URL opens about:blank, which the policy allows. */
  if (self->origin_policy != NULL && uri != NULL && *uri != '\0' &&
      !sight_origin_policy_allows (self->origin_policy, uri))
    {
      g_debug ("Blocked a new window outside the allowed origins: %s", uri);
      add_log_entry (self, SIGHT_LOG_BLOCKED, NULL,
                     "Blocked a new window outside the allowed origins", uri, 0);
      return NULL;
    }
  popup = g_object_new (SIGHT_TYPE_WEB_PAGE, "opener", self, NULL);
  sight_web_page_set_viewport (popup, self->width, self->height, self->device_scale);
  if (self->origin_policy != NULL)
    popup->origin_policy = sight_origin_policy_ref (self->origin_policy);
  if (self->content_filter != NULL)
    {
      popup->content_filter = webkit_user_content_filter_ref (self->content_filter);
      webkit_user_content_manager_add_filter (popup->content, popup->content_filter);
    }
  g_ptr_array_add (self->popups, g_object_ref (popup));
  g_signal_emit (self, signals[POPUP], 0, popup);
  /* WebKit loads the popup's first page into the returned view. */
  return GTK_WIDGET (popup->view);
}

/* ----------------------------------------------------------------------- */
/* Object                                                                   */

WebKitWebView *
sight_web_page_get_web_view (SightWebPage *self)
{
  g_return_val_if_fail (SIGHT_IS_WEB_PAGE (self), NULL);
  return self->view;
}

const char *
sight_web_page_get_uri (SightWebPage *self)
{
  g_return_val_if_fail (SIGHT_IS_WEB_PAGE (self), NULL);
  return webkit_web_view_get_uri (self->view);
}

WebKitNetworkSession *
sight_web_page_get_network_session (SightWebPage *self)
{
  g_return_val_if_fail (SIGHT_IS_WEB_PAGE (self), NULL);
  return self->session;
}

static void
sight_web_page_dispose (GObject *object)
{
  SightWebPage *self = SIGHT_WEB_PAGE (object);

  fail_pending_ops (self, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE, "The page was closed");
  g_clear_handle_id (&self->hang_source, g_source_remove);
  g_clear_pointer (&self->origin_policy, sight_origin_policy_unref);
  self->filter_generation++;   /* a compile still running is dropped */
  g_clear_handle_id (&self->filter_timeout, g_source_remove);
  g_clear_pointer (&self->content_filter, webkit_user_content_filter_unref);
  g_clear_error (&self->filter_error);
  g_clear_pointer (&self->deferred_uri, g_free);
  if (self->view != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->view, self);
      g_signal_handlers_disconnect_by_data (self->content, self);
      webkit_user_content_manager_unregister_script_message_handler (self->content, "sightline",
                                                                     SIGHT_SCRIPT_WORLD);
    }
  if (self->toplevel != NULL)
    {
      gtk_window_destroy (GTK_WINDOW (self->toplevel));
      g_clear_object (&self->toplevel);
    }
  g_clear_object (&self->view);
  g_clear_object (&self->content);
  g_clear_weak_pointer (&self->opener);
  if (self->popups != NULL)
    g_ptr_array_set_size (self->popups, 0);
  g_clear_object (&self->session);
  if (self->in_flight != NULL)
    g_hash_table_remove_all (self->in_flight);

  G_OBJECT_CLASS (sight_web_page_parent_class)->dispose (object);
}

static void
sight_web_page_finalize (GObject *object)
{
  SightWebPage *self = SIGHT_WEB_PAGE (object);

  g_clear_pointer (&self->log, g_ptr_array_unref);
  g_clear_pointer (&self->in_flight, g_hash_table_unref);
  g_clear_pointer (&self->terminate_reason, g_free);
  g_clear_pointer (&self->last_loss, g_free);
  g_clear_pointer (&self->lost_reason, g_free);
  g_clear_pointer (&self->pending_files, g_strfreev);
  g_clear_pointer (&self->popups, g_ptr_array_unref);
  g_clear_pointer (&self->filled_secrets, g_ptr_array_unref);

  G_OBJECT_CLASS (sight_web_page_parent_class)->finalize (object);
}

static void sight_web_page_constructed (GObject *object);

static void
sight_web_page_set_property (GObject      *object,
                             guint         prop_id,
                             const GValue *value,
                             GParamSpec   *pspec)
{
  SightWebPage *self = SIGHT_WEB_PAGE (object);

  switch (prop_id)
    {
    case PROP_OPENER:
      g_set_weak_pointer (&self->opener, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sight_web_page_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  SightWebPage *self = SIGHT_WEB_PAGE (object);

  switch (prop_id)
    {
    case PROP_OPENER:
      g_value_set_object (value, self->opener);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sight_web_page_class_init (SightWebPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = sight_web_page_constructed;
  object_class->dispose = sight_web_page_dispose;
  object_class->finalize = sight_web_page_finalize;
  object_class->set_property = sight_web_page_set_property;
  object_class->get_property = sight_web_page_get_property;

  /**
   * SightWebPage:opener:
   *
   * The page whose script or link opened this one as a popup, or %NULL.
   */
  properties[PROP_OPENER] = g_param_spec_object ("opener", NULL, NULL, SIGHT_TYPE_WEB_PAGE,
                                                 G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
                                                 G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * SightWebPage::popup:
   * @popup: the new page
   *
   * The page opened a popup (window.open, a target=_blank link); it is a new
   * page of the same session, also listed by sight_web_page_get_popups().
   */
  signals[POPUP] = g_signal_new ("popup", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                 NULL, NULL, NULL, G_TYPE_NONE, 1, SIGHT_TYPE_WEB_PAGE);

  /**
   * SightWebPage::web-process-lost:
   * @reason: why, in a sentence
   *
   * The web process crashed, hung and was terminated, or was stopped; the
   * next load starts a new one.
   */
  signals[WEB_PROCESS_LOST] = g_signal_new ("web-process-lost", G_TYPE_FROM_CLASS (klass),
                                            G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                            G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void
sight_web_page_constructed (GObject *object)
{
  SightWebPage *self = SIGHT_WEB_PAGE (object);
  g_autofree char *hooks = load_js_resource ("page-hooks.js");
  g_autofree char *world = load_js_resource ("page-world.js");
  g_autoptr(WebKitUserScript) hooks_script = NULL;
  g_autoptr(WebKitUserScript) world_script = NULL;
  WebKitSettings *settings;

  G_OBJECT_CLASS (sight_web_page_parent_class)->constructed (object);

  /* A popup shares its opener's session (cookies, storage) and web process. */
  if (self->opener != NULL)
    self->session = g_object_ref (self->opener->session);
  else
    self->session = webkit_network_session_new_ephemeral ();
  self->content = webkit_user_content_manager_new ();
  hooks_script = webkit_user_script_new (hooks, WEBKIT_USER_CONTENT_INJECT_ALL_FRAMES,
                                         WEBKIT_USER_SCRIPT_INJECT_AT_DOCUMENT_START, NULL, NULL);
  world_script = webkit_user_script_new_for_world (world, WEBKIT_USER_CONTENT_INJECT_ALL_FRAMES,
                                                   WEBKIT_USER_SCRIPT_INJECT_AT_DOCUMENT_START,
                                                   SIGHT_SCRIPT_WORLD, NULL, NULL);
  webkit_user_content_manager_add_script (self->content, hooks_script);
  webkit_user_content_manager_add_script (self->content, world_script);
  webkit_user_content_manager_register_script_message_handler (self->content, "sightline",
                                                               SIGHT_SCRIPT_WORLD);
  g_signal_connect (self->content, "script-message-received::sightline",
                    G_CALLBACK (script_message_cb), self);

  if (self->opener != NULL)
    self->view = g_object_ref_sink (g_object_new (WEBKIT_TYPE_WEB_VIEW,
                                                  "related-view", self->opener->view,
                                                  "user-content-manager", self->content,
                                                  NULL));
  else
    self->view = g_object_ref_sink (g_object_new (WEBKIT_TYPE_WEB_VIEW,
                                                  "web-context", get_web_context (),
                                                  "network-session", self->session,
                                                  "user-content-manager", self->content,
                                                  NULL));
  settings = webkit_web_view_get_settings (self->view);
  webkit_settings_set_enable_write_console_messages_to_stdout (settings, FALSE);
  webkit_settings_set_javascript_can_open_windows_automatically (settings, TRUE);
  /* Headless, GTK never draws the view, so composited frames are never
   * acknowledged and the page stops producing frames after the first one:
   * animation frames, CSS animations and stability checks stall. Without
   * compositing the web process keeps its own frame pace (60 per second
   * measured under Xvfb, against 1 composited). */
  webkit_settings_set_hardware_acceleration_policy (settings,
                                                    WEBKIT_HARDWARE_ACCELERATION_POLICY_NEVER);

  g_signal_connect (self->view, "load-changed", G_CALLBACK (load_changed_cb), self);
  g_signal_connect (self->view, "load-failed", G_CALLBACK (load_failed_cb), self);
  g_signal_connect (self->view, "resource-load-started",
                    G_CALLBACK (resource_load_started_cb), self);
  g_signal_connect (self->view, "web-process-terminated",
                    G_CALLBACK (web_process_terminated_cb), self);
  g_signal_connect (self->view, "run-file-chooser", G_CALLBACK (run_file_chooser_cb), self);
  g_signal_connect (self->view, "create", G_CALLBACK (create_cb), self);
  g_signal_connect (self->view, "decide-policy", G_CALLBACK (decide_policy_cb), self);
  g_signal_connect (self->view, "notify::is-web-process-responsive",
                    G_CALLBACK (responsive_changed_cb), self);

  /* Headless: a toplevel that is realized but never presented. The view is
   * allocated and mapped by hand, so WebKit sees a visible page (timers and
   * animation frames run) and can paint snapshots, and no window appears. */
  self->toplevel = g_object_ref_sink (gtk_window_new ());
  gtk_window_set_child (GTK_WINDOW (self->toplevel), GTK_WIDGET (self->view));
  gtk_widget_realize (self->toplevel);
  self->headless = TRUE;
  apply_viewport (self);
}

static void
sight_web_page_init (SightWebPage *self)
{
  self->log = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_log_entry_free);
  self->in_flight = g_hash_table_new_full (NULL, NULL, g_object_unref, NULL);
  self->popups = g_ptr_array_new_with_free_func (g_object_unref);
  self->filled_secrets = g_ptr_array_new_with_free_func (wipe_free);
  self->width = DEFAULT_WIDTH;
  self->height = DEFAULT_HEIGHT;
  self->device_scale = 1.0;
  self->hang_timeout_ms = DEFAULT_HANG_TIMEOUT_MS;
  self->last_network_activity = g_get_monotonic_time ();
}

SightWebPage *
sight_web_page_new (void)
{
  return g_object_new (SIGHT_TYPE_WEB_PAGE, NULL);
}
