/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-actions"

#include "config.h"

#include "sight-actions.h"

#include "sight-engine-enums.h"
#include "sight-engine-resources.h"
#include "sight-enum.h"
#include "sight-error.h"
#include "sight-observation.h"
#include "sight-secret-fields.h"
#include "sight-web-page-private.h"

#define GRACE_MS 40        /* for a navigation the action started to show up */
/* Settling is by signals (actions.js quiet()): the work the action started is
 * done and a frame was rendered with no mutation in it or after it, waited
 * inside the action's own script, so an action whose page needs no network
 * settles in one round trip. Only a page that keeps mutating falls back to a
 * window: BUSY_MAX_MS for such a frame, then it is given up on. */
#define BUSY_MAX_MS 500
#define POLL_MS 10         /* while a navigation or a request the action started runs */
/* Pixel-aware settling: a frame this often, and frames agreeing this long
 * mean the screen is still; after an action the signals saw done (its work
 * ended and a frame was painted after it), two agreeing frames do. */
#define FRAME_POLL_MS 50
#define FRAME_STILL_MS 400
#define FRAME_STILL_SIGNALED_MS FRAME_POLL_MS

/* The page's last action settled by signals: qdata, the monotonic µs it did. */
static GQuark
signaled_quark (void)
{
  return g_quark_from_static_string ("sight-actions-signaled");
}

static const char *
actions_script (void)
{
  static char *script;

  if (script == NULL)
    {
      g_autoptr(GBytes) bytes =
        g_resource_lookup_data (sight_engine_get_resource (), "/dev/sightline/engine/js/actions.js",
                                G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);

      g_assert (bytes != NULL);
      script = g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
    }
  return script;
}

/* snapshot.js (for refs), secret-fields.js, the control roles, actions.js,
 * then the call. */
static char *
build_call (const char *call,
            gboolean    with_snapshot)
{
  return g_strconcat (with_snapshot ? sight_observation_get_script () : "", "\n",
                      _sight_secret_fields_script (), "\n", _sight_action_roles_script (), "\n",
                      actions_script (), "\nreturn __sight.actions.", call, ";", NULL);
}

typedef struct {
  SightWebPage *page;
  char         *ref;
  char         *type;
  gboolean      set_files;
  gint64        start;          /* monotonic µs */
  gint64        deadline;
  gint64        acted;
  guint         nav_before;
  guint         popups_before;
  GHashTable   *requests_before; /* WebKitWebResource in flight before the action → itself */
  WebKitWebView *view;
  gulong        policy_handler;
  gboolean      navigation_asked; /* a navigation or a new window asked for its policy */
  const char   *reason;          /* what the C side last waited for, static */
  guint         poll_source;
  gboolean      quiet_pending;
  JsonObject   *result;
} ActData;

static void
act_data_free (ActData *data)
{
  g_clear_handle_id (&data->poll_source, g_source_remove);
  g_clear_object (&data->page);
  g_clear_pointer (&data->requests_before, g_hash_table_unref);
  g_clear_signal_handler (&data->policy_handler, data->view);
  g_clear_object (&data->view);
  g_free (data->ref);
  g_free (data->type);
  g_clear_pointer (&data->result, json_object_unref);
  g_free (data);
}

static guint
remaining_ms (ActData *data)
{
  gint64 left = data->deadline - g_get_monotonic_time ();

  return left > 0 ? (guint) (left / 1000) : 0;
}

/* Requests in flight that the action started: a request the page had
 * running before it (a long poll, a stream) is not the action's to wait for.
 * Once a navigation the action began has fired its document's load event,
 * what is still in flight is the new document's own, which a load leaves
 * running too (an image its load handler asked for). */
static guint
requests_started (ActData *data)
{
  GHashTableIter iter;
  gpointer resource;
  guint n = 0;

  if (_sight_web_page_get_navigation_count (data->page) != data->nav_before &&
      !_sight_web_page_is_loading (data->page))
    return 0;
  g_hash_table_iter_init (&iter, data->page->in_flight);
  while (g_hash_table_iter_next (&iter, &resource, NULL))
    if (!g_hash_table_contains (data->requests_before, resource))
      n++;
  return n;
}

/* quiet()'s arguments but its timeout */
static JsonObject *
settle_args (void)
{
  JsonObject *args = json_object_new ();

  json_object_set_int_member (args, "busyMaxMs", BUSY_MAX_MS);
  return args;
}

/* The script's answer: settled, and why ("signals", "mutating", "timeout",
 * "navigation"). */
static gboolean
script_settled (JsonNode    *node,
                const char **reason)
{
  JsonObject *settle;

  *reason = "timeout";
  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return FALSE;
  settle = json_node_get_object (node);
  *reason = g_intern_string (json_object_get_string_member_with_default (settle, "reason",
                                                                         "timeout"));
  return json_object_get_boolean_member_with_default (settle, "quiet", FALSE);
}

static void
finish_settled (GTask      *task,
                gboolean    settled,
                const char *reason)
{
  ActData *data = g_task_get_task_data (task);
  JsonObject *result = data->result;
  GPtrArray *popups = sight_web_page_get_popups (data->page);
  JsonArray *popup_list = json_array_new ();
  gint64 now = g_get_monotonic_time ();
  const char *uri = sight_web_page_get_uri (data->page);

  g_clear_handle_id (&data->poll_source, g_source_remove);
  g_object_set_qdata (G_OBJECT (data->page), signaled_quark (),
                      settled && g_str_equal (reason, "signals") ? GSIZE_TO_POINTER (now) : NULL);
  for (guint i = data->popups_before; i < popups->len; i++)
    {
      JsonObject *popup = json_object_new ();
      const char *popup_uri = sight_web_page_get_uri (g_ptr_array_index (popups, i));

      json_object_set_int_member (popup, "index", i);
      json_object_set_string_member (popup, "url", popup_uri != NULL ? popup_uri : "");
      json_array_add_object_element (popup_list, popup);
    }
  json_object_set_array_member (result, "popups", popup_list);
  json_object_set_boolean_member (result, "navigated",
                                  _sight_web_page_get_navigation_count (data->page) !=
                                  data->nav_before);
  json_object_set_string_member (result, "url", uri != NULL ? uri : "");
  json_object_set_boolean_member (result, "settled", settled);
  json_object_set_string_member (result, "settleReason", reason);
  json_object_set_int_member (result, "settleMs", (now - data->acted) / 1000);
  json_object_set_int_member (result, "durationMs", (now - data->start) / 1000);
  if (data->set_files)
    {
      json_object_set_boolean_member (result, "filesSelected",
                                      _sight_web_page_take_file_chooser_answered (data->page));
      _sight_web_page_set_pending_files (data->page, NULL);
      data->set_files = FALSE;
    }
  g_task_return_pointer (task, json_object_ref (result), (GDestroyNotify) json_object_unref);
}

static gboolean settle_poll_cb (gpointer user_data);

static void
quiet_cb (GObject      *source,
          GAsyncResult *res,
          gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ActData *data = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = sight_web_page_evaluate_finish (SIGHT_WEB_PAGE (source), res, &error);

  data->quiet_pending = FALSE;
  if (node == NULL && g_error_matches (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  /* A navigation may have begun while the DOM was watched: settle again. */
  if (_sight_web_page_is_loading (data->page) &&
      remaining_ms (data) > 0)
    {
      data->poll_source = g_timeout_add (POLL_MS, settle_poll_cb, g_object_ref (task));
      return;
    }
  {
    const char *reason;
    gboolean settled = script_settled (node, &reason);

    /* the script settled after the page loaded or its requests ended */
    if (settled && data->reason != NULL)
      reason = data->reason;
    finish_settled (task, settled, reason);
  }
}

static gboolean
settle_poll_cb (gpointer user_data)
{
  GTask *task = user_data;
  ActData *data = g_task_get_task_data (task);
  gint64 since = (g_get_monotonic_time () - data->acted) / 1000;
  g_autoptr(JsonNode) args = NULL;
  g_autofree char *body = NULL;

  if (g_task_return_error_if_cancelled (task))
    {
      data->poll_source = 0;
      g_object_unref (task);
      return G_SOURCE_REMOVE;
    }
  if (remaining_ms (data) == 0)
    {
      data->poll_source = 0;
      finish_settled (task, FALSE, "timeout");
      g_object_unref (task);
      return G_SOURCE_REMOVE;
    }
  if (data->set_files)
    {
      /* The chooser request arrives after the click; the page's change
       * handler runs once it is answered. */
      if (_sight_web_page_take_file_chooser_answered (data->page))
        json_object_set_boolean_member (data->result, "filesSelected", TRUE);
      else if (since < 2000)
        return G_SOURCE_CONTINUE;
      else
        json_object_set_boolean_member (data->result, "filesSelected", FALSE);
      data->set_files = FALSE;
    }
  if (_sight_web_page_is_loading (data->page))
    data->reason = "load";
  else if (requests_started (data) > 0)
    data->reason = data->reason != NULL ? data->reason : "requests";
  if (since < GRACE_MS || _sight_web_page_is_loading (data->page) || requests_started (data) > 0)
    return G_SOURCE_CONTINUE;

  data->poll_source = 0;
  args = json_node_new (JSON_NODE_OBJECT);
  json_node_take_object (args, settle_args ());
  json_object_set_int_member (json_node_get_object (args), "timeout", remaining_ms (data));
  body = build_call ("quiet (args)", FALSE);
  data->quiet_pending = TRUE;
  sight_web_page_evaluate_async (data->page, body, args, remaining_ms (data) + 500,
                                 g_task_get_cancellable (task), quiet_cb, task);
  return G_SOURCE_REMOVE;
}

static void
acted_cb (GObject      *source,
          GAsyncResult *res,
          gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ActData *data = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = sight_web_page_evaluate_finish (SIGHT_WEB_PAGE (source), res, &error);
  JsonObject *object;
  JsonNode *settle_node;
  SightErrorCode code = SIGHT_ERROR_ACTION_FAILED;
  const char *reason = "timeout";
  gboolean settled = FALSE;

  data->acted = g_get_monotonic_time ();
  if (node == NULL)
    {
      /* A navigation can tear the document down under the script. */
      if (g_error_matches (error, SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED) &&
          _sight_web_page_get_navigation_count (data->page) != data->nav_before)
        {
          data->result = json_object_new ();
          json_object_set_boolean_member (data->result, "ok", TRUE);
          json_object_set_string_member (data->result, "action", data->type);
        }
      else
        {
          g_task_return_error (task, g_steal_pointer (&error));
          return;
        }
    }
  else if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_INTERNAL,
                               "The actions script returned no result");
      return;
    }
  else
    {
      object = json_node_get_object (node);
      if (!json_object_get_boolean_member_with_default (object, "ok", FALSE))
        {
          const char *name = json_object_get_string_member_with_default (object, "code",
                                                                         "ACTION_FAILED");
          g_autofree char *message =
            sight_text_sanitize (json_object_get_string_member_with_default (object, "message",
                                                                             "The action failed"),
                                 500);

          if (!sight_error_code_from_string (name, &code))
            code = SIGHT_ERROR_ACTION_FAILED;
          g_task_return_new_error (task, SIGHT_ERROR, code, "%s", message);
          return;
        }
      data->result = json_object_ref (object);
    }

  if (data->ref != NULL)
    json_object_set_string_member (data->result, "ref", data->ref);
  json_object_set_string_member (data->result, "action", data->type);
  json_object_set_string_member (data->result, "input",
                                 g_strv_contains ((const char * const[]) { "fill", "type", NULL },
                                                  data->type) ? "editor" : "synthetic");
  settle_node = json_object_get_member (data->result, "settle");
  if (settle_node != NULL && JSON_NODE_HOLDS_OBJECT (settle_node))
    {
      /* settleMs counts the script's own wait too */
      data->acted -= json_object_get_int_member_with_default (json_node_get_object (settle_node),
                                                              "waitedMs", 0) * 1000;
      settled = script_settled (settle_node, &reason);
    }
  /* The script saw the page done with the action: with no navigation and no
   * request the action started in flight, the page has settled. A page that
   * kept mutating is not waited for again. No grace is needed for a
   * navigation to show up: the script waited for a frame, and a navigation
   * or a window the action started asked for its policy before that, on the
   * connection the script's answer came by. */
  if (!data->set_files && !data->navigation_asked &&
      !_sight_web_page_is_loading (data->page) &&
      requests_started (data) == 0 &&
      _sight_web_page_get_navigation_count (data->page) == data->nav_before &&
      (settled || g_str_equal (reason, "mutating")))
    {
      finish_settled (task, settled, reason);
      return;
    }
  data->poll_source = g_timeout_add (POLL_MS, settle_poll_cb, g_object_ref (task));
}

static gboolean
navigation_asked_cb (WebKitWebView            *view,
                     WebKitPolicyDecision     *decision,
                     WebKitPolicyDecisionType  type,
                     ActData                  *data)
{
  if (type != WEBKIT_POLICY_DECISION_TYPE_RESPONSE)
    data->navigation_asked = TRUE;
  return FALSE;
}

static GTask *
act_task_new (SightWebPage        *self,
              const char          *ref,
              const char          *type,
              guint                timeout_ms,
              GCancellable        *cancellable,
              GAsyncReadyCallback  callback,
              gpointer             user_data,
              gpointer             source_tag)
{
  GTask *task = g_task_new (self, cancellable, callback, user_data);
  ActData *data = g_new0 (ActData, 1);

  g_task_set_source_tag (task, source_tag);
  data->page = g_object_ref (self);
  data->ref = g_strdup (ref);
  data->type = g_strdup (type);
  data->start = g_get_monotonic_time ();
  data->deadline = data->start + (gint64) MAX (timeout_ms, 100) * 1000;
  data->nav_before = _sight_web_page_get_navigation_count (self);
  data->popups_before = sight_web_page_get_popups (self)->len;
  data->requests_before = g_hash_table_new_full (NULL, NULL, g_object_unref, NULL);
  data->view = sight_web_page_get_web_view (self);
  if (data->view != NULL)
    data->policy_handler = g_signal_connect (g_object_ref (data->view), "decide-policy",
                                             G_CALLBACK (navigation_asked_cb), data);
  {
    GHashTableIter iter;
    gpointer resource;

    g_hash_table_iter_init (&iter, self->in_flight);
    while (g_hash_table_iter_next (&iter, &resource, NULL))
      g_hash_table_add (data->requests_before, g_object_ref (resource));
  }
  g_task_set_task_data (task, data, (GDestroyNotify) act_data_free);
  return task;
}

void
sight_web_page_perform_async (SightWebPage        *self,
                              const char          *ref,
                              JsonObject          *action,
                              guint                timeout_ms,
                              GCancellable        *cancellable,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(JsonNode) args = NULL;
  g_autofree char *body = NULL;
  JsonObject *object;
  const char *type;
  ActData *data;

  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));
  g_return_if_fail (action != NULL);

  type = json_object_get_string_member_with_default (action, "type", "");
  task = act_task_new (self, ref, type, timeout_ms, cancellable, callback, user_data,
                       sight_web_page_perform_async);
  data = g_task_get_task_data (task);

  if (ref == NULL && !g_str_equal (type, "scroll") && !g_str_equal (type, "press"))
    {
      g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                               "The action “%s” needs a ref", type);
      return;
    }
  if (g_str_equal (type, "setFiles"))
    {
      JsonArray *files = json_object_get_array_member (action, "files");
      g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);

      for (guint i = 0; files != NULL && i < json_array_get_length (files); i++)
        {
          const char *path = json_array_get_string_element (files, i);

          if (path == NULL || !g_file_test (path, G_FILE_TEST_IS_REGULAR))
            {
              g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                                       "No such file: %s", path != NULL ? path : "(null)");
              return;
            }
          g_ptr_array_add (paths, g_canonicalize_filename (path, NULL));
        }
      if (paths->len == 0)
        {
          g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                                   "setFiles needs at least one file");
          return;
        }
      g_ptr_array_add (paths, NULL);
      _sight_web_page_set_pending_files (self, (const char * const *) paths->pdata);
      data->set_files = TRUE;
    }

  args = json_node_new (JSON_NODE_OBJECT);
  object = json_object_new ();
  json_node_take_object (args, object);
  if (ref != NULL)
    json_object_set_string_member (object, "ref", ref);
  json_object_set_object_member (object, "action", json_object_ref (action));
  json_object_set_int_member (object, "timeout", remaining_ms (data));
  json_object_set_object_member (object, "settle", settle_args ());
  body = build_call ("perform (args)", TRUE);
  sight_web_page_evaluate_async (self, body, args, remaining_ms (data) + 1000, cancellable,
                                 acted_cb, g_steal_pointer (&task));
}

JsonObject *
sight_web_page_perform_finish (SightWebPage  *self,
                               GAsyncResult  *result,
                               GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

void
sight_web_page_tap_at_async (SightWebPage        *self,
                             double               x,
                             double               y,
                             guint                timeout_ms,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(JsonNode) args = NULL;
  g_autofree char *body = NULL;
  JsonObject *object;
  ActData *data;

  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));

  task = act_task_new (self, NULL, "tapAt", timeout_ms, cancellable, callback, user_data,
                       sight_web_page_tap_at_async);
  data = g_task_get_task_data (task);
  args = json_node_new (JSON_NODE_OBJECT);
  object = json_object_new ();
  json_node_take_object (args, object);
  json_object_set_double_member (object, "x", x);
  json_object_set_double_member (object, "y", y);
  json_object_set_int_member (object, "timeout", remaining_ms (data));
  json_object_set_object_member (object, "settle", settle_args ());
  body = build_call ("tapAt (args)", TRUE);
  sight_web_page_evaluate_async (self, body, args, remaining_ms (data) + 1000, cancellable,
                                 acted_cb, g_steal_pointer (&task));
}

JsonObject *
sight_web_page_tap_at_finish (SightWebPage  *self,
                              GAsyncResult  *result,
                              GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
action_performed_cb (GObject      *source,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  JsonObject *reply;

  if (g_task_get_source_tag (G_TASK (result)) == sight_web_page_tap_at_async)
    reply = sight_web_page_tap_at_finish (SIGHT_WEB_PAGE (source), result, &error);
  else
    reply = sight_web_page_perform_finish (SIGHT_WEB_PAGE (source), result, &error);
  if (reply == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, reply, (GDestroyNotify) json_object_unref);
}

void
sight_web_page_perform_action_async (SightWebPage        *self,
                                     const SightAction   *action,
                                     guint                timeout_ms,
                                     GCancellable        *cancellable,
                                     GAsyncReadyCallback  callback,
                                     gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(JsonObject) engine = NULL;

  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));
  g_return_if_fail (action != NULL);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_web_page_perform_action_async);
  if (action->kind == SIGHT_ACTION_TAP_AT && action->ref == NULL)
    {
      sight_web_page_tap_at_async (self, action->x, action->y, timeout_ms, cancellable,
                                   action_performed_cb, g_steal_pointer (&task));
      return;
    }
  engine = sight_action_to_engine (action);
  if (engine == NULL)
    {
      g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                               "“%s” is not an action on the page",
                               sight_action_kind_to_nick (action->kind));
      return;
    }
  sight_web_page_perform_async (self, action->ref, engine, timeout_ms, cancellable,
                                action_performed_cb, g_steal_pointer (&task));
}

JsonObject *
sight_web_page_perform_action_finish (SightWebPage  *self,
                                      GAsyncResult  *result,
                                      GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* Pixel-aware settling */

typedef struct {
  char   *first;      /* the frame when the wait began: the DOM was quiet */
  gint64  start;      /* monotonic µs */
  gint64  deadline;
  guint   still_ms;   /* frames agreeing this long end the wait */
  guint   source;
} PixelSettle;

static void
pixel_settle_free (PixelSettle *settle)
{
  g_clear_handle_id (&settle->source, g_source_remove);
  g_free (settle->first);
  g_free (settle);
}

static void frame_cb (GObject      *source,
                      GAsyncResult *result,
                      gpointer      user_data);

static gboolean
next_frame_cb (gpointer user_data)
{
  GTask *task = user_data;
  PixelSettle *settle = g_task_get_task_data (task);

  settle->source = 0;
  _sight_web_page_frame_digest_async (g_task_get_source_object (task),
                                      g_task_get_cancellable (task), frame_cb, task);
  return G_SOURCE_REMOVE;
}

static void
frame_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  GTask *task = user_data;
  PixelSettle *settle = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autofree char *digest = NULL;
  gint64 now = g_get_monotonic_time ();

  digest = _sight_web_page_frame_digest_finish (SIGHT_WEB_PAGE (source), result, &error);
  if (digest == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      g_object_unref (task);
      return;
    }
  if (settle->first == NULL)
    settle->first = g_steal_pointer (&digest);
  else if (!g_str_equal (settle->first, digest))
    {
      /* The screen changed after the DOM went quiet: read it now. */
      g_task_return_int (task, TRUE);
      g_object_unref (task);
      return;
    }
  if (now - settle->start >= (gint64) settle->still_ms * 1000 || now >= settle->deadline)
    {
      g_task_return_int (task, FALSE);
      g_object_unref (task);
      return;
    }
  settle->source = g_timeout_add (MIN (FRAME_POLL_MS, (settle->deadline - now) / 1000 + 1),
                                  next_frame_cb, task);
}

void
sight_web_page_settle_pixels_async (SightWebPage        *self,
                                    guint                timeout_ms,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  GTask *task;
  PixelSettle *settle;
  gsize signaled;

  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_web_page_settle_pixels_async);
  settle = g_new0 (PixelSettle, 1);
  settle->start = g_get_monotonic_time ();
  settle->deadline = settle->start + (gint64) MAX (timeout_ms, 1) * 1000;
  /* Right after an action the signals saw done, only what they cannot see is
   * left (a redraw by a long timer or an animation frame): it shows in the
   * next frame or keeps changing them. */
  signaled = GPOINTER_TO_SIZE (g_object_get_qdata (G_OBJECT (self), signaled_quark ()));
  settle->still_ms = signaled != 0 && settle->start - (gint64) signaled < G_USEC_PER_SEC
                     ? FRAME_STILL_SIGNALED_MS : FRAME_STILL_MS;
  g_task_set_task_data (task, settle, (GDestroyNotify) pixel_settle_free);
  _sight_web_page_frame_digest_async (self, cancellable, frame_cb, task);
}

gboolean
sight_web_page_settle_pixels_finish (SightWebPage  *self,
                                     GAsyncResult  *result,
                                     gboolean      *out_changed,
                                     GError       **error)
{
  g_autoptr(GError) local_error = NULL;
  gssize changed;

  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  changed = g_task_propagate_int (G_TASK (result), &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  if (out_changed != NULL)
    *out_changed = changed != 0;
  return TRUE;
}

static void
history_loaded_cb (GObject      *source,
                   GAsyncResult *res,
                   gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;

  if (!sight_web_page_load_finish (SIGHT_WEB_PAGE (source), res, &error))
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

void
sight_web_page_history_async (SightWebPage        *self,
                              SightHistoryAction   action,
                              guint                timeout_ms,
                              GCancellable        *cancellable,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  WebKitWebView *view;

  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_web_page_history_async);
  view = sight_web_page_get_web_view (self);
  if ((action == SIGHT_HISTORY_BACK && !webkit_web_view_can_go_back (view)) ||
      (action == SIGHT_HISTORY_FORWARD && !webkit_web_view_can_go_forward (view)))
    {
      g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED,
                               "There is no page to go %s to",
                               sight_enum_to_nick (SIGHT_TYPE_HISTORY_ACTION, action));
      return;
    }
  _sight_web_page_wait_for_navigation_async (self, SIGHT_WAIT_UNTIL_LOAD, timeout_ms, cancellable,
                                             history_loaded_cb, g_steal_pointer (&task));
  switch (action)
    {
    case SIGHT_HISTORY_BACK:
      webkit_web_view_go_back (view);
      break;
    case SIGHT_HISTORY_FORWARD:
      webkit_web_view_go_forward (view);
      break;
    case SIGHT_HISTORY_RELOAD:
    default:
      webkit_web_view_reload (view);
      break;
    }
}

gboolean
sight_web_page_history_finish (SightWebPage  *self,
                               GAsyncResult  *result,
                               GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}
