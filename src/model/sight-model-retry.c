/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-model-retry"

#include "config.h"

#include "sight-model-retry.h"

#include <libsoup/soup.h>
#include <math.h>
#include <string.h>

GTimeSpan
sight_model_backoff_delay (guint     retry_index,
                           GTimeSpan base_us,
                           GTimeSpan max_us,
                           double    jitter)
{
  GTimeSpan delay = base_us;

  if (base_us <= 0)
    return 0;
  for (guint i = 0; i < retry_index && delay < max_us; i++)
    delay *= 2;
  delay = MIN (delay, max_us);
  jitter = CLAMP (jitter, 0.0, 1.0);
  return (GTimeSpan) llround ((double) delay * (1.0 - 0.25 * jitter));
}

gboolean
sight_model_parse_retry_after (const char *retry_after_ms,
                               const char *retry_after,
                               gint64      now_unix_us,
                               GTimeSpan  *out_delay_us)
{
  double value = -1;
  gboolean have = FALSE;

  g_return_val_if_fail (out_delay_us != NULL, FALSE);

  if (retry_after_ms != NULL)
    {
      char *end = NULL;
      double ms = g_ascii_strtod (retry_after_ms, &end);

      if (end != retry_after_ms && *end == '\0' && isfinite (ms))
        {
          value = ms * 1000.0;
          have = TRUE;
        }
    }

  if (!have && retry_after != NULL)
    {
      char *end = NULL;
      double seconds = g_ascii_strtod (retry_after, &end);

      if (end != retry_after && *end == '\0' && isfinite (seconds))
        {
          value = seconds * G_USEC_PER_SEC;
          have = TRUE;
        }
      else
        {
          g_autoptr(GDateTime) date = soup_date_time_new_from_http_string (retry_after);

          if (date != NULL)
            {
              value = (double) (g_date_time_to_unix (date) * G_USEC_PER_SEC - now_unix_us);
              have = TRUE;
            }
        }
    }

  if (!have || !(value > 0))
    return FALSE;
  *out_delay_us = (GTimeSpan) llround (MIN (value, (double) G_TIME_SPAN_DAY));
  return TRUE;
}

static gboolean
mentions (const char *text,
          const char *needle)
{
  g_autofree char *lower = NULL;

  if (text == NULL)
    return FALSE;
  lower = g_ascii_strdown (text, -1);
  return strstr (lower, needle) != NULL;
}

gboolean
sight_model_is_quota_error (guint       status,
                            const char *error_type,
                            const char *error_code,
                            const char *error_message)
{
  const char *words[] = { "quota", "billing", "spend limit", "spending limit", "credit balance" };

  if (status != 429)
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (words); i++)
    if (mentions (error_type, words[i]) || mentions (error_code, words[i])
        || mentions (error_message, words[i]))
      return TRUE;
  return FALSE;
}

gboolean
sight_model_should_retry (guint       status,
                          const char *error_type,
                          const char *error_code,
                          const char *error_message,
                          const char *should_retry)
{
  if (status == 0)
    return TRUE;
  if (sight_model_is_quota_error (status, error_type, error_code, error_message))
    return FALSE;
  if (g_strcmp0 (should_retry, "true") == 0)
    return TRUE;
  if (g_strcmp0 (should_retry, "false") == 0)
    return FALSE;
  return status == 408 || status == 409 || status == 429 || status >= 500;
}
