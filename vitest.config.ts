import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Timeouts only catch hangs: generous enough for a slow test on a busy machine (two runs on two
    // cores), so that no test depends on the machine's speed.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // Replays a failing fast-check property from FC_SEED and FC_PATH (README, Development).
    setupFiles: ["test/setup/fastCheck.ts"]
  }
})
