/**
 * Replays fast-check properties from the environment, without editing a test: a failing property
 * prints its seed and path, and `FC_SEED=<seed> FC_PATH=<path> npx vitest run <file> -t <name>`
 * runs that counterexample again (`FC_SEED` alone replays the whole run that found it). A vitest
 * setup file: it runs in the worker of each test file, before the file, and configures the
 * fast-check that `@effect/vitest`'s `it.prop` and `it.effect.prop` call (a test's own
 * `fastCheck` options are applied over this configuration).
 */
import * as fc from "effect/FastCheck"

const read = (name: string): string | undefined => {
  const raw = process.env[name]?.trim()
  return raw === undefined || raw === "" ? undefined : raw
}

const seedText = read("FC_SEED")
const path = read("FC_PATH")
const seed = seedText === undefined ? undefined : Number(seedText)

if (seed !== undefined && !Number.isSafeInteger(seed)) {
  throw new Error(`FC_SEED must be an integer (the seed fast-check printed), not ${seedText}`)
}
if (path !== undefined && seed === undefined) {
  throw new Error("FC_PATH replays a counterexample of one seed: set FC_SEED too")
}
if (path !== undefined && !/^\d+(:\d+)*$/.test(path)) {
  throw new Error(`FC_PATH must be the path fast-check printed (numbers separated by ':'), not ${path}`)
}

if (seed !== undefined) {
  fc.configureGlobal({ ...fc.readConfigureGlobal(), seed, ...(path === undefined ? {} : { path }) })
}
