/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <gtk/gtk.h>
#include <libsoup/soup.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "sight-crawl.h"
#include "sight-error.h"
#include "sight-pdf.h"
#include "sight-scrape.h"

/* A small site on loopback: / links to /a, /b, /private/x and an external
 * host; /a links to /a/deep; robots.txt disallows /private; a sitemap lists
 * /from-sitemap. */
static SoupServer *server;
static char *base;
/* With huge_robots, robots.txt runs on for 200 MiB of comments after its
 * rules; robots_bytes_written counts what the server got to send of it. */
static gboolean huge_robots;
static guint64 robots_bytes_written;

static void
robots_wrote_cb (SoupServerMessage *msg,
                 guint              chunk_size,
                 gpointer           user_data)
{
  robots_bytes_written += chunk_size;
}

static void
serve_huge_robots (SoupServerMessage *msg)
{
  static char filler[1024 * 1024];
  const char *rules = "User-agent: *\nDisallow: /private\n";
  SoupMessageBody *body = soup_server_message_get_response_body (msg);

  for (gsize i = 0; i < sizeof filler; i += 64)
    {
      memset (filler + i, ' ', 64);
      filler[i] = '#';
      filler[i + 63] = '\n';
    }
  soup_server_message_set_status (msg, 200, NULL);
  soup_message_headers_set_content_type (soup_server_message_get_response_headers (msg),
                                         "text/plain", NULL);
  soup_message_headers_set_encoding (soup_server_message_get_response_headers (msg),
                                     SOUP_ENCODING_CHUNKED);
  soup_message_body_append (body, SOUP_MEMORY_STATIC, rules, strlen (rules));
  for (int i = 0; i < 200; i++)
    soup_message_body_append (body, SOUP_MEMORY_STATIC, filler, sizeof filler);
  soup_message_body_complete (body);
  g_signal_connect (msg, "wrote-body-data", G_CALLBACK (robots_wrote_cb), NULL);
}

static void
handler (SoupServer        *srv,
         SoupServerMessage *msg,
         const char        *path,
         GHashTable        *query,
         gpointer           user_data)
{
  const char *body = NULL;
  const char *type = "text/html; charset=utf-8";

  if (g_str_equal (path, "/"))
    body = "<!DOCTYPE html><html lang=\"en\"><head><title>Home page</title>"
           "<meta name=\"description\" content=\"A fixture\"></head><body>"
           "<nav><a href=\"/a\">Alpha</a> <a href=\"/b#top\">Beta</a> "
           "<a href=\"/private/x\">Secret area</a> <a href=\"http://other.invalid/\">Away</a> "
           "<a href=\"javascript:alert(1)\">Script</a></nav>"
           "<main><h1>Welcome home</h1><p>Three little words.</p>"
           "<div style=\"display:none\">hidden text here</div>"
           "<table><tr><th>Plan</th><th>Price</th></tr><tr><td>Team</td><td>12</td></tr></table>"
           "<script>document.title = document.title;</script></main></body></html>";
  else if (g_str_equal (path, "/a"))
    body = "<html><head><title>Alpha</title></head><body><a href=\"/a/deep\">Deeper</a></body></html>";
  else if (g_str_equal (path, "/a/deep"))
    body = "<html><head><title>Deep</title></head><body><a href=\"/a/deeper\">More</a></body></html>";
  else if (g_str_equal (path, "/b"))
    body = "<html><head><title>Beta</title></head><body><p>Beta page</p></body></html>";
  else if (g_str_equal (path, "/from-sitemap"))
    body = "<html><head><title>Mapped</title></head><body>from the sitemap</body></html>";
  else if (g_str_equal (path, "/late"))
    body = "<html><head><title>Late</title></head><body><script>"
           "setTimeout(() => { document.body.append ('Ready now'); }, 300);</script></body></html>";
  else if (g_str_equal (path, "/robots.txt") && huge_robots)
    {
      serve_huge_robots (msg);
      return;
    }
  else if (g_str_equal (path, "/robots.txt"))
    {
      body = "User-agent: *\nDisallow: /private\nSitemap: /sitemap.xml\n";
      type = "text/plain";
    }
  else if (g_str_equal (path, "/sitemap.xml"))
    {
      body = "<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">"
             "<url><loc>PLACEHOLDER</loc></url></urlset>";
      type = "application/xml";
    }

  if (body == NULL)
    {
      soup_server_message_set_status (msg, 404, NULL);
      soup_server_message_set_response (msg, "text/html", SOUP_MEMORY_STATIC,
                                        "<title>Missing</title>", 22);
      return;
    }
  if (strstr (body, "PLACEHOLDER") != NULL)
    {
      g_autofree char *url = g_strconcat (base, "from-sitemap", NULL);
      g_autofree char *text = NULL;
      g_auto(GStrv) parts = g_strsplit (body, "PLACEHOLDER", 2);

      text = g_strconcat (parts[0], url, parts[1], NULL);
      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, type, SOUP_MEMORY_COPY, text, strlen (text));
      return;
    }
  soup_server_message_set_status (msg, 200, NULL);
  soup_server_message_set_response (msg, type, SOUP_MEMORY_STATIC, body, strlen (body));
}

static void
done_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

static GAsyncResult *
wait_for (GAsyncResult **result)
{
  while (*result == NULL)
    g_main_context_iteration (NULL, TRUE);
  return *result;
}

static JsonObject *
args_from (const char *json)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree char *text = NULL;
  g_auto(GStrv) parts = g_strsplit (json, "BASE/", -1);

  text = g_strjoinv (base, parts);
  g_assert_true (json_parser_load_from_data (parser, text, -1, NULL));
  return json_object_ref (json_node_get_object (json_parser_get_root (parser)));
}

static JsonNode *
run_scrape (const char  *json,
            GError     **error)
{
  g_autoptr(JsonObject) args = args_from (json);
  g_autoptr(GAsyncResult) result = NULL;

  sight_scrape_async (args, NULL, done_cb, &result);
  return sight_scrape_finish (wait_for (&result), error);
}

static JsonNode *
run_crawl (const char  *json,
           GError     **error)
{
  g_autoptr(JsonObject) args = args_from (json);
  g_autoptr(GAsyncResult) result = NULL;

  sight_crawl_async (args, NULL, done_cb, &result);
  return sight_crawl_finish (wait_for (&result), error);
}

static void
test_scrape_formats (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = run_scrape ("{ \"url\": \"BASE/\", \"format\": [\"markdown\", "
                                         "\"cleaned_html\", \"html\", \"readability\"] }", &error);
  JsonObject *object, *content, *metadata;
  JsonArray *links;
  const char *markdown, *cleaned;
  gboolean saw_alpha = FALSE, saw_away = FALSE;

  g_assert_no_error (error);
  object = json_node_get_object (node);
  content = json_object_get_object_member (object, "content");
  metadata = json_object_get_object_member (object, "metadata");
  markdown = json_object_get_string_member (content, "markdown");
  cleaned = json_object_get_string_member (content, "cleaned_html");

  g_assert_nonnull (strstr (markdown, "# Welcome home"));
  g_assert_nonnull (strstr (markdown, "| Plan | Price |"));
  g_assert_nonnull (strstr (markdown, "[Alpha](" ));
  g_assert_null (strstr (markdown, "hidden text here"));
  g_assert_null (strstr (cleaned, "<script"));
  g_assert_null (strstr (cleaned, "javascript:"));
  g_assert_null (strstr (cleaned, "style="));
  g_assert_nonnull (strstr (json_object_get_string_member (content, "html"), "<script>"));
  g_assert_nonnull (strstr (json_object_get_string_member (content, "readability"), "Welcome home"));

  g_assert_cmpstr (json_object_get_string_member (metadata, "title"), ==, "Home page");
  g_assert_cmpstr (json_object_get_string_member (metadata, "description"), ==, "A fixture");
  g_assert_cmpstr (json_object_get_string_member (metadata, "language"), ==, "en");
  g_assert_cmpint (json_object_get_int_member (metadata, "statusCode"), ==, 200);
  g_assert_cmpint (json_object_get_int_member (metadata, "wordCount"), >, 5);

  links = json_object_get_array_member (object, "links");
  for (guint i = 0; i < json_array_get_length (links); i++)
    {
      JsonObject *link = json_array_get_object_element (links, i);
      const char *url = json_object_get_string_member (link, "url");

      g_assert_false (g_str_has_prefix (url, "javascript:"));
      g_assert_null (strchr (url, '#'));
      if (g_str_equal (json_object_get_string_member (link, "text"), "Alpha"))
        {
          saw_alpha = TRUE;
          g_assert_true (json_object_get_boolean_member (link, "internal"));
        }
      if (g_str_equal (json_object_get_string_member (link, "text"), "Away"))
        {
          saw_away = TRUE;
          g_assert_false (json_object_get_boolean_member (link, "internal"));
        }
    }
  g_assert_true (saw_alpha && saw_away);
}

static void
test_scrape_wait_for_text (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) found = run_scrape ("{ \"url\": \"BASE/late\", \"waitForText\": \"Ready now\" }",
                                          &error);
  g_autoptr(JsonNode) missing = NULL;

  g_assert_no_error (error);
  g_assert_nonnull (strstr (json_object_get_string_member (
    json_object_get_object_member (json_node_get_object (found), "content"), "markdown"),
    "Ready now"));

  missing = run_scrape ("{ \"url\": \"BASE/late\", \"waitForText\": \"Never\", \"timeoutMs\": 1500 }",
                        &error);
  g_assert_null (missing);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_STEP_TIMEOUT);
}

static void
test_scrape_bad_arguments (void)
{
  const char *cases[][2] = {
    { "{ }", "url" },
    { "{ \"url\": \"file:///etc/passwd\" }", "url" },
    { "{ \"url\": \"BASE/\", \"format\": [\"pdf\"] }", "format" },
    { "{ \"url\": \"BASE/\", \"timeoutMs\": 999 }", "timeoutMs" },
    { "{ \"url\": \"BASE/\", \"timeoutMs\": 120001 }", "timeoutMs" },
    { "{ \"url\": \"BASE/\", \"waitUntil\": \"idle\" }", "waitUntil" },
    { "{ \"url\": \"BASE/\", \"colour\": true }", "colour" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonNode) node = run_scrape (cases[i][0], &error);

      g_assert_null (node);
      g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
      g_assert_true (g_str_has_prefix (error->message, cases[i][1]));
    }
}

static gboolean
has_page (JsonNode   *crawl,
          const char *path)
{
  JsonArray *pages = json_object_get_array_member (json_node_get_object (crawl), "pages");
  g_autofree char *url = g_strconcat (base, path, NULL);

  for (guint i = 0; i < json_array_get_length (pages); i++)
    if (g_str_equal (json_object_get_string_member (json_array_get_object_element (pages, i), "url"),
                     url))
      return TRUE;
  return FALSE;
}

static void
test_crawl_limits_and_robots (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) all = run_crawl ("{ \"url\": \"BASE/\", \"delayMs\": 0, \"maxDepth\": 1 }",
                                       &error);
  g_autoptr(JsonNode) rude = NULL;
  JsonObject *object;

  g_assert_no_error (error);
  object = json_node_get_object (all);
  g_assert_cmpstr (json_object_get_string_member (object, "stoppedBy"), ==, "complete");
  g_assert_true (has_page (all, ""));
  g_assert_true (has_page (all, "a"));
  g_assert_true (has_page (all, "b"));
  g_assert_false (has_page (all, "private/x"));   /* robots.txt */
  g_assert_false (has_page (all, "a/deep"));      /* maxDepth 1 */
  g_assert_cmpint (json_object_get_int_member (object, "skippedTotal"), >=, 3);

  rude = run_crawl ("{ \"url\": \"BASE/\", \"delayMs\": 0, \"maxDepth\": 1, "
                    "\"respectRobots\": false }", &error);
  g_assert_no_error (error);
  g_assert_true (has_page (rude, "private/x"));
}

/* A robots.txt that never seems to end: its first 500 KiB are read and
 * obeyed, the rest is not fetched. */
static void
test_crawl_huge_robots (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) all = NULL;

  huge_robots = TRUE;
  robots_bytes_written = 0;
  all = run_crawl ("{ \"url\": \"BASE/\", \"delayMs\": 0, \"maxDepth\": 1 }", &error);
  huge_robots = FALSE;
  g_assert_no_error (error);
  g_assert_true (has_page (all, "a"));
  g_assert_false (has_page (all, "private/x"));
  /* Socket buffers hold a few MiB at most. */
  g_test_message ("robots.txt: %" G_GUINT64_FORMAT " bytes sent", robots_bytes_written);
  g_assert_cmpuint (robots_bytes_written, <, 32 * 1024 * 1024);
}

static void
test_crawl_cursor (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) first = run_crawl ("{ \"url\": \"BASE/\", \"delayMs\": 0, \"maxPages\": 2 }",
                                         &error);
  g_autoptr(JsonNode) rest = NULL;
  g_autoptr(JsonNode) bad = NULL;
  g_autofree char *json = NULL;
  JsonObject *object;
  JsonArray *pages, *more;

  g_assert_no_error (error);
  object = json_node_get_object (first);
  pages = json_object_get_array_member (object, "pages");
  g_assert_cmpuint (json_array_get_length (pages), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (object, "stoppedBy"), ==, "maxPages");
  g_assert_cmpint (json_object_get_int_member (object, "pending"), >, 0);
  g_assert_true (json_object_has_member (object, "cursor"));

  json = g_strdup_printf ("{ \"url\": \"BASE/\", \"delayMs\": 0, \"cursor\": \"%s\" }",
                          json_object_get_string_member (object, "cursor"));
  rest = run_crawl (json, &error);
  g_assert_no_error (error);
  more = json_object_get_array_member (json_node_get_object (rest), "pages");
  g_assert_cmpuint (json_array_get_length (more), >, 0);
  /* The continuation never visits a page the first part did. */
  for (guint i = 0; i < json_array_get_length (pages); i++)
    for (guint j = 0; j < json_array_get_length (more); j++)
      g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (pages, i), "url"),
                       !=,
                       json_object_get_string_member (json_array_get_object_element (more, j), "url"));

  bad = run_crawl ("{ \"url\": \"BASE/\", \"cursor\": \"bm90IGEgY3Vyc29y\" }", &error);
  g_assert_null (bad);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
}

static void
test_crawl_patterns_and_sitemap (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = run_crawl ("{ \"url\": \"BASE/\", \"delayMs\": 0, \"maxDepth\": 2, "
                                        "\"exclude\": [\"/a/*\"], \"sitemap\": true }", &error);

  g_assert_no_error (error);
  g_assert_true (has_page (node, "a"));
  g_assert_false (has_page (node, "a/deep"));
  g_assert_true (has_page (node, "from-sitemap"));
}

static void
test_crawl_bad_arguments (void)
{
  const char *cases[][2] = {
    { "{ \"url\": \"BASE/\", \"maxPages\": 0 }", "maxPages" },
    { "{ \"url\": \"BASE/\", \"maxPages\": 101 }", "maxPages" },
    { "{ \"url\": \"BASE/\", \"maxDepth\": 6 }", "maxDepth" },
    { "{ \"url\": \"BASE/\", \"delayMs\": 10001 }", "delayMs" },
    { "{ \"url\": \"BASE/\", \"maxMs\": 999 }", "maxMs" },
    { "{ \"url\": \"BASE/\", \"scope\": \"planet\" }", "scope" },
    { "{ \"url\": \"BASE/\", \"scope\": [\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\","
      "\"k\",\"l\",\"m\",\"n\",\"o\",\"p\",\"q\",\"r\",\"s\",\"t\",\"u\"] }", "scope" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonNode) node = run_crawl (cases[i][0], &error);

      g_assert_null (node);
      g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
      g_assert_true (g_str_has_prefix (error->message, cases[i][1]));
    }
}

static void
test_pdf (void)
{
  g_autoptr(JsonObject) args = args_from ("{ \"url\": \"BASE/\", \"paper\": \"Letter\", "
                                          "\"landscape\": true }");
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) pdf = NULL;
  g_autofree char *path = NULL;
  g_autofree char *info = NULL;
  int fd;

  sight_pdf_async (args, NULL, done_cb, &result);
  pdf = sight_pdf_finish (wait_for (&result), &error);
  g_assert_no_error (error);
  g_assert_cmpmem (g_bytes_get_data (pdf, NULL), 5, "%PDF-", 5);

  if (g_find_program_in_path ("pdfinfo") == NULL)
    return;
  fd = g_file_open_tmp ("sight-pdf-XXXXXX.pdf", &path, &error);
  g_assert_no_error (error);
  close (fd);
  g_assert_true (g_file_set_contents (path, g_bytes_get_data (pdf, NULL), g_bytes_get_size (pdf),
                                      NULL));
  {
    const char *argv[] = { "pdfinfo", path, NULL };

    g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                                 &info, NULL, NULL, &error));
  }
  /* Letter in landscape: 792 x 612 points. */
  g_assert_nonnull (strstr (info, "792 x 612"));
  g_unlink (path);
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
  soup_server_add_handler (server, NULL, handler, NULL, NULL);
  g_assert_true (soup_server_listen_local (server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error));
  uris = soup_server_get_uris (server);
  base = g_uri_to_string (uris->data);
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);

  g_test_add_func ("/runner/scrape/formats", test_scrape_formats);
  g_test_add_func ("/runner/scrape/wait-for-text", test_scrape_wait_for_text);
  g_test_add_func ("/runner/scrape/bad-arguments", test_scrape_bad_arguments);
  g_test_add_func ("/runner/crawl/limits-and-robots", test_crawl_limits_and_robots);
  g_test_add_func ("/runner/crawl/huge-robots", test_crawl_huge_robots);
  g_test_add_func ("/runner/crawl/cursor", test_crawl_cursor);
  g_test_add_func ("/runner/crawl/patterns-and-sitemap", test_crawl_patterns_and_sitemap);
  g_test_add_func ("/runner/crawl/bad-arguments", test_crawl_bad_arguments);
  g_test_add_func ("/runner/pdf", test_pdf);
  status = g_test_run ();
  g_clear_object (&server);
  g_free (base);
  return status;
}
