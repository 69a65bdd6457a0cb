/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include "sight-error.h"
#include "sight-secrets.h"
#include "sight-step-request.h"

static const char project_json[] =
  "{\"agents\": {\"default\": {\"model\": \"openai:m\", \"maxSteps\": 10, \"maxModelCalls\": 12}},"
  " \"credentials\": {\"member.password\": {\"purpose\": \"password\","
  "   \"allowedOrigins\": [\"http://127.0.0.1:8765\"], \"source\": {\"env\": \"SIGHT_REQ_PW\"}}},"
  " \"defaults\": {\"timeout\": 60000}}";

static JsonObject *
parse_object (const char *json)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  json_parser_load_from_data (parser, json, -1, &error);
  g_assert_no_error (error);
  return json_object_ref (json_node_get_object (json_parser_get_root (parser)));
}

static SightProject *
project (void)
{
  g_autoptr(GError) error = NULL;
  SightProject *p = sight_project_new_from_data (project_json, -1, NULL, &error);

  g_assert_no_error (error);
  return p;
}

static void
test_act_from_step (void)
{
  g_autoptr(SightProject) p = project ();
  g_autoptr(JsonObject) step = parse_object (
      "{\"act\": \"Sign in as {user} with {password}\", \"maxSteps\": 4,"
      " \"params\": {\"user\": \"ada\", \"password\": {\"secret\": \"member.password\"}}}");
  g_autoptr(GError) error = NULL;
  g_autoptr(SightStepRequest) r = NULL;
  g_autofree char *params = NULL;

  g_setenv ("SIGHT_REQ_PW", "canary-value-9", TRUE);
  r = sight_step_request_new_from_step (p, step, NULL, 20000, &error);
  g_assert_no_error (error);
  g_assert_cmpint (r->options->kind, ==, SIGHT_STEP_ACT);
  g_assert_cmpstr (r->instruction, ==, "Sign in as {user} with {password}");
  g_assert_cmpstr (r->model_instruction, ==,
                   "Sign in as ada with {\"secret\":\"member.password\",\"purpose\":\"password\"}");
  params = json_to_string (r->model_params, FALSE);
  g_assert_cmpstr (params, ==, "{\"user\":\"ada\",\"password\":"
                               "{\"secret\":\"member.password\",\"purpose\":\"password\"}}");
  g_assert_cmpstr (r->secret_names[0], ==, "member.password");
  g_assert_null (r->secret_names[1]);
  g_assert_cmpint (r->limits.max_actions, ==, 4);
  g_assert_cmpint (r->limits.max_model_calls, ==, 12);
  g_assert_cmpint (r->limits.timeout_ms, ==, 20000);
  g_assert_true (r->limits.timeout_capped);
  /* Preparing a step reads no credential. */
  g_assert_false (sight_secrets_contains_any ("canary-value-9"));
  g_unsetenv ("SIGHT_REQ_PW");
}

static void
test_judgment_steps (void)
{
  g_autoptr(SightProject) p = project ();
  g_autoptr(JsonObject) opts = parse_object ("{\"schema\": {\"type\": \"object\"}, \"vision\": true}");
  g_autoptr(GError) error = NULL;
  g_autoptr(SightStepRequest) r = sight_step_request_new (p, SIGHT_STEP_EXTRACT, "the plan", opts,
                                                          NULL, -1, &error);

  g_assert_no_error (error);
  g_assert_cmpint (r->limits.max_model_calls, ==, 2);
  g_assert_cmpint (r->limits.max_actions, ==, 0);
  g_assert_cmpint (r->limits.timeout_ms, ==, 30000);
  g_assert_cmpint (r->limits.vision, ==, SIGHT_VISION_ON);
  g_assert_null (r->model_params);
  g_assert_nonnull (r->secret_names);
  g_assert_null (r->secret_names[0]);
  g_assert_cmpstr (r->model_instruction, ==, "the plan");
}

static void
expect_error (SightProject   *p,
              const char     *step_json,
              const char     *test_agent,
              SightErrorCode  code)
{
  g_autoptr(JsonObject) step = parse_object (step_json);
  g_autoptr(GError) error = NULL;
  g_autoptr(SightStepRequest) r = sight_step_request_new_from_step (p, step, test_agent, -1, &error);

  g_assert_null (r);
  g_assert_error (error, SIGHT_ERROR, (int) code);
}

static void
test_errors_before_opening (void)
{
  g_autoptr(SightProject) p = project ();

  expect_error (p, "{\"act\": \"\"}", NULL, SIGHT_ERROR_INVALID_ARGUMENT);
  expect_error (p, "{\"act\": \"go\", \"vision\": true}", NULL, SIGHT_ERROR_UNSUPPORTED_CAPABILITY);
  expect_error (p, "{\"act\": \"go\", \"schema\": {}}", NULL, SIGHT_ERROR_UNSUPPORTED_CAPABILITY);
  expect_error (p, "{\"act\": \"go\", \"colour\": 1}", NULL, SIGHT_ERROR_INVALID_ARGUMENT);
  expect_error (p, "{\"act\": \"go\", \"agent\": \"ghost\"}", NULL, SIGHT_ERROR_INVALID_ARGUMENT);
  expect_error (p, "{\"act\": \"go\"}", "ghost", SIGHT_ERROR_INVALID_ARGUMENT);
  expect_error (p, "{\"act\": \"go\", \"maxSteps\": 11}", NULL, SIGHT_ERROR_INVALID_ARGUMENT);
  expect_error (p, "{\"waitFor\": \"done\", \"maxModelCalls\": 13}", NULL,
                SIGHT_ERROR_INVALID_ARGUMENT);
  expect_error (p, "{\"waitFor\": \"done\", \"interval\": 60001}", NULL,
                SIGHT_ERROR_INVALID_ARGUMENT);
  expect_error (p, "{\"extract\": \"x\", \"schema\": {\"type\": 5}}", NULL,
                SIGHT_ERROR_INVALID_ARGUMENT);
  expect_error (p, "{\"act\": \"use {list}\", \"params\": {\"list\": [1]}}", NULL,
                SIGHT_ERROR_INVALID_ARGUMENT);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/step-request/act-from-step", test_act_from_step);
  g_test_add_func ("/step-request/judgment-steps", test_judgment_steps);
  g_test_add_func ("/step-request/errors-before-opening", test_errors_before_opening);
  return g_test_run ();
}
