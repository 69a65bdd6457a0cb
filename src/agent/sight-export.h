/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* A test file (*.sightline.json, DESIGN.md "Test files") written as a test for
 * another runner: direct steps become role-based Playwright locators; model
 * steps become @e2edev/e2e agent calls with the same instruction and options,
 * or, for plain Playwright, a marked TODO. */

typedef enum {
  SIGHT_EXPORT_PLAYWRIGHT,
  SIGHT_EXPORT_E2E,
} SightExportFormat;

gboolean  sight_export_format_from_string (const char        *name,
                                           SightExportFormat *out);

/* @source_name (the file's base name) goes into the header comment. Fails
 * with INVALID_ARGUMENT for a malformed test file or a direct step that does
 * not parse (the message names the step). */
char     *sight_export_test               (JsonNode          *test_file,
                                           const char        *source_name,
                                           SightExportFormat  format,
                                           GError           **error);

char     *sight_export_test_path          (const char        *path,
                                           SightExportFormat  format,
                                           GError           **error);

G_END_DECLS
