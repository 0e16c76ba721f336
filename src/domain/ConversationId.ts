/**
 * The key of a conversation: a branded, validated string.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { Key } from "./internal/storable.js"

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
export const ConversationId = Key("ConversationId")

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
