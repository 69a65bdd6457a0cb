/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include "sight-budget.h"
#include "sight-error.h"
#include "sight-project.h"
#include "sight-step-options.h"

static SightProject *
project (const char *json)
{
  g_autoptr(GError) error = NULL;
  SightProject *p = sight_project_new_from_data (json, -1, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (p);
  return p;
}

static SightStepOptions *
options (SightStepKind  kind,
         const char    *json)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  SightStepOptions *o;

  json_parser_load_from_data (parser, json, -1, &error);
  g_assert_no_error (error);
  o = sight_step_options_parse (kind, json_node_get_object (json_parser_get_root (parser)), &error);
  g_assert_no_error (error);
  return o;
}

static void
resolve_ok (SightProject      *p,
            SightStepKind      kind,
            const char        *json,
            gint64             remaining,
            SightBudgetLimits *out)
{
  g_autoptr(SightStepOptions) o = options (kind, json);
  g_autoptr(GError) error = NULL;

  g_assert_true (sight_budget_resolve (p, o, NULL, remaining, out, &error));
  g_assert_no_error (error);
}

static void
resolve_fails (SightProject  *p,
               SightStepKind  kind,
               const char    *json,
               const char    *message_part)
{
  g_autoptr(SightStepOptions) o = options (kind, json);
  g_autoptr(GError) error = NULL;
  SightBudgetLimits limits;

  g_assert_false (sight_budget_resolve (p, o, NULL, -1, &limits, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
  if (strstr (error->message, message_part) == NULL)
    g_error ("expected \"%s\" in \"%s\"", message_part, error->message);
}

static void
test_defaults_table (void)
{
  g_autoptr(SightProject) p = sight_project_new_default ();
  SightBudgetLimits l;

  resolve_ok (p, SIGHT_STEP_ACT, "{}", -1, &l);
  g_assert_cmpint (l.max_model_calls, ==, 25);
  g_assert_cmpint (l.max_actions, ==, 25);
  g_assert_cmpint (l.timeout_ms, ==, 120000);
  g_assert_false (l.timeout_capped);
  g_assert_null (l.agent->provider);

  resolve_ok (p, SIGHT_STEP_WAIT_FOR, "{}", -1, &l);
  g_assert_cmpint (l.max_model_calls, ==, 25);
  g_assert_cmpint (l.max_actions, ==, 0);
  g_assert_cmpint (l.timeout_ms, ==, 30000);
  g_assert_cmpint (l.interval_ms, ==, 3000);
  g_assert_cmpint (l.vision, ==, SIGHT_VISION_OFF);

  resolve_ok (p, SIGHT_STEP_EXTRACT, "{\"schema\": true}", -1, &l);
  g_assert_cmpint (l.max_model_calls, ==, 2);
  g_assert_cmpint (l.max_actions, ==, 0);
  g_assert_cmpint (l.timeout_ms, ==, 30000);

  resolve_ok (p, SIGHT_STEP_ASSERT, "{}", -1, &l);
  g_assert_cmpint (l.max_model_calls, ==, 2);
  g_assert_cmpint (l.max_actions, ==, 0);
  g_assert_cmpint (l.timeout_ms, ==, 30000);
  g_assert_true (l.screenshot);
}

static void
test_configured_limits (void)
{
  g_autoptr(SightProject) p = project (
      "{\"agents\": {\"default\": {\"model\": \"openai:m\", \"maxSteps\": 8,"
      "                            \"maxModelCalls\": 10, \"vision\": \"only\"},"
      "              \"other\": {\"model\": \"anthropic:c\"}},"
      " \"defaults\": {\"timeout\": 60000, \"actionTimeout\": 45000}}");
  g_autoptr(SightProject) short_action = project ("{\"defaults\": {\"actionTimeout\": 10000}}");
  SightBudgetLimits l;

  resolve_ok (p, SIGHT_STEP_ACT, "{}", -1, &l);
  g_assert_cmpint (l.max_model_calls, ==, 10);
  g_assert_cmpint (l.max_actions, ==, 8);
  g_assert_cmpint (l.timeout_ms, ==, 60000);
  g_assert_cmpint (l.vision, ==, SIGHT_VISION_OFF); /* act takes no vision */

  /* The judgment budget: max(30000, actionTimeout). */
  resolve_ok (p, SIGHT_STEP_WAIT_FOR, "{}", -1, &l);
  g_assert_cmpint (l.max_model_calls, ==, 10);
  g_assert_cmpint (l.timeout_ms, ==, 45000);
  g_assert_cmpint (l.vision, ==, SIGHT_VISION_ONLY);
  resolve_ok (short_action, SIGHT_STEP_ASSERT, "{}", -1, &l);
  g_assert_cmpint (l.timeout_ms, ==, 30000);
  resolve_ok (p, SIGHT_STEP_EXTRACT, "{\"schema\": {}}", -1, &l);
  g_assert_cmpint (l.max_model_calls, ==, 2);
  g_assert_cmpint (l.timeout_ms, ==, 45000);

  /* Per-call vision and screenshot win over the agent's. */
  resolve_ok (p, SIGHT_STEP_ASSERT, "{\"vision\": false, \"screenshot\": false}", -1, &l);
  g_assert_cmpint (l.vision, ==, SIGHT_VISION_OFF);
  g_assert_false (l.screenshot);

  /* The agent option picks another agent, with its own (default) limits. */
  resolve_ok (p, SIGHT_STEP_ACT, "{\"agent\": \"other\"}", -1, &l);
  g_assert_cmpstr (l.agent->name, ==, "other");
  g_assert_cmpint (l.max_model_calls, ==, 25);
  resolve_fails (p, SIGHT_STEP_ACT, "{\"agent\": \"ghost\"}", "no agent named ghost");
}

static void
test_lower_only (void)
{
  g_autoptr(SightProject) p = project (
      "{\"agents\": {\"default\": {\"model\": \"openai:m\", \"maxSteps\": 8,"
      " \"maxModelCalls\": 10}}}");
  SightBudgetLimits l;

  resolve_ok (p, SIGHT_STEP_ACT, "{\"maxSteps\": 7, \"maxModelCalls\": 1}", -1, &l);
  g_assert_cmpint (l.max_actions, ==, 7);
  g_assert_cmpint (l.max_model_calls, ==, 1);
  resolve_ok (p, SIGHT_STEP_ACT, "{\"maxSteps\": 8, \"maxModelCalls\": 10}", -1, &l);
  g_assert_cmpint (l.max_actions, ==, 8);
  g_assert_cmpint (l.max_model_calls, ==, 10);
  resolve_fails (p, SIGHT_STEP_ACT, "{\"maxSteps\": 9}", "maxSteps 9 is above the limit of 8");
  resolve_fails (p, SIGHT_STEP_ACT, "{\"maxModelCalls\": 11}", "can only lower");
  resolve_ok (p, SIGHT_STEP_WAIT_FOR, "{\"maxModelCalls\": 3}", -1, &l);
  g_assert_cmpint (l.max_model_calls, ==, 3);
  resolve_fails (p, SIGHT_STEP_WAIT_FOR, "{\"maxModelCalls\": 11}", "maxModelCalls 11");

  /* A per-call timeout replaces the default, in either direction. */
  resolve_ok (p, SIGHT_STEP_ACT, "{\"timeout\": 500000}", -1, &l);
  g_assert_cmpint (l.timeout_ms, ==, 500000);
  resolve_ok (p, SIGHT_STEP_ASSERT, "{\"timeout\": 1000}", -1, &l);
  g_assert_cmpint (l.timeout_ms, ==, 1000);
}

static void
test_capped_by_test (void)
{
  g_autoptr(SightProject) p = sight_project_new_default ();
  SightBudgetLimits l;

  resolve_ok (p, SIGHT_STEP_ACT, "{}", 5000, &l);
  g_assert_cmpint (l.timeout_ms, ==, 5000);
  g_assert_true (l.timeout_capped);
  resolve_ok (p, SIGHT_STEP_ACT, "{\"timeout\": 4000}", 5000, &l);
  g_assert_cmpint (l.timeout_ms, ==, 4000);
  g_assert_false (l.timeout_capped);
  resolve_ok (p, SIGHT_STEP_WAIT_FOR, "{}", 120000, &l);
  g_assert_cmpint (l.timeout_ms, ==, 30000);
  g_assert_false (l.timeout_capped);
  resolve_ok (p, SIGHT_STEP_EXTRACT, "{\"schema\": {}}", 0, &l);
  g_assert_cmpint (l.timeout_ms, ==, 0);
  g_assert_true (l.timeout_capped);
}

static gint64 fake_now;

static gint64
fake_clock (gpointer user_data)
{
  return fake_now;
}

static void
test_running_budget (void)
{
  SightBudgetLimits limits = {
    .kind = SIGHT_STEP_ACT, .max_model_calls = 2, .max_actions = 1, .timeout_ms = 1000,
  };
  g_autoptr(SightBudget) b = NULL;
  g_autoptr(GError) error = NULL;

  fake_now = 5000000;
  b = sight_budget_new_with_clock (&limits, fake_clock, NULL);
  g_assert_cmpint (sight_budget_get_deadline (b), ==, 6000000);
  g_assert_cmpint (sight_budget_remaining_ms (b), ==, 1000);
  g_assert_cmpint (sight_budget_cap_ms (b, 3000), ==, 1000);
  g_assert_cmpint (sight_budget_cap_ms (b, 300), ==, 300);

  g_assert_true (sight_budget_take_model_call (b, &error));
  g_assert_true (sight_budget_take_action (b, &error));
  g_assert_true (sight_budget_take_model_call (b, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (sight_budget_get_model_calls (b), ==, 2);
  g_assert_cmpuint (sight_budget_get_actions (b), ==, 1);
  g_assert_cmpint (sight_budget_get_exhaustion (b), ==, SIGHT_BUDGET_LEFT);

  g_assert_false (sight_budget_take_action (b, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_STEP_BUDGET_EXHAUSTED);
  g_assert_nonnull (strstr (error->message, "all 1 action steps"));
  g_clear_error (&error);
  g_assert_cmpint (sight_budget_get_exhaustion (b), ==, SIGHT_BUDGET_OUT_OF_ACTIONS);

  g_assert_false (sight_budget_take_model_call (b, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_STEP_BUDGET_EXHAUSTED);
  g_assert_nonnull (strstr (error->message, "all 2 model calls"));
  g_clear_error (&error);
  g_assert_cmpuint (sight_budget_get_model_calls (b), ==, 2);

  /* One microsecond before the deadline there is still time; at it there is not. */
  fake_now = 5999999;
  g_assert_true (sight_budget_check_deadline (b, &error));
  fake_now = 6000000;
  g_assert_false (sight_budget_check_deadline (b, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_STEP_TIMEOUT);
  g_clear_error (&error);
  g_assert_cmpint (sight_budget_remaining_ms (b), ==, 0);
  /* The first exhaustion stays the one reported. */
  g_assert_cmpint (sight_budget_get_exhaustion (b), ==, SIGHT_BUDGET_OUT_OF_ACTIONS);
}

static void
test_timeout_before_budget (void)
{
  SightBudgetLimits limits = {
    .kind = SIGHT_STEP_WAIT_FOR, .max_model_calls = 5, .timeout_ms = 100,
    .timeout_capped = TRUE,
  };
  g_autoptr(SightBudget) b = NULL;
  g_autoptr(GError) error = NULL;

  fake_now = 0;
  b = sight_budget_new_with_clock (&limits, fake_clock, NULL);
  g_assert_true (sight_budget_take_model_call (b, &error));
  fake_now = 100 * 1000;
  g_assert_false (sight_budget_take_model_call (b, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_STEP_TIMEOUT);
  g_assert_nonnull (strstr (error->message, "capped by the test's remaining time"));
  g_clear_error (&error);
  g_assert_cmpuint (sight_budget_get_model_calls (b), ==, 1);
  g_assert_cmpint (sight_budget_get_exhaustion (b), ==, SIGHT_BUDGET_OUT_OF_TIME);

  /* A judgment step performs no actions at all. */
  g_assert_false (sight_budget_take_action (b, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_STEP_TIMEOUT);
}

static void
test_zero_actions (void)
{
  SightBudgetLimits limits = {
    .kind = SIGHT_STEP_ASSERT, .max_model_calls = 2, .max_actions = 0, .timeout_ms = 30000,
  };
  g_autoptr(SightBudget) b = sight_budget_new (&limits);
  g_autoptr(GError) error = NULL;

  g_assert_false (sight_budget_take_action (b, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_STEP_BUDGET_EXHAUSTED);
  g_assert_nonnull (strstr (error->message, "assert performs no actions"));
  g_assert_cmpint (sight_budget_remaining_ms (b), >, 29000);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/budget/defaults-table", test_defaults_table);
  g_test_add_func ("/budget/configured-limits", test_configured_limits);
  g_test_add_func ("/budget/lower-only", test_lower_only);
  g_test_add_func ("/budget/capped-by-test", test_capped_by_test);
  g_test_add_func ("/budget/running", test_running_budget);
  g_test_add_func ("/budget/timeout-before-budget", test_timeout_before_budget);
  g_test_add_func ("/budget/zero-actions", test_zero_actions);
  return g_test_run ();
}
