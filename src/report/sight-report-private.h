/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "sight-report.h"

G_BEGIN_DECLS

/* The report, one file per format: sight-report.c (formats, escaping,
 * output), sight-report-run.c (the run the renderers share),
 * sight-report-text.c, sight-report-json.c, sight-report-junit.c and
 * sight-report-html.c. */

/* Escaping (sight-report.c): valid UTF-8 without NUL and control characters,
 * and that text escaped into @out. */
char *_sight_report_clean_text (const char *text);
void _sight_report_append_escaped (GString    *out,
                                   const char *text);

/* A stored run as every renderer reads it (sight-report-run.c). */
double _sight_report_seconds_between (gint64 start,
                                      gint64 end);
gint64 _sight_report_run_end (const SightRunRecord *run);
char *_sight_report_iso_time (gint64 t);
const char *_sight_report_verdict_word (SightRunVerdict verdict);
const char *_sight_report_verdict (SightRunVerdict verdict);
gboolean _sight_report_is_console_error (const SightLogRecord *l);
gboolean _sight_report_is_failed_request (const SightLogRecord *l);
gboolean _sight_report_is_broken_link (const SightLogRecord *l);
void _sight_report_count_findings (const SightRunData *data,
                                   guint              *n_console,
                                   guint              *n_failed);
const char *_sight_report_step_label (const SightStepRecord *s);
gboolean _sight_report_step_failed (const SightStepRecord *s);
char *_sight_report_one_line (const char *text,
                              gsize       max_bytes);
char *_sight_report_step_failure_text (const SightStepRecord *s);
/* "[[ATTACHMENT|path]]" lines (the JUnit attachments convention CI servers
 * read) for the failure evidence of @data's steps, into @out. */
void _sight_report_append_attachments (GString            *out,
                                       const SightRunData *data);

/* A suite's attempts: JSON members, and the run of an attempt, stored or
 * rebuilt from its JSON report (sight-report-run.c). */
const char *_sight_report_member_string (JsonObject *o,
                                         const char *name);
gint64 _sight_report_member_int (JsonObject *o,
                                 const char *name,
                                 gint64      fallback);
JsonArray *_sight_report_member_array (JsonObject *o,
                                       const char *name);
JsonObject *_sight_report_member_object (JsonObject *o,
                                         const char *name);
gint64 _sight_report_parse_iso (const char *text);
SightRunVerdict _sight_report_verdict_from (const char      *name,
                                            SightRunVerdict  fallback);
SightRunData *_sight_report_run_data_from_report (JsonObject *report);
SightRunData *_sight_report_attempt_run (JsonObject *attempt,
                                         GHashTable *runs,
                                         gboolean   *owned);

/* The renderers (sight-report-junit.c, sight-report-html.c); text and JSON
 * are public (sight-report.h). */
GBytes *_sight_report_render_junit (const SightRunData *data);
GBytes *_sight_report_render_suite_junit (JsonObject *suite);
GBytes *_sight_report_render_html (const SightRunData *data);
GBytes *_sight_report_render_suite_html (JsonObject *suite,
                                         GHashTable *runs);


G_END_DECLS
