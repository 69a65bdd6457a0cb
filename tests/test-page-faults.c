/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The web process lost in the middle of a step (issue #26, item 3): killed
 * (SIGKILL), stuck in a page's own endless loop, or ended by WebKit past the
 * page memory limit, while each kind of step runs (a direct step, act,
 * assert, waitFor, extract). Each step ends ENVIRONMENT_UNAVAILABLE, blocked,
 * naming the cause, never as a product failure; a direct `expect text` after
 * it says the same; and the page works again after a load. The memory limit
 * is process-wide, hence a program of its own with a small one. */
#include "config.h"

#include <signal.h>

#include "agent-test-common.h"
#include "sight-direct-run.h"
#include "web-process-common.h"

#define LIMIT_MB "256"
#define HANG_TIMEOUT_MS 1500

/* A page that hangs by itself, or keeps 32 MB more every 20 ms, from 300 ms
 * after it loads; a plain page for the kill. */
static const char page_html[] =
  "<!doctype html><title>Faults</title><h1>Counter</h1><p>Ready</p>"
  "<script>\n"
  "const fault = new URLSearchParams (location.search).get ('fault');\n"
  "if (fault === 'hang')\n"
  "  setTimeout (() => { for (;;) {} }, 800);\n"
  "if (fault === 'memory') {\n"
  "  globalThis.hoard = [];\n"
  "  setTimeout (() => setInterval (() => {\n"
  "    const a = new Float64Array (4 * 1024 * 1024);\n"
  "    a.fill (Math.random ());\n"
  "    globalThis.hoard.push (a);\n"
  "  }, 20), 300);\n"
  "}\n"
  "</script>";

typedef enum {
  FAULT_KILL,
  FAULT_HANG,
  FAULT_MEMORY,
} FaultKind;

static const struct {
  const char *name;
  const char *query;
  const char *cause;     /* what the step's explanation must say */
  guint       step_ms;   /* how long the step lasts: long enough for the fault */
} fault_info[] = {
  { "killed", "", "crashed", 2500 },
  { "hung", "?fault=hang", "stopped responding", 2500 },
  { "memory", "?fault=memory", "memory limit", 9000 },
};

static const char *kinds[] = { "direct", "act", "assert", "waitFor", "extract" };

static guint kill_source;

static gboolean
kill_cb (gpointer user_data)
{
  g_autoptr(GArray) pids = web_processes ();

  kill_source = 0;
  g_assert_cmpuint (pids->len, >=, 1);
  for (guint i = 0; i < pids->len; i++)
    kill (g_array_index (pids, pid_t, i), SIGKILL);
  return G_SOURCE_REMOVE;
}

static void
load (Fixture    *f,
      const char *query)
{
  g_autofree char *path = g_strconcat ("/faults", query, NULL);

  fixture_load (f, path);
}

/* A direct step, as a test file's `do` runs it; its error, or NULL. */
static GError *
run_direct (Fixture    *f,
            const char *text,
            guint       timeout_ms)
{
  GAsyncResult *result = NULL;
  GError *error = NULL;
  g_autofree char *summary = NULL;

  sight_direct_step_run_async (f->page, text, NULL, NULL, timeout_ms, NULL, store_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  summary = sight_direct_step_run_finish (f->page, result, &error);
  g_object_unref (result);
  return error;
}

static void
assert_lost (const GError *error,
             gboolean      blocked,
             const char   *cause,
             const char   *what)
{
  g_test_message ("%s: %s", what, error != NULL ? error->message : "passed");
  g_assert_nonnull (error);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE);
  g_assert_true (blocked);
  g_assert_nonnull (strstr (error->message, cause));
}

static void
check_fault (Fixture   *f,
             FaultKind  fault,
             guint      kind)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GError) after = NULL;
  g_autofree char *what = g_strdup_printf ("%s during %s", fault_info[fault].name, kinds[kind]);
  guint step_ms = fault_info[fault].step_ms;
  gint64 t0;

  load (f, fault_info[fault].query);
  sight_scripted_model_load_script (f->model, "[]", NULL);
  if (fault == FAULT_KILL)
    kill_source = g_timeout_add (500, kill_cb, NULL);
  t0 = g_get_monotonic_time ();
  if (kind == 0)
    {
      g_autofree char *wait = g_strdup_printf ("wait %u ms", step_ms);

      error = run_direct (f, wait, step_ms + 5000);
      assert_lost (error, sight_error_code_is_blocked (error ? error->code : 0),
                   fault_info[fault].cause, what);
    }
  else
    {
      g_autoptr(SightStepResult) result = NULL;
      SightStepKind step_kind = kind == 1 ? SIGHT_STEP_ACT
                                : kind == 2 ? SIGHT_STEP_ASSERT
                                : kind == 3 ? SIGHT_STEP_WAIT_FOR
                                            : SIGHT_STEP_EXTRACT;
      const char *instruction = kind == 1 ? "finish" : kind == 4 ? "the heading" : "the page is ready";
      const char *options = kind == 4 ? "{\"schema\": {\"type\": \"string\"}, \"timeout\": 30000}"
                                      : "{\"timeout\": 30000}";

      /* The model thinks for as long as the fault needs, then answers as if
       * all went well: only the page can tell the step otherwise. */
      if (kind == 1)
        sight_scripted_model_push_printf (f->model,
                                          "{\"delay_ms\": %u, \"tool_calls\": [{\"name\": \"done\", "
                                          "\"arguments\": {\"verdict\": \"pass\", \"summary\": \"ok\"}}]}",
                                          step_ms);
      else if (kind == 4)
        sight_scripted_model_push_printf (f->model, "{\"delay_ms\": %u, \"json\": \"Counter\"}",
                                          step_ms);
      else
        sight_scripted_model_push_printf (f->model,
                                          "{\"delay_ms\": %u, \"json\": {\"verdict\": true, "
                                          "\"explanation\": \"Ready is shown.\", \"injection\": null}}",
                                          step_ms);
      result = run_step (f, step_kind, instruction, options, &error);
      g_assert_nonnull (result);
      g_assert_nonnull (result->error);
      assert_lost (result->error, result->blocked, fault_info[fault].cause, what);
      g_assert_cmpint (result->verdict, ==, SIGHT_STEP_VERDICT_BLOCKED);
    }
  g_test_message ("  ended after %.1f s", (g_get_monotonic_time () - t0) / 1e6);
  g_clear_handle_id (&kill_source, g_source_remove);

  /* The next step on the blank page says why, instead of failing the check. */
  after = run_direct (f, "expect text \"Counter\"", 5000);
  assert_lost (after, TRUE, fault_info[fault].cause, "then expect text");

  /* A load brings the page back. */
  load (f, "");
  g_clear_error (&after);
  after = run_direct (f, "expect text \"Counter\"", 5000);
  g_assert_no_error (after);
}

static void
test_faults (gconstpointer data)
{
  FaultKind fault = GPOINTER_TO_UINT (data);
  Fixture f = { 0 };

  fixture_set_up (&f, NULL);
  sight_web_page_set_hang_timeout (f.page, HANG_TIMEOUT_MS);
  for (guint kind = 0; kind < G_N_ELEMENTS (kinds); kind++)
    check_fault (&f, fault, kind);
  fixture_tear_down (&f);
}

int
main (int    argc,
      char **argv)
{
  g_setenv ("SIGHTLINE_PAGE_MEMORY_LIMIT_MB", LIMIT_MB, TRUE);
  gtk_test_init (&argc, &argv, NULL);
  g_unsetenv ("SIGHTLINE_MODEL");
  g_unsetenv ("OPENAI_API_KEY");
  site_start ();
  site_add ("/faults", page_html);

  g_test_add_data_func ("/page-faults/killed", GUINT_TO_POINTER (FAULT_KILL), test_faults);
  g_test_add_data_func ("/page-faults/hung", GUINT_TO_POINTER (FAULT_HANG), test_faults);
  g_test_add_data_func ("/page-faults/memory", GUINT_TO_POINTER (FAULT_MEMORY), test_faults);
  return g_test_run ();
}
