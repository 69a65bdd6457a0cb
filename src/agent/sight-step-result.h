/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "sight-error.h"
#include "sight-image.h"
#include "sight-step-options.h"
#include "sight-usage.h"

G_BEGIN_DECLS

/* The outcome of one step (a direct `do` step, act, assert, waitFor, extract), the one value the
 * runner, the app, MCP and the store consume.
 *
 * A passing step has verdict PASS and no error.  A failing one carries the error
 * (SIGHT_ERROR, the spec's code, assigned by the runner, never taken from model
 * text) and its sanitized explanation; blocked is TRUE for the environment,
 * credential, budget and model classes.  Every string in it is already redacted
 * of known secret values. */

typedef enum {
  SIGHT_STEP_VERDICT_PASS,
  SIGHT_STEP_VERDICT_FAIL,
  SIGHT_STEP_VERDICT_BLOCKED,
} SightStepVerdict;

const char *sight_step_verdict_to_string (SightStepVerdict verdict);

typedef struct {
  /*< private >*/
  gatomicrefcount  ref_count;
  /*< public >*/
  SightStepKind    kind;
  /* a direct step (`do`), run with no model; kind is then meaningless */
  gboolean         direct;
  /* the instruction as written (NFC), secrets never in it */
  char            *instruction;
  /* do: the instruction had a secret typed literally into a secure field and
   * now stands masked (SIGHT_DIRECT_SECRET_MASK): store and report this text */
  gboolean         instruction_masked;
  SightStepVerdict     verdict;
  /* NULL when the step passed */
  GError          *error;
  gboolean         blocked;
  /* act: the summary; assert / waitFor: the (last) judgment's explanation;
   * extract: a short note.  Sanitized and bounded. */
  char            *summary;
  /* waitFor: the last judgment (TRUE/FALSE) when one was made */
  gboolean         has_judgment;
  gboolean         judgment;
  /* extract: the validated value */
  JsonNode        *value;
  /* spent: model requests (repair rounds included) and committed actions */
  guint            model_calls;
  guint            actions;
  guint            repair_rounds;
  /* waitFor: observations taken */
  guint            observations;
  SightUsage       usage;
  /* how the trace cache took part (filled by the trace cache), or NULL */
  JsonNode        *cache;
  /* failure evidence written to disk, or NULL */
  char            *screenshot_path;
  /* pixels: whether any image went to the model, how many encoded bytes, and why
   * pixels were withheld (PIXEL_TAINTED, MASKING_UNPROVEN, UNSUPPORTED_CAPABILITY),
   * NULL when they were not */
  gboolean         vision_input;
  guint64          pixel_bytes;
  guint            images_sent;
  char            *vision_degraded;
  /* a secret was filled during the step */
  gboolean         secret_filled;
  /* act: one line per committed action ("click e5 button \"Sign in\"") */
  GPtrArray       *action_log;
  /* act: each committed action as the trace cache replays it: {"tool", "args",
   * "descriptor"} (args name params, never a secret value; descriptor as the
   * engine returned it, NULL for an action on the page itself) */
  JsonArray       *performed;
  /* page text that tried to instruct the agent, as the model reported it */
  GPtrArray       *injections;
  /* URLs the page was refused during the step, outside its allowed origins
   * (navigations, redirects, popups, frames), in order, at most 50 */
  GPtrArray       *navigation_blocked;
  /* the URL the step ended on */
  char            *url;
  gint64           duration_ms;
} SightStepResult;

#define SIGHT_TYPE_STEP_RESULT (sight_step_result_get_type ())
GType            sight_step_result_get_type   (void) G_GNUC_CONST;

SightStepResult *sight_step_result_new        (SightStepKind     kind,
                                               const char       *instruction);
SightStepResult *sight_step_result_ref        (SightStepResult  *self);
void             sight_step_result_unref      (SightStepResult  *self);

/* Marks the step failed with @error (taken): verdict FAIL, or BLOCKED for a
 * blocked code; the explanation is redacted and bounded. */
void             sight_step_result_take_error (SightStepResult  *self,
                                               GError           *error);
gboolean         sight_step_result_passed     (SightStepResult  *self);
/* The code of a blocked verdict by its reason, from the closed list act's done
 * tool and a custom executor's step/finish name it by: "credentials",
 * "seed_data", "setup", "automation"; anything else is ENVIRONMENT_UNAVAILABLE
 * (the code is the runner's, never the reporter's text). */
SightErrorCode   sight_step_blocked_reason_code (const char     *reason);
/* Copies the step's error into @error; FALSE when the step failed. */
gboolean         sight_step_result_propagate  (SightStepResult  *self,
                                               GError          **error);

/* The largest extracted value written out whole (the spec's bound on one
 * tool result); SIGHT_STEP_RESULT_VALUE_PREVIEW_BYTES of a larger one are. */
#define SIGHT_STEP_RESULT_MAX_VALUE_BYTES     100000
#define SIGHT_STEP_RESULT_VALUE_PREVIEW_BYTES 2000

/* The value as JSON text, secrets redacted, at most @max_bytes of it: a
 * longer text is cut and ends "… (truncated: N bytes in all)". NULL without
 * a value. */
char            *sight_step_result_dup_value_text (SightStepResult *self,
                                                   gboolean         pretty,
                                                   gsize            max_bytes);

/* {"kind", "instruction", "verdict", "code"?, "blocked", "explanation"?, "summary"?,
 *  "judgment"?, "value"?, "modelCalls", "actions", "repairRounds", "usage", "cache"?,
 *  "screenshot"?, "visionInput", "visionDegraded"?, "metrics": {"pixelBytes",
 *  "imagesSent", "durationMs", "observations"}, "secretFilled", "actionLog",
 *  "performed", "injections", "navigationBlocked"?, "url"?}, every string redacted. A value whose
 *  JSON is longer than SIGHT_STEP_RESULT_MAX_VALUE_BYTES is left out for
 *  "valueTruncated": true, "valueBytes" (its length) and "valuePreview" (its
 *  first SIGHT_STEP_RESULT_VALUE_PREVIEW_BYTES); the result keeps it whole. */
JsonNode        *sight_step_result_to_json    (SightStepResult  *self);

/* What is kept of the page after a step: the one rule of failure evidence
 * (spec/agent-api.txt, assert: "Evidence is skipped with screenshot: false
 * and once any secret has been filled in the attempt"). */
typedef enum {
  /* screenshot: false: no screenshot of the page after the step at all */
  SIGHT_STEP_SHOT_NONE,
  /* a (masked) screenshot of the page after the step */
  SIGHT_STEP_SHOT_PAGE,
  /* the step failed with ASSERTION_FAILED and no secret was filled in the
   * attempt: that screenshot is also the failure's evidence, whose path the
   * failure carries */
  SIGHT_STEP_SHOT_EVIDENCE,
} SightStepShot;

/* @screenshot: the step's screenshot option (SightBudgetLimits.screenshot,
 * TRUE unless an assert said false); @error: how the step ended (NULL:
 * passed); @secret_filled: whether a secret was filled in the attempt. */
SightStepShot    sight_step_shot_for          (gboolean          screenshot,
                                               const GError     *error,
                                               gboolean          secret_filled);

/* The file name of step @number's failure evidence encoded as @format:
 * "step-N-evidence.jpg". Where files of several runs share a folder (an
 * evidence folder of no run), @unique adds six random characters before the
 * suffix ("step-N-evidence-XXXXXX.jpg" after g_mkstemp_full ()). */
char            *sight_step_evidence_name     (guint             number,
                                               SightImageFormat  format,
                                               gboolean          unique);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightStepResult, sight_step_result_unref)

G_END_DECLS
