/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Files the window benchmarks leave behind. */
#pragma once

#include <gio/gio.h>

/* Deletes @file and, if it is a folder, everything in it. */
static inline void
sight_bench_remove_tree (GFile *file)
{
  g_autoptr(GFileEnumerator) children = NULL;
  GFile *child;

  children = g_file_enumerate_children (file, G_FILE_ATTRIBUTE_STANDARD_NAME,
                                        G_FILE_QUERY_INFO_NOFOLLOW_SYMLINKS, NULL, NULL);
  while (children != NULL && g_file_enumerator_iterate (children, NULL, &child, NULL, NULL) &&
         child != NULL)
    sight_bench_remove_tree (child);
  g_file_delete (file, NULL, NULL);
}
