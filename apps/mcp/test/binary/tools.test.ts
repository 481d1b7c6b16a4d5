/**
 * The binary tool definitions (tool-contracts §1, §2.12–§2.13): `_meta: {"openai/fileParams":
 * ["file"]}` is advertised on upload_binary_file exactly when the FileIngress port is enabled,
 * the download URI percent-encodes each segment and keeps "/", and registration follows the
 * workdirs' effective setting.
 */
import type { Workdir } from "@serverfs/policy"
import { BinaryTransfer } from "@serverfs/workspace"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { binaryTools, binaryToolsEnabled, binaryUri } from "../../src/tools/binaryTools.js"

/** Only the flag matters here; the handlers are never called. */
const stub = (fileIngressEnabled: boolean) =>
  BinaryTransfer.make({
    fileIngressEnabled,
    downloadBinaryFile: () => Effect.dieMessage("not called"),
    uploadBinaryFile: () => Effect.dieMessage("not called")
  })

describe("binary tool definitions", () => {
  it("openai/fileParams is advertised only while file ingress is enabled", () => {
    const upload = (on: boolean) => binaryTools(stub(on)).find((t) => t.name === "upload_binary_file")
    expect(upload(true)?.meta).toEqual({ "openai/fileParams": ["file"] })
    expect(upload(false)?.meta).toBeUndefined()
    expect(binaryTools(stub(false)).find((t) => t.name === "download_binary_file")?.meta).toBeUndefined()
  })

  it.each([
    ["a.png", "serverfs://wd/a.png"],
    ["folder/a b.bin", "serverfs://wd/folder/a%20b.bin"],
    ["x/%/#?.bin", "serverfs://wd/x/%25/%23%3F.bin"],
    ["ü/ß.png", "serverfs://wd/%C3%BC/%C3%9F.png"]
  ])("uri of %j → %s", (path, uri) => {
    expect(binaryUri("wd", path)).toBe(uri)
  })

  it("registered iff at least one workdir enables binary transfer", () => {
    const w = (binaryTransferEnabled: boolean) => ({ binaryTransferEnabled }) as Workdir
    expect(binaryToolsEnabled([])).toBe(false)
    expect(binaryToolsEnabled([w(false), w(false)])).toBe(false)
    expect(binaryToolsEnabled([w(false), w(true)])).toBe(true)
  })
})
