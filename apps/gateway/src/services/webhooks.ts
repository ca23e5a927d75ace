// A download request's webhook, checked when the request is made: a secret to sign with (the
// request's own or the deployment's WEBHOOK_SECRET) and a URL the egress guard lets through now. The
// worker checks the URL again at every delivery (apps/worker/src/webhook-delivery.ts).
import { ReelayError, WEBHOOK_SECRET_SETTING_RULE, type DownloadRequest } from '@reelay/contracts';
import type { Egress } from '@reelay/egress';

export interface RequestedWebhook {
  url: string;
  /** The request's own secret; absent when the deployment's WEBHOOK_SECRET signs. Never shown or logged. */
  secret?: string;
  /** Set for a subscription's item: the delivery announces subscription.item.*. */
  subscription_id?: string;
}

export async function requestedWebhook(
  body: DownloadRequest,
  deps: { egress: Egress; deploymentSecret: boolean },
): Promise<RequestedWebhook | undefined> {
  if (body.webhook_url === undefined) return undefined;
  if (body.webhook_secret === undefined && !deps.deploymentSecret) {
    throw new ReelayError('invalid_request', WEBHOOK_SECRET_SETTING_RULE.message);
  }
  await deps.egress.checkUrl(new URL(body.webhook_url));
  return { url: body.webhook_url, secret: body.webhook_secret };
}
