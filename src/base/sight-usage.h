/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Number.MAX_SAFE_INTEGER: token sums saturate here, cost totals past it are
 * omitted (spec/agent-api.txt, "Usage accounting"). */
#define SIGHT_USAGE_MAX_SAFE G_GUINT64_CONSTANT (9007199254740991)

typedef enum {
  /* Every call supplied complete provider token counts. */
  SIGHT_TOKEN_ACCOUNTING_PROVIDER,
  /* At least one count is an estimate that is never below the real count. */
  SIGHT_TOKEN_ACCOUNTING_ADAPTER_UPPER_BOUND,
} SightTokenAccounting;

/* Usage of one model call or the sum over a step or a run.
 *
 * input_tokens includes cached_input_tokens (OpenAI's convention; the
 * Anthropic provider adds its cache reads and writes in). Costs are in
 * micro-dollars (1e-6 USD), each present only when its has_ flag is TRUE:
 * cost_micro_usd is what providers reported ("Reported costs accumulate where
 * the provider gives one"); estimated_cost_micro_usd is Sightline's own
 * estimate from its price table (sight-model-prices.c) for the calls whose
 * provider reported none, never added into the reported cost. Summing with
 * sight_usage_add() saturates the token counts at SIGHT_USAGE_MAX_SAFE and
 * drops a cost for good once its total would pass it (…_overflowed).
 *
 * An empty sum (no model call) is exact: 'provider', zero tokens, no cost. */
typedef struct {
  guint64              model_calls;
  guint64              input_tokens;
  guint64              output_tokens;
  guint64              cached_input_tokens;
  SightTokenAccounting token_accounting;
  gboolean             has_cost;
  gboolean             cost_overflowed;
  guint64              cost_micro_usd;
  gboolean             has_estimated_cost;
  gboolean             estimated_cost_overflowed;
  guint64              estimated_cost_micro_usd;
} SightUsage;

void          sight_usage_init          (SightUsage       *usage);
/* Adds @call (one call or a partial sum) into @total. */
void          sight_usage_add           (SightUsage       *total,
                                         const SightUsage *call);
/* Saturating a + b at SIGHT_USAGE_MAX_SAFE: every sum of usage, a step's or
 * a run's, adds through it. */
guint64       sight_usage_saturating_add (guint64          a,
                                          guint64          b);

const char   *sight_token_accounting_to_string (SightTokenAccounting accounting);

/* {"modelCalls", "inputTokens", "outputTokens", "cachedInputTokens",
 *  "tokenAccounting": "provider" | "adapter-upper-bound", "costMicroUsd"?
 *  (reported by the providers), "estimatedCostMicroUsd"? (Sightline's
 *  estimate for the calls no provider priced)} */
JsonNode     *sight_usage_to_json       (const SightUsage *usage);
void          sight_usage_add_to_builder (const SightUsage *usage,
                                          JsonBuilder      *builder);
gboolean      sight_usage_from_json     (JsonNode         *node,
                                         SightUsage       *usage);
/* "$0.0123 reported, ~$0.0040 estimated" (either part alone, or "no cost
 * known"): the costs of @usage as a person reads them, the estimate marked. */
char         *sight_usage_cost_text     (const SightUsage *usage);

G_END_DECLS
