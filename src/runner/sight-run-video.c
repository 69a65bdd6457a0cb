/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-run-video"

#include "config.h"

#include "sight-run-video.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "sight-error.h"

char *
sight_run_video_path (SightStore *store,
                      const char *run_id)
{
  g_return_val_if_fail (SIGHT_IS_STORE (store), NULL);
  g_return_val_if_fail (run_id != NULL, NULL);

  return sight_store_artifact_path (store, run_id, SIGHT_RUN_VIDEO_NAME);
}

char *
sight_run_video_session_path (const char *session_id)
{
  g_autofree char *db = sight_store_default_path ();
  g_autofree char *dir = g_path_get_dirname (db);
  g_autofree char *name = g_strconcat (session_id, ".webm", NULL);

  g_return_val_if_fail (session_id != NULL, NULL);
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

/* @dest as the same file as @path: a hard link (no second copy on the
 * disk), or a copy where that cannot be (another file system). */
static gboolean
place (const char  *path,
       const char  *dest,
       GError     **error)
{
  g_autofree char *dir = g_path_get_dirname (dest);
  g_autoptr(GFile) from = NULL;
  g_autoptr(GFile) to = NULL;
  g_autoptr(GError) local_error = NULL;

  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int errsv = errno;

      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "The run's folder %s could not be made: %s", dir, g_strerror (errsv));
      return FALSE;
    }
  if (link (path, dest) == 0)
    return TRUE;
  from = g_file_new_for_path (path);
  to = g_file_new_for_path (dest);
  if (g_file_copy (from, to, G_FILE_COPY_OVERWRITE, NULL, NULL, NULL, &local_error))
    return TRUE;
  /* Nothing half-copied stays. */
  g_unlink (dest);
  g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
               "The recording could not be kept with its run at %s: %s", dest,
               local_error->message);
  return FALSE;
}

char *
sight_run_video_link (SightRunRecorder *recorder,
                      const char       *path,
                      GError          **error)
{
  SightStore *store;
  SightArtifactRecord artifact = { 0 };
  g_autofree char *dest = NULL;

  g_return_val_if_fail (SIGHT_IS_RUN_RECORDER (recorder), NULL);
  g_return_val_if_fail (path != NULL, NULL);

  store = sight_run_recorder_get_store (recorder);
  artifact.run_id = (char *) sight_run_recorder_get_run_id (recorder);
  dest = sight_run_video_path (store, artifact.run_id);
  if (g_strcmp0 (dest, path) != 0 && !g_file_test (dest, G_FILE_TEST_EXISTS) &&
      !place (path, dest, error))
    return NULL;
  artifact.step_index = -1;
  artifact.name = (char *) SIGHT_RUN_VIDEO_NAME;
  artifact.mime = (char *) SIGHT_ARTIFACT_VIDEO_MIME;
  artifact.created_at = g_get_real_time ();
  sight_store_add_artifact_async (store, &artifact, NULL, linked_cb, NULL);
  return g_steal_pointer (&dest);
}
