/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-step-actions"

#include "config.h"

#include "sight-agent-private.h"
#include "sight-direct-run.h"
#include "sight-error.h"
#include "sight-secret-fill.h"

/* The time one action may take to become actionable, act and settle. */
#define ACTION_TIMEOUT_MS 10000

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

JsonObject *
_sight_step_fill_secret (SightStep   *step,
                         const char  *ref,
                         const char  *name,
                         const char  *param,
                         GError     **error)
{
  SightWebPage *page = sight_agent_get_page (step->agent);
  gint64 configured = sight_project_get_action_timeout (sight_agent_get_project (step->agent));
  SightWaiter waiter = { NULL };
  JsonObject *reply;

  if (!sight_budget_check_deadline (step->budget, error))
    return NULL;
  sight_secret_fill_async (page, sight_project_get_secrets (sight_agent_get_project (step->agent)),
                           name, param, step->target_origin, ref,
                           (guint) MAX (1, sight_budget_cap_ms (step->budget,
                                                                configured > 0 ? configured
                                                                               : ACTION_TIMEOUT_MS)),
                           step->cancellable, _sight_waiter_cb, &waiter);
  reply = sight_secret_fill_finish (page, _sight_waiter_wait (&waiter), error);
  g_clear_object (&waiter.result);
  return reply;
}
