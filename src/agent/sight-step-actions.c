/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-step-actions"

#include "config.h"

#include "sight-agent-private.h"
#include "sight-direct-run.h"
#include "sight-error.h"

/* FIELD_PURPOSE answers, without touching the field, whether it is an enabled
 * input and which credential purposes it accepts: the check a secret fill needs
 * before any value leaves the host.  Runs after snapshot.js in the isolated world. */
static const char purpose_script[] =
  "const el = __sight.snapshot.resolve (args.ref);\n"
  "if (!el || el.localName !== 'input') return { input: false };\n"
  "const type = (el.getAttribute ('type') || 'text').toLowerCase ();\n"
  "const ac = (el.getAttribute ('autocomplete') || '').toLowerCase ();\n"
  "const enabled = !el.disabled && !el.readOnly;\n"
  "const secure = type === 'password' || /\\b(current-password|new-password|one-time-code)\\b/.test (ac);\n"
  "const p = [];\n"
  "if (/\\bone-time-code\\b/.test (ac)) p.push ('one-time-code');\n"
  "else if (/\\bnew-password\\b/.test (ac)) p.push ('new-password');\n"
  "else if (type === 'password') { p.push ('password'); if (!/current-password/.test (ac)) p.push ('new-password'); }\n"
  "if (!secure) {\n"
  "  if (/\\busername\\b/.test (ac) || (ac === '' && (type === 'text' || type === 'email'))) p.push ('username');\n"
  "  if (/\\bemail\\b/.test (ac) || type === 'email') p.push ('email');\n"
  "}\n"
  "return { input: true, enabled, secure, purposes: p };\n";

/* The time one action may take to become actionable, act and settle. */
#define ACTION_TIMEOUT_MS 10000

JsonObject *
_sight_step_field_purpose (SightStep   *step,
                           const char  *ref,
                           GError     **error)
{
  static gsize body_init;
  static char *body;
  g_autoptr(JsonNode) call_args = json_node_new (JSON_NODE_OBJECT);
  g_autoptr(JsonNode) answer = NULL;
  JsonObject *object = json_object_new ();
  SightWaiter waiter = { NULL };
  SightWebPage *page = sight_agent_get_page (step->agent);

  if (g_once_init_enter (&body_init))
    {
      body = g_strconcat (sight_observation_get_script (), "\n", purpose_script, NULL);
      g_once_init_leave (&body_init, 1);
    }
  if (!sight_budget_check_deadline (step->budget, error))
    {
      json_object_unref (object);
      return NULL;
    }
  json_object_set_string_member (object, "ref", ref);
  json_node_take_object (call_args, object);
  sight_web_page_evaluate_async (page, body, call_args,
                                 (guint) MAX (1, sight_budget_cap_ms (step->budget, ACTION_TIMEOUT_MS)),
                                 step->cancellable, _sight_waiter_cb, &waiter);
  answer = sight_web_page_evaluate_finish (page, _sight_waiter_wait (&waiter), error);
  g_clear_object (&waiter.result);
  if (answer == NULL)
    return NULL;
  if (!JSON_NODE_HOLDS_OBJECT (answer))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED,
                   "the field %s gave no answer", ref);
      return NULL;
    }
  return json_object_ref (json_node_get_object (answer));
}

JsonObject *
_sight_step_perform (SightStep   *step,
                     const char  *ref,
                     const char  *verb,
                     const char  *value,
                     gboolean     at_point,
                     double       x,
                     double       y,
                     GError     **error)
{
  SightWebPage *page = sight_agent_get_page (step->agent);
  gint64 configured = sight_project_get_action_timeout (sight_agent_get_project (step->agent));
  SightWaiter waiter = { NULL };
  JsonObject *reply;

  if (!sight_budget_check_deadline (step->budget, error))
    return NULL;
  _sight_direct_perform_async (page, ref, at_point, x, y, verb, value,
                               (guint) MAX (1, sight_budget_cap_ms (step->budget,
                                                                    configured > 0 ? configured
                                                                                   : ACTION_TIMEOUT_MS)),
                               step->cancellable, _sight_waiter_cb, &waiter);
  reply = _sight_direct_perform_finish (page, _sight_waiter_wait (&waiter), error);
  g_clear_object (&waiter.result);
  return reply;
}
