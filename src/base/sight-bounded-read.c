/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-bounded-read"

#include "config.h"

#include "sight-bounded-read.h"

#define READ_BYTES (256 * 1024)

typedef struct
{
  GByteArray   *bytes;
  gsize         max_bytes;
  gboolean      truncated;
  /* The idle timeout: each read runs under its own cancellable, cancelled
   * by the caller's or by the timer. */
  guint         idle_timeout_ms;
  GSource      *idle_source;
  GCancellable *read_cancellable;
  GCancellable *outer_cancellable;
  gulong        outer_handler;
  gboolean      idle_timed_out;
} Read;

static void
read_free (Read *read)
{
  if (read->idle_source != NULL)
    g_source_destroy (read->idle_source);
  g_clear_pointer (&read->idle_source, g_source_unref);
  if (read->outer_handler != 0)
    g_cancellable_disconnect (read->outer_cancellable, read->outer_handler);
  g_clear_object (&read->outer_cancellable);
  g_clear_object (&read->read_cancellable);
  g_clear_pointer (&read->bytes, g_byte_array_unref);
  g_free (read);
}

static gboolean
idle_timeout_cb (gpointer user_data)
{
  Read *read = user_data;

  g_clear_pointer (&read->idle_source, g_source_unref);
  read->idle_timed_out = TRUE;
  g_cancellable_cancel (read->read_cancellable);
  return G_SOURCE_REMOVE;
}

static void
outer_cancelled_cb (GCancellable *outer,
                    GCancellable *inner)
{
  g_cancellable_cancel (inner);
}

static void read_more (GTask *task);

static void
read_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  Read *read = g_task_get_task_data (task);
  g_autoptr(GBytes) chunk = NULL;
  GError *error = NULL;

  if (read->idle_source != NULL)
    g_source_destroy (read->idle_source);
  g_clear_pointer (&read->idle_source, g_source_unref);
  chunk = g_input_stream_read_bytes_finish (G_INPUT_STREAM (source), result, &error);
  if (chunk == NULL)
    {
      if (read->idle_timed_out)
        {
          g_clear_error (&error);
          g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                                   "no data for %u ms after %u bytes", read->idle_timeout_ms,
                                   read->bytes->len);
          return;
        }
      g_task_return_error (task, error);
      return;
    }
  if (g_bytes_get_size (chunk) == 0)
    {
      g_task_return_pointer (task, g_byte_array_free_to_bytes (g_steal_pointer (&read->bytes)),
                             (GDestroyNotify) g_bytes_unref);
      return;
    }
  g_byte_array_append (read->bytes, g_bytes_get_data (chunk, NULL), g_bytes_get_size (chunk));
  if (read->bytes->len > read->max_bytes)
    {
      /* One byte past the limit is enough to know: the rest stays unread. */
      g_byte_array_set_size (read->bytes, read->max_bytes);
      read->truncated = TRUE;
      g_task_return_pointer (task, g_byte_array_free_to_bytes (g_steal_pointer (&read->bytes)),
                             (GDestroyNotify) g_bytes_unref);
      return;
    }
  read_more (g_steal_pointer (&task));
}

static void
read_more (GTask *task)
{
  Read *read = g_task_get_task_data (task);
  gsize count = MIN ((gsize) READ_BYTES, read->max_bytes - read->bytes->len + 1);

  if (read->idle_timeout_ms > 0)
    {
      read->idle_source = g_timeout_source_new (read->idle_timeout_ms);
      g_source_set_callback (read->idle_source, idle_timeout_cb, read, NULL);
      g_source_attach (read->idle_source, g_main_context_get_thread_default ());
    }
  g_input_stream_read_bytes_async (g_task_get_source_object (task), count,
                                   g_task_get_priority (task), read->read_cancellable,
                                   read_cb, task);
}

/**
 * sight_read_bounded_async:
 * @stream: the stream to read to its end
 * @max_bytes: the most that is kept
 * @idle_timeout_ms: the longest wait for the next bytes (0: no limit)
 * @cancellable: (nullable): stops the reading
 * @callback: called with the bytes read
 * @user_data: for @callback
 *
 * Reads @stream to its end or past @max_bytes.
 */
void
sight_read_bounded_async (GInputStream        *stream,
                          gsize                max_bytes,
                          guint                idle_timeout_ms,
                          GCancellable        *cancellable,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  Read *read;

  g_return_if_fail (G_IS_INPUT_STREAM (stream));
  g_return_if_fail (max_bytes < G_MAXUINT);

  task = g_task_new (stream, cancellable, callback, user_data);
  g_task_set_source_tag (task, sight_read_bounded_async);
  read = g_new0 (Read, 1);
  read->bytes = g_byte_array_new ();
  read->max_bytes = max_bytes;
  read->idle_timeout_ms = idle_timeout_ms;
  read->read_cancellable = g_cancellable_new ();
  if (cancellable != NULL)
    {
      read->outer_cancellable = g_object_ref (cancellable);
      read->outer_handler = g_cancellable_connect (cancellable, G_CALLBACK (outer_cancelled_cb),
                                                   g_object_ref (read->read_cancellable),
                                                   g_object_unref);
    }
  g_task_set_task_data (task, read, (GDestroyNotify) read_free);
  read_more (g_steal_pointer (&task));
}

/**
 * sight_read_bounded_finish:
 * @stream: the stream that was read
 * @result: the result given to the callback
 * @truncated: (out) (optional): set when more than the bytes returned followed
 * @error: the stream's error
 *
 * Returns: (transfer full): what was read, at most the @max_bytes given
 */
GBytes *
sight_read_bounded_finish (GInputStream  *stream,
                           GAsyncResult  *result,
                           gboolean      *truncated,
                           GError       **error)
{
  Read *read;

  g_return_val_if_fail (g_task_is_valid (result, stream), NULL);

  read = g_task_get_task_data (G_TASK (result));
  if (truncated != NULL)
    *truncated = read->truncated;
  return g_task_propagate_pointer (G_TASK (result), error);
}
