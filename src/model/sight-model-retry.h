/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The retry policy of the official OpenAI and Anthropic SDKs, as pure
 * functions so the real schedule is testable without waiting for it.
 *
 * At most SIGHT_MODEL_MAX_RETRIES retries. The n-th retry (0-based) waits
 * min(base * 2^n, max) scaled by a jitter factor in (0.75, 1], unless the
 * response's retry-after-ms or retry-after asks for a wait. Unlike the SDKs,
 * which fall back to their own short schedule past 60 s, an asked wait is
 * honoured when the call has the time for it and ends the call at once when
 * it has not (SIGHT_MODEL_RETRY_AFTER_MAX_US for a call without a deadline):
 * retrying sooner than asked only meets another 429. */

#define SIGHT_MODEL_MAX_RETRIES            2
#define SIGHT_MODEL_BACKOFF_BASE_US        (500 * G_TIME_SPAN_MILLISECOND)
#define SIGHT_MODEL_BACKOFF_MAX_US         (8 * G_TIME_SPAN_SECOND)
#define SIGHT_MODEL_RETRY_AFTER_MAX_US     (60 * G_TIME_SPAN_SECOND)
#define SIGHT_MODEL_CONNECT_TIMEOUT_US     (5 * G_TIME_SPAN_SECOND)
/* An answer whose bytes stop coming for this long is a dead connection
 * (retried), not a slow model: a model that thinks does so before its
 * answer's headers, which only the step's deadline bounds. */
#define SIGHT_MODEL_READ_IDLE_TIMEOUT_US   (20 * G_TIME_SPAN_SECOND)

/* @jitter is a uniform random number in [0, 1): the wait is scaled by
 * (1 - 0.25 * jitter). */
GTimeSpan   sight_model_backoff_delay      (guint       retry_index,
                                            GTimeSpan   base_us,
                                            GTimeSpan   max_us,
                                            double      jitter);

/* Parses retry-after-ms (milliseconds, may be fractional) and then
 * retry-after (seconds, or an HTTP date relative to @now_unix_us). Returns
 * TRUE with the wait in @out_delay_us when one is given and is over 0 (at
 * most a day: anything longer is a day). */
gboolean    sight_model_parse_retry_after  (const char *retry_after_ms,
                                            const char *retry_after,
                                            gint64      now_unix_us,
                                            GTimeSpan  *out_delay_us);

/* Whether a failed HTTP attempt may be retried. @status 0 means no HTTP
 * response at all (connection refused, reset, truncated): retried.
 * @error_type, @error_code and @error_message come from the provider's error
 * body (any may be NULL); a 429 that is about quota, billing or a spend limit
 * is never retried. @should_retry is the x-should-retry header, which wins
 * over the status as in the SDKs. */
gboolean    sight_model_should_retry       (guint       status,
                                            const char *error_type,
                                            const char *error_code,
                                            const char *error_message,
                                            const char *should_retry);

/* TRUE for a 429 whose body says quota, billing or spend limit. */
gboolean    sight_model_is_quota_error     (guint       status,
                                            const char *error_type,
                                            const char *error_code,
                                            const char *error_message);

G_END_DECLS
