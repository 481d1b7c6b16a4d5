import { type ChildProcess, spawn } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { expect } from "vitest"
import { isPosixError, type PosixError } from "../src/index.js"

export const fixturesDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures")

/** A fresh directory under os.tmpdir() (ext4 on the dev and CI machines). */
export function makeTempDir(prefix = "serverfs-posix-"): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix))
}

export function removeTempDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true })
}

export function catchError(fn: () => unknown): unknown {
  try {
    fn()
  } catch (err) {
    return err
  }
  throw new Error("expected the call to throw")
}

/**
 * Asserts the Node-shaped error contract: code, negative errno, syscall, the
 * exact "<CODE>: <strerror>, <syscall>" message, and that no secret (a name
 * passed to the call) appears in the message, the stack or any property.
 */
export function expectPosixError(
  fn: () => unknown,
  code: string,
  syscall: string,
  secrets: readonly string[] = []
): PosixError {
  const err = catchError(fn)
  expect(isPosixError(err)).toBe(true)
  const e = err as PosixError
  expect(e.code).toBe(code)
  expect(e.syscall).toBe(syscall)
  expect(e.errno).toBeLessThan(0)
  expect(e.message).toMatch(new RegExp(`^${code}: [^,]+, ${syscall}$`))
  expect(Object.hasOwn(e, "path")).toBe(false)
  expect(Object.hasOwn(e, "dest")).toBe(false)
  for (const secret of secrets) expectNoSecret(e, secret)
  return e
}

export function expectNoSecret(err: unknown, secret: string): void {
  const e = err as Record<string, unknown>
  for (const key of [...Object.getOwnPropertyNames(e), "message", "stack"]) {
    expect(String(e[key])).not.toContain(secret)
  }
}

/** The TypeError contract for NUL bytes / lone surrogates: no truncation, value never echoed. */
export function expectInvalidArg(fn: () => unknown, secret?: string): void {
  const err = catchError(fn)
  expect(err).toBeInstanceOf(TypeError)
  expect((err as { code?: unknown }).code).toBe("ERR_INVALID_ARG_VALUE")
  if (secret !== undefined) expectNoSecret(err, secret)
}

export function openFdCount(): number {
  return fs.readdirSync("/proc/self/fd").length
}

/** Runs a fixture script in a separate node process (really concurrent, separate locks). */
export function spawnFixture(script: string, args: readonly string[]): ChildProcess {
  return spawn(process.execPath, [path.join(fixturesDir, script), ...args], {
    stdio: ["pipe", "pipe", "inherit"]
  })
}

/** Resolves with the first stdout line of `child` equal to `line`. */
export function waitForLine(child: ChildProcess, line: string, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let buffered = ""
    const timer = setTimeout(() => {
      cleanup()
      reject(new Error(`timed out waiting for "${line}" from child`))
    }, timeoutMs)
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString("utf8")
      if (buffered.split("\n").includes(line)) {
        cleanup()
        resolve()
      }
    }
    const onExit = (code: number | null) => {
      cleanup()
      reject(new Error(`child exited (${code}) before printing "${line}"`))
    }
    const cleanup = () => {
      clearTimeout(timer)
      child.stdout?.off("data", onData)
      child.off("exit", onExit)
    }
    child.stdout?.on("data", onData)
    child.on("exit", onExit)
  })
}

export function waitForExit(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode)
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)))
}
