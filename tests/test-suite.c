/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <libsoup/soup.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "cli-test-common.h"
#include "sight-demo-site.h"
#include "sight-error.h"
#include "sight-report.h"
#include "sight-scripted-model.h"
#include "sight-secrets.h"
#include "sight-store.h"
#include "sight-suite.h"
#include "sight-trace-cache.h"

/* Suites of test files run for real: WebKit pages against the demo site and
 * a fixture server, the store on disk, and the sightline command. */

static SightDemoSite *site;
static SoupServer *fixture;
static char *fixture_url;
static guint flaky_requests;
static SightStore *store;
static char *dir;
static JsonNode *serial_result;   /* of the first test, for the JUnit one */

#define EXAMPLE(name) g_test_build_filename (G_TEST_DIST, "..", "examples", name, NULL)
#define FIXTURE(name) g_test_build_filename (G_TEST_DIST, "fixtures", "suite", name, NULL)

/* /flaky says "warming up" to every first request after a reset, then
 * "serving". */
static void
fixture_cb (SoupServer        *server,
            SoupServerMessage *msg,
            const char        *path,
            GHashTable        *query,
            gpointer           user_data)
{
  const char *body;

  if (g_str_equal (path, "/show-password"))
    {
      /* A password field with a "show password" toggle, and an echo of what was typed:
       * both put the value on screen outside any secure field. */
      body = "<!doctype html><html lang=en><title>Show password</title>"
             "<style>body{margin:0} input#pw{position:absolute;left:40px;top:40px;width:400px;"
             "height:60px;font-size:40px;border:0;padding:0;background:#fff;color:#000}"
             "#echo{position:absolute;left:40px;top:160px;margin:0;font-size:40px}"
             "label.t{position:absolute;left:40px;top:300px}</style>"
             "<label>Password <input id=pw type=password autocomplete=current-password></label>"
             "<p id=echo></p>"
             "<label class=t><input type=checkbox id=show> Show password</label><script>"
             "const pw = document.getElementById ('pw');"
             "pw.addEventListener ('input', () => {"
             " document.getElementById ('echo').textContent = 'You typed: ' + pw.value; });"
             "document.getElementById ('show').addEventListener ('change', e => {"
             " pw.type = e.target.checked ? 'text' : 'password'; });</script></html>";
      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "text/html", SOUP_MEMORY_STATIC, body, strlen (body));
      return;
    }
  if (g_str_equal (path, "/storage-set"))
    {
      /* A cookie from the server and from the script, and both storages. */
      body = "<!doctype html><html lang=en><title>Set</title><p id=o>Setting</p><script>"
             "document.cookie = 'script=1; path=/';"
             "localStorage.setItem ('k', '1'); sessionStorage.setItem ('k', '1');"
             "document.getElementById ('o').textContent = 'Stored';</script></html>";
      soup_message_headers_append (soup_server_message_get_response_headers (msg),
                                   "Set-Cookie", "served=1; Path=/; Max-Age=3600");
      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "text/html", SOUP_MEMORY_STATIC, body, strlen (body));
      return;
    }
  if (g_str_equal (path, "/storage-check"))
    {
      /* What this page's test finds: the cookie the request carried, and the
       * cookies and storages its script sees. */
      const char *cookie = soup_message_headers_get_one (
        soup_server_message_get_request_headers (msg), "Cookie");
      g_autofree char *escaped = g_markup_escape_text (cookie ? cookie : "none", -1);
      char *page = g_strdup_printf (
        "<!doctype html><html lang=en><title>Check</title><p id=o>Checking</p><script>"
        "document.getElementById ('o').textContent = 'server=%s script=' + "
        "(document.cookie || 'none') + ' local=' + (localStorage.getItem ('k') || 'none') + "
        "' session=' + (sessionStorage.getItem ('k') || 'none');</script></html>", escaped);

      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "text/html", SOUP_MEMORY_TAKE, page, strlen (page));
      return;
    }
  if (g_str_equal (path, "/paint"))
    {
      /* A click that turns the page red at once, in the click's own handler. */
      body = "<!doctype html><html lang=en><title>Paint</title>"
             "<style>html,body{margin:0;height:100%;background:#fff}</style>"
             "<p>Ready</p><button id=b>Paint</button><script>"
             "document.getElementById ('b').addEventListener ('click', () => {"
             " document.documentElement.style.background = '#f00';"
             " document.body.style.background = '#f00'; });</script></html>";
      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "text/html", SOUP_MEMORY_STATIC, body, strlen (body));
      return;
    }
  if (!g_str_equal (path, "/flaky"))
    {
      soup_server_message_set_status (msg, 404, NULL);
      return;
    }
  body = flaky_requests++ % 2 == 0
         ? "<!doctype html><html lang=en><title>Flaky</title><p>State: warming up</p></html>"
         : "<!doctype html><html lang=en><title>Flaky</title><p>State: serving</p></html>";
  soup_server_message_set_status (msg, 200, NULL);
  soup_server_message_set_response (msg, "text/html", SOUP_MEMORY_STATIC, body, strlen (body));
}

static void
done_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

static void
progress_cb (JsonObject *test,
             gpointer    user_data)
{
  g_assert_nonnull (json_object_get_string_member (test, "verdict"));
  (*(guint *) user_data)++;
}

static JsonNode *
run_suite (const char * const  *paths,
           const char          *args_json,
           GError             **error)
{
  g_autoptr(GPtrArray) files = sight_suite_load_files (paths, error);
  g_autoptr(JsonNode) args = json_from_string (args_json, NULL);
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(JsonNode) node = NULL;
  guint progressed = 0;

  g_assert_nonnull (files);
  g_assert_nonnull (args);
  if (!json_object_has_member (json_node_get_object (args), "baseUrl"))
    json_object_set_string_member (json_node_get_object (args), "baseUrl",
                                   sight_demo_site_get_url (site));
  sight_suite_run_async (store, files, json_node_get_object (args), progress_cb, &progressed,
                         NULL, done_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  node = sight_suite_run_finish (result, error);
  /* Progress came once per test that ran, as it ended. */
  if (node != NULL)
    g_assert_cmpint (progressed, ==,
                     json_object_get_int_member (json_node_get_object (node), "selected"));
  return g_steal_pointer (&node);
}

/* "name=verdict(code)" for every test, in order. */
static char *
verdicts (JsonNode *node)
{
  JsonArray *tests = json_object_get_array_member (json_node_get_object (node), "tests");
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < json_array_get_length (tests); i++)
    {
      JsonObject *test = json_array_get_object_element (tests, i);

      g_string_append_printf (out, "%s=%s(%s);", json_object_get_string_member (test, "name"),
                              json_object_get_string_member (test, "verdict"),
                              json_object_get_string_member_with_default (test, "code", ""));
    }
  return g_string_free (out, FALSE);
}

static JsonObject *
test_at (JsonNode *node,
         guint     index)
{
  return json_array_get_object_element (json_object_get_array_member (json_node_get_object (node),
                                                                      "tests"), index);
}

static const char *
first_run_id (JsonObject *test)
{
  return json_object_get_string_member (
    json_array_get_object_element (json_object_get_array_member (test, "attempts"), 0), "runId");
}

static void
write_json (const char *path,
            JsonNode   *node)
{
  g_autofree char *text = json_to_string (node, TRUE);
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_set_contents (path, text, -1, &error));
}

/* -------------------------------------------------------------- the CLI */

static void
assert_contains (const char *haystack,
                 const char *needle)
{
  if (haystack == NULL || strstr (haystack, needle) == NULL)
    g_error ("“%s” is not in “%s”", needle, haystack ? haystack : "(null)");
}

static char *
blank_test (const char *file,
            const char *name)
{
  char *path = g_build_filename (dir, file, NULL);
  g_autofree char *text = g_strdup_printf ("{ \"name\": \"%s\", "
                                           "\"steps\": [] }", name);

  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  return path;
}

/* ------------------------------------------------------------------ tests */

/* A passing example, a test with no steps and a fixture that fails on
 * purpose, run serially, with two workers and as two shards merged: the
 * same verdicts each time. */
static void
test_workers_and_shards_agree (void)
{
  g_autofree char *pricing = EXAMPLE ("pricing.sightline.json");
  g_autofree char *start = blank_test ("start.sightline.json", "The start page loads");
  g_autofree char *wrong = FIXTURE ("wrong-plan.sightline.json");
  const char *paths[] = { pricing, start, wrong, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) serial = NULL;
  g_autoptr(JsonNode) parallel = NULL;
  g_autoptr(JsonNode) shard1 = NULL;
  g_autoptr(JsonNode) shard2 = NULL;
  g_autoptr(JsonNode) merged = NULL;
  g_autoptr(GPtrArray) shards = g_ptr_array_new ();
  g_autoptr(SightRunData) failed = NULL;
  g_autoptr(SightRunData) first = NULL;
  g_autoptr(SightRunData) second = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *got = NULL;
  g_autofree char *a_path = g_build_filename (dir, "shard-1.json", NULL);
  g_autofree char *b_path = g_build_filename (dir, "shard-2.json", NULL);
  g_autofree char *report_dir = g_build_filename (dir, "merged", NULL);
  g_autofree char *junit_path = g_build_filename (dir, "merged.xml", NULL);
  g_autofree char *empty_store = g_build_filename (dir, "elsewhere", NULL);
  g_autofree char *html = NULL;
  g_autofree char *index_path = NULL;
  g_auto(CliRun) cli = { 0 };
  JsonObject *wrong_test;

  serial = run_suite (paths, "{}", &error);
  g_assert_no_error (error);
  expected = verdicts (serial);
  g_assert_cmpstr (expected, ==,
                   "The pricing page lists the plans=pass();"
                   "The start page loads=pass();"
                   "Fails on purpose: the pricing page has no free plan=fail(ASSERTION_FAILED);");
  g_assert_cmpint (sight_suite_exit_status (json_node_get_object (serial)), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (serial), "verdict"), ==,
                   "fail");
  serial_result = json_node_ref (serial);

  /* The failing test stopped at its failed step and skipped the rest; each
   * step has the page after it. */
  wrong_test = test_at (serial, 2);
  g_assert_cmpstr (json_object_get_string_member (wrong_test, "failedStep"), ==, "Step 3 (do)");
  assert_contains (json_object_get_string_member (wrong_test, "explanation"), "Free forever");
  failed = sight_store_load_run (store, first_run_id (wrong_test), &error);
  g_assert_no_error (error);
  g_assert_cmpstr (failed->run->kind, ==, "test");
  g_assert_cmpint (failed->run->verdict, ==, SIGHT_RUN_VERDICT_FAIL);
  g_assert_cmpuint (failed->steps->len, ==, 4);
  g_assert_cmpint (((SightStepRecord *) failed->steps->pdata[0])->verdict, ==, SIGHT_RUN_VERDICT_PASS);
  g_assert_cmpint (((SightStepRecord *) failed->steps->pdata[2])->verdict, ==, SIGHT_RUN_VERDICT_FAIL);
  g_assert_cmpstr (((SightStepRecord *) failed->steps->pdata[2])->code, ==, "ASSERTION_FAILED");
  g_assert_cmpint (((SightStepRecord *) failed->steps->pdata[3])->verdict, ==, SIGHT_RUN_VERDICT_SKIPPED);
  g_assert_cmpuint (failed->observations->len, >=, 3);
  g_assert_nonnull (((SightObservationRecord *) failed->observations->pdata[0])->screenshot);

  /* Two workers: the same verdicts, and two tests ran at once (the two
   * longest, which start first: the first and the last). */
  parallel = run_suite (paths, "{ \"workers\": 2 }", &error);
  g_assert_no_error (error);
  got = verdicts (parallel);
  g_assert_cmpstr (got, ==, expected);
  first = sight_store_load_run (store, first_run_id (test_at (parallel, 0)), &error);
  g_assert_no_error (error);
  second = sight_store_load_run (store, first_run_id (test_at (parallel, 2)), &error);
  g_assert_no_error (error);
  g_assert_cmpint (second->run->started_at, <, first->run->finished_at);
  g_assert_cmpint (first->run->started_at, <, second->run->finished_at);
  g_clear_pointer (&got, g_free);

  /* Two shards: contiguous shares, merged back in order. */
  shard1 = run_suite (paths, "{ \"shard\": \"1/2\" }", &error);
  g_assert_no_error (error);
  shard2 = run_suite (paths, "{ \"shard\": \"2/2\" }", &error);
  g_assert_no_error (error);
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (shard1), "selected"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (shard2), "selected"), ==, 2);
  g_assert_cmpint (sight_suite_exit_status (json_node_get_object (shard1)), ==, 0);
  g_ptr_array_add (shards, shard1);
  g_ptr_array_add (shards, shard2);
  merged = sight_suite_merge (shards, &error);
  g_assert_no_error (error);
  got = verdicts (merged);
  g_assert_cmpstr (got, ==, expected);
  g_assert_cmpint (sight_suite_exit_status (json_node_get_object (merged)), ==, 1);

  /* sightline merge-reports: the same verdicts and exit status, the HTML
   * report with the stored screenshots, and a JUnit file. */
  write_json (a_path, shard1);
  write_json (b_path, shard2);
  cli_run_with_store (&cli, dir, "merge-reports", b_path, a_path, "--report", report_dir,
                      "--junit", junit_path, NULL);
  g_assert_cmpint (cli.status, ==, 1);
  assert_contains (cli.out, "3 tests: 2 passed, 0 flaky, 1 failed, 0 could not run");
  index_path = g_build_filename (report_dir, "index.html", NULL);
  g_assert_true (g_file_get_contents (index_path, &html, NULL, NULL));
  assert_contains (html, "Fails on purpose: the pricing page has no free plan");
  assert_contains (html, "data:image/");
  g_assert_null (strstr (html, "Drawn from the JSON result"));
  g_assert_true (g_file_test (junit_path, G_FILE_TEST_EXISTS));
  cli_run_clear (&cli);
  g_clear_pointer (&html, g_free);

  /* Where the shards' store is not at hand, the report is drawn from the
   * JSON results, without screenshots. */
  cli_run_with_store (&cli, empty_store, "merge-reports", a_path, b_path, "--report",
                      report_dir, NULL);
  g_assert_cmpint (cli.status, ==, 1);
  g_assert_true (g_file_get_contents (index_path, &html, NULL, NULL));
  assert_contains (html, "Drawn from the JSON result");
  assert_contains (html, "Free forever");
  g_assert_null (strstr (html, "data:image/"));
  cli_run_clear (&cli);

  cli_run_with_store (&cli, dir, "merge-reports", index_path, NULL);
  g_assert_cmpint (cli.status, ==, 2);
  assert_contains (cli.err, "INVALID_ARGUMENT");
}

/* What GMarkup saw of a JUnit file. */
typedef struct {
  guint testcases;
  guint failures;
  guint flaky;
  char *tests_attr;
  char *failures_attr;
} JUnit;

static void
junit_start_cb (GMarkupParseContext  *context,
                const char           *element,
                const char          **names,
                const char          **values,
                gpointer              user_data,
                GError              **error)
{
  JUnit *junit = user_data;

  if (g_str_equal (element, "testcase"))
    junit->testcases++;
  else if (g_str_equal (element, "failure"))
    junit->failures++;
  else if (g_str_equal (element, "flakyFailure"))
    junit->flaky++;
  else if (g_str_equal (element, "testsuites"))
    for (guint i = 0; names[i] != NULL; i++)
      {
        if (g_str_equal (names[i], "tests"))
          junit->tests_attr = g_strdup (values[i]);
        else if (g_str_equal (names[i], "failures"))
          junit->failures_attr = g_strdup (values[i]);
      }
}

static void
parse_junit (JsonNode *result,
             JUnit    *junit)
{
  static const GMarkupParser parser = { junit_start_cb, NULL, NULL, NULL, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = sight_report_render_suite (json_node_get_object (result), NULL,
                                                       SIGHT_REPORT_JUNIT, &error);
  g_autoptr(GMarkupParseContext) context = NULL;
  gsize len;
  const char *text;

  g_assert_no_error (error);
  text = g_bytes_get_data (bytes, &len);
  g_assert_true (g_str_has_prefix (text, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"));
  /* GMarkup refuses the declaration: skip it, parse the rest strictly. */
  text = strchr (text, '\n') + 1;
  context = g_markup_parse_context_new (&parser, G_MARKUP_TREAT_CDATA_AS_TEXT, junit, NULL);
  if (!g_markup_parse_context_parse (context, text, -1, &error) ||
      !g_markup_parse_context_end_parse (context, &error))
    g_error ("the JUnit XML is not well-formed: %s\n%s", error->message, text);
}

/* A test that fails once and passes on a retry is flaky, not failed. */
static void
test_retries_make_flaky (void)
{
  g_autofree char *flaky = FIXTURE ("flaky.sightline.json");
  const char *paths[] = { flaky, NULL };
  g_autofree char *args = g_strdup_printf ("{ \"baseUrl\": \"%s\" }", fixture_url);
  g_autofree char *args_retry = g_strdup_printf ("{ \"baseUrl\": \"%s\", \"retries\": 2 }",
                                                 fixture_url);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) once = NULL;
  g_autoptr(JsonNode) retried = NULL;
  g_autofree char *got = NULL;
  JsonObject *test;
  JsonArray *attempts;
  JUnit junit = { 0 };

  flaky_requests = 0;
  once = run_suite (paths, args, &error);
  g_assert_no_error (error);
  got = verdicts (once);
  g_assert_cmpstr (got, ==, "Passes on the second try: the service warms up=fail(ASSERTION_FAILED);");
  g_assert_cmpint (sight_suite_exit_status (json_node_get_object (once)), ==, 1);

  flaky_requests = 0;
  retried = run_suite (paths, args_retry, &error);
  g_assert_no_error (error);
  test = test_at (retried, 0);
  g_assert_cmpstr (json_object_get_string_member (test, "verdict"), ==, "flaky");
  attempts = json_object_get_array_member (test, "attempts");
  /* It stopped retrying once it passed. */
  g_assert_cmpuint (json_array_get_length (attempts), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (attempts, 0),
                                                  "verdict"), ==, "fail");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (attempts, 1),
                                                  "verdict"), ==, "pass");
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (
                     json_node_get_object (retried), "counts"), "flaky"), ==, 1);
  g_assert_cmpint (sight_suite_exit_status (json_node_get_object (retried)), ==, 0);

  parse_junit (retried, &junit);
  g_assert_cmpuint (junit.testcases, ==, 1);
  g_assert_cmpuint (junit.failures, ==, 0);
  g_assert_cmpuint (junit.flaky, ==, 1);
  g_free (junit.tests_attr);
  g_free (junit.failures_attr);
}

/* JUnit of the failed suite of the first test parses and counts what the
 * result says. */
static void
test_junit_well_formed (void)
{
  JUnit junit = { 0 };

  if (serial_result == NULL)
    {
      g_test_skip ("the suite of /suite/workers-and-shards-agree did not run");
      return;
    }
  parse_junit (serial_result, &junit);
  g_assert_cmpuint (junit.testcases, ==, 3);
  g_assert_cmpuint (junit.failures, ==, 1);
  g_assert_cmpstr (junit.tests_attr, ==, "3");
  g_assert_cmpstr (junit.failures_attr, ==, "1");
  g_free (junit.tests_attr);
  g_free (junit.failures_attr);
}

static void
expect_bad_args (const char * const *paths,
                 const char         *args,
                 const char         *fragment)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) result = run_suite (paths, args, &error);

  g_assert_null (result);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
  assert_contains (error->message, fragment);
}

/* A direct step fills a credential of the project file by reference: the
 * value signs in, and reaches neither the store nor any report. */
static void
test_secret_param_stays_out (void)
{
  g_autofree char *folder = g_build_filename (dir, "secret", NULL);
  g_autofree char *project = g_build_filename (folder, "sightline.json", NULL);
  g_autofree char *path = g_build_filename (folder, "sign-in.sightline.json", NULL);
  g_autofree char *origin = g_strndup (sight_demo_site_get_url (site),
                                       strlen (sight_demo_site_get_url (site)) - 1);
  g_autofree char *project_text = g_strdup_printf (
    "{ \"credentials\": { \"member.password\": { \"purpose\": \"password\","
    "    \"allowedOrigins\": [\"%s\"], \"source\": { \"env\": \"SIGHT_SUITE_TEST_PASSWORD\" } } },"
    "  \"defaults\": { \"actionTimeout\": 5000 } }", origin);
  const char *test_text =
    "{ \"name\": \"Sign in with the stored password\", \"url\": \"/login\", \"steps\": ["
    "  { \"do\": \"type \\\"member@example.test\\\" into Email\" },"
    "  { \"do\": \"type {password} into Password\","
    "    \"params\": { \"password\": { \"secret\": \"member.password\" } } },"
    "  { \"do\": \"click the Sign in button\" },"
    "  { \"do\": \"expect text \\\"Northwind Logistics\\\"\" } ] }";
  const char *paths[] = { path, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) result = NULL;
  g_autoptr(SightRunData) data = NULL;
  g_autofree char *got = NULL;
  g_autofree char *suite_json = NULL;
  g_autoptr(GBytes) html = NULL;
  g_autoptr(GBytes) json = NULL;
  g_autoptr(GBytes) junit = NULL;

  g_assert_cmpint (g_mkdir_with_parents (folder, 0700), ==, 0);
  g_assert_true (g_file_set_contents (project, project_text, -1, NULL));
  g_assert_true (g_file_set_contents (path, test_text, -1, NULL));
  g_setenv ("SIGHT_SUITE_TEST_PASSWORD", SIGHT_DEMO_SITE_PASSWORD, TRUE);

  result = run_suite (paths, "{}", &error);
  g_assert_no_error (error);
  got = verdicts (result);
  g_assert_cmpstr (got, ==, "Sign in with the stored password=pass();");

  data = sight_store_load_run (store, first_run_id (test_at (result, 0)), &error);
  g_assert_no_error (error);
  g_assert_cmpstr (((SightStepRecord *) data->steps->pdata[2])->instruction, ==,
                   "type {password} into Password");
  for (guint i = 0; i < data->steps->len; i++)
    {
      SightStepRecord *step = data->steps->pdata[i];

      g_assert_null (strstr (step->instruction ? step->instruction : "", SIGHT_DEMO_SITE_PASSWORD));
      g_assert_null (strstr (step->explanation ? step->explanation : "", SIGHT_DEMO_SITE_PASSWORD));
    }
  html = sight_report_render (data, SIGHT_REPORT_HTML, &error);
  g_assert_no_error (error);
  json = sight_report_render (data, SIGHT_REPORT_JSON, &error);
  g_assert_no_error (error);
  junit = sight_report_render_suite (json_node_get_object (result), NULL, SIGHT_REPORT_JUNIT,
                                     &error);
  g_assert_no_error (error);
  suite_json = json_to_string (result, FALSE);
  g_assert_null (g_strstr_len (g_bytes_get_data (html, NULL), g_bytes_get_size (html),
                               SIGHT_DEMO_SITE_PASSWORD));
  g_assert_null (g_strstr_len (g_bytes_get_data (json, NULL), g_bytes_get_size (json),
                               SIGHT_DEMO_SITE_PASSWORD));
  g_assert_null (g_strstr_len (g_bytes_get_data (junit, NULL), g_bytes_get_size (junit),
                               SIGHT_DEMO_SITE_PASSWORD));
  g_assert_null (strstr (suite_json, SIGHT_DEMO_SITE_PASSWORD));
}

/* Whether one RGB pixel is of the kind a share counts. */
typedef gboolean (*PixelKind) (const guint8 *p);

static gboolean
is_dark (const guint8 *p)
{
  return p[0] < 40 && p[1] < 40 && p[2] < 40;
}

static gboolean
is_red (const guint8 *p)
{
  return p[0] > 200 && p[1] < 60 && p[2] < 60;
}

/* The pixels of @pixbuf in the CSS box that are of @kind, in thousandths. */
static guint
pixel_share (GdkPixbuf *pixbuf,
             double     scale,
             double     x,
             double     y,
             double     width,
             double     height,
             PixelKind  kind)
{
  guint counted = 0, all = 0;
  int channels = gdk_pixbuf_get_n_channels (pixbuf);
  int stride = gdk_pixbuf_get_rowstride (pixbuf);
  const guint8 *pixels = gdk_pixbuf_read_pixels (pixbuf);

  for (int py = (int) ceil (y * scale); py < (int) ((y + height) * scale); py++)
    for (int px = (int) ceil (x * scale); px < (int) ((x + width) * scale); px++)
      {
        all++;
        if (kind (pixels + py * stride + px * channels))
          counted++;
      }
  return all > 0 ? counted * 1000 / all : 0;
}

/* The example: a password credential aimed at the plain Email field is
 * refused (POLICY_DENIED, exit status 2) with nothing typed; and a password typed
 * into its own field is painted over in the stored screenshot after the page showed
 * it in clear: the field turned into a text field, and an echo of it. */
static void
test_secret_masked_when_shown (void)
{
  g_autofree char *folder = g_build_filename (dir, "shown", NULL);
  g_autofree char *project = g_build_filename (folder, "sightline.json", NULL);
  g_autofree char *denied = g_build_filename (folder, "email.sightline.json", NULL);
  g_autofree char *shown = g_build_filename (folder, "shown.sightline.json", NULL);
  g_autofree char *origin = g_strndup (sight_demo_site_get_url (site),
                                       strlen (sight_demo_site_get_url (site)) - 1);
  g_autofree char *fixture_origin = g_strndup (fixture_url, strlen (fixture_url) - 1);
  g_autofree char *project_text = g_strdup_printf (
    "{ \"credentials\": { \"member.password\": { \"purpose\": \"password\","
    "    \"allowedOrigins\": [\"%s\", \"%s\"], \"source\": { \"env\": \"SIGHT_SUITE_TEST_PASSWORD\" } } },"
    "  \"defaults\": { \"actionTimeout\": 3000 } }", origin, fixture_origin);
  const char *denied_text =
    "{ \"name\": \"A password into Email\", \"url\": \"/login\", \"steps\": ["
    "  { \"do\": \"type {password} into Email\","
    "    \"params\": { \"password\": { \"secret\": \"member.password\" } } } ] }";
  g_autofree char *shown_text = g_strdup_printf (
    "{ \"name\": \"The password shown\", \"url\": \"%sshow-password\", \"steps\": ["
    "  { \"do\": \"type {password} into Password\","
    "    \"params\": { \"password\": { \"secret\": \"member.password\" } } },"
    "  { \"do\": \"check Show password\" } ] }", fixture_url);
  const char *paths_denied[] = { denied, NULL };
  const char *paths_shown[] = { shown, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) result = NULL;
  g_autoptr(SightRunData) data = NULL;
  g_autofree char *got = NULL;
  SightObservationRecord *last = NULL;
  g_autoptr(GdkPixbufLoader) loader = gdk_pixbuf_loader_new ();
  GdkPixbuf *shot;

  g_assert_cmpint (g_mkdir_with_parents (folder, 0700), ==, 0);
  g_assert_true (g_file_set_contents (project, project_text, -1, NULL));
  g_assert_true (g_file_set_contents (denied, denied_text, -1, NULL));
  g_assert_true (g_file_set_contents (shown, shown_text, -1, NULL));
  g_setenv ("SIGHT_SUITE_TEST_PASSWORD", SIGHT_DEMO_SITE_PASSWORD, TRUE);

  result = run_suite (paths_denied, "{}", &error);
  g_assert_no_error (error);
  got = verdicts (result);
  g_assert_cmpstr (got, ==, "A password into Email=error(POLICY_DENIED);");
  g_assert_cmpint (sight_suite_exit_status (json_node_get_object (result)), ==, 2);
  data = sight_store_load_run (store, first_run_id (test_at (result, 0)), &error);
  g_assert_no_error (error);
  for (guint i = 0; i < data->observations->len; i++)
    {
      SightObservationRecord *obs = data->observations->pdata[i];

      /* nothing was typed: the stored tree of the page after the step has no value */
      g_assert_null (strstr (obs->tree_json ? obs->tree_json : "", "secret:"));
      g_assert_null (strstr (obs->tree_json ? obs->tree_json : "", SIGHT_DEMO_SITE_PASSWORD));
    }
  g_clear_pointer (&data, sight_run_data_free);
  g_clear_pointer (&result, json_node_unref);
  g_clear_pointer (&got, g_free);

  result = run_suite (paths_shown, "{}", &error);
  g_assert_no_error (error);
  got = verdicts (result);
  g_assert_cmpstr (got, ==, "The password shown=pass();");
  data = sight_store_load_run (store, first_run_id (test_at (result, 0)), &error);
  g_assert_no_error (error);
  for (guint i = 0; i < data->observations->len; i++)
    if (((SightObservationRecord *) data->observations->pdata[i])->screenshot != NULL)
      last = data->observations->pdata[i];
  g_assert_nonnull (last);
  g_assert_true (gdk_pixbuf_loader_write_bytes (loader, last->screenshot, &error));
  g_assert_true (gdk_pixbuf_loader_close (loader, &error));
  g_assert_no_error (error);
  shot = gdk_pixbuf_loader_get_pixbuf (loader);
  /* The field (a text field now, white with black text unmasked) and the echo's
   * run are painted over whole; the checkbox's label is not. */
  g_assert_cmpuint (pixel_share (shot, last->scale, 40, 40, 400, 60, is_dark), >, 990);
  g_assert_cmpuint (pixel_share (shot, last->scale, 320, 170, 200, 30, is_dark), >, 990);
  g_assert_cmpuint (pixel_share (shot, last->scale, 40, 300, 200, 20, is_dark), <, 500);
}

/* The page after each step is kept while the next step goes on: each step's
 * screenshot still shows the page as that step left it, not as the next
 * step's click made it, and every step has its screenshot when the run is
 * read back. */
static void
test_step_shots_in_order (void)
{
  g_autofree char *path = g_build_filename (dir, "paint.sightline.json", NULL);
  g_autofree char *text = g_strdup_printf (
    "{ \"name\": \"Paints\", \"url\": \"%spaint\", \"steps\": ["
    "  { \"do\": \"expect text \\\"Ready\\\"\" },"
    "  { \"do\": \"click the Paint button\" },"
    "  { \"do\": \"expect text \\\"Ready\\\"\" } ] }", fixture_url);
  const char *paths[] = { path, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) result = NULL;
  g_autoptr(SightRunData) data = NULL;
  g_autofree char *got = NULL;
  guint red[4] = { 0 };
  gboolean shot[4] = { FALSE };

  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  result = run_suite (paths, "{}", &error);
  g_assert_no_error (error);
  got = verdicts (result);
  g_assert_cmpstr (got, ==, "Paints=pass();");
  data = sight_store_load_run (store, first_run_id (test_at (result, 0)), &error);
  g_assert_no_error (error);
  for (guint i = 0; i < data->observations->len; i++)
    {
      SightObservationRecord *obs = data->observations->pdata[i];
      g_autoptr(GdkPixbufLoader) loader = gdk_pixbuf_loader_new ();

      if (obs->screenshot == NULL || obs->step_index < 0 || obs->step_index > 3 ||
          g_strcmp0 (obs->phase, "after") != 0)
        continue;
      g_assert_true (gdk_pixbuf_loader_write_bytes (loader, obs->screenshot, &error));
      g_assert_true (gdk_pixbuf_loader_close (loader, &error));
      g_assert_no_error (error);
      shot[obs->step_index] = TRUE;
      red[obs->step_index] = pixel_share (gdk_pixbuf_loader_get_pixbuf (loader), obs->scale,
                                          600, 300, 200, 200, is_red);
    }
  /* 0: the start page, 1: the first expectation, 2: the click, 3: the second */
  for (guint i = 0; i < 4; i++)
    g_assert_true (shot[i]);
  g_assert_cmpuint (red[0], <, 10);
  g_assert_cmpuint (red[1], <, 10);
  g_assert_cmpuint (red[2], >, 990);
  g_assert_cmpuint (red[3], >, 990);
}

/* A plain param typed into a password field is a secret from then on: the
 * stored options and every report have it masked, as a literal password. */
static void
test_plain_param_into_secure_field (void)
{
  g_autofree char *path = g_build_filename (dir, "plain-pin.sightline.json", NULL);
  const char *text =
    "{ \"name\": \"A plain param into Password\", \"url\": \"/login\", \"steps\": ["
    "  { \"do\": \"type {pin} into Password\", \"params\": { \"pin\": \"plain-pin-4821\" } },"
    "  { \"do\": \"type {who} into Email\", \"params\": { \"who\": \"member@example.test\" } } ] }";
  const char *paths[] = { path, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) result = NULL;
  g_autoptr(SightRunData) data = NULL;
  g_autoptr(GBytes) html = NULL;
  g_autoptr(GBytes) json = NULL;
  g_autofree char *got = NULL;
  SightStepRecord *pin, *who;

  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  result = run_suite (paths, "{}", &error);
  g_assert_no_error (error);
  got = verdicts (result);
  g_assert_cmpstr (got, ==, "A plain param into Password=pass();");
  data = sight_store_load_run (store, first_run_id (test_at (result, 0)), &error);
  g_assert_no_error (error);
  pin = data->steps->pdata[1];
  who = data->steps->pdata[2];
  g_assert_cmpstr (pin->instruction, ==, "type {pin} into Password");
  g_assert_nonnull (pin->options_json);
  g_assert_null (strstr (pin->options_json, "plain-pin-4821"));
  assert_contains (pin->options_json, "[secret:pin]");
  /* a plain field's param stays as it was */
  assert_contains (who->options_json, "member@example.test");
  html = sight_report_render (data, SIGHT_REPORT_HTML, &error);
  g_assert_no_error (error);
  json = sight_report_render (data, SIGHT_REPORT_JSON, &error);
  g_assert_no_error (error);
  g_assert_null (g_strstr_len (g_bytes_get_data (html, NULL), g_bytes_get_size (html),
                               "plain-pin-4821"));
  g_assert_null (g_strstr_len (g_bytes_get_data (json, NULL), g_bytes_get_size (json),
                               "plain-pin-4821"));
  sight_secrets_forget_all ();
}

/* The same for a plain param act types into a password field (the scripted
 * model fills it by ref): the stored options and every report have it masked. */
static void
test_act_plain_param_into_secure_field (void)
{
  g_autofree char *folder = g_build_filename (dir, "act-pin", NULL);
  g_autofree char *project = g_build_filename (folder, "sightline.json", NULL);
  g_autofree char *path = g_build_filename (folder, "act-pin.sightline.json", NULL);
  g_autoptr(SightScriptedModel) model = NULL;
  g_autofree char *project_text = NULL;
  g_autofree char *test_text = g_strdup_printf (
    "{ \"name\": \"Act types a plain param into Password\", \"url\": \"%sshow-password\","
    "  \"steps\": [ { \"act\": \"Type the PIN into Password\","
    "                 \"params\": { \"pin\": \"act-plain-pin-6170\" } } ] }", fixture_url);
  const char *paths[] = { path, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) result = NULL;
  g_autoptr(SightRunData) data = NULL;
  g_autoptr(GBytes) html = NULL;
  g_autoptr(GBytes) json = NULL;
  g_autofree char *got = NULL;
  SightStepRecord *pin;

  model = sight_scripted_model_new (0, &error);
  g_assert_no_error (error);
  project_text = g_strdup_printf ("{ \"agents\": { \"default\": { \"model\": \"openai:scripted\","
                                  " \"baseUrl\": \"%s\" } } }",
                                  sight_scripted_model_get_openai_base_url (model));
  sight_scripted_model_push (model, "{\"tool_calls\": [{\"name\": \"fill\", \"arguments\":"
                             " {\"ref\": \"e1\", \"param\": \"pin\"}}]}");
  sight_scripted_model_push (model, "{\"tool_calls\": [{\"name\": \"done\", \"arguments\":"
                             " {\"verdict\": \"pass\", \"summary\": \"typed\"}}]}");
  g_assert_cmpint (g_mkdir_with_parents (folder, 0700), ==, 0);
  g_assert_true (g_file_set_contents (project, project_text, -1, NULL));
  g_assert_true (g_file_set_contents (path, test_text, -1, NULL));
  result = run_suite (paths, "{}", &error);
  g_assert_no_error (error);
  got = verdicts (result);
  g_assert_cmpstr (got, ==, "Act types a plain param into Password=pass();");
  data = sight_store_load_run (store, first_run_id (test_at (result, 0)), &error);
  g_assert_no_error (error);
  pin = data->steps->pdata[1];
  g_assert_cmpstr (pin->kind, ==, "act");
  g_assert_nonnull (pin->options_json);
  g_assert_null (strstr (pin->options_json, "act-plain-pin-6170"));
  assert_contains (pin->options_json, "[secret:pin]");
  html = sight_report_render (data, SIGHT_REPORT_HTML, &error);
  g_assert_no_error (error);
  json = sight_report_render (data, SIGHT_REPORT_JSON, &error);
  g_assert_no_error (error);
  g_assert_null (g_strstr_len (g_bytes_get_data (html, NULL), g_bytes_get_size (html),
                               "act-plain-pin-6170"));
  g_assert_null (g_strstr_len (g_bytes_get_data (json, NULL), g_bytes_get_size (json),
                               "act-plain-pin-6170"));
  sight_secrets_forget_all ();
}

/* A test with a model step and no model fails before its first step runs,
 * direct steps included (spec: acquiring the fixture without a configured
 * model fails with MODEL_UNAVAILABLE); an act the trace cache can replay
 * needs no model. */
static void
test_model_acquisition (void)
{
  g_autofree char *folder = g_build_filename (dir, "no-model", NULL);
  g_autofree char *traces = g_build_filename (folder, "traces", NULL);
  g_autofree char *project_path = g_build_filename (folder, "sightline.json", NULL);
  g_autofree char *path = g_build_filename (folder, "needs-model.sightline.json", NULL);
  g_autofree char *project_text = g_strdup_printf ("{ \"traceCache\": \"%s\" }", traces);
  const char *text =
    "{ \"name\": \"Needs a model\", \"url\": \"/\", \"steps\": ["
    "  { \"do\": \"click Pricing\" },"
    "  { \"assert\": \"the pricing page lists three plans\" } ] }";
  const char *act_only =
    "{ \"name\": \"Replays\", \"steps\": ["
    "  { \"do\": \"click Pricing\" }, { \"act\": \"Open the pricing page\" } ] }";
  const char *paths[] = { path, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(SightProject) project = NULL;
  g_autoptr(SightTestFile) replays = NULL;
  g_autoptr(SightTraceCache) cache = NULL;
  g_autoptr(SightTrace) trace = NULL;
  g_autoptr(JsonNode) result = NULL;
  g_autoptr(SightRunData) data = NULL;
  g_autofree char *got = NULL;
  JsonObject *test;

  g_assert_cmpint (g_mkdir_with_parents (folder, 0700), ==, 0);
  g_assert_true (g_file_set_contents (project_path, project_text, -1, NULL));
  g_assert_true (g_file_set_contents (path, text, -1, NULL));

  /* An act with no trace needs the model; once its trace is cached, at any
   * start address, it does not. */
  project = sight_project_load (project_path, &error);
  g_assert_no_error (error);
  replays = sight_test_file_parse (path, act_only, -1, &error);
  g_assert_no_error (error);
  g_assert_false (sight_test_check_model (replays, project, NULL, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE);
  assert_contains (error->message, "step 2 of the test (act");
  assert_contains (error->message, "trace cache can replay");
  g_clear_error (&error);
  cache = sight_trace_cache_new (traces);
  trace = sight_trace_new ("default", "Open the pricing page", NULL,
                           "http://127.0.0.1:1/pricing", 1280, 720);
  g_assert_true (sight_trace_cache_save (cache, trace, &error));
  g_assert_no_error (error);
  g_assert_true (sight_test_check_model (replays, project, NULL, &error));
  g_assert_no_error (error);

  /* The assert needs a model: nothing runs, not even the click before it. */
  result = run_suite (paths, "{}", &error);
  g_assert_no_error (error);
  got = verdicts (result);
  g_assert_cmpstr (got, ==, "Needs a model=error(MODEL_UNAVAILABLE);");
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (result), "exitStatus"), ==, 5);
  test = test_at (result, 0);
  assert_contains (json_object_get_string_member (test, "explanation"),
                   "No step ran: step 2 of the test (assert");
  data = sight_store_load_run (store, first_run_id (test), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (data->steps->len, ==, 3);
  g_assert_cmpuint (data->run->n_steps_passed, ==, 0);
  g_assert_cmpuint (data->run->n_steps_skipped, ==, 3);
  g_assert_cmpstr (data->run->code, ==, "MODEL_UNAVAILABLE");
}

static const SightArtifactRecord *
step_artifact (SightRunData *data,
               guint         index)
{
  for (guint i = 0; i < data->artifacts->len; i++)
    if (((SightArtifactRecord *) data->artifacts->pdata[i])->step_index == (int) index)
      return data->artifacts->pdata[i];
  return NULL;
}

static const SightObservationRecord *
after_shot (SightRunData *data,
            guint         index)
{
  for (guint i = 0; i < data->observations->len; i++)
    {
      const SightObservationRecord *o = data->observations->pdata[i];

      if (o->step_index == (int) index && g_strcmp0 (o->phase, "after") == 0)
        return o;
    }
  return NULL;
}

/* Every ASSERTION_FAILED of a run carries its evidence (an assert's or a
 * direct expectation's): a screenshot stored as the step's artifact, kept as
 * a file, named by every report; none with screenshot: false (which also
 * keeps the page after the step without a screenshot) or once a secret was
 * filled in the attempt. */
static void
test_failure_evidence (void)
{
  g_autofree char *folder = g_build_filename (dir, "evidence", NULL);
  g_autofree char *project = g_build_filename (folder, "sightline.json", NULL);
  g_autofree char *a = g_build_filename (folder, "a-assert.sightline.json", NULL);
  g_autofree char *b = g_build_filename (folder, "b-no-shot.sightline.json", NULL);
  g_autofree char *c = g_build_filename (folder, "c-expect.sightline.json", NULL);
  g_autofree char *d = g_build_filename (folder, "d-tainted.sightline.json", NULL);
  g_autofree char *origin = g_strndup (sight_demo_site_get_url (site),
                                       strlen (sight_demo_site_get_url (site)) - 1);
  g_autoptr(SightScriptedModel) model = NULL;
  g_autofree char *project_text = NULL;
  const char *paths[] = { a, b, c, d, NULL };
  const char *judgment = "{\"json\": {\"verdict\": false, \"explanation\": "
                         "\"No unicorn is on the page.\", \"injection\": null}}";
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) result = NULL;
  g_autofree char *got = NULL;

  model = sight_scripted_model_new (0, &error);
  g_assert_no_error (error);
  project_text = g_strdup_printf (
    "{ \"agents\": { \"default\": { \"model\": \"openai:scripted\", \"baseUrl\": \"%s\" } },"
    "  \"credentials\": { \"member.password\": { \"purpose\": \"password\","
    "    \"allowedOrigins\": [\"%s\"], \"source\": { \"env\": \"SIGHT_SUITE_TEST_PASSWORD\" } } } }",
    sight_scripted_model_get_openai_base_url (model), origin);
  g_setenv ("SIGHT_SUITE_TEST_PASSWORD", SIGHT_DEMO_SITE_PASSWORD, TRUE);
  g_assert_cmpint (g_mkdir_with_parents (folder, 0700), ==, 0);
  g_assert_true (g_file_set_contents (project, project_text, -1, NULL));
  g_assert_true (g_file_set_contents (a, "{ \"name\": \"Assert\", \"url\": \"/\", \"steps\": ["
                                      "  { \"assert\": \"the page shows a unicorn\" } ] }", -1, NULL));
  g_assert_true (g_file_set_contents (b, "{ \"name\": \"No shot\", \"url\": \"/\", \"steps\": ["
                                      "  { \"assert\": \"the page shows a unicorn\","
                                      "    \"screenshot\": false } ] }", -1, NULL));
  g_assert_true (g_file_set_contents (c, "{ \"name\": \"Expect\", \"url\": \"/\", \"steps\": ["
                                      "  { \"do\": \"expect text \\\"Nobody wrote this\\\"\" } ] }",
                                      -1, NULL));
  g_assert_true (g_file_set_contents (d, "{ \"name\": \"Tainted\", \"url\": \"/login\", \"steps\": ["
                                      "  { \"do\": \"type {password} into Password\","
                                      "    \"params\": { \"password\": { \"secret\": \"member.password\" } } },"
                                      "  { \"do\": \"expect text \\\"Nobody wrote this\\\"\" } ] }",
                                      -1, NULL));
  sight_scripted_model_push (model, judgment);
  sight_scripted_model_push (model, judgment);

  result = run_suite (paths, "{}", &error);
  g_assert_no_error (error);
  got = verdicts (result);
  g_assert_cmpstr (got, ==, "Assert=fail(ASSERTION_FAILED);No shot=fail(ASSERTION_FAILED);"
                            "Expect=fail(ASSERTION_FAILED);Tainted=fail(ASSERTION_FAILED);");

  for (guint t = 0; t < 4; t++)
    {
      g_autoptr(SightRunData) data = sight_store_load_run (store, first_run_id (test_at (result, t)),
                                                           &error);
      guint failed = t == 3 ? 2 : 1;
      const SightArtifactRecord *artifact;
      g_autoptr(GBytes) json = NULL;
      g_autoptr(GBytes) junit = NULL;
      g_autoptr(GBytes) html = NULL;
      g_autofree char *text = NULL;
      g_autofree char *on_disk = NULL;
      gsize size = 0;

      g_assert_no_error (error);
      artifact = step_artifact (data, failed);
      json = sight_report_render (data, SIGHT_REPORT_JSON, &error);
      g_assert_no_error (error);
      junit = sight_report_render (data, SIGHT_REPORT_JUNIT, &error);
      g_assert_no_error (error);
      html = sight_report_render (data, SIGHT_REPORT_HTML, &error);
      g_assert_no_error (error);
      text = sight_report_text (data);
      if (t == 0 || t == 2)
        {
          g_autofree char *line = NULL;
          g_autofree char *attachment = NULL;

          g_assert_nonnull (artifact);
          g_assert_true (g_str_has_prefix (artifact->mime, "image/"));
          g_assert_true (g_str_has_suffix (artifact->path, "-evidence.jpg") ||
                         g_str_has_suffix (artifact->path, "-evidence.png") ||
                         g_str_has_suffix (artifact->path, "-evidence.webp"));
          g_assert_nonnull (strstr (artifact->path, first_run_id (test_at (result, t))));
          g_assert_true (g_file_get_contents (artifact->path, &on_disk, &size, NULL));
          g_assert_cmpuint (size, ==, g_bytes_get_size (artifact->data));
          g_assert_cmpint (memcmp (on_disk, g_bytes_get_data (artifact->data, NULL), size), ==, 0);
          line = g_strdup_printf ("(screenshot: %s)", artifact->path);
          assert_contains (text, line);
          g_assert_nonnull (g_strstr_len (g_bytes_get_data (json, NULL), g_bytes_get_size (json),
                                          artifact->path));
          attachment = g_strdup_printf ("[[ATTACHMENT|%s]]", artifact->path);
          g_assert_nonnull (g_strstr_len (g_bytes_get_data (junit, NULL),
                                          g_bytes_get_size (junit), attachment));
          g_assert_nonnull (g_strstr_len (g_bytes_get_data (html, NULL), g_bytes_get_size (html),
                                          artifact->path));
          /* the suite's result and its line for a terminal name it too */
          g_assert_cmpstr (json_object_get_string_member_with_default (test_at (result, t),
                                                                       "screenshot", NULL),
                           ==, artifact->path);
          {
            g_autofree char *shown = sight_suite_test_text (test_at (result, t));

            assert_contains (shown, artifact->path);
          }
        }
      else
        {
          g_assert_null (artifact);
          g_assert_false (json_object_has_member (test_at (result, t), "screenshot"));
          g_assert_null (strstr (text, "(screenshot: "));
          g_assert_null (g_strstr_len (g_bytes_get_data (junit, NULL), g_bytes_get_size (junit),
                                       "[[ATTACHMENT|"));
        }
      /* screenshot: false keeps the page after the step, without pixels */
      g_assert_nonnull (after_shot (data, failed));
      if (t == 1)
        g_assert_null (after_shot (data, failed)->screenshot);
      else
        g_assert_nonnull (after_shot (data, failed)->screenshot);
    }
  sight_secrets_forget_all ();
}

static void assert_no_web_process_left (void);

static void
cancel_cb (JsonObject *test,
           gpointer    user_data)
{
  g_cancellable_cancel (G_CANCELLABLE (user_data));
}

/* Interrupted (the command's SIGINT cancels the same way) when the first
 * test ends: the test in flight is recorded as interrupted, the one still
 * queued does not start, and the result still comes back; no web process is
 * left. (The first test's worker takes the next one, "Queued", as soon as
 * the first one's steps are over, before it ends: "Queued too" is the one
 * still queued then.) */
static void
test_interrupted (void)
{
  g_autofree char *quick = blank_test ("quick.sightline.json", "Quick");
  g_autofree char *sign_in = EXAMPLE ("sign-in.sightline.json");
  g_autofree char *queued = blank_test ("queued.sightline.json", "Queued");
  g_autofree char *queued_too = blank_test ("queued-too.sightline.json", "Queued too");
  const char *paths[] = { quick, sign_in, queued, queued_too, NULL };
  g_autoptr(GPtrArray) files = sight_suite_load_files (paths, NULL);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(JsonObject) args = json_object_new ();
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(SightRunData) data = NULL;
  g_autoptr(GError) error = NULL;
  JsonObject *test;

  json_object_set_int_member (args, "workers", 2);
  json_object_set_string_member (args, "baseUrl", sight_demo_site_get_url (site));
  sight_suite_run_async (store, files, args, cancel_cb, cancellable, cancellable, done_cb,
                         &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  node = sight_suite_run_finish (result, &error);
  g_assert_no_error (error);
  g_assert_true (json_object_get_boolean_member (json_node_get_object (node), "interrupted"));

  g_assert_cmpstr (json_object_get_string_member (test_at (node, 0), "verdict"), ==, "pass");
  test = test_at (node, 1);
  g_assert_cmpstr (json_object_get_string_member (test, "verdict"), ==, "error");
  g_assert_true (json_object_get_boolean_member (test, "interrupted"));
  data = sight_store_load_run (store, first_run_id (test), &error);
  g_assert_no_error (error);
  g_assert_cmpint (data->run->verdict, ==, SIGHT_RUN_VERDICT_INTERRUPTED);
  /* Its six steps and the load are all recorded, each once. */
  g_assert_cmpuint (data->steps->len, ==, 7);
  test = test_at (node, 3);
  g_assert_cmpstr (json_object_get_string_member (test, "verdict"), ==, "error");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (test, "attempts")), ==, 0);
  assert_contains (json_object_get_string_member (test, "explanation"), "Not run");
  /* Nor is the page made ready for it left open. */
  assert_no_web_process_left ();
}

/* --grep picks tests by name or file name; bad arguments name themselves.
 * The tests here open the start page and have no steps: selection is what is
 * checked. */
static void
test_grep_and_bad_arguments (void)
{
  g_autofree char *a = blank_test ("alpha.sightline.json", "Members sign in");
  g_autofree char *b = blank_test ("beta.sightline.json", "Visitors read the pricing");
  g_autofree char *c = blank_test ("gamma.sightline.json", "Members sign out");
  const char *paths[] = { a, b, c, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) result = run_suite (paths, "{ \"grep\": \"sign in$|^gamma\\\\.\" }",
                                          &error);
  g_autofree char *got = NULL;

  g_assert_no_error (error);
  got = verdicts (result);
  g_assert_cmpstr (got, ==, "Members sign in=pass();Members sign out=pass();");
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (result), "total"), ==, 3);
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (result), "selected"), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (result), "grep"), ==,
                   "sign in$|^gamma\\.");

  expect_bad_args (paths, "{ \"grep\": \"nothing like this\" }", "grep");
  expect_bad_args (paths, "{ \"grep\": \"(\" }", "grep: not a regular expression");
  expect_bad_args (paths, "{ \"workers\": 17 }", "workers");
  expect_bad_args (paths, "{ \"workers\": 0 }", "workers");
  expect_bad_args (paths, "{ \"retries\": 11 }", "retries");
  expect_bad_args (paths, "{ \"shard\": \"3/2\" }", "shard: must be I/N");
  expect_bad_args (paths, "{ \"shard\": \"0/2\" }", "shard");
  expect_bad_args (paths, "{ \"shard\": \"two\" }", "shard");
  expect_bad_args (paths, "{ \"baseUrl\": \"ftp://x/\" }", "baseUrl");
  expect_bad_args (paths, "{ \"wrokers\": 2 }", "wrokers");
}

/* A test that reads, after one that wrote */
static char *
storage_test (const char *file,
              const char *name,
              const char *path,
              const char *expected)
{
  char *test_path = g_build_filename (dir, file, NULL);
  g_autofree char *text = g_strdup_printf ("{ \"name\": \"%s\", \"url\": \"%s%s\", "
                                           "\"steps\": [ { \"do\": \"expect text \\\"%s\\\"\" } ] }",
                                           name, fixture_url, path, expected);

  g_assert_true (g_file_set_contents (test_path, text, -1, NULL));
  return test_path;
}

/* The web processes this test program started that are still there (a
 * page's runs under bubblewrap, a child of a child). */
static guint
count_web_processes (void)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  g_autoptr(GHashTable) parents = g_hash_table_new (NULL, NULL);
  g_autoptr(GArray) web = g_array_new (FALSE, FALSE, sizeof (int));
  const char *name;
  guint count = 0;

  g_assert_nonnull (proc);
  while ((name = g_dir_read_name (proc)) != NULL)
    {
      g_autofree char *stat_path = g_build_filename ("/proc", name, "stat", NULL);
      g_autofree char *stat = NULL;
      const char *open_paren, *close_paren;
      int pid = atoi (name), ppid;

      if (pid <= 0 || !g_file_get_contents (stat_path, &stat, NULL, NULL))
        continue;
      open_paren = strchr (stat, '(');
      close_paren = strrchr (stat, ')');
      if (open_paren == NULL || close_paren == NULL || sscanf (close_paren + 2, "%*c %d", &ppid) != 1)
        continue;
      g_hash_table_insert (parents, GINT_TO_POINTER (pid), GINT_TO_POINTER (ppid));
      if (g_str_has_prefix (open_paren + 1, "WebKitWebProces"))
        g_array_append_val (web, pid);
    }
  for (guint i = 0; i < web->len; i++)
    for (int pid = g_array_index (web, int, i); pid > 1;
         pid = GPOINTER_TO_INT (g_hash_table_lookup (parents, GINT_TO_POINTER (pid))))
      if (pid == getpid ())
        {
          count++;
          break;
        }
  return count;
}

/* Once a suite has returned, no web process of its pages is left (a closed
 * page's takes a moment to exit). One may stay: the code before the spare
 * page left one too, 10 s after every page was closed (WebKit keeps a
 * process for the next page); a spare page left open would be a second. */
static void
assert_no_web_process_left (void)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  while (count_web_processes () > 1 && g_get_monotonic_time () < deadline)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (20000);
  g_assert_cmpuint (count_web_processes (), <=, 1);
}

/* Every test has a page of its own, whether its web process was started
 * while the test before it ran or not: what one test stored (cookies from
 * the server and from a script, local and session storage) is not there for
 * the next, with one worker and with two. And the page made ready for a
 * next test is closed with the suite: once it has returned, no web process
 * it started is left, whichever test ended it. */
static void
test_tests_isolated (void)
{
  g_autofree char *set1 = storage_test ("set1.sightline.json", "Writes", "storage-set", "Stored");
  g_autofree char *check1 = storage_test ("check1.sightline.json", "Reads", "storage-check",
                                          "server=none script=none local=none session=none");
  g_autofree char *set2 = storage_test ("set2.sightline.json", "Writes again", "storage-set",
                                        "Stored");
  g_autofree char *check2 = storage_test ("check2.sightline.json", "Reads again", "storage-check",
                                          "server=none script=none local=none session=none");
  const char *paths[] = { set1, check1, set2, check2, NULL };
  const char *args[] = { "{ \"workers\": 1 }", "{ \"workers\": 2 }" };

  for (guint i = 0; i < G_N_ELEMENTS (args); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonNode) result = run_suite (paths, args[i], &error);
      g_autofree char *got = NULL;

      g_assert_no_error (error);
      got = verdicts (result);
      g_assert_cmpstr (got, ==, "Writes=pass();Reads=pass();Writes again=pass();"
                                "Reads again=pass();");
      assert_no_web_process_left ();
    }
}

/* When the run of @test (its first attempt's) started. */
static gint64
run_started_at (JsonObject *test)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightRunData) data = sight_store_load_run (store, first_run_id (test), &error);

  g_assert_no_error (error);
  return data->run->started_at;
}

/* With two workers the longest test starts first, whatever its place in
 * the suite: two tests with no steps come before one with four in name
 * order, and the long one starts with the first short one, before the
 * second. With one worker the order is the suite's. The result lists the
 * tests in the suite's order either way. */
static void
test_longest_first (void)
{
  g_autofree char *a = blank_test ("a-short.sightline.json", "Short A");
  g_autofree char *b = blank_test ("b-short.sightline.json", "Short B");
  g_autofree char *c = g_build_filename (dir, "c-long.sightline.json", NULL);
  const char *check = "{ \"do\": \"expect text \\\"Ready\\\"\" }";
  g_autofree char *text = g_strdup_printf ("{ \"name\": \"Long C\", \"url\": \"%spaint\", "
                                           "\"steps\": [ %s, %s, %s, %s ] }",
                                           fixture_url, check, check, check, check);
  const char *paths[] = { a, b, c, NULL };
  const char *args[] = { "{ \"workers\": 1 }", "{ \"workers\": 2 }" };

  g_assert_true (g_file_set_contents (c, text, -1, NULL));
  for (guint i = 0; i < G_N_ELEMENTS (args); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonNode) result = run_suite (paths, args[i], &error);
      g_autofree char *got = NULL;
      gint64 short_b, long_c;

      g_assert_no_error (error);
      got = verdicts (result);
      g_assert_cmpstr (got, ==, "Short A=pass();Short B=pass();Long C=pass();");
      short_b = run_started_at (test_at (result, 1));
      long_c = run_started_at (test_at (result, 2));
      if (i == 0)
        g_assert_cmpint (short_b, <, long_c);
      else
        g_assert_cmpint (long_c, <, short_b);
    }
}

/* One worker runs one test's steps at a time, but once a test's steps are
 * over its worker starts the next test while the run is finished (its last
 * screenshot, the store): the second run starts before the first one is
 * finished, and its first step after the first run's last step. */
static void
test_next_starts_while_finishing (void)
{
  g_autofree char *a = storage_test ("first.sightline.json", "First", "paint", "Ready");
  g_autofree char *b = storage_test ("second.sightline.json", "Second", "paint", "Ready");
  const char *paths[] = { a, b, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) result = run_suite (paths, "{ \"workers\": 1 }", &error);
  g_autoptr(SightRunData) first = NULL;
  g_autoptr(SightRunData) second = NULL;
  g_autofree char *got = NULL;
  SightStepRecord *last, *next;

  g_assert_no_error (error);
  got = verdicts (result);
  g_assert_cmpstr (got, ==, "First=pass();Second=pass();");
  first = sight_store_load_run (store, first_run_id (test_at (result, 0)), &error);
  g_assert_no_error (error);
  second = sight_store_load_run (store, first_run_id (test_at (result, 1)), &error);
  g_assert_no_error (error);
  g_assert_cmpint (second->run->started_at, <, first->run->finished_at);
  last = g_ptr_array_index (first->steps, first->steps->len - 1);
  next = g_ptr_array_index (second->steps, 0);
  g_assert_cmpint (last->finished_at, >, 0);
  g_assert_cmpint (last->finished_at, <=, next->started_at);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSList) uris = NULL;
  g_autofree char *path = NULL;
  int status;

  gtk_test_init (&argc, &argv, NULL);
  dir = g_dir_make_tmp ("sight-suite-XXXXXX", &error);
  g_assert_no_error (error);
  /* The command's default store is this one, so merge-reports finds the
   * screenshots of the runs made here. */
  path = g_build_filename (dir, "sightline.db", NULL);
  store = sight_store_new (path, &error);
  g_assert_no_error (error);
  site = sight_demo_site_new ();
  g_assert_true (sight_demo_site_start (site, 0, &error));
  fixture = soup_server_new (NULL, NULL);
  soup_server_add_handler (fixture, NULL, fixture_cb, NULL, NULL);
  g_assert_true (soup_server_listen_local (fixture, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error));
  uris = soup_server_get_uris (fixture);
  fixture_url = g_uri_to_string (uris->data);
  g_slist_free_full (g_steal_pointer (&uris), (GDestroyNotify) g_uri_unref);

  g_test_add_func ("/suite/workers-and-shards-agree", test_workers_and_shards_agree);
  g_test_add_func ("/suite/retries-make-flaky", test_retries_make_flaky);
  g_test_add_func ("/suite/junit-well-formed", test_junit_well_formed);
  g_test_add_func ("/suite/grep-and-bad-arguments", test_grep_and_bad_arguments);
  g_test_add_func ("/suite/secret-param-stays-out", test_secret_param_stays_out);
  g_test_add_func ("/suite/secret-masked-when-shown", test_secret_masked_when_shown);
  g_test_add_func ("/suite/plain-param-into-secure-field", test_plain_param_into_secure_field);
  g_test_add_func ("/suite/act-plain-param-into-secure-field",
                   test_act_plain_param_into_secure_field);
  g_test_add_func ("/suite/interrupted", test_interrupted);
  g_test_add_func ("/suite/model-acquisition", test_model_acquisition);
  g_test_add_func ("/suite/failure-evidence", test_failure_evidence);
  g_test_add_func ("/suite/tests-isolated", test_tests_isolated);
  g_test_add_func ("/suite/longest-first", test_longest_first);
  g_test_add_func ("/suite/next-starts-while-finishing", test_next_starts_while_finishing);
  g_test_add_func ("/suite/step-shots-in-order", test_step_shots_in_order);
  status = g_test_run ();

  g_clear_pointer (&serial_result, json_node_unref);
  g_clear_object (&store);
  g_clear_object (&site);
  g_clear_object (&fixture);
  return status;
}
