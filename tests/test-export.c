/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <gio/gio.h>
#include <libsoup/soup.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "cli-test-common.h"
#include "export-site-common.h"
#include "test-files.h"
#include "sight-demo-site.h"
#include "sight-direct-step.h"
#include "sight-error.h"
#include "sight-export.h"
#include "sight-trace-cache.h"

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
  g_autofree char *playwright = sight_export_test_path (path, SIGHT_EXPORT_PLAYWRIGHT, NULL, &error);
  g_autofree char *e2e = NULL;

  g_assert_no_error (error);
  assert_same_text (playwright, "signin.playwright.ts");
  e2e = sight_export_test_path (path, SIGHT_EXPORT_E2E, NULL, &error);
  g_assert_no_error (error);
  assert_same_text (e2e, "signin.e2e.ts");

  /* what the golden files must say, so that regenerating them blindly fails */
  g_assert_nonnull (strstr (playwright, "page.getByRole('button', { name: 'Add to cart', exact: true }).nth(1).click()"));
  g_assert_nonnull (strstr (playwright, "getByRole('combobox', { name: 'Plan' }).selectOption('Pro')"));
  /* a model step with no trace stops the test as fixme, never passes empty */
  g_assert_nonnull (strstr (playwright, "  test.fixme(true, 'act: Sign in');\n"));
  g_assert_nonnull (strstr (playwright, "  test.fixme(true, 'assert: the dashboard shows a trial badge');\n"));
  g_assert_nonnull (strstr (playwright, "  test.fixme(true, 'waitFor: the upload progress reports completion');\n"));
  g_assert_nonnull (strstr (playwright, "  test.fixme(true, 'extract: the workspace name and plan');\n"));
  /* text expectations read what the page shows, as Sightline's do */
  g_assert_nonnull (strstr (playwright, "not.toContainText('Invalid password', { useInnerText: true })"));
  g_assert_null (strstr (playwright, "test.step("));
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
  g_autofree char *out = sight_export_test (file, "x.sightline.json", SIGHT_EXPORT_E2E, NULL, NULL, &error);

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
                                            SIGHT_EXPORT_PLAYWRIGHT, NULL, NULL, &error);
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

/* A project whose trace cache holds the trace of an act "sign in as the
 * member" that typed the email, the {password} param and clicked Sign in, as
 * the engine describes those nodes on the demo site's /login; and a test file
 * with that act, an act without a trace and an assert. Returns the test
 * file's path. */
static char *
write_cached_project (const char *dir)
{
  g_autofree char *project = g_build_filename (dir, "sightline.json", NULL);
  g_autofree char *traces = g_build_filename (dir, "traces", NULL);
  g_autofree char *path = g_build_filename (dir, "cached.sightline.json", NULL);
  g_autoptr(SightTraceCache) cache = sight_trace_cache_new (traces);
  g_autoptr(JsonNode) params = parse_json ("{ \"password\": { \"secret\": \"member.password\" } }");
  g_autoptr(SightTrace) trace = sight_trace_new ("default", "sign in as the member", params,
                                                 "http://127.0.0.1:8765/login", 1280, 720);
  static const char *actions[][3] = {
    { "fill", "{ \"ref\": \"e3\", \"value\": \"member@example.test\" }",
      "{ \"role\": \"textbox\", \"name\": \"Email\", \"nth\": 0, \"tag\": \"input\" }" },
    { "fill", "{ \"ref\": \"e4\", \"param\": \"password\" }",
      "{ \"role\": \"textbox\", \"name\": \"Password\", \"nth\": 0, \"tag\": \"input\" }" },
    { "click", "{ \"ref\": \"e5\" }",
      "{ \"role\": \"button\", \"name\": \"Sign in\", \"nth\": 0, \"tag\": \"button\" }" },
  };
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (actions); i++)
    {
      g_autoptr(JsonNode) args = parse_json (actions[i][1]);
      g_autoptr(JsonNode) descriptor = parse_json (actions[i][2]);

      g_assert_true (sight_trace_add_action (trace, actions[i][0], args, descriptor, NULL, &error));
    }
  g_assert_true (sight_trace_cache_save (cache, trace, &error));
  g_assert_true (g_file_set_contents (project, "{ \"traceCache\": \"traces\" }", -1, NULL));
  g_assert_true (g_file_set_contents (path,
    "{ \"name\": \"A member signs in through a cached act\", \"url\": \"/login\",\n"
    "  \"steps\": [\n"
    "    { \"act\": \"sign in as the member\",\n"
    "      \"params\": { \"password\": { \"secret\": \"member.password\" } } },\n"
    "    { \"do\": \"expect text \\\"Northwind Logistics\\\"\" }\n"
    "  ] }\n", -1, NULL));
  return g_steal_pointer (&path);
}

/* An act with a trace exports as the trace's actions, by the same locators as
 * direct steps; every model step without one becomes test.fixme, named in
 * the list the command prints. */
static void
test_cached_act (void)
{
  g_autofree char *dir = g_dir_make_tmp ("sight-export-cache-XXXXXX", NULL);
  g_autofree char *path = write_cached_project (dir);
  g_autofree char *text = NULL;
  g_autofree char *out = NULL;
  g_auto(GStrv) fixme = NULL;
  g_autoptr(GError) error = NULL;

  /* a second act, without a trace, and an assert */
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  {
    g_autofree char *more = g_strjoin (NULL, text, NULL);
    char *end = strstr (more, "  ] }");

    g_assert_nonnull (end);
    *end = '\0';
    g_clear_pointer (&text, g_free);
    text = g_strconcat (more,
                        "  , { \"act\": \"open the cart\" },\n"
                        "    { \"assert\": \"the cart is empty\", \"vision\": \"only\" }\n"
                        "  ] }\n", NULL);
  }
  g_assert_true (g_file_set_contents (path, text, -1, NULL));

  out = sight_export_test_path (path, SIGHT_EXPORT_PLAYWRIGHT, &fixme, &error);
  g_assert_no_error (error);
  g_test_message ("%s", out);
  g_assert_nonnull (strstr (out,
    "  // act: sign in as the member\n"
    "  // The 3 actions of its trace in Sightline's cache (recorded from "
    "http://127.0.0.1:8765/login),\n"
    "  // as Sightline replays them with no model.\n"
    "  await page.getByLabel('Email', { exact: true }).fill('member@example.test');\n"
    "  await page.getByLabel('Password', { exact: true })"
    ".fill(process.env.SIGHTLINE_SECRET_MEMBER_PASSWORD ?? '');\n"
    "  await page.getByRole('button', { name: 'Sign in', exact: true }).click();\n"));
  g_assert_nonnull (strstr (out, "  test.fixme(true, 'act: open the cart');\n"));
  g_assert_nonnull (strstr (out, "  test.fixme(true, 'assert: the cart is empty');\n"));
  g_assert_null (strstr (out, "fixme(true, 'act: sign in"));

  g_assert_cmpuint (g_strv_length (fixme), ==, 2);
  g_assert_cmpstr (fixme[0], ==, "step 3 (act \"open the cart\"): no trace of it in the project's "
                                 "trace cache");
  g_assert_true (g_str_has_prefix (fixme[1], "step 4 (assert \"the cart is empty\"): it needs a "
                                             "model"));

  /* the e2e export keeps model steps as agent calls: the fixture has a model */
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&fixme, g_strfreev);
  out = sight_export_test_path (path, SIGHT_EXPORT_E2E, &fixme, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (out, "await agent.act('sign in as the member', { params: { 'password': "
                                 "credentials.user('member').password } });"));
  g_assert_null (strstr (out, "test.fixme"));
  g_assert_cmpuint (g_strv_length (fixme), ==, 0);

  /* the command says which steps became fixme */
  if (g_getenv ("SIGHTLINE_BIN") != NULL)
    {
      g_auto(CliRun) run = { 0 };

      cli_run (&run, NULL, "export", path, "--to", "playwright", NULL);
      g_assert_cmpint (run.status, ==, 0);
      g_assert_nonnull (strstr (run.out, "getByRole('button', { name: 'Sign in', exact: true })"));
      g_assert_nonnull (strstr (run.err, "test.fixme: step 3 (act \"open the cart\"): no trace"));
      g_assert_nonnull (strstr (run.err, "test.fixme: step 4 (assert \"the cart is empty\")"));
      g_assert_null (strstr (run.err, "step 1"));
    }

  /* every kind of recorded action has its Playwright call; one that has none
   * leaves the step fixme, with nothing of it written */
  {
    g_autofree char *traces = g_build_filename (dir, "traces", NULL);
    g_autofree char *more = g_build_filename (dir, "more.sightline.json", NULL);
    g_autoptr(SightTraceCache) cache = sight_trace_cache_new (traces);
    static const char *actions[][3] = {
      { "select", "{ \"option\": \"Pro\" }", "{ \"role\": \"combobox\", \"name\": \"Plan\" }" },
      { "check", "{ \"checked\": false }",
        "{ \"role\": \"checkbox\", \"name\": \"Remember me\", \"nth\": 1 }" },
      { "dblclick", "{}", "{ \"role\": \"generic\", \"name\": \"\", \"testId\": \"card-7\" }" },
      { "press", "{ \"key\": \"Control+A\" }", NULL },
      { "scroll", "{ \"direction\": \"bottom\" }", NULL },
      { "tap_at", "{ \"x\": 40, \"y\": 12.5 }",
        "{ \"point\": { \"x\": 40, \"y\": 12.5 }, \"viewport\": { \"width\": 1280, \"height\": 720 } }" },
      { "tap_at", "{ \"x\": 40, \"y\": 12 }",
        "{ \"role\": \"link\", \"name\": \"Pricing\", \"box\": { \"x\": 30, \"y\": 5, \"width\": 60, \"height\": 20 }, \"offset\": { \"x\": 10, \"y\": 7 } }" },
      { "navigate", "{ \"url\": \"http://127.0.0.1:8765/pricing\" }", NULL },
      { "wait", "{ \"ms\": 250 }", NULL },
      { "back", "{}", NULL },
    };
    g_autoptr(SightTrace) trace = sight_trace_new ("default", "tidy the form", NULL,
                                                   "http://127.0.0.1:8765/login", 1280, 720);
    g_autoptr(SightTrace) odd = sight_trace_new ("default", "beam me up", NULL,
                                                 "http://127.0.0.1:8765/login", 1280, 720);

    for (guint i = 0; i < G_N_ELEMENTS (actions); i++)
      {
        g_autoptr(JsonNode) args = parse_json (actions[i][1]);
        g_autoptr(JsonNode) descriptor = actions[i][2] != NULL ? parse_json (actions[i][2]) : NULL;

        g_assert_true (sight_trace_add_action (trace, actions[i][0], args, descriptor, NULL,
                                               &error));
      }
    {
      g_autoptr(JsonNode) go = parse_json ("{ \"role\": \"button\", \"name\": \"Go\" }");

      g_assert_true (sight_trace_add_action (odd, "click", NULL, go, NULL, &error));
    }
    g_assert_true (sight_trace_add_action (odd, "teleport", NULL, NULL, NULL, &error));
    g_assert_true (sight_trace_cache_save (cache, trace, &error));
    g_assert_true (sight_trace_cache_save (cache, odd, &error));
    g_assert_true (g_file_set_contents (more,
      "{ \"name\": \"more\", \"url\": \"http://127.0.0.1:8765/login\", \"steps\": ["
      "  { \"act\": \"tidy the form\" }, { \"act\": \"beam me up\" } ] }", -1, NULL));
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&fixme, g_strfreev);
    out = sight_export_test_path (more, SIGHT_EXPORT_PLAYWRIGHT, &fixme, &error);
    g_assert_no_error (error);
    g_assert_nonnull (strstr (out,
      "  await page.getByRole('combobox', { name: 'Plan', exact: true }).selectOption('Pro');\n"
      "  await page.getByRole('checkbox', { name: 'Remember me', exact: true }).nth(1).uncheck();\n"
      "  await page.getByTestId('card-7').dblclick();\n"
      "  await page.keyboard.press('Control+A');\n"
      "  await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));\n"
      "  // a point on a 1280x720 viewport\n"
      "  await page.mouse.click(40, 12.5);\n"
      "  await page.getByRole('link', { name: 'Pricing', exact: true }).click({ position: { x: 10, y: 7 } });\n"
      "  await page.goto('http://127.0.0.1:8765/pricing');\n"
      "  await page.waitForTimeout(250);\n"
      "  await page.goBack();\n"));
    g_assert_null (strstr (out, "name: 'Go'"));
    g_assert_nonnull (strstr (out, "  test.fixme(true, 'act: beam me up');\n"));
    g_assert_cmpuint (g_strv_length (fixme), ==, 1);
    g_assert_nonnull (strstr (fixme[0], "step 2 (act \"beam me up\"): its trace holds an action "
                                        "Sightline does not know (\"teleport\")"));
  }

  /* the same act recorded from two pages: export cannot tell which applies */
  {
    g_autofree char *traces = g_build_filename (dir, "traces", NULL);
    g_autoptr(SightTraceCache) cache = sight_trace_cache_new (traces);
    g_autoptr(JsonNode) params = parse_json ("{ \"password\": { \"secret\": \"x\" } }");
    g_autoptr(SightTrace) other = sight_trace_new ("default", "sign in as the member", params,
                                                   "http://127.0.0.1:8765/signup", 1280, 720);

    g_assert_true (sight_trace_cache_save (cache, other, &error));
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&fixme, g_strfreev);
    out = sight_export_test_path (path, SIGHT_EXPORT_PLAYWRIGHT, &fixme, &error);
    g_assert_no_error (error);
    g_assert_nonnull (strstr (out, "  test.fixme(true, 'act: sign in as the member');\n"));
    g_assert_nonnull (strstr (fixme[0], "2 traces of it"));
  }
  test_remove_tree (dir);
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
      g_autofree char *out = sight_export_test (file, NULL, SIGHT_EXPORT_PLAYWRIGHT, NULL, NULL, &error);

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

/* Running the exported tests under @playwright/test on Chromium. */

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
export_into (const char *dir,
             const char *source,
             const char *spec_name)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *spec = sight_export_test_path (source, SIGHT_EXPORT_PLAYWRIGHT, NULL, &error);
  g_autofree char *spec_path = g_build_filename (dir, spec_name, NULL);

  g_assert_no_error (error);
  g_assert_true (g_file_set_contents (spec_path, spec, -1, NULL));
}

/* The one test of the spec file @file in Playwright's JSON report. */
static JsonObject *
report_test (JsonObject *report,
             const char *file)
{
  JsonArray *suites = json_object_get_array_member (report, "suites");

  for (guint i = 0; i < json_array_get_length (suites); i++)
    {
      JsonObject *suite = json_array_get_object_element (suites, i);
      JsonArray *specs;

      if (g_strcmp0 (json_object_get_string_member_with_default (suite, "file", NULL), file) != 0)
        continue;
      specs = json_object_get_array_member (suite, "specs");
      g_assert_cmpuint (json_array_get_length (specs), ==, 1);
      return json_array_get_object_element (
        json_object_get_array_member (json_array_get_object_element (specs, 0), "tests"), 0);
    }
  g_error ("Playwright's report has no %s", file);
  return NULL;
}

/* "passed", "failed", "skipped", … of the test's one run. */
static const char *
report_result (JsonObject *test)
{
  JsonArray *results = json_object_get_array_member (test, "results");

  g_assert_cmpuint (json_array_get_length (results), ==, 1);
  return json_object_get_string_member (json_array_get_object_element (results, 0), "status");
}

static gboolean
report_has_annotation (JsonObject *test,
                       const char *type,
                       const char *description)
{
  JsonArray *annotations = json_object_get_array_member (test, "annotations");

  for (guint i = 0; annotations != NULL && i < json_array_get_length (annotations); i++)
    {
      JsonObject *a = json_array_get_object_element (annotations, i);

      if (g_strcmp0 (json_object_get_string_member_with_default (a, "type", NULL), type) == 0 &&
          g_strcmp0 (json_object_get_string_member_with_default (a, "description", NULL),
                     description) == 0)
        return TRUE;
    }
  return FALSE;
}

static const char shop_json[] =
  "{ \"name\": \"signs in and shops\", \"url\": \"http://127.0.0.1:%u/login\", \"timeout\": 60000,"
  "  \"steps\": ["
  "    { \"do\": \"type \\\"member@example.test\\\" into Email\" },"
  "    { \"do\": \"type {password} into the Password field\","
  "      \"params\": { \"password\": { \"secret\": \"shop.password\" } } },"
  "    { \"do\": \"check Remember me\" },"
  "    { \"do\": \"expect the Remember me checkbox is checked\" },"
  "    { \"do\": \"select \\\"Pro\\\" from the Plan dropdown\" },"
  "    { \"do\": \"expect Email has value \\\"member@example.test\\\"\" },"
  "    { \"do\": \"click Sign in\" },"
  "    { \"do\": \"expect URL contains /dashboard\" },"
  "    { \"do\": \"wait for text \\\"Welcome\\\"\" },"
  "    { \"do\": \"expect text \\\"Plan: Pro\\\"\" },"
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
  "  ] }";

/* Text in a hidden element is not on the page for Sightline (it reads what
 * the page shows), so the export must not find it either: the demo site's
 * sign-up page holds its "ready" notice hidden until the form is sent. */
static const char hidden_text_json[] =
  "{ \"name\": \"hidden text is not on the page\", \"url\": \"/signup\","
  "  \"steps\": ["
  "    { \"do\": \"expect no text \\\"Your workspace is ready\\\"\" },"
  "    { \"do\": \"expect text \\\"Start your free trial\\\"\" }"
  "  ] }";

/* The examples (sign-in, sign-up, pricing, and the one with model steps), a
 * cached act and every kind of direct step, exported and run by the pinned
 * @playwright/test (tests/playwright, installed by build-aux/install-deps.sh)
 * on Debian's Chromium against the demo site: the verdicts are Playwright's,
 * read from its JSON reporter. */
static void
test_runs_under_playwright (void)
{
  g_autofree char *pw_dir = g_test_build_filename (G_TEST_DIST, "playwright", "node_modules",
                                                   "@playwright", "test", NULL);
  g_autofree char *modules = g_test_build_filename (G_TEST_DIST, "playwright", "node_modules",
                                                    NULL);
  g_autofree char *cli = g_build_filename (pw_dir, "cli.js", NULL);
  g_autofree char *chromium = g_find_program_in_path ("chromium");
  g_autofree char *node = g_find_program_in_path ("node");
  g_autoptr(SightDemoSite) site = sight_demo_site_new ();
  g_autoptr(SoupServer) shop = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GSList) uris = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *cached_dir = NULL;
  g_autofree char *cached = NULL;
  g_autofree char *config_path = NULL;
  g_autofree char *results_path = NULL;
  g_autofree char *link = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *results = NULL;
  g_autoptr(JsonNode) report = NULL;
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  gboolean expired = FALSE;
  gint64 started;
  guint timeout_id;
  static const struct { const char *example; const char *spec; } examples[] = {
    { "sign-in.sightline.json", "sign-in.spec.ts" },
    { "signup.sightline.json", "signup.spec.ts" },
    { "pricing.sightline.json", "pricing.spec.ts" },
    { "dashboard-with-model.sightline.json", "dashboard-with-model.spec.ts" },
  };

  /* CI installs both (build-aux/install-deps.sh): a missing one is a failure */
  if (!g_file_test (cli, G_FILE_TEST_EXISTS) || node == NULL)
    g_error ("@playwright/test is not installed in %s: build-aux/install-deps.sh installs it "
             "(npm ci)", modules);
  if (chromium == NULL)
    g_error ("no chromium: build-aux/install-deps.sh installs it (build-aux/debian-packages.txt)");

  g_assert_true (sight_demo_site_start (site, 0, &error));
  g_assert_no_error (error);
  shop = soup_server_new (NULL, NULL);
  soup_server_add_handler (shop, NULL, export_site_serve_cb, NULL, NULL);
  soup_server_listen_local (shop, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error);
  g_assert_no_error (error);
  uris = soup_server_get_uris (shop);

  dir = g_dir_make_tmp ("sight-playwright-XXXXXX", &error);
  g_assert_no_error (error);
  for (guint i = 0; i < G_N_ELEMENTS (examples); i++)
    {
      g_autofree char *source = g_test_build_filename (G_TEST_DIST, "..", "examples",
                                                       examples[i].example, NULL);

      export_into (dir, source, examples[i].spec);
    }
  cached_dir = g_dir_make_tmp ("sight-playwright-cache-XXXXXX", &error);
  g_assert_no_error (error);
  cached = write_cached_project (cached_dir);
  export_into (dir, cached, "cached-act.spec.ts");
  {
    g_autofree char *json = g_strdup_printf (shop_json, g_uri_get_port (uris->data));
    g_autoptr(JsonNode) file = parse_json (json);
    g_autofree char *spec = sight_export_test (file, "shop.sightline.json",
                                               SIGHT_EXPORT_PLAYWRIGHT, NULL, NULL, &error);
    g_autofree char *spec_path = g_build_filename (dir, "shop.spec.ts", NULL);

    g_assert_no_error (error);
    g_assert_true (g_file_set_contents (spec_path, spec, -1, NULL));
  }
  g_slist_free_full (g_steal_pointer (&uris), (GDestroyNotify) g_uri_unref);
  {
    g_autoptr(JsonNode) file = parse_json (hidden_text_json);
    g_autofree char *spec = sight_export_test (file, "hidden-text.sightline.json",
                                               SIGHT_EXPORT_PLAYWRIGHT, NULL, NULL, &error);
    g_autofree char *spec_path = g_build_filename (dir, "hidden-text.spec.ts", NULL);

    g_assert_no_error (error);
    g_assert_true (g_file_set_contents (spec_path, spec, -1, NULL));
  }

  /* the examples' relative addresses resolve against the demo site, as
   * `sightline run --base-url` does */
  config_path = g_build_filename (dir, "playwright.config.js", NULL);
  results_path = g_build_filename (dir, "results.json", NULL);
  {
    g_autofree char *config = g_strdup_printf (
      "module.exports = { testDir: '.', workers: 1, retries: 0, timeout: 60000,\n"
      "  reporter: [['json', { outputFile: '%s' }]],\n"
      "  use: { baseURL: '%s', headless: true,\n"
      "         launchOptions: { executablePath: '%s', args: ['--no-sandbox', '--disable-gpu'] } } };\n",
      results_path, sight_demo_site_get_url (site), chromium);

    g_assert_true (g_file_set_contents (config_path, config, -1, NULL));
  }
  link = g_build_filename (dir, "node_modules", NULL);
  g_assert_cmpint (symlink (modules, link), ==, 0);

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                        G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_set_cwd (launcher, dir);
  g_subprocess_launcher_setenv (launcher, "SIGHTLINE_SECRET_MEMBER_PASSWORD",
                                SIGHT_DEMO_SITE_PASSWORD, TRUE);
  g_subprocess_launcher_setenv (launcher, "SIGHTLINE_SECRET_SHOP_PASSWORD", "correct horse", TRUE);
  g_subprocess_launcher_setenv (launcher, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1", TRUE);
  g_subprocess_launcher_unsetenv (launcher, "CI");
  started = g_get_monotonic_time ();
  proc = g_subprocess_launcher_spawn (launcher, &error, node, cli, "test", "-c", config_path,
                                      NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8_async (proc, NULL, NULL, communicate_cb, &result);
  timeout_id = g_timeout_add_seconds (150, timeout_cb, &expired);
  while (result == NULL && !expired)
    g_main_context_iteration (NULL, TRUE);
  if (expired)
    {
      g_subprocess_force_exit (proc);
      while (result == NULL)
        g_main_context_iteration (NULL, TRUE);
      g_error ("Playwright did not finish within 150 s");
    }
  g_source_remove (timeout_id);
  g_subprocess_communicate_utf8_finish (proc, result, &out, &err, &error);
  g_assert_no_error (error);
  g_test_message ("Playwright ran %u specs in %.1f s", (guint) G_N_ELEMENTS (examples) + 3,
                  (g_get_monotonic_time () - started) / 1e6);
  if (!g_file_get_contents (results_path, &results, NULL, NULL))
    g_error ("Playwright wrote no report:\n%s\n%s", out, err);
  report = parse_json (results);
  if (!g_subprocess_get_successful (proc))
    g_error ("an exported test failed under Playwright:\n%s\n%s\n%s", out, err, results);

  /* the examples without model steps and the cached act pass */
  for (guint i = 0; i < 3; i++)
    {
      JsonObject *test = report_test (json_node_get_object (report), examples[i].spec);

      g_assert_cmpstr (json_object_get_string_member (test, "status"), ==, "expected");
      g_assert_cmpstr (report_result (test), ==, "passed");
    }
  {
    JsonObject *test = report_test (json_node_get_object (report), "cached-act.spec.ts");

    g_assert_cmpstr (report_result (test), ==, "passed");
    test = report_test (json_node_get_object (report), "shop.spec.ts");
    g_assert_cmpstr (report_result (test), ==, "passed");
    test = report_test (json_node_get_object (report), "hidden-text.spec.ts");
    g_assert_cmpstr (report_result (test), ==, "passed");
  }
  /* the one with model steps is reported as fixme, not as passed */
  {
    JsonObject *test = report_test (json_node_get_object (report), examples[3].spec);

    g_assert_cmpstr (report_result (test), ==, "skipped");
    g_assert_true (report_has_annotation (
      test, "fixme", "assert: the dashboard shows a trial badge next to the workspace name"));
  }

  test_remove_tree (dir);
  test_remove_tree (cached_dir);
  /* dir/node_modules was a link: removing dir leaves what it pointed to */
  g_assert_true (g_file_test (cli, G_FILE_TEST_EXISTS));
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
  g_test_add_func ("/export/cached-act", test_cached_act);
  g_test_add_func ("/export/runs-under-playwright", test_runs_under_playwright);
  return g_test_run ();
}
