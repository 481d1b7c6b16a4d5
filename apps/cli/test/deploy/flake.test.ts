import { spawnSync } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { repoRoot } from "@serverfs/testkit"

/**
 * flake.nix checked offline with Debian's nix (nix-bin): nixpkgs cannot be fetched here, so the
 * outputs are evaluated against stub-nixpkgs.nix (derivations that are never built), in a store
 * of our own under a scratch directory. What this proves and what it cannot:
 * docs/deploy/README.md, "Nix".
 */

const hasNix = spawnSync("nix-instantiate", ["--version"], { encoding: "utf8" }).status === 0

const scratch = mkdtempSync(path.join(tmpdir(), "serverfs-flake-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: path.join(scratch, "home"),
  NIX_CONFIG: "experimental-features = nix-command flakes\nsubstituters =\nwarn-dirty = false"
}

const run = (command: string, args: ReadonlyArray<string>) => {
  const result = spawnSync(command, args, { env, encoding: "utf8", timeout: 120_000, cwd: scratch })
  if (result.status !== 0) throw new Error(`${command} ${args[0]} failed: ${result.stderr}`)
  return result.stdout
}

const evalJson = (expression: string) =>
  JSON.parse(run("nix-instantiate", ["--eval", "--strict", "--json", "--readonly-mode", "-E", expression]))

const lock = JSON.parse(readFileSync(path.join(repoRoot, "package-lock.json"), "utf8")) as {
  readonly packages: Record<
    string,
    { readonly link?: boolean; readonly integrity?: string; readonly resolved?: string }
  >
}

/** What the evaluation below reports per system. */
interface SystemOutputs {
  readonly packages: Record<string, string | null>
  readonly apps: Record<string, string>
  readonly shell: boolean
  readonly unresolved: number
  readonly install: string
}

describe.skipIf(!hasNix)("flake.nix (offline, stub nixpkgs)", () => {
  it("flake.nix and every file under nix/ parse", () => {
    for (const file of ["flake.nix", "nix/package.nix", "nix/npm-lock.nix", "nix/home-manager.nix"]) {
      run("nix-instantiate", ["--parse", path.join(repoRoot, file)])
    }
  })

  it("every registry package of package-lock.json gets its registry tarball URL (importNpmLock needs one)", () => {
    const resolved: Record<string, string | null> = evalJson(`
      let l = import ${repoRoot}/nix/npm-lock.nix {} (builtins.fromJSON (builtins.readFile ${repoRoot}/package-lock.json));
      in builtins.mapAttrs (_: p: p.resolved or null) l.packages`)
    const fromRegistry = Object.entries(lock.packages).filter(
      ([key, p]) => key !== "" && !p.link && p.integrity
    )
    expect(fromRegistry.length).toBeGreaterThan(100)
    for (const [key] of fromRegistry)
      expect(resolved[key], key).toMatch(/^https:\/\/registry\.npmjs\.org\/.+\.tgz$/)
    // Unscoped, scoped and an alias (npm:@openai/codex@…-linux-x64), as npm itself fetched them.
    expect(resolved["node_modules/effect"]).toMatch(/\/effect\/-\/effect-\d[^/]*\.tgz$/)
    expect(resolved["node_modules/@effect/platform"]).toMatch(
      /\/@effect\/platform\/-\/platform-\d[^/]*\.tgz$/
    )
    expect(resolved["node_modules/@openai/codex-linux-x64"]).toMatch(
      /\/@openai\/codex\/-\/codex-[\d.]+-linux-x64\.tgz$/
    )
    // Workspace links keep their relative path; workspace members have nothing to fetch.
    expect(resolved["node_modules/@serverfs/mcp"]).toBe("apps/mcp")
    expect(resolved["apps/mcp"]).toBeNull()
  })

  it("outputs: the three programs as packages and apps, a devShell, built from the fetchable lock", () => {
    const outputs = evalJson(`
      let
        flake = import ${repoRoot}/flake.nix;
        self = flake.outputs { inherit self; nixpkgs = import ${repoRoot}/apps/cli/test/deploy/stub-nixpkgs.nix; } // { outPath = ${repoRoot}; };
        on = system: {
          packages = builtins.mapAttrs (_: p: p.meta.mainProgram or null) self.packages.\${system};
          apps = builtins.mapAttrs (_: a: a.type + " " + baseNameOf a.program) self.apps.\${system};
          shell = self.devShells.\${system}.default.drvPath != "";
          unresolved = builtins.length (builtins.filter (p: p ? integrity && !(p ? resolved))
            (builtins.attrValues self.packages.\${system}.serverfs.passthru.args.npmDeps.packageLock.packages));
          install = builtins.unsafeDiscardStringContext self.packages.\${system}.serverfs.passthru.args.installPhase;
        };
      in builtins.mapAttrs (system: _: on system) self.packages`)
    expect(Object.keys(outputs).sort()).toEqual(["aarch64-linux", "x86_64-linux"])
    for (const system of Object.values(outputs as Record<string, SystemOutputs>)) {
      expect(system.packages).toEqual({
        serverfs: "serverfs-mcp",
        mcp: "serverfs-mcp",
        bridge: "serverfs-bridge",
        cli: "serverfs",
        default: "serverfs-mcp"
      })
      expect(system.apps).toEqual({
        mcp: "app serverfs-mcp",
        bridge: "app serverfs-bridge",
        cli: "app serverfs",
        default: "app serverfs-mcp"
      })
      expect(system.shell).toBe(true)
      expect(system.unresolved).toBe(0)
      expect(system.install).toMatch(
        /--add-flags \$out\/lib\/serverfs\/apps\/\$\{program%%:\*\}\/dist\/bundle\/\$\{program#\*:\}\.js/
      )
      expect(system.install).toContain("mcp:serverfs-mcp bridge:serverfs-bridge cli:serverfs")
    }
  })

  it("home-manager module: the docs/deploy units with ExecStart on the flake's programs, the drop-ins it was asked for", () => {
    const configFiles = (settings: string): Record<string, string> =>
      evalJson(
        `import ${repoRoot}/apps/cli/test/deploy/eval-home-manager.nix { root = ${repoRoot}; settings = ${settings}; }`
      )
    const both = configFiles(
      `{ bridge.enable = true; mcpHttp.enable = true; readWritePaths = [ "/srv/a" "/srv/b" ]; }`
    )
    expect(Object.keys(both).sort()).toEqual([
      "systemd/user/default.target.wants/serverfs-bridge.service",
      "systemd/user/default.target.wants/serverfs-mcp-http.service",
      "systemd/user/serverfs-bridge.service",
      "systemd/user/serverfs-mcp-http.service",
      "systemd/user/serverfs-mcp-http.service.d/agents.conf",
      "systemd/user/serverfs-mcp-http.service.d/workdirs.conf"
    ])
    for (const [unit, app, program] of [
      ["serverfs-bridge.service", "bridge", "serverfs-bridge"],
      ["serverfs-mcp-http.service", "mcp", "serverfs-mcp"]
    ] as const) {
      // The unit of docs/deploy with exactly its ExecStart line replaced (a changed ExecStart in
      // docs/deploy would otherwise leave the module starting /usr/bin/node silently).
      const expected = readFileSync(path.join(repoRoot, "docs/deploy", unit), "utf8").replace(
        `ExecStart=/usr/bin/node %h/.local/lib/serverfs/apps/${app}/dist/bundle/${program}.js`,
        `ExecStart=/nix/store/stub-serverfs/bin/${program}`
      )
      expect(expected).toContain(`bin/${program}`)
      expect(both[`systemd/user/${unit}`]).toBe(expected)
    }
    expect(both["systemd/user/serverfs-mcp-http.service.d/workdirs.conf"]).toBe(
      "[Service]\nReadWritePaths=/srv/a\nReadWritePaths=/srv/b\n"
    )
    const httpOnly = configFiles(`{ bridge.enable = false; mcpHttp.enable = true; readWritePaths = [ ]; }`)
    expect(
      Object.keys(httpOnly).filter((name) => name.includes("bridge") || name.endsWith("agents.conf"))
    ).toEqual([])
  })

  it("nix flake show and nix flake check --no-build accept the flake (nixpkgs overridden by the stub)", () => {
    // The flake's own files only (a git flake copies the tracked files; node_modules stays out).
    const src = path.join(scratch, "src")
    for (const file of ["flake.nix", "nix", "package.json", "package-lock.json", "docs/deploy"]) {
      cpSync(path.join(repoRoot, file), path.join(src, file), { recursive: true })
    }
    const stub = path.join(scratch, "stub")
    mkdirSync(stub, { recursive: true })
    cpSync(path.join(repoRoot, "apps/cli/test/deploy/stub-nixpkgs.nix"), path.join(stub, "stub-nixpkgs.nix"))
    writeFileSync(path.join(stub, "flake.nix"), "{ outputs = _: import ./stub-nixpkgs.nix; }\n")
    const common = [
      "--store",
      path.join(scratch, "store"),
      "--offline",
      `path:${src}`,
      "--override-input",
      "nixpkgs",
      `path:${stub}`,
      "--no-write-lock-file"
    ]
    const shown = JSON.parse(run("nix", ["flake", "show", "--json", ...common]))
    expect(Object.keys(shown.apps["x86_64-linux"]).sort()).toEqual(["bridge", "cli", "default", "mcp"])
    expect(shown.packages["x86_64-linux"].bridge).toMatchObject({
      type: "derivation",
      name: "serverfs-bridge"
    })
    expect(shown.devShells["x86_64-linux"].default).toMatchObject({ type: "derivation" })
    run("nix", ["flake", "check", "--no-build", ...common])
  })
})
