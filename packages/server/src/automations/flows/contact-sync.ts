import { sql } from "kysely";
import { z } from "zod";
import { defineFlow, ERASED, skip, WRITTEN } from "./flow.js";
import { findCustomersForSync, writeContactProfiles } from "./flow.repository.js";

/** Keeps the messaging contact's profile (names, e-mail, locale, tags, lifetime value, orders) in step with the customer. */
export const contactSync = defineFlow({
  flow: "contact_sync",
  recordType: "customer",
  /** The profile version this job syncs: a later change supersedes it. */
  payload: z.object({ profile_version: z.number().int().positive() }),
  // When the write created the customer or changed a synced field: once per profile version.
  trigger: {
    on: WRITTEN.customers,
    when: sql<boolean>`w.profile_changed and w.external_id is not null`,
    oncePer: sql`w.profile_version`,
    customerId: sql<number>`w.id`,
    payload: sql`jsonb_build_object('profile_version', w.profile_version)`,
  },
  load: findCustomersForSync,
  writesContacts: true,
  decideFrom: (customer, payload) => {
    if (!customer || customer.deleted_at !== null || customer.contact_id === null) return skip(ERASED);
    if (customer.profile_version !== payload.profile_version) return skip("a later change superseded this one");
    const profile = {
      first_name: customer.first_name,
      last_name: customer.last_name,
      email: customer.email,
      locale: customer.locale,
      tags: customer.tags,
      lifetime_value: customer.lifetime_value,
      orders_count: customer.orders_count,
    };
    return {
      send: true,
      recipient: { id: customer.id, contact_id: customer.contact_id, phone: customer.phone, first_name: customer.first_name },
      content: { template: "contact_sync", profile: { phone: customer.phone, ...profile } },
    };
  },
  // The messaging app's contacts, as the syncs leave them (two customers sharing a phone: the later sync wins).
  apply: (trx, sends) =>
    writeContactProfiles(
      trx,
      sends.map(({ recipient, content: { profile } }) => ({ contactId: recipient.contact_id, customerId: recipient.id, profile })),
    ),
});
