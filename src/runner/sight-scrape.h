/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "sight-web-page.h"

G_BEGIN_DECLS

/* The scrape tool of spec/webagent-mcp-tools.txt: loads args.url in a fresh
 * page and returns { url, content: {format: text}, metadata: { title,
 * statusCode, description, language, wordCount }, links: [{url, text,
 * internal}] }. Arguments: url, format (html, cleaned_html, markdown,
 * readability; default markdown), waitUntil, waitForText, timeoutMs
 * (1000-120000, default 30000), screenshot. */
void      sight_scrape_async  (JsonObject          *args,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data);
JsonNode *sight_scrape_finish (GAsyncResult        *result,
                               GError             **error);

/* Shared by the tools that load one page: waits until @text is in the
 * page's visible text, polling until @deadline (monotonic µs). */
void      sight_page_wait_for_text_async  (SightWebPage        *page,
                                           const char          *text,
                                           gint64               deadline,
                                           GCancellable        *cancellable,
                                           GAsyncReadyCallback  callback,
                                           gpointer             user_data);
gboolean  sight_page_wait_for_text_finish (SightWebPage        *page,
                                           GAsyncResult        *result,
                                           GError             **error);

/* The function body that returns { content, metadata, links } for
 * args.formats: Turndown, its GFM plugin and Readability, then scrape.js.
 * Shared by scrape and crawl. */
char     *sight_scrape_script              (void);
/* The HTTP status of @page's main resource; 0 when there is none. */
guint     sight_page_status_code           (SightWebPage        *page);
/* Milliseconds left until @deadline (monotonic µs), at least 1. */
guint     sight_deadline_remaining_ms      (gint64               deadline);

G_END_DECLS
