/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "sight-error.h"
#include "sight-observation.h"

/* ----------------------------------------------------------------------- */
/* From JSON: what the C side does with an observe() result                 */

static SightObservation *
observation_from_string (const char *json)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = json_from_string (json, &error);
  SightObservation *obs;

  g_assert_no_error (error);
  obs = sight_observation_new_from_json (node, &error);
  g_assert_no_error (error);
  g_assert_nonnull (obs);
  return obs;
}

#define OBS_BEFORE \
  "{\"version\":1,\"url\":\"http://127.0.0.1/a\",\"title\":\"A\",\"textMode\":\"compact\"," \
  "\"text\":\"button \\\"Save\\\" #e2\"," \
  "\"viewport\":{\"width\":800,\"height\":600,\"scrollX\":0,\"scrollY\":40}," \
  "\"counts\":{\"elements\":9,\"nodes\":5,\"interactive\":3,\"secure\":2,\"secureInView\":1}," \
  "\"secure\":[{\"ref\":\"e5\",\"box\":[10,300,200,20],\"inView\":true}," \
  "{\"ref\":\"e9\",\"box\":[10,3000,200,20],\"inView\":false}]," \
  "\"tree\":{\"role\":\"document\",\"name\":\"A\",\"children\":[" \
  " {\"ref\":\"e1\",\"role\":\"main\",\"box\":[0,0,800,600],\"children\":[" \
  "  {\"ref\":\"e2\",\"role\":\"button\",\"name\":\"Save\",\"box\":[10,10,100,30]}," \
  "  {\"ref\":\"e3\",\"role\":\"checkbox\",\"name\":\"Remember \\\"me\\\"\",\"box\":[10,50,20,20]}," \
  "  {\"ref\":\"e4\",\"role\":\"status\",\"box\":[10,80,300,20],\"children\":[{\"text\":\"Ready\"}]}," \
  "  {\"ref\":\"e5\",\"role\":\"textbox\",\"name\":\"Password\",\"secure\":true,\"box\":[10,300,200,20]}," \
  "  {\"ref\":\"e6\",\"role\":\"link\",\"name\":\"Help\",\"box\":[10,400,50,20]}" \
  " ]}]}}"

#define OBS_AFTER \
  "{\"version\":1,\"url\":\"http://127.0.0.1/a\",\"title\":\"A\",\"textMode\":\"full\",\"text\":\"\"," \
  "\"counts\":{\"secure\":1,\"secureInView\":1}," \
  "\"tree\":{\"role\":\"document\",\"name\":\"A\",\"children\":[" \
  " {\"ref\":\"e1\",\"role\":\"main\",\"box\":[0,0,800,600],\"children\":[" \
  "  {\"ref\":\"e2\",\"role\":\"button\",\"name\":\"Save\",\"disabled\":true,\"box\":[10,10,100,30]}," \
  "  {\"ref\":\"e3\",\"role\":\"checkbox\",\"name\":\"Remember \\\"me\\\"\",\"checked\":true,\"box\":[10,50,20,20]}," \
  "  {\"ref\":\"e4\",\"role\":\"status\",\"box\":[10,80,300,20],\"children\":[{\"text\":\"Saved\"}]}," \
  "  {\"ref\":\"e5\",\"role\":\"textbox\",\"name\":\"Password\",\"secure\":true,\"box\":[10,300,200,20]}," \
  "  {\"ref\":\"e7\",\"role\":\"dialog\",\"name\":\"Done\",\"modal\":true,\"box\":[100,100,300,200],\"children\":[" \
  "   {\"text\":\"All changes saved\"}," \
  "   {\"ref\":\"e8\",\"role\":\"button\",\"name\":\"OK\",\"box\":[150,250,60,30]}]}" \
  " ]}]}}"

static void
test_from_json (void)
{
  g_autoptr(SightObservation) obs = observation_from_string (OBS_BEFORE);
  GArray *boxes;
  int w, h, sx, sy;

  g_assert_cmpstr (sight_observation_get_url (obs), ==, "http://127.0.0.1/a");
  g_assert_cmpstr (sight_observation_get_title (obs), ==, "A");
  g_assert_cmpstr (sight_observation_get_text (obs), ==, "button \"Save\" #e2");
  g_assert_false (sight_observation_is_full_text (obs));
  sight_observation_get_viewport (obs, &w, &h, &sx, &sy);
  g_assert_cmpint (w, ==, 800);
  g_assert_cmpint (h, ==, 600);
  g_assert_cmpint (sy, ==, 40);
  g_assert_cmpuint (sight_observation_get_n_elements (obs), ==, 9);
  g_assert_cmpuint (sight_observation_get_n_interactive (obs), ==, 3);
  g_assert_cmpuint (sight_observation_get_n_secure (obs), ==, 1);
  g_assert_cmpuint (sight_observation_get_n_secure_total (obs), ==, 2);

  /* Only the secure field in the viewport needs a mask. */
  boxes = sight_observation_get_secure_boxes (obs);
  g_assert_cmpuint (boxes->len, ==, 1);
  g_assert_cmpfloat (g_array_index (boxes, SightRect, 0).y, ==, 300);

  /* No screenshot: nothing masked, masking not proven. */
  g_assert_null (sight_observation_get_screenshot (obs));
  g_assert_cmpuint (sight_observation_get_n_masked (obs), ==, 0);
  g_assert_false (sight_observation_masking_proven (obs));
}

static void
test_not_an_observation (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = json_from_string ("[1, 2]", NULL);
  g_autoptr(SightObservation) obs = sight_observation_new_from_json (node, &error);

  g_assert_null (obs);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED);
}

static void
test_lookup_and_hit_test (void)
{
  g_autoptr(SightObservation) obs = observation_from_string (OBS_BEFORE);
  JsonObject *node;

  node = sight_observation_lookup (obs, "e3");
  g_assert_nonnull (node);
  g_assert_cmpstr (json_object_get_string_member (node, "role"), ==, "checkbox");
  g_assert_null (sight_observation_lookup (obs, "e99"));

  /* The innermost node under the point wins; outside every child, the
   * container; outside everything, nothing. */
  g_assert_cmpstr (sight_observation_hit_test (obs, 20, 20), ==, "e2");
  g_assert_cmpstr (sight_observation_hit_test (obs, 700, 500), ==, "e1");
  g_assert_null (sight_observation_hit_test (obs, 900, 20));
}

static void
test_node_line (void)
{
  g_autoptr(SightObservation) obs = observation_from_string (OBS_AFTER);
  g_autofree char *save = sight_observation_node_line (sight_observation_lookup (obs, "e2"));
  g_autofree char *check = sight_observation_node_line (sight_observation_lookup (obs, "e3"));
  g_autofree char *dialog = sight_observation_node_line (sight_observation_lookup (obs, "e7"));
  g_autofree char *password = sight_observation_node_line (sight_observation_lookup (obs, "e5"));

  g_assert_cmpstr (save, ==, "button \"Save\" disabled #e2");
  g_assert_cmpstr (check, ==, "checkbox \"Remember \\\"me\\\"\" checked #e3");
  g_assert_cmpstr (dialog, ==, "dialog \"Done\" modal #e7");
  g_assert_cmpstr (password, ==, "textbox \"Password\" secure #e5");
}

static void
test_diff (void)
{
  g_autoptr(SightObservation) before = observation_from_string (OBS_BEFORE);
  g_autoptr(SightObservation) after = observation_from_string (OBS_AFTER);
  g_autofree char *diff = NULL;
  g_autofree char *same = NULL;
  g_autofree char *bounded = NULL;
  guint n = 0;

  diff = sight_observation_diff (before, after, 0, &n);
  g_assert_cmpstr (diff, ==,
                   "+ dialog \"Done\" modal #e7\n"
                   "   \"All changes saved\"\n"
                   "+  button \"OK\" #e8\n"
                   "- link \"Help\" #e6\n"
                   "~ button \"Save\" disabled #e2 (was: button \"Save\" #e2)\n"
                   "~ checkbox \"Remember \\\"me\\\"\" checked #e3 (was: checkbox \"Remember \\\"me\\\"\" #e3)\n"
                   "~ status #e4 text \"Saved\" (was \"Ready\")");
  g_assert_cmpuint (n, ==, 6);

  same = sight_observation_diff (after, after, 0, &n);
  g_assert_cmpstr (same, ==, "");
  g_assert_cmpuint (n, ==, 0);

  bounded = sight_observation_diff (before, after, 2, &n);
  g_assert_cmpuint (n, ==, 6);
  g_assert_true (g_str_has_suffix (bounded, "\n… 4 more changes"));
}

static void
test_script_resource (void)
{
  const char *script = sight_observation_get_script ();
  g_autofree char *call = sight_observation_build_call ("observe (args)");

  g_assert_nonnull (strstr (script, "__sight.snapshot = {"));
  g_assert_true (g_str_has_prefix (call, script));
  g_assert_true (g_str_has_suffix (call, "\nreturn __sight.snapshot.observe (args);"));
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/observation/json/from-json", test_from_json);
  g_test_add_func ("/observation/json/not-an-observation", test_not_an_observation);
  g_test_add_func ("/observation/json/lookup-hit-test", test_lookup_and_hit_test);
  g_test_add_func ("/observation/json/node-line", test_node_line);
  g_test_add_func ("/observation/json/diff", test_diff);
  g_test_add_func ("/observation/script-resource", test_script_resource);

  return g_test_run ();
}
