/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "sight-observation.h"

G_BEGIN_DECLS

/* Takes ownership of @shot. */
void _sight_observation_set_screenshot (SightObservation *self,
                                        SightScreenshot  *shot);

G_END_DECLS
