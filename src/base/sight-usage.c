/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-usage"

#include "config.h"

#include "sight-usage.h"

#include "sight-base-enums.h"
#include "sight-enum.h"

void
sight_usage_init (SightUsage *usage)
{
  g_return_if_fail (usage != NULL);

  *usage = (SightUsage) { 0 };
  usage->token_accounting = SIGHT_TOKEN_ACCOUNTING_PROVIDER;
}

guint64
sight_usage_saturating_add (guint64 a,
                            guint64 b)
{
  a = MIN (a, SIGHT_USAGE_MAX_SAFE);
  b = MIN (b, SIGHT_USAGE_MAX_SAFE);
  /* Both are below 2^53, so the sum cannot wrap a guint64. */
  return MIN (a + b, SIGHT_USAGE_MAX_SAFE);
}

void
sight_usage_add (SightUsage       *total,
                 const SightUsage *call)
{
  g_return_if_fail (total != NULL);
  g_return_if_fail (call != NULL);

  total->model_calls = sight_usage_saturating_add (total->model_calls, call->model_calls);
  total->input_tokens = sight_usage_saturating_add (total->input_tokens, call->input_tokens);
  total->output_tokens = sight_usage_saturating_add (total->output_tokens, call->output_tokens);
  total->cached_input_tokens = sight_usage_saturating_add (total->cached_input_tokens,
                                                           call->cached_input_tokens);

  if (call->token_accounting != SIGHT_TOKEN_ACCOUNTING_PROVIDER)
    total->token_accounting = SIGHT_TOKEN_ACCOUNTING_ADAPTER_UPPER_BOUND;

  if (total->cost_overflowed || call->cost_overflowed)
    {
      total->cost_overflowed = TRUE;
      total->has_cost = FALSE;
      total->cost_micro_usd = 0;
      return;
    }

  if (call->has_cost)
    {
      guint64 a = total->has_cost ? total->cost_micro_usd : 0;

      if (a > SIGHT_USAGE_MAX_SAFE || call->cost_micro_usd > SIGHT_USAGE_MAX_SAFE
          || a + call->cost_micro_usd > SIGHT_USAGE_MAX_SAFE)
        {
          total->cost_overflowed = TRUE;
          total->has_cost = FALSE;
          total->cost_micro_usd = 0;
          return;
        }
      total->cost_micro_usd = a + call->cost_micro_usd;
      total->has_cost = TRUE;
    }
}

const char *
sight_token_accounting_to_string (SightTokenAccounting accounting)
{
  return sight_enum_to_nick (SIGHT_TYPE_TOKEN_ACCOUNTING, accounting);
}

void
sight_usage_add_to_builder (const SightUsage *usage,
                            JsonBuilder      *builder)
{
  g_return_if_fail (usage != NULL);
  g_return_if_fail (JSON_IS_BUILDER (builder));

  json_builder_set_member_name (builder, "modelCalls");
  json_builder_add_int_value (builder, MIN (usage->model_calls, SIGHT_USAGE_MAX_SAFE));
  json_builder_set_member_name (builder, "inputTokens");
  json_builder_add_int_value (builder, MIN (usage->input_tokens, SIGHT_USAGE_MAX_SAFE));
  json_builder_set_member_name (builder, "outputTokens");
  json_builder_add_int_value (builder, MIN (usage->output_tokens, SIGHT_USAGE_MAX_SAFE));
  json_builder_set_member_name (builder, "cachedInputTokens");
  json_builder_add_int_value (builder, MIN (usage->cached_input_tokens, SIGHT_USAGE_MAX_SAFE));
  json_builder_set_member_name (builder, "tokenAccounting");
  json_builder_add_string_value (builder,
                                 sight_token_accounting_to_string (usage->token_accounting));
  if (usage->has_cost && !usage->cost_overflowed
      && usage->cost_micro_usd <= SIGHT_USAGE_MAX_SAFE)
    {
      json_builder_set_member_name (builder, "costMicroUsd");
      json_builder_add_int_value (builder, usage->cost_micro_usd);
    }
}

JsonNode *
sight_usage_to_json (const SightUsage *usage)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  g_return_val_if_fail (usage != NULL, NULL);

  json_builder_begin_object (builder);
  sight_usage_add_to_builder (usage, builder);
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

static guint64
member_count (JsonObject *object,
              const char *name)
{
  JsonNode *node = json_object_get_member (object, name);
  gint64 value;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node))
    return 0;
  value = json_node_get_int (node);
  return value < 0 ? 0 : MIN ((guint64) value, SIGHT_USAGE_MAX_SAFE);
}

gboolean
sight_usage_from_json (JsonNode   *node,
                       SightUsage *usage)
{
  JsonObject *object;
  const char *accounting;

  g_return_val_if_fail (usage != NULL, FALSE);

  sight_usage_init (usage);
  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return FALSE;
  object = json_node_get_object (node);
  usage->model_calls = member_count (object, "modelCalls");
  usage->input_tokens = member_count (object, "inputTokens");
  usage->output_tokens = member_count (object, "outputTokens");
  usage->cached_input_tokens = member_count (object, "cachedInputTokens");
  accounting = json_object_get_string_member_with_default (object, "tokenAccounting", "");
  if (!g_str_equal (accounting, "provider"))
    usage->token_accounting = SIGHT_TOKEN_ACCOUNTING_ADAPTER_UPPER_BOUND;
  if (json_object_has_member (object, "costMicroUsd"))
    {
      usage->has_cost = TRUE;
      usage->cost_micro_usd = member_count (object, "costMicroUsd");
    }
  return TRUE;
}
