/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The closed union of error codes of spec/agent-api.txt. Assigned by the
 * runner, never taken from model text. Each nick is the code's name
 * (sight-base-enums.h). */
typedef enum {
  SIGHT_ERROR_ACTION_FAILED,               /*< nick=ACTION_FAILED >*/
  SIGHT_ERROR_ASSERTION_FAILED,            /*< nick=ASSERTION_FAILED >*/
  SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE, /*< nick=AUTH_CREDENTIAL_UNAVAILABLE >*/
  SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,     /*< nick=ENVIRONMENT_UNAVAILABLE >*/
  SIGHT_ERROR_SEED_DATA_MISSING,           /*< nick=SEED_DATA_MISSING >*/
  SIGHT_ERROR_TEST_SETUP_FAILED,           /*< nick=TEST_SETUP_FAILED >*/
  SIGHT_ERROR_AUTOMATION_UNSUPPORTED,      /*< nick=AUTOMATION_UNSUPPORTED >*/
  SIGHT_ERROR_STEP_BUDGET_EXHAUSTED,       /*< nick=STEP_BUDGET_EXHAUSTED >*/
  SIGHT_ERROR_STEP_TIMEOUT,                /*< nick=STEP_TIMEOUT >*/
  SIGHT_ERROR_INVALID_ARGUMENT,            /*< nick=INVALID_ARGUMENT >*/
  SIGHT_ERROR_UNSUPPORTED_CAPABILITY,      /*< nick=UNSUPPORTED_CAPABILITY >*/
  SIGHT_ERROR_MODEL_OUTPUT_INVALID,        /*< nick=MODEL_OUTPUT_INVALID >*/
  SIGHT_ERROR_MODEL_UNAVAILABLE,           /*< nick=MODEL_UNAVAILABLE >*/
  SIGHT_ERROR_POLICY_DENIED,               /*< nick=POLICY_DENIED >*/
  SIGHT_ERROR_INTERNAL,                    /*< nick=INTERNAL >*/
} SightErrorCode;

#define SIGHT_ERROR (sight_error_quark ())
GQuark          sight_error_quark         (void);

const char     *sight_error_code_to_string (SightErrorCode code);
gboolean        sight_error_code_from_string (const char     *name,
                                              SightErrorCode *out_code);
gboolean        sight_error_code_is_blocked (SightErrorCode code);
int             sight_error_code_exit_status (SightErrorCode code);

/* Exit status for any GError: the code's status in SIGHT_ERROR, 70 otherwise. */
int             sight_error_exit_status   (const GError *error);
/* "CODE: message" for any GError; foreign domains become INTERNAL. */
char           *sight_error_format        (const GError *error);

/* Sanitized, bounded explanation: control characters dropped, at most
 * @max_bytes of valid UTF-8, the ellipsis that marks a cut included. */
char           *sight_text_sanitize       (const char *text,
                                           gsize       max_bytes);

G_END_DECLS
