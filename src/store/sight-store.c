/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-store"

#include "config.h"

#include "sight-store.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <sqlite3.h>
#include <string.h>
#include <unistd.h>

#include "sight-error.h"
#include "sight-store-private.h"

#define BUSY_TIMEOUT_MS 5000
/* How much of SQLite's account of a damaged database an error carries. */
#define QUARANTINE_REASON_MAX_BYTES 300
/* The write-ahead log: what it is cut back to after a checkpoint (SQLite
 * otherwise keeps the file at its largest, reusing it from the start), and
 * how long the store is idle after a write before it folds the log into the
 * database and truncates it. A reader holding an old snapshot stops that;
 * it is tried again each idle interval until it works. */
#define WAL_SIZE_LIMIT_BYTES 1048576
#define WAL_IDLE_CHECKPOINT_MS 1000

G_DEFINE_FINAL_TYPE (SightStore, sight_store, G_TYPE_OBJECT)

/* ----------------------------------------------------------------- helpers */

char *
_sight_store_new_id (const char *prefix)
{
  static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  GString *s = g_string_new (prefix);
  guint8 buf[24];
  int fd;
  gboolean have_random = FALSE;

  fd = open ("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0)
    {
      have_random = read (fd, buf, sizeof buf) == (ssize_t) sizeof buf;
      close (fd);
    }
  for (guint i = 0; i < sizeof buf; i++)
    {
      guint v = have_random ? buf[i] : (guint) g_random_int ();
      g_string_append_c (s, alphabet[v % 36]);
    }
  return g_string_free (s, FALSE);
}

static guint64
process_start_time (gint64 pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%" G_GINT64_FORMAT "/stat", pid);
  g_autofree char *contents = NULL;
  g_auto(GStrv) fields = NULL;
  const char *rest;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return 0;
  rest = strrchr (contents, ')');
  if (rest == NULL)
    return 0;
  fields = g_strsplit (rest + 2, " ", 0);
  /* fields[0] is field 3 (state); starttime is field 22. */
  if (g_strv_length (fields) < 20 || fields[0][0] == 'Z' || fields[0][0] == 'X')
    return 0;
  return g_ascii_strtoull (fields[19], NULL, 10);
}

static gboolean
owner_alive (StoreCore *core,
             gint64     pid,
             guint64    start)
{
  if (pid == core->own_pid && start == core->own_start)
    return TRUE;
  if (pid <= 0)
    return FALSE;
  if (g_file_test ("/proc/self/stat", G_FILE_TEST_EXISTS))
    return start != 0 && process_start_time (pid) == start;
  return kill ((pid_t) pid, 0) == 0 || errno == EPERM;
}

/* Who holds the write lock of a database in WAL mode: SQLite's unix VFS
 * takes it as a POSIX lock on byte 120 of the -shm file, and /proc/locks
 * lists every such lock with its process. (Opening the file to ask with
 * F_GETLK would not do: closing it drops this process's own locks on it.)
 * NULL when it cannot be told. */
static char *
describe_lock_holder (const char *db_path)
{
  g_autofree char *shm = g_strconcat (db_path, "-shm", NULL);
  g_autofree char *locks = NULL;
  g_autofree char *needle = NULL;
  g_auto(GStrv) lines = NULL;
  GStatBuf st;

  if (g_stat (shm, &st) != 0 || !g_file_get_contents ("/proc/locks", &locks, NULL, NULL))
    return NULL;
  /* "1: POSIX  ADVISORY  WRITE 27560 fe:00:10970039 120 120" */
  needle = g_strdup_printf (":%" G_GUINT64_FORMAT " ", (guint64) st.st_ino);
  lines = g_strsplit (locks, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) fields = NULL;
      g_autoptr(GPtrArray) words = g_ptr_array_new ();
      g_autofree char *comm_path = NULL;
      g_autofree char *comm = NULL;
      const char *end;
      gint64 pid;

      if (strstr (lines[i], needle) == NULL || strstr (lines[i], " WRITE ") == NULL)
        continue;
      /* N: POSIX ADVISORY WRITE PID DEV:INODE START END, spaces repeated */
      fields = g_strsplit (lines[i], " ", -1);
      for (guint j = 0; fields[j] != NULL; j++)
        if (*fields[j] != '\0')
          g_ptr_array_add (words, fields[j]);
      if (words->len < 8)
        continue;
      pid = g_ascii_strtoll (g_ptr_array_index (words, 4), NULL, 10);
      end = g_ptr_array_index (words, 7);
      if (pid <= 0 || g_ascii_strtoll (g_ptr_array_index (words, 6), NULL, 10) > 120 ||
          (g_strcmp0 (end, "EOF") != 0 && g_ascii_strtoll (end, NULL, 10) < 120))
        continue;
      comm_path = g_strdup_printf ("/proc/%" G_GINT64_FORMAT "/comm", pid);
      if (g_file_get_contents (comm_path, &comm, NULL, NULL))
        {
          g_autofree char *clean = sight_text_sanitize (g_strstrip (comm), 64);

          return g_strdup_printf ("%s (process %" G_GINT64_FORMAT ")", clean, pid);
        }
      return g_strdup_printf ("process %" G_GINT64_FORMAT, pid);
    }
  return NULL;
}

GError *
_sight_store_db_error (sqlite3    *db,
                       const char *what)
{
  int code = sqlite3_errcode (db) & 0xff;
  SightErrorCode sc = SIGHT_ERROR_INTERNAL;

  if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
    {
      const char *path = sqlite3_db_filename (db, "main");
      g_autofree char *holder = path != NULL ? describe_lock_holder (path) : NULL;

      /* In words: what waits on what, and what to do. */
      g_debug ("%s: busy: %s", what, sqlite3_errmsg (db));
      return g_error_new (SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                          "The run database %s is busy: %s has been writing to it for more "
                          "than %d s; try again when it is done, or end it",
                          path != NULL ? path : "", holder != NULL ? holder : "another program",
                          BUSY_TIMEOUT_MS / 1000);
    }
  if (code == SQLITE_FULL || code == SQLITE_IOERR || code == SQLITE_READONLY ||
      code == SQLITE_CANTOPEN)
    sc = SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE;
  return g_error_new (SIGHT_ERROR, sc, "Run database: %s: %s", what, sqlite3_errmsg (db));
}

gboolean
_sight_store_exec_sql (sqlite3     *db,
                       const char  *sql,
                       GError     **error)
{
  if (sqlite3_exec (db, sql, NULL, NULL, NULL) != SQLITE_OK)
    {
      g_propagate_error (error, _sight_store_db_error (db, "statement failed"));
      return FALSE;
    }
  return TRUE;
}

sqlite3_stmt *
_sight_store_prepare (sqlite3     *db,
                      const char  *sql,
                      GError     **error)
{
  sqlite3_stmt *stmt = NULL;

  if (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL) != SQLITE_OK)
    {
      g_propagate_error (error, _sight_store_db_error (db, "_sight_store_prepare failed"));
      return NULL;
    }
  return stmt;
}

void
_sight_store_bind_text (sqlite3_stmt *stmt,
                        int           i,
                        const char   *text)
{
  if (text)
    sqlite3_bind_text (stmt, i, text, -1, SQLITE_TRANSIENT);
  else
    sqlite3_bind_null (stmt, i);
}

/* Binds an owned string, freed by SQLite. */
void
_sight_store_bind_text_take (sqlite3_stmt *stmt,
                             int           i,
                             char         *text)
{
  if (text)
    sqlite3_bind_text (stmt, i, text, -1, g_free);
  else
    sqlite3_bind_null (stmt, i);
}

void
_sight_store_bind_bytes (sqlite3_stmt *stmt,
                         int           i,
                         GBytes       *bytes)
{
  if (bytes)
    {
      gsize len;
      gconstpointer data = g_bytes_get_data (bytes, &len);
      sqlite3_bind_blob64 (stmt, i, data ? data : "", len, SQLITE_TRANSIENT);
    }
  else
    sqlite3_bind_null (stmt, i);
}

void
_sight_store_bind_step_index (sqlite3_stmt *stmt,
                              int           i,
                              int           index)
{
  if (index >= 0)
    sqlite3_bind_int (stmt, i, index);
  else
    sqlite3_bind_null (stmt, i);
}

char *
_sight_store_col_text (sqlite3_stmt *stmt,
                       int           i)
{
  const unsigned char *t = sqlite3_column_text (stmt, i);

  return t ? g_strdup ((const char *) t) : NULL;
}

GBytes *
_sight_store_col_bytes (sqlite3_stmt *stmt,
                        int           i)
{
  const void *blob;
  int len;

  if (sqlite3_column_type (stmt, i) == SQLITE_NULL)
    return NULL;
  blob = sqlite3_column_blob (stmt, i);
  len = sqlite3_column_bytes (stmt, i);
  return g_bytes_new (blob, len);
}

gboolean
_sight_store_step_done (sqlite3       *db,
                        sqlite3_stmt  *stmt,
                        GError       **error)
{
  if (sqlite3_step (stmt) != SQLITE_DONE)
    {
      g_propagate_error (error, _sight_store_db_error (db, "write failed"));
      return FALSE;
    }
  return TRUE;
}

gboolean
_sight_store_insert (StoreCore      *core,
                     const char     *sql,
                     StoreBindFunc   bind,
                     gconstpointer   record,
                     GError        **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  gboolean ok;

  g_assert (core != NULL && sql != NULL && bind != NULL);

  if (!_sight_store_begin_write (core->db, error))
    return FALSE;
  stmt = _sight_store_prepare (core->db, sql, error);
  ok = stmt != NULL;
  if (ok)
    {
      bind (core, stmt, record);
      ok = _sight_store_step_done (core->db, stmt, error);
    }
  g_clear_pointer (&stmt, sqlite3_finalize);
  return _sight_store_commit_or_rollback (core->db, ok, error);
}

gboolean
_sight_store_begin_write (sqlite3  *db,
                          GError  **error)
{
  return _sight_store_exec_sql (db, "BEGIN IMMEDIATE", error);
}

gboolean
_sight_store_commit_or_rollback (sqlite3  *db,
                                 gboolean  ok,
                                 GError  **error)
{
  if (ok)
    {
      if (_sight_store_exec_sql (db, "COMMIT", error))
        return TRUE;
    }
  sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
  return FALSE;
}

/* ------------------------------------------------------------- compression */

GBytes *
_sight_store_compress_text (const char *text)
{
  g_autoptr(GZlibCompressor) compressor = NULL;
  g_autoptr(GOutputStream) memory = NULL;
  g_autoptr(GOutputStream) stream = NULL;

  if (text == NULL)
    return NULL;
  compressor = g_zlib_compressor_new (G_ZLIB_COMPRESSOR_FORMAT_ZLIB, 6);
  memory = g_memory_output_stream_new_resizable ();
  stream = g_converter_output_stream_new (memory, G_CONVERTER (compressor));
  if (!g_output_stream_write_all (stream, text, strlen (text), NULL, NULL, NULL) ||
      !g_output_stream_close (stream, NULL, NULL))
    return NULL;
  return g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (memory));
}

char *
_sight_store_decompress_text (GBytes *bytes)
{
  g_autoptr(GZlibDecompressor) decompressor = NULL;
  g_autoptr(GInputStream) memory = NULL;
  g_autoptr(GInputStream) stream = NULL;
  g_autoptr(GByteArray) out = NULL;
  guint8 buf[16384];
  gssize n;

  if (bytes == NULL)
    return NULL;
  decompressor = g_zlib_decompressor_new (G_ZLIB_COMPRESSOR_FORMAT_ZLIB);
  memory = g_memory_input_stream_new_from_bytes (bytes);
  stream = g_converter_input_stream_new (memory, G_CONVERTER (decompressor));
  out = g_byte_array_new ();
  while ((n = g_input_stream_read (stream, buf, sizeof buf, NULL, NULL)) > 0)
    g_byte_array_append (out, buf, n);
  if (n < 0)
    return NULL;
  g_byte_array_append (out, (const guint8 *) "", 1);
  return (char *) g_byte_array_free (g_steal_pointer (&out), FALSE);
}

/* --------------------------------------------------------------- DB thread */

static void
store_job_free (StoreJob *job)
{
  if (job->data_free && job->data)
    job->data_free (job->data);
  g_clear_object (&job->task);
  g_free (job->run_id);
  g_free (job);
}

/* Folds the write-ahead log into the database and truncates it, without
 * waiting for readers when @wait is FALSE. TRUE when the log is empty now. */
static gboolean
checkpoint_truncate (StoreCore *core,
                     gboolean   wait)
{
  int rc;

  if (core->db == NULL)
    return TRUE;
  if (!wait)
    sqlite3_busy_timeout (core->db, 0);
  rc = sqlite3_wal_checkpoint_v2 (core->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
  if (!wait)
    sqlite3_busy_timeout (core->db, BUSY_TIMEOUT_MS);
  if (rc != SQLITE_OK)
    g_debug ("checkpoint of %s: %s", core->path, sqlite3_errstr (rc));
  return rc == SQLITE_OK;
}

static void
core_free (StoreCore *core)
{
  if (core->db && core->wal_dirty)
    checkpoint_truncate (core, TRUE);
  if (core->db)
    sqlite3_close_v2 (core->db);
  g_free (core->path);
  g_async_queue_unref (core->queue);
  g_ptr_array_unref (core->secrets);
  g_ptr_array_unref (core->raw_secrets);
  g_hash_table_unref (core->unstored);
  g_mutex_clear (&core->secrets_lock);
  g_free (core);
}

/* A write of run @run_id failed. A refusal (a secret in a blob, an unknown
 * run) is the caller's to handle; anything else means the run as stored is
 * not the run that happened. */
void
_sight_store_note_unstored (StoreCore    *core,
                            const char   *run_id,
                            const GError *error)
{
  if (g_error_matches (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT) ||
      g_error_matches (error, SIGHT_ERROR, SIGHT_ERROR_POLICY_DENIED) ||
      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ||
      g_hash_table_contains (core->unstored, run_id))
    return;
  g_warning ("Run %s could not be stored: %s", run_id, error->message);
  g_hash_table_insert (core->unstored, g_strdup (run_id), g_strdup (error->message));
}

/* What a run that could not be stored says instead of its own outcome. */
void
_sight_store_run_mark_unstored (SightRunRecord *r,
                                const char     *failure)
{
  r->verdict = SIGHT_RUN_VERDICT_ERROR;
  g_free (r->code);
  r->code = g_strdup (sight_error_code_to_string (SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE));
  g_free (r->explanation);
  r->explanation = g_strconcat (UNSTORED, failure, NULL);
}

static gpointer
store_thread (gpointer user_data)
{
  StoreCore *core = user_data;

  for (;;)
    {
      StoreJob *job;
      GError *error = NULL;
      gpointer result;
      sqlite3_int64 changes;

      if (core->wal_dirty)
        {
          job = g_async_queue_timeout_pop (core->queue, WAL_IDLE_CHECKPOINT_MS * 1000);
          if (job == NULL)
            {
              core->wal_dirty = !checkpoint_truncate (core, FALSE);
              continue;
            }
        }
      else
        job = g_async_queue_pop (core->queue);

      if (job->quit)
        {
          g_free (job);
          break;
        }

      if (job->task && g_task_return_error_if_cancelled (job->task))
        {
          store_job_free (job);
          continue;
        }

      changes = core->db != NULL ? sqlite3_total_changes64 (core->db) : 0;
      result = job->func (core, job->data, &error);
      if (core->db != NULL && sqlite3_total_changes64 (core->db) != changes)
        core->wal_dirty = TRUE;
      if (error != NULL && job->run_id != NULL)
        _sight_store_note_unstored (core, job->run_id, error);

      if (job->task)
        {
          GTask *task = g_steal_pointer (&job->task);

          if (error)
            g_task_return_error (task, error);
          else
            g_task_return_pointer (task, result, job->result_free);
          store_job_free (job);
          g_object_unref (task);
        }
      else
        {
          if (job->data_free && job->data)
            job->data_free (job->data);
          job->data = NULL;
          g_mutex_lock (&job->mutex);
          job->result = result;
          job->error = error;
          job->done = TRUE;
          g_cond_signal (&job->cond);
          g_mutex_unlock (&job->mutex);
        }
    }

  core_free (core);
  return NULL;
}

gpointer
_sight_store_run_sync (SightStore     *self,
                       const char     *run_id,
                       StoreJobFunc    func,
                       gpointer        data,
                       GDestroyNotify  data_free,
                       GError        **error)
{
  StoreJob *job = g_new0 (StoreJob, 1);
  gpointer result;

  g_return_val_if_fail (g_thread_self () != self->thread, NULL);

  job->func = func;
  job->data = data;
  job->data_free = data_free;
  job->run_id = g_strdup (run_id);
  g_mutex_init (&job->mutex);
  g_cond_init (&job->cond);
  g_mutex_lock (&job->mutex);
  g_async_queue_push (self->core->queue, job);
  while (!job->done)
    g_cond_wait (&job->cond, &job->mutex);
  g_mutex_unlock (&job->mutex);
  g_mutex_clear (&job->mutex);
  g_cond_clear (&job->cond);

  result = job->result;
  if (job->error)
    g_propagate_error (error, job->error);
  g_free (job->run_id);
  g_free (job);
  return result;
}

void
_sight_store_run_async (SightStore          *self,
                        const char          *run_id,
                        gpointer             source_tag,
                        StoreJobFunc         func,
                        gpointer             data,
                        GDestroyNotify       data_free,
                        GDestroyNotify       result_free,
                        GCancellable        *cancellable,
                        GAsyncReadyCallback  callback,
                        gpointer             user_data)
{
  StoreJob *job = g_new0 (StoreJob, 1);

  job->func = func;
  job->data = data;
  job->data_free = data_free;
  job->result_free = result_free;
  job->run_id = g_strdup (run_id);
  job->task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (job->task, source_tag);
  g_async_queue_push (self->core->queue, job);
}

/* ----------------------------------------------------------------- opening */

static gboolean
is_corruption (int code)
{
  code &= 0xff;
  return code == SQLITE_CORRUPT || code == SQLITE_NOTADB;
}

static void
quarantine (StoreCore  *core,
            const char *reason,
            GError    **error)
{
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *stamp = g_date_time_format (now, "%Y%m%dT%H%M%SZ");
  g_autofree char *moved = g_strdup_printf ("%s.corrupt-%s", core->path, stamp);
  /* SQLite's account of the damage can run to kilobytes, so only its start
   * is kept; taken before closing, which frees @reason when it is the
   * connection's own message. */
  g_autofree char *short_reason = sight_text_sanitize (reason, QUARANTINE_REASON_MAX_BYTES);
  static const char * const suffixes[] = { "-wal", "-shm" };

  g_clear_pointer (&core->db, sqlite3_close_v2);

  if (g_rename (core->path, moved) != 0)
    {
      int errsv = errno;

      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "The run database %s is damaged and could not be moved aside (%s). "
                   "The damage: %s", core->path, g_strerror (errsv), short_reason);
      return;
    }
  for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      g_autofree char *from = g_strconcat (core->path, suffixes[i], NULL);
      g_autofree char *to = g_strconcat (moved, suffixes[i], NULL);
      if (g_file_test (from, G_FILE_TEST_EXISTS))
        g_rename (from, to);
    }
  /* Where it went comes first. */
  g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
               "The run database was damaged and has been moved to %s; a new, empty one "
               "will be created at %s the next time Sightline opens it. The damage: %s",
               moved, core->path, short_reason);
}

/* Marking the runs of ended processes failed: only a damaged file stops
 * the open. */
static gboolean
cannot_mark (StoreCore  *core,
             GError    **error)
{
  if (is_corruption (sqlite3_errcode (core->db)))
    return FALSE;
  g_debug ("%s: the runs of ended processes are marked another time: %s", core->path,
           error != NULL && *error != NULL ? (*error)->message : "");
  g_clear_error (error);
  return TRUE;
}

static gboolean
mark_interrupted (StoreCore  *core,
                  GError    **error)
{
  g_autoptr(sqlite3_stmt) owners = NULL;
  g_autoptr(GArray) dead = g_array_new (FALSE, FALSE, sizeof (gint64));
  sqlite3 *db = core->db;
  int rc;

  owners = _sight_store_prepare (
      db,
      "SELECT DISTINCT owner_pid, owner_start FROM runs WHERE verdict = 'running' "
      "UNION SELECT DISTINCT owner_pid, owner_start FROM sessions WHERE status = 'open'",
      error);
  if (owners == NULL)
    return FALSE;
  while ((rc = sqlite3_step (owners)) == SQLITE_ROW)
    {
      gint64 pid = sqlite3_column_int64 (owners, 0);
      gint64 start = sqlite3_column_int64 (owners, 1);

      if (!owner_alive (core, pid, (guint64) start))
        {
          g_array_append_val (dead, pid);
          g_array_append_val (dead, start);
        }
    }
  if (rc != SQLITE_DONE)
    {
      g_propagate_error (error, _sight_store_db_error (db, "reading open runs"));
      return FALSE;
    }

  for (guint i = 0; i < dead->len; i += 2)
    {
      gint64 pid = g_array_index (dead, gint64, i);
      gint64 start = g_array_index (dead, gint64, i + 1);
      static const char * const sql[] = {
        "UPDATE steps SET verdict = 'interrupted',"
        "  finished_at = COALESCE (finished_at, started_at) "
        "WHERE verdict = 'running' AND run_id IN (SELECT id FROM runs WHERE verdict = 'running'"
        "  AND owner_pid IS ?1 AND owner_start IS ?2)",
        "UPDATE runs SET verdict = 'interrupted',"
        "  finished_at = MAX (started_at, COALESCE ((SELECT MAX (COALESCE (finished_at, started_at))"
        "                 FROM steps WHERE steps.run_id = runs.id), 0)),"
        "  explanation = COALESCE (explanation, 'The process running it ended before the run finished.') "
        "WHERE verdict = 'running' AND owner_pid IS ?1 AND owner_start IS ?2",
        "UPDATE sessions SET status = 'ended', ended_at = COALESCE (ended_at, created_at) "
        "WHERE status = 'open' AND owner_pid IS ?1 AND owner_start IS ?2",
      };
      gboolean ok;

      /* Another program writing, a full disk: the runs are marked at a
       * later open, and this one goes on to read what is there. */
      if (!_sight_store_begin_write (db, error))
        return cannot_mark (core, error);
      ok = TRUE;
      for (guint j = 0; j < G_N_ELEMENTS (sql) && ok; j++)
        {
          g_autoptr(sqlite3_stmt) stmt = _sight_store_prepare (db, sql[j], error);

          ok = stmt != NULL;
          if (ok)
            {
              sqlite3_bind_int64 (stmt, 1, pid);
              sqlite3_bind_int64 (stmt, 2, start);
              ok = _sight_store_step_done (db, stmt, error);
            }
        }
      if (!_sight_store_commit_or_rollback (db, ok, error))
        return cannot_mark (core, error);
    }
  return TRUE;
}

static gpointer
job_open (StoreCore  *core,
          gpointer    data,
          GError    **error)
{
  g_autofree char *dir = g_path_get_dirname (core->path);
  g_autoptr(sqlite3_stmt) check = NULL;
  g_autoptr(GError) local_error = NULL;
  const char *check_result = NULL;
  int rc;

  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int errsv = errno;
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "Cannot create the folder %s for the run database: %s",
                   dir, g_strerror (errsv));
      return NULL;
    }

  rc = sqlite3_open_v2 (core->path, &core->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL);
  if (rc != SQLITE_OK)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "Cannot open the run database %s: %s", core->path,
                   core->db ? sqlite3_errmsg (core->db) : sqlite3_errstr (rc));
      g_clear_pointer (&core->db, sqlite3_close_v2);
      return NULL;
    }
  sqlite3_extended_result_codes (core->db, 1);
  sqlite3_busy_timeout (core->db, BUSY_TIMEOUT_MS);

  rc = sqlite3_exec (core->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
  if (is_corruption (rc))
    {
      quarantine (core, sqlite3_errmsg (core->db), error);
      return NULL;
    }
  if (rc != SQLITE_OK
      || !_sight_store_exec_sql (core->db,
                                 "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;"
                                 "PRAGMA journal_size_limit = " G_STRINGIFY (WAL_SIZE_LIMIT_BYTES),
                                 error))
    {
      if (error && *error == NULL)
        g_propagate_error (error, _sight_store_db_error (core->db, "setting up"));
      g_clear_pointer (&core->db, sqlite3_close_v2);
      return NULL;
    }

  check = _sight_store_prepare (core->db, "PRAGMA quick_check", &local_error);
  if (check)
    {
      rc = sqlite3_step (check);
      if (rc == SQLITE_ROW)
        check_result = (const char *) sqlite3_column_text (check, 0);
    }
  if (check == NULL || check_result == NULL || !g_str_equal (check_result, "ok"))
    {
      g_autofree char *reason = g_strdup (check_result ? check_result
                                          : sqlite3_errmsg (core->db));
      int code = sqlite3_errcode (core->db);

      g_clear_pointer (&check, sqlite3_finalize);
      if (check_result != NULL || is_corruption (code))
        quarantine (core, reason, error);
      else
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                       "Cannot check the run database %s: %s", core->path, reason);
          g_clear_pointer (&core->db, sqlite3_close_v2);
        }
      return NULL;
    }
  g_clear_pointer (&check, sqlite3_finalize);

  if (!_sight_store_migrate (core->db, SIGHT_STORE_SCHEMA_VERSION, &local_error) ||
      !mark_interrupted (core, &local_error))
    {
      if (is_corruption (sqlite3_errcode (core->db)))
        quarantine (core, local_error->message, error);
      else
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          g_clear_pointer (&core->db, sqlite3_close_v2);
        }
      return NULL;
    }
  return GINT_TO_POINTER (TRUE);
}

/* ----------------------------------------------------------------- GObject */

static void
sight_store_finalize (GObject *object)
{
  SightStore *self = SIGHT_STORE (object);
  StoreJob *quit = g_new0 (StoreJob, 1);

  quit->quit = TRUE;
  g_async_queue_push (self->core->queue, quit);
  /* The last reference may be dropped on the DB thread (a task completing
   * there); the thread then frees the core itself. */
  if (g_thread_self () == self->thread)
    g_thread_unref (self->thread);
  else
    g_thread_join (self->thread);

  G_OBJECT_CLASS (sight_store_parent_class)->finalize (object);
}

static void
sight_store_class_init (SightStoreClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = sight_store_finalize;
}

static void
sight_store_init (SightStore *self)
{
}

char *
sight_store_default_path (void)
{
  const char *dir = g_getenv ("SIGHTLINE_DATA_DIR");

  if (dir && *dir)
    return g_build_filename (dir, "sightline.db", NULL);
  return g_build_filename (g_get_user_data_dir (), "sightline", "sightline.db", NULL);
}

static SightStore *
store_create (const char *path)
{
  SightStore *self = g_object_new (SIGHT_TYPE_STORE, NULL);
  StoreCore *core = g_new0 (StoreCore, 1);

  core->path = path ? g_strdup (path) : sight_store_default_path ();
  core->queue = g_async_queue_new ();
  core->secrets = g_ptr_array_new_with_free_func (g_free);
  core->raw_secrets = g_ptr_array_new_with_free_func (g_free);
  core->unstored = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_mutex_init (&core->secrets_lock);
  core->own_pid = getpid ();
  core->own_start = process_start_time (core->own_pid);
  self->core = core;
  self->thread = g_thread_new ("sight-store", store_thread, core);
  return self;
}

SightStore *
sight_store_new (const char  *path,
                 GError     **error)
{
  g_autoptr(SightStore) self = store_create (path);

  if (!_sight_store_run_sync (self, NULL, job_open, NULL, NULL, error))
    return NULL;
  return g_steal_pointer (&self);
}

void
sight_store_new_async (const char          *path,
                       GCancellable        *cancellable,
                       GAsyncReadyCallback  callback,
                       gpointer             user_data)
{
  g_autoptr(SightStore) self = store_create (path);

  _sight_store_run_async (self, NULL, sight_store_new_async, job_open, NULL, NULL, NULL,
                          cancellable, callback, user_data);
}

SightStore *
sight_store_new_finish (GAsyncResult  *result,
                        GError       **error)
{
  g_autoptr(GObject) source = g_async_result_get_source_object (result);

  g_return_val_if_fail (g_task_is_valid (result, source), NULL);

  if (!g_task_propagate_pointer (G_TASK (result), error))
    return NULL;
  return SIGHT_STORE (g_steal_pointer (&source));
}

SightStore *
sight_store_get_default (GError **error)
{
  static GMutex lock;
  static SightStore *store;
  SightStore *result = NULL;

  g_mutex_lock (&lock);
  if (store == NULL)
    store = sight_store_new (NULL, error);
  result = store;
  g_mutex_unlock (&lock);
  return result;
}

const char *
sight_store_get_path (SightStore *self)
{
  g_return_val_if_fail (SIGHT_IS_STORE (self), NULL);
  return self->core->path;
}

/* ------------------------------------------------------------------ writes */

gboolean
sight_store_write_finish (SightStore    *self,
                          GAsyncResult  *result,
                          GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_pointer (G_TASK (result), error) != NULL;
}

/* --------------------------------------------------------------- integrity */

static gpointer
job_integrity (StoreCore  *core,
               gpointer    data,
               GError    **error)
{
  g_autoptr(sqlite3_stmt) stmt = _sight_store_prepare (core->db, "PRAGMA integrity_check", error);
  const char *result;

  if (stmt == NULL)
    return NULL;
  if (sqlite3_step (stmt) != SQLITE_ROW)
    {
      g_propagate_error (error, _sight_store_db_error (core->db, "integrity_check"));
      return NULL;
    }
  result = (const char *) sqlite3_column_text (stmt, 0);
  if (result == NULL || !g_str_equal (result, "ok"))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "The run database %s failed its integrity check: %s",
                   core->path, result ? result : "no answer");
      return NULL;
    }
  return GINT_TO_POINTER (TRUE);
}

gboolean
sight_store_check_integrity (SightStore  *self,
                             GError     **error)
{
  g_return_val_if_fail (SIGHT_IS_STORE (self), FALSE);

  return _sight_store_run_sync (self, NULL, job_integrity, NULL, NULL, error) != NULL;
}
