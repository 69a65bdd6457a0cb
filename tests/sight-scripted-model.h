/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

/* The scripted model server: the one stand-in in the project.
 *
 * A SoupServer on 127.0.0.1 (a free port) that speaks both wire formats,
 *   POST /v1/chat/completions   OpenAI-compatible Chat Completions
 *   POST /v1/messages           Anthropic Messages
 * answers each request from a script, records every request (path, headers,
 * body) for assertions, and injects faults on demand. Point a provider at
 * sight_scripted_model_get_openai_base_url() ("http://127.0.0.1:PORT/v1") or
 * sight_scripted_model_get_anthropic_base_url() ("http://127.0.0.1:PORT").
 *
 * SCRIPT FORMAT
 *
 * A script is a JSON array of entries, answered in order, one per request:
 *
 *   [ {"tool_calls": [{"name": "click", "arguments": {"ref": "e3"}}]},
 *     {"text": "Signed in; the dashboard shows a trial badge."} ]
 *
 * or an object with rules that match on the request, tried before the list:
 *
 *   { "responses": [ …entries… ],
 *     "rules": [ {"match": "trial badge", "response": {…entry…}, "times": 1},
 *                {"match_body": "\"tools\"", "format": "anthropic", "response": {…}} ],
 *     "default": {…entry…} }
 *
 * "match" is a substring of the last message's text (the user text or the
 * tool result), "match_body" a substring of the raw request body, "format"
 * ("openai" or "anthropic") limits a rule to one wire format, and "times"
 * (default: unlimited) how often it fires. With nothing left to answer the
 * server sends HTTP 500 "script exhausted" and counts it as unexpected.
 *
 * An entry, rendered in the wire format of the request:
 *   "text": "…"                 the answer text
 *   "tool_calls": [{"name", "arguments": {…}, "id"?}]
 *                               tool calls (ids default to call_N); with
 *                               "text" too, both are sent
 *   "json": <any JSON>          a structured answer: the message content as
 *                               JSON text (OpenAI), or the input of the
 *                               forced response tool (Anthropic; non-objects
 *                               wrapped as {"value": …})
 *   "usage": {"input", "output", "cached", "cost"} | false
 *                               token counts (input includes cached; cost in
 *                               USD as OpenRouter sends it); false omits usage;
 *                               default input = body bytes / 4 and
 *                               output = 7, cached 0
 *   "finish_reason": "…"        overrides the finish/stop reason
 *   "model": "…"                the model reported (default: the request's)
 *   "delay_ms": N               wait N ms before answering (a slow model)
 *   "status": N, "error": {"type", "code", "message"}, "headers": {…}
 *                               an HTTP error in the format's error shape,
 *                               with extra response headers such as
 *                               retry-after or retry-after-ms
 *   "fault": one of
 *     "quota"               429 insufficient_quota (billing; not retried)
 *     "overloaded"          529 overloaded_error
 *     "html"                an HTML error page ("status", default 502)
 *     "malformed"           200 with a body that is not JSON
 *     "drop"                200 whose body is cut off as the connection closes
 *     "empty_choices"       200 with no choice (OpenAI) / no content (Anthropic)
 *     "truncated_arguments" a tool call whose arguments are cut mid-JSON
 *                           (needs "tool_calls")
 *     "length"              finish_reason=length / stop_reason=max_tokens
 *     "error_in_200"        200 whose body is only {"error": {"code": "status"
 *                           (default 502), …}}, as some gateways answer
 *     "stall"               200 whose head and first bytes are sent, then
 *                           nothing for "stall_ms" (default 120000) before
 *                           the connection closes: an answer that stopped
 *     "flood"               200 whose answer's text runs on for "flood_mb"
 *                           MiB (default 64), sent chunked, or with its
 *                           Content-Length when "encoding" is "length"
 *
 * With sight_scripted_model_set_api_key() the server also refuses requests
 * without that key (Bearer for OpenAI, x-api-key for Anthropic) with 401.
 *
 * The server runs on the thread-default main context it was created in.
 */

#include <json-glib/json-glib.h>
#include <libsoup/soup.h>

G_BEGIN_DECLS

#define SIGHT_TYPE_SCRIPTED_MODEL (sight_scripted_model_get_type ())
G_DECLARE_FINAL_TYPE (SightScriptedModel, sight_scripted_model, SIGHT, SCRIPTED_MODEL, GObject)

/* Listens on 127.0.0.1 at @port (0: a free one). */
SightScriptedModel *sight_scripted_model_new                  (guint               port,
                                                               GError            **error);
guint               sight_scripted_model_get_port             (SightScriptedModel *self);
const char         *sight_scripted_model_get_openai_base_url  (SightScriptedModel *self);
const char         *sight_scripted_model_get_anthropic_base_url (SightScriptedModel *self);

/* Replaces the script. */
gboolean            sight_scripted_model_load_script          (SightScriptedModel *self,
                                                               const char         *json,
                                                               GError            **error);
gboolean            sight_scripted_model_load_script_file     (SightScriptedModel *self,
                                                               const char         *path,
                                                               GError            **error);
/* Appends one entry (JSON text) to the list; aborts on invalid JSON, as a
 * test's own mistake. */
void                sight_scripted_model_push                 (SightScriptedModel *self,
                                                               const char         *entry_json);
void                sight_scripted_model_push_printf          (SightScriptedModel *self,
                                                               const char         *format,
                                                               ...) G_GNUC_PRINTF (2, 3);
void                sight_scripted_model_set_api_key          (SightScriptedModel *self,
                                                               const char         *api_key);
/* Entries of the list not answered yet. */
guint               sight_scripted_model_get_remaining        (SightScriptedModel *self);
/* Requests answered with "script exhausted". */
guint               sight_scripted_model_get_unexpected       (SightScriptedModel *self);

/* The recorded requests, oldest first. */
guint               sight_scripted_model_get_request_count    (SightScriptedModel *self);
const char         *sight_scripted_model_get_request_path     (SightScriptedModel *self,
                                                               guint               index);
/* Header lookup is case-insensitive; NULL when absent. */
const char         *sight_scripted_model_get_request_header   (SightScriptedModel *self,
                                                               guint               index,
                                                               const char         *name);
/* Every header of the request as "Name: value" lines. */
char               *sight_scripted_model_dup_request_headers  (SightScriptedModel *self,
                                                               guint               index);
const char         *sight_scripted_model_get_request_body_text (SightScriptedModel *self,
                                                                guint               index);
/* NULL when the body was not JSON. Borrowed. */
JsonNode           *sight_scripted_model_get_request_body     (SightScriptedModel *self,
                                                               guint               index);
/* How many recorded requests hold @needle in their raw body, in any string
 * of their parsed JSON (so JSON escapes do not hide it), or in a header
 * value. For "this secret never reached the model" assertions. */
guint               sight_scripted_model_count_requests_containing (SightScriptedModel *self,
                                                                    const char         *needle);
void                sight_scripted_model_clear_requests       (SightScriptedModel *self);
/* Appends each request, as it arrives, to @path as one JSON line
 * {"path", "headers": {…}, "body": …}; for the standalone server. */
void                sight_scripted_model_set_record_file      (SightScriptedModel *self,
                                                               const char         *path);

G_END_DECLS
