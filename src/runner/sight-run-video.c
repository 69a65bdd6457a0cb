/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-run-video"

#include "config.h"

#include "sight-run-video.h"

char *
sight_run_video_path (SightStore *store,
                      const char *id)
{
  g_autofree char *db = store != NULL ? g_strdup (sight_store_get_path (store))
                                      : sight_store_default_path ();
  g_autofree char *dir = g_path_get_dirname (db);
  g_autofree char *name = g_strconcat (id, ".webm", NULL);

  g_return_val_if_fail (id != NULL, NULL);
  return g_build_filename (dir, "videos", name, NULL);
}

static void
linked_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  if (!sight_store_write_finish (SIGHT_STORE (source), result, &error))
    g_warning ("The recording could not be linked to its run: %s", error->message);
}

void
sight_run_video_link (SightRunRecorder *recorder,
                      const char       *path)
{
  SightArtifactRecord artifact = { 0 };

  g_return_if_fail (SIGHT_IS_RUN_RECORDER (recorder));
  g_return_if_fail (path != NULL);

  artifact.run_id = (char *) sight_run_recorder_get_run_id (recorder);
  artifact.step_index = -1;
  artifact.name = (char *) path;
  artifact.mime = (char *) SIGHT_ARTIFACT_VIDEO_MIME;
  sight_store_add_artifact_async (sight_run_recorder_get_store (recorder), &artifact, NULL,
                                  linked_cb, NULL);
}
