/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-model-prices"

#include "config.h"

#include "sight-model-prices.h"

#include <math.h>
#include <string.h>

#include "sight-error.h"
#include "sight-usage.h"

struct _SightPriceTable
{
  gatomicrefcount  ref_count;
  GHashTable      *prices;  /* model name → SightModelPrice */
};

/* Default prices in US dollars per million tokens: input, cached input,
 * output. From the providers' public price pages as of 2025; prices change,
 * so a project overrides or extends them with an agent's "prices" member in
 * sightline.json. Anthropic's cache writes are billed here at the input
 * price. A model missing from the table has no cost, only tokens. */
static const struct {
  const char *model;
  double      input;
  double      cached_input;
  double      output;
} default_prices[] = {
  { "gpt-4.1",           2.00,  0.50,   8.00 },
  { "gpt-4.1-mini",      0.40,  0.10,   1.60 },
  { "gpt-4.1-nano",      0.10,  0.025,  0.40 },
  { "gpt-4o",            2.50,  1.25,  10.00 },
  { "gpt-4o-mini",       0.15,  0.075,  0.60 },
  { "o4-mini",           1.10,  0.275,  4.40 },
  { "gpt-5",             1.25,  0.125, 10.00 },
  { "gpt-5-mini",        0.25,  0.025,  2.00 },
  { "gpt-5-nano",        0.05,  0.005,  0.40 },
  { "claude-opus-4",    15.00,  1.50,  75.00 },
  { "claude-sonnet-4",   3.00,  0.30,  15.00 },
  { "claude-sonnet-4-5", 3.00,  0.30,  15.00 },
  { "claude-3-7-sonnet", 3.00,  0.30,  15.00 },
  { "claude-3-5-haiku",  0.80,  0.08,   4.00 },
  { "claude-haiku-4-5",  1.00,  0.10,   5.00 },
};

static guint64
usd_to_micro (double usd)
{
  if (!(usd > 0) || !isfinite (usd))
    return 0;
  return (guint64) llround (usd * 1e6);
}

SightPriceTable *
sight_price_table_new (void)
{
  SightPriceTable *self = g_new0 (SightPriceTable, 1);

  g_atomic_ref_count_init (&self->ref_count);
  self->prices = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return self;
}

SightPriceTable *
sight_price_table_new_default (void)
{
  SightPriceTable *self = sight_price_table_new ();

  for (guint i = 0; i < G_N_ELEMENTS (default_prices); i++)
    {
      SightModelPrice price = {
        .input = usd_to_micro (default_prices[i].input),
        .cached_input = usd_to_micro (default_prices[i].cached_input),
        .output = usd_to_micro (default_prices[i].output),
      };

      sight_price_table_set (self, default_prices[i].model, &price);
    }
  return self;
}

SightPriceTable *
sight_price_table_ref (SightPriceTable *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

void
sight_price_table_unref (SightPriceTable *self)
{
  g_return_if_fail (self != NULL);
  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;
  g_clear_pointer (&self->prices, g_hash_table_unref);
  g_free (self);
}

void
sight_price_table_set (SightPriceTable       *self,
                       const char            *model,
                       const SightModelPrice *price)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (model != NULL);
  g_return_if_fail (price != NULL);

  g_hash_table_replace (self->prices, g_strdup (model), g_memdup2 (price, sizeof *price));
}

gboolean
sight_price_table_lookup (SightPriceTable *self,
                          const char      *model,
                          SightModelPrice *out_price)
{
  const SightModelPrice *found;
  const char *slash;
  gsize best_len = 0;
  GHashTableIter iter;
  gpointer key, value;

  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (out_price != NULL, FALSE);

  if (model == NULL)
    return FALSE;
  if ((found = g_hash_table_lookup (self->prices, model)) != NULL)
    {
      *out_price = *found;
      return TRUE;
    }
  if ((slash = strrchr (model, '/')) != NULL)
    model = slash + 1;
  if ((found = g_hash_table_lookup (self->prices, model)) != NULL)
    {
      *out_price = *found;
      return TRUE;
    }

  found = NULL;
  g_hash_table_iter_init (&iter, self->prices);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      gsize len = strlen (key);

      if (len > best_len && g_str_has_prefix (model, key)
          && (model[len] == '-' || model[len] == ':' || model[len] == '@'))
        {
          best_len = len;
          found = value;
        }
    }
  if (found == NULL)
    return FALSE;
  *out_price = *found;
  return TRUE;
}

static gboolean
read_usd (JsonObject *object,
          const char *name,
          gboolean    required,
          guint64    *out,
          GError    **error)
{
  JsonNode *node = json_object_get_member (object, name);
  double usd;

  if (node == NULL)
    {
      if (required)
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "a model price needs \"%s\" (US dollars per million tokens)", name);
          return FALSE;
        }
      return TRUE;
    }
  if (!JSON_NODE_HOLDS_VALUE (node)
      || (json_node_get_value_type (node) != G_TYPE_DOUBLE
          && json_node_get_value_type (node) != G_TYPE_INT64))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "the price \"%s\" must be a number", name);
      return FALSE;
    }
  usd = json_node_get_double (node);
  if (!isfinite (usd) || usd < 0 || usd > 1e6)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "the price \"%s\" must be between 0 and 1000000", name);
      return FALSE;
    }
  *out = usd_to_micro (usd);
  return TRUE;
}

gboolean
sight_model_price_from_json (JsonNode        *node,
                             SightModelPrice *out_price,
                             GError         **error)
{
  JsonObject *object;
  SightModelPrice price = { 0 };

  g_return_val_if_fail (out_price != NULL, FALSE);

  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                           "a model price is an object {\"input\", \"output\", \"cachedInput\"}");
      return FALSE;
    }
  object = json_node_get_object (node);
  if (!read_usd (object, "input", TRUE, &price.input, error)
      || !read_usd (object, "output", TRUE, &price.output, error))
    return FALSE;
  price.cached_input = price.input;
  if (!read_usd (object, "cachedInput", FALSE, &price.cached_input, error))
    return FALSE;
  *out_price = price;
  return TRUE;
}

gboolean
sight_price_table_merge_json (SightPriceTable *self,
                              JsonNode        *prices,
                              GError         **error)
{
  JsonObjectIter iter;
  const char *model;
  JsonNode *node;

  g_return_val_if_fail (self != NULL, FALSE);

  if (prices == NULL || !JSON_NODE_HOLDS_OBJECT (prices))
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                           "\"prices\" must be an object keyed by model name");
      return FALSE;
    }
  json_object_iter_init (&iter, json_node_get_object (prices));
  while (json_object_iter_next (&iter, &model, &node))
    {
      SightModelPrice price;

      if (!sight_model_price_from_json (node, &price, error))
        {
          g_prefix_error (error, "prices.%s: ", model);
          return FALSE;
        }
      sight_price_table_set (self, model, &price);
    }
  return TRUE;
}

gboolean
sight_model_price_cost (const SightModelPrice *price,
                        guint64                input_tokens,
                        guint64                cached_tokens,
                        guint64                output_tokens,
                        guint64               *out_micro_usd)
{
  unsigned __int128 total;
  guint64 uncached;

  g_return_val_if_fail (price != NULL, FALSE);
  g_return_val_if_fail (out_micro_usd != NULL, FALSE);

  cached_tokens = MIN (cached_tokens, input_tokens);
  uncached = input_tokens - cached_tokens;
  total = (unsigned __int128) uncached * price->input
          + (unsigned __int128) cached_tokens * price->cached_input
          + (unsigned __int128) output_tokens * price->output;
  total = (total + 500000) / 1000000;
  if (total > SIGHT_USAGE_MAX_SAFE)
    return FALSE;
  *out_micro_usd = (guint64) total;
  return TRUE;
}
