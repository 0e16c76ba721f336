/**
 * The key of a user: a branded, validated string the app chooses, such as a person, account or
 * team. A conversation may belong to one user, bound on its first write that names one.
 *
 * @since 0.2.0
 */
import { Schema } from "effect"
import { StorableString } from "./internal/storable.js"

const MaxLength = 255

// Control characters make ids unprintable in logs and ambiguous in keys.
const controlCharacter = /\p{Cc}/u

/**
 * A user id: non-empty, at most 255 characters, well-formed Unicode, no control characters.
 * Compared code unit for code unit, so `"Ana"` and `"ana"`, or `"caf\u00e9"` and `"cafe\u0301"`,
 * are two users on every store.
 *
 * @since 0.2.0
 * @category schemas
 */
export const UserId = StorableString.pipe(
  Schema.minLength(1, { message: () => "must not be empty" }),
  Schema.maxLength(MaxLength, { message: () => `must be at most ${MaxLength} characters` }),
  Schema.filter((s) => !controlCharacter.test(s), { message: () => "must not contain control characters" }),
  Schema.brand("UserId"),
  Schema.annotations({ identifier: "UserId" })
)

/**
 * A user id, as the `UserId` schema decodes it.
 *
 * @since 0.2.0
 * @category models
 */
export type UserId = typeof UserId.Type
