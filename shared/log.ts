// The logging port: what the domain needs from a structured logger (Powertools in the functions).
export interface Log {
  info(message: string, ...attributes: Record<string, unknown>[]): void;
  warn(message: string, ...attributes: Record<string, unknown>[]): void;
}
