/**
 * The contract suites of the storage ports, run against one store: `RepositoryService` (the log),
 * `SummaryRepository`, `SettingsRepository`, `MessageIndex` and `SummarizationLease`. Every store
 * (in-memory, PGlite, PostgreSQL) runs them all.
 */
import { describe, layer } from "@effect/vitest"
import type { Layer } from "effect"
import type * as Storage from "../../src/layers/store/Storage.js"
import { createdAtContract } from "./CreatedAtContract.js"
import { messageIndexContract } from "./MessageIndexContract.js"
import { repositoryContract } from "./RepositoryContract.js"
import { settingsContract } from "./SettingsContract.js"
import { summarizationLeaseContract } from "./SummarizationLeaseContract.js"
import { summaryRepositoryContract } from "./SummaryRepositoryContract.js"

/**
 * Runs every port's contract against `store`. The layer is built once for the suites; every test
 * uses its own conversation ids.
 */
export const storeContract = <E>(name: string, store: Layer.Layer<Storage.Ports, E>) =>
  layer(store)(`store contracts: ${name}`, (it) => {
    describe("RepositoryService contract", () => repositoryContract(it))
    describe("createdAt contract", () => createdAtContract(it))
    describe("SummaryRepository contract", () => summaryRepositoryContract(it))
    describe("SettingsRepository contract", () => settingsContract(it))
    describe("MessageIndex contract", () => messageIndexContract(it))
    describe("SummarizationLease contract", () => summarizationLeaseContract(it))
  })
