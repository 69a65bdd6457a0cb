/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Both providers against the scripted model server over loopback HTTP:
 * answers, tool calls, images, structured output, every fault of the
 * retry policy, deadlines, usage accounting, and no secret in any log. */
#include "config.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>

#include "sight-anthropic-provider.h"
#include "sight-error.h"
#include "sight-model-config.h"
#include "sight-openai-provider.h"
#include "sight-scripted-model.h"

#define API_KEY "sk-test-SECRET-4f1c9a7e2b"

typedef enum { OPENAI, ANTHROPIC } Kind;

static GString *captured_log;

typedef struct
{
  Kind                kind;
  SightScriptedModel *server;
  SightModelProvider *provider;
} Fixture;

static GLogWriterOutput
capture_writer (GLogLevelFlags   level,
                const GLogField *fields,
                gsize            n_fields,
                gpointer         user_data)
{
  g_autofree char *line = g_log_writer_format_fields (level, fields, n_fields, FALSE);

  g_string_append (captured_log, line);
  g_string_append_c (captured_log, '\n');
  if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING))
    return g_log_writer_default (level, fields, n_fields, user_data);
  return G_LOG_WRITER_HANDLED;
}

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  fixture->kind = GPOINTER_TO_INT (data);
  fixture->server = sight_scripted_model_new (0, &error);
  g_assert_no_error (error);
  if (fixture->kind == OPENAI)
    fixture->provider = sight_openai_provider_new ("gpt-4.1-mini",
                                                   sight_scripted_model_get_openai_base_url (fixture->server),
                                                   API_KEY);
  else
    fixture->provider = sight_anthropic_provider_new ("claude-sonnet-4",
                                                      sight_scripted_model_get_anthropic_base_url (fixture->server),
                                                      API_KEY);
  /* The real schedule is tested as numbers in test-model-policy; here
   * waits are milliseconds. */
  sight_model_provider_set_backoff (fixture->provider, 2 * G_TIME_SPAN_MILLISECOND,
                                    32 * G_TIME_SPAN_MILLISECOND);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  g_clear_object (&fixture->provider);
  g_clear_object (&fixture->server);
}

static void
store_result_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

static SightModelResponse *
complete (SightModelProvider *provider,
          SightModelRequest  *request,
          gint64              deadline_us,
          GCancellable       *cancellable,
          GError            **error)
{
  GAsyncResult *result = NULL;
  SightModelResponse *response;

  sight_model_provider_complete_async (provider, request, deadline_us, cancellable,
                                       store_result_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  response = sight_model_provider_complete_finish (provider, result, error);
  g_object_unref (result);
  return response;
}

static gint64
in_seconds (double seconds)
{
  return g_get_monotonic_time () + (gint64) (seconds * G_USEC_PER_SEC);
}

static SightModelRequest *
simple_request (const char *text)
{
  SightModelRequest *request = sight_model_request_new ();

  sight_model_request_set_system (request, "You test web pages.");
  sight_model_request_add_message (request, SIGHT_MODEL_ROLE_USER, text);
  return request;
}

static JsonObject *
body_of (Fixture *fixture,
         guint    index)
{
  JsonNode *body = sight_scripted_model_get_request_body (fixture->server, index);

  g_assert_nonnull (body);
  return json_node_get_object (body);
}

static JsonObject *
last_message (Fixture *fixture,
              guint    index,
              guint    from_end)
{
  JsonArray *messages = json_object_get_array_member (body_of (fixture, index), "messages");

  return json_array_get_object_element (messages, json_array_get_length (messages) - 1 - from_end);
}

static void
test_plain_answer (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autoptr(SightModelRequest) request = simple_request ("Is the page a login form?");
  g_autoptr(SightModelResponse) response = NULL;
  g_autoptr(GError) error = NULL;
  JsonObject *body;

  sight_scripted_model_push (fixture->server, "{\"text\": \"Yes, it is a login form.\"}");
  response = complete (fixture->provider, request, in_seconds (10), NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (response->text, ==, "Yes, it is a login form.");
  g_assert_cmpuint (response->tool_calls->len, ==, 0);
  g_assert_cmpint (response->finish_reason, ==, SIGHT_MODEL_FINISH_STOP);
  g_assert_cmpuint (response->attempts, ==, 1);
  g_assert_nonnull (response->request_id);
  g_assert_true (g_str_has_prefix (response->request_id,
                                   fixture->kind == OPENAI ? "chatcmpl-scripted-" : "msg_scripted_"));

  g_assert_cmpuint (sight_scripted_model_get_request_count (fixture->server), ==, 1);
  body = body_of (fixture, 0);
  if (fixture->kind == OPENAI)
    {
      JsonArray *messages = json_object_get_array_member (body, "messages");

      g_assert_cmpstr (sight_scripted_model_get_request_path (fixture->server, 0), ==, "/v1/chat/completions");
      g_assert_cmpstr (sight_scripted_model_get_request_header (fixture->server, 0, "Authorization"), ==,
                       "Bearer " API_KEY);
      g_assert_cmpstr (json_object_get_string_member (body, "model"), ==, "gpt-4.1-mini");
      g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (messages, 0), "role"), ==, "system");
      g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (messages, 1), "content"), ==,
                       "Is the page a login form?");
    }
  else
    {
      JsonArray *content;

      g_assert_cmpstr (sight_scripted_model_get_request_path (fixture->server, 0), ==, "/v1/messages");
      g_assert_cmpstr (sight_scripted_model_get_request_header (fixture->server, 0, "x-api-key"), ==, API_KEY);
      g_assert_cmpstr (sight_scripted_model_get_request_header (fixture->server, 0, "anthropic-version"), ==,
                       "2023-06-01");
      g_assert_null (sight_scripted_model_get_request_header (fixture->server, 0, "Authorization"));
      g_assert_cmpstr (json_object_get_string_member (body, "system"), ==, "You test web pages.");
      g_assert_cmpint (json_object_get_int_member (body, "max_tokens"), ==, 4096);
      content = json_object_get_array_member (last_message (fixture, 0, 0), "content");
      g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 0), "text"), ==,
                       "Is the page a login form?");
    }
}

static void
test_tool_call_conversation (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autoptr(SightModelRequest) request = simple_request ("Sign in");
  g_autoptr(SightModelResponse) first = NULL;
  g_autoptr(SightModelResponse) second = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) params = json_from_string ("{\"type\":\"object\",\"properties\":{\"ref\":{\"type\":\"string\"}},"
                                                 "\"required\":[\"ref\"]}", NULL);
  g_autoptr(GBytes) png = g_bytes_new_static ("\x89PNG\r\n\x1a\nscreen", 14);
  SightModelToolCall *call;
  SightModelMessage *result;
  JsonObject *body;

  sight_model_request_add_tool (request, "click", "Click the element with this ref", params);
  sight_model_request_set_tool_choice (request, SIGHT_MODEL_TOOL_CHOICE_REQUIRED);
  sight_scripted_model_push (fixture->server,
                             "{\"tool_calls\": [{\"name\": \"click\", \"arguments\": {\"ref\": \"e12\"}},"
                             "                  {\"name\": \"click\", \"arguments\": {\"ref\": \"e13\"}}]}");
  sight_scripted_model_push (fixture->server, "{\"text\": \"Signed in.\"}");

  first = complete (fixture->provider, request, in_seconds (10), NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (first->finish_reason, ==, SIGHT_MODEL_FINISH_TOOL_CALLS);
  g_assert_cmpuint (first->tool_calls->len, ==, 2);
  call = g_ptr_array_index (first->tool_calls, 0);
  g_assert_cmpstr (call->name, ==, "click");
  g_assert_true (JSON_NODE_HOLDS_OBJECT (call->arguments));
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (call->arguments), "ref"), ==, "e12");
  g_assert_nonnull (call->id);
  g_assert_cmpstr (call->id, !=, "");

  body = body_of (fixture, 0);
  if (fixture->kind == OPENAI)
    {
      JsonObject *tool = json_array_get_object_element (json_object_get_array_member (body, "tools"), 0);

      g_assert_cmpstr (json_object_get_string_member (tool, "type"), ==, "function");
      g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (tool, "function"), "name"), ==, "click");
      g_assert_true (json_object_has_member (json_object_get_object_member (tool, "function"), "parameters"));
      g_assert_cmpstr (json_object_get_string_member (body, "tool_choice"), ==, "required");
    }
  else
    {
      JsonObject *tool = json_array_get_object_element (json_object_get_array_member (body, "tools"), 0);

      g_assert_cmpstr (json_object_get_string_member (tool, "name"), ==, "click");
      g_assert_true (json_object_has_member (tool, "input_schema"));
      g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (body, "tool_choice"), "type"), ==, "any");
    }

  /* The next turn carries the assistant's calls and both results, one with
   * a screenshot. */
  sight_model_request_add_response (request, first);
  sight_model_request_add_tool_result (request, call->id, "clicked e12", FALSE);
  result = sight_model_request_add_tool_result (request,
                                                ((SightModelToolCall *) g_ptr_array_index (first->tool_calls, 1))->id,
                                                "e13 is disabled", TRUE);
  sight_model_message_add_image (result, "image/png", png);
  second = complete (fixture->provider, request, in_seconds (10), NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (second->text, ==, "Signed in.");

  if (fixture->kind == OPENAI)
    {
      JsonObject *assistant = last_message (fixture, 1, 3);
      JsonObject *tool = last_message (fixture, 1, 2);
      JsonObject *images = last_message (fixture, 1, 0);
      JsonObject *fn;

      g_assert_cmpstr (json_object_get_string_member (assistant, "role"), ==, "assistant");
      fn = json_object_get_object_member (json_array_get_object_element (json_object_get_array_member (assistant, "tool_calls"), 0),
                                          "function");
      g_assert_cmpstr (json_object_get_string_member (fn, "arguments"), ==, "{\"ref\":\"e12\"}");
      g_assert_cmpstr (json_object_get_string_member (tool, "role"), ==, "tool");
      g_assert_cmpstr (json_object_get_string_member (tool, "tool_call_id"), ==, call->id);
      g_assert_cmpstr (json_object_get_string_member (tool, "content"), ==, "clicked e12");
      g_assert_cmpstr (json_object_get_string_member (images, "role"), ==, "user");
    }
  else
    {
      JsonObject *assistant = last_message (fixture, 1, 1);
      JsonObject *user = last_message (fixture, 1, 0);
      JsonArray *blocks = json_object_get_array_member (user, "content");
      JsonObject *use = json_array_get_object_element (json_object_get_array_member (assistant, "content"), 0);
      JsonObject *second_result = json_array_get_object_element (blocks, 1);

      g_assert_cmpstr (json_object_get_string_member (use, "type"), ==, "tool_use");
      g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (use, "input"), "ref"), ==, "e12");
      g_assert_cmpuint (json_array_get_length (blocks), ==, 2);
      g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (blocks, 0), "tool_use_id"), ==, call->id);
      g_assert_true (json_object_get_boolean_member (second_result, "is_error"));
      g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (json_object_get_array_member (second_result, "content"), 1),
                                                      "type"), ==, "image");
    }
}

static GBytes *
decode_image (Fixture    *fixture,
              JsonObject *part)
{
  gsize len = 0;
  guchar *data;

  if (fixture->kind == OPENAI)
    {
      const char *url = json_object_get_string_member (json_object_get_object_member (part, "image_url"), "url");

      g_assert_true (g_str_has_prefix (url, "data:image/jpeg;base64,"));
      data = g_base64_decode (url + strlen ("data:image/jpeg;base64,"), &len);
    }
  else
    {
      JsonObject *source = json_object_get_object_member (part, "source");

      g_assert_cmpstr (json_object_get_string_member (source, "type"), ==, "base64");
      g_assert_cmpstr (json_object_get_string_member (source, "media_type"), ==, "image/jpeg");
      data = g_base64_decode (json_object_get_string_member (source, "data"), &len);
    }
  return g_bytes_new_take (data, len);
}

static void
test_image_request (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(SightModelRequest) request = sight_model_request_new ();
  g_autoptr(SightModelResponse) response = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) image = NULL;
  g_autoptr(GBytes) arrived = NULL;
  SightModelMessage *message;
  JsonArray *parts;
  guint8 pixels[4096];

  for (guint i = 0; i < sizeof pixels; i++)
    pixels[i] = (guint8) g_random_int ();
  image = g_bytes_new (pixels, sizeof pixels);
  message = sight_model_request_add_message (request, SIGHT_MODEL_ROLE_USER, "Is the form covered?");
  sight_model_message_add_image (message, "image/jpeg", image);
  sight_scripted_model_push (fixture->server, "{\"text\": \"No.\"}");

  response = complete (fixture->provider, request, in_seconds (10), NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (response->text, ==, "No.");

  parts = json_object_get_array_member (last_message (fixture, 0, 0), "content");
  g_assert_cmpuint (json_array_get_length (parts), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (parts, 0), "text"), ==,
                   "Is the form covered?");
  arrived = decode_image (fixture, json_array_get_object_element (parts, 1));
  g_assert_true (g_bytes_equal (arrived, image));
}

static void
test_json_schema_output (Fixture       *fixture,
                         gconstpointer  data)
{
  g_autoptr(SightModelRequest) request = simple_request ("the workspace name and plan");
  g_autoptr(SightModelRequest) list_request = simple_request ("the prices");
  g_autoptr(SightModelResponse) response = NULL;
  g_autoptr(SightModelResponse) list_response = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) schema = json_from_string ("{\"type\":\"object\",\"required\":[\"name\",\"plan\"],"
                                                 "\"properties\":{\"name\":{\"type\":\"string\"},"
                                                 "\"plan\":{\"type\":\"string\"}}}", NULL);
  g_autoptr(JsonNode) list_schema = json_from_string ("{\"type\":\"array\",\"items\":{\"type\":\"number\"}}", NULL);
  g_autoptr(JsonNode) answer = NULL;
  g_autoptr(JsonNode) list = NULL;
  JsonObject *body;

  sight_model_request_set_response_schema (request, "workspace", schema);
  sight_model_request_set_response_schema (list_request, "prices", list_schema);
  sight_scripted_model_push (fixture->server, "{\"json\": {\"name\": \"Acme\", \"plan\": \"Trial\"}}");
  sight_scripted_model_push (fixture->server, "{\"json\": [9.5, 12]}");

  response = complete (fixture->provider, request, in_seconds (10), NULL, &error);
  g_assert_no_error (error);
  answer = sight_model_response_parse_json (response);
  g_assert_nonnull (answer);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (answer), "plan"), ==, "Trial");
  g_assert_cmpint (response->finish_reason, ==, SIGHT_MODEL_FINISH_STOP);
  g_assert_cmpuint (response->tool_calls->len, ==, 0);

  body = body_of (fixture, 0);
  if (fixture->kind == OPENAI)
    {
      JsonObject *format = json_object_get_object_member (body, "response_format");
      JsonObject *json_schema = json_object_get_object_member (format, "json_schema");

      g_assert_cmpstr (json_object_get_string_member (format, "type"), ==, "json_schema");
      g_assert_cmpstr (json_object_get_string_member (json_schema, "name"), ==, "workspace");
      g_assert_true (json_node_equal (json_object_get_member (json_schema, "schema"), schema));
    }
  else
    {
      JsonObject *choice = json_object_get_object_member (body, "tool_choice");
      JsonObject *tool = json_array_get_object_element (json_object_get_array_member (body, "tools"), 0);

      g_assert_cmpstr (json_object_get_string_member (choice, "type"), ==, "tool");
      g_assert_cmpstr (json_object_get_string_member (choice, "name"), ==, "workspace");
      g_assert_true (json_node_equal (json_object_get_member (tool, "input_schema"), schema));
    }

  list_response = complete (fixture->provider, list_request, in_seconds (10), NULL, &error);
  g_assert_no_error (error);
  list = sight_model_response_parse_json (list_response);
  g_assert_nonnull (list);
  g_assert_true (JSON_NODE_HOLDS_ARRAY (list));
  g_assert_cmpuint (json_array_get_length (json_node_get_array (list)), ==, 2);
}

/* Faults */

typedef struct
{
  const char     *name;
  const char     *script;          /* a JSON array */
  guint           requests;        /* expected HTTP attempts */
  gboolean        succeeds;
  SightErrorCode  code;
  const char     *message_part;    /* in the error message, or NULL */
} FaultCase;

static const FaultCase fault_cases[] = {
  { "429-then-answer", "[{\"status\":429,\"error\":{\"type\":\"rate_limit_error\",\"code\":\"rate_limit_exceeded\"},"
                       "\"headers\":{\"retry-after-ms\":\"5\"}}, {\"text\":\"ok\"}]", 2, TRUE, 0, NULL },
  { "429-three-times", "[{\"status\":429},{\"status\":429},{\"status\":429},{\"text\":\"unused\"}]",
                       3, FALSE, SIGHT_ERROR_MODEL_UNAVAILABLE, "after 3 attempts" },
  { "408-409-then-answer", "[{\"status\":408},{\"status\":409},{\"text\":\"ok\"}]", 3, TRUE, 0, NULL },
  { "500-three-times", "[{\"status\":500},{\"status\":500},{\"status\":500}]", 3, FALSE,
                       SIGHT_ERROR_MODEL_UNAVAILABLE, "HTTP 500" },
  { "503-then-answer", "[{\"status\":503},{\"text\":\"ok\"}]", 2, TRUE, 0, NULL },
  { "529-overloaded", "[{\"fault\":\"overloaded\"},{\"fault\":\"overloaded\"},{\"fault\":\"overloaded\"}]", 3, FALSE,
                      SIGHT_ERROR_MODEL_UNAVAILABLE, "HTTP 529" },
  { "quota-429-not-retried", "[{\"fault\":\"quota\"},{\"text\":\"unused\"}]", 1, FALSE,
                             SIGHT_ERROR_MODEL_UNAVAILABLE, "quota" },
  { "400-not-retried", "[{\"status\":400,\"error\":{\"type\":\"invalid_request_error\",\"message\":\"bad\"}},{\"text\":\"x\"}]",
                       1, FALSE, SIGHT_ERROR_MODEL_UNAVAILABLE, "HTTP 400" },
  { "401-not-retried", "[{\"status\":401},{\"text\":\"x\"}]", 1, FALSE, SIGHT_ERROR_MODEL_UNAVAILABLE, "_API_KEY" },
  { "403-not-retried", "[{\"status\":403},{\"text\":\"x\"}]", 1, FALSE, SIGHT_ERROR_MODEL_UNAVAILABLE, "_API_KEY" },
  { "404-not-retried", "[{\"status\":404},{\"text\":\"x\"}]", 1, FALSE, SIGHT_ERROR_MODEL_UNAVAILABLE, "HTTP 404" },
  { "413-not-retried", "[{\"status\":413},{\"text\":\"x\"}]", 1, FALSE, SIGHT_ERROR_MODEL_UNAVAILABLE, "HTTP 413" },
  { "should-retry-false", "[{\"status\":500,\"headers\":{\"x-should-retry\":\"false\"}},{\"text\":\"x\"}]",
                          1, FALSE, SIGHT_ERROR_MODEL_UNAVAILABLE, "HTTP 500" },
  { "html-502-retried", "[{\"fault\":\"html\"},{\"fault\":\"html\"},{\"fault\":\"html\"}]", 3, FALSE,
                        SIGHT_ERROR_MODEL_UNAVAILABLE, "HTML error page" },
  { "html-200", "[{\"fault\":\"html\",\"status\":200},{\"text\":\"x\"}]", 1, FALSE,
                SIGHT_ERROR_MODEL_OUTPUT_INVALID, "HTML" },
  { "error-in-200-retried", "[{\"fault\":\"error_in_200\",\"status\":503},{\"text\":\"ok\"}]", 2, TRUE, 0, NULL },
  { "error-in-200-final", "[{\"fault\":\"error_in_200\",\"status\":400},{\"text\":\"x\"}]", 1, FALSE,
                          SIGHT_ERROR_MODEL_UNAVAILABLE, "HTTP 400" },
  { "malformed-json", "[{\"fault\":\"malformed\"},{\"text\":\"x\"}]", 1, FALSE,
                      SIGHT_ERROR_MODEL_OUTPUT_INVALID, "not JSON" },
  { "drop-then-answer", "[{\"fault\":\"drop\"},{\"text\":\"ok\"}]", 2, TRUE, 0, NULL },
  { "drop-three-times", "[{\"fault\":\"drop\"},{\"fault\":\"drop\"},{\"fault\":\"drop\"}]", 3, FALSE,
                        SIGHT_ERROR_MODEL_UNAVAILABLE, "could not reach" },
  { "empty-choices", "[{\"fault\":\"empty_choices\",\"text\":\"x\"},{\"text\":\"x\"}]", 1, FALSE,
                     SIGHT_ERROR_MODEL_OUTPUT_INVALID, NULL },
  { "truncated-arguments", "[{\"fault\":\"truncated_arguments\",\"tool_calls\":[{\"name\":\"fill\","
                           "\"arguments\":{\"ref\":\"e4\",\"text\":\"hello world\"}}]},{\"text\":\"x\"}]", 1, FALSE,
                           SIGHT_ERROR_MODEL_OUTPUT_INVALID, "no tool call was taken" },
  { "finish-length", "[{\"fault\":\"length\",\"text\":\"The answer is cut\"},{\"text\":\"x\"}]", 1, FALSE,
                     SIGHT_ERROR_MODEL_OUTPUT_INVALID, "output token limit" },
  /* 64 MiB of answer: read up to the 32 MiB limit, or refused on its
   * Content-Length; not retried. */
  { "flood-chunked", "[{\"fault\":\"flood\"},{\"text\":\"x\"}]", 1, FALSE,
                     SIGHT_ERROR_MODEL_OUTPUT_INVALID, "over the 32 MiB" },
  { "flood-announced", "[{\"fault\":\"flood\",\"encoding\":\"length\"},{\"text\":\"x\"}]", 1, FALSE,
                       SIGHT_ERROR_MODEL_OUTPUT_INVALID, "bytes announced" },
};

static void
test_fault (Fixture       *fixture,
            gconstpointer  data)
{
  Kind kinds[] = { OPENAI, ANTHROPIC };

  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    for (guint i = 0; i < G_N_ELEMENTS (fault_cases); i++)
      {
        const FaultCase *fault = &fault_cases[i];
        Fixture each = { 0 };
        g_autoptr(SightModelRequest) request = simple_request ("go");
        g_autoptr(SightModelResponse) response = NULL;
        g_autoptr(GError) error = NULL;

        fixture_set_up (&each, GINT_TO_POINTER (kinds[k]));
        g_test_message ("%s: %s", kinds[k] == OPENAI ? "openai" : "anthropic", fault->name);
        g_assert_true (sight_scripted_model_load_script (each.server, fault->script, NULL));
        response = complete (each.provider, request, in_seconds (20), NULL, &error);
        g_assert_cmpuint (sight_scripted_model_get_request_count (each.server), ==, fault->requests);
        if (fault->succeeds)
          {
            g_assert_no_error (error);
            g_assert_cmpstr (response->text, ==, "ok");
            g_assert_cmpuint (response->attempts, ==, fault->requests);
          }
        else
          {
            g_assert_null (response);
            g_assert_error (error, SIGHT_ERROR, (int) fault->code);
            if (fault->message_part != NULL && strstr (error->message, fault->message_part) == NULL)
              g_error ("%s: \"%s\" lacks \"%s\"", fault->name, error->message, fault->message_part);
            g_assert_null (strstr (error->message, API_KEY));
            g_assert_null (strchr (error->message, '\n'));
          }
        fixture_tear_down (&each, NULL);
      }
}

/* An answer under the limit is read whole, however many chunks it comes in. */
static void
test_large_answer (void)
{
  Fixture fixture = { 0 };
  g_autoptr(SightModelRequest) request = simple_request ("go");
  g_autoptr(SightModelResponse) response = NULL;
  g_autoptr(GError) error = NULL;

  fixture_set_up (&fixture, GINT_TO_POINTER (OPENAI));
  sight_scripted_model_push (fixture.server, "{\"fault\": \"flood\", \"flood_mb\": 20}");
  response = complete (fixture.provider, request, in_seconds (60), NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (strlen (response->text), ==, 20 * 1024 * 1024);
  g_assert_true (response->text[0] == 'a' && response->text[20 * 1024 * 1024 - 1] == 'a');
  fixture_tear_down (&fixture, NULL);
}

static void
test_retry_after_honoured (Fixture       *fixture,
                           gconstpointer  data)
{
  g_autoptr(SightModelRequest) request = simple_request ("go");
  g_autoptr(SightModelResponse) response = NULL;
  g_autoptr(GError) error = NULL;
  gint64 start;

  /* retry-after in seconds is honoured over the (here 2 ms) backoff … */
  sight_scripted_model_push (fixture->server, "{\"status\": 429, \"headers\": {\"retry-after\": \"1\"}}");
  sight_scripted_model_push (fixture->server, "{\"text\": \"ok\"}");
  start = g_get_monotonic_time ();
  response = complete (fixture->provider, request, in_seconds (10), NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_get_monotonic_time () - start, >=, 950 * G_TIME_SPAN_MILLISECOND);
  g_clear_pointer (&response, sight_model_response_unref);

  /* … and a wait longer than the call has left ends it at once, saying so
   * (the SDKs retry on their own schedule past 60 s, into another 429). */
  sight_scripted_model_push (fixture->server, "{\"status\": 503, \"headers\": {\"retry-after\": \"120\"}}");
  sight_scripted_model_push (fixture->server, "{\"text\": \"ok\"}");
  start = g_get_monotonic_time ();
  response = complete (fixture->provider, request, in_seconds (10), NULL, &error);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "asks to wait 120 s"));
  g_assert_cmpint (g_get_monotonic_time () - start, <, 500 * G_TIME_SPAN_MILLISECOND);
  g_assert_null (response);
  g_clear_error (&error);
  response = complete (fixture->provider, request, in_seconds (10), NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (response->attempts, ==, 1);
}

static void
test_deadline_cuts_slow_response (Fixture       *fixture,
                                  gconstpointer  data)
{
  g_autoptr(SightModelRequest) request = simple_request ("go");
  g_autoptr(SightModelResponse) response = NULL;
  g_autoptr(GError) error = NULL;
  gint64 start;

  sight_scripted_model_push (fixture->server, "{\"text\": \"too late\", \"delay_ms\": 5000}");
  start = g_get_monotonic_time ();
  response = complete (fixture->provider, request, in_seconds (0.3), NULL, &error);
  g_assert_null (response);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_STEP_TIMEOUT);
  g_assert_cmpint (g_get_monotonic_time () - start, >=, 250 * G_TIME_SPAN_MILLISECOND);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 1500 * G_TIME_SPAN_MILLISECOND);
  g_assert_cmpuint (sight_scripted_model_get_request_count (fixture->server), ==, 1);
  g_clear_error (&error);

  /* A retry-after past the deadline ends the call now with the real cause
   * instead of sleeping into a timeout. */
  sight_scripted_model_push (fixture->server, "{\"status\": 429, \"headers\": {\"retry-after-ms\": \"5000\"}}");
  sight_scripted_model_push (fixture->server, "{\"text\": \"unused\"}");
  start = g_get_monotonic_time ();
  response = complete (fixture->provider, request, in_seconds (1), NULL, &error);
  g_assert_null (response);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "deadline"));
  g_assert_cmpint (g_get_monotonic_time () - start, <, 500 * G_TIME_SPAN_MILLISECOND);
  g_assert_cmpuint (sight_scripted_model_get_request_count (fixture->server), ==, 2);
  g_clear_error (&error);

  /* A deadline already past sends nothing. */
  response = complete (fixture->provider, request, g_get_monotonic_time () - 1, NULL, &error);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_STEP_TIMEOUT);
  g_assert_cmpuint (sight_scripted_model_get_request_count (fixture->server), ==, 2);
}

static gboolean
cancel_cb (gpointer user_data)
{
  g_cancellable_cancel (user_data);
  return G_SOURCE_REMOVE;
}

static void
test_cancel (Fixture       *fixture,
             gconstpointer  data)
{
  g_autoptr(SightModelRequest) request = simple_request ("go");
  g_autoptr(SightModelResponse) response = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GCancellable) cancellable2 = g_cancellable_new ();
  g_autoptr(GError) error = NULL;
  gint64 start = g_get_monotonic_time ();

  sight_scripted_model_push (fixture->server, "{\"text\": \"slow\", \"delay_ms\": 3000}");
  g_timeout_add (100, cancel_cb, cancellable);
  response = complete (fixture->provider, request, in_seconds (10), cancellable, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 1500 * G_TIME_SPAN_MILLISECOND);
  g_clear_error (&error);

  /* Cancelled during the backoff wait. */
  sight_model_provider_set_backoff (fixture->provider, 2 * G_USEC_PER_SEC, 8 * G_USEC_PER_SEC);
  sight_scripted_model_push (fixture->server, "{\"status\": 500}");
  g_timeout_add (200, cancel_cb, cancellable2);
  start = g_get_monotonic_time ();
  response = complete (fixture->provider, request, in_seconds (10), cancellable2, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 1000 * G_TIME_SPAN_MILLISECOND);
}

static void
test_usage_provider_counts (Fixture       *fixture,
                            gconstpointer  data)
{
  g_autoptr(SightModelRequest) request = simple_request ("go");
  g_autoptr(SightModelResponse) a = NULL;
  g_autoptr(SightModelResponse) b = NULL;
  g_autoptr(GError) error = NULL;
  SightUsage step;

  sight_scripted_model_push (fixture->server,
                             "{\"text\": \"a\", \"usage\": {\"input\": 1000, \"output\": 200, \"cached\": 400}}");
  sight_scripted_model_push (fixture->server,
                             "{\"text\": \"b\", \"usage\": {\"input\": 10, \"output\": 5, \"cached\": 0}}");
  a = complete (fixture->provider, request, in_seconds (10), NULL, &error);
  g_assert_no_error (error);
  b = complete (fixture->provider, request, in_seconds (10), NULL, &error);
  g_assert_no_error (error);

  g_assert_cmpint (a->usage.token_accounting, ==, SIGHT_TOKEN_ACCOUNTING_PROVIDER);
  g_assert_cmpuint (a->usage.model_calls, ==, 1);
  g_assert_cmpuint (a->usage.input_tokens, ==, 1000);
  g_assert_cmpuint (a->usage.cached_input_tokens, ==, 400);
  g_assert_cmpuint (a->usage.output_tokens, ==, 200);
  /* No price set on this provider: tokens only. */
  g_assert_false (a->usage.has_cost);

  sight_usage_init (&step);
  sight_usage_add (&step, &a->usage);
  sight_usage_add (&step, &b->usage);
  g_assert_cmpint (step.token_accounting, ==, SIGHT_TOKEN_ACCOUNTING_PROVIDER);
  g_assert_cmpuint (step.model_calls, ==, 2);
  g_assert_cmpuint (step.input_tokens, ==, 1010);
  g_assert_cmpuint (step.output_tokens, ==, 205);
}

static void
test_usage_cost (Fixture       *fixture,
                 gconstpointer  data)
{
  g_autoptr(SightModelProvider) provider = NULL;
  g_autoptr(SightModelRequest) request = simple_request ("go");
  g_autoptr(SightModelResponse) response = NULL;
  g_autoptr(GError) error = NULL;
  const char *base_url = fixture->kind == OPENAI ? sight_scripted_model_get_openai_base_url (fixture->server)
                                                 : sight_scripted_model_get_anthropic_base_url (fixture->server);
  g_autofree char *name = g_strdup_printf ("%s", fixture->kind == OPENAI ? "openai:gpt-4.1-mini"
                                                                         : "anthropic:claude-sonnet-4");

  /* The default price table, through the configuration path. */
  provider = sight_model_provider_new_for_name (name, base_url, API_KEY, &error);
  g_assert_no_error (error);
  sight_scripted_model_push (fixture->server,
                             "{\"text\": \"a\", \"usage\": {\"input\": 1000, \"output\": 200, \"cached\": 400}}");
  response = complete (provider, request, in_seconds (10), NULL, &error);
  g_assert_no_error (error);
  /* The price table's figure is Sightline's estimate, never a reported cost. */
  g_assert_false (response->usage.has_cost);
  g_assert_true (response->usage.has_estimated_cost);
  if (fixture->kind == OPENAI)
    g_assert_cmpuint (response->usage.estimated_cost_micro_usd, ==,
                      600 * 0.40 + 400 * 0.10 + 200 * 1.60);
  else
    g_assert_cmpuint (response->usage.estimated_cost_micro_usd, ==, 600 * 3 + 400 * 0.30 + 200 * 15);
  g_clear_pointer (&response, sight_model_response_unref);

  if (fixture->kind == OPENAI)
    {
      /* A cost the provider reports (OpenRouter's usage.cost, USD) wins. */
      sight_scripted_model_push (fixture->server,
                                 "{\"text\": \"a\", \"usage\": {\"input\": 1000, \"output\": 200, \"cost\": 0.0123}}");
      response = complete (provider, request, in_seconds (10), NULL, &error);
      g_assert_no_error (error);
      g_assert_true (response->usage.has_cost);
      g_assert_cmpuint (response->usage.cost_micro_usd, ==, 12300);
      g_assert_false (response->usage.has_estimated_cost);
    }
}

static void
test_usage_upper_bound (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autoptr(SightModelRequest) request = simple_request ("What does the page say?");
  g_autoptr(SightModelResponse) a = NULL;
  g_autoptr(SightModelResponse) b = NULL;
  g_autoptr(SightModelResponse) c = NULL;
  g_autoptr(GError) error = NULL;
  const char *answer = "The page says hello to every visitor.";
  gsize body_len;
  SightUsage step;

  sight_scripted_model_push_printf (fixture->server, "{\"text\": \"%s\", \"usage\": false}", answer);
  sight_scripted_model_push (fixture->server, "{\"text\": \"x\", \"usage\": {\"input\": 50}}");
  sight_scripted_model_push (fixture->server, "{\"text\": \"y\", \"usage\": {\"input\": 50, \"output\": 3}}");
  a = complete (fixture->provider, request, in_seconds (10), NULL, &error);
  g_assert_no_error (error);
  body_len = strlen (sight_scripted_model_get_request_body_text (fixture->server, 0));

  /* No counts: the request's bytes bound its input tokens, the answer's
   * bytes its output tokens. */
  g_assert_cmpint (a->usage.token_accounting, ==, SIGHT_TOKEN_ACCOUNTING_ADAPTER_UPPER_BOUND);
  g_assert_cmpuint (a->usage.input_tokens, ==, body_len);
  g_assert_cmpuint (a->usage.output_tokens, >=, strlen (answer));
  g_assert_cmpuint (a->usage.output_tokens, <, strlen (answer) + 64);

  /* Half the counts is not complete. */
  b = complete (fixture->provider, request, in_seconds (10), NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (b->usage.token_accounting, ==, SIGHT_TOKEN_ACCOUNTING_ADAPTER_UPPER_BOUND);
  g_assert_cmpuint (b->usage.input_tokens, ==, 50);
  g_assert_cmpuint (b->usage.output_tokens, >=, 1);

  c = complete (fixture->provider, request, in_seconds (10), NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (c->usage.token_accounting, ==, SIGHT_TOKEN_ACCOUNTING_PROVIDER);

  sight_usage_init (&step);
  sight_usage_add (&step, &c->usage);
  g_assert_cmpint (step.token_accounting, ==, SIGHT_TOKEN_ACCOUNTING_PROVIDER);
  sight_usage_add (&step, &a->usage);
  g_assert_cmpint (step.token_accounting, ==, SIGHT_TOKEN_ACCOUNTING_ADAPTER_UPPER_BOUND);
  g_assert_cmpuint (step.input_tokens, ==, 50 + body_len);
}

static void
test_usage_saturation (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autoptr(SightModelRequest) request = simple_request ("go");
  g_autoptr(SightModelResponse) a = NULL;
  g_autoptr(GError) error = NULL;
  SightModelPrice price = { 1000000000, 1000000000, 1000000000 };
  SightUsage step;

  /* Counts beyond 2^53 - 1 saturate, and a cost beyond it is omitted. */
  sight_model_provider_set_price (fixture->provider, &price);
  sight_scripted_model_push (fixture->server,
                             "{\"text\": \"a\", \"usage\": {\"input\": 9007199254740990, \"output\": 9007199254740999}}");
  a = complete (fixture->provider, request, in_seconds (10), NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (a->usage.input_tokens, ==, G_GUINT64_CONSTANT (9007199254740990));
  g_assert_cmpuint (a->usage.output_tokens, ==, SIGHT_USAGE_MAX_SAFE);
  g_assert_false (a->usage.has_estimated_cost);
  g_assert_true (a->usage.estimated_cost_overflowed);

  sight_usage_init (&step);
  sight_usage_add (&step, &a->usage);
  sight_usage_add (&step, &a->usage);
  g_assert_cmpuint (step.input_tokens, ==, SIGHT_USAGE_MAX_SAFE);
  g_assert_cmpuint (step.output_tokens, ==, SIGHT_USAGE_MAX_SAFE);
  g_assert_false (step.has_estimated_cost);
  g_assert_true (step.estimated_cost_overflowed);
}

static void
test_refused_key (Fixture       *fixture,
                  gconstpointer  data)
{
  g_autoptr(SightModelRequest) request = simple_request ("go");
  g_autoptr(SightModelResponse) response = NULL;
  g_autoptr(GError) error = NULL;

  sight_scripted_model_set_api_key (fixture->server, "sk-the-right-key-000000");
  sight_scripted_model_push (fixture->server, "{\"text\": \"unused\"}");
  response = complete (fixture->provider, request, in_seconds (10), NULL, &error);
  g_assert_null (response);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, fixture->kind == OPENAI ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY"));
  g_assert_nonnull (strstr (error->message, "HTTP 401"));
  g_assert_null (strstr (error->message, API_KEY));
  g_assert_cmpuint (sight_scripted_model_get_request_count (fixture->server), ==, 1);
  g_clear_error (&error);

  /* A key from the agent's apiKeyEnv is hinted by that name. */
  sight_model_provider_set_key_env (fixture->provider, "TEAM_MODEL_KEY");
  sight_scripted_model_push (fixture->server, "{\"text\": \"unused\"}");
  response = complete (fixture->provider, request, in_seconds (10), NULL, &error);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "set TEAM_MODEL_KEY"));
}

static void
test_echoed_key_redacted (Fixture       *fixture,
                          gconstpointer  data)
{
  g_autoptr(SightModelRequest) request = simple_request ("go");
  g_autoptr(SightModelResponse) response = NULL;
  g_autoptr(GError) error = NULL;

  /* Providers echo keys in error text; it never reaches our errors. */
  sight_scripted_model_push (fixture->server,
                             "{\"status\": 400, \"error\": {\"type\": \"invalid_request_error\","
                             " \"message\": \"Key " API_KEY " cannot use this model; also sk-proj-abcdef123456\"}}");
  response = complete (fixture->provider, request, in_seconds (10), NULL, &error);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE);
  g_assert_null (strstr (error->message, API_KEY));
  g_assert_null (strstr (error->message, "abcdef123456"));
  g_assert_nonnull (strstr (error->message, "[redacted]"));
}

static void
test_rules_and_exhaustion (Fixture       *fixture,
                           gconstpointer  data)
{
  g_autoptr(SightModelRequest) badge = simple_request ("Does the dashboard show a trial badge?");
  g_autoptr(SightModelRequest) other = simple_request ("Anything else?");
  g_autoptr(SightModelResponse) response = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (sight_scripted_model_load_script (fixture->server,
                 "{\"rules\": [{\"match\": \"trial badge\", \"response\": {\"text\": \"badge: yes\"}, \"times\": 1}],"
                 " \"responses\": [{\"text\": \"first in list\"}]}", &error));
  response = complete (fixture->provider, badge, in_seconds (10), NULL, &error);
  g_assert_cmpstr (response->text, ==, "badge: yes");
  g_clear_pointer (&response, sight_model_response_unref);
  response = complete (fixture->provider, badge, in_seconds (10), NULL, &error);
  g_assert_cmpstr (response->text, ==, "first in list");
  g_clear_pointer (&response, sight_model_response_unref);
  g_assert_cmpuint (sight_scripted_model_get_remaining (fixture->server), ==, 0);
  g_assert_cmpuint (sight_scripted_model_count_requests_containing (fixture->server, "trial badge"), ==, 2);
  g_assert_cmpuint (sight_scripted_model_count_requests_containing (fixture->server, API_KEY), ==, 2);
  g_assert_cmpuint (sight_scripted_model_count_requests_containing (fixture->server, "canary-0417"), ==, 0);

  /* Nothing left: 500 "script exhausted", retried like any 5xx. */
  sight_model_provider_set_max_retries (fixture->provider, 0);
  response = complete (fixture->provider, other, in_seconds (10), NULL, &error);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE);
  g_assert_cmpuint (sight_scripted_model_get_unexpected (fixture->server), ==, 1);
}

static void
test_connect_timeout (void)
{
  g_autoptr(GSocket) listener = NULL;
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) any = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;
  g_autoptr(GPtrArray) fillers = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(SightModelProvider) provider = NULL;
  g_autoptr(SightModelRequest) request = simple_request ("go");
  g_autoptr(SightModelResponse) response = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *base_url = NULL;
  gboolean blocked = FALSE;
  gint64 start;

  /* A listener that never accepts, its queue full: SYNs go unanswered. */
  listener = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error);
  g_assert_no_error (error);
  g_socket_set_listen_backlog (listener, 0);
  g_assert_true (g_socket_bind (listener, any, TRUE, &error));
  g_assert_true (g_socket_listen (listener, &error));
  bound = g_socket_get_local_address (listener, &error);
  for (guint i = 0; i < 8 && !blocked; i++)
    {
      GSocket *filler = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL);
      g_autoptr(GError) connect_error = NULL;

      g_socket_set_blocking (filler, FALSE);
      if (!g_socket_connect (filler, bound, NULL, &connect_error)
          && g_error_matches (connect_error, G_IO_ERROR, G_IO_ERROR_PENDING))
        {
          g_autoptr(GError) check_error = NULL;

          g_usleep (50 * 1000);
          if (!g_socket_condition_check (filler, G_IO_OUT))
            blocked = TRUE;
        }
      g_ptr_array_add (fillers, filler);
    }
  if (!blocked)
    {
      g_test_skip ("this kernel completes every loopback connect");
      return;
    }

  base_url = g_strdup_printf ("http://127.0.0.1:%u/v1",
                              g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound)));
  provider = sight_openai_provider_new ("gpt-4.1-mini", base_url, API_KEY);
  sight_model_provider_set_connect_timeout (provider, 150 * G_TIME_SPAN_MILLISECOND);
  sight_model_provider_set_backoff (provider, G_TIME_SPAN_MILLISECOND, 4 * G_TIME_SPAN_MILLISECOND);
  start = g_get_monotonic_time ();
  response = complete (provider, request, in_seconds (10), NULL, &error);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "no connection within 150 ms"));
  g_assert_nonnull (strstr (error->message, "after 3 attempts"));
  g_assert_cmpint (g_get_monotonic_time () - start, >=, 3 * 140 * G_TIME_SPAN_MILLISECOND);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 3 * G_USEC_PER_SEC);
}

static SightModelResponse *
next_turn (SightModelProvider *provider,
           SightModelRequest  *request,
           const char         *expected_tool)
{
  g_autoptr(GError) error = NULL;
  SightModelResponse *response = complete (provider, request, in_seconds (10), NULL, &error);
  SightModelToolCall *call;

  g_assert_no_error (error);
  g_assert_cmpuint (response->tool_calls->len, ==, 1);
  call = g_ptr_array_index (response->tool_calls, 0);
  g_assert_cmpstr (call->name, ==, expected_tool);
  sight_model_request_add_response (request, response);
  sight_model_request_add_tool_result (request, call->id, "done", FALSE);
  return response;
}

/* The standalone program with the example script of a whole act step and
 * an assert judgment, in both wire formats. */
static void
test_scripted_server_program (void)
{
  const char *program = g_getenv ("SIGHTLINE_SCRIPTED_MODEL_SERVER");
  g_autofree char *script = g_test_build_filename (G_TEST_DIST, "fixtures", "scripted-model", "sign-in.json", NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *record = NULL;
  g_autofree char *recorded = NULL;

  if (program == NULL)
    {
      g_test_skip ("SIGHTLINE_SCRIPTED_MODEL_SERVER is not set");
      return;
    }
  dir = g_dir_make_tmp ("sight-model-XXXXXX", &error);
  g_assert_no_error (error);
  record = g_build_filename (dir, "requests.jsonl", NULL);

  for (Kind kind = OPENAI; kind <= ANTHROPIC; kind++)
    {
      g_autoptr(GSubprocess) server = NULL;
      g_autoptr(GDataInputStream) out = NULL;
      g_autofree char *line = NULL;
      g_autoptr(SightModelProvider) provider = NULL;
      g_autoptr(SightModelRequest) act = simple_request ("Sign in as the member");
      g_autoptr(SightModelRequest) judge = simple_request ("Judge: the dashboard shows a trial badge");
      g_autoptr(JsonNode) verdict_schema = json_from_string ("{\"type\":\"object\"}", NULL);
      g_autoptr(SightModelResponse) verdict = NULL;
      g_autoptr(JsonNode) answer = NULL;
      SightUsage step;
      const char *key = kind == OPENAI ? "OPENAI_BASE_URL=" : "ANTHROPIC_BASE_URL=";
      char *url, *end;

      server = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, program, "--script", script,
                                 "--record", record, NULL);
      g_assert_no_error (error);
      out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (server));
      line = g_data_input_stream_read_line (out, NULL, NULL, &error);
      g_assert_no_error (error);
      g_assert_nonnull (line);
      url = strstr (line, key);
      g_assert_nonnull (url);
      url += strlen (key);
      if ((end = strchr (url, ' ')) != NULL)
        *end = '\0';

      provider = kind == OPENAI ? sight_openai_provider_new ("gpt-4.1-mini", url, API_KEY)
                                : sight_anthropic_provider_new ("claude-sonnet-4", url, API_KEY);
      sight_usage_init (&step);
      for (guint i = 0; i < 3; i++)
        {
          const char *tools[] = { "fill", "click", "done" };
          g_autoptr(SightModelResponse) response = next_turn (provider, act, tools[i]);

          sight_usage_add (&step, &response->usage);
        }
      g_assert_cmpuint (step.model_calls, ==, 3);
      g_assert_cmpuint (step.input_tokens, ==, 640 + 702 + 760);
      g_assert_cmpuint (step.cached_input_tokens, ==, 1024);
      g_assert_cmpuint (step.output_tokens, ==, 31 + 18 + 40);
      g_assert_cmpint (step.token_accounting, ==, SIGHT_TOKEN_ACCOUNTING_PROVIDER);

      sight_model_request_set_response_schema (judge, "judgment", verdict_schema);
      verdict = complete (provider, judge, in_seconds (10), NULL, &error);
      g_assert_no_error (error);
      answer = sight_model_response_parse_json (verdict);
      g_assert_true (json_object_get_boolean_member (json_node_get_object (answer), "verdict"));

      g_subprocess_send_signal (server, SIGTERM);
      g_subprocess_wait (server, NULL, NULL);
    }

  g_assert_true (g_file_get_contents (record, &recorded, NULL, &error));
  g_assert_nonnull (strstr (recorded, "Sign in as the member"));
  g_assert_nonnull (strstr (recorded, "/v1/chat/completions"));
  g_assert_nonnull (strstr (recorded, "/v1/messages"));
  /* The record keeps that a key was sent, never the key. */
  g_assert_null (strstr (recorded, API_KEY));
  g_assert_nonnull (strstr (recorded, "[redacted]"));
  g_unlink (record);
  g_rmdir (dir);
}

static void
test_logs_hold_no_secret (void)
{
  /* Runs last: every call above logged through the capturing writer. */
  g_assert_cmpuint (captured_log->len, >, 0);
  g_assert_nonnull (strstr (captured_log->str, "attempt"));
  g_assert_null (strstr (captured_log->str, API_KEY));
  g_assert_null (strstr (captured_log->str, "SECRET"));
  {
    g_autofree char *lower = g_ascii_strdown (captured_log->str, -1);

    g_assert_null (strstr (lower, "authorization"));
    g_assert_null (strstr (lower, "bearer"));
    g_assert_null (strstr (lower, "x-api-key"));
  }
}

static void
add_both (const char *name,
          void      (*func) (Fixture *, gconstpointer))
{
  g_autofree char *openai = g_strdup_printf ("/model/openai/%s", name);
  g_autofree char *anthropic = g_strdup_printf ("/model/anthropic/%s", name);

  g_test_add (openai, Fixture, GINT_TO_POINTER (OPENAI), fixture_set_up, func, fixture_tear_down);
  g_test_add (anthropic, Fixture, GINT_TO_POINTER (ANTHROPIC), fixture_set_up, func, fixture_tear_down);
}

int
main (int    argc,
      char **argv)
{
  captured_log = g_string_new (NULL);
  g_log_set_writer_func (capture_writer, NULL, NULL);
  g_test_init (&argc, &argv, NULL);

  add_both ("plain-answer", test_plain_answer);
  add_both ("tool-call-conversation", test_tool_call_conversation);
  add_both ("image-request", test_image_request);
  add_both ("json-schema-output", test_json_schema_output);
  add_both ("retry-after", test_retry_after_honoured);
  add_both ("deadline", test_deadline_cuts_slow_response);
  add_both ("cancel", test_cancel);
  add_both ("usage/provider-counts", test_usage_provider_counts);
  add_both ("usage/cost", test_usage_cost);
  add_both ("usage/upper-bound", test_usage_upper_bound);
  add_both ("usage/saturation", test_usage_saturation);
  add_both ("refused-key", test_refused_key);
  add_both ("echoed-key-redacted", test_echoed_key_redacted);
  add_both ("scripted-rules", test_rules_and_exhaustion);
  g_test_add ("/model/faults", Fixture, GINT_TO_POINTER (OPENAI), NULL, test_fault, NULL);
  g_test_add_func ("/model/connect-timeout", test_connect_timeout);
  g_test_add_func ("/model/openai/large-answer", test_large_answer);
  g_test_add_func ("/model/scripted-server-program", test_scripted_server_program);
  g_test_add_func ("/model/logs-hold-no-secret", test_logs_hold_no_secret);
  return g_test_run ();
}
