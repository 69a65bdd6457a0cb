/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Commands that front a tool share its argument names: `--wait-until load`
 * becomes { "waitUntil": "load" }. Each flag is declared once here. */
typedef enum {
  SIGHT_ARG_STRING,
  SIGHT_ARG_INT,
  SIGHT_ARG_BOOL,     /* --name, --no-name, or --name=true|false */
  SIGHT_ARG_LIST,     /* comma-separated, repeatable: a JSON array of strings */
  SIGHT_ARG_REPEAT,   /* repeatable, each occurrence one item of a JSON array */
} SightArgType;

typedef struct {
  const char   *flag;     /* kebab-case, without the dashes */
  const char   *name;     /* the tool's argument name */
  SightArgType  type;
  const char   *help;     /* translatable, N_() */
} SightArgSpec;

typedef struct {
  JsonObject *args;         /* the tool's arguments */
  char      **positional;   /* what is not a flag, in order */
  gboolean    json;         /* --json */
  char       *output;       /* --output FILE, when the command takes it */
} SightArgs;

void      sight_args_clear (SightArgs *args);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SightArgs, sight_args_clear)

/* Parses @argv (argv[0] is the command) against @specs (terminated by a NULL
 * flag). --help prints the usage and returns FALSE with *exit_status 0; a
 * bad flag prints INVALID_ARGUMENT and returns FALSE with *exit_status 2. */
gboolean  sight_args_parse (const char         *command,
                            const char         *usage,
                            const SightArgSpec *specs,
                            gboolean            takes_output,
                            int                 argc,
                            char              **argv,
                            SightArgs          *out,
                            int                *exit_status);

/* A command runs its asynchronous work with one top-level main loop:
 * sight_cli_run_until () runs it until @done says the work finished, and
 * whatever changes the answer calls sight_cli_wake () so that it is asked
 * again. Only at top level (a command's body), never from a callback. */
typedef gboolean (*SightCliDoneFunc) (gpointer user_data);

void          sight_cli_run_until (SightCliDoneFunc  done,
                                   gpointer          user_data);
void          sight_cli_wake      (void);

/* A GAsyncReadyCallback that keeps the result in the GAsyncResult * that
 * @user_data points to; sight_cli_wait () runs the loop until it is set. */
void          sight_cli_result_cb (GObject       *source,
                                   GAsyncResult  *result,
                                   gpointer       user_data);
GAsyncResult *sight_cli_wait      (GAsyncResult **result);

/* Writes @bytes to @path through a temporary name and a rename. */
gboolean  sight_cli_write_file (const char  *path,
                                GBytes      *bytes,
                                GError     **error);

/* @node as pretty JSON text. */
char     *sight_cli_json_text  (JsonNode    *node);
/* Prints @text (and a newline) on stdout, or writes it to @output when set. */
gboolean  sight_cli_emit_text  (const char  *output,
                                const char  *text,
                                GError     **error);

G_END_DECLS
