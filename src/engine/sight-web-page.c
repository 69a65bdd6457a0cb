/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-web-page"

#include "config.h"

#include "sight-web-page.h"

#include <math.h>
#include <string.h>

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

G_DEFINE_FINAL_TYPE (SightWebPage, sight_web_page, G_TYPE_OBJECT)

guint _sight_web_page_signals[N_SIGNALS];

enum {
  PROP_0,
  PROP_OPENER,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* ----------------------------------------------------------------------- */
/* Small public helpers                                                    */

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

void
sight_screenshot_free (SightScreenshot *shot)
{
  if (shot == NULL)
    return;
  g_clear_pointer (&shot->bytes, g_bytes_unref);
  g_clear_object (&shot->pixbuf);
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
/* web process goes away                                                   */

void
_sight_ping_unref (Ping *ping)
{
  if (--ping->ref_count == 0)
    g_free (ping);
}

void
_sight_page_op_free (SightPageOp *op)
{
  if (op->ping != NULL)
    {
      op->ping->op = NULL;
      g_clear_pointer (&op->ping, _sight_ping_unref);
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
void
_sight_page_op_complete (SightPageOp *op,
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
    _sight_page_op_free (op);
}

static gboolean
cancel_idle_cb (gpointer user_data)
{
  SightPageOp *op = user_data;

  op->cancel_source = 0;
  _sight_page_op_complete (op, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
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

SightPageOp *
_sight_page_op_new (SightWebPage *self,
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

void
_sight_web_page_fail_pending_ops (SightWebPage *self,
                                  SightErrorCode code,
                                  const char    *message)
{
  while (self->pending != NULL)
    {
      SightPageOp *op = self->pending->data;

      _sight_page_op_complete (op, g_error_new_literal (SIGHT_ERROR, code, message), NULL, NULL);
    }
}

/* ----------------------------------------------------------------------- */
/* Scripts                                                                 */

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
/* The log                                                                 */

void
_sight_web_page_add_log_entry (SightWebPage *self,
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
    _sight_web_page_add_log_entry (
        self, SIGHT_LOG_CONSOLE,
        json_object_get_string_member_with_default (object, "level", "log"),
        json_object_get_string_member_with_default (object, "text", ""),
        json_object_get_string_member_with_default (object, "url", ""), 0);
  else if (g_str_equal (kind, "error"))
    _sight_web_page_add_log_entry (self, SIGHT_LOG_PAGE_ERROR, "error",
                                   json_object_get_string_member_with_default (object, "text", ""),
                                   json_object_get_string_member_with_default (object, "url", ""),
                                   0);
  else if (g_str_equal (kind, "resource") && self->origin_policy != NULL)
    {
      /* A subresource that failed outside the allowed origins is one the
       * content filter refused (it lets data: and blob: through). */
      const char *url = json_object_get_string_member_with_default (object, "url", "");
      g_autofree char *text = NULL;

      if (g_ascii_strncasecmp (url, "data:", 5) == 0 || g_ascii_strncasecmp (url, "blob:", 5) == 0 ||
          sight_origin_policy_allows (self->origin_policy, url))
        return;
      text = g_strdup_printf ("Blocked a subresource (%s) outside the allowed origins",
                              json_object_get_string_member_with_default (object, "text", "load"));
      _sight_web_page_add_log_entry (self, SIGHT_LOG_BLOCKED, NULL, text, url, 0);
    }
}

/* ----------------------------------------------------------------------- */
/* Loading                                                                 */

static gboolean
load_poll_cb (gpointer user_data)
{
  SightPageOp *op = user_data;

  _sight_web_page_load_op_check (op);
  return G_SOURCE_CONTINUE;
}

gboolean
sight_web_page_is_network_idle (SightWebPage *self,
                                guint         idle_ms)
{
  return g_hash_table_size (self->in_flight) == 0 &&
         g_get_monotonic_time () - self->last_network_activity >= (gint64) idle_ms * 1000;
}

void
_sight_web_page_load_op_check (SightPageOp *op)
{
  SightWebPage *self = op->page;

  if (self == NULL || op->done)
    return;
  if (op->load_error != NULL)
    {
      _sight_page_op_complete (op, g_steal_pointer (&op->load_error), NULL, NULL);
      return;
    }
  switch (op->wait_until)
    {
    case SIGHT_WAIT_UNTIL_DOMCONTENTLOADED:
      if (op->dom_ready || op->loaded)
        _sight_page_op_complete (op, NULL, GINT_TO_POINTER (TRUE), NULL);
      break;
    case SIGHT_WAIT_UNTIL_LOAD:
      if (op->loaded)
        _sight_page_op_complete (op, NULL, GINT_TO_POINTER (TRUE), NULL);
      break;
    case SIGHT_WAIT_UNTIL_NETWORKIDLE:
    default:
      if (!op->loaded)
        break;
      if (sight_web_page_is_network_idle (self, NETWORK_IDLE_MS))
        _sight_page_op_complete (op, NULL, GINT_TO_POINTER (TRUE), NULL);
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
      _sight_page_op_complete (op, error, NULL, NULL);
      return G_SOURCE_REMOVE;
    }
  _sight_page_op_timed_out (op, error);
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
    _sight_page_op_complete (self->load_op,
                             g_error_new_literal (SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED,
                                           "The load was replaced by another navigation"),
                             NULL, NULL);

  op = _sight_page_op_new (self, task, timeout_ms, g_task_get_cancellable (task));
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
      _sight_web_page_load_op_check (op);
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
    _sight_page_op_complete (self->load_op,
                             g_error_new_literal (SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED,
                                           "The load was replaced by another navigation"),
                             NULL, NULL);
  op = _sight_page_op_new (self, task, timeout_ms, cancellable);
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

static void
load_changed_cb (WebKitWebView   *view,
                 WebKitLoadEvent  event,
                 SightWebPage    *self)
{
  SightPageOp *op = self->load_op;

  if (event == WEBKIT_LOAD_STARTED)
    {
      self->navigation_count++;
      self->document_committed = FALSE;
      self->document_loaded = FALSE;
      g_clear_pointer (&self->lost_reason, g_free);
    }
  else if (event == WEBKIT_LOAD_COMMITTED)
    {
      self->document_committed = TRUE;
      self->document_loaded = FALSE;
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
      op->loaded = FALSE;
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
  _sight_web_page_load_op_check (op);
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
  _sight_web_page_add_log_entry (self, SIGHT_LOG_REQUEST_FAILED, NULL, error->message, failing_uri, 0);
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
  _sight_web_page_load_op_check (op);
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
      _sight_web_page_load_op_check (self->load_op);
    }
  /* The committed document's load event: the load is done, whenever WebKit
   * gets to say so (LOAD_FINISHED). */
  else if (g_str_equal (type, "load") && self->document_committed &&
           g_strcmp0 (json_object_get_string_member_with_default (object, "url", ""),
                      webkit_web_view_get_uri (self->view)) == 0)
    {
      self->document_loaded = TRUE;
      if (self->load_op != NULL && self->load_op->committed)
        {
          self->load_op->dom_ready = TRUE;
          self->load_op->loaded = TRUE;
          _sight_web_page_load_op_check (self->load_op);
        }
    }
}

/* ----------------------------------------------------------------------- */
/* Requests                                                                */

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
        _sight_web_page_add_log_entry (self, SIGHT_LOG_REQUEST_FAILED, NULL,
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
    _sight_web_page_add_log_entry (self, SIGHT_LOG_REQUEST_FAILED, NULL, error->message,
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
/* Viewport                                                                */

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
/* Filled secrets                                                          */

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

void
_sight_web_page_secret_typing (SightWebPage *self,
                               gboolean      typing)
{
  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));
  g_return_if_fail (typing || self->secrets_typing > 0);

  if (typing)
    {
      self->secrets_typing++;
      self->secret_fills_begun++;
    }
  else
    self->secrets_typing--;
}

guint
sight_web_page_get_secret_typing_mark (SightWebPage *self,
                                       gboolean     *out_typing)
{
  g_return_val_if_fail (SIGHT_IS_WEB_PAGE (self), 0);

  if (out_typing != NULL)
    *out_typing = self->secrets_typing > 0;
  return self->secret_fills_begun;
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
/* File choosers                                                           */

guint
_sight_web_page_get_navigation_count (SightWebPage *self)
{
  return self->navigation_count;
}

/* A main-frame load is under way: WebKit says so and the document it
 * committed has not fired its load event (after which WebKit may take a
 * while to report the load finished). */
gboolean
_sight_web_page_is_loading (SightWebPage *self)
{
  return webkit_web_view_is_loading (self->view) && !self->document_loaded;
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

/* ----------------------------------------------------------------------- */
/* Object                                                                  */

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

/* Whether no popup of @self (nor of its popups) lives on elsewhere, held by
 * more than its opener: a popup shares its opener's web process
 * (related-view). */
static gboolean
popups_end_with (SightWebPage *self)
{
  for (guint i = 0; self->popups != NULL && i < self->popups->len; i++)
    {
      SightWebPage *popup = g_ptr_array_index (self->popups, i);

      if (G_OBJECT (popup)->ref_count > 1 || !popups_end_with (popup))
        return FALSE;
    }
  return TRUE;
}

static void
sight_web_page_dispose (GObject *object)
{
  SightWebPage *self = SIGHT_WEB_PAGE (object);

  _sight_web_page_fail_pending_ops (self, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE, "The page was closed");
  g_clear_handle_id (&self->hang_source, g_source_remove);
  g_clear_pointer (&self->origin_policy, sight_origin_policy_unref);
  self->filter_generation++;   /* a compile still running is dropped */
  g_clear_handle_id (&self->filter_timeout, g_source_remove);
  g_clear_pointer (&self->content_filter, webkit_user_content_filter_unref);
  g_clear_error (&self->filter_error);
  g_clear_pointer (&self->deferred_uri, g_free);
  for (guint i = 0; self->held != NULL && i < self->held->len; i++)
    webkit_policy_decision_ignore (g_ptr_array_index (self->held, i));
  g_clear_pointer (&self->held, g_ptr_array_unref);
  if (self->view != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->view, self);
      g_signal_handlers_disconnect_by_data (self->content, self);
      webkit_user_content_manager_unregister_script_message_handler (self->content, "sightline",
                                                                     SIGHT_SCRIPT_WORLD);
      /* Left to itself, a web process outlives its last page by most of a
       * second and holds its memory while the next page starts: a closed
       * page's process is ended now. */
      if (self->opener == NULL && popups_end_with (self))
        webkit_web_view_terminate_web_process (self->view);
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
  _sight_web_page_signals[POPUP] = g_signal_new ("popup", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                 NULL, NULL, NULL, G_TYPE_NONE, 1, SIGHT_TYPE_WEB_PAGE);

  /**
   * SightWebPage::web-process-lost:
   * @reason: why, in a sentence
   *
   * The web process crashed, hung and was terminated, or was stopped; the
   * next load starts a new one.
   */
  _sight_web_page_signals[WEB_PROCESS_LOST] = g_signal_new ("web-process-lost", G_TYPE_FROM_CLASS (klass),
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
                                                  "web-context", _sight_web_page_get_web_context (),
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
                    G_CALLBACK (_sight_web_page_web_process_terminated_cb), self);
  g_signal_connect (self->view, "run-file-chooser", G_CALLBACK (run_file_chooser_cb), self);
  g_signal_connect (self->view, "create", G_CALLBACK (_sight_web_page_create_cb), self);
  g_signal_connect (self->view, "decide-policy", G_CALLBACK (_sight_web_page_decide_policy_cb), self);
  g_signal_connect (self->view, "notify::is-web-process-responsive",
                    G_CALLBACK (_sight_web_page_responsive_changed_cb), self);

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
