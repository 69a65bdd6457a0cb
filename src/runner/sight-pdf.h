/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* The pdf tool of spec/webagent-mcp-tools.txt: loads args.url in a fresh page
 * and prints it to PDF through WebKit's printing. Arguments: url, paper (A4,
 * Letter, Legal; default A4), landscape (false), printBackground (true),
 * waitUntil, waitForText, timeoutMs (1000-120000, 30000). Returns the PDF. */
void    sight_pdf_async  (JsonObject          *args,
                          GCancellable        *cancellable,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data);
GBytes *sight_pdf_finish (GAsyncResult        *result,
                          GError             **error);

G_END_DECLS
