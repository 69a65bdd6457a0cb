/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-page-scripts"

#include "config.h"

#include "sight-page-scripts.h"

#include <gio/gio.h>

#include "sight-runner-resources.h"

const char *
sight_page_script (const char *name)
{
  static GHashTable *cache;
  static GMutex lock;
  GBytes *bytes;
  g_autofree char *path = NULL;

  g_mutex_lock (&lock);
  if (cache == NULL)
    cache = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_bytes_unref);
  bytes = g_hash_table_lookup (cache, name);
  if (bytes == NULL)
    {
      path = g_strconcat ("/dev/sightline/runner/js/", name, NULL);
      /* Resources are compiled in: a missing one is a build error. */
      bytes = g_resource_lookup_data (sight_runner_get_resource (), path,
                                      G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);
      g_assert (bytes != NULL);
      g_hash_table_insert (cache, g_strdup (name), bytes);
    }
  g_mutex_unlock (&lock);
  return g_bytes_get_data (bytes, NULL);
}
