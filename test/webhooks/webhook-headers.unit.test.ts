import { expect } from 'chai';
import { forwardedHeaders } from '@lib/webhooks/webhook-deliveries.service';

// docs/webhooks.md: a delivery's handlers see its headers, never the credentials a sender may forward nor the
// signature.
describe('the headers a webhook delivery passes on to its handlers', () => {
  it('leaves out authorization, proxy-authorization, cookie and webhook-signature, and keeps the rest', () => {
    expect(
      forwardedHeaders({
        authorization: 'Bearer x',
        'proxy-authorization': 'Basic x',
        cookie: 'session=x',
        'webhook-signature': 'v1,x',
        'webhook-id': 'evt_1',
        'x-source': 'crm',
      }),
    ).to.deep.equal({ 'webhook-id': 'evt_1', 'x-source': 'crm' });
  });

  it('joins a repeated header with commas and leaves out one without a value', () => {
    expect(forwardedHeaders({ 'x-tag': ['a', 'b'], 'x-none': undefined })).to.deep.equal({ 'x-tag': 'a, b' });
  });
});
