/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-store"

#include "config.h"

#include "sight-store.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <sqlite3.h>
#include <string.h>
#include <unistd.h>

#include "sight-error.h"
#include "sight-json.h"
#include "sight-secrets.h"
#include "sight-store-private.h"

#define BUSY_TIMEOUT_MS 5000
/* How the outcome of a run a write failed for begins. */
#define UNSTORED "The run could not be stored: "
/* How much of SQLite's account of a damaged database an error carries. */
#define QUARANTINE_REASON_MAX_BYTES 300
/* The write-ahead log: what it is cut back to after a checkpoint (SQLite
 * otherwise keeps the file at its largest, reusing it from the start), and
 * how long the store is idle after a write before it folds the log into the
 * database and truncates it. A reader holding an old snapshot stops that;
 * it is tried again each idle interval until it works. */
#define WAL_SIZE_LIMIT_BYTES 1048576
#define WAL_IDLE_CHECKPOINT_MS 1000
#define SECRET_MIN_BYTES 4
#define SECRET_MARK "[secret]"

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

G_DEFINE_FINAL_TYPE (SightStore, sight_store, G_TYPE_OBJECT)

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

/* ---------------------------------------------------------------- verdicts */

static const char * const verdict_names[] = {
  [SIGHT_RUN_VERDICT_RUNNING] = "running",
  [SIGHT_RUN_VERDICT_PASS] = "pass",
  [SIGHT_RUN_VERDICT_FAIL] = "fail",
  [SIGHT_RUN_VERDICT_ERROR] = "error",
  [SIGHT_RUN_VERDICT_SKIPPED] = "skipped",
  [SIGHT_RUN_VERDICT_INTERRUPTED] = "interrupted",
};

const char *
sight_run_verdict_to_string (SightRunVerdict verdict)
{
  if ((guint) verdict < G_N_ELEMENTS (verdict_names))
    return verdict_names[verdict];
  return "error";
}

gboolean
sight_run_verdict_from_string (const char   *name,
                           SightRunVerdict *out)
{
  if (name == NULL)
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (verdict_names); i++)
    if (g_str_equal (name, verdict_names[i]))
      {
        if (out)
          *out = i;
        return TRUE;
      }
  return FALSE;
}

static SightRunVerdict
verdict_parse (const char *name)
{
  SightRunVerdict v = SIGHT_RUN_VERDICT_ERROR;

  sight_run_verdict_from_string (name, &v);
  return v;
}

/* ----------------------------------------------------------------- records */

void
sight_session_record_free (SightSessionRecord *r)
{
  if (r == NULL)
    return;
  g_free (r->id);
  g_free (r->title);
  g_free (r->status);
  g_free (r);
}

void
sight_run_record_free (SightRunRecord *r)
{
  if (r == NULL)
    return;
  g_free (r->id);
  g_free (r->session_id);
  g_free (r->kind);
  g_free (r->name);
  g_free (r->url);
  g_free (r->code);
  g_free (r->explanation);
  g_free (r->final_url);
  g_free (r->answer);
  g_strfreev (r->notes);
  g_free (r);
}

void
sight_step_record_free (SightStepRecord *r)
{
  if (r == NULL)
    return;
  g_free (r->run_id);
  g_free (r->kind);
  g_free (r->label);
  g_free (r->instruction);
  g_free (r->options_json);
  g_free (r->code);
  g_free (r->explanation);
  g_free (r->usage_json);
  g_free (r->cache_json);
  g_free (r->budget_json);
  g_free (r);
}

void
sight_observation_record_free (SightObservationRecord *r)
{
  if (r == NULL)
    return;
  g_free (r->run_id);
  g_free (r->phase);
  g_free (r->url);
  g_free (r->title);
  g_free (r->tree_json);
  g_free (r->tree_text);
  g_clear_pointer (&r->screenshot, g_bytes_unref);
  g_free (r->screenshot_mime);
  g_free (r);
}

void
sight_model_call_record_free (SightModelCallRecord *r)
{
  if (r == NULL)
    return;
  g_free (r->run_id);
  g_free (r->provider);
  g_free (r->model);
  g_free (r->request_json);
  g_free (r->response_json);
  g_free (r->request_id);
  g_free (r);
}

void
sight_log_record_free (SightLogRecord *r)
{
  if (r == NULL)
    return;
  g_free (r->run_id);
  g_free (r->kind);
  g_free (r->level);
  g_free (r->text);
  g_free (r->url);
  g_free (r);
}

void
sight_artifact_record_free (SightArtifactRecord *r)
{
  if (r == NULL)
    return;
  g_free (r->run_id);
  g_free (r->name);
  g_free (r->mime);
  g_clear_pointer (&r->data, g_bytes_unref);
  g_free (r);
}

void
sight_run_data_free (SightRunData *d)
{
  if (d == NULL)
    return;
  sight_run_record_free (d->run);
  g_clear_pointer (&d->steps, g_ptr_array_unref);
  g_clear_pointer (&d->observations, g_ptr_array_unref);
  g_clear_pointer (&d->model_calls, g_ptr_array_unref);
  g_clear_pointer (&d->logs, g_ptr_array_unref);
  g_clear_pointer (&d->artifacts, g_ptr_array_unref);
  g_free (d);
}

static SightSessionRecord *
session_copy (const SightSessionRecord *s)
{
  SightSessionRecord *c = g_new0 (SightSessionRecord, 1);

  if (s)
    {
      *c = *s;
      c->id = g_strdup (s->id);
      c->title = g_strdup (s->title);
      c->status = g_strdup (s->status);
    }
  return c;
}

static SightRunRecord *
run_copy (const SightRunRecord *r)
{
  SightRunRecord *c = g_new0 (SightRunRecord, 1);

  *c = *r;
  c->id = g_strdup (r->id);
  c->session_id = g_strdup (r->session_id);
  c->kind = g_strdup (r->kind);
  c->name = g_strdup (r->name);
  c->url = g_strdup (r->url);
  c->code = g_strdup (r->code);
  c->explanation = g_strdup (r->explanation);
  c->final_url = g_strdup (r->final_url);
  c->answer = g_strdup (r->answer);
  c->notes = g_strdupv (r->notes);
  return c;
}

static SightStepRecord *
step_copy (const SightStepRecord *r)
{
  SightStepRecord *c = g_new0 (SightStepRecord, 1);

  *c = *r;
  c->run_id = g_strdup (r->run_id);
  c->kind = g_strdup (r->kind);
  c->label = g_strdup (r->label);
  c->instruction = g_strdup (r->instruction);
  c->options_json = g_strdup (r->options_json);
  c->code = g_strdup (r->code);
  c->explanation = g_strdup (r->explanation);
  c->usage_json = g_strdup (r->usage_json);
  c->cache_json = g_strdup (r->cache_json);
  c->budget_json = g_strdup (r->budget_json);
  return c;
}

static SightObservationRecord *
observation_copy (const SightObservationRecord *r)
{
  SightObservationRecord *c = g_new0 (SightObservationRecord, 1);

  *c = *r;
  c->run_id = g_strdup (r->run_id);
  c->phase = g_strdup (r->phase);
  c->url = g_strdup (r->url);
  c->title = g_strdup (r->title);
  c->tree_json = g_strdup (r->tree_json);
  c->tree_text = g_strdup (r->tree_text);
  c->screenshot = r->screenshot ? g_bytes_ref (r->screenshot) : NULL;
  c->screenshot_mime = g_strdup (r->screenshot_mime);
  return c;
}

static SightModelCallRecord *
model_call_copy (const SightModelCallRecord *r)
{
  SightModelCallRecord *c = g_new0 (SightModelCallRecord, 1);

  *c = *r;
  c->run_id = g_strdup (r->run_id);
  c->provider = g_strdup (r->provider);
  c->model = g_strdup (r->model);
  c->request_json = g_strdup (r->request_json);
  c->response_json = g_strdup (r->response_json);
  c->request_id = g_strdup (r->request_id);
  return c;
}

static SightLogRecord *
log_copy (const SightLogRecord *r)
{
  SightLogRecord *c = g_new0 (SightLogRecord, 1);

  *c = *r;
  c->run_id = g_strdup (r->run_id);
  c->kind = g_strdup (r->kind);
  c->level = g_strdup (r->level);
  c->text = g_strdup (r->text);
  c->url = g_strdup (r->url);
  return c;
}

static SightArtifactRecord *
artifact_copy (const SightArtifactRecord *r)
{
  SightArtifactRecord *c = g_new0 (SightArtifactRecord, 1);

  *c = *r;
  c->run_id = g_strdup (r->run_id);
  c->name = g_strdup (r->name);
  c->mime = g_strdup (r->mime);
  c->data = r->data ? g_bytes_ref (r->data) : NULL;
  return c;
}

/* ----------------------------------------------------------------- helpers */

static char *
new_id (const char *prefix)
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

static GError *
db_error (sqlite3    *db,
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

static gboolean
exec_sql (sqlite3     *db,
          const char  *sql,
          GError     **error)
{
  if (sqlite3_exec (db, sql, NULL, NULL, NULL) != SQLITE_OK)
    {
      g_propagate_error (error, db_error (db, "statement failed"));
      return FALSE;
    }
  return TRUE;
}

static sqlite3_stmt *
prepare (sqlite3     *db,
         const char  *sql,
         GError     **error)
{
  sqlite3_stmt *stmt = NULL;

  if (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL) != SQLITE_OK)
    {
      g_propagate_error (error, db_error (db, "prepare failed"));
      return NULL;
    }
  return stmt;
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (sqlite3_stmt, sqlite3_finalize)

static void
bind_text (sqlite3_stmt *stmt,
           int           i,
           const char   *text)
{
  if (text)
    sqlite3_bind_text (stmt, i, text, -1, SQLITE_TRANSIENT);
  else
    sqlite3_bind_null (stmt, i);
}

/* Binds an owned string, freed by SQLite. */
static void
bind_text_take (sqlite3_stmt *stmt,
                int           i,
                char         *text)
{
  if (text)
    sqlite3_bind_text (stmt, i, text, -1, g_free);
  else
    sqlite3_bind_null (stmt, i);
}

static void
bind_bytes (sqlite3_stmt *stmt,
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

static void
bind_step_index (sqlite3_stmt *stmt,
                 int           i,
                 int           index)
{
  if (index >= 0)
    sqlite3_bind_int (stmt, i, index);
  else
    sqlite3_bind_null (stmt, i);
}

static char *
col_text (sqlite3_stmt *stmt,
          int           i)
{
  const unsigned char *t = sqlite3_column_text (stmt, i);

  return t ? g_strdup ((const char *) t) : NULL;
}

static GBytes *
col_bytes (sqlite3_stmt *stmt,
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

static gboolean
step_done (sqlite3       *db,
           sqlite3_stmt  *stmt,
           GError       **error)
{
  if (sqlite3_step (stmt) != SQLITE_DONE)
    {
      g_propagate_error (error, db_error (db, "write failed"));
      return FALSE;
    }
  return TRUE;
}

static gboolean
begin_write (sqlite3  *db,
             GError  **error)
{
  return exec_sql (db, "BEGIN IMMEDIATE", error);
}

static gboolean
commit_or_rollback (sqlite3  *db,
                    gboolean  ok,
                    GError  **error)
{
  if (ok)
    {
      if (exec_sql (db, "COMMIT", error))
        return TRUE;
    }
  sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
  return FALSE;
}

/* ------------------------------------------------------------- compression */

static GBytes *
compress_text (const char *text)
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

static char *
decompress_text (GBytes *bytes)
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

/* ----------------------------------------------------------------- secrets */

static void
core_add_secret_form (StoreCore  *core,
                      const char *form)
{
  if (form == NULL || strlen (form) < SECRET_MIN_BYTES)
    return;
  for (guint i = 0; i < core->secrets->len; i++)
    if (g_str_equal (g_ptr_array_index (core->secrets, i), form))
      return;
  g_ptr_array_add (core->secrets, g_strdup (form));
}

static char *
json_escaped (const char *value)
{
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_VALUE);
  g_autofree char *quoted = NULL;

  json_node_set_string (node, value);
  quoted = json_to_string (node, FALSE);
  /* strip the quotes */
  return g_strndup (quoted + 1, strlen (quoted) - 2);
}

/* Replaces every secret the process knows (sight-secrets.h) and every form
 * registered with this store in @text; returns a new string. */
static char *
redact (StoreCore  *core,
        const char *text)
{
  g_autoptr(GString) s = NULL;
  g_autofree char *known = NULL;

  if (text == NULL)
    return NULL;
  known = sight_secrets_redact (text);
  s = g_string_new (known);
  g_mutex_lock (&core->secrets_lock);
  for (guint i = 0; i < core->secrets->len; i++)
    g_string_replace (s, g_ptr_array_index (core->secrets, i), SECRET_MARK, 0);
  g_mutex_unlock (&core->secrets_lock);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

static gboolean
contains_bytes (const char *data,
                gsize       len,
                const char *needle,
                gsize       needle_len)
{
  if (needle_len == 0 || needle_len > len)
    return FALSE;
  for (gsize i = 0; i + needle_len <= len; i++)
    if (data[i] == needle[0] && memcmp (data + i, needle, needle_len) == 0)
      return TRUE;
  return FALSE;
}

/* Text-like blobs are redacted; any other blob that contains a secret is
 * refused. */
static GBytes *
redact_blob (StoreCore   *core,
             GBytes      *bytes,
             const char  *mime,
             GError     **error)
{
  gsize len;
  const char *data;
  gboolean found = FALSE;

  if (bytes == NULL)
    return NULL;
  data = g_bytes_get_data (bytes, &len);
  if (mime && (g_str_has_prefix (mime, "text/") || strstr (mime, "json") || strstr (mime, "xml")))
    {
      g_autofree char *text = g_strndup (data, len);
      char *clean = redact (core, text);
      return g_bytes_new_take (clean, strlen (clean));
    }
  g_mutex_lock (&core->secrets_lock);
  for (guint i = 0; i < core->secrets->len && !found; i++)
    {
      const char *secret = g_ptr_array_index (core->secrets, i);
      found = contains_bytes (data, len, secret, strlen (secret));
    }
  g_mutex_unlock (&core->secrets_lock);
  if (found)
    {
      g_set_error_literal (error, SIGHT_ERROR, SIGHT_ERROR_POLICY_DENIED,
                           "Refused to store data that contains a secret");
      return NULL;
    }
  return g_bytes_ref (bytes);
}

static int
longer_first (gconstpointer a,
              gconstpointer b)
{
  gsize la = strlen (*(const char * const *) a);
  gsize lb = strlen (*(const char * const *) b);

  return la < lb ? 1 : la > lb ? -1 : 0;
}

void
sight_store_add_secret (SightStore *self,
                        const char *value)
{
  StoreCore *core;
  g_autofree char *json = NULL;
  g_autofree char *uri = NULL;
  g_autofree char *b64 = NULL;

  g_return_if_fail (SIGHT_IS_STORE (self));

  if (value == NULL || strlen (value) < SECRET_MIN_BYTES)
    return;
  core = self->core;
  json = json_escaped (value);
  uri = g_uri_escape_string (value, NULL, FALSE);
  b64 = g_base64_encode ((const guchar *) value, strlen (value));
  g_mutex_lock (&core->secrets_lock);
  g_ptr_array_add (core->raw_secrets, g_strdup (value));
  core_add_secret_form (core, value);
  core_add_secret_form (core, json);
  core_add_secret_form (core, uri);
  core_add_secret_form (core, b64);
  /* Longest first, so a form that contains another is replaced whole. */
  g_ptr_array_sort (core->secrets, longer_first);
  g_mutex_unlock (&core->secrets_lock);
}

/* ------------------------------------------------------------- DB thread */

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
static void
note_unstored (StoreCore    *core,
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
static void
run_mark_unstored (SightRunRecord *r,
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
        note_unstored (core, job->run_id, error);

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

static gpointer
store_run_sync (SightStore     *self,
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

static void
store_run_async (SightStore          *self,
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

      if (!begin_write (db, error))
        return FALSE;
      /* Read inside the write lock: another process may have migrated. */
      version = user_version (db);
      if (version < 0)
        {
          g_propagate_error (error, db_error (db, "reading the schema version"));
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
      ok = exec_sql (db, migrations[version], error) && exec_sql (db, bump, error);
      if (!commit_or_rollback (db, ok, error))
        return FALSE;
    }
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

  owners = prepare (db,
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
      g_propagate_error (error, db_error (db, "reading open runs"));
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
      if (!begin_write (db, error))
        return cannot_mark (core, error);
      ok = TRUE;
      for (guint j = 0; j < G_N_ELEMENTS (sql) && ok; j++)
        {
          g_autoptr(sqlite3_stmt) stmt = prepare (db, sql[j], error);

          ok = stmt != NULL;
          if (ok)
            {
              sqlite3_bind_int64 (stmt, 1, pid);
              sqlite3_bind_int64 (stmt, 2, start);
              ok = step_done (db, stmt, error);
            }
        }
      if (!commit_or_rollback (db, ok, error))
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
  if (rc != SQLITE_OK ||
      !exec_sql (core->db,
                 "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;"
                 "PRAGMA journal_size_limit = " G_STRINGIFY (WAL_SIZE_LIMIT_BYTES), error))
    {
      if (error && *error == NULL)
        g_propagate_error (error, db_error (core->db, "setting up"));
      g_clear_pointer (&core->db, sqlite3_close_v2);
      return NULL;
    }

  check = prepare (core->db, "PRAGMA quick_check", &local_error);
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

/* --------------------------------------------------------------- GObject */

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

  if (!store_run_sync (self, NULL, job_open, NULL, NULL, error))
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

  store_run_async (self, NULL, sight_store_new_async, job_open, NULL, NULL, NULL,
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

static char *
notes_to_json (char **notes)
{
  g_autoptr(JsonBuilder) b = NULL;
  g_autoptr(JsonNode) root = NULL;

  if (notes == NULL)
    return NULL;
  b = json_builder_new ();
  json_builder_begin_array (b);
  for (guint i = 0; notes[i]; i++)
    json_builder_add_string_value (b, notes[i]);
  json_builder_end_array (b);
  root = json_builder_get_root (b);
  return json_to_string (root, FALSE);
}

static char **
notes_from_json (const char *text)
{
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GStrvBuilder) b = NULL;
  JsonArray *array;

  if (text == NULL || (node = sight_json_parse (text, -1, SIGHT_JSON_MAX_DEPTH, NULL)) == NULL ||
      !JSON_NODE_HOLDS_ARRAY (node))
    return NULL;
  array = json_node_get_array (node);
  b = g_strv_builder_new ();
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      const char *s = json_array_get_string_element (array, i);
      if (s)
        g_strv_builder_add (b, s);
    }
  return g_strv_builder_end (b);
}

static gpointer
job_open_session (StoreCore  *core,
                  gpointer    data,
                  GError    **error)
{
  SightSessionRecord *s = data;
  g_autoptr(sqlite3_stmt) stmt = NULL;
  gboolean ok;

  if (!begin_write (core->db, error))
    return NULL;
  stmt = prepare (core->db,
                  "INSERT INTO sessions (id, title, status, owner_pid, owner_start, created_at) "
                  "VALUES (?, ?, 'open', ?, ?, ?)", error);
  ok = stmt != NULL;
  if (ok)
    {
      bind_text (stmt, 1, s->id);
      bind_text_take (stmt, 2, redact (core, s->title));
      sqlite3_bind_int64 (stmt, 3, core->own_pid);
      sqlite3_bind_int64 (stmt, 4, (gint64) core->own_start);
      sqlite3_bind_int64 (stmt, 5, s->created_at ? s->created_at : g_get_real_time ());
      ok = step_done (core->db, stmt, error);
    }
  return commit_or_rollback (core->db, ok, error) ? GINT_TO_POINTER (TRUE) : NULL;
}

char *
sight_store_open_session (SightStore                *self,
                          const SightSessionRecord  *session,
                          GError                   **error)
{
  SightSessionRecord *copy;
  char *id;

  g_return_val_if_fail (SIGHT_IS_STORE (self), NULL);

  copy = session_copy (session);
  if (copy->id == NULL)
    copy->id = new_id ("sess_");
  id = g_strdup (copy->id);
  if (!store_run_sync (self, NULL, job_open_session, copy,
                       (GDestroyNotify) sight_session_record_free, error))
    g_clear_pointer (&id, g_free);
  return id;
}

static gpointer
job_end_session (StoreCore  *core,
                 gpointer    data,
                 GError    **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  gboolean ok;

  if (!begin_write (core->db, error))
    return NULL;
  stmt = prepare (core->db,
                  "UPDATE sessions SET status = 'ended', ended_at = ? WHERE id = ?", error);
  ok = stmt != NULL;
  if (ok)
    {
      sqlite3_bind_int64 (stmt, 1, g_get_real_time ());
      bind_text (stmt, 2, data);
      ok = step_done (core->db, stmt, error);
    }
  return commit_or_rollback (core->db, ok, error) ? GINT_TO_POINTER (TRUE) : NULL;
}

gboolean
sight_store_end_session (SightStore  *self,
                         const char  *session_id,
                         GError     **error)
{
  g_return_val_if_fail (SIGHT_IS_STORE (self), FALSE);
  g_return_val_if_fail (session_id != NULL, FALSE);

  return store_run_sync (self, NULL, job_end_session, g_strdup (session_id), g_free, error) != NULL;
}

static gpointer
job_open_run (StoreCore  *core,
              gpointer    data,
              GError    **error)
{
  SightRunRecord *r = data;
  g_autoptr(sqlite3_stmt) stmt = NULL;
  gboolean ok;

  if (!begin_write (core->db, error))
    return NULL;
  stmt = prepare (core->db,
                  "INSERT INTO runs (id, session_id, kind, name, url, verdict, owner_pid,"
                  "  owner_start, started_at) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?)",
                  error);
  ok = stmt != NULL;
  if (ok)
    {
      bind_text (stmt, 1, r->id);
      bind_text (stmt, 2, r->session_id);
      bind_text (stmt, 3, r->kind ? r->kind : "test");
      bind_text_take (stmt, 4, redact (core, r->name));
      bind_text_take (stmt, 5, redact (core, r->url));
      sqlite3_bind_int64 (stmt, 6, core->own_pid);
      sqlite3_bind_int64 (stmt, 7, (gint64) core->own_start);
      sqlite3_bind_int64 (stmt, 8, r->started_at ? r->started_at : g_get_real_time ());
      ok = step_done (core->db, stmt, error);
    }
  return commit_or_rollback (core->db, ok, error) ? GINT_TO_POINTER (TRUE) : NULL;
}

static SightRunRecord *
prepare_run (const SightRunRecord *run)
{
  SightRunRecord *copy = run_copy (run);

  if (copy->id == NULL)
    copy->id = new_id ("run_");
  return copy;
}

char *
sight_store_open_run (SightStore            *self,
                      const SightRunRecord  *run,
                      GError               **error)
{
  SightRunRecord *copy;
  char *id;

  g_return_val_if_fail (SIGHT_IS_STORE (self), NULL);
  g_return_val_if_fail (run != NULL, NULL);

  copy = prepare_run (run);
  id = g_strdup (copy->id);
  if (!store_run_sync (self, NULL, job_open_run, copy, (GDestroyNotify) sight_run_record_free, error))
    g_clear_pointer (&id, g_free);
  return id;
}

char *
sight_store_open_run_async (SightStore           *self,
                            const SightRunRecord *run,
                            GCancellable         *cancellable,
                            GAsyncReadyCallback   callback,
                            gpointer              user_data)
{
  SightRunRecord *copy;

  g_return_val_if_fail (SIGHT_IS_STORE (self), NULL);
  g_return_val_if_fail (run != NULL, NULL);

  copy = prepare_run (run);
  store_run_async (self, NULL, sight_store_open_run_async, job_open_run, copy,
                   (GDestroyNotify) sight_run_record_free, NULL,
                   cancellable, callback, user_data);
  return g_strdup (copy->id);
}

static char *
default_label (const SightStepRecord *s)
{
  if (s->label)
    return g_strdup (s->label);
  return g_strdup (s->kind);
}

static gpointer
job_add_step (StoreCore  *core,
              gpointer    data,
              GError    **error)
{
  SightStepRecord *s = data;
  g_autoptr(sqlite3_stmt) stmt = NULL;
  gboolean ok;

  if (!begin_write (core->db, error))
    return NULL;
  stmt = prepare (core->db,
                  "INSERT INTO steps (run_id, idx, kind, label, instruction, options, verdict,"
                  "  budget, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", error);
  ok = stmt != NULL;
  if (ok)
    {
      bind_text (stmt, 1, s->run_id);
      sqlite3_bind_int (stmt, 2, s->index);
      bind_text (stmt, 3, s->kind ? s->kind : "step");
      bind_text_take (stmt, 4, redact (core, default_label (s)));
      bind_text_take (stmt, 5, redact (core, s->instruction));
      bind_text_take (stmt, 6, redact (core, s->options_json));
      bind_text (stmt, 7, sight_run_verdict_to_string (s->verdict));
      bind_text_take (stmt, 8, redact (core, s->budget_json));
      sqlite3_bind_int64 (stmt, 9, s->started_at ? s->started_at : g_get_real_time ());
      ok = step_done (core->db, stmt, error);
    }
  return commit_or_rollback (core->db, ok, error) ? GINT_TO_POINTER (TRUE) : NULL;
}

gboolean
sight_store_add_step (SightStore             *self,
                      const SightStepRecord  *step,
                      GError                **error)
{
  g_return_val_if_fail (SIGHT_IS_STORE (self), FALSE);
  g_return_val_if_fail (step != NULL && step->run_id != NULL, FALSE);

  return store_run_sync (self, step->run_id, job_add_step, step_copy (step),
                         (GDestroyNotify) sight_step_record_free, error) != NULL;
}

void
sight_store_add_step_async (SightStore            *self,
                            const SightStepRecord *step,
                            GCancellable          *cancellable,
                            GAsyncReadyCallback    callback,
                            gpointer               user_data)
{
  g_return_if_fail (SIGHT_IS_STORE (self));
  g_return_if_fail (step != NULL && step->run_id != NULL);

  store_run_async (self, step->run_id, sight_store_add_step_async, job_add_step, step_copy (step),
                   (GDestroyNotify) sight_step_record_free, NULL,
                   cancellable, callback, user_data);
}

static gpointer
job_finish_step (StoreCore  *core,
                 gpointer    data,
                 GError    **error)
{
  SightStepRecord *s = data;
  g_autoptr(sqlite3_stmt) stmt = NULL;
  gboolean ok;

  if (!begin_write (core->db, error))
    return NULL;
  stmt = prepare (core->db,
                  "UPDATE steps SET verdict = ?, code = ?, explanation = ?, usage = ?,"
                  "  cache = ?, budget = COALESCE (?, budget), model_calls = ?, actions = ?,"
                  "  target_x = ?, target_y = ?, target_width = ?, target_height = ?,"
                  "  finished_at = ?, instruction = COALESCE (?, instruction),"
                  "  label = COALESCE (?, label), options = COALESCE (?, options) "
                  "WHERE run_id = ? AND idx = ?", error);
  ok = stmt != NULL;
  if (ok)
    {
      bind_text (stmt, 1, sight_run_verdict_to_string (s->verdict));
      bind_text (stmt, 2, s->code);
      bind_text_take (stmt, 3, redact (core, s->explanation));
      bind_text_take (stmt, 4, redact (core, s->usage_json));
      bind_text_take (stmt, 5, redact (core, s->cache_json));
      bind_text_take (stmt, 6, redact (core, s->budget_json));
      sqlite3_bind_int (stmt, 7, s->model_calls);
      sqlite3_bind_int (stmt, 8, s->actions);
      if (s->has_target)
        {
          sqlite3_bind_double (stmt, 9, s->target_x);
          sqlite3_bind_double (stmt, 10, s->target_y);
          sqlite3_bind_double (stmt, 11, s->target_width);
          sqlite3_bind_double (stmt, 12, s->target_height);
        }
      sqlite3_bind_int64 (stmt, 13, s->finished_at ? s->finished_at : g_get_real_time ());
      bind_text_take (stmt, 14, redact (core, s->instruction));
      bind_text_take (stmt, 15, redact (core, s->label));
      bind_text_take (stmt, 16, redact (core, s->options_json));
      bind_text (stmt, 17, s->run_id);
      sqlite3_bind_int (stmt, 18, s->index);
      ok = step_done (core->db, stmt, error);
      if (ok && sqlite3_changes (core->db) == 0)
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "No step %u in run %s", s->index, s->run_id);
          ok = FALSE;
        }
    }
  return commit_or_rollback (core->db, ok, error) ? GINT_TO_POINTER (TRUE) : NULL;
}

gboolean
sight_store_finish_step (SightStore             *self,
                         const SightStepRecord  *step,
                         GError                **error)
{
  g_return_val_if_fail (SIGHT_IS_STORE (self), FALSE);
  g_return_val_if_fail (step != NULL && step->run_id != NULL, FALSE);

  return store_run_sync (self, step->run_id, job_finish_step, step_copy (step),
                         (GDestroyNotify) sight_step_record_free, error) != NULL;
}

void
sight_store_finish_step_async (SightStore            *self,
                               const SightStepRecord *step,
                               GCancellable          *cancellable,
                               GAsyncReadyCallback    callback,
                               gpointer               user_data)
{
  g_return_if_fail (SIGHT_IS_STORE (self));
  g_return_if_fail (step != NULL && step->run_id != NULL);

  store_run_async (self, step->run_id, sight_store_finish_step_async, job_finish_step, step_copy (step),
                   (GDestroyNotify) sight_step_record_free, NULL,
                   cancellable, callback, user_data);
}

static gpointer
job_add_observation (StoreCore  *core,
                     gpointer    data,
                     GError    **error)
{
  SightObservationRecord *o = data;
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autoptr(GBytes) shot = NULL;
  g_autofree char *tree = NULL;
  g_autofree char *text = NULL;
  g_autoptr(GBytes) tree_z = NULL;
  g_autoptr(GBytes) text_z = NULL;
  gboolean ok;

  if (o->screenshot)
    {
      shot = redact_blob (core, o->screenshot, o->screenshot_mime, error);
      if (shot == NULL)
        return NULL;
    }
  tree = redact (core, o->tree_json);
  text = redact (core, o->tree_text);
  tree_z = compress_text (tree);
  text_z = compress_text (text);

  if (!begin_write (core->db, error))
    return NULL;
  stmt = prepare (core->db,
                  "INSERT INTO observations (run_id, step_idx, phase, url, title, tree,"
                  "  tree_text, screenshot, screenshot_mime, width, height, scale, created_at)"
                  " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", error);
  ok = stmt != NULL;
  if (ok)
    {
      bind_text (stmt, 1, o->run_id);
      bind_step_index (stmt, 2, o->step_index);
      bind_text (stmt, 3, o->phase ? o->phase : "after");
      bind_text_take (stmt, 4, redact (core, o->url));
      bind_text_take (stmt, 5, redact (core, o->title));
      bind_bytes (stmt, 6, tree_z);
      bind_bytes (stmt, 7, text_z);
      bind_bytes (stmt, 8, shot);
      bind_text (stmt, 9, o->screenshot_mime);
      sqlite3_bind_int (stmt, 10, o->width);
      sqlite3_bind_int (stmt, 11, o->height);
      sqlite3_bind_double (stmt, 12, o->scale > 0 ? o->scale : 1.0);
      sqlite3_bind_int64 (stmt, 13, o->created_at ? o->created_at : g_get_real_time ());
      ok = step_done (core->db, stmt, error);
    }
  return commit_or_rollback (core->db, ok, error) ? GINT_TO_POINTER (TRUE) : NULL;
}

gboolean
sight_store_add_observation (SightStore                    *self,
                             const SightObservationRecord  *observation,
                             GError                       **error)
{
  g_return_val_if_fail (SIGHT_IS_STORE (self), FALSE);
  g_return_val_if_fail (observation != NULL && observation->run_id != NULL, FALSE);

  return store_run_sync (self, observation->run_id, job_add_observation, observation_copy (observation),
                         (GDestroyNotify) sight_observation_record_free, error) != NULL;
}

void
sight_store_add_observation_async (SightStore                   *self,
                                   const SightObservationRecord *observation,
                                   GCancellable                 *cancellable,
                                   GAsyncReadyCallback           callback,
                                   gpointer                      user_data)
{
  g_return_if_fail (SIGHT_IS_STORE (self));
  g_return_if_fail (observation != NULL && observation->run_id != NULL);

  store_run_async (self, observation->run_id, sight_store_add_observation_async, job_add_observation,
                   observation_copy (observation),
                   (GDestroyNotify) sight_observation_record_free, NULL,
                   cancellable, callback, user_data);
}

static void
bind_int_or_null (sqlite3_stmt *stmt,
                  int           i,
                  gint64        v)
{
  if (v >= 0)
    sqlite3_bind_int64 (stmt, i, v);
  else
    sqlite3_bind_null (stmt, i);
}

static gpointer
job_add_model_call (StoreCore  *core,
                    gpointer    data,
                    GError    **error)
{
  SightModelCallRecord *m = data;
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autofree char *request = redact (core, m->request_json);
  g_autofree char *response = redact (core, m->response_json);
  g_autoptr(GBytes) request_z = compress_text (request);
  g_autoptr(GBytes) response_z = compress_text (response);
  gboolean ok;

  if (!begin_write (core->db, error))
    return NULL;
  stmt = prepare (core->db,
                  "INSERT INTO model_calls (run_id, step_idx, provider, model, request, response,"
                  "  input_tokens, output_tokens, cost_micros, latency_ms, request_id, created_at)"
                  " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", error);
  ok = stmt != NULL;
  if (ok)
    {
      bind_text (stmt, 1, m->run_id);
      bind_step_index (stmt, 2, m->step_index);
      bind_text (stmt, 3, m->provider);
      bind_text (stmt, 4, m->model);
      bind_bytes (stmt, 5, request_z);
      bind_bytes (stmt, 6, response_z);
      bind_int_or_null (stmt, 7, m->input_tokens);
      bind_int_or_null (stmt, 8, m->output_tokens);
      bind_int_or_null (stmt, 9, m->cost_micros);
      sqlite3_bind_int64 (stmt, 10, m->latency_ms);
      bind_text_take (stmt, 11, redact (core, m->request_id));
      sqlite3_bind_int64 (stmt, 12, m->created_at ? m->created_at : g_get_real_time ());
      ok = step_done (core->db, stmt, error);
    }
  return commit_or_rollback (core->db, ok, error) ? GINT_TO_POINTER (TRUE) : NULL;
}

gboolean
sight_store_add_model_call (SightStore                  *self,
                            const SightModelCallRecord  *call,
                            GError                     **error)
{
  g_return_val_if_fail (SIGHT_IS_STORE (self), FALSE);
  g_return_val_if_fail (call != NULL && call->run_id != NULL, FALSE);

  return store_run_sync (self, call->run_id, job_add_model_call, model_call_copy (call),
                         (GDestroyNotify) sight_model_call_record_free, error) != NULL;
}

void
sight_store_add_model_call_async (SightStore                 *self,
                                  const SightModelCallRecord *call,
                                  GCancellable               *cancellable,
                                  GAsyncReadyCallback         callback,
                                  gpointer                    user_data)
{
  g_return_if_fail (SIGHT_IS_STORE (self));
  g_return_if_fail (call != NULL && call->run_id != NULL);

  store_run_async (self, call->run_id, sight_store_add_model_call_async, job_add_model_call,
                   model_call_copy (call), (GDestroyNotify) sight_model_call_record_free, NULL,
                   cancellable, callback, user_data);
}

static gpointer
job_add_log (StoreCore  *core,
             gpointer    data,
             GError    **error)
{
  SightLogRecord *l = data;
  g_autoptr(sqlite3_stmt) stmt = NULL;
  gboolean ok;

  if (!begin_write (core->db, error))
    return NULL;
  stmt = prepare (core->db,
                  "INSERT INTO logs (run_id, step_idx, kind, level, text, url, status, created_at)"
                  " VALUES (?, ?, ?, ?, ?, ?, ?, ?)", error);
  ok = stmt != NULL;
  if (ok)
    {
      bind_text (stmt, 1, l->run_id);
      bind_step_index (stmt, 2, l->step_index);
      bind_text (stmt, 3, l->kind ? l->kind : "console");
      bind_text (stmt, 4, l->level);
      bind_text_take (stmt, 5, redact (core, l->text));
      bind_text_take (stmt, 6, redact (core, l->url));
      sqlite3_bind_int (stmt, 7, l->status);
      sqlite3_bind_int64 (stmt, 8, l->created_at ? l->created_at : g_get_real_time ());
      ok = step_done (core->db, stmt, error);
    }
  return commit_or_rollback (core->db, ok, error) ? GINT_TO_POINTER (TRUE) : NULL;
}

gboolean
sight_store_add_log (SightStore            *self,
                     const SightLogRecord  *log,
                     GError               **error)
{
  g_return_val_if_fail (SIGHT_IS_STORE (self), FALSE);
  g_return_val_if_fail (log != NULL && log->run_id != NULL, FALSE);

  return store_run_sync (self, log->run_id, job_add_log, log_copy (log),
                         (GDestroyNotify) sight_log_record_free, error) != NULL;
}

void
sight_store_add_log_async (SightStore           *self,
                           const SightLogRecord *log,
                           GCancellable         *cancellable,
                           GAsyncReadyCallback   callback,
                           gpointer              user_data)
{
  g_return_if_fail (SIGHT_IS_STORE (self));
  g_return_if_fail (log != NULL && log->run_id != NULL);

  store_run_async (self, log->run_id, sight_store_add_log_async, job_add_log, log_copy (log),
                   (GDestroyNotify) sight_log_record_free, NULL,
                   cancellable, callback, user_data);
}

static gpointer
job_add_artifact (StoreCore  *core,
                  gpointer    data,
                  GError    **error)
{
  SightArtifactRecord *a = data;
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autoptr(GBytes) bytes = NULL;
  gboolean ok;

  if (a->data)
    {
      bytes = redact_blob (core, a->data, a->mime, error);
      if (bytes == NULL)
        return NULL;
    }
  if (!begin_write (core->db, error))
    return NULL;
  stmt = prepare (core->db,
                  "INSERT INTO artifacts (run_id, step_idx, name, mime, data, created_at)"
                  " VALUES (?, ?, ?, ?, ?, ?)", error);
  ok = stmt != NULL;
  if (ok)
    {
      bind_text (stmt, 1, a->run_id);
      bind_step_index (stmt, 2, a->step_index);
      bind_text_take (stmt, 3, redact (core, a->name ? a->name : "artifact"));
      bind_text (stmt, 4, a->mime);
      bind_bytes (stmt, 5, bytes);
      sqlite3_bind_int64 (stmt, 6, a->created_at ? a->created_at : g_get_real_time ());
      ok = step_done (core->db, stmt, error);
    }
  return commit_or_rollback (core->db, ok, error) ? GINT_TO_POINTER (TRUE) : NULL;
}

gboolean
sight_store_add_artifact (SightStore                 *self,
                          const SightArtifactRecord  *artifact,
                          GError                    **error)
{
  g_return_val_if_fail (SIGHT_IS_STORE (self), FALSE);
  g_return_val_if_fail (artifact != NULL && artifact->run_id != NULL, FALSE);

  return store_run_sync (self, artifact->run_id, job_add_artifact, artifact_copy (artifact),
                         (GDestroyNotify) sight_artifact_record_free, error) != NULL;
}

void
sight_store_add_artifact_async (SightStore                *self,
                                const SightArtifactRecord *artifact,
                                GCancellable              *cancellable,
                                GAsyncReadyCallback        callback,
                                gpointer                   user_data)
{
  g_return_if_fail (SIGHT_IS_STORE (self));
  g_return_if_fail (artifact != NULL && artifact->run_id != NULL);

  store_run_async (self, artifact->run_id, sight_store_add_artifact_async, job_add_artifact,
                   artifact_copy (artifact), (GDestroyNotify) sight_artifact_record_free, NULL,
                   cancellable, callback, user_data);
}

static gpointer
job_finish_run (StoreCore  *core,
                gpointer    data,
                GError    **error)
{
  SightRunRecord *r = data;
  g_autoptr(sqlite3_stmt) steps = NULL;
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autofree char *notes = notes_to_json (r->notes);
  g_autofree char *unstored = g_strdup (g_hash_table_lookup (core->unstored, r->id));
  gint64 finished = r->finished_at ? r->finished_at : g_get_real_time ();
  gboolean ok;

  /* A write of the run failed: what is stored is not the run, so it ends
   * as an error that says so, and the caller hears it. */
  if (unstored != NULL)
    run_mark_unstored (r, unstored);
  ok = begin_write (core->db, error);
  if (!ok)
    goto failed;
  steps = prepare (core->db,
                   "UPDATE steps SET verdict = 'interrupted', finished_at = ?"
                   " WHERE run_id = ? AND verdict = 'running'", error);
  ok = steps != NULL;
  if (ok)
    {
      sqlite3_bind_int64 (steps, 1, finished);
      bind_text (steps, 2, r->id);
      ok = step_done (core->db, steps, error);
    }
  if (ok)
    {
      stmt = prepare (core->db,
                      "UPDATE runs SET verdict = ?, code = ?, explanation = ?, final_url = ?,"
                      "  answer = ?, notes = ?, finished_at = ? WHERE id = ?", error);
      ok = stmt != NULL;
    }
  if (ok)
    {
      bind_text (stmt, 1, sight_run_verdict_to_string (r->verdict));
      bind_text (stmt, 2, r->code);
      bind_text_take (stmt, 3, redact (core, r->explanation));
      bind_text_take (stmt, 4, redact (core, r->final_url));
      bind_text_take (stmt, 5, redact (core, r->answer));
      bind_text_take (stmt, 6, redact (core, notes));
      sqlite3_bind_int64 (stmt, 7, finished);
      bind_text (stmt, 8, r->id);
      ok = step_done (core->db, stmt, error);
      if (ok && sqlite3_changes (core->db) == 0)
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "No run %s", r->id);
          ok = FALSE;
        }
    }
  ok = commit_or_rollback (core->db, ok, error);

failed:
  if (!ok)
    {
      note_unstored (core, r->id, *error);
      if (g_hash_table_contains (core->unstored, r->id))
        g_prefix_error (error, UNSTORED);
      return NULL;
    }
  if (unstored != NULL)
    {
      /* The database says it now. */
      g_hash_table_remove (core->unstored, r->id);
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   UNSTORED "%s", unstored);
      return NULL;
    }
  return GINT_TO_POINTER (TRUE);
}

gboolean
sight_store_finish_run (SightStore            *self,
                        const SightRunRecord  *run,
                        GError               **error)
{
  g_return_val_if_fail (SIGHT_IS_STORE (self), FALSE);
  g_return_val_if_fail (run != NULL && run->id != NULL, FALSE);

  return store_run_sync (self, NULL, job_finish_run, run_copy (run),
                         (GDestroyNotify) sight_run_record_free, error) != NULL;
}

void
sight_store_finish_run_async (SightStore           *self,
                              const SightRunRecord *run,
                              GCancellable         *cancellable,
                              GAsyncReadyCallback   callback,
                              gpointer              user_data)
{
  g_return_if_fail (SIGHT_IS_STORE (self));
  g_return_if_fail (run != NULL && run->id != NULL);

  store_run_async (self, NULL, sight_store_finish_run_async, job_finish_run, run_copy (run),
                   (GDestroyNotify) sight_run_record_free, NULL,
                   cancellable, callback, user_data);
}

gboolean
sight_store_write_finish (SightStore    *self,
                          GAsyncResult  *result,
                          GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_pointer (G_TASK (result), error) != NULL;
}

/* ------------------------------------------------------------------- reads */

#define RUN_COLUMNS \
  "r.id, r.session_id, r.kind, r.name, r.url, r.verdict, r.code, r.explanation," \
  " r.final_url, r.answer, r.notes, r.started_at, r.finished_at"

static SightRunRecord *
run_from_row (StoreCore    *core,
              sqlite3_stmt *stmt)
{
  const char *unstored;
  SightRunRecord *r = g_new0 (SightRunRecord, 1);
  g_autofree char *verdict = NULL;
  g_autofree char *notes = NULL;

  r->id = col_text (stmt, 0);
  r->session_id = col_text (stmt, 1);
  r->kind = col_text (stmt, 2);
  r->name = col_text (stmt, 3);
  r->url = col_text (stmt, 4);
  verdict = col_text (stmt, 5);
  r->verdict = verdict_parse (verdict);
  r->code = col_text (stmt, 6);
  r->explanation = col_text (stmt, 7);
  r->final_url = col_text (stmt, 8);
  r->answer = col_text (stmt, 9);
  notes = col_text (stmt, 10);
  r->notes = notes_from_json (notes);
  r->started_at = sqlite3_column_int64 (stmt, 11);
  r->finished_at = sqlite3_column_int64 (stmt, 12);
  r->cost_micros = -1;
  unstored = r->id != NULL ? g_hash_table_lookup (core->unstored, r->id) : NULL;
  if (unstored != NULL)
    run_mark_unstored (r, unstored);
  return r;
}

typedef struct {
  guint    limit;
  char    *verdict;
  gboolean unindexed;
} ListRunsData;

static void
list_runs_data_free (ListRunsData *d)
{
  g_free (d->verdict);
  g_free (d);
}

static gpointer
job_list_runs (StoreCore  *core,
               gpointer    data,
               GError    **error)
{
  ListRunsData *d = data;
  g_autoptr(GPtrArray) runs = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_run_record_free);
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autofree char *sql = NULL;
  int rc;

  /* rowid breaks ties: it is part of the started_at indexes, so the newest
   * rows come straight off the index without sorting the table. */
  sql = g_strdup_printf ("WITH r AS (SELECT * FROM runs %s %s"
                         "  ORDER BY started_at DESC, rowid DESC LIMIT ?1) "
                         "SELECT " RUN_COLUMNS ", COUNT (s.idx),"
                         "  TOTAL (s.verdict = 'pass'), TOTAL (s.verdict IN ('fail', 'error')),"
                         "  TOTAL (s.verdict = 'skipped'), TOTAL (s.model_calls), TOTAL (s.actions) "
                         "FROM r LEFT JOIN steps s ON s.run_id = r.id "
                         "GROUP BY r.id ORDER BY r.started_at DESC, r.id DESC",
                         d->unindexed ? "NOT INDEXED" : "",
                         d->verdict ? "WHERE verdict = ?2" : "");
  stmt = prepare (core->db, sql, error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int (stmt, 1, d->limit ? (int) MIN (d->limit, G_MAXINT) : -1);
  if (d->verdict)
    bind_text (stmt, 2, d->verdict);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      SightRunRecord *r = run_from_row (core, stmt);

      r->n_steps = sqlite3_column_int (stmt, 13);
      r->n_steps_passed = (guint) sqlite3_column_double (stmt, 14);
      r->n_steps_failed = (guint) sqlite3_column_double (stmt, 15);
      r->n_steps_skipped = (guint) sqlite3_column_double (stmt, 16);
      r->model_calls = (guint) sqlite3_column_double (stmt, 17);
      r->actions = (guint) sqlite3_column_double (stmt, 18);
      g_ptr_array_add (runs, r);
    }
  if (rc != SQLITE_DONE)
    {
      g_propagate_error (error, db_error (core->db, "listing runs"));
      return NULL;
    }
  return g_steal_pointer (&runs);
}

static ListRunsData *
list_runs_data_new (guint       limit,
                    const char *verdict,
                    gboolean    unindexed)
{
  ListRunsData *d = g_new0 (ListRunsData, 1);

  d->limit = limit;
  d->verdict = g_strdup (verdict);
  d->unindexed = unindexed;
  return d;
}

GPtrArray *
sight_store_list_runs (SightStore  *self,
                       guint        limit,
                       const char  *verdict_filter,
                       GError     **error)
{
  g_return_val_if_fail (SIGHT_IS_STORE (self), NULL);

  return store_run_sync (self, NULL, job_list_runs, list_runs_data_new (limit, verdict_filter, FALSE),
                         (GDestroyNotify) list_runs_data_free, error);
}

GPtrArray *
_sight_store_list_runs_unindexed (SightStore  *self,
                                  guint        limit,
                                  GError     **error)
{
  return store_run_sync (self, NULL, job_list_runs, list_runs_data_new (limit, NULL, TRUE),
                         (GDestroyNotify) list_runs_data_free, error);
}

void
sight_store_list_runs_async (SightStore          *self,
                             guint                limit,
                             const char          *verdict_filter,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  g_return_if_fail (SIGHT_IS_STORE (self));

  store_run_async (self, NULL, sight_store_list_runs_async, job_list_runs,
                   list_runs_data_new (limit, verdict_filter, FALSE),
                   (GDestroyNotify) list_runs_data_free, (GDestroyNotify) g_ptr_array_unref,
                   cancellable, callback, user_data);
}

GPtrArray *
sight_store_list_runs_finish (SightStore    *self,
                              GAsyncResult  *result,
                              GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static gpointer
job_load_run (StoreCore  *core,
              gpointer    data,
              GError    **error)
{
  const char *run_id = data;
  g_autoptr(SightRunData) d = g_new0 (SightRunData, 1);
  g_autoptr(sqlite3_stmt) stmt = NULL;
  gboolean any_cost = FALSE;
  guint step_calls = 0;
  int rc;

  /* One read transaction, so the parts agree with each other. */
  if (!exec_sql (core->db, "BEGIN", error))
    return NULL;

  stmt = prepare (core->db, "SELECT " RUN_COLUMNS " FROM runs r WHERE r.id = ?", error);
  if (stmt == NULL)
    goto fail;
  bind_text (stmt, 1, run_id);
  if (sqlite3_step (stmt) != SQLITE_ROW)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "No run %s in the run database", run_id);
      goto fail;
    }
  d->run = run_from_row (core, stmt);
  g_clear_pointer (&stmt, sqlite3_finalize);

  d->steps = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_step_record_free);
  stmt = prepare (core->db,
                  "SELECT run_id, idx, kind, label, instruction, options, verdict, code,"
                  "  explanation, usage, cache, budget, model_calls, actions, target_x, target_y,"
                  "  target_width, target_height, started_at, finished_at"
                  " FROM steps WHERE run_id = ? ORDER BY idx", error);
  if (stmt == NULL)
    goto fail;
  bind_text (stmt, 1, run_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      SightStepRecord *s = g_new0 (SightStepRecord, 1);
      g_autofree char *verdict = NULL;

      s->run_id = col_text (stmt, 0);
      s->index = sqlite3_column_int (stmt, 1);
      s->kind = col_text (stmt, 2);
      s->label = col_text (stmt, 3);
      s->instruction = col_text (stmt, 4);
      s->options_json = col_text (stmt, 5);
      verdict = col_text (stmt, 6);
      s->verdict = verdict_parse (verdict);
      s->code = col_text (stmt, 7);
      s->explanation = col_text (stmt, 8);
      s->usage_json = col_text (stmt, 9);
      s->cache_json = col_text (stmt, 10);
      s->budget_json = col_text (stmt, 11);
      s->model_calls = sqlite3_column_int (stmt, 12);
      s->actions = sqlite3_column_int (stmt, 13);
      s->has_target = sqlite3_column_type (stmt, 14) != SQLITE_NULL;
      s->target_x = sqlite3_column_double (stmt, 14);
      s->target_y = sqlite3_column_double (stmt, 15);
      s->target_width = sqlite3_column_double (stmt, 16);
      s->target_height = sqlite3_column_double (stmt, 17);
      s->started_at = sqlite3_column_int64 (stmt, 18);
      s->finished_at = sqlite3_column_int64 (stmt, 19);

      d->run->n_steps++;
      if (s->verdict == SIGHT_RUN_VERDICT_PASS)
        d->run->n_steps_passed++;
      else if (s->verdict == SIGHT_RUN_VERDICT_FAIL || s->verdict == SIGHT_RUN_VERDICT_ERROR)
        d->run->n_steps_failed++;
      else if (s->verdict == SIGHT_RUN_VERDICT_SKIPPED)
        d->run->n_steps_skipped++;
      step_calls += s->model_calls;
      d->run->actions += s->actions;
      g_ptr_array_add (d->steps, s);
    }
  if (rc != SQLITE_DONE)
    goto fail_db;
  g_clear_pointer (&stmt, sqlite3_finalize);

  d->observations = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_observation_record_free);
  stmt = prepare (core->db,
                  "SELECT id, run_id, step_idx, phase, url, title, tree, tree_text, screenshot,"
                  "  screenshot_mime, width, height, scale, created_at"
                  " FROM observations WHERE run_id = ? ORDER BY id", error);
  if (stmt == NULL)
    goto fail;
  bind_text (stmt, 1, run_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      SightObservationRecord *o = g_new0 (SightObservationRecord, 1);
      g_autoptr(GBytes) tree = col_bytes (stmt, 6);
      g_autoptr(GBytes) text = col_bytes (stmt, 7);

      o->id = sqlite3_column_int64 (stmt, 0);
      o->run_id = col_text (stmt, 1);
      o->step_index = sqlite3_column_type (stmt, 2) == SQLITE_NULL ? -1 : sqlite3_column_int (stmt, 2);
      o->phase = col_text (stmt, 3);
      o->url = col_text (stmt, 4);
      o->title = col_text (stmt, 5);
      o->tree_json = decompress_text (tree);
      o->tree_text = decompress_text (text);
      o->screenshot = col_bytes (stmt, 8);
      o->screenshot_mime = col_text (stmt, 9);
      o->width = sqlite3_column_int (stmt, 10);
      o->height = sqlite3_column_int (stmt, 11);
      o->scale = sqlite3_column_double (stmt, 12);
      o->created_at = sqlite3_column_int64 (stmt, 13);
      g_ptr_array_add (d->observations, o);
    }
  if (rc != SQLITE_DONE)
    goto fail_db;
  g_clear_pointer (&stmt, sqlite3_finalize);

  d->model_calls = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_model_call_record_free);
  stmt = prepare (core->db,
                  "SELECT id, run_id, step_idx, provider, model, request, response, input_tokens,"
                  "  output_tokens, cost_micros, latency_ms, request_id, created_at"
                  " FROM model_calls WHERE run_id = ? ORDER BY id", error);
  if (stmt == NULL)
    goto fail;
  bind_text (stmt, 1, run_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      SightModelCallRecord *m = g_new0 (SightModelCallRecord, 1);
      g_autoptr(GBytes) request = col_bytes (stmt, 5);
      g_autoptr(GBytes) response = col_bytes (stmt, 6);

      m->id = sqlite3_column_int64 (stmt, 0);
      m->run_id = col_text (stmt, 1);
      m->step_index = sqlite3_column_type (stmt, 2) == SQLITE_NULL ? -1 : sqlite3_column_int (stmt, 2);
      m->provider = col_text (stmt, 3);
      m->model = col_text (stmt, 4);
      m->request_json = decompress_text (request);
      m->response_json = decompress_text (response);
      m->input_tokens = sqlite3_column_type (stmt, 7) == SQLITE_NULL ? -1 : sqlite3_column_int64 (stmt, 7);
      m->output_tokens = sqlite3_column_type (stmt, 8) == SQLITE_NULL ? -1 : sqlite3_column_int64 (stmt, 8);
      m->cost_micros = sqlite3_column_type (stmt, 9) == SQLITE_NULL ? -1 : sqlite3_column_int64 (stmt, 9);
      m->latency_ms = sqlite3_column_int64 (stmt, 10);
      m->request_id = col_text (stmt, 11);
      m->created_at = sqlite3_column_int64 (stmt, 12);
      if (m->input_tokens > 0)
        d->run->input_tokens += m->input_tokens;
      if (m->output_tokens > 0)
        d->run->output_tokens += m->output_tokens;
      if (m->cost_micros >= 0)
        {
          d->run->cost_micros = (any_cost ? d->run->cost_micros : 0) + m->cost_micros;
          any_cost = TRUE;
        }
      g_ptr_array_add (d->model_calls, m);
    }
  if (rc != SQLITE_DONE)
    goto fail_db;
  g_clear_pointer (&stmt, sqlite3_finalize);
  d->run->model_calls = MAX (step_calls, d->model_calls->len);

  d->logs = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_log_record_free);
  stmt = prepare (core->db,
                  "SELECT id, run_id, step_idx, kind, level, text, url, status, created_at"
                  " FROM logs WHERE run_id = ? ORDER BY id", error);
  if (stmt == NULL)
    goto fail;
  bind_text (stmt, 1, run_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      SightLogRecord *l = g_new0 (SightLogRecord, 1);

      l->id = sqlite3_column_int64 (stmt, 0);
      l->run_id = col_text (stmt, 1);
      l->step_index = sqlite3_column_type (stmt, 2) == SQLITE_NULL ? -1 : sqlite3_column_int (stmt, 2);
      l->kind = col_text (stmt, 3);
      l->level = col_text (stmt, 4);
      l->text = col_text (stmt, 5);
      l->url = col_text (stmt, 6);
      l->status = sqlite3_column_int (stmt, 7);
      l->created_at = sqlite3_column_int64 (stmt, 8);
      g_ptr_array_add (d->logs, l);
    }
  if (rc != SQLITE_DONE)
    goto fail_db;
  g_clear_pointer (&stmt, sqlite3_finalize);

  d->artifacts = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_artifact_record_free);
  stmt = prepare (core->db,
                  "SELECT id, run_id, step_idx, name, mime, data, created_at"
                  " FROM artifacts WHERE run_id = ? ORDER BY id", error);
  if (stmt == NULL)
    goto fail;
  bind_text (stmt, 1, run_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      SightArtifactRecord *a = g_new0 (SightArtifactRecord, 1);

      a->id = sqlite3_column_int64 (stmt, 0);
      a->run_id = col_text (stmt, 1);
      a->step_index = sqlite3_column_type (stmt, 2) == SQLITE_NULL ? -1 : sqlite3_column_int (stmt, 2);
      a->name = col_text (stmt, 3);
      a->mime = col_text (stmt, 4);
      a->data = col_bytes (stmt, 5);
      a->created_at = sqlite3_column_int64 (stmt, 6);
      g_ptr_array_add (d->artifacts, a);
    }
  if (rc != SQLITE_DONE)
    goto fail_db;
  g_clear_pointer (&stmt, sqlite3_finalize);

  sqlite3_exec (core->db, "COMMIT", NULL, NULL, NULL);
  return g_steal_pointer (&d);

fail_db:
  g_propagate_error (error, db_error (core->db, "reading a run"));
fail:
  g_clear_pointer (&stmt, sqlite3_finalize);
  sqlite3_exec (core->db, "ROLLBACK", NULL, NULL, NULL);
  return NULL;
}

SightRunData *
sight_store_load_run (SightStore  *self,
                      const char  *run_id,
                      GError     **error)
{
  g_return_val_if_fail (SIGHT_IS_STORE (self), NULL);
  g_return_val_if_fail (run_id != NULL, NULL);

  return store_run_sync (self, NULL, job_load_run, g_strdup (run_id), g_free, error);
}

void
sight_store_load_run_async (SightStore          *self,
                            const char          *run_id,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  g_return_if_fail (SIGHT_IS_STORE (self));
  g_return_if_fail (run_id != NULL);

  store_run_async (self, NULL, sight_store_load_run_async, job_load_run, g_strdup (run_id), g_free,
                   (GDestroyNotify) sight_run_data_free, cancellable, callback, user_data);
}

SightRunData *
sight_store_load_run_finish (SightStore    *self,
                             GAsyncResult  *result,
                             GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static gpointer
job_list_sessions (StoreCore  *core,
                   gpointer    data,
                   GError    **error)
{
  g_autoptr(GPtrArray) sessions = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_session_record_free);
  g_autoptr(sqlite3_stmt) stmt = NULL;
  int rc;

  stmt = prepare (core->db,
                  "SELECT id, title, status, created_at, ended_at FROM sessions"
                  " ORDER BY created_at DESC LIMIT ?", error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int (stmt, 1, GPOINTER_TO_UINT (data) ? (int) GPOINTER_TO_UINT (data) : -1);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      SightSessionRecord *s = g_new0 (SightSessionRecord, 1);

      s->id = col_text (stmt, 0);
      s->title = col_text (stmt, 1);
      s->status = col_text (stmt, 2);
      s->created_at = sqlite3_column_int64 (stmt, 3);
      s->ended_at = sqlite3_column_int64 (stmt, 4);
      g_ptr_array_add (sessions, s);
    }
  if (rc != SQLITE_DONE)
    {
      g_propagate_error (error, db_error (core->db, "listing sessions"));
      return NULL;
    }
  return g_steal_pointer (&sessions);
}

GPtrArray *
sight_store_list_sessions (SightStore  *self,
                           guint        limit,
                           GError     **error)
{
  g_return_val_if_fail (SIGHT_IS_STORE (self), NULL);

  return store_run_sync (self, NULL, job_list_sessions, GUINT_TO_POINTER (MIN (limit, G_MAXINT)), NULL, error);
}

static gpointer
job_integrity (StoreCore  *core,
               gpointer    data,
               GError    **error)
{
  g_autoptr(sqlite3_stmt) stmt = prepare (core->db, "PRAGMA integrity_check", error);
  const char *result;

  if (stmt == NULL)
    return NULL;
  if (sqlite3_step (stmt) != SQLITE_ROW)
    {
      g_propagate_error (error, db_error (core->db, "integrity_check"));
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

  return store_run_sync (self, NULL, job_integrity, NULL, NULL, error) != NULL;
}
