/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "cli-test-common.h"
#include "sight-demo-site.h"
#include "sight-direct-run.h"
#include "sight-store.h"

/* `sightline run` as a person or CI calls it: its exit statuses, its output
 * and its files, against the demo site served here. */

static SightDemoSite *site;
static char *dir;

#define EXAMPLE(name) g_test_build_filename (G_TEST_DIST, "..", "examples", name, NULL)
#define FIXTURE(name) g_test_build_filename (G_TEST_DIST, "fixtures", "suite", name, NULL)

static void
assert_contains (const char *haystack,
                 const char *needle)
{
  if (haystack == NULL || strstr (haystack, needle) == NULL)
    g_error ("“%s” is not in “%s”", needle, haystack ? haystack : "(null)");
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
  g_auto(CliRun) cli = { 0 };
  guint16 port;

  cli_run_with_store (&cli, dir, "run", NULL);
  g_assert_cmpint (cli.status, ==, 2);
  cli_run_clear (&cli);
  cli_run_with_store (&cli, dir, "run", pricing, "--wrokers", "2", NULL);
  g_assert_cmpint (cli.status, ==, 2);
  assert_contains (cli.err, "INVALID_ARGUMENT");
  cli_run_clear (&cli);
  cli_run_with_store (&cli, dir, "run", pricing, "--workers", "99", NULL);
  g_assert_cmpint (cli.status, ==, 2);
  assert_contains (cli.err, "workers");
  cli_run_clear (&cli);

  /* The comma on line 4 is a syntax error; nothing runs. */
  cli_run_with_store (&cli, dir, "run", pricing, syntax, NULL);
  g_assert_cmpint (cli.status, ==, 2);
  assert_contains (cli.err, "INVALID_ARGUMENT: syntax-error.sightline.json: line 4, column 30: ");
  cli_run_clear (&cli);

  /* A relative start address needs --base-url. */
  g_assert_true (g_file_set_contents (relative, "{ \"url\": \"/pricing\", \"steps\": [] }", -1,
                                      NULL));
  cli_run_with_store (&cli, dir, "run", relative, NULL);
  g_assert_cmpint (cli.status, ==, 2);
  assert_contains (cli.err, "--base-url");
  cli_run_clear (&cli);

  cli_run_with_store (&cli, dir, "run", pricing, "--base-url", sight_demo_site_get_url (site),
                      "--json", "--report", report, "--junit", junit, NULL);
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
  cli_run_clear (&cli);

  /* No model is configured: the test fails before its first step (5),
   * naming the step that needs one; its direct steps did not run. */
  cli_run_with_store (&cli, dir, "run", model, "--base-url", sight_demo_site_get_url (site), NULL);
  g_assert_cmpint (cli.status, ==, 5);
  assert_contains (cli.out, "error  The dashboard shows the trial badge");
  assert_contains (cli.out, "The test: MODEL_UNAVAILABLE: No step ran: step 4 of the test "
                            "(assert) needs a model, and no model is configured");
  assert_contains (cli.out, "nor does an act that the trace cache can replay");
  cli_run_clear (&cli);

  /* Nothing listens on the start page's port: the environment (3). */
  port = g_socket_listener_add_any_inet_port (listener, NULL, NULL);
  g_socket_listener_close (listener);
  text = g_strdup_printf ("{ \"url\": \"http://127.0.0.1:%u/\", \"steps\": "
                          "[ { \"do\": \"click Pricing\" } ] }", port);
  g_assert_true (g_file_set_contents (unreachable, text, -1, NULL));
  cli_run_with_store (&cli, dir, "run", unreachable, NULL);
  g_assert_cmpint (cli.status, ==, 3);
  assert_contains (cli.out, "ENVIRONMENT_UNAVAILABLE");
}


/* A folder stands for the test files in it; one that does not parse stops
 * everything. */
static void
test_folder_with_a_broken_file (void)
{
  g_autofree char *fixtures = g_test_build_filename (G_TEST_DIST, "fixtures", "suite", NULL);
  g_auto(CliRun) cli = { 0 };

  cli_run_with_store (&cli, dir, "run", fixtures, NULL);
  g_assert_cmpint (cli.status, ==, 2);
  assert_contains (cli.err, "syntax-error.sightline.json: line 4, column 30");
  g_assert_true (cli.out == NULL || *cli.out == '\0');
}

/* Whether the file at @path holds @needle anywhere in its bytes (a missing
 * file holds nothing). */
static gboolean
file_holds (const char *path,
            const char *needle)
{
  g_autofree char *data = NULL;
  gsize len = 0;

  if (!g_file_get_contents (path, &data, &len, NULL))
    return FALSE;
  for (gsize i = 0; i + strlen (needle) <= len; i++)
    if (memcmp (data + i, needle, strlen (needle)) == 0)
      return TRUE;
  return FALSE;
}

/* The sign-in example types its password literally into the password field:
 * the step passes, and the value reaches neither the database (the step's
 * text is kept with the value masked) nor the reports nor the output. */
static void
test_literal_secret_stays_out (void)
{
  g_autofree char *sign_in = EXAMPLE ("sign-in.sightline.json");
  g_autofree char *store_dir = g_build_filename (dir, "literal", NULL);
  g_autofree char *db = g_build_filename (store_dir, "sightline.db", NULL);
  g_autofree char *wal = g_build_filename (store_dir, "sightline.db-wal", NULL);
  g_autofree char *report = g_build_filename (store_dir, "sign-in.html", NULL);
  g_autofree char *junit = g_build_filename (store_dir, "sign-in.xml", NULL);
  g_autofree char *written = NULL;
  g_autoptr(SightStore) store = NULL;
  g_autoptr(SightRunData) data = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) json = NULL;
  g_autoptr(GPtrArray) runs = NULL;
  g_auto(CliRun) cli = { 0 };

  /* The example does type the password literally (else this proves nothing). */
  g_assert_true (g_file_get_contents (sign_in, &written, NULL, NULL));
  assert_contains (written, "type \\\"" SIGHT_DEMO_SITE_PASSWORD "\\\" into Password");

  g_assert_cmpint (g_mkdir_with_parents (store_dir, 0700), ==, 0);
  cli_run_with_store (&cli, store_dir, "run", sign_in, "--base-url",
                      sight_demo_site_get_url (site), "--report", report, "--junit", junit,
                      "--json", NULL);
  g_assert_cmpint (cli.status, ==, 0);
  json = json_from_string (cli.out, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (json), "verdict"), ==,
                   "pass");

  g_assert_false (file_holds (db, SIGHT_DEMO_SITE_PASSWORD));
  g_assert_false (file_holds (wal, SIGHT_DEMO_SITE_PASSWORD));
  g_assert_true (g_file_test (report, G_FILE_TEST_EXISTS));
  g_assert_false (file_holds (report, SIGHT_DEMO_SITE_PASSWORD));
  g_assert_true (g_file_test (junit, G_FILE_TEST_EXISTS));
  g_assert_false (file_holds (junit, SIGHT_DEMO_SITE_PASSWORD));
  g_assert_null (strstr (cli.out, SIGHT_DEMO_SITE_PASSWORD));
  g_assert_null (strstr (cli.err, SIGHT_DEMO_SITE_PASSWORD));

  /* The step is kept, passed, with the value masked. */
  store = sight_store_new (db, &error);
  g_assert_no_error (error);
  runs = sight_store_list_runs (store, 10, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (runs->len, ==, 1);
  data = sight_store_load_run (store, ((SightRunRecord *) runs->pdata[0])->id, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < data->steps->len; i++)
    {
      SightStepRecord *step = data->steps->pdata[i];

      if (g_strcmp0 (step->instruction, "type \"" SIGHT_DIRECT_SECRET_MASK "\" into Password") == 0)
        {
          g_assert_cmpint (step->verdict, ==, SIGHT_RUN_VERDICT_PASS);
          return;
        }
    }
  g_error ("no step kept the masked text");
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
  g_test_add_func ("/run-cmd/literal-secret-stays-out", test_literal_secret_stays_out);
  status = g_test_run ();

  g_clear_object (&site);
  return status;
}
