/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include "sight-error.h"
#include "sight-step-options.h"

static JsonObject *
parse_object (const char *json)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  json_parser_load_from_data (parser, json, -1, &error);
  g_assert_no_error (error);
  return json_object_ref (json_node_get_object (json_parser_get_root (parser)));
}

static SightStepOptions *
parse_ok (SightStepKind  kind,
          const char    *json)
{
  g_autoptr(JsonObject) obj = parse_object (json);
  g_autoptr(GError) error = NULL;
  SightStepOptions *options = sight_step_options_parse (kind, obj, &error);

  g_assert_no_error (error);
  g_assert_nonnull (options);
  return options;
}

static void
parse_fails (SightStepKind   kind,
             const char     *json,
             SightErrorCode  code,
             const char     *message_part)
{
  g_autoptr(JsonObject) obj = parse_object (json);
  g_autoptr(GError) error = NULL;
  g_autoptr(SightStepOptions) options = sight_step_options_parse (kind, obj, &error);

  g_assert_null (options);
  g_assert_error (error, SIGHT_ERROR, (int) code);
  if (message_part != NULL && strstr (error->message, message_part) == NULL)
    g_error ("expected \"%s\" in \"%s\"", message_part, error->message);
}

/* A string of @n_bytes UTF-8 bytes after NFC whose raw form is decomposed: each
 * "e" + U+0301 (3 bytes) composes to "é" (2 bytes). */
static char *
decomposed_string (gsize nfc_bytes)
{
  GString *s = g_string_new (NULL);
  gsize composed = 0;

  while (composed + 2 <= nfc_bytes)
    {
      g_string_append (s, "e\xcc\x81");
      composed += 2;
    }
  while (composed < nfc_bytes)
    {
      g_string_append_c (s, 'a');
      composed++;
    }
  return g_string_free (s, FALSE);
}

static void
test_instruction_limits (void)
{
  g_autofree char *at_limit = decomposed_string (8192);
  g_autofree char *over = decomposed_string (8193);
  g_autofree char *nfc = NULL;
  g_autoptr(GError) error = NULL;

  /* The raw string is far over 8192 bytes; after NFC it is exactly 8192. */
  g_assert_cmpuint (strlen (at_limit), >, 12000);
  nfc = sight_instruction_normalize (at_limit, -1, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (strlen (nfc), ==, 8192);
  g_assert_true (g_str_has_prefix (nfc, "\xc3\xa9"));

  g_assert_null (sight_instruction_normalize (over, -1, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "8193"));
  g_clear_error (&error);

  g_assert_null (sight_instruction_normalize ("", -1, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  g_assert_null (sight_instruction_normalize ("click \xff here", -1, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "UTF-8"));
  g_clear_error (&error);

  /* An overlong encoding of "/" is invalid UTF-8 too. */
  g_assert_null (sight_instruction_normalize ("\xc0\xaf", -1, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  {
    g_autofree char *one = sight_instruction_normalize ("x", -1, &error);
    g_assert_no_error (error);
    g_assert_cmpstr (one, ==, "x");
  }
}

static void
test_options_per_method (void)
{
  g_autoptr(SightStepOptions) act = parse_ok (SIGHT_STEP_ACT,
      "{\"params\": {\"email\": \"ada@example.test\"}, \"timeout\": 5000, \"maxSteps\": 3,"
      " \"maxModelCalls\": 4, \"agent\": \"fast\"}");
  g_autoptr(SightStepOptions) assert_ = parse_ok (SIGHT_STEP_ASSERT,
      "{\"timeout\": 1000, \"screenshot\": false, \"vision\": \"only\", \"agent\": \"a\"}");
  g_autoptr(SightStepOptions) wait = parse_ok (SIGHT_STEP_WAIT_FOR,
      "{\"timeout\": 1000, \"interval\": 500, \"maxModelCalls\": 2, \"vision\": true}");
  g_autoptr(SightStepOptions) extract = parse_ok (SIGHT_STEP_EXTRACT,
      "{\"schema\": {\"type\": \"object\"}, \"timeout\": 2000.0, \"vision\": false}");
  g_autoptr(SightStepOptions) bare = sight_step_options_parse (SIGHT_STEP_ASSERT, NULL, NULL);

  g_assert_cmpint (act->timeout_ms, ==, 5000);
  g_assert_cmpint (act->max_steps, ==, 3);
  g_assert_cmpint (act->max_model_calls, ==, 4);
  g_assert_cmpstr (act->agent, ==, "fast");
  g_assert_nonnull (act->params);
  g_assert_cmpint (act->vision, ==, SIGHT_VISION_UNSET);

  g_assert_true (assert_->has_screenshot);
  g_assert_false (assert_->screenshot);
  g_assert_cmpint (assert_->vision, ==, SIGHT_VISION_ONLY);

  g_assert_cmpint (wait->interval_ms, ==, 500);
  g_assert_cmpint (wait->max_model_calls, ==, 2);
  g_assert_cmpint (wait->vision, ==, SIGHT_VISION_ON);

  g_assert_nonnull (extract->schema);
  g_assert_cmpint (extract->timeout_ms, ==, 2000);
  g_assert_cmpint (extract->vision, ==, SIGHT_VISION_OFF);

  g_assert_nonnull (bare);
  g_assert_cmpint (bare->timeout_ms, ==, 0);
  g_assert_false (bare->has_screenshot);
}

static void
test_options_rejected (void)
{
  /* act lacks the capabilities, whatever else is wrong. */
  parse_fails (SIGHT_STEP_ACT, "{\"schema\": {}}", SIGHT_ERROR_UNSUPPORTED_CAPABILITY, "schema");
  parse_fails (SIGHT_STEP_ACT, "{\"vision\": true}", SIGHT_ERROR_UNSUPPORTED_CAPABILITY, "vision");
  parse_fails (SIGHT_STEP_ACT, "{\"bogus\": 1, \"vision\": \"only\"}",
               SIGHT_ERROR_UNSUPPORTED_CAPABILITY, "vision");

  /* Unknown options, and known ones a method does not take. */
  parse_fails (SIGHT_STEP_ACT, "{\"retries\": 2}", SIGHT_ERROR_INVALID_ARGUMENT,
               "unknown option \"retries\" for act");
  parse_fails (SIGHT_STEP_ACT, "{\"interval\": 500}", SIGHT_ERROR_INVALID_ARGUMENT,
               "act does not take the option interval");
  parse_fails (SIGHT_STEP_ACT, "{\"screenshot\": true}", SIGHT_ERROR_INVALID_ARGUMENT, NULL);
  parse_fails (SIGHT_STEP_ASSERT, "{\"maxModelCalls\": 1}", SIGHT_ERROR_INVALID_ARGUMENT, NULL);
  parse_fails (SIGHT_STEP_ASSERT, "{\"params\": {}}", SIGHT_ERROR_INVALID_ARGUMENT, NULL);
  parse_fails (SIGHT_STEP_WAIT_FOR, "{\"maxSteps\": 1}", SIGHT_ERROR_INVALID_ARGUMENT, NULL);
  parse_fails (SIGHT_STEP_WAIT_FOR, "{\"screenshot\": true}", SIGHT_ERROR_INVALID_ARGUMENT, NULL);
  parse_fails (SIGHT_STEP_WAIT_FOR, "{\"schema\": {}}", SIGHT_ERROR_INVALID_ARGUMENT, NULL);
  parse_fails (SIGHT_STEP_EXTRACT, "{\"schema\": {}, \"maxModelCalls\": 1}",
               SIGHT_ERROR_INVALID_ARGUMENT, NULL);
  parse_fails (SIGHT_STEP_EXTRACT, "{\"schema\": {}, \"interval\": 100}",
               SIGHT_ERROR_INVALID_ARGUMENT, NULL);

  /* Values. */
  parse_fails (SIGHT_STEP_ACT, "{\"timeout\": 0}", SIGHT_ERROR_INVALID_ARGUMENT,
               "positive safe integer");
  parse_fails (SIGHT_STEP_ACT, "{\"timeout\": -5}", SIGHT_ERROR_INVALID_ARGUMENT, NULL);
  parse_fails (SIGHT_STEP_ACT, "{\"timeout\": 1.5}", SIGHT_ERROR_INVALID_ARGUMENT, NULL);
  parse_fails (SIGHT_STEP_ACT, "{\"timeout\": \"5000\"}", SIGHT_ERROR_INVALID_ARGUMENT, NULL);
  parse_fails (SIGHT_STEP_ACT, "{\"timeout\": 9007199254740992}", SIGHT_ERROR_INVALID_ARGUMENT,
               NULL);
  parse_fails (SIGHT_STEP_ACT, "{\"maxSteps\": 0}", SIGHT_ERROR_INVALID_ARGUMENT, NULL);
  parse_fails (SIGHT_STEP_ACT, "{\"maxModelCalls\": true}", SIGHT_ERROR_INVALID_ARGUMENT, NULL);
  parse_fails (SIGHT_STEP_ACT, "{\"agent\": \"\"}", SIGHT_ERROR_INVALID_ARGUMENT, NULL);
  parse_fails (SIGHT_STEP_ACT, "{\"params\": [1]}", SIGHT_ERROR_INVALID_ARGUMENT, NULL);
  parse_fails (SIGHT_STEP_ASSERT, "{\"screenshot\": 1}", SIGHT_ERROR_INVALID_ARGUMENT, NULL);
  parse_fails (SIGHT_STEP_ASSERT, "{\"vision\": \"yes\"}", SIGHT_ERROR_INVALID_ARGUMENT,
               "false, true or \"only\"");
  parse_fails (SIGHT_STEP_ASSERT, "{\"vision\": null}", SIGHT_ERROR_INVALID_ARGUMENT, NULL);
  parse_fails (SIGHT_STEP_EXTRACT, "{}", SIGHT_ERROR_INVALID_ARGUMENT, "needs a schema");
  parse_fails (SIGHT_STEP_EXTRACT, "{\"schema\": {\"type\": \"strnig\"}}",
               SIGHT_ERROR_INVALID_ARGUMENT, "schema /type: unknown type name");
  parse_fails (SIGHT_STEP_EXTRACT, "{\"schema\": {\"$ref\": \"#/nope\"}}",
               SIGHT_ERROR_INVALID_ARGUMENT, "unresolvable $ref");
}

static void
test_interval_bounds (void)
{
  const struct { const char *json; gboolean ok; } cases[] = {
    { "{\"interval\": 99}", FALSE },
    { "{\"interval\": 100}", TRUE },
    { "{\"interval\": 60000}", TRUE },
    { "{\"interval\": 60001}", FALSE },
    { "{\"interval\": 0}", FALSE },
    { "{\"interval\": 150.5}", FALSE },
    { "{\"interval\": 3000.0}", TRUE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      if (cases[i].ok)
        sight_step_options_free (parse_ok (SIGHT_STEP_WAIT_FOR, cases[i].json));
      else
        parse_fails (SIGHT_STEP_WAIT_FOR, cases[i].json, SIGHT_ERROR_INVALID_ARGUMENT,
                     "from 100 to 60000");
    }
}

static void
test_parse_step (void)
{
  g_autoptr(JsonObject) step = parse_object (
      "{\"waitFor\": \"the upload progress reports completion\", \"interval\": 500}");
  g_autoptr(JsonObject) two = parse_object ("{\"act\": \"x\", \"assert\": \"y\"}");
  g_autoptr(JsonObject) none = parse_object ("{\"timeout\": 5}");
  g_autoptr(JsonObject) decomposed = parse_object ("{\"assert\": \"caf\\u0065\\u0301\"}");
  g_autoptr(JsonObject) act_vision = parse_object ("{\"act\": \"x\", \"vision\": true}");
  g_autoptr(GError) error = NULL;
  g_autofree char *instruction = NULL;
  g_autofree char *nfc = NULL;
  g_autoptr(SightStepOptions) options = sight_step_options_parse_step (step, &instruction, &error);
  g_autoptr(SightStepOptions) options2 = NULL;

  g_assert_no_error (error);
  g_assert_cmpint (options->kind, ==, SIGHT_STEP_WAIT_FOR);
  g_assert_cmpint (options->interval_ms, ==, 500);
  g_assert_cmpstr (instruction, ==, "the upload progress reports completion");

  g_assert_null (sight_step_options_parse_step (two, NULL, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (sight_step_options_parse_step (none, NULL, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (sight_step_options_parse_step (act_vision, NULL, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_UNSUPPORTED_CAPABILITY);
  g_clear_error (&error);

  options2 = sight_step_options_parse_step (decomposed, &nfc, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (nfc, ==, "caf\xc3\xa9");
}

static void
test_kind_names (void)
{
  SightStepKind kind;

  g_assert_true (sight_step_kind_from_string ("waitFor", &kind));
  g_assert_cmpint (kind, ==, SIGHT_STEP_WAIT_FOR);
  g_assert_cmpstr (sight_step_kind_to_string (SIGHT_STEP_EXTRACT), ==, "extract");
  /* every step kind a file names: the direct step's, then the enum's nicks */
  {
    static const char * const names[] = { "do", "act", "assert", "waitFor", "extract", NULL };

    g_assert_true (g_strv_equal ((const char * const *) sight_step_kind_get_names (), names));
  }
  g_assert_false (sight_step_kind_from_string ("wait_for", &kind));
  g_assert_cmpstr (sight_vision_mode_to_string (SIGHT_VISION_ONLY), ==, "only");
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/step-options/instruction-limits", test_instruction_limits);
  g_test_add_func ("/step-options/per-method", test_options_per_method);
  g_test_add_func ("/step-options/rejected", test_options_rejected);
  g_test_add_func ("/step-options/interval-bounds", test_interval_bounds);
  g_test_add_func ("/step-options/parse-step", test_parse_step);
  g_test_add_func ("/step-options/kind-names", test_kind_names);
  return g_test_run ();
}
