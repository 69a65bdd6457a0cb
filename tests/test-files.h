/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Removing what a test wrote under its temporary folder. */
#pragma once

#include <gio/gio.h>

G_GNUC_UNUSED static void
test_remove_file_tree (GFile *file)
{
  g_autoptr(GFileEnumerator) children = NULL;
  GFile *child;

  /* enumerating a link to a folder would list (and delete) its target's files */
  if (g_file_query_file_type (file, G_FILE_QUERY_INFO_NOFOLLOW_SYMLINKS, NULL) ==
      G_FILE_TYPE_DIRECTORY)
    children = g_file_enumerate_children (file, G_FILE_ATTRIBUTE_STANDARD_NAME,
                                          G_FILE_QUERY_INFO_NOFOLLOW_SYMLINKS, NULL, NULL);
  while (children != NULL && g_file_enumerator_iterate (children, NULL, &child, NULL, NULL) &&
         child != NULL)
    test_remove_file_tree (child);
  g_file_delete (file, NULL, NULL);
}

/* Deletes @path and, if it is a folder, everything in it. A symbolic link is
 * deleted, never followed. */
G_GNUC_UNUSED static void
test_remove_tree (const char *path)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);

  test_remove_file_tree (file);
}
