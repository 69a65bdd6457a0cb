/* SPDX-License-Identifier: GPL-3.0-or-later */
/* scripted-model-server: the scripted model server on its own, for demos,
 * benchmarks and tests that run the sightline command.
 *
 *   scripted-model-server --script FILE [--port N] [--record FILE] [--api-key KEY]
 *
 * Prints "OPENAI_BASE_URL=… ANTHROPIC_BASE_URL=…" on one line once
 * listening, then serves until SIGINT or SIGTERM. The script format is
 * documented at the top of sight-scripted-model.h. */
#define G_LOG_DOMAIN "scripted-model-server"

#include "config.h"

#include <glib-unix.h>
#include <stdio.h>

#include "sight-scripted-model.h"

static gboolean
quit_cb (gpointer user_data)
{
  g_main_loop_quit (user_data);
  return G_SOURCE_CONTINUE;
}

int
main (int    argc,
      char **argv)
{
  g_autofree char *script = NULL;
  g_autofree char *record = NULL;
  g_autofree char *api_key = NULL;
  int port = 0;
  GOptionEntry entries[] = {
    { "script", 's', 0, G_OPTION_ARG_FILENAME, &script, "The script (JSON)", "FILE" },
    { "port", 'p', 0, G_OPTION_ARG_INT, &port, "Port on 127.0.0.1 (default: a free one)", "N" },
    { "record", 'r', 0, G_OPTION_ARG_FILENAME, &record, "Append each request to FILE as JSON lines", "FILE" },
    { "api-key", 'k', 0, G_OPTION_ARG_STRING, &api_key, "Refuse requests without this key", "KEY" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("- answer model requests from a script");
  g_autoptr(GError) error = NULL;
  g_autoptr(SightScriptedModel) model = NULL;
  g_autoptr(GMainLoop) loop = NULL;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("scripted-model-server: %s\n", error->message);
      return 2;
    }
  if (port < 0 || port > 65535)
    {
      g_printerr ("scripted-model-server: --port must be 0-65535\n");
      return 2;
    }
  model = sight_scripted_model_new (port, &error);
  if (model == NULL)
    {
      g_printerr ("scripted-model-server: %s\n", error->message);
      return 1;
    }
  if (script != NULL && !sight_scripted_model_load_script_file (model, script, &error))
    {
      g_printerr ("scripted-model-server: %s: %s\n", script, error->message);
      return 2;
    }
  if (record != NULL)
    sight_scripted_model_set_record_file (model, record);
  if (api_key != NULL)
    sight_scripted_model_set_api_key (model, api_key);

  loop = g_main_loop_new (NULL, FALSE);
  g_unix_signal_add (SIGINT, quit_cb, loop);
  g_unix_signal_add (SIGTERM, quit_cb, loop);
  printf ("OPENAI_BASE_URL=%s ANTHROPIC_BASE_URL=%s\n",
          sight_scripted_model_get_openai_base_url (model),
          sight_scripted_model_get_anthropic_base_url (model));
  fflush (stdout);
  g_main_loop_run (loop);
  return 0;
}
