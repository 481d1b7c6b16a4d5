/**
 * The Agent Bridge's own directories — SERVERFS_AGENT_LOCK_DIR, the directory of
 * SERVERFS_AGENT_BRIDGE_SOCKET and SERVERFS_AGENT_BRIDGE_STATE_DIR — inside a workdir (or equal to
 * one) are a configuration error: through the workdir a model could remove recovery guards, swap
 * the socket or rewrite the task store. Compared by device and inode like workdir overlaps,
 * whatever names lead there; a directory not created yet counts where it would be created.
 * Errors name variables and the alias, never a path.
 */
import fs from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import {
  type ConfigurationError,
  inspectSlotDirectory,
  loadBridgeSettingsFor,
  parseServerConfiguration
} from "@serverfs/policy"
import { ConfigProvider, Effect, Either } from "effect"
import { makeTempDir, removeTempDir } from "./helpers.js"

let root = ""
let wd = ""
let outside = ""

beforeAll(() => {
  root = makeTempDir("serverfs-policy-rundirs-")
  wd = path.join(root, "wd")
  outside = path.join(root, "outside")
  fs.mkdirSync(path.join(wd, "sub", "deeper"), { recursive: true })
  fs.mkdirSync(outside)
  // Names outside the workdir that lead into it.
  fs.symlinkSync(wd, path.join(root, "to-wd"))
  fs.symlinkSync(path.join(wd, "sub"), path.join(outside, "to-sub"))
})

afterAll(() => removeTempDir(root))

type Vars = Readonly<Record<string, string>>

const bridge = (overrides: Vars = {}, readOnly = false): Vars => ({
  WORKDIR_01_ALIAS: "proj",
  WORKDIR_01_PATH: wd,
  WORKDIR_01_READ_ONLY: readOnly ? "true" : "false",
  SERVERFS_AGENT_BRIDGE_ENABLED: "true",
  SERVERFS_AGENT_LOCK_DIR: path.join(outside, "locks"),
  SERVERFS_AGENT_BRIDGE_SOCKET: path.join(outside, "run", "bridge.sock"),
  ...overrides
})

const parse = (vars: Vars) =>
  parseServerConfiguration(
    (name) => (Object.hasOwn(vars, name) ? vars[name] : undefined),
    inspectSlotDirectory
  )

const refused = (result: Either.Either<unknown, ConfigurationError>, variable: string, relation: string) => {
  if (Either.isRight(result)) throw new Error(`expected ${variable} to be refused`)
  expect(result.left.variable).toBe(variable)
  expect(result.left.problem).toBe(
    `${relation} WORKDIR_01_PATH (workdir "proj"); the Agent Bridge's lock, state and socket directories must be outside every workdir`
  )
  expect(result.left.message).not.toContain(root)
}

const RULE_CASES: ReadonlyArray<readonly [string, () => string, string]> = [
  ["the workdir itself", () => wd, "is the same directory as"],
  ["an existing directory inside it", () => path.join(wd, "sub"), "is inside"],
  [
    "a directory not created yet, two levels below it",
    () => path.join(wd, "sub", "new", "locks"),
    "is inside"
  ],
  ["a symbolic link outside that leads into it", () => path.join(root, "to-wd", "locks"), "is inside"],
  [
    "`..` after a link: the kernel's parent of the link target, not the string's",
    () => path.join(outside, "to-sub") + "/../locks",
    "is inside"
  ]
]

describe("SERVERFS_AGENT_LOCK_DIR inside a workdir → configuration error", () => {
  for (const [name, dir, relation] of RULE_CASES) {
    it(name, () => {
      refused(parse(bridge({ SERVERFS_AGENT_LOCK_DIR: dir() })), "SERVERFS_AGENT_LOCK_DIR", relation)
    })
  }

  it("also inside a read-only workdir", () => {
    refused(
      parse(bridge({ SERVERFS_AGENT_LOCK_DIR: path.join(wd, "locks") }, true)),
      "SERVERFS_AGENT_LOCK_DIR",
      "is inside"
    )
  })

  it("outside every workdir, existing or not, is accepted", () => {
    expect(Either.isRight(parse(bridge()))).toBe(true)
    expect(
      Either.isRight(parse(bridge({ SERVERFS_AGENT_LOCK_DIR: path.join(root, "later", "locks") })))
    ).toBe(true)
    // A directory that contains the workdir is not inside it.
    expect(Either.isRight(parse(bridge({ SERVERFS_AGENT_LOCK_DIR: root })))).toBe(true)
  })

  it("not checked while the bridge is disabled (the lock directory is not used)", () => {
    const vars = bridge({ SERVERFS_AGENT_LOCK_DIR: path.join(wd, "locks") })
    const { SERVERFS_AGENT_BRIDGE_ENABLED: _, ...disabled } = vars
    expect(Either.isRight(parse(disabled))).toBe(true)
  })

  it("a workdir that is / (confined, as the overlap rule requires) is left out", () => {
    // Every directory is inside /; the overlap rule already confines such a workdir.
    const vars = { ...bridge({}, true), WORKDIR_02_ALIAS: "host", WORKDIR_02_PATH: "/" }
    expect(Either.isRight(parse(vars))).toBe(true)
  })
})

describe("the socket's directory inside a workdir → configuration error", () => {
  it("a socket in the workdir", () => {
    refused(
      parse(bridge({ SERVERFS_AGENT_BRIDGE_SOCKET: path.join(wd, "bridge.sock") })),
      "SERVERFS_AGENT_BRIDGE_SOCKET",
      "is the same directory as"
    )
  })
  it("a socket in a directory not created yet below it, reached through a link", () => {
    refused(
      parse(bridge({ SERVERFS_AGENT_BRIDGE_SOCKET: path.join(root, "to-wd", "run", "bridge.sock") })),
      "SERVERFS_AGENT_BRIDGE_SOCKET",
      "is inside"
    )
  })
})

describe("SERVERFS_AGENT_BRIDGE_STATE_DIR inside a workdir → configuration error", () => {
  const load = (vars: Vars) => {
    const config = parse(vars)
    if (Either.isLeft(config)) throw new Error(`unexpected configuration error: ${config.left.message}`)
    return Effect.runSync(
      Effect.either(loadBridgeSettingsFor(config.right.workdirs)).pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(vars))))
      )
    )
  }
  for (const [name, dir, relation] of RULE_CASES) {
    it(name, () => {
      refused(
        load(bridge({ SERVERFS_AGENT_BRIDGE_STATE_DIR: dir() })),
        "SERVERFS_AGENT_BRIDGE_STATE_DIR",
        relation
      )
    })
  }
  it("outside is accepted", () => {
    const loaded = load(bridge({ SERVERFS_AGENT_BRIDGE_STATE_DIR: path.join(outside, "state") }))
    expect(Either.isRight(loaded)).toBe(true)
  })
})
