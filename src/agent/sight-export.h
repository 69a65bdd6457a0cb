/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "sight-project.h"

G_BEGIN_DECLS

/* A test file (*.sightline.json, DESIGN.md "Test files") written as a test for
 * another runner: direct steps become role-based Playwright locators; model
 * steps become @e2edev/e2e agent calls with the same instruction and options.
 * For plain Playwright, an act step whose trace is in the project's trace
 * cache becomes the trace's actions (the same locators, from the recorded
 * descriptors), and any other model step stops the test with test.fixme, so
 * that it is reported as not done instead of passing without the step. */

typedef enum {
  SIGHT_EXPORT_PLAYWRIGHT,
  SIGHT_EXPORT_E2E,
} SightExportFormat;

gboolean  sight_export_format_from_string (const char        *name,
                                           SightExportFormat *out);

/* @source_name (the file's base name) goes into the header comment; @project
 * (NULL: none) gives the trace cache and the agents that name its traces.
 * @out_fixme (optional) receives one line for each step that became
 * test.fixme, saying why ("step 4 (assert \"…\"): it needs a model, …"). Fails
 * with INVALID_ARGUMENT for a malformed test file or a direct step that does
 * not parse (the message names the step). */
char     *sight_export_test               (JsonNode          *test_file,
                                           const char        *source_name,
                                           SightExportFormat  format,
                                           SightProject      *project,
                                           GStrv             *out_fixme,
                                           GError           **error);

/* The same for the file at @path, with the project file found from it. */
char     *sight_export_test_path          (const char        *path,
                                           SightExportFormat  format,
                                           GStrv             *out_fixme,
                                           GError           **error);

G_END_DECLS
