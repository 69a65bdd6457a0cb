/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <gtk/gtk.h>
#include <libsoup/soup.h>
#include <string.h>
#include <webkit/webkit.h>

#include "export-site-common.h"
#include "sight-direct-step.h"
#include "sight-recorder.h"
#include "sight-secrets.h"

/* A person's session on the fixture site, scripted in the page's own world,
 * as the recorder sees it. */

typedef struct {
  SoupServer    *server;
  guint          port;
  GtkWidget     *window;
  WebKitWebView *view;
} Fixture;

static gboolean
flag_cb (gpointer user_data)
{
  *(gboolean *) user_data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Iterates the main loop until *@done or @timeout_ms passed. */
static gboolean
wait_until (gboolean *done,
            guint     timeout_ms)
{
  gboolean expired = FALSE;
  guint id = g_timeout_add (timeout_ms, flag_cb, &expired);

  while (!*done && !expired)
    g_main_context_iteration (NULL, TRUE);
  if (!expired)
    g_source_remove (id);
  return *done;
}

static void
sleep_ms (guint ms)
{
  gboolean done = FALSE;

  g_timeout_add (ms, flag_cb, &done);
  wait_until (&done, ms + 1000);
}

static void
load_cb (WebKitWebView   *view,
         WebKitLoadEvent  event,
         gpointer         user_data)
{
  if (event == WEBKIT_LOAD_FINISHED)
    *(gboolean *) user_data = TRUE;
}

static void
load (Fixture    *f,
      const char *path)
{
  g_autofree char *uri = g_strdup_printf ("http://127.0.0.1:%u%s", f->port, path);
  gboolean done = FALSE;
  gulong id = g_signal_connect (f->view, "load-changed", G_CALLBACK (load_cb), &done);

  webkit_web_view_load_uri (f->view, uri);
  g_assert_true (wait_until (&done, 20000));
  g_signal_handler_disconnect (f->view, id);
}

static void
js_done_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JSCValue) value = webkit_web_view_evaluate_javascript_finish (WEBKIT_WEB_VIEW (source),
                                                                          result, &error);

  g_assert_no_error (error);
  *(gboolean *) user_data = TRUE;
}

/* Runs @script in @world (NULL: the page's own) and waits for it. */
static void
run_js (Fixture    *f,
        const char *world,
        const char *script)
{
  gboolean done = FALSE;

  webkit_web_view_evaluate_javascript (f->view, script, -1, world, NULL, NULL, js_done_cb, &done);
  g_assert_true (wait_until (&done, 10000));
}

static void
wait_for_steps (SightRecorder *recorder,
                guint          n)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  for (;;)
    {
      g_autoptr(JsonNode) steps = sight_recorder_get_steps (recorder);

      if (json_array_get_length (json_node_get_array (steps)) >= n)
        return;
      if (g_get_monotonic_time () > deadline)
        g_error ("only %u of %u steps were recorded", json_array_get_length (json_node_get_array (steps)), n);
      g_main_context_iteration (NULL, FALSE);
      g_usleep (5000);
    }
}

static const char type_helper[] =
  "const type = (el, text) => { el.focus ();"
  "  for (const ch of text) { el.value += ch;"
  "    el.dispatchEvent (new InputEvent ('input', { bubbles: true, data: ch,"
  "                                                 inputType: 'insertText' })); } };"
  "const press = (el, key) => el.dispatchEvent (new KeyboardEvent ('keydown',"
  "  { key, bubbles: true }));"
  "const tap = (el) => { el.dispatchEvent (new MouseEvent ('mousedown', { bubbles: true }));"
  "                      el.click (); };";

/* The fixture site on loopback and a web view in a window to record in. */
static void
fixture_start (Fixture *f)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSList) uris = NULL;

  f->server = soup_server_new (NULL, NULL);
  soup_server_add_handler (f->server, NULL, export_site_serve_cb, NULL, NULL);
  soup_server_listen_local (f->server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error);
  g_assert_no_error (error);
  uris = soup_server_get_uris (f->server);
  f->port = g_uri_get_port (uris->data);
  g_slist_free_full (g_steal_pointer (&uris), (GDestroyNotify) g_uri_unref);

  {
    /* nothing of the session outlives the test */
    g_autoptr(WebKitNetworkSession) session = webkit_network_session_new_ephemeral ();

    f->view = WEBKIT_WEB_VIEW (g_object_new (WEBKIT_TYPE_WEB_VIEW, "network-session", session,
                                            NULL));
  }
  f->window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (f->window), 1024, 768);
  gtk_window_set_child (GTK_WINDOW (f->window), GTK_WIDGET (f->view));
  gtk_window_present (GTK_WINDOW (f->window));
}

static void
test_records_a_session (void)
{
  Fixture f = { 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(SightRecorder) recorder = NULL;
  g_autoptr(JsonNode) steps_node = NULL;
  g_autoptr(JsonNode) file = NULL;
  g_autofree char *json = NULL;
  g_autofree char *login_url = NULL;
  g_autofree char *go_to = NULL;
  JsonArray *steps;
  const char *expected[] = {
    "type \"member@example.test\" into the \"Email\" field",
    "type {password} into the \"Password\" field",
    "check the \"Remember me\" checkbox",
    "select \"Pro\" in the \"Plan\" dropdown",
    "expect the \"Remember me\" checkbox checked",
    "click the \"Sign in\" button",
    "click the 2nd \"Add to cart\" button",
    "type \"tea\" into the \"Search\" field",
    "press Enter in the \"Search\" field",
    "expect the \"Search\" field has value \"tea\"",
    "expect the \"Welcome\" heading visible",
    NULL,  /* go to …/login, filled in below */
  };

  fixture_start (&f);
  recorder = sight_recorder_new (f.view);
  sight_recorder_set_credential_name (recorder, "member.password");
  sight_recorder_set_navigation_window (recorder, 4000);
  sight_recorder_start (recorder);
  g_assert_true (sight_recorder_is_recording (recorder));

  load (&f, "/login");
  login_url = g_strdup_printf ("http://127.0.0.1:%u/login", f.port);
  g_assert_cmpstr (sight_recorder_get_start_url (recorder), ==, login_url);

  {
    g_autofree char *script = g_strconcat ("{", type_helper,
      "type (document.querySelector ('[name=email]'), 'member@example.test');"
      "type (document.querySelector ('[name=password]'), 'correct horse');"
      "document.querySelector ('[name=remember]').click ();"
      "const plan = document.querySelector ('[name=plan]'); plan.value = 'Pro';"
      "plan.dispatchEvent (new Event ('change', { bubbles: true })); }", NULL);

    run_js (&f, NULL, script);
  }
  wait_for_steps (recorder, 4);

  /* an assertion, picked: the click does not reach the page */
  sight_recorder_pick (recorder, SIGHT_PICK_CHECKED);
  run_js (&f, "sightline", "true;");
  {
    g_autofree char *script = g_strconcat ("{", type_helper,
      "tap (document.querySelector ('[name=remember]')); }", NULL);

    run_js (&f, NULL, script);
  }
  wait_for_steps (recorder, 5);

  /* signing in navigates; the navigation is the click's, not a step */
  {
    gboolean done = FALSE;
    gulong id = g_signal_connect (f.view, "load-changed", G_CALLBACK (load_cb), &done);

    run_js (&f, NULL, "document.querySelector ('button[type=submit]').click ();");
    g_assert_true (wait_until (&done, 20000));
    g_signal_handler_disconnect (f.view, id);
  }
  g_assert_nonnull (strstr (webkit_web_view_get_uri (f.view), "/dashboard"));

  {
    g_autofree char *script = g_strconcat ("{", type_helper,
      "document.querySelectorAll ('[data-item]')[1].click ();"
      "const search = document.getElementById ('search');"
      "type (search, 'tea'); press (search, 'Enter'); }", NULL);

    run_js (&f, NULL, script);
  }
  wait_for_steps (recorder, 9);

  sight_recorder_pick (recorder, SIGHT_PICK_VALUE);
  run_js (&f, "sightline", "true;");
  run_js (&f, NULL, "{ const el = document.getElementById ('search');"
                    "  el.dispatchEvent (new MouseEvent ('mousedown', { bubbles: true }));"
                    "  el.click (); }");
  wait_for_steps (recorder, 10);
  sight_recorder_pick (recorder, SIGHT_PICK_VISIBLE);
  run_js (&f, "sightline", "true;");
  run_js (&f, NULL, "{ const el = document.querySelector ('h1');"
                    "  el.dispatchEvent (new MouseEvent ('mousedown', { bubbles: true }));"
                    "  el.click (); }");
  wait_for_steps (recorder, 11);

  /* a navigation the person started (the address bar) is a step */
  sleep_ms (4100);
  load (&f, "/login");
  wait_for_steps (recorder, 12);

  sight_recorder_stop (recorder);
  g_assert_false (sight_recorder_is_recording (recorder));

  go_to = g_strdup_printf ("go to %s", login_url);
  expected[11] = go_to;
  steps_node = sight_recorder_get_steps (recorder);
  steps = json_node_get_array (steps_node);
  json = json_to_string (steps_node, TRUE);
  g_test_message ("%s", json);
  g_assert_cmpuint (json_array_get_length (steps), ==, G_N_ELEMENTS (expected));
  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    {
      JsonObject *step = json_array_get_object_element (steps, i);
      g_autoptr(SightDirectStep) parsed = NULL;

      g_assert_cmpstr (json_object_get_string_member (step, "do"), ==, expected[i]);
      /* every recorded step is a direct step that parses */
      parsed = sight_direct_step_parse (json_object_get_string_member (step, "do"), &error);
      g_assert_no_error (error);
    }

  /* descriptors: how the observation named the element */
  {
    JsonObject *click = json_array_get_object_element (steps, 6);
    JsonObject *target = json_object_get_object_member (click, "target");

    g_assert_cmpstr (json_object_get_string_member (target, "role"), ==, "button");
    g_assert_cmpstr (json_object_get_string_member (target, "name"), ==, "Add to cart");
    g_assert_cmpint (json_object_get_int_member (target, "nth"), ==, 2);
    g_assert_cmpint (json_object_get_int_member (target, "count"), ==, 2);
    g_assert_true (g_str_has_prefix (json_object_get_string_member (target, "ref"), "e"));
  }

  /* the password is a credential reference; its value is nowhere */
  {
    JsonObject *fill = json_array_get_object_element (steps, 1);
    JsonObject *params = json_object_get_object_member (fill, "params");

    g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (params, "password"),
                                                    "secret"), ==, "member.password");
    g_assert_null (strstr (json, "correct horse"));
    g_assert_null (strstr (json, "correct"));
  }

  /* the picked click never reached the page: the box is still checked */
  file = sight_recorder_to_test_file (recorder, "recorded");
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (file), "url"), ==,
                   login_url);

  gtk_window_destroy (GTK_WINDOW (f.window));
  g_object_unref (f.server);
}

/* A click on the image of a clickable card records the card, whose name
 * holds the image's alt (the tree lists the image inside it). */
static void
test_records_the_card_not_its_image (void)
{
  Fixture f = { 0 };
  g_autoptr(SightRecorder) recorder = NULL;
  g_autoptr(JsonNode) steps_node = NULL;
  JsonObject *target;

  fixture_start (&f);
  recorder = sight_recorder_new (f.view);
  sight_recorder_start (recorder);
  load (&f, "/login");
  {
    g_autofree char *script = g_strconcat ("{", type_helper,
      "const card = document.createElement ('div');"
      "card.style.cursor = 'pointer';"
      "card.innerHTML = '<img src=\"data:,\" alt=\"Blue mug\" width=\"20\" height=\"20\"> $12';"
      "document.body.prepend (card);"
      "tap (card.querySelector ('img')); }", NULL);

    run_js (&f, NULL, script);
  }
  wait_for_steps (recorder, 1);
  sight_recorder_stop (recorder);

  steps_node = sight_recorder_get_steps (recorder);
  g_test_message ("%s", json_to_string (steps_node, TRUE));
  target = json_object_get_object_member (json_array_get_object_element (json_node_get_array (steps_node), 0),
                                          "target");
  g_assert_cmpstr (json_object_get_string_member (target, "name"), ==, "Blue mug $12");
  g_assert_cmpstr (json_object_get_string_member (target, "tag"), ==, "div");

  gtk_window_destroy (GTK_WINDOW (f.window));
  g_object_unref (f.server);
}

typedef struct {
  guint  count;
  char  *name;
  char  *origin;
  char  *purpose;
} Offer;

static void
offered_cb (SightRecorder *recorder,
            const char    *name,
            const char    *origin,
            const char    *purpose,
            Offer         *offer)
{
  offer->count++;
  g_free (offer->name);
  g_free (offer->origin);
  g_free (offer->purpose);
  offer->name = g_strdup (name);
  offer->origin = g_strdup (origin);
  offer->purpose = g_strdup (purpose);
}

static void
type_password (Fixture *f)
{
  g_autofree char *script = g_strconcat ("{", type_helper,
    "type (document.querySelector ('[name=email]'), 'member@example.test');"
    "type (document.querySelector ('[name=password]'), 'correct horse');"
    "tap (document.querySelector ('[name=remember]')); }", NULL);

  run_js (f, NULL, script);
}

/* With offers on, a typed password is held host-side for the offer (known
 * to the redactor at once), the name proposed from the account typed before
 * it; accepting names the credential in the step and hands the value over
 * once. With offers off, the value is never read. */
static void
test_credential_offer (void)
{
  Fixture f = { 0 };
  Offer offer = { 0 };
  g_autoptr(SightRecorder) recorder = NULL;
  g_autoptr(JsonNode) steps_node = NULL;
  g_autofree char *origin = NULL;
  g_autofree char *json = NULL;
  g_autofree char *value = NULL;
  const char *pending = NULL;
  JsonObject *params;

  sight_secrets_forget_all ();
  fixture_start (&f);
  origin = g_strdup_printf ("http://127.0.0.1:%u", f.port);
  recorder = sight_recorder_new (f.view);
  g_signal_connect (recorder, "credential-offered", G_CALLBACK (offered_cb), &offer);
  sight_recorder_set_offer_credentials (recorder, TRUE);
  sight_recorder_start (recorder);
  load (&f, "/login");
  type_password (&f);
  wait_for_steps (recorder, 3);
  g_assert_cmpuint (offer.count, ==, 1);
  g_assert_cmpstr (offer.name, ==, "member.password");
  g_assert_cmpstr (offer.origin, ==, origin);
  g_assert_cmpstr (offer.purpose, ==, "password");
  g_assert_true (sight_recorder_get_credential_offer (recorder, &pending, NULL, NULL));
  g_assert_cmpstr (pending, ==, "member.password");
  /* the redactor knows it before anyone answers; the steps never hold it */
  g_assert_true (sight_secrets_contains_any ("typed correct horse"));
  steps_node = sight_recorder_get_steps (recorder);
  json = json_to_string (steps_node, FALSE);
  g_assert_null (strstr (json, "correct horse"));

  /* accepted under an edited name: the step names it, the value comes out once */
  value = sight_recorder_accept_credential (recorder, "member.pw");
  g_assert_cmpstr (value, ==, "correct horse");
  g_assert_false (sight_recorder_get_credential_offer (recorder, NULL, NULL, NULL));
  g_assert_null (sight_recorder_accept_credential (recorder, "again"));
  g_clear_pointer (&steps_node, json_node_unref);
  steps_node = sight_recorder_get_steps (recorder);
  params = json_object_get_object_member (json_array_get_object_element (
                                            json_node_get_array (steps_node), 1), "params");
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (params,
                                                                                 "password"),
                                                  "secret"), ==, "member.pw");

  /* offers off: no offer, nothing held */
  sight_recorder_stop (recorder);
  sight_recorder_set_offer_credentials (recorder, FALSE);
  sight_recorder_start (recorder);
  load (&f, "/login");
  type_password (&f);
  wait_for_steps (recorder, 6);
  g_assert_cmpuint (offer.count, ==, 1);
  g_assert_false (sight_recorder_get_credential_offer (recorder, NULL, NULL, NULL));

  sight_recorder_stop (recorder);
  gtk_window_destroy (GTK_WINDOW (f.window));
  g_object_unref (f.server);
  g_free (offer.name);
  g_free (offer.origin);
  g_free (offer.purpose);
  sight_secrets_forget_all ();
}

int
main (int    argc,
      char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  g_test_add_func ("/recorder/session", test_records_a_session);
  g_test_add_func ("/recorder/credential-offer", test_credential_offer);
  g_test_add_func ("/recorder/card-not-its-image", test_records_the_card_not_its_image);
  return g_test_run ();
}
