/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sightline act|assert|wait-for|extract: output and exit codes of DESIGN.md, with the
 * scripted model in this process and the project file found from the folder. */
#include "config.h"

#include <string.h>

#include <gio/gio.h>
#include <libsoup/soup.h>

#include "cli-test-common.h"
#include "sight-scripted-model.h"

static const char page_html[] =
  "<!doctype html><title>Dash</title><main><h1>Dashboard</h1><p>Plan: Pro trial</p>"
  "<button>Invite</button></main>";

static SightScriptedModel *model;
static char *site_url;
static char *project_dir;

static void
site_cb (SoupServer        *server,
         SoupServerMessage *msg,
         const char        *path,
         GHashTable        *query,
         gpointer           user_data)
{
  soup_server_message_set_status (msg, 200, NULL);
  soup_server_message_set_response (msg, "text/html", SOUP_MEMORY_STATIC, page_html,
                                    strlen (page_html));
}

/* Runs sightline with @args in the project folder; returns the exit status. */
static int
run_cli (const char * const *args,
         char              **out_stdout,
         char              **out_stderr)
{
  const char * const set_env[] = { "LANGUAGE", "C", "XDG_CACHE_HOME", project_dir, NULL };
  /* The model answers from this process: its main loop keeps running. */
  const CliOptions options = { project_dir, set_env, NULL, 120 };
  CliRun run = { 0 };

  cli_run_argv (&run, &options, args);
  *out_stdout = g_steal_pointer (&run.out);
  *out_stderr = g_steal_pointer (&run.err);
  return run.status;
}

static void
test_exit_codes (void)
{
  g_autofree char *url = g_strconcat (site_url, "/", NULL);
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *schema = g_build_filename (project_dir, "schema.json", NULL);
  int status;

  /* 0: a passing assert prints the explanation. */
  sight_scripted_model_push (model, "{\"json\": {\"verdict\": true, \"explanation\": \"The plan reads Pro trial.\", \"injection\": null}}");
  status = run_cli ((const char *[]) { "assert", url, "the plan is a trial", NULL }, &out, &err);
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpstr (out, ==, "The plan reads Pro trial.\n");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* 1: ASSERTION_FAILED, its code and explanation on stderr. */
  sight_scripted_model_push (model, "{\"json\": {\"verdict\": false, \"explanation\": \"No red badge.\", \"injection\": null}}");
  status = run_cli ((const char *[]) { "assert", url, "a red badge", NULL }, &out, &err);
  g_assert_cmpint (status, ==, 1);
  g_assert_nonnull (strstr (err, "ASSERTION_FAILED: No red badge."));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_true (g_file_set_contents (schema, "{\"type\": \"object\", \"required\": [\"plan\"],"
                                      " \"properties\": {\"plan\": {\"type\": \"string\"}}}", -1, NULL));

  /* 5: MODEL_OUTPUT_INVALID after the repair round; --json prints the result. */
  sight_scripted_model_push (model, "{\"json\": {\"plan\": 1}}");
  sight_scripted_model_push (model, "{\"json\": {\"plan\": 2}}");
  status = run_cli ((const char *[]) { "extract", url, "the plan", "--schema", schema, "--json", NULL },
                    &out, &err);
  g_assert_cmpint (status, ==, 5);
  g_assert_nonnull (strstr (out, "\"code\" : \"MODEL_OUTPUT_INVALID\""));
  g_assert_nonnull (strstr (out, "\"modelCalls\" : 2"));
  g_assert_nonnull (strstr (out, "\"repairRounds\" : 1"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* 4: STEP_TIMEOUT, carrying the last judgment. */
  sight_scripted_model_push (model, "{\"json\": {\"verdict\": false, \"explanation\": \"Not yet.\", \"injection\": null}}");
  status = run_cli ((const char *[]) { "wait-for", url, "the upload completes", "--timeout", "10000",
                                       "--interval", "200", NULL }, &out, &err);
  g_assert_cmpint (status, ==, 4);
  g_assert_nonnull (strstr (err, "STEP_TIMEOUT"));
  /* On a loaded machine the deadline may pass before the first judgment. */
  g_assert_true (strstr (err, "last judgment: false (Not yet.)") != NULL ||
                 strstr (err, "no judgment was made") != NULL);
  sight_scripted_model_load_script (model, "[]", NULL);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* 2: vision on act is UNSUPPORTED_CAPABILITY; an unknown agent INVALID_ARGUMENT. */
  status = run_cli ((const char *[]) { "act", url, "sign in", "--vision", "true", NULL }, &out, &err);
  g_assert_cmpint (status, ==, 2);
  g_assert_nonnull (strstr (err, "UNSUPPORTED_CAPABILITY"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* 1: an act whose model concludes fail is ACTION_FAILED. */
  sight_scripted_model_push (model, "{\"tool_calls\": [{\"name\": \"done\", \"arguments\": {\"verdict\": \"fail\", \"summary\": \"There is no invite form.\"}}]}");
  status = run_cli ((const char *[]) { "act", url, "invite ada", NULL }, &out, &err);
  g_assert_cmpint (status, ==, 1);
  g_assert_nonnull (strstr (err, "ACTION_FAILED: There is no invite form."));
  g_assert_cmpuint (sight_scripted_model_get_unexpected (model), ==, 0);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SoupServer) server = soup_server_new (NULL, NULL);
  g_autofree char *project = NULL;
  g_autofree char *path = NULL;
  GSList *uris;
  int status;

  g_test_init (&argc, &argv, NULL);
  g_unsetenv ("SIGHTLINE_MODEL");
  g_unsetenv ("OPENAI_API_KEY");

  soup_server_add_handler (server, NULL, site_cb, NULL, NULL);
  if (!soup_server_listen_local (server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error))
    g_error ("%s", error->message);
  uris = soup_server_get_uris (server);
  site_url = g_uri_to_string (uris->data);
  if (g_str_has_suffix (site_url, "/"))
    site_url[strlen (site_url) - 1] = '\0';
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);

  model = sight_scripted_model_new (0, &error);
  g_assert_no_error (error);
  project_dir = g_dir_make_tmp ("sight-agent-cli-XXXXXX", &error);
  g_assert_no_error (error);
  project = g_strdup_printf ("{\"agents\": {\"default\": {\"model\": \"openai:scripted\", \"baseUrl\": \"%s\"}}}",
                             sight_scripted_model_get_openai_base_url (model));
  path = g_build_filename (project_dir, "sightline.json", NULL);
  g_assert_true (g_file_set_contents (path, project, -1, NULL));

  g_test_add_func ("/agent/cli/exit-codes", test_exit_codes);
  status = g_test_run ();

  g_clear_object (&model);
  return status;
}
