/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-picking"

#include "config.h"

#include <adwaita.h>
#include <webkit/webkit.h>

#include "app-test-common.h"
#include "test-files.h"
#include "sight-direct-step.h"
#include "sight-inspector.h"
#include "sight-picker.h"
#include "sight-step-list.h"
#include "sight-window.h"

#define DEADLINE_US (60 * G_USEC_PER_SEC)

/* One window for the program (one web process, one demo site). */
static SightWindow *window;
static char *tmpdir;

static WebKitWebView *
view (void)
{
  return sight_web_page_get_web_view (sight_window_get_page (window));
}

static void
wait_loaded (void)
{
  gint64 deadline = g_get_monotonic_time () + DEADLINE_US;

  while (webkit_web_view_is_loading (view ()) && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (webkit_web_view_is_loading (view ()));
}

static void
open_page (const char *path)
{
  g_autofree char *url = g_uri_resolve_relative (sight_window_get_demo_url (window), path,
                                                 G_URI_FLAGS_NONE, NULL);

  gint64 deadline = g_get_monotonic_time () + DEADLINE_US;

  sight_window_open_uri (window, url);
  while ((g_strcmp0 (webkit_web_view_get_uri (view ()), url) != 0 ||
          webkit_web_view_is_loading (view ())) && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpstr (webkit_web_view_get_uri (view ()), ==, url);
  wait_loaded ();
  /* The window's own refresh after the load, out of the way. */
  app_test_spin (400);
}

/* A person's way to an expectation: select the node in the tree, open its
 * context menu (as a right click or Shift+F10 does), choose the item; for
 * "Expect Text…" and "Expect URL Contains…", the dialog's text, then Add. */
static void
expect_via_tree (const char *ref,
                 const char *action,
                 const char *text)
{
  SightInspector *inspector = sight_window_get_inspector (window);
  SightPicker *picker = sight_window_get_picker (window);
  GtkPopover *menu;

  g_assert_true (sight_inspector_select_ref (inspector, ref));
  menu = sight_inspector_popup_node_menu (inspector);
  g_assert_nonnull (menu);
  app_test_spin (100);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (menu)));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (menu), action, NULL));
  gtk_popover_popdown (menu);
  if (text != NULL)
    {
      AdwMessageDialog *dialog = sight_picker_get_dialog (picker);
      GtkEditable *entry;

      g_assert_nonnull (dialog);
      entry = GTK_EDITABLE (adw_message_dialog_get_extra_child (dialog));
      if (*text != '\0')
        gtk_editable_set_text (entry, text);
      adw_message_dialog_response (dialog, "add");
      g_assert_null (sight_picker_get_dialog (picker));
    }
}

static gboolean
action_enabled (const char *action)
{
  GtkWidget *menu = GTK_WIDGET (sight_inspector_popup_node_menu (sight_window_get_inspector (window)));
  GActionGroup *group = sight_picker_get_actions (sight_window_get_picker (window));
  gboolean enabled = g_action_group_get_action_enabled (group, action);

  gtk_popover_popdown (GTK_POPOVER (menu));
  return enabled;
}

static const char *
title (void)
{
  return gtk_window_get_title (GTK_WINDOW (window));
}

/* A test file that starts at the demo site's sign-in page. */
static GFile *
write_test (const char *name,
            const char *steps_json)
{
  g_autofree char *url = g_uri_resolve_relative (sight_window_get_demo_url (window), "/login",
                                                 G_URI_FLAGS_NONE, NULL);

  return app_test_write_test (tmpdir, name, "Picks", url, steps_json);
}

/* The tree's context menu on a heading adds "expect … has text …" after the
 * selected step, selected; the step passes when it runs. */
static void
test_tree_expect_text (void)
{
  g_autoptr(GFile) file = NULL;
  g_autoptr(GError) error = NULL;
  SightStepList *list;
  SightObservation *observation;
  JsonObject *heading;
  const char *expected = "expect the \"Sign in to your workspace\" heading has text "
                         "\"Sign in to your workspace\"";

  app_test_ensure_window (&window, DEADLINE_US);
  list = sight_window_get_step_list (window);
  file = write_test ("tree.sightline.json",
                     "[ { \"do\": \"press Tab\" }, { \"do\": \"press Escape\" } ]");
  g_assert_true (sight_window_open_test_file (window, file, &error));
  g_assert_no_error (error);
  open_page ("/login");
  observation = app_test_observe (window, DEADLINE_US);
  heading = app_test_find_node (observation, "heading", "Sign in to your workspace");

  sight_step_list_select (list, 0);
  expect_via_tree (json_object_get_string_member (heading, "ref"), "steps.expect-text", "");
  g_assert_cmpuint (sight_step_list_get_n_steps (list), ==, 3);
  g_assert_cmpstr (sight_step_list_get_instruction (list, 1), ==, expected);
  g_assert_cmpint (sight_step_list_get_selected (list), ==, 1);
  g_assert_true (g_str_has_prefix (title (), "• "));

  /* It runs green against the page it was picked on. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (list), "step.run", "u", 1));
  g_assert_true (app_test_wait_list_idle (list, DEADLINE_US));
  g_assert_cmpstr (sight_step_list_get_verdict (list, 1), ==, "pass");

  /* The text asked for is the one written: an edited one fails. */
  sight_step_list_select (list, 2);
  expect_via_tree (json_object_get_string_member (heading, "ref"), "steps.expect-text",
                   "Sign out of nothing");
  g_assert_cmpuint (sight_step_list_get_n_steps (list), ==, 4);
  g_assert_cmpint (sight_step_list_get_selected (list), ==, 3);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (list), "step.run", "u", 3));
  g_assert_true (app_test_wait_list_idle (list, DEADLINE_US));
  g_assert_cmpstr (sight_step_list_get_verdict (list, 3), ==, "fail");
}

/* Pick mode names the element under the pointer as the recorder names a
 * click on it. */
static void
test_pick_hover_is_recorded_text (void)
{
  SightPicker *picker;
  SightStepList *list;
  SightObservation *observation;
  JsonObject *button;
  JsonArray *box;
  g_autofree char *hover = NULL;
  const char *text;
  double k, x, y;
  gint64 deadline;
  GtkPopover *menu;

  app_test_ensure_window (&window, DEADLINE_US);
  picker = sight_window_get_picker (window);
  list = sight_window_get_step_list (window);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.new-test", NULL));
  if (sight_window_get_save_dialog (window) != NULL)
    adw_message_dialog_response (sight_window_get_save_dialog (window), "discard");
  open_page ("/login");

  /* Off, hovering shows nothing. */
  observation = app_test_observe (window, DEADLINE_US);
  button = app_test_find_node (observation, "button", "Sign in");
  box = json_object_get_array_member (button, "box");
  k = webkit_web_view_get_zoom_level (view ());
  x = (json_array_get_double_element (box, 0) + json_array_get_double_element (box, 2) / 2) * k;
  y = (json_array_get_double_element (box, 1) + json_array_get_double_element (box, 3) / 2) * k;
  g_assert_null (sight_picker_hover (picker, x, y));

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "steps.pick", NULL));
  observation = app_test_observe (window, DEADLINE_US);
  button = app_test_find_node (observation, "button", "Sign in");
  text = sight_picker_hover (picker, x, y);
  g_assert_nonnull (text);
  hover = g_strdup (text);
  g_assert_cmpstr (hover, ==, "click the \"Sign in\" button");

  /* A click in Pick mode opens the expectations about it. */
  menu = sight_picker_click (picker, x, y);
  app_test_spin (100);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (menu)));
  g_assert_cmpstr (sight_picker_get_target (picker), ==,
                   json_object_get_string_member (button, "ref"));
  gtk_popover_popdown (menu);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "steps.pick", NULL));
  g_assert_null (sight_picker_hover (picker, x, y));

  /* The recorder, clicking the same button, writes the same words. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.record", NULL));
  app_test_spin (300);
  webkit_web_view_evaluate_javascript (view (),
    "const b = [...document.querySelectorAll ('button')]"
    "  .find (x => x.textContent.trim () === 'Sign in');"
    "b.dispatchEvent (new MouseEvent ('mousedown', { bubbles: true }));"
    "b.click (); true;", -1, NULL, NULL, NULL, NULL, NULL);
  deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  while (sight_step_list_get_n_steps (list) < 1 && g_get_monotonic_time () < deadline)
    app_test_spin (50);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.record", NULL));
  g_assert_cmpuint (sight_step_list_get_n_steps (list), >=, 1);
  g_assert_cmpstr (sight_step_list_get_instruction (list, 0), ==, hover);
  wait_loaded ();
}

/* The page's context menu, recording or not, lists the expectations about
 * the element under the pointer, enabled as they fit it. */
static void
test_page_context_menu (void)
{
  SightPicker *picker;
  SightStepList *list;
  SightObservation *observation;
  JsonObject *field;
  JsonArray *box;
  double k;

  app_test_ensure_window (&window, DEADLINE_US);
  picker = sight_window_get_picker (window);
  list = sight_window_get_step_list (window);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.new-test", NULL));
  if (sight_window_get_save_dialog (window) != NULL)
    adw_message_dialog_response (sight_window_get_save_dialog (window), "discard");
  open_page ("/login");
  webkit_web_view_evaluate_javascript (view (),
    "document.querySelector ('#email').value = 'member@example.test'; true;",
    -1, NULL, NULL, NULL, NULL, NULL);
  app_test_spin (200);
  observation = app_test_observe (window, DEADLINE_US);
  field = app_test_find_node (observation, "textbox", "Email");
  box = json_object_get_array_member (field, "box");
  k = webkit_web_view_get_zoom_level (view ());

  for (guint recording = 0; recording < 2; recording++)
    {
      g_autoptr(WebKitContextMenu) menu = webkit_context_menu_new ();
      gboolean handled = FALSE;
      GAction *value = NULL, *checked = NULL;
      guint n_steps = sight_step_list_get_n_steps (list);

      if (recording)
        g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.record", NULL));
      /* The pointer over the field, then the context menu, as a right
       * click there opens it. */
      sight_picker_hover (picker,
                          (json_array_get_double_element (box, 0) + 5) * k,
                          (json_array_get_double_element (box, 1) + 5) * k);
      g_signal_emit_by_name (view (), "context-menu", menu, NULL, &handled);
      g_assert_false (handled);
      for (guint i = 0; i < webkit_context_menu_get_n_items (menu); i++)
        {
          WebKitContextMenuItem *item = webkit_context_menu_get_item_at_position (menu, i);
          GAction *action = webkit_context_menu_item_get_gaction (item);

          if (action == NULL)
            continue;
          if (g_str_equal (g_action_get_name (action), "expect-value"))
            value = action;
          else if (g_str_equal (g_action_get_name (action), "expect-checked"))
            checked = action;
        }
      g_assert_nonnull (value);
      g_assert_nonnull (checked);
      g_assert_cmpstr (sight_picker_get_target (picker), ==,
                       json_object_get_string_member (field, "ref"));
      g_assert_true (g_action_get_enabled (value));
      g_assert_false (g_action_get_enabled (checked));
      g_action_activate (value, NULL);
      g_assert_cmpuint (sight_step_list_get_n_steps (list), ==, n_steps + 1);
      g_assert_cmpstr (sight_step_list_get_instruction (list, n_steps), ==,
                       "expect the \"Email\" field has value \"member@example.test\"");
      if (recording)
        g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.record", NULL));
    }
}

/* Every kind of expectation makes a step the direct-step parser reads as
 * that kind; the kinds that do not fit a node are disabled for it. */
static void
test_kinds_parse (void)
{
  static const struct {
    const char      *action;
    const char      *role;
    const char      *name;
    const char      *text;
    SightExpectKind  expect;
  } cases[] = {
    { "steps.expect-visible", "button", "Sign in", NULL, SIGHT_EXPECT_VISIBLE },
    { "steps.expect-text", "heading", "Sign in to your workspace", "", SIGHT_EXPECT_HAS_TEXT },
    { "steps.expect-value", "textbox", "Email", NULL, SIGHT_EXPECT_VALUE },
    { "steps.expect-checked", "checkbox", "Keep me posted", NULL, SIGHT_EXPECT_CHECKED },
    { "steps.expect-unchecked", "checkbox", "Keep me posted", NULL, SIGHT_EXPECT_UNCHECKED },
    { "steps.expect-enabled", "button", "Sign in", NULL, SIGHT_EXPECT_ENABLED },
    { "steps.expect-disabled", "button", "Later", NULL, SIGHT_EXPECT_DISABLED },
    { "steps.expect-url", "heading", "Sign in to your workspace", "", SIGHT_EXPECT_URL_CONTAINS },
  };
  SightStepList *list;
  SightObservation *observation;
  gboolean done = FALSE;
  gint64 deadline;

  app_test_ensure_window (&window, DEADLINE_US);
  list = sight_window_get_step_list (window);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.new-test", NULL));
  if (sight_window_get_save_dialog (window) != NULL)
    adw_message_dialog_response (sight_window_get_save_dialog (window), "discard");
  open_page ("/login");
  webkit_web_view_evaluate_javascript (view (),
    "document.querySelector ('#email').value = 'member@example.test';"
    "const f = document.querySelector ('form');"
    "const l = document.createElement ('label');"
    "l.innerHTML = '<input type=checkbox checked> Keep me posted';"
    "const b = document.createElement ('button');"
    "b.type = 'button'; b.disabled = true; b.textContent = 'Later';"
    "f.prepend (l, b); true;", -1, NULL, NULL, NULL, NULL, NULL);
  (void) done;
  app_test_spin (300);
  observation = app_test_observe (window, DEADLINE_US);

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      JsonObject *node = app_test_find_node (observation, cases[i].role, cases[i].name);
      guint n = sight_step_list_get_n_steps (list);
      g_autoptr(SightDirectStep) step = NULL;
      g_autoptr(GError) error = NULL;

      expect_via_tree (json_object_get_string_member (node, "ref"), cases[i].action,
                       cases[i].text);
      g_assert_cmpuint (sight_step_list_get_n_steps (list), ==, n + 1);
      g_test_message ("%s: %s", cases[i].action, sight_step_list_get_instruction (list, n));
      step = sight_direct_step_parse (sight_step_list_get_instruction (list, n), &error);
      g_assert_no_error (error);
      g_assert_cmpint (step->verb, ==, SIGHT_DIRECT_EXPECT);
      g_assert_cmpint (step->expect, ==, cases[i].expect);
    }
  g_assert_cmpstr (sight_step_list_get_instruction (list, 7), ==, "expect URL contains /login");

  /* What does not fit the node is disabled: a heading has no value and
   * cannot be checked; a button can be enabled, a heading cannot. */
  g_assert_true (sight_inspector_select_ref (sight_window_get_inspector (window),
    json_object_get_string_member (app_test_find_node (observation, "heading",
                                              "Sign in to your workspace"), "ref")));
  g_assert_false (action_enabled ("expect-value"));
  g_assert_false (action_enabled ("expect-checked"));
  g_assert_false (action_enabled ("expect-disabled"));
  g_assert_true (action_enabled ("expect-text"));
  g_assert_true (action_enabled ("expect-url"));

  /* They pass where they were picked, but for "unchecked" on the box that
   * is checked. */
  deadline = g_get_monotonic_time () + DEADLINE_US;
  for (guint i = 0; i < sight_step_list_get_n_steps (list); i++)
    {
      g_assert_true (gtk_widget_activate_action (GTK_WIDGET (list), "step.run", "u", i));
      g_assert_true (app_test_wait_list_idle (list, DEADLINE_US));
      g_test_message ("%u: %s", i, sight_step_list_get_status (list));
      g_assert_cmpstr (sight_step_list_get_verdict (list, i), ==,
                       cases[i].expect == SIGHT_EXPECT_UNCHECKED ? "fail" : "pass");
    }
  g_assert_true (g_get_monotonic_time () < deadline);
}

static JsonNode *
step_node (const char *text)
{
  g_autofree char *json = g_strdup_printf ("{ \"do\": \"%s\" }", text);

  return json_from_string (json, NULL);
}

#define assert_steps(list, joined) (g_test_message ("line %d", __LINE__), assert_steps_ (list, joined))

static void
assert_steps_ (SightStepList *list,
               const char    *joined)
{
  g_autoptr(GString) s = g_string_new (NULL);

  for (guint i = 0; i < sight_step_list_get_n_steps (list); i++)
    g_string_append_printf (s, "%s%s", i > 0 ? "|" : "", sight_step_list_get_instruction (list, i));
  g_assert_cmpstr (s->str, ==, joined);
}

static void
undo (void)
{
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.undo", NULL));
}

static void
redo (void)
{
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.redo", NULL));
}

/* Add, edit, move, delete and a recording undo and redo; the unsaved mark
 * follows the saved state. */
static void
test_undo_redo (void)
{
  g_autoptr(GFile) file = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) a = step_node ("press Tab");
  g_autoptr(JsonNode) b = step_node ("press Escape");
  SightStepList *list;
  gint64 deadline;
  guint recorded;

  app_test_ensure_window (&window, DEADLINE_US);
  list = sight_window_get_step_list (window);
  file = write_test ("undo.sightline.json", "[ { \"do\": \"press Enter\" } ]");
  g_assert_true (sight_window_open_test_file (window, file, &error));
  g_assert_no_error (error);
  g_assert_false (sight_step_list_can_undo (list));
  g_assert_false (gtk_widget_activate_action (GTK_WIDGET (window), "win.undo", NULL) &&
                  sight_step_list_get_modified (list));
  g_assert_cmpstr (title (), ==, "undo.sightline.json — Sightline");

  /* add */
  sight_step_list_append_step (list, a);
  sight_step_list_append_step (list, b);
  assert_steps (list, "press Enter|press Tab|press Escape");
  g_assert_true (g_str_has_prefix (title (), "• "));
  undo ();
  assert_steps (list, "press Enter|press Tab");
  /* edit: typing a word is one edit */
  sight_step_list_set_instruction (list, 1, "press T");
  sight_step_list_set_instruction (list, 1, "press Ta");
  sight_step_list_set_instruction (list, 1, "press Tab Tab");
  /* a new edit drops what was undone */
  g_assert_false (sight_step_list_can_redo (list));
  /* typing back to where the edit started is no edit: undo takes back the add */
  sight_step_list_set_instruction (list, 1, "press Tab");
  undo ();
  assert_steps (list, "press Enter");
  redo ();
  assert_steps (list, "press Enter|press Tab");
  sight_step_list_set_instruction (list, 1, "press Tab Tab");
  undo ();
  assert_steps (list, "press Enter|press Tab");
  redo ();
  assert_steps (list, "press Enter|press Tab Tab");
  /* move */
  sight_step_list_move_step (list, 1, 0);
  assert_steps (list, "press Tab Tab|press Enter");
  undo ();
  assert_steps (list, "press Enter|press Tab Tab");
  redo ();
  assert_steps (list, "press Tab Tab|press Enter");
  /* delete, with its options */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (list), "step.delete", "u", 0));
  assert_steps (list, "press Enter");
  undo ();
  assert_steps (list, "press Tab Tab|press Enter");

  /* Saved here: undo marks it unsaved, redo back to it clears the mark. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.save", NULL));
  g_assert_false (sight_step_list_get_modified (list));
  g_assert_cmpstr (title (), ==, "undo.sightline.json — Sightline");
  undo ();
  assert_steps (list, "press Enter|press Tab Tab");
  g_assert_true (sight_step_list_get_modified (list));
  g_assert_cmpstr (title (), ==, "• undo.sightline.json — Sightline");
  redo ();
  g_assert_false (sight_step_list_get_modified (list));
  g_assert_cmpstr (title (), ==, "undo.sightline.json — Sightline");
  /* and all the way back to the file as opened */
  while (sight_step_list_can_undo (list))
    undo ();
  assert_steps (list, "press Enter");
  g_assert_true (sight_step_list_get_modified (list));
  /* and forward again, past the saved state to the delete undone before */
  while (sight_step_list_can_redo (list))
    redo ();
  assert_steps (list, "press Enter");
  g_assert_true (sight_step_list_get_modified (list));
  undo ();
  assert_steps (list, "press Tab Tab|press Enter");
  g_assert_false (sight_step_list_get_modified (list));

  /* A recording session is one edit. */
  open_page ("/login");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.record", NULL));
  app_test_spin (300);
  webkit_web_view_evaluate_javascript (view (),
    "const el = document.querySelector ('input[type=email]'); el.focus ();"
    "el.value = 'member@example.test';"
    "el.dispatchEvent (new InputEvent ('input', { bubbles: true, inputType: 'insertText' }));"
    "el.dispatchEvent (new Event ('change', { bubbles: true }));"
    "const p = document.querySelector ('input[type=password]'); p.focus ();"
    "p.value = 'x';"
    "p.dispatchEvent (new InputEvent ('input', { bubbles: true, inputType: 'insertText' }));"
    "p.dispatchEvent (new Event ('change', { bubbles: true }));"
    "el.focus (); true;", -1, NULL, NULL, NULL, NULL, NULL);
  deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  while (sight_step_list_get_n_steps (list) < 4 && g_get_monotonic_time () < deadline)
    app_test_spin (50);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.record", NULL));
  recorded = sight_step_list_get_n_steps (list);
  g_assert_cmpuint (recorded, >=, 4);
  g_assert_true (sight_step_list_get_modified (list));
  undo ();
  assert_steps (list, "press Tab Tab|press Enter");
  g_assert_false (sight_step_list_get_modified (list));
  g_assert_cmpstr (title (), ==, "undo.sightline.json — Sightline");
  redo ();
  g_assert_cmpuint (sight_step_list_get_n_steps (list), ==, recorded);
  g_assert_true (g_str_has_prefix (title (), "• "));
}

int
main (int    argc,
      char **argv)
{
  int status;

  tmpdir = g_dir_make_tmp ("test-picking-XXXXXX", NULL);
  g_setenv ("SIGHTLINE_DATA_DIR", tmpdir, TRUE);
  app_test_init (&argc, &argv);

  g_test_add_func ("/picking/tree-expect-text", test_tree_expect_text);
  g_test_add_func ("/picking/pick-hover-is-recorded-text", test_pick_hover_is_recorded_text);
  g_test_add_func ("/picking/page-context-menu", test_page_context_menu);
  g_test_add_func ("/picking/kinds-parse", test_kinds_parse);
  g_test_add_func ("/picking/undo-redo", test_undo_redo);
  status = g_test_run ();
  if (window != NULL)
    {
      sight_step_list_new_test (sight_window_get_step_list (window), NULL);
      gtk_window_destroy (GTK_WINDOW (window));
    }
  g_clear_object (&window);
  test_remove_tree (tmpdir);
  return status;
}
