/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-model-request"

#include "config.h"

#include "sight-model-request.h"

#include "sight-enum.h"
#include "sight-json.h"
#include "sight-model-enums.h"

static void
image_free (SightModelImage *image)
{
  g_free (image->media_type);
  g_clear_pointer (&image->bytes, g_bytes_unref);
  g_free (image);
}

SightModelToolCall *
sight_model_tool_call_new (const char *id,
                           const char *name,
                           JsonNode   *arguments)
{
  SightModelToolCall *call = g_new0 (SightModelToolCall, 1);

  call->id = g_strdup (id);
  call->name = g_strdup (name);
  if (arguments != NULL)
    call->arguments = json_node_copy (arguments);
  else
    {
      call->arguments = json_node_new (JSON_NODE_OBJECT);
      json_node_take_object (call->arguments, json_object_new ());
    }
  return call;
}

void
sight_model_tool_call_free (SightModelToolCall *call)
{
  if (call == NULL)
    return;
  g_free (call->id);
  g_free (call->name);
  g_clear_pointer (&call->arguments, json_node_unref);
  g_free (call);
}

static void
message_free (SightModelMessage *message)
{
  g_free (message->text);
  g_clear_pointer (&message->images, g_ptr_array_unref);
  g_clear_pointer (&message->tool_calls, g_ptr_array_unref);
  g_free (message->tool_call_id);
  g_free (message);
}

static void
tool_free (SightModelTool *tool)
{
  g_free (tool->name);
  g_free (tool->description);
  g_clear_pointer (&tool->parameters, json_node_unref);
  g_free (tool);
}

SightModelRequest *
sight_model_request_new (void)
{
  SightModelRequest *self = g_new0 (SightModelRequest, 1);

  g_atomic_ref_count_init (&self->ref_count);
  self->messages = g_ptr_array_new_with_free_func ((GDestroyNotify) message_free);
  self->tools = g_ptr_array_new_with_free_func ((GDestroyNotify) tool_free);
  self->tool_choice = SIGHT_MODEL_TOOL_CHOICE_AUTO;
  return self;
}

SightModelRequest *
sight_model_request_ref (SightModelRequest *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

void
sight_model_request_unref (SightModelRequest *self)
{
  g_return_if_fail (self != NULL);
  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;
  g_free (self->system);
  g_clear_pointer (&self->messages, g_ptr_array_unref);
  g_clear_pointer (&self->tools, g_ptr_array_unref);
  g_free (self->response_name);
  g_clear_pointer (&self->response_schema, json_node_unref);
  g_free (self);
}

void
sight_model_request_set_system (SightModelRequest *self,
                                const char        *text)
{
  g_return_if_fail (self != NULL);
  g_free (self->system);
  self->system = g_strdup (text);
}

SightModelMessage *
sight_model_request_add_message (SightModelRequest *self,
                                 SightModelRole     role,
                                 const char        *text)
{
  SightModelMessage *message;

  g_return_val_if_fail (self != NULL, NULL);

  message = g_new0 (SightModelMessage, 1);
  message->role = role;
  message->text = g_strdup (text);
  message->images = g_ptr_array_new_with_free_func ((GDestroyNotify) image_free);
  message->tool_calls = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_model_tool_call_free);
  g_ptr_array_add (self->messages, message);
  return message;
}

SightModelMessage *
sight_model_request_add_tool_result (SightModelRequest *self,
                                     const char        *tool_call_id,
                                     const char        *text,
                                     gboolean           is_error)
{
  SightModelMessage *message;

  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (tool_call_id != NULL, NULL);

  message = sight_model_request_add_message (self, SIGHT_MODEL_ROLE_TOOL, text);
  message->tool_call_id = g_strdup (tool_call_id);
  message->is_error = is_error;
  return message;
}

SightModelMessage *
sight_model_request_add_response (SightModelRequest  *self,
                                  SightModelResponse *response)
{
  SightModelMessage *message;

  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (response != NULL, NULL);

  message = sight_model_request_add_message (self, SIGHT_MODEL_ROLE_ASSISTANT, response->text);
  for (guint i = 0; i < response->tool_calls->len; i++)
    {
      SightModelToolCall *call = g_ptr_array_index (response->tool_calls, i);

      sight_model_message_add_tool_call (message, call->id, call->name, call->arguments);
    }
  return message;
}

void
sight_model_message_add_image (SightModelMessage *message,
                               const char        *media_type,
                               GBytes            *bytes)
{
  SightModelImage *image;

  g_return_if_fail (message != NULL);
  g_return_if_fail (media_type != NULL);
  g_return_if_fail (bytes != NULL);

  image = g_new0 (SightModelImage, 1);
  image->media_type = g_strdup (media_type);
  image->bytes = g_bytes_ref (bytes);
  g_ptr_array_add (message->images, image);
}

void
sight_model_message_add_tool_call (SightModelMessage *message,
                                   const char        *id,
                                   const char        *name,
                                   JsonNode          *arguments)
{
  g_return_if_fail (message != NULL);
  g_return_if_fail (name != NULL);

  g_ptr_array_add (message->tool_calls, sight_model_tool_call_new (id, name, arguments));
}

void
sight_model_request_add_tool (SightModelRequest *self,
                              const char        *name,
                              const char        *description,
                              JsonNode          *parameters)
{
  SightModelTool *tool;

  g_return_if_fail (self != NULL);
  g_return_if_fail (name != NULL);

  tool = g_new0 (SightModelTool, 1);
  tool->name = g_strdup (name);
  tool->description = g_strdup (description);
  if (parameters != NULL)
    tool->parameters = json_node_copy (parameters);
  else
    tool->parameters = json_from_string ("{\"type\":\"object\",\"properties\":{}}", NULL);
  g_ptr_array_add (self->tools, tool);
}

void
sight_model_request_set_tool_choice (SightModelRequest    *self,
                                     SightModelToolChoice  choice)
{
  g_return_if_fail (self != NULL);
  self->tool_choice = choice;
}

void
sight_model_request_set_response_schema (SightModelRequest *self,
                                         const char        *name,
                                         JsonNode          *schema)
{
  g_return_if_fail (self != NULL);

  g_clear_pointer (&self->response_schema, json_node_unref);
  g_free (self->response_name);
  self->response_name = g_strdup (name != NULL ? name : "answer");
  if (schema != NULL)
    self->response_schema = json_node_copy (schema);
}

void
sight_model_request_set_max_tokens (SightModelRequest *self,
                                    guint              max_tokens)
{
  g_return_if_fail (self != NULL);
  self->max_tokens = max_tokens;
}

SightModelResponse *
sight_model_response_new (void)
{
  SightModelResponse *self = g_new0 (SightModelResponse, 1);

  g_atomic_ref_count_init (&self->ref_count);
  self->tool_calls = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_model_tool_call_free);
  self->finish_reason = SIGHT_MODEL_FINISH_OTHER;
  sight_usage_init (&self->usage);
  return self;
}

SightModelResponse *
sight_model_response_ref (SightModelResponse *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

void
sight_model_response_unref (SightModelResponse *self)
{
  g_return_if_fail (self != NULL);
  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;
  g_free (self->text);
  g_clear_pointer (&self->tool_calls, g_ptr_array_unref);
  g_free (self->finish_reason_raw);
  g_free (self->request_id);
  g_free (self->model);
  g_free (self);
}

JsonNode *
sight_model_response_parse_json (SightModelResponse *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  if (self->text == NULL)
    return NULL;
  return sight_json_parse (self->text, -1, SIGHT_JSON_MAX_DEPTH, NULL);
}

const char *
sight_model_finish_reason_to_string (SightModelFinishReason reason)
{
  return sight_enum_to_nick (SIGHT_TYPE_MODEL_FINISH_REASON, reason);
}
