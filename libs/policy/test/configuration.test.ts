import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { WorkdirNotFound } from "@serverfs/domain"
import {
  Configuration,
  ConfigurationError,
  configurationVariableNames,
  GLOBAL_VARIABLES,
  type GlobalSettings,
  type InspectSlotDirectory,
  inspectSlotDirectory,
  parseServerConfiguration,
  type ServerConfiguration,
  SLOT_COUNT,
  type Workdir,
  WorkdirRegistry
} from "@serverfs/policy"
import { ConfigProvider, Effect, Either, Layer } from "effect"
import { makeTempDir, removeTempDir } from "./helpers.js"

// ---------------------------------------------------------------------------------------------
// Fixtures: real directories under one temp root.
// ---------------------------------------------------------------------------------------------

let root = ""
/** Real, empty workdir directories. */
const dirs: string[] = []
let placeholder = ""
let sentinelConflict = ""
let emptyDir = ""
let regularFile = ""
let symlinkToDir = ""
let missing = ""

beforeAll(() => {
  root = makeTempDir("serverfs-policy-config-")
  for (let i = 0; i < SLOT_COUNT + 1; i++) {
    const d = path.join(root, `wd${i}`)
    fs.mkdirSync(d)
    fs.writeFileSync(path.join(d, "file.txt"), "x")
    dirs.push(d)
  }
  placeholder = path.join(root, "placeholder")
  fs.mkdirSync(placeholder)
  fs.writeFileSync(path.join(placeholder, ".serverfs-disabled"), "")
  sentinelConflict = path.join(root, "conflict")
  fs.mkdirSync(sentinelConflict)
  fs.writeFileSync(path.join(sentinelConflict, ".serverfs-disabled"), "")
  fs.writeFileSync(path.join(sentinelConflict, "real.txt"), "data")
  emptyDir = path.join(root, "empty")
  fs.mkdirSync(emptyDir)
  regularFile = path.join(root, "plain.txt")
  fs.writeFileSync(regularFile, "not a directory")
  symlinkToDir = path.join(root, "link")
  fs.symlinkSync(dirs[0]!, symlinkToDir)
  missing = path.join(root, "does-not-exist")
})

afterAll(() => removeTempDir(root))

const dir = (i: number): string => {
  const d = dirs[i]
  if (d === undefined) throw new Error(`no fixture directory ${i}`)
  return d
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

type Vars = Readonly<Record<string, string>>

/**
 * The HOME of every test environment (like a login environment): the bridge's paths default
 * under it (runtimePaths.test.ts has the resolution table, including HOME unset).
 */
const TEST_HOME = "/home/serverfs-test"

const lookupOf =
  (vars: Vars) =>
  (name: string): string | undefined =>
    Object.hasOwn(vars, name) ? vars[name] : name === "HOME" ? TEST_HOME : undefined

const parse = (vars: Vars, inspect: InspectSlotDirectory = inspectSlotDirectory) =>
  parseServerConfiguration(lookupOf(vars), inspect)

const loaded = (vars: Vars, inspect: InspectSlotDirectory = inspectSlotDirectory): ServerConfiguration => {
  const result = parse(vars, inspect)
  if (Either.isLeft(result)) throw new Error(`unexpected configuration error: ${result.left.message}`)
  return result.right
}

/**
 * The configuration must be refused with a ConfigurationError naming exactly `variable`; its
 * text must not contain any of `secrets` (the offending value, a host path).
 */
const refused = (vars: Vars, variable: string, secrets: ReadonlyArray<string> = []): ConfigurationError => {
  const result = parse(vars)
  if (Either.isRight(result)) throw new Error(`expected a configuration error naming ${variable}`)
  const error = result.left
  expect(error).toBeInstanceOf(ConfigurationError)
  expect(error._tag).toBe("ConfigurationError")
  expect(error.variable).toBe(variable)
  expect(error.message).toBe(`${variable}: ${error.problem}`)
  for (const secret of [...secrets, root]) {
    if (secret.trim() === "") continue
    expect(error.problem).not.toContain(secret.trim())
  }
  return error
}

const slot = (n: number): string => String(n).padStart(2, "0")

/** An enabled slot: alias + the n-th fixture directory, plus extra WORKDIR_XX_ suffixes. */
const enabled = (n: number, alias: string, extra: Readonly<Record<string, string>> = {}): Vars => ({
  [`WORKDIR_${slot(n)}_ALIAS`]: alias,
  [`WORKDIR_${slot(n)}_PATH`]: dir(n),
  ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [`WORKDIR_${slot(n)}_${k}`, v]))
})

const only = (config: ServerConfiguration): Workdir => {
  expect(config.workdirs).toHaveLength(1)
  return config.workdirs[0]!
}

const BRIDGE: Vars = { SERVERFS_AGENT_BRIDGE_ENABLED: "true" }

// ---------------------------------------------------------------------------------------------
// Global settings
// ---------------------------------------------------------------------------------------------

describe("global settings: defaults (tool-contracts §4.1)", () => {
  it("an empty environment gives the documented defaults and no workdir", () => {
    const config = loaded({})
    expect(config.workdirs).toEqual([])
    expect(config.global).toEqual({
      logLevel: "INFO",
      maxReadBytes: 524288,
      maxReadLines: 500,
      defaultListLimit: 100,
      maxListEntries: 500,
      defaultSearchResults: 50,
      maxSearchResults: 100,
      maxWalkEntries: 200000,
      searchTimeoutSeconds: 15,
      searchMaxFileBytes: 52428800,
      maxPatternLength: 1024,
      searchMaxLineBytes: 4096,
      maxReadScanBytes: 268435456,
      readTimeoutSeconds: 10,
      maxResponseBytes: 4194304,
      allowHidden: false,
      extraDenyGlobs: [],
      disableDefaultDeny: false,
      maxWriteBytes: 1048576,
      binaryTransferEnabled: false,
      maxBinaryTransferBytes: 8388608,
      maxEditsPerCall: 50,
      agentMode: "disabled",
      agentRuntimes: [],
      agentBridgeEnabled: false,
      agentBridgeSocket: `${TEST_HOME}/.local/share/serverfs-agent-bridge/runtime/socket/bridge.sock`,
      agentBridgeTimeoutSeconds: 30,
      agentLockDir: `${TEST_HOME}/.local/share/serverfs-agent-bridge/runtime/locks`,
      fileIngressEnabled: false,
      fileIngressTimeoutSeconds: 30,
      fileIngressAllowedHosts: [],
      fileIngressAllowOpenaiBlobHosts: false,
      fileIngressFetchTimeoutSeconds: 30,
      fileIngressMaxRedirects: 3
    } satisfies GlobalSettings)
  })

  // The bridge's socket and lock directory default from the environment (runtimePaths.test.ts).
  const RESOLVED_FROM_ENVIRONMENT = new Set(["agentBridgeSocket", "agentLockDir"])
  it.each(Object.entries(GLOBAL_VARIABLES).filter(([key]) => !RESOLVED_FROM_ENVIRONMENT.has(key)))(
    "%s: the documented default parses to the value used when unset",
    (key, entry) => {
      const config = loaded({})
      const parse = entry.parse as (raw: string | undefined) => Either.Either<unknown, string>
      const parsed = parse(entry.default === "" ? undefined : entry.default)
      expect(Either.isRight(parsed)).toBe(true)
      if (Either.isRight(parsed)) expect(config.global[key as keyof GlobalSettings]).toEqual(parsed.right)
    }
  )

  it("an empty or blank value means the default, for every global variable", () => {
    const blank = Object.fromEntries(Object.values(GLOBAL_VARIABLES).map((e) => [e.variable, "  "]))
    expect(loaded(blank).global).toEqual(loaded({}).global)
    const empty = Object.fromEntries(Object.values(GLOBAL_VARIABLES).map((e) => [e.variable, ""]))
    expect(loaded(empty).global).toEqual(loaded({}).global)
  })
})

const STRICT_GLOBALS: ReadonlyArray<readonly [variable: string, bad: string]> = [
  ["SERVERFS_MAX_READ_BYTES", "12abc"],
  ["SERVERFS_MAX_READ_BYTES", "0"],
  ["SERVERFS_MAX_READ_BYTES", "-77"],
  ["SERVERFS_MAX_READ_LINES", "lots"],
  ["SERVERFS_MAX_READ_LINES", "2.5"],
  ["SERVERFS_MAX_WRITE_BYTES", "1e6"],
  ["SERVERFS_MAX_PATTERN_LENGTH", "0"],
  ["SERVERFS_MAX_PATTERN_LENGTH", "long"],
  ["SERVERFS_ALLOW_HIDDEN", "maybe"],
  ["SERVERFS_DISABLE_DEFAULT_DENY", "perhaps"],
  ["SERVERFS_AGENT_MODE", "sometimes"],
  ["SERVERFS_AGENT_RUNTIMES", "gpt-secret"],
  ["SERVERFS_BINARY_TRANSFER_ENABLED", "maybe"],
  ["SERVERFS_FILE_INGRESS_ENABLED", "kinda"],
  // issue 14's work bounds: out of range or malformed values stop startup.
  ["SERVERFS_MAX_RESPONSE_BYTES", "1024"],
  ["SERVERFS_MAX_RESPONSE_BYTES", "20971520"],
  ["SERVERFS_MAX_RESPONSE_BYTES", "8388608"],
  ["SERVERFS_MAX_READ_SCAN_BYTES", "4k"],
  ["SERVERFS_MAX_READ_SCAN_BYTES", "1000"],
  ["SERVERFS_READ_TIMEOUT_SECONDS", "-5"],
  ["SERVERFS_READ_TIMEOUT_SECONDS", "ten"],
  ["SERVERFS_SEARCH_MAX_LINE_BYTES", "1"],
  ["SERVERFS_SEARCH_MAX_LINE_BYTES", "1048576"],
  // File ingress (issue 13): every malformed value stops startup.
  ["SERVERFS_FILE_INGRESS_TIMEOUT_SECONDS", "soon"],
  ["SERVERFS_FILE_INGRESS_TIMEOUT_SECONDS", "-3"],
  ["SERVERFS_FILE_INGRESS_FETCH_TIMEOUT_SECONDS", "-1"],
  ["SERVERFS_FILE_INGRESS_MAX_REDIRECTS", "11"],
  ["SERVERFS_FILE_INGRESS_MAX_REDIRECTS", "three"],
  ["SERVERFS_FILE_INGRESS_ALLOW_OPENAI_BLOB_HOSTS", "sure"],
  ["SERVERFS_FILE_INGRESS_ALLOWED_HOSTS", "*.example.com"],
  ["SERVERFS_FILE_INGRESS_ALLOWED_HOSTS", "https://files.example.com"],
  ["SERVERFS_FILE_INGRESS_ALLOWED_HOSTS", "files.example.com:443"],
  ["SERVERFS_FILE_INGRESS_ALLOWED_HOSTS", "93.184.216.34"],
  ["SERVERFS_FILE_INGRESS_ALLOWED_HOSTS", "localhost"]
]

describe("global settings: strict variables stop startup with an error naming the variable", () => {
  it.each(STRICT_GLOBALS)("%s=%j → ConfigurationError naming it, without the value", (variable, bad) => {
    refused({ [variable]: bad }, variable, [bad])
  })

  it("the variable table classifies exactly the contract's strict settings as strict", () => {
    const strict = Object.values(GLOBAL_VARIABLES)
      .filter((e) => e.kind.startsWith("strict") || e.kind === "agent mode" || e.kind === "runtime list")
      .map((e) => e.variable)
      .sort()
    expect(strict).toEqual(
      [
        "SERVERFS_MAX_READ_BYTES",
        "SERVERFS_MAX_READ_LINES",
        "SERVERFS_ALLOW_HIDDEN",
        "SERVERFS_DISABLE_DEFAULT_DENY",
        "SERVERFS_MAX_WRITE_BYTES",
        "SERVERFS_BINARY_TRANSFER_ENABLED",
        "SERVERFS_MAX_BINARY_TRANSFER_BYTES",
        "SERVERFS_MAX_PATTERN_LENGTH",
        "SERVERFS_AGENT_MODE",
        "SERVERFS_AGENT_RUNTIMES",
        // Work bounds added by issue 14 (not in the reference): a mistake in one stops startup.
        "SERVERFS_SEARCH_MAX_LINE_BYTES",
        "SERVERFS_MAX_READ_SCAN_BYTES",
        "SERVERFS_READ_TIMEOUT_SECONDS",
        "SERVERFS_MAX_RESPONSE_BYTES",
        // File ingress (issue 13): strict where the reference is lenient (docs/deviations.md).
        "SERVERFS_FILE_INGRESS_ENABLED",
        "SERVERFS_FILE_INGRESS_TIMEOUT_SECONDS",
        "SERVERFS_FILE_INGRESS_ALLOW_OPENAI_BLOB_HOSTS",
        "SERVERFS_FILE_INGRESS_FETCH_TIMEOUT_SECONDS",
        "SERVERFS_FILE_INGRESS_MAX_REDIRECTS"
      ].sort()
    )
  })

  it("good strict values are applied", () => {
    const g = loaded({
      SERVERFS_MAX_READ_BYTES: "1000",
      SERVERFS_MAX_READ_LINES: " 20 ",
      SERVERFS_MAX_WRITE_BYTES: "+4096",
      SERVERFS_ALLOW_HIDDEN: "Yes",
      SERVERFS_DISABLE_DEFAULT_DENY: "ON"
    }).global
    expect([g.maxReadBytes, g.maxReadLines, g.maxWriteBytes, g.allowHidden, g.disableDefaultDeny]).toEqual([
      1000,
      20,
      4096,
      true,
      true
    ])
  })
})

const LENIENT_GLOBALS: ReadonlyArray<
  readonly [
    variable: string,
    key: keyof GlobalSettings,
    bad: string,
    fallback: unknown,
    good: string,
    value: unknown
  ]
> = [
  ["SERVERFS_LOG_LEVEL", "logLevel", "loud", "INFO", "debug", "DEBUG"],
  ["SERVERFS_DEFAULT_LIST_LIMIT", "defaultListLimit", "abc", 100, "7", 7],
  ["SERVERFS_MAX_LIST_ENTRIES", "maxListEntries", "-3", 500, "900", 900],
  ["SERVERFS_DEFAULT_SEARCH_RESULTS", "defaultSearchResults", "0", 50, "5", 5],
  ["SERVERFS_MAX_SEARCH_RESULTS", "maxSearchResults", "1.5", 100, "250", 250],
  ["SERVERFS_MAX_WALK_ENTRIES", "maxWalkEntries", "many", 200000, "1000", 1000],
  ["SERVERFS_SEARCH_TIMEOUT_SECONDS", "searchTimeoutSeconds", "soon", 15, "0.5", 0.5],
  ["SERVERFS_SEARCH_MAX_FILE_BYTES", "searchMaxFileBytes", "big", 52428800, "1024", 1024],
  ["SERVERFS_MAX_EDITS_PER_CALL", "maxEditsPerCall", "-1", 50, "3", 3],
  ["SERVERFS_AGENT_BRIDGE_ENABLED", "agentBridgeEnabled", "maybe", false, "on", true],
  ["SERVERFS_AGENT_BRIDGE_TIMEOUT_SECONDS", "agentBridgeTimeoutSeconds", "-2", 30, "2.5", 2.5]
]

describe("global settings: lenient variables fall back silently", () => {
  it.each(LENIENT_GLOBALS)(
    "%s: a bad value falls back to the default, a good one is used",
    (variable, key, bad, fallback, good, value) => {
      expect(loaded({ [variable]: bad }).global[key]).toEqual(fallback)
      expect(loaded({ [variable]: good }).global[key]).toEqual(value)
    }
  )

  it("SERVERFS_EXTRA_DENY_GLOBS: trimmed, empty entries dropped, duplicates removed, order kept", () => {
    expect(loaded({ SERVERFS_EXTRA_DENY_GLOBS: " b/** ,, *.log , b/**, a " }).global.extraDenyGlobs).toEqual([
      "b/**",
      "*.log",
      "a"
    ])
  })
})

describe("extra deny globs are bounded by SERVERFS_MAX_PATTERN_LENGTH (matching cost is per character)", () => {
  const long = `${"*a".repeat(512)}b` // 1025 characters

  it("a global glob longer than the maximum stops startup, naming the variable, not the glob", () => {
    refused({ SERVERFS_EXTRA_DENY_GLOBS: `*.log,${long}` }, "SERVERFS_EXTRA_DENY_GLOBS", [long])
  })

  it("a workdir glob longer than the maximum stops startup, naming the workdir variable", () => {
    refused(enabled(3, "three", { EXTRA_DENY_GLOBS: long }), "WORKDIR_03_EXTRA_DENY_GLOBS", [long])
  })

  it("a glob of exactly the maximum is accepted, and the maximum is configurable", () => {
    const exact = long.slice(1)
    expect(only(loaded(enabled(3, "three", { EXTRA_DENY_GLOBS: exact }))).policy.extraRuleCount).toBe(1)
    expect(
      loaded({ SERVERFS_MAX_PATTERN_LENGTH: "2048", SERVERFS_EXTRA_DENY_GLOBS: long }).global.maxPatternLength
    ).toBe(2048)
    refused(
      { SERVERFS_MAX_PATTERN_LENGTH: "4", SERVERFS_EXTRA_DENY_GLOBS: "*.log" },
      "SERVERFS_EXTRA_DENY_GLOBS"
    )
  })
})

describe("binary transfer (tool-contracts §4.1, §4.2)", () => {
  it("SERVERFS_BINARY_TRANSFER_ENABLED=true starts and is inherited; a workdir may turn it off", () => {
    const on = loaded({ SERVERFS_BINARY_TRANSFER_ENABLED: "true", ...enabled(4, "four") })
    expect([on.global.binaryTransferEnabled, only(on).binaryTransferEnabled]).toEqual([true, true])
    const off = loaded({
      SERVERFS_BINARY_TRANSFER_ENABLED: "on",
      ...enabled(4, "four", { BINARY_TRANSFER_ENABLED: "false" })
    })
    expect(only(off).binaryTransferEnabled).toBe(false)
  })

  it("WORKDIR_XX_BINARY_TRANSFER_ENABLED=true enables one workdir; the size limit is inherited or overridden", () => {
    const w = only(loaded(enabled(4, "four", { BINARY_TRANSFER_ENABLED: "true" })))
    expect([w.binaryTransferEnabled, w.maxBinaryTransferBytes]).toEqual([true, 8388608])
    const small = only(
      loaded({
        SERVERFS_MAX_BINARY_TRANSFER_BYTES: "1000",
        ...enabled(4, "four", { BINARY_TRANSFER_ENABLED: "true", MAX_BINARY_TRANSFER_BYTES: "" })
      })
    )
    expect(small.maxBinaryTransferBytes).toBe(1000)
    expect(
      only(loaded(enabled(4, "four", { MAX_BINARY_TRANSFER_BYTES: "4096" }))).maxBinaryTransferBytes
    ).toBe(4096)
  })

  it("SERVERFS_BINARY_TRANSFER_ENABLED=maybe and SERVERFS_MAX_BINARY_TRANSFER_BYTES=0 → errors naming them", () => {
    refused({ SERVERFS_BINARY_TRANSFER_ENABLED: "maybe" }, "SERVERFS_BINARY_TRANSFER_ENABLED")
    refused({ SERVERFS_MAX_BINARY_TRANSFER_BYTES: "0" }, "SERVERFS_MAX_BINARY_TRANSFER_BYTES")
  })

  it("WORKDIR_XX_BINARY_TRANSFER_ENABLED=false or empty on an enabled slot is fine", () => {
    expect(only(loaded(enabled(4, "four", { BINARY_TRANSFER_ENABLED: "false" }))).alias).toBe("four")
    expect(only(loaded(enabled(4, "four", { BINARY_TRANSFER_ENABLED: "" }))).alias).toBe("four")
  })

  it("WORKDIR_XX_BINARY_TRANSFER_ENABLED=maybe → error naming it", () => {
    refused(enabled(4, "four", { BINARY_TRANSFER_ENABLED: "maybe" }), "WORKDIR_04_BINARY_TRANSFER_ENABLED", [
      "maybe"
    ])
  })

  it("WORKDIR_XX_MAX_BINARY_TRANSFER_BYTES is a strict int", () => {
    refused(
      enabled(4, "four", { MAX_BINARY_TRANSFER_BYTES: "8MB" }),
      "WORKDIR_04_MAX_BINARY_TRANSFER_BYTES",
      ["8MB"]
    )
    expect(only(loaded(enabled(4, "four", { MAX_BINARY_TRANSFER_BYTES: "8388608" }))).alias).toBe("four")
  })
})

// ---------------------------------------------------------------------------------------------
// Slots
// ---------------------------------------------------------------------------------------------

describe("slots: 16 of them, in slot order", () => {
  it("all 16 slots enabled → 16 workdirs in slot order with their slot numbers", () => {
    let vars: Vars = {}
    for (let n = SLOT_COUNT; n >= 1; n--) vars = { ...vars, ...enabled(n, `w${n}`) }
    const config = loaded(vars)
    expect(config.workdirs.map((w) => w.slot)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1))
    expect(config.workdirs.map((w) => w.alias)).toEqual(Array.from({ length: 16 }, (_, i) => `w${i + 1}`))
    expect(config.workdirs.map((w) => w.hostPath)).toEqual(Array.from({ length: 16 }, (_, i) => dir(i + 1)))
  })

  it("slot 16 alone works", () => {
    const w = only(loaded(enabled(16, "last")))
    expect([w.slot, w.alias, w.hostPath]).toEqual([16, "last", dir(16)])
  })

  it("sparse slots keep slot order (09 after 02 whatever the variable order)", () => {
    const config = loaded({ ...enabled(9, "nine"), ...enabled(2, "two") })
    expect(config.workdirs.map((w) => [w.slot, w.alias])).toEqual([
      [2, "two"],
      [9, "nine"]
    ])
  })

  it("WORKDIR_17_* and unpadded WORKDIR_1_* are not slots", () => {
    const config = loaded({
      WORKDIR_17_ALIAS: "seventeen",
      WORKDIR_17_PATH: dir(1),
      WORKDIR_1_ALIAS: "one",
      WORKDIR_1_PATH: dir(1)
    })
    expect(config.workdirs).toEqual([])
  })

  it("an enabled workdir carries its host path, the global limits and a default policy", () => {
    const w = only(loaded(enabled(1, "docs")))
    expect(w).toMatchObject({
      slot: 1,
      alias: "docs",
      description: null,
      readOnly: true,
      hostPath: dir(1),
      maxReadBytes: 524288,
      maxReadLines: 500,
      maxWriteBytes: 1048576,
      binaryTransferEnabled: false,
      maxBinaryTransferBytes: 8388608,
      agentMode: "disabled",
      agentRuntimes: []
    })
    expect(w.policy.settings).toEqual({ allowHidden: false, disableDefaultDeny: false, extraDenyGlobs: [] })
  })
})

describe("slots: WORKDIR_XX_ALIAS", () => {
  it.each(["a", "A", "docs", "a-b_C", "Z9", `a${"b".repeat(31)}`, `X${"-".repeat(31)}`])(
    "%j is a valid alias",
    (alias) => {
      expect(only(loaded(enabled(3, alias))).alias).toBe(alias)
    }
  )

  it("32 characters are fine, 33 are not", () => {
    const ok = `a${"x".repeat(31)}`
    expect(ok).toHaveLength(32)
    expect(only(loaded(enabled(3, ok))).alias).toBe(ok)
    const tooLong = `${ok}y`
    refused(enabled(3, tooLong), "WORKDIR_03_ALIAS", [tooLong])
  })

  it.each(["1abc", "_abc", "-abc", "a.b", "a b", "a/b", "äbc", "a:b", "a\u{1F600}"])(
    "%j is refused, naming WORKDIR_03_ALIAS without the value",
    (alias) => {
      refused(enabled(3, alias), "WORKDIR_03_ALIAS", [alias])
    }
  )

  it("a duplicate alias is an error naming both slots (the second, whose message names the first)", () => {
    const error = refused({ ...enabled(2, "dupalias"), ...enabled(5, "dupalias") }, "WORKDIR_05_ALIAS", [
      "dupalias"
    ])
    expect(error.problem).toContain("WORKDIR_02_ALIAS")
  })

  it("aliases are case-sensitive: Docs and docs may coexist", () => {
    const config = loaded({ ...enabled(1, "Docs"), ...enabled(2, "docs") })
    expect(config.workdirs.map((w) => w.alias)).toEqual(["Docs", "docs"])
  })
})

describe("slots: WORKDIR_XX_DESCRIPTION", () => {
  it("is trimmed", () => {
    expect(only(loaded(enabled(1, "d", { DESCRIPTION: "  Project docs \n" }))).description).toBe(
      "Project docs"
    )
  })

  it.each([
    ["absent", undefined],
    ["empty", ""],
    ["blank", "   "]
  ] as const)("%s → null", (_label, value) => {
    const vars = value === undefined ? enabled(1, "d") : enabled(1, "d", { DESCRIPTION: value })
    expect(only(loaded(vars)).description).toBeNull()
  })
})

describe("slots: WORKDIR_XX_READ_ONLY", () => {
  it.each([
    ["absent", undefined],
    ["empty", ""],
    ["blank", "  "]
  ] as const)("%s → read-only (true)", (_label, value) => {
    const vars = value === undefined ? enabled(1, "d") : enabled(1, "d", { READ_ONLY: value })
    expect(only(loaded(vars)).readOnly).toBe(true)
  })

  it.each(["false", "0", "no", "off", "FALSE", " Off "])("%j → read-write (false)", (value) => {
    expect(only(loaded(enabled(1, "d", { READ_ONLY: value }))).readOnly).toBe(false)
  })

  it.each(["true", "1", "yes", "on", "TRUE"])("%j → read-only (true)", (value) => {
    expect(only(loaded(enabled(1, "d", { READ_ONLY: value }))).readOnly).toBe(true)
  })

  it("READ_ONLY=maybe on an enabled slot → error naming WORKDIR_01_READ_ONLY", () => {
    refused(enabled(1, "d", { READ_ONLY: "maybe" }), "WORKDIR_01_READ_ONLY", ["maybe"])
  })

  it("READ_ONLY=maybe on a disabled slot → error naming WORKDIR_03_READ_ONLY", () => {
    refused({ WORKDIR_03_READ_ONLY: "maybe" }, "WORKDIR_03_READ_ONLY", ["maybe"])
  })

  it("READ_ONLY=maybe on a placeholder slot → error naming WORKDIR_03_READ_ONLY", () => {
    refused({ WORKDIR_03_PATH: placeholder, WORKDIR_03_READ_ONLY: "maybe" }, "WORKDIR_03_READ_ONLY", [
      "maybe"
    ])
  })

  it("slots are independent: one read-write slot does not open another", () => {
    const config = loaded({ ...enabled(1, "rw", { READ_ONLY: "false" }), ...enabled(2, "ro") })
    expect(config.workdirs.map((w) => [w.alias, w.readOnly])).toEqual([
      ["rw", false],
      ["ro", true]
    ])
  })
})

describe("slots: disabled slots (case A) must not carry settings that would do nothing", () => {
  it("a fully unset slot is simply disabled", () => {
    expect(loaded({ WORKDIR_03_READ_ONLY: "true" }).workdirs).toEqual([])
  })

  it("READ_ONLY=false on a disabled slot → error naming WORKDIR_03_READ_ONLY (and pointing at WORKDIR_03_ALIAS)", () => {
    const error = refused({ WORKDIR_03_READ_ONLY: "false" }, "WORKDIR_03_READ_ONLY")
    expect(error.problem).toContain("WORKDIR_03_ALIAS")
  })

  it("READ_ONLY=false on a placeholder slot → error naming WORKDIR_03_READ_ONLY", () => {
    refused({ WORKDIR_03_PATH: placeholder, WORKDIR_03_READ_ONLY: "false" }, "WORKDIR_03_READ_ONLY")
  })

  it.each(["AGENT_MODE", "AGENT_RUNTIMES"])(
    "WORKDIR_07_%s set on a disabled slot → error naming it",
    (suffix) => {
      refused(
        { ...BRIDGE, WORKDIR_07_PATH: placeholder, [`WORKDIR_07_${suffix}`]: "review" },
        `WORKDIR_07_${suffix}`,
        ["review"]
      )
    }
  )

  it("BINARY_TRANSFER_ENABLED=true on a disabled slot → error naming WORKDIR_07_BINARY_TRANSFER_ENABLED", () => {
    refused({ WORKDIR_07_BINARY_TRANSFER_ENABLED: "true" }, "WORKDIR_07_BINARY_TRANSFER_ENABLED")
  })
})

describe("slots: WORKDIR_XX_PATH and the slot states", () => {
  it("empty alias + placeholder directory (only .serverfs-disabled) → a disabled slot", () => {
    expect(loaded({ WORKDIR_05_PATH: placeholder }).workdirs).toEqual([])
  })

  it("alias + placeholder directory → error naming WORKDIR_05_PATH (case B)", () => {
    refused({ WORKDIR_05_ALIAS: "five", WORKDIR_05_PATH: placeholder }, "WORKDIR_05_PATH", [placeholder])
  })

  it("alias + a real directory that also holds .serverfs-disabled → error naming WORKDIR_05_PATH", () => {
    refused({ WORKDIR_05_ALIAS: "five", WORKDIR_05_PATH: sentinelConflict }, "WORKDIR_05_PATH", [
      sentinelConflict
    ])
  })

  it("empty alias + a directory holding the sentinel plus other entries → error for slot 05", () => {
    const result = parse({ WORKDIR_05_PATH: sentinelConflict })
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) {
      expect(result.left.variable.startsWith("WORKDIR_05_")).toBe(true)
      expect(result.left.message).not.toContain(sentinelConflict)
    }
  })

  it("empty alias + a real directory → error naming WORKDIR_05_ALIAS (case C)", () => {
    const error = refused({ WORKDIR_05_PATH: dir(5) }, "WORKDIR_05_ALIAS", [dir(5)])
    expect(error.problem).toContain("WORKDIR_05_PATH")
  })

  it("empty alias + an empty directory (no sentinel) → error naming WORKDIR_05_ALIAS", () => {
    refused({ WORKDIR_05_PATH: emptyDir }, "WORKDIR_05_ALIAS", [emptyDir])
  })

  it("alias + empty PATH → error naming WORKDIR_05_PATH", () => {
    refused({ WORKDIR_05_ALIAS: "five", WORKDIR_05_PATH: "" }, "WORKDIR_05_PATH")
    refused({ WORKDIR_05_ALIAS: "five" }, "WORKDIR_05_PATH")
    refused({ WORKDIR_05_ALIAS: "five", WORKDIR_05_PATH: "   " }, "WORKDIR_05_PATH")
  })

  it("alias + a relative PATH → error naming WORKDIR_05_PATH", () => {
    for (const p of ["relative/dir", "./wd5", "wd5", "~/wd5"]) {
      refused({ WORKDIR_05_ALIAS: "five", WORKDIR_05_PATH: p }, "WORKDIR_05_PATH", [p])
    }
  })

  it("alias + a missing PATH → error naming WORKDIR_05_PATH", () => {
    refused({ WORKDIR_05_ALIAS: "five", WORKDIR_05_PATH: missing }, "WORKDIR_05_PATH", [missing])
  })

  it("alias + a PATH that is a regular file → error naming WORKDIR_05_PATH", () => {
    refused({ WORKDIR_05_ALIAS: "five", WORKDIR_05_PATH: regularFile }, "WORKDIR_05_PATH", [regularFile])
  })

  it("alias + a PATH that is a symbolic link to a directory → error naming WORKDIR_05_PATH", () => {
    refused({ WORKDIR_05_ALIAS: "five", WORKDIR_05_PATH: symlinkToDir }, "WORKDIR_05_PATH", [symlinkToDir])
  })

  it("a symbolic link is refused even when PATH ends in / or /. (which would make lstat follow it)", () => {
    for (const p of [`${symlinkToDir}/`, `${symlinkToDir}//`, `${symlinkToDir}/.`, `${symlinkToDir}/./`]) {
      refused({ WORKDIR_05_ALIAS: "five", WORKDIR_05_PATH: p }, "WORKDIR_05_PATH", [symlinkToDir])
    }
  })

  it("a real directory given with a trailing slash is accepted", () => {
    expect(only(loaded({ WORKDIR_05_ALIAS: "five", WORKDIR_05_PATH: `${dir(5)}/` })).alias).toBe("five")
  })

  it("no slot error message ever contains the host path", () => {
    const cases: Vars[] = [
      { WORKDIR_05_ALIAS: "five", WORKDIR_05_PATH: placeholder },
      { WORKDIR_05_ALIAS: "five", WORKDIR_05_PATH: sentinelConflict },
      { WORKDIR_05_PATH: dir(5) },
      { WORKDIR_05_ALIAS: "five", WORKDIR_05_PATH: missing },
      { WORKDIR_05_ALIAS: "five", WORKDIR_05_PATH: regularFile },
      { WORKDIR_05_ALIAS: "five", WORKDIR_05_PATH: symlinkToDir }
    ]
    for (const vars of cases) {
      const result = parse(vars)
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) expect(result.left.message).not.toContain(root)
    }
  })
})

describe("inspectSlotDirectory", () => {
  it("tells every slot state apart", () => {
    expect(inspectSlotDirectory("relative/x")._tag).toBe("relative")
    expect(inspectSlotDirectory(missing)._tag).toBe("missing")
    expect(inspectSlotDirectory(symlinkToDir)._tag).toBe("symlink")
    expect(inspectSlotDirectory(regularFile)._tag).toBe("not-directory")
    expect(inspectSlotDirectory(placeholder)._tag).toBe("placeholder")
    expect(inspectSlotDirectory(sentinelConflict)._tag).toBe("sentinel-conflict")
    expect(inspectSlotDirectory(emptyDir)._tag).toBe("directory")
    expect(inspectSlotDirectory(dir(1))._tag).toBe("directory")
  })

  it("a path below a regular file is missing", () => {
    expect(inspectSlotDirectory(path.join(regularFile, "x"))._tag).toBe("missing")
  })

  it("a trailing slash or /. does not hide a symbolic link", () => {
    expect(inspectSlotDirectory(`${symlinkToDir}/`)._tag).toBe("symlink")
    // "." and ".." segments are refused outright: the kernel would resolve them, not the lstat.
    expect(inspectSlotDirectory(`${symlinkToDir}/.`)._tag).toBe("not-normalized")
    expect(inspectSlotDirectory(`${symlinkToDir}/..`)._tag).toBe("not-normalized")
    expect(inspectSlotDirectory(`${dir(1)}/`)._tag).toBe("directory")
    expect(inspectSlotDirectory(`${placeholder}/`)._tag).toBe("placeholder")
  })

  it("the filesystem root is a directory", () => {
    expect(inspectSlotDirectory("/")._tag).toBe("directory")
  })
})

// ---------------------------------------------------------------------------------------------
// Per-workdir overrides
// ---------------------------------------------------------------------------------------------

describe("per-workdir overrides", () => {
  it("ALLOW_HIDDEN overrides the global switch both ways, empty inherits", () => {
    const on = only(loaded(enabled(1, "d", { ALLOW_HIDDEN: "true" })))
    expect(on.policy.settings.allowHidden).toBe(true)
    expect(on.policy.check([".git"])).toBe("allowed")
    const off = only(loaded({ SERVERFS_ALLOW_HIDDEN: "true", ...enabled(1, "d", { ALLOW_HIDDEN: "false" }) }))
    expect(off.policy.settings.allowHidden).toBe(false)
    expect(off.policy.check([".git"])).toBe("hidden")
    expect(
      only(loaded({ SERVERFS_ALLOW_HIDDEN: "true", ...enabled(1, "d", { ALLOW_HIDDEN: "" }) })).policy
        .settings.allowHidden
    ).toBe(true)
  })

  it("DISABLE_DEFAULT_DENY overrides the global switch both ways, empty inherits", () => {
    const released = only(loaded(enabled(1, "d", { DISABLE_DEFAULT_DENY: "yes" })))
    expect(released.policy.settings.disableDefaultDeny).toBe(true)
    expect(released.policy.check(["id_rsa"])).toBe("allowed")
    const kept = only(
      loaded({ SERVERFS_DISABLE_DEFAULT_DENY: "true", ...enabled(1, "d", { DISABLE_DEFAULT_DENY: "no" }) })
    )
    expect(kept.policy.settings.disableDefaultDeny).toBe(false)
    expect(kept.policy.check(["id_rsa"])).toBe("denied")
    expect(
      only(loaded({ SERVERFS_DISABLE_DEFAULT_DENY: "1", ...enabled(1, "d") })).policy.settings
        .disableDefaultDeny
    ).toBe(true)
  })

  it.each([
    ["MAX_READ_BYTES", "SERVERFS_MAX_READ_BYTES", "maxReadBytes"],
    ["MAX_READ_LINES", "SERVERFS_MAX_READ_LINES", "maxReadLines"],
    ["MAX_WRITE_BYTES", "SERVERFS_MAX_WRITE_BYTES", "maxWriteBytes"]
  ] as const)("%s: an override wins for its slot only; empty inherits %s", (suffix, globalVariable, key) => {
    const config = loaded({
      [globalVariable]: "777",
      ...enabled(1, "own", { [suffix]: "1234" }),
      ...enabled(2, "inherits", { [suffix]: "" }),
      ...enabled(3, "absent")
    })
    expect(config.workdirs.map((w) => w[key])).toEqual([1234, 777, 777])
  })

  it.each([
    ["ALLOW_HIDDEN", "maybe"],
    ["DISABLE_DEFAULT_DENY", "perhaps"],
    ["MAX_READ_BYTES", "lots"],
    ["MAX_READ_BYTES", "0"],
    ["MAX_READ_LINES", "-9"],
    ["MAX_WRITE_BYTES", "1.5"]
  ])("a bad WORKDIR_06_%s (%j) → error naming WORKDIR_06_%s", (suffix, bad) => {
    refused(enabled(6, "six", { [suffix]: bad }), `WORKDIR_06_${suffix}`, [bad === "0" ? "" : bad])
  })

  it("EXTRA_DENY_GLOBS is the union: global first, order kept, duplicates removed", () => {
    const config = loaded({
      SERVERFS_EXTRA_DENY_GLOBS: "a/**, *.log ,b",
      ...enabled(1, "own", { EXTRA_DENY_GLOBS: "*.log, c, a/**,, d" }),
      ...enabled(2, "none")
    })
    expect(config.workdirs.map((w) => w.policy.settings.extraDenyGlobs)).toEqual([
      ["a/**", "*.log", "b", "c", "d"],
      ["a/**", "*.log", "b"]
    ])
  })

  it("a workdir cannot remove a global glob, even with an empty or blank list", () => {
    for (const own of ["", " ", ",", "!a/**"]) {
      const w = only(
        loaded({ SERVERFS_EXTRA_DENY_GLOBS: "a/**", ...enabled(1, "w", { EXTRA_DENY_GLOBS: own }) })
      )
      expect(w.policy.check(["a", "x"]), JSON.stringify(own)).toBe("denied")
    }
  })

  it("the workdir's own globs apply to its policy", () => {
    const w = only(loaded(enabled(1, "w", { EXTRA_DENY_GLOBS: "docs/secret.md" })))
    expect(w.policy.check(["docs", "secret.md"])).toBe("denied")
    expect(w.policy.check(["docs"])).toBe("allowed")
  })
})

// ---------------------------------------------------------------------------------------------
// Agent policy (§4.1 pair rule, §4.2 inheritance and consistency)
// ---------------------------------------------------------------------------------------------

describe("agent settings: global pair rule", () => {
  it("SERVERFS_AGENT_MODE=review without runtimes → error naming SERVERFS_AGENT_RUNTIMES", () => {
    refused({ ...BRIDGE, SERVERFS_AGENT_MODE: "review" }, "SERVERFS_AGENT_RUNTIMES")
  })

  it("SERVERFS_AGENT_RUNTIMES without a mode → error naming SERVERFS_AGENT_RUNTIMES", () => {
    refused({ ...BRIDGE, SERVERFS_AGENT_RUNTIMES: "fake" }, "SERVERFS_AGENT_RUNTIMES")
    refused(
      { ...BRIDGE, SERVERFS_AGENT_MODE: "disabled", SERVERFS_AGENT_RUNTIMES: "fake" },
      "SERVERFS_AGENT_RUNTIMES"
    )
  })

  it("a mode with runtimes is accepted; mode and runtimes are case-insensitive; runtimes sorted", () => {
    const g = loaded({
      ...BRIDGE,
      SERVERFS_AGENT_MODE: "Workspace-Write",
      SERVERFS_AGENT_RUNTIMES: "FAKE, Codex,claude"
    }).global
    expect(g.agentMode).toBe("workspace-write")
    expect(g.agentRuntimes).toEqual(["claude", "codex", "fake"])
  })

  it("unknown and duplicate global runtimes → error naming SERVERFS_AGENT_RUNTIMES", () => {
    refused(
      { ...BRIDGE, SERVERFS_AGENT_MODE: "review", SERVERFS_AGENT_RUNTIMES: "fake,qoder" },
      "SERVERFS_AGENT_RUNTIMES",
      ["qoder"]
    )
    refused(
      { ...BRIDGE, SERVERFS_AGENT_MODE: "review", SERVERFS_AGENT_RUNTIMES: "fake,FAKE" },
      "SERVERFS_AGENT_RUNTIMES"
    )
  })
})

describe("agent settings: per-workdir inheritance (§4.2)", () => {
  it("an empty workdir mode inherits the global mode and runtimes", () => {
    const w = only(
      loaded({
        ...BRIDGE,
        SERVERFS_AGENT_MODE: "review",
        SERVERFS_AGENT_RUNTIMES: "fake",
        ...enabled(1, "w")
      })
    )
    expect([w.agentMode, w.agentRuntimes]).toEqual(["review", ["fake"]])
  })

  it("an inherited workspace-write with native runtimes needs READ_ONLY=false", () => {
    const globalWrite = {
      ...BRIDGE,
      SERVERFS_AGENT_MODE: "workspace-write",
      SERVERFS_AGENT_RUNTIMES: "codex"
    }
    const w = only(loaded({ ...globalWrite, ...enabled(1, "w", { READ_ONLY: "false" }) }))
    expect([w.agentMode, w.agentRuntimes]).toEqual(["workspace-write", ["codex"]])
    refused({ ...globalWrite, ...enabled(1, "w") }, "WORKDIR_01_AGENT_MODE")
  })

  it("an explicit `disabled` with empty runtimes resets the runtimes to []", () => {
    const w = only(
      loaded({
        ...BRIDGE,
        SERVERFS_AGENT_MODE: "review",
        SERVERFS_AGENT_RUNTIMES: "fake",
        ...enabled(1, "w", { AGENT_MODE: "disabled" })
      })
    )
    expect([w.agentMode, w.agentRuntimes]).toEqual(["disabled", []])
  })

  it("explicit `disabled` opts a read-only workdir out of a global workspace-write", () => {
    const w = only(
      loaded({
        ...BRIDGE,
        SERVERFS_AGENT_MODE: "workspace-write",
        SERVERFS_AGENT_RUNTIMES: "codex",
        ...enabled(1, "w", { AGENT_MODE: "DISABLED" })
      })
    )
    expect([w.agentMode, w.agentRuntimes, w.readOnly]).toEqual(["disabled", [], true])
  })

  it("explicit runtimes override the global ones (the mode is still inherited)", () => {
    const w = only(
      loaded({
        ...BRIDGE,
        SERVERFS_AGENT_MODE: "workspace-write",
        SERVERFS_AGENT_RUNTIMES: "codex",
        ...enabled(1, "w", { READ_ONLY: "false", AGENT_RUNTIMES: "claude,fake" })
      })
    )
    expect([w.agentMode, w.agentRuntimes]).toEqual(["workspace-write", ["claude", "fake"]])
  })

  it("an explicit mode and runtimes on a workdir with the global mode disabled", () => {
    const w = only(
      loaded({ ...BRIDGE, ...enabled(1, "w", { AGENT_MODE: "Review", AGENT_RUNTIMES: "FAKE" }) })
    )
    expect([w.agentMode, w.agentRuntimes]).toEqual(["review", ["fake"]])
  })

  it("case-insensitive names; runtimes sorted", () => {
    const w = only(
      loaded({
        ...BRIDGE,
        ...enabled(1, "w", {
          READ_ONLY: "false",
          AGENT_MODE: "WORKSPACE-write",
          AGENT_RUNTIMES: "fake, CODEX ,Claude"
        })
      })
    )
    expect([w.agentMode, w.agentRuntimes]).toEqual(["workspace-write", ["claude", "codex", "fake"]])
  })

  it("other slots keep the global values when one slot overrides", () => {
    const config = loaded({
      ...BRIDGE,
      SERVERFS_AGENT_MODE: "review",
      SERVERFS_AGENT_RUNTIMES: "fake",
      ...enabled(1, "off", { AGENT_MODE: "disabled" }),
      ...enabled(2, "inherits")
    })
    expect(config.workdirs.map((w) => [w.alias, w.agentMode, w.agentRuntimes])).toEqual([
      ["off", "disabled", []],
      ["inherits", "review", ["fake"]]
    ])
  })
})

describe("agent settings: per-workdir consistency rules are startup errors", () => {
  it("runtimes without an enabled mode → error naming WORKDIR_01_AGENT_RUNTIMES", () => {
    refused({ ...BRIDGE, ...enabled(1, "w", { AGENT_RUNTIMES: "fake" }) }, "WORKDIR_01_AGENT_RUNTIMES")
    refused(
      { ...BRIDGE, ...enabled(1, "w", { AGENT_MODE: "disabled", AGENT_RUNTIMES: "fake" }) },
      "WORKDIR_01_AGENT_RUNTIMES"
    )
  })

  it("an enabled mode without runtimes → error naming WORKDIR_01_AGENT_RUNTIMES", () => {
    refused({ ...BRIDGE, ...enabled(1, "w", { AGENT_MODE: "review" }) }, "WORKDIR_01_AGENT_RUNTIMES")
  })

  it("workspace-write with READ_ONLY true → error naming WORKDIR_01_AGENT_MODE", () => {
    const error = refused(
      { ...BRIDGE, ...enabled(1, "w", { AGENT_MODE: "workspace-write", AGENT_RUNTIMES: "fake" }) },
      "WORKDIR_01_AGENT_MODE"
    )
    expect(error.problem).toContain("WORKDIR_01_READ_ONLY")
    refused(
      {
        ...BRIDGE,
        ...enabled(1, "w", { READ_ONLY: "true", AGENT_MODE: "workspace-write", AGENT_RUNTIMES: "fake" })
      },
      "WORKDIR_01_AGENT_MODE"
    )
  })

  it.each(["codex", "claude", "fake,codex"])(
    "%s with review → error naming WORKDIR_01_AGENT_MODE",
    (runtimes) => {
      refused(
        { ...BRIDGE, ...enabled(1, "w", { AGENT_MODE: "review", AGENT_RUNTIMES: runtimes }) },
        "WORKDIR_01_AGENT_MODE"
      )
    }
  )

  it("codex and claude run in workspace-write; fake may run in review", () => {
    const config = loaded({
      ...BRIDGE,
      ...enabled(1, "native", {
        READ_ONLY: "false",
        AGENT_MODE: "workspace-write",
        AGENT_RUNTIMES: "codex,claude"
      }),
      ...enabled(2, "fake", { AGENT_MODE: "review", AGENT_RUNTIMES: "fake" })
    })
    expect(config.workdirs.map((w) => [w.agentMode, w.agentRuntimes])).toEqual([
      ["workspace-write", ["claude", "codex"]],
      ["review", ["fake"]]
    ])
  })

  it("an unknown runtime → error naming WORKDIR_01_AGENT_RUNTIMES without the value", () => {
    refused(
      { ...BRIDGE, ...enabled(1, "w", { AGENT_MODE: "review", AGENT_RUNTIMES: "fake,s3cr3t-bot" }) },
      "WORKDIR_01_AGENT_RUNTIMES",
      ["s3cr3t-bot"]
    )
  })

  it("a duplicate runtime (any case) → error naming WORKDIR_01_AGENT_RUNTIMES", () => {
    refused(
      { ...BRIDGE, ...enabled(1, "w", { AGENT_MODE: "review", AGENT_RUNTIMES: "fake,Fake" }) },
      "WORKDIR_01_AGENT_RUNTIMES"
    )
  })

  it("an unknown mode → error naming WORKDIR_01_AGENT_MODE without the value", () => {
    refused(
      { ...BRIDGE, ...enabled(1, "w", { AGENT_MODE: "yolo-mode", AGENT_RUNTIMES: "fake" }) },
      "WORKDIR_01_AGENT_MODE",
      ["yolo-mode"]
    )
  })
})

describe("agent settings: the bridge", () => {
  it("agent mode enabled on a workdir while SERVERFS_AGENT_BRIDGE_ENABLED is false → error naming SERVERFS_AGENT_BRIDGE_ENABLED", () => {
    const delegating = enabled(3, "w", { AGENT_MODE: "review", AGENT_RUNTIMES: "fake" })
    const error = refused(delegating, "SERVERFS_AGENT_BRIDGE_ENABLED")
    expect(error.problem).toContain("WORKDIR_03")
    refused({ ...delegating, SERVERFS_AGENT_BRIDGE_ENABLED: "false" }, "SERVERFS_AGENT_BRIDGE_ENABLED")
    refused({ ...delegating, SERVERFS_AGENT_BRIDGE_ENABLED: "maybe" }, "SERVERFS_AGENT_BRIDGE_ENABLED")
  })

  it("an inherited global mode also needs the bridge", () => {
    refused(
      { SERVERFS_AGENT_MODE: "review", SERVERFS_AGENT_RUNTIMES: "fake", ...enabled(2, "w") },
      "SERVERFS_AGENT_BRIDGE_ENABLED"
    )
  })

  it("SERVERFS_AGENT_BRIDGE_ENABLED is lenient: `maybe` means false and is not an error", () => {
    const config = loaded({ SERVERFS_AGENT_BRIDGE_ENABLED: "maybe", ...enabled(1, "w") })
    expect(config.global.agentBridgeEnabled).toBe(false)
  })

  it("with the bridge enabled, a delegating workdir is accepted", () => {
    const w = only(
      loaded({ ...BRIDGE, ...enabled(1, "w", { AGENT_MODE: "review", AGENT_RUNTIMES: "fake" }) })
    )
    expect(w.agentMode).toBe("review")
  })

  it("a relative SERVERFS_AGENT_LOCK_DIR with the bridge enabled → error naming it, without the value", () => {
    refused({ ...BRIDGE, SERVERFS_AGENT_LOCK_DIR: "var/locks-xyz" }, "SERVERFS_AGENT_LOCK_DIR", [
      "var/locks-xyz"
    ])
  })

  it("a relative SERVERFS_AGENT_LOCK_DIR with the bridge disabled is not checked", () => {
    expect(loaded({ SERVERFS_AGENT_LOCK_DIR: "var/locks" }).global.agentLockDir).toBe("var/locks")
  })

  it("an absolute SERVERFS_AGENT_LOCK_DIR with the bridge enabled is used", () => {
    expect(loaded({ ...BRIDGE, SERVERFS_AGENT_LOCK_DIR: " /srv/locks " }).global.agentLockDir).toBe(
      "/srv/locks"
    )
  })

  it("a relative SERVERFS_AGENT_BRIDGE_SOCKET with the bridge enabled → error naming it", () => {
    refused({ ...BRIDGE, SERVERFS_AGENT_BRIDGE_SOCKET: "bridge-xyz.sock" }, "SERVERFS_AGENT_BRIDGE_SOCKET", [
      "bridge-xyz"
    ])
  })
})

// ---------------------------------------------------------------------------------------------
// The surface as a whole
// ---------------------------------------------------------------------------------------------

describe("configurationVariableNames", () => {
  it("lists every variable the parser reads (so the Effect Config layer fetches them all)", () => {
    const read = new Set<string>()
    let vars: Vars = { ...BRIDGE, SERVERFS_AGENT_MODE: "review", SERVERFS_AGENT_RUNTIMES: "fake" }
    for (let n = 1; n <= SLOT_COUNT; n++) vars = { ...vars, ...enabled(n, `w${n}`) }
    const result = parseServerConfiguration((name) => {
      read.add(name)
      return lookupOf(vars)(name)
    }, inspectSlotDirectory)
    expect(Either.isRight(result)).toBe(true)
    // A disabled-slot run reads the disabled-slot variables too.
    parseServerConfiguration((name) => {
      read.add(name)
      return undefined
    }, inspectSlotDirectory)
    const listed = new Set(configurationVariableNames())
    expect([...read].filter((name) => !listed.has(name))).toEqual([])
  })

  it("contains no duplicates and covers all 16 slots", () => {
    const names = configurationVariableNames()
    expect(new Set(names).size).toBe(names.length)
    expect(names).toContain("WORKDIR_16_READ_ONLY")
    expect(names).toContain("WORKDIR_01_EXTRA_DENY_GLOBS")
    expect(names).not.toContain("WORKDIR_17_ALIAS")
  })
})

// ---------------------------------------------------------------------------------------------
// The Effect services
// ---------------------------------------------------------------------------------------------

const providerLayer = (vars: Vars) =>
  Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ HOME: TEST_HOME, ...vars }))))

const registryLayer = (vars: Vars) =>
  WorkdirRegistry.Default.pipe(Layer.provideMerge(Configuration.Default), Layer.provide(providerLayer(vars)))

describe("Configuration and WorkdirRegistry services", () => {
  it.effect("Configuration reads the ambient ConfigProvider and equals the pure parse", () =>
    Effect.gen(function* () {
      const vars: Vars = {
        SERVERFS_MAX_READ_LINES: "42",
        SERVERFS_EXTRA_DENY_GLOBS: "a/**,*.log, b",
        ...enabled(2, "two", { READ_ONLY: "false", EXTRA_DENY_GLOBS: "c,d" }),
        ...enabled(7, "seven", { DESCRIPTION: "  seven  " })
      }
      const config = yield* Configuration
      const expected = loaded(vars)
      expect(config.global).toEqual(expected.global)
      expect(config.workdirs.map((w) => ({ ...w, policy: w.policy.settings }))).toEqual(
        expected.workdirs.map((w) => ({ ...w, policy: w.policy.settings }))
      )
    }).pipe(
      Effect.provide(
        Configuration.Default.pipe(
          Layer.provide(
            providerLayer({
              SERVERFS_MAX_READ_LINES: "42",
              SERVERFS_EXTRA_DENY_GLOBS: "a/**,*.log, b",
              ...enabled(2, "two", { READ_ONLY: "false", EXTRA_DENY_GLOBS: "c,d" }),
              ...enabled(7, "seven", { DESCRIPTION: "  seven  " })
            })
          )
        )
      )
    )
  )

  it.effect("comma lists survive the ConfigProvider (not split into sequences)", () =>
    Effect.gen(function* () {
      const config = yield* Configuration
      expect(config.global.extraDenyGlobs).toEqual(["a/**", "*.log", "b"])
      expect(config.global.agentRuntimes).toEqual(["claude", "codex", "fake"])
      expect(config.workdirs[0]?.policy.settings.extraDenyGlobs).toEqual(["a/**", "*.log", "b", "c"])
    }).pipe(
      Effect.provide(
        Configuration.Default.pipe(
          Layer.provide(
            providerLayer({
              ...BRIDGE,
              SERVERFS_AGENT_MODE: "workspace-write",
              SERVERFS_AGENT_RUNTIMES: "codex,claude,fake",
              SERVERFS_EXTRA_DENY_GLOBS: "a/**,*.log,b",
              ...enabled(1, "one", { READ_ONLY: "false", EXTRA_DENY_GLOBS: "c,a/**" })
            })
          )
        )
      )
    )
  )

  it.effect("WorkdirRegistry lists the workdirs in slot order and finds them by alias", () =>
    Effect.gen(function* () {
      const registry = yield* WorkdirRegistry
      expect(registry.all.map((w) => w.alias)).toEqual(["first", "Second"])
      const second = yield* registry.get("Second")
      expect([second.slot, second.hostPath, second.readOnly]).toEqual([16, dir(16), false])
    }).pipe(
      Effect.provide(
        registryLayer({ ...enabled(16, "Second", { READ_ONLY: "false" }), ...enabled(4, "first") })
      )
    )
  )

  it.effect("an unknown alias → WORKDIR_NOT_FOUND; lookup is case-sensitive", () =>
    Effect.gen(function* () {
      const registry = yield* WorkdirRegistry
      const missingAlias = yield* Effect.flip(registry.get("nope"))
      expect(missingAlias).toBeInstanceOf(WorkdirNotFound)
      expect(missingAlias._tag).toBe("WORKDIR_NOT_FOUND")
      expect(missingAlias.workdir).toBe("nope")
      const wrongCase = yield* Effect.flip(registry.get("DOCS"))
      expect(wrongCase._tag).toBe("WORKDIR_NOT_FOUND")
      expect((yield* registry.get("docs")).alias).toBe("docs")
    }).pipe(Effect.provide(registryLayer(enabled(1, "docs"))))
  )

  it.effect("a bad configuration fails the layer with the ConfigurationError", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Effect.provide(WorkdirRegistry, registryLayer({ WORKDIR_03_READ_ONLY: "maybe" }))
      )
      expect(error).toBeInstanceOf(ConfigurationError)
      expect(error.variable).toBe("WORKDIR_03_READ_ONLY")
    })
  )

  it.effect("an empty provider gives the defaults and no workdirs", () =>
    Effect.gen(function* () {
      const registry = yield* WorkdirRegistry
      const config = yield* Configuration
      expect(registry.all).toEqual([])
      expect(config.global).toEqual(loaded({}).global)
    }).pipe(Effect.provide(registryLayer({})))
  )
})

describe("global settings: file ingress", () => {
  it("enabled with no allowed host and blob hosts off → error naming SERVERFS_FILE_INGRESS_ALLOWED_HOSTS", () => {
    refused({ SERVERFS_FILE_INGRESS_ENABLED: "true" }, "SERVERFS_FILE_INGRESS_ALLOWED_HOSTS")
  })

  it("enabled with hosts: exact names, lowercased and deduplicated; blob hosts alone are enough", () => {
    const g = loaded({
      SERVERFS_FILE_INGRESS_ENABLED: "on",
      SERVERFS_FILE_INGRESS_ALLOWED_HOSTS: " Files.Example.com, cdn.example.org ,files.example.com,",
      SERVERFS_FILE_INGRESS_MAX_REDIRECTS: "0"
    }).global
    expect([g.fileIngressEnabled, g.fileIngressAllowedHosts, g.fileIngressMaxRedirects]).toEqual([
      true,
      ["files.example.com", "cdn.example.org"],
      0
    ])
    const blob = loaded({
      SERVERFS_FILE_INGRESS_ENABLED: "true",
      SERVERFS_FILE_INGRESS_ALLOW_OPENAI_BLOB_HOSTS: "true"
    }).global
    expect([blob.fileIngressEnabled, blob.fileIngressAllowOpenaiBlobHosts]).toEqual([true, true])
  })
})
