/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "sight-store.h"

G_BEGIN_DECLS

/* The smoke test of spec/webagent-mcp-tools.txt, checked in the spec's
 * order: the start page loads, basic accessibility, the links of the start
 * page, the steps (the first failure stops the flow, not the later checks),
 * the console over the whole run, expectText (case-sensitive), expectUrl
 * (contains), expectNoText, and last whether every link worked
 * (strictLinks). Arguments: url, steps (up to 30 of up to 500 characters),
 * expectText, expectUrl, expectNoText (up to 500 characters), maxLinks
 * (0-200, 50), strictLinks (true), waitSeconds (1-90, 60: for callers that
 * wait), session (proxyUrl, allowHosts; sign-in options are refused).
 *
 * The run is kept in @store (kind "smoke"); the result is { runId, verdict,
 * text, report, video } with the report of sight_report_to_json and the path
 * of the run's recording: every smoke test records its page
 * (sight-run-video.h), and the run links the file once it is complete. */
void      sight_smoke_test_async  (SightStore          *store,
                                   JsonObject          *args,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data);
JsonNode *sight_smoke_test_finish (GAsyncResult        *result,
                                   GError             **error);
/* The same, returning the run id (run_…) as soon as the run is open, for
 * callers that stop waiting before the test ends (get_report reads it
 * later). NULL with @error when the arguments were refused or the run could
 * not be stored: @callback is then not called. */
char     *sight_smoke_test_start  (SightStore          *store,
                                   JsonObject          *args,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data,
                                   GError             **error);

G_END_DECLS
