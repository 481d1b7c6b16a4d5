import type {
  FindFilesInput,
  ListDirectoryInput,
  ReadTextFileInput,
  SearchTextInput,
  StatFileInput
} from "@serverfs/domain"
import { Configuration, WorkdirRegistry } from "@serverfs/policy"
import { Effect } from "effect"
import { type ChannelContext, workdirLookup } from "./ChannelContext.js"
import { findFiles } from "./channels/findFiles.js"
import { listDirectory } from "./channels/listDirectory.js"
import { listWorkdirs } from "./channels/listWorkdirs.js"
import { readResource } from "./channels/readResource.js"
import { readTextFile } from "./channels/readTextFile.js"
import { searchText } from "./channels/searchText.js"
import { statFile } from "./channels/statFile.js"
import { WorkdirRoots } from "./WorkdirRoots.js"

/** The six read tools and the resource template over the held workdir roots. */
export class ReadChannels extends Effect.Service<ReadChannels>()("@serverfs/workspace/ReadChannels", {
  effect: Effect.gen(function* () {
    const { global } = yield* Configuration
    const registry = yield* WorkdirRegistry
    const roots = yield* WorkdirRoots
    const context: ChannelContext = {
      settings: global,
      workdir: registry.get,
      lookup: workdirLookup(registry.all),
      rootOf: roots.rootOf
    }
    return {
      listWorkdirs: () => Effect.succeed(listWorkdirs(registry.all)),
      listDirectory: (input: ListDirectoryInput) => listDirectory(context, input),
      findFiles: (input: FindFilesInput) => findFiles(context, input),
      searchText: (input: SearchTextInput) => searchText(context, input),
      readTextFile: (input: ReadTextFileInput) => readTextFile(context, input),
      statFile: (input: StatFileInput) => statFile(context, input),
      readResource: (workdir: string, path: string) => readResource(context, workdir, path)
    } as const
  })
}) {}
