/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-model-config"

#include "config.h"

#include "sight-model-config.h"

#include <string.h>

#include "sight-anthropic-provider.h"
#include "sight-error.h"
#include "sight-model-private.h"
#include "sight-openai-provider.h"

#define HINT "set SIGHTLINE_MODEL=openai:gpt-4.1-mini with OPENAI_API_KEY " \
             "(or anthropic:claude-sonnet-4 with ANTHROPIC_API_KEY), or an agent's \"model\" " \
             "in sightline.json"

gboolean
sight_model_parse_name (const char  *name,
                        char       **out_kind,
                        char       **out_model,
                        GError     **error)
{
  const char *colon;
  g_autofree char *kind = NULL;

  if (name == NULL || *name == '\0')
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE,
                           "no model is configured; " HINT);
      return FALSE;
    }
  colon = strchr (name, ':');
  if (colon == NULL || colon == name || colon[1] == '\0')
    {
      g_autofree char *safe = sight_text_sanitize (name, 80);

      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE,
                   "the model \"%s\" is not named provider:model; " HINT, safe);
      return FALSE;
    }
  kind = g_ascii_strdown (name, colon - name);
  /* Ollama speaks the OpenAI-compatible API (see sight_model_provider_new_for_name). */
  if (g_str_equal (kind, "ollama"))
    {
      g_free (kind);
      kind = g_strdup ("openai");
    }
  if (!g_str_equal (kind, "openai") && !g_str_equal (kind, "anthropic"))
    {
      g_autofree char *safe = sight_text_sanitize (kind, 40);

      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE,
                   "unknown model provider \"%s\"; use openai:MODEL (any OpenAI-compatible "
                   "endpoint) or anthropic:MODEL", safe);
      return FALSE;
    }
  if (out_kind != NULL)
    *out_kind = g_steal_pointer (&kind);
  if (out_model != NULL)
    *out_model = g_strdup (colon + 1);
  return TRUE;
}

static const char *
nonempty (const char *value)
{
  return value != NULL && *value != '\0' ? value : NULL;
}

SightModelProvider *
sight_model_provider_new_for_name (const char  *name,
                                   const char  *base_url,
                                   const char  *api_key,
                                   GError     **error)
{
  g_autofree char *kind = NULL;
  g_autofree char *model = NULL;
  g_autoptr(SightPriceTable) prices = sight_price_table_new_default ();
  SightModelProvider *provider;
  SightModelPrice price;
  gboolean openai;

  if (!sight_model_parse_name (name, &kind, &model, error))
    return NULL;
  openai = g_str_equal (kind, "openai");
  base_url = nonempty (base_url);
  api_key = nonempty (api_key);
  if (base_url == NULL && g_ascii_strncasecmp (name, "ollama:", 7) == 0)
    base_url = SIGHT_OLLAMA_DEFAULT_BASE_URL;

  if (api_key == NULL && base_url == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE,
                   "%s:%s has no API key; set %s (or %s for a local server)",
                   kind, model, openai ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY",
                   openai ? "OPENAI_BASE_URL" : "ANTHROPIC_BASE_URL");
      return NULL;
    }
  if (base_url != NULL && !g_str_has_prefix (base_url, "http://")
      && !g_str_has_prefix (base_url, "https://"))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE,
                   "the base URL of %s:%s is not an http(s) URL; set %s", kind, model,
                   openai ? "OPENAI_BASE_URL" : "ANTHROPIC_BASE_URL");
      return NULL;
    }

  provider = openai ? sight_openai_provider_new (model, base_url, api_key)
                    : sight_anthropic_provider_new (model, base_url, api_key);
  if (sight_price_table_lookup (prices, model, &price))
    sight_model_provider_set_price (provider, &price);
  return provider;
}

/* @name NULL: SIGHTLINE_MODEL. A key from @key_env, else @api_key, else the
 * provider's variable; a base URL from @base_url, else the provider's. */
static SightModelProvider *
resolve (const char  *name,
         const char  *base_url,
         const char  *key_env,
         const char  *api_key,
         GError     **error)
{
  g_autofree char *kind = NULL;
  g_autofree char *model = NULL;
  gboolean openai;

  if (nonempty (name) == NULL)
    name = g_getenv ("SIGHTLINE_MODEL");
  if (!sight_model_parse_name (name, &kind, &model, error))
    return NULL;
  openai = g_str_equal (kind, "openai");

  if (nonempty (base_url) == NULL && g_ascii_strncasecmp (name, "ollama:", 7) != 0)
    base_url = g_getenv (openai ? "OPENAI_BASE_URL" : "ANTHROPIC_BASE_URL");
  if (nonempty (key_env) != NULL)
    {
      api_key = g_getenv (key_env);
      if (nonempty (api_key) == NULL)
        {
          g_autofree char *safe = sight_text_sanitize (key_env, 80);

          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE,
                       "%s:%s takes its key from %s, which is not set; set %s",
                       kind, model, safe, safe);
          return NULL;
        }
    }
  else if (nonempty (api_key) == NULL)
    api_key = g_getenv (openai ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY");

  {
    SightModelProvider *provider = sight_model_provider_new_for_name (name, base_url, api_key, error);

    if (provider != NULL && nonempty (key_env) != NULL)
      sight_model_provider_set_key_env (provider, key_env);
    return provider;
  }
}

/* What an agent entry adds to its provider: maxTokens, and a price of its
 * own ("price") or entries for the price table ("prices"). */
static gboolean
apply_agent_extras (SightModelProvider  *provider,
                    JsonObject          *agent,
                    GError             **error)
{
  const char *model = sight_model_provider_get_model (provider);

  if (agent == NULL)
    return TRUE;
  if (json_object_has_member (agent, "maxTokens"))
    {
      gint64 max_tokens = _sight_json_count_member (agent, "maxTokens");

      if (max_tokens <= 0 || max_tokens > G_MAXINT32)
        {
          g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                               "the agent's maxTokens must be a positive integer");
          return FALSE;
        }
      sight_model_provider_set_default_max_tokens (provider, (guint) max_tokens);
    }
  if (json_object_has_member (agent, "prices"))
    {
      g_autoptr(SightPriceTable) prices = sight_price_table_new_default ();
      SightModelPrice price;

      if (!sight_price_table_merge_json (prices, json_object_get_member (agent, "prices"), error))
        return FALSE;
      if (sight_price_table_lookup (prices, model, &price))
        sight_model_provider_set_price (provider, &price);
    }
  if (json_object_has_member (agent, "price"))
    {
      SightModelPrice price;

      if (!sight_model_price_from_json (json_object_get_member (agent, "price"), &price, error))
        return FALSE;
      sight_model_provider_set_price (provider, &price);
    }
  return TRUE;
}

SightModelProvider *
sight_model_provider_new_for_agent_config (const SightAgentConfig  *agent,
                                           GError                 **error)
{
  g_autofree char *name = NULL;
  g_autoptr(SightModelProvider) provider = NULL;

  if (agent != NULL && nonempty (agent->provider) != NULL && nonempty (agent->model) != NULL)
    name = g_strdup_printf ("%s:%s", agent->provider, agent->model);
  provider = resolve (name, agent ? agent->base_url : NULL, agent ? agent->api_key_env : NULL,
                      NULL, error);
  /* The project file's maxTokens, price and prices apply here too (they
   * were read only by sight_model_provider_new_for_agent). */
  if (provider == NULL || !apply_agent_extras (provider, agent ? agent->json : NULL, error))
    return NULL;
  return g_steal_pointer (&provider);
}

SightModelProvider *
sight_model_provider_new_for_agent (JsonObject  *agent,
                                    GError     **error)
{
  g_autofree char *name = NULL;
  g_autoptr(SightModelProvider) provider = NULL;
  const char *agent_model = _sight_json_string_member (agent, "model");
  const char *agent_provider = _sight_json_string_member (agent, "provider");

  if (nonempty (agent_model) != NULL && nonempty (agent_provider) != NULL)
    name = g_strdup_printf ("%s:%s", agent_provider, agent_model);
  else if (nonempty (agent_model) != NULL)
    name = g_strdup (agent_model);

  provider = resolve (name, _sight_json_string_member (agent, "baseUrl"),
                      _sight_json_string_member (agent, "apiKeyEnv"),
                      _sight_json_string_member (agent, "apiKey"), error);
  if (provider == NULL || !apply_agent_extras (provider, agent, error))
    return NULL;
  return g_steal_pointer (&provider);
}
