/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-session"

#include "config.h"

#include "sight-session.h"

#include <unistd.h>

#include "sight-error.h"
#include "sight-page-guard.h"
#include "sight-run-video.h"
#include "sight-session-agent.h"
#include "sight-tool-args.h"

#define MIN_TIMEOUT_MS G_GINT64_CONSTANT (10000)
#define MAX_TIMEOUT_MS G_GINT64_CONSTANT (86400000)
#define DEFAULT_IDLE_MS G_GINT64_CONSTANT (300000)
#define DEFAULT_MAX_DURATION_MS G_GINT64_CONSTANT (3600000)
#define LOAD_TIMEOUT_MS 30000
/* Ended sessions the registry still answers for (get_session, a repeated
 * stop_session, list_sessions' 200): their records, not their pages. */
#define MAX_ENDED_SESSIONS 200

static const char * const create_args[] = {
  "startUrl", "device", "viewport", "record", "headers", "credentials", "proxyUrl",
  "allowHosts", "idleTimeoutMs", "maxDurationMs", "engineId", "engineVersion",
  "waitForCapacityMs", "queueForCapacity", NULL
};

typedef struct {
  const char *name;
  int         width;
  int         height;
  double      scale;
  gboolean    mobile;
} Device;

static const Device devices[] = {
  { "desktop", 1280, 720, 1.0, FALSE },
  { "laptop", 1440, 900, 1.0, FALSE },
  { "tablet", 820, 1180, 2.0, TRUE },
  { "mobile", 390, 844, 3.0, TRUE },
  { "pixel-7", 412, 915, 2.625, TRUE },
  { "iphone-15", 393, 852, 3.0, TRUE },
};

struct _SightSession
{
  GObject parent_instance;

  char               *id;
  SightSessionStatus  status;
  SightWebPage       *page;
  char               *start_url;
  char               *device;
  int                 width;
  int                 height;
  double              scale;
  gboolean            mobile;
  gboolean            record;
  char              **allow_hosts;
  GDateTime          *created_at;
  GDateTime          *ended_at;
  char               *end_reason;
  gint64              idle_ms;
  gint64              max_duration_ms;
  guint               idle_id;
  guint               max_duration_id;
  SightVideoRecorder *video;       /* with record */
  char               *video_path;  /* once the recording is complete */
  char               *video_error; /* or why it is not */
};

G_DEFINE_FINAL_TYPE (SightSession, sight_session, G_TYPE_OBJECT)

struct _SightSessionRegistry
{
  GObject    parent_instance;

  GPtrArray *sessions;   /* SightSession, oldest first */
  guint      max_live;
  GQueue    *waiting;    /* Waiting: creates held until a session ends */
  guint      freed_source;
};

/* A create_session waiting for a live session to end (waitForCapacityMs,
 * queueForCapacity). */
typedef struct {
  SightSessionRegistry *registry;
  GTask                *task;
  SightSession         *session;   /* validated, not opened */
  JsonObject           *args;
  char                **allow_hosts;
  gint64                wait_ms;
  guint                 timeout_source;
  GCancellable         *cancellable;
  gulong                cancelled_id;
} Waiting;

G_DEFINE_FINAL_TYPE (SightSessionRegistry, sight_session_registry, G_TYPE_OBJECT)

enum {
  SESSION_ADDED,
  SESSION_CLOSED,
  N_SIGNALS
};

static guint registry_signals[N_SIGNALS];

static void _sight_session_registry_capacity_freed (SightSessionRegistry *self);

char *
sight_new_id (const char *prefix)
{
  static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  GString *id = g_string_new (prefix);

  for (int i = 0; i < 24; i++)
    g_string_append_c (id, alphabet[g_random_int_range (0, sizeof alphabet - 1)]);
  return g_string_free (id, FALSE);
}

static void
sight_session_dispose (GObject *object)
{
  SightSession *self = SIGHT_SESSION (object);

  g_clear_handle_id (&self->idle_id, g_source_remove);
  g_clear_handle_id (&self->max_duration_id, g_source_remove);
  g_clear_object (&self->video);
  g_clear_object (&self->page);

  G_OBJECT_CLASS (sight_session_parent_class)->dispose (object);
}

static void
sight_session_finalize (GObject *object)
{
  SightSession *self = SIGHT_SESSION (object);

  g_free (self->id);
  g_free (self->start_url);
  g_free (self->device);
  g_strfreev (self->allow_hosts);
  g_clear_pointer (&self->created_at, g_date_time_unref);
  g_clear_pointer (&self->ended_at, g_date_time_unref);
  g_free (self->end_reason);
  g_free (self->video_path);
  g_free (self->video_error);

  G_OBJECT_CLASS (sight_session_parent_class)->finalize (object);
}

static void
sight_session_class_init (SightSessionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = sight_session_dispose;
  object_class->finalize = sight_session_finalize;
}

static void
sight_session_init (SightSession *self)
{
}

const char *
sight_session_get_id (SightSession *self)
{
  return self->id;
}

SightSessionStatus
sight_session_get_status (SightSession *self)
{
  return self->status;
}

SightWebPage *
sight_session_get_page (SightSession *self)
{
  return self->page;
}

SightVideoRecorder *
sight_session_get_video (SightSession *self)
{
  g_return_val_if_fail (SIGHT_IS_SESSION (self), NULL);
  return self->video;
}

static void
video_finished_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  g_autoptr(SightSession) self = user_data;
  g_autoptr(GError) error = NULL;

  self->video_path = sight_video_recorder_finish_finish (SIGHT_VIDEO_RECORDER (source), result,
                                                         &error);
  if (self->video_path == NULL)
    {
      self->video_error = g_strdup (error->message);
      g_message ("Session %s: %s", self->id, error->message);
    }
}

/* A stopped session's page whose recording took its last frame of it. */
static void
recorded_page_done_cb (GObject      *source,
                       GAsyncResult *result,
                       gpointer      user_data)
{
  g_autoptr(SightWebPage) page = user_data;
  g_autofree char *path = sight_video_recorder_finish_finish (SIGHT_VIDEO_RECORDER (source),
                                                              result, NULL);

  sight_web_page_terminate_web_process (page, "The session was stopped");
}

static gboolean
idle_timeout_cb (gpointer user_data)
{
  SightSession *self = user_data;

  self->idle_id = 0;
  sight_session_stop (self, "idle");
  return G_SOURCE_REMOVE;
}

static gboolean
max_duration_cb (gpointer user_data)
{
  SightSession *self = user_data;

  self->max_duration_id = 0;
  sight_session_stop (self, "maxDuration");
  return G_SOURCE_REMOVE;
}

void
sight_session_touch (SightSession *self)
{
  g_return_if_fail (SIGHT_IS_SESSION (self));

  if (self->status != SIGHT_SESSION_LIVE)
    return;
  g_clear_handle_id (&self->idle_id, g_source_remove);
  self->idle_id = g_timeout_add (self->idle_ms, idle_timeout_cb, self);
}

gboolean
sight_session_stop (SightSession *self,
                    const char   *reason)
{
  g_return_val_if_fail (SIGHT_IS_SESSION (self), FALSE);

  if (self->status != SIGHT_SESSION_LIVE)
    return FALSE;
  self->status = SIGHT_SESSION_CLOSED;
  self->ended_at = g_date_time_new_now_utc ();
  self->end_reason = g_strdup (reason);
  g_clear_handle_id (&self->idle_id, g_source_remove);
  g_clear_handle_id (&self->max_duration_id, g_source_remove);
  /* The recording ends with the session; whoever links it waits for the
   * same end (sight_video_recorder_finish_async() again). */
  if (self->video != NULL)
    sight_video_recorder_finish_async (self->video, NULL, video_finished_cb, g_object_ref (self));
  if (self->page != NULL)
    webkit_web_view_stop_loading (sight_web_page_get_web_view (self->page));
  /* Listeners store the page's log and stop showing it while it is there. */
  g_signal_emit (sight_session_registry_get_default (), registry_signals[SESSION_CLOSED], 0, self);

  /* Then the page and its web process go: a step still running on it is
   * stopped, and whoever still holds the page finds it without a process.
   * A recording's last frame is of the page as it ends: with one, the web
   * process goes once the recording is complete (its finish has a
   * deadline), so that frame is not lost, nor the whole video when it
   * would be the first. */
  _sight_session_drop_agent (self);
  if (self->page != NULL)
    {
      g_autoptr(SightWebPage) page = g_steal_pointer (&self->page);

      if (self->video != NULL)
        sight_video_recorder_finish_async (self->video, NULL, recorded_page_done_cb,
                                           g_steal_pointer (&page));
      else
        sight_web_page_terminate_web_process (page, "The session was stopped");
    }
  _sight_session_registry_capacity_freed (sight_session_registry_get_default ());
  return TRUE;
}

static char *
iso_time (GDateTime *time)
{
  return time ? g_date_time_format (time, "%Y-%m-%dT%H:%M:%S.%fZ") : NULL;
}

JsonNode *
sight_session_to_json (SightSession *self)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autofree char *created = iso_time (self->created_at);
  g_autofree char *ended = iso_time (self->ended_at);
  const char *title = NULL;

  if (self->page != NULL)
    title = webkit_web_view_get_title (sight_web_page_get_web_view (self->page));

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "id");
  json_builder_add_string_value (b, self->id);
  json_builder_set_member_name (b, "status");
  json_builder_add_string_value (b, self->status == SIGHT_SESSION_LIVE ? "live" : "closed");
  json_builder_set_member_name (b, "engine");
  json_builder_add_string_value (b, "webkit");
  json_builder_set_member_name (b, "createdAt");
  json_builder_add_string_value (b, created);
  json_builder_set_member_name (b, "endedAt");
  if (ended)
    json_builder_add_string_value (b, ended);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "endReason");
  if (self->end_reason)
    json_builder_add_string_value (b, self->end_reason);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "title");
  json_builder_add_string_value (b, title ? title : "");
  if (self->start_url != NULL)
    {
      json_builder_set_member_name (b, "startUrl");
      json_builder_add_string_value (b, self->start_url);
    }
  if (self->status == SIGHT_SESSION_LIVE && self->page != NULL)
    {
      const char *uri = sight_web_page_get_uri (self->page);

      json_builder_set_member_name (b, "url");
      json_builder_add_string_value (b, uri ? uri : "about:blank");
    }
  json_builder_set_member_name (b, "device");
  json_builder_add_string_value (b, self->device);
  json_builder_set_member_name (b, "viewport");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "width");
  json_builder_add_int_value (b, self->width);
  json_builder_set_member_name (b, "height");
  json_builder_add_int_value (b, self->height);
  json_builder_set_member_name (b, "deviceScaleFactor");
  json_builder_add_double_value (b, self->scale);
  json_builder_set_member_name (b, "mobile");
  json_builder_add_boolean_value (b, self->mobile);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "idleTimeoutMs");
  json_builder_add_int_value (b, self->idle_ms);
  json_builder_set_member_name (b, "maxDurationMs");
  json_builder_add_int_value (b, self->max_duration_ms);
  json_builder_set_member_name (b, "record");
  json_builder_add_boolean_value (b, self->record);
  if (self->video != NULL)
    {
      /* The path only once the file is complete. */
      json_builder_set_member_name (b, "recording");
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "status");
      json_builder_add_string_value (b, self->video_path != NULL ? "kept"
                                        : self->video_error != NULL ? "failed"
                                        : "recording");
      json_builder_set_member_name (b, "frames");
      json_builder_add_int_value (b, sight_video_recorder_get_n_frames (self->video));
      if (self->video_path != NULL)
        {
          json_builder_set_member_name (b, "path");
          json_builder_add_string_value (b, self->video_path);
        }
      if (self->video_error != NULL)
        {
          json_builder_set_member_name (b, "error");
          json_builder_add_string_value (b, self->video_error);
        }
      json_builder_end_object (b);
    }
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

/* The registry */

static void
sight_session_registry_finalize (GObject *object)
{
  SightSessionRegistry *self = SIGHT_SESSION_REGISTRY (object);

  g_clear_pointer (&self->sessions, g_ptr_array_unref);
  G_OBJECT_CLASS (sight_session_registry_parent_class)->finalize (object);
}

static void
sight_session_registry_class_init (SightSessionRegistryClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = sight_session_registry_finalize;

  registry_signals[SESSION_ADDED] =
    g_signal_new ("session-added", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                  NULL, G_TYPE_NONE, 1, SIGHT_TYPE_SESSION);
  registry_signals[SESSION_CLOSED] =
    g_signal_new ("session-closed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                  NULL, G_TYPE_NONE, 1, SIGHT_TYPE_SESSION);
}

/* By default one live session per 512 MiB of memory and at most four per
 * core (a web process each, a few hundred MB resident when busy), at least
 * two; SIGHTLINE_MAX_SESSIONS (1–1000) sets it. */
static guint
default_max_live (void)
{
  const char *env = g_getenv ("SIGHTLINE_MAX_SESSIONS");
  long pages = sysconf (_SC_PHYS_PAGES);
  long page_size = sysconf (_SC_PAGESIZE);
  guint64 by_memory = pages > 0 && page_size > 0
                        ? (guint64) pages * (guint64) page_size / (512 * 1024 * 1024) : 2;
  guint64 n;

  if (env != NULL && g_ascii_string_to_unsigned (env, 10, 1, 1000, &n, NULL))
    return (guint) n;
  return (guint) CLAMP (MIN (by_memory, (guint64) 4 * g_get_num_processors ()), 2, 1000);
}

static void
sight_session_registry_init (SightSessionRegistry *self)
{
  self->sessions = g_ptr_array_new_with_free_func (g_object_unref);
  self->max_live = default_max_live ();
  self->waiting = g_queue_new ();
}

void
sight_session_registry_set_max_live (SightSessionRegistry *self,
                                     guint                 max_live)
{
  g_return_if_fail (SIGHT_IS_SESSION_REGISTRY (self));
  g_return_if_fail (max_live > 0);
  self->max_live = max_live;
  _sight_session_registry_capacity_freed (self);
}

guint
sight_session_registry_get_max_live (SightSessionRegistry *self)
{
  g_return_val_if_fail (SIGHT_IS_SESSION_REGISTRY (self), 0);
  return self->max_live;
}

guint
sight_session_registry_count_live (SightSessionRegistry *self)
{
  guint n = 0;

  g_return_val_if_fail (SIGHT_IS_SESSION_REGISTRY (self), 0);
  for (guint i = 0; i < self->sessions->len; i++)
    if (((SightSession *) g_ptr_array_index (self->sessions, i))->status == SIGHT_SESSION_LIVE)
      n++;
  return n;
}

SightSessionRegistry *
sight_session_registry_get_default (void)
{
  static SightSessionRegistry *registry;

  if (g_once_init_enter (&registry))
    g_once_init_leave (&registry, g_object_new (SIGHT_TYPE_SESSION_REGISTRY, NULL));
  return registry;
}

SightSession *
sight_session_registry_lookup (SightSessionRegistry *self,
                               const char           *id)
{
  if (id == NULL)
    return NULL;
  for (guint i = 0; i < self->sessions->len; i++)
    {
      SightSession *session = g_ptr_array_index (self->sessions, i);

      if (g_str_equal (session->id, id))
        return session;
    }
  return NULL;
}

GPtrArray *
sight_session_registry_list (SightSessionRegistry *self,
                             guint                 limit)
{
  GPtrArray *list = g_ptr_array_new_with_free_func (g_object_unref);

  for (guint i = self->sessions->len; i > 0 && list->len < limit; i--)
    g_ptr_array_add (list, g_object_ref (g_ptr_array_index (self->sessions, i - 1)));
  return list;
}

/* Keeps the records of the newest MAX_ENDED_SESSIONS ended sessions. */
static void
forget_ended (SightSessionRegistry *self)
{
  guint ended = 0;

  for (guint i = self->sessions->len; i > 0; i--)
    {
      SightSession *session = g_ptr_array_index (self->sessions, i - 1);

      if (session->status == SIGHT_SESSION_LIVE)
        continue;
      if (++ended > MAX_ENDED_SESSIONS)
        g_ptr_array_remove_index (self->sessions, i - 1);
    }
}

static gboolean
parse_viewport (SightSession  *session,
                JsonObject    *args,
                GError       **error)
{
  const char *device = NULL;
  JsonNode *node;
  const Device *preset = &devices[0];

  if (!sight_tool_args_get_string (args, "device", 64, &device, error))
    return FALSE;
  if (device != NULL)
    {
      preset = NULL;
      for (guint i = 0; i < G_N_ELEMENTS (devices); i++)
        if (g_ascii_strcasecmp (devices[i].name, device) == 0)
          preset = &devices[i];
      if (preset == NULL)
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "device: must be desktop, mobile or one of laptop, tablet, pixel-7, "
                       "iphone-15");
          return FALSE;
        }
    }
  session->device = g_strdup (preset->name);
  session->width = preset->width;
  session->height = preset->height;
  session->scale = preset->scale;
  session->mobile = preset->mobile;

  node = json_object_get_member (args, "viewport");
  if (node != NULL && !JSON_NODE_HOLDS_NULL (node))
    {
      JsonObject *viewport;
      gint64 width, height;
      static const char * const known[] = { "width", "height", "deviceScaleFactor", "mobile",
                                            NULL };
      JsonNode *scale;

      if (!JSON_NODE_HOLDS_OBJECT (node))
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "viewport: must be an object with width and height");
          return FALSE;
        }
      viewport = json_node_get_object (node);
      if (!sight_tool_args_check_known (viewport, known, error) ||
          !sight_tool_args_get_int (viewport, "width", -1, 200, 7680, &width, error) ||
          !sight_tool_args_get_int (viewport, "height", -1, 200, 4320, &height, error) ||
          !sight_tool_args_get_bool (viewport, "mobile", session->mobile, &session->mobile, error))
        {
          g_prefix_error (error, "viewport.");
          return FALSE;
        }
      if (width < 0 || height < 0)
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "viewport: width (200 to 7680) and height (200 to 4320) are required");
          return FALSE;
        }
      session->width = width;
      session->height = height;
      scale = json_object_get_member (viewport, "deviceScaleFactor");
      if (scale != NULL && !JSON_NODE_HOLDS_NULL (scale))
        {
          double value = JSON_NODE_HOLDS_VALUE (scale) &&
                         (json_node_get_value_type (scale) == G_TYPE_DOUBLE ||
                          json_node_get_value_type (scale) == G_TYPE_INT64)
                           ? json_node_get_double (scale) : -1;

          if (json_node_get_value_type (scale) == G_TYPE_INT64)
            value = json_node_get_int (scale);
          if (!(value >= 0.5 && value <= 4))
            {
              g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                           "viewport.deviceScaleFactor: must be a number from 0.5 to 4");
              return FALSE;
            }
          session->scale = value;
        }
    }
  return TRUE;
}

static gboolean
refuse_unsupported (JsonObject  *args,
                    GError     **error)
{
  JsonNode *node;
  gboolean credentials = FALSE;
  const char *engine = NULL;
  gint64 wait_ms, engine_version;

  if (json_object_has_member (args, "url"))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "url: not an argument of create_session; use startUrl");
      return FALSE;
    }
  /* Extra headers per host need request rewriting in the web process, which
   * this build does not do: say so rather than drop them. */
  node = json_object_get_member (args, "headers");
  if (node != NULL && JSON_NODE_HOLDS_ARRAY (node) &&
      json_array_get_length (json_node_get_array (node)) > 20)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "headers: at most 20 entries");
      return FALSE;
    }
  if (node != NULL && !JSON_NODE_HOLDS_NULL (node) &&
      !(JSON_NODE_HOLDS_ARRAY (node) && json_array_get_length (json_node_get_array (node)) == 0))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_UNSUPPORTED_CAPABILITY,
                   "headers: extra request headers are not supported yet");
      return FALSE;
    }
  node = json_object_get_member (args, "credentials");
  if (node != NULL && JSON_NODE_HOLDS_OBJECT (node))
    credentials = TRUE;
  else if (!sight_tool_args_get_bool (args, "credentials", FALSE, &credentials, error))
    return FALSE;
  if (credentials)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_UNSUPPORTED_CAPABILITY,
                   "credentials: sessions do not fill login forms from the vault; pass a "
                   "Secret in an act step's params instead");
      return FALSE;
    }
  if (!sight_tool_args_get_string (args, "engineId", 64, &engine, error) ||
      !sight_tool_args_get_int (args, "engineVersion", 0, 1, G_MAXINT32, &engine_version, error) ||
      !sight_tool_args_get_int (args, "waitForCapacityMs", 0, 0, 30000, &wait_ms, error))
    return FALSE;
  if (engine != NULL && !g_str_equal (engine, "webkit"))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "engineId: this Sightline has one engine, webkit");
      return FALSE;
    }
  if (json_object_has_member (args, "engineVersion") && engine == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "engineVersion: needs engineId");
      return FALSE;
    }
  node = json_object_get_member (args, "queueForCapacity");
  if (node != NULL && !JSON_NODE_HOLDS_NULL (node))
    {
      static const char * const known[] = { "maxWaitSeconds", NULL };
      gint64 seconds;

      if (!JSON_NODE_HOLDS_OBJECT (node) ||
          !sight_tool_args_check_known (json_node_get_object (node), known, error) ||
          !sight_tool_args_get_int (json_node_get_object (node), "maxWaitSeconds", 1, 1, 900,
                                    &seconds, error))
        {
          if (error != NULL && *error == NULL)
            g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                         "queueForCapacity: must be { \"maxWaitSeconds\": 1 to 900 }");
          else
            g_prefix_error (error, "queueForCapacity.");
          return FALSE;
        }
      if (wait_ms > 0)
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "queueForCapacity: not together with waitForCapacityMs above 0");
          return FALSE;
        }
    }
  return TRUE;
}

static void
start_loaded_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  SightSession *session = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;

  if (!sight_web_page_load_finish (SIGHT_WEB_PAGE (source), result, &error))
    {
      sight_session_stop (session, "error");
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  g_task_return_pointer (task, g_object_ref (session), g_object_unref);
}

static const char *
string_member (JsonObject *args,
               const char *name)
{
  JsonNode *node = json_object_get_member (args, name);

  return node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
         json_node_get_value_type (node) == G_TYPE_STRING ? json_node_get_string (node) : NULL;
}

/* A session that could not open: @task (taken) fails with @error (taken). */
static void
open_failed (GTask        *task,
             SightSession *session,
             GError       *error)
{
  g_clear_object (&session->page);
  session->status = SIGHT_SESSION_CLOSED;
  g_task_return_error (task, error);
  g_object_unref (task);
  g_object_unref (session);
}

/* Opens @session (validated from @args): its page, timers, recording and
 * start URL. */
static void
open_session (SightSessionRegistry *self,
              GTask                *task,
              SightSession         *session,
              JsonObject           *args,
              char                **allow_hosts)
{
  g_autoptr(GError) error = NULL;
  const char *start_url = string_member (args, "startUrl");
  const char *proxy_url = string_member (args, "proxyUrl");

  session->id = sight_new_id ("sess_");
  session->status = SIGHT_SESSION_LIVE;
  session->created_at = g_date_time_new_now_utc ();
  session->start_url = g_strdup (start_url);
  session->page = sight_web_page_new ();
  sight_web_page_set_viewport (session->page, session->width, session->height, session->scale);
  if (session->mobile)
    webkit_settings_set_user_agent_with_application_details (
      webkit_web_view_get_settings (sight_web_page_get_web_view (session->page)),
      "Mobile Sightline", PACKAGE_VERSION);
  if (proxy_url != NULL)
    {
      WebKitNetworkProxySettings *proxy = webkit_network_proxy_settings_new (proxy_url, NULL);

      webkit_network_session_set_proxy_settings (
        webkit_web_view_get_network_session (sight_web_page_get_web_view (session->page)),
        WEBKIT_NETWORK_PROXY_MODE_CUSTOM,
        proxy);
      webkit_network_proxy_settings_free (proxy);
    }
  if (allow_hosts[0] != NULL)
    {
      for (char **h = allow_hosts; *h != NULL; h++)
        {
          char *lower = g_ascii_strdown (*h, -1);

          g_free (*h);
          *h = lower;
        }
      session->allow_hosts = g_steal_pointer (&allow_hosts);
    }
  g_strfreev (allow_hosts);
  if (!sight_page_guard (session->page, NULL, start_url,
                         (const char * const *) session->allow_hosts, &error))
    {
      open_failed (task, session, g_steal_pointer (&error));
      return;
    }

  if (session->record)
    {
      g_autofree char *path = sight_run_video_session_path (session->id);

      session->video = sight_video_recorder_new (session->page, path, &error);
      if (session->video == NULL)
        {
          open_failed (task, session, g_steal_pointer (&error));
          return;
        }
    }
  session->max_duration_id = g_timeout_add (session->max_duration_ms, max_duration_cb, session);
  sight_session_touch (session);

  forget_ended (self);
  g_ptr_array_add (self->sessions, g_object_ref (session));
  g_signal_emit (self, registry_signals[SESSION_ADDED], 0, session);

  g_task_set_task_data (task, g_object_ref (session), g_object_unref);
  if (start_url == NULL)
    {
      g_task_return_pointer (task, session, g_object_unref);
      g_object_unref (task);
      return;
    }
  sight_web_page_load_async (session->page, start_url, SIGHT_WAIT_UNTIL_LOAD, LOAD_TIMEOUT_MS,
                             g_task_get_cancellable (task), start_loaded_cb, task);
  g_object_unref (session);
}

/* Capacity: past max_live, a create waits for a session to end as long as
 * its waitForCapacityMs or queueForCapacity.maxWaitSeconds say, then fails
 * with G_IO_ERROR_BUSY (the spec's capacity_exceeded). */

static gint64
capacity_wait_ms (JsonObject *args)
{
  JsonNode *wait = json_object_get_member (args, "waitForCapacityMs");
  JsonNode *queue = json_object_get_member (args, "queueForCapacity");

  if (queue != NULL && JSON_NODE_HOLDS_OBJECT (queue))
    return json_object_get_int_member_with_default (json_node_get_object (queue),
                                                    "maxWaitSeconds", 1) * 1000;
  if (wait != NULL && JSON_NODE_HOLDS_VALUE (wait))
    return json_node_get_int (wait);
  return 0;
}

static void
return_busy (SightSessionRegistry *self,
             GTask                *task,
             gint64                waited_ms)
{
  if (waited_ms > 0)
    g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_BUSY,
                             "Every browser is busy: %u sessions are live, the limit, and none "
                             "ended within %" G_GINT64_FORMAT " ms; stop one (stop_session) or "
                             "retry later", self->max_live, waited_ms);
  else
    g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_BUSY,
                             "Every browser is busy: %u sessions are live, the limit; stop one "
                             "(stop_session), retry later, or wait with waitForCapacityMs",
                             self->max_live);
}

static void
waiting_free (Waiting *waiting)
{
  g_clear_handle_id (&waiting->timeout_source, g_source_remove);
  if (waiting->cancelled_id != 0)
    g_signal_handler_disconnect (waiting->cancellable, waiting->cancelled_id);
  g_clear_object (&waiting->cancellable);
  g_clear_object (&waiting->task);
  g_clear_object (&waiting->session);
  g_clear_pointer (&waiting->args, json_object_unref);
  g_strfreev (waiting->allow_hosts);
  g_free (waiting);
}

static gboolean
waiting_timeout_cb (gpointer data)
{
  Waiting *waiting = data;

  waiting->timeout_source = 0;
  g_queue_remove (waiting->registry->waiting, waiting);
  if (!g_task_return_error_if_cancelled (waiting->task))
    return_busy (waiting->registry, waiting->task, waiting->wait_ms);
  waiting_free (waiting);
  return G_SOURCE_REMOVE;
}

static gboolean
capacity_freed_cb (gpointer data)
{
  SightSessionRegistry *self = data;

  self->freed_source = 0;
  while (!g_queue_is_empty (self->waiting) &&
         sight_session_registry_count_live (self) < self->max_live)
    {
      Waiting *waiting = g_queue_pop_head (self->waiting);

      if (!g_task_return_error_if_cancelled (waiting->task))
        open_session (self, g_steal_pointer (&waiting->task), g_steal_pointer (&waiting->session),
                      waiting->args, g_steal_pointer (&waiting->allow_hosts));
      waiting_free (waiting);
    }
  return G_SOURCE_REMOVE;
}

/* Also when a waiting create is cancelled: the queue is looked at again. */
static void
_sight_session_registry_capacity_freed (SightSessionRegistry *self)
{
  if (self->freed_source == 0 && !g_queue_is_empty (self->waiting))
    self->freed_source = g_idle_add (capacity_freed_cb, self);
}

static void
waiting_cancelled_cb (GCancellable *cancellable,
                      Waiting      *waiting)
{
  /* Ends from the queue's idle, never inside the cancel handler. */
  g_clear_handle_id (&waiting->timeout_source, g_source_remove);
  waiting->timeout_source = g_idle_add (waiting_timeout_cb, waiting);
}

void
sight_session_registry_create_async (SightSessionRegistry *self,
                                     JsonObject           *args,
                                     GCancellable         *cancellable,
                                     GAsyncReadyCallback   callback,
                                     gpointer              user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  g_autoptr(SightSession) session = g_object_new (SIGHT_TYPE_SESSION, NULL);
  g_autoptr(JsonObject) empty = json_object_new ();
  g_autoptr(GError) error = NULL;
  const char *start_url, *proxy_url;
  g_auto(GStrv) allow_hosts = NULL;
  static const char * const none[] = { NULL };
  gint64 wait_ms;

  g_task_set_source_tag (task, sight_session_registry_create_async);
  if (args == NULL)
    args = empty;

  if (!sight_tool_args_check_known (args, create_args, &error) ||
      !refuse_unsupported (args, &error) ||
      !sight_tool_args_get_url (args, "startUrl", FALSE, &start_url, &error) ||
      !parse_viewport (session, args, &error) ||
      !sight_tool_args_get_bool (args, "record", FALSE, &session->record, &error) ||
      !sight_tool_args_get_url (args, "proxyUrl", FALSE, &proxy_url, &error) ||
      !sight_tool_args_get_strv (args, "allowHosts", NULL, 100, 253, none, &allow_hosts,
                                 &error) ||
      !sight_tool_args_get_int (args, "idleTimeoutMs", DEFAULT_IDLE_MS, MIN_TIMEOUT_MS,
                                MAX_TIMEOUT_MS, &session->idle_ms, &error) ||
      !sight_tool_args_get_int (args, "maxDurationMs", DEFAULT_MAX_DURATION_MS, MIN_TIMEOUT_MS,
                                MAX_TIMEOUT_MS, &session->max_duration_ms, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  if (allow_hosts[0] != NULL && proxy_url == NULL)
    {
      g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                               "allowHosts: needs proxyUrl");
      return;
    }

  /* Those already waiting go first. */
  if (sight_session_registry_count_live (self) < self->max_live &&
      g_queue_is_empty (self->waiting))
    {
      open_session (self, g_steal_pointer (&task), g_steal_pointer (&session), args,
                    g_steal_pointer (&allow_hosts));
      return;
    }
  wait_ms = capacity_wait_ms (args);
  if (wait_ms <= 0)
    {
      return_busy (self, task, 0);
      return;
    }
  {
    Waiting *waiting = g_new0 (Waiting, 1);

    waiting->registry = self;
    waiting->task = g_steal_pointer (&task);
    waiting->session = g_steal_pointer (&session);
    waiting->args = json_object_ref (args);
    waiting->allow_hosts = g_steal_pointer (&allow_hosts);
    waiting->wait_ms = wait_ms;
    waiting->timeout_source = g_timeout_add ((guint) wait_ms, waiting_timeout_cb, waiting);
    if (cancellable != NULL)
      {
        waiting->cancellable = g_object_ref (cancellable);
        waiting->cancelled_id = g_signal_connect (cancellable, "cancelled",
                                                  G_CALLBACK (waiting_cancelled_cb), waiting);
      }
    g_queue_push_tail (self->waiting, waiting);
  }
}

SightSession *
sight_session_registry_create_finish (SightSessionRegistry *self,
                                      GAsyncResult         *result,
                                      GError              **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
