/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* How deeply arrays and objects may nest in JSON the program reads.
 * json-glib's parser recurses once per level without a bound (100,000
 * levels overflow the stack), so every JSON text that comes in is measured
 * first by sight_json_parse() and refused past its bound. */

/* Anything from outside: JSON-RPC messages, test and project files, model
 * answers, stored runs. */
#define SIGHT_JSON_MAX_DEPTH      512
/* An observed page's tree (two levels of JSON per level of the page) and
 * the stored observations made of it. */
#define SIGHT_JSON_MAX_DEPTH_TREE 8192

/* Whether @data (@length bytes, or NUL-terminated if -1) nests at most
 * @max_depth levels deep, as json-glib reads it: brackets inside strings
 * ("…" with escapes, '…') and C comments do not count. The scan stops at
 * the first level past the bound and sets SIGHT_ERROR_INVALID_ARGUMENT. */
gboolean  sight_json_check_depth (const char *data,
                                  gssize      length,
                                  guint       max_depth,
                                  GError    **error);

/* Where the value of the member @name of the object @data (@length bytes,
 * or NUL-terminated if -1) is, found without parsing: *@start is its first
 * byte, *@end one past its last. Only plain JSON is read (no comments,
 * single quotes or escaped key); FALSE for anything else, for a text that
 * is not an object and for an object without the member at its top level.
 * For splitting a large member off a text before parsing the rest. */
gboolean  sight_json_find_member (const char *data,
                                  gssize      length,
                                  const char *name,
                                  gsize      *start,
                                  gsize      *end);

/* Parses @data after sight_json_check_depth(). A text nested too deeply
 * fails with SIGHT_ERROR_INVALID_ARGUMENT, one that is not JSON with
 * json-glib's JSON_PARSER_ERROR, an empty one with JSON_PARSER_ERROR_PARSE. */
JsonNode *sight_json_parse       (const char *data,
                                  gssize      length,
                                  guint       max_depth,
                                  GError    **error);

/* sight_json_parse() of a file's contents. */
JsonNode *sight_json_parse_file  (const char *path,
                                  guint       max_depth,
                                  GError    **error);

G_END_DECLS
