/**
 * What is known about a user: facts that hold across the user's conversations (a name, contacts,
 * addresses, preferences, standing goals, open orders), each with where and when it was said.
 *
 * @since 0.2.0
 */
import { Schema } from "effect"
import { ConversationId } from "./ConversationId.js"
import { FactCategory } from "./Fact.js"
import { Identifier, StorableString } from "./internal/storable.js"

/**
 * Where a fact about a user comes from: a message of one of the user's conversations, or the app
 * (`null`), which set it from what it knows.
 */
const UserFactSource = Schema.NullOr(Schema.Struct({
  conversationId: ConversationId,
  seq: Schema.Int.pipe(Schema.positive())
}))

/**
 * A fact about a user. `key` identifies it: a later statement of the same key replaces it, later by
 * the time it was said (`saidAt`), not by when it was written, so imported histories and concurrent
 * conversations merge alike. A `null` value is a removal: kept, so that an older statement does not
 * bring the fact back.
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
