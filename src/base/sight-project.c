/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-project"

#include "config.h"

#include "sight-project.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "sight-error.h"
#include "sight-json-schema.h"
#include "sight-json.h"

struct _SightProject {
  gatomicrefcount   ref_count;
  char             *path;
  char             *base_dir;
  gint64            timeout_ms;
  gint64            action_timeout_ms;
  char             *default_agent;
  /* act's trace cache folder; NULL: off */
  char             *trace_cache_dir;
  /* origins a test's pages may reach beyond its start URL's; "*": any */
  GStrv             allowed_origins;
  /* name → SightAgentConfig */
  GHashTable       *agents;
  SightAgentConfig  builtin_agent;
  SightSecrets     *secrets;
};

G_DEFINE_BOXED_TYPE (SightProject, sight_project, sight_project_ref, sight_project_unref)

static void
executor_config_free (SightExecutorConfig *executor)
{
  g_strfreev (executor->argv);
  g_strfreev (executor->env);
  g_free (executor->cwd);
  g_free (executor);
}

static void
agent_config_clear (SightAgentConfig *agent)
{
  g_clear_pointer (&agent->executor, executor_config_free);
  g_free (agent->name);
  g_free (agent->provider);
  g_free (agent->model);
  g_free (agent->base_url);
  g_free (agent->api_key_env);
  g_clear_pointer (&agent->json, json_object_unref);
}

static void
agent_config_free (SightAgentConfig *agent)
{
  agent_config_clear (agent);
  g_free (agent);
}

static SightProject *
project_new (void)
{
  SightProject *self = g_new0 (SightProject, 1);

  g_atomic_ref_count_init (&self->ref_count);
  self->timeout_ms = SIGHT_DEFAULT_TIMEOUT_MS;
  self->agents = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                        (GDestroyNotify) agent_config_free);
  self->builtin_agent.name = g_strdup ("default");
  self->builtin_agent.vision = SIGHT_VISION_OFF;
  self->builtin_agent.max_steps = SIGHT_DEFAULT_MAX_STEPS;
  self->builtin_agent.max_model_calls = SIGHT_DEFAULT_MAX_MODEL_CALLS;
  self->secrets = sight_secrets_new ();
  return self;
}

SightProject *
sight_project_new_default (void)
{
  return project_new ();
}

SightProject *
sight_project_ref (SightProject *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

void
sight_project_unref (SightProject *self)
{
  g_return_if_fail (self != NULL);
  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;
  g_free (self->path);
  g_free (self->base_dir);
  g_free (self->default_agent);
  g_free (self->trace_cache_dir);
  g_strfreev (self->allowed_origins);
  g_hash_table_unref (self->agents);
  agent_config_clear (&self->builtin_agent);
  sight_secrets_unref (self->secrets);
  g_free (self);
}

/* ---- Parsing ------------------------------------------------------------- */

typedef struct {
  SightProject  *self;
  GError       **error;
} Ctx;

G_GNUC_PRINTF (3, 4)
static gboolean
bad (Ctx        *c,
     const char *path,
     const char *format,
     ...)
{
  g_autofree char *reason = NULL;
  va_list args;

  va_start (args, format);
  reason = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (c->error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "%s %s: %s",
               c->self->path ? c->self->path : SIGHT_PROJECT_FILE_NAME,
               *path ? path : "(root)", reason);
  return FALSE;
}

static gboolean
is_string (JsonNode *node)
{
  return JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING;
}

/* Walking the members of an object of the file in order, each with its JSON
 * pointer, which every error about the member names. */
typedef struct {
  JsonObjectIter  iter;
  const char     *path;
  char           *pointer;
} Members;

static void
members_clear (Members *m)
{
  g_clear_pointer (&m->pointer, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Members, members_clear)

/* Starts walking @node at @path; when it is no object, INVALID_ARGUMENT at
 * @path saying what it @must_be. */
static gboolean
members_init (Ctx        *c,
              Members    *m,
              JsonNode   *node,
              const char *path,
              const char *must_be)
{
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return bad (c, path, "%s", must_be);
  json_object_iter_init_ordered (&m->iter, json_node_get_object (node));
  m->path = path;
  return TRUE;
}

/* The next member: its name, its value and its pointer (alive until the next
 * call). */
static gboolean
members_next (Members     *m,
              const char **out_key,
              JsonNode   **out_value,
              const char **out_pointer)
{
  g_clear_pointer (&m->pointer, g_free);
  if (!json_object_iter_next_ordered (&m->iter, out_key, out_value))
    return FALSE;
  m->pointer = sight_json_pointer_append (m->path, *out_key);
  *out_pointer = m->pointer;
  return TRUE;
}

static gboolean
get_string (Ctx         *c,
            JsonNode    *node,
            const char  *path,
            char       **out)
{
  if (!is_string (node) || *json_node_get_string (node) == '\0')
    return bad (c, path, "must be a non-empty string");
  g_free (*out);
  *out = g_strdup (json_node_get_string (node));
  return TRUE;
}

static gboolean
get_positive (Ctx        *c,
              JsonNode   *node,
              const char *path,
              gint64     *out)
{
  if (JSON_NODE_HOLDS_VALUE (node))
    {
      GType t = json_node_get_value_type (node);

      if (t == G_TYPE_INT64 && json_node_get_int (node) >= 1 &&
          json_node_get_int (node) <= SIGHT_MAX_SAFE_INTEGER)
        {
          *out = json_node_get_int (node);
          return TRUE;
        }
      if (t == G_TYPE_DOUBLE)
        {
          double d = json_node_get_double (node);

          if (isfinite (d) && floor (d) == d && d >= 1 && d <= (double) SIGHT_MAX_SAFE_INTEGER)
            {
              *out = (gint64) d;
              return TRUE;
            }
        }
    }
  return bad (c, path, "must be a positive integer");
}

static gboolean
is_env_name (const char *name)
{
  if (!(g_ascii_isalpha (name[0]) || name[0] == '_'))
    return FALSE;
  for (const char *p = name; *p; p++)
    if (!(g_ascii_isalnum (*p) || *p == '_'))
      return FALSE;
  return TRUE;
}

/* The "executor" of an agent: {"command": [...], "env": {...}}, nothing else. */
static gboolean
parse_executor (Ctx                 *c,
                JsonNode            *node,
                const char          *path,
                SightExecutorConfig *executor)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) env = g_ptr_array_new_with_free_func (g_free);
  gboolean have_command = FALSE;
  g_auto(Members) members = { 0 };
  const char *key, *sub;
  JsonNode *value;

  if (!members_init (c, &members, node, path, "must be an object with a command (an array of "
                     "strings) and optionally env"))
    return FALSE;
  while (members_next (&members, &key, &value, &sub))
    {
      if (g_str_equal (key, "command"))
        {
          JsonArray *array;

          if (!JSON_NODE_HOLDS_ARRAY (value) || json_array_get_length (json_node_get_array (value)) == 0)
            return bad (c, sub, "must be a non-empty array of strings: the program and its "
                        "arguments");
          array = json_node_get_array (value);
          for (guint i = 0; i < json_array_get_length (array); i++)
            {
              g_autofree char *asub = g_strdup_printf ("%s/%u", sub, i);
              char *arg = NULL;

              if (!get_string (c, json_array_get_element (array, i), asub, &arg))
                return FALSE;
              g_ptr_array_add (argv, arg);
            }
          have_command = TRUE;
        }
      else if (g_str_equal (key, "env"))
        {
          g_auto(Members) vars = { 0 };
          const char *name, *esub;
          JsonNode *var;

          if (!members_init (c, &vars, value, sub, "must be an object of variable name → string"))
            return FALSE;
          while (members_next (&vars, &name, &var, &esub))
            {
              if (!is_env_name (name))
                return bad (c, esub, "must be an environment variable name");
              if (!is_string (var))
                return bad (c, esub, "must be a string");
              g_ptr_array_add (env, g_strdup_printf ("%s=%s", name, json_node_get_string (var)));
            }
        }
      else
        return bad (c, sub, "unknown member (an executor takes command, env)");
    }
  if (!have_command)
    {
      g_autofree char *pointer = sight_json_pointer_append (path, "command");
      return bad (c, pointer, "an executor needs a command (an array of strings)");
    }

  /* A relative program with a slash is the project's own. */
  if (!g_path_is_absolute (argv->pdata[0]) && strchr (argv->pdata[0], '/') != NULL &&
      c->self->base_dir != NULL)
    {
      char *program = g_build_filename (c->self->base_dir, argv->pdata[0], NULL);

      g_free (argv->pdata[0]);
      argv->pdata[0] = program;
    }
  g_ptr_array_add (argv, NULL);
  g_ptr_array_add (env, NULL);
  executor->argv = (GStrv) g_ptr_array_free (g_steal_pointer (&argv), FALSE);
  executor->env = (GStrv) g_ptr_array_free (g_steal_pointer (&env), FALSE);
  executor->cwd = g_strdup (c->self->base_dir);
  return TRUE;
}

static gboolean
parse_agent (Ctx        *c,
             const char *name,
             JsonNode   *node,
             const char *path)
{
  g_autoptr(GError) vision_error = NULL;
  SightAgentConfig *agent;
  g_auto(Members) members = { 0 };
  const char *key, *sub;
  JsonNode *value;
  g_autofree char *model = NULL;
  g_autofree char *provider = NULL;

  if (!members_init (c, &members, node, path, "an agent must be an object"))
    return FALSE;

  agent = g_new0 (SightAgentConfig, 1);
  agent->name = g_strdup (name);
  agent->vision = SIGHT_VISION_OFF;
  agent->max_steps = SIGHT_DEFAULT_MAX_STEPS;
  agent->max_model_calls = SIGHT_DEFAULT_MAX_MODEL_CALLS;
  agent->json = json_object_ref (json_node_get_object (node));
  g_hash_table_insert (c->self->agents, agent->name, agent);

  while (members_next (&members, &key, &value, &sub))
    {
      if (g_str_equal (key, "model"))
        {
          if (!get_string (c, value, sub, &model))
            return FALSE;
        }
      else if (g_str_equal (key, "provider"))
        {
          if (!get_string (c, value, sub, &provider))
            return FALSE;
        }
      else if (g_str_equal (key, "baseUrl"))
        {
          g_autoptr(GUri) uri = NULL;
          const char *scheme;

          if (!get_string (c, value, sub, &agent->base_url))
            return FALSE;
          uri = g_uri_parse (agent->base_url, G_URI_FLAGS_NONE, NULL);
          scheme = uri ? g_uri_get_scheme (uri) : NULL;
          if (uri == NULL || g_uri_get_host (uri) == NULL ||
              !(g_ascii_strcasecmp (scheme, "http") == 0 || g_ascii_strcasecmp (scheme, "https") == 0))
            return bad (c, sub, "must be an http or https URL");
        }
      else if (g_str_equal (key, "apiKeyEnv"))
        {
          if (!get_string (c, value, sub, &agent->api_key_env))
            return FALSE;
          if (!is_env_name (agent->api_key_env))
            return bad (c, sub, "must be an environment variable name");
        }
      else if (g_str_equal (key, "vision"))
        {
          if (!sight_vision_mode_from_json (value, "vision", &agent->vision, &vision_error))
            return bad (c, sub, "must be false, true or \"only\"");
        }
      else if (g_str_equal (key, "maxSteps"))
        {
          if (!get_positive (c, value, sub, &agent->max_steps))
            return FALSE;
        }
      else if (g_str_equal (key, "maxModelCalls"))
        {
          if (!get_positive (c, value, sub, &agent->max_model_calls))
            return FALSE;
        }
      else if (g_str_equal (key, "maxTokens"))
        {
          if (!get_positive (c, value, sub, &agent->max_tokens))
            return FALSE;
          if (agent->max_tokens > G_MAXINT32)
            return bad (c, sub, "must be at most %d", G_MAXINT32);
        }
      else if (g_str_equal (key, "price") || g_str_equal (key, "prices"))
        {
          if (!JSON_NODE_HOLDS_OBJECT (value))
            return bad (c, sub, "must be an object");
        }
      else if (g_str_equal (key, "executor"))
        {
          agent->executor = g_new0 (SightExecutorConfig, 1);
          if (!parse_executor (c, value, sub, agent->executor))
            return FALSE;
        }
      else if (g_str_equal (key, "apiKey"))
        return bad (c, sub, "an API key does not belong in the project file; name the "
                    "environment variable that holds it with apiKeyEnv");
      else if (!g_str_equal (key, "description"))
        return bad (c, sub, "unknown member (an agent takes model, provider, baseUrl, "
                    "apiKeyEnv, vision, maxSteps, maxModelCalls, maxTokens, price, prices, executor)");
    }

  /* An executor carries out act and assert itself: no model needed. */
  if (model == NULL && provider == NULL && agent->executor != NULL)
    return TRUE;
  if (model == NULL)
    {
      g_autofree char *pointer = sight_json_pointer_append (path, "model");
      return bad (c, pointer, "an agent needs a model (\"provider:model\")");
    }
  if (provider != NULL)
    {
      agent->provider = g_steal_pointer (&provider);
      agent->model = g_steal_pointer (&model);
    }
  else
    {
      const char *colon = strchr (model, ':');

      if (colon == NULL || colon == model || colon[1] == '\0')
        {
          g_autofree char *pointer = sight_json_pointer_append (path, "model");
          return bad (c, pointer, "must be \"provider:model\", e.g. \"openai:gpt-4.1-mini\"");
        }
      agent->provider = g_strndup (model, colon - model);
      agent->model = g_strdup (colon + 1);
    }
  for (const char *p = agent->provider; *p; p++)
    if (!(g_ascii_islower (*p) || g_ascii_isdigit (*p) || *p == '-' || *p == '_' || *p == '.'))
      {
        g_autofree char *pointer = sight_json_pointer_append (path, "model");
        return bad (c, pointer, "the provider must be a lower-case name, e.g. openai or anthropic");
      }
  return TRUE;
}

static gboolean
parse_source (Ctx             *c,
              SightCredential *cred,
              JsonNode        *node,
              const char      *path)
{
  JsonObject *obj;
  const char *kind;
  JsonNode *value;
  g_autofree char *sub = NULL;

  if (!JSON_NODE_HOLDS_OBJECT (node) || json_object_get_size (json_node_get_object (node)) != 1)
    return bad (c, path, "must be exactly one of {\"env\": VAR}, {\"file\": PATH} or "
                "{\"keyring\": {attribute: value}}");
  obj = json_node_get_object (node);
  {
    JsonObjectIter iter;

    json_object_iter_init_ordered (&iter, obj);
    json_object_iter_next_ordered (&iter, &kind, &value);
  }
  sub = sight_json_pointer_append (path, kind);

  if (g_str_equal (kind, "env"))
    {
      cred->source = SIGHT_CREDENTIAL_SOURCE_ENV;
      if (!get_string (c, value, sub, &cred->source_arg))
        return FALSE;
      if (!is_env_name (cred->source_arg))
        return bad (c, sub, "must be an environment variable name");
      return TRUE;
    }
  if (g_str_equal (kind, "file"))
    {
      g_autofree char *file = NULL;

      cred->source = SIGHT_CREDENTIAL_SOURCE_FILE;
      if (!get_string (c, value, sub, &file))
        return FALSE;
      if (g_path_is_absolute (file))
        cred->source_arg = g_steal_pointer (&file);
      else
        cred->source_arg = g_build_filename (c->self->base_dir ? c->self->base_dir : ".",
                                             file, NULL);
      return TRUE;
    }
  if (g_str_equal (kind, "keyring"))
    {
      JsonObjectIter iter;
      const char *key;
      JsonNode *attr;

      cred->source = SIGHT_CREDENTIAL_SOURCE_KEYRING;
      if (!JSON_NODE_HOLDS_OBJECT (value) || json_object_get_size (json_node_get_object (value)) == 0)
        return bad (c, sub, "must be a non-empty object of attribute → string");
      cred->keyring_attributes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
      json_object_iter_init_ordered (&iter, json_node_get_object (value));
      while (json_object_iter_next_ordered (&iter, &key, &attr))
        {
          g_autofree char *asub = sight_json_pointer_append (sub, key);

          if (!is_string (attr))
            return bad (c, asub, "must be a string");
          g_hash_table_insert (cred->keyring_attributes, g_strdup (key),
                               g_strdup (json_node_get_string (attr)));
        }
      return TRUE;
    }
  return bad (c, sub, "unknown source (use env, file or keyring)");
}

/* An array of origins, normalized into @origins. */
static gboolean
parse_origins (Ctx        *c,
               JsonNode   *value,
               const char *sub,
               GPtrArray  *origins)
{
  JsonArray *arr;

  if (!JSON_NODE_HOLDS_ARRAY (value))
    return bad (c, sub, "must be an array of origins");
  arr = json_node_get_array (value);
  for (guint i = 0; i < json_array_get_length (arr); i++)
    {
      JsonNode *o = json_array_get_element (arr, i);
      g_autofree char *osub = g_strdup_printf ("%s/%u", sub, i);
      g_autofree char *origin = NULL;

      if (!is_string (o) || (origin = sight_origin_normalize (json_node_get_string (o))) == NULL)
        {
          g_autoptr(GUri) uri = is_string (o) ? g_uri_parse (json_node_get_string (o),
                                                             G_URI_FLAGS_NON_DNS, NULL) : NULL;

          if (uri != NULL && g_uri_get_host (uri) != NULL && *g_uri_get_host (uri) != '\0')
            return bad (c, osub, "the host has no ASCII (IDNA) form (each label may be at "
                        "most 63 characters once encoded)");
          return bad (c, osub, "must be an origin such as \"https://app.example.test\"");
        }
      g_ptr_array_add (origins, g_steal_pointer (&origin));
    }
  return TRUE;
}

static gboolean
parse_credential (Ctx        *c,
                  const char *name,
                  JsonNode   *node,
                  const char *path,
                  gboolean    name_inside)
{
  g_autoptr(SightCredential) cred = g_new0 (SightCredential, 1);
  g_autoptr(GPtrArray) origins = g_ptr_array_new_with_free_func (g_free);
  gboolean have_source = FALSE;
  JsonObjectIter iter;
  const char *key;
  JsonNode *value;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return bad (c, path, "a credential must be an object");
  cred->name = g_strdup (name);

  json_object_iter_init_ordered (&iter, json_node_get_object (node));
  while (json_object_iter_next_ordered (&iter, &key, &value))
    {
      g_autofree char *sub = sight_json_pointer_append (path, key);

      if (g_str_equal (key, "name") && name_inside)
        {
          if (!get_string (c, value, sub, &cred->name))
            return FALSE;
        }
      else if (g_str_equal (key, "purpose"))
        {
          if (!get_string (c, value, sub, &cred->purpose))
            return FALSE;
          if (!sight_credential_purpose_is_valid (cred->purpose))
            return bad (c, sub, "must be one of username, email, password, new-password, "
                        "one-time-code");
        }
      else if (g_str_equal (key, "allowedOrigins"))
        {
          if (!parse_origins (c, value, sub, origins))
            return FALSE;
        }
      else if (g_str_equal (key, "source"))
        {
          if (!parse_source (c, cred, value, sub))
            return FALSE;
          have_source = TRUE;
        }
      else if (!g_str_equal (key, "description"))
        return bad (c, sub, "unknown member (a credential takes purpose, allowedOrigins, "
                    "source)");
    }

  if (cred->name == NULL)
    return bad (c, path, "a credential needs a name");
  if (cred->purpose == NULL)
    return bad (c, path, "credential %s needs a purpose", cred->name);
  if (!have_source)
    return bad (c, path, "credential %s needs a source", cred->name);
  if (sight_secrets_lookup (c->self->secrets, cred->name) != NULL)
    return bad (c, path, "credential %s is declared twice", cred->name);
  g_ptr_array_add (origins, NULL);
  cred->allowed_origins = (GStrv) g_ptr_array_free (g_steal_pointer (&origins), FALSE);
  sight_secrets_add (c->self->secrets, cred);
  return TRUE;
}

static gboolean
parse_defaults (Ctx        *c,
                JsonNode   *node,
                const char *path)
{
  g_auto(Members) members = { 0 };
  const char *key, *sub;
  JsonNode *value;

  if (!members_init (c, &members, node, path, "must be an object"))
    return FALSE;
  while (members_next (&members, &key, &value, &sub))
    {
      if (g_str_equal (key, "timeout"))
        {
          if (!get_positive (c, value, sub, &c->self->timeout_ms))
            return FALSE;
        }
      else if (g_str_equal (key, "actionTimeout"))
        {
          if (!get_positive (c, value, sub, &c->self->action_timeout_ms))
            return FALSE;
        }
      else if (g_str_equal (key, "agent"))
        {
          if (!get_string (c, value, sub, &c->self->default_agent))
            return FALSE;
        }
      else
        return bad (c, sub, "unknown member (defaults take timeout, actionTimeout, agent)");
    }
  return TRUE;
}

static gboolean
parse_root (Ctx      *c,
            JsonNode *root)
{
  g_auto(Members) members = { 0 };
  const char *key, *sub;
  JsonNode *value;

  if (!members_init (c, &members, root, "", "the project file must hold an object"))
    return FALSE;
  while (members_next (&members, &key, &value, &sub))
    {
      if (g_str_equal (key, "agents"))
        {
          g_auto(Members) agents = { 0 };
          const char *name, *asub;
          JsonNode *agent;

          if (!members_init (c, &agents, value, sub, "must be an object of name → agent"))
            return FALSE;
          while (members_next (&agents, &name, &agent, &asub))
            {
              if (*name == '\0')
                return bad (c, asub, "an agent needs a name");
              if (!parse_agent (c, name, agent, asub))
                return FALSE;
            }
        }
      else if (g_str_equal (key, "credentials"))
        {
          if (JSON_NODE_HOLDS_OBJECT (value))
            {
              JsonObjectIter citer;
              const char *name;
              JsonNode *cred;

              json_object_iter_init_ordered (&citer, json_node_get_object (value));
              while (json_object_iter_next_ordered (&citer, &name, &cred))
                {
                  g_autofree char *csub = sight_json_pointer_append (sub, name);

                  if (*name == '\0')
                    return bad (c, csub, "a credential needs a name");
                  if (!parse_credential (c, name, cred, csub, FALSE))
                    return FALSE;
                }
            }
          else if (JSON_NODE_HOLDS_ARRAY (value))
            {
              JsonArray *arr = json_node_get_array (value);

              for (guint i = 0; i < json_array_get_length (arr); i++)
                {
                  g_autofree char *csub = g_strdup_printf ("%s/%u", sub, i);

                  if (!parse_credential (c, NULL, json_array_get_element (arr, i), csub, TRUE))
                    return FALSE;
                }
            }
          else
            return bad (c, sub, "must be an object of name → credential, or an array");
        }
      else if (g_str_equal (key, "defaults"))
        {
          if (!parse_defaults (c, value, sub))
            return FALSE;
        }
      else if (g_str_equal (key, "traceCache"))
        {
          g_clear_pointer (&c->self->trace_cache_dir, g_free);
          if (JSON_NODE_HOLDS_VALUE (value) && json_node_get_value_type (value) == G_TYPE_BOOLEAN)
            {
              if (json_node_get_boolean (value))
                c->self->trace_cache_dir = g_build_filename (g_get_user_cache_dir (), "sightline",
                                                             "traces", NULL);
            }
          else if (JSON_NODE_HOLDS_VALUE (value) &&
                   json_node_get_value_type (value) == G_TYPE_STRING &&
                   *json_node_get_string (value) != '\0')
            c->self->trace_cache_dir =
              g_canonicalize_filename (json_node_get_string (value),
                                       c->self->base_dir ? c->self->base_dir : NULL);
          else
            return bad (c, sub, "must be true, false or a folder");
        }
      else if (g_str_equal (key, "allowedOrigins"))
        {
          g_autoptr(GPtrArray) origins = g_ptr_array_new_with_free_func (g_free);

          g_clear_pointer (&c->self->allowed_origins, g_strfreev);
          if (JSON_NODE_HOLDS_VALUE (value) && json_node_get_value_type (value) == G_TYPE_STRING &&
              g_str_equal (json_node_get_string (value), "*"))
            g_ptr_array_add (origins, g_strdup ("*"));
          else if (!parse_origins (c, value, sub, origins))
            return FALSE;
          g_ptr_array_add (origins, NULL);
          c->self->allowed_origins = (GStrv) g_ptr_array_free (g_steal_pointer (&origins), FALSE);
        }
      else if (!g_str_equal (key, "$schema") && !g_str_equal (key, "$comment"))
        return bad (c, sub, "unknown member (a project takes agents, credentials, defaults, "
                    "traceCache, allowedOrigins)");
    }

  if (c->self->default_agent != NULL &&
      !g_hash_table_contains (c->self->agents, c->self->default_agent))
    return bad (c, "/defaults/agent", "no agent named %s", c->self->default_agent);
  return TRUE;
}

static SightProject *
parse_project (const char  *data,
               gssize       length,
               const char  *path,
               const char  *base_dir,
               GError     **error)
{
  g_autoptr(SightProject) self = project_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) parse_error = NULL;
  Ctx c = { NULL, error };

  self->path = g_strdup (path);
  self->base_dir = g_strdup (base_dir);
  c.self = self;

  root = sight_json_parse (data, length, SIGHT_JSON_MAX_DEPTH, &parse_error);
  if (root == NULL)
    {
      const char *name = path ? path : SIGHT_PROJECT_FILE_NAME;

      /* json-glib writes "<data>:LINE:COLUMN: Parse error: …". */
      if (g_str_has_prefix (parse_error->message, "<data>:"))
        g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "%s%s", name,
                     parse_error->message + strlen ("<data>"));
      else
        g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT, "%s: %s", name,
                     parse_error->message);
      return NULL;
    }
  if (!parse_root (&c, root))
    return NULL;
  return g_steal_pointer (&self);
}

SightProject *
sight_project_new_from_data (const char  *data,
                             gssize       length,
                             const char  *base_dir,
                             GError     **error)
{
  g_return_val_if_fail (data != NULL, NULL);
  return parse_project (data, length, NULL, base_dir, error);
}

SightProject *
sight_project_load (const char  *path,
                    GError     **error)
{
  g_autoptr(GError) local = NULL;
  g_autofree char *contents = NULL;
  g_autofree char *dir = NULL;
  gsize len;

  g_return_val_if_fail (path != NULL, NULL);

  if (!g_file_get_contents (path, &contents, &len, &local))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "cannot read the project file: %s", local->message);
      return NULL;
    }
  dir = g_path_get_dirname (path);
  return parse_project (contents, len, path, dir, error);
}

char *
sight_project_find (const char *start)
{
  g_autoptr(GFile) dir = NULL;

  g_return_val_if_fail (start != NULL, NULL);

  dir = g_file_new_for_path (start);
  if (!g_file_test (start, G_FILE_TEST_IS_DIR))
    {
      GFile *parent = g_file_get_parent (dir);

      if (parent == NULL)
        return NULL;
      g_set_object (&dir, parent);
      g_object_unref (parent);
    }

  while (dir != NULL)
    {
      g_autoptr(GFile) candidate = g_file_get_child (dir, SIGHT_PROJECT_FILE_NAME);
      g_autofree char *path = g_file_get_path (candidate);
      GFile *parent;

      if (path != NULL && g_file_test (path, G_FILE_TEST_IS_REGULAR))
        return g_steal_pointer (&path);
      parent = g_file_get_parent (dir);
      g_object_unref (dir);
      dir = parent;
    }
  return NULL;
}

SightProject *
sight_project_load_for (const char  *start,
                        GError     **error)
{
  g_autofree char *path = sight_project_find (start);

  if (path == NULL)
    return sight_project_new_default ();
  return sight_project_load (path, error);
}

const char *
sight_project_get_path (SightProject *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->path;
}

gint64
sight_project_get_timeout (SightProject *self)
{
  g_return_val_if_fail (self != NULL, SIGHT_DEFAULT_TIMEOUT_MS);
  return self->timeout_ms;
}

const char *
sight_project_get_trace_cache_dir (SightProject *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->trace_cache_dir;
}

const char * const *
sight_project_get_allowed_origins (SightProject *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return (const char * const *) self->allowed_origins;
}

gint64
sight_project_get_action_timeout (SightProject *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->action_timeout_ms;
}

gint64
sight_project_get_judgment_budget (SightProject *self)
{
  g_return_val_if_fail (self != NULL, SIGHT_JUDGMENT_BUDGET_MIN_MS);
  return MAX (SIGHT_JUDGMENT_BUDGET_MIN_MS, self->action_timeout_ms);
}

static int
compare_names (gconstpointer a,
               gconstpointer b,
               gpointer      user_data)
{
  return strcmp (*(char **) a, *(char **) b);
}

GStrv
sight_project_list_agents (SightProject *self)
{
  g_autofree const char **keys = NULL;
  GStrv names;
  guint n;

  g_return_val_if_fail (self != NULL, NULL);

  keys = (const char **) g_hash_table_get_keys_as_array (self->agents, &n);
  names = g_new0 (char *, n + 1);
  for (guint i = 0; i < n; i++)
    names[i] = g_strdup (keys[i]);
  g_qsort_with_data (names, n, sizeof (char *), compare_names, NULL);
  return names;
}

const SightAgentConfig *
sight_project_get_agent (SightProject *self,
                         const char   *name)
{
  g_return_val_if_fail (self != NULL, NULL);
  return name ? g_hash_table_lookup (self->agents, name) : NULL;
}

const SightAgentConfig *
sight_project_resolve_agent (SightProject  *self,
                             const char    *name,
                             GError       **error)
{
  const SightAgentConfig *agent;

  g_return_val_if_fail (self != NULL, NULL);

  if (name != NULL)
    {
      agent = sight_project_get_agent (self, name);
      if (agent == NULL)
        {
          g_autofree char *safe = sight_text_sanitize (name, 64);

          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "no agent named %s in %s", safe,
                       self->path ? self->path : "the project (no " SIGHT_PROJECT_FILE_NAME ")");
        }
      return agent;
    }
  if (self->default_agent != NULL)
    return sight_project_get_agent (self, self->default_agent);
  if ((agent = sight_project_get_agent (self, "default")) != NULL)
    return agent;
  if (g_hash_table_size (self->agents) == 1)
    {
      GHashTableIter iter;
      gpointer value;

      g_hash_table_iter_init (&iter, self->agents);
      g_hash_table_iter_next (&iter, NULL, &value);
      return value;
    }
  if (g_hash_table_size (self->agents) > 1)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "several agents and none chosen: name one with the agent option, "
                   "defaults.agent, or an agent called \"default\"");
      return NULL;
    }
  return &self->builtin_agent;
}

gboolean
sight_agent_config_dispatches (const SightAgentConfig *agent,
                               SightStepKind           kind)
{
  return agent != NULL && agent->executor != NULL &&
         (kind == SIGHT_STEP_ACT || kind == SIGHT_STEP_ASSERT);
}

SightSecrets *
sight_project_get_secrets (SightProject *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->secrets;
}

/* Writing credentials into the project file ------------------------------ */

/* @cred as a member of "credentials": with its "name" first when @named (the
 * array form). */
static JsonNode *
credential_to_json (const SightCredential *cred,
                    gboolean               named)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  json_builder_begin_object (builder);
  if (named)
    {
      json_builder_set_member_name (builder, "name");
      json_builder_add_string_value (builder, cred->name);
    }
  json_builder_set_member_name (builder, "purpose");
  json_builder_add_string_value (builder, cred->purpose);
  json_builder_set_member_name (builder, "allowedOrigins");
  json_builder_begin_array (builder);
  for (guint i = 0; cred->allowed_origins != NULL && cred->allowed_origins[i] != NULL; i++)
    json_builder_add_string_value (builder, cred->allowed_origins[i]);
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "source");
  json_builder_begin_object (builder);
  switch (cred->source)
    {
    case SIGHT_CREDENTIAL_SOURCE_ENV:
      json_builder_set_member_name (builder, "env");
      json_builder_add_string_value (builder, cred->source_arg);
      break;
    case SIGHT_CREDENTIAL_SOURCE_FILE:
      json_builder_set_member_name (builder, "file");
      json_builder_add_string_value (builder, cred->source_arg);
      break;
    case SIGHT_CREDENTIAL_SOURCE_KEYRING:
      {
        g_autofree const char **keys = NULL;
        guint n = 0;

        json_builder_set_member_name (builder, "keyring");
        json_builder_begin_object (builder);
        if (cred->keyring_attributes != NULL)
          keys = (const char **) g_hash_table_get_keys_as_array (cred->keyring_attributes, &n);
        /* sorted, so that writing the same credential twice writes the same text */
        g_qsort_with_data (keys, n, sizeof (char *), compare_names, NULL);
        for (guint i = 0; i < n; i++)
          {
            json_builder_set_member_name (builder, keys[i]);
            json_builder_add_string_value (builder,
                                           g_hash_table_lookup (cred->keyring_attributes,
                                                                keys[i]));
          }
        json_builder_end_object (builder);
        break;
      }
    case SIGHT_CREDENTIAL_SOURCE_VALUE:
    default:
      g_assert_not_reached ();
    }
  json_builder_end_object (builder);
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

/* The file's root object (a new, empty one when the file is missing). */
static JsonNode *
read_project_root (const char  *path,
                   GError     **error)
{
  g_autoptr(GError) local = NULL;
  g_autofree char *contents = NULL;
  g_autoptr(JsonNode) root = NULL;
  gsize len = 0;

  if (!g_file_get_contents (path, &contents, &len, &local))
    {
      if (g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        {
          root = json_node_new (JSON_NODE_OBJECT);
          json_node_take_object (root, json_object_new ());
          return g_steal_pointer (&root);
        }
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "cannot read the project file: %s", local->message);
      return NULL;
    }
  /* Only a file that loads is rewritten: a broken one is the person's to mend. */
  {
    g_autoptr(SightProject) check = sight_project_load (path, error);

    if (check == NULL)
      return NULL;
  }
  root = sight_json_parse (contents, len, SIGHT_JSON_MAX_DEPTH, error);
  return g_steal_pointer (&root);
}

/* Replaces the credential @name in @root by @cred (which may have another
 * name: a rename), in its place, or removes it (@cred NULL).  A @cred with
 * no credential @name to replace goes last. */
static void
edit_credentials (JsonObject            *root,
                  const char            *name,
                  const SightCredential *cred)
{
  JsonNode *credentials = json_object_get_member (root, "credentials");

  if (credentials != NULL && JSON_NODE_HOLDS_ARRAY (credentials))
    {
      JsonArray *array = json_node_get_array (credentials);
      g_autoptr(JsonArray) edited = json_array_new ();
      gboolean replaced = FALSE;

      for (guint i = 0; i < json_array_get_length (array); i++)
        {
          JsonNode *element = json_array_get_element (array, i);
          JsonObject *entry = JSON_NODE_HOLDS_OBJECT (element) ? json_node_get_object (element)
                                                               : NULL;

          if (entry == NULL ||
              g_strcmp0 (json_object_get_string_member_with_default (entry, "name", NULL),
                         name) != 0)
            json_array_add_element (edited, json_node_copy (element));
          else if (cred != NULL && !replaced)
            {
              json_array_add_element (edited, credential_to_json (cred, TRUE));
              replaced = TRUE;
            }
        }
      if (cred != NULL && !replaced)
        json_array_add_element (edited, credential_to_json (cred, TRUE));
      json_object_set_array_member (root, "credentials", g_steal_pointer (&edited));
      return;
    }

  if (credentials == NULL || !JSON_NODE_HOLDS_OBJECT (credentials))
    {
      if (cred == NULL)
        return;
      json_object_set_object_member (root, "credentials", json_object_new ());
    }
  {
    JsonObject *object = json_object_get_object_member (root, "credentials");
    g_autoptr(JsonObject) edited = json_object_new ();
    gboolean replaced = FALSE;
    JsonObjectIter iter;
    const char *key;
    JsonNode *value;

    json_object_iter_init_ordered (&iter, object);
    while (json_object_iter_next_ordered (&iter, &key, &value))
      {
        if (!g_str_equal (key, name))
          json_object_set_member (edited, key, json_node_copy (value));
        else if (cred != NULL)
          {
            json_object_set_member (edited, cred->name, credential_to_json (cred, FALSE));
            replaced = TRUE;
          }
      }
    if (cred != NULL && !replaced)
      json_object_set_member (edited, cred->name, credential_to_json (cred, FALSE));
    json_object_set_object_member (root, "credentials", g_steal_pointer (&edited));
  }
}

static gboolean
write_project_root (const char  *path,
                    JsonNode    *root,
                    GError     **error)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(SightProject) check = NULL;
  g_autoptr(GError) local = NULL;
  g_autofree char *text = NULL;
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *with_newline = NULL;

  json_generator_set_root (generator, root);
  json_generator_set_pretty (generator, TRUE);
  json_generator_set_indent (generator, 2);
  text = json_generator_to_data (generator, NULL);
  check = parse_project (text, -1, path, dir, error);
  if (check == NULL)
    return FALSE;
  with_newline = g_strconcat (text, "\n", NULL);
  if (!g_file_set_contents_full (path, with_newline, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0644,
                                 &local))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "cannot write the project file: %s", local->message);
      return FALSE;
    }
  return TRUE;
}

gboolean
sight_project_file_set_credential (const char            *path,
                                   const SightCredential *cred,
                                   GError               **error)
{
  g_return_val_if_fail (cred != NULL, FALSE);
  return sight_project_file_replace_credential (path, cred->name, cred, error);
}

gboolean
sight_project_file_replace_credential (const char            *path,
                                       const char            *old_name,
                                       const SightCredential *cred,
                                       GError               **error)
{
  g_autoptr(JsonNode) root = NULL;

  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (cred != NULL, FALSE);

  if (cred->name == NULL || *cred->name == '\0')
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                           "a credential needs a name");
      return FALSE;
    }
  if (cred->source == SIGHT_CREDENTIAL_SOURCE_VALUE)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "credential %s: a value is never written to the project file; use a "
                   "keyring, env or file source", cred->name);
      return FALSE;
    }
  if (old_name == NULL)
    old_name = cred->name;
  root = read_project_root (path, error);
  if (root == NULL)
    return FALSE;
  if (!JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                           "the project file is not a JSON object");
      return FALSE;
    }
  if (!g_str_equal (old_name, cred->name) && g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_autoptr(SightProject) current = sight_project_load (path, error);

      if (current == NULL)
        return FALSE;
      if (sight_secrets_lookup (current->secrets, cred->name) != NULL)
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "a credential named %s already exists", cred->name);
          return FALSE;
        }
    }
  edit_credentials (json_node_get_object (root), old_name, cred);
  return write_project_root (path, root, error);
}

gboolean
sight_project_file_remove_credential (const char  *path,
                                      const char  *name,
                                      GError     **error)
{
  g_autoptr(JsonNode) root = NULL;

  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (name != NULL, FALSE);

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    return TRUE;
  root = read_project_root (path, error);
  if (root == NULL)
    return FALSE;
  if (!JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                           "the project file is not a JSON object");
      return FALSE;
    }
  edit_credentials (json_node_get_object (root), name, NULL);
  return write_project_root (path, root, error);
}
