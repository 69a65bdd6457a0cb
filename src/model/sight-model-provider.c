/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-model-provider"

#include "config.h"

#include "sight-model-provider.h"

#include <math.h>
#include <string.h>

#include "sight-bounded-read.h"
#include "sight-error.h"
#include "sight-json.h"
#include "sight-model-private.h"
#include "sight-model-retry.h"

/* The most of a model's answer that is read. Answers are text and tool
 * calls (kilobytes, a few megabytes for a long extraction); a broken or
 * hostile endpoint that sends more would only grow the process. */
#define ANSWER_MAX_BYTES (32 * 1024 * 1024)

typedef struct
{
  char            *kind;
  char            *model;
  char            *base_url;
  char            *api_key;
  char            *key_env;
  SoupSession     *session;
  GRegex          *key_like;
  GTimeSpan        backoff_base;
  GTimeSpan        backoff_max;
  GTimeSpan        connect_timeout;
  GTimeSpan        read_idle_timeout;
  guint            max_retries;
  guint            default_max_tokens;
  gboolean         has_price;
  SightModelPrice  price;
} SightModelProviderPrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (SightModelProvider, sight_model_provider, G_TYPE_OBJECT)

/* One call: its attempts and the waits between them. */
typedef struct
{
  SightModelProvider *self;
  SightModelRequest  *request;
  GBytes             *body;
  char               *path;
  char               *host;
  gint64              deadline_us;
  guint               attempts;
  SoupMessage        *message;
  GCancellable       *attempt_cancellable;
  GCancellable       *outer_cancellable;
  gulong              outer_handler;
  GSource            *deadline_source;
  GSource            *connect_source;
  GSource            *wait_source;
  GSource            *wait_cancel_source;
  gboolean            timed_out;
  gboolean            connect_timed_out;
  GError             *last_error;
  /* What the last attempt met, for a probe's outcome: its HTTP error
   * status (0: none) and whether nothing listened at the base URL. */
  guint               last_status;
  gboolean            unreachable;
} Call;

static void start_attempt (GTask *task);

static void
sight_model_provider_finalize (GObject *object)
{
  SightModelProvider *self = SIGHT_MODEL_PROVIDER (object);
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (self);

  g_free (priv->kind);
  g_free (priv->model);
  g_free (priv->base_url);
  if (priv->api_key != NULL)
    memset (priv->api_key, 0, strlen (priv->api_key));
  g_free (priv->api_key);
  g_clear_pointer (&priv->key_like, g_regex_unref);
  g_free (priv->key_env);

  G_OBJECT_CLASS (sight_model_provider_parent_class)->finalize (object);
}

static void
sight_model_provider_dispose (GObject *object)
{
  SightModelProvider *self = SIGHT_MODEL_PROVIDER (object);
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (self);

  if (priv->session != NULL)
    soup_session_abort (priv->session);
  g_clear_object (&priv->session);

  G_OBJECT_CLASS (sight_model_provider_parent_class)->dispose (object);
}

static void
sight_model_provider_class_init (SightModelProviderClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = sight_model_provider_dispose;
  object_class->finalize = sight_model_provider_finalize;
}

static void
sight_model_provider_init (SightModelProvider *self)
{
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (self);

  priv->backoff_base = SIGHT_MODEL_BACKOFF_BASE_US;
  priv->backoff_max = SIGHT_MODEL_BACKOFF_MAX_US;
  priv->connect_timeout = SIGHT_MODEL_CONNECT_TIMEOUT_US;
  priv->read_idle_timeout = SIGHT_MODEL_READ_IDLE_TIMEOUT_US;
  priv->max_retries = SIGHT_MODEL_MAX_RETRIES;
  /* No I/O timeout of its own: the caller's deadline bounds each attempt
   * and the connect phase has its own timer. */
  priv->session = soup_session_new_with_options ("timeout", 0,
                                                 "user-agent", "sightline/" PACKAGE_VERSION,
                                                 NULL);
  priv->key_like = g_regex_new ("(Bearer\\s+\\S+|\\b(sk|key|api|anthropic)[-_][A-Za-z0-9_*.\\-]{6,})",
                                G_REGEX_CASELESS | G_REGEX_OPTIMIZE, 0, NULL);
}

void
_sight_model_provider_setup (SightModelProvider *self,
                             const char         *kind,
                             const char         *model,
                             const char         *base_url,
                             const char         *api_key)
{
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (self);

  g_return_if_fail (SIGHT_IS_MODEL_PROVIDER (self));

  g_free (priv->kind);
  priv->kind = g_strdup (kind);
  g_free (priv->model);
  priv->model = g_strdup (model);
  g_free (priv->base_url);
  priv->base_url = g_strdup (base_url);
  while (priv->base_url != NULL && g_str_has_suffix (priv->base_url, "/"))
    priv->base_url[strlen (priv->base_url) - 1] = '\0';
  g_free (priv->api_key);
  priv->api_key = (api_key != NULL && *api_key != '\0') ? g_strdup (api_key) : NULL;
}

const char *
_sight_model_provider_get_api_key (SightModelProvider *self)
{
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (self);

  g_return_val_if_fail (SIGHT_IS_MODEL_PROVIDER (self), NULL);
  return priv->api_key;
}

const char *
sight_model_provider_get_kind (SightModelProvider *self)
{
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (self);

  g_return_val_if_fail (SIGHT_IS_MODEL_PROVIDER (self), NULL);
  return priv->kind;
}

const char *
sight_model_provider_get_model (SightModelProvider *self)
{
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (self);

  g_return_val_if_fail (SIGHT_IS_MODEL_PROVIDER (self), NULL);
  return priv->model;
}

const char *
sight_model_provider_get_base_url (SightModelProvider *self)
{
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (self);

  g_return_val_if_fail (SIGHT_IS_MODEL_PROVIDER (self), NULL);
  return priv->base_url;
}

char *
sight_model_provider_dup_name (SightModelProvider *self)
{
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (self);

  g_return_val_if_fail (SIGHT_IS_MODEL_PROVIDER (self), NULL);
  return g_strdup_printf ("%s:%s", priv->kind, priv->model);
}

void
sight_model_provider_set_backoff (SightModelProvider *self,
                                  GTimeSpan           base_us,
                                  GTimeSpan           max_us)
{
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (self);

  g_return_if_fail (SIGHT_IS_MODEL_PROVIDER (self));
  priv->backoff_base = MAX (base_us, 0);
  priv->backoff_max = MAX (max_us, priv->backoff_base);
}

void
sight_model_provider_set_max_retries (SightModelProvider *self,
                                      guint               max_retries)
{
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (self);

  g_return_if_fail (SIGHT_IS_MODEL_PROVIDER (self));
  priv->max_retries = max_retries;
}

void
sight_model_provider_set_connect_timeout (SightModelProvider *self,
                                          GTimeSpan           timeout_us)
{
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (self);

  g_return_if_fail (SIGHT_IS_MODEL_PROVIDER (self));
  priv->connect_timeout = MAX (timeout_us, G_TIME_SPAN_MILLISECOND);
}

void
sight_model_provider_set_read_idle_timeout (SightModelProvider *self,
                                            GTimeSpan           timeout_us)
{
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (self);

  g_return_if_fail (SIGHT_IS_MODEL_PROVIDER (self));
  priv->read_idle_timeout = MAX (timeout_us, G_TIME_SPAN_MILLISECOND);
}

void
sight_model_provider_set_price (SightModelProvider    *self,
                                const SightModelPrice *price)
{
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (self);

  g_return_if_fail (SIGHT_IS_MODEL_PROVIDER (self));
  priv->has_price = price != NULL;
  if (price != NULL)
    priv->price = *price;
}

void
sight_model_provider_set_key_env (SightModelProvider *self,
                                  const char         *env_name)
{
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (self);

  g_return_if_fail (SIGHT_IS_MODEL_PROVIDER (self));
  g_free (priv->key_env);
  priv->key_env = g_strdup (env_name);
}

gboolean
sight_model_provider_get_price (SightModelProvider *self,
                                SightModelPrice    *out_price)
{
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (self);

  g_return_val_if_fail (SIGHT_IS_MODEL_PROVIDER (self), FALSE);
  if (priv->has_price && out_price != NULL)
    *out_price = priv->price;
  return priv->has_price;
}

void
sight_model_provider_set_default_max_tokens (SightModelProvider *self,
                                             guint               max_tokens)
{
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (self);

  g_return_if_fail (SIGHT_IS_MODEL_PROVIDER (self));
  priv->default_max_tokens = max_tokens;
}

guint
sight_model_provider_get_default_max_tokens (SightModelProvider *self)
{
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (self);

  g_return_val_if_fail (SIGHT_IS_MODEL_PROVIDER (self), 0);
  return priv->default_max_tokens;
}

char *
_sight_model_provider_redact (SightModelProvider *self,
                              const char         *text,
                              gsize               max_bytes)
{
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (self);
  g_autofree char *without_key = NULL;
  g_autofree char *without_tokens = NULL;

  if (text == NULL)
    return g_strdup ("");
  if (priv->api_key != NULL && strlen (priv->api_key) >= 4)
    {
      g_auto(GStrv) parts = g_strsplit (text, priv->api_key, -1);

      without_key = g_strjoinv ("[redacted]", parts);
    }
  else
    without_key = g_strdup (text);
  without_tokens = g_regex_replace_literal (priv->key_like, without_key, -1, 0,
                                            "[redacted]", 0, NULL);
  return sight_text_sanitize (without_tokens != NULL ? without_tokens : "", max_bytes);
}

void
_sight_model_provider_account (SightModelProvider *self,
                               SightModelResponse *response,
                               gint64              input_tokens,
                               gint64              cached_tokens,
                               gint64              output_tokens,
                               double              provider_cost_usd,
                               gsize               request_bytes,
                               gsize               output_bytes)
{
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (self);
  SightUsage *usage = &response->usage;

  sight_usage_init (usage);
  usage->model_calls = 1;
  /* Byte-level tokenizers never emit more tokens than bytes, and the
   * request's JSON holds every byte the model reads plus framing. */
  if (input_tokens < 0 || output_tokens < 0)
    usage->token_accounting = SIGHT_TOKEN_ACCOUNTING_ADAPTER_UPPER_BOUND;
  usage->input_tokens = input_tokens >= 0 ? MIN ((guint64) input_tokens, SIGHT_USAGE_MAX_SAFE)
                                          : MIN ((guint64) request_bytes, SIGHT_USAGE_MAX_SAFE);
  usage->output_tokens = output_tokens >= 0 ? MIN ((guint64) output_tokens, SIGHT_USAGE_MAX_SAFE)
                                            : MIN ((guint64) output_bytes, SIGHT_USAGE_MAX_SAFE);
  usage->cached_input_tokens = cached_tokens > 0 ? MIN ((guint64) cached_tokens, usage->input_tokens)
                                                 : 0;

  if (provider_cost_usd >= 0 && isfinite (provider_cost_usd))
    {
      double micro = provider_cost_usd * 1e6;

      if (micro <= (double) SIGHT_USAGE_MAX_SAFE)
        {
          usage->has_cost = TRUE;
          usage->cost_micro_usd = (guint64) llround (micro);
        }
      else
        usage->cost_overflowed = TRUE;
    }
  else if (priv->has_price)
    {
      guint64 cost;

      /* Sightline's estimate, kept apart from what providers report. */
      if (sight_model_price_cost (&priv->price, usage->input_tokens, usage->cached_input_tokens,
                                  usage->output_tokens, &cost))
        {
          usage->has_estimated_cost = TRUE;
          usage->estimated_cost_micro_usd = cost;
        }
      else
        usage->estimated_cost_overflowed = TRUE;
    }
}

/* The call and its attempts */

/* Sources go to the context the call started in, as GTask's callbacks do. */
static GSource *
timeout_add (guint        interval_ms,
             GSourceFunc  func,
             gpointer     data)
{
  GSource *source = g_timeout_source_new (interval_ms);

  g_source_set_callback (source, func, data, NULL);
  g_source_attach (source, g_main_context_get_thread_default ());
  return source;
}

static void
clear_source (GSource **source)
{
  if (*source == NULL)
    return;
  g_source_destroy (*source);
  g_clear_pointer (source, g_source_unref);
}

static void
call_free (Call *call)
{
  clear_source (&call->deadline_source);
  clear_source (&call->connect_source);
  if (call->wait_source != NULL)
    g_source_destroy (call->wait_source);
  g_clear_pointer (&call->wait_source, g_source_unref);
  if (call->wait_cancel_source != NULL)
    g_source_destroy (call->wait_cancel_source);
  g_clear_pointer (&call->wait_cancel_source, g_source_unref);
  if (call->outer_handler != 0)
    g_cancellable_disconnect (call->outer_cancellable, call->outer_handler);
  call->outer_handler = 0;
  if (call->message != NULL)
    g_signal_handlers_disconnect_by_data (call->message, call);
  g_clear_object (&call->message);
  g_clear_object (&call->attempt_cancellable);
  g_clear_object (&call->outer_cancellable);
  g_clear_object (&call->self);
  g_clear_pointer (&call->request, sight_model_request_unref);
  g_clear_pointer (&call->body, g_bytes_unref);
  g_free (call->path);
  g_free (call->host);
  g_clear_error (&call->last_error);
  g_free (call);
}

static void
end_attempt (Call *call)
{
  clear_source (&call->deadline_source);
  clear_source (&call->connect_source);
  if (call->outer_handler != 0)
    g_cancellable_disconnect (call->outer_cancellable, call->outer_handler);
  call->outer_handler = 0;
  if (call->message != NULL)
    g_signal_handlers_disconnect_by_data (call->message, call);
}

static void
outer_cancelled_cb (GCancellable *outer,
                    GCancellable *attempt)
{
  g_cancellable_cancel (attempt);
}

static gboolean
deadline_cb (gpointer user_data)
{
  Call *call = user_data;

  g_clear_pointer (&call->deadline_source, g_source_unref);
  call->timed_out = TRUE;
  g_cancellable_cancel (call->attempt_cancellable);
  return G_SOURCE_REMOVE;
}

static gboolean
connect_timeout_cb (gpointer user_data)
{
  Call *call = user_data;

  g_clear_pointer (&call->connect_source, g_source_unref);
  call->connect_timed_out = TRUE;
  g_cancellable_cancel (call->attempt_cancellable);
  return G_SOURCE_REMOVE;
}

static void
network_event_cb (SoupMessage        *message,
                  GSocketClientEvent  event,
                  GIOStream          *connection,
                  gpointer            user_data)
{
  Call *call = user_data;
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (call->self);

  if (event == G_SOCKET_CLIENT_RESOLVING && call->connect_source == NULL)
    call->connect_source = timeout_add (MAX (1, priv->connect_timeout / 1000),
                                          connect_timeout_cb, call);
  else if (event == G_SOCKET_CLIENT_COMPLETE)
    clear_source (&call->connect_source);
}

static void
return_error (GTask  *task,
              GError *error)
{
  Call *call = g_task_get_task_data (task);

  end_attempt (call);
  g_task_return_error (task, error);
}

static GError *
timeout_error (Call *call)
{
  g_autofree char *name = sight_model_provider_dup_name (call->self);

  return g_error_new (SIGHT_ERROR, SIGHT_ERROR_STEP_TIMEOUT,
                      "%s: no answer from the model before the step deadline (%u attempt%s)",
                      name, call->attempts, call->attempts == 1 ? "" : "s");
}

static gboolean
wait_done_cb (gpointer user_data)
{
  GTask *task = user_data;
  Call *call = g_task_get_task_data (task);

  g_clear_pointer (&call->wait_source, g_source_unref);
  if (call->wait_cancel_source != NULL)
    g_source_destroy (call->wait_cancel_source);
  g_clear_pointer (&call->wait_cancel_source, g_source_unref);
  start_attempt (task);
  return G_SOURCE_REMOVE;
}

static gboolean
wait_cancelled_cb (GCancellable *cancellable,
                   gpointer      user_data)
{
  GTask *task = user_data;
  Call *call = g_task_get_task_data (task);

  g_clear_pointer (&call->wait_cancel_source, g_source_unref);
  if (call->wait_source != NULL)
    g_source_destroy (call->wait_source);
  g_clear_pointer (&call->wait_source, g_source_unref);
  g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "The model call was cancelled");
  return G_SOURCE_REMOVE;
}

/* "120 s", "2.5 s", "0.4 s" */
static char *
format_seconds (GTimeSpan span)
{
  double seconds = (double) span / G_TIME_SPAN_SECOND;

  return seconds >= 10 ? g_strdup_printf ("%.0f s", seconds) : g_strdup_printf ("%.1f s", seconds);
}

/* Retries after @error when the policy allows, or returns it. */
static void
retry_or_fail (GTask      *task,
               GError     *error,
               gboolean    retryable,
               GTimeSpan   retry_after)
{
  Call *call = g_task_get_task_data (task);
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (call->self);
  GTimeSpan delay;
  gint64 now = g_get_monotonic_time ();

  end_attempt (call);
  if (!retryable || call->attempts > priv->max_retries)
    {
      if (retryable && call->attempts > 1)
        g_prefix_error (&error, "after %u attempts: ", call->attempts);
      g_task_return_error (task, error);
      return;
    }

  /* The endpoint said how long to wait: sooner meets another refusal, so a
   * wait the call has no time for ends it now, saying so. */
  if (retry_after > 0 &&
      (call->deadline_us != 0 ? now + retry_after >= call->deadline_us
                              : retry_after > SIGHT_MODEL_RETRY_AFTER_MAX_US))
    {
      g_autofree char *wait = format_seconds (retry_after);
      g_autofree char *left = call->deadline_us != 0
                              ? format_seconds (MAX (0, call->deadline_us - now))
                              : format_seconds (SIGHT_MODEL_RETRY_AFTER_MAX_US);
      GError *waited = g_error_new (error->domain, error->code,
                                    "%s; it asks to wait %s before another attempt, more than "
                                    "the %s %s",
                                    error->message, wait, left,
                                    call->deadline_us != 0 ? "left before the step's deadline"
                                                           : "a call without a deadline waits");

      g_error_free (error);
      g_task_return_error (task, waited);
      return;
    }
  delay = retry_after > 0 ? retry_after
                          : sight_model_backoff_delay (call->attempts - 1, priv->backoff_base,
                                                       priv->backoff_max, g_random_double ());
  if (call->deadline_us != 0 && now + delay >= call->deadline_us)
    {
      g_prefix_error (&error, "after %u attempt%s, no time left to retry before the deadline: ",
                      call->attempts, call->attempts == 1 ? "" : "s");
      g_task_return_error (task, error);
      return;
    }

  g_debug ("%s:%s: retry %u in %" G_GINT64_FORMAT " ms", priv->kind, priv->model,
           call->attempts, delay / 1000);
  g_clear_error (&call->last_error);
  call->last_error = error;

  call->wait_source = g_timeout_source_new (MAX (0, delay / 1000));
  g_source_set_callback (call->wait_source, wait_done_cb, g_object_ref (task), g_object_unref);
  g_source_attach (call->wait_source, g_main_context_get_thread_default ());
  if (call->outer_cancellable != NULL)
    {
      call->wait_cancel_source = g_cancellable_source_new (call->outer_cancellable);
      g_source_set_callback (call->wait_cancel_source, (GSourceFunc) wait_cancelled_cb,
                             g_object_ref (task), g_object_unref);
      g_source_attach (call->wait_cancel_source, g_main_context_get_thread_default ());
    }
}

typedef struct
{
  char *type;
  char *code;
  char *message;
} ErrorBody;

static void
parse_error_body (GBytes    *body,
                  ErrorBody *out)
{
  gsize len = 0;
  const char *data = body != NULL ? g_bytes_get_data (body, &len) : NULL;
  g_autoptr(JsonNode) root = NULL;
  JsonNode *error_node;
  JsonObject *error;

  *out = (ErrorBody) { 0 };
  if (data == NULL || len == 0)
    return;
  root = sight_json_parse (data, len, SIGHT_JSON_MAX_DEPTH, NULL);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return;
  error_node = json_object_get_member (json_node_get_object (root), "error");
  if (error_node == NULL)
    return;
  if (JSON_NODE_HOLDS_VALUE (error_node) && json_node_get_value_type (error_node) == G_TYPE_STRING)
    {
      out->message = g_strdup (json_node_get_string (error_node));
      return;
    }
  if (!JSON_NODE_HOLDS_OBJECT (error_node))
    return;
  error = json_node_get_object (error_node);
  out->type = g_strdup (json_object_get_string_member_with_default (error, "type", NULL));
  out->message = g_strdup (json_object_get_string_member_with_default (error, "message", NULL));
  if (json_object_has_member (error, "code"))
    {
      JsonNode *code = json_object_get_member (error, "code");

      if (JSON_NODE_HOLDS_VALUE (code) && json_node_get_value_type (code) == G_TYPE_STRING)
        out->code = g_strdup (json_node_get_string (code));
      else if (JSON_NODE_HOLDS_VALUE (code) && json_node_get_value_type (code) == G_TYPE_INT64)
        out->code = g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (code));
    }
}

void
_sight_model_set_not_json_error (GError      **error,
                                 const char   *data,
                                 gsize         length,
                                 const GError *parse_error)
{
  if (g_error_matches (parse_error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT))
    g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_OUTPUT_INVALID,
                 "the answer is not usable JSON: %s", parse_error->message);
  else
    g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_MODEL_OUTPUT_INVALID,
                 "the answer is not JSON (%" G_GSIZE_FORMAT " bytes%s)", length,
                 length > 0 && memchr (data, '<', MIN (length, 64)) ? ", looks like HTML" : "");
}

static void
error_body_clear (ErrorBody *body)
{
  g_clear_pointer (&body->type, g_free);
  g_clear_pointer (&body->code, g_free);
  g_clear_pointer (&body->message, g_free);
}

static gboolean
looks_like_html (GBytes *body)
{
  gsize len = 0;
  const char *data = body != NULL ? g_bytes_get_data (body, &len) : NULL;
  g_autofree char *head = NULL;

  if (data == NULL || len == 0)
    return FALSE;
  head = g_ascii_strdown (data, MIN (len, 256));
  return strstr (head, "<html") != NULL || strstr (head, "<!doctype") != NULL;
}

/* Some gateways (OpenRouter among them) answer 200 with only an error
 * object, its HTTP status as the error's numeric code. Returns that status
 * (502 when it names none), or 0 for a body that is not such an error. */
static guint
error_status_in_success (GBytes *body)
{
  gsize len = 0;
  const char *data = g_bytes_get_data (body, &len);
  g_autoptr(JsonNode) answer = sight_json_parse (data, len, SIGHT_JSON_MAX_DEPTH, NULL);
  JsonObject *root, *error;
  JsonNode *code;

  root = answer != NULL && JSON_NODE_HOLDS_OBJECT (answer) ? json_node_get_object (answer) : NULL;
  if (root == NULL || json_object_has_member (root, "choices") || json_object_has_member (root, "content")
      || !json_object_has_member (root, "error")
      || !JSON_NODE_HOLDS_OBJECT (json_object_get_member (root, "error")))
    return 0;
  error = json_object_get_object_member (root, "error");
  code = json_object_get_member (error, "code");
  if (code != NULL && JSON_NODE_HOLDS_VALUE (code) && json_node_get_value_type (code) == G_TYPE_INT64
      && json_node_get_int (code) >= 400 && json_node_get_int (code) <= 599)
    return (guint) json_node_get_int (code);
  return 502;
}

static void
handle_http_error (GTask       *task,
                   guint        status,
                   GBytes      *body)
{
  Call *call = g_task_get_task_data (task);
  SightModelProviderClass *klass = SIGHT_MODEL_PROVIDER_GET_CLASS (call->self);
  SoupMessageHeaders *headers = soup_message_get_response_headers (call->message);
  g_autofree char *name = sight_model_provider_dup_name (call->self);
  g_autofree char *detail = NULL;
  ErrorBody error_body;
  GTimeSpan retry_after = 0;
  gboolean retryable;
  GError *error;

  call->last_status = status;
  parse_error_body (body, &error_body);
  retryable = sight_model_should_retry (status, error_body.type, error_body.code,
                                        error_body.message,
                                        soup_message_headers_get_one (headers, "x-should-retry"));
  if (!sight_model_parse_retry_after (soup_message_headers_get_one (headers, "retry-after-ms"),
                                      soup_message_headers_get_one (headers, "retry-after"),
                                      g_get_real_time (), &retry_after))
    retry_after = 0;

  if (error_body.message != NULL || error_body.type != NULL)
    {
      g_autofree char *raw = g_strdup_printf ("%s%s%s",
                                              error_body.code ? error_body.code
                                                              : error_body.type ? error_body.type : "",
                                              error_body.message ? ": " : "",
                                              error_body.message ? error_body.message : "");

      detail = _sight_model_provider_redact (call->self, raw, 240);
    }
  else if (looks_like_html (body))
    detail = g_strdup ("an HTML error page, likely from a proxy");
  else
    detail = g_strdup (soup_status_get_phrase (status));

  if (status == 401 || status == 403)
    {
      SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (call->self);
      const char *env = priv->key_env != NULL ? priv->key_env
                        : klass->key_env_name != NULL ? klass->key_env_name (call->self)
                        : "the API key";

      error = g_error_new (SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE,
                           "%s: the endpoint refused the API key (HTTP %u); set %s to a valid key "
                           "(or the agent's apiKeyEnv in sightline.json)",
                           name, status, env);
    }
  else if (sight_model_is_quota_error (status, error_body.type, error_body.code, error_body.message))
    error = g_error_new (SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE,
                         "%s: quota or billing limit reached (HTTP 429, %s); not retried, "
                         "check the account's plan and billing", name, detail);
  else
    error = g_error_new (SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE,
                         "%s: HTTP %u from %s (%s)", name, status, call->host, detail);

  error_body_clear (&error_body);
  retry_or_fail (task, error, retryable, retry_after);
}

/* The attempt got no whole answer: cancelled, timed out or cut off. */
static void
attempt_failed (GTask  *task,
                GError *error)
{
  Call *call = g_task_get_task_data (task);
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (call->self);
  g_autofree char *name = sight_model_provider_dup_name (call->self);
  g_autofree char *reason = NULL;

  if (call->outer_cancellable != NULL && g_cancellable_is_cancelled (call->outer_cancellable))
    {
      return_error (task, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                               "The model call was cancelled"));
      return;
    }
  if (call->timed_out)
    {
      return_error (task, timeout_error (call));
      return;
    }
  call->last_status = 0;
  call->unreachable = call->connect_timed_out ||
                      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED) ||
                      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_HOST_UNREACHABLE) ||
                      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE) ||
                      error->domain == G_RESOLVER_ERROR;
  if (call->connect_timed_out)
    reason = g_strdup_printf ("no connection within %" G_GINT64_FORMAT " ms",
                              priv->connect_timeout / 1000);
  else
    reason = _sight_model_provider_redact (call->self, error->message, 200);
  g_debug ("%s: attempt %u to %s failed: %s", name, call->attempts, call->host, reason);
  retry_or_fail (task,
                 g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT)
                   ? g_error_new (SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE,
                                  "%s: the answer from %s stopped arriving: %s", name,
                                  call->host, reason)
                   : g_error_new (SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE,
                                  "%s: could not reach %s: %s", name, call->host, reason),
                 TRUE, 0);
}

/* The answer is over ANSWER_MAX_BYTES: the rest is not read, the connection
 * is dropped, and the call fails (another attempt would most likely get the
 * same). */
static void
answer_too_large (GTask    *task,
                  guint64   announced_bytes)
{
  Call *call = g_task_get_task_data (task);
  g_autofree char *name = sight_model_provider_dup_name (call->self);
  g_autofree char *what = NULL;

  g_cancellable_cancel (call->attempt_cancellable);
  what = announced_bytes > 0
           ? g_strdup_printf ("%" G_GUINT64_FORMAT " bytes announced; not read", announced_bytes)
           : g_strdup ("the rest was not read");
  return_error (task, g_error_new (SIGHT_ERROR, SIGHT_ERROR_MODEL_OUTPUT_INVALID,
                                   "%s: the answer from %s is over the %d MiB a model's answer "
                                   "may be (%s)",
                                   name, call->host, ANSWER_MAX_BYTES / (1024 * 1024), what));
}

/* The whole answer of an attempt is in: a response, an error to retry or
 * an error to return. */
static void
answered (GTask  *task,
          GBytes *body)
{
  Call *call = g_task_get_task_data (task);
  g_autofree char *name = sight_model_provider_dup_name (call->self);
  SoupMessageHeaders *headers = soup_message_get_response_headers (call->message);
  const char *request_id = soup_message_headers_get_one (headers, "x-request-id");
  guint status = soup_message_get_status (call->message);

  if (request_id == NULL)
    request_id = soup_message_headers_get_one (headers, "request-id");
  g_debug ("%s: attempt %u to %s: HTTP %u, %" G_GSIZE_FORMAT " bytes, request id %s",
           name, call->attempts, call->host, status, g_bytes_get_size (body),
           request_id ? request_id : "none");

  if (SOUP_STATUS_IS_SUCCESSFUL (status) && error_status_in_success (body) != 0)
    status = error_status_in_success (body);
  if (SOUP_STATUS_IS_SUCCESSFUL (status))
    {
      SightModelProviderClass *klass = SIGHT_MODEL_PROVIDER_GET_CLASS (call->self);
      g_autoptr(SightModelResponse) response = NULL;
      GError *parse_error = NULL;

      end_attempt (call);
      response = klass->parse (call->self, call->request, body,
                               g_bytes_get_size (call->body), &parse_error);
      if (response == NULL)
        {
          g_autofree char *message = _sight_model_provider_redact (call->self,
                                                                   parse_error->message, 400);

          g_task_return_new_error (task, SIGHT_ERROR, SIGHT_ERROR_MODEL_OUTPUT_INVALID,
                                   "%s: %s", name, message);
          g_error_free (parse_error);
          return;
        }
      response->attempts = call->attempts;
      if (response->request_id == NULL && request_id != NULL)
        response->request_id = g_strndup (request_id, 200);
      g_task_return_pointer (task, g_steal_pointer (&response),
                             (GDestroyNotify) sight_model_response_unref);
      return;
    }

  handle_http_error (task, status, body);
}

static void
answer_read_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) body = NULL;
  gboolean truncated = FALSE;

  body = sight_read_bounded_finish (G_INPUT_STREAM (source), result, &truncated, &error);
  if (body != NULL && truncated)
    {
      answer_too_large (task, 0);
      return;
    }
  if (body == NULL)
    attempt_failed (task, error);
  else
    answered (task, body);
}

static void
send_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  Call *call = g_task_get_task_data (task);
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (call->self);
  g_autoptr(GError) error = NULL;
  g_autoptr(GInputStream) stream = NULL;
  SoupMessageHeaders *headers;

  /* The reading holds the stream; dropped unread, libsoup closes the
   * connection. */
  stream = soup_session_send_finish (SOUP_SESSION (source), result, &error);
  if (stream == NULL)
    {
      attempt_failed (task, error);
      return;
    }
  headers = soup_message_get_response_headers (call->message);
  if (soup_message_headers_get_encoding (headers) == SOUP_ENCODING_CONTENT_LENGTH &&
      soup_message_headers_get_content_length (headers) > ANSWER_MAX_BYTES)
    {
      answer_too_large (task, soup_message_headers_get_content_length (headers));
      return;
    }
  sight_read_bounded_async (stream, ANSWER_MAX_BYTES, MAX (1, priv->read_idle_timeout / 1000),
                            call->attempt_cancellable, answer_read_cb, g_steal_pointer (&task));
}

static void
start_attempt (GTask *task)
{
  Call *call = g_task_get_task_data (task);
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (call->self);
  SightModelProviderClass *klass = SIGHT_MODEL_PROVIDER_GET_CLASS (call->self);
  g_autofree char *uri = NULL;
  g_autoptr(GUri) parsed = NULL;
  gint64 now = g_get_monotonic_time ();
  SoupMessageHeaders *headers;

  if (call->deadline_us != 0 && now >= call->deadline_us)
    {
      if (call->last_error != NULL)
        return_error (task, g_steal_pointer (&call->last_error));
      else
        return_error (task, timeout_error (call));
      return;
    }

  uri = g_strconcat (priv->base_url, call->path, NULL);
  parsed = g_uri_parse (uri, SOUP_HTTP_URI_FLAGS, NULL);
  if (parsed == NULL || g_uri_get_host (parsed) == NULL
      || (g_strcmp0 (g_uri_get_scheme (parsed), "http") != 0
          && g_strcmp0 (g_uri_get_scheme (parsed), "https") != 0))
    {
      g_autofree char *name = sight_model_provider_dup_name (call->self);

      return_error (task, g_error_new (SIGHT_ERROR, SIGHT_ERROR_MODEL_UNAVAILABLE,
                                       "%s: the base URL is not an http(s) URL; set a valid base "
                                       "URL (e.g. OPENAI_BASE_URL or ANTHROPIC_BASE_URL)", name));
      return;
    }
  g_free (call->host);
  call->host = g_strdup_printf ("%s:%d", g_uri_get_host (parsed), g_uri_get_port (parsed));

  g_clear_object (&call->message);
  call->message = soup_message_new_from_uri (SOUP_METHOD_POST, parsed);
  soup_message_set_request_body_from_bytes (call->message, "application/json", call->body);
  headers = soup_message_get_request_headers (call->message);
  soup_message_headers_replace (headers, "Accept", "application/json");
  klass->add_headers (call->self, headers);
  g_signal_connect (call->message, "network-event", G_CALLBACK (network_event_cb), call);

  call->attempts++;
  call->timed_out = FALSE;
  call->connect_timed_out = FALSE;
  g_clear_object (&call->attempt_cancellable);
  call->attempt_cancellable = g_cancellable_new ();
  if (call->outer_cancellable != NULL)
    call->outer_handler = g_cancellable_connect (call->outer_cancellable,
                                                 G_CALLBACK (outer_cancelled_cb),
                                                 g_object_ref (call->attempt_cancellable),
                                                 g_object_unref);
  if (call->deadline_us != 0)
    call->deadline_source = timeout_add (MAX (1, (call->deadline_us - now + 999) / 1000),
                                           deadline_cb, call);

  soup_session_send_async (priv->session, call->message, G_PRIORITY_DEFAULT,
                           call->attempt_cancellable, send_cb, g_object_ref (task));
}

void
sight_model_provider_complete_async (SightModelProvider  *self,
                                     SightModelRequest   *request,
                                     gint64               deadline_us,
                                     GCancellable        *cancellable,
                                     GAsyncReadyCallback  callback,
                                     gpointer             user_data)
{
  SightModelProviderPrivate *priv = sight_model_provider_get_instance_private (self);
  g_autoptr(GTask) task = NULL;
  GError *error = NULL;
  Call *call;

  g_return_if_fail (SIGHT_IS_MODEL_PROVIDER (self));
  g_return_if_fail (request != NULL);
  g_return_if_fail (!cancellable || G_IS_CANCELLABLE (cancellable));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_model_provider_complete_async);
  g_task_set_check_cancellable (task, FALSE);

  call = g_new0 (Call, 1);
  call->self = g_object_ref (self);
  call->request = sight_model_request_ref (request);
  call->deadline_us = deadline_us;
  call->outer_cancellable = cancellable ? g_object_ref (cancellable) : NULL;
  g_task_set_task_data (task, call, (GDestroyNotify) call_free);

  if (g_task_return_error_if_cancelled (task))
    return;

  call->body = SIGHT_MODEL_PROVIDER_GET_CLASS (self)->serialize (self, request, &call->path, &error);
  if (call->body == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  g_debug ("%s:%s: request of %" G_GSIZE_FORMAT " bytes", priv->kind, priv->model,
           g_bytes_get_size (call->body));
  start_attempt (task);
}

SightModelResponse *
sight_model_provider_complete_finish (SightModelProvider  *self,
                                      GAsyncResult        *result,
                                      GError             **error)
{
  g_return_val_if_fail (SIGHT_IS_MODEL_PROVIDER (self), NULL);
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/* The probe ------------------------------------------------------------- */

/* The smallest request that proves a model answers: one short question, a
 * few tokens of answer. */
#define PROBE_QUESTION   "Reply with the single word: ready"
#define PROBE_MAX_TOKENS 16

typedef struct
{
  gint64 started_us;
} Probe;

void
sight_model_probe_free (SightModelProbe *probe)
{
  if (probe == NULL)
    return;
  g_free (probe->model);
  g_free (probe->message);
  g_free (probe);
}

static SightModelProbeOutcome
probe_outcome (const Call   *call,
               const GError *error)
{
  if (g_error_matches (error, SIGHT_ERROR, SIGHT_ERROR_STEP_TIMEOUT))
    return SIGHT_MODEL_PROBE_TIMEOUT;
  if (call->last_status == 401 || call->last_status == 403)
    return SIGHT_MODEL_PROBE_KEY_REFUSED;
  if (call->last_status == 404)
    return SIGHT_MODEL_PROBE_MODEL_NOT_FOUND;
  if (call->last_status == 0 && call->unreachable)
    return SIGHT_MODEL_PROBE_UNREACHABLE;
  return SIGHT_MODEL_PROBE_FAILED;
}

static void
probe_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  SightModelProvider *self = SIGHT_MODEL_PROVIDER (source);
  Probe *probe_data = g_task_get_task_data (task);
  Call *call = g_task_get_task_data (G_TASK (result));
  g_autoptr(SightModelResponse) response = NULL;
  g_autoptr(GError) error = NULL;
  SightModelProbe *probe;

  response = sight_model_provider_complete_finish (self, result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  probe = g_new0 (SightModelProbe, 1);
  probe->latency_ms = (g_get_monotonic_time () - probe_data->started_us) / 1000;
  probe->http_status = call->last_status;
  if (response != NULL)
    {
      probe->outcome = SIGHT_MODEL_PROBE_OK;
      probe->model = g_strdup (response->model != NULL ? response->model
                                                       : sight_model_provider_get_model (self));
      probe->usage = response->usage;
    }
  else
    {
      probe->outcome = probe_outcome (call, error);
      probe->message = g_strdup (error->message);
    }
  g_task_return_pointer (task, probe, (GDestroyNotify) sight_model_probe_free);
}

void
sight_model_provider_probe_async (SightModelProvider  *self,
                                  guint                timeout_ms,
                                  GCancellable        *cancellable,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  g_autoptr(SightModelRequest) request = NULL;
  GTask *task;
  Probe *probe_data;

  g_return_if_fail (SIGHT_IS_MODEL_PROVIDER (self));
  g_return_if_fail (timeout_ms > 0);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_model_provider_probe_async);
  probe_data = g_new0 (Probe, 1);
  probe_data->started_us = g_get_monotonic_time ();
  g_task_set_task_data (task, probe_data, g_free);

  request = sight_model_request_new ();
  sight_model_request_add_message (request, SIGHT_MODEL_ROLE_USER, PROBE_QUESTION);
  request->max_tokens = PROBE_MAX_TOKENS;
  /* One question, answered or not: a retry would only hide how the
   * endpoint answered the first time. */
  sight_model_provider_set_max_retries (self, 0);
  sight_model_provider_complete_async (self, request,
                                       probe_data->started_us + (gint64) timeout_ms * 1000,
                                       cancellable, probe_cb, task);
}

SightModelProbe *
sight_model_provider_probe_finish (SightModelProvider  *self,
                                   GAsyncResult        *result,
                                   GError             **error)
{
  g_return_val_if_fail (SIGHT_IS_MODEL_PROVIDER (self), NULL);
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
