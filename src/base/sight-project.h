/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "sight-secrets.h"
#include "sight-step-options.h"

G_BEGIN_DECLS

/* The project file, sightline.json, found next to the test files or in a folder
 * above them:
 *
 *   {
 *     "agents": {
 *       "default": { "model": "openai:gpt-4.1-mini", "baseUrl": "http://127.0.0.1:8080/v1",
 *                    "apiKeyEnv": "OPENAI_API_KEY", "vision": false,
 *                    "maxSteps": 25, "maxModelCalls": 25 }
 *     },
 *     "credentials": {
 *       "member.password": { "purpose": "password",
 *                            "allowedOrigins": ["http://127.0.0.1:8765"],
 *                            "source": { "env": "MEMBER_PASSWORD" } }
 *     },
 *     "defaults": { "timeout": 120000, "actionTimeout": 15000, "agent": "default" },
 *     "traceCache": true,
 *     "allowedOrigins": ["https://auth.example.test"]
 *   }
 *
 * An agent may also give "maxTokens" (a positive integer) and "price" / "prices" (US
 * dollars per million tokens, read by the model layer).  An API key itself never sits
 * in the file: "apiKey" is refused in favour of "apiKeyEnv" (or the keyring).
 *
 * agents.<name>.model is "provider:model" (split at the first colon, so
 * "ollama:llama3:8b" is provider "ollama", model "llama3:8b"), or give "provider" and
 * "model" apart.  credentials may also be an array of objects with a "name".  A
 * credential's source is exactly one of {"env": VAR}, {"file": PATH} (relative to the
 * project file's folder) or {"keyring": {attribute: value, …}}.  "traceCache" turns the
 * trace cache of act on: true keeps traces under $XDG_CACHE_HOME/sightline/traces, a
 * string names the folder (relative to the project file's), false or absent is off.  Unknown members are
 * INVALID_ARGUMENT naming their JSON pointer, so a typo does not pass silently.
 *
 * An agent may name a custom executor (docs/executor.md), a program its act and assert
 * steps are dispatched to, started per step:
 *   "executor": { "command": ["python3", "executors/first-button.py"], "env": {"LEVEL": "2"} }
 * "command" is a non-empty array of non-empty strings (a program given as a relative path
 * with a slash is found from the project file's folder, which is also the executor's
 * working folder); "env" an object of variable name → string, added to the small
 * environment the executor gets (it never inherits Sightline's, which may hold
 * credentials).  An agent with an executor needs no model (its waitFor and extract
 * still use the model when it names one). */

#define SIGHT_PROJECT_FILE_NAME "sightline.json"
#define SIGHT_DEFAULT_TIMEOUT_MS 120000
#define SIGHT_DEFAULT_MAX_STEPS 25
#define SIGHT_DEFAULT_MAX_MODEL_CALLS 25
#define SIGHT_JUDGMENT_BUDGET_MIN_MS 30000

/* A custom executor of an agent ("executor" above). */
typedef struct {
  GStrv            argv;            /* the command, argv[0] resolved as said above */
  GStrv            env;             /* "NAME=value" entries from "env" (never NULL) */
  char            *cwd;             /* the project file's folder, or NULL: the current one */
} SightExecutorConfig;

typedef struct {
  char            *name;
  char            *provider;        /* NULL: no model configured (MODEL_UNAVAILABLE) */
  char            *model;
  char            *base_url;        /* NULL: the provider's default */
  char            *api_key_env;     /* NULL: no key */
  SightVisionMode  vision;          /* never UNSET; OFF by default */
  gint64           max_steps;       /* 25 by default */
  gint64           max_model_calls; /* 25 by default */
  gint64           max_tokens;      /* 0: the provider's default */
  /* the custom executor act and assert are dispatched to, or NULL */
  SightExecutorConfig *executor;
  /* the entry as written, for members the model layer reads itself
   * ("price", "prices"; see sight-model-config.h) */
  JsonObject      *json;
} SightAgentConfig;

typedef struct _SightProject SightProject;

#define SIGHT_TYPE_PROJECT (sight_project_get_type ())
GType             sight_project_get_type         (void) G_GNUC_CONST;

/* A project with no file: no agents, no credentials, default timeouts. */
SightProject     *sight_project_new_default      (void);
/* Parses sightline.json text; @base_dir resolves relative credential files (NULL: the
 * current folder).  Errors are INVALID_ARGUMENT: "sightline.json:3:14: …" for syntax,
 * "sightline.json /agents/fast/maxSteps: must be a positive integer" for content. */
SightProject     *sight_project_new_from_data    (const char   *data,
                                                  gssize        length,
                                                  const char   *base_dir,
                                                  GError      **error);
SightProject     *sight_project_load             (const char   *path,
                                                  GError      **error);
/* The sightline.json in @start (a folder, or a file whose folder is used) or in the
 * nearest folder above it; NULL when there is none. */
char             *sight_project_find             (const char   *start);
/* sight_project_find, then load; the default project when none is found. */
SightProject     *sight_project_load_for         (const char   *start,
                                                  GError      **error);

SightProject     *sight_project_ref              (SightProject *self);
void              sight_project_unref            (SightProject *self);

/* The file it was loaded from, or NULL. */
const char       *sight_project_get_path         (SightProject *self);
/* defaults.timeout, 120000 unless set. */
gint64            sight_project_get_timeout      (SightProject *self);
/* defaults.actionTimeout, 0 when unset. */
gint64            sight_project_get_action_timeout (SightProject *self);
/* The folder of act's trace cache, or NULL when traceCache is off. */
const char       *sight_project_get_trace_cache_dir (SightProject *self);
/* "allowedOrigins": the origins a test's pages may reach besides its start
 * URL's (navigations, redirects, popups, frames; see sight-origin-policy.h),
 * normalized; a single "*" entry: any origin, the guard off. NULL when the
 * file gives none. */
const char * const *sight_project_get_allowed_origins (SightProject *self);
/* max(30000, defaults.actionTimeout): the default timeout of assert, waitFor, extract. */
gint64            sight_project_get_judgment_budget (SightProject *self);

/* Sorted names (free with g_strfreev). */
GStrv             sight_project_list_agents      (SightProject *self);
/* Borrowed; NULL when unknown. */
const SightAgentConfig *sight_project_get_agent  (SightProject *self,
                                                  const char   *name);
/* The agent a step uses: @name when given (unknown: INVALID_ARGUMENT before the
 * step opens), else defaults.agent, else the agent named "default", else the only
 * agent.  A project without agents gives a built-in agent with no model (provider
 * NULL) and the default budgets, so model-free work and MODEL_UNAVAILABLE still flow. */
const SightAgentConfig *sight_project_resolve_agent (SightProject *self,
                                                     const char   *name,
                                                     GError      **error);

/* Whether a step of @kind with @agent is dispatched to the agent's custom executor:
 * act and assert are, when it has one (spec "Budgets"); waitFor and extract never. */
gboolean          sight_agent_config_dispatches (const SightAgentConfig *agent,
                                                 SightStepKind           kind);

/* The project's credentials (borrowed). */
SightSecrets     *sight_project_get_secrets      (SightProject *self);

/* Writes @cred into the project file at @path as credentials.<name> (purpose,
 * allowedOrigins, source; a VALUE source is refused: a value never goes to a
 * file), replacing a credential of that name, creating the file when it is
 * missing.  Every other member stays as written; credentials given as an
 * array stay an array.  The new text must load (sight_project_load) before
 * it replaces the old one, written to a temporary name and renamed, so a
 * failure leaves the file as it was.  Errors are INVALID_ARGUMENT. */
gboolean          sight_project_file_set_credential    (const char            *path,
                                                        const SightCredential *cred,
                                                        GError               **error);
/* Writes @cred in place of credentials.<@old_name> (NULL: @cred's own name), in
 * one write the same way: a rename.  A credential of @cred's name other than
 * @old_name is INVALID_ARGUMENT and leaves the file as it was. */
gboolean          sight_project_file_replace_credential (const char            *path,
                                                         const char            *old_name,
                                                         const SightCredential *cred,
                                                         GError               **error);
/* Removes credentials.<@name> the same way; TRUE when there was none. */
gboolean          sight_project_file_remove_credential (const char            *path,
                                                        const char            *name,
                                                        GError               **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightProject, sight_project_unref)

G_END_DECLS
