/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <string.h>

#include "sight-demo-site.h"
#include "sight-error.h"
#include "sight-smoke.h"
#include "sight-store.h"

static SightDemoSite *site;
static SightStore *store;
static char *dir;

static void
done_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

static JsonNode *
run_smoke (const char  *json,
           GError     **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GAsyncResult) result = NULL;
  g_auto(GStrv) parts = g_strsplit (json, "SITE/", -1);
  g_autofree char *text = g_strjoinv (sight_demo_site_get_url (site), parts);

  g_assert_true (json_parser_load_from_data (parser, text, -1, NULL));
  sight_smoke_test_async (store, json_node_get_object (json_parser_get_root (parser)), NULL,
                          done_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  return sight_smoke_test_finish (result, error);
}

static JsonObject *
report_step (JsonObject *report,
             guint       index)
{
  return json_array_get_object_element (json_object_get_array_member (report, "steps"), index);
}

static void
test_sign_in_flow_passes (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = run_smoke (
    "{ \"url\": \"SITE/login\", \"maxLinks\": 0,"
    "  \"steps\": [\"type \\\"member@example.test\\\" into Email\","
    "              \"type \\\"harbor-trial-2024\\\" into Password\","
    "              \"click the Sign in button\"],"
    "  \"expectText\": \"Trial\", \"expectUrl\": \"/dashboard\","
    "  \"expectNoText\": \"Invalid password\" }", &error);
  JsonObject *object;
  const char *text;
  g_autofree char *all = NULL;
  g_autoptr(SightRunData) data = NULL;
  gboolean masked = FALSE;

  g_assert_no_error (error);
  object = json_node_get_object (node);
  text = json_object_get_string_member (object, "text");
  if (!g_str_equal (json_object_get_string_member (object, "verdict"), "pass"))
    g_error ("expected a pass: %s", text);
  g_assert_true (g_str_has_prefix (text, "Smoke test of "));
  g_assert_nonnull (strstr (text, " PASSED in "));
  g_assert_true (g_str_has_prefix (json_object_get_string_member (object, "runId"), "run_"));

  /* The password typed literally into the password field is kept masked:
   * in the stored steps and in the report the result carries. */
  all = json_to_string (node, FALSE);
  g_assert_null (strstr (all, "harbor-trial-2024"));
  data = sight_store_load_run (store, json_object_get_string_member (object, "runId"), &error);
  g_assert_no_error (error);
  for (guint i = 0; i < data->steps->len; i++)
    {
      SightStepRecord *step = data->steps->pdata[i];

      g_assert_null (strstr (step->label ? step->label : "", "harbor-trial-2024"));
      g_assert_null (strstr (step->instruction ? step->instruction : "", "harbor-trial-2024"));
      if (g_strcmp0 (step->instruction, "type \"[secret]\" into Password") == 0)
        {
          g_assert_cmpint (step->verdict, ==, SIGHT_RUN_VERDICT_PASS);
          masked = TRUE;
        }
    }
  g_assert_true (masked);
}

static void
test_broken_link_and_failed_step_in_one_report (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = run_smoke (
    "{ \"url\": \"SITE/\", \"steps\": [\"click the Launch rockets button\", \"click Pricing\"],"
    "  \"expectText\": \"Sign in\" }", &error);
  JsonObject *object, *report;
  const char *text;
  JsonArray *steps;
  gboolean saw_links = FALSE, saw_step = FALSE, saw_skipped_flow = FALSE;

  g_assert_no_error (error);
  object = json_node_get_object (node);
  report = json_object_get_object_member (object, "report");
  text = json_object_get_string_member (object, "text");
  g_assert_cmpstr (json_object_get_string_member (object, "verdict"), ==, "fail");
  g_assert_nonnull (strstr (text, " FAILED in "));
  g_assert_nonnull (strstr (text, "Failed steps:"));

  /* Order of the spec: load, accessibility, links, steps, console, expectations, links last. */
  g_assert_cmpstr (json_object_get_string_member (report_step (report, 0), "kind"), ==, "load");
  g_assert_cmpstr (json_object_get_string_member (report_step (report, 1), "kind"), ==,
                   "accessibility");
  g_assert_cmpstr (json_object_get_string_member (report_step (report, 2), "kind"), ==, "links");
  steps = json_object_get_array_member (report, "steps");
  g_assert_cmpstr (json_object_get_string_member (
    json_array_get_object_element (steps, json_array_get_length (steps) - 1), "kind"), ==, "links");

  for (guint i = 0; i < json_array_get_length (steps); i++)
    {
      JsonObject *step = json_array_get_object_element (steps, i);
      const char *verdict = json_object_get_string_member (step, "verdict");
      const char *label = json_object_get_string_member_with_default (step, "label", "");

      g_assert_cmpint (json_object_get_int_member (step, "index"), ==, i);
      if (strstr (label, "Launch rockets") != NULL)
        {
          saw_step = TRUE;
          g_assert_cmpstr (verdict, ==, "fail");
        }
      if (g_str_equal (label, "click Pricing"))
        {
          /* The first failure stops the flow, not the later checks. */
          saw_skipped_flow = TRUE;
          g_assert_cmpstr (verdict, ==, "skipped");
        }
      if (i == json_array_get_length (steps) - 1)
        {
          saw_links = TRUE;
          g_assert_cmpstr (verdict, ==, "fail");
          g_assert_nonnull (strstr (json_object_get_string_member (step, "explanation"), "404"));
        }
    }
  g_assert_true (saw_links && saw_step && saw_skipped_flow);
}

/* The console check covers the whole run: a page that logs an error and
 * throws while it loads, whether it is the start page or one a step
 * reaches, fails it with both. */
static void
test_console_errors (gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = run_smoke (data, &error);
  JsonObject *object, *report;
  JsonArray *steps;
  JsonObject *console = NULL;

  g_assert_no_error (error);
  object = json_node_get_object (node);
  report = json_object_get_object_member (object, "report");
  steps = json_object_get_array_member (report, "steps");
  for (guint i = 0; i < json_array_get_length (steps); i++)
    if (g_str_equal (json_object_get_string_member (json_array_get_object_element (steps, i),
                                                    "kind"), "console"))
      console = json_array_get_object_element (steps, i);
  g_assert_nonnull (console);
  g_assert_cmpstr (json_object_get_string_member (console, "verdict"), ==, "fail");
  g_assert_cmpstr (json_object_get_string_member (console, "explanation"), ==,
                   "2 console errors");
  g_assert_cmpstr (json_object_get_string_member (object, "verdict"), ==, "fail");
}

static void
test_strict_links_false_is_a_finding (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = run_smoke ("{ \"url\": \"SITE/\", \"strictLinks\": false }", &error);

  g_assert_no_error (error);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (node), "verdict"), ==,
                   "pass");
}

static void
test_unreachable_is_an_error (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocketListener) listener = g_socket_listener_new ();
  g_autofree char *json = NULL;
  g_autoptr(JsonNode) node = NULL;
  JsonObject *object;
  guint16 port;

  /* A port that was free a moment ago: nothing listens there. */
  port = g_socket_listener_add_any_inet_port (listener, NULL, &error);
  g_assert_no_error (error);
  g_socket_listener_close (listener);
  json = g_strdup_printf ("{ \"url\": \"http://127.0.0.1:%u/\" }", port);
  node = run_smoke (json, &error);

  g_assert_no_error (error);
  object = json_node_get_object (node);
  g_assert_cmpstr (json_object_get_string_member (object, "verdict"), ==, "error");
}

static void
test_bad_arguments (void)
{
  const char *cases[][2] = {
    { "{ }", "url" },
    { "{ \"url\": \"SITE/\", \"maxLinks\": 201 }", "maxLinks" },
    { "{ \"url\": \"SITE/\", \"waitSeconds\": 91 }", "waitSeconds" },
    { "{ \"url\": \"SITE/\", \"steps\": [\"\"] }", "steps" },
    { "{ \"url\": \"SITE/\", \"session\": { \"credentials\": true } }", "session.credentials" },
    { "{ \"url\": \"SITE/\", \"expectTxt\": \"x\" }", "expectTxt" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonNode) node = run_smoke (cases[i][0], &error);

      g_assert_null (node);
      g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
      g_assert_true (g_str_has_prefix (error->message, cases[i][1]));
    }
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  int status;

  gtk_test_init (&argc, &argv, NULL);
  dir = g_dir_make_tmp ("sight-smoke-XXXXXX", &error);
  g_assert_no_error (error);
  path = g_build_filename (dir, "runs.db", NULL);
  store = sight_store_new (path, &error);
  g_assert_no_error (error);
  site = sight_demo_site_new ();
  g_assert_true (sight_demo_site_start (site, 0, &error));

  g_test_add_func ("/smoke/sign-in-flow-passes", test_sign_in_flow_passes);
  g_test_add_func ("/smoke/broken-link-and-failed-step", test_broken_link_and_failed_step_in_one_report);
  g_test_add_data_func ("/smoke/console-errors/start-page",
                        "{ \"url\": \"SITE/status\", \"maxLinks\": 0 }", test_console_errors);
  g_test_add_data_func ("/smoke/console-errors/step",
                        "{ \"url\": \"SITE/pricing\", \"maxLinks\": 0,"
                        "  \"steps\": [\"click Status\"] }", test_console_errors);
  g_test_add_func ("/smoke/strict-links-false", test_strict_links_false_is_a_finding);
  g_test_add_func ("/smoke/unreachable", test_unreachable_is_an_error);
  g_test_add_func ("/smoke/bad-arguments", test_bad_arguments);
  status = g_test_run ();

  g_clear_object (&store);
  g_clear_object (&site);
  return status;
}
