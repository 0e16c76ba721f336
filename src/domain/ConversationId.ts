/**
 * The key of a conversation: a branded, validated string.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { StorableString } from "./internal/storable.js"

/**
 * The longest conversation id accepted, in characters.
 */
const MaxLength = 255

// Control characters (C0, DEL, C1) make ids unprintable in logs and ambiguous in URLs and keys.
const controlCharacter = /\p{Cc}/u

/**
 * A conversation id: non-empty, at most 255 characters, well-formed Unicode (no unpaired
 * surrogates, no NUL), and no control characters. Ids are compared code unit for code unit, with
 * no Unicode normalisation. So `"caf\u00e9"` and `"cafe\u0301"` are two conversations on every
 * store.
 *
 * Well-formedness keeps conversations apart. A SQL driver replaces an unpaired surrogate with
 * U+FFFD, so `"s\uD800"` and `"s\uDBFF"` would name one row there. The in-memory store would
 * keep them apart.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ConversationId = StorableString.pipe(
  Schema.minLength(1, { message: () => "must not be empty" }),
  Schema.maxLength(MaxLength, { message: () => `must be at most ${MaxLength} characters` }),
  Schema.filter((s) => !controlCharacter.test(s), { message: () => "must not contain control characters" }),
  Schema.brand("ConversationId"),
  Schema.annotations({ identifier: "ConversationId" })
)

/**
 * A conversation id, as the `ConversationId` schema decodes it.
 *
 * @since 0.1.0
 * @category models
 */
export type ConversationId = typeof ConversationId.Type

/**
 * Builds a `ConversationId` from a string known to be valid. Throws on an invalid one. For
 * literals in tests and examples; decode outside input with the schema.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (id: string) => ConversationId = Schema.decodeSync(ConversationId)
