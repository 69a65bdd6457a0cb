/* fuzz-json-schema.c: compiles a schema from the input and validates an
 * instance with it.  The input is "<schema>\n@@\n<instance>"; without the
 * separator the schema validates itself. */
#include "config.h"

#include <json-glib/json-glib.h>

#include "sight-json-schema.h"
#include "sight-fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autofree char *text = sight_fuzz_dup_text (data, size);
  char *separator = strstr (text, "\n@@\n");
  const char *instance_text = text;
  g_autoptr(GError) error = NULL;
  g_autoptr(SightJsonSchema) schema = NULL;
  g_autoptr(JsonParser) parser = NULL;
  g_autoptr(GPtrArray) errors = NULL;

  if (separator != NULL)
    {
      *separator = '\0';
      instance_text = separator + 4;
    }
  schema = sight_json_schema_new_from_string (text, &error);
  if (schema == NULL)
    return 0;
  parser = json_parser_new ();
  if (!json_parser_load_from_data (parser, instance_text, -1, NULL))
    return 0;
  if (json_parser_get_root (parser) == NULL)
    return 0;
  if (!sight_json_schema_validate (schema, json_parser_get_root (parser), &errors))
    {
      g_autofree char *message = sight_json_schema_errors_to_string (errors);
      g_autoptr(GError) check_error = NULL;

      if (sight_json_schema_check (schema, json_parser_get_root (parser), &check_error))
        abort ();
    }
  return 0;
}
