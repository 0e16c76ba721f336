/**
 * The contract suites of the storage ports, run against one store: `RepositoryService` (the log),
 * `SummaryStore`, `SettingsStore`, `MessageIndex`, `SummarizationLease` and `UserStore`. Every store
 * (in-memory, PGlite, PostgreSQL) runs them all.
 */
import { describe, layer } from "@effect/vitest"
import type { Layer } from "effect"
import type * as Store from "../../src/layers/store/Store.js"
import { createdAtContract } from "./CreatedAtContract.js"
import { messageIndexContract } from "./MessageIndexContract.js"
import { repositoryContract } from "./RepositoryContract.js"
import { settingsContract } from "./SettingsContract.js"
import { summarizationLeaseContract } from "./SummarizationLeaseContract.js"
import { summaryRepositoryContract } from "./SummaryStoreContract.js"
import { userStoreContract } from "./UserStoreContract.js"

/**
 * Runs every port's contract against `store`. The layer is built once for the suites; every test
 * uses its own conversation ids.
 */
export const storeContract = <E>(name: string, store: Layer.Layer<Store.Ports, E>) =>
  layer(store)(`store contracts: ${name}`, (it) => {
    describe("RepositoryService contract", () => repositoryContract(it))
    describe("createdAt contract", () => createdAtContract(it))
    describe("SummaryStore contract", () => summaryRepositoryContract(it))
    describe("SettingsStore contract", () => settingsContract(it))
    describe("MessageIndex contract", () => messageIndexContract(it))
    describe("SummarizationLease contract", () => summarizationLeaseContract(it))
    describe("UserStore contract", () => userStoreContract(it))
  })
