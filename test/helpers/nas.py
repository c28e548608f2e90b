#!/usr/bin/python3
"""NAS simulator for RADIUS Dynamic Authorization (RFC 5176) tests.

Run with Debian's /usr/bin/python3 (it has python3-pyrad):

  nas.py --secret S [--port 0] [--mode ack|nak|drop-first:N|silent|bad-auth|bad-ma]
         [--error-cause 503] [--reply-ma] [--reply-message TEXT]

Prints {"listening": port} once bound to 127.0.0.1, then one JSON line per
datagram received. The request's authenticators are checked here with
hashlib/hmac directly (not pyrad, which cannot verify Message-Authenticator)
so the check is independent of the client under test. pyrad parses the
packet and builds the reply (ReplyPacket computes the Response Authenticator).

Modes: ack (default), nak (NAK with --error-cause), drop-first:N (ignore
the first N datagrams, then ack), silent (never answer), bad-auth (reply
with a corrupted Response Authenticator), bad-ma (reply with a wrong
Message-Authenticator but a Response Authenticator that covers it).
"""
import argparse
import hashlib
import hmac
import json
import os
import socket
import struct
import sys
import threading

from pyrad import packet
from pyrad.dictionary import Dictionary

CODE_NAMES = {
    40: 'Disconnect-Request', 41: 'Disconnect-ACK', 42: 'Disconnect-NAK',
    43: 'CoA-Request', 44: 'CoA-ACK', 45: 'CoA-NAK',
}
# request code -> (ACK code, NAK code)
REPLY_CODES = {40: (41, 42), 43: (44, 45)}
MESSAGE_AUTHENTICATOR = 80


def emit(obj):
    sys.stdout.write(json.dumps(obj) + '\n')
    sys.stdout.flush()


def find_message_authenticator(raw):
    """Offset and value of the Message-Authenticator, or None; walks the TLVs itself."""
    off = 20
    while off + 2 <= len(raw):
        typ, length = raw[off], raw[off + 1]
        if length < 2 or off + length > len(raw):
            raise ValueError('malformed attribute at offset %d' % off)
        if typ == MESSAGE_AUTHENTICATOR:
            return off + 2, raw[off + 2:off + length]
        off += length
    return None


def request_authenticator_ok(raw, secret):
    # RFC 5176 2.3: MD5(Code|Identifier|Length|16 zero octets|Attributes|Secret)
    expected = hashlib.md5(raw[:4] + b'\x00' * 16 + raw[20:] + secret).digest()
    return hmac.compare_digest(expected, raw[4:20])


def message_authenticator_ok(raw, secret):
    # RFC 5176 3.3 / RFC 3579 3.2: HMAC-MD5 over the packet with the Request
    # Authenticator and the Message-Authenticator value both zeroed.
    found = find_message_authenticator(raw)
    if found is None:
        return None
    off, value = found
    if len(value) != 16:
        return False
    zeroed = raw[:4] + b'\x00' * 16 + raw[20:off] + b'\x00' * 16 + raw[off + 16:]
    return hmac.compare_digest(hmac.new(secret, zeroed, hashlib.md5).digest(), value)


def jsonable(value):
    if isinstance(value, bytes):
        return value.hex()
    return value


def decode_attributes(pkt):
    out = {}
    for key in pkt.keys():
        name = key if isinstance(key, str) else str(key)
        try:
            values = pkt[key] if isinstance(key, str) else dict.__getitem__(pkt, key)
            out[name] = [jsonable(v) for v in values]
        except Exception as e:  # a value pyrad cannot decode (e.g. bad ipaddr length)
            out[name] = ['<undecodable: %s>' % e]
    return out


def build_reply(req, code, args, with_ma, corrupt_ma):
    reply = req.CreateReply()
    reply.code = code
    if with_ma:
        # First attribute, zero for now; filled in below once the rest is known.
        reply.AddAttribute('Message-Authenticator', b'\x00' * 16)
    if code in (42, 45) and args.error_cause:
        reply.AddAttribute('Error-Cause', args.error_cause)
    if args.reply_message:
        reply.AddAttribute('Reply-Message', args.reply_message)
    if with_ma:
        # pyrad 2.1 has no Message-Authenticator support: RFC 5176 3.3 computes
        # it over the reply with the *request* authenticator in the header.
        attrs = reply._PktEncodeAttributes()
        header = struct.pack('!BBH', reply.code, reply.id, 20 + len(attrs))
        mac = hmac.new(req.secret, header + req.authenticator + attrs, hashlib.md5).digest()
        if corrupt_ma:
            mac = bytes([mac[0] ^ 0xff]) + mac[1:]
        reply[MESSAGE_AUTHENTICATOR] = [mac]
    raw = reply.ReplyPacket()  # Response Authenticator over the final attributes
    return raw


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--secret', required=True)
    ap.add_argument('--port', type=int, default=0)
    ap.add_argument('--mode', default='ack')
    ap.add_argument('--error-cause', type=int, default=503)
    ap.add_argument('--reply-ma', action='store_true', help='add Message-Authenticator to replies')
    ap.add_argument('--reply-message', default=None)
    args = ap.parse_args()

    mode, drop_first = args.mode, 0
    if mode.startswith('drop-first:'):
        mode, drop_first = 'ack', int(args.mode.split(':', 1)[1])
    if mode not in ('ack', 'nak', 'silent', 'bad-auth', 'bad-ma'):
        ap.error('unknown mode %s' % args.mode)

    secret = args.secret.encode('utf-8')
    dictionary = Dictionary(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'nas-dictionary'))

    # Exit when the parent goes away (stdin closes) so no simulator is left behind.
    def watch_stdin():
        while sys.stdin.buffer.read(4096):
            pass
        os._exit(0)
    threading.Thread(target=watch_stdin, daemon=True).start()

    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    # Room for bursts (the identifier-exhaustion test sends 260 requests at once).
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    sock.bind(('127.0.0.1', args.port))
    emit({'listening': sock.getsockname()[1]})

    seen = 0
    while True:
        raw, src = sock.recvfrom(65535)
        seen += 1
        report = {'seq': seen, 'source': [src[0], src[1]], 'size': len(raw), 'raw': raw.hex(), 'reply': None}
        try:
            req = packet.CoAPacket(dict=dictionary, secret=secret, packet=raw)
            report.update({
                'code': req.code,
                'code_name': CODE_NAMES.get(req.code, str(req.code)),
                'id': req.id,
                'authenticator': req.authenticator.hex(),
                'attributes': decode_attributes(req),
                'authenticator_ok': request_authenticator_ok(raw, secret),
                'message_authenticator_ok': message_authenticator_ok(raw, secret),
            })
        except Exception as e:
            report['error'] = str(e)
            emit(report)
            continue

        reply = None
        if req.code not in REPLY_CODES:
            report['reason'] = 'not a CoA/Disconnect request'
        elif not report['authenticator_ok'] or report['message_authenticator_ok'] is False:
            report['reason'] = 'authentication failed'  # a NAS silently discards these
        elif seen <= drop_first:
            report['reason'] = 'drop-first'
        elif mode == 'silent':
            report['reason'] = 'silent'
        else:
            ack, nak = REPLY_CODES[req.code]
            code = nak if mode == 'nak' else ack
            reply = build_reply(req, code, args, args.reply_ma or mode == 'bad-ma', mode == 'bad-ma')
            if mode == 'bad-auth':
                reply = reply[:4] + bytes([reply[4] ^ 0xff]) + reply[5:]
            report['reply'] = CODE_NAMES[code]
        # Report before replying so the line is out by the time the client has its answer.
        emit(report)
        if reply is not None:
            sock.sendto(reply, src)


if __name__ == '__main__':
    main()
