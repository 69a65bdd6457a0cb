/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* What one `sightline …` run of a test left: its exit status and output. */
typedef struct {
  int   status;
  char *out;
  char *err;
} CliRun;

void cli_run_clear (CliRun *run);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (CliRun, cli_run_clear)

typedef struct {
  const char         *cwd;        /* NULL: the test's own */
  const char * const *set_env;    /* NAME, value, NAME, value, …, NULL; or NULL */
  const char * const *unset_env;  /* names, NULL-terminated; or NULL */
  guint               timeout_s;  /* 0: 60 */
} CliOptions;

/* Runs $SIGHTLINE_BIN with @args (NULL-terminated) while this thread's main
 * context keeps turning, so that servers of the test (the demo site, the
 * scripted model) answer it. Fills @run (clearing what it held); fails the
 * test when the command does not end within the timeout or ends by a signal
 * (with its stderr). */
void cli_run_argv       (CliRun             *run,
                         const CliOptions   *options,
                         const char * const *args);
void cli_run            (CliRun             *run,
                         const CliOptions   *options,
                         const char         *first,
                         ...) G_GNUC_NULL_TERMINATED;
/* `sightline ARGS…` with its store in @data_dir and no model configured. */
void cli_run_with_store (CliRun             *run,
                         const char         *data_dir,
                         const char         *first,
                         ...) G_GNUC_NULL_TERMINATED;

G_END_DECLS
