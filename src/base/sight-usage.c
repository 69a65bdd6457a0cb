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

/* A cost total: once it would pass SIGHT_USAGE_MAX_SAFE it is omitted for
 * good (spec: "an overflowing cost total is omitted"). */
static void
add_cost (gboolean *has,
          gboolean *overflowed,
          guint64  *total,
          gboolean  call_has,
          gboolean  call_overflowed,
          guint64   call_value)
{
  guint64 so_far = *has ? *total : 0;

  if (*overflowed || call_overflowed ||
      (call_has && (so_far > SIGHT_USAGE_MAX_SAFE || call_value > SIGHT_USAGE_MAX_SAFE ||
                    so_far + call_value > SIGHT_USAGE_MAX_SAFE)))
    {
      *overflowed = TRUE;
      *has = FALSE;
      *total = 0;
      return;
    }
  if (call_has)
    {
      *total = so_far + call_value;
      *has = TRUE;
    }
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

  add_cost (&total->has_cost, &total->cost_overflowed, &total->cost_micro_usd,
            call->has_cost, call->cost_overflowed, call->cost_micro_usd);
  add_cost (&total->has_estimated_cost, &total->estimated_cost_overflowed,
            &total->estimated_cost_micro_usd, call->has_estimated_cost,
            call->estimated_cost_overflowed, call->estimated_cost_micro_usd);
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
  if (usage->has_estimated_cost && !usage->estimated_cost_overflowed
      && usage->estimated_cost_micro_usd <= SIGHT_USAGE_MAX_SAFE)
    {
      json_builder_set_member_name (builder, "estimatedCostMicroUsd");
      json_builder_add_int_value (builder, usage->estimated_cost_micro_usd);
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
  if (json_object_has_member (object, "estimatedCostMicroUsd"))
    {
      usage->has_estimated_cost = TRUE;
      usage->estimated_cost_micro_usd = member_count (object, "estimatedCostMicroUsd");
    }
  return TRUE;
}

static void
append_dollars (GString    *out,
                const char *prefix,
                guint64     micro_usd,
                const char *what)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  g_string_append_printf (out, "%s%s$%s %s", out->len > 0 ? ", " : "", prefix,
                          g_ascii_formatd (buf, sizeof buf, "%.4f", micro_usd / 1e6), what);
}

char *
sight_usage_cost_text (const SightUsage *usage)
{
  GString *out = g_string_new (NULL);

  g_return_val_if_fail (usage != NULL, NULL);

  if (usage->has_cost)
    append_dollars (out, "", usage->cost_micro_usd, "reported");
  if (usage->has_estimated_cost)
    append_dollars (out, "~", usage->estimated_cost_micro_usd, "estimated");
  if (out->len == 0)
    g_string_append (out, "no cost known");
  return g_string_free (out, FALSE);
}
