/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-store"

#include "config.h"

#include "sight-store.h"

#include "sight-error.h"
#include "sight-store-private.h"

/* -------------------------------------------------------------- migrations */

static const char * const migrations[] = {
  /* 1: the first schema. */
  "CREATE TABLE sessions ("
  "  id TEXT PRIMARY KEY,"
  "  title TEXT,"
  "  status TEXT NOT NULL DEFAULT 'open',"
  "  owner_pid INTEGER,"
  "  owner_start INTEGER,"
  "  created_at INTEGER NOT NULL,"
  "  ended_at INTEGER);"
  "CREATE TABLE runs ("
  "  id TEXT PRIMARY KEY,"
  "  session_id TEXT,"
  "  kind TEXT NOT NULL,"
  "  name TEXT,"
  "  url TEXT,"
  "  verdict TEXT NOT NULL DEFAULT 'running',"
  "  code TEXT,"
  "  explanation TEXT,"
  "  final_url TEXT,"
  "  answer TEXT,"
  "  notes TEXT,"
  "  owner_pid INTEGER,"
  "  owner_start INTEGER,"
  "  started_at INTEGER NOT NULL,"
  "  finished_at INTEGER);"
  "CREATE INDEX runs_started ON runs (started_at);"
  "CREATE TABLE steps ("
  "  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
  "  idx INTEGER NOT NULL,"
  "  kind TEXT NOT NULL,"
  "  label TEXT,"
  "  instruction TEXT,"
  "  options TEXT,"
  "  verdict TEXT NOT NULL DEFAULT 'running',"
  "  code TEXT,"
  "  explanation TEXT,"
  "  usage TEXT,"
  "  cache TEXT,"
  "  model_calls INTEGER NOT NULL DEFAULT 0,"
  "  actions INTEGER NOT NULL DEFAULT 0,"
  "  started_at INTEGER,"
  "  finished_at INTEGER,"
  "  PRIMARY KEY (run_id, idx)) WITHOUT ROWID;"
  "CREATE TABLE observations ("
  "  id INTEGER PRIMARY KEY,"
  "  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
  "  step_idx INTEGER,"
  "  phase TEXT NOT NULL,"
  "  url TEXT,"
  "  title TEXT,"
  "  tree BLOB,"
  "  tree_text BLOB,"
  "  screenshot BLOB,"
  "  screenshot_mime TEXT,"
  "  width INTEGER,"
  "  height INTEGER,"
  "  scale REAL,"
  "  created_at INTEGER NOT NULL);"
  "CREATE INDEX observations_run ON observations (run_id, step_idx);"
  "CREATE TABLE model_calls ("
  "  id INTEGER PRIMARY KEY,"
  "  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
  "  step_idx INTEGER,"
  "  provider TEXT,"
  "  model TEXT,"
  "  request BLOB,"
  "  response BLOB,"
  "  input_tokens INTEGER,"
  "  output_tokens INTEGER,"
  "  cost_micros INTEGER,"
  "  latency_ms INTEGER,"
  "  request_id TEXT,"
  "  created_at INTEGER NOT NULL);"
  "CREATE INDEX model_calls_run ON model_calls (run_id, step_idx);"
  "CREATE TABLE logs ("
  "  id INTEGER PRIMARY KEY,"
  "  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
  "  step_idx INTEGER,"
  "  kind TEXT NOT NULL,"
  "  level TEXT,"
  "  text TEXT,"
  "  url TEXT,"
  "  status INTEGER,"
  "  created_at INTEGER NOT NULL);"
  "CREATE INDEX logs_run ON logs (run_id);"
  "CREATE TABLE artifacts ("
  "  id INTEGER PRIMARY KEY,"
  "  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
  "  step_idx INTEGER,"
  "  name TEXT NOT NULL,"
  "  mime TEXT,"
  "  data BLOB,"
  "  created_at INTEGER NOT NULL);"
  "CREATE INDEX artifacts_run ON artifacts (run_id);",

  /* 2: per-step budgets and the acted element's box for reports; runs
   * filtered by verdict stay fast. */
  "ALTER TABLE steps ADD COLUMN budget TEXT;"
  "ALTER TABLE steps ADD COLUMN target_x REAL;"
  "ALTER TABLE steps ADD COLUMN target_y REAL;"
  "ALTER TABLE steps ADD COLUMN target_width REAL;"
  "ALTER TABLE steps ADD COLUMN target_height REAL;"
  "CREATE INDEX runs_verdict_started ON runs (verdict, started_at);",

  /* 3: Sightline's own cost estimate of a model call, kept apart from the
   * cost the provider reported. */
  "ALTER TABLE model_calls ADD COLUMN estimated_cost_micros INTEGER;",
};

G_STATIC_ASSERT (G_N_ELEMENTS (migrations) == SIGHT_STORE_SCHEMA_VERSION);

static int
user_version (sqlite3 *db)
{
  sqlite3_stmt *stmt = NULL;
  int v = -1;

  if (sqlite3_prepare_v2 (db, "PRAGMA user_version", -1, &stmt, NULL) != SQLITE_OK)
    return -1;
  if (sqlite3_step (stmt) == SQLITE_ROW)
    v = sqlite3_column_int (stmt, 0);
  sqlite3_finalize (stmt);
  return v;
}

gboolean
_sight_store_migrate (sqlite3  *db,
                      int       target_version,
                      GError  **error)
{
  g_return_val_if_fail (target_version <= SIGHT_STORE_SCHEMA_VERSION, FALSE);

  /* Already current (the usual case): no write lock, so a database another
   * program is writing to still opens. */
  if (user_version (db) == target_version)
    return TRUE;

  for (;;)
    {
      g_autofree char *bump = NULL;
      int version;
      gboolean ok;

      if (!_sight_store_begin_write (db, error))
        return FALSE;
      /* Read inside the write lock: another process may have migrated. */
      version = user_version (db);
      if (version < 0)
        {
          g_propagate_error (error, _sight_store_db_error (db, "reading the schema version"));
          sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
          return FALSE;
        }
      if (version > SIGHT_STORE_SCHEMA_VERSION)
        {
          sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                       "The run database has schema version %d, newer than this "
                       "Sightline understands (%d)", version, SIGHT_STORE_SCHEMA_VERSION);
          return FALSE;
        }
      if (version >= target_version)
        {
          sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
          return TRUE;
        }
      bump = g_strdup_printf ("PRAGMA user_version = %d", version + 1);
      ok = _sight_store_exec_sql (db, migrations[version], error)
           && _sight_store_exec_sql (db, bump, error);
      if (!_sight_store_commit_or_rollback (db, ok, error))
        return FALSE;
    }
}
