// The one reading of an `Authorization: Bearer <token>` value (an HTTP header or gRPC metadata),
// for every front that checks agents' tokens itself: the scheme in any case, one token, spaces or
// tabs around it.

/** The token of a bearer credential, or null for another scheme, none, or more than one token. */
export const bearerToken = (value: string | undefined): string | null =>
  /^bearer[ \t]+(\S+)[ \t]*$/i.exec(value ?? '')?.[1] ?? null;
