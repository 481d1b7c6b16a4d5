import { type ReadError, ResourceTooLarge } from "@serverfs/domain"
import { Effect } from "effect"
import type { ChannelContext } from "../ChannelContext.js"
import { readTextPage } from "./readTextFile.js"

/**
 * The resource template `serverfs://{workdir}/{path}` (tool-contracts §3): the read_text_file
 * code with start_line 1 and the workdir's line budget, all or nothing — a file that would
 * need a second page is refused with RESOURCE_TOO_LARGE instead of being cut.
 */
export const readResource = (
  context: ChannelContext,
  workdir: string,
  path: string
): Effect.Effect<{ readonly text: string; readonly relative: string }, ReadError> =>
  Effect.flatMap(
    readTextPage(context, workdir, path, { startLine: 1, maxLines: Number.MAX_SAFE_INTEGER }),
    (page) =>
      page.hasMore
        ? Effect.fail(new ResourceTooLarge({ workdir, path }))
        : Effect.succeed({ text: page.content, relative: page.resolved.relative })
  )
