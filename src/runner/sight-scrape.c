/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-scrape"

#include "config.h"

#include "sight-scrape.h"

#include "sight-error.h"
#include "sight-page-scripts.h"
#include "sight-tool-args.h"

#define WAIT_FOR_TEXT_POLL_MS 100

static const char * const scrape_args[] = {
  "url", "format", "waitUntil", "waitForText", "timeoutMs", "screenshot", NULL
};
static const char * const formats[] = {
  "html", "cleaned_html", "markdown", "readability", NULL
};
static const char * const wait_untils[] = { "domcontentloaded", "load", "networkidle", NULL };
static const char * const default_formats[] = { "markdown", NULL };

typedef struct {
  SightWebPage *page;
  char         *url;
  char        **formats;
  char         *wait_for_text;
  SightWaitUntil wait_until;
  gint64        deadline;
  gboolean      screenshot;
  JsonNode     *scraped;
} ScrapeState;

static void
scrape_state_free (ScrapeState *state)
{
  g_clear_object (&state->page);
  g_free (state->url);
  g_strfreev (state->formats);
  g_free (state->wait_for_text);
  g_clear_pointer (&state->scraped, json_node_unref);
  g_free (state);
}

guint
sight_deadline_remaining_ms (gint64 deadline)
{
  gint64 left = deadline - g_get_monotonic_time ();

  return left <= 0 ? 1 : (guint) MAX (left / 1000, 1);
}

/* wait for text */

typedef struct {
  char   *text;
  gint64  deadline;
  guint   timeout_id;
} WaitState;

static void
wait_state_free (WaitState *state)
{
  g_clear_handle_id (&state->timeout_id, g_source_remove);
  g_free (state->text);
  g_free (state);
}

static void wait_poll (GTask *task);

static gboolean
wait_poll_again_cb (gpointer user_data)
{
  GTask *task = user_data;
  WaitState *state = g_task_get_task_data (task);

  state->timeout_id = 0;
  wait_poll (task);
  return G_SOURCE_REMOVE;
}

static void
wait_evaluate_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  WaitState *state = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) found = NULL;

  found = sight_web_page_evaluate_finish (SIGHT_WEB_PAGE (source), result, &error);
  if (found == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  if (JSON_NODE_HOLDS_VALUE (found) && json_node_get_boolean (found))
    {
      g_task_return_boolean (task, TRUE);
      return;
    }
  if (g_get_monotonic_time () + WAIT_FOR_TEXT_POLL_MS * 1000 >= state->deadline)
    {
      g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_STEP_TIMEOUT,
                               "The text “%s” did not appear on the page in time", state->text);
      return;
    }
  state->timeout_id = g_timeout_add (WAIT_FOR_TEXT_POLL_MS, wait_poll_again_cb,
                                     g_steal_pointer (&task));
}

static void
wait_poll (GTask *task)
{
  WaitState *state = g_task_get_task_data (task);
  g_autoptr(JsonNode) args = json_node_new (JSON_NODE_OBJECT);
  g_autoptr(JsonObject) object = json_object_new ();

  if (g_task_return_error_if_cancelled (task))
    {
      g_object_unref (task);
      return;
    }
  if (g_get_monotonic_time () >= state->deadline)
    {
      g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_STEP_TIMEOUT,
                               "The text “%s” did not appear on the page in time", state->text);
      g_object_unref (task);
      return;
    }
  json_object_set_string_member (object, "text", state->text);
  json_node_set_object (args, object);
  sight_web_page_evaluate_async (g_task_get_source_object (task),
                                 "return !!document.body && "
                                 "(document.body.innerText || '').includes (args.text);",
                                 args, sight_deadline_remaining_ms (state->deadline),
                                 g_task_get_cancellable (task), wait_evaluate_cb, task);
}

void
sight_page_wait_for_text_async (SightWebPage        *page,
                                const char          *text,
                                gint64               deadline,
                                GCancellable        *cancellable,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  GTask *task = g_task_new (page, cancellable, callback, user_data);
  WaitState *state = g_new0 (WaitState, 1);

  g_task_set_source_tag (task, sight_page_wait_for_text_async);
  state->text = g_strdup (text);
  state->deadline = deadline;
  g_task_set_task_data (task, state, (GDestroyNotify) wait_state_free);
  wait_poll (task);
}

gboolean
sight_page_wait_for_text_finish (SightWebPage  *page,
                                 GAsyncResult  *result,
                                 GError       **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

/* scrape */

char *
sight_scrape_script (void)
{
  /* The libraries are plain scripts; the GFM plugin is CommonJS, so it gets
   * an `exports` object of its own. */
  return g_strconcat (sight_page_script ("turndown.js"), "\n",
                      "const turndownPluginGfm = (() => { const exports = {};\n",
                      sight_page_script ("turndown-plugin-gfm.js"),
                      "\nreturn exports; })();\n",
                      sight_page_script ("readability.js"), "\n",
                      sight_page_script ("scrape.js"), NULL);
}

guint
sight_page_status_code (SightWebPage *page)
{
  WebKitWebResource *resource = webkit_web_view_get_main_resource (sight_web_page_get_web_view (page));
  WebKitURIResponse *response = resource ? webkit_web_resource_get_response (resource) : NULL;

  return response ? webkit_uri_response_get_status_code (response) : 0;
}

static void
scrape_finish_result (GTask *task)
{
  ScrapeState *state = g_task_get_task_data (task);
  JsonObject *scraped = json_node_get_object (state->scraped);
  JsonObject *metadata = json_object_get_object_member (scraped, "metadata");
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  json_object_set_int_member (metadata, "statusCode", sight_page_status_code (state->page));

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "url");
  json_builder_add_string_value (builder, sight_web_page_get_uri (state->page));
  for (const char * const *m = (const char * const[]) { "content", "metadata", "links",
                                                        "screenshot", NULL }; *m; m++)
    if (json_object_has_member (scraped, *m))
      {
        json_builder_set_member_name (builder, *m);
        json_builder_add_value (builder, json_node_copy (json_object_get_member (scraped, *m)));
      }
  json_builder_end_object (builder);
  g_task_return_pointer (task, json_builder_get_root (builder), (GDestroyNotify) json_node_unref);
}

static void
scrape_screenshot_cb (GObject      *source,
                      GAsyncResult *result,
                      gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ScrapeState *state = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(SightScreenshot) shot = NULL;
  g_autofree char *base64 = NULL;

  shot = sight_web_page_screenshot_finish (SIGHT_WEB_PAGE (source), result, &error);
  if (shot == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  base64 = g_base64_encode (g_bytes_get_data (shot->bytes, NULL), g_bytes_get_size (shot->bytes));
  json_object_set_string_member (json_node_get_object (state->scraped), "screenshot", base64);
  scrape_finish_result (task);
}

static void
scrape_evaluate_cb (GObject      *source,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ScrapeState *state = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;

  state->scraped = sight_web_page_evaluate_finish (SIGHT_WEB_PAGE (source), result, &error);
  if (state->scraped == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  if (!JSON_NODE_HOLDS_OBJECT (state->scraped))
    {
      g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_INTERNAL,
                               "The scrape script returned no result");
      return;
    }
  if (state->screenshot)
    {
      SightScreenshotOptions options = SIGHT_SCREENSHOT_OPTIONS_INIT;
      GCancellable *cancellable = g_task_get_cancellable (task);

      sight_web_page_screenshot_async (state->page, &options, cancellable,
                                       scrape_screenshot_cb, g_steal_pointer (&task));
      return;
    }
  scrape_finish_result (task);
}

static void
scrape_run_script (GTask *task)
{
  ScrapeState *state = g_task_get_task_data (task);
  g_autofree char *script = sight_scrape_script ();
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) args = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "formats");
  json_builder_begin_array (builder);
  for (char **f = state->formats; *f != NULL; f++)
    json_builder_add_string_value (builder, *f);
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  args = json_builder_get_root (builder);

  sight_web_page_evaluate_async (state->page, script, args, sight_deadline_remaining_ms (state->deadline),
                                 g_task_get_cancellable (task), scrape_evaluate_cb, task);
}

static void
scrape_wait_for_text_cb (GObject      *source,
                         GAsyncResult *result,
                         gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GError) error = NULL;

  if (!sight_page_wait_for_text_finish (SIGHT_WEB_PAGE (source), result, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  scrape_run_script (g_steal_pointer (&task));
}

static void
scrape_load_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ScrapeState *state = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;

  if (!sight_web_page_load_finish (SIGHT_WEB_PAGE (source), result, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  if (state->wait_for_text != NULL)
    {
      GCancellable *cancellable = g_task_get_cancellable (task);

      sight_page_wait_for_text_async (state->page, state->wait_for_text, state->deadline,
                                      cancellable, scrape_wait_for_text_cb,
                                      g_steal_pointer (&task));
      return;
    }
  scrape_run_script (g_steal_pointer (&task));
}

void
sight_scrape_async (JsonObject          *args,
                    GCancellable        *cancellable,
                    GAsyncReadyCallback  callback,
                    gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  g_autoptr(GError) error = NULL;
  ScrapeState *state = g_new0 (ScrapeState, 1);
  const char *url, *wait_until, *wait_for_text;
  gint64 timeout_ms;

  g_task_set_source_tag (task, sight_scrape_async);
  g_task_set_task_data (task, state, (GDestroyNotify) scrape_state_free);

  if (!sight_tool_args_check_known (args, scrape_args, &error) ||
      !sight_tool_args_get_url (args, "url", TRUE, &url, &error) ||
      !sight_tool_args_get_strv (args, "format", formats, 4, 0, default_formats,
                                 &state->formats, &error) ||
      !sight_tool_args_get_choice (args, "waitUntil", wait_untils, "load", &wait_until, &error) ||
      !sight_tool_args_get_string (args, "waitForText", 500, &wait_for_text, &error) ||
      !sight_tool_args_get_int (args, "timeoutMs", 30000, 1000, 120000, &timeout_ms, &error) ||
      !sight_tool_args_get_bool (args, "screenshot", FALSE, &state->screenshot, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  if (state->formats[0] == NULL)
    {
      g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                               "format: must name at least one of html, cleaned_html, "
                               "markdown, readability");
      return;
    }

  state->url = g_strdup (url);
  state->wait_for_text = g_strdup (wait_for_text);
  sight_wait_until_from_string (wait_until, &state->wait_until);
  state->deadline = g_get_monotonic_time () + timeout_ms * 1000;
  state->page = sight_web_page_new ();

  sight_web_page_load_async (state->page, state->url, state->wait_until,
                             sight_deadline_remaining_ms (state->deadline), cancellable, scrape_load_cb,
                             g_steal_pointer (&task));
}

JsonNode *
sight_scrape_finish (GAsyncResult  *result,
                     GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
