/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "sight-secrets.h"

G_BEGIN_DECLS

/* AgentParams: values from the test's code, never from the model.
 *
 * A params value is a JSON object whose members are JSON-safe values (null, booleans,
 * finite numbers, strings, arrays, objects) or Secrets.  In test files a Secret is
 * written as an object with exactly one member, "secret", naming a credential:
 *   { "password": { "secret": "member.password" } }
 * Limits: the compact JSON serialization (Secrets as written above) is at most
 * 64 KiB (65,536 bytes), and values nest at most 32 levels deep, the params object
 * itself being level 1 and a Secret counting as a value, not a level. */

#define SIGHT_PARAMS_MAX_BYTES (64 * 1024)
#define SIGHT_PARAMS_MAX_DEPTH 32

/* INVALID_ARGUMENT for params that are not an object, hold a non-finite number,
 * a Secret with an empty name, are more than 32 levels deep or serialize to more
 * than 64 KiB.  The message names the JSON pointer of the offending value. */
gboolean    sight_params_validate        (JsonNode      *params,
                                          GError       **error);

/* Whether @node is a Secret ({"secret": NAME} and nothing else); NAME is borrowed. */
gboolean    sight_params_is_secret       (JsonNode      *node,
                                          const char   **out_name);

/* The params the model sees: a deep copy in which every Secret becomes
 * {"secret": NAME, "purpose": PURPOSE} (the purpose of the credential declared in
 * @secrets, omitted when it is not declared or @secrets is NULL).  No value is read. */
JsonNode   *sight_params_project         (JsonNode      *params,
                                          SightSecrets  *secrets);

/* Names of every Secret in @params, in document order, without duplicates. */
GStrv       sight_params_list_secrets    (JsonNode      *params);

/* Fills {name} placeholders of @instruction from the top-level members of @params:
 * a string is inserted as is, a number as its JSON text, a boolean as true/false, a
 * Secret as the compact JSON of its projection (never its value).  A placeholder
 * naming null, an array or an object is INVALID_ARGUMENT.  Braces that do not name
 * a param ({x} with no member x, "{ }", "{}") are left untouched; there is no escape
 * syntax.  @params may be NULL. */
char       *sight_instruction_fill       (const char    *instruction,
                                          JsonNode      *params,
                                          SightSecrets  *secrets,
                                          GError       **error);

G_END_DECLS
