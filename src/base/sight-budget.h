/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

#include "sight-project.h"
#include "sight-step-options.h"

G_BEGIN_DECLS

/* Budgets of spec/agent-api.txt, "Budgets":
 *
 *   method   model calls                  action steps            default timeout
 *   act      agents.<name>.maxModelCalls  agents.<name>.maxSteps  config.timeout (120000)
 *   waitFor  agents.<name>.maxModelCalls  0                       the judgment budget
 *   extract  2                            0                       the judgment budget
 *   assert   2                            0                       the judgment budget
 *
 * The judgment budget is max(30000, config.actionTimeout) ms.  Agent limits default
 * to 25 and 25.  Per-call maxSteps and maxModelCalls can only lower the agent's
 * limits; a per-call timeout replaces the default.  Every timeout is then capped by
 * the remaining test timeout.  Model calls count every request, repair rounds
 * included; action steps count committed engine actions.
 *
 * The assert row holds for the built-in agent: with an agent that has a custom
 * executor (sight_agent_config_dispatches), assert's budget is the agent's maxSteps and
 * maxModelCalls, its default timeout config.timeout, and vision or screenshot on the
 * call is UNSUPPORTED_CAPABILITY, before the step opens. */

#define SIGHT_JUDGMENT_MODEL_CALLS 2

typedef struct {
  SightStepKind    kind;
  /* the agent the step runs with (borrowed from the project) */
  const SightAgentConfig *agent;
  gint64           max_model_calls;
  gint64           max_actions;
  gint64           timeout_ms;
  /* the remaining test time made timeout_ms shorter than the step's own */
  gboolean         timeout_capped;
  /* waitFor: 3000 unless given */
  gint64           interval_ms;
  /* the per-call vision, else the agent's; never UNSET (act: OFF) */
  SightVisionMode  vision;
  /* failure evidence and the screenshot after the step: TRUE unless an assert
   * gives screenshot: false (a direct step: TRUE) */
  gboolean         screenshot;
} SightBudgetLimits;

/* Resolves @options against @project.  @test_agent is the test's agent (NULL: the
 * project's default); @remaining_test_ms is what is left of the test's timeout, or
 * -1 when the test has none (0 or less leaves a step that times out at once).
 * Errors, INVALID_ARGUMENT: an unknown agent; maxSteps or maxModelCalls above the
 * resolved limit; UNSUPPORTED_CAPABILITY: vision or screenshot on an executor's assert. */
gboolean         sight_budget_resolve       (SightProject            *project,
                                             const SightStepOptions  *options,
                                             const char              *test_agent,
                                             gint64                   remaining_test_ms,
                                             SightBudgetLimits       *out_limits,
                                             GError                 **error);

typedef enum {
  SIGHT_BUDGET_LEFT,
  SIGHT_BUDGET_OUT_OF_MODEL_CALLS,
  SIGHT_BUDGET_OUT_OF_ACTIONS,
  SIGHT_BUDGET_OUT_OF_TIME,
} SightBudgetExhaustion;

/* Monotonic microseconds (g_get_monotonic_time by default). */
typedef gint64 (*SightClockFunc) (gpointer user_data);

/* The running budget of one step: counts model calls and actions and owns the
 * deadline, fixed when it is created. */
typedef struct _SightBudget SightBudget;

SightBudget     *sight_budget_new            (const SightBudgetLimits *limits);
SightBudget     *sight_budget_new_with_clock (const SightBudgetLimits *limits,
                                              SightClockFunc           clock,
                                              gpointer                 clock_data);
void             sight_budget_free           (SightBudget             *self);

/* Call before each model request.  Fails, counting nothing, with STEP_TIMEOUT once
 * the deadline has passed, else STEP_BUDGET_EXHAUSTED once every model call is
 * spent; otherwise counts one call. */
gboolean         sight_budget_take_model_call (SightBudget  *self,
                                               GError      **error);
/* Call before committing each engine action: as above, for action steps (a step
 * with no action budget, like assert, fails at once with STEP_BUDGET_EXHAUSTED). */
gboolean         sight_budget_take_action    (SightBudget  *self,
                                              GError      **error);
/* take_action in two halves, for a caller that counts only the actions the
 * engine committed: the check, counting nothing, before the action runs; the
 * count once it was committed (an action refused by actionability is none). */
gboolean         sight_budget_check_action   (SightBudget  *self,
                                              GError      **error);
void             sight_budget_count_action   (SightBudget  *self);
/* STEP_TIMEOUT once the deadline has passed. */
gboolean         sight_budget_check_deadline (SightBudget  *self,
                                              GError      **error);

/* Milliseconds until the deadline, never negative. */
gint64           sight_budget_remaining_ms   (SightBudget  *self);
/* MIN (@wait_ms, remaining): every wait inside a step is capped by it. */
gint64           sight_budget_cap_ms         (SightBudget  *self,
                                              gint64        wait_ms);
/* The deadline, on the clock's scale (µs). */
gint64           sight_budget_get_deadline   (SightBudget  *self);

guint            sight_budget_get_model_calls (SightBudget *self);
guint            sight_budget_get_actions    (SightBudget  *self);
const SightBudgetLimits *sight_budget_get_limits (SightBudget *self);
/* What ran out first, if anything did (as reported by a take or check call). */
SightBudgetExhaustion sight_budget_get_exhaustion (SightBudget *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightBudget, sight_budget_free)

G_END_DECLS
