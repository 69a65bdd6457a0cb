/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-cli"

#include "config.h"

#include "sight-cli.h"

#include <glib/gi18n.h>
#include <stdio.h>

#include "sight-commands.h"
#include "sight-error.h"
#include "sight-web-page.h"

/* How long a command's web processes get to end after it (within the second
 * an MCP client gives the server after its input ends). */
#define ENGINE_EXIT_MS 500

static const SightCommand commands[] = {
  { "version", N_("Print the version"), sight_cmd_version, FALSE },
  { "run", N_("Run test files headless and report"), sight_cmd_run, TRUE },
  { "merge-reports", N_("Combine the JSON results of shards into one report"),
    sight_cmd_merge_reports, FALSE },
  { "scrape", N_("Load a page and return its content"), sight_cmd_scrape, TRUE },
  { "crawl", N_("Crawl a site from a page"), sight_cmd_crawl, TRUE },
  { "pdf", N_("Print a page to PDF"), sight_cmd_pdf, TRUE },
  { "smoke", N_("Smoke-test a page or a short flow and report"), sight_cmd_smoke, TRUE },
  { "task", N_("Give the agent a goal on a page and print its answer"), sight_cmd_task, TRUE },
  { "screenshot", N_("Take a screenshot of a URL, headless"), sight_cmd_screenshot, TRUE },
  { "demo-site", N_("Serve the bundled demo site on 127.0.0.1"), sight_cmd_demo_site, FALSE },
  { "export", N_("Write a test file as a Playwright or @e2edev/e2e test"), sight_cmd_export, FALSE },
  { "mcp", N_("Serve the MCP tools on standard input and output"), sight_cmd_mcp, FALSE },
  /* It starts the display itself: asking a running app needs none. */
  { "serve", N_("Serve the MCP tools over HTTP on 127.0.0.1"), sight_cmd_serve, FALSE },
  { "snapshot", N_("Print the observation of a page: its accessibility tree as the model sees it"),
    sight_cmd_snapshot, TRUE },
  { "act", N_("Carry out one task on a page with the agent"), sight_cmd_act, TRUE },
  { "assert", N_("Judge once whether a page meets a condition"), sight_cmd_assert, TRUE },
  { "wait-for", N_("Observe a page until a condition holds"), sight_cmd_wait_for, TRUE },
  { "extract", N_("Read a value that follows a JSON Schema from a page"), sight_cmd_extract, TRUE },
  { "runs", N_("List the stored runs"), sight_cmd_runs, FALSE },
  { "skills", N_("List the skills and where user skills are read from"), sight_cmd_skills, FALSE },
  { "report", N_("Write the report of a stored run: HTML, JSON or JUnit"), sight_cmd_report, FALSE },
};

const SightCommand *
sight_cli_commands (guint *n_commands)
{
  *n_commands = G_N_ELEMENTS (commands);
  return commands;
}

const SightCommand *
sight_cli_lookup (const char *name)
{
  if (name == NULL)
    return NULL;
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    if (g_str_equal (commands[i].name, name))
      return &commands[i];
  return NULL;
}

int
sight_cli_run (const SightCommand *command,
               int                 argc,
               char              **argv)
{
  int status = command->func (argc, argv);

  /* What a command starts ends with it: a sandbox that outlived it would
   * keep its data folder busy. */
  if (!sight_web_page_process_wait_exit (g_get_monotonic_time () + ENGINE_EXIT_MS * 1000))
    g_debug ("the browser engine's processes did not end within %d ms", ENGINE_EXIT_MS);
  return status;
}

int
sight_cli_report_error (const GError *error)
{
  g_autofree char *line = sight_error_format (error);

  g_printerr ("%s\n", line);
  return sight_error_exit_status (error);
}

int
sight_cli_usage_error (const char *command,
                       const char *format,
                       ...)
{
  g_autofree char *message = NULL;
  g_autoptr(GError) error = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);

  error = g_error_new (SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "%s %s: %s",
                       g_get_prgname (), command, message);
  return sight_cli_report_error (error);
}

gboolean
sight_cli_parse (const char    *command,
                 const char    *parameter_string,
                 GOptionEntry  *entries,
                 int           *argc,
                 char        ***argv,
                 int           *exit_status)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;

  context = g_option_context_new (parameter_string);
  g_option_context_set_translation_domain (context, GETTEXT_PACKAGE);
  g_option_context_add_main_entries (context, entries, GETTEXT_PACKAGE);
  if (!g_option_context_parse (context, argc, argv, &error))
    {
      *exit_status = sight_cli_usage_error (command, "%s", error->message);
      return FALSE;
    }
  return TRUE;
}
