/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-scripted-model"

#include "config.h"

#include "sight-scripted-model.h"

#include <string.h>

typedef struct
{
  char       *path;
  GPtrArray  *header_names;   /* of char*, as sent */
  GPtrArray  *header_values;
  char       *body_text;
  JsonNode   *body;
} Recorded;

typedef struct
{
  char     *match;
  char     *match_body;
  char     *format;
  JsonNode *response;
  int       times;            /* < 0: unlimited */
} Rule;

struct _SightScriptedModel
{
  GObject     parent_instance;

  SoupServer *server;
  guint       port;
  char       *openai_base_url;
  char       *anthropic_base_url;
  char       *api_key;
  char       *record_path;

  GQueue      responses;      /* of JsonNode */
  GPtrArray  *rules;          /* of Rule */
  JsonNode   *fallback;
  GPtrArray  *requests;       /* of Recorded */
  GPtrArray  *stalled;        /* of Stalled: connections of "stall" answers */
  guint       unexpected;
  guint       answered;
};

G_DEFINE_FINAL_TYPE (SightScriptedModel, sight_scripted_model, G_TYPE_OBJECT)

/* A connection a "stall" answer holds open, sending nothing, until its timer
 * closes it or the server goes. */
typedef struct
{
  SightScriptedModel *self;
  GIOStream          *stream;
  guint               timeout_id;
} Stalled;

static void
stalled_free (Stalled *stalled)
{
  g_clear_handle_id (&stalled->timeout_id, g_source_remove);
  g_io_stream_close (stalled->stream, NULL, NULL);
  g_object_unref (stalled->stream);
  g_free (stalled);
}

typedef enum { FORMAT_OPENAI, FORMAT_ANTHROPIC } Format;

static void
recorded_free (Recorded *recorded)
{
  g_free (recorded->path);
  g_ptr_array_unref (recorded->header_names);
  g_ptr_array_unref (recorded->header_values);
  g_free (recorded->body_text);
  g_clear_pointer (&recorded->body, json_node_unref);
  g_free (recorded);
}

static void
rule_free (Rule *rule)
{
  g_free (rule->match);
  g_free (rule->match_body);
  g_free (rule->format);
  g_clear_pointer (&rule->response, json_node_unref);
  g_free (rule);
}

static void
clear_script (SightScriptedModel *self)
{
  g_queue_clear_full (&self->responses, (GDestroyNotify) json_node_unref);
  g_ptr_array_set_size (self->rules, 0);
  g_clear_pointer (&self->fallback, json_node_unref);
}

static void
sight_scripted_model_finalize (GObject *object)
{
  SightScriptedModel *self = SIGHT_SCRIPTED_MODEL (object);

  if (self->server != NULL)
    soup_server_disconnect (self->server);
  g_clear_object (&self->server);
  clear_script (self);
  g_ptr_array_unref (self->rules);
  g_ptr_array_unref (self->requests);
  g_ptr_array_unref (self->stalled);
  g_free (self->openai_base_url);
  g_free (self->anthropic_base_url);
  g_free (self->api_key);
  g_free (self->record_path);

  G_OBJECT_CLASS (sight_scripted_model_parent_class)->finalize (object);
}

static void
sight_scripted_model_class_init (SightScriptedModelClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sight_scripted_model_finalize;
}

static void
sight_scripted_model_init (SightScriptedModel *self)
{
  g_queue_init (&self->responses);
  self->rules = g_ptr_array_new_with_free_func ((GDestroyNotify) rule_free);
  self->requests = g_ptr_array_new_with_free_func ((GDestroyNotify) recorded_free);
  self->stalled = g_ptr_array_new_with_free_func ((GDestroyNotify) stalled_free);
}

/* Reading JSON leniently */

static JsonObject *
object_of (JsonNode *node)
{
  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

static const char *
string_member (JsonObject *object,
               const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

static JsonArray *
array_member (JsonObject *object,
              const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  return node != NULL && JSON_NODE_HOLDS_ARRAY (node) ? json_node_get_array (node) : NULL;
}

static gint64
int_member (JsonObject *object,
            const char *name,
            gint64      fallback)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node))
    return fallback;
  return json_node_get_int (node);
}

/* The text of the last message, whatever the format. */
static char *
last_message_text (JsonNode *body)
{
  JsonArray *messages = array_member (object_of (body), "messages");
  GString *text = g_string_new (NULL);
  JsonObject *last;
  JsonNode *content;
  guint n;

  if (messages == NULL || (n = json_array_get_length (messages)) == 0)
    return g_string_free (text, FALSE);
  last = object_of (json_array_get_element (messages, n - 1));
  content = last != NULL ? json_object_get_member (last, "content") : NULL;
  if (content != NULL && JSON_NODE_HOLDS_VALUE (content))
    g_string_append (text, json_node_get_string (content) ?: "");
  else if (content != NULL && JSON_NODE_HOLDS_ARRAY (content))
    {
      JsonArray *parts = json_node_get_array (content);

      for (guint i = 0; i < json_array_get_length (parts); i++)
        {
          JsonObject *part = object_of (json_array_get_element (parts, i));
          JsonNode *inner = part ? json_object_get_member (part, "content") : NULL;

          if (string_member (part, "text") != NULL)
            g_string_append (text, string_member (part, "text"));
          if (inner != NULL && JSON_NODE_HOLDS_VALUE (inner))
            g_string_append (text, json_node_get_string (inner) ?: "");
          else if (inner != NULL && JSON_NODE_HOLDS_ARRAY (inner))
            for (guint j = 0; j < json_array_get_length (json_node_get_array (inner)); j++)
              g_string_append (text, string_member (object_of (json_array_get_element (json_node_get_array (inner), j)),
                                                    "text") ?: "");
        }
    }
  return g_string_free (text, FALSE);
}

static JsonNode *
next_entry (SightScriptedModel *self,
            Format              format,
            JsonNode           *body,
            const char         *body_text)
{
  g_autofree char *last = last_message_text (body);

  for (guint i = 0; i < self->rules->len; i++)
    {
      Rule *rule = g_ptr_array_index (self->rules, i);

      if (rule->times == 0)
        continue;
      if (rule->format != NULL
          && !g_str_equal (rule->format, format == FORMAT_OPENAI ? "openai" : "anthropic"))
        continue;
      if (rule->match != NULL && strstr (last, rule->match) == NULL)
        continue;
      if (rule->match_body != NULL && strstr (body_text, rule->match_body) == NULL)
        continue;
      if (rule->times > 0)
        rule->times--;
      return json_node_ref (rule->response);
    }
  if (!g_queue_is_empty (&self->responses))
    return g_queue_pop_head (&self->responses);
  if (self->fallback != NULL)
    return json_node_ref (self->fallback);
  return NULL;
}

/* Rendering */

static void
set_json (SoupServerMessage *msg,
          guint              status,
          JsonBuilder       *builder)
{
  g_autoptr(JsonNode) root = json_builder_get_root (builder);
  g_autofree char *text = json_to_string (root, FALSE);

  soup_server_message_set_status (msg, status, NULL);
  soup_server_message_set_response (msg, "application/json", SOUP_MEMORY_COPY, text, strlen (text));
}

static void
set_error (SoupServerMessage *msg,
           Format             format,
           guint              status,
           const char        *type,
           const char        *code,
           const char        *message)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  json_builder_begin_object (builder);
  if (format == FORMAT_ANTHROPIC)
    {
      json_builder_set_member_name (builder, "type");
      json_builder_add_string_value (builder, "error");
    }
  json_builder_set_member_name (builder, "error");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, type ? type : "api_error");
  json_builder_set_member_name (builder, "message");
  json_builder_add_string_value (builder, message ? message : "error");
  if (format == FORMAT_OPENAI)
    {
      json_builder_set_member_name (builder, "code");
      if (code != NULL)
        json_builder_add_string_value (builder, code);
      else
        json_builder_add_null_value (builder);
    }
  json_builder_end_object (builder);
  json_builder_end_object (builder);
  set_json (msg, status, builder);
}

static char *
arguments_text (JsonObject *call,
                gboolean    truncate)
{
  JsonNode *arguments = json_object_get_member (call, "arguments");
  char *text;

  if (arguments == NULL)
    text = g_strdup ("{}");
  else if (JSON_NODE_HOLDS_VALUE (arguments) && json_node_get_value_type (arguments) == G_TYPE_STRING)
    text = g_strdup (json_node_get_string (arguments));
  else
    text = json_to_string (arguments, FALSE);
  if (truncate)
    text[strlen (text) / 2] = '\0';
  return text;
}

static void
render_openai (SightScriptedModel *self,
               SoupServerMessage  *msg,
               JsonObject         *entry,
               JsonObject         *request,
               gsize               body_len)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  const char *fault = string_member (entry, "fault");
  const char *text = string_member (entry, "text");
  JsonArray *tool_calls = array_member (entry, "tool_calls");
  JsonNode *json = json_object_get_member (entry, "json");
  JsonNode *usage = json_object_get_member (entry, "usage");
  const char *finish = string_member (entry, "finish_reason");
  g_autofree char *json_text = json != NULL ? json_to_string (json, FALSE) : NULL;
  gsize output_len = 0;

  if (json_text != NULL)
    text = json_text;
  if (finish == NULL)
    finish = g_strcmp0 (fault, "length") == 0 ? "length"
             : (tool_calls != NULL && json_array_get_length (tool_calls) > 0) ? "tool_calls"
             : "stop";

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "id");
  {
    g_autofree char *id = g_strdup_printf ("chatcmpl-scripted-%u", self->answered);

    json_builder_add_string_value (builder, id);
  }
  json_builder_set_member_name (builder, "object");
  json_builder_add_string_value (builder, "chat.completion");
  json_builder_set_member_name (builder, "created");
  json_builder_add_int_value (builder, 0);
  json_builder_set_member_name (builder, "model");
  json_builder_add_string_value (builder, string_member (entry, "model") ?: string_member (request, "model") ?: "scripted");
  json_builder_set_member_name (builder, "choices");
  json_builder_begin_array (builder);
  if (g_strcmp0 (fault, "empty_choices") != 0)
    {
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "index");
      json_builder_add_int_value (builder, 0);
      json_builder_set_member_name (builder, "message");
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "role");
      json_builder_add_string_value (builder, "assistant");
      json_builder_set_member_name (builder, "content");
      if (text != NULL)
        {
          json_builder_add_string_value (builder, text);
          output_len += strlen (text);
        }
      else
        json_builder_add_null_value (builder);
      if (tool_calls != NULL && json_array_get_length (tool_calls) > 0)
        {
          json_builder_set_member_name (builder, "tool_calls");
          json_builder_begin_array (builder);
          for (guint i = 0; i < json_array_get_length (tool_calls); i++)
            {
              JsonObject *call = object_of (json_array_get_element (tool_calls, i));
              g_autofree char *args = arguments_text (call, g_strcmp0 (fault, "truncated_arguments") == 0);
              g_autofree char *id = g_strdup_printf ("call_%u_%u", self->answered, i);

              output_len += strlen (args);
              json_builder_begin_object (builder);
              json_builder_set_member_name (builder, "id");
              json_builder_add_string_value (builder, string_member (call, "id") ?: id);
              json_builder_set_member_name (builder, "type");
              json_builder_add_string_value (builder, "function");
              json_builder_set_member_name (builder, "function");
              json_builder_begin_object (builder);
              json_builder_set_member_name (builder, "name");
              json_builder_add_string_value (builder, string_member (call, "name") ?: "");
              json_builder_set_member_name (builder, "arguments");
              json_builder_add_string_value (builder, args);
              json_builder_end_object (builder);
              json_builder_end_object (builder);
            }
          json_builder_end_array (builder);
        }
      json_builder_end_object (builder);
      json_builder_set_member_name (builder, "finish_reason");
      json_builder_add_string_value (builder, finish);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);

  if (usage == NULL || !JSON_NODE_HOLDS_VALUE (usage) || json_node_get_boolean (usage))
    {
      JsonObject *counts = object_of (usage);
      gint64 input = int_member (counts, "input", (body_len + 3) / 4);
      gint64 output = int_member (counts, "output", 7);
      gint64 cached = int_member (counts, "cached", 0);

      json_builder_set_member_name (builder, "usage");
      json_builder_begin_object (builder);
      if (counts == NULL || json_object_has_member (counts, "input"))
        {
          json_builder_set_member_name (builder, "prompt_tokens");
          json_builder_add_int_value (builder, input);
        }
      if (counts == NULL || json_object_has_member (counts, "output"))
        {
          json_builder_set_member_name (builder, "completion_tokens");
          json_builder_add_int_value (builder, output);
        }
      json_builder_set_member_name (builder, "total_tokens");
      json_builder_add_int_value (builder, input + output);
      json_builder_set_member_name (builder, "prompt_tokens_details");
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "cached_tokens");
      json_builder_add_int_value (builder, cached);
      json_builder_end_object (builder);
      if (counts != NULL && json_object_has_member (counts, "cost"))
        {
          json_builder_set_member_name (builder, "cost");
          json_builder_add_value (builder, json_node_copy (json_object_get_member (counts, "cost")));
        }
      json_builder_end_object (builder);
    }
  json_builder_end_object (builder);
  set_json (msg, SOUP_STATUS_OK, builder);
}

static void
render_anthropic (SightScriptedModel *self,
                  SoupServerMessage  *msg,
                  JsonObject         *entry,
                  JsonObject         *request,
                  gsize               body_len)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  const char *fault = string_member (entry, "fault");
  const char *text = string_member (entry, "text");
  JsonArray *tool_calls = array_member (entry, "tool_calls");
  JsonNode *json = json_object_get_member (entry, "json");
  JsonNode *usage = json_object_get_member (entry, "usage");
  const char *stop = string_member (entry, "finish_reason");
  const char *response_tool = NULL;
  gboolean any_tool = (tool_calls != NULL && json_array_get_length (tool_calls) > 0) || json != NULL;

  if (json != NULL)
    {
      JsonObject *choice = object_of (json_object_get_member (request, "tool_choice"));

      response_tool = string_member (choice, "name") ?: "answer";
    }
  if (stop == NULL)
    stop = g_strcmp0 (fault, "length") == 0 ? "max_tokens" : any_tool ? "tool_use" : "end_turn";

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "id");
  {
    g_autofree char *id = g_strdup_printf ("msg_scripted_%u", self->answered);

    json_builder_add_string_value (builder, id);
  }
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, "message");
  json_builder_set_member_name (builder, "role");
  json_builder_add_string_value (builder, "assistant");
  json_builder_set_member_name (builder, "model");
  json_builder_add_string_value (builder, string_member (entry, "model") ?: string_member (request, "model") ?: "scripted");
  json_builder_set_member_name (builder, "content");
  json_builder_begin_array (builder);
  if (g_strcmp0 (fault, "empty_choices") != 0)
    {
      if (text != NULL)
        {
          json_builder_begin_object (builder);
          json_builder_set_member_name (builder, "type");
          json_builder_add_string_value (builder, "text");
          json_builder_set_member_name (builder, "text");
          json_builder_add_string_value (builder, text);
          json_builder_end_object (builder);
        }
      for (guint i = 0; tool_calls != NULL && i < json_array_get_length (tool_calls); i++)
        {
          JsonObject *call = object_of (json_array_get_element (tool_calls, i));
          g_autofree char *id = g_strdup_printf ("toolu_%u_%u", self->answered, i);
          JsonNode *arguments = json_object_get_member (call, "arguments");

          json_builder_begin_object (builder);
          json_builder_set_member_name (builder, "type");
          json_builder_add_string_value (builder, "tool_use");
          json_builder_set_member_name (builder, "id");
          json_builder_add_string_value (builder, string_member (call, "id") ?: id);
          json_builder_set_member_name (builder, "name");
          json_builder_add_string_value (builder, string_member (call, "name") ?: "");
          json_builder_set_member_name (builder, "input");
          if (g_strcmp0 (fault, "truncated_arguments") == 0)
            {
              g_autofree char *cut = arguments_text (call, TRUE);

              json_builder_add_string_value (builder, cut);
            }
          else if (arguments != NULL)
            json_builder_add_value (builder, json_node_copy (arguments));
          else
            {
              json_builder_begin_object (builder);
              json_builder_end_object (builder);
            }
          json_builder_end_object (builder);
        }
      if (json != NULL)
        {
          json_builder_begin_object (builder);
          json_builder_set_member_name (builder, "type");
          json_builder_add_string_value (builder, "tool_use");
          json_builder_set_member_name (builder, "id");
          json_builder_add_string_value (builder, "toolu_answer");
          json_builder_set_member_name (builder, "name");
          json_builder_add_string_value (builder, response_tool);
          json_builder_set_member_name (builder, "input");
          if (JSON_NODE_HOLDS_OBJECT (json))
            json_builder_add_value (builder, json_node_copy (json));
          else
            {
              json_builder_begin_object (builder);
              json_builder_set_member_name (builder, "value");
              json_builder_add_value (builder, json_node_copy (json));
              json_builder_end_object (builder);
            }
          json_builder_end_object (builder);
        }
    }
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "stop_reason");
  json_builder_add_string_value (builder, stop);
  json_builder_set_member_name (builder, "stop_sequence");
  json_builder_add_null_value (builder);

  if (usage == NULL || !JSON_NODE_HOLDS_VALUE (usage) || json_node_get_boolean (usage))
    {
      JsonObject *counts = object_of (usage);
      gint64 input = int_member (counts, "input", (body_len + 3) / 4);
      gint64 cached = int_member (counts, "cached", 0);

      json_builder_set_member_name (builder, "usage");
      json_builder_begin_object (builder);
      if (counts == NULL || json_object_has_member (counts, "input"))
        {
          json_builder_set_member_name (builder, "input_tokens");
          json_builder_add_int_value (builder, MAX (0, input - cached));
        }
      if (counts == NULL || json_object_has_member (counts, "output"))
        {
          json_builder_set_member_name (builder, "output_tokens");
          json_builder_add_int_value (builder, int_member (counts, "output", 7));
        }
      json_builder_set_member_name (builder, "cache_read_input_tokens");
      json_builder_add_int_value (builder, cached);
      json_builder_end_object (builder);
    }
  json_builder_end_object (builder);
  set_json (msg, SOUP_STATUS_OK, builder);
}

/* Takes the connection of @msg and writes a response head promising 4096
 * bytes of body, then only the start of it; NULL when there is none. */
static GIOStream *
write_partial_answer (SoupServerMessage *msg)
{
  g_autoptr(GIOStream) stream = soup_server_message_steal_connection (msg);
  const char partial[] =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: application/json\r\n"
    "Content-Length: 4096\r\n"
    "\r\n"
    "{\"id\":\"chatcmpl-cut\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assi";

  if (stream == NULL)
    return NULL;
  g_output_stream_write_all (g_io_stream_get_output_stream (stream), partial, strlen (partial),
                             NULL, NULL, NULL);
  g_output_stream_flush (g_io_stream_get_output_stream (stream), NULL, NULL);
  return g_steal_pointer (&stream);
}

/* The start of an answer, then the connection closes. */
static void
drop_connection (SoupServerMessage *msg)
{
  g_autoptr(GIOStream) stream = write_partial_answer (msg);

  if (stream != NULL)
    g_io_stream_close (stream, NULL, NULL);
}

static gboolean
stall_over_cb (gpointer user_data)
{
  Stalled *stalled = user_data;

  stalled->timeout_id = 0;
  g_ptr_array_remove (stalled->self->stalled, stalled);
  return G_SOURCE_REMOVE;
}

/* The start of an answer, then nothing for @stall_ms before the connection
 * closes. */
static void
stall (SightScriptedModel *self,
       SoupServerMessage  *msg,
       gint64              stall_ms)
{
  g_autoptr(GIOStream) stream = write_partial_answer (msg);
  Stalled *stalled;

  if (stream == NULL)
    return;
  stalled = g_new0 (Stalled, 1);
  stalled->self = self;
  stalled->stream = g_steal_pointer (&stream);
  stalled->timeout_id = g_timeout_add ((guint) CLAMP (stall_ms, 1, G_MAXINT), stall_over_cb,
                                       stalled);
  g_ptr_array_add (self->stalled, stalled);
}

/* An answer whose text runs on for @megabytes MiB: one static MiB of
 * letters, appended again and again. */
static void
flood (SoupServerMessage *msg,
       gint64             megabytes,
       gboolean           announce_length)
{
  static char letters[1024 * 1024];
  static const char head[] = "{\"id\":\"chatcmpl-flood\",\"choices\":[{\"index\":0,"
                             "\"message\":{\"role\":\"assistant\",\"content\":\"";
  static const char tail[] = "\"},\"finish_reason\":\"stop\"}]}";
  SoupMessageBody *body = soup_server_message_get_response_body (msg);

  if (letters[0] == '\0')
    memset (letters, 'a', sizeof letters);
  soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
  soup_message_headers_set_content_type (soup_server_message_get_response_headers (msg),
                                         "application/json", NULL);
  if (!announce_length)
    soup_message_headers_set_encoding (soup_server_message_get_response_headers (msg),
                                       SOUP_ENCODING_CHUNKED);
  soup_message_body_append (body, SOUP_MEMORY_STATIC, head, strlen (head));
  for (gint64 i = 0; i < megabytes; i++)
    soup_message_body_append (body, SOUP_MEMORY_STATIC, letters, sizeof letters);
  soup_message_body_append (body, SOUP_MEMORY_STATIC, tail, strlen (tail));
  soup_message_body_complete (body);
}

static void
answer (SightScriptedModel *self,
        SoupServerMessage  *msg,
        Format              format,
        JsonNode           *entry_node,
        JsonNode           *body,
        gsize               body_len)
{
  JsonObject *entry = object_of (entry_node);
  JsonObject *request = object_of (body);
  JsonObject *headers = object_of (json_object_get_member (entry, "headers"));
  const char *fault = string_member (entry, "fault");
  gint64 status = int_member (entry, "status", 0);
  SoupMessageHeaders *response_headers = soup_server_message_get_response_headers (msg);
  g_autofree char *request_id = g_strdup_printf ("req_scripted_%u", self->answered);

  soup_message_headers_replace (response_headers,
                                format == FORMAT_OPENAI ? "x-request-id" : "request-id",
                                request_id);
  if (headers != NULL)
    {
      JsonObjectIter iter;
      const char *name;
      JsonNode *value;

      json_object_iter_init (&iter, headers);
      while (json_object_iter_next (&iter, &name, &value))
        if (JSON_NODE_HOLDS_VALUE (value))
          {
            g_autofree char *text = json_node_get_value_type (value) == G_TYPE_STRING
                                    ? g_strdup (json_node_get_string (value))
                                    : g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (value));

            soup_message_headers_replace (response_headers, name, text);
          }
    }

  if (g_strcmp0 (fault, "drop") == 0)
    {
      drop_connection (msg);
      return;
    }
  if (g_strcmp0 (fault, "stall") == 0)
    {
      stall (self, msg, int_member (entry, "stall_ms", 120000));
      return;
    }
  if (g_strcmp0 (fault, "flood") == 0)
    {
      flood (msg, int_member (entry, "flood_mb", 64),
             g_strcmp0 (string_member (entry, "encoding"), "length") == 0);
      return;
    }
  if (g_strcmp0 (fault, "quota") == 0)
    {
      set_error (msg, format, 429, "insufficient_quota", "insufficient_quota",
                 "You exceeded your current quota, please check your plan and billing details.");
      return;
    }
  if (g_strcmp0 (fault, "overloaded") == 0)
    {
      set_error (msg, format, 529, "overloaded_error", NULL, "Overloaded");
      return;
    }
  if (g_strcmp0 (fault, "html") == 0)
    {
      const char *page = "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head>"
                         "<body><h1>Bad Gateway</h1><p>nginx</p></body></html>";

      soup_server_message_set_status (msg, status > 0 ? status : 502, NULL);
      soup_server_message_set_response (msg, "text/html", SOUP_MEMORY_STATIC, page, strlen (page));
      return;
    }
  if (g_strcmp0 (fault, "malformed") == 0)
    {
      const char *broken = "{\"id\": \"chatcmpl-broken\", \"choices\": [{\"message\": ";

      soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
      soup_server_message_set_response (msg, "application/json", SOUP_MEMORY_STATIC,
                                        broken, strlen (broken));
      return;
    }
  if (g_strcmp0 (fault, "error_in_200") == 0)
    {
      g_autoptr(JsonBuilder) builder = json_builder_new ();

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "error");
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "message");
      json_builder_add_string_value (builder, "Provider returned error");
      json_builder_set_member_name (builder, "code");
      json_builder_add_int_value (builder, status >= 400 ? status : 502);
      json_builder_end_object (builder);
      json_builder_end_object (builder);
      set_json (msg, SOUP_STATUS_OK, builder);
      return;
    }
  if (status >= 300)
    {
      JsonObject *error = object_of (json_object_get_member (entry, "error"));

      set_error (msg, format, status, string_member (error, "type"), string_member (error, "code"),
                 string_member (error, "message") ?: soup_status_get_phrase (status));
      return;
    }

  if (format == FORMAT_OPENAI)
    render_openai (self, msg, entry, request, body_len);
  else
    render_anthropic (self, msg, entry, request, body_len);
}

typedef struct
{
  SightScriptedModel *self;
  SoupServerMessage  *msg;
  Format              format;
  JsonNode           *entry;
  JsonNode           *body;
  gsize               body_len;
  gboolean            gone;
} Delayed;

static void
delayed_gone_cb (SoupServerMessage *msg,
                 Delayed           *delayed)
{
  delayed->gone = TRUE;
}

static gboolean
delayed_answer_cb (gpointer user_data)
{
  Delayed *delayed = user_data;

  if (!delayed->gone)
    {
      g_signal_handlers_disconnect_by_data (delayed->msg, delayed);
      answer (delayed->self, delayed->msg, delayed->format, delayed->entry, delayed->body,
              delayed->body_len);
      soup_server_message_unpause (delayed->msg);
    }
  else
    g_signal_handlers_disconnect_by_data (delayed->msg, delayed);
  g_object_unref (delayed->msg);
  g_object_unref (delayed->self);
  json_node_unref (delayed->entry);
  g_clear_pointer (&delayed->body, json_node_unref);
  g_free (delayed);
  return G_SOURCE_REMOVE;
}

static void
record_to_file (SightScriptedModel *self,
                Recorded           *recorded)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *line = NULL;
  g_autoptr(GFile) file = NULL;
  g_autoptr(GFileOutputStream) stream = NULL;

  if (self->record_path == NULL)
    return;
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "path");
  json_builder_add_string_value (builder, recorded->path);
  json_builder_set_member_name (builder, "headers");
  json_builder_begin_object (builder);
  for (guint i = 0; i < recorded->header_names->len; i++)
    {
      const char *name = g_ptr_array_index (recorded->header_names, i);
      gboolean secret = g_ascii_strcasecmp (name, "authorization") == 0
                        || g_ascii_strcasecmp (name, "x-api-key") == 0;

      json_builder_set_member_name (builder, name);
      json_builder_add_string_value (builder, secret ? "[redacted]"
                                                     : (char *) g_ptr_array_index (recorded->header_values, i));
    }
  json_builder_end_object (builder);
  json_builder_set_member_name (builder, "body");
  if (recorded->body != NULL)
    json_builder_add_value (builder, json_node_copy (recorded->body));
  else
    json_builder_add_string_value (builder, recorded->body_text);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  line = json_to_string (root, FALSE);

  file = g_file_new_for_path (self->record_path);
  stream = g_file_append_to (file, G_FILE_CREATE_NONE, NULL, NULL);
  if (stream == NULL)
    return;
  g_output_stream_write_all (G_OUTPUT_STREAM (stream), line, strlen (line), NULL, NULL, NULL);
  g_output_stream_write_all (G_OUTPUT_STREAM (stream), "\n", 1, NULL, NULL, NULL);
}

static void
handle_cb (SoupServer        *server,
           SoupServerMessage *msg,
           const char        *path,
           GHashTable        *query,
           gpointer           user_data)
{
  SightScriptedModel *self = user_data;
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (msg);
  SoupMessageBody *request_body = soup_server_message_get_request_body (msg);
  g_autoptr(GBytes) bytes = soup_message_body_flatten (request_body);
  g_autoptr(JsonNode) entry = NULL;
  SoupMessageHeadersIter iter;
  const char *name, *value;
  Recorded *recorded;
  Format format;
  gint64 delay;

  if (g_str_equal (path, "/v1/chat/completions"))
    format = FORMAT_OPENAI;
  else if (g_str_equal (path, "/v1/messages"))
    format = FORMAT_ANTHROPIC;
  else
    {
      soup_server_message_set_status (msg, SOUP_STATUS_NOT_FOUND, NULL);
      return;
    }
  if (soup_server_message_get_method (msg) != SOUP_METHOD_POST)
    {
      soup_server_message_set_status (msg, SOUP_STATUS_METHOD_NOT_ALLOWED, NULL);
      return;
    }

  recorded = g_new0 (Recorded, 1);
  recorded->path = g_strdup (path);
  recorded->header_names = g_ptr_array_new_with_free_func (g_free);
  recorded->header_values = g_ptr_array_new_with_free_func (g_free);
  soup_message_headers_iter_init (&iter, headers);
  while (soup_message_headers_iter_next (&iter, &name, &value))
    {
      g_ptr_array_add (recorded->header_names, g_strdup (name));
      g_ptr_array_add (recorded->header_values, g_strdup (value));
    }
  recorded->body_text = g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
  recorded->body = json_from_string (recorded->body_text, NULL);
  g_ptr_array_add (self->requests, recorded);
  record_to_file (self, recorded);

  if (self->api_key != NULL)
    {
      const char *given = format == FORMAT_OPENAI
                          ? soup_message_headers_get_one (headers, "Authorization")
                          : soup_message_headers_get_one (headers, "x-api-key");
      g_autofree char *expected = format == FORMAT_OPENAI ? g_strconcat ("Bearer ", self->api_key, NULL)
                                                          : g_strdup (self->api_key);

      if (g_strcmp0 (given, expected) != 0)
        {
          set_error (msg, format, 401, format == FORMAT_OPENAI ? "invalid_request_error"
                                                               : "authentication_error",
                     "invalid_api_key", "Incorrect API key provided.");
          return;
        }
    }

  entry = next_entry (self, format, recorded->body, recorded->body_text);
  if (entry == NULL)
    {
      self->unexpected++;
      set_error (msg, format, 500, "api_error", NULL, "scripted model: script exhausted");
      return;
    }
  self->answered++;

  delay = int_member (object_of (entry), "delay_ms", 0);
  if (delay > 0)
    {
      Delayed *delayed = g_new0 (Delayed, 1);

      delayed->self = g_object_ref (self);
      delayed->msg = g_object_ref (msg);
      delayed->format = format;
      delayed->entry = g_steal_pointer (&entry);
      delayed->body = recorded->body ? json_node_ref (recorded->body) : NULL;
      delayed->body_len = g_bytes_get_size (bytes);
      g_signal_connect (msg, "disconnected", G_CALLBACK (delayed_gone_cb), delayed);
      g_signal_connect (msg, "finished", G_CALLBACK (delayed_gone_cb), delayed);
      soup_server_message_pause (msg);
      g_timeout_add (delay, delayed_answer_cb, delayed);
      return;
    }
  answer (self, msg, format, entry, recorded->body, g_bytes_get_size (bytes));
}

SightScriptedModel *
sight_scripted_model_new (guint    port,
                          GError **error)
{
  g_autoptr(SightScriptedModel) self = g_object_new (SIGHT_TYPE_SCRIPTED_MODEL, NULL);
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new (loopback, port);
  GSList *uris;

  self->server = soup_server_new ("server-header", "sightline-scripted-model", NULL);
  soup_server_add_handler (self->server, "/v1", handle_cb, self, NULL);
  if (!soup_server_listen (self->server, address, 0, error))
    return NULL;
  uris = soup_server_get_uris (self->server);
  self->port = g_uri_get_port (uris->data);
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);
  self->openai_base_url = g_strdup_printf ("http://127.0.0.1:%u/v1", self->port);
  self->anthropic_base_url = g_strdup_printf ("http://127.0.0.1:%u", self->port);
  return g_steal_pointer (&self);
}

guint
sight_scripted_model_get_port (SightScriptedModel *self)
{
  return self->port;
}

const char *
sight_scripted_model_get_openai_base_url (SightScriptedModel *self)
{
  return self->openai_base_url;
}

const char *
sight_scripted_model_get_anthropic_base_url (SightScriptedModel *self)
{
  return self->anthropic_base_url;
}

static gboolean
load_root (SightScriptedModel *self,
           JsonNode           *root,
           GError            **error)
{
  JsonArray *list = NULL;
  JsonObject *object = NULL;
  JsonArray *rules = NULL;

  clear_script (self);
  if (JSON_NODE_HOLDS_ARRAY (root))
    list = json_node_get_array (root);
  else if (JSON_NODE_HOLDS_OBJECT (root))
    {
      object = json_node_get_object (root);
      list = array_member (object, "responses");
      rules = array_member (object, "rules");
      if (json_object_has_member (object, "default"))
        self->fallback = json_node_copy (json_object_get_member (object, "default"));
    }
  else
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           "a script is a JSON array of entries or an object with \"responses\"");
      return FALSE;
    }

  for (guint i = 0; list != NULL && i < json_array_get_length (list); i++)
    g_queue_push_tail (&self->responses, json_node_copy (json_array_get_element (list, i)));
  for (guint i = 0; rules != NULL && i < json_array_get_length (rules); i++)
    {
      JsonObject *rule_object = object_of (json_array_get_element (rules, i));
      Rule *rule;

      if (rule_object == NULL || !json_object_has_member (rule_object, "response"))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       "rule %u needs a \"response\"", i);
          return FALSE;
        }
      rule = g_new0 (Rule, 1);
      rule->match = g_strdup (string_member (rule_object, "match"));
      rule->match_body = g_strdup (string_member (rule_object, "match_body"));
      rule->format = g_strdup (string_member (rule_object, "format"));
      rule->response = json_node_copy (json_object_get_member (rule_object, "response"));
      rule->times = (int) int_member (rule_object, "times", -1);
      g_ptr_array_add (self->rules, rule);
    }
  return TRUE;
}

gboolean
sight_scripted_model_load_script (SightScriptedModel *self,
                                  const char         *json,
                                  GError            **error)
{
  g_autoptr(JsonNode) root = json_from_string (json, error);

  if (root == NULL)
    {
      if (error != NULL && *error == NULL)
        g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "the script is empty");
      return FALSE;
    }
  return load_root (self, root, error);
}

gboolean
sight_scripted_model_load_script_file (SightScriptedModel *self,
                                       const char         *path,
                                       GError            **error)
{
  g_autofree char *contents = NULL;

  if (!g_file_get_contents (path, &contents, NULL, error))
    return FALSE;
  return sight_scripted_model_load_script (self, contents, error);
}

void
sight_scripted_model_push (SightScriptedModel *self,
                           const char         *entry_json)
{
  g_autoptr(GError) error = NULL;
  JsonNode *entry = json_from_string (entry_json, &error);

  if (entry == NULL)
    g_error ("invalid scripted entry %s: %s", entry_json, error ? error->message : "empty");
  g_queue_push_tail (&self->responses, entry);
}

void
sight_scripted_model_push_printf (SightScriptedModel *self,
                                  const char         *format,
                                  ...)
{
  g_autofree char *text = NULL;
  va_list args;

  va_start (args, format);
  text = g_strdup_vprintf (format, args);
  va_end (args);
  sight_scripted_model_push (self, text);
}

void
sight_scripted_model_set_api_key (SightScriptedModel *self,
                                  const char         *api_key)
{
  g_free (self->api_key);
  self->api_key = g_strdup (api_key);
}

guint
sight_scripted_model_get_remaining (SightScriptedModel *self)
{
  return g_queue_get_length (&self->responses);
}

guint
sight_scripted_model_get_unexpected (SightScriptedModel *self)
{
  return self->unexpected;
}

guint
sight_scripted_model_get_request_count (SightScriptedModel *self)
{
  return self->requests->len;
}

static Recorded *
get_recorded (SightScriptedModel *self,
              guint               index)
{
  g_return_val_if_fail (index < self->requests->len, NULL);
  return g_ptr_array_index (self->requests, index);
}

const char *
sight_scripted_model_get_request_path (SightScriptedModel *self,
                                       guint               index)
{
  Recorded *recorded = get_recorded (self, index);

  return recorded ? recorded->path : NULL;
}

const char *
sight_scripted_model_get_request_header (SightScriptedModel *self,
                                         guint               index,
                                         const char         *name)
{
  Recorded *recorded = get_recorded (self, index);

  for (guint i = 0; recorded != NULL && i < recorded->header_names->len; i++)
    if (g_ascii_strcasecmp (g_ptr_array_index (recorded->header_names, i), name) == 0)
      return g_ptr_array_index (recorded->header_values, i);
  return NULL;
}

char *
sight_scripted_model_dup_request_headers (SightScriptedModel *self,
                                          guint               index)
{
  Recorded *recorded = get_recorded (self, index);
  GString *out = g_string_new (NULL);

  for (guint i = 0; recorded != NULL && i < recorded->header_names->len; i++)
    g_string_append_printf (out, "%s: %s\n", (char *) g_ptr_array_index (recorded->header_names, i),
                            (char *) g_ptr_array_index (recorded->header_values, i));
  return g_string_free (out, FALSE);
}

const char *
sight_scripted_model_get_request_body_text (SightScriptedModel *self,
                                            guint               index)
{
  Recorded *recorded = get_recorded (self, index);

  return recorded ? recorded->body_text : NULL;
}

JsonNode *
sight_scripted_model_get_request_body (SightScriptedModel *self,
                                       guint               index)
{
  Recorded *recorded = get_recorded (self, index);

  return recorded ? recorded->body : NULL;
}

static gboolean
json_contains (JsonNode   *node,
               const char *needle)
{
  if (node == NULL)
    return FALSE;
  if (JSON_NODE_HOLDS_VALUE (node))
    return json_node_get_value_type (node) == G_TYPE_STRING
           && strstr (json_node_get_string (node), needle) != NULL;
  if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *array = json_node_get_array (node);

      for (guint i = 0; i < json_array_get_length (array); i++)
        if (json_contains (json_array_get_element (array, i), needle))
          return TRUE;
    }
  else if (JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonObjectIter iter;
      const char *name;
      JsonNode *member;

      json_object_iter_init (&iter, json_node_get_object (node));
      while (json_object_iter_next (&iter, &name, &member))
        if (strstr (name, needle) != NULL || json_contains (member, needle))
          return TRUE;
    }
  return FALSE;
}

guint
sight_scripted_model_count_requests_containing (SightScriptedModel *self,
                                                const char         *needle)
{
  guint count = 0;

  g_return_val_if_fail (needle != NULL && *needle != '\0', 0);

  for (guint i = 0; i < self->requests->len; i++)
    {
      Recorded *recorded = g_ptr_array_index (self->requests, i);
      gboolean found = strstr (recorded->body_text, needle) != NULL
                       || json_contains (recorded->body, needle);

      for (guint h = 0; !found && h < recorded->header_values->len; h++)
        found = strstr (g_ptr_array_index (recorded->header_values, h), needle) != NULL;
      if (found)
        count++;
    }
  return count;
}

void
sight_scripted_model_clear_requests (SightScriptedModel *self)
{
  g_ptr_array_set_size (self->requests, 0);
}

void
sight_scripted_model_set_record_file (SightScriptedModel *self,
                                      const char         *path)
{
  g_free (self->record_path);
  self->record_path = g_strdup (path);
}
