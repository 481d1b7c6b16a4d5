import { defineConfig } from "vitest/config"

// Workspace packages resolve to their TypeScript sources through the "@serverfs/source" export
// condition, so unit tests never depend on a stale dist/. Integration tests that start the real
// processes use the built dist/ (the test command builds first).

/**
 * The apps/mcp contract tests that do not depend on the transport: they reach serverfs-mcp only
 * through the testkit's `startMcp` (directly or through the AgentStack), so the project
 * "mcp-over-http" runs them a second time over Streamable HTTP (SERVERFS_TEST_MCP_TRANSPORT=http).
 * Left out on purpose (see docs/remote-access-conformance.md):
 * - lifecycle.test.ts: stdout purity, end on stdin EOF, exit codes of a stdio child — stdio's own
 *   contract (the HTTP process contract is in the HTTP transport's tests);
 * - mutations/crash.test.ts: SIGKILL timed by the bytes the process read from its stdin, and the
 *   property (all-or-nothing publication) does not depend on how the request arrived;
 * - hostile/hostile.test.ts: in-process (InMemoryTransport) but for one memory-bound test;
 * - codex/*, claude/*: the real provider CLIs behind the bridge; their MCP side is the agent tools,
 *   which agents/* covers over HTTP, and a second run would add minutes of provider time;
 * - ingress/*, catalogMarker, binary/tools: in-process, no transport at all.
 */
export const MCP_OVER_HTTP = [
  "apps/mcp/test/stdio.test.ts",
  "apps/mcp/test/serverInfo.test.ts",
  "apps/mcp/test/workBounds.test.ts",
  "apps/mcp/test/hygiene.test.ts",
  "apps/mcp/test/mutations/stdio.test.ts",
  "apps/mcp/test/mutations/editBounds.test.ts",
  "apps/mcp/test/binary/stdio.test.ts",
  "apps/mcp/test/agents/*.test.ts"
]

export default defineConfig({
  resolve: { conditions: ["@serverfs/source", "import", "module", "node", "default"] },
  ssr: { resolve: { conditions: ["@serverfs/source", "import", "module", "node", "default"] } },
  test: {
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests start real child processes; two workers match CI's two cores.
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    reporters: ["default"],
    // The integration tests start the shipped bundles; rebuild them if dist/ is newer.
    globalSetup: ["./scripts/vitest-bundles.mjs"],
    projects: [
      {
        extends: true,
        test: { name: "serverfs", include: ["libs/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts"] }
      },
      {
        extends: true,
        test: {
          name: "mcp-over-http",
          include: MCP_OVER_HTTP,
          // Runs both programs as another user over stdio (a wrapper command): nothing to repeat.
          exclude: ["apps/mcp/test/agents/userScoped.test.ts"],
          env: { SERVERFS_TEST_MCP_TRANSPORT: "http" }
        }
      }
    ]
  }
})
