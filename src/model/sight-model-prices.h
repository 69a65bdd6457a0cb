/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Prices per million tokens, in micro-dollars (so $0.40 / 1M tokens is
 * 400000). A model without a cached-input price pays the input price for
 * cached tokens. */
typedef struct {
  guint64 input;
  guint64 cached_input;
  guint64 output;
} SightModelPrice;

typedef struct _SightPriceTable SightPriceTable;

SightPriceTable *sight_price_table_new         (void);
/* The shipped table (see the comment in sight-model-prices.c for the source
 * and date of each price). */
SightPriceTable *sight_price_table_new_default (void);
SightPriceTable *sight_price_table_ref         (SightPriceTable       *self);
void             sight_price_table_unref       (SightPriceTable       *self);

void             sight_price_table_set         (SightPriceTable       *self,
                                                const char            *model,
                                                const SightModelPrice *price);
/* Exact name first, then the longest listed name that @model starts with
 * followed by '-', ':' or '@' (dated snapshots such as
 * claude-sonnet-4-20250514), after dropping a "vendor/" prefix
 * (OpenRouter's openai/gpt-4.1-mini). */
gboolean         sight_price_table_lookup      (SightPriceTable       *self,
                                                const char            *model,
                                                SightModelPrice       *out_price);
/* Merges {"model": {"input": 0.40, "cachedInput": 0.10, "output": 1.60}, …}
 * with prices in US dollars per million tokens, as a project file's
 * "prices" member gives them. */
gboolean         sight_price_table_merge_json  (SightPriceTable       *self,
                                                JsonNode              *prices,
                                                GError               **error);
/* Reads one {"input", "cachedInput"?, "output"} object (USD per 1M tokens). */
gboolean         sight_model_price_from_json   (JsonNode              *node,
                                                SightModelPrice       *out_price,
                                                GError               **error);

/* Cost in micro-dollars, rounded to nearest; FALSE when it would exceed
 * 2^53 - 1. @input_tokens includes @cached_tokens. */
gboolean         sight_model_price_cost        (const SightModelPrice *price,
                                                guint64                input_tokens,
                                                guint64                cached_tokens,
                                                guint64                output_tokens,
                                                guint64               *out_micro_usd);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightPriceTable, sight_price_table_unref)

G_END_DECLS
