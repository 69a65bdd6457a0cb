/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "sight-demo-site.h"

/* `sightline run` as a person or CI calls it: its exit statuses, its output
 * and its files, against the demo site served here. */

static SightDemoSite *site;
static char *dir;

static char *
source_path (const char *first,
             ...)
{
  g_autoptr(GPtrArray) parts = g_ptr_array_new ();
  va_list ap;

  g_ptr_array_add (parts, (char *) g_getenv ("G_TEST_SRCDIR"));
  va_start (ap, first);
  for (const char *p = first; p != NULL; p = va_arg (ap, const char *))
    g_ptr_array_add (parts, (char *) p);
  va_end (ap);
  g_ptr_array_add (parts, NULL);
  return g_build_filenamev ((char **) parts->pdata);
}

#define EXAMPLE(name) source_path ("..", "examples", name, NULL)
#define FIXTURE(name) source_path ("fixtures", "suite", name, NULL)

static void
done_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

static void
assert_contains (const char *haystack,
                 const char *needle)
{
  if (haystack == NULL || strstr (haystack, needle) == NULL)
    g_error ("“%s” is not in “%s”", needle, haystack ? haystack : "(null)");
}

typedef struct {
  int   status;
  char *out;
  char *err;
} Cli;

static void
cli_clear (Cli *cli)
{
  g_clear_pointer (&cli->out, g_free);
  g_clear_pointer (&cli->err, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Cli, cli_clear)

/* Runs `sightline ARGS…` with the store in @data_dir while the demo site
 * answers on this thread. */
static void
run_cli (Cli        *cli,
         const char *data_dir,
         const char *first,
         ...)
{
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) err = NULL;
  gint64 deadline = g_get_monotonic_time () + 50 * G_USEC_PER_SEC;
  va_list ap;

  g_ptr_array_add (args, (char *) g_getenv ("SIGHTLINE_BIN"));
  va_start (ap, first);
  for (const char *arg = first; arg != NULL; arg = va_arg (ap, const char *))
    g_ptr_array_add (args, (char *) arg);
  va_end (ap);
  g_ptr_array_add (args, NULL);

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                        G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_setenv (launcher, "SIGHTLINE_DATA_DIR", data_dir, TRUE);
  /* The model-step example must meet no model. */
  g_subprocess_launcher_unsetenv (launcher, "SIGHTLINE_MODEL");
  process = g_subprocess_launcher_spawnv (launcher, (const char * const *) args->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_async (process, NULL, NULL, done_cb, &result);
  while (result == NULL && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_nonnull (result);
  g_subprocess_communicate_finish (process, result, &out, &err, &error);
  g_assert_no_error (error);
  cli->status = g_subprocess_get_exit_status (process);
  cli->out = g_strndup (g_bytes_get_data (out, NULL), g_bytes_get_size (out));
  cli->err = g_strndup (g_bytes_get_data (err, NULL), g_bytes_get_size (err));
  g_test_message ("exit %d\nstdout: %s\nstderr: %s", cli->status, cli->out, cli->err);
}

/* The command's exit statuses: 0, 1 (above), 2, 3 and 5, and a syntax
 * error that names its line and column. */
static void
test_cli_exit_statuses (void)
{
  g_autofree char *pricing = EXAMPLE ("pricing.sightline.json");
  g_autofree char *model = EXAMPLE ("dashboard-with-model.sightline.json");
  g_autofree char *syntax = FIXTURE ("syntax-error.sightline.json");
  g_autofree char *report = g_build_filename (dir, "pricing.html", NULL);
  g_autofree char *junit = g_build_filename (dir, "pricing.xml", NULL);
  g_autofree char *unreachable = g_build_filename (dir, "unreachable.sightline.json", NULL);
  g_autofree char *relative = g_build_filename (dir, "relative.sightline.json", NULL);
  g_autoptr(GSocketListener) listener = g_socket_listener_new ();
  g_autoptr(JsonNode) json = NULL;
  g_autofree char *text = NULL;
  g_autofree char *html = NULL;
  g_auto(Cli) cli = { 0 };
  guint16 port;

  run_cli (&cli, dir, "run", NULL);
  g_assert_cmpint (cli.status, ==, 2);
  cli_clear (&cli);
  run_cli (&cli, dir, "run", pricing, "--wrokers", "2", NULL);
  g_assert_cmpint (cli.status, ==, 2);
  assert_contains (cli.err, "INVALID_ARGUMENT");
  cli_clear (&cli);
  run_cli (&cli, dir, "run", pricing, "--workers", "99", NULL);
  g_assert_cmpint (cli.status, ==, 2);
  assert_contains (cli.err, "workers");
  cli_clear (&cli);

  /* The comma on line 4 is a syntax error; nothing runs. */
  run_cli (&cli, dir, "run", pricing, syntax, NULL);
  g_assert_cmpint (cli.status, ==, 2);
  assert_contains (cli.err, "INVALID_ARGUMENT: syntax-error.sightline.json: line 4, column 30: ");
  cli_clear (&cli);

  /* A relative start address needs --base-url. */
  g_assert_true (g_file_set_contents (relative, "{ \"url\": \"/pricing\", \"steps\": [] }", -1,
                                      NULL));
  run_cli (&cli, dir, "run", relative, NULL);
  g_assert_cmpint (cli.status, ==, 2);
  assert_contains (cli.err, "--base-url");
  cli_clear (&cli);

  run_cli (&cli, dir, "run", pricing, "--base-url", sight_demo_site_get_url (site), "--json",
           "--report", report, "--junit", junit, NULL);
  g_assert_cmpint (cli.status, ==, 0);
  json = json_from_string (cli.out, NULL);
  g_assert_nonnull (json);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (json), "verdict"), ==,
                   "pass");
  g_assert_true (g_file_get_contents (report, &html, NULL, NULL));
  assert_contains (html, "The pricing page lists the plans");
  assert_contains (html, "Content-Security-Policy");
  g_assert_true (g_file_test (junit, G_FILE_TEST_EXISTS));
  assert_contains (cli.err, "HTML report: ");
  cli_clear (&cli);

  /* No model is configured: the model step says so and the test could not
   * run to a result (5), with its direct steps done. */
  run_cli (&cli, dir, "run", model, "--base-url", sight_demo_site_get_url (site), NULL);
  g_assert_cmpint (cli.status, ==, 5);
  assert_contains (cli.out, "error  The dashboard shows the trial badge");
  assert_contains (cli.out, "Step 5 (assert): MODEL_UNAVAILABLE: no model is configured");
  cli_clear (&cli);

  /* Nothing listens on the start page's port: the environment (3). */
  port = g_socket_listener_add_any_inet_port (listener, NULL, NULL);
  g_socket_listener_close (listener);
  text = g_strdup_printf ("{ \"url\": \"http://127.0.0.1:%u/\", \"steps\": "
                          "[ { \"do\": \"click Pricing\" } ] }", port);
  g_assert_true (g_file_set_contents (unreachable, text, -1, NULL));
  run_cli (&cli, dir, "run", unreachable, NULL);
  g_assert_cmpint (cli.status, ==, 3);
  assert_contains (cli.out, "ENVIRONMENT_UNAVAILABLE");
}


/* A folder stands for the test files in it; one that does not parse stops
 * everything. */
static void
test_folder_with_a_broken_file (void)
{
  g_autofree char *fixtures = source_path ("fixtures", "suite", NULL);
  g_auto(Cli) cli = { 0 };

  run_cli (&cli, dir, "run", fixtures, NULL);
  g_assert_cmpint (cli.status, ==, 2);
  assert_contains (cli.err, "syntax-error.sightline.json: line 4, column 30");
  g_assert_true (cli.out == NULL || *cli.out == '\0');
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  dir = g_dir_make_tmp ("sight-run-cmd-XXXXXX", &error);
  g_assert_no_error (error);
  site = sight_demo_site_new ();
  g_assert_true (sight_demo_site_start (site, 0, &error));

  g_test_add_func ("/run-cmd/exit-statuses", test_cli_exit_statuses);
  g_test_add_func ("/run-cmd/folder-with-a-broken-file", test_folder_with_a_broken_file);
  status = g_test_run ();

  g_clear_object (&site);
  return status;
}
