/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-step-result"

#include "config.h"

#include "sight-step-result.h"

#include <string.h>

#include "sight-agent-enums.h"
#include "sight-enum.h"
#include "sight-secrets.h"

/* Explanations are bounded prose (spec: "Sanitized, bounded prose"). */
#define EXPLANATION_MAX_BYTES 2048

G_DEFINE_BOXED_TYPE (SightStepResult, sight_step_result,
                     sight_step_result_ref, sight_step_result_unref)

const char *
sight_step_verdict_to_string (SightStepVerdict verdict)
{
  return sight_enum_to_nick (SIGHT_TYPE_STEP_VERDICT, verdict);
}

SightStepShot
sight_step_shot_for (gboolean      screenshot,
                     const GError *error,
                     gboolean      secret_filled)
{
  if (!screenshot)
    return SIGHT_STEP_SHOT_NONE;
  if (g_error_matches (error, SIGHT_ERROR, SIGHT_ERROR_ASSERTION_FAILED) && !secret_filled)
    return SIGHT_STEP_SHOT_EVIDENCE;
  return SIGHT_STEP_SHOT_PAGE;
}

char *
sight_step_evidence_name (guint            number,
                          SightImageFormat format,
                          gboolean         unique)
{
  return g_strdup_printf ("step-%u-evidence%s.%s", number, unique ? "-XXXXXX" : "",
                          sight_image_format_extension (format));
}

SightStepResult *
sight_step_result_new (SightStepKind  kind,
                       const char    *instruction)
{
  SightStepResult *self = g_new0 (SightStepResult, 1);

  g_atomic_ref_count_init (&self->ref_count);
  self->kind = kind;
  self->instruction = sight_secrets_redact (instruction);
  self->verdict = SIGHT_STEP_VERDICT_PASS;
  self->action_log = g_ptr_array_new_with_free_func (g_free);
  self->performed = json_array_new ();
  self->injections = g_ptr_array_new_with_free_func (g_free);
  self->navigation_blocked = g_ptr_array_new_with_free_func (g_free);
  sight_usage_init (&self->usage);
  return self;
}

SightStepResult *
sight_step_result_ref (SightStepResult *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

void
sight_step_result_unref (SightStepResult *self)
{
  g_return_if_fail (self != NULL);
  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;
  g_free (self->instruction);
  g_clear_error (&self->error);
  g_free (self->summary);
  g_clear_pointer (&self->value, json_node_unref);
  g_clear_pointer (&self->cache, json_node_unref);
  g_free (self->screenshot_path);
  g_free (self->vision_degraded);
  g_ptr_array_unref (self->action_log);
  json_array_unref (self->performed);
  g_ptr_array_unref (self->injections);
  g_ptr_array_unref (self->navigation_blocked);
  g_free (self->url);
  g_free (self);
}

void
sight_step_result_take_error (SightStepResult *self,
                              GError          *error)
{
  g_autofree char *redacted = NULL;
  g_autofree char *bounded = NULL;
  SightErrorCode code = SIGHT_ERROR_INTERNAL;

  g_return_if_fail (self != NULL);
  g_return_if_fail (error != NULL);

  if (error->domain == SIGHT_ERROR)
    code = error->code;
  redacted = sight_secrets_redact (error->message);
  bounded = sight_text_sanitize (redacted, EXPLANATION_MAX_BYTES);

  g_clear_error (&self->error);
  self->error = g_error_new_literal (SIGHT_ERROR, code, bounded);
  self->blocked = sight_error_code_is_blocked (code);
  self->verdict = self->blocked ? SIGHT_STEP_VERDICT_BLOCKED : SIGHT_STEP_VERDICT_FAIL;
  g_error_free (error);
}

gboolean
sight_step_result_passed (SightStepResult *self)
{
  return self->error == NULL;
}

gboolean
sight_step_result_propagate (SightStepResult  *self,
                             GError          **error)
{
  if (self->error == NULL)
    return TRUE;
  g_propagate_error (error, g_error_copy (self->error));
  return FALSE;
}

static void
add_string (JsonBuilder *b,
            const char  *name,
            const char  *value)
{
  g_autofree char *redacted = NULL;

  if (value == NULL)
    return;
  redacted = sight_secrets_redact (value);
  json_builder_set_member_name (b, name);
  json_builder_add_string_value (b, redacted);
}

static void
add_strings (JsonBuilder *b,
             const char  *name,
             GPtrArray   *strings)
{
  json_builder_set_member_name (b, name);
  json_builder_begin_array (b);
  for (guint i = 0; i < strings->len; i++)
    {
      g_autofree char *redacted = sight_secrets_redact (g_ptr_array_index (strings, i));
      json_builder_add_string_value (b, redacted);
    }
  json_builder_end_array (b);
}

/* Cuts @text (of @length bytes) to at most @max_bytes, marked. */
static char *
clip_value_text (char  *text,
                 gsize  length,
                 gsize  max_bytes)
{
  g_autofree char *marker = NULL;
  char *out;
  const char *end;

  if (length <= max_bytes)
    return text;
  marker = g_strdup_printf ("… (truncated: %" G_GSIZE_FORMAT " bytes in all)", length);
  end = text + (max_bytes > strlen (marker) ? max_bytes - strlen (marker) : 0);
  /* not inside a UTF-8 sequence */
  while (end > text && (*end & 0xC0) == 0x80)
    end--;
  out = g_strdup_printf ("%.*s%s", (int) (end - text), text, marker);
  g_free (text);
  return out;
}

char *
sight_step_result_dup_value_text (SightStepResult *self,
                                  gboolean         pretty,
                                  gsize            max_bytes)
{
  g_autoptr(JsonNode) redacted = NULL;
  char *text;

  if (self->value == NULL)
    return NULL;
  redacted = sight_secrets_redact_json (self->value);
  text = json_to_string (redacted, pretty);
  return clip_value_text (text, strlen (text), max_bytes);
}

static void
add_value (JsonBuilder     *b,
           SightStepResult *self)
{
  JsonNode *redacted = sight_secrets_redact_json (self->value);
  char *text = json_to_string (redacted, FALSE);
  gsize length = strlen (text);

  if (length <= SIGHT_STEP_RESULT_MAX_VALUE_BYTES)
    {
      g_free (text);
      json_builder_set_member_name (b, "value");
      json_builder_add_value (b, redacted);
      return;
    }
  json_node_unref (redacted);
  text = clip_value_text (text, length, SIGHT_STEP_RESULT_VALUE_PREVIEW_BYTES);
  json_builder_set_member_name (b, "valueTruncated");
  json_builder_add_boolean_value (b, TRUE);
  json_builder_set_member_name (b, "valueBytes");
  json_builder_add_int_value (b, (gint64) length);
  json_builder_set_member_name (b, "valuePreview");
  json_builder_add_string_value (b, text);
  g_free (text);
}

JsonNode *
sight_step_result_to_json (SightStepResult *self)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  add_string (b, "kind", self->direct ? "do" : sight_step_kind_to_string (self->kind));
  add_string (b, "instruction", self->instruction);
  add_string (b, "verdict", sight_step_verdict_to_string (self->verdict));
  if (self->error != NULL)
    {
      add_string (b, "code", sight_error_code_to_string (self->error->code));
      add_string (b, "explanation", self->error->message);
    }
  json_builder_set_member_name (b, "blocked");
  json_builder_add_boolean_value (b, self->blocked);
  add_string (b, "summary", self->summary);
  if (self->has_judgment)
    {
      json_builder_set_member_name (b, "judgment");
      json_builder_add_boolean_value (b, self->judgment);
    }
  if (self->value != NULL)
    add_value (b, self);
  json_builder_set_member_name (b, "modelCalls");
  json_builder_add_int_value (b, self->model_calls);
  json_builder_set_member_name (b, "actions");
  json_builder_add_int_value (b, self->actions);
  json_builder_set_member_name (b, "repairRounds");
  json_builder_add_int_value (b, self->repair_rounds);
  json_builder_set_member_name (b, "usage");
  json_builder_add_value (b, sight_usage_to_json (&self->usage));
  if (self->cache != NULL)
    {
      json_builder_set_member_name (b, "cache");
      json_builder_add_value (b, sight_secrets_redact_json (self->cache));
    }
  add_string (b, "screenshot", self->screenshot_path);
  json_builder_set_member_name (b, "visionInput");
  json_builder_add_boolean_value (b, self->vision_input);
  add_string (b, "visionDegraded", self->vision_degraded);
  json_builder_set_member_name (b, "metrics");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "pixelBytes");
  json_builder_add_int_value (b, (gint64) MIN (self->pixel_bytes, SIGHT_USAGE_MAX_SAFE));
  json_builder_set_member_name (b, "imagesSent");
  json_builder_add_int_value (b, self->images_sent);
  json_builder_set_member_name (b, "observations");
  json_builder_add_int_value (b, self->observations);
  json_builder_set_member_name (b, "durationMs");
  json_builder_add_int_value (b, self->duration_ms);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "secretFilled");
  json_builder_add_boolean_value (b, self->secret_filled);
  add_strings (b, "actionLog", self->action_log);
  {
    g_autoptr(JsonNode) performed = json_node_new (JSON_NODE_ARRAY);

    json_node_set_array (performed, self->performed);
    json_builder_set_member_name (b, "performed");
    json_builder_add_value (b, sight_secrets_redact_json (performed));
  }
  add_strings (b, "injections", self->injections);
  if (self->navigation_blocked->len > 0)
    add_strings (b, "navigationBlocked", self->navigation_blocked);
  add_string (b, "url", self->url);
  json_builder_end_object (b);

  return json_builder_get_root (b);
}

SightErrorCode
sight_step_blocked_reason_code (const char *reason)
{
  if (g_strcmp0 (reason, "credentials") == 0)
    return SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE;
  if (g_strcmp0 (reason, "seed_data") == 0)
    return SIGHT_ERROR_SEED_DATA_MISSING;
  if (g_strcmp0 (reason, "setup") == 0)
    return SIGHT_ERROR_TEST_SETUP_FAILED;
  if (g_strcmp0 (reason, "automation") == 0)
    return SIGHT_ERROR_AUTOMATION_UNSUPPORTED;
  return SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE;
}
