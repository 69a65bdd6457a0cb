/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-step-list"

#include "config.h"

#include <adwaita.h>
#include <webkit/webkit.h>

#include "agent-test-common.h"
#include "app-test-common.h"
#include "test-files.h"
#include "sight-step-list.h"
#include "sight-trace-cache.h"
#include "sight-direct-run.h"
#include "sight-window.h"

#define DEADLINE_US (60 * G_USEC_PER_SEC)

/* One window for the program (one web process, one demo site); each test
 * opens its own test file in it. */
static SightWindow *window;
static char *tmpdir;

/* Writes a test file whose start URL is the demo site's sign-in page. */
static GFile *
write_test (const char *name,
            const char *steps_json)
{
  return app_test_write_test (tmpdir, name, "Signs in", sight_window_get_demo_url (window),
                              steps_json);
}

static JsonArray *
saved_steps (GFile     *file,
             JsonNode **root)
{
  g_autofree char *path = g_file_get_path (file);
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;

  g_file_get_contents (path, &text, NULL, &error);
  g_assert_no_error (error);
  *root = json_from_string (text, &error);
  g_assert_no_error (error);
  return json_object_get_array_member (json_node_get_object (*root), "steps");
}

static const char *
title (void)
{
  return gtk_window_get_title (GTK_WINDOW (window));
}

static void
test_open_lists_steps (void)
{
  g_autoptr(GFile) file = NULL;
  g_autoptr(GError) error = NULL;
  SightStepList *list;

  app_test_ensure_window (&window, DEADLINE_US);
  list = sight_window_get_step_list (window);
  file = write_test ("open.sightline.json",
                     "[ { \"do\": \"type \\\"a@b.test\\\" into Email\" },"
                     "  { \"act\": \"Sign in\", \"maxSteps\": 5 },"
                     "  { \"assert\": \"the dashboard shows a trial badge\" } ]");
  sight_window_open_test_file (window, file, &error);
  g_assert_no_error (error);
  g_assert_no_error (error);
  g_assert_cmpuint (sight_step_list_get_n_steps (list), ==, 3);
  g_assert_cmpstr (sight_step_list_get_step_kind (list, 0), ==, "do");
  g_assert_cmpstr (sight_step_list_get_instruction (list, 0), ==, "type \"a@b.test\" into Email");
  g_assert_cmpstr (sight_step_list_get_step_kind (list, 1), ==, "act");
  g_assert_cmpstr (sight_step_list_get_instruction (list, 2), ==,
                   "the dashboard shows a trial badge");
  g_assert_null (sight_step_list_get_verdict (list, 0));
  g_assert_false (sight_step_list_get_modified (list));
  g_assert_cmpstr (title (), ==, "open.sightline.json — Sightline");

  /* A broken file is refused with where it is broken; the open test stays. */
  {
    g_autoptr(GFile) bad = write_test ("bad.sightline.json", "[ { \"do\": \"\" } ]");

    g_assert_false (sight_window_open_test_file (window, bad, &error));
    g_assert_nonnull (error);
    g_assert_nonnull (strstr (error->message, "step 1"));
    g_assert_cmpuint (sight_step_list_get_n_steps (list), ==, 3);
  }
}

static GtkWidget *
find_menu_button (GtkWidget *widget)
{
  if (GTK_IS_MENU_BUTTON (widget))
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_menu_button (child);

      if (found != NULL)
        return found;
    }
  return NULL;
}

static void
test_edit_reorder_delete_save (void)
{
  g_autoptr(GFile) file = NULL;
  g_autoptr(GFile) copy = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *copy_path = NULL;
  SightStepList *list;
  JsonArray *steps;

  app_test_ensure_window (&window, DEADLINE_US);
  list = sight_window_get_step_list (window);
  file = write_test ("edit.sightline.json",
                     "[ { \"do\": \"press Tab\" }, { \"act\": \"Sign in\", \"maxSteps\": 5 },"
                     "  { \"assert\": \"C is shown\", \"vision\": \"only\" }, { \"do\": \"press Escape\" } ]");
  sight_window_open_test_file (window, file, &error);
  g_assert_no_error (error);

  /* Edit in place: the title says there are unsaved changes. */
  sight_step_list_set_instruction (list, 0, "press Enter");
  g_assert_true (sight_step_list_get_modified (list));
  g_assert_cmpstr (title (), ==, "• edit.sightline.json — Sightline");

  /* Reorder through the rows' actions and directly, then delete. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (list), "step.move-up", "u", 2));
  /* now: Enter, assert, act, Escape */
  sight_step_list_move_step (list, 3, 0);
  /* now: Escape, Enter, assert, act */
  /* Delete from the row's own menu, as a person does: the row goes while
   * its menu is open. */
  {
    GtkListBox *box = GTK_LIST_BOX (gtk_widget_get_template_child (GTK_WIDGET (list),
                                                                   SIGHT_TYPE_STEP_LIST,
                                                                   "steps_box"));
    GtkWidget *menu_button = find_menu_button (GTK_WIDGET (gtk_list_box_get_row_at_index (box, 2)));
    GtkPopover *popover;

    g_assert_nonnull (menu_button);
    gtk_menu_button_popup (GTK_MENU_BUTTON (menu_button));
    popover = gtk_menu_button_get_popover (GTK_MENU_BUTTON (menu_button));
    app_test_spin (200);
    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (popover), "step.delete", "u", 2));
    app_test_spin (200);
  }
  /* now: Escape, Enter, act */
  g_assert_cmpuint (sight_step_list_get_n_steps (list), ==, 3);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.save", NULL));
  g_assert_false (sight_step_list_get_modified (list));
  g_assert_cmpstr (title (), ==, "edit.sightline.json — Sightline");

  steps = saved_steps (file, &root);
  g_assert_cmpuint (json_array_get_length (steps), ==, 3);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (steps, 0), "do"),
                   ==, "press Escape");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (steps, 1), "do"),
                   ==, "press Enter");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (steps, 2), "act"),
                   ==, "Sign in");
  /* A step's options travel with it. */
  g_assert_cmpint (json_object_get_int_member (json_array_get_object_element (steps, 2), "maxSteps"),
                   ==, 5);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (root), "name"), ==,
                   "Signs in");

  /* An emptied step is not written: the runner would refuse the file. */
  sight_step_list_set_instruction (list, 0, "");
  g_assert_false (sight_step_list_save (list, NULL, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
  sight_step_list_set_instruction (list, 0, "press Escape");

  /* Save As moves the test to a new file, which opens again as saved. */
  copy_path = g_build_filename (tmpdir, "copy.sightline.json", NULL);
  copy = g_file_new_for_path (copy_path);
  g_assert_true (sight_step_list_save (list, copy, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_equal (sight_step_list_get_file (list), copy));
  g_assert_true (sight_window_open_test_file (window, copy, &error));
  g_assert_cmpuint (sight_step_list_get_n_steps (list), ==, 3);
  g_assert_cmpstr (sight_step_list_get_instruction (list, 0), ==, "press Escape");
}

static void
test_run_all_shows_verdicts (void)
{
  g_autoptr(GFile) file = NULL;
  g_autoptr(GError) error = NULL;
  SightStepList *list;

  app_test_ensure_window (&window, DEADLINE_US);
  list = sight_window_get_step_list (window);
  file = write_test ("run.sightline.json",
                     "[ { \"do\": \"type \\\"member@example.test\\\" into Email\" },"
                     "  { \"do\": \"type \\\"harbor-trial-2024\\\" into Password\" },"
                     "  { \"do\": \"expect Email has value \\\"member@example.test\\\"\" },"
                     "  { \"do\": \"click \\\"Sign in\\\"\" },"
                     "  { \"do\": \"click the \\\"Sign in\\\" button\" } ]");
  sight_window_open_test_file (window, file, &error);
  g_assert_no_error (error);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.run-all", NULL));
  g_assert_true (sight_step_list_get_running (list));
  g_assert_true (app_test_wait_list_idle (list, DEADLINE_US));
  g_assert_cmpstr (sight_step_list_get_verdict (list, 0), ==, "pass");
  g_assert_cmpstr (sight_step_list_get_verdict (list, 1), ==, "pass");
  g_assert_cmpstr (sight_step_list_get_verdict (list, 2), ==, "pass");
  g_assert_cmpstr (sight_step_list_get_verdict (list, 3), ==, "fail");
  /* "Sign in" is both a link and a button: an ambiguous target fails at
   * once, and a test stops at its first failure. */
  g_assert_null (sight_step_list_get_verdict (list, 4));
  g_assert_true (g_str_has_prefix (sight_step_list_get_status (list), "Step 4 failed: "));

  /* Run one step on its own: only that row changes. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (list), "step.run", "u", 2));
  g_assert_cmpstr (sight_step_list_get_verdict (list, 2), ==, "running");
  g_assert_true (app_test_wait_list_idle (list, DEADLINE_US));
  g_assert_cmpstr (sight_step_list_get_verdict (list, 2), ==, "pass");
  g_assert_cmpstr (sight_step_list_get_verdict (list, 3), ==, "fail");
  g_assert_cmpstr (sight_step_list_get_status (list), ==, "1 step passed");
  /* Running changes no file. */
  g_assert_false (sight_step_list_get_modified (list));
}

/* Stop: the step running gives up, nothing after it runs, and the run is
 * kept as interrupted. */
static void
test_stop (void)
{
  g_autoptr(GFile) file = NULL;
  g_autoptr(GError) error = NULL;
  SightStepList *list;

  app_test_ensure_window (&window, DEADLINE_US);
  list = sight_window_get_step_list (window);
  file = write_test ("stop.sightline.json",
                     "[ { \"do\": \"press Tab\" },"
                     "  { \"do\": \"expect text \\\"Nobody wrote this\\\"\" },"
                     "  { \"do\": \"press Escape\" } ]");
  sight_window_open_test_file (window, file, &error);
  g_assert_no_error (error);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (list), "step.run-from", "u", 0));
  while (g_strcmp0 (sight_step_list_get_verdict (list, 1), "running") != 0)
    g_main_context_iteration (NULL, TRUE);
  app_test_spin (300);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (list), "steps.stop", NULL));
  g_assert_true (app_test_wait_list_idle (list, DEADLINE_US));
  g_assert_cmpstr (sight_step_list_get_verdict (list, 0), ==, "pass");
  g_assert_null (sight_step_list_get_verdict (list, 1));
  g_assert_null (sight_step_list_get_verdict (list, 2));
  g_assert_cmpstr (sight_step_list_get_status (list), ==, "Stopped");
}

/* A small order form whose button the heal test renames. */
#define ORDER_HTML(button) \
  "<!doctype html><title>Order</title><main><h1>Order</h1>" \
  "<label>Name <input id=n></label>" \
  "<button onclick=\"document.getElementById('out').innerHTML = '<h2>Thanks ' +" \
  " document.getElementById('n').value + '</h2>'\">" button "</button>" \
  "<div id=out></div></main>"

static GtkWidget *
step_row (SightStepList *list,
          guint          index)
{
  GtkListBox *box = GTK_LIST_BOX (gtk_widget_get_template_child (GTK_WIDGET (list),
                                                                 SIGHT_TYPE_STEP_LIST,
                                                                 "steps_box"));

  return GTK_WIDGET (gtk_list_box_get_row_at_index (box, index));
}

/* Loads the order page in the window's page and scripts the model's turn on
 * it: a click on @button_name (after filling the name when @fill), then done. */
static void
script_order (SightScriptedModel *model,
              const char         *button_name,
              gboolean            fill)
{
  Fixture f = { .page = sight_window_get_page (window) };
  g_autofree char *name = NULL;
  g_autofree char *button = NULL;

  fixture_load (&f, "/order");
  name = find_ref (&f, "textbox", "Name");
  button = find_ref (&f, "button", button_name);
  if (fill)
    sight_scripted_model_push_printf (model, "{\"tool_calls\": ["
                                      "{\"name\": \"fill\", \"arguments\": {\"ref\": \"%s\", \"value\": \"Ada\"}},"
                                      "{\"name\": \"click\", \"arguments\": {\"ref\": \"%s\"}}]}",
                                      name, button);
  else
    sight_scripted_model_push_printf (model, "{\"tool_calls\": ["
                                      "{\"name\": \"click\", \"arguments\": {\"ref\": \"%s\"}}]}",
                                      button);
  sight_scripted_model_push_printf (model, "{\"tool_calls\": [{\"name\": \"done\", \"arguments\":"
                                    " {\"verdict\": \"pass\", \"summary\": \"ordered\"}}]}");
}

/* Runs the test and checks that its act step passed, healing its trace:
 * the row says so and offers Accept / Reject. Returns the trace's key. */
static const char *
run_and_heal (SightStepList   *list,
              SightTraceCache *cache)
{
  GtkWidget *row;
  GtkLabel *label;
  g_auto(GStrv) review = NULL;

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.run-all", NULL));
  g_assert_true (app_test_wait_list_idle (list, DEADLINE_US));
  g_assert_cmpstr (sight_step_list_get_verdict (list, 0), ==, "pass");
  g_assert_cmpstr (sight_step_list_get_cache_state (list, 0), ==, "missed");
  g_assert_nonnull (sight_step_list_get_heal_key (list, 0));
  row = step_row (list, 0);
  label = g_object_get_data (G_OBJECT (row), "cache-label");
  g_assert_cmpstr (gtk_label_get_text (label), ==, "Healed, needs review");
  g_assert_true (gtk_widget_get_visible (g_object_get_data (G_OBJECT (row), "review-box")));
  /* The trace cache holds it, marked for review. */
  review = sight_trace_cache_list_review (cache);
  g_assert_cmpuint (g_strv_length (review), ==, 1);
  g_assert_cmpstr (review[0], ==, sight_step_list_get_heal_key (list, 0));
  return sight_step_list_get_heal_key (list, 0);
}

/* Clicks the row's Accept (or Reject) button. */
static void
review (SightStepList *list,
        gboolean       accept)
{
  GtkWidget *box = g_object_get_data (G_OBJECT (step_row (list, 0)), "review-box");
  GtkWidget *button = accept ? gtk_widget_get_first_child (box) : gtk_widget_get_last_child (box);

  g_assert_true (gtk_widget_get_visible (button));
  g_assert_true (gtk_widget_is_sensitive (button));
  g_signal_emit_by_name (button, "clicked");
  g_assert_false (gtk_widget_get_visible (box));
}

/* The next tests start on the demo site's sign-in page. */
static void
back_to_demo_site (void)
{
  gint64 deadline = g_get_monotonic_time () + DEADLINE_US;
  WebKitWebView *view = sight_web_page_get_web_view (sight_window_get_page (window));

  sight_window_open_demo_site (window);
  while ((webkit_web_view_is_loading (view) ||
          !g_str_has_prefix (webkit_web_view_get_uri (view), sight_window_get_demo_url (window)))
         && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (webkit_web_view_is_loading (view));
}

/* An act step whose cached trace no longer matches the page: the scripted
 * model heals it, the row says "Healed, needs review", and Accept keeps the
 * trace (no longer marked) while Reject deletes it. */
static void
test_heal_review (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightScriptedModel) model = sight_scripted_model_new (0, &error);
  g_autofree char *traces = g_build_filename (tmpdir, "traces", NULL);
  g_autoptr(SightTraceCache) cache = sight_trace_cache_new (traces);
  g_autofree char *json = NULL;
  g_autoptr(SightProject) project = NULL;
  g_autoptr(SightProject) plain = sight_project_new_default ();
  g_autofree char *path = g_build_filename (tmpdir, "order.sightline.json", NULL);
  g_autofree char *text = NULL;
  g_autoptr(GFile) file = NULL;
  g_autofree char *key = NULL;
  g_autoptr(SightTrace) trace = NULL;
  SightComposer *composer;
  SightStepList *list;
  g_auto(GStrv) marked = NULL;

  g_assert_no_error (error);
  app_test_ensure_window (&window, DEADLINE_US);
  list = sight_window_get_step_list (window);
  composer = sight_window_get_composer (window);
  json = g_strdup_printf ("{\"agents\": {\"default\": {\"model\": \"openai:scripted\","
                          " \"baseUrl\": \"%s\"}}, \"traceCache\": \"%s\"}",
                          sight_scripted_model_get_openai_base_url (model), traces);
  project = sight_project_new_from_data (json, -1, NULL, &error);
  g_assert_no_error (error);
  sight_composer_set_project (composer, project);
  if (site == NULL)
    site_start ();
  site_add ("/order", ORDER_HTML ("Place order"));
  text = g_strdup_printf ("{ \"name\": \"Orders\", \"url\": \"%s/order\","
                          "  \"steps\": [ { \"act\": \"place an order as Ada\" } ] }", site_url);
  g_file_set_contents (path, text, -1, &error);
  g_assert_no_error (error);
  file = g_file_new_for_path (path);
  g_assert_true (sight_window_open_test_file (window, file, &error));
  g_assert_no_error (error);

  /* 1. No trace yet: the model acts and the trace is written, nothing to
   * review. */
  script_order (model, "Place order", TRUE);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.run-all", NULL));
  g_assert_true (app_test_wait_list_idle (list, DEADLINE_US));
  g_assert_cmpstr (sight_step_list_get_verdict (list, 0), ==, "pass");
  g_assert_cmpstr (sight_step_list_get_cache_state (list, 0), ==, "missed");
  g_assert_null (sight_step_list_get_heal_key (list, 0));
  g_assert_false (gtk_widget_get_visible (g_object_get_data (G_OBJECT (step_row (list, 0)),
                                                             "review-box")));
  marked = sight_trace_cache_list_review (cache);
  g_assert_cmpuint (g_strv_length (marked), ==, 0);
  g_clear_pointer (&marked, g_strfreev);

  /* 2. The button was renamed: the fill replays, the click goes to the
   * model, which heals the trace. Accept keeps it, unmarked. */
  site_add ("/order", ORDER_HTML ("Submit order"));
  script_order (model, "Submit order", FALSE);
  key = g_strdup (run_and_heal (list, cache));
  review (list, TRUE);
  g_assert_null (sight_step_list_get_heal_key (list, 0));
  g_assert_cmpstr (sight_step_list_get_cache_state (list, 0), ==, "accepted");
  marked = sight_trace_cache_list_review (cache);
  g_assert_cmpuint (g_strv_length (marked), ==, 0);
  g_clear_pointer (&marked, g_strfreev);
  trace = sight_trace_cache_lookup (cache, key);
  g_assert_nonnull (trace);
  g_assert_false (sight_trace_needs_review (trace));
  g_clear_pointer (&trace, sight_trace_unref);

  /* 3. Renamed again and healed again: Reject deletes the trace. */
  site_add ("/order", ORDER_HTML ("Send order"));
  script_order (model, "Send order", FALSE);
  g_assert_cmpstr (run_and_heal (list, cache), ==, key);
  review (list, FALSE);
  g_assert_cmpstr (sight_step_list_get_cache_state (list, 0), ==, "rejected");
  g_assert_null (sight_trace_cache_lookup (cache, key));
  marked = sight_trace_cache_list_review (cache);
  g_assert_cmpuint (g_strv_length (marked), ==, 0);

  /* Every scripted answer was asked for (two per run), and nothing else. */
  g_assert_cmpuint (sight_scripted_model_get_request_count (model), ==, 6);
  sight_composer_set_project (composer, plain);
  back_to_demo_site ();
}

typedef struct {
  guint    n_actions;
  gboolean outlined[2];   /* the name field, then the button */
} Outlines;

static void
outline_js_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(JSCValue) value = webkit_web_view_evaluate_javascript_finish (WEBKIT_WEB_VIEW (source),
                                                                          result, NULL);
  int *answer = user_data;

  *answer = value != NULL && jsc_value_is_boolean (value) && jsc_value_to_boolean (value) ? 1 : 0;
}

/* Before each of act's actions, the action waits until the window's outline
 * (drawn asynchronously) covers the element the action is about to use. */
static void
action_starting_cb (SightComposer *composer,
                    const char    *ref,
                    Outlines      *outlines)
{
  static const char *const targets[] = { "#n", "button" };
  WebKitWebView *view = sight_web_page_get_web_view (sight_window_get_page (window));
  gint64 deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  guint i = outlines->n_actions++;
  g_autofree char *script = NULL;

  g_assert_nonnull (ref);
  g_assert_cmpuint (i, <, G_N_ELEMENTS (targets));
  /* A function: top-level const would clash with the previous evaluation's. */
  script = g_strdup_printf ("(() => {\n"
                            "const b = document.getElementById ('__sightline-highlight');\n"
                            "const t = document.querySelector ('%s').getBoundingClientRect ();\n"
                            "return !!b && Math.abs (parseFloat (b.style.left) - t.left) < 2 &&\n"
                            "  Math.abs (parseFloat (b.style.top) - t.top) < 2 &&\n"
                            "  Math.abs (parseFloat (b.style.width) - t.width) < 2; }) ()",
                            targets[i]);
  while (!outlines->outlined[i] && g_get_monotonic_time () < deadline)
    {
      int answer = -1;

      webkit_web_view_evaluate_javascript (view, script, -1, NULL, NULL, NULL, outline_js_cb,
                                           &answer);
      while (answer < 0 && g_get_monotonic_time () < deadline)
        g_main_context_iteration (NULL, TRUE);
      outlines->outlined[i] = answer == 1;
    }
}

/* Demo mode: an act step's agent outlines each action's target in the live
 * page before it acts, as direct steps do. */
static void
test_demo_outlines_act_targets (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightScriptedModel) model = sight_scripted_model_new (0, &error);
  g_autofree char *json = NULL;
  g_autoptr(SightProject) project = NULL;
  g_autoptr(SightProject) plain = sight_project_new_default ();
  g_autofree char *path = g_build_filename (tmpdir, "order.sightline.json", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  SightComposer *composer;
  SightStepList *list;
  Outlines outlines = { 0 };
  gulong handler;

  g_assert_no_error (error);
  app_test_ensure_window (&window, DEADLINE_US);
  list = sight_window_get_step_list (window);
  composer = sight_window_get_composer (window);
  /* No trace cache: the model acts. */
  json = g_strdup_printf ("{\"agents\": {\"default\": {\"model\": \"openai:scripted\","
                          " \"baseUrl\": \"%s\"}}}",
                          sight_scripted_model_get_openai_base_url (model));
  project = sight_project_new_from_data (json, -1, NULL, &error);
  g_assert_no_error (error);
  sight_composer_set_project (composer, project);
  site_add ("/order", ORDER_HTML ("Place order"));
  /* The test file the heal test wrote. */
  g_assert_true (sight_window_open_test_file (window, file, &error));
  g_assert_no_error (error);
  script_order (model, "Place order", TRUE);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.demo-mode", NULL));
  handler = g_signal_connect_after (composer, "action-starting", G_CALLBACK (action_starting_cb),
                                    &outlines);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.run-all", NULL));
  g_assert_true (app_test_wait_list_idle (list, DEADLINE_US));
  g_signal_handler_disconnect (composer, handler);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.leave-demo", NULL));

  g_assert_cmpstr (sight_step_list_get_verdict (list, 0), ==, "pass");
  g_assert_cmpuint (outlines.n_actions, ==, 2);
  g_assert_true (outlines.outlined[0]);
  g_assert_true (outlines.outlined[1]);
  sight_composer_set_project (composer, plain);
  back_to_demo_site ();
}

/* Shows the Runs page and opens the @nth run it lists (newest first);
 * @n_shown: how many it lists. */
static const SightRunData *
open_listed_run (guint  nth,
                 guint *n_shown)
{
  SightHistory *history = sight_window_get_history (window);
  guint runs_loaded = 0, run_loaded = 0;
  gint64 deadline = g_get_monotonic_time () + DEADLINE_US;
  gulong a, b;

  a = g_signal_connect_swapped (history, "runs-loaded", G_CALLBACK (app_test_count_cb),
                                &runs_loaded);
  b = g_signal_connect_swapped (history, "run-loaded", G_CALLBACK (app_test_count_cb),
                                &run_loaded);
  sight_window_show_page (window, "runs");
  while (runs_loaded == 0 && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  *n_shown = sight_history_get_n_shown (history);
  sight_history_open_run (history, sight_history_get_shown_run_id (history, nth));
  while (run_loaded == 0 && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_signal_handler_disconnect (history, a);
  g_signal_handler_disconnect (history, b);
  return sight_history_get_run (history);
}

/* The runs above were kept: the Runs page lists them and time-travels
 * through their steps. */
static void
test_runs_are_kept (void)
{
  SightHistory *history;
  const SightRunData *data;
  const SightStepRecord *step;
  guint n_shown;

  app_test_ensure_window (&window, DEADLINE_US);
  history = sight_window_get_history (window);
  /* Newest first: the single step, then the whole test. */
  data = open_listed_run (1, &n_shown);
  g_assert_cmpuint (n_shown, ==, 2);
  g_assert_nonnull (data);
  g_assert_cmpstr (data->run->kind, ==, "test");
  g_assert_cmpstr (data->run->name, ==, "Signs in");
  g_assert_cmpint (data->run->verdict, ==, SIGHT_RUN_VERDICT_FAIL);
  /* Run All keeps the run as `sightline run` does: the start page's load,
   * then every step, the one after the failure skipped. */
  g_assert_cmpuint (data->steps->len, ==, 6);
  step = g_ptr_array_index (data->steps, 0);
  g_assert_cmpstr (step->kind, ==, "load");
  g_assert_cmpint (step->verdict, ==, SIGHT_RUN_VERDICT_PASS);
  /* The password the test typed out is stored masked. */
  step = g_ptr_array_index (data->steps, 2);
  g_assert_cmpint (step->verdict, ==, SIGHT_RUN_VERDICT_PASS);
  g_assert_null (strstr (step->instruction, "harbor-trial-2024"));
  g_assert_nonnull (strstr (step->instruction, SIGHT_DIRECT_SECRET_MASK));
  step = g_ptr_array_index (data->steps, 4);
  g_assert_cmpint (step->verdict, ==, SIGHT_RUN_VERDICT_FAIL);
  g_assert_cmpstr (step->code, ==, "ACTION_FAILED");
  g_assert_cmpstr (step->instruction, ==, "click \"Sign in\"");
  step = g_ptr_array_index (data->steps, 5);
  g_assert_cmpint (step->verdict, ==, SIGHT_RUN_VERDICT_SKIPPED);
  /* Each step with the page after it, screenshot included. */
  g_assert_cmpuint (data->observations->len, ==, 5);
  {
    /* Handed on once a worker parsed the stored JSON. */
    gint64 deadline = g_get_monotonic_time () + DEADLINE_US;
    guint shown = 0;
    gulong id = g_signal_connect_swapped (history, "observation-selected",
                                          G_CALLBACK (app_test_count_cb), &shown);

    g_assert_true (sight_history_select_step (history, 0, TRUE));
    while (shown == 0 && g_get_monotonic_time () < deadline)
      g_main_context_iteration (NULL, TRUE);
    g_signal_handler_disconnect (history, id);
  }
  g_assert_nonnull (sight_observation_get_screenshot (sight_window_get_observation (window)));
  g_assert_true (g_str_has_prefix (sight_observation_get_url (sight_window_get_observation (window)),
                                   sight_window_get_demo_url (window)));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (history), "history.back", NULL));
  sight_window_show_page (window, "test");
}

/* Run All runs the test as `sightline run` does: its timeout holds for the
 * whole test, and a step the time did not reach fails the test with
 * STEP_TIMEOUT (blocked), kept so in the stored run. */
static void
test_run_all_applies_timeout (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "timeout.sightline.json", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;
  SightHistory *history;
  const SightRunData *data;
  const SightStepRecord *step;
  SightStepList *list;
  guint n_shown;

  app_test_ensure_window (&window, DEADLINE_US);
  list = sight_window_get_step_list (window);
  /* The first two steps start within the test's time (the second with
   * seconds to spare on a loaded machine), and the second's wait is cut
   * where that time ends; the third never starts, so its wait, longer than
   * the list's idle wait below, never holds the list. */
  text = g_strdup_printf ("{ \"name\": \"Slow\", \"url\": \"%s\", \"timeout\": 4000,"
                          "  \"steps\": [ { \"do\": \"wait 0.5 seconds\" },"
                          "               { \"do\": \"wait 4 seconds\" },"
                          "               { \"do\": \"wait 120 seconds\" } ] }",
                          sight_window_get_demo_url (window));
  g_file_set_contents (path, text, -1, &error);
  g_assert_no_error (error);
  g_assert_true (sight_window_open_test_file (window, file, &error));
  g_assert_no_error (error);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.run-all", NULL));
  /* 124.5 seconds of waits do not fit in 4: the test stops at its time, and
   * the third step's two minutes never start. */
  g_assert_true (app_test_wait_list_idle (list, DEADLINE_US));
  g_assert_cmpstr (sight_step_list_get_verdict (list, 0), ==, "pass");
  g_assert_cmpstr (sight_step_list_get_verdict (list, 2), ==, "blocked");
  g_assert_true (g_str_has_prefix (sight_step_list_get_status (list),
                                   "Step 3 was blocked: The test's time (4000 ms) ran out"));

  history = sight_window_get_history (window);
  data = open_listed_run (0, &n_shown);
  g_assert_nonnull (data);
  g_assert_cmpstr (data->run->name, ==, "Slow");
  g_assert_cmpint (data->run->verdict, ==, SIGHT_RUN_VERDICT_ERROR);
  g_assert_cmpstr (data->run->code, ==, "STEP_TIMEOUT");
  step = g_ptr_array_index (data->steps, data->steps->len - 1);
  g_assert_cmpstr (step->code, ==, "STEP_TIMEOUT");
  g_assert_nonnull (strstr (step->explanation, "before this step"));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (history), "history.back", NULL));
  sight_window_show_page (window, "test");
}

/* A test that needs a model the preferences do not name runs nothing, and
 * the list says so and offers the model's preferences, as the composer does. */
static void
test_run_all_without_model (void)
{
  g_autoptr(GFile) file = NULL;
  g_autoptr(GError) error = NULL;
  SightStepList *list;
  const char *status;

  app_test_ensure_window (&window, DEADLINE_US);
  list = sight_window_get_step_list (window);
  file = write_test ("needs-model.sightline.json",
                     "[ { \"do\": \"wait 0.1 seconds\" },"
                     "  { \"assert\": \"the page greets the member by name\" } ]");
  g_assert_true (sight_window_open_test_file (window, file, &error));
  g_assert_no_error (error);
  g_assert_false (sight_step_list_offers_model_preferences (list));

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.run-all", NULL));
  g_assert_true (app_test_wait_list_idle (list, DEADLINE_US));
  status = sight_step_list_get_status (list);
  g_assert_nonnull (status);
  g_assert_true (g_str_has_prefix (status, "No step ran"));
  g_assert_nonnull (strstr (status, "needs a model"));
  g_assert_null (sight_step_list_get_verdict (list, 0));
  g_assert_true (sight_step_list_offers_model_preferences (list));

  /* Any other run takes the offer away. */
  sight_step_list_remove_step (list, 1);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.run-all", NULL));
  g_assert_true (app_test_wait_list_idle (list, DEADLINE_US));
  g_assert_cmpstr (sight_step_list_get_verdict (list, 0), ==, "pass");
  g_assert_false (sight_step_list_offers_model_preferences (list));
}

/* A relative start address resolves against the base address for tests of
 * the preferences; with none, running says so and nothing runs. */
static void
test_relative_url (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "relative.sightline.json", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GSettings) settings = g_settings_new ("dev.sightline.Sightline");
  g_autoptr(GError) error = NULL;
  g_autofree char *expected = NULL;
  SightStepList *list;

  app_test_ensure_window (&window, DEADLINE_US);
  list = sight_window_get_step_list (window);
  g_file_set_contents (path, "{ \"name\": \"Relative\", \"url\": \"/login\","
                       "  \"steps\": [ { \"do\": \"type \\\"a@b.test\\\" into Email\" } ] }",
                       -1, &error);
  g_assert_no_error (error);
  g_assert_true (sight_window_open_test_file (window, file, &error));
  g_assert_no_error (error);

  g_settings_set_string (settings, "tests-base-url", "");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.run-all", NULL));
  g_assert_false (sight_step_list_get_running (list));
  g_assert_null (sight_step_list_get_verdict (list, 0));
  g_assert_cmpstr (sight_step_list_get_status (list), ==,
                   "The start address “/login” is relative: set the base address for tests "
                   "in Preferences");

  g_settings_set_string (settings, "tests-base-url", sight_window_get_demo_url (window));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.run-all", NULL));
  g_assert_true (sight_step_list_get_running (list));
  g_assert_true (app_test_wait_list_idle (list, DEADLINE_US));
  g_assert_cmpstr (sight_step_list_get_verdict (list, 0), ==, "pass");
  expected = g_strconcat (sight_window_get_demo_url (window), "login", NULL);
  g_assert_cmpstr (sight_web_page_get_uri (sight_window_get_page (window)), ==, expected);
  g_settings_reset (settings, "tests-base-url");
}

/* A deleted step comes back with its options on Undo, and the file is as
 * opened again: no unsaved mark. */
static void
test_undo_delete_keeps_options (void)
{
  g_autoptr(GFile) file = NULL;
  g_autoptr(GError) error = NULL;
  SightStepList *list;

  app_test_ensure_window (&window, DEADLINE_US);
  list = sight_window_get_step_list (window);
  file = write_test ("undo.sightline.json",
                     "[ { \"act\": \"Sign in\", \"maxSteps\": 5 }, { \"do\": \"press Tab\" } ]");
  g_assert_true (sight_window_open_test_file (window, file, &error));
  g_assert_no_error (error);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (list), "step.delete", "u", 0));
  g_assert_cmpuint (sight_step_list_get_n_steps (list), ==, 1);
  g_assert_cmpstr (title (), ==, "• undo.sightline.json — Sightline");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.undo", NULL));
  g_assert_cmpuint (sight_step_list_get_n_steps (list), ==, 2);
  g_assert_cmpstr (sight_step_list_get_step_kind (list, 0), ==, "act");
  g_assert_cmpint (json_object_get_int_member (sight_step_list_get_step (list, 0), "maxSteps"),
                   ==, 5);
  g_assert_false (sight_step_list_get_modified (list));
  g_assert_cmpstr (title (), ==, "undo.sightline.json — Sightline");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.redo", NULL));
  g_assert_cmpstr (sight_step_list_get_instruction (list, 0), ==, "press Tab");
  g_assert_true (sight_step_list_get_modified (list));
  /* Opening a file starts its history anew. */
  g_assert_true (sight_window_open_test_file (window, file, &error));
  g_assert_no_error (error);
  g_assert_false (sight_step_list_can_undo (list));
  g_assert_false (sight_step_list_get_modified (list));
}

/* A step run on its own fails as a test file's would: the screenshot of
 * the page it failed on is kept as the failure's evidence, in the stored
 * run (the Runs page and the report name it) and on the step's row. */
static void
test_single_step_keeps_evidence (void)
{
  g_autoptr(GFile) file = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *shown = NULL;
  const SightRunData *data;
  const SightStepRecord *step;
  const char *evidence;
  SightStepList *list;
  guint n_shown;

  app_test_ensure_window (&window, DEADLINE_US);
  list = sight_window_get_step_list (window);
  file = write_test ("evidence.sightline.json",
                     "[ { \"do\": \"expect text \\\"Nobody greets you here\\\"\" } ]");
  sight_window_open_test_file (window, file, &error);
  g_assert_no_error (error);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (list), "step.run", "u", 0));
  g_assert_true (app_test_wait_list_idle (list, DEADLINE_US));
  g_assert_cmpstr (sight_step_list_get_verdict (list, 0), ==, "fail");

  data = open_listed_run (0, &n_shown);
  g_assert_nonnull (data);
  g_assert_cmpuint (data->steps->len, ==, 1);
  step = g_ptr_array_index (data->steps, 0);
  g_assert_cmpstr (step->code, ==, "ASSERTION_FAILED");
  evidence = sight_run_data_get_step_evidence (data, 0);
  g_assert_nonnull (evidence);
  g_assert_true (g_file_test (evidence, G_FILE_TEST_IS_REGULAR));
  /* The row and the status line say where it is, as Run All's do. */
  shown = g_strdup_printf ("Screenshot: %s", evidence);
  g_assert_nonnull (strstr (sight_step_list_get_status (list), shown));
  sight_window_show_page (window, "test");
  g_assert_false (sight_step_list_get_modified (list));
}

static void
test_recorder_appends (void)
{
  SightStepList *list;
  gint64 deadline;

  app_test_ensure_window (&window, DEADLINE_US);
  list = sight_window_get_step_list (window);
  g_assert_false (sight_step_list_get_modified (list));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.new-test", NULL));
  g_assert_cmpuint (sight_step_list_get_n_steps (list), ==, 0);
  g_assert_null (sight_step_list_get_file (list));

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.record", NULL));
  app_test_spin (500);
  app_test_run_page_js (sight_window_get_page (window),
    "const el = document.querySelector ('input[type=email]'); el.focus ();"
    "el.value = 'member@example.test';"
    "el.dispatchEvent (new InputEvent ('input', { bubbles: true, inputType: 'insertText' }));"
    "el.dispatchEvent (new Event ('change', { bubbles: true }));"
    "const b = [...document.querySelectorAll ('button')]"
    "  .find (x => x.textContent.trim () === 'Sign in');"
    "b.dispatchEvent (new MouseEvent ('mousedown', { bubbles: true }));"
    "b.click (); true;", DEADLINE_US);
  deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  while (sight_step_list_get_n_steps (list) < 2 && g_get_monotonic_time () < deadline)
    app_test_spin (100);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.record", NULL));
  app_test_spin (200);

  /* The fill and the click became steps of the test, which starts where
   * the recording did. */
  g_assert_cmpuint (sight_step_list_get_n_steps (list), >=, 2);
  g_assert_cmpstr (sight_step_list_get_step_kind (list, 0), ==, "do");
  g_assert_nonnull (strstr (sight_step_list_get_instruction (list, 0), "member@example.test"));
  g_assert_nonnull (sight_step_list_get_url (list));
  g_assert_true (g_str_has_prefix (sight_step_list_get_url (list),
                                   sight_window_get_demo_url (window)));
  g_assert_true (sight_step_list_get_modified (list));
  g_assert_true (g_str_has_prefix (title (), "• "));
}

static void
test_close_asks_to_save (void)
{
  AdwMessageDialog *dialog;
  g_autofree char *path = g_build_filename (tmpdir, "closing.sightline.json", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;
  GListModel *toplevels;

  app_test_ensure_window (&window, DEADLINE_US);
  /* Unsaved changes from the recording above. */
  g_assert_true (sight_step_list_get_modified (sight_window_get_step_list (window)));
  gtk_window_close (GTK_WINDOW (window));
  dialog = sight_window_get_save_dialog (window);
  g_assert_nonnull (dialog);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (window)));

  /* Cancel keeps everything. */
  adw_message_dialog_response (dialog, "cancel");
  g_assert_null (sight_window_get_save_dialog (window));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (window)));

  /* Saved, the window closes without asking. */
  g_assert_true (sight_step_list_save (sight_window_get_step_list (window), file, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  sight_step_list_set_instruction (sight_window_get_step_list (window), 0, "press Control+A");
  gtk_window_close (GTK_WINDOW (window));
  dialog = sight_window_get_save_dialog (window);
  g_assert_nonnull (dialog);
  adw_message_dialog_response (dialog, "discard");
  /* Destroyed: hidden and no longer a toplevel (our reference keeps the
   * object). */
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (window)));
  toplevels = gtk_window_get_toplevels ();
  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr(GObject) item = g_list_model_get_item (toplevels, i);

      g_assert_true (item != (GObject *) window);
    }
  g_clear_object (&window);
}

/* A window closed while its test runs: the run ends with it, and what
 * finishes later (the runner's end, the page after a step) touches none
 * of the closed window's widgets (under ASan, a use after free). */
static void
test_close_while_running (void)
{
  g_autoptr(SightStepList) list = NULL;
  g_autoptr(GFile) file = NULL;
  g_autoptr(GError) error = NULL;
  gint64 deadline;

  app_test_ensure_window (&window, DEADLINE_US);
  list = g_object_ref (sight_window_get_step_list (window));
  file = write_test ("close-while-running.sightline.json",
                     "[ { \"do\": \"expect text \\\"Nobody greets you here\\\"\" },"
                     "  { \"do\": \"click \\\"Sign in\\\"\" } ]");
  sight_window_open_test_file (window, file, &error);
  g_assert_no_error (error);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.run-all", NULL));
  g_assert_true (sight_step_list_get_running (list));
  gtk_window_destroy (GTK_WINDOW (window));
  g_clear_object (&window);
  /* Until the runner has told its end. */
  deadline = g_get_monotonic_time () + DEADLINE_US;
  while (sight_step_list_get_running (list) && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (sight_step_list_get_running (list));
}

int
main (int    argc,
      char **argv)
{
  int status;

  tmpdir = g_dir_make_tmp ("test-step-list-XXXXXX", NULL);
  g_setenv ("SIGHTLINE_DATA_DIR", tmpdir, TRUE);
  app_test_init (&argc, &argv);

  g_test_add_func ("/step-list/open-lists-steps", test_open_lists_steps);
  g_test_add_func ("/step-list/edit-reorder-delete-save", test_edit_reorder_delete_save);
  g_test_add_func ("/step-list/run-all-shows-verdicts", test_run_all_shows_verdicts);
  g_test_add_func ("/step-list/runs-are-kept", test_runs_are_kept);
  g_test_add_func ("/step-list/stop", test_stop);
  g_test_add_func ("/step-list/heal-review", test_heal_review);
  g_test_add_func ("/step-list/demo-outlines-act-targets", test_demo_outlines_act_targets);
  g_test_add_func ("/step-list/relative-url", test_relative_url);
  g_test_add_func ("/step-list/run-all-applies-timeout", test_run_all_applies_timeout);
  g_test_add_func ("/step-list/run-all-without-model", test_run_all_without_model);
  g_test_add_func ("/step-list/undo-delete-keeps-options", test_undo_delete_keeps_options);
  g_test_add_func ("/step-list/single-step-keeps-evidence", test_single_step_keeps_evidence);
  g_test_add_func ("/step-list/recorder-appends", test_recorder_appends);
  g_test_add_func ("/step-list/close-asks-to-save", test_close_asks_to_save);
  g_test_add_func ("/step-list/close-while-running", test_close_while_running);
  status = g_test_run ();
  if (window != NULL)
    gtk_window_destroy (GTK_WINDOW (window));
  g_clear_object (&window);
  test_remove_tree (tmpdir);
  return status;
}
