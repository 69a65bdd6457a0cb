/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "sight-store.h"

G_BEGIN_DECLS

typedef enum {
  SIGHT_REPORT_HTML,
  SIGHT_REPORT_JSON,
  SIGHT_REPORT_JUNIT,
} SightReportFormat;

gboolean    sight_report_format_from_string (const char        *name,
                                             SightReportFormat *out);

/* The first paragraph of the report's text, in the spec's wording:
 * "Smoke test of URL PASSED in N s: X of Y steps passed. …" */
char       *sight_report_summary       (const SightRunData *data);
/* The whole text of smoke_test / get_report: the summary, then up to five
 * "Failed steps:" lines. */
char       *sight_report_text          (const SightRunData *data);
/* The report structure of the spec: verdict pass|fail|error|running,
 * summary, steps indexed from 0, findings and notes. */
JsonNode   *sight_report_to_json       (const SightRunData *data);

/* Renders the report. HTML is one self-contained file under a strict CSP
 * (no script, no external requests); every untrusted string is escaped for
 * its context. */
GBytes     *sight_report_render        (const SightRunData *data,
                                        SightReportFormat   format,
                                        GError            **error);
/* Renders and writes to @path through a temporary file and a rename. */
gboolean    sight_report_write         (const SightRunData *data,
                                        SightReportFormat   format,
                                        const char         *path,
                                        GError            **error);

/* The report of a suite: @suite is the result of sight_suite_run (tests,
 * each with its attempts and their JSON reports; see sight-suite.h). HTML
 * shows the index of tests, then every attempt of every test with its steps;
 * @runs (run id -> SightRunData, may be NULL) gives it the screenshots, and an
 * attempt whose run is not there is drawn from its JSON report without them.
 * JUnit has one testcase per test (earlier attempts as Surefire's
 * flakyFailure / rerunFailure); JSON is @suite itself. */
GBytes     *sight_report_render_suite  (JsonObject         *suite,
                                        GHashTable         *runs,
                                        SightReportFormat   format,
                                        GError            **error);
gboolean    sight_report_write_suite   (JsonObject         *suite,
                                        GHashTable         *runs,
                                        SightReportFormat   format,
                                        const char         *path,
                                        GError            **error);

/* Escaping, exposed for tests. Each returns a new string safe for its
 * context; invalid UTF-8, NUL and other control characters are dropped. */
char       *sight_report_escape_html   (const char *text);
char       *sight_report_escape_xml    (const char *text);
/* @url when it is http, https or a data:image URI, escaped for an
 * attribute; NULL otherwise. */
char       *sight_report_safe_url      (const char *url);

G_END_DECLS
