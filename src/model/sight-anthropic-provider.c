/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-anthropic-provider"

#include "config.h"

#include "sight-anthropic-provider.h"

#include <string.h>

#include "sight-error.h"
#include "sight-json.h"
#include "sight-model-private.h"

struct _SightAnthropicProvider
{
  SightModelProvider parent_instance;
};

G_DEFINE_FINAL_TYPE (SightAnthropicProvider, sight_anthropic_provider, SIGHT_TYPE_MODEL_PROVIDER)

/* A tool's input must be an object: other answer schemas are wrapped. */
static gboolean
schema_is_object (JsonNode *schema)
{
  JsonObject *object = _sight_json_object (schema);

  return g_strcmp0 (_sight_json_string_member (object, "type"), "object") == 0;
}

static void
add_text_block (JsonBuilder *builder,
                const char  *text)
{
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, "text");
  json_builder_set_member_name (builder, "text");
  json_builder_add_string_value (builder, text);
  json_builder_end_object (builder);
}

static void
add_image_blocks (JsonBuilder *builder,
                  GPtrArray   *images)
{
  for (guint i = 0; i < images->len; i++)
    {
      SightModelImage *image = g_ptr_array_index (images, i);
      gsize size = 0;
      const guchar *data = g_bytes_get_data (image->bytes, &size);
      g_autofree char *base64 = g_base64_encode (data, size);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "type");
      json_builder_add_string_value (builder, "image");
      json_builder_set_member_name (builder, "source");
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "type");
      json_builder_add_string_value (builder, "base64");
      json_builder_set_member_name (builder, "media_type");
      json_builder_add_string_value (builder, image->media_type);
      json_builder_set_member_name (builder, "data");
      json_builder_add_string_value (builder, base64);
      json_builder_end_object (builder);
      json_builder_end_object (builder);
    }
}

static void
add_blocks (JsonBuilder       *builder,
            SightModelMessage *message)
{
  switch (message->role)
    {
    case SIGHT_MODEL_ROLE_USER:
      if (message->text != NULL && *message->text != '\0')
        add_text_block (builder, message->text);
      add_image_blocks (builder, message->images);
      break;

    case SIGHT_MODEL_ROLE_ASSISTANT:
      if (message->text != NULL && *message->text != '\0')
        add_text_block (builder, message->text);
      for (guint i = 0; i < message->tool_calls->len; i++)
        {
          SightModelToolCall *call = g_ptr_array_index (message->tool_calls, i);

          json_builder_begin_object (builder);
          json_builder_set_member_name (builder, "type");
          json_builder_add_string_value (builder, "tool_use");
          json_builder_set_member_name (builder, "id");
          json_builder_add_string_value (builder, call->id ? call->id : "");
          json_builder_set_member_name (builder, "name");
          json_builder_add_string_value (builder, call->name);
          json_builder_set_member_name (builder, "input");
          json_builder_add_value (builder, json_node_copy (call->arguments));
          json_builder_end_object (builder);
        }
      break;

    case SIGHT_MODEL_ROLE_TOOL:
    default:
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "type");
      json_builder_add_string_value (builder, "tool_result");
      json_builder_set_member_name (builder, "tool_use_id");
      json_builder_add_string_value (builder, message->tool_call_id);
      if (message->is_error)
        {
          json_builder_set_member_name (builder, "is_error");
          json_builder_add_boolean_value (builder, TRUE);
        }
      json_builder_set_member_name (builder, "content");
      json_builder_begin_array (builder);
      add_text_block (builder, message->text != NULL && *message->text != '\0' ? message->text
                                                                               : "(no output)");
      add_image_blocks (builder, message->images);
      json_builder_end_array (builder);
      json_builder_end_object (builder);
      break;
    }
}

static GBytes *
sight_anthropic_provider_serialize (SightModelProvider  *provider,
                                    SightModelRequest   *request,
                                    char               **out_path,
                                    GError             **error)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  const char *open_role = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "model");
  json_builder_add_string_value (builder, sight_model_provider_get_model (provider));
  json_builder_set_member_name (builder, "max_tokens");
  /* The Messages API requires a cap. */
  json_builder_add_int_value (builder, request->max_tokens > 0 ? request->max_tokens
                                       : sight_model_provider_get_default_max_tokens (provider) > 0
                                       ? sight_model_provider_get_default_max_tokens (provider)
                                       : 4096);
  if (request->system != NULL)
    {
      json_builder_set_member_name (builder, "system");
      json_builder_add_string_value (builder, request->system);
    }

  /* Messages alternate user and assistant; tool results are user blocks,
   * so runs of one role merge into one message. */
  json_builder_set_member_name (builder, "messages");
  json_builder_begin_array (builder);
  for (guint i = 0; i < request->messages->len; i++)
    {
      SightModelMessage *message = g_ptr_array_index (request->messages, i);
      const char *role = message->role == SIGHT_MODEL_ROLE_ASSISTANT ? "assistant" : "user";

      if (open_role == NULL || !g_str_equal (open_role, role))
        {
          if (open_role != NULL)
            {
              json_builder_end_array (builder);
              json_builder_end_object (builder);
            }
          json_builder_begin_object (builder);
          json_builder_set_member_name (builder, "role");
          json_builder_add_string_value (builder, role);
          json_builder_set_member_name (builder, "content");
          json_builder_begin_array (builder);
          open_role = role;
        }
      add_blocks (builder, message);
    }
  if (open_role != NULL)
    {
      json_builder_end_array (builder);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);

  if (request->tools->len > 0 || request->response_schema != NULL)
    {
      json_builder_set_member_name (builder, "tools");
      json_builder_begin_array (builder);
      for (guint i = 0; i < request->tools->len; i++)
        {
          SightModelTool *tool = g_ptr_array_index (request->tools, i);

          json_builder_begin_object (builder);
          json_builder_set_member_name (builder, "name");
          json_builder_add_string_value (builder, tool->name);
          if (tool->description != NULL)
            {
              json_builder_set_member_name (builder, "description");
              json_builder_add_string_value (builder, tool->description);
            }
          json_builder_set_member_name (builder, "input_schema");
          json_builder_add_value (builder, json_node_copy (tool->parameters));
          json_builder_end_object (builder);
        }
      if (request->response_schema != NULL)
        {
          json_builder_begin_object (builder);
          json_builder_set_member_name (builder, "name");
          json_builder_add_string_value (builder, request->response_name);
          json_builder_set_member_name (builder, "description");
          json_builder_add_string_value (builder, "Give the answer as this tool's input.");
          json_builder_set_member_name (builder, "input_schema");
          if (schema_is_object (request->response_schema))
            json_builder_add_value (builder, json_node_copy (request->response_schema));
          else
            {
              json_builder_begin_object (builder);
              json_builder_set_member_name (builder, "type");
              json_builder_add_string_value (builder, "object");
              json_builder_set_member_name (builder, "properties");
              json_builder_begin_object (builder);
              json_builder_set_member_name (builder, "value");
              json_builder_add_value (builder, json_node_copy (request->response_schema));
              json_builder_end_object (builder);
              json_builder_set_member_name (builder, "required");
              json_builder_begin_array (builder);
              json_builder_add_string_value (builder, "value");
              json_builder_end_array (builder);
              json_builder_end_object (builder);
            }
          json_builder_end_object (builder);
        }
      json_builder_end_array (builder);

      json_builder_set_member_name (builder, "tool_choice");
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "type");
      if (request->response_schema != NULL)
        {
          json_builder_add_string_value (builder, "tool");
          json_builder_set_member_name (builder, "name");
          json_builder_add_string_value (builder, request->response_name);
        }
      else
        json_builder_add_string_value (builder,
                                       request->tool_choice == SIGHT_MODEL_TOOL_CHOICE_REQUIRED ? "any"
                                       : request->tool_choice == SIGHT_MODEL_TOOL_CHOICE_NONE ? "none"
                                       : "auto");
      json_builder_end_object (builder);
    }
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  *out_path = g_strdup ("/v1/messages");
  return _sight_json_to_bytes (root);
}

static void
sight_anthropic_provider_add_headers (SightModelProvider *provider,
                                      SoupMessageHeaders *headers)
{
  const char *key = _sight_model_provider_get_api_key (provider);

  if (key != NULL)
    soup_message_headers_replace (headers, "x-api-key", key);
  soup_message_headers_replace (headers, "anthropic-version", SIGHT_ANTHROPIC_VERSION);
}

static const char *
sight_anthropic_provider_key_env_name (SightModelProvider *provider)
{
  return "ANTHROPIC_API_KEY";
}

static SightModelResponse *
sight_anthropic_provider_parse (SightModelProvider *provider,
                                SightModelRequest  *request,
                                GBytes             *body,
                                gsize               request_bytes,
                                GError            **error)
{
  g_autoptr(JsonNode) document = NULL;
  g_autoptr(GError) parse_error = NULL;
  g_autoptr(SightModelResponse) response = sight_model_response_new ();
  g_autoptr(GString) text = g_string_new (NULL);
  gsize length = 0;
  const char *data = g_bytes_get_data (body, &length);
  JsonObject *root, *usage;
  JsonArray *content;
  const char *stop;
  gboolean answered = FALSE;
  gsize output_bytes = 0;
  gint64 input, cache_read, cache_write;

  document = sight_json_parse (data, length, SIGHT_JSON_MAX_DEPTH, &parse_error);
  if (document == NULL)
    {
      _sight_model_set_not_json_error (error, data, length, parse_error);
      return NULL;
    }
  root = _sight_json_object (document);
  content = _sight_json_array_member (root, "content");
  if (content == NULL)
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_OUTPUT_INVALID,
                           "the answer has no content list");
      return NULL;
    }

  stop = _sight_json_string_member (root, "stop_reason");
  response->finish_reason_raw = g_strdup (stop);
  if (g_strcmp0 (stop, "max_tokens") == 0)
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_OUTPUT_INVALID,
                           "the answer was cut at the output token limit (stop_reason=max_tokens)");
      return NULL;
    }
  else if (g_strcmp0 (stop, "end_turn") == 0 || g_strcmp0 (stop, "stop_sequence") == 0)
    response->finish_reason = SIGHT_MODEL_FINISH_STOP;
  else if (g_strcmp0 (stop, "tool_use") == 0)
    response->finish_reason = SIGHT_MODEL_FINISH_TOOL_CALLS;
  else if (g_strcmp0 (stop, "refusal") == 0)
    response->finish_reason = SIGHT_MODEL_FINISH_CONTENT_FILTER;
  else
    response->finish_reason = SIGHT_MODEL_FINISH_OTHER;

  for (guint i = 0; i < json_array_get_length (content); i++)
    {
      JsonObject *block = _sight_json_object (json_array_get_element (content, i));
      const char *type = _sight_json_string_member (block, "type");

      if (g_strcmp0 (type, "text") == 0)
        {
          const char *part = _sight_json_string_member (block, "text");

          if (part != NULL)
            g_string_append (text, part);
        }
      else if (g_strcmp0 (type, "tool_use") == 0)
        {
          const char *name = _sight_json_string_member (block, "name");
          const char *id = _sight_json_string_member (block, "id");
          JsonNode *input_node = json_object_get_member (block, "input");
          g_autofree char *input_text = NULL;

          if (name == NULL || input_node == NULL || !JSON_NODE_HOLDS_OBJECT (input_node))
            {
              g_autofree char *safe = sight_text_sanitize (name ? name : "(unnamed)", 64);

              g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_OUTPUT_INVALID,
                           "the input of tool call %s is not a whole JSON object; "
                           "no tool call was taken from this answer", safe);
              return NULL;
            }
          input_text = json_to_string (input_node, FALSE);
          output_bytes += strlen (input_text) + strlen (name);
          if (request->response_schema != NULL && g_str_equal (name, request->response_name))
            {
              JsonNode *answer = input_node;

              if (!schema_is_object (request->response_schema))
                answer = json_object_get_member (json_node_get_object (input_node), "value");
              if (answer == NULL)
                {
                  g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_OUTPUT_INVALID,
                                       "the structured answer has no value");
                  return NULL;
                }
              g_string_truncate (text, 0);
              {
                g_autofree char *json = json_to_string (answer, FALSE);

                g_string_append (text, json);
              }
              answered = TRUE;
            }
          else if (id == NULL || *id == '\0')
            {
              g_autofree char *made = g_strdup_printf ("toolu_%u", i);

              g_ptr_array_add (response->tool_calls, sight_model_tool_call_new (made, name, input_node));
            }
          else
            g_ptr_array_add (response->tool_calls, sight_model_tool_call_new (id, name, input_node));
        }
    }

  if (request->response_schema != NULL && !answered)
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_OUTPUT_INVALID,
                           "the answer does not follow the requested response format");
      return NULL;
    }
  if (answered)
    response->finish_reason = response->tool_calls->len > 0 ? SIGHT_MODEL_FINISH_TOOL_CALLS
                                                            : SIGHT_MODEL_FINISH_STOP;
  if (text->len > 0)
    {
      output_bytes += text->len;
      response->text = g_strdup (text->str);
    }
  if (response->finish_reason == SIGHT_MODEL_FINISH_TOOL_CALLS && response->tool_calls->len == 0
      && !answered)
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_OUTPUT_INVALID,
                           "the answer stops for tool use but holds no tool call");
      return NULL;
    }
  if (response->text == NULL && response->tool_calls->len == 0)
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_OUTPUT_INVALID,
                           "the answer holds neither text nor a tool call");
      return NULL;
    }

  response->request_id = g_strdup (_sight_json_string_member (root, "id"));
  response->model = g_strdup (_sight_json_string_member (root, "model"));
  usage = _sight_json_object_member (root, "usage");
  input = _sight_json_count_member (usage, "input_tokens");
  cache_read = MAX (0, _sight_json_count_member (usage, "cache_read_input_tokens"));
  cache_write = MAX (0, _sight_json_count_member (usage, "cache_creation_input_tokens"));
  _sight_model_provider_account (provider, response,
                                 input >= 0 ? input + cache_read + cache_write : -1,
                                 cache_read,
                                 _sight_json_count_member (usage, "output_tokens"),
                                 -1, request_bytes, output_bytes);
  return g_steal_pointer (&response);
}

static void
sight_anthropic_provider_class_init (SightAnthropicProviderClass *klass)
{
  SightModelProviderClass *provider_class = SIGHT_MODEL_PROVIDER_CLASS (klass);

  provider_class->serialize = sight_anthropic_provider_serialize;
  provider_class->add_headers = sight_anthropic_provider_add_headers;
  provider_class->parse = sight_anthropic_provider_parse;
  provider_class->key_env_name = sight_anthropic_provider_key_env_name;
}

static void
sight_anthropic_provider_init (SightAnthropicProvider *self)
{
}

SightModelProvider *
sight_anthropic_provider_new (const char *model,
                              const char *base_url,
                              const char *api_key)
{
  SightModelProvider *self;

  g_return_val_if_fail (model != NULL, NULL);

  self = g_object_new (SIGHT_TYPE_ANTHROPIC_PROVIDER, NULL);
  _sight_model_provider_setup (self, "anthropic", model,
                               base_url != NULL && *base_url != '\0' ? base_url
                                                                      : SIGHT_ANTHROPIC_DEFAULT_BASE_URL,
                               api_key);
  return self;
}
