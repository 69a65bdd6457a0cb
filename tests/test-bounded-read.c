/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-bounded-read"

#include "config.h"

#include <gio/gio.h>

#include "sight-bounded-read.h"

static void
store_result_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

/* Reads @size bytes of letters with a bound of @max_bytes. */
static GBytes *
read_letters (gsize      size,
              gsize      max_bytes,
              gboolean  *truncated,
              GError   **error)
{
  g_autoptr(GInputStream) stream = NULL;
  GAsyncResult *result = NULL;
  GBytes *bytes;
  char *letters = g_malloc (size + 1);

  for (gsize i = 0; i < size; i++)
    letters[i] = 'a' + i % 26;
  stream = g_memory_input_stream_new_from_data (letters, size, g_free);
  sight_read_bounded_async (stream, max_bytes, 0, NULL, store_result_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  bytes = sight_read_bounded_finish (stream, result, truncated, error);
  g_object_unref (result);
  return bytes;
}

static void
test_sizes (void)
{
  /* Around the bound and across the reader's 256 KiB reads. */
  const gsize max = 600 * 1024;
  const gsize sizes[] = { 0, 1, 256 * 1024, max - 1, max, max + 1, 3 * max };

  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GBytes) bytes = NULL;
      gboolean truncated = TRUE;
      const char *data;

      bytes = read_letters (sizes[i], max, &truncated, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (g_bytes_get_size (bytes), ==, MIN (sizes[i], max));
      g_assert_cmpint (truncated, ==, sizes[i] > max);
      data = g_bytes_get_data (bytes, NULL);
      for (gsize j = 0; j < g_bytes_get_size (bytes); j += 4099)
        g_assert_cmpint (data[j], ==, 'a' + j % 26);
    }
}

static void
test_cancelled (void)
{
  g_autoptr(GInputStream) stream = g_memory_input_stream_new_from_data ("abc", 3, NULL);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = NULL;
  GAsyncResult *result = NULL;

  g_cancellable_cancel (cancellable);
  sight_read_bounded_async (stream, 10, 0, cancellable, store_result_cb, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  bytes = sight_read_bounded_finish (stream, result, NULL, &error);
  g_object_unref (result);
  g_assert_null (bytes);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/bounded-read/sizes", test_sizes);
  g_test_add_func ("/bounded-read/cancelled", test_cancelled);
  return g_test_run ();
}
