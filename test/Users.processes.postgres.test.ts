/**
 * Two conversations of one user written and summarized at the same time by two processes (the
 * command line's `replay`, each in a process of its own) on one PostgreSQL: what is known about
 * the user holds what each conversation said, and each conversation every message it was given.
 */
import { PgClient } from "@effect/sql-pg"
import { assert, it } from "@effect/vitest"
import { Effect, Layer, Redacted, Schema } from "effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { UserId } from "../src/domain/UserId.js"
import * as SqlStore from "../src/layers/store/SqlStore.js"
import * as Store from "../src/layers/store/Store.js"
import { spawnCli, tempDir } from "./fixtures/cli.js"
import { describePostgres, freshSchemaUrl } from "./fixtures/postgres.js"

/** A conversation of one exchange a day, each stating a value of its own. */
const conversation = (values: ReadonlyArray<readonly [string, string]>) =>
  values.flatMap(([what, value], i) => [
    { role: "user", content: `Please note my ${what} is ${value}.`, createdAt: `2026-03-0${i + 1}T09:00:00Z` },
    { role: "assistant", content: `Noted: your ${what} is ${value}.`, createdAt: `2026-03-0${i + 1}T09:00:05Z` }
  ]).map((line) => JSON.stringify(line)).join("\n")

const first = [["locker code", "LCK-4471"], ["parcel tracking number", "TRK-55120"], ["gym", "Ironworks Gym"]] as const
const second = [["bank", "Monzo"], ["dentist", "Dr Okafor"], ["flat", "14 Rowan Street"]] as const

describePostgres("users on PostgreSQL, two processes", (base) => {
  it.scoped(
    "two processes write and summarize two conversations of one user at once: nothing is lost",
    () =>
      Effect.gen(function*() {
        const url = yield* freshSchemaUrl(base)
        // The schema is migrated once here; the processes then open it as it is.
        const store = yield* Effect.flatMap(
          Layer.build(SqlStore.layer().pipe(Layer.provideMerge(PgClient.layer({ url: Redacted.make(url) })))),
          (context) => Effect.provide(Store.get, context)
        )
        const dir = yield* tempDir
        const env = { MEMORY_STORE: "postgres", DATABASE_URL: url }
        const replay = (name: string, values: ReadonlyArray<readonly [string, string]>) => {
          const path = join(dir, `${name}.jsonl`)
          writeFileSync(path, conversation(values))
          return spawnCli(["replay", path, "--conversation", name, "--user", "lena", "--k", "1", "--json"], { env })
        }
        const runs = yield* Effect.all([replay("errands", first), replay("admin", second)], { concurrency: 2 })
        for (const run of runs) assert.strictEqual(run.code, 0, run.stderr)

        const lena = Schema.decodeSync(UserId)("lena")
        const facts = yield* store.users.getFacts(lena)
        const said = facts.map((fact) => fact.value).join("\n")
        for (const [, value] of [...first, ...second]) assert.include(said, value)
        const sources = new Set<string | undefined>(facts.map((fact) => fact.source?.conversationId))
        assert.isTrue(sources.has("errands") && sources.has("admin"), [...sources].join(", "))
        const listed = yield* store.users.listConversations(lena, { limit: 10 })
        assert.deepStrictEqual(listed.map((entry) => [entry.conversationId, entry.messageCount]).sort(), [
          ["admin", 6],
          ["errands", 6]
        ])
      }),
    { timeout: 120_000 }
  )
})
