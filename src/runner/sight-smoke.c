/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-smoke"

#include "config.h"

#include "sight-smoke.h"

#include <libsoup/soup.h>
#include <string.h>

#include "sight-error.h"
#include "sight-flow-step.h"
#include "sight-observation.h"
#include "sight-page-guard.h"
#include "sight-page-scripts.h"
#include "sight-report.h"
#include "sight-run-recorder.h"
#include "sight-secret-fields.h"
#include "sight-run-video.h"
#include "sight-scrape.h"
#include "sight-tool-args.h"
#include "sight-web-page.h"

#define LOAD_TIMEOUT_MS 30000
#define STEP_TIMEOUT_MS 60000
#define CHECK_TIMEOUT_MS 10000
#define EXPECT_WAIT_MS 5000
#define LINK_TIMEOUT_S 10
#define LINKS_IN_FLIGHT 4

static const char * const smoke_args[] = {
  "url", "steps", "expectText", "expectUrl", "expectNoText", "maxLinks", "strictLinks",
  "waitSeconds", "session", NULL
};
static const char * const session_args[] = { "proxyUrl", "allowHosts", "headers", "viewport",
                                             "device", NULL };
static const char * const sign_in_args[] = { "credentials", "profileId", "persistProfile",
                                              "profileName", "extensionIds", NULL };
static const char * const none[] = { NULL };

typedef enum {
  STAGE_LOAD,
  STAGE_ACCESSIBILITY,
  STAGE_LINKS,
  STAGE_STEPS,
  STAGE_CONSOLE,
  STAGE_EXPECT_TEXT,
  STAGE_EXPECT_URL,
  STAGE_EXPECT_NO_TEXT,
  STAGE_STRICT_LINKS,
  STAGE_DONE,
} Stage;

typedef struct {
  char  *url;
  guint  status;      /* 0: network error */
  char  *error;
} LinkResult;

typedef struct {
  SightStore   *store;
  SightWebPage *page;
  SoupSession  *http;
  char         *run_id;
  SightRunRecorder *recorder;
  SightVideoRecorder *video;   /* the recording: always */
  char         *url;
  char        **steps;
  const char   *expect_text;
  const char   *expect_url;
  const char   *expect_no_text;
  char         *expect_text_owned;
  char         *expect_url_owned;
  char         *expect_no_text_owned;
  gint64        max_links;
  gboolean      strict_links;

  Stage         stage;
  guint         flow_step;     /* the next user step */
  gboolean      loaded;
  gboolean      flow_failed;
  gboolean      failed;
  SightErrorCode error_code;
  char         *error_message;

  GPtrArray    *links;         /* char *, to check */
  GPtrArray    *link_results;  /* LinkResult */
  guint         links_next;
  guint         links_in_flight;
} Smoke;

static void
link_result_free (LinkResult *link)
{
  g_free (link->url);
  g_free (link->error);
  g_free (link);
}

static void
smoke_free (Smoke *smoke)
{
  g_clear_object (&smoke->recorder);
  g_clear_object (&smoke->video);
  g_clear_object (&smoke->store);
  g_clear_object (&smoke->page);
  g_clear_object (&smoke->http);
  g_free (smoke->run_id);
  g_free (smoke->url);
  g_strfreev (smoke->steps);
  g_free (smoke->expect_text_owned);
  g_free (smoke->expect_url_owned);
  g_free (smoke->expect_no_text_owned);
  g_free (smoke->error_message);
  g_clear_pointer (&smoke->links, g_ptr_array_unref);
  g_clear_pointer (&smoke->link_results, g_ptr_array_unref);
  g_free (smoke);
}

static void smoke_next (GTask *task);

static void
write_done_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  if (!sight_store_write_finish (SIGHT_STORE (source), result, &error))
    g_warning ("Could not store the smoke test's progress: %s", error->message);
}

static void
step_open (Smoke      *smoke,
           const char *kind,
           const char *label,
           const char *instruction)
{
  sight_run_recorder_step_open (smoke->recorder, kind, label, instruction, NULL);
}

static void
note_verdict (Smoke           *smoke,
              SightRunVerdict  verdict)
{
  if (verdict == SIGHT_RUN_VERDICT_FAIL || verdict == SIGHT_RUN_VERDICT_ERROR)
    smoke->failed = TRUE;
}

static void
step_close (Smoke           *smoke,
            SightRunVerdict  verdict,
            const GError    *error,
            const char      *explanation)
{
  note_verdict (smoke, sight_run_recorder_step_close (smoke->recorder, verdict, error,
                                                      explanation, NULL, NULL));
}

/* A step nobody asked for is recorded as skipped: the report counts it in
 * the total, not among those that passed. */
static void
step_skip (Smoke      *smoke,
           const char *kind,
           const char *label,
           const char *why)
{
  sight_run_recorder_step_skip (smoke->recorder, kind, label, NULL, NULL, why);
}

static void
observation_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  Smoke *smoke = g_task_get_task_data (task);
  g_autoptr(SightObservation) observation = sight_observation_capture_finish (result, NULL);

  if (observation != NULL)
    sight_run_recorder_observe (smoke->recorder, "final", observation);
  smoke_next (g_steal_pointer (&task));
}

static void
step_observed_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  g_autofree char *evidence = sight_run_recorder_observe_step_finish (SIGHT_RUN_RECORDER (source),
                                                                      result, NULL);

  smoke_next (user_data);
}

/* What the page looked like after the step just closed: kept for the report
 * (and, for a failed expectation, as its evidence). */
static void
observe_then_next (GTask *task)
{
  Smoke *smoke = g_task_get_task_data (task);
  GCancellable *cancellable = g_task_get_cancellable (task);

  if (smoke->stage == STAGE_DONE)
    sight_observation_capture_async (smoke->page, SIGHT_OBSERVE_SCREENSHOT, CHECK_TIMEOUT_MS,
                                     cancellable, observation_cb, task);
  else
    sight_run_recorder_observe_step_async (smoke->recorder, smoke->page, SIGHT_OBSERVE_DEFAULT,
                                           sight_web_page_get_secret_fills (smoke->page) > 0,
                                           CHECK_TIMEOUT_MS, cancellable, step_observed_cb, task);
}

/* 1. The start page loads */

static void
loaded_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  GTask *task = user_data;
  Smoke *smoke = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  guint status;

  if (!sight_web_page_load_finish (SIGHT_WEB_PAGE (source), result, &error))
    {
      step_close (smoke, SIGHT_RUN_VERDICT_FAIL, error, NULL);
      smoke->error_code = error->domain == SIGHT_ERROR ? error->code : SIGHT_ERROR_INTERNAL;
      smoke->error_message = g_strdup (error->message);
      smoke_next (task);
      return;
    }
  status = sight_page_status_code (smoke->page);
  if (status >= 400)
    {
      g_autofree char *why = g_strdup_printf ("The start page answered with HTTP status %u", status);

      step_close (smoke, SIGHT_RUN_VERDICT_FAIL, NULL, why);
    }
  else
    {
      smoke->loaded = TRUE;
      step_close (smoke, SIGHT_RUN_VERDICT_PASS, NULL, "The start page loaded");
    }
  observe_then_next (task);
}

/* 2. Basic accessibility */

static void
accessibility_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  GTask *task = user_data;
  Smoke *smoke = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = sight_web_page_evaluate_finish (SIGHT_WEB_PAGE (source), result,
                                                             &error);
  g_autoptr(GString) text = g_string_new (NULL);
  JsonArray *findings;
  guint critical = 0;

  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    {
      step_close (smoke, SIGHT_RUN_VERDICT_ERROR, error, "The accessibility check did not run");
      smoke_next (task);
      return;
    }
  findings = json_object_get_array_member (json_node_get_object (node), "findings");
  for (guint i = 0; i < json_array_get_length (findings); i++)
    {
      JsonObject *finding = json_array_get_object_element (findings, i);
      const char *severity = json_object_get_string_member (finding, "severity");

      if (g_str_equal (severity, "critical"))
        critical++;
      g_string_append_printf (text, "%s%s (%s, %" G_GINT64_FORMAT "): %s",
                              text->len ? "; " : "",
                              json_object_get_string_member (finding, "rule"), severity,
                              json_object_get_int_member (finding, "count"),
                              json_object_get_string_member (finding, "message"));
    }
  /* Critical findings (no alternative text, unnamed controls) fail the
   * check; the others are reported. */
  if (critical > 0)
    step_close (smoke, SIGHT_RUN_VERDICT_FAIL, NULL, text->str);
  else
    step_close (smoke, SIGHT_RUN_VERDICT_PASS, NULL,
                text->len ? text->str : "No accessibility problems found by the basic rules");
  smoke_next (task);
}

/* 3. The links of the start page */

static void check_more_links (GTask *task);

static void
link_checked_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  GTask *task = user_data;
  Smoke *smoke = g_task_get_task_data (task);
  SoupMessage *msg = soup_session_get_async_result_message (SOUP_SESSION (source), result);
  g_autoptr(GError) error = NULL;
  g_autoptr(GInputStream) stream = soup_session_send_finish (SOUP_SESSION (source), result, &error);
  LinkResult *link = g_new0 (LinkResult, 1);

  link->url = g_uri_to_string (soup_message_get_uri (msg));
  if (stream != NULL)
    {
      link->status = soup_message_get_status (msg);
      g_input_stream_close (stream, NULL, NULL);
    }
  else
    link->error = g_strdup (error->message);
  g_ptr_array_add (smoke->link_results, link);
  smoke->links_in_flight--;
  check_more_links (task);
}

static void
check_more_links (GTask *task)
{
  Smoke *smoke = g_task_get_task_data (task);
  guint broken = 0;
  g_autofree char *why = NULL;

  while (smoke->links_in_flight < LINKS_IN_FLIGHT && smoke->links_next < smoke->links->len)
    {
      const char *url = g_ptr_array_index (smoke->links, smoke->links_next++);
      g_autoptr(SoupMessage) msg = soup_message_new ("GET", url);

      if (msg == NULL)
        continue;
      smoke->links_in_flight++;
      soup_session_send_async (smoke->http, msg, G_PRIORITY_DEFAULT,
                               g_task_get_cancellable (task), link_checked_cb, task);
    }
  if (smoke->links_in_flight > 0)
    return;

  for (guint i = 0; i < smoke->link_results->len; i++)
    {
      LinkResult *link = g_ptr_array_index (smoke->link_results, i);
      SightLogRecord finding = { 0 };

      if (link->error == NULL && link->status < 400)
        continue;
      broken++;
      /* Every broken link is a finding of the report, whether or not
       * strictLinks makes it fail the test: its address, its status (0 when
       * nothing answered) and the page it is on. */
      finding.run_id = smoke->run_id;
      finding.step_index = (int) sight_run_recorder_get_n_steps (smoke->recorder);
      finding.kind = (char *) "broken_link";
      finding.url = link->url;
      finding.status = link->error != NULL ? 0 : link->status;
      finding.text = (char *) sight_web_page_get_uri (smoke->page);
      sight_store_add_log_async (smoke->store, &finding, NULL, write_done_cb, NULL);
    }
  why = g_strdup_printf ("%u of %u links worked", smoke->link_results->len - broken,
                         smoke->link_results->len);
  step_close (smoke, SIGHT_RUN_VERDICT_PASS, NULL, why);
  smoke_next (task);
}

static void
links_found_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  GTask *task = user_data;
  Smoke *smoke = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = sight_web_page_evaluate_finish (SIGHT_WEB_PAGE (source), result,
                                                             &error);

  if (node == NULL || !JSON_NODE_HOLDS_ARRAY (node))
    {
      step_close (smoke, SIGHT_RUN_VERDICT_ERROR, error, "The links could not be read");
      smoke_next (task);
      return;
    }
  for (guint i = 0; i < json_array_get_length (json_node_get_array (node)) &&
                    (gint64) smoke->links->len < smoke->max_links; i++)
    g_ptr_array_add (smoke->links,
                     g_strdup (json_array_get_string_element (json_node_get_array (node), i)));
  check_more_links (task);
}

/* 4. The steps */

static void
flow_step_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  GTask *task = user_data;
  Smoke *smoke = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(SightStepResult) step = sight_flow_step_run_finish (result, &error);

  if (error != NULL)
    smoke->flow_failed = TRUE;
  note_verdict (smoke, sight_run_recorder_step_result (smoke->recorder, step, error, NULL));
  smoke->flow_step++;
  observe_then_next (task);
}

/* 6. Expectations on the page's visible text and address */

static void
page_text_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  GTask *task = user_data;
  Smoke *smoke = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = sight_web_page_evaluate_finish (SIGHT_WEB_PAGE (source), result,
                                                             &error);
  const char *text = node && JSON_NODE_HOLDS_VALUE (node) ? json_node_get_string (node) : NULL;
  g_autofree char *why = NULL;

  if (text == NULL)
    step_close (smoke, SIGHT_RUN_VERDICT_ERROR, error, "The page text could not be read");
  else if (smoke->stage == STAGE_EXPECT_TEXT)
    {
      gboolean found = strstr (text, smoke->expect_text) != NULL;

      why = g_strdup_printf (found ? "Expected text “%s” is on the page"
                                   : "Expected text “%s” is not on the page", smoke->expect_text);
      step_close (smoke, found ? SIGHT_RUN_VERDICT_PASS : SIGHT_RUN_VERDICT_FAIL, NULL, why);
    }
  else
    {
      gboolean found = strstr (text, smoke->expect_no_text) != NULL;

      why = g_strdup_printf (found ? "Unexpected text “%s” is on the page"
                                   : "Text “%s” is not on the page, as expected",
                             smoke->expect_no_text);
      step_close (smoke, found ? SIGHT_RUN_VERDICT_FAIL : SIGHT_RUN_VERDICT_PASS, NULL, why);
    }
  smoke->stage++;
  smoke_next (task);
}

static void
read_page_text (GTask *task)
{
  Smoke *smoke = g_task_get_task_data (task);

  sight_web_page_evaluate_async (smoke->page,
                                 "return document.body ? document.body.innerText || '' : '';",
                                 NULL, CHECK_TIMEOUT_MS, g_task_get_cancellable (task),
                                 page_text_cb, task);
}

static void
expect_text_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  GTask *task = user_data;
  Smoke *smoke = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autofree char *why = NULL;

  if (sight_page_wait_for_text_finish (SIGHT_WEB_PAGE (source), result, &error))
    {
      why = g_strdup_printf ("Expected text “%s” is on the page", smoke->expect_text);
      step_close (smoke, SIGHT_RUN_VERDICT_PASS, NULL, why);
    }
  else if (g_error_matches (error, SIGHT_ERROR, SIGHT_ERROR_STEP_TIMEOUT))
    {
      why = g_strdup_printf ("Expected text “%s” is not on the page", smoke->expect_text);
      step_close (smoke, SIGHT_RUN_VERDICT_FAIL, NULL, why);
    }
  else
    step_close (smoke, SIGHT_RUN_VERDICT_ERROR, error, NULL);
  smoke->stage++;
  smoke_next (task);
}

/* The end: the run's verdict, then its report read back from the store. */

static void
run_loaded_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  GTask *task = user_data;
  Smoke *smoke = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(SightRunData) data = sight_store_load_run_finish (SIGHT_STORE (source), result, &error);
  g_autofree char *text = NULL;
  JsonObject *object;
  JsonNode *root;

  if (data == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      g_object_unref (task);
      return;
    }
  text = sight_report_text (data);
  object = json_object_new ();
  json_object_set_string_member (object, "runId", smoke->run_id);
  json_object_set_string_member (object, "verdict", sight_run_verdict_to_string (data->run->verdict));
  json_object_set_string_member (object, "text", text);
  json_object_set_member (object, "report", sight_report_to_json (data));
  if (sight_run_data_find_video (data) != NULL)
    json_object_set_string_member (object, "video", sight_run_data_find_video (data)->path);
  root = json_node_new (JSON_NODE_OBJECT);
  json_node_take_object (root, object);
  g_task_return_pointer (task, root, (GDestroyNotify) json_node_unref);
  g_object_unref (task);
}

static void
run_finished_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  GTask *task = user_data;
  Smoke *smoke = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;

  /* A run the store could not keep reads back as the error it is. */
  if (!sight_store_write_finish (SIGHT_STORE (source), result, &error))
    g_debug ("smoke run %s: %s", smoke->run_id, error->message);
  sight_store_load_run_async (smoke->store, smoke->run_id, NULL, run_loaded_cb, task);
}

static void
close_run (GTask *task)
{
  Smoke *smoke = g_task_get_task_data (task);

  sight_run_recorder_store_log (smoke->recorder, smoke->page);
  if (smoke->error_message != NULL && !smoke->loaded)
    /* The test could not run to a result. */
    sight_run_recorder_close (smoke->recorder, SIGHT_RUN_VERDICT_ERROR,
                              sight_error_code_to_string (smoke->error_code),
                              smoke->error_message, sight_web_page_get_uri (smoke->page),
                              run_finished_cb, task);
  else
    sight_run_recorder_close (smoke->recorder,
                              smoke->failed ? SIGHT_RUN_VERDICT_FAIL : SIGHT_RUN_VERDICT_PASS,
                              NULL, NULL, sight_web_page_get_uri (smoke->page), run_finished_cb,
                              task);
}

/* The recording is complete before the run that links it is closed (a
 * recording that failed is left out, with a message). */
static void
video_kept_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(SightRunRecorder) recorder = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = sight_video_recorder_finish_finish (SIGHT_VIDEO_RECORDER (source),
                                                              result, &error);
  g_autofree char *kept = path != NULL ? sight_run_video_link (recorder, path, &error) : NULL;

  if (kept == NULL)
    g_message ("Smoke run %s: %s", sight_run_recorder_get_run_id (recorder), error->message);
}

static void
video_then_close_cb (GObject      *source,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  GTask *task = user_data;
  Smoke *smoke = g_task_get_task_data (task);

  video_kept_cb (source, result, g_object_ref (smoke->recorder));
  close_run (task);
}

static void
finish_run (GTask *task)
{
  Smoke *smoke = g_task_get_task_data (task);

  if (smoke->video == NULL)
    {
      close_run (task);
      return;
    }
  sight_video_recorder_finish_async (smoke->video, NULL, video_then_close_cb, task);
}

static guint
count_console_errors (Smoke *smoke)
{
  GPtrArray *log = sight_web_page_get_log (smoke->page);
  guint errors = 0;

  for (guint i = 0; i < log->len; i++)
    {
      SightLogEntry *entry = g_ptr_array_index (log, i);

      if (entry->kind == SIGHT_LOG_PAGE_ERROR ||
          (entry->kind == SIGHT_LOG_CONSOLE && g_strcmp0 (entry->level, "error") == 0))
        {
          g_debug ("console error on %s: %s", entry->url, entry->text);
          errors++;
        }
    }
  return errors;
}

static void
smoke_next (GTask *task)
{
  Smoke *smoke = g_task_get_task_data (task);
  GCancellable *cancellable = g_task_get_cancellable (task);

  if (g_cancellable_is_cancelled (cancellable))
    {
      /* The recording still ends whole, and joins the run when it has. */
      if (smoke->video != NULL)
        sight_video_recorder_finish_async (smoke->video, NULL, video_kept_cb,
                                           g_object_ref (smoke->recorder));
      sight_run_recorder_close (smoke->recorder, SIGHT_RUN_VERDICT_INTERRUPTED,
                                "ENVIRONMENT_UNAVAILABLE",
                                "The smoke test was interrupted before it finished", NULL, NULL,
                                NULL);
      g_task_return_error_if_cancelled (task);
      g_object_unref (task);
      return;
    }

  switch (smoke->stage)
    {
    case STAGE_LOAD:
      step_open (smoke, "load", "load the start page", smoke->url);
      smoke->stage++;
      sight_web_page_load_async (smoke->page, smoke->url, SIGHT_WAIT_UNTIL_LOAD, LOAD_TIMEOUT_MS,
                                 cancellable, loaded_cb, task);
      return;

    case STAGE_ACCESSIBILITY:
      smoke->stage++;
      if (!smoke->loaded)
        {
          step_skip (smoke, "accessibility", "check basic accessibility",
                     "The start page did not load");
          smoke_next (task);
          return;
        }
      step_open (smoke, "accessibility", "check basic accessibility", NULL);
      {
        g_autofree char *script = g_strconcat (sight_observation_get_script (), "\n",
                                               sight_page_script ("a11y-check.js"), NULL);

        sight_web_page_evaluate_async (smoke->page, script, NULL, CHECK_TIMEOUT_MS, cancellable,
                                       accessibility_cb, task);
      }
      return;

    case STAGE_LINKS:
      smoke->stage++;
      if (!smoke->loaded || smoke->max_links == 0)
        {
          step_skip (smoke, "links", "check the links of the start page",
                     smoke->loaded ? "maxLinks is 0" : "The start page did not load");
          smoke_next (task);
          return;
        }
      step_open (smoke, "links", "check the links of the start page", NULL);
      /* Same-origin http(s) links, without fragments, each once. */
      sight_web_page_evaluate_async (
        smoke->page,
        "const seen = new Set ();"
        "for (const a of document.querySelectorAll ('a[href]')) {"
        "  let u; try { u = new URL (a.getAttribute ('href'), document.baseURI); } catch (e) { continue; }"
        "  if (u.origin !== location.origin) continue;"
        "  u.hash = ''; seen.add (u.href);"
        "}"
        "return Array.from (seen);",
        NULL, CHECK_TIMEOUT_MS, cancellable, links_found_cb, task);
      return;

    case STAGE_STEPS:
      if (smoke->flow_step >= g_strv_length (smoke->steps))
        {
          smoke->stage++;
          smoke_next (task);
          return;
        }
      if (!smoke->loaded || smoke->flow_failed)
        {
          /* The first failure stops the flow. */
          step_skip (smoke, "do", smoke->steps[smoke->flow_step],
                     smoke->loaded ? "An earlier step failed" : "The start page did not load");
          smoke->flow_step++;
          smoke_next (task);
          return;
        }
      step_open (smoke, "do", smoke->steps[smoke->flow_step], smoke->steps[smoke->flow_step]);
      sight_flow_step_run_async (smoke->page, smoke->steps[smoke->flow_step], STEP_TIMEOUT_MS,
                                 cancellable, flow_step_cb, task);
      return;

    case STAGE_CONSOLE:
      {
        guint errors = count_console_errors (smoke);
        g_autofree char *why = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                                             "%u console error", "%u console errors",
                                                             errors), errors);

        smoke->stage++;
        step_open (smoke, "console", "check the console", NULL);
        step_close (smoke, errors > 0 ? SIGHT_RUN_VERDICT_FAIL : SIGHT_RUN_VERDICT_PASS, NULL,
                    errors > 0 ? why : "No console errors");
        smoke_next (task);
        return;
      }

    case STAGE_EXPECT_TEXT:
      if (smoke->expect_text == NULL || !smoke->loaded)
        {
          smoke->stage++;
          step_skip (smoke, "assert", "assert 1 condition", "expectText was not given");
          smoke_next (task);
          return;
        }
      step_open (smoke, "assert", "assert 1 condition", smoke->expect_text);
      /* Like an expectation in a test, it waits a little for the text: the
       * last step may have started a navigation that is still rendering. */
      sight_page_wait_for_text_async (smoke->page, smoke->expect_text,
                                      g_get_monotonic_time () + EXPECT_WAIT_MS * 1000,
                                      cancellable, expect_text_cb, task);
      return;

    case STAGE_EXPECT_URL:
      smoke->stage++;
      if (smoke->expect_url == NULL || !smoke->loaded)
        step_skip (smoke, "assert", "assert 1 condition", "expectUrl was not given");
      else
        {
          const char *uri = sight_web_page_get_uri (smoke->page);
          gboolean ok = uri != NULL && strstr (uri, smoke->expect_url) != NULL;
          g_autofree char *why = g_strdup_printf (ok ? "The address %s contains “%s”"
                                                     : "The address %s does not contain “%s”",
                                                  uri ? uri : "(none)", smoke->expect_url);

          step_open (smoke, "assert", "assert 1 condition", smoke->expect_url);
          step_close (smoke, ok ? SIGHT_RUN_VERDICT_PASS : SIGHT_RUN_VERDICT_FAIL, NULL, why);
        }
      smoke_next (task);
      return;

    case STAGE_EXPECT_NO_TEXT:
      if (smoke->expect_no_text == NULL || !smoke->loaded)
        {
          smoke->stage++;
          step_skip (smoke, "assert", "assert 1 condition", "expectNoText was not given");
          smoke_next (task);
          return;
        }
      step_open (smoke, "assert", "assert 1 condition", smoke->expect_no_text);
      read_page_text (task);
      return;

    case STAGE_STRICT_LINKS:
      smoke->stage++;
      if (!smoke->strict_links || smoke->link_results->len == 0)
        step_skip (smoke, "links", "check that every link worked",
                   smoke->strict_links ? "No links were checked"
                                       : "strictLinks is false: broken links are findings only");
      else
        {
          g_autoptr(GString) broken = g_string_new (NULL);
          guint n_broken = 0;

          for (guint i = 0; i < smoke->link_results->len; i++)
            {
              LinkResult *link = g_ptr_array_index (smoke->link_results, i);

              if (link->error == NULL && link->status < 400)
                continue;
              if (n_broken++ < 5)
                {
                  if (link->error != NULL)
                    g_string_append_printf (broken, "%s%s (%s)", broken->len ? ", " : "",
                                            link->url, link->error);
                  else
                    g_string_append_printf (broken, "%s%s (HTTP %u)", broken->len ? ", " : "",
                                            link->url, link->status);
                }
            }
          step_open (smoke, "links", "check that every link worked", NULL);
          if (n_broken > 0)
            {
              g_autofree char *why = g_strdup_printf ("%u broken link%s: %s", n_broken,
                                                      n_broken == 1 ? "" : "s", broken->str);

              step_close (smoke, SIGHT_RUN_VERDICT_FAIL, NULL, why);
            }
          else
            step_close (smoke, SIGHT_RUN_VERDICT_PASS, NULL, "Every link worked");
        }
      smoke->stage = STAGE_DONE;
      if (smoke->loaded)
        {
          observe_then_next (task);
          return;
        }
      smoke_next (task);
      return;

    case STAGE_DONE:
    default:
      finish_run (task);
      return;
    }
}

static gboolean
parse_session (JsonObject  *args,
               GError     **error)
{
  JsonNode *node = json_object_get_member (args, "session");
  JsonObject *session;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "session: must be an object");
      return FALSE;
    }
  session = json_node_get_object (node);
  for (guint i = 0; sign_in_args[i] != NULL; i++)
    if (json_object_has_member (session, sign_in_args[i]))
      {
        g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                     "session.%s: Signed-in skill runs are not available yet: remove "
                     "session.%s", sign_in_args[i], sign_in_args[i]);
        return FALSE;
      }
  if (!sight_tool_args_check_known (session, session_args, error))
    {
      g_prefix_error (error, "session.");
      return FALSE;
    }
  /* Session options other than these need a session of their own, which a
   * smoke test does not open yet: refuse rather than ignore them. */
  if (json_object_get_size (session) > 0)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_UNSUPPORTED_CAPABILITY,
                   "session: options for a smoke test's session are not supported yet; "
                   "create_session, then run_task on it");
      return FALSE;
    }
  return TRUE;
}

void
sight_smoke_test_async (SightStore          *store,
                        JsonObject          *args,
                        GCancellable        *cancellable,
                        GAsyncReadyCallback  callback,
                        gpointer             user_data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *run_id = sight_smoke_test_start (store, args, cancellable, callback, user_data,
                                                    &error);

  if (run_id == NULL)
    g_task_report_error (NULL, callback, user_data, sight_smoke_test_start,
                         g_steal_pointer (&error));
}

/* Checks the arguments and opens the run. */
static gboolean
smoke_prepare (Smoke       *smoke,
               JsonObject  *args,
               GError     **error)
{
  const char *url, *expect_text, *expect_url, *expect_no_text;
  gint64 wait_seconds;
  SightRunRecord run = { 0 };

  if (!sight_tool_args_check_known (args, smoke_args, error) ||
      !sight_tool_args_get_url (args, "url", TRUE, &url, error) ||
      !sight_tool_args_get_strv (args, "steps", NULL, 30, 500, none, &smoke->steps, error) ||
      !sight_tool_args_get_string (args, "expectText", 500, &expect_text, error) ||
      !sight_tool_args_get_string (args, "expectUrl", 500, &expect_url, error) ||
      !sight_tool_args_get_string (args, "expectNoText", 500, &expect_no_text, error) ||
      !sight_tool_args_get_int (args, "maxLinks", 50, 0, 200, &smoke->max_links, error) ||
      !sight_tool_args_get_bool (args, "strictLinks", TRUE, &smoke->strict_links, error) ||
      !sight_tool_args_get_int (args, "waitSeconds", 60, 1, 90, &wait_seconds, error) ||
      !parse_session (args, error))
    return FALSE;
  for (char **s = smoke->steps; *s != NULL; s++)
    if (*g_strstrip (*s) == '\0')
      {
        g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                     "steps[%u]: must not be empty", (guint) (s - smoke->steps));
        return FALSE;
      }
  smoke->url = g_strdup (url);
  smoke->expect_text = smoke->expect_text_owned = g_strdup (expect_text);
  smoke->expect_url = smoke->expect_url_owned = g_strdup (expect_url);
  smoke->expect_no_text = smoke->expect_no_text_owned = g_strdup (expect_no_text);

  run.kind = (char *) "smoke";
  run.name = (char *) "Smoke test";
  run.url = smoke->url;
  smoke->recorder = sight_run_recorder_open (smoke->store, &run, error);
  if (smoke->recorder == NULL)
    return FALSE;
  smoke->run_id = g_strdup (sight_run_recorder_get_run_id (smoke->recorder));
  return TRUE;
}

char *
sight_smoke_test_start (SightStore          *store,
                        JsonObject          *args,
                        GCancellable        *cancellable,
                        GAsyncReadyCallback  callback,
                        gpointer             user_data,
                        GError             **error)
{
  GTask *task;
  Smoke *smoke = g_new0 (Smoke, 1);
  char *run_id;

  g_return_val_if_fail (SIGHT_IS_STORE (store), NULL);
  g_return_val_if_fail (args != NULL, NULL);

  smoke->store = g_object_ref (store);
  smoke->links = g_ptr_array_new_with_free_func (g_free);
  smoke->link_results = g_ptr_array_new_with_free_func ((GDestroyNotify) link_result_free);
  if (!smoke_prepare (smoke, args, error))
    {
      smoke_free (smoke);
      return NULL;
    }

  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_smoke_test_start);
  g_task_set_task_data (task, smoke, (GDestroyNotify) smoke_free);
  smoke->page = sight_web_page_new ();
  sight_page_guard (smoke->page, NULL, smoke->url, NULL, NULL);
  {
    /* A smoke test always records; one that cannot still tests. */
    g_autofree char *video_path = sight_run_video_path (smoke->store, smoke->run_id);
    g_autoptr(GError) video_error = NULL;

    smoke->video = sight_video_recorder_new (smoke->page, video_path, &video_error);
    if (smoke->video == NULL)
      g_message ("Smoke run %s is not recorded: %s", smoke->run_id, video_error->message);
  }
  smoke->http = soup_session_new_with_options ("timeout", LINK_TIMEOUT_S,
                                               "user-agent", "Sightline link check", NULL);
  run_id = g_strdup (smoke->run_id);
  smoke_next (task);
  return run_id;
}

JsonNode *
sight_smoke_test_finish (GAsyncResult  *result,
                         GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
