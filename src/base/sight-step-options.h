/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "sight-json-schema.h"

G_BEGIN_DECLS

/* The four agent steps of spec/agent-api.txt and their options, validated before
 * the step opens. */

typedef enum {
  SIGHT_STEP_ACT,
  SIGHT_STEP_ASSERT,
  SIGHT_STEP_WAIT_FOR,   /*< nick=waitFor >*/
  SIGHT_STEP_EXTRACT,
} SightStepKind;

/* "act", "assert", "waitFor", "extract" */
const char      *sight_step_kind_to_string   (SightStepKind  kind);
gboolean         sight_step_kind_from_string (const char    *name,
                                              SightStepKind *out_kind);

/* A direct step's name ("do" in a test file, a skill or the app): the one
 * kind of step that is no SightStepKind, as it runs with no model. */
#define SIGHT_STEP_DIRECT_NAME "do"

/* Every kind of step a test file, a skill or the app may name, in this
 * order: SIGHT_STEP_DIRECT_NAME, then SightStepKind's nicks in its order, so
 * that a kind's index is its value plus one ("do", "act", "assert",
 * "waitFor", "extract"); NULL-terminated, never freed. */
const char * const *sight_step_kind_get_names (void);

/* Written as JSON false, true or "only", not by nick. */
typedef enum /*< skip >*/ {
  SIGHT_VISION_UNSET = -1,
  SIGHT_VISION_OFF = 0,   /* false: the tree */
  SIGHT_VISION_ON = 1,    /* true: the tree and a masked screenshot */
  SIGHT_VISION_ONLY = 2,  /* "only": the screenshot, no tree */
} SightVisionMode;

/* false | true | "only"; anything else is INVALID_ARGUMENT naming @what. */
gboolean         sight_vision_mode_from_json (JsonNode        *node,
                                              const char      *what,
                                              SightVisionMode *out_mode,
                                              GError         **error);
/* "false", "true", "only" */
const char      *sight_vision_mode_to_string (SightVisionMode  mode);

/* The instruction limit, in UTF-8 bytes after NFC. */
#define SIGHT_INSTRUCTION_MAX_BYTES 8192
#define SIGHT_WAIT_FOR_INTERVAL_MIN 100
#define SIGHT_WAIT_FOR_INTERVAL_MAX 60000
#define SIGHT_WAIT_FOR_INTERVAL_DEFAULT 3000
/* Number.MAX_SAFE_INTEGER */
#define SIGHT_MAX_SAFE_INTEGER G_GINT64_CONSTANT (9007199254740991)

/* Options of one step call.  A zero number, NULL pointer or SIGHT_VISION_UNSET means
 * "not given"; budgets.c resolves the defaults. */
typedef struct {
  SightStepKind     kind;
  gint64            timeout_ms;
  gint64            max_steps;        /* act */
  gint64            max_model_calls;  /* act, waitFor */
  gint64            interval_ms;      /* waitFor */
  gboolean          has_screenshot;   /* assert */
  gboolean          screenshot;
  SightVisionMode   vision;           /* assert, waitFor, extract */
  char             *agent;
  JsonNode         *params;           /* act: a validated params object */
  SightJsonSchema  *schema;           /* extract: compiled, required */
} SightStepOptions;

SightStepOptions *sight_step_options_new     (SightStepKind     kind);
void              sight_step_options_free    (SightStepOptions *options);

/* Validates @options (a JSON object of option name → value; NULL is no options)
 * for a step of @kind.  Errors, all before the step opens:
 *  - an option the method does not take: INVALID_ARGUMENT, except schema or vision
 *    given to act: UNSUPPORTED_CAPABILITY;
 *  - timeout not a positive safe integer, maxSteps / maxModelCalls not positive
 *    integers, interval not an integer in 100-60000, screenshot not a boolean,
 *    vision not false/true/"only", agent not a non-empty string: INVALID_ARGUMENT;
 *  - params that are not JSON-safe values plus Secrets within 64 KiB and 32 levels
 *    (sight_params_validate): INVALID_ARGUMENT;
 *  - extract without a schema, or with a schema that is not a valid JSON Schema:
 *    INVALID_ARGUMENT.
 * Whether maxSteps / maxModelCalls only lower the configured limits, and whether the
 * agent exists, is checked by sight_budget_resolve, which knows the project. */
SightStepOptions *sight_step_options_parse   (SightStepKind     kind,
                                              JsonObject       *options,
                                              GError          **error);

/* A test-file step ({"act": "Sign in", "params": {…}, "timeout": 5000}): exactly one
 * of act / assert / waitFor / extract holds the instruction, every other member is
 * an option.  The instruction is validated and NFC-normalized
 * (sight_instruction_normalize). */
SightStepOptions *sight_step_options_parse_step (JsonObject     *step,
                                                 char          **out_instruction,
                                                 GError        **error);

/* Checks @instruction: valid UTF-8 and 1 through 8192 bytes after NFC.  Returns the
 * NFC form, or NULL with INVALID_ARGUMENT. */
char             *sight_instruction_normalize (const char      *instruction,
                                               gssize           length,
                                               GError         **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightStepOptions, sight_step_options_free)

G_END_DECLS
