/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define SIGHT_TYPE_CREDENTIAL_OFFER (sight_credential_offer_get_type ())
G_DECLARE_FINAL_TYPE (SightCredentialOffer, sight_credential_offer, SIGHT, CREDENTIAL_OFFER,
                      GtkWidget)

/* The bar over the live page that offers, while recording, to save what was
 * typed into a secure field as a credential: "Save as credential NAME for
 * ORIGIN?", the name and origin editable. Non-modal: recording goes on.
 * Emits ::accepted (name, origin) or ::declined, then hides. libadwaita 1.2
 * has no AdwBanner; this is a revealer styled as one. */
SightCredentialOffer *sight_credential_offer_new        (void);
void                  sight_credential_offer_present    (SightCredentialOffer *self,
                                                         const char           *name,
                                                         const char           *origin);
void                  sight_credential_offer_dismiss    (SightCredentialOffer *self);
gboolean              sight_credential_offer_get_shown  (SightCredentialOffer *self);
const char           *sight_credential_offer_get_question (SightCredentialOffer *self);

G_END_DECLS
