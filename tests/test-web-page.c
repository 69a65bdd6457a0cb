/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-web-page"

#include "config.h"

#include <gtk/gtk.h>
#include <libsoup/soup.h>
#include <string.h>

#include "sight-error.h"
#include "sight-web-page.h"
#include "web-process-common.h"

/* A loopback server with pages whose timing the tests control. */

static SoupServer *server;
static char *base_url;

static const char index_html[] =
  "<!doctype html><title>Index</title><h1>Hello</h1>";

static const char slow_image_html[] =
  "<!doctype html><title>Slow image</title>"
  "<script>window.marks = []; document.addEventListener('DOMContentLoaded', () => "
  "marks.push('dcl'))</script>"
  "<img id=img src='/delay/1500/pixel.png'>";

static const char idle_html[] =
  "<!doctype html><title>Idle</title><p id=status>waiting</p>"
  "<script>window.addEventListener('load', () => setTimeout(() => "
  "fetch('/delay/700/data.json').then(r => r.text()).then(t => "
  "{ document.getElementById('status').textContent = 'done'; }), 50));</script>";

/* An image its load handler asks for, which WebKit waits for before it
 * reports the load finished. */
static const char after_load_html[] =
  "<!doctype html><title>After load</title>"
  "<script>window.addEventListener('load', () => { const img = new Image (); "
  "img.id = 'late'; img.src = '/delay/3000/late.png'; document.body.append (img); });</script>"
  "<p>loaded</p>";

/* A page that fires a load event of its own while its image still loads. */
static const char fake_load_html[] =
  "<!doctype html><title>Fake load</title><img id=img src='/delay/1500/pixel.png'>"
  "<script>window.dispatchEvent (new Event ('load')); "
  "document.dispatchEvent (new Event ('load'));</script>";

static const char console_html[] =
  "<!doctype html><title>Console</title>"
  "<script>console.log('hello', {answer: 42}); console.warn('careful');"
  "console.error('bad thing'); setTimeout(() => { throw new Error('boom'); }, 0);"
  "Promise.reject(new Error('nope'));</script>";

static char *failing_html;

static const char isolated_html[] =
  "<!doctype html><title>Isolated</title><script>window.pageSecret = 'page';"
  "JSON.stringify = () => 'patched'; document.querySelector = () => null;"
  "Array.prototype.map = function () { return ['patched']; };</script><p id=p>text</p>";

static const char hang_html[] =
  "<!doctype html><title>Hang</title><p>soon hangs</p>"
  "<script>setTimeout(() => { while (true) {} }, 300);</script>";

static const char tall_html[] =
  "<!doctype html><title>Tall</title><style>body{margin:0;background:#fff}"
  "#red{position:absolute;left:0;top:0;width:200px;height:100px;background:#f00}"
  "#tall{height:2000px}</style><div id=red></div><div id=tall></div>";

static gboolean
unpause_cb (gpointer user_data)
{
  SoupServerMessage *msg = user_data;

  soup_server_message_set_status (msg, 200, NULL);
  if (g_str_has_suffix (g_uri_get_path (soup_server_message_get_uri (msg)), ".png"))
    {
      /* A 1×1 transparent PNG. */
      static const guint8 png[] = {
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
        0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f,
        0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00,
        0x01, 0x00, 0x00, 0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49,
        0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
      };
      soup_server_message_set_response (msg, "image/png", SOUP_MEMORY_STATIC,
                                        (const char *) png, sizeof png);
    }
  else
    soup_server_message_set_response (msg, "application/json", SOUP_MEMORY_STATIC,
                                      "{\"ok\":true}", 11);
  soup_server_message_unpause (msg);
  g_object_unref (msg);
  return G_SOURCE_REMOVE;
}

static void
server_cb (SoupServer        *soup_server,
           SoupServerMessage *msg,
           const char        *path,
           GHashTable        *query,
           gpointer           user_data)
{
  static const struct { const char *path; const char *html; } pages[] = {
    { "/", index_html },
    { "/slow-image", slow_image_html },
    { "/idle", idle_html },
    { "/after-load", after_load_html },
    { "/fake-load", fake_load_html },
    { "/console", console_html },
    { "/isolated", isolated_html },
    { "/hang", hang_html },
    { "/tall", tall_html },
  };

  if (g_str_has_prefix (path, "/delay/"))
    {
      guint ms = (guint) g_ascii_strtoull (path + strlen ("/delay/"), NULL, 10);

      soup_server_message_pause (msg);
      g_timeout_add (ms, unpause_cb, g_object_ref (msg));
      return;
    }
  if (g_str_equal (path, "/never"))
    {
      /* Never answered: the server's teardown drops the connection. */
      soup_server_message_pause (msg);
      return;
    }
  if (g_str_equal (path, "/failing"))
    {
      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "text/html", SOUP_MEMORY_COPY, failing_html,
                                        strlen (failing_html));
      return;
    }
  for (guint i = 0; i < G_N_ELEMENTS (pages); i++)
    if (g_str_equal (path, pages[i].path))
      {
        soup_server_message_set_status (msg, 200, NULL);
        soup_server_message_set_response (msg, "text/html; charset=utf-8", SOUP_MEMORY_STATIC,
                                          pages[i].html, strlen (pages[i].html));
        return;
      }
  soup_server_message_set_status (msg, 404, NULL);
  soup_server_message_set_response (msg, "text/plain", SOUP_MEMORY_STATIC, "missing", 7);
}

/* A loopback URL where nothing listens (port 1 is on WebKit's blocked list). */
static char *
closed_port_url (const char *path)
{
  g_autoptr(GSocket) socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
                                            G_SOCKET_PROTOCOL_TCP, NULL);
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;
  guint port;

  g_assert_true (g_socket_bind (socket, address, FALSE, NULL));
  bound = g_socket_get_local_address (socket, NULL);
  port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
  g_socket_close (socket, NULL);
  return g_strdup_printf ("http://127.0.0.1:%u%s", port, path);
}

static char *
url_for (const char *path)
{
  return g_strconcat (base_url, path + 1, NULL);
}

/* Runs an async call to completion on the default main context. */

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

static gboolean
load (SightWebPage   *page,
      const char     *path,
      SightWaitUntil  wait_until,
      guint           timeout_ms,
      GError        **error)
{
  g_autofree char *url = path[0] == '/' ? url_for (path) : g_strdup (path);
  g_autoptr(GAsyncResult) result = NULL;

  gboolean ok;

  sight_web_page_load_async (page, url, wait_until, timeout_ms, NULL, store_result_cb, &result);
  ok = sight_web_page_load_finish (page, wait_for_result (&result), error);
  if (!ok)
    g_test_message ("load %s: %s", url, (*error)->message);
  return ok;
}

static JsonNode *
evaluate (SightWebPage *page,
          const char   *body,
          guint         timeout_ms,
          GError      **error)
{
  g_autoptr(GAsyncResult) result = NULL;

  sight_web_page_evaluate_async (page, body, NULL, timeout_ms, NULL, store_result_cb, &result);
  return sight_web_page_evaluate_finish (page, wait_for_result (&result), error);
}

static char *
evaluate_string (SightWebPage *page,
                 const char   *body)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = evaluate (page, body, 5000, &error);

  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_VALUE (node));
  return g_strdup (json_node_get_string (node));
}

static void
spin (guint ms)
{
  gint64 until = g_get_monotonic_time () + ms * 1000;

  while (g_get_monotonic_time () < until)
    g_main_context_iteration (NULL, FALSE), g_usleep (1000);
}

/* Tests */

static void
test_load_wait_until (void)
{
  g_autoptr(SightWebPage) page = sight_web_page_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *state = NULL;
  gint64 start;

  /* Warm up: the first load starts the web and network processes. */
  g_assert_true (load (page, "/", SIGHT_WAIT_UNTIL_LOAD, 20000, &error));
  g_assert_no_error (error);

  /* domcontentloaded: the parser is done, the 1500 ms image is not. */
  start = g_get_monotonic_time ();
  g_assert_true (load (page, "/slow-image", SIGHT_WAIT_UNTIL_DOMCONTENTLOADED, 10000, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 1400 * 1000);
  state = evaluate_string (page, "return String (document.getElementById ('img').complete) + "
                                 "' ' + window.document.readyState;");
  g_assert_cmpstr (state, ==, "false interactive");
  g_clear_pointer (&state, g_free);

  /* load: the image is complete. */
  g_assert_true (load (page, "/slow-image", SIGHT_WAIT_UNTIL_LOAD, 10000, &error));
  g_assert_no_error (error);
  state = evaluate_string (page, "return String (document.getElementById ('img').complete) + "
                                 "' ' + document.readyState;");
  g_assert_cmpstr (state, ==, "true complete");
  g_clear_pointer (&state, g_free);
  g_assert_true (g_str_has_suffix (sight_web_page_get_uri (page), "/slow-image"));

  /* load does not wait for the fetch the page starts after its load event … */
  g_assert_true (load (page, "/idle", SIGHT_WAIT_UNTIL_LOAD, 10000, &error));
  state = evaluate_string (page, "return document.getElementById ('status').textContent;");
  g_assert_cmpstr (state, ==, "waiting");
  g_clear_pointer (&state, g_free);

  /* … networkidle does. */
  g_assert_true (load (page, "/idle", SIGHT_WAIT_UNTIL_NETWORKIDLE, 10000, &error));
  g_assert_no_error (error);
  state = evaluate_string (page, "return document.getElementById ('status').textContent;");
  g_assert_cmpstr (state, ==, "done");
  g_assert_cmpuint (sight_web_page_get_requests_in_flight (page), ==, 0);
}

/* A load is done at the document's load event, as in a browser (Playwright's
 * goto waits for the same), not when WebKit reports it finished: that waits
 * for what the page's load handler asked for, and in a new web process came
 * up to half a second after the event with nothing asked for. */
static void
test_load_event (void)
{
  g_autoptr(SightWebPage) page = sight_web_page_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *state = NULL;

  g_assert_true (load (page, "/after-load", SIGHT_WAIT_UNTIL_LOAD, 20000, &error));
  g_assert_no_error (error);
  state = evaluate_string (page, "return document.readyState + ' ' + "
                                 "String (document.getElementById ('late')?.complete);");
  g_test_message ("after the load: %s", state);
  g_assert_cmpstr (state, ==, "complete false");
  g_assert_true (g_str_has_suffix (sight_web_page_get_uri (page), "/after-load"));
  g_clear_pointer (&state, g_free);

  /* A load event the page's script fires is not the browser's. */
  g_assert_true (load (page, "/fake-load", SIGHT_WAIT_UNTIL_LOAD, 20000, &error));
  g_assert_no_error (error);
  state = evaluate_string (page, "return document.readyState + ' ' + "
                                 "String (document.getElementById ('img').complete);");
  g_test_message ("after a page's own load event: %s", state);
  g_assert_cmpstr (state, ==, "complete true");
}

static void
test_load_timeout (void)
{
  g_autoptr(SightWebPage) page = sight_web_page_new ();
  g_autoptr(GError) error = NULL;
  gint64 start = g_get_monotonic_time ();

  g_assert_false (load (page, "/never", SIGHT_WAIT_UNTIL_LOAD, 500, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_STEP_TIMEOUT);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 3 * G_USEC_PER_SEC);
  g_clear_error (&error);

  /* The page still works. */
  g_assert_true (load (page, "/", SIGHT_WAIT_UNTIL_LOAD, 10000, &error));
  g_assert_no_error (error);
}

static void
test_load_bad_input (void)
{
  g_autoptr(SightWebPage) page = sight_web_page_new ();
  g_autoptr(GError) error = NULL;

  g_assert_false (load (page, "file:///etc/passwd", SIGHT_WAIT_UNTIL_LOAD, 5000, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (load (page, "not a url", SIGHT_WAIT_UNTIL_LOAD, 5000, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  {
    g_autofree char *closed = closed_port_url ("/");

    g_assert_false (load (page, closed, SIGHT_WAIT_UNTIL_LOAD, 10000, &error));
  }
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE);
  g_clear_error (&error);
  /* A port browsers block: WebKit shows about:blank without failing the load. */
  g_assert_false (load (page, "http://127.0.0.1:9/", SIGHT_WAIT_UNTIL_LOAD, 10000, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "refused"));
  g_clear_error (&error);
  /* and about:blank itself still loads */
  g_assert_true (load (page, "about:blank", SIGHT_WAIT_UNTIL_LOAD, 10000, &error));
  g_assert_no_error (error);
}

static gboolean
has_entry (SightWebPage *page,
           SightLogKind  kind,
           const char   *level,
           const char   *text_part,
           guint         status)
{
  GPtrArray *log = sight_web_page_get_log (page);

  for (guint i = 0; i < log->len; i++)
    {
      SightLogEntry *entry = g_ptr_array_index (log, i);

      if (entry->kind == kind && (level == NULL || g_strcmp0 (entry->level, level) == 0) &&
          strstr (entry->text, text_part) != NULL && entry->status == status)
        return TRUE;
    }
  return FALSE;
}

static gboolean
has_request_failure (SightWebPage *page,
                     const char   *url_part,
                     guint         status)
{
  GPtrArray *log = sight_web_page_get_log (page);

  for (guint i = 0; i < log->len; i++)
    {
      SightLogEntry *entry = g_ptr_array_index (log, i);

      if (entry->kind == SIGHT_LOG_REQUEST_FAILED && strstr (entry->url, url_part) != NULL &&
          entry->status == status)
        return TRUE;
    }
  return FALSE;
}

static void
test_console_capture (void)
{
  g_autoptr(SightWebPage) page = sight_web_page_new ();
  g_autoptr(GError) error = NULL;

  g_assert_true (load (page, "/console", SIGHT_WAIT_UNTIL_LOAD, 10000, &error));
  g_assert_no_error (error);
  /* The error is thrown from a timer after load: give it a moment. */
  for (int i = 0; i < 100 && !(has_entry (page, SIGHT_LOG_PAGE_ERROR, NULL, "boom", 0) &&
                               has_entry (page, SIGHT_LOG_PAGE_ERROR, NULL, "nope", 0)); i++)
    spin (50);
  g_assert_true (has_entry (page, SIGHT_LOG_CONSOLE, "log", "hello {\"answer\":42}", 0));
  g_assert_true (has_entry (page, SIGHT_LOG_CONSOLE, "warning", "careful", 0));
  g_assert_true (has_entry (page, SIGHT_LOG_CONSOLE, "error", "bad thing", 0));
  g_assert_true (has_entry (page, SIGHT_LOG_PAGE_ERROR, NULL, "boom", 0));
  g_assert_true (has_entry (page, SIGHT_LOG_PAGE_ERROR, NULL, "nope", 0));
  g_assert_false (has_entry (page, SIGHT_LOG_CONSOLE, NULL, "never logged", 0));
}

static void
test_failed_requests (void)
{
  g_autoptr(SightWebPage) page = sight_web_page_new ();
  g_autoptr(GError) error = NULL;

  g_assert_true (load (page, "/failing", SIGHT_WAIT_UNTIL_NETWORKIDLE, 10000, &error));
  g_assert_no_error (error);
  g_assert_true (has_request_failure (page, "/missing.png", 404));
  g_assert_true (has_request_failure (page, "/refused", 0));
  g_assert_false (has_request_failure (page, "/failing", 404));
}

static void
test_isolated_world (void)
{
  g_autoptr(SightWebPage) page = sight_web_page_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(JsonNode) args = NULL;
  g_autofree char *text = NULL;

  g_assert_true (load (page, "/isolated", SIGHT_WAIT_UNTIL_LOAD, 10000, &error));
  text = evaluate_string (page, "return typeof window.pageSecret + ' ' + "
                                "document.querySelector ('#p').textContent + ' ' + "
                                "JSON.stringify ([1, 2].map (x => x * 2));");
  g_assert_cmpstr (text, ==, "undefined text [2,4]");

  args = json_from_string ("{\"a\": 2, \"list\": [1, 2, 3]}", NULL);
  {
    g_autoptr(GAsyncResult) result = NULL;

    sight_web_page_evaluate_async (page, "return { sum: args.a + args.list.length, "
                                   "title: document.title };",
                                   args, 5000, NULL, store_result_cb, &result);
    node = sight_web_page_evaluate_finish (page, wait_for_result (&result), &error);
  }
  g_assert_no_error (error);
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (node), "sum"), ==, 5);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (node), "title"), ==,
                   "Isolated");
  g_clear_pointer (&node, json_node_unref);

  /* A throwing script fails; an undefined result is null. */
  node = evaluate (page, "throw new Error ('broken');", 5000, &error);
  g_assert_null (node);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_ACTION_FAILED);
  g_assert_nonnull (strstr (error->message, "broken"));
  g_clear_error (&error);
  node = evaluate (page, "return undefined;", 5000, &error);
  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_NULL (node));
  g_clear_pointer (&node, json_node_unref);

  /* A script past its deadline. */
  node = evaluate (page, "await new Promise (r => setTimeout (r, 5000));", 300, &error);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_STEP_TIMEOUT);
}

static void
test_crash_recovery (void)
{
  g_autoptr(SightWebPage) page = sight_web_page_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *title = NULL;

  g_assert_true (load (page, "/", SIGHT_WAIT_UNTIL_LOAD, 10000, &error));
  /* A script in flight when the process dies fails with a clear code. */
  sight_web_page_evaluate_async (page, "await new Promise (r => setTimeout (r, 5000));", NULL,
                                 10000, NULL, store_result_cb, &result);
  spin (100);
  webkit_web_view_terminate_web_process (sight_web_page_get_web_view (page));
  node = sight_web_page_evaluate_finish (page, wait_for_result (&result), &error);
  g_assert_null (node);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE);
  g_clear_error (&error);

  g_assert_true (load (page, "/", SIGHT_WAIT_UNTIL_LOAD, 10000, &error));
  g_assert_no_error (error);
  title = evaluate_string (page, "return document.title;");
  g_assert_cmpstr (title, ==, "Index");
}

static void
test_hang_recovery (void)
{
  g_autoptr(SightWebPage) page = sight_web_page_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *title = NULL;
  gint64 start;

  sight_web_page_set_hang_timeout (page, 1000);
  g_assert_true (load (page, "/hang", SIGHT_WAIT_UNTIL_LOAD, 10000, &error));
  spin (500);
  start = g_get_monotonic_time ();
  node = evaluate (page, "return document.title;", 1500, &error);
  g_assert_null (node);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 10 * G_USEC_PER_SEC);
  g_clear_error (&error);

  g_assert_true (load (page, "/", SIGHT_WAIT_UNTIL_LOAD, 10000, &error));
  g_assert_no_error (error);
  title = evaluate_string (page, "return document.title;");
  g_assert_cmpstr (title, ==, "Index");
}

static SightScreenshot *
screenshot (SightWebPage                 *page,
            const SightScreenshotOptions *options)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  SightScreenshot *shot;

  sight_web_page_screenshot_async (page, options, NULL, store_result_cb, &result);
  shot = sight_web_page_screenshot_finish (page, wait_for_result (&result), &error);
  g_assert_no_error (error);
  return shot;
}

static GdkPixbuf *
decode (SightScreenshot *shot)
{
  g_autoptr(GdkPixbufLoader) loader = gdk_pixbuf_loader_new ();
  g_autoptr(GError) error = NULL;

  gdk_pixbuf_loader_write_bytes (loader, shot->bytes, &error);
  g_assert_no_error (error);
  gdk_pixbuf_loader_close (loader, &error);
  g_assert_no_error (error);
  return g_object_ref (gdk_pixbuf_loader_get_pixbuf (loader));
}

static void
pixel_at (GdkPixbuf *pixbuf,
          int        x,
          int        y,
          guint8     rgb[3])
{
  const guint8 *p = gdk_pixbuf_read_pixels (pixbuf) + y * gdk_pixbuf_get_rowstride (pixbuf) +
                    x * gdk_pixbuf_get_n_channels (pixbuf);

  memcpy (rgb, p, 3);
}

static void
test_screenshot (void)
{
  g_autoptr(SightWebPage) page = sight_web_page_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SightScreenshot) shot = NULL;
  g_autoptr(GdkPixbuf) pixbuf = NULL;
  SightScreenshotOptions options = SIGHT_SCREENSHOT_OPTIONS_INIT;
  SightRect mask = { 10, 10, 50, 30 };
  guint8 rgb[3];
  const guint8 *data;
  int w, h;

  sight_web_page_set_viewport (page, 800, 600, 1.0);
  sight_web_page_get_viewport (page, &w, &h);
  g_assert_cmpint (w, ==, 800);
  g_assert_cmpint (h, ==, 600);
  g_assert_true (load (page, "/tall", SIGHT_WAIT_UNTIL_LOAD, 10000, &error));
  g_free (evaluate_string (page, "return String (innerWidth);"));
  {
    g_autofree char *size = evaluate_string (page, "return innerWidth + 'x' + innerHeight + ' ' "
                                                   "+ document.visibilityState;");
    g_assert_cmpstr (size, ==, "800x600 visible");
  }

  shot = screenshot (page, &options);
  g_assert_cmpint (shot->width, ==, 800);
  g_assert_cmpint (shot->height, ==, 600);
  data = g_bytes_get_data (shot->bytes, NULL);
  g_assert_cmpmem (data, 4, "\x89PNG", 4);
  pixbuf = decode (shot);
  pixel_at (pixbuf, 20, 20, rgb);
  g_assert_cmpuint (rgb[0], >, 240);
  g_assert_cmpuint (rgb[1], <, 15);
  pixel_at (pixbuf, 300, 300, rgb);
  g_assert_cmpuint (rgb[1], >, 240);
  g_clear_pointer (&shot, sight_screenshot_free);
  g_clear_object (&pixbuf);

  /* Masks are painted over; pixels outside stay. */
  options.masks = &mask;
  options.n_masks = 1;
  shot = screenshot (page, &options);
  g_assert_cmpuint (shot->n_masked, ==, 1);
  pixbuf = decode (shot);
  pixel_at (pixbuf, 20, 20, rgb);
  g_assert_cmpuint (rgb[0] + rgb[1] + rgb[2], <, 10);
  pixel_at (pixbuf, 100, 80, rgb);
  g_assert_cmpuint (rgb[0], >, 240);
  g_assert_cmpuint (rgb[1], <, 15);
  g_clear_pointer (&shot, sight_screenshot_free);
  g_clear_object (&pixbuf);
  options.masks = NULL;
  options.n_masks = 0;

  /* Full page, resampled so the long side is at most 500. */
  options.full_page = TRUE;
  options.max_side = 500;
  shot = screenshot (page, &options);
  g_assert_cmpint (shot->height, ==, 500);
  g_assert_cmpint (shot->width, ==, 200);
  g_assert_cmpfloat_with_epsilon (shot->scale, 0.25, 0.01);
  g_clear_pointer (&shot, sight_screenshot_free);

  /* Each format's magic bytes. */
  options.full_page = FALSE;
  options.max_side = 0;
  options.format = SIGHT_IMAGE_JPEG;
  options.quality = 50;
  shot = screenshot (page, &options);
  data = g_bytes_get_data (shot->bytes, NULL);
  g_assert_cmpmem (data, 3, "\xff\xd8\xff", 3);
  g_clear_pointer (&shot, sight_screenshot_free);
  options.format = SIGHT_IMAGE_WEBP;
  shot = screenshot (page, &options);
  data = g_bytes_get_data (shot->bytes, NULL);
  g_assert_cmpmem (data, 4, "RIFF", 4);
  g_assert_cmpmem (data + 8, 4, "WEBP", 4);
  g_clear_pointer (&shot, sight_screenshot_free);

  /* Device scale 2: same CSS viewport, twice the pixels. */
  sight_web_page_set_viewport (page, 400, 300, 2.0);
  {
    g_autofree char *size = evaluate_string (page, "return innerWidth + 'x' + innerHeight;");
    g_assert_cmpstr (size, ==, "400x300");
  }
  options.format = SIGHT_IMAGE_PNG;
  shot = screenshot (page, &options);
  g_assert_cmpint (shot->width, ==, 800);
  g_assert_cmpint (shot->height, ==, 600);
  g_assert_cmpfloat_with_epsilon (shot->scale, 2.0, 0.01);
}

/* The web process that appeared since @before (one). */
static pid_t
new_web_process (GArray *before)
{
  g_autoptr(GArray) now = web_processes ();
  pid_t found = 0;

  for (guint i = 0; i < now->len; i++)
    {
      pid_t pid = g_array_index (now, pid_t, i);
      gboolean known = FALSE;

      for (guint j = 0; j < before->len && !known; j++)
        known = g_array_index (before, pid_t, j) == pid;
      if (!known)
        {
          g_assert_cmpint (found, ==, 0);
          found = pid;
        }
    }
  g_assert_cmpint (found, !=, 0);
  return found;
}

static gboolean
web_process_alive (pid_t pid)
{
  g_autoptr(GArray) now = web_processes ();

  for (guint i = 0; i < now->len; i++)
    if (g_array_index (now, pid_t, i) == pid)
      return TRUE;
  return FALSE;
}

/* A closed page's web process ends with it (left to WebKit, it lingers for
 * most of a second, holding its memory while the next page starts), unless
 * a popup that shares it lives on. */
static void
test_close_ends_process (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) before = web_processes ();
  SightWebPage *page = sight_web_page_new ();
  SightWebPage *opener;
  g_autoptr(SightWebPage) popup = NULL;
  g_autoptr(GArray) without_popup = NULL;
  g_autofree char *title = NULL;
  g_autofree char *script = NULL;
  pid_t pid;
  gint64 deadline;

  g_assert_true (load (page, "/", SIGHT_WAIT_UNTIL_LOAD, 10000, &error));
  pid = new_web_process (before);
  g_object_unref (page);
  /* The process was ended, not left to exit: it is gone within a few
   * main-loop turns, well before WebKit lets an idle process go. */
  spin (150);
  g_assert_false (web_process_alive (pid));

  /* A popup shares its opener's process; held elsewhere, it keeps it. */
  without_popup = web_processes ();
  opener = sight_web_page_new ();
  g_assert_true (load (opener, "/", SIGHT_WAIT_UNTIL_LOAD, 10000, &error));
  pid = new_web_process (without_popup);
  script = g_strdup_printf ("window.open ('%s'); return true;", base_url);
  g_assert_nonnull (evaluate (opener, script, 5000, &error));
  g_assert_no_error (error);
  deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (sight_web_page_get_popups (opener)->len == 0 && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (sight_web_page_get_popups (opener)->len, ==, 1);
  popup = g_object_ref (g_ptr_array_index (sight_web_page_get_popups (opener), 0));
  g_object_unref (opener);
  spin (150);
  g_assert_true (web_process_alive (pid));
  /* The popup loads on in the process it shares. */
  deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  do
    {
      g_free (title);
      title = evaluate_string (popup, "return document.readyState == 'complete' ? "
                                      "document.title : '';");
    }
  while (g_strcmp0 (title, "Index") != 0 && g_get_monotonic_time () < deadline);
  g_assert_cmpstr (title, ==, "Index");
}

static void
test_names (void)
{
  SightWaitUntil wait_until;
  SightImageFormat format;

  g_assert_true (sight_wait_until_from_string ("networkidle", &wait_until));
  g_assert_cmpint (wait_until, ==, SIGHT_WAIT_UNTIL_NETWORKIDLE);
  g_assert_false (sight_wait_until_from_string ("whenever", &wait_until));
  g_assert_true (sight_image_format_from_string ("webp", &format));
  g_assert_cmpstr (sight_image_format_mime_type (format), ==, "image/webp");
  g_assert_false (sight_image_format_from_string ("gif", &format));
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  GSList *uris;
  int status;

  gtk_test_init (&argc, &argv, NULL);

  server = soup_server_new (NULL, NULL);
  soup_server_add_handler (server, NULL, server_cb, NULL, NULL);
  if (!soup_server_listen_local (server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error))
    g_error ("%s", error->message);
  {
    g_autofree char *refused = closed_port_url ("/refused");

    failing_html = g_strdup_printf ("<!doctype html><title>Failing</title>"
                                    "<img src='/missing.png'><script>fetch('%s')"
                                    ".catch(() => {});</script>", refused);
  }
  uris = soup_server_get_uris (server);
  base_url = g_uri_to_string (uris->data);
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);

  g_test_add_func ("/web-page/names", test_names);
  g_test_add_func ("/web-page/load-wait-until", test_load_wait_until);
  g_test_add_func ("/web-page/load-event", test_load_event);
  g_test_add_func ("/web-page/load-timeout", test_load_timeout);
  g_test_add_func ("/web-page/load-bad-input", test_load_bad_input);
  g_test_add_func ("/web-page/console", test_console_capture);
  g_test_add_func ("/web-page/failed-requests", test_failed_requests);
  g_test_add_func ("/web-page/isolated-world", test_isolated_world);
  g_test_add_func ("/web-page/crash-recovery", test_crash_recovery);
  g_test_add_func ("/web-page/hang-recovery", test_hang_recovery);
  g_test_add_func ("/web-page/screenshot", test_screenshot);
  g_test_add_func ("/web-page/close-ends-process", test_close_ends_process);
  status = g_test_run ();

  soup_server_disconnect (server);
  g_clear_object (&server);
  g_free (base_url);
  return status;
}
