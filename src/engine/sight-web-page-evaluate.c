/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-web-page"

#include "config.h"

#include "sight-web-page.h"

#include "sight-error.h"
#include "sight-json.h"
#include "sight-web-page-private.h"

/* ----------------------------------------------------------------------- */
/* Evaluation                                                              */

/* A value whose JSON is longer than this (UTF-16 code units) is kept in the
 * page's script world and read back in slices of this length, one round trip
 * each: WebKit copies a script's result and jsc_value_to_string() converts it
 * on the main thread, which took most of a second for the 9.9 MB of
 * cards-20000's observation (bench/inspector). Slices of 2^19 still
 * blocked it up to 100 ms at load ~20; one of 2^18 is about half that. */
#define SLICE_CHARS (1 << 18)

/* Large results kept in a page at once (a result's slices are read in order,
 * the last one drops it); past it the oldest goes, so a fetch abandoned when
 * its page could no longer be reached costs the page nothing for long. */
#define MAX_KEPT_RESULTS 4

/* The evaluate wrapper's end (@__sightJson holds the value's JSON): a long one
 * stays in the world under an id unique to the document and the answer is
 * "#LENGTH ID", which no JSON text begins with. */
#define KEEP_LARGE_RESULT \
  "if (__sightJson.length <= __sightSliceChars) return __sightJson;\n" \
  "const kept = globalThis.__sightKept || (globalThis.__sightKept = new Map ());\n" \
  "globalThis.__sightKeptCount = (globalThis.__sightKeptCount || 0) + 1;\n" \
  "const id = performance.timeOrigin + '-' + globalThis.__sightKeptCount + '-' +\n" \
  "  Math.random ().toString (36).slice (2);\n" \
  "while (kept.size >= " G_STRINGIFY (MAX_KEPT_RESULTS) ")\n" \
  "  kept.delete (kept.keys ().next ().value);\n" \
  "kept.set (id, __sightJson);\n" \
  "return '#' + __sightJson.length + ' ' + id;"

/* One slice, "END TEXT", from @from up to at most @n code units on, never
 * ending between the two halves of a surrogate pair; null when the result is
 * gone (the page navigated: a new document has a new world). */
static const char slice_script[] =
  "const kept = globalThis.__sightKept;\n"
  "const text = kept !== undefined ? kept.get (id) : undefined;\n"
  "if (text === undefined) return null;\n"
  "let end = Math.min (text.length, from + n);\n"
  "if (end < text.length && (text.charCodeAt (end - 1) & 0xfc00) === 0xd800) end--;\n"
  "if (end >= text.length) kept.delete (id);\n"
  "return end + ' ' + text.slice (from, end);";

static const char discard_script[] = "globalThis.__sightKept?.delete (id);";

/* A large result read slice by slice into @text. */
typedef struct {
  SightPageOp *op;
  GWeakRef     page;     /* to drop the result from the page if the fetch fails */
  GString     *text;
  char        *id;
  guint        length;   /* of the JSON, in UTF-16 code units */
  guint        from;     /* read up to here */
  guint        navigation_count;
} Fetch;

static void
fetch_free (Fetch *fetch)
{
  g_autoptr(SightWebPage) page = g_weak_ref_get (&fetch->page);

  /* Unless the last slice was read (the page dropped it then). */
  if (page != NULL && fetch->from < fetch->length)
    {
      g_autoptr(GVariantDict) dict = g_variant_dict_new (NULL);

      g_variant_dict_insert (dict, "id", "s", fetch->id);
      webkit_web_view_call_async_javascript_function (page->view, discard_script, -1,
                                                      g_variant_dict_end (dict),
                                                      SIGHT_SCRIPT_WORLD, NULL, NULL, NULL, NULL);
    }
  g_weak_ref_clear (&fetch->page);
  if (fetch->text != NULL)
    g_string_free (fetch->text, TRUE);
  g_free (fetch->id);
  _sight_page_op_free (fetch->op);
  g_free (fetch);
}

/* Completes @op with a failed engine call's @error (taken). */
static void
evaluate_fail (SightPageOp *op,
               GError      *error)
{
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    _sight_page_op_complete (op, error, NULL, NULL);
  else if (op->page != NULL && op->page->terminate_reason != NULL)
    {
      _sight_page_op_complete (op, g_error_new_literal (SIGHT_ERROR,
                                                        SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                                                        op->page->terminate_reason),
                               NULL, NULL);
      g_error_free (error);
    }
  else
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
      g_error_free (error);
    }
}

/* Completes @op with the value's whole JSON @json (taken): as text, or
 * parsed, as its task's source tag asks. */
static void
evaluate_return (SightPageOp *op,
                 char        *json)
{
  JsonNode *node;

  if (g_task_get_source_tag (op->task) == sight_web_page_evaluate_text_async)
    {
      _sight_page_op_complete (op, NULL, json, g_free);
      return;
    }
  node = sight_json_parse (json, -1, SIGHT_JSON_MAX_DEPTH_TREE, NULL);
  g_free (json);
  if (node == NULL)
    node = json_node_new (JSON_NODE_NULL);
  _sight_page_op_complete (op, NULL, node, (GDestroyNotify) json_node_unref);
}

static void fetch_next (Fetch *fetch);

static void
slice_done_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  Fetch *fetch = user_data;
  SightPageOp *op = fetch->op;
  g_autoptr(GError) error = NULL;
  g_autoptr(JSCValue) value = NULL;
  g_autofree char *slice = NULL;
  guint64 end = 0;
  char *rest = NULL;

  value = webkit_web_view_evaluate_javascript_finish (WEBKIT_WEB_VIEW (source), result, &error);
  if (op->done)
    {
      fetch_free (fetch);
      return;
    }
  if (value == NULL)
    {
      evaluate_fail (op, g_steal_pointer (&error));
      fetch_free (fetch);
      return;
    }
  if (jsc_value_is_string (value))
    {
      slice = jsc_value_to_string (value);
      end = g_ascii_strtoull (slice, &rest, 10);
    }
  /* Never part of a tree: a new document (its world has no such result), or
   * any main-frame load since the value was taken, is an error. */
  if (slice == NULL || rest == slice || *rest != ' ' || end <= fetch->from ||
      end > fetch->length ||
      _sight_web_page_get_navigation_count (op->page) != fetch->navigation_count)
    {
      _sight_page_op_complete (op, g_error_new (SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED,
                                                "The page navigated away while the script's "
                                                "result was read (%u of %u characters)",
                                                fetch->from, fetch->length),
                               NULL, NULL);
      fetch_free (fetch);
      return;
    }
  g_string_append (fetch->text, rest + 1);
  fetch->from = (guint) end;
  if (fetch->from < fetch->length)
    {
      fetch_next (fetch);
      return;
    }
  evaluate_return (op, g_string_free (g_steal_pointer (&fetch->text), FALSE));
  fetch_free (fetch);
}

static void
fetch_next (Fetch *fetch)
{
  SightPageOp *op = fetch->op;
  g_autoptr(GVariantDict) dict = g_variant_dict_new (NULL);

  g_variant_dict_insert (dict, "id", "s", fetch->id);
  g_variant_dict_insert (dict, "from", "u", fetch->from);
  g_variant_dict_insert (dict, "n", "u", op->page->slice_chars > 0 ? op->page->slice_chars
                                                                   : SLICE_CHARS);
  webkit_web_view_call_async_javascript_function (op->page->view, slice_script, -1,
                                                  g_variant_dict_end (dict),
                                                  SIGHT_SCRIPT_WORLD, NULL, op->cancellable,
                                                  slice_done_cb, fetch);
}

/* "#LENGTH ID" (KEEP_LARGE_RESULT): reads the result in slices, under the
 * evaluation's deadline. FALSE when @answer is the JSON itself. */
static gboolean
fetch_start (SightPageOp *op,
             const char  *answer)
{
  guint64 length;
  char *id = NULL;
  Fetch *fetch;

  if (answer[0] != '#')
    return FALSE;
  length = g_ascii_strtoull (answer + 1, &id, 10);
  if (*id != ' ' || length == 0 || length > G_MAXUINT)
    return FALSE;
  fetch = g_new0 (Fetch, 1);
  fetch->op = op;
  g_weak_ref_init (&fetch->page, op->page);
  fetch->text = g_string_sized_new (length + length / 8);
  fetch->id = g_strdup (id + 1);
  fetch->length = (guint) length;
  fetch->navigation_count = _sight_web_page_get_navigation_count (op->page);
  fetch_next (fetch);
  return TRUE;
}

static void
evaluate_done_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  SightPageOp *op = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JSCValue) value = NULL;
  g_autofree char *answer = NULL;

  value = webkit_web_view_evaluate_javascript_finish (WEBKIT_WEB_VIEW (source), result, &error);
  if (op->done)
    ;
  else if (value == NULL)
    evaluate_fail (op, g_steal_pointer (&error));
  else
    {
      answer = jsc_value_to_string (value);
      if (op->page != NULL)
        op->page->last_answer = g_get_monotonic_time ();
      /* The fetch owns the op from here. */
      if (fetch_start (op, answer))
        return;
      evaluate_return (op, g_steal_pointer (&answer));
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
  g_variant_dict_insert (dict, "__sightSliceChars", "u",
                         self->slice_chars > 0 ? self->slice_chars : SLICE_CHARS);
  /* The body runs as an async function of `args`; its value comes back as
   * JSON text so any JSON-able value crosses intact. */
  wrapped = g_strconcat ("const __sightFn = async function (args) {\n", function_body,
                         "\n};\n"
                         "const __sightValue = await __sightFn (JSON.parse (__sightArgs));\n"
                         "let __sightJson = JSON.stringify (__sightValue);\n"
                         "if (__sightJson === undefined) return 'null';\n"
                         /* Page text is never a C string: a U+0000 would end it
                          * where json-glib hands it on, a lone surrogate would be
                          * invalid UTF-8. Both become U+FFFD, as the HTML
                          * tokenizer and CSS do with U+0000; an escape preceded
                          * by an odd run of backslashes is one of them. */
                         "if (/\\\\u(?:0000|d[89a-f])/.test (__sightJson))\n"
                         "  __sightJson = __sightJson.replace (/(\\\\+)u(?:0000|d[89a-f][0-9a-f]{2})/g,\n"
                         "    (m, b) => b.length % 2 ? b + 'ufffd' : m);\n",
                         KEEP_LARGE_RESULT,
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

void
_sight_web_page_set_slice_chars (SightWebPage *self,
                                 guint         chars)
{
  g_return_if_fail (SIGHT_IS_WEB_PAGE (self));
  self->slice_chars = chars;
}
