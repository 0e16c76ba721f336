/**
 * What is known about a user: facts that hold across the user's conversations, each with where
 * and when it was said. Examples are a name, contacts, addresses, preferences, goals, open orders.
 *
 * @since 0.2.0
 */
import { Schema } from "effect"
import { ConversationId } from "./ConversationId.js"
import { FactCategory } from "./Fact.js"
import { Identifier, StorableString } from "./internal/storable.js"

/**
 * Where a fact about a user comes from: a message of one of the user's conversations, or `null`
 * when the app set it.
 */
const UserFactSource = Schema.NullOr(Schema.Struct({
  conversationId: ConversationId,
  seq: Schema.Int.pipe(Schema.positive())
}))

/**
 * A fact about a user, identified by `key`. A later statement of the same key replaces it. Later
 * means by `saidAt`, not by when it was written, so imported histories and concurrent conversations
 * merge alike. A `null` value is a removal. It is kept, so an older statement cannot bring the
 * fact back.
 *
 * @since 0.2.0
 * @category schemas
 */
export class UserFact extends Schema.Class<UserFact>("UserFact")({
  key: Identifier,
  value: Schema.NullOr(StorableString),
  category: FactCategory,
  /** When it was said: its message's `createdAt`, or when the app set it. */
  saidAt: Schema.DateTimeUtc,
  source: UserFactSource
}) {}
