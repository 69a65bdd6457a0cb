/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-cmd-version"

#include "config.h"

#include <webkit/webkit.h>

#include "sight-commands.h"

int
sight_cmd_version (int    argc,
                   char **argv)
{
  g_print ("sightline %s (WebKitGTK %u.%u.%u)\n", PACKAGE_VERSION,
           webkit_get_major_version (), webkit_get_minor_version (),
           webkit_get_micro_version ());
  return 0;
}
