/**
 * The terms of a user in the lexical search of the SQL store: each message of a conversation with
 * a user carries its terms twice, scoped by the conversation (`scopeOf`, for the search of one
 * conversation) and by the user (`userScope`, for the search across the user's conversations), so
 * that each search reads its own postings only.
 */
import type { SqlClient, Statement } from "@effect/sql"

/**
 * The scope of a user's terms, as an SQL expression of the user id: `u.` and 64 bits of the id's
 * SHA-256, in hex. The database computes it, because an append that names no user learns the
 * conversation's user from its row. The `.` keeps it apart from every conversation scope (base 36);
 * two users that shared a scope would only share postings (every statement checks the user id).
 * Stored in every vector of a conversation with a user: changing it needs a migration that
 * rewrites them.
 */
export const userScope = (sql: SqlClient.SqlClient, userId: Statement.Fragment): Statement.Fragment =>
  sql`('u.' || left(encode(sha256(convert_to(${userId}, 'UTF8')), 'hex'), 16))`

/**
 * The `tsvector` of a message of a conversation with a user, from the text of its
 * conversation-scoped vector (`vectorText`, or a stored vector cast to text): its terms under the
 * conversation's scope and again under the user's, so that a search across the user's
 * conversations reads the user's postings only. Terms hold no quote, so `'scope:` only ever starts
 * a term. Null for a null vector.
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
