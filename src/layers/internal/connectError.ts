/**
 * A store that could not be opened, named by its cause in one line. The line is a missing peer's
 * install hint, the driver's reason (refused, unknown database…), or the cause's own message.
 */
import { Predicate } from "effect"
import { RepositoryError } from "../../errors/RepositoryError.js"
import { MissingPeer } from "./optionalPeer.js"

/** Connection errors, keyed by the code Node or the server gives them. */
const connectReasons: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ENOTFOUND: "unknown host",
  EAI_AGAIN: "unknown host",
  ETIMEDOUT: "connection timed out",
  ECONNRESET: "connection reset",
  "28P01": "authentication failed",
  "28000": "authentication failed",
  "3D000": "unknown database",
  "53300": "too many connections",
  "57P03": "the server is starting up or shutting down"
}

const messageOf = (error: unknown): string | undefined =>
  typeof error === "string"
    ? error
    : Predicate.hasProperty(error, "message") && typeof error.message === "string"
    ? error.message
    : undefined

/**
 * What the cause says, following `cause` links, since the SQL error wraps the driver's. A missing
 * peer's message comes first, then the innermost coded error's reason, then the outermost message.
 */
const reasonOf = (error: unknown): string | undefined => {
  let current = error
  let coded: { readonly code: string; readonly message: string } | undefined
  let outermost: string | undefined
  for (let depth = 0; depth < 8 && (Predicate.isObject(current) || typeof current === "string"); depth++) {
    if (current instanceof MissingPeer) return current.message
    const message = messageOf(current)
    if (outermost === undefined && message !== undefined && message.trim().length > 0) outermost = message
    if (Predicate.hasProperty(current, "code") && typeof current.code === "string") {
      coded = { code: current.code, message: message ?? current.code }
    }
    current = Predicate.hasProperty(current, "cause") ? current.cause : undefined
  }
  if (coded !== undefined) {
    const reason = connectReasons[coded.code]
    return reason === undefined ? coded.message : `${reason} (${coded.message})`
  }
  return outermost
}

/** A failed connection as a `RepositoryError` (`connect`) naming its cause on one line. */
export const connectError = (cause: unknown): RepositoryError => {
  const reason = reasonOf(cause)?.replaceAll(/\s*\n\s*/g, " ").trim()
  return new RepositoryError({
    operation: "connect",
    detail: reason === undefined || reason.length === 0 ? undefined : reason,
    cause
  })
}
