import t from 'tap';
import dnsPacket from 'dns-packet';
import { readQuestion, ttlOffsets } from '../../src/dns/wire.js';

const q = (name: string, opts: Partial<dnsPacket.Packet> = {}) =>
  dnsPacket.encode({ type: 'query', id: 42, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'AAAA', name }], ...opts });

t.test('reads the question of a plain query, lower-casing the name', async (t) => {
  const w = readQuestion(q('WwW.Example.TEST'));
  t.match(w, { name: 'www.example.test', qtype: 28, qclass: 1, rd: true, edns: false, udpLimit: 512 });
  const edns = readQuestion(q('a.test', { additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: dnsPacket.DNSSEC_OK } as never] }));
  t.match(edns, { name: 'a.test', edns: true, dnssecOk: true, udpLimit: 1232 });
});

t.test('anything unusual is left to the full parser', async (t) => {
  t.equal(readQuestion(Buffer.alloc(5)), undefined, 'short');
  const resp = q('a.test');
  resp[2] |= 0x80;
  t.equal(readQuestion(resp), undefined, 'a response');
  t.equal(readQuestion(q('we\\.ird.test')), undefined, 'odd characters');
  const twoQ = dnsPacket.encode({ type: 'query', id: 1, questions: [{ type: 'A', name: 'a.test' }, { type: 'A', name: 'b.test' }] });
  t.equal(readQuestion(twoQ), undefined, 'two questions');
  t.equal(readQuestion(Buffer.concat([q('a.test'), Buffer.from([0])])), undefined, 'trailing bytes');
  const ctrl = q('ab.test');
  ctrl[13] = 0x0d;
  t.equal(readQuestion(ctrl), undefined, 'control character');
});

t.test('finds every TTL of an answer, OPT excluded', async (t) => {
  const wire = dnsPacket.encode({
    type: 'response', id: 1, questions: [{ type: 'A', name: 'a.test' }],
    answers: [{ type: 'CNAME', name: 'a.test', ttl: 11, data: 'b.test' }, { type: 'A', name: 'b.test', ttl: 22, data: '192.0.2.1' }],
    authorities: [{ type: 'NS', name: 'test', ttl: 33, data: 'ns.test' }],
    additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232 } as never],
  });
  const offs = ttlOffsets(wire)!;
  t.same(offs.map((o) => wire.readUInt32BE(o)), [11, 22, 33]);
  t.equal(ttlOffsets(wire.subarray(0, wire.length - 3)), undefined, 'a cut answer cannot be walked');
});
