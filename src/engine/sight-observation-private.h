/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "sight-observation.h"

G_BEGIN_DECLS

/* Takes ownership of @shot. */
void _sight_observation_set_screenshot (SightObservation *self,
                                        SightScreenshot  *shot);

/* Adds @ms as the member @phase of the result's "timing" (what the page
 * measured: walk, serialize; the capture adds roundTrip, parse, parseWall).
 * Never stored: sight_observation_to_json() leaves "timing" out. */
void _sight_observation_set_timing     (SightObservation *self,
                                        const char       *phase,
                                        double            ms);

/* sight_observation_new_from_text() of @json (taken) in a worker, as
 * sight_observation_new_from_stored_async() does for a stored one; with
 * @load_tree, its tree parsed and indexed there too. */
void              _sight_observation_new_from_text_async  (char                *json,
                                                           gboolean             load_tree,
                                                           GCancellable        *cancellable,
                                                           GAsyncReadyCallback  callback,
                                                           gpointer             user_data);
SightObservation *_sight_observation_new_from_text_finish (GAsyncResult        *result,
                                                           GError             **error);

G_END_DECLS
