/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-window"

#include "config.h"

#include <adwaita.h>
#include <webkit/webkit.h>

#include "app-test-common.h"
#include "sight-demo-overlay.h"
#include "sight-inspector.h"
#include "sight-step-list.h"
#include "sight-shot-view.h"
#include "sight-window.h"

#define DEADLINE_US (90 * G_USEC_PER_SEC)

typedef struct {
  SightWindow *window;
  guint        observations;
} Fixture;

static void
observation_changed_cb (SightWindow *window,
                        Fixture     *fixture)
{
  fixture->observations++;
}

static gboolean
wait_for_observation (Fixture *fixture,
                      guint    count)
{
  gint64 deadline = g_get_monotonic_time () + DEADLINE_US;

  while (fixture->observations < count && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  return fixture->observations >= count;
}

static JsonNode *
evaluate (SightWebPage *page,
          const char   *body)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autofree char *script = g_strconcat (sight_observation_get_script (), "\n", body, NULL);
  g_autoptr(GError) error = NULL;
  JsonNode *value;

  sight_web_page_evaluate_async (page, script, NULL, 10000, NULL,
                                 app_test_store_result_cb, &result);
  app_test_wait_result (&result, DEADLINE_US);
  value = sight_web_page_evaluate_finish (page, result, &error);
  g_assert_no_error (error);
  return value;
}

/* One window for the whole program: a web process and the demo site start
 * once, which keeps the test fast on a loaded machine. Each test starts from
 * whatever the previous one left, so each waits for what it needs. */
static Fixture shared;

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  if (shared.window == NULL)
    {
      shared.window = g_object_ref_sink (g_object_new (SIGHT_TYPE_WINDOW, NULL));
      g_signal_connect (shared.window, "observation-changed",
                        G_CALLBACK (observation_changed_cb), &shared);
      gtk_window_present (GTK_WINDOW (shared.window));
    }
}

#define fixture (&shared)

/* The first ref in the observation's tree with @role and @name. */
static const char *
find_ref (JsonNode   *node,
          const char *role,
          const char *name)
{
  JsonObject *object = json_node_get_object (node);

  if (g_strcmp0 (json_object_get_string_member_with_default (object, "role", ""), role) == 0 &&
      g_strcmp0 (json_object_get_string_member_with_default (object, "name", ""), name) == 0)
    return json_object_get_string_member (object, "ref");
  if (json_object_has_member (object, "children"))
    {
      JsonArray *children = json_object_get_array_member (object, "children");

      for (guint i = 0; i < json_array_get_length (children); i++)
        {
          const char *ref = find_ref (json_array_get_element (children, i), role, name);

          if (ref != NULL)
            return ref;
        }
    }
  return NULL;
}

static guint
count_nodes (JsonNode *node)
{
  JsonObject *object = json_node_get_object (node);
  guint n = 1;

  if (json_object_has_member (object, "children"))
    {
      JsonArray *children = json_object_get_array_member (object, "children");

      for (guint i = 0; i < json_array_get_length (children); i++)
        n += count_nodes (json_array_get_element (children, i));
    }
  return n;
}

static void
test_window_opens_demo_site (Fixture       *unused,
                             gconstpointer  data)
{
  SightInspector *inspector = sight_window_get_inspector (fixture->window);
  SightObservation *observation;
  const SightScreenshot *shot;

  g_assert_true (wait_for_observation (fixture, 1));
  observation = sight_window_get_observation (fixture->window);
  g_assert_nonnull (observation);
  g_assert_nonnull (sight_window_get_demo_url (fixture->window));
  g_assert_true (g_str_has_prefix (sight_observation_get_url (observation),
                                   sight_window_get_demo_url (fixture->window)));
  /* The whole tree is listed, expanded: the document and its nodes. */
  g_assert_cmpuint (sight_inspector_get_n_rows (inspector), ==,
                    count_nodes (sight_observation_get_tree (observation)));
  g_assert_cmpuint (sight_inspector_get_n_rows (inspector), >, 10);
  shot = sight_observation_get_screenshot (observation);
  g_assert_nonnull (shot);
  /* The password field is masked before anyone sees the pixels. */
  g_assert_true (sight_observation_masking_proven (observation));
}

static void
test_window_selection_sync (Fixture       *unused,
                            gconstpointer  data)
{
  SightInspector *inspector = sight_window_get_inspector (fixture->window);
  SightShotView *shot_view = SIGHT_SHOT_VIEW (sight_inspector_get_shot_view (inspector));
  SightWebPage *page = sight_window_get_page (fixture->window);
  SightObservation *observation;
  const char *email_ref, *sign_in_ref;
  JsonObject *email;
  JsonArray *box;
  double x = 0, y = 0;
  gint64 deadline;
  gboolean outlined = FALSE;

  g_assert_true (wait_for_observation (fixture, 1));
  observation = sight_window_get_observation (fixture->window);
  email_ref = find_ref (sight_observation_get_tree (observation), "textbox", "Email");
  sign_in_ref = find_ref (sight_observation_get_tree (observation), "button", "Sign in");
  g_assert_nonnull (email_ref);
  g_assert_nonnull (sign_in_ref);

  /* Tree → screenshot: selecting a row selects its box. */
  g_assert_true (sight_inspector_select_ref (inspector, sign_in_ref));
  g_assert_cmpstr (sight_inspector_get_selected_ref (inspector), ==, sign_in_ref);
  g_assert_cmpstr (sight_shot_view_get_selected_ref (shot_view), ==, sign_in_ref);
  g_assert_false (sight_inspector_select_ref (inspector, "e99999"));

  /* Screenshot → tree: a click on the Email field's box selects its row. */
  email = sight_observation_lookup (observation, email_ref);
  box = json_object_get_array_member (email, "box");
  deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  while (gtk_widget_get_width (GTK_WIDGET (shot_view)) == 0 && g_get_monotonic_time () < deadline)
    app_test_spin (50);
  g_assert_true (sight_shot_view_from_css (shot_view,
                                           json_array_get_double_element (box, 0) +
                                           json_array_get_double_element (box, 2) / 2,
                                           json_array_get_double_element (box, 1) +
                                           json_array_get_double_element (box, 3) / 2,
                                           &x, &y));
  sight_shot_view_click (shot_view, x, y);
  g_assert_cmpstr (sight_inspector_get_selected_ref (inspector), ==, email_ref);

  /* … and the live page outlines it, from Sightline's isolated world. */
  deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  while (!outlined && g_get_monotonic_time () < deadline)
    {
      g_autoptr(JsonNode) value = NULL;
      g_autofree char *body = g_strdup_printf (
        "const o = document.getElementById ('__sightline-highlight');\n"
        "const e = __sight.snapshot.resolve ('%s');\n"
        "if (!o || !e) return false;\n"
        "const a = o.getBoundingClientRect (), b = e.getBoundingClientRect ();\n"
        "return Math.abs (a.left - b.left) < 2 && Math.abs (a.top - b.top) < 2 &&\n"
        "       Math.abs (a.width - b.width) < 2;", email_ref);

      app_test_spin (100);
      value = evaluate (page, body);
      outlined = json_node_get_boolean (value);
    }
  g_assert_true (outlined);

  /* Type-to-search finds nodes by name and says when nothing matches. */
  g_assert_true (sight_inspector_search (inspector, "pricing"));
  g_assert_cmpstr (sight_inspector_get_selected_ref (inspector), ==,
                   find_ref (sight_observation_get_tree (observation), "link", "Pricing"));
  g_assert_false (sight_inspector_search (inspector, "no node is called this"));
}

static void
test_window_navigation_refreshes (Fixture       *unused,
                                  gconstpointer  data)
{
  g_autofree char *pricing = NULL;
  SightObservation *observation;
  guint before;

  g_assert_true (wait_for_observation (fixture, 1));
  before = fixture->observations;
  pricing = g_strconcat (sight_window_get_demo_url (fixture->window), "pricing", NULL);
  sight_window_open_uri (fixture->window, pricing);
  /* An observation scheduled by an earlier step may come first: wait for the
   * one of the new page. */
  do
    {
      g_assert_true (wait_for_observation (fixture, before + 1));
      before = fixture->observations;
      observation = sight_window_get_observation (fixture->window);
    }
  while (g_strcmp0 (sight_observation_get_url (observation), pricing) != 0);
  g_assert_cmpstr (sight_observation_get_url (observation), ==, pricing);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (sight_window_get_inspector (fixture->window))));

  /* The inspector toggle hides and shows the inspector. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (fixture->window), "win.show-inspector",
                                             NULL));
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (sight_window_get_inspector (fixture->window))));
  /* Refresh observation takes a new one on request. */
  before = fixture->observations;
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (fixture->window),
                                             "win.refresh-observation", NULL));
  g_assert_true (wait_for_observation (fixture, before + 1));
}

static gboolean
wait_until_idle (SightComposer *composer,
                 gint64        *elapsed_while_running)
{
  gint64 deadline = g_get_monotonic_time () + DEADLINE_US;

  while (sight_composer_get_running (composer) && g_get_monotonic_time () < deadline)
    {
      g_main_context_iteration (NULL, TRUE);
      if (elapsed_while_running != NULL && sight_composer_get_running (composer))
        sight_composer_get_meters (composer, NULL, NULL, elapsed_while_running);
    }
  return !sight_composer_get_running (composer);
}

static void
test_window_model_step_without_model (Fixture       *unused,
                                      gconstpointer  data)
{
  SightComposer *composer = sight_window_get_composer (fixture->window);
  guint rows;

  g_assert_true (wait_for_observation (fixture, 1));
  rows = sight_composer_get_n_timeline (composer);
  sight_composer_set_kind (composer, "assert");
  g_assert_true (sight_composer_get_no_model_shown (composer));
  sight_composer_set_instruction (composer, "the page offers a sign-in form");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (fixture->window), "win.run", NULL));
  g_assert_true (wait_until_idle (composer, NULL));
  /* Never a crash: the step is blocked with MODEL_UNAVAILABLE, in the timeline. */
  g_assert_cmpstr (sight_composer_get_verdict (composer), ==, "blocked");
  g_assert_cmpuint (sight_composer_get_n_timeline (composer), ==, rows + 1);
  sight_composer_set_kind (composer, "do");
  g_assert_false (sight_composer_get_no_model_shown (composer));
}

static void
test_window_direct_step (Fixture       *unused,
                         gconstpointer  data)
{
  SightComposer *composer = sight_window_get_composer (fixture->window);
  SightWebPage *page = sight_window_get_page (fixture->window);
  g_autoptr(JsonNode) value = NULL;
  gint64 elapsed_running = 0;
  guint rows;

  g_assert_true (wait_for_observation (fixture, 1));
  sight_window_open_demo_site (fixture->window);
  g_assert_true (wait_for_observation (fixture, fixture->observations + 1));
  rows = sight_composer_get_n_timeline (composer);
  sight_composer_set_kind (composer, "do");
  sight_composer_set_instruction (composer, "type \"member@example.test\" into Email");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (fixture->window), "win.run", NULL));
  g_assert_true (sight_composer_get_running (composer));
  g_assert_true (wait_until_idle (composer, NULL));
  g_assert_cmpstr (sight_composer_get_verdict (composer), ==, "pass");
  g_assert_cmpuint (sight_composer_get_n_timeline (composer), ==, rows + 1);
  value = evaluate (page, "return document.querySelector ('input[type=email]').value;");
  g_assert_cmpstr (json_node_get_string (value), ==, "member@example.test");

  /* A failing expectation: the time meter moves while the step runs. */
  sight_composer_set_instruction (composer, "expect text \"Nobody wrote this\"");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (fixture->window), "win.run", NULL));
  g_assert_true (wait_until_idle (composer, &elapsed_running));
  g_assert_cmpint (elapsed_running, >, 0);
  g_assert_cmpstr (sight_composer_get_verdict (composer), ==, "fail");
  g_assert_cmpuint (sight_composer_get_n_timeline (composer), ==, rows + 2);
}

/* Demo mode: the developer panes go, a running direct step's caption shows
 * over the page, its target is outlined in the live page before the action,
 * and win.leave-demo (Escape) brings everything back. */
static void
test_window_demo_mode (Fixture       *unused,
                       gconstpointer  data)
{
  SightComposer *composer = sight_window_get_composer (fixture->window);
  SightWebPage *page = sight_window_get_page (fixture->window);
  SightDemoOverlay *overlay = sight_window_get_demo_overlay (fixture->window);
  GtkWidget *inspector = GTK_WIDGET (sight_window_get_inspector (fixture->window));
  GtkWidget *step_list = GTK_WIDGET (sight_window_get_step_list (fixture->window));
  g_autoptr(JsonNode) value = NULL;
  g_autoptr(JsonNode) outline = NULL;
  gboolean inspector_was_visible;
  char *caption_while_running = NULL;

  g_assert_true (wait_for_observation (fixture, 1));
  sight_window_open_demo_site (fixture->window);
  g_assert_true (wait_for_observation (fixture, fixture->observations + 1));
  inspector_was_visible = gtk_widget_get_visible (inspector);
  g_assert_true (gtk_widget_is_visible (step_list));
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (overlay)));

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (fixture->window), "win.demo-mode", NULL));
  g_assert_true (sight_window_get_demo_mode (fixture->window));
  g_assert_false (gtk_widget_is_visible (step_list));
  g_assert_false (gtk_widget_is_visible (inspector));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (overlay)));
  g_assert_null (sight_demo_overlay_get_caption (overlay));

  /* The page watches for the outline itself: whenever the highlight box
   * changes, it notes whether the box is on the field and whether the field
   * is still untyped (before the action), however briefly it shows. An
   * outline left from before is removed first. */
  json_node_unref (evaluate (page,
    "const f = document.querySelector ('input[type=email]');\n"
    "document.getElementById ('__sightline-highlight')?.remove ();\n"
    "const seen = globalThis.__demoOutline = { onField: false, beforeAction: false };\n"
    "const look = () => {\n"
    "  const b = document.getElementById ('__sightline-highlight');\n"
    "  if (!b) return;\n"
    "  const r = f.getBoundingClientRect ();\n"
    "  if (Math.abs (parseFloat (b.style.left) - r.left) < 2 &&\n"
    "      Math.abs (parseFloat (b.style.top) - r.top) < 2) {\n"
    "    seen.onField = true;\n"
    "    if (f.value !== 'demo@example.test') seen.beforeAction = true;\n"
    "  }\n"
    "};\n"
    "seen.observer = new MutationObserver (look);\n"
    "seen.observer.observe (document.documentElement, { childList: true, subtree: true,\n"
    "                                                   attributes: true,\n"
    "                                                   attributeFilter: ['style'] });\n"
    "look ();\n"
    "return true;"));
  sight_composer_set_kind (composer, "do");
  sight_composer_set_instruction (composer, "type \"demo@example.test\" into Email");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (fixture->window), "win.run", NULL));
  g_assert_true (sight_composer_get_running (composer));
  caption_while_running = g_strdup (sight_demo_overlay_get_caption (overlay));
  g_assert_true (wait_until_idle (composer, NULL));
  /* The outline of the field showed while the step waited to start. */
  outline = evaluate (page,
    "const seen = globalThis.__demoOutline;\n"
    "seen.observer.disconnect ();\n"
    "return seen.onField && seen.beforeAction;");
  g_assert_true (json_node_get_boolean (outline));
  g_assert_cmpstr (caption_while_running, ==, "Typing into “Email”");
  g_free (caption_while_running);
  g_assert_cmpstr (sight_composer_get_verdict (composer), ==, "pass");
  value = evaluate (page, "return document.querySelector ('input[type=email]').value;");
  g_assert_cmpstr (json_node_get_string (value), ==, "demo@example.test");

  /* Escape's action leaves demo mode; outside it, it changes nothing. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (fixture->window), "win.leave-demo", NULL));
  g_assert_false (sight_window_get_demo_mode (fixture->window));
  g_assert_true (gtk_widget_is_visible (step_list));
  g_assert_cmpint (gtk_widget_get_visible (inspector), ==, inspector_was_visible);
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (overlay)));
  gtk_widget_activate_action (GTK_WIDGET (fixture->window), "win.leave-demo", NULL);
  g_assert_false (sight_window_get_demo_mode (fixture->window));
  g_assert_true (gtk_widget_is_visible (step_list));
}

static void
test_window_records_steps (Fixture       *unused,
                           gconstpointer  data)
{
  SightComposer *composer = sight_window_get_composer (fixture->window);
  SightWebPage *page = sight_window_get_page (fixture->window);
  gint64 deadline;
  gboolean recording = FALSE;
  guint rows;

  g_assert_true (wait_for_observation (fixture, 1));
  sight_window_open_demo_site (fixture->window);
  g_assert_true (wait_for_observation (fixture, fixture->observations + 1));
  rows = sight_composer_get_n_timeline (composer);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (fixture->window), "win.record", NULL));
  g_object_get (fixture->window, "recording", &recording, NULL);
  g_assert_true (recording);
  app_test_spin (500);
  app_test_run_page_js (page,
                        "const el = document.querySelector ('input[type=email]'); el.focus ();"
                        "for (const ch of 'member@example.test') { el.value += ch;"
                        "  el.dispatchEvent (new InputEvent ('input', { bubbles: true, data: ch,"
                        "                                         inputType: 'insertText' })); }"
                        "const b = [...document.querySelectorAll ('button')]"
                        "  .find (x => x.textContent.trim () === 'Sign in');"
                        "b.dispatchEvent (new MouseEvent ('mousedown', { bubbles: true }));"
                        "b.click (); true;", DEADLINE_US);
  deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  while (sight_composer_get_n_timeline (composer) < rows + 2 &&
         g_get_monotonic_time () < deadline)
    app_test_spin (100);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (fixture->window), "win.record", NULL));
  app_test_spin (200);
  /* The fill and the click, as steps in the timeline. */
  g_assert_cmpuint (sight_composer_get_n_timeline (composer), >=, rows + 2);
}

/* Runs last: it takes the page's web process away. */
static void
test_window_reloads_after_crash (Fixture       *unused,
                                 gconstpointer  data)
{
  SightWebPage *page = sight_window_get_page (fixture->window);
  g_autoptr(JsonNode) value = NULL;
  gint64 deadline;
  guint before;

  g_assert_true (wait_for_observation (fixture, 1));
  g_assert_false (sight_window_get_crashed (fixture->window));
  sight_web_page_terminate_web_process (page, "The test stopped the web process");
  deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  while (!sight_window_get_crashed (fixture->window) && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  /* The notice is up, saying why, with a way back. */
  g_assert_true (sight_window_get_crashed (fixture->window));

  before = fixture->observations;
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (fixture->window), "win.reload", NULL));
  g_assert_false (sight_window_get_crashed (fixture->window));
  g_assert_true (wait_for_observation (fixture, before + 1));
  /* A new web process runs the page (and Sightline's world in it). */
  value = evaluate (page, "return document.querySelectorAll ('a').length > 0;");
  g_assert_true (json_node_get_boolean (value));
}

int
main (int    argc,
      char **argv)
{
  int status;

  app_test_init (&argc, &argv);

  g_test_add ("/window/opens-demo-site", Fixture, NULL,
              fixture_set_up, test_window_opens_demo_site, NULL);
  g_test_add ("/window/selection-sync", Fixture, NULL,
              fixture_set_up, test_window_selection_sync, NULL);
  g_test_add ("/window/model-step-without-model", Fixture, NULL,
              fixture_set_up, test_window_model_step_without_model, NULL);
  g_test_add ("/window/direct-step", Fixture, NULL,
              fixture_set_up, test_window_direct_step, NULL);
  g_test_add ("/window/demo-mode", Fixture, NULL,
              fixture_set_up, test_window_demo_mode, NULL);
  g_test_add ("/window/records-steps", Fixture, NULL,
              fixture_set_up, test_window_records_steps, NULL);
  g_test_add ("/window/navigation-refreshes", Fixture, NULL,
              fixture_set_up, test_window_navigation_refreshes, NULL);
  g_test_add ("/window/reloads-after-crash", Fixture, NULL,
              fixture_set_up, test_window_reloads_after_crash, NULL);
  status = g_test_run ();
  if (shared.window != NULL)
    gtk_window_destroy (GTK_WINDOW (shared.window));
  g_clear_object (&shared.window);
  return status;
}
