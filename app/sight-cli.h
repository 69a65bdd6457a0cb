/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* One headless subcommand of `sightline`. It parses its own arguments
 * (argv[0] is the subcommand's name) and returns the process exit status of
 * DESIGN.md: 0 pass, 1 product failure, 2 bad usage, 3 blocked, 4 budget,
 * 5 model, 70 internal. */
typedef int (*SightCommandFunc) (int    argc,
                                 char **argv);

typedef struct {
  const char       *name;
  const char       *summary;   /* translatable, marked with N_() */
  SightCommandFunc  func;
  gboolean          needs_display;
} SightCommand;

const SightCommand *sight_cli_lookup        (const char   *name);
const SightCommand *sight_cli_commands      (guint        *n_commands);
/* Runs @command and returns its exit status once the processes it had the
 * browser engine start have exited (see sight_web_page_process_wait_exit). */
int                 sight_cli_run           (const SightCommand *command,
                                             int                 argc,
                                             char              **argv);

/* Prints "CODE: message" for @error on stderr and returns its exit status. */
int                 sight_cli_report_error  (const GError *error);
/* Prints a usage error (INVALID_ARGUMENT) and returns 2. */
int                 sight_cli_usage_error   (const char   *command,
                                             const char   *format,
                                             ...) G_GNUC_PRINTF (2, 3);

/* Parses @argv with @entries under a translated summary; on failure prints
 * the usage error and returns FALSE. */
gboolean            sight_cli_parse         (const char   *command,
                                             const char   *parameter_string,
                                             GOptionEntry *entries,
                                             int          *argc,
                                             char       ***argv,
                                             int          *exit_status);

G_END_DECLS
