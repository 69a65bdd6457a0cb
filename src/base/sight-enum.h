/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

/* The nick strings of the enum types that gnome.mkenums_simple generates
 * (each layer's sight-<layer>-enums.h): one name per value, written once in
 * the enum's declaration (a "nick=" annotation where the default, the value's
 * name without its prefix in lower case with dashes, is not the one spoken). */

/* The nick of @value, or "unknown" for a value the type does not have. */
const char *sight_enum_to_nick   (GType        enum_type,
                                  int          value);
/* The value whose nick is @nick (exactly; NULL is none). */
gboolean    sight_enum_from_nick (GType        enum_type,
                                  const char  *nick,
                                  int         *out_value);

G_END_DECLS
