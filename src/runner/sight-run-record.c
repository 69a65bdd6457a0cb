/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-run-record"

#include "config.h"

#include "sight-run-record.h"

void
sight_run_store_observation (SightStore          *store,
                             const char          *run_id,
                             int                  step_index,
                             const char          *phase,
                             SightObservation    *observation,
                             gboolean             with_screenshot,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  const SightScreenshot *shot;
  g_autofree char *tree = NULL;
  SightObservationRecord record = { 0 };

  g_return_if_fail (SIGHT_IS_STORE (store));
  g_return_if_fail (run_id != NULL);
  g_return_if_fail (SIGHT_IS_OBSERVATION (observation));

  shot = sight_observation_get_screenshot (observation);
  tree = sight_observation_to_json (observation, FALSE);
  record.run_id = (char *) run_id;
  record.step_index = step_index;
  record.phase = (char *) phase;
  record.url = (char *) sight_observation_get_url (observation);
  record.title = (char *) sight_observation_get_title (observation);
  record.tree_json = tree;
  record.tree_text = (char *) sight_observation_get_text (observation);
  if (shot != NULL && with_screenshot)
    {
      record.screenshot = shot->bytes;
      record.screenshot_mime = (char *) sight_screenshot_get_mime_type (shot);
      record.width = shot->width;
      record.height = shot->height;
      record.scale = shot->scale;
    }
  record.created_at = g_get_real_time ();
  sight_store_add_observation_async (store, &record, NULL, callback, user_data);
}

void
sight_run_store_page_log (SightStore          *store,
                          const char          *run_id,
                          SightWebPage        *page,
                          gint64               since,
                          gint64               until,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data)
{
  GPtrArray *log;

  g_return_if_fail (SIGHT_IS_STORE (store));
  g_return_if_fail (run_id != NULL);

  if (page == NULL)
    return;
  log = sight_web_page_get_log (page);
  for (guint i = 0; log != NULL && i < log->len; i++)
    {
      SightLogEntry *entry = g_ptr_array_index (log, i);
      SightLogRecord record = { 0 };

      if (entry->timestamp < since || (until > 0 && entry->timestamp > until))
        continue;
      record.run_id = (char *) run_id;
      record.step_index = -1;
      record.kind = (char *) sight_log_kind_to_string (entry->kind);
      record.level = entry->level;
      record.text = entry->text;
      record.url = entry->url;
      record.status = entry->status;
      record.created_at = entry->timestamp;
      sight_store_add_log_async (store, &record, NULL, callback, user_data);
    }
}
