import { DECIDE_SCOPE } from './auth';
import { HttpError } from './http-error';

/** The credentials that carry the decide capability, as an error names them. */
export const DECIDE_CREDENTIALS = `a person's credential (the ${DECIDE_SCOPE} scope, the gateway token, or, on a gateway without authentication, the browser that opened the one-time link printed by minara serve)`;

/** The 403 an action that needs the decide capability gets from a caller without it. */
export function needDecide(what: string): HttpError {
  return new HttpError(403, 'HTTP_FORBIDDEN', `${what} needs ${DECIDE_CREDENTIALS}; this one may not.`);
}

/**
 * Requesting and deciding are different capabilities: an MCP host or a script that asked for an approval cannot
 * give it, through `POST /v1/approvals/:id` or through approval answers in a `POST /v1/chat` body. Checked before
 * the approval is even looked up, so the answer says nothing about it.
 */
export function assertCanDecide(canDecide: boolean): void {
  if (!canDecide) {
    throw new HttpError(403, 'HTTP_FORBIDDEN', `Deciding approvals needs ${DECIDE_CREDENTIALS}; this one may request approvals but not decide them.`);
  }
}
