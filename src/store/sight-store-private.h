/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <sqlite3.h>

#include "sight-store.h"

G_BEGIN_DECLS

/* The store, split per table over one connection and its DB thread:
 * sight-store.c (the core: opening, the DB thread and its job queue,
 * statements), sight-store-migrate.c, sight-store-redact.c,
 * sight-store-records.c, and one file per table group: sight-store-sessions.c,
 * sight-store-runs.c, sight-store-steps.c, sight-store-evidence.c
 * (observations, model calls, logs, artifacts). */

/* How the outcome of a run a write failed for begins. */
#define UNSTORED "The run could not be stored: "

/* Everything the DB thread touches. It outlives the GObject when the last
 * reference is dropped on the DB thread itself (a GTask completing there). */
typedef struct {
  sqlite3     *db;
  char        *path;
  GAsyncQueue *queue;
  GMutex       secrets_lock;
  GPtrArray   *secrets;       /* char*: each secret and its escaped forms */
  GPtrArray   *raw_secrets;   /* char*: the values as given */
  gint64       own_pid;
  guint64      own_start;
  gboolean     wal_dirty;     /* written since the last truncating checkpoint */
  /* Runs of this process a write failed for (a full disk, an I/O error):
   * run id → the first failure. Such a run ends as an error, and until
   * the database says so every read of it does. */
  GHashTable  *unstored;
} StoreCore;

struct _SightStore
{
  GObject    parent_instance;

  StoreCore *core;
  GThread   *thread;
};

typedef gpointer (*StoreJobFunc) (StoreCore  *core,
                                  gpointer    data,
                                  GError    **error);

typedef struct {
  StoreJobFunc    func;
  gpointer        data;
  GDestroyNotify  data_free;
  GDestroyNotify  result_free;
  gboolean        quit;
  char           *run_id;       /* the run a write is part of, or NULL */

  /* async */
  GTask          *task;

  /* sync */
  GMutex          mutex;
  GCond           cond;
  gboolean        done;
  gpointer        result;
  GError         *error;
} StoreJob;

G_DEFINE_AUTOPTR_CLEANUP_FUNC (sqlite3_stmt, sqlite3_finalize)

/* The job queue (sight-store.c): @func runs on the DB thread; a write names
 * its run (@run_id) so a failure marks the run unstored. */
gpointer _sight_store_run_sync (SightStore     *self,
                                const char     *run_id,
                                StoreJobFunc    func,
                                gpointer        data,
                                GDestroyNotify  data_free,
                                GError        **error);
void _sight_store_run_async (SightStore          *self,
                             const char          *run_id,
                             gpointer             source_tag,
                             StoreJobFunc         func,
                             gpointer             data,
                             GDestroyNotify       data_free,
                             GDestroyNotify       result_free,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data);

/* Statements (sight-store.c). */
GError *_sight_store_db_error (sqlite3    *db,
                               const char *what);
gboolean _sight_store_exec_sql (sqlite3     *db,
                                const char  *sql,
                                GError     **error);
sqlite3_stmt *_sight_store_prepare (sqlite3     *db,
                                    const char  *sql,
                                    GError     **error);
void _sight_store_bind_text (sqlite3_stmt *stmt,
                             int           i,
                             const char   *text);
void _sight_store_bind_text_take (sqlite3_stmt *stmt,
                                  int           i,
                                  char         *text);
void _sight_store_bind_bytes (sqlite3_stmt *stmt,
                              int           i,
                              GBytes       *bytes);
void _sight_store_bind_step_index (sqlite3_stmt *stmt,
                                   int           i,
                                   int           index);
void _sight_store_bind_int_or_null (sqlite3_stmt *stmt,
                                    int           i,
                                    gint64        v);

char *_sight_store_col_text (sqlite3_stmt *stmt,
                             int           i);
GBytes *_sight_store_col_bytes (sqlite3_stmt *stmt,
                                int           i);
gboolean _sight_store_step_done (sqlite3       *db,
                                 sqlite3_stmt  *stmt,
                                 GError       **error);
/* Binds a record's values to an INSERT's parameters (on the DB thread). */
typedef void (*StoreBindFunc) (StoreCore     *core,
                               sqlite3_stmt  *stmt,
                               gconstpointer  record);
/* The store's one way to insert a row: in its own write transaction,
 * prepares @sql, lets @bind bind @record, steps, finalizes, and commits or
 * rolls back; a failure is the store's coded error (a full disk or a busy
 * database is ENVIRONMENT_UNAVAILABLE). */
gboolean _sight_store_insert (StoreCore      *core,
                              const char     *sql,
                              StoreBindFunc   bind,
                              gconstpointer   record,
                              GError        **error);
gboolean _sight_store_begin_write (sqlite3  *db,
                                   GError  **error);
gboolean _sight_store_commit_or_rollback (sqlite3  *db,
                                          gboolean  ok,
                                          GError  **error);
GBytes *_sight_store_compress_text (const char *text);
char *_sight_store_decompress_text (GBytes *bytes);
char *_sight_store_new_id (const char *prefix);

/* A run a write failed for (sight-store.c). */
void _sight_store_note_unstored (StoreCore    *core,
                                 const char   *run_id,
                                 const GError *error);
void _sight_store_run_mark_unstored (SightRunRecord *r,
                                     const char     *failure);

/* Redaction of every known secret (sight-store-redact.c). */
char *_sight_store_redact (StoreCore  *core,
                           const char *text);
GBytes *_sight_store_redact_blob (StoreCore   *core,
                                  GBytes      *bytes,
                                  const char  *mime,
                                  GError     **error);

/* The file an artifact is kept in as well (sight-store-evidence.c); NULL
 * when @run_id or @name is not a plain file name. */
char *_sight_store_artifact_file (StoreCore  *core,
                                  const char *run_id,
                                  const char *name);
/* Records (sight-store-records.c): verdict names and deep copies. */
SightRunVerdict _sight_store_verdict_parse (const char *name);
SightSessionRecord *_sight_store_session_copy (const SightSessionRecord *s);
SightStepRecord *_sight_store_step_copy (const SightStepRecord *r);
SightObservationRecord *_sight_store_observation_copy (const SightObservationRecord *r);
SightModelCallRecord *_sight_store_model_call_copy (const SightModelCallRecord *r);
SightLogRecord *_sight_store_log_copy (const SightLogRecord *r);
SightArtifactRecord *_sight_store_artifact_copy (const SightArtifactRecord *r);

/* Applies migrations 1..@target_version to an open database (in one
 * transaction each). Exposed for tests that build a database of an older
 * schema version. */
gboolean _sight_store_migrate (sqlite3  *db,
                               int       target_version,
                               GError  **error);

/* Lists newest runs like sight_store_list_runs () but without using the
 * started_at index: the baseline of bench/store. */
GPtrArray *_sight_store_list_runs_unindexed (SightStore  *self,
                                             guint        limit,
                                             GError     **error);

G_END_DECLS
