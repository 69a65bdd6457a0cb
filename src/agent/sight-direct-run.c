/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-direct-run"

#include "config.h"

#include "sight-direct-run.h"

#include <string.h>

#include "sight-actions.h"

#include "sight-agent-enums.h"
#include "sight-direct-step.h"
#include "sight-enum.h"
#include "sight-error.h"
#include "sight-observation.h"
#include "sight-params.h"
#include "sight-secret-fill.h"

#define RETRY_MS 100
#define CHANGE_WAIT_MS 500
#define MAX_CALL_MS 10000

/* Resolves when the document changes (a mutation anywhere in it, or the
 * page going away for another) or after args.ms, whichever is first; never
 * sooner than MIN_RETRY_MS after it started, so a page that never stops
 * changing is not checked on every frame. */
#define MIN_RETRY_MS 20
static const char change_js[] =
  "const start = performance.now ();\n"
  "return await new Promise (resolve => {\n"
  "  let timer = 0;\n"
  "  const observer = new MutationObserver (() => {\n"
  "    observer.disconnect ();\n"
  "    clearTimeout (timer);\n"
  "    timer = setTimeout (() => done (true), Math.max (0, args.min - (performance.now () - start)));\n"
  "  });\n"
  "  function done (changed) {\n"
  "    observer.disconnect (); clearTimeout (timer);\n"
  "    removeEventListener ('pagehide', gone); resolve (changed);\n"
  "  }\n"
  "  function gone () { done (true); }\n"
  "  observer.observe (document, { subtree: true, childList: true, attributes: true,\n"
  "                                characterData: true });\n"
  "  addEventListener ('pagehide', gone);\n"
  "  timer = setTimeout (() => done (false), args.ms);\n"
  "});";

/* Whether the page's text holds args.value, as args.want has it: at once,
 * else as soon as a change of the document makes it so, or the document goes
 * away for another, or args.ms pass; -> whether it holds the value. */
static const char text_js[] =
  "const has = () => (document.body ? document.body.innerText : '').includes (args.value);\n"
  "if (has () === args.want || !(args.ms > 0)) return has ();\n"
  "return await new Promise (resolve => {\n"
  "  let timer = 0;\n"
  "  const observer = new MutationObserver (() => { if (has () === args.want) done (); });\n"
  "  function done () {\n"
  "    observer.disconnect (); clearTimeout (timer);\n"
  "    removeEventListener ('pagehide', done); resolve (has ());\n"
  "  }\n"
  "  observer.observe (document, { subtree: true, childList: true, attributes: true,\n"
  "                                characterData: true });\n"
  "  addEventListener ('pagehide', done);\n"
  "  timer = setTimeout (done, args.ms);\n"
  "});";

typedef struct {
  SightWebPage    *page;
  SightDirectStep *step;
  JsonNode        *params;
  SightSecrets    *secrets;
  gint64           deadline;      /* monotonic µs */
  char            *value;         /* the value to type, select or expect */
  gboolean         value_secret;
  char            *secret_name;   /* a Secret to fill: typed by sight-secret-fill.h */
  char            *expect_secret; /* a Secret to expect: read before the first attempt */
  char            *origin;        /* the page's when the step started */
  char            *last_miss;     /* why the last attempt did not pass */
  JsonObject      *record;        /* the action as a trace records it, or NULL */
  char            *masked_text;   /* the step's text without a secret typed literally, or NULL */
  guint            mark;          /* sight_web_page_get_process_mark () at the start */
  gint64           started;       /* monotonic µs */
  char            *summary;       /* the outcome, until the page is checked */
  GError          *error;
} Run;

static void
run_free (Run *run)
{
  g_clear_object (&run->page);
  g_clear_pointer (&run->step, sight_direct_step_free);
  g_clear_pointer (&run->params, json_node_unref);
  g_clear_pointer (&run->secrets, sight_secrets_unref);
  if (run->value != NULL)
    memset (run->value, 0, strlen (run->value));
  g_free (run->value);
  g_free (run->secret_name);
  g_free (run->expect_secret);
  g_free (run->origin);
  g_free (run->last_miss);
  g_clear_pointer (&run->record, json_object_unref);
  g_free (run->masked_text);
  g_free (run->summary);
  g_clear_error (&run->error);
  g_free (run);
}

static void attempt (GTask *task);

static guint
remaining_ms (Run *run)
{
  gint64 left = (run->deadline - g_get_monotonic_time ()) / 1000;

  return left > 0 ? (guint) MIN (left, (gint64) MAX_CALL_MS) : 1;
}

/* The task's one reference travels along the chain of attempts. */
static gboolean
retry_cb (gpointer data)
{
  attempt (G_TASK (data));
  return G_SOURCE_REMOVE;
}

static void
changed_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      data)
{
  GTask *task = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) changed = sight_web_page_evaluate_finish (SIGHT_WEB_PAGE (source), result,
                                                                &error);

  /* No answer (a document between two loads): a short pause instead, so a
   * page that cannot be asked is not asked again at once. */
  if (changed == NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_debug ("no change to wait for: %s", error->message);
      g_timeout_add (RETRY_MS, retry_cb, task);
      return;
    }
  attempt (task);
}

/* Tries again shortly, or fails with @code and the last reason once the
 * deadline has passed. */
static void
retry_or_fail (GTask          *task,
               SightErrorCode  code,
               char           *why)
{
  Run *run = g_task_get_task_data (task);

  g_free (run->last_miss);
  run->last_miss = why;
  if (g_task_return_error_if_cancelled (task))
    {
      g_object_unref (task);
      return;
    }
  /* A page that lost its web process does not get better by waiting: the
   * step ends now, and the check of the page says why (step_done_cb). */
  if (g_get_monotonic_time () + RETRY_MS * 1000 >= run->deadline ||
      sight_web_page_get_process_mark (run->page) != run->mark)
    {
      g_task_return_new_error (task, SIGHT_ERROR, code, "%s", run->last_miss);
      g_object_unref (task);
      return;
    }
  /* What could make the step pass is a change of the page: the next try
   * comes as soon as there is one, not a fixed time later; a change the
   * document does not see (a URL set by history.pushState alone) within
   * CHANGE_WAIT_MS. The script ends itself before the deadline of its call. */
  {
    g_autoptr(JsonNode) args = json_from_string ("{}", NULL);
    guint left = remaining_ms (run);
    guint wait = MIN ((guint) CHANGE_WAIT_MS, left > RETRY_MS ? left - RETRY_MS : 1);

    json_object_set_int_member (json_node_get_object (args), "ms", wait);
    json_object_set_int_member (json_node_get_object (args), "min", MIN_RETRY_MS);
    sight_web_page_evaluate_async (run->page, change_js, args, wait + MAX (RETRY_MS, wait),
                                   g_task_get_cancellable (task), changed_cb, task);
  }
}

/* An engine call that failed for the environment (the page has no web
 * process) ends the step at once; TRUE when it did. */
static gboolean
end_if_environment (GTask   *task,
                    GError **error)
{
  if (!g_error_matches (*error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE))
    return FALSE;
  g_task_return_error (task, g_steal_pointer (error));
  g_object_unref (task);
  return TRUE;
}

static void
succeed (GTask      *task,
         const char *summary)
{
  g_task_return_pointer (task, g_strdup (summary), g_free);
  g_object_unref (task);
}

static gboolean
is_element_expectation (SightExpectKind kind)
{
  return kind == SIGHT_EXPECT_VISIBLE || kind == SIGHT_EXPECT_HIDDEN ||
         kind == SIGHT_EXPECT_CHECKED || kind == SIGHT_EXPECT_UNCHECKED ||
         kind == SIGHT_EXPECT_ENABLED || kind == SIGHT_EXPECT_DISABLED ||
         kind == SIGHT_EXPECT_VALUE || kind == SIGHT_EXPECT_HAS_TEXT;
}

static char *
node_text (const SightNodeView *node)
{
  return g_strdup_printf ("%s %s \"%s\"", node->ref, node->role,
                          node->name != NULL ? node->name : "");
}

/* An element expectation on the resolved node (or on its absence). */
static gboolean
check_element (Run                  *run,
               const SightNodeView  *node,
               char                **why)
{
  g_autofree char *what = sight_target_describe (&run->step->target);
  g_autofree char *seen = node != NULL ? node_text (node) : NULL;
  const char *value = run->value != NULL ? run->value : "";

  switch (run->step->expect)
    {
    case SIGHT_EXPECT_HIDDEN:
      if (node == NULL)
        return TRUE;
      *why = g_strdup_printf ("%s is visible (%s)", what, seen);
      return FALSE;
    case SIGHT_EXPECT_VISIBLE:
      return TRUE;
    case SIGHT_EXPECT_CHECKED:
    case SIGHT_EXPECT_UNCHECKED:
      {
        gboolean checked = (node->states & SIGHT_NODE_CHECKED) != 0;
        gboolean want = run->step->expect == SIGHT_EXPECT_CHECKED;

        if (checked == want)
          return TRUE;
        *why = g_strdup_printf ("%s is %s", seen, checked ? "checked" : "not checked");
        return FALSE;
      }
    case SIGHT_EXPECT_ENABLED:
    case SIGHT_EXPECT_DISABLED:
      {
        gboolean disabled = (node->states & SIGHT_NODE_DISABLED) != 0;

        if (disabled == (run->step->expect == SIGHT_EXPECT_DISABLED))
          return TRUE;
        *why = g_strdup_printf ("%s is %s", seen, disabled ? "disabled" : "enabled");
        return FALSE;
      }
    case SIGHT_EXPECT_VALUE:
      if (g_strcmp0 (node->value != NULL ? node->value : "", value) == 0)
        return TRUE;
      if (run->value_secret)
        *why = g_strdup_printf ("%s does not hold the expected value", seen);
      else
        *why = g_strdup_printf ("%s has value \"%s\", not \"%s\"", seen,
                                node->value != NULL ? node->value : "", value);
      return FALSE;
    case SIGHT_EXPECT_HAS_TEXT:
      if (node->text != NULL && strstr (node->text, value) != NULL)
        return TRUE;
      *why = g_strdup_printf ("%s does not contain \"%s\"", seen, value);
      return FALSE;
    case SIGHT_EXPECT_NONE:
    case SIGHT_EXPECT_TEXT:
    case SIGHT_EXPECT_NO_TEXT:
    case SIGHT_EXPECT_URL_CONTAINS:
    case SIGHT_EXPECT_URL_EQUALS:
    default:
      return FALSE;
    }
}

/* The name of the action @run's step performs, for summaries and messages. */
static const char *
action_name (Run *run)
{
  SightActionKind kind = SIGHT_ACTION_CLICK;

  sight_direct_verb_to_action (run->step->verb, &kind);
  return sight_action_kind_to_nick (kind);
}

/* Which way a scroll of the page goes, as act's scroll tool names it. */
static const char *
scroll_direction (SightScrollKind kind)
{
  if (kind == SIGHT_SCROLL_UP || kind == SIGHT_SCROLL_TOP || kind == SIGHT_SCROLL_BOTTOM)
    return sight_enum_to_nick (SIGHT_TYPE_SCROLL_KIND, kind);
  return "down";
}

typedef struct {
  GTask       *task;
  char        *seen;
  SightAction  action;
  gboolean     secure;   /* the target is a password or one-time-code field */
} ActionCall;

/* Keeps what was done as the trace cache records act's actions: the tool, its
 * arguments (a param by name, never a secret value) and the engine's descriptor.
 * An action a trace does not replay (an upload) leaves no record. */
static void
set_record (Run               *run,
            const SightAction *action,
            JsonObject        *reply)
{
  const char *tool = NULL;
  JsonObject *args = sight_action_to_tool_call (action, &tool);
  JsonNode *descriptor = reply != NULL ? json_object_get_member (reply, "descriptor") : NULL;

  if (args == NULL)
    return;
  g_clear_pointer (&run->record, json_object_unref);
  run->record = json_object_new ();
  json_object_set_string_member (run->record, "tool", tool);
  json_object_set_object_member (run->record, "args", args);
  if (descriptor != NULL && JSON_NODE_HOLDS_OBJECT (descriptor))
    {
      JsonNode *copy = json_node_copy (descriptor);
      JsonObject *d = json_node_get_object (copy);
      const char *tag = json_object_get_string_member_with_default (d, "tag", "");

      if (g_str_equal (tag, "input") || g_str_equal (tag, "textarea") || g_str_equal (tag, "select"))
        json_object_remove_member (d, "text");
      json_object_set_member (run->record, "descriptor", copy);
    }
  else
    json_object_set_null_member (run->record, "descriptor");
}

/* Records @call's action; a page scroll by its direction (a pixel count is
 * not replayed). */
static void
record_action (Run        *run,
               ActionCall *call,
               JsonObject *reply)
{
  SightAction *action = &call->action;

  if (action->kind == SIGHT_ACTION_SCROLL && action->ref == NULL)
    {
      g_free (action->value);
      action->value = g_strdup (scroll_direction (run->step->scroll));
    }
  set_record (run, action, action->ref != NULL ? reply : NULL);
}

static void
action_call_free (ActionCall *call)
{
  g_free (call->seen);
  sight_action_clear (&call->action);
  g_free (call);
}

static void
action_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      data)
{
  ActionCall *call = data;
  GTask *task = call->task;
  Run *run = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) reply =
    g_task_get_source_tag (G_TASK (result)) == sight_secret_fill_async
      ? sight_secret_fill_finish (SIGHT_WEB_PAGE (source), result, &error)
      : sight_web_page_perform_action_finish (SIGHT_WEB_PAGE (source), result, &error);
  const char *seen = call->seen;
  g_autofree char *summary = NULL;
  const char *verb = action_name (run);
  gboolean secure = call->secure;

  if (reply == NULL)
    {
      /* The engine already waited for actionability until the deadline;
       * a page that went away or a wrong argument does not get better. */
      if (g_error_matches (error, SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED))
        retry_or_fail (task, SIGHT_ERROR_ACTION_FAILED,
                       g_strdup_printf ("could not %s %s: %s", verb,
                                        seen != NULL ? seen : "the focused element",
                                        error->message));
      else
        {
          g_task_return_error (task, g_steal_pointer (&error));
          g_object_unref (task);
        }
      action_call_free (call);
      return;
    }

  record_action (run, call, reply);
  if (seen == NULL && run->step->verb == SIGHT_DIRECT_SCROLL)
    summary = g_strdup ("scrolled the page");
  else if (seen == NULL)
    summary = g_strdup_printf ("%s \"%s\" on the focused element", verb, run->value);
  else if (run->step->verb == SIGHT_DIRECT_FILL && run->value_secret)
    summary = g_strdup_printf ("filled %s with the secret {%s}", seen, run->step->param);
  else if (run->step->verb == SIGHT_DIRECT_FILL && secure)
    /* What goes into a password field is a secret even when the test wrote
     * it out: the summary is stored and reported, the value is not. */
    summary = g_strdup_printf ("filled %s (a secure field; the value is not shown)", seen);
  else if (run->step->verb == SIGHT_DIRECT_UPLOAD)
    summary = g_strdup_printf ("upload \"%s\" to %s%s", run->value, seen,
                               json_object_get_boolean_member_with_default (reply, "filesSelected",
                                                                            FALSE)
                                 ? "" : " (the page did not ask for the file)");
  else if (run->step->verb == SIGHT_DIRECT_FILL || run->step->verb == SIGHT_DIRECT_SELECT ||
           run->step->verb == SIGHT_DIRECT_PRESS)
    summary = g_strdup_printf ("%s \"%s\" on %s", verb, run->value, seen);
  else
    summary = g_strdup_printf ("%s %s", verb, seen);
  if (json_object_get_boolean_member_with_default (reply, "navigated", FALSE))
    {
      char *longer = g_strdup_printf ("%s, now on %s", summary,
                                      json_object_get_string_member_with_default (reply, "url", ""));

      g_free (summary);
      summary = longer;
    }
  action_call_free (call);
  succeed (task, summary);
}

/* @text with @value, as written in it (quoted, with its escapes, or bare),
 * replaced by SIGHT_DIRECT_SECRET_MASK. */
static char *
mask_literal (const char *text,
              const char *value)
{
  g_autoptr(GString) s = g_string_new (text);
  g_autoptr(GString) quoted = g_string_new ("\"");

  for (const char *p = value; *p != '\0'; p++)
    {
      if (*p == '"' || *p == '\\')
        g_string_append_c (quoted, '\\');
      g_string_append_c (quoted, *p);
    }
  g_string_append_c (quoted, '"');
  g_string_replace (s, quoted->str, "\"" SIGHT_DIRECT_SECRET_MASK "\"", 0);
  g_string_replace (s, value, SIGHT_DIRECT_SECRET_MASK, 0);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

/* Runs the step's action on @ref (NULL: the focused element or the page). */
static void
perform_step (GTask      *task,
              const char *ref,
              char       *seen,
              gboolean    secure)
{
  Run *run = g_task_get_task_data (task);
  ActionCall *call = g_new0 (ActionCall, 1);
  const char *value = run->value;

  /* A value typed into a password field is a secret even when the test
   * wrote it out, literally or as a plain param: from here on it is redacted
   * wherever it is written (the step's options too) and the step's text is
   * not kept with it. */
  if (run->step->verb == SIGHT_DIRECT_FILL && !run->value_secret && run->masked_text == NULL &&
      sight_secret_fill_note_typed (secure, run->step->param, run->value))
    {
      run->masked_text = run->step->param != NULL ? g_strdup (run->step->source)
                                                  : mask_literal (run->step->source, run->value);
    }
  call->task = task;
  call->seen = seen;
  call->secure = secure;
  sight_action_init (&call->action, SIGHT_ACTION_CLICK);
  sight_direct_verb_to_action (run->step->verb, &call->action.kind);
  call->action.ref = g_strdup (ref);
  call->action.param = g_strdup (run->step->param);
  call->action.value = g_strdup (value);
  if (call->action.kind == SIGHT_ACTION_SCROLL && ref == NULL)
    {
      g_free (call->action.value);
      if (run->step->amount > 0 &&
          (run->step->scroll == SIGHT_SCROLL_DOWN || run->step->scroll == SIGHT_SCROLL_UP))
        call->action.value = g_strdup_printf ("%d", run->step->scroll == SIGHT_SCROLL_UP
                                                      ? -run->step->amount : run->step->amount);
      else
        call->action.value = g_strdup (scroll_direction (run->step->scroll));
    }
  else if (run->secret_name != NULL)
    {
      sight_secret_fill_async (run->page, run->secrets, run->secret_name, run->step->param,
                               run->origin, ref, remaining_ms (run),
                               g_task_get_cancellable (task), action_cb, call);
      return;
    }
  sight_web_page_perform_action_async (run->page, &call->action, remaining_ms (run),
                                       g_task_get_cancellable (task), action_cb, call);
}

static void
observed_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      data)
{
  GTask *task = data;
  Run *run = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(SightObservation) obs = sight_observation_capture_finish (result, &error);
  g_autoptr(SightNodeList) list = NULL;
  const SightNodeView *nodes;
  guint n, index;
  gboolean expectation = run->step->verb == SIGHT_DIRECT_EXPECT;

  if (obs == NULL && end_if_environment (task, &error))
    return;
  if (obs == NULL)
    {
      retry_or_fail (task, expectation ? SIGHT_ERROR_ASSERTION_FAILED : SIGHT_ERROR_ACTION_FAILED,
                     g_strdup (error->message));
      return;
    }
  list = sight_node_list_new (obs);
  nodes = sight_node_list_get (list, &n);
  if (!sight_direct_step_resolve (run->step, nodes, n, &index, &error))
    {
      /* an ambiguous target stays ambiguous: say so now, never guess */
      if (strstr (error->message, "ambiguous") != NULL)
        {
          g_task_return_error (task, g_steal_pointer (&error));
          g_object_unref (task);
          return;
        }
      if (expectation && run->step->expect == SIGHT_EXPECT_HIDDEN)
        {
          g_autofree char *what = sight_target_describe (&run->step->target);
          g_autofree char *summary = g_strdup_printf ("%s is not on the page", what);

          succeed (task, summary);
          return;
        }
      retry_or_fail (task, expectation ? SIGHT_ERROR_ASSERTION_FAILED : SIGHT_ERROR_ACTION_FAILED,
                     g_strdup (error->message));
      return;
    }

  if (expectation)
    {
      g_autofree char *why = NULL;

      if (check_element (run, &nodes[index], &why))
        {
          g_autofree char *seen = node_text (&nodes[index]);
          g_autofree char *summary = g_strdup_printf ("%s: %s", seen,
                                                      sight_expect_kind_to_string (run->step->expect));

          succeed (task, summary);
        }
      else
        retry_or_fail (task, SIGHT_ERROR_ASSERTION_FAILED, g_steal_pointer (&why));
      return;
    }

  perform_step (task, nodes[index].ref, node_text (&nodes[index]),
                (nodes[index].states & SIGHT_NODE_SECURE) != 0);
}

static void
text_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      data)
{
  GTask *task = data;
  Run *run = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) reply = sight_web_page_evaluate_finish (SIGHT_WEB_PAGE (source), result, &error);
  gboolean present = reply != NULL && JSON_NODE_HOLDS_VALUE (reply) &&
                     json_node_get_value_type (reply) == G_TYPE_BOOLEAN &&
                     json_node_get_boolean (reply);
  gboolean want = run->step->expect == SIGHT_EXPECT_TEXT;
  SightErrorCode code = run->step->verb == SIGHT_DIRECT_WAIT_FOR_TEXT ? SIGHT_ERROR_STEP_TIMEOUT
                                                                      : SIGHT_ERROR_ASSERTION_FAILED;

  if (reply == NULL && end_if_environment (task, &error))
    return;
  if (present == want)
    {
      g_autofree char *summary = g_strdup_printf ("the text \"%s\" is %son the page",
                                                  run->step->value, want ? "" : "not ");

      succeed (task, summary);
      return;
    }
  /* The page answered before the deadline: its document went away for
   * another, which is read as soon as it is there. */
  if (reply != NULL && g_get_monotonic_time () + RETRY_MS * 1000 < run->deadline &&
      sight_web_page_get_process_mark (run->page) == run->mark)
    {
      g_timeout_add (MIN_RETRY_MS, retry_cb, task);
      return;
    }
  retry_or_fail (task, code,
                 g_strdup_printf ("the text \"%s\" is %son the page", run->step->value,
                                  present ? "" : "not "));
}

static void
history_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      data)
{
  GTask *task = data;
  g_autoptr(GError) error = NULL;
  g_autofree char *summary = NULL;

  if (!sight_web_page_history_finish (SIGHT_WEB_PAGE (source), result, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      g_object_unref (task);
      return;
    }
  if (((Run *) g_task_get_task_data (task))->step->verb == SIGHT_DIRECT_BACK)
    {
      g_auto(SightAction) back = { SIGHT_ACTION_BACK };

      set_record (g_task_get_task_data (task), &back, NULL);
    }
  summary = g_strdup_printf ("now on %s", sight_web_page_get_uri (SIGHT_WEB_PAGE (source)));
  succeed (task, summary);
}

static void
load_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      data)
{
  GTask *task = data;
  g_autoptr(GError) error = NULL;

  if (!sight_web_page_load_finish (SIGHT_WEB_PAGE (source), result, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      g_object_unref (task);
      return;
    }
  {
    g_autofree char *summary = g_strdup_printf ("went to %s",
                                                sight_web_page_get_uri (SIGHT_WEB_PAGE (source)));
    g_auto(SightAction) navigate = { SIGHT_ACTION_NAVIGATE };

    navigate.value = g_strdup (sight_web_page_get_uri (SIGHT_WEB_PAGE (source)));
    set_record (g_task_get_task_data (task), &navigate, NULL);
    succeed (task, summary);
  }
}

static gboolean
waited_cb (gpointer data)
{
  GTask *task = data;
  Run *run = g_task_get_task_data (task);
  g_autofree char *summary = g_strdup_printf ("waited %s ms", run->step->value);

  succeed (task, summary);
  return G_SOURCE_REMOVE;
}

/* Looks for the step's text, and waits in the page for it to come (or go)
 * until shortly before the deadline: one round trip, not one per change. */
static void
read_text (GTask *task)
{
  Run *run = g_task_get_task_data (task);
  g_autoptr(JsonNode) args = json_from_string ("{}", NULL);
  JsonObject *object = json_node_get_object (args);
  guint left = remaining_ms (run);
  guint wait = left > RETRY_MS ? left - RETRY_MS : 0;

  json_object_set_string_member (object, "value", run->step->value);
  json_object_set_boolean_member (object, "want", run->step->expect == SIGHT_EXPECT_TEXT);
  json_object_set_int_member (object, "ms", wait);
  sight_web_page_evaluate_async (run->page, text_js, args, wait + MAX (RETRY_MS, wait),
                                 g_task_get_cancellable (task), text_cb, task);
}

static void
attempt (GTask *task)
{
  Run *run = g_task_get_task_data (task);
  SightDirectStep *step = run->step;

  if (step->verb == SIGHT_DIRECT_EXPECT && !is_element_expectation (step->expect))
    {
      if (step->expect == SIGHT_EXPECT_URL_CONTAINS || step->expect == SIGHT_EXPECT_URL_EQUALS)
        {
          const char *uri = sight_web_page_get_uri (run->page);
          gboolean ok = uri != NULL &&
                        (step->expect == SIGHT_EXPECT_URL_EQUALS ? g_str_equal (uri, step->value)
                                                                 : strstr (uri, step->value) != NULL);

          if (ok)
            {
              g_autofree char *summary = g_strdup_printf ("the URL is %s", uri);

              succeed (task, summary);
            }
          else
            retry_or_fail (task, SIGHT_ERROR_ASSERTION_FAILED,
                           g_strdup_printf ("the URL is %s, which %s \"%s\"", uri != NULL ? uri : "",
                                            step->expect == SIGHT_EXPECT_URL_EQUALS ? "is not"
                                                                                   : "does not contain",
                                            step->value));
          return;
        }
      read_text (task);
      return;
    }
  if (step->verb == SIGHT_DIRECT_WAIT_FOR_TEXT)
    {
      read_text (task);
      return;
    }
  sight_observation_capture_current_async (run->page, SIGHT_OBSERVE_PARSE_TREE, remaining_ms (run),
                                           g_task_get_cancellable (task), observed_cb, task);
}

/* The value of a {param}: a string or a number as text.  A Secret is typed
 * by the one secret fill, which reads it when every check passed; an
 * expectation compares with it, read for the page's origin; no other verb
 * takes one. */
static gboolean
resolve_param (Run     *run,
               GError **error)
{
  JsonNode *value = NULL;
  const char *secret = NULL;

  if (run->step->param == NULL)
    {
      run->value = g_strdup (run->step->value);
      return TRUE;
    }
  if (run->params != NULL && JSON_NODE_HOLDS_OBJECT (run->params))
    value = json_object_get_member (json_node_get_object (run->params), run->step->param);
  if (value == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "the step uses {%s}, which its params do not define", run->step->param);
      return FALSE;
    }
  if (sight_params_is_secret (value, &secret))
    {
      run->value_secret = TRUE;
      if (run->step->verb == SIGHT_DIRECT_FILL)
        {
          run->secret_name = g_strdup (secret);
          return TRUE;
        }
      if (run->step->verb != SIGHT_DIRECT_EXPECT)
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "{%s} is a secret, which only a fill types: type {%s} into a field",
                       run->step->param, run->step->param);
          return FALSE;
        }
      if (run->secrets == NULL)
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE,
                       "no credentials are configured for the secret \"%s\"", secret);
          return FALSE;
        }
      run->expect_secret = g_strdup (secret);
      return TRUE;
    }
  if (JSON_NODE_HOLDS_VALUE (value) && json_node_get_value_type (value) == G_TYPE_STRING)
    run->value = g_strdup (json_node_get_string (value));
  else if (JSON_NODE_HOLDS_VALUE (value))
    run->value = json_to_string (value, FALSE);
  else
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "{%s} must be a string, a number or a secret", run->step->param);
      return FALSE;
    }
  return TRUE;
}

static void
page_checked_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      data)
{
  GTask *outer = data;
  Run *run = g_task_get_task_data (outer);
  g_autoptr(GError) lost = NULL;

  /* Whatever the step concluded, a page that lost its web process is why. */
  if (!sight_web_page_check_process_finish (SIGHT_WEB_PAGE (source), result, &lost) &&
      !g_error_matches (lost, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_task_return_error (outer, g_steal_pointer (&lost));
  else if (run->error != NULL)
    g_task_return_error (outer, g_steal_pointer (&run->error));
  else
    g_task_return_pointer (outer, g_steal_pointer (&run->summary), g_free);
  g_object_unref (outer);
}

static void
step_done_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      data)
{
  GTask *outer = data;
  Run *run = g_task_get_task_data (outer);

  run->summary = g_task_propagate_pointer (G_TASK (result), &run->error);
  if (g_error_matches (run->error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_task_return_error (outer, g_steal_pointer (&run->error));
      g_object_unref (outer);
      return;
    }
  sight_web_page_check_process_since_async (run->page, run->mark, run->started,
                                            g_task_get_cancellable (outer), page_checked_cb, outer);
}

/* The value an `expect` compares with a Secret: read without blocking (a
 * keyring answers over D-Bus), within the step's deadline. */
static void
expected_secret_cb (GObject      *source,
                    GAsyncResult *result,
                    gpointer      data)
{
  GTask *task = data;
  Run *run = g_task_get_task_data (task);
  GError *error = NULL;
  const char *value = sight_secrets_resolve_finish (run->secrets, result, &error);

  if (value == NULL)
    {
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  run->value = g_strdup (value);
  attempt (task);
}

void
sight_direct_step_run_async (SightWebPage        *page,
                             const char          *text,
                             JsonNode            *params,
                             SightSecrets        *secrets,
                             guint                timeout_ms,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  GTask *outer;
  GTask *task;
  Run *run;
  GError *error = NULL;

  g_return_if_fail (SIGHT_IS_WEB_PAGE (page));
  g_return_if_fail (text != NULL);

  outer = g_task_new (page, cancellable, callback, user_data);
  g_task_set_source_tag (outer, sight_direct_step_run_async);
  run = g_new0 (Run, 1);
  run->page = g_object_ref (page);
  run->params = params != NULL ? json_node_ref (params) : NULL;
  run->secrets = secrets != NULL ? sight_secrets_ref (secrets) : NULL;
  run->origin = g_strdup (sight_web_page_get_uri (page));
  run->deadline = g_get_monotonic_time () + (gint64) MAX (timeout_ms, 1u) * 1000;
  run->mark = sight_web_page_get_process_mark (page);
  run->started = g_get_monotonic_time ();
  g_task_set_task_data (outer, run, (GDestroyNotify) run_free);

  run->step = sight_direct_step_parse (text, &error);
  if (run->step == NULL || !resolve_param (run, &error))
    {
      g_task_return_error (outer, error);
      g_object_unref (outer);
      return;
    }
  /* The step runs as @task; its outcome goes to @outer once the page is checked. */
  task = g_task_new (page, cancellable, step_done_cb, outer);
  g_task_set_task_data (task, run, NULL);

  switch (run->step->verb)
    {
    case SIGHT_DIRECT_GOTO:
      {
        const char *current = sight_web_page_get_uri (page);
        g_autoptr(GUri) base = current != NULL ? g_uri_parse (current, G_URI_FLAGS_NONE, NULL) : NULL;
        g_autoptr(GUri) joined = NULL;
        g_autofree char *uri = NULL;

        if (base != NULL && !g_str_has_prefix (run->value, "http"))
          joined = g_uri_parse_relative (base, run->value, G_URI_FLAGS_NONE, NULL);
        uri = joined != NULL ? g_uri_to_string (joined) : g_strdup (run->value);
        sight_web_page_load_async (page, uri, SIGHT_WAIT_UNTIL_LOAD, timeout_ms, cancellable,
                                   load_cb, task);
      }
      return;
    case SIGHT_DIRECT_BACK:
    case SIGHT_DIRECT_FORWARD:
    case SIGHT_DIRECT_RELOAD:
      sight_web_page_history_async (page,
                                    run->step->verb == SIGHT_DIRECT_BACK ? SIGHT_HISTORY_BACK
                                    : run->step->verb == SIGHT_DIRECT_FORWARD ? SIGHT_HISTORY_FORWARD
                                    : SIGHT_HISTORY_RELOAD,
                                    timeout_ms, cancellable, history_cb, task);
      return;
    case SIGHT_DIRECT_WAIT_TIME:
      g_timeout_add ((guint) MIN (g_ascii_strtoull (run->step->value, NULL, 10), (guint64) timeout_ms),
                     waited_cb, task);
      return;
    case SIGHT_DIRECT_SCROLL:
      if (run->step->scroll != SIGHT_SCROLL_TO_TARGET)
        {
          perform_step (task, NULL, NULL, FALSE);
          return;
        }
      break;
    case SIGHT_DIRECT_PRESS:
      if (!run->step->has_target)
        {
          /* keys to the focused element, as a person's keyboard sends them */
          perform_step (task, NULL, NULL, FALSE);
          return;
        }
      break;
    case SIGHT_DIRECT_UPLOAD:
    case SIGHT_DIRECT_CLICK:
    case SIGHT_DIRECT_DOUBLE_CLICK:
    case SIGHT_DIRECT_HOVER:
    case SIGHT_DIRECT_FILL:
    case SIGHT_DIRECT_SELECT:
    case SIGHT_DIRECT_CHECK:
    case SIGHT_DIRECT_UNCHECK:
    case SIGHT_DIRECT_WAIT_FOR_TEXT:
    case SIGHT_DIRECT_EXPECT:
    default:
      break;
    }

  if (!run->step->has_target && run->step->verb != SIGHT_DIRECT_EXPECT &&
      run->step->verb != SIGHT_DIRECT_WAIT_FOR_TEXT)
    {
      g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                               "\"%s\" needs a target: name the element, for example: "
                               "click the Save button", text);
      g_object_unref (task);
      return;
    }
  if (run->expect_secret != NULL)
    sight_secrets_resolve_async (run->secrets, run->expect_secret, sight_web_page_get_uri (page),
                                 remaining_ms (run), cancellable, expected_secret_cb, task);
  else
    attempt (task);
}

JsonObject *
sight_direct_step_run_get_record (GAsyncResult *result)
{
  Run *run;

  g_return_val_if_fail (G_IS_TASK (result), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == sight_direct_step_run_async, NULL);
  run = g_task_get_task_data (G_TASK (result));
  return run != NULL && !g_task_had_error (G_TASK (result)) ? run->record : NULL;
}

const char *
sight_direct_step_run_get_masked_text (GAsyncResult *result)
{
  Run *run;

  g_return_val_if_fail (G_IS_TASK (result), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == sight_direct_step_run_async, NULL);
  run = g_task_get_task_data (G_TASK (result));
  return run != NULL ? run->masked_text : NULL;
}

char *
sight_direct_step_run_finish (SightWebPage  *page,
                              GAsyncResult  *result,
                              GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, page), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
