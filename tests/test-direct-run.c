/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <libsoup/soup.h>
#include <string.h>

#include "export-site-common.h"
#include "sight-direct-run.h"
#include "sight-error.h"
#include "sight-observation.h"
#include "sight-secret-fields.h"
#include "sight-trace-cache.h"
#include "sight-web-page.h"

/* Direct steps run on a real page of the fixture site, with no model. */

static SoupServer *server;
static guint port;

/* press with no target, and a file input that reports what it was given */
static const char keys_html[] =
  "<!doctype html><title>Keys</title><main>"
  "<form id=f><label>Query <input id=q name=q autofocus></label></form>"
  "<label>Attachment <input type=file id=file></label>"
  "<p id=out role=status></p></main><script>"
  "const out = document.getElementById ('out');"
  "document.getElementById ('f').addEventListener ('submit', e => { e.preventDefault ();"
  " out.textContent = 'Searched: ' + e.target.q.value; });"
  "document.getElementById ('file').addEventListener ('change', e => { const f = e.target.files[0];"
  " f.text ().then (t => { out.textContent = 'Got ' + f.name + ' ' + f.size + ' bytes: ' + t; }); });"
  "</script>";

/* One field of each purpose, a plain one, and a disabled password field. */
static const char fields_html[] =
  "<!doctype html><title>Fields</title><main><form>"
  "<label>Nickname <input id=nick></label>"
  "<label>Email <input id=email type=email autocomplete=username></label>"
  "<label>Password <input id=pw type=password autocomplete=current-password></label>"
  "<label>Code <input id=code autocomplete=one-time-code inputmode=numeric></label>"
  "<label>Locked <input id=locked type=password disabled></label>"
  "</form></main>";

static void
serve_cb (SoupServer        *srv,
          SoupServerMessage *msg,
          const char        *path,
          GHashTable        *query,
          gpointer           user_data)
{
  char *body = NULL;
  gsize len = 0;

  if (g_str_equal (path, "/fields"))
    {
      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "text/html; charset=utf-8", SOUP_MEMORY_STATIC,
                                        fields_html, strlen (fields_html));
      return;
    }
  if (g_str_equal (path, "/keys"))
    {
      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "text/html; charset=utf-8", SOUP_MEMORY_STATIC,
                                        keys_html, strlen (keys_html));
      return;
    }
  body = export_site_read_page (path, &len);
  if (body == NULL)
    {
      soup_server_message_set_status (msg, 404, NULL);
      return;
    }
  if (query != NULL && g_hash_table_contains (query, "redesign"))
    {
      /* the same page after a redesign: the button is renamed */
      g_autoptr(GString) changed = g_string_new_len (body, len);

      g_free (body);
      g_string_replace (changed, "Sign in</button>", "Log in</button>", 0);
      len = changed->len;
      body = g_string_free (g_steal_pointer (&changed), FALSE);
    }
  soup_server_message_set_status (msg, 200, NULL);
  soup_server_message_set_response (msg, "text/html; charset=utf-8", SOUP_MEMORY_TAKE, body, len);
}

static void
done_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

/* Runs one step; returns the summary, or NULL with @error. */
static char *
run (SightWebPage  *page,
     const char    *text,
     JsonNode      *params,
     SightSecrets  *secrets,
     guint          timeout_ms,
     GError       **error)
{
  g_autoptr(GAsyncResult) result = NULL;
  char *summary;

  sight_direct_step_run_async (page, text, params, secrets, timeout_ms, NULL, done_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  summary = sight_direct_step_run_finish (page, result, error);
  g_test_message ("%s -> %s", text, summary != NULL ? summary : (*error)->message);
  return summary;
}

static void
must_pass (SightWebPage *page,
           const char   *text,
           JsonNode     *params,
           SightSecrets *secrets)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *summary = run (page, text, params, secrets, 10000, &error);

  g_assert_no_error (error);
  g_assert_nonnull (summary);
}

static void
must_fail (SightWebPage   *page,
           const char     *text,
           guint           timeout_ms,
           SightErrorCode  code,
           const char     *message)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *summary = run (page, text, NULL, NULL, timeout_ms, &error);

  g_assert_null (summary);
  g_assert_nonnull (error);
  g_assert_true (error->domain == SIGHT_ERROR);
  g_assert_cmpint (error->code, ==, (int) code);
  if (strstr (error->message, message) == NULL)
    g_error ("\"%s\": \"%s\" lacks \"%s\"", text, error->message, message);
}

static void
test_flow (void)
{
  g_autoptr(SightWebPage) page = sight_web_page_new ();
  g_autoptr(SightSecrets) secrets = sight_secrets_new ();
  g_autoptr(JsonNode) params = json_from_string ("{ \"password\": { \"secret\": \"member.password\" } }",
                                                 NULL);
  g_autofree char *origin = g_strdup_printf ("http://127.0.0.1:%u", port);
  g_autofree char *login = g_strdup_printf ("go to %s/login", origin);
  char *origins[] = { origin, NULL };
  SightCredential cred = {
    .name = (char *) "member.password",
    .purpose = (char *) "password",
    .allowed_origins = origins,
    .source = SIGHT_CREDENTIAL_SOURCE_VALUE,
    .source_arg = (char *) "correct horse",
  };
  gint64 start;

  sight_secrets_add (secrets, &cred);
  sight_web_page_set_viewport (page, 1024, 768, 1.0);

  must_pass (page, login, NULL, NULL);
  must_pass (page, "expect the \"Sign in\" heading visible", NULL, NULL);
  must_pass (page, "type \"member@example.test\" into Email", NULL, NULL);
  must_pass (page, "expect Email has value \"member@example.test\"", NULL, NULL);
  {
    g_autoptr(GError) error = NULL;
    g_autofree char *summary = run (page, "type {password} into the Password field", params,
                                    secrets, 10000, &error);

    g_assert_no_error (error);
    g_assert_null (strstr (summary, "correct horse"));
    g_assert_nonnull (strstr (summary, "{password}"));
  }
  must_fail (page, "expect the Remember me checkbox checked", 300, SIGHT_ERROR_ASSERTION_FAILED,
             "not checked");
  must_pass (page, "check Remember me", NULL, NULL);
  must_pass (page, "expect the Remember me checkbox checked", NULL, NULL);
  must_pass (page, "select \"Pro\" in the Plan dropdown", NULL, NULL);
  must_pass (page, "click the \"Sign in\" button", NULL, NULL);

  /* the next page: found by waiting for it, within the deadline */
  must_pass (page, "wait for text \"Welcome\"", NULL, NULL);
  must_pass (page, "expect URL contains /dashboard", NULL, NULL);
  must_pass (page, "expect text \"Plan: Pro\"", NULL, NULL);
  must_fail (page, "click \"Add to cart\"", 5000, SIGHT_ERROR_ACTION_FAILED, "ambiguous");
  must_pass (page, "click the 2nd \"Add to cart\" button", NULL, NULL);
  must_pass (page, "expect text \"Cart: Coffee\"", NULL, NULL);
  must_pass (page, "type tea into the Search field", NULL, NULL);
  must_pass (page, "press Enter in the Search field", NULL, NULL);
  must_pass (page, "expect text \"Searched: tea\"", NULL, NULL);
  must_pass (page, "expect the \"Save\" button disabled", NULL, NULL);
  must_pass (page, "expect no text \"Invalid password\"", NULL, NULL);
  must_pass (page, "expect the Checkout button hidden", NULL, NULL);
  must_pass (page, "scroll to the bottom", NULL, NULL);

  /* failures say why, within their deadline */
  start = g_get_monotonic_time ();
  must_fail (page, "expect text \"Order shipped\"", 400, SIGHT_ERROR_ASSERTION_FAILED,
             "\"Order shipped\" is not on the page");
  g_assert_cmpint ((g_get_monotonic_time () - start) / 1000, <, 3000);
  must_fail (page, "wait for text \"Never\"", 300, SIGHT_ERROR_STEP_TIMEOUT, "not on the page");
  must_fail (page, "click Checkout", 300, SIGHT_ERROR_ACTION_FAILED, "nothing on the page matches");
  must_fail (page, "expect the \"Save\" button enabled", 300, SIGHT_ERROR_ASSERTION_FAILED,
             "disabled");
  must_fail (page, "expect URL contains /settings", 300, SIGHT_ERROR_ASSERTION_FAILED,
             "/dashboard");
  must_fail (page, "smash the button", 300, SIGHT_ERROR_INVALID_ARGUMENT, "verb");
  {
    g_autoptr(GError) error = NULL;
    g_autofree char *summary = run (page, "type {password} into Search", params, NULL, 300,
                                    &error);

    g_assert_null (summary);
    g_assert_true (g_error_matches (error, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE));
  }

  must_pass (page, "go back", NULL, NULL);
  must_pass (page, "expect URL contains /login", NULL, NULL);
  {
    /* Written out in the step, what goes into a password field still stays
     * out of the summary that runs store and reports show. */
    g_autoptr(GError) error = NULL;
    g_autofree char *summary = run (page, "type \"Literal-Pw-42\" into the Password field", NULL,
                                    NULL, 10000, &error);

    g_assert_no_error (error);
    g_assert_null (strstr (summary, "Literal-Pw-42"));
    g_assert_nonnull (strstr (summary, "secure field"));
  }
  {
    /* and a plain field's value is shown as before */
    g_autoptr(GError) error = NULL;
    g_autofree char *summary = run (page, "type \"member@example.test\" into Email", NULL, NULL,
                                    10000, &error);

    g_assert_no_error (error);
    g_assert_nonnull (strstr (summary, "member@example.test"));
  }
}

/* "press Enter" with no target goes to the focused element; "upload" goes
 * through the engine's file chooser, so the page reads a real file. */
static void
test_keys_and_upload (void)
{
  g_autoptr(SightWebPage) page = sight_web_page_new ();
  g_autofree char *keys = g_strdup_printf ("go to http://127.0.0.1:%u/keys", port);
  g_autofree char *dir = g_dir_make_tmp ("sight-upload-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "notes.txt", NULL);
  g_autofree char *upload = g_strdup_printf ("upload \"%s\" to Attachment", path);
  g_autoptr(GError) error = NULL;
  g_autofree char *summary = NULL;

  g_assert_true (g_file_set_contents (path, "hello file", -1, NULL));
  sight_web_page_set_viewport (page, 1024, 768, 1.0);
  must_pass (page, keys, NULL, NULL);
  /* what a step did, as a trace records it */
  {
    g_autoptr(GAsyncResult) result = NULL;
    g_autofree char *typed = NULL;
    JsonObject *record, *descriptor;

    sight_direct_step_run_async (page, "type tea into Query", NULL, NULL, 5000, NULL, done_cb,
                                 &result);
    while (result == NULL)
      g_main_context_iteration (NULL, TRUE);
    typed = sight_direct_step_run_finish (page, result, &error);
    g_assert_no_error (error);
    record = sight_direct_step_run_get_record (result);
    g_assert_nonnull (record);
    g_assert_cmpstr (json_object_get_string_member (record, "tool"), ==, "fill");
    g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (record, "args"),
                                                    "value"), ==, "tea");
    descriptor = json_object_get_object_member (record, "descriptor");
    g_assert_cmpstr (json_object_get_string_member (descriptor, "role"), ==, "textbox");
    g_assert_cmpstr (json_object_get_string_member (descriptor, "name"), ==, "Query");
  }
  summary = run (page, "press Enter", NULL, NULL, 5000, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (summary, "focused element"));
  must_pass (page, "expect text \"Searched: tea\"", NULL, NULL);

  must_pass (page, upload, NULL, NULL);
  must_pass (page, "expect text \"Got notes.txt 10 bytes: hello file\"", NULL, NULL);
  must_fail (page, "upload \"/nonexistent/file.txt\" to Attachment", 1000,
             SIGHT_ERROR_INVALID_ARGUMENT, "No such file");

  g_assert_cmpint (g_unlink (path), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

static SightObservation *
observe (SightWebPage *page)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  SightObservation *obs;

  sight_observation_capture_async (page, SIGHT_OBSERVE_DEFAULT, 10000, NULL, done_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  obs = sight_observation_capture_finish (result, &error);
  g_assert_no_error (error);
  return obs;
}

static JsonNode *
replay (SightTrace   *trace,
        SightWebPage *page,
        JsonNode     *params,
        SightSecrets *secrets)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  JsonNode *info;

  sight_trace_replay_async (trace, page, params, secrets, 15000, NULL, done_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  info = sight_trace_replay_finish (trace, result, &error);
  g_assert_no_error (error);
  {
    g_autofree char *text = json_to_string (info, FALSE);

    g_test_message ("replay: %s", text);
  }
  return info;
}

static void
add (SightTrace *trace,
     const char *tool,
     const char *args,
     const char *descriptor)
{
  g_autoptr(JsonNode) a = args != NULL ? json_from_string (args, NULL) : NULL;
  g_autoptr(JsonNode) d = descriptor != NULL ? json_from_string (descriptor, NULL) : NULL;
  const char *secrets[] = { "correct horse", NULL };
  g_autoptr(GError) error = NULL;

  g_assert_true (sight_trace_add_action (trace, tool, a, d, secrets, &error));
  g_assert_no_error (error);
}

/* A sign-in recorded as act's committed actions, replayed with no model. */
static void
test_trace_replay (void)
{
  g_autoptr(SightWebPage) page = sight_web_page_new ();
  g_autoptr(SightSecrets) secrets = sight_secrets_new ();
  g_autoptr(SightSecrets) wrong = sight_secrets_new ();
  g_autoptr(JsonNode) params = json_from_string ("{ \"password\": { \"secret\": \"member.password\" } }",
                                                 NULL);
  g_autofree char *origin = g_strdup_printf ("http://127.0.0.1:%u", port);
  g_autofree char *login = g_strdup_printf ("go to %s/login", origin);
  g_autofree char *redesigned = g_strdup_printf ("go to %s/login?redesign=1", origin);
  char *origins[] = { origin, NULL };
  SightCredential cred = {
    .name = (char *) "member.password", .purpose = (char *) "password",
    .allowed_origins = origins, .source = SIGHT_CREDENTIAL_SOURCE_VALUE,
    .source_arg = (char *) "correct horse",
  };
  SightCredential bad = cred;
  g_autoptr(SightTrace) trace = NULL;
  g_autoptr(SightObservation) end = NULL;
  gint64 t0, t_direct, t_replay;

  bad.source_arg = (char *) "wrong horse";
  sight_secrets_add (secrets, &cred);
  sight_secrets_add (wrong, &bad);
  sight_web_page_set_viewport (page, 1024, 768, 1.0);

  /* the flow once as direct steps: the baseline, and the end state */
  must_pass (page, login, NULL, NULL);
  t0 = g_get_monotonic_time ();
  must_pass (page, "type \"member@example.test\" into Email", NULL, NULL);
  must_pass (page, "type {password} into the Password field", params, secrets);
  must_pass (page, "check Remember me", NULL, NULL);
  must_pass (page, "select \"Pro\" in the Plan dropdown", NULL, NULL);
  must_pass (page, "click the \"Sign in\" button", NULL, NULL);
  must_pass (page, "wait for text \"Welcome\"", NULL, NULL);
  t_direct = g_get_monotonic_time () - t0;

  trace = sight_trace_new ("default", "Sign in", params, origin, 1024, 768);
  add (trace, "fill", "{ \"ref\": \"e2\", \"value\": \"member@example.test\" }",
       "{ \"role\": \"textbox\", \"name\": \"Email\", \"nth\": 0 }");
  add (trace, "fill", "{ \"ref\": \"e3\", \"param\": \"password\" }",
       "{ \"role\": \"textbox\", \"name\": \"Password\", \"nth\": 0 }");
  add (trace, "check", "{ \"ref\": \"e4\", \"checked\": true }",
       "{ \"role\": \"checkbox\", \"name\": \"Remember me\", \"nth\": 0 }");
  add (trace, "select", "{ \"ref\": \"e5\", \"option\": \"Pro\" }",
       "{ \"role\": \"combobox\", \"name\": \"Plan\", \"nth\": 0 }");
  add (trace, "click", "{ \"ref\": \"e8\" }",
       "{ \"role\": \"button\", \"name\": \"Sign in\", \"nth\": 0 }");
  end = observe (page);
  sight_trace_set_end_state (trace, end);

  /* self-finalized: every node re-found, the end state came back */
  must_pass (page, login, NULL, NULL);
  t0 = g_get_monotonic_time ();
  {
    g_autoptr(JsonNode) info = replay (trace, page, params, secrets);

    t_replay = g_get_monotonic_time () - t0;
    g_assert_cmpstr (json_object_get_string_member (json_node_get_object (info), "status"), ==,
                     "self-finalized");
    must_pass (page, "expect text \"Plan: Pro\"", NULL, NULL);
    g_test_message ("5 actions: direct steps %.0f ms, replay %.0f ms (%.2fx)", t_direct / 1000.0,
                    t_replay / 1000.0, (double) t_replay / MAX (t_direct, 1));
  }

  /* unconfirmed: the actions ran, the end state did not come back (a model
   * judgment decides: agent-concluded) */
  must_pass (page, login, NULL, NULL);
  {
    g_autoptr(JsonNode) info = replay (trace, page, params, wrong);
    JsonObject *o = json_node_get_object (info);

    g_assert_cmpstr (json_object_get_string_member (o, "status"), ==, "unconfirmed");
    g_assert_nonnull (strstr (json_object_get_string_member (o, "reason"), "/dashboard"));
  }

  /* missed: the DOM changed */
  must_pass (page, redesigned, NULL, NULL);
  {
    g_autoptr(JsonNode) info = replay (trace, page, params, secrets);
    JsonObject *o = json_node_get_object (info);

    g_assert_cmpstr (json_object_get_string_member (o, "status"), ==, "missed");
    g_assert_nonnull (strstr (json_object_get_string_member (o, "reason"),
                              "no button \"Sign in\""));
    g_assert_cmpint (json_object_get_int_member (o, "action"), ==, 5);
  }

  /* missed: a bare point recorded on another viewport size */
  {
    g_autoptr(SightTrace) tap = sight_trace_new ("default", "tap the corner", NULL, origin, 1024, 768);

    add (tap, "tap_at", "{ \"x\": 10, \"y\": 10 }",
         "{ \"point\": { \"x\": 10, \"y\": 10 }, \"viewport\": { \"width\": 1280, \"height\": 720 } }");
    must_pass (page, login, NULL, NULL);
    {
      g_autoptr(JsonNode) info = replay (tap, page, NULL, NULL);
      JsonObject *o = json_node_get_object (info);

      g_assert_cmpstr (json_object_get_string_member (o, "status"), ==, "missed");
      g_assert_nonnull (strstr (json_object_get_string_member (o, "reason"), "1280x720"));
    }
  }
}

static char *
field_value (SightWebPage *page,
             const char   *id)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *body = g_strdup_printf ("return document.getElementById ('%s').value;", id);
  g_autoptr(JsonNode) value = NULL;

  sight_web_page_evaluate_async (page, body, NULL, 5000, NULL, done_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  value = sight_web_page_evaluate_finish (page, result, &error);
  g_assert_no_error (error);
  return g_strdup (json_node_get_string (value));
}

/* A direct step fills a Secret only into an enabled field of its purpose on an
 * allowed origin; anything else is refused with its code and nothing typed. */
static void
secret_refused (SightWebPage   *page,
                const char     *text,
                JsonNode       *params,
                SightSecrets   *secrets,
                SightErrorCode  code,
                const char     *field)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *summary = run (page, text, params, secrets, 1500, &error);
  g_autofree char *value = field_value (page, field);

  g_assert_null (summary);
  g_assert_error (error, SIGHT_ERROR, (int) code);
  g_assert_cmpstr (value, ==, "");
}

static void
test_secret_fields (void)
{
  g_autoptr(SightWebPage) page = sight_web_page_new ();
  g_autoptr(SightSecrets) secrets = sight_secrets_new ();
  g_autoptr(SightSecrets) elsewhere = sight_secrets_new ();
  g_autoptr(JsonNode) password = json_from_string ("{ \"p\": { \"secret\": \"member.password\" } }", NULL);
  g_autoptr(JsonNode) username = json_from_string ("{ \"p\": { \"secret\": \"member.username\" } }", NULL);
  g_autoptr(JsonNode) code = json_from_string ("{ \"p\": { \"secret\": \"member.code\" } }", NULL);
  g_autoptr(JsonNode) nobody = json_from_string ("{ \"p\": { \"secret\": \"nobody\" } }", NULL);
  g_autofree char *origin = g_strdup_printf ("http://127.0.0.1:%u", port);
  g_autofree char *fields = g_strdup_printf ("go to %s/fields", origin);
  g_autofree char *value = NULL;
  char *origins[] = { origin, NULL };
  char *other[] = { (char *) "http://other.example", NULL };
  SightCredential pw = {
    .name = (char *) "member.password", .purpose = (char *) "password",
    .allowed_origins = origins, .source = SIGHT_CREDENTIAL_SOURCE_VALUE,
    .source_arg = (char *) "correct horse",
  };
  SightCredential user = pw, otp = pw, away = pw;
  g_autoptr(SightTrace) trace = NULL;

  user.name = (char *) "member.username";
  user.purpose = (char *) "username";
  user.source_arg = (char *) "ada.member";
  otp.name = (char *) "member.code";
  otp.purpose = (char *) "one-time-code";
  otp.source_arg = (char *) "493817";
  away.allowed_origins = other;
  sight_secrets_add (secrets, &pw);
  sight_secrets_add (secrets, &user);
  sight_secrets_add (secrets, &otp);
  sight_secrets_add (elsewhere, &away);
  sight_web_page_set_viewport (page, 1024, 768, 1.0);
  must_pass (page, fields, NULL, NULL);

  /* A password goes only into a secure input. */
  secret_refused (page, "type {p} into Nickname", password, secrets, SIGHT_ERROR_POLICY_DENIED, "nick");
  secret_refused (page, "type {p} into Email", password, secrets, SIGHT_ERROR_POLICY_DENIED, "email");
  secret_refused (page, "type {p} into Locked", password, secrets, SIGHT_ERROR_POLICY_DENIED, "locked");
  /* A field shown disabled is refused at once, not after the action timeout. */
  {
    gint64 start = g_get_monotonic_time ();
    g_autoptr(GError) error = NULL;
    g_autofree char *summary = run (page, "type {p} into Locked", password, secrets, 8000, &error);
    gint64 ms = (g_get_monotonic_time () - start) / 1000;

    g_assert_null (summary);
    g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_POLICY_DENIED);
    g_assert_nonnull (strstr (error->message, "disabled"));
    g_test_message ("a disabled field refused in %" G_GINT64_FORMAT " ms", ms);
    g_assert_cmpint (ms, <, 2000);
    g_free (value);
    value = field_value (page, "locked");
    g_assert_cmpstr (value, ==, "");
  }
  secret_refused (page, "type {p} into Password", password, elsewhere, SIGHT_ERROR_POLICY_DENIED, "pw");
  secret_refused (page, "type {p} into Password", nobody, secrets,
                  SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE, "pw");
  /* A username only into a field that takes one. */
  secret_refused (page, "type {p} into Nickname", username, secrets, SIGHT_ERROR_POLICY_DENIED, "nick");
  secret_refused (page, "type {p} into Password", username, secrets, SIGHT_ERROR_POLICY_DENIED, "pw");
  /* A one-time code not into a plain field. */
  secret_refused (page, "type {p} into Nickname", code, secrets, SIGHT_ERROR_POLICY_DENIED, "nick");
  g_assert_cmpuint (sight_web_page_get_secret_fills (page), ==, 0);

  must_pass (page, "type {p} into Password", password, secrets);
  value = field_value (page, "pw");
  g_assert_cmpstr (value, ==, "correct horse");
  must_pass (page, "type {p} into Email", username, secrets);
  g_free (value);
  value = field_value (page, "email");
  g_assert_cmpstr (value, ==, "ada.member");
  must_pass (page, "type {p} into Code", code, secrets);
  g_free (value);
  value = field_value (page, "code");
  g_assert_cmpstr (value, ==, "493817");
  g_assert_cmpuint (sight_web_page_get_secret_fills (page), ==, 3);

  /* A trace's fill of the password, re-found on the plain field, is refused too:
   * the step ends with the code, nothing is typed. */
  trace = sight_trace_new ("default", "Fill it", password, origin, 1024, 768);
  add (trace, "fill", "{ \"ref\": \"e2\", \"param\": \"p\" }",
       "{ \"role\": \"textbox\", \"name\": \"Nickname\", \"nth\": 0 }");
  {
    g_autoptr(GAsyncResult) result = NULL;
    g_autoptr(GError) error = NULL;
    g_autoptr(JsonNode) info = NULL;

    sight_trace_replay_async (trace, page, password, secrets, 5000, NULL, done_cb, &result);
    while (result == NULL)
      g_main_context_iteration (NULL, TRUE);
    info = sight_trace_replay_finish (trace, result, &error);
    g_assert_null (info);
    g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_POLICY_DENIED);
    g_free (value);
    value = field_value (page, "nick");
    g_assert_cmpstr (value, ==, "");
  }
  g_assert_cmpuint (sight_web_page_get_secret_fills (page), ==, 3);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  GSList *uris;

  gtk_test_init (&argc, &argv, NULL);
  server = soup_server_new (NULL, NULL);
  soup_server_add_handler (server, NULL, serve_cb, NULL, NULL);
  if (!soup_server_listen_local (server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error))
    g_error ("%s", error->message);
  uris = soup_server_get_uris (server);
  port = g_uri_get_port (uris->data);
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);

  g_test_add_func ("/direct-run/flow", test_flow);
  g_test_add_func ("/direct-run/trace-replay", test_trace_replay);
  g_test_add_func ("/direct-run/keys-and-upload", test_keys_and_upload);
  g_test_add_func ("/direct-run/secret-fields", test_secret_fields);
  return g_test_run ();
}
