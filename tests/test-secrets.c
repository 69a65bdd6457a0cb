/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <string.h>

#include "sight-secrets.h"

/* A value with a space, URL-reserved, HTML-special, JSON-special and non-ASCII
 * characters.  The encodings below were written down from other encoders (Python's
 * urllib, base64, html and json modules, and JavaScript's encodeURIComponent), not
 * produced by the code under test. */
#define CANARY "Pa55 w/rd+&'\"<\xc3\xa9>"

static const struct {
  const char *encoding;
  const char *text;
} encoded[] = {
  { "raw", CANARY },
  { "RFC 3986", "Pa55%20w%2Frd%2B%26%27%22%3C%C3%A9%3E" },
  { "RFC 3986 lower-case hex", "Pa55%20w%2frd%2b%26%27%22%3c%c3%a9%3e" },
  { "form", "Pa55+w%2Frd%2B%26%27%22%3C%C3%A9%3E" },
  { "encodeURIComponent", "Pa55%20w%2Frd%2B%26'%22%3C%C3%A9%3E" },
  { "base64", "UGE1NSB3L3JkKyYnIjzDqT4=" },
  { "base64 unpadded", "UGE1NSB3L3JkKyYnIjzDqT4" },
  { "base64 after 1 byte", "YTpQYTU1IHcvcmQrJiciPMOpPg==" },
  { "base64 after 3 bytes", "YWQ6UGE1NSB3L3JkKyYnIjzDqT4=" },
  { "base64 after 4 bytes (Basic auth)", "Authorization: Basic YWRhOlBhNTUgdy9yZCsmJyI8w6k+" },
  { "HTML (Python html.escape)", "Pa55 w/rd+&amp;&#x27;&quot;&lt;\xc3\xa9&gt;" },
  { "HTML (g_markup)", "Pa55 w/rd+&amp;&apos;&quot;&lt;\xc3\xa9&gt;" },
  { "HTML (numeric)", "Pa55 w/rd+&amp;&#39;&#34;&lt;\xc3\xa9&gt;" },
  { "JSON ensure_ascii", "{\"p\": \"Pa55 w/rd+&'\\\"<\\u00e9>\"}" },
  { "JSON raw", "{\"p\":\"Pa55 w/rd+&'\\\"<\xc3\xa9>\"}" },
  { "JSON with \\/", "{\"p\":\"Pa55 w\\/rd+&'\\\"<\xc3\xa9>\"}" },
  { "URL in JSON", "{\"u\":\"https:\\/\\/x.test\\/?p=Pa55%20w%2Frd%2B%26%27%22%3C%C3%A9%3E\"}" },
};

static void
test_every_encoding (void)
{
  sight_secrets_forget_all ();
  sight_secrets_register_value ("member.password", CANARY);

  for (guint i = 0; i < G_N_ELEMENTS (encoded); i++)
    {
      g_autofree char *text = g_strdup_printf ("before %s after", encoded[i].text);
      g_autofree char *clean = sight_secrets_redact (text);

      g_test_message ("%s: %s -> %s", encoded[i].encoding, text, clean);
      if (!sight_secrets_contains_any (text))
        g_error ("%s form not recognized", encoded[i].encoding);
      if (strstr (clean, "[secret:member.password]") == NULL)
        g_error ("%s form not redacted: %s", encoded[i].encoding, clean);
      if (sight_secrets_contains_any (clean))
        g_error ("%s form left a trace: %s", encoded[i].encoding, clean);
      g_assert_true (g_str_has_prefix (clean, "before "));
      g_assert_true (g_str_has_suffix (clean, " after"));
      g_assert_null (strstr (clean, "Pa55"));
      g_assert_null (strstr (clean, "UGE1NSB3L3Jk"));
    }
  sight_secrets_forget_all ();
}

static void
test_exact_output (void)
{
  g_autofree char *a = NULL;
  g_autofree char *b = NULL;
  g_autofree char *c = NULL;

  sight_secrets_forget_all ();
  sight_secrets_register_value ("pw", "hunter22");
  sight_secrets_register_value ("otp", "123456");
  sight_secrets_register_value ("tiny", "ab");

  a = sight_secrets_redact ("login pw=hunter22&code=123456 hunter22hunter22");
  g_assert_cmpstr (a, ==, "login pw=[secret:pw]&code=[secret:otp] [secret:pw][secret:pw]");

  /* Values shorter than 3 bytes are not redacted: they would eat ordinary text. */
  b = sight_secrets_redact ("abc lab");
  g_assert_cmpstr (b, ==, "abc lab");

  /* Nothing known, nothing changed; NULL stays NULL. */
  sight_secrets_forget_all ();
  c = sight_secrets_redact ("hunter22");
  g_assert_cmpstr (c, ==, "hunter22");
  g_assert_null (sight_secrets_redact (NULL));
  g_assert_false (sight_secrets_contains_any ("hunter22"));
}

static void
test_longest_first_and_marker (void)
{
  g_autofree char *a = NULL;
  g_autofree char *b = NULL;

  sight_secrets_forget_all ();
  sight_secrets_register_value ("short", "abc");
  sight_secrets_register_value ("long", "abcdef");
  /* A value that is part of the marker text must not eat the markers. */
  sight_secrets_register_value ("word", "secret");

  a = sight_secrets_redact ("x abcdef y abc z");
  g_assert_cmpstr (a, ==, "x [secret:long] y [secret:short] z");
  b = sight_secrets_redact ("my secret");
  g_assert_cmpstr (b, ==, "my [secret:word]");

  /* Registering again is harmless. */
  sight_secrets_register_value ("word", "secret");
  {
    g_autofree char *c = sight_secrets_redact ("secret");
    g_assert_cmpstr (c, ==, "[secret:word]");
  }
  sight_secrets_forget_all ();
}

static void
test_values_from_store (void)
{
  g_autoptr(SightSecrets) store = sight_secrets_new ();
  g_autoptr(GError) error = NULL;
  SightCredential cred = {
    .name = (char *) "api",
    .purpose = (char *) "password",
    .source = SIGHT_CREDENTIAL_SOURCE_VALUE,
    .source_arg = (char *) "sk-live-0123456789",
  };
  g_autofree char *clean = NULL;

  sight_secrets_forget_all ();
  sight_secrets_add (store, &cred);
  /* A value given directly is known from the moment it is declared. */
  clean = sight_secrets_redact ("key c2stbGl2ZS0wMTIzNDU2Nzg5 and sk-live-0123456789");
  g_assert_cmpstr (clean, ==, "key [secret:api] and [secret:api]");
  g_assert_cmpstr (sight_secrets_resolve (store, "api", &error), ==, "sk-live-0123456789");
  g_assert_no_error (error);
  sight_secrets_forget_all ();
}

static void
test_origins (void)
{
  const struct { const char *in; const char *out; } cases[] = {
    { "http://127.0.0.1:8765/login?x=1#f", "http://127.0.0.1:8765" },
    { "HTTPS://App.Example.TEST:443/", "https://app.example.test" },
    { "http://example.test:80", "http://example.test" },
    { "https://example.test:8443", "https://example.test:8443" },
    { "http://[::1]:8080/x", "http://[::1]:8080" },
    { "about:blank", NULL },
    { "data:text/html,hi", NULL },
    { "not a url", NULL },
  };
  SightCredential cred = {
    .name = (char *) "c",
    .allowed_origins = (GStrv) (const char *[]) { "https://app.example.test", NULL },
  };
  SightCredential nowhere = { .name = (char *) "n" };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *origin = sight_origin_normalize (cases[i].in);
      g_assert_cmpstr (origin, ==, cases[i].out);
    }
  g_assert_true (sight_credential_origin_allowed (&cred, "https://APP.example.test:443/a"));
  g_assert_false (sight_credential_origin_allowed (&cred, "http://app.example.test/a"));
  g_assert_false (sight_credential_origin_allowed (&cred, "https://app.example.test.evil.test/"));
  g_assert_false (sight_credential_origin_allowed (&cred, "https://evil.test/?https://app.example.test"));
  g_assert_false (sight_credential_origin_allowed (&nowhere, "https://app.example.test/"));
  g_assert_true (sight_credential_purpose_is_valid ("one-time-code"));
  g_assert_false (sight_credential_purpose_is_valid ("pin"));
}

static void
test_redact_json (void)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) clean = NULL;
  g_autofree char *text = NULL;

  sight_secrets_forget_all ();
  sight_secrets_register_value ("pw", "hunter22");
  json_parser_load_from_data (parser, "{\"args\": [\"--password=hunter22\", 3, null, true],"
                              " \"hunter22\": {\"b64\": \"aHVudGVyMjI=\"}}", -1, &error);
  g_assert_no_error (error);
  clean = sight_secrets_redact_json (json_parser_get_root (parser));
  text = json_to_string (clean, FALSE);
  g_assert_cmpstr (text, ==, "{\"args\":[\"--password=[secret:pw]\",3,null,true],"
                             "\"[secret:pw]\":{\"b64\":\"[secret:pw]\"}}");
  g_assert_null (sight_secrets_redact_json (NULL));
  sight_secrets_forget_all ();
}

static void
test_log_writer (void)
{
  if (g_test_subprocess ())
    {
      g_log_set_writer_func (sight_secrets_log_writer, NULL, NULL);
      sight_secrets_register_value ("pw", "hunter22");
      g_message ("typing hunter22 into the field, base64 aHVudGVyMjI=");
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr ("*typing [secret:pw] into the field, base64 [secret:pw]*");
  g_test_trap_assert_stderr_unmatched ("*hunter22*");
  g_test_trap_assert_stderr_unmatched ("*aHVudGVy*");
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/secrets/every-encoding", test_every_encoding);
  g_test_add_func ("/secrets/exact-output", test_exact_output);
  g_test_add_func ("/secrets/longest-first-and-marker", test_longest_first_and_marker);
  g_test_add_func ("/secrets/values-from-store", test_values_from_store);
  g_test_add_func ("/secrets/origins", test_origins);
  g_test_add_func ("/secrets/redact-json", test_redact_json);
  g_test_add_func ("/secrets/log-writer", test_log_writer);
  return g_test_run ();
}
