/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A helper of test-store: writes runs into the store at argv[1] in a loop
 * until it is killed. It prints "R" once the store is open, so the test can
 * kill it in the middle of writing, and "C" after each complete run. Each run is named "steps=N" after the
 * number of steps it will have when complete. */
#define G_LOG_DOMAIN "test-store-writer"

#include "config.h"

#include <stdio.h>
#include <unistd.h>

#include "sight-store.h"
#include "sight-store-sync.h"


int
main (int    argc,
      char **argv)
{
  g_autoptr(SightStore) store = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) shot = NULL;
  guint8 pixels[3000];

  if (argc < 2)
    return 2;
  store = sight_store_new (argv[1], &error);
  if (store == NULL)
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }
  for (guint i = 0; i < sizeof pixels; i++)
    pixels[i] = (guint8) g_random_int ();
  shot = g_bytes_new (pixels, sizeof pixels);
  if (write (STDOUT_FILENO, "R", 1) != 1)
    return 1;

  for (;;)
    {
      /* Short runs too, so that some complete between kills. */
      guint n_steps = g_random_int_range (1, 6);
      g_autofree char *name = g_strdup_printf ("steps=%u", n_steps);
      SightRunRecord run = { .kind = (char *) "test", .name = name,
                             .url = (char *) "http://127.0.0.1/" };
      g_autofree char *id = sight_store_open_run (store, &run, &error);

      if (id == NULL)
        return 1;
      for (guint i = 0; i < n_steps; i++)
        {
          SightStepRecord step = { .run_id = id, .index = i, .kind = (char *) "act",
                                   .instruction = (char *) "click Next" };
          SightObservationRecord obs = { .run_id = id, .step_index = i,
                                         .phase = (char *) "after",
                                         .tree_json = (char *) "{\"role\":\"document\"}",
                                         .tree_text = (char *) "document\n  button \"Next\" [e1]",
                                         .screenshot = shot,
                                         .screenshot_mime = (char *) "image/jpeg",
                                         .width = 40, .height = 25, .scale = 1 };
          SightLogRecord log = { .run_id = id, .step_index = i, .kind = (char *) "console",
                                 .level = (char *) "info", .text = (char *) "step" };

          if (!sight_store_add_step (store, &step, &error) ||
              !sight_store_add_observation (store, &obs, &error) ||
              !sight_store_add_log (store, &log, &error))
            return 1;
          step.verdict = SIGHT_RUN_VERDICT_PASS;
          step.actions = 1;
          if (!sight_store_finish_step (store, &step, &error))
            return 1;
        }
      run.id = id;
      run.verdict = SIGHT_RUN_VERDICT_PASS;
      if (!sight_store_finish_run (store, &run, &error) ||
          write (STDOUT_FILENO, "C", 1) != 1)
        return 1;
    }
  return 0;
}
