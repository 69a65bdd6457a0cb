/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The model layer's pure parts: usage sums, prices, the SDKs' retry
 * schedule and configuration. */
#include "config.h"

#include <gio/gio.h>

#include "sight-error.h"
#include "sight-model-config.h"
#include "sight-model-prices.h"
#include "sight-model-retry.h"
#include "sight-usage.h"

static SightUsage
call_usage (guint64              input,
            guint64              output,
            SightTokenAccounting accounting,
            gboolean             has_cost,
            guint64              cost)
{
  SightUsage usage;

  sight_usage_init (&usage);
  usage.model_calls = 1;
  usage.input_tokens = input;
  usage.output_tokens = output;
  usage.token_accounting = accounting;
  usage.has_cost = has_cost;
  usage.cost_micro_usd = cost;
  return usage;
}

static void
test_usage_accounting_modes (void)
{
  SightUsage step, a, b;
  g_autoptr(JsonNode) json = NULL;
  JsonObject *object;

  sight_usage_init (&step);
  g_assert_cmpint (step.token_accounting, ==, SIGHT_TOKEN_ACCOUNTING_PROVIDER);

  a = call_usage (100, 20, SIGHT_TOKEN_ACCOUNTING_PROVIDER, TRUE, 50);
  sight_usage_add (&step, &a);
  sight_usage_add (&step, &a);
  g_assert_cmpint (step.model_calls, ==, 2);
  g_assert_cmpint (step.input_tokens, ==, 200);
  g_assert_cmpint (step.output_tokens, ==, 40);
  g_assert_cmpint (step.token_accounting, ==, SIGHT_TOKEN_ACCOUNTING_PROVIDER);
  g_assert_true (step.has_cost);
  g_assert_cmpint (step.cost_micro_usd, ==, 100);

  /* One call without complete counts makes the whole step an upper bound,
   * for good. */
  b = call_usage (5000, 300, SIGHT_TOKEN_ACCOUNTING_ADAPTER_UPPER_BOUND, FALSE, 0);
  sight_usage_add (&step, &b);
  sight_usage_add (&step, &a);
  g_assert_cmpint (step.token_accounting, ==, SIGHT_TOKEN_ACCOUNTING_ADAPTER_UPPER_BOUND);
  g_assert_cmpint (step.input_tokens, ==, 5300);
  g_assert_cmpint (step.cost_micro_usd, ==, 150);

  json = sight_usage_to_json (&step);
  object = json_node_get_object (json);
  g_assert_cmpstr (json_object_get_string_member (object, "tokenAccounting"), ==, "adapter-upper-bound");
  g_assert_cmpint (json_object_get_int_member (object, "inputTokens"), ==, 5300);
  g_assert_cmpint (json_object_get_int_member (object, "modelCalls"), ==, 4);
  g_assert_cmpint (json_object_get_int_member (object, "costMicroUsd"), ==, 150);

  {
    SightUsage back;

    g_assert_true (sight_usage_from_json (json, &back));
    g_assert_cmpint (back.input_tokens, ==, 5300);
    g_assert_cmpint (back.token_accounting, ==, SIGHT_TOKEN_ACCOUNTING_ADAPTER_UPPER_BOUND);
    g_assert_cmpint (back.cost_micro_usd, ==, 150);
  }
}

static void
test_usage_saturation (void)
{
  SightUsage total, big, small;
  g_autoptr(JsonNode) json = NULL;

  g_assert_cmpuint (sight_usage_saturating_add (SIGHT_USAGE_MAX_SAFE, 1), ==, SIGHT_USAGE_MAX_SAFE);
  g_assert_cmpuint (sight_usage_saturating_add (G_MAXUINT64, G_MAXUINT64), ==, SIGHT_USAGE_MAX_SAFE);
  g_assert_cmpuint (sight_usage_saturating_add (SIGHT_USAGE_MAX_SAFE - 1, 1), ==, SIGHT_USAGE_MAX_SAFE);
  g_assert_cmpuint (sight_usage_saturating_add (2, 3), ==, 5);

  sight_usage_init (&total);
  big = call_usage (SIGHT_USAGE_MAX_SAFE - 10, SIGHT_USAGE_MAX_SAFE, SIGHT_TOKEN_ACCOUNTING_PROVIDER,
                    TRUE, SIGHT_USAGE_MAX_SAFE - 5);
  small = call_usage (100, 1, SIGHT_TOKEN_ACCOUNTING_PROVIDER, TRUE, 3);
  sight_usage_add (&total, &big);
  sight_usage_add (&total, &small);
  g_assert_cmpuint (total.input_tokens, ==, SIGHT_USAGE_MAX_SAFE);
  g_assert_cmpuint (total.output_tokens, ==, SIGHT_USAGE_MAX_SAFE);
  g_assert_true (total.has_cost);
  g_assert_cmpuint (total.cost_micro_usd, ==, SIGHT_USAGE_MAX_SAFE - 2);

  /* Past 2^53 - 1 the cost total is omitted, and stays omitted. */
  sight_usage_add (&total, &small);
  g_assert_false (total.has_cost);
  g_assert_true (total.cost_overflowed);
  sight_usage_add (&total, &small);
  g_assert_false (total.has_cost);
  json = sight_usage_to_json (&total);
  g_assert_false (json_object_has_member (json_node_get_object (json), "costMicroUsd"));
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (json), "inputTokens"), ==,
                   G_GINT64_CONSTANT (9007199254740991));
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (json), "tokenAccounting"), ==,
                   "provider");
}

static void
test_prices (void)
{
  g_autoptr(SightPriceTable) table = sight_price_table_new_default ();
  g_autoptr(JsonNode) extra = json_from_string ("{\"my-model\": {\"input\": 1.5, \"output\": 2}}", NULL);
  g_autoptr(JsonNode) bad = json_from_string ("{\"x\": {\"input\": \"cheap\", \"output\": 2}}", NULL);
  g_autoptr(GError) error = NULL;
  SightModelPrice price;
  guint64 cost = 0;

  g_assert_true (sight_price_table_lookup (table, "gpt-4.1-mini", &price));
  g_assert_cmpuint (price.input, ==, 400000);
  g_assert_cmpuint (price.cached_input, ==, 100000);
  g_assert_cmpuint (price.output, ==, 1600000);
  /* A dated snapshot and a vendor prefix find the base model's price; the
   * longest listed prefix wins. */
  g_assert_true (sight_price_table_lookup (table, "gpt-4.1-mini-2025-04-14", &price));
  g_assert_cmpuint (price.input, ==, 400000);
  g_assert_true (sight_price_table_lookup (table, "openai/gpt-4.1", &price));
  g_assert_cmpuint (price.input, ==, 2000000);
  g_assert_true (sight_price_table_lookup (table, "claude-sonnet-4-20250514", &price));
  g_assert_cmpuint (price.output, ==, 15000000);
  g_assert_false (sight_price_table_lookup (table, "llama3.1:8b", &price));
  g_assert_false (sight_price_table_lookup (table, "gpt-4.10", &price));

  /* 600 uncached at $0.40, 400 cached at $0.10, 200 out at $1.60 per 1M. */
  g_assert_true (sight_price_table_lookup (table, "gpt-4.1-mini", &price));
  g_assert_true (sight_model_price_cost (&price, 1000, 400, 200, &cost));
  g_assert_cmpuint (cost, ==, 240 + 40 + 320);
  g_assert_false (sight_model_price_cost (&price, G_MAXUINT64, 0, G_MAXUINT64, &cost));

  g_assert_true (sight_price_table_merge_json (table, extra, &error));
  g_assert_no_error (error);
  g_assert_true (sight_price_table_lookup (table, "my-model", &price));
  g_assert_cmpuint (price.input, ==, 1500000);
  g_assert_cmpuint (price.cached_input, ==, 1500000);
  g_assert_false (sight_price_table_merge_json (table, bad, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
}

static void
test_backoff_schedule (void)
{
  /* The SDKs' numbers: 0.5 s, 1 s, 2 s, … capped at 8 s; jitter takes up
   * to a quarter off. */
  g_assert_cmpint (sight_model_backoff_delay (0, SIGHT_MODEL_BACKOFF_BASE_US, SIGHT_MODEL_BACKOFF_MAX_US, 0.0), ==, 500000);
  g_assert_cmpint (sight_model_backoff_delay (1, SIGHT_MODEL_BACKOFF_BASE_US, SIGHT_MODEL_BACKOFF_MAX_US, 0.0), ==, 1000000);
  g_assert_cmpint (sight_model_backoff_delay (2, SIGHT_MODEL_BACKOFF_BASE_US, SIGHT_MODEL_BACKOFF_MAX_US, 0.0), ==, 2000000);
  g_assert_cmpint (sight_model_backoff_delay (4, SIGHT_MODEL_BACKOFF_BASE_US, SIGHT_MODEL_BACKOFF_MAX_US, 0.0), ==, 8000000);
  g_assert_cmpint (sight_model_backoff_delay (40, SIGHT_MODEL_BACKOFF_BASE_US, SIGHT_MODEL_BACKOFF_MAX_US, 0.0), ==, 8000000);
  g_assert_cmpint (sight_model_backoff_delay (0, SIGHT_MODEL_BACKOFF_BASE_US, SIGHT_MODEL_BACKOFF_MAX_US, 1.0), ==, 375000);
  g_assert_cmpint (sight_model_backoff_delay (1, SIGHT_MODEL_BACKOFF_BASE_US, SIGHT_MODEL_BACKOFF_MAX_US, 0.5), ==, 875000);
  for (guint i = 0; i < 200; i++)
    {
      GTimeSpan d = sight_model_backoff_delay (1, SIGHT_MODEL_BACKOFF_BASE_US, SIGHT_MODEL_BACKOFF_MAX_US,
                                               g_random_double ());

      g_assert_cmpint (d, >, 750000);
      g_assert_cmpint (d, <=, 1000000);
    }
  g_assert_cmpint (SIGHT_MODEL_MAX_RETRIES, ==, 2);
  g_assert_cmpint (SIGHT_MODEL_CONNECT_TIMEOUT_US, ==, 5 * G_USEC_PER_SEC);
}

static void
test_retry_after (void)
{
  GTimeSpan delay = 0;
  gint64 now = G_GINT64_CONSTANT (1700000000) * G_USEC_PER_SEC;  /* Tue, 14 Nov 2023 22:13:20 GMT */

  g_assert_true (sight_model_parse_retry_after ("250", NULL, now, &delay));
  g_assert_cmpint (delay, ==, 250000);
  g_assert_true (sight_model_parse_retry_after ("12.5", "30", now, &delay));
  g_assert_cmpint (delay, ==, 12500);
  g_assert_true (sight_model_parse_retry_after (NULL, "2", now, &delay));
  g_assert_cmpint (delay, ==, 2000000);
  g_assert_true (sight_model_parse_retry_after (NULL, "60", now, &delay));
  g_assert_cmpint (delay, ==, 60000000);
  g_assert_true (sight_model_parse_retry_after (NULL, "Tue, 14 Nov 2023 22:13:30 GMT", now, &delay));
  g_assert_cmpint (delay, ==, 10000000);
  /* Long waits are read as asked (the call decides whether it has the
   * time), up to a day. */
  g_assert_true (sight_model_parse_retry_after (NULL, "120", now, &delay));
  g_assert_cmpint (delay, ==, 120000000);
  g_assert_true (sight_model_parse_retry_after ("60001", NULL, now, &delay));
  g_assert_cmpint (delay, ==, 60001000);
  g_assert_true (sight_model_parse_retry_after (NULL, "99999999", now, &delay));
  g_assert_cmpint (delay, ==, G_TIME_SPAN_DAY);
  /* None: zero, negative, garbage, a past date. */
  g_assert_false (sight_model_parse_retry_after (NULL, "0", now, &delay));
  g_assert_false (sight_model_parse_retry_after ("-5", NULL, now, &delay));
  g_assert_false (sight_model_parse_retry_after (NULL, "soon", now, &delay));
  g_assert_false (sight_model_parse_retry_after (NULL, "Tue, 14 Nov 2023 22:13:00 GMT", now, &delay));
  g_assert_false (sight_model_parse_retry_after (NULL, NULL, now, &delay));
}

static void
test_should_retry (void)
{
  guint retried[] = { 0, 408, 409, 429, 500, 502, 503, 504, 529 };
  guint final[] = { 400, 401, 403, 404, 413, 422 };

  for (guint i = 0; i < G_N_ELEMENTS (retried); i++)
    g_assert_true (sight_model_should_retry (retried[i], NULL, NULL, NULL, NULL));
  for (guint i = 0; i < G_N_ELEMENTS (final); i++)
    g_assert_false (sight_model_should_retry (final[i], NULL, NULL, NULL, NULL));

  g_assert_false (sight_model_should_retry (429, "insufficient_quota", "insufficient_quota", NULL, NULL));
  g_assert_false (sight_model_should_retry (429, "rate_limit_error", NULL,
                                            "You have reached your spend limit", NULL));
  g_assert_false (sight_model_should_retry (429, NULL, "billing_hard_limit_reached", NULL, "true"));
  g_assert_true (sight_model_should_retry (429, "rate_limit_error", "rate_limit_exceeded",
                                           "Rate limit reached for requests", NULL));
  g_assert_false (sight_model_should_retry (500, NULL, NULL, NULL, "false"));
  g_assert_true (sight_model_should_retry (400, NULL, NULL, NULL, "true"));
}

static void
clear_env (void)
{
  const char *names[] = { "SIGHTLINE_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL",
                          "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "SIGHT_TEST_KEY" };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    g_unsetenv (names[i]);
}

static void
test_config_environment (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightModelProvider) provider = NULL;
  SightModelPrice price;

  clear_env ();
  provider = sight_model_provider_new_for_agent (NULL, &error);
  g_assert_null (provider);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "SIGHTLINE_MODEL"));
  g_assert_null (strchr (error->message, '\n'));
  g_clear_error (&error);

  g_setenv ("SIGHTLINE_MODEL", "openai:gpt-4.1-mini", TRUE);
  provider = sight_model_provider_new_for_agent (NULL, &error);
  g_assert_null (provider);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "OPENAI_API_KEY"));
  g_clear_error (&error);

  g_setenv ("OPENAI_API_KEY", "sk-config-test-0000000000", TRUE);
  provider = sight_model_provider_new_for_agent (NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sight_model_provider_get_kind (provider), ==, "openai");
  g_assert_cmpstr (sight_model_provider_get_model (provider), ==, "gpt-4.1-mini");
  g_assert_cmpstr (sight_model_provider_get_base_url (provider), ==, "https://api.openai.com/v1");
  g_assert_true (sight_model_provider_get_price (provider, &price));
  g_assert_cmpuint (price.output, ==, 1600000);
  g_clear_object (&provider);

  g_setenv ("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1/", TRUE);
  g_unsetenv ("OPENAI_API_KEY");
  g_setenv ("SIGHTLINE_MODEL", "openai:llama3.1:8b", TRUE);
  provider = sight_model_provider_new_for_agent (NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sight_model_provider_get_model (provider), ==, "llama3.1:8b");
  g_assert_cmpstr (sight_model_provider_get_base_url (provider), ==, "http://127.0.0.1:11434/v1");
  g_assert_false (sight_model_provider_get_price (provider, &price));
  g_clear_object (&provider);

  g_setenv ("SIGHTLINE_MODEL", "anthropic:claude-sonnet-4", TRUE);
  provider = sight_model_provider_new_for_agent (NULL, &error);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "ANTHROPIC_API_KEY"));
  g_clear_error (&error);
  g_setenv ("ANTHROPIC_API_KEY", "sk-ant-config-test-000000", TRUE);
  provider = sight_model_provider_new_for_agent (NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sight_model_provider_get_kind (provider), ==, "anthropic");
  g_assert_cmpstr (sight_model_provider_get_base_url (provider), ==, "https://api.anthropic.com");
  g_clear_object (&provider);

  /* ollama: the OpenAI-compatible API on its local port, no key. */
  g_unsetenv ("OPENAI_BASE_URL");
  g_setenv ("SIGHTLINE_MODEL", "ollama:llama3.1:8b", TRUE);
  provider = sight_model_provider_new_for_agent (NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sight_model_provider_get_kind (provider), ==, "openai");
  g_assert_cmpstr (sight_model_provider_get_model (provider), ==, "llama3.1:8b");
  g_assert_cmpstr (sight_model_provider_get_base_url (provider), ==, SIGHT_OLLAMA_DEFAULT_BASE_URL);
  g_clear_object (&provider);

  g_setenv ("SIGHTLINE_MODEL", "gemini:flash", TRUE);
  provider = sight_model_provider_new_for_agent (NULL, &error);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE);
  g_clear_error (&error);
  g_setenv ("SIGHTLINE_MODEL", "gpt-4.1-mini", TRUE);
  provider = sight_model_provider_new_for_agent (NULL, &error);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "provider:model"));
  clear_env ();
}

static void
test_config_agent_entry (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightModelProvider) provider = NULL;
  g_autoptr(JsonNode) agent = NULL;
  g_autoptr(JsonNode) split = NULL;
  g_autoptr(JsonNode) missing_key = NULL;
  SightModelPrice price;

  clear_env ();
  g_setenv ("SIGHTLINE_MODEL", "openai:gpt-4o", TRUE);
  g_setenv ("SIGHT_TEST_KEY", "sk-agent-test-1111111111", TRUE);

  /* The agent entry wins over the environment. */
  agent = json_from_string ("{\"model\": \"anthropic:claude-3-5-haiku\", \"apiKeyEnv\": \"SIGHT_TEST_KEY\","
                            " \"baseUrl\": \"http://127.0.0.1:9/\", \"maxTokens\": 777,"
                            " \"price\": {\"input\": 1, \"output\": 2, \"cachedInput\": 0.5}}", NULL);
  provider = sight_model_provider_new_for_agent (json_node_get_object (agent), &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sight_model_provider_get_kind (provider), ==, "anthropic");
  g_assert_cmpstr (sight_model_provider_get_model (provider), ==, "claude-3-5-haiku");
  g_assert_cmpstr (sight_model_provider_get_base_url (provider), ==, "http://127.0.0.1:9");
  g_assert_cmpuint (sight_model_provider_get_default_max_tokens (provider), ==, 777);
  g_assert_true (sight_model_provider_get_price (provider, &price));
  g_assert_cmpuint (price.input, ==, 1000000);
  g_assert_cmpuint (price.cached_input, ==, 500000);
  g_clear_object (&provider);

  split = json_from_string ("{\"provider\": \"openai\", \"model\": \"house-model\","
                            " \"baseUrl\": \"http://127.0.0.1:9/v1\","
                            " \"prices\": {\"house-model\": {\"input\": 0.5, \"output\": 0.5}}}", NULL);
  provider = sight_model_provider_new_for_agent (json_node_get_object (split), &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sight_model_provider_get_kind (provider), ==, "openai");
  g_assert_cmpstr (sight_model_provider_get_model (provider), ==, "house-model");
  g_assert_true (sight_model_provider_get_price (provider, &price));
  g_assert_cmpuint (price.output, ==, 500000);
  g_clear_object (&provider);

  missing_key = json_from_string ("{\"model\": \"openai:gpt-4.1\", \"apiKeyEnv\": \"SIGHT_UNSET_KEY\"}", NULL);
  provider = sight_model_provider_new_for_agent (json_node_get_object (missing_key), &error);
  g_assert_null (provider);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "SIGHT_UNSET_KEY"));
  clear_env ();
}

static void
test_config_project_agent (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightModelProvider) provider = NULL;
  g_autoptr(SightProject) project = NULL;
  const SightAgentConfig *agent;

  clear_env ();
  g_setenv ("SIGHT_TEST_KEY", "sk-agent-test-2222222222", TRUE);
  project = sight_project_new_from_data ("{\"agents\": {\"default\": {\"model\": \"anthropic:claude-sonnet-4\","
                                         " \"apiKeyEnv\": \"SIGHT_TEST_KEY\"}}}", -1, NULL, &error);
  g_assert_no_error (error);
  agent = sight_project_resolve_agent (project, NULL, &error);
  g_assert_no_error (error);
  provider = sight_model_provider_new_for_agent_config (agent, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sight_model_provider_get_kind (provider), ==, "anthropic");
  g_assert_cmpstr (sight_model_provider_get_model (provider), ==, "claude-sonnet-4");
  g_clear_object (&provider);
  g_clear_pointer (&project, sight_project_unref);

  /* The agent's own maxTokens and price apply through the project too. */
  project = sight_project_new_from_data ("{\"agents\": {\"default\": {\"model\": \"openai:my-local\","
                                         " \"apiKeyEnv\": \"SIGHT_TEST_KEY\", \"maxTokens\": 512,"
                                         " \"price\": {\"input\": 1.5, \"output\": 6}}}}",
                                         -1, NULL, &error);
  g_assert_no_error (error);
  agent = sight_project_resolve_agent (project, NULL, &error);
  g_assert_no_error (error);
  provider = sight_model_provider_new_for_agent_config (agent, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sight_model_provider_get_default_max_tokens (provider), ==, 512);
  {
    SightModelPrice price;

    g_assert_true (sight_model_provider_get_price (provider, &price));
    g_assert_cmpuint (price.input, !=, 0);
    g_assert_cmpuint (price.output, ==, 4 * price.input);
  }
  g_clear_object (&provider);
  g_clear_pointer (&project, sight_project_unref);

  /* No agents and no environment: MODEL_UNAVAILABLE with the hint. */
  project = sight_project_new_default ();
  agent = sight_project_resolve_agent (project, NULL, &error);
  g_assert_no_error (error);
  provider = sight_model_provider_new_for_agent_config (agent, &error);
  g_assert_null (provider);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "SIGHTLINE_MODEL"));
  g_clear_error (&error);

  /* … while the environment still names one. */
  g_setenv ("SIGHTLINE_MODEL", "openai:gpt-4.1", TRUE);
  g_setenv ("OPENAI_API_KEY", "sk-config-test-3333333333", TRUE);
  provider = sight_model_provider_new_for_agent_config (agent, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sight_model_provider_get_model (provider), ==, "gpt-4.1");
  clear_env ();
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/usage/accounting-modes", test_usage_accounting_modes);
  g_test_add_func ("/model/usage/saturation", test_usage_saturation);
  g_test_add_func ("/model/prices", test_prices);
  g_test_add_func ("/model/retry/backoff-schedule", test_backoff_schedule);
  g_test_add_func ("/model/retry/retry-after", test_retry_after);
  g_test_add_func ("/model/retry/should-retry", test_should_retry);
  g_test_add_func ("/model/config/environment", test_config_environment);
  g_test_add_func ("/model/config/agent-entry", test_config_agent_entry);
  g_test_add_func ("/model/config/project-agent", test_config_project_agent);
  return g_test_run ();
}
