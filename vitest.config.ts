import { defineConfig } from "vitest/config"

// Workspace packages resolve to their TypeScript sources through the "@serverfs/source" export
// condition, so unit tests never depend on a stale dist/. Integration tests that start the real
// processes use the built dist/ (the test command builds first).
export default defineConfig({
  resolve: { conditions: ["@serverfs/source", "import", "module", "node", "default"] },
  ssr: { resolve: { conditions: ["@serverfs/source", "import", "module", "node", "default"] } },
  test: {
    include: ["libs/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests start real child processes; two workers match CI's two cores.
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    reporters: ["default"]
  }
})
