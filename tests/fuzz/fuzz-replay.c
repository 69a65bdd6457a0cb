/* fuzz-replay.c: runs every file of the directories (or files) given on the
 * command line through LLVMFuzzerTestOneInput() once, without libFuzzer.
 * A crash of the entry point crashes this program, which fails the test. */
#include "config.h"

#include <glib.h>
#include <stdio.h>

#include "sight-fuzz.h"

static guint n_inputs;

static void
replay_file (const char *path)
{
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_autoptr(GError) error = NULL;

  if (!g_file_get_contents (path, &contents, &length, &error))
    {
      g_printerr ("%s\n", error->message);
      exit (1);
    }
  LLVMFuzzerTestOneInput ((const uint8_t *) contents, length);
  n_inputs++;
}

static void
replay_path (const char *path)
{
  g_autoptr(GDir) dir = NULL;
  const char *name;
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);

  if (!g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      if (g_file_test (path, G_FILE_TEST_EXISTS))
        replay_file (path);
      return;
    }
  dir = g_dir_open (path, 0, NULL);
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    if (name[0] != '.')
      g_ptr_array_add (names, g_build_filename (path, name, NULL));
  g_ptr_array_sort (names, (GCompareFunc) g_strcmp0);
  for (guint i = 0; i < names->len; i++)
    replay_path (g_ptr_array_index (names, i));
}

int
main (int    argc,
      char **argv)
{
  for (int i = 1; i < argc; i++)
    replay_path (argv[i]);
  /* TAP, so meson counts it like the other tests. */
  printf ("1..1\nok 1 - %u inputs replayed without a crash\n", n_inputs);
  return n_inputs > 0 ? 0 : 1;
}
