/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-cmd-task"

#include "config.h"

#include <glib/gi18n.h>

#include "sight-cli.h"
#include "sight-cli-args.h"
#include "sight-commands.h"
#include "sight-error.h"
#include "sight-store.h"
#include "sight-task.h"

static const SightArgSpec task_specs[] = {
  { "start-url", "startUrl", SIGHT_ARG_STRING, N_("The page to open first") },
  { "max-steps", "maxSteps", SIGHT_ARG_INT, N_("Actions the agent may take, 1 to 50 (default 25)") },
  { NULL }
};

static void
finished_cb (SightTask *task,
             gboolean  *done)
{
  *done = TRUE;
  sight_cli_wake ();
}

typedef struct {
  SightTask *task;
  gboolean   finished;
} Waiting;

static gboolean
task_done (gpointer user_data)
{
  Waiting *waiting = user_data;

  return sight_task_is_finished (waiting->task) && waiting->finished;
}

int
sight_cmd_task (int    argc,
                char **argv)
{
  g_auto(SightArgs) args = { 0 };
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SightStore) store = NULL;
  g_autoptr(SightTask) task = NULL;
  g_autofree char *text = NULL;
  SightErrorCode code;
  Waiting waiting = { NULL, FALSE };
  guint n;
  int status;

  if (!sight_args_parse ("task", "[URL] GOAL", task_specs, FALSE, argc, argv, &args, &status))
    return status;
  n = g_strv_length (args.positional);
  if (n == 2 && !json_object_has_member (args.args, "startUrl"))
    {
      json_object_set_string_member (args.args, "startUrl", args.positional[0]);
      json_object_set_string_member (args.args, "goal", args.positional[1]);
    }
  else if (n == 1)
    json_object_set_string_member (args.args, "goal", args.positional[0]);
  else
    return sight_cli_usage_error ("task", _("give a URL and a GOAL, or a GOAL and --start-url"));

  store = sight_store_new (NULL, &error);
  if (store == NULL)
    return sight_cli_report_error (error);

  sight_task_start_async (store, args.args, NULL, sight_cli_result_cb, &result);
  task = sight_task_start_finish (sight_cli_wait (&result), &error);
  if (task == NULL)
    return sight_cli_report_error (error);
  waiting.task = task;
  g_signal_connect (task, "finished", G_CALLBACK (finished_cb), &waiting.finished);
  sight_cli_run_until (task_done, &waiting);

  if (args.json)
    {
      g_autoptr(JsonNode) record = sight_task_to_json (task);

      text = sight_cli_json_text (record);
    }
  else
    text = sight_task_text (task);
  g_print ("%s\n", text);

  if (sight_task_get_code (task) == NULL)
    return 0;
  if (sight_error_code_from_string (sight_task_get_code (task), &code))
    return sight_error_code_exit_status (code);
  return 70;
}
