/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-web-page"

#include "config.h"

#include "sight-web-page.h"

#include "sight-error.h"
#include "sight-json.h"
#include "sight-web-page-private.h"

/* ----------------------------------------------------------------------- */
/* Evaluation                                                              */

static void
evaluate_done_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  SightPageOp *op = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JSCValue) value = NULL;

  value = webkit_web_view_evaluate_javascript_finish (WEBKIT_WEB_VIEW (source), result, &error);
  if (!op->done)
    {
      if (value == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        _sight_page_op_complete (op, g_steal_pointer (&error), NULL, NULL);
      else if (value == NULL && op->page != NULL && op->page->terminate_reason != NULL)
        _sight_page_op_complete (op, g_error_new_literal (SIGHT_ERROR,
                                                   SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                                   op->page->terminate_reason),
                                 NULL, NULL);
      else if (value == NULL)
        {
          g_autofree char *message = sight_text_sanitize (error->message, 500);
          gboolean script_error = g_error_matches (error, WEBKIT_JAVASCRIPT_ERROR,
                                                   WEBKIT_JAVASCRIPT_ERROR_SCRIPT_FAILED);

          /* Anything but the script's own exception means the process went away. */
          _sight_page_op_complete (op, g_error_new (SIGHT_ERROR,
                                             script_error ? SIGHT_ERROR_ACTION_FAILED
                                                          : SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                             script_error ? "Script failed: %s"
                                                          : "The page could not run a script: %s",
                                             message),
                                   NULL, NULL);
        }
      else if (g_task_get_source_tag (op->task) == sight_web_page_evaluate_text_async)
        _sight_page_op_complete (op, NULL, jsc_value_to_string (value), g_free);
      else
        {
          g_autofree char *json = jsc_value_to_string (value);
          JsonNode *node = sight_json_parse (json, -1, SIGHT_JSON_MAX_DEPTH_TREE, NULL);

          if (node == NULL)
            node = json_node_new (JSON_NODE_NULL);
          _sight_page_op_complete (op, NULL, node, (GDestroyNotify) json_node_unref);
        }
    }
  _sight_page_op_free (op);
}

static gboolean
evaluate_timeout_cb (gpointer user_data)
{
  SightPageOp *op = user_data;

  op->timeout_source = 0;
  if (op->page == NULL || op->done)
    return G_SOURCE_REMOVE;
  _sight_page_op_timed_out (op, g_error_new (SIGHT_ERROR, SIGHT_ERROR_STEP_TIMEOUT,
                                      "A page script did not finish within %u ms",
                                      op->timeout_ms));
  return G_SOURCE_REMOVE;
}

/* @task's source tag says how the value is returned: parsed or as text. */
static void
evaluate_start (SightWebPage *self,
                const char   *function_body,
                JsonNode     *args,
                guint         timeout_ms,
                GCancellable *cancellable,
                GTask        *task)
{
  g_autoptr(GVariantDict) dict = NULL;
  g_autofree char *args_json = NULL;
  g_autofree char *wrapped = NULL;
  SightPageOp *op;

  /* WebKit starts a new web process only for a load; a script sent before
   * would fail with a confusing "Unsupported result type". */
  if (self->lost_reason != NULL)
    {
      g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                               "%s; the page is blank until it loads again", self->lost_reason);
      return;
    }

  args_json = args != NULL ? json_to_string (args, FALSE) : g_strdup ("null");
  dict = g_variant_dict_new (NULL);
  g_variant_dict_insert (dict, "__sightArgs", "s", args_json);
  /* The body runs as an async function of `args`; its value comes back as
   * JSON text so any JSON-able value crosses intact. */
  wrapped = g_strconcat ("const __sightFn = async function (args) {\n", function_body,
                         "\n};\n"
                         "const __sightValue = await __sightFn (JSON.parse (__sightArgs));\n"
                         "const __sightJson = JSON.stringify (__sightValue);\n"
                         "if (__sightJson === undefined) return 'null';\n"
                         /* Page text is never a C string: a U+0000 would end it
                          * where json-glib hands it on, a lone surrogate would be
                          * invalid UTF-8. Both become U+FFFD, as the HTML
                          * tokenizer and CSS do with U+0000; an escape preceded
                          * by an odd run of backslashes is one of them. */
                         "if (!/\\\\u(?:0000|d[89a-f])/.test (__sightJson)) return __sightJson;\n"
                         "return __sightJson.replace (/(\\\\+)u(?:0000|d[89a-f][0-9a-f]{2})/g,\n"
                         "  (m, b) => b.length % 2 ? b + 'ufffd' : m);",
                         NULL);

  op = _sight_page_op_new (self, task, timeout_ms, cancellable);
  op->freed_by_callback = TRUE;
  if (timeout_ms > 0)
    op->timeout_source = g_timeout_add (timeout_ms, evaluate_timeout_cb, op);
  webkit_web_view_call_async_javascript_function (self->view, wrapped, -1,
                                                  g_variant_dict_end (dict),
                                                  SIGHT_SCRIPT_WORLD, NULL, op->cancellable,
                                                  evaluate_done_cb, op);
}

void
sight_web_page_evaluate_async (SightWebPage        *self,
                               const char          *function_body,
                               JsonNode            *args,
                               guint                timeout_ms,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));
  g_return_if_fail (function_body != NULL);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_web_page_evaluate_async);
  evaluate_start (self, function_body, args, timeout_ms, cancellable, task);
}

void
sight_web_page_evaluate_text_async (SightWebPage        *self,
                                    const char          *function_body,
                                    JsonNode            *args,
                                    guint                timeout_ms,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));
  g_return_if_fail (function_body != NULL);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_web_page_evaluate_text_async);
  evaluate_start (self, function_body, args, timeout_ms, cancellable, task);
}

char *
sight_web_page_evaluate_text_finish (SightWebPage  *self,
                                     GAsyncResult  *result,
                                     GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) ==
                        sight_web_page_evaluate_text_async, NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

JsonNode *
sight_web_page_evaluate_finish (SightWebPage  *self,
                                GAsyncResult  *result,
                                GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
