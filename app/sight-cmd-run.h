/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "sight-store.h"

G_BEGIN_DECLS

/* What `run` and `merge-reports` both write for a suite result: the HTML
 * report (@report: a .html file, or a folder that gets index.html and
 * results.json), the JUnit XML, the JSON on stdout (@json) or the text.
 * Runs are read from @store (may be NULL) for their screenshots. With
 * @tests_shown, each test's line was printed as it ended: only the totals
 * follow. Returns the exit status. */
int sight_cmd_run_emit (JsonObject *result,
                        SightStore *store,
                        const char *report,
                        const char *junit,
                        gboolean    json,
                        gboolean    tests_shown);

G_END_DECLS
