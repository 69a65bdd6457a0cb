/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-step-actions"

#include "config.h"

#include "sight-agent-private.h"
#include "sight-error.h"

/* The page actions act commits, run in the isolated world on the element a ref names
 * (snapshot.js's resolve).  Events are dispatched on the shared DOM, so the page's
 * own listeners see them.
 *
 * FIELD_PURPOSE answers, without touching the field, whether it is an enabled input
 * and which credential purposes it accepts: the check a secret fill needs before any
 * value leaves the host. */
static const char actions_script[] =
  "const A = args.args || {};\n"
  "const purposeOf = (el) => {\n"
  "  if (!el || el.localName !== 'input') return { input: false };\n"
  "  const type = (el.getAttribute ('type') || 'text').toLowerCase ();\n"
  "  const ac = (el.getAttribute ('autocomplete') || '').toLowerCase ();\n"
  "  const enabled = !el.disabled && !el.readOnly;\n"
  "  const secure = type === 'password' || /\\b(current-password|new-password|one-time-code)\\b/.test (ac);\n"
  "  const p = [];\n"
  "  if (/\\bone-time-code\\b/.test (ac)) p.push ('one-time-code');\n"
  "  else if (/\\bnew-password\\b/.test (ac)) p.push ('new-password');\n"
  "  else if (type === 'password') { p.push ('password'); if (!/current-password/.test (ac)) p.push ('new-password'); }\n"
  "  if (!secure) {\n"
  "    if (/\\busername\\b/.test (ac) || (ac === '' && (type === 'text' || type === 'email'))) p.push ('username');\n"
  "    if (/\\bemail\\b/.test (ac) || type === 'email') p.push ('email');\n"
  "  }\n"
  "  return { input: true, enabled, secure, purposes: p };\n"
  "};\n"
  "const fire = (el, type, init) => {\n"
  "  const r = el.getBoundingClientRect ();\n"
  "  const x = init && init.x !== undefined ? init.x : r.left + r.width / 2;\n"
  "  const y = init && init.y !== undefined ? init.y : r.top + r.height / 2;\n"
  "  const opts = { bubbles: true, cancelable: true, composed: true, clientX: x, clientY: y, button: 0, view: window };\n"
  "  const E = type.startsWith ('pointer') ? PointerEvent : MouseEvent;\n"
  "  return el.dispatchEvent (new E (type, opts));\n"
  "};\n"
  "const clickAt = (el, at) => {\n"
  "  for (const t of ['pointerover', 'mouseover', 'pointerdown', 'mousedown']) fire (el, t, at);\n"
  "  if (el.focus) el.focus ({ preventScroll: true });\n"
  "  for (const t of ['pointerup', 'mouseup']) fire (el, t, at);\n"
  "  if (el.click && !at) el.click (); else fire (el, 'click', at);\n"
  "};\n"
  "const describe = (el) => {\n"
  "  const n = (el.getAttribute ('aria-label') || el.innerText || el.value || el.getAttribute ('name') || '').trim ().slice (0, 60);\n"
  "  return el.localName + (n ? ' \"' + n + '\"' : '');\n"
  "};\n"
  "const setValue = (el, v) => {\n"
  "  const proto = el.localName === 'textarea' ? HTMLTextAreaElement.prototype : el.localName === 'select' ? HTMLSelectElement.prototype : HTMLInputElement.prototype;\n"
  "  const d = Object.getOwnPropertyDescriptor (proto, 'value');\n"
  "  if (el.isContentEditable) el.textContent = v; else if (d && d.set) d.set.call (el, v); else el.value = v;\n"
  "  el.dispatchEvent (new InputEvent ('input', { bubbles: true, composed: true, inputType: 'insertText' }));\n"
  "  el.dispatchEvent (new Event ('change', { bubbles: true }));\n"
  "};\n"
  "if (args.action === 'tap_point') {\n"
  "  const el = document.elementFromPoint (A.x, A.y);\n"
  "  if (!el) return { ok: false, error: 'nothing at that point' };\n"
  "  clickAt (el, { x: A.x, y: A.y });\n"
  "  return { ok: true, did: 'tapped the point (' + Math.round (A.x) + ', ' + Math.round (A.y) + ') on ' + describe (el) };\n"
  "}\n"
  "if (args.action === 'scroll' && !args.ref) {\n"
  "  const dy = A.direction === 'up' ? -0.8 * innerHeight : A.direction === 'top' ? -scrollY : A.direction === 'bottom' ? document.documentElement.scrollHeight : 0.8 * innerHeight;\n"
  "  window.scrollBy (0, dy);\n"
  "  return { ok: true, did: 'scrolled ' + (A.direction || 'down') };\n"
  "}\n"
  "const el = args.ref ? __sight.snapshot.resolve (args.ref) : (document.activeElement || document.body);\n"
  "if (!el) return { ok: false, error: 'the element ' + args.ref + ' is gone; observe again' };\n"
  "if (args.action === 'purpose') return purposeOf (el);\n"
  "if (el.scrollIntoView) el.scrollIntoView ({ block: 'nearest', inline: 'nearest' });\n"
  "const disabled = el.matches && el.matches (':disabled') || el.getAttribute ('aria-disabled') === 'true';\n"
  "switch (args.action) {\n"
  "case 'click':\n"
  "  if (disabled) return { ok: false, error: describe (el) + ' is disabled' };\n"
  "  clickAt (el); return { ok: true, did: 'clicked ' + describe (el) };\n"
  "case 'hover':\n"
  "  for (const t of ['pointerover', 'pointerenter', 'mouseover', 'mouseenter', 'mousemove']) fire (el, t);\n"
  "  return { ok: true, did: 'hovered ' + describe (el) };\n"
  "case 'fill': {\n"
  "  if (disabled || el.readOnly) return { ok: false, error: describe (el) + ' is not editable' };\n"
  "  if (!('value' in el) && !el.isContentEditable) return { ok: false, error: describe (el) + ' is not a text field' };\n"
  "  if (el.focus) el.focus ();\n"
  "  setValue (el, String (A.value));\n"
  "  return { ok: true, did: 'filled ' + describe (el) };\n"
  "}\n"
  "case 'press': {\n"
  "  const key = String (A.key || 'Enter');\n"
  "  if (el.focus) el.focus ();\n"
  "  const init = { key, bubbles: true, cancelable: true, composed: true };\n"
  "  const go = el.dispatchEvent (new KeyboardEvent ('keydown', init));\n"
  "  el.dispatchEvent (new KeyboardEvent ('keyup', init));\n"
  "  if (go && key === 'Enter' && el.form && el.localName === 'input') el.form.requestSubmit ();\n"
  "  else if (go && (key === 'Enter' || key === ' ') && (el.localName === 'button' || el.localName === 'a')) el.click ();\n"
  "  return { ok: true, did: 'pressed ' + key + ' on ' + describe (el) };\n"
  "}\n"
  "case 'select': {\n"
  "  if (el.localName !== 'select') return { ok: false, error: describe (el) + ' is not a select' };\n"
  "  const want = String (A.option).trim ().toLowerCase ();\n"
  "  const o = Array.from (el.options).find (o => o.label.trim ().toLowerCase () === want || o.value.toLowerCase () === want);\n"
  "  if (!o) return { ok: false, error: 'no option ' + JSON.stringify (A.option) };\n"
  "  setValue (el, o.value);\n"
  "  return { ok: true, did: 'selected ' + JSON.stringify (o.label) + ' in ' + describe (el) };\n"
  "}\n"
  "case 'check': {\n"
  "  const want = A.checked !== false;\n"
  "  const is = 'checked' in el ? el.checked : el.getAttribute ('aria-checked') === 'true';\n"
  "  if (disabled) return { ok: false, error: describe (el) + ' is disabled' };\n"
  "  if (is !== want) clickAt (el);\n"
  "  return { ok: true, did: (want ? 'checked ' : 'unchecked ') + describe (el) };\n"
  "}\n"
  "case 'scroll':\n"
  "  el.scrollIntoView ({ block: 'center' });\n"
  "  return { ok: true, did: 'scrolled to ' + describe (el) };\n"
  "}\n"
  "return { ok: false, error: 'unknown action' };\n";

static const char *
action_name (SightPageAction action)
{
  switch (action)
    {
    case SIGHT_PAGE_ACTION_CLICK: return "click";
    case SIGHT_PAGE_ACTION_FILL: return "fill";
    case SIGHT_PAGE_ACTION_PRESS: return "press";
    case SIGHT_PAGE_ACTION_SELECT: return "select";
    case SIGHT_PAGE_ACTION_CHECK: return "check";
    case SIGHT_PAGE_ACTION_HOVER: return "hover";
    case SIGHT_PAGE_ACTION_SCROLL: return "scroll";
    case SIGHT_PAGE_ACTION_TAP_POINT: return "tap_point";
    case SIGHT_PAGE_ACTION_FIELD_PURPOSE: return "purpose";
    default: return "none";
    }
}

JsonObject *
_sight_page_action (SightStep        *step,
                    SightPageAction   action,
                    const char       *ref,
                    JsonNode         *args,
                    GError          **error)
{
  static gsize body_init;
  static char *body;
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonNode) call_args = NULL;
  g_autoptr(JsonNode) answer = NULL;
  SightWaiter waiter = { NULL };
  gint64 timeout_ms;

  if (g_once_init_enter (&body_init))
    {
      /* The snapshot script installs __sight.snapshot; then the actions. */
      body = g_strconcat (sight_observation_get_script (), "\n", actions_script, NULL);
      g_once_init_leave (&body_init, 1);
    }

  if (!sight_budget_check_deadline (step->budget, error))
    return NULL;
  timeout_ms = MAX (1, sight_budget_cap_ms (step->budget, 10000));

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "action");
  json_builder_add_string_value (b, action_name (action));
  json_builder_set_member_name (b, "ref");
  if (ref != NULL)
    json_builder_add_string_value (b, ref);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "args");
  if (args != NULL)
    json_builder_add_value (b, json_node_copy (args));
  else
    json_builder_add_null_value (b);
  json_builder_end_object (b);
  call_args = json_builder_get_root (b);

  sight_web_page_evaluate_async (sight_agent_get_page (step->agent),
                                 body, call_args, (guint) timeout_ms, step->cancellable,
                                 _sight_waiter_cb, &waiter);
  answer = sight_web_page_evaluate_finish (sight_agent_get_page (step->agent),
                                           _sight_waiter_wait (&waiter), error);
  g_clear_object (&waiter.result);
  if (answer == NULL)
    return NULL;
  if (!JSON_NODE_HOLDS_OBJECT (answer))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED,
                   "the %s action gave no answer", action_name (action));
      return NULL;
    }
  return json_object_ref (json_node_get_object (answer));
}

/* After an action: let a navigation it started finish, and give the page's own
 * handlers a moment to redraw.  At least 100 ms, at most 5 s, capped by the step. */
void
_sight_page_settle (SightStep *step)
{
  WebKitWebView *view = sight_web_page_get_web_view (sight_agent_get_page (step->agent));
  gint64 limit = g_get_monotonic_time () + sight_budget_cap_ms (step->budget, 5000) * 1000;

  _sight_sleep (sight_budget_cap_ms (step->budget, 100), step->cancellable);
  while (webkit_web_view_is_loading (view) && g_get_monotonic_time () < limit &&
         !g_cancellable_is_cancelled (step->cancellable))
    _sight_sleep (MIN (50, MAX (1, (limit - g_get_monotonic_time ()) / 1000)),
                  step->cancellable);
}
