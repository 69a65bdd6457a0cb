/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "sight-error.h"
#include "sight-params.h"
#include "sight-secrets.h"

static JsonNode *
parse (const char *json)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  json_parser_load_from_data (parser, json, -1, &error);
  g_assert_no_error (error);
  return json_node_copy (json_parser_get_root (parser));
}

/* {"v": [[[ … 1 … ]]]} with the params object at level 1 and @levels levels in all. */
static JsonNode *
nested (guint levels)
{
  GString *s = g_string_new ("{\"v\": ");
  g_autofree char *text = NULL;

  for (guint i = 1; i < levels; i++)
    g_string_append_c (s, '[');
  g_string_append (s, "1");
  for (guint i = 1; i < levels; i++)
    g_string_append_c (s, ']');
  g_string_append_c (s, '}');
  text = g_string_free (s, FALSE);
  return parse (text);
}

/* {"s": "xxx…"} serializing to exactly @bytes bytes of compact JSON. */
static JsonNode *
sized (gsize bytes)
{
  g_autoptr(JsonObject) obj = json_object_new ();
  g_autofree char *fill = g_strnfill (bytes - strlen ("{\"s\":\"\"}"), 'x');
  JsonNode *node;

  json_object_set_string_member (obj, "s", fill);
  node = json_node_init_object (json_node_alloc (), obj);
  {
    g_autofree char *text = json_to_string (node, FALSE);
    g_assert_cmpuint (strlen (text), ==, bytes);
  }
  return node;
}

static void
assert_params (JsonNode   *params,
               gboolean    ok,
               const char *message_part)
{
  g_autoptr(GError) error = NULL;
  gboolean valid = sight_params_validate (params, &error);

  if (ok)
    {
      g_assert_no_error (error);
      g_assert_true (valid);
      return;
    }
  g_assert_false (valid);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
  if (message_part != NULL && strstr (error->message, message_part) == NULL)
    g_error ("expected \"%s\" in \"%s\"", message_part, error->message);
}

static void
test_depth (void)
{
  g_autoptr(JsonNode) d32 = nested (32);
  g_autoptr(JsonNode) d33 = nested (33);
  g_autoptr(JsonNode) secret_at_32 = parse (
      "{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{"
      "\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{"
      "\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"p\":{\"secret\":\"pw\"}"
      "}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}");

  assert_params (d32, TRUE, NULL);
  assert_params (d33, FALSE, "more than 32 levels");
  /* A Secret is a value, not a level. */
  assert_params (secret_at_32, TRUE, NULL);
}

static void
test_size (void)
{
  g_autoptr(JsonNode) at_limit = sized (65536);
  g_autoptr(JsonNode) over = sized (65537);

  assert_params (at_limit, TRUE, NULL);
  assert_params (over, FALSE, "65537 bytes");
}

static void
test_values (void)
{
  g_autoptr(JsonNode) good = parse ("{\"email\": \"ada@example.test\", \"n\": 3, \"x\": 1.5,"
                                    " \"b\": false, \"z\": null, \"list\": [1, \"two\"],"
                                    " \"pw\": {\"secret\": \"member.password\"}}");
  g_autoptr(JsonNode) array = parse ("[1]");
  g_autoptr(JsonNode) scalar = parse ("\"s\"");
  g_autoptr(JsonNode) empty_secret = parse ("{\"pw\": {\"secret\": \"\"}}");
  g_autoptr(JsonNode) params_is_secret = parse ("{\"secret\": \"x\"}");
  g_autoptr(JsonNode) nan = parse ("{\"a\": [0]}");

  assert_params (good, TRUE, NULL);
  assert_params (array, FALSE, NULL);
  assert_params (scalar, FALSE, NULL);
  assert_params (NULL, FALSE, NULL);
  assert_params (empty_secret, FALSE, "/pw: a Secret must name a credential");
  assert_params (params_is_secret, FALSE, NULL);

  json_node_set_double (json_array_get_element (json_object_get_array_member (
                            json_node_get_object (nan), "a"), 0), NAN);
  assert_params (nan, FALSE, "params/a/0: a number must be finite");
  json_node_set_double (json_array_get_element (json_object_get_array_member (
                            json_node_get_object (nan), "a"), 0), INFINITY);
  assert_params (nan, FALSE, "finite");
}

static SightSecrets *
make_secrets (void)
{
  SightSecrets *secrets = sight_secrets_new ();
  SightCredential cred = {
    .name = (char *) "member.password",
    .purpose = (char *) "password",
    .source = SIGHT_CREDENTIAL_SOURCE_VALUE,
    .source_arg = (char *) "canary-Pa55word!",
  };

  sight_secrets_add (secrets, &cred);
  return secrets;
}

static void
test_projection (void)
{
  g_autoptr(SightSecrets) secrets = make_secrets ();
  g_autoptr(JsonNode) params = parse ("{\"username\": \"ada\", \"password\":"
                                      " {\"secret\": \"member.password\"},"
                                      " \"more\": [{\"secret\": \"unknown.key\"},"
                                      "            {\"secret\": \"member.password\"}]}");
  g_autoptr(JsonNode) projected = sight_params_project (params, secrets);
  g_autofree char *text = json_to_string (projected, FALSE);
  g_auto(GStrv) names = sight_params_list_secrets (params);

  g_assert_cmpstr (text, ==,
                   "{\"username\":\"ada\","
                   "\"password\":{\"secret\":\"member.password\",\"purpose\":\"password\"},"
                   "\"more\":[{\"secret\":\"unknown.key\"},"
                   "{\"secret\":\"member.password\",\"purpose\":\"password\"}]}");
  g_assert_null (strstr (text, "canary"));
  g_assert_cmpuint (g_strv_length (names), ==, 2);
  g_assert_cmpstr (names[0], ==, "member.password");
  g_assert_cmpstr (names[1], ==, "unknown.key");

  /* The input is not modified. */
  {
    g_autofree char *again = json_to_string (params, FALSE);
    g_assert_null (strstr (again, "purpose"));
  }
}

static void
test_placeholders (void)
{
  g_autoptr(SightSecrets) secrets = make_secrets ();
  g_autoptr(JsonNode) params = parse ("{\"email\": \"ada@example.test\", \"n\": 3, \"x\": 2.5,"
                                      " \"yes\": true, \"pw\": {\"secret\": \"member.password\"},"
                                      " \"list\": [1], \"nothing\": null}");
  g_autoptr(GError) error = NULL;
  g_autofree char *a = sight_instruction_fill ("invite {email} as an editor", params, secrets, &error);
  g_autofree char *b = sight_instruction_fill ("{n} seats at {x}, trial {yes}", params, secrets, &error);
  g_autofree char *c = sight_instruction_fill ("sign in with {pw}", params, secrets, &error);
  g_autofree char *d = sight_instruction_fill ("keep {missing}, { email }, {{email} and {}",
                                               params, secrets, &error);
  g_autofree char *e = sight_instruction_fill ("no params {email}", NULL, NULL, &error);

  g_assert_no_error (error);
  g_assert_cmpstr (a, ==, "invite ada@example.test as an editor");
  g_assert_cmpstr (b, ==, "3 seats at 2.5, trial true");
  g_assert_cmpstr (c, ==,
                   "sign in with {\"secret\":\"member.password\",\"purpose\":\"password\"}");
  g_assert_null (strstr (c, "canary"));
  g_assert_cmpstr (d, ==, "keep {missing}, { email }, {ada@example.test and {}");
  g_assert_cmpstr (e, ==, "no params {email}");

  g_assert_null (sight_instruction_fill ("use {list}", params, secrets, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (sight_instruction_fill ("use {nothing}", params, secrets, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/params/depth", test_depth);
  g_test_add_func ("/params/size", test_size);
  g_test_add_func ("/params/values", test_values);
  g_test_add_func ("/params/projection", test_projection);
  g_test_add_func ("/params/placeholders", test_placeholders);
  return g_test_run ();
}
