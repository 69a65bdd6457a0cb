/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-authoring"

#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <string.h>
#include <webkit/webkit.h>

#include "app-test-common.h"
#include "cli-test-common.h"
#include "sight-credential-keyring.h"
#include "sight-credential-offer.h"
#include "sight-demo-site.h"
#include "sight-inspector.h"
#include "sight-observation.h"
#include "sight-picker.h"
#include "sight-step-list.h"
#include "sight-window.h"
#include "test-files.h"

#define DEADLINE_US (60 * G_USEC_PER_SEC)

/* Authoring a test in the app with no hand-written JSON (issue #24): the real
 * window records the sign-in on the bundled demo site, the password typed
 * into the real page; the offer to save it as a credential is accepted (a
 * real keyring: tests/keyring-session.sh); the test is saved; then the saved
 * file runs with `sightline run` and passes, and the password is in none of
 * the files that run and the window left: the test file, the project file,
 * the databases and their logs, the HTML report. */

/* How many steps of the list are the direct step @text. */
static guint
count_steps (SightStepList *step_list,
             const char    *text)
{
  guint count = 0;

  for (guint i = 0; i < sight_step_list_get_n_steps (step_list); i++)
    if (g_strcmp0 (json_object_get_string_member_with_default (
                     sight_step_list_get_step (step_list, i), "do", NULL), text) == 0)
      count++;
  return count;
}

static const char *
page_uri (SightWindow *window)
{
  return webkit_web_view_get_uri (sight_web_page_get_web_view (sight_window_get_page (window)));
}

/* Whether @path's bytes hold @needle (a missing file holds nothing). */
static gboolean
file_holds (const char *path,
            const char *needle)
{
  g_autofree char *contents = NULL;
  gsize length = 0, n = strlen (needle);

  if (!g_file_get_contents (path, &contents, &length, NULL))
    return FALSE;
  /* byte by byte: a database holds NULs */
  for (gsize i = 0; i + n <= length; i++)
    if (memcmp (contents + i, needle, n) == 0)
      return TRUE;
  return FALSE;
}

static void
assert_secret_absent (const char *path,
                      const char *secret)
{
  g_autofree char *encoded = g_base64_encode ((const guchar *) secret, strlen (secret));

  g_test_message ("%s: %s", path, g_file_test (path, G_FILE_TEST_EXISTS) ? "checked" : "absent");
  if (file_holds (path, secret) || file_holds (path, encoded))
    g_error ("the password is in %s", path);
}

static void
test_record_sign_in_and_replay (void)
{
  const char *password = SIGHT_DEMO_SITE_PASSWORD;
  g_autofree char *root = g_dir_make_tmp ("sight-authoring-XXXXXX", NULL);
  g_autofree char *project_dir = g_build_filename (root, "project", NULL);
  g_autofree char *app_data = g_build_filename (root, "app-data", NULL);
  g_autofree char *cli_data = g_build_filename (root, "cli-data", NULL);
  g_autofree char *project_file = g_build_filename (project_dir, "sightline.json", NULL);
  g_autofree char *test_path = g_build_filename (project_dir, "sign-in.sightline.json", NULL);
  g_autofree char *report = g_build_filename (root, "report.html", NULL);
  g_autofree char *question = NULL;
  g_autofree char *origin = NULL;
  g_autofree char *old_cwd = g_get_current_dir ();
  g_autoptr(GFile) test_file = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(CliRun) run = { 0 };
  SightWindow *window;
  SightCredentialOffer *offer;
  SightStepList *step_list;
  gboolean recording = FALSE, found = FALSE;
  gint64 deadline;
  guint steps_before;

  if (g_getenv ("SIGHTLINE_TEST_KEYRING") == NULL || g_getenv ("SIGHTLINE_BIN") == NULL)
    {
      g_test_skip ("needs a private GNOME keyring (tests/keyring-session.sh) and SIGHTLINE_BIN");
      return;
    }
  g_assert_cmpint (g_mkdir_with_parents (project_dir, 0700), ==, 0);
  /* The window's own store is the test's too, and an unsaved test's project
   * file is the one in the folder the app runs in. */
  g_setenv ("SIGHTLINE_DATA_DIR", app_data, TRUE);
  g_assert_cmpint (g_chdir (project_dir), ==, 0);

  window = g_object_ref_sink (g_object_new (SIGHT_TYPE_WINDOW, NULL));
  gtk_window_present (GTK_WINDOW (window));
  offer = sight_window_get_credential_offer (window);
  step_list = sight_window_get_step_list (window);
  g_assert_false (sight_credential_offer_get_shown (offer));

  /* The demo site's sign-in page. */
  deadline = g_get_monotonic_time () + DEADLINE_US;
  while ((sight_window_get_demo_url (window) == NULL || page_uri (window) == NULL ||
          !g_str_has_suffix (page_uri (window), "/login") ||
          webkit_web_view_is_loading (sight_web_page_get_web_view (sight_window_get_page (window))))
         && g_get_monotonic_time () < deadline)
    {
      if (sight_window_get_demo_url (window) != NULL && page_uri (window) != NULL &&
          !g_str_has_suffix (page_uri (window), "/login") &&
          !webkit_web_view_is_loading (sight_web_page_get_web_view (sight_window_get_page (window))))
        {
          g_autofree char *login = g_strconcat (sight_window_get_demo_url (window), "login", NULL);

          sight_window_open_uri (window, login);
        }
      app_test_spin (50);
    }
  g_assert_true (g_str_has_suffix (page_uri (window), "/login"));
  origin = sight_origin_normalize (page_uri (window));

  /* Record: the email, the password, Sign in, as a person types and clicks. */
  steps_before = sight_step_list_get_n_steps (step_list);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.record", NULL));
  g_object_get (window, "recording", &recording, NULL);
  g_assert_true (recording);
  app_test_spin (500);
  app_test_run_page_js (sight_window_get_page (window),
                        "const type = (el, text) => { el.focus ();"
                        "  for (const ch of text) { el.value += ch;"
                        "    el.dispatchEvent (new InputEvent ('input', { bubbles: true, data: ch,"
                        "                                      inputType: 'insertText' })); } };"
                        "type (document.querySelector ('#email'), 'member@example.test');"
                        "type (document.querySelector ('#password'), 'harbor-trial-2024');"
                        "const b = [...document.querySelectorAll ('button')]"
                        "  .find (x => x.textContent.trim () === 'Sign in');"
                        "b.dispatchEvent (new MouseEvent ('mousedown', { bubbles: true }));"
                        "b.click (); true;", DEADLINE_US);

  /* The offer comes up over the page, name and origin filled in. */
  deadline = g_get_monotonic_time () + DEADLINE_US;
  while (!sight_credential_offer_get_shown (offer) && g_get_monotonic_time () < deadline)
    app_test_spin (50);
  g_assert_true (sight_credential_offer_get_shown (offer));
  question = g_strdup_printf ("Save as credential “member.password” for %s?", origin);
  g_assert_cmpstr (sight_credential_offer_get_question (offer), ==, question);

  /* Signed in: the dashboard. */
  deadline = g_get_monotonic_time () + DEADLINE_US;
  while (!g_str_has_suffix (page_uri (window), "/dashboard") && g_get_monotonic_time () < deadline)
    app_test_spin (50);
  g_assert_true (g_str_has_suffix (page_uri (window), "/dashboard"));
  deadline = g_get_monotonic_time () + DEADLINE_US;
  while (sight_step_list_get_n_steps (step_list) < steps_before + 3 &&
         g_get_monotonic_time () < deadline)
    app_test_spin (50);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.record", NULL));
  app_test_spin (300);
  g_assert_cmpuint (sight_step_list_get_n_steps (step_list), >=, steps_before + 3);

  /* Accepted, non-modally, after recording: keyring and project file. */
  g_assert_true (sight_credential_offer_get_shown (offer));
  g_signal_emit_by_name (gtk_widget_get_template_child (GTK_WIDGET (offer),
                                                        SIGHT_TYPE_CREDENTIAL_OFFER,
                                                        "accept_button"), "clicked");
  g_assert_false (sight_credential_offer_get_shown (offer));
  deadline = g_get_monotonic_time () + DEADLINE_US;
  while (!file_holds (project_file, "member.password") && g_get_monotonic_time () < deadline)
    app_test_spin (50);
  g_assert_true (file_holds (project_file, "\"keyring\""));
  g_assert_true (file_holds (project_file, origin));
  app_test_spin (200);

  /* The recorded password step names the credential, never the value. */
  for (guint i = 0; i < sight_step_list_get_n_steps (step_list); i++)
    {
      JsonObject *step = sight_step_list_get_step (step_list, i);
      JsonObject *params = json_object_has_member (step, "params")
                             ? json_object_get_object_member (step, "params") : NULL;

      if (params != NULL && json_object_has_member (params, "password"))
        {
          g_assert_cmpstr (json_object_get_string_member (
                             json_object_get_object_member (params, "password"), "secret"), ==,
                           "member.password");
          g_assert_cmpstr (json_object_get_string_member (step, "do"), ==,
                           "type {password} into the \"Password\" field");
          found = TRUE;
        }
    }
  g_assert_true (found);

  /* "Expect text" on the dashboard heading through the tree's context menu,
   * as a person adds it: select the node, open its menu, choose the item,
   * keep the prefilled text, Add. Then Ctrl+Z takes it away and Ctrl+Shift+Z
   * brings it back, the unsaved mark following. */
  {
    const char *expected = "expect the \"Northwind Logistics\" heading has text "
                           "\"Northwind Logistics\"";
    SightInspector *inspector = sight_window_get_inspector (window);
    SightPicker *picker = sight_window_get_picker (window);
    JsonObject *heading;
    GtkPopover *menu;
    AdwMessageDialog *dialog;
    guint n_recorded = sight_step_list_get_n_steps (step_list);

    heading = app_test_find_node (app_test_observe (window, DEADLINE_US), "heading",
                                  "Northwind Logistics");
    g_assert_true (sight_inspector_select_ref (inspector,
                                               json_object_get_string_member (heading, "ref")));
    menu = sight_inspector_popup_node_menu (inspector);
    g_assert_nonnull (menu);
    app_test_spin (100);
    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (menu), "steps.expect-text", NULL));
    gtk_popover_popdown (menu);
    dialog = sight_picker_get_dialog (picker);
    g_assert_nonnull (dialog);
    adw_message_dialog_response (dialog, "add");
    g_assert_cmpuint (sight_step_list_get_n_steps (step_list), ==, n_recorded + 1);
    g_assert_cmpuint (count_steps (step_list, expected), ==, 1);
    g_assert_true (sight_step_list_get_modified (step_list));

    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.undo", NULL));
    g_assert_cmpuint (sight_step_list_get_n_steps (step_list), ==, n_recorded);
    g_assert_cmpuint (count_steps (step_list, expected), ==, 0);
    g_assert_true (sight_step_list_can_redo (step_list));

    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.redo", NULL));
    g_assert_cmpuint (sight_step_list_get_n_steps (step_list), ==, n_recorded + 1);
    g_assert_cmpuint (count_steps (step_list, expected), ==, 1);
    g_assert_false (sight_step_list_can_redo (step_list));
  }

  /* Saved, as the app saves. */
  test_file = g_file_new_for_path (test_path);
  g_assert_true (sight_step_list_save (step_list, test_file, &error));
  g_assert_no_error (error);

  /* The saved file runs headless and passes, the value from the keyring. */
  {
    const char * const set_env[] = { "SIGHTLINE_DATA_DIR", cli_data, NULL };
    const char * const unset_env[] = { "SIGHTLINE_MODEL", NULL };
    const CliOptions options = { project_dir, set_env, unset_env, 120 };
    const char * const args[] = { "run", test_path, "--report", report, NULL };

    cli_run_argv (&run, &options, args);
  }
  g_test_message ("sightline run: %d\n%s\n%s", run.status, run.out, run.err);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_true (g_file_test (report, G_FILE_TEST_IS_REGULAR));

  /* The password is in no file, no database, no log of one, no report. */
  {
    const char *files[] = { test_path, project_file, report, "sightline.db", "sightline.db-wal",
                            "sightline.db-shm", "sightline.db-journal" };

    for (guint i = 0; i < G_N_ELEMENTS (files); i++)
      {
        g_autofree char *in_cli = g_path_is_absolute (files[i]) ? g_strdup (files[i])
                                  : g_build_filename (cli_data, files[i], NULL);
        g_autofree char *in_app = g_path_is_absolute (files[i]) ? NULL
                                  : g_build_filename (app_data, files[i], NULL);

        assert_secret_absent (in_cli, password);
        if (in_app != NULL)
          assert_secret_absent (in_app, password);
      }
  }
  /* … while the run did type it: all three steps passed, the password's by
   * its placeholder, and the stores were written. */
  g_assert_nonnull (strstr (run.out, "1 passed"));
  g_assert_true (file_holds (report, "type {password} into the"));
  g_assert_true (g_file_test (cli_data, G_FILE_TEST_IS_DIR));
  {
    g_autofree char *db = g_build_filename (cli_data, "sightline.db", NULL);

    g_assert_true (file_holds (db, "member@example.test"));
  }

  gtk_window_destroy (GTK_WINDOW (window));
  g_clear_object (&window);
  app_test_spin (200);
  g_assert_cmpint (g_chdir (old_cwd), ==, 0);
  test_remove_tree (root);
}

int
main (int    argc,
      char **argv)
{
  app_test_init (&argc, &argv);

  g_test_add_func ("/authoring/record-sign-in-and-replay", test_record_sign_in_and_replay);
  return g_test_run ();
}
