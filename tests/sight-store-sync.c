/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include "sight-store-sync.h"

typedef struct {
  GMainContext *context;
  gboolean      done;
  gboolean      ok;
  GError       *error;
} Wait;

static void
write_done_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  Wait *wait = user_data;

  wait->ok = sight_store_write_finish (SIGHT_STORE (source), result, &wait->error);
  wait->done = TRUE;
  g_main_context_wakeup (wait->context);
}

static void
wait_begin (Wait *wait)
{
  *wait = (Wait) { g_main_context_new (), FALSE, FALSE, NULL };
  g_main_context_push_thread_default (wait->context);
}

/* The store always answers (its DB thread runs every job it is given), so
 * the wait needs no deadline of its own; the test's timeout is the bound. */
static gboolean
wait_end (Wait    *wait,
          GError **error)
{
  while (!wait->done)
    g_main_context_iteration (wait->context, TRUE);
  g_main_context_pop_thread_default (wait->context);
  g_main_context_unref (wait->context);
  if (wait->error != NULL)
    g_propagate_error (error, wait->error);
  return wait->ok;
}

gboolean
sight_store_add_step (SightStore            *self,
                      const SightStepRecord *step,
                      GError               **error)
{
  Wait wait;

  wait_begin (&wait);
  sight_store_add_step_async (self, step, NULL, write_done_cb, &wait);
  return wait_end (&wait, error);
}

gboolean
sight_store_finish_step (SightStore            *self,
                         const SightStepRecord *step,
                         GError               **error)
{
  Wait wait;

  wait_begin (&wait);
  sight_store_finish_step_async (self, step, NULL, write_done_cb, &wait);
  return wait_end (&wait, error);
}

gboolean
sight_store_add_observation (SightStore                   *self,
                             const SightObservationRecord *observation,
                             GError                      **error)
{
  Wait wait;

  wait_begin (&wait);
  sight_store_add_observation_async (self, observation, NULL, write_done_cb, &wait);
  return wait_end (&wait, error);
}

gboolean
sight_store_add_model_call (SightStore                 *self,
                            const SightModelCallRecord *call,
                            GError                    **error)
{
  Wait wait;

  wait_begin (&wait);
  sight_store_add_model_call_async (self, call, NULL, write_done_cb, &wait);
  return wait_end (&wait, error);
}

gboolean
sight_store_add_log (SightStore           *self,
                     const SightLogRecord *log,
                     GError              **error)
{
  Wait wait;

  wait_begin (&wait);
  sight_store_add_log_async (self, log, NULL, write_done_cb, &wait);
  return wait_end (&wait, error);
}

gboolean
sight_store_add_artifact (SightStore                *self,
                          const SightArtifactRecord *artifact,
                          GError                   **error)
{
  Wait wait;

  wait_begin (&wait);
  sight_store_add_artifact_async (self, artifact, NULL, write_done_cb, &wait);
  return wait_end (&wait, error);
}
