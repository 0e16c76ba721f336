/**
 * What `getContext` returns: the messages a model sees next, within a token budget, and what was
 * left out.
 *
 * @since 0.1.0
 */
import { Hash, Schema } from "effect"
import { ConversationEntry } from "./ConversationEntry.js"
import { ConversationId } from "./ConversationId.js"
import { Fact } from "./Fact.js"
import { digestText, factsText, userFactsText } from "./internal/contextText.js"
import { Message } from "./Message.js"
import { RecalledTurn } from "./RecalledTurn.js"
import { UserFact } from "./UserFact.js"
import { UserId } from "./UserId.js"

/**
 * The assembled context, in prompt order: `system` (the leading system messages, never trimmed),
 * `facts`, `summary`, then `recent` (the newest turns, verbatim).
 *
 * Every message of the conversation is covered by the summary (`seq <= summarizedUpTo`), shown
 * (`system`, `recent`), or counted in `messagesOmitted`.
 *
 * @since 0.1.0
 * @category schemas
 */
export class MemoryContext extends Schema.Class<MemoryContext>("MemoryContext")({
  conversationId: ConversationId,
  /** The user the conversation belongs to, or null. */
  userId: Schema.optionalWith(Schema.NullOr(UserId), { default: () => null }),
  /** The strategy that assembled it. */
  strategy: Schema.String,
  system: Schema.Array(Message),
  /**
   * The facts about the user from the user's conversations, as shown: the latest said first, as
   * many as fit their share of the budget. Rendered after the leading system messages.
   */
  userFacts: Schema.optionalWith(Schema.Array(UserFact), { default: () => [] }),
  /** The user's latest other conversations as shown, latest first. Rendered after `userFacts`. */
  digest: Schema.optionalWith(Schema.Array(ConversationEntry), { default: () => [] }),
  /**
   * The facts as shown. Without a query, a fact whose source messages are all in `recent` is left
   * out, since the turns say it.
   */
  facts: Schema.Array(Fact),
  /**
   * The running summary as shown, possibly truncated, or null when there is none. Without a query,
   * lines that a turn of `recent` says word for word are left out.
   */
  summary: Schema.NullOr(Schema.String),
  recent: Schema.Array(Message),
  /** Tokens of everything above, as the configured `TokenCounter` counts them. */
  tokenCount: Schema.NonNegativeInt,
  /** The budget it was assembled in, or null when the strategy has none. */
  tokenBudget: Schema.NullOr(Schema.NonNegativeInt),
  turnsShown: Schema.NonNegativeInt,
  /** Turns shown that the summary also covers (the `full` view shows them when they fit). */
  turnsCovered: Schema.optionalWith(Schema.NonNegativeInt, { default: () => 0 }),
  /** Turns neither shown nor covered by the summary. */
  turnsOmitted: Schema.NonNegativeInt,
  /**
   * Whether the prompt tells the model about the omitted turns (`omissionText`, after the
   * summary). A summarizing strategy never leaves a silent gap.
   */
  omissionAnnounced: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  /** Messages neither shown nor covered by the summary. */
  messagesOmitted: Schema.NonNegativeInt,
  summaryTruncated: Schema.Boolean,
  /** The cursor of the summary shown: the highest seq it covers (0 for none). */
  summarizedUpTo: Schema.NonNegativeInt,
  /**
   * Older turns recalled for this context's query, best first. Each is whole and verbatim, with its
   * seq range, time and score. Rendered after `recent`, just before the new message.
   */
  recalled: Schema.optionalWith(Schema.Array(RecalledTurn), { default: () => [] }),
  /**
   * Tokens of the recalled block, included in `tokenCount`. It is a bound from the messages'
   * stored counts, never below what the block takes as sent.
   */
  recalledTokens: Schema.optionalWith(Schema.NonNegativeInt, { default: () => 0 }),
  /**
   * Whether the conversation spans more than one day: its first and last messages' `createdAt`
   * fall on different UTC dates. Labels then show dates. Each user message of `recent` follows its
   * date and time (`recentLabel`), and recalled turns' labels show dates (`Recall.turnLabel`).
   * Within one day, recalled turns show times only and recent turns have no label. Labels count
   * in `tokenCount`.
   */
  dated: Schema.optionalWith(Schema.Boolean, { default: () => false })
}) {
  /**
   * A fingerprint of the prompt's prefix: the system messages, facts, summary, omission notice,
   * the first message shown and whether labels show dates. Between two contexts of a conversation
   * with the same `prefixVersion`, the newer prompt only appends messages, so a provider's prefix
   * cache keeps hitting. It changes when a fold rewrites the summary or the window slides.
   */
  get prefixVersion(): string {
    const fingerprint = JSON.stringify([
      // A new system prompt keeps the seq it replaces: its text tells it apart.
      this.system.map((message) => [message.seq, Hash.string(message.content)]),
      ...(this.userFacts.length > 0 ? [userFactsText(this.userFacts)] : []),
      ...(this.digest.length > 0 ? [digestText(this.digest)] : []),
      this.facts.length > 0 ? factsText(this.facts) : null,
      this.summary,
      this.omissionAnnounced ? this.turnsOmitted : 0,
      this.recent[0]?.seq ?? null,
      // Dated labels change how shown user messages render. Undated contexts add no marker.
      ...(this.dated ? ["dated"] : [])
    ])
    return (Hash.string(fingerprint) >>> 0).toString(16).padStart(8, "0")
  }
}
