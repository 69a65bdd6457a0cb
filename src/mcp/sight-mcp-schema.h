/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* The JSON Schema subset the MCP tools' input schemas use: type (a name or
 * a list), properties, required, additionalProperties (false or a schema),
 * dependentRequired, enum, const, minimum, maximum, exclusiveMinimum,
 * minLength and maxLength (in characters), pattern, items, minItems,
 * maxItems, uniqueItems, anyOf and oneOf.
 *
 * Validates @instance against @schema and appends one issue per problem to
 * @issues: { "path": [ "a", 0, … ], "message": "…" }. Returns TRUE when no
 * issue was found. Messages name the field and the rule, never echo a value
 * (a value may be a secret). */
gboolean sight_mcp_schema_validate (JsonNode  *schema,
                                    JsonNode  *instance,
                                    JsonArray *issues);

/* Appends an issue for @path (a "/"-separated list of property names, or
 * "" for the root) to @issues. */
void     sight_mcp_schema_add_issue (JsonArray  *issues,
                                     const char *path,
                                     const char *message);

G_END_DECLS
