/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-report"

#include "config.h"

#include <gdk-pixbuf/gdk-pixbuf.h>
#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <string.h>
#include <webkit/webkit.h>

#include "sight-error.h"
#include "sight-report.h"
#include "sight-secrets.h"
#include "sight-store-sync.h"
#include "sight-store.h"

#define CANARY "canary-R3p0rt-88d1c2"

/* Every payload reports itself through the "xss" message handler if it ever
 * runs, so the counter sees any execution. */
#define RUN "webkit.messageHandlers.xss.postMessage(1)"
static const char * const xss_corpus[] = {
  "<img src=x onerror=\"" RUN "\">",
  "\"><script>" RUN "</script>",
  "</script><script>" RUN "</script>",
  "javascript:" RUN,
  "JaVaScRiPt:" RUN,
  "'><svg onload=" RUN ">",
  "</style><img src=x onerror=" RUN ">",
  "line\u2028separator<iframe srcdoc=\"<script>" RUN "</script>\">",
  "nul\001byte</title><script>" RUN "</script>",
  "<a href=\"javascript:" RUN "\">click</a>",
  "data:text/html,<script>" RUN "</script>",
};

typedef struct {
  char       *dir;
  SightStore *store;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;

  f->dir = g_dir_make_tmp ("sight-report-XXXXXX", NULL);
  path = g_build_filename (f->dir, "sightline.db", NULL);
  f->store = sight_store_new (path, &error);
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  g_autoptr(GDir) dir = g_dir_open (f->dir, 0, NULL);
  const char *name;

  g_clear_object (&f->store);
  while (dir && (name = g_dir_read_name (dir)))
    {
      g_autofree char *child = g_build_filename (f->dir, name, NULL);
      g_unlink (child);
    }
  g_rmdir (f->dir);
  g_free (f->dir);
}

static GBytes *
make_jpeg (int      width,
           int      height,
           guint32  color)
{
  g_autoptr(GdkPixbuf) pixbuf = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, width, height);
  g_autofree char *buffer = NULL;
  gsize len;

  gdk_pixbuf_fill (pixbuf, color);
  g_assert_true (gdk_pixbuf_save_to_buffer (pixbuf, &buffer, &len, "jpeg", NULL,
                                            "quality", "70", NULL));
  return g_bytes_new_take (g_steal_pointer (&buffer), len);
}

/* A smoke test of 4 steps: load passes, a click passes, an assertion fails,
 * and a check nobody asked for is skipped. */
static char *
write_smoke_run (SightStore *store,
                 const char *url,
                 gboolean    failing)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) shot = make_jpeg (320, 200, 0x3366ccff);
  gint64 t0 = 1700000000000000;
  SightRunRecord run = { .kind = (char *) "smoke", .url = (char *) url, .started_at = t0 };
  g_autofree char *id = sight_store_open_run (store, &run, &error);
  struct { const char *kind, *label, *instruction; SightRunVerdict verdict; const char *why; } steps[] = {
    { "load", "load the page", url, SIGHT_RUN_VERDICT_PASS, NULL },
    { "act", "act", "click Sign in", SIGHT_RUN_VERDICT_PASS, "Clicked the Sign in button." },
    { "assert", "assert 1 condition", "expect text \"Dashboard overview\"",
      failing ? SIGHT_RUN_VERDICT_FAIL : SIGHT_RUN_VERDICT_PASS,
      failing ? "Expected text \"Dashboard overview\" is not on the page" : NULL },
    { "assert", "expectUrl", "the address contains /dashboard", SIGHT_RUN_VERDICT_SKIPPED, NULL },
  };

  g_assert_no_error (error);
  for (guint i = 0; i < G_N_ELEMENTS (steps); i++)
    {
      SightStepRecord st = { .run_id = id, .index = i, .kind = (char *) steps[i].kind,
                             .label = (char *) steps[i].label,
                             .instruction = (char *) steps[i].instruction,
                             .budget_json = (char *) "{\"maxModelCalls\":25,\"maxSteps\":25,\"timeoutMs\":120000}",
                             .started_at = t0 + i * 1500000 };
      SightObservationRecord before = { .run_id = id, .step_index = i, .phase = (char *) "before",
                                        .url = (char *) url, .title = (char *) "Sign in",
                                        .tree_text = (char *) "document \"Sign in\"\n  button \"Sign in\" [e4]",
                                        .screenshot = shot, .screenshot_mime = (char *) "image/jpeg",
                                        .width = 320, .height = 200, .scale = 0.25 };
      SightModelCallRecord call = { .run_id = id, .step_index = i, .provider = (char *) "openai",
                                    .model = (char *) "gpt", .input_tokens = 1000,
                                    .output_tokens = 50, .cost_micros = 400, .latency_ms = 800 };

      g_assert_true (sight_store_add_step (store, &st, &error));
      g_assert_true (sight_store_add_observation (store, &before, &error));
      if (i == 1)
        g_assert_true (sight_store_add_model_call (store, &call, &error));
      st.verdict = steps[i].verdict;
      st.explanation = (char *) steps[i].why;
      st.code = st.verdict == SIGHT_RUN_VERDICT_FAIL ? (char *) "ASSERTION_FAILED" : NULL;
      st.model_calls = i == 1 ? 1 : 0;
      st.actions = i == 1 ? 1 : 0;
      st.has_target = i == 1;
      st.target_x = 400;
      st.target_y = 300;
      st.target_width = 160;
      st.target_height = 40;
      st.finished_at = t0 + i * 1500000 + 1000000;
      g_assert_true (sight_store_finish_step (store, &st, &error));
      g_assert_no_error (error);
    }
  run.id = id;
  run.verdict = failing ? SIGHT_RUN_VERDICT_FAIL : SIGHT_RUN_VERDICT_PASS;
  run.final_url = (char *) url;
  run.finished_at = t0 + 7000000;
  g_assert_true (sight_store_finish_run (store, &run, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&id);
}

static void
test_summary_wording (Fixture       *f,
                      gconstpointer  data)
{
  const char *url = "https://webagent-test-web.pages.dev/app/login";
  g_autofree char *fail_id = write_smoke_run (f->store, url, TRUE);
  g_autofree char *pass_id = write_smoke_run (f->store, url, FALSE);
  g_autoptr(SightRunData) fail = sight_store_load_run (f->store, fail_id, NULL);
  g_autoptr(SightRunData) pass = sight_store_load_run (f->store, pass_id, NULL);
  g_autofree char *fail_summary = sight_report_summary (fail);
  g_autofree char *pass_summary = sight_report_summary (pass);
  g_autofree char *fail_text = sight_report_text (fail);

  g_assert_cmpstr (fail_summary, ==,
                   "Smoke test of https://webagent-test-web.pages.dev/app/login FAILED in 7 s: "
                   "2 of 4 steps passed. Step 3 (assert 1 condition) failed: Expected text "
                   "\"Dashboard overview\" is not on the page. No console errors or failed "
                   "network calls.");
  /* The skipped check is not counted in the first number. */
  g_assert_cmpstr (pass_summary, ==,
                   "Smoke test of https://webagent-test-web.pages.dev/app/login PASSED in 7 s: "
                   "3 of 4 steps passed. No console errors or failed network calls.");
  g_assert_true (g_str_has_prefix (fail_text, fail_summary));
  g_assert_nonnull (strstr (fail_text, "\nFailed steps:\n- Step 3 (assert 1 condition): Expected "
                                       "text \"Dashboard overview\" is not on the page\n"));

  {
    SightLogRecord console = { .run_id = fail_id, .step_index = 1, .kind = (char *) "console",
                               .level = (char *) "error", .text = (char *) "boom" };
    SightLogRecord failed = { .run_id = fail_id, .step_index = -1,
                              .kind = (char *) "request_failed",
                              .url = (char *) "https://x.test/a.png", .status = 404 };
    g_autoptr(SightRunData) again = NULL;
    g_autofree char *summary = NULL;

    g_assert_true (sight_store_add_log (f->store, &console, NULL));
    g_assert_true (sight_store_add_log (f->store, &failed, NULL));
    g_assert_true (sight_store_add_log (f->store, &failed, NULL));
    again = sight_store_load_run (f->store, fail_id, NULL);
    summary = sight_report_summary (again);
    g_assert_true (g_str_has_suffix (summary, " 1 console error and 2 failed network calls."));
  }
}

/* A run whose late write failed (the disk filled) after one of its steps
 * failed: the text says the run could not be stored, as well as which step
 * failed. The step's failure alone used to stand in for the run's. */
static void
test_unstored_with_failed_step (Fixture       *f,
                                gconstpointer  data)
{
  const char *url = "https://webagent-test-web.pages.dev/app/login";
  g_autofree char *id = write_smoke_run (f->store, url, TRUE);
  g_autoptr(SightRunData) d = sight_store_load_run (f->store, id, NULL);
  g_autofree char *summary = NULL;
  g_autofree char *text = NULL;

  /* As the store reads back a run with a failed write (sight_store_finish_run ()). */
  d->run->verdict = SIGHT_RUN_VERDICT_ERROR;
  g_free (d->run->code);
  d->run->code = g_strdup ("ENVIRONMENT_UNAVAILABLE");
  g_free (d->run->explanation);
  d->run->explanation = g_strdup ("The run could not be stored: database or disk is full");
  g_assert_true (sight_run_record_is_unstored (d->run));
  summary = sight_report_summary (d);
  text = sight_report_text (d);
  g_assert_cmpstr (summary, ==,
                   "Smoke test of https://webagent-test-web.pages.dev/app/login could not run "
                   "(ERROR) in 7 s: 2 of 4 steps passed. The run could not be stored: database or disk is "
                   "full. Step 3 (assert 1 condition) failed: Expected text \"Dashboard overview\" "
                   "is not on the page. No console errors or failed network calls.");
  g_assert_true (g_str_has_prefix (text, summary));
  g_assert_nonnull (strstr (text, "\nFailed steps:\n- Step 3 (assert 1 condition)"));
}

static void
test_task_and_running (Fixture       *f,
                       gconstpointer  data)
{
  SightRunRecord run = { .kind = (char *) "task",
                         .name = (char *) "Open the Pricing page and tell me the page heading",
                         .started_at = 1700000000000000 };
  g_autofree char *id = sight_store_open_run (f->store, &run, NULL);
  g_autoptr(SightRunData) d = sight_store_load_run (f->store, id, NULL);
  g_autofree char *running = sight_report_summary (d);
  g_autoptr(JsonNode) json = sight_report_to_json (d);
  g_autofree char *task = NULL;

  g_assert_nonnull (strstr (running, "is still running: call get_report with the id run_"));
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (json), "verdict"), ==, "running");

  for (guint i = 0; i < 2; i++)
    {
      SightStepRecord st = { .run_id = id, .index = i, .kind = (char *) "click",
                             .started_at = run.started_at };
      g_assert_true (sight_store_add_step (f->store, &st, NULL));
      st.verdict = SIGHT_RUN_VERDICT_PASS;
      st.finished_at = run.started_at + 1000000;
      g_assert_true (sight_store_finish_step (f->store, &st, NULL));
    }
  run.id = id;
  run.verdict = SIGHT_RUN_VERDICT_PASS;
  run.answer = (char *) "The Pricing page is open. Its page heading is \"Pricing\".";
  run.finished_at = run.started_at + 3000000;
  g_assert_true (sight_store_finish_run (f->store, &run, NULL));
  g_clear_pointer (&d, sight_run_data_free);
  d = sight_store_load_run (f->store, id, NULL);
  task = sight_report_summary (d);
  g_assert_cmpstr (task, ==,
                   "Task \"Open the Pricing page and tell me the page heading\" finished in 3 s: "
                   "the agent says it is done. 2 agent steps, all ok. Answer: The Pricing page is "
                   "open. Its page heading is \"Pricing\". No console errors or failed network "
                   "calls. Note: no assertions were checked, so `ok` only means the agent says it "
                   "is done.");
}

static void
test_json_structure (Fixture       *f,
                     gconstpointer  data)
{
  g_autofree char *id = write_smoke_run (f->store, "http://127.0.0.1:8765/login", TRUE);
  g_autoptr(SightRunData) d = sight_store_load_run (f->store, id, NULL);
  g_autoptr(GBytes) bytes = sight_report_render (d, SIGHT_REPORT_JSON, NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *root, *step, *findings;
  JsonArray *steps;

  g_assert_true (json_parser_load_from_data (parser, g_bytes_get_data (bytes, NULL),
                                             g_bytes_get_size (bytes), NULL));
  root = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (root, "verdict"), ==, "fail");
  g_assert_cmpstr (json_object_get_string_member (root, "id"), ==, id);
  g_assert_true (g_str_has_prefix (json_object_get_string_member (root, "summary"),
                                   "Smoke test of http://127.0.0.1:8765/login FAILED in 7 s"));
  g_assert_cmpint (json_object_get_int_member (root, "ms"), ==, 7000);
  steps = json_object_get_array_member (root, "steps");
  g_assert_cmpuint (json_array_get_length (steps), ==, 4);
  step = json_array_get_object_element (steps, 0);
  g_assert_cmpint (json_object_get_int_member (step, "index"), ==, 0);
  g_assert_true (json_object_get_boolean_member (step, "ok"));
  step = json_array_get_object_element (steps, 2);
  g_assert_cmpint (json_object_get_int_member (step, "index"), ==, 2);
  g_assert_false (json_object_get_boolean_member (step, "ok"));
  g_assert_cmpstr (json_object_get_string_member (step, "code"), ==, "ASSERTION_FAILED");
  /* the step's start, which places it in the run's time (1.5 s per step) */
  g_assert_cmpstr (json_object_get_string_member_with_default (step, "startedAt", NULL), ==,
                   "2023-11-14T22:13:23.000000Z");
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (step, "budget"),
                                               "maxModelCalls"), ==, 25);
  findings = json_object_get_object_member (root, "findings");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (findings, "consoleErrors")), ==, 0);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (findings, "failedRequests")), ==, 0);
  g_assert_cmpstr (json_object_get_string_member (findings, "finalUrl"), ==, "http://127.0.0.1:8765/login");
  g_assert_true (json_object_has_member (root, "notes"));
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (root, "usage"),
                                               "costMicros"), ==, 400);
}

static void
test_junit (Fixture       *f,
            gconstpointer  data)
{
  g_autofree char *id = write_smoke_run (f->store, "http://127.0.0.1/?a=1&b=<2>", TRUE);
  g_autoptr(SightRunData) d = sight_store_load_run (f->store, id, NULL);
  g_autofree char *path = g_build_filename (f->dir, "junit.xml", NULL);
  g_autofree char *xml = NULL;
  g_autofree char *xmllint = g_find_program_in_path ("xmllint");
  g_autoptr(GError) error = NULL;

  g_assert_true (sight_report_write (d, SIGHT_REPORT_JUNIT, path, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (path, &xml, NULL, NULL));
  g_assert_nonnull (strstr (xml, "tests=\"4\" failures=\"1\" errors=\"0\" skipped=\"1\""));
  g_assert_nonnull (strstr (xml, "<failure message=\"ASSERTION_FAILED: Expected text &quot;Dashboard"));
  g_assert_nonnull (strstr (xml, "http://127.0.0.1/?a=1&amp;b=&lt;2&gt;"));
  g_assert_null (strstr (xml, "b=<2>"));
  if (xmllint)
    {
      const char *argv[] = { xmllint, "--noout", path, NULL };
      int status = -1;
      g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                                   NULL, NULL, &status, &error));
      g_assert_true (g_spawn_check_wait_status (status, NULL));
    }
}

static void
test_safe_url (void)
{
  static const char * const bad[] = {
    "javascript:alert(1)", "JaVaScRiPt:alert(1)", "java\tscript:alert(1)", " javascript:x",
    "vbscript:x", "data:text/html,<script>x</script>", "data:image/svg+xml;base64,PHN2Zz4=",
    "file:///etc/passwd", "//evil.test/x", "/relative", "",
  };
  static const char * const good[] = {
    "http://127.0.0.1:8765/a?b=c", "https://example.com/", "data:image/png;base64,iVBORw0KGgo=",
  };
  g_autofree char *quoted = sight_report_safe_url ("https://x.test/?q=\"><script>");
  g_autofree char *html = sight_report_escape_html ("<b a='1'>&\"\001\xff");

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autofree char *r = sight_report_safe_url (bad[i]);
      if (r != NULL)
        g_error ("accepted %s", bad[i]);
    }
  for (guint i = 0; i < G_N_ELEMENTS (good); i++)
    {
      g_autofree char *r = sight_report_safe_url (good[i]);
      g_assert_nonnull (r);
    }
  /* accepted, but escaped for the attribute */
  g_assert_cmpstr (quoted, ==, "https://x.test/?q=&quot;&gt;&lt;script&gt;");
  g_assert_cmpstr (html, ==, "&lt;b a=&#39;1&#39;&gt;&amp;&quot;\xef\xbf\xbd");
}

/* ------------------------------------------------------------ WebKit check */

typedef struct {
  guint      executions;
  gboolean   loaded;
  JSCValue  *dom_result;
  GMainLoop *loop;
  gboolean   terminated;   /* the web process went away */
} PageState;

static void
web_process_terminated_cb (WebKitWebView                     *view,
                           WebKitWebProcessTerminationReason  reason,
                           gpointer                           user_data)
{
  PageState *state = user_data;

  state->terminated = TRUE;
}

static void
xss_message_cb (WebKitUserContentManager *manager,
                JSCValue                 *value,
                gpointer                  user_data)
{
  PageState *state = user_data;

  state->executions++;
}

static void
load_changed_cb (WebKitWebView   *view,
                 WebKitLoadEvent  event,
                 gpointer         user_data)
{
  PageState *state = user_data;

  if (event == WEBKIT_LOAD_FINISHED)
    {
      state->loaded = TRUE;
      g_main_loop_quit (state->loop);
    }
}

static gboolean
quit_cb (gpointer user_data)
{
  g_main_loop_quit (user_data);
  return G_SOURCE_REMOVE;
}

static void
evaluate_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  PageState *state = user_data;
  g_autoptr(GError) error = NULL;

  state->dom_result = webkit_web_view_evaluate_javascript_finish (WEBKIT_WEB_VIEW (source),
                                                                  result, &error);
  if (!state->terminated)
    g_assert_no_error (error);
  g_main_loop_quit (state->loop);
}

/* Loads @html from a file in WebKit and returns how many times a payload
 * ran; *out_active gets the number of script elements, inline handlers and
 * links or sources with a scheme other than http, https or data:image.
 * FALSE when the web process went away before the answer (WebKit's, seen
 * once on a loaded machine as "Unsupported result type"). */
static gboolean
count_executions_once (const char *dir,
                       const char *html,
                       gsize       len,
                       guint      *out_executions,
                       int        *out_active)
{
  g_autofree char *path = g_build_filename (dir, "report.html", NULL);
  g_autofree char *uri = g_filename_to_uri (path, NULL, NULL);
  g_autoptr(WebKitUserContentManager) ucm = webkit_user_content_manager_new ();
  g_autoptr(WebKitNetworkSession) session = NULL;
  WebKitWebView *view;
  GtkWidget *window;
  PageState state = { 0, FALSE, NULL, g_main_loop_new (NULL, FALSE) };
  guint timeout;

  g_assert_true (g_file_set_contents (path, html, len, NULL));
  g_assert_true (webkit_user_content_manager_register_script_message_handler (ucm, "xss", NULL));
  g_signal_connect (ucm, "script-message-received::xss", G_CALLBACK (xss_message_cb), &state);
  /* Ephemeral: nothing is written under the user's data directory. */
  session = webkit_network_session_new_ephemeral ();
  view = g_object_new (WEBKIT_TYPE_WEB_VIEW, "user-content-manager", ucm,
                       "network-session", session, NULL);
  window = gtk_window_new ();
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (view));
  gtk_window_set_default_size (GTK_WINDOW (window), 1024, 768);
  gtk_window_present (GTK_WINDOW (window));
  g_signal_connect (view, "load-changed", G_CALLBACK (load_changed_cb), &state);
  g_signal_connect (view, "web-process-terminated", G_CALLBACK (web_process_terminated_cb),
                    &state);
  webkit_web_view_load_uri (view, uri);
  timeout = g_timeout_add_seconds (20, quit_cb, state.loop);
  g_main_loop_run (state.loop);
  g_source_remove (timeout);
  g_assert_true (state.loaded || state.terminated);

  /* Let error events of images and the like fire. */
  g_timeout_add (500, quit_cb, state.loop);
  g_main_loop_run (state.loop);

  /* Inspect the DOM from an isolated world, where the page's CSP does not
   * apply. */
  webkit_web_view_evaluate_javascript (view,
    "let n = document.querySelectorAll('script, iframe, object, embed, frame, base, form').length;"
    "for (const el of document.querySelectorAll('*')) {"
    "  for (const a of el.attributes) {"
    "    if (a.name.startsWith('on')) n++;"
    "    if ((a.name === 'href' || a.name === 'src') &&"
    "        !/^(https?:|data:image\\/|#)/i.test(a.value)) n++;"
    "  }"
    "}"
    "n;", -1, "sightline-test", NULL, NULL, evaluate_cb, &state);
  g_main_loop_run (state.loop);
  if (!state.terminated)
    {
      g_assert_nonnull (state.dom_result);
      *out_active = jsc_value_to_int32 (state.dom_result);
    }
  g_clear_object (&state.dom_result);
  *out_executions = state.executions;

  gtk_window_destroy (GTK_WINDOW (window));
  g_main_loop_unref (state.loop);
  return !state.terminated;
}

/* count_executions_once(), again in a new web process if the first went
 * away: what is asked is the report's, not the engine's, behaviour. */
static guint
count_executions (const char *dir,
                  const char *html,
                  gsize       len,
                  int        *out_active)
{
  guint executions = 0;

  if (count_executions_once (dir, html, len, &executions, out_active))
    return executions;
  g_test_message ("the web process went away; loading the report again");
  g_assert_true (count_executions_once (dir, html, len, &executions, out_active));
  return executions;
}

static char *
write_xss_run (SightStore *store)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) shot = make_jpeg (64, 40, 0xffffffff);
  g_autofree char *joined = g_strjoinv (" | ", (char **) xss_corpus);
  SightRunRecord run = { .kind = (char *) "test", .name = joined,
                         .url = (char *) "javascript:" RUN };
  g_autofree char *id = sight_store_open_run (store, &run, &error);
  const char *notes[G_N_ELEMENTS (xss_corpus) + 1] = { NULL };

  for (guint i = 0; i < G_N_ELEMENTS (xss_corpus); i++)
    {
      const char *p = xss_corpus[i];
      SightStepRecord st = { .run_id = id, .index = i, .kind = (char *) p, .label = (char *) p,
                             .instruction = (char *) p, .options_json = (char *) "{}",
                             .budget_json = (char *) "{\"maxModelCalls\":2}" };
      SightObservationRecord o = { .run_id = id, .step_index = i, .phase = (char *) "before",
                                   .url = (char *) p, .title = (char *) p, .tree_text = (char *) p,
                                   .screenshot = shot, .screenshot_mime = (char *) p,
                                   .width = 64, .height = 40, .scale = 1 };
      SightObservationRecord o2 = o;
      SightLogRecord console = { .run_id = id, .step_index = i, .kind = (char *) "console",
                                 .level = (char *) "error", .text = (char *) p, .url = (char *) p };
      SightLogRecord failed = { .run_id = id, .step_index = i, .kind = (char *) "request_failed",
                                .text = (char *) p, .url = (char *) p };
      SightModelCallRecord call = { .run_id = id, .step_index = i, .provider = (char *) p,
                                    .model = (char *) p, .request_id = (char *) p,
                                    .input_tokens = 1, .output_tokens = 1, .cost_micros = 1 };

      o2.phase = (char *) "after";
      o2.screenshot_mime = (char *) "image/jpeg";
      g_assert_true (sight_store_add_step (store, &st, &error));
      g_assert_true (sight_store_add_observation (store, &o, &error));
      g_assert_true (sight_store_add_observation (store, &o2, &error));
      g_assert_true (sight_store_add_log (store, &console, &error));
      g_assert_true (sight_store_add_log (store, &failed, &error));
      g_assert_true (sight_store_add_model_call (store, &call, &error));
      st.verdict = SIGHT_RUN_VERDICT_FAIL;
      st.code = (char *) p;
      st.explanation = (char *) p;
      st.has_target = TRUE;
      st.target_width = 10;
      st.target_height = 10;
      g_assert_true (sight_store_finish_step (store, &st, &error));
      g_assert_no_error (error);
      notes[i] = p;
    }
  run.id = id;
  run.verdict = SIGHT_RUN_VERDICT_FAIL;
  run.final_url = (char *) "javascript:" RUN;
  run.answer = joined;
  run.explanation = joined;
  run.notes = (char **) notes;
  g_assert_true (sight_store_finish_run (store, &run, &error));
  return g_steal_pointer (&id);
}

static char *
strip_csp (const char *html)
{
  const char *start = strstr (html, "<meta http-equiv=\"Content-Security-Policy\"");
  const char *end = start ? strchr (start, '>') : NULL;

  g_autofree char *head = NULL;

  g_assert_nonnull (end);
  head = g_strndup (html, start - html);
  return g_strconcat (head, end + 1, NULL);
}

static void
test_xss_inert (Fixture       *f,
                gconstpointer  data)
{
  g_autofree char *id = write_xss_run (f->store);
  g_autoptr(SightRunData) d = sight_store_load_run (f->store, id, NULL);
  g_autoptr(GBytes) bytes = sight_report_render (d, SIGHT_REPORT_HTML, NULL);
  g_autofree char *html = g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
  g_autofree char *no_csp = strip_csp (html);
  const char *control = "<!DOCTYPE html><p>control</p><img src=x onerror=\"" RUN "\">"
                        "<script>" RUN "</script>";
  int active = -1;

  /* The counter works: an unescaped page runs both payloads. */
  g_assert_cmpuint (count_executions (f->dir, control, strlen (control), &active), ==, 2);
  g_assert_cmpint (active, >=, 2);

  g_assert_cmpuint (count_executions (f->dir, html, strlen (html), &active), ==, 0);
  g_assert_cmpint (active, ==, 0);
  /* Inert by escaping alone, not only thanks to the CSP. */
  g_assert_cmpuint (count_executions (f->dir, no_csp, strlen (no_csp), &active), ==, 0);
  g_assert_cmpint (active, ==, 0);

  /* Nothing in the file refers to the network. */
  g_assert_null (strstr (html, "src=\"http"));
  g_assert_null (strstr (html, "url(http"));
  g_assert_null (strstr (html, "<script"));
  g_assert_nonnull (strstr (html, "&lt;script&gt;"));
}

static void
test_report_shape (Fixture       *f,
                   gconstpointer  data)
{
  g_autofree char *id = write_smoke_run (f->store, "http://127.0.0.1:8765/login", TRUE);
  g_autoptr(SightRunData) d = sight_store_load_run (f->store, id, NULL);
  g_autoptr(GBytes) bytes = sight_report_render (d, SIGHT_REPORT_HTML, NULL);
  const char *html = g_bytes_get_data (bytes, NULL);
  g_autofree char *copy = g_strndup (html, g_bytes_get_size (bytes));

  g_assert_nonnull (strstr (copy, "Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'sha256-"));
  g_assert_nonnull (strstr (copy, "prefers-color-scheme:dark"));
  g_assert_nonnull (strstr (copy, "@media print"));
  g_assert_nonnull (strstr (copy, "class=\"film\""));
  g_assert_nonnull (strstr (copy, "<details><summary>What the model saw"));
  g_assert_nonnull (strstr (copy, "button &quot;Sign in&quot; [e4]"));
  g_assert_nonnull (strstr (copy, "class=\"box b"));
  /* the box: 400 CSS px at a scale of 0.25 in a 320 px wide image */
  g_assert_nonnull (strstr (copy, "{left:31.250%;top:37.500%;width:12.500%;height:5.000%}"));
  g_assert_nonnull (strstr (copy, "Model calls 1 of 25"));
  g_assert_nonnull (strstr (copy, "data:image/jpeg;base64,"));
  /* one image, written once though eight places show it */
  {
    g_auto(GStrv) parts = g_strsplit (copy, "data:image/jpeg", -1);
    g_assert_cmpuint (g_strv_length (parts), ==, 2);
  }
}

static gboolean
bytes_contain (const char *data,
               gsize       len,
               const char *needle)
{
  gsize n = strlen (needle);

  for (gsize i = 0; i + n <= len; i++)
    if (memcmp (data + i, needle, n) == 0)
      return TRUE;
  return FALSE;
}

static void
test_canary (Fixture       *f,
             gconstpointer  data)
{
  g_autofree char *id = NULL;
  g_autoptr(SightRunData) d = NULL;
  g_autofree char *db = g_strdup (sight_store_get_path (f->store));
  g_autofree char *wal = g_strconcat (db, "-wal", NULL);
  SightReportFormat formats[] = { SIGHT_REPORT_HTML, SIGHT_REPORT_JSON, SIGHT_REPORT_JUNIT };
  SightRunRecord run = { .kind = (char *) "smoke", .url = (char *) "http://127.0.0.1/?t=" CANARY };

  sight_secrets_register_value ("member.password", CANARY);
  id = sight_store_open_run (f->store, &run, NULL);
  {
    SightStepRecord st = { .run_id = id, .index = 0, .kind = (char *) "act",
                           .instruction = (char *) "type " CANARY " into Password" };
    SightObservationRecord o = { .run_id = id, .step_index = 0, .phase = (char *) "after",
                                 .tree_text = (char *) "textbox \"Password\" = \"" CANARY "\"" };
    SightLogRecord l = { .run_id = id, .step_index = 0, .kind = (char *) "console",
                         .level = (char *) "error", .text = (char *) CANARY };

    g_assert_true (sight_store_add_step (f->store, &st, NULL));
    g_assert_true (sight_store_add_observation (f->store, &o, NULL));
    g_assert_true (sight_store_add_log (f->store, &l, NULL));
    st.verdict = SIGHT_RUN_VERDICT_FAIL;
    st.explanation = (char *) "the field holds " CANARY;
    g_assert_true (sight_store_finish_step (f->store, &st, NULL));
  }
  run.id = id;
  run.verdict = SIGHT_RUN_VERDICT_FAIL;
  run.final_url = (char *) "http://127.0.0.1/?t=" CANARY;
  g_assert_true (sight_store_finish_run (f->store, &run, NULL));
  d = sight_store_load_run (f->store, id, NULL);

  /* A report built from data that somehow still holds it redacts it too. */
  g_free (d->run->name);
  d->run->name = g_strdup ("name " CANARY);
  for (guint i = 0; i < G_N_ELEMENTS (formats); i++)
    {
      g_autoptr(GBytes) bytes = sight_report_render (d, formats[i], NULL);
      g_autofree char *text = g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));

      g_assert_null (strstr (text, CANARY));
      g_assert_nonnull (strstr (text, "[secret"));
    }
  g_clear_object (&f->store);
  {
    g_autofree char *contents = NULL;
    gsize len;

    g_assert_true (g_file_get_contents (db, &contents, &len, NULL));
    g_assert_false (bytes_contain (contents, len, CANARY));
    g_clear_pointer (&contents, g_free);
    if (g_file_get_contents (wal, &contents, &len, NULL))
      g_assert_false (bytes_contain (contents, len, CANARY));
  }
  sight_secrets_forget_all ();
}

/* A run of 200 steps (1,000 with -m slow, the `long` suite), each with its
 * own screenshot (issue #13, bounds): the HTML report embeds the screenshots of 50 steps, the failed one among
 * them, says so, and stays small; the JSON report lists every step. */
static void
test_long_run (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightRunData) d = NULL;
  g_autoptr(GBytes) html = NULL;
  g_autoptr(GBytes) json = NULL;
  g_autofree char *text = NULL;
  g_autofree char *failed = NULL;
  SightRunRecord run = { .kind = (char *) "test", .name = (char *) "many steps",
                         .url = (char *) "http://127.0.0.1/", .started_at = 1700000000000000 };
  g_autofree char *id = sight_store_open_run (f->store, &run, &error);
  const guint n = g_test_slow () ? 1000 : 200, failing = n * 7 / 10;
  const char *p, *end;
  guint embedded = 0;

  g_assert_no_error (error);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GBytes) shot = make_jpeg (64, 40, 0x10000000u * (i % 16) + 0x100u * i + 0xff);
      SightStepRecord st = { .run_id = id, .index = i, .kind = (char *) "do",
                             .instruction = (char *) "type \"x\" into Note",
                             .started_at = run.started_at + i * 1000 };
      SightObservationRecord after = { .run_id = id, .step_index = i, .phase = (char *) "after",
                                       .url = run.url, .tree_text = (char *) "textbox \"Note\"",
                                       .screenshot = shot, .screenshot_mime = (char *) "image/jpeg",
                                       .width = 64, .height = 40, .scale = 0.05 };

      g_assert_true (sight_store_add_step (f->store, &st, &error));
      g_assert_true (sight_store_add_observation (f->store, &after, &error));
      st.verdict = i < failing ? SIGHT_RUN_VERDICT_PASS
                   : i == failing ? SIGHT_RUN_VERDICT_FAIL : SIGHT_RUN_VERDICT_SKIPPED;
      st.finished_at = st.started_at + 500;
      g_assert_true (sight_store_finish_step (f->store, &st, &error));
    }
  run.id = id;
  run.verdict = SIGHT_RUN_VERDICT_FAIL;
  run.finished_at = run.started_at + n * 1000;
  g_assert_true (sight_store_finish_run (f->store, &run, &error));
  d = sight_store_load_run (f->store, id, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (d->steps->len, ==, n);

  html = sight_report_render (d, SIGHT_REPORT_HTML, &error);
  g_assert_no_error (error);
  text = g_strndup (g_bytes_get_data (html, NULL), g_bytes_get_size (html));
  for (p = text; (p = strstr (p, "background-image:url(data:")) != NULL; p++)
    embedded++;
  /* the after screenshots of 50 steps, and the before of some of them */
  g_assert_cmpuint (embedded, >=, 50);
  g_assert_cmpuint (embedded, <=, 100);
  {
    g_autofree char *note = g_strdup_printf ("Screenshots truncated: this report embeds those of "
                                             "50 of the %u steps", n);

    g_assert_nonnull (strstr (text, note));
  }
  g_assert_nonnull (strstr (text, "Screenshot left out"));
  /* the failed step shows what the page looked like */
  failed = g_strdup_printf ("id=\"step-%u\"", failing + 1);
  p = strstr (text, failed);
  g_assert_nonnull (p);
  end = strstr (p + 1, "<section");
  g_assert_nonnull (end);
  g_assert_nonnull (g_strstr_len (p, end - p, "class=\"shot i"));
  g_test_message ("HTML report of %u steps: %zu bytes", n, g_bytes_get_size (html));
  g_assert_cmpuint (g_bytes_get_size (html), <, 3 * 1000 * 1000);

  json = sight_report_render (d, SIGHT_REPORT_JSON, &error);
  g_assert_no_error (error);
  g_test_message ("JSON report: %zu bytes", g_bytes_get_size (json));
  g_assert_cmpuint (g_bytes_get_size (json), <, 1000 * 1000);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  gtk_init ();

#define ADD(name, func) \
  g_test_add ("/report/" name, Fixture, NULL, fixture_setup, func, fixture_teardown)
  ADD ("summary-wording", test_summary_wording);
  ADD ("unstored-with-failed-step", test_unstored_with_failed_step);
  ADD ("long-run", test_long_run);
  ADD ("task-and-running", test_task_and_running);
  ADD ("json-structure", test_json_structure);
  ADD ("junit", test_junit);
  ADD ("html-shape", test_report_shape);
  ADD ("xss-inert", test_xss_inert);
  ADD ("canary", test_canary);
#undef ADD
  g_test_add_func ("/report/safe-url", test_safe_url);

  return g_test_run ();
}
