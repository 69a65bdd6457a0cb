/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-secret-fields"

#include "config.h"

#include "sight-secret-fields.h"

#include "sight-actions.h"
#include "sight-engine-resources.h"
#include "sight-error.h"
#include "sight-web-page-private.h"

/* Regions are painted a little beyond their box, so focus rings and the
 * anti-aliased edges of the characters stay covered. */
#define MARGIN 2.0
/* Measuring is one walk of the page; a page that cannot answer in this long
 * is not captured. */
#define REGIONS_TIMEOUT_MS 5000

const char *
_sight_secret_fields_script (void)
{
  static gsize init;
  static char *script;

  if (g_once_init_enter (&init))
    {
      g_autoptr(GBytes) bytes =
        g_resource_lookup_data (sight_engine_get_resource (),
                                "/dev/sightline/engine/js/secret-fields.js",
                                G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);

      g_assert (bytes != NULL);
      script = g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
      g_once_init_leave (&init, 1);
    }
  return script;
}

/* ----------------------------------------------------------------------- */
/* The fill                                                                 */

static void
filled_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  SightWebPage *page = SIGHT_WEB_PAGE (source);
  g_autoptr(GError) error = NULL;
  JsonObject *reply = sight_web_page_perform_finish (page, result, &error);

  _sight_web_page_secret_typing (page, FALSE);
  /* A refusal typed nothing; anything else may have typed some of it. */
  if (!g_error_matches (error, SIGHT_ERROR, SIGHT_ERROR_POLICY_DENIED))
    _sight_web_page_count_secret_fill (page);
  if (reply == NULL)
    g_task_return_error (task, g_steal_pointer (&error));
  else
    g_task_return_pointer (task, reply, (GDestroyNotify) json_object_unref);
}

void
sight_web_page_fill_secret_async (SightWebPage        *self,
                                  const char          *ref,
                                  const char          *value,
                                  const char          *purpose,
                                  guint                timeout_ms,
                                  GCancellable        *cancellable,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(JsonObject) action = json_object_new ();

  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));
  g_return_if_fail (ref != NULL);
  g_return_if_fail (value != NULL);
  g_return_if_fail (purpose != NULL);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_web_page_fill_secret_async);
  /* Known before the first character lands, so a screenshot taken while
   * the fill settles is already masked. */
  _sight_web_page_add_filled_secret (self, value);
  _sight_web_page_secret_typing (self, TRUE);
  json_object_set_string_member (action, "type", "fillSecret");
  json_object_set_string_member (action, "value", value);
  json_object_set_string_member (action, "purpose", purpose);
  sight_web_page_perform_async (self, ref, action, timeout_ms, cancellable, filled_cb,
                                g_steal_pointer (&task));
}

JsonObject *
sight_web_page_fill_secret_finish (SightWebPage  *self,
                                   GAsyncResult  *result,
                                   GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ----------------------------------------------------------------------- */
/* Where secrets show                                                       */

typedef struct {
  GArray *boxes;
  guint   n_secret;
} Regions;

static void
regions_free (Regions *regions)
{
  g_clear_pointer (&regions->boxes, g_array_unref);
  g_free (regions);
}

static void
measured_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = sight_web_page_evaluate_finish (SIGHT_WEB_PAGE (source), result,
                                                             &error);
  JsonObject *object;
  JsonArray *boxes;
  Regions *regions;

  if (node == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  if (!JSON_NODE_HOLDS_OBJECT (node) ||
      (boxes = json_object_get_array_member (json_node_get_object (node), "boxes")) == NULL)
    {
      g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_INTERNAL,
                               "The page gave no regions to mask");
      return;
    }
  object = json_node_get_object (node);
  regions = g_new0 (Regions, 1);
  regions->boxes = g_array_sized_new (FALSE, TRUE, sizeof (SightRect), json_array_get_length (boxes));
  regions->n_secret = (guint) json_object_get_int_member_with_default (object, "secret", 0);
  for (guint i = 0; i < json_array_get_length (boxes); i++)
    {
      JsonObject *b = json_array_get_object_element (boxes, i);
      SightRect r;

      if (b == NULL)
        continue;
      r.x = json_object_get_double_member_with_default (b, "x", 0) - MARGIN;
      r.y = json_object_get_double_member_with_default (b, "y", 0) - MARGIN;
      r.width = json_object_get_double_member_with_default (b, "width", 0) + 2 * MARGIN;
      r.height = json_object_get_double_member_with_default (b, "height", 0) + 2 * MARGIN;
      g_array_append_val (regions->boxes, r);
    }
  g_task_return_pointer (task, regions, (GDestroyNotify) regions_free);
}

void
_sight_secret_regions_async (SightWebPage        *self,
                             const char * const  *values,
                             guint                n_values,
                             gboolean             full_page,
                             gboolean             secure,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  static gsize init;
  static char *body;
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  g_autoptr(JsonNode) args = json_node_new (JSON_NODE_OBJECT);
  JsonObject *object = json_object_new ();
  JsonArray *list = json_array_new ();

  g_task_set_source_tag (task, _sight_secret_regions_async);
  if (g_once_init_enter (&init))
    {
      body = g_strconcat (_sight_secret_fields_script (),
                          "\nreturn __sight.secretFields.regions (args);", NULL);
      g_once_init_leave (&init, 1);
    }
  for (guint i = 0; i < n_values; i++)
    json_array_add_string_element (list, values[i]);
  json_object_set_array_member (object, "values", list);
  json_object_set_boolean_member (object, "fullPage", full_page);
  json_object_set_boolean_member (object, "secure", secure);
  json_node_take_object (args, object);
  sight_web_page_evaluate_async (self, body, args, REGIONS_TIMEOUT_MS, cancellable, measured_cb,
                                 g_steal_pointer (&task));
}

GArray *
_sight_secret_regions_finish (SightWebPage  *self,
                              GAsyncResult  *result,
                              guint         *out_n_secret,
                              GError       **error)
{
  Regions *regions;
  GArray *boxes;

  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  regions = g_task_propagate_pointer (G_TASK (result), error);
  if (regions == NULL)
    return NULL;
  if (out_n_secret != NULL)
    *out_n_secret = regions->n_secret;
  boxes = g_steal_pointer (&regions->boxes);
  regions_free (regions);
  return boxes;
}
