import { expect } from 'chai';
import { derivedRunId } from '@lib/chains/chain-runs.service';
import { messageDocId } from '@lib/conversations/conversations.repository';
import { derivedId } from '@lib/ids';

// Derived ids are stored: a retry after an upgrade must find the record its first attempt made, so the rule is
// pinned here by values computed once outside the code (sha256, base64url, of the parts joined by newlines).
describe('derived ids never change', () => {
  it('are the prefix and the first characters of the digest of the parts, 22 by default', () => {
    expect(derivedRunId('app-art_1-ver_1-req_1')).to.equal('run_Fmj2EjmuiHobz5pTxlmGXZ');
    expect(derivedId('run', ['app-art_1-ver_1-req_1'])).to.equal('run_Fmj2EjmuiHobz5pTxlmGXZ');
    expect(derivedId('bws', ['call-1'], 16)).to.equal('bws_XXljxPRx4UL1pyIU');
  });

  it('join several parts with newlines, at the length each kind uses', () => {
    expect(messageDocId('cnv_1', 'req_1', 'user')).to.equal('msg_jg9Oulefavzlyv8KPVvZVDyP');
    expect(derivedId('cnv', ['org_1', 'usr_1', 'req_1'], 20)).to.equal('cnv_UZw1xp4XPPkI6R1Xi9vF');
  });
});
