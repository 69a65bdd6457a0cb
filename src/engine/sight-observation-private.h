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

G_END_DECLS
