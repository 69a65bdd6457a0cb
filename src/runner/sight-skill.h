/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "sight-store.h"

G_BEGIN_DECLS

/* Skills of spec/webagent-mcp-tools.txt: named, versioned runs with typed
 * inputs. The built-in smoke-uat is the smoke test (sight-smoke.h). Users
 * add skills as JSON files in a skills folder: "skills" under the data
 * folder ($SIGHTLINE_DATA_DIR, else the user data folder's "sightline") and
 * "skills" next to the project file (sightline.json, found from the current
 * folder). A skill file:
 *
 *   { "name": "pricing-check",            a-z, 0-9 and -, 1 to 64 characters
 *     "version": "1.0.0",                 default "1"
 *     "description": "…",
 *     "inputs": {                         each: type, required, description,
 *       "url":  { "type": "url", "required": true },    default, and for
 *       "plan": { "type": "string", "default": "Team" }, strings maxLength,
 *       "more": { "type": "string[]" },                  for numbers minimum
 *       "n":    { "type": "integer", "minimum": 1 },     and maximum
 *       "fast": { "type": "boolean" } },
 *     "permissions": [ "network_capture" ],   what run_skill must grant
 *     "url": "{url}",                     the start page (default "{url}")
 *     "steps": [ "click {plan}", "expect text \"{plan}\"" ],
 *     "timeout": 30000 }                  each step's, 1000 to 600000 ms
 *
 * Types: url, string, string[], integer, number, boolean. "{name}" in the
 * start page and the steps is the input's value (a string[] joined with
 * ", "). Steps are flow steps (sight-flow-step.h): direct steps run with no
 * model, others run as act. The run opens a session of its own (visible
 * while it runs, closed at the end); the first failed step stops the run.
 *
 * Run statuses: running, passed, failed, error, cancelled, denied (a
 * permission the skill needs was not granted; nothing ran). Runs are kept
 * in the store (kind "skill", or "smoke" for smoke-uat) with run_… ids. */

#define SIGHT_SKILL_SMOKE_UAT "smoke-uat"

#define SIGHT_TYPE_SKILL (sight_skill_get_type ())
G_DECLARE_FINAL_TYPE (SightSkill, sight_skill, SIGHT, SKILL, GObject)

/* The skills folders, user data first. */
GStrv        sight_skill_dirs            (void);
/* The built-in skill, then the users' in name order. A file that does not
 * parse is left out with a warning; the first of two skills with one name
 * and version wins. */
GPtrArray   *sight_skill_list            (void);
/* The newest version of @name, or @version; NULL and G_IO_ERROR_NOT_FOUND
 * when there is none. */
SightSkill  *sight_skill_find            (const char  *name,
                                          const char  *version,
                                          GError     **error);
/* Parses one skill file's text; INVALID_ARGUMENT naming what is wrong. */
SightSkill  *sight_skill_new_from_data   (const char  *data,
                                          const char  *path,
                                          GError     **error);

const char  *sight_skill_get_name        (SightSkill *self);
const char  *sight_skill_get_version     (SightSkill *self);
const char  *sight_skill_get_description (SightSkill *self);
gboolean     sight_skill_is_builtin      (SightSkill *self);
/* skill_<name> with dashes turned into underscores. */
char        *sight_skill_tool_name       (SightSkill *self);
/* The JSON Schema properties of the inputs and the required ones. */
JsonObject  *sight_skill_input_properties (SightSkill *self);
GStrv        sight_skill_required_inputs (SightSkill *self);
/* "network_capture", "active_scan", "file_access" */
const char * const *sight_skill_get_permissions (SightSkill *self);
/* The list_skills entry: name, version, description, builtin, tool,
 * inputs, permissions, source (the file, for a user skill). */
JsonNode    *sight_skill_to_json         (SightSkill *self);

/* Starts a run of @skill with @inputs, the permissions of @grant and the
 * session options of @session (NULL: none), and returns its run id at once;
 * the run goes on until it ends or @cancellable fires (status cancelled).
 * A skill that needs a permission @grant lacks is stored as a denied run
 * and returned without running. NULL with INVALID_ARGUMENT for inputs that
 * do not fit the skill. */
char        *sight_skill_run_start       (SightStore         *store,
                                          SightSkill         *skill,
                                          JsonObject         *inputs,
                                          const char * const *grant,
                                          JsonObject         *session,
                                          GCancellable       *cancellable,
                                          GError            **error);

/* The skill run of a stored run (kind "skill" or "smoke"): runId, skill,
 * version, sessionId, status, startedAt, ms, summary, counts, result,
 * hasReport. NULL when the run is not a skill run. */
JsonObject  *sight_skill_run_to_json     (const SightRunData *data);
/* The text of a skill result: name, version, run id and status; the
 * summary; the reason of a stop; the counts; up to five failed steps. */
char        *sight_skill_run_text        (const SightRunData *data);

G_END_DECLS
