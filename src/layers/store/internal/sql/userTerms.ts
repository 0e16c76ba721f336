/**
 * A user's terms in the SQL store's lexical search. A message of a conversation with a user carries
 * its terms twice. One copy is scoped by the conversation (`scopeOf`) for the search of one
 * conversation. The other is scoped by the user (`userScope`) for the search across the user's
 * conversations. Each search thus reads only its own postings.
 */
import type { SqlClient, Statement } from "@effect/sql"

/**
 * The scope of a user's terms, as an SQL expression of the user id: `u.` and 64 bits of the id's
 * SHA-256, in hex. The database computes it, since an append that names no user learns the user
 * from the conversation's row. The `.` keeps it apart from every base-36 conversation scope. Two
 * users sharing a scope would only share postings, since every statement checks the user id. Every
 * vector of a conversation with a user stores it, so changing it needs a migration that rewrites
 * them.
 */
export const userScopeOf = (userId: string): string =>
  `('u.' || left(encode(sha256(convert_to(${userId}, 'UTF8')), 'hex'), 16))`

/** `userScopeOf` around a fragment of a statement (a bound user id). */
export const userScope = (sql: SqlClient.SqlClient, userId: Statement.Fragment): Statement.Fragment => {
  const [head = "", tail = ""] = userScopeOf("\u0000").split("\u0000")
  return sql`${sql.literal(head)}${userId}${sql.literal(tail)}`
}

/**
 * The `tsvector` of a message in a conversation with a user. It takes the conversation-scoped
 * vector's text (`vectorText`, or a stored vector cast to text) and repeats its terms under the
 * user's scope. A search across the user's conversations then reads only the user's postings.
 * Terms hold no quote, so `'scope:` only ever starts a term. Null for a null vector.
 */
export const withUserTerms = (
  sql: SqlClient.SqlClient,
  vector: Statement.Fragment,
  conversationScope: string,
  userId: Statement.Fragment
): Statement.Fragment =>
  sql`(${vector} || ' ' || replace(${vector}, ${`'${conversationScope}:`}, '''' || ${
    userScope(sql, userId)
  } || ':'))::tsvector`
