/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>

#include "sight-error.h"
#include "sight-test-file.h"

static const char *valid =
  "{\n"
  "  \"name\": \"A member signs in\",\n"
  "  \"url\": \"http://127.0.0.1:8765/login\",\n"
  "  \"agent\": \"default\",\n"
  "  \"timeout\": 120000,\n"
  "  \"steps\": [\n"
  "    { \"do\": \"type \\\"member@example.test\\\" into Email\" },\n"
  "    { \"act\": \"Sign in\", \"params\": { \"password\": { \"secret\": \"member.password\" } } },\n"
  "    { \"assert\": \"the dashboard shows a trial badge\", \"vision\": \"only\" },\n"
  "    { \"waitFor\": \"the upload completes\", \"interval\": 500 },\n"
  "    { \"extract\": \"the plan\", \"schema\": { \"type\": \"string\" } },\n"
  "    { \"do\": \"expect text \\\"Welcome\\\"\" }\n"
  "  ]\n"
  "}\n";

static void
test_valid (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightTestFile) file = sight_test_file_parse ("/x/login.sightline.json", valid, -1,
                                                         &error);
  SightTestStep *step;

  g_assert_no_error (error);
  g_assert_cmpstr (file->name, ==, "A member signs in");
  g_assert_cmpstr (file->url, ==, "http://127.0.0.1:8765/login");
  g_assert_cmpstr (file->agent, ==, "default");
  g_assert_cmpint (file->timeout_ms, ==, 120000);
  g_assert_cmpuint (file->steps->len, ==, 6);

  step = g_ptr_array_index (file->steps, 1);
  g_assert_cmpint (step->kind, ==, SIGHT_TEST_STEP_ACT);
  g_assert_cmpstr (step->instruction, ==, "Sign in");
  g_assert_true (json_object_has_member (step->options, "params"));
  step = g_ptr_array_index (file->steps, 3);
  g_assert_cmpint (step->kind, ==, SIGHT_TEST_STEP_WAIT_FOR);
  g_assert_cmpint (json_object_get_int_member (step->options, "interval"), ==, 500);
  step = g_ptr_array_index (file->steps, 0);
  g_assert_cmpint (step->kind, ==, SIGHT_TEST_STEP_DO);
  g_assert_cmpuint (json_object_get_size (step->options), ==, 0);

  /* a step's kind reads back as the member that named it */
  for (guint i = 0; i < file->steps->len; i++)
    {
      step = g_ptr_array_index (file->steps, i);
      g_assert_true (json_object_has_member (
        json_node_get_object (json_array_get_element (
          json_object_get_array_member (json_node_get_object (file->root), "steps"), i)),
        sight_test_step_kind_to_string (step->kind)));
    }
  g_assert_cmpstr (sight_test_step_kind_to_string (SIGHT_TEST_STEP_WAIT_FOR), ==, "waitFor");
  g_assert_cmpstr (sight_test_step_kind_to_string (SIGHT_TEST_STEP_EXTRACT), ==, "extract");
}

/* A start address may be a path for the suite's base URL; a direct step
 * may take params for its {name} placeholders. */
static void
test_relative_url_and_do_params (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightTestFile) file = sight_test_file_parse (
    "/x/t.sightline.json",
    "{ \"url\": \"/login\", \"steps\": [ { \"do\": \"type {password} into Password\","
    "  \"params\": { \"password\": { \"secret\": \"member.password\" } } } ] }", -1, &error);
  SightTestStep *step;

  g_assert_no_error (error);
  g_assert_cmpstr (file->url, ==, "/login");
  g_assert_cmpstr (file->name, ==, "t.sightline.json");
  step = g_ptr_array_index (file->steps, 0);
  g_assert_cmpint (step->kind, ==, SIGHT_TEST_STEP_DO);
  g_assert_true (json_object_has_member (step->options, "params"));
}

static void
expect_invalid (const char *text,
                const char *fragment)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightTestFile) file = sight_test_file_parse ("/x/bad.sightline.json", text, -1, &error);

  g_assert_null (file);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
  if (strstr (error->message, fragment) == NULL)
    g_error ("“%s” does not mention “%s”", error->message, fragment);
  g_assert_true (g_str_has_prefix (error->message, "bad.sightline.json: "));
}

static void
test_invalid (void)
{
  /* A syntax error names its line and column. */
  expect_invalid ("{\n  \"name\": \"x\",\n  \"steps\": [\n    { \"do\": \"click A\" },,\n  ]\n}\n",
                  "line 4, column ");
  expect_invalid ("[]", "JSON object");
  expect_invalid ("{ \"name\": \"x\" }", "steps");
  expect_invalid ("{ \"steps\": [ 3 ] }", "step 1");
  expect_invalid ("{ \"steps\": [ { \"click\": \"A\" } ] }", "needs one of");
  expect_invalid ("{ \"steps\": [ { \"do\": \"click A\", \"act\": \"B\" } ] }", "both");
  expect_invalid ("{ \"steps\": [ { \"do\": \"\" } ] }", "non-empty");
  expect_invalid ("{ \"steps\": [ { \"do\": \"click A\", \"timeout\": 5 } ] }", "no options but params");
  expect_invalid ("{ \"steps\": [ { \"do\": \"type {p} into A\", \"params\": 3 } ] }",
                  "params must be an object");
  expect_invalid ("{ \"steps\": [ { \"do\": \"dance wildly\" } ] }", "step 1");
  expect_invalid ("{ \"url\": \"ftp://x/\", \"steps\": [] }", "url");
  expect_invalid ("{ \"timeout\": -1, \"steps\": [] }", "timeout");
  expect_invalid ("{ \"nmae\": \"typo\", \"steps\": [] }", "nmae");
}

static void
test_save_round_trip (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("sight-test-file-XXXXXX", &error);
  g_autofree char *path = g_build_filename (dir, "t.sightline.json", NULL);
  g_autoptr(SightTestFile) file = sight_test_file_parse (path, valid, -1, &error);
  g_autoptr(SightTestFile) again = NULL;

  g_assert_no_error (error);
  g_assert_true (sight_test_file_save (file, &error));
  g_assert_no_error (error);
  again = sight_test_file_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (again->steps->len, ==, 6);
  g_assert_cmpstr (again->name, ==, file->name);
  g_remove (path);
  g_rmdir (dir);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/test-file/valid", test_valid);
  g_test_add_func ("/test-file/relative-url-and-do-params", test_relative_url_and_do_params);
  g_test_add_func ("/test-file/invalid", test_invalid);
  g_test_add_func ("/test-file/save-round-trip", test_save_round_trip);
  return g_test_run ();
}
