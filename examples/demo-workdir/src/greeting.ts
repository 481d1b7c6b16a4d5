// A tiny source file so the demo has something to search.
export const greeting = (name: string): string => `Hello, ${name}! Welcome to ServerFS.`

export const farewell = (name: string): string => `Goodbye, ${name}.`
