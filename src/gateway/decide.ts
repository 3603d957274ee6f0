import { DECIDE_SCOPE } from './auth';
import { HttpError } from './http-error';

/**
 * Requesting and deciding are different capabilities: an MCP host or a script that asked for an approval cannot
 * give it, through `POST /v1/approvals/:id` or through approval answers in a `POST /v1/chat` body. Checked before
 * the approval is even looked up, so the answer says nothing about it.
 */
export function assertCanDecide(canDecide: boolean): void {
  if (!canDecide) {
    throw new HttpError(
      403,
      'HTTP_FORBIDDEN',
      `Deciding approvals needs a person's credential (the ${DECIDE_SCOPE} scope, the gateway token, or the web app served by this gateway); this one may request approvals but not decide them.`,
    );
  }
}
