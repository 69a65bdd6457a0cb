/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The inspector lists a large tree lazily (issue #19): rows exist only for
 * expanded nodes, a new tree opens expanded only as far as it shows a few
 * hundred rows, and a node deep in the tree is selected, by ref or by
 * search, by expanding its ancestors. The tree is a real SightObservation
 * read from JSON, shown in a real window. */
#include "config.h"

#include <adwaita.h>

#include "app-test-common.h"
#include "sight-inspector.h"
#include "sight-observation.h"

#define N_CARDS 20000

static GtkWidget *window;
static SightInspector *inspector;

/* document > main "Shop" (e1) > N articles (e2, e5, …), each holding a
 * heading "Card i" and a button "Add card i". */
static SightObservation *
cards_observation (guint n_cards)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) error = NULL;
  SightObservation *observation;
  guint next = 1;

#define REF() (g_snprintf (ref, sizeof ref, "e%u", next++), ref)
  char ref[16];

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "version");
  json_builder_add_int_value (b, 1);
  json_builder_set_member_name (b, "url");
  json_builder_add_string_value (b, "http://127.0.0.1:9/cards");
  json_builder_set_member_name (b, "tree");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "role");
  json_builder_add_string_value (b, "document");
  json_builder_set_member_name (b, "children");
  json_builder_begin_array (b);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "ref");
  json_builder_add_string_value (b, REF ());
  json_builder_set_member_name (b, "role");
  json_builder_add_string_value (b, "main");
  json_builder_set_member_name (b, "name");
  json_builder_add_string_value (b, "Shop");
  json_builder_set_member_name (b, "children");
  json_builder_begin_array (b);
  for (guint i = 0; i < n_cards; i++)
    {
      g_autofree char *heading = g_strdup_printf ("Card %u", i);
      g_autofree char *button = g_strdup_printf ("Add card %u", i);

      json_builder_begin_object (b);
      json_builder_set_member_name (b, "ref");
      json_builder_add_string_value (b, REF ());
      json_builder_set_member_name (b, "role");
      json_builder_add_string_value (b, "article");
      json_builder_set_member_name (b, "children");
      json_builder_begin_array (b);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "ref");
      json_builder_add_string_value (b, REF ());
      json_builder_set_member_name (b, "role");
      json_builder_add_string_value (b, "heading");
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, heading);
      json_builder_end_object (b);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "ref");
      json_builder_add_string_value (b, REF ());
      json_builder_set_member_name (b, "role");
      json_builder_add_string_value (b, "button");
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, button);
      json_builder_end_object (b);
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  json_builder_end_array (b);
  json_builder_end_object (b);
  json_builder_end_object (b);
#undef REF

  root = json_builder_get_root (b);
  observation = sight_observation_new_from_json (root, &error);
  g_assert_no_error (error);
  return observation;
}

static void
test_large_tree_is_lazy (void)
{
  g_autoptr(SightObservation) observation = cards_observation (N_CARDS);
  g_autofree char *last_button = g_strdup_printf ("e%u", 1 + 3 * N_CARDS);
  guint rows;

  sight_inspector_set_observation (inspector, observation);
  app_test_spin (200);
  rows = sight_inspector_get_n_rows (inspector);
  /* The document and main, folded: its 20,000 articles would pass the
   * rows a new tree opens with. */
  g_assert_cmpuint (rows, ==, 2);

  /* The last card's button, two levels down: main and its article open. */
  g_assert_true (sight_inspector_select_ref (inspector, last_button));
  g_assert_cmpstr (sight_inspector_get_selected_ref (inspector), ==, last_button);
  g_assert_cmpuint (sight_inspector_get_n_rows (inspector), ==, rows + N_CARDS + 2);
  g_assert_false (sight_inspector_select_ref (inspector, "e999999"));

  /* Search goes on from the selection in document order, wraps round to
   * the top, and opens the folded article the match is in. */
  g_assert_true (sight_inspector_search (inspector, "card 1999"));
  g_assert_cmpstr (sight_inspector_get_selected_ref (inspector), ==, "e6000");  /* Card 1999 */
  g_assert_true (sight_inspector_search (inspector, "CARD 1999"));
  g_assert_cmpstr (sight_inspector_get_selected_ref (inspector), ==, "e6001");  /* Add card 1999 */
  g_assert_true (sight_inspector_search (inspector, "card 1999"));
  g_assert_cmpstr (sight_inspector_get_selected_ref (inspector), ==, "e59973"); /* Card 19990 */
  g_assert_false (sight_inspector_search (inspector, "no node is called this"));
}

typedef struct {
  gboolean done;
  gboolean found;
  GError  *error;
} Searched;

static void
searched_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  Searched *s = user_data;

  s->found = sight_inspector_search_finish (SIGHT_INSPECTOR (source), result, &s->error);
  s->done = TRUE;
}

static void
wait_searched (Searched *s)
{
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;

  while (!s->done && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (s->done);
}

/* The search entry's search scans in a worker: the call returns before
 * anything is selected, the match is selected on the main loop, and a newer
 * search cancels the one under way. */
static void
test_search_in_worker (void)
{
  g_autoptr(SightObservation) observation = cards_observation (N_CARDS);
  Searched first = { 0 }, second = { 0 }, miss = { 0 };

  sight_inspector_set_observation (inspector, observation);
  sight_inspector_select_ref (inspector, NULL);
  sight_inspector_search_async (inspector, "card 19990", NULL, searched_cb, &first);
  sight_inspector_search_async (inspector, "card 19999", NULL, searched_cb, &second);
  g_assert_null (sight_inspector_get_selected_ref (inspector));
  g_assert_false (first.done);
  wait_searched (&first);
  wait_searched (&second);
  g_assert_false (first.found);
  g_assert_error (first.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_no_error (second.error);
  g_assert_true (second.found);
  g_assert_cmpstr (sight_inspector_get_selected_ref (inspector), ==, "e60000");  /* Card 19999 */

  sight_inspector_search_async (inspector, "no node is called this", NULL, searched_cb, &miss);
  wait_searched (&miss);
  g_assert_no_error (miss.error);
  g_assert_false (miss.found);
  g_clear_error (&first.error);
}

static void
test_small_tree_is_open (void)
{
  g_autoptr(SightObservation) observation = cards_observation (3);

  sight_inspector_set_observation (inspector, observation);
  /* document, main, 3 articles and their 6 children: all listed. */
  g_assert_cmpuint (sight_inspector_get_n_rows (inspector), ==, 11);
}

int
main (int    argc,
      char **argv)
{
  int status;

  app_test_init (&argc, &argv);
  window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (window), 800, 600);
  inspector = SIGHT_INSPECTOR (sight_inspector_new ());
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (inspector));
  gtk_window_present (GTK_WINDOW (window));

  g_test_add_func ("/inspector/large-tree-is-lazy", test_large_tree_is_lazy);
  g_test_add_func ("/inspector/small-tree-is-open", test_small_tree_is_open);
  g_test_add_func ("/inspector/search-in-worker", test_search_in_worker);
  status = g_test_run ();
  gtk_window_destroy (GTK_WINDOW (window));
  return status;
}
