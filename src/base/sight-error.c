/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-error"

#include "config.h"

#include "sight-error.h"

#include <string.h>

#include "sight-base-enums.h"
#include "sight-enum.h"

G_DEFINE_QUARK (sight-error-quark, sight_error)

typedef struct {
  gboolean    blocked;
  int         exit_status;
} CodeInfo;

/* Exit statuses of DESIGN.md "Commands". */
static const CodeInfo code_info[] = {
  [SIGHT_ERROR_ACTION_FAILED]               = { FALSE, 1 },
  [SIGHT_ERROR_ASSERTION_FAILED]            = { FALSE, 1 },
  [SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE] = { TRUE, 3 },
  [SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE]     = { TRUE, 3 },
  [SIGHT_ERROR_SEED_DATA_MISSING]           = { TRUE, 3 },
  [SIGHT_ERROR_TEST_SETUP_FAILED]           = { TRUE, 3 },
  [SIGHT_ERROR_AUTOMATION_UNSUPPORTED]      = { TRUE, 3 },
  [SIGHT_ERROR_STEP_BUDGET_EXHAUSTED]       = { TRUE, 4 },
  [SIGHT_ERROR_STEP_TIMEOUT]                = { TRUE, 4 },
  [SIGHT_ERROR_INVALID_ARGUMENT]            = { FALSE, 2 },
  [SIGHT_ERROR_UNSUPPORTED_CAPABILITY]      = { FALSE, 2 },
  [SIGHT_ERROR_MODEL_OUTPUT_INVALID]        = { TRUE, 5 },
  [SIGHT_ERROR_MODEL_UNAVAILABLE]           = { TRUE, 5 },
  [SIGHT_ERROR_POLICY_DENIED]               = { FALSE, 2 },
  [SIGHT_ERROR_INTERNAL]                    = { FALSE, 70 },
};

static const CodeInfo *
lookup (SightErrorCode code)
{
  if ((guint) code >= G_N_ELEMENTS (code_info))
    return &code_info[SIGHT_ERROR_INTERNAL];
  return &code_info[code];
}

const char *
sight_error_code_to_string (SightErrorCode code)
{
  return sight_enum_to_nick (SIGHT_TYPE_ERROR_CODE, lookup (code) - code_info);
}

gboolean
sight_error_code_from_string (const char     *name,
                              SightErrorCode *out_code)
{
  int value;

  g_return_val_if_fail (out_code != NULL, FALSE);

  if (!sight_enum_from_nick (SIGHT_TYPE_ERROR_CODE, name, &value))
    return FALSE;
  *out_code = value;
  return TRUE;
}

gboolean
sight_error_code_is_blocked (SightErrorCode code)
{
  return lookup (code)->blocked;
}

int
sight_error_code_exit_status (SightErrorCode code)
{
  return lookup (code)->exit_status;
}

int
sight_error_exit_status (const GError *error)
{
  if (error == NULL)
    return 0;
  if (error->domain != SIGHT_ERROR)
    return 70;
  return sight_error_code_exit_status (error->code);
}

char *
sight_error_format (const GError *error)
{
  g_autofree char *message = NULL;
  SightErrorCode code = SIGHT_ERROR_INTERNAL;

  g_return_val_if_fail (error != NULL, NULL);

  if (error->domain == SIGHT_ERROR)
    code = error->code;
  message = sight_text_sanitize (error->message, 2000);
  return g_strdup_printf ("%s: %s", sight_error_code_to_string (code), message);
}

char *
sight_text_sanitize (const char *text,
                     gsize       max_bytes)
{
  GString *out;
  const char *p;
  /* the longest prefix that still leaves room for the ellipsis */
  gsize room_for_ellipsis = 0;

  if (text == NULL)
    return g_strdup ("");

  out = g_string_sized_new (MIN (strlen (text), max_bytes) + 4);
  for (p = text; *p != '\0'; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char_validated (p, -1);
      char buf[6];
      int len;

      if (c == (gunichar) -1 || c == (gunichar) -2)
        break;
      if (c < 0x20 && c != '\n' && c != '\t')
        c = ' ';
      if (c == 0x7f || (c >= 0x80 && c < 0xa0) || c == 0x2028 || c == 0x2029)
        c = ' ';
      len = g_unichar_to_utf8 (c, buf);
      if (out->len + len > max_bytes)
        {
          g_string_truncate (out, room_for_ellipsis);
          if (max_bytes >= strlen ("…"))
            g_string_append (out, "…");
          break;
        }
      g_string_append_len (out, buf, len);
      if (out->len + strlen ("…") <= max_bytes)
        room_for_ellipsis = out->len;
    }
  return g_string_free (out, FALSE);
}
