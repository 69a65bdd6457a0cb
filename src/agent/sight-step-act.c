/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-step-act"

#include "config.h"

#include "sight-step-act.h"

#include "sight-action.h"
#include "sight-actions.h"
#include "sight-direct-step.h"
#include "sight-error.h"
#include "sight-json-schema.h"
#include "sight-params.h"
#include "sight-secret-fill.h"
#include "sight-secrets.h"
#include "sight-step-judge.h"
#include "sight-trace-cache.h"

/* act as a state machine: every wait (an observation, a model call, an action, a
 * pause) is started with a callback that takes the next step; the Act below is
 * the whole state between them. */

/* Changes listed in an action result before the whole tree is sent instead. */
#define DIFF_MAX_LINES 60
/* The model's own waits. */
#define WAIT_TOOL_MAX_MS 10000
#define NAVIGATE_TIMEOUT_MS 30000

/* One turn of the act conversation, kept so every request is rebuilt from it and
 * older screenshots can be elided. */
typedef struct {
  SightModelRole      role;
  char               *text;
  GBytes             *image;
  SightModelResponse *response;
  char               *tool_call_id;
  gboolean            is_error;
} Turn;

/* The result of one tool call. */
typedef struct {
  char     *text;
  GBytes   *image;
  gboolean  is_error;
} ToolResult;

/* The trace cache (sight-trace-cache.h) inside act. */
typedef struct {
  SightTraceCache *cache;       /* NULL: the project keeps no traces */
  SightTrace      *trace;       /* the trace found, or NULL */
  char            *start_url;
  int              viewport_width;
  int              viewport_height;
  guint            n_replayed;  /* actions of the trace that ran before the model took over */
  char            *reason;      /* why the replay did not finish the step */
} Cached;

typedef struct {
  SightStepContext   *ctx;
  /* borrowed: the task owns this state */
  GTask              *task;

  GPtrArray          *turns;
  GPtrArray          *tools;        /* of SightJsonSchema, parallel to tool_nodes */
  JsonArray          *tool_nodes;
  JsonNode           *tools_root;
  SightObservation   *held;         /* the observation the model holds */
  gboolean            with_pixels;  /* screenshot and tap_at are offered */
  gboolean            pixel_mode;
  /* the latest screenshot the model was given: its observation and scale */
  SightObservation   *shot_observation;
  double              shot_scale;
  /* turns before this one have their screenshot elided (in batches) */
  guint               elided_before;
  gboolean            finished;
  /* the first message, while its screenshot is taken */
  GString            *opening;

  /* the model's answer being carried out: the call running and its result */
  SightModelResponse *response;
  guint               call_index;
  ToolResult          out;
  SightStepAction     pending;     /* the engine action a tool call commits */
  /* what observe_after tells the model: the action done, why pixels are withheld */
  char               *did;
  const char         *no_pixels_reason;

  Cached              cached;
} Act;

typedef void (*ToolFunc) (Act                *act,
                          SightModelToolCall *call,
                          JsonObject         *args);

static void
turn_free (Turn *turn)
{
  g_free (turn->text);
  g_clear_pointer (&turn->image, g_bytes_unref);
  g_clear_pointer (&turn->response, sight_model_response_unref);
  g_free (turn->tool_call_id);
  g_free (turn);
}

static Turn *
add_turn (Act            *act,
          SightModelRole  role,
          const char     *text)
{
  Turn *turn = g_new0 (Turn, 1);

  turn->role = role;
  turn->text = sight_secrets_redact (text);
  g_ptr_array_add (act->turns, turn);
  return turn;
}

static SightModelRequest *
build_request (Act *act)
{
  SightModelRequest *request = sight_model_request_new ();
  guint n_images = 0;

  /* Older screenshots are elided in batches, not one by one: once more than
   * SIGHT_STEP_MAX_IMAGES would ride along, all but the newest
   * SIGHT_STEP_KEEP_IMAGES are elided at once.  Between two batches every
   * request repeats the one before it byte for byte and only appends, which
   * keeps the providers' prompt caches warm. */
  for (guint i = act->elided_before; i < act->turns->len; i++)
    if (((Turn *) g_ptr_array_index (act->turns, i))->image != NULL)
      n_images++;
  if (n_images > SIGHT_STEP_MAX_IMAGES)
    {
      guint kept = 0;

      for (guint i = act->turns->len; i > act->elided_before; i--)
        if (((Turn *) g_ptr_array_index (act->turns, i - 1))->image != NULL &&
            ++kept == SIGHT_STEP_KEEP_IMAGES)
          {
            act->elided_before = i - 1;
            break;
          }
    }

  sight_model_request_set_system (request, sight_step_context_resource_text ("act.txt"));
  for (guint i = 0; i < act->turns->len; i++)
    {
      Turn *turn = g_ptr_array_index (act->turns, i);
      SightModelMessage *message = NULL;
      g_autofree char *text = NULL;
      gboolean elided = turn->image != NULL && i < act->elided_before;

      text = elided ? g_strconcat (turn->text ? turn->text : "",
                                   "\n[an earlier screenshot was elided]", NULL)
                    : g_strdup (turn->text);
      switch (turn->role)
        {
        case SIGHT_MODEL_ROLE_USER:
          message = sight_model_request_add_message (request, SIGHT_MODEL_ROLE_USER, text);
          break;
        case SIGHT_MODEL_ROLE_ASSISTANT:
          sight_model_request_add_response (request, turn->response);
          break;
        case SIGHT_MODEL_ROLE_TOOL:
          message = sight_model_request_add_tool_result (request, turn->tool_call_id, text,
                                                         turn->is_error);
          break;
        default:
          break;
        }
      if (message != NULL && turn->image != NULL && !elided)
        sight_model_message_add_image (message, "image/png", turn->image);
    }

  for (guint i = 0; i < json_array_get_length (act->tool_nodes); i++)
    {
      JsonObject *tool = json_array_get_object_element (act->tool_nodes, i);

      sight_model_request_add_tool (request, json_object_get_string_member (tool, "name"),
                                    json_object_get_string_member (tool, "description"),
                                    json_object_get_member (tool, "parameters"));
    }
  sight_model_request_set_tool_choice (request, SIGHT_MODEL_TOOL_CHOICE_REQUIRED);
  return request;
}

static SightJsonSchema *
tool_schema (Act        *act,
             const char *name)
{
  for (guint i = 0; i < json_array_get_length (act->tool_nodes); i++)
    {
      JsonObject *tool = json_array_get_object_element (act->tool_nodes, i);

      if (g_strcmp0 (json_object_get_string_member (tool, "name"), name) == 0)
        return g_ptr_array_index (act->tools, i);
    }
  return NULL;
}

static void
tool_result_set (ToolResult *out,
                 gboolean    is_error,
                 const char *format,
                 ...) G_GNUC_PRINTF (3, 4);

static void
tool_result_set (ToolResult *out,
                 gboolean    is_error,
                 const char *format,
                 ...)
{
  va_list args;

  va_start (args, format);
  g_free (out->text);
  out->text = g_strdup_vprintf (format, args);
  out->is_error = is_error;
  va_end (args);
}

/* What the model is told an action did: the line, what a tap landed on, a
 * navigation, popups, and a page that did not settle. */
static char *
describe_outcome (const char *log_line,
                  JsonObject *reply)
{
  GString *did = g_string_new ("Done: ");
  const char *under = json_object_get_string_member_with_default (reply, "under", NULL);
  JsonArray *popups = json_object_get_array_member (reply, "popups");

  g_string_append_printf (did, "%s.", log_line);
  if (under != NULL)
    g_string_append_printf (did, " The tap landed on %s.", under);
  if (json_object_get_boolean_member_with_default (reply, "navigated", FALSE))
    g_string_append_printf (did, " The page navigated to %s.",
                            json_object_get_string_member_with_default (reply, "url", "?"));
  for (guint i = 0; popups != NULL && i < json_array_get_length (popups); i++)
    g_string_append_printf (did, " A popup opened (a new page of this session): %s.",
                            json_object_get_string_member_with_default (
                              json_array_get_object_element (popups, i), "url", ""));
  if (!json_object_get_boolean_member_with_default (reply, "settled", TRUE))
    g_string_append_printf (did, " The page was still changing after %" G_GINT64_FORMAT " ms.",
                            json_object_get_int_member_with_default (reply, "settleMs", 0));
  return g_string_free (did, FALSE);
}

static const char *
string_arg (JsonObject *args,
            const char *name)
{
  return json_object_get_string_member_with_default (args, name, NULL);
}

/* A ref the model holds, or a tool error naming the problem. */
static JsonObject *
held_node (Act        *act,
           const char *ref,
           ToolResult *out)
{
  JsonObject *node = ref ? sight_observation_lookup (act->held, ref) : NULL;

  if (node == NULL)
    tool_result_set (out, TRUE, "There is no element %s in the observation you hold.",
                     ref ? ref : "(none)");
  return node;
}

static char *
node_label (JsonObject *node)
{
  return sight_observation_node_line (node);
}

/* A fill as the trace records it: the param by name, or the value. */
static JsonNode *
fill_record (const char *ref,
             const char *param,
             const char *value)
{
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);
  JsonObject *object = json_object_new ();

  json_object_set_string_member (object, "ref", ref);
  if (param != NULL)
    json_object_set_string_member (object, "param", param);
  else
    json_object_set_string_member (object, "value", value);
  json_node_take_object (node, object);
  return node;
}

static void
set_done (Act        *act,
          JsonObject *args)
{
  SightStepContext *ctx = act->ctx;
  const char *verdict = string_arg (args, "verdict");
  const char *reason = string_arg (args, "blocked_reason");
  g_autofree char *summary = sight_text_sanitize (string_arg (args, "summary"), 2048);
  SightErrorCode code = SIGHT_ERROR_ACTION_FAILED;

  sight_step_context_add_injection (ctx, json_object_get_member (args, "injection"));
  act->finished = TRUE;
  g_free (ctx->result->summary);
  ctx->result->summary = sight_secrets_redact (summary);

  if (g_strcmp0 (verdict, "pass") == 0)
    return;
  /* The code comes from a closed list the runner owns, never from model text. */
  if (g_strcmp0 (verdict, "blocked") == 0)
    code = sight_step_blocked_reason_code (reason);
  sight_step_result_take_error (ctx->result, g_error_new (SIGHT_ERROR, code, "%s", summary));
}

static void
cached_clear (Cached *cached)
{
  g_clear_pointer (&cached->cache, sight_trace_cache_free);
  g_clear_pointer (&cached->trace, sight_trace_unref);
  g_clear_pointer (&cached->start_url, g_free);
}

static void
set_cache_info (SightStepContext *ctx,
                SightCacheStatus  status,
                const char       *reason)
{
  g_clear_pointer (&ctx->result->cache, json_node_unref);
  ctx->result->cache = sight_cache_info_new (status, reason);
}

static const char *
agent_name (SightStepContext *ctx)
{
  const SightAgentConfig *agent = ctx->request->limits.agent;

  return agent != NULL && agent->name != NULL ? agent->name : "default";
}

/* Writes the trace of a passing act: the replayed actions that ran, then the
 * model's, and the end state.  A trace the model healed is marked for review. */
static void
write_trace (SightStepContext *ctx,
             Cached           *cached,
             SightObservation *end)
{
  SightSecrets *secrets = sight_project_get_secrets (ctx->project);
  JsonNode *params = ctx->request->options->params;
  g_autoptr(SightTrace) trace = NULL;
  g_autoptr(GPtrArray) secret_values = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  JsonArray *performed = ctx->result->performed;
  gboolean ok;

  /* A trace never holds a secret value: every secret of the params is checked
   * (those read so far: a keyring value this process never read was never
   * typed, and sight_secrets_resolve does not wait for one). */
  for (guint i = 0; ctx->request->secret_names[i] != NULL; i++)
    {
      const char *value = sight_secrets_resolve_for_origin (secrets, ctx->request->secret_names[i],
                                                            cached->start_url, NULL);

      if (value != NULL)
        g_ptr_array_add (secret_values, (gpointer) value);
    }
  g_ptr_array_add (secret_values, NULL);

  trace = sight_trace_new (agent_name (ctx), ctx->request->instruction, params,
                           cached->start_url, cached->viewport_width, cached->viewport_height);
  for (guint i = 0; i < json_array_get_length (performed); i++)
    {
      JsonObject *action = json_array_get_object_element (performed, i);

      if (!sight_trace_add_action (trace, json_object_get_string_member (action, "tool"),
                                   json_object_get_member (action, "args"),
                                   json_object_get_member (action, "descriptor"),
                                   (const char * const *) secret_values->pdata, &error))
        {
          g_debug ("not caching the trace: %s", error->message);
          return;
        }
    }
  sight_trace_set_end_state (trace, end);
  ok = cached->trace != NULL ? sight_trace_cache_save_healed (cached->cache, trace, &error)
                             : sight_trace_cache_save (cached->cache, trace, &error);
  if (!ok)
    {
      g_debug ("the trace was not written: %s", error->message);
      return;
    }
  if (cached->trace != NULL && ctx->result->cache != NULL)
    {
      JsonObject *info = json_node_get_object (ctx->result->cache);

      json_object_set_boolean_member (info, "healed", TRUE);
      /* The key a person accepts or rejects the heal by (a hash of the
       * step, no params' values). */
      json_object_set_string_member (info, "key", sight_trace_get_key (trace));
    }
}

static gboolean
pixels_allowed (Act         *act,
                const char **out_reason)
{
  if (sight_step_context_secret_filled (act->ctx))
    {
      *out_reason = "PIXEL_TAINTED: a secret was filled in this attempt, so screenshots are "
                    "withheld; work from the tree";
      return FALSE;
    }
  return TRUE;
}

static void
tool_result_clear (ToolResult *out)
{
  g_clear_pointer (&out->text, g_free);
  g_clear_pointer (&out->image, g_bytes_unref);
  out->is_error = FALSE;
}

static void
act_free (Act *act)
{
  g_clear_pointer (&act->turns, g_ptr_array_unref);
  g_clear_pointer (&act->tools, g_ptr_array_unref);
  g_clear_pointer (&act->tools_root, json_node_unref);
  g_clear_object (&act->held);
  g_clear_object (&act->shot_observation);
  if (act->opening != NULL)
    g_string_free (act->opening, TRUE);
  g_clear_pointer (&act->response, sight_model_response_unref);
  tool_result_clear (&act->out);
  sight_step_action_clear (&act->pending);
  g_free (act->did);
  cached_clear (&act->cached);
  g_free (act->cached.reason);
  g_free (act);
}

/* The end of act: nothing touches @act after it. */
static void
act_return (Act *act)
{
  GTask *task = act->task;

  g_task_return_boolean (task, TRUE);
  g_object_unref (task);
}

/* The model loop ended with @error (taken), which is the step's. */
static void
loop_fail (Act    *act,
           GError *error)
{
  if (error != NULL)
    sight_step_result_take_error (act->ctx->result, error);
  act_return (act);
}

/* The model concluded: a passing act's trace is written for the next run. */
static void
loop_end (Act *act)
{
  SightStepContext *ctx = act->ctx;

  if (act->cached.cache != NULL && sight_step_result_passed (ctx->result) && act->held != NULL)
    write_trace (ctx, &act->cached, act->held);
  act_return (act);
}

static void ask (Act *act);
static void next_tool (Act *act);

static SightModelToolCall *
current_call (Act *act)
{
  return g_ptr_array_index (act->response->tool_calls, act->call_index);
}

/* The tool call running ended: with its result in act->out, or with @error
 * (taken), which ends the step. */
static void
tool_done (Act    *act,
           GError *error)
{
  Turn *tool_turn;

  sight_step_action_clear (&act->pending);
  if (error != NULL)
    {
      tool_result_clear (&act->out);
      loop_fail (act, error);
      return;
    }
  tool_turn = add_turn (act, SIGHT_MODEL_ROLE_TOOL, act->out.text);
  tool_turn->tool_call_id = g_strdup (current_call (act)->id);
  tool_turn->is_error = act->out.is_error;
  tool_turn->image = g_steal_pointer (&act->out.image);
  tool_result_clear (&act->out);
  act->call_index++;
  next_tool (act);
}

/* A fresh observation after an action (with a screenshot in pixel mode) and the
 * text telling the model what changed. */

static void
observed_after_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  Act *act = user_data;
  SightStepContext *ctx = act->ctx;
  g_autoptr(SightObservation) observation = NULL;
  g_autofree char *diff = NULL;
  g_autofree char *page = NULL;
  const char *reason = act->no_pixels_reason;
  GError *error = NULL;
  gboolean no_pixels = FALSE;
  guint n_changes = 0;
  GString *text;

  observation = sight_step_context_observe_finish (ctx, result, &no_pixels, &error);
  if (observation == NULL)
    {
      tool_done (act, error);
      return;
    }

  text = g_string_new (act->did);
  diff = sight_observation_diff (act->held, observation, DIFF_MAX_LINES, &n_changes);
  if (g_strcmp0 (sight_observation_get_url (act->held), sight_observation_get_url (observation)) != 0 ||
      n_changes > DIFF_MAX_LINES)
    {
      page = sight_step_context_page_block (observation, TRUE);
      g_string_append_printf (text, "\nThe page is now:\n%s", page);
    }
  else if (n_changes == 0)
    g_string_append (text, "\nNo change in the tree.");
  else
    {
      g_autofree char *redacted = sight_secrets_redact (diff);

      g_string_append_printf (text, "\nChanges since the observation you held (untrusted page "
                              "data):\n<page>\n%s\n</page>", redacted);
    }

  if (act->pixel_mode)
    {
      const SightScreenshot *shot = sight_observation_get_screenshot (observation);

      if (reason != NULL)
        g_string_append_printf (text, "\n%s", reason);
      else if (no_pixels || shot == NULL)
        g_string_append (text, "\nUNSUPPORTED_CAPABILITY: no screenshot could be taken.");
      else if (!sight_observation_masking_proven (observation))
        g_string_append (text, "\nMASKING_UNPROVEN: the screenshot is withheld because not "
                         "every secure field could be masked.");
      else
        {
          act->out.image = g_bytes_ref (shot->bytes);
          act->shot_scale = shot->scale;
          g_set_object (&act->shot_observation, observation);
          g_string_append (text, "\nA fresh screenshot is attached.");
        }
      if (act->out.image == NULL && reason == NULL)
        {
          g_free (ctx->result->vision_degraded);
          ctx->result->vision_degraded = g_strdup (no_pixels || shot == NULL
                                                   ? "UNSUPPORTED_CAPABILITY"
                                                   : "MASKING_UNPROVEN");
        }
    }

  g_set_object (&act->held, observation);
  g_free (act->out.text);
  act->out.text = g_string_free (text, FALSE);
  tool_done (act, NULL);
}

static void
observe_after (Act        *act,
               const char *did)
{
  gboolean want_shot;

  if (did != act->did)
    {
      g_free (act->did);
      act->did = g_strdup (did);
    }
  act->no_pixels_reason = NULL;
  want_shot = act->pixel_mode && pixels_allowed (act, &act->no_pixels_reason);
  sight_step_context_observe_async (act->ctx, want_shot, observed_after_cb, act);
}

static void
pixels_settled_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  Act *act = user_data;

  sight_step_context_settle_pixels_finish (act->ctx, result);
  observe_after (act, act->did);
}

/* Committing an action through the engine (actionability, the action,
 * settling) the step context's one way (sight_step_context_commit_action_async:
 * an action step is counted once the engine committed it, one the engine
 * refused is a tool result and costs none; the action is recorded with its
 * descriptor for the trace cache, the record's args naming params, never a
 * secret value), then the model is told what was done and what changed. */

static void
performed_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  Act *act = user_data;
  SightStepContext *ctx = act->ctx;
  g_autoptr(JsonObject) reply = NULL;
  g_autofree char *did = NULL;
  const char *no_pixels_reason = NULL;
  gboolean ends_step = FALSE;
  GError *error = NULL;

  reply = sight_step_context_commit_action_finish (ctx, result, &ends_step, &error);
  if (reply == NULL && ends_step)
    {
      tool_done (act, error);
      return;
    }
  if (reply == NULL)
    {
      /* An action that ran out of its own time is the model's to handle. */
      tool_result_set (&act->out, TRUE, "The action failed: %s", error->message);
      g_error_free (error);
      tool_done (act, NULL);
      return;
    }

  did = describe_outcome (act->pending.log_line, reply);
  /* While the step shows pixels, the wait watches them too: a redraw that
   * never touches the DOM is read as soon as it lands. */
  if (act->pixel_mode && pixels_allowed (act, &no_pixels_reason))
    {
      g_free (act->did);
      act->did = g_steal_pointer (&did);
      sight_step_context_settle_pixels_async (ctx, json_object_get_int_member_with_default (
                                                     reply, "durationMs", 0),
                                              pixels_settled_cb, act);
      return;
    }
  observe_after (act, did);
}

/* Commits @action (its members taken) for the tool call @tool, recorded with
 * @record_args and told as @log_line. */
static void
commit (Act         *act,
        const char  *tool,
        JsonNode    *record_args,
        SightAction *action,
        const char  *log_line)
{
  SightStepAction *pending = &act->pending;

  sight_step_action_clear (pending);
  pending->tool = tool;
  pending->record_args = record_args != NULL ? json_node_ref (record_args) : NULL;
  pending->action = *action;
  memset (action, 0, sizeof *action);
  pending->log_line = g_strdup (log_line);
  sight_step_context_commit_action_async (act->ctx, pending, performed_cb, act);
}

/* The action of @kind on @ref (NULL: the page) with @value: a SightAction for
 * commit(). */
static void
action_on (SightAction     *action,
           SightActionKind  kind,
           const char      *ref,
           const char      *value)
{
  sight_action_init (action, kind);
  action->ref = g_strdup (ref);
  action->value = g_strdup (value);
}

/* Secrets: typed by the one host-side secret fill (sight-secret-fill.h),
 * which checks the credential, the origins and the field as the page has it;
 * a refusal ends the step with its code and nothing typed. */
static void
fill_secret (Act        *act,
             const char *ref,
             const char *param,
             const char *name)
{
  SightStepAction *pending = &act->pending;

  sight_step_action_clear (pending);
  pending->tool = "fill";
  pending->record_args = fill_record (ref, param, NULL);
  action_on (&pending->action, SIGHT_ACTION_FILL, ref, NULL);
  pending->log_line = g_strdup_printf ("fill %s with the secret %s", ref, name);
  pending->secret_name = g_strdup (name);
  pending->param = g_strdup (param);
  sight_step_context_commit_action_async (act->ctx, pending, performed_cb, act);
}

/* The tools */

/* The node of the ref the call names, if the model holds it; else the tool
 * call has failed (act->out says why) and NULL. */
static JsonObject *
call_target (Act        *act,
             JsonObject *args,
             char      **out_label)
{
  JsonObject *node = held_node (act, string_arg (args, "ref"), &act->out);

  if (node == NULL)
    {
      tool_done (act, NULL);
      return NULL;
    }
  *out_label = node_label (node);
  return node;
}

/* click and hover: the tool's name is the engine's verb. */
static void
tool_pointer (Act                *act,
              SightModelToolCall *call,
              JsonObject         *args)
{
  g_auto(SightAction) action = { 0 };
  g_autofree char *label = NULL;
  g_autofree char *line = NULL;
  SightActionKind kind;

  if (call_target (act, args, &label) == NULL)
    return;
  if (!sight_action_kind_from_nick (call->name, &kind))
    g_assert_not_reached ();
  line = g_strdup_printf ("%s %s", call->name, label);
  action_on (&action, kind, string_arg (args, "ref"), NULL);
  commit (act, call->name, call->arguments, &action, line);
}

static void
tool_press (Act                *act,
            SightModelToolCall *call,
            JsonObject         *args)
{
  const char *key = string_arg (args, "key");
  g_auto(SightAction) action = { 0 };
  g_autofree char *label = NULL;
  g_autofree char *line = NULL;

  if (string_arg (args, "ref") == NULL)
    line = g_strdup_printf ("press %s", key);
  else if (call_target (act, args, &label) == NULL)
    return;
  else
    line = g_strdup_printf ("press %s on %s", key, label);
  action_on (&action, SIGHT_ACTION_PRESS, string_arg (args, "ref"), key);
  commit (act, "press", call->arguments, &action, line);
}

static void
tool_select (Act                *act,
             SightModelToolCall *call,
             JsonObject         *args)
{
  const char *option = string_arg (args, "option");
  g_auto(SightAction) action = { 0 };
  g_autofree char *label = NULL;
  g_autofree char *line = NULL;

  if (call_target (act, args, &label) == NULL)
    return;
  line = g_strdup_printf ("select \"%s\" in %s", option, label);
  action_on (&action, SIGHT_ACTION_SELECT, string_arg (args, "ref"), option);
  commit (act, "select", call->arguments, &action, line);
}

static void
tool_check (Act                *act,
            SightModelToolCall *call,
            JsonObject         *args)
{
  SightActionKind kind = json_object_get_boolean_member_with_default (args, "checked", TRUE)
                         ? SIGHT_ACTION_CHECK : SIGHT_ACTION_UNCHECK;
  g_auto(SightAction) action = { 0 };
  g_autofree char *label = NULL;
  g_autofree char *line = NULL;

  if (call_target (act, args, &label) == NULL)
    return;
  line = g_strdup_printf ("%s %s", sight_action_kind_to_nick (kind), label);
  action_on (&action, kind, string_arg (args, "ref"), NULL);
  commit (act, "check", call->arguments, &action, line);
}

static void
tool_scroll (Act                *act,
             SightModelToolCall *call,
             JsonObject         *args)
{
  const char *direction = string_arg (args, "direction");
  g_auto(SightAction) action = { 0 };
  g_autofree char *label = NULL;
  g_autofree char *line = NULL;

  if (string_arg (args, "ref") == NULL)
    {
      line = g_strdup_printf ("scroll %s", direction ?: "down");
      action_on (&action, SIGHT_ACTION_SCROLL, NULL, direction);
    }
  else if (call_target (act, args, &label) == NULL)
    return;
  else
    {
      line = g_strdup_printf ("scroll to %s", label);
      action_on (&action, SIGHT_ACTION_SCROLL, string_arg (args, "ref"), NULL);
    }
  commit (act, "scroll", call->arguments, &action, line);
}

static void
tool_fill (Act                *act,
           SightModelToolCall *call,
           JsonObject         *args)
{
  SightStepContext *ctx = act->ctx;
  const char *ref = string_arg (args, "ref");
  const char *param = string_arg (args, "param");
  const char *value = string_arg (args, "value");
  g_autoptr(JsonNode) record = NULL;
  g_auto(SightAction) action = { 0 };
  g_autofree char *value_text = NULL;
  g_autofree char *line = NULL;
  g_autofree char *label = NULL;
  JsonObject *node;
  JsonNode *params = ctx->request->options->params;

  if ((node = call_target (act, args, &label)) == NULL)
    return;

  /* "{name}" written as the value names a param too. */
  if (param == NULL && value != NULL && value[0] == '{' && g_str_has_suffix (value, "}") &&
      params != NULL && JSON_NODE_HOLDS_OBJECT (params))
    {
      g_autofree char *name = g_strndup (value + 1, strlen (value) - 2);

      if (json_object_has_member (json_node_get_object (params), name))
        {
          param = g_intern_string (name);
          value = NULL;
        }
    }

  if (param != NULL)
    {
      JsonNode *member = NULL;
      const char *secret_name = NULL;

      if (params != NULL && JSON_NODE_HOLDS_OBJECT (params))
        member = json_object_get_member (json_node_get_object (params), param);
      if (member == NULL)
        {
          tool_result_set (&act->out, TRUE, "There is no param \"%s\".", param);
          tool_done (act, NULL);
          return;
        }
      if (sight_params_is_secret (member, &secret_name))
        {
          fill_secret (act, ref, param, secret_name);
          return;
        }
      if (JSON_NODE_HOLDS_VALUE (member))
        {
          if (json_node_get_value_type (member) == G_TYPE_STRING)
            value_text = g_strdup (json_node_get_string (member));
          else
            value_text = json_to_string (member, FALSE);
        }
      else
        {
          tool_result_set (&act->out, TRUE, "The param \"%s\" is not a single value.", param);
          tool_done (act, NULL);
          return;
        }
    }
  else if (value != NULL)
    value_text = g_strdup (value);
  else
    {
      tool_result_set (&act->out, TRUE, "fill needs value or param.");
      tool_done (act, NULL);
      return;
    }

  /* A value the model wrote out that is a param's value is recorded as the param,
   * so a replay with other params types theirs. */
  if (param == NULL && params != NULL && JSON_NODE_HOLDS_OBJECT (params))
    {
      JsonObject *object = json_node_get_object (params);
      g_autoptr(GList) names = json_object_get_members (object);

      for (GList *l = names; l != NULL; l = l->next)
        {
          JsonNode *member = json_object_get_member (object, l->data);

          if (JSON_NODE_HOLDS_VALUE (member) && json_node_get_value_type (member) == G_TYPE_STRING &&
              g_strcmp0 (json_node_get_string (member), value_text) == 0)
            {
              param = g_intern_string (l->data);
              break;
            }
        }
    }
  /* Into a secure field, the value is a secret from here on (the action
   * line, the step's stored options and reports have it masked). */
  sight_secret_fill_note_typed (json_object_get_boolean_member_with_default (node, "secure",
                                                                             FALSE),
                                param, value_text);
  record = fill_record (ref, param, param != NULL ? NULL : value_text);
  line = g_strdup_printf ("fill %s with \"%s\"", label, value_text);
  action_on (&action, SIGHT_ACTION_FILL, ref, value_text);
  commit (act, "fill", record, &action, line);
}

static void
screenshot_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  Act *act = user_data;
  SightStepContext *ctx = act->ctx;
  g_autoptr(SightObservation) observation = NULL;
  g_autofree char *diff = NULL;
  const SightScreenshot *shot;
  GError *error = NULL;
  gboolean no_pixels = FALSE;
  guint n_changes = 0;

  observation = sight_step_context_observe_finish (ctx, result, &no_pixels, &error);
  if (observation == NULL)
    {
      tool_done (act, error);
      return;
    }
  shot = sight_observation_get_screenshot (observation);
  if (no_pixels || shot == NULL)
    {
      g_free (ctx->result->vision_degraded);
      ctx->result->vision_degraded = g_strdup ("UNSUPPORTED_CAPABILITY");
      tool_result_set (&act->out, TRUE, "UNSUPPORTED_CAPABILITY: no screenshot could be taken.");
      tool_done (act, NULL);
      return;
    }
  if (!sight_observation_masking_proven (observation))
    {
      g_free (ctx->result->vision_degraded);
      ctx->result->vision_degraded = g_strdup ("MASKING_UNPROVEN");
      tool_result_set (&act->out, TRUE, "MASKING_UNPROVEN: the screenshot is withheld because "
                       "not every secure field could be masked.");
      tool_done (act, NULL);
      return;
    }

  act->pixel_mode = TRUE;
  diff = sight_observation_diff (act->held, observation, DIFF_MAX_LINES, &n_changes);
  tool_result_set (&act->out, FALSE,
                   "A screenshot of the viewport is attached (%d x %d pixels). %s%s",
                   shot->width, shot->height,
                   n_changes == 0 ? "No change in the tree since the observation you held."
                                  : "Changes since the observation you held:\n",
                   n_changes == 0 ? "" : diff);
  act->out.image = g_bytes_ref (shot->bytes);
  act->shot_scale = shot->scale;
  g_set_object (&act->shot_observation, observation);
  g_set_object (&act->held, observation);
  tool_done (act, NULL);
}

static void
tool_screenshot (Act                *act,
                 SightModelToolCall *call,
                 JsonObject         *args)
{
  SightStepContext *ctx = act->ctx;
  const char *reason = NULL;

  if (!pixels_allowed (act, &reason))
    {
      g_free (ctx->result->vision_degraded);
      ctx->result->vision_degraded = g_strdup ("PIXEL_TAINTED");
      tool_result_set (&act->out, TRUE, "%s", reason);
      tool_done (act, NULL);
      return;
    }
  sight_step_context_observe_async (ctx, TRUE, screenshot_cb, act);
}

static void
tool_tap_at (Act                *act,
             SightModelToolCall *call,
             JsonObject         *args)
{
  double x = json_object_get_double_member (args, "x");
  double y = json_object_get_double_member (args, "y");
  int vw = 0, vh = 0;
  double cx, cy;
  const char *ref;
  g_auto(SightAction) action = { 0 };
  g_autofree char *line = NULL;

  if (act->shot_observation == NULL || act->shot_scale <= 0)
    {
      tool_result_set (&act->out, TRUE, "tap_at needs a screenshot first: call screenshot.");
      tool_done (act, NULL);
      return;
    }
  /* The point is in the image the model saw; the harness scales it back. */
  cx = x / act->shot_scale;
  cy = y / act->shot_scale;
  sight_observation_get_viewport (act->shot_observation, &vw, &vh, NULL, NULL);
  if (cx < 0 || cy < 0 || (vw > 0 && cx >= vw) || (vh > 0 && cy >= vh))
    {
      tool_result_set (&act->out, TRUE, "The point (%g, %g) is outside the screenshot.", x, y);
      tool_done (act, NULL);
      return;
    }

  /* A listed control under the point is tapped by its ref.  Anything else the
   * point lands on (a container such as main, a dialog, a region or a cell,
   * or drawn content) is a bare point: tapping a container by its ref would
   * hit its middle, not the point. */
  ref = sight_observation_hit_test (act->shot_observation, cx, cy);
  if (ref != NULL && sight_observation_lookup (act->held, ref) != NULL)
    {
      JsonObject *node = sight_observation_lookup (act->held, ref);
      const char *role = json_object_get_string_member_with_default (node, "role", "");

      if (g_strv_contains (sight_direct_control_roles (), role))
        {
          g_autofree char *label = node_label (node);

          line = g_strdup_printf ("tap_at (%.0f, %.0f) → %s", x, y, label);
          action_on (&action, SIGHT_ACTION_CLICK, ref, NULL);
          commit (act, "tap_at", call->arguments, &action, line);
          return;
        }
    }

  line = g_strdup_printf ("tap_at (%.0f, %.0f) → bare point (%.0f, %.0f) CSS px", x, y, cx, cy);
  action_on (&action, SIGHT_ACTION_TAP_AT, NULL, NULL);
  action.x = cx;
  action.y = cy;
  commit (act, "tap_at", call->arguments, &action, line);
}

/* navigate and back: a page action of the step that moves in history. */
static void
moved (Act        *act,
       gboolean    ok,
       GError     *error_in,
       const char *failed,
       const char *did)
{
  SightStepContext *ctx = act->ctx;
  g_autoptr(GError) local_error = error_in;
  GError *error = NULL;

  if (!ok)
    {
      if (!sight_budget_check_deadline (ctx->budget, &error))
        {
          tool_done (act, error);
          return;
        }
      tool_result_set (&act->out, TRUE, "%s: %s", failed, local_error->message);
      tool_done (act, NULL);
      return;
    }
  sight_step_context_committed (ctx, &act->pending, NULL);
  observe_after (act, did);
}

/* Checks that an action step is left and notes the move (@tool, @record_args
 * and @log_line, both taken) as the pending action, with its timeout in
 * *@out_timeout_ms; FALSE when the step ended instead (tool_done() ran). */
static gboolean
begin_page_move (Act        *act,
                 const char *tool,
                 JsonNode   *record_args,
                 char       *log_line,
                 guint      *out_timeout_ms)
{
  SightBudget *budget = act->ctx->budget;
  GError *error = NULL;

  sight_step_action_clear (&act->pending);
  act->pending.tool = tool;
  act->pending.record_args = record_args;
  act->pending.log_line = log_line;
  if (!sight_budget_check_action (budget, &error))
    {
      tool_done (act, error);
      return FALSE;
    }
  *out_timeout_ms = (guint) MAX (1, sight_budget_cap_ms (budget, NAVIGATE_TIMEOUT_MS));
  return TRUE;
}

static void
navigated_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  GError *error = NULL;
  gboolean ok = sight_web_page_load_finish (SIGHT_WEB_PAGE (source), result, &error);

  moved (user_data, ok, error, "The navigation failed", "Done: navigated.");
}

static void
tool_navigate (Act                *act,
               SightModelToolCall *call,
               JsonObject         *args)
{
  SightStepContext *ctx = act->ctx;
  const char *url = string_arg (args, "url");
  g_autofree char *absolute = NULL;
  g_autofree char *origin = NULL;
  JsonNode *record_args;
  guint timeout_ms;
  GError *error = NULL;

  if (!sight_step_context_check_page (ctx, &error))
    {
      tool_done (act, error);
      return;
    }
  absolute = g_uri_resolve_relative (sight_web_page_get_uri (ctx->page), url, G_URI_FLAGS_NONE,
                                     NULL);
  origin = absolute ? sight_origin_normalize (absolute) : NULL;
  if (origin == NULL || g_strcmp0 (origin, ctx->target_origin) != 0)
    {
      tool_result_set (&act->out, TRUE, "POLICY_DENIED: navigating away from the site under test "
                       "(%s) is refused.", ctx->target_origin ? ctx->target_origin : "?");
      tool_done (act, NULL);
      return;
    }
  record_args = json_node_new (JSON_NODE_OBJECT);
  json_node_take_object (record_args, json_object_new ());
  json_object_set_string_member (json_node_get_object (record_args), "url", absolute);
  if (!begin_page_move (act, "navigate", record_args, g_strdup_printf ("navigate %s", absolute),
                        &timeout_ms))
    return;
  sight_web_page_load_async (ctx->page, absolute, SIGHT_WAIT_UNTIL_LOAD, timeout_ms,
                             ctx->cancellable, navigated_cb, act);
}

static void
went_back_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  GError *error = NULL;
  gboolean ok = sight_web_page_history_finish (SIGHT_WEB_PAGE (source), result, &error);

  moved (user_data, ok, error, "Going back failed", "Done: went back.");
}

static void
tool_back (Act                *act,
           SightModelToolCall *call,
           JsonObject         *args)
{
  SightStepContext *ctx = act->ctx;
  guint timeout_ms;
  GError *error = NULL;

  if (!sight_step_context_check_page (ctx, &error))
    {
      tool_done (act, error);
      return;
    }
  if (!webkit_web_view_can_go_back (sight_web_page_get_web_view (ctx->page)))
    {
      tool_result_set (&act->out, TRUE, "There is no page to go back to.");
      tool_done (act, NULL);
      return;
    }
  if (!begin_page_move (act, "back", NULL, g_strdup ("back"), &timeout_ms))
    return;
  sight_web_page_history_async (ctx->page, SIGHT_HISTORY_BACK, timeout_ms, ctx->cancellable,
                                went_back_cb, act);
}

static void
waited_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  Act *act = user_data;
  GError *error = NULL;

  if (!sight_step_context_sleep_finish (act->ctx, result, &error) ||
      !sight_budget_check_deadline (act->ctx->budget, &error))
    {
      tool_done (act, error);
      return;
    }
  sight_step_context_add_performed (act->ctx, "wait", current_call (act)->arguments, NULL);
  observe_after (act, "Waited.");
}

static void
tool_wait (Act                *act,
           SightModelToolCall *call,
           JsonObject         *args)
{
  gint64 ms = json_object_get_int_member (args, "ms");

  sight_step_context_sleep_async (act->ctx, CLAMP (ms, 0, WAIT_TOOL_MAX_MS), waited_cb, act);
}

static void
tool_done_call (Act                *act,
                SightModelToolCall *call,
                JsonObject         *args)
{
  set_done (act, args);
  tool_result_set (&act->out, FALSE, "Concluded.");
  tool_done (act, NULL);
}

/* act's tools, in the order the model is offered them; their descriptions and
 * parameters are in act-tools.json of the agent's resources. */
static const struct {
  /* the tool's name is the kind's nick (sight_action_kind_to_nick) */
  SightActionKind kind;
  /* offered only while pixels may be sent */
  gboolean        pixels;
  ToolFunc        run;
} act_tools[] = {
  { SIGHT_ACTION_CLICK, FALSE, tool_pointer },
  { SIGHT_ACTION_FILL, FALSE, tool_fill },
  { SIGHT_ACTION_PRESS, FALSE, tool_press },
  { SIGHT_ACTION_SELECT, FALSE, tool_select },
  { SIGHT_ACTION_CHECK, FALSE, tool_check },
  { SIGHT_ACTION_HOVER, FALSE, tool_pointer },
  { SIGHT_ACTION_SCROLL, FALSE, tool_scroll },
  { SIGHT_ACTION_NAVIGATE, FALSE, tool_navigate },
  { SIGHT_ACTION_BACK, FALSE, tool_back },
  { SIGHT_ACTION_WAIT, FALSE, tool_wait },
  { SIGHT_ACTION_SCREENSHOT, TRUE, tool_screenshot },
  { SIGHT_ACTION_TAP_AT, TRUE, tool_tap_at },
  { SIGHT_ACTION_DONE, FALSE, tool_done_call },
};
JsonNode *
sight_step_act_get_tools (gboolean with_pixels)
{
  g_autoptr(JsonNode) definitions = NULL;
  g_autoptr(GError) error = NULL;
  JsonArray *all;
  JsonArray *tools = json_array_new ();
  JsonNode *node = json_node_new (JSON_NODE_ARRAY);

  definitions = json_from_string (sight_step_context_resource_text ("act-tools.json"), &error);
  g_assert_no_error (error);
  all = json_node_get_array (definitions);
  for (guint i = 0; i < G_N_ELEMENTS (act_tools); i++)
    {
      JsonNode *found = NULL;

      if (act_tools[i].pixels && !with_pixels)
        continue;
      for (guint j = 0; found == NULL && j < json_array_get_length (all); j++)
        {
          JsonObject *tool = json_array_get_object_element (all, j);

          if (g_strcmp0 (json_object_get_string_member (tool, "name"),
                         sight_action_kind_to_nick (act_tools[i].kind)) == 0)
            found = json_array_get_element (all, j);
        }
      g_assert (found != NULL);
      json_array_add_element (tools, json_node_copy (found));
    }
  json_node_take_array (node, tools);
  return node;
}

/* Runs one tool call; it ends in tool_done(). */
static void
run_tool (Act                *act,
          SightModelToolCall *call)
{
  SightJsonSchema *schema = tool_schema (act, call->name);
  g_autoptr(GPtrArray) problems = NULL;
  SightActionKind kind;

  if (schema == NULL)
    {
      tool_result_set (&act->out, TRUE, "There is no tool \"%s\".", call->name);
      tool_done (act, NULL);
      return;
    }
  if (!sight_json_schema_validate (schema, call->arguments, &problems))
    {
      g_autofree char *why = sight_json_schema_errors_to_string (problems);

      tool_result_set (&act->out, TRUE, "Invalid arguments for %s: %s", call->name, why);
      tool_done (act, NULL);
      return;
    }
  if (!sight_action_kind_from_nick (call->name, &kind))
    g_assert_not_reached ();
  for (guint i = 0; i < G_N_ELEMENTS (act_tools); i++)
    if (act_tools[i].kind == kind)
      {
        act_tools[i].run (act, call, json_node_get_object (call->arguments));
        return;
      }
  g_assert_not_reached ();
}

/* The model loop */

static void
next_tool (Act *act)
{
  if (act->call_index >= act->response->tool_calls->len)
    {
      g_clear_pointer (&act->response, sight_model_response_unref);
      if (act->finished)
        loop_end (act);
      else
        ask (act);
      return;
    }
  tool_result_clear (&act->out);
  if (act->finished)
    {
      tool_result_set (&act->out, TRUE, "Not run: the task was already concluded.");
      tool_done (act, NULL);
      return;
    }
  run_tool (act, current_call (act));
}

static void
answered_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  Act *act = user_data;
  SightModelResponse *response;
  GError *error = NULL;
  Turn *turn;

  response = sight_step_context_call_model_finish (act->ctx, result, &error);
  if (response == NULL)
    {
      loop_fail (act, error);
      return;
    }
  turn = add_turn (act, SIGHT_MODEL_ROLE_ASSISTANT, NULL);
  turn->response = sight_model_response_ref (response);
  if (response->tool_calls->len == 0)
    {
      sight_model_response_unref (response);
      add_turn (act, SIGHT_MODEL_ROLE_USER, "Call one of the tools; conclude with done.");
      ask (act);
      return;
    }
  act->response = response;
  act->call_index = 0;
  next_tool (act);
}

static void
ask (Act *act)
{
  g_autoptr(SightModelRequest) request = build_request (act);

  sight_step_context_call_model_async (act->ctx, request, answered_cb, act);
}

static void
open_conversation (Act *act)
{
  if (act->opening != NULL)
    {
      add_turn (act, SIGHT_MODEL_ROLE_USER, act->opening->str);
      g_string_free (act->opening, TRUE);
      act->opening = NULL;
    }
  ask (act);
}

static void
opening_shot_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  Act *act = user_data;
  g_autoptr(SightObservation) shot_obs = NULL;
  GError *error = NULL;
  gboolean no_pixels = FALSE;

  shot_obs = sight_step_context_observe_finish (act->ctx, result, &no_pixels, &error);
  if (shot_obs == NULL)
    {
      loop_fail (act, error);
      return;
    }
  if (!no_pixels && sight_observation_get_screenshot (shot_obs) != NULL &&
      sight_observation_masking_proven (shot_obs))
    {
      const SightScreenshot *shot = sight_observation_get_screenshot (shot_obs);
      Turn *first;

      act->pixel_mode = TRUE;
      act->shot_scale = shot->scale;
      g_set_object (&act->shot_observation, shot_obs);
      g_set_object (&act->held, shot_obs);
      g_string_append_printf (act->opening, "\nNothing on this screen is listed to act on by ref: "
                              "a screenshot (%d x %d pixels) is attached; use tap_at.",
                              shot->width, shot->height);
      first = add_turn (act, SIGHT_MODEL_ROLE_USER, act->opening->str);
      first->image = g_bytes_ref (shot->bytes);
      g_string_free (act->opening, TRUE);
      act->opening = NULL;
    }
  open_conversation (act);
}

static void
opened_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  Act *act = user_data;
  SightStepContext *ctx = act->ctx;
  g_autofree char *page = NULL;
  g_autofree char *params = NULL;
  const char *reason = NULL;
  GError *error = NULL;

  act->held = sight_step_context_observe_finish (ctx, result, NULL, &error);
  if (act->held == NULL)
    {
      loop_fail (act, error);
      return;
    }

  act->opening = g_string_new (NULL);
  g_string_append_printf (act->opening, "Task: %s\n", ctx->request->model_instruction);
  if (ctx->request->model_params != NULL)
    {
      params = json_to_string (ctx->request->model_params, FALSE);
      g_string_append_printf (act->opening, "Params: %s\n", params);
    }
  page = sight_step_context_page_block (act->held, TRUE);
  g_string_append_printf (act->opening, "\nThe page:\n%s", page);

  /* A screen that lists nothing to act on opens with a screenshot attached. */
  if (act->with_pixels && sight_observation_get_n_interactive (act->held) == 0 &&
      pixels_allowed (act, &reason))
    {
      sight_step_context_observe_async (ctx, TRUE, opening_shot_cb, act);
      return;
    }
  open_conversation (act);
}

static void
loop_start (Act *act)
{
  act->turns = g_ptr_array_new_with_free_func ((GDestroyNotify) turn_free);
  /* Both pixel tools are offered while no secret has been filled when the step opens. */
  act->with_pixels = !sight_step_context_secret_filled (act->ctx);
  act->tools_root = sight_step_act_get_tools (act->with_pixels);
  act->tool_nodes = json_node_get_array (act->tools_root);
  act->tools = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_json_schema_unref);
  for (guint i = 0; i < json_array_get_length (act->tool_nodes); i++)
    {
      JsonObject *tool = json_array_get_object_element (act->tool_nodes, i);

      g_ptr_array_add (act->tools, sight_json_schema_new (json_object_get_member (tool, "parameters"),
                                                          NULL));
    }
  sight_step_context_observe_async (act->ctx, FALSE, opened_cb, act);
}

/* A cached trace, replayed with no model. The step ends there (self-finalized,
 * agent-concluded, or an error that ends it), or the model takes over with
 * result.cache saying why (missed). */

static void
replay_judged_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  Act *act = user_data;
  SightStepContext *ctx = act->ctx;
  g_autofree char *explanation = NULL;
  g_autofree char *why = NULL;
  GError *error = NULL;
  gboolean verdict = FALSE;

  if (!sight_step_judge_condition_finish (ctx, result, &verdict, &explanation, &error))
    {
      loop_fail (act, error);
      return;
    }
  if (verdict)
    {
      set_cache_info (ctx, SIGHT_CACHE_AGENT_CONCLUDED, NULL);
      act_return (act);
      return;
    }
  g_clear_pointer (&ctx->result->summary, g_free);
  ctx->result->has_judgment = FALSE;
  why = g_strdup_printf ("the recorded end state did not return (%s) and a judgment found the "
                         "task not done: %s",
                         act->cached.reason != NULL ? act->cached.reason : "?", explanation);
  set_cache_info (ctx, SIGHT_CACHE_MISSED, why);
  loop_start (act);
}

static void
replayed_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  Act *act = user_data;
  SightStepContext *ctx = act->ctx;
  Cached *cached = &act->cached;
  guint n = sight_trace_get_n_actions (cached->trace);
  g_autoptr(JsonNode) outcome = NULL;
  GError *error = NULL;
  JsonObject *info;
  const char *status;
  gint64 failed_at;

  outcome = sight_trace_replay_finish (cached->trace, result, &error);
  if (outcome == NULL)
    {
      loop_fail (act, error);
      return;
    }
  info = json_node_get_object (outcome);
  status = json_object_get_string_member_with_default (info, "status", "missed");
  failed_at = json_object_get_int_member_with_default (info, "action", 0);
  cached->reason = g_strdup (json_object_get_string_member_with_default (info, "reason", NULL));

  /* The actions that ran were committed engine actions. */
  cached->n_replayed = g_str_equal (status, "missed") ? (guint) MAX (0, failed_at - 1) : n;
  for (guint i = 0; i < cached->n_replayed; i++)
    {
      JsonObject *action = sight_trace_get_action (cached->trace, i);
      g_autoptr(JsonNode) node = NULL;

      if (!sight_budget_take_action (ctx->budget, &error))
        {
          loop_fail (act, error);
          return;
        }
      node = json_node_init_object (json_node_alloc (), action);
      json_array_add_element (ctx->result->performed, json_node_copy (node));
      g_ptr_array_add (ctx->result->action_log,
                       g_strdup_printf ("%s (replayed from the trace cache)",
                                        json_object_get_string_member (action, "tool")));
    }
  ctx->result->actions = sight_budget_get_actions (ctx->budget);

  if (g_str_equal (status, "self-finalized"))
    {
      g_free (ctx->result->summary);
      ctx->result->summary = g_strdup_printf ("Replayed %u recorded actions with no model call; "
                                              "the recorded end state returned.", n);
      set_cache_info (ctx, SIGHT_CACHE_SELF_FINALIZED, NULL);
      act_return (act);
      return;
    }
  if (g_str_equal (status, "unconfirmed"))
    {
      g_autofree char *condition = NULL;

      /* Every action ran; one judgment decides whether the task is done. */
      condition = g_strdup_printf ("The task \"%s\" has been carried out: the page shows its "
                                   "outcome.", ctx->request->model_instruction);
      sight_step_judge_condition_async (ctx, condition, replay_judged_cb, act);
      return;
    }
  set_cache_info (ctx, SIGHT_CACHE_MISSED,
                  cached->reason != NULL ? cached->reason : "the replay failed");
  loop_start (act);
}

static void
replay_start (Act *act)
{
  SightStepContext *ctx = act->ctx;
  guint n = sight_trace_get_n_actions (act->cached.trace);
  const SightBudgetLimits *limits = sight_budget_get_limits (ctx->budget);

  if ((gint64) n > limits->max_actions)
    {
      g_autofree char *reason = NULL;

      reason = g_strdup_printf ("the trace has %u actions, more than the step's %" G_GINT64_FORMAT,
                                n, limits->max_actions);
      set_cache_info (ctx, SIGHT_CACHE_MISSED, reason);
      loop_start (act);
      return;
    }
  sight_trace_replay_async (act->cached.trace, ctx->page, ctx->request->options->params,
                            sight_project_get_secrets (ctx->project),
                            (guint) MAX (1, sight_budget_remaining_ms (ctx->budget)),
                            ctx->cancellable, replayed_cb, act);
}

void
sight_step_act_run_async (SightStepContext    *ctx,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data)
{
  const char *dir = sight_project_get_trace_cache_dir (ctx->project);
  Act *act = g_new0 (Act, 1);
  g_autofree char *key = NULL;
  Cached *cached = &act->cached;

  act->ctx = ctx;
  act->task = g_task_new (NULL, NULL, callback, user_data);
  g_task_set_source_tag (act->task, sight_step_act_run_async);
  g_task_set_task_data (act->task, act, (GDestroyNotify) act_free);

  if (dir == NULL)
    {
      loop_start (act);
      return;
    }

  cached->cache = sight_trace_cache_new (dir);
  cached->start_url = g_strdup (sight_web_page_get_uri (ctx->page));
  sight_web_page_get_viewport (ctx->page, &cached->viewport_width, &cached->viewport_height);
  key = sight_trace_key (agent_name (ctx), ctx->request->instruction,
                         ctx->request->options->params, cached->start_url);
  cached->trace = sight_trace_cache_lookup (cached->cache, key);
  if (cached->trace == NULL)
    {
      set_cache_info (ctx, SIGHT_CACHE_MISSED, "no trace of this step was recorded yet");
      loop_start (act);
      return;
    }
  replay_start (act);
}

void
sight_step_act_run_finish (SightStepContext *ctx,
                           GAsyncResult     *result)
{
  g_return_if_fail (g_task_get_source_tag (G_TASK (result)) == sight_step_act_run_async);
  g_task_propagate_boolean (G_TASK (result), NULL);
}
