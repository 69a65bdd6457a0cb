/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "sight-model-provider.h"
#include "sight-project.h"

G_BEGIN_DECLS

#define SIGHT_OLLAMA_DEFAULT_BASE_URL "http://127.0.0.1:11434/v1"

/* Which model an agent talks to.
 *
 * A model is named "provider:model" (split at the first colon), provider
 * one of "openai" (any OpenAI-compatible Chat Completions endpoint),
 * "anthropic", or "ollama" (OpenAI-compatible at
 * SIGHT_OLLAMA_DEFAULT_BASE_URL, no key): openai:gpt-4.1-mini,
 * anthropic:claude-sonnet-4, ollama:llama3.1:8b.
 *
 * From a project file's agent entry (sightline.json "agents": {"default":
 * {...}}), all members optional:
 *   "model":     "openai:gpt-4.1-mini"  (or "provider": "openai" and
 *                "model": "gpt-4.1-mini")
 *   "baseUrl":   "http://127.0.0.1:11434/v1"
 *   "apiKeyEnv": "MY_KEY"   the environment variable holding the key
 *   "maxTokens": 4096       the default cap on output tokens
 *   "price":     {"input": 0.4, "cachedInput": 0.1, "output": 1.6}
 *   "prices":    {"<model>": {…}}  both in US dollars per million tokens
 * and, for what the entry leaves out, from the environment:
 *   SIGHTLINE_MODEL, OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY,
 *   ANTHROPIC_BASE_URL.
 *
 * A key is needed for the providers' own endpoints; a custom base URL
 * (Ollama, llama.cpp, vLLM, LM Studio) may go without one. Errors are
 * MODEL_UNAVAILABLE with a one-line hint of what to set. */

gboolean            sight_model_parse_name              (const char  *name,
                                                         char       **out_kind,
                                                         char       **out_model,
                                                         GError     **error);
SightModelProvider *sight_model_provider_new_for_name   (const char  *name,
                                                         const char  *base_url,
                                                         const char  *api_key,
                                                         GError     **error);
/* The project file's agent (sight-project.h); with no provider, or @agent
 * NULL, SIGHTLINE_MODEL decides. */
SightModelProvider *sight_model_provider_new_for_agent_config (const SightAgentConfig  *agent,
                                                               GError                 **error);
/* @agent may be NULL: the environment alone then decides. */
SightModelProvider *sight_model_provider_new_for_agent  (JsonObject  *agent,
                                                         GError     **error);

G_END_DECLS
