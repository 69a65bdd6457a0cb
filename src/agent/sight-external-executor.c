/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-external-executor"

#include "config.h"

#include "sight-external-executor.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "sight-error.h"
#include "sight-json-schema.h"
#include "sight-json.h"
#include "sight-params.h"
#include "sight-secret-fill.h"
#include "sight-secrets.h"
#include "sight-step-act.h"
#include "sight-usage.h"

/* The protocol's version, sent in step/run. */
#define PROTOCOL_VERSION 1
/* The longest line an executor may write. */
#define MAX_LINE_BYTES (1024 * 1024)
/* After step/finish: how long the executor has to exit on its own once its
 * stdin closed, before its group is killed. */
#define EXIT_GRACE_MS 1000
/* After the executor exited or closed its stdout, before step/finish: how long
 * what it wrote last is still read. */
#define DRAIN_GRACE_MS 500
/* JSON-RPC 2.0 error codes; -32000 is a step's refusal with a Sightline code
 * in its data. */
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS   -32602
#define RPC_STEP_ERROR       -32000

/* The variables an executor gets from Sightline's environment; the rest (API
 * keys, credentials' values) stay out. */
static const char * const passed_env[] = {
  "PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TMPDIR", "TZ", NULL
};

/* The page actions page/perform takes, by act's tool names and schemas. */
static const char * const perform_actions[] = {
  "click", "fill", "press", "select", "check", "hover", "scroll", NULL
};

typedef struct {
  gatomicrefcount    ref_count;
  /* borrowed until the step ends (NULL after) */
  SightStepContext  *ctx;
  GTask             *task;

  /* owned */
  GSubprocess       *process;
  int                pgid;
  GDataInputStream  *reader;
  GOutputStream     *writer;
  GCancellable      *io_cancellable;
  GQueue             out_queue;     /* of GBytes, whole lines */
  GBytes            *out_writing;
  gboolean           close_after_writes;
  GSource           *deadline_source;
  GSource           *grace_source;
  GSource           *cancel_source;
  JsonNode          *tools;         /* act's tools: the schemas of the calls */

  guint              line_no;
  gboolean           reading;
  gboolean           eof;
  gboolean           reaped;
  gboolean           ended;
  /* a page request is running on the context */
  gboolean           page_busy;
  char              *exit_reason;

  /* the request being answered */
  JsonNode          *request_id;
  /* the latest observation given, and the latest screenshot's */
  SightObservation  *held;
  SightObservation  *shot_observation;
  double             shot_scale;

  /* the action of a page/perform or page/tapAt while it runs */
  SightStepAction    pending;
  /* model calls budget/modelCall granted whose usage was not reported yet */
  guint              unreported_calls;
} Exec;

static Exec *
exec_ref (Exec *exec)
{
  g_atomic_ref_count_inc (&exec->ref_count);
  return exec;
}

static void
source_clear (GSource **source)
{
  if (*source != NULL)
    g_source_destroy (*source);
  g_clear_pointer (source, g_source_unref);
}

static void
exec_unref (Exec *exec)
{
  if (!g_atomic_ref_count_dec (&exec->ref_count))
    return;
  source_clear (&exec->deadline_source);
  source_clear (&exec->grace_source);
  source_clear (&exec->cancel_source);
  g_clear_object (&exec->process);
  g_clear_object (&exec->reader);
  g_clear_object (&exec->writer);
  g_clear_object (&exec->io_cancellable);
  g_queue_clear_full (&exec->out_queue, (GDestroyNotify) g_bytes_unref);
  g_clear_pointer (&exec->out_writing, g_bytes_unref);
  g_clear_pointer (&exec->tools, json_node_unref);
  g_clear_pointer (&exec->request_id, json_node_unref);
  g_clear_object (&exec->held);
  g_clear_object (&exec->shot_observation);
  g_free (exec->exit_reason);
  sight_step_action_clear (&exec->pending);
  g_free (exec);
}

/* Ending: the whole process group goes, and the step returns once the
 * executor was reaped and no page request holds the context. */

static void
kill_group (Exec *exec)
{
  if (exec->pgid > 0 && kill (-exec->pgid, SIGKILL) != 0 && errno != ESRCH)
    g_debug ("killing the executor's group %d: %s", exec->pgid, g_strerror (errno));
  if (exec->process != NULL && !exec->reaped)
    g_subprocess_force_exit (exec->process);
}

static void
exec_maybe_return (Exec *exec)
{
  GTask *task = exec->task;

  if (!exec->ended || !exec->reaped || exec->page_busy || task == NULL)
    return;
  exec->task = NULL;
  exec->ctx = NULL;
  source_clear (&exec->grace_source);
  g_cancellable_cancel (exec->io_cancellable);
  g_task_return_boolean (task, TRUE);
  g_object_unref (task);
}

static void closed_cb (GObject      *source,
                       GAsyncResult *result,
                       gpointer      user_data);

static gboolean
exit_grace_cb (gpointer user_data)
{
  Exec *exec = user_data;

  source_clear (&exec->grace_source);
  kill_group (exec);
  return G_SOURCE_REMOVE;
}

static void
arm_grace (Exec        *exec,
           guint        ms,
           GSourceFunc  func)
{
  source_clear (&exec->grace_source);
  exec->grace_source = g_timeout_source_new (ms);
  g_source_set_callback (exec->grace_source, func, exec, NULL);
  g_source_attach (exec->grace_source, g_main_context_get_thread_default ());
}

static void
close_stdin (Exec *exec)
{
  exec->close_after_writes = FALSE;
  g_output_stream_close_async (exec->writer, G_PRIORITY_DEFAULT, NULL, closed_cb,
                               exec_ref (exec));
}

/* The step is over, with @error (taken) as its outcome when it failed. A
 * @graceful end (step/finish) lets the executor read the reply and exit;
 * any other end kills its group now. */
static void
exec_end (Exec     *exec,
          GError   *error,
          gboolean  graceful)
{
  if (exec->ended)
    {
      g_clear_error (&error);
      return;
    }
  exec->ended = TRUE;
  if (exec->unreported_calls > 0)
    {
      SightUsage unknown;

      /* A call whose tokens nobody reported leaves the sum an upper bound. */
      sight_usage_init (&unknown);
      unknown.token_accounting = SIGHT_TOKEN_ACCOUNTING_ADAPTER_UPPER_BOUND;
      sight_usage_add (&exec->ctx->result->usage, &unknown);
    }
  if (error != NULL)
    sight_step_result_take_error (exec->ctx->result, error);
  source_clear (&exec->deadline_source);
  source_clear (&exec->grace_source);
  source_clear (&exec->cancel_source);
  if (graceful && !exec->reaped)
    {
      if (exec->out_writing == NULL)
        close_stdin (exec);
      else
        exec->close_after_writes = TRUE;
      arm_grace (exec, EXIT_GRACE_MS, exit_grace_cb);
    }
  else
    {
      g_cancellable_cancel (exec->io_cancellable);
      kill_group (exec);
    }
  exec_maybe_return (exec);
}

G_GNUC_PRINTF (3, 4)
static void
exec_fail (Exec           *exec,
           SightErrorCode  code,
           const char     *format,
           ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  exec_end (exec, g_error_new_literal (SIGHT_ERROR, code, message), FALSE);
}

/* Writing: one line at a time, in order. */

static void write_next (Exec *exec);

static void
closed_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  Exec *exec = user_data;

  g_output_stream_close_finish (G_OUTPUT_STREAM (source), result, NULL);
  exec_unref (exec);
}

static void
written_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  Exec *exec = user_data;
  g_autoptr(GError) error = NULL;

  g_clear_pointer (&exec->out_writing, g_bytes_unref);
  if (!g_output_stream_write_all_finish (G_OUTPUT_STREAM (source), result, NULL, &error))
    {
      /* A closed stdin is the executor gone: its exit or EOF says so. */
      g_debug ("writing to the executor: %s", error->message);
      g_queue_clear_full (&exec->out_queue, (GDestroyNotify) g_bytes_unref);
    }
  write_next (exec);
  exec_unref (exec);
}

static void
write_next (Exec *exec)
{
  gsize size;
  gconstpointer data;

  if (exec->out_writing != NULL || g_cancellable_is_cancelled (exec->io_cancellable))
    return;
  exec->out_writing = g_queue_pop_head (&exec->out_queue);
  if (exec->out_writing == NULL)
    {
      if (exec->close_after_writes)
        close_stdin (exec);
      return;
    }
  data = g_bytes_get_data (exec->out_writing, &size);
  g_output_stream_write_all_async (exec->writer, data, size, G_PRIORITY_DEFAULT,
                                   exec->io_cancellable, written_cb, exec_ref (exec));
}

/* Sends @message (taken) redacted of every known secret value; @data, when
 * given, is set afterwards as the "data" member of its "result" (a masked
 * screenshot's base64, which is pixels, not text to redact). */
static void
send_message (Exec       *exec,
              JsonObject *message,
              char       *data)
{
  g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), message);
  g_autoptr(JsonNode) redacted = sight_secrets_redact_json (node);
  g_autofree char *text = NULL;
  GString *line;

  json_object_unref (message);
  if (data != NULL)
    json_object_set_string_member (json_object_get_object_member (json_node_get_object (redacted),
                                                                  "result"),
                                   "data", data);
  g_free (data);
  text = json_to_string (redacted, FALSE);
  line = g_string_new (text);
  g_string_append_c (line, '\n');
  g_queue_push_tail (&exec->out_queue, g_string_free_to_bytes (line));
  write_next (exec);
}

static JsonObject *
message_new (void)
{
  JsonObject *message = json_object_new ();

  json_object_set_string_member (message, "jsonrpc", "2.0");
  return message;
}

static void read_next (Exec *exec);

/* Answers the request being handled with @result (taken) and reads on. */
static void
reply_result_with_data (Exec       *exec,
                        JsonObject *result,
                        char       *data)
{
  JsonObject *message = message_new ();

  json_object_set_member (message, "id", g_steal_pointer (&exec->request_id));
  json_object_set_object_member (message, "result", result);
  send_message (exec, message, data);
  if (!exec->ended)
    read_next (exec);
}

static void
reply_result (Exec       *exec,
              JsonObject *result)
{
  reply_result_with_data (exec, result, NULL);
}

/* Answers with a JSON-RPC error; @sight_code, when not NULL, names a code
 * of Sightline's (an error code or a vision degradation) in its data. */
G_GNUC_PRINTF (4, 5)
static void
reply_error (Exec       *exec,
             int         code,
             const char *sight_code,
             const char *format,
             ...)
{
  JsonObject *message = message_new ();
  JsonObject *error = json_object_new ();
  g_autofree char *text = NULL;
  va_list args;

  va_start (args, format);
  text = g_strdup_vprintf (format, args);
  va_end (args);
  json_object_set_member (message, "id", g_steal_pointer (&exec->request_id));
  json_object_set_int_member (error, "code", code);
  json_object_set_string_member (error, "message", text);
  if (sight_code != NULL)
    {
      JsonObject *data = json_object_new ();

      json_object_set_string_member (data, "code", sight_code);
      json_object_set_object_member (error, "data", data);
    }
  json_object_set_object_member (message, "error", error);
  send_message (exec, message, NULL);
  if (!exec->ended)
    read_next (exec);
}

/* Answers the request with the step's end (@error, taken): the executor
 * learns why, and the step ends with it. */
static void
reply_and_end (Exec   *exec,
               GError *error)
{
  const char *code = error->domain == SIGHT_ERROR ? sight_error_code_to_string (error->code)
                                                  : NULL;

  exec->ended = TRUE;   /* no more reading */
  reply_error (exec, RPC_STEP_ERROR, code, "%s", error->message);
  exec->ended = FALSE;
  exec_end (exec, error, FALSE);
}

/* A page request (page/observe, page/screenshot, page/perform, page/tapAt)
 * ended, with @error (taken) when it failed: whether its handler answers it.
 * Not when the step ended meanwhile, nor after a failure, which is answered
 * here: with the step's end when @ends_step, else as a refusal naming
 * Sightline's code, and the step goes on. */
static gboolean
page_request_done (Exec     *exec,
                   GError   *error,
                   gboolean  ends_step)
{
  exec->page_busy = FALSE;
  if (exec->ended)
    {
      g_clear_error (&error);
      sight_step_action_clear (&exec->pending);
      exec_maybe_return (exec);
      return FALSE;
    }
  if (error == NULL)
    return TRUE;
  sight_step_action_clear (&exec->pending);
  if (ends_step)
    reply_and_end (exec, error);
  else
    {
      reply_error (exec, RPC_STEP_ERROR,
                   error->domain == SIGHT_ERROR ? sight_error_code_to_string (error->code) : NULL,
                   "the action failed: %s", error->message);
      g_error_free (error);
    }
  return FALSE;
}

static void
emit_budget (SightStepContext *ctx)
{
  ctx->hooks->budget_changed (ctx->hooks_data, sight_budget_get_model_calls (ctx->budget),
                              sight_budget_get_actions (ctx->budget),
                              sight_budget_remaining_ms (ctx->budget));
}

/* page/observe */

static void
observed_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  Exec *exec = user_data;
  SightStepContext *ctx = exec->ctx;
  GError *error = NULL;
  g_autoptr(SightObservation) observation = sight_step_context_observe_finish (ctx, result, NULL,
                                                                              &error);
  JsonObject *reply;
  JsonNode *tree;
  int width = 0, height = 0;

  if (!page_request_done (exec, error, TRUE))
    {
      exec_unref (exec);
      return;
    }
  ctx->hooks->observed (ctx->hooks_data, observation);
  g_set_object (&exec->held, observation);
  sight_observation_get_viewport (observation, &width, &height, NULL, NULL);
  reply = json_object_new ();
  json_object_set_string_member (reply, "url", sight_observation_get_url (observation) ?: "");
  json_object_set_string_member (reply, "title", sight_observation_get_title (observation) ?: "");
  json_object_set_string_member (reply, "text", sight_observation_get_text (observation) ?: "");
  tree = sight_observation_get_tree (observation);
  json_object_set_member (reply, "tree", tree != NULL ? json_node_copy (tree)
                                                      : json_node_new (JSON_NODE_NULL));
  json_object_set_int_member (reply, "viewportWidth", width);
  json_object_set_int_member (reply, "viewportHeight", height);
  reply_result (exec, reply);
  exec_unref (exec);
}

static void
handle_observe (Exec       *exec,
                JsonObject *params)
{
  exec->page_busy = TRUE;
  sight_step_context_observe_async (exec->ctx, FALSE, observed_cb, exec_ref (exec));
}

/* page/screenshot */

static void
degrade (Exec       *exec,
         const char *reason)
{
  SightStepResult *result = exec->ctx->result;

  g_free (result->vision_degraded);
  result->vision_degraded = g_strdup (reason);
}

static void
screenshot_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  Exec *exec = user_data;
  SightStepContext *ctx = exec->ctx;
  gboolean no_pixels = FALSE;
  GError *error = NULL;
  g_autoptr(SightObservation) observation = sight_step_context_observe_finish (ctx, result,
                                                                              &no_pixels, &error);
  const SightScreenshot *shot;
  JsonObject *reply;
  gsize size;
  gconstpointer data;

  if (!page_request_done (exec, error, TRUE))
    {
      exec_unref (exec);
      return;
    }
  shot = sight_observation_get_screenshot (observation);
  if (no_pixels || shot == NULL)
    {
      degrade (exec, "UNSUPPORTED_CAPABILITY");
      reply_error (exec, RPC_STEP_ERROR, "UNSUPPORTED_CAPABILITY", "no screenshot could be taken");
    }
  else if (!sight_observation_masking_proven (observation))
    {
      degrade (exec, "MASKING_UNPROVEN");
      reply_error (exec, RPC_STEP_ERROR, "MASKING_UNPROVEN",
                   "the screenshot is withheld: not every secure field could be masked");
    }
  else
    {
      ctx->hooks->observed (ctx->hooks_data, observation);
      g_set_object (&exec->held, observation);
      g_set_object (&exec->shot_observation, observation);
      exec->shot_scale = shot->scale;
      data = g_bytes_get_data (shot->bytes, &size);
      ctx->result->vision_input = TRUE;
      ctx->result->images_sent++;
      ctx->result->pixel_bytes += size;
      reply = json_object_new ();
      json_object_set_string_member (reply, "mimeType", sight_screenshot_get_mime_type (shot));
      json_object_set_int_member (reply, "width", shot->width);
      json_object_set_int_member (reply, "height", shot->height);
      json_object_set_double_member (reply, "scale", shot->scale);
      reply_result_with_data (exec, reply, g_base64_encode (data, size));
    }
  exec_unref (exec);
}

static void
handle_screenshot (Exec       *exec,
                   JsonObject *params)
{
  /* A secret filled in the attempt withholds every later screenshot. */
  if (sight_step_context_secret_filled (exec->ctx))
    {
      degrade (exec, "PIXEL_TAINTED");
      reply_error (exec, RPC_STEP_ERROR, "PIXEL_TAINTED",
                   "a secret was filled in this attempt, so screenshots are withheld; work "
                   "from the tree");
      return;
    }
  exec->page_busy = TRUE;
  sight_step_context_observe_async (exec->ctx, TRUE, screenshot_cb, exec_ref (exec));
}

/* page/perform and page/tapAt: an action committed the step context's one
 * way, as act commits its actions (sight_step_context_commit_action_async). */

static void
committed_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  Exec *exec = user_data;
  SightStepContext *ctx = exec->ctx;
  gboolean ends_step = FALSE;
  GError *error = NULL;
  g_autoptr(JsonObject) reply = sight_step_context_commit_action_finish (ctx, result, &ends_step,
                                                                         &error);
  JsonObject *answer;

  if (!page_request_done (exec, error, ends_step))
    {
      exec_unref (exec);
      return;
    }
  answer = json_object_new ();
  json_object_set_string_member (answer, "done", exec->pending.log_line);
  json_object_set_int_member (answer, "actions", sight_budget_get_actions (ctx->budget));
  for (const char * const *m = (const char * const[]) { "navigated", "url", "settled", "settleMs",
                                                        "popups", "tapped", "under", NULL };
       *m != NULL; m++)
    if (json_object_has_member (reply, *m))
      json_object_set_member (answer, *m, json_node_copy (json_object_get_member (reply, *m)));
  sight_step_action_clear (&exec->pending);
  reply_result (exec, answer);
  exec_unref (exec);
}

/* Commits the action set up in exec->pending; the exec reference goes on to
 * committed_cb. */
static void
begin_action (Exec *exec)
{
  exec->page_busy = TRUE;
  sight_step_context_commit_action_async (exec->ctx, &exec->pending, committed_cb,
                                          exec_ref (exec));
}

/* Checks @args against @schema (taken), the params of @what; FALSE after
 * answering why. */
static gboolean
check_params (Exec            *exec,
              SightJsonSchema *schema,
              const char      *what,
              JsonNode        *args)
{
  g_autoptr(SightJsonSchema) owned = schema;
  g_autoptr(GPtrArray) problems = NULL;
  g_autofree char *why = NULL;

  g_assert (schema != NULL);
  if (sight_json_schema_validate (schema, args, &problems))
    return TRUE;
  why = sight_json_schema_errors_to_string (problems);
  reply_error (exec, RPC_INVALID_PARAMS, NULL, "invalid params for %s: %s", what, why);
  return FALSE;
}

/* Checks @args against act's schema of @tool; FALSE after answering why. */
static gboolean
check_args (Exec       *exec,
            const char *tool,
            JsonNode   *args)
{
  JsonArray *tools = json_node_get_array (exec->tools);
  SightJsonSchema *schema = NULL;

  for (guint i = 0; i < json_array_get_length (tools) && schema == NULL; i++)
    {
      JsonObject *definition = json_array_get_object_element (tools, i);

      if (g_strcmp0 (json_object_get_string_member (definition, "name"), tool) == 0)
        schema = sight_json_schema_new (json_object_get_member (definition, "parameters"), NULL);
    }
  return check_params (exec, schema, tool, args);
}

static void
handle_perform (Exec       *exec,
                JsonObject *params)
{
  SightStepContext *ctx = exec->ctx;
  SightStepAction *pending = &exec->pending;
  const char *action = json_object_get_string_member_with_default (params, "action", NULL);
  g_autoptr(JsonObject) args = json_object_new ();
  g_autoptr(JsonNode) args_node = NULL;
  g_autofree char *label = NULL;
  g_autofree char *value_text = NULL;
  JsonNode *step_params = ctx->request->options->params;
  const char *ref, *param, *value;
  const char *verb;
  SightActionKind kind;
  JsonObject *node = NULL;
  JsonObjectIter iter;
  const char *key;
  JsonNode *member;

  if (action == NULL || !g_strv_contains (perform_actions, action))
    {
      reply_error (exec, RPC_INVALID_PARAMS, NULL, "page/perform takes an action: one of click, "
                   "fill, press, select, check, hover, scroll");
      return;
    }
  json_object_iter_init (&iter, params);
  while (json_object_iter_next (&iter, &key, &member))
    if (!g_str_equal (key, "action"))
      json_object_set_member (args, key, json_node_copy (member));
  args_node = json_node_init_object (json_node_alloc (), args);
  if (!check_args (exec, action, args_node))
    return;

  ref = json_object_get_string_member_with_default (args, "ref", NULL);
  if (ref != NULL)
    {
      node = exec->held != NULL ? sight_observation_lookup (exec->held, ref) : NULL;
      if (node == NULL)
        {
          reply_error (exec, RPC_INVALID_PARAMS, NULL, "there is no element %s in the latest "
                       "observation (call page/observe first)", ref);
          return;
        }
      label = sight_observation_node_line (node);
    }

  verb = action;
  sight_step_action_clear (pending);
  for (guint i = 0; perform_actions[i] != NULL; i++)
    if (g_str_equal (perform_actions[i], action))
      pending->tool = perform_actions[i];
  pending->record_args = json_node_copy (args_node);
  if (g_str_equal (action, "fill"))
    {
      param = json_object_get_string_member_with_default (args, "param", NULL);
      value = json_object_get_string_member_with_default (args, "value", NULL);
      if (param != NULL)
        {
          JsonNode *entry = NULL;
          const char *secret_name = NULL;

          if (step_params != NULL && JSON_NODE_HOLDS_OBJECT (step_params))
            entry = json_object_get_member (json_node_get_object (step_params), param);
          if (entry == NULL || (!sight_params_is_secret (entry, &secret_name) &&
                                (!JSON_NODE_HOLDS_VALUE (entry) ||
                                 json_node_get_value_type (entry) != G_TYPE_STRING)))
            {
              sight_step_action_clear (pending);
              reply_error (exec, RPC_INVALID_PARAMS, NULL, "there is no string or Secret param "
                           "\"%s\"", param);
              return;
            }
          if (secret_name != NULL)
            {
              /* A credential or origin refused ends the step, nothing typed. */
              pending->secret_name = g_strdup (secret_name);
              pending->param = g_strdup (param);
              pending->log_line = g_strdup_printf ("fill %s with the secret %s", label,
                                                   secret_name);
              sight_action_init (&pending->action, SIGHT_ACTION_FILL);
              pending->action.ref = g_strdup (ref);
              begin_action (exec);
              return;
            }
          value_text = g_strdup (json_node_get_string (entry));
        }
      else if (value != NULL)
        value_text = g_strdup (value);
      else
        {
          sight_step_action_clear (pending);
          reply_error (exec, RPC_INVALID_PARAMS, NULL, "fill needs value or param");
          return;
        }
      /* Typed into a secure field, the value is a secret from here on. */
      sight_secret_fill_note_typed (json_object_get_boolean_member_with_default (node, "secure",
                                                                                 FALSE),
                                    param, value_text);
      pending->log_line = g_strdup_printf ("fill %s with \"%s\"", label, value_text);
    }
  else if (g_str_equal (action, "press"))
    {
      value_text = g_strdup (json_object_get_string_member (args, "key"));
      pending->log_line = label != NULL ? g_strdup_printf ("press %s on %s", value_text, label)
                                        : g_strdup_printf ("press %s", value_text);
    }
  else if (g_str_equal (action, "select"))
    {
      value_text = g_strdup (json_object_get_string_member (args, "option"));
      pending->log_line = g_strdup_printf ("select \"%s\" in %s", value_text, label);
    }
  else if (g_str_equal (action, "check"))
    {
      verb = json_object_get_boolean_member_with_default (args, "checked", TRUE) ? "check"
                                                                                 : "uncheck";
      pending->log_line = g_strdup_printf ("%s %s", verb, label);
    }
  else if (g_str_equal (action, "scroll"))
    {
      value_text = g_strdup (json_object_get_string_member_with_default (args, "direction", NULL));
      pending->log_line = label != NULL ? g_strdup_printf ("scroll to %s", label)
                                        : g_strdup_printf ("scroll %s", value_text ?: "down");
    }
  else
    pending->log_line = g_strdup_printf ("%s %s", action, label);
  if (!sight_action_kind_from_nick (verb, &kind))
    {
      sight_step_action_clear (pending);
      reply_error (exec, RPC_INVALID_PARAMS, NULL, "“%s” is not an action", verb);
      return;
    }
  sight_action_init (&pending->action, kind);
  pending->action.ref = g_strdup (ref);
  pending->action.value = g_steal_pointer (&value_text);
  begin_action (exec);
}

static void
handle_tap_at (Exec       *exec,
               JsonObject *params)
{
  g_autoptr(JsonNode) args = json_node_init_object (json_node_alloc (), params);
  SightStepAction *pending = &exec->pending;
  double x, y, cx, cy;
  int vw = 0, vh = 0;

  if (!check_args (exec, "tap_at", args))
    return;
  if (exec->shot_observation == NULL || exec->shot_scale <= 0)
    {
      reply_error (exec, RPC_INVALID_PARAMS, NULL, "page/tapAt takes a point in the latest "
                   "screenshot: call page/screenshot first");
      return;
    }
  x = json_object_get_double_member (params, "x");
  y = json_object_get_double_member (params, "y");
  /* The point is in the screenshot's pixels; the harness scales it back. */
  cx = x / exec->shot_scale;
  cy = y / exec->shot_scale;
  sight_observation_get_viewport (exec->shot_observation, &vw, &vh, NULL, NULL);
  if ((vw > 0 && cx >= vw) || (vh > 0 && cy >= vh))
    {
      reply_error (exec, RPC_INVALID_PARAMS, NULL, "the point (%g, %g) is outside the screenshot",
                   x, y);
      return;
    }
  sight_step_action_clear (pending);
  pending->tool = "tap_at";
  pending->record_args = json_node_copy (args);
  pending->log_line = g_strdup_printf ("tap_at (%.0f, %.0f) → (%.0f, %.0f) CSS px", x, y, cx, cy);
  sight_action_init (&pending->action, SIGHT_ACTION_TAP_AT);
  pending->action.x = cx;
  pending->action.y = cy;
  begin_action (exec);
}

/* budget/modelCall: the executor's own model request, taken from the step's
 * budget before it is made and counted in the step's usage; its tokens and
 * cost come with budget/modelUsage once it was made. */
static void
handle_model_call (Exec       *exec,
                   JsonObject *params)
{
  SightStepContext *ctx = exec->ctx;
  const SightBudgetLimits *limits = sight_budget_get_limits (ctx->budget);
  GError *error = NULL;
  SightUsage call;
  JsonObject *reply;

  if (!sight_budget_take_model_call (ctx->budget, &error))
    {
      reply_and_end (exec, error);
      return;
    }
  ctx->result->model_calls = sight_budget_get_model_calls (ctx->budget);
  sight_usage_init (&call);
  call.model_calls = 1;
  sight_usage_add (&ctx->result->usage, &call);
  exec->unreported_calls++;
  emit_budget (ctx);
  reply = json_object_new ();
  json_object_set_int_member (reply, "modelCalls", sight_budget_get_model_calls (ctx->budget));
  json_object_set_int_member (reply, "remaining",
                              limits->max_model_calls - sight_budget_get_model_calls (ctx->budget));
  reply_result (exec, reply);
}

/* The params of budget/modelUsage: the provider's counts of one call. */
static const char model_usage_schema[] =
  "{\"type\": \"object\", \"additionalProperties\": false,"
  " \"required\": [\"inputTokens\", \"outputTokens\"],"
  " \"properties\": {"
  "  \"inputTokens\": {\"type\": \"integer\", \"minimum\": 0},"
  "  \"outputTokens\": {\"type\": \"integer\", \"minimum\": 0},"
  "  \"cachedInputTokens\": {\"type\": \"integer\", \"minimum\": 0},"
  "  \"costMicroUsd\": {\"type\": \"integer\", \"minimum\": 0}}}";

/* budget/modelUsage: the usage of a model call budget/modelCall granted,
 * added into the step's usage (saturating, as every sum of usage). */
static void
handle_model_usage (Exec       *exec,
                    JsonObject *params)
{
  SightStepContext *ctx = exec->ctx;
  g_autoptr(JsonNode) args = json_node_init_object (json_node_alloc (), params);
  SightUsage call;
  JsonObject *reply;

  if (!check_params (exec, sight_json_schema_new_from_string (model_usage_schema, NULL),
                     "budget/modelUsage", args))
    return;
  sight_usage_init (&call);
  call.input_tokens = json_object_get_int_member (params, "inputTokens");
  call.output_tokens = json_object_get_int_member (params, "outputTokens");
  call.cached_input_tokens = json_object_get_int_member_with_default (params,
                                                                      "cachedInputTokens", 0);
  if (call.cached_input_tokens > call.input_tokens)
    {
      reply_error (exec, RPC_INVALID_PARAMS, NULL, "cachedInputTokens are part of inputTokens: "
                   "they cannot be more");
      return;
    }
  if (exec->unreported_calls == 0)
    {
      reply_error (exec, RPC_INVALID_PARAMS, NULL, "no model call to report: ask "
                   "budget/modelCall before each call, and report each call once");
      return;
    }
  call.has_cost = json_object_has_member (params, "costMicroUsd");
  call.cost_micro_usd = json_object_get_int_member_with_default (params, "costMicroUsd", 0);
  exec->unreported_calls--;
  sight_usage_add (&ctx->result->usage, &call);
  reply = json_object_new ();
  json_object_set_member (reply, "usage", sight_usage_to_json (&ctx->result->usage));
  reply_result (exec, reply);
}

/* step/finish: the verdict, by the arguments of act's done tool. */
static void
handle_finish (Exec       *exec,
               JsonObject *params)
{
  SightStepContext *ctx = exec->ctx;
  g_autoptr(JsonNode) args = json_node_init_object (json_node_alloc (), params);
  const char *verdict;
  g_autofree char *summary = NULL;
  GError *error = NULL;

  if (!check_args (exec, "done", args))
    return;
  verdict = json_object_get_string_member (params, "verdict");
  summary = sight_text_sanitize (json_object_get_string_member (params, "summary"), 2048);
  sight_step_context_add_injection (ctx, json_object_get_member (params, "injection"));
  g_free (ctx->result->summary);
  ctx->result->summary = sight_secrets_redact (summary);
  if (g_str_equal (verdict, "fail"))
    error = g_error_new (SIGHT_ERROR, ctx->request->limits.kind == SIGHT_STEP_ASSERT
                                      ? SIGHT_ERROR_ASSERTION_FAILED : SIGHT_ERROR_ACTION_FAILED,
                         "%s", summary);
  else if (g_str_equal (verdict, "blocked"))
    error = g_error_new (SIGHT_ERROR,
                         sight_step_blocked_reason_code (
                           json_object_get_string_member_with_default (params, "blocked_reason",
                                                                       NULL)),
                         "%s", summary);
  exec->ended = TRUE;   /* no more reading */
  reply_result (exec, json_object_new ());
  exec->ended = FALSE;
  exec_end (exec, error, TRUE);
}

static const struct {
  const char *method;
  void      (*handle) (Exec       *exec,
                       JsonObject *params);
} methods[] = {
  { "page/observe", handle_observe },
  { "page/perform", handle_perform },
  { "page/tapAt", handle_tap_at },
  { "page/screenshot", handle_screenshot },
  { "budget/modelCall", handle_model_call },
  { "budget/modelUsage", handle_model_usage },
  { "step/finish", handle_finish },
};

/* Reading: one line at a time, no longer than MAX_LINE_BYTES; the next is read
 * once the request of the last was answered. */

static void
garbage (Exec       *exec,
         const char *line,
         const char *why)
{
  g_autofree char *shown = sight_text_sanitize (line, 80);

  exec_fail (exec, SIGHT_ERROR_MODEL_OUTPUT_INVALID,
             "the executor wrote what is not JSON-RPC 2.0 on line %u of its output (%s): %s",
             exec->line_no, why, shown);
}

static gboolean
is_id (JsonNode *node)
{
  GType type;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node))
    return FALSE;
  type = json_node_get_value_type (node);
  return type == G_TYPE_STRING || type == G_TYPE_INT64 || type == G_TYPE_DOUBLE;
}

static void
handle_line (Exec       *exec,
             const char *line)
{
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GError) error = NULL;
  JsonObject *message;
  JsonNode *params;
  const char *method;

  node = sight_json_parse (line, -1, SIGHT_JSON_MAX_DEPTH, &error);
  if (node == NULL)
    {
      garbage (exec, line, "not JSON");
      return;
    }
  if (!JSON_NODE_HOLDS_OBJECT (node) ||
      g_strcmp0 (json_object_get_string_member_with_default (json_node_get_object (node),
                                                             "jsonrpc", NULL), "2.0") != 0)
    {
      garbage (exec, line, "not a JSON-RPC 2.0 message");
      return;
    }
  message = json_node_get_object (node);
  method = json_object_get_string_member_with_default (message, "method", NULL);
  if (method == NULL)
    {
      /* Sightline asks nothing, so a response answers nothing: skipped. */
      if (json_object_has_member (message, "result") || json_object_has_member (message, "error"))
        {
          read_next (exec);
          return;
        }
      garbage (exec, line, "neither a request nor a notification");
      return;
    }
  if (!json_object_has_member (message, "id"))
    {
      /* Notifications (a log line, progress) are the executor's own. */
      read_next (exec);
      return;
    }
  if (!is_id (json_object_get_member (message, "id")))
    {
      garbage (exec, line, "an id must be a string or a number");
      return;
    }
  exec->request_id = json_node_copy (json_object_get_member (message, "id"));
  params = json_object_get_member (message, "params");
  if (params != NULL && !JSON_NODE_HOLDS_OBJECT (params))
    {
      reply_error (exec, RPC_INVALID_PARAMS, NULL, "params must be an object");
      return;
    }
  for (guint i = 0; i < G_N_ELEMENTS (methods); i++)
    if (g_str_equal (methods[i].method, method))
      {
        g_autoptr(JsonObject) empty = json_object_new ();

        methods[i].handle (exec, params != NULL ? json_node_get_object (params) : empty);
        return;
      }
  reply_error (exec, RPC_METHOD_NOT_FOUND, NULL, "no method %s", method);
}

/* The exit's or the output's end, before step/finish. */
static gboolean
drain_grace_cb (gpointer user_data)
{
  Exec *exec = user_data;

  /* also called directly, while the source may still be attached */
  source_clear (&exec->grace_source);
  exec_fail (exec, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE, "the executor %s before it called "
             "step/finish", exec->exit_reason ? exec->exit_reason : "closed its output");
  return G_SOURCE_REMOVE;
}

static void
output_ended (Exec *exec)
{
  exec->eof = TRUE;
  if (exec->ended)
    return;
  if (exec->reaped)
    drain_grace_cb (exec);
  else if (exec->grace_source == NULL)
    arm_grace (exec, DRAIN_GRACE_MS, drain_grace_cb);
}

static void
line_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  Exec *exec = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *line = NULL;
  gsize length = 0;

  exec->reading = FALSE;
  line = g_data_input_stream_read_line_finish_utf8 (G_DATA_INPUT_STREAM (source), result, &length,
                                                    &error);
  if (exec->ended)
    {
      exec_unref (exec);
      return;
    }
  if (line == NULL && g_error_matches (error, G_CONVERT_ERROR, G_CONVERT_ERROR_ILLEGAL_SEQUENCE))
    {
      exec->line_no++;
      garbage (exec, "", "not UTF-8");
    }
  else if (line == NULL)
    output_ended (exec);
  else
    {
      exec->line_no++;
      if (length > 0 && line[length - 1] == '\r')
        line[--length] = '\0';
      if (length == 0)
        read_next (exec);
      else
        handle_line (exec, line);
    }
  exec_unref (exec);
}

static void
filled_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  Exec *exec = user_data;
  g_autoptr(GError) error = NULL;
  gssize n;

  exec->reading = FALSE;
  n = g_buffered_input_stream_fill_finish (G_BUFFERED_INPUT_STREAM (source), result, &error);
  if (!exec->ended)
    {
      if (n > 0)
        read_next (exec);
      else if (g_buffered_input_stream_get_available (G_BUFFERED_INPUT_STREAM (source)) > 0)
        {
          /* a last line without its newline */
          exec->reading = TRUE;
          g_data_input_stream_read_line_async (exec->reader, G_PRIORITY_DEFAULT,
                                               exec->io_cancellable, line_cb, exec_ref (exec));
        }
      else
        output_ended (exec);
    }
  exec_unref (exec);
}

static void
read_next (Exec *exec)
{
  GBufferedInputStream *buffered = G_BUFFERED_INPUT_STREAM (exec->reader);
  gsize available = 0;
  const void *buffer;

  if (exec->ended || exec->reading || exec->eof)
    return;
  buffer = g_buffered_input_stream_peek_buffer (buffered, &available);
  exec->reading = TRUE;
  if (available > 0 && memchr (buffer, '\n', available) != NULL)
    {
      g_data_input_stream_read_line_async (exec->reader, G_PRIORITY_DEFAULT, exec->io_cancellable,
                                           line_cb, exec_ref (exec));
      return;
    }
  if (available >= MAX_LINE_BYTES)
    {
      exec->reading = FALSE;
      exec->line_no++;
      exec_fail (exec, SIGHT_ERROR_MODEL_OUTPUT_INVALID, "the executor wrote a line longer "
                 "than %d bytes (line %u of its output)", MAX_LINE_BYTES, exec->line_no);
      return;
    }
  g_buffered_input_stream_fill_async (buffered, -1, G_PRIORITY_DEFAULT, exec->io_cancellable,
                                      filled_cb, exec_ref (exec));
}

/* The process */

static void
waited_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  Exec *exec = user_data;
  GSubprocess *process = G_SUBPROCESS (source);

  g_subprocess_wait_finish (process, result, NULL);
  exec->reaped = TRUE;
  if (g_subprocess_get_if_signaled (process))
    exec->exit_reason = g_strdup_printf ("was killed by signal %d",
                                         g_subprocess_get_term_sig (process));
  else
    exec->exit_reason = g_strdup_printf ("exited with status %d",
                                         g_subprocess_get_exit_status (process));
  /* What it started in its group goes with it. */
  if (exec->pgid > 0 && kill (-exec->pgid, SIGKILL) != 0 && errno != ESRCH)
    g_debug ("killing the executor's group %d: %s", exec->pgid, g_strerror (errno));
  if (exec->ended)
    exec_maybe_return (exec);
  else if (exec->eof)
    drain_grace_cb (exec);
  else if (exec->grace_source == NULL)
    arm_grace (exec, DRAIN_GRACE_MS, drain_grace_cb);
  exec_unref (exec);
}

static gboolean
deadline_cb (gpointer user_data)
{
  Exec *exec = user_data;
  GError *error = NULL;
  gint64 left;

  g_clear_pointer (&exec->deadline_source, g_source_unref);
  if (!sight_budget_check_deadline (exec->ctx->budget, &error))
    {
      g_prefix_error (&error, "the executor did not finish: ");
      exec_end (exec, error, FALSE);
      return G_SOURCE_REMOVE;
    }
  /* A timeout source may fire a little early: wait out the rest. */
  left = sight_budget_remaining_ms (exec->ctx->budget) + 1;
  exec->deadline_source = g_timeout_source_new ((guint) MIN (left, G_MAXUINT));
  g_source_set_callback (exec->deadline_source, deadline_cb, exec, NULL);
  g_source_attach (exec->deadline_source, g_main_context_get_thread_default ());
  return G_SOURCE_REMOVE;
}

static gboolean
cancelled_cb (GCancellable *cancellable,
              gpointer      user_data)
{
  Exec *exec = user_data;

  g_clear_pointer (&exec->cancel_source, g_source_unref);
  /* the agent reports the cancellation */
  exec_end (exec, NULL, FALSE);
  return G_SOURCE_REMOVE;
}

/* In the child, before exec: a process group of its own, which the step
 * kills whole, and an end of its own should Sightline end without ending the
 * step (SIGKILL included); a Sightline gone before the prctl is caught by
 * comparing the parent. */
static void
child_setup (gpointer user_data)
{
  setpgid (0, 0);
#ifdef __linux__
  if (prctl (PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid () != (pid_t) GPOINTER_TO_INT (user_data))
    _exit (127);
#endif
}

static void
ignore_sigpipe_once (void)
{
  static gsize done = 0;

  /* A write to an executor that exited must fail with EPIPE, not end
   * Sightline; a handler the program installed itself stays. */
  if (g_once_init_enter (&done))
    {
      struct sigaction current;

      if (sigaction (SIGPIPE, NULL, &current) == 0 && current.sa_handler == SIG_DFL)
        signal (SIGPIPE, SIG_IGN);
      g_once_init_leave (&done, 1);
    }
}

static GStrv
executor_environ (const SightExecutorConfig *executor)
{
  GStrv env = NULL;

  for (guint i = 0; passed_env[i] != NULL; i++)
    {
      const char *value = g_getenv (passed_env[i]);

      if (value != NULL)
        env = g_environ_setenv (env, passed_env[i], value, TRUE);
    }
  if (g_environ_getenv (env, "PATH") == NULL)
    env = g_environ_setenv (env, "PATH", "/usr/local/bin:/usr/bin:/bin", TRUE);
  for (guint i = 0; executor->env[i] != NULL; i++)
    {
      g_auto(GStrv) pair = g_strsplit (executor->env[i], "=", 2);

      env = g_environ_setenv (env, pair[0], pair[1] ? pair[1] : "", TRUE);
    }
  return env;
}

static JsonObject *
step_run_params (SightStepContext *ctx)
{
  const SightBudgetLimits *limits = sight_budget_get_limits (ctx->budget);
  gint64 remaining = sight_budget_remaining_ms (ctx->budget);
  JsonObject *params = json_object_new ();
  JsonObject *budget = json_object_new ();

  json_object_set_int_member (params, "protocol", PROTOCOL_VERSION);
  json_object_set_string_member (params, "kind", sight_step_kind_to_string (limits->kind));
  json_object_set_string_member (params, "instruction", ctx->request->model_instruction);
  json_object_set_member (params, "params", ctx->request->model_params != NULL
                                            ? json_node_copy (ctx->request->model_params)
                                            : json_node_new (JSON_NODE_NULL));
  json_object_set_string_member (params, "url", sight_web_page_get_uri (ctx->page) ?: "");
  json_object_set_int_member (budget, "maxActions", limits->max_actions);
  json_object_set_int_member (budget, "maxModelCalls", limits->max_model_calls);
  json_object_set_int_member (budget, "timeoutMs", limits->timeout_ms);
  json_object_set_object_member (params, "budget", budget);
  /* the same moment on the executor's clock: Unix milliseconds */
  json_object_set_int_member (params, "deadline", g_get_real_time () / 1000 + remaining);
  json_object_set_int_member (params, "remainingMs", remaining);
  return params;
}

void
sight_external_executor_run_async (SightStepContext    *ctx,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  const SightExecutorConfig *executor = ctx->request->limits.agent->executor;
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) env = NULL;
  GMainContext *context = g_main_context_get_thread_default ();
  JsonObject *message;
  GInputStream *out;
  const char *identifier;
  Exec *exec;

  g_return_if_fail (executor != NULL);

  exec = g_new0 (Exec, 1);
  g_atomic_ref_count_init (&exec->ref_count);
  exec->ctx = ctx;
  exec->task = g_task_new (NULL, NULL, callback, user_data);
  g_task_set_source_tag (exec->task, sight_external_executor_run_async);
  g_task_set_task_data (exec->task, exec, (GDestroyNotify) exec_unref);
  exec->io_cancellable = g_cancellable_new ();
  exec->tools = sight_step_act_get_tools (TRUE);
  g_queue_init (&exec->out_queue);

  ignore_sigpipe_once ();
  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                        G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  env = executor_environ (executor);
  g_subprocess_launcher_set_environ (launcher, env);
  if (executor->cwd != NULL)
    g_subprocess_launcher_set_cwd (launcher, executor->cwd);
  g_subprocess_launcher_set_child_setup (launcher, child_setup, GINT_TO_POINTER (getpid ()),
                                         NULL);
  exec->process = g_subprocess_launcher_spawnv (launcher, (const char * const *) executor->argv,
                                                &error);
  if (exec->process == NULL)
    {
      g_autofree char *program = sight_text_sanitize (executor->argv[0], 200);

      exec->reaped = TRUE;
      exec_fail (exec, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                 "the executor %s could not be started: %s", program, error->message);
      return;
    }
  identifier = g_subprocess_get_identifier (exec->process);
  exec->pgid = identifier != NULL ? atoi (identifier) : 0;
  g_subprocess_wait_async (exec->process, NULL, waited_cb, exec_ref (exec));

  out = g_subprocess_get_stdout_pipe (exec->process);
  exec->reader = g_data_input_stream_new (out);
  g_buffered_input_stream_set_buffer_size (G_BUFFERED_INPUT_STREAM (exec->reader),
                                           MAX_LINE_BYTES);
  g_data_input_stream_set_newline_type (exec->reader, G_DATA_STREAM_NEWLINE_TYPE_LF);
  exec->writer = g_object_ref (g_subprocess_get_stdin_pipe (exec->process));

  exec->deadline_source = g_timeout_source_new ((guint) MIN (sight_budget_remaining_ms (ctx->budget) + 1,
                                                             G_MAXUINT));
  g_source_set_callback (exec->deadline_source, deadline_cb, exec, NULL);
  g_source_attach (exec->deadline_source, context);
  exec->cancel_source = g_cancellable_source_new (ctx->cancellable);
  g_source_set_callback (exec->cancel_source, G_SOURCE_FUNC (cancelled_cb), exec, NULL);
  g_source_attach (exec->cancel_source, context);

  message = message_new ();
  json_object_set_string_member (message, "method", "step/run");
  json_object_set_object_member (message, "params", step_run_params (ctx));
  send_message (exec, message, NULL);
  read_next (exec);
}

void
sight_external_executor_run_finish (SightStepContext *ctx,
                                    GAsyncResult     *result)
{
  g_return_if_fail (g_task_get_source_tag (G_TASK (result)) == sight_external_executor_run_async);
  g_task_propagate_boolean (G_TASK (result), NULL);
}
