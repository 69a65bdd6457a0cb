/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-observation"

#include "config.h"

#include "sight-observation.h"

#include <string.h>

#include "sight-error.h"
#include "sight-json.h"
#include "sight-observation-private.h"

/* Secure fields are masked a little beyond their box, so focus rings and
 * anti-aliased edges of the typed characters stay covered. */
#define MASK_MARGIN 2.0

typedef struct {
  SightWebPage      *page;
  SightObserveFlags  flags;
  SightObservation  *since;
  SightObservation  *observation;
  gint64             start;
  gint64             parse_start;
  double             round_trip_ms;
} Capture;

static void
capture_free (Capture *c)
{
  g_clear_object (&c->page);
  g_clear_object (&c->since);
  g_clear_object (&c->observation);
  g_free (c);
}

static void
screenshot_done_cb (GObject      *source,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GError) error = NULL;
  SightScreenshot *shot;

  shot = sight_web_page_screenshot_finish (SIGHT_WEB_PAGE (source), result, &error);
  if (shot == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  _sight_observation_set_screenshot (g_task_get_task_data (task), shot);
  g_task_return_boolean (task, TRUE);
}

void
sight_observation_capture_screenshot_async (SightObservation    *observation,
                                            SightWebPage        *page,
                                            GCancellable        *cancellable,
                                            GAsyncReadyCallback  callback,
                                            gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(GArray) masks = NULL;
  SightScreenshotOptions options = SIGHT_SCREENSHOT_OPTIONS_INIT;
  GArray *boxes;

  g_return_if_fail (SIGHT_IS_OBSERVATION (observation));
  g_return_if_fail (SIGHT_IS_WEB_PAGE (page));

  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_observation_capture_screenshot_async);
  g_task_set_task_data (task, g_object_ref (observation), g_object_unref);
  boxes = sight_observation_get_secure_boxes (observation);
  masks = g_array_sized_new (FALSE, TRUE, sizeof (SightRect), boxes->len);
  for (guint i = 0; i < boxes->len; i++)
    {
      SightRect r = g_array_index (boxes, SightRect, i);

      r.x -= MASK_MARGIN;
      r.y -= MASK_MARGIN;
      r.width += 2 * MASK_MARGIN;
      r.height += 2 * MASK_MARGIN;
      g_array_append_val (masks, r);
    }
  options.max_side = SIGHT_OBSERVATION_MAX_SIDE;
  options.masks = (const SightRect *) (gpointer) masks->data;
  options.n_masks = masks->len;
  sight_web_page_screenshot_async (page, &options, cancellable, screenshot_done_cb,
                                   g_steal_pointer (&task));
}

gboolean
sight_observation_capture_screenshot_finish (GAsyncResult  *result,
                                             GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

/* What a capture's flags say of the page's observation (not how it is
 * delivered: with a screenshot or not, its tree parsed or not). */
#define DELIVERY_FLAGS (SIGHT_OBSERVE_SCREENSHOT | SIGHT_OBSERVE_PARSE_TREE)

/* The page's last observation that has a state, with the flags it was taken
 * with (but the delivery's), so that sight_observation_capture_current_async()
 * can ask whether the page is still as it saw it. */
typedef struct {
  SightObservation  *observation;
  SightObserveFlags  flags;
} Latest;

static void
latest_free (Latest *latest)
{
  g_clear_object (&latest->observation);
  g_free (latest);
}

static GQuark
latest_quark (void)
{
  return g_quark_from_static_string ("sight-observation-latest");
}

static void
remember_latest (SightWebPage      *page,
                 SightObservation  *observation,
                 SightObserveFlags  flags)
{
  Latest *latest;

  if (sight_observation_get_state (observation) == NULL)
    return;
  latest = g_new0 (Latest, 1);
  latest->observation = g_object_ref (observation);
  latest->flags = flags & ~DELIVERY_FLAGS;
  g_object_set_qdata_full (G_OBJECT (page), latest_quark (), latest,
                           (GDestroyNotify) latest_free);
}

/* The page's last observation taken with @flags, when it can stand for a
 * new one: with a screenshot when one is asked for. */
static SightObservation *
latest_for (SightWebPage      *page,
            SightObserveFlags  flags)
{
  Latest *latest = g_object_get_qdata (G_OBJECT (page), latest_quark ());

  if (latest == NULL || latest->flags != (flags & ~DELIVERY_FLAGS))
    return NULL;
  if ((flags & SIGHT_OBSERVE_SCREENSHOT) &&
      sight_observation_get_screenshot (latest->observation) == NULL)
    return NULL;
  return latest->observation;
}

static void
capture_shot_done_cb (GObject      *source,
                      GAsyncResult *result,
                      gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  Capture *c = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;

  if (!sight_observation_capture_screenshot_finish (result, &error))
    g_task_return_error (task, g_steal_pointer (&error));
  else
    g_task_return_pointer (task, g_steal_pointer (&c->observation), g_object_unref);
}

static void
parse_done_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  Capture *c = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;

  c->observation = _sight_observation_new_from_text_finish (result, &error);
  if (c->observation == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  _sight_observation_set_timing (c->observation, "roundTrip", c->round_trip_ms);
  _sight_observation_set_timing (c->observation, "parseWall",
                                 (g_get_monotonic_time () - c->parse_start) / 1000.0);
  /* Only a since-capture's observation has a state to compare with. */
  remember_latest (c->page, c->observation, c->flags);
  if ((c->flags & SIGHT_OBSERVE_SCREENSHOT) == 0)
    {
      g_task_return_pointer (task, g_steal_pointer (&c->observation), g_object_unref);
      return;
    }

  sight_observation_capture_screenshot_async (c->observation, c->page,
                                              g_task_get_cancellable (task),
                                              capture_shot_done_cb, g_object_ref (task));
}

/* snapshot.js's answer when the page is in the state asked about: small,
 * so parsed here. */
static gboolean
page_unchanged (const char *json)
{
  g_autoptr(JsonNode) node = NULL;

  if (strlen (json) > 4096)
    return FALSE;
  node = sight_json_parse (json, -1, 4, NULL);
  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) &&
         json_object_get_boolean_member_with_default (json_node_get_object (node), "unchanged",
                                                      FALSE);
}

static void
since_loaded_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;

  sight_observation_load_tree_finish (SIGHT_OBSERVATION (source), result, NULL);
  g_task_return_pointer (task, g_object_ref (source), g_object_unref);
}

static void
evaluate_done_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  Capture *c = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  char *json;

  json = sight_web_page_evaluate_text_finish (SIGHT_WEB_PAGE (source), result, &error);
  if (json == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  c->parse_start = g_get_monotonic_time ();
  c->round_trip_ms = (c->parse_start - c->start) / 1000.0;
  if (c->since != NULL && page_unchanged (json))
    {
      g_free (json);
      if ((c->flags & SIGHT_OBSERVE_PARSE_TREE) && !sight_observation_tree_loaded (c->since))
        {
          sight_observation_load_tree_async (c->since, g_task_get_cancellable (task),
                                             since_loaded_cb, g_object_ref (task));
          return;
        }
      g_task_return_pointer (task, g_object_ref (c->since), g_object_unref);
      return;
    }
  /* Parsed, built and indexed in a worker (sight-observation.c). */
  _sight_observation_new_from_text_async (json, (c->flags & SIGHT_OBSERVE_PARSE_TREE) != 0,
                                          g_task_get_cancellable (task), parse_done_cb,
                                          g_object_ref (task));
}

static void
capture_start (SightWebPage        *page,
               SightObserveFlags    flags,
               gboolean             watch,
               SightObservation    *since,
               guint                timeout_ms,
               GCancellable        *cancellable,
               GAsyncReadyCallback  callback,
               gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) args = NULL;
  g_autofree char *body = NULL;
  Capture *c;

  g_return_if_fail (SIGHT_IS_WEB_PAGE (page));
  g_return_if_fail (since == NULL || SIGHT_IS_OBSERVATION (since));

  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_observation_capture_async);
  c = g_new0 (Capture, 1);
  c->page = g_object_ref (page);
  c->flags = flags;
  /* Only a state the page gave can match; none: always a new walk. */
  if (since != NULL && sight_observation_get_state (since) != NULL)
    c->since = g_object_ref (since);
  c->start = g_get_monotonic_time ();
  g_task_set_task_data (task, c, (GDestroyNotify) capture_free);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "text");
  json_builder_add_string_value (builder, (flags & SIGHT_OBSERVE_FULL_TEXT) ? "full" : "compact");
  json_builder_set_member_name (builder, "tree");
  json_builder_add_boolean_value (builder, (flags & SIGHT_OBSERVE_NO_TREE) == 0);
  /* A caller that compares states gets the page's (none asked: no cost). */
  if (watch)
    {
      json_builder_set_member_name (builder, "since");
      if (c->since != NULL)
        json_builder_add_string_value (builder, sight_observation_get_state (since));
      else
        json_builder_add_null_value (builder);
    }
  json_builder_end_object (builder);
  args = json_builder_get_root (builder);

  body = sight_observation_build_call ("observe (args)");
  sight_web_page_evaluate_text_async (page, body, args, timeout_ms, cancellable,
                                      evaluate_done_cb, g_steal_pointer (&task));
}

void
sight_observation_capture_async (SightWebPage        *page,
                                 SightObserveFlags    flags,
                                 guint                timeout_ms,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  capture_start (page, flags, FALSE, NULL, timeout_ms, cancellable, callback, user_data);
}

void
sight_observation_capture_since_async (SightWebPage        *page,
                                       SightObserveFlags    flags,
                                       SightObservation    *since,
                                       guint                timeout_ms,
                                       GCancellable        *cancellable,
                                       GAsyncReadyCallback  callback,
                                       gpointer             user_data)
{
  capture_start (page, flags, TRUE, since, timeout_ms, cancellable, callback, user_data);
}

void
sight_observation_capture_current_async (SightWebPage        *page,
                                         SightObserveFlags    flags,
                                         guint                timeout_ms,
                                         GCancellable        *cancellable,
                                         GAsyncReadyCallback  callback,
                                         gpointer             user_data)
{
  g_return_if_fail (SIGHT_IS_WEB_PAGE (page));
  capture_start (page, flags, TRUE, latest_for (page, flags), timeout_ms, cancellable,
                 callback, user_data);
}

SightObservation *
sight_observation_capture_finish (GAsyncResult  *result,
                                  GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
