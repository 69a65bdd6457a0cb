/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "sight-usage.h"

G_BEGIN_DECLS

/* One model request and one model response, independent of the wire format.
 *
 * A request holds the system text, the conversation (user messages with text
 * and images, assistant turns with tool calls, tool results), the tools the
 * model may call (JSON Schema parameters), an optional JSON Schema the answer
 * must follow, and a cap on output tokens. Fields are public for reading;
 * build requests with the functions below. Both types are reference counted
 * and immutable once handed to a provider. */

typedef enum {
  SIGHT_MODEL_ROLE_USER,
  SIGHT_MODEL_ROLE_ASSISTANT,
  SIGHT_MODEL_ROLE_TOOL,
} SightModelRole;

typedef enum {
  SIGHT_MODEL_TOOL_CHOICE_AUTO,
  SIGHT_MODEL_TOOL_CHOICE_REQUIRED,
  SIGHT_MODEL_TOOL_CHOICE_NONE,
} SightModelToolChoice;

typedef enum {
  SIGHT_MODEL_FINISH_STOP,
  SIGHT_MODEL_FINISH_TOOL_CALLS,      /*< nick=tool_calls >*/
  SIGHT_MODEL_FINISH_LENGTH,
  SIGHT_MODEL_FINISH_CONTENT_FILTER,  /*< nick=content_filter >*/
  SIGHT_MODEL_FINISH_OTHER,
} SightModelFinishReason;

typedef struct {
  char   *media_type;    /* "image/png", "image/jpeg", "image/webp" */
  GBytes *bytes;         /* the encoded image */
} SightModelImage;

typedef struct {
  char     *id;          /* provider's id, echoed back with the tool result */
  char     *name;
  JsonNode *arguments;   /* always a parsed JSON object */
} SightModelToolCall;

typedef struct {
  SightModelRole  role;
  char           *text;          /* may be NULL */
  GPtrArray      *images;        /* of SightModelImage; user and tool messages */
  GPtrArray      *tool_calls;    /* of SightModelToolCall; assistant messages */
  char           *tool_call_id;  /* tool messages: the call this answers */
  gboolean        is_error;      /* tool messages: the tool failed */
} SightModelMessage;

typedef struct {
  char     *name;
  char     *description;
  JsonNode *parameters;  /* JSON Schema of the arguments object */
} SightModelTool;

typedef struct {
  /*< private >*/
  gatomicrefcount       ref_count;
  /*< public >*/
  char                 *system;
  GPtrArray            *messages;          /* of SightModelMessage */
  GPtrArray            *tools;             /* of SightModelTool */
  SightModelToolChoice  tool_choice;
  char                 *response_name;     /* name of the response format */
  JsonNode             *response_schema;   /* JSON Schema of the answer, or NULL */
  guint                 max_tokens;        /* 0: the provider's default */
} SightModelRequest;

typedef struct {
  /*< private >*/
  gatomicrefcount         ref_count;
  /*< public >*/
  char                   *text;            /* NULL when the model wrote none */
  GPtrArray              *tool_calls;      /* of SightModelToolCall, never NULL */
  SightModelFinishReason  finish_reason;
  char                   *finish_reason_raw;
  SightUsage              usage;           /* of this one call */
  char                   *request_id;      /* the provider's request id, or NULL */
  char                   *model;           /* the model that answered, as reported */
  guint                   attempts;        /* HTTP attempts, 1 + retries */
} SightModelResponse;

SightModelRequest  *sight_model_request_new            (void);
SightModelRequest  *sight_model_request_ref            (SightModelRequest    *self);
void                sight_model_request_unref          (SightModelRequest    *self);

void                sight_model_request_set_system     (SightModelRequest    *self,
                                                        const char           *text);
/* Appends a message and returns it (owned by the request) to add images or
 * tool calls to. */
SightModelMessage  *sight_model_request_add_message    (SightModelRequest    *self,
                                                        SightModelRole        role,
                                                        const char           *text);
SightModelMessage  *sight_model_request_add_tool_result (SightModelRequest   *self,
                                                         const char          *tool_call_id,
                                                         const char          *text,
                                                         gboolean             is_error);
/* Appends the assistant turn of @response (its text and tool calls), so the
 * next request continues the conversation. */
SightModelMessage  *sight_model_request_add_response   (SightModelRequest    *self,
                                                        SightModelResponse   *response);
void                sight_model_message_add_image      (SightModelMessage    *message,
                                                        const char           *media_type,
                                                        GBytes               *bytes);
void                sight_model_message_add_tool_call  (SightModelMessage    *message,
                                                        const char           *id,
                                                        const char           *name,
                                                        JsonNode             *arguments);
void                sight_model_request_add_tool       (SightModelRequest    *self,
                                                        const char           *name,
                                                        const char           *description,
                                                        JsonNode             *parameters);
void                sight_model_request_set_tool_choice (SightModelRequest   *self,
                                                         SightModelToolChoice choice);
void                sight_model_request_set_response_schema (SightModelRequest *self,
                                                             const char        *name,
                                                             JsonNode          *schema);
void                sight_model_request_set_max_tokens (SightModelRequest    *self,
                                                        guint                 max_tokens);

SightModelResponse *sight_model_response_new           (void);
SightModelResponse *sight_model_response_ref           (SightModelResponse   *self);
void                sight_model_response_unref         (SightModelResponse   *self);
/* The answer text parsed as JSON (for a request with a response schema), or
 * NULL when it is not JSON. The agent validates it against the schema. */
JsonNode           *sight_model_response_parse_json    (SightModelResponse   *self);

SightModelToolCall *sight_model_tool_call_new          (const char           *id,
                                                        const char           *name,
                                                        JsonNode             *arguments);
void                sight_model_tool_call_free         (SightModelToolCall   *call);

const char         *sight_model_finish_reason_to_string (SightModelFinishReason reason);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightModelRequest, sight_model_request_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightModelResponse, sight_model_response_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightModelToolCall, sight_model_tool_call_free)

G_END_DECLS
