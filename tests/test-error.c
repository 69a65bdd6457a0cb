/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <gio/gio.h>

#include "sight-error.h"

static void
test_codes_round_trip (void)
{
  for (int code = SIGHT_ERROR_ACTION_FAILED; code <= SIGHT_ERROR_POLICY_DENIED; code++)
    {
      SightErrorCode back = SIGHT_ERROR_INTERNAL;

      g_assert_true (sight_error_code_from_string (sight_error_code_to_string (code), &back));
      g_assert_cmpint (back, ==, code);
    }
  g_assert_false (sight_error_code_from_string ("NOT_A_CODE", &(SightErrorCode){ 0 }));
}

static void
test_exit_status_and_blocked (void)
{
  struct { SightErrorCode code; int status; gboolean blocked; } table[] = {
    { SIGHT_ERROR_ACTION_FAILED, 1, FALSE },
    { SIGHT_ERROR_ASSERTION_FAILED, 1, FALSE },
    { SIGHT_ERROR_INVALID_ARGUMENT, 2, FALSE },
    { SIGHT_ERROR_UNSUPPORTED_CAPABILITY, 2, FALSE },
    { SIGHT_ERROR_POLICY_DENIED, 2, FALSE },
    { SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE, 3, TRUE },
    { SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE, 3, TRUE },
    { SIGHT_ERROR_SEED_DATA_MISSING, 3, TRUE },
    { SIGHT_ERROR_TEST_SETUP_FAILED, 3, TRUE },
    { SIGHT_ERROR_AUTOMATION_UNSUPPORTED, 3, TRUE },
    { SIGHT_ERROR_STEP_BUDGET_EXHAUSTED, 4, TRUE },
    { SIGHT_ERROR_STEP_TIMEOUT, 4, TRUE },
    { SIGHT_ERROR_MODEL_UNAVAILABLE, 5, TRUE },
    { SIGHT_ERROR_MODEL_OUTPUT_INVALID, 5, TRUE },
  };
  g_autoptr(GError) foreign = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_FAILED, "x");

  for (guint i = 0; i < G_N_ELEMENTS (table); i++)
    {
      g_assert_cmpint (sight_error_code_exit_status (table[i].code), ==, table[i].status);
      g_assert_cmpint (sight_error_code_is_blocked (table[i].code), ==, table[i].blocked);
    }
  g_assert_cmpint (sight_error_exit_status (foreign), ==, 70);
  g_assert_cmpint (sight_error_exit_status (NULL), ==, 0);
}

static void
test_sanitize (void)
{
  g_autofree char *a = sight_text_sanitize ("a\x01" "b\xe2\x80\xa8" "c", 100);
  g_autofree char *b = sight_text_sanitize ("héllo world", 6);
  g_autofree char *d = sight_text_sanitize ("héllo world", 5);
  g_autofree char *e = sight_text_sanitize ("héllo", 6);
  g_autofree char *c = sight_text_sanitize ("ok\xff\xfe tail", 100);

  g_assert_cmpstr (a, ==, "a b c");
  /* The result, ellipsis included, stays within the bound. */
  g_assert_cmpstr (b, ==, "hé…");
  g_assert_cmpstr (d, ==, "h…");
  g_assert_cmpstr (e, ==, "héllo");
  g_assert_cmpstr (c, ==, "ok");
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/error/codes-round-trip", test_codes_round_trip);
  g_test_add_func ("/error/exit-status-and-blocked", test_exit_status_and_blocked);
  g_test_add_func ("/error/sanitize", test_sanitize);
  return g_test_run ();
}
