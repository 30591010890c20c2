// The console's route table: every address it answers, in one list a reader can check against the
// README (the sign-in routes come from the sign-in strategies it was given; the customer's pages
// under /customer are served by the same function).
import type { Logger } from '@aws-lambda-powertools/logger';
import { consolePaths, inboxPage, messagePage } from '../../shared/edge/console/pages.js';
import { icon, iconPath, stylesheet, stylesheetPath } from '../../shared/edge/console/style.js';
import { type DecisionDeps, decidableBy } from '../../shared/use-cases/approver-decisions.js';
import { customerRoutes } from './customer-calls.js';
import type { CustomerSignIn } from './customer-sign-in.js';
import { heldCallRoutes } from './held-calls.js';
import type { ApproverRequest, ConsoleRequest } from './request.js';
import { type Handler, notAllowed, type Route } from './router.js';
import { assetSecurityHeaders } from './security-headers.js';
import type { SignInStrategy } from './sign-in.js';

/** The console's own static files: named by their content, so cached for good. */
const asset =
  (type: string, body: string): Handler<ConsoleRequest> =>
  async (request) => ({
    statusCode: 200,
    headers: { 'content-type': type, 'cache-control': 'public, max-age=31536000, immutable', ...assetSecurityHeaders },
    body: request.method === 'HEAD' ? '' : body,
  });

/** A static file answers GET and HEAD; any other method finds no such page. */
const assetRoute = (path: string, type: string, body: string): Route => {
  const serve = asset(type, body);
  return { access: 'static', path, methods: { GET: serve, HEAD: serve } };
};

export const consoleRoutes = (
  deps: { readonly services: DecisionDeps; readonly logger: Logger },
  signIn: SignInStrategy,
  customerSignIn: CustomerSignIn | null,
): readonly Route[] => {
  const inbox: Handler<ApproverRequest> = async (request) =>
    request.page(200, inboxPage(request.context, await decidableBy(deps.services, request.approver)));
  return [
    assetRoute(stylesheetPath, 'text/css; charset=utf-8', stylesheet),
    assetRoute(iconPath, 'image/svg+xml', icon),
    ...signIn.routes,
    {
      access: 'anyone',
      path: consolePaths.signOut,
      methods: {
        POST: async (request) => {
          if (request.session !== null && !request.fromThisConsole(request.form(), request.session.csrf)) {
            return request.page(
              403,
              messagePage(request.context, 'Refused', 'The form did not come from this console.'),
            );
          }
          // The session ends in the server's list too: a copy of the cookie is worth nothing after.
          const ended =
            request.session === null ? request.cookies.clear('session') : await request.cookies.end(request.session);
          return request.redirect(await signIn.signedOut(request.base), [ended]);
        },
      },
      otherwise: notAllowed('Sign out with the button.'),
    },
    {
      access: 'approver',
      path: consolePaths.home,
      methods: { GET: inbox, HEAD: inbox },
      otherwise: notAllowed('This page is read-only.'),
    },
    ...heldCallRoutes(deps.services, deps.logger, signIn),
    ...customerRoutes(deps.services, deps.logger, customerSignIn),
  ];
};
