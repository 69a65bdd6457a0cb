/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <gio/gio.h>
#include <libsoup/soup.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "cli-test-common.h"
#include "export-site-common.h"
#include "sight-direct-step.h"
#include "sight-error.h"
#include "sight-export.h"

static char *
fixture_path (const char *name)
{
  return g_test_build_filename (G_TEST_DIST, "fixtures", "export", name, NULL);
}

static char *
read_fixture (const char *name)
{
  g_autofree char *path = fixture_path (name);
  g_autoptr(GError) error = NULL;
  char *text = NULL;

  g_file_get_contents (path, &text, NULL, &error);
  g_assert_no_error (error);
  return text;
}

static void
assert_same_text (const char *got,
                  const char *golden_name)
{
  g_autofree char *want = read_fixture (golden_name);

  if (g_strcmp0 (got, want) != 0)
    {
      g_auto(GStrv) a = g_strsplit (got, "\n", -1);
      g_auto(GStrv) b = g_strsplit (want, "\n", -1);

      for (guint i = 0; a[i] != NULL && b[i] != NULL; i++)
        if (!g_str_equal (a[i], b[i]))
          g_error ("%s differs at line %u:\n got: %s\nwant: %s", golden_name, i + 1, a[i], b[i]);
      g_error ("%s differs in length", golden_name);
    }
}

static void
test_golden (void)
{
  g_autofree char *path = fixture_path ("signin.sightline.json");
  g_autoptr(GError) error = NULL;
  g_autofree char *playwright = sight_export_test_path (path, SIGHT_EXPORT_PLAYWRIGHT, &error);
  g_autofree char *e2e = NULL;

  g_assert_no_error (error);
  assert_same_text (playwright, "signin.playwright.ts");
  e2e = sight_export_test_path (path, SIGHT_EXPORT_E2E, &error);
  g_assert_no_error (error);
  assert_same_text (e2e, "signin.e2e.ts");

  /* what the golden files must say, so that regenerating them blindly fails */
  g_assert_nonnull (strstr (playwright, "page.getByRole('button', { name: 'Add to cart', exact: true }).nth(1).click()"));
  g_assert_nonnull (strstr (playwright, "getByRole('combobox', { name: 'Plan' }).selectOption('Pro')"));
  g_assert_nonnull (strstr (playwright, "type: 'todo', description: 'act: Sign in'"));
  g_assert_null (strstr (playwright, "agent."));
  g_assert_nonnull (strstr (e2e, "await agent.act('Sign in', { params: { 'password': credentials.user('member').password }, maxSteps: 5 });"));
  g_assert_nonnull (strstr (e2e, "await agent.assert('the dashboard shows a trial badge', { vision: 'only' });"));
  g_assert_nonnull (strstr (e2e, "await agent.waitFor('the upload progress reports completion', { interval: 500 });"));
  g_assert_nonnull (strstr (e2e, "z.object({ 'name': z.string(), 'plan': z.string() })"));
  g_assert_nonnull (strstr (e2e, "await page.goto('http://127.0.0.1:8765/pricing');"));
}

static JsonNode *
parse_json (const char *text)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  json_parser_load_from_data (parser, text, -1, &error);
  g_assert_no_error (error);
  return json_node_copy (json_parser_get_root (parser));
}

static void
test_escaping (void)
{
  g_autoptr(JsonNode) file = parse_json (
    "{ \"name\": \"it's a \\\"test\\\"\\nsecond line\", \"steps\": ["
    "  { \"do\": \"click the \\\"Don't \\\\\\\\ panic\\\" button\" },"
    "  { \"do\": \"expect URL contains /a.b?c=(1)\" },"
    "  { \"act\": \"say 'hi'\\u2028now\" } ] }");
  g_autoptr(GError) error = NULL;
  g_autofree char *out = sight_export_test (file, "x.sightline.json", SIGHT_EXPORT_E2E, &error);

  g_assert_no_error (error);
  g_assert_nonnull (strstr (out, "test('it\\'s a \"test\"\\nsecond line', async"));
  g_assert_nonnull (strstr (out, "getByRole('button', { name: 'Don\\'t \\\\ panic', exact: true })"));
  g_assert_nonnull (strstr (out, "toHaveURL(/\\/a\\.b\\?c=\\(1\\)/)"));
  g_assert_nonnull (strstr (out, "agent.act('say \\'hi\\'\\u2028now')"));
  /* the name's second line stays inside the comment */
  g_assert_nonnull (strstr (out, "\n// second line\n"));
}

/* The roles of the exported control() helper, in its order. */
static GPtrArray *
exported_control_roles (const char *out)
{
  const char *start = strstr (out, "const roles = [");
  const char *end = start != NULL ? strstr (start, "] as const") : NULL;
  g_autofree char *list = NULL;
  g_auto(GStrv) items = NULL;
  GPtrArray *roles = g_ptr_array_new_with_free_func (g_free);

  g_assert_nonnull (end);
  list = g_strndup (start + strlen ("const roles = ["), end - start - strlen ("const roles = ["));
  items = g_strsplit_set (list, ",", -1);
  for (guint i = 0; items[i] != NULL; i++)
    {
      char *role = g_strstrip (items[i]);

      g_assert_true (role[0] == '\'' && role[strlen (role) - 1] == '\'');
      g_ptr_array_add (roles, g_strndup (role + 1, strlen (role) - 2));
    }
  return roles;
}

/* An exported "click Go" tries exactly the roles Sightline's "click Go"
 * prefers: for every ARIA role, a node of it named "Go" beside a heading
 * "Go" is what the resolver clicks if and only if the helper lists the role. */
static void
test_control_roles_match_resolver (void)
{
  static const char *aria_roles[] = {
    "alert", "alertdialog", "application", "article", "banner", "blockquote", "button",
    "caption", "cell", "checkbox", "code", "columnheader", "combobox", "complementary",
    "contentinfo", "definition", "deletion", "dialog", "directory", "document", "emphasis",
    "feed", "figure", "form", "generic", "grid", "gridcell", "group", "img", "insertion",
    "link", "list", "listbox", "listitem", "log", "main", "marquee", "math", "menu", "menubar",
    "menuitem", "menuitemcheckbox", "menuitemradio", "meter", "navigation", "note", "option",
    "paragraph", "progressbar", "radio", "radiogroup", "region", "row", "rowgroup", "rowheader",
    "scrollbar", "search", "searchbox", "separator", "slider", "spinbutton", "status", "strong",
    "subscript", "superscript", "switch", "tab", "table", "tablist", "tabpanel", "term",
    "textbox", "time", "timer", "toolbar", "tooltip", "tree", "treegrid", "treeitem",
  };
  g_autoptr(JsonNode) file = parse_json (
    "{ \"name\": \"roles\", \"steps\": [ { \"do\": \"click Go\" } ] }");
  g_autoptr(GError) error = NULL;
  g_autofree char *out = sight_export_test (file, "roles.sightline.json",
                                            SIGHT_EXPORT_PLAYWRIGHT, &error);
  g_autoptr(GPtrArray) exported = NULL;
  g_autoptr(SightDirectStep) step = sight_direct_step_parse ("click Go", &error);
  guint n_preferred = 0;

  g_assert_no_error (error);
  exported = exported_control_roles (out);
  for (guint i = 0; i < G_N_ELEMENTS (aria_roles); i++)
    {
      SightNodeView nodes[] = {
        { "e1", "heading", "Go", NULL, 0, "Go" },
        { "e2", aria_roles[i], "Go", NULL, 0, "Go" },
      };
      g_autoptr(GError) local_error = NULL;
      guint index = G_MAXUINT;
      gboolean preferred = sight_direct_step_resolve (step, nodes, G_N_ELEMENTS (nodes), &index,
                                                      &local_error) && index == 1;
      gboolean listed = g_ptr_array_find_with_equal_func (exported, aria_roles[i], g_str_equal,
                                                          NULL);

      if (preferred != listed)
        g_error ("the resolver %s a \"%s\" for \"click Go\", the exported control() %s it",
                 preferred ? "prefers" : "does not prefer", aria_roles[i],
                 listed ? "lists" : "does not list");
      n_preferred += preferred;
    }
  /* every role the helper lists is a role the resolver prefers, none is left over */
  g_assert_cmpuint (n_preferred, ==, exported->len);
  g_assert_cmpuint (exported->len, >, 2);
}

static void
test_bad_files (void)
{
  static const struct { const char *json; const char *message; } bad[] = {
    { "[]", "JSON object" },
    { "{}", "steps" },
    { "{ \"steps\": [ 3 ] }", "step 1 is not an object" },
    { "{ \"steps\": [ { \"do\": \"click Save\", \"act\": \"x\" } ] }", "both" },
    { "{ \"steps\": [ { \"click\": \"Save\" } ] }", "none of" },
    { "{ \"steps\": [ { \"do\": \"\" } ] }", "non-empty" },
    { "{ \"steps\": [ { \"do\": \"click Save\" }, { \"do\": \"smash it\" } ] }", "step 2" },
    { "{ \"steps\": [ { \"do\": \"type {pw} into Password\" } ] }", "{pw}" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(JsonNode) file = parse_json (bad[i].json);
      g_autoptr(GError) error = NULL;
      g_autofree char *out = sight_export_test (file, NULL, SIGHT_EXPORT_PLAYWRIGHT, &error);

      g_assert_null (out);
      g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
      if (strstr (error->message, bad[i].message) == NULL)
        g_error ("%s: \"%s\" lacks \"%s\"", bad[i].json, error->message, bad[i].message);
    }
}

static int
run_cli (const char * const *args,
         char              **out,
         char              **err)
{
  CliRun run = { 0 };

  cli_run_argv (&run, NULL, args);
  *out = g_steal_pointer (&run.out);
  *err = g_steal_pointer (&run.err);
  return run.status;
}

static void
test_cli (void)
{
  g_autofree char *path = fixture_path ("signin.sightline.json");
  g_autofree char *dir = g_dir_make_tmp ("sight-export-XXXXXX", NULL);
  g_autofree char *target = g_build_filename (dir, "signin.spec.ts", NULL);
  g_autofree char *written = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *bad = g_build_filename (dir, "bad.sightline.json", NULL);

  if (g_getenv ("SIGHTLINE_BIN") == NULL)
    {
      g_test_skip ("SIGHTLINE_BIN is not set");
      return;
    }

  /* stdout */
  g_assert_cmpint (run_cli ((const char *[]) { "export", path, "--to", "playwright", NULL },
                            &out, &err), ==, 0);
  assert_same_text (out, "signin.playwright.ts");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* --output */
  g_assert_cmpint (run_cli ((const char *[]) { "export", path, "--to", "e2e", "--output", target,
                                               NULL }, &out, &err), ==, 0);
  g_assert_cmpstr (out, ==, "");
  g_assert_true (g_file_get_contents (target, &written, NULL, NULL));
  assert_same_text (written, "signin.e2e.ts");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* usage errors exit 2 with the code */
  g_assert_cmpint (run_cli ((const char *[]) { "export", path, "--to", "cypress", NULL },
                            &out, &err), ==, 2);
  g_assert_nonnull (strstr (err, "INVALID_ARGUMENT"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run_cli ((const char *[]) { "export", path, NULL }, &out, &err), ==, 2);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_true (g_file_set_contents (bad, "{ \"steps\": [ { \"do\": \"frobnicate\" } ] }", -1,
                                      NULL));
  g_assert_cmpint (run_cli ((const char *[]) { "export", bad, "--to", "e2e", NULL }, &out, &err),
                   ==, 2);
  g_assert_nonnull (strstr (err, "step 1"));
  g_assert_cmpstr (out, ==, "");

  g_remove (target);
  g_remove (bad);
  g_rmdir (dir);
}

/* Running the exported test under Playwright on Chromium. */

static char *
find_playwright_test (void)
{
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autofree char *out = NULL;
  const char *node_path = g_getenv ("NODE_PATH");
  g_autofree char *paths = g_strdup_printf ("%s%s/usr/lib/node_modules:/usr/local/lib/node_modules",
                                            node_path != NULL ? node_path : "",
                                            node_path != NULL ? ":" : "");

  if (g_find_program_in_path ("node") == NULL)
    return NULL;
  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                        G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_subprocess_launcher_setenv (launcher, "NODE_PATH", paths, TRUE);
  proc = g_subprocess_launcher_spawn (launcher, NULL, "node", "-p",
                                      "require('path').dirname(require.resolve('@playwright/test/package.json'))",
                                      NULL);
  if (proc == NULL || !g_subprocess_communicate_utf8 (proc, NULL, NULL, &out, NULL, NULL) ||
      !g_subprocess_get_successful (proc))
    return NULL;
  return g_strstrip (g_steal_pointer (&out));
}

static void
communicate_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  GAsyncResult **out = user_data;

  *out = g_object_ref (result);
}

static gboolean
timeout_cb (gpointer user_data)
{
  gboolean *expired = user_data;

  *expired = TRUE;
  return G_SOURCE_REMOVE;
}

static void
test_runs_under_playwright (void)
{
  g_autofree char *pw_dir = find_playwright_test ();
  g_autofree char *chromium = g_find_program_in_path ("chromium");
  g_autoptr(SoupServer) server = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GSList) uris = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *json = NULL;
  g_autofree char *spec = NULL;
  g_autofree char *spec_path = NULL;
  g_autofree char *config_path = NULL;
  g_autofree char *modules = NULL;
  g_autofree char *link = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(JsonNode) file = NULL;
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  gboolean expired = FALSE;
  guint timeout_id;
  guint port;

  if (pw_dir == NULL || chromium == NULL)
    {
      g_test_skip ("needs node with @playwright/test (npm install -g @playwright/test) and "
                   "/usr/bin/chromium (apt-get install chromium)");
      return;
    }

  server = soup_server_new (NULL, NULL);
  soup_server_add_handler (server, NULL, export_site_serve_cb, NULL, NULL);
  soup_server_listen_local (server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error);
  g_assert_no_error (error);
  uris = soup_server_get_uris (server);
  port = g_uri_get_port (uris->data);
  g_slist_free_full (g_steal_pointer (&uris), (GDestroyNotify) g_uri_unref);

  json = g_strdup_printf (
    "{ \"name\": \"signs in and shops\", \"url\": \"http://127.0.0.1:%u/login\", \"timeout\": 60000,"
    "  \"steps\": ["
    "    { \"do\": \"type \\\"member@example.test\\\" into Email\" },"
    "    { \"do\": \"type {password} into the Password field\","
    "      \"params\": { \"password\": { \"secret\": \"member.password\" } } },"
    "    { \"do\": \"check Remember me\" },"
    "    { \"do\": \"expect the Remember me checkbox is checked\" },"
    "    { \"do\": \"select \\\"Pro\\\" from the Plan dropdown\" },"
    "    { \"do\": \"expect Email has value \\\"member@example.test\\\"\" },"
    "    { \"do\": \"click Sign in\" },"
    "    { \"do\": \"expect URL contains /dashboard\" },"
    "    { \"do\": \"wait for text \\\"Welcome\\\"\" },"
    "    { \"do\": \"expect text \\\"Plan: Pro\\\"\" },"
    "    { \"act\": \"add a coffee to the cart\" },"
    "    { \"do\": \"click the 2nd \\\"Add to cart\\\" button\" },"
    "    { \"do\": \"expect text \\\"Cart: Coffee\\\"\" },"
    "    { \"do\": \"type tea into the Search field\" },"
    "    { \"do\": \"press Enter in the Search field\" },"
    "    { \"do\": \"expect text \\\"Searched: tea\\\"\" },"
    "    { \"do\": \"expect the \\\"Save\\\" button disabled\" },"
    "    { \"do\": \"expect no text \\\"Invalid password\\\"\" },"
    "    { \"do\": \"scroll to the bottom\" },"
    "    { \"do\": \"go back\" },"
    "    { \"do\": \"expect URL contains /login\" },"
    "    { \"do\": \"expect the \\\"Sign in\\\" heading visible\" }"
    "  ] }", port);
  file = parse_json (json);
  spec = sight_export_test (file, "shop.sightline.json", SIGHT_EXPORT_PLAYWRIGHT, &error);
  g_assert_no_error (error);

  dir = g_dir_make_tmp ("sight-playwright-XXXXXX", &error);
  g_assert_no_error (error);
  spec_path = g_build_filename (dir, "shop.spec.ts", NULL);
  config_path = g_build_filename (dir, "playwright.config.js", NULL);
  modules = g_build_filename (dir, "node_modules", "@playwright", NULL);
  link = g_build_filename (modules, "test", NULL);
  g_assert_true (g_file_set_contents (spec_path, spec, -1, NULL));
  g_assert_cmpint (g_mkdir_with_parents (modules, 0700), ==, 0);
  g_assert_cmpint (symlink (pw_dir, link), ==, 0);
  {
    g_autofree char *config = g_strdup_printf (
      "module.exports = { testDir: '.', workers: 1, reporter: 'line', retries: 0,\n"
      "  use: { headless: true, launchOptions: { executablePath: '%s',\n"
      "         args: ['--no-sandbox', '--disable-gpu'] } } };\n", chromium);

    g_assert_true (g_file_set_contents (config_path, config, -1, NULL));
  }

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                        G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_set_cwd (launcher, dir);
  g_subprocess_launcher_setenv (launcher, "SIGHTLINE_SECRET_MEMBER_PASSWORD", "correct horse", TRUE);
  g_subprocess_launcher_setenv (launcher, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1", TRUE);
  g_subprocess_launcher_unsetenv (launcher, "CI");
  {
    g_autofree char *cli = g_build_filename (pw_dir, "cli.js", NULL);

    proc = g_subprocess_launcher_spawn (launcher, &error, "node", cli, "test", "-c",
                                        config_path, NULL);
  }
  g_assert_no_error (error);
  g_subprocess_communicate_utf8_async (proc, NULL, NULL, communicate_cb, &result);
  timeout_id = g_timeout_add_seconds (90, timeout_cb, &expired);
  while (result == NULL && !expired)
    g_main_context_iteration (NULL, TRUE);
  if (expired)
    {
      g_subprocess_force_exit (proc);
      while (result == NULL)
        g_main_context_iteration (NULL, TRUE);
      g_error ("Playwright did not finish within 90 s");
    }
  g_source_remove (timeout_id);
  g_subprocess_communicate_utf8_finish (proc, result, &out, &err, &error);
  g_assert_no_error (error);
  if (!g_subprocess_get_successful (proc))
    g_error ("the exported test failed under Playwright:\n%s\n%s\n--- spec ---\n%s", out, err,
             spec);
  g_test_message ("%s", out);
  g_assert_nonnull (strstr (out, "1 passed"));

  g_remove (link);
  g_rmdir (modules);
  {
    g_autofree char *nm = g_build_filename (dir, "node_modules", NULL);
    g_autofree char *results = g_build_filename (dir, "test-results", NULL);
    g_autofree char *last_run = g_build_filename (results, ".last-run.json", NULL);

    g_rmdir (nm);
    g_remove (last_run);
    g_rmdir (results);
  }
  g_remove (spec_path);
  g_remove (config_path);
  g_rmdir (dir);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/export/golden", test_golden);
  g_test_add_func ("/export/escaping", test_escaping);
  g_test_add_func ("/export/bad-files", test_bad_files);
  g_test_add_func ("/export/control-roles-match-resolver", test_control_roles_match_resolver);
  g_test_add_func ("/export/cli", test_cli);
  g_test_add_func ("/export/runs-under-playwright", test_runs_under_playwright);
  return g_test_run ();
}
