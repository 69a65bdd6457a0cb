/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "sight-error.h"
#include "sight-trace-cache.h"

static SightObservation *
observation (const char *url,
             int         width,
             int         height,
             const char *children)
{
  g_autofree char *json = g_strdup_printf (
    "{ \"version\": 1, \"url\": \"%s\", \"title\": \"Shop\","
    "  \"viewport\": { \"width\": %d, \"height\": %d },"
    "  \"tree\": { \"role\": \"document\", \"name\": \"Shop\", \"children\": [ %s ] } }",
    url, width, height, children);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  SightObservation *obs;

  json_parser_load_from_data (parser, json, -1, &error);
  g_assert_no_error (error);
  obs = sight_observation_new_from_json (json_parser_get_root (parser), &error);
  g_assert_no_error (error);
  return obs;
}

static JsonNode *
json (const char *text)
{
  g_autoptr(GError) error = NULL;
  JsonNode *node = json_from_string (text, &error);

  g_assert_no_error (error);
  return node;
}

static const char shop[] =
  "{ \"ref\": \"e1\", \"role\": \"heading\", \"name\": \"Products\", \"box\": [0, 0, 800, 40], \"children\": [] },"
  "{ \"ref\": \"e2\", \"role\": \"button\", \"name\": \"Add to cart\", \"box\": [10, 100, 100, 30], \"children\": [] },"
  "{ \"ref\": \"e3\", \"role\": \"button\", \"name\": \"Add to cart\", \"box\": [10, 200, 100, 30], \"children\": [] },"
  "{ \"ref\": \"e4\", \"role\": \"textbox\", \"name\": \"Coupon\", \"box\": [10, 300, 200, 30], \"children\": [] }";

/* the same page after a redesign: the buttons say "Buy", and moved */
static const char shop_changed[] =
  "{ \"ref\": \"e1\", \"role\": \"heading\", \"name\": \"Products\", \"box\": [0, 0, 800, 40], \"children\": [] },"
  "{ \"ref\": \"e2\", \"role\": \"button\", \"name\": \"Buy\", \"box\": [10, 100, 100, 30], \"children\": [] },"
  "{ \"ref\": \"e3\", \"role\": \"button\", \"name\": \"Buy\", \"box\": [10, 200, 100, 30], \"children\": [] },"
  "{ \"ref\": \"e4\", \"role\": \"textbox\", \"name\": \"Coupon\", \"box\": [50, 500, 400, 60], \"children\": [] }";

static const char cart[] =
  "{ \"ref\": \"e9\", \"role\": \"heading\", \"name\": \"Your cart\", \"children\": [] },"
  "{ \"ref\": \"e10\", \"role\": \"status\", \"name\": \"1 item added\", \"children\": [] }";

static void
test_url_pattern_and_key (void)
{
  struct { const char *url, *pattern; } urls[] = {
    { "http://127.0.0.1:8765/orders/12345?x=1#f", "http://127.0.0.1:8765/orders/:id" },
    { "https://example.com", "https://example.com/" },
    { "https://example.com:443/a/", "https://example.com/a/" },
    { "http://h/u/3f2a9c1e-77aa-4b1d-9c7e-1d2e3f4a5b6c/edit", "http://h/u/:id/edit" },
  };
  g_autoptr(JsonNode) p1 = json ("{ \"email\": \"a@b.c\", \"password\": { \"secret\": \"m.p\" } }");
  g_autoptr(JsonNode) p2 = json ("{ \"password\": \"other\", \"email\": \"x@y.z\" }");
  g_autoptr(JsonNode) p3 = json ("{ \"email\": \"a@b.c\" }");
  g_autofree char *k1 = NULL, *k2 = NULL, *k3 = NULL, *k4 = NULL, *k5 = NULL, *k6 = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (urls); i++)
    {
      g_autofree char *pattern = sight_trace_url_pattern (urls[i].url);

      g_assert_cmpstr (pattern, ==, urls[i].pattern);
    }

  k1 = sight_trace_key ("default", "Sign in", p1, "http://h/orders/1");
  k2 = sight_trace_key ("default", "Sign in", p2, "http://h/orders/2");   /* values differ */
  k3 = sight_trace_key ("default", "Sign in", p3, "http://h/orders/1");   /* names differ */
  k4 = sight_trace_key ("fast", "Sign in", p1, "http://h/orders/1");
  k5 = sight_trace_key ("default", "Sign out", p1, "http://h/orders/1");
  k6 = sight_trace_key ("default", "Sign in", p1, "http://h/invoices/1");
  g_assert_cmpuint (strlen (k1), ==, 64);
  g_assert_cmpstr (k1, ==, k2);
  g_assert_cmpstr (k1, !=, k3);
  g_assert_cmpstr (k1, !=, k4);
  g_assert_cmpstr (k1, !=, k5);
  g_assert_cmpstr (k1, !=, k6);
}

static SightTrace *
shop_trace (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) params = json ("{ \"code\": \"SAVE10\" }");
  SightTrace *trace = sight_trace_new ("default", "add the second product to the cart and use "
                                       "{code}", params, "http://shop.test/products", 800, 600);
  g_autoptr(JsonNode) click_args = json ("{ \"ref\": \"e3\" }");
  g_autoptr(JsonNode) click_desc = json ("{ \"ref\": \"e3\", \"role\": \"button\", \"name\": "
                                         "\"Add to cart\", \"nth\": 1, \"box\": { \"x\": 10, "
                                         "\"y\": 200, \"width\": 100, \"height\": 30 } }");
  g_autoptr(JsonNode) fill_args = json ("{ \"ref\": \"e4\", \"text\": \"{code}\" }");
  g_autoptr(JsonNode) fill_desc = json ("{ \"role\": \"textbox\", \"name\": \"Coupon\", \"nth\": 0 }");
  g_autoptr(JsonNode) tap_desc = json ("{ \"point\": { \"x\": 400, \"y\": 20 }, \"viewport\": "
                                       "{ \"width\": 800, \"height\": 600 } }");
  g_autoptr(JsonNode) key_args = json ("{ \"key\": \"Enter\" }");
  g_autoptr(JsonNode) tap_in_node = json ("{ \"role\": \"textbox\", \"name\": \"Coupon\", \"nth\": 0,"
                                          " \"box\": { \"x\": 10, \"y\": 300, \"width\": 200, "
                                          "\"height\": 30 }, \"offset\": { \"x\": 150, \"y\": 15 } }");

  g_assert_true (sight_trace_add_action (trace, "tap", click_args, click_desc, NULL, &error));
  g_assert_true (sight_trace_add_action (trace, "fill", fill_args, fill_desc, NULL, &error));
  g_assert_true (sight_trace_add_action (trace, "tap_at", NULL, tap_desc, NULL, &error));
  g_assert_true (sight_trace_add_action (trace, "tap_at", NULL, tap_in_node, NULL, &error));
  g_assert_true (sight_trace_add_action (trace, "press", key_args, NULL, NULL, &error));
  g_assert_no_error (error);
  return trace;
}

static void
test_refind (void)
{
  g_autoptr(SightTrace) trace = shop_trace ();
  g_autoptr(SightObservation) same = observation ("http://shop.test/products", 800, 600, shop);
  g_autoptr(SightObservation) changed = observation ("http://shop.test/products", 800, 600,
                                                     shop_changed);
  g_autoptr(SightObservation) wide = observation ("http://shop.test/products", 1280, 720, shop);
  g_autoptr(SightObservation) one = observation ("http://shop.test/products", 800, 600,
    "{ \"ref\": \"e7\", \"role\": \"button\", \"name\": \"Add to cart\", \"children\": [] }");
  char *ref = NULL;
  double x = -1, y = -1;
  g_autofree char *reason = NULL;

  g_assert_cmpuint (sight_trace_get_n_actions (trace), ==, 5);

  /* the same page: the 2nd "Add to cart" by descriptor, whatever its ref */
  g_assert_true (sight_trace_refind (trace, 0, same, &ref, &x, &y, &reason));
  g_assert_cmpstr (ref, ==, "e3");
  g_clear_pointer (&ref, g_free);
  g_assert_true (sight_trace_refind (trace, 1, same, &ref, &x, &y, &reason));
  g_assert_cmpstr (ref, ==, "e4");
  g_clear_pointer (&ref, g_free);
  /* a bare point on a viewport of the recorded size: the same point */
  g_assert_true (sight_trace_refind (trace, 2, same, &ref, &x, &y, &reason));
  g_assert_null (ref);
  g_assert_cmpfloat (x, ==, 400);
  g_assert_cmpfloat (y, ==, 20);
  /* a key needs nothing re-found */
  g_assert_true (sight_trace_refind (trace, 4, same, &ref, &x, &y, &reason));
  g_assert_null (ref);

  /* changed DOM: missed, with the reason */
  g_assert_false (sight_trace_refind (trace, 0, changed, &ref, &x, &y, &reason));
  g_assert_nonnull (strstr (reason, "no button \"Add to cart\""));
  g_clear_pointer (&reason, g_free);
  /* a point inside a node: the same place inside its live box */
  g_assert_true (sight_trace_refind (trace, 3, changed, &ref, &x, &y, &reason));
  g_assert_null (ref);
  g_assert_cmpfloat_with_epsilon (x, 50 + 150 * 2, 0.01);
  g_assert_cmpfloat_with_epsilon (y, 500 + 15 * 2, 0.01);
  /* one left where the trace used the second */
  g_assert_true (sight_trace_refind (trace, 0, one, &ref, &x, &y, &reason));
  g_assert_cmpstr (ref, ==, "e7");   /* the only one is the one */
  g_clear_pointer (&ref, g_free);

  /* changed viewport: a bare point is missed */
  g_assert_false (sight_trace_refind (trace, 2, wide, &ref, &x, &y, &reason));
  g_assert_nonnull (strstr (reason, "1280x720"));
  g_assert_nonnull (strstr (reason, "800x600"));
}

static void
test_end_state (void)
{
  g_autoptr(SightTrace) trace = shop_trace ();
  g_autoptr(SightObservation) end = observation ("http://shop.test/cart/991", 800, 600, cart);
  g_autoptr(SightObservation) again = observation ("http://shop.test/cart/1204", 1024, 768, cart);
  g_autoptr(SightObservation) empty = observation ("http://shop.test/cart/1204", 800, 600,
    "{ \"ref\": \"e9\", \"role\": \"heading\", \"name\": \"Your cart\", \"children\": [] }");
  g_autoptr(SightObservation) elsewhere = observation ("http://shop.test/products", 800, 600, shop);
  g_autofree char *reason = NULL;

  g_assert_false (sight_trace_end_state_returned (trace, end, &reason));
  g_clear_pointer (&reason, g_free);
  sight_trace_set_end_state (trace, end);
  g_assert_true (sight_trace_end_state_returned (trace, again, &reason));
  g_assert_null (reason);
  g_assert_false (sight_trace_end_state_returned (trace, empty, &reason));
  g_assert_nonnull (strstr (reason, "status \"1 item added\""));
  g_clear_pointer (&reason, g_free);
  g_assert_false (sight_trace_end_state_returned (trace, elsewhere, &reason));
  g_assert_nonnull (strstr (reason, "/cart/:id"));
}

static void
test_secrets_never_stored (void)
{
  g_autoptr(JsonNode) params = json ("{ \"password\": { \"secret\": \"member.password\" } }");
  g_autoptr(SightTrace) trace = sight_trace_new ("default", "Sign in", params, "http://h/login",
                                                 800, 600);
  g_autoptr(JsonNode) leaked = json ("{ \"ref\": \"e2\", \"text\": \"hunter2\" }");
  g_autoptr(JsonNode) named = json ("{ \"ref\": \"e2\", \"text\": \"{password}\" }");
  const char *secrets[] = { "hunter2", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) saved = NULL;
  g_autofree char *text = NULL;

  g_assert_false (sight_trace_add_action (trace, "fill", leaked, NULL, secrets, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_POLICY_DENIED);
  g_clear_error (&error);
  g_assert_true (sight_trace_add_action (trace, "fill", named, NULL, secrets, &error));
  saved = sight_trace_to_json (trace);
  text = json_to_string (saved, FALSE);
  g_assert_null (strstr (text, "hunter2"));
  g_assert_nonnull (strstr (text, "{password}"));
  g_assert_cmpuint (sight_trace_get_n_actions (trace), ==, 1);
}

static void
test_store_and_heal (void)
{
  g_autofree char *dir = g_dir_make_tmp ("sight-traces-XXXXXX", NULL);
  g_autoptr(SightTraceCache) cache = sight_trace_cache_new (dir);
  g_autoptr(SightTrace) trace = shop_trace ();
  g_autoptr(SightTrace) back = NULL;
  g_autoptr(SightObservation) end = observation ("http://shop.test/cart/991", 800, 600, cart);
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) review = NULL;
  g_autofree char *path = NULL;
  g_autofree char *bogus = NULL;
  const char *key = sight_trace_get_key (trace);
  GStatBuf st;

  g_assert_null (sight_trace_cache_lookup (cache, key));
  sight_trace_set_end_state (trace, end);
  g_assert_true (sight_trace_cache_save (cache, trace, &error));
  g_assert_no_error (error);
  path = g_strdup_printf ("%s/%s.json", dir, key);
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0600);

  back = sight_trace_cache_lookup (cache, key);
  g_assert_nonnull (back);
  g_assert_cmpuint (sight_trace_get_n_actions (back), ==, 5);
  g_assert_cmpstr (json_object_get_string_member (sight_trace_get_action (back, 0), "tool"), ==,
                   "tap");
  g_assert_true (sight_trace_end_state_returned (back, end, NULL));
  g_assert_false (sight_trace_needs_review (back));

  review = sight_trace_cache_list_review (cache);
  g_assert_cmpuint (g_strv_length (review), ==, 0);
  g_clear_pointer (&review, g_strfreev);

  /* the model healed it: written back, marked for review */
  g_assert_true (sight_trace_cache_save_healed (cache, back, &error));
  g_clear_pointer (&back, sight_trace_unref);
  back = sight_trace_cache_lookup (cache, key);
  g_assert_true (sight_trace_needs_review (back));
  review = sight_trace_cache_list_review (cache);
  g_assert_cmpuint (g_strv_length (review), ==, 1);
  g_assert_cmpstr (review[0], ==, key);
  g_clear_pointer (&review, g_strfreev);
  g_assert_true (sight_trace_cache_mark_reviewed (cache, key, &error));
  review = sight_trace_cache_list_review (cache);
  g_assert_cmpuint (g_strv_length (review), ==, 0);

  /* keys that are not digests never touch the file system */
  g_assert_null (sight_trace_cache_lookup (cache, "../../etc/passwd"));
  /* a trace that does not read is a miss, not a crash */
  bogus = g_strdup_printf ("%s/%s.json", dir, "abcdef");
  g_assert_true (g_file_set_contents (bogus, "{ not json", -1, NULL));
  g_assert_null (sight_trace_cache_lookup (cache, "abcdef"));
  g_remove (bogus);

  g_assert_true (sight_trace_cache_forget (cache, key));
  g_assert_null (sight_trace_cache_lookup (cache, key));
  g_rmdir (dir);
}

static void
test_cache_info (void)
{
  g_autoptr(JsonNode) info = sight_cache_info_new (SIGHT_CACHE_MISSED, "the viewport\x01 changed");
  g_autoptr(JsonNode) self = sight_cache_info_new (SIGHT_CACHE_SELF_FINALIZED, NULL);
  JsonObject *o = json_node_get_object (info);

  g_assert_cmpstr (json_object_get_string_member (o, "status"), ==, "missed");
  g_assert_nonnull (strstr (json_object_get_string_member (o, "reason"), "changed"));
  g_assert_null (strchr (json_object_get_string_member (o, "reason"), '\x01'));
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (self), "status"), ==,
                   "self-finalized");
  g_assert_false (json_object_has_member (json_node_get_object (self), "reason"));
  g_assert_cmpstr (sight_cache_status_to_string (SIGHT_CACHE_AGENT_CONCLUDED), ==,
                   "agent-concluded");
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/trace-cache/url-pattern-and-key", test_url_pattern_and_key);
  g_test_add_func ("/trace-cache/refind", test_refind);
  g_test_add_func ("/trace-cache/end-state", test_end_state);
  g_test_add_func ("/trace-cache/secrets-never-stored", test_secrets_never_stored);
  g_test_add_func ("/trace-cache/store-and-heal", test_store_and_heal);
  g_test_add_func ("/trace-cache/cache-info", test_cache_info);
  return g_test_run ();
}
