/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-enum"

#include "config.h"

#include "sight-enum.h"

/* An enum class once referenced stays: the static types never unload, so
 * this is a lookup, not a leak. */
static GEnumClass *
enum_class (GType enum_type)
{
  GEnumClass *klass = g_type_class_peek (enum_type);

  return klass != NULL ? klass : g_type_class_ref (enum_type);
}

const char *
sight_enum_to_nick (GType enum_type,
                    int   value)
{
  GEnumValue *v;

  g_return_val_if_fail (G_TYPE_IS_ENUM (enum_type), "unknown");

  v = g_enum_get_value (enum_class (enum_type), value);
  return v != NULL ? v->value_nick : "unknown";
}

gboolean
sight_enum_from_nick (GType       enum_type,
                      const char *nick,
                      int        *out_value)
{
  GEnumValue *v;

  g_return_val_if_fail (G_TYPE_IS_ENUM (enum_type), FALSE);

  if (nick == NULL)
    return FALSE;
  v = g_enum_get_value_by_nick (enum_class (enum_type), nick);
  if (v == NULL)
    return FALSE;
  if (out_value != NULL)
    *out_value = v->value;
  return TRUE;
}
