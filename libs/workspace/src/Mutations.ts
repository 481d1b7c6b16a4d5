import type {
  CreateDirectoryInput,
  CreateTextFileInput,
  DeleteDirectoryInput,
  DeleteFileInput,
  EditTextFileInput
} from "@serverfs/domain"
import { Configuration, WorkdirRegistry } from "@serverfs/policy"
import { AuditLog } from "@serverfs/telemetry-local"
import { Effect } from "effect"
import { LeaseManager } from "./LeaseManager.js"
import { createDirectory } from "./mutations/createDirectory.js"
import { createTextFile } from "./mutations/createTextFile.js"
import { deleteDirectory } from "./mutations/deleteDirectory.js"
import { deleteFile } from "./mutations/deleteFile.js"
import { editTextFile } from "./mutations/editTextFile.js"
import type { MutationContext } from "./mutations/MutationContext.js"
import { WorkdirRoots } from "./WorkdirRoots.js"

/**
 * The five mutation tools. Every one runs under one process-wide mutation lock (spec v0.2 §5:
 * mutation traffic is low, a per-path lock table would be premature) and, inside it, the
 * workdir lease shared with the Agent Bridge. Reads never take either.
 */
export class Mutations extends Effect.Service<Mutations>()("@serverfs/workspace/Mutations", {
  effect: Effect.gen(function* () {
    const { global } = yield* Configuration
    const registry = yield* WorkdirRegistry
    const roots = yield* WorkdirRoots
    const lease = yield* LeaseManager
    const audit = yield* AuditLog
    const lock = yield* Effect.makeSemaphore(1)
    const context: MutationContext = {
      settings: global,
      workdir: registry.get,
      rootOf: roots.rootOf,
      guard: (workdir, effect) => lock.withPermits(1)(lease.hold(workdir, effect)),
      directoryFsyncFailed: (errno) => audit.emit("WARNING", "directory_fsync_failed", { errno })
    }
    return {
      createTextFile: (input: CreateTextFileInput) => createTextFile(context, input),
      editTextFile: (input: EditTextFileInput) => editTextFile(context, input),
      deleteFile: (input: DeleteFileInput) => deleteFile(context, input),
      createDirectory: (input: CreateDirectoryInput) => createDirectory(context, input),
      deleteDirectory: (input: DeleteDirectoryInput) => deleteDirectory(context, input)
    } as const
  })
}) {}
