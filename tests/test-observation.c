/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-observation"

#include "config.h"

#include <gtk/gtk.h>
#include <json-glib/json-glib.h>
#include <libsoup/soup.h>
#include <string.h>

#include "sight-actions.h"
#include "sight-error.h"
#include "sight-observation.h"
#include "sight-secret-fields.h"
#include "sight-web-page.h"
#include "sight-web-page-private.h"

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

/* The tree in document order with parents and positions, text runs
 * included: what the inspector searches and selects by. */
static void
test_nodes_index (void)
{
  g_autoptr(SightObservation) obs = observation_from_string (OBS_AFTER);
  const SightObservationNode *nodes;
  guint n = 0, index = 0;

  nodes = sight_observation_get_nodes (obs, &n);
  /* document, main, e2, e3, e4, its text, e5, e7, its text, e8 */
  g_assert_cmpuint (n, ==, 10);
  g_assert_cmpstr (nodes[0].role, ==, "document");
  g_assert_cmpuint (nodes[0].parent, ==, G_MAXUINT);
  g_assert_cmpstr (nodes[1].ref, ==, "e1");
  g_assert_cmpuint (nodes[1].parent, ==, 0);
  g_assert_cmpstr (nodes[4].ref, ==, "e4");
  g_assert_cmpuint (nodes[4].position, ==, 2);
  g_assert_cmpstr (nodes[5].role, ==, "");
  g_assert_cmpstr (nodes[5].ref, ==, "");
  g_assert_cmpuint (nodes[5].parent, ==, 4);
  g_assert_cmpstr (nodes[7].name, ==, "Done");
  g_assert_cmpuint (nodes[7].position, ==, 4);
  g_assert_cmpstr (nodes[9].ref, ==, "e8");
  g_assert_cmpuint (nodes[9].parent, ==, 7);
  g_assert_cmpuint (nodes[9].position, ==, 1);
  g_assert_true (sight_observation_find_ref (obs, "e8", &index));
  g_assert_cmpuint (index, ==, 9);
  g_assert_true (nodes[index].node == sight_observation_lookup (obs, "e8"));
  g_assert_false (sight_observation_find_ref (obs, "e6", NULL));
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


/* ----------------------------------------------------------------------- */
/* In WebKitGTK: fixture pages served on loopback                           */

static SoupServer *server;
static char *base_url;
static guint server_port;
static char *cards_html;
static char *big_cards_html;
static char *text_html;
static char *slices_html;

static void
server_cb (SoupServer        *soup_server,
           SoupServerMessage *msg,
           const char        *path,
           GHashTable        *query,
           gpointer           user_data)
{
  g_autofree char *name = g_path_get_basename (path);
  g_autofree char *file = NULL;
  char *contents = NULL;
  gsize length = 0;

  if (g_str_equal (path, "/text-10mb.html"))
    {
      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "text/html; charset=utf-8", SOUP_MEMORY_STATIC,
                                        text_html, strlen (text_html));
      return;
    }
  if (g_str_equal (path, "/cards-31250.html"))
    {
      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "text/html; charset=utf-8", SOUP_MEMORY_STATIC,
                                        big_cards_html, strlen (big_cards_html));
      return;
    }
  if (g_str_equal (path, "/slices.html"))
    {
      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "text/html; charset=utf-8", SOUP_MEMORY_STATIC,
                                        slices_html, strlen (slices_html));
      return;
    }
  if (g_str_equal (path, "/cards-12500.html"))
    {
      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "text/html; charset=utf-8", SOUP_MEMORY_STATIC,
                                        cards_html, strlen (cards_html));
      return;
    }
  file = g_test_build_filename (G_TEST_DIST, "fixtures", "observation", name, NULL);
  if (g_str_has_suffix (name, ".html") && g_file_get_contents (file, &contents, &length, NULL))
    {
      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "text/html; charset=utf-8", SOUP_MEMORY_TAKE,
                                        contents, length);
      return;
    }
  soup_server_message_set_status (msg, 404, NULL);
  soup_server_message_set_response (msg, "text/plain", SOUP_MEMORY_STATIC, "missing", 7);
}

static char *
build_cards_page (guint n)
{
  GString *s = g_string_new ("<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
                             "<title>Cards</title><style>.grid{display:grid;"
                             "grid-template-columns:repeat(4,1fr)}</style></head><body>"
                             "<main><h1>Products</h1><div class=grid>");

  for (guint i = 1; i <= n; i++)
    g_string_append_printf (s, "<article><img src=\"data:,\" alt=\"Item %u photo\" width=40 "
                            "height=40><div><h3><a href=\"/p/%u\">Item %u</a></h3><p>In stock"
                            "</p><span>$%u.00</span> <button aria-label=\"Add item %u to "
                            "cart\">Add</button></div></article>", i, i, i, i % 97 + 1, i);
  g_string_append (s, "</div></main></body></html>");
  return g_string_free (s, FALSE);
}

/* A medium page for the sliced fetch: 1,000 cards, then text of characters
 * outside the BMP (two UTF-16 code units each), so that slice ends fall
 * inside surrogate pairs, and an escaped quote and backslash. */
static char *
build_slices_page (void)
{
  g_autofree char *cards = build_cards_page (1000);
  GString *s = g_string_new (NULL);
  const char *end = strstr (cards, "</div></main>");

  g_string_append_len (s, cards, end - cards);
  for (guint i = 0; i < 40; i++)
    {
      g_string_append_printf (s, "<p>Basket %u \\ \"", i);
      for (guint j = 0; j < 1500; j++)
        g_string_append (s, j % 3 ? "\xf0\x9f\x9b\x92" : "\xc3\xa9");
      g_string_append (s, "</p>");
    }
  g_string_append (s, end);
  return g_string_free (s, FALSE);
}

/* 10 MB of text: one paragraph of 1 MB, then 2,300 of 4 KB that WebKit lays
 * out only near the viewport (content-visibility), or loading the page would
 * take most of a minute on a busy machine. */
static char *
build_text_page (void)
{
  GString *s = g_string_new ("<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
                             "<title>Text</title><style>.c{content-visibility:auto;"
                             "contain-intrinsic-size:auto 300px}</style></head><body><main>"
                             "<h1>Minutes</h1><p>");

  for (guint i = 0; i < 1024 * 1024 / 8; i++)
    g_string_append_printf (s, "w%06u ", i);
  g_string_append (s, "</p>");
  for (guint i = 0; i < 2300; i++)
    {
      g_string_append_printf (s, "<p class=c>Paragraph %u:", i);
      for (guint j = 0; j < 4000 / 8; j++)
        g_string_append (s, " lorem. ");
      g_string_append (s, "</p>");
    }
  g_string_append (s, "</main></body></html>");
  return g_string_free (s, FALSE);
}

typedef struct {
  GMainLoop    *loop;
  GAsyncResult *result;
} Waiter;

static void
waiter_done_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  Waiter *w = user_data;

  w->result = g_object_ref (result);
  g_main_loop_quit (w->loop);
}

static GAsyncResult *
waiter_run (Waiter *w)
{
  g_main_loop_run (w->loop);
  return w->result;
}

static void
waiter_clear (Waiter *w)
{
  g_clear_object (&w->result);
  g_clear_pointer (&w->loop, g_main_loop_unref);
}

/* One page (one web process) serves every test: each load starts a new
 * document, and with it new refs. Loads and scripts have this deadline
 * (longer for the quarter-million page). */
static guint deadline_ms = 30000;

static SightWebPage *shared_page;

static SightWebPage *
load_page (const char *path)
{
  g_autoptr(SightWebPage) page = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *url = g_strconcat (base_url, path, NULL);
  Waiter w = { g_main_loop_new (NULL, FALSE), NULL };

  if (shared_page == NULL)
    {
      shared_page = sight_web_page_new ();
      sight_web_page_set_viewport (shared_page, 1024, 768, 1.0);
    }
  page = g_object_ref (shared_page);
  /* A page that takes long to load keeps its web process busy that long. */
  sight_web_page_set_hang_timeout (page, deadline_ms > 30000 ? 60000 : 5000);
  sight_web_page_load_async (page, url, SIGHT_WAIT_UNTIL_LOAD, deadline_ms, NULL, waiter_done_cb,
                             &w);
  g_assert_true (sight_web_page_load_finish (page, waiter_run (&w), &error));
  g_assert_no_error (error);
  waiter_clear (&w);
  return g_steal_pointer (&page);
}

/* A new observation, or with @current, the page as it is now
 * (sight_observation_capture_current_async()). */
static SightObservation *
capture_as (SightWebPage      *page,
            SightObserveFlags  flags,
            gboolean           current)
{
  g_autoptr(GError) error = NULL;
  Waiter w = { g_main_loop_new (NULL, FALSE), NULL };
  SightObservation *obs;

  if (current)
    sight_observation_capture_current_async (page, flags, deadline_ms, NULL, waiter_done_cb, &w);
  else
    sight_observation_capture_async (page, flags, deadline_ms, NULL, waiter_done_cb, &w);
  obs = sight_observation_capture_finish (waiter_run (&w), &error);
  g_assert_no_error (error);
  g_assert_nonnull (obs);
  waiter_clear (&w);
  return obs;
}

static SightObservation *
capture (SightWebPage      *page,
         SightObserveFlags  flags)
{
  return capture_as (page, flags, FALSE);
}

static SightObservation *
capture_current (SightWebPage      *page,
                 SightObserveFlags  flags)
{
  return capture_as (page, flags, TRUE);
}

/* Runs @body with the snapshot script installed; returns its JSON value. */
static JsonNode *
run_script (SightWebPage *page,
            const char   *body)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *full = g_strconcat (sight_observation_get_script (), "\n", body, NULL);
  Waiter w = { g_main_loop_new (NULL, FALSE), NULL };
  JsonNode *value;

  sight_web_page_evaluate_async (page, full, NULL, deadline_ms, NULL, waiter_done_cb, &w);
  value = sight_web_page_evaluate_finish (page, waiter_run (&w), &error);
  g_assert_no_error (error);
  waiter_clear (&w);
  return value;
}

/* The text without its first line (the page line, which names the port). */
static const char *
body_of (const char *text)
{
  const char *nl = strchr (text, '\n');

  return nl != NULL ? nl + 1 : "";
}

static void
test_rule_fixture (gconstpointer data)
{
  const char *name = data;
  g_autofree char *path = g_strconcat (name, ".html", NULL);
  g_autofree char *expected_file = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *port = g_strdup_printf ("%u", server_port);
  g_autoptr(GString) want = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SightWebPage) page = load_page (path);
  g_autoptr(SightObservation) obs = capture (page, SIGHT_OBSERVE_FULL_TEXT);

  expected_file = g_strconcat (name, ".txt", NULL);
  g_file_get_contents (g_test_get_filename (G_TEST_DIST, "fixtures", "observation",
                                            expected_file, NULL),
                       &expected, NULL, &error);
  g_assert_no_error (error);
  want = g_string_new (expected);
  g_string_replace (want, "{port}", port, 0);
  if (want->len > 0 && want->str[want->len - 1] == '\n')
    g_string_truncate (want, want->len - 1);

  g_assert_true (sight_observation_is_full_text (obs));
  g_assert_true (g_str_has_prefix (sight_observation_get_text (obs), "page \""));
  g_assert_cmpstr (body_of (sight_observation_get_text (obs)), ==, want->str);
}

/* The model's text says a link once: the image and the heading inside it,
 * which the full text lists, are left out of it. */
static void
test_nested_quiet (void)
{
  g_autoptr(SightWebPage) page = load_page ("nesting.html");
  g_autoptr(SightObservation) obs = capture (page, SIGHT_OBSERVE_DEFAULT);
  const char *text = sight_observation_get_text (obs);

  g_assert_false (sight_observation_is_full_text (obs));
  g_assert_nonnull (strstr (text, "link \"Acme home\" #e2\n"));
  g_assert_nonnull (strstr (text, "link \"ThumbnailSecond post\" #e7\n"));
  g_assert_nonnull (strstr (text, "button \"Close\" #e9\n"));
  g_assert_null (strstr (text, "img \"Acme home\""));
  g_assert_null (strstr (text, "heading \"First post title\""));
  g_assert_null (strstr (text, "listitem"));
  g_assert_null (strstr (text, "img \"Logo\""));
}

static void
test_hidden_excluded (void)
{
  g_autoptr(SightWebPage) page = load_page ("hidden.html");
  g_autoptr(SightObservation) obs = capture (page, SIGHT_OBSERVE_FULL_TEXT);
  g_autofree char *json = sight_observation_to_json (obs, FALSE);
  const char *hidden[] = { "Display none", "Visibility hidden", "Collapsed", "Hidden attribute",
                           "Aria hidden", "Inert", "Until found", "Found text",
                           "Content skipped", "Skipped text" };

  for (guint i = 0; i < G_N_ELEMENTS (hidden); i++)
    {
      g_assert_null (strstr (sight_observation_get_text (obs), hidden[i]));
      g_assert_null (strstr (json, hidden[i]));
    }
  g_assert_nonnull (strstr (sight_observation_get_text (obs), "link \"Visible again\""));
}

static char *
ref_of_line (const char *text,
             const char *line_start)
{
  const char *p = strstr (text, line_start);
  const char *hash, *end;

  g_assert_nonnull (p);
  end = strchr (p, '\n');
  if (end == NULL)
    end = p + strlen (p);
  hash = g_strrstr_len (p, end - p, "#");
  g_assert_nonnull (hash);
  return g_strndup (hash + 1, end - hash - 1);
}

static void
test_refs_stable (void)
{
  g_autoptr(SightWebPage) page = load_page ("roles.html");
  g_autoptr(SightObservation) first = capture (page, SIGHT_OBSERVE_FULL_TEXT);
  g_autoptr(SightObservation) second = capture (page, SIGHT_OBSERVE_FULL_TEXT);
  g_autoptr(SightObservation) third = NULL;
  g_autoptr(JsonNode) changed = NULL;
  g_autoptr(JsonNode) resolved = NULL;
  g_autofree char *title_ref = NULL;
  g_autofree char *minor_ref = NULL;
  g_autofree char *press_ref = NULL;
  g_autofree char *new_ref = NULL;
  g_autofree char *body = NULL;

  /* Two observations of one document: the same refs everywhere. */
  g_assert_cmpstr (sight_observation_get_text (first), ==, sight_observation_get_text (second));

  title_ref = ref_of_line (sight_observation_get_text (first), "heading \"Title\"");
  minor_ref = ref_of_line (sight_observation_get_text (first), "heading \"Minor\"");
  press_ref = ref_of_line (sight_observation_get_text (first), "button \"Press\"");

  /* Insert a button before everything and remove a heading. */
  changed = run_script (page,
                        "const b = document.createElement ('button');"
                        "b.textContent = 'New first';"
                        "document.querySelector ('main').prepend (b);"
                        "document.querySelector ('h4').remove ();"
                        "return true;");
  third = capture (page, SIGHT_OBSERVE_FULL_TEXT);
  new_ref = ref_of_line (sight_observation_get_text (third), "button \"New first\"");

  {
    g_autofree char *title_after = ref_of_line (sight_observation_get_text (third),
                                                "heading \"Title\"");
    g_autofree char *press_after = ref_of_line (sight_observation_get_text (third),
                                                "button \"Press\"");

    g_assert_cmpstr (title_after, ==, title_ref);
    g_assert_cmpstr (press_after, ==, press_ref);
  }
  g_assert_null (strstr (sight_observation_get_text (third), "Minor"));
  /* The new element gets a ref never used before in this document. */
  g_assert_null (strstr (sight_observation_get_text (first), new_ref));
  g_assert_nonnull (sight_observation_lookup (third, new_ref));
  g_assert_null (sight_observation_lookup (third, minor_ref));

  /* Refs resolve back to their elements (what the actions code uses); a
   * removed element's ref resolves to nothing. */
  body = g_strdup_printf ("const s = __sight.snapshot;"
                          "const t = s.resolve ('%s'), m = s.resolve ('%s'), n = s.resolve ('%s');"
                          "return [t && t.textContent, m === null, n && n.textContent];",
                          title_ref, minor_ref, new_ref);
  resolved = run_script (page, body);
  g_assert_true (JSON_NODE_HOLDS_ARRAY (resolved));
  g_assert_cmpstr (json_array_get_string_element (json_node_get_array (resolved), 0), ==, "Title");
  g_assert_true (json_array_get_boolean_element (json_node_get_array (resolved), 1));
  g_assert_cmpstr (json_array_get_string_element (json_node_get_array (resolved), 2), ==,
                   "New first");
}

static void
test_diff_live (void)
{
  g_autoptr(SightWebPage) page = load_page ("states.html");
  g_autoptr(SightObservation) before = capture (page, SIGHT_OBSERVE_DEFAULT);
  g_autoptr(SightObservation) after = NULL;
  g_autoptr(JsonNode) changed = NULL;
  g_autofree char *diff = NULL;
  g_autofree char *checked = NULL;
  g_autofree char *disabled = NULL;
  g_autofree char *expected = NULL;
  guint n = 0;

  checked = ref_of_line (sight_observation_get_text (before), "checkbox \"Checked\"");
  disabled = ref_of_line (sight_observation_get_text (before), "button \"Disabled\"");

  changed = run_script (page,
                        "document.querySelector ('[aria-label=Checked]').click ();"
                        "document.querySelector ('button[disabled]').remove ();"
                        "const s = document.createElement ('div');"
                        "s.setAttribute ('role', 'status');"
                        "s.textContent = 'Saved';"
                        "document.body.append (s);"
                        "return true;");
  after = capture (page, SIGHT_OBSERVE_DEFAULT);
  diff = sight_observation_diff (before, after, 0, &n);

  {
    g_autofree char *status = ref_of_line (sight_observation_get_text (after), "status");

    expected = g_strdup_printf ("+ status #%s\n"
                                "   \"Saved\"\n"
                                "- button \"Disabled\" disabled #%s\n"
                                "~ checkbox \"Checked\" #%s (was: checkbox \"Checked\" checked #%s)",
                                status, disabled, checked, checked);
  }
  g_assert_cmpstr (diff, ==, expected);
  g_assert_cmpuint (n, ==, 3);
}

/* A step that reads the page as it is now gets the page's last observation
 * again while nothing changed (no second walk), and a new one once the page
 * changed or other flags are asked for. */
static void
test_current (void)
{
  g_autoptr(SightWebPage) page = load_page ("states.html");
  g_autoptr(SightObservation) first = capture_current (page, SIGHT_OBSERVE_DEFAULT);
  g_autoptr(SightObservation) again = capture_current (page, SIGHT_OBSERVE_DEFAULT);
  g_autoptr(SightObservation) full = NULL;
  g_autoptr(SightObservation) changed = NULL;
  g_autoptr(SightObservation) since = NULL;
  g_autoptr(JsonNode) done = NULL;
  g_autoptr(JsonNode) more = NULL;

  g_assert_nonnull (sight_observation_get_state (first));
  g_assert_true (again == first);
  full = capture_current (page, SIGHT_OBSERVE_FULL_TEXT);
  g_assert_true (full != first);

  done = run_script (page, "const s = document.createElement ('div');"
                           "s.setAttribute ('role', 'status'); s.textContent = 'Saved';"
                           "document.body.append (s); return true;");
  changed = capture_current (page, SIGHT_OBSERVE_DEFAULT);
  g_assert_true (changed != first);
  g_assert_nonnull (strstr (sight_observation_get_text (changed), "status"));
  g_assert_null (strstr (sight_observation_get_text (first), "Saved"));

  /* The page remembers what a since-capture saw too. */
  {
    g_autoptr(GError) error = NULL;
    Waiter w = { g_main_loop_new (NULL, FALSE), NULL };
    g_autoptr(SightObservation) now = NULL;

    more = run_script (page, "document.body.append ('more'); return true;");
    sight_observation_capture_since_async (page, SIGHT_OBSERVE_DEFAULT, changed, deadline_ms,
                                           NULL, waiter_done_cb, &w);
    since = sight_observation_capture_finish (waiter_run (&w), &error);
    g_assert_no_error (error);
    waiter_clear (&w);
    g_assert_true (since != changed);
    now = capture_current (page, SIGHT_OBSERVE_DEFAULT);
    g_assert_true (now == since);
  }
}

static GdkPixbuf *
decode (GBytes *png)
{
  g_autoptr(GdkPixbufLoader) loader = gdk_pixbuf_loader_new ();
  g_autoptr(GError) error = NULL;

  gdk_pixbuf_loader_write_bytes (loader, png, &error);
  g_assert_no_error (error);
  gdk_pixbuf_loader_close (loader, &error);
  g_assert_no_error (error);
  return g_object_ref (gdk_pixbuf_loader_get_pixbuf (loader));
}

/* TRUE when the pixel at CSS point (@x, @y) is the fixture's pure red. */
static gboolean
is_red_at (GdkPixbuf *pixbuf,
           double     scale,
           double     x,
           double     y)
{
  int px = (int) (x * scale), py = (int) (y * scale);
  const guint8 *p;

  g_assert_cmpint (px, <, gdk_pixbuf_get_width (pixbuf));
  g_assert_cmpint (py, <, gdk_pixbuf_get_height (pixbuf));
  p = gdk_pixbuf_read_pixels (pixbuf) + py * gdk_pixbuf_get_rowstride (pixbuf) +
      px * gdk_pixbuf_get_n_channels (pixbuf);
  return p[0] > 200 && p[1] < 60 && p[2] < 60;
}

static void
test_masking (void)
{
  g_autoptr(SightWebPage) page = load_page ("secure.html");
  g_autoptr(SightObservation) obs = capture (page, SIGHT_OBSERVE_SCREENSHOT);
  g_autoptr(GdkPixbuf) masked = NULL;
  g_autoptr(GdkPixbuf) plain = NULL;
  g_autoptr(SightScreenshot) unmasked = NULL;
  g_autoptr(GError) error = NULL;
  SightScreenshotOptions options = SIGHT_SCREENSHOT_OPTIONS_INIT;
  const SightScreenshot *shot;
  Waiter w = { g_main_loop_new (NULL, FALSE), NULL };

  g_assert_cmpuint (sight_observation_get_n_secure (obs), ==, 1);
  g_assert_cmpuint (sight_observation_get_n_masked (obs), ==, 1);
  g_assert_true (sight_observation_masking_proven (obs));
  g_assert_null (strstr (sight_observation_get_text (obs), "hunter2"));

  shot = sight_observation_get_screenshot (obs);
  g_assert_nonnull (shot);
  g_assert_cmpint (MAX (shot->width, shot->height), <=, SIGHT_OBSERVATION_MAX_SIDE);
  masked = decode (shot->bytes);

  /* A screenshot asked for with no masks covers the secure field too... */
  options.max_side = SIGHT_OBSERVATION_MAX_SIDE;
  sight_web_page_screenshot_async (page, &options, NULL, waiter_done_cb, &w);
  unmasked = sight_web_page_screenshot_finish (page, waiter_run (&w), &error);
  g_assert_no_error (error);
  waiter_clear (&w);
  plain = decode (unmasked->bytes);
  g_assert_cmpuint (unmasked->n_masked, ==, 1);
  g_assert_true (is_red_at (plain, unmasked->scale, 190, 70));
  g_assert_false (is_red_at (plain, unmasked->scale, 190, 190));
  g_clear_object (&plain);
  g_clear_pointer (&unmasked, sight_screenshot_free);

  /* ...and once it is a plain field, it is red like the other one. */
  json_node_unref (run_script (page, "document.getElementById ('pass').type = 'text'; return 1;"));
  w.loop = g_main_loop_new (NULL, FALSE);
  sight_web_page_screenshot_async (page, &options, NULL, waiter_done_cb, &w);
  unmasked = sight_web_page_screenshot_finish (page, waiter_run (&w), &error);
  g_assert_no_error (error);
  waiter_clear (&w);
  plain = decode (unmasked->bytes);
  g_assert_cmpuint (unmasked->n_masked, ==, 0);
  g_assert_true (is_red_at (plain, unmasked->scale, 190, 190));
  g_assert_true (is_red_at (plain, unmasked->scale, 50, 170));

  /* ...and in the observation's screenshot none of its pixels are. */
  g_assert_true (is_red_at (masked, shot->scale, 190, 70));
  for (double x = 42; x < 340; x += 12)
    for (double y = 162; y < 220; y += 6)
      g_assert_false (is_red_at (masked, shot->scale, x, y));
}

/* Red pixels of @pixbuf inside @rect (CSS pixels). */
static guint
count_red (GdkPixbuf       *pixbuf,
           double           scale,
           const SightRect *rect)
{
  guint n = 0;

  for (double y = rect->y + 1; y < rect->y + rect->height - 1; y += 2)
    for (double x = rect->x + 1; x < rect->x + rect->width - 1; x += 2)
      if (x * scale < gdk_pixbuf_get_width (pixbuf) && y * scale < gdk_pixbuf_get_height (pixbuf) &&
          is_red_at (pixbuf, scale, x, y))
        n++;
  return n;
}

/* The box of what @expression (JS, an element or a Range) gives. */
static SightRect
box_of (SightWebPage *page,
        const char   *expression)
{
  g_autofree char *body = g_strdup_printf ("const r = (%s).getBoundingClientRect ();\n"
                                           "return [r.left, r.top, r.width, r.height];",
                                           expression);
  g_autoptr(JsonNode) node = run_script (page, body);
  JsonArray *a = json_node_get_array (node);
  SightRect rect = { json_array_get_double_element (a, 0), json_array_get_double_element (a, 1),
                     json_array_get_double_element (a, 2), json_array_get_double_element (a, 3) };

  g_assert_cmpfloat (rect.width, >, 10);
  return rect;
}

#define SECRET_VALUE "Zq7hunter2"
/* The secret's own run in the echo line, and the text before it. */
#define ECHO_RUN "(() => { const t = document.getElementById ('echo').firstChild;" \
  " const r = document.createRange (); r.setStart (t, 7); r.setEnd (t, t.data.length); return r; }) ()"
#define ECHO_PREFIX "(() => { const t = document.getElementById ('echo').firstChild;" \
  " const r = document.createRange (); r.setStart (t, 0); r.setEnd (t, 5); return r; }) ()"

/* Types SECRET_VALUE into the password field, as a secret (the one secret
 * fill) or as a plain fill, then "shows" the password: the field turns into
 * a text field and moves.  Returns the observation's decoded screenshot. */
static GdkPixbuf *
echo_page_shot (SightWebPage      *page,
                gboolean           secret,
                SightObservation **out_obs)
{
  g_autoptr(SightObservation) before = capture (page, SIGHT_OBSERVE_DEFAULT);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) reply = NULL;
  g_autoptr(JsonObject) action = json_object_new ();
  Waiter w = { g_main_loop_new (NULL, FALSE), NULL };
  const char *ref = NULL;
  JsonArray *nodes = NULL;
  g_autoptr(JsonNode) tree = json_from_string (sight_observation_to_json (before, FALSE), NULL);

  g_assert_nonnull (tree);
  nodes = json_object_get_array_member (json_node_get_object (tree), "secure");
  g_assert_cmpuint (json_array_get_length (nodes), ==, 1);
  ref = json_object_get_string_member (json_array_get_object_element (nodes, 0), "ref");
  if (secret)
    sight_web_page_fill_secret_async (page, ref, SECRET_VALUE, "password", 10000, NULL,
                                      waiter_done_cb, &w);
  else
    {
      json_object_set_string_member (action, "type", "fill");
      json_object_set_string_member (action, "value", SECRET_VALUE);
      sight_web_page_perform_async (page, ref, action, 10000, NULL, waiter_done_cb, &w);
    }
  reply = secret ? sight_web_page_fill_secret_finish (page, waiter_run (&w), &error)
                 : sight_web_page_perform_finish (page, waiter_run (&w), &error);
  g_assert_no_error (error);
  waiter_clear (&w);
  /* The result holds no value. */
  if (secret)
    {
      g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), reply);
      g_autofree char *text = json_to_string (node, FALSE);

      g_assert_null (strstr (text, SECRET_VALUE));
    }
  json_node_unref (run_script (page, "const p = document.getElementById ('pass');\n"
                                     "p.type = 'text'; p.autocomplete = 'off'; p.style.top = '520px';\n"
                                     "return p.value.length;"));
  *out_obs = capture (page, SIGHT_OBSERVE_SCREENSHOT);
  return decode (sight_observation_get_screenshot (*out_obs)->bytes);
}

/* A secret typed into a field is painted over wherever it shows when the
 * screenshot is taken: the field itself after it stopped being a password
 * field and moved, the page's echo of it, the same text split over two
 * elements, and a placeholder it was copied into.  The same page filled
 * with a plain value shows every one of them. */
static void
test_secret_masking (void)
{
  g_autoptr(SightWebPage) plain_page = load_page ("secret-echo.html");
  g_autoptr(SightWebPage) page = sight_web_page_new ();
  g_autoptr(SightObservation) plain_obs = NULL;
  g_autoptr(SightObservation) obs = NULL;
  g_autoptr(GdkPixbuf) plain = NULL;
  g_autoptr(GdkPixbuf) masked = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *url = g_strconcat (base_url, "secret-echo.html", NULL);
  Waiter w = { g_main_loop_new (NULL, FALSE), NULL };
  SightRect pass, echo_run, echo_prefix, split, hint;
  const SightScreenshot *shot;

  plain = echo_page_shot (plain_page, FALSE, &plain_obs);
  pass = box_of (plain_page, "document.getElementById ('pass')");
  echo_run = box_of (plain_page, ECHO_RUN);
  echo_prefix = box_of (plain_page, ECHO_PREFIX);
  split = box_of (plain_page, "document.getElementById ('split')");
  hint = box_of (plain_page, "document.getElementById ('hint')");
  shot = sight_observation_get_screenshot (plain_obs);
  g_assert_cmpuint (shot->n_secret_regions, ==, 0);
  g_assert_cmpuint (count_red (plain, shot->scale, &pass), >, 100);
  g_assert_cmpuint (count_red (plain, shot->scale, &echo_run), >, 5);
  g_assert_cmpuint (count_red (plain, shot->scale, &echo_prefix), >, 5);
  g_assert_cmpuint (count_red (plain, shot->scale, &split), >, 5);
  g_assert_cmpuint (count_red (plain, shot->scale, &hint), >, 100);

  /* Another page: what holds a secret is that page's, not the shared one's. */
  sight_web_page_set_viewport (page, 1024, 768, 1.0);
  sight_web_page_load_async (page, url, SIGHT_WAIT_UNTIL_LOAD, 30000, NULL, waiter_done_cb, &w);
  g_assert_true (sight_web_page_load_finish (page, waiter_run (&w), &error));
  g_assert_no_error (error);
  waiter_clear (&w);
  masked = echo_page_shot (page, TRUE, &obs);
  g_assert_cmpuint (sight_web_page_get_secret_fills (page), ==, 1);
  shot = sight_observation_get_screenshot (obs);
  /* the field, the echo's run, the split line, the placeholder */
  g_assert_cmpuint (shot->n_secret_regions, >=, 4);
  g_assert_true (sight_observation_masking_proven (obs));
  g_assert_cmpuint (count_red (masked, shot->scale, &pass), ==, 0);
  g_assert_cmpuint (count_red (masked, shot->scale, &echo_run), ==, 0);
  g_assert_cmpuint (count_red (masked, shot->scale, &split), ==, 0);
  g_assert_cmpuint (count_red (masked, shot->scale, &hint), ==, 0);
  /* Only where the secret is: the echo's own words still show. */
  g_assert_cmpuint (count_red (masked, shot->scale, &echo_prefix), >, 5);
}

static gboolean
gap_probe_cb (gpointer user_data)
{
  gint64 *probe = user_data;  /* last dispatch, longest gap (µs) */
  gint64 now = g_get_monotonic_time ();

  probe[1] = MAX (probe[1], now - probe[0]);
  probe[0] = now;
  return G_SOURCE_CONTINUE;
}

/* The JSON of 100,000 elements is megabytes: asked for parsed
 * (SIGHT_OBSERVE_PARSE_TREE), it is parsed (and the observation built and
 * indexed) in a worker, so the main loop goes on
 * dispatching meanwhile; it used to stall for the whole parse (seconds on
 * cards-20000). Checks that the longest gap between two dispatches of a
 * 2 ms timeout during the capture stays below the parse's own time. */
static void
assert_parsed_off_main_loop (SightWebPage      *page,
                             SightObserveFlags  flags,
                             SightObservation **out)
{
  g_autoptr(GError) error = NULL;
  Waiter w = { g_main_loop_new (NULL, FALSE), NULL };
  gint64 probe[2] = { g_get_monotonic_time (), 0 };
  JsonObject *timing;
  double parse_ms;
  guint source, n = 0;

  source = g_timeout_add (2, gap_probe_cb, probe);
  sight_observation_capture_async (page, flags, deadline_ms, NULL, waiter_done_cb, &w);
  *out = sight_observation_capture_finish (waiter_run (&w), &error);
  g_source_remove (source);
  waiter_clear (&w);
  g_assert_no_error (error);

  timing = json_object_get_object_member (
    json_node_get_object (sight_observation_get_result (*out)), "timing");
  parse_ms = json_object_get_double_member_with_default (timing, "parse", 0);
  g_test_message ("parse in the worker %.0f ms, longest main-loop gap %.0f ms", parse_ms,
                  probe[1] / 1000.0);
  g_assert_cmpfloat (parse_ms, >, 0);
  g_assert_cmpfloat (probe[1] / 1000.0, <, parse_ms);
  /* Built and indexed there: every node. */
  g_assert_true (sight_observation_tree_loaded (*out));
  sight_observation_get_nodes (*out, &n);
  g_assert_cmpuint (n, >, sight_observation_get_n_nodes (*out));
}

/* Results kept in the page's script world for a sliced fetch: made, and
 * still there. */
static void
kept_results (SightWebPage *page,
              guint        *made,
              guint        *left)
{
  g_autoptr(JsonNode) value = run_script (page,
                                          "return [globalThis.__sightKeptCount || 0,\n"
                                          "  globalThis.__sightKept ? globalThis.__sightKept.size : 0];");
  JsonArray *array = json_node_get_array (value);

  *made = (guint) json_array_get_int_element (array, 0);
  *left = (guint) json_array_get_int_element (array, 1);
}

/* 12,500 cards, 100,000 elements: every element is listed in the full
 * tree and its text, while the model's text stays bounded (the viewport in
 * full, the rest summarized). */
static void
test_large_page (void)
{
  g_autoptr(SightWebPage) page = load_page ("cards-12500.html");
  g_autoptr(SightObservation) obs = NULL;
  g_autoptr(SightObservation) full = capture (page, SIGHT_OBSERVE_FULL_TEXT | SIGHT_OBSERVE_NO_TREE);
  g_autoptr(SightObservation) middle = NULL;
  g_autoptr(JsonNode) in_view = NULL;
  g_autofree char *first_line = NULL;
  g_autofree char *json = NULL;
  const SightObservationNode *nodes;
  const char *text;
  JsonArray *labels;
  guint made, left, made_before, n, buttons = 0;

  kept_results (page, &made_before, &left);
  assert_parsed_off_main_loop (page, SIGHT_OBSERVE_PARSE_TREE, &obs);
  text = sight_observation_get_text (obs);
  /* Megabytes of JSON: read back in slices (through the page's store, which
   * dropped it after the last one), every card's button in order. */
  kept_results (page, &made, &left);
  g_assert_cmpuint (made, ==, made_before + 1);
  g_assert_cmpuint (left, ==, 0);
  json = sight_observation_to_json (obs, FALSE);
  g_assert_cmpuint (strlen (json), >, 4 * (1 << 18));
  nodes = sight_observation_get_nodes (obs, &n);
  for (guint i = 0; i < n; i++)
    if (g_str_equal (nodes[i].role, "button"))
      {
        g_autofree char *name = g_strdup_printf ("Add item %u to cart", buttons + 1);

        g_assert_cmpstr (nodes[i].name, ==, name);
        buttons++;
      }
  g_assert_cmpuint (buttons, ==, 12500);
  /* Every element is observed: 12,500 links and 12,500 buttons, the last
   * card's as much as the first's, in the tree and in the full text. */
  g_assert_cmpuint (sight_observation_get_n_elements (obs), >, 100000);
  g_assert_cmpuint (sight_observation_get_n_not_observed (obs), ==, 0);
  g_assert_cmpuint (sight_observation_get_n_interactive (obs), >=, 25000);
  g_assert_nonnull (sight_observation_lookup (obs, "e2"));
  for (guint i = 1; i <= 12500; i += 1249)
    {
      g_autofree char *line = g_strdup_printf ("button \"Add item %u to cart\"", i);

      g_assert_nonnull (strstr (sight_observation_get_text (full), line));
    }
  g_assert_nonnull (strstr (sight_observation_get_text (full), "button \"Add item 12500 to cart\""));
  g_assert_null (strstr (sight_observation_get_text (full), "not observed"));
  /* The model's text stays bounded and says what lies below. */
  first_line = g_strndup (text, strcspn (text, "\n"));
  g_assert_null (strstr (first_line, " truncated: "));
  g_assert_cmpuint (strlen (text), <, 24000 + 2000);
  g_assert_nonnull (strstr (text, "button \"Add item 1 to cart\""));
  g_assert_null (strstr (text, "Add item 12499 to cart"));
  g_assert_nonnull (strstr (text, " article below (inside: "));

  /* Scrolled to the middle, the viewport is listed in full. */
  in_view = run_script (page,
                        "window.scrollTo (0, document.body.scrollHeight / 2);\n"
                        "await new Promise (r => requestAnimationFrame (() => r ()));\n"
                        "return Array.from (document.querySelectorAll ('button'))\n"
                        "  .filter (b => { const r = b.getBoundingClientRect ();\n"
                        "    return r.top >= 0 && r.bottom <= innerHeight; })\n"
                        "  .map (b => b.getAttribute ('aria-label'));");
  labels = json_node_get_array (in_view);
  g_assert_cmpuint (json_array_get_length (labels), >=, 4);
  middle = capture (page, SIGHT_OBSERVE_DEFAULT);
  for (guint i = 0; i < json_array_get_length (labels); i++)
    {
      g_autofree char *line = g_strdup_printf ("button \"%s\"",
                                               json_array_get_string_element (labels, i));

      g_assert_nonnull (strstr (sight_observation_get_text (middle), line));
    }
  g_assert_cmpuint (sight_observation_get_n_not_observed (middle), ==, 0);
  g_assert_nonnull (strstr (sight_observation_get_text (middle), " above"));
}

/* A quarter of a million elements (31,250 cards of eight): the full tree
 * lists every one, the last card's button as much as the first's. */
static void
test_quarter_million (void)
{
  g_autoptr(SightWebPage) page = NULL;
  g_autoptr(SightObservation) obs = NULL;
  g_autoptr(JsonNode) count = NULL;
  g_autofree char *json = NULL;
  const char *text;
  guint buttons = 0;

  /* Loading and observing it takes long on a busy machine. */
  deadline_ms = 150000;
  page = load_page ("cards-31250.html");
  obs = capture (page, SIGHT_OBSERVE_FULL_TEXT);
  count = run_script (page, "return document.getElementsByTagName ('*').length;");
  deadline_ms = 30000;
  json = sight_observation_to_json (obs, FALSE);
  text = sight_observation_get_text (obs);

  g_assert_cmpint (json_node_get_int (count), >=, 250000);
  g_assert_cmpuint (sight_observation_get_n_elements (obs), >=, 250000);
  g_assert_cmpuint (sight_observation_get_n_not_observed (obs), ==, 0);
  for (const char *p = text; (p = strstr (p, " button \"Add item ")) != NULL; p++)
    buttons++;
  g_assert_cmpuint (buttons, ==, 31250);
  g_assert_nonnull (strstr (text, "link \"Item 31250\""));
  g_assert_nonnull (strstr (json, "\"Add item 31250 to cart\""));
}

/* 10 MB of page text: text runs are clipped in the tree (the 1 MB
 * paragraph), past 2,000,000 characters only the viewport's text is kept,
 * every element is still listed, and the tree, its JSON and both texts stay
 * bounded. */
static void
test_page_text (void)
{
  g_autoptr(SightWebPage) page = load_page ("text-10mb.html");
  g_autoptr(SightObservation) obs = capture (page, SIGHT_OBSERVE_DEFAULT);
  g_autoptr(SightObservation) full = capture (page, SIGHT_OBSERVE_FULL_TEXT | SIGHT_OBSERVE_NO_TREE);
  g_autofree char *json = sight_observation_to_json (obs, FALSE);
  const char *text = sight_observation_get_text (obs);

  g_assert_cmpuint (strlen (text_html), >, 10 * 1000 * 1000);
  g_assert_cmpuint (sight_observation_get_n_not_observed (obs), ==, 0);
  g_assert_cmpuint (sight_observation_get_n_elements (obs), >, 2300);
  g_assert_cmpuint (strlen (json), <, 3 * 1000 * 1000);
  g_assert_cmpuint (strlen (text), <, 24000 + 2000);
  g_assert_nonnull (strstr (text, "heading \"Minutes\""));
  g_assert_nonnull (strstr (text, " text clipped: "));
  /* the 1 MB paragraph, clipped */
  g_assert_nonnull (strstr (json, "w000000 w000001"));
  g_assert_null (strstr (json, "w099999"));
  g_assert_cmpuint (strlen (sight_observation_get_text (full)), <, 3 * 1000 * 1000);
  g_assert_nonnull (strstr (sight_observation_get_text (full), "\"Paragraph 10:"));
  g_assert_null (strstr (sight_observation_get_text (full), "Paragraph 2299:"));
}

/* A page that overwrites the globals and prototypes of its own world, gives
 * its elements throwing getters, puts display: contents at every level (at
 * the top of <body> too) and a NUL and a lone surrogate in its text, an
 * attribute and its title: the isolated world observes it whole. */
static void
test_hostile (void)
{
  g_autoptr(SightWebPage) page = load_page ("hostile.html");
  g_autoptr(SightObservation) obs = capture (page, SIGHT_OBSERVE_FULL_TEXT);
  g_autofree char *json = sight_observation_to_json (obs, FALSE);
  g_autofree char *stored_json = NULL;
  g_autoptr(SightObservation) stored = NULL;
  const char *text = sight_observation_get_text (obs);
  const char *before;

  g_assert_true (g_utf8_validate (text, -1, NULL));
  g_assert_true (g_utf8_validate (json, -1, NULL));
  g_assert_cmpuint (sight_observation_get_n_errors (obs), ==, 0);
  g_assert_nonnull (strstr (text, "heading \"Title at the top\" level=2"));
  g_assert_nonnull (strstr (text, "listitem"));
  g_assert_nonnull (strstr (text, "link \"Link in contents\""));
  g_assert_nonnull (strstr (text, "button \"Deep contents\""));
  g_assert_nonnull (strstr (text, "textbox \"Quantity\" value=3"));
  g_assert_nonnull (strstr (text, "button \"Zero size\""));
  g_assert_nonnull (strstr (text, "\"Getter text\""));
  g_assert_null (strstr (text, "Never attached"));
  g_assert_null (strstr (text, "Detached"));
  /* U+0000 and the lone surrogate are U+FFFD: the text goes on past them,
   * in the text, the JSON and the JSON as stored and read back. */
  before = strstr (text, "\"before\xef\xbf\xbd" "after \xef\xbf\xbd end\"");
  g_assert_nonnull (before);
  g_assert_nonnull (strstr (before, "\"Invalid password\""));
  g_assert_nonnull (strstr (text, "button \"Send\xef\xbf\xbdnow\""));
  g_assert_cmpstr (sight_observation_get_title (obs), ==, "Hostile\xef\xbf\xbdpage");
  g_assert_nonnull (strstr (json, "Invalid password"));
  stored = sight_observation_new_from_stored (json, NULL, NULL);
  g_assert_nonnull (stored);
  stored_json = sight_observation_to_json (stored, FALSE);
  g_assert_nonnull (strstr (stored_json, "before\xef\xbf\xbd" "after"));
  g_assert_nonnull (strstr (sight_observation_get_text (stored), "\"Invalid password\""));
}

/* An exception while walking one subtree (here the isolated world's own
 * getBoundingClientRect made to throw for one element, as a stand-in for any
 * content the walk trips over) marks that subtree and the walk goes on. */
static void
test_subtree_error (void)
{
  g_autoptr(SightWebPage) page = load_page ("hostile.html");
  g_autoptr(JsonNode) value = NULL;
  g_autoptr(SightObservation) obs = NULL;
  g_autoptr(GError) error = NULL;
  const char *text;

  value = run_script (page,
                      "const box = Element.prototype.getBoundingClientRect;\n"
                      "Element.prototype.getBoundingClientRect = function () {\n"
                      "  if (this.id === 'getter') throw new Error ('walk tripped');\n"
                      "  return box.call (this);\n"
                      "};\n"
                      "try { return __sight.snapshot.observe ({ text: 'full' }); }\n"
                      "finally { Element.prototype.getBoundingClientRect = box; }");
  obs = sight_observation_new_from_json (value, &error);
  g_assert_no_error (error);
  text = sight_observation_get_text (obs);
  g_assert_cmpuint (sight_observation_get_n_errors (obs), ==, 1);
  g_assert_nonnull (strstr (text, "generic error=\"walk tripped\""));
  g_assert_null (strstr (text, "Getter text"));
  /* What comes after it is still observed. */
  g_assert_nonnull (strstr (text, "\"Invalid password\""));
  g_assert_nonnull (strstr (text, "button \"Zero size\""));
}

/* A page that replaces its content on every frame and every task: each
 * observation is whole and consistent, however the page changes. */
static void
test_churn (void)
{
  g_autoptr(SightWebPage) page = load_page ("churn.html");

  for (guint i = 0; i < 5; i++)
    {
      g_autoptr(SightObservation) obs = capture (page, SIGHT_OBSERVE_FULL_TEXT);
      g_autoptr(JsonNode) value = NULL;

      g_assert_cmpuint (sight_observation_get_n_errors (obs), ==, 0);
      g_assert_nonnull (strstr (sight_observation_get_text (obs), "button \"Stays\""));
      g_assert_nonnull (strstr (sight_observation_get_text (obs), "listitem"));
      value = run_script (page, "await new Promise (r => setTimeout (r, 30)); return true;");
    }
}

static gpointer
nodes_thread (gpointer data)
{
  return (gpointer) sight_observation_get_nodes (data, NULL);
}

/* The tree crosses as JSON text and stays so until a caller walks it: the
 * capture, its JSON and a stored copy parse none of it; the first reader
 * (or SIGHT_OBSERVE_PARSE_TREE) gets the same tree as a parsed capture. */
static void
test_tree_as_text (void)
{
  g_autoptr(SightWebPage) page = load_page ("slices.html");
  g_autoptr(SightObservation) lazy = capture (page, SIGHT_OBSERVE_DEFAULT);
  g_autoptr(SightObservation) parsed = capture (page, SIGHT_OBSERVE_PARSE_TREE);
  g_autoptr(SightObservation) stored = NULL;
  g_autoptr(JsonNode) lazy_node = NULL;
  g_autoptr(JsonNode) parsed_node = NULL;
  g_autofree char *lazy_json = NULL;
  g_autofree char *parsed_json = NULL;
  const SightObservationNode *a, *b;
  GThread *one, *two;
  guint n_a, n_b;

  g_assert_false (sight_observation_tree_loaded (lazy));
  g_assert_true (sight_observation_tree_loaded (parsed));
  g_assert_cmpuint (sight_observation_get_n_nodes (lazy), >, 2000);
  lazy_json = sight_observation_to_json (lazy, FALSE);
  g_assert_false (sight_observation_tree_loaded (lazy));
  parsed_json = sight_observation_to_json (parsed, FALSE);
  lazy_node = json_from_string (lazy_json, NULL);
  parsed_node = json_from_string (parsed_json, NULL);
  g_assert_nonnull (lazy_node);
  g_assert_true (json_node_equal (json_object_get_member (json_node_get_object (lazy_node), "tree"),
                                  json_object_get_member (json_node_get_object (parsed_node), "tree")));

  /* Stored and read back: still text, until two threads ask at once. */
  stored = sight_observation_new_from_stored (lazy_json, NULL, NULL);
  g_assert_false (sight_observation_tree_loaded (stored));
  one = g_thread_new ("nodes", nodes_thread, stored);
  two = g_thread_new ("nodes", nodes_thread, stored);
  a = g_thread_join (one);
  b = g_thread_join (two);
  g_assert_true (a == b);
  g_assert_true (sight_observation_tree_loaded (stored));

  a = sight_observation_get_nodes (lazy, &n_a);
  g_assert_true (sight_observation_tree_loaded (lazy));
  b = sight_observation_get_nodes (parsed, &n_b);
  g_assert_cmpuint (n_a, ==, n_b);
  g_assert_cmpuint (n_a, >, 2000);
  for (guint i = 0; i < n_a; i++)
    {
      g_assert_cmpstr (a[i].role, ==, b[i].role);
      g_assert_cmpstr (a[i].name, ==, b[i].name);
      g_assert_cmpstr (a[i].ref, ==, b[i].ref);
      g_assert_cmpuint (a[i].parent, ==, b[i].parent);
    }
  g_assert_nonnull (sight_observation_lookup (lazy, a[n_a - 1].ref[0] ? a[n_a - 1].ref : "e1"));
}

/* A result longer than a slice is read back in slices (here of 4,097 code
 * units, odd, so that ends fall inside surrogate pairs) and arrives as the
 * single round trip brings it: the same observation, byte for byte. */
static void
test_sliced_identical (void)
{
  g_autoptr(SightWebPage) page = load_page ("slices.html");
  g_autoptr(SightObservation) whole = NULL;
  g_autoptr(SightObservation) sliced = NULL;
  g_autofree char *whole_json = NULL;
  g_autofree char *sliced_json = NULL;
  guint made, left, made_before;

  _sight_web_page_set_slice_chars (page, G_MAXINT);
  kept_results (page, &made_before, &left);
  whole = capture (page, SIGHT_OBSERVE_FULL_TEXT);
  kept_results (page, &made, &left);
  g_assert_cmpuint (made, ==, made_before);

  _sight_web_page_set_slice_chars (page, 4097);
  sliced = capture (page, SIGHT_OBSERVE_FULL_TEXT);
  _sight_web_page_set_slice_chars (page, 0);
  kept_results (page, &made, &left);
  /* It went through the page's store, which dropped it after the last slice. */
  g_assert_cmpuint (made, ==, made_before + 1);
  g_assert_cmpuint (left, ==, 0);

  whole_json = sight_observation_to_json (whole, FALSE);
  sliced_json = sight_observation_to_json (sliced, FALSE);
  g_assert_cmpuint (strlen (whole_json), >, 100 * 4097);
  g_assert_true (g_utf8_validate (sliced_json, -1, NULL));
  g_assert_nonnull (strstr (sliced_json, "\xf0\x9f\x9b\x92\xc3\xa9\xf0\x9f\x9b\x92"));
  g_assert_cmpstr (sliced_json, ==, whole_json);
  g_assert_cmpstr (sight_observation_get_text (sliced), ==, sight_observation_get_text (whole));
  g_assert_nonnull (strstr (sight_observation_get_text (sliced), "button \"Add item 1000 to cart\""));
}

typedef struct {
  gboolean answered;
  int      kept;     /* -1: the script failed */
} Poll;

static void
poll_kept_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(JsonNode) value = sight_web_page_evaluate_finish (SIGHT_WEB_PAGE (source), result,
                                                              NULL);
  Poll *poll = user_data;

  poll->kept = value != NULL && JSON_NODE_HOLDS_VALUE (value) ? (int) json_node_get_int (value)
                                                              : -1;
  poll->answered = TRUE;
}

/* The page navigates while a large result is read in slices: the capture
 * fails with a clear error, never with part of a tree. */
static void
test_sliced_navigation (void)
{
  g_autoptr(SightWebPage) page = load_page ("slices.html");
  g_autoptr(GError) error = NULL;
  g_autoptr(SightObservation) obs = NULL;
  g_autofree char *url = g_strconcat (base_url, "roles.html", NULL);
  Waiter w = { g_main_loop_new (NULL, FALSE), NULL };
  Waiter load = { g_main_loop_new (NULL, FALSE), NULL };
  gint64 deadline = g_get_monotonic_time () + deadline_ms * (gint64) 1000;
  Poll poll = { FALSE, 0 };

  /* About 500 round trips of 2,000 code units. */
  _sight_web_page_set_slice_chars (page, 2000);
  sight_observation_capture_async (page, SIGHT_OBSERVE_FULL_TEXT, deadline_ms, NULL,
                                   waiter_done_cb, &w);
  /* Once the result waits in the page, it navigates. */
  while (poll.kept <= 0 && w.result == NULL && g_get_monotonic_time () < deadline)
    {
      poll.answered = FALSE;
      sight_web_page_evaluate_async (page, "return globalThis.__sightKept ? "
                                     "globalThis.__sightKept.size : 0;", NULL, deadline_ms, NULL,
                                     poll_kept_cb, &poll);
      while (!poll.answered && g_get_monotonic_time () < deadline)
        g_main_context_iteration (NULL, TRUE);
    }
  g_assert_null (w.result);
  g_assert_cmpint (poll.kept, >, 0);
  sight_web_page_load_async (page, url, SIGHT_WAIT_UNTIL_LOAD, deadline_ms, NULL,
                             waiter_done_cb, &load);
  /* Either may finish first. */
  while ((w.result == NULL || load.result == NULL) && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_nonnull (w.result);
  g_assert_nonnull (load.result);
  obs = sight_observation_capture_finish (w.result, &error);
  g_assert_null (obs);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED);
  g_assert_nonnull (strstr (error->message, "navigated away"));
  g_assert_true (sight_web_page_load_finish (page, load.result, NULL));
  _sight_web_page_set_slice_chars (page, 0);
  waiter_clear (&w);
  waiter_clear (&load);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/observation/json/from-json", test_from_json);
  g_test_add_func ("/observation/json/not-an-observation", test_not_an_observation);
  g_test_add_func ("/observation/json/lookup-hit-test", test_lookup_and_hit_test);
  g_test_add_func ("/observation/json/nodes-index", test_nodes_index);
  g_test_add_func ("/observation/json/node-line", test_node_line);
  g_test_add_func ("/observation/json/diff", test_diff);
  g_test_add_func ("/observation/script-resource", test_script_resource);

  gtk_init ();
  cards_html = build_cards_page (12500);
  big_cards_html = build_cards_page (31250);
  text_html = build_text_page ();
  slices_html = build_slices_page ();
  server = soup_server_new (NULL, NULL);
  soup_server_add_handler (server, NULL, server_cb, NULL, NULL);
  {
    g_autoptr(GError) error = NULL;
    GSList *uris;

    soup_server_listen_local (server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error);
    g_assert_no_error (error);
    uris = soup_server_get_uris (server);
    server_port = g_uri_get_port (uris->data);
    base_url = g_strdup_printf ("http://127.0.0.1:%u/", server_port);
    g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);
  }

  {
    static const char *const rules[] = { "roles", "names", "states", "hidden", "modal", "frames",
                                         "classes", "details", "cursors", "nesting" };

    for (guint i = 0; i < G_N_ELEMENTS (rules); i++)
      {
        g_autofree char *path = g_strconcat ("/observation/webkit/rule/", rules[i], NULL);

        g_test_add_data_func (path, rules[i], test_rule_fixture);
      }
  }
  g_test_add_func ("/observation/webkit/hidden-excluded", test_hidden_excluded);
  g_test_add_func ("/observation/webkit/nested-quiet", test_nested_quiet);
  g_test_add_func ("/observation/webkit/current", test_current);
  g_test_add_func ("/observation/webkit/refs-stable", test_refs_stable);
  g_test_add_func ("/observation/webkit/diff", test_diff_live);
  g_test_add_func ("/observation/webkit/masking", test_masking);
  g_test_add_func ("/observation/webkit/secret-masking", test_secret_masking);
  g_test_add_func ("/observation/webkit/large-page", test_large_page);
  g_test_add_func ("/observation/webkit/page-text", test_page_text);
  g_test_add_func ("/observation/webkit/quarter-million", test_quarter_million);
  g_test_add_func ("/observation/webkit/hostile", test_hostile);
  g_test_add_func ("/observation/webkit/subtree-error", test_subtree_error);
  g_test_add_func ("/observation/webkit/churn", test_churn);
  g_test_add_func ("/observation/webkit/sliced-identical", test_sliced_identical);
  g_test_add_func ("/observation/webkit/sliced-navigation", test_sliced_navigation);
  g_test_add_func ("/observation/webkit/tree-as-text", test_tree_as_text);

  return g_test_run ();
}
