/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* A JSON Schema validator for the keywords structured output uses.
 *
 * Supported (draft 2020-12 names, with draft-07 spellings accepted):
 *   type, enum, const,
 *   properties, required, additionalProperties, patternProperties, propertyNames,
 *   minProperties, maxProperties, dependentRequired, dependentSchemas, dependencies,
 *   items, prefixItems, additionalItems (after an array-form items), contains,
 *   minContains, maxContains, minItems, maxItems, uniqueItems,
 *   minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf,
 *   minLength, maxLength (in code points), pattern (GRegex, not anchored),
 *   allOf, anyOf, oneOf, not, if/then/else,
 *   $ref to local targets ("#", "#/json/pointer" with ~0, ~1 and %-escapes), $defs, definitions.
 * Annotations (title, description, default, examples, format, $comment, $id, $schema,
 * readOnly, …) are accepted and ignored.  Keywords whose meaning this validator cannot
 * honour (unevaluatedProperties, unevaluatedItems, $dynamicRef, $recursiveRef) and
 * non-local $ref make the schema INVALID_ARGUMENT rather than silently accepting output.
 *
 * Numbers compare mathematically: 1 == 1.0, and 1.0 is an integer. */

typedef enum {
  /* Draft 2020-12 semantics: $ref applies alongside its sibling keywords. */
  SIGHT_JSON_SCHEMA_DIALECT_2020_12,
  /* Draft-07 semantics: a $ref makes its sibling keywords ignored. */
  SIGHT_JSON_SCHEMA_DIALECT_DRAFT_7,
  /* Draft-07 when "$schema" at the root names draft-04/06/07, 2020-12 otherwise. */
  SIGHT_JSON_SCHEMA_DIALECT_AUTO,
} SightJsonSchemaDialect;

/* One validation failure: @path is a JSON pointer into the instance ("" is the root),
 * @reason a short English phrase fit for a repair prompt. */
typedef struct {
  char *path;
  char *reason;
} SightJsonSchemaError;

void                 sight_json_schema_error_free   (SightJsonSchemaError *err);

typedef struct _SightJsonSchema SightJsonSchema;

#define SIGHT_TYPE_JSON_SCHEMA (sight_json_schema_get_type ())
GType                sight_json_schema_get_type     (void) G_GNUC_CONST;

/* Compiles @schema (an object or a boolean).  A schema that is not a valid schema
 * (a keyword with a value of the wrong type, an unknown type name, a pattern that
 * does not compile, a $ref that does not resolve, an unsupported keyword) fails with
 * SIGHT_ERROR_INVALID_ARGUMENT whose message starts with the JSON pointer of the
 * offending keyword inside the schema, e.g. "/properties/age/minimum: must be a number". */
SightJsonSchema     *sight_json_schema_new          (JsonNode                *schema,
                                                     GError                 **error);
SightJsonSchema     *sight_json_schema_new_for_dialect (JsonNode              *schema,
                                                        SightJsonSchemaDialect dialect,
                                                        GError               **error);
/* Parses @json text first; a syntax error is INVALID_ARGUMENT with line:column. */
SightJsonSchema     *sight_json_schema_new_from_string (const char            *json,
                                                        GError               **error);

SightJsonSchema     *sight_json_schema_ref          (SightJsonSchema         *self);
void                 sight_json_schema_unref        (SightJsonSchema         *self);

/* The schema as given (borrowed). */
JsonNode            *sight_json_schema_get_node     (SightJsonSchema         *self);

/* Returns TRUE when @instance is valid.  When it is not and @out_errors is not NULL,
 * *out_errors receives a GPtrArray of SightJsonSchemaError (at most 32, in document
 * order; the array owns them). */
gboolean             sight_json_schema_validate     (SightJsonSchema         *self,
                                                     JsonNode                *instance,
                                                     GPtrArray              **out_errors);

/* Like validate, but reports failure as SIGHT_ERROR_MODEL_OUTPUT_INVALID whose message
 * lists the failures ("/plan: must be a string; /: missing required property \"name\""),
 * bounded to about 2 KB. */
gboolean             sight_json_schema_check        (SightJsonSchema         *self,
                                                     JsonNode                *instance,
                                                     GError                 **error);

/* "path: reason" items joined with "; " (the root is written "(root)"). */
char                *sight_json_schema_errors_to_string (GPtrArray           *errors);

/* Deep JSON equality with numbers compared by value (1 == 1.0, false != 0). */
gboolean             sight_json_equal               (JsonNode                *a,
                                                     JsonNode                *b);

/* Appends @token to @path as one JSON pointer segment (escaping ~ and /). */
char                *sight_json_pointer_append      (const char              *path,
                                                     const char              *token);

/* Resolves a JSON pointer ("" or "/a/b~1c/0") in @root; the result is borrowed.
 * Returns NULL when it does not resolve. */
JsonNode            *sight_json_pointer_resolve     (JsonNode                *root,
                                                     const char              *pointer);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightJsonSchema, sight_json_schema_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightJsonSchemaError, sight_json_schema_error_free)

G_END_DECLS
