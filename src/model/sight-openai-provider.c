/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-openai-provider"

#include "config.h"

#include "sight-openai-provider.h"

#include <string.h>

#include "sight-error.h"
#include "sight-json.h"
#include "sight-model-private.h"

struct _SightOpenaiProvider
{
  SightModelProvider parent_instance;
};

G_DEFINE_FINAL_TYPE (SightOpenaiProvider, sight_openai_provider, SIGHT_TYPE_MODEL_PROVIDER)

static void
add_images (JsonBuilder *builder,
            GPtrArray   *images)
{
  for (guint i = 0; i < images->len; i++)
    {
      SightModelImage *image = g_ptr_array_index (images, i);
      g_autofree char *url = _sight_image_data_url (image->bytes, image->media_type);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "type");
      json_builder_add_string_value (builder, "image_url");
      json_builder_set_member_name (builder, "image_url");
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "url");
      json_builder_add_string_value (builder, url);
      json_builder_end_object (builder);
      json_builder_end_object (builder);
    }
}

static void
add_text_part (JsonBuilder *builder,
               const char  *text)
{
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, "text");
  json_builder_set_member_name (builder, "text");
  json_builder_add_string_value (builder, text);
  json_builder_end_object (builder);
}

/* Chat Completions takes images only in user messages: the images of tool
 * results go in one user message after the run of tool messages. */
static void
flush_tool_images (JsonBuilder *builder,
                   GPtrArray   *pending)
{
  if (pending->len == 0)
    return;
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "role");
  json_builder_add_string_value (builder, "user");
  json_builder_set_member_name (builder, "content");
  json_builder_begin_array (builder);
  for (guint i = 0; i < pending->len; i++)
    {
      SightModelMessage *message = g_ptr_array_index (pending, i);
      g_autofree char *caption = g_strdup_printf ("Image from the result of tool call %s:",
                                                  message->tool_call_id);

      add_text_part (builder, caption);
      add_images (builder, message->images);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  g_ptr_array_set_size (pending, 0);
}

static void
add_message (JsonBuilder       *builder,
             SightModelMessage *message)
{
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "role");
  switch (message->role)
    {
    case SIGHT_MODEL_ROLE_USER:
      json_builder_add_string_value (builder, "user");
      json_builder_set_member_name (builder, "content");
      if (message->images->len == 0)
        json_builder_add_string_value (builder, message->text ? message->text : "");
      else
        {
          json_builder_begin_array (builder);
          if (message->text != NULL)
            add_text_part (builder, message->text);
          add_images (builder, message->images);
          json_builder_end_array (builder);
        }
      break;

    case SIGHT_MODEL_ROLE_ASSISTANT:
      json_builder_add_string_value (builder, "assistant");
      json_builder_set_member_name (builder, "content");
      if (message->text != NULL)
        json_builder_add_string_value (builder, message->text);
      else
        json_builder_add_null_value (builder);
      if (message->tool_calls->len > 0)
        {
          json_builder_set_member_name (builder, "tool_calls");
          json_builder_begin_array (builder);
          for (guint i = 0; i < message->tool_calls->len; i++)
            {
              SightModelToolCall *call = g_ptr_array_index (message->tool_calls, i);
              g_autofree char *arguments = json_to_string (call->arguments, FALSE);

              json_builder_begin_object (builder);
              json_builder_set_member_name (builder, "id");
              json_builder_add_string_value (builder, call->id ? call->id : "");
              json_builder_set_member_name (builder, "type");
              json_builder_add_string_value (builder, "function");
              json_builder_set_member_name (builder, "function");
              json_builder_begin_object (builder);
              json_builder_set_member_name (builder, "name");
              json_builder_add_string_value (builder, call->name);
              json_builder_set_member_name (builder, "arguments");
              json_builder_add_string_value (builder, arguments);
              json_builder_end_object (builder);
              json_builder_end_object (builder);
            }
          json_builder_end_array (builder);
        }
      break;

    case SIGHT_MODEL_ROLE_TOOL:
    default:
      json_builder_add_string_value (builder, "tool");
      json_builder_set_member_name (builder, "tool_call_id");
      json_builder_add_string_value (builder, message->tool_call_id);
      json_builder_set_member_name (builder, "content");
      if (message->is_error)
        {
          g_autofree char *text = g_strdup_printf ("Error: %s", message->text ? message->text : "");

          json_builder_add_string_value (builder, text);
        }
      else
        json_builder_add_string_value (builder, message->text ? message->text : "");
      break;
    }
  json_builder_end_object (builder);
}

static GBytes *
sight_openai_provider_serialize (SightModelProvider  *provider,
                                 SightModelRequest   *request,
                                 char               **out_path,
                                 GError             **error)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(GPtrArray) pending = g_ptr_array_new ();
  g_autoptr(JsonNode) root = NULL;
  const char *base_url = sight_model_provider_get_base_url (provider);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "model");
  json_builder_add_string_value (builder, sight_model_provider_get_model (provider));

  json_builder_set_member_name (builder, "messages");
  json_builder_begin_array (builder);
  if (request->system != NULL)
    {
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "role");
      json_builder_add_string_value (builder, "system");
      json_builder_set_member_name (builder, "content");
      json_builder_add_string_value (builder, request->system);
      json_builder_end_object (builder);
    }
  for (guint i = 0; i < request->messages->len; i++)
    {
      SightModelMessage *message = g_ptr_array_index (request->messages, i);

      if (message->role != SIGHT_MODEL_ROLE_TOOL)
        flush_tool_images (builder, pending);
      add_message (builder, message);
      if (message->role == SIGHT_MODEL_ROLE_TOOL && message->images->len > 0)
        g_ptr_array_add (pending, message);
    }
  flush_tool_images (builder, pending);
  json_builder_end_array (builder);

  if (request->tools->len > 0)
    {
      json_builder_set_member_name (builder, "tools");
      json_builder_begin_array (builder);
      for (guint i = 0; i < request->tools->len; i++)
        {
          SightModelTool *tool = g_ptr_array_index (request->tools, i);

          json_builder_begin_object (builder);
          json_builder_set_member_name (builder, "type");
          json_builder_add_string_value (builder, "function");
          json_builder_set_member_name (builder, "function");
          json_builder_begin_object (builder);
          json_builder_set_member_name (builder, "name");
          json_builder_add_string_value (builder, tool->name);
          if (tool->description != NULL)
            {
              json_builder_set_member_name (builder, "description");
              json_builder_add_string_value (builder, tool->description);
            }
          json_builder_set_member_name (builder, "parameters");
          json_builder_add_value (builder, json_node_copy (tool->parameters));
          json_builder_end_object (builder);
          json_builder_end_object (builder);
        }
      json_builder_end_array (builder);
      json_builder_set_member_name (builder, "tool_choice");
      json_builder_add_string_value (builder,
                                     request->tool_choice == SIGHT_MODEL_TOOL_CHOICE_REQUIRED ? "required"
                                     : request->tool_choice == SIGHT_MODEL_TOOL_CHOICE_NONE ? "none"
                                     : "auto");
    }

  if (request->response_schema != NULL)
    {
      json_builder_set_member_name (builder, "response_format");
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "type");
      json_builder_add_string_value (builder, "json_schema");
      json_builder_set_member_name (builder, "json_schema");
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "name");
      json_builder_add_string_value (builder, request->response_name);
      json_builder_set_member_name (builder, "schema");
      json_builder_add_value (builder, json_node_copy (request->response_schema));
      json_builder_end_object (builder);
      json_builder_end_object (builder);
    }

  if (request->max_tokens > 0 || sight_model_provider_get_default_max_tokens (provider) > 0)
    {
      /* OpenAI's own endpoint renamed the field; compatible servers know
       * the old name. */
      gboolean openai = base_url != NULL && strstr (base_url, "://api.openai.com") != NULL;

      json_builder_set_member_name (builder, openai ? "max_completion_tokens" : "max_tokens");
      json_builder_add_int_value (builder, request->max_tokens > 0
                                           ? request->max_tokens
                                           : sight_model_provider_get_default_max_tokens (provider));
    }
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  *out_path = g_strdup ("/chat/completions");
  return _sight_json_to_bytes (root);
}

static void
sight_openai_provider_add_headers (SightModelProvider *provider,
                                   SoupMessageHeaders *headers)
{
  const char *key = _sight_model_provider_get_api_key (provider);

  if (key != NULL)
    {
      g_autofree char *value = g_strconcat ("Bearer ", key, NULL);

      soup_message_headers_replace (headers, "Authorization", value);
      memset (value, 0, strlen (value));
    }
}

static const char *
sight_openai_provider_key_env_name (SightModelProvider *provider)
{
  return "OPENAI_API_KEY";
}

static gboolean
read_content (JsonNode  *node,
              char     **out_text)
{
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING)
    {
      const char *text = json_node_get_string (node);

      if (*text != '\0')
        *out_text = g_strdup (text);
      return TRUE;
    }
  if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *parts = json_node_get_array (node);
      GString *text = g_string_new (NULL);

      for (guint i = 0; i < json_array_get_length (parts); i++)
        {
          const char *part = _sight_json_string_member (_sight_json_object (json_array_get_element (parts, i)),
                                                        "text");

          if (part != NULL)
            g_string_append (text, part);
        }
      if (text->len > 0)
        *out_text = g_string_free (text, FALSE);
      else
        g_string_free (text, TRUE);
      return TRUE;
    }
  return FALSE;
}

static SightModelResponse *
sight_openai_provider_parse (SightModelProvider *provider,
                             SightModelRequest  *request,
                             GBytes             *body,
                             gsize               request_bytes,
                             GError            **error)
{
  g_autoptr(JsonNode) document = NULL;
  g_autoptr(GError) parse_error = NULL;
  g_autoptr(SightModelResponse) response = sight_model_response_new ();
  gsize length = 0;
  const char *data = g_bytes_get_data (body, &length);
  JsonObject *root, *choice, *message, *usage;
  JsonArray *choices, *tool_calls;
  const char *finish;
  gsize output_bytes = 0;

  document = sight_json_parse (data, length, SIGHT_JSON_MAX_DEPTH, &parse_error);
  if (document == NULL)
    {
      _sight_model_set_not_json_error (error, data, length, parse_error);
      return NULL;
    }
  root = _sight_json_object (document);
  choices = _sight_json_array_member (root, "choices");
  if (choices == NULL || json_array_get_length (choices) == 0)
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_OUTPUT_INVALID,
                           "the answer has no choices");
      return NULL;
    }
  choice = _sight_json_object (json_array_get_element (choices, 0));
  message = _sight_json_object_member (choice, "message");
  if (message == NULL)
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_OUTPUT_INVALID,
                           "the answer's choice has no message");
      return NULL;
    }

  finish = _sight_json_string_member (choice, "finish_reason");
  response->finish_reason_raw = g_strdup (finish);
  if (g_strcmp0 (finish, "length") == 0)
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_OUTPUT_INVALID,
                           "the answer was cut at the output token limit (finish_reason=length)");
      return NULL;
    }
  else if (g_strcmp0 (finish, "stop") == 0)
    response->finish_reason = SIGHT_MODEL_FINISH_STOP;
  else if (g_strcmp0 (finish, "tool_calls") == 0 || g_strcmp0 (finish, "function_call") == 0)
    response->finish_reason = SIGHT_MODEL_FINISH_TOOL_CALLS;
  else if (g_strcmp0 (finish, "content_filter") == 0)
    response->finish_reason = SIGHT_MODEL_FINISH_CONTENT_FILTER;
  else
    response->finish_reason = SIGHT_MODEL_FINISH_OTHER;

  if (!read_content (json_object_get_member (message, "content"), &response->text))
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_OUTPUT_INVALID,
                           "the answer's content is neither text nor parts");
      return NULL;
    }
  if (response->text == NULL && _sight_json_string_member (message, "refusal") != NULL)
    {
      response->text = g_strdup (_sight_json_string_member (message, "refusal"));
      response->finish_reason = SIGHT_MODEL_FINISH_CONTENT_FILTER;
    }
  if (response->text != NULL)
    output_bytes += strlen (response->text);

  tool_calls = _sight_json_array_member (message, "tool_calls");
  for (guint i = 0; tool_calls != NULL && i < json_array_get_length (tool_calls); i++)
    {
      JsonObject *call = _sight_json_object (json_array_get_element (tool_calls, i));
      JsonObject *function = _sight_json_object_member (call, "function");
      const char *name = _sight_json_string_member (function, "name");
      const char *id = _sight_json_string_member (call, "id");
      JsonNode *arguments_node = function ? json_object_get_member (function, "arguments") : NULL;
      g_autoptr(JsonNode) arguments = NULL;

      if (name == NULL || *name == '\0')
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_OUTPUT_INVALID,
                       "tool call %u has no function name", i);
          return NULL;
        }
      if (arguments_node != NULL && JSON_NODE_HOLDS_OBJECT (arguments_node))
        arguments = json_node_copy (arguments_node);
      else if (arguments_node != NULL && JSON_NODE_HOLDS_VALUE (arguments_node)
               && json_node_get_value_type (arguments_node) == G_TYPE_STRING)
        {
          const char *text = json_node_get_string (arguments_node);

          output_bytes += strlen (text);
          /* An empty argument string is how some servers say "no arguments". */
          if (*text == '\0')
            arguments = json_from_string ("{}", NULL);
          else
            arguments = sight_json_parse (text, -1, SIGHT_JSON_MAX_DEPTH, NULL);
        }
      if (arguments == NULL || !JSON_NODE_HOLDS_OBJECT (arguments))
        {
          g_autofree char *safe = sight_text_sanitize (name, 64);

          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_OUTPUT_INVALID,
                       "the arguments of tool call %s are not a whole JSON object (truncated?); "
                       "no tool call was taken from this answer", safe);
          return NULL;
        }
      output_bytes += strlen (name);
      /* Some compatible servers send no ids; the next turn needs them. */
      if (id == NULL || *id == '\0')
        {
          g_autofree char *made = g_strdup_printf ("call_%u", i);

          g_ptr_array_add (response->tool_calls, sight_model_tool_call_new (made, name, arguments));
        }
      else
        g_ptr_array_add (response->tool_calls, sight_model_tool_call_new (id, name, arguments));
    }

  if (response->finish_reason == SIGHT_MODEL_FINISH_TOOL_CALLS && response->tool_calls->len == 0)
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_OUTPUT_INVALID,
                           "the answer ends for tool calls but holds none");
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
  _sight_model_provider_account (provider, response,
                                 _sight_json_count_member (usage, "prompt_tokens"),
                                 _sight_json_count_member (_sight_json_object_member (usage, "prompt_tokens_details"),
                                                           "cached_tokens"),
                                 _sight_json_count_member (usage, "completion_tokens"),
                                 _sight_json_number_member (usage, "cost"),
                                 request_bytes, output_bytes);
  return g_steal_pointer (&response);
}

static void
sight_openai_provider_class_init (SightOpenaiProviderClass *klass)
{
  SightModelProviderClass *provider_class = SIGHT_MODEL_PROVIDER_CLASS (klass);

  provider_class->serialize = sight_openai_provider_serialize;
  provider_class->add_headers = sight_openai_provider_add_headers;
  provider_class->parse = sight_openai_provider_parse;
  provider_class->key_env_name = sight_openai_provider_key_env_name;
}

static void
sight_openai_provider_init (SightOpenaiProvider *self)
{
}

SightModelProvider *
sight_openai_provider_new (const char *model,
                           const char *base_url,
                           const char *api_key)
{
  SightModelProvider *self;

  g_return_val_if_fail (model != NULL, NULL);

  self = g_object_new (SIGHT_TYPE_OPENAI_PROVIDER, NULL);
  _sight_model_provider_setup (self, "openai", model,
                               base_url != NULL && *base_url != '\0' ? base_url
                                                                      : SIGHT_OPENAI_DEFAULT_BASE_URL,
                               api_key);
  return self;
}
