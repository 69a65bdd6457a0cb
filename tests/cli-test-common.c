/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "cli-test-common"

#include "config.h"

#include "cli-test-common.h"

#define DEFAULT_TIMEOUT_S 60

void
cli_run_clear (CliRun *run)
{
  g_clear_pointer (&run->out, g_free);
  g_clear_pointer (&run->err, g_free);
}

static void
communicate_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

/* Empty output is "", not NULL. */
static char *
bytes_to_string (GBytes *bytes)
{
  gsize size = 0;
  const char *data = bytes != NULL ? g_bytes_get_data (bytes, &size) : NULL;

  return data != NULL ? g_strndup (data, size) : g_strdup ("");
}

void
cli_run_argv (CliRun             *run,
              const CliOptions   *options,
              const char * const *args)
{
  static const CliOptions defaults = { 0 };
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) err = NULL;
  const char *bin = g_getenv ("SIGHTLINE_BIN");
  guint timeout_s;
  gint64 deadline;

  if (options == NULL)
    options = &defaults;
  timeout_s = options->timeout_s > 0 ? options->timeout_s : DEFAULT_TIMEOUT_S;
  g_assert_nonnull (bin);
  g_assert_nonnull (args[0]);
  cli_run_clear (run);

  g_ptr_array_add (argv, (char *) bin);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (char *) args[i]);
  g_ptr_array_add (argv, NULL);

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                        G_SUBPROCESS_FLAGS_STDERR_PIPE);
  if (options->cwd != NULL)
    g_subprocess_launcher_set_cwd (launcher, options->cwd);
  for (guint i = 0; options->set_env != NULL && options->set_env[i] != NULL; i += 2)
    {
      g_assert_nonnull (options->set_env[i + 1]);
      g_subprocess_launcher_setenv (launcher, options->set_env[i], options->set_env[i + 1], TRUE);
    }
  for (guint i = 0; options->unset_env != NULL && options->unset_env[i] != NULL; i++)
    g_subprocess_launcher_unsetenv (launcher, options->unset_env[i]);
  process = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);

  deadline = g_get_monotonic_time () + timeout_s * G_USEC_PER_SEC;
  g_subprocess_communicate_async (process, NULL, NULL, communicate_cb, &result);
  while (result == NULL && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  if (result == NULL)
    {
      g_subprocess_force_exit (process);
      g_error ("sightline %s did not end within %u s", args[0], timeout_s);
    }
  g_subprocess_communicate_finish (process, result, &out, &err, &error);
  g_assert_no_error (error);
  run->out = bytes_to_string (out);
  run->err = bytes_to_string (err);
  if (!g_subprocess_get_if_exited (process))
    g_error ("sightline %s ended by signal %d; its stderr: %s", args[0],
             g_subprocess_get_term_sig (process), run->err);
  run->status = g_subprocess_get_exit_status (process);
  g_test_message ("sightline %s: exit %d\nstdout: %s\nstderr: %s", args[0], run->status,
                  run->out, run->err);
}

static void
run_valist (CliRun           *run,
            const CliOptions *options,
            const char       *first,
            va_list           ap)
{
  g_autoptr(GPtrArray) args = g_ptr_array_new ();

  for (const char *arg = first; arg != NULL; arg = va_arg (ap, const char *))
    g_ptr_array_add (args, (char *) arg);
  g_ptr_array_add (args, NULL);
  cli_run_argv (run, options, (const char * const *) args->pdata);
}

void
cli_run (CliRun           *run,
         const CliOptions *options,
         const char       *first,
         ...)
{
  va_list ap;

  va_start (ap, first);
  run_valist (run, options, first, ap);
  va_end (ap);
}

void
cli_run_with_store (CliRun     *run,
                    const char *data_dir,
                    const char *first,
                    ...)
{
  const char * const set_env[] = { "SIGHTLINE_DATA_DIR", data_dir, NULL };
  /* A model-step example must meet no model. */
  const char * const unset_env[] = { "SIGHTLINE_MODEL", NULL };
  const CliOptions options = { NULL, set_env, unset_env, 50 };
  va_list ap;

  va_start (ap, first);
  run_valist (run, &options, first, ap);
  va_end (ap);
}
