import type { SDKUserMessage } from "@anthropic-ai/claude-agent-sdk"

/**
 * The streaming input of one `query()`: an async iterable the adapter pushes user messages to.
 * Ending it closes the CLI's stdin, after which the CLI finishes and exits.
 */
export class InputQueue implements AsyncIterable<SDKUserMessage> {
  private readonly pending: Array<SDKUserMessage> = []
  private waiter: ((r: IteratorResult<SDKUserMessage>) => void) | undefined
  private ended = false

  push(text: string): void {
    if (this.ended) return
    const message: SDKUserMessage = {
      type: "user",
      message: { role: "user", content: text },
      parent_tool_use_id: null
    }
    const waiter = this.waiter
    if (waiter !== undefined) {
      this.waiter = undefined
      waiter({ value: message, done: false })
    } else {
      this.pending.push(message)
    }
  }

  end(): void {
    if (this.ended) return
    this.ended = true
    const waiter = this.waiter
    this.waiter = undefined
    waiter?.({ value: undefined, done: true })
  }

  [Symbol.asyncIterator](): AsyncIterator<SDKUserMessage> {
    return {
      next: () => {
        const value = this.pending.shift()
        if (value !== undefined) return Promise.resolve({ value, done: false })
        if (this.ended) return Promise.resolve({ value: undefined, done: true })
        return new Promise((resolve) => {
          this.waiter = resolve
        })
      },
      return: () => {
        this.end()
        return Promise.resolve({ value: undefined, done: true })
      }
    }
  }
}
