// How a system's configured credential is presented: as request headers the gateway sets itself
// (on an HTTP request, or on a WebSocket upgrade). Never anything the agent sent.
import type { ResolvedCredentials } from '../config/resolved.js';

/** The headers (lowercase names) that carry the credential; none for `type: none`. */
export const credentialHeaders = (credentials: ResolvedCredentials): Record<string, string> => {
  switch (credentials.type) {
    case 'none':
      return {};
    case 'bearer':
      return { authorization: `Bearer ${credentials.token}` };
    case 'basic':
      return {
        authorization: `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`,
      };
    case 'api_key':
      return { [credentials.header.toLowerCase()]: credentials.value };
  }
};
