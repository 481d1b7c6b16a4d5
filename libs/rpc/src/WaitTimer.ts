/** setTimeout's longest delay; a longer one would fire at once (the settings stop at a day). */
const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * The timer that bounds one wait on a socket (the server's idle bound, the client's timeout).
 * A plain timer, cleared by the socket event that ends the wait: an Effect timeout would race the
 * wait against a sleeping fiber, about 38 KiB of allocation per use, on every RPC call (issue 12,
 * docs/performance.md "RPC waits without timeout fibers").
 */
export const waitTimer = (ms: number, onElapsed: () => void): NodeJS.Timeout =>
  setTimeout(onElapsed, Math.min(Math.max(ms, 0), MAX_TIMER_MS))
