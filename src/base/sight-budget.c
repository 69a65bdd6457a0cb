/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-budget"

#include "config.h"

#include "sight-budget.h"

#include "sight-error.h"

static gboolean
lower_only (const char  *option,
            gint64       requested,
            gint64       limit,
            const char  *agent,
            gint64      *out,
            GError     **error)
{
  if (requested == 0)
    {
      *out = limit;
      return TRUE;
    }
  if (requested > limit)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "%s %" G_GINT64_FORMAT " is above the limit of %" G_GINT64_FORMAT
                   " of agent %s; a per-call budget can only lower it",
                   option, requested, limit, agent);
      return FALSE;
    }
  *out = requested;
  return TRUE;
}

gboolean
sight_budget_resolve (SightProject            *project,
                      const SightStepOptions  *options,
                      const char              *test_agent,
                      gint64                   remaining_test_ms,
                      SightBudgetLimits       *out,
                      GError                 **error)
{
  const SightAgentConfig *agent;
  const char *agent_name;
  gint64 timeout;

  g_return_val_if_fail (project != NULL, FALSE);
  g_return_val_if_fail (options != NULL, FALSE);
  g_return_val_if_fail (out != NULL, FALSE);

  agent = sight_project_resolve_agent (project, options->agent ? options->agent : test_agent,
                                       error);
  if (agent == NULL)
    return FALSE;
  agent_name = agent->name ? agent->name : "default";

  *out = (SightBudgetLimits) {
    .kind = options->kind,
    .agent = agent,
    .interval_ms = 0,
    .vision = SIGHT_VISION_OFF,
    .screenshot = TRUE,
  };

  switch (options->kind)
    {
    case SIGHT_STEP_ACT:
      if (!lower_only ("maxModelCalls", options->max_model_calls, agent->max_model_calls,
                       agent_name, &out->max_model_calls, error) ||
          !lower_only ("maxSteps", options->max_steps, agent->max_steps, agent_name,
                       &out->max_actions, error))
        return FALSE;
      timeout = sight_project_get_timeout (project);
      break;
    case SIGHT_STEP_WAIT_FOR:
      if (!lower_only ("maxModelCalls", options->max_model_calls, agent->max_model_calls,
                       agent_name, &out->max_model_calls, error))
        return FALSE;
      out->max_actions = 0;
      out->interval_ms = options->interval_ms ? options->interval_ms
                                              : SIGHT_WAIT_FOR_INTERVAL_DEFAULT;
      timeout = sight_project_get_judgment_budget (project);
      break;
    case SIGHT_STEP_ASSERT:
      if (sight_agent_config_dispatches (agent, SIGHT_STEP_ASSERT))
        {
          /* "The assert row holds for the built-in agent": a custom executor
           * runs assert as a step. */
          if (options->vision != SIGHT_VISION_UNSET || options->has_screenshot)
            {
              g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_UNSUPPORTED_CAPABILITY,
                           "assert takes no %s with agent %s, which has a custom executor",
                           options->vision != SIGHT_VISION_UNSET ? "vision" : "screenshot",
                           agent_name);
              return FALSE;
            }
          out->max_model_calls = agent->max_model_calls;
          out->max_actions = agent->max_steps;
          timeout = sight_project_get_timeout (project);
          break;
        }
      G_GNUC_FALLTHROUGH;
    case SIGHT_STEP_EXTRACT:
      out->max_model_calls = SIGHT_JUDGMENT_MODEL_CALLS;
      out->max_actions = 0;
      timeout = sight_project_get_judgment_budget (project);
      break;
    default:
      g_return_val_if_reached (FALSE);
    }

  if (options->kind != SIGHT_STEP_ACT && !sight_agent_config_dispatches (agent, options->kind))
    out->vision = options->vision != SIGHT_VISION_UNSET ? options->vision : agent->vision;
  if (options->kind == SIGHT_STEP_ASSERT && options->has_screenshot)
    out->screenshot = options->screenshot;

  if (options->timeout_ms > 0)
    timeout = options->timeout_ms;
  if (remaining_test_ms >= 0 && remaining_test_ms < timeout)
    {
      timeout = remaining_test_ms;
      out->timeout_capped = TRUE;
    }
  out->timeout_ms = timeout;
  return TRUE;
}

struct _SightBudget {
  SightBudgetLimits      limits;
  SightClockFunc         clock;
  gpointer               clock_data;
  gint64                 deadline;
  guint                  model_calls;
  guint                  actions;
  SightBudgetExhaustion  exhaustion;
};

static gint64
monotonic_clock (gpointer user_data)
{
  return g_get_monotonic_time ();
}

SightBudget *
sight_budget_new_with_clock (const SightBudgetLimits *limits,
                             SightClockFunc           clock,
                             gpointer                 clock_data)
{
  SightBudget *self;

  g_return_val_if_fail (limits != NULL, NULL);

  self = g_new0 (SightBudget, 1);
  self->limits = *limits;
  self->clock = clock ? clock : monotonic_clock;
  self->clock_data = clock_data;
  self->deadline = self->clock (self->clock_data) + MAX (limits->timeout_ms, 0) * 1000;
  return self;
}

SightBudget *
sight_budget_new (const SightBudgetLimits *limits)
{
  return sight_budget_new_with_clock (limits, NULL, NULL);
}

void
sight_budget_free (SightBudget *self)
{
  g_free (self);
}

static const char *
kind_name (SightBudget *self)
{
  return sight_step_kind_to_string (self->limits.kind);
}

gboolean
sight_budget_check_deadline (SightBudget  *self,
                             GError      **error)
{
  g_return_val_if_fail (self != NULL, FALSE);

  if (self->clock (self->clock_data) < self->deadline)
    return TRUE;
  if (self->exhaustion == SIGHT_BUDGET_LEFT)
    self->exhaustion = SIGHT_BUDGET_OUT_OF_TIME;
  g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_STEP_TIMEOUT,
               "%s ran out of time: its %" G_GINT64_FORMAT " ms deadline%s passed",
               kind_name (self), self->limits.timeout_ms,
               self->limits.timeout_capped ? " (capped by the test's remaining time)" : "");
  return FALSE;
}

gboolean
sight_budget_take_model_call (SightBudget  *self,
                              GError      **error)
{
  g_return_val_if_fail (self != NULL, FALSE);

  if (!sight_budget_check_deadline (self, error))
    return FALSE;
  if (self->model_calls >= self->limits.max_model_calls)
    {
      if (self->exhaustion == SIGHT_BUDGET_LEFT)
        self->exhaustion = SIGHT_BUDGET_OUT_OF_MODEL_CALLS;
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_STEP_BUDGET_EXHAUSTED,
                   "%s used all %" G_GINT64_FORMAT " model calls of its budget",
                   kind_name (self), self->limits.max_model_calls);
      return FALSE;
    }
  self->model_calls++;
  return TRUE;
}

gboolean
sight_budget_take_action (SightBudget  *self,
                          GError      **error)
{
  if (!sight_budget_check_action (self, error))
    return FALSE;
  sight_budget_count_action (self);
  return TRUE;
}

gboolean
sight_budget_check_action (SightBudget  *self,
                           GError      **error)
{
  g_return_val_if_fail (self != NULL, FALSE);

  if (!sight_budget_check_deadline (self, error))
    return FALSE;
  if (self->actions >= self->limits.max_actions)
    {
      if (self->exhaustion == SIGHT_BUDGET_LEFT)
        self->exhaustion = SIGHT_BUDGET_OUT_OF_ACTIONS;
      if (self->limits.max_actions == 0)
        g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_STEP_BUDGET_EXHAUSTED,
                     "%s performs no actions", kind_name (self));
      else
        g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_STEP_BUDGET_EXHAUSTED,
                     "%s used all %" G_GINT64_FORMAT " action steps of its budget",
                     kind_name (self), self->limits.max_actions);
      return FALSE;
    }
  return TRUE;
}

void
sight_budget_count_action (SightBudget *self)
{
  g_return_if_fail (self != NULL);

  self->actions++;
}

gint64
sight_budget_remaining_ms (SightBudget *self)
{
  gint64 left;

  g_return_val_if_fail (self != NULL, 0);

  left = self->deadline - self->clock (self->clock_data);
  return left > 0 ? left / 1000 : 0;
}

gint64
sight_budget_cap_ms (SightBudget *self,
                     gint64       wait_ms)
{
  return MIN (wait_ms, sight_budget_remaining_ms (self));
}

gint64
sight_budget_get_deadline (SightBudget *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->deadline;
}

guint
sight_budget_get_model_calls (SightBudget *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->model_calls;
}

guint
sight_budget_get_actions (SightBudget *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->actions;
}

const SightBudgetLimits *
sight_budget_get_limits (SightBudget *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return &self->limits;
}

SightBudgetExhaustion
sight_budget_get_exhaustion (SightBudget *self)
{
  g_return_val_if_fail (self != NULL, SIGHT_BUDGET_LEFT);
  return self->exhaustion;
}
