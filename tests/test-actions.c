/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-actions"

#include "config.h"

#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <libsoup/soup.h>
#include <string.h>

#include "sight-actions.h"
#include "sight-error.h"
#include "sight-observation.h"
#include "sight-web-page.h"

static SoupServer *server;
static char *base_url;
static SightWebPage *page;  /* one page for the tests of the form fixture */

static gboolean
unpause_cb (gpointer user_data)
{
  SoupServerMessage *msg = user_data;

  soup_server_message_set_status (msg, 200, NULL);
  soup_server_message_set_response (msg, "text/plain", SOUP_MEMORY_STATIC, "loaded", 6);
  soup_server_message_unpause (msg);
  g_object_unref (msg);
  return G_SOURCE_REMOVE;
}

/* Settling by signals: each button's page changes later than the old fixed
 * 50 ms window (a timer, a timer then a request, a request of 150 ms), or
 * never stops changing. With ?hostile=1 the page first replaces the globals
 * the page hooks rely on; with ?hold=1, since load a request is in flight
 * that no action started: /hold is never answered. */
static GPtrArray *held;
static const char settle_html[] =
  "<!doctype html><title>Settle</title>"
  "<script>if (location.search.includes ('hostile')) {"
  " const t = window.setTimeout, f = window.fetch;"
  " window.setTimeout = (h, d) => t (h, d); window.fetch = (...a) => f (...a);"
  " Reflect.apply = () => { throw new Error ('no'); };"
  " Promise.prototype.then = ((then) => function (a, b) { return then.call (this, a, b); })"
  " (Promise.prototype.then);"
  " EventTarget.prototype.dispatchEvent = () => true;"
  " EventTarget.prototype.addEventListener = () => {};"
  " WeakSet.prototype.add = function () { return this; };"
  " WeakSet.prototype.has = () => false; }"
  " if (location.search.includes ('hold')) fetch ('/hold');</script>"
  "<button id=late onclick=\"setTimeout (() => out.textContent = 'late', 80)\">Late</button>"
  "<button id=chain onclick=\"setTimeout (() => fetch ('/slow?ms=150').then (r => r.text ())"
  ".then (t => out.textContent = 'chained ' + t), 60)\">Chain</button>"
  "<button id=xhr onclick=\"const x = new XMLHttpRequest (); x.open ('GET', '/slow?ms=150');"
  " x.onload = () => out.textContent = 'xhr ' + x.responseText; x.send ()\">XHR</button>"
  "<button id=spin onclick=\"(function tick () { out.dataset.n = (+out.dataset.n || 0) + 1;"
  " requestAnimationFrame (tick); }) ()\">Spin</button>"
  "<button id=idle-frames onclick=\"(function t () { requestAnimationFrame (t); }) ()\">"
  "Idle frames</button>"
  "<button id=forever onclick=\"setInterval (() => {}, 30)\">Forever</button>"
  "<button id=noop>Nothing</button>"
  /* what the hooks did not count before: an interval that ticks three times,
   * a timer a little over the old 500 ms bound, a MessageChannel hop that
   * sets a timer, a window.postMessage to itself, an animation-frame count
   * that changes the DOM only at its end, and a same-origin iframe */
  "<button id=interval onclick=\"let n = 0; const i = setInterval (() => {"
  " if (++n === 3) { clearInterval (i); out.textContent = 'ticked'; } }, 40)\">Interval</button>"
  "<button id=longer onclick=\"setTimeout (() => out.textContent = 'later', 700)\">Longer</button>"
  "<button id=channel onclick=\"const c = new MessageChannel ();"
  " c.port1.onmessage = () => setTimeout (() => out.textContent = 'messaged', 60);"
  " c.port2.postMessage (1)\">Channel</button>"
  "<button id=post onclick=\"window.addEventListener ('message', function m () {"
  " window.removeEventListener ('message', m);"
  " setTimeout (() => out.textContent = 'posted', 60); }); postMessage ('go', '*')\">Post</button>"
  "<button id=frames onclick=\"let n = 0; (function step () {"
  " if (++n < 5) requestAnimationFrame (step); else out.textContent = 'animated'; }) ()\">"
  "Frames</button>"
  "<iframe id=inner src=/settle-inner></iframe>"
  "<p id=out>none</p>";

static void
server_cb (SoupServer        *soup_server,
           SoupServerMessage *msg,
           const char        *path,
           GHashTable        *query,
           gpointer           user_data)
{
  if (g_str_equal (path, "/form"))
    {
      g_autofree char *file = g_test_build_filename (G_TEST_DIST, "fixtures", "actions",
                                                     "form.html", NULL);
      g_autofree char *html = NULL;
      gsize len;

      g_assert_true (g_file_get_contents (file, &html, &len, NULL));
      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "text/html; charset=utf-8", SOUP_MEMORY_COPY,
                                        html, len);
    }
  else if (g_str_equal (path, "/results"))
    {
      const char *q = query != NULL ? g_hash_table_lookup (query, "q") : NULL;
      g_autofree char *escaped = g_markup_escape_text (q != NULL ? q : "", -1);
      g_autofree char *html = g_strdup_printf ("<!doctype html><title>Results</title>"
                                               "<p id=q>%s</p>", escaped);

      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "text/html", SOUP_MEMORY_COPY, html,
                                        strlen (html));
    }
  else if (g_str_equal (path, "/settle"))
    {
      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "text/html", SOUP_MEMORY_STATIC, settle_html,
                                        strlen (settle_html));
    }
  else if (g_str_equal (path, "/settle-inner"))
    {
      static const char html[] =
        "<!doctype html><button id=late onclick=\"setTimeout (() => out.textContent = 'framed',"
        " 80)\">Framed</button><p id=out>none</p>";

      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "text/html", SOUP_MEMORY_STATIC, html,
                                        strlen (html));
    }
  else if (g_str_equal (path, "/onward"))
    {
      static const char html[] =
        "<!doctype html><title>Onward</title><a id=onward href=/after-load>Onward</a>";

      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "text/html", SOUP_MEMORY_STATIC, html,
                                        strlen (html));
    }
  else if (g_str_equal (path, "/after-load"))
    {
      /* an image its load handler asks for, which WebKit waits for before it
       * says the load finished */
      static const char html[] =
        "<!doctype html><title>After load</title><p>arrived</p>"
        "<script>window.addEventListener ('load', () => { const img = new Image ();"
        " img.id = 'late'; img.src = '/slow?ms=3000'; document.body.append (img); });</script>";

      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "text/html", SOUP_MEMORY_STATIC, html,
                                        strlen (html));
    }
  else if (g_str_equal (path, "/hold"))
    {
      soup_server_message_pause (msg);
      g_ptr_array_add (held, g_object_ref (msg));
    }
  else if (g_str_equal (path, "/popup-target"))
    {
      static const char html[] = "<!doctype html><title>Help</title><h1>Help</h1>";

      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "text/html", SOUP_MEMORY_STATIC, html,
                                        strlen (html));
    }
  else if (g_str_equal (path, "/slow"))
    {
      const char *ms = query != NULL ? g_hash_table_lookup (query, "ms") : NULL;

      soup_server_message_pause (msg);
      g_timeout_add (ms != NULL ? atoi (ms) : 500, unpause_cb, g_object_ref (msg));
    }
  else
    soup_server_message_set_status (msg, 404, NULL);
}

static void
store_result_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  GAsyncResult **out = user_data;

  *out = g_object_ref (result);
}

static GAsyncResult *
wait_for_result (GAsyncResult **slot)
{
  gint64 deadline = g_get_monotonic_time () + 40 * G_USEC_PER_SEC;

  while (*slot == NULL && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_nonnull (*slot);
  return *slot;
}

static void
load (SightWebPage *target,
      const char   *path)
{
  g_autofree char *url = g_strconcat (base_url, path + 1, NULL);
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;

  sight_web_page_load_async (target, url, SIGHT_WAIT_UNTIL_LOAD, 20000, NULL, store_result_cb,
                             &result);
  g_assert_true (sight_web_page_load_finish (target, wait_for_result (&result), &error));
  g_assert_no_error (error);
}

static JsonNode *
evaluate (const char *body,
          const char *args_json)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) args = args_json != NULL ? json_from_string (args_json, NULL) : NULL;
  JsonNode *node;

  sight_web_page_evaluate_async (page, body, args, 10000, NULL, store_result_cb, &result);
  node = sight_web_page_evaluate_finish (page, wait_for_result (&result), &error);
  g_assert_no_error (error);
  return node;
}

static void
run_js (const char *body)
{
  g_autoptr(JsonNode) node = evaluate (body, NULL);
}

static char *
evaluate_string (const char *body)
{
  g_autoptr(JsonNode) node = evaluate (body, NULL);

  return g_strdup (json_node_get_string (node));
}

/* The ref an observation gives the element @selector matches; "#frame >>
 * #button" is #button in the same-origin iframe #frame. */
static char *
ref_for (const char *selector)
{
  g_autofree char *body = NULL;
  g_autofree char *args = NULL;
  g_autoptr(JsonNode) node = NULL;

  body = g_strconcat (sight_observation_get_script (),
                      "\n__sight.snapshot.observe ({ text: 'none' });"
                      "\nconst [outer, inner] = args.selector.split (' >> ');"
                      "\nconst el = inner === undefined ? document.querySelector (outer)"
                      "\n  : document.querySelector (outer).contentDocument.querySelector (inner);"
                      "\nreturn el ? __sight.snapshot.refOf (el) : null;", NULL);
  args = g_strdup_printf ("{\"selector\": \"%s\"}", selector);
  node = evaluate (body, args);
  g_assert_true (JSON_NODE_HOLDS_VALUE (node));
  return g_strdup (json_node_get_string (node));
}

static JsonObject *
perform (const char  *selector,
         const char  *action_json,
         guint        timeout_ms,
         GError     **error)
{
  g_autofree char *ref = selector != NULL ? ref_for (selector) : NULL;
  g_autoptr(JsonNode) action = json_from_string (action_json, NULL);
  g_autoptr(GAsyncResult) result = NULL;

  g_assert_nonnull (action);
  sight_web_page_perform_async (page, ref, json_node_get_object (action), timeout_ms, NULL,
                                store_result_cb, &result);
  return sight_web_page_perform_finish (page, wait_for_result (&result), error);
}

static JsonObject *
perform_ok (const char *selector,
            const char *action_json)
{
  g_autoptr(GError) error = NULL;
  JsonObject *result = perform (selector, action_json, 5000, &error);

  g_assert_no_error (error);
  g_assert_nonnull (result);
  return result;
}

static void
reload_form (void)
{
  load (page, "/form");
}

static void
test_click_and_descriptor (void)
{
  g_autoptr(JsonObject) result = NULL;
  g_autofree char *items = NULL;
  JsonObject *desc;

  reload_form ();
  result = perform_ok ("#add", "{\"type\": \"click\"}");
  items = evaluate_string ("return document.querySelectorAll ('#items li').length + '';");
  g_assert_cmpstr (items, ==, "1");
  g_assert_false (json_object_get_boolean_member (result, "navigated"));
  g_assert_true (json_object_get_boolean_member (result, "settled"));
  g_assert_cmpstr (json_object_get_string_member (result, "input"), ==, "synthetic");
  desc = json_object_get_object_member (result, "descriptor");
  g_assert_cmpstr (json_object_get_string_member (desc, "role"), ==, "button");
  g_assert_cmpstr (json_object_get_string_member (desc, "name"), ==, "Add item");
  g_assert_cmpstr (json_object_get_string_member (desc, "css"), ==, "#add");
  g_assert_cmpint (json_object_get_int_member (desc, "nth"), ==, 0);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (desc, "viewport"),
                                               "width"), ==, 1280);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (desc, "box"),
                                               "width"), >, 10);
  g_clear_pointer (&result, json_object_unref);

  /* A double click is two clicks and a dblclick. */
  result = perform_ok ("#add", "{\"type\": \"click\", \"clickCount\": 2}");
  g_free (items);
  items = evaluate_string ("return document.querySelectorAll ('#items li').length + '';");
  g_assert_cmpstr (items, ==, "3");
}

static void
test_fill_type_trusted (void)
{
  g_autoptr(JsonObject) result = NULL;
  g_autofree char *value = NULL;
  g_autofree char *trust = NULL;

  reload_form ();
  result = perform_ok ("#name", "{\"type\": \"fill\", \"value\": \"Ada Lovelace\"}");
  g_assert_cmpstr (json_object_get_string_member (result, "input"), ==, "editor");
  value = evaluate_string ("return document.getElementById ('name').value;");
  g_assert_cmpstr (value, ==, "Ada Lovelace");
  /* Which path each event took: text through the editor is trusted. */
  trust = evaluate_string ("return document.body.dataset.trust;");
  g_test_message ("fill events: %s", trust);
  g_assert_nonnull (strstr (trust, "beforeinput:true"));
  g_assert_nonnull (strstr (trust, "input:true"));
  g_assert_nonnull (strstr (trust, "change:false"));
  g_clear_pointer (&result, json_object_unref);

  /* fill replaces; type appends key by key. */
  result = perform_ok ("#name", "{\"type\": \"type\", \"text\": \" II\"}");
  g_clear_pointer (&value, g_free);
  value = evaluate_string ("return document.getElementById ('name').value;");
  g_assert_cmpstr (value, ==, "Ada Lovelace II");
  g_clear_pointer (&trust, g_free);
  trust = evaluate_string ("return document.body.dataset.trust;");
  g_assert_nonnull (strstr (trust, "keydown:false"));
  g_assert_nonnull (strstr (trust, "keyup:false"));
  g_clear_pointer (&result, json_object_unref);

  /* A controlled input sees the new value and re-renders from its state. */
  result = perform_ok ("#controlled", "{\"type\": \"fill\", \"value\": \"hello\"}");
  g_clear_pointer (&value, g_free);
  value = evaluate_string ("return document.getElementById ('mirror').textContent + '/' + "
                           "document.getElementById ('controlled').value;");
  g_assert_cmpstr (value, ==, "HELLO/HELLO");
}

static void
test_press (void)
{
  g_autoptr(JsonObject) result = NULL;
  g_autofree char *text = NULL;

  reload_form ();
  perform_ok ("#keys", "{\"type\": \"fill\", \"value\": \"abc\"}");
  result = perform_ok ("#keys", "{\"type\": \"press\", \"keys\": [\"Control+A\", \"Backspace\", "
                                "\"x\", \"Escape\"]}");
  text = evaluate_string ("return document.getElementById ('keys').value + '|' + "
                          "document.getElementById ('key-log').textContent.trim ();");
  g_assert_cmpstr (text, ==, "x|C-a Backspace x Escape");
  g_clear_pointer (&result, json_object_unref);

  /* Tab moves the focus on. */
  result = perform_ok ("#keys", "{\"type\": \"press\", \"keys\": \"Tab\"}");
  g_clear_pointer (&text, g_free);
  text = evaluate_string ("return document.activeElement.id;");
  g_assert_cmpstr (text, !=, "keys");
}

static void
test_submit_on_enter (void)
{
  g_autoptr(JsonObject) result = NULL;
  g_autofree char *q = NULL;

  reload_form ();
  perform_ok ("#q", "{\"type\": \"fill\", \"value\": \"sightline\"}");
  result = perform_ok ("#q", "{\"type\": \"press\", \"keys\": \"Enter\"}");
  g_assert_true (json_object_get_boolean_member (result, "navigated"));
  g_assert_true (g_str_has_suffix (json_object_get_string_member (result, "url"),
                                   "/results?q=sightline"));
  q = evaluate_string ("return document.getElementById ('q').textContent;");
  g_assert_cmpstr (q, ==, "sightline");

  /* Back and forward. */
  {
    g_autoptr(GAsyncResult) res = NULL;
    g_autoptr(GError) error = NULL;

    sight_web_page_history_async (page, SIGHT_HISTORY_BACK, 10000, NULL, store_result_cb, &res);
    g_assert_true (sight_web_page_history_finish (page, wait_for_result (&res), &error));
    g_assert_no_error (error);
    g_assert_true (g_str_has_suffix (sight_web_page_get_uri (page), "/form"));
    g_clear_object (&res);
    sight_web_page_history_async (page, SIGHT_HISTORY_FORWARD, 10000, NULL, store_result_cb,
                                  &res);
    g_assert_true (sight_web_page_history_finish (page, wait_for_result (&res), &error));
    g_assert_true (g_str_has_suffix (sight_web_page_get_uri (page), "q=sightline"));
    g_clear_object (&res);
    sight_web_page_history_async (page, SIGHT_HISTORY_FORWARD, 10000, NULL, store_result_cb,
                                  &res);
    g_assert_false (sight_web_page_history_finish (page, wait_for_result (&res), &error));
    g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED);
  }
}

static void
test_select_check_hover_scroll (void)
{
  g_autoptr(JsonObject) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;

  reload_form ();
  perform_ok ("#color", "{\"type\": \"select\", \"values\": [\"Blue\"]}");
  perform_ok ("#agree", "{\"type\": \"check\"}");
  perform_ok ("#agree", "{\"type\": \"check\"}");
  perform_ok ("#hover-target", "{\"type\": \"hover\"}");
  perform_ok ("#scroller", "{\"type\": \"scroll\", \"dy\": 120}");
  text = evaluate_string ("return [document.getElementById ('color').value, "
                          "document.getElementById ('agree').checked, "
                          "document.getElementById ('hover-target').textContent, "
                          "document.getElementById ('scroller').scrollTop].join (' ');");
  g_assert_cmpstr (text, ==, "b true Hovered 120");
  perform_ok ("#agree", "{\"type\": \"uncheck\"}");
  g_clear_pointer (&text, g_free);
  text = evaluate_string ("return String (document.getElementById ('agree').checked);");
  g_assert_cmpstr (text, ==, "false");

  result = perform ("#color", "{\"type\": \"select\", \"values\": [\"Purple\"]}", 1000, &error);
  g_assert_null (result);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED);
  g_assert_nonnull (strstr (error->message, "\"Green\""));
  g_clear_error (&error);

  result = perform ("#add", "{\"type\": \"levitate\"}", 1000, &error);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
}

static void
test_actionability (void)
{
  g_autoptr(JsonObject) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *clicked = NULL;
  gint64 start;

  reload_form ();
  /* Covered: the error names the consent banner. */
  result = perform ("#covered", "{\"type\": \"click\"}", 800, &error);
  g_assert_null (result);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "covered by dialog \"Cookie consent\""));
  g_clear_error (&error);

  /* Accepting the banner uncovers it. */
  perform_ok ("#accept", "{\"type\": \"click\"}");
  result = perform_ok ("#covered", "{\"type\": \"click\"}");
  clicked = evaluate_string ("return document.body.dataset.clicked;");
  g_assert_cmpstr (clicked, ==, "covered");
  g_clear_pointer (&result, json_object_unref);

  /* Disabled. */
  result = perform ("#disabled", "{\"type\": \"click\"}", 500, &error);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED);
  g_assert_nonnull (strstr (error->message, "disabled"));
  g_clear_error (&error);

  /* Never still. */
  result = perform ("#spinner", "{\"type\": \"click\"}", 800, &error);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED);
  g_assert_nonnull (strstr (error->message, "moving"));
  g_clear_error (&error);

  /* Moving for 600 ms, then still: the click waits for it. */
  run_js ("const m = document.getElementById ('mover');"
          "m.style.animation = 'none'; void m.offsetWidth;"
          "m.style.animation = 'slide 0.6s linear 1 forwards'; return null;");
  start = g_get_monotonic_time ();
  result = perform_ok ("#mover", "{\"type\": \"click\"}");
  g_clear_pointer (&clicked, g_free);
  clicked = evaluate_string ("return document.body.dataset.clicked;");
  g_assert_cmpstr (clicked, ==, "mover");
  g_assert_cmpint (g_get_monotonic_time () - start, >, 200 * 1000);

  /* Editable for fill. */
  result = perform ("#add", "{\"type\": \"fill\", \"value\": \"x\"}", 300, &error);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED);
  g_assert_nonnull (strstr (error->message, "not editable"));
}

static void
test_files_and_drag (void)
{
  g_autoptr(JsonObject) result = NULL;
  g_autofree char *dir = g_dir_make_tmp ("sightline-actions-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "notes.txt", NULL);
  g_autofree char *action = NULL;
  g_autofree char *text = NULL;

  reload_form ();
  g_assert_true (g_file_set_contents (path, "twelve bytes", -1, NULL));
  action = g_strdup_printf ("{\"type\": \"setFiles\", \"files\": [\"%s\"]}", path);
  result = perform_ok ("#upload", action);
  g_assert_true (json_object_get_boolean_member (result, "filesSelected"));
  text = evaluate_string ("return document.getElementById ('file-out').textContent;");
  g_assert_cmpstr (text, ==, "notes.txt:12");
  g_unlink (path);
  g_rmdir (dir);
  g_clear_pointer (&result, json_object_unref);

  {
    g_autofree char *to = ref_for ("#drop");
    g_autofree char *drag = g_strdup_printf ("{\"type\": \"drag\", \"to\": \"%s\"}", to);

    result = perform_ok ("#drag-item", drag);
  }
  g_clear_pointer (&text, g_free);
  text = evaluate_string ("return document.getElementById ('drop').textContent;");
  g_assert_cmpstr (text, ==, "dropped payload");
}

static void
test_settles_after_slow_request (void)
{
  g_autoptr(JsonObject) result = NULL;
  g_autofree char *text = NULL;

  reload_form ();
  result = perform_ok ("#load-data", "{\"type\": \"click\"}");
  text = evaluate_string ("return document.getElementById ('data-out').textContent;");
  g_assert_cmpstr (text, ==, "loaded");
  g_assert_cmpint (json_object_get_int_member (result, "settleMs"), >=, 700);
  g_assert_true (json_object_get_boolean_member (result, "settled"));
}

/* The page's update after the action is seen however late it comes, as long
 * as the action's own handlers started the work; the reason is a signal, not
 * a window. */
static void
check_settles_in (const char *path,
                  const char *button,
                  const char *out,
                  const char *expected)
{
  g_autoptr(JsonObject) result = NULL;
  g_autofree char *text = NULL;
  g_autofree char *read = g_strdup_printf ("return %s.getElementById ('out').textContent;", out);

  load (page, path);
  result = perform_ok (button, "{\"type\": \"click\"}");
  text = evaluate_string (read);
  g_test_message ("%s %s: %s after %" G_GINT64_FORMAT " ms (%s)", path, button, text,
                  json_object_get_int_member (result, "settleMs"),
                  json_object_get_string_member_with_default (result, "settleReason", "?"));
  g_assert_cmpstr (text, ==, expected);
  g_assert_true (json_object_get_boolean_member (result, "settled"));
  g_assert_cmpstr (json_object_get_string_member_with_default (result, "settleReason", ""), ==,
                   "signals");
}

static void
check_settles_after (const char *path,
                     const char *button,
                     const char *expected)
{
  check_settles_in (path, button, "document", expected);
}

static void
test_settles_by_signals (void)
{
  g_autoptr(JsonObject) result = NULL;
  JsonObject *settle;

  /* a timer of 80 ms; a timer of 60 ms that fetches for 150 ms; an XHR of 150 ms */
  check_settles_after ("/settle", "#late", "late");
  check_settles_after ("/settle", "#chain", "chained loaded");
  check_settles_after ("/settle", "#xhr", "xhr loaded");
  /* the page replaced the globals the hooks use after the hooks took them */
  check_settles_after ("/settle?hostile=1", "#late", "late");
  check_settles_after ("/settle?hostile=1", "#chain", "chained loaded");

  /* A quiet page (nothing pending, nothing animating, no frame callback of
   * its own) settles in the task after the action, with no frame and no
   * window waited; the request in flight since load is not the action's. */
  load (page, "/settle?hold=1");
  result = perform_ok ("#noop", "{\"type\": \"click\"}");
  g_assert_true (json_object_get_boolean_member (result, "settled"));
  g_assert_cmpstr (json_object_get_string_member_with_default (result, "settleReason", ""), ==,
                   "signals");
  settle = json_object_get_object_member (result, "settle");
  g_assert_nonnull (settle);
  g_assert_cmpint (json_object_get_int_member (settle, "frames"), ==, 0);
  g_assert_cmpint (json_object_get_int_member (settle, "waitedForWork"), ==, 0);
  g_assert_cmpint (json_object_get_int_member (result, "settleMs"), <, 3000);
}

/* Work the hooks did not count before: each case is a button of /settle
 * whose change comes after the first frame. */
typedef struct {
  const char *button;
  const char *out;       /* the document whose #out changes */
  const char *expected;
} SettleCase;

static const SettleCase settle_cases[] = {
  { "#interval", "document", "ticked" },   /* an interval that ticks three times */
  { "#longer", "document", "later" },      /* a timer a little past the old 500 ms bound */
  { "#channel", "document", "messaged" },  /* a MessageChannel hop that sets a timer */
  { "#post", "document", "posted" },       /* window.postMessage to itself, then a timer */
  { "#frames", "document", "animated" },   /* animation frames, the DOM changed at the end */
  { "#inner >> #late", "document.getElementById ('inner').contentDocument", "framed" },
};

static void
test_settles_after_case (gconstpointer data)
{
  const SettleCase *c = data;

  check_settles_in ("/settle", c->button, c->out, c->expected);
}

/* A click that navigates settles at the new document's load event, as a load
 * does: not when WebKit reports the load finished, which waits for what the
 * page's load handler asked for (an image taking 3 s). */
static void
test_settles_at_load_event (void)
{
  g_autoptr(JsonObject) result = NULL;
  g_autofree char *state = NULL;

  load (page, "/onward");
  result = perform_ok ("#onward", "{\"type\": \"click\"}");
  g_test_message ("navigating click: %" G_GINT64_FORMAT " ms (%s)",
                  json_object_get_int_member (result, "settleMs"),
                  json_object_get_string_member_with_default (result, "settleReason", "?"));
  g_assert_true (g_str_has_suffix (sight_web_page_get_uri (page), "/after-load"));
  state = evaluate_string ("return document.readyState + ' ' + "
                           "String (document.getElementById ('late')?.complete);");
  g_assert_cmpstr (state, ==, "complete false");
}

/* A page that never stops changing settles within a bound (not the action's
 * timeout), and says it was still changing: one that mutates in every frame,
 * one that asks for every frame without mutating, an interval never cleared. */
static void
check_settles_while_busy (const char *button)
{
  g_autoptr(JsonObject) result = NULL;
  g_autoptr(GError) error = NULL;

  load (page, "/settle");
  result = perform (button, "{\"type\": \"click\"}", 10000, &error);
  g_assert_no_error (error);
  g_test_message ("mutating page: %" G_GINT64_FORMAT " ms (%s)",
                  json_object_get_int_member (result, "settleMs"),
                  json_object_get_string_member_with_default (result, "settleReason", "?"));
  g_assert_false (json_object_get_boolean_member (result, "settled"));
  g_assert_cmpstr (json_object_get_string_member_with_default (result, "settleReason", ""), ==,
                   "mutating");
  g_assert_cmpint (json_object_get_int_member (result, "settleMs"), <, 4000);
  g_assert_cmpint (json_object_get_int_member (result, "durationMs"), <, 6000);
}

static void
test_settles_while_mutating (void)
{
  check_settles_while_busy ("#spin");
}

static void
test_settles_while_busy (gconstpointer button)
{
  check_settles_while_busy (button);
}

static void
test_popup (void)
{
  g_autoptr(JsonObject) result = NULL;
  GPtrArray *popups;
  JsonArray *list;
  SightWebPage *popup;
  gint64 deadline;

  reload_form ();
  result = perform_ok ("#popup-link", "{\"type\": \"click\"}");
  popups = sight_web_page_get_popups (page);
  g_assert_cmpuint (popups->len, >=, 1);
  list = json_object_get_array_member (result, "popups");
  g_assert_cmpuint (json_array_get_length (list), ==, 1);
  popup = g_ptr_array_index (popups, popups->len - 1);
  g_assert_true (sight_web_page_get_opener (popup) == page);
  deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while ((sight_web_page_get_uri (popup) == NULL ||
          !g_str_has_suffix (sight_web_page_get_uri (popup), "/popup-target") ||
          webkit_web_view_is_loading (sight_web_page_get_web_view (popup))) &&
         g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (g_str_has_suffix (sight_web_page_get_uri (popup), "/popup-target"));
  g_assert_false (g_str_has_suffix (sight_web_page_get_uri (page), "/popup-target"));
}

static void
test_tap_at (void)
{
  g_autoptr(GAsyncResult) res = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) result = NULL;
  g_autoptr(JsonNode) box = NULL;
  g_autofree char *out = NULL;
  double x, y;

  reload_form ();
  /* Scroll the keypad into view, then tap the "3" and the "1" by point. */
  box = evaluate ("const c = document.getElementById ('keypad');"
                  "c.scrollIntoView ({ block: 'center' }); const r = c.getBoundingClientRect ();"
                  "return { x: r.left, y: r.top };", NULL);
  x = json_object_get_double_member (json_node_get_object (box), "x");
  y = json_object_get_double_member (json_node_get_object (box), "y");

  sight_web_page_tap_at_async (page, x + 250, y + 50, 5000, NULL, store_result_cb, &res);
  result = sight_web_page_tap_at_finish (page, wait_for_result (&res), &error);
  g_assert_no_error (error);
  g_assert_cmpstr (json_object_get_string_member (result, "tapped"), ==, "point");
  g_test_message ("under the point: %s", json_object_get_string_member (result, "under"));
  g_assert_nonnull (strstr (json_object_get_string_member (result, "under"), "Keypad"));
  g_clear_object (&res);
  g_clear_pointer (&result, json_object_unref);
  sight_web_page_tap_at_async (page, x + 50, y + 50, 5000, NULL, store_result_cb, &res);
  result = sight_web_page_tap_at_finish (page, wait_for_result (&res), &error);
  g_assert_no_error (error);
  out = evaluate_string ("return document.getElementById ('keypad-out').textContent;");
  g_assert_cmpstr (out, ==, "31");
  g_clear_object (&res);
  g_clear_pointer (&result, json_object_unref);

  /* A listed control under the point is tapped by its ref. */
  g_clear_pointer (&box, json_node_unref);
  box = evaluate ("const b = document.getElementById ('add'); b.scrollIntoView ();"
                  "const r = b.getBoundingClientRect ();"
                  "return { x: r.left + 3, y: r.top + 3 };", NULL);
  x = json_object_get_double_member (json_node_get_object (box), "x");
  y = json_object_get_double_member (json_node_get_object (box), "y");
  sight_web_page_tap_at_async (page, x, y, 5000, NULL, store_result_cb, &res);
  result = sight_web_page_tap_at_finish (page, wait_for_result (&res), &error);
  g_assert_no_error (error);
  g_assert_cmpstr (json_object_get_string_member (result, "tapped"), ==, "ref");
  g_assert_true (g_str_has_prefix (json_object_get_string_member (result, "ref"), "e"));
  g_assert_cmpstr (json_object_get_string_member (
                     json_object_get_object_member (result, "descriptor"), "name"), ==,
                   "Add item");
  g_clear_object (&res);
  g_clear_pointer (&result, json_object_unref);

  sight_web_page_tap_at_async (page, 5000, 10, 5000, NULL, store_result_cb, &res);
  result = sight_web_page_tap_at_finish (page, wait_for_result (&res), &error);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
}

/* What tapAt taps by its ref is what act's tap_at does: an element whose
 * role is one of the control roles (sight_action_control_roles()), a slider
 * among them; a region is a bare point. */
static void
test_tap_at_control_roles (void)
{
  g_autoptr(JsonNode) box = NULL;
  const char *tapped[2] = { "ref", "point" };
  const char *roles[2] = { "slider", "region" };

  g_assert_true (g_strv_contains (sight_action_control_roles (), roles[0]));
  g_assert_false (g_strv_contains (sight_action_control_roles (), roles[1]));
  reload_form ();
  for (guint i = 0; i < G_N_ELEMENTS (roles); i++)
    {
      g_autoptr(GAsyncResult) res = NULL;
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonObject) result = NULL;
      g_autofree char *args = g_strdup_printf ("{\"role\": \"%s\"}", roles[i]);

      g_clear_pointer (&box, json_node_unref);
      box = evaluate ("const d = document.createElement ('div'); d.setAttribute ('role', args.role);"
                      "d.setAttribute ('aria-label', 'Tapped ' + args.role);"
                      "d.textContent = args.role; d.style.cssText = 'width: 200px; height: 40px';"
                      "document.body.prepend (d); d.scrollIntoView ();"
                      "const r = d.getBoundingClientRect ();"
                      "return { x: r.left + 20, y: r.top + 20 };", args);
      sight_web_page_tap_at_async (page, json_object_get_double_member (json_node_get_object (box),
                                                                        "x"),
                                   json_object_get_double_member (json_node_get_object (box), "y"),
                                   5000, NULL, store_result_cb, &res);
      result = sight_web_page_tap_at_finish (page, wait_for_result (&res), &error);
      g_assert_no_error (error);
      g_assert_cmpstr (json_object_get_string_member (result, "tapped"), ==, tapped[i]);
    }
}

static void
test_stale_ref (void)
{
  g_autofree char *ref = NULL;
  g_autoptr(JsonNode) action = json_from_string ("{\"type\": \"click\"}", NULL);
  g_autoptr(GAsyncResult) res = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) result = NULL;

  reload_form ();
  ref = ref_for ("#add");
  run_js ("document.getElementById ('add').remove (); return null;");
  sight_web_page_perform_async (page, ref, json_node_get_object (action), 400, NULL,
                                store_result_cb, &res);
  result = sight_web_page_perform_finish (page, wait_for_result (&res), &error);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED);
  g_assert_nonnull (strstr (error->message, "not on the page"));
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  GSList *uris;
  int status;

  gtk_test_init (&argc, &argv, NULL);

  held = g_ptr_array_new_with_free_func (g_object_unref);
  server = soup_server_new (NULL, NULL);
  soup_server_add_handler (server, NULL, server_cb, NULL, NULL);
  if (!soup_server_listen_local (server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error))
    g_error ("%s", error->message);
  uris = soup_server_get_uris (server);
  base_url = g_uri_to_string (uris->data);
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);
  page = sight_web_page_new ();

  g_test_add_func ("/actions/click-and-descriptor", test_click_and_descriptor);
  g_test_add_func ("/actions/fill-type-trusted", test_fill_type_trusted);
  g_test_add_func ("/actions/press", test_press);
  g_test_add_func ("/actions/submit-on-enter", test_submit_on_enter);
  g_test_add_func ("/actions/select-check-hover-scroll", test_select_check_hover_scroll);
  g_test_add_func ("/actions/actionability", test_actionability);
  g_test_add_func ("/actions/files-and-drag", test_files_and_drag);
  g_test_add_func ("/actions/settles-after-slow-request", test_settles_after_slow_request);
  g_test_add_func ("/actions/settles-by-signals", test_settles_by_signals);
  g_test_add_func ("/actions/settles-at-load-event", test_settles_at_load_event);
  g_test_add_func ("/actions/settles-while-mutating", test_settles_while_mutating);
  for (guint i = 0; i < G_N_ELEMENTS (settle_cases); i++)
    {
      g_autofree char *name = g_strdup_printf ("/actions/settles-after/%s",
                                               settle_cases[i].expected);

      g_test_add_data_func (name, &settle_cases[i], test_settles_after_case);
    }
  g_test_add_data_func ("/actions/settles-while-busy/frames", "#idle-frames",
                        test_settles_while_busy);
  g_test_add_data_func ("/actions/settles-while-busy/interval", "#forever",
                        test_settles_while_busy);
  g_test_add_func ("/actions/popup", test_popup);
  g_test_add_func ("/actions/tap-at", test_tap_at);
  g_test_add_func ("/actions/tap-at-control-roles", test_tap_at_control_roles);
  g_test_add_func ("/actions/stale-ref", test_stale_ref);
  status = g_test_run ();

  g_clear_object (&page);
  soup_server_disconnect (server);
  g_clear_object (&server);
  g_clear_pointer (&held, g_ptr_array_unref);
  g_free (base_url);
  return status;
}
