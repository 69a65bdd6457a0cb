/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "sight-store.h"

G_BEGIN_DECLS

/* Blocking forms of the store's asynchronous writes, for tests and benches
 * only: the library writes steps and evidence asynchronously, off the UI
 * thread. Each waits for its write on a main context of its own, so it may
 * be called from any thread. */

gboolean sight_store_add_step        (SightStore                   *self,
                                      const SightStepRecord        *step,
                                      GError                      **error);
gboolean sight_store_finish_step     (SightStore                   *self,
                                      const SightStepRecord        *step,
                                      GError                      **error);
gboolean sight_store_add_observation (SightStore                   *self,
                                      const SightObservationRecord *observation,
                                      GError                      **error);
gboolean sight_store_add_model_call  (SightStore                   *self,
                                      const SightModelCallRecord   *call,
                                      GError                      **error);
gboolean sight_store_add_log         (SightStore                   *self,
                                      const SightLogRecord         *log,
                                      GError                      **error);
gboolean sight_store_add_artifact    (SightStore                   *self,
                                      const SightArtifactRecord    *artifact,
                                      GError                      **error);

G_END_DECLS
