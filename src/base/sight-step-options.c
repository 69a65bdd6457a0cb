/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-step-options"

#include "config.h"

#include "sight-step-options.h"

#include <math.h>
#include <string.h>

#include "sight-base-enums.h"
#include "sight-enum.h"
#include "sight-error.h"
#include "sight-params.h"

const char *
sight_step_kind_to_string (SightStepKind kind)
{
  g_return_val_if_fail (kind >= SIGHT_STEP_ACT && kind <= SIGHT_STEP_EXTRACT, NULL);
  return sight_enum_to_nick (SIGHT_TYPE_STEP_KIND, kind);
}

gboolean
sight_step_kind_from_string (const char    *name,
                             SightStepKind *out_kind)
{
  int value;

  if (!sight_enum_from_nick (SIGHT_TYPE_STEP_KIND, name, &value))
    return FALSE;
  *out_kind = value;
  return TRUE;
}

const char * const *
sight_step_kind_get_names (void)
{
  static const char **names;
  static gsize initialized;

  if (g_once_init_enter (&initialized))
    {
      GEnumClass *klass = g_type_class_ref (SIGHT_TYPE_STEP_KIND);

      /* the class stays referenced: its nicks are the names */
      names = g_new0 (const char *, klass->n_values + 2);
      names[0] = SIGHT_STEP_DIRECT_NAME;
      for (guint i = 0; i < klass->n_values; i++)
        names[klass->values[i].value + 1] = klass->values[i].value_nick;
      g_once_init_leave (&initialized, 1);
    }
  return names;
}

gboolean
sight_vision_mode_from_json (JsonNode         *node,
                             const char       *what,
                             SightVisionMode  *out_mode,
                             GError          **error)
{
  if (node != NULL && JSON_NODE_HOLDS_VALUE (node))
    {
      if (json_node_get_value_type (node) == G_TYPE_BOOLEAN)
        {
          *out_mode = json_node_get_boolean (node) ? SIGHT_VISION_ON : SIGHT_VISION_OFF;
          return TRUE;
        }
      if (json_node_get_value_type (node) == G_TYPE_STRING &&
          g_str_equal (json_node_get_string (node), "only"))
        {
          *out_mode = SIGHT_VISION_ONLY;
          return TRUE;
        }
    }
  g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
               "%s must be false, true or \"only\"", what);
  return FALSE;
}

const char *
sight_vision_mode_to_string (SightVisionMode mode)
{
  switch (mode)
    {
    case SIGHT_VISION_ON:
      return "true";
    case SIGHT_VISION_ONLY:
      return "only";
    case SIGHT_VISION_OFF:
    case SIGHT_VISION_UNSET:
    default:
      return "false";
    }
}

SightStepOptions *
sight_step_options_new (SightStepKind kind)
{
  SightStepOptions *options = g_new0 (SightStepOptions, 1);

  options->kind = kind;
  options->vision = SIGHT_VISION_UNSET;
  return options;
}

void
sight_step_options_free (SightStepOptions *options)
{
  if (options == NULL)
    return;
  g_free (options->agent);
  g_clear_pointer (&options->params, json_node_unref);
  g_clear_pointer (&options->schema, sight_json_schema_unref);
  g_free (options);
}

char *
sight_instruction_normalize (const char  *instruction,
                             gssize       length,
                             GError     **error)
{
  g_autofree char *nfc = NULL;
  gsize len;

  if (instruction == NULL)
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                           "the instruction is missing");
      return NULL;
    }
  if (!g_utf8_validate_len (instruction, length < 0 ? strlen (instruction) : (gsize) length, NULL))
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                           "the instruction is not valid UTF-8");
      return NULL;
    }
  nfc = g_utf8_normalize (instruction, length, G_NORMALIZE_NFC);
  if (nfc == NULL)
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                           "the instruction is not valid UTF-8");
      return NULL;
    }
  len = strlen (nfc);
  if (len == 0)
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                           "the instruction is empty");
      return NULL;
    }
  if (len > SIGHT_INSTRUCTION_MAX_BYTES)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "the instruction is %" G_GSIZE_FORMAT " UTF-8 bytes after NFC, more than "
                   "the %d allowed", len, SIGHT_INSTRUCTION_MAX_BYTES);
      return NULL;
    }
  return g_steal_pointer (&nfc);
}

/* A positive integer as JSON: an int64, or a double with an integral value. */
static gboolean
get_positive_integer (JsonNode    *node,
                      const char  *name,
                      gint64       max,
                      const char  *what,
                      gint64      *out,
                      GError     **error)
{
  if (node != NULL && JSON_NODE_HOLDS_VALUE (node))
    {
      GType t = json_node_get_value_type (node);

      if (t == G_TYPE_INT64)
        {
          gint64 v = json_node_get_int (node);

          if (v >= 1 && v <= max)
            {
              *out = v;
              return TRUE;
            }
        }
      else if (t == G_TYPE_DOUBLE)
        {
          double d = json_node_get_double (node);

          if (isfinite (d) && floor (d) == d && d >= 1 && d <= (double) max)
            {
              *out = (gint64) d;
              return TRUE;
            }
        }
    }
  g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
               "option %s must be %s", name, what);
  return FALSE;
}

typedef enum {
  OPT_TIMEOUT,
  OPT_MAX_STEPS,
  OPT_MAX_MODEL_CALLS,
  OPT_INTERVAL,
  OPT_SCREENSHOT,
  OPT_VISION,
  OPT_AGENT,
  OPT_PARAMS,
  OPT_SCHEMA,
} OptionId;

static const struct {
  const char *name;
  OptionId    id;
  /* bit per SightStepKind: which methods take it */
  guint       taken_by;
} option_table[] = {
#define K(k) (1u << (k))
  { "timeout", OPT_TIMEOUT,
    K (SIGHT_STEP_ACT) | K (SIGHT_STEP_ASSERT) | K (SIGHT_STEP_WAIT_FOR) | K (SIGHT_STEP_EXTRACT) },
  { "maxSteps", OPT_MAX_STEPS, K (SIGHT_STEP_ACT) },
  { "maxModelCalls", OPT_MAX_MODEL_CALLS, K (SIGHT_STEP_ACT) | K (SIGHT_STEP_WAIT_FOR) },
  { "interval", OPT_INTERVAL, K (SIGHT_STEP_WAIT_FOR) },
  { "screenshot", OPT_SCREENSHOT, K (SIGHT_STEP_ASSERT) },
  { "vision", OPT_VISION, K (SIGHT_STEP_ASSERT) | K (SIGHT_STEP_WAIT_FOR) | K (SIGHT_STEP_EXTRACT) },
  { "agent", OPT_AGENT,
    K (SIGHT_STEP_ACT) | K (SIGHT_STEP_ASSERT) | K (SIGHT_STEP_WAIT_FOR) | K (SIGHT_STEP_EXTRACT) },
  { "params", OPT_PARAMS, K (SIGHT_STEP_ACT) },
  { "schema", OPT_SCHEMA, K (SIGHT_STEP_EXTRACT) },
#undef K
};

static gboolean
parse_option (SightStepOptions  *options,
              OptionId           id,
              const char        *name,
              JsonNode          *value,
              GError           **error)
{
  switch (id)
    {
    case OPT_TIMEOUT:
      return get_positive_integer (value, name, SIGHT_MAX_SAFE_INTEGER,
                                   "a positive safe integer (milliseconds)",
                                   &options->timeout_ms, error);
    case OPT_MAX_STEPS:
      return get_positive_integer (value, name, SIGHT_MAX_SAFE_INTEGER, "a positive integer",
                                   &options->max_steps, error);
    case OPT_MAX_MODEL_CALLS:
      return get_positive_integer (value, name, SIGHT_MAX_SAFE_INTEGER, "a positive integer",
                                   &options->max_model_calls, error);
    case OPT_INTERVAL:
      if (!get_positive_integer (value, name, SIGHT_WAIT_FOR_INTERVAL_MAX,
                                 "an integer from 100 to 60000 (milliseconds)",
                                 &options->interval_ms, error))
        return FALSE;
      if (options->interval_ms < SIGHT_WAIT_FOR_INTERVAL_MIN)
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "option interval must be an integer from 100 to 60000 (milliseconds)");
          return FALSE;
        }
      return TRUE;
    case OPT_SCREENSHOT:
      if (!JSON_NODE_HOLDS_VALUE (value) || json_node_get_value_type (value) != G_TYPE_BOOLEAN)
        {
          g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                               "option screenshot must be a boolean");
          return FALSE;
        }
      options->has_screenshot = TRUE;
      options->screenshot = json_node_get_boolean (value);
      return TRUE;
    case OPT_VISION:
      return sight_vision_mode_from_json (value, "option vision", &options->vision, error);
    case OPT_AGENT:
      if (!JSON_NODE_HOLDS_VALUE (value) || json_node_get_value_type (value) != G_TYPE_STRING ||
          *json_node_get_string (value) == '\0')
        {
          g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                               "option agent must name an agent");
          return FALSE;
        }
      g_free (options->agent);
      options->agent = g_strdup (json_node_get_string (value));
      return TRUE;
    case OPT_PARAMS:
      if (!sight_params_validate (value, error))
        return FALSE;
      g_clear_pointer (&options->params, json_node_unref);
      options->params = json_node_copy (value);
      return TRUE;
    case OPT_SCHEMA:
      g_clear_pointer (&options->schema, sight_json_schema_unref);
      options->schema = sight_json_schema_new (value, error);
      return options->schema != NULL;
    default:
      g_assert_not_reached ();
    }
}

SightStepOptions *
sight_step_options_parse (SightStepKind   kind,
                          JsonObject     *json,
                          GError        **error)
{
  g_autoptr(SightStepOptions) options = sight_step_options_new (kind);
  JsonObjectIter iter;
  const char *name;
  JsonNode *value;

  g_return_val_if_fail (kind >= SIGHT_STEP_ACT && kind <= SIGHT_STEP_EXTRACT, NULL);

  if (json != NULL)
    {
      /* act does not take schema or vision: that is a capability it lacks, reported
       * before any other problem with the options. */
      if (kind == SIGHT_STEP_ACT)
        for (guint i = 0; i < 2; i++)
          {
            const char *name_i = i == 0 ? "schema" : "vision";

            if (json_object_has_member (json, name_i))
              {
                g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_UNSUPPORTED_CAPABILITY,
                             "act does not take %s%s", name_i,
                             i == 0 ? "; use extract for structured output"
                                    : "; its pixel path is the screenshot and tap_at tools");
                return NULL;
              }
          }

      json_object_iter_init_ordered (&iter, json);
      while (json_object_iter_next_ordered (&iter, &name, &value))
        {
          gboolean found = FALSE;

          for (guint i = 0; i < G_N_ELEMENTS (option_table); i++)
            {
              if (!g_str_equal (option_table[i].name, name))
                continue;
              found = TRUE;
              if (!(option_table[i].taken_by & (1u << kind)))
                {
                  g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                               "%s does not take the option %s", sight_step_kind_to_string (kind),
                               name);
                  return NULL;
                }
              if (!parse_option (options, option_table[i].id, name, value, error))
                return NULL;
            }
          if (!found)
            {
              g_autofree char *safe = sight_text_sanitize (name, 64);

              g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                           "unknown option \"%s\" for %s", safe,
                           sight_step_kind_to_string (kind));
              return NULL;
            }
        }
    }

  if (kind == SIGHT_STEP_EXTRACT && options->schema == NULL)
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                           "extract needs a schema");
      return NULL;
    }
  return g_steal_pointer (&options);
}

SightStepOptions *
sight_step_options_parse_step (JsonObject  *step,
                               char       **out_instruction,
                               GError     **error)
{
  g_autoptr(JsonObject) rest = json_object_new ();
  g_autofree char *instruction = NULL;
  SightStepKind kind = SIGHT_STEP_ACT;
  gboolean have_kind = FALSE;
  SightStepOptions *options;
  JsonObjectIter iter;
  const char *name;
  JsonNode *value;

  g_return_val_if_fail (step != NULL, NULL);

  json_object_iter_init_ordered (&iter, step);
  while (json_object_iter_next_ordered (&iter, &name, &value))
    {
      SightStepKind k;

      if (!sight_step_kind_from_string (name, &k))
        {
          json_object_set_member (rest, name, json_node_ref (value));
          continue;
        }
      if (have_kind)
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "a step has both %s and %s", sight_step_kind_to_string (kind), name);
          return NULL;
        }
      have_kind = TRUE;
      kind = k;
      if (!JSON_NODE_HOLDS_VALUE (value) || json_node_get_value_type (value) != G_TYPE_STRING)
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "%s must be a string instruction", name);
          return NULL;
        }
      instruction = sight_instruction_normalize (json_node_get_string (value), -1, error);
      if (instruction == NULL)
        return NULL;
    }
  if (!have_kind)
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                           "a step needs one of act, assert, waitFor or extract");
      return NULL;
    }

  options = sight_step_options_parse (kind, rest, error);
  if (options != NULL && out_instruction != NULL)
    *out_instruction = g_steal_pointer (&instruction);
  return options;
}
