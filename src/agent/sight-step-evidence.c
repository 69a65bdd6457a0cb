/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-step-evidence"

#include "config.h"

#include "sight-step-evidence.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "sight-error.h"
#include "sight-step-result.h"

static void
evidence_observed_cb (GObject      *source,
                      GAsyncResult *result,
                      gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  SightStepContext *ctx = g_task_get_task_data (task);
  g_autoptr(SightObservation) observation = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *name = NULL;
  g_autofree char *path = NULL;
  const SightScreenshot *shot;
  int fd;

  observation = sight_step_context_observe_finish (ctx, result, NULL, &error);
  if (observation == NULL || !sight_observation_masking_proven (observation) ||
      (shot = sight_observation_get_screenshot (observation)) == NULL ||
      g_mkdir_with_parents (ctx->evidence_dir, 0700) != 0)
    {
      g_task_return_boolean (task, TRUE);
      return;
    }
  /* The folder outlives the run (a command's, a session's): each failure
   * keeps a file of its own, named for what it holds. */
  name = sight_step_evidence_name (ctx->number, shot->format, TRUE);
  path = g_build_filename (ctx->evidence_dir, name, NULL);
  fd = g_mkstemp_full (path, O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0 && close (fd) == 0 &&
      g_file_set_contents_full (path, g_bytes_get_data (shot->bytes, NULL),
                                g_bytes_get_size (shot->bytes),
                                G_FILE_SET_CONTENTS_CONSISTENT, 0600, &error))
    {
      g_free (ctx->result->screenshot_path);
      ctx->result->screenshot_path = g_steal_pointer (&path);
    }
  else if (fd >= 0)
    g_unlink (path);
  g_task_return_boolean (task, TRUE);
}

void
sight_step_evidence_keep_async (SightStepContext    *ctx,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, NULL, callback, user_data);

  g_task_set_source_tag (task, sight_step_evidence_keep_async);
  g_task_set_task_data (task, ctx, NULL);
  if (ctx->evidence_dir == NULL || ctx->result->screenshot_path != NULL ||
      g_cancellable_is_cancelled (ctx->cancellable) ||
      sight_budget_remaining_ms (ctx->budget) <= 0 ||
      sight_step_shot_for (ctx->request->limits.screenshot, ctx->result->error,
                           sight_step_context_secret_filled (ctx)) != SIGHT_STEP_SHOT_EVIDENCE)
    {
      g_task_return_boolean (task, TRUE);
      return;
    }
  sight_step_context_observe_async (ctx, TRUE, evidence_observed_cb, g_steal_pointer (&task));
}

void
sight_step_evidence_keep_finish (GAsyncResult *result)
{
  g_return_if_fail (g_task_is_valid (result, NULL));
  g_task_propagate_boolean (G_TASK (result), NULL);
}
