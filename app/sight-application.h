/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define SIGHT_TYPE_APPLICATION (sight_application_get_type ())
G_DECLARE_FINAL_TYPE (SightApplication, sight_application, SIGHT, APPLICATION, AdwApplication)

SightApplication *sight_application_new (void);

G_END_DECLS
