/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The little site of tests/fixtures/export/site (/login and /dashboard),
 * served on loopback by test-export.c, test-recorder.c and test-direct-run.c. */
#pragma once

#include <libsoup/soup.h>

/* The fixture page for @path, or NULL (and *@len untouched) for any other. */
G_GNUC_UNUSED static char *
export_site_read_page (const char *path,
                       gsize      *len)
{
  const char *page = g_str_equal (path, "/dashboard") ? "dashboard.html"
                   : g_str_equal (path, "/login") ? "login.html" : NULL;
  g_autofree char *file = NULL;
  char *body = NULL;

  if (page == NULL)
    return NULL;
  file = g_test_build_filename (G_TEST_DIST, "fixtures", "export", "site", page, NULL);
  g_assert_true (g_file_get_contents (file, &body, len, NULL));
  return body;
}

/* A SoupServer handler: the fixture page, or 404. */
G_GNUC_UNUSED static void
export_site_serve_cb (SoupServer        *server,
                      SoupServerMessage *msg,
                      const char        *path,
                      GHashTable        *query,
                      gpointer           user_data)
{
  gsize len = 0;
  char *body = export_site_read_page (path, &len);

  if (body == NULL)
    {
      soup_server_message_set_status (msg, 404, NULL);
      return;
    }
  soup_server_message_set_status (msg, 200, NULL);
  soup_server_message_set_response (msg, "text/html; charset=utf-8", SOUP_MEMORY_TAKE, body, len);
}
