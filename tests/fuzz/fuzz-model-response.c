/* fuzz-model-response.c: the OpenAI and Anthropic parsers of a 2xx response
 * body (SightModelProviderClass.parse) on arbitrary bytes. */
#include "config.h"

#include <stdlib.h>

#include "sight-anthropic-provider.h"
#include "sight-model-provider.h"
#include "sight-model-request.h"
#include "sight-openai-provider.h"
#include "sight-fuzz.h"

static void
parse_with (SightModelProvider *provider,
            SightModelRequest  *request,
            GBytes             *body)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SightModelResponse) response = NULL;

  response = SIGHT_MODEL_PROVIDER_GET_CLASS (provider)->parse (provider, request, body, 100, &error);
  if (response == NULL && error == NULL)
    abort ();
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  static SightModelProvider *openai, *anthropic;
  static SightModelRequest *request;
  g_autoptr(GBytes) body = g_bytes_new (data, size);

  if (openai == NULL)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();

      openai = sight_openai_provider_new ("gpt-4.1-mini", "http://127.0.0.1:9/v1", "sk-fuzz");
      anthropic = sight_anthropic_provider_new ("claude-sonnet-4-5", "http://127.0.0.1:9",
                                                "sk-ant-fuzz");
      request = sight_model_request_new ();
      sight_model_request_add_message (request, SIGHT_MODEL_ROLE_USER, "click Sign in");
      json_parser_load_from_data (parser, "{\"type\":\"object\",\"properties\":"
                                  "{\"ref\":{\"type\":\"string\"}},\"required\":[\"ref\"]}", -1, NULL);
      sight_model_request_add_tool (request, "click", "Clicks an element",
                                    json_parser_get_root (parser));
    }
  parse_with (openai, request, body);
  parse_with (anthropic, request, body);
  return 0;
}
