/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-mcp-runner-tools"

#include "config.h"

#include "mcp-test-common.h"
#include "sight-demo-site.h"

/* The tools the runner backs, through the MCP protocol layer, on the
 * bundled demo site over loopback with real WebKitGTK. */

static SightDemoSite *site;

static void
test_sessions (void)
{
  const char *url = sight_demo_site_get_url (site);
  g_autoptr(JsonObject) created = call ("create_session", "{\"startUrl\":\"%slogin\"}", url);
  g_autoptr(JsonObject) listed = NULL;
  g_autoptr(JsonObject) read = NULL;
  g_autoptr(JsonObject) stopped = NULL;
  g_autoptr(JsonObject) again = NULL;
  g_autoptr(JsonObject) unknown = NULL;
  g_autoptr(JsonObject) refused = NULL;
  g_autofree char *id = NULL;
  JsonArray *sessions;
  gboolean found = FALSE;

  g_assert_false (is_error (created));
  id = g_strdup (json_object_get_string_member (structured (created), "id"));
  g_assert_true (g_str_has_prefix (id, "sess_"));
  g_assert_cmpstr (json_object_get_string_member (structured (created), "status"), ==, "live");

  listed = call ("list_sessions", "{}");
  sessions = json_object_get_array_member (structured (listed), "sessions");
  for (guint i = 0; i < json_array_get_length (sessions); i++)
    found |= g_str_equal (json_object_get_string_member (json_array_get_object_element (sessions,
                                                                                        i),
                                                         "id"), id);
  g_assert_true (found);

  /* The deprecated alias reads the same session. */
  read = call ("get_session", "{\"id\":\"%s\"}", id);
  g_assert_false (is_error (read));
  g_assert_cmpstr (json_object_get_string_member (structured (read), "id"), ==, id);

  stopped = call ("stop_session", "{\"sessionId\":\"%s\"}", id);
  g_assert_true (json_object_get_boolean_member (structured (stopped), "deleted"));
  g_assert_true (json_object_get_boolean_member (structured (stopped), "closed"));
  again = call ("stop_session", "{\"sessionId\":\"%s\"}", id);
  g_assert_true (json_object_get_boolean_member (structured (again), "deleted"));
  g_assert_false (json_object_get_boolean_member (structured (again), "closed"));

  unknown = call ("get_session", "{\"sessionId\":\"sess_doesnotexist\"}");
  g_assert_true (is_error (unknown));
  g_assert_cmpstr (error_code (unknown), ==, "not_found");

  refused = call ("create_session", "{\"url\":\"%s\"}", url);
  g_assert_true (is_error (refused));
  g_assert_cmpstr (error_code (refused), ==, "invalid_input");
}

static void
test_scrape (void)
{
  g_autoptr(JsonObject) result = call ("scrape", "{\"url\":\"%spricing\",\"format\":"
                                                 "[\"markdown\",\"html\"]}",
                                       sight_demo_site_get_url (site));
  JsonObject *content;
  const char *text;

  g_assert_false (is_error (result));
  content = json_object_get_object_member (structured (result), "content");
  g_assert_nonnull (strstr (json_object_get_string_member (content, "html"), "<"));
  g_assert_cmpuint (strlen (json_object_get_string_member (content, "markdown")), >, 20);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (structured (result),
                                                                              "metadata"),
                                               "statusCode"), ==, 200);
  /* The text content is the same data as JSON. */
  text = json_object_get_string_member (
    json_array_get_object_element (json_object_get_array_member (result, "content"), 0), "text");
  g_assert_true (g_str_has_prefix (text, "{"));
}

static void
test_screenshot (void)
{
  g_autoptr(JsonObject) result = call ("screenshot", "{\"url\":\"%s\",\"fullPage\":false,"
                                                     "\"format\":\"jpeg\",\"quality\":70,"
                                                     "\"viewport\":{\"width\":800,\"height\":600}}",
                                       sight_demo_site_get_url (site));
  JsonObject *image;
  g_autofree guchar *bytes = NULL;
  gsize size = 0;
  g_autoptr(JsonObject) refused = NULL;

  g_assert_false (is_error (result));
  /* An image content item and no structuredContent, as the spec says. */
  g_assert_false (json_object_has_member (result, "structuredContent"));
  image = json_array_get_object_element (json_object_get_array_member (result, "content"), 0);
  g_assert_cmpstr (json_object_get_string_member (image, "type"), ==, "image");
  g_assert_cmpstr (json_object_get_string_member (image, "mimeType"), ==, "image/jpeg");
  bytes = g_base64_decode (json_object_get_string_member (image, "data"), &size);
  g_assert_cmpuint (size, >, 1000);
  g_assert_cmpint (bytes[0], ==, 0xff);
  g_assert_cmpint (bytes[1], ==, 0xd8);

  refused = call ("screenshot", "{\"url\":\"%s\",\"format\":\"gif\"}",
                  sight_demo_site_get_url (site));
  g_assert_cmpstr (error_code (refused), ==, "invalid_input");
}

static void
test_pdf (void)
{
  g_autoptr(JsonObject) result = call ("pdf", "{\"url\":\"%spricing\",\"paper\":\"Letter\"}",
                                       sight_demo_site_get_url (site));
  JsonObject *item, *resource;
  g_autofree guchar *bytes = NULL;
  gsize size = 0;

  g_assert_false (is_error (result));
  item = json_array_get_object_element (json_object_get_array_member (result, "content"), 0);
  g_assert_cmpstr (json_object_get_string_member (item, "type"), ==, "resource");
  resource = json_object_get_object_member (item, "resource");
  g_assert_cmpstr (json_object_get_string_member (resource, "uri"), ==, "webagent://quick/pdf");
  g_assert_cmpstr (json_object_get_string_member (resource, "mimeType"), ==, "application/pdf");
  bytes = g_base64_decode (json_object_get_string_member (resource, "blob"), &size);
  g_assert_cmpuint (size, >, 500);
  g_assert_true (memcmp (bytes, "%PDF", 4) == 0);
}

static void
test_crawl (void)
{
  g_autoptr(JsonObject) result = call ("crawl", "{\"url\":\"%s\",\"maxPages\":3,\"maxDepth\":1,"
                                                "\"delayMs\":0}",
                                       sight_demo_site_get_url (site));
  JsonArray *pages;

  g_assert_false (is_error (result));
  pages = json_object_get_array_member (structured (result), "pages");
  g_assert_cmpuint (json_array_get_length (pages), >=, 2);
  g_assert_cmpuint (json_array_get_length (pages), <=, 3);
  g_assert_nonnull (json_object_get_string_member (structured (result), "stoppedBy"));
}


/* smoke_test returns the report; get_report reads the same run again. A
 * broken link fails the test (a result, not an error). */
static void
test_smoke_and_report (void)
{
  const char *url = sight_demo_site_get_url (site);
  g_autoptr(JsonObject) failed = call ("smoke_test", "{\"url\":\"%spricing\",\"expectText\":"
                                                     "\"Pricing\",\"waitSeconds\":60}", url);
  g_autoptr(JsonObject) passed = NULL;
  g_autoptr(JsonObject) report = NULL;
  g_autoptr(JsonObject) unknown = NULL;
  g_autoptr(JsonObject) refused = NULL;
  g_autofree char *id = NULL;
  const char *text;

  g_assert_false (is_error (failed));
  g_assert_cmpstr (json_object_get_string_member (structured (failed), "verdict"), ==, "fail");
  id = g_strdup (json_object_get_string_member (structured (failed), "id"));
  g_assert_true (g_str_has_prefix (id, "run_"));
  text = text_of (failed);
  g_assert_true (g_str_has_prefix (text, "Smoke test of "));
  g_assert_nonnull (strstr (text, " FAILED in "));
  g_assert_nonnull (strstr (text, "Failed steps:"));
  g_assert_nonnull (strstr (text, "broken link"));
  g_assert_nonnull (strstr (text, "Full HTML report: file://"));
  g_assert_true (g_str_has_suffix (text, "The whole report is in structuredContent."));
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (structured (failed),
                                                                         "steps")), >, 5);

  report = call ("get_report", "{\"id\":\"%s\",\"waitSeconds\":0}", id);
  g_assert_false (is_error (report));
  g_assert_cmpstr (json_object_get_string_member (structured (report), "id"), ==, id);
  g_assert_cmpstr (json_object_get_string_member (structured (report), "verdict"), ==, "fail");

  passed = call ("smoke_test", "{\"url\":\"%spricing\",\"expectText\":\"Pricing\","
                               "\"strictLinks\":false,\"maxLinks\":3}", url);
  g_assert_false (is_error (passed));
  g_assert_cmpstr (json_object_get_string_member (structured (passed), "verdict"), ==, "pass");
  g_assert_nonnull (strstr (text_of (passed), " PASSED in "));

  unknown = call ("get_report", "{\"id\":\"run_doesnotexist\"}");
  g_assert_true (is_error (unknown));
  g_assert_cmpstr (error_code (unknown), ==, "not_found");

  refused = call ("smoke_test", "{\"url\":\"%s\",\"maxLinks\":201}", url);
  g_assert_true (is_error (refused));
  g_assert_cmpstr (error_code (refused), ==, "invalid_input");
}

/* A test longer than its wait answers "running" with the id; get_report
 * then waits for the verdict. */
static void
test_smoke_running (void)
{
  g_autoptr(JsonObject) running = call ("smoke_test", "{\"url\":\"%spricing\",\"maxLinks\":0,"
                                                      "\"steps\":[\"wait 3 seconds\"],"
                                                      "\"waitSeconds\":1}",
                                        sight_demo_site_get_url (site));
  g_autoptr(JsonObject) report = NULL;
  const char *id;

  g_assert_false (is_error (running));
  g_assert_cmpstr (json_object_get_string_member (structured (running), "verdict"), ==,
                   "running");
  id = json_object_get_string_member (structured (running), "id");
  g_assert_nonnull (strstr (text_of (running), "call get_report with the id"));
  g_assert_nonnull (strstr (text_of (running), id));

  report = call ("get_report", "{\"id\":\"%s\",\"waitSeconds\":30}", id);
  g_assert_false (is_error (report));
  g_assert_cmpstr (json_object_get_string_member (structured (report), "verdict"), ==, "pass");
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *data_dir = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  /* Runs go to a store of the test's own. */
  data_dir = g_dir_make_tmp ("sight-mcp-runner-tools-XXXXXX", NULL);
  g_setenv ("SIGHTLINE_DATA_DIR", data_dir, TRUE);
  gtk_init ();

  site = sight_demo_site_new ();
  sight_demo_site_start (site, 0, &error);
  g_assert_no_error (error);
  mcp_start ();

  g_test_add_func ("/mcp-runner-tools/sessions", test_sessions);
  g_test_add_func ("/mcp-runner-tools/scrape", test_scrape);
  g_test_add_func ("/mcp-runner-tools/screenshot", test_screenshot);
  g_test_add_func ("/mcp-runner-tools/pdf", test_pdf);
  g_test_add_func ("/mcp-runner-tools/crawl", test_crawl);
  g_test_add_func ("/mcp-runner-tools/smoke-and-report", test_smoke_and_report);
  g_test_add_func ("/mcp-runner-tools/smoke-running", test_smoke_running);
  status = g_test_run ();

  mcp_stop ();
  sight_demo_site_stop (site);
  g_clear_object (&site);
  return status;
}
