/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "sight-error.h"
#include "sight-project.h"
#include "sight-secrets.h"

static const char full_project[] =
  "{\n"
  "  \"$schema\": \"https://sightline.dev/project.json\",\n"
  "  \"agents\": {\n"
  "    \"default\": { \"model\": \"openai:gpt-4.1-mini\", \"baseUrl\": \"http://127.0.0.1:9/v1\",\n"
  "                 \"apiKeyEnv\": \"SIGHT_TEST_KEY\", \"vision\": \"only\",\n"
  "                 \"maxSteps\": 12, \"maxModelCalls\": 30 },\n"
  "    \"local\": { \"provider\": \"ollama\", \"model\": \"llama3:8b\", \"maxTokens\": 4096,\n"
  "               \"price\": { \"input\": 0.4, \"output\": 1.6 } },\n"
  "    \"colon\": { \"model\": \"ollama:llama3:8b\", \"vision\": true }\n"
  "  },\n"
  "  \"credentials\": {\n"
  "    \"member.password\": { \"purpose\": \"password\",\n"
  "                         \"allowedOrigins\": [\"http://127.0.0.1:8765\", \"HTTPS://App.Example.test:443\"],\n"
  "                         \"source\": { \"env\": \"SIGHT_TEST_MEMBER_PASSWORD\" } },\n"
  "    \"member.username\": { \"purpose\": \"username\", \"allowedOrigins\": [],\n"
  "                         \"source\": { \"file\": \"secrets/user.txt\" } },\n"
  "    \"otp\": { \"purpose\": \"one-time-code\", \"allowedOrigins\": [\"http://127.0.0.1:8765\"],\n"
  "             \"source\": { \"keyring\": { \"service\": \"sightline\", \"account\": \"otp\" } } }\n"
  "  },\n"
  "  \"defaults\": { \"timeout\": 90000, \"actionTimeout\": 40000, \"agent\": \"local\" }\n"
  "}\n";

static void
test_parse_full (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightProject) p = sight_project_new_from_data (full_project, -1, "/base", &error);
  const SightAgentConfig *a;
  const SightCredential *c;
  g_auto(GStrv) agents = NULL;
  g_auto(GStrv) creds = NULL;

  g_assert_no_error (error);
  g_assert_cmpint (sight_project_get_timeout (p), ==, 90000);
  g_assert_cmpint (sight_project_get_action_timeout (p), ==, 40000);
  g_assert_cmpint (sight_project_get_judgment_budget (p), ==, 40000);

  agents = sight_project_list_agents (p);
  g_assert_cmpuint (g_strv_length (agents), ==, 3);
  g_assert_cmpstr (agents[0], ==, "colon");

  a = sight_project_get_agent (p, "default");
  g_assert_cmpstr (a->provider, ==, "openai");
  g_assert_cmpstr (a->model, ==, "gpt-4.1-mini");
  g_assert_cmpstr (a->base_url, ==, "http://127.0.0.1:9/v1");
  g_assert_cmpstr (a->api_key_env, ==, "SIGHT_TEST_KEY");
  g_assert_cmpint (a->vision, ==, SIGHT_VISION_ONLY);
  g_assert_cmpint (a->max_steps, ==, 12);
  g_assert_cmpint (a->max_model_calls, ==, 30);

  a = sight_project_get_agent (p, "local");
  g_assert_cmpstr (a->provider, ==, "ollama");
  g_assert_cmpstr (a->model, ==, "llama3:8b");
  g_assert_null (a->base_url);
  g_assert_cmpint (a->vision, ==, SIGHT_VISION_OFF);
  g_assert_cmpint (a->max_steps, ==, 25);
  g_assert_cmpint (a->max_model_calls, ==, 25);
  g_assert_cmpint (a->max_tokens, ==, 4096);
  g_assert_true (json_object_has_member (a->json, "price"));

  a = sight_project_get_agent (p, "colon");
  g_assert_cmpstr (a->provider, ==, "ollama");
  g_assert_cmpstr (a->model, ==, "llama3:8b");
  g_assert_cmpint (a->vision, ==, SIGHT_VISION_ON);

  /* defaults.agent picks the test's agent. */
  g_assert_cmpstr (sight_project_resolve_agent (p, NULL, &error)->name, ==, "local");
  g_assert_cmpstr (sight_project_resolve_agent (p, "colon", &error)->name, ==, "colon");
  g_assert_no_error (error);
  g_assert_null (sight_project_resolve_agent (p, "nobody", &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  creds = sight_secrets_list_names (sight_project_get_secrets (p));
  g_assert_cmpuint (g_strv_length (creds), ==, 3);
  c = sight_secrets_lookup (sight_project_get_secrets (p), "member.password");
  g_assert_cmpstr (c->purpose, ==, "password");
  g_assert_cmpint (c->source, ==, SIGHT_CREDENTIAL_SOURCE_ENV);
  g_assert_cmpstr (c->source_arg, ==, "SIGHT_TEST_MEMBER_PASSWORD");
  g_assert_cmpstr (c->allowed_origins[0], ==, "http://127.0.0.1:8765");
  g_assert_cmpstr (c->allowed_origins[1], ==, "https://app.example.test");
  g_assert_null (c->allowed_origins[2]);

  c = sight_secrets_lookup (sight_project_get_secrets (p), "member.username");
  g_assert_cmpint (c->source, ==, SIGHT_CREDENTIAL_SOURCE_FILE);
  g_assert_cmpstr (c->source_arg, ==, "/base/secrets/user.txt");
  g_assert_null (c->allowed_origins[0]);

  c = sight_secrets_lookup (sight_project_get_secrets (p), "otp");
  g_assert_cmpint (c->source, ==, SIGHT_CREDENTIAL_SOURCE_KEYRING);
  g_assert_cmpstr (g_hash_table_lookup (c->keyring_attributes, "account"), ==, "otp");
}

static void
project_fails (const char *json,
               const char *message_part)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightProject) p = sight_project_new_from_data (json, -1, NULL, &error);

  g_assert_null (p);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
  if (strstr (error->message, message_part) == NULL)
    g_error ("expected \"%s\" in \"%s\"", message_part, error->message);
}

/* traceCache: off unless set; true is the user cache folder, a string a folder
 * relative to the project file's. */
static void
test_trace_cache (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightProject) off = sight_project_new_from_data ("{}", -1, "/srv/tests", &error);
  g_autoptr(SightProject) on = sight_project_new_from_data ("{\"traceCache\": true}", -1, NULL, &error);
  g_autoptr(SightProject) no = sight_project_new_from_data ("{\"traceCache\": false}", -1, NULL, &error);
  g_autoptr(SightProject) dir = sight_project_new_from_data ("{\"traceCache\": \"traces\"}", -1,
                                                             "/srv/tests", &error);
  g_autofree char *user = g_build_filename (g_get_user_cache_dir (), "sightline", "traces", NULL);

  g_assert_no_error (error);
  g_assert_null (sight_project_get_trace_cache_dir (off));
  g_assert_null (sight_project_get_trace_cache_dir (no));
  g_assert_cmpstr (sight_project_get_trace_cache_dir (on), ==, user);
  g_assert_cmpstr (sight_project_get_trace_cache_dir (dir), ==, "/srv/tests/traces");
  project_fails ("{\"traceCache\": 3}", "/traceCache: must be true, false or a folder");
}

static void
test_parse_errors (void)
{
  project_fails ("{\n  \"agents\": {\n    \"a\": ]\n}", "sightline.json:3:10: Parse error");
  project_fails ("[]", "sightline.json (root): the project file must hold an object");
  project_fails ("{\"agent\": {}}", "sightline.json /agent: unknown member");
  project_fails ("{\"agents\": {\"fast\": {\"model\": \"openai:m\", \"maxSteps\": 0}}}",
                 "sightline.json /agents/fast/maxSteps: must be a positive integer");
  project_fails ("{\"agents\": {\"fast\": {\"model\": \"openai:m\", \"maxModelCalls\": 2.5}}}",
                 "/agents/fast/maxModelCalls: must be a positive integer");
  project_fails ("{\"agents\": {\"fast\": {\"model\": \"gpt\"}}}",
                 "/agents/fast/model: must be \"provider:model\"");
  project_fails ("{\"agents\": {\"fast\": {\"model\": \"OpenAI:gpt\"}}}", "lower-case");
  project_fails ("{\"agents\": {\"fast\": {\"maxSteps\": 3}}}", "/agents/fast/model: an agent needs");
  project_fails ("{\"agents\": {\"fast\": {\"model\": \"a:b\", \"baseUrl\": \"ftp://x\"}}}",
                 "/agents/fast/baseUrl: must be an http or https URL");
  project_fails ("{\"agents\": {\"fast\": {\"model\": \"a:b\", \"apiKeyEnv\": \"sk-123\"}}}",
                 "/agents/fast/apiKeyEnv: must be an environment variable name");
  project_fails ("{\"agents\": {\"fast\": {\"model\": \"a:b\", \"vision\": \"yes\"}}}",
                 "/agents/fast/vision");
  project_fails ("{\"agents\": {\"fast\": {\"model\": \"a:b\", \"apiKey\": \"sk-1\"}}}",
                 "/agents/fast/apiKey: an API key does not belong in the project file");
  project_fails ("{\"agents\": {\"fast\": {\"model\": \"a:b\", \"maxTokens\": 0}}}",
                 "/agents/fast/maxTokens: must be a positive integer");
  project_fails ("{\"agents\": {\"fast\": {\"model\": \"a:b\", \"price\": 3}}}",
                 "/agents/fast/price: must be an object");
  project_fails ("{\"agents\": {\"a~b\": {\"model\": \"a:b\", \"temp\": 1}}}",
                 "/agents/a~0b/temp: unknown member");
  project_fails ("{\"credentials\": {\"pw\": {\"purpose\": \"pin\", \"source\": {\"env\": \"X\"}}}}",
                 "/credentials/pw/purpose: must be one of");
  project_fails ("{\"credentials\": {\"pw\": {\"purpose\": \"password\","
                 " \"allowedOrigins\": [\"not a url\"], \"source\": {\"env\": \"X\"}}}}",
                 "/credentials/pw/allowedOrigins/0: must be an origin");
  project_fails ("{\"credentials\": {\"pw\": {\"purpose\": \"password\","
                 " \"source\": {\"env\": \"X\", \"file\": \"y\"}}}}",
                 "/credentials/pw/source: must be exactly one of");
  project_fails ("{\"credentials\": {\"pw\": {\"purpose\": \"password\","
                 " \"source\": {\"vault\": \"y\"}}}}",
                 "/credentials/pw/source/vault: unknown source");
  project_fails ("{\"credentials\": {\"pw\": {\"purpose\": \"password\","
                 " \"source\": {\"keyring\": {\"a\": 1}}}}}",
                 "/credentials/pw/source/keyring/a: must be a string");
  project_fails ("{\"credentials\": {\"pw\": {\"purpose\": \"password\"}}}",
                 "credential pw needs a source");
  project_fails ("{\"credentials\": [{\"name\": \"pw\", \"purpose\": \"password\","
                 " \"source\": {\"env\": \"A\"}}, {\"name\": \"pw\", \"purpose\": \"password\","
                 " \"source\": {\"env\": \"B\"}}]}", "/credentials/1: credential pw is declared twice");
  project_fails ("{\"defaults\": {\"timeout\": -1}}", "/defaults/timeout: must be a positive");
  project_fails ("{\"defaults\": {\"agent\": \"ghost\"}}", "/defaults/agent: no agent named ghost");
  project_fails ("{\"defaults\": {\"retries\": 1}}", "/defaults/retries: unknown member");
}

static void
test_agent_choice (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightProject) none = sight_project_new_default ();
  g_autoptr(SightProject) one = sight_project_new_from_data (
      "{\"agents\": {\"solo\": {\"model\": \"a:b\"}}}", -1, NULL, &error);
  g_autoptr(SightProject) named_default = sight_project_new_from_data (
      "{\"agents\": {\"x\": {\"model\": \"a:b\"}, \"default\": {\"model\": \"a:c\"}}}", -1, NULL,
      &error);
  g_autoptr(SightProject) several = sight_project_new_from_data (
      "{\"agents\": {\"x\": {\"model\": \"a:b\"}, \"y\": {\"model\": \"a:c\"}}}", -1, NULL, &error);
  const SightAgentConfig *builtin;

  g_assert_no_error (error);
  builtin = sight_project_resolve_agent (none, NULL, &error);
  g_assert_nonnull (builtin);
  g_assert_null (builtin->provider);
  g_assert_cmpint (builtin->max_steps, ==, 25);
  g_assert_null (sight_project_resolve_agent (none, "x", &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  g_assert_cmpstr (sight_project_resolve_agent (one, NULL, &error)->name, ==, "solo");
  g_assert_cmpstr (sight_project_resolve_agent (named_default, NULL, &error)->model, ==, "c");
  g_assert_null (sight_project_resolve_agent (several, NULL, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
}

/* allowedOrigins with a host in another script (issue #26, item 7): kept in
 * the ASCII form WebKit writes in URLs, so the guard and a credential's
 * origin match the page; a host with no such form is refused at load. */
static void
test_origins_idna (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightProject) p = NULL;
  g_autoptr(GString) long_label = g_string_new ("{\"allowedOrigins\": [\"https://");
  const char * const *origins;
  const SightCredential *c;

  p = sight_project_new_from_data ("{\"allowedOrigins\": [\"https://B\u00fccher.example\", "
                                   "\"http://127.0.0.1:8765\"], \"credentials\": {\"pw\": "
                                   "{\"purpose\": \"password\", \"allowedOrigins\": "
                                   "[\"https://b\u00fccher.example\"], \"source\": "
                                   "{\"env\": \"X\"}}}}", -1, NULL, &error);
  g_assert_no_error (error);
  origins = sight_project_get_allowed_origins (p);
  g_assert_cmpstr (origins[0], ==, "https://xn--bcher-kva.example");
  g_assert_cmpstr (origins[1], ==, "http://127.0.0.1:8765");
  c = sight_secrets_lookup (sight_project_get_secrets (p), "pw");
  g_assert_true (sight_credential_origin_allowed (c, "https://xn--bcher-kva.example/login"));
  g_assert_false (sight_credential_origin_allowed (c, "https://bucher.example/login"));

  /* 70 "ü" make a label of more than 63 characters once encoded. */
  for (guint i = 0; i < 70; i++)
    g_string_append (long_label, "\u00fc");
  g_string_append (long_label, ".example\"]}");
  project_fails (long_label->str, "/allowedOrigins/0: the host has no ASCII (IDNA) form");
}

static void
write_file (const char *path,
            const char *contents)
{
  g_autoptr(GError) error = NULL;

  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
}

static void
test_find_and_load (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *root = g_dir_make_tmp ("sight-project-XXXXXX", &error);
  g_autofree char *deep = g_build_filename (root, "tests", "flows", NULL);
  g_autofree char *project_path = g_build_filename (root, "sightline.json", NULL);
  g_autofree char *test_file = g_build_filename (deep, "login.sightline.json", NULL);
  g_autofree char *found = NULL;
  g_autofree char *found_dir = NULL;
  g_autofree char *bad_path = g_build_filename (deep, "sightline.json", NULL);
  g_autoptr(SightProject) p = NULL;
  g_autoptr(SightProject) bad = NULL;

  g_assert_no_error (error);
  g_assert_cmpint (g_mkdir_with_parents (deep, 0700), ==, 0);
  write_file (test_file, "{}");

  /* Nothing above: the default project. */
  g_assert_null (sight_project_find (test_file));
  p = sight_project_load_for (test_file, &error);
  g_assert_no_error (error);
  g_assert_null (sight_project_get_path (p));
  g_clear_pointer (&p, sight_project_unref);

  write_file (project_path, "{\"defaults\": {\"timeout\": 1234}}");
  found = sight_project_find (test_file);
  found_dir = sight_project_find (deep);
  g_assert_cmpstr (found, ==, project_path);
  g_assert_cmpstr (found_dir, ==, project_path);
  p = sight_project_load_for (test_file, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sight_project_get_path (p), ==, project_path);
  g_assert_cmpint (sight_project_get_timeout (p), ==, 1234);

  /* The nearest file wins, and errors name it with line and column. */
  write_file (bad_path, "{\n\"defaults\": {\"timeout\": }\n}");
  bad = sight_project_load_for (test_file, &error);
  g_assert_null (bad);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
  g_assert_true (g_str_has_prefix (error->message, bad_path));
  g_assert_nonnull (strstr (error->message, ":2:"));
  g_clear_error (&error);

  write_file (bad_path, "{\"defaults\": {\"timeout\": 0}}");
  bad = sight_project_load (bad_path, &error);
  g_assert_null (bad);
  g_assert_nonnull (strstr (error->message, " /defaults/timeout: must be a positive integer"));
  g_clear_error (&error);

  g_unlink (bad_path);
  g_unlink (test_file);
  g_unlink (project_path);
  g_rmdir (deep);
  {
    g_autofree char *tests_dir = g_path_get_dirname (deep);
    g_rmdir (tests_dir);
  }
  g_rmdir (root);
}

static void
test_credentials (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("sight-creds-XXXXXX", &error);
  g_autofree char *secrets_dir = g_build_filename (dir, "secrets", NULL);
  g_autofree char *user_file = g_build_filename (secrets_dir, "user.txt", NULL);
  g_autoptr(SightProject) p = NULL;
  SightSecrets *secrets;
  const char *value;

  sight_secrets_forget_all ();
  g_assert_cmpint (g_mkdir_with_parents (secrets_dir, 0700), ==, 0);
  write_file (user_file, "ada.lovelace\r\n");
  p = sight_project_new_from_data (full_project, -1, dir, &error);
  g_assert_no_error (error);
  secrets = sight_project_get_secrets (p);

  /* env: unset, then set. */
  g_unsetenv ("SIGHT_TEST_MEMBER_PASSWORD");
  g_assert_null (sight_secrets_resolve (secrets, "member.password", &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "SIGHT_TEST_MEMBER_PASSWORD is not set"));
  g_clear_error (&error);
  g_setenv ("SIGHT_TEST_MEMBER_PASSWORD", "canary-Pa55/word+&", TRUE);

  /* The origin check: allowed origins only, normalized; none listed allows nothing. */
  g_assert_null (sight_secrets_resolve_for_origin (secrets, "member.password",
                                                   "http://evil.example.test/login", &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_POLICY_DENIED);
  g_assert_null (strstr (error->message, "canary"));
  g_clear_error (&error);
  g_assert_null (sight_secrets_resolve_for_origin (secrets, "member.password",
                                                   "http://127.0.0.1:8766/login", &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_POLICY_DENIED);
  g_clear_error (&error);
  value = sight_secrets_resolve_for_origin (secrets, "member.password",
                                            "http://127.0.0.1:8765/login?next=/", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (value, ==, "canary-Pa55/word+&");
  value = sight_secrets_resolve_for_origin (secrets, "member.password",
                                            "https://APP.example.test/", &error);
  g_assert_no_error (error);
  g_assert_nonnull (value);
  g_assert_null (sight_secrets_resolve_for_origin (secrets, "member.username",
                                                   "http://127.0.0.1:8765/", &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_POLICY_DENIED);
  g_clear_error (&error);

  /* file: one trailing line break dropped. */
  value = sight_secrets_resolve (secrets, "member.username", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (value, ==, "ada.lovelace");

  /* keyring: never waited for here; read by sight_secrets_resolve_async
   * (test-keyring.c, against a real keyring). */
  g_assert_null (sight_secrets_resolve (secrets, "otp", &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "has not been read yet"));
  g_clear_error (&error);

  /* Unknown names. */
  g_assert_null (sight_secrets_resolve (secrets, "admin.password", &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE);
  g_clear_error (&error);

  /* Every value read is now known to the redactor. */
  {
    g_autofree char *log = sight_secrets_redact (
        "user=ada.lovelace pass=canary-Pa55/word+& code=424242");

    g_assert_cmpstr (log, ==, "user=[secret:member.username] pass=[secret:member.password] "
                              "code=424242");
  }

  g_unsetenv ("SIGHT_TEST_MEMBER_PASSWORD");
  g_unlink (user_file);
  g_rmdir (secrets_dir);
  g_rmdir (dir);
  sight_secrets_forget_all ();
}

/* The app writes credentials into the project file: the rest of the file
 * stays, the new text loads, a value never goes in, a broken file is left
 * as it was. */
static void
test_write_credentials (void)
{
  g_autofree char *dir = g_dir_make_tmp ("sight-project-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "sightline.json", NULL);
  g_autofree char *text = NULL;
  g_autoptr(SightProject) project = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SightCredential) cred = g_new0 (SightCredential, 1);
  const SightCredential *loaded;
  const char *broken = "{ \"agents\": ";

  cred->name = g_strdup ("member.password");
  cred->purpose = g_strdup ("password");
  cred->allowed_origins = g_strsplit ("http://127.0.0.1:8765", " ", -1);
  cred->source = SIGHT_CREDENTIAL_SOURCE_KEYRING;
  cred->keyring_attributes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_hash_table_insert (cred->keyring_attributes, g_strdup ("credential"),
                       g_strdup ("member.password"));

  /* A missing file is created. */
  g_assert_true (sight_project_file_set_credential (path, cred, &error));
  g_assert_no_error (error);
  project = sight_project_load (path, &error);
  g_assert_no_error (error);
  loaded = sight_secrets_lookup (sight_project_get_secrets (project), "member.password");
  g_assert_nonnull (loaded);
  g_assert_cmpint (loaded->source, ==, SIGHT_CREDENTIAL_SOURCE_KEYRING);
  g_assert_cmpstr (g_hash_table_lookup (loaded->keyring_attributes, "credential"), ==,
                   "member.password");
  g_assert_cmpstr (loaded->allowed_origins[0], ==, "http://127.0.0.1:8765");
  g_clear_pointer (&project, sight_project_unref);

  /* Other members stay; a credential of the same name is replaced. */
  g_assert_true (g_file_set_contents (path,
                                      "{ \"agents\": { \"default\": { \"model\": \"openai:m\", "
                                      "\"maxSteps\": 7 } },\n"
                                      "  \"credentials\": { \"other\": { \"purpose\": \"email\", "
                                      "\"allowedOrigins\": [\"http://a.test\"], "
                                      "\"source\": { \"env\": \"OTHER\" } },\n"
                                      "  \"member.password\": { \"purpose\": \"username\", "
                                      "\"source\": { \"env\": \"OLD\" } } },\n"
                                      "  \"defaults\": { \"timeout\": 9000 } }", -1, NULL));
  g_assert_true (sight_project_file_set_credential (path, cred, &error));
  g_assert_no_error (error);
  project = sight_project_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sight_project_get_timeout (project), ==, 9000);
  g_assert_cmpint (sight_project_get_agent (project, "default")->max_steps, ==, 7);
  g_assert_cmpint (sight_secrets_lookup (sight_project_get_secrets (project), "other")->source,
                   ==, SIGHT_CREDENTIAL_SOURCE_ENV);
  loaded = sight_secrets_lookup (sight_project_get_secrets (project), "member.password");
  g_assert_cmpstr (loaded->purpose, ==, "password");
  g_assert_cmpint (loaded->source, ==, SIGHT_CREDENTIAL_SOURCE_KEYRING);
  g_clear_pointer (&project, sight_project_unref);

  /* Removed, and the others kept. */
  g_assert_true (sight_project_file_remove_credential (path, "member.password", &error));
  g_assert_no_error (error);
  project = sight_project_load (path, &error);
  g_assert_no_error (error);
  g_assert_null (sight_secrets_lookup (sight_project_get_secrets (project), "member.password"));
  g_assert_nonnull (sight_secrets_lookup (sight_project_get_secrets (project), "other"));
  g_clear_pointer (&project, sight_project_unref);

  /* The array form stays an array. */
  g_assert_true (g_file_set_contents (path, "{ \"credentials\": [ { \"name\": \"x\", "
                                      "\"purpose\": \"email\", \"source\": { \"env\": \"X\" } } ] }",
                                      -1, NULL));
  g_assert_true (sight_project_file_set_credential (path, cred, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_nonnull (strstr (text, "\"name\" : \"member.password\""));
  project = sight_project_load (path, &error);
  g_assert_no_error (error);
  g_assert_nonnull (sight_secrets_lookup (sight_project_get_secrets (project), "x"));
  g_assert_nonnull (sight_secrets_lookup (sight_project_get_secrets (project), "member.password"));
  g_clear_pointer (&project, sight_project_unref);
  g_clear_pointer (&text, g_free);

  /* A value is never written. */
  cred->source = SIGHT_CREDENTIAL_SOURCE_VALUE;
  cred->source_arg = g_strdup ("hunter2-value");
  g_assert_false (sight_project_file_set_credential (path, cred, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_null (strstr (text, "hunter2-value"));
  g_clear_pointer (&text, g_free);
  cred->source = SIGHT_CREDENTIAL_SOURCE_KEYRING;

  /* A broken file is the person's to mend: left byte for byte. */
  g_assert_true (g_file_set_contents (path, broken, -1, NULL));
  g_assert_false (sight_project_file_set_credential (path, cred, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_cmpstr (text, ==, broken);

  g_unlink (path);
  g_rmdir (dir);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/project/parse-full", test_parse_full);
  g_test_add_func ("/project/parse-errors", test_parse_errors);
  g_test_add_func ("/project/trace-cache", test_trace_cache);
  g_test_add_func ("/project/agent-choice", test_agent_choice);
  g_test_add_func ("/project/find-and-load", test_find_and_load);
  g_test_add_func ("/project/credentials", test_credentials);
  g_test_add_func ("/project/write-credentials", test_write_credentials);
  g_test_add_func ("/project/origins-idna", test_origins_idna);
  return g_test_run ();
}
