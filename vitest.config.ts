import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Worker threads rather than child processes: vitest 3 gives a worker's call to the main
    // process 60 s to be answered, and the child processes' channel (each message JSON-encoded
    // through a pipe) missed that deadline on a loaded machine (two runs on two cores), failing
    // runs whose every test passed; threads exchange messages in memory.
    pool: "threads",
    // One worker per core: vitest's default leaves one core to itself, which on a 2-core machine
    // runs the test files one at a time; the main process only collects results.
    maxWorkers: "100%",
    // A worker loads effect, @effect/* and the sources once for all the files it runs, instead of
    // once per file (a third of the run's time). The files share no state through modules: tests
    // build their layers, and read no global, environment or mock that another file sets.
    isolate: false,
    // Timeouts only catch hangs: generous enough for a slow test on a busy machine (two runs on two
    // cores), so that no test depends on the machine's speed.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // Replays a failing fast-check property from FC_SEED and FC_PATH (README, Development).
    setupFiles: ["test/setup/fastCheck.ts"]
  }
})
