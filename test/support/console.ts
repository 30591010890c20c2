// A scripted approver for the console, over plain HTTP with a cookie jar: signs in with the form,
// reads a call page's CSRF token and arguments hash, and posts decisions the way the page's form does.

export interface ConsoleResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
}

export interface DecisionForm {
  readonly csrf: string;
  readonly argumentsHash: string;
}

const formField = (body: string, name: string): string | undefined =>
  new RegExp(`name="${name}" value="([^"]*)"`).exec(body)?.[1];

export class ConsoleSession {
  private readonly jar = new Map<string, string>();

  constructor(readonly baseUrl: string) {}

  cookie(name: string): string | undefined {
    return this.jar.get(name);
  }

  setCookie(name: string, value: string): void {
    this.jar.set(name, value);
  }

  async request(path: string, init: RequestInit = {}): Promise<ConsoleResponse> {
    const headers = new Headers(init.headers);
    if (this.jar.size > 0) headers.set('cookie', [...this.jar].map(([name, value]) => `${name}=${value}`).join('; '));
    const response = await fetch(`${this.baseUrl}${path}`, { ...init, headers, redirect: 'manual' });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';');
      const index = pair.indexOf('=');
      const name = pair.slice(0, index);
      const value = pair.slice(index + 1);
      if (/Max-Age=0/i.test(cookie)) this.jar.delete(name);
      else this.jar.set(name, value);
    }
    return { status: response.status, headers: response.headers, body: await response.text() };
  }

  get(path: string): Promise<ConsoleResponse> {
    return this.request(path);
  }

  post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<ConsoleResponse> {
    return this.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: this.baseUrl, ...headers },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** Signs in with the form; answers the final response (a 303 on success). */
  async signIn(approver: string, password: string): Promise<ConsoleResponse> {
    const form = await this.get('/console/sign-in');
    const csrf = formField(form.body, 'csrf');
    if (csrf === undefined) throw new Error(`The sign-in page has no CSRF field:\n${form.body}`);
    return this.post('/console/sign-in', { csrf, next: '/console', approver, password });
  }

  /** The decision form of a call page, as the approver's browser would submit it. */
  async decisionForm(executionId: string): Promise<DecisionForm & { page: ConsoleResponse }> {
    const page = await this.get(`/console/executions/${executionId}`);
    const csrf = formField(page.body, 'csrf');
    const argumentsHash = formField(page.body, 'arguments_hash');
    if (csrf === undefined || argumentsHash === undefined) {
      throw new Error(`The call page (${page.status}) has no decision form:\n${page.body}`);
    }
    return { csrf, argumentsHash, page };
  }

  decide(
    executionId: string,
    form: DecisionForm,
    outcome: 'approve' | 'reject',
    note?: string,
  ): Promise<ConsoleResponse> {
    return this.post(`/console/executions/${executionId}/decision`, {
      csrf: form.csrf,
      arguments_hash: form.argumentsHash,
      outcome,
      ...(note === undefined ? {} : { note }),
    });
  }
}

export const signedIn = async (baseUrl: string, approver: string, password: string): Promise<ConsoleSession> => {
  const session = new ConsoleSession(baseUrl);
  const answer = await session.signIn(approver, password);
  if (answer.status !== 303) throw new Error(`Sign-in as ${approver} failed (${answer.status}):\n${answer.body}`);
  return session;
};
