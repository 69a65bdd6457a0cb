/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-cmd-serve"

#include "config.h"

#include "sight-cli.h"
#include "sight-commands.h"

int
sight_cmd_serve (int    argc,
                 char **argv)
{
  return sight_cli_usage_error ("serve", "not built yet");
}
