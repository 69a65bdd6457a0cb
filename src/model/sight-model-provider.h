/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>
#include <libsoup/soup.h>

#include "sight-model-prices.h"
#include "sight-model-request.h"

G_BEGIN_DECLS

#define SIGHT_TYPE_MODEL_PROVIDER (sight_model_provider_get_type ())
G_DECLARE_DERIVABLE_TYPE (SightModelProvider, sight_model_provider, SIGHT, MODEL_PROVIDER, GObject)

/* A model behind an HTTP API. The base class owns the HTTP exchange and the
 * fault policy of the official SDKs (sight-model-retry.h): retries, backoff,
 * retry-after, the connect timeout and the caller's deadline, error mapping
 * and usage accounting. A subclass only speaks its wire format.
 *
 * One turn of a tool-calling loop:
 *
 *   provider = sight_model_provider_new_for_agent_config (agent, &error);
 *   request = sight_model_request_new ();
 *   sight_model_request_set_system (request, "You operate a web page …");
 *   msg = sight_model_request_add_message (request, SIGHT_MODEL_ROLE_USER, tree_text);
 *   sight_model_message_add_image (msg, "image/jpeg", screenshot);
 *   sight_model_request_add_tool (request, "click", "Click an element", schema);
 *   sight_model_provider_complete_async (provider, request, step_deadline_us,
 *                                        cancellable, on_answer_cb, step);
 *   … in on_answer_cb: response = sight_model_provider_complete_finish (…);
 *   sight_usage_add (&step_usage, &response->usage);
 *   sight_model_request_add_response (request, response);
 *   for each call in response->tool_calls: run it, then
 *     sight_model_request_add_tool_result (request, call->id, result_text, failed);
 *   and send the same request again. */
struct _SightModelProviderClass
{
  GObjectClass parent_class;

  /* The JSON body of @request and the path under the base URL. */
  GBytes             *(*serialize)      (SightModelProvider  *self,
                                         SightModelRequest   *request,
                                         char               **out_path,
                                         GError             **error);
  /* Auth and version headers. Their values never reach a log. */
  void                (*add_headers)    (SightModelProvider  *self,
                                         SoupMessageHeaders  *headers);
  /* A 2xx body into a response. Any doubt (malformed body, HTML, no
   * choice, unparsable tool arguments, a truncated answer) is
   * MODEL_OUTPUT_INVALID; never a partial response. Fills the usage counts
   * with _sight_model_provider_account(). */
  SightModelResponse *(*parse)          (SightModelProvider  *self,
                                         SightModelRequest   *request,
                                         GBytes              *body,
                                         gsize                request_bytes,
                                         GError             **error);
  /* The name of the env var a key comes from, for hints. */
  const char         *(*key_env_name)   (SightModelProvider  *self);

  gpointer padding[8];
};

/* "openai" or "anthropic". */
const char         *sight_model_provider_get_kind          (SightModelProvider *self);
const char         *sight_model_provider_get_model         (SightModelProvider *self);
const char         *sight_model_provider_get_base_url      (SightModelProvider *self);
/* "openai:gpt-4.1-mini" */
char               *sight_model_provider_dup_name          (SightModelProvider *self);

/* Tuning, mostly for tests: the backoff schedule (defaults 0.5 s and 8 s),
 * the number of retries (2) and the connect timeout (5 s). */
void                sight_model_provider_set_backoff       (SightModelProvider *self,
                                                            GTimeSpan           base_us,
                                                            GTimeSpan           max_us);
void                sight_model_provider_set_max_retries   (SightModelProvider *self,
                                                            guint               max_retries);
void                sight_model_provider_set_connect_timeout (SightModelProvider *self,
                                                              GTimeSpan           timeout_us);
/* The longest pause between bytes of an answer (SIGHT_MODEL_READ_IDLE_TIMEOUT_US
 * unless changed); past it the attempt fails and is retried. */
void                sight_model_provider_set_read_idle_timeout (SightModelProvider *self,
                                                                GTimeSpan           timeout_us);
/* The price of this provider's model; without one, calls carry no cost
 * unless the provider reports it. */
void                sight_model_provider_set_price         (SightModelProvider    *self,
                                                            const SightModelPrice *price);
/* The environment variable the key came from, named in the hint of a
 * refused key (default: the provider's own, e.g. OPENAI_API_KEY). */
void                sight_model_provider_set_key_env       (SightModelProvider    *self,
                                                            const char            *env_name);
gboolean            sight_model_provider_get_price         (SightModelProvider    *self,
                                                            SightModelPrice       *out_price);
void                sight_model_provider_set_default_max_tokens (SightModelProvider *self,
                                                                 guint               max_tokens);
guint               sight_model_provider_get_default_max_tokens (SightModelProvider *self);

/* Sends @request once (plus the policy's retries). @deadline_us is a
 * g_get_monotonic_time() instant that caps every attempt and every wait;
 * 0 means none. Errors, in SIGHT_ERROR:
 *  - MODEL_UNAVAILABLE: unreachable, refused key, quota, HTTP errors once the
 *    retries are spent (the message carries a one-line hint for auth);
 *  - MODEL_OUTPUT_INVALID: a 2xx answer that is not a whole, valid answer;
 *  - STEP_TIMEOUT: the deadline passed during the call;
 * and G_IO_ERROR_CANCELLED when @cancellable fired. */
void                sight_model_provider_complete_async    (SightModelProvider  *self,
                                                            SightModelRequest   *request,
                                                            gint64               deadline_us,
                                                            GCancellable        *cancellable,
                                                            GAsyncReadyCallback  callback,
                                                            gpointer             user_data);
SightModelResponse *sight_model_provider_complete_finish   (SightModelProvider  *self,
                                                            GAsyncResult        *result,
                                                            GError             **error);

/* What a probe found. */
typedef enum {
  SIGHT_MODEL_PROBE_OK,
  SIGHT_MODEL_PROBE_KEY_REFUSED,     /* HTTP 401 or 403: the API key */
  SIGHT_MODEL_PROBE_MODEL_NOT_FOUND, /* HTTP 404: the model name (or the base URL's path) */
  SIGHT_MODEL_PROBE_UNREACHABLE,     /* nothing listens at the base URL (refused, no host) */
  SIGHT_MODEL_PROBE_TIMEOUT,         /* no answer within the probe's deadline */
  SIGHT_MODEL_PROBE_FAILED,          /* any other error: see the message */
} SightModelProbeOutcome;

typedef struct {
  SightModelProbeOutcome  outcome;
  char                   *model;        /* OK: the model that answered, as reported */
  gint64                  latency_ms;   /* from the request to its answer or error */
  SightUsage              usage;        /* OK: the call's token counts */
  guint                   http_status;  /* the error's HTTP status, 0 when none */
  char                   *message;      /* not OK: the provider's error, sanitized */
} SightModelProbe;

void                sight_model_probe_free                 (SightModelProbe    *probe);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightModelProbe, sight_model_probe_free)

/* Proves the configured model answers: one small real request (a short
 * question, a few tokens of answer) with this provider's model, base URL
 * and key, not retried, within @timeout_ms. Finishes with what it found
 * (an error only when @cancellable fired: G_IO_ERROR_CANCELLED). Sets the
 * provider's retries to 0: give it a provider of its own. */
void                sight_model_provider_probe_async       (SightModelProvider  *self,
                                                            guint                timeout_ms,
                                                            GCancellable        *cancellable,
                                                            GAsyncReadyCallback  callback,
                                                            gpointer             user_data);
SightModelProbe    *sight_model_provider_probe_finish      (SightModelProvider  *self,
                                                            GAsyncResult        *result,
                                                            GError             **error);

/* For subclasses. */
void                _sight_model_provider_setup            (SightModelProvider *self,
                                                            const char         *kind,
                                                            const char         *model,
                                                            const char         *base_url,
                                                            const char         *api_key);
const char         *_sight_model_provider_get_api_key      (SightModelProvider *self);
/* Fills @response->usage. A count < 0 was not given by the provider: it is
 * then replaced by an upper bound (the request's bytes for input, the
 * answer's bytes for output) and the call is 'adapter-upper-bound'.
 * @provider_cost_usd < 0 means the provider gave no cost; the price table
 * is used then. */
void                _sight_model_provider_account          (SightModelProvider *self,
                                                            SightModelResponse *response,
                                                            gint64              input_tokens,
                                                            gint64              cached_tokens,
                                                            gint64              output_tokens,
                                                            double              provider_cost_usd,
                                                            gsize               request_bytes,
                                                            gsize               output_bytes);
/* Replaces every occurrence of the key and key-like tokens in @text, then
 * sanitizes and bounds it. */
char               *_sight_model_provider_redact           (SightModelProvider *self,
                                                            const char         *text,
                                                            gsize               max_bytes);

G_END_DECLS
