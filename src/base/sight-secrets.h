/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Credentials of the project file and the redactor that keeps their values out of
 * logs, the database, reports, model requests and MCP replies.
 *
 * A credential is declared by name with a purpose and the origins it may be typed
 * into; its value stays host-side and is only read when a step is about to fill it
 * (sight_secrets_resolve).  Every value read, and every value registered with
 * sight_secrets_register_value, is known to the process-wide redactor, which
 * replaces it, and its URL-encoded, base64, HTML-escaped and JSON-escaped forms,
 * with "[secret:NAME]". */

typedef enum {
  SIGHT_CREDENTIAL_SOURCE_ENV,
  SIGHT_CREDENTIAL_SOURCE_FILE,
  SIGHT_CREDENTIAL_SOURCE_KEYRING,
  /* A value given directly (tests, a value a person typed into a secure field). */
  SIGHT_CREDENTIAL_SOURCE_VALUE,
} SightCredentialSource;

typedef struct {
  char                  *name;
  /* "username", "email", "password", "new-password" or "one-time-code" */
  char                  *purpose;
  /* normalized origins, "scheme://host[:port]" (default ports dropped) */
  GStrv                  allowed_origins;
  SightCredentialSource  source;
  /* ENV: the variable name; FILE: an absolute path; VALUE: the value */
  char                  *source_arg;
  /* KEYRING: attribute name → value (owned strings) */
  GHashTable            *keyring_attributes;
} SightCredential;

SightCredential *sight_credential_copy     (const SightCredential *cred);
void             sight_credential_free     (SightCredential       *cred);

/* The purposes a credential may declare. */
gboolean         sight_credential_purpose_is_valid (const char *purpose);
/* Those purposes, NULL-terminated, in the table's order (for choosers). */
const char * const *sight_credential_purposes     (void);

/* "scheme://host[:port]" of @url_or_origin, lower-cased, default port dropped,
 * the host in its ASCII (IDNA, punycode) form as WebKit writes it; NULL when
 * it has no scheme and host (e.g. "about:blank", "data:…") or a host that
 * has no ASCII form. */
char            *sight_origin_normalize    (const char *url_or_origin);

/* @host (UTF-8) as WebKit writes it in a URL: lower case, each label in
 * another script in its punycode form ("bücher.example" is
 * "xn--bcher-kva.example"); NULL when it has none (a label longer than DNS
 * allows, text that is not UTF-8). The one rule for comparing hosts. */
char            *sight_host_to_ascii       (const char *host);

/* Whether the origin of @url (a page URL or an origin) is one of the credential's
 * allowed origins.  A credential with no allowed origins is allowed nowhere. */
gboolean         sight_credential_origin_allowed (const SightCredential *cred,
                                                  const char            *url);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightCredential, sight_credential_free)

typedef struct _SightSecrets SightSecrets;

#define SIGHT_TYPE_SECRETS (sight_secrets_get_type ())
GType            sight_secrets_get_type    (void) G_GNUC_CONST;

SightSecrets    *sight_secrets_new         (void);
SightSecrets    *sight_secrets_ref         (SightSecrets *self);
void             sight_secrets_unref       (SightSecrets *self);

/* Declares (or replaces) a credential; its value is not read yet. */
void             sight_secrets_add         (SightSecrets          *self,
                                            const SightCredential *cred);
/* Borrowed; NULL when no credential has that name. */
const SightCredential *sight_secrets_lookup (SightSecrets         *self,
                                             const char           *name);
/* Names of the declared credentials, sorted (free with g_strfreev). */
GStrv            sight_secrets_list_names  (SightSecrets          *self);

/* Reads the credential's value, the one way a step does (sight-secret-fill.h):
 * an ENV, FILE or VALUE source at once, a KEYRING source from the user's
 * keyring (sight-keyring.h: the item its attributes name), without blocking,
 * within @timeout_ms (0: SIGHT_KEYRING_TIMEOUT_MS; callers pass what is left
 * of the step). @url is the page the value is for: its origin is checked
 * first, as sight_secrets_resolve_for_origin does (a NULL @url or a page
 * without an origin is SIGHT_ERROR_POLICY_DENIED). Fails like sight_secrets_resolve, and
 * with SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE when the keyring is absent,
 * locked, holds no value or does not answer in time. The value (borrowed,
 * valid while @self lives) is registered with the redactor first. */
void             sight_secrets_resolve_async  (SightSecrets         *self,
                                               const char           *name,
                                               const char           *url,
                                               guint                 timeout_ms,
                                               GCancellable         *cancellable,
                                               GAsyncReadyCallback   callback,
                                               gpointer              user_data);
const char      *sight_secrets_resolve_finish (SightSecrets         *self,
                                               GAsyncResult         *result,
                                               GError              **error);

/* Reads the credential's value without waiting: SIGHT_ERROR_AUTH_CREDENTIAL_UNAVAILABLE
 * when the name is not declared, its variable is unset or empty, its file is
 * unreadable, or it is a KEYRING credential whose value sight_secrets_resolve_async
 * has not read yet (a keyring is never waited for on the caller's thread).  The value
 * (borrowed, valid while @self lives) is registered with the redactor before it is
 * returned.  Messages never hold values. */
const char      *sight_secrets_resolve     (SightSecrets  *self,
                                            const char    *name,
                                            GError       **error);

/* Like resolve, but also checks @url's origin against the credential's allowed
 * origins: an origin not allowed is SIGHT_ERROR_POLICY_DENIED. */
const char      *sight_secrets_resolve_for_origin (SightSecrets  *self,
                                                   const char    *name,
                                                   const char    *url,
                                                   GError       **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightSecrets, sight_secrets_unref)

/* The process-wide redactor.  Values shorter than 3 bytes are not registered (they
 * would redact ordinary text); registering is idempotent and thread-safe. */
void             sight_secrets_register_value (const char *name,
                                               const char *value);
/* Forgets every registered value (tests). */
void             sight_secrets_forget_all  (void);
/* A copy of @text with every known value, in every encoding, replaced by
 * "[secret:NAME]".  NULL gives NULL. */
char            *sight_secrets_redact      (const char *text);
/* Whether @text still holds any known value in any encoding. */
gboolean         sight_secrets_contains_any (const char *text);
/* A deep copy of @node in which every string value and member name is redacted
 * (for DB rows, reports and MCP replies built as JSON).  NULL gives NULL. */
JsonNode        *sight_secrets_redact_json (JsonNode   *node);
/* A GLogWriterFunc that redacts every string field (MESSAGE among them) and hands
 * the record to g_log_writer_default.  The app installs it once, first thing:
 *   g_log_set_writer_func (sight_secrets_log_writer, NULL, NULL); */
GLogWriterOutput sight_secrets_log_writer (GLogLevelFlags   log_level,
                                           const GLogField *fields,
                                           gsize            n_fields,
                                           gpointer         user_data);

G_END_DECLS
