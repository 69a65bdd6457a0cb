/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sightline"

#include "config.h"

#include <glib/gi18n.h>
#include <gtk/gtk.h>
#include <locale.h>
#include <string.h>

#include "sight-application.h"
#include "sight-cli.h"
#include "sight-error.h"
#include "sight-graphics.h"
#include "sight-headless.h"
#include "sight-secrets.h"

static void
print_help (void)
{
  const SightCommand *commands;
  guint n_commands;

  g_print ("%s\n  sightline [URL]\n  sightline %s\n\n", _("Usage:"),
           /* Translators: the placeholders of the usage line */
           _("COMMAND [OPTION…]"));
  g_print ("%s\n\n", _("Author, run and inspect AI-driven browser tests. With no command, "
                       "the app opens; a command runs headless."));
  g_print ("%s\n", _("Commands:"));
  commands = sight_cli_commands (&n_commands);
  for (guint i = 0; i < n_commands; i++)
    g_print ("  %-14s %s\n", commands[i].name, _(commands[i].summary));
  g_print ("\n%s\n", _("Run “sightline COMMAND --help” for a command’s options."));
}

static gboolean
looks_like_command (const char *arg)
{
  return arg[0] != '-' && strchr (arg, ':') == NULL && strchr (arg, '/') == NULL &&
         strchr (arg, '.') == NULL;
}

static gboolean
wants_help (int    argc,
            char **argv)
{
  for (int i = 2; i < argc; i++)
    {
      if (g_str_equal (argv[i], "--"))
        break;
      if (g_str_equal (argv[i], "--help") || g_str_equal (argv[i], "-h") ||
          g_str_has_prefix (argv[i], "--help-"))
        return TRUE;
    }
  return FALSE;
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(SightApplication) app = NULL;
  const char *localedir;

  setlocale (LC_ALL, "");
  /* SIGHTLINE_LOCALEDIR lets the build tree's tests and a relocated install
   * find the catalogs; the compiled-in LOCALEDIR serves everyone else. */
  localedir = g_getenv ("SIGHTLINE_LOCALEDIR");
  if (localedir == NULL || *localedir == '\0')
    localedir = LOCALEDIR;
  bindtextdomain (GETTEXT_PACKAGE, localedir);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
  g_set_prgname ("sightline");
  /* Log messages go to standard error only, so G_MESSAGES_DEBUG never mixes
   * with a command's output (--json), and pass through the secrets' redaction:
   * a registered secret's value is never written to a log. */
  g_log_writer_default_set_use_stderr (TRUE);
  g_log_set_writer_func (sight_secrets_log_writer, NULL, NULL);
  /* Before anything starts a thread or a window. */
  sight_graphics_choose_renderer ();

  if (argc > 1 && (g_str_equal (argv[1], "--help") || g_str_equal (argv[1], "-h") ||
                   g_str_equal (argv[1], "help")))
    {
      print_help ();
      return 0;
    }
  if (argc > 1 && g_str_equal (argv[1], "--version"))
    return sight_cli_lookup ("version")->func (argc - 1, argv + 1);

  if (argc > 1 && looks_like_command (argv[1]))
    {
      const SightCommand *command = sight_cli_lookup (argv[1]);

      if (command == NULL)
        {
          g_printerr (_("INVALID_ARGUMENT: unknown command “%s”; run “sightline --help”\n"),
                      argv[1]);
          return 2;
        }
      /* A command's --help needs no display: shells call it to complete flags. */
      if (command->needs_display && !wants_help (argc, argv))
        {
          g_autoptr(GError) error = NULL;

          if (!sight_headless_start (&error))
            return sight_cli_report_error (error);
        }
      return sight_cli_run (command, argc - 1, argv + 1);
    }

  /* The window too owns what it starts: a session bus of its own where
   * there is none (a bare X server, a container), not an autolaunched one
   * that would outlive it. */
  sight_headless_ensure_session_bus ();
  app = sight_application_new ();
  return g_application_run (G_APPLICATION (app), argc, argv);
}
