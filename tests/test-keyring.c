/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The keyring module and a step's reading of a keyring credential, headless:
 * base alone, nothing installed by the app. Run by tests/keyring-session.sh
 * inside a private D-Bus session with a fresh, unlocked GNOME keyring; the
 * faults (no Secret Service, one that never answers) run in a subprocess on a
 * private bus of their own (GTestDBus). */
#include "config.h"

#include <string.h>

#include "sight-error.h"
#include "sight-keyring.h"
#include "sight-project.h"
#include "sight-secrets.h"

#define DEADLINE_US (20 * G_USEC_PER_SEC)
#define TICK_MS 20

static const SecretSchema test_schema = {
  APP_ID ".Test", SECRET_SCHEMA_NONE,
  {
    { "provider", SECRET_SCHEMA_ATTRIBUTE_STRING },
    { NULL, 0 },
  }
};

static gboolean
keyring_available (void)
{
  if (g_getenv ("SIGHTLINE_TEST_KEYRING") != NULL)
    return TRUE;
  g_test_skip ("no private GNOME keyring (tests/keyring-session.sh)");
  return FALSE;
}

static gboolean
tick_cb (gpointer data)
{
  (*(guint *) data)++;
  return G_SOURCE_CONTINUE;
}

static void
result_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      data)
{
  *(GAsyncResult **) data = g_object_ref (result);
}

/* Runs the main loop until @result is set, counting TICK_MS ticks of a
 * timer on the same loop: a call that blocked the loop would stop them. */
static void
wait_for (GAsyncResult **result,
          guint         *ticks)
{
  gint64 deadline = g_get_monotonic_time () + DEADLINE_US;
  guint tick = g_timeout_add (TICK_MS, tick_cb, ticks);

  while (*result == NULL && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (tick);
  g_assert_nonnull (*result);
}

static GHashTable *
attributes (const char *key,
            const char *value)
{
  GHashTable *table = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

  g_hash_table_insert (table, g_strdup (key), g_strdup (value));
  return table;
}

static void
store (const SecretSchema *schema,
       GHashTable         *attrs,
       const char         *value)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  guint ticks = 0;

  sight_keyring_store_async (schema, attrs, "Sightline test item", value, 0, NULL, result_cb,
                             &result);
  wait_for (&result, &ticks);
  g_assert_true (sight_keyring_store_finish (result, &error));
  g_assert_no_error (error);
}

static char *
lookup (const SecretSchema *schema,
        GHashTable         *attrs)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  guint ticks = 0;
  char *value;

  sight_keyring_lookup_async (schema, attrs, 0, NULL, result_cb, &result);
  wait_for (&result, &ticks);
  value = sight_keyring_lookup_finish (result, &error);
  g_assert_no_error (error);
  return value;
}

/* One module for every item: with a schema (an API key) and without one (a
 * credential named by its attributes alone). */
static void
test_round_trip (void)
{
  g_autoptr(GHashTable) by_schema = attributes ("provider", "test-provider");
  g_autoptr(GHashTable) by_attributes = attributes ("credential", "round.trip");
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  char *value;
  guint ticks = 0;

  if (!keyring_available ())
    return;

  store (&test_schema, by_schema, "sk-test-0f1e2d3c");
  store (NULL, by_attributes, "caf\xc3\xa9-pw-7781");
  value = lookup (&test_schema, by_schema);
  g_assert_cmpstr (value, ==, "sk-test-0f1e2d3c");
  sight_keyring_value_free (value);
  value = lookup (NULL, by_attributes);
  g_assert_cmpstr (value, ==, "caf\xc3\xa9-pw-7781");
  sight_keyring_value_free (value);

  /* The schema is part of the name: the same attributes under another
   * schema are another item. */
  {
    g_autoptr(GHashTable) other = attributes ("provider", "test-provider");
    static const SecretSchema other_schema = {
      APP_ID ".Other", SECRET_SCHEMA_NONE,
      { { "provider", SECRET_SCHEMA_ATTRIBUTE_STRING }, { NULL, 0 } }
    };

    g_assert_null (lookup (&other_schema, other));
  }

  sight_keyring_clear_async (&test_schema, by_schema, 0, NULL, result_cb, &result);
  wait_for (&result, &ticks);
  g_assert_true (sight_keyring_clear_finish (result, &error));
  g_assert_no_error (error);
  g_assert_null (lookup (&test_schema, by_schema));
  /* Clearing what is not there is not an error. */
  g_clear_object (&result);
  sight_keyring_clear_async (&test_schema, by_schema, 0, NULL, result_cb, &result);
  wait_for (&result, &ticks);
  g_assert_true (sight_keyring_clear_finish (result, &error));
  g_assert_no_error (error);
}

static const char project_json[] =
  "{ \"credentials\": {\n"
  "    \"member.password\": { \"purpose\": \"password\",\n"
  "      \"allowedOrigins\": [\"http://127.0.0.1:8765\"],\n"
  "      \"source\": { \"keyring\": { \"application\": \"sightline-test\",\n"
  "                                 \"credential\": \"member.password\" } } },\n"
  "    \"member.otp\": { \"purpose\": \"one-time-code\",\n"
  "      \"allowedOrigins\": [\"http://127.0.0.1:8765\"],\n"
  "      \"source\": { \"keyring\": { \"application\": \"sightline-test\",\n"
  "                                 \"credential\": \"never-stored\" } } } } }";

static const char *
resolve (SightSecrets  *secrets,
         const char    *name,
         const char    *url,
         guint          timeout_ms,
         guint         *ticks,
         GError       **error)
{
  g_autoptr(GAsyncResult) result = NULL;

  sight_secrets_resolve_async (secrets, name, url, timeout_ms, NULL, result_cb, &result);
  wait_for (&result, ticks);
  return sight_secrets_resolve_finish (secrets, result, error);
}

/* A step's reading of a keyring credential works in any program that links
 * base: no resolver is installed by anyone. The old code read keyring
 * credentials only through the resolver app/main.c installed. */
static void
test_resolve_headless (void)
{
  const char *secret = "harbor-kr-91d0c4";
  g_autoptr(GHashTable) attrs = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(SightProject) project = NULL;
  g_autoptr(GError) error = NULL;
  SightSecrets *secrets;
  const char *value;
  guint ticks = 0;

  if (!keyring_available ())
    return;

  sight_secrets_forget_all ();
  g_hash_table_insert (attrs, (gpointer) "application", (gpointer) "sightline-test");
  g_hash_table_insert (attrs, (gpointer) "credential", (gpointer) "member.password");
  store (NULL, attrs, secret);
  project = sight_project_new_from_data (project_json, -1, NULL, &error);
  g_assert_no_error (error);
  secrets = sight_project_get_secrets (project);

  /* Not read yet: the call that never waits says so, and reads nothing. */
  g_assert_null (sight_secrets_resolve (secrets, "member.password", &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE);
  g_clear_error (&error);

  /* An origin not allowed is refused before the keyring is asked. */
  g_assert_null (resolve (secrets, "member.password", "http://evil.test/", 5000, &ticks,
                          &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_POLICY_DENIED);
  g_assert_null (strstr (error->message, secret));
  g_clear_error (&error);
  /* … and so is a page without an origin (about:blank). */
  g_assert_null (resolve (secrets, "member.password", NULL, 5000, &ticks, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_POLICY_DENIED);
  g_clear_error (&error);

  value = resolve (secrets, "member.password", "http://127.0.0.1:8765/login", 5000, &ticks,
                   &error);
  g_assert_no_error (error);
  g_assert_cmpstr (value, ==, secret);
  /* Kept: the call that never waits now has it, the same value. */
  g_assert_true (sight_secrets_resolve (secrets, "member.password", &error) == value);
  g_assert_no_error (error);
  /* … and the redactor knows it from the moment it was read. */
  {
    g_autofree char *log = sight_secrets_redact ("typed harbor-kr-91d0c4 into Password");

    g_assert_cmpstr (log, ==, "typed [secret:member.password] into Password");
  }

  /* An item the keyring does not hold: the credentials' code, saying why. */
  g_assert_null (resolve (secrets, "member.otp", "http://127.0.0.1:8765/", 5000, &ticks,
                          &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "member.otp"));
  g_assert_nonnull (strstr (error->message, "holds no value"));
  g_clear_error (&error);
  g_assert_null (resolve (secrets, "nobody", NULL, 5000, &ticks, &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE);
}

/* Locks the keyring's default collection, as a screen lock or a logout
 * would: no prompt is needed to lock. */
static void
lock_default_collection (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SecretService) service = secret_service_get_sync (SECRET_SERVICE_NONE, NULL, &error);
  g_autoptr(SecretCollection) collection = NULL;
  g_autolist(GDBusProxy) locked = NULL;
  GList objects = { NULL, NULL, NULL };

  g_assert_no_error (error);
  collection = secret_collection_for_alias_sync (service, SECRET_COLLECTION_DEFAULT,
                                                 SECRET_COLLECTION_NONE, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (collection);
  objects.data = collection;
  g_assert_cmpint (secret_service_lock_sync (service, &objects, NULL, &locked, &error), ==, 1);
  g_assert_no_error (error);
  g_assert_true (secret_collection_get_locked (collection));
}

/* A keyring that is locked: the credential's item is there, but reading it
 * would need an unlock nobody answers (a prompt on a display no one looks
 * at, or no prompter at all). The step gets AUTH_CREDENTIAL_UNAVAILABLE
 * naming the credential within its deadline, with the loop running all the
 * while and no value in the message; nothing is kept for the call that
 * never waits. */
static void
test_locked (void)
{
  const char *secret = "harbor-kr-locked-5e21";
  g_autoptr(GHashTable) attrs = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(SightProject) project = NULL;
  g_autoptr(GError) error = NULL;
  guint timeout_ms = 1500;
  guint ticks = 0;
  gint64 start, elapsed_ms;

  if (!keyring_available ())
    return;

  sight_secrets_forget_all ();
  g_hash_table_insert (attrs, (gpointer) "application", (gpointer) "sightline-test");
  g_hash_table_insert (attrs, (gpointer) "credential", (gpointer) "member.password");
  store (NULL, attrs, secret);
  lock_default_collection ();
  project = sight_project_new_from_data (project_json, -1, NULL, &error);
  g_assert_no_error (error);

  start = g_get_monotonic_time ();
  g_assert_null (resolve (sight_project_get_secrets (project), "member.password",
                          "http://127.0.0.1:8765/login", timeout_ms, &ticks, &error));
  elapsed_ms = (g_get_monotonic_time () - start) / 1000;
  g_test_message ("locked: %s after %" G_GINT64_FORMAT " ms, %u ticks of %u ms",
                  error ? error->message : "no error", elapsed_ms, ticks, TICK_MS);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "member.password"));
  g_assert_nonnull (strstr (error->message, "locked"));
  g_assert_null (strstr (error->message, secret));
  g_assert_cmpint (elapsed_ms, <, timeout_ms + 4000);
  /* The loop ran while the keyring was waited for (at a 20 ms tick; a
   * loaded machine gives fewer). */
  g_assert_cmpuint (ticks, >=, elapsed_ms / (TICK_MS * 4));
  g_clear_error (&error);
  g_assert_null (sight_secrets_resolve (sight_project_get_secrets (project), "member.password",
                                        &error));
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE);
}

/* A Secret Service that owns its name and never answers a call: every
 * message to it is dropped. */
static GDBusMessage *
swallow_cb (GDBusConnection *connection,
            GDBusMessage    *message,
            gboolean         incoming,
            gpointer         user_data)
{
  if (incoming && g_dbus_message_get_message_type (message) == G_DBUS_MESSAGE_TYPE_METHOD_CALL)
    {
      (*(int *) user_data)++;
      g_object_unref (message);
      return NULL;
    }
  return message;
}

static GDBusConnection *
hung_service (GTestDBus *bus,
              int       *calls)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = NULL;
  GDBusConnection *connection;
  guint32 owned;

  connection = g_dbus_connection_new_for_address_sync (
      g_test_dbus_get_bus_address (bus),
      G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
        G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
      NULL, NULL, &error);
  g_assert_no_error (error);
  reply = g_dbus_connection_call_sync (connection, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "RequestName",
                                       g_variant_new ("(su)", "org.freedesktop.secrets", 4u),
                                       G_VARIANT_TYPE ("(u)"), G_DBUS_CALL_FLAGS_NONE, 5000,
                                       NULL, &error);
  g_assert_no_error (error);
  g_variant_get (reply, "(u)", &owned);
  g_assert_cmpuint (owned, ==, 1);
  g_dbus_connection_add_filter (connection, swallow_cb, calls, NULL);
  return connection;
}

static const char hung_project_json[] =
  "{ \"credentials\": { \"member.password\": { \"purpose\": \"password\",\n"
  "    \"allowedOrigins\": [\"http://127.0.0.1:8765\"],\n"
  "    \"source\": { \"keyring\": { \"credential\": \"member.password\" } } } } }";

/* The fault cases, each on a private bus of its own. */
static void
run_fault (gboolean hung)
{
  g_autoptr(GTestDBus) bus = g_test_dbus_new (G_TEST_DBUS_NONE);
  g_autoptr(GDBusConnection) service = NULL;
  g_autoptr(SightProject) project = NULL;
  g_autoptr(GHashTable) attrs = attributes ("credential", "member.password");
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  guint timeout_ms = hung ? 600 : 5000;
  int calls = 0;
  guint ticks = 0;
  gint64 start, elapsed_ms;

  g_test_dbus_up (bus);
  if (hung)
    service = hung_service (bus, &calls);
  project = sight_project_new_from_data (hung_project_json, -1, NULL, &error);
  g_assert_no_error (error);

  start = g_get_monotonic_time ();
  g_assert_null (resolve (sight_project_get_secrets (project), "member.password",
                          "http://127.0.0.1:8765/", timeout_ms, &ticks, &error));
  elapsed_ms = (g_get_monotonic_time () - start) / 1000;
  g_test_message ("%s: %s after %" G_GINT64_FORMAT " ms, %u ticks of %u ms",
                  hung ? "hung" : "absent", error->message, elapsed_ms, ticks, TICK_MS);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "member.password"));
  if (hung)
    {
      g_assert_nonnull (strstr (error->message, "did not answer within 600 ms"));
      g_assert_cmpint (calls, >, 0);
      g_assert_cmpint (elapsed_ms, >=, 600 - 50);
      g_assert_cmpint (elapsed_ms, <, 600 + 4000);
      /* The loop ran while the keyring was waited for: at a 20 ms tick, a
       * 600 ms wait gives about 30 (a loaded machine gives fewer). */
      g_assert_cmpuint (ticks, >=, 10);
    }
  else
    {
      g_assert_nonnull (strstr (error->message, "not available"));
      g_assert_cmpint (elapsed_ms, <, 5000);
    }
  g_clear_error (&error);

  /* Every keyring call has the deadline, not only a step's lookup. */
  if (hung)
    {
      sight_keyring_store_async (NULL, attrs, "Sightline test item", "never-stored", 300, NULL,
                                 result_cb, &result);
      wait_for (&result, &ticks);
      g_assert_false (sight_keyring_store_finish (result, &error));
      g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE);
      g_assert_nonnull (strstr (error->message, "within 300 ms"));
    }
  /* Not g_test_dbus_down(): libsecret keeps the bus connection for the
   * process, which ends here. */
  g_test_dbus_stop (bus);
}

static void
test_fault (gconstpointer data)
{
  gboolean hung = GPOINTER_TO_INT (data);

  if (g_test_subprocess ())
    {
      run_fault (hung);
      return;
    }
  g_test_trap_subprocess (NULL, 60 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/keyring/round-trip", test_round_trip);
  g_test_add_func ("/keyring/resolve-headless", test_resolve_headless);
  /* Last of the tests on the session's keyring: it leaves it locked. */
  g_test_add_func ("/keyring/locked", test_locked);
  g_test_add_data_func ("/keyring/absent-service", GINT_TO_POINTER (FALSE), test_fault);
  g_test_add_data_func ("/keyring/hung-service", GINT_TO_POINTER (TRUE), test_fault);
  return g_test_run ();
}
