/**
 * The key of a user: a branded, validated string the app chooses, such as a person, account or
 * team. A conversation may belong to one user, bound on its first write that names one.
 *
 * @since 0.2.0
 */
import { Key } from "./internal/storable.js"

/**
 * A user id: non-empty, at most 255 characters, well-formed Unicode, no control characters.
 * Compared code unit for code unit, so `"Ana"` and `"ana"`, or `"caf\u00e9"` and `"cafe\u0301"`,
 * are two users on every store.
 *
 * @since 0.2.0
 * @category schemas
 */
export const UserId = Key("UserId")

/**
 * A user id, as the `UserId` schema decodes it.
 *
 * @since 0.2.0
 * @category models
 */
export type UserId = typeof UserId.Type
