/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "sight-model-provider.h"

G_BEGIN_DECLS

#define SIGHT_ANTHROPIC_DEFAULT_BASE_URL "https://api.anthropic.com"
#define SIGHT_ANTHROPIC_VERSION          "2023-06-01"

#define SIGHT_TYPE_ANTHROPIC_PROVIDER (sight_anthropic_provider_get_type ())
G_DECLARE_FINAL_TYPE (SightAnthropicProvider, sight_anthropic_provider, SIGHT, ANTHROPIC_PROVIDER, SightModelProvider)

/* The Anthropic Messages API: POST {base_url}/v1/messages with x-api-key and
 * anthropic-version. A response schema becomes one forced tool whose input
 * is the answer; the response's text is then that input as JSON.
 * @base_url NULL is SIGHT_ANTHROPIC_DEFAULT_BASE_URL. */
SightModelProvider *sight_anthropic_provider_new (const char *model,
                                                  const char *base_url,
                                                  const char *api_key);

G_END_DECLS
