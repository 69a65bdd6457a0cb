/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "sight-model-provider.h"

G_BEGIN_DECLS

#define SIGHT_OPENAI_DEFAULT_BASE_URL "https://api.openai.com/v1"

#define SIGHT_TYPE_OPENAI_PROVIDER (sight_openai_provider_get_type ())
G_DECLARE_FINAL_TYPE (SightOpenaiProvider, sight_openai_provider, SIGHT, OPENAI_PROVIDER, SightModelProvider)

/* The OpenAI-compatible Chat Completions API: POST {base_url}/chat/completions
 * with "Authorization: Bearer KEY" (no header without a key, for local
 * servers). @base_url NULL is SIGHT_OPENAI_DEFAULT_BASE_URL. */
SightModelProvider *sight_openai_provider_new (const char *model,
                                               const char *base_url,
                                               const char *api_key);

G_END_DECLS
