/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* The crawl tool of spec/webagent-mcp-tools.txt. Breadth first from args.url
 * in one page, within scope (host, subdomains or up to 20 hosts), include and
 * exclude patterns (up to 50 each; `*` wildcards, against the whole URL, or
 * against the path when the pattern starts with "/"), maxPages (1-100, 25),
 * maxDepth (0-5, 2), delayMs (0-10000, 500), respectRobots (RFC 9309, true),
 * sitemap (false), content (scrape formats), maxMs (1000-600000, 300000) and
 * cursor (continues a crawl that stopped). Returns { start, pages: [{ url,
 * depth, status, title, linksFound, ms, content? }], skipped, skippedTotal,
 * stoppedBy: complete|maxPages|timeout, pending, cursor? }. */
void      sight_crawl_async  (JsonObject          *args,
                              GCancellable        *cancellable,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data);
JsonNode *sight_crawl_finish (GAsyncResult        *result,
                              GError             **error);

G_END_DECLS
