/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-credential-offer"

#include "config.h"

#include "sight-credential-offer.h"

#include <glib/gi18n.h>

#include "sight-secrets.h"

struct _SightCredentialOffer
{
  GtkWidget parent_instance;

  /* template widgets */
  GtkRevealer *revealer;
  GtkLabel    *question_label;
  GtkEntry    *name_entry;
  GtkEntry    *origin_entry;
  GtkWidget   *accept_button;

  /* owned */
  char        *question;
};

G_DEFINE_FINAL_TYPE (SightCredentialOffer, sight_credential_offer, GTK_TYPE_WIDGET)

enum { ACCEPTED, DECLINED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
entry_changed_cb (SightCredentialOffer *self)
{
  const char *name = gtk_editable_get_text (GTK_EDITABLE (self->name_entry));
  const char *origin = gtk_editable_get_text (GTK_EDITABLE (self->origin_entry));
  g_autofree char *normalized = sight_origin_normalize (origin);
  g_autofree char *stripped = g_strstrip (g_strdup (name));

  g_free (self->question);
  /* Translators: the first %s is a credential name, e.g. "member.password",
   * the second an origin, e.g. "http://127.0.0.1:8765" */
  self->question = g_strdup_printf (_("Save as credential “%s” for %s?"), name, origin);
  gtk_label_set_text (self->question_label, self->question);
  gtk_widget_set_sensitive (self->accept_button, *stripped != '\0' && normalized != NULL);
}

static void
accept_cb (SightCredentialOffer *self)
{
  const char *origin_text = gtk_editable_get_text (GTK_EDITABLE (self->origin_entry));
  g_autofree char *name = g_strstrip (g_strdup (gtk_editable_get_text (
                                        GTK_EDITABLE (self->name_entry))));
  g_autofree char *origin = sight_origin_normalize (origin_text);

  if (*name == '\0' || origin == NULL || !gtk_revealer_get_reveal_child (self->revealer))
    return;
  gtk_revealer_set_reveal_child (self->revealer, FALSE);
  g_signal_emit (self, signals[ACCEPTED], 0, name, origin);
}

static void
decline_cb (SightCredentialOffer *self)
{
  if (!gtk_revealer_get_reveal_child (self->revealer))
    return;
  gtk_revealer_set_reveal_child (self->revealer, FALSE);
  g_signal_emit (self, signals[DECLINED], 0);
}

static void
sight_credential_offer_dispose (GObject *object)
{
  gtk_widget_dispose_template (GTK_WIDGET (object), SIGHT_TYPE_CREDENTIAL_OFFER);
  G_OBJECT_CLASS (sight_credential_offer_parent_class)->dispose (object);
}

static void
sight_credential_offer_finalize (GObject *object)
{
  g_free (SIGHT_CREDENTIAL_OFFER (object)->question);
  G_OBJECT_CLASS (sight_credential_offer_parent_class)->finalize (object);
}

static void
sight_credential_offer_class_init (SightCredentialOfferClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sight_credential_offer_dispose;
  object_class->finalize = sight_credential_offer_finalize;

  /**
   * SightCredentialOffer::accepted:
   * @name: the credential's name, as edited
   * @origin: the origin it may be typed into, normalized
   */
  signals[ACCEPTED] = g_signal_new ("accepted", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                    0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_STRING,
                                    G_TYPE_STRING);
  signals[DECLINED] = g_signal_new ("declined", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                    0, NULL, NULL, NULL, G_TYPE_NONE, 0);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/dev/sightline/Sightline/sight-credential-offer.ui");
  gtk_widget_class_bind_template_child (widget_class, SightCredentialOffer, revealer);
  gtk_widget_class_bind_template_child (widget_class, SightCredentialOffer, question_label);
  gtk_widget_class_bind_template_child (widget_class, SightCredentialOffer, name_entry);
  gtk_widget_class_bind_template_child (widget_class, SightCredentialOffer, origin_entry);
  gtk_widget_class_bind_template_child (widget_class, SightCredentialOffer, accept_button);
  gtk_widget_class_bind_template_callback (widget_class, entry_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, accept_cb);
  gtk_widget_class_bind_template_callback (widget_class, decline_cb);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
sight_credential_offer_init (SightCredentialOffer *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

SightCredentialOffer *
sight_credential_offer_new (void)
{
  return g_object_new (SIGHT_TYPE_CREDENTIAL_OFFER, NULL);
}

void
sight_credential_offer_present (SightCredentialOffer *self,
                                const char           *name,
                                const char           *origin)
{
  g_return_if_fail (SIGHT_IS_CREDENTIAL_OFFER (self));

  gtk_editable_set_text (GTK_EDITABLE (self->name_entry), name != NULL ? name : "");
  gtk_editable_set_text (GTK_EDITABLE (self->origin_entry), origin != NULL ? origin : "");
  entry_changed_cb (self);
  gtk_revealer_set_reveal_child (self->revealer, TRUE);
}

void
sight_credential_offer_dismiss (SightCredentialOffer *self)
{
  g_return_if_fail (SIGHT_IS_CREDENTIAL_OFFER (self));
  gtk_revealer_set_reveal_child (self->revealer, FALSE);
}

gboolean
sight_credential_offer_get_shown (SightCredentialOffer *self)
{
  g_return_val_if_fail (SIGHT_IS_CREDENTIAL_OFFER (self), FALSE);
  return gtk_revealer_get_reveal_child (self->revealer);
}

const char *
sight_credential_offer_get_question (SightCredentialOffer *self)
{
  g_return_val_if_fail (SIGHT_IS_CREDENTIAL_OFFER (self), NULL);
  return self->question;
}
